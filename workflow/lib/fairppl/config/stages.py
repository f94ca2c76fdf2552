"""The settings of the newer stages (the marginal likelihood, the Shannon game, morphology) against
each other, the rest of the config and the two sheets, checked at start-up: each setting either
changes the plan as config/README.md says or is refused here, naming the config file, the field and
what was expected. A setting that is valid but leaves a stage (or a bettor, an analysis) empty is
not an error: :func:`stage_notes` says so in words, for the log and the report.

The checks read the config as the user wrote it (before the schema's defaults are filled in: a
block that is absent is not checked); :func:`stage_notes` reads it with the defaults.
"""

from __future__ import annotations

from ..core.errors import InputError
from .design import evaluation_split, train_corpus


#: The schema's defaults of the settings these checks read where the config leaves them out
#: (tests/unit/test_settings.py checks them against workflow/schemas/config.schema.yaml).
DEFAULTS = {
    ("marginal", "min_units"): 20,
    ("marginal", "max_units"): 50,
    ("marginal.lm", "pass_tokens"): 1024,
    ("marginal.lm", "lanes"): 1,
    ("shannon", "bettors"): ["kenlm-word", "bigram", "transformer"],
    ("shannon", "vocab_size"): 1000,
    ("shannon", "pretrained_languages"): ["eng"],
    ("shannon", "list_lengths"): [1, 10, 100, 1000, "all"],
    ("morphology", "corpus"): "bible",
    ("morphology", "apertium_languages"): ["eng", "spa", "fra", "ita", "por", "ron", "pol", "rus",
                                           "ukr", "ind", "hin"],
    ("morphology", "apertium_dir"): "/usr/share/apertium",
    ("morphology.unimorph", "languages"): ["eng", "spa", "fra", "ita", "por", "deu", "ron", "pol",
                                           "rus", "ukr", "tur"],
}


def _setting(block: dict, stage: str, key: str):
    """``block[key]`` of the config's ``stage`` block, or the schema's default."""
    return block.get(key, DEFAULTS[(stage, key)])


def _enabled(config: dict) -> list[str]:
    return sorted(c for c, spec in config.get("corpora", {}).items() if spec.get("enabled"))


def _covers(model, corpus: str, language: str) -> bool:
    """Whether a model sheet row (``corpora``, ``languages``; ``all`` = every language) scores
    (corpus, language)."""
    return corpus in model.corpora and (language in model.languages or "all" in model.languages)


