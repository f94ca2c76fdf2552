"""The report's section on FLORES-200 at full breadth (config ``flores``): every code on one page
(the figure by family and writing type), the premiums summarised by family, whether a token
premium costs bits, and the three published checks: Petrov et al.'s counts (exact), Arnett et
al.'s byte premium (exact where the method is the same, the difference explained where not) and
Goldfish's bits (by rank, with the caveat). Every sentence is computed from the tables."""

from __future__ import annotations

import statistics

import polars as pl

from ..corpus.flores import ENGLISH
from ..lm.goldfish import CAVEAT
from ..lm.flores_table import token_premium
from .html import constants_text, drop_constant_columns, fmt, html_table, subsection
from .html import paragraph as _p

#: The tables of the section (results/tables/flores*.csv), by their report input names.
TABLES = ("table", "petrov", "byte_premium", "ranks", "marginal")


def _rho(row: dict) -> str:
    if row["rho"] is None:
        return f"no rank correlation ({row['codes (count)']} codes)"
    return (f"rho {row['rho']:.2f} [{row['rho low']:.2f}, {row['rho high']:.2f}] over "
            f"{row['codes (count)']} codes")


def family_summary(table: pl.DataFrame, tokenizers: list[str], models: list[str]) -> pl.DataFrame:
    """Per family (largest first): codes, and the median token premium per tokenizer and bits
    premium per model over its codes."""
    columns = [pl.len().alias("codes (count)")]
    for tok in tokenizers:
        if token_premium(tok) in table.columns:
            columns.append(pl.col(token_premium(tok)).median().alias(
                f"{tok}: median token premium"))
    for model in models:
        column = f"{model} bits relative to {ENGLISH} (ratio)"
        if column in table.columns:
            columns.append(pl.col(column).median().alias(f"{model}: median bits premium"))
    return (table.group_by("family").agg(columns)
            .sort(["codes (count)", "family"], descending=[True, False]))


#: Sentences per code of the marginal slice below which the report calls its intervals rough
#: (the marginal stage's own threshold for intervals, marginal.min_units, defaults to 20).
ROUGH_BELOW = 20


