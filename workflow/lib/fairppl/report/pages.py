"""The study's report: one self-contained HTML file (CSS inline, figures as base64 PNG) that opens
with the answer and continues with sections in a fixed order.

Each section is a builder ``(ReportInputs) -> str | None`` in ``SECTIONS`` (None = nothing to
show in this study); a later stage adds its section by adding a builder to the list. A builder
writes its section's sentences and HTML; the rows it shows are reshaped in
:mod:`fairppl.report.frames`.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..stats.bootstrap import BootstrapSettings
from ..stats.correlates import (OOV_VOCABULARY, OOV_VOCABULARY_DESCRIPTION, TRAIN_SIZE,
                                 UNSEEN_COLUMNS, feature_description, feature_names)
from ..stats.metrics import describe_units
from . import frames
from .rankings import answer_sentences, iso_differences
from .html import constants_text as _constants
from .html import column_label, drop_constant_columns, html_table, unswept_sentence
from .html import paragraph as _p
from .compare import end_of_unit_html, model_pairs_html
from .morphology import why_sentences
from .outliers import outlier_sentences

QUESTION = "How hard is each language to language-model, measured fairly?"

STYLE = """<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1250px; padding: 1em 2em;
       color: #222; line-height: 1.45; }
nav { font-size: 0.9em; margin-bottom: 1em; }
nav a { margin-right: 0.8em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
p.answer { font-size: 1.08em; background: #f3f7fb; padding: 0.6em 0.9em; border-left: 4px solid
           #1f4e9c; }
table { border-collapse: collapse; font-size: 0.85em; }
figure.table { margin: 0.6em 0 1.2em; }
p.caption { font-weight: bold; margin: 0 0 4px; }
div.wide { overflow-x: auto; max-width: 100%;
           background: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)),
                       linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) 100% 0,
                       radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.25), rgba(0,0,0,0)),
                       radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.25), rgba(0,0,0,0))
                       100% 0;
           background-repeat: no-repeat; background-size: 40px 100%, 40px 100%, 14px 100%,
                       14px 100%; background-attachment: local, local, scroll, scroll; }