def check_marginal(config: dict, source: str, languages: list = ()) -> None:
    """The `marginal` block, where the config gives one: its corpora are enabled (a disabled one
    would silently leave the stage without languages); every id of its ``languages`` has a row of
    one of its corpora in the language sheet (``languages``: rows with ``corpus`` and
    ``language``), and every id of ``lengths.languages`` too, and is among ``languages`` where
    that is a list (the sweep covers only the stage's languages); ``min_units`` is at most
    ``max_units`` (else no n-gram row could get an interval); its n-gram tokenizer is a subword
    n-gram of the study (``subword_ngram.tokenizers``, trained on each of its corpora or their
    ``models_from``), and a unigram one (the samples-needed curves, the lattice estimators and
    the length sweep sample its lattice); ``lm.lanes`` above 1 only with ``lm.pass_tokens``."""
    block = config.get("marginal")
    if not block or not block.get("corpora"):  # the stage is off: nothing of it is used
        return
    corpora = config.get("corpora", {})
    off = [c for c in block["corpora"] if c in corpora and not corpora[c].get("enabled")]
    if off:
        raise InputError(f"field 'marginal.corpora': {off} are not enabled corpora (the stage "
                         f"would have no language of them); expected ids among "
                         f"{_enabled(config)}", path=source)
    known = {row.language for row in languages if row.corpus in block.get("corpora", [])}
    chosen = block.get("languages")
    swept = (block.get("lengths") or {}).get("languages") or []
    for field, asked in (("marginal.languages", chosen or []),
                         ("marginal.lengths.languages", swept)):
        unknown = [lang for lang in asked if lang not in known]
        if languages and unknown:
            raise InputError(f"field '{field}': {unknown} have no row for the corpora "
                             f"{block.get('corpora', [])} in the language sheet; expected ids "
                             f"among {sorted(known)}", path=source)
    outside = [lang for lang in swept if chosen is not None and lang not in chosen]
    if outside:
        raise InputError(f"field 'marginal.lengths.languages': {outside} are not among "
                         f"marginal.languages {chosen}, so the length sweep would skip them; "
                         f"expected ids among marginal.languages (or marginal.languages: null)",
                         path=source)
    least = _setting(block, "marginal", "min_units")
    most = _setting(block, "marginal", "max_units")
    if most is not None and least > most:
        raise InputError(f"field 'marginal.min_units': {least} is above marginal.max_units "
                         f"{most}, so no row of the subword n-gram could ever get an interval; "
                         f"expected min_units <= max_units (or max_units: null, the whole "
                         f"split)", path=source)
    _check_lanes(block, source)
    if "ngram" not in block:
        return
    tok = block["ngram"].get("tokenizer", "spm-unigram-4000")
    if swept and not tok.startswith("spm-unigram-"):
        raise InputError(f"field 'marginal.lengths.languages': the length sweep runs wor-1best "
                         f"on the unigram lattice but marginal.ngram.tokenizer is {tok!r}; "
                         f"expected an spm-unigram-<size> tokenizer or lengths.languages: []",
                         path=source)
    subword = config.get("subword_ngram", {})
    if tok not in subword.get("tokenizers", []):
        raise InputError(f"field 'marginal.ngram.tokenizer': {tok!r} has no subword n-gram; "
                         f"expected one of subword_ngram.tokenizers "
                         f"{subword.get('tokenizers', [])}", path=source)
    lattice = [e for e in block["ngram"].get("estimators", []) if e in
               ("wr", "wor", "wor-1best", "nbest")]
    if lattice and not tok.startswith("spm-unigram-"):
        raise InputError(f"field 'marginal.ngram.estimators': {lattice} sample the unigram "
                         f"lattice but the tokenizer is {tok!r}; expected an spm-unigram-<size> "
                         f"tokenizer or no lattice estimators", path=source)
    if not tok.startswith("spm-unigram-"):
        raise InputError(f"field 'marginal.ngram.tokenizer': {tok!r} is not a unigram "
                         f"tokenizer, and the samples-needed curves of every language of the "
                         f"stage (rule marginal_samples_needed) sample its unigram lattice, so "
                         f"each of their jobs would fail; expected an spm-unigram-<size> "
                         f"tokenizer", path=source)
    for corpus in block.get("corpora", []):
        train = corpora.get(corpus, {}).get("models_from") or corpus
        if train not in subword.get("corpora", []):
            raise InputError(f"field 'marginal.corpora': {corpus!r} has no subword n-grams "
                             f"(trained on {train!r}); expected {train!r} in "
                             f"subword_ngram.corpora", path=source)


def _check_lanes(block: dict, source: str) -> None:
    """``marginal.lm.lanes`` above 1 deals the units that advance together in shared LM calls
    out to lanes (:func:`fairppl.tokenlm.batch.run_many`); with ``pass_tokens: null`` no unit
    shares a call (one unit per LM call), so the lanes would be dropped without a word."""
    lm = block.get("lm") or {}
    lanes = _setting(lm, "marginal.lm", "lanes")
    tokens = _setting(lm, "marginal.lm", "pass_tokens")
    if lanes > 1 and tokens is None:
        raise InputError(f"field 'marginal.lm.lanes': {lanes} lanes need units that share LM "
                         f"calls, but marginal.lm.pass_tokens is null (one unit per LM call), "
                         f"so the lanes would be ignored; expected lanes: 1, or pass_tokens "
                         f"set (1024 on a CPU thread, 8192 or more on a GPU)", path=source)


def _check_bigram_split(config: dict, block: dict, source: str) -> None:
    """The eq. 7 bigram chooses its discount on the dev split of the corpus that trains it: a
    corpus of the game that trains its own models and is scored on its dev split (or on every
    unit) would score the bigram on the very units its discount was tuned on."""
    if "bigram" not in _setting(block, "shannon", "bettors"):
        return
    for corpus in block["corpora"]:
        spec = config["corpora"].get(corpus, {})
        if spec.get("models_from"):  # scored on another corpus than the one it is tuned on
            continue
        field, split = f"corpora.{corpus}.eval_split", spec.get("eval_split")
        if not split:
            field, split = "evaluation.split", (config.get("evaluation") or {}).get("split",
                                                                                    "test")
        if split in ("dev", "all"):
            scored = "" if split == "dev" else "among others "
            raise InputError(f"field '{field}': {split!r} scores {scored}the dev units, on which "
                             f"the Shannon game's eq. 7 bigram chooses its discount "
                             f"(shannon.bigram_alphas), so the bigram of {corpus!r} would be "
                             f"scored on the units it was tuned on; expected test, or no bigram "
                             f"in shannon.bettors", path=source)


