"""The FLORES-200 table of the wide study, one row per code: what the language is (Petrov et
al.'s name, Arnett et al.'s family and writing type, the script of the code), its premiums over
English under every tokenizer (:mod:`fairppl.tokenizers.parity`, the ``sentences`` text: each
sentence encoded alone, as the study's models score them), and each pretrained LM's bits per
sentence and bits premium on the sample (:mod:`fairppl.lm.flores_bits`), with Goldfish's
published second-half bits beside.

:func:`rank_table` asks the two questions of the report by rank over the codes, with percentile
bootstrap intervals over codes (:func:`fairppl.lm.goldfish.spearman_interval`):

* **does a token premium cost bits?** Spearman's rho between each LM's token premium (its own
  tokenizer) and its bits premium on the same sentences; a language that needs more tokens for
  the same content but no more bits pays in compute, not in likelihood;
* **do our LMs order the languages as Goldfish's do?** rho between each LM's second-half bits
  and each reference column of :data:`fairppl.lm.goldfish.REFERENCES`.
"""

from __future__ import annotations

import polars as pl

from ..corpus.flores import ENGLISH
from .goldfish import REFERENCES, spearman_interval
from ..stats.bootstrap import BootstrapSettings

#: Writing types of Arnett et al.'s table, as the figure names them.
WRITING_TYPES = ("alphabet", "abjad", "abugida", "syllabary", "logography")


def token_premium(tokenizer: str) -> str:
    """The table's column of ``tokenizer``'s token premium."""
    return f"{tokenizer} tokens relative to {ENGLISH} (ratio)"


def code_info(codes: list[str], petrov_names: dict[str, str],
              arnett: dict[str, dict[str, str]]) -> pl.DataFrame:
    """``code``, ``language`` (Petrov et al.'s name), ``script`` (ISO 15924, from the code),
    ``family`` and ``writing type`` (Arnett et al.'s table; ``unknown`` where it has none)."""
    rows = []
    for code in codes:
        theirs = arnett.get(code.lower(), {})
        rows.append({"code": code, "language": petrov_names.get(code, code),
                     "script": code.split("_", 1)[1],
                     "family": (theirs.get("family") or "").strip() or "unknown",
                     "writing type": (theirs.get("writing_type") or "").strip() or "unknown"})
    return pl.DataFrame(rows, schema={"code": pl.Utf8, "language": pl.Utf8, "script": pl.Utf8,
                                      "family": pl.Utf8, "writing type": pl.Utf8})


def code_table(parity: pl.DataFrame, bits: pl.DataFrame, info: pl.DataFrame,
               goldfish: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per code of ``parity`` (the study's tidy parity table): ``info``'s columns, the
    code-point and byte premiums, one token premium per tokenizer (``sentences`` rows), then per
    model of ``bits`` (:func:`fairppl.lm.flores_bits.code_table`) its bits per sentence, bits
    premium and interval, tokens per sentence and second-half bits (columns prefixed with the
    model), and Goldfish's largest model's published second-half bits (``goldfish``:
    :func:`fairppl.lm.goldfish.read_goldfish`)."""
    sentences = parity.filter(pl.col("text") == "sentences")
    first = sentences["tokenizer"][0]
    out = info.join(
        sentences.filter(pl.col("tokenizer") == first).select(
            "code", "sentences (count)",
            f"code points relative to {ENGLISH} (ratio)",
            f"UTF-8 bytes relative to {ENGLISH} (ratio)"),
        on="code", how="inner")
    for (tok,), part in sentences.group_by(["tokenizer"], maintain_order=True):
        out = out.join(part.select("code", pl.col(f"tokens relative to {ENGLISH} (ratio)")
                                   .alias(token_premium(tok))), on="code", how="left")
    value_columns = [c for c in bits.columns if c not in ("code", "model", "sentences (count)")]
    for (model,), part in bits.group_by(["model"], maintain_order=True):
        renamed = part.select("code", *[pl.col(c).alias(f"{model} {c}") for c in value_columns],
                              pl.col("sentences (count)").alias(f"{model} sentences scored (count)"))
        out = out.join(renamed, on="code", how="left")
    if goldfish is not None:
        out = out.join(goldfish.select(pl.col("code").alias("_key"), pl.col("goldfish").alias(
            "Goldfish second-half bits per sentence, published (bits)")),
            left_on=pl.col("code").str.to_lowercase(), right_on="_key", how="left").drop("_key")
    return out.sort("code")


def rank_table(table: pl.DataFrame, models: list[str], goldfish: pl.DataFrame,
               settings: BootstrapSettings = BootstrapSettings()) -> pl.DataFrame:
    """Spearman's rho with its interval over codes (module docstring): per model, its token
    premium against its bits premium, and its second-half bits against each Goldfish reference
    column. Null rho with fewer than 3 codes."""
    keyed = table.with_columns(_key=pl.col("code").str.to_lowercase()).join(
        goldfish.rename({"code": "_key"}), on="_key", how="left")
    rows = []
    for model in models:
        pairs = [(f"{model}: token premium vs bits premium", token_premium(model),
                  f"{model} bits relative to {ENGLISH} (ratio)",
                  "does a language's token premium cost bits?")]
        pairs += [(f"{model}: second-half bits vs {ref}",
                   f"{model} second-half bits per sentence (bits)", ref,
                   f"same order as {what}?") for ref, what in REFERENCES.items()]
        for name, x, y, question in pairs:
            if x not in keyed.columns or y not in keyed.columns:
                continue
            both = keyed.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null())
            rho = low = high = None
            if both.height >= 3:
                rho, low, high = spearman_interval(both[x], both[y], settings)
            rows.append({"comparison": name, "model": model, "question": question,
                         "codes (count)": both.height, "rho": rho, "rho low": low,
                         "rho high": high})
    return pl.DataFrame(rows, schema={"comparison": pl.Utf8, "model": pl.Utf8,
                                      "question": pl.Utf8, "codes (count)": pl.Int64,
                                      "rho": pl.Float64, "rho low": pl.Float64,
                                      "rho high": pl.Float64})