def _interval(value, low, high) -> str:
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def marginal_parts(marginal: pl.DataFrame, names: dict[str, str]) -> list[str]:
    """The paragraphs and table of parity beside bits on the slice, marginal
    (results/tables/flores_marginal.csv; ``names``: code -> language name): nothing when no LM
    ran the marginal (flores.marginal.models: [])."""
    if marginal is None or not marginal.height:
        return []
    rel = f"relative to {ENGLISH}"
    parts = []
    for (model,), part in marginal.group_by(["model"], maintain_order=True):
        others = part.filter(pl.col("code") != ENGLISH)
        if not others.height:
            continue
        saves = part["marginal saves (% of canonical bits)"]
        low = part.filter(saves == saves.min()).row(0, named=True)
        high = part.filter(saves == saves.max()).row(0, named=True)
        diff = others["marginal minus canonical premium (ratio)"]
        moved = others.filter((pl.col("marginal minus canonical premium low (ratio)") > 0)
                              | (pl.col("marginal minus canonical premium high (ratio)") < 0))
        top = others.filter(pl.col(f"tokens {rel} (ratio)")
                            == others[f"tokens {rel} (ratio)"].max()).row(0, named=True)
        sentence = (
            f"{model}, on {others.height} codes beside English ({part['sentences (count)'].max()}"
            f" sentences each, the same in every code): the LM-guided marginal over all "
            f"tokenizations is {fmt(low['marginal saves (% of canonical bits)'])}% "
            f"({names.get(low['code'], low['code'])}) to "
            f"{fmt(high['marginal saves (% of canonical bits)'])}% "
            f"({names.get(high['code'], high['code'])}) below the canonical tokenization's "
            f"bits. Its largest token premium, {fmt(top[f'tokens {rel} (ratio)'])} "
            f"({names.get(top['code'], top['code'])}), costs a canonical bits premium of "
            f"{_interval(top[f'canonical bits {rel} (ratio)'], top[f'canonical bits {rel} low (ratio)'], top[f'canonical bits {rel} high (ratio)'])}"
            f" and a marginal one of "
            f"{_interval(top[f'marginal bits {rel} (ratio)'], top[f'marginal bits {rel} low (ratio)'], top[f'marginal bits {rel} high (ratio)'])}."
            f" Over the slice the marginal moves a bits premium by {fmt(float(diff.min()))} to "
            f"{fmt(float(diff.max()))}; ")
        if moved.height:
            change = pl.col("marginal minus canonical premium (ratio)")
            lower = ", ".join(names.get(c, c) for c in moved.filter(change < 0)["code"])
            higher = ", ".join(names.get(c, c) for c in moved.filter(change > 0)["code"])
            said = [f"the interval of that change excludes 0 in {moved.height} of "
                    f"{others.height} codes."]
            if lower:
                said.append(f"Lower under the marginal: {lower}; there, part of the canonical "
                            f"premium is the one segmentation the tokenizer picks, not the "
                            f"language.")
            if higher:
                said.append(f"Higher under the marginal: {higher}; there, the marginal gains "
                            f"English more than the language.")
        else:
            said = [f"its interval holds 0 in all {others.height} codes: on this slice the bits "
                    f"a token premium costs are not an artefact of the one segmentation the "
                    f"tokenizer picks."]
        n = int(part["sentences (count)"].max())
        if n < ROUGH_BELOW:
            said.append(f"With {n} sentences a code these intervals are rough; raise "
                        f"flores.marginal.sentences (config/gpu takes 100).")
        parts.append(_p(sentence + " ".join(said)))
    shown = marginal.select(
        "code", pl.col("code").replace_strict(names, default="").alias("language"), "model",
        "sentences (count)", f"tokens {rel} (ratio)", f"canonical bits {rel} (ratio)",
        f"canonical bits {rel} low (ratio)", f"canonical bits {rel} high (ratio)",
        f"marginal bits {rel} (ratio)", f"marginal bits {rel} low (ratio)",
        f"marginal bits {rel} high (ratio)", "marginal saves (% of canonical bits)",
        "marginal minus canonical premium (ratio)")
    shown, constant = drop_constant_columns(shown, keep=("code",))
    labels = {c: c.rsplit(" (", 1)[0] for c in shown.columns if c.endswith(")")}
    headers = {c: c.rsplit(" (", 1)[1].rstrip(")") for c in shown.columns if c.endswith(")")}
    parts.append(html_table(shown, headers=headers, labels=labels, caption=(
        "Parity beside bits on the slice (flores.marginal): the token premium, and the bits "
        "premium under the canonical tokenization and under the LM-guided marginal over all "
        "tokenizations, with percentile bootstrap intervals over the sentences (paired with "
        "English's); results/tables/flores_marginal.csv also has the change's interval"
        + (f"; {constants_text(constant)}" if constant else ""))))
    return parts


