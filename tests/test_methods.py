"""The methods that replace resampling, each against an independent computation:

- the exact bootstrap (B = infinity) of 0/1 items, against the multinomial distribution of
  the resampled cells enumerated in exact fractions;
- the saddlepoint approximation to the bootstrap, against a large NumPy bootstrap;
- the sign-flip test by Robinson's saddlepoint, against the exact permutation distribution
  (a convolution over all 2**m sign patterns);
- the calibration line, summed exactly over every table, against the same sum written out
  here table by table."""

import itertools
import math
import random
from fractions import Fraction
from statistics import NormalDist

import pytest
from hypothesis import given, settings, strategies as st

import bootstrap_eval_deltas as bed

np = pytest.importorskip("numpy")


# --- the exact bootstrap of 0/1 items ------------------------------------------------------

def enumerated_gap_distribution(n, a_only, b_only):
    """P(resampled B-only - A-only = d) for n draws from the cells, exactly."""
    pa, pb = Fraction(a_only, n), Fraction(b_only, n)
    rest = 1 - pa - pb
    dist = {}
    for x in range(n + 1):
        for y in range(n + 1 - x):
            p = math.comb(n, x) * math.comb(n - x, y) * pa ** x * pb ** y * rest ** (n - x - y)
            if p:
                dist[y - x] = dist.get(y - x, 0) + p
    return dist


def percentile_ends(dist, n, confidence):
    """The percentile rule as B -> infinity: the smallest value whose cdf exceeds q, at
    q = (1 - C)/2 and 1 - q; None when a cdf equals q exactly (floats may fall either way)."""
    q = (1 - Fraction(confidence)) / 2
    ends, total = [], Fraction(0)
    cdf = []
    for d in sorted(dist):
        total += dist[d]
        cdf.append((d, total))
    for level in (q, 1 - q):
        if any(c == level for _, c in cdf):
            return None
        ends.append(Fraction(next(d for d, c in cdf if c > level), n))
    return tuple(ends)


@given(st.integers(4, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n), st.integers(0, n))).filter(lambda t: t[1] + t[2] <= t[0]))
@settings(max_examples=60, deadline=None)
def test_the_exact_paired_interval_is_the_enumerated_multinomials(case):
    n, a_only, b_only = case
    ends = percentile_ends(enumerated_gap_distribution(n, a_only, b_only), n, bed.CONFIDENCE)
    if ends is None:
        return
    cells = bed.Cells(n - a_only - b_only, a_only, b_only, 0)
    interval = bed.exact_intervals(cells, bed.CONFIDENCE)["paired"]
    assert (interval.lo, interval.hi) == ends


@pytest.mark.parametrize("a_only, b_only", [(110, 3), (3, 110)])
def test_the_exact_interval_of_a_lopsided_gap_is_the_enumerated_multinomials(a_only, b_only):
    """One system far ahead: the whole table lies on one side of 0 (the recurrence runs
    from one tail only)."""
    n = 120
    ends = percentile_ends(enumerated_gap_distribution(n, a_only, b_only), n, bed.CONFIDENCE)
    interval = bed.exact_intervals(bed.Cells(n - a_only - b_only, a_only, b_only, 0),
                                   bed.CONFIDENCE)["paired"]
    assert (interval.lo, interval.hi) == ends


def test_the_default_compare_of_0_1_scores_is_that_exact_interval():
    a = [1] * 40 + [0] * 10 + [1] * 7 + [0] * 3
    b = [1] * 40 + [0] * 10 + [0] * 7 + [1] * 3
    result = bed.compare(a, b, calibration=0)
    ends = percentile_ends(enumerated_gap_distribution(60, 7, 3), 60, bed.CONFIDENCE)
    assert (result.interval.lo, result.interval.hi) == ends
    assert result.method == "exact bootstrap (B = infinity)"


# --- the saddlepoint approximation to the bootstrap -----------------------------------------

