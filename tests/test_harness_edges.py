"""Harness logs as they also come: Inspect archives written as a journal, logs of failed
runs, lm-eval folders without results files, HELM runs with a run_spec, workbooks written
by other tools.  Each gives the same numbers as its plain form, or one line that says why not.
"""

import json
import zipfile

import pytest

from helpers import assert_one_line_error, cli, cli_json

VALUES_A = ["C", "I", "C", "C", "I", "C", "I", "C"]
VALUES_B = ["C", "C", "C", "I", "C", "C", "C", "C"]


def samples(values, scorer="match"):
    return [{"id": i, "epoch": 1, "scores": {scorer: {"value": v}}}
            for i, v in enumerate(values, start=1)]


def header(model, status="success"):
    return {"version": 2, "status": status, "eval": {"task": "t", "model": model}}


def write_eval(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, value in members.items():
            archive.writestr(name, value if isinstance(value, (bytes, str))
                             else json.dumps(value))
    return str(path)


def report(*argv):
    return cli_json(*argv, "--resamples", "200", "--calibration", "0")


def plain_json(tmp_path, name, values, model):
    path = tmp_path / name
    path.write_text(json.dumps({**header(model), "samples": samples(values)}, indent=2))
    return str(path)


def test_an_eval_archive_written_as_a_journal_reads_like_the_json_log(tmp_path):
    """Inspect writes _journal/start.json and numbered summaries while a run is going."""
    journal_a = write_eval(tmp_path / "a.eval", {
        "_journal/start.json": header("org/a"),
        "_journal/summaries/2.json": samples(VALUES_A)[4:],
        "_journal/summaries/1.json": samples(VALUES_A)[:4],
    })
    only_samples_b = write_eval(tmp_path / "b.eval", {
        "header.json": header("org/b"),
        **{f"samples/{i}_epoch_1.json": s for i, s in enumerate(samples(VALUES_B), start=1)},
    })
    from_archives = report("--baseline", journal_a, "--candidate", only_samples_b)
    from_json = report("--baseline", plain_json(tmp_path, "a.json", VALUES_A, "org/a"),
                       "--candidate", plain_json(tmp_path, "b.json", VALUES_B, "org/b"))
    assert from_archives["comparisons"][0]["gap"] == from_json["comparisons"][0]["gap"] == 0.25
    assert from_archives["comparisons"][0]["accuracy"] == from_json["comparisons"][0]["accuracy"]
    assert from_archives["comparisons"][0]["mcnemar"] == from_json["comparisons"][0]["mcnemar"]


@pytest.mark.parametrize("members,fragment", [
    ({"header.json": [1, 2]}, "header.json is not a JSON object"),
    ({"header.json": header("m")}, "an Inspect log without samples"),
    ({"header.json": header("m"), "summaries.json": b"\xff\xfe"}, "summaries.json is not UTF-8"),
])
def test_broken_eval_archives_are_refused_in_one_line(tmp_path, members, fragment):
    bad = write_eval(tmp_path / "bad.eval", members)
    good = plain_json(tmp_path, "good.json", VALUES_B, "m")
    assert_one_line_error(*cli("--baseline", bad, "--candidate", good), fragment)


@pytest.mark.parametrize("log,fragment", [
    ({**header("m"), "samples": None}, "was it written with --no-log-samples?"),
    ({**header("m"), "samples": [1]}, "sample 1: expected a JSON object"),
])
def test_broken_inspect_json_logs_are_refused_in_one_line(tmp_path, log, fragment):
    (tmp_path / "bad.json").write_text(json.dumps(log, indent=2))
    good = plain_json(tmp_path, "good.json", VALUES_B, "m")
    assert_one_line_error(*cli("--baseline", str(tmp_path / "bad.json"), "--candidate", good),
                          fragment)


def test_a_log_of_a_run_that_did_not_succeed_says_so(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({**header("m/a", "error"),
                                                 "samples": samples(VALUES_A)}, indent=2))
    argv = ["--baseline", str(tmp_path / "a.json"), "--candidate",
            plain_json(tmp_path, "b.json", VALUES_B, "m/b")]
    assert_one_line_error(*cli(*argv), "is an incomplete run (status error; ")
    got = report(*argv, "--allow-incomplete")
    assert "incomplete run: " in json.dumps(got["input"]["incomplete"])


def test_a_scorer_with_a_dict_value_is_reached_with_a_dot(tmp_path):
    def log(values):
        return {**header("m"), "samples": [
            {"id": i, "epoch": 1, "scores": {"model_graded": {"value": {"accuracy": v,
                                                                          "other": 0}}}}
            for i, v in enumerate(values, start=1)]}
    (tmp_path / "a.json").write_text(json.dumps(log([1, 0, 1, 1, 0, 1]), indent=2))
    (tmp_path / "b.json").write_text(json.dumps(log([1, 1, 1, 1, 0, 1]), indent=2))
    got = report("--baseline", str(tmp_path / "a.json"), "--candidate", str(tmp_path / "b.json"),
                 "--scorer", "model_graded.accuracy")
    accuracy = got["comparisons"][0]["accuracy"]
    assert accuracy["a"] == pytest.approx(4 / 6) and accuracy["b"] == pytest.approx(5 / 6)


def lm_samples(folder, task, values):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": v,
                         "doc": {}, "target": "x"}) for i, v in enumerate(values)]
    (folder / f"samples_{task}_2025-01-01T00-00-00.jsonl").write_text("\n".join(lines) + "\n")