def _check_pretrained_bettors(block: dict, asked: list, models: list | None,
                              source: str) -> None:
    """``pretrained_languages`` are languages of the game; ``pretrained_models`` are ids of the
    model sheet (``models``: its rows, when known; an empty sheet has none), and, when the
    pretrained LMs play, each of them scores at least one (corpus, language) of the game."""
    chosen = _setting(block, "shannon", "pretrained_languages")
    if chosen is not None:
        outside = [lang for lang in chosen if lang not in asked]
        if outside:
            raise InputError(f"field 'shannon.pretrained_languages': {outside} are not languages "
                             f"of the game, so no pretrained LM would bet on them; expected ids "
                             f"among shannon.languages {asked} (or null: every language of the "
                             f"game)", path=source)
    if models is None:
        return
    ids = [m.model for m in models]
    betting = block.get("pretrained_models") or []
    strangers = [m for m in betting if m not in ids]
    plays = "pretrained" in _setting(block, "shannon", "bettors")
    # with the pretrained LMs out of the game, an emptied sheet may keep the ids for later
    if strangers and (ids or plays):
        where = (f"ids among {sorted(ids)}" if ids else "ids of the sheet's rows, and it has "
                 "none: add the models' rows, or leave pretrained out of shannon.bettors")
        raise InputError(f"field 'shannon.pretrained_models': {strangers} are not models of the "
                         f"model sheet; expected {where}", path=source)
    if not plays:
        return
    playing = asked if chosen is None else chosen
    for model in (m for m in models if m.model in betting):
        if not any(_covers(model, c, lang) for c in block["corpora"] for lang in playing):
            raise InputError(f"field 'shannon.pretrained_models': {model.model!r} scores none of "
                             f"the languages {playing} of the corpora {block['corpora']} (its "
                             f"model sheet row lists corpora {list(model.corpora)} and languages "
                             f"{list(model.languages)}), so it would never bet; expected a model "
                             f"whose row lists one of them", path=source)


def check_shannon(config: dict, source: str, languages: list = (),
                  models: list | None = None) -> None:
    """The `shannon` block, where the config gives one: its corpora are enabled, every id of its
    ``languages`` has a sheet row of one of them and is written with spaces between words (not in
    ``word_ngram.languages_without_spaces``: its words would be whole clauses), and with the
    ``kenlm-word`` bettor, ``vocab_size`` is one of ``word_ngram.vocab_sizes`` on corpora that
    the word n-grams cover (that model bets on exactly the game's outcomes); the eq. 7 bigram is
    not scored on its tuning split; the pretrained bettors' settings name languages of the game
    and models of the model sheet (``models``: its rows, when known) that bet on them."""
    block = config.get("shannon")
    if not block or not block.get("corpora"):  # no game
        return
    corpora = config.get("corpora", {})
    off = [c for c in block["corpora"] if not corpora.get(c, {}).get("enabled", False)]
    if off:
        raise InputError(f"field 'shannon.corpora': {off} are not enabled corpora; expected ids "
                         f"among {_enabled(config)}", path=source)
    known = {row.language for row in languages if row.corpus in block["corpora"]}
    asked = block.get("languages") or []
    unknown = [lang for lang in asked if lang not in known]
    if languages and unknown:
        raise InputError(f"field 'shannon.languages': {unknown} have no row for the corpora "
                         f"{block['corpora']} in the language sheet; expected ids among "
                         f"{sorted(known)}", path=source)
    _check_pretrained_bettors(block, asked, models, source)
    word = config.get("word_ngram", {})
    spaceless = [lang for lang in asked if lang in word.get("languages_without_spaces", [])]
    if spaceless:
        raise InputError(f"field 'shannon.languages': {spaceless} are written without spaces "
                         f"(word_ngram.languages_without_spaces): the game's outcomes are "
                         f"whitespace-delimited words; expected languages with spaces",
                         path=source)
    if "kenlm-word" in _setting(block, "shannon", "bettors"):
        size = _setting(block, "shannon", "vocab_size")
        if size not in word.get("vocab_sizes", []):
            raise InputError(f"field 'shannon.vocab_size': {size} is not one of "
                             f"word_ngram.vocab_sizes {word.get('vocab_sizes', [])}; expected "
                             f"one of them (that word n-gram bets on the game's outcomes) or "
                             f"no kenlm-word in shannon.bettors", path=source)
        for corpus in block["corpora"]:
            train = corpora.get(corpus, {}).get("models_from") or corpus
            if train not in word.get("corpora", []):
                raise InputError(f"field 'shannon.corpora': {corpus!r} has no word n-grams "
                                 f"(trained on {train!r}); expected {train!r} in "
                                 f"word_ngram.corpora or no kenlm-word in shannon.bettors",
                                 path=source)
    _check_bigram_split(config, block, source)
    lengths = _setting(block, "shannon", "list_lengths")
    numbers = [x for x in lengths if x != "all"]
    if len(set(map(str, lengths))) != len(lengths):
        raise InputError(f"field 'shannon.list_lengths': {lengths} repeats a length; expected "
                         f"each length once", path=source)
    size = _setting(block, "shannon", "vocab_size")
    too_long = [x for x in numbers if x >= size + 2]
    if too_long:
        raise InputError(f"field 'shannon.list_lengths': {too_long} are not below m = "
                         f"vocab_size + 2 = {size + 2}; expected shorter lists or `all`",
                         path=source)


