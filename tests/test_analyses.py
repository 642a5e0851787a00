"""Analyses: two systems, tasks, runs, designs with clusters and strata, leaderboards, verdicts, the gate and the ledger."""

import csv
import errno
import fcntl
import glob
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from statistics import NormalDist

import pytest
from hypothesis import assume, given, settings, strategies as st

import bootstrap_eval_deltas as bed

from helpers import (
    C95,
    EXAMPLES,
    FAST,
    PROMPTS,
    ROOT,
    SHIPPED_CSV,
    assert_one_line_error,
    board_of,
    clear_gap_csv,
    cli,
    cli_json,
    correlated,
    inspect_folder,
    multipletests,
    shipped_records,
    table_file,
    wilson,
    write,
)


def test_clusters_of_one_item_have_no_intra_cluster_correlation():
    rng = random.Random(5)
    a, b = [rng.randint(0, 1) for _ in range(60)], [rng.randint(0, 1) for _ in range(60)]
    design = bed.compare(a, b, clusters=list(range(60))).to_dict()["comparisons"][0]["design"]
    assert design["clusters"] == 60 and design["icc"] is None and design["design_effect"] is None


def test_a_ledger_entry_with_a_p_outside_0_1_is_refused(tmp_path):
    import json
    import helpers
    ledger = tmp_path / "evals.jsonl"
    status, _, err = helpers.cli("compare", helpers.SHIPPED_CSV, "--resamples", "50",
                                 "--calibration", "0", "--ledger", str(ledger))
    assert status == 0, err
    record = json.loads(ledger.read_text())
    record["p"] = 1.5
    ledger.write_text(json.dumps(record) + "\n")
    with pytest.raises(bed.ToolError, match="line 1: field p is not a valid number"):
        bed.read_ledger(str(ledger))


def test_a_ledger_that_cannot_be_opened_is_one_error(tmp_path):
    import helpers
    status, out, err = helpers.cli("compare", helpers.SHIPPED_CSV, "--resamples", "50",
                                   "--calibration", "0", "--ledger", str(tmp_path))
    helpers.assert_one_line_error(status, out, err,
                                  f"cannot write {tmp_path}: it is a folder (--ledger)")


np = pytest.importorskip("numpy")


def test_icc_and_design_effect():
    clusters = tuple(i // 4 for i in range(40))
    a = (0,) * 40
    b = tuple(1 if (i // 4) % 2 else 0 for i in range(40))     # B - A constant within clusters
    design = bed.analyze(bed.Scores(a, b, clusters), random.Random(1), calibration=0).design
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


def test_exact_and_bca_on_the_shipped_csv():
    """--exact beside resamples: the exact line in the plain report too (--help promises it),
    and the verdict, which reads it, says its interval is the exact one (it printed [-1.2,
    +8.4] beside the resampled line's different ends, unlabelled)."""
    for details in ([], ["--details"]):
        status, out, _ = cli("compare", SHIPPED_CSV, "--exact", "--resamples", "2000", *details)
        assert status == 0
        assert "exact bootstrap (B=infinity, percentile; the verdict reads it): A " \
            "[0.672, 0.752]" in out
        assert "The exact paired 95% CI [-1.2, +8.4] pts" in out.splitlines()[0]
    assert "paired [-1.2, +8.4] pts" in out
    assert "Monte Carlo error of the interval ends (B=2,000):" in out
    status, out, _ = cli("compare", SHIPPED_CSV, "--interval", "bca")
    assert status == 0 and "paired bootstrap 95% CI (BCa) [" in out
    status, out, _ = cli("compare", SHIPPED_CSV, "--exact", "--resamples", "2000",
                         "--cluster-col", "item")    # clusters of one item: the same sums
    assert status == 0 and "The exact paired 95% CI [-1.2, +8.4] pts" in out


def test_exact_beside_resamples_takes_scores_on_a_small_lattice():
    """A 0-3 rubric, plain and in clusters of two: --exact beside resamples gives the small
    lattice's exact bootstrap, as the default report does (it had been refused as needing
    0/1 scores); clusters of different sizes are refused, saying so."""
    rng = random.Random(8)
    a = [rng.randint(0, 3) for _ in range(400)]
    b = [min(3, x + rng.choice([0, 0, 1, -1, 1])) for x in a]
    default = bed.compare(a, b, calibration=0).comparisons[0].analysis
    asked = bed.compare(a, b, exact=True, resamples=2000, calibration=0).comparisons[0]
    assert default.method == "exact" and asked.analysis.method == "bootstrap"
    assert asked.decision.interval == default.paired
    pairs = [i // 2 for i in range(400)]
    clustered = bed.compare(a, b, clusters=pairs, calibration=0).comparisons[0]
    asked = bed.compare(a, b, clusters=pairs, exact=True, resamples=2000,
                        calibration=0).comparisons[0]
    assert asked.decision.interval == clustered.analysis.paired
    with pytest.raises(bed.ToolError, match="in clusters of different sizes"):
        bed.compare(a, b, clusters=[min(i, 200) for i in range(400)], exact=True,
                    resamples=2000)


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
    status, out, err = cli("compare", str(path), "--a-col", "base", "--b-col", "new",
                           "--cluster-col", "passage", "--strata-col", "domain")
    assert status == 0, err
    assert "clusters: 45 resampled whole" in out and "strata: 3 (15, 15, 15 clusters)" in out
    assert "paired sign-flip permutation test" in out


BAD_DESIGNS = [
    (["compare", SHIPPED_CSV, "--cluster-col", "passage"], "no column 'passage'"),
    (["compare", "-", "--a-col", "a", "--b-col", "b", "--strata-col", "domain"],
     "stratum 'code' has one item"),
    (["compare", "-", "--a-col", "a", "--b-col", "b", "--cluster-col", "passage",
      "--strata-col", "domain"], "spans strata"),
    (["compare", "-", "--a-col", "a", "--b-col", "b", "--cluster-col", "passage"],
     "need at least 2 clusters"),
    (["compare", SHIPPED_CSV, "--cluster-col", "item", "--engine", "counts"],
     "--cluster-col needs the per-item engine"),
    (["simulate", "--icc", "0.3"], "--icc goes with --cluster-size"),
    (["simulate", "--cluster-size", "0"], "--cluster-size must be at least 1"),
    (["simulate", "--cluster-size", "4", "--icc", "1.5"], "--icc must be between 0 and 1"),
    (["simulate", "--cluster-size", "4", "--engine", "counts"],
     "--cluster-size simulates per item"),
    (["simulate", "--cluster-size", "4", "--exact"], "--exact covers 0/1 items resampled one by one"),
    (["simulate", "--cluster-col", "x"], "--cluster-col does not apply to simulate"),
    (["simulate", "--interval", "studentized"], "invalid choice"),
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


def test_a_family_reads_simultaneous_intervals_beside_holm_p(tmp_path):
    rng = random.Random(5)
    lines = ["item,base,c1,c2,c3"]
    for i in range(300):
        d = rng.gauss(0, 1)
        lines.append(",".join([str(i)] + [str(int(0.6 * d + 0.8 * rng.gauss(0, 1) < t))
                                          for t in (0.3, 0.62, 0.42, 0.3)]))
    path = tmp_path / "f.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, _ = cli("compare", str(path), "--systems", "base,c1,c2,c3", "--json",
                         "--resamples", "400", "--calibration", "0")
    body = json.loads(out)
    assert len(body["comparisons"]) == 3
    for comparison in body["comparisons"]:
        decision = comparison["decision"]
        assert decision["family"] == 3 and decision["level"] == pytest.approx(1 - 0.05 / 3)
        assert decision["p"] == comparison["p_holm"]
        lo, hi = decision["interval"]
        assert (lo <= comparison["ci"]["paired"][0] and hi >= comparison["ci"]["paired"][1])
        assert comparison["verdict"] in ("better", "worse", "cannot tell", "borderline",
                                         "unreliable")
    status, text, _ = cli("compare", str(path), "--systems", "base,c1,c2,c3", "--resamples", "400",
                          "--calibration", "0")
    assert "simultaneous 98.33% CI" in text and "Holm-adjusted p=" in text


def test_too_few_clusters_never_claim_a_winner(tmp_path):
    lines = ["item,passage,a,b"]
    for i in range(60):
        lines.append(f"{i},{i % 3},{int(i % 5 == 0)},{int(i % 5 != 4)}")
    path = tmp_path / "c.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, _ = cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--cluster-col",
                         "passage", "--resamples", "300")
    verdict = next(l for l in out.splitlines() if l.startswith("verdict:"))
    assert verdict.startswith(("verdict: unreliable", "verdict: cannot tell",
                               "verdict: borderline")), verdict
    assert "warning: only 3 clusters" in out


def test_thirty_of_thirty_gives_a_non_degenerate_interval(tmp_path):
    path = table_file(tmp_path, (30, 0, 0, 0))
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--resamples", "200")
    assert status == 0
    assert "  A = a: 1.000 [0.884, 1.000]\n  B = b: 1.000 [0.884, 1.000]\n" in out
    assert "note: A's interval: the bootstrap cannot vary 30/30 (every item right)" in out


def test_an_undefined_bca_falls_back_and_says_so(tmp_path):
    path = table_file(tmp_path, (20, 0, 0, 20))            # the systems never disagree
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                         "--resamples", "300")
    assert status == 0
    assert ("note: the paired interval: BCa is undefined (every bootstrap resample gives the "
            "same value); the percentile interval is shown") in out
    body = json.loads(cli("compare", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                          "--resamples", "300", "--json")[1])["comparisons"][0]
    assert body["interval_methods"]["paired"] == "percentile" and body["ci"]["paired"] == [0, 0]


def test_basic_per_system_intervals_stay_within_0_and_1(tmp_path):
    path = table_file(tmp_path, (27, 1, 1, 1))
    body = json.loads(cli("compare", path, "--a-col", "a", "--b-col", "b", "--interval", "basic",
                          "--resamples", "500", "--json")[1])["comparisons"][0]
    for name in ("a", "b"):
        lo, hi = body["ci"][name]
        assert 0 <= lo <= hi <= 1


def test_zero_one_data_are_advised_the_exact_bootstrap(tmp_path):
    path = table_file(tmp_path, (15, 5, 7, 3))
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--details",
                         "--resamples", "2000")
    assert "--exact gives the exact ends (B = infinity) at no cost" in out
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--exact", "--details")
    assert "hint:" not in out


def real_table(n=60, seed=4, shift=Fraction(0)):
    rng = random.Random(seed)
    a = [Fraction(rng.randrange(1000), 1000) for _ in range(n)]
    b = [x + Fraction(rng.randrange(-150, 200), 1000) + shift for x in a]
    return a, b


def test_real_valued_scores_use_the_permutation_test(tmp_path):
    a, b = real_table()
    lines = ["item,base,new"] + [f"{i},{float(x)},{float(y)}" for i, (x, y) in enumerate(zip(a, b))]
    path = write(tmp_path / "f1.csv", "\n".join(lines) + "\n")
    got = cli_json("compare", path, "--a-col", "base", "--b-col", "new", "--permutations", "10000")
    got = got["comparisons"][0]
    assert got["mcnemar"] is None
    assert got["test"]["name"] == "sign-flip permutation (Monte Carlo)"
    assert got["test"]["permutations"] == 10_000 and 0 < got["test"]["p"] <= 1
    status, out, _ = cli("compare", path, "--a-col", "base", "--b-col", "new", "--permutations",
                         "10000")
    assert "paired sign-flip permutation test (Monte Carlo, 10,000 random sign patterns)" in out
    auto = cli_json("compare", path, "--a-col", "base", "--b-col", "new")["comparisons"][0]["test"]
    assert auto["name"] == "sign-flip permutation (exact)" and auto["exact"]
    assert abs(auto["p"] - got["test"]["p"]) < 4 * (auto["p"] * (1 - auto["p"]) / 1e4) ** 0.5
    assert "(real-valued scores)" in out.splitlines()[-1]


def test_three_systems_in_input_order_with_adjusted_p(tmp_path):
    rng = random.Random(5)
    lines = ["item,base,c1,c2"]
    for i in range(400):
        d = rng.gauss(0, 1)
        lines.append(",".join([str(i)] + [str(int(0.6 * d + 0.8 * rng.gauss(0, 1) < t))
                                          for t in (0.3, 0.75, 0.35)]))
    path = write(tmp_path / "three.csv", "\n".join(lines) + "\n")
    got = cli_json("compare", path, "--systems", "base,c1,c2")
    comps = got["comparisons"]
    assert [c["candidate"] for c in comps] == ["c1", "c2"] and got["family_size"] == 2
    ps = [c["test"]["p"] for c in comps]
    assert [c["p_holm"] for c in comps] == pytest.approx(bed.holm(ps))
    assert [c["p_bonferroni"] for c in comps] == pytest.approx(bed.bonferroni(ps))
    assert comps[0]["verdict"] == "better"
    status, out, _ = cli("compare", path, "--systems", "base,c1,c2", "--details")
    assert "family: 2 comparisons against base" in out
    assert out.startswith("c1: verdict: better.")
    assert out.index("\n  c1 ") < out.index("\n  c2 ")
    status, md, _ = cli("compare", path, "--systems", "base,c1,c2", "--output", "markdown")
    assert md.startswith("**c1: verdict: better.") and "\n| system | mean | 95% CI |" in md
    assert md.index("\n| c1 | ") < md.index("\n| c2 | ")


def test_first_comparison_of_a_family_equals_the_two_system_run(tmp_path):
    lines = ["item,a,b,c"] + [f"{i},{a},{b},{b}" for i, a, b in shipped_records()]
    path = write(tmp_path / "t.csv", "\n".join(lines) + "\n")
    family = cli_json("compare", path, "--systems", "a,b,c")
    single = cli_json("compare", SHIPPED_CSV)
    assert family["comparisons"][0]["ci"] == single["comparisons"][0]["ci"]


pair_lists = st.integers(2, 30).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 20), min_size=n, max_size=n),
    st.lists(st.integers(0, 20), min_size=n, max_size=n)))