figure.scrolls::before { content: "\\21C6  wider than the page: scroll the table sideways";
                         display: block; font-size: 0.8em; color: #a33; }
nav a.sub { font-size: 0.9em; color: #456; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; vertical-align: top; }
th { background: #eef2f7; } th small { font-weight: normal; color: #555; }
td.text { text-align: left; min-width: 6em; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
img { max-width: 100%; border: 1px solid #ddd; }
.note { color: #555; font-size: 0.9em; }
</style>
<script>
function markWideTables() {
  for (const d of document.querySelectorAll("div.wide"))
    d.parentElement.classList.toggle("scrolls", d.scrollWidth > d.clientWidth + 1);
}
window.addEventListener("load", markWideTables);
window.addEventListener("resize", markWideTables);
</script>"""

UNITS = {
    "rank": "1 = hardest",
    "n_languages": "languages compared (count)",
    "spearman_rho": "rank correlation (-1 to 1)",
    "p_value": "two-sided p of rho = 0 (exact up to 8 languages)",
    "p_adjusted": "p_value adjusted by Benjamini-Hochberg over the table's rows",
    "model": "model / tokenizer",
    "model_a": "model / tokenizer",
    "model_b": "model / tokenizer",
    "feature": "property of the text",
    "bpec": "BPEC of the reference model (bits/char of English)",
    "script": "ISO 15924",
    "iso639_3": "ISO 639-3",
    "id": "language id (figures, files)",
    "language": "name",
}


@dataclass
class ReportInputs:
    """Everything the report shows. Tables are those of the metrics rules: ``bpu`` (each model on
    all its units), ``models`` (one common unit set per corpus), both with interval columns;
    ``sheet`` is the language sheet; ``unit_counts`` has (corpus, split, n_units);
    ``differences`` and ``model_differences`` are the paired differences between adjacent
    languages and between models (fairppl.stats.bootstrap); ``rank_uncertainty`` is the paired
    bootstrap of the answer's ranking (fairppl.report.rankings.rank_uncertainty_table)."""

    bpu: pl.DataFrame
    models: pl.DataFrame
    sheet: pl.DataFrame
    settings: dict
    bootstrap: BootstrapSettings
    differences: pl.DataFrame | None = None
    model_differences: pl.DataFrame | None = None
    rank_uncertainty: pl.DataFrame | None = None
    unit_counts: pl.DataFrame | None = None
    dropped: pl.DataFrame | None = None
    tokenizers: pl.DataFrame | None = None
    conventions: pl.DataFrame | None = None
    correlates: pl.DataFrame | None = None
    correlations: pl.DataFrame | None = None
    marginal: dict[str, pl.DataFrame] = field(default_factory=dict)
    morphology: dict[str, pl.DataFrame] = field(default_factory=dict)
    shannon: dict[str, pl.DataFrame] = field(default_factory=dict)
    flores: dict[str, pl.DataFrame] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)

    @property
    def corpora(self) -> list[str]:
        """Corpora in config order; the first is the main one, the others second domains."""
        return [c for c in self.settings.get("corpora", {})] or sorted(set(self.models["corpus"]))

    @property
    def names(self) -> dict[str, str]:
        return dict(self.sheet.select("language", "name").unique("language").rows())


def figure(path: str | None, alt: str) -> str:
    """An <img> with the PNG at ``path`` embedded as base64 (empty if there is none)."""
    if not path or not Path(path).exists():
        return ""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f"<p><img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'></p>"


def _section(anchor: str, title: str, body: str) -> str:
    return f"<section id='{anchor}'><h2>{html.escape(title)}</h2>\n{body}\n</section>"


def _unit_phrase(models: pl.DataFrame, corpus: str) -> str:
    """'the same 200 test units in every language and model', or '20 to 31 test units per row'."""
    sizes, splits = frames.unit_sizes(models, corpus)
    split = ", ".join(splits)
    if len(sizes) == 1:
        return f"the same {describe_units(sizes[0], split)} in every language and model"
    return f"{min(sizes)} to {max(sizes)} {split} units per row"


def _own_units_phrase(bpu: pl.DataFrame, corpus: str) -> str:
    """'4,751 test units: a, b; 100 test units: c': which models scored how many units of
    ``corpus`` (each on all its units)."""
    return "; ".join(f"{describe_units(n, split)}: {', '.join(labels)}"
                     for n, split, labels in frames.own_unit_groups(bpu, corpus).iter_rows())


def answer_section(inp: ReportInputs) -> str:
    main = inp.corpora[0]
    parts = [_p(s, "answer") for s in answer_sentences(
        inp.models, inp.names, main, inp.differences, inp.correlations,
        tuple(inp.corpora[1:]), alpha=1 - inp.bootstrap.level, bpu=inp.bpu,
        ranks=inp.rank_uncertainty)]
    why = why_sentences(inp.morphology.get("predictors"))
    if why:
        # one paragraph per corpus, then what the wider corpus changes
        why[0] = "Why do languages differ? " + why[0]
        why[-1] += " (Section \"Why languages differ\" has the tables.)"
        parts.extend(_p(sentence, "answer") for sentence in why)
    # The table beside the answer holds the numbers the sentences use: each model on all the
    # units it scored; "Languages x models" has every model on one common unit set.
    table = frames.answer_table(inp.models, inp.bpu, inp.sheet, main)
    if table.height:
        headers = {c: UNITS.get(c, "BPEC (bits/char of English) [95% interval]")
                   for c in table.columns}
        parts.append(html_table(table, headers, caption=(
            f"BPEC on {main}, each model on all the units it scored "
            f"({_own_units_phrase(inp.bpu, main)}), rows in the order of the answer's "
            f"ranking (mean rank over its models, hardest first); one column per "
            f"open-vocabulary model. {inp.bootstrap.describe()}.")))
    isos = iso_differences(inp.sheet, main)
    parts.append(_p("BPEC = total bits of a language's test text / characters of the English "
                    "text of the same units: every language pays for the same content, every "
                    "character charged (open vocabulary). Empty cell: the model was not run on "
                    "that language." + (f" Language ids are the study's; where the text's "
                    f"individual language has another ISO 639-3 code: {isos}." if isos
                    else ""), "note"))
    return _section("answer", "The answer", "\n".join(parts))


#: The rates of the languages x models tables, with their units.
_RATES = {
    "bits_per_utterance": "bits per utterance (bits/utterance) [95% interval]",
    "bits_per_char": "bits per character of the language itself (bits/char)",
    "bits_per_byte": "bits per UTF-8 byte of the language itself (bits/byte)",
}


def languages_models_section(inp: ReportInputs) -> str | None:
    main = inp.corpora[0]
    tables = frames.rate_tables(inp.models, inp.bpu, inp.sheet, main, _RATES)
    if not tables:
        return None
    parts = [html_table(table, {c: UNITS.get(c, _RATES[rate]) for c in table.columns}, caption=(
        f"{main}, {_RATES[rate].split(' (')[0]}: {_unit_phrase(inp.models, main)}; rows in the "
        f"order of the answer's ranking (mean rank over its models, hardest first)"))
        for rate, table in tables.items()]
    # Each model ranked on all the units it scored, as in the answer.
    agree = frames.ranked_agreement(inp.bpu, main)
    if agree.height:
        parts.append(html_table(agree, UNITS, caption=(
            f"Agreement between model rankings ({main}; each model ranked on all the "
            f"units it scored, over the languages both scored)")))
    parts.append(model_pairs_html(inp.model_differences, main, inp.bootstrap))
    parts.append(end_of_unit_html(inp.models, main))
    body = _p("Every number of a corpus on one common unit set (results/tables/models.csv; "
              "bpu.csv has each model on all the units it scored). Bits per character and per "
              "byte divide by the language's own characters and bytes: not comparable across "
              "scripts; BPEC (above) is.", "note") + "\n".join(parts)
    return _section("table", "Languages x models", body)


def main_figure_section(inp: ReportInputs) -> str | None:
    img = figure(inp.figures.get("main"), "BPEC by language and model")
    if not img:
        return None
    text = (f"Languages sorted by the character n-gram's BPEC, one marker and colour per model "
            f"(the same colours in every figure), bars = {inp.bootstrap.describe()}. Every point "
            f"is on {_unit_phrase(inp.models, inp.corpora[0])} ({inp.corpora[0]}).")
    return _section("figure", "Main figure", img + _p(text, "note"))


#: Below this many units a corpus's intervals are called wide in the report.
FEW_UNITS = 100


def second_domain_section(inp: ReportInputs) -> str | None:
    parts = []
    main = inp.corpora[0]
    for corpus in inp.corpora[1:]:
        domain = frames.second_domain(inp.models, inp.sheet, main, corpus)
        if domain is None:
            continue
        tc = domain.train_corpora
        trained = (f" Models trained on {', '.join(tc)} (pretrained LMs as they are)."
                   if tc else "")
        few = domain.most_units < FEW_UNITS
        left = "".join(f" Common unit set: {x}." for x in domain.left_out)
        parts.append(_p(f"{'A small second-domain check' if few else 'Second domain'}: "
                        f"{corpus}, {_unit_phrase(inp.models, corpus)}.{trained}{left}"
                        + (" With so few units the intervals are wide; read the ranking, not "
                           "the digits." if few else ""), "note"))
        parts.append(figure(inp.figures.get(corpus), f"BPEC on {corpus}"))
        table = domain.table
        parts.append(html_table(table, {c: UNITS.get(c, "BPEC (bits/char of English) [95% "
                                                       "interval]") for c in table.columns},
                                caption=f"{corpus}: languages ranked by the first model's BPEC"))
        parts.extend(_p(s, "note") for s in outlier_sentences(
            inp.models, inp.correlates, corpus, inp.names, ", ".join(tc) if tc else None))
        if domain.transfer.height:
            parts.append(html_table(domain.transfer, UNITS, caption=(
                f"Does the {main} ranking transfer? Spearman between each model's {main} and "
                f"{corpus} rankings of the languages ({main}: "
                f"{_unit_phrase(inp.models, main)}; {corpus}: "
                f"{_unit_phrase(inp.models, corpus)})")))
    if not parts:
        return None
    return _section("second-domain", "Second domain", "\n".join(parts))


#: The units of the per-tokenizer columns of the UNK table, in the order of
#: :data:`fairppl.report.frames.UNK_SUFFIXES`.
_UNK_UNITS = ("<unk> tokens / words (fraction)", "p(<unk>) as is (bits/utterance)",
              "every p(<unk>) / #OOV types (bits/utterance)")


def unk_section(inp: ReportInputs) -> str | None:
    unk = frames.unk_wide(inp.bpu)
    if unk is None:
        return None
    table, constant = unk
    headers = {"language": "language id", "model": "word model", "corpus": "corpus id"}
    for c in table.columns:
        if c.endswith(" (open vocabulary)"):
            headers[c] = "character n-gram, same units (bits/utterance)"
        for suffix, unit in zip(frames.UNK_SUFFIXES, _UNK_UNITS):
            if c.endswith(f": {suffix}"):
                headers[c] = unit
    text = ("Closed-vocabulary word n-grams over a vocabulary sweep, each on all test units (the "
            "character n-gram on the same units). Their bits are not code lengths of the text: "
            "an out-of-vocabulary word costs one p(<unk>) instead of the spelling of its "
            "characters, so naive word-level bits fall below the character model's, and fall "
            "further as the vocabulary shrinks. Dividing every p(<unk>) by the number of "
            "distinct OOV types removes the reward for small vocabularies but still does not "
            "spell the words out; only the open-vocabulary rows (above) are comparable. BPEC is "
            "therefore left empty for these rows.")
    left = unswept_sentence(inp.bpu, getattr(inp, "correlates", None),
                            getattr(inp, "settings", None) or {},
                            inp.names if hasattr(inp, "sheet") else {})
    if left:
        text += " " + left
    note = _constants(constant)
    body = (_p(text, "note") + figure(inp.figures.get("unk"), "UNK sweep")
            + html_table(table, headers, caption=note))
    return _section("unk", "UNK-corrected perplexity (closed vocabulary)", body)


def correlates_section(inp: ReportInputs) -> str | None:
    if inp.correlates is None or not inp.correlates.height:
        return None
    main = inp.corpora[0]
    # a column with one value for every language (the unit counts of the common set, N of the
    # fixed-length type/token ratio, an empty reason) is said once in the caption
    feats, constant, ref_name = frames.correlates_table(inp.correlates, inp.models, inp.sheet,
                                                        main)
    same = _constants(constant)
    parts = [_p(f"Properties of each language's {main} text (whitespace words, the same rule "
                "for every language: languages written without spaces get few, very long "
                "words) and their rank correlation with BPEC across languages. Counts and "
                "rates are on the common train units (those every language of the corpus's "
                "common unit set has; the OOV rate on the common test units), the fixed "
                "type/token ratio on the first N words of them in unit order.", "note"),
             html_table(feats, {**TRAIN_SIZE,
                                **{f: feature_description(f) for f in feature_names(feats.columns)},
                                **UNITS, "language": "language id",
                                OOV_VOCABULARY: OOV_VOCABULARY_DESCRIPTION, **UNSEEN_COLUMNS,
                                "bpec": f"BPEC of {ref_name or 'none'} (bits/char of English)"},
                        caption=f"{main}: per language, hardest first"
                        + (f"; the same for every language: {same}" if same else ""))]
    if inp.correlations is not None and inp.correlations.height:
        wide = frames.correlation_cells(inp.correlations, main).with_columns(
            pl.col("feature").map_elements(column_label, return_dtype=pl.String))
        parts.append(html_table(wide, {"feature": "property of the text", **{
            c: "Spearman's rho with BPEC (two-sided p, languages)" for c in wide.columns[1:]}},
            caption="Rank correlation of each property with each model's BPEC"))
    return _section("correlates", "Correlates of difficulty", "\n".join(parts))


TOKENIZER_HEADERS = {
    "corpus": "corpus id", "language": "language id", "tokenizer": "tokenizer id",
    "model_type": "SentencePiece model type", "vocab_size_requested": "asked for (pieces)",
    "vocab_size": "trained (pieces)", "reduced": "size reduced to fit the corpus (yes/no)",
    "n_train_units": "train units (count)", "n_train_chars": "train characters (count)",
}


def tokenizers_section(inp: ReportInputs) -> str | None:
    if inp.tokenizers is None or not inp.tokenizers.height:
        return None
    table, constant = drop_constant_columns(inp.tokenizers, keep=("language", "tokenizer"))
    note = _constants(constant)
    return _section("tokenizers", "Tokenizers", html_table(table, TOKENIZER_HEADERS, caption=note))


def _own_dropped_sentence(corpus: str, part: pl.DataFrame) -> str:
    """One paragraph on the dropped units of a corpus that keeps each language's own units
    (``units: own``: the table's ``dropped_in`` column says where each drop applies)."""
    every, own = frames.own_drops(part)
    per = "; ".join(f"{lang} {n:,}" + (f" ({absent:,} in books its file lacks)" if absent else "")
                    for lang, n, absent in own.iter_rows())
    return (f"{corpus} keeps each language's own units (units: own): {every:,} units are "
            f"dropped in every language (where the English reference, whose characters BPEC "
            f"divides by, has a placeholder or no text); every other drop applies only in the "
            f"language whose translation causes it (a placeholder, an empty verse, a verse "
            f"holding a merged neighbour, or a verse of a book its file lacks). Units dropped "
            f"per language: {per or 'none'}. Every dropped unit, with its translation, reason "
            f"and the languages it is dropped in, is in results/corpus/{corpus}/dropped.tsv.")


def _dropped_sentence(corpus: str, part: pl.DataFrame, n_kept: int | None,
                      sheet: pl.DataFrame, units: str | None = None) -> str:
    """One paragraph on a corpus's dropped units (the table of fairppl.corpus.align.find_dropped);
    ``units``: the corpus's ``units`` setting (None: read from the table, where a drop that
    applies in some languages only marks ``units: own``)."""
    if units is None:
        units = frames.dropped_units_mode(part)
    if units == "own":
        return _own_dropped_sentence(corpus, part)
    language = frames.source_languages(sheet, corpus)
    counts = frames.drops_per_translation(part)
    per = "; ".join(
        f"{sid}{f' ({language[sid]})' if sid in language else ''} {n:,} placeholders, "
        f"{named + by_length:,} hosts ({named:,} named by the placeholder, {by_length:,} by "
        f"length)" if named + by_length else
        f"{sid}{f' ({language[sid]})' if sid in language else ''} {n:,} placeholders"
        for sid, n, named, by_length in counts.iter_rows())
    kept = f"; {n_kept:,} aligned units kept" if n_kept is not None else ""
    return (f"{corpus}: {part['position'].n_unique():,} units dropped in every language "
            f"together{kept}. They are decided from every translation the corpus ships, not "
            f"only the study's languages, so adding a language changes no other: a unit is "
            f"dropped where some translation has a placeholder (a merged or missing verse) or "
            f"holds a neighbouring placeholder's merged text; that host is the verse the "
            f"placeholder names (Turkish \"(aynı)\", \"the same\": the previous verse), or, "
            f"where the placeholder does not say (Bengali \"-\"), the neighbour whose length "
            f"per English character shows it holds the run (fairppl.corpus.merged). Per translation "
            f"(code, language where the study has it): {per}. Every dropped unit, with its "
            f"translation and reason, is in results/corpus/{corpus}/dropped.tsv.")


def corpus_section(inp: ReportInputs) -> str | None:
    parts = []
    kept = {}
    if inp.unit_counts is not None and inp.unit_counts.height:
        counts, same = frames.unit_counts_table(inp.unit_counts)
        headers = {"corpus": "corpus id", "split": "split", "n_units": "aligned units (count)",
                   "fewest (count)": "units of the language with the fewest",
                   "most (count)": "units of the language with the most"}
        caption = ("Aligned units per split (the same in every language)" if same else
                   "Aligned units per split: the English reference's, and the fewest and most "
                   "a language keeps (a corpus with units: own keeps each language's own)")
        parts.append(html_table(counts, headers, caption=caption))
        kept = frames.kept_units(inp.unit_counts)
    if inp.dropped is not None and inp.dropped.height:
        for (corpus,), part in inp.dropped.group_by("corpus", maintain_order=True):
            units = (inp.settings.get("corpora", {}).get(corpus) or {}).get("units")
            parts.append(_p(_dropped_sentence(corpus, part, kept.get(corpus), inp.sheet,
                                              units or None)))
    return _section("corpus", "Corpus", "\n".join(parts)) if parts else None


def conventions_section(inp: ReportInputs) -> str | None:
    if inp.conventions is None or not inp.conventions.height:
        return None
    text = ("Every token LM is scored by one path (fairppl.lm.scoring): the start token is context "
            "only, every text token and the end token are charged, in nats converted to bits. "
            "lm_eval_harness: the settings of lm-evaluation-harness (lm-eval 0.4, "
            "loglikelihood_rolling and bits_per_byte) that give the same log-likelihoods, which "
            "leave out the end token, and what its defaults change; a test checks them against "
            "lm-eval itself (tests/unit/test_lm_eval_parity.py).")
    return _section("conventions", "Scoring conventions",
                    _p(text, "note") + html_table(inp.conventions, {}))


def marginal_section(inp: ReportInputs) -> str | None:
    from .marginal import marginal_body

    body = marginal_body(inp.marginal, inp.names, inp.figures, figure)
    if body is None:
        return None
    return _section("marginal", "Marginal likelihood over tokenizations", body)


def morphology_section(inp: ReportInputs) -> str | None:
    from .morphology import morphology_body

    body = morphology_body(inp.morphology, inp.names, inp.figures, figure,
                           frames.corpus_types(inp.settings))
    if body is None:
        return None
    return _section("morphology", "Why languages differ: morphology and difficulty", body)


def shannon_section(inp: ReportInputs) -> str | None:
    from .shannon import shannon_body

    body = shannon_body(inp.shannon, inp.names, inp.figures, figure)
    if body is None:
        return None
    return _section("shannon", "The Shannon game: gambling perplexity", body)


def flores_section(inp: ReportInputs) -> str | None:
    from .flores import flores_body

    body = flores_body(inp.flores, inp.figures, figure)
    if body is None:
        return None
    return _section("flores", "Two hundred languages: FLORES-200", body)


def settings_section(inp: ReportInputs) -> str:
    from .settings import settings_sentences

    items = "".join(f"<li>{html.escape(s)}</li>" for s in settings_sentences(
        inp.settings, inp.unit_counts, inp.bootstrap))
    link = ("<p class='note'>The rule graph, per-job runtimes and the raw tables: "
            "<a href='provenance.html'>provenance page</a> (Snakemake's report).</p>")
    return _section("settings", "Settings", f"<ul>{items}</ul>{link}")


SECTIONS = [answer_section, languages_models_section, main_figure_section,
            marginal_section, morphology_section, shannon_section, flores_section,
            second_domain_section, unk_section, correlates_section,
            tokenizers_section, corpus_section, conventions_section, settings_section]


def build_report(inp: ReportInputs) -> str:
    """The whole report as one HTML string: the question, a table of contents, then every
    section of ``SECTIONS`` that has something to show."""
    sections = [s for s in (builder(inp) for builder in SECTIONS) if s]
    nav = " ".join(f"<a{' class=sub' if sub else ''} href='#{a}'>{'&middot; ' if sub else ''}"
                   f"{html.escape(t)}</a>" for a, t, sub in _anchors(sections))
    return "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>fairppl: how hard is each language to language-model?</title>", STYLE,
        "</head><body>", f"<h1>{html.escape(QUESTION)}</h1>", f"<nav>{nav}</nav>",
        *sections, "</body></html>"])


def _anchors(sections: list[str]) -> list[tuple[str, str, bool]]:
    """(anchor, title, is a subsection) of every section and of the subsections (``<h3 id>``,
    :func:`fairppl.report.html.subsection`) inside it, in page order."""
    import re

    out = []
    for s in sections:
        anchor = s.split("id='", 1)[1].split("'", 1)[0]
        title = html.unescape(s.split("<h2>", 1)[1].split("</h2>", 1)[0])
        out.append((anchor, title, False))
        out.extend((a, html.unescape(t), True)
                   for a, t in re.findall(r"<h3 id='([^']+)'>(.*?)</h3>", s))
    return out