def check_shannon_units(config: dict, source: str, languages: list, units_of,
                        rebuilt=None) -> None:
    """``shannon.max_unit_chars`` against the units the game would draw from, where they are
    known: the game's jobs bet on the evaluation units of at most that many characters
    (:func:`fairppl.shannon.units.game_units`) and fail when a language has none. Only the
    prepared corpus says how long its units are, so each corpus of the game is read where its
    units table (``units_of(corpus)``, written by ``prepare_corpus``) exists and is current:
    ``rebuilt(path)`` says whether the run will write it again (Snakemake's own plan: a changed
    ``books``, split or input makes ``prepare_corpus`` run again, and the table on disk is stale).
    Where it will, or does not exist yet, nothing is said here: the first job that reads the new
    table is the first to know. ``config`` has the schema's defaults filled in; ``languages``:
    the language sheet's rows of the enabled corpora."""
    from pathlib import Path

    import polars as pl

    block = config.get("shannon") or {}
    limit = block.get("max_unit_chars")
    if limit is None or not block.get("corpora") or not block.get("bettors"):
        return
    for corpus in block["corpora"]:
        playing = sorted({r.language for r in languages
                          if r.corpus == corpus and r.language in block.get("languages", [])})
        path = units_of(corpus)
        if not playing or not Path(path).is_file() or (rebuilt and rebuilt(path)):
            continue
        split = evaluation_split(config, corpus)
        scan = pl.scan_parquet(path).filter(pl.col("language").is_in(playing))
        if split != "all":
            scan = scan.filter(pl.col("split") == split)
        try:
            lengths = (scan.group_by("language")
                       .agg(pl.col("text").str.len_chars().min().alias("shortest"))
                       .sort("language").collect())
        except (OSError, pl.exceptions.PolarsError):  # a damaged table: its job says so
            continue
        short = {row["language"]: row["shortest"] for row in lengths.iter_rows(named=True)
                 if row["shortest"] is not None and row["shortest"] > limit}
        if short:
            shortest = ", ".join(f"{lang} {n}" for lang, n in short.items())
            raise InputError(f"field 'shannon.max_unit_chars': {limit} characters is below the "
                             f"shortest {split} unit of {sorted(short)} in {path} ({shortest} "
                             f"characters), so the game's jobs of {', '.join(short)} would "
                             f"have no unit to bet on; expected at least "
                             f"{max(short.values())}, or null (no limit)",
                             path=source)


