"""The command line: flags, refusals of flags, outputs, exit statuses, signals and hostile command lines."""

import re
import contextlib
import csv
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import pytest

import bootstrap_eval_deltas as bed

from helpers import (
    AB,
    EXAMPLES,
    FAST,
    ROOT,
    SCRIPT,
    SHIPPED_CSV,
    assert_one_line_error,
    clear_gap_csv,
    cli,
    cli_help,
    cli_json,
    write,
    xlsx_bytes,
    zip_bytes,
)


@pytest.mark.parametrize("argv, fragment", [
    (["compare", SHIPPED_CSV, "--plot", "a.svg", "--plot", "b.svg"],
     "--plot is given twice (also as --plot); give it once"),
    (["compare", SHIPPED_CSV, "--seed=1", "--seed", "2"], "--seed is given twice"),
    (["compare", SHIPPED_CSV, "--score-col", "x", "--metric", "y"],
     "--metric and --score-col name one thing; give one"),
    (["simulate", "--replays", "0", "--replays", "0"], "--replays is given twice"),
])
def test_a_flag_given_twice_is_refused_not_overwritten(argv, fragment):
    assert_one_line_error(*cli(*argv), fragment)


def test_a_flag_that_collects_a_list_may_repeat(tmp_path):
    runs = []
    for name in ("base", "one", "two"):
        path = tmp_path / f"{name}.csv"
        path.write_text("item,score\n" + "".join(f"{i},{(i * len(name)) % 3 % 2}\n"
                                                  for i in range(1, 41)))
        runs.append(str(path))
    status, out, err = cli("compare", "--baseline", runs[0], "--candidate", runs[1],
                           "--candidate", runs[2], "--score-col", "score", "--id-col", "item")
    assert status == 0, err
    assert "one" in out and "two" in out


def test_a_switch_given_twice_is_the_switch():
    twice = cli("simulate", "--replays", "0", "--json", "--json")
    assert twice[0] == 0 and twice == cli("simulate", "--replays", "0", "--json")


@pytest.mark.parametrize("error,status,message", [
    (RecursionError("too deep"), 70, "internal error: RecursionError: too deep"),
    (MemoryError(), 70, "error: out of memory; try fewer --resamples or --replays"),
])
def test_main_turns_the_last_resort_errors_into_one_line(monkeypatch, error, status, message):
    import helpers

    def fail(args):
        raise error
    monkeypatch.setattr(bed, "_run", fail)
    got, out, err = helpers.cli("simulate", "--replays", "0", "--resamples", "10")
    assert got == status and out == "" and err.count("\n") == 1 and message in err


class FakeTTY:
    """A stderr stand-in that claims to be a terminal."""

    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_draws_only_on_a_tty_after_the_delay():
    tty = FakeTTY()
    progress = bed._Progress("work", stream=tty, delay=0.0)
    progress(5, 10)
    progress(10, 10)
    progress.close()
    assert "work: 5/10 (50%)" in tty.text and tty.text.endswith("\r\033[K")
    quiet = FakeTTY()
    late = bed._Progress("work", stream=quiet, delay=3600.0)
    late(5, 10)
    late.close()
    assert quiet.text == ""
    pipe = bed._Progress("work", stream=__import__("io").StringIO(), delay=0.0)
    assert not pipe.enabled


