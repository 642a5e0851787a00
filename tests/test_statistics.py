"""Pure statistics: the bootstrap engines, intervals, McNemar, sign-flip, adjustments, power, coverage and calibration studies."""

import csv
import itertools
import json
import math
import os
import random
from fractions import Fraction
from statistics import NormalDist

import pytest
from hypothesis import given, settings, strategies as st

import bootstrap_eval_deltas as bed

import oracle
from helpers import (
    C95,
    EXAMPLES,
    FIXTURES,
    SHIPPED_CSV,
    board_of,
    cli,
    cli_json,
    clopper_pearson_half_width,
    correlated,
    multipletests,
    quick_body,
    scores_of_cells,
    table_file,
    wilson,
)


@pytest.mark.parametrize("k,n,p", [(-1, 5, 0.3), (6, 5, 0.3), (0, 5, 0.0), (2, 5, 0.0),
                                   (5, 5, 1.0), (4, 5, 1.0), (0, 40, 0.7), (0, 40, 0.2),
                                   (17, 40, 0.3)])
def test_binomial_probabilities_at_their_edges_equal_the_exact_sum(k, n, p):
    exact = math.comb(n, k) * Fraction(p) ** k * (1 - Fraction(p)) ** (n - k) \
        if 0 <= k <= n else 0
    assert bed.binom_pmf(k, n, p) == pytest.approx(float(exact), rel=1e-13, abs=1e-300)
    cdf = sum(math.comb(n, j) * Fraction(p) ** j * (1 - Fraction(p)) ** (n - j)
              for j in range(0, min(k, n) + 1))
    assert bed._binom_cdf(k, n, p) == pytest.approx(float(cdf), rel=1e-12, abs=1e-300)


def test_incomplete_beta_edges_and_closed_forms():
    assert bed._incomplete_beta(0.0, 2, 3) == 0.0 and bed._incomplete_beta(1.0, 2, 3) == 1.0
    for x in (0.1, 0.5, 0.9):
        assert bed._incomplete_beta(x, 1, 1) == pytest.approx(x, rel=1e-14)        # uniform
        assert bed._incomplete_beta(x, 1, 3) == pytest.approx(1 - (1 - x) ** 3, rel=1e-13)
    assert bed._incomplete_beta(0.5, 7, 7) == pytest.approx(0.5, rel=1e-14)         # symmetry


def test_student_t_in_its_closed_forms_and_limits():
    # Cauchy (one degree of freedom): F(t) = 1/2 + atan(t)/pi, far into both tails
    for p in (0.001, 0.2, 0.999):
        assert bed.student_t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)),
                                                             rel=1e-9)
    assert bed.student_t_cdf(-30.0, 1) == pytest.approx(0.5 + math.atan(-30) / math.pi,
                                                        rel=1e-12)
    # two degrees of freedom: F(t) = 1/2 + t / (2 sqrt(2 + t^2))
    for t in (-3.0, 0.4, 5.0):
        assert bed.student_t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)),
                                                        rel=1e-12)
    assert bed.student_t_cdf(1.3, math.inf) == NormalDist().cdf(1.3)
    assert bed.student_t_quantile(0.975, 1e8) == NormalDist().inv_cdf(0.975)


def test_newcombe_unpaired_equals_the_published_example():
    """Newcombe (1998), example (b): 9/10 against 3/10, method 10: 0.1705 to 0.8090."""
    interval = bed.newcombe_unpaired(3, 9, 10, C95)
    assert (round(float(interval.lo), 4), round(float(interval.hi), 4)) == (0.1705, 0.8090)
    mirrored = bed.newcombe_unpaired(9, 3, 10, C95)
    assert (mirrored.lo, mirrored.hi) == (-interval.hi, -interval.lo)


def test_bca_is_undefined_when_every_resample_is_on_one_side():
    jack = {Fraction(1): 1, Fraction(2): 1, Fraction(3): 1}
    for share in (0, 1):
        assert bed._bca_levels(share, jack, C95) == \
            "every bootstrap resample lies on one side of the estimate"
    asked = bed.Distribution.of([1, 2, 3])
    with pytest.raises(bed.ToolError, match="BCa is undefined here: every bootstrap resample "
                                            "lies on one side"):
        asked.interval(C95, "bca", Fraction(0), jack)
    interval, rule, why = bed._interval_by(asked, C95, "bca", Fraction(0), jack)
    assert (interval, rule) == (asked.interval(C95), "percentile") and "one side" in why


def test_bca_with_a_huge_acceleration_is_refused_not_wrong():
    skewed = {Fraction(0): 30, Fraction(100): 1}     # a jackknife with one far outlier
    assert bed._bca_levels(Fraction(1, 10 ** 6), skewed, Fraction("0.999999")) == \
        "the acceleration is too large for this confidence"
    assert bed._bca_levels(Fraction(1, 2), {Fraction(1, 2): 7}, C95).startswith(
        "the jackknife is degenerate")


@pytest.mark.parametrize("guess", [-40.0, -1.0, 1.9, 3.0, 60.0])
def test_solve_finds_the_root_from_a_guess_on_either_side(guess):
    """x**3 + x = 10 at x = 2: the bracket grows down or up from the guess, then the
    Illinois steps close on the root from both sides."""
    root = bed._solve(lambda x: x ** 3 + x, 10.0, guess, 0.5)
    assert root == pytest.approx(2.0, abs=1e-10)


def test_lugannani_rice_near_its_removable_singularity_is_continuous():
    """At s = 0 the formula is 0/0: the limit 1/2 + k3/(6 sqrt(2 pi) K''^1.5) is used; it
    must meet the formula's values just outside."""
    stratum = bed._Stratum.of([0.0, 0.0, 0.1, 0.3, 1.0, 2.5])
    parts = ((1, (stratum,)),)
    root = math.sqrt(bed._cgf(parts, 0.0)[2])
    limit = bed._lugannani_rice(parts, 1e-9 / root, 0)[1]
    outside = bed._lugannani_rice(parts, 1e-4 / root, 0)[1]
    assert limit > 0.5                                   # right-skewed: the median below the mean
    assert limit == pytest.approx(outside, abs=1e-3)
    # a sum that cannot move: no spread, the middle
    flat = ((1, (bed._Stratum.of([0.7, 0.7]),)),)
    assert bed._lugannani_rice(flat, 0.3, 0)[1:] == (0.5, 0.0, 0.0)


def test_binomial_variates_at_p_0_and_1_are_constants_without_a_draw():
    rng = random.Random(1)
    assert bed.binomial_table_variates(rng, 7, 0.0, 3) == [0, 0, 0]
    assert bed.binomial_table_variates(rng, 7, 1.0, 2) == [7, 7]
    assert rng.random() == random.Random(1).random()


def test_ratio_factors_beyond_the_cache_equal_the_cached_ones(monkeypatch):
    cached = bed._ratio_factors(50, 10, 20)
    monkeypatch.setattr(bed, "_FACTOR_CACHE_LIMIT", 10)
    assert bed._ratio_factors(50, 10, 20) == cached == [(50 - k) / (k + 1) for k in range(10, 20)]


def test_sign_flip_drawn_as_counts_agrees_with_the_exact_p():
    """The counts engine's sign-flip test (one table draw per distinct |d|) against the
    exact enumeration on 18 differences, within its Monte Carlo error."""
    diffs = [3, -1, 2, 2, 5, -2, 1, 4, 3, -1, 2, 6, -3, 1, 1, 2, -4, 3]
    exact = bed.sign_flip_test(random.Random(0), diffs)
    assert exact.exact
    drawn = bed.sign_flip_test(random.Random(0), diffs, 20_000, exact_limit=0, counts=True)
    assert not drawn.exact and drawn.permutations == 20_000
    assert abs(drawn.p - exact.p) < 4 * math.sqrt(exact.p * (1 - exact.p) / 20_000)


def test_items_needed_walks_down_to_the_first_n_with_the_power():
    plan = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B).cells, C95)
    n = plan.items_needed(Fraction("0.8"))
    assert plan.power(n) >= 0.8 > plan.power(n - 1)
    level = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_A).cells, C95)
    assert level.items_needed(Fraction("0.8")) is None


def test_counts_engine_refuses_real_scores_with_too_many_values():
    scores = bed.Scores(tuple(Fraction(i, 3001) for i in range(3000)),
                        tuple(Fraction(i + 1, 3001) for i in range(3000)))
    with pytest.raises(bed.ToolError, match="use engine='stream'"):
        bed.analyze(scores, random.Random(1), resamples=10, engine="counts")
    clustered = bed.Scores((1, 0, 1, 0), (1, 1, 1, 0), clusters=(1, 1, 2, 2))
    with pytest.raises(bed.ToolError, match="the counts engine covers plain items"):
        bed.analyze(clustered, random.Random(1), resamples=10, engine="counts")
    unequal = bed.Scores((1, 0, 1, 0), (1, 1, 1, 0), clusters=(1, 1, 1, 2))
    with pytest.raises(bed.ToolError, match="exact=True needs 0/1 scores .* these are in "
                                            "clusters of different sizes"):
        bed.analyze(unequal, random.Random(1), resamples=10, exact=True)


def test_coverage_needs_its_engine_named_and_takes_settings_or_keywords_alike():
    copula = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B)
    auto = bed.coverage(random.Random(1), copula, 30, replays=2, engine="auto", resamples=20)
    assert auto == bed.coverage(random.Random(1), copula, 30, replays=2, engine="stream",
                                resamples=20)
    by_record = bed.coverage(random.Random(5), copula, 40, bed.Settings(60, C95, "basic"),
                             replays=5)
    by_keywords = bed.coverage(random.Random(5), copula, 40, replays=5, resamples=60,
                               confidence=C95, interval="basic")
    assert by_record == by_keywords


BOUNDARY_N = [2, 3, 255, 256, 257, 500, 511, 512, 513, 1000, 65536, 100003]


def naive_sums(rng, columns, rounds):
    n = len(columns[0])
    return [sum(columns[r % len(columns)][rng.randrange(n)] for _ in range(n))
            for r in range(rounds)]


def rounds_for(n):
    return max(2, 40000 // n)


def check_same(columns, rounds, seed):
    fast_rng, slow_rng = random.Random(seed), random.Random(seed)
    fast_rng.gauss(0, 1)           # leave a pending gauss_next: it must survive the engine
    slow_rng.gauss(0, 1)
    fast = bed.resample_sums(fast_rng, columns, rounds)
    slow = naive_sums(slow_rng, columns, rounds)
    assert fast == slow
    assert fast_rng.getstate() == slow_rng.getstate()
    assert fast_rng.gauss(0, 1) == slow_rng.gauss(0, 1)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_binary_paired_difference(n):
    pick = random.Random(n)
    a = [int(pick.random() < 0.7) for _ in range(n)]
    b = [int(pick.random() < 0.75) for _ in range(n)]
    check_same((tuple(y - x for x, y in zip(a, b)),), rounds_for(n), seed=n + 1)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_binary_unpaired_two_columns(n):
    pick = random.Random(-n)
    a = tuple(int(pick.random() < 0.6) for _ in range(n))
    b = tuple(int(pick.random() < 0.4) for _ in range(n))
    check_same((a, b), rounds_for(n), seed=n + 2)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_real_valued_few_distinct_values(n):
    """Judge scores 1..10 scaled to integers: grouped codes, several digit planes."""
    pick = random.Random(3 * n)
    a = tuple(pick.randint(1, 10) * 37 for _ in range(n))
    b = tuple(pick.randint(1, 10) * 37 for _ in range(n))
    check_same((tuple(y - x for x, y in zip(a, b)),), rounds_for(n), seed=n + 3)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_real_valued_all_distinct(n):
    """F1-like scores, all different: the engine falls back to bulk index arithmetic."""
    pick = random.Random(5 * n)
    scale = 10 ** 6
    a = tuple(pick.randrange(scale) for _ in range(n))
    b = tuple(pick.randrange(scale) for _ in range(n))
    check_same((a, b), rounds_for(n), seed=n + 4)


@pytest.mark.parametrize("n,alphabet,kind", [
    (200, 3, "byte"), (500, 3, "class"), (300, 40, "select"), (1000, 12, "select"),
    (2000, 3, "select"), (9000, 3, "gather"), (70000, 2, "gather"), (600, 300, "index"),
])
def test_every_lookup_kind_is_exercised(n, alphabet, kind):
    pick = random.Random(n * alphabet)
    values = tuple(pick.randrange(alphabet) for _ in range(n))
    column = tuple(v * 1000 for v in values)     # several planes when alphabet > 1
    rows = {}
    for v in values:
        rows.setdefault(v, len(rows))
    codes = bytes(rows[v] for v in values) if len(rows) <= bed._MAX_CODES else None
    assert bed._Lookup.of(n, codes).kind == kind
    check_same((column,), max(2, 20000 // n), seed=alphabet)


@pytest.mark.parametrize("n", [2, 257, 513, 65536])
def test_draw_codes_is_the_naive_draw(n):
    pick = random.Random(n)
    codes = bytes(pick.randrange(3) for _ in range(n))
    fast_rng, slow_rng = random.Random(9), random.Random(9)
    count = 3 * bed._CHUNK_WORDS + 17      # spans several getrandbits chunks
    fast = bed.draw_codes(fast_rng, bed._Lookup.of(n, codes), count)
    slow = bytes(codes[slow_rng.randrange(n)] for _ in range(count))
    assert fast == slow and fast_rng.getstate() == slow_rng.getstate()


def test_whole_default_run_equals_oracle_at_reduced_replays():
    import oracle
    ref = oracle.run(500, 0.6, 0.72, 0.76, 2026, 2000, 4, Fraction("0.95"))
    rng = random.Random(2026)
    scores = bed.simulate_scores(rng, 500, bed.CORR, bed.ACC_A, bed.ACC_B)
    result = bed.analyze(scores, rng, resamples=2000, confidence=bed.CONFIDENCE)
    cov = bed.coverage(rng, bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B), 500, replays=4,
                       resamples=2000, confidence=bed.CONFIDENCE)
    assert (result.paired.lo, result.paired.hi) == ref["paired"]
    assert (result.unpaired.lo, result.unpaired.hi) == ref["unpaired"]
    assert (result.ci_a.lo, result.ci_a.hi) == ref["ci_a"]
    assert (result.ci_b.lo, result.ci_b.hi) == ref["ci_b"]
    assert (cov.covers, cov.excludes_zero) == (ref["covers"], ref["positive"])
    assert rng.getstate() == ref["state"]


def naive_resample_each(rng, columns, rounds):
    """The listing's way, for several columns on the same resampled items."""
    n = len(columns[0])
    out = [[] for _ in columns]
    for _ in range(rounds):
        idx = [rng.randrange(n) for _ in range(n)]
        for column, sums in zip(columns, out):
            sums.append(sum(column[i] for i in idx))
    return out


@pytest.mark.parametrize("n,kind", [(7, "binary"), (256, "binary"), (300, "few"),
                                    (300, "many"), (257, "mixed"), (300, "merged")])
def test_resample_each_equals_the_naive_loop_draw_for_draw(n, kind):
    """Columns sharing one byte code (few distinct rows), split into groups (many distinct
    rows), or both, or a group of several: the sums and the generator state equal the naive loop's."""
    pick = random.Random(n)
    if kind == "binary":
        columns = [[pick.randrange(2) for _ in range(n)] for _ in range(4)]
    elif kind == "few":
        columns = [[pick.randrange(3) for _ in range(n)] for _ in range(3)]
    elif kind == "many":
        columns = [[pick.randrange(1000) for _ in range(n)] for _ in range(3)]
    elif kind == "mixed":
        columns = [[pick.randrange(2) for _ in range(n)], [pick.randrange(5000) for _ in range(n)],
                   [pick.randrange(2) for _ in range(n)]]
    else:                              # a many-valued column, then two that share a code
        columns = [[pick.randrange(1000) for _ in range(n)], [pick.randrange(2) for _ in range(n)],
                   [pick.randrange(3) for _ in range(n)]]
        assert bed._column_groups(columns) == [[0], [1, 2]]
    got_rng, want_rng = random.Random(9), random.Random(9)
    got = bed.resample_each(got_rng, columns, 23)
    want = naive_resample_each(want_rng, columns, 23)
    assert [list(sums) for sums in got] == want
    assert got_rng.getstate() == want_rng.getstate()


np = pytest.importorskip("numpy")


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


def convolved(first, second):
    """The distribution of the sum of two independent variables given as {value: p}."""
    out = {}
    for x, p in first.items():
        for y, q in second.items():
            out[x + y] = out.get(x + y, 0) + p * q
    return out


def enumerated_hits(n, hits):
    """Binomial(n, hits/n), exactly."""
    p = Fraction(hits, n)
    return {k: math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)}


stratum_cells = st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n), st.integers(0, n))).filter(lambda t: t[1] + t[2] <= t[0])