def check_language_lists(config: dict, source: str, languages: list,
                         published: list = ()) -> None:
    """The lists of language ids that the other checks do not hold against the language sheet
    (``languages``: all its rows, with ``corpus`` and ``language``), where the config gives them:
    ``word_ngram.languages_without_spaces`` names languages of the sheet (a misspelt id left the
    language it meant with a word sweep of whole clauses, without a word), and, with UniMorph
    on, ``morphology.unimorph.languages`` names languages the MCC table compares: rows of
    ``morphology.corpus`` or languages of the published MCC (``published``: their ids, from
    resources/published/mcc_cotterell2018.tsv; the tests count Spanish beside it). Any other id
    (``xyz``) planned the download of a lexicon that failed inside its job or was never
    compared. The other lists are checked elsewhere: ``neural.languages``
    (:func:`..settings.check_references`), ``marginal.languages`` and
    ``marginal.lengths.languages`` (:func:`check_marginal`), ``shannon.languages`` and
    ``shannon.pretrained_languages`` (:func:`check_shannon`), ``lemmas.neural_languages``
    (against neural.languages: :func:`check_lemma_models`); ``morphology.apertium_languages``
    against the Apertium analysers (:func:`check_morphology`), not the sheet: its counts are
    compared with the published MCC of languages outside the study too."""
    if not languages:
        return
    every = {row.language for row in languages}
    word = config.get("word_ngram") or {}
    for key in ("languages_without_spaces", "long_word_languages"):
        unknown = [lang for lang in word.get(key) or [] if lang not in every]
        if unknown:
            raise InputError(f"field 'word_ngram.{key}': {unknown} are no language of the "
                             f"language sheet, so the list would change nothing (misspelt?); "
                             f"expected ids among {sorted(every)}", path=source)
    block = config.get("morphology") or {}
    unimorph = block.get("unimorph") or {}
    if not unimorph.get("enabled"):
        return
    corpus = _setting(block, "morphology", "corpus")
    compared = {row.language for row in languages if row.corpus == corpus} | set(published)
    asked = unimorph.get("languages", DEFAULTS[("morphology.unimorph", "languages")])
    unknown = [lang for lang in asked if lang not in compared]
    if unknown:
        raise InputError(f"field 'morphology.unimorph.languages': {unknown} are neither languages "
                         f"of morphology.corpus {corpus!r} in the language sheet nor of the "
                         f"published MCC, so the MCC table would compare their lexicons with "
                         f"nothing (and a made-up id has none to download); expected ids among "
                         f"{sorted(compared)}", path=source)


def check_morphology(config: dict, source: str, analysers) -> None:
    """The `morphology` block (with the schema's defaults filled in): ``corpus`` is an enabled
    corpus that trains its own models (the morphology tables compare its models and its
    lemmatized copy), and every code of ``apertium_languages`` has an analyser in ``analysers``
    (:data:`fairppl.morphology.apertium.ANALYSERS`, passed in: this layer does not import it)."""
    block = config.get("morphology") or {}
    corpus = _setting(block, "morphology", "corpus")
    corpora = config.get("corpora", {})
    trains = [c for c in _enabled(config) if not corpora[c].get("models_from")]
    if corpus not in trains:
        why = ("names no corpus" if corpus not in corpora else
               "is not enabled" if not corpora[corpus].get("enabled") else
               f"takes its models from {corpora[corpus]['models_from']!r} "
               f"(corpora.{corpus}.models_from)")
        raise InputError(f"field 'morphology.corpus': {corpus!r} {why}; expected an enabled "
                         f"corpus that trains its own models, among {trains}", path=source)
    unknown = [lang for lang in block.get("apertium_languages", []) if lang not in analysers]
    if unknown:
        raise InputError(f"field 'morphology.apertium_languages': {unknown} have no Apertium "
                         f"analyser in fairppl.morphology.apertium.ANALYSERS; expected codes "
                         f"among {sorted(analysers)}", path=source)


