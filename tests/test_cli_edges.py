"""Edges of the second half of the module, each checked where a user meets it.

The verdict "unreliable" and simultaneous score intervals; harness tasks that differ in
runs; the ledger's field checks, reading, appending and summary; planning (power past the
exact limit, runs with no gap or no run spread, a sweep with no gap, the act-on-it plan in
runs); the text, markdown and SVG renderers' rarer lines; the leaderboard's "separate the
top two" line; the Python front door's odd values; the command line's parser checks and
output-target checks; signals off the main thread and an unknown output encoding.  A few
pure numeric helpers (engine choice, the saddlepoint cdf's guards, the threshold search,
the binomial tail) are checked directly against what they compute by brute force.
"""

import contextlib
import errno
import fcntl
import io
import json
import math
import numbers
import os
import random
import sys
import threading
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
from helpers import assert_one_line_error, cli

FAST = ["--resamples", "300", "--calibration", "0"]


def write(path, text):
    path.write_text(text)
    return str(path)


def clear_gap_csv(tmp_path, n=400, name="clear.csv"):
    """0/1 items, B right on every item A is right on and on some more: a clear gap."""
    rng = random.Random(7)
    rows = ["item,a,b"]
    for i in range(n):
        u = rng.random()
        rows.append(f"{i},{int(u < 0.6)},{int(u < 0.7)}")
    return write(tmp_path / name, "\n".join(rows) + "\n")


# --- the verdict: too few clusters, a family read by the score rule ---------------------------

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
    for column, comparison in zip(candidates, body["comparisons"]):
        both = sum(x and y for x, y in zip(a, column))
        a_only = sum(x and not y for x, y in zip(a, column))
        b_only = sum(y and not x for x, y in zip(a, column))
        cells = bed.Cells(both, a_only, b_only, 100 - both - a_only - b_only)
        want = bed.newcombe_paired(cells, Fraction(39, 40))       # 1 - 0.05 / 2
        assert comparison["decision"]["level"] == 0.975
        assert comparison["decision"]["interval"] == pytest.approx([float(want.lo),
                                                                   float(want.hi)])


# --- harness tasks with runs --------------------------------------------------------------------

def inspect_folder(folder, model, tasks):
    """An Inspect log per task; each task a list of epochs (runs), each a list of C/I."""
    folder.mkdir(parents=True)
    for task, epochs in tasks.items():
        samples = [{"id": i, "epoch": e, "scores": {"match": {"value": v}}}
                   for e, values in enumerate(epochs, start=1)
                   for i, v in enumerate(values, start=1)]
        (folder / f"{task}.json").write_text(json.dumps(
            {"version": 2, "status": "success", "eval": {"task": task, "model": model},
             "samples": samples}, indent=2))
    return str(folder)


def values(rng, p, n=40):
    return ["C" if rng.random() < p else "I" for _ in range(n)]