def test_progress_never_changes_stdout_and_quiet_silences_it(monkeypatch):
    import contextlib
    import io
    from helpers import cli

    monkeypatch.setattr(bed, "_PROGRESS_DELAY", 0.0)
    plain = cli("simulate", "--replays", "40", "--seed", "3")
    for extra, drawn in (([], True), (["--quiet"], False)):
        tty, out = FakeTTY(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(tty):
            status = bed.main(["simulate", "--replays", "40", "--seed", "3", *extra])
        assert status == 0 and out.getvalue() == plain[1]
        assert ("coverage replays:" in tty.text) == drawn, tty.text


BAD_PLANNING = [
    (["plan", "--n-grid", ""], "empty grid"),
    (["plan", "--n-grid", "500,250"], "strictly increasing"),
    (["plan", "--n-grid", "500,500"], "strictly increasing"),
    (["plan", "--n-grid", "1,10"], "--n-grid sizes must lie between 2"),
    (["plan", "--n-grid", "10,x"], "comma-separated list"),
    (["plan", "--n-grid", "100,200", "--n-items", "100"], "--n-grid replaces --n-items"),
    (["plan", "--n-grid", "100,200", "--replays", "0"], "--replays must be at least 1"),
    (["simulate", "--target-power", "1"], "--target-power must be strictly between 0 and 1"),
    (["simulate", "--target-power", "0"], "--target-power must be strictly between 0 and 1"),
    (["plan", "--half-width", "0"], "--half-width must be a proportion above 0"),
    (["plan", "--half-width", "-0.1"], "--half-width must be a proportion above 0"),
    (["plan", "--half-width", "0.01", "--accuracy", "1.5"], "--accuracy must be strictly between"),
    (["simulate", "--accuracy", "0.5"],
     "--accuracy does not apply to simulate (it is a flag of plan)"),
    (["plan", "--accuracy", "0.5"], "--accuracy goes with --half-width"),
    (["plan", "--half-width", "0.01", "--n-items", "9"], "--n-items do not apply to it"),
    (["simulate", "--plot", "/nonexistent-folder/x.svg"], "cannot write /nonexistent-folder/x.svg"),
    (["simulate", "--engine", "counts", "--write-csv", "x.csv"],
     "counts engine simulates cell counts"),
    (["simulate", "--engine", "fast"], "invalid choice"),
]


@pytest.mark.parametrize("argv,message", BAD_PLANNING, ids=[" ".join(a) for a, _ in BAD_PLANNING])
def test_bad_planning_input(argv, message):
    assert_one_line_error(*cli(*argv), message)


def test_plot_onto_a_folder_is_refused_before_any_work(tmp_path):
    assert_one_line_error(*cli("simulate", "--plot", str(tmp_path)), "it is a folder")
    assert list(tmp_path.iterdir()) == []


def test_flag_only_refusals_come_before_reading():
    assert_one_line_error(*cli("compare", "/dev/zero", "--n-items", "5"),
                          "--n-items does not apply to compare")


# The flat spellings of earlier versions, where a flag chose the command, and the subcommand
# each now is.
FLAT_SPELLINGS = [
    (["--csv", "x.csv"], "compare"),
    (["--baseline", "a", "--candidate", "b"], "compare"),
    (["--half-width", "0.02"], "plan"),
    (["--n-grid", "100,200"], "plan"),
    (["--calibration-table"], "calibrate"),
    (["--ledger-summary", "l.jsonl"], "ledger"),
]


def test_a_flat_spelling_of_earlier_versions_is_refused_naming_its_subcommand(tmp_path,
                                                                               monkeypatch):
    """A flag that chose its command in earlier versions (``--csv FILE``, ``--baseline A
    --candidate B``, ``--half-width``, ``--n-grid``, ``--calibration-table``,
    ``--ledger-summary FILE``) is refused in one line naming the subcommand to use; every
    other test spells the subcommand.  x.csv and l.jsonl exist and are good: a flat spelling
    still run succeeds, not fails with an error that may name its command ("no ledger at")."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SHIPPED_CSV, "x.csv")
    assert cli("compare", "x.csv", "--ledger", "l.jsonl", *FAST)[0] == 0
    for argv, command in FLAT_SPELLINGS:
        assert_one_line_error(*cli(*argv), command)


def test_help_names_the_commands_that_exist():
    texts = {}
    for command in (None,) + tuple(bed._COMMANDS):
        status, out = cli_help(*([command] if command else []))
        assert status == 0
        texts[command] = " ".join(out.split())
    assert "python3 bootstrap_eval_deltas.py compare results.csv" in texts[None]
    assert all(f"python3 bootstrap_eval_deltas.py {command} " in text or command is None
               for command, text in texts.items())
    assert "exact up to 20 nonzero differences" in texts["compare"]
    assert max(len(text) for text in texts.values()) < 9000


def test_runs_flags_are_checked_before_any_work():
    assert_one_line_error(*cli("simulate", "--run-sd", "0.01"), "--run-sd goes with --runs")
    assert_one_line_error(*cli("plan", "--runs", "3", "--n-grid", "100,200"),
                          "--runs plans items x runs at one size")
    assert_one_line_error(*cli("simulate", "--runs", "3", "--run-sd", "0.3"),
                          "--run-sd must lie in")
    assert_one_line_error(*cli("simulate", "--runs", "0"), "--runs must be at least 1")


@pytest.mark.parametrize("argv,fragment", [
    (["calibrate", "--acc-pairs", "0.7,0.8/0.9"], "argument --acc-pairs: not a list of A/B accuracy pairs: '0.7,0.8/0.9'"),
    (["ledger", "a.jsonl", "b.jsonl"], "ledger reads one ledger file"),
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
    # with no command, the words after -- are not flags either: --n-grid=5 does not make it
    # plan (a flag of earlier versions that chose plan, refused or not)
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


GOOD = "item,a,b\n1,1,0\n2,0,1\n3,1,1\n4,1,1\n5,0,0\n"


REAL = "item,a,b\n1,0.5,0.25\n2,0.75,1\n3,0.125,0.5\n4,1,0.5\n5,0,0.25\n"


LONG = "item,system,score\n" + "".join(f"{i},{s},{(i + len(s)) % 2}\n" for i in range(1, 6)
                                       for s in ("base", "new"))


CASES = [
    # which input
    (["compare", "--csv", "g.csv", "--baseline", "g.csv", "--candidate", "g.csv"],
     "use --csv (one file, a column per system) or --baseline/--candidate (one file per run), "
     "not both"),
    (["simulate", "--candidate", "g.csv"],
     "--candidate does not apply to simulate (it is a flag of compare)"),
    (["compare", "g.csv", "--score-col", "a"], "--score-col names the score in one file per system"),
    (["compare", "--baseline", "g.csv"], "--baseline needs at least one --candidate"),
    (["compare", "g.csv", "g.csv", "--systems", "a,b"],
     "with one file per system use --score-col"),
    (["compare", "g.csv", "--tasks", "x"] + AB, "--tasks goes with harness folders or one file per system"),
    (["simulate", "--id-col", "item"], "--id-col does not apply to simulate"),
    # columns and names
    (["compare", "long.csv", "--system-col", "system", "--systems", "base,new"],
     "it needs --score-col"),
    (["compare", "long.csv", "--system-col", "system", "--score-col", "score", "--systems",
      "base,new", "--a-col", "x"], "name the systems with --systems"),
    (["compare", "g.csv", "--names", "one"] + AB, "--names needs 2 names"),
    (["compare", "g.csv", "--names", "x,x"] + AB, "--names repeats a name"),
    (["compare", "g.csv", "--systems", "a,b", "--a-col", "a"], "--systems replaces --a-col"),
    (["compare", "g.csv", "--systems", "a"], "--systems needs a baseline and at least one"),
    # designs
    (["compare", "g.csv", "--strata-col", "a", "--engine", "counts"] + AB,
     "needs the per-item engine"),
    (["compare", "g.csv", "--cluster-col", "item", "--strata-col", "item"] + AB,
     "name the same column"),
    (["compare", "g.csv", "--systems", "a,b,item", "--plot", "p.svg"],
     "--plot draws one comparison"),
    (["compare", "g.csv", "--interval", "score", "--strata-col", "item"] + AB,
     "--interval score covers plain 0/1 items"),
    # data against simulation flags
    (["compare", "g.csv", "--n-items", "50"] + AB, "--n-items does not apply to compare"),
    (["compare", "g.csv", "--write-csv", "o.csv"] + AB, "--write-csv does not apply to compare (it is a flag of simulate)"),
    (["simulate", "--calibration", "10"],
     "--calibration does not apply to simulate (it is a flag of compare)"),
    (["compare", "real.csv", "--interval", "score"] + AB, "needs 0/1 scores; these are real"),
    (["compare", "wide.csv", "--exact"] + AB, "--exact needs 0/1 scores (items resampled one "
     "by one) or scores on a small lattice (at most 100 steps from least to most, clusters of "
     "one size); these are not"),
    (["compare", "real.csv", "--accuracy-interval", "wilson"] + AB,
     "--accuracy-interval needs 0/1 scores"),
    # sweep, calibration table, gate, ledger
    (["plan", "--n-grid", "100,200", "--n-items", "50"], "--n-grid replaces --n-items"),
    (["plan", "--n-grid", "100,200", "--write-csv", "o.csv"], "--write-csv does not apply to plan"),
    (["calibrate", "--n-items", "50"], "--n-items does not apply to calibrate"),
    (["calibrate", "--n-grid", "1,50"], "--n-grid sizes must lie between 2"),
    (["calibrate", "--acc-pairs", "0.5/1"], "accuracies must lie strictly between"),
    (["calibrate", "--replays", "0"], "--replays must be at least 1"),
    (["simulate", "--acc-pairs", "0.5/0.6"],
     "--acc-pairs does not apply to simulate (it is a flag of calibrate)"),
    (["plan", "--half-width", "0.02", "--gate"], "--gate does not apply to plan"),
    (["simulate", "--cluster-size", "5", "--gate"], "needs plain items (not --cluster-size)"),
    (["simulate", "--ledger", "l.jsonl"],
     "--ledger does not apply to simulate (it is a flag of compare)"),
    (["ledger", "l.jsonl", "--n-items", "50"], "--n-items does not apply to ledger"),
    # flags that a mode of a subcommand does not use (issue 22's examples)
    (["compare", "g.csv", "--n-grid", "100,200"] + AB, "--n-grid does not apply to compare"),
    (["plan", "--half-width", "0.015", "--resamples", "10", "--seed", "3"],
     "--resamples, --seed do not apply to it"),
    (["plan", "--replays", "10"], "goes with --n-grid (a simulated sweep)"),
    (["compare"], "compare needs your results"),
    (["compare", "g.csv", "--csv", "g.csv"] + AB,
     "give the files as FILE arguments or with --csv/--baseline/--candidate, not both"),
    (["ledger"], "ledger needs the ledger file"),
    (["simulate", "--seed", "-7"], "--seed must be 0 or more"),
    # runs in the simulator
    (["plan", "--runs", "3", "--n-grid", "100,200"], "--runs plans items x runs at one size"),
    (["simulate", "--runs", "3", "--run-sd", "0.3"], "--run-sd must lie in [0, 0.25)"),
    (["simulate", "--runs", "3", "--run-item-noise", "2"], "--run-item-noise must lie in [0, 1]"),
    (["simulate", "--runs", "3", "--run-sd", "0.2", "--acc-a", "0.999"],
     "is too large for an accuracy"),
]


@pytest.mark.parametrize("argv,fragment", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_flags_that_do_not_go_together(argv, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.csv").write_text(GOOD)
    (tmp_path / "real.csv").write_text(REAL)
    (tmp_path / "wide.csv").write_text(REAL.replace("5,0,", "5,0.0001,"))     # no lattice
    (tmp_path / "long.csv").write_text(LONG)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    status, out, err = cli(*argv)
    assert_one_line_error(status, out, err, fragment)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


FILE_REFUSALS = [
    ("j.csv", '{"item": 1}\n', ["compare", "j.csv", "--input-format", "csv"] + AB,
     "looks like JSON: use --input-format jsonl or --input-format json"),
    ("twice.csv", "item,a,a,b\n1,1,0,1\n2,0,1,1\n", ["compare", "twice.csv"] + AB,
     "column 'a' appears twice in the header"),
    ("long.csv", LONG, ["compare", "long.csv", "--system-col", "system", "--score-col", "score",
                        "--systems", "base,gone"], "no rows for system 'gone' (the system column holds: base, new)"),
    ("one.csv", "item,seed,base,new\n1,1,1,0\n2,1,0,1\n3,1,1,1\n",
     ["compare", "one.csv", "--run-col", "seed", "--systems", "base,new"],
     "the run column 'seed' holds one value (1)"),
    ("lack.csv", "item,system,seed,score\n" + "".join(
        f"{i},{s},{r},{i % 2}\n" for i in range(1, 5) for s in ("base", "new") for r in (1, 2)
        if not (s == "new" and r == 2)),
     ["compare", "lack.csv", "--system-col", "system", "--score-col", "score", "--run-col", "seed",
      "--systems", "base,new"], "system 'new' has no rows for run 2 (runs: 1, 2)"),
    ("multi.csv", 'item,note,a,b\n1,ok,1,0\n2,"two\nlines",0,1\n3,fine,x,1\n',
     ["compare", "multi.csv"] + AB, "multi.csv line 5, column a: 'x' is not a number"),
    ("g.csv", GOOD, ["compare", "nothing_*.csv", "g.csv", "--score-col", "a", "--id-col",
                     "item"], "no file matches 'nothing_*.csv'"),
    ("g.csv", GOOD, ["compare", " , ", "g.csv", "--score-col", "a", "--id-col", "item"],
     "no file named in"),
]


@pytest.mark.parametrize("name,content,argv,fragment", FILE_REFUSALS,
                         ids=[f"{c[0]}: {c[3]}" for c in FILE_REFUSALS])
def test_files_refused_with_the_place_and_the_way_out(name, content, argv, fragment, tmp_path,
                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(content)
    status, out, err = cli(*argv, "--resamples", "50")
    assert_one_line_error(status, out, err, fragment)
    assert (tmp_path / name).read_text() == content


def test_run_files_by_glob_and_by_comma_list_are_the_same_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for system, shift in (("a", 0), ("b", 1)):
        for run in (1, 2, 3):
            rows = "".join(f"{i},{(i + shift * run) % 2}\n" for i in range(1, 21))
            (tmp_path / f"{system}_{run}.csv").write_text("id,score\n" + rows)
    common = ["--score-col", "score", "--id-col", "id", "--resamples", "100", "--output", "json"]
    by_glob = cli("compare", "a_*.csv", "b_*.csv", *common)
    by_list = cli("compare", "a_1.csv,a_2.csv,a_3.csv", "b_1.csv, b_2.csv, b_3.csv", *common)
    assert by_glob[0] == by_list[0] == 0, by_glob[2] + by_list[2]
    glob_json, list_json = (json.loads(got[1])["comparisons"][0] for got in (by_glob, by_list))
    assert glob_json["runs"] == list_json["runs"] and glob_json["runs"]["a"]["labels"] == ["a_1", "a_2", "a_3"]
    assert glob_json["gap"] == list_json["gap"]


def test_a_long_file_with_other_systems_says_they_were_not_compared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = "".join(f"{i},{s},{(i * len(s)) % 2}\n" for i in range(1, 21)
                   for s in ("base", "new", "other"))
    (tmp_path / "long.csv").write_text("item,system,score\n" + rows)
    status, out, err = cli("compare", "long.csv", "--system-col", "system", "--score-col",
                           "score", "--systems", "base,new", "--resamples", "50")
    assert status == 0, err
    assert "rows of 1 other system(s) not compared: other" in out


FEW_RESAMPLES = ["--resamples", "40"]


SIM = ["simulate", "--replays", "0", "--resamples", "40"]


@dataclass
class Case:
    name: str
    argv: list
    status: int
    stderr: str = ""                          # a fragment of the one stderr line
    files: dict = field(default_factory=dict)
    stdin: object = None                      # bytes, "closed", or "file:NAME"
    stdout: str = "capture"                   # capture, full, closed, gone
    env: dict = field(default_factory=dict)
    check: object = None                      # extra check(tmp_path, stdout)


def deep(depth):
    return "[" * depth + "1" + "]" * depth


def jsonl(*records):
    return "".join(json.dumps(r) + "\n" for r in records)


def same_report_as_good(tmp_path, out):
    assert "  A = a: 0.600 [" in out and "  B = b: 0.600 [" in out


def mode_is(expected):
    def check(tmp_path, out):
        assert oct(os.stat(tmp_path / "out.svg").st_mode & 0o777) == oct(expected)
    return check


FILE_CASES = [
    # name, content, extra argv, status, fragment
    ("empty", b"", AB, 2, "is empty"),
    ("header only", b"item,a,b\n", AB, 2, "has a header but no rows"),
    ("NUL bytes", b"item,a,b\n1,1,0\n\x00\x00\n", AB, 2, "a NUL byte; this is a binary file"),
    ("invalid UTF-8", b"item,a,b\n1,1,0\n2,\xff,1\n", AB, 2, "line 3: not UTF-8 text"),
    ("latin-1 header", b"\xe9l\xe8ve,a,b\n1,1,0\n", AB, 2, "line 1: not UTF-8 text"),
    ("ragged short", b"item,a,b\n1,1,0\n2,1\n", AB, 2, "line 3: 2 fields, expected 3"),
    ("ragged long", b"item,a,b\n1,1,0,7\n", AB, 2, "line 2: 4 fields, expected 3"),
    ("unterminated quote", b'item,a,b\n1,"1,0\n2,0,1\n', AB, 2, "line"),
    ("blank line inside", b"item,a,b\n1,1,0\n\n2,0,1\n", AB, 2, "line 3: blank line"),
    ("4,000-digit score", ("item,a,b\n1," + "7" * 4000 + ",0\n2,0,1\n").encode(), AB, 2,
     "more than 50 characters"),
    ("1e309 score", b"item,a,b\n1,1e309,0\n2,0,1\n", AB, 2, "out of range"),
    ("-1e-400 score", b"item,a,b\n1,-1e-400,0\n2,0,1\n", AB, 2, "out of range"),
    ("nan score", b"item,a,b\n1,nan,0\n2,0,1\n", AB, 2, "'nan' is not a finite number"),
    ("Infinity score", b"item,a,b\n1,Infinity,0\n2,0,1\n", AB, 2, "is not a finite number"),
    ("text score", b"item,a,b\n1,yes,0\n2,0,1\n", AB, 2, "'yes' is not a number"),
    ("Arabic-Indic digit", "item,a,b\n1,\u0661,0\n2,0,1\n".encode(), AB, 2, "is not a number"),
    ("full-width digit", "item,a,b\n1,\uff11,0\n2,0,1\n".encode(), AB, 2, "is not a number"),
    ("superscript digit", "item,a,b\n1,\u00b9,0\n2,0,1\n".encode(), AB, 2, "is not a number"),
    ("missing score", b"item,a,b\n1,,0\n2,0,1\n3,1,1\n", AB, 2,
     "1 row(s) with a missing score"),
    ("repeated id", b"item,a,b\n1,1,0\n1,0,1\n2,1,1\n", AB, 2, "1 id(s) appear more than once"),
    ("one item", b"item,a,b\n1,1,0\n", AB, 2, "need at least 2 items"),
    ("no such column", GOOD.encode(), ["--a-col", "a", "--b-col", "c"], 2, "no column 'c'"),
    ("ANSI escape in header", b"item,a\x1b[31m,b\n1,1,0\n2,0,1\n", AB, 2,
     "columns: item, a\\x1b[31m, b"),
    ("one column", b"item\n1\n2\n", AB, 2, "the header has one column"),
    ("ambiguous delimiter", b"item,a;b\n1,1;0\n", AB, 2, "cannot tell the delimiter"),
    ("field over the limit", ("item,a,b,c\n1,1,0,\"" + "x" * (1 << 20 + 1) + "\"\n").encode(),
     AB, 2, "field larger than field limit"),
    ("BOM is read", ("\ufeff" + GOOD).encode(), AB, 0, ""),
    ("CRLF is read", GOOD.replace("\n", "\r\n").encode(), AB, 0, ""),
    ("trailing blank lines are read", (GOOD + "\n\n").encode(), AB, 0, ""),
    ("CRLF, BOM and blank end together", ("\ufeff" + GOOD + "\n").replace("\n", "\r\n").encode(),
     AB, 0, ""),
    ("pandas float ids", b"item,a,b\n1.0,1,0\n2.0,0,1\n3.0,1,1\n4.0,1,1\n5.0,0,0\n", AB, 0, ""),
    ("4,400-digit id stays text", ("item,a,b\n" + "9" * 4400 + ",1,0\n2,0,1\n").encode(), AB,
     0, ""),
    ("scores near the limits", b"item,a,b\n1,1e50,-1e50\n2,1e-50,0\n3,2,3\n", AB, 0, ""),
    ("JSONL NaN in an unused key", jsonl({"a": 1, "b": 0, "x": 1}, {"a": 0, "b": 1})
     .replace('"x": 1', '"x": NaN').encode(), AB, 0, ""),
    ("JSONL NaN in a used key", b'{"a": NaN, "b": 0}\n{"a": 1, "b": 1}\n', AB, 2,
     "key a: NaN is not a finite number"),
    ("JSONL huge integer score", ('{"a": ' + "7" * 4000 + ', "b": 0}\n{"a": 1, "b": 1}\n')
     .encode(), AB, 2, "more than 50 characters"),
    ("JSONL nested 2,000 deep", ('{"a": 1, "b": 0, "x": ' + deep(2000) + "}\n").encode(), AB,
     2, "nested deeper than 512 levels"),
    ("JSONL nested 100 deep is fine", jsonl({"a": 1, "b": 0}, {"a": 0, "b": 1})
     .replace('"b": 1}', '"b": 1, "x": ' + deep(100) + "}").encode(), AB, 0, ""),
    ("JSONL duplicate used key", b'{"a": 1, "a": 0, "b": 0}\n{"a": 1, "b": 1}\n', AB, 2,
     "key 'a' appears twice"),
    ("JSONL duplicate unused key", b'{"a": 1, "b": 0, "x": 1, "x": 2}\n{"a": 1, "b": 1}\n', AB,
     0, ""),
    ("JSONL dotted key also a path", b'{"m.a": 1, "m": {"a": 0}, "b": 0}\n{"m.a": 1, "b": 1}\n',
     ["--a-col", "m.a", "--b-col", "b"], 2, "both a key and a nested path"),
    ("JSONL float ids", jsonl({"item": 1.0, "a": 1, "b": 0}, {"item": 1.5, "a": 0, "b": 1},
                              {"item": 2.0, "a": 1, "b": 1}).encode(), AB, 0, ""),
    ("JSONL not objects", b"[1, 0]\n[0, 1]\n", AB, 2, "expected a JSON object"),
    ("JSONL broken line", b'{"a": 1, "b": 0}\n{"a": 1, "b":\n', AB, 2,
     "line 2: not valid JSON"),
    ("JSONL list score", b'{"a": [1], "b": 0}\n{"a": 1, "b": 1}\n', AB, 2, "is not a number"),
    ("JSON document of records", json.dumps([{"a": 1, "b": 0}, {"a": 0, "b": 1},
                                             {"a": 1, "b": 1}]).encode(), AB, 0, ""),
    ("JSON document without records", b'{\n  "x": 1\n}\n', AB, 2, "expected a list of records"),
    ("Parquet file", b"PAR1\x15\x04\x15" + b"\x00" * 40, AB, 2, "a Parquet file"),
    ("gzip file", b"\x1f\x8b\x08\x00" + b"\x00" * 40, AB, 2, "gzip-compressed"),
    ("old Excel file", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 40, AB, 2, ".xls"),
    ("PDF", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", AB, 2, "a PDF document"),
    ("zip that is no workbook", None, AB, 2, "a zip archive"),
    ("damaged zip", b"PK\x03\x04" + b"\x01" * 60, AB, 2, "damaged"),
    ("xlsx workbook is read", xlsx_bytes([["item", "a", "b"], [1, 1, 0], [2, 0, 1], [3, 1, 1],
                                          [4, 1, 1], [5, 0, 0]]), AB, 0, ""),
]


def file_cases():
    cases = []
    for name, content, argv, status, fragment in FILE_CASES:
        content = zip_bytes({"readme.txt": "hello"}) if content is None else content
        ext = ".xlsx" if content.startswith(b"PK") and b"workbook" in content else \
            ".jsonl" if name.startswith("JSONL") else ".json" if name.startswith("JSON ") \
            else ".csv"
        check = same_report_as_good if status == 0 and content.startswith(
            (b"item", b"\xef\xbb\xbf")) and b"9999" not in content and b"1e50" not in content \
            and b"1.0" not in content else None
        cases.append(Case(f"file: {name}", ["compare", "in" + ext] + argv + FEW_RESAMPLES, status,
                          fragment, {"in" + ext: content}, check=check))
        if content and not content.startswith(b"PK"):
            cases.append(Case(f"stdin: {name}", ["compare", "-"] + argv + FEW_RESAMPLES + (
                ["--input-format", "jsonl"] if ext == ".jsonl" else []), status,
                fragment.replace("in.csv", "<stdin>"), stdin=content, check=check))
    return cases


PATH_CASES = [
    Case("missing file", ["compare", "nope.csv"] + AB, 2, "cannot read nope.csv"),
    Case("a folder as input", ["compare", "."] + AB, 2, "--a-col names a column of one file"),
    Case("a folder without logs as input", ["compare", "."], 2, "no lm-eval samples_<task>"),
    Case("/dev/zero as input", ["compare", "/dev/zero"] + AB, 2, "a NUL byte"),
    Case("/dev/null as input", ["compare", "/dev/null"] + AB, 2, "is empty"),
    Case("stdin for two systems", ["compare", "-", "-", "--score-col", "a"], 2,
         "- (stdin) is given more than once; it can be read once", stdin=GOOD),
    Case("stdin and /dev/stdin for two systems", ["compare", "-", "/dev/stdin",
                                                  "--score-col", "a"], 2,
         "'-' and '/dev/stdin' are the same file; give each system its own", stdin=GOOD),
    Case("one file under two spellings", ["compare", "x.csv", "./x.csv", "--score-col", "a"],
         2, "'x.csv' and './x.csv' are the same file", {"x.csv": GOOD}),
    Case("one folder under two spellings", ["compare", "d", "d/"], 2,
         "'d' and 'd/' are the same folder", {"d/x.csv": GOOD}),
    Case("a 60,000-character system named twice", ["compare", "x.csv", "--systems",
                                                     "y" * 60000 + "," + "y" * 60000], 2,
         "a system is named twice: 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...'",
         {"x.csv": GOOD}),
    Case("plot over the input", ["compare", "x.csv", "--plot", "x.csv"] + AB, 2,
         "--plot writes SVG", {"x.csv": GOOD}),
    Case("plot over the input named .svg", ["compare", "x.svg", "--plot", "x.svg"] + AB, 2,
         "is an input", {"x.svg": GOOD}),
    Case("plot over the input through a symlink", ["compare", "x.csv", "--plot", "link.svg"] + AB,
         2, "is an input", {"x.csv": GOOD, "link.svg": "->x.csv"}),
    Case("plot over the file stdin comes from", ["compare", "-", "--plot", "y.svg"] + AB, 2,
         "is an input (stdin's file)", {"y.svg": GOOD}, stdin="file:y.svg"),
    Case("plot over a candidate run file",
         ["compare", "b.csv", "c.svg", "--score-col", "s", "--id-col", "id", "--plot",
          "c.svg"], 2, "is an input", {"b.csv": "id,s\n1,1\n2,0\n",
                                       "c.svg": "id,s\n1,0\n2,1\n"}),
    Case("write-csv over a file the plot also names", SIM + ["--write-csv", "o.csv", "--plot",
                                                            "o.csv"], 2, "--plot writes SVG"),
    Case("two outputs on one file through a link", SIM + ["--write-csv", "o.csv", "--plot",
                                                         "o.svg"], 2, "both name o.svg",
         {"o.svg": "->o.csv"}),
    Case("plot to /dev/null", SIM + ["--plot", "/dev/null"], 2, "--plot writes SVG"),
    Case("plot to a device named .svg", SIM + ["--plot", "dev.svg"], 2,
         "not a regular file", {"dev.svg": "->/dev/null"}),
    Case("write-csv to /dev/full", SIM + ["--write-csv", "/dev/full"], 2, "--write-csv writes CSV"),
    Case("write-csv to a device named .csv", SIM + ["--write-csv", "full.csv"], 2,
         "not a regular file", {"full.csv": "->/dev/full"}),
    Case("plot to /dev/stdout", SIM + ["--plot", "/dev/stdout"], 2, "--plot writes SVG"),
    Case("plot to a fifo", SIM + ["--plot", "pipe.svg"], 2, "not a regular file",
         {"pipe.svg": "fifo"}),
    Case("empty plot path", SIM + ["--plot", ""], 2, "--plot needs a file name"),
    Case("plot path ending in /", SIM + ["--plot", "sub/"], 2, "it is a folder"),
    Case("plot onto a folder", SIM + ["--plot", "sub.svg"], 2, "it is a folder",
         {"sub.svg": "dir"}),
    Case("plot as PNG", SIM + ["--plot", "x.png"], 2, "give a path ending in .svg"),
    Case("plot in a missing folder", SIM + ["--plot", "no/such/x.svg"], 2, "no such folder"),
    Case("plot in an unwritable folder", SIM + ["--plot", "/proc/x.svg"], 2, "not writable"),
    Case("new plot gets the umask's mode", SIM + ["--plot", "out.svg"], 0, "",
         check=mode_is(0o644)),
    Case("replaced plot keeps its mode", SIM + ["--plot", "out.svg"], 0, "",
         {"out.svg": "old"}, check=mode_is(0o600)),
    Case("plot through a symlink keeps the link", SIM + ["--plot", "link.svg"], 0, "",
         {"out.target.svg": "old", "link.svg": "->out.target.svg"},
         check=lambda tmp, out: (os.path.islink(tmp / "link.svg")
                                 and "<svg" in (tmp / "out.target.svg").read_text()) or
         pytest.fail("symlink replaced")),
]


FLAG_CASES = [
    Case("acc-a that rounds to 0", SIM + ["--acc-a", "1e-40"], 0, ""),
    Case("acc-a below float range", SIM + ["--acc-a", "1e-400"], 2, "out of range"),
    Case("confidence that rounds to 1", SIM + ["--confidence", "0.99999999999999999999"], 2,
         "--confidence must lie above 0 and at most 0.999999"),
    Case("confidence 1e999999999", SIM + ["--confidence", "1e999999999"], 2, "out of range"),
    Case("half-width 1e-400", ["plan", "--half-width", "1e-400"], 2, "out of range"),
    Case("half-width below the limit", ["plan", "--half-width", "0.00001"], 2,
         "--half-width must be at least 0.0001"),
    Case("resamples 1e9", SIM[:3] + ["--resamples", "1e9"], 2, "--resamples must be at most"),
    Case("resamples 1e18", SIM[:3] + ["--resamples", "1000000000000000000"], 2,
         "--resamples must be at most"),
    Case("n-items 1e18", SIM + ["--n-items", "1e18"], 2, "--n-items must be at most"),
    Case("replays 1e9", ["simulate", "--replays", "1e9"], 2, "--replays must be at most"),
    Case("permutations 1e18", ["compare", "x.csv", "--permutations", "1e18"] + AB, 2,
         "--permutations must be at most", {"x.csv": GOOD}),
    Case("n-grid too large", ["plan", "--n-grid", "100,1e9"], 2,
         "--n-grid sizes must lie between 2 and 10,000,000"),
    Case("seed with 60 digits", SIM + ["--seed", "9" * 60], 2, "more than 50 characters"),
    Case("negative seed is refused", SIM + ["--seed", "-5"], 2, "--seed must be 0 or more"),
    Case("thousands separators in n-items", SIM + ["--n-items", "1,000"], 0, ""),
    Case("n-items in Arabic-Indic digits", SIM + ["--n-items", "\u0661\u0660\u0660"], 2,
         "not a whole number"),
    Case("n-items fraction", SIM + ["--n-items", "10.5"], 2, "not a whole number"),
    Case("corr nan", SIM + ["--corr", "nan"], 2, "not a number"),
    Case("corr 1", SIM + ["--corr", "1"], 2, "strictly between -1 and 1"),
    Case("unknown flag", ["simulate", "--bogus"], 2, "unrecognized arguments"),
    Case("abbreviated flag", ["simulate", "--n-it", "50"], 2, "unrecognized arguments"),
    Case("interval in capitals", ["simulate", "--interval", "BCa"], 2, "invalid choice"),
    Case("output misspelt", ["simulate", "--output", "markdwn"], 2, "invalid choice"),
    Case("json with markdown", ["simulate", "--json", "--output", "markdown"], 2, "conflicts"),
    Case("flag value with a control character", SIM + ["--corr", "0.6\x1b[2J"], 2,
         "\\x1b[2J"),
]


STREAM_CASES = [
    Case("stdout is a full disk", SIM, 2, "No space left on device", stdout="full"),
    Case("stdout is closed", SIM, 2, "stdout is closed", stdout="closed"),
    Case("the reader of stdout is gone", SIM, 141, "", stdout="gone"),
    Case("stdin closed when reading it", ["compare", "-"] + AB, 2, "stdin: it is closed",
         stdin="closed"),
    Case("stdin closed when not reading it", SIM, 0, "", stdin="closed"),
    Case("stdin empty", ["compare", "-"] + AB, 2, "<stdin> is empty", stdin=b""),
    # the markdown's input line ends its sha256 with an ellipsis, spelled "..." in ASCII
    Case("ASCII-only stdout, markdown", ["compare", "x.csv", "--a-col", "a", "--b-col",
                                         "mod\u00e8le", "--output", "markdown"] + FEW_RESAMPLES,
         0, "", {"x.csv": GOOD.replace("item,a,b", "item,a,mod\u00e8le")},
         env={"PYTHONIOENCODING": "ascii", "LANG": "C"},
         check=lambda tmp, out: (out.isascii() and "- B = mod\\xe8le: 0.600 \\[" in out)
         or pytest.fail(out)),
    # the text report is all ASCII but for the names it shows: one of them is not
    Case("ASCII-only stdout, text", ["compare", "x.csv", "--a-col", "a", "--b-col", "mod\u00e8le"]
         + FEW_RESAMPLES, 0, "", {"x.csv": GOOD.replace("item,a,b", "item,a,mod\u00e8le")},
         env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
         check=lambda tmp, out: (out.isascii() and "  B = mod\\xe8le: 0.600 [" in out)
         or pytest.fail(out)),
    Case("stdout full: no plot, no ledger line", ["compare", "x.csv", "--plot", "o.svg",
                                                  "--ledger", "l.jsonl"] + AB + FEW_RESAMPLES,
         2, "No space left on device", {"x.csv": GOOD}, stdout="full",
         check=lambda tmp, out: not (tmp / "o.svg").exists() and not (tmp / "l.jsonl").exists()
         or pytest.fail(str(list(tmp.iterdir())))),
    Case("stdout closed: no simulated CSV", SIM + ["--write-csv", "w.csv"], 2,
         "stdout is closed", stdout="closed",
         check=lambda tmp, out: not (tmp / "w.csv").exists() or pytest.fail("written")),
    Case("stdout full: a leaderboard's forest plot not written",
         ["leaderboard", "x.csv", "--plot", "f.svg"] + FEW_RESAMPLES[:0], 2, "No space left on device",
         {"x.csv": "item,a,b,c\n1,1,0,1\n2,0,1,1\n3,1,1,0\n4,0,0,1\n"}, stdout="full",
         check=lambda tmp, out: not (tmp / "f.svg").exists() or pytest.fail("written")),
    Case("stderr closed, bad flag: status 2 all the same", ["compare", "--nope"], 2, "",
         stdout="capture", env={"BED_TEST_CLOSE_STDERR": "1"}),
    Case("stderr closed, a long run says nothing and succeeds", SIM, 0, "",
         env={"BED_TEST_CLOSE_STDERR": "1"}),
    Case("markdown escapes | and HTML", ["compare", "x.csv", "--a-col", "a|b", "--b-col",
                                         "<script>x</script>", "--output", "markdown"] + FEW_RESAMPLES,
         0, "", {"x.csv": "item,a|b,<script>x</script>\n1,1,0\n2,0,1\n3,1,1\n"},
         check=lambda tmp, out: ("<script>" not in out and "a\\|b" in out and "&lt;script" in out
                                 and not re.search(r"(?<!\\)\|", out)) or pytest.fail(out)),
]


ALL = file_cases() + PATH_CASES + FLAG_CASES + STREAM_CASES


def sha(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def make_files(tmp_path, files):
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == "dir":
            path.mkdir()
        elif content == "fifo":
            os.mkfifo(path)
        elif isinstance(content, str) and content.startswith("->"):
            os.symlink(content[2:], path)
        elif content == "old":
            path.write_text("old")
            os.chmod(path, 0o600)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


def hashes(tmp_path):
    return {str(p): sha(p) for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()
            and not p.name.startswith("out.")}


def needs_a_process(case) -> bool:
    """A real process only where the case is about the process: its standard streams closed,
    full or gone, or its environment's encoding; everything else runs in-process (1 ms a
    case instead of a quarter of a second)."""
    return case.stdout != "capture" or case.stdin == "closed" or bool(case.env)


def run_in_process(case, tmp_path, monkeypatch):
    """main() itself, with the case's stdin and working folder; (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    old_mask = os.umask(0o022)
    handle = None
    try:
        if isinstance(case.stdin, str) and case.stdin.startswith("file:"):
            handle = open(tmp_path / case.stdin[5:], "rb")
            raw = handle
        else:
            raw = io.BytesIO(case.stdin if isinstance(case.stdin, bytes) else b"")
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(raw, encoding="utf-8"))
        return cli(*case.argv)
    finally:
        os.umask(old_mask)
        if handle is not None:
            handle.close()