def numpy_bootstrap_means(d, resamples=400_000, seed=0):
    rng = np.random.default_rng(seed)
    d = np.asarray(d, dtype=float)
    n = len(d)
    means = np.empty(resamples)
    step = max(1, 4_000_000 // n)
    for i in range(0, resamples, step):
        k = min(step, resamples - i)
        means[i:i + k] = d[rng.integers(0, n, (k, n))].mean(axis=1)
    return means


def numpy_bootstrap_ends(d, resamples=400_000, seed=0):
    return np.quantile(numpy_bootstrap_means(d, resamples, seed), [0.025, 0.975])


def numpy_bca_ends(estimate, means, jackknife, confidence=0.95):
    """Efron's BCa ends from bootstrap replicates and jackknife values, written out."""
    normal = NormalDist()
    z0 = normal.inv_cdf(float(np.mean(means < estimate) + 0.5 * np.mean(means == estimate)))
    u = jackknife.mean() - jackknife
    acc = float((u ** 3).sum() / (6 * (u ** 2).sum() ** 1.5))
    z = normal.inv_cdf((1 + confidence) / 2)
    levels = [normal.cdf(z0 + (z0 + e) / (1 - acc * (z0 + e))) for e in (-z, z)]
    return np.quantile(means, levels)


def skewed_pair(rng, n):
    a = [round(rng.expovariate(2.0), 4) for _ in range(n)]
    b = [round(x + (rng.expovariate(1.0) if rng.random() < 0.1 else rng.gauss(0, 0.05)), 4)
         for x in a]
    return a, b


@pytest.mark.parametrize("seed, n, skewed", [(1, 300, False), (2, 1000, False),
                                             (3, 1000, True), (4, 2000, True)])
def test_the_saddlepoint_ends_match_a_large_bootstrap(seed, n, skewed):
    """Bounded scores, and skewed ones (log-likelihood-like: most differences small, a few
    large and one-sided)."""
    rng = random.Random(seed)
    if skewed:
        a, b = skewed_pair(rng, n)
    else:
        a = [round(min(1.0, max(0.0, rng.gauss(0.6, 0.2))), 4) for _ in range(n)]
        b = [round(min(1.0, max(0.0, x + rng.gauss(0.02, 0.1))), 4) for x in a]
    result = bed.compare(a, b)
    assert result.method.startswith("saddlepoint approximation")
    lo, hi = numpy_bootstrap_ends([y - x for x, y in zip(a, b)])
    width = hi - lo
    # 400,000 resamples put each end within about 0.003 of the half-width; the saddlepoint
    # is held to 1% of the interval's width
    assert abs(float(result.interval.lo) - lo) < 0.01 * width
    assert abs(float(result.interval.hi) - hi) < 0.01 * width


@pytest.mark.parametrize("rule", ["bca", "basic"])
def test_bca_and_basic_by_the_saddlepoint_match_a_large_bootstrap(rule):
    """Skewed differences, where BCa moves the ends: its bias correction reads the
    saddlepoint's mass below the estimate, its acceleration the jackknife."""
    a, b = skewed_pair(random.Random(4), 2000)
    result = bed.compare(a, b, interval=rule)
    assert result.method.startswith("saddlepoint approximation")
    d = np.array(b) - np.array(a)
    means = numpy_bootstrap_means(d)
    if rule == "bca":
        lo, hi = numpy_bca_ends(d.mean(), means, (d.sum() - d) / (len(d) - 1))
    else:
        top, bottom = np.quantile(means, [0.975, 0.025])
        lo, hi = 2 * d.mean() - top, 2 * d.mean() - bottom
    width = hi - lo
    assert abs(float(result.interval.lo) - lo) < 0.01 * width
    assert abs(float(result.interval.hi) - hi) < 0.01 * width


def test_a_unit_that_moves_the_sum_on_its_own_keeps_the_bootstrap():
    """300 skewed differences, one of them more than a third of the sum's spread: the
    saddlepoint is not trusted there, and the report says the bootstrap ran instead."""
    a, b = skewed_pair(random.Random(3), 300)
    assert bed.compare(a, b).method == "bootstrap, B=2,000 resamples"


def clustered_pair(seed=8, count=120):
    """Real scores in clusters of 2 to 6 items, and a NumPy cluster bootstrap of the gap
    (the ratio of resampled sums to resampled sizes): (a, b, clusters, sums, sizes,
    ratios)."""
    rng = random.Random(seed)
    clusters, a, b = [], [], []
    for c in range(count):
        shift = rng.gauss(0, 0.15)
        for _ in range(rng.randint(2, 6)):
            x = round(min(1.0, max(0.0, 0.5 + shift + rng.gauss(0, 0.2))), 3)
            clusters.append(c)
            a.append(x)
            b.append(round(min(1.0, max(0.0, x + rng.gauss(0.03, 0.1))), 3))
    sums = np.bincount(clusters, weights=np.array(b) - np.array(a))
    sizes = np.bincount(clusters)
    picks = np.random.default_rng(0).integers(0, len(sums), (200_000, len(sums)))
    ratios = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    return a, b, clusters, sums, sizes, ratios


def test_the_saddlepoint_with_clusters_matches_a_cluster_bootstrap():
    a, b, clusters, sums, sizes, ratios = clustered_pair()
    result = bed.compare(a, b, clusters=clusters)
    assert "saddlepoint" in result.method
    lo, hi = np.quantile(ratios, [0.025, 0.975])
    width = hi - lo
    assert abs(float(result.interval.lo) - lo) < 0.015 * width
    assert abs(float(result.interval.hi) - hi) < 0.015 * width
    # BCa on the ratio: the mass below the estimate by the ratio's saddlepoint, the
    # acceleration from the jackknife that leaves out one cluster at a time
    bca = bed.compare(a, b, clusters=clusters, interval="bca")
    assert "saddlepoint" in bca.method
    jackknife = (sums.sum() - sums) / (sizes.sum() - sizes)
    lo, hi = numpy_bca_ends(sums.sum() / sizes.sum(), ratios, jackknife)
    assert abs(float(bca.interval.lo) - lo) < 0.015 * width
    assert abs(float(bca.interval.hi) - hi) < 0.015 * width


def test_the_histogram_of_a_clustered_gap_matches_the_cluster_bootstrap():
    """The JSON histogram's shares, read from the ratio's saddlepoint cdf, against the share
    of 200,000 NumPy cluster resamples in each bin."""
    a, b, clusters, _, _, ratios = clustered_pair()
    bins = bed.compare(a, b, clusters=clusters).to_dict()["comparisons"][0]["histogram"]
    assert len(bins) >= 8 and sum(row["share"] for row in bins) == pytest.approx(1, abs=1e-3)
    for row in bins:
        drawn = np.mean((ratios >= row["lo"]) & (ratios < row["hi"]))
        assert row["share"] == pytest.approx(drawn, abs=0.006), row


# --- the sign-flip test by Robinson's saddlepoint ------------------------------------------

def exact_sign_flip_p(diffs):
    """Two-sided exact p of the sign-flip test: P(|sum s_i d_i| >= |sum d_i|) over all 2**m
    patterns, by convolving the integer differences' +-d point masses."""
    ints = [int(x) for x in diffs if x]
    offset = sum(abs(x) for x in ints)
    dist = np.zeros(2 * offset + 1)
    dist[offset] = 1.0
    for x in ints:
        x = abs(x)
        dist = (np.roll(dist, x) + np.roll(dist, -x)) / 2
    observed = abs(sum(ints))
    values = np.arange(-offset, offset + 1)
    return float(dist[np.abs(values) >= observed].sum())


@pytest.mark.parametrize("seed, m", [(1, 150), (2, 300), (3, 600)])
def test_robinsons_saddlepoint_p_matches_the_exact_permutation_p(seed, m):
    rng = random.Random(seed)
    diffs = [round(rng.gauss(0.05, 0.3) * 100) for _ in range(m)]
    test = bed.sign_flip_test(random.Random(0), diffs)
    assert test.saddlepoint
    exact = exact_sign_flip_p(diffs)
    assert test.p == pytest.approx(exact, rel=0.05, abs=1e-4)


# --- the calibration line, summed over every table -----------------------------------------

def test_calibration_is_the_sum_over_every_table_of_n():
    """At n = 12 the calibration's coverage is P(interval of a table drawn from the observed
    shares covers the observed gap), summed here over every multinomial table of 12 items
    with each table's exact interval."""
    both, a_only, b_only, neither = 5, 2, 4, 1
    n = both + a_only + b_only + neither
    a = [1] * both + [1] * a_only + [0] * b_only + [0] * neither
    b = [1] * both + [0] * a_only + [1] * b_only + [0] * neither
    result = bed.compare(a, b).to_dict()["comparisons"][0]["calibration"]
    shares = [Fraction(k, n) for k in (both, a_only, b_only, neither)]
    gap = Fraction(b_only - a_only, n)
    covered = Fraction(0)
    for cell in itertools.product(range(n + 1), repeat=3):
        if sum(cell) > n:
            continue
        counts = (*cell, n - sum(cell))
        p = Fraction(math.factorial(n))
        for k, share in zip(counts, shares):
            p *= share ** k / math.factorial(k)
        if p == 0:
            continue
        interval = bed.exact_intervals(bed.Cells(*counts), bed.CONFIDENCE)["paired"]
        covered += p * (interval.lo <= gap <= interval.hi)
    assert result["coverage"]["exact"] and result["coverage"]["interval"] == "percentile"
    assert result["coverage"]["covers"] == pytest.approx(float(covered), abs=1e-9)
