"""One verdict in every format: each kind of report, as text, JSON and markdown (and with
--details), says the same thing -- the verdict word, the tiers, the numbers the JSON holds.

Every kind the tool prints is here once: a comparison of two systems and of several, whole
harness runs (tasks), several runs per system, clusters and strata, a simulation with
clusters and with runs, the power plan (one size, runs, a sweep), an accuracy plan, the
calibration table, a ledger, and leaderboards with each design."""

import json
import os

import pytest

from helpers import ROOT, SHIPPED_CSV, cli

EX = os.path.join(ROOT, "datasets", "examples")
LM = os.path.join(EX, "lm-eval", "main")
QUICK = ["--replays", "20", "--resamples", "200"]

COMMANDS = {
    "two systems": ["compare", SHIPPED_CSV],
    "several candidates, BH": ["compare", os.path.join(EX, "prompts.csv"), "--systems",
                               "baseline,prompt_v2,prompt_v3", "--adjust", "bh"],
    "harness tasks": ["compare", os.path.join(LM, "acme__base"), os.path.join(LM, "acme__tuned"),
                      "--metric", "acc,exact_match", "--filter", "strict-match"],
    "harness tasks as clusters": ["compare", os.path.join(LM, "acme__base"),
                                  os.path.join(LM, "acme__tuned"), "--metric", "acc,exact_match",
                                  "--filter", "strict-match", "--pool", "clusters"],
    "runs": ["compare", os.path.join(EX, "seeds.csv"), "--systems", "baseline,candidate",
             "--run-col", "seed"],
    "real scores": ["compare", os.path.join(EX, "judge.csv"), "--systems", "base,v2",
                    "--id-col", "prompt_id"],
    "workbook, strata": ["compare", os.path.join(EX, "review.xlsx"), "--a-col", "gpt_base",
                         "--b-col", "gpt_tuned", "--strata-col", "topic"],
    "simulated clusters": ["simulate", "--cluster-size", "4", "--n-items", "200", *QUICK],
    "simulated runs": ["simulate", "--runs", "3", "--n-items", "200", *QUICK],
    "power plan": ["plan", "--n-items", "800"],
    "runs plan": ["plan", "--runs", "3", "--run-sd", "0.02"],
    "sweep": ["plan", "--n-grid", "100,300", *QUICK],
    "accuracy plan": ["plan", "--half-width", "0.02", "--accuracy", "0.9"],
    "calibration table": ["calibrate", "--n-grid", "30", "--acc-pairs", "0.8/0.85",
                          "--replays", "50"],
    "leaderboard": ["leaderboard", os.path.join(EX, "leaderboard.csv"), "--id-col", "question"],
    "leaderboard, runs": ["leaderboard", os.path.join(EX, "seeds.csv"), "--run-col", "seed"],
    "leaderboard, strata": ["leaderboard", os.path.join(EX, "review.xlsx"), "--systems",
                            "gpt_base,gpt_tuned", "--strata-col", "topic", "--id-col",
                            "question"],
    "leaderboard, real scores": ["leaderboard", os.path.join(EX, "judge.csv"), "--id-col",
                                 "prompt_id", "--adjust", "bonferroni"],
    "leaderboard, harness tasks": ["leaderboard", os.path.join(EX, "helm", "runs", "mysuite"),
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
    body = json.loads(run(argv, "--output", "json"))
    assert body["version"] and text.strip() and markdown.strip()
    if argv[0] == "compare":
        verdict = body["comparisons"][0]["verdict"]
        assert f"verdict: {verdict}" in text and verdict in markdown
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
            assert row.split()[0] == shown and row.split()[-1] == str(system["tier"])
            assert f"| {shown} |" in markdown
        assert all(f"{p['first']} - {p['second']}" in details for p in body["pairs"])


@pytest.mark.parametrize("name, kind", [("two systems", "comparison"),
                                        ("several candidates, BH", "comparison"),
                                        ("harness tasks", "tasks"),
                                        ("default simulation", "simulation")])
def test_no_key_of_a_comparison_repeats_at_the_top_of_the_json(name, kind):
    """Schema 2: each comparison's keys are in "comparisons" alone, not again at the top."""
    argv = COMMANDS.get(name, ["--replays", "2"])       # no command: the default, simulate
    body = json.loads(run(argv, "--output", "json"))
    assert body["schema"] == 2 and body["kind"] == kind
    assert body["comparisons"] and set(body) & set(body["comparisons"][0]) == set()
