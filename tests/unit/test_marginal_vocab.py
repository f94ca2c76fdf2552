"""fairppl.marginal.vocab: token byte strings of real tokenizers (SmolLM2's byte-level BPE,
Gemma-3's SentencePiece-style BPE, our converted unigram tokenizers, SentencePiece .model files),
the byte trie against brute force, and the lattice of every tokenization against brute-force
counts and the tokenizers' own encodings."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np
import pytest

from fairppl.marginal import vocab as mv

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"
GEMMA3 = ROOT / "resources" / "models" / "gemma3-270m" / "hf"

TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "And God said, Let there be light: and there was light.",
    "Am Anfang schuf Gott Himmel und Erde.",
    "Größe, Bäume, Straße: über alle Maßen schön",
    "В начале сотворил Бог небо и землю.",
    "Съешь же ещё этих мягких французских булок",
    "आदि में परमेश्वर ने आकाश और पृथ्वी की सृष्टि की।",
    "起初，神创造天地。",
    "我爱自然语言处理",
    "🙂 emoji 👍🏽 and a family 👨‍👩‍👧",
    "two  spaces   and    four",
    " leading space",
    "  two leading spaces",
    "trailing space ",
    "tabs\tand\nnewlines\n\nhere",
    "Numbers 12345 and 3.14159, 1,000,000",
    "Café naïve façade résumé",
    "<s> literal </s> <unk> <0x41> <bos>",
    "mixed: abc Ωμέγα עברית العربية",
    "x",
    "é",
    "a",
]


def _needs(path: Path) -> None:
    if not (path / "tokenizer.json").exists():
        pytest.skip(f"{path}/tokenizer.json is absent (installed by `make resources`)")


@functools.lru_cache(maxsize=None)
def _hf(path: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


@functools.lru_cache(maxsize=None)
def _hf_vocab(path: str):
    return mv.vocab_from_hf(_hf(path))


@pytest.fixture(scope="module")
def spm_model_file(tmp_path_factory) -> str:
    """A tiny unigram model trained here (byte fallback, dummy prefix)."""
    from fairppl.tokenizers import train_sentencepiece

    folder = tmp_path_factory.mktemp("spm")
    units = [t for t in TEXTS[:9] for _ in range(3)] + ["der die das und ist Haus König Volk"] * 5
    train_sentencepiece(units, "unigram", 400, str(folder / "m"), allow_reduction=True)
    return str(folder / "m.model")


def _arcs(lat) -> set[tuple[int, int, int]]:
    return set(zip(lat.start.tolist(), lat.end.tolist(), lat.token.tolist()))


def _is_path(lat, ids) -> bool:
    arcs, pos = _arcs(lat), 0
    for tok, length in ids:
        if (pos, pos + length, tok) not in arcs:
            return False
        pos += length
    return pos == lat.n


def _brute_count(vocab: mv.TokenVocab, data: bytes) -> int:
    """Number of token sequences spelling ``data``: every split into vocabulary byte strings,
    times how many ids share each piece (a plain recursion, no trie)."""
    ids_of: dict[bytes, int] = {}
    for b in vocab.token_bytes:
        if b is not None:
            ids_of[b] = ids_of.get(b, 0) + 1

    @functools.lru_cache(maxsize=None)
    def count(pos: int) -> int:
        if pos == len(data):
            return 1
        return sum(ids_of.get(data[pos:end], 0) * count(end)
                   for end in range(pos + 1, len(data) + 1))

    return count(0)


def _encoder(tok):
    """The tokenizer's default ids of a text, a literal "<bos>" spelled as characters (as the
    study encodes units)."""
    return lambda text: tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]


def _check_default_is_path(vocab: mv.TokenVocab, encode, texts) -> None:
    lattice = pytest.importorskip("fairppl.marginal.lattice")
    for text in texts:
        ids = encode(text)
        data = vocab.text_bytes(text)
        assert vocab.decode(ids) == data, (text, ids)
        lat = vocab.lattice(data)
        assert lat.n == len(data)
        lengths = [len(vocab.token_bytes[i]) for i in ids]
        assert _is_path(lat, list(zip(ids, lengths))), text
        assert lattice.count_paths(lat) >= 1


def test_gpt2_byte_map_is_a_bijection():
    m = mv.gpt2_byte_map()
    assert sorted(m) == list(range(256)) and len(set(m.values())) == 256
    assert m[32] == "Ġ" and m[10] == "Ċ" and m[ord("a")] == "a" and m[0xC3] == "Ã"


def test_matches_equals_brute_force():
    rng = np.random.default_rng(3)
    alphabet = b"ab\xc3\xa9 "
    pieces = sorted({bytes(rng.choice(list(alphabet), size=rng.integers(1, 5)))
                     for _ in range(60)})
    vocab = mv.TokenVocab([None] + pieces + [pieces[0]])  # a special, and one duplicate
    for _ in range(20):
        data = bytes(rng.choice(list(alphabet), size=12))
        for pos in range(len(data)):
            expected = sorted((i, pos + len(b)) for i, b in enumerate(vocab.token_bytes)
                              if b is not None and data.startswith(b, pos))
            assert sorted(vocab.matches(data, pos)) == expected


def test_count_paths_equals_brute_force_on_a_toy_vocab():
    lattice = pytest.importorskip("fairppl.marginal.lattice")
    vocab = mv.TokenVocab([None, b"a", b"b", b"ab", b"ba", b"aba", b"a", b"abab"])
    # "abab": a|b|a|b, a|b|ab, a|ba|b, ab|a|b, ab|ab, aba|b, abab; "a" has two ids (1, 6)
    # -> 2*2 + 2 + 2 + 2 + 1 + 1 + 1 = 13
    assert lattice.count_paths(vocab.lattice(b"abab")) == 13 == _brute_count(vocab, b"abab")


def test_no_tokenization_names_the_offset():
    pytest.importorskip("fairppl.marginal.lattice")
    vocab = mv.TokenVocab([b"a", b"ab"], name="toy")
    with pytest.raises(ValueError, match=r"toy: no tokenization .* from byte offset 2 \(b'c'"):
        vocab.lattice(b"abc")


def test_decode_refuses_special_tokens():
    vocab = mv.TokenVocab([None, b"x"])
    assert vocab.decode([1, 0, 1], skip_special=True) == b"xx"
    with pytest.raises(ValueError, match="token 0 is a special token"):
        vocab.decode([1, 0])


def test_text_bytes_prefix_modes():
    assert mv.TokenVocab([b"a"]).text_bytes("a b") == b"a b"
    assert mv.TokenVocab([b"a"], prefix_space="always").text_bytes(" a") == b"  a"
    assert mv.TokenVocab([b"a"], prefix_space="always").text_bytes("") == b""
    assert mv.TokenVocab([b"a"], prefix_space="unless_space").text_bytes(" a") == b" a"
    assert mv.TokenVocab([b"a"], prefix_space="unless_space").text_bytes("a") == b" a"


@pytest.mark.pretrained
def test_smollm2_byte_level():
    _needs(SMOLLM2)
    tok, vocab = _hf(str(SMOLLM2)), _hf_vocab(str(SMOLLM2))
    assert vocab.prefix_space == "never"
    assert vocab.token_bytes[tok.convert_tokens_to_ids("Ġthe")] == b" the"
    assert vocab.token_bytes[tok.convert_tokens_to_ids("<|endoftext|>")] is None
    assert vocab.text_bytes(TEXTS[0]) == TEXTS[0].encode()
    _check_default_is_path(vocab, _encoder(tok), TEXTS)
    # "é" (C3 A9) is one token and also two byte tokens
    lat = vocab.lattice("é".encode())
    c3, a9 = tok.convert_tokens_to_ids("Ã"), tok.convert_tokens_to_ids("©")
    assert {(0, 1, c3), (1, 2, a9), (0, 2, tok.convert_tokens_to_ids("Ã©"))} <= _arcs(lat)
    lattice = pytest.importorskip("fairppl.marginal.lattice")
    for text in ("é", " the", "ab 12", "Привет"):
        data = vocab.text_bytes(text)
        assert lattice.count_paths(vocab.lattice(data)) == _brute_count(vocab, data), text


@pytest.mark.pretrained
def test_gemma3_sentencepiece_style():
    _needs(GEMMA3)
    tok, vocab = _hf(str(GEMMA3)), _hf_vocab(str(GEMMA3))
    # Gemma-3 adds no dummy prefix: "x" is the piece "x", " x" the piece "▁x"
    assert vocab.prefix_space == "never"
    assert tok("x", add_special_tokens=False)["input_ids"] == [tok.convert_tokens_to_ids("x")]
    assert vocab.token_bytes[tok.convert_tokens_to_ids("▁▁")] == b"  "
    assert vocab.token_bytes[tok.convert_tokens_to_ids("<0xC3>")] == b"\xc3"
    assert vocab.token_bytes[tok.convert_tokens_to_ids("\n\n")] == b"\n\n"
    assert vocab.token_bytes[tok.bos_token_id] is None
    _check_default_is_path(vocab, _encoder(tok), TEXTS)
    lattice = pytest.importorskip("fairppl.marginal.lattice")
    for text in ("é", " the", "ab 12"):
        data = vocab.text_bytes(text)
        assert lattice.count_paths(vocab.lattice(data)) == _brute_count(vocab, data), text


@pytest.mark.pretrained
def test_gemma3_lattice_of_a_verse_is_fast():
    _needs(GEMMA3)
    pytest.importorskip("fairppl.marginal.lattice")
    vocab = _hf_vocab(str(GEMMA3))
    verse = ("And the earth was without form, and void; and darkness was upon the face of the "
             "deep. And the Spirit of God moved upon the face of the waters, and it was good.")
    assert len(verse) >= 150
    start = time.perf_counter()
    lat = vocab.lattice(vocab.text_bytes(verse))
    seconds = time.perf_counter() - start
    assert lat.n == len(verse.encode()) and len(lat.token) > lat.n
    assert seconds < 2.0, f"lattice of a {len(verse)}-character verse took {seconds:.2f} s"


def test_sentencepiece_file_and_converted_tokenizer_agree(spm_model_file):
    import sentencepiece as spm

    from fairppl.tokenizers.convert import to_hf_tokenizer

    from_file = mv.vocab_from_sentencepiece(spm_model_file)
    converted = mv.vocab_from_hf(to_hf_tokenizer(spm_model_file))
    assert from_file.token_bytes == converted.token_bytes
    assert from_file.token_bytes[:5] == [None, None, None, None, b"\x00"]
    assert from_file.prefix_space == converted.prefix_space == "always"
    assert from_file.text_bytes("a b") == b" a b"
    assert from_file.scores is not None and from_file.scores[-1] < 0
    sp = spm.SentencePieceProcessor(model_file=spm_model_file)
    _check_default_is_path(from_file, sp.encode, TEXTS)
    _check_default_is_path(converted, sp.encode, TEXTS)
    lattice = pytest.importorskip("fairppl.marginal.lattice")
    for text in ("Gott", "Größe", "é x"):
        data = from_file.text_bytes(text)
        assert lattice.count_paths(from_file.lattice(data)) == _brute_count(from_file, data)
