"""One verdict, honest intervals: the decision rule, calibration, score intervals, exact
power and sample sizes, Monte Carlo advice."""

import itertools
import json
import math
import random
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
from helpers import cli

C95 = Fraction("0.95")


def table_file(tmp_path, cells, name="t.csv"):
    """A 0/1 CSV with the given (both, a_only, b_only, neither) counts."""
    both, a_only, b_only, neither = cells
    rows = [(1, 1)] * both + [(1, 0)] * a_only + [(0, 1)] * b_only + [(0, 0)] * neither
    path = tmp_path / name
    path.write_text("item,a,b\n" + "".join(f"{i},{a},{b}\n" for i, (a, b) in enumerate(rows)))
    return str(path)


# --- one verdict in every format -------------------------------------------------------------

def verdict_words(report):
    text = bed.render(report, "text")
    line = next(l for l in text.splitlines() if l.startswith("verdict: ") or ": verdict: " in l)
    text_word = line.split("verdict: ", 1)[1].split(".")[0]
    body = json.loads(bed.render(report, "json"))
    markdown = bed.render(report, "markdown").splitlines()[2]
    return text_word, body["comparisons"][0]["verdict"], markdown.rstrip(" |").rsplit("| ", 1)[1]


def generated_tables(count, seed=11):
    """Small tables, many of them near the 5% boundary (the borderline cases)."""
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randrange(12, 160)
        discordant = rng.randrange(2, max(3, n // 2))
        b_only = min(discordant, max(0, round(discordant / 2 + rng.gauss(0, 1.3) *
                                              math.sqrt(discordant))))
        a_only = discordant - b_only
        both = rng.randrange(0, n - discordant + 1)
        yield (both, a_only, b_only, n - discordant - both)


def test_the_same_table_gives_one_verdict_word_in_text_json_and_markdown():
    seen = set()
    for index, cells in enumerate(generated_tables(2500)):
        scores = bed._cells_as_scores(bed.Cells(*cells))
        table = bed.Table(("A", "B"), (scores.a, scores.b), tuple(range(scores.n)), (
            bed.Source("t.csv", "0" * 64, scores.n, ("a", "b"), "csv"),))
        comparisons = bed.compare_systems(table, random.Random(index), resamples=60,
                                          calibration=0)
        report = bed.Report({"seed": index, "resamples": 60}, "csv", tuple(comparisons),
                            table=table)
        words = verdict_words(report)
        decision = comparisons[0].decision
        assert set(words) == {decision.word}, (cells, words)
        seen.add(decision.word)
        excludes = decision.interval.excludes_zero()
        significant = Fraction(decision.p) < decision.alpha
        assert decision.word == ("cannot tell" if not excludes and not significant else
                                 "borderline" if excludes != significant else
                                 "better" if decision.interval.lo > 0 else "worse")
    assert {"better", "worse", "cannot tell", "borderline"} <= seen


def test_a_family_reads_simultaneous_intervals_beside_holm_p(tmp_path):
    rng = random.Random(5)
    lines = ["item,base,c1,c2,c3"]
    for i in range(300):
        d = rng.gauss(0, 1)
        lines.append(",".join([str(i)] + [str(int(0.6 * d + 0.8 * rng.gauss(0, 1) < t))
                                          for t in (0.3, 0.62, 0.42, 0.3)]))
    path = tmp_path / "f.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, _ = cli("--csv", str(path), "--systems", "base,c1,c2,c3", "--json",
                         "--resamples", "400", "--calibration", "0")
    body = json.loads(out)
    for comparison in body["comparisons"]:
        decision = comparison["decision"]
        assert decision["family"] == 3 and decision["level"] == pytest.approx(1 - 0.05 / 3)
        assert decision["p"] == comparison["p_holm"]
        lo, hi = decision["interval"]
        assert (lo <= comparison["ci"]["paired"][0] and hi >= comparison["ci"]["paired"][1])
        assert comparison["verdict"] in bed._VERDICTS
    status, text, _ = cli("--csv", str(path), "--systems", "base,c1,c2,c3", "--resamples", "400",
                          "--calibration", "0")
    assert "simultaneous 98.33% CI" in text and "Holm-adjusted p=" in text


def test_too_few_clusters_never_claim_a_winner(tmp_path):
    lines = ["item,passage,a,b"]
    for i in range(60):
        lines.append(f"{i},{i % 3},{int(i % 5 == 0)},{int(i % 5 != 4)}")
    path = tmp_path / "c.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, _ = cli("--csv", str(path), "--a-col", "a", "--b-col", "b", "--cluster-col",
                         "passage", "--resamples", "300")
    verdict = next(l for l in out.splitlines() if l.startswith("verdict:"))
    assert verdict.startswith(("verdict: unreliable", "verdict: cannot tell",
                               "verdict: borderline")), verdict
    assert "warning: only 3 clusters" in out


# --- intervals that hold at small n and at the boundary ----------------------------------------

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


