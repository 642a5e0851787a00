"""The input readers at their edges: text tables (CSV, JSON lines, JSON documents) that are
almost right, Excel workbooks and zip archives written by other tools or damaged, Inspect,
lm-eval and HELM logs in their less common shapes (string scores, other epoch reducers,
perturbations, stdin), harness folders (task selection, epochs, several models), and run
files (many runs, composite ids, clusters, names).

Each case goes through the front door -- the command line via ``cli`` or ``bed.read`` -- and
either checks the numbers read or that the refusal is one line naming the cause.
"""

import io
import json
import os
import statistics
import sys
import types
import zipfile
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
import make_examples
import zstd_decode
from helpers import ROOT, assert_one_line_error, cli, cli_json

AB = ["--a-col", "a", "--b-col", "b"]
QUICK = ["--json", "--resamples", "40", "--calibration", "0"]
PAIR_EVAL = os.path.join(ROOT, "datasets", "examples", "inspect", "pair_eval")


def write(path, content):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as handle:
        handle.write(content)
    return str(path)


def body(*argv):
    return cli_json("compare", *argv, *QUICK, quiet=True)


@pytest.fixture
def stdin(monkeypatch):
    """Feed bytes to the tool's stdin (read as ``-``)."""
    def feed(data):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return feed


# --- Text files: what the first bytes and the header say -----------------------------------

@pytest.mark.parametrize("name,content,argv,fragment", [
    ("null.csv", "null\n", AB, "null.csv holds the JSON value 'null', not a table or a list "
                               "of records"),
    ("number.csv", "3.5\n", AB, "number.csv holds the JSON value '3.5'"),
    ("quote.csv", '"item"x,a,b\n1,1,0\n', AB, "quote.csv line 1: ',' expected after '\"'"),
    ("blank.json", "   \n\n", ["--input-format", "json", *AB], "blank.json is empty"),
    ("number.json", "42\n", ["--input-format", "json", *AB],
     "number.json: expected a list of records"),
    ("scalars.json", "[1, 2]\n", AB, "scalars.json record 1: expected a JSON object"),
    ("none.json", "[]\n", AB, "none.json has no records"),
    ("blank.jsonl", "\n\n", ["--input-format", "jsonl", *AB], "blank.jsonl has no records"),
    ("wide.csv", "item,a,b\n".encode("utf-16"), AB, "wide.csv is UTF-16 text; save it as UTF-8"),
    ("plain.csv", "item,a,b\n1,1,0\n2,0,1\n", ["--input-format", "xlsx", *AB],
     "plain.csv is not an Excel workbook (.xlsx)"),
    ("list.json", '[{"a": 1, "b": 0}]\n', ["--input-format", "inspect", *AB],
     "list.json is not an Inspect log (a JSON object with eval and samples)"),
    ("twice.jsonl", '{"m.a": 1, "m.a": 0, "b": 0}\n{"m.a": 1, "b": 1}\n',
     ["--a-col", "m.a", "--b-col", "b"], "twice.jsonl line 1: key 'm.a' appears twice"),
    ("nulls.jsonl", '{"a": null, "b": 1}\n{"a": null, "b": 0}\n', AB,
     "nulls.jsonl: 2 row(s) with a missing score, id or label (first: 1, 2)"),
    ("sparse.csv", "item,a,b\n1,1,0\n999999999999,0,1\n2,1,1\n999999999999,0,0\n", AB,
     "sparse.csv: 1 id(s) appear more than once (first: 999999999999)"),
    ("negative.jsonl", '{"item": -5, "a": 1, "b": 0}\n{"item": 3, "a": 0, "b": 1}\n'
                       '{"item": -5, "a": 1, "b": 1}\n', AB,
     "negative.jsonl: 1 id(s) appear more than once (first: -5)"),
])
def test_almost_tables_are_refused_in_one_line(tmp_path, name, content, argv, fragment):
    path = write(tmp_path / name, content)
    assert_one_line_error(*cli("--csv", path, *argv), fragment)


def test_a_leaderboard_of_a_file_with_only_ids_has_nothing_to_rank(tmp_path):
    path = write(tmp_path / "ids.jsonl", '{"item": 1}\n{"item": 2}\n')
    assert_one_line_error(*cli("leaderboard", path),
                          "the file has no column besides the ids and labels to rank")


def test_a_line_longer_than_16_mib_is_refused_with_its_number(tmp_path):
    path = write(tmp_path / "long.csv", b"item,a,b\n1,1,0\n2,0," + b"1" * (1 << 24) + b"\n")
    assert_one_line_error(*cli("--csv", path, *AB),
                          "long.csv line 3 is longer than 16 MiB, the longest line the tool reads")


def _read_fails(path):
    try:
        with open(path, "rb") as handle:
            handle.read(64)
    except OSError as err:
        return err.strerror
    return None


@pytest.mark.skipif(_read_fails("/proc/self/mem") != "Input/output error",
                    reason="needs a file that opens but cannot be read (Linux's /proc/self/mem)")
def test_a_read_error_is_a_refusal_not_an_internal_error():
    """/proc/self/mem opens but its first read fails (EIO): the file cannot be read, which
    is bad input (exit 2, one line), not a bug of the tool (exit 70)."""
    assert_one_line_error(*cli("--csv", "/proc/self/mem", *AB),
                          "cannot read /proc/self/mem: Input/output error")


