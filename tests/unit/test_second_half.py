"""Second-half bits as Goldfish define them (fairppl.lm.second_half) and the rank comparison with
their FLORES table (fairppl.lm.goldfish): checked against bits(whole) - bits(first half) where the
tokenization makes that exact, against a direct log-softmax on tiny random models (a character
tokenizer, and a byte-level BPE whose midpoints fall inside tokens), and on the real SmolLM2 with
the real FLORES archive and Goldfish table (../shared; a 3-code slice)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from fairppl.core.errors import InputError
from fairppl.lm.goldfish import (ANCHORS_FILE, read_goldfish, rank_comparison, sample_sentences,
                                 second_half_by_code, spearman_interval)
from fairppl.lm.second_half import first_half, score_second_halves
from fairppl.lm.scoring import score_texts
from test_scoring import make_model, make_tokenizer

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"
LINES = ["In the beginning God created the heaven and the earth.",
         "And the earth was without form, and void; and darkness was upon the deep.",
         "Jesus wept.", "ab", "a", "",
         "Numbers 12345 and 678, more words: the spirit moved upon the face of the waters."]
TOL_BITS = 1e-6


def bpe_tokenizer():
    """A byte-level BPE with merges (trained here, deterministic): whole words are single
    tokens, so a character midpoint often falls inside one."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(LINES * 5, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>", pad_token="<pad>")


def direct_second_half_bits(model, tokenizer, line: str, start_id: int,
                            max_tokens: int | None = None) -> float:
    """Goldfish's loop written out: one forward pass over start + the line's tokens but the last
    (Goldfish feed the last one too and drop its logits; a float32 forward over another length
    rounds differently, by ~1e-6 nats), float32 log-softmax (the scorer's stated precision), the
    first k = len(tokens(first half)) losses dropped, the rest summed in bits."""
    ids = tokenizer(line, add_special_tokens=False)["input_ids"]
    if not ids:
        return 0.0
    k = len(tokenizer(first_half(line), add_special_tokens=False)["input_ids"])
    inputs = torch.tensor([[start_id] + ids[:-1]])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=inputs).logits[0].float(), dim=-1).double()
    costs = -logp[torch.arange(len(ids)), torch.tensor(ids)] / math.log(2.0)
    n = len(ids) if max_tokens is None else min(len(ids), max_tokens)
    return float(costs[k:n].sum())


def test_first_half_counts_code_points():
    from fairppl.lm.goldfish import MAX_TOKENS
    from fairppl.lm.second_half import GOLDFISH_MAX_TOKENS

    assert MAX_TOKENS == GOLDFISH_MAX_TOKENS == 511
    assert first_half("abcde") == "ab"
    assert first_half("Straße!") == "Str"
    assert first_half("日本語です") == "日本"
    assert first_half("") == ""


def test_equals_whole_minus_first_half_when_the_half_is_a_token_prefix():
    """Character tokens: the half's tokens are always the whole line's first k, so the second
    half costs exactly bits(whole) - bits(half), both scored by the study's scorer."""
    tok = make_tokenizer()
    # float64 weights: the three scorings run forward passes over different lengths and
    # batches, which in float32 round differently by ~1e-6 bits on some CPUs (AVX-512 kernels);
    # in float64 the logits agree to ~1e-13 and the identity holds whatever the machine.
    model = make_model(len(tok), seed=3).double()
    lines = [line for line in LINES if line]
    halves = score_second_halves(model, tok, lines, max_tokens=None)
    whole = score_texts(model, tok, lines, add_eos=False, progress=False)
    first = score_texts(model, tok, [first_half(line) for line in lines], add_eos=False,
                        progress=False)
    assert all(h.aligned for h in halves)
    for h, w, f, line in zip(halves, whole, first, lines):
        assert h.k == len(first_half(line)) and h.tokens == len(line)
        assert h.bits == pytest.approx(w.bits - f.bits, abs=TOL_BITS)
        assert 0 < h.bits <= w.bits and (h.bits < w.bits) == (h.k > 0)


