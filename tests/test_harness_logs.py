"""Logs as today's harnesses write them (inspect-ai 0.3.285, lm-eval 0.4.13, crfm-helm 0.5.16,
each run offline on a small local task with a mock model: tests/fixtures/*/make_*, VERSIONS.txt).

Every number is checked against the fixtures' truth.json, computed from the raw logs by the
fixture scripts with plain json (not by the tool), and against the harnesses' own totals.
Current Inspect .eval members are Zstandard-compressed: on a Python without
``compression.zstd`` the tests lend the reader a decompressor (tests/zstd_decode.py, pure
Python) under the name of the optional ``zstandard`` module, and also take it away.
"""

import importlib
import json
import os
import shutil
import sys

import pytest

import bootstrap_eval_deltas as bed
import zstd_decode
from helpers import ROOT, assert_one_line_error, cli, cli_json

EXAMPLES = os.path.join(ROOT, "datasets", "examples")
INSPECT, LM, HELM = (os.path.join(EXAMPLES, name) for name in ("inspect", "lm-eval", "helm"))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def truth(harness):
    with open(os.path.join(FIXTURES, harness, "truth.json"), encoding="utf-8") as handle:
        return json.load(handle)


def one(folder, part):
    """The one file in *folder* whose name holds *part*."""
    names = [n for n in sorted(os.listdir(folder)) if part in n]
    assert len(names) == 1, names
    return os.path.join(folder, names[0])


@pytest.fixture
def zstd(monkeypatch):
    """A Zstandard decompressor for this Python (the optional module, lent by the tests)."""
    if sys.version_info < (3, 14):
        monkeypatch.setitem(sys.modules, "zstandard", zstd_decode)


def body(*argv):
    return cli_json(*argv, "--calibration", "0")


# --- Inspect: Zstandard .eval logs ------------------------------------------------------------

BASE = one(os.path.join(INSPECT, "pair_eval"), "XfrbX")     # mockllm/base
TUNED = one(os.path.join(INSPECT, "pair_eval"), "BmQob")    # mockllm/tuned


def inspect_log(path):
    rel = os.path.relpath(path, INSPECT)
    return next(log for log in truth("inspect")["logs"] if log["path"] == rel)


def headline(log):
    return log["inspect_results"]["scores"][0]["metrics"]["accuracy"]


def test_current_eval_logs_are_zstandard_and_compare_to_inspects_own_numbers(zstd):
    import zipfile
    with zipfile.ZipFile(BASE) as archive:
        assert {info.compress_type for info in archive.infolist()} == {bed._ZSTD}
    got = body("compare", BASE, TUNED)
    assert got["input"]["systems"] == ["mockllm/base", "mockllm/tuned"]
    assert got["comparisons"][0]["accuracy"]["a"] == pytest.approx(headline(inspect_log(BASE)))
    assert got["comparisons"][0]["accuracy"]["b"] == pytest.approx(headline(inspect_log(TUNED)))
    scores = {log: {s["id"]: s["scores"]["match"] == "C" for s in inspect_log(log)["samples"]}
              for log in (BASE, TUNED)}
    b_only = sum(scores[TUNED][i] and not scores[BASE][i] for i in scores[BASE])
    assert got["comparisons"][0]["mcnemar"]["b_only"] == b_only and got["input"]["items"] == 30


def test_without_a_decompressor_one_line_names_both_remedies(monkeypatch):
    real = importlib.import_module

    def without(name, *rest):
        if name in ("zstandard", "compression.zstd"):
            raise ImportError(name)
        return real(name, *rest)
    monkeypatch.setattr(importlib, "import_module", without)
    monkeypatch.delitem(sys.modules, "zstandard", raising=False)
    assert_one_line_error(*cli("compare", BASE, TUNED),
                          "is compressed with Zstandard, which this Python cannot read: run "
                          "'inspect log convert --to json DIR' on the logs, or use Python 3.14")
    folder = os.path.join(INSPECT, "eval_set")
    assert_one_line_error(*cli("compare", folder, "--systems", "mockllm/base,mockllm/tuned"),
                          "is compressed with Zstandard")