@settings(max_examples=40, deadline=None)
@given(pair_lists, st.integers(0, 2 ** 32), st.sampled_from([1, 7, 40]))
def test_swapping_a_and_b_negates_gap_and_distribution(pair, seed, resamples):
    a, b = (tuple(Fraction(x, 10) for x in column) for column in pair)
    forward = bed.analyze(bed.Scores(a, b), random.Random(seed), resamples=resamples,
                          confidence=Fraction("0.9"), permutations=50)
    swapped = bed.analyze(bed.Scores(b, a), random.Random(seed), resamples=resamples,
                          confidence=Fraction("0.9"), permutations=50)
    assert swapped.gap == -forward.gap
    sums = forward.paired_distribution.sums
    assert swapped.paired_distribution.sums == tuple(sorted(-s for s in sums))
    lo, hi = forward.paired_distribution.end_indices(Fraction("0.9"))
    denominator = forward.paired_distribution.denominator
    assert (swapped.paired.lo, swapped.paired.hi) == (
        Fraction(-sums[resamples - 1 - lo], denominator),
        Fraction(-sums[resamples - 1 - hi], denominator))
    assert 0 <= forward.p <= 1 and 0 <= swapped.p <= 1


@settings(max_examples=40, deadline=None)
@given(pair_lists, st.fractions(-3, 3, max_denominator=1000), st.integers(0, 2 ** 32))
def test_shifting_b_shifts_gap_and_interval_exactly(pair, shift, seed):
    a = tuple(Fraction(x, 7) for x in pair[0])
    b = tuple(Fraction(x, 7) for x in pair[1])
    moved = tuple(x + shift for x in b)
    # 0/1 scores take a proportion's interval (Wilson, Clopper-Pearson at 0 or n), which no
    # shift carries to another column's: equivariance is a property of the bootstrap's
    assume(not set(b) <= {0, 1} and not set(moved) <= {0, 1})
    base = bed.analyze(bed.Scores(a, b), random.Random(seed), resamples=30,
                       confidence=bed.CONFIDENCE, permutations=20)
    after = bed.analyze(bed.Scores(a, moved), random.Random(seed), resamples=30,
                        confidence=bed.CONFIDENCE, permutations=20)
    assert after.gap == base.gap + shift
    assert (after.paired.lo, after.paired.hi) == (base.paired.lo + shift, base.paired.hi + shift)
    assert (after.ci_b.lo, after.ci_b.hi) == (base.ci_b.lo + shift, base.ci_b.hi + shift)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=2, max_size=40), st.integers(0, 2 ** 32))
def test_identical_systems_give_a_zero_interval(column, seed):
    result = bed.analyze(bed.Scores(tuple(column), tuple(column)), random.Random(seed),
                         resamples=25, confidence=bed.CONFIDENCE)
    assert (result.paired.lo, result.paired.hi) == (0, 0) and result.p == 1.0


def long_csv(tmp_path, runs_a, runs_b, name="runs.csv"):
    """A long file: a row per item and run, a column per system."""
    lines = ["item,seed,a,b"]
    for run, (col_a, col_b) in enumerate(zip(runs_a, runs_b)):
        lines += [f"{i},{run},{x},{y}" for i, (x, y) in enumerate(zip(col_a, col_b))]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_variance_split_and_t_test_by_hand():
    """4 items, 2 runs each.  A's runs score 2/4 and 3/4, B's 3/4 and 4/4.
    Items: d_i = mean_B - mean_A = (1/2, 1/2, 1/2, 0)... computed below from the columns."""
    runs_a = ((1, (1, 1, 0, 0)), (2, (1, 1, 1, 0)))
    runs_b = ((1, (1, 1, 1, 0)), (2, (1, 1, 1, 1)))
    result = bed.analyze_runs(random.Random(1), runs_a, runs_b, 1, C95, 200)
    assert result.a.scores == (Fraction(1, 2), Fraction(3, 4))
    assert result.b.scores == (Fraction(3, 4), Fraction(1))
    assert result.gap == Fraction(1, 4)
    # per-item run means: A (1, 1, 1/2, 0), B (1, 1, 1, 1/2); d = (0, 0, 1/2, 1/2)
    # Var(d) with n - 1 = 3: mean 1/4, squares (1/16)*4 -> 1/4 / 3 = 1/12; over n = 4: 1/48
    assert result.variance_items == pytest.approx(1 / 48)
    # A: run scores 1/2, 3/4: S^2 = 1/32; within-item variance across runs: items 3 has (0, 1)
    # -> 1/2, others 0 -> mean 1/8; S^2 - 1/8 / 4 = 1/32 - 1/32 = 0 -> no run part
    assert result.variance_runs_a == pytest.approx(0.0)
    assert result.variance_runs_b == pytest.approx(0.0)
    assert result.test.df == pytest.approx(3)
    assert result.test.t == pytest.approx(0.25 / math.sqrt(1 / 48))
    assert result.test.p == pytest.approx(2 * (1 - bed.student_t_cdf(0.25 / math.sqrt(1 / 48), 3)))


def test_run_statistics_of_a_long_file(tmp_path):
    runs_a = [(1, 0, 1, 1, 0, 1), (1, 1, 1, 0, 0, 1), (0, 0, 1, 1, 0, 1)]
    runs_b = [(1, 1, 1, 1, 0, 1), (1, 1, 1, 1, 1, 1), (0, 1, 1, 1, 0, 1)]
    path = long_csv(tmp_path, runs_a, runs_b)
    body = json.loads(cli("compare", path, "--systems", "a,b", "--run-col", "seed", "--json",
                          "--resamples", "300")[1])["comparisons"][0]
    runs = body["runs"]
    assert runs["a"]["scores"] == pytest.approx([4 / 6, 4 / 6, 3 / 6])
    assert runs["b"]["scores"] == pytest.approx([5 / 6, 1.0, 4 / 6])
    # mean 11/18; deviations 1/18, 1/18, -2/18: (1 + 1 + 4)/324 over 2 = 1/108
    assert runs["a"]["sd"] == pytest.approx(math.sqrt(1 / 108), rel=1e-12)
    assert runs["overlap"] is True
    assert body["test"]["name"] == "two-level t (items and runs)"
    assert body["decision"]["interval"] == runs["interval"]


def random_runs(rng, n, count, p):
    return tuple((r, tuple(int(rng.random() < p) for _ in range(n))) for r in range(count))


@pytest.mark.parametrize("seed", range(4))
def test_swapping_the_systems_negates_the_gap_and_swaps_the_run_parts(seed):
    rng = random.Random(seed)
    runs_a, runs_b = random_runs(rng, 60, 3, 0.6), random_runs(rng, 60, 4, 0.7)
    forward = bed.analyze_runs(random.Random(9), runs_a, runs_b, 1, C95, 200)
    backward = bed.analyze_runs(random.Random(9), runs_b, runs_a, 1, C95, 200)
    assert backward.gap == -forward.gap
    assert backward.variance_items == pytest.approx(forward.variance_items)
    assert (backward.variance_runs_a, backward.variance_runs_b) == pytest.approx(
        (forward.variance_runs_b, forward.variance_runs_a))
    assert backward.test.p == pytest.approx(forward.test.p)


@pytest.mark.parametrize("seed", range(4))
def test_duplicating_every_run_keeps_the_point_estimate(seed):
    rng = random.Random(seed)
    runs_a, runs_b = random_runs(rng, 50, 3, 0.5), random_runs(rng, 50, 2, 0.55)
    double = lambda runs: tuple((f"{label}{copy}", column) for label, column in runs
                                for copy in "xy")
    once = bed.analyze_runs(random.Random(1), runs_a, runs_b, 1, C95, 100)
    twice = bed.analyze_runs(random.Random(1), double(runs_a), double(runs_b), 1, C95, 100)
    assert twice.gap == once.gap
    assert twice.a.mean == once.a.mean and twice.b.mean == once.b.mean


