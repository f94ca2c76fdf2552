"""Two analyses of the marginal likelihood over tokenizations.

**Samples-needed curves** (Cao & Rimell 2021, "incremental sums ordered by Q and by P"): how many
tokenizations carry the marginal? Under the study's subword n-gram over unigram pieces the exact
marginal log P(S) is known at full length (:func:`fairppl.marginal.exact.ngram_marginal`). Per
unit, :func:`unit_curves` draws K distinct tokenizations without replacement from the unigram
lattice (:func:`~fairppl.marginal.lattice.sample_wor` at temperature tau) and adds the lattice's K
best paths (:func:`~fairppl.marginal.lattice.nbest`), scores each distinct path once with the
n-gram (``lm.logp``), and orders them by their proposal probability Q and, separately, by their
LM probability P. The curve at n is ``log(sum of P over the first n paths) - log P(S)``
(:func:`missing_curve`; nats, <= 0), for n = 1 .. the number of distinct paths (K to 2K; all of
them when the lattice has at most K paths). Ordered by P the curve is the best any n paths of the
set can do, so it lies on or above the Q-ordered one. The unigram lattice omits the byte-fallback
spellings of characters that have a piece of their own, which P(S) sums over: even all of its
paths miss ``support_missing_nats`` (the n-gram forward algorithm over the lattice's own arcs
minus log P(S)), so a curve can end below 0. :func:`samples_needed_summary` reports per language
and order the median over units of the paths needed to reach 99% and 99.9% of P(S): a unit that
does not reach a level within its paths counts as needing more than any (the median is null when
at least half do not), and the share of units that reach it is reported beside it.

**Q(default) bins** (Chirkova et al. 2023, Table 2): per block of the LM-guided proposal, the
proposal probability of the block's default tokenization given the default prefix, recorded by
:func:`fairppl.marginal.lm_guided.lm_guided_marginal` (``blocks_out``) while the study's
lm-guided runs estimate the marginal (:func:`fairppl.marginal.units.block_table`). :func:`qdefault_bins` counts blocks by Q(default) in ``BIN_LABELS``
([0,0.1), [0.1,0.5), [0.5,0.9), [0.9,0.99), [0.99,1]) per group: number and share of blocks,
mean block length in characters (Unicode code points, the separating space included) and up to
five example blocks (the most frequent strings, ties by string).

Every log-probability is in nats (float64).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from ..core.errors import InputError
from ..core.runner import document_rng

#: The two orders of a samples-needed curve: by proposal probability Q, by LM probability P.
ORDERS = ("Q", "P")
#: Shares of the exact marginal whose paths-needed are summarised, and their column suffixes.
MASS_LEVELS = {0.99: "99pct", 0.999: "99_9pct"}
#: Lower edges of the Q(default) bins; the last bin is [0.99, 1] (1 included).
BIN_EDGES = (0.0, 0.1, 0.5, 0.9, 0.99)
BIN_LABELS = ("[0,0.1)", "[0.1,0.5)", "[0.5,0.9)", "[0.9,0.99)", "[0.99,1]")
#: Example blocks shown per bin.
N_EXAMPLES = 5


# ---------------------------------------------------------------------------------------------
# Samples-needed curves


def missing_curve(logp: np.ndarray, key: np.ndarray, logp_exact: float) -> np.ndarray:
    """``log(sum_{i <= n} exp(logp[order[i]])) - logp_exact`` for n = 1..len(logp), nats, where
    ``order`` sorts ``key`` descending (ties: input order). Non-decreasing; 0 once the summed
    paths hold all of ``exp(logp_exact)``."""
    logp = np.asarray(logp, dtype=np.float64)
    key = np.asarray(key, dtype=np.float64)
    if logp.shape != key.shape or logp.ndim != 1 or logp.size == 0:
        raise ValueError(f"logp {logp.shape} and key {key.shape}: expected two equal, non-empty "
                         f"vectors")
    order = np.argsort(-key, kind="stable")
    return np.logaddexp.accumulate(logp[order]) - float(logp_exact)


def paths_needed(curve: np.ndarray, share: float) -> int | None:
    """The smallest n (1-based) whose curve value reaches ``log(share)``; None if none does."""
    hit = np.flatnonzero(np.asarray(curve) >= math.log(share))
    return int(hit[0]) + 1 if hit.size else None


@dataclass(frozen=True)
class UnitCurves:
    """One unit's curves: ``curves[order]`` (nats per n, see :func:`missing_curve`) over the
    ``paths`` scored (distinct, with ``logq`` at tau and ``logp`` under the LM, nats);
    ``logp_exact``: log P(S) over every tokenization; ``support_missing_nats``: log of the sum
    over every path of the unigram lattice minus ``logp_exact`` (<= 0); ``n_lattice_paths``:
    the lattice's path count (a Python int)."""

    paths: list
    logq: np.ndarray
    logp: np.ndarray
    logp_exact: float
    support_missing_nats: float
    n_lattice_paths: int
    curves: dict