def test_lm_eval_model_names_from_results_files_or_the_folder_name(tmp_path):
    base, tuned = tmp_path / "out" / "org__base", tmp_path / "out" / "org__tuned"
    lm_samples(base, "arc", [1, 0, 1, 1, 0, 1, 0, 1])
    lm_samples(tuned, "arc", [1, 1, 1, 1, 0, 1, 1, 1])
    (base / "results_2025-01-01T00-00-00.json").write_text(json.dumps({"model_name": "acme/b"}))
    (tuned / "results_2025-01-01T00-00-00.json").write_text("{not json")
    got = report("--baseline", str(base / "samples_arc_2025-01-01T00-00-00.jsonl"),
                 "--candidate", str(tuned / "samples_arc_2025-01-01T00-00-00.jsonl"))
    assert got["input"]["systems"] == ["acme/b", "org/tuned"]


def test_helm_model_from_run_spec(tmp_path):
    def run(folder, model, values):
        folder.mkdir()
        stats = [{"instance_id": f"id{i}", "train_trial_index": 0,
                  "stats": [{"name": {"name": "exact_match", "split": "test"}, "mean": v}]}
                 for i, v in enumerate(values)]
        (folder / "per_instance_stats.json").write_text(json.dumps(stats))
        (folder / "run_spec.json").write_text(json.dumps({"adapter_spec": {"model": model}}))
        return str(folder / "per_instance_stats.json")
    got = report("--baseline", run(tmp_path / "r1", "acme/one", [1, 0, 1, 0, 1, 1]),
                 "--candidate", run(tmp_path / "r2", "acme/two", [1, 1, 1, 0, 1, 1]))
    assert got["input"]["systems"] == ["acme/one", "acme/two"]


