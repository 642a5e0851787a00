"""A release gate for CI, and a ledger of every comparison made on a test set."""

import errno
import hashlib
import json
import os
import random
import subprocess
import sys
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
from helpers import ROOT, assert_one_line_error, cli

C95 = Fraction("0.95")


def table_file(tmp_path, n, acc_a, acc_b, seed=1, name="t.csv"):
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
    return cli(*argv, "--resamples", "500", "--calibration", "0")


# --- the rule -----------------------------------------------------------------------------------

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
    clear = table_file(tmp_path, 4000, 0.70, 0.75, name="clear.csv")    # +5 pts, tight
    status, out, _ = run("--csv", clear, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "1.0")
    assert status == 0 and "gate: PASS (superiority at +1.0 pts)" in out
    status, out, _ = run("--csv", clear, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "8")
    assert status == 1 and "gate: FAIL (superiority at +8.0 pts)" in out
    body = json.loads(run("--csv", clear, "--a-col", "a", "--b-col", "b", "--gate",
                          "--min-delta", "8", "--json")[1])
    gate = body["comparisons"][0]["decision"]["gate"]
    assert body["gate_passed"] is False and gate["passed"] is False
    assert gate["margin"] == pytest.approx(0.08)
    assert gate["kind"] == "superiority" and "rule" in gate


def test_non_inferiority_statuses(tmp_path):
    close = table_file(tmp_path, 4000, 0.70, 0.698, name="close.csv")   # -0.2 pts
    status, out, _ = run("--csv", close, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "-1.5")
    assert status == 0 and "gate: PASS (non-inferiority at -1.5 pts)" in out
    worse = table_file(tmp_path, 4000, 0.70, 0.66, name="worse.csv")    # -4 pts
    status, out, _ = run("--csv", worse, "--a-col", "a", "--b-col", "b", "--gate",
                         "--min-delta", "-1.5")
    assert status == 1 and "gate: FAIL (non-inferiority at -1.5 pts)" in out


def test_gate_bad_input_is_status_2(tmp_path):
    assert_one_line_error(*cli("--min-delta", "1"), "--min-delta is the margin of the gate; give --gate too")
    assert_one_line_error(*cli("--gate", "--n-grid", "100,200"), "--gate does not apply to plan")
    assert_one_line_error(*cli("--csv", str(tmp_path / "none.csv"), "--gate"), "cannot read")


def test_several_candidates_are_each_gated_with_the_family_adjustment(tmp_path):
    rng = random.Random(3)
    lines = ["item,base,good,meh"]
    for i in range(3000):
        u = rng.random()
        lines.append(f"{i},{int(u < 0.6)},{int(u < 0.68)},{int(u < 0.605)}")
    path = tmp_path / "f.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, _ = run("--csv", str(path), "--systems", "base,good,meh", "--gate",
                         "--min-delta", "1")
    assert status == 1
    assert "good: gate: PASS" in out and "meh: gate: FAIL" in out
    assert "simultaneous 97.5% CI" in out


def test_the_gates_false_pass_rate_at_the_margin_is_within_error():
    """True gap = margin = 1 pt: the gate may pass only by chance, at most 2.5%."""
    status, out, _ = cli("--acc-a", "0.72", "--acc-b", "0.73", "--n-items", "3000",
                         "--replays", "1000", "--resamples", "1000", "--gate", "--min-delta",
                         "1", "--json", "--engine", "counts")
    cov = json.loads(out)["coverage"]["gate"]
    assert cov["passes"] <= 0.025 + 2.5 * cov["passes_se"] + 1e-9
    assert cov["passes"] >= 0.025 - 4 * max(cov["passes_se"], 0.005)


# --- the ledger ---------------------------------------------------------------------------------

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
        body = json.loads(run("--csv", other, "--a-col", "a", "--b-col", "b", "--ledger",
                              str(ledger), "--json")[1])
        ps.append(body["comparisons"][0]["test"]["p"])
        assert body["ledger"]["first"] == body["ledger"]["total"]
    entries = bed.read_ledger(str(ledger))
    assert len(entries) == 3
    # same items and same baseline scores: the same test set, whatever the candidate
    assert len({e.test_set for e in entries}) == 1
    assert body["ledger"]["total"] == 3
    assert body["ledger"]["p_holm"][0] == pytest.approx(bed.holm(ps)[-1])
    status, text, _ = run("--csv", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger))
    assert "ledger: comparison 4 of 4 on this test set" in text


