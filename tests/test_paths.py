"""User paths that other tests leave out, each checked against what it must show."""

import json
import os
import random
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
import oracle
from helpers import SHIPPED_CSV, cli

C95 = Fraction("0.95")


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
    status, out, _ = cli("--n-items", "30", "--acc-a", "0.95", "--acc-b", "0.95", "--replays",
                         "40", "--resamples", "200", "--interval", "bca")
    data = json.loads(cli("--n-items", "30", "--acc-a", "0.95", "--acc-b", "0.95",
                          "--replays", "40", "--resamples", "200", "--interval", "bca",
                          "--output", "json")[1])
    assert status == 0 and data["coverage"]["undefined"] > 0
    percentile = data["coverage"]["others"]["percentile"]["covers"]
    assert data["coverage"]["covers"] >= percentile - data["coverage"]["undefined"] / 40
    assert "the percentile interval stood in" in out


def test_on_missing_drop_with_repeated_ids_counts_them(tmp_path):
    path = tmp_path / "r.csv"
    rows = ["id,a,b"] + [f"{i},{i % 2},{(i // 2) % 2}" for i in range(40)] + ["3,1,1", "7,0,0"]
    path.write_text("\n".join(rows) + "\n")
    argv = ["--csv", str(path), "--id-col", "id", "--a-col", "a", "--b-col", "b",
            "--resamples", "100", "--calibration", "0"]
    status, out, err = cli(*argv)
    assert status == 2 and "2 id(s) appear more than once (first: 3, 7)" in err
    status, text, _ = cli(*argv, "--on-missing", "drop")
    assert status == 0 and "n=38 items" in text and "dropped" in text


def test_markdown_for_a_sweep_and_a_half_width_plan():
    status, out, _ = cli("--n-grid", "100,200", "--replays", "20", "--resamples", "100",
                         "--output", "markdown")
    assert status == 0
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert len(table) == 4 and all(line.count("|") == table[0].count("|") for line in table)
    assert table[2].startswith("| 100 |") and table[3].startswith("| 200 |")
    plan = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B).cells, C95)
    assert f"| {100 * plan.power(100, True):.1f}% |" in table[2]
    status, out, _ = cli("--half-width", "0.02", "--output", "markdown")
    assert status == 0
    rows = [line for line in out.splitlines() if line.startswith("|")]
    plan = bed.plan_accuracy(Fraction(1, 2), Fraction("0.02"), C95)
    assert rows[2:] == [f"| Wald | {plan.wald:,} |", f"| Wilson | {plan.wilson:,} |",
                        f"| Clopper-Pearson | {plan.clopper_pearson:,} |"]
    assert plan.wald == 2401              # 1.96**2 * 0.25 / 0.02**2 = 2400.9..., rounded up


def test_plot_of_user_data_draws_the_paired_distribution(tmp_path):
    target = tmp_path / "gap.svg"
    status, out, err = cli("--csv", SHIPPED_CSV, "--resamples", "300", "--calibration", "0",
                           "--plot", str(target))
    assert status == 0, err
    svg = ET.parse(target).getroot()
    assert svg.tag.endswith("svg")
    text = "".join(svg.itertext())
    assert "pts" in text and "95%" in text
    assert os.path.getsize(SHIPPED_CSV) > 0                      # the input is untouched


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
    status, out, err = cli("--csv", str(path), "--a-col", "a", "--b-col", "b", "--strata-col",
                           "domain", "--resamples", "200", "--output", "json")
    assert status == 0, err
    data = json.loads(out)
    assert data["comparisons"][0]["design"]["strata"] == [20, 40]
    dists = bed.bootstrap(random.Random(2), bed.Scores(a, b, strata=strata), 200)
    assert set(dists["a"].sums) == {40}
    plain = bed.bootstrap(random.Random(2), bed.Scores(a, b), 200)
    assert len(set(plain["a"].sums)) > 5