def test_a_damaged_zstandard_member_is_one_line(tmp_path, zstd):
    import zipfile
    data = bytearray(open(BASE, "rb").read())
    with zipfile.ZipFile(BASE) as archive:
        info = archive.getinfo("header.json")         # a member the reader needs
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 8
    data[start:start + 40] = bytes(40)
    broken = tmp_path / "broken.eval"
    broken.write_bytes(bytes(data))
    status, out, err = cli("compare", str(broken), TUNED)
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_deflate_logs_of_older_inspect_versions_need_no_decompressor():
    folder = os.path.join(INSPECT, "pair_eval_deflate")
    logs = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    got = body("compare", *logs)
    accuracy = got["comparisons"][0]["accuracy"]
    assert [accuracy["a"], accuracy["b"]] == pytest.approx(
        [headline(inspect_log(p)) for p in logs])


def test_json_logs_read_like_eval_logs():
    folder = os.path.join(INSPECT, "pair_json")
    logs = [one(folder, "ky2TE"), one(folder, "RC7ye")]
    got = body("compare", *logs)
    accuracy = got["comparisons"][0]["accuracy"]
    assert [accuracy["a"], accuracy["b"]] == pytest.approx(
        [headline(inspect_log(p)) for p in logs])
    assert got["input"]["files"][0]["format"] == "inspect"


# --- Inspect: the same test, or refused ---------------------------------------------------------

def test_logs_of_different_tasks_are_refused_naming_both(zstd):
    other = one(os.path.join(INSPECT, "other_task"), "arith")
    assert_one_line_error(*cli("compare", BASE, other), "not the same test")
    status, out, err = cli("compare", BASE, other)
    assert "is task 'capitals'" in err and "is task 'arith'" in err
    assert_one_line_error(*cli("compare", BASE, other, "--on-missing", "drop"),
                          "--allow-different-tasks")
    assert body("compare", BASE, other, "--allow-different-tasks")["input"]["items"] == 30


def test_an_id_whose_input_differs_is_refused_counted_and_quoted(zstd):
    changed = one(os.path.join(INSPECT, "changed_inputs"), "capitals")
    assert_one_line_error(*cli("compare", TUNED, changed),
                          "not the same items: 3 id(s) hold a different input")
    status, out, err = cli("compare", TUNED, changed)
    assert "(first: 5, 10, 20)" in err
    got = body("compare", TUNED, changed, "--allow-different-tasks")
    assert any("3 id(s) hold different inputs" in w for w in got["input"]["warnings"])


# --- Inspect: incomplete runs are loud ----------------------------------------------------------

INCOMPLETE = os.path.join(INSPECT, "incomplete")


@pytest.mark.parametrize("part,fragment", [
    ("YhLom", "is an incomplete run (status error; 7 of 30 samples)"),
    ("ZZ4Ej", "is an incomplete run (status cancelled; 4 of 30 samples)"),
    ("dAoKE", "is an incomplete run (no header: it was stopped; 3 of 30 samples)"),
    ("XnvcT", "a run stopped before its first sample was written"),
])
def test_a_run_that_did_not_end_is_refused_with_its_status_and_samples(zstd, part, fragment):
    assert_one_line_error(*cli("compare", BASE, one(INCOMPLETE, part)), fragment)


def test_allowed_an_incomplete_run_says_so_in_the_verdict_line(zstd):
    log = one(INCOMPLETE, "YhLom")
    status, out, err = cli("compare", BASE, log, "--allow-incomplete")
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.startswith("verdict: ") and "(incomplete run: 7 of 30 samples in " in first
    got = body("compare", BASE, log, "--allow-incomplete")
    scored = [s for s in inspect_log(log)["samples"] if not s["error"]]
    assert got["input"]["items"] == len(scored) and got["input"]["incomplete"]


