"""A SentencePiece unigram model as a segmentation lattice: Cao & Rimell's (2021) proposal
distribution over the tokenizations of a text, per document or consistent per word type.

Lattice (``lattice(model, text)``), reproducing sentencepiece 0.2.1's ``PopulateNodes``:

* the text is normalised as SentencePiece does with identity rules: spaces become ``"▁"``, a
  ``"▁"`` is prepended when ``add_dummy_prefix`` (non-empty text), and with
  ``remove_extra_whitespaces`` leading/trailing spaces go and runs of spaces become one. Models
  with a precompiled normalisation map (e.g. NFKC) or whitespace as suffix are refused.
* nodes are BYTE offsets of ``text_bytes(model, text)``: the normalised text with ``"▁"`` read as
  the space byte, UTF-8 encoded (the bytes the tokens decode to, as
  ``fairppl.marginal.vocab.TokenVocab.text_bytes``); a character of several bytes has inner
  nodes that only byte-fallback chains use.
* every normal piece matching at a character gets an arc with ``logw`` = its score; a
  user-defined piece gets SentencePiece's ``length * max_score - 0.1`` (``length`` in
  characters), where ``max_score`` is the largest normal score but at least FLT_MIN: -0.1 in
  practice, as unigram scores are negative.
* a character where no piece of exactly one character starts gets SentencePiece's unknown node,
  of score ``min_score - 10`` (``min_score`` the smallest normal piece score): the ``<unk>`` arc,
  or with ``byte_fallback`` the chain of its UTF-8 byte pieces ``<0xNN>``, the first carrying the
  whole unknown score and the others 0.0 (SentencePiece scores the unknown node once, then spells
  it in byte pieces). Without byte fallback SentencePiece's output merges a run of adjacent
  ``<unk>`` pieces into one; the lattice keeps one ``<unk>`` arc per character (same score).

Temperature: Q_tau(T) is proportional to ``exp(score(T) / tau)``; sentencepiece's ``alpha``
(``sample_encode_and_score``, ``calculate_entropy``) is the inverse temperature ``1 / tau``.
Every log-probability is in nats.

Document modes (``sample_document``): the text's whitespace units (``"▁"`` + word, split before
each ``"▁"``) are tokenized independently by the unigram model: no piece crosses a unit, so the
document lattice factorises over units.

* ``"independent"``: Q over all tokenizations of the document (the lattice of the whole text);
  each occurrence of a word is segmented on its own.
* ``"consistent"`` (Cao & Rimell section 2): one tokenization drawn per distinct unit type and
  reused for every occurrence. Q_c(T) = product over DISTINCT types u of Q_u(T_u), zero for a
  tokenization that segments two occurrences of a type differently. Its support is only the
  consistent tokenizations, so the importance-sampling estimate ``mean P(T)/Q_c(T)`` is unbiased
  for ``sum over consistent T of P(T)``: a lower bound on the full marginal P(S) (equal when no
  type repeats). Q_c is the path distribution of the lattice that chains each distinct type's
  lattice once (``type_lattice``), so WR, WOR and include-best sampling work unchanged there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from ..core.integrity import verify
from ..tokenizers.spm_model import (BYTE, NORMAL, UNKNOWN, UNUSED, USER_DEFINED,
                                    parse_spm_model)
from .lattice import (Lattice, count_paths, enumerate_paths, forward, path_arcs, sample,
                      sample_wor)

SPACE = "\u2581"  # SentencePiece's whitespace symbol
UNK_PENALTY = 10.0  # sentencepiece's kUnkPenalty: unknown score = min normal score - 10
MODES = ("independent", "consistent")


@dataclass(frozen=True, eq=False)
class UnigramModel:
    """The parts of a SentencePiece unigram ``.model`` a lattice needs (scores in nats)."""
    pieces: list
    scores: np.ndarray  # float64 [V], the model's float32 scores
    types: np.ndarray  # int64 [V], spm_model.NORMAL/UNKNOWN/CONTROL/USER_DEFINED/UNUSED/BYTE
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    byte_fallback: bool
    source: str = "<bytes>"

    @classmethod
    def from_file(cls, model_file) -> "UnigramModel":
        verify(model_file)  # a sealed model whose bytes changed is refused
        return cls.from_bytes(Path(model_file).read_bytes(), str(model_file))

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>") -> "UnigramModel":
        spec = parse_spm_model(data)
        if spec["model_type"] != "unigram":
            raise InputError(f"{source}: model_type is {spec['model_type']!r}, expected a "
                             f"unigram SentencePiece model")
        if spec["precompiled_charsmap"] or spec["normalizer_name"] not in ("", "identity"):
            raise InputError(f"{source}: normalizer {spec['normalizer_name']!r} with a "
                             f"precompiled map is not supported, expected identity normalisation")
        if spec["treat_whitespace_as_suffix"] or not spec["escape_whitespaces"]:
            raise InputError(f"{source}: expected whitespace escaped as a '▁' prefix "
                             f"(treat_whitespace_as_suffix false, escape_whitespaces true)")
        pieces = [p for p, _, _ in spec["pieces"]]
        model = cls(pieces, np.array([s for _, s, _ in spec["pieces"]], dtype=np.float64),
                    np.array([t for _, _, t in spec["pieces"]], dtype=np.int64),
                    spec["add_dummy_prefix"], spec["remove_extra_whitespaces"],
                    spec["byte_fallback"], source)
        if model.byte_fallback and len(model._byte_ids) != 256:
            raise InputError(f"{source}: byte_fallback is set but {len(model._byte_ids)} of the "
                             f"256 byte pieces <0x00>..<0xFF> are present")
        return model

    @property
    def _normal(self) -> np.ndarray:
        return self.scores[self.types == NORMAL]

    @property
    def unk_score(self) -> float:
        """SentencePiece's unknown-node score: ``min_score - 10`` in float32 arithmetic."""
        return float(np.float32(np.float32(self._normal.min()) - np.float32(UNK_PENALTY)))

    def __post_init__(self):
        matchable = {}
        for i, (piece, kind) in enumerate(zip(self.pieces, self.types.tolist())):
            if kind in (NORMAL, USER_DEFINED):
                matchable[piece] = i
        unk = np.flatnonzero(self.types == UNKNOWN)
        object.__setattr__(self, "_match", matchable)
        object.__setattr__(self, "_maxlen", max((len(p) for p in matchable), default=0))
        object.__setattr__(self, "unk_id", int(unk[0]) if unk.size else None)
        object.__setattr__(self, "_byte_ids", {
            int(p[3:5], 16): i for i, (p, k) in enumerate(zip(self.pieces, self.types.tolist()))
            if k == BYTE and len(p) == 6 and p.startswith("<0x")})
        # sentencepiece starts its running maximum at FLT_MIN (the smallest POSITIVE float),
        # so with all normal scores negative a user-defined piece scores float32(-0.1)
        top = max(np.float32(self._normal.max()), np.finfo(np.float32).tiny)
        object.__setattr__(self, "_user_scores", {
            i: float(np.float32(len(p) * top - 0.1)) for p, i in matchable.items()
            if self.types[i] == USER_DEFINED})

    def normalize(self, text: str) -> str:
        """SentencePiece's normalised form of ``text`` (identity rules; see the module doc)."""
        if self.remove_extra_whitespaces:
            text = " ".join(part for part in text.split(" ") if part)
        if not text:
            return ""
        text = text.replace(" ", SPACE)
        return SPACE + text if self.add_dummy_prefix else text


