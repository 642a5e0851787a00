"""The Python API: compare, leaderboard, read, plan, simulate, calibrate, ledger; values taken by their type."""

import collections
import csv
import inspect
import json
import numbers as numbers_abc
import os
import random
import re
import types
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import bootstrap_eval_deltas as bed

from helpers import EXAMPLES, SHIPPED_CSV, assert_one_line_error, cli, cli_json


def scored(n=120, seed=7, shift=0.15):
    """Two systems' real-valued scores on n items named q0..q(n-1), B better by about shift."""
    rng = random.Random(seed)
    ids = [f"q{i}" for i in range(n)]
    a = {i: round(rng.random(), 3) for i in ids}
    b = {i: round(min(1.0, a[i] + rng.gauss(shift, 0.3)) if rng.random() < 0.9 else a[i], 3)
         for i in ids}
    return ids, a, b


def said(result):
    return result.verdict, result.gap, result.interval, result.p, result.n


class Indexed:
    """A stand-in for a pandas Series: values in order, an ``index`` naming each item."""

    def __init__(self, mapping):
        self.index = list(mapping)
        self._values = list(mapping.values())

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)


class NAType:
    """pandas' missing value is of a type of this name (``type(pd.NA).__name__``)."""


@pytest.mark.parametrize("kind", [collections.UserDict, types.MappingProxyType,
                                  collections.ChainMap, collections.OrderedDict],
                         ids=["UserDict", "MappingProxyType", "ChainMap", "OrderedDict"])
def test_any_mapping_joins_on_its_keys_as_a_dict_does(kind):
    _, a, b = scored()
    assert said(bed.compare(kind(a), kind(b))) == said(bed.compare(a, b))


def test_assert_not_worse_fails_a_regression_given_as_a_mapping_that_is_not_a_dict():
    ids = [f"q{i}" for i in range(80)]
    base = collections.UserDict({i: 1 for i in ids})
    worse = collections.UserDict({i: int(k % 2 == 0) for k, i in enumerate(ids)})
    with pytest.raises(AssertionError):
        bed.assert_not_worse(base, worse, margin=1)


@pytest.mark.parametrize("margin", [0, -1])
def test_assert_not_worse_needs_a_margin_above_zero(margin):
    with pytest.raises(bed.ToolError, match="above 0"):
        bed.assert_not_worse([1, 0, 1] * 20, [1, 0, 1] * 20, margin=margin)
    with pytest.raises(TypeError, match="margin"):
        bed.assert_not_worse([1, 0, 1] * 20, [1, 0, 1] * 20)


def test_an_indexed_sequence_is_joined_on_its_index_not_paired_by_position():
    _, a, b = scored()
    keys = list(b)
    random.Random(3).shuffle(keys)
    shuffled = Indexed({k: b[k] for k in keys})
    assert said(bed.compare(Indexed(a), shuffled)) == said(bed.compare(a, b))


def test_indexed_sequences_whose_indexes_differ_are_refused_not_paired():
    _, a, b = scored()
    other = Indexed({f"x{k}": v for k, v in enumerate(b.values())})
    with pytest.raises(bed.ToolError, match="not in every run"):
        bed.compare(Indexed(a), other)


def test_mappings_mixed_with_plain_sequences_are_refused():
    _, a, b = scored()
    with pytest.raises(bed.ToolError, match="give every system one way"):
        bed.compare(a, list(b.values()))


def test_ids_given_with_a_mapping_are_refused():
    ids, a, b = scored()
    with pytest.raises(bed.ToolError, match="ids goes with values in item order"):
        bed.compare(a, b, ids=ids)


def test_a_list_of_id_score_pairs_is_refused_not_read_as_runs_of_two_items():
    ids, a, b = scored()
    with pytest.raises(bed.ToolError, match=r"dict\(pairs\)"):
        bed.compare(list(a.items()), list(b.items()))


@pytest.mark.parametrize("unordered", [set, frozenset, lambda v: {1: 0, 0: 1}.keys()])
def test_an_unordered_collection_is_refused(unordered):
    with pytest.raises(bed.ToolError, match="no order"):
        bed.compare(unordered([0, 1]), [1, 1])


def test_a_table_of_several_columns_is_refused():
    class Frame(Indexed):
        columns = ["a", "b"]
    _, a, _ = scored()
    with pytest.raises(bed.ToolError, match="several columns"):
        bed.compare(Frame(a), Frame(a))


