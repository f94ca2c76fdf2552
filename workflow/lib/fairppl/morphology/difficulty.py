"""Per-language difficulty (Mielke et al. 2019): log y_ij = n_i + d_j + eps_ij, fitted by MAP.

y_ij is the code length (bits) of unit i in language j; a unit counts in every language that has
it (missing translations, units dropped in one language, are simply absent cells). n_i is the
unit's log information content, d_j the language's log difficulty, eps_ij ~ N(0, sigma^2).

Identifiability: n_i + c and d_j - c fit equally well, so the difficulties are constrained to
**sum_j d_j = 0**: the geometric mean of the difficulties exp(d_j) is 1, and exp(d_j) is reported
as ``difficulty`` on the scale of Mielke et al.'s Europarl table (de 1.114 hardest, lv 0.930
easiest there), where a language of difficulty 1.1 needs 10% more bits than the average language
for the same content. (With spread of about 10% the arithmetic mean of exp(d_j) is 1.005 or so.)

Priors (weak, both optional; ``None`` is a flat prior):

- n_i ~ N(m, ``unit_sd``^2), m the mean of log y over all cells (so the prior is centred on the
  data's level; default ``unit_sd`` = 10, against a spread of log y of about 1 across units);
- d_j ~ N(0, ``language_sd``^2) on the constrained subspace sum_j d_j = 0 (default 1: a factor
  e^2 ~ 7 either way at two prior standard deviations, where real differences are ~1.5).

Fitting: given d the best n_i is a weighted mean in closed form, so n is profiled out and the
J - 1 free difficulties are fitted with L-BFGS-B on the profiled negative log posterior and its
analytic gradient (by the envelope theorem, the gradient at the profiled n). sigma^2 is the
residual variance over the residual degrees of freedom (cells - units - languages + 1), iterated
with the MAP to a fixed point (with flat priors the MAP does not depend on sigma: one pass).

Intervals (default ``laplace``): the posterior is Gaussian given sigma, so the Laplace
approximation is its exact covariance: the inverse of the Hessian block of d after the n block is
eliminated (the n block is diagonal, so the Schur complement is M^T diag(1 / (c_i + s^2/a^2)) M
over the unit-by-language incidence M, a J x J matrix), restricted to sum_j d_j = 0. It assumes
the model (one sigma for every cell, independent noise). ``bootstrap`` resamples units with
replacement (the draws of :func:`fairppl.stats.bootstrap.resample_counts`, a unit drawn twice
weighs twice) and refits: percentile intervals that do not lean on the noise model, at B fits'
cost. Intervals are computed for d_j and exponentiated. On synthetic tables (60 units x 6
languages, 30% missing; ``tests/bench_difficulty.py``) the 95% Laplace interval covered 0.945
of the true d_j with the model's normal noise, 0.955 with a different noise sd per unit and 0.949
with Student-t(3) noise; the percentile bootstrap 0.91 to 0.92 in all three: Laplace is the
default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.optimize import minimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.stats import norm

from ..core.errors import InputError
from ..stats.bootstrap import BootstrapSettings, percentile_interval, resample_counts
from ..stats.correlates import EXACT_DP_MAX_PAIRS, spearman
from ..stats.metrics import OPTIONAL_KEYS

#: Interval methods of :func:`fit_difficulty`.
INTERVALS = ("laplace", "bootstrap")

#: Columns of ``difficulty.csv`` beyond its keys (corpus, model, tokenizer), with their units.
DIFFICULTY_COLUMNS = {
    "language": "language id",
    "difficulty": "exp(d_j): bits relative to the average language for the same content "
                  "(geometric mean over languages 1)",
    "difficulty_low": "difficulty, lower end of the interval",
    "difficulty_high": "difficulty, upper end of the interval",
    "log_difficulty": "d_j (natural log of difficulty; sum over languages 0)",
    "log_difficulty_se": "standard error of d_j from the Laplace approximation (nats)",
    "n_units": "units with a score in this language, the cells the fit used (count)",
    "sigma": "residual standard deviation of log bits (nats), one per fit",
    "interval": "how the interval is computed (laplace or bootstrap)",
    "ci_level": "central coverage of the interval (fraction)",
}


@dataclass(frozen=True)
class DifficultyPriors:
    """Prior standard deviations of n_i (around the mean log y) and d_j (around 0); None: flat."""

    unit_sd: float | None = 10.0
    language_sd: float | None = 1.0

    def __post_init__(self):
        for name in ("unit_sd", "language_sd"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"DifficultyPriors.{name} must be positive or None, got {value}")


FLAT = DifficultyPriors(None, None)


@dataclass
class DifficultyFit:
    """A fitted model: ``languages`` in the order of ``log_difficulty`` (sum 0), its Laplace
    standard errors, the chosen interval (on d_j), cells per language, unit effects, sigma."""

    languages: list[str]
    log_difficulty: np.ndarray
    log_difficulty_se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_units: np.ndarray
    unit_ids: list[str]
    unit_effects: np.ndarray
    sigma: float
    interval: str
    level: float

    @property
    def difficulty(self) -> np.ndarray:
        return np.exp(self.log_difficulty)

    def table(self) -> pl.DataFrame:
        """One row per language (:data:`DIFFICULTY_COLUMNS`)."""
        return pl.DataFrame({
            "language": self.languages, "difficulty": self.difficulty,
            "difficulty_low": np.exp(self.low), "difficulty_high": np.exp(self.high),
            "log_difficulty": self.log_difficulty, "log_difficulty_se": self.log_difficulty_se,
            "n_units": self.n_units.astype(np.int64),
            "sigma": np.full(len(self.languages), self.sigma),
            "interval": [self.interval] * len(self.languages),
            "ci_level": np.full(len(self.languages), self.level)})


class _Cells:
    """The observed cells as index arrays: unit index, language index, log bits."""

    def __init__(self, cells: pl.DataFrame):
        missing = [c for c in ("unit_id", "language", "bits") if c not in cells.columns]
        if missing:
            raise InputError(f"difficulty model: the score table lacks columns {missing}; it has "
                             f"{cells.columns}")
        cells = cells.select("unit_id", "language", pl.col("bits").cast(pl.Float64))
        cells = cells.filter(pl.col("bits").is_not_null() & pl.col("bits").is_not_nan())
        bad = cells.filter(~(pl.col("bits").is_finite() & (pl.col("bits") > 0)))
        if bad.height:
            r = bad.row(0, named=True)
            raise InputError(f"difficulty model: {bad.height} cells with bits that are not "
                             f"positive and finite, e.g. unit {r['unit_id']!r} in "
                             f"{r['language']!r}: {r['bits']}")
        repeated = cells.group_by("unit_id", "language").len().filter(pl.col("len") > 1)
        if repeated.height:
            r = repeated.row(0, named=True)
            raise InputError(f"difficulty model: unit {r['unit_id']!r} scored {r['len']} times "
                             f"in {r['language']!r}: one score per unit and language expected")
        self.languages = sorted(set(cells["language"].to_list()))
        self.unit_ids = sorted(set(cells["unit_id"].to_list()))
        if len(self.languages) < 2:
            raise InputError(f"difficulty model: needs at least 2 languages, got "
                             f"{self.languages}")
        lang_index = {lang: j for j, lang in enumerate(self.languages)}
        unit_index = {u: i for i, u in enumerate(self.unit_ids)}
        self.lang = np.array([lang_index[v] for v in cells["language"]], dtype=np.int64)
        self.unit = np.array([unit_index[v] for v in cells["unit_id"]], dtype=np.int64)
        self.logy = np.log(cells["bits"].to_numpy())
        self.n_units, self.n_languages = len(self.unit_ids), len(self.languages)
        self._check_connected()

    def _check_connected(self) -> None:
        """Every language must be linked to every other through shared units, else their
        difficulties are not comparable (only the prior would tie them)."""
        n_u, n_l = self.n_units, self.n_languages
        graph = coo_matrix((np.ones(len(self.unit)), (self.unit, n_u + self.lang)),
                           shape=(n_u + n_l, n_u + n_l))
        _, labels = connected_components(graph, directed=False)
        groups: dict[int, list[str]] = {}
        for j, lang in enumerate(self.languages):
            groups.setdefault(int(labels[n_u + j]), []).append(lang)
        if len(groups) > 1:
            raise InputError("difficulty model: the languages fall into groups that share no "
                             "unit, so their difficulties cannot be compared: " + "; ".join(
                                 ", ".join(g) for g in groups.values()))


def _basis(n: int) -> np.ndarray:
    """An orthonormal basis (n x n-1) of the vectors that sum to 0."""
    q, _ = np.linalg.qr(np.eye(n) - 1.0 / n)
    return q[:, : n - 1]


class _Model:
    def __init__(self, cells: _Cells, priors: DifficultyPriors, weights: np.ndarray):
        self.c = cells
        self.w_cell = weights[cells.unit]  # a unit's weight (bootstrap count) on each of its cells
        self.w_unit = weights
        self.count = np.bincount(cells.unit, minlength=cells.n_units).astype(float)
        self.total = float(self.w_cell.sum())
        self.mean = float(self.w_cell @ cells.logy / self.total)
        self.priors = priors
        self.basis = _basis(cells.n_languages)

    def unit_effects(self, d: np.ndarray, s2: float) -> np.ndarray:
        c = self.c
        shrink = 0.0 if self.priors.unit_sd is None else s2 / self.priors.unit_sd ** 2
        sums = np.bincount(c.unit, weights=c.logy - d[c.lang], minlength=c.n_units)
        with np.errstate(invalid="ignore", divide="ignore"):
            n = (sums + shrink * self.mean) / (self.count + shrink)
        return np.nan_to_num(n, nan=self.mean)

    def residuals(self, d: np.ndarray, s2: float) -> np.ndarray:
        n = self.unit_effects(d, s2)
        return self.c.logy - n[self.c.unit] - d[self.c.lang]

    def objective(self, z: np.ndarray, s2: float) -> tuple[float, np.ndarray]:
        """Profiled negative log posterior / total weight, and its gradient in z."""
        c, pri = self.c, self.priors
        d = self.basis @ z
        n = self.unit_effects(d, s2)
        r = c.logy - n[c.unit] - d[c.lang]
        value = float(self.w_cell @ (r * r)) / (2 * s2)
        grad_d = -np.bincount(c.lang, weights=self.w_cell * r, minlength=c.n_languages) / s2
        if pri.unit_sd is not None:
            value += float(self.w_unit @ (n - self.mean) ** 2) / (2 * pri.unit_sd ** 2)
        if pri.language_sd is not None:
            value += float(z @ z) / (2 * pri.language_sd ** 2)
            grad_d = grad_d + d / pri.language_sd ** 2
        return value / self.total, (self.basis.T @ grad_d) / self.total

    def fit(self, s2: float, z0: np.ndarray) -> np.ndarray:
        result = minimize(self.objective, z0, args=(s2,), jac=True, method="L-BFGS-B",
                          options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 10_000})
        if not result.success and "ABNORMAL" not in str(result.message):
            raise RuntimeError(f"difficulty model: L-BFGS-B did not converge: {result.message}")
        return result.x

    def fit_with_sigma(self, z0: np.ndarray, max_rounds: int = 50) -> tuple[np.ndarray, float]:
        """MAP of z with sigma^2 = weighted RSS / residual degrees of freedom, iterated."""
        c = self.c
        used_units = int((self.w_unit > 0).sum())
        df = self.total - used_units - (c.n_languages - 1)
        if df <= 0:
            raise InputError(f"difficulty model: {self.total:g} cells for {used_units} units and "
                             f"{c.n_languages} languages leave no residual degrees of freedom")
        s2 = max(float(np.var(c.logy)), 1e-12)
        z = z0
        for _ in range(max_rounds):
            z = self.fit(s2, z)
            r = self.residuals(self.basis @ z, s2)
            new = max(float(self.w_cell @ (r * r)) / df, 1e-300)
            done = abs(new / s2 - 1.0) < 1e-9
            s2 = new
            if done or self.priors == FLAT:
                break
        return z, s2

    def covariance(self, s2: float) -> np.ndarray:
        """Laplace covariance of d (J x J, on sum d = 0), given sigma^2."""
        c, pri = self.c, self.priors
        shrink = 0.0 if pri.unit_sd is None else s2 / pri.unit_sd ** 2
        per_lang = np.bincount(c.lang, weights=self.w_cell, minlength=c.n_languages)
        with np.errstate(divide="ignore", invalid="ignore"):
            unit_scale = np.where(self.count + shrink > 0,
                                  self.w_unit / (self.count + shrink), 0.0)
        incidence = coo_matrix((np.ones(len(c.unit)), (c.unit, c.lang)),
                               shape=(c.n_units, c.n_languages)).tocsr()
        coupling = (incidence.T @ incidence.multiply(unit_scale[:, None])).toarray()
        schur = (np.diag(per_lang) - coupling) / s2
        h = self.basis.T @ schur @ self.basis
        if pri.language_sd is not None:
            h += np.eye(len(h)) / pri.language_sd ** 2
        return self.basis @ np.linalg.inv(h) @ self.basis.T


def fit_difficulty(cells: pl.DataFrame, priors: DifficultyPriors = DifficultyPriors(),
                   level: float = 0.95, interval: str = "laplace",
                   bootstrap: BootstrapSettings = BootstrapSettings(replicates=200)
                   ) -> DifficultyFit:
    """Fit the model to ``cells`` (unit_id, language, bits; one row per scored unit and
    language; rows with empty bits are missing cells and left out). ``interval`` is
    ``laplace`` (default) or ``bootstrap`` (over units, with ``bootstrap``'s replicates and
    seed; ``level`` is the coverage either way). Raises InputError on bits that are not positive
    and finite, a unit scored twice in one language, fewer than 2 languages, or languages that
    share no unit with the others."""
    if interval not in INTERVALS:
        raise ValueError(f"fit_difficulty: interval must be one of {INTERVALS}, got {interval!r}")
    data = _Cells(cells)
    model = _Model(data, priors, np.ones(data.n_units))
    z0 = model.basis.T @ _start(data)
    z, s2 = model.fit_with_sigma(z0)
    d = model.basis @ z
    se = np.sqrt(np.clip(np.diag(model.covariance(s2)), 0.0, None))
    if interval == "laplace":
        half = norm.ppf(0.5 + level / 2) * se
        low, high = d - half, d + half
    else:
        low, high = _bootstrap(data, priors, z, bootstrap, level)
    n_cells = np.bincount(data.lang, minlength=data.n_languages)
    return DifficultyFit(data.languages, d, se, low, high, n_cells, data.unit_ids,
                         model.unit_effects(d, s2), math.sqrt(s2), interval, level)


def _start(data: _Cells) -> np.ndarray:
    """Starting difficulties: each language's mean log y minus the mean over languages."""
    sums = np.bincount(data.lang, weights=data.logy, minlength=data.n_languages)
    means = sums / np.bincount(data.lang, minlength=data.n_languages)
    return means - means.mean()