def check_lemma_models(config: dict, source: str, retrained: list) -> None:
    """The lemmatized control compares a model retrained on a lemmatized corpus with the same
    model of the unlemmatized one: the Transformer over characters of each language in
    ``retrained`` (:func:`fairppl.morphology.lemmatize.lemma_neural_languages`, passed in: this
    layer does not import it) is retrained on ``<corpus>-lemmas`` for each corpus of
    ``lemmas.corpora`` that trains models, so its unlemmatized twin must be trained too: ``char``
    in ``neural.tokenizers``, the language in ``neural.languages`` and the corpus in
    ``neural.corpora``. Otherwise the lemmatized model would have nothing to be compared with."""
    block = config.get("lemmas") or {}
    corpora = config.get("corpora", {})
    training = [corpus for corpus in block.get("corpora") or []
                if corpus in corpora and not corpora[corpus].get("models_from")]
    if not training or not retrained:
        return
    neural = config.get("neural") or {}
    asked = block.get("neural_languages")
    field = "lemmas.neural_languages"
    chosen = (f"{field} {list(retrained)}" if asked is not None else
              f"{field} null: the neural.languages simplemma covers, {list(retrained)}")
    fix = f"or {field}: [] (no Transformer retrained on lemmas)"
    tokenizers = neural.get("tokenizers", [])
    if "char" not in tokenizers:
        raise InputError(f"field '{field}': the lemmatized control retrains the Transformers "
                         f"over characters ({chosen}), but neural.tokenizers {tokenizers} has "
                         f"no char, so no Transformer over characters of the unlemmatized text "
                         f"would be trained to compare them with; expected char in "
                         f"neural.tokenizers, {fix}", path=source)
    untrained = [lang for lang in retrained if lang not in neural.get("languages", [])]
    if untrained:
        raise InputError(f"field '{field}': {untrained} have no Transformer over characters of "
                         f"the unlemmatized text (not in neural.languages "
                         f"{neural.get('languages', [])}), so their lemmatized Transformers "
                         f"would have nothing to be compared with; expected ids among "
                         f"neural.languages, {fix}", path=source)
    missing = [corpus for corpus in training if corpus not in neural.get("corpora", [])]
    if missing:
        raise InputError(f"field '{field}': the Transformers over characters of {retrained} are "
                         f"retrained on the lemmatized {missing}, but neural.corpora "
                         f"{neural.get('corpora', [])} does not list {missing}, so no "
                         f"Transformer of the unlemmatized text would be trained to compare "
                         f"them with; expected {missing} in neural.corpora, {fix}", path=source)


def check_apertium_tools(config: dict, source: str, analysers, which=None) -> None:
    """Where the Apertium MCC source is on (``morphology.apertium_languages`` names languages;
    ``[]`` turns it off), what its jobs need where Snakemake runs them (``mcc_apertium`` is a
    local rule): ``lt-paradigm`` on PATH (Debian ``lttoolbox-dev``) and each language's analyser
    under ``morphology.apertium_dir`` (``analysers``: language -> (Debian package, file), as
    :data:`fairppl.morphology.apertium.ANALYSERS`). Refused at start-up naming every missing
    piece, the packages that provide it and the switch that leaves the source out. ``which``
    (default :func:`shutil.which`) finds a program."""
    import shutil
    from pathlib import Path

    which = which or shutil.which
    block = config.get("morphology") or {}
    languages = _setting(block, "morphology", "apertium_languages")
    if not languages:
        return
    root = Path(_setting(block, "morphology", "apertium_dir"))
    missing, packages = [], []
    if which("lt-paradigm") is None:
        missing.append("lt-paradigm is not on PATH")
        packages.append("lttoolbox-dev")
    absent = [lang for lang in languages if lang in analysers
              and not (root / analysers[lang][0] / analysers[lang][1]).is_file()]
    if absent:
        where = (f"{root} does not exist" if not root.is_dir() else
                 f"{root} lacks " + ", ".join(f"{analysers[lang][0]}/{analysers[lang][1]}"
                                              for lang in absent))
        missing.append(f"the analysers of {', '.join(absent)} ({where})")
        packages += sorted({analysers[lang][0] for lang in absent})
    if missing:
        raise InputError(
            f"field 'morphology.apertium_languages': the Apertium MCC source is on "
            f"({', '.join(languages)}) but {'; '.join(missing)}: expected the Debian packages "
            f"{' '.join(packages)} (`make setup` installs them where it can run apt-get; set "
            f"morphology.apertium_dir if they lie elsewhere), or `apertium_languages: []` to "
            f"leave the Apertium source out (the report then names the MCC sources it used)",
            path=source)


