"""The report in every format: text, markdown and JSON renderers, each saying the same."""

import csv
import html
import json
import math
import os
import random
import re
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed

from helpers import (
    C95,
    EXAMPLES,
    FAST,
    PROMPTS,
    ROOT,
    SHIPPED_CSV,
    cli,
    cli_json,
    scores_of_cells,
    write,
)


def test_render_refuses_what_is_not_a_report_and_outputs_it_does_not_know():
    with pytest.raises(bed.ToolError, match="unknown output 'markdwn'"):
        bed.render(object(), "markdwn")
    with pytest.raises(bed.ToolError, match="render\\(\\) takes a report, not dict"):
        bed.render({}, "text")


def test_sweep_text_and_json():
    status, out, _ = cli("plan", "--n-grid", "100,200", "--replays", "50", "--resamples", "200")
    assert status == 0
    assert out.startswith("power sweep: true accuracies A=0.72 B=0.76 (true gap +4.0 pts)")
    assert ("80% power needs n=1,507 paired (exact power, B=infinity; the normal approximation "
            "says 1,482; simulated at n=1,507") in out and "unpaired needs n=1,884" in out
    status, out, _ = cli("plan", "--n-grid", "100,200", "--replays", "50", "--resamples", "200",
                         "--json")
    body = json.loads(out)
    assert body["source"] == "sweep" and body["n_needed"] == 1507
    assert body["analytic_n_needed"] == 1482 and body["n_needed_by"] == "exact"
    assert [round(row["exact_power"], 4) for row in body["rows"]] == [0.0969, 0.1615]
    assert [row["n"] for row in body["rows"]] == [100, 200]
    assert body["params"]["engine"] == "counts" and body["params"]["n_grid"] == [100, 200]
    assert 0 <= body["rows"][0]["simulated"]["excludes_zero"] <= 1
    assert body["confirmation"]["replays"] == 50


def test_single_run_report_has_a_text_histogram_that_counts_every_resample():
    status, out, _ = cli("simulate", "--replays", "0", "--resamples", "300")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("paired gap over 300"))
    counts = [int(line.split()[-1]) if not line.endswith("<- 0") else int(line.split()[-3])
              for line in lines[start + 1:]]
    assert sum(counts) == 300


def test_histogram_svg_is_valid_and_labelled(tmp_path):
    path = tmp_path / "gap.svg"
    status, _, _ = cli("simulate", "--replays", "0", "--plot", str(path))
    assert status == 0
    root = ET.parse(path).getroot()
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "gap B - A (accuracy points)" in text and "true gap +4.0" in text
    assert "95% CI [-1.4, +8.4] pts" in text and "resamples" in text
    assert len(list(root.iter("{http://www.w3.org/2000/svg}rect"))) > 20
    assert [p.name for p in tmp_path.iterdir()] == ["gap.svg"]


def test_power_curve_svg(tmp_path):
    path = tmp_path / "power.svg"
    status, _, _ = cli("plan", "--n-grid", "250,500", "--replays", "30", "--resamples", "200",
                       "--plot", str(path))
    assert status == 0
    root = ET.parse(path).getroot()
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "target 80%" in text and "n=1,507" in text and "analytic, paired" in text
    assert len(list(root.iter("{http://www.w3.org/2000/svg}polyline"))) == 2