def test_numpy_bool_arrays_are_0_1_scores():
    rng = random.Random(5)
    labels = [rng.random() < 0.5 for _ in range(200)]
    a = [x if rng.random() < 0.7 else not x for x in labels]
    b = [x if rng.random() < 0.85 else not x for x in labels]
    as_bool = bed.compare(np.array(a) == np.array(labels), np.array(b) == np.array(labels))
    as_int = bed.compare([int(x == y) for x, y in zip(a, labels)],
                         [int(x == y) for x, y in zip(b, labels)])
    assert said(as_bool) == said(as_int)
    assert as_bool.method == "exact bootstrap (B = infinity)"


@pytest.mark.parametrize("missing", [None, float("nan"), np.ma.masked, NAType(),
                                     Decimal("NaN"), Decimal("sNaN")],
                         ids=["None", "nan", "masked", "NA", "Decimal NaN", "Decimal sNaN"])
def test_missing_values_are_refused_or_dropped_and_counted(missing):
    _, a, b = scored()
    holed = dict(a, q5=missing)
    with pytest.raises(bed.ToolError, match="'q5' has no score"):
        bed.compare(holed, b)
    dropped = bed.compare(holed, b, on_missing="drop")
    kept = {k: v for k, v in a.items() if k != "q5"}
    assert said(dropped) == said(bed.compare(kept, {k: b[k] for k in kept}))


def test_a_masked_array_drops_its_masked_items():
    values = np.ma.masked_array([1.0, 0, 1, 1, 0, 1] * 20, mask=[0, 0, 0, 0, 0, 1] * 20)
    other = [1, 1, 1, 1, 0, 0] * 20
    result = bed.compare(values, other, on_missing="drop")
    assert result.n == 100


@pytest.mark.parametrize("names", [5, [1, 2], "a"])
def test_names_that_are_not_names_are_refused(names):
    with pytest.raises(bed.ToolError, match="names"):
        bed.compare([1, 0, 1] * 10, [1, 1, 1] * 10, names=names)


ENTRY_POINTS = {
    bed.compare: {"confidence", "seed", "resamples", "interval", "gate", "min_delta", "names",
                  "systems", "score_col", "id_col", "on_missing", "adjust", "details"},
    bed.leaderboard: {"confidence", "seed", "draws", "adjust", "target_power", "systems",
                      "allow_constant", "names"},
    bed.read: {"systems", "a_col", "b_col", "score_col", "id_col", "on_missing", "filter"},
    bed.plan: {"n_items", "acc_a", "acc_b", "corr", "half_width", "accuracy", "n_grid",
               "target_power", "runs"},
    bed.simulate: {"n_items", "acc_a", "acc_b", "corr", "replays", "resamples", "seed",
                   "cluster_size", "runs", "gate", "min_delta"},
    bed.calibrate: {"n_grid", "acc_pairs", "corr", "replays", "confidence", "seed"},
    bed.ledger: {"confidence"},
    bed.assert_not_worse: {"margin", "confidence", "seed", "resamples", "names"},
}