def test_one_run_per_system_has_an_unknown_spread(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("item,a,b\n" + "".join(f"{i},{i % 2},{(i // 2) % 2}\n" for i in range(40)))
    runs = bed.analyze_runs(random.Random(1), ((1, tuple(i % 2 for i in range(40))),),
                            ((1, tuple((i // 2) % 2 for i in range(40))),), 1, C95, 100)
    assert runs.a.sd is None and runs.variance_runs_a == 0.0
    text = bed._runs_lines(runs, True)
    assert "spread unknown (one run)" in text[0]
    assert "had one run, whose share is unknown, not zero" in text[-1]


BAD = [
    ("runs with different item sets", "item,seed,a,b\n1,0,1,0\n2,0,0,1\n1,1,1,1\n3,1,0,0\n",
     ["--run-col", "seed"], "item(s) are not in every run"),
    ("a run column with one value", "item,seed,a,b\n1,0,1,0\n2,0,0,1\n",
     ["--run-col", "seed"], "the run column 'seed' holds one value"),
    ("a run id repeated within an item", "item,seed,a,b\n1,0,1,0\n1,0,0,1\n2,0,1,1\n2,1,0,0\n",
     ["--run-col", "seed"], "appear more than once"),
    ("a system missing from some run",
     "item,seed,model,acc\n1,0,x,1\n2,0,x,0\n1,0,y,1\n2,0,y,1\n1,1,x,0\n2,1,x,1\n",
     ["--run-col", "seed", "--system-col", "model", "--score-col", "acc", "--systems", "x,y"],
     "system 'y' has no rows for run 1"),
]


@pytest.mark.parametrize("name,text,argv,message", BAD, ids=[b[0] for b in BAD])
def test_bad_runs_input(tmp_path, name, text, argv, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    systems = [] if "--systems" in argv else ["--systems", "a,b"]
    assert_one_line_error(*cli("compare", str(path), *systems, *argv), message)


def test_items_missing_from_a_run_can_be_dropped_and_are_counted(tmp_path):
    path = tmp_path / "drop.csv"
    path.write_text("item,seed,a,b\n" + "".join(f"{i},{s},{(i + s) % 2},{i % 2}\n"
                                                for s in (0, 1) for i in range(20)
                                                if not (s == 1 and i == 7)))
    status, out, _ = cli("compare", str(path), "--systems", "a,b", "--run-col", "seed",
                         "--on-missing", "drop", "--resamples", "100")
    assert status == 0 and "1 item(s) not in every run" in out and "19 items kept" in out


def numpy_gap_se(columns, clusters=None, strata=None):
    """Each pair's standard error of the gap of means, from the raw scores: the linearized
    ratio estimator over clusters, within strata, with n_h / (n_h - 1)."""
    x = np.array(columns, dtype=float)                      # k x n
    n = x.shape[1]
    clusters = np.arange(n) if clusters is None else np.array(clusters)
    strata = np.zeros(n, dtype=int) if strata is None else np.array(strata)
    means = x.mean(axis=1)
    cov = np.zeros((len(columns), len(columns)))
    for h in np.unique(strata):
        in_h = strata == h
        units = np.unique(clusters[in_h])
        if len(units) < 2:
            continue
        z = np.array([(x[:, in_h & (clusters == u)] - means[:, None]).sum(axis=1)
                      for u in units]) / n                  # units x k
        z -= z.mean(axis=0)
        cov += len(units) / (len(units) - 1) * z.T @ z
    diag = np.diag(cov)
    return np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2 * cov, 0))


@pytest.mark.parametrize("design", ["items", "clusters", "strata", "both"])
def test_each_pairs_standard_error_is_numpys_under_the_design(design):
    rng = random.Random(7)
    columns = correlated(rng, [0.6, 0.65, 0.7, 0.8], 400)
    clusters = [i // 5 for i in range(400)] if design in ("clusters", "both") else None
    strata = [i % 3 for i in range(400)] if design in ("strata", "both") else None
    if design == "both":
        clusters = [f"{s}-{c}" for s, c in zip(strata, clusters)]
    board = board_of(columns, clusters=clusters, strata=strata)
    se = numpy_gap_se(columns, clusters, strata)
    names = [f"s{i}" for i in range(4)]
    for pair in board.pairs:
        i, j = names.index(pair.first), names.index(pair.second)
        half = float(pair.interval.hi - pair.interval.lo) / 2
        assert half / board.critical == pytest.approx(se[i, j], rel=1e-9)
        assert float(pair.gap) == pytest.approx(np.mean(columns[i]) - np.mean(columns[j]))


def test_real_scores_in_clusters_against_numpy():
    rng = random.Random(3)
    columns = [[round(min(1.0, max(0.0, rng.gauss(mu, 0.2))), 3) for _ in range(300)]
               for mu in (0.5, 0.55, 0.62)]
    clusters = [i // 4 for i in range(300)]
    board = board_of([[Fraction(str(v)) for v in c] for c in columns], clusters=clusters)
    se = numpy_gap_se(columns, clusters)
    for pair in board.pairs:
        i, j = int(pair.first[1:]), int(pair.second[1:])
        assert float(pair.interval.hi - pair.gap) / board.critical == \
            pytest.approx(se[i, j], rel=1e-9)
    assert board.design == "75 clusters"


def test_pair_tests_are_mcnemar_on_each_pairs_discordant_items():
    rng = random.Random(11)
    columns = correlated(rng, [0.55, 0.6, 0.7], 250)
    board = board_of(columns)
    for pair in board.pairs:
        a, b = (np.array(columns[int(name[1:])]) for name in (pair.first, pair.second))
        first_only, second_only = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        assert pair.test.p == bed.mcnemar_exact(second_only, first_only).p
        assert pair.differing == first_only + second_only


def test_ranks_and_tiers_follow_from_the_joint_intervals():
    rng = random.Random(5)
    board = board_of(correlated(rng, [0.5, 0.52, 0.6, 0.75, 0.76, 0.9], 500))
    order = [s.system for s in board.standings]
    scores = [s.score for s in board.standings]
    assert scores == sorted(scores, reverse=True)
    for s in board.standings:
        above = sum(board.pair(s.system, t).apart for t in order[:order.index(s.system)]
                    if t != s.system)
        below = sum(board.pair(s.system, t).apart for t in order[order.index(s.system) + 1:])
        assert s.ranks == (1 + above, len(order) - below)
    leader = board.standings[0]
    assert leader.tier == 1
    for s in board.standings[1:]:
        assert (s.tier == 1) == (not board.pair(leader.system, s.system).apart)
    for pair in board.pairs:     # apart exactly when the interval excludes 0
        assert pair.apart == (pair.interval.lo > 0 or pair.interval.hi < 0)


@given(st.integers(2, 9).flatmap(lambda k: st.tuples(
    st.just(k), st.lists(st.booleans(), min_size=k * (k - 1) // 2, max_size=k * (k - 1) // 2))))
@settings(max_examples=200, deadline=None)
def test_letter_groups_share_a_letter_exactly_when_not_told_apart(case):
    """Piepho's insert-and-absorb on any relation, not only a board's: the display is exact."""
    k, flags = case
    apart = [[False] * k for _ in range(k)]
    for (i, j), flag in zip(((i, j) for i in range(k) for j in range(i + 1, k)), flags):
        apart[i][j] = apart[j][i] = flag
    letters = bed._letter_groups(list(range(k)), apart)
    assert letters
    for i in range(k):
        for j in range(k):
            if i != j:
                assert bool(set(letters[i]) & set(letters[j])) == (not apart[i][j])
    assert letters[0][0] == "a"
    assert all(len(set(word)) == len(word) for word in letters.values())


def test_the_shipped_board_groups_equally_good_systems_across_tiers():
    """merge (tier 1) and dpo-beta (tier 2) are not told apart: they share the letter b."""
    board = bed.leaderboard(os.path.join(EXAMPLES, "leaderboard.csv"), id_col="question").board
    assert [(s.system, s.tier, s.groups) for s in board.standings] == [
        ("cot", 1, "a"), ("rag-rerank", 1, "ab"), ("merge", 1, "ab"), ("dpo-beta", 2, "bc"),
        ("rag", 2, "bc"), ("dpo", 2, "bcd"), ("sft", 2, "cd"), ("sft-long", 2, "cd"),
        ("distill", 3, "d"), ("baseline", 4, "e")]
    assert not board.pair("merge", "dpo-beta").apart


@pytest.mark.simulation
def test_truly_tied_systems_rarely_lose_a_shared_letter():
    """8 systems on 500 items, two pairs tied in truth: greedy tiers split a tied pair 27
    times in these 240 chances; letters split it only when the board tells the pair apart,
    which the 95% joint intervals allow in at most 5% of boards (0 here; the bound allows
    13, 5% plus 3 sd)."""
    rng = random.Random(27)
    accuracies = [0.80, 0.76, 0.76, 0.72, 0.70, 0.66, 0.66, 0.60]
    split_letters = split_tiers = 0
    for seed in range(120):
        board = board_of(correlated(rng, accuracies, 500), seed=seed, draws=400)
        by_name = {s.system: s for s in board.standings}
        for first, second in (("s1", "s2"), ("s5", "s6")):
            one, two = by_name[first], by_name[second]
            split_tiers += one.tier != two.tier
            split_letters += not set(one.groups) & set(two.groups)
    assert split_letters <= 0.11 * 120 < split_tiers


def test_the_board_adjusts_its_pairs_p_as_asked():
    rng = random.Random(9)
    columns = correlated(rng, [0.6, 0.62, 0.66, 0.7, 0.72], 300)
    for adjust, method in (("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")):
        board = board_of(columns, adjust=adjust)
        raw = [p.test.p for p in board.pairs]
        assert [p.p_adjusted for p in board.pairs] == \
            pytest.approx(list(multipletests(raw, method)), abs=1e-12)


def true_ranks(accuracies):
    return [1 + sum(b > a for b in accuracies) for a in accuracies]


@pytest.mark.simulation
@pytest.mark.slow
@pytest.mark.parametrize("accuracies, n, replays", [
    ([0.7] * 5, 300, 1000),                                  # k=5, all equal
    ([0.6 + 0.03 * i for i in range(10)], 400, 400),        # k=10, distinct and close
    ([0.65] * 6 + [0.7 + 0.01 * i for i in range(14)], 500, 300),   # k=20, ties and steps
])
def test_rank_intervals_hold_every_true_rank_jointly(accuracies, n, replays):
    rng = random.Random(2026)
    truth = true_ranks(accuracies)
    held = 0
    for replay in range(replays):
        board = board_of(correlated(rng, accuracies, n), seed=replay, draws=1000)
        names = [s.system for s in board.standings]
        held += all(s.ranks[0] <= truth[int(s.system[1:])] <= s.ranks[1]
                    for s in board.standings) and len(names) == len(accuracies)
    rate = held / replays
    print(f"k={len(accuracies)}: every true rank held jointly in {rate:.3f} of {replays}")
    assert rate >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / replays), rate


def test_the_shipped_prompts_ranked_with_every_column():
    status, out, err = cli("leaderboard", PROMPTS)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("leaderboard of 4 systems on 600 items: 2 tiers; the leader, "
                               "prompt_v2")
    assert lines[1].split() == ["rank", "system", "score", "95%", "CI", "tier", "groups"]
    assert [line.split()[1] for line in lines[2:6]] == \
        ["prompt_v2", "prompt_v3", "baseline", "prompt_v4"]
    got = cli_json("leaderboard", PROMPTS)
    assert [s["system"] for s in got["systems"]] == \
        ["prompt_v2", "prompt_v3", "baseline", "prompt_v4"]
    assert len(got["pairs"]) == 6 and got["adjust"] == "holm"
    assert got["headline"] == lines[0]
    with open(PROMPTS, newline="") as f:
        rows = list(csv.DictReader(f))
    for system in got["systems"]:
        assert system["score"] == pytest.approx(
            sum(int(r[system["system"]]) for r in rows) / len(rows))


def test_a_long_file_and_a_file_per_system_rank_alike(tmp_path):
    with open(PROMPTS, newline="") as f:
        rows = list(csv.DictReader(f))
    systems = ["baseline", "prompt_v2", "prompt_v3", "prompt_v4"]
    long = tmp_path / "long.csv"
    long.write_text("item,model,correct\n" + "".join(
        f"{r['item']},{s},{r[s]}\n" for r in rows for s in systems))
    paths = []
    for s in systems:
        path = tmp_path / f"{s}.jsonl"
        path.write_text("".join(json.dumps({"id": r["item"], "score": int(r[s])}) + "\n"
                                for r in rows))
        paths.append(str(path))
    wide = cli_json("leaderboard", PROMPTS)
    by_long = cli_json("leaderboard", str(long), "--system-col", "model", "--score-col", "correct")
    per_file = cli_json("leaderboard", *paths, "--score-col", "score", "--id-col", "id",
                    "--names", ",".join(systems))
    for other in (by_long, per_file):
        assert other["systems"] == wide["systems"] and other["pairs"] == wide["pairs"]


def test_harness_folders_rank_every_model_they_hold():
    suite = os.path.join(EXAMPLES, "helm", "runs", "mysuite")
    got = cli_json("leaderboard", suite, "--metric", "exact_match")
    assert sorted(s["system"] for s in got["systems"]) == ["mock/parity-a", "mock/parity-b"]
    assert "tasks as strata" in got["joint"]["design"]


def test_runs_and_real_scores_carry_through():
    seeds = os.path.join(EXAMPLES, "seeds.csv")
    got = cli_json("leaderboard", seeds, "--run-col", "seed")
    assert got["joint"]["design"] == "each item's mean over its runs, plus the runs' own variance"
    assert [p["test"]["name"] for p in got["pairs"]] == ["two-level t (items and runs)"]
    judge = os.path.join(EXAMPLES, "judge.csv")
    got = cli_json("leaderboard", judge, "--id-col", "prompt_id")
    assert got["pairs"][0]["test"]["name"] == "paired z test (design-based s.e.)"


def test_bad_boards_are_refused_in_one_line(tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("item,a\n1,1\n2,0\n3,1\n")
    assert_one_line_error(*cli("leaderboard", str(one)), "2 to 200 systems, got 1")
    constant = tmp_path / "constant.csv"
    constant.write_text("item,a,b,c\n" + "".join(f"{i},{i % 2},{1 - i % 3 // 2},0\n"
                                                 for i in range(40)))
    assert_one_line_error(*cli("leaderboard", str(constant)), "c scores 0 on every item")
    status, out, _ = cli("leaderboard", str(constant), "--allow-constant")
    assert status == 0 and "c " in out
    a, b, c = (tmp_path / f"{x}.jsonl" for x in "abc")
    for path, ids in ((a, range(10)), (b, range(10)), (c, range(5, 15))):
        path.write_text("".join(json.dumps({"id": i, "s": i % 2}) + "\n" for i in ids))
    assert_one_line_error(*cli("leaderboard", str(a), str(b), str(c), "--score-col", "s",
                               "--id-col", "id"), "not in every run")
    text = tmp_path / "text.csv"
    text.write_text("item,a,b,model\n1,1,0,x\n2,0,1,y\n")
    assert_one_line_error(*cli("leaderboard", str(text)), "model")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--names", "a,b"),
                          "--names gives 2 names for the 4 systems")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--draws", "10"), "--draws")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--adjust", "fdr"), "invalid choice")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--gate"), "does not apply")
    empty = tmp_path / "empty.csv"
    empty.write_text("item,a,,c\n1,1,0,1\n2,0,1,1\n3,1,1,0\n")
    assert_one_line_error(*cli("leaderboard", str(empty)), "a column has no name")
    same = tmp_path / "s.jsonl"
    same.write_text("".join(json.dumps({"id": i, "s": i % 2}) + "\n" for i in range(10)))
    assert_one_line_error(*cli("leaderboard", str(same), str(same), "--score-col", "s",
                               "--id-col", "id"), "two systems are named")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--names", "a,,c,d"), "an empty name")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--target-power", "0.3"), "above 0.5")
    with pytest.raises(bed.ToolError, match="at least two systems"):
        bed.leaderboard([1, 0, 1])
    with pytest.raises(bed.ToolError, match="mapping names its systems"):
        bed.leaderboard({"a": [1, 0], "b": [0, 1]}, names=["x", "y"])


def test_compare_adjusts_by_benjamini_hochberg_when_asked():
    systems = "baseline,prompt_v2,prompt_v3,prompt_v4"
    holm = cli_json("compare", PROMPTS, "--systems", systems)
    bh = cli_json("compare", PROMPTS, "--systems", systems, "--adjust", "bh")
    raw = [c["test"]["p"] for c in holm["comparisons"]]
    assert [c["decision"]["p"] for c in bh["comparisons"]] == \
        pytest.approx(list(multipletests(raw, "fdr_bh")))
    assert [c["p_bh"] for c in holm["comparisons"]] == \
        pytest.approx(list(multipletests(raw, "fdr_bh")))
    discoveries = sum(c["decision"]["p"] < 0.05 for c in bh["comparisons"])
    assert bh["comparisons"][0]["decision"]["level"] == pytest.approx(1 - 0.05 * discoveries / 3)
    status, out, _ = cli("compare", PROMPTS, "--systems", systems, "--adjust", "bh")
    assert "Benjamini-Hochberg-adjusted" in out and "FCR-adjusted" in out


def test_a_stratum_of_one_item_is_refused_as_compare_refuses_it():
    rng = random.Random(1)
    columns = [[rng.randint(0, 1) for _ in range(100)] for _ in range(3)]
    with pytest.raises(bed.ToolError, match="one"):
        board_of(columns, strata=tuple(range(100)))


def test_identical_systems_share_one_tier_and_no_draws_are_needed():
    rng = random.Random(1)
    same = [rng.randint(0, 1) for _ in range(100)]
    board = board_of([same, same, same])
    assert board.draws == 0 and board.critical_error == 0
    assert {s.tier for s in board.standings} == {1}
    assert all(s.ranks == (1, 3) for s in board.standings)
    two = board_of([same, [1 - x for x in same]])
    assert two.draws == 0 and two.critical == pytest.approx(NormalDist().inv_cdf(0.975))


def test_tiers_out_of_score_order_are_said():
    """close trails top on 8 items, all one way: told apart; loose differs from top on 50
    items both ways and scores lower, but is not told apart: it shares top's tier."""
    top = [1] * 60 + [0] * 40
    close = [0] * 8 + [1] * 52 + [0] * 40
    loose = [1, 0] * 50
    result = bed.leaderboard({"top": top, "close": close, "loose": loose})
    board = result.board
    assert [(s.system, s.tier) for s in board.standings] == \
        [("top", 1), ("close", 2), ("loose", 1)]
    assert "note: tiers are not in score order: loose (tier 1)" in str(result)


def test_real_scores_pairs_use_the_z_test_on_the_intervals_standard_error():
    rng = random.Random(6)
    columns = [[Fraction(round(rng.random(), 3)).limit_denominator(1000) for _ in range(200)]
               for _ in range(3)]
    board = board_of(columns)
    for pair in board.pairs:
        se = float(pair.interval.hi - pair.gap) / board.critical
        assert pair.test.name == "paired z test (design-based s.e.)"
        assert pair.test.p == pytest.approx(2 * NormalDist().cdf(-abs(float(pair.gap)) / se))


def gate_table_file(tmp_path, n, acc_a, acc_b, seed=1, name="t.csv"):
    """n items; A correct with probability acc_a, B agreeing with A except where it moves
    toward acc_b (so the gap is about acc_b - acc_a and the pairing is tight)."""
    rng = random.Random(seed)
    lines = ["item,a,b"]
    for i in range(n):
        u = rng.random()
        a = int(u < acc_a)
        b = int(u < acc_b)
        lines.append(f"{i},{a},{b}")
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run(*argv):
    return cli(*argv, "--resamples", "1000", "--calibration", "0")


@pytest.mark.parametrize("lower,word,margin,passed", [
    (Fraction(11, 1000), "better", Fraction(1, 100), True),      # just above a superiority margin
    (Fraction(1, 100), "better", Fraction(1, 100), False),       # at it: not above
    (Fraction(9, 1000), "better", Fraction(1, 100), False),      # just below
    (Fraction(1, 1000), "better", Fraction(0), True),            # margin 0: the verdict itself
    (Fraction(1, 1000), "borderline", Fraction(0), False),       # the test disagrees: no pass
    (Fraction(2, 100), "unreliable", Fraction(1, 100), False),   # too few clusters: never
    (Fraction(-4, 1000), "cannot tell", Fraction(-5, 1000), True),   # non-inferiority, above
    (Fraction(-5, 1000), "cannot tell", Fraction(-5, 1000), False),  # at the margin
    (Fraction(-6, 1000), "worse", Fraction(-5, 1000), False),        # below it
    (Fraction(-4, 1000), "unreliable", Fraction(-5, 1000), False),
])
def test_the_gate_rule(lower, word, margin, passed):
    assert bed._gate_passes(lower, word, margin) is passed


def test_superiority_pass_and_fail_statuses(tmp_path):
    clear = gate_table_file(tmp_path, 4000, 0.70, 0.75, name="clear.csv")    # +5 pts, tight
    status, out, _ = run("compare", clear, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "1.0")
    assert status == 0 and "gate: PASS (superiority at +1.0 pts)" in out
    status, out, _ = run("compare", clear, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "8")
    assert status == 1 and "gate: FAIL (superiority at +8.0 pts)" in out
    body = json.loads(run("compare", clear, "--a-col", "a", "--b-col", "b", "--gate",
                          "--min-delta", "8", "--json")[1])
    gate = body["comparisons"][0]["decision"]["gate"]
    assert body["gate_passed"] is False and gate["passed"] is False
    assert gate["margin"] == pytest.approx(0.08)
    assert gate["kind"] == "superiority" and "rule" in gate


def test_non_inferiority_statuses(tmp_path):
    close = gate_table_file(tmp_path, 4000, 0.70, 0.698, name="close.csv")   # -0.2 pts
    status, out, _ = run("compare", close, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "-1.5")
    assert status == 0 and "gate: PASS (non-inferiority at -1.5 pts)" in out
    worse = gate_table_file(tmp_path, 4000, 0.70, 0.66, name="worse.csv")    # -4 pts
    status, out, _ = run("compare", worse, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "-1.5")
    assert status == 1 and "gate: FAIL (non-inferiority at -1.5 pts)" in out


def test_gate_bad_input_is_status_2(tmp_path):
    assert_one_line_error(*cli("simulate", "--min-delta", "1"),
                          "--min-delta is the margin of the gate; give --gate too")
    assert_one_line_error(*cli("plan", "--gate", "--n-grid", "100,200"),
                          "--gate does not apply to plan")
    assert_one_line_error(*cli("compare", str(tmp_path / "none.csv"), "--gate"), "cannot read")


@pytest.mark.parametrize("scale", [1, 10 ** 18])
def test_the_gate_line_never_prints_the_lower_end_equal_to_the_margin_it_beats(tmp_path, scale):
    """A margin just below the lower end (within its printed digits: 3 decimals, or 6
    significant digits past 10^15) is printed with as many more digits as tell them apart."""
    rng = random.Random(4)
    lines = ["item,a,b"] + [f"{i},{x * scale:.9g},{(x + 0.3 + rng.gauss(0, 0.05)) * scale:.9g}"
                            for i, x in enumerate(rng.random() for _ in range(300))]
    path = tmp_path / "f.csv"
    path.write_text("\n".join(lines) + "\n")
    lower = bed.compare(str(path), systems=["a", "b"]).interval.lo
    margin = lower - lower / 10 ** 9
    status, out, _ = cli("compare", str(path), "--systems", "a,b", "--gate", "--min-delta",
                         str(float(margin)))
    line = next(line for line in out.splitlines() if line.startswith("gate: PASS"))
    shown = re.findall(r"[+-][0-9.]+(?:e[+][0-9]+)?", line)
    assert status == 0 and len(shown) == 3 and shown[0] == shown[2] != shown[1], line


def test_the_verdicts_interval_never_prints_its_lower_end_as_the_margin_it_fails(tmp_path):
    """A wide interval (two decimals) whose lower end is +0.999 printed as [+1.00, +100.60]
    beside "gate: FAIL ... +0.999 is not above +1.000"; with a gate its ends take the digits
    that tell the lower end from the margin, in the verdict, the gap line and a family's
    table; without one, as before."""
    rng = random.Random(30)
    gaps = [rng.gauss(52, 370) for _ in range(200)]
    a = [rng.gauss(50, 30) for _ in range(200)]
    path = write(tmp_path / "g.csv", "item,a,b\n" + "".join(
        f"{i},{x!r},{x + d - 0.45!r}\n" for i, (x, d) in enumerate(zip(a, gaps))))
    plain = cli("compare", path, "--a-col", "a", "--b-col", "b")[1]
    assert "paired 95% CI [+1.00, +100.60]" in plain
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--gate", "--min-delta",
                         "1")
    assert status == 1 and "the lower end of the paired 95% CI, +0.999, is not above +1.000" in out
    assert out.count("paired 95% CI [+0.999, +100.600]") == 1 and "bootstrap 95% CI [+0.999," in out
    family = write(tmp_path / "f.csv", "item,a,b,c\n" + "".join(
        f"{i},{x!r},{x + d - 0.45!r},{x + d!r}\n" for i, (x, d) in enumerate(zip(a, gaps))))
    table = cli("compare", family, "--systems", "a,b,c", "--gate", "--min-delta", "-6.1")[1]
    assert "b: gate: FAIL (non-inferiority at -6.100): the lower end of the paired 97.5% CI, " \
        "-6.134, is not above -6.100" in table
    assert table.count("[-6.13, +107.76]") == 2 and "[-6.1," not in table


def test_several_candidates_are_each_gated_with_the_family_adjustment(tmp_path):
    rng = random.Random(3)
    lines = ["item,base,good,meh"]
    for i in range(3000):
        u = rng.random()
        lines.append(f"{i},{int(u < 0.6)},{int(u < 0.68)},{int(u < 0.605)}")
    path = tmp_path / "f.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, _ = run("compare", str(path), "--systems", "base,good,meh", "--gate",
                         "--min-delta", "1")
    assert status == 1
    assert "good: gate: PASS" in out and "meh: gate: FAIL" in out
    assert "simultaneous 97.5% CI" in out


@pytest.mark.simulation
def test_the_gates_false_pass_rate_at_the_margin_is_within_error():
    """True gap = margin = 1 pt: the gate may pass only by chance, at most 2.5%."""
    status, out, _ = cli("simulate", "--acc-a", "0.72", "--acc-b", "0.73", "--n-items", "3000",
                         "--replays", "1000", "--resamples", "1000", "--gate", "--min-delta",
                         "1", "--json", "--engine", "counts")
    cov = json.loads(out)["coverage"]["gate"]
    assert cov["passes"] <= 0.025 + 2.5 * cov["passes_se"] + 1e-9
    assert cov["passes"] >= 0.025 - 4 * max(cov["passes_se"], 0.005)


def candidates_file(tmp_path, k, n=800):
    """The same baseline column in every file, a candidate that improves with k."""
    rng = random.Random(0)
    base = [int(rng.random() < 0.7) for _ in range(n)]
    flip = random.Random(k)
    cand = [1 if (x == 0 and flip.random() < 0.1 * k) else x for x in base]
    path = tmp_path / f"v{k}.csv"
    path.write_text("item,a,b\n" + "".join(f"{i},{x},{y}\n" for i, (x, y) in
                                             enumerate(zip(base, cand))))
    return str(path)


def test_the_ledger_counts_comparisons_and_adjusts_by_holm(tmp_path):
    ledger = tmp_path / "evals.jsonl"
    data = candidates_file(tmp_path, 4)
    ps = []
    for k in range(1, 4):
        other = candidates_file(tmp_path, k)
        body = json.loads(run("compare", other, "--a-col", "a", "--b-col", "b", "--ledger",
                              str(ledger), "--json")[1])
        ps.append(body["comparisons"][0]["test"]["p"])
        assert body["ledger"]["first"] == body["ledger"]["total"]
    entries = bed.read_ledger(str(ledger))
    assert len(entries) == 3
    # same items and same baseline scores: the same test set, whatever the candidate
    assert len({e.test_set for e in entries}) == 1
    assert body["ledger"]["total"] == 3
    assert body["ledger"]["p_holm"][0] == pytest.approx(bed.holm(ps)[-1])
    status, text, _ = run("compare", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger))
    assert "ledger: comparison 4 of 4 on this test set" in text


def test_a_reexport_with_other_columns_is_the_same_test_set(tmp_path):
    path = gate_table_file(tmp_path, 200, 0.7, 0.72)
    lines = open(path).read().splitlines()
    other = tmp_path / "export.csv"
    other.write_text("\n".join(["extra," + lines[0]] + [f"x,{line}" for line in lines[1:]])
                     + "\n")
    a = bed.read_table(path, bed.TableSpec(("a", "b")))
    b = bed.read_table(str(other), bed.TableSpec(("a", "b")))
    ledger = str(tmp_path / "evals.jsonl")
    assert bed.append_ledger(ledger, a, []).test_set == bed.append_ledger(ledger, b, []).test_set


def test_a_truncated_last_line_is_refused_with_its_number_and_left_alone(tmp_path):
    ledger = tmp_path / "evals.jsonl"
    data = gate_table_file(tmp_path, 300, 0.7, 0.72)
    assert run("compare", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger))[0] == 0
    with open(ledger, "ab") as handle:
        handle.write(b'{"tool": "bootstrap-eval-deltas", "ledg')
    before = hashlib.sha256(ledger.read_bytes()).hexdigest()
    assert_one_line_error(*run("compare", data, "--a-col", "a", "--b-col", "b", "--ledger",
                               str(ledger)), "line 2 is truncated")
    assert hashlib.sha256(ledger.read_bytes()).hexdigest() == before


def test_a_foreign_ledger_is_refused_and_never_rewritten(tmp_path):
    ledger = tmp_path / "notes.jsonl"
    ledger.write_text('{"hello": "world"}\n')
    data = gate_table_file(tmp_path, 300, 0.7, 0.72)
    assert_one_line_error(*run("compare", data, "--a-col", "a", "--b-col", "b", "--ledger",
                               str(ledger)), "line 1: not a bootstrap-eval-deltas ledger entry")
    assert ledger.read_text() == '{"hello": "world"}\n'


APPEND = """
import sys
sys.path.insert(0, {root!r})
import bootstrap_eval_deltas as bed
table = bed.read_table({data!r}, bed.TableSpec(("a", "b")))
import random
comparisons = bed.compare_systems(table, random.Random(1), resamples=20)
for _ in range(200):
    bed.append_ledger({ledger!r}, table, comparisons)
"""


def test_runs_appending_at_once_each_count_every_comparison_before_theirs(tmp_path):
    """Ten runs at once, half of them through a link to the ledger from another folder: each
    report's place on the ledger is counted under the lock that its append holds, so the ten
    say 1 of 1 to 10 of 10 (two said "2 of 2"; through a link, the link's folder was locked)."""
    ledger = str(tmp_path / "shared.jsonl")
    (tmp_path / "other").mkdir()
    os.symlink(ledger, tmp_path / "other" / "link.jsonl")
    data = gate_table_file(tmp_path, 100, 0.7, 0.72)
    argv = [sys.executable, os.path.join(ROOT, "bootstrap_eval_deltas.py"), "compare", data,
            "--a-col", "a", "--b-col", "b", "--resamples", "50", "--calibration", "0", "--json",
            "--ledger"]
    procs = [subprocess.Popen(argv + [ledger if k % 2 else str(tmp_path / "other" / "link.jsonl")],
                              stdout=subprocess.PIPE, text=True) for k in range(10)]
    notes = [json.loads(p.communicate(timeout=300)[0])["ledger"] for p in procs]
    assert sorted((n["first"], n["total"]) for n in notes) == [(k, k) for k in range(1, 11)]
    assert len(bed.read_ledger(ledger)) == 10



def test_runs_appending_at_once_through_hard_links_in_two_folders_count_every_comparison(
        tmp_path):
    """One ledger reached by two hard links in two folders: the lock is the file's own as well
    as its folder's, so ten runs at once say 1 of 1 to 10 of 10 (locking the folder alone, two
    said "10 of 10")."""
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
    (tmp_path / "x" / "L.jsonl").write_text("")
    os.link(tmp_path / "x" / "L.jsonl", tmp_path / "y" / "L.jsonl")
    data = gate_table_file(tmp_path, 100, 0.7, 0.72)
    argv = [sys.executable, os.path.join(ROOT, "bootstrap_eval_deltas.py"), "compare", data,
            "--a-col", "a", "--b-col", "b", "--resamples", "50", "--calibration", "0", "--json",
            "--ledger"]
    procs = [subprocess.Popen(argv + [str(tmp_path / "xy"[k % 2] / "L.jsonl")],
                              stdout=subprocess.PIPE, text=True) for k in range(10)]
    notes = [json.loads(p.communicate(timeout=300)[0])["ledger"] for p in procs]
    assert sorted((n["first"], n["total"]) for n in notes) == [(k, k) for k in range(1, 11)]
    assert len(bed.read_ledger(str(tmp_path / "y" / "L.jsonl"))) == 10


def test_two_processes_appending_at_once_leave_every_line_whole(tmp_path):
    ledger = str(tmp_path / "shared.jsonl")
    data = gate_table_file(tmp_path, 100, 0.7, 0.72)
    code = APPEND.format(root=ROOT, data=data, ledger=ledger)
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    lines = open(ledger).read().splitlines()
    assert len(lines) == 400
    assert all(json.loads(line)["tool"] == "bootstrap-eval-deltas" for line in lines)
    assert len(bed.read_ledger(ledger)) == 400


def test_the_ledger_summary_lists_test_sets_and_adjusted_verdicts(tmp_path):
    ledger = tmp_path / "evals.jsonl"
    for k in range(2):
        data = gate_table_file(tmp_path, 1500, 0.70, 0.74, seed=k, name=f"d{k}.csv")
        run("compare", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger))
    status, out, _ = cli("ledger", str(ledger))
    assert status == 0 and out.startswith(f"ledger {ledger}: 2 test set(s), 2 comparison(s)")
    body = json.loads(cli("ledger", str(ledger), "--json")[1])
    assert len(body["test_sets"]) == 2
    assert_one_line_error(*cli("ledger", str(ledger), "--n-items", "5"),
                          "--n-items does not apply to ledger")


def test_a_ledger_append_that_fails_midway_leaves_the_ledger_as_it_was(tmp_path, monkeypatch):
    """A full disk after part of the lines were written: the file is cut back to its old
    bytes, one line says so, and nothing else is written (the plot waits for the ledger)."""
    ledger = tmp_path / "l.jsonl"
    prompts = PROMPTS
    status, _, err = cli("compare", prompts, "--systems", "baseline,prompt_v2",
                         "--ledger", str(ledger), "--calibration", "0")
    assert status == 0, err
    before = ledger.read_bytes()
    real_write, calls = os.write, []

    def short_then_full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_full)
    status, out, err = cli("compare", prompts, "--systems", "baseline,prompt_v3,prompt_v4",
                           "--ledger", str(ledger), "--calibration", "0")
    monkeypatch.undo()
    assert status == 2 and len(calls) == 2
    assert err.count("\n") == 1 and "No space left on device; it is as it was" in err
    assert ledger.read_bytes() == before