def verdict_words(report):
    text = bed.render(report, "text")
    line = next(l for l in text.splitlines() if l.startswith("verdict: ") or ": verdict: " in l)
    text_word = line.split("verdict: ", 1)[1].split(".")[0]
    body = json.loads(bed.render(report, "json"))
    markdown = bed.render(report, "markdown").splitlines()[0]
    assert markdown.startswith("**verdict: ") and markdown.endswith("**")
    return text_word, body["comparisons"][0]["verdict"], markdown[11:].split(".")[0]


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
    for index, cells in enumerate(generated_tables(600)):         # each verdict 50+ times
        scores = scores_of_cells(bed.Cells(*cells))
        table = bed.Table(("A", "B"), (scores.a, scores.b), tuple(range(scores.n)), (
            bed.Source("t.csv", "0" * 64, scores.n, ("a", "b"), "csv"),))
        comparisons = bed.compare_systems(table, random.Random(index), resamples=1000,
                                          calibration=0)
        report = bed.Report({"seed": index, "resamples": 1000}, "csv", tuple(comparisons),
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


def test_judge_scores_are_reported_in_their_own_units(tmp_path):
    lines = ["item,a,b"] + [f"{i},{i % 7 + 2},{i % 5 + 3}" for i in range(40)]
    path = write(tmp_path / "j.csv", "\n".join(lines) + "\n")
    status, out, _ = cli("compare", path, "--a-col", "a", "--b-col", "b", "--details")
    assert status == 0 and "pts" not in out.split("paired gap over")[0]
    assert "  gap B - A: +0.125; " in out   # means 4.875 and 5.000


SEEDS = f"{ROOT}/datasets/examples/seeds.csv"


def test_the_seeds_example_in_every_output():
    args = ["compare", SEEDS, "--systems", "baseline,candidate", "--run-col", "seed"]
    status, text, _ = cli(*args)
    assert status == 0 and "runs: A (5):" in text and "variance of the gap:" in text
    status, markdown, _ = cli(*args, "--output", "markdown")
    assert "two-level t" in markdown
    body = json.loads(cli(*args, "--json")[1])
    assert body["comparisons"][0]["runs"]["variance"]["shares"]["items"] > 0


def test_one_verdict_in_every_format_and_from_python(tmp_path):
    text = cli("leaderboard", PROMPTS, "--details")[1]
    markdown = cli("leaderboard", PROMPTS, "--output", "markdown", "--details")[1]
    got = cli_json("leaderboard", PROMPTS)
    assert len(got["pairs"]) == 6                                 # 4 systems, every pair
    for pair in got["pairs"]:
        said = "told apart" if pair["apart"] else "not told apart"
        assert f"{pair['first']} - {pair['second']}: " in text
        assert any(line.startswith(f"  {pair['first']} - {pair['second']}: ") and
                   line.endswith(f": {said}") for line in text.splitlines())
        assert f"- {pair['first'].replace('_', chr(92) + '_')} - " in markdown
    with open(PROMPTS, newline="") as f:
        rows = list(csv.DictReader(f))
    systems = ["baseline", "prompt_v2", "prompt_v3", "prompt_v4"]
    from_python = bed.leaderboard({name: [int(r[name]) for r in rows] for name in systems},
                                  ids=[r["item"] for r in rows])
    ours = from_python.to_dict()
    assert ours["systems"] == got["systems"] and ours["pairs"] == got["pairs"]
    assert bed.leaderboard(PROMPTS).to_dict() == got
    assert repr(from_python).startswith("Result('leaderboard of 4 systems")


def test_the_forest_plot_is_svg_with_every_system(tmp_path):
    plot = tmp_path / "board.svg"
    status, out, err = cli("leaderboard", PROMPTS, "--plot", str(plot))
    assert status == 0 and plot.exists()
    svg = plot.read_text()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    for name in ("baseline", "prompt_v2", "prompt_v3", "prompt_v4"):
        assert f">{name}</text>" in svg
    assert "rank 1-2, tier 1" in svg


def test_markdown_for_a_sweep_and_a_half_width_plan():
    status, out, _ = cli("plan", "--n-grid", "100,200", "--replays", "20", "--resamples", "100",
                         "--output", "markdown")
    assert status == 0
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert len(table) == 4 and all(line.count("|") == table[0].count("|") for line in table)
    assert table[2].startswith("| 100 |") and table[3].startswith("| 200 |")
    plan = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B).cells, C95)
    assert f"| {100 * plan.power(100, True):.1f}% |" in table[2]
    status, out, _ = cli("plan", "--half-width", "0.02", "--output", "markdown")
    assert status == 0
    plan = bed.plan_accuracy(Fraction(1, 2), Fraction("0.02"), C95)
    assert out.splitlines()[1:] == [
        f"- Wald (normal approximation):  n={plan.wald:,}",
        f"- Wilson score interval:        n={plan.wilson:,}",
        f"- Clopper-Pearson (exact):      n={plan.clopper_pearson:,} (and every larger n)",
        "", "(the half-width shrinks as 1/sqrt(n): halving it takes four times the items)"]
    assert plan.wald == 2401              # 1.96**2 * 0.25 / 0.02**2 = 2400.9..., rounded up


