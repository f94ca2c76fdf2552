"""Which corpus trains the models scored on a corpus, and which of its units are scored.

A corpus is either a *training* corpus (its train split trains the study's models, its evaluation
split is scored) or an *evaluation-only* corpus (``models_from: <corpus>`` in its config block):
nothing is trained on it, and the models trained on the named corpus are scored on it, language by
language (same language id), together with the pretrained LMs that list it. The UDHR is one: its
20 training units cannot train a model, but its 31 units are a small second-domain check of models
trained on the Bible.

A *derived* corpus ``<corpus>-lemmas`` (``bible-lemmas``) is the lemmatized copy of a configured
corpus listed in the config's ``lemmas.corpora`` (written by the rule ``lemmatize_corpus``,
:mod:`fairppl.morphology.lemmatize`): it has no config block of its own and takes every setting of
its base corpus (:func:`corpus_settings`), so the existing training and scoring rules run on it
unchanged; its models are trained on its own train split (or, for an evaluation-only base, on the
lemmatized copy of the corpus the base takes its models from). The suffix is reserved: a config
key ending in it is refused (:func:`check_derived_corpora`).
"""

from __future__ import annotations

from ..core.errors import InputError

#: The config lists that name corpora on which models are trained.
TRAINING_LISTS = ("tokenizers", "word_ngram", "subword_ngram", "neural")


#: Suffix of a derived lemmatized corpus: ``bible-lemmas`` is the lemmatized ``bible``.
LEMMA_SUFFIX = "-lemmas"


def lemma_corpora(config: dict) -> list[str]:
    """The base corpora whose lemmatized copies the config asks for (``lemmas.corpora``)."""
    return list((config.get("lemmas") or {}).get("corpora") or [])


def derived_corpora(config: dict) -> list[str]:
    """Names of the derived lemmatized corpora (``bible-lemmas``, ...)."""
    return [f"{corpus}{LEMMA_SUFFIX}" for corpus in lemma_corpora(config)]


def base_corpus(config: dict, corpus: str) -> str:
    """The configured corpus behind ``corpus``: itself, or the base of a derived corpus listed in
    ``lemmas.corpora``. InputError for any other name."""
    if corpus in config["corpora"]:
        return corpus
    if corpus.endswith(LEMMA_SUFFIX):
        base = corpus[: -len(LEMMA_SUFFIX)]
        if base in lemma_corpora(config) and base in config["corpora"]:
            return base
    raise InputError(f"{corpus!r} names no corpus: expected a key of `corpora` "
                     f"({', '.join(sorted(config['corpora']))}) or a derived corpus of "
                     f"lemmas.corpora ({', '.join(derived_corpora(config)) or 'none'})")


def corpus_settings(config: dict, corpus: str) -> dict:
    """The config block of ``corpus``; a derived corpus has its base corpus's."""
    return config["corpora"][base_corpus(config, corpus)]


def train_corpus(config: dict, corpus: str) -> str:
    """The corpus whose train split trains the models scored on ``corpus`` (itself unless the
    corpus is evaluation-only; the lemmatized copy of that corpus for a derived corpus)."""
    base = base_corpus(config, corpus)
    train = config["corpora"][base].get("models_from") or base
    return train if base == corpus else f"{train}{LEMMA_SUFFIX}"


def evaluation_split(config: dict, corpus: str) -> str:
    """The split of ``corpus`` whose units are scored: the corpus's own ``eval_split`` if set,
    else the study-wide ``evaluation.split``. ``all`` means every unit."""
    return corpus_settings(config, corpus).get("eval_split") or config["evaluation"]["split"]


def check_derived_corpora(config: dict, source: str = "config") -> None:
    """Refuse a config key of ``corpora`` ending in the reserved ``-lemmas``, and a
    ``lemmas.corpora`` entry naming no corpus, a disabled corpus, or an evaluation-only corpus
    whose model corpus is not lemmatized too (its lemmatized copy would have no models)."""
    corpora = config["corpora"]
    for name in corpora:
        if name.endswith(LEMMA_SUFFIX):
            raise InputError(f"corpora.{name}: the suffix {LEMMA_SUFFIX!r} is reserved for the "
                             f"lemmatized copies of the corpora of lemmas.corpora; expected "
                             f"another corpus id", path=source)
    wanted = lemma_corpora(config)
    for name in wanted:
        if name not in corpora:
            raise InputError(f"field 'lemmas.corpora': {name!r} names no corpus: expected ids "
                             f"among {sorted(corpora)}", path=source)
        if not corpora[name].get("enabled", True):
            raise InputError(f"field 'lemmas.corpora': corpus {name!r} is not enabled: expected "
                             f"enabled corpora", path=source)
        train = corpora[name].get("models_from")
        if train and train not in wanted:
            raise InputError(f"field 'lemmas.corpora': {name!r} takes its models from {train!r}, "
                             f"which is not lemmatized: expected {train!r} in lemmas.corpora "
                             f"too", path=source)


