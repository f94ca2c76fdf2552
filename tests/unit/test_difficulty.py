"""The difficulty models of Mielke et al. 2019 (fairppl.morphology.difficulty): the homoscedastic
one against closed forms on a complete table and a direct linear solve; their Model 2
(heteroscedastic) against a general-purpose optimizer of its likelihood and recovering known
parameters; the normalisations; coverage of the intervals, invariances, bad input."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize
from scipy.sparse import coo_matrix, hstack
from scipy.sparse.linalg import spsolve

from fairppl.core.errors import InputError
from fairppl.morphology.difficulty import (
    AGREEMENT_COLUMNS,
    DIFFICULTY_COLUMNS,
    FLAT,
    DifficultyPriors,
    difficulty_table,
    difficulty_vs_bpec,
    fit_difficulty,
)

HOMO = {"model": "homoscedastic", "normalisation": "geometric"}
from fairppl.stats.bootstrap import BootstrapSettings


def synthetic(n_units, n_languages, sigma, missing, seed, level=5.0, spread=0.1):
    """Cells drawn from the model; returns (cells, true d (sum 0), true n)."""
    rng = np.random.default_rng(seed)
    n = rng.normal(level, 0.8, n_units)
    d = rng.normal(0.0, spread, n_languages)
    d -= d.mean()
    logy = n[:, None] + d[None, :] + rng.normal(0.0, sigma, (n_units, n_languages))
    keep = rng.uniform(size=logy.shape) >= missing
    keep[:, 0] = True  # every unit in language 0, so the units stay linked
    ui, lj = np.nonzero(keep)
    cells = pl.DataFrame({"unit_id": [f"u{i:04d}" for i in ui],
                          "language": [f"l{j:02d}" for j in lj],
                          "bits": np.exp(logy[ui, lj])})
    return cells, d, n


def test_complete_table_flat_priors_is_the_two_way_anova():
    """Complete table, flat priors: d_j = column mean of log y - grand mean, n_i = row mean,
    sigma^2 = RSS / ((I - 1)(J - 1)) and Var(d_j) = sigma^2 (J - 1) / (I J)."""
    cells, _, _ = synthetic(60, 5, 0.2, missing=0.0, seed=1)
    fit = fit_difficulty(cells, FLAT, **HOMO)
    wide = cells.pivot(on="language", index="unit_id", values="bits").sort("unit_id")
    logy = np.log(wide.drop("unit_id").to_numpy())
    col = logy.mean(axis=0) - logy.mean()
    assert fit.log_difficulty == pytest.approx(col, abs=1e-8)
    assert fit.log_difficulty.sum() == pytest.approx(0.0, abs=1e-12)
    assert fit.unit_effects == pytest.approx(logy.mean(axis=1), abs=1e-8)
    resid = logy - logy.mean(axis=1, keepdims=True) - logy.mean(axis=0) + logy.mean()
    s2 = (resid ** 2).sum() / (59 * 4)
    assert fit.sigma ** 2 == pytest.approx(s2, rel=1e-6)
    assert fit.log_difficulty_se == pytest.approx(np.full(5, np.sqrt(s2 * 4 / 300)), rel=1e-6)
    assert fit.n_units.tolist() == [60] * 5


def test_map_with_priors_equals_a_direct_linear_solve():
    """With Gaussian priors the MAP solves (X'X / s2 + P) theta = X'y / s2 + P mu; for the fitted
    sigma the optimizer's answer must equal that sparse solve (d = Q z on sum d = 0)."""
    cells, _, _ = synthetic(80, 6, 0.3, missing=0.3, seed=2)
    priors = DifficultyPriors(unit_sd=0.5, language_sd=0.05)  # strong, so they matter
    fit = fit_difficulty(cells, priors, **HOMO)
    s2 = fit.sigma ** 2
    units = {u: i for i, u in enumerate(fit.unit_ids)}
    langs = {lang: j for j, lang in enumerate(fit.languages)}
    ui = np.array([units[u] for u in cells["unit_id"]])
    lj = np.array([langs[lang] for lang in cells["language"]])
    logy = np.log(cells["bits"].to_numpy())
    q, _ = np.linalg.qr(np.eye(6) - 1 / 6)
    q = q[:, :5]
    rows = np.arange(len(ui))
    x_units = coo_matrix((np.ones(len(ui)), (rows, ui)), shape=(len(ui), 80))
    x_lang = coo_matrix((np.ones(len(ui)), (rows, lj)), shape=(len(ui), 6)) @ q
    x = hstack([x_units, coo_matrix(x_lang)]).tocsc()
    prior_prec = np.r_[np.full(80, 1 / 0.5 ** 2), np.full(5, 1 / 0.05 ** 2)]
    prior_mean = np.r_[np.full(80, logy.mean()), np.zeros(5)]
    lhs = (x.T @ x) / s2 + np.diag(prior_prec)
    theta = np.linalg.solve(lhs, x.T @ logy / s2 + prior_prec * prior_mean)
    assert fit.log_difficulty == pytest.approx(q @ theta[80:], abs=1e-7)
    assert fit.unit_effects == pytest.approx(theta[:80], abs=1e-6)
    # The Laplace covariance is the inverse of the same matrix.
    cov = q @ np.linalg.inv(lhs)[80:, 80:] @ q.T
    assert fit.log_difficulty_se == pytest.approx(np.sqrt(np.diag(cov)), rel=1e-6)
    # The prior on d pulls the difficulties towards 0 against the flat fit.
    flat = fit_difficulty(cells, FLAT, **HOMO)
    assert np.abs(fit.log_difficulty).sum() < np.abs(flat.log_difficulty).sum()


def test_recovers_known_parameters_with_30_percent_missing():
    cells, d, n = synthetic(400, 8, 0.15, missing=0.3, seed=3)
    assert cells.height / (400 * 8) == pytest.approx(0.74, abs=0.02)  # 30% missing but lang 0
    fit = fit_difficulty(cells, **HOMO)
    # Standard error about 0.15 / sqrt(0.7 * 400) = 0.009: every d_j within 0.035 (4 se).
    assert np.abs(fit.log_difficulty - d).max() < 0.035
    assert fit.log_difficulty_se == pytest.approx(np.full(8, 0.009), abs=0.002)
    assert fit.sigma == pytest.approx(0.15, rel=0.05)
    assert np.corrcoef(fit.unit_effects, n)[0, 1] > 0.99
    assert np.abs(fit.unit_effects - n).mean() < 0.08  # per unit: 6 cells, sigma 0.15


def test_laplace_interval_coverage_on_synthetic_data():
    """150 datasets x 5 languages, 40 units, 30% missing: the 95% Laplace intervals cover the
    true d_j at their nominal rate (binomial sd of the rate over 750 intervals: 0.008)."""
    hits = total = 0
    for seed in range(150):
        cells, d, _ = synthetic(40, 5, 0.25, missing=0.3, seed=100 + seed)
        fit = fit_difficulty(cells, **HOMO)
        hits += int(((fit.low <= d) & (d <= fit.high)).sum())
        total += 5
    assert 0.92 <= hits / total <= 0.98


def test_bootstrap_interval_agrees_with_laplace_under_the_model():
    cells, d, _ = synthetic(150, 4, 0.2, missing=0.3, seed=7)
    laplace = fit_difficulty(cells, **HOMO)
    boot = fit_difficulty(cells, interval="bootstrap",
                          bootstrap=BootstrapSettings(replicates=400, seed=1), **HOMO)
    assert boot.interval == "bootstrap" and laplace.interval == "laplace"
    assert boot.log_difficulty == pytest.approx(laplace.log_difficulty)
    ratio = (boot.high - boot.low) / (laplace.high - laplace.low)
    assert ratio == pytest.approx(np.ones(4), abs=0.25)
    assert ((boot.low < boot.log_difficulty) & (boot.log_difficulty < boot.high)).all()


def test_missing_rows_and_single_language_units_change_nothing():
    cells, _, _ = synthetic(50, 4, 0.2, missing=0.3, seed=4)
    base = fit_difficulty(cells, FLAT, **HOMO)
    # The same missing cells written as rows with empty bits.
    full = (cells.select("unit_id").unique()
            .join(cells.select("language").unique(), how="cross")
            .join(cells, on=["unit_id", "language"], how="left"))
    assert full.height == 200 and full["bits"].null_count() == 200 - cells.height
    again = fit_difficulty(full, FLAT, **HOMO)
    assert again.log_difficulty == pytest.approx(base.log_difficulty, abs=1e-10)
    assert again.n_units.tolist() == base.n_units.tolist()
    assert again.sigma == pytest.approx(base.sigma)
    # A unit scored in one language only tells nothing about difficulty (flat priors).
    extra = pl.concat([cells, pl.DataFrame({"unit_id": ["solo"], "language": ["l01"],
                                            "bits": [123.0]})])
    solo = fit_difficulty(extra, FLAT, **HOMO)
    assert solo.log_difficulty == pytest.approx(base.log_difficulty, abs=1e-8)
    assert solo.n_units.tolist() == [n + (j == 1) for j, n in enumerate(base.n_units)]


def test_real_looking_magnitudes():
    """Verses of ~130 English characters at ~2 bits per English character, languages with the
    spread of Mielke et al.'s Europarl difficulties (de 1.114 .. lv 0.930), 10% noise per verse,
    a fifth of the cells missing: both models give the difficulties back to within 1%, in their
    order, averaging 1 (the authors' normalisation)."""
    rng = np.random.default_rng(5)
    true = {"deu": 1.114, "fra": 1.05, "eng": 1.0, "pol": 0.96, "lav": 0.930}
    mean = np.mean(list(true.values()))
    chars = rng.lognormal(np.log(130), 0.5, 1500)
    rows = []
    for j, (lang, diff) in enumerate(true.items()):
        bits = 2.0 * chars * diff * rng.lognormal(0.0, 0.1, chars.size)
        keep = (rng.uniform(size=chars.size) >= 0.2) | (j == 2)
        rows += [(f"v{i}", lang, b) for i, b in enumerate(bits) if keep[i]]
    cells = pl.DataFrame(rows, schema=["unit_id", "language", "bits"], orient="row")
    assert 100 < cells["bits"].mean() < 500  # bits per verse
    for model in ("heteroscedastic", "homoscedastic"):
        table = fit_difficulty(cells, model=model).table()
        got = dict(zip(table["language"], table["difficulty"]))
        for lang, diff in true.items():
            assert got[lang] == pytest.approx(diff / mean, rel=0.01)
        assert sorted(got, key=got.get, reverse=True) == list(true)
        assert table["difficulty"].mean() == pytest.approx(1.0, abs=1e-12)
        assert set(table["difficulty_model"]) == {model}
        assert set(table["normalisation"]) == {"arithmetic"}
        assert (table["difficulty_low"] < table["difficulty"]).all()
        assert table["n_units"].to_list() == [cells.filter(language=lang).height
                                              for lang in table["language"]]


def test_normalisations_are_one_shift_with_the_delta_method():
    """Geometric: sum ln d = 0; arithmetic: mean d = 1; the same fit otherwise (ln d differs by
    a constant), and the arithmetic standard errors are those of the delta method through
    ln d_j - ln(mean_k d_k), computed here from the geometric fit's covariance by simulation
    of its Gaussian (a second computation)."""
    cells, _, _ = synthetic(60, 5, 0.2, missing=0.3, seed=11)
    for model in ("homoscedastic", "heteroscedastic"):
        geo = fit_difficulty(cells, FLAT, model=model, normalisation="geometric")
        ari = fit_difficulty(cells, FLAT, model=model, normalisation="arithmetic")
        assert geo.log_difficulty.sum() == pytest.approx(0.0, abs=1e-12)
        assert ari.difficulty.mean() == pytest.approx(1.0, abs=1e-12)
        shift = ari.log_difficulty - geo.log_difficulty
        assert shift == pytest.approx(np.full(5, shift[0]), abs=1e-9)
        assert shift[0] == pytest.approx(-np.log(geo.difficulty.mean()), abs=1e-9)
        # The geometric fit's full covariance (rank 4: sum 0), from the fitted model; draws
        # from its Gaussian, renormalised, must have the arithmetic standard errors.
        from fairppl.morphology import difficulty as module
        data = module._Cells(cells)
        if model == "homoscedastic":
            fitted = module._Model(data, FLAT, np.ones(data.n_units))
            z, s2 = fitted.fit_with_sigma(fitted.basis.T @ module._start(data))
            cov = fitted.covariance(s2)
        else:
            fitted, theta = module._fit_heteroscedastic(data, np.ones(data.n_units))
            cov = fitted.covariance(theta)
            cov = (np.eye(5) - 1 / 5) @ cov @ (np.eye(5) - 1 / 5)
        assert np.sqrt(np.diag(cov)) == pytest.approx(geo.log_difficulty_se, rel=1e-6)
        draws = np.random.default_rng(0).multivariate_normal(geo.log_difficulty, cov, size=200_000)
        renormalised = draws - np.log(np.exp(draws).mean(axis=1, keepdims=True))
        assert renormalised.std(axis=0) == pytest.approx(ari.log_difficulty_se, rel=0.02)


def _model2_cells(n_units, n_languages, missing, seed, sigma2=0.4, log_c=2.3):
    """Cells drawn from Model 2: n_i ~ lognormal around 25 words, the arithmetic-mean-1
    difficulties d (returned), per-unit sd sqrt(ln(1 + (e^sigma2 - 1) / n_i))."""
    rng = np.random.default_rng(seed)
    n = rng.lognormal(np.log(25), 0.6, n_units)
    d = np.exp(rng.normal(0.0, 0.1, n_languages))
    d /= d.mean()
    s2 = np.log1p(np.expm1(sigma2) / n)
    mean = np.log(n) + (sigma2 - s2) / 2 + log_c
    logy = (mean[:, None] + np.log(d)[None, :]
            + rng.normal(size=(n_units, n_languages)) * np.sqrt(s2)[:, None])
    keep = rng.uniform(size=logy.shape) >= missing
    keep[:, 0] = True
    ui, lj = np.nonzero(keep)
    return pl.DataFrame({"unit_id": [f"u{i:05d}" for i in ui],
                         "language": [f"l{j:02d}" for j in lj],
                         "bits": np.exp(logy[ui, lj])}), d


def _model2_nll(params, logy, unit, lang, n_units, n_languages, sigma2):
    """Negative log likelihood of Model 2 in the authors' parameters, at a fixed sigma^2:
    ln n_i, ln c and the simplex of difficulties (softmax of J - 1 free values, times J)."""
    log_n = params[:n_units]
    log_c = params[n_units]
    a = np.r_[params[n_units + 1:], 0.0]
    log_d = a - np.log(np.exp(a).sum()) + np.log(n_languages)
    s2 = np.log1p(np.expm1(sigma2) / np.exp(log_n))
    mean = log_n + (sigma2 - s2) / 2
    r = logy - mean[unit] - log_d[lang] - log_c
    return float(np.sum(0.5 * np.log(s2[unit]) + r * r / (2 * s2[unit])))


def test_model2_equals_a_general_optimizer_of_the_authors_likelihood():
    """On a small table with missing cells, L-BFGS-B on the authors' own parameters (n, c and
    the scaled simplex, sigma^2 held fixed) reaches the same difficulties and the same maximum
    for two different sigma^2: sigma and c are not separately identified, the difficulties
    are."""
    cells, _ = _model2_cells(12, 3, 0.25, seed=1)
    fit = fit_difficulty(cells, model="heteroscedastic")
    from fairppl.morphology import difficulty as module
    data = module._Cells(cells)
    fitted, theta = module._fit_heteroscedastic(data, np.ones(data.n_units))
    best = fitted.value(theta)
    for sigma2 in (0.3, 1.5):
        start = np.r_[np.full(data.n_units, 3.0), 2.0, np.zeros(data.n_languages - 1)]
        args = (data.logy, data.unit, data.lang, data.n_units, data.n_languages, sigma2)
        result = minimize(_model2_nll, start, args=args, method="L-BFGS-B",
                          options={"maxiter": 20_000, "maxfun": 10 ** 6, "ftol": 1e-15,
                                   "gtol": 1e-9})
        a = np.r_[result.x[data.n_units + 1:], 0.0]
        d = np.exp(a) / np.exp(a).sum() * data.n_languages
        assert fit.difficulty == pytest.approx(d, abs=2e-4)
        # Same maximum (the authors' parameterisation drops no constant of the cell terms).
        assert result.fun == pytest.approx(best, abs=1e-4)


def test_model2_laplace_is_the_inverse_of_a_numerical_hessian():
    """The language block of the inverse Hessian (arrowhead Schur complement) equals the inverse
    of a finite-difference Hessian of the analytic gradient, block taken after inverting."""
    cells, _ = _model2_cells(30, 4, 0.2, seed=2)
    from fairppl.morphology import difficulty as module
    data = module._Cells(cells)
    fitted, theta = module._fit_heteroscedastic(data, np.ones(data.n_units))

    def grad(t):
        return fitted.gradient(fitted.terms(t)[1])

    k = len(theta)
    numeric = np.empty((k, k))
    for i in range(k):
        step = np.zeros(k)
        step[i] = 1e-6
        numeric[i] = (grad(theta + step) - grad(theta - step)) / 2e-6
    numeric = (numeric + numeric.T) / 2
    inverse = np.linalg.inv(numeric)[data.n_units:, data.n_units:]
    _, _, hess, r, q = fitted.terms(theta)
    s, _ = fitted.reduced(*fitted.blocks(hess))
    assert np.linalg.inv(s) == pytest.approx(inverse, rel=1e-5, abs=1e-10)
    df = data.logy.size - data.n_units - data.n_languages
    assert fitted.covariance(theta) == pytest.approx(np.sum(r * r / q) / df * inverse,
                                                     rel=1e-5, abs=1e-10)


def test_model2_recovers_the_truth_at_large_size():
    """3000 units x 6 languages drawn from Model 2, 30% of the cells missing: each d_j within
    4 of its standard errors (about 0.002) of the truth, the intervals no wider than that."""
    cells, d = _model2_cells(3000, 6, 0.3, seed=3)
    fit = fit_difficulty(cells)
    assert fit.model == "heteroscedastic" and fit.normalisation == "arithmetic"
    assert fit.difficulty.mean() == pytest.approx(1.0, abs=1e-12)
    assert np.abs(fit.log_difficulty - np.log(d)).max() < 4 * fit.log_difficulty_se.max()
    assert fit.log_difficulty_se.max() < 0.003
    assert np.abs(fit.difficulty - d).max() < 0.01
    # The homoscedastic model is unbiased here too, but less precise (it weighs short and long
    # units alike).
    homo = fit_difficulty(cells, model="homoscedastic")
    assert (homo.log_difficulty_se > fit.log_difficulty_se).all()


def test_difficulty_table_per_model():
    a, _, _ = synthetic(30, 3, 0.2, missing=0.2, seed=8)
    b, _, _ = synthetic(30, 3, 0.2, missing=0.2, seed=9)
    scores = pl.concat([a.with_columns(corpus=pl.lit("bible"), model=pl.lit("m1"),
                                       tokenizer=pl.lit("char")),
                        b.with_columns(corpus=pl.lit("bible"), model=pl.lit("m2"),
                                       tokenizer=pl.lit("char"))])
    table = difficulty_table(scores)
    assert table.columns == ["corpus", "model", "tokenizer"] + list(DIFFICULTY_COLUMNS)
    assert table.height == 6
    m2 = table.filter(model="m2")
    assert m2["log_difficulty"].to_numpy() == pytest.approx(fit_difficulty(b).log_difficulty)
    pretrained = difficulty_table(scores.with_columns(train_corpus=pl.lit(None, pl.String)))
    assert pretrained.columns[:4] == ["corpus", "model", "tokenizer", "train_corpus"]
    assert pretrained["train_corpus"].null_count() == 6


def test_bad_input():
    cells, _, _ = synthetic(20, 3, 0.2, missing=0.0, seed=6)
    with pytest.raises(InputError, match="not positive and finite"):
        fit_difficulty(cells.with_columns(bits=pl.when(pl.col("unit_id") == "u0003")
                                          .then(0.0).otherwise(pl.col("bits"))))
    with pytest.raises(InputError, match="scored 2 times"):
        fit_difficulty(pl.concat([cells, cells.head(1)]))
    with pytest.raises(InputError, match="at least 2 languages"):
        fit_difficulty(cells.filter(language="l00"))
    with pytest.raises(InputError, match="lacks columns"):
        fit_difficulty(cells.drop("bits"))
    apart = pl.concat([cells.filter(pl.col("language") != "l02"),
                       pl.DataFrame({"unit_id": ["x1", "x1", "x2", "x2"],
                                     "language": ["l02", "l03"] * 2, "bits": [5.0, 6, 7, 8]})])
    with pytest.raises(InputError, match="share no unit.*l00, l01; l02, l03"):
        fit_difficulty(apart)
    with pytest.raises(ValueError, match="interval must be one of"):
        fit_difficulty(cells, interval="profile")
    with pytest.raises(ValueError, match="model must be one of"):
        fit_difficulty(cells, model="model2")
    with pytest.raises(ValueError, match="normalisation must be one of"):
        fit_difficulty(cells, normalisation="harmonic")
    with pytest.raises(ValueError, match="positive or None"):
        DifficultyPriors(unit_sd=0.0)


def test_difficulty_vs_bpec_ranking():
    difficulty = pl.DataFrame({"corpus": "bible", "model": "m", "tokenizer": "char",
                               "language": ["eng", "deu", "kor", "tur"],
                               "difficulty": [0.9, 1.1, 1.3, 1.0]})
    models = pl.DataFrame({"corpus": "bible", "model": "m", "tokenizer": "char",
                           "language": ["eng", "deu", "kor", "tur", "jpn"],
                           "bpec": [1.8, 2.0, 2.5, 2.1, 2.2]})
    row = difficulty_vs_bpec(difficulty, models).row(0, named=True)
    # BPEC order kor tur deu eng; difficulty order kor deu tur eng: deu and tur swap.
    assert row["n_languages"] == 4 and row["same_ranking"] is False
    assert row["spearman_rho"] == pytest.approx(0.8)
    assert row["spearman_p"] == pytest.approx(8 / 24)  # 4 languages: exact
    assert (row["largest_shift_language"], row["largest_shift"]) == ("tur", 1)
    same = difficulty_vs_bpec(difficulty.filter(pl.col("language") != "tur"), models)
    assert same["same_ranking"].to_list() == [True]
    # Two models of one corpus answer one question: BH over their two p-values, by hand.
    other = difficulty.with_columns(model=pl.lit("m2"),
                                    difficulty=pl.Series([1.2, 0.8, 1.3, 1.0]))
    both = difficulty_vs_bpec(pl.concat([difficulty, other]),
                              pl.concat([models, models.with_columns(model=pl.lit("m2"))]))
    assert both.columns == ["corpus", "model", "tokenizer"] + list(AGREEMENT_COLUMNS)
    assert set(both["test_family"]) == {"difficulty-agreement"}
    # and so does another corpus's model: m = 3, BH from the sorted p-values by hand
    pooled = difficulty_vs_bpec(
        pl.concat([difficulty, other, difficulty.with_columns(corpus=pl.lit("udhr"))]),
        pl.concat([models, models.with_columns(model=pl.lit("m2")),
                   models.with_columns(corpus=pl.lit("udhr"))]))
    assert pooled.height == 3 and set(pooled["test_family"]) == {"difficulty-agreement"}
    q = sorted(pooled["spearman_p"].to_list())
    by_hand = [min(3 * q[0], 1.5 * q[1], q[2]), min(1.5 * q[1], q[2]), q[2]]
    assert sorted(pooled["spearman_p_bh"].to_list()) == pytest.approx(by_hand)
    p1, p2 = sorted(both["spearman_p"].to_list())
    assert sorted(both["spearman_p_bh"].to_list()) == pytest.approx([min(2 * p1, p2), p2])
