"""Per-language difficulty (Mielke et al. 2019, "What kind of language is hard to
language-model?", section 2): the bits y_ij of unit i in language j explained by a unit effect
and a language difficulty d_j, fitted on every unit each model scored (missing translations,
units dropped in one language, are simply absent cells). A "language" j is a sheet id, i.e. one
translation, as in the authors' Model 2, which fits one d_j per Bible: two translations of one
language (K'iche' and K'iche' SIL) get a d_j each, and :mod:`.translations` sets their spread
beside the spread between languages.

Two models (``model``):

- ``heteroscedastic``, the default: the model behind the authors' published difficulties, their
  "Model 2" (the authors' Stan code names it MODEL2_SCALEDSIMPLEXLEARNED and fits it by MAP
  with no prior statement, i.e. by maximum likelihood). A unit carries n_i > 0 units of
  information, each costing a lognormal number of bits with log-variance sigma^2, and y_ij is
  approximated by one lognormal (Fenton 1960's moment matching):
  ln y_ij ~ N(ln n_i + (sigma^2 - s_i^2) / 2 + ln d_j + ln c, s_i^2) with
  s_i^2 = ln(1 + (e^{sigma^2} - 1) / n_i): long units vary less, relatively, than short ones.
  The difficulties are a simplex scaled to sum to J (their **arithmetic** mean is 1) and c is
  a learned scale. The likelihood depends on n_i and sigma only through
  v_i = ln(n_i / (e^{sigma^2} - 1)) (the mean's extra ln(e^{sigma^2} - 1) + sigma^2 / 2 is one
  constant for every cell, absorbed by c), so sigma and c are not identified separately;
  the difficulties are. The fit therefore runs in the identified parameters
  (v_i, e_j = ln d_j + const): damped Newton steps on the arrowhead Hessian (each unit couples
  only with its languages), started from the homoscedastic fit. ``sigma`` reports the median
  over units of s_i, the identified spread.
- ``homoscedastic``: ln y_ij = n_i + d_j + eps_ij with one eps ~ N(0, sigma^2) for every cell,
  fitted by MAP under weak priors (below); with flat priors on a complete table it is the
  two-way analysis of variance (d_j = column mean of ln y - grand mean).

Normalisation (``normalisation``): ``arithmetic`` (default), as the authors published their
difficulties (German 1.114 hardest, Latvian 0.930 easiest on Europarl), so numbers put beside
theirs are on their scale; ``geometric``: sum_j ln d_j = 0. Both are a common shift of ln d, so
they rank the languages alike; with a spread of about 10% they differ by about 0.5%. Every row of
``difficulty.csv`` names its model and its normalisation.

Priors of the homoscedastic model (weak, both optional; ``None`` is a flat prior):

- n_i ~ N(m, ``unit_sd``^2), m the mean of log y over all cells (so the prior is centred on the
  data's level; default ``unit_sd`` = 10, against a spread of log y of about 1 across units);
- d_j ~ N(0, ``language_sd``^2) on the constrained subspace sum_j d_j = 0 (default 1: a factor
  e^2 ~ 7 either way at two prior standard deviations, where real differences are ~1.5).

Its fit: given d the best n_i is a weighted mean in closed form, so n is profiled out and the
J - 1 free difficulties are fitted with L-BFGS-B on the profiled negative log posterior and its
analytic gradient (by the envelope theorem, the gradient at the profiled n). sigma^2 is the
residual variance over the residual degrees of freedom (cells - units - languages + 1), iterated
with the MAP to a fixed point (with flat priors the MAP does not depend on sigma: one pass).

Intervals (default ``laplace``), computed for ln d_j and exponentiated:

- Laplace, homoscedastic: the posterior is Gaussian given sigma, so the Laplace approximation is
  its exact covariance: the inverse of the Hessian block of d after the n block is eliminated
  (the Schur complement M^T diag(1 / (c_i + s^2/a^2)) M over the unit-by-language incidence M),
  on sum_j d_j = 0.
- Laplace, heteroscedastic: the language block of the inverse Hessian of the negative log
  likelihood at the fit (the unit block, diagonal, eliminated), times the dispersion
  sum (r_ij / s_i)^2 / (cells - units - languages): maximum likelihood with a free effect per
  unit underestimates the variances by about (J - 1) / J (Neyman & Scott 1948), which would
  leave intervals too short (coverage 0.922 instead of 0.95 with 6 languages and 60 units,
  500 simulated tables; 0.948 with the dispersion, s.e. 0.004); the dispersion
  plays the role of the homoscedastic fit's degrees-of-freedom correction.
- Either way the covariance is carried through the normalisation by the delta method (its
  Jacobian removes the common shift).
- ``bootstrap`` resamples units with replacement (the draws of
  :func:`fairppl.stats.bootstrap.resample_counts`, a unit drawn twice weighs twice) and refits:
  percentile intervals that do not lean on the noise model, at B fits' cost.

``bench/bench_difficulty.py`` prints the coverage of the true difficulties by each model's 95%
Laplace intervals on data drawn from each model, complete and with 30% of the cells missing:
0.947 to 0.951 where the model is the one that drew the data (s.e. 0.006); the homoscedastic
intervals also hold on Model 2's data (0.948 to 0.956, 17% wider), while Model 2's fall to 0.86
to 0.89 on homoscedastic data, where its tie of a unit's variance to its level is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.optimize import minimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit
from scipy.stats import norm

from ..core.errors import InputError
from ..stats.bootstrap import BootstrapSettings, percentile_interval, resample_counts
from ..stats.correlates import EXACT_DP_MAX_PAIRS, spearman
from ..stats.metrics import OPTIONAL_KEYS
from .questions import question_of
from .regression import with_adjusted_p

#: Interval methods of :func:`fit_difficulty`.
INTERVALS = ("laplace", "bootstrap")

#: The models of :func:`fit_difficulty`: Mielke et al.'s Model 2 (their published difficulties)
#: and the model with one noise variance.
MODELS = ("heteroscedastic", "homoscedastic")

#: How the difficulties are normalised: ``arithmetic`` (they average 1 over the languages, as
#: Mielke et al. published them) or ``geometric`` (ln d_j sums to 0).
NORMALISATIONS = ("arithmetic", "geometric")

#: Columns of ``difficulty.csv`` beyond its keys (corpus, model, tokenizer), with their units.
DIFFICULTY_COLUMNS = {
    "language": "language id",
    "difficulty": "d_j: bits relative to the average language for the same content (ratio; "
                  "the languages average 1 as the normalisation column says)",
    "difficulty_low": "difficulty, lower end of the interval",
    "difficulty_high": "difficulty, upper end of the interval",
    "log_difficulty": "ln d_j (natural log of difficulty)",
    "log_difficulty_se": "standard error of ln d_j from the Laplace approximation, carried "
                         "through the normalisation (nats)",
    "n_units": "units with a score in this language, the cells the fit used (count)",
    "sigma": "homoscedastic: residual standard deviation of log bits (nats); heteroscedastic: "
             "the sigma of Model 2, a unit's sd being sqrt(ln(1 + (e^{sigma^2} - 1) / n_i)) "
             "(nats); one per fit",
    "difficulty_model": "the model that produced the row: heteroscedastic (Mielke et al. "
                        "2019's Model 2, behind their published difficulties) or homoscedastic "
                        "(one noise variance)",
    "normalisation": "arithmetic (the languages' difficulties average 1, as Mielke et al. "
                     "published them) or geometric (their geometric mean is 1)",
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
    """A fitted model: ``languages`` in the order of ``log_difficulty`` (ln d_j under
    ``normalisation``), its Laplace standard errors, the chosen interval (on ln d_j), cells per
    language, unit effects (n_i of the homoscedastic model, ln n_i of the heteroscedastic one),
    sigma, and which model and normalisation produced it."""

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
    model: str = "heteroscedastic"
    normalisation: str = "arithmetic"

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
            "difficulty_model": [self.model] * len(self.languages),
            "normalisation": [self.normalisation] * len(self.languages),
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


def _normalise(e: np.ndarray, cov: np.ndarray | None,
               normalisation: str) -> tuple[np.ndarray, np.ndarray | None]:
    """ln d_j from log scales e_j known up to a common shift, and the covariance carried
    through by the delta method: arithmetic, ln d = e - ln(mean_j e^{e_j}) (Jacobian
    I - 1 w^T, w_j = e^{e_j} / sum_k e^{e_k}); geometric, ln d = e - mean(e) (I - 1 1^T / J).
    Both Jacobians send the common shift to 0, so a covariance that is large along it (the
    scale the likelihood hardly pins down) does not leak into ln d."""
    n = len(e)
    if normalisation == "arithmetic":
        top = e.max()
        weights = np.exp(e - top)
        weights /= weights.sum()
        log_d = e - (top + math.log(float(np.exp(e - top).sum()) / n))
    else:
        weights = np.full(n, 1.0 / n)
        log_d = e - e.mean()
    if cov is None:
        return log_d, None
    jac = np.eye(n) - np.outer(np.ones(n), weights)
    return log_d, jac @ cov @ jac.T


def fit_difficulty(cells: pl.DataFrame, priors: DifficultyPriors = DifficultyPriors(),
                   level: float = 0.95, interval: str = "laplace",
                   bootstrap: BootstrapSettings = BootstrapSettings(replicates=200),
                   model: str = "heteroscedastic", normalisation: str = "arithmetic"
                   ) -> DifficultyFit:
    """Fit ``model`` (:data:`MODELS`) to ``cells`` (unit_id, language, bits; one row per scored
    unit and language; rows with empty bits are missing cells and left out) and report
    difficulties under ``normalisation`` (:data:`NORMALISATIONS`). ``interval`` is ``laplace``
    (default) or ``bootstrap`` (over units, with ``bootstrap``'s replicates and seed; ``level``
    is the coverage either way). ``priors`` apply to the homoscedastic model; the
    heteroscedastic one is fitted without priors, as the authors did. Raises InputError on bits
    that are not positive and finite, a unit scored twice in one language, fewer than 2
    languages, languages that share no unit with the others, or too few cells to fit."""
    if interval not in INTERVALS:
        raise ValueError(f"fit_difficulty: interval must be one of {INTERVALS}, got {interval!r}")
    if model not in MODELS:
        raise ValueError(f"fit_difficulty: model must be one of {MODELS}, got {model!r}")
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"fit_difficulty: normalisation must be one of {NORMALISATIONS}, got "
                         f"{normalisation!r}")
    data = _Cells(cells)
    ones = np.ones(data.n_units)
    if model == "homoscedastic":
        fitted = _Model(data, priors, ones)
        z0 = fitted.basis.T @ _start(data)
        z, s2 = fitted.fit_with_sigma(z0)
        e, cov = fitted.basis @ z, fitted.covariance(s2)
        units, sigma = fitted.unit_effects(fitted.basis @ z, s2), math.sqrt(s2)
        start = z
    else:
        fitted, theta = _fit_heteroscedastic(data, ones)
        units, e = fitted.split(theta)
        cov = fitted.covariance(theta)
        sigma = math.sqrt(float(np.median(np.logaddexp(0.0, -units))))
        start = theta
    log_d, cov_d = _normalise(e, cov, normalisation)
    se = np.sqrt(np.clip(np.diag(cov_d), 0.0, None))
    if interval == "laplace":
        half = norm.ppf(0.5 + level / 2) * se
        low, high = log_d - half, log_d + half
    else:
        low, high = _bootstrap(data, model, priors, start, bootstrap, level, normalisation)
    n_cells = np.bincount(data.lang, minlength=data.n_languages)
    return DifficultyFit(data.languages, log_d, se, low, high, n_cells, data.unit_ids,
                         np.asarray(units), sigma, interval, level, model, normalisation)


def _start(data: _Cells) -> np.ndarray:
    """Starting difficulties: each language's mean log y minus the mean over languages."""
    sums = np.bincount(data.lang, weights=data.logy, minlength=data.n_languages)
    means = sums / np.bincount(data.lang, minlength=data.n_languages)
    return means - means.mean()