def test_plot_of_user_data_draws_the_paired_distribution(tmp_path):
    target = tmp_path / "gap.svg"
    with open(SHIPPED_CSV, "rb") as handle:
        before = handle.read()
    status, out, err = cli("compare", SHIPPED_CSV, "--resamples", "300", "--calibration", "0",
                           "--plot", str(target))
    assert status == 0, err
    svg = ET.parse(target).getroot()
    assert svg.tag.endswith("svg")
    text = "".join(svg.itertext())
    assert "pts" in text and "95%" in text
    with open(SHIPPED_CSV, "rb") as handle:
        assert handle.read() == before                           # the input is untouched


def test_calibration_table_text_markdown_and_json_say_the_same():
    argv = ["calibrate", "--n-grid", "30,60", "--acc-pairs", "0.7/0.8", "--replays", "20"]
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


def test_a_whole_harness_run_in_markdown_has_a_row_per_task_and_the_pooled_table():
    lm = os.path.join(EXAMPLES, "lm-eval")
    argv = ["compare", os.path.join(lm, "main", "acme__base"),
            os.path.join(lm, "main", "acme__tuned"), "--score-col", "acc,exact_match", "--filter",
            "strict-match", "--resamples", "200", "--calibration", "0"]
    data = json.loads(cli(*argv, "--output", "json")[1])
    markdown = cli(*argv, "--output", "markdown")[1]
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    tasks = [t["task"] for t in data["tasks"]]
    assert len(tasks) > 1
    for task in tasks:
        assert sum(line.startswith(f"| {bed._md(task)} |") for line in rows) == 1
    assert markdown.startswith(f"**pooled over all {data['input']['items']:,} items, each "
                               "task a stratum")


def test_the_ledger_summary_in_markdown_counts_each_test_set(tmp_path):
    ledger = str(tmp_path / "evals.jsonl")
    for _ in range(2):
        assert cli("compare", SHIPPED_CSV, "--resamples", "50", "--calibration", "0",
                   "--ledger", ledger)[0] == 0
    text = cli("ledger", ledger, "--output", "markdown")[1]
    data = json.loads(cli("ledger", ledger, "--output", "json")[1])
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 2                    # the header and one row per comparison
    assert len(data["test_sets"]) == 1 and len(data["test_sets"][0]["comparisons"]) == 2


LM = os.path.join(EXAMPLES, "lm-eval", "main")


QUICK = ["--replays", "20", "--resamples", "200"]


