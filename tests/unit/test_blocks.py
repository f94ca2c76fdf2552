"""Blocks and top-M block tokenizations of the LM-guided proposal (fairppl.marginal.blocks):
hand-counted splits, and the k-best DP against brute-force enumeration."""

from pathlib import Path

import pytest

from fairppl.marginal.blocks import (Block, BlockCandidates, block_default, default_offsets,
                                     split_blocks, top_m_tokenizations)

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"


class ListVocab:
    """A hand-made vocabulary with the TokenVocab interface blocks.py uses (ids -> bytes)."""

    def __init__(self, pieces):
        self.token_bytes = list(pieces)

    def matches(self, data, pos):
        return [(tid, pos + len(p)) for tid, p in enumerate(self.token_bytes)
                if p and data.startswith(p, pos)]


def brute_force(vocab, data):
    """Every tokenization of ``data`` by recursion (exponential: short strings only)."""
    if not data:
        return [()]
    out = []
    for tid, p in enumerate(vocab.token_bytes):
        if p and data.startswith(p):
            out += [(tid,) + rest for rest in brute_force(vocab, data[len(p):])]
    return out


def sort_key(vocab, ids):
    """The documented order: tokens, aliases (a token whose bytes a higher id also spells),
    end offsets, then larger ids first."""
    top = {}
    for t, p in enumerate(vocab.token_bytes):
        if p:
            top[p] = max(top.get(p, -1), t)
    ends, pos = [], 0
    for t in ids:
        pos += len(vocab.token_bytes[t])
        ends.append(pos)
    aliases = sum(t != top[vocab.token_bytes[t]] for t in ids)
    return (len(ids), aliases, tuple(ends), tuple(-t for t in ids))


def spans(blocks):
    return [(b.start, b.end, b.kind, b.aligned) for b in blocks]


def test_words_keep_their_leading_space_and_trailing_space_is_a_block():
    data = b"In the  beginning \n"
    # default tokens: "In" " the" "  beginning" " \n" (each a word with its space)
    offs = [0, 2, 6, 17, 19]
    assert spans(split_blocks(data, offs, 20)) == [
        (0, 2, "T0", True), (2, 6, "T0", True), (6, 17, "T0", True), (17, 19, "T0", True)]
    # a text that starts with whitespace (SentencePiece's dummy prefix) and has only spaces
    assert spans(split_blocks(b" ab", [0, 1, 3], 5)) == [(0, 3, "T0", True)]
    assert spans(split_blocks(b"   ", [0, 3], 5)) == [(0, 3, "T0", True)]
    assert split_blocks(b"", [0], 5) == []


def test_a_default_token_crossing_a_block_edge_is_counted_unaligned():
    # default "a b" as one token then "c": the edge at 1 is not a default boundary
    blocks = split_blocks(b"a bc", [0, 3, 4], 5)
    assert spans(blocks) == [(0, 1, "T0", False), (1, 4, "T0", False)]
    assert block_default(blocks, [7, 8], [0, 3, 4]) == [None, None]


def test_long_words_are_cut_at_default_boundaries_then_raw():
    # " unbelievable" with default " un|bel|iev|able", L=6: merge while <= 6 characters
    data = b" unbelievable"
    offs = [0, 3, 6, 9, 13]
    assert spans(split_blocks(data, offs, 6)) == [
        (0, 6, "T1", True), (6, 9, "T1", True), (9, 13, "T1", True)]
    # one default token of 13 characters, L=5: raw cuts at 5 and 10 characters
    assert spans(split_blocks(data, [0, 13], 5)) == [
        (0, 5, "T2", False), (5, 10, "T2", False), (10, 13, "T2", False)]
    # the rest of a raw-cut token carries on into the next chunk: "abcdefg|h" with L=3
    assert spans(split_blocks(b"abcdefgh", [0, 7, 8], 3)) == [
        (0, 3, "T2", False), (3, 6, "T2", False), (6, 8, "T2", False)]


