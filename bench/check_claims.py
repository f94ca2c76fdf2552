"""Re-derive the report's claims from a finished study's tables, independently of the stage code
that wrote them (polars, numpy and scipy only; no fairppl import), and print one line per check:
``ok`` or ``DIFFERS`` with both values. A study-level companion of the unit tests, for the claims
issue 39 found stated beyond their data: pooled multiple testing, the headline's ranks and
near-duplicates, the second domain's caveat, an outlier's unseen characters, family control, the
intervals of Spearman's rho, and the Shannon game's intervals and rank values.

    python bench/check_claims.py [results]      # default: results/

Exit status 1 when a check differs, 2 when the folder holds no study tables or none of those a
check reads, 0 otherwise (a check whose tables are absent is skipped and says so).
"""

from __future__ import annotations

import html
import math
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
from scipy.stats import false_discovery_control, norm, spearmanr

FAILED: list[str] = []


RAN: list[str] = []


def say(name: str, ok: bool, detail: str) -> None:
    print(f"{'ok     ' if ok else 'DIFFERS'} {name}: {detail}")
    RAN.append(name)
    if not ok:
        FAILED.append(name)


def table(results: Path, name: str) -> pl.DataFrame | None:
    path = results / "tables" / name
    if not path.exists():
        print(f"skip    {name}: absent")
        return None
    if name.endswith(".parquet"):
        return pl.read_parquet(path)
    return pl.read_csv(path, infer_schema_length=100_000)


def pooled_adjustment(results: Path) -> None:
    """Benjamini-Hochberg over every test of a question (``test_family``), by scipy."""
    for name, p, adjusted in (("morphology.csv", "permutation_p", "permutation_p_bh"),
                              ("difficulty_predictors.csv", "spearman_p", "spearman_p_bh"),
                              ("difficulty_agreement.csv", "spearman_p", "spearman_p_bh")):
        t = table(results, name)
        if t is None:
            continue
        for question, part in t.group_by("test_family"):
            have = part.filter(pl.col(p).is_not_null())
            ours = false_discovery_control(have[p].to_numpy())
            diff = float(np.max(np.abs(ours - have[adjusted].to_numpy()))) if have.height else 0
            say(f"BH {name} {question[0]}", diff < 1e-9,
                f"{have.height} tests pooled, largest difference {diff:.2g}")


def spearman_intervals(results: Path) -> None:
    """Fisher's z with Bonett & Wright's variance, written out."""
    t = table(results, "difficulty_predictors.csv")
    if t is None or "spearman_rho_low" not in t.columns:
        return
    worst = 0.0
    for rho, n, low, high in t.select("spearman_rho", "n_languages", "spearman_rho_low",
                                      "spearman_rho_high").iter_rows():
        if rho is None or n < 4 or abs(rho) >= 1:
            worst = max(worst, 0.0 if low is None and high is None else 1.0)
            continue
        half = norm.ppf(0.975) * math.sqrt((1 + rho * rho / 2) / (n - 3))
        z = 0.5 * math.log((1 + rho) / (1 - rho))
        worst = max(worst, abs(math.tanh(z - half) - low), abs(math.tanh(z + half) - high))
    say("Spearman intervals", worst < 1e-9, f"{t.height} rows, largest difference {worst:.2g}")


def family_disagreement(results: Path) -> None:
    """family_disagrees from the within-family and family-means p (the clustered t not counted)."""
    for name, plain in (("difficulty_predictors.csv", "spearman_p"),
                        ("morphology.csv", "permutation_p")):
        t = table(results, name)
        if t is None or "family_disagrees" not in t.columns:
            continue
        wrong = 0
        for row in t.filter(pl.col("n_families").is_not_null()).iter_rows(named=True):
            counted = [row[c] for c in ("within_family_p", "family_means_p") if row[c] is not None]
            if row[plain] is None:
                continue
            expect = any((p <= 0.05) != (row[plain] <= 0.05) for p in counted)
            flag = row["family_disagrees"]
            wrong += (str(flag).lower() == "true") != expect
        say(f"family_disagrees {name}", wrong == 0, f"{wrong} rows differ")