def test_samples_that_ended_in_an_error_are_counted_in_the_head(zstd):
    log = one(INCOMPLETE, "TMone")               # status success, 2 of 8 samples errored
    status, out, err = cli("compare", TUNED, log, "--on-missing", "drop")
    lines = out.splitlines()
    assert status == 0 and lines[1].startswith("warning: 2 sample(s) of ")
    assert "ended in an error, with no score (first: 4, 7)" in lines[1]
    got = body("compare", TUNED, log, "--on-missing", "drop")
    assert got["comparisons"][0]["accuracy"]["b"] == \
        pytest.approx(headline(inspect_log(log)))                          # 6 scored
    assert got["input"]["items"] == 6


# --- Inspect: folders as they are written -------------------------------------------------------

def test_an_eval_set_folder_is_read_without_its_listing(zstd):
    folder = os.path.join(INSPECT, "eval_set")
    assert_one_line_error(*cli("compare", folder),
                          "holds the runs of 2 model(s) (mockllm/tuned, mockllm/base); name "
                          "two or more, the baseline first, with --systems")
    got = body("compare", folder, "--systems", "mockllm/base,mockllm/tuned")
    logs = {(log["model"], log["task"]): headline(log) for log in truth("inspect")["logs"]
            if log["path"].startswith("eval_set/")}
    for task in got["tasks"]:
        row = task["comparisons"][0]
        assert row["accuracy"]["a"] == pytest.approx(logs[("mockllm/base", task["task"])])
        assert row["accuracy"]["b"] == pytest.approx(logs[("mockllm/tuned", task["task"])])
    assert sorted(t["task"] for t in got["tasks"]) == ["arith", "capitals"]


def test_a_retried_task_uses_the_log_that_ended_and_says_so(tmp_path, zstd):
    retried = os.path.join(INSPECT, "retried")
    shutil.copytree(retried, tmp_path / "again")
    got = body("compare", retried, str(tmp_path / "again"))
    assert "the one that ended used" in got["input"]["dropped_note"]
    assert got["input"]["items"] == 6 and got["comparisons"][0]["gap"] == 0


def test_epochs_follow_the_reducer_the_log_names(zstd):
    folder = os.path.join(INSPECT, "epochs")
    mode, mean = one(folder, "8aaUP"), one(folder, "357Nq")
    got = body("compare", mode, mean)
    first = got["comparisons"][0]
    assert first["accuracy"]["a"] == pytest.approx(headline(inspect_log(mode)))       # 0.25
    assert first["accuracy"]["b"] == pytest.approx(headline(inspect_log(mean)))
    assert "epochs reduced by mode, as the log's reducer; Inspect's headline 0.25" in \
        got["input"]["dropped_note"]
    assert first["runs"]["a"]["runs"] == 1 and first["runs"]["b"]["runs"] == 3


def test_a_dict_valued_score_lists_its_keys_and_the_spelling(zstd):
    folder = os.path.join(INSPECT, "dict_scores")
    logs = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    assert_one_line_error(*cli("compare", *logs), "scorer correct_fast gives several values "
                          "(correct, fast); choose one with --score-col correct_fast.correct")
    assert body("compare", *logs, "--scorer", "correct_fast.fast")["input"]["items"] == 5


# --- lm-evaluation-harness ---------------------------------------------------------------------

MAIN = os.path.join(LM, "main")


def lm_truth(path):
    rel = os.path.relpath(path, LM)
    return next(f for f in truth("lm-eval")["samples_files"] if f["path"] == rel)


def test_two_lm_eval_folders_compare_task_by_task_to_the_harness_aggregates():
    base, tuned = os.path.join(MAIN, "acme__base"), os.path.join(MAIN, "acme__tuned")
    assert_one_line_error(*cli("compare", base, tuned, "--metric", "acc,exact_match"),
                          "offers 2 choices of filter (strict-match, flexible-extract)")
    got = body("compare", base, tuned, "--metric", "acc,exact_match", "--filter", "strict-match")
    assert got["input"]["systems"] == ["acme/base", "acme/tuned"]
    for task in got["tasks"]:
        metric = "exact_match,strict-match" if task["task"] == "gen_arith" else "acc,none"
        for which, folder in (("a", base), ("b", tuned)):
            want = lm_truth(one(folder, f"samples_{task['task']}_"))["aggregates"][metric]
            assert task["comparisons"][0]["accuracy"][which] == pytest.approx(want)
    whole = body("compare", MAIN, "--systems", "acme/base,acme/tuned", "--metric",
                 "acc,exact_match", "--filter", "strict-match")
    assert whole["tasks"] == got["tasks"]