@given(st.lists(st.tuples(stratum_cells, st.integers(0, 12)), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_the_stratified_exact_intervals_are_the_convolved_enumerations(strata):
    """Items resampled within strata: every interval is read off the exact convolution of
    the strata's enumerated distributions (Fractions), never off resamples."""
    cells, paired, hits_a, hits_b = [], {0: 1}, {0: 1}, {0: 1}
    for (n, a_only, b_only), both in strata:
        both = min(both, n - a_only - b_only)
        cell = bed.Cells(both, a_only, b_only, n - a_only - b_only - both)
        cells.append(cell)
        paired = convolved(paired, enumerated_gap_distribution(n, a_only, b_only))
        hits_a = convolved(hits_a, enumerated_hits(n, cell.a))
        hits_b = convolved(hits_b, enumerated_hits(n, cell.b))
    unpaired = convolved(hits_b, {-x: p for x, p in hits_a.items()})
    total = sum(cell.n for cell in cells)
    got = bed.exact_distributions(cells)
    for name, dist in (("paired", paired), ("a", hits_a), ("b", hits_b),
                       ("unpaired", unpaired)):
        ends = percentile_ends(dist, total, bed.CONFIDENCE)
        interval = got[name].interval(bed.CONFIDENCE)
        if ends is not None:
            assert (interval.lo, interval.hi) == ends, name


def numpy_lattice_ends(columns, groups, level, unit):
    """The percentile ends of the resampled mean of each group's sum (values on the lattice
    *unit*, groups resampled within), by NumPy convolution powers: the independent oracle
    of the lattice exact bootstrap.  *columns*: name -> per-unit values (unpaired: (b, a))."""
    def law(values):                     # {value: p} of the resampled sum, by convolution
        total, low = np.array([1.0]), 0
        for group in groups:
            ks = [round(values[i] / unit) for i in group]
            one = np.bincount(np.array(ks) - min(ks)) / len(group)
            power = np.array([1.0])
            for _ in range(len(group)):
                power = np.convolve(power, one)
            total, low = np.convolve(total, power), low + min(ks) * len(group)
        return low, total

    ends = {}
    for name, values in columns.items():
        if name == "unpaired":
            (low_b, b), (low_a, a) = law(values[0]), law(values[1])
            low, pmf = low_b - (low_a + len(a) - 1), np.convolve(b, a[::-1])
        else:
            low, pmf = law(values)
        cdf = np.cumsum(pmf) / pmf.sum()
        units = sum(map(len, groups))
        ends[name] = tuple((low + int(np.searchsorted(cdf, q, side="right"))) * unit / units
                           for q in (level, 1 - level))
        assert min(abs(cdf - q).min() for q in (level, 1 - level)) > 1e-9    # no near-tie
    return ends


@pytest.mark.parametrize("design", ["judge", "strata", "clusters"])
def test_scores_on_a_small_lattice_take_the_exact_bootstrap_equal_to_numpys_convolution(design):
    """A judge's 1-10 scores on 200 items, 1-5 ratings in three strata, and battles scored
    -1, 0, 1 in pairs (the two orders, a cluster of 2): each resampled sum is a convolution
    power of its one-draw law, so every interval is exact (B = infinity), equal to NumPy's
    convolution, and the same for every seed (they were 2,000 resamples, their ends moving
    by 3.6% of the width from seed to seed)."""
    rng, strata, clusters = random.Random(8), None, None
    if design == "judge":
        rows = list(csv.DictReader(open(os.path.join(EXAMPLES, "judge.csv"))))
        a, b = ([int(float(r[k])) for r in rows] for k in ("base", "v2"))
        groups, units_a, units_b = [list(range(len(a)))], a, b
    elif design == "strata":
        a = [rng.randint(1, 5) for _ in range(150)]
        b = [min(5, max(1, x + rng.choice([-1, 0, 0, 1, 1]))) for x in a]
        strata = [i % 3 for i in range(150)]
        groups, units_a, units_b = [list(range(h, 150, 3)) for h in range(3)], a, b
    else:
        pairs = [rng.choice([(-1, 1), (1, -1), (0, 0), (1, 1), (-1, 0)]) for _ in range(300)]
        b = [x for pair in pairs for x in pair]
        a = [0] * len(b)
        clusters = [i // 2 for i in range(len(b))]
        groups = [list(range(300))]
        units_a, units_b = [0] * 300, [x + y for x, y in pairs]
    results = [bed.compare(a, b, clusters=clusters, strata=strata, seed=seed, calibration=0)
               for seed in (1, 2)]
    assert results[0].method == results[1].method == "exact bootstrap (B = infinity)"
    analysis = results[0].comparisons[0].analysis
    assert str(analysis) == str(results[1].comparisons[0].analysis)
    size = 2 if clusters else 1
    diffs = [y - x for x, y in zip(units_a, units_b)]
    ends = numpy_lattice_ends({"a": units_a, "b": units_b, "paired": diffs,
                               "unpaired": (units_b, units_a)}, groups, 0.025, 1)
    for name in ("a", "b", "paired", "unpaired"):
        interval = getattr(analysis, {"a": "ci_a", "b": "ci_b"}.get(name, name))
        assert (float(interval.lo) * size, float(interval.hi) * size) == pytest.approx(
            ends[name], abs=1e-12), name


def test_the_stratified_0_1_example_prints_the_same_ends_for_every_seed():
    """The shipped lm-eval folders pooled with each task a stratum: the exact bootstrap, so
    no seed moves an end (at B = 500,000 resamples two seeds gave +2.7 and +2.3)."""
    folders = [os.path.join(EXAMPLES, "lm-eval", "main", name) for name in ("acme__base", "acme__tuned")]
    outputs = set()
    for seed in ("1", "2", "2026"):
        status, out, err = cli("compare", *folders, "--metric", "acc,exact_match", "--filter",
                               "strict-match", "--seed", seed)
        assert status == 0, err
        outputs.add(out.split("\n2 systems on")[0].replace(f"seed {seed};", "seed;"))
    assert len(outputs) == 1
    assert "paired 95% CI [-4.8, +21.4] pts" in outputs.pop()
    result = bed.compare(*folders, score_col="acc,exact_match", filter="strict-match")
    assert result.comparisons[0].analysis.method == "exact"


def test_stratified_0_1_scores_beyond_the_convolution_budget_use_the_saddlepoint():
    rng = random.Random(4)
    n = 40_000
    a = [int(rng.random() < 0.7) for _ in range(n)]
    b = [x if rng.random() < 0.8 else 1 - x for x in a]
    strata = [i % 40 for i in range(n)]
    scores = bed.Scores(tuple(a), tuple(b), strata=tuple(strata))
    assert bed._exact_work(bed._strata_cells(scores)) > bed._EXACT_WORK
    assert bed.compare(a, b, strata=strata).comparisons[0].analysis.method == "saddlepoint"
    small = bed.compare(a[:4000], b[:4000], strata=strata[:4000])
    assert small.comparisons[0].analysis.method == "exact"


def test_exact_beside_resamples_with_strata_and_the_hint_that_points_to_it(tmp_path):
    path = tmp_path / "s.csv"
    rng = random.Random(5)
    path.write_text("item,topic,a,b\n" + "".join(
        f"{i},{'xyz'[i % 3]},{int(rng.random() < 0.6)},{int(rng.random() < 0.7)}\n"
        for i in range(90)))
    base = ["compare", str(path), "--a-col", "a", "--b-col", "b", "--strata-col", "topic"]
    status, out, err = cli(*base, "--resamples", "2000", "--details")
    assert status == 0, err
    assert "--exact gives the exact ends" in out
    status, out, err = cli(*base, "--resamples", "2000", "--exact", "--output", "json")
    assert status == 0, err
    exact = json.loads(out)["comparisons"][0]["exact"]
    status, out, err = cli(*base, "--output", "json")
    assert json.loads(out)["comparisons"][0]["ci"] == exact


@pytest.mark.once
def test_the_hint_for_a_gap_on_a_lattice_counts_what_settles_an_end(tmp_path):
    """40 passages of 3 questions, 0/1 scores: the cluster bootstrap's gap moves in steps of
    1/120 (0.8 pts), so the hint speaks of settling each end on a value, counted from how
    far its level lies from the edges of that value's share -- and says when no B will."""
    rng = random.Random(3)
    path = tmp_path / "c.csv"
    path.write_text("item,passage,a,b\n" + "".join(
        f"{c * 3 + j},{c},{int(rng.random() < 0.6)},{int(rng.random() < 0.68)}\n"
        for c in range(40) for j in range(3)))
    argv = ["compare", str(path), "--a-col", "a", "--b-col", "b", "--cluster-col", "passage",
            "--details"]
    assert "exact bootstrap (B = infinity)" in cli(*argv[:-1])[1]    # unasked: the lattice's
    out = cli(*argv, "--resamples", "2000")[1]
    hint = next(line for line in out.splitlines() if line.startswith("hint:"))
    assert "the gap's resampled values lie 0.8 pts apart, so an end moves by whole steps" in hint
    settle = int(hint.split("about ")[1].split(" resamples")[0].replace(",", ""))
    assert 2_000 < settle < 1_000_000
    outputs = {next(line for line in cli(*argv[:-1], "--resamples", str(settle), "--seed",
                                         seed)[1].splitlines() if "gap B - A" in line)
               for seed in ("1", "2", "3")}
    assert len(outputs) == 1, outputs
    dist = bed.Distribution.of([0, 1, 1, 2], 1)        # level 1/4 at the edge of 0's share:
    assert dist.settling(Fraction(1, 2)) == math.ceil(2.576 ** 2 * 0.25 * 0.75 * 64)  # 1/8 off
    wide = bed.Distribution.of([0] * 10 + [1] * 80 + [2] * 10, 1)
    assert wide.settling(Fraction(1, 2)) == math.ceil(2.576 ** 2 * 0.25 * 0.75 / 0.15 ** 2)


def test_the_hint_for_scores_past_10_to_the_15_speaks_of_their_own_digits_and_steps(tmp_path):
    """Scores near 10^20 print with six significant digits: the hint's "half that digit" is
    half the sixth digit (it said +-0.0005), and the steps the gap moves by are the resampled
    values' own spacing, 2e18 / 300 (it said 1/300, the spacing of integer sums)."""
    rng = random.Random(2)
    rows = []
    for i in range(300):
        a = rng.randint(0, 50) * 2 * 10 ** 18
        rows.append(f"{i},{a},{a + rng.choice([0, 2, 4, -2]) * 10 ** 18}\n")
    path = tmp_path / "big.csv"
    path.write_text("item,a,b\n" + "".join(rows))
    out = cli("compare", str(path), "--systems", "a,b", "--details", "--resamples", "2000")[1]
    hint = next(line for line in out.splitlines() if line.startswith("hint:"))
    assert "the gap's resampled values lie 6.66667e+15 apart" in hint, hint
    real = [f"{i},{x * 1e20:.6e},{(x + 0.3 + rng.gauss(0, 0.001)) * 1e20:.6e}\n"
            for i, x in enumerate(rng.random() for _ in range(200))]
    path.write_text("item,a,b\n" + "".join(real))
    out = cli("compare", str(path), "--systems", "a,b", "--details", "--resamples", "2000")[1]
    hint = next(line for line in out.splitlines() if line.startswith("hint:"))
    assert "within +-5e+13" in hint and "0.0005" not in hint, hint


@pytest.mark.once
def test_where_the_resamples_cannot_hold_the_last_digit_the_ends_print_to_the_digit_they_hold():
    """30 full-precision real gaps, all for B: holding the paired ends to 0.001 would take
    about 700,000 resamples, past the budget; the tool draws what holds 0.01 and prints the
    paired ends to it (they printed three decimals and moved by 3% of the width from seed to
    seed), equal to 200,000 NumPy resamples' rounded; the other intervals to the digits their
    own error holds; a family's simultaneous intervals likewise (held at both levels)."""
    rng, a, b = random.Random(1), [], []
    for _ in range(30):
        a.append(rng.random())
        b.append(a[-1] + rng.uniform(0.001, 1))
    results = [bed.compare(a, b, seed=seed, calibration=0) for seed in (1, 3, 4, 5, 2026)]
    assert {str(r.interval) for r in results} == {"[+0.36, +0.55]"}
    for result in results:
        assert "; the ends printed to the digit they hold)" in result.method
        analysis = result.comparisons[0].analysis
        assert analysis.paired.places == 2 and analysis.resamples > bed.RESAMPLES
        assert 5 * analysis.resamples * 30 <= bed._HOLDING_DRAWS
        for interval in (analysis.ci_a, analysis.ci_b, analysis.unpaired):
            errors = analysis.errors[{id(analysis.ci_a): "a", id(analysis.ci_b): "b"}.get(
                id(interval), "unpaired")]
            assert interval.places <= bed._held_places(errors, False) + 1
    rows = np.random.default_rng(1).integers(0, 30, (200_000, 30))
    means = (np.array(b) - np.array(a))[rows].mean(1)
    assert str(results[0].interval) == "[+{:.2f}, +{:.2f}]".format(*np.quantile(means,
                                                                           [0.025, 0.975]))
    asked = bed.compare(a, b, resamples=2000, calibration=0)       # asked: every digit
    assert asked.interval.places is None and len(str(asked.interval)) == len("[+0.366, +0.553]")
    wide = bed.compare([x * 1000 for x in a], [y * 1000 for y in b], calibration=0)
    assert wide.interval.places == 0 and wide.method.endswith(     # not even whole units hold
        "is more than their last digit)") and "digit they hold" not in wide.method
    family = bed.compare(a, b, [y - 0.2 for y in b], calibration=0)
    for comparison in family.comparisons:
        assert comparison.decision.interval.places == comparison.analysis.paired.places < 3


def test_where_nothing_exact_fits_the_resamples_hold_the_printed_ends(tmp_path):
    """40 real-valued items (too few for the saddlepoint): at B = 2,000 the ends moved by a
    printed digit from seed to seed; the tool now draws as many resamples as hold them (here
    12,000 to 14,000, well within a second), so every seed prints the same intervals."""
    rng = random.Random(7)
    a = [round(0.5 + rng.uniform(-0.02, 0.02), 3) for _ in range(40)]
    b = [round(min(1, max(0, x + rng.gauss(0.02, 0.03))), 3) for x in a]
    path = tmp_path / "r.csv"
    path.write_text("item,a,b\n" + "".join(f"{i},{x},{y}\n" for i, (x, y) in
                                           enumerate(zip(a, b))))
    shown, counts = set(), set()
    for seed in ("1", "2", "3", "4"):
        status, out, err = cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--seed",
                               seed, "--calibration", "0")
        assert status == 0, err
        shown.add(next(line for line in out.splitlines() if "gap B - A" in line))
        counts.add(int(out.split("B=")[1].split(" resamples")[0].replace(",", "")))
        assert "; as many as hold the printed ends)" in out
    assert shown == {"  gap B - A: +1.4 pts; paired bootstrap 95% CI [+0.4, +2.3] pts; unpaired "
                     "bootstrap 95% CI [+0.2, +2.5] pts (ignores the pairing)"}
    assert min(counts) > bed.RESAMPLES and 5 * max(counts) * 40 <= bed._HOLDING_DRAWS
    asked = cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--resamples", "2000")[1]
    assert "B=2,000 resamples" in asked


@pytest.mark.once   # many seeds: the same on every Python
def test_a_resampled_end_within_its_error_of_0_is_read_as_touching_0_for_every_seed(tmp_path):
    """40 real items, one far value (the guard resamples): the paired lower end is +0.0034 at
    B = infinity (NumPy, 400,000 resamples) and moved by +-0.007 at B = 2,000, so seeds printed
    +0.01, +0.001, -0.003, ... and a verdict of borderline or cannot tell.  Now an end whose
    sign the resamples do not hold prints as 0.0 and the sentence says why; one that holds it
    prints the oracle's sign.  No seed prints a negative end."""
    rng, a, b = random.Random(11), [], []
    for i in range(40):
        a.append(rng.random())
        rng.gauss(0.08, 0.3)
        b.append(a[-1] + rng.gauss(0.02, 0.3) + (5 if i == 3 else 0))
    oracle_lo = numpy_bootstrap_ends(np.array(b) - np.array(a))[0]
    assert 0.002 < oracle_lo < 0.005
    words = set()
    for seed in range(1, 9):
        result = bed.compare(a, b, seed=seed, calibration=0)
        decision, sentence = result.comparisons[0].decision, str(result).splitlines()[0]
        lower = str(decision.interval)[1:].split(",")[0]
        assert "CI [" + lower in sentence
        unsettled = result.to_dict()["comparisons"][0]["decision"]["end_within_mc_error_of_zero"]
        if decision.interval.excludes_zero():
            assert lower.startswith("+") and not unsettled and decision.word == "borderline"
        else:
            assert lower == "0.0" and unsettled and decision.word == "cannot tell"
            assert "[0.0, +0.5] has its lower end within its Monte Carlo error of 0 and" in sentence
        words.add(decision.word)
    assert words <= {"borderline", "cannot tell"}
    path = tmp_path / "r.csv"
    path.write_text("item,a,b\n" + "".join(f"{i},{x!r},{y!r}\n" for i, (x, y) in
                                           enumerate(zip(a, b))))
    status, out, _ = cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--seed", "1",
                         "--details")
    hint = next(line for line in out.splitlines() if line.startswith("hint:"))
    assert status == 0 and hint.startswith(
        "hint: an end of the paired interval lies within its Monte Carlo error (+-0.008) of 0 "
        "at B=2,000, so the verdict reads it as touching 0; about ")
    assert int(hint.split("about ")[1].split(" ")[0].replace(",", "")) >= 4000


def _columns(path):
    rows = list(csv.DictReader(open(path)))
    return [float(r["a"]) for r in rows], [float(r["b"]) for r in rows]


@pytest.mark.once   # many seeds: the same on every Python
def test_an_end_past_a_gap_in_the_resamples_is_not_taken_as_clear_of_0():
    """80 items with a few far values (hostile rerun, H1): the resampled gap lies in lumps,
    and its 2.5% quantile at B = infinity is -0.03 (NumPy), in a gap; seed 8 drew the end
    past the gap, +0.3 with a stated error of +-0.21 that the symmetric rule passed, and said
    "better".  Now an end clears 0 only where the order statistics within 3.1 sd of its rank
    all do: no seed claims better, and none reads the interval as excluding 0."""
    a, b = _columns(os.path.join(FIXTURES, "montecarlo", "far_values_80.csv"))
    assert numpy_bootstrap_ends(np.array(b) - np.array(a))[0] < 0
    for seed in range(1, 10):
        decision = bed.compare(a, b, seed=seed, calibration=0).comparisons[0].decision
        assert decision.p < 0.05 and decision.word == "borderline"
        assert not decision.interval.excludes_zero()


@pytest.mark.once   # many seeds: the same on every Python
def test_an_end_whose_sign_holds_but_not_its_digit_prints_the_digits_held():
    """150 items with far values (hostile rerun, M3): the lower end is +0.095 at B = infinity
    (NumPy) and seeds printed +0.3 or +0.1, a digit expanded past the digits held to show the
    sign.  Its sign holds (its reach stays above 0), its first decimal does not: every seed
    prints "+0", says why it excludes 0 and says better, beside the observed gap to its
    usual digits (it had taken the interval's held digits, +1.1 or +1.096 by seed)."""
    a, b = _columns(os.path.join(FIXTURES, "montecarlo", "far_values_150.csv"))
    assert 0.05 < numpy_bootstrap_ends(np.array(b) - np.array(a))[0] < 0.15
    for seed in (1, 2, 8):
        result = bed.compare(a, b, seed=seed, calibration=0)
        decision = result.comparisons[0].decision
        assert decision.word == "better" and str(decision.interval) == "[+0, +2]"
        assert "B is likely better than A (+1.096): the paired 95% CI [+0, +2] excludes 0 (its " \
            "lower end, printed +0, lies above 0 from seed to seed) and" in str(result)
    assert round(sum(b) / len(b) - sum(a) / len(a), 3) == 1.096    # the gap: no seed's digits


def test_a_gate_margin_within_the_lower_ends_monte_carlo_error_fails_for_every_seed():
    """40 real items, margin 0.1275, lower end 0.12747 at B = infinity (NumPy 10^6, hostile
    rerun): seeds 1, 3 and 7 passed (exit 0) with ends printed +0.1279.  A lower end whose
    reach (3.1 sd) crosses the margin does not pass, and the gate line says why."""
    path = os.path.join(FIXTURES, "montecarlo", "gate_40.csv")
    a, b = _columns(path)
    assert numpy_bootstrap_ends(np.array(b) - np.array(a))[0] < 0.1275
    for seed in ("1", "3", "7"):
        status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--gate",
                             "--min-delta", "0.1275", "--seed", seed)
        assert status == 1 and "is within its Monte Carlo error of +0.1275" in out


