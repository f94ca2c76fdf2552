"""`fairppl marginal`: records in input order equal to the library's, resumable output, the
start/end options, KenLM input, errors with file and line (exit status 2), one real SmolLM2
run."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from marginal_data import sentences, train_piece_ngram  # noqa: E402

from fairppl.cli.app import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"
WORDS = "der die das und ist Gott Himmel Erde Wasser sah gut Licht Tag Nacht war".split()


def _sentences(n: int, seed: int) -> list[str]:
    return sentences(n, seed, WORDS, longest=10)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A saved tiny random Llama over a unigram model trained here: (folder, .model file)."""
    from fairppl.neural import NeuralConfig, build_model, save_lm, special_ids_of
    from fairppl.tokenizers import train_sentencepiece, vocab_size
    from fairppl.tokenizers.convert import to_hf_tokenizer

    work = tmp_path_factory.mktemp("cli_marginal")
    train_sentencepiece(_sentences(200, 3), "unigram", 300, str(work / "spm"),
                        allow_reduction=True)
    tok = to_hf_tokenizer(str(work / "spm.model"))
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=64, seed=3)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    save_lm(model, tok, work / "lm")
    return work / "lm", work / "spm.model"


def _texts(tmp_path, lines) -> str:
    path = tmp_path / "texts.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def _read(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_records_in_input_order_equal_the_library(tiny_dir, tmp_path):
    from fairppl.core.runner import document_rng
    from fairppl.lm.cache import load_lm
    from fairppl.marginal import api
    from fairppl.marginal.unigram import UnigramModel
    from fairppl.marginal.vocab import vocab_from_hf
    from fairppl.tokenlm.lm_hf import HFTokenLM

    folder, spm = tiny_dir
    lines = ["Gott sah", "und das Licht war gut", "Tag"]
    out = tmp_path / "o.jsonl"
    argv = ["marginal", "--model", str(folder), "--texts", _texts(tmp_path, lines),
            "--estimator", "wr", "-K", "7", "--unigram-model", str(spm), "--tau", "5",
            "--seed", "4", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    recs = _read(out)
    assert [r["text"] for r in recs] == lines and [r["id"] for r in recs] == ["1", "2", "3"]
    assert not Path(str(out) + ".part").exists()
    model, tok = load_lm(folder, device="cpu")
    lm = HFTokenLM(model, tok)
    again = api.estimate(lm, vocab_from_hf(tok), lines[1], "wr", rng=document_rng(4, "2"),
                         default_ids=tok(lines[1], add_special_tokens=False)["input_ids"],
                         K=7, tau=5.0, unigram_model=UnigramModel.from_file(spm),
                         start_token=tok.bos_token)
    for key in ("logp", "logp_default", "ci_low", "ci_high", "n_distinct", "start_token"):
        assert recs[1][key] == pytest.approx(again[key], abs=1e-9), key
    assert recs[1]["start_token"] == "<s>" and recs[1]["end_scored"] is True

    # a rerun after a kill: the finished lines are read back, not recomputed
    part = Path(str(out) + ".part")
    part.write_text(json.dumps({**recs[0], "logp": -1.0}) + "\n", encoding="utf-8")
    assert main(argv) == 0
    resumed = _read(out)
    drop = lambda r: {k: v for k, v in r.items() if k != "seconds"}  # noqa: E731
    assert resumed[0]["logp"] == -1.0
    assert [drop(r) for r in resumed[1:]] == [drop(r) for r in recs[1:]]


def test_no_eos_and_bos_change_the_conventions(tiny_dir, tmp_path):
    folder, spm = tiny_dir
    texts = _texts(tmp_path, ["Gott sah"])
    got = {}
    for name, extra in (("plain", []), ("noeos", ["--no-eos"]), ("bos", ["--bos", "</s>"])):
        out = tmp_path / f"{name}.jsonl"
        assert main(["marginal", "--model", str(folder), "--texts", texts, "--estimator",
                     "exact", "--out", str(out), "--quiet", *extra]) == 0
        got[name] = _read(out)[0]
    assert got["plain"]["end_scored"] and not got["noeos"]["end_scored"]
    assert got["noeos"]["logp"] != got["plain"]["logp"]
    assert got["bos"]["start_token"] == "</s>" and got["plain"]["start_token"] == "<s>"
    assert got["bos"]["logp"] != got["plain"]["logp"]
    assert got["plain"]["n_tokenizations"] >= 2 and got["plain"]["ci_low"] == got["plain"]["logp"]


def test_model_sheet_start_token_unless_bos_given(tiny_dir, tmp_path):
    """A folder that is a sheet model's gets the sheet's bos; --bos overrides it; another
    folder keeps the tokenizer's BOS."""
    folder, _ = tiny_dir
    sheet = tmp_path / "models.tsv"
    sheet.write_text("model\tsource\tspec\tcorpora\tlanguages\tdescription\tbos\teos\n"
                     f"tiny\tpath\t{folder}\tbible\teng\ttiny\t</s>\t</s>\n", encoding="utf-8")
    texts = _texts(tmp_path, ["Gott sah"])
    got = {}
    for name, extra in (("sheet", []), ("override", ["--bos", "<s>"]),
                        ("nosheet", ["--models-sheet", str(tmp_path / "absent.tsv")])):
        out = tmp_path / f"{name}.jsonl"
        assert main(["marginal", "--model", str(folder), "--texts", texts, "--estimator",
                     "default", "--out", str(out), "--quiet", "--models-sheet", str(sheet),
                     *extra]) == 0
        got[name] = _read(out)[0]
    assert got["sheet"]["start_token"] == "</s>"
    assert got["override"]["start_token"] == "<s>" and got["nosheet"]["start_token"] == "<s>"
    assert got["sheet"]["logp"] != got["override"]["logp"]
    assert got["override"]["logp"] == got["nosheet"]["logp"]


def test_kenlm_model_with_its_pieces(tiny_dir, tmp_path, resources_ready):
    from fairppl.marginal.lattice import enumerate_paths
    from fairppl.marginal.vocab import vocab_from_sentencepiece

    _, spm = tiny_dir
    train_piece_ngram(tmp_path, spm, _sentences(200, 3))
    texts = _texts(tmp_path, ["Gott sah", "das Licht"])
    recs = {}
    for est in ("exact", "nbest", "default", "decoding-free"):
        out = tmp_path / f"{est}.jsonl"
        assert main(["marginal", "--model", str(tmp_path / "m.kenlm"), "--unigram-model",
                     str(spm), "--texts", texts, "--estimator", est, "-K", "4", "--slack", "3",
                     "--out", str(out), "--quiet"]) == 0
        recs[est] = _read(out)
    vocab = vocab_from_sentencepiece(spm)
    for k, text in enumerate(["Gott sah", "das Licht"]):
        n = len(enumerate_paths(vocab.lattice(vocab.text_bytes(text)), 10 ** 6))
        assert recs["exact"][k]["n_tokenizations"] == n and recs["exact"][k]["start_token"] == "<s>"
        assert recs["default"][k]["logp"] <= recs["nbest"][k]["logp"] <= \
            recs["exact"][k]["logp"] + 1e-9
        free = recs["decoding-free"][k]
        assert recs["default"][k]["logp"] - 1e-9 <= free["logp"] <= recs["exact"][k]["logp"] + 1e-9
        assert free["lower_bound"] is True and free["slack"] == 3 and free["ci_low"] is None
        # 2 default tokens; the next shortest paths have 5 (no off-by-one): 4 distinct under 5
        assert free["n_distinct"] == 4 and free["n_tokenizations"] == n


@pytest.mark.parametrize("case, expected", [
    ("missing", r"nope.txt: no such file"),
    ("empty_line", r"texts.txt, line 2: empty unit"),
    ("estimator", r"unknown estimator 'mcmc': expected one of default, exact"),
    ("K", r"-K=0: expected at least 1"),
    ("slack", r"--slack=-1: expected a number of tokens >= 0"),
    ("bos", r"--bos: start token '<nope>' is not in the tokenizer's vocabulary"),
    ("unigram_only", r"estimator 'wr' .*\(--unigram-model FILE.model\)"),
    ("too_long", r"texts.txt, line 1: .*tokenizations .* exceed max_paths=3"),
])
def test_errors_name_file_and_line(tiny_dir, tmp_path, capsys, case, expected):
    folder, _ = tiny_dir
    texts = _texts(tmp_path, ["Gott sah", "  ", "Tag"] if case == "empty_line" else ["Gott sah"])
    argv = {"missing": ["--texts", str(tmp_path / "nope.txt"), "--estimator", "exact"],
            "empty_line": ["--texts", texts, "--estimator", "exact"],
            "estimator": ["--texts", texts, "--estimator", "mcmc"],
            "K": ["--texts", texts, "--estimator", "exact", "-K", "0"],
            "slack": ["--texts", texts, "--estimator", "decoding-free", "--slack", "-1"],
            "bos": ["--texts", texts, "--estimator", "exact", "--bos", "<nope>"],
            "unigram_only": ["--texts", texts, "--estimator", "wr"],
            "too_long": ["--texts", texts, "--estimator", "exact", "--max-paths", "3"]}[case]
    code = main(["marginal", "--model", str(folder), "--out", str(tmp_path / "o.jsonl"),
                 "--quiet", *argv])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after transformers' load bar
    assert err.startswith("error: ")
    assert re.search(expected, err), err


@pytest.mark.skipif(not (SMOLLM2 / "model.safetensors").exists(),
                    reason=f"SmolLM2 weights absent at {SMOLLM2} (make resources)")
@pytest.mark.pretrained
def test_smollm2_exact_on_two_short_lines(tmp_path):
    out = tmp_path / "smol.jsonl"
    texts = _texts(tmp_path, ["Amen.", "Jesus wept."])
    assert main(["marginal", "--model", str(SMOLLM2), "--texts", texts, "--estimator", "exact",
                 "--out", str(out), "--quiet"]) == 0
    recs = _read(out)
    assert [r["text"] for r in recs] == ["Amen.", "Jesus wept."]
    for r in recs:
        # the model sheet's start token (config/models.tsv), not the tokenizer's <|im_start|>
        assert r["start_token"] == "<|endoftext|>"
        assert math.isfinite(r["logp"]) and r["logp_default"] <= r["logp"] + 1e-6
        assert r["n_tokenizations"] >= 6 and r["n_tokens"] <= 5
    print("\n" + json.dumps(recs[0]))
    assert np.isfinite([r["seconds"] for r in recs]).all()