def test_calibration_table_text_markdown_and_json_say_the_same():
    argv = ["--calibration-table", "--n-grid", "30,60", "--acc-pairs", "0.7/0.8",
            "--replays", "20"]
    text = cli(*argv)[1]
    markdown = cli(*argv, "--output", "markdown")[1]
    data = json.loads(cli(*argv, "--output", "json")[1])
    names = {"percentile": "percentile", "basic": "basic", "bca": "BCa",
             "score": "Newcombe score"}
    assert len(data["rows"]) == 2
    for row in data["rows"]:
        rates = {rule: (row["coverage"] if row["coverage"]["interval"] == rule
                        else row["coverage"]["others"][rule])["covers"] for rule in names}
        for rule, name in names.items():
            cell = f"{100 * rates[rule]:.1f}%"
            line = next(line for line in text.splitlines()
                        if f"0.7/0.8  {row['n']:>2}  {name} " in line)
            assert cell in line
            md = next(line for line in markdown.splitlines()
                      if line.startswith(f"| 0.7/0.8 | {row['n']} | {name} |"))
            assert cell in md
        recommended = next(line for line in text.splitlines()
                           if f"0.7/0.8  {row['n']:>2}" in line and "<- recommended" in line)
        assert names[row["recommended"]] in recommended


def wilson(hits, n, z=1.959963984540054):
    """Wilson's score interval, from its closed form."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return centre - half, centre + half


def test_score_intervals_on_the_shipped_csv_are_wilson_and_clopper_pearson():
    data = json.loads(cli("--csv", SHIPPED_CSV, "--interval", "score", "--output", "json")[1])
    data = data["comparisons"][0]
    n, hits_a, hits_b = 500, 356, 374                          # 71.2% and 74.8%
    for name, hits in (("a", hits_a), ("b", hits_b)):
        lo, hi = wilson(hits, n)
        assert data["ci"][name] == [pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12)]
    exact = json.loads(cli("--csv", SHIPPED_CSV, "--interval", "score", "--accuracy-interval",
                           "clopper-pearson", "--output", "json")[1])["comparisons"][0]
    lo, hi = bed.clopper_pearson(hits_a, n, C95)
    # Clopper-Pearson's ends: P(X >= hits | lo) = 2.5% and P(X <= hits | hi) = 2.5%
    assert sum(bed.binom_pmf(k, n, lo) for k in range(hits_a, n + 1)) == pytest.approx(0.025)
    assert sum(bed.binom_pmf(k, n, hi) for k in range(0, hits_a + 1)) == pytest.approx(0.025)
    assert exact["ci"]["a"] == [pytest.approx(lo), pytest.approx(hi)]
    assert exact["ci"]["paired"] == data["ci"]["paired"]          # the gap's stays Newcombe's


def test_a_whole_harness_run_in_markdown_has_a_row_per_task_and_the_pooled_table():
    lm = os.path.join(os.path.dirname(SHIPPED_CSV), "examples", "lm-eval")
    argv = ["--baseline", os.path.join(lm, "main", "acme__base"), "--candidate",
            os.path.join(lm, "main", "acme__tuned"), "--score-col", "acc,exact_match", "--filter",
            "strict-match", "--resamples", "200", "--calibration", "0"]
    data = json.loads(cli(*argv, "--output", "json")[1])
    markdown = cli(*argv, "--output", "markdown")[1]
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    tasks = [t["task"] for t in data["tasks"]]
    assert len(tasks) > 1
    for task in tasks:
        assert sum(line.startswith(f"| {bed._md(task)} |") for line in rows) == 1
    assert f"Pooled over all {data['input']['items']:,} items (strata)" in markdown


def test_the_ledger_summary_in_markdown_counts_each_test_set(tmp_path):
    ledger = str(tmp_path / "evals.jsonl")
    for _ in range(2):
        assert cli("--csv", SHIPPED_CSV, "--resamples", "50", "--calibration", "0",
                   "--ledger", ledger)[0] == 0
    text = cli("--ledger-summary", ledger, "--output", "markdown")[1]
    data = json.loads(cli("--ledger-summary", ledger, "--output", "json")[1])
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 2                    # the header and one row per comparison
    assert len(data["test_sets"]) == 1 and len(data["test_sets"][0]["comparisons"]) == 2


def test_a_simulated_gate_reports_its_false_pass_rate_at_the_margin():
    status, out, _ = cli("--acc-b", "0.73", "--gate", "--min-delta", "1", "--replays", "60",
                         "--resamples", "200")
    assert status in (0, 1)
    line = next(line for line in out.splitlines() if line.startswith("gate at +1.0 pts: passes"))
    assert "the true gap equals the margin, so this is the gate's false-pass rate" in line
    data = json.loads(cli("--acc-b", "0.73", "--gate", "--min-delta", "1", "--replays", "60",
                          "--resamples", "200", "--output", "json")[1])
    passes = data["coverage"]["gate"]["passes"]
    assert f"{100 * passes:.1f}%" in line