def test_characters_not_bytes_are_counted_and_raw_cuts_keep_characters_whole():
    data = " äöüß".encode()  # 5 characters, 9 bytes
    assert spans(split_blocks(data, [0, 9], 5)) == [(0, 9, "T0", True)]
    assert spans(split_blocks(data, [0, 9], 2)) == [
        (0, 3, "T2", False), (3, 7, "T2", False), (7, 9, "T2", False)]
    # a byte-level default that splits "ä" across two tokens: no character counted for the tail
    assert spans(split_blocks(data, [0, 2, 9], 4)) == [(0, 2, "T1", True), (2, 9, "T1", True)]


def test_blocks_tile_the_text():
    data = "  Und Gott sprach: Es werde Licht!  ".encode()
    offs = list(range(len(data) + 1))
    for L in (1, 2, 3, 7, 50):
        blocks = split_blocks(data, offs, L)
        assert blocks[0].start == 0 and blocks[-1].end == len(data)
        assert all(a.end == b.start for a, b in zip(blocks, blocks[1:]))
        assert all(len(data[b.start:b.end].decode()) <= L or b.kind == "T0" and L == 50
                   for b in blocks)


def test_bad_offsets_and_arguments_are_named():
    with pytest.raises(ValueError, match="rise strictly from 0 to the byte length 3"):
        split_blocks(b"abc", [0, 2], 4)
    with pytest.raises(ValueError, match="L must be at least 1"):
        split_blocks(b"abc", [0, 3], 0)
    with pytest.raises(TypeError, match="text_bytes"):
        split_blocks("abc", [0, 3], 4)
    vocab = ListVocab([None, b"a", b"b"])
    assert default_offsets(vocab.token_bytes, [1, 2, 1], b"aba") == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"default token #1 \(id 1.*offset 1"):
        default_offsets(vocab.token_bytes, [1, 1], b"ab")
    with pytest.raises(ValueError, match="special token"):
        default_offsets(vocab.token_bytes, [0], b"a")


# ids 1-3 are aliased by 12-14 (like byte-fallback pieces and the learned pieces they duplicate)
UNIGRAM_LIKE = [None, b"a", b"b", b"c", b"ab", b"bc", b"abc", b" ", b" a", b"ca", b"cab", b"bca",
                b"a", b"b", b"c"]


@pytest.mark.parametrize("data", [b"abcab", b" abcabc", b"cabca", b"bcabca "])
@pytest.mark.parametrize("M", [1, 3, 8, 1000])
def test_top_m_matches_brute_force(data, M):
    vocab = ListVocab(UNIGRAM_LIKE)
    every = sorted(brute_force(vocab, data), key=lambda ids: sort_key(vocab, ids))
    assert len(set(every)) == len(every)
    got = top_m_tokenizations(vocab, data, M)
    assert got == every[:M]
    if M == 1000:
        assert len(got) == len(every) < 1000  # M beyond the number of paths returns them all


def test_hand_counted_order_and_cache():
    vocab = ListVocab([None, b"a", b"b", b"ab"])
    # "abab": 1 path of 2 tokens, 2 of 3, 1 of 4; ties by end offsets (1,2,4) < (2,3,4)
    assert top_m_tokenizations(vocab, b"abab", 10) == [(3, 3), (1, 2, 3), (3, 1, 2), (1, 2, 1, 2)]
    assert top_m_tokenizations(vocab, b"c", 3) == []
    # aliases: id 3 also spells "a" and is primary (higher id); 2 tokens each, 0 aliases first
    aliased = ListVocab([None, b"a", b"b", b"a", b"ab"])
    assert top_m_tokenizations(aliased, b"aba", 10) == [(4, 3), (4, 1), (3, 2, 3), (3, 2, 1),
                                                        (1, 2, 3), (1, 2, 1)]
    cands = BlockCandidates(vocab, 2)
    assert cands(b"abab") == [(3, 3), (1, 2, 3)]
    assert cands(b"abab") is cands(b"abab") and cands.hits == 2 and len(cands) == 1
    with pytest.raises(ValueError, match="no tokenization of the block b'c'"):
        cands(b"c")


