"""Figures of the study (matplotlib, non-interactive backend).

One colour and one marker per model across the whole report: :func:`model_style` is the only
place a figure gets them from.
"""

from __future__ import annotations

import zlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .io import atomic_path  # noqa: E402
from .metrics import describe_units  # noqa: E402

#: Fixed colours of the default study's models, keyed by "model / tokenizer"; other models get a
#: colour from _PALETTE by a hash of their label (stable between figures and runs).
MODEL_COLOURS = {
    "kenlm-char-o5 / char": "#1f4e9c",
    "kenlm-char-o7 / char": "#5b8fd9",
    "kenlm-subword-o5 / spm-unigram-4000": "#2e8b57",
    "kenlm-subword-o5 / spm-bpe-4000": "#8fbc3f",
    "transformer / char": "#e07b00",
    "transformer / spm-unigram-4000": "#a65e2e",
    "smollm2-135m / native": "#7b3fa0",
    "gemma3-270m / native": "#c0304a",
}
_PALETTE = ["#17becf", "#bcbd22", "#8c564b", "#e377c2", "#7f7f7f", "#9467bd", "#d62728",
            "#2ca02c", "#ff7f0e", "#1f77b4"]
_MARKERS = ["o", "s", "D", "^", "v", "P", "X", "*", "<", ">"]


def model_label(model: str, tokenizer: str) -> str:
    """How a (model, tokenizer) is named in every figure and table of the report."""
    return f"{model} / {tokenizer}"


def model_style(label: str) -> dict:
    """Colour and marker of a model label (see :func:`model_label`), the same in every figure."""
    code = zlib.crc32(label.encode("utf-8"))
    colour = MODEL_COLOURS.get(label, _PALETTE[code % len(_PALETTE)])
    return {"color": colour, "marker": _MARKERS[code % len(_MARKERS)]}


def _save(fig, path: str) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def _empty(path: str, message: str) -> None:
    fig, ax = plt.subplots(figsize=(6, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    _save(fig, path)


def unit_set_title(table: pl.DataFrame, corpus: str) -> str:
    """'<corpus>: the same N <split> units for every language and model' from a common-units
    table (every row of the corpus has the same n_units there)."""
    part = table.filter(corpus=corpus)
    sizes = sorted(set(part["n_units"]))
    split = ", ".join(sorted(set(part["split"])))
    if len(sizes) == 1:
        return (f"{corpus}: the same {describe_units(sizes[0], split)} for every language and "
                f"model")
    return f"{corpus}: {split} units, {min(sizes)} to {max(sizes)} per row (not one common set)"


def ranking_figure(models: pl.DataFrame, names: dict[str, str], corpus: str, path: str,
                   title: str | None = None) -> None:
    """BPEC per language in the style of Cotterell et al. (2018): languages sorted by the first
    character n-gram's BPEC (hardest at the top), one shared BPEC axis, one marker per
    open-vocabulary model with its interval, on the common units of ``corpus``.

    ``models`` is the common-units table (fairppl.metrics + fairppl.bootstrap columns);
    ``names`` maps a language id to its full name."""
    data = models.filter(pl.col("open_vocabulary") & (pl.col("corpus") == corpus)
                         & pl.col("bpec").is_not_null())
    if data.height == 0:
        _empty(path, f"{corpus}: no open-vocabulary scores")
        return
    data = data.with_columns(label=pl.col("model") + " / " + pl.col("tokenizer"))
    labels = sorted(data["label"].unique().to_list(),
                    key=lambda s: (not s.startswith("kenlm-char"), s))
    ref = data.filter(label=labels[0]).sort("bpec", descending=True)
    languages = ref["language"].to_list()
    languages += sorted(set(data["language"]) - set(languages))
    pos = {lang: i for i, lang in enumerate(reversed(languages))}
    fig, ax = plt.subplots(figsize=(9, 0.34 * len(languages) + 2.0))
    step = 0.6 / max(len(labels), 1)
    for k, label in enumerate(labels):
        part = data.filter(label=label)
        ys = [pos[lang] + (k - (len(labels) - 1) / 2) * step for lang in part["language"]]
        x = part["bpec"].to_numpy()
        err = None
        if "bpec_ci_low" in part.columns and part["bpec_ci_low"].null_count() == 0:
            err = [x - part["bpec_ci_low"].to_numpy(), part["bpec_ci_high"].to_numpy() - x]
        style = model_style(label)
        ax.errorbar(x, ys, xerr=err, fmt=style["marker"], color=style["color"], ms=5,
                    capsize=2, lw=1, label=label)
    ax.set_yticks(list(pos.values()), [f"{names.get(lang, lang)} ({lang})" for lang in pos])
    ax.set_xlabel("BPEC (bits per English character; bars: 95% paired bootstrap interval)")
    ax.set_title(title or unit_set_title(data, corpus), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _save(fig, path)


def _vocab_order(tokenizer: str) -> float:
    size = tokenizer.removeprefix("word-v")
    return float("inf") if size == "all" else float(size)


def unk_figure(bpu: pl.DataFrame, names: dict[str, str], path: str) -> None:
    """One panel per (corpus, language) of the closed-vocabulary word n-grams: bits per utterance
    against vocabulary size with p(<unk>) as is and UNK-corrected, and the open-vocabulary
    character n-gram's bits per utterance on the same units (dashed), all labelled."""
    words = bpu.filter(~pl.col("open_vocabulary"))
    if words.height == 0:
        _empty(path, "no closed-vocabulary models in this study")
        return
    panels = words.select("corpus", "language").unique(maintain_order=True).rows()
    ncols = min(6, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.3 * nrows + 0.6),
                             squeeze=False, sharex=True)
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    for ax, (corpus, language) in zip(axes.ravel(), panels):
        part = words.filter(corpus=corpus, language=language)
        part = part.with_columns(order=pl.col("tokenizer").map_elements(_vocab_order,
                                                                        return_dtype=pl.Float64))
        part = part.sort("order")
        x = list(range(part.height))
        ax.plot(x, part["bits_per_utterance"], "o-", color="#4472a8", ms=3, label="word, naive")
        ax.plot(x, part["bits_unk_corrected"] / part["n_units"], "s-", color="#c0504d", ms=3,
                label="word, UNK-corrected")
        chars = bpu.filter(corpus=corpus, language=language, open_vocabulary=True)
        for row in chars.filter(pl.col("model").str.starts_with("kenlm-char")).iter_rows(
                named=True):
            ax.axhline(row["bits_per_utterance"], ls="--", lw=1,
                       color=model_style(model_label(row["model"], row["tokenizer"]))["color"],
                       label=f"{row['model']} (open vocabulary)")
        ax.set_xticks(x, [t.removeprefix("word-v") for t in part["tokenizer"]], fontsize=7)
        ax.set_title(f"{names.get(language, language)} ({corpus})", fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3)
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, 0.975))
    sizes = sorted(set(words["n_units"]))
    fig.suptitle(f"every scored unit of each language ({', '.join(map(str, sizes))} units), the "
                 f"same units for the word and character n-grams", fontsize=9, y=0.995)
    fig.supxlabel("word vocabulary size (types)", fontsize=9)
    fig.supylabel("bits per utterance", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / (2.3 * nrows + 0.6)))
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