def test_a_ledger_that_is_a_device_or_endless_is_refused(tmp_path):
    prompts = PROMPTS
    for target in ("/dev/zero", "/dev/null"):
        assert_one_line_error(*cli("compare", prompts, "--systems", "baseline,prompt_v2",
                                   "--ledger", target),
                              f"cannot write {target}: it is not a regular file (a device, pipe "
                              "or socket); --ledger writes regular files only")
    assert_one_line_error(*cli("ledger", "/dev/zero"),
                          "the ledger /dev/zero is not a regular file (a folder, device or pipe)")


def test_a_clear_gap_over_too_few_clusters_is_unreliable(tmp_path):
    rows = ["item,a,b,passage"] + [f"{i},{int(i % 3 == 0)},{int(i % 3 != 2)},{i % 10}"
                                   for i in range(200)]
    path = write(tmp_path / "c.csv", "\n".join(rows) + "\n")
    status, out, err = cli("compare", path, "--a-col", "a", "--b-col", "b", "--cluster-col",
                           "passage", *FAST)
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.startswith("verdict: unreliable. The observed +33.5 pts: the paired 95% CI ")
    assert "excludes 0" in first and "with 10 clusters a cluster bootstrap cannot be trusted" \
        in first and "do not claim a winner" in first
    body = json.loads(cli("compare", path, "--a-col", "a", "--b-col", "b", "--cluster-col",
                          "passage", *FAST, "--json")[1])
    comparison = body["comparisons"][0]
    assert comparison["verdict"] == "unreliable" and comparison["design"]["clusters"] == 10