def _bootstrap(data: _Cells, priors: DifficultyPriors, z_hat: np.ndarray,
               settings: BootstrapSettings, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of d over refits on units drawn with replacement. A replicate that
    drew no unit of a language says nothing about it and is left out of that language's
    interval."""
    counts = resample_counts(data.n_units, settings.replicates, settings.seed)
    reps = np.empty((settings.replicates, data.n_languages))
    for b, weights in enumerate(counts):
        model = _Model(data, priors, weights)
        z, _ = model.fit_with_sigma(z_hat)
        reps[b] = model.basis @ z
        seen = np.bincount(data.lang, weights=weights[data.unit], minlength=data.n_languages)
        reps[b, seen == 0] = np.nan
    low, high = np.empty(data.n_languages), np.empty(data.n_languages)
    for j in range(data.n_languages):
        column = reps[:, j][~np.isnan(reps[:, j])]
        if not column.size:
            raise InputError(f"difficulty model: no bootstrap replicate drew a unit of "
                             f"{data.languages[j]!r}")
        low[j], high[j] = percentile_interval(column, level)
    return low, high


def difficulty_table(scores: pl.DataFrame, priors: DifficultyPriors = DifficultyPriors(),
                     level: float = 0.95, interval: str = "laplace",
                     bootstrap: BootstrapSettings = BootstrapSettings(replicates=200)
                     ) -> pl.DataFrame:
    """One fit per (corpus, model, tokenizer) of per-unit ``scores`` (the key columns that are
    present, and ``train_corpus`` where present; unit_id, language, bits), each on every unit it
    scored: the rows of ``difficulty.csv`` (the keys, then :data:`DIFFICULTY_COLUMNS`)."""
    keys = [k for k in ["corpus", "model", "tokenizer"] + OPTIONAL_KEYS if k in scores.columns]
    parts = scores.group_by(keys, maintain_order=True) if keys else [((), scores)]
    out = []
    for key, part in parts:
        table = fit_difficulty(part, priors, level, interval, bootstrap).table()
        out.append(table.select(*[pl.lit(v, dtype=pl.String).alias(k)
                                  for k, v in zip(keys, key)], pl.all()))
    if out:
        return pl.concat(out)
    types = {"language": pl.String, "n_units": pl.Int64, "interval": pl.String}
    return pl.DataFrame(schema={k: pl.String for k in keys}
                        | {c: types.get(c, pl.Float64) for c in DIFFICULTY_COLUMNS})


#: Columns of :func:`difficulty_vs_bpec` beyond the keys, with their units.
AGREEMENT_COLUMNS = {
    "n_languages": "languages with a difficulty and a common-set BPEC (count)",
    "spearman_rho": "Spearman correlation of difficulty and BPEC across languages (-1 to 1)",
    "spearman_p": f"two-sided p-value (exact up to {EXACT_DP_MAX_PAIRS} languages)",
    "same_ranking": "the two rank the languages in the same order (true/false)",
    "largest_shift_language": "the language whose rank moves most (first in the BPEC order)",
    "largest_shift": "its rank by difficulty minus its rank by BPEC (1 = hardest; signed)",
}


def difficulty_vs_bpec(difficulty: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """How the difficulties (fitted on every unit each language scored) rank the languages
    against the BPEC on the units common to every language (``models``, the common-set
    bits-per-utterance table): one row per key (corpus, model, tokenizer and train_corpus where
    both tables have it) with :data:`AGREEMENT_COLUMNS`. Rows without a BPEC (closed
    vocabulary) are left out."""
    keys = [k for k in ["corpus", "model", "tokenizer"] + OPTIONAL_KEYS
            if k in difficulty.columns and k in models.columns]
    joined = difficulty.select(*keys, "language", "difficulty").join(
        models.filter(pl.col("bpec").is_not_null()).select(*keys, "language", "bpec"),
        on=keys + ["language"], how="inner", nulls_equal=True)
    rows = []
    for key, part in joined.sort(keys + ["language"], nulls_last=True).group_by(
            keys, maintain_order=True):
        by_bpec = part.sort("bpec", descending=True)["language"].to_list()
        by_difficulty = part.sort("difficulty", descending=True)["language"].to_list()
        shifts = {lang: by_difficulty.index(lang) - i for i, lang in enumerate(by_bpec)}
        worst = max(by_bpec, key=lambda lang: abs(shifts[lang]))
        rho, p, n = spearman(part["difficulty"].to_list(), part["bpec"].to_list(),
                             exact_max=EXACT_DP_MAX_PAIRS)
        rows.append(dict(zip(keys, key)) | {
            "n_languages": n, "spearman_rho": rho, "spearman_p": p,
            "same_ranking": by_bpec == by_difficulty, "largest_shift_language": worst,
            "largest_shift": shifts[worst]})
    schema = ({k: pl.String for k in keys} | {"n_languages": pl.Int64,
                                              "spearman_rho": pl.Float64,
                                              "spearman_p": pl.Float64,
                                              "same_ranking": pl.Boolean,
                                              "largest_shift_language": pl.String,
                                              "largest_shift": pl.Int64})
    return pl.DataFrame(rows, schema=schema, orient="row")