def text_bytes(model: UnigramModel, text: str) -> bytes:
    """The bytes a tokenization of ``text`` spells: its normalised form, ``"▁"`` as a space."""
    return model.normalize(text).replace(SPACE, " ").encode("utf-8")


def _char_bytes(ch: str) -> int:
    return 1 if ch == SPACE else len(ch.encode("utf-8"))


def _arcs(model: UnigramModel, norm: str, offset: int = 0) -> tuple[list, int]:
    """Arcs ``(start, end, token, logw)`` of the normalised string ``norm`` at byte ``offset``;
    returns them and the byte length of ``norm``."""
    pos = [offset]
    for ch in norm:
        pos.append(pos[-1] + _char_bytes(ch))
    arcs, match, users = [], model._match, model._user_scores
    for i, ch in enumerate(norm):
        single = False
        for length in range(1, min(model._maxlen, len(norm) - i) + 1):
            tok = match.get(norm[i:i + length])
            if tok is None or model.types[tok] == UNUSED:
                continue
            arcs.append((pos[i], pos[i + length], tok, users.get(tok, model.scores[tok])))
            single |= length == 1
        if single:
            continue
        if ch == SPACE:
            raise InputError(f"{model.source}: no piece covers the whitespace symbol '▁'")
        if model.byte_fallback:
            raw = ch.encode("utf-8")
            for j, b in enumerate(raw):
                arcs.append((pos[i] + j, pos[i] + j + 1, model._byte_ids[b],
                             model.unk_score if j == 0 else 0.0))
        elif model.unk_id is not None:
            arcs.append((pos[i], pos[i + 1], model.unk_id, model.unk_score))
        else:
            raise InputError(f"{model.source}: no piece covers {ch!r} and the model has neither "
                             f"an unknown piece nor byte fallback")
    return arcs, pos[-1] - offset


def lattice(model: UnigramModel, text: str) -> Lattice:
    """The SentencePiece unigram lattice of ``text`` over the byte offsets of
    ``text_bytes(model, text)``; ``logw`` = piece scores (nats)."""
    arcs, n = _arcs(model, model.normalize(text))
    return Lattice.from_arcs(n, arcs)


