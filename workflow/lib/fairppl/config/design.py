"""Which corpus trains the models scored on a corpus, and which of its units are scored.

A corpus is either a *training* corpus (its train split trains the study's models, its evaluation
split is scored) or an *evaluation-only* corpus (``models_from: <corpus>`` in its config block):
nothing is trained on it, and the models trained on the named corpus are scored on it, language by
language (same language id), together with the pretrained LMs that list it. The UDHR is one: its
20 training units cannot train a model, but its 31 units are a small second-domain check of models
trained on the Bible.
"""

from __future__ import annotations

from ..core.errors import InputError

#: The config lists that name corpora on which models are trained.
TRAINING_LISTS = ("tokenizers", "word_ngram", "subword_ngram", "neural")


def train_corpus(config: dict, corpus: str) -> str:
    """The corpus whose train split trains the models scored on ``corpus`` (itself unless the
    corpus is evaluation-only)."""
    return config["corpora"][corpus].get("models_from") or corpus


def evaluation_split(config: dict, corpus: str) -> str:
    """The split of ``corpus`` whose units are scored: the corpus's own ``eval_split`` if set,
    else the study-wide ``evaluation.split``. ``all`` means every unit."""
    return config["corpora"][corpus].get("eval_split") or config["evaluation"]["split"]


def check_evaluation_corpora(config: dict, source: str = "config") -> None:
    """Refuse an evaluation-only corpus that cannot work: ``models_from`` naming no corpus, a
    disabled corpus or another evaluation-only corpus, and an evaluation-only corpus listed where
    models are trained on it (``tokenizers.corpora``, ``word_ngram.corpora``, ...)."""
    corpora = config["corpora"]
    for name, spec in corpora.items():
        source_corpus = spec.get("models_from")
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