def test_tasks_that_differ_in_runs_are_each_compared_with_their_own(tmp_path):
    rng = random.Random(1)
    base = inspect_folder(tmp_path / "base", "base", {
        "arith": [values(rng, .6), values(rng, .6)], "logic": [values(rng, .5)],
        "facts": [values(rng, .5), values(rng, .5)]})
    tuned = inspect_folder(tmp_path / "tuned", "tuned", {
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
    base = inspect_folder(tmp_path / "base", "base", {
        "arith": [values(rng, .6), values(rng, .6)], "logic": [values(rng, .5), values(rng, .5)]})
    tuned = inspect_folder(tmp_path / "tuned", "tuned", {
        "arith": [values(rng, .7), values(rng, .7)], "logic": [values(rng, .6), values(rng, .6)]})
    status, out, err = cli("compare", base, tuned, *FAST)
    assert status == 0, err
    assert "pooled over all 80 items, items pooled plainly (runs and task strata together are " \
        "not supported)" in out
    assert out.count("2 and 2 runs, two-level") == 2


def test_compare_tasks_from_python_checks_its_pool_and_runs_without_progress(tmp_path):
    rng = random.Random(4)
    base = inspect_folder(tmp_path / "base", "base", {"arith": [values(rng, .6)],
                                                      "logic": [values(rng, .5)]})
    tuned = inspect_folder(tmp_path / "tuned", "tuned", {"arith": [values(rng, .8)],
                                                         "logic": [values(rng, .6)]})
    table = bed.read(base, tuned)
    with pytest.raises(bed.ToolError, match="pool must be strata or clusters; got 'items'"):
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


# --- the act-on-it plan with runs ---------------------------------------------------------------

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


# --- the ledger ---------------------------------------------------------------------------------

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
    ({"test_set": "abc123"}, "field test_set is not a SHA-256"),
    ({"verdict": "great"}, "field verdict is not one of "),
    ({"interval": [0.1]}, "field interval is not two finite numbers, low then high"),
    ({"interval": [0.2, 0.1]}, "field interval is not two finite numbers, low then high"),
    ({"interval": ["x", 0.1]}, "field interval is not two finite numbers, low then high"),
    ({"interval": 0.1}, "field interval is not two finite numbers, low then high"),
    ({"percent": "yes"}, "field percent is not true or false"),
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
    ("open", "cannot open the ledger {}: Permission denied"),
    ("lock", "cannot append to the ledger {}: No locks available"),
])
def test_a_ledger_that_cannot_be_opened_or_locked_is_one_error(tmp_path, monkeypatch, failure,
                                                               fragment):
    data = clear_gap_csv(tmp_path)
    ledger = tmp_path / "evals.jsonl"
    assert cli("compare", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger),
               *FAST)[0] == 0
    before = ledger.read_bytes()
    if failure == "open":
        real_open = os.open

        def fake(path, *args, **kwargs):
            if os.fspath(path) == str(ledger):
                raise PermissionError(errno.EACCES, "Permission denied")
            return real_open(path, *args, **kwargs)
        monkeypatch.setattr(os, "open", fake)
    else:
        def fake(fd, operation):
            raise OSError(errno.ENOLCK, "No locks available")
        monkeypatch.setattr(fcntl, "flock", fake)
    status, out, err = cli("compare", data, "--a-col", "a", "--b-col", "b", "--ledger",
                           str(ledger), *FAST)
    monkeypatch.undo()
    assert status == 2 and err.count("\n") == 1
    assert fragment.format(ledger) in err
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


# --- planning -----------------------------------------------------------------------------------

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
    assert len(markdown.splitlines()) == 4 and "power needs" not in markdown
    plot = tmp_path / "power.svg"
    status, _, err = cli(*argv, "--plot", str(plot))
    assert status == 0, err
    svg = plot.read_text()
    assert svg.startswith("<?xml") and "target 80%" in svg
    # a marker per grid size and the legend's: no confirmation run, no n to mark
    assert svg.count("<circle ") == 2 + 1 and '"#c0392b">n=' not in svg
    body = json.loads(cli(*argv, "--json")[1])
    assert body["n_needed"] is None and body["confirmation"] is None


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


# --- pure numeric helpers -----------------------------------------------------------------------

def test_auto_picks_the_stream_engine_for_too_many_distinct_values():
    many = bed.Scores(tuple(Fraction(i, 2003) for i in range(2002)),
                      tuple(Fraction(i + 1, 2003) for i in range(2002)))
    few = bed.Scores(tuple(Fraction(i % 100, 200) for i in range(2002)),
                     tuple(Fraction(i % 100 + 1, 200) for i in range(2002)))
    assert bed._distinct_values(many) > bed._MAX_COUNTS_VALUES
    assert 5 * 1_000_000 * 2002 > bed._STREAM_BUDGET
    assert bed._choose_engine("auto", many, 1_000_000) == "stream"
    assert bed._choose_engine("auto", few, 1_000_000) == "counts"


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

    assert bed._threshold(fits, 100, guess) == 5
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


# --- renderers ----------------------------------------------------------------------------------

def test_a_tiny_negative_gap_never_prints_as_plus_zero():
    a = [0.5, 0.25, 0.75, 0.5] * 10
    b = list(a)
    b[0] = 0.5 - 1e-7
    result = bed.compare(a, b, resamples=200, calibration=0)
    assert -1e-8 < result.to_dict()["comparisons"][0]["gap"] < 0
    assert "gap B - A: -0.0000 pts;" in str(result)
    assert bed._signed_fixed(Fraction(1, 10 ** 9), 1) == "+0.0000"
    assert bed._signed_fixed(Fraction(-1, 10 ** 9), 1) == "-0.0000"