@pytest.mark.once   # many seeds: the same on every Python
def test_asked_resamples_are_read_by_their_reach_as_the_tools_own_are():
    """The far-values and gate files with --resamples 2000 given (hostile rerun 2, H1):
    seed 2 said "better" on [+0.337, +7.568] where B = infinity's lower end is -0.03 (NumPy),
    and the gate at +0.1275 passed for 3 seeds in 8 (B = infinity +0.12747).  Asked
    resamples are read by the same rule: no seed claims, every gate fails, and the margin
    prints as given whatever the interval's digits."""
    a, b = _columns(os.path.join(FIXTURES, "montecarlo", "far_values_80.csv"))
    for seed in range(1, 10):
        result = bed.compare(a, b, seed=seed, resamples=2000, calibration=0)
        decision = result.comparisons[0].decision
        assert decision.word == "borderline" and not decision.interval.excludes_zero()
        data = result.to_dict()["comparisons"][0]["decision"]
        assert decision.interval.lo < 0 or data["end_within_mc_error_of_zero"]
        (low, high), _ = data["mc_reach"]          # the lower end's reach passes 0
        assert low < 0 and low <= data["interval"][0] <= high
    status, out, _ = cli("compare", os.path.join(FIXTURES, "montecarlo", "far_values_80.csv"),
                         "--a-col", "a", "--b-col", "b", "--resamples", "2000", "--seed", "2",
                         "--details")
    assert status == 0 and "the paired 95% CI [0.000, +7.568] has its lower end within its " \
        "Monte Carlo error of 0" in out and "hint: an end of the paired interval lies " \
        "within its Monte Carlo error (+-0.210) of 0 at B=2,000" in out
    path = os.path.join(FIXTURES, "montecarlo", "gate_40.csv")
    for seed in map(str, range(1, 9)):
        status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--gate",
                             "--min-delta", "0.1275", "--seed", seed, "--resamples", "2000")
        assert status == 1 and "gate: FAIL (superiority at +0.1275)" in out
        assert "is within its Monte Carlo error of +0.1275 and the verdict is better" in out


def _class_f1_gaps(labels, base, tuned, name, resamples=400_000, seed=0):
    """NumPy: the class's F1 of tuned - base over resamples of the items, drawn as the
    multinomial counts of the 8 cells (is it the class, did A say it, did B say it)."""
    cells = [(y == name, a == name, b == name) for y, a, b in zip(labels, base, tuned)]
    keys = sorted(set(cells))
    counts = np.random.default_rng(seed).multinomial(
        len(cells), [cells.count(key) / len(cells) for key in keys], size=resamples)
    y, a, b = (np.array([key[i] for key in keys]) for i in range(3))
    f1 = [2 * (counts @ (y & p)) / (counts @ y + counts @ p) for p in (a, b)]
    return f1[1] - f1[0]


@pytest.mark.once   # many seeds: the same on every Python
def test_a_class_table_takes_the_resamples_that_place_its_simultaneous_ends():
    """The README's macro-F1 example: 5 classes, each interval at 99%.  At B = 2,000 each
    tail holds 10 resamples, and refund's upper end (-4.0 pts at B = infinity: NumPy, 400,000
    multinomial resamples) may reach 0 from seed to seed: read by its reach, "borderline".
    Unasked, the tool takes 10,000 (50 in each tail, as 2,000 leave at 95%): refund is
    "worse" and login "better" for every seed, as NumPy's ends say; asked for 2,000, both
    are named as within Monte Carlo error."""
    rows = list(csv.DictReader(open(os.path.join(EXAMPLES, "predictions.csv"))))
    labels, base, tuned = ([r[k] for r in rows] for k in ("label", "base", "tuned"))
    ends = {name: np.quantile(_class_f1_gaps(labels, base, tuned, name), [0.005, 0.995])
            for name in ("refund", "login")}
    assert ends["refund"][1] < -0.02 and ends["login"][0] > 0.005
    table = bed.Table(("base", "tuned"), (tuple(base), tuple(tuned)), tuple(range(len(rows))),
                      (), gold=tuple(labels))
    for seed in (1, 2, 3):
        result = bed.compare_classes(table, random.Random(seed))
        words = {t.task: t.comparisons[0].decision.word for t in result.tasks}
        assert result.tasks[0].comparisons[0].analysis.resamples == 10_000
        assert words["refund"] == "worse" and words["login"] == "better"
    asked = bed.compare_classes(table, random.Random(2026), resamples=2000)
    words = {t.task: t.comparisons[0].decision for t in asked.tasks}
    assert words["refund"].word == words["login"].word == "borderline"
    assert not words["refund"].interval.excludes_zero()


@pytest.mark.once   # many seeds: the same on every Python
def test_an_end_whose_reach_passes_every_resample_drawn_is_not_read_as_clear_of_0():
    """20 real items, sign-flip p 0.0493 exact, lower end -0.0017 at B = infinity (NumPy;
    hostile rerun 3, H2): at --resamples 50 three seeds in eight said "better" (the reach
    stopped at the least resample, which lay above 0), and --resamples 1 said "worse" on
    [-0.002, -0.002].  An end whose rank's spread passes the resamples drawn may lie past
    them all: no claim at any B, and the sign hint asks for at least 2,000."""
    path = os.path.join(FIXTURES, "montecarlo", "few_resamples_20.csv")
    a, b = _columns(path)
    assert numpy_bootstrap_ends(np.array(b) - np.array(a))[0] < 0
    for resamples, seed in itertools.product((1, 2, 10, 50), range(1, 9)):
        result = bed.compare(a, b, seed=seed, resamples=resamples, calibration=0)
        decision = result.comparisons[0].decision
        assert decision.word == "borderline" and not decision.interval.excludes_zero()
    low, high = result.to_dict()["comparisons"][0]["decision"]["mc_reach"][0]
    assert low is None and high is not None           # past the least of 50 resamples
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--resamples", "50",
                         "--seed", "5", "--details")
    hint = next(line for line in out.splitlines() if line.startswith("hint:"))
    assert status == 0 and "about 2,000 resamples (--resamples) would settle its sign" in hint


@pytest.mark.parametrize("size,confidence,bounded", [
    (3600, Fraction(995, 1000), True),        # 9 in a tail: (1 - 0.0026)^3600 = 1e-4
    (2000, Fraction(995, 1000), False),       # 5 in a tail: 0.007 of draws miss it
    (400, Fraction(95, 100), True), (50, Fraction(95, 100), False), (1, Fraction(95, 100), False)])
def test_an_ends_reach_is_open_only_where_every_resample_may_miss_its_tail(size, confidence,
                                                                          bounded):
    """The reach is open (-inf, +inf) past the resamples drawn exactly where the chance that
    none of B falls beyond the end's quantile, (1 - q)^B, passes 1/1,000 (z = 3.09's tail)."""
    (low, _), (_, high) = bed.Distribution.of(range(size)).reach(confidence)
    assert (low, high) == ((0, size - 1) if bounded else (-math.inf, math.inf))


@pytest.mark.once   # many seeds: the same on every Python
def test_bh_counts_only_the_discoveries_no_seed_decides():
    """Three candidates, Benjamini-Hochberg (hostile rerun 3, H1): c2's adjusted p is 0.0508
    over 4 million patterns, so R = 1 and the FCR level 98.33%, where c1's lower end is
    -0.0035 (NumPy): borderline.  R had counted c2 whenever its Monte Carlo p fell below
    0.05, and c1 then read "better" at 96.67% for 4 seeds in 10.  A p within its Monte Carlo
    error of alpha is no discovery: every seed reads 98.33% and no seed claims c1."""
    rows = list(csv.DictReader(open(os.path.join(FIXTURES, "montecarlo", "bh_family_40.csv"))))
    base, c1 = (np.array([float(r[k]) for r in rows]) for k in ("base", "c1"))
    assert np.quantile(numpy_bootstrap_means(c1 - base), 0.05 / 6) < 0
    for seed in range(1, 11):
        result = bed.compare(os.path.join(FIXTURES, "montecarlo", "bh_family_40.csv"),
                             systems=["base", "c1", "c2", "c3"], adjust="bh", seed=seed,
                             calibration=0)
        first = result.comparisons[0].decision
        assert first.level == Fraction(59, 60) and first.word == "borderline"


def test_a_lattice_whose_common_step_is_too_fine_for_the_unpaired_gap_is_not_taken(tmp_path):
    """Two items, A on a 10^-6 lattice and B with 17 digits (hostile rerun 3, H3): each
    column's own lattice is small, but the unpaired gap's common step is 10^-17, and spreading
    A's law onto it asked for 10^11 floats: "out of memory", exit 70.  The lattice's budget
    counts that step; the case goes to a method that fits."""
    path = tmp_path / "two.csv"
    path.write_text("item,a,b\n0,0.870249,0.9367076797858469\n1,0.286817,0.38261690726939257\n")
    units = bed.Scores([Fraction("0.870249"), Fraction("0.286817")],
                       [Fraction("0.9367076797858469"), Fraction("0.38261690726939257")]).units
    assert not bed._lattice_fits(units)
    status, out, err = cli("compare", str(path), "--a-col", "a", "--b-col", "b")
    assert status == 0 and err == "" and out.startswith("verdict: borderline.")
    same = tmp_path / "same.csv"
    same.write_text("item,a,b\n" + "".join(f"{i},{i % 3 / 4},{i % 3 / 4}\n" for i in range(30)))
    status, out, _ = cli("compare", str(same), "--a-col", "a", "--b-col", "b", "--resamples",
                         "2000")          # an end at 0 itself is no Monte Carlo matter
    assert status == 0 and "CI [0.0, 0.0] pts includes 0 and" in out.splitlines()[0]


def test_a_monte_carlo_p_within_its_error_of_alpha_is_not_read_as_below_it():
    """25 real items whose sign-flip p is 0.0514 when counted over 10^6 patterns (hostile
    rerun, M1): over 10,000 random patterns 4 of 9 seeds printed p=0.0496 "is below 0.05" and
    "better".  A Monte Carlo p within 3.1 s.e. of alpha is said to be so and never decides a
    claim; JSON says so too."""
    a, b = _columns(os.path.join(FIXTURES, "montecarlo", "p_near_alpha_25.csv"))
    for seed in range(1, 10):
        result = bed.compare(a, b, seed=seed, calibration=0)
        decision = result.comparisons[0].decision
        assert abs(decision.p - 0.05) < 0.005 and decision.word != "better"
        assert not decision.p_settled and result.to_dict()["comparisons"][0]["decision"][
            "p_within_mc_error_of_alpha"]
        assert "sign-flip test's p=" + bed._format_p(decision.p) + " is within its Monte " \
            "Carlo error of 0.05" in str(result).splitlines()[0]


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


@pytest.mark.once
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


@pytest.mark.once
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


@pytest.mark.parametrize("strata", [None, [i % 3 for i in range(400)]])
def test_a_system_against_itself_is_a_point_not_a_resampling(strata):
    """B = A on every item (real scores: a model compared with itself): the paired
    distribution is a point, which the saddlepoint path takes exactly, where the guard had
    sent it to 2,000 resamples of every item (46 s at 20,000 items); A's and B's
    intervals are the saddlepoint's, the same as for any real scores."""
    rng = random.Random(5)
    a = [round(rng.random(), 4) for _ in range(400)]
    result = bed.compare(a, list(a), strata=strata)
    assert result.method.startswith("saddlepoint approximation")
    assert (result.interval.lo, result.interval.hi) == (0, 0)
    analysis = result.comparisons[0].analysis
    assert result.p == 1.0
    dist = analysis.distributions["paired"]
    assert dist.mass_below(Fraction(1, 10 ** 9)) == 1.0 and dist.mass_below(0) == 0.0
    other = bed.compare(a, [round(x + rng.gauss(0, 0.1), 4) for x in a], strata=strata)
    assert other.method.startswith("saddlepoint approximation")
    ci_a = other.comparisons[0].analysis.ci_a          # (B's scores leave [0, 1]: its unit)
    assert (ci_a.lo, ci_a.hi) == (analysis.ci_a.lo, analysis.ci_a.hi)


@pytest.mark.once
def test_a_unit_that_moves_the_sum_on_its_own_keeps_the_bootstrap():
    """300 skewed differences, one of them more than a third of the sum's spread: the
    saddlepoint is not trusted there, and the report says the bootstrap ran instead."""
    a, b = skewed_pair(random.Random(3), 300)
    result = bed.compare(a, b)
    assert result.method.startswith("bootstrap, B=2,000 resamples (no method without "
                                    "resampling fits these scores")
    assert "300 items, with a value held by more than a fifth of them or a few far from the " \
        "rest: without resampling that needs 1,000" in str(result)
    assert bed.compare(a, b, resamples=2000).method == "bootstrap, B=2,000 resamples"


@pytest.mark.parametrize("n, outliers, why", [
    (30, [], "30 items: the saddlepoint approximation needs 50 or more"),
    (1000, [(0.5, 1e4 * k) for k in range(1, 6)], "more than 3 values, or a group of nearby "
     "ones, move a resampled mean on their own: the outlier mixture counts at most 3 exactly")])
def test_a_resampled_report_says_why_nothing_without_resampling_fits(n, outliers, why):
    """Resampled unasked: the note names the reason (too few units, too many far values),
    and a Monte Carlo p at its floor reads as the bound it is in the verdict too."""
    a, b = outlier_pair(4, n, outliers)
    b = [y + 0.02 * bool(outliers) if y <= 1 else y for y in b]     # B better on the rest too
    result = bed.compare(a, b, calibration=0)
    assert f"note: resampled, as no method without Monte Carlo error fits: {why}" in \
        str(result)
    assert "(no method without resampling fits these scores" in result.method
    if outliers:                             # no random pattern as extreme
        assert result.comparisons[0].analysis.test.at_floor and result.p < 0.00011
        assert "the sign-flip test's p<=0.0001 is below 0.05" in result.sentence
    assert not str(bed.compare(a, b, resamples=2000, calibration=0)).count("note: resampled")


def outlier_pair(seed, n, outliers):
    """*n* scores in [0, 1] per system, then the *outliers*' (a, b) pairs far outside."""
    rng = random.Random(seed)
    a = [round(rng.random(), 4) for _ in range(n)]
    b = [round(min(1.0, max(0.0, x + rng.gauss(0.02, 0.2))), 4) for x in a]
    return a + [x for x, _ in outliers], b + [y for _, y in outliers]


@pytest.mark.once
@pytest.mark.parametrize("seed, outliers, strata", [
    (1, [(0.5, 400.0)], 1), (2, [(3.5, 300.0), (-200.0, 0.5)], 1),
    (3, [(50.0, 0.2), (40.0, 0.1), (0.3, -60.0)], 1), (4, [(0.5, 400.0), (90.0, 0.5)], 3),
    (5, [(0.5, 400.0 + k / 7) for k in range(10)], 1),
    (6, [(0.5, 400.0 + k / 7) for k in range(10)], 3),
    (7, [(0.5, 400.0 + k / 7) for k in range(10)] + [(400.0 + k / 7, 0.5) for k in range(8)], 1),
    (8, [(0.5, 400.0 + k / 7) for k in range(10)] + [(200.0 + k / 7, 0.5) for k in range(5)], 1),
    (9, [(0.5, 400.0 + k / 7) for k in range(5)] + [(148.0 + k / 7, 0.5) for k in range(5)]
     + [(0.5, 200.0 + k / 7) for k in range(5)], 1)])