def test_direct_log_softmax_with_midpoints_inside_tokens():
    tok = bpe_tokenizer()
    model = make_model(len(tok), seed=5)
    halves = score_second_halves(model, tok, LINES, batch_size=1, max_tokens=None)
    assert {h.aligned for h in halves if h.tokens} == {True, False}  # both cases are exercised
    for h, line in zip(halves, LINES):
        assert h.bits == pytest.approx(direct_second_half_bits(model, tok, line, 1),
                                       abs=TOL_BITS), line
    # a split inside a token: not bits(whole) - bits(half) (the half alone is cut differently)
    line, h = next((line, h) for line, h in zip(LINES, halves) if not h.aligned)
    whole, first = score_texts(model, tok, [line, first_half(line)], add_eos=False,
                               progress=False)
    assert list(whole.token_ids[:h.k]) != list(first.token_ids)
    # batched as the study scores (rows sorted and padded): the same up to float rounding
    batched = score_second_halves(model, tok, LINES, batch_size=16, max_tokens=None)
    assert [b.bits for b in batched] == pytest.approx([h.bits for h in halves], abs=1e-4)


def test_goldfish_cut_at_max_tokens_and_unknown_tokens():
    tok = bpe_tokenizer()
    model = make_model(len(tok), seed=5)
    line = LINES[1]
    cut = score_second_halves(model, tok, [line], max_tokens=12, batch_size=1)[0]
    assert cut.truncated and cut.tokens > 12
    assert cut.bits == pytest.approx(direct_second_half_bits(model, tok, line, 1, 12),
                                     abs=TOL_BITS)
    # an unknown token costs log2(vocab_size), whatever the model says
    chars = make_tokenizer(byte_fallback=False)
    char_model = make_model(len(chars), seed=3)
    text = "abcd é fgh"
    h = score_second_halves(char_model, chars, [text], max_tokens=None)[0]
    assert h.unknown == 1 and not h.lossless
    unit = score_texts(char_model, chars, [text], add_eos=False, progress=False)[0]
    ids = unit.token_ids
    expected = math.fsum(math.log2(chars.vocab_size) if tid == chars.unk_token_id
                         else nats / math.log(2.0)
                         for tid, nats in zip(ids[h.k:], unit.token_nats[h.k:]))
    assert h.bits == pytest.approx(expected, abs=TOL_BITS)


def test_spearman_interval_and_the_comparison_table():
    rho, low, high = spearman_interval([1, 2, 3, 4, 5, 6], [10, 20, 30, 40, 50, 60])
    assert (rho, low, high) == (1.0, 1.0, 1.0)
    from scipy.stats import spearmanr

    x, y = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0], [2.0, 7.0, 1.0, 8.0, 2.5, 8.5, 1.8, 2.8]
    rho, low, high = spearman_interval(x, y)
    assert rho == pytest.approx(spearmanr(x, y).statistic) and low <= rho <= high
    with pytest.raises(ValueError, match="2 pairs: expected at least 3"):
        spearman_interval([1, 2], [1, 2])
    import polars as pl

    ours = pl.DataFrame({"code": ["aaa_Latn", "bbb_Latn", "ccc_Latn", "ddd_Latn"],
                         "second_half_bits": [10.0, 30.0, 20.0, None]})
    gold = pl.DataFrame({"code": ["aaa_latn", "bbb_latn", "ccc_latn", "ddd_latn"],
                         "goldfish_used": ["aaa_latn"] * 4,
                         "goldfish": [1.0, 3.0, 2.0, 4.0], "goldfish_5mb": [None] * 4,
                         "xglm4b5": [3.0, 1.0, 2.0, 4.0], "xglm7b5": [None] * 4,
                         "bloom7b1": [None] * 4, "mala500": [None] * 4},
                        schema_overrides={c: pl.Float64 for c in
                                          ("goldfish_5mb", "xglm7b5", "bloom7b1", "mala500")})
    table, rho = rank_comparison(ours, gold)
    assert table["goldfish"].to_list() == [1.0, 3.0, 2.0, 4.0]
    rows = {r["reference"]: r for r in rho.iter_rows(named=True)}
    assert rows["goldfish"]["codes"] == 3 and rows["goldfish"]["rho"] == pytest.approx(1.0)
    assert rows["xglm4b5"]["rho"] == pytest.approx(-1.0)
    assert rows["bloom7b1"]["codes"] == 0 and rows["bloom7b1"]["rho"] is None