# --- Rows: ids, labels and values the fast path hands to the careful one -------------------

def test_ids_that_do_not_print_back_as_integers_stay_text(tmp_path):
    """007, -1 and +2 are not the integers 7, 1 and 2: each is its own item."""
    path = write(tmp_path / "ids.csv", "item,a,b\n007,1,0\n7,0,1\n-1,1,1\n+2,0,0\n")
    table = bed.read(path, a_col="a", b_col="b")
    assert list(table.ids) == ["007", 7, "-1", "+2"]
    assert table.columns == ((1, 0, 1, 0), (0, 1, 1, 0))


def test_json_ids_that_are_not_finite_numbers_are_kept_as_their_text(tmp_path):
    path = write(tmp_path / "ids.jsonl",
                 '{"item": NaN, "a": 1, "b": 0}\n{"item": 1e400, "a": 0, "b": 1}\n'
                 '{"item": [1, NaN], "a": 1, "b": 1}\n')
    table = bed.read(path, a_col="a", b_col="b")
    assert list(table.ids) == ["NaN", "1e400", '[1, "NaN"]']
    assert table.columns == ((1, 0, 1), (0, 1, 1))


def test_columns_named_eval_and_version_do_not_make_a_table_an_inspect_log(tmp_path):
    path = write(tmp_path / "t.jsonl",
                 '{"item": 1, "eval": 1, "version": 2, "a": 1, "b": 0}\n'
                 '{"item": 2, "eval": 0, "version": 2, "a": 0, "b": 1}\n')
    table = bed.read(path, a_col="a", b_col="b")
    assert list(table.ids) == [1, 2] and table.columns == ((1, 0), (0, 1))


def test_composite_ids_read_row_by_row_allow_a_trailing_blank_line(tmp_path):
    path = write(tmp_path / "c.csv", "task,i,a,b\nx,1,1,0\nx,2,0,1\ny,1,1,1\n\n")
    table = bed.read(path, a_col="a", b_col="b", id_col="task,i")
    assert list(table.ids) == [("x", 1), ("x", 2), ("y", 1)]
    assert table.columns == ((1, 0, 1), (0, 1, 1))


def test_a_broken_quote_under_composite_ids_names_its_line(tmp_path):
    path = write(tmp_path / "c.csv", 'task,i,a,b\nx,1,1,0\nx,2,"0"1,1\n')
    assert_one_line_error(*cli("--csv", path, "--id-col", "task,i", *AB),
                          "c.csv line 3: ',' expected after '\"'")


def test_a_missing_cluster_label_is_refused_or_dropped_and_counted(tmp_path):
    path = write(tmp_path / "cl.csv", "item,a,b,c\n1,1,0,p\n2,0,1,\n3,1,1,q\n4,0,0,q\n")
    assert_one_line_error(*cli("--csv", path, "--cluster-col", "c", *AB),
                          "cl.csv: 1 row(s) with a missing score, id or label (first: 2)")
    table = bed.read(path, a_col="a", b_col="b", cluster_col="c", on_missing="drop")
    assert list(table.ids) == [1, 3, 4] and table.clusters == ("p", "q", "q")
    assert table.dropped == 1


def test_more_distinct_values_than_the_parsers_caches_hold_are_all_read_exactly(tmp_path):
    """The CSV reader and the JSON decoder remember up to 65,536 value texts; past that
    every value is parsed afresh, to the same exact number."""
    n = 34_000                                   # two new texts a row: 68,000 in all
    lines = ["item,a,b"] + [f"{i},{i / 100_000},{(2 * i + 1) / 200_000}" for i in range(1, n + 1)]
    table = bed.read(write(tmp_path / "many.csv", "\n".join(lines) + "\n"), a_col="a", b_col="b")
    assert table.n == n
    assert sum(table.columns[0]) == bed.Fraction(n * (n + 1), 2 * 100_000)
    assert sum(table.columns[1]) == bed.Fraction(n * n + 2 * n, 200_000)
    records = "".join(json.dumps({"item": i, "a": i / 100_003, "b": i / 100_019}) + "\n"
                      for i in range(1, n + 1))
    table = bed.read(write(tmp_path / "many.jsonl", records), a_col="a", b_col="b")
    assert table.n == n
    assert table.columns[0][-1] == bed.Fraction(str(n / 100_003))
    assert table.columns[1][-1] == bed.Fraction(str(n / 100_019))


# --- Excel workbooks and zip archives ---------------------------------------------------------

ROWS = [["item", "a", "b"], [1, 1, 0], [2, 0, 1], [3, 1, 1]]
NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
SHEET = "xl/worksheets/sheet1.xml"


def zip_bytes(parts):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def workbook(rows=ROWS, drop=(), **parts):
    """A minimal workbook's bytes (as tests/make_examples.py writes it), parts replaced or
    dropped (``**{"xl/workbook.xml": ...}``)."""
    members = make_examples.xlsx_parts(rows)
    for name in drop:
        del members[name]
    members.update(parts)
    return zip_bytes(members)