def _cell_terms(v, e, logy):
    """Per-cell negative log likelihood of Model 2 (constants dropped) in its identified
    parameters v = ln(n_i / (e^{sigma^2} - 1)) and e_j, and its derivatives: value, gradient
    (f_v, f_e), Hessian (f_vv, f_ee, f_ve), residual r and variance q = ln(1 + e^{-v})."""
    q = np.logaddexp(0.0, -v)
    qv = -expit(-v)
    qvv = expit(-v) * expit(v)
    r = logy - v + q / 2.0 - e
    rv = -1.0 + qv / 2.0
    value = 0.5 * np.log(q) + r * r / (2.0 * q)
    fv = qv / (2 * q) + r * rv / q - r * r * qv / (2 * q * q)
    fe = -r / q
    fvv = (qvv / (2 * q) - qv * qv / (2 * q * q) + (rv * rv + r * qvv / 2) / q
           - 2 * r * rv * qv / (q * q) - r * r * qvv / (2 * q * q) + r * r * qv * qv / q ** 3)
    fee = 1.0 / q
    fve = -rv / q + r * qv / (q * q)
    return value, (fv, fe), (fvv, fee, fve), r, q


class _Heteroscedastic:
    """Model 2 of Mielke et al. (2019) on the observed cells, each cell weighted by its unit's
    weight (1, or a bootstrap count), in its identified parameters theta = (v_1..v_I,
    e_1..e_J): v_i = ln(n_i / (e^{sigma^2} - 1)) and e_j = ln d_j + a constant (see the module
    docstring)."""

    def __init__(self, cells: _Cells, weights: np.ndarray):
        self.c = cells
        self.w_unit = weights
        self.w = weights[cells.unit]
        self.n_u, self.n_l = cells.n_units, cells.n_languages
        self.k = self.n_l

    def split(self, theta):
        return theta[: self.n_u], theta[self.n_u:]

    def terms(self, theta):
        v, e = self.split(theta)
        c = self.c
        return _cell_terms(v[c.unit], e[c.lang], c.logy)

    def value(self, theta) -> float:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            total = float(self.w @ self.terms(theta)[0])
        return total if np.isfinite(total) else np.inf

    def gradient(self, grad) -> np.ndarray:
        c, w = self.c, self.w
        fv, fe = grad
        return np.concatenate([np.bincount(c.unit, weights=w * fv, minlength=self.n_u),
                               np.bincount(c.lang, weights=w * fe, minlength=self.n_l)])

    def blocks(self, hess):
        """The Hessian's arrowhead blocks: the diagonal of the unit block (I), the coupling of
        units with languages (sparse I x J, one entry per cell) and the language block
        (diagonal J x J)."""
        c, w = self.c, self.w
        fvv, fee, fve = hess
        diag = np.bincount(c.unit, weights=w * fvv, minlength=self.n_u)
        coupling = coo_matrix((w * fve, (c.unit, c.lang)), shape=(self.n_u, self.k)).tocsr()
        glob = np.diag(np.bincount(c.lang, weights=w * fee, minlength=self.n_l))
        return diag, coupling, glob

    def reduced(self, diag, coupling, glob, damping: float = 0.0):
        """The J x J Schur complement of the unit block (units of weight 0 drop out) and the
        inverse of that block's diagonal; None where the unit block is not positive."""
        active = self.w_unit > 0
        d = diag + damping
        if not (d[active] > 0).all():
            return None, None
        dinv = np.where(active, 1.0 / np.where(active, d, 1.0), 0.0)
        s = glob + damping * np.eye(self.k) - (
            coupling.T @ coupling.multiply(dinv[:, None])).toarray()
        return s, dinv

    def newton(self, theta, max_steps: int = 200, tol: float = 1e-8):
        """Damped Newton steps on the arrowhead Hessian (Levenberg damping where it is not
        positive definite or the step does not lower the objective), until the largest
        gradient entry is below ``tol`` times the square root of the cells."""
        value = self.value(theta)
        damping = 0.0
        limit = tol * max(float(self.w.sum()), 1.0) ** 0.5
        for _ in range(max_steps):
            _, grad, hess, _, _ = self.terms(theta)
            g = self.gradient(grad)
            if np.abs(g).max() < limit:
                return theta, True
            diag, coupling, glob = self.blocks(hess)
            while True:
                s, dinv = self.reduced(diag, coupling, glob, damping)
                ok = s is not None
                if ok:
                    try:
                        np.linalg.cholesky(s)
                    except np.linalg.LinAlgError:
                        ok = False
                if ok:
                    gu, gg = g[: self.n_u], g[self.n_u:]
                    step_g = np.linalg.solve(s, -gg + coupling.T @ (dinv * gu))
                    step_u = dinv * (-gu - coupling @ step_g)
                    candidate = theta + np.concatenate([step_u, step_g])
                    new = self.value(candidate)
                    if new <= value + 1e-12 * abs(value):
                        theta, value = candidate, new
                        damping = damping / 10 if damping > 1e-8 else 0.0
                        break
                damping = max(damping * 10, 1e-6 * max(1.0, float(np.abs(diag).max())))
                if damping > 1e12:
                    return theta, False
        return theta, False

    def covariance(self, theta) -> np.ndarray:
        """Laplace covariance of e (J x J): the e block of the inverse Hessian of the negative
        log likelihood at the fit, scaled by the dispersion of the standardized residuals over
        the residual degrees of freedom (see the module docstring)."""
        _, _, hess, r, q = self.terms(theta)
        s, _ = self.reduced(*self.blocks(hess))
        if s is None:
            raise RuntimeError("difficulty model: the heteroscedastic fit is not at a maximum "
                               "(a unit's curvature is not positive)")
        df = float(self.w.sum()) - int((self.w_unit > 0).sum()) - self.k
        if df <= 0:
            raise InputError(f"difficulty model: {self.w.sum():g} cells for "
                             f"{int((self.w_unit > 0).sum())} units and {self.n_l} languages "
                             f"leave no residual degrees of freedom")
        dispersion = float(self.w @ (r * r / q)) / df
        return dispersion * np.linalg.inv(s)[: self.n_l, : self.n_l]


