"""Any tokenizer's vocabulary as byte strings, and every tokenization of a byte string.

A tokenization of a text is a sequence of non-special token ids whose byte strings concatenate
to ``TokenVocab.text_bytes(text)``: the bytes the tokenizer's own encoding spells (the text as
UTF-8, with a leading space where the tokenizer adds a dummy prefix). That set includes, for
byte-level BPE, sequences that split a multi-byte character across byte tokens, and for byte
fallback, byte pieces spelling a character that also has a piece of its own.

Token byte strings by tokenizer family (``vocab_from_hf``):

* byte-level BPE (GPT-2, SmolLM2): every character of a token stands for one byte through
  GPT-2's byte <-> printable-character map (``"Ġ"`` is the space byte).
* SentencePiece-style (Gemma-3, our converted unigram/BPE tokenizers): the decoder's ``Replace``
  steps are applied to each token (``"▁"`` -> space, the converter's U+FDD0 -> ``"<"``), a byte
  piece ``<0xNN>`` is the byte NN when the decoder has ``ByteFallback``, the rest is UTF-8.
* added tokens that are not special spell their content literally (Gemma's ``"\\n\\n"``).

Special and control tokens (``<bos>``, ``<unk>``, ``<s>``, ...) have ``None``: they never occur
in a tokenization. ``vocab_from_sentencepiece`` reads a ``.model`` file (normal pieces with
``"▁"`` as space, byte pieces, dummy prefix) and keeps the pieces' scores for unigram lattices.

Matching uses a byte trie stored as the sorted array of distinct token byte strings: the tokens
that start with a prefix form one contiguous range, narrowed one byte at a time by bisection,
so a 262k vocabulary costs one list, not millions of trie nodes.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Callable, Iterable, Sequence

import numpy as np

from ..core.errors import InputError
from .lattice import Lattice

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_PREFIX_MODES = ("never", "always", "unless_space")


def gpt2_byte_map() -> dict[int, str]:
    """GPT-2's map from each byte value (0-255) to a printable character: printable Latin-1
    bytes map to themselves, the other 68 bytes to U+0100 onwards in byte order."""
    keep = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
            + list(range(ord("®"), ord("ÿ") + 1)))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


class TokenVocab:
    """Token ids as the bytes they spell, with a byte trie for matching.

    ``token_bytes[i]`` is token i's bytes, ``None`` for a special/control token.
    ``prefix_space`` says what the tokenizer adds in front of a non-empty text before
    segmenting it: ``"never"``, ``"always"`` (SentencePiece's dummy prefix) or
    ``"unless_space"`` (byte-level BPE with ``add_prefix_space``). ``scores`` (optional,
    float64 per id, nats-like log-weights) are the unigram piece scores when known.
    """

    def __init__(self, token_bytes: Sequence[bytes | None], prefix_space: str = "never",
                 scores: np.ndarray | None = None, name: str = ""):
        if prefix_space not in _PREFIX_MODES:
            raise ValueError(f"prefix_space must be one of {_PREFIX_MODES}, got {prefix_space!r}")
        self.token_bytes: list[bytes | None] = list(token_bytes)
        self.prefix_space = prefix_space
        self.scores = None if scores is None else np.asarray(scores, dtype=np.float64)
        self.name = name
        by_bytes: dict[bytes, list[int]] = {}
        for i, b in enumerate(self.token_bytes):
            if b is not None:
                if not b:
                    raise InputError(f"{name or 'vocabulary'}: token {i} spells no bytes "
                                     f"(expected a non-empty byte string or a special token)")
                by_bytes.setdefault(b, []).append(i)
        self._keys: list[bytes] = sorted(by_bytes)
        self._ids: list[tuple[int, ...]] = [tuple(by_bytes[k]) for k in self._keys]
        self.max_len = max((len(k) for k in self._keys), default=0)

    def __len__(self) -> int:
        return len(self.token_bytes)

    def text_bytes(self, text: str) -> bytes:
        """The byte string every tokenization of ``text`` spells (UTF-8, dummy prefix added
        the way the tokenizer adds it; nothing for the empty text)."""
        data = text.encode("utf-8")
        if not data or self.prefix_space == "never":
            return data
        if self.prefix_space == "unless_space" and data.startswith(b" "):
            return data
        return b" " + data

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> bytes:
        """The bytes a token sequence spells. A special token raises ``ValueError`` unless
        ``skip_special`` (then it spells nothing)."""
        out = []
        for i in ids:
            b = self.token_bytes[int(i)]
            if b is None:
                if skip_special:
                    continue
                raise ValueError(f"token {int(i)} is a special token: it spells no text "
                                 f"(pass skip_special=True to drop it)")
            out.append(b)
        return b"".join(out)

    def matches(self, data: bytes, pos: int) -> list[tuple[int, int]]:
        """``(token_id, end)`` for every token whose bytes equal ``data[pos:end]``, by
        increasing ``end`` then id."""
        keys, out = self._keys, []
        lo, hi = 0, len(keys)
        for end in range(pos + 1, min(len(data), pos + self.max_len) + 1):
            prefix = data[pos:end]
            lo = bisect.bisect_left(keys, prefix, lo, hi)
            # keys starting with `prefix` sort before prefix + 0xFF*k for every longer key
            hi = bisect.bisect_right(keys, prefix + b"\xff" * (self.max_len + 1), lo, hi)
            if lo >= hi:
                break
            if keys[lo] == prefix:
                out.extend((i, end) for i in self._ids[lo])
        return out

    def lattice(self, data: bytes, logw: Callable[[int], float] | None = None) -> Lattice:
        """The lattice of every tokenization of ``data`` over byte positions 0..len(data):
        one arc per (start, matching token), kept only when it lies on a complete path.
        ``logw(token_id)`` gives each arc's log-weight (default 0.0). Raises ``ValueError``
        naming the first byte offset no tokenization can get past."""
        n = len(data)
        arcs_at = [self.matches(data, pos) for pos in range(n)]
        reach = np.zeros(n + 1, dtype=bool)  # reachable from 0
        reach[0] = True
        for pos in range(n):
            if reach[pos]:
                for _, end in arcs_at[pos]:
                    reach[end] = True
        if not reach[n]:
            stuck = max(p for p in range(n + 1) if reach[p])
            raise ValueError(f"{self.name or 'vocabulary'}: no tokenization spells these "
                             f"{n} bytes: no token continues from byte offset {stuck} "
                             f"({data[stuck:stuck + 8]!r}...)")
        alive = np.zeros(n + 1, dtype=bool)  # reaches n
        alive[n] = True
        for pos in range(n - 1, -1, -1):
            alive[pos] = any(alive[end] for _, end in arcs_at[pos])
        arcs = []
        for pos in range(n):
            if reach[pos]:
                for tok, end in arcs_at[pos]:
                    if alive[end]:
                        arcs.append((pos, end, tok, 0.0 if logw is None else float(logw(tok))))
        return Lattice.from_arcs(n, arcs)


def _hf_components(tokenizer) -> dict:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise InputError(f"{type(tokenizer).__name__}: expected a fast (Rust-backed) Hugging "
                         f"Face tokenizer with a backend_tokenizer")
    return json.loads(backend.to_str())


def _steps(component: dict | None) -> list[dict]:
    """A normalizer/pre-tokenizer/decoder as its list of steps (Sequences flattened)."""
    if not component:
        return []
    inner = component.get("decoders") or component.get("normalizers") or \
        component.get("pretokenizers")
    if component.get("type") == "Sequence" and inner is not None:
        return [s for step in inner for s in _steps(step)]
    return [component]


def _prefix_mode(spec: dict) -> str:
    for step in _steps(spec.get("normalizer")):
        if step["type"] == "Prepend" and step.get("prepend") in ("▁", " "):
            return "always"
    for step in _steps(spec.get("pre_tokenizer")):
        if step["type"] == "Metaspace" and step.get("prepend_scheme", "always") != "never" \
                and step.get("add_prefix_space", True):
            return "always"
        if step["type"] == "ByteLevel" and step.get("add_prefix_space"):
            return "unless_space"
    return "never"


def vocab_from_hf(tokenizer) -> TokenVocab:
    """The ``TokenVocab`` of a fast Hugging Face tokenizer: byte-level BPE (a ``ByteLevel``
    decoder), or SentencePiece style (``Replace``/``Metaspace`` decoders, ``<0xNN>`` byte
    pieces with ``ByteFallback``). Special tokens (``all_special_ids`` and added tokens marked
    special) get ``None``; other added tokens spell their content."""
    spec = _hf_components(tokenizer)
    size = len(tokenizer)
    strings: list[str | None] = [None] * size
    for token, i in tokenizer.get_vocab().items():
        strings[i] = token
    special = set(tokenizer.all_special_ids)
    added = {}
    for entry in spec.get("added_tokens", []):
        if entry["special"]:
            special.add(entry["id"])
        else:
            added[entry["id"]] = entry["content"].encode("utf-8")
    decoder = _steps(spec.get("decoder"))
    byte_level = any(s["type"] == "ByteLevel" for s in decoder)
    replaces = []
    for s in decoder:
        if s["type"] == "Replace" and "String" in s["pattern"]:
            replaces.append((s["pattern"]["String"], s["content"]))
        elif s["type"] == "Metaspace":
            replaces.append((s.get("replacement", "▁"), " "))
    byte_fallback = any(s["type"] == "ByteFallback" for s in decoder)
    unbyte = {c: b for b, c in gpt2_byte_map().items()}
    out: list[bytes | None] = []
    for i, token in enumerate(strings):
        if i in special or token is None:
            out.append(None)
        elif i in added:
            out.append(added[i])
        elif byte_level:
            try:
                out.append(bytes(unbyte[c] for c in token))
            except KeyError as err:
                raise InputError(f"byte-level tokenizer: token {i} {token!r} has the character "
                                 f"{err.args[0]!r}, which is not in GPT-2's byte map") from None
        else:
            m = _BYTE_PIECE.fullmatch(token) if byte_fallback else None
            if m:
                out.append(bytes([int(m.group(1), 16)]))
                continue
            for old, new in replaces:
                token = token.replace(old, new)
            out.append(token.encode("utf-8"))
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    return TokenVocab(out, prefix_space=_prefix_mode(spec), name=str(name))


def vocab_from_sentencepiece(model_file) -> TokenVocab:
    """The ``TokenVocab`` of a SentencePiece ``.model`` file: normal and user-defined pieces
    with ``"▁"`` as a space, byte pieces as their byte, control/unknown/unused pieces
    ``None``; the dummy prefix as the model says. ``scores`` holds every piece's score
    (float64; 0.0 where the piece is not normal)."""
    from ..tokenizers.spm_model import BYTE, NORMAL, USER_DEFINED, parse_spm_model

    path = str(model_file)
    try:
        spec = parse_spm_model(open(path, "rb").read())
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the SentencePiece model ({err}): expected a .model "
                         f"file", path=path) from None
    if spec["treat_whitespace_as_suffix"] or not spec["escape_whitespaces"]:
        raise InputError("unsupported SentencePiece model: whitespace as suffix or not "
                         "escaped (expected '▁' prefixes)", path=path)
    out: list[bytes | None] = []
    scores = np.zeros(len(spec["pieces"]), dtype=np.float64)
    for i, (piece, score, kind) in enumerate(spec["pieces"]):
        if kind == BYTE:
            m = _BYTE_PIECE.fullmatch(piece)
            if m is None:
                raise InputError(f"byte piece {i} is {piece!r}, expected <0xNN>", path=path)
            out.append(bytes([int(m.group(1), 16)]))
        elif kind in (NORMAL, USER_DEFINED):
            out.append(piece.replace("▁", " ").encode("utf-8"))
            scores[i] = score
        else:
            out.append(None)
    return TokenVocab(out, prefix_space="always" if spec["add_dummy_prefix"] else "never",
                      scores=scores, name=path)
