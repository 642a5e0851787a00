"""The front door from Python: compare(), read(), assert_not_worse(), plan(), simulate().

Each is checked against the command line on the same data, options and seed: the same
numbers, the same report, the same JSON (the command line is the oracle of the contract
"one verdict in every format"; the numbers themselves are pinned elsewhere against
independent oracles)."""

import csv
from fractions import Fraction
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

import bootstrap_eval_deltas as bed
from helpers import ROOT, SHIPPED_CSV, cli, cli_json

EXAMPLES = os.path.join(ROOT, "datasets", "examples")


def columns(path, *names):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [[row[name] for row in rows] for name in names]


def numbers(report: dict) -> dict:
    """What a comparison says, whatever the source (the first candidate's)."""
    keys = ("gap", "ci", "mcnemar", "test", "verdict", "decision", "accuracy", "method",
            "calibration", "exact")
    first = report["comparisons"][0]
    return {key: first[key] for key in keys}


# --- the same numbers as the command line ---

def test_a_path_gives_the_command_lines_report_and_json():
    result = bed.compare(SHIPPED_CSV)
    assert result.to_dict() == cli_json("compare", SHIPPED_CSV)
    status, out, _ = cli("compare", SHIPPED_CSV)
    assert str(result) == out
    status, markdown, _ = cli("compare", SHIPPED_CSV, "--output", "markdown")
    assert result._repr_markdown_() == markdown


def test_python_lists_give_the_numbers_of_the_same_columns_in_a_file():
    a, b = columns(SHIPPED_CSV, "system_a_correct", "system_b_correct")
    from_python = bed.compare([int(x) for x in a], [int(x) for x in b])
    assert numbers(from_python.to_dict()) == numbers(cli_json("compare", SHIPPED_CSV))
    assert (from_python.verdict, from_python.n) == ("cannot tell", 500)
    assert str(from_python.interval) == "[-1.2, +8.4] pts"   # exact: B = infinity


def test_options_are_the_flags_with_their_values():
    options = dict(confidence=0.9, seed=7, resamples=3000, interval="bca", gate=True,
                   min_delta=-1.5, calibration=0)
    result = bed.compare(SHIPPED_CSV, **options)
    assert result.to_dict() == cli_json("compare", SHIPPED_CSV, "--confidence", "0.9",
                                        "--seed", "7", "--resamples", "3000", "--interval",
                                        "bca", "--gate", "--min-delta", "-1.5",
                                        "--calibration", "0")
    assert result.passed is True and result.method == "bootstrap, B=3,000 resamples"


def test_real_scores_in_clusters_as_a_labelled_file(tmp_path):
    rng = random.Random(5)
    rows = []
    for cluster in range(40):
        shift = rng.random() / 4
        for _ in range(rng.randint(1, 6)):
            a = round(min(1, rng.random() / 2 + shift), 3)
            rows.append((f"c{cluster}", a, round(min(1, a + rng.gauss(0.05, 0.1) ** 2), 3)))
    path = tmp_path / "clusters.csv"
    path.write_text("passage,base,tuned\n" + "".join(f"{c},{a},{b}\n" for c, a, b in rows))
    from_python = bed.compare([a for _, a, _ in rows], [b for _, _, b in rows],
                              clusters=[c for c, _, _ in rows], names=["base", "tuned"])
    from_file = cli_json("compare", str(path), "--systems", "base,tuned", "--cluster-col",
                         "passage")
    assert numbers(from_python.to_dict()) == numbers(from_file)
    assert from_python.to_dict()["comparisons"][0]["design"] == \
        from_file["comparisons"][0]["design"]