def test_a_familys_simultaneous_score_interval_is_newcombes_at_the_joint_level(tmp_path):
    rng = random.Random(3)
    rows = ["item,a,b,c"] + [f"{i},{int(rng.random() < .6)},{int(rng.random() < .7)},"
                             f"{int(rng.random() < .8)}" for i in range(100)]
    path = write(tmp_path / "f.csv", "\n".join(rows) + "\n")
    status, out, err = cli("compare", path, "--systems", "a,b,c", "--interval", "score",
                           "--calibration", "0", "--json")
    assert status == 0, err
    body = json.loads(out)
    table = bed.read(path, systems="a,b,c")
    a, *candidates = table.columns
    assert len(candidates) == len(body["comparisons"]) == 2
    for column, comparison in zip(candidates, body["comparisons"]):
        both = sum(x and y for x, y in zip(a, column))
        a_only = sum(x and not y for x, y in zip(a, column))
        b_only = sum(y and not x for x, y in zip(a, column))
        cells = bed.Cells(both, a_only, b_only, 100 - both - a_only - b_only)
        want = bed.newcombe_paired(cells, Fraction(39, 40))       # 1 - 0.05 / 2
        assert comparison["decision"]["level"] == 0.975
        assert comparison["decision"]["interval"] == pytest.approx([float(want.lo),
                                                                   float(want.hi)])


def values(rng, p, n=40):
    return ["C" if rng.random() < p else "I" for _ in range(n)]


def test_tasks_that_differ_in_runs_are_each_compared_with_their_own(tmp_path):
    rng = random.Random(1)
    base = inspect_folder(tmp_path / "base", {
        "arith": [values(rng, .6), values(rng, .6)], "logic": [values(rng, .5)],
        "facts": [values(rng, .5), values(rng, .5)]})
    tuned = inspect_folder(tmp_path / "tuned", {
        "arith": [values(rng, .7), values(rng, .7)], "logic": [values(rng, .6)],
        "facts": [values(rng, .6)]})
    status, out, err = cli("compare", base, tuned, *FAST, "--json")
    assert status == 0, err
    runs = {task["task"]: task["runs"] for task in json.loads(out)["tasks"]}
    assert runs == {"arith": "2 and 2 runs, two-level", "logic": "",
                    "facts": "2 and 1 runs, single-run (each item's mean)"}
    text = cli("compare", base, tuned, *FAST)[1]
    assert "2 and 1 runs, single-run (each item's mean)" in text


def test_tasks_with_the_same_runs_are_pooled_plainly(tmp_path):
    rng = random.Random(2)
    base = inspect_folder(tmp_path / "base", {
        "arith": [values(rng, .6), values(rng, .6)], "logic": [values(rng, .5), values(rng, .5)]})
    tuned = inspect_folder(tmp_path / "tuned", {
        "arith": [values(rng, .7), values(rng, .7)], "logic": [values(rng, .6), values(rng, .6)]})
    status, out, err = cli("compare", base, tuned, *FAST)
    assert status == 0, err
    assert "pooled over all 80 items, items pooled plainly (runs and task strata together are " \
        "not supported)" in out
    assert out.count("2 and 2 runs, two-level") == 2


def test_compare_tasks_from_python_checks_its_pool_and_runs_without_progress(tmp_path):
    rng = random.Random(4)
    base = inspect_folder(tmp_path / "base", {"arith": [values(rng, .6)],
                                                      "logic": [values(rng, .5)]})
    tuned = inspect_folder(tmp_path / "tuned", {"arith": [values(rng, .8)],
                                                         "logic": [values(rng, .6)]})
    table = bed.read(base, tuned)
    with pytest.raises(bed.ToolError, match="pool must be strata, clusters or macro; got 'items'"):
        bed.compare_tasks(table, random.Random(1), pool="items")
    result = bed.compare_tasks(table, random.Random(1), resamples=200, calibration=0)
    assert [task.task for task in result.tasks] == ["arith", "logic"]
    assert result.pool == "strata" and result.pooled[0].analysis.n == 80


def test_runs_with_clusters_are_refused(tmp_path):
    rows = ["item,seed,a,b,passage"] + [f"{i},{r},{(i + r) % 2},{i % 2},{i % 4}"
                                        for r in (1, 2) for i in range(40)]
    path = write(tmp_path / "r.csv", "\n".join(rows) + "\n")
    assert_one_line_error(*cli("compare", path, "--systems", "a,b", "--run-col", "seed",
                               "--cluster-col", "passage", *FAST),
                          "several runs per system with --cluster-col or --strata-col are not "
                          "supported")


def runs_csv(tmp_path, accuracies, name="runs.csv"):
    """1,000 items on a shared difficulty, two runs a system: run r puts A at
    accuracies[r][0] and B at accuracies[r][1] (so nearly all the spread is the runs')."""
    rng = random.Random(5)
    u = [rng.random() for _ in range(1000)]
    rows = ["item,seed,a,b"]
    for r, (pa, pb) in enumerate(accuracies):
        rows += [f"{i},{r},{int(x < pa)},{int(x < pb)}" for i, x in enumerate(u)]
    return write(tmp_path / name, "\n".join(rows) + "\n")


def test_a_gap_lost_in_the_runs_spread_asks_for_more_runs(tmp_path):
    path = runs_csv(tmp_path, ((0.60, 0.70), (0.70, 0.80)))
    argv = ("compare", path, "--systems", "a,b", "--run-col", "seed", "--resamples", "300")
    status, out, err = cli(*argv)
    assert status == 0, err
    body = json.loads(cli(*argv, "--json")[1])["comparisons"][0]
    assert body["verdict"] == "cannot tell"
    variance = body["runs"]["variance"]
    k = bed.NormalDist().inv_cdf(0.975) + bed.NormalDist().inv_cdf(0.8)
    budget = body["gap"] ** 2 / k ** 2
    assert budget > variance["items"]
    runs = math.ceil((variance["runs_a"] + variance["runs_b"]) / (budget - variance["items"]) * 2)
    act = next(line for line in out.splitlines() if line.startswith("to act on it"))
    assert f"would take about {runs:,} runs per system at these items" in act
    assert runs == 9


def test_no_gap_in_runs_says_so_in_the_act_plan(tmp_path):
    path = runs_csv(tmp_path, ((0.60, 0.70), (0.70, 0.60)))
    status, out, err = cli("compare", path, "--systems", "a,b", "--run-col", "seed",
                           "--resamples", "300")
    assert status == 0, err
    act = next(line for line in out.splitlines() if line.startswith("to act on it"))
    assert act.startswith("to act on it: with 80% power these 1,000 items and 2+2 runs detect")
    assert act.endswith("; the observed gap is 0")


@pytest.fixture
def ledger_line(tmp_path):
    """One valid ledger entry, as a dict, made by a real run."""
    ledger = tmp_path / "made.jsonl"
    status, _, err = cli("compare", clear_gap_csv(tmp_path), "--a-col", "a", "--b-col", "b",
                         "--ledger", str(ledger), *FAST)
    assert status == 0, err
    return json.loads(ledger.read_text())


@pytest.mark.parametrize("change,fragment", [
    ({"baseline": 5}, "field baseline is not text"),
    ({"time": None}, "field time is not text"),
    ({"time": "9999-99-99"}, "field time is not a UTC time as the tool writes it"),
    ({"time": "2026-12-03 10:00"}, "field time is not a UTC time as the tool writes it"),
    ({"time": "2026-01-31T12:00:61Z"}, "field time is not a UTC time as the tool writes it"),
    ({"time": "2026-01-31t12:00:00z"}, "field time is not a UTC time as the tool writes it"),
    ({"time": "2026-1-5T1:2:3Z"}, "field time is not a UTC time as the tool writes it"),
    ({"test_set": "abc123"}, "field test_set is not a SHA-256"),
    ({"verdict": "great"}, "field verdict is not one of "),
    ({"interval": [0.1]}, "field interval is not two finite numbers, low then high"),
    ({"interval": [0.2, 0.1]}, "field interval is not two finite numbers, low then high"),
    ({"interval": ["x", 0.1]}, "field interval is not two finite numbers, low then high"),
    ({"interval": 0.1}, "field interval is not two finite numbers, low then high"),
    ({"percent": "yes"}, "field percent is not true or false"),
    ({"n": 10 ** 400}, "field n is not a valid number"),
    ({"gap": -10 ** 400}, "field gap is not a valid number"),
    ({"interval": [0, 10 ** 400]}, "field interval is not two finite numbers, low then high"),
])
def test_a_ledger_entry_with_a_bad_field_is_named_and_left_alone(tmp_path, ledger_line, change,
                                                                 fragment):
    ledger = tmp_path / "evals.jsonl"
    ledger.write_text(json.dumps({**ledger_line, **change}) + "\n")
    before = ledger.read_bytes()
    assert_one_line_error(*cli("ledger", str(ledger)), f"evals.jsonl line 1: {fragment}")
    assert ledger.read_bytes() == before


def test_a_ledger_entry_with_nan_is_not_json(tmp_path, ledger_line):
    ledger = tmp_path / "evals.jsonl"
    good = json.dumps(ledger_line)
    ledger.write_text(good + "\n" + good.replace(f'"p": {json.dumps(ledger_line["p"])}',
                                                 '"p": NaN') + "\n")
    assert "NaN" in ledger.read_text()
    assert_one_line_error(*cli("ledger", str(ledger)), "evals.jsonl line 2 is not JSON")


def test_a_missing_or_empty_ledger_has_no_summary(tmp_path):
    missing = tmp_path / "none.jsonl"
    assert_one_line_error(*cli("ledger", str(missing)), f"no ledger at {missing}")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert_one_line_error(*cli("ledger", str(empty)),
                          f"the ledger {empty} is empty: it holds no comparisons")


def test_a_ledger_symlink_loop_and_an_unopenable_ledger(tmp_path, ledger_line, monkeypatch):
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    assert_one_line_error(*cli("ledger", str(loop)),
                          "cannot read the ledger " + str(loop) + ": Too many levels of symbolic")
    ledger = tmp_path / "evals.jsonl"
    ledger.write_text(json.dumps(ledger_line) + "\n")
    real_open = open

    def refuse(path, *args, **kwargs):
        if os.fspath(path) == str(ledger):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(bed, "open", refuse, raising=False)
    assert_one_line_error(*cli("ledger", str(ledger)),
                          f"cannot read the ledger {ledger}: Permission denied")


def test_a_ledger_beyond_the_size_limit_is_refused(tmp_path, ledger_line, monkeypatch):
    ledger = tmp_path / "evals.jsonl"
    ledger.write_text((json.dumps(ledger_line) + "\n") * 3)
    assert cli("ledger", str(ledger))[0] == 0
    monkeypatch.setattr(bed, "MAX_LEDGER_BYTES", ledger.stat().st_size - 1)
    assert_one_line_error(*cli("ledger", str(ledger)), f"the ledger {ledger} is larger than 1 GiB")


@pytest.mark.parametrize("failure,fragment", [
    ("open", "cannot append to the ledger {}: Permission denied"),
    ("lock", "cannot append to the ledger {}: No locks available"),
    ("reopen", "cannot open the ledger {}: Permission denied"),
    ("dup", "cannot append to the ledger {}: Too many open files"),
])
def test_a_ledger_that_cannot_be_opened_locked_or_appended_is_one_error(tmp_path, monkeypatch,
                                                                        failure, fragment):
    """Opening or locking the ledger fails before the report; its opening for the append or
    a descriptor after its lock, once the report is out: one error line, the ledger as it
    was."""
    data = clear_gap_csv(tmp_path)
    ledger = tmp_path / "evals.jsonl"
    assert cli("compare", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger),
               *FAST)[0] == 0
    before = ledger.read_bytes()
    if failure in ("open", "reopen"):
        real_open, flag = os.open, 0 if failure == "open" else os.O_CREAT    # the append's

        def fake(path, flags, *args, **kwargs):
            if os.fspath(path) == str(ledger) and (flags & flag or not flag):
                raise PermissionError(errno.EACCES, "Permission denied")
            return real_open(path, flags, *args, **kwargs)
        monkeypatch.setattr(os, "open", fake)
    elif failure == "lock":
        def fake(fd, operation):
            raise OSError(errno.ENOLCK, "No locks available")
        monkeypatch.setattr(fcntl, "flock", fake)
    else:
        def fake(fd):
            raise OSError(errno.EMFILE, "Too many open files")
        monkeypatch.setattr(os, "dup", fake)
    status, out, err = cli("compare", data, "--a-col", "a", "--b-col", "b", "--ledger",
                           str(ledger), *FAST)
    monkeypatch.undo()
    assert status == 2 and err.count("\n") == 1 and fragment.format(ledger) in err
    assert out == "" or failure in ("reopen", "dup")                 # before the report
    assert ledger.read_bytes() == before


