"""Files as the harnesses and spreadsheets write them: lm-evaluation-harness samples,
Inspect logs (.json and .eval), HELM per-instance stats, JSON documents, BOM/CRLF CSVs;
system names; the engine chosen by --engine auto."""

import hashlib
import json
import os
import random
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
from helpers import ROOT, assert_one_line_error, cli, cli_json

EXAMPLES = os.path.join(ROOT, "datasets", "examples")
LM = os.path.join(EXAMPLES, "lm-eval")
BASE_DIR = os.path.join(LM, "main", "acme__base")
INSPECT_JSON = os.path.join(EXAMPLES, "inspect", "pair_json")


def lm_file(folder, task):
    return next(os.path.join(folder, name) for name in sorted(os.listdir(folder))
                if name.startswith(f"samples_{task}_"))


def inspect_file(which):
    return os.path.join(INSPECT_JSON, next(n for n in sorted(os.listdir(INSPECT_JSON))
                                           if ("ky2TE" if which == "base" else "RC7ye") in n))


def body(*argv):
    return cli_json(*argv, "--resamples", "300", "--calibration", "0")


# --- lm-evaluation-harness ----------------------------------------------------------------------

def test_a_nan_in_an_unused_lm_eval_field_is_fine(tmp_path):
    lines = open(lm_file(BASE_DIR, "mc_capitals"), encoding="utf-8").read().splitlines()
    changed = [line.replace('"acc_norm": 1.0', '"acc_norm": NaN') for line in lines]
    assert changed != lines
    base = tmp_path / "samples_mc_capitals_2025-01-01T00-00-00.0.jsonl"
    cand = tmp_path / "samples_mc_capitals_2025-01-02T00-00-00.0.jsonl"
    base.write_text("\n".join(changed) + "\n")
    cand.write_text("\n".join(lines) + "\n")
    got = body("--baseline", str(base), "--candidate", str(cand), "--id-col", "doc_id",
               "--metric", "acc")
    assert got["comparisons"][0]["gap"] == 0 and got["input"]["items"] == 30
    assert_one_line_error(*cli("--baseline", str(base), "--candidate", str(cand), "--id-col",
                               "doc_id", "--metric", "acc_norm"), "NaN is not a finite number")


# --- Inspect --------------------------------------------------------------------------------------

def test_inspect_values_are_mapped_as_inspect_maps_them():
    assert bed._inspect_value("C", "x") == 1 and bed._inspect_value("I", "x") == 0
    assert bed._inspect_value("P", "x") == Fraction(1, 2) and bed._inspect_value("N", "x") == 0
    assert bed._inspect_value("yes", "x") == 1 and bed._inspect_value(Fraction(3, 4), "x") == \
        Fraction(3, 4)
    assert bed._inspect_value(bed._Unusable("NaN", "unscored"), "x") is bed._MISSING


def inspect_log(tmp_path, name, values, model="m/a", scorer="match"):
    samples = [{"id": i, "epoch": 1, "scores": {scorer: {"value": v}}}
               for i, v in enumerate(values, start=1)]
    log = {"version": 2, "status": "success", "eval": {"task": "t", "model": model},
           "samples": samples}
    path = tmp_path / name
    path.write_text(json.dumps(log, indent=2).replace('"value": "NaN"', '"value": NaN'))
    return str(path)


def test_an_unscored_inspect_sample_is_missing_and_counted(tmp_path):
    base = inspect_log(tmp_path, "a.json", ["C", "I", "NaN", "C", "P"])
    cand = inspect_log(tmp_path, "b.json", ["C", "C", "C", "I", "C"], model="m/b")
    assert_one_line_error(*cli("--baseline", base, "--candidate", cand),
                          "1 row(s) with a missing score")
    got = body("--baseline", base, "--candidate", cand, "--on-missing", "drop")
    assert got["input"]["items"] == 4
    assert got["comparisons"][0]["accuracy"]["a"] == pytest.approx(0.625)


def test_an_unknown_inspect_scorer_lists_the_scorers(tmp_path):
    base = inspect_log(tmp_path, "a.json", ["C", "I"])
    cand = inspect_log(tmp_path, "b.json", ["I", "C"], model="m/b")
    assert_one_line_error(*cli("--baseline", base, "--candidate", cand, "--scorer", "choice"),
                          "no scorer 'choice' (the file offers: match)")


def test_an_inspect_log_given_as_a_table_is_explained():
    assert_one_line_error(*cli("--csv", inspect_file("base")),
                          "compare two runs with: compare BASELINE_LOG CANDIDATE_LOG")


# --- HELM ------------------------------------------------------------------------------------------

def test_names_override_what_the_files_say():
    got = body("--baseline", inspect_file("base"), "--candidate",
               inspect_file("tuned"), "--names", "before,after")
    assert got["input"]["systems"] == ["before", "after"]
    assert_one_line_error(*cli("--baseline", inspect_file("base"), "--candidate",
                               inspect_file("tuned"), "--names", "x"),
                          "--names needs 2 names")


