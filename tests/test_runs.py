"""Several runs per system: spreads, the two-level interval and test, the simulator, bad input."""

import json
import math
import random
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
from helpers import ROOT, assert_one_line_error, cli

C95 = Fraction("0.95")
SEEDS = f"{ROOT}/datasets/examples/seeds.csv"


def long_csv(tmp_path, runs_a, runs_b, name="runs.csv"):
    """A long file: a row per item and run, a column per system."""
    lines = ["item,seed,a,b"]
    for run, (col_a, col_b) in enumerate(zip(runs_a, runs_b)):
        lines += [f"{i},{run},{x},{y}" for i, (x, y) in enumerate(zip(col_a, col_b))]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


# --- a hand-worked example ---------------------------------------------------------------------

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
    body = json.loads(cli("--csv", path, "--systems", "a,b", "--run-col", "seed", "--json",
                          "--resamples", "300")[1])["comparisons"][0]
    runs = body["runs"]
    assert runs["a"]["scores"] == pytest.approx([4 / 6, 4 / 6, 3 / 6])
    assert runs["b"]["scores"] == pytest.approx([5 / 6, 1.0, 4 / 6])
    # mean 11/18; deviations 1/18, 1/18, -2/18: (1 + 1 + 4)/324 over 2 = 1/108
    assert runs["a"]["sd"] == pytest.approx(math.sqrt(1 / 108), rel=1e-12)
    assert runs["overlap"] is True
    assert body["test"]["name"] == "two-level t (items and runs)"
    assert body["decision"]["interval"] == runs["interval"]


# --- invariants ---------------------------------------------------------------------------------

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


# --- the simulator: coverage of both intervals, type-I error ----------------------------------------

@pytest.mark.slow
def test_two_level_interval_covers_and_the_single_run_one_does_not():
    copula = bed.Copula(bed.CORR, Fraction("0.7"), Fraction("0.75"), runs=3,
                        run_sd=Fraction("0.03"))
    cov = bed.coverage(random.Random(4), copula, 150, replays=400, resamples=300,
                       confidence=C95)
    rate, single = cov.covers_rate, cov.item_level.covers_rate
    assert float(rate) >= 0.95 - 2.5 * cov.standard_error(rate)
    assert float(single) < 0.88


@pytest.mark.slow
def test_with_no_run_noise_both_intervals_agree():
    copula = bed.Copula(bed.CORR, Fraction("0.7"), Fraction("0.75"), runs=3,
                        run_sd=Fraction(0), run_item_noise=Fraction(0))
    cov = bed.coverage(random.Random(5), copula, 150, replays=300, resamples=300,
                       confidence=C95)
    two, one = cov.covers_rate, cov.item_level.covers_rate
    assert abs(float(two) - 0.95) < 3 * cov.standard_error(two) + 0.01
    assert abs(float(one) - 0.95) < 3 * cov.item_level.standard_error(one) + 0.01


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
    status, out, _ = cli("--runs", "3", "--run-sd", "0.02", "--n-items", "200", "--replays", "20",
                         "--resamples", "200")
    assert status == 0
    assert "the single-run interval, one run per system, covers" in out
    assert "plan (items x runs" in out and "doubling the runs gives" in out
    body = json.loads(cli("--runs", "3", "--run-sd", "0.02", "--n-items", "200", "--replays",
                          "5", "--resamples", "100", "--json")[1])
    assert body["coverage"]["interval"] == "two-level"
    assert body["comparisons"][0]["runs"]["a"]["runs"] == 3


def test_the_seeds_example_in_every_output():
    args = ["--csv", SEEDS, "--systems", "baseline,candidate", "--run-col", "seed"]
    status, text, _ = cli(*args)
    assert status == 0 and "runs: A (5):" in text and "variance of the gap:" in text
    status, markdown, _ = cli(*args, "--output", "markdown")
    assert "two-level t" in markdown
    body = json.loads(cli(*args, "--json")[1])
    assert body["comparisons"][0]["runs"]["variance"]["shares"]["items"] > 0


def test_simulated_runs_written_as_a_long_csv(tmp_path):
    path = tmp_path / "runs.csv"
    status, _, _ = cli("--runs", "2", "--n-items", "30", "--replays", "0", "--resamples", "50",
                       "--write-csv", str(path))
    lines = path.read_text().splitlines()
    assert status == 0 and lines[0] == "item,run,system_a_correct,system_b_correct"
    assert len(lines) == 61
    status, out, _ = cli("--csv", str(path), "--systems", "system_a_correct,system_b_correct",
                         "--run-col", "run", "--resamples", "50")
    assert status == 0 and "runs: A (2)" in out


# --- bad input ---------------------------------------------------------------------------------------

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
    assert_one_line_error(*cli("--csv", str(path), *systems, *argv), message)


def test_items_missing_from_a_run_can_be_dropped_and_are_counted(tmp_path):
    path = tmp_path / "drop.csv"
    path.write_text("item,seed,a,b\n" + "".join(f"{i},{s},{(i + s) % 2},{i % 2}\n"
                                                for s in (0, 1) for i in range(20)
                                                if not (s == 1 and i == 7)))
    status, out, _ = cli("--csv", str(path), "--systems", "a,b", "--run-col", "seed",
                         "--on-missing", "drop", "--resamples", "100")
    assert status == 0 and "1 item(s) not in every run" in out and "19 items kept" in out


def test_runs_flags_are_checked_before_any_work():
    assert_one_line_error(*cli("--run-sd", "0.01"), "--run-sd goes with --runs")
    assert_one_line_error(*cli("--runs", "3", "--n-grid", "100,200"),
                          "--runs plans items x runs at one size")
    assert_one_line_error(*cli("--runs", "3", "--run-sd", "0.3"), "--run-sd must lie in")
    assert_one_line_error(*cli("--runs", "0"), "--runs must be at least 1")