def test_an_interrupt_while_appending_leaves_the_ledger_as_it_was(tmp_path, monkeypatch):
    data = clear_gap_csv(tmp_path)
    ledger = tmp_path / "evals.jsonl"
    assert cli("compare", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger),
               *FAST)[0] == 0
    before = ledger.read_bytes()
    real_write, calls = os.write, []

    def half_then_interrupt(fd, payload):
        calls.append(len(payload))
        if len(calls) == 1:
            return real_write(fd, payload[:len(payload) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", half_then_interrupt)
    status, _, err = cli("compare", data, "--a-col", "a", "--b-col", "b", "--ledger",
                         str(ledger), *FAST)
    monkeypatch.undo()
    assert (status, err) == (130, "bootstrap_eval_deltas: interrupted\n") and len(calls) == 2
    assert ledger.read_bytes() == before


@pytest.mark.parametrize("systems,text,z,p", [
    ({"x": [0.5, 0.7, 0.2, 0.9] * 10, "y": [0.4, 0.6, 0.1, 0.8] * 10,
      "z": [0.3, 0.1, 0.6, 0.2] * 10},
     "to separate the top two (x, y): every item scores them the same distance apart, so any "
     "number of items does", math.inf, 0.0),
    ({"x": [0.5, 0.7, 0.2, 0.9] * 10, "y": [0.5, 0.7, 0.2, 0.9] * 10,
      "z": [0.3, 0.1, 0.6, 0.2] * 10},
     "to separate the top two (x, y): they score the same here, which no number of items can "
     "tell apart", 0.0, 1.0),
])
def test_the_leaderboards_top_two_that_no_plan_separates(systems, text, z, p):
    result = bed.leaderboard(systems)
    assert text in str(result).splitlines()
    pair = next(p for p in result.board.pairs if {p.first, p.second} == {"x", "y"})
    assert (pair.test.z, pair.test.p) == (z, p)


TOPICS = os.path.join(EXAMPLES, "topics.csv")    # geo (80 items) loses 25 points, tiny has 6


def test_by_names_the_slice_that_regressed_inside_a_better_average():
    path = TOPICS
    argv = ["compare", path, "--a-col", "base", "--b-col", "tuned", "--by", "topic"]
    status, out, err = cli(*argv, "--gate")
    assert status == 1, err                        # overall better; geo shown worse: fails
    assert out.startswith("worse in 1 slice(s) of topic (99.44% simultaneous): geo -25.0 pts "
                          "[-41.2, -8.8] pts\ngate over the slices: FAIL: 1 slice(s) shown "
                          "worse than the margin by their simultaneous intervals (geo)\n"
                          "overall over all 2,186 items")
    assert "verdict: better." in out.splitlines()[3]
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")
            and len(line.split()) > 8 and line.split()[1].replace(",", "").isdigit()}
    assert rows["geo"].endswith("worse") and "-25.0 pts" in rows["geo"]
    assert rows["tiny"].endswith("too small")
    assert not any(row.endswith("worse") for topic, row in rows.items() if topic != "geo")
    assert "too small to judge: tiny (6 items)" in out and "it would take 9 items" in out
    body = json.loads(cli(*argv, "--gate", "--output", "json")[1])
    assert body["by"] == "topic" and body["gate_passed"] is False
    assert body["regressed"] == [{"slice": "geo", "candidate": "tuned"}]
    assert [t["too_small"] for t in body["tasks"]] == [None] * 8 + [9]
    status, out, _ = cli(*argv, "--output", "markdown")
    assert status == 0 and "| topic | items |" in out
    with open(path) as f:
        rows = list(csv.DictReader(f))
    result = bed.compare([int(r["base"]) for r in rows], [int(r["tuned"]) for r in rows],
                         by=[r["topic"] for r in rows], gate=True)
    assert result.passed is False and result.verdict == "better"
    assert bed.compare(path, a_col="base", b_col="tuned", by="topic").verdict == "better"


@pytest.mark.parametrize("argv, fragment", [
    (["--by", "topic", "--strata-col", "topic"], "--by makes each slice a stratum"),
    (["--by", "nope"], "nope"),
])
def test_by_refusals_are_one_line(argv, fragment):
    assert_one_line_error(*cli("compare", TOPICS, "--a-col", "base", "--b-col", "tuned", *argv),
                          fragment)


@pytest.mark.parametrize("argv, fragment", [
    (["compare", os.path.join(EXAMPLES, "lm-eval", "main", "acme__base"),
      os.path.join(EXAMPLES, "lm-eval", "main", "acme__tuned"), "--by", "doc.subject"],
     "--by names a column of a file of scores; harness logs have no such column"),
])
def test_by_where_it_does_not_apply_yet_is_refused(argv, fragment):
    assert_one_line_error(*cli(*argv), fragment)


def test_a_slice_of_one_item_is_refused_naming_it(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("item,topic,a,b\n" + "".join(
        f"{i},{'solo' if i == 0 else 'x'},{i % 2},{i // 2 % 2}\n" for i in range(40)))
    assert_one_line_error(*cli("compare", str(path), "--a-col", "a", "--b-col", "b", "--by",
                               "topic"), "1 slice(s) of 'topic' hold one item (first: 'solo')")


def test_by_from_python_takes_labels_or_refuses_a_column_name():
    with pytest.raises(bed.ToolError, match="by names a column of a file"):
        bed.compare([1, 0] * 20, [1, 1] * 20, by="topic")
    with pytest.raises(bed.ToolError, match="give strata or by, not both"):
        bed.compare([1, 0] * 20, [1, 1] * 20, by=["x", "y"] * 20, strata=["x", "y"] * 20)


def test_leaderboard_by_gives_every_system_in_every_slice():
    """Each system's score and its Wilson interval per slice, beside the overall board."""
    status, out, err = cli("leaderboard", TOPICS, "--systems", "base,tuned", "--by", "topic")
    assert status == 0, err
    assert "by topic: each system's score and its 95% interval in each slice" in out
    geo = next(line for line in out.splitlines() if line.startswith("  geo "))
    assert geo.split() == ["geo", "80", "0.450", "[0.346,", "0.559]", "0.700", "[0.592,",
                           "0.789]"]
    assert "over 9 slices as strata" in out
    body = json.loads(cli("leaderboard", TOPICS, "--systems", "base,tuned", "--by", "topic",
                          "--output", "json")[1])
    geo = next(s for s in body["slices"] if s["slice"] == "geo")
    lo, hi = wilson(36, 80)
    tuned = next(score for score in geo["scores"] if score["system"] == "tuned")
    assert geo["items"] == 80 and tuned["interval"] == pytest.approx([lo, hi])
    with open(TOPICS) as f:
        rows = list(csv.DictReader(f))
    board = bed.leaderboard({"base": [int(r["base"]) for r in rows],
                             "tuned": [int(r["tuned"]) for r in rows]},
                            by=[r["topic"] for r in rows])
    assert board.to_dict()["slices"] == body["slices"]


def test_by_with_plot_draws_each_slices_gap(tmp_path):
    """--plot was taken and nothing written for tasks and slices; now a forest plot of the
    gaps, one row per slice, written only after the report."""
    picture = tmp_path / "slices.svg"
    status, out, err = cli("compare", TOPICS, "--a-col", "base", "--b-col", "tuned", "--by",
                           "topic", "--plot", str(picture))
    assert status == 0, err
    text = picture.read_text()
    assert text.count("<circle") == 9 and "geo (80)" in text and ">worse</text>" in text
    assert "gap B - A per slice, 99.44% simultaneous intervals" in text
    import xml.dom.minidom
    xml.dom.minidom.parseString(text)


def test_lower_is_better_turns_the_scores_so_a_positive_gap_is_an_improvement(tmp_path):
    """Error indicators (0/1) compare as successes (1 - score: still exact and McNemar);
    latencies compare negated; a leaderboard puts the lowest first; a flag contradicting
    an lm-eval log's recorded direction is refused, and one that records none turned."""
    path = tmp_path / "errors.csv"
    a, b = [0, 1, 0, 0, 1, 0, 0, 0] * 20, [0, 0, 0, 0, 1, 0, 0, 0] * 20
    path.write_text("item,base,tuned\n" + "".join(f"{i},{x},{y}\n" for i, (x, y) in
                                                  enumerate(zip(a, b))))
    status, out, err = cli("compare", str(path), "--systems", "base,tuned", "--lower-is-better")
    assert status == 0, err
    assert out.startswith("verdict: better.") and "McNemar" in out
    assert "lower is better, as asked: each score compared as 1 - score" in out
    assert bed.compare(a, b).verdict == "worse"
    latency = bed.compare([1.2, 3.4, 2.2, 5.0] * 15, [1.0, 3.0, 2.1, 4.0] * 15,
                          lower_is_better=True)
    assert latency.verdict == "better" and latency.gap > 0
    board = bed.leaderboard({"base": a, "tuned": b}, lower_is_better=True).board
    assert [s.system for s in board.standings] == ["tuned", "base"]
    logs = [os.path.join(EXAMPLES, "lm-eval", "main", name) for name in ("acme__base",
                                                                         "acme__tuned")]
    assert_one_line_error(*cli("compare", *logs, "--lower-is-better", "--metric",
                               "acc,exact_match", "--filter", "strict-match"),
                          "results file says higher exact_match is better (higher_is_better), "
                          "which --lower-is-better contradicts")
    for name, folder in zip("ab", logs):        # samples without a results file say no direction
        (tmp_path / name).mkdir()
        shutil.copy(glob.glob(os.path.join(folder, "samples_mc_capitals_*.jsonl"))[0],
                    tmp_path / name)
    samples = [glob.glob(str(tmp_path / name / "*.jsonl"))[0] for name in "ab"]
    turned, plain = (cli_json("compare", *samples, *flags, "--metric", "acc", "--calibration",
                              "0") for flags in (["--lower-is-better"], []))
    assert turned["comparisons"][0]["gap"] == -plain["comparisons"][0]["gap"] != 0
    assert "lower acc is better, as asked: compared as 1 - acc" in \
        turned["input"]["dropped_note"]             # 0/1 stays 0/1, as a file's scores do
    assert {k: round(1 - v, 6) for k, v in plain["comparisons"][0]["accuracy"].items()} == \
        {k: round(v, 6) for k, v in turned["comparisons"][0]["accuracy"].items()}
    assert turned["comparisons"][0]["mcnemar"] is not None
    inspect_logs = [os.path.join(EXAMPLES, "inspect", "pair_json", name) for name in
                    sorted(os.listdir(os.path.join(EXAMPLES, "inspect", "pair_json")))]
    errors, rates = (cli_json("compare", *inspect_logs, *flags, "--calibration", "0")
                     for flags in (["--lower-is-better"], []))    # Inspect says no direction
    assert errors["comparisons"][0]["gap"] == -rates["comparisons"][0]["gap"] != 0
    assert "lower is better, as asked" in errors["input"]["dropped_note"]


# --- Confusion-matrix metrics (issue 30): NumPy's item-level paired bootstrap as oracle ---

def _numpy_metric_bootstrap(labels, a, b, metric, resamples, seed=11):
    """Percentile ends of A's, B's and the paired gap's *metric* over *resamples* NumPy
    resamples of the items (indices drawn with replacement), in chunks."""
    np = pytest.importorskip("numpy")
    y, pa, pb = map(np.array, (labels, a, b))
    classes = sorted(set(labels) | set(a) | set(b))
    n, rng, out = len(labels), np.random.default_rng(seed), {"a": [], "b": [], "paired": []}

    def value(yy, pp):
        true = np.stack([np.sum(yy == k, axis=1) for k in classes])
        pred = np.stack([np.sum(pp == k, axis=1) for k in classes])
        tp = np.stack([np.sum((yy == k) & (pp == k), axis=1) for k in classes])
        if metric == "macro-f1":
            seen = true + pred > 0          # the labels' and this system's classes
            return np.sum(np.where(seen, 2 * tp / np.maximum(true + pred, 1), 0),
                          axis=0) / np.sum(seen, axis=0)
        if metric == "mcc":
            right, size = tp.sum(axis=0), yy.shape[1]
            chance = np.sum(true * pred, axis=0)
            spread = (size ** 2 - np.sum(true ** 2, axis=0)) * \
                (size ** 2 - np.sum(pred ** 2, axis=0))
            return np.where(spread > 0, (size * right - chance) /
                            np.sqrt(np.maximum(spread, 1)), 0)
        raise AssertionError(metric)

    for start in range(0, resamples, 20000):
        idx = rng.integers(0, n, (min(20000, resamples - start), n))
        va, vb = value(y[idx], pa[idx]), value(y[idx], pb[idx])
        out["a"].append(va)
        out["b"].append(vb)
        out["paired"].append(vb - va)
    return {name: np.quantile(np.concatenate(values), [0.025, 0.975])
            for name, values in out.items()}


@pytest.mark.once
@pytest.mark.parametrize("metric, classes", [("macro-f1", 3), ("mcc", 2)])
def test_metric_intervals_equal_a_numpy_item_bootstrap_to_one_percent_of_the_width(
        metric, classes):
    rng = random.Random(classes)
    labels = [rng.randrange(classes) for _ in range(300)]
    a = [y if rng.random() < 0.7 else rng.randrange(classes) for y in labels]
    b = [y if rng.random() < 0.8 or x == y else rng.randrange(classes)
         for y, x in zip(labels, a)]
    confusions = bed.Confusions.of(labels, a, b)
    analysis = bed.analyze_metric(confusions, random.Random(5), metric=metric,
                                  resamples=60000, permutations=200)
    truth = _numpy_metric_bootstrap(labels, a, b, metric, 200000)
    for name, ours in (("a", analysis.ci_a), ("b", analysis.ci_b),
                       ("paired", analysis.paired)):
        lo, hi = truth[name]
        assert abs(float(ours.lo) - lo) < 0.01 * (hi - lo), name
        assert abs(float(ours.hi) - hi) < 0.01 * (hi - lo), name
    assert analysis.metric == metric and analysis.percent == (metric != "mcc")


def test_analyze_metric_reports_the_gap_its_test_and_refuses_what_does_not_apply():
    rng = random.Random(2)
    labels = [rng.randrange(2) for _ in range(200)]
    a = [y if rng.random() < 0.6 else 1 - y for y in labels]
    b = [y if rng.random() < 0.9 else 1 - y for y in labels]
    confusions = bed.Confusions.of(labels, a, b)
    analysis = bed.analyze_metric(confusions, random.Random(1), metric="f1", positive=1)
    assert analysis.gap == analysis.accuracy_b - analysis.accuracy_a > 0
    assert analysis.paired.lo > 0 and analysis.p < 0.001
    assert analysis.resamples == bed.RESAMPLES and "F1 recomputed" in analysis.notes[0]
    bca = bed.analyze_metric(confusions, random.Random(1), metric="f1", positive=1,
                             interval="bca")
    assert bca.rules["paired"] == "bca" and bca.paired != analysis.paired
    for options, words in (({"metric": "f1"}, "name it with positive"),
                           ({"metric": "auc"}, "metric must be one of"),
                           ({"metric": "mcc", "interval": "score"}, "percentile, basic or bca")):
        with pytest.raises(bed.ToolError, match=words):
            bed.analyze_metric(confusions, random.Random(1), **options)


def test_within_classes_holds_each_labels_count_in_every_resample():
    labels = [0] * 30 + [1] * 20
    a = [0] * 30 + [0] * 20                 # right on every 0, wrong on every 1: 30/50
    b = [0] * 25 + [1] * 5 + [1] * 20
    confusions = bed.Confusions.of(labels, a, b)
    held = bed.analyze_metric(confusions, random.Random(1), metric="accuracy",
                              within_classes=True)
    free = bed.analyze_metric(confusions, random.Random(1), metric="accuracy")
    assert held.ci_a.lo == held.ci_a.hi == Fraction(3, 5)     # the 30 zeros stay 30
    assert free.ci_a.lo < Fraction(3, 5) < free.ci_a.hi
    assert "within each label" in held.notes[0] and "within" not in free.notes[0]


def _predictions_table(n=1500, qualities=(0.7, 0.74, 0.8, 0.5), seed=4):
    rng = random.Random(seed)
    gold, columns = [], [[] for _ in qualities]
    for _ in range(n):
        y = rng.choice("abcd")
        gold.append(y)
        for column, q in zip(columns, qualities):
            column.append(y if rng.random() < q else rng.choice("abcd"))
    names = tuple(f"s{i}" for i in range(len(qualities)))
    return bed.Table(names, tuple(map(tuple, columns)), tuple(range(n)), (), gold=tuple(gold))


@pytest.mark.parametrize("metric", ["macro-f1", "mcc"])
def test_leaderboard_of_predictions_ranks_the_metric_with_bootstrap_covariance(metric):
    """Each system's value is scikit-learn's; each pair's joint interval is the max-|t| one
    on the resampled covariance, whose gap variance matches the pair's own paired
    bootstrap (analyze_metric) within Monte Carlo error; the pair's test swaps predictions."""
    sk = pytest.importorskip("sklearn.metrics")
    table = _predictions_table()
    board = bed.rank_systems(table, random.Random(1), metric=metric)
    assert board.metric == metric and board.percent == (metric != "mcc")
    for standing in board.standings:
        column = table.columns[table.systems.index(standing.system)]
        truth = sk.f1_score(table.gold, column, average="macro") if metric == "macro-f1" \
            else sk.matthews_corrcoef(table.gold, column)
        assert float(standing.score) == pytest.approx(truth, abs=1e-12)
    assert [s.system for s in board.standings] == ["s2", "s1", "s0", "s3"]
    pair = board.pair("s1", "s0")
    pairwise = bed.analyze_metric(bed.Confusions.of(table.gold, table.columns[0],
                                                    table.columns[1]),
                                  random.Random(2), metric=metric, resamples=4000)
    half = float(pair.interval.hi - pair.interval.lo) / 2 / board.critical
    sd = float(pairwise.paired.hi - pairwise.paired.lo) / 2 / 1.96
    assert half == pytest.approx(sd, rel=0.12)
    assert pair.test.swaps and pair.test.name == "prediction-swap permutation (Monte Carlo)"


@pytest.mark.simulation
def test_slices_with_no_true_gap_call_some_slice_better_or_worse_in_at_most_5_percent():
    """200 files of 20 equal slices of 50 items, A and B the same 0/1 system in truth: the
    share of files where any slice is called better or worse is the familywise error of the
    slice table, at most 5% + 2 Monte Carlo s.e. (issue 29)."""
    rng, files, flagged = random.Random(29), 200, 0
    for _ in range(files):
        truth = [rng.random() < 0.7 for _ in range(1000)]
        a = [int(t if rng.random() < 0.8 else rng.random() < 0.7) for t in truth]
        b = [int(t if rng.random() < 0.8 else rng.random() < 0.7) for t in truth]
        body = bed.compare(a, b, by=[f"s{i % 20}" for i in range(1000)], calibration=0,
                           seed=rng.randrange(10 ** 6)).to_dict()
        flagged += any(t["comparisons"][0]["verdict"] in ("better", "worse")
                       for t in body["tasks"])
    rate = flagged / files
    print(f"files with a slice called better or worse: {flagged}/{files} = {rate:.3f}")
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / files)


def test_a_systems_macro_f1_is_the_same_whatever_the_other_systems_predict():
    """Macro-F1 averages the classes in the labels or this system's predictions (scikit-learn's
    default), so a class only another system predicts leaves it alone: pairwise, per class,
    on a leaderboard (a review's case: a third system predicting "z")."""
    sk = pytest.importorskip("sklearn.metrics")
    gold = tuple("ab" * 100)
    a = tuple(x if i % 5 else "b" for i, x in enumerate(gold))
    c = tuple(x if i % 7 else "z" for i, x in enumerate(gold))
    truth = {name: sk.f1_score(gold, column, average="macro") for name, column in
             (("A", a), ("C", c))}
    table = bed.Table(("A", "B", "C"), (a, a, c), tuple(range(200)), (), gold=gold)
    board = bed.rank_systems(table, random.Random(1), metric="macro-f1", resamples=50,
                             permutations=50)
    assert {s.system: float(s.score) for s in board.standings} == pytest.approx(
        {"A": truth["A"], "B": truth["A"], "C": truth["C"]}, abs=1e-12)
    pooled = bed.compare_classes(table, random.Random(1), resamples=50, permutations=50).pooled
    assert [float(p.analysis.accuracy_a) for p in pooled] == pytest.approx([truth["A"]] * 2)
    assert float(pooled[1].analysis.accuracy_b) == pytest.approx(truth["C"], abs=1e-12)
    rows = bed.compare_classes(table, random.Random(1), resamples=50, permutations=50).tasks
    assert [t.task for t in rows] == ["a", "b"]            # classes of the labels only


def test_metrics_refuse_one_resample_and_compare_classes_an_unaveraged_metric():
    table = _predictions_table(n=100)
    with pytest.raises(bed.ToolError, match="need resamples of 2 or more"):
        bed.rank_systems(table, random.Random(1), metric="mcc", resamples=1)
    with pytest.raises(bed.ToolError, match="need resamples of 2 or more"):
        bed.analyze_metric(bed.Confusions.of(table.gold, *table.columns[:2]),
                           random.Random(1), metric="mcc", resamples=1)
    with pytest.raises(bed.ToolError, match="a metric that averages the classes"):
        bed.compare_classes(table, random.Random(1), metric="f1")


def test_a_positive_class_no_item_has_gives_0_and_a_misspelt_one_is_refused(tmp_path):
    """--positive a class absent from a slice: its F1 is 0 there (scikit-learn's
    zero_division=0); a class absent from the whole file is a typo, refused."""
    path = tmp_path / "p.csv"
    path.write_text("item,gold,a,b,part\n" + "".join(
        f"{i},{g},{x},{y},{'x' if i < 4 else 'y'}\n"
        for i, (g, x, y) in enumerate(zip("aaaabbbb", "aaaabbbb", "aaabbbbb"))))
    body = cli_json("compare", str(path), "--label-col", "gold", "--metric", "f1",
                    "--positive", "a", "--by", "part", "--permutations", "100")
    assert [t["comparisons"][0]["accuracy"] for t in body["tasks"]][1] == {"a": 0, "b": 0}
    assert_one_line_error(*cli("compare", str(path), "--label-col", "gold", "--metric", "f1",
                               "--positive", "q"), "--positive 'q' is not a class of the labels")


def test_many_classes_skip_the_per_class_table_and_many_cells_are_drawn_in_chunks(
        tmp_path, monkeypatch):
    """Over _MAX_CLASS_ROWS classes the per-class table is left out, with a note that says
    how to compare one class; past _CELL_DRAWS cell counts the resamples and swaps are drawn
    in chunks (memory bounded), with the same distribution."""
    table = _predictions_table(n=800)
    rows = ["item,gold," + ",".join(table.systems)] + [
        f"{i},{g}," + ",".join(column[i] for column in table.columns)
        for i, g in enumerate(table.gold)]
    path = tmp_path / "p.csv"
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(bed, "_MAX_CLASS_ROWS", 3)
    result = bed.compare(str(path), label_col="gold", systems=["s0", "s1"],
                         metric="macro-f1", permutations=500)
    assert "note: no per-class table: 4 classes in the labels (it is given for up to 3)" in \
        str(result) and "per class:" not in str(result)
    confusions = bed.Confusions.of(table.gold, table.columns[0], table.columns[1])
    whole = bed.analyze_metric(confusions, random.Random(3), metric="mcc", resamples=4000,
                               permutations=4000)
    monkeypatch.setattr(bed, "_CELL_DRAWS", 500)
    chunked = bed.analyze_metric(confusions, random.Random(3), metric="mcc", resamples=4000,
                                 permutations=4000)
    assert chunked.paired != whole.paired                   # drawn otherwise ...
    for got, want in ((chunked.paired.lo, whole.paired.lo), (chunked.paired.hi,
                                                            whole.paired.hi)):
        assert abs(float(got - want)) < 0.2 * float(whole.paired.hi - whole.paired.lo)
    assert abs(chunked.test.p - whole.test.p) < 5 * math.sqrt(whole.test.p / 4000) + 0.002


# --- Battles: two systems' win rate, Bradley-Terry boards ---

def random_arena(rng, ratings, prompts, per_prompt=1, tie=0.0):
    """Battles among systems with the given true log-odds ratings (Davidson's ties at nu)."""
    records, k = [], len(ratings)
    for q in range(prompts):
        for _ in range(per_prompt):
            i, j = rng.sample(range(k), 2)
            a, b = math.exp(ratings[i]), math.exp(ratings[j])
            c = tie * math.sqrt(a * b)
            u = rng.random() * (a + b + c)
            share = 1 if u < a else 0 if u < a + b else Fraction(1, 2)
            records.append((q, f"s{i}", f"s{j}", share))
    return bed.battles(records)


def logistic_oracle(data, groups, intercept=False):
    """statsmodels' logistic regression of the battles' shares on +1 for the first system and
    -1 for the second (the anchor, system 0, left out), an intercept for the first position
    if asked; its covariance cluster-robust over *groups* without a small-sample correction."""
    sm = pytest.importorskip("statsmodels.api")
    np = pytest.importorskip("numpy")
    k = len(data.systems)
    x = np.zeros((data.n, k - 1 + intercept))
    if intercept:
        x[:, k - 1] = 1.0
    for row, (i, j) in enumerate(zip(data.first, data.second)):
        if i:
            x[row, i - 1] += 1
        if j:
            x[row, j - 1] -= 1
    y = np.array([float(s) for s in data.shares])
    return sm.GLM(y, x, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}, tol=1e-12)


