"""Blocks and per-block candidate tokenizations for the LM-guided proposal (Chirkova et al. 2023).

The proposal builds a tokenization block by block, so every sampled tokenization has a token
boundary at every block edge. Blocks are cut on the characters of the byte string a tokenization
must spell (``vocab.text_bytes(text)``; for SentencePiece with a dummy prefix that string starts
with the prefix space), and every position here is a **byte offset** into it.

Block convention: a block is a maximal run of whitespace followed by the run of non-whitespace
characters after it, so the space that byte-level BPE (``Ġ``) and SentencePiece (``▁``) attach to
the *next* word stays with that word. The first block has no leading whitespace when the text
starts with a word; whitespace at the end of the text (with no word after it) is a block of its
own; a text of whitespace only is one block. Whitespace is ``str.isspace``.

A block longer than ``L`` characters is cut at the default tokenization's boundaries inside it:
default tokens are merged left to right while the chunk stays within ``L`` characters (these
chunks are kind ``T1``). A default token longer than ``L`` characters is cut raw every ``L``
characters, and the rest carries on as the start of the next chunk (chunks with a raw edge are
``T2``: the default tokenization is then outside the proposal). Blocks that are whole words are
``T0``. Characters are counted at their first byte, so a default token that starts inside a
multi-byte character (byte-level BPE) contributes no character for that partial one.

``Block.aligned`` says whether both edges of a block are default token boundaries; a default token
crossing a block edge (possible even for T0 blocks when a token spans a space and a word, or two
words) also puts the default tokenization outside the proposal.

Candidates: :func:`top_m_tokenizations` returns the M tokenizations of a block's bytes with the
fewest tokens, by a k-best dynamic program over byte positions (never enumerating all paths).
Order: fewer tokens; then fewer *alias* tokens; then the lexicographically smaller tuple of token
end offsets (a shorter first token first); then the larger tuple of token ids. Aliases are
tokens spelling the same bytes (with byte fallback, the piece ``<0x61>`` and the piece ``a``);
the highest id of such a group is the primary one and the others count as aliases, because
byte-fallback pieces come before the learned pieces in SentencePiece and Gemma vocabularies and
the LM has almost never seen them stand for a character that has its own piece. Without this rule
the 2^k byte/character variants of a k-character word would fill the M slots ahead of the
default. Two paths with equal end offsets differ only in aliases, so the order is total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KINDS = ("T0", "T1", "T2")


@dataclass(frozen=True)
class Block:
    """One block: bytes ``[start, end)`` of the text bytes; ``kind`` is T0/T1/T2 (module doc);
    ``aligned`` is True when both edges are boundaries of the default tokenization."""

    start: int
    end: int
    kind: str
    aligned: bool


def _is_lead(byte: int) -> bool:
    """True for the first byte of a UTF-8 character (not a continuation byte 10xxxxxx)."""
    return byte & 0xC0 != 0x80


def _check_offsets(offsets: Sequence[int], n: int) -> np.ndarray:
    off = np.asarray(offsets, dtype=np.int64)
    if off.ndim != 1 or off.size < 1 or off[0] != 0 or off[-1] != n or np.any(np.diff(off) <= 0):
        raise ValueError(f"default_offsets must rise strictly from 0 to the byte length {n} "
                         f"(token boundaries of the default tokenization); got {list(off)[:12]}")
    return off


def default_offsets(token_bytes: Sequence[bytes | None], ids: Sequence[int], data: bytes) -> list[int]:
    """Byte offsets ``[0, e1, ..., len(data)]`` of the default tokenization ``ids`` of ``data``.

    Raises ValueError when the ids do not spell ``data`` (naming the first byte that differs), or
    when an id is a special token (no bytes)."""
    out, pos = [0], 0
    for k, tid in enumerate(ids):
        piece = token_bytes[tid]
        if piece is None or not piece:
            raise ValueError(f"default token #{k} (id {tid}) is a special token with no bytes; "
                             "the default tokenization must consist of text tokens only")
        if data[pos:pos + len(piece)] != piece:
            raise ValueError(f"default token #{k} (id {tid}, bytes {piece!r}) does not match the text "
                             f"bytes at offset {pos} ({data[pos:pos + len(piece)]!r}); the default "
                             "ids must spell vocab.text_bytes(text) exactly")
        pos += len(piece)
        out.append(pos)
    if pos != len(data):
        raise ValueError(f"default tokenization spells {pos} bytes, the text has {len(data)}")
    return out


def _words(data: bytes) -> list[tuple[int, int]]:
    """Byte spans of whitespace-then-word blocks (module doc)."""
    text = data.decode("utf-8")
    starts = np.cumsum([0] + [len(c.encode("utf-8")) for c in text])
    spans, i, n = [], 0, len(text)
    while i < n:
        j = i
        while j < n and text[j].isspace():
            j += 1
        while j < n and not text[j].isspace():
            j += 1
        spans.append((int(starts[i]), int(starts[j])))
        i = j
    return spans


def char_count(data: bytes, a: int, b: int) -> int:
    """Characters in ``data[a:b]``, each counted at its first byte (module docstring)."""
    return sum(_is_lead(x) for x in data[a:b])


def _chunks(data: bytes, start: int, end: int, inner: list[int], L: int) -> list[tuple[int, int, bool]]:
    """Cut ``[start, end)`` into chunks of at most L characters at the boundaries ``inner``
    (sorted, strictly inside), raw-cutting a segment longer than L: (start, end, has_raw_edge)."""
    out: list[tuple[int, int, bool]] = []
    cur, acc_end, acc, raw_start = start, start, 0, False
    for b in inner + [end]:
        seg = char_count(data, acc_end, b)
        if acc + seg <= L:
            acc, acc_end = acc + seg, b
            continue
        if acc_end > cur:
            out.append((cur, acc_end, raw_start))
            cur, raw_start = acc_end, False
        seg = char_count(data, cur, b)
        while seg > L:
            cut, seen = cur, 0
            while seen < L or not _is_lead(data[cut]):
                seen += _is_lead(data[cut])
                cut += 1
            out.append((cur, cut, True))
            cur, raw_start, seg = cut, True, seg - L
        acc, acc_end = seg, b
    if acc_end > cur:
        out.append((cur, acc_end, raw_start))
    return out


def split_blocks(data: bytes, default_offsets: Sequence[int], L: int) -> list[Block]:
    """The blocks of ``data`` (the text's bytes, ``vocab.text_bytes(text)``), in order, covering
    it exactly; ``default_offsets`` are the default tokenization's boundaries (from 0 to
    ``len(data)``, see :func:`default_offsets`); ``L`` is the maximum block length in characters.
    Conventions in the module docstring."""
    if isinstance(data, str):
        raise TypeError("split_blocks takes the text's bytes (vocab.text_bytes(text)), not a str")
    if L < 1:
        raise ValueError(f"the maximum block length L must be at least 1 character, got {L}")
    off = _check_offsets(default_offsets, len(data))
    bounds = set(off.tolist())
    blocks = []
    for start, end in _words(data):
        if char_count(data, start, end) <= L:
            pieces = [(start, end, False)]
            kind_split = "T0"
        else:
            inner = off[(off > start) & (off < end)].tolist()
            pieces = _chunks(data, start, end, inner, L)
            kind_split = "T1"
        for a, b, raw in pieces:
            kind = "T2" if raw else kind_split
            blocks.append(Block(a, b, kind, a in bounds and b in bounds))
    return blocks


def block_default(blocks: Sequence[Block], default_ids: Sequence[int],
                  offsets: Sequence[int]) -> list[tuple[int, ...] | None]:
    """Per block, the default tokens inside it (a tuple of ids), or None when a default token
    crosses one of its edges (the block's default tokenization does not exist)."""
    index = {int(o): k for k, o in enumerate(offsets)}
    out = []
    for blk in blocks:
        if blk.aligned:
            out.append(tuple(int(t) for t in default_ids[index[blk.start]:index[blk.end]]))
        else:
            out.append(None)
    return out


def _kbest(arcs_into: list[list[tuple[int, int, int]]], n: int, M: int) -> list[tuple]:
    """k-best DP: best[j] holds the M smallest keys (ntokens, aliases, ends, -ids) of paths
    0 -> j; extending by one arc preserves the order of paths ending at the same node, so keeping
    M per node is exact."""
    best: list[list[tuple]] = [[] for _ in range(n + 1)]
    best[0] = [(0, 0, (), ())]
    for j in range(1, n + 1):
        cand = [(k + 1, a + alias, ends + (j,), neg + (-tid,))
                for i, tid, alias in arcs_into[j] for k, a, ends, neg in best[i]]
        cand.sort()
        best[j] = cand[:M]
    return best[n]


def top_m_tokenizations(vocab, block_bytes: bytes, M: int) -> list[tuple[int, ...]]:
    """The (at most) M tokenizations of ``block_bytes`` with the fewest tokens, best first (order
    and aliases in the module docstring). Uses ``vocab.matches`` (every non-special token at each
    byte offset). Empty list when no tokenization exists."""
    if M < 1:
        raise ValueError(f"the number of candidates per block M must be at least 1, got {M}")
    n = len(block_bytes)
    arcs_into: list[list[tuple[int, int, int]]] = [[] for _ in range(n + 1)]
    for i in range(n):
        primary: dict[int, int] = {}
        found = vocab.matches(block_bytes, i)
        for tid, end in found:  # same start and end: same bytes, so aliases of each other
            primary[end] = max(primary.get(end, -1), int(tid))
        for tid, end in found:
            arcs_into[end].append((i, int(tid), int(tid) != primary[end]))
    return [tuple(-t for t in neg) for _, _, _, neg in _kbest(arcs_into, n, M)]


class BlockCandidates:
    """Top-M candidates per distinct block byte string, computed once and cached (a dict: the
    blocks of a corpus repeat, Zipf-like, so the cache is what makes candidates cheap)."""

    def __init__(self, vocab, M: int):
        if M < 1:
            raise ValueError(f"the number of candidates per block M must be at least 1, got {M}")
        self.vocab, self.M = vocab, M
        self._cache: dict[bytes, list[tuple[int, ...]]] = {}
        self.hits = 0

    def __call__(self, block_bytes: bytes) -> list[tuple[int, ...]]:
        found = self._cache.get(block_bytes)
        if found is not None:
            self.hits += 1
            return found
        cands = top_m_tokenizations(self.vocab, block_bytes, self.M)
        if not cands:
            raise ValueError(f"no tokenization of the block {block_bytes!r} exists in the vocabulary "
                             "(a byte with no token: the vocabulary lacks byte fallback)")
        self._cache[block_bytes] = cands
        return cands

    def __len__(self) -> int:
        return len(self._cache)
