"""Figures of the study (matplotlib, non-interactive backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .io import atomic_path  # noqa: E402


def bpec_figure(bpu: pl.DataFrame, path: str) -> None:
    """Horizontal bars of BPEC (bits per English character) per language, one panel per
    (corpus, model), languages sorted from hardest to easiest."""
    panels = bpu.select("corpus", "model").unique(maintain_order=True).rows()
    n_lang = max(bpu.group_by("corpus", "model").len()["len"].max(), 1)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels), 0.28 * n_lang + 1.6), squeeze=False)
    for ax, (corpus, model) in zip(axes[0], panels):
        part = bpu.filter(corpus=corpus, model=model).sort("bpec")
        ax.barh(part["language"].to_list(), part["bpec"].to_list(), color="#4472a8")
        ax.set_title(f"{corpus} — {model}", fontsize=10)
        ax.set_xlabel("BPEC (bits per English character)")
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