def unit_curves(lm, vocab, model, text: str, K: int, rng: np.random.Generator,
                tau: float = 1.0) -> UnitCurves:
    """The samples-needed curves of ``text`` (module docstring) under ``lm``, a
    :class:`~fairppl.tokenlm.lm_kenlm.KenLMTokenLM` over the pieces of the unigram model ``model``
    (:class:`~fairppl.marginal.unigram.UnigramModel`, same ids), ``vocab`` its TokenVocab: K
    paths without replacement at temperature ``tau`` plus the K best paths."""
    from .exact import ngram_marginal
    from .lattice import count_paths, forward, nbest, sample_wor
    from .unigram import lattice

    if K < 1:
        raise ValueError(f"the number of samples K must be at least 1, got {K}")
    lat = lattice(model, text)
    drawn, drawn_logq, _ = sample_wor(lat, K, rng, tau)
    logz = forward(lat, tau)[1]
    found = dict(zip(drawn, drawn_logq.tolist()))
    for path, score in nbest(lat, K):
        found.setdefault(path, score / tau - logz)
    paths = list(found)
    logq = np.array([found[p] for p in paths])
    logp = np.asarray(lm.logp(paths), dtype=np.float64)
    kw = dict(bos=lm.start_id is not None, eos=lm.end_id is not None, unk_cost=-lm.unk_logp)
    exact = ngram_marginal(lm.model, vocab, text, lm.words, **kw).logp
    support = ngram_marginal(lm.model, vocab, text, lm.words, lattice=lat, **kw).logp
    curves = {"Q": missing_curve(logp, logq, exact), "P": missing_curve(logp, logp, exact)}
    return UnitCurves(paths, logq, logp, exact, support - exact, count_paths(lat), curves)


def samples_needed_curves(lm, vocab, model, units: pl.DataFrame, *, K: int, tau: float,
                          seed: int, keys: dict) -> pl.DataFrame:
    """:func:`unit_curves` for every row of ``units`` (columns ``unit_id``, ``text``), each unit
    seeded by :func:`~fairppl.core.runner.document_rng` from ``seed`` and
    ``"<unit_id>|samples-needed"``. One row per (unit, order, n): the ``keys`` columns,
    ``unit_id``, ``n_chars``, ``n_lattice_paths`` (float: it can pass 2**63), ``logp_exact_nats``,
    ``support_missing_nats``, ``K``, ``tau``, ``order`` (Q or P), ``n_paths`` (n) and
    ``missing_nats`` (the curve)."""
    rows = []
    for uid, text in zip(units["unit_id"].cast(pl.String), units["text"]):
        try:
            rng = document_rng(seed, f"{uid}|samples-needed")
            got = unit_curves(lm, vocab, model, text, K, rng, tau)
        except ValueError as err:
            raise InputError(f"{keys.get('language')} unit {uid}: {err}") from None
        base = dict(keys) | {"unit_id": uid, "n_chars": len(text),
                             "n_lattice_paths": float(got.n_lattice_paths),
                             "logp_exact_nats": got.logp_exact,
                             "support_missing_nats": got.support_missing_nats, "K": K,
                             "tau": float(tau)}
        for order in ORDERS:
            for n, value in enumerate(got.curves[order].tolist(), start=1):
                rows.append(base | {"order": order, "n_paths": n, "missing_nats": value})
    return pl.DataFrame(rows, infer_schema_length=None)