def _fit_heteroscedastic(data: _Cells, weights: np.ndarray,
                         start: np.ndarray | None = None) -> tuple[_Heteroscedastic, np.ndarray]:
    """Maximum likelihood of Model 2 by damped Newton steps, started from ``start`` or from the
    homoscedastic fit (every unit with its residual variance, levels and language terms from
    its effects)."""
    model = _Heteroscedastic(data, weights)
    if start is None:
        flat = _Model(data, FLAT, weights)
        z, s2 = flat.fit_with_sigma(flat.basis.T @ _start(data))
        # ln(1 + e^{-v}) = s2 where every unit has the homoscedastic variance; the unit's level
        # and the language terms follow from the homoscedastic fit.
        v = np.full(data.n_units, -math.log(math.expm1(s2)))
        u = flat.unit_effects(flat.basis @ z, s2)
        e = flat.basis @ z + float(np.mean(u)) - v[0] + s2 / 2.0
        start = np.concatenate([v + (u - np.mean(u)), e])
    theta, converged = model.newton(start)
    if not converged:
        raise RuntimeError("difficulty model: the heteroscedastic fit did not converge "
                           "(Newton steps stalled)")
    return model, theta


def _bootstrap(data: _Cells, model: str, priors: DifficultyPriors, start: np.ndarray,
               settings: BootstrapSettings, level: float,
               normalisation: str) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of ln d over refits on units drawn with replacement. A replicate
    that drew no unit of a language says nothing about it and is left out of that language's
    interval."""
    counts = resample_counts(data.n_units, settings.replicates, settings.seed)
    reps = np.empty((settings.replicates, data.n_languages))
    for b, weights in enumerate(counts):
        if model == "homoscedastic":
            refit = _Model(data, priors, weights)
            z, _ = refit.fit_with_sigma(start)
            e = refit.basis @ z
        else:
            refit, theta = _fit_heteroscedastic(data, weights, start)
            e = refit.split(theta)[1]
        seen = np.bincount(data.lang, weights=weights[data.unit], minlength=data.n_languages)
        reps[b] = _normalise(e, None, normalisation)[0]
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
                     bootstrap: BootstrapSettings = BootstrapSettings(replicates=200),
                     model: str = "heteroscedastic", normalisation: str = "arithmetic"
                     ) -> pl.DataFrame:
    """One fit of ``model`` per (corpus, model, tokenizer) of per-unit ``scores`` (the key
    columns that are present, and ``train_corpus`` where present; unit_id, language, bits), each
    on every unit it scored: the rows of ``difficulty.csv`` (the keys, then
    :data:`DIFFICULTY_COLUMNS`)."""
    keys = [k for k in ["corpus", "model", "tokenizer"] + OPTIONAL_KEYS if k in scores.columns]
    parts = scores.group_by(keys, maintain_order=True) if keys else [((), scores)]
    out = []
    for key, part in parts:
        table = fit_difficulty(part, priors, level, interval, bootstrap, model,
                               normalisation).table()
        out.append(table.select(*[pl.lit(v, dtype=pl.String).alias(k)
                                  for k, v in zip(keys, key)], pl.all()))
    if out:
        return pl.concat(out)
    types = {"language": pl.String, "n_units": pl.Int64, "interval": pl.String,
             "difficulty_model": pl.String, "normalisation": pl.String}
    return pl.DataFrame(schema={k: pl.String for k in keys}
                        | {c: types.get(c, pl.Float64) for c in DIFFICULTY_COLUMNS})


#: Columns of :func:`difficulty_vs_bpec` beyond the keys, with their units.
AGREEMENT_COLUMNS = {
    "n_languages": "languages with a difficulty and a common-set BPEC (count)",
    "spearman_rho": "Spearman correlation of difficulty and BPEC across languages (-1 to 1)",
    "spearman_p": f"two-sided p-value (exact up to {EXACT_DP_MAX_PAIRS} languages, t "
                  f"approximation above)",
    "spearman_p_bh": "spearman_p adjusted by Benjamini-Hochberg over every test of the row's "
                     "question (test_family)",
    "test_family": "multiple-testing family: the id of the question the row's test answers "
                   "(fairppl.morphology.questions; here difficulty-agreement, every corpus and "
                   "model), over whose tests spearman_p is adjusted (not a language family)",
    "same_ranking": "the two rank the languages in the same order (true/false)",
    "largest_shift_language": "the language whose rank moves most (first in the BPEC order)",
    "largest_shift": "its rank by difficulty minus its rank by BPEC (1 = hardest; signed)",
}


def difficulty_vs_bpec(difficulty: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """How the difficulties (fitted on every unit each language scored) rank the languages
    against the BPEC on the units common to every language (``models``, the common-set
    bits-per-utterance table): one row per key (corpus, model, tokenizer and train_corpus where
    both tables have it) with :data:`AGREEMENT_COLUMNS`. Rows without a BPEC (closed
    vocabulary) are left out. The claim "the difficulties rank the languages as BPEC does" is
    one question (:data:`fairppl.morphology.questions.QUESTIONS`, difficulty-agreement) asked
    of every model of every corpus, so its Spearman p-values are adjusted by Benjamini-Hochberg
    over all of them."""
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
        named = dict(zip(keys, key))
        rows.append(named | {
            "n_languages": n, "spearman_rho": rho, "spearman_p": p, "spearman_p_bh": None,
            "test_family": question_of("difficulty_agreement", named).id,
            "same_ranking": by_bpec == by_difficulty, "largest_shift_language": worst,
            "largest_shift": shifts[worst]})
    types = {"n_languages": pl.Int64, "same_ranking": pl.Boolean, "largest_shift": pl.Int64,
             "largest_shift_language": pl.String, "test_family": pl.String}
    schema = {k: pl.String for k in keys} | {c: types.get(c, pl.Float64)
                                             for c in AGREEMENT_COLUMNS}
    table = pl.DataFrame(rows, schema=schema, orient="row").drop("spearman_p_bh")
    return with_adjusted_p(table, columns=("spearman_p",), by=["test_family"]).select(
        list(schema))
