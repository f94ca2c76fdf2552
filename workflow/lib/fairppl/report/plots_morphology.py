"""Figures of the morphology stage: the three panels of Cotterell et al. (2018)'s Figure 1 (BPEC
on words, on lemmas, and their difference, against morphological counting complexity), one
figure per MCC source, every model with a lemmatized copy as one colour with its least-squares
line. Colours and markers from :func:`fairppl.report.plots.model_styles`."""

from __future__ import annotations

import numpy as np
import polars as pl

from .plots import empty, model_label, model_styles, plt, save

#: The panels, in the paper's order, and their y-axis labels.
PANELS = {
    "words": "BPEC on words (bits/English char)",
    "lemmas": "BPEC on lemmas (bits/English char)",
    "difference": "words - lemmas (bits/English char)",
}


def figure1(long: pl.DataFrame, source: str, path: str, names: dict[str, str] | None = None,
            measure: str = "mcc") -> None:
    """Figure 1 of the paper for one ``source`` of ``measure`` from the regressions' long table
    (:func:`fairppl.morphology.languages.regression_inputs`): a point per language and model
    (languages without a value are left out, as in the regression), labelled with the language."""
    names = names or {}
    data = long.filter((pl.col("measure") == measure) & (pl.col("source") == source)
                       & pl.col("text").is_in(list(PANELS)) & pl.col("excluded").is_null())
    with_lemmas = data.filter(pl.col("text") == "lemmas").select("model", "tokenizer").unique()
    data = data.join(with_lemmas, on=["model", "tokenizer"], how="semi")
    if not data.height:
        empty(path, f"no {source} {measure} value beside a lemmatized BPEC")
        return
    labels = sorted({model_label(m, t) for m, t in data.select("model", "tokenizer").rows()})
    styles = model_styles(labels)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for ax, (text, ylabel) in zip(axes, PANELS.items()):
        panel = data.filter(pl.col("text") == text)
        for (model, tok), part in sorted(panel.group_by(["model", "tokenizer"]),
                                         key=lambda g: g[0]):
            label = model_label(model, tok)
            x, y = part["x"].to_numpy(), part["y"].to_numpy()
            ax.scatter(x, y, color=styles[label]["color"], marker=styles[label]["marker"],
                       label=f"{label} ({len(x)} languages)", s=28)
            for xi, yi, lang in zip(x, y, part["language"]):
                ax.annotate(names.get(lang, lang), (xi, yi), fontsize=7, alpha=0.7,
                            xytext=(3, 2), textcoords="offset points")
            if len(x) >= 3 and len(set(x)) > 1:
                slope, intercept = np.polyfit(x, y, 1)
                grid = np.linspace(x.min(), x.max(), 20)
                ax.plot(grid, intercept + slope * grid, color=styles[label]["color"], alpha=0.7)
        ax.set_xlabel(f"MCC ({source}; inflectional feature bundles)" if measure == "mcc"
                      else f"{measure} ({source})")
        ax.set_ylabel(ylabel)
        ax.set_title({"words": "(a) words", "lemmas": "(b) lemmas",
                      "difference": "(c) cost of inflection"}[text], fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    save(fig, path)
