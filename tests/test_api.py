"""The Python API: values taken by their Python type, never by how they look as text.

Each kind of input is checked against the same data given as a plain dict or list (the
oracle: the verdict, gap, interval and p of the plain form), or is refused with one
ToolError."""

import collections
from fractions import Fraction
import inspect
import json
import random
import re
import types

import numpy as np
import pytest

import bootstrap_eval_deltas as bed
from helpers import SHIPPED_CSV, assert_one_line_error, cli


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


@pytest.mark.parametrize("missing", [None, float("nan"), np.ma.masked, NAType()],
                         ids=["None", "nan", "masked", "NA"])
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


# --- the entry points: explicit signatures, Python values, errors that name keywords ---

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
    (lambda: bed.simulate(icc=0.5), "icc goes with cluster_size", ["--icc", "0.5"],
     "--icc goes with --cluster-size"),
    (lambda: bed.plan(accuracy=0.8), "accuracy goes with half_width",
     ["plan", "--accuracy", "0.8"], "--accuracy goes with --half-width"),
    (lambda: bed.compare([1, 0] * 9, [1, 1] * 9, engine="stream"),
     "engine chooses how resamples are drawn; give resamples too",
     ["compare", "{csv}", "--engine", "stream"],
     "--engine chooses how resamples are drawn; give --resamples too"),
    (lambda: bed.simulate(run_sd=0.02), "run_sd goes with runs", ["--run-sd", "0.02"],
     "--run-sd goes with --runs"),
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
    (["compare", SHIPPED_CSV, "--csv", SHIPPED_CSV], "not both"),
    (["compare", "--csv", SHIPPED_CSV, "--baseline", SHIPPED_CSV], "not both"),
    (["compare"], "compare needs your results"),
    (["ledger"], "ledger needs the ledger file"),
    (["ledger", "a.jsonl", "b.jsonl"], "ledger reads one ledger file"),
])
def test_the_command_lines_inputs_are_placed_or_refused_in_one_line(argv, fragment):
    assert_one_line_error(*cli(*argv), fragment)


def test_an_interval_prints_in_its_unit_and_with_the_digits_its_verdict_needs():
    real = bed.compare([2.0, 5.0, 7.0, 4.0] * 30, [3.0, 5.5, 9.0, 4.0] * 30)
    assert real.interval.unit == "score" and str(real.interval).startswith("[+")
    assert "pts" not in str(real.interval)
    lo, hi = real.interval.lo, real.interval.hi
    assert str(real.interval) == f"[+{float(lo):.3f}, +{float(hi):.3f}]"
    assert str(bed.Interval(Fraction(47, 100000), Fraction(55, 100000))) == "[+0.05, +0.06] pts"
    assert str(bed.Interval(Fraction(49, 100000), Fraction(51, 100000), "score")) == \
        "[+0.0005, +0.0005]"
    assert str(bed.compare([1, 0, 1, 1] * 20, [1, 1, 1, 1] * 20).interval).endswith(" pts")


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


# --- found by a hostile run of the Python API ---

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
    from decimal import Decimal
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