def test_a_few_outlying_scores_are_counted_exactly_and_match_a_large_bootstrap(seed, outliers,
                                                                               strata):
    """1,500 scores in [0, 1] and one to three far outside, each moving a resampled sum on its
    own, or groups of up to ten nearby ones (in one system, or one in each: differences of
    both signs; three groups, their states merged where nearly one): the bootstrap
    distribution is a few lumps, whose
    ends 2,000 resamples place to about a tenth of the width.  The outliers' draws counted exactly and Edgeworth's series for the
    rest match 200,000 NumPy resamples to 1% of the width, for A, B and both gaps; within
    strata too."""
    a, b = outlier_pair(seed, 1500, outliers)
    labels = [i % strata for i in range(len(a))]
    result = bed.compare(a, b, strata=labels if strata > 1 else None)
    assert result.method.startswith("bootstrap with the outlying scores' draws counted exactly")
    analysis = result.comparisons[0].analysis
    x, y = np.array(a), np.array(b)
    groups = [np.flatnonzero(np.array(labels) == h) for h in range(strata)]
    rng, chunks = np.random.default_rng(seed), []

    def picks():                    # 2,000 resamples of the item indices, within strata
        return np.hstack([g[rng.integers(0, len(g), (2000, len(g)))] for g in groups])

    for _ in range(100):
        first, second = picks(), picks()
        chunks.append(np.stack([x[first].mean(1), y[first].mean(1), (y - x)[first].mean(1),
                                y[second].mean(1) - x[first].mean(1)]))
    means = np.concatenate(chunks, axis=1)
    for row, interval in zip(means, (analysis.ci_a, analysis.ci_b, analysis.paired,
                                     analysis.unpaired)):
        lo, hi = np.quantile(row, [0.025, 0.975])
        assert abs(float(interval.lo) - lo) < 0.01 * (hi - lo)
        assert abs(float(interval.hi) - hi) < 0.01 * (hi - lo)


@pytest.mark.parametrize("n", [1000, 20_000])
def test_a_system_against_itself_but_one_item_has_the_binomial_count_of_that_item(n):
    """B = A on every item but one, which moves the gap by d/n per draw: the paired gap is
    K d / n, K ~ Binomial(n, 1/n), so its percentile ends are SciPy's binomial quantiles
    times d/n, with no resampling (the guard had sent this to 5 x 2,000 x n draws)."""
    rng = random.Random(n)
    a = [round(rng.random(), 4) for _ in range(n)]
    b = [0.9] + a[1:]
    result = bed.compare(a, b)
    assert result.comparisons[0].analysis.method == "mixture"
    step = (Fraction("0.9") - Fraction(str(a[0]))) / n
    binom = pytest.importorskip("scipy.stats").binom
    low, high = (int(binom.ppf(q, n, 1 / n)) for q in (0.025, 0.975))
    assert (result.interval.lo, result.interval.hi) == (low * step, high * step)


@pytest.mark.once
def test_bca_on_lumps_counts_the_lump_at_the_estimate_half():
    """A constant but for one outlier, and B = A but for two items: the distributions are
    lumps, one of them at the estimate, which BCa's bias correction counts half.  Counted
    as below it (as the mixture first did), the ends fell 3 lumps short; the mixture's BCa
    now equals 20,000 resamples' (the lumps lie far apart: each end lands on the same one)."""
    a = [0.5] * 1000
    a[0] = 1000.0
    b = [round((i * 0.6180339887) % 1, 3) for i in range(1000)]
    c = list(b)
    c[3] += 1000
    c[4] -= 300
    for first, second, name in ((a, b, "ci_a"), (b, c, "paired")):
        mixture = bed.compare(first, second, interval="bca").comparisons[0].analysis
        resampled = bed.compare(first, second, interval="bca",
                                resamples=20_000).comparisons[0].analysis
        assert mixture.method == "mixture" and resampled.method == "bootstrap"
        assert getattr(mixture, name) == getattr(resampled, name)


@pytest.mark.parametrize("copies, spread", [(10, 0), (15, 0), (60, 0), (10, 1), (60, 2)])
def test_one_far_value_held_by_a_few_items_is_counted_as_lumps(copies, spread):
    """The same score of 1,000 on 10 to 60 of 2,000 items (A 0.5 there): no one item moves
    the sum by a third of its sd, but the draws of that value make lumps 0.5 apart, far wider
    than the rest's spread, which the saddlepoint smoothed over (ends in the gaps, 3% of the
    width off).  Counted as lumps, B's ends sit on SciPy's binomial quantiles of that count;
    so too where the far values are distinct but near one another (a group within a third of
    the rest's sd: the bootstrap had drawn 2,000 resamples, 30 s at 20,000 items)."""
    binom = pytest.importorskip("scipy.stats").binom
    rng = random.Random(copies)
    n = 2000
    a = [0.5] * copies + [round(rng.random(), 4) for _ in range(n - copies)]
    b = [1000.0 + round(spread * rng.random(), 4) for _ in range(copies)] + \
        [round(rng.random(), 4) for _ in range(n - copies)]
    analysis = bed.compare(a, b).comparisons[0].analysis
    assert analysis.method == "mixture"
    rest, far = sum(b[copies:]) / (n - copies), sum(b[:copies]) / copies
    for end, q in ((analysis.ci_b.lo, 0.025), (analysis.ci_b.hi, 0.975)):
        k = binom.ppf(q, n, copies / n)
        assert abs(float(end) - (k * far + (n - k) * rest) / n) < 0.05 * 1000 / n


def test_far_groups_of_both_signs_are_lumps_counted_by_their_draws_of_each_group():
    """Ten scores near 10^5 in B and eight in A (other items) among 5,000: the differences'
    two far groups hid behind each other's spread, so the saddlepoint smoothed their lumps
    (paired ends 2.4% of the width off NumPy's 200,000 resamples); grown from both ends, the
    group is seen.  Their draws are kept as exact counts per group: keyed by float sums, the
    states of two groups multiplied past the most kept, and B = 2,000 resamples ran (9 s)."""
    rng = random.Random(4)
    a = [round(rng.random(), 4) for _ in range(5000)]
    b = [round(min(1.0, max(0.0, x + rng.gauss(0.01, 0.2))), 4) for x in a]
    for i in range(10):
        b[i] = 10 ** 5 - i / 7
    for i in range(10, 18):
        a[i] = 10 ** 5 - i / 7
    scores = bed.Scores(tuple(map(bed.parse_score, map(repr, a))),
                        tuple(map(bed.parse_score, map(repr, b))))
    paired = scores.units.moments["paired"]
    assert not bed._column_fits(paired, scores.units)
    groups = bed._outlying(paired, scores.units)[0]
    assert sorted(map(len, groups)) == [8, 10]
    states = bed._stratum_states(paired[0], groups)
    assert len(states) == len({(round(t), draws) for _, t, draws, _ in states}) < 2000
    assert abs(math.fsum(p for p, *_ in states) - 1) < 1e-9
    assert bed.compare(scores.a, scores.b, calibration=0).method.startswith(
        "bootstrap with the outlying scores' draws counted exactly")