def test_markdown_says_what_was_dropped(tmp_path):
    path = write(tmp_path / "m.csv", "item,a,b\n1,1,0\n2,0,1\n3,,1\n4,1,1\n5,0,0\n6,1,1\n")
    status, out, err = cli("compare", path, "--a-col", "a", "--b-col", "b", "--on-missing",
                           "drop", "--output", "markdown", *FAST)
    assert status == 0, err
    dropped = [line for line in out.splitlines() if line.startswith("Dropped ")]
    assert len(dropped) == 1 and dropped[0].startswith("Dropped 1 (")


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


# --- the Python front door ----------------------------------------------------------------------

class TextlessReal:
    """A real number type whose text is not a number (as a tensor prints itself)."""

    def __init__(self, value):
        self.value = value

    def __float__(self):
        return float(self.value)

    def __str__(self):
        return f"tensor({self.value})"


numbers.Real.register(TextlessReal)


class BadIndex:
    """A number type whose conversion fails (as a tensor of several elements)."""

    def __index__(self):
        raise TypeError("only one element tensors can be converted")


class FalseIterable:
    """Iterable in name only (a 0-d array)."""

    def __iter__(self):
        raise TypeError("iteration over a 0-d array")


A = [0.5, 0.25, 0.75, 0.5, 1.0, 0.0] * 5
B = [0.75, 0.25, 1.0, 0.5, 0.75, 0.25] * 5


def test_a_real_number_type_whose_text_is_not_a_number_reads_by_its_value():
    odd = bed.compare([TextlessReal(v) for v in A], B, resamples=200, calibration=0)
    plain = bed.compare(A, B, resamples=200, calibration=0)
    assert odd.to_dict()["comparisons"][0]["gap"] == plain.to_dict()["comparisons"][0]["gap"]
    assert str(odd) == str(plain)


def test_nan_from_python_is_a_missing_score():
    a = A[:-1] + [float("nan")]
    with pytest.raises(bed.ToolError, match="baseline: item 30 has no score; use "
                                            "on_missing='drop'"):
        bed.compare(a, B, resamples=200)
    dropped = bed.compare(a, B, resamples=200, calibration=0, on_missing="drop")
    assert dropped.n == 29


@pytest.mark.parametrize("call,fragment", [
    (lambda: bed.compare(A, B, interval=None), "interval takes a value (default 'percentile'), not None"),
    (lambda: bed.compare(["1", "1e99"], ["0", "1"]), "out of range"),
    (lambda: bed.compare({"": 1, "b": 0}, {"": 0, "b": 1}), "is not an id"),
    (lambda: bed.compare(FalseIterable(), B), "baseline: iteration over a 0-d array"),
    (lambda: bed.compare({1: 1, "1": 0, 2: 1}, {1: 0, 2: 1}), "baseline: item 1 appears twice"),
    (lambda: bed.compare([BadIndex()] * 30, B), "is not a score"),
    (lambda: bed.leaderboard(), "leaderboard needs the systems' scores, or files to read"),
    (lambda: bed.leaderboard({}), "leaderboard needs the systems' scores, or files to read"),
])
def test_values_the_front_door_refuses_in_one_line(call, fragment):
    with pytest.raises(bed.ToolError) as caught:
        call()
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


# --- the command line's checks ------------------------------------------------------------------

