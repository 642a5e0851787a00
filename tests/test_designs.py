"""Designs: clusters, strata, BCa and basic intervals, the exact bootstrap, Monte Carlo error."""

import math
import random
from fractions import Fraction
from statistics import NormalDist

import pytest

import bootstrap_eval_deltas as bed
import oracle
from helpers import SHIPPED_CSV, assert_one_line_error, cli

ARTICLE = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B)


# --- the stratified and cluster engines against naive loops --------------------------------

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


# --- BCa and basic -------------------------------------------------------------------------

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


def test_acceleration_of_a_symmetric_jackknife_is_zero():
    assert bed._acceleration({Fraction(1): 4, Fraction(3): 4}) == 0.0


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_interval_coverage_on_the_article_setting_is_nominal(method):
    """1,500 replays (counts engine, 1,000 resamples): 95% within 3.5 Monte Carlo s.e."""
    cov = bed.coverage(random.Random(21), ARTICLE, 500, replays=1500, resamples=1000,
                       confidence=bed.CONFIDENCE, engine="counts", interval=method)
    se = math.sqrt(0.95 * 0.05 / 1500)
    assert cov.undefined == 0
    assert abs(float(cov.covers_rate) - 0.95) < 3.5 * se, float(cov.covers_rate)


# --- clusters --------------------------------------------------------------------------------

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
    assert bed._design_of(scores).icc > 0.1
    assert bed.simulate_clustered(random.Random(1), 7, 0.6, 0.7, 0.7, 3, 0).clusters == \
        (0, 0, 0, 1, 1, 1, 2)


def test_icc_and_design_effect():
    clusters = tuple(i // 4 for i in range(40))
    a = (0,) * 40
    b = tuple(1 if (i // 4) % 2 else 0 for i in range(40))     # B - A constant within clusters
    design = bed._design_of(bed.Scores(a, b, clusters))
    assert design.clusters == 10 and design.mean_size == 4.0
    assert design.icc == pytest.approx(1.0) and design.design_effect == pytest.approx(4.0)


def test_cluster_test_flips_signs_by_cluster():
    clusters = tuple(i // 5 for i in range(30))
    a = (0,) * 30
    b = tuple(int(i % 5 == 0) for i in range(30))               # one +1 in each of 6 clusters
    result = bed.analyze(bed.Scores(a, b, clusters), random.Random(1), resamples=50,
                         confidence=bed.CONFIDENCE)
    assert result.mcnemar is None and result.test.exact
    assert result.p == 2 / 64                                      # 6 clusters: ++++++ and ------


# --- the exact bootstrap ----------------------------------------------------------------------

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
    dists = bed.bootstrap(random.Random(9), bed._cells_as_scores(cells), 20_000, engine="counts")
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
    scores = bed._cells_as_scores(bed.Cells(290, 67, 85, 58))
    small = bed.paired_distribution(random.Random(1), scores, 1000).end_errors(bed.CONFIDENCE)
    large = bed.paired_distribution(random.Random(1), scores, 16000).end_errors(bed.CONFIDENCE)
    assert max(large) < max(small) / 2


# --- command line -----------------------------------------------------------------------------

def test_exact_and_bca_on_the_shipped_csv():
    status, out, _ = cli("--csv", SHIPPED_CSV, "--exact", "--resamples", "2000", "--details")
    assert status == 0
    assert "exact bootstrap (B=infinity, percentile): A [0.672, 0.752]" in out
    assert "paired [-1.2, +8.4] pts" in out
    assert "Monte Carlo error of the interval ends (B=2,000):" in out
    status, out, _ = cli("--csv", SHIPPED_CSV, "--interval", "bca")
    assert status == 0 and "paired bootstrap 95% CI (BCa) [" in out


def test_cluster_and_strata_columns(tmp_path):
    rng = random.Random(3)
    lines = ["item,passage,domain,base,new"]
    item = 0
    for passage in range(45):
        for _ in range(rng.randrange(1, 6)):
            item += 1
            lines.append(f"{item},p{passage},{'abc'[passage % 3]},{int(rng.random() < 0.6)},"
                         f"{int(rng.random() < 0.7)}")
    path = tmp_path / "c.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, err = cli("--csv", str(path), "--a-col", "base", "--b-col", "new",
                           "--cluster-col", "passage", "--strata-col", "domain")
    assert status == 0, err
    assert "clusters: 45 resampled whole" in out and "strata: 3 (15, 15, 15 clusters)" in out
    assert "paired sign-flip permutation test" in out


def test_clustered_simulation_report_shows_both_coverages():
    status, out, _ = cli("--cluster-size", "5", "--icc", "0.5", "--n-items", "100",
                         "--replays", "20", "--resamples", "200")
    assert status == 0
    assert "the item-level bootstrap, ignoring the clusters, covers" in out
    assert "clusters: 20 resampled whole" in out


def test_simulated_clustered_run_writes_its_clusters(tmp_path):
    path = tmp_path / "c.csv"
    status, _, _ = cli("--cluster-size", "4", "--n-items", "20", "--replays", "0",
                       "--resamples", "50", "--write-csv", str(path))
    text = path.read_text().splitlines()
    assert status == 0 and text[0] == "item,system_a_correct,system_b_correct,cluster"
    assert text[5].endswith(",2")


BAD_DESIGNS = [
    (["--csv", SHIPPED_CSV, "--cluster-col", "passage"], "no column 'passage'"),
    (["--csv", "-", "--a-col", "a", "--b-col", "b", "--strata-col", "domain"],
     "stratum 'code' has one item"),
    (["--csv", "-", "--a-col", "a", "--b-col", "b", "--cluster-col", "passage",
      "--strata-col", "domain"], "spans strata"),
    (["--csv", "-", "--a-col", "a", "--b-col", "b", "--cluster-col", "passage"],
     "need at least 2 clusters"),
    (["--csv", SHIPPED_CSV, "--cluster-col", "item", "--exact"], "--exact covers plain 0/1 items"),
    (["--csv", SHIPPED_CSV, "--cluster-col", "item", "--engine", "counts"],
     "--cluster-col needs the per-item engine"),
    (["--icc", "0.3"], "--icc goes with --cluster-size"),
    (["--cluster-size", "0"], "--cluster-size must be at least 1"),
    (["--cluster-size", "4", "--icc", "1.5"], "--icc must be between 0 and 1"),
    (["--cluster-size", "4", "--engine", "counts"], "--cluster-size simulates per item"),
    (["--cluster-size", "4", "--exact"], "--exact covers plain 0/1 items"),
    (["--cluster-col", "x"], "--cluster-col does not apply to simulate"),
    (["--interval", "studentized"], "invalid choice"),
]
STDIN = {
    "stratum 'code' has one item":
        "item,domain,a,b\n1,news,1,0\n2,news,0,1\n3,code,1,1\n4,math,1,0\n5,math,0,0\n",
    "spans strata": "item,passage,domain,a,b\n1,p1,x,1,0\n2,p1,y,0,1\n3,p2,x,1,1\n4,p2,y,0,0\n",
    "need at least 2 clusters": "item,passage,a,b\n1,p1,1,0\n2,p1,0,1\n",
}


@pytest.mark.parametrize("argv,message", BAD_DESIGNS, ids=[m for _, m in BAD_DESIGNS])
def test_malformed_design_uses(monkeypatch, argv, message):
    import io
    import sys
    if message in STDIN:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(STDIN[message].encode())))
    assert_one_line_error(*cli(*argv), message)