COMMANDS = {
    "two systems": ["compare", SHIPPED_CSV],
    "several candidates, BH": ["compare", os.path.join(EXAMPLES, "prompts.csv"), "--systems",
                               "baseline,prompt_v2,prompt_v3", "--adjust", "bh"],
    "harness tasks": ["compare", os.path.join(LM, "acme__base"), os.path.join(LM, "acme__tuned"),
                      "--metric", "acc,exact_match", "--filter", "strict-match"],
    "harness tasks as clusters": ["compare", os.path.join(LM, "acme__base"),
                                  os.path.join(LM, "acme__tuned"), "--metric", "acc,exact_match",
                                  "--filter", "strict-match", "--pool", "clusters"],
    "runs": ["compare", os.path.join(EXAMPLES, "seeds.csv"), "--systems", "baseline,candidate",
             "--run-col", "seed"],
    "real scores": ["compare", os.path.join(EXAMPLES, "judge.csv"), "--systems", "base,v2",
                    "--id-col", "prompt_id"],
    "workbook, strata": ["compare", os.path.join(EXAMPLES, "review.xlsx"), "--a-col", "gpt_base",
                         "--b-col", "gpt_tuned", "--strata-col", "topic"],
    "simulated clusters": ["simulate", "--cluster-size", "4", "--n-items", "200", *QUICK],
    "simulated runs": ["simulate", "--runs", "3", "--n-items", "200", *QUICK],
    "power plan": ["plan", "--n-items", "800"],
    "runs plan": ["plan", "--runs", "3", "--run-sd", "0.02"],
    "sweep": ["plan", "--n-grid", "100,300", *QUICK],
    "accuracy plan": ["plan", "--half-width", "0.02", "--accuracy", "0.9"],
    "calibration table": ["calibrate", "--n-grid", "30", "--acc-pairs", "0.8/0.85",
                          "--replays", "50"],
    "leaderboard": ["leaderboard", os.path.join(EXAMPLES, "leaderboard.csv"), "--id-col", "question"],
    "leaderboard, runs": ["leaderboard", os.path.join(EXAMPLES, "seeds.csv"), "--run-col", "seed"],
    "leaderboard, strata": ["leaderboard", os.path.join(EXAMPLES, "review.xlsx"), "--systems",
                            "gpt_base,gpt_tuned", "--strata-col", "topic", "--id-col",
                            "question"],
    "leaderboard, real scores": ["leaderboard", os.path.join(EXAMPLES, "judge.csv"), "--id-col",
                                 "prompt_id", "--adjust", "bonferroni"],
    "leaderboard, harness tasks": ["leaderboard", os.path.join(EXAMPLES, "helm", "runs", "mysuite"),
                                   "--metric", "exact_match"],
}


def run(argv, *more):
    status, out, err = cli(*argv, *more)
    assert status == 0, (argv, more, err)
    return out


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_format_says_the_same(name):
    argv = COMMANDS[name]
    text = run(argv)
    details = run(argv, "--details") if argv[0] in ("compare", "leaderboard") else text
    markdown = run(argv, "--output", "markdown")
    page = run(argv, "--output", "html")
    body = json.loads(run(argv, "--output", "json"))
    assert body["version"] and text.strip() and markdown.strip()
    assert page.startswith("<p>") and html.unescape(page).count("\n") < text.count("\n") + 5
    if argv[0] == "compare":
        verdict = body["comparisons"][0]["verdict"]
        assert f"verdict: {verdict}" in text and verdict in markdown
        assert f"<p>verdict: {verdict}" in page or f": verdict: {verdict}" in page
        head = "\n".join(text.splitlines()[:2])    # the verdict first (pooled, for tasks)
        assert f"verdict: {verdict}" in head, head
        assert len(details) >= len(text)
    if argv[0] == "leaderboard":
        assert text.splitlines()[0] == body["headline"]
        for system in body["systems"]:
            ranks = system["ranks"]
            shown = str(ranks[0]) if ranks[0] == ranks[1] else f"{ranks[0]}-{ranks[1]}"
            row = next(line for line in text.splitlines()[1:]
                       if line.split()[1:2] == [system["system"]])
            assert row.split()[0] == shown and row.split()[-2:] == [str(system["tier"]),
                                                                    system["groups"]]
            assert f"| {shown} |" in markdown
        assert all(f"{p['first']} - {p['second']}" in details for p in body["pairs"])


@pytest.mark.parametrize("name, kind", [("two systems", "comparison"),
                                        ("several candidates, BH", "comparison"),
                                        ("harness tasks", "tasks"),
                                        ("default simulation", "simulation")])
def test_no_key_of_a_comparison_repeats_at_the_top_of_the_json(name, kind):
    """Schema 2: each comparison's keys are in "comparisons" alone, not again at the top."""
    argv = COMMANDS.get(name, ["simulate", "--replays", "2"])    # the simulation, at its defaults
    body = json.loads(run(argv, "--output", "json"))
    assert body["schema"] == 2 and body["kind"] == kind
    assert body["comparisons"] and set(body) & set(body["comparisons"][0]) == set()