@pytest.fixture(scope="module")
def smollm2_vocab():
    if not (SMOLLM2 / "tokenizer.json").exists():
        pytest.skip(f"SmolLM2 tokenizer not installed at {SMOLLM2} (make resources)")
    from transformers import AutoTokenizer

    from fairppl.marginal.vocab import vocab_from_hf

    tok = AutoTokenizer.from_pretrained(SMOLLM2)
    return tok, vocab_from_hf(tok)


@pytest.mark.pretrained
def test_smollm2_brute_force_and_defaults_in_top_m(smollm2_vocab):
    tok, vocab = smollm2_vocab
    for word in [b" the", b" God", b"ing"]:
        every = sorted(brute_force(vocab, word), key=lambda ids: sort_key(vocab, ids))
        assert top_m_tokenizations(vocab, word, 6) == every[:6]
    text = "In the beginning God created the heaven and the earth."
    ids = tok(text, add_special_tokens=False)["input_ids"]
    data = vocab.text_bytes(text)
    offs = default_offsets(vocab.token_bytes, ids, data)
    blocks = split_blocks(data, offs, 11)
    assert [data[b.start:b.end] for b in blocks] == [
        b"In", b" the", b" beginning", b" God", b" created", b" the", b" heaven", b" and", b" the",
        b" earth."]
    assert all(b.kind == "T0" and b.aligned for b in blocks)
    cands = BlockCandidates(vocab, 8)
    for blk, dflt in zip(blocks, block_default(blocks, ids, offs)):
        assert dflt in cands(data[blk.start:blk.end]), data[blk.start:blk.end]
    assert cands.hits == 2  # " the" three times


UNITS = ["In the beginning God created the heaven and the earth.",
         "And the earth was without form, and void; and darkness was upon the face of the deep.",
         "And God said, Let there be light: and there was light.",
         "Am Anfang schuf Gott Himmel und Erde. Und die Erde war wüst und leer."]


def test_small_unigram_vocab_brute_force_blocks_and_defaults(tmp_path):
    import sentencepiece as spm

    from fairppl.marginal.vocab import vocab_from_sentencepiece
    from fairppl.tokenizers import train_sentencepiece

    train_sentencepiece(UNITS * 4, "unigram", 300, str(tmp_path / "m"), allow_reduction=True)
    vocab = vocab_from_sentencepiece(str(tmp_path / "m.model"))
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    # byte pieces double every character that has its own piece: many paths, still exact
    for word in [" God", " wüst", "ü"]:
        data = word.encode()
        every = sorted(brute_force(vocab, data), key=lambda ids: sort_key(vocab, ids))
        assert len(every) >= 2
        for M in (1, 4, 50):
            assert top_m_tokenizations(vocab, data, M) == every[:M]
    text = "Und Gott sprach: Es werde Licht."
    ids = sp.encode(text)
    data = vocab.text_bytes(text)
    assert data.startswith(b" Und")  # the dummy prefix is a byte of the first block
    offs = default_offsets(vocab.token_bytes, ids, data)
    blocks = split_blocks(data, offs, 6)
    # words of more than 6 characters are cut at the default boundaries (T1)
    assert [(data[b.start:b.end], b.kind) for b in blocks] == [
        (b" Und", "T0"), (b" Gott", "T0"), (b" sprac", "T1"), (b"h:", "T1"), (b" Es", "T0"),
        (b" werde", "T0"), (b" Licht", "T1"), (b".", "T1")]
    assert all(b.aligned for b in blocks)
    cands = BlockCandidates(vocab, 16)
    for blk, dflt in zip(blocks, block_default(blocks, ids, offs)):
        assert dflt in cands(data[blk.start:blk.end])