def workbook(path, sheet_xml, rels=True, shared=None):
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel_ns = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    members = {
        "[Content_Types].xml": "<Types/>",
        "xl/workbook.xml": f'<workbook {ns} {rel_ns}><sheets><sheet name="S" sheetId="1" '
                           'r:id="rId7"/></sheets></workbook>',
        "xl/sheets/data.xml": f"<worksheet {ns}><sheetData>{sheet_xml}</sheetData></worksheet>",
    }
    if rels:
        members["xl/_rels/workbook.xml.rels"] = (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId7" Target="/xl/sheets/data.xml"/></Relationships>')
    if shared is not None:
        members["xl/sharedStrings.xml"] = shared
    return write_eval(path, members)


def test_a_workbook_with_inline_strings_booleans_and_a_moved_sheet(tmp_path):
    rows = ['<row r="1"><c r="A1" t="inlineStr"><is><t>item</t></is></c>'
            '<c r="B1" t="inlineStr"><is><t>a</t></is></c>'
            '<c r="C1" t="inlineStr"><is><t>b</t></is></c></row>']
    for i, (a, b) in enumerate([(1, 0), (0, 1), (1, 1), (1, 1), (0, 1), (1, 1)], start=2):
        rows.append(f'<row r="{i}"><c r="A{i}"><v>{i - 1}</v></c><c r="B{i}" t="b"><v>{a}</v>'
                    f'</c><c r="C{i}" t="b"><v>{b}</v></c></row>')
    path = workbook(tmp_path / "r.xlsx", "".join(rows))
    got = report("--csv", path, "--a-col", "a", "--b-col", "b")
    assert got["comparisons"][0]["accuracy"]["a"] == pytest.approx(4 / 6)
    assert got["comparisons"][0]["accuracy"]["b"] == pytest.approx(5 / 6)
    assert got["input"]["items"] == 6


def test_a_workbook_declaring_entities_is_refused(tmp_path):
    path = workbook(tmp_path / "x.xlsx", "")
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("xl/sharedStrings.xml",
                         '<!DOCTYPE x [<!ENTITY a "aaaa">]><sst>&a;</sst>')
    assert_one_line_error(*cli("--csv", path, "--a-col", "a", "--b-col", "b"),
                          "declares XML entities")


def inspect_folder(folder, logs):
    folder.mkdir(parents=True)
    for task, values in logs.items():
        (folder / f"{task}.json").write_text(json.dumps(
            {"version": 2, "status": "success", "eval": {"task": task, "model": folder.name},
             "samples": samples(values)}, indent=2))


def test_inspect_folders_with_journal_archives_compare_task_by_task(tmp_path):
    inspect_folder(tmp_path / "base", {"arith": VALUES_A, "logic": VALUES_B})
    (tmp_path / "tuned").mkdir()
    for task, values in (("arith", VALUES_B), ("logic", VALUES_B[::-1])):
        write_eval(tmp_path / "tuned" / f"{task}.eval", {
            "_journal/start.json": {**header("tuned"), "eval": {"task": task, "model": "tuned"}},
            "_journal/summaries/1.json": samples(values)})
    got = report("--baseline", str(tmp_path / "base"), "--candidate", str(tmp_path / "tuned"))
    assert [task["task"] for task in got["tasks"]] == ["arith", "logic"]


@pytest.mark.parametrize("layout,fragment", [
    ("twice", "holds 2 logs of task 'arith' and 2 that ended (again.json, arith.json)"),
    ("empty", "no lm-eval samples_<task>_<time>.jsonl files, Inspect logs or HELM"),
    ("mixed", "give harness folders for every system or files for every system, not both"),
    ("no shared", "the folders share no task"),
    ("unknown task", "--tasks names 'nothing', which no folder holds (tasks: arith)"),
])
def test_harness_folders_that_cannot_be_matched_are_refused(tmp_path, layout, fragment):
    inspect_folder(tmp_path / "base", {"arith": VALUES_A})
    other = tmp_path / "tuned"
    extra = []
    if layout == "twice":
        inspect_folder(other, {"arith": VALUES_B})
        (other / "again.json").write_text((other / "arith.json").read_text())
    elif layout == "empty":
        other.mkdir()
    elif layout == "mixed":
        inspect_folder(other, {"arith": VALUES_B})
        other = other / "arith.json"
    elif layout == "no shared":
        inspect_folder(other, {"logic": VALUES_B})
    else:
        inspect_folder(other, {"arith": VALUES_B})
        extra = ["--tasks", "nothing"]
    assert_one_line_error(*cli("--baseline", str(tmp_path / "base"), "--candidate", str(other),
                               *extra), fragment)


@pytest.mark.parametrize("data,fragment", [
    (b"PK\x03\x04 not really a zip", "a damaged zip archive"),
    (None, "is a zip archive, not an Excel workbook or an Inspect log"),
])
def test_zip_files_that_are_neither_workbooks_nor_logs(tmp_path, data, fragment):
    path = tmp_path / "x.zip"
    if data is None:
        write_eval(path, {"readme.txt": "hello"})
    else:
        path.write_bytes(data)
    assert_one_line_error(*cli("--csv", str(path), "--a-col", "a", "--b-col", "b"), fragment)


def test_an_empty_first_sheet_is_refused(tmp_path):
    path = workbook(tmp_path / "e.xlsx", "")
    assert_one_line_error(*cli("--csv", path, "--a-col", "a", "--b-col", "b"),
                          "the first sheet of the workbook is empty")


def test_an_inspect_log_written_on_one_line_is_still_an_inspect_log(tmp_path):
    """json.dumps without indent puts the whole log on one line, which also parses as JSON
    lines with one record; it is read as the log it is."""
    for name, values, model in (("a.json", VALUES_A, "org/a"), ("b.json", VALUES_B, "org/b")):
        (tmp_path / name).write_text(json.dumps({**header(model), "samples": samples(values)}))
    one_line = report("--baseline", str(tmp_path / "a.json"), "--candidate",
                      str(tmp_path / "b.json"))
    indented = report("--baseline", plain_json(tmp_path, "c.json", VALUES_A, "org/a"),
                      "--candidate", plain_json(tmp_path, "d.json", VALUES_B, "org/b"))
    assert one_line["comparisons"][0]["gap"] == indented["comparisons"][0]["gap"] == 0.25
    assert one_line["input"]["systems"] == ["org/a", "org/b"]