def open_models(bpu: pl.DataFrame, corpus: str) -> dict[str, dict[str, float]]:
    """label -> language -> BPEC, for the open-vocabulary models of ``corpus``."""
    rows = bpu.filter((pl.col("corpus") == corpus) & pl.col("open_vocabulary")
                      & pl.col("bpec").is_not_null())
    out: dict[str, dict[str, float]] = {}
    for model, tok, lang, bpec in rows.select("model", "tokenizer", "language",
                                              "bpec").iter_rows():
        out.setdefault(f"{model} / {tok}", {})[lang] = bpec
    return out


def headline(results: Path, main: str = "bible") -> None:
    """Near-duplicates among the models that scored every language, and the mean ranks."""
    bpu, ranks = table(results, "bpu.parquet"), table(results, "rank_uncertainty.csv")
    if bpu is None or ranks is None:
        return
    models = open_models(bpu, main)
    languages = set().union(*models.values())
    full = sorted(m for m, v in models.items() if set(v) == languages)
    kept = list(full)
    for i, a in enumerate(full):
        for b in full[:i]:
            rho = spearmanr([models[a][x] for x in sorted(languages)],
                            [models[b][x] for x in sorted(languages)]).statistic
            if rho >= 0.98 and a in kept and b in kept:
                kept.remove(a)
                print(f"        near-duplicate: {a} ~ {b} (rho {rho:.3f})")
    mean = {x: np.mean([sorted(models[m], key=lambda y: -models[m][y]).index(x) + 1
                        for m in kept]) for x in languages}
    theirs = dict(ranks.filter(corpus=main).select("language", "mean rank (1 = hardest)").rows())
    diff = max(abs(mean[x] - theirs[x]) for x in languages)
    say("mean ranks", diff < 1e-9 and set(ranks["models"]) == {"; ".join(sorted(kept))},
        f"{len(kept)} distinct models of {len(full)}; largest difference {diff:.2g}")


def second_domain(results: Path, main: str = "bible", other: str = "udhr") -> None:
    """The caveat's rho range and smallest p, each model on all its units in both corpora."""
    bpu = table(results, "bpu.parquet")
    report = results / "report.html"
    if bpu is None or not report.exists():
        return
    a, b = open_models(bpu, main), open_models(bpu, other)
    languages = set().union(*a.values())
    models = [m for m in a if set(a[m]) == languages and m in b]
    rhos, ps = [], []
    for m in models:
        shared = sorted(set(a[m]) & set(b[m]))
        result = spearmanr([a[m][x] for x in shared], [b[m][x] for x in shared])
        rhos.append(result.statistic)
        ps.append(result.pvalue)
    text = html.unescape(re.sub(r"<[^>]+>", "", report.read_text(encoding="utf-8")))
    found = re.search(rf"carry over to {other} under .*?\(rho (-?[\d.]+) to (-?[\d.]+), every p "
                      rf">= ([\d.]+)", text)
    if not found:
        say(f"{other} caveat", False, "no such sentence in the report")
        return
    low, high, p = map(float, found.groups())
    ok = (abs(round(min(rhos), 2) - low) < 0.006 and abs(round(max(rhos), 2) - high) < 0.006
          and min(ps) >= p - 0.005)
    say(f"{other} caveat", ok, f"report rho {low} to {high}, p >= {p}; recomputed "
        f"{min(rhos):.3f} to {max(rhos):.3f}, smallest p {min(ps):.3f} ({len(models)} models)")


def unseen_characters(results: Path, corpus: str = "udhr", language: str = "ron",
                      reference: str = "bible") -> None:
    """An outlier's unseen characters: those of its scored text never seen in its model's
    training text, counted from the units."""
    corr = table(results, "correlates.csv")
    units = results / "corpus" / corpus / "units.parquet"
    train = results / "corpus" / reference / "units.parquet"
    if corr is None or not units.exists() or not train.exists():
        return
    scored = pl.read_parquet(units).filter(language=language)
    seen = pl.read_parquet(train).filter((pl.col("language") == language)
                                         & (pl.col("split") == "train"))
    known = set("".join(seen["text"].to_list()))
    counts = Counter(ch for text in scored["text"] for ch in text if ch not in known)
    row = corr.filter((pl.col("corpus") == corpus) & (pl.col("language") == language))
    stated = row["n_unseen_chars"][0] if row.height else None
    say(f"unseen characters {corpus}/{language}", stated == sum(counts.values()),
        f"table {stated}, counted {sum(counts.values())}: "
        + ", ".join(f"{c} U+{ord(c):04X} {n}" for c, n in counts.most_common(5)))