def test_a_json_object_holding_one_list_of_records(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"meta": {"v": 1}, "rows": [
        {"id": i, "a": i % 2, "b": (i // 2) % 2} for i in range(20)]}, indent=1))
    got = body("--csv", str(path), "--a-col", "a", "--b-col", "b", "--id-col", "id")
    assert got["source"] == "json" and got["input"]["items"] == 20


def test_bom_and_crlf_are_read_and_the_hash_is_of_the_raw_bytes(tmp_path):
    raw = "\ufeffitem,a,b\r\n1,1,0\r\n2,0,1\r\n3,1,1\r\n\r\n".encode()
    path = tmp_path / "excel.csv"
    path.write_bytes(raw)
    got = body("--csv", str(path), "--a-col", "a", "--b-col", "b")
    assert got["input"]["sha256"] == hashlib.sha256(raw).hexdigest()
    assert got["input"]["items"] == 3


def test_pandas_to_csv_output_still_works(tmp_path):
    path = tmp_path / "pandas.csv"
    path.write_text(",item,a,b\n0,1,True,False\n1,2,False,True\n2,3,True,True\n")
    got = body("--csv", str(path), "--a-col", "a", "--b-col", "b")
    assert got["comparisons"][0]["accuracy"] == {"a": pytest.approx(2 / 3),
                                                 "b": pytest.approx(2 / 3)}


# --- engines -------------------------------------------------------------------------------------

def test_auto_keeps_the_stream_engine_for_the_article_and_says_when_it_does_not(tmp_path):
    rng = random.Random(1)
    path = tmp_path / "big.csv"
    path.write_text("item,a,b\n" + "".join(f"{i},{int(rng.random() < 0.7)},"
                                           f"{int(rng.random() < 0.72)}\n" for i in range(30_000)))
    got = json.loads(cli("--csv", str(path), "--a-col", "a", "--b-col", "b", "--json",
                         "--calibration", "0", "--resamples", "2000")[1])
    assert got["comparisons"][0]["engine"] == "counts" and got["params"]["engine"] == "auto"
    status, out, _ = cli("--csv", str(path), "--a-col", "a", "--b-col", "b",
                         "--calibration", "0", "--details", "--resamples", "2000")
    assert "chosen by --engine auto" in out
    from helpers import SHIPPED_CSV
    assert body("--csv", SHIPPED_CSV)["comparisons"][0]["engine"] == "stream"
    exact = json.loads(cli("--csv", SHIPPED_CSV, "--json", "--calibration", "0")[1])
    exact = exact["comparisons"][0]
    assert exact["engine"] is None and exact["method"] == "exact"      # nothing resampled


def test_counts_over_distinct_values_draw_the_bootstrap_distribution():
    """Resampled sums of a column with few values: mean n*mu and variance n*sigma^2."""
    column = [0, 0, 1, 3, 3, 3, 7, 7, 10, 10] * 30
    sums = bed._value_counts_sums(random.Random(3), column, 20_000)
    n = len(column)
    mu = sum(column) / n
    var = sum((x - mu) ** 2 for x in column) / n
    mean = sum(sums) / len(sums)
    spread = sum((s - mean) ** 2 for s in sums) / (len(sums) - 1)
    assert abs(mean - n * mu) < 4 * (n * var / len(sums)) ** 0.5
    assert abs(spread / (n * var) - 1) < 0.04


def test_counts_and_stream_agree_on_real_scores(tmp_path):
    path = os.path.join(EXAMPLES, "judge.csv")
    args = ["--csv", path, "--systems", "base,v2", "--id-col", "prompt_id"]
    stream = cli_json(*args, "--engine", "stream", "--resamples", "4000", "--calibration", "0")
    counts = cli_json(*args, "--engine", "counts", "--resamples", "4000", "--calibration", "0")
    stream, counts = stream["comparisons"][0], counts["comparisons"][0]
    for end in (0, 1):
        assert abs(stream["ci"]["paired"][end] - counts["ci"]["paired"][end]) < 0.06


def test_flag_only_refusals_come_before_reading():
    assert_one_line_error(*cli("--csv", "/dev/zero", "--n-items", "5"),
                          "--n-items does not apply to compare")


def test_help_names_the_commands_that_exist():
    import contextlib
    import io
    texts = {}
    for command in (None,) + tuple(bed._COMMANDS):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            bed.main(([command] if command else []) + ["--help"])
        texts[command] = " ".join(out.getvalue().split())
    assert "python3 bootstrap_eval_deltas.py compare results.csv" in texts[None]
    assert all(f"python3 bootstrap_eval_deltas.py {command} " in text or command is None
               for command, text in texts.items())
    assert "exact up to 20 nonzero differences" in texts["compare"]
    assert max(len(text) for text in texts.values()) < 9000


# --- whole harness runs ----------------------------------------------------------------------

def test_a_composite_id_joins_files_holding_several_tasks(tmp_path):
    rows = ["task,doc_id,acc"]
    rows_b = ["task,doc_id,acc"]
    rng = random.Random(2)
    for task in ("t1", "t2"):
        for doc in range(30):                   # doc_id restarts in each task
            rows.append(f"{task},{doc},{int(rng.random() < 0.6)}")
            rows_b.append(f"{task},{doc},{int(rng.random() < 0.7)}")
    base, cand = tmp_path / "base.csv", tmp_path / "cand.csv"
    base.write_text("\n".join(rows) + "\n")
    cand.write_text("\n".join(rows_b) + "\n")
    assert_one_line_error(*cli("--baseline", str(base), "--candidate", str(cand),
                               "--score-col", "acc", "--id-col", "doc_id"),
                          "30 id(s) appear more than once")
    got = body("--baseline", str(base), "--candidate", str(cand), "--score-col", "acc",
               "--id-col", "task,doc_id")
    assert got["input"]["items"] == 60