def test_goldfish_table_refuses_what_it_cannot_read(tmp_path):
    bad = tmp_path / ANCHORS_FILE
    bad.write_text("flores_lang\tgoldfish_used\tgoldfish_5mb\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{ANCHORS_FILE}, line 1: column\(s\) goldfish_full"
                                         r".* missing: expected the columns"):
        read_goldfish(bad)
    head = ("flores_lang\tgoldfish_used\tgoldfish_5mb\tgoldfish_full\tgoldfish_1000mb\txglm4b5\t"
            "xglm7b5\tbloom7b1\tmala500\n")
    bad.write_text(head + "eng_latn\teng_latn\t1\t\t2\tn/a\t3\t4\t5\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: column 'xglm4b5': 'n/a': expected a number"):
        read_goldfish(bad)
    with pytest.raises(InputError, match="file not found: expected Goldfish's"):
        read_goldfish(tmp_path / "none.tsv")


def test_command_refuses_bad_inputs_before_loading_a_model(tmp_path, capsys):
    from fairppl.cli.app import main

    out = str(tmp_path / "x.csv")
    missing = str(tmp_path / "none.tsv")
    assert main(["goldfish", "--flores", "f.tar.gz", "--model", str(tmp_path), "--anchors",
                 missing, "--out", out]) == 2
    assert f"error: {missing}: file not found: expected Goldfish's" in capsys.readouterr().err
    assert main(["goldfish", "--flores", "f.tar.gz", "--model", str(tmp_path), "--anchors",
                 missing, "--sentences", "-1", "--out", out]) == 2
    assert "--sentences -1: expected 0 (all) or more" in capsys.readouterr().err


def test_real_goldfish_table(shared_anchors):
    table = read_goldfish(shared_anchors / ANCHORS_FILE)
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    assert len(rows) == 204
    assert rows["afr_latn"]["goldfish"] == pytest.approx(79.87592644)   # 1000mb
    assert rows["ace_latn"]["goldfish"] == pytest.approx(144.6197175)   # full
    assert rows["ace_arab"]["goldfish"] is None                         # the Urdu model
    assert rows["ace_arab"]["xglm4b5"] == pytest.approx(260.497895)
    assert rows["eng_latn"]["bloom7b1"] == pytest.approx(50.56331021)


@pytest.fixture(scope="module")
def smollm2():
    if not (SMOLLM2 / "config.json").is_file():
        pytest.skip(f"{SMOLLM2} is not built: run `make resources`")
    from fairppl.lm.cache import load_lm

    return load_lm(SMOLLM2, device="cpu")


@pytest.mark.pretrained
def test_real_smollm2_on_a_flores_slice(shared_corpora, shared_anchors, smollm2, tmp_path):
    """3 codes x 2 sentences through the command; one sentence per code checked directly."""
    import polars as pl

    from fairppl.cli.app import main
    from fairppl.corpus.flores import read_flores
    from fairppl.lm.goldfish import sheet_start_token

    archive = shared_corpora / "flores200_dataset.tar.gz"
    codes = ["eng_Latn", "deu_Latn", "zho_Hans"]
    out = tmp_path / "goldfish.csv"
    assert main(["goldfish", "--flores", str(archive), "--model", str(SMOLLM2),
                 "--anchors", str(shared_anchors / ANCHORS_FILE), "--sentences", "2",
                 "--codes", *codes, "--out", str(out), "--replicates", "100"]) == 0
    table = pl.read_csv(out)
    assert table["code"].to_list() == sorted(codes)
    assert table["sentences"].to_list() == [2, 2, 2]
    assert table["not_lossless"].sum() == 0 and table["truncated"].sum() == 0
    assert table["split_inside_token"].sum() >= 1  # German's midpoint falls inside a token
    rho = pl.read_csv(tmp_path / "goldfish.rho.csv")
    assert rho.filter(pl.col("reference") == "goldfish")["codes"].item() == 3

    flores = read_flores(archive, codes=codes)
    sample = sample_sentences(flores, 2)
    dev, devtest = flores["eng_Latn"]
    assert sample["eng_Latn"] == [dev.split("\n")[0].strip(), devtest.split("\n")[1004 - 997]
                                  .strip()]
    model, tok = smollm2
    start = sheet_start_token(SMOLLM2, ROOT / "config" / "models.tsv")
    assert start == "<|endoftext|>"
    start_id = tok.convert_tokens_to_ids(start)
    mine = second_half_by_code(model, tok, sample, start_token=start)
    got = dict(zip(mine["code"], mine["second_half_bits"]))
    for code, lines in sample.items():
        direct = sum(direct_second_half_bits(model, tok, line, start_id) for line in lines) / 2
        assert got[code] == pytest.approx(direct, abs=1e-3), code  # batched: float rounding
        assert table.filter(pl.col("code") == code)["second_half_bits"].item() == \
            pytest.approx(got[code], abs=1e-6)