def run_case(case, tmp_path, monkeypatch=None):
    make_files(tmp_path, case.files)
    before = hashes(tmp_path)
    if monkeypatch is not None and not needs_a_process(case):
        status, out, err = run_in_process(case, tmp_path, monkeypatch)
        return status, out, err, before
    env = {**os.environ, **case.env}
    argv = [sys.executable, SCRIPT] + case.argv
    stdin = subprocess.DEVNULL
    if isinstance(case.stdin, bytes):
        stdin = subprocess.PIPE
    elif isinstance(case.stdin, str) and case.stdin.startswith("file:"):
        stdin = open(tmp_path / case.stdin[5:], "rb")
    closing = []
    if case.stdin == "closed":
        closing.append(0)
    if case.stdout == "closed":
        closing.append(1)
    if case.env.get("BED_TEST_CLOSE_STDERR"):
        closing.append(2)
    stdout = subprocess.PIPE
    if case.stdout == "full":
        stdout = open("/dev/full", "w")

    def close_fds():
        os.umask(0o022)
        for fd in closing:
            os.close(fd)

    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                            cwd=tmp_path, env=env, preexec_fn=close_fds)
    if case.stdout == "gone":
        proc.stdout.close()
    out = b""
    if isinstance(case.stdin, bytes):
        proc.stdin.write(case.stdin)
        proc.stdin.close()
    if case.stdout == "capture":
        out = proc.stdout.read()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    for handle in (stdin, stdout):
        if hasattr(handle, "close"):
            handle.close()
    if case.stdout == "capture":
        proc.stdout.close()
    proc.stderr.close()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), before


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_hostile_case(case, tmp_path, monkeypatch):
    status, out, err, before = run_case(case, tmp_path, monkeypatch)
    assert status == case.status, (status, out, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if case.status in (0, 141) or case.env.get("BED_TEST_CLOSE_STDERR"):
        assert err == "", err
    else:
        assert err.count("\n") == 1 and err.startswith("bootstrap_eval_deltas: "), err
        assert case.stderr in err, (case.stderr, err)
    leftovers = [p.name for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")
                 or p.name.endswith(".part")]
    assert leftovers == []
    after = hashes(tmp_path)
    assert {k: v for k, v in after.items() if k in before} == before
    if case.check is not None:
        case.check(tmp_path, out)


def test_there_are_at_least_120_hostile_cases():
    assert len(ALL) >= 120


def start_long(tmp_path, *extra):
    return subprocess.Popen([sys.executable, SCRIPT, "simulate", "--replays", "100000", "--quiet",
                             "--plot", "out.svg", *extra], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("signum,status,message", [(signal.SIGTERM, 143, "terminated"),
                                                   (signal.SIGHUP, 143, "terminated"),
                                                   (signal.SIGINT, 130, "interrupted")])
def test_a_signal_during_work_ends_cleanly(tmp_path, signum, status, message):
    proc = start_long(tmp_path)
    note = proc.stderr.readline().rstrip("\n")   # the work is long, so said first: it has begun
    time.sleep(0.5)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status and out == "", (proc.returncode, err)
    (end,) = err.splitlines()
    assert note.startswith("bootstrap_eval_deltas: note: this will take about ")
    assert "--replays" in note and end == f"bootstrap_eval_deltas: {message}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, what", [
    (["calibrate", "--replays", "100000", "--n-grid", "30,100"],
     "about 4 minutes (100,000 replays x 2 sizes x 3 accuracy pairs); fewer --replays"),
    (["simulate", "--runs", "3", "--replays", "20000"], "20,000 replays x 2,000 resamples"),
])
def test_long_calibrations_and_run_simulations_say_so_first(tmp_path, argv, what):
    proc = subprocess.Popen([sys.executable, SCRIPT, *argv, "--quiet"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        note = proc.stderr.readline()
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert note.startswith("bootstrap_eval_deltas: note: this will take about ") and what in note


def test_ctrl_c_while_importing_ends_quietly():
    """From the tool's first line on, a Ctrl-C before main() starts ends the program quietly,
    as the signal's default does: here the interrupt arrives right after the import, as it
    would for the installed command.  (A Ctrl-C while Python itself starts, or compiles the
    script -- about 0.2 s here -- is Python's to report.)"""
    code = ("import os, signal, sys; sys.argv[0] = 'bootstrap-eval-deltas'; "
            "import bootstrap_eval_deltas; os.kill(os.getpid(), signal.SIGINT); "
            "import time; time.sleep(5); print('not reached')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert proc.returncode == -signal.SIGINT and proc.stdout == "" and proc.stderr == ""


def test_a_signal_while_writing_removes_the_temporary_file(tmp_path, monkeypatch):
    def stop(fd):
        raise bed._Terminated(signal.SIGTERM)
    monkeypatch.setattr(os, "fsync", stop)
    target = tmp_path / "run.csv"
    status, out, err = cli("simulate", "--replays", "0", "--resamples", "20", "--write-csv",
                           str(target))
    assert status == 143 and err == "bootstrap_eval_deltas: terminated\n"
    assert list(tmp_path.iterdir()) == []


def test_an_internal_error_is_one_line_and_status_70(monkeypatch):
    def broken(request, writes):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setitem(bed._RUNNERS, "simulate", broken)
    status, out, err = cli("simulate", "--replays", "0")
    assert status == 70 and out == ""
    assert err == ("bootstrap_eval_deltas: internal error: ZeroDivisionError: division by zero; "
                   "please report it with the command line\n")


def test_a_broken_pipe_in_process_is_status_141(monkeypatch):
    class Gone(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(sys, "stdout", Gone())
    assert bed.main(["simulate", "--replays", "0", "--resamples", "20"]) == 141


def test_python_older_than_3_10_is_told_in_one_line():
    versions = os.path.expanduser("~/.pyenv/versions")
    found = [os.path.join(versions, v, "bin", "python") for v in
             (sorted(os.listdir(versions)) if os.path.isdir(versions) else [])
             if v.startswith(("3.9.", "3.8."))]
    found += [p for p in [shutil.which("python3.9")] if p and "/shims/" not in p]
    old = [p for p in found if os.path.exists(p)]
    if not old:
        pytest.skip("no Python older than 3.10 on this machine")
    proc = subprocess.run([old[0], SCRIPT, "simulate", "--replays", "0"], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("bootstrap_eval_deltas: error: needs Python 3.10 or newer")
    assert proc.stderr.count("\n") == 1


GOOD_ROWS = [[int(v) if v.isdigit() else v for v in line.split(",")]
             for line in GOOD.splitlines()]


def _example(*parts, name=""):
    """Files under datasets/examples/<parts>, those whose name holds *name*, sorted."""
    folder = os.path.join(EXAMPLES, *parts)
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if name in n]


def _lm_samples(task):
    return [_example("lm-eval", "main", f"acme__{system}", name=f"samples_{task}_")[0]
            for system in ("base", "tuned")]


# name: (input files to write into tmp_path, argv, the formats the JSON reports, zstd .eval)
READERS = {
    "CSV": ({"in.csv": GOOD}, ["compare", "in.csv", *AB], {"csv"}, False),
    "TSV": ({"in.tsv": GOOD.replace(",", "\t")}, ["compare", "in.tsv", *AB], {"csv"}, False),
    "semicolon CSV": ({"in.csv": GOOD.replace(",", ";")}, ["compare", "in.csv", *AB], {"csv"},
                      False),
    "JSON lines": ({"in.jsonl": jsonl(*(dict(zip(GOOD_ROWS[0], r)) for r in GOOD_ROWS[1:]))},
                   ["compare", "in.jsonl", *AB], {"jsonl"}, False),
    "JSON list": ({"in.json": json.dumps([dict(zip(GOOD_ROWS[0], r)) for r in GOOD_ROWS[1:]])},
                  ["compare", "in.json", *AB], {"json"}, False),
    "xlsx": ({"in.xlsx": xlsx_bytes(GOOD_ROWS)}, ["compare", "in.xlsx", *AB], {"xlsx"}, False),
    "lm-eval samples": ({}, ["compare", *_lm_samples("mc_capitals"), "--metric", "acc"],
                        {"lm-eval"}, False),
    "lm-eval output folders": ({}, ["compare", *(os.path.join(EXAMPLES, "lm-eval", "main", f)
                                                 for f in ("acme__base", "acme__tuned")),
                                    "--metric", "acc,exact_match", "--filter", "strict-match"],
                               {"lm-eval"}, False),
    "Inspect .eval (deflate)": ({}, ["compare", *_example("inspect", "pair_eval_deflate")],
                                {"inspect"}, False),
    "Inspect .eval (Zstandard)": ({}, ["compare", *_example("inspect", "pair_eval")],
                                  {"inspect"}, True),
    "Inspect .json": ({}, ["compare", *_example("inspect", "pair_json")], {"inspect"}, False),
    "Inspect .json folder": ({}, ["compare", os.path.join(EXAMPLES, "inspect", "pair_json"),
                                  "--systems", "mockllm/base,mockllm/tuned"], {"inspect"}, False),
    "Inspect eval-set folder": ({}, ["compare", os.path.join(EXAMPLES, "inspect", "eval_set"),
                                     "--systems", "mockllm/base,mockllm/tuned"],
                                {"inspect"}, True),
    "HELM per-instance stats": ({}, ["compare", *(_example("helm", "runs", "mysuite", r,
                                                           name="per_instance_stats")[0]
                                                  for r in ("simple_mcqa:model=mock_parity-a",
                                                            "simple_mcqa:model=mock_parity-b")),
                                     "--metric", "exact_match"], {"helm"}, False),
    "HELM suite folder": ({}, ["compare", os.path.join(EXAMPLES, "helm", "runs", "mysuite"),
                               "--systems", "mock/parity-a,mock/parity-b", "--metric",
                               "exact_match"], {"helm"}, False),
}


# Run the script as __main__ with a pure-Python Zstandard decompressor lent under the name of
# the optional module when this Python has no compression.zstd (as test_harness_logs does).
_LEND_ZSTD = ("import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); import zstd_decode; "
              "sys.version_info < (3, 14) and sys.modules.setdefault('zstandard', zstd_decode); "
              "sys.argv[0] = sys.argv.pop(1); runpy.run_path(sys.argv[0], run_name='__main__')")


@pytest.mark.parametrize("reader", list(READERS))
def test_files_are_closed_by_every_reader(tmp_path, reader):
    """Under -X dev with ResourceWarning an error, a file a reader leaves open is reported
    on stderr when it is collected; each reader is checked to be the one that read the
    input (the formats the JSON reports)."""
    files, argv, formats, zstd = READERS[reader]
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else
                                      content.encode())
    script = ["-c", _LEND_ZSTD, os.path.join(ROOT, "tests"), SCRIPT] if zstd else [SCRIPT]
    proc = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning",
                           *script, *argv, "--resamples", "20", "--calibration", "0",
                           "--json"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    read = json.loads(proc.stdout)["input"]
    assert {f["format"] for f in read.get("files", [read])} == formats
    if files:
        assert read["rows"] == 5 and read["columns"] == ["item", "a", "b"], read


@pytest.mark.skipif(sys.platform != "linux", reason="an address-space limit as Linux sets it")
@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_reads_a_small_input_where_memory_is_capped(tmp_path, reader):
    """Under a 400 MiB address-space limit (``ulimit -v``, as batch schedulers set it) every
    reader reads its few-KB input: a bounded read asks for what the file holds, not for its
    bound (a read of 1 GiB + 1 bytes reserved them all first and ended in 'out of
    memory' for a 2 KB HELM run)."""
    import resource
    files, argv, _, zstd = READERS[reader]
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else
                                      content.encode())
    script = ["-c", _LEND_ZSTD, os.path.join(ROOT, "tests"), SCRIPT] if zstd else [SCRIPT]
    cap = 400 << 20
    proc = subprocess.run([sys.executable, *script, *argv, "--resamples", "20",
                           "--calibration", "0"], capture_output=True, text=True, cwd=tmp_path,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize("command, gate, picture", [
    ("compare", True, "the paired gap's bootstrap distribution"),
    ("simulate", False, "the paired gap's bootstrap distribution"),
    ("plan", False, "the power curve"),
    ("leaderboard", False, "the forest plot"),
    ("calibrate", False, None),
    ("ledger", False, None),
])
def test_each_commands_help_says_its_own_exit_statuses_and_picture(command, gate, picture):
    status, out = cli_help(command)
    assert status == 0
    text = " ".join(out.split())
    assert ("1 the --gate failed" in text) is gate and "exit status: 0 success," in text
    assert (picture is None and "--plot" not in text) or (picture and picture in text)


def test_a_negative_number_in_exponent_form_is_a_flag_value_not_a_flag():
    """argparse took ``-1e50`` for a flag and said --min-delta expected one argument."""
    status, out, err = cli("compare", SHIPPED_CSV, "--gate", "--min-delta", "-2e0")
    assert status == 0 and "gate: PASS (non-inferiority at -2.0 pts)" in out, err
    assert_one_line_error(*cli("compare", SHIPPED_CSV, "--gate", "--min-delta", "-1e50"),
                          "--min-delta: a number with more than 50 digits")
    assert cli("compare", SHIPPED_CSV, "--gate", "--min-delta=-2e0")[1] == out


# --- Predictions against labels: --label-col and --metric (issue 30) ---

def _predictions_csv(tmp_path, seed=9):
    """3,000 items in four common classes and a rare one (~80 items) on which the tuned
    system falls from about 80% to about 30% right while it gains elsewhere."""
    rng = random.Random(seed)
    rows, classes = ["id,gold,base,tuned"], ["a", "b", "c", "d", "rare"]
    for i in range(3000):
        y = rng.choices(classes, [30, 30, 30, 30, 3])[0]
        a = y if rng.random() < 0.8 else rng.choice(classes)
        good = 0.3 if y == "rare" else 0.86
        b = y if rng.random() < good else rng.choice(classes[:4] if y == "rare" else classes)
        rows.append(f"{i},{y},{a},{b}")
    return write(tmp_path / "preds.csv", "\n".join(rows) + "\n")


def test_label_col_compares_macro_f1_and_names_the_rare_class_that_regressed(tmp_path):
    sk = pytest.importorskip("sklearn.metrics")
    path = _predictions_csv(tmp_path)
    status, out, err = cli("compare", path, "--label-col", "gold", "--id-col", "id",
                           "--metric", "macro-f1", "--gate", "--permutations", "2000")
    assert status == 1 and err == ""
    assert out.startswith("worse in 1 class(es) of gold (99% simultaneous): rare -")
    assert "gate over the slices: FAIL: 1 slice(s) shown worse" in out
    assert "in 5 classes of gold" in out and "per class: each candidate against base by the" \
        in out
    assert "\n  class  candidate  base P  base R  cand P  cand R\n" in out
    with open(path) as f:
        rows = list(csv.DictReader(f))
    gold = [r["gold"] for r in rows]
    macro = {name: sk.f1_score(gold, [r[name] for r in rows], average="macro")
             for name in ("base", "tuned")}
    report = cli_json("compare", path, "--label-col", "gold", "--id-col", "id", "--metric",
                      "macro-f1", "--permutations", "2000")
    assert report["kind"] == "tasks" and report["comparisons"][0]["metric"] == "macro-f1"
    assert {k: report["params"][k] for k in ("metric", "calibration", "resamples", "engine",
                                             "permutations")} == {
        "metric": "macro-f1", "calibration": 0, "resamples": 2000, "engine": "counts",
        "permutations": 2000}                # what ran: no calibration, 2,000 resamples
    assert report["comparisons"][0]["accuracy"]["a"] == pytest.approx(macro["base"], abs=1e-12)
    assert report["comparisons"][0]["gap"] == pytest.approx(macro["tuned"] - macro["base"],
                                                            abs=1e-12)
    rare = [task for task in report["tasks"] if task["task"] == "rare"][0]
    assert rare["comparisons"][0]["verdict"] == "worse"
    for task in report["tasks"]:                  # each class's F1, as scikit-learn has it
        for name, key in (("base", "a"), ("tuned", "b")):
            truth = sk.f1_score(gold, [r[name] for r in rows], labels=[task["task"]],
                                average="macro")
            assert task["comparisons"][0]["accuracy"][key] == pytest.approx(truth, abs=1e-12)
            for rate, score in (("precision", sk.precision_score), ("recall", sk.recall_score)):
                truth = score(gold, [r[name] for r in rows], labels=[task["task"]],
                              average="macro", zero_division=0)
                assert task["comparisons"][0][rate][key] == pytest.approx(truth, abs=1e-12)
        assert task["items"] == gold.count(task["task"])
    assert [t["comparisons"][0]["verdict"] for t in report["tasks"]].count("worse") == 1


def test_label_col_with_mcc_gives_score_units_and_one_comparison(tmp_path):
    path = _predictions_csv(tmp_path)
    status, out, err = cli("compare", path, "--label-col", "gold", "--id-col", "id",
                           "--metric", "mcc")
    assert status == 0 and err == ""
    assert out.splitlines()[1].startswith("  A = base: MCC 0.")
    assert " pts" not in out.split("\n")[3]            # MCC's gap is in its own units
    assert "paired permutation test (Monte Carlo, 10,000 random swaps of the two systems' " \
        "predictions)" in out
    result = bed.compare(path, label_col="gold", id_col="id", metric="f1", positive="rare")
    assert result.verdict == "worse" and "pts" in str(result.interval)
    numbered = write(tmp_path / "n.csv", "id,gold,base,tuned\n" + "".join(
        f"{i},{i % 2},{i % 2},{(i // 3) % 2}\n" for i in range(60)))
    assert bed.compare(numbered, label_col="gold", metric="f1", positive=1).n == 60


def test_label_col_by_slice_gives_each_slices_metric_and_the_overall_one(tmp_path):
    """--by with --label-col: a row per slice with the slice's own macro-F1 (scikit-learn's
    on the slice's rows), and the overall metric over all items, resampled as one."""
    sk = pytest.importorskip("sklearn.metrics")
    with open(_predictions_csv(tmp_path)) as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["half"] = ("even", "odd")[int(row["id"]) % 2]
    path = write(tmp_path / "sliced.csv", "id,gold,base,tuned,half\n" + "".join(
        ",".join(r[k] for k in ("id", "gold", "base", "tuned", "half")) + "\n" for r in rows))
    report = cli_json("compare", path, "--label-col", "gold", "--id-col", "id", "--metric",
                      "macro-f1", "--by", "half", "--permutations", "500")
    assert report["pool"] == "items" and report["by"] == "half"
    assert report["comparisons"][0]["accuracy"]["a"] == pytest.approx(sk.f1_score(
        [r["gold"] for r in rows], [r["base"] for r in rows], average="macro"), abs=1e-12)
    for task in report["tasks"]:
        part = [r for r in rows if r["half"] == task["task"]]
        assert task["items"] == len(part)
        for name, key in (("base", "a"), ("tuned", "b")):
            truth = sk.f1_score([r["gold"] for r in part], [r[name] for r in part],
                                average="macro")
            assert task["comparisons"][0]["accuracy"][key] == pytest.approx(truth, abs=1e-12)
        assert task["comparisons"][0]["metric"] == "macro-f1"
    status, out, _ = cli("compare", path, "--label-col", "gold", "--id-col", "id", "--metric",
                         "macro-f1", "--by", "half", "--permutations", "500")
    assert status == 0 and "items pooled plainly (a metric's resamples are not held per " \
        "slice)" in out and "2 slices of half" in out


def test_leaderboard_of_predictions_names_its_metric_and_refuses_slices(tmp_path):
    path = _predictions_csv(tmp_path)
    status, out, err = cli("leaderboard", path, "--label-col", "gold", "--id-col", "id",
                           "--metric", "f1", "--positive", "rare", "--permutations", "500")
    assert status == 0 and err == ""
    assert "  rank  system     F1  95% CI" in out and "covariance from F1's 2,000 paired resamples" in out
    assert "1  base" in out                          # tuned fell on the rare class
    assert_one_line_error(*cli("leaderboard", path, "--label-col", "gold", "--id-col", "id",
                               "--by", "gold"), "--by does not apply to a leaderboard of "
                                                "predictions")
    board = bed.leaderboard(path, label_col="gold", id_col="id", metric="macro-f1").board
    assert board.metric == "macro-f1" and len(board.standings) == 2


@pytest.mark.parametrize("argv, fragment", [
    (["--label-col", "gold", "--metric", "auc"], "--metric with --label-col is one of accuracy"),
    (["--label-col", "gold", "--metric", "f1"],
     "--metric f1 is of one class: name it with --positive CLASS"),
    (["--label-col", "gold", "--metric", "mcc", "--positive", "a"],
     "--positive names the class of --metric f1, precision or recall"),
    (["--label-col", "gold", "--metric", "f1", "--positive", "zebra"],
     "--positive 'zebra' is not a class of the labels or predictions (classes: a, b, c, d, "
     "rare)"),
    (["--positive", "a"], "--positive names a class of --label-col's labels"),
    (["--label-col", "gold", "--systems", "gold,base"], "is also named as a system"),
    (["--label-col", "gold", "--cluster-col", "gold"],
     "--cluster-col does not apply to a metric of predictions"),
    (["--label-col", "nothing"], "no column 'nothing'"),
    (["--label-col", "gold", "--input-format", "jsonl"], "--label-col reads a CSV file"),
])
def test_label_col_refuses_what_does_not_apply_in_one_line(tmp_path, argv, fragment):
    path = _predictions_csv(tmp_path)
    assert_one_line_error(*cli("compare", path, "--id-col", "id", *argv), fragment)


def test_label_col_strata_on_the_label_resamples_within_classes_and_other_strata_refused(
        tmp_path):
    path = _predictions_csv(tmp_path)
    status, out, err = cli("compare", path, "--label-col", "gold", "--id-col", "id",
                           "--metric", "mcc", "--strata-col", "gold")
    assert status == 0 and "cells, within each label)" in out
    assert_one_line_error(*cli("compare", path, "--label-col", "gold", "--id-col", "id",
                               "--strata-col", "base"), "resamples within each label")


# --- Battles: compare two systems, rank many ---

PREFS = os.path.join(ROOT, "tests", "fixtures", "preference")


def test_compare_battles_says_the_win_rate_the_sign_test_and_the_position_bias():
    status, out, err = cli("compare", os.path.join(PREFS, "fastchat_battles.json"),
                           "--systems", "claude-2.1,gpt-4-0613")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("verdict: ")
    assert any(line.startswith("  win rate of B (ties as half): ") for line in lines)
    assert any(line.startswith("  position: the system shown first won ") for line in lines)
    assert "(battles: who won each)" in lines[-1]
    body = cli_json("compare", os.path.join(PREFS, "plain_battles.csv"), "--systems",
                    "candidate-v2,candidate-v3")
    assert body["battles"]["format"] == "battles" and body["battles"]["position"] is None
    assert body["comparisons"][0]["test"]["name"] == "McNemar exact"


def test_the_battle_gate_margin_is_the_win_rate_above_half():
    path = os.path.join(PREFS, "mt_bench_pair.jsonl")
    status, out, _ = cli("compare", path, "--systems", "llama-2-13b-chat,gpt-3.5-turbo",
                         "--gate", "--min-delta", "5")
    assert "gate's margin +5.0 pts on the win rate above 50% is +10.0 pts" in out
    assert status == (0 if "gate: PASS" in out else 1)


@pytest.mark.parametrize("argv, fragment", [
    (["compare", "plain_battles.csv"], "3 systems battle here"),
    (["compare", "plain_battles.csv", "--systems", "candidate-v2,nope"], "no system 'nope'"),
    (["compare", "plain_battles.csv", "--by", "prompt"], "--by goes with scores"),
    (["leaderboard", "plain_battles.csv", "--anchor", "nope"], "--anchor: no system 'nope'"),
    (["leaderboard", "plain_battles.csv", "--scale", "glicko"], "invalid choice"),
    (["leaderboard", SHIPPED_CSV, "--anchor", "x"], "--anchor goes with battles"),
    (["leaderboard", SHIPPED_CSV, "--scale", "elo"], "--scale goes with battles"),
    (["leaderboard", "plain_battles.csv", "--bootstrap", "-2"], "--bootstrap must be 0 or more"),
])
def test_battle_options_that_cannot_apply_are_refused(argv, fragment):
    argv = [os.path.join(PREFS, a) if a.endswith(".csv") else a for a in argv]
    status, out, err = cli(*argv)
    assert_one_line_error(status, out, err, fragment)


def test_leaderboard_of_battles_ranks_by_bradley_terry_with_the_anchor_named():
    files = [os.path.join(PREFS, "arena_hard", "gpt-4-1106-preview", name)
             for name in ("llama-3-8b-instruct.jsonl", "qwen2-7b-instruct.jsonl")]
    status, out, err = cli("leaderboard", *files, "--scale", "elo", "--anchor", "baseline")
    assert status == 0 and err == ""
    assert out.startswith("leaderboard of 3 systems on 38 battles:")
    assert "rating (Elo)" in out and "1000.0  [1000.0, 1000.0]" in out
    assert "warning: 1 pair(s) never met" in out and "Wald z (robust s.e.)" in out
    body = cli_json("leaderboard", os.path.join(PREFS, "fastchat_battles.json"))
    assert body["params"]["scale"] == "logit" and body["params"]["battles"] == 41
    decisive = body["position"]["decisive"]
    assert 0 < body["position"]["first_won"] < decisive <= 41
    assert "position: the system shown first won" in cli("leaderboard", files[0])[1]
    assert "position" not in cli("leaderboard", os.path.join(PREFS, "plain_battles.csv"))[1]
    assert "Davidson" in body["joint"]["design"] and len(body["pairs"]) == 6


# --- Judge-corrected comparisons: SYSTEM.judge on every item, SYSTEM.human on some ---

JUDGED = os.path.join(ROOT, "datasets", "examples", "judged.csv")


def test_a_judged_file_compares_judge_corrected_beside_people_and_judge_alone():
    status, out, err = cli("compare", JUDGED)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("verdict: cannot tell. The judge-corrected 95% CI ")
    assert any(line.startswith("  people's scores alone (250 items): ") for line in lines)
    assert any(line.startswith("  the judge's alone (2,000 items): ") for line in lines)
    status, out, _ = cli("compare", JUDGED, "--systems", "base,tuned", "--gate", "--json")
    body = json.loads(out)
    assert status == 1
    assert body["kind"] == "judge-corrected comparison" and body["labelled"] == 250
    assert body["gate_passed"] is False and body["judge_only"]["interval"][0] > 0
    assert body["agreement"][0]["kind"] == "kappa"
    result = bed.compare(JUDGED)
    assert result.verdict == "cannot tell" and result.n == 2000 and result.passed is None
    assert result.method == "prediction-powered (PPI++)" and result.p == body["p"]


@pytest.mark.parametrize("content, argv, fragment", [
    ("item,a.judge,a.human,b.judge,b.human\n1,1,1,0,\n2,0,,1,\n", [],
     "people scored one system on this item but not the other"),
    ("item,a.judge,a.human,b.judge,b.human\n1,,1,0,1\n2,0,,1,\n", [], "a judge score is missing"),
    ("item,a.judge,a.human,b.judge,b.human\n1,1,1,0,1\n2,0,0,1,1\n", [], "2 of 2 items have"),
    ("item,a.judge,a.human,b.judge,b.human,c.judge,c.human\n1,1,1,0,1,1,1\n", [],
     "name two systems"),
    ("item,a.judge,a.human,b.judge,b.human\n1,1,1,0,1\n2,0,,1,\n", ["--plot", "p.svg"],
     "--plot is not taken by a judge-corrected comparison"),
])
def test_judged_files_that_cannot_be_corrected_are_refused(tmp_path, content, argv, fragment):
    path = write(tmp_path / "j.csv", content)
    status, out, err = cli("compare", str(path), *[str(tmp_path / a) if a.endswith(".svg")
                                                   else a for a in argv])
    assert_one_line_error(status, out, err, fragment)


def plain_battles(tmp_path, rows, name="b.csv", header="prompt,system_a,system_b,winner"):
    return str(write(tmp_path / name, header + "\n" + "\n".join(rows) + "\n"))


def test_battles_without_a_finite_fit_or_with_a_degenerate_sandwich_are_said(tmp_path):
    tie_only = plain_battles(tmp_path, [f"p{i},A,B,a" for i in range(30)] + ["q,A,B,tie"])
    status, out, err = cli("leaderboard", tie_only)
    assert_one_line_error(status, out, err, "no finite ratings fit these battles ('B'")
    all_ties = plain_battles(tmp_path, [f"p{i},A,B,tie" for i in range(40)], "t.csv")
    assert_one_line_error(*cli("leaderboard", all_ties), "no finite ratings fit")
    tied_pair = plain_battles(tmp_path, [f"p{i},A,B,{'a' if i < 65 else 'b'}" for i in range(100)]
                              + ["q1,C,A,tie", "q2,A,C,tie"], "c.csv")
    status, out, err = cli("leaderboard", tied_pair, "--anchor", "B")
    assert status == 0 and "model-based covariance (the robust one degenerates" in out
    assert "A - C: +0.000 [-3.249, +3.249]" in out and "not told apart" in out
    weighted = os.path.join(PREFS, "alpaca_eval_annotations.json")   # probabilities and a 1.5
    assert cli("leaderboard", weighted)[0] == 0


@pytest.mark.parametrize("rows, argv, fragment", [
    (['"x",a,b,b', '"y",b,a,b'], [], "the winner 'b' is ambiguous"),
    (["p1,X,Y,a"], ["--cluster-col", "prompt"], "--cluster-col goes with scores, not battles"),
    (["p1,X,Y,a", "p2,Y,X,a"], ["--systems", "X,X"], "--systems names 'X' twice"),
])
def test_battles_that_could_be_misread_are_refused(tmp_path, rows, argv, fragment):
    assert_one_line_error(*cli("compare", plain_battles(tmp_path, rows), *argv), fragment)


def test_battle_inputs_are_read_once_each_with_their_notes_and_a_folder_is_its_files(tmp_path):
    path = plain_battles(tmp_path, ["p1,X,Y,a", "p2,Y,X,a", "p3,X,Y,error"])
    assert_one_line_error(*cli("compare", path, path), "the same battles as a file before it")
    out = cli("compare", path, "--details")[1]
    assert "note: 1 judgment(s) without a verdict" in out
    twice = plain_battles(tmp_path, ["p1,X,Y,a"], "d.csv",
                          "prompt,system_a,system_b,winner,winner")
    assert_one_line_error(*cli("compare", twice, "--input-format", "battles"), "appears twice")
    arena = os.path.join(PREFS, "arena_hard", "gpt-4-1106-preview")
    assert cli("leaderboard", arena)[1].startswith("leaderboard of 3 systems on 38 battles")
    subset = cli("leaderboard", os.path.join(ROOT, "datasets", "examples", "battles.jsonl"),
                 "--systems", "cot,sft,baseline")[1]
    assert subset.startswith("leaderboard of 3 systems on 122 battles")
    bad = write(tmp_path / "ah.jsonl",
                '{"model": "m", "judge": "j", "games": [{"score": ["A>B"]}, null]}\n')
    assert_one_line_error(*cli("compare", str(bad)), "is not one of A>>B")
    selfish = write(tmp_path / "s.jsonl", '{"model_1": "m", "model_2": "m", "g1_winner": "tie", '
                                          '"g2_winner": "tie", "question_id": 1}\n')
    assert_one_line_error(*cli("compare", str(selfish)), "s.jsonl line 1: 'm' against itself")


def test_judged_inputs_read_as_named_refuse_repeats_and_idle_options(tmp_path):
    text = open(JUDGED).read()
    doubled = write(tmp_path / "jj.csv", text + "".join(text.splitlines(True)[1:]))
    assert_one_line_error(*cli("compare", str(doubled)), "item 'q0000' appears twice")
    assert_one_line_error(*cli("leaderboard", JUDGED), "compare two systems: use compare")
    data = bed.read_judged(JUDGED)
    assert bed.compare(data).interval == bed.compare(JUDGED).interval
    with pytest.raises(bed.ToolError, match="use compare"):
        bed.leaderboard(data)
    with pytest.raises(bed.ToolError, match="read the file again with systems"):
        bed.compare(data, systems=["tuned", "base"])
    assert_one_line_error(*cli("compare", JUDGED, "--resamples", "100"),
                          "--resamples is not taken by a judge-corrected comparison")
    out = cli("compare", JUDGED, "--calibration", "0")[1]
    assert "calibration: not replayed (calibration=0)" in out
    constant = write(tmp_path / "c.csv", "item,a.judge,a.human,b.judge,b.human\n" + "".join(
        f"{i},0,{'0' if i < 40 else ''},1,{'1' if i < 40 else ''}\n" for i in range(100)))
    assert "warning: the corrected interval has zero width" in cli("compare", str(constant))[1]


def long_judged(tmp_path, name="long.csv", extra=()):
    """The shipped judged file as a long file: a row per item and system."""
    rows = list(csv.DictReader(open(JUDGED)))
    lines = ["item,system,judge,human"] + [f"{r['item']},{s},{r[s + '.judge']},{r[s + '.human']}"
                                           for r in rows for s in ("base", "tuned")]
    return str(write(tmp_path / name, "\n".join(lines + list(extra)) + "\n"))


def test_a_long_judged_file_a_row_per_item_and_system_compares_as_the_wide_one(tmp_path):
    path = long_judged(tmp_path)
    wide, long = cli_json("compare", JUDGED), cli_json("compare", path)
    assert long.pop("input")["rows"] == 4000 and wide.pop("input")["rows"] == 2000
    assert long == wide
    assert bed.read_judged(path).human == bed.read_judged(JUDGED).human
    assert bed.read(path).human == bed.read(JUDGED).human == bed.read_judged(JUDGED).human
    assert bed.read(JUDGED, systems=["tuned", "base"]).systems == ("tuned", "base")
    assert bed.compare(path).interval == bed.compare(JUDGED).interval
    assert_one_line_error(*cli("compare", long_judged(tmp_path, "d.csv", ["q0000,base,1,1"])),
                          "item 'q0000' of system 'base' appears twice")
    assert_one_line_error(*cli("compare", long_judged(tmp_path, "m.csv", ["q9999,base,1,"])),
                          "a judge score is missing")
    assert_one_line_error(*cli("compare", long_judged(tmp_path, "t.csv", ["q0000,c,1,1"])),
                          "name two systems of the file's system column with --systems")
    assert cli("compare", long_judged(tmp_path, "t2.csv", ["q0000,c,1,1"]),
               "--systems", "base,tuned")[0] == 0


def test_a_judged_comparison_goes_in_the_ledger_with_the_corrected_gap(tmp_path):
    ledger = str(tmp_path / "l.jsonl")
    for _ in range(2):
        status, out, _ = cli("compare", JUDGED, "--ledger", ledger, "--calibration", "0")
    assert status == 0 and "ledger: comparison 2 of 2 on this test set" in out
    entries = bed.read_ledger(ledger)
    body = cli_json("compare", JUDGED, "--calibration", "0")
    assert [e.gap for e in entries] == [body["gap"]] * 2 and entries[0].candidate == "tuned"
    assert len({e.test_set for e in entries}) == 1


def test_judged_slices_are_corrected_one_by_one_with_p_adjusted_across_them(tmp_path):
    rng, rows = random.Random(5), ["item,topic,a.judge,a.human,b.judge,b.human"]
    for i in range(2000):
        topic = "tiny" if i >= 1990 else ("math", "code", "law")[i % 3]
        a, b = int(rng.random() < 0.7), int(rng.random() < (0.5 if topic == "law" else 0.8))
        ja, jb = (x if rng.random() < 0.85 else 1 - x for x in (a, b))
        labelled = i % 7 == 0 and topic != "tiny"
        rows.append(f"q{i},{topic},{ja},{a if labelled else ''},{jb},{b if labelled else ''}")
    path = write(tmp_path / "s.csv", "\n".join(rows) + "\n")
    body = cli_json("compare", str(path), "--by", "topic", "--calibration", "0")
    slices = {s["slice"]: s for s in body["slices"]}
    assert slices["law"]["verdict"] == "worse" and slices["math"]["verdict"] == "better"
    assert slices["tiny"]["gap"] is None and slices["tiny"]["items"] == 10
    ps = [slices[t]["p"] for t in ("math", "code", "law")]
    assert [slices[t]["p_adjusted"] for t in ("math", "code", "law")] == pytest.approx(
        bed.holm(ps))
    data = bed.read_judged(str(path), by="topic")
    part = [k for k, s in enumerate(data.slices) if s == "law"]
    alone = bed.judge_corrected(bed.Judged(data.systems, *[tuple(tuple(c[k] for k in part)
                                                                 for c in cols)
                                                           for cols in (data.judge, data.human)],
                                           data.source), random.Random(1), replays=0)
    assert alone.gap == pytest.approx(slices["law"]["gap"], abs=1e-15)
    text = cli("compare", str(path), "--by", "topic", "--calibration", "0")[1]
    assert "tiny      10" in text and "too few labels to correct" in text
    assert_one_line_error(*cli("compare", str(path), "--by", "nope"), "no column 'nope'")


def test_plan_says_the_human_labels_a_judge_corrected_gap_needs():
    status, out, err = cli("plan", "--judge-agreement", "0.85", "--half-width", "0.03",
                           "--n-items", "5000", "--acc-a", "0.70", "--acc-b", "0.74")
    assert status == 0 and err == ""
    assert "  with the judge (PPI++ at its best lambda): 933 labels" in out
    assert "  people alone: 1,345 labels" in out
    assert cli_json("plan", "--judge-agreement", "0.85", "--half-width", "0.03",
                    "--n-items", "5000")["kind"] == "label plan"
    assert_one_line_error(*cli("plan", "--judge-agreement", "0.85"), "give --half-width")
    assert_one_line_error(*cli("plan", "--judge-agreement", "0.4", "--half-width", "0.03"),
                          "from 0.5 (no better than a coin) to 1")
    assert str(bed.plan(judge_agreement=0.85, half_width=0.03, n_items=5000)).startswith(
        "human labels for a 95% judge-corrected interval of +-3.0 pts")


def test_a_confidence_too_close_to_one_is_refused_and_six_nines_print_as_such():
    """0.9999999999999999 is below 1 as a float, but its tails (5.5e-17) round away: it ended
    in an internal error in compare and plan; six nines, the most taken, print as 99.9999%
    (it had printed '100% CI')."""
    for argv in (["compare", SHIPPED_CSV], ["plan", "--half-width", "0.015", "--accuracy",
                                             "0.85"]):
        assert_one_line_error(*cli(*argv, "--confidence", "0.9999999999999999"),
                              "--confidence must lie above 0 and at most 0.999999")
    status, out, err = cli("compare", SHIPPED_CSV, "--confidence", "0.999999")
    assert status == 0 and out.startswith("verdict: cannot tell. The paired 99.9999% CI"), err
    with pytest.raises(bed.ToolError, match="confidence must lie above 0 and at most 0.999999"):
        bed.compare([1, 0] * 20, [1, 1] * 20, confidence=0.9999999)


def test_plan_for_a_gap_too_small_to_reach_answers_with_the_formula_at_once():
    """A gap of 1e-9 points: the items-needed search walked one n at a time from 3e22 (a
    float's power cannot tell n from n + 1 there) and never ended."""
    done = subprocess.run([sys.executable, SCRIPT, "plan", "--acc-a", "0.5", "--acc-b",
                           "0.50000000001", "--n-items", "500"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "80% interval power needs n=30,043,676,979,856,586,833,920 paired" in done.stdout


def test_a_gate_refuses_resamples_too_few_to_place_an_interval_end():
    """B = 2 passed a gate on [+12.0, +14.6], an interval that missed the observed +10.0;
    now refused before any work, and an interval of too few resamples says so."""
    assert_one_line_error(*cli("compare", SHIPPED_CSV, "--resamples", "2", "--gate",
                               "--min-delta", "-5"),
                          "--gate reads an interval's end, which 2 resamples cannot place at "
                          "95%: give --resamples 400 or more")
    status, out, err = cli("compare", SHIPPED_CSV, "--resamples", "50")
    assert status == 0 and "note: B=50 resamples leave 1.25 in each tail of a 95% interval: " \
        "its ends are mostly Monte Carlo noise (400 or more place them)" in out, err
    assert "resamples leave" not in cli("compare", SHIPPED_CSV, "--resamples", "400")[1]


def test_a_plot_through_a_link_to_a_file_of_another_kind_is_refused(tmp_path):
    """The .svg rule was checked on the link's name only: x.svg linked to notes.txt wrote the
    plot over notes.txt."""
    victim = tmp_path / "notes.txt"
    victim.write_text("keep")
    (tmp_path / "x.svg").symlink_to(victim)
    assert_one_line_error(*cli("compare", SHIPPED_CSV, "--plot", str(tmp_path / "x.svg")),
                          f"--plot {tmp_path / 'x.svg'} is a link to {victim}, whose name "
                          "does not end in .svg: the tool writes through a link only to such "
                          "a file")
    assert victim.read_text() == "keep"


@pytest.mark.parametrize("files, argv, message", [
    ({"self.jsonl": '{"question_id": "p1", "model_a": "x", "model_b": "x", '
                    '"winner": "model_a"}\n'},
     ["compare", "self.jsonl"], "self.jsonl line 1: 'x' against itself"),
    ({}, ["compare", os.path.join(EXAMPLES, "judged.csv"), "--systems", "base,base"],
     "--systems names a system twice; name two systems"),
    ({"topics.csv": "item,topic,seed,a,b\n" + "".join(
        f"{i},t{i % 3},{s},{i % 2},{(i + s) % 2}\n" for i in range(30) for s in range(2))},
     ["compare", "topics.csv", "--systems", "a,b", "--run-col", "seed", "--by", "topic"],
     "--by slices the items of one file of scores; these are several tasks or runs"),
], ids=["a battle of a system against itself", "a judged pair named twice",
        "slices of runs"])
def test_inputs_that_name_one_system_twice_or_slice_runs_are_refused(tmp_path, monkeypatch,
                                                                    files, argv, message):
    monkeypatch.chdir(tmp_path)
    for name, content in files.items():
        write(tmp_path / name, content)
    assert_one_line_error(*cli(*argv), message)


def test_two_systems_with_the_same_predictions_have_p_1_by_the_metric_test(tmp_path):
    """Every swap of identical predictions leaves the metric as it is: the exact test's p is
    1, said as such, and the verdict cannot tell."""
    rows = list(csv.reader(open(os.path.join(EXAMPLES, "predictions.csv"), newline="")))
    same = tmp_path / "same.csv"
    with open(same, "w", newline="") as f:
        csv.writer(f).writerows([row[:3] + [row[2] if i else "copy"]
                                 for i, row in enumerate(rows)])
    status, out, err = cli("compare", str(same), "--label-col", "label", "--metric",
                           "macro-f1", "--details")
    assert status == 0, err
    assert "    paired permutation test: p=1 (the two metrics are equal)" in out.splitlines()
    assert "verdict: cannot tell" in out