def test_a_far_group_spread_over_strata_is_counted_as_one_and_matches_scipys_lumps():
    """Ten scores near 10^5 in B spread over four strata of 2,000: each stratum's few far
    values hid behind the others' spread, so the saddlepoint smoothed the lumps (ends 2.4%
    of the width off), and as four groups they passed the mixture's three.  Counted as one
    group, its states merged where their centres lie within a 20th of the rest's sd, B's
    ends sit on SciPy's law: binomial draws per stratum convolved, the rest normal."""
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(11)
    a = [round(rng.random(), 4) for _ in range(8000)]
    b = [round(rng.random(), 4) for _ in range(8000)]
    far = {h * 2000 + k: 10 ** 5 - rng.random() / 2 for h, many in enumerate((4, 2, 3, 1))
           for k in range(many)}
    b = [far.get(i, y) for i, y in enumerate(b)]
    strata = [i // 2000 for i in range(8000)]
    analysis = bed.compare(a, b, strata=strata, calibration=0).comparisons[0].analysis
    assert analysis.method == "mixture"
    law, rest_mean, rest_var = np.array([1.0]), 0.0, 0.0
    for h, many in enumerate((4, 2, 3, 1)):
        law = np.convolve(law, stats.binom.pmf(np.arange(2001), 2000, many / 2000))
        rest = np.array([y for i, y in enumerate(b[h * 2000:(h + 1) * 2000]) if y < 10])
        rest_mean, rest_var = rest_mean + rest.mean(), rest_var + 2000 * rest.var()
    counts = np.arange(len(law))[law > 1e-15]
    weights, value = law[law > 1e-15], np.mean(list(far.values()))
    centres = (counts * value + (8000 - counts) * rest_mean / 4) / 8000

    def cdf(x):
        return float(weights @ stats.norm.cdf(x, centres, np.sqrt(rest_var) / 8000))

    for end, level in ((analysis.ci_b.lo, 0.025), (analysis.ci_b.hi, 0.975)):
        lo, hi = 0.0, 1000.0
        for _ in range(100):
            lo, hi = (lo, (lo + hi) / 2) if cdf((lo + hi) / 2) >= level else ((lo + hi) / 2, hi)
        assert abs(float(end) - hi) < 0.005 * float(analysis.ci_b.hi - analysis.ci_b.lo)


def test_the_mixture_refuses_what_it_cannot_count_and_reads_its_law_on_and_off_a_lattice():
    """Four far values are more than it counts (the bootstrap then runs); outliers not rare
    (K's mean past 100) or past _MIXTURE_STATES states are refused; a mixture without a
    lattice reads its quantile where the law reaches the level, with one a lattice value."""
    rng = random.Random(9)
    a = [round(rng.random(), 4) for _ in range(1000)]
    b = a[:996] + [500.0, 700.0, -900.0, 1300.0]
    assert not bed._mixture_fits(bed.Scores(tuple(map(Fraction, map(str, a))),
                                            tuple(map(Fraction, map(str, b)))).units)
    stratum = bed._Stratum.of([0] * 700 + [1] * 300)
    assert bed._stratum_states(stratum, {frozenset({stratum.values[1]})}) is None  # K ~ 300
    many = bed._Stratum.of(list(range(900)) + [10 ** 6, 2 * 10 ** 6 + 7, 5 * 10 ** 6 + 13] * 30)
    out = frozenset(frozenset({v}) for v in sorted(many.values)[-3:])    # three groups
    assert bed._stratum_states(many, out) is None                     # past the states kept
    assert bed._Mixture.of(((1, (many,), (out,)),), 1) is None
    one = bed._Stratum.of(list(range(990)) + [10 ** 6] * 10)
    far = frozenset({frozenset({max(one.values)})})
    four = bed._Mixture.of(((1, (one,), (far,)), (-1, (one,), (far,)), (1, (one,), (far,)),
                            (-1, (one,), (far,))), 1)     # 4 parts: states merged, not refused
    assert len(four.states) < bed._MIXTURE_STATES and \
        abs(math.fsum(p for p, *_ in four.states) - 1) < 1e-12
    crowd = bed.Scores(tuple(map(Fraction, map(str, a))) * 5,      # a lump of 100 values
                       tuple(map(Fraction, map(str, (a * 5)[:4899]))) + tuple(   # and one far
                           50 + Fraction(k, 1000) for k in range(100)) + (Fraction(10 ** 4),))
    assert bed._outlying(crowd.units.moments["b"], crowd.units) is None   # past 100 values
    unequal = bed.Scores(tuple(map(Fraction, map(str, a))) * 2, tuple(
        map(Fraction, map(str, a[:-5] + [500.0, 700.0, -900.0, 1300.0, 10.0]))) * 2,
        clusters=tuple(i // 3 if i < 1500 else i for i in range(2000)))
    assert bed._why_resampled(unequal.units).startswith("a few values move a resampled mean "
                                                        "on their own and the clusters' sizes")
    smooth = bed._Mixture(((1.0, 0.0, 1.0, 0.0, 0.0),), 1)
    assert smooth.grid is None and abs(float(smooth.quantile(0.975)) - 1.959964) < 1e-5
    assert abs(smooth.mass_below(0) - 0.5) < 1e-12
    lattice = bed._Mixture(((0.5, 0.0, 0.0, 0.0, 0.0), (0.5, 10.0, 0.0, 0.0, 0.0)), 10, 10)
    assert lattice.grid == 1 and lattice.quantile(0.25) == 0 and lattice.quantile(0.75) == 1
    assert lattice.mass_below(Fraction(1, 2)) == 0.5 and lattice.mass_below(0) == 0.0


def test_the_sign_flip_test_draws_patterns_where_too_many_differences_dominate():
    """Five of 60 differences far larger than the rest (more than the three taken exactly),
    and 40 differences in all (fewer than the saddlepoint takes): random sign patterns."""
    rng = random.Random(10)
    diffs = [rng.choice([-1, 1]) * rng.randint(1, 9999) for _ in range(55)] + \
        [(-1) ** k * (10 ** 7 + k) for k in range(5)]
    test = bed.sign_flip_test(random.Random(0), diffs)
    assert not test.exact and not test.saddlepoint and test.permutations == bed.PERMUTATIONS
    assert bed._sign_flip_outlying(diffs) is None
    assert bed._sign_flip_outlying(diffs[:40]) is None


@pytest.mark.once
def test_the_sign_flip_test_is_exact_where_the_differences_take_few_sizes():
    """Differences of a few sizes however far apart (3333333333333333 and 3333333333333334,
    a rubric's thirds written as 16-decimal text, taken exactly): Binomial counts per size,
    equal to all patterns enumerated on small cases and within Monte Carlo error of 10^6
    NumPy patterns.  A rubric's thirds written so are read as thirds (their ties had been
    split by 1e-17, and verdicts flipped: 0.0471 against the thirds' 0.0576)."""
    rng = random.Random(9)
    a = [rng.choice([0, 1, 2, 3]) for _ in range(200)]
    b = [min(3, x + rng.choice([0, 1, 1, 1, -1])) for x in a]
    result = bed.compare([x / 3 for x in a], [y / 3 for y in b], calibration=0)
    test = result.comparisons[0].analysis.test
    thirds = [y - x for x, y in zip(a, b) if y != x]
    assert test.exact and test.p == bed._sign_flip_few_values(thirds, abs(sum(thirds))).p
    assert result.method == "exact bootstrap (B = infinity)"        # thirds: a small lattice
    diffs = [int(Fraction(repr(y / 3)) * 10 ** 16 - Fraction(repr(x / 3)) * 10 ** 16)
             for x, y in zip(a, b)]
    diffs = [d for d in diffs if d]
    observed = abs(sum(diffs))
    decimals = bed._sign_flip_few_values(diffs, observed)
    assert decimals.exact and decimals.p < test.p      # the decimals split the thirds' ties
    generator, values = np.random.default_rng(2), np.array(diffs, dtype=float)
    hits = sum(int((np.abs((generator.integers(0, 2, (50_000, len(diffs))) * 2 - 1) @ values)
                    >= observed * (1 - 1e-12)).sum()) for _ in range(20))
    assert abs(decimals.p - hits / 10 ** 6) < 4 * math.sqrt(decimals.p / 10 ** 6)
    for seed in range(30):                     # all 2**k patterns, k up to 12
        pick = random.Random(seed)
        small = [pick.choice([-1, 1]) * pick.choice([5, 7, 12])
                 for _ in range(pick.randint(1, 12))]
        target = abs(sum(small)) or 1
        brute = sum(abs(sum(sign * d for sign, d in zip(signs, small))) >= target
                    for signs in itertools.product((1, -1), repeat=len(small)))
        assert bed._sign_flip_few_values(small, target).p == brute / 2 ** len(small)


@pytest.mark.once
def test_a_group_of_far_differences_makes_lumps_the_sign_flip_test_draws_patterns_for():
    """Ten differences near +-1,000 among 2,000 with sd 10: none moves T by a third of its sd
    alone (the ten together set it), but their signs put T in lumps ~2,000 apart, which
    Robinson's smooth law misreads (0.42 against 0.377): random patterns instead, within
    Monte Carlo error of 200,000 NumPy patterns."""
    rng = random.Random(3)
    diffs = [d for d in [round(rng.gauss(0.3, 10)) for _ in range(2000)] +
             [(1 if k < 6 else -1) * (1000 + rng.randint(0, 20)) for k in range(10)] if d]
    observed = abs(sum(diffs))
    assert bed._sign_flip_outlying(diffs) is None
    smooth = bed._sign_flip_saddlepoint(diffs, observed).p
    test = bed.sign_flip_test(random.Random(0), diffs)
    assert not test.exact and not test.saddlepoint and test.permutations == bed.PERMUTATIONS
    generator, values = np.random.default_rng(1), np.array(diffs)
    hits = sum(int((np.abs((generator.integers(0, 2, (20_000, len(diffs))) * 2 - 1) @ values)
                    >= observed).sum()) for _ in range(10))
    truth = hits / 200_000
    error = math.sqrt(truth * (1 - truth) * (1 / 200_000 + 1 / bed.PERMUTATIONS))
    assert abs(test.p - truth) < 4 * error and abs(smooth - truth) > 8 * error


@pytest.mark.once
def test_the_sign_flip_test_takes_a_few_outlying_differences_exactly():
    """300 differences with four decimals and two far larger than the rest: Robinson's
    saddlepoint for the rest, averaged over the outliers' four sign patterns, agrees with
    2,000,000 random sign patterns (NumPy) within their Monte Carlo error and 3% of p."""
    rng = random.Random(6)
    diffs = [round(rng.gauss(0.04, 0.3) * 10_000) for _ in range(300)] + [40_000, -25_000]
    test = bed.sign_flip_test(random.Random(0), diffs)
    assert test.saddlepoint and not test.exact
    d = np.array(diffs, dtype=float)
    generator, hits, patterns = np.random.default_rng(1), 0, 2_000_000
    for _ in range(patterns // 20_000):
        signs = generator.integers(0, 2, (20_000, len(d))) * 2 - 1
        hits += int((np.abs(signs @ d) >= abs(d.sum())).sum())
    p = hits / patterns
    assert 0.0005 < p < 0.2
    assert abs(test.p - p) < 4 * math.sqrt(p * (1 - p) / patterns) + 0.03 * p


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


@pytest.mark.once
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


@pytest.mark.once
def test_the_histogram_of_a_clustered_gap_matches_the_cluster_bootstrap():
    """The JSON histogram's shares, read from the ratio's saddlepoint cdf, against the share
    of 200,000 NumPy cluster resamples in each bin."""
    a, b, clusters, _, _, ratios = clustered_pair()
    bins = bed.compare(a, b, clusters=clusters).to_dict()["comparisons"][0]["histogram"]
    assert len(bins) >= 8 and sum(row["share"] for row in bins) == pytest.approx(1, abs=1e-3)
    for row in bins:
        drawn = np.mean((ratios >= row["lo"]) & (ratios < row["hi"]))
        assert row["share"] == pytest.approx(drawn, abs=0.006), row


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
    test = bed._sign_flip_saddlepoint([d for d in diffs if d], abs(sum(diffs)))
    assert test.saddlepoint
    exact = exact_sign_flip_p(diffs)
    assert test.p == pytest.approx(exact, rel=0.05, abs=1e-4)


@pytest.mark.parametrize("seed, m, scale", [(1, 150, 100), (2, 300, 100), (3, 600, 10),
                                            (4, 30, 1000), (5, 2000, 3)])
def test_the_sign_flip_test_on_a_lattice_is_exact_by_its_generating_function(seed, m, scale):
    """Differences on a lattice coarse enough for the exact count: p over all 2**m patterns
    (NumPy's convolution of the +-d masses is the oracle); it was the saddlepoint or 10,000
    random patterns beyond 20 nonzero differences."""
    rng = random.Random(seed)
    diffs = [round(rng.gauss(0.05, 0.3) * scale) for _ in range(m)]
    test = bed.sign_flip_test(random.Random(0), diffs)
    assert test.exact and not test.saddlepoint
    assert test.permutations == 2 ** sum(1 for d in diffs if d)
    assert test.p == pytest.approx(exact_sign_flip_p(diffs), rel=1e-9, abs=1e-300)


def test_thirty_items_all_in_one_direction_have_the_exact_sign_flip_p():
    """p = 2 / 2**30, not the 1/10,001 floor of random patterns."""
    test = bed.sign_flip_test(random.Random(0), [3, 1, 2] * 10)
    assert test.exact and test.p == 2 ** -29


@pytest.mark.parametrize("seed, m, against", [(1, 60, 0), (2, 60, 3), (3, 2000, 2)])
def test_a_sign_flip_p_in_the_far_tail_is_counted_exactly(seed, m, against):
    """B above A on all items but *against*, differences too fine for the lattice count: the
    saddlepoint's Newton steps divided by zero there (status 70); the few patterns as extreme
    are counted.  Oracle: itertools over every set of the twelve smallest items flipped (a set
    holding a larger item is not as extreme)."""
    rng = random.Random(seed)
    diffs = [rng.randrange(10 ** 15, 10 ** 16) for _ in range(m)]
    for index in range(against):
        diffs[index] = -rng.randrange(10 ** 13, 10 ** 14)
    test = bed.sign_flip_test(random.Random(0), diffs)
    sizes, observed = sorted(map(abs, diffs)), abs(sum(diffs))
    as_extreme = sum(1 for k in range(13) for flipped in itertools.combinations(sizes[:12], k)
                     if sum(sizes) - 2 * sum(flipped) >= observed)
    assert sum(sizes) - 2 * sizes[12] < observed
    assert test.exact and test.p == 2 * as_extreme / 2 ** m


def test_real_scores_all_above_compare_with_the_exact_sign_flip_p():
    rng = random.Random(1)
    a = [rng.random() / 10 for _ in range(60)]
    b = [x + 0.5 + rng.random() for x in a]
    result = bed.compare(a, b)
    test = result.comparisons[0].analysis.test
    assert test.exact and test.p == 2 ** -59


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


ARTICLE = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B)


def test_stratified_resampling_keeps_stratum_sizes_exactly():
    strata = [list(range(0, 7)), list(range(7, 20)), list(range(20, 22))]
    for s, units in enumerate(strata):
        indicator = tuple(int(u in units) for u in range(22))
        sums = bed.resample_sums(random.Random(s), (indicator,), 50, strata=strata)
        assert sums == [len(units)] * 50


def test_stratified_draws_equal_the_naive_loop():
    pick = random.Random(2)
    values = tuple(pick.randrange(5) for _ in range(300))
    strata = [list(range(0, 40)), list(range(40, 299)), [299, 3]]
    fast, slow = random.Random(8), random.Random(8)
    got = bed.resample_sums(fast, (values,), 30, strata=strata)
    want = [sum(values[units[slow.randrange(len(units))]] for units in strata
                for _ in range(len(units))) for _ in range(30)]
    assert got == want and fast.getstate() == slow.getstate()


def naive_cluster_paired(rng, a, b, clusters, resamples):
    """Resample whole clusters naively: per round G draws of randrange(G)."""
    order = list(dict.fromkeys(clusters))
    members = {c: [i for i, x in enumerate(clusters) if x == c] for c in order}
    out = []
    for _ in range(resamples):
        drawn = [order[rng.randrange(len(order))] for _ in order]
        items = [i for c in drawn for i in members[c]]
        out.append(Fraction(sum(b[i] - a[i] for i in items), len(items)))
    return sorted(out)


def test_cluster_bootstrap_equals_naive_cluster_resampling():
    pick = random.Random(4)
    sizes = [pick.randrange(1, 7) for _ in range(25)]
    clusters = tuple(c for c, size in enumerate(sizes) for _ in range(size))
    a = tuple(pick.randrange(2) for _ in clusters)
    b = tuple(pick.randrange(2) for _ in clusters)
    fast, slow = random.Random(6), random.Random(6)
    dist = bed.paired_distribution(fast, bed.Scores(a, b, clusters), 200)
    want = naive_cluster_paired(slow, a, b, clusters, 200)
    assert [dist.value(i) for i in range(200)] == want
    assert fast.getstate() == slow.getstate()


def test_bca_on_a_small_example_against_a_hand_derivation():
    a = (1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1)
    b = (1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1)
    scores = bed.Scores(a, b)
    result = bed.analyze(scores, random.Random(3), resamples=40, confidence=Fraction("0.9"),
                         interval="bca")
    # By hand: d = b - a has three +1 and nine 0 on 12 items; gap t = 3/12.  The paired
    # resamples are the stream's third block (A's and B's resamples come first).
    rng = random.Random(3)
    bed.resample_sums(rng, (a,), 40)
    bed.resample_sums(rng, (b,), 40)
    diff = tuple(y - x for x, y in zip(a, b))
    stats = sorted(Fraction(s, 12) for s in bed.resample_sums(rng, (diff,), 40))
    t = Fraction(3, 12)
    share = (sum(x < t for x in stats) + Fraction(sum(x == t for x in stats), 2)) / 40
    z0 = NormalDist().inv_cdf(float(share))
    # jackknife: leaving out a +1 item gives 2/11 (3 times), a 0 item 3/11 (9 times)
    jack = [Fraction(2, 11)] * 3 + [Fraction(3, 11)] * 9
    mean = sum(jack) / 12
    cube = float(sum((mean - j) ** 3 for j in jack))
    acc = cube / (6 * float(sum((mean - j) ** 2 for j in jack)) ** 1.5)
    ends = []
    for z in (NormalDist().inv_cdf(0.05), NormalDist().inv_cdf(0.95)):
        alpha = NormalDist().cdf(z0 + (z0 + z) / (1 - acc * (z0 + z)))
        ends.append(stats[min(39, max(0, math.floor(alpha * 40)))])
    assert (result.paired.lo, result.paired.hi) == tuple(ends)


def test_basic_interval_reflects_the_percentile_one():
    scores = bed.Scores((1, 0, 1, 1, 0, 1, 0, 1) * 5, (1, 1, 1, 0, 0, 1, 1, 1) * 5)
    dist = bed.paired_distribution(random.Random(1), scores, 300)
    t = scores.mean_b - scores.mean_a
    pct = dist.interval(bed.CONFIDENCE)
    basic = dist.interval(bed.CONFIDENCE, "basic", t)
    assert (basic.lo, basic.hi) == (2 * t - pct.hi, 2 * t - pct.lo)


def test_bca_with_a_symmetric_jackknife_and_the_median_estimate_is_the_percentile_rule():
    """Acceleration 0 and z0 0: BCa's levels are the percentile rule's q and 1 - q."""
    low, high = bed._bca_levels(Fraction(1, 2), {Fraction(1): 4, Fraction(3): 4}, C95)
    assert (low, high) == (pytest.approx(0.025, abs=1e-15), pytest.approx(0.975, abs=1e-15))


@pytest.mark.simulation
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_interval_coverage_on_the_article_setting_is_nominal(method):
    """1,500 replays (counts engine, 1,000 resamples): 95% within 3.5 Monte Carlo s.e."""
    cov = bed.coverage(random.Random(21), ARTICLE, 500, replays=1500, resamples=1000,
                       confidence=bed.CONFIDENCE, engine="counts", interval=method)
    se = math.sqrt(0.95 * 0.05 / 1500)
    assert cov.undefined == 0
    assert abs(float(cov.covers_rate) - 0.95) < 3.5 * se, float(cov.covers_rate)


def test_item_level_interval_undercovers_clustered_items_and_the_cluster_one_holds():
    copula = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B, cluster_size=10, icc=Fraction("0.5"))
    cov = bed.coverage(random.Random(5), copula, 200, replays=300, resamples=400,
                       confidence=bed.CONFIDENCE)
    se = math.sqrt(0.95 * 0.05 / 300)
    assert float(cov.item_level.covers_rate) < 0.88                  # visibly under
    assert abs(float(cov.covers_rate) - 0.95) < 3.5 * se + 0.01      # cluster: near nominal


def test_clustered_simulation_keeps_the_accuracies():
    copula = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B, cluster_size=8, icc=Fraction("0.6"))
    scores = copula.simulate(random.Random(2), 40_000)
    assert abs(float(scores.mean_a) - 0.72) < 0.012 and abs(float(scores.mean_b) - 0.76) < 0.012
    assert bed.analyze(scores, random.Random(1), calibration=0).design.icc > 0.1
    assert bed.simulate_clustered(random.Random(1), 7, 0.6, 0.7, 0.7, 3, 0).clusters == \
        (0, 0, 0, 1, 1, 1, 2)


@pytest.mark.parametrize("cells", [bed.Cells(18, 6, 9, 7), bed.Cells(2, 15, 16, 7),
                                   bed.Cells(30, 0, 6, 4), bed.Cells(30, 6, 0, 4),
                                   bed.Cells(0, 20, 20, 0), bed.Cells(5, 1, 30, 4)])
def test_exact_paired_distribution_against_enumeration(cells):
    lo, cdf = bed._paired_gap_cdf(cells)
    exact = oracle.exact_paired_gap_distribution(cells.a_only, cells.b_only, cells.n)
    pmf = [cdf[0]] + [y - x for x, y in zip(cdf, cdf[1:])]
    for i, p in enumerate(pmf):
        assert p == pytest.approx(float(exact.get(lo + i, 0)), abs=1e-13)


def test_exact_interval_of_the_shipped_data():
    cells = bed.read_scores_csv(SHIPPED_CSV).pair(1).cells()
    exact = bed.exact_intervals(cells, bed.CONFIDENCE)
    assert (exact["paired"].lo, exact["paired"].hi) == (Fraction(-6, 500), Fraction(42, 500))
    assert (exact["a"].lo, exact["a"].hi) == (Fraction(336, 500), Fraction(376, 500))


def test_exact_percentiles_agree_with_monte_carlo_within_its_error():
    cells = bed.Cells(300, 60, 80, 60)
    exact = bed.exact_intervals(cells, bed.CONFIDENCE)
    dists = bed.bootstrap(random.Random(9), scores_of_cells(cells), 20_000, engine="counts")
    for name in ("a", "b", "paired", "unpaired"):
        mc = dists[name].interval(bed.CONFIDENCE)
        err_lo, err_hi = dists[name].end_errors(bed.CONFIDENCE)
        step = Fraction(1, cells.n)
        assert abs(mc.lo - exact[name].lo) <= 2 * err_lo + step, name
        assert abs(mc.hi - exact[name].hi) <= 2 * err_hi + step, name


def test_exact_bootstrap_of_a_million_items_is_symmetric_where_it_must_be():
    cells = bed.Cells(400_000, 100_000, 100_000, 400_000)
    exact = bed.exact_intervals(cells, bed.CONFIDENCE)
    assert exact["paired"].lo == -exact["paired"].hi
    assert exact["unpaired"].lo == -exact["unpaired"].hi
    assert exact["a"] == exact["b"]


def test_monte_carlo_error_shrinks_like_one_over_root_b():
    scores = scores_of_cells(bed.Cells(290, 67, 85, 58))
    small = bed.paired_distribution(random.Random(1), scores, 1000).end_errors(bed.CONFIDENCE)
    large = bed.paired_distribution(random.Random(1), scores, 16000).end_errors(bed.CONFIDENCE)
    assert max(large) < max(small) / 2


def test_clustered_simulation_report_shows_both_coverages():
    status, out, _ = cli("simulate", "--cluster-size", "5", "--icc", "0.5", "--n-items", "100",
                         "--replays", "20", "--resamples", "200")
    assert status == 0
    assert "the item-level bootstrap, ignoring the clusters, covers" in out
    assert "clusters: 20 resampled whole" in out


def test_simulated_clustered_run_writes_its_clusters(tmp_path):
    path = tmp_path / "c.csv"
    status, _, _ = cli("simulate", "--cluster-size", "4", "--n-items", "20", "--replays", "0",
                       "--resamples", "50", "--write-csv", str(path))
    text = path.read_text().splitlines()
    assert status == 0 and text[0] == "item,system_a_correct,system_b_correct,cluster"
    assert text[5].endswith(",2")


def tetrachoric_both_right(corr, acc_a, acc_b, terms=200):
    """P(za < h, zb < k) for latent correlation rho = corr**2 by the tetrachoric series,
    an independent check on the quadrature: Phi(h)Phi(k) + phi(h)phi(k) sum rho^j/j!
    He_{j-1}(h) He_{j-1}(k)."""
    normal = NormalDist()
    h, k, rho = normal.inv_cdf(acc_a), normal.inv_cdf(acc_b), corr * corr
    he_h, he_k = [1.0, h], [1.0, k]
    for j in range(2, terms):
        he_h.append(h * he_h[-1] - (j - 1) * he_h[-2])
        he_k.append(k * he_k[-1] - (j - 1) * he_k[-2])
    total, power = 0.0, 1.0
    for j in range(1, terms):
        power *= rho / j
        total += power * he_h[j - 1] * he_k[j - 1]
    return normal.cdf(h) * normal.cdf(k) + normal.pdf(h) * normal.pdf(k) * total


@pytest.mark.parametrize("corr,acc_a,acc_b", [
    ("0.6", "0.72", "0.76"), ("0", "0.5", "0.9"), ("-0.6", "0.72", "0.76"), ("0.8", "0.3", "0.95"),
    ("0.3", "0.01", "0.99"),
])
def test_cell_probabilities_match_the_tetrachoric_series(corr, acc_a, acc_b):
    cells = bed.Copula(Fraction(corr), Fraction(acc_a), Fraction(acc_b)).cells
    want = tetrachoric_both_right(float(corr), float(acc_a), float(acc_b))
    assert cells.both == pytest.approx(want, abs=1e-10)
    assert sum(cells.as_tuple()) == pytest.approx(1.0, abs=1e-12)
    assert cells.a == pytest.approx(float(acc_a), abs=1e-12)
    assert cells.b == pytest.approx(float(acc_b), abs=1e-12)
    assert min(cells.as_tuple()) >= 0


def test_cell_probabilities_at_steep_correlation_agree_with_simulation():
    cells = bed.Copula(Fraction("0.99"), Fraction("0.72"), Fraction("0.76")).cells
    n = 200_000
    scores = bed.simulate_scores(random.Random(4), n, 0.99, 0.72, 0.76)
    both = sum(a & b for a, b in zip(scores.a, scores.b))
    se = math.sqrt(cells.both * (1 - cells.both) / n)
    assert abs(both / n - cells.both) < 4 * se


def test_article_power_and_items_needed():
    plan = bed.PowerPlan(ARTICLE.cells, bed.CONFIDENCE)
    assert plan.power(500) == pytest.approx(0.3697, abs=5e-4)
    assert plan.items_needed(Fraction("0.8")) == 1482
    assert plan.items_needed(Fraction("0.8"), paired=False) == 1884
    n = plan.items_needed(Fraction("0.9"))
    assert plan.power(n) >= 0.9 > plan.power(n - 1)
    assert plan.power(n, paired=False) < plan.power(n)            # pairing helps
    assert plan.half_width(500) == pytest.approx(0.0482, abs=1e-4)


def test_power_at_zero_gap_is_the_type_one_error_and_never_reaches_a_target():
    plan = bed.PowerPlan(bed.Copula(Fraction("0.6"), Fraction("0.7"), Fraction("0.7")).cells,
                         Fraction("0.95"))
    assert plan.power(1000) == pytest.approx(0.05)
    assert plan.items_needed(Fraction("0.8")) is None


def test_half_width_planning_three_ways():
    plan = bed.plan_accuracy(Fraction("0.85"), Fraction("0.015"), Fraction("0.95"))
    assert plan.wald == 2177
    assert abs(plan.wilson - 2177) <= 5
    assert plan.clopper_pearson >= plan.wilson
    assert clopper_pearson_half_width(round(0.85 * plan.clopper_pearson),
                                      plan.clopper_pearson, Fraction("0.95")) <= 0.015


def test_clopper_pearson_known_values():
    lo, hi = bed.clopper_pearson(7, 20, Fraction("0.95"))
    assert (round(lo, 6), round(hi, 6)) == (0.153909, 0.592189)   # R: binom.test(7, 20)
    assert bed.clopper_pearson(0, 10, Fraction("0.95"))[0] == 0.0
    assert bed.clopper_pearson(10, 10, Fraction("0.95"))[1] == 1.0


def chi_square_z(draws, probabilities: dict) -> float:
    """Standardised chi-square statistic of draws against {value: probability}: cells
    expecting at least 5 draws on their own, the rest pooled."""
    counts = {}
    for x in draws:
        counts[x] = counts.get(x, 0) + 1
    size, stat, cells, tail_expected, tail_observed = len(draws), 0.0, 0, 0.0, 0
    for value, probability in probabilities.items():
        expected = size * probability
        if expected < 5:
            tail_expected += expected
            tail_observed += counts.get(value, 0)
            continue
        stat += (counts.get(value, 0) - expected) ** 2 / expected
        cells += 1
    if tail_expected > 0:
        stat += (tail_observed - tail_expected) ** 2 / tail_expected
        cells += 1
    df = cells - 1
    return (stat - df) / math.sqrt(2 * df)


def binomial(n, p) -> dict:
    return {k: bed.binom_pmf(k, n, p) for k in range(n + 1)}


@pytest.mark.parametrize("n,p", [(500, 0.3), (150, 0.56), (20, 0.2), (1000, 0.9),
                                 (100_000, 0.3), (40, 0.26), (12, 0.9), (2, 0.5)])
def test_binomial_samplers_fit_the_binomial(n, p):
    btrd = bed.binomial_variates(random.Random(n), [n] * 40_000, p)
    table = bed.binomial_table_variates(random.Random(n), n, p, 40_000)
    assert abs(chi_square_z(btrd, binomial(n, p))) < 4
    assert abs(chi_square_z(table, binomial(n, p))) < 4


def test_batched_binomials_equal_single_draws():
    one, many = random.Random(3), random.Random(3)
    trials = [500, 500, 7, 150, 151, 150, 100000]
    assert bed.binomial_variates(many, trials, 0.3) == [bed.binomial_variate(one, t, 0.3)
                                                        for t in trials]
    assert one.getstate() == many.getstate()


def test_multinomial_counts_add_up_and_edge_probabilities():
    rng = random.Random(1)
    assert sum(bed.multinomial_variate(rng, 1000, (0.2, 0.3, 0.5))) == 1000
    assert bed.binomial_variate(rng, 10, 0.0) == 0 and bed.binomial_variate(rng, 10, 1.0) == 10
    assert bed.multinomial_variate(rng, 5, (0.0, 1.0, 0.0)) == (0, 5, 0)


def multinomial(n, counts) -> dict:
    """{outcome: probability} of Multinomial(n, counts / sum(counts)), exactly."""
    total, out = sum(counts), {}
    for outcome in itertools.product(range(n + 1), repeat=len(counts) - 1):
        if sum(outcome) <= n:
            draw = outcome + (n - sum(outcome),)
            ways = math.factorial(n)
            for x, c in zip(draw, counts):
                ways = ways * Fraction(c, total) ** x / math.factorial(x)
            out[draw] = float(ways)
    return out


@pytest.mark.parametrize("counts", [(3, 2, 1), (5, 1, 1, 1), (1, 1)])
def test_multinomial_columns_fit_the_multinomial_topping_up_and_taking_out(counts):
    """Poisson counts brought to n (items added when short, taken out when over) are
    exactly multinomial: every outcome's frequency against its probability."""
    columns = bed.multinomial_columns(random.Random(len(counts)), counts, 60_000)
    draws = list(zip(*columns))
    assert {sum(draw) for draw in draws} == {sum(counts)}
    assert abs(chi_square_z(draws, multinomial(sum(counts), counts))) < 4


@pytest.mark.parametrize("counts", [[400 + 7 * j for j in range(200)],    # Poisson tables
                                    [60_000, 30_000, 9_000, 1_000]])      # conditional BTRD
def test_multinomial_columns_have_the_multinomial_moments_on_both_paths(counts):
    n, draws = sum(counts), 4_000
    columns = bed.multinomial_columns(random.Random(7), counts, draws)
    assert all(sum(draw) == n for draw in zip(*columns))
    for j in (0, 1, len(counts) - 1):
        p = counts[j] / n
        mean, var = sum(columns[j]) / draws, n * p * (1 - p)
        assert abs(mean - n * p) < 4.5 * math.sqrt(var / draws)
        sample_var = sum((x - mean) ** 2 for x in columns[j]) / (draws - 1)
        assert abs(sample_var / var - 1) < 4.5 * math.sqrt(2 / draws)
    half = len(counts) // 2       # the first cells together: Binomial(n, P), not Poisson
    share = sum(counts[:half]) / n
    totals = [sum(draw[:half]) for draw in zip(*columns)]
    mean = sum(totals) / draws
    sample_var = sum((x - mean) ** 2 for x in totals) / (draws - 1)
    assert abs(sample_var / (n * share * (1 - share)) - 1) < 4.5 * math.sqrt(2 / draws)


@pytest.mark.parametrize("mean", [1, 2, 7, 30, 1_000, 123_457, 10_000_000])
def test_poisson_tables_hold_all_but_2_to_the_minus_60_and_match_scipy(mean):
    stats = pytest.importorskip("scipy.stats")
    lo, cdf = bed._poisson_cdf_table(mean)
    hi = lo + len(cdf) - 1
    assert stats.poisson.cdf(lo - 1, mean) + stats.poisson.sf(hi, mean) < 2 ** -60
    for k in range(max(lo, mean - 3 * math.isqrt(mean)), mean + 3 * math.isqrt(mean) + 3):
        assert cdf[k - lo] == pytest.approx(stats.poisson.cdf(k, mean), abs=1e-12)


@pytest.mark.parametrize("engine,cells", [
    ("counts", bed.Cells(18, 6, 9, 7)),       # agreement dominates: two-binomial factorisation
    ("counts", bed.Cells(2, 15, 16, 7)),      # mostly discordant: the conditional route
    ("counts", bed.Cells(30, 0, 6, 4)),       # one kind of discordance only
    ("stream", bed.Cells(18, 6, 9, 7)),
])
def test_paired_bootstrap_distribution_is_the_exact_multinomial_one(engine, cells):
    scores = scores_of_cells(cells)
    data = cells if engine == "counts" else scores
    dist = bed.paired_distribution(random.Random(5), data, 20_000, engine)
    exact = {d: float(p) for d, p in oracle.exact_paired_gap_distribution(
        cells.a_only, cells.b_only, cells.n).items()}
    assert abs(chi_square_z(dist.sums, exact)) < 4


@pytest.mark.once
@pytest.mark.parametrize("n,acc_a,acc_b,corr", [
    (60, "0.72", "0.76", "0.6"), (150, "0.5", "0.6", "0.3"), (120, "0.8", "0.8", "0.6"),
])
def test_counts_and_item_engines_agree_on_coverage_and_power(n, acc_a, acc_b, corr):
    copula = bed.Copula(Fraction(corr), Fraction(acc_a), Fraction(acc_b))
    runs = {}
    for engine, replays in (("stream", 300), ("counts", 1500)):
        runs[engine] = bed.coverage(random.Random(11), copula, n, replays=replays,
                                    resamples=400, confidence=Fraction("0.9"), engine=engine)
    for rate in ("covers_rate", "excludes_zero_rate"):
        a, b = getattr(runs["stream"], rate), getattr(runs["counts"], rate)
        pooled = (a * runs["stream"].replays + b * runs["counts"].replays) / 1800
        se = math.sqrt(float(pooled * (1 - pooled)) * (1 / 300 + 1 / 1500)) or 1e-9
        assert abs(float(a - b)) < 4 * se, (rate, float(a), float(b))


@pytest.mark.once
def test_counts_engine_coverage_is_nominal_and_power_is_analytic():
    cov = bed.coverage(random.Random(8), ARTICLE, 500, replays=2000, resamples=1000,
                       confidence=bed.CONFIDENCE, engine="counts")
    plan = bed.PowerPlan(ARTICLE.cells, bed.CONFIDENCE)
    se = math.sqrt(0.95 * 0.05 / 2000)
    assert abs(float(cov.covers_rate) - 0.95) < 4 * se + 0.005       # percentile CI at n=500
    power_se = math.sqrt(plan.power(500) * (1 - plan.power(500)) / 2000)
    assert abs(float(cov.excludes_zero_rate) - plan.power(500)) < 4 * power_se


class CountingRandom(random.Random):
    """Counts the uniforms drawn: the counts engine's work is that many draws."""

    calls = 0

    def random(self):
        self.calls += 1
        return super().random()


def test_counts_engine_draws_as_many_uniforms_at_any_n():
    """Cost independent of n (the benchmark times it): the same number of draws per replay
    at n = 500 and n = 100,000, up to the few extra uniforms of BTRD's rejection steps."""
    calls = {}
    for n in (500, 100_000):
        rng = CountingRandom(1)
        bed.coverage(rng, ARTICLE, n, replays=20, resamples=2000, confidence=bed.CONFIDENCE,
                     engine="counts")
        calls[n] = rng.calls
    assert calls[500] >= 20 * 4000
    assert abs(calls[100_000] - calls[500]) < 0.01 * calls[500]


def test_half_width_plan_cli():
    status, out, _ = cli("plan", "--half-width", "0.015", "--accuracy", "0.85")
    assert status == 0 and "Wald (normal approximation):  n=2,177" in out
    body = json.loads(cli("plan", "--half-width", "0.015", "--accuracy", "0.85", "--json")[1])
    assert body["n_needed"]["wald"] == 2177


def test_newcombe_paired_matches_the_published_example():
    """Fagerland, Lydersen and Laake (2017), Cavo et al. 2012: 59, 6 / 16, 80."""
    got = bed.newcombe_paired(bed.Cells(59, 16, 6, 80), C95)
    assert (round(float(got.lo), 4), round(float(got.hi), 4)) == (-0.1186, -0.0046)


def independent_newcombe(both, a_only, b_only, neither, z=1.959963984540054):
    """Newcombe's method 10 written out again from the paper's formulas."""
    n = both + a_only + b_only + neither

    def wilson(x):
        p = x / n
        centre, half = (2 * x + z * z) / (2 * (n + z * z)), \
            z * math.sqrt(z * z + 4 * x * (1 - p)) / (2 * (n + z * z))
        return centre - half, centre + half

    p1, p2 = (both + b_only) / n, (both + a_only) / n
    (l1, u1), (l2, u2) = wilson(both + b_only), wilson(both + a_only)
    a = both * neither - a_only * b_only
    e = (both + b_only) * (a_only + neither) * (both + a_only) * (b_only + neither)
    psi = 0 if e == 0 else ((a - n / 2) / math.sqrt(e) if a > n / 2 else 0 if a >= 0
                            else a / math.sqrt(e))
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2))
    high = d + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1))
    return max(-1, low), min(1, high)