def units(model: UnigramModel, text: str) -> list[str]:
    """The whitespace units of the normalised text: split before every ``"▁"``; their
    concatenation is ``model.normalize(text)``."""
    norm, out = model.normalize(text), []
    for ch in norm:
        if ch == SPACE or not out:
            out.append(ch)
        else:
            out[-1] += ch
    return out


@dataclass(frozen=True, eq=False)
class TypeLattice:
    """The consistent-mode proposal: the lattices of the distinct units chained once each."""
    lattice: Lattice
    types: list  # distinct units, in order of first occurrence
    bounds: list  # byte offset where each type starts in ``lattice``, plus the end
    occurrences: list  # the document's units as indices into ``types``

    def expand(self, path) -> tuple:
        """The document's token ids for a path of the type lattice (each type's segmentation
        repeated at every occurrence)."""
        per_type: list[list[int]] = [[] for _ in self.types]
        t = 0
        for arc in path_arcs(self.lattice, path):
            while self.lattice.start[arc] >= self.bounds[t + 1]:
                t += 1
            per_type[t].append(int(self.lattice.token[arc]))
        return tuple(tok for u in self.occurrences for tok in per_type[u])


def type_lattice(model: UnigramModel, text: str) -> TypeLattice:
    """Chain the lattice of each distinct whitespace unit of ``text`` once (consistent mode)."""
    doc = units(model, text)
    types = list(dict.fromkeys(doc))
    index = {u: i for i, u in enumerate(types)}
    arcs, bounds = [], [0]
    for u in types:
        more, n = _arcs(model, u, bounds[-1])
        arcs += more
        bounds.append(bounds[-1] + n)
    return TypeLattice(Lattice.from_arcs(bounds[-1], arcs), types, bounds,
                       [index[u] for u in doc])


def _mode_lattice(model, text, mode):
    if mode == "independent":
        return lattice(model, text), (lambda path: tuple(path))
    if mode == "consistent":
        tl = type_lattice(model, text)
        return tl.lattice, tl.expand
    raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")


def sample_document(model: UnigramModel, text: str, k: int, rng: np.random.Generator,
                    tau: float = 1.0, mode: str = "independent", wor: bool = False,
                    include_best: bool = False) -> list[tuple[tuple, float, float]]:
    """``k`` tokenizations of ``text`` from Q_tau (``mode`` as in the module docstring) as
    ``(ids, logq, log_inclusion)``, nats. ``logq`` is log Q_tau of the sample under the mode's
    proposal (consistent: a sum over distinct types, not occurrences).

    ``log_inclusion`` is what each sample's P is divided by: ``sum_i P(T_i) /
    exp(log_inclusion_i)`` is unbiased for the sum of P over the proposal's support. Without
    replacement it is the inclusion probability (``lattice.sample_wor``; ``include_best`` puts
    the Viterbi path first with 0.0); with replacement it is ``log(k) + logq`` (the expected
    number of copies), so the same sum is the ordinary importance-sampling mean of P/Q."""
    if include_best and not wor:
        raise ValueError("include_best needs wor=True (Cao & Rimell's 1-best + WOR estimator)")
    lat, expand = _mode_lattice(model, text, mode)
    if wor:
        paths, logq, incl = sample_wor(lat, k, rng, tau, include_best)
    else:
        paths, logq = sample(lat, k, rng, tau)
        incl = logq + np.log(k)
    return [(expand(p), float(q), float(i)) for p, q, i in zip(paths, logq, incl)]


@dataclass(frozen=True)
class Proposal:
    """Tokenizations of one text with their proposal log-probabilities (nats)."""
    ids: list  # tuples of token ids, the document's order
    logq: np.ndarray
    log_inclusion: np.ndarray  # see sample_document
    exact: bool  # True: every path of the proposal's support, log_inclusion all 0.0
    n_paths: int  # paths in the proposal's lattice (Python int)


def proposal(model: UnigramModel, text: str, k: int, rng: np.random.Generator,
             tau: float = 1.0, mode: str = "independent", wor: bool = False,
             include_best: bool = False) -> Proposal:
    """All paths with exact ``logq`` and ``exact=True`` when the mode's lattice has at most
    ``k`` of them (then the sum of P over them is the marginal itself), else
    ``sample_document``'s ``k`` samples."""
    lat, expand = _mode_lattice(model, text, mode)
    n_paths = count_paths(lat)
    if n_paths <= k:
        paths = enumerate_paths(lat, k)
        logz = forward(lat, tau)[1]
        logq = np.array([lat.logw[path_arcs(lat, p)].sum() / tau - logz for p in paths])
        return Proposal([expand(p) for p in paths], logq, np.zeros(len(paths)), True, n_paths)
    got = sample_document(model, text, k, rng, tau, mode, wor, include_best)
    return Proposal([g[0] for g in got], np.array([g[1] for g in got]),
                    np.array([g[2] for g in got]), False, n_paths)
