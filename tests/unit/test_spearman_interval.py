"""The interval of Spearman's rho in difficulty_predictors.csv: Fisher's z with Bonett & Wright's
variance, checked against the formula written out and by its coverage in simulation."""

import math

import numpy as np
import pytest
from scipy.stats import norm, spearmanr

from fairppl.stats.correlates import spearman_interval


def test_interval_is_fishers_z_with_bonett_wrights_variance():
    # rho 0.8 over 22 languages: z = atanh 0.8 = 1.0986, se = sqrt(1.32 / 19) = 0.2636,
    # z +- 1.96 se = 0.5820 to 1.6152, tanh: 0.5241 to 0.9239
    low, high = spearman_interval(0.8, 22)
    z, se = 0.5 * math.log(1.8 / 0.2), math.sqrt((1 + 0.32) / 19)
    assert (low, high) == pytest.approx((math.tanh(z - 1.959964 * se),
                                         math.tanh(z + 1.959964 * se)), abs=1e-6)
    assert (low, high) == pytest.approx((0.5241, 0.9239), abs=1e-4)
    # symmetric in the sign of rho, narrower at a lower level
    assert spearman_interval(-0.8, 22) == pytest.approx((-high, -low))
    narrow = spearman_interval(0.8, 22, level=0.5)
    assert low < narrow[0] < 0.8 < narrow[1] < high
    assert spearman_interval(0.8, 3) is None and spearman_interval(1.0, 30) is None
    assert spearman_interval(None, 30) is None


@pytest.mark.parametrize("n,rho", [(22, 0.5), (41, 0.8), (65, 0.3)])
def test_interval_covers_at_its_level_in_simulation(n, rho):
    # bivariate normal with Pearson correlation r has Spearman's population rho
    # (6 / pi) asin(r / 2); 3,000 datasets: Monte Carlo s.e. of a 95% coverage 0.004
    r = 2 * math.sin(math.pi * rho / 6)
    rng = np.random.default_rng(n)
    cov = [[1, r], [r, 1]]
    hits = 0
    sims = 3000
    for _ in range(sims):
        x, y = rng.multivariate_normal([0, 0], cov, size=n).T
        estimate = float(spearmanr(x, y).statistic)
        low, high = spearman_interval(estimate, n)
        hits += low <= rho <= high
    assert 0.93 <= hits / sims <= 0.97
    assert norm.ppf(0.975) == pytest.approx(1.959964, abs=1e-6)