@pytest.mark.parametrize("cells", [(1, 7, 1, 12), (36, 2, 12, 0), (289, 67, 85, 59),
                                   (0, 0, 5, 0), (10, 0, 0, 10), (3, 4, 5, 6)])
def test_newcombe_paired_against_an_independent_writing(cells):
    got = bed.newcombe_paired(bed.Cells(*cells), C95)
    want = independent_newcombe(*cells)
    assert float(got.lo) == pytest.approx(want[0], abs=1e-12)
    assert float(got.hi) == pytest.approx(want[1], abs=1e-12)


@pytest.mark.once
def test_calibration_flags_a_failing_interval_and_names_one_that_holds(tmp_path):
    path = table_file(tmp_path, (28, 1, 1, 0))            # 30 items, both near 0.97
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                         "--resamples", "500", "--details")
    line = next(l for l in out.splitlines() if l.startswith("calibration: at n=30"))
    assert "BCa CI covers the gap" in line
    body = json.loads(cli("compare", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                          "--resamples", "500", "--json")[1])
    cal = body["comparisons"][0]["calibration"]
    assert not cal["holds"], cal                          # BCa fails here (93.9% coverage)
    assert "warning: at this n the BCa interval" in out
    named = cal["recommended"]
    assert named is not None and f"--interval {named}" in out
    # the named interval measured again on fresh tables, independently of the first run
    cells = bed.Cells(28, 1, 1, 0)
    probs = tuple(c / 30 for c in cells.as_tuple())
    again = bed._interval_study(random.Random(99), probs, 30, Fraction(0),
                               (named,), C95, 3000, 2000)
    rate = again.covers_rate
    assert float(rate) >= 0.95 - 2.5 * again.standard_error(rate)


@pytest.mark.once
def test_bca_near_100_percent_is_flagged_or_holds():
    """Both accuracies 0.95: BCa's false-positive rate is within error of 5%, or the
    calibration says it is not."""
    for n in (30, 50, 100):
        cells = bed.Copula(bed.CORR, Fraction("0.95"), Fraction("0.95")).cells
        table = bed.Cells(*bed.multinomial_variate(random.Random(n), n, cells.as_tuple()))
        cal = bed.calibrate_cells(random.Random(1), table, C95, "bca", 2000, 1000)
        null = cal.null
        fine = float(null.excludes_zero_rate) <= 0.05 + 2 * null.standard_error(
            null.excludes_zero_rate)
        assert fine or not cal.holds


def test_calibration_of_the_shipped_file_holds():
    from helpers import SHIPPED_CSV
    body = json.loads(cli("compare", SHIPPED_CSV, "--json")[1])
    cal = body["comparisons"][0]["calibration"]
    assert cal["holds"] and cal["replays"] == 0 and cal["interval"] == "percentile"
    assert cal["coverage"]["exact"] and cal["coverage"]["covers_se"] == 0
    assert abs(cal["coverage"]["covers"] - 0.95) < 0.005


@pytest.mark.once
def test_the_coverage_loop_warns_below_nominal_and_the_named_interval_holds():
    status, out, _ = cli("simulate", "--n-items", "30", "--replays", "600", "--resamples", "500")
    warning = next(l for l in out.splitlines() if l.startswith("warning: at this n"))
    body = json.loads(cli("simulate", "--n-items", "30", "--replays", "600", "--resamples",
                          "500", "--json")[1])
    cov = body["coverage"]
    assert cov["covers"] < 0.95 - 2 * cov["covers_se"]
    named = warning.split("(--interval ")[1].split(")")[0]
    other = cov["others"][named]
    assert other["covers"] >= 0.95 - 2 * other["covers_se"]


def test_bca_coverage_counts_undefined_replays_as_misses():
    cov = bed.coverage(random.Random(3), bed.Copula(bed.CORR, Fraction("0.97"),
                                                    Fraction("0.97")), 20,
                       replays=300, resamples=200, confidence=C95, interval="bca")
    assert cov.undefined > 0
    assert cov.covers_rate == Fraction(cov.covers, 300)


def test_interval_table_lists_every_interval_with_its_error():
    status, out, _ = cli("calibrate", "--n-grid", "30", "--acc-pairs", "0.95/0.95",
                         "--replays", "300", "--json")
    body = json.loads(out)
    row = body["rows"][0]
    assert row["n"] == 30 and set(row["coverage"]["others"]) == {"basic", "bca", "score"}
    assert row["recommended"] in bed.INTERVALS


def brute_force_power(probs, n, confidence=C95):
    """Exact power by enumerating every table (independent of the threshold search)."""
    both, pa, pb, neither = probs
    total = 0.0
    for x in range(n + 1):
        for y in range(n + 1 - x):
            rest = n - x - y
            weight = math.comb(n, x) * math.comb(n - x, y) * pa ** x * pb ** y * \
                (both + neither) ** rest
            if weight < 1e-18:
                continue
            interval = bed.exact_intervals(bed.Cells(rest, x, y, 0), confidence)["paired"]
            total += weight * (interval.lo > 0 if pb > pa else interval.hi < 0)
    return total


@pytest.mark.parametrize("acc", [("0.72", "0.76"), ("0.9", "0.97"), ("0.6", "0.5")])
def test_exact_power_equals_enumeration_of_every_table(acc):
    cells = bed.Copula(bed.CORR, Fraction(acc[0]), Fraction(acc[1])).cells
    for n in (12, 25):
        want = brute_force_power(cells.as_tuple(), n)
        assert bed.exact_power(cells, n, C95) == pytest.approx(want, abs=1e-9)


@pytest.mark.once
def test_exact_power_of_the_article_and_the_items_it_needs():
    plan = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B).cells, C95)
    assert round(plan.exact_power(500), 4) == 0.3567
    assert round(plan.power(500), 4) == 0.3697
    assert round(plan.exact_power(1482), 4) == 0.7935
    needed = plan.exact_items_needed(Fraction("0.8"))
    assert needed == 1507
    assert plan.exact_power(needed) >= 0.8 > plan.exact_power(needed - 1)
    powers = [plan.exact_power(n) for n in range(needed - 40, needed + 200, 7)]
    assert powers == sorted(powers)


def test_clopper_pearson_sample_size_is_the_one_after_which_every_n_fits():
    plan = bed.plan_accuracy(Fraction("0.999"), Fraction("0.005"), C95)
    assert plan.clopper_pearson == 553
    width = lambda n: clopper_pearson_half_width(round(Fraction("0.999") * n), n, C95)
    assert width(368) <= 0.005 and width(552) > 0.005
    assert all(width(n) <= 0.005 for n in range(553, 2500))


def test_wald_near_one_is_flagged():
    status, out, _ = cli("plan", "--half-width", "0.005", "--accuracy", "0.999")
    assert "warning: Wald's n expects 0.2 errors" in out


