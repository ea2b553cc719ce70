"""Study planning against closed forms: on normal data the simulated power of styleval's paired tests is the analytic
power of a paired t-test (noncentral t, scipy.stats.nct) within a few points (the paired bootstrap's at the level it
actually has), the pilot's variance
components are the ones the data were drawn with, and the expected interval width of Pearson's r is Fisher's."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from styleval.errors import InputError
from styleval.stats import SegmentStatistic, approximate_randomization, paired_bootstrap
from styleval.stats import power

SD_ITEM = 8.0  # each system's true score per item varies with this sd: a difference varies with sd 8 * sqrt(2)
SD_RATER = 12.0


def pilot_cube(n_items: int = 3000, k: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = np.array([[50.0], [55.0]]) + rng.normal(scale=SD_ITEM, size=(2, n_items))
    return truth[..., None] + rng.normal(scale=SD_RATER, size=(2, n_items, k))


def t_test_power(n: int, delta: float, sd: float, alpha: float = 0.05) -> float:
    df, nc = n - 1, delta / sd * math.sqrt(n)
    crit = st.t.ppf(1 - alpha / 2, df)
    return float(st.nct.sf(crit, df, nc) + st.nct.cdf(-crit, df, nc))


def test_pilot_variance_finds_the_components_it_was_drawn_with():
    pilot = power.pilot_variance(pilot_cube())
    assert pilot.rater_variance == pytest.approx(SD_RATER ** 2, rel=0.05)
    assert pilot.item_variance == pytest.approx(2 * SD_ITEM ** 2, rel=0.12)
    assert np.var(pilot.item_effects) == pytest.approx(pilot.item_variance, rel=0.01)
    assert pilot.n_pairs == 1 and pilot.mean_raters == 2


CASES = [(40, 2, 5.0), (60, 1, 4.0), (30, 3, 6.0)]


@pytest.mark.parametrize("n_items,n_raters,delta", CASES)
def test_approximate_randomization_power_matches_the_paired_t_test(n_items, n_raters, delta):
    pilot = power.pilot_variance(pilot_cube())
    sd = math.sqrt(2 * SD_ITEM ** 2 + 2 * SD_RATER ** 2 / n_raters)
    analytic = t_test_power(n_items, delta, sd)
    got = power.simulated_power(pilot, n_items, n_raters, delta, n_studies=2000, n_resamples=500, seed=1,
                                test="approx-randomization")
    assert 0.2 < analytic < 0.95
    assert abs(got - analytic) < 0.04, (got, analytic)


def test_approximate_randomization_has_its_nominal_false_alarm_rate():
    pilot = power.pilot_variance(pilot_cube())
    size = power.simulated_power(pilot, 40, 2, 0.0, n_studies=3000, n_resamples=500, seed=2,
                                 test="approx-randomization", allow_zero=True)
    assert abs(size - 0.05) < 0.015


@pytest.mark.parametrize("n_items,n_raters,delta", CASES)
def test_paired_bootstrap_power_is_the_t_tests_at_the_level_it_actually_has(n_items, n_raters, delta):
    """sacrebleu's paired bootstrap p-value (styleval's default test between systems) is about a one-sided one:
    at a nominal .05 it rejects about 12 % of studies without a difference, so its power is a paired t-test's at
    that actual level, well above the t-test's at .05."""
    pilot = power.pilot_variance(pilot_cube())
    size = power.simulated_power(pilot, n_items, n_raters, 0.0, n_studies=3000, n_resamples=500, seed=2,
                                 allow_zero=True)
    assert 0.09 < size < 0.16  # measured, not nominal
    sd = math.sqrt(2 * SD_ITEM ** 2 + 2 * SD_RATER ** 2 / n_raters)
    got = power.simulated_power(pilot, n_items, n_raters, delta, n_studies=2000, n_resamples=500, seed=1)
    assert abs(got - t_test_power(n_items, delta, sd, alpha=size)) < 0.04
    assert got > t_test_power(n_items, delta, sd) + 0.05


def test_pvalues_are_those_of_styleval_approximate_randomization():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3, 25))
    got = power.approximate_randomization_pvalues(a - b - 0.3, n_trials=300, seed=7)
    for row in range(3):
        ref = approximate_randomization(a[row][:, None], (b[row] + 0.3)[:, None], sum_then=lambda s: s[0] / 25,
                                        n_trials=300, seed=7)
        assert got[row] == pytest.approx(ref.pvalue)


def test_expected_interval_width_of_pearson_is_fishers():
    rng = np.random.default_rng(5)
    rho = 0.5
    x = rng.normal(size=20000)
    y = rho * x + math.sqrt(1 - rho ** 2) * rng.normal(size=20000)
    fn = SegmentStatistic("pearson", average_by="none", nan_policy="omit")
    widths = power.interval_widths(x[None, :], y[None, :], fn, [50, 200], n_studies=1500)
    for n, w in widths.items():
        z, half = math.atanh(rho), 1.959964 / math.sqrt(n - 3)
        fisher = math.tanh(z + half) - math.tanh(z - half)
        assert w == pytest.approx(fisher, rel=0.08), (n, w, fisher)


def test_faults_of_a_plan():
    pilot = power.pilot_variance(pilot_cube(n_items=50))
    with pytest.raises(InputError, match="D of 0"):
        power.simulated_power(pilot, 20, 2, 0.0)
    with pytest.raises(InputError, match="power of 1 needs infinitely many"):
        power.check_target("power", 1)
    with pytest.raises(InputError, match="pilot of 2 item"):
        power.pilot_variance(pilot_cube(n_items=2))
    with pytest.raises(InputError, match="single rating"):
        power.pilot_variance(pilot_cube(n_items=30, k=1))
    with pytest.raises(InputError, match="pilot of 2 item"):
        power.interval_widths(np.zeros((2, 2)), np.zeros((2, 2)), lambda m, h: 0.0, [10])


def test_pvalues_are_those_of_styleval_paired_bootstrap():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 3, 25))
    b = b + 0.3
    got = power.paired_bootstrap_pvalues(a - b, n_resamples=300, seed=7)
    for row in range(3):
        ref = paired_bootstrap(a[row][:, None], b[row][:, None], sum_then=lambda s: s[0] / 25, n_resamples=300,
                               seed=7)
        assert got[row] == ref.pvalue
