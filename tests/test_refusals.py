"""Flags that do not go together, each refused in one line before any work (in-process).

test_hostile.py runs the hostile cases as a user's shell would (a subprocess each); these
are the combinations of flags, checked where the library decides, with the message that
names the way out.
"""

import json

import pytest

from helpers import assert_one_line_error, cli

GOOD = "item,a,b\n1,1,0\n2,0,1\n3,1,1\n4,1,1\n5,0,0\n"
REAL = "item,a,b\n1,0.5,0.25\n2,0.75,1\n3,0.125,0.5\n4,1,0.5\n5,0,0.25\n"
LONG = "item,system,score\n" + "".join(f"{i},{s},{(i + len(s)) % 2}\n" for i in range(1, 6)
                                       for s in ("base", "new"))
AB = ["--a-col", "a", "--b-col", "b"]

CASES = [
    # which input
    (["--csv", "g.csv", "--baseline", "g.csv", "--candidate", "g.csv"], "not both"),
    (["--candidate", "g.csv"], "--candidate does not apply to simulate (it is a flag of compare)"),
    (["--csv", "g.csv", "--score-col", "a"], "--score-col names the score in one file per system"),
    (["--baseline", "g.csv"], "--baseline needs at least one --candidate"),
    (["--baseline", "g.csv", "--candidate", "g.csv", "--systems", "a,b"],
     "with one file per system use --score-col"),
    (["--csv", "g.csv", "--tasks", "x"] + AB, "--tasks goes with harness folders or one file per system"),
    (["--id-col", "item"], "--id-col does not apply to simulate"),
    # columns and names
    (["--csv", "long.csv", "--system-col", "system", "--systems", "base,new"],
     "it needs --score-col"),
    (["--csv", "long.csv", "--system-col", "system", "--score-col", "score", "--systems",
      "base,new", "--a-col", "x"], "name the systems with --systems"),
    (["--csv", "g.csv", "--names", "one"] + AB, "--names needs 2 names"),
    (["--csv", "g.csv", "--names", "x,x"] + AB, "--names repeats a name"),
    (["--csv", "g.csv", "--systems", "a,b", "--a-col", "a"], "--systems replaces --a-col"),
    (["--csv", "g.csv", "--systems", "a"], "--systems needs a baseline and at least one"),
    # designs
    (["--csv", "g.csv", "--strata-col", "a", "--engine", "counts"] + AB,
     "needs the per-item engine"),
    (["--csv", "g.csv", "--cluster-col", "a", "--exact"] + AB, "--exact covers plain 0/1"),
    (["--csv", "g.csv", "--cluster-col", "item", "--strata-col", "item"] + AB,
     "name the same column"),
    (["--csv", "g.csv", "--systems", "a,b,item", "--plot", "p.svg"],
     "--plot draws one comparison"),
    (["--csv", "g.csv", "--interval", "score", "--strata-col", "item"] + AB,
     "--interval score covers plain 0/1 items"),
    # data against simulation flags
    (["--csv", "g.csv", "--n-items", "50"] + AB, "--n-items does not apply to compare"),
    (["--csv", "g.csv", "--write-csv", "o.csv"] + AB, "--write-csv does not apply to compare (it is a flag of simulate)"),
    (["--calibration", "10"], "--calibration does not apply to simulate (it is a flag of compare)"),
    (["--csv", "real.csv", "--interval", "score"] + AB, "needs 0/1 scores; these are real"),
    (["--csv", "real.csv", "--exact"] + AB, "--exact needs 0/1 scores"),
    (["--csv", "real.csv", "--accuracy-interval", "wilson"] + AB,
     "--accuracy-interval needs 0/1 scores"),
    # sweep, calibration table, gate, ledger
    (["--n-grid", "100,200", "--n-items", "50"], "--n-grid replaces --n-items"),
    (["--n-grid", "100,200", "--write-csv", "o.csv"], "--write-csv does not apply to plan"),
    (["--calibration-table", "--n-items", "50"], "--n-items does not apply to calibrate"),
    (["--calibration-table", "--n-grid", "1,50"], "--n-grid sizes must lie between 2"),
    (["--calibration-table", "--acc-pairs", "0.5/1"], "accuracies must lie strictly between"),
    (["--calibration-table", "--replays", "0"], "--replays must be at least 1"),
    (["--acc-pairs", "0.5/0.6"], "--acc-pairs does not apply to simulate (it is a flag of calibrate)"),
    (["--half-width", "0.02", "--gate"], "--gate does not apply to plan"),
    (["--cluster-size", "5", "--gate"], "needs plain items (not --cluster-size)"),
    (["--ledger", "l.jsonl"], "--ledger does not apply to simulate (it is a flag of compare)"),
    (["--ledger-summary", "l.jsonl", "--n-items", "50"], "--n-items does not apply to ledger"),
    # flags that a mode of a subcommand does not use (issue 22's examples)
    (["--csv", "g.csv", "--n-grid", "100,200"] + AB, "--n-grid does not apply to compare"),
    (["--half-width", "0.015", "--resamples", "10", "--seed", "3"],
     "--resamples, --seed do not apply to it"),
    (["plan", "--replays", "10"], "goes with --n-grid (a simulated sweep)"),
    (["compare"], "compare needs your results"),
    (["compare", "g.csv", "--csv", "g.csv"] + AB, "not both"),
    (["ledger"], "ledger needs the ledger file"),
    (["--seed", "-7"], "--seed must be 0 or more"),
    # runs in the simulator
    (["--runs", "3", "--n-grid", "100,200"], "--runs plans items x runs at one size"),
    (["--runs", "3", "--run-sd", "0.3"], "--run-sd must lie in [0, 0.25)"),
    (["--runs", "3", "--run-item-noise", "2"], "--run-item-noise must lie in [0, 1]"),
    (["--runs", "3", "--run-sd", "0.2", "--acc-a", "0.999"], "is too large for an accuracy"),
]


