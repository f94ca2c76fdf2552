"""The study config: YAML syntax, schema (unknown keys everywhere), split, corpus ids and
cross-references, each refused with a message naming the file, the key and what was expected."""

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from fairppl.core.errors import InputError
from fairppl.config.settings import (
    check_config,
    check_references,
    check_shannon,
    check_yaml_syntax,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
SOURCE = "config/config.yaml"


@dataclass
class Row:
    corpus: str
    language: str


def load(which="tests"):
    path = ROOT / ("tests/config" if which == "tests" else "config") / "config.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


ROWS = [Row(c, lang) for c in ("bible", "udhr") for lang in ("eng", "tur", "kor")]


@pytest.mark.parametrize("which", ["tests", "default"])
def test_shipped_configs_pass(which):
    config = load(which)
    check_config(config, SCHEMA, SOURCE)
    check_yaml_syntax(str(ROOT / ("tests/config" if which == "tests" else "config") / "config.yaml"))


def check(edit):
    config = copy.deepcopy(load())
    edit(config)
    check_config(config, SCHEMA, SOURCE)
    check_references(config, ROWS, SOURCE)
    check_shannon(config, SOURCE, ROWS, ["tiny-random"])


@pytest.mark.parametrize(
    "edit, expected",
    [
        # Misspelt keys in a corpus block were ignored: the study ran on the whole Bible.
        (lambda c: c["corpora"]["bible"].update(book=[8]),
         "field 'corpora.bible.book': unknown key(s) ['book'] in block 'corpora.bible' "
         "(misspelt?); expected keys among ['books', "),
        (lambda c: c["corpora"]["udhr"].update(placeholder_pattern=[]),
         "field 'corpora.udhr.placeholder_pattern': unknown key(s) ['placeholder_pattern'] in "
         "block 'corpora.udhr'"),
        (lambda c: c["neural"].update(step=5), "unknown key(s) ['step'] in block 'neural'"),
        (lambda c: c["evaluation"].update(splits="dev"),
         "unknown key(s) ['splits'] in block 'evaluation'"),
        (lambda c: c.update(colour="blue"), "field 'colour': unknown key(s) ['colour'] in the top "
                                            "level"),
        # The keys that moved out of char_ngram are refused there.
        (lambda c: c["char_ngram"].update(eval_split="test"),
         "unknown key(s) ['eval_split'] in block 'char_ngram'"),
        (lambda c: c["char_ngram"].update(discount_fallback=True),
         "unknown key(s) ['discount_fallback'] in block 'char_ngram'"),
        (lambda c: c["evaluation"].update(split="train"), "field 'evaluation.split': 'train' is "
                                                          "not one of ['dev', 'test']"),
        (lambda c: c["kenlm"].update(discount_fallback="yes"),
         "field 'kenlm.discount_fallback': 'yes' is not of type 'boolean'"),
        (lambda c: c["split"].update(dev=[1, 15], test=[16, 30]),
         "field 'split': dev [1, 15] and test [16, 30] cover all 30 positions of a block, leaving "
         "no train units"),
        (lambda c: c["split"].update(dev=[1, 8], test=[6, 10]),
         "field 'split': dev [1, 8] and test [6, 10] overlap"),
        (lambda c: c["split"].update(test=[26, 31]),
         "field 'split.test': [26, 31] is not a range of block positions; expected 1 <= first <= "
         "last <= split.block_size (30)"),
        (lambda c: c["split"].update(dev=[5, 1]), "field 'split.dev': [5, 1] is not a range"),
        (lambda c: c["word_ngram"].update(corpora=["bibel"]),
         "field 'word_ngram.corpora': ['bibel'] name no corpus; expected ids among ['bible', "
         "'udhr']"),
        (lambda c: c["subword_ngram"].update(corpora=["bible", "wiki"]),
         "field 'subword_ngram.corpora': ['wiki'] name no corpus"),
        (lambda c: c["tokenizers"].update(corpora=["udhr", "flores"]),
         "field 'tokenizers.corpora': ['flores'] name no corpus"),
        (lambda c: c["neural"].update(corpora=["nope"]), "field 'neural.corpora': ['nope'] name "
                                                         "no corpus"),
        (lambda c: c["word_ngram"].update(order=8), "8 is greater than the maximum of 7"),
        (lambda c: c["kenlm"].update(max_order=4), "field 'char_ngram.orders': order 5 exceeds "
                                                   "kenlm.max_order 4"),
        (lambda c: (c["char_ngram"].update(orders=[2]), c["kenlm"].update(max_order=2))[0],
         "field 'word_ngram.order': order 3 exceeds kenlm.max_order 2"),
        (lambda c: c["neural"].update(languages=["eng", "deu"]),
         "field 'neural.languages': ['deu'] have no row for corpus 'bible' in the language sheet"),
        (lambda c: c["subword_ngram"].update(tokenizers=["spm-bpe-4000"]),
         "field 'subword_ngram.tokenizers': ['spm-bpe-4000'] are not trained; expected ids among "
         "['spm-unigram-3000', 'spm-bpe-3000']"),
        (lambda c: (c["tokenizers"].update(types=["bpe"]),)[0],
         "field 'subword_ngram.tokenizers': ['spm-unigram-3000'] are not trained"),
        (lambda c: c["neural"].update(tokenizers=["char", "spm-unigram-999"]),
         "field 'neural.tokenizers': ['spm-unigram-999'] are not trained"),
        (lambda c: c["tokenizers"].update(corpora=["udhr"]),
         "field 'subword_ngram.corpora': ['bible'] get no tokenizers"),
        # the Shannon game's block
        (lambda c: c["shannon"].update(languages=["eng", "deu"]),
         "field 'shannon.languages': ['deu'] have no row for the corpora ['bible']"),
        (lambda c: c["word_ngram"].update(languages_without_spaces=["kor"]),
         "field 'shannon.languages': ['kor'] are written without spaces"),
        (lambda c: c["shannon"].update(vocab_size=200),
         "field 'shannon.vocab_size': 200 is not one of word_ngram.vocab_sizes [100, 500, 'all']"),
        (lambda c: c["shannon"].update(list_lengths=[1, 102]),
         "field 'shannon.list_lengths': [102] are not below m = vocab_size + 2 = 102"),
        (lambda c: c["shannon"].update(pretrained_models=["gpt-5"]),
         "field 'shannon.pretrained_models': ['gpt-5'] are not models of the model sheet"),
        (lambda c: c["corpora"]["bible"].update(enabled=False),
         "field 'shannon.corpora': ['bible'] are not enabled corpora"),
    ],
)
def test_bad_config_is_refused(edit, expected):
    with pytest.raises(InputError) as err:
        check(edit)
    message = str(err.value)
    assert message.startswith(f"{SOURCE}: ") and expected in message, message


def test_neural_char_only_needs_no_tokenizers():
    check(lambda c: (c["tokenizers"].update(corpora=[]), c["subword_ngram"].update(corpora=[]),
                     c["neural"].update(tokenizers=["char"])))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("split:\n  block_size: 30\n  dev: [1, 5\n  test: [6, 10]\n",
         "config.yaml, line 4: YAML syntax error (column 7): expected ',' or ']', but got ':' "
         "(while parsing a flow sequence that starts on line 3, column 8)"),
        ("split:\n\tblock_size: 30\n", "config.yaml, line 2: YAML syntax error (column 1): found "
                                       "character '\\t' that cannot start any token"),
        ("corpora:\n  bible: {enabled: true}\nsplit: {}\ncorpora: {}\n",
         "config.yaml, line 4: key 'corpora' is given twice in one mapping (first on line 1)"),
        ("- languages\n", "config.yaml: the top level is a list; expected a mapping"),
    ],
)
def test_yaml_errors_name_file_and_line(tmp_path, text, expected):
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        check_yaml_syntax(str(path))
    assert str(err.value).startswith(str(tmp_path)) and expected in str(err.value), str(err.value)