def test_bradley_terry_without_ties_is_choix_maximum_likelihood():
    choix = pytest.importorskip("choix")
    data = random_arena(random.Random(3), [0.0, 0.4, -0.3, 1.0, 0.2], 3000)
    fit = bed.bradley_terry(data)
    order = [int(name[1:]) for name in data.systems]
    wins = [(order[i], order[j]) if s == 1 else (order[j], order[i])
            for i, j, s in zip(data.first, data.second, data.shares)]
    params = choix.opt_pairwise(5, wins, alpha=0, method="Newton-CG", tol=1e-14)
    for s, rating in enumerate(fit.ratings):
        assert rating == pytest.approx(params[order[s]] - params[order[0]], abs=1e-6)
    assert fit.tie is None and fit.ratings[0] == 0


def test_davidson_ties_are_the_maximum_of_davidsons_likelihood():
    optimize = pytest.importorskip("scipy.optimize")
    np = pytest.importorskip("numpy")
    data = random_arena(random.Random(4), [0.0, 0.5, -0.5, 0.9], 2000, tie=0.8)
    fit = bed.bradley_terry(data)
    first, second = np.array(data.first), np.array(data.second)
    share = np.array([float(s) for s in data.shares])

    def minus_loglik(x):
        theta = np.concatenate([[0.0], x[:-1]])
        a, b = np.exp(theta[first]), np.exp(theta[second])
        c = np.exp(x[-1] + (theta[first] + theta[second]) / 2)
        d = a + b + c
        p = np.where(share == 1, a / d, np.where(share == 0, b / d, c / d))
        return -np.log(p).sum()
    best = optimize.minimize(minus_loglik, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    assert list(fit.ratings[1:]) == pytest.approx(list(best.x[:-1]), abs=1e-6)
    assert math.log(fit.tie) == pytest.approx(best.x[-1], abs=1e-6)


def test_bradley_terry_covariance_is_statsmodels_cluster_robust_logistic():
    np = pytest.importorskip("numpy")
    data = random_arena(random.Random(5), [0.0, 0.6, -0.4], 400, per_prompt=3)
    fit = bed.bradley_terry(data)
    model = logistic_oracle(data, np.array([hash(p) % (1 << 31) for p in data.prompts]))
    assert list(fit.ratings[1:]) == pytest.approx(list(model.params), abs=1e-7)
    cov = np.array(fit.covariance)[1:, 1:]
    assert cov == pytest.approx(model.cov_params(), rel=1e-6)
    assert fit.prompts == 400


def test_ratings_without_a_finite_maximum_are_refused_in_one_line():
    apart = bed.battles([(1, "a", "b", 1), (2, "b", "a", 1), (3, "c", "d", 1), (4, "d", "c", 0)])
    with pytest.raises(bed.ToolError, match="groups that never met"):
        bed.bradley_terry(apart)
    unbeaten = bed.battles([(1, "a", "b", 1), (2, "b", "c", 1), (3, "c", "b", 1),
                            (4, "a", "c", 1)])
    with pytest.raises(bed.ToolError, match="'a' never lost a battle"):
        bed.bradley_terry(unbeaten)
    tied = bed.battles([(1, "a", "b", Fraction(1, 2)), (2, "b", "c", 1), (3, "c", "b", 1)])
    assert bed.bradley_terry(tied).tie is not None             # a tie counts both ways


def test_two_systems_battles_give_the_win_rate_and_the_exact_sign_test():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(6)
    records = [(q, "base", "new", rng.choice([0, 0, 1, Fraction(1, 2)])) for q in range(120)]
    result = bed.compare(bed.battles(records), calibration=0)
    new_wins = sum(r[3] == 0 for r in records)
    base_wins = sum(r[3] == 1 for r in records)
    ties = 120 - new_wins - base_wins
    body = result.to_dict()["battles"]
    assert body["wins"] == {"a": base_wins, "b": new_wins} and body["ties"] == ties
    assert body["win_rate"] == pytest.approx((new_wins + ties / 2) / 120)
    assert result.gap == Fraction(new_wins - base_wins, 120)
    assert result.method == "exact bootstrap (B = infinity)"
    sign = stats.binomtest(new_wins, new_wins + base_wins, 0.5).pvalue
    assert result.p == pytest.approx(sign, rel=1e-9)
    lo, hi = stats.binomtest(new_wins, new_wins + base_wins).proportion_ci(0.95, "exact")
    assert body["decisive_ci"] == pytest.approx([lo, hi], rel=1e-9)
    assert body["win_rate_ci"] == [float((1 + result.interval.lo) / 2),
                                   float((1 + result.interval.hi) / 2)]


@pytest.mark.simulation
@pytest.mark.parametrize("prompts", [100, 1000])
def test_win_rate_interval_covers_at_its_level(prompts):
    """Battles of one prompt in both orders (a cluster); true win rate 0.55 with ties."""
    rng, hits, replays = random.Random(prompts), 0, 400
    for _ in range(replays):
        records = []
        for q in range(prompts):
            for order in (0, 1):
                u = rng.random()
                s = 1 if u < 0.45 else Fraction(1, 2) if u < 0.65 else 0     # new's share
                records.append((q, "base", "new", 1 - s) if order else (q, "new", "base", s))
        result = bed.compare(bed.battles(records), systems=["base", "new"], calibration=0,
                             seed=rng.randrange(1 << 30))
        hits += result.interval.lo <= Fraction(1, 10) <= result.interval.hi   # 2 * 0.55 - 1
    se = math.sqrt(0.95 * 0.05 / replays)
    assert abs(hits / replays - 0.95) < 3 * se + 0.01, hits


@pytest.mark.simulation
def test_joint_rank_intervals_hold_for_every_system_in_simulated_arenas():
    truth = [0.0, 0.25, 0.5, 0.8, -0.3, 0.55]
    true_rank = {f"s{i}": 1 + sum(t > v for t in truth) for i, v in enumerate(truth)}
    rng, held, arenas = random.Random(7), 0, 200
    for _ in range(arenas):
        data = random_arena(rng, truth, 1500, tie=0.5)
        board = bed.rank_battles(data, random.Random(rng.randrange(1 << 30)), draws=2000)
        held += all(s.ranks[0] <= true_rank[s.system] <= s.ranks[1] for s in board.standings)
    assert held >= 0.95 * arenas, held


def test_newton_halves_its_step_on_lopsided_battles_and_any_anchor_gives_the_same_gaps():
    records = [(q, "a", "b", int(q % 50 != 0)) for q in range(200)]
    records += [(q, "b", "c", int(q % 4 != 0)) for q in range(200, 300)]
    records += [(q, "c", "a", int(q % 25 == 0)) for q in range(300, 400)]
    data = bed.battles(records)
    first, second = bed.bradley_terry(data), bed.bradley_terry(data, anchor=2)
    gaps = [r - first.ratings[2] for r in first.ratings]
    assert list(second.ratings) == pytest.approx(gaps, abs=1e-9)
    assert second.covariance[0][0] == pytest.approx(
        first.covariance[0][0] + first.covariance[2][2] - 2 * first.covariance[0][2], rel=1e-6)
    assert first.steps > 3 and first.ratings[0] - first.ratings[1] > 3


def test_battle_boards_refuse_what_they_cannot_rank():
    many = bed.battles([(k, f"s{k}", f"s{k + 1}", Fraction(1, 2)) for k in range(200)])
    with pytest.raises(bed.ToolError, match="2 to 200 systems, got 201"):
        bed.rank_battles(many, random.Random(1))
    two = bed.battles([(1, "a", "b", 1), (2, "b", "a", Fraction(1, 2))])
    with pytest.raises(bed.ToolError, match="scale is one of logit, elo"):
        bed.rank_battles(two, random.Random(1), scale="glicko")
    with pytest.raises(bed.ToolError, match="outside|not within"):
        bed.battles([(1, "a", "b", 2)])
    assert repr(two) == "Battles(systems=('a', 'b'), battles=2, prompts=2, kind='battles')"
    with pytest.raises(bed.ToolError, match="1 battle\\(s\\) between 'a' and 'c'"):
        bed.battle_table(bed.battles([(1, "a", "b", 1), (2, "a", "c", 0)]), ["a", "c"])


def test_judges_probabilities_compare_as_shares_and_all_ties_say_so():
    shares = [Fraction(k % 7, 6) for k in range(60)]
    result = bed.compare(bed.battles([(k, "base", "new", s) for k, s in enumerate(shares)]),
                         calibration=0)
    body = result.to_dict()["battles"]
    assert "wins" not in body and body["win_rate"] == pytest.approx(1 - float(sum(shares)) / 60)
    assert "judged as probabilities" in str(result)
    ties = bed.compare(bed.battles([(k, "a", "b", Fraction(1, 2)) for k in range(40)]),
                       calibration=0)
    assert ties.verdict == "cannot tell" and ties.to_dict()["battles"]["decisive"] == 0
    assert "of the 0 decisive" not in str(ties)


# --- A judge on every item, people on a few: prediction-powered inference ---

def judged_data(n_labels, n_items, seed, flip=0.15, lift=0.2, rare=None):
    """Two systems scored 0/1 by people (accuracy 0.70 and 0.74) and by a judge that agrees
    with them 1 - flip of the time and turns some of B's failures into passes (its bias);
    ``rare``: people's scores of A and B differ on only that share of items."""
    rng = random.Random(seed)
    columns = [[], [], [], []]
    for item in range(n_items):
        a = int(rng.random() < 0.70)
        b = a if rare is not None and rng.random() > rare else int(rng.random() < 0.74)
        ja = a if rng.random() > flip else 1 - a
        jb = b if rng.random() > flip else 1 - b
        jb = 1 if jb == 0 and rng.random() < lift else jb
        labelled = item < n_labels
        for column, value in zip(columns, (ja, jb, a if labelled else None,
                                           b if labelled else None)):
            column.append(value)
    source = bed.Source("<test>", "0" * 64, n_items, (), "judged")
    return bed.Judged(("a", "b"), tuple(map(tuple, columns[:2])),
                      tuple(map(tuple, columns[2:])), source)


@pytest.mark.parametrize("seed, tuning", [(1, None), (2, None), (3, 0.5), (4, 1.0), (5, 0.0)])
def test_ppi_mean_is_ppi_py(seed, tuning):
    ppi = pytest.importorskip("ppi_py")
    np = pytest.importorskip("numpy")
    rng = random.Random(seed)
    truth = [rng.gauss(0, 1) for _ in range(1200)]
    guess = [t + rng.gauss(0.3, 0.8) for t in truth]
    y, yhat, unlabelled = truth[:150], guess[:150], guess[150:]
    estimate, se, lam = bed.ppi_mean(y, yhat, unlabelled, tuning=tuning)
    z = NormalDist().inv_cdf(0.975)
    lo, hi = ppi.ppi_mean_ci(np.array(y), np.array(yhat), np.array(unlabelled), alpha=0.05,
                             lam=tuning)
    assert (estimate - z * se, estimate + z * se) == pytest.approx((lo[0], hi[0]), abs=1e-9)
    point = ppi.ppi_mean_pointestimate(np.array(y), np.array(yhat), np.array(unlabelled),
                                       lam=tuning)
    assert estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)


