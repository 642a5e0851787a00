"""Hostile input: files, flags, paths, streams and signals, through the real entry point.

Every case asserts the exit status, at most one line on stderr (none on success), no
traceback, no temporary file left behind, and that every input file is byte-for-byte
unchanged afterwards.  The same breadth of cases is what a careful user would try.
"""

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field

import pytest

import bootstrap_eval_deltas as bed
import make_examples
from helpers import ROOT, cli

SCRIPT = os.path.join(ROOT, "bootstrap_eval_deltas.py")
GOOD = "item,a,b\n1,1,0\n2,0,1\n3,1,1\n4,1,1\n5,0,0\n"
AB = ["--a-col", "a", "--b-col", "b"]
FAST = ["--resamples", "40"]
SIM = ["--replays", "0", "--resamples", "40"]


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


def xlsx_bytes(rows):
    """A minimal Excel workbook, built by the same code that writes the shipped example."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in make_examples.xlsx_parts(rows).items():
            archive.writestr(name, data)
    return buffer.getvalue()


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


def _zip_without_workbook():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hello")
    return buffer.getvalue()


def file_cases():
    cases = []
    for name, content, argv, status, fragment in FILE_CASES:
        content = _zip_without_workbook() if content is None else content
        ext = ".xlsx" if content.startswith(b"PK") and b"workbook" in content else \
            ".jsonl" if name.startswith("JSONL") else ".json" if name.startswith("JSON ") \
            else ".csv"
        check = same_report_as_good if status == 0 and content.startswith(
            (b"item", b"\xef\xbb\xbf")) and b"9999" not in content and b"1e50" not in content \
            and b"1.0" not in content else None
        cases.append(Case(f"file: {name}", ["--csv", "in" + ext] + argv + FAST, status,
                          fragment, {"in" + ext: content}, check=check))
        if content and not content.startswith(b"PK"):
            cases.append(Case(f"stdin: {name}", ["--csv", "-"] + argv + FAST + (
                ["--input-format", "jsonl"] if ext == ".jsonl" else []), status,
                fragment.replace("in.csv", "<stdin>"), stdin=content, check=check))
    return cases


PATH_CASES = [
    Case("missing file", ["--csv", "nope.csv"] + AB, 2, "cannot read nope.csv"),
    Case("a folder as input", ["--csv", "."] + AB, 2, "--a-col names a column of one file"),
    Case("a folder without logs as input", ["--csv", "."], 2, "no lm-eval samples_<task>"),
    Case("/dev/zero as input", ["--csv", "/dev/zero"] + AB, 2, "a NUL byte"),
    Case("/dev/null as input", ["--csv", "/dev/null"] + AB, 2, "is empty"),
    Case("plot over the input", ["--csv", "x.csv", "--plot", "x.csv"] + AB, 2,
         "--plot writes SVG", {"x.csv": GOOD}),
    Case("plot over the input named .svg", ["--csv", "x.svg", "--plot", "x.svg"] + AB, 2,
         "is an input", {"x.svg": GOOD}),
    Case("plot over the input through a symlink", ["--csv", "x.csv", "--plot", "link.svg"] + AB,
         2, "is an input", {"x.csv": GOOD, "link.svg": "->x.csv"}),
    Case("plot over the file stdin comes from", ["--csv", "-", "--plot", "y.svg"] + AB, 2,
         "is an input (stdin's file)", {"y.svg": GOOD}, stdin="file:y.svg"),
    Case("plot over a candidate run file",
         ["--baseline", "b.csv", "--candidate", "c.svg", "--score-col", "s", "--id-col", "id",
          "--plot", "c.svg"], 2, "is an input", {"b.csv": "id,s\n1,1\n2,0\n",
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
         "--confidence must be strictly between 0 and 1"),
    Case("confidence 1e999999999", SIM + ["--confidence", "1e999999999"], 2, "out of range"),
    Case("half-width 1e-400", ["--half-width", "1e-400"], 2, "out of range"),
    Case("half-width below the limit", ["--half-width", "0.00001"], 2,
         "--half-width must be at least 0.0001"),
    Case("resamples 1e9", SIM[:2] + ["--resamples", "1e9"], 2, "--resamples must be at most"),
    Case("resamples 1e18", SIM[:2] + ["--resamples", "1000000000000000000"], 2,
         "--resamples must be at most"),
    Case("n-items 1e18", SIM + ["--n-items", "1e18"], 2, "--n-items must be at most"),
    Case("replays 1e9", ["--replays", "1e9"], 2, "--replays must be at most"),
    Case("permutations 1e18", ["--csv", "x.csv", "--permutations", "1e18"] + AB, 2,
         "--permutations must be at most", {"x.csv": GOOD}),
    Case("n-grid too large", ["--n-grid", "100,1e9"], 2, "--n-grid sizes must lie between 2 and 10,000,000"),
    Case("seed with 60 digits", SIM + ["--seed", "9" * 60], 2, "more than 50 characters"),
    Case("negative seed is refused", SIM + ["--seed", "-5"], 2, "--seed must be 0 or more"),
    Case("thousands separators in n-items", SIM + ["--n-items", "1,000"], 0, ""),
    Case("n-items in Arabic-Indic digits", SIM + ["--n-items", "\u0661\u0660\u0660"], 2,
         "not a whole number"),
    Case("n-items fraction", SIM + ["--n-items", "10.5"], 2, "not a whole number"),
    Case("corr nan", SIM + ["--corr", "nan"], 2, "not a number"),
    Case("corr 1", SIM + ["--corr", "1"], 2, "strictly between -1 and 1"),
    Case("unknown flag", ["--bogus"], 2, "unrecognized arguments"),
    Case("abbreviated flag", ["--n-it", "50"], 2, "unrecognized arguments"),
    Case("interval in capitals", ["--interval", "BCa"], 2, "invalid choice"),
    Case("output misspelt", ["--output", "markdwn"], 2, "invalid choice"),
    Case("json with markdown", ["--json", "--output", "markdown"], 2, "conflicts"),
    Case("flag value with a control character", SIM + ["--corr", "0.6\x1b[2J"], 2,
         "\\x1b[2J"),
]


STREAM_CASES = [
    Case("stdout is a full disk", SIM, 2, "No space left on device", stdout="full"),
    Case("stdout is closed", SIM, 2, "stdout is closed", stdout="closed"),
    Case("the reader of stdout is gone", SIM, 141, "", stdout="gone"),
    Case("stdin closed when reading it", ["--csv", "-"] + AB, 2, "stdin: it is closed",
         stdin="closed"),
    Case("stdin closed when not reading it", SIM, 0, "", stdin="closed"),
    Case("stdin empty", ["--csv", "-"] + AB, 2, "<stdin> is empty", stdin=b""),
    Case("ASCII-only stdout, markdown", ["--csv", "x.csv", "--output", "markdown"] + AB + FAST,
         0, "", {"x.csv": GOOD}, env={"PYTHONIOENCODING": "ascii", "LANG": "C"},
         check=lambda tmp, out: out.isascii() or pytest.fail(out)),
    Case("ASCII-only stdout, text", ["--csv", "x.csv"] + AB + FAST, 0, "", {"x.csv": GOOD},
         env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"}),
    Case("stdout full: no plot, no ledger line", ["compare", "x.csv", "--plot", "o.svg",
                                                  "--ledger", "l.jsonl"] + AB + FAST,
         2, "No space left on device", {"x.csv": GOOD}, stdout="full",
         check=lambda tmp, out: not (tmp / "o.svg").exists() and not (tmp / "l.jsonl").exists()
         or pytest.fail(str(list(tmp.iterdir())))),
    Case("stdout closed: no simulated CSV", SIM + ["--write-csv", "w.csv"], 2,
         "stdout is closed", stdout="closed",
         check=lambda tmp, out: not (tmp / "w.csv").exists() or pytest.fail("written")),
    Case("stdout full: a leaderboard's forest plot not written",
         ["leaderboard", "x.csv", "--plot", "f.svg"] + FAST[:0], 2, "No space left on device",
         {"x.csv": "item,a,b,c\n1,1,0,1\n2,0,1,1\n3,1,1,0\n4,0,0,1\n"}, stdout="full",
         check=lambda tmp, out: not (tmp / "f.svg").exists() or pytest.fail("written")),
    Case("stderr closed, bad flag: status 2 all the same", ["compare", "--nope"], 2, "",
         stdout="capture", env={"BED_TEST_CLOSE_STDERR": "1"}),
    Case("stderr closed, a long run says nothing and succeeds", SIM, 0, "",
         env={"BED_TEST_CLOSE_STDERR": "1"}),
    Case("markdown escapes | and HTML", ["--csv", "x.csv", "--a-col", "a|b", "--b-col",
                                         "<script>x</script>", "--output", "markdown"] + FAST,
         0, "", {"x.csv": "item,a|b,<script>x</script>\n1,1,0\n2,0,1\n3,1,1\n"},
         check=lambda tmp, out: ("<script>" not in out and "a\\|b" in out
                                 and out.splitlines()[2].count(" | ") == 10) or pytest.fail(out)),
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


# --- signals ---------------------------------------------------------------------------------

def start_long(tmp_path, *extra):
    return subprocess.Popen([sys.executable, SCRIPT, "--replays", "100000", "--quiet",
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
    status, out, err = cli("--replays", "0", "--resamples", "20", "--write-csv", str(target))
    assert status == 143 and err == "bootstrap_eval_deltas: terminated\n"
    assert list(tmp_path.iterdir()) == []


# --- the guard: a bug is one line and status 70 ------------------------------------------------

def test_an_internal_error_is_one_line_and_status_70(monkeypatch):
    def broken(request, writes):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setitem(bed._RUNNERS, "simulate", broken)
    status, out, err = cli("--replays", "0")
    assert status == 70 and out == ""
    assert err == ("bootstrap_eval_deltas: internal error: ZeroDivisionError: division by zero; "
                   "please report it with the command line\n")


def test_a_broken_pipe_in_process_is_status_141(monkeypatch):
    class Gone(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(sys, "stdout", Gone())
    assert bed.main(["--replays", "0", "--resamples", "20"]) == 141


def test_python_older_than_3_10_is_told_in_one_line():
    versions = os.path.expanduser("~/.pyenv/versions")
    found = [os.path.join(versions, v, "bin", "python") for v in
             (sorted(os.listdir(versions)) if os.path.isdir(versions) else [])
             if v.startswith(("3.9.", "3.8."))]
    found += [p for p in [shutil.which("python3.9")] if p and "/shims/" not in p]
    old = [p for p in found if os.path.exists(p)]
    if not old:
        pytest.skip("no Python older than 3.10 on this machine")
    proc = subprocess.run([old[0], SCRIPT, "--replays", "0"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("bootstrap_eval_deltas: error: needs Python 3.10 or newer")
    assert proc.stderr.count("\n") == 1


EXAMPLES = os.path.join(ROOT, "datasets", "examples")
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
    "CSV": ({"in.csv": GOOD}, ["--csv", "in.csv", *AB], {"csv"}, False),
    "TSV": ({"in.tsv": GOOD.replace(",", "\t")}, ["--csv", "in.tsv", *AB], {"csv"}, False),
    "semicolon CSV": ({"in.csv": GOOD.replace(",", ";")}, ["--csv", "in.csv", *AB], {"csv"},
                      False),
    "JSON lines": ({"in.jsonl": jsonl(*(dict(zip(GOOD_ROWS[0], r)) for r in GOOD_ROWS[1:]))},
                   ["--csv", "in.jsonl", *AB], {"jsonl"}, False),
    "JSON list": ({"in.json": json.dumps([dict(zip(GOOD_ROWS[0], r)) for r in GOOD_ROWS[1:]])},
                  ["--csv", "in.json", *AB], {"json"}, False),
    "xlsx": ({"in.xlsx": xlsx_bytes(GOOD_ROWS)}, ["--csv", "in.xlsx", *AB], {"xlsx"}, False),
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