def sheet(rows_xml):
    return f"<worksheet {NS}><sheetData>{rows_xml}</sheetData></worksheet>"


def patched(data, name, **fields):
    """A zip whose member *name* claims another method, CRC-32 or size, in both its local
    and its central header."""
    data, encoded = bytearray(data), name.encode()
    layouts = ((b"PK\x01\x02", 46, 28, {"method": 10, "crc": 16, "size": 24}),
               (b"PK\x03\x04", 30, 26, {"method": 8, "crc": 14, "size": 22}))
    for signature, fixed, name_at, offsets in layouts:
        at = data.find(signature)
        while at >= 0:
            length = int.from_bytes(data[at + name_at:at + name_at + 2], "little")
            if data[at + fixed:at + fixed + length] == encoded:
                for field, value in fields.items():
                    width = 2 if field == "method" else 4
                    start = at + offsets[field]
                    data[start:start + width] = value.to_bytes(width, "little")
            at = data.find(signature, at + 4)
    return bytes(data)


def test_cells_without_references_and_inline_strings_are_read_in_order(tmp_path):
    """Some writers leave out a cell's r="B2": cells then follow each other."""
    inline = "".join(f'<c t="inlineStr"><is><t>{name}</t></is></c>' for name in ("item", "a", "b"))
    plain = "".join(f"<row>{''.join(f'<c><v>{v}</v></c>' for v in row)}</row>"
                    for row in ((1, 1, 0), (2, 0, 1)))
    path = write(tmp_path / "w.xlsx", workbook(**{SHEET: sheet(f"<row>{inline}</row>{plain}")}))
    table = bed.read(path, a_col="a", b_col="b")
    assert list(table.ids) == [1, 2] and table.columns == ((1, 0), (0, 1))


def test_the_first_sheet_is_found_without_relationships_or_among_several(tmp_path):
    without = write(tmp_path / "plain.xlsx", workbook(drop=["xl/_rels/workbook.xml.rels"]))
    rels = ('<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId2" Target="styles.xml" Type="styles"/>'
            '<Relationship Id="rId1" Target="/xl/worksheets/data.xml" Type="worksheet"/>'
            '</Relationships>')
    moved = write(tmp_path / "moved.xlsx", workbook(
        drop=[SHEET], **{"xl/_rels/workbook.xml.rels": rels,
                         "xl/worksheets/data.xml": make_examples.xlsx_parts(ROWS)[SHEET]}))
    for path in (without, moved):
        table = bed.read(path, a_col="a", b_col="b")
        assert list(table.ids) == [1, 2, 3] and table.columns == ((1, 0, 1), (0, 1, 1))


@pytest.mark.parametrize("parts,drop,fragment", [
    ({"xl/workbook.xml": "<workbook"}, (), "xl/workbook.xml is not valid XML (unclosed token"),
    ({}, (SHEET,), "the workbook's first sheet (xl/worksheets/sheet1.xml) is not in the file"),
    ({SHEET: sheet("<row>")}, (), "xl/worksheets/sheet1.xml is not valid XML (mismatched tag"),
    ({SHEET: sheet('<row r="1"><c r="XFE1"><v>1</v></c></row>')}, (),
     "cell reference 'XFE1' is not a cell of an Excel sheet (A1 to XFD1048576)"),
    ({SHEET: sheet('<row r="1"><c r="A1048577"><v>1</v></c></row>')}, (),
     "cell reference 'A1048577' is not a cell"),
    ({SHEET: sheet('<row r="1"><c r="a1"><v>1</v></c></row>')}, (),
     "cell reference 'a1' is not a cell"),
    ({SHEET: sheet('<row r="0"><c r="A1"><v>1</v></c></row>')}, (),
     "row number '0' is not a row of an Excel sheet (1 to 1,048,576)"),
    ({SHEET: sheet('<row r="x"><c r="A1"><v>1</v></c></row>')}, (), "row number 'x' is not a row"),
    ({}, ("xl/sharedStrings.xml",),
     "cell A1 refers to shared string '0', which the workbook does not hold (no shared strings)"),
    ({"xl/sharedStrings.xml": f"<sst {NS}><si><t>item</t></si></sst>"}, (),
     "cell B1 refers to shared string '1', which the workbook does not hold (1 of them)"),
])
def test_broken_workbooks_are_refused_naming_the_part(tmp_path, parts, drop, fragment):
    path = write(tmp_path / "w.xlsx", workbook(drop=drop, **parts))
    assert_one_line_error(*cli("--csv", path, *AB), f"w.xlsx: {fragment}")


@pytest.mark.parametrize("member,fields,fragment", [
    ("xl/workbook.xml", {"size": 0x5000_0000},
     "xl/workbook.xml unpacks to more than 1 GiB, the most the tool reads"),
    ("xl/workbook.xml", {"method": 6},
     "a damaged or unsupported zip archive (That compression method is not supported)"),
])
def test_zip_members_the_tool_cannot_unpack_are_refused(tmp_path, member, fields, fragment):
    path = write(tmp_path / "w.xlsx", patched(workbook(), member, **fields))
    assert_one_line_error(*cli("--csv", path, *AB), f"w.xlsx: {fragment}")