def _shannon_notes(config: dict, languages: list, models: list) -> list[str]:
    block = config.get("shannon") or {}
    if not block.get("corpora"):
        return []
    rows = [r for r in languages
            if r.corpus in block["corpora"] and r.language in block.get("languages", [])]
    if not rows:
        return ["The Shannon game has no language (shannon.languages names none of the rows of "
                f"{', '.join(block['corpora'])}): no table, figure or report section."]
    notes = []
    bettors = set(block.get("bettors", []))
    neural = config.get("neural") or {}
    if "transformer" in bettors and not any(
            train_corpus(config, r.corpus) in neural.get("corpora", [])
            and r.language in neural.get("languages", []) for r in rows):
        notes.append("shannon.bettors lists transformer, but no language of the game has a "
                     "Transformer (neural.languages, neural.corpora): it bets nowhere.")
        bettors.discard("transformer")
    if "pretrained" in bettors:
        chosen, named = block.get("pretrained_languages"), block.get("pretrained_models")
        playing = [m for m in models if named is None or m.model in named]
        if not any(_covers(m, r.corpus, r.language) for m in playing for r in rows
                   if chosen is None or r.language in chosen):
            notes.append("shannon.bettors lists pretrained, but no model of the model sheet "
                         "bets (the sheet has no row for the game's languages in "
                         "shannon.pretrained_languages): it bets nowhere.")
            bettors.discard("pretrained")
    if not bettors:
        why = ("shannon.bettors is empty" if not block.get("bettors") else
               "no bettor of shannon.bettors bets on a language of the game")
        players = " and the players' bets of shannon.players are not scored" * bool(
            block.get("players"))
        notes.append(f"The Shannon game has no bettor ({why}): no table, figure or report "
                     f"section{players} (shannon.corpora: [] is the switch that turns the game "
                     f"off).")
        return notes
    limits = [("the word bettors", "max_units", {"kenlm-word", "bigram"}),
              ("the Transformers", "neural_max_units", {"transformer"}),
              ("the pretrained LMs", "pretrained_max_units", {"pretrained"})]
    for who, key, kinds in limits:
        units = block.get(key)
        above = [n for n in block.get("n_t", []) if units is not None and n > units]
        if not kinds & bettors:
            continue
        if above:
            notes.append(f"shannon.n_t {', '.join(map(str, above))} exceed{'s' * (len(above) == 1)}"
                         f" shannon.{key} {units}: the randomized rows of {who} for "
                         f"{'it' if len(above) == 1 else 'them'} are empty.")
    return notes


def _marginal_notes(config: dict, languages: list, models: list) -> list[str]:
    block = config.get("marginal") or {}
    if not block.get("corpora"):
        return []
    chosen = block.get("languages")
    rows = [r for r in languages if r.corpus in block["corpora"]
            and (chosen is None or r.language in chosen)]
    if not rows:
        return ["The marginal stage has no language (marginal.languages names none of the rows "
                f"of {', '.join(block['corpora'])}): no table or report section."]
    notes = []
    neural = config.get("neural") or {}
    unigram = [t for t in neural.get("tokenizers", []) if t.startswith("spm-unigram-")]
    has_lm = unigram and any(train_corpus(config, r.corpus) in neural.get("corpora", [])
                             and r.language in neural.get("languages", []) for r in rows)
    lm, caching = block.get("lm") or {}, block.get("caching") or {}
    if not has_lm and caching.get("n_documents"):
        notes.append("marginal.caching asks for documents, but no language of the stage has a "
                     "Transformer over unigram pieces (spm-unigram-<size> in neural.tokenizers, "
                     "the language in neural.languages): the caching analysis is empty.")
    if not has_lm and lm.get("lattice_estimators"):
        notes.append("marginal.lm.lattice_estimators run on the Transformers over unigram pieces "
                     "only, and no language of the stage has one: they run nowhere.")
    least = block.get("min_units", 20)
    scored = any(_covers(m, r.corpus, r.language) for m in models for r in rows)
    sizes = [("the Transformers", "max_units", has_lm),
             ("the pretrained LMs", "pretrained_max_units", scored and lm.get("estimators"))]
    for who, key, present in sizes:
        units = lm.get(key)
        if present and units is not None and units < least:
            notes.append(f"marginal.lm.{key} {units} is below marginal.min_units {least}: the "
                         f"rows of {who} are shown without intervals.")
    return notes


def _lemma_notes(config: dict) -> list[str]:
    block = config.get("lemmas") or {}
    if not block.get("corpora") or block.get("char_ngram", True):
        return []
    asked = block.get("neural_languages")
    if asked == [] or (asked is None and not (config.get("neural") or {}).get("languages")):
        return ["lemmas.corpora are lemmatized, but no model is retrained on them "
                "(lemmas.char_ngram is false and there is no lemmas.neural_languages): the "
                "lemmatized control has no scores."]
    return []


def stage_notes(config: dict, languages: list, models: list) -> list[str]:
    """Sentences saying where valid settings leave a stage, a bettor or an analysis empty (the
    config with the schema's defaults; ``languages``: the language sheet's rows of the enabled
    corpora; ``models``: the model sheet's rows). Empty when nothing is left out."""
    return (_shannon_notes(config, languages, models) + _marginal_notes(config, languages, models)
            + _lemma_notes(config))
