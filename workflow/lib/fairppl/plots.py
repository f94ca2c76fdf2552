"""Figures of the study (matplotlib, non-interactive backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from .io import atomic_path  # noqa: E402


def bpec_figure(bpu: pl.DataFrame, path: str) -> None:
    """Horizontal bars of BPEC (bits per English character) per language for the character
    n-gram baselines, one panel per (corpus, model), languages sorted from hardest to easiest."""
    bpu = bpu.filter(pl.col("model").str.starts_with("kenlm-char"))
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
    _save(fig, path)


def _save(fig, path: str) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)


def _vocab_order(tokenizer: str) -> float:
    size = tokenizer.removeprefix("word-v")
    return float("inf") if size == "all" else float(size)


def unk_figure(bpu: pl.DataFrame, path: str) -> None:
    """Per corpus: per-token perplexity vs vocabulary size of the closed-vocabulary word n-grams,
    naive and UNK-corrected, one line per language (left); bits per utterance of the same models
    against the character n-gram's (right)."""
    words = bpu.filter(~pl.col("open_vocabulary"))
    corpora = words["corpus"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(max(len(corpora), 1), 2, figsize=(11, 4.2 * max(len(corpora), 1)),
                             squeeze=False)
    for row, corpus in zip(axes, corpora):
        part = words.filter(corpus=corpus)
        sizes = sorted(part["tokenizer"].unique().to_list(), key=_vocab_order)
        x = list(range(len(sizes)))
        labels = [s.removeprefix("word-v") for s in sizes]
        left, right = row
        for language in part["language"].unique(maintain_order=True):
            lang = {r["tokenizer"]: r for r in part.filter(language=language).iter_rows(named=True)}
            left.plot(x, [lang[s]["ppl_naive"] for s in sizes], color="#4472a8", alpha=0.6, lw=1)
            left.plot(x, [lang[s]["ppl_unk_corrected"] for s in sizes], color="#c0504d", alpha=0.6,
                      lw=1)
        left.plot([], [], color="#4472a8", label="naive")
        left.plot([], [], color="#c0504d", label="UNK-corrected")
        left.set_yscale("log")
        left.set_xticks(x, labels)
        left.set_xlabel("vocabulary size (word types)")
        left.set_ylabel("per-token perplexity")
        left.set_title(f"{corpus}: word {part['model'][0]}", fontsize=10)
        left.legend(fontsize=8)
        mean = part.group_by("tokenizer").agg(
            pl.col("bits_per_utterance").mean(),
            (pl.col("bits_unk_corrected") / pl.col("n_units")).mean().alias("corrected"))
        mean = {r["tokenizer"]: r for r in mean.iter_rows(named=True)}
        right.plot(x, [mean[s]["bits_per_utterance"] for s in sizes], "o-", color="#4472a8",
                   label="word, naive")
        right.plot(x, [mean[s]["corrected"] for s in sizes], "o-", color="#c0504d",
                   label="word, UNK-corrected")
        chars = bpu.filter(corpus=corpus, tokenizer="char", open_vocabulary=True)
        chars = chars.filter(pl.col("model").str.starts_with("kenlm-char"))
        for model in chars["model"].unique().sort():
            value = chars.filter(model=model)["bits_per_utterance"].mean()
            right.axhline(value, ls="--", color="#555555", lw=1)
            right.text(x[-1], value, f" {model}", va="bottom", ha="right", fontsize=8)
        right.set_xticks(x, labels)
        right.set_xlabel("vocabulary size (word types)")
        right.set_ylabel("bits per utterance (mean over languages)")
        right.legend(fontsize=8)
        right.grid(alpha=0.3)
    _save(fig, path)


def models_figure(models: pl.DataFrame, path: str) -> None:
    """Grouped bars of BPEC per language for every open-vocabulary (model, tokenizer), on the
    units all of a language's models scored; one panel per corpus."""
    data = models.filter(pl.col("open_vocabulary"))
    data = data.with_columns(label=pl.col("model") + " / " + pl.col("tokenizer"))
    corpora = data["corpus"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(max(len(corpora), 1), 1,
                             figsize=(12, 3.8 * max(len(corpora), 1)), squeeze=False)
    for ax, corpus in zip(axes[:, 0], corpora):
        part = data.filter(corpus=corpus)
        languages = part["language"].unique(maintain_order=True).sort().to_list()
        labels = part["label"].unique().sort().to_list()
        width = 0.8 / max(len(labels), 1)
        for k, label in enumerate(labels):
            rows = {r["language"]: r["bpec"] for r in part.filter(label=label).iter_rows(named=True)}
            xs = [i + k * width for i, lang in enumerate(languages) if lang in rows]
            ax.bar(xs, [rows[lang] for lang in languages if lang in rows], width, label=label)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(languages))], languages)
        ax.set_ylabel("BPEC (bits per English character)")
        ax.set_title(f"{corpus}: every model on the same units", fontsize=10)
        ax.legend(fontsize=7, ncol=3)
        ax.grid(axis="y", alpha=0.3)
    _save(fig, path)