def test_a_damaged_sheet_found_while_streaming_it_is_one_line(tmp_path):
    """A sheet larger than the first peek: its bad CRC-32 shows only as it is streamed."""
    rows = [["item", "a", "b"]] + [[i, i % 2, i // 2 % 2] for i in range(1, 3001)]
    path = write(tmp_path / "w.xlsx", patched(workbook(rows), SHEET, crc=1))
    assert_one_line_error(*cli("--csv", path, *AB),
                          "w.xlsx: a damaged zip archive (Bad CRC-32 for file "
                          "'xl/worksheets/sheet1.xml')")


def test_an_archive_over_the_size_limit_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    """The limit (1 GiB) lowered to keep the test small: the whole archive is measured."""
    path = write(tmp_path / "w.xlsx", workbook())
    monkeypatch.setattr(bed, "MAX_ARCHIVE_BYTES", os.path.getsize(path) - 1)
    assert_one_line_error(*cli("--csv", path, *AB),
                          "w.xlsx is larger than 1 GiB, the largest archive the tool reads")


@pytest.fixture
def stdlib_zstd(monkeypatch):
    """Python 3.14's compression.zstd, lent on older Pythons (tests/zstd_decode.py)."""
    if sys.version_info >= (3, 14):
        return
    module = types.ModuleType("compression.zstd")

    class ZstdDecompressor:
        def decompress(self, data, max_length=-1):
            out = zstd_decode.decompress(data)
            return out if max_length < 0 else out[:max_length]
    module.ZstdDecompressor = ZstdDecompressor
    monkeypatch.setitem(sys.modules, "compression.zstd", module)
    monkeypatch.delitem(sys.modules, "zstandard", raising=False)


def test_zstandard_logs_are_read_by_the_standard_library_decompressor(tmp_path, stdlib_zstd):
    """The numbers are Inspect's own headline accuracies (the fixtures' truth.json)."""
    names = sorted(os.listdir(PAIR_EVAL))
    base, tuned = (os.path.join(PAIR_EVAL, name) for name in names)
    got = body(base, tuned)
    assert got["input"]["items"] == 30
    assert got["input"]["systems"] == ["mockllm/base", "mockllm/tuned"]
    with open(os.path.join(ROOT, "tests", "fixtures", "inspect", "truth.json")) as handle:
        logs = {log["path"]: log for log in json.load(handle)["logs"]}
    want = [logs[f"pair_eval/{name}"]["inspect_results"]["scores"][0]["metrics"]["accuracy"]
            for name in names]
    accuracy = got["comparisons"][0]["accuracy"]
    assert [accuracy["a"], accuracy["b"]] == pytest.approx(want)
    with open(base, "rb") as handle:
        bad = write(tmp_path / "bad.eval", patched(handle.read(), "header.json", crc=1))
    assert_one_line_error(*cli("compare", bad, tuned),
                          "bad.eval (header.json): the member does not unpack to what its zip "
                          "header says")


# --- Inspect logs ------------------------------------------------------------------------------

def inspect_log(path, epochs, model="m", task="t", reducer=None, results=None, inputs=None,
                unscored=(), failed=()):
    """An Inspect JSON log: *epochs* a list of per-epoch value lists (sample ids from 1);
    samples in *unscored* have no scores, those in *failed* ended in an error."""
    samples = []
    for epoch, values in enumerate(epochs, start=1):
        for item, value in enumerate(values, start=1):
            sample = {"id": item, "epoch": epoch, "input": f"question {item}" if inputs is None
                      else inputs, "scores": {"match": {"value": value}}}
            if item in unscored:
                del sample["scores"]
            if item in failed:
                sample["error"] = {"message": "the model timed out"}
            samples.append(sample)
    config = {"epochs": len(epochs)}
    if reducer is not None:
        config["epochs_reducer"] = [reducer]
    log = {"version": 2, "status": "success",
           "eval": {"task": task, "model": model, "config": config}, "samples": samples}
    if results is not None:
        log["results"] = results
    return write(path, json.dumps(log, indent=2))


BASE = [["C", "C", "I", "I"]]                  # accuracy 0.5


def test_string_score_values_read_as_numbers_or_refused(tmp_path):
    base = inspect_log(tmp_path / "base.json", BASE, "org/base")
    partial = inspect_log(tmp_path / "p.json", [["C", "0.75", "I", "C"]], "org/p")
    got = body(base, partial)
    assert got["comparisons"][0]["accuracy"] == {"a": 0.5, "b": 0.6875}
    odd = inspect_log(tmp_path / "odd.json", [["C", "maybe", "I", "C"]], "org/odd")
    assert_one_line_error(*cli("compare", base, odd), "odd.json sample 2, scorer match: 'maybe' "
                          "is not a number")


EPOCHS = [["C", "I", "I", "C"], ["I", "I", "C", "C"], ["I", "C", "I", "C"]]


@pytest.mark.parametrize("reducer,epochs,accuracy,note", [
    ("max", EPOCHS, 1.0, "epochs reduced by max, as the log's reducer"),
    ("min", EPOCHS, 0.25, "epochs reduced by min, as the log's reducer"),
    ("median", EPOCHS, 0.25, "epochs reduced by median, as the log's reducer"),
    # four epochs: the median is the mean of the middle two -- per item 1, 1, 0, 0.5
    # (the epochs' mean would be 0.5625)
    ("median", [["C", "C", "I", "C"], ["C", "C", "I", "C"], ["C", "C", "I", "I"],
                ["I", "I", "C", "I"]], 0.625, "epochs reduced by median"),
    ("pass_at_2", EPOCHS, 0.5, "the log reduces its epochs by pass_at_2, which the tool does "
                               "not follow (a reducer the tool does not know): its epochs are "
                               "compared as runs"),
])
def test_other_epoch_reducers(tmp_path, reducer, epochs, accuracy, note):
    """A headline that names a score the log does not hold is not quoted."""
    results = {"headline": {"score": "match", "metric": "accuracy"},
               "scores": [{"name": "other", "metrics": {"accuracy": {"value": 0.5}}}]}
    log = inspect_log(tmp_path / "e.json", epochs, "org/e", reducer=reducer, results=results)
    got = body(log, inspect_log(tmp_path / "base.json", BASE, "org/base"))
    assert got["comparisons"][0]["accuracy"]["a"] == accuracy
    assert note in got["input"]["dropped_note"]
    assert "headline" not in got["input"]["dropped_note"]
    if reducer == "pass_at_2":
        assert got["comparisons"][0]["runs"]["a"]["runs"] == len(epochs)
    else:
        assert got["comparisons"][0]["runs"] is None and got["input"]["items"] == 4


def test_an_unscored_epoch_keeps_the_epochs_as_runs(tmp_path):
    """An epoch with no score (NaN) cannot be reduced: the epochs stay runs, and the sample
    without its score is refused, or dropped when asked."""
    epochs = [["C", float("nan"), "I", "C"], ["I", "I", "C", "C"]]
    log = inspect_log(tmp_path / "e.json", epochs, "org/e", reducer="mode")
    base = inspect_log(tmp_path / "base.json", BASE, "org/base")
    assert_one_line_error(*cli("compare", log, base), "e.json: 1 row(s) with a missing score, id "
                          "or label (first: (2, 1)); fix them or use --on-missing drop")
    got = body(log, base, "--on-missing", "drop")
    assert got["comparisons"][0]["runs"]["a"]["runs"] == 2 and got["input"]["items"] == 3
    assert got["comparisons"][0]["accuracy"] == pytest.approx({"a": 2 / 3, "b": 1 / 3})
    assert ("reduces its epochs by mode, which the tool does not follow (an epoch without a "
            "score): its epochs are compared as runs") in got["input"]["dropped_note"]


@pytest.mark.parametrize("values", [[1, 0, 1], [0, 0, 1, 1], [Fraction(1, 4), 1, Fraction(1, 2), Fraction(1, 2), 0]])
def test_each_epoch_reducer_is_the_statistic_of_its_name(values):
    exact = [Fraction(v) for v in values]
    assert bed._reduce_epochs(values, "mean") == statistics.mean(exact)
    assert bed._reduce_epochs(values, "median") == statistics.median(exact)
    assert bed._reduce_epochs(values, "mode") == statistics.mode(values)
    assert bed._reduce_epochs(values, "max") == max(values)
    assert bed._reduce_epochs(values, "min") == min(values)
    assert bed._reduce_epochs(values, "pass_at_2") is None


def test_a_sample_without_scores_is_missing(tmp_path):
    log = inspect_log(tmp_path / "s.json", [["C", "C", "I", "C"]], "org/s", unscored=(2,))
    base = inspect_log(tmp_path / "base.json", BASE, "org/base")
    assert_one_line_error(*cli("compare", log, base), "s.json: 1 row(s) with a missing score")
    got = body(log, base, "--on-missing", "drop")
    assert got["input"]["items"] == 3
    assert got["comparisons"][0]["accuracy"] == pytest.approx({"a": 2 / 3, "b": 1 / 3})


def test_a_log_whose_every_sample_failed_is_refused(tmp_path):
    log = inspect_log(tmp_path / "f.json", BASE, "org/f", failed=(1, 2, 3, 4))
    base = inspect_log(tmp_path / "base.json", BASE, "org/base")
    assert_one_line_error(*cli("compare", log, base), "f.json: an Inspect log whose 4 sample(s) "
                          "all ended in an error; nothing was scored")


def test_inputs_holding_nan_are_fingerprinted_and_compared(tmp_path):
    """Chat inputs with a NaN parameter: the same in both logs, or refused when they differ."""
    messages = [{"role": "user", "content": "2+2?", "temperature": float("nan")}]
    a = inspect_log(tmp_path / "a.json", [["C", "I", "C", "I"]], "org/a", inputs=messages)
    b = inspect_log(tmp_path / "b.json", [["C", "C", "C", "I"]], "org/b", inputs=messages)
    assert body(a, b)["comparisons"][0]["accuracy"] == {"a": 0.5, "b": 0.75}
    other = [{"role": "user", "content": "2+2?", "temperature": 1}]
    c = inspect_log(tmp_path / "c.json", [["C", "C", "C", "I"]], "org/c", inputs=other)
    assert_one_line_error(*cli("compare", a, c), "not the same items: 4 id(s) hold a different "
                          "input in")


# --- lm-evaluation-harness and HELM logs -------------------------------------------------------

STAMP = "2026-01-02T03-04-05.678901"


def lm_samples(path, values, metric="acc", filter_name="none"):
    """An lm-eval samples file: one line per document, the metric as a top-level key."""
    lines = [json.dumps({"doc_id": doc, "filter": filter_name, "metrics": [metric], metric: value,
                         "doc_hash": f"doc{doc}"}) for doc, value in enumerate(values)]
    return write(path, "\n".join(lines) + "\n")


def helm_stats(path, values, metric="exact_match"):
    records = [{"instance_id": f"id{i}", "train_trial_index": 0,
                "stats": [{"name": {"name": metric, "split": "test"}, "mean": value}]}
               for i, value in enumerate(values)]
    return write(path, json.dumps(records, indent=2))


def test_an_lm_eval_log_from_stdin_is_named_stdin(tmp_path, stdin):
    """stdin has no file name to take the task from, nor a folder to find the model in: the
    system is "stdin", and the tasks (unknown, mc) differ unless allowed."""
    lm_samples(tmp_path / "a.jsonl", [1, 0, 1, 1])
    stdin((tmp_path / "a.jsonl").read_bytes())
    other = lm_samples(tmp_path / "org__b" / f"samples_mc_{STAMP}.jsonl", [1, 1, 1, 0])
    got = body("-", other, "--input-format", "lm-eval", "--allow-different-tasks")
    assert got["input"]["systems"] == ["stdin", f"samples_mc_{STAMP}"]
    assert got["comparisons"][0]["accuracy"] == {"a": 0.75, "b": 0.75}
    assert got["input"]["items"] == 4


def test_an_lm_eval_model_is_named_by_the_newest_results_file_that_names_one(tmp_path):
    folder = tmp_path / "acme__tuned"
    base = lm_samples(tmp_path / "acme__base" / f"samples_mc_{STAMP}.jsonl", [1, 0, 1, 0])
    tuned = lm_samples(folder / f"samples_mc_{STAMP}.jsonl", [1, 1, 1, 0])
    write(folder / "results_2026-01-01T00-00-00.json", json.dumps({"model_name": "acme/v1"}))
    write(folder / "results_2026-01-02T00-00-00.json", json.dumps({"model_name": ""}))
    write(tmp_path / "acme__base" / "results_2026-01-01T00-00-00.json",
          json.dumps({"model_name": 7}))
    got = body(base, tuned)
    assert got["input"]["systems"] == ["acme/base", "acme/v1"]
    assert got["comparisons"][0]["accuracy"] == {"a": 0.5, "b": 0.75}


def test_an_lm_eval_log_without_any_metric_is_refused(tmp_path):
    lines = [json.dumps({"doc_id": doc, "filter": "none", "doc_hash": "h"}) for doc in range(3)]
    path = write(tmp_path / f"samples_mc_{STAMP}.jsonl", "\n".join(lines) + "\n")
    assert_one_line_error(*cli("compare", path, path),
                          f"samples_mc_{STAMP}.jsonl: the file offers no metric")


def test_helm_stats_from_stdin(tmp_path, stdin):
    """No folder to look beside for run_spec.json and instances.json: the names are the
    inputs' (one model is not known, so neither is used)."""
    helm_stats(tmp_path / "a.json", [1, 0, 1, 0])
    stdin((tmp_path / "a.json").read_bytes())
    other = helm_stats(tmp_path / "t:model=org_b" / "per_instance_stats.json", [1, 1, 1, 0])
    got = body("-", other, "--input-format", "helm", "--allow-different-tasks")
    assert got["input"]["systems"] == ["stdin", "per_instance_stats"]
    assert got["comparisons"][0]["accuracy"] == {"a": 0.5, "b": 0.75}


def test_helm_perturbed_instances_and_other_splits_are_left_out(tmp_path):
    """Only unperturbed test-split stats count: a perturbed instance, a perturbed stat, a
    stat of another split and a stat without a proper name are all skipped."""
    records = [
        {"instance_id": "id0", "train_trial_index": 0, "stats": [
            {"name": {"name": "exact_match", "split": "test"}, "mean": 1},
            {"name": {"name": "exact_match", "split": "test",
                      "perturbation": {"name": "typos"}}, "mean": 0},
            {"name": {"name": "exact_match", "split": "valid"}, "mean": 0},
            {"name": "exact_match", "mean": 0}]},
        {"instance_id": "id1", "train_trial_index": 0, "stats": [
            {"name": {"name": "exact_match", "split": "test"}, "mean": 0}]},
        {"instance_id": "id0", "train_trial_index": 0, "perturbation": {"name": "typos"},
         "stats": [{"name": {"name": "exact_match", "split": "test"}, "mean": 0}]},
        {"instance_id": "id2", "train_trial_index": 0, "stats": [
            {"name": {"name": "exact_match", "split": "test"}, "mean": 1}]},
    ]
    run = tmp_path / "t:model=org_a"
    path = write(run / "per_instance_stats.json", json.dumps(records, indent=2))
    write(run / "run_spec.json", "{not json")             # unreadable: the folder names it
    other = helm_stats(tmp_path / "t:model=org_b" / "per_instance_stats.json", [1, 1, 1])
    got = body(path, other)
    assert got["input"]["systems"] == ["org_a", "org_b"]
    assert got["input"]["items"] == 3
    assert got["comparisons"][0]["accuracy"] == pytest.approx({"a": 2 / 3, "b": 1.0})


# --- Harness folders ---------------------------------------------------------------------------

TWO = [["C", "I", "C", "I"], ["C", "C", "I", "I"]]              # per epoch: 0.5, 0.5
THREE = TWO + [["C", "C", "C", "C"]]


def folders(root, tasks):
    """base/ and tuned/ folders of Inspect JSON logs: *tasks* maps a task to its epochs
    (base) and the tuned model's epochs; None leaves the task out of that folder."""
    for task, (base, tuned) in tasks.items():
        for model, epochs in (("base", base), ("tuned", tuned)):
            if epochs is not None:
                inspect_log(root / model / f"{task}.json", epochs, model, task=task)
    return str(root / "base"), str(root / "tuned")


def test_tasks_with_the_same_epochs_pool_their_runs(tmp_path):
    base, tuned = folders(tmp_path, {"t1": (TWO, TWO[::-1]), "t2": (TWO, [["C"] * 4] * 2)})
    got = body(base, tuned)
    assert got["input"]["items"] == 8 and [t["task"] for t in got["tasks"]] == ["t1", "t2"]
    runs = got["comparisons"][0]["runs"]
    assert runs["a"]["runs"] == runs["b"]["runs"] == 2
    assert runs["a"]["scores"] == [0.5, 0.5] and runs["b"]["scores"] == [0.75, 0.75]


def test_tasks_with_different_epochs_keep_their_own_runs(tmp_path):
    base, tuned = folders(tmp_path, {"t1": (TWO, TWO), "t2": (THREE, THREE)})
    got = body(base, tuned)
    assert got["comparisons"][0]["runs"] is None and got["input"]["items"] == 8
    assert [t["runs"] for t in got["tasks"]] == ["2 and 2 runs, two-level",
                                                 "3 and 3 runs, two-level"]


def test_tasks_chosen_and_tasks_in_one_folder_only(tmp_path):
    base, tuned = folders(tmp_path, {"t1": (TWO, TWO), "t2": (TWO, THREE), "t3": (TWO, None)})
    chosen = body(base, tuned, "--tasks", "t2,t1")
    assert [t["task"] for t in chosen["tasks"]] == ["t2", "t1"]
    assert chosen["input"]["items"] == 8
    left_out = body(base, tuned)
    assert "1 task(s) in one folder only, left out: t3" in left_out["input"]["dropped_note"]
    assert [t["task"] for t in left_out["tasks"]] == ["t1", "t2"]


@pytest.mark.parametrize("layout,fragment", [
    ("two folders for one system", "give one harness folder per system"),
    ("a model not in the folder", "holds no runs of 'other' (models: base, tuned)"),
    ("two models in one of two folders", "holds the runs of 2 models (base, tuned); give that "
                                         "folder once, with --systems naming them"),
])
def test_folders_that_do_not_give_one_model_per_system(tmp_path, layout, fragment):
    one = [["C", "I", "C", "I"]]
    base, tuned = folders(tmp_path, {"t1": (one, one)})
    inspect_log(tmp_path / "both" / "base.json", one, "base", task="t1")
    inspect_log(tmp_path / "both" / "tuned.json", one, "tuned", task="t1")
    argv = {"two folders for one system": ["--baseline", f"{base},{tuned}", "--candidate", tuned],
            "a model not in the folder": ["compare", str(tmp_path / "both"), "--systems",
                                          "base,other"],
            "two models in one of two folders": ["compare", base, str(tmp_path / "both")],
            }[layout]
    assert_one_line_error(*cli(*argv), fragment)


def test_a_folder_file_named_like_lm_eval_samples_but_holding_a_table(tmp_path):
    for model in ("base", "tuned"):
        write(tmp_path / model / f"samples_mc_{STAMP}.jsonl",
              '{"doc_id": 0, "acc": 1}\n{"doc_id": 1, "acc": 0}\n')
    assert_one_line_error(*cli("compare", str(tmp_path / "base"), str(tmp_path / "tuned"),
                               "--metric", "acc"), f"samples_mc_{STAMP}.jsonl: not a harness log")


def test_a_filter_no_task_in_the_folders_offers_is_refused(tmp_path):
    for model, values in (("base", [1, 0, 1]), ("tuned", [1, 1, 1])):
        lm_samples(tmp_path / model / f"samples_mc_{STAMP}.jsonl", values)
        lm_samples(tmp_path / model / f"samples_qa_{STAMP}.jsonl", values[::-1])
    assert_one_line_error(*cli("compare", str(tmp_path / "base"), str(tmp_path / "tuned"),
                               "--filter", "strict-match"),
                          "--filter 'strict-match': no task in the folders offers that lm-eval "
                          "filter (they offer: none)")


def test_stray_files_in_a_folder_do_not_stop_the_logs_being_found(tmp_path):
    """A dangling symlink named .json is skipped; a log whose header names no model goes
    with its folder's name."""
    inspect_log(tmp_path / "base" / "t1.json", [["C", "I", "C", "I"]], "base", task="t1")
    log = json.loads((tmp_path / "base" / "t1.json").read_text())
    del log["eval"]["model"]
    write(tmp_path / "tuned" / "t1.json", json.dumps({**log, "samples": [
        {**sample, "scores": {"match": {"value": "C"}}} for sample in log["samples"]]}, indent=2))
    os.symlink(tmp_path / "gone.json", tmp_path / "tuned" / "stale.json")
    got = body(str(tmp_path / "base"), str(tmp_path / "tuned"))
    assert got["input"]["systems"] == ["base", "tuned"]
    assert got["comparisons"][0]["accuracy"] == {"a": 0.5, "b": 1.0}


@pytest.mark.parametrize("members,fragment", [
    (None, "t1.eval: a damaged zip archive"),
    ({"header.json": "{not json"}, "t1.eval: header.json: not valid JSON"),
])
def test_a_damaged_eval_log_in_a_folder_is_refused_in_one_line(tmp_path, members, fragment):
    base, _ = folders(tmp_path, {"t1": ([["C", "I", "C", "I"]], None)})
    path = tmp_path / "tuned" / "t1.eval"
    write(path, b"PK\x03\x04 not a zip" if members is None else zip_bytes(members))
    assert_one_line_error(*cli("compare", base, str(tmp_path / "tuned")), fragment)


# --- Run files: one system per --baseline / --candidate ----------------------------------------

def test_more_runs_than_the_tool_takes_are_refused(tmp_path):
    rows = ["item,run,a,b"] + [f"{item},{run},1,0" for run in range(1, 102) for item in (1, 2)]
    path = write(tmp_path / "long.csv", "\n".join(rows) + "\n")
    assert_one_line_error(*cli("--csv", path, "--run-col", "run", *AB),
                          "a has 101 runs; the tool takes at most 100 per system")


def test_runs_that_share_one_item_are_refused_even_when_dropping(tmp_path):
    base = write(tmp_path / "base.csv", "id,s\n1,1\n2,0\n")
    tuned = write(tmp_path / "tuned.csv", "id,s\n2,1\n3,0\n")
    assert_one_line_error(*cli("--baseline", base, "--candidate", tuned, "--score-col", "s",
                               "--id-col", "id", "--on-missing", "drop"),
                          "the runs share 1 item(s); need at least 2")


def test_names_for_a_folders_models_must_match_their_number(tmp_path):
    """A leaderboard of one folder counts its models only once the folder is read."""
    inspect_log(tmp_path / "both" / "base.json", [["C", "I", "C", "I"]], "base", task="t1")
    inspect_log(tmp_path / "both" / "tuned.json", [["C", "C", "C", "I"]], "tuned", task="t1")
    assert_one_line_error(*cli("leaderboard", str(tmp_path / "both"), "--names", "x,y,z"),
                          "--names gives 3 name(s) for 2 systems")


def test_workbook_run_files_need_the_score_column(tmp_path):
    rows = [["item", "s"], [1, 1], [2, 0], [3, 1]]
    base = write(tmp_path / "base.xlsx", workbook(rows))
    tuned = write(tmp_path / "tuned.xlsx", workbook(rows))
    assert_one_line_error(*cli("--baseline", base, "--candidate", tuned),
                          "one file per system needs --score-col, the score's column or key")
    assert body(base, tuned, "--score-col", "s")["comparisons"][0]["accuracy"] == pytest.approx(
        {"a": 2 / 3, "b": 2 / 3})


def test_run_files_take_their_clusters_from_the_baseline(tmp_path):
    base = write(tmp_path / "base.csv", "id,s,passage\n1,1,p\n2,0,p\n3,1,q\n4,0,q\n5,1,r\n")
    tuned = write(tmp_path / "tuned.csv", "id,s\n5,1\n4,1\n3,1\n2,0\n1,1\n")
    table = bed.read(base, tuned, score_col="s", id_col="id", cluster_col="passage")
    assert list(table.ids) == [1, 2, 3, 4, 5]
    assert table.clusters == ("p", "p", "q", "q", "r")
    assert table.columns == ((1, 0, 1, 0, 1), (1, 0, 1, 1, 1))


def test_several_inspect_logs_of_one_system_are_its_runs_named_by_file(tmp_path):
    first = inspect_log(tmp_path / "base-1.json", [["C", "I", "C", "I"]], "org/base")
    second = inspect_log(tmp_path / "base-2.json", [["C", "C", "C", "I"]], "org/base")
    third = inspect_log(tmp_path / "tuned-1.json", [["C", "C", "C", "C"]], "org/tuned")
    fourth = inspect_log(tmp_path / "tuned-2.json", [["C", "C", "I", "C"]], "org/tuned")
    got = body("--baseline", f"{first},{second}", "--candidate", f"{third},{fourth}")
    assert got["input"]["systems"] == ["org/base", "org/tuned"]
    assert got["comparisons"][0]["runs"]["a"]["labels"] == ["base-1", "base-2"]
    assert got["comparisons"][0]["runs"]["a"]["scores"] == [0.5, 0.75]
    assert got["comparisons"][0]["runs"]["b"]["labels"] == ["tuned-1", "tuned-2"]
    assert got["comparisons"][0]["runs"]["b"]["scores"] == [1.0, 0.75]