def real_scores_file(tmp_path, n=200, sd=0.1, seed=5):
    """Real-valued scores in [0, 1] (three decimals): not 0/1, so no --exact advice."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        a = min(1, max(0, round(rng.gauss(0.6, sd), 3)))
        b = min(1, max(0, round(a + rng.gauss(0.02, sd), 3)))
        lines.append(f"{i},{a},{b}\n")
    path = tmp_path / "real.csv"
    path.write_text("item,a,b\n" + "".join(lines))
    return str(path)


@pytest.mark.once
def test_real_scores_get_a_resample_count_the_next_run_does_not_raise(tmp_path):
    # --resamples forces the Monte Carlo bootstrap (else the saddlepoint, with no Monte Carlo
    # error); on this scale the ends' error is small enough that a count, not the method, is
    # advised: _mc_advice's "resamples" branch
    path = real_scores_file(tmp_path)
    args = ["compare", path, "--a-col", "a", "--b-col", "b", "--resamples", "2000"]
    body = json.loads(cli(*args, "--json")[1])["comparisons"][0]
    first = body["mc_advice"]
    assert first is not None and first["kind"] == "resamples", first
    worst = max(body["mc_error"]["paired"] + body["mc_error"]["unpaired"])
    assert first["worst"] == worst > 0.001
    # B * (2.576 sd / half a printed digit)^2, sd = worst / 1.96 a fifth larger, 2 digits up
    raw = 2000 * (2.576 * worst / 1.96 * 1.2 / 0.0005) ** 2
    assert first["resamples"] == bed._nice_up(raw) == 42_000
    assert raw <= first["resamples"] < raw * 1.1
    text = cli(*args, "--details")[1]
    assert ("about 42,000 resamples (--resamples) would hold each within +-0.05 pts (half "
            "that digit) of its value at B = infinity in 99 runs of 100") in text
    args[-1] = str(first["resamples"])
    again = json.loads(cli(*args, "--json")[1])["comparisons"][0]
    assert again["resamples"] == 42_000
    assert again["mc_advice"] is None, again["mc_advice"]
    assert max(again["mc_error"]["paired"] + again["mc_error"]["unpaired"]) <= 0.001


def brute_force_p(diffs):
    observed = abs(sum(diffs))
    hits = sum(abs(sum(s * d for s, d in zip(signs, diffs))) >= observed
               for signs in itertools.product((1, -1), repeat=len(diffs)))
    return Fraction(hits, 2 ** len(diffs))


@pytest.mark.parametrize("diffs", [[3, 1, 2], [5, -1, 2, 0, 7, -3], [1] * 9, [2, -2, 2, -2],
                                   list(range(-6, 7)), [10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]])
def test_exact_permutation_p_equals_enumeration_by_hand(diffs):
    got = bed.sign_flip_test(random.Random(0), diffs)
    assert got.exact and got.p == float(brute_force_p([d for d in diffs if d]))


def test_monte_carlo_permutation_p_is_within_error_of_exact():
    rng = random.Random(3)
    diffs = [rng.randrange(-40, 60) for _ in range(16)]
    exact = bed.sign_flip_test(random.Random(0), diffs).p
    mc = bed.sign_flip_test(random.Random(9), diffs, 20_000, exact_limit=0)
    assert not mc.exact
    assert abs(mc.p - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_permutation_test_type_one_error_is_at_most_alpha():
    """Null data (B - A symmetric about 0): rejections at 5% within Monte Carlo error."""
    rng = random.Random(12)
    rejections, trials = 0, 400
    for _ in range(trials):
        diffs = [rng.choice((-1, 1)) * rng.randrange(1, 100) for _ in range(30)]
        rejections += bed.sign_flip_test(rng, diffs, 199).p <= 0.05
    assert rejections / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


def test_holm_and_bonferroni_hand_examples():
    ps = [0.01, 0.02, 0.03, 0.04, 0.05]
    assert bed.bonferroni(ps) == pytest.approx([0.05, 0.10, 0.15, 0.20, 0.25])
    assert bed.holm(ps) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert bed.holm([0.04, 0.001, 0.9]) == pytest.approx([0.08, 0.003, 0.9])
    assert bed.holm([0.5, 0.6]) == [1.0, 1.0]
    assert bed.holm([0.2]) == [0.2] and bed.bonferroni([0.2]) == [0.2]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=40), st.integers(0, 2 ** 32))
def test_permutation_p_is_a_probability(diffs, seed):
    result = bed.sign_flip_test(random.Random(seed), diffs, 30)
    assert 0 < result.p <= 1


def test_auto_keeps_the_stream_engine_for_the_article_and_says_when_it_does_not(tmp_path):
    rng = random.Random(1)
    path = tmp_path / "big.csv"
    path.write_text("item,a,b\n" + "".join(f"{i},{int(rng.random() < 0.7)},"
                                           f"{int(rng.random() < 0.72)}\n" for i in range(30_000)))
    got = json.loads(cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--json",
                         "--calibration", "0", "--resamples", "2000")[1])
    assert got["comparisons"][0]["engine"] == "counts" and got["params"]["engine"] == "auto"
    status, out, _ = cli("compare", str(path), "--a-col", "a", "--b-col", "b",
                         "--calibration", "0", "--details", "--resamples", "2000")
    assert "chosen by --engine auto" in out
    from helpers import SHIPPED_CSV
    assert quick_body("compare", SHIPPED_CSV)["comparisons"][0]["engine"] == "stream"
    exact = json.loads(cli("compare", SHIPPED_CSV, "--json", "--calibration", "0")[1])
    exact = exact["comparisons"][0]
    assert exact["engine"] is None and exact["method"] == "exact"      # nothing resampled


def test_counts_over_distinct_values_draw_the_bootstrap_distribution():
    """Resampled sums of a column with few values: mean n*mu and variance n*sigma^2."""
    column = [0, 0, 1, 3, 3, 3, 7, 7, 10, 10] * 30
    sums = bed._value_counts_sums(random.Random(3), column, 20_000)
    n = len(column)
    mu = sum(column) / n
    var = sum((x - mu) ** 2 for x in column) / n
    mean = sum(sums) / len(sums)
    spread = sum((s - mean) ** 2 for s in sums) / (len(sums) - 1)
    assert abs(mean - n * mu) < 4 * (n * var / len(sums)) ** 0.5
    assert abs(spread / (n * var) - 1) < 0.04


def test_counts_and_stream_agree_on_real_scores(tmp_path):
    path = os.path.join(EXAMPLES, "judge.csv")
    args = ["compare", path, "--systems", "base,v2", "--id-col", "prompt_id"]
    stream = cli_json(*args, "--engine", "stream", "--resamples", "4000", "--calibration", "0")
    counts = cli_json(*args, "--engine", "counts", "--resamples", "4000", "--calibration", "0")
    stream, counts = stream["comparisons"][0], counts["comparisons"][0]
    for end in (0, 1):
        assert abs(stream["ci"]["paired"][end] - counts["ci"]["paired"][end]) < 0.06


@pytest.mark.simulation
@pytest.mark.slow
def test_two_level_interval_covers_and_the_single_run_one_does_not():
    copula = bed.Copula(bed.CORR, Fraction("0.7"), Fraction("0.75"), runs=3,
                        run_sd=Fraction("0.03"))
    cov = bed.coverage(random.Random(4), copula, 150, replays=400, resamples=300,
                       confidence=C95)
    rate, single = cov.covers_rate, cov.item_level.covers_rate
    assert float(rate) >= 0.95 - 2.5 * cov.standard_error(rate)
    assert float(single) < 0.88


@pytest.mark.simulation
@pytest.mark.slow
def test_with_no_run_noise_both_intervals_agree():
    copula = bed.Copula(bed.CORR, Fraction("0.7"), Fraction("0.75"), runs=3,
                        run_sd=Fraction(0), run_item_noise=Fraction(0))
    cov = bed.coverage(random.Random(5), copula, 150, replays=300, resamples=300,
                       confidence=C95)
    two, one = cov.covers_rate, cov.item_level.covers_rate
    assert abs(float(two) - 0.95) < 3 * cov.standard_error(two) + 0.01
    assert abs(float(one) - 0.95) < 3 * cov.item_level.standard_error(one) + 0.01


@pytest.mark.simulation
@pytest.mark.slow
def test_the_two_level_test_holds_its_type_one_error():
    copula = bed.Copula(bed.CORR, Fraction("0.7"), Fraction("0.7"), runs=3,
                        run_sd=Fraction("0.02"))
    rng = random.Random(6)
    rejections, trials = 0, 400
    for _ in range(trials):
        data = copula.simulate(rng, 120)
        runs = bed.analyze_runs(rng, data.runs_a, data.runs_b, 1, C95, 100)
        rejections += runs.test.p < 0.05
    assert rejections / trials <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / trials)


def test_simulated_runs_report_and_plan():
    status, out, _ = cli("simulate", "--runs", "3", "--run-sd", "0.02", "--n-items", "200",
                         "--replays", "20", "--resamples", "200")
    assert status == 0
    assert "the single-run interval, one run per system, covers" in out
    assert "plan (items x runs" in out and "doubling the runs gives" in out
    body = json.loads(cli("simulate", "--runs", "3", "--run-sd", "0.02", "--n-items", "200",
                          "--replays", "5", "--resamples", "100", "--json")[1])
    assert body["coverage"]["interval"] == "two-level"
    assert body["comparisons"][0]["runs"]["a"]["runs"] == 3


def test_simulated_runs_written_as_a_long_csv(tmp_path):
    path = tmp_path / "runs.csv"
    status, _, _ = cli("simulate", "--runs", "2", "--n-items", "30", "--replays", "0",
                       "--resamples", "50", "--write-csv", str(path))
    lines = path.read_text().splitlines()
    assert status == 0 and lines[0] == "item,run,system_a_correct,system_b_correct"
    assert len(lines) == 61
    status, out, _ = cli("compare", str(path), "--systems", "system_a_correct,system_b_correct",
                         "--run-col", "run", "--resamples", "50")
    assert status == 0 and "runs: A (2)" in out


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_adjusted_p_values_equal_multipletests(pvalues):
    for ours, method in ((bed.holm, "holm"), (bed.benjamini_hochberg, "fdr_bh"),
                         (bed.bonferroni, "bonferroni")):
        assert ours(pvalues) == pytest.approx(list(multipletests(pvalues, method)), abs=1e-12)


def test_adjusted_p_values_equal_statsmodels_itself():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = random.Random(2)
    pvalues = [rng.random() ** 3 for _ in range(45)]
    for ours, method in ((bed.holm, "holm"), (bed.benjamini_hochberg, "fdr_bh"),
                         (bed.bonferroni, "bonferroni")):
        assert ours(pvalues) == pytest.approx(list(multitest.multipletests(pvalues,
                                                                          method=method)[1]))


@pytest.mark.simulation
@pytest.mark.slow
def test_holm_holds_the_familywise_error_and_bh_the_false_discovery_rate():
    rng = random.Random(7)
    accuracies = [0.7] * 4 + [0.8] * 2                      # 7 true nulls of 15 pairs
    replays, any_false, fdp = 600, 0, 0.0
    for replay in range(replays):
        columns = correlated(rng, accuracies, 300)
        holm_board = board_of(columns, seed=replay, draws=200)
        bh = bed.benjamini_hochberg([p.test.p for p in holm_board.pairs])
        null = [accuracies[int(p.first[1:])] == accuracies[int(p.second[1:])]
                for p in holm_board.pairs]
        any_false += any(p.p_adjusted < 0.05 and is_null
                         for p, is_null in zip(holm_board.pairs, null))
        found = [q < 0.05 for q in bh]
        if any(found):
            fdp += sum(f and is_null for f, is_null in zip(found, null)) / sum(found)
    se = math.sqrt(0.05 * 0.95 / replays)
    print(f"Holm's familywise error {any_false / replays:.3f}, BH's false discovery rate "
          f"{fdp / replays:.3f}, of {replays}")
    assert any_false / replays <= 0.05 + 3 * se
    assert fdp / replays <= 0.05 + 3 * se


@given(st.lists(st.sampled_from([0.0125, 0.025, 0.0375, 0.05, 0.01, 0.3, 1 / 3, 0.04]),
                min_size=1, max_size=12))
@settings(max_examples=100, deadline=None)
def test_adjusted_p_values_are_the_exact_values_of_the_floats_given(pvalues):
    """Near the boundary a float product can land on either side of alpha; the adjustments
    are exact rationals of the p-values given, rounded once at the end."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    exact_bh = {}
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        exact_bh[index] = min([m * Fraction(pvalues[index]) / rank] +
                              [exact_bh[order[r - 1]] for r in range(rank + 1, m + 1)][:1])
    assert bed.benjamini_hochberg(pvalues) == [float(min(1, exact_bh[i])) for i in range(m)]
    running, exact_holm = Fraction(0), {}
    for rank, index in enumerate(order):
        running = max(running, min(1, (m - rank) * Fraction(pvalues[index])))
        exact_holm[index] = running
    assert bed.holm(pvalues) == [float(exact_holm[i]) for i in range(m)]


def oracle_coverage(n, corr, acc_a, acc_b, seed, resamples, replays, confidence):
    """The listing's replays (simulate, then the paired percentile ends), and the same ends
    turned into basic intervals by hand, (2*gap - hi, 2*gap - lo): how many of each cover
    the true gap, as ``(basic, percentile)``."""
    rng = random.Random(seed)
    true_gap = Fraction(str(acc_b)) - Fraction(str(acc_a))
    basic = percentile = 0
    for _ in range(replays):
        scores = oracle.simulate(rng, n, corr, acc_a, acc_b)
        gap = Fraction(sum(b - a for a, b in scores), n)
        lo, hi = oracle.paired_bootstrap(scores, rng, resamples, confidence)
        basic += 2 * gap - hi <= true_gap <= 2 * gap - lo
        percentile += lo <= true_gap <= hi
    return basic, percentile


@pytest.mark.parametrize("acc_a,acc_b", [("0.72", "0.76"), ("0.8", "0.7"), ("0.6", "0.6")])
def test_basic_coverage_on_the_default_engine_equals_the_listing_replays(acc_a, acc_b):
    cov = bed.coverage(random.Random(31), bed.Copula(Fraction("0.6"), Fraction(acc_a),
                                                     Fraction(acc_b)),
                       40, replays=25, resamples=60, confidence=C95, interval="basic")
    assert cov.rule == "basic" and cov.replays == 25
    basic, percentile = oracle_coverage(40, 0.6, float(acc_a), float(acc_b), 31, 60, 25, C95)
    assert cov.covers == basic
    assert dict(cov.others)["percentile"].covers == percentile     # the same replays


def test_percentile_coverage_among_the_others_equals_the_listing():
    """Asked for BCa, the loop still measures percentile on the same replays: the listing's
    own count (its replays start right after the simulation and the four intervals)."""
    rng = random.Random(77)
    scores = bed.simulate_scores(rng, 40, Fraction("0.6"), Fraction("0.72"), Fraction("0.76"))
    bed.analyze(scores, rng, resamples=60, confidence=C95)
    cov = bed.coverage(rng, bed.Copula(Fraction("0.6"), Fraction("0.72"), Fraction("0.76")),
                       40, replays=20, resamples=60, confidence=C95, interval="bca")
    want = oracle.run(40, 0.6, 0.72, 0.76, 77, 60, 20, C95)
    assert dict(cov.others)["percentile"].covers == want["covers"]
    assert cov.rule == "bca" and 0 <= cov.undefined <= cov.replays
    assert cov.covers <= cov.replays


def test_bca_coverage_text_names_the_undefined_replays():
    status, out, _ = cli("simulate", "--n-items", "30", "--acc-a", "0.95", "--acc-b", "0.95",
                         "--replays", "40", "--resamples", "200", "--interval", "bca")
    data = json.loads(cli("simulate", "--n-items", "30", "--acc-a", "0.95", "--acc-b", "0.95",
                          "--replays", "40", "--resamples", "200", "--interval", "bca",
                          "--output", "json")[1])
    assert status == 0 and data["coverage"]["undefined"] > 0
    percentile = data["coverage"]["others"]["percentile"]["covers"]
    assert data["coverage"]["covers"] >= percentile - data["coverage"]["undefined"] / 40
    assert "the percentile interval stood in" in out


def test_strata_without_clusters_keep_each_stratum_size(tmp_path):
    """A is wrong on every 'code' item and right on every 'news' item: resampled within
    strata, every resample holds 20 code and 40 news items, so A's mean is exactly 2/3 in
    each one and its interval has no width -- a plain bootstrap would spread it."""
    a = tuple([0] * 20 + [1] * 40)
    b = tuple(int(i % 2 == 0) for i in range(60))
    strata = tuple(["code"] * 20 + ["news"] * 40)
    path = tmp_path / "s.csv"
    path.write_text("item,domain,a,b\n" + "".join(
        f"{i},{s},{x},{y}\n" for i, (s, x, y) in enumerate(zip(strata, a, b))))
    status, out, err = cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--strata-col",
                           "domain", "--resamples", "200", "--output", "json")
    assert status == 0, err
    data = json.loads(out)
    assert data["comparisons"][0]["design"]["strata"] == [20, 40]
    dists = bed.bootstrap(random.Random(2), bed.Scores(a, b, strata=strata), 200)
    assert set(dists["a"].sums) == {40}
    plain = bed.bootstrap(random.Random(2), bed.Scores(a, b), 200)
    assert len(set(plain["a"].sums)) > 5


@pytest.mark.once
def test_score_intervals_on_the_shipped_csv_are_wilson_and_clopper_pearson():
    data = json.loads(cli("compare", SHIPPED_CSV, "--interval", "score", "--output", "json")[1])
    data = data["comparisons"][0]
    n, hits_a, hits_b = 500, 356, 374                          # 71.2% and 74.8%
    for name, hits in (("a", hits_a), ("b", hits_b)):
        lo, hi = wilson(hits, n)
        assert data["ci"][name] == [pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12)]
    exact = json.loads(cli("compare", SHIPPED_CSV, "--interval", "score", "--accuracy-interval",
                           "clopper-pearson", "--output", "json")[1])["comparisons"][0]
    lo, hi = bed.clopper_pearson(hits_a, n, C95)
    # Clopper-Pearson's ends: P(X >= hits | lo) = 2.5% and P(X <= hits | hi) = 2.5%
    assert sum(bed.binom_pmf(k, n, lo) for k in range(hits_a, n + 1)) == pytest.approx(0.025)
    assert sum(bed.binom_pmf(k, n, hi) for k in range(0, hits_a + 1)) == pytest.approx(0.025)
    assert exact["ci"]["a"] == [pytest.approx(lo), pytest.approx(hi)]
    assert exact["ci"]["paired"] == data["ci"]["paired"]          # the gap's stays Newcombe's