def test_markdown_says_what_was_dropped(tmp_path):
    path = write(tmp_path / "m.csv", "item,a,b\n1,1,0\n2,0,1\n3,,1\n4,1,1\n5,0,0\n6,1,1\n")
    status, out, err = cli("compare", path, "--a-col", "a", "--b-col", "b", "--on-missing",
                           "drop", "--output", "markdown", *FAST)
    assert status == 0, err
    dropped = [line for line in out.splitlines() if "dropped" in line]
    assert len(dropped) == 1 and dropped[0].startswith("dropped (--on-missing drop): 1 (")
    assert dropped[0].endswith("; 5 items kept")


@pytest.mark.parametrize("output", ["text", "markdown", "html"])
def test_a_line_break_in_a_name_cannot_forge_a_line_of_the_report(tmp_path, output):
    """A system name (or a ledger field, or a HELM folder) holding a line break: shown
    escaped, in every format, so it cannot add a verdict line or a table row."""
    data = write(tmp_path / "x.csv", "item,a,b\n1,1,0\n2,0,1\n3,1,1\n4,1,1\n")
    forged = "base\nverdict: better. B is likely better"
    status, out, err = cli("compare", data, "--systems", "a,b", "--names", f"{forged},cand",
                           "--ledger", str(tmp_path / "l.jsonl"), "--output", output, *FAST)
    assert status == 0, err
    assert sum(line.lstrip("*<p>-| ").startswith("verdict: ") for line in out.splitlines()) == 1
    status, summary, err = cli("ledger", str(tmp_path / "l.jsonl"), "--output", output)
    assert status == 0, err
    assert not any(line.lstrip("|- <p>").startswith("verdict: better. B is")
                   for line in summary.splitlines())
    assert "base\\nverdict" in summary or "base\\\\nverdict" in summary


def test_a_detectable_gap_too_small_for_its_decimals_is_not_printed_as_zero():
    """Gaps of 1e-7: 'detects a gap of +-0.0 pts (per-item sd 0.000)' sat beside 'would take
    about 1,442 items'; sizes now print as gaps do, with two significant digits."""
    rng = random.Random(7)
    a = [round(rng.random(), 6) for _ in range(300)]
    b = [x + (1e-7 if i % 2 else -1e-7) + (2e-8 if i % 3 == 0 else 0) for i, x in enumerate(a)]
    text = str(bed.compare(a, b, calibration=0))
    act = next(line for line in text.splitlines() if line.startswith("to act on it"))
    assert "+-0.0 pts" not in act and "0.000)" not in act and "e-0" in act, act


def test_numbers_past_15_digits_print_with_6_significant_digits(tmp_path):
    """Scores of 1e50 printed 50-digit means and ends; past 10^15 a number prints as
    d.ddddde+NN, exactly rounded, its sign kept (the verdict's sentence reads the same)."""
    path = write(tmp_path / "e50.csv", "item,a,b\n1,1e50,-1e50\n2,1e-50,0\n3,2,3\n4,1,2\n")
    status, out, err = cli("compare", path, "--systems", "a,b")
    assert status == 0, err
    assert not any(len(word) > 16 and word.isdigit() for word in
                   out.replace(".", " ").replace(",", " ").split())
    assert "the observed -5.00000e+49 may be noise" in out
    assert "A = a: 2.50000e+49 [1, 7.50000e+49]" in out         # a width of 10^50: whole
    assert bed._round_fixed(bed.Fraction(999_999_5, 10) * 10 ** 20, 1) == "1.00000e+26"


@pytest.mark.parametrize("scale, places", [(1, 3), (100, 2), (1000, 1), (10 ** 6, 0)])
def test_a_wide_intervals_gap_and_ends_print_with_fewer_decimals(scale, places):
    """Three decimals less one per digit of the interval's width past its first: scores of
    about 10^11 had printed 47000573276.665 and ends with three decimals of noise; the gap
    takes its interval's decimals, fewer as well as more (+150.001 beside [+30, +280])."""
    rng = random.Random(scale)
    a = [round(rng.random() * scale, 6) for _ in range(400)]
    b = [round(x + rng.gauss(0.1, 1) * scale, 6) for x in a]
    lines = str(bed.compare(a, b, calibration=0)).splitlines()
    gap = next(line for line in lines if line.startswith("  gap B - A"))
    numbers = re.findall(r"[-+]?\d+(?:\.(\d+))?", gap.replace("95%", ""))
    assert {len(decimals) for decimals in numbers} == {places}, gap
    for system in (line for line in lines if line.startswith(("  A = ", "  B = "))):
        lo, hi = map(float, re.findall(r"\[(\S+), (\S+)\]", system)[0])
        own = 3 - min(3, len(str(int(hi - lo))) - 1)
        assert {len(d) for d in re.findall(r"\d+(?:\.(\d+))?", system)} == {own}, system


