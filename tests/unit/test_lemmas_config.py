"""The lemmatized control's config without Snakemake: a derived corpus (`bible-lemmas`) takes its
base corpus's settings, its errors, and the neural languages on lemmas. The workflow's runs:
tests/workflow/test_lemmas_workflow.py."""

import pytest

from fairppl.config.design import (
    base_corpus,
    check_derived_corpora,
    corpus_settings,
    derived_corpora,
    evaluation_split,
    train_corpus,
)
from fairppl.core.errors import InputError
from fairppl.morphology.lemmatize import check_lemma_config, lemma_neural_languages


def _config(lemmas=("bible",)):
    return {
        "corpora": {
            "bible": {"enabled": True, "books": [8]},
            "udhr": {"enabled": True, "models_from": "bible", "eval_split": "all"},
        },
        "evaluation": {"split": "test"},
        "neural": {"languages": ["eng", "zho", "deu"]},
        "lemmas": {"corpora": list(lemmas), "char_ngram": True, "neural_languages": None},
    }


def test_derived_corpus_takes_its_base_settings():
    config = _config(["bible", "udhr"])
    assert derived_corpora(config) == ["bible-lemmas", "udhr-lemmas"]
    assert base_corpus(config, "bible-lemmas") == "bible"
    assert base_corpus(config, "bible") == "bible"
    assert corpus_settings(config, "bible-lemmas") == {"enabled": True, "books": [8]}
    assert train_corpus(config, "bible-lemmas") == "bible-lemmas"
    assert evaluation_split(config, "bible-lemmas") == "test"
    # the lemmatized UDHR is scored by the models trained on the lemmatized Bible
    assert train_corpus(config, "udhr-lemmas") == "bible-lemmas"
    assert evaluation_split(config, "udhr-lemmas") == "all"
    assert train_corpus(config, "udhr") == "bible"
    check_derived_corpora(config)
    # a copy that lemmas.corpora does not ask for is no corpus
    with pytest.raises(InputError, match="'udhr-lemmas' names no corpus"):
        base_corpus(_config(["bible"]), "udhr-lemmas")
    with pytest.raises(InputError, match="'quran' names no corpus"):
        train_corpus(config, "quran")


def test_derived_corpus_config_errors():
    config = _config()
    config["corpora"]["bible-lemmas"] = {"enabled": True}
    with pytest.raises(InputError, match="corpora.bible-lemmas: the suffix '-lemmas' is reserved"):
        check_derived_corpora(config, "config.yaml")
    with pytest.raises(InputError, match="'lemmas.corpora': 'bibel' names no corpus"):
        check_derived_corpora(_config(["bibel"]))
    with pytest.raises(InputError, match="'udhr' takes its models from 'bible', which is not "
                                         "lemmatized"):
        check_derived_corpora(_config(["udhr"]))
    config = _config()
    config["corpora"]["bible"]["enabled"] = False
    with pytest.raises(InputError, match="corpus 'bible' is not enabled"):
        check_derived_corpora(config)


class Row:
    def __init__(self, corpus, language):
        self.corpus, self.language = corpus, language


def test_neural_languages_on_lemmas():
    rows = [Row("bible", lang) for lang in ("eng", "zho", "deu", "kor")]
    config = _config()
    # null: the neural block's languages simplemma covers (zho is not)
    assert lemma_neural_languages(config) == ["eng", "deu"]
    check_lemma_config(config, rows)
    config["lemmas"]["neural_languages"] = ["kor"]
    with pytest.raises(InputError, match="'kor' is not lemmatized .*no Korean dictionary"):
        check_lemma_config(config, rows)
    config["lemmas"]["neural_languages"] = ["fra"]
    with pytest.raises(InputError, match="'fra' has no row for corpus 'bible'"):
        check_lemma_config(config, rows)