@pytest.mark.parametrize("argv,fragment", [
    (["calibrate", "--acc-pairs", "0.7,0.8/0.9"], "argument --acc-pairs: not a list of A/B accuracy pairs: '0.7,0.8/0.9'"),
    (["ledger", "a.jsonl", "b.jsonl"], "ledger reads one ledger file"),
    (["ledger", "a.jsonl", "--ledger-summary", "b.jsonl"], "ledger reads one ledger file"),
    (["compare", "g.csv", "--a-col", "a", "--b-col", "b", "--cluster-col", "a"],
     "--cluster-col names a score column ('a'); clusters and strata come from a label column"),
    (["compare", "g.csv", "--systems", "a,b", "--strata-col", "b"],
     "--strata-col names a score column ('b')"),
    (["compare", "g.csv", "--a-col", "a", "--b-col", "b", "--engine", "counts"],
     "--engine chooses how resamples are drawn; give --resamples too"),
    (["simulate", "--runs", "2", "--cluster-size", "3"],
     "--runs simulates runs item by item: no --cluster-size, the stream engine"),
    (["simulate", "--runs", "2", "--engine", "counts"],
     "--runs simulates runs item by item"),
])
def test_command_lines_refused_before_any_work(tmp_path, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "g.csv", "item,a,b\n1,1,0\n2,0,1\n3,1,1\n4,1,1\n5,0,0\n")
    assert_one_line_error(*cli(*argv), fragment)


def test_a_file_named_like_a_flag_after_double_dash_is_an_input(tmp_path, monkeypatch):
    """After --, --n-grid=5 is a file name: compared, not taken for plan's flag."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "--n-grid=5", "item,a,b\n1,1,0\n2,0,1\n3,1,1\n4,1,1\n5,0,0\n")
    status, out, err = cli("compare", "--a-col", "a", "--b-col", "b", *FAST, "--", "--n-grid=5")
    assert status == 0, err
    assert "n=5 items from --n-grid=5 (0/1 scores)" in out
    # the flat spelling: the words after -- do not choose the subcommand either (else plan)
    assert_one_line_error(*cli("--a-col", "a", "--b-col", "b", "--", "--n-grid=5"),
                          "--a-col does not apply to simulate")


def test_an_output_whose_name_is_too_long_is_refused(tmp_path):
    data = clear_gap_csv(tmp_path)
    plot = tmp_path / ("p" * 300 + ".svg")
    assert_one_line_error(*cli("compare", data, "--a-col", "a", "--b-col", "b", "--plot",
                               str(plot), *FAST), "File name too long")


def test_stdin_without_a_file_is_never_the_output(tmp_path, monkeypatch):
    """stdin with no file descriptor (an in-memory stream): it cannot be the plot's file,
    which is written."""
    plot = tmp_path / "p.svg"
    plot.write_text("old")
    csv_text = open(clear_gap_csv(tmp_path)).read()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(csv_text.encode())))
    with pytest.raises(io.UnsupportedOperation):
        sys.stdin.fileno()
    status, out, err = cli("compare", "-", "--a-col", "a", "--b-col", "b", "--plot", str(plot),
                           *FAST)
    assert status == 0, err
    assert plot.read_text().startswith("<?xml") and "shaded: 95% CI" in plot.read_text()


def test_an_input_through_a_missing_folder_is_compared_by_its_real_path(tmp_path, monkeypatch):
    """nowhere/../p.svg cannot be stat'ed (no folder nowhere), but names the plot's file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.svg").write_text("<svg/>")
    status, out, err = cli("compare", "nowhere/../p.svg", "--a-col", "a", "--b-col", "b",
                           "--plot", "p.svg", *FAST)
    assert_one_line_error(status, out, err, "--plot p.svg is an input (nowhere/../p.svg)")


# --- signals and encoding -----------------------------------------------------------------------

def test_main_runs_off_the_main_thread_and_leaves_signals_alone(tmp_path):
    import signal
    data = clear_gap_csv(tmp_path)
    before = signal.getsignal(signal.SIGTERM)
    got = {}

    def work():
        got["result"] = cli("compare", data, "--a-col", "a", "--b-col", "b", *FAST)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    status, out, err = got["result"]
    assert status == 0, err
    assert out.startswith("verdict: better.")
    assert signal.getsignal(signal.SIGTERM) == before


class UnknownEncoding(io.StringIO):
    encoding = "no-such-codec"


def test_a_stream_of_an_unknown_encoding_gets_ascii(tmp_path):
    out = UnknownEncoding()
    with contextlib.redirect_stdout(out):
        status = bed.main(["plan", "--n-grid", "50,100", "--replays", "5", "--resamples", "100",
                           "--output", "markdown"])
    assert status == 0
    text = out.getvalue()
    assert text.isascii() and "paired +-" in text and "\u00b1" not in text