@pytest.mark.parametrize("function", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_every_entry_point_lists_its_options_with_defaults(function):
    parameters = inspect.signature(function).parameters
    keywords = {name for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert ENTRY_POINTS[function] <= keywords
    required = {name for name in keywords if parameters[name].default is inspect.Parameter.empty}
    assert required == ({"margin"} if function is bed.assert_not_worse else set())


def test_an_entry_points_defaults_are_the_tools_defaults():
    defaults = {name: p.default for name, p in inspect.signature(bed.simulate).parameters.items()}
    assert (defaults["n_items"], defaults["seed"], defaults["resamples"]) == (500, 2026, 2000)
    assert Fraction(str(defaults["confidence"])) == bed.CONFIDENCE
    assert Fraction(str(defaults["acc_b"])) == bed.ACC_B


@pytest.fixture
def comma_file(tmp_path):
    path = tmp_path / "results.csv"
    rng = random.Random(11)
    rows = ["item,\"base,v1\",tuned"] + [
        f"{i},{int(rng.random() < 0.6)},{int(rng.random() < 0.75)}" for i in range(1, 301)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_column_whose_name_holds_a_comma_compares_from_python_and_the_command_line(comma_file):
    from_python = bed.compare(str(comma_file), systems=["base,v1", "tuned"])
    status, out, err = cli("compare", str(comma_file), "--systems", "base\\,v1,tuned", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert (data["comparisons"][0]["baseline"], data["comparisons"][0]["candidate"]) == \
        ("base,v1", "tuned")
    assert from_python.to_dict()["comparisons"][0]["ci"] == data["comparisons"][0]["ci"]
    assert bed.read(str(comma_file), systems=("base,v1", "tuned")).systems == ("base,v1", "tuned")


def test_names_as_one_text_are_split_on_commas_and_as_a_list_kept_whole():
    a, b = [1, 0, 1, 1] * 20, [1, 1, 1, 1] * 20
    assert bed.compare(a, b, names="old, new").comparisons[0].candidate == "new"
    assert bed.compare(a, b, names=["old", "new, v2"]).comparisons[0].candidate == "new, v2"


@pytest.mark.parametrize("call, python, flags, command_line", [
    (lambda: bed.compare([1, 0] * 9, [1, 1] * 9, min_delta=1),
     "min_delta is the margin of the gate; give gate=True too",
     ["compare", "{csv}", "--min-delta", "1"],
     "--min-delta is the margin of the gate; give --gate too"),
    (lambda: bed.simulate(icc=0.5), "icc goes with cluster_size", ["simulate", "--icc", "0.5"],
     "--icc goes with --cluster-size"),
    (lambda: bed.plan(accuracy=0.8), "accuracy goes with half_width",
     ["plan", "--accuracy", "0.8"], "--accuracy goes with --half-width"),
    (lambda: bed.compare([1, 0] * 9, [1, 1] * 9, engine="stream"),
     "engine chooses how resamples are drawn; give resamples too",
     ["compare", "{csv}", "--engine", "stream"],
     "--engine chooses how resamples are drawn; give --resamples too"),
    (lambda: bed.simulate(run_sd=0.02), "run_sd goes with runs",
     ["simulate", "--run-sd", "0.02"], "--run-sd goes with --runs"),
    (lambda: bed.compare(SHIPPED_CSV, on_missing="skip"), "on_missing is one of",
     ["compare", "{csv}", "--on-missing", "skip"], "--on-missing: invalid choice"),
])
def test_errors_name_keywords_from_python_and_flags_on_the_command_line(call, python, flags,
                                                                       command_line):
    with pytest.raises(bed.ToolError) as refused:
        call()
    assert str(refused.value).startswith(python)
    argv = [SHIPPED_CSV if f == "{csv}" else f for f in flags]
    assert_one_line_error(*cli(*argv), command_line)
    with pytest.raises(bed.ToolError) as again:          # the command line left no spelling
        call()
    assert str(again.value) == str(refused.value)


@pytest.mark.parametrize("keyword, value, fragment", [
    ("resamples", 2.5, "resamples must be a whole number, got 2.5"),
    ("resamples", "2000", "resamples must be a finite number"),
    ("seed", None, "seed takes a value"),
    ("gate", "yes", "gate is True or False"),
    ("systems", 5, "systems is a list of names"),
    ("score_col", 3, "score_col is text"),
    ("interval", "BCa", "interval is one of"),
])
def test_an_option_of_the_wrong_type_is_one_tool_error_naming_the_keyword(keyword, value,
                                                                           fragment):
    with pytest.raises(bed.ToolError, match=re.escape(fragment)):
        bed.compare(SHIPPED_CSV, **{keyword: value})


def test_resamples_none_is_the_exact_bootstrap_and_a_count_the_monte_carlo_one():
    a, b = [1, 0, 1, 1, 0] * 30, [1, 1, 1, 1, 0] * 30
    assert bed.compare(a, b, resamples=None).method == "exact bootstrap (B = infinity)"
    assert bed.compare(a, b, resamples=2000.0).method.startswith("bootstrap, B=2,000")


def test_calibrate_and_ledger_from_python_give_the_command_lines_report(tmp_path):
    table = bed.calibrate(n_grid=[30], acc_pairs=[(0.9, 0.95)], replays=20)
    status, out, _ = cli("calibrate", "--n-grid", "30", "--acc-pairs", "0.9/0.95",
                         "--replays", "20")
    assert status == 0 and str(table) == out
    with pytest.raises(bed.ToolError, match="acc_pairs is a list of"):
        bed.calibrate(acc_pairs=[(0.9, 0.95, 0.99)])
    with pytest.raises(bed.ToolError, match="n_grid is empty"):
        bed.calibrate(n_grid=[])
    with pytest.raises(bed.ToolError, match="acc_pairs is empty"):
        bed.calibrate(acc_pairs=[])
    ledger = tmp_path / "evals.jsonl"
    assert cli("compare", SHIPPED_CSV, "--ledger", str(ledger))[0] == 0
    summary = bed.ledger(ledger)
    assert str(summary) == cli("ledger", str(ledger))[1]
    with pytest.raises(bed.ToolError, match="reads a ledger file"):
        bed.ledger(5)


def test_a_table_from_read_goes_alone_and_without_reading_options():
    table = bed.read(SHIPPED_CSV)
    assert bed.compare(table).verdict == bed.compare(SHIPPED_CSV).verdict
    with pytest.raises(bed.ToolError, match="says how to read files"):
        bed.compare(table, score_col="x")
    with pytest.raises(bed.ToolError, match="takes paths or scores, not both"):
        bed.compare(SHIPPED_CSV, [1, 0, 1])


@pytest.mark.parametrize("argv, fragment", [
    (["compare", "--candidate", SHIPPED_CSV], "--candidate goes with --baseline"),
    (["compare", "--baseline", SHIPPED_CSV], "--baseline needs at least one --candidate"),
    (["compare", SHIPPED_CSV, "--csv", SHIPPED_CSV],
     "give the files as FILE arguments or with --csv/--baseline/--candidate, not both"),
    (["compare", "--csv", SHIPPED_CSV, "--baseline", SHIPPED_CSV],
     "use --csv (one file, a column per system) or --baseline/--candidate"),
    (["compare"], "compare needs your results"),
    (["ledger"], "ledger needs the ledger file"),
    (["ledger", "a.jsonl", "b.jsonl"], "ledger reads one ledger file"),
])
def test_the_command_lines_inputs_are_placed_or_refused_in_one_line(argv, fragment):
    assert_one_line_error(*cli(*argv), fragment)


def test_an_interval_prints_in_its_unit_and_with_the_digits_its_verdict_needs():
    real = bed.compare([2.0, 5.0, 7.0, 4.0] * 30, [3.0, 5.5, 9.0, 4.0] * 30, resamples=2000)
    assert real.interval.unit == "score" and str(real.interval).startswith("[+")
    assert "pts" not in str(real.interval)
    lo, hi = real.interval.lo, real.interval.hi
    assert str(real.interval) == f"[+{float(lo):.3f}, +{float(hi):.3f}]"
    assert str(bed.Interval(Fraction(47, 100000), Fraction(55, 100000))) == "[+0.05, +0.06] pts"
    assert str(bed.Interval(Fraction(49, 100000), Fraction(51, 100000), "score")) == \
        "[+0.00049, +0.00051]"                  # unequal ends print apart
    assert str(bed.Interval(Fraction(1, 2), Fraction(1, 2) + Fraction(15, 10 ** 11))) == \
        "[+50.00000000, +50.00000002] pts"     # however near: they had printed equal
    rng = random.Random(1)                      # Monte Carlo ends too, and the system's line
    near = bed.compare([0] * 60, [round(12.3456 + rng.gauss(0, 1e-7), 12) for _ in range(60)],
                       calibration=0)
    lines = str(near).splitlines()
    for line in lines[2:4]:                     # B's line, then the gap's: ends apart, gap in
        ends = re.findall(r"\[([-+]?[\d.]+), ([-+]?[\d.]+)\]", line)[0]
        value = re.findall(r"(?:candidate|B - A): ([-+]?[\d.]+)", line)[0]
        assert ends[0] != ends[1] and float(ends[0]) <= float(value) <= float(ends[1]), line
        assert len(ends[0].split(".")[1]) == len(value.split(".")[1]) == 8, line
    assert str(bed.compare([1, 0, 1, 1] * 20, [1, 1, 1, 1] * 20).interval).endswith(" pts")
    analysis = real.comparisons[0].analysis          # every interval of the record too
    for interval in (analysis.ci_a, analysis.ci_b, analysis.paired, analysis.unpaired):
        assert interval.unit == "score" and "pts" not in str(interval)
    assert str(analysis.ci_a).startswith("[+4.")       # A's mean 4.5, not 450 pts


def test_scores_near_1e_minus_12_print_their_own_digits_in_every_line():
    """Scores of about 5e-13: the per-system lines printed 0.000 [0.000, 0.000]; a nonzero
    score or end now prints two significant digits where three decimals would show zero."""
    rng = random.Random(3)
    a = [rng.random() * 1e-12 for _ in range(500)]
    b = [x + rng.gauss(0.1e-12, 0.3e-12) for x in a]
    lines = str(bed.compare(a, b, calibration=0)).splitlines()
    mean_a = sum(map(Fraction, a)) / 500
    assert lines[1].startswith(f"  A = baseline: {float(mean_a):.1e} [")
    assert "0.000" not in lines[1] and "0.000" not in lines[2]


def test_records_print_in_a_line_whatever_their_size():
    rng = random.Random(3)
    big = {"a": [int(rng.random() < 0.7) for _ in range(20_000)],
           "b": [int(rng.random() < 0.72) for _ in range(20_000)]}
    table = bed.compare(big["a"], big["b"], names=["a", "b"]).report.table
    assert repr(table).startswith("Table(systems=('a', 'b'), n=20,000")
    shown = [repr(table), repr(table.pair(1)),
             repr(bed.analyze(table.pair(1), random.Random(1))),
             repr(bed.leaderboard(big).board),
             repr(bed.compare(big["a"], big["b"]))]
    assert all(len(text) < 300 and "\n" not in text for text in shown), shown


def test_the_order_of_a_mapping_cannot_change_a_seeded_result():
    _, a, b = scored(n=200, seed=5, shift=0.05)
    keys = list(a)
    random.Random(9).shuffle(keys)
    shuffled = ({k: a[k] for k in keys}, {k: b[k] for k in reversed(keys)})
    for options in ({"resamples": 500}, {"resamples": 300, "interval": "bca"},
                    {"permutations": 2000}, {}):
        assert said(bed.compare(*shuffled, **options)) == said(bed.compare(a, b, **options))
    clusters = {k: int(k[1:]) // 4 for k in keys}
    assert said(bed.compare(*shuffled, clusters=clusters, resamples=400)) == \
        said(bed.compare(a, b, clusters=dict(sorted(clusters.items())), resamples=400))


@pytest.mark.parametrize("scores, labels, fragment", [
    ("plain", "keyed", "clusters names its items"),
    ("keyed", "plain", "clusters is in item order"),
    ("plain", "long", "clusters has 121 labels for 120 items"),
])
def test_labels_go_with_the_scores_one_way(scores, labels, fragment):
    _, a, b = scored()
    given = (a, b) if scores == "keyed" else (list(a.values()), list(b.values()))
    column = [k % 7 for k in range(120)]
    column = {"keyed": Indexed(dict(zip(range(1, 121), column))), "plain": column,
              "long": column + [0]}[labels]
    with pytest.raises(bed.ToolError, match=fragment):
        bed.compare(*given, clusters=column)


def test_labels_by_item_id_go_with_ids():
    ids, a, b = scored()
    by_id = {i: k % 7 for k, i in enumerate(ids)}
    with_ids = bed.compare(list(a.values()), list(b.values()), ids=ids, clusters=by_id)
    in_order = bed.compare(list(a.values()), list(b.values()), ids=ids,
                           clusters=list(by_id.values()))
    assert said(with_ids) == said(in_order)


def test_sequences_in_item_order_of_different_lengths_are_refused_even_when_dropping():
    with pytest.raises(bed.ToolError, match="must be of one length, got 39, 40"):
        bed.compare([1, 0, 1, 1] * 10, [1] * 39, on_missing="drop")
    runs = [[1, 0, 1, 1] * 10, [1, 1, 0, 1] * 10]
    with pytest.raises(bed.ToolError, match="of one length"):
        bed.compare(runs, [runs[0], runs[1][:-1]], on_missing="drop")


def test_more_runs_than_items_is_refused_as_each_items_samples():
    per_item = [[random.Random(i).random() < 0.7 for _ in range(5)] for i in range(60)]
    with pytest.raises(bed.ToolError, match="60 runs of 5 items"):
        bed.compare([[int(x) for x in row] for row in per_item], [[1] * 5] * 60)


def test_a_list_of_zero_dimensional_arrays_is_a_list_of_scores():
    a, b = [1, 0, 1, 1] * 10, [1, 1, 1, 1] * 10
    assert said(bed.compare([np.array(x) for x in a], b)) == said(bed.compare(a, b))


def test_decimals_are_exact_numbers_and_scores():
    a, b = [0.2, 0.5, 0.7, 0.4] * 30, [0.3, 0.5, 0.9, 0.4] * 30
    as_decimal = bed.compare([Decimal(str(x)) for x in a], [Decimal(str(x)) for x in b],
                             confidence=Decimal("0.9"))
    assert said(as_decimal) == said(bed.compare(a, b, confidence=0.9))


def test_a_leaderboard_of_a_mapping_with_number_keys_and_of_a_dataframe():
    a, b, c = [1, 0, 1, 0] * 40, [1, 1, 1, 0] * 40, [0, 0, 1, 0] * 40
    board = bed.leaderboard({1: a, 2: b, 3: c}).board
    assert [s.system for s in board.standings] == ["2", "1", "3"]

    class Frame(Indexed):
        columns = ["a", "b"]
    with pytest.raises(bed.ToolError, match=r"df.to_dict\('series'\)"):
        bed.leaderboard(Frame({1: 1, 2: 0}))


@pytest.mark.parametrize("call, fragment", [
    (lambda: bed.plan(n_grid="100,200"), "n_grid is a list of sizes, got \"'100,200'\""),
    (lambda: bed.calibrate(acc_pairs="0.7/0.8"), "acc_pairs is a list of (A, B) accuracy pairs"),
    (lambda: bed.plan(seed=7), "seed goes with n_grid"),
])
def test_planning_options_are_named_in_their_own_words(call, fragment):
    with pytest.raises(bed.ToolError, match=re.escape(fragment)):
        call()


def test_a_name_split_at_its_comma_says_how_to_name_it(comma_file):
    status, out, err = cli("compare", str(comma_file), "--systems", "base,v1,tuned")
    assert_one_line_error(status, out, err, "the column 'base,v1' holds a comma: name it as "
                                            "'base\\\\,v1'")
    with pytest.raises(bed.ToolError, match="give the names as a list"):
        bed.compare(str(comma_file), systems="base,v1,tuned")


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


def test_a_result_is_short_in_a_notebook_and_complete_on_demand():
    result = bed.compare(SHIPPED_CSV)
    shown = repr(result)
    assert len(shown) < 1000 and shown.startswith("Result(verdict='cannot tell'")
    assert result._repr_html_().startswith("<p>verdict: cannot tell. The paired 95% CI [")
    assert "<td>" in bed.leaderboard(SHIPPED_CSV)._repr_html_()
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


@pytest.mark.parametrize("call, fragment", [
    (lambda: bed.compare([1, 0, 1]), "at least two systems"),
    (lambda: bed.compare([1, 0], [1, 0], interval="BCa"), "is one of"),
    (lambda: bed.compare([1, 0], [1, 0], confidence="high"), "confidence"),
    (lambda: bed.compare([1, 0], [1, 0], confidence=1.5), "confidence must lie above 0 and at most 0.999999"),
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
    (lambda: bed.compare([0.5, 0.2, 0.7001], [0.1, 0.3, 0.4], exact=True, clusters=[1, 2, 3]),
     "exact=True"),
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


class TextlessReal:
    """A real number type whose text is not a number (as a tensor prints itself)."""

    def __init__(self, value):
        self.value = value

    def __float__(self):
        return float(self.value)

    def __str__(self):
        return f"tensor({self.value})"


numbers_abc.Real.register(TextlessReal)


class BadIndex:
    """A number type whose conversion fails (as a tensor of several elements)."""

    def __index__(self):
        raise TypeError("only one element tensors can be converted")


class FalseIterable:
    """Iterable in name only (a 0-d array)."""

    def __iter__(self):
        raise TypeError("iteration over a 0-d array")


class RaisingIterable:
    """Its iterator fails part way with an error of its own."""

    def __len__(self):
        return 30

    def __iter__(self):
        yield 1
        raise KeyError("boom")


class RaisingLength(list):
    """A list whose length cannot be taken."""

    def __len__(self):
        raise RuntimeError("len broke")


class LyingLength:
    """A length past any list's (only a hint to list()); its items are fine."""

    def __len__(self):
        return 2 ** 70

    def __iter__(self):
        return iter(A)


A = [0.5, 0.25, 0.75, 0.5, 1.0, 0.0] * 5


B = [0.75, 0.25, 1.0, 0.5, 0.75, 0.25] * 5


def test_a_real_number_type_whose_text_is_not_a_number_reads_by_its_value():
    odd = bed.compare([TextlessReal(v) for v in A], B, resamples=200, calibration=0)
    plain = bed.compare(A, B, resamples=200, calibration=0)
    assert odd.to_dict()["comparisons"][0]["gap"] == plain.to_dict()["comparisons"][0]["gap"]
    assert str(odd) == str(plain)


def test_a_length_that_lies_is_only_a_hint():
    assert bed.compare(LyingLength(), B, resamples=200, calibration=0).gap == \
        bed.compare(A, B, resamples=200, calibration=0).gap


def test_nan_from_python_is_a_missing_score():
    a = A[:-1] + [float("nan")]
    with pytest.raises(bed.ToolError, match="baseline: item 30 has no score; use "
                                            "on_missing='drop'"):
        bed.compare(a, B, resamples=200)
    dropped = bed.compare(a, B, resamples=200, calibration=0, on_missing="drop")
    assert dropped.n == 29


@pytest.mark.parametrize("call,fragment", [
    (lambda: bed.compare(A, B, interval=None), "interval takes a value (default 'percentile'), not None"),
    (lambda: bed.compare(["1", "1e99"], ["0", "1"]), "out of range"),
    (lambda: bed.compare({"": 1, "b": 0}, {"": 0, "b": 1}), "is not an id"),
    (lambda: bed.compare(FalseIterable(), B), "baseline: iteration over a 0-d array"),
    (lambda: bed.compare(A, RaisingIterable()),
     "candidate: reading the values raised KeyError: 'boom'"),
    (lambda: bed.compare(A, RaisingLength(B)),
     "reading the values given raised RuntimeError: len broke"),
    (lambda: bed.compare({1: 1, "1": 0, 2: 1}, {1: 0, 2: 1}), "baseline: item 1 appears twice"),
    (lambda: bed.compare([BadIndex()] * 30, B), "is not a score"),
    (lambda: bed.leaderboard(), "leaderboard needs the systems' scores, or files to read"),
    (lambda: bed.leaderboard({}), "leaderboard needs the systems' scores, or files to read"),
])
def test_values_the_front_door_refuses_in_one_line(call, fragment):
    with pytest.raises(bed.ToolError) as caught:
        call()
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


# --- Battles from Python ---

def test_battles_compare_from_records_as_from_the_file(tmp_path):
    rows = [{"prompt": f"p{i}", "system_a": "base", "system_b": "new",
             "winner": "b" if i % 3 else "tie" if i % 2 else "a"} for i in range(60)]
    path = tmp_path / "b.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert said(bed.compare(rows)) == said(bed.compare(str(path)))
    data = bed.read_battles(str(path))
    assert said(bed.compare(data, systems=["base", "new"])) == said(bed.compare(rows))
    with pytest.raises(bed.ToolError, match="names says how to read files; a Battles"):
        bed.compare(data, names=["x", "y"])
    board = bed.leaderboard(rows, scale="elo")
    assert [s.system for s in board.board.standings] == ["new", "base"]
    assert board.board.standings[1].score == 1000


@pytest.mark.parametrize("record, fragment", [
    (("p", "a", "b", float("nan")), "is not a number in"),
    (("p", "a", "b", float("inf")), "is not a number in"),
    ((["p"], "a", "b", 1), "is not an id"),
    (("p", None, "b", 1), "a system's name is not text"),
])
def test_battles_from_python_refuse_what_is_not_a_battle(record, fragment):
    with pytest.raises(bed.ToolError, match=fragment):
        bed.battles([record])


def test_battles_from_python_are_told_apart_by_every_verdict():
    same = [(1, "a", "b", 1), (2, "a", "b", 1), (3, "a", "b", 0)]
    other = same[:2] + [(3, "a", "b", 1)]
    digests = {bed.battles(records).sources[0].sha256 for records in (same, other, same)}
    assert len(digests) == 2