def test_a_filter_the_logs_do_not_offer_is_refused_with_the_filters():
    single = one(os.path.join(LM, "single_filter", "acme__tuned"), "gen_arith")
    assert_one_line_error(*cli("compare", single, single, "--filter", "nosuch"),
                          "no filter 'nosuch' (the file offers: flexible-extract)")
    assert_one_line_error(*cli("compare", os.path.join(MAIN, "acme__base"),
                               os.path.join(MAIN, "acme__tuned"), "--metric", "acc,exact_match",
                               "--filter", "nosuch"), "no filter 'nosuch'")
    table = os.path.join(EXAMPLES, "judge.csv")
    assert_one_line_error(*cli("compare", table, "--systems", "base,v2", "--id-col",
                               "prompt_id", "--filter", "x"),
                          "--filter chooses within an lm-evaluation-harness log")
    assert_one_line_error(*cli("compare", table, "--systems", "base,v2", "--id-col",
                               "prompt_id", "--split", "valid"), "--split chooses within a HELM")


def test_lm_eval_tasks_of_another_name_or_other_docs_are_refused():
    base = os.path.join(MAIN, "acme__base")
    capitals, colors = one(base, "samples_mc_capitals_"), one(base, "samples_mc_colors_")
    assert_one_line_error(*cli("compare", capitals, colors, "--metric", "acc"),
                          "not the same test")
    changed = one(os.path.join(LM, "changed_docs", "acme__tuned"), "mc_capitals")
    assert_one_line_error(*cli("compare", capitals, changed, "--metric", "acc"),
                          "not the same items: 3 id(s) hold a different input")
    status, out, err = cli("compare", capitals, changed, "--metric", "acc")
    assert "(first: 3, 11, 22)" in err


# --- HELM -------------------------------------------------------------------------------------

SUITE = os.path.join(HELM, "runs", "mysuite")


def helm_truth(model, scenario, suite="mysuite"):
    return next(r for r in truth("helm")["runs"] if r["model"] == model and r["suite"] == suite
                and r["scenario_name"] == scenario)


def test_a_helm_suite_folder_compares_two_models_chosen_by_name():
    assert_one_line_error(*cli("compare", SUITE, "--metric", "exact_match"),
                          "holds the runs of 2 model(s) (mock/parity-a, mock/parity-b)")
    got = body("compare", SUITE, "--systems", "mock/parity-a,mock/parity-b", "--metric",
               "exact_match")
    for task in got["tasks"]:
        for which, model in (("a", "mock/parity-a"), ("b", "mock/parity-b")):
            want = helm_truth(model, task["task"])["recomputed"]["mean_of_trial_means"]
            assert task["comparisons"][0]["accuracy"][which] == pytest.approx(want)


def test_symlinked_helm_run_folders_are_followed(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in os.listdir(SUITE):
        os.symlink(os.path.join(SUITE, name), suite / name)
    os.symlink(suite, suite / "loop")                     # a cycle is visited once
    got = body("compare", str(suite), "--systems", "mock/parity-a,mock/parity-b", "--metric",
               "exact_match")
    plain = body("compare", SUITE, "--systems", "mock/parity-a,mock/parity-b", "--metric",
                 "exact_match")
    assert got["tasks"] == plain["tasks"]


def test_a_task_whose_runs_differ_is_compared_single_run_and_says_so():
    trials = os.path.join(HELM, "runs", "trialsuite")
    got = body("compare", trials, "--systems", "mock/parity-a,mock/parity-b", "--metric",
               "exact_match")
    assert got["comparisons"][0]["runs"] is None and "3 and 1 runs: compared single-run" in \
        got["input"]["dropped_note"]
    want = helm_truth("mock/parity-a", "simple_classification", "trialsuite")
    assert got["comparisons"][0]["accuracy"]["a"] == \
        pytest.approx(want["recomputed"]["pooled_mean"])