@pytest.mark.parametrize("argv,fragment", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_flags_that_do_not_go_together(argv, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.csv").write_text(GOOD)
    (tmp_path / "real.csv").write_text(REAL)
    (tmp_path / "long.csv").write_text(LONG)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    status, out, err = cli(*argv)
    assert_one_line_error(status, out, err, fragment)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


SEEDS = "item,seed,base,new\n" + "".join(
    f"{i},{s},{(i * s) % 2},{(i + s) % 2}\n" for i in range(1, 7) for s in (1, 2))
FILE_CASES = [
    ("j.csv", '{"item": 1}\n', ["--csv", "j.csv", "--input-format", "csv"] + AB,
     "looks like JSON: use --input-format jsonl or --input-format json"),
    ("twice.csv", "item,a,a,b\n1,1,0,1\n2,0,1,1\n", ["--csv", "twice.csv"] + AB,
     "column 'a' appears twice in the header"),
    ("long.csv", LONG, ["--csv", "long.csv", "--system-col", "system", "--score-col", "score",
                        "--systems", "base,gone"], "no rows for system 'gone' (the system column holds: base, new)"),
    ("one.csv", "item,seed,base,new\n1,1,1,0\n2,1,0,1\n3,1,1,1\n",
     ["--csv", "one.csv", "--run-col", "seed", "--systems", "base,new"],
     "the run column 'seed' holds one value (1)"),
    ("lack.csv", "item,system,seed,score\n" + "".join(
        f"{i},{s},{r},{i % 2}\n" for i in range(1, 5) for s in ("base", "new") for r in (1, 2)
        if not (s == "new" and r == 2)),
     ["--csv", "lack.csv", "--system-col", "system", "--score-col", "score", "--run-col", "seed",
      "--systems", "base,new"], "system 'new' has no rows for run 2 (runs: 1, 2)"),
    ("multi.csv", 'item,note,a,b\n1,ok,1,0\n2,"two\nlines",0,1\n3,fine,x,1\n',
     ["--csv", "multi.csv"] + AB, "multi.csv line 5, column a: 'x' is not a number"),
    ("g.csv", GOOD, ["--baseline", "nothing_*.csv", "--candidate", "g.csv", "--score-col", "a",
                     "--id-col", "item"], "no file matches 'nothing_*.csv'"),
    ("g.csv", GOOD, ["--baseline", " , ", "--candidate", "g.csv", "--score-col", "a",
                     "--id-col", "item"], "no file named in"),
]


@pytest.mark.parametrize("name,content,argv,fragment", FILE_CASES,
                         ids=[f"{c[0]}: {c[3]}" for c in FILE_CASES])
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
    by_glob = cli("--baseline", "a_*.csv", "--candidate", "b_*.csv", *common)
    by_list = cli("--baseline", "a_1.csv,a_2.csv,a_3.csv", "--candidate",
                  "b_1.csv, b_2.csv, b_3.csv", *common)
    assert by_glob[0] == by_list[0] == 0, by_glob[2] + by_list[2]
    glob_json, list_json = (json.loads(got[1])["comparisons"][0] for got in (by_glob, by_list))
    assert glob_json["runs"] == list_json["runs"] and glob_json["runs"]["a"]["labels"] == ["a_1", "a_2", "a_3"]
    assert glob_json["gap"] == list_json["gap"]


def test_a_long_file_with_other_systems_says_they_were_not_compared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = "".join(f"{i},{s},{(i * len(s)) % 2}\n" for i in range(1, 21)
                   for s in ("base", "new", "other"))
    (tmp_path / "long.csv").write_text("item,system,score\n" + rows)
    status, out, err = cli("--csv", "long.csv", "--system-col", "system", "--score-col",
                           "score", "--systems", "base,new", "--resamples", "50")
    assert status == 0, err
    assert "rows of 1 other system(s) not compared: other" in out