def shannon(results: Path, min_units: int = 20) -> None:
    """No interval from fewer units than the campaign scorer's minimum; rank values at l = m
    labelled estimates with their Miller-Madow value; every 'above' row with its cause; the
    common rows' paired ratio to the reference recomputed as a ratio of perplexities."""
    t = table(results, "shannon.csv")
    if t is None:
        return
    few = t.filter(pl.col("n_units") < min_units)
    given = few.filter(pl.col("ci_low_per_word").is_not_null()).height
    say("Shannon intervals", given == 0,
        f"{few.height} rows from under {min_units} units, {given} with an interval")
    bounds = t.filter(pl.col("protocol") == "rank-bounds")
    if bounds.height:
        full = bounds.filter(pl.col("l") == pl.col("m_outcomes"))
        unlabelled = full.filter(~pl.col("rank_values_kind").str.contains("estimate")).height
        no_mm = full.filter(pl.col("high_mm_per_word").is_null()).height
        say("Shannon rank values", unlabelled == 0 and no_mm == 0,
            f"{full.height} rows at l = m: {unlabelled} not labelled estimates, {no_mm} without "
            f"a Miller-Madow value")
        above = bounds.filter(pl.col("perplexity_above_upper").cast(pl.String) == "true")
        causeless = above.filter(pl.col("above_cause").is_null()
                                 | (pl.col("above_cause") == "")).height
        say("Shannon 'above' causes", causeless == 0,
            f"{above.height} rows above their upper value, {causeless} without a cause: "
            + ", ".join(f"{c} {n}" for c, n in Counter(above["above_cause"]).items()))
    common = t.filter(pl.col("protocol") == "common")
    if common.height:
        worst = 0.0
        for lang, part in common.group_by("language"):
            best = part["perplexity_per_word"].min()
            ratios = (part["perplexity_per_word"] / best).to_numpy()
            worst = max(worst, float(np.max(np.abs(ratios - part["ratio_to_reference"]
                                                   .to_numpy()))))
        say("Shannon common ratios", worst < 1e-9,
            f"{common.height} rows, largest difference {worst:.2g}")


def results_page(results: Path, page: Path) -> None:
    """The Shannon game's figures quoted in docs/results.md, against shannon.csv: English's
    common rows and French's limited lists (10 bets against the full list)."""
    t = table(results, "shannon.csv")
    if t is None or not page.exists():
        return
    text = " ".join(page.read_text(encoding="utf-8").split())
    common = t.filter((pl.col("protocol") == "common") & (pl.col("language") == "eng"))
    found = re.search(r"English gives ([\d.]+) for the word trigram, ([\d.]+) for the bigram, "
                      r"([\d.]+) and ([\d.]+) for the Transformers", text)
    if found and common.height:
        # each figure as the page prints it: 3 significant digits (24.8, 124)
        quoted = sorted(float(x) for x in found.groups())
        ours = sorted(float(f"{x:.3g}") for x in common["perplexity_per_word"].to_list())
        say("results.md English common rows", quoted == ours, f"page {quoted}, table {ours}")
    found = re.search(r"French bigram: ([\d.]+) against ([\d.]+)", text)
    limited = t.filter((pl.col("language") == "fra") & (pl.col("model").str.contains("bigram")))
    if found and limited.height:
        ten = limited.filter((pl.col("protocol") == "limited") & (pl.col("l") == 10))
        full = limited.filter(pl.col("protocol") == "exhaustive")
        if ten.height and full.height:
            ours = (round(ten["perplexity_per_word"][0], 1),
                    round(full["perplexity_per_word"][0], 1))
            quoted = tuple(map(float, found.groups()))
            say("results.md French limited lists", quoted == ours,
                f"page {quoted}, table {ours}")


def main() -> int:
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
    if not (results / "tables").is_dir():
        print(f"check_claims: {results}/tables is not a folder: expected a finished study's "
              f"results folder", file=sys.stderr)
        return 2
    for check in (pooled_adjustment, spearman_intervals, family_disagreement, headline,
                  second_domain, unseen_characters, shannon):
        check(results)
    results_page(results, Path(__file__).resolve().parents[1] / "docs" / "results.md")
    if not RAN:
        print(f"check_claims: no check could run: none of the tables it reads is in "
              f"{results}/tables", file=sys.stderr)
        return 2
    print(f"{len(RAN)} checks, {len(FAILED)} differ" + (f": {', '.join(FAILED)}" if FAILED
                                                        else ""))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
