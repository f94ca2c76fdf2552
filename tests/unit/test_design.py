"""Evaluation-only corpora (models_from) and the evenly spaced unit subsets of scoring."""

import polars as pl
import pytest

from fairppl.corpus.readers import evenly_spaced, read_split
from fairppl.config.design import check_evaluation_corpora, evaluation_split, train_corpus
from fairppl.core.errors import InputError


def _config(**udhr):
    return {
        "corpora": {
            "bible": {"enabled": True},
            "udhr": {"enabled": True, "models_from": "bible", "eval_split": "all", **udhr},
        },
        "evaluation": {"split": "test"},
        "tokenizers": {"corpora": ["bible"]},
        "word_ngram": {"corpora": ["bible"]},
        "subword_ngram": {"corpora": ["bible"]},
        "neural": {"corpora": ["bible"]},
    }


def test_train_corpus_and_split():
    config = _config()
    assert train_corpus(config, "bible") == "bible"
    assert train_corpus(config, "udhr") == "bible"
    assert evaluation_split(config, "bible") == "test"
    assert evaluation_split(config, "udhr") == "all"
    check_evaluation_corpora(config)


@pytest.mark.parametrize("change, message", [
    ({"models_from": "quran"}, "'quran' names no corpus"),
    ({"models_from": "udhr"}, "cannot take its models from itself"),
])
def test_bad_models_from(change, message):
    with pytest.raises(InputError, match=message):
        check_evaluation_corpora(_config(**change), "config.yaml")


def test_models_from_a_disabled_corpus():
    config = _config()
    config["corpora"]["bible"]["enabled"] = False
    with pytest.raises(InputError, match="corpora.udhr.models_from: corpus 'bible' is not enabled"):
        check_evaluation_corpora(config)


def test_evaluation_only_corpus_cannot_train():
    config = _config()
    config["neural"]["corpora"] = ["bible", "udhr"]
    with pytest.raises(InputError, match="neural.corpora lists 'udhr', an evaluation-only corpus"):
        check_evaluation_corpora(config)


@pytest.mark.parametrize("split", ["train", "all"])
def test_a_training_corpus_is_not_scored_on_its_train_units(split):
    """`eval_split: train` (or `all`) on a corpus that trains its own models was accepted: every
    model would be scored on the units it was trained on."""
    config = _config()
    config["corpora"]["bible"]["eval_split"] = split
    with pytest.raises(InputError) as err:
        check_evaluation_corpora(config, "config.yaml")
    among = "" if split == "train" else "among others "
    assert str(err.value) == (
        f"config.yaml: field 'corpora.bible.eval_split': '{split}' scores {among}the train units "
        f"of 'bible', on which its own models are trained, so every score of it would be a score "
        f"on training data; expected test or dev (or null: evaluation.split), or models_from: "
        f"<corpus> for an evaluation-only corpus, whose models are trained elsewhere")
    config["corpora"]["bible"]["enabled"] = False  # not in the study: nothing scored
    config["corpora"]["udhr"]["enabled"] = False
    check_evaluation_corpora(config)
    for fine in ("dev", "test", None):  # and the UDHR's `all`: its models come from the Bible
        check_evaluation_corpora(_config() | {"corpora": {
            "bible": {"enabled": True, "eval_split": fine},
            "udhr": {"enabled": True, "models_from": "bible", "eval_split": "all"}}})


def test_evenly_spaced():
    assert evenly_spaced(10, 3) == [0, 3, 6]
    assert evenly_spaced(5, None) == [0, 1, 2, 3, 4]
    assert evenly_spaced(5, 9) == [0, 1, 2, 3, 4]
    picked = evenly_spaced(4915, 200)
    assert len(set(picked)) == 200 and picked[0] == 0 and picked[-1] == 199 * 4915 // 200
    with pytest.raises(InputError, match="max_units=0"):
        evenly_spaced(5, 0)


def test_read_split_subset_is_spread_and_aligned(tmp_path):
    rows = [
        {"corpus": "c", "unit_id": f"u{i:02d}", "position": i, "language": lang,
         "split": "test" if i % 2 else "train", "text": f"{lang} {i}"}
        for lang in ("eng", "deu") for i in range(20)
    ]
    path = tmp_path / "units.parquet"
    pl.DataFrame(rows).write_parquet(path)
    eng = read_split(str(path), "eng", "test", max_units=4)
    deu = read_split(str(path), "deu", "test", max_units=4)
    # 10 test units (odd positions); 4 spread evenly: indices 0, 2, 5, 7 -> positions 1, 5, 11, 15.
    assert eng["position"].to_list() == [1, 5, 11, 15]
    assert deu["unit_id"].to_list() == eng["unit_id"].to_list()
    assert read_split(str(path), "eng", "all").height == 20