def test_runs_as_lists_of_runs_and_as_a_file_of_seeds():
    with open(os.path.join(EXAMPLES, "seeds.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    seeds = sorted({row["seed"] for row in rows}, key=int)
    runs = {name: [{row["item"]: int(row[name]) for row in rows if row["seed"] == s}
                   for s in seeds] for name in ("baseline", "candidate")}
    from_python = bed.compare(runs["baseline"], runs["candidate"])
    from_file = cli_json("compare", os.path.join(EXAMPLES, "seeds.csv"), "--systems",
                         "baseline,candidate", "--run-col", "seed")
    for system in ("a", "b"):        # runs numbered from 1 in Python, named by the seed in the file
        assert {**from_python.to_dict()["comparisons"][0]["runs"][system], "labels": None} == \
            {**from_file["comparisons"][0]["runs"][system], "labels": None}
    assert numbers(from_python.to_dict()) == numbers(from_file)


def test_harness_folders_as_paths():
    base, tuned = (os.path.join(EXAMPLES, "lm-eval", "main", name)
                   for name in ("acme__base", "acme__tuned"))
    how = dict(score_col="acc,exact_match", filter="strict-match")
    result = bed.compare(base, tuned, **how)
    assert result.to_dict() == cli_json("compare", base, tuned, "--metric", "acc,exact_match",
                                        "--filter", "strict-match")
    assert len(result.to_dict()["tasks"]) == 3 and result.verdict is not None
    table = bed.read(base, tuned, **how)
    assert bed.compare(table).to_dict() == result.to_dict()


def test_several_candidates_and_a_table_from_read():
    path = os.path.join(EXAMPLES, "prompts.csv")
    systems = "baseline,prompt_v2,prompt_v3,prompt_v4"
    table = bed.read(path, systems=systems.split(","))
    assert table.systems == tuple(systems.split(",")) and table.n > 0
    result = bed.compare(table)
    assert len(result.comparisons) == 3
    assert result.to_dict() == cli_json("compare", path, "--systems", systems)


def test_plan_and_simulate_print_the_command_lines_reports():
    assert str(bed.plan(half_width=0.015, accuracy=0.85)) == \
        cli("plan", "--half-width", "0.015", "--accuracy", "0.85")[1]
    assert str(bed.plan(n_items=800, acc_b=0.77)) == \
        cli("plan", "--n-items", "800", "--acc-b", "0.77")[1]
    simulated = bed.simulate(replays=0, n_items=300, seed=3)
    assert str(simulated) == \
        cli("simulate", "--replays", "0", "--n-items", "300", "--seed", "3")[1]
    assert simulated.verdict is not None and simulated.n == 300


# --- what a notebook and a test suite see ---

def test_a_result_is_short_in_a_notebook_and_complete_on_demand():
    result = bed.compare(SHIPPED_CSV)
    shown = repr(result)
    assert len(shown) < 1000 and shown.startswith("Result(verdict='cannot tell'")
    assert result._repr_html_().startswith("<table>") and "<td>" in result._repr_html_()
    assert "calibration" in str(bed.compare(SHIPPED_CSV, details=True))
    assert repr(bed.plan(half_width=0.02)).startswith("Result('items needed")


def test_assert_not_worse_passes_quietly_and_fails_with_the_report():
    same = [1, 0, 1, 1, 0, 1] * 60
    assert bed.assert_not_worse(same, same, margin=5).passed is True
    worse = [0 if i % 3 == 0 else x for i, x in enumerate(same)]
    with pytest.raises(AssertionError) as failure:
        bed.assert_not_worse(same, worse, margin=1)
    assert str(failure.value).startswith("verdict: worse")
    with pytest.raises(bed.ToolError, match="above 0"):
        bed.assert_not_worse(same, same, margin=-1)


def test_numpy_values_and_missing_scores():
    np = pytest.importorskip("numpy")
    a = np.array([0.25, 0.5, 0.75, 1.0] * 25)
    b = np.array([0.5, 0.5, 0.75, 1.0] * 25)
    assert bed.compare(a, b).to_dict()["comparisons"][0]["gap"] == bed.compare(
        list(map(float, a)), list(map(float, b))).to_dict()["comparisons"][0]["gap"]
    assert bed.compare(a, b, seed=np.int64(4)).to_dict()["params"]["seed"] == 4
    with_missing = [None] + [1, 0] * 20
    with pytest.raises(bed.ToolError, match="no score"):
        bed.compare(with_missing, [1] * 41)
    dropped = bed.compare(with_missing, [1] * 41, on_missing="drop")
    assert dropped.n == 40


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=2, max_size=60))
@settings(max_examples=30, deadline=None)
def test_a_mapping_and_a_sequence_give_one_comparison(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ids = [f"q{k}" for k in range(len(pairs))]
    by_sequence = bed.compare(a, b, ids=ids, calibration=0)
    by_mapping = bed.compare(dict(zip(ids, a)), dict(zip(ids, b)), calibration=0)
    assert by_sequence.to_dict() == by_mapping.to_dict()


# --- refusals: one ToolError, before any work ---

@pytest.mark.parametrize("call, fragment", [
    (lambda: bed.compare([1, 0, 1]), "at least two systems"),
    (lambda: bed.compare([1, 0], [1, 0], interval="BCa"), "is one of"),
    (lambda: bed.compare([1, 0], [1, 0], confidence="high"), "confidence"),
    (lambda: bed.compare([1, 0], [1, 0], confidence=1.5), "strictly between 0 and 1"),
    (lambda: bed.compare([1, 0], [1, 0], seed=-1), "0 or more"),
    (lambda: bed.compare([1, 0], [1, 0], gate=1), "True or False"),
    (lambda: bed.compare([1, 0], [1, 0], a_col="x"), "how to read files"),
    (lambda: bed.compare([1, 0], [1, 0], ids=[1]), "2 values for 1 ids"),
    (lambda: bed.compare([1, 0], [1, 0], names=["a"]), "2 different names"),
    (lambda: bed.compare([1, "x"], [1, 0]), "item 2"),
    (lambda: bed.compare([1, float("inf")], [1, 0]), "finite"),
    (lambda: bed.compare([1, object()], [1, 0]), "is not a score"),
    (lambda: bed.compare(SHIPPED_CSV, clusters=[1, 2]), "given from Python"),
    (lambda: bed.compare(bed.read(SHIPPED_CSV), [1, 0]), "takes the table alone"),
    (lambda: bed.compare([0.5, 0.2], [0.1, 0.3], exact=True, clusters=[1, 2]), "exact=True"),
    (lambda: bed.read(), "needs a file"),
    (lambda: bed.read(SHIPPED_CSV, a_col="nope"), "nope"),
    (lambda: bed.plan(n_items=1), "at least 2"),
    (lambda: bed.plan(half_width=0.01, n_items=100), "do not apply"),
    (lambda: bed.assert_not_worse([1, 0], [1, 0], margin="1"), "finite number"),
    (lambda: bed.compare(None, None), "is not a sequence"),
    (lambda: bed.compare(5, 6), "is not a sequence"),
    (lambda: bed.compare(b"0101", b"0110"), "is not a sequence"),
    (lambda: bed.compare([1, 0], [1, 0], ids=5), "ids"),
    (lambda: bed.compare([1, 0], [1, 0], ids=[1, 1]), "repeats an id"),
    (lambda: bed.compare([1, 0, 1], [1, 0, 0], clusters=[1, 2]), "clusters has 2 labels for 3 items"),
    (lambda: bed.compare([1, 0], [1, 0], ids=[1.5, 2]), "is not an id"),
    (lambda: bed.compare([1, 0], [1, 0], ids=[b"x", b"y"]), "is not an id"),
    (lambda: bed.compare([1j, 0], [1, 0]), "is not a score"),
    (lambda: bed.compare([Fraction(10 ** 60, 3), 0], [1, 0]), "more than 50 digits"),
    (lambda: bed.read(None), "is not a path"),
    (lambda: bed.read([1, 2]), "is not a path"),
    (lambda: bed.read("a\0b.csv"), "NUL"),
    (lambda: bed.leaderboard([1, 0, 1], [0, 1, 1]).board.pair("baseline", "zz"), "no pair"),
])
def test_bad_calls_are_one_tool_error(call, fragment):
    with pytest.raises(bed.ToolError) as refused:
        call()
    assert fragment in str(refused.value)


@pytest.mark.parametrize("call, keyword", [
    (lambda: bed.compare([1, 0], [1, 0], confidnce=0.9), "confidnce"),
    (lambda: bed.compare([1, 0], [1, 0], output="json"), "output"),
    (lambda: bed.simulate(plot="x.svg"), "plot"),
    (lambda: bed.assert_not_worse([1, 0], [1, 0], margin=1, gate=True), "gate"),
    (lambda: bed.assert_not_worse([1, 0], [1, 0], margin=1, min_delta=1), "min_delta"),
])
def test_a_keyword_an_entry_point_does_not_take_is_a_type_error_naming_it(call, keyword):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{keyword}'"):
        call()


def test_numpy_ids_labels_and_options_and_numbers_written_as_text():
    np = pytest.importorskip("numpy")
    a, b = [1, 0, 1, 1] * 10, [1, 1, 0, 1] * 10
    plain = bed.compare(a, b, ids=list(range(40)), clusters=[i // 2 for i in range(40)])
    from_numpy = bed.compare(np.array(a), np.array(b), ids=np.arange(40),
                             clusters=np.arange(40) // 2)
    assert from_numpy.to_dict()["comparisons"][0]["ci"] == plain.to_dict()["comparisons"][0]["ci"]
    assert bed.compare(dict(zip(np.arange(40), a)), dict(zip(np.arange(40), b))).n == 40
    assert bed.compare(a, b, confidence=np.float32(0.9)).to_dict()["params"]["confidence"] == 0.9
    as_text = bed.compare([str(x) for x in a], [str(x) for x in b])   # a CSV column, as read
    assert as_text.to_dict()["comparisons"][0]["ci"] == \
        bed.compare(a, b).to_dict()["comparisons"][0]["ci"]
    generated = bed.compare(a, b, ids=(f"q{i}" for i in range(40)))
    assert generated.n == 40


def test_the_html_table_escapes_once():
    a, b, c = [1, 0, 1, 1] * 10, [1, 1, 0, 1] * 10, [0, 1, 1, 1] * 10
    shown = bed.leaderboard({"c|d<e>": a, "x": b, "y": c})._repr_html_()
    assert "<td>c|d&lt;e&gt;</td>" in shown and "&amp;" not in shown and "\\" not in shown


def test_read_takes_every_column_unless_two_are_named():
    prompts = os.path.join(EXAMPLES, "prompts.csv")
    assert bed.read(prompts).systems == ("baseline", "prompt_v2", "prompt_v3", "prompt_v4")
    assert bed.read(prompts, a_col="baseline", b_col="prompt_v3").systems == \
        ("baseline", "prompt_v3")