def test_a_reexport_with_other_columns_is_the_same_test_set(tmp_path):
    path = table_file(tmp_path, 200, 0.7, 0.72)
    lines = open(path).read().splitlines()
    other = tmp_path / "export.csv"
    other.write_text("\n".join(["extra," + lines[0]] + [f"x,{line}" for line in lines[1:]])
                     + "\n")
    a = bed.read_table(path, bed.TableSpec(("a", "b")))
    b = bed.read_table(str(other), bed.TableSpec(("a", "b")))
    assert bed._test_set_digest(a) == bed._test_set_digest(b)


def test_a_truncated_last_line_is_refused_with_its_number_and_left_alone(tmp_path):
    ledger = tmp_path / "evals.jsonl"
    data = table_file(tmp_path, 300, 0.7, 0.72)
    assert run("--csv", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger))[0] == 0
    with open(ledger, "ab") as handle:
        handle.write(b'{"tool": "bootstrap-eval-deltas", "ledg')
    before = hashlib.sha256(ledger.read_bytes()).hexdigest()
    assert_one_line_error(*run("--csv", data, "--a-col", "a", "--b-col", "b", "--ledger",
                               str(ledger)), "line 2 is truncated")
    assert hashlib.sha256(ledger.read_bytes()).hexdigest() == before


def test_a_foreign_ledger_is_refused_and_never_rewritten(tmp_path):
    ledger = tmp_path / "notes.jsonl"
    ledger.write_text('{"hello": "world"}\n')
    data = table_file(tmp_path, 300, 0.7, 0.72)
    assert_one_line_error(*run("--csv", data, "--a-col", "a", "--b-col", "b", "--ledger",
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


def test_two_processes_appending_at_once_leave_every_line_whole(tmp_path):
    ledger = str(tmp_path / "shared.jsonl")
    data = table_file(tmp_path, 100, 0.7, 0.72)
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
        data = table_file(tmp_path, 1500, 0.70, 0.74, seed=k, name=f"d{k}.csv")
        run("--csv", data, "--a-col", "a", "--b-col", "b", "--ledger", str(ledger))
    status, out, _ = cli("--ledger-summary", str(ledger))
    assert status == 0 and out.startswith(f"ledger {ledger}: 2 test set(s), 2 comparison(s)")
    body = json.loads(cli("--ledger-summary", str(ledger), "--json")[1])
    assert len(body["test_sets"]) == 2
    assert_one_line_error(*cli("--ledger-summary", str(ledger), "--n-items", "5"),
                          "--n-items does not apply to ledger")
    status, out, _ = cli("ledger", str(ledger))
    assert status == 0 and out.startswith(f"ledger {ledger}: 2 test set(s), 2 comparison(s)")


def test_a_ledger_append_that_fails_midway_leaves_the_ledger_as_it_was(tmp_path, monkeypatch):
    """A full disk after part of the lines were written: the file is cut back to its old
    bytes, one line says so, and nothing else is written (the plot waits for the ledger)."""
    ledger = tmp_path / "l.jsonl"
    prompts = os.path.join(ROOT, "datasets", "examples", "prompts.csv")
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
    prompts = os.path.join(ROOT, "datasets", "examples", "prompts.csv")
    for target in ("/dev/zero", "/dev/null"):
        assert_one_line_error(*cli("compare", prompts, "--systems", "baseline,prompt_v2",
                                   "--ledger", target),
                              f"cannot write {target}: it is not a regular file (a device, pipe "
                              "or socket); --ledger writes regular files only")
    assert_one_line_error(*cli("ledger", "/dev/zero"),
                          "the ledger /dev/zero is not a regular file (a folder, device or pipe)")