def _median_needed(needed: list) -> float | None:
    """Median of paths-needed with None (not reached) as more than any; None if that is the
    median."""
    value = float(np.median([math.inf if n is None else n for n in needed]))
    return None if math.isinf(value) else value


def samples_needed_summary(curves: pl.DataFrame, by: Sequence[str] = ("corpus", "language",
                                                                      "model", "tokenizer")
                           ) -> pl.DataFrame:
    """Per ``by`` group and order: ``n_units``, the median ``support_missing_nats``, and for each
    of :data:`MASS_LEVELS` the median over units of the paths needed to reach that share of the
    exact marginal (``median_paths_to_99pct``, null when at least half the units do not reach it)
    and the share of units that reach it (``share_units_reaching_99pct``, 0-1)."""
    by = [c for c in by if c in curves.columns]
    rows = []
    for (group, order), part in _groups(curves, [*by, "order"]) if curves.height else ():
        per_unit = part.group_by("unit_id", maintain_order=True).agg(
            pl.col("missing_nats").sort_by("n_paths"), pl.col("support_missing_nats").first())
        row = dict(zip(by, group)) | {"order": order, "n_units": per_unit.height,
                                      "median_support_missing_nats":
                                          float(per_unit["support_missing_nats"].median())}
        for share, suffix in MASS_LEVELS.items():
            needed = [paths_needed(np.array(c), share) for c in per_unit["missing_nats"]]
            row[f"median_paths_to_{suffix}"] = _median_needed(needed)
            row[f"share_units_reaching_{suffix}"] = float(np.mean([n is not None
                                                                   for n in needed]))
        rows.append(row)
    # typed even with no rows (an empty ``curves`` gives the default keys as text columns)
    keys = by if curves.columns else ["corpus", "language", "model", "tokenizer"]
    schema = {c: curves.schema.get(c, pl.String) for c in keys} | {
        "order": pl.String, "n_units": pl.Int64, "median_support_missing_nats": pl.Float64}
    for suffix in MASS_LEVELS.values():
        schema |= {f"median_paths_to_{suffix}": pl.Float64,
                   f"share_units_reaching_{suffix}": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def read_curves(paths: Sequence[str]) -> pl.DataFrame:
    """The per-language samples-needed curve CSVs (rule marginal_samples_needed) as one frame,
    ``missing_nats`` as floats; an empty frame when there are none (no marginal stage)."""
    frames = [pl.read_csv(p, infer_schema_length=None).with_columns(
        pl.col("missing_nats").cast(pl.Float64)) for p in paths]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def samples_needed_quantiles(curves: pl.DataFrame) -> pl.DataFrame:
    """The samples-needed curves drawn, units pooled (every language): per ``order`` (Q or P)
    and number of paths n = 1 .. the most any unit drew, the 25th, 50th and 75th percentile over
    units of the share of the exact marginal that the first n paths hold (``share_*_percent``,
    100 * exp(missing_nats)). A unit with fewer distinct paths keeps its last share: those are
    all the paths its samples found."""
    schema = {"order": pl.String, "n_paths": pl.Int64, "n_units": pl.Int64,
              "share_q25_percent": pl.Float64, "share_median_percent": pl.Float64,
              "share_q75_percent": pl.Float64}
    rows = []
    unit = [c for c in ("corpus", "language", "model", "tokenizer", "unit_id")
            if c in curves.columns]
    for (_, order), part in _groups(curves, ["order"]) if curves.height else ():
        per_unit = part.group_by(unit, maintain_order=True).agg(
            pl.col("missing_nats").sort_by("n_paths"))["missing_nats"].to_list()
        width = max(len(c) for c in per_unit)
        # one row per unit, its last value carried to the widest unit's length
        grid = np.array([c + [c[-1]] * (width - len(c)) for c in per_unit], dtype=float)
        share = 100.0 * np.exp(np.minimum(grid, 0.0))
        q25, q50, q75 = np.percentile(share, [25, 50, 75], axis=0)
        rows += [(order, n + 1, len(per_unit), float(q25[n]), float(q50[n]), float(q75[n]))
                 for n in range(width)]
    return pl.DataFrame(rows, schema=schema, orient="row")


def _groups(frame: pl.DataFrame, cols: list[str]):
    """``((key values but the last, last key value), sub-frame)`` per distinct key, in order of
    first appearance."""
    for values, part in frame.group_by(cols, maintain_order=True):
        yield (tuple(values[:-1]), values[-1]), part


# ---------------------------------------------------------------------------------------------
# Q(default) bins


def qdefault_bin(logq: np.ndarray) -> np.ndarray:
    """Index into :data:`BIN_LABELS` of each Q(default) = exp(``logq``), nats in. Compared in
    log space (``logq >= log(edge)``), so a value stored as the log of an edge falls in the bin
    that the edge opens."""
    logq = np.asarray(logq, dtype=np.float64)
    if np.isnan(logq).any() or (logq > 1e-9).any():
        raise ValueError("log Q(default) must be <= 0 nats and not NaN")
    with np.errstate(divide="ignore"):
        edges = np.log(np.array(BIN_EDGES))
    return np.searchsorted(edges, logq, side="right") - 1


def qdefault_bins(records: pl.DataFrame, by: Sequence[str] = ("corpus", "language", "model",
                                                              "tokenizer")) -> pl.DataFrame:
    """Per group of the ``by`` columns that ``records`` has, and bin (all five, empty ones
    included): ``n_blocks``,
    ``share_blocks_pct`` (percent of the group's blocks), ``mean_block_chars`` (null for an empty
    bin) and ``examples`` (a JSON list of up to :data:`N_EXAMPLES` block strings, most frequent
    first, ties by string). ``records``: columns ``by``, ``block``, ``block_chars`` and
    ``logq_default_nats``."""
    by = [c for c in by if c in records.columns]
    if not by:
        raise InputError("Q(default) records have none of the grouping columns: expected some "
                         "of corpus, language, model, tokenizer")
    need = [*by, "block", "block_chars", "logq_default_nats"]
    missing = [c for c in need if c not in records.columns]
    if missing:
        raise InputError(f"Q(default) records lack columns {missing}: expected {need}")
    binned = records.with_columns(pl.Series("bin", qdefault_bin(records["logq_default_nats"]
                                                                .to_numpy())))
    rows = []
    for values, part in binned.group_by(list(by), maintain_order=True):
        total = part.height
        for b, label in enumerate(BIN_LABELS):
            inside = part.filter(pl.col("bin") == b)
            counts = Counter(inside["block"].to_list())
            top = sorted(counts, key=lambda s: (-counts[s], s))[:N_EXAMPLES]
            rows.append(dict(zip(by, values)) | {
                "bin": label, "n_blocks": inside.height,
                "share_blocks_pct": 100.0 * inside.height / total,
                "mean_block_chars": float(inside["block_chars"].mean()) if inside.height
                else None,
                "examples": json.dumps(top, ensure_ascii=False)})
    schema = {c: records.schema[c] for c in by} | {
        "bin": pl.String, "n_blocks": pl.Int64, "share_blocks_pct": pl.Float64,
        "mean_block_chars": pl.Float64, "examples": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")
