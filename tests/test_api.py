"""The Python API: values taken by their Python type, never by how they look as text.

Each kind of input is checked against the same data given as a plain dict or list (the
oracle: the verdict, gap, interval and p of the plain form), or is refused with one
ToolError."""

import collections
import random
import types

import numpy as np
import pytest

import bootstrap_eval_deltas as bed


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
        bed.assert_not_worse(base, worse)


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
    with pytest.raises(bed.ToolError, match="q5 has no score"):
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