@pytest.mark.once
def test_a_simulated_gate_reports_its_false_pass_rate_at_the_margin():
    status, out, _ = cli("simulate", "--acc-b", "0.73", "--gate", "--min-delta", "1",
                         "--replays", "60", "--resamples", "200")
    assert status in (0, 1)
    line = next(line for line in out.splitlines() if line.startswith("gate at +1.0 pts: passes"))
    assert "the true gap equals the margin, so this is the gate's false-pass rate" in line
    data = json.loads(cli("simulate", "--acc-b", "0.73", "--gate", "--min-delta", "1",
                          "--replays", "60", "--resamples", "200", "--output", "json")[1])
    passes = data["coverage"]["gate"]["passes"]
    assert f"{100 * passes:.1f}%" in line


def test_power_past_the_exact_limit_is_the_normal_approximation():
    status, out, err = cli("plan", "--n-items", "30000")
    assert status == 0, err
    line = out.splitlines()[1]
    plan = bed.PowerPlan(bed.Copula(Fraction(3, 5), Fraction("0.72"), Fraction("0.76"), 1,
                                    Fraction(0), 1, Fraction(1, 100), Fraction(3, 10)).cells,
                         Fraction("0.95"))
    assert plan.exact_power(30000) is None
    assert line.startswith(f"  power at n=30,000: {100 * plan.power(30000):.1f}% that the "
                           "paired interval excludes 0 (normal approximation), ")


def test_runs_with_no_true_gap_have_the_false_positive_rate_as_power():
    status, out, err = cli("plan", "--runs", "3", "--acc-a", "0.7", "--acc-b", "0.7")
    assert status == 0, err
    rows = [line for line in out.splitlines() if "run(s) per system:" in line]
    assert len(rows) == 5 and all(row.endswith("power at n=500: 5.0%") for row in rows)
    # the reason is the gap, not the runs' spread; and a tie is called a tie
    assert all("no number of items (the true gap is 0)" in row for row in rows)
    assert out.rstrip().endswith("doubling the items 5.0%: neither helps more here")


def test_runs_with_no_run_spread_need_the_items_of_one_run():
    """--run-sd 0: the runs differ only by their fresh item noise, no run part at all."""
    assert bed._accuracy_variance(0.0, 0.72) == 0.0
    body = bed.plan(runs=3, run_sd=0).to_dict()["runs_plan"]
    parts = body["variance_parts"]
    assert parts["runs_a"] == parts["runs_b"] == 0.0
    k = bed.NormalDist().inv_cdf(0.975) + bed.NormalDist().inv_cdf(0.8)
    room = 0.04 ** 2 / k ** 2                     # no run part: all of it for the items
    assert [row["runs"] for row in body["rows"]] == [1, 2, 3, 5, 10]
    for row in body["rows"]:
        assert row["items_needed"] == math.ceil((parts["fixed"] + parts["fresh"] / row["runs"])
                                                / room)


def test_a_half_width_wide_enough_for_two_items():
    status, out, err = cli("plan", "--half-width", "0.45", "--accuracy", "0.5")
    assert status == 0, err
    assert "  Wilson score interval:        n=2" in out.splitlines()
    width = lambda n: bed.wilson_interval(round(n / 2), n, Fraction("0.95"))
    lo, hi = width(2)
    assert (hi - lo) / 2 <= 0.45


def test_a_sweep_with_no_true_gap_never_reaches_the_target(tmp_path):
    argv = ("plan", "--n-grid", "50,100", "--acc-a", "0.7", "--acc-b", "0.7", "--replays",
            "20", "--resamples", "200")
    status, out, err = cli(*argv)
    assert status == 0, err
    assert "80% power: never reached, the true gap is 0" in out.splitlines()
    status, markdown, err = cli(*argv, "--output", "markdown")
    assert status == 0, err
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows] == ["| n", "| 50", "| 100"]
    assert "power needs" not in markdown and "never reached, the true gap is 0" in markdown
    plot = tmp_path / "power.svg"
    status, _, err = cli(*argv, "--plot", str(plot))
    assert status == 0, err
    svg = plot.read_text()
    assert svg.startswith("<?xml") and "target 80%" in svg
    # a marker per grid size and the legend's: no confirmation run, no n to mark
    assert svg.count("<circle ") == 2 + 1 and '"#c0392b">n=' not in svg
    body = json.loads(cli(*argv, "--json")[1])
    assert body["n_needed"] is None and body["confirmation"] is None


@pytest.mark.once
def test_the_coverage_loop_of_a_large_simulation_uses_the_counts_engine():
    """501 items x 200 replays x 2,000 resamples is past the stream budget: the loop draws
    cell counts while the one comparison still resamples items."""
    status, out, err = cli("simulate", "--n-items", "501", "--replays", "200")
    assert status == 0, err
    assert "note: the coverage loop used the counts engine (replays drawn as multinomial cell " \
        "counts) (chosen by --engine auto" in out
    assert "note: counts engine:" not in out


@pytest.mark.parametrize("margin,rate", [(0, 1.0), (50, 0.0)])
def test_a_gated_simulation_of_runs_counts_its_passes(margin, rate):
    """A 40-point true gap over runs 1 point apart: every replay's two-level interval is
    above 0 (the gate at 0 passes each time), none is above 50 points."""
    body = bed.simulate(runs=2, n_items=200, acc_a=0.5, acc_b=0.9, replays=6, resamples=200,
                        gate=True, min_delta=margin).to_dict()
    gate = body["coverage"]["gate"]
    assert body["coverage"]["replays"] == 6 and body["coverage"]["excludes_zero"] == 1.0
    assert (gate["margin"], gate["passes"]) == (margin / 100, rate)


def test_the_score_rule_on_clustered_replays_is_undefined_not_a_crash():
    copula = bed.Copula(Fraction(3, 5), Fraction("0.72"), Fraction("0.76"), 5, Fraction(3, 10),
                        1, Fraction(0), Fraction(0))
    result = bed.coverage(random.Random(1), copula, 60, replays=3, resamples=100,
                          interval="score")
    assert (result.replays, result.undefined, result.covers) == (3, 3, 0)


def test_auto_picks_the_stream_engine_for_too_many_distinct_values():
    many = bed.Scores(tuple(Fraction(i, 2003) for i in range(2002)),
                      tuple(Fraction(i + 1, 2003) for i in range(2002)))
    few = bed.Scores(tuple(Fraction(i % 100, 200) for i in range(2002)),
                     tuple(Fraction(i % 100 + 1, 200) for i in range(2002)))
    assert bed._distinct_values(many) > bed._MAX_COUNTS_VALUES
    assert 5 * 1_000_000 * 2002 > bed._STREAM_BUDGET
    assert bed._comparison_engine("auto", many, 1_000_000) == "stream"
    assert bed._comparison_engine("auto", few, 1_000_000) == "counts"
    assert bed._comparison_engine("stream", few, 1_000_000) == "stream"


def exact_cdf(n, x, y, t):
    """P(D <= t), D the sum of n draws of -1 (share x/n), +1 (y/n) or 0, by convolution."""
    a, c = x / n, y / n
    dist = {0: 1.0}
    for _ in range(n):
        new = {}
        for d, p in dist.items():
            for step, q in ((-1, a), (0, 1 - a - c), (1, c)):
                new[d + step] = new.get(d + step, 0.0) + p * q
        dist = new
    return sum(p for d, p in dist.items() if d <= t)


@pytest.mark.parametrize("t,want", [(-41, 0.0), (-60, 0.0), (40, 1.0), (55, 1.0)])
def test_the_saddlepoint_cdf_is_0_or_1_beyond_the_support(t, want):
    assert exact_cdf(40, 10, 12, t) == pytest.approx(want)
    assert bed._table_saddlepoint_cdf(40, 10, 12, t) == want


def test_the_saddlepoint_cdf_at_the_centre_of_a_huge_symmetric_table():
    """x = y: D is symmetric, P(D <= -1) = (1 - P(D = 0)) / 2, which is 1/2 to within
    1e-4 at this size; the saddle point is then within 1e-7 of 0."""
    n = 10 ** 9
    assert bed._table_saddlepoint_cdf(n, n // 4, n // 4, -1) == pytest.approx(0.5, abs=1e-4)


@pytest.mark.parametrize("guess", [5, 6, 20, 100])
def test_the_threshold_search_gallops_down_from_a_guess_above(guess):
    calls = []

    def fits(y):
        calls.append(y)
        return y >= 5

    assert bed._first_true(fits, guess, 0, 100) == 5
    assert calls[0] == guess


@pytest.mark.parametrize("steps", [[(30, 10), (30, 8), (29, 7), (29, 6), (28, 30), (28, 29)]])
def test_the_binomial_tail_follows_k_down_and_past_m(steps):
    tail = bed._BinomialTail(0.3)
    for m, k in steps:
        want = sum(math.comb(m, j) * 0.3 ** j * 0.7 ** (m - j) for j in range(k, m + 1))
        assert tail(m, k) == pytest.approx(want, abs=1e-12)


def test_the_power_plan_finds_the_smallest_n_at_an_exact_boundary():
    """A target equal to the analytic power at some n (or a float step either side): the
    closed form's rounding can land one n off either way; items_needed is still the
    smallest n that reaches the target."""
    rng = random.Random(1)
    for _ in range(300):                   # seed 1: both roundings occur
        a_only, b_only = rng.uniform(0.01, 0.24), rng.uniform(0.01, 0.24)
        plan = bed.PowerPlan(bed.Cells(Fraction(1, 2), Fraction(a_only), Fraction(b_only),
                                       Fraction(1, 2) - Fraction(a_only) - Fraction(b_only)),
                             Fraction("0.95"))
        power = plan.power(rng.randint(3, 3000))
        for target in (power, math.nextafter(power, 0), math.nextafter(power, 1)):
            if 0.5 < target < 1:
                got = plan.items_needed(target)
                assert plan.power(got) >= target
                assert got == 2 or plan.power(got - 1) < target


@pytest.mark.once
def test_the_calibrations_blocks_of_rows_agree_with_every_row(monkeypatch):
    """40,000 items with 4,000 A-only: the calibration sums the A-only counts in blocks of
    two (the midpoint rule); row by row it agrees to 1e-3, and both are near 95%."""
    a = [1] * 24000 + [1] * 4000 + [0] * 4800 + [0] * 7200
    b = [1] * 24000 + [0] * 4000 + [1] * 4800 + [0] * 7200
    assert bed._share_rows(40000, 0.1)[2] == 2
    blocks = bed.compare(a, b).to_dict()["comparisons"][0]["calibration"]
    monkeypatch.setattr(bed, "_SHARE_ROWS", 10 ** 6)
    assert bed._share_rows(40000, 0.1)[2] == 1
    rows = bed.compare(a, b).to_dict()["comparisons"][0]["calibration"]
    for study in ("coverage", "null"):
        assert blocks[study]["covers"] == pytest.approx(rows[study]["covers"], abs=1e-3)
        assert blocks[study]["covers"] == pytest.approx(0.95, abs=2e-3)
    assert blocks["null"]["excludes_zero"] == pytest.approx(rows["null"]["excludes_zero"],
                                                            abs=1e-3)


@pytest.mark.parametrize("n, a_only, b_only", [(900, 404, 480), (900, 404, 486),
                                               (400, 190, 205), (200, 7, 180), (200, 180, 7),
                                               (2000, 1000, 999), (400, 100, 120)])
def test_the_paired_gap_table_is_exact_where_the_systems_rarely_agree(n, a_only, b_only):
    """D = B-only minus A-only draws among n from the cells, against NumPy's convolution of
    n three-point draws: Miller's guessed start was 58% off at 16 agreeing items of 900
    (P(D <= 0) 0.00464 against 0.00309)."""
    a, c = a_only / n, b_only / n
    dist = np.zeros(2 * n + 1)
    dist[n] = 1.0
    for _ in range(n):
        step = (1 - a - c) * dist
        step[1:] += c * dist[:-1]
        step[:-1] += a * dist[1:]
        dist = step
    truth = np.cumsum(dist)
    lo, cdf = bed._paired_gap_cdf(bed.Cells(n - a_only - b_only, a_only, b_only, 0))
    got = np.array(cdf)
    assert np.max(np.abs(got - truth[lo + n:lo + n + len(cdf)])) < 1e-12


# --- Metrics of a confusion matrix (issue 30): scikit-learn and NumPy as oracles ---

def _sklearn_metric(metric, labels, preds, classes, positive):
    """scikit-learn's value of *metric* on one system's predictions (its default classes:
    the labels' and this system's predictions')."""
    sk = pytest.importorskip("sklearn.metrics")
    if metric in ("accuracy", "micro-f1"):
        return sk.accuracy_score(labels, preds)
    if metric in ("macro-f1", "f1", "precision", "recall"):
        scorer = {"precision": sk.precision_score, "recall": sk.recall_score}.get(
            metric, sk.f1_score)
        return scorer(labels, preds, labels=[positive] if metric != "macro-f1" else None,
                      average="macro", zero_division=0)
    if metric == "balanced-accuracy":
        return sk.balanced_accuracy_score(labels, preds)
    if metric == "mcc":
        return sk.matthews_corrcoef(labels, preds)
    return sk.cohen_kappa_score(labels, preds)


def _metric_pair(confusions, metric, positive=None):
    ((a,), (b,)), = bed._metric_columns([(key, [count]) for key, count in confusions.cells],
                                        len(confusions.classes), [(metric, positive)])
    return a, b


@pytest.mark.once
@pytest.mark.filterwarnings("ignore")
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_metric_equals_scikit_learn_on_random_and_degenerate_tables(data):
    k = data.draw(st.integers(1, 5))
    n = data.draw(st.integers(1, 30))
    item = st.integers(0, k - 1)
    labels = data.draw(st.lists(item, min_size=n, max_size=n))
    a = data.draw(st.lists(st.integers(0, data.draw(st.integers(0, k - 1))), min_size=n,
                           max_size=n))                  # often a class never predicted
    b = data.draw(st.lists(item, min_size=n, max_size=n))
    confusions = bed.Confusions.of(labels, a, b)
    positive = data.draw(st.sampled_from(confusions.classes))
    for metric in bed.METRICS:
        index = confusions.classes.index(positive)
        got = _metric_pair(confusions, metric, index)
        for value, preds in zip(got, (a, b)):
            if metric == "kappa" and len(set(labels) | set(preds)) == 1:
                assert value == 0                       # undefined; scikit-learn: NaN
                continue
            truth = _sklearn_metric(metric, labels, preds, list(confusions.classes), positive)
            assert float(value) == pytest.approx(truth, abs=1e-12), metric
        floats, = bed._metric_columns([(key, [count]) for key, count in confusions.cells],
                                      len(confusions.classes), [(metric, index)], exact=False)
        assert [column[0] for column in floats] == pytest.approx(list(map(float, got)),
                                                                 abs=1e-12)


def test_rational_metrics_are_exact_fractions_and_mcc_a_rounded_one():
    confusions = bed.Confusions.of([0, 0, 1, 2], [0, 1, 1, 2], [0, 0, 2, 2])
    a, b = _metric_pair(confusions, "macro-f1")
    assert (a, b) == (Fraction(7, 9), Fraction(5, 9))   # (2/3 + 2/3 + 1)/3, (1 + 0 + 2/3)/3
    assert isinstance(_metric_pair(confusions, "mcc")[0], Fraction)


def test_metric_permutation_test_equals_a_brute_force_item_swap_within_monte_carlo_error():
    np = pytest.importorskip("numpy")
    rng = random.Random(3)
    labels = [rng.randrange(3) for _ in range(120)]
    a = [y if rng.random() < 0.6 else rng.randrange(3) for y in labels]
    b = [y if rng.random() < 0.75 else rng.randrange(3) for y in labels]
    confusions = bed.Confusions.of(labels, a, b)
    test = bed.metric_permutation_test(random.Random(1), confusions, "macro-f1", None, 20000)
    y, pa, pb = map(np.array, (labels, a, b))

    def macro_f1(pred):
        scores = []
        for k in range(3):
            tp = np.sum((pred == k) & (y == k), axis=-1)
            total = np.sum(pred == k, axis=-1) + np.sum(y == k)
            scores.append(np.where(total > 0, 2 * tp / np.maximum(total, 1), 0.0))
        return np.mean(scores, axis=0)

    observed = abs(macro_f1(pb) - macro_f1(pa))
    swap = np.random.default_rng(7).random((20000, len(labels))) < 0.5
    gaps = np.abs(macro_f1(np.where(swap, pa, pb)) - macro_f1(np.where(swap, pb, pa)))
    truth = (np.sum(gaps >= observed - 1e-12) + 1) / 20001
    assert 0.01 < truth < 0.5                       # a p with room on both sides
    assert test.p == pytest.approx(truth, abs=4 * math.sqrt(truth * (1 - truth) / 10000))
    assert not test.exact and test.permutations == 20000


def test_metric_permutation_test_is_one_when_the_metrics_are_equal():
    confusions = bed.Confusions.of([0, 1, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0])
    assert bed.metric_permutation_test(random.Random(1), confusions, "accuracy").p == 1.0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3),
                                             st.integers(0, 3)), min_size=2, max_size=40))
def test_leave_one_out_equals_each_cells_table_less_one_item(k, items):
    """BCa's jackknife for a metric, from per-class totals: the same values as the metric
    of each cell's table with one of its items taken out."""
    items = [(y % k, a % k, b % k) for y, a, b in items]
    confusions = bed.Confusions.of(*zip(*items))
    specs = [(metric, 0 if metric in ("f1", "precision", "recall") else None)
             for metric in bed.METRICS]
    got = bed._leave_one_out(confusions, specs)
    for index, (key, _) in enumerate(confusions.cells):
        less = [(cell, count - (cell == key)) for cell, count in confusions.cells]
        truth = bed._metric_columns([(cell, [count]) for cell, count in less],
                                    len(confusions.classes), specs)
        for (a, b), ((ta,), (tb,)) in zip(got, truth):
            assert (a[index], b[index]) == (ta, tb)