def test_thirty_of_thirty_gives_a_non_degenerate_interval(tmp_path):
    path = table_file(tmp_path, (30, 0, 0, 0))
    status, out, _ = cli("--csv", path, "--a-col", "a", "--b-col", "b", "--resamples", "200")
    assert status == 0
    assert "  A = a: 1.000 [0.884, 1.000]\n  B = b: 1.000 [0.884, 1.000]\n" in out
    assert "note: A's interval: the bootstrap cannot vary 30/30 (every item right)" in out


def test_an_undefined_bca_falls_back_and_says_so(tmp_path):
    path = table_file(tmp_path, (20, 0, 0, 20))            # the systems never disagree
    status, out, _ = cli("--csv", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                         "--resamples", "300")
    assert status == 0
    assert ("note: the paired interval: BCa is undefined (every bootstrap resample gives the "
            "same value); the percentile interval is shown") in out
    body = json.loads(cli("--csv", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                          "--resamples", "300", "--json")[1])["comparisons"][0]
    assert body["interval_methods"]["paired"] == "percentile" and body["ci"]["paired"] == [0, 0]


def test_basic_per_system_intervals_stay_within_0_and_1(tmp_path):
    path = table_file(tmp_path, (27, 1, 1, 1))
    body = json.loads(cli("--csv", path, "--a-col", "a", "--b-col", "b", "--interval", "basic",
                          "--resamples", "500", "--json")[1])["comparisons"][0]
    for name in ("a", "b"):
        lo, hi = body["ci"][name]
        assert 0 <= lo <= hi <= 1


# --- calibration on the user's own table -------------------------------------------------------

def test_calibration_flags_a_failing_interval_and_names_one_that_holds(tmp_path):
    path = table_file(tmp_path, (28, 1, 1, 0))            # 30 items, both near 0.97
    status, out, _ = cli("--csv", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                         "--resamples", "500", "--details")
    line = next(l for l in out.splitlines() if l.startswith("calibration: at n=30"))
    assert "BCa CI covers the gap" in line
    body = json.loads(cli("--csv", path, "--a-col", "a", "--b-col", "b", "--interval", "bca",
                          "--resamples", "500", "--json")[1])
    cal = body["comparisons"][0]["calibration"]
    if not cal["holds"]:
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
    body = json.loads(cli("--csv", SHIPPED_CSV, "--json")[1])
    cal = body["comparisons"][0]["calibration"]
    assert cal["holds"] and cal["replays"] == 0 and cal["interval"] == "percentile"
    assert cal["coverage"]["exact"] and cal["coverage"]["covers_se"] == 0
    assert abs(cal["coverage"]["covers"] - 0.95) < 0.005


def test_the_coverage_loop_warns_below_nominal_and_the_named_interval_holds():
    status, out, _ = cli("--n-items", "30", "--replays", "600", "--resamples", "500")
    warning = next(l for l in out.splitlines() if l.startswith("warning: at this n"))
    body = json.loads(cli("--n-items", "30", "--replays", "600", "--resamples", "500",
                          "--json")[1])
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
    status, out, _ = cli("--calibration-table", "--n-grid", "30", "--acc-pairs", "0.95/0.95",
                         "--replays", "300", "--json")
    body = json.loads(out)
    row = body["rows"][0]
    assert row["n"] == 30 and set(row["coverage"]["others"]) == {"basic", "bca", "score"}
    assert row["recommended"] in bed.INTERVALS


# --- exact power and sample sizes --------------------------------------------------------------

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
    width = lambda n: bed._clopper_pearson_half_width(round(Fraction("0.999") * n), n, C95)
    assert width(368) <= 0.005 and width(552) > 0.005
    assert all(width(n) <= 0.005 for n in range(553, 2500))


def test_wald_near_one_is_flagged():
    status, out, _ = cli("--half-width", "0.005", "--accuracy", "0.999")
    assert "warning: Wald's n expects 0.2 errors" in out


# --- Monte Carlo advice -------------------------------------------------------------------------

def test_zero_one_data_are_advised_the_exact_bootstrap(tmp_path):
    path = table_file(tmp_path, (15, 5, 7, 3))
    status, out, _ = cli("--csv", path, "--a-col", "a", "--b-col", "b", "--details",
                         "--resamples", "2000")
    assert "--exact gives the exact ends (B = infinity) at no cost" in out
    status, out, _ = cli("--csv", path, "--a-col", "a", "--b-col", "b", "--exact", "--details")
    assert "hint:" not in out


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


def test_real_scores_get_a_resample_count_the_next_run_does_not_raise(tmp_path):
    # --resamples forces the Monte Carlo bootstrap (else the saddlepoint, with no Monte Carlo
    # error); on this scale the ends' error is small enough that a count, not the method, is
    # advised: _mc_advice's "resamples" branch
    path = real_scores_file(tmp_path)
    args = ["--csv", path, "--a-col", "a", "--b-col", "b", "--resamples", "2000"]
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