def test_judge_corrected_gap_is_ppi_py_on_the_paired_differences():
    ppi = pytest.importorskip("ppi_py")
    np = pytest.importorskip("numpy")
    data = judged_data(300, 3000, 11)
    result = bed.judge_corrected(data, random.Random(1), replays=0 or 10)
    (ja, jb), (ha, hb) = data.judge, data.human
    y = np.array([b - a for a, b in zip(ha[:300], hb[:300])], float)
    f = np.array([b - a for a, b in zip(ja, jb)], float)
    lo, hi = ppi.ppi_mean_ci(y, f[:300], f[300:], alpha=0.05)
    assert [float(result.interval.lo), float(result.interval.hi)] == pytest.approx(
        [lo[0], hi[0]], abs=1e-9)
    assert result.human[0] == pytest.approx(y.mean(), abs=1e-12)
    assert result.judge[0] == pytest.approx(f.mean(), abs=1e-12)
    assert result.bias[0] == pytest.approx((f[:300] - y).mean(), abs=1e-12)
    kind, agree, kappa = result.agreement[0]
    from sklearn.metrics import cohen_kappa_score
    assert kind == "kappa" and kappa == pytest.approx(cohen_kappa_score(ja[:300], ha[:300]))
    assert result.effective > 300 and 0 <= result.tuning <= 1


@pytest.mark.simulation
def test_the_corrected_interval_covers_where_the_judge_alone_does_not():
    """A judge that agrees 85% with people and lifts B by about 5 points: at 200 labels and
    5,000 items the PPI++ interval covers the people's gap (0.04) at its level."""
    rng, replays, corrected, judge_only = random.Random(12), 300, 0, 0
    for _ in range(replays):
        result = bed.judge_corrected(judged_data(200, 5000, rng.randrange(1 << 30)),
                                     random.Random(1), replays=1)
        corrected += result.interval.lo <= Fraction(4, 100) <= result.interval.hi
        judge_only += result.judge[1].lo <= Fraction(4, 100) <= result.judge[1].hi
    se = math.sqrt(0.95 * 0.05 / replays)
    assert abs(corrected / replays - 0.95) < 3 * se + 0.01, corrected
    assert judge_only / replays < 0.2, judge_only


def test_too_few_labels_for_the_normal_interval_are_warned_about():
    """People's gaps skewed (log-normal) and 30 labels: the normal interval falls short."""
    rng, n_items = random.Random(13), 3000
    people = [math.exp(rng.gauss(0, 1.5)) for _ in range(n_items)]
    judge = tuple(p + rng.gauss(0, 3) for p in people)
    data = bed.Judged(("a", "b"), ((0.0,) * n_items, judge),
                      (tuple(0.0 if k < 30 else None for k in range(n_items)),
                       tuple(p if k < 30 else None for k, p in enumerate(people))),
                      bed.Source("<test>", "0" * 64, n_items, (), "judged"))
    result = bed.judge_corrected(data, random.Random(2))
    assert result.coverage[0] < 0.9
    report = bed._JudgedReport({"seed": 1}, data.source, result, None, False)
    assert "warning: at 30 human labels the corrected interval covered" in "\n".join(
        bed._judged_document(report))
    fine = bed.judge_corrected(judged_data(400, 3000, 14), random.Random(2))
    assert abs(fine.coverage[0] - 0.95) < 0.025


def test_a_bootstrap_over_prompts_agrees_with_the_sandwich_covariance():
    data = random_arena(random.Random(21), [0.0, 0.5, -0.4, 0.9], 1500, per_prompt=2, tie=0.5)
    fit = bed.bradley_terry(data)
    covariance, left_out = bed._prompt_bootstrap(data, fit, random.Random(3), 400)
    assert left_out == 0
    for s in range(1, 4):          # 400 resamples: a variance within about 3 x 7%
        assert covariance[s][s] == pytest.approx(fit.covariance[s][s], rel=0.25)
    board = bed.rank_battles(data, random.Random(4), bootstrap=50, draws=500)
    assert "bootstrap covariance, 50 resamples" in board.design
    assert {p.test.name for p in board.pairs} == {"Wald z (bootstrap s.e.)"}
    lopsided = bed.battles([(k, "a", "b", int(k != 0)) for k in range(40)])
    board = bed.rank_battles(lopsided, random.Random(5), bootstrap=40)
    left = [w for w in board.warnings if "had no finite ratings and were left out" in w]
    assert left and 5 < int(left[0].split()[0]) < 25         # about 36% lack b's one win
    with pytest.raises(bed.ToolError, match="1 of 2 resamples of the prompts have no finite"):
        bed.rank_battles(lopsided, random.Random(1), bootstrap=2, draws=100)
    with pytest.raises(bed.ToolError, match="bootstrap takes 2 or more"):
        bed.rank_battles(lopsided, random.Random(5), bootstrap=1)


def test_a_position_term_is_logistic_regression_with_an_intercept():
    np = pytest.importorskip("numpy")
    rng, records = random.Random(8), []
    truth, favour = [0.0, 0.5, -0.4], 0.35
    for q in range(3000):
        i, j = rng.sample(range(3), 2)
        p = 1 / (1 + math.exp(truth[j] - truth[i] - favour))
        records.append((q, f"s{i}", f"s{j}", int(rng.random() < p)))
    data = bed.battles(records, positioned=True)
    fit = bed.bradley_terry(data, position=True)
    model = logistic_oracle(data, np.arange(data.n), intercept=True)
    assert list(fit.ratings[1:]) + [fit.position[0]] == pytest.approx(list(model.params),
                                                                       abs=1e-7)
    assert fit.position[1] == pytest.approx(math.sqrt(model.cov_params()[2, 2]), rel=1e-6)
    board = bed.rank_battles(data, random.Random(1), position=True, draws=500)
    assert "a position term: the first shown +0.3" in board.design
    with pytest.raises(bed.ToolError, match="position=True needs battles whose format"):
        bed.rank_battles(bed.battles(records), random.Random(1), position=True)


def test_the_label_plan_gives_the_half_width_ppi_reaches_on_simulated_data():
    copula = bed.Copula(Fraction("0.5"), Fraction("0.70"), Fraction("0.74"))
    plan = bed.plan_labels(copula.cells, Fraction("0.85"), Fraction("0.03"), 5000,
                           Fraction("0.95"))
    assert (plan.with_judge, plan.alone) == (1000, 1466)
    assert plan.alone == math.ceil(NormalDist().inv_cdf(0.975) ** 2 * (
        sum(copula.cells.as_tuple()[1:3]) - float(copula.cells.b_only - copula.cells.a_only) ** 2)
        / 0.03 ** 2)
    rng, halves = random.Random(1), []
    for _ in range(60):
        scores = bed.simulate_scores(rng, 5000, Fraction("0.5"), Fraction("0.70"),
                                     Fraction("0.74"))
        judge = [[x if rng.random() < 0.85 else 1 - x for x in column]
                 for column in (scores.a, scores.b)]
        n = plan.with_judge
        y = [b - a for a, b in zip(scores.a[:n], scores.b[:n])]
        f = [b - a for a, b in zip(*judge)]
        halves.append(NormalDist().inv_cdf(0.975) * bed.ppi_mean(y, f[:n], f[n:])[1])
    assert sum(halves) / len(halves) == pytest.approx(0.03, rel=0.02)
    blind = bed.plan_labels(copula.cells, Fraction(1, 2), Fraction("0.03"), 5000, 0.95)
    assert blind.with_judge == blind.alone and blind.correlation == 0
    scarce = bed.plan_labels(copula.cells, Fraction("0.85"), Fraction("0.01"), 5000, 0.95)
    assert scarce.with_judge is None and scarce.alone is None
