"""Figures of the study (matplotlib, non-interactive backend).

One colour and one marker per model across the whole report: :func:`model_styles`, built once
from the study's models, is the only place a figure gets them from.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from ..core.io import atomic_path  # noqa: E402
from ..stats.metrics import describe_units  # noqa: E402

#: Fixed colours of the default study's models, keyed by "model / tokenizer"; other models get
#: the unused colours of _PALETTE (see model_styles).
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


def model_styles(labels) -> dict[str, dict]:
    """Colour and marker of every model label of a study (see :func:`model_label`): the fixed
    MODEL_COLOURS where listed, the others distinct palette colours in sorted order; markers in
    sorted order. Build it once from all the study's labels and pass it to every figure, so a
    model looks the same everywhere and no two models share a look."""
    labels = sorted(set(labels))
    free = [c for c in _PALETTE if c not in MODEL_COLOURS.values()]
    styles = {}
    for i, label in enumerate(labels):
        colour = MODEL_COLOURS.get(label)
        if colour is None:
            colour = free.pop(0) if free else _PALETTE[i % len(_PALETTE)]
        styles[label] = {"color": colour, "marker": _MARKERS[i % len(_MARKERS)]}
    return styles


def study_styles(bpu: pl.DataFrame) -> dict[str, dict]:
    """:func:`model_styles` of every (model, tokenizer) of a bits-per-utterance table."""
    return model_styles(model_label(m, t) for m, t in bpu.select("model", "tokenizer").rows())


def save(fig, path: str) -> None:
    """Write ``fig`` to ``path`` as PNG atomically and close it."""
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png", bbox_inches="tight")
    plt.close(fig)


def empty(path: str, message: str) -> None:
    """Write a PNG to ``path`` that shows ``message`` only (a figure with nothing to plot)."""
    fig, ax = plt.subplots(figsize=(6, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    save(fig, path)


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
                   styles: dict[str, dict] | None = None, title: str | None = None) -> None:
    """BPEC per language in the style of Cotterell et al. (2018): languages sorted by the first
    character n-gram's BPEC (hardest at the top), one shared BPEC axis, one marker per
    open-vocabulary model with its interval, on the common units of ``corpus``.

    ``models`` is the common-units table (fairppl.stats.metrics + fairppl.stats.bootstrap columns);
    ``names`` maps a language id to its full name; ``styles`` from :func:`study_styles`."""
    styles = styles or study_styles(models)
    data = models.filter(pl.col("open_vocabulary") & (pl.col("corpus") == corpus)
                         & pl.col("bpec").is_not_null())
    if data.height == 0:
        empty(path, f"{corpus}: no open-vocabulary scores")
        return
    data = data.with_columns(label=pl.col("model") + " / " + pl.col("tokenizer"))
    labels = sorted(data["label"].unique().to_list(),
                    key=lambda s: (not s.startswith("kenlm-char"), s))
    ref = data.filter(label=labels[0]).sort("bpec", descending=True)
    languages = ref["language"].to_list()
    languages += sorted(set(data["language"]) - set(languages))
    pos = {lang: i for i, lang in enumerate(reversed(languages))}
    fig, ax = plt.subplots(figsize=(11, 0.34 * len(languages) + 2.2))
    step = 0.6 / max(len(labels), 1)
    for k, label in enumerate(labels):
        part = data.filter(label=label)
        ys = [pos[lang] + (k - (len(labels) - 1) / 2) * step for lang in part["language"]]
        x = part["bpec"].to_numpy()
        err = None
        if "bpec_ci_low" in part.columns and part["bpec_ci_low"].null_count() == 0:
            err = [x - part["bpec_ci_low"].to_numpy(), part["bpec_ci_high"].to_numpy() - x]
        style = styles[label]
        ax.errorbar(x, ys, xerr=err, fmt=style["marker"], color=style["color"], ms=5,
                    capsize=2, lw=1, label=label)
    ax.set_yticks(list(pos.values()), [f"{names.get(lang, lang)} ({lang})" for lang in pos])
    level = data["ci_level"][0] if "ci_level" in data.columns else None
    bars = f"; bars: {level:.0%} paired bootstrap interval" if level is not None else ""
    ax.set_xlabel(f"BPEC (bits per English character{bars})")
    ax.set_title(title or unit_set_title(data, corpus), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="model / tokenizer",
              title_fontsize=7)
    save(fig, path)


def _vocab_order(tokenizer: str) -> float:
    size = tokenizer.removeprefix("word-v")
    return float("inf") if size == "all" else float(size)


def unk_figure(bpu: pl.DataFrame, names: dict[str, str], path: str,
               styles: dict[str, dict] | None = None) -> None:
    """One panel per (corpus, language) of the closed-vocabulary word n-grams: bits per utterance
    against vocabulary size with p(<unk>) as is and UNK-corrected, and the open-vocabulary
    character n-gram's bits per utterance on the same units (dashed), all labelled."""
    styles = styles or study_styles(bpu)
    words = bpu.filter(~pl.col("open_vocabulary"))
    if words.height == 0:
        empty(path, "no closed-vocabulary models in this study")
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
                       color=styles[model_label(row["model"], row["tokenizer"])]["color"],
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