def flores_body(tables: dict[str, pl.DataFrame], figures: dict[str, str], figure) -> str | None:
    """The section's HTML (None when the FLORES-200 analyses did not run)."""
    table = tables.get("table")
    if table is None or not table.height:
        return None
    petrov, premium, ranks = tables["petrov"], tables["byte_premium"], tables["ranks"]
    tokenizers = [c.split(" tokens relative")[0] for c in table.columns
                  if c.endswith(f" tokens relative to {ENGLISH} (ratio)")]
    models = [c.split(" bits relative")[0] for c in table.columns
              if c.endswith(f" bits relative to {ENGLISH} (ratio)")]
    scored = [int(table[f"{m} sentences scored (count)"].max()) for m in models]
    parts = [_p(
        f"The {table.height} FLORES-200 codes analysed say the same {table['sentences (count)'][0]:,}"
        f" sentences (dev then devtest), so counts of any unit compare languages on identical "
        f"content. A code's premium is its count over English's ({ENGLISH}): the token premium "
        f"of Petrov et al. (2023), each sentence encoded alone, as the study's models score "
        f"sentences. The pretrained LMs scored an evenly spaced sample of "
        f"{', '.join(map(str, sorted(set(scored))))} sentences a code (the same sentences in "
        f"every code; flores.sentences): their bits premium is the code's bits over English's "
        f"on those sentences, with a percentile bootstrap interval "
        f"over them (wide with so few; raise flores.sentences on a cluster).")]
    medians = []
    for tok in tokenizers:
        values = table[token_premium(tok)].drop_nulls()
        if values.len():
            top = table.filter(pl.col(token_premium(tok)) == values.max()).row(0, named=True)
            medians.append(f"{tok} {fmt(statistics.median(values.to_list()))} (most: "
                           f"{top['language']}, {fmt(top[token_premium(tok)])})")
    parts.append(_p("Median token premium over the codes, by tokenizer: " + "; ".join(medians)
                    + "."))
    parts.append(figure(figures.get("flores"), "FLORES-200: token premium by family; token "
                        "premium against bits premium"))
    summary = family_summary(table, tokenizers, models)
    parts.append(html_table(summary,
                            caption="Premiums over English by language family (Arnett et al.'s "
                                    "families; medians over the family's codes)",
                            headers={c: "ratio" for c in summary.columns if "median" in c}))

    parts.append(subsection("flores-bits", "Does a token premium cost bits?"))
    cost = ranks.filter(pl.col("comparison").str.contains("token premium vs bits premium"))
    lines = []
    for row in cost.iter_rows(named=True):
        model = row["model"]
        both = table.filter(pl.col(f"{model} bits relative to {ENGLISH} (ratio)").is_not_null())
        tok = statistics.median(both[token_premium(model)].to_list())
        bits = statistics.median(both[f"{model} bits relative to {ENGLISH} (ratio)"].to_list())
        lines.append(f"{model}: median token premium {fmt(tok)}, median bits premium "
                     f"{fmt(bits)}; rank correlation of the two {_rho(row)}")
    parts.append(_p(
        "A language that needs more tokens than English for the same sentence pays in compute; "
        "it pays in likelihood only if its bits grow too. " + ". ".join(lines) + ". A bits "
        "premium below the token premium means the extra tokens are cheaper ones (each carries "
        "fewer bits); the bits premium itself is what the language costs the model."))
    names = dict(zip(table["code"], table["language"])) if "language" in table.columns else {}
    parts.extend(marginal_parts(tables.get("marginal"), names))

    parts.append(subsection("flores-checks", "Checked against the published figures"))
    equal = int(petrov["equal"].sum())
    measures = ", ".join(sorted(set(petrov["their column"])))
    differ = petrov.filter(~pl.col("equal"))
    parts.append(_p(
        f"Petrov et al. (2023). Their text of a code is its dev and devtest files, each "
        f"read whole with every newline replaced by a space, joined by a space. On that text "
        f"our counts equal {equal} of their {petrov.height} published integers ({measures}; "
        f"their GPT-2 is r50k_base, ByT5 the UTF-8 bytes, UTF-32 the code points)"
        + ("." if differ.height == 0 else
           f"; {differ.height} differ, e.g. {differ.row(0, named=True)['code']}.")
        + " results/tables/flores_petrov.csv has every pair."))
    same = premium.filter(pl.col("same method") == "yes")
    ratio = premium.filter((pl.col("same method") == "no")
                           & (pl.col("their column") == "byte_coef_flores_2000lines"))
    bible = premium.filter(pl.col("their column") == "byte_coef_bible_whole")
    sentence = (
        f"Arnett et al. (2024). Their byte premium on FLORES (byte_coef_flores_2000lines)"
        f" is the geometric mean of per-line byte ratios over the first 2,000 lines, each "
        f"stripped; computed that way on our copy it agrees to their printed precision on "
        f"{int(same['agrees to printed precision'].sum())} of {same.height} codes.")
    if ratio.height:
        diff = ratio["difference (ratio)"].abs()
        sentence += (
            f" The study's own premium is a ratio of totals over all 2,009 lines as stored, "
            f"which weights each line by its length: it differs from theirs by a median "
            f"{fmt(diff.median())} (at most {fmt(diff.max())}), split in the table into the "
            f"part the lines make and the part the mean makes.")
    if bible.height:
        sentence += (
            f" Their Bible column (byte_coef_bible_whole, {bible.height} codes) is another "
            f"text: ours differs from it by a median "
            f"{fmt(bible['difference (ratio)'].abs().median())}.")
    parts.append(_p(sentence + " results/tables/flores_byte_premium.csv."))
    gold = ranks.filter(~pl.col("comparison").str.contains("token premium"))
    if gold.height:
        shown = gold.select("comparison", "codes (count)", "rho", "rho low", "rho high")
        parts.append(_p(
            "Goldfish (Chang et al. 2024). Their measure is the bits of each sentence's "
            "second half given its first half (the half counted in characters), averaged over "
            "the sentences; ours is computed the same way on our sample, and only the order of "
            f"the languages is compared: {CAVEAT}."))
        parts.append(html_table(shown, caption="Rank agreement with Goldfish's published "
                                "second-half bits (Spearman's rho, percentile bootstrap over "
                                "codes)", headers={"rho": "-1 to 1", "rho low": "-1 to 1",
                                                   "rho high": "-1 to 1"}))
    return "".join(parts)