def test_a_gap_prints_with_the_digits_of_the_interval_beside_it(tmp_path):
    """Gaps of 0.05 points with ends 0.0496 to 0.0504: the ends take decimals until they print
    apart (one would print them 0.0 and 0.1, two both 0.05), and the gap beside them as many,
    in the verdict, the family table, the leaderboard's pairs and the slice rows (it printed
    +0.1 pts beside [+0.05, +0.05] pts, outside its own interval); p under 1e-300 reads
    p<1e-300."""
    rng, rows = random.Random(4), ["item,base,v2,v3,topic"]
    for i in range(3000):
        a = 0.3 + 0.4 * rng.random()
        rows.append(f"{i},{a!r},{a + rng.gauss(0.0005, 0.0001)!r},"
                    f"{a + rng.gauss(-0.00051, 0.0002)!r},{'abc'[i % 3]}")
    path = write(tmp_path / "tiny.csv", "\n".join(rows) + "\n")
    status, out, _ = cli("compare", path, "--systems", "base,v2,v3")
    assert status == 0
    assert "base (+0.0500 pts): the paired 97.5% CI (simultaneous) [+0.0496, +0.0504] pts" in out
    assert "base (-0.051 pts): the paired 97.5% CI (simultaneous) [-0.052, -0.050] pts" in out
    assert "+0.0500 pts  [+0.0496, +0.0504] pts" in out and "-0.051 pts  [-0.052, -0.050]" in out
    _, out, _ = cli("leaderboard", path, "--systems", "base,v2,v3")
    assert "v2 - base: +0.0500 pts [+0.0496, +0.0504] pts" in out and "p<1e-300," in out
    assert "p=<" not in out
    _, out, _ = cli("compare", path, "--systems", "base,v2", "--by", "topic")
    assert "+0.050 pts  [+0.049, +0.051] pts" in out and "+0.1 pts" not in out


def test_a_familys_monte_carlo_sign_flip_p_gives_its_standard_error_in_text_and_json(tmp_path):
    """40 real-valued items: the sign-flip p of each candidate is drawn from 10,000 random
    patterns; the family's report gives each p's s.e. sqrt(p (1 - p) / R), as a pair's does
    (it printed "(Monte Carlo)" with no error, and the p moved with the seed)."""
    rng = random.Random(11)
    path = tmp_path / "family.csv"
    rows = ["item,base,v2,v3"]
    for i in range(40):
        a = rng.random()
        rows.append(f"{i},{a!r},{a + rng.gauss(0.08, 0.3)!r},"
                    f"{a + rng.gauss(0.02, 0.3) + (5 if i == 3 else 0)!r}")
    write(path, "\n".join(rows) + "\n")
    body = cli_json("compare", str(path), "--systems", "base,v2,v3", "--seed", "1")
    status, out, err = cli("compare", str(path), "--systems", "base,v2,v3", "--seed", "1")
    assert status == 0, err
    for c in body["comparisons"]:
        test = c["test"]
        assert test["permutations"] == 10_000 and not test["exact"] and not test["bound"]
        se = math.sqrt(test["p"] * (1 - test["p"]) / 10_000)
        assert test["mc_error"] == pytest.approx(se, rel=1e-12)
        assert (f"note: {c['candidate']}: the sign-flip test's p is Monte Carlo (10,000 random "
                f"sign patterns): p={test['p']:.4f} +-{se:.4f} (its Monte Carlo s.e.)"
                ) in out.splitlines()