def check_evaluation_corpora(config: dict, source: str = "config") -> None:
    """Refuse an evaluation-only corpus that cannot work: ``models_from`` naming no corpus, a
    disabled corpus or another evaluation-only corpus, and an evaluation-only corpus listed where
    models are trained on it (``tokenizers.corpora``, ``word_ngram.corpora``, ...); and an
    enabled corpus that trains its own models with ``eval_split`` train or all (its models would
    be scored on the units they were trained on)."""
    corpora = config["corpora"]
    for name, spec in corpora.items():
        source_corpus = spec.get("models_from")
        split = spec.get("eval_split")
        if not source_corpus and spec.get("enabled", True) and split in ("train", "all"):
            among = "" if split == "train" else "among others "
            raise InputError(f"field 'corpora.{name}.eval_split': {split!r} scores {among}the "
                             f"train units of {name!r}, on which its own models are trained, so "
                             f"every score of it would be a score on training data; expected "
                             f"test or dev (or null: evaluation.split), or models_from: <corpus> "
                             f"for an evaluation-only corpus, whose models are trained elsewhere",
                             path=source)
        if not source_corpus:
            continue
        where = f"corpora.{name}.models_from"
        if source_corpus not in corpora:
            raise InputError(f"{where}: {source_corpus!r} names no corpus: expected one of "
                             f"{', '.join(sorted(corpora))}", path=source)
        if source_corpus == name:
            raise InputError(f"{where}: a corpus cannot take its models from itself: expected "
                             f"another corpus, or null", path=source)
        if spec.get("enabled") and not corpora[source_corpus].get("enabled"):
            raise InputError(f"{where}: corpus {source_corpus!r} is not enabled: expected an "
                             f"enabled corpus whose train split trains the models", path=source)
        if corpora[source_corpus].get("models_from"):
            raise InputError(f"{where}: corpus {source_corpus!r} is itself evaluation-only: "
                             f"expected a corpus that trains models", path=source)
        for block in TRAINING_LISTS:
            if name in config.get(block, {}).get("corpora", []):
                raise InputError(f"{block}.corpora lists {name!r}, an evaluation-only corpus "
                                 f"(models_from: {source_corpus}): expected only corpora that "
                                 f"train models", path=source)


def check_evaluation_languages(config: dict, languages: list, models: list, path: str,
                               models_path: str = "the model sheet") -> None:
    """Refuse a language sheet row (``path``, its ``line``) of an enabled evaluation-only corpus
    that no model would score: the corpus of ``models_from`` has no row of its language (so none
    of the study's models is trained for it) and no row of the model sheet (``models``: rows with
    ``corpora`` and ``languages``, ``all`` for every language) lists that corpus and language.
    Without this check such a row was prepared and then silently left out of every table."""
    trained = {(row.corpus, row.language) for row in languages}
    for row in languages:
        spec = config["corpora"].get(row.corpus, {})
        source = spec.get("models_from")
        if not source or not spec.get("enabled", True) or (source, row.language) in trained:
            continue
        if any(row.corpus in m.corpora and (row.language in m.languages or "all" in m.languages)
               for m in models):
            continue
        raise InputError(f"language {row.language!r} of the evaluation-only corpus "
                         f"{row.corpus!r} has no model to score it: corpus {row.corpus!r} takes "
                         f"its models from {source!r} (corpora.{row.corpus}.models_from), which "
                         f"has no {row.language!r} row, and no row of {models_path} lists "
                         f"{row.corpus} and {row.language}; expected a {source!r} row for "
                         f"{row.language!r} (its models are then trained), a model sheet row "
                         f"scoring it, or no {row.corpus!r} row for {row.language!r}",
                         path=path, line=row.line)
