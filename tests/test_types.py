"""Core types and formatting: Interval, Scores, Cells, Table records, numbers parsed and printed."""

import random
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

import bootstrap_eval_deltas as bed

from helpers import EXAMPLES


@pytest.mark.parametrize("kwargs,message", [
    ({"a": (1, 0), "b": (1, 0, 1)}, "same items"),
    ({"a": (1, 0), "b": (1, 0), "clusters": (1,)}, "a cluster or stratum label"),
    ({"a": (1, 0), "b": (1, 0), "strata": (1, 2, 3)}, "a cluster or stratum label"),
    ({"a": (1,), "b": (0,)}, "need at least 2 items, got 1"),
])
def test_scores_refuse_what_cannot_be_compared(kwargs, message):
    with pytest.raises(bed.ToolError, match=message):
        bed.Scores(**kwargs)


@pytest.mark.parametrize("kwargs,message", [
    ({"permutations": 0}, "permutations must be a whole number from 1"),
    ({"calibration": -1}, "calibration must be a whole number from 0"),
    ({"resamples": 2.5}, "resamples must be a whole number"),
    ({"confidence": 1}, "confidence must lie above 0 and at most 0.999999"),
    ({"engine": "Counts"}, "engine must be one of auto, stream, counts; got 'Counts'"),
])
def test_settings_refuse_what_they_cannot_do(kwargs, message):
    with pytest.raises(bed.ToolError, match=message):
        bed.Settings(**kwargs)
    assert issubclass(bed.ToolError, ValueError)


def test_settings_or_keywords_not_both():
    with pytest.raises(bed.ToolError, match="give Settings or keywords, not both"):
        bed.analyze(bed.Scores((1, 0, 1), (1, 1, 0)), random.Random(1), bed.Settings(),
                    resamples=10)


@pytest.mark.parametrize("text,value", [
    ("  TRUE ", 1), ("False", 0), ("1e-2", Fraction(1, 100)), ("", bed._MISSING),
    (None, bed._MISSING), (True, 1), (7, 7), (Fraction(3, 4), Fraction(3, 4)),
])
def test_parse_score_reads_what_writers_write(text, value):
    assert bed.parse_score(text) == value or bed.parse_score(text) is value


@pytest.mark.parametrize("text,message", [
    ("inf", "is not a finite number"), ("NaN", "is not a finite number"),
    ("1e999", "exponent"), (10 ** 60, "more than 50 digits"),
])
def test_parse_score_refuses_what_is_not_a_finite_number(text, message):
    with pytest.raises(bed.ToolError, match=message):
        bed.parse_score(text)


def test_a_tiny_gap_never_prints_as_zero():
    """Beyond three more decimals a gap has two significant digits: "-0.0000 pts" kept only
    the sign, and "better (+0.0000 pts)" stood beside an interval printed to 7 decimals."""
    a = [0.5, 0.25, 0.75, 0.5] * 10
    b = list(a)
    b[0] = 0.5 - 1e-7
    result = bed.compare(a, b, resamples=200, calibration=0)
    assert -1e-8 < result.to_dict()["comparisons"][0]["gap"] < 0
    assert "gap B - A: -2.5e-07 pts;" in str(result)
    assert bed._signed_fixed(Fraction(1, 10 ** 9), 1) == "+1.0e-09"
    assert bed._signed_fixed(Fraction(-1, 10 ** 9), 1) == "-1.0e-09"
    rng = random.Random(5)
    a = [round(rng.random(), 2) for _ in range(60)]
    b = [x + 1e-9 * (1 + i % 3) * (-1 if i < 5 else 1) for i, x in enumerate(a)]
    sentence = str(bed.compare(a, b)).splitlines()[0]
    assert sentence.startswith("verdict: better. B is likely better than A (+1.7e-07 pts): "
                               "the paired 95% CI [+1.4e-07, +2.0e-07] pts excludes 0")


@given(st.fractions(Fraction(-1, 10), Fraction(1, 10)), st.fractions(Fraction(0), Fraction(1, 20)),
       st.sampled_from([0, 1, 2, 3]))
def test_a_monte_carlo_end_that_may_reach_0_prints_as_0_and_does_not_exclude_it(
        lo, half, places):
    """An end whose reach (where it lies in 99 runs of 100) touches 0 prints as the zero it
    may be, to the digits held, and the interval is not read as excluding 0; an end whose
    reach lies on its side prints its sign and counts."""
    hi = (lo + 1 - Fraction(1, 100), lo + 1 + Fraction(1, 100))
    interval = bed.Interval(lo, lo + 1, "score", places, ((lo - half, lo + half), hi))
    held = lo - half > 0 if lo > 0 else lo + half < 0
    assert interval.excludes_zero() == (lo > 0 and held)
    first = str(interval)[1:].split(",")[0]
    if held:
        assert first == ("+" if lo > 0 else "-") + bed._round_fixed(abs(lo), places)
    else:
        assert first == bed._round_fixed(Fraction(0), places)
    assert bed.Interval(lo, lo + 1, "score", places).excludes_zero() == (lo > 0)  # exact ends


def test_a_score_beside_its_interval_never_prints_as_an_end_it_is_not():
    """B's mean 0.6625 beside Monte Carlo ends held to whole units printed as "1 [0.4, 1]",
    the point on the upper end; it takes a decimal more, and an end it equals prints as it."""
    interval = bed.Interval(Fraction(2, 5), Fraction(1), "score", 0)
    assert bed._format_score(Fraction(6625, 10000), interval.score_places(point=Fraction(
        6625, 10000))) == "0.7" and interval.as_proportions() == "[0.4, 1]"
    assert interval.score_places(point=Fraction(1)) == interval.score_places() == 0
    assert interval.score_places(point=Fraction(999, 1000)) == 2           # 1.00, not 1.0


def test_a_tables_repr_gives_its_runs_and_the_items_dropped(tmp_path, monkeypatch):
    monkeypatch.chdir(EXAMPLES)                  # short paths: the repr shortens long ones
    runs = bed.read("seeds.csv", run_col="seed", systems=["baseline", "candidate"])
    assert repr(runs) == "Table(systems=('baseline', 'candidate'), n=400, runs=(5, 5), " \
        "from='seeds.csv')"
    monkeypatch.chdir(tmp_path)
    with open("holed.csv", "w") as f:
        f.write("item,a,b\n" + "".join(f"{i},{i % 2},{'' if i == 3 else (i // 2) % 2}\n"
                                       for i in range(30)))
    assert repr(bed.read("holed.csv", on_missing="drop")) == \
        "Table(systems=('a', 'b'), n=29, dropped=1, from='holed.csv')"
