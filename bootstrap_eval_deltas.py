#!/usr/bin/env python3
"""Is model B really better than model A?  Paired bootstrap intervals for eval deltas.

System B scores 74.8% on a 500-item test set and system A 71.2%.  This module
answers "is B better?" the way the article *Bootstrap CIs for eval deltas*
does: a paired bootstrap interval on the gap, an unpaired one for contrast,
McNemar's exact test on the discordant items, and a coverage check that
replays a Gaussian-copula simulation whose true gap is known.  Standard
library only; every number is reproducible from the seed and the inputs.

The module's public names, by task (``__all__`` is this map):

==============================  ================================================
Compare, rank and plan          What it does
==============================  ================================================
``compare(a, b, ...)``          is each candidate better?  Scores, paths or a Table
``leaderboard(...)``            many systems: ranks, tiers, every pair
``read(path, ...)``             the user's files as a Table (CSV, JSON, .xlsx, logs)
``assert_not_worse``            a regression test in one line (compare's gate)
``plan(...)``                   items needed: power, one accuracy's half-width
``simulate(...)``               the article's experiment, any size
``calibrate(...)``              every interval's coverage on a grid of sizes
``ledger(path)``                a ledger's comparisons, Holm-adjusted
``main(argv)``                  the command line
==============================  ================================================

==============================  ================================================
What they take and return       What it is
==============================  ================================================
``Result``                      a report: str() the text, to_dict() the JSON
``Table``                       several systems' per-item scores on one item set
``Interval``                    a closed interval with exact ends and its unit
``Battles``                     head-to-head judgments: who won each battle
``ToolError``                   the one exception: bad input or options
==============================  ================================================

==============================  ================================================
Building blocks                 What it does
==============================  ================================================
``simulate_scores``, ``Copula``  the article's Gaussian-copula simulator
``Scores``, ``Cells``           two systems' paired scores; their 2x2 table
``Settings``                    how a comparison is resampled and judged
``analyze``, ``Analysis``       everything the report says about two systems
``bootstrap``                   the bootstrap distributions, items or clusters
``exact_intervals``             the exact (B = infinity) bootstrap of 0/1 items
``saddlepoint_distributions``   the saddlepoint bootstrap of real scores, clusters
``wilson_interval``             score intervals: Wilson, Clopper-Pearson, Newcombe
``clopper_pearson``             the exact interval of one proportion
``newcombe_paired``             Newcombe's interval of a paired difference
``newcombe_unpaired``           Newcombe's interval of an unpaired difference
``mcnemar_exact``, ``McNemar``  exact two-sided McNemar p-value
``sign_flip_test``              paired permutation test (real scores, clusters)
``Confusions``, ``METRICS``     predictions and labels: counts of (label, A, B)
``analyze_metric``              a confusion-matrix metric (macro-F1, MCC, ...)
``metric_value``                one system's metric from per-class counts
``metric_permutation_test``     paired test of a metric: predictions swapped
``holm``, ``benjamini_hochberg``  p-values adjusted across a family
``bonferroni``                  the Bonferroni adjustment
``rank_systems``, ``Leaderboard``  the leaderboard's standings and pairs
``battles``, ``read_battles``   battles from records, or from judges' files
``battle_table``                two systems' battles as a table of who won
``bradley_terry``               ratings of battles (Davidson's ties), robust covariance
``BradleyTerry``, ``rank_battles``  the fit; a leaderboard of its ratings
``Judged``, ``read_judged``     judge scores on every item, people's on some
``judge_corrected``             the prediction-powered gap, beside each alone
``judged_slices``               each slice's corrected gap, p adjusted across them
``plan_labels``, ``LabelPlan``  human labels a judge-corrected gap needs
``JudgeCorrected``, ``ppi_mean``  its record; the PPI++ mean (Angelopoulos et al.)
``coverage``, ``Coverage``      replay the simulation: coverage and power
``exact_power``                 power of the paired interval, summed exactly
==============================  ================================================

>>> result = compare([1, 1, 0, 1] * 50, [1, 1, 1, 1] * 50)
>>> print(result.verdict, result.interval, result.test, result.method)
better [+19.0, +31.0] pts McNemar exact exact bootstrap (B = infinity)

The default run reproduces the article's numbers (``--replays 0`` skips the
1,000-replay coverage loop):

>>> rng = random.Random(SEED)
>>> scores = simulate_scores(rng, N_ITEMS, CORR, ACC_A, ACC_B)
>>> result = analyze(scores, rng, resamples=RESAMPLES, confidence=CONFIDENCE)
>>> print(format_pts(result.gap), result.paired, result.mcnemar.p_text)
+3.6 pts [-1.4, +8.4] pts 0.1677

Intervals are exact rationals (bootstrap statistics on n items are k/n):

>>> Distribution.of(range(10), 10).interval(Fraction(8, 10))
Interval(lo=Fraction(1, 10), hi=Fraction(9, 10), unit='pts')
>>> mcnemar_exact(67, 85).p_text
'0.1677'
"""

from __future__ import annotations

import sys

if sys.version_info < (3, 10):          # before anything newer can fail with a traceback
    sys.stderr.write("bootstrap_eval_deltas: error: needs Python 3.10 or newer; this is "
                     "Python %d.%d\n" % sys.version_info[:2])
    raise SystemExit(2)

import signal

if __name__ == "__main__" or sys.argv[:1] and sys.argv[0].endswith("bootstrap-eval-deltas"):
    # A Ctrl-C while the interpreter is still importing ends the program quietly (status 130
    # from the shell) instead of a traceback; main() installs its own handlers.
    signal.signal(signal.SIGINT, signal.SIG_DFL)

import argparse
import array
import bisect
import codecs
import collections
import collections.abc
import contextvars
import csv
import functools
import gc
import hashlib
import heapq
import html
import io
import itertools
import json
import math
import numbers
import operator
import os
import random
import re
import stat
import tempfile
import time
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

__version__ = "1.10.3"

__all__ = [
    # compare, rank and plan
    "compare", "leaderboard", "read", "assert_not_worse", "plan", "simulate", "calibrate",
    "ledger", "main",
    # what they take and return
    "Result", "Table", "Interval", "Battles", "ToolError",
    # building blocks
    "simulate_scores", "Copula", "Scores", "Cells", "Settings", "analyze", "Analysis",
    "bootstrap", "exact_intervals", "saddlepoint_distributions", "wilson_interval",
    "clopper_pearson", "newcombe_paired", "newcombe_unpaired", "mcnemar_exact", "McNemar",
    "sign_flip_test", "holm", "benjamini_hochberg", "bonferroni", "rank_systems",
    "Leaderboard", "coverage", "Coverage", "exact_power", "Confusions", "METRICS",
    "analyze_metric", "metric_value", "metric_permutation_test", "battles", "read_battles",
    "battle_table", "bradley_terry", "BradleyTerry", "rank_battles", "Judged", "read_judged",
    "judge_corrected", "JudgeCorrected", "ppi_mean", "judged_slices", "plan_labels",
    "LabelPlan",
]


# === Constants and the exception ===
#
# The article's parameters, the tool's limits (each a refusal with a message, never a silent
# cap), exit statuses and ToolError, the one exception for bad input or options (a ValueError).
# Every random draw behind a reported number comes from the caller's ``random.Random``; nothing
# reads the clock but the ledger's timestamp and the progress indicator.

N_ITEMS = 500                 # items in the eval set (the article's N_ITEMS)
CORR = Fraction("0.6")        # loading of each system's latent score on shared difficulty
ACC_A = Fraction("0.72")      # true accuracy of system A
ACC_B = Fraction("0.76")      # true accuracy of system B
SEED = 2026                   # the article's seed
RESAMPLES = 2000              # bootstrap resamples per interval (the article's B)
REPLAYS = 1000                # coverage replays
CALIBRATION_REPLAYS = 1000    # tables of the calibration on the user's 2x2 table
CONFIDENCE = Fraction("0.95")

# stream: per-item (bit-exact), counts: multinomial cells, auto: the fastest drawing the same
_ENGINE_CHOICES = ("auto", "stream", "counts")
INTERVALS = ("percentile", "basic", "bca", "score")
ADJUSTMENTS = ("holm", "bh", "bonferroni")      # p-values adjusted across a family
_ACCURACY_INTERVALS = ("same", "wilson", "clopper-pearson")
OUTPUTS = ("text", "json", "markdown", "html")
CSV_COLUMNS = ("item", "system_a_correct", "system_b_correct")

_MCNEMAR_EXACT_LIMIT = 1000    # discordant pairs up to which McNemar is summed exactly
_EXACT_SIGN_FLIP_LIMIT = 20    # nonzero differences the sign-flip test enumerates (2**20)
PERMUTATIONS = 10_000         # random sign patterns beyond that
_PROGRESS_DELAY = 1.0          # seconds before a progress indicator appears (terminals only)
_SHOW_IDS = 5                  # ids quoted in an error about many rows

# Hard limits: beyond them the input or flag is refused in one line that names the limit.
MAX_LINE_BYTES = 1 << 24      # one line of a CSV or JSON-lines file (16 MiB)
MAX_INPUT_LINES = 5 * 10 ** 7  # lines of one text input (~110 bytes of memory each, read)
MAX_FIELD_CHARS = 1 << 20     # one CSV field (1 MiB)
MAX_NUMBER_CHARS = 50         # characters of one number (a score or a flag value)
MAX_EXPONENT = 50             # |decimal exponent| of one number: magnitudes stay float-safe
MAX_JSON_DEPTH = 512          # nesting of a JSON value (below every Python's own limit)
MAX_JSON_VALUES = 1 << 24     # values of one JSON text parsed whole (at most ~2.5 GB parsed)
MAX_ID_DIGITS = 18            # longer all-digit ids stay text
MAX_RESAMPLES = 1_000_000
MAX_REPLAYS = 100_000
MAX_PERMUTATIONS = 1_000_000
MAX_CONFIDENCE = Fraction("0.999999")   # a confidence level: six nines (tails of 5e-7 each)
MAX_N_ITEMS = 10_000_000      # items of an eval set, simulated or read (each kept in memory)
MAX_RUNS = 100                # runs per simulated system
MAX_SYSTEMS = 200             # systems on one leaderboard
LEADERBOARD_DRAWS = 10_000    # draws for the max-|t| critical value
MIN_HALF_WIDTH = Fraction(1, 10_000)
_ADVICE_SAFETY = 1.2          # a Monte Carlo end's sd, itself read off B resamples, taken larger
_REACH_Z = 2.576 * _ADVICE_SAFETY   # ... where an end lies in 99 runs of 100: this many sd

EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_TERMINATED = 70, 130, 141, 143

# The resampling engine's tuning: the numbers a seed gives never depend on these five,
# only the speed does (tests/test_statistics.py checks both paths against the naive loop).
_CODE_REJECT = 255             # code of a word that randrange would reject
_MAX_CODES = 254               # distinct score rows that fit the byte-code path
assert _MAX_CODES < _CODE_REJECT <= 0xFF   # a code is one byte, never the reject: sums exact
_CHUNK_WORDS = 1 << 14         # words per getrandbits call (64 KiB of bytes: stays in cache)
_SELECT_MAX_BITS = 5           # low index bits resolved by a select tree (32 lookups)
_FACTOR_CACHE_LIMIT = 1_000_000  # n up to which binomial ratio factors are cached whole
# These three choose the engine: with --engine auto they decide which stream (drawing from
# the same distribution) a seed gives, and the report names the engine it took.
_MAX_COUNTS_VALUES = 2_000     # distinct values the counts engine resamples as counts
_STREAM_BUDGET = 2 * 10 ** 8   # item draws "auto" leaves to the stream engine (a few seconds)
_SIMULATED_ITEMS_LIMIT = 10 ** 6   # "auto" simulates items one by one up to this many


class ToolError(ValueError):
    """A problem with the user's input or options: reported in one line, exit status 2."""


# An option named in a message is spelt as the caller writes it: a keyword from Python,
# a flag on the command line (main() says so), so that one check speaks to both.
_SPELLING = contextvars.ContextVar("spelling", default="python")


def _opt(name: str, value=None) -> str:
    """An option as the caller writes it: ``on_missing='drop'`` from Python,
    ``--on-missing drop`` on the command line; True is a switch (``--gate``).

    >>> _opt("min_delta"), _opt("on_missing", "drop"), _opt("gate", True)
    ('min_delta', "on_missing='drop'", 'gate=True')
    """
    if _SPELLING.get() == "python":
        return name if value is None else f"{name}={value!r}"
    flag = "--" + name.replace("_", "-")
    if isinstance(value, tuple):
        value = ",".join(map(str, value))
    return flag if value is None or value is True else f"{flag} {value}"


# === Formatting: numbers in and out ===
#
# Exact parsing of the numbers users write and exact rounding of those the tool prints (half
# to even on Fractions, so 0.025 is 0.02 with no float error, on every Python).  No randomness.

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?", re.ASCII)


def _printable(text: str) -> str:
    r"""*text* with control and format characters (ANSI, bidi, NUL, line breaks) escaped:
    echoing a file's content can never move the cursor, colour the terminal or split a line.

    >>> _printable("a\x1b[31mb\nc")
    'a\\x1b[31mb\\nc'
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else
                   ch.encode("unicode_escape").decode("ascii") for ch in text)


def _shorten(text: str, limit: int = 40) -> str:
    """*text* quoted for a message: control characters escaped, long text cut."""
    text = _printable(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _signed_fixed(value: Fraction, places: int) -> str:
    """A signed number with *places* decimals -- or more, when a nonzero value would print
    as zero: -0.0004 pts is "-0.0004", never "+0.0" beside a verdict it contradicts; tinier
    still, two significant digits.

    >>> _signed_fixed(Fraction(-4, 100), 1), _signed_fixed(Fraction(0), 1)
    ('-0.04', '+0.0')
    >>> _signed_fixed(Fraction(15, 10 ** 8), 1)
    '+1.5e-07'
    """
    text = _round_fixed(value, _places_shown(value, places), sign=True,
                        significant=6 + max(0, places - 3))
    return f"{float(value):+.1e}" if value and not text.strip("+-0.") else text


def _format_score(value, places: int = 3) -> str:
    """A score or proportion with *places* decimals, more where a nonzero one would print as
    zero, two significant digits where even those would: 1e-12 is "1.0e-12", not "0.000".

    >>> _format_score(Fraction(3, 4)), _format_score(Fraction(1, 2000)), _format_score(1e-12)
    ('0.750', '0.0005', '1.0e-12')
    """
    value = Fraction(value)
    text = _round_fixed(value, _places_shown(value, places))
    return f"{float(value):.1e}" if value and not text.strip("-0.") else text


def _format_gap(value: Fraction, percent: bool, extra: int = 0, beside=None) -> str:
    """A gap with its sign: ``+3.6 pts`` for proportions, ``+0.250`` for other scores (with
    *extra* more digits; with an interval printed *beside* it, at least as many as its ends
    take, so that the gap never prints outside its own interval).

    >>> tight = Interval(Fraction(47, 100000), Fraction(11, 20000))
    >>> gap = Fraction(51, 100000)
    >>> _format_gap(gap, True), _format_gap(gap, True, beside=tight)
    ('+0.1 pts', '+0.05 pts')
    """
    places = (1 if percent else 3) + extra if beside is None else _interval_places(
        dataclasses.replace(beside, places=None, reach=None), percent)   # its decimals, not
    # the fewer a Monte Carlo interval holds: the gap, exact, takes no digits from the seed
    return _signed_fixed(value * (100 if percent else 1), places) + " pts" * percent


def _format_apart(first: Fraction, second: Fraction, percent: bool) -> tuple:
    """Two gaps as ``_format_gap`` prints them, with as many more digits as *second* (a
    gate's margin) needs to print as given and unequal values need to print unequal: a
    lower end is never shown equal to the margin it is above, nor the margin rounded.

    >>> _format_apart(Fraction(3051, 1000), Fraction(3, 1000), True)
    ('+305.1 pts', '+0.3 pts')
    >>> _format_apart(Fraction(3041, 100000), Fraction(3, 100), True)
    ('+3.04 pts', '+3.00 pts')
    >>> _format_apart(Fraction(1253, 10000), Fraction(1275, 10000), False)
    ('+0.1253', '+0.1275')
    """
    scaled = second * (100 if percent else 1) * 10 ** (1 if percent else 3)
    given = next((extra for extra in range(12) if (scaled * 10 ** extra).denominator == 1), 0)
    for extra in range(given, 12):
        texts = _format_gap(first, percent, extra), _format_gap(second, percent, extra)
        if texts[0] != texts[1] or first == second:
            break
    return texts


def _format_interval(interval, percent: bool, margin=None) -> str:
    """An interval's ends: ``[-1.4, +8.4] pts`` for proportions, ``[+0.588, +0.715]`` for
    other scores; more decimals where an end that is not zero would print as zero, or as a
    gate's *margin* it is not -- but a Monte Carlo end within its error of 0 as the zero it
    may be, to the digits it holds."""
    scale, places = (100 if percent else 1), _interval_places(interval, percent, margin)
    ends = (interval.lo * scale, interval.hi * scale)
    held = interval.places                    # Monte Carlo ends: each to the digit it holds

    def shown(end, sign) -> str:
        digits = places if held is None else min(places, held)
        if not sign:                          # it may be 0
            return _round_fixed(Fraction(0), digits)
        if held is None:
            return _signed_fixed(end, places)
        if interval.reach:                    # a sign held past its digits: +0.0, not +0.3
            return ("+" if end > 0 else "-") + _round_fixed(abs(end), digits)
        return _signed_fixed(end, _places_shown(end, digits))
    signs = _signs_held(interval)
    lo, hi = (shown(end, sign) for end, sign in zip(ends, signs))
    if lo == hi and ends[0] != ends[1] and all(signs):   # ... unequal ends
        lo, hi = (_signed_fixed(end, places) for end in ends)           # apart, as the gap
    return f"[{lo}, {hi}]" + (" pts" if percent else "")


_APART = 13                        # up to 12 more decimals for unequal ends to print apart


def _interval_places(interval, percent: bool, margin=None) -> int:
    """The decimals ``_format_interval`` prints an interval's ends with: as many as each end
    needs to print as what it is (``_places_shown``), and up to twelve more where two
    unequal ends would print equal ([-0.052, -0.050] pts, not [-0.1, -0.1] pts), or the lower
    end as a gate's *margin* it is not ([+0.999, ...] beside a gate at +1.000, not [+1.0, ...])."""
    scale, places = (100, 1) if percent else (1, _width_places(interval.hi - interval.lo))
    if interval.places is not None:            # Monte Carlo ends: the digits they hold
        places = min(places, interval.places)
    lo, hi = interval.lo * scale, interval.hi * scale
    signs = _signs_held(interval)
    if not all(signs):                         # an end that may be 0: as held, no more
        return max(_places_shown(end, places) if sign else places
                   for end, sign in zip((lo, hi), signs))
    places = max(_places_shown(lo, places), _places_shown(hi, places))
    margin = lo if margin is None else margin * scale

    def apart(end, other, places) -> bool:
        return end == other or _signed_fixed(end, places) != _signed_fixed(other, places)
    return next((places + extra for extra in range(_APART) if apart(lo, hi, places + extra)
                 and apart(lo, margin, places + extra)), places + _APART - 1)


def _signs_held(interval, value=0) -> tuple:
    """Whether each end lies clear of *value* (0: its sign) from seed to seed: always for
    exact ends; for Monte Carlo ends, where its ``reach`` (the order statistics within 2.576
    sd of its rank, the sd taken a fifth larger: where it lies in 99 runs of 100) lies on
    the end's side, gaps between the resampled values included.

    >>> reach = ((Fraction(-1, 100), Fraction(3, 100)), (Fraction(2, 5), Fraction(3, 5)))
    >>> _signs_held(Interval(Fraction(1, 100), Fraction(1, 2), "score", 1, reach))
    (False, True)
    """
    return tuple(span is None or (span[0] > value if end > value else span[1] < value if
                                  end < value else False)
                 for end, span in zip((interval.lo, interval.hi), interval.reach or (None, None)))


def _width_places(width: Fraction, places: int = 3) -> int:
    """At most *places* decimals, and at most three less one per digit of an interval's
    *width* past its first: ends of 4.7 x 10^10 with a width of 10^9 print whole, not with
    three decimals of noise.

    >>> _width_places(Fraction(26, 100)), _width_places(Fraction(260)), _width_places(10 ** 9)
    (3, 1, 0)
    """
    most = 3
    while most and width >= 10:
        width, most = width / 10, most - 1
    return min(places, most)


def _places_shown(value: Fraction, places: int) -> int:
    """The decimals *value* needs to print as what it is (zero or not), from *places* on, up to
    three more; *places* where even those would print it as zero (it is then printed with two
    significant digits, and sets no other number's decimals)."""
    return next((places + extra for extra in range(4)
                 if value == 0 or _round_fixed(value, places + extra).strip("+-0.")), places)


_NOISY = 14                        # characters from which a text may carry a double's noise
_NOISE_DIGITS = (14, 20)           # ... as significant digits: R's %.15g to NumPy's %.18e
_NOISE_ULPS = 4                    # ... of at most 4 units in the double's last place, or of
#                                    one unit of the 15th digit written
_SIMPLE_DENOMINATOR = 1000         # ... around a fraction with a denominator up to this
_SHORT_DECIMAL = 10                # ... or a decimal with up to this many significant digits
_FRACTION_WITHIN = 1e-11           # ... a fraction only where noise is this small (|x| < 10^4)
_OPERANDS = (1e-4, 6, 8)           # from 1e-4 up, 8 ulps of the operands (as in 1 - 0.95)
#                                    around a decimal of up to 6 significant digits


def _parse_number(text: str) -> Fraction | None:
    """An exact number from its decimal text (ASCII digits only), or None when it is not one.
    ToolError beyond MAX_NUMBER_CHARS characters or a decimal exponent beyond MAX_EXPONENT:
    no number overflows a float or costs a long big-integer computation.

    A non-integer written with 14 to 20 significant digits reads as the simple number a double's
    arithmetic noise hides in it, if any: a fraction p/q (q <= 1000) or a decimal of up to 10
    significant digits within 4 units in the last place of the double (or, written with 15
    digits or fewer, one unit of the 15th digit: R's %.15g); from 1e-4 up also a decimal of up
    to 6 digits or such a fraction within 8 units in the last place of the power of ten above
    it, at least 1: the noise of the numbers it was computed from (``1 - 0.95`` is
    0.050000000000000044, ``100 - 92.1`` is 7.900000000000006, 35 tenths summed
    3.5000000000000018).  ``repr(1/3)``, ``repr(k/17)``, ``3 * 1e-9``, ``0.1 + 0.2``, NumPy's
    ``%.18e`` and R's ``%.15g`` read as 1/3, k/17, 3e-9, 3/10 ..., so that scores on a lattice
    stay on it (their differences had split ties by 1e-17 and flipped verdicts); a random
    double moves, by at most a few units in its last place, about once in 10^5 values.

    >>> _parse_number("0.75"), _parse_number("2e-1"), _parse_number("x")
    (Fraction(3, 4), Fraction(1, 5), None)
    >>> _parse_number("0.3333333333333334"), _parse_number("3.0000000000000004e-09")
    (Fraction(1, 3), Fraction(3, 1000000000))
    """
    match = _NUMBER.fullmatch(text)
    if match is None:
        return None
    if len(text) > MAX_NUMBER_CHARS:
        raise ToolError(f"{_shorten(text)} has more than {MAX_NUMBER_CHARS} characters, the "
                        "longest number the tool reads")
    if abs(int(match.group(1) or 0)) > MAX_EXPONENT:
        raise ToolError(f"{_shorten(text)} is out of range: a number's decimal exponent must "
                        f"lie within +-{MAX_EXPONENT}")
    number = Fraction(text)
    if len(text) <= _NOISY or number.denominator == 1:
        return number
    mantissa, _, exponent = text.lower().partition("e")
    digits = len(mantissa.lstrip("+-").replace(".", "").lstrip("0"))
    if not _NOISE_DIGITS[0] <= digits <= _NOISE_DIGITS[1]:
        return number
    whole, _, fraction = mantissa.lstrip("+-").partition(".")
    lead = len(whole.lstrip("0")) - 1 if whole.strip("0") else \
        len(fraction.lstrip("0")) - len(fraction) - 1       # the first digit's power of ten
    x, last = float(number), int(exponent or 0) + lead - 14   # the 15th digit's
    ulps = _NOISE_ULPS * math.ulp(x)
    tries = [(max(ulps, 10.0 ** last) if digits <= 15 else ulps, _SHORT_DECIMAL)]  # (floats)
    if abs(x) >= _OPERANDS[0]:
        wide = _OPERANDS[2] * math.ulp(10.0 ** len(str(int(abs(x)))) if abs(x) >= 1 else 1.0)
        if wide > tries[0][0]:
            tries.append((wide, _OPERANDS[1]))

    def exactly(within: float) -> Fraction:               # 10.0 ** -14 is not 10^-14
        return Fraction(within) if within != 10.0 ** last else max(
            Fraction(ulps), Fraction(10) ** last if last < 0 else Fraction(10 ** last))

    for within, places in tries:
        short = f"{x:.{places - 1}e}"
        if abs(float(short) - x) <= 2 * within and \
                abs(Fraction(short) - number) <= exactly(within):
            return Fraction(short)
    within = tries[-1][0]
    if within > _FRACTION_WITHIN:         # fractions of q <= 1000 lie 10^-6 apart: too dense
        return number
    h, h_before, k, k_before, y = 1, 0, 0, 1, x   # p/q that near x is a convergent of its
    while True:                                   # continued fraction
        a = math.floor(y)
        h, h_before, k, k_before = a * h + h_before, h, a * k + k_before, k
        if k > _SIMPLE_DENOMINATOR:
            return number
        if abs(x - h / k) <= 2 * within:
            return Fraction(h, k) if abs(Fraction(h, k) - number) <= exactly(within) else number
        if y == a:
            return number
        y = 1 / (y - a)


_LARGE = 10 ** 15                  # a number this large prints with 6 significant digits


def _round_fixed(value: Fraction, places: int, *, sign: bool = False,
                 significant: int = 6) -> str:
    """Format an exact value with *places* decimals, rounding half to even exactly.

    >>> _round_fixed(Fraction(-7, 500) * 100, 1, sign=True)
    '-1.4'
    >>> _round_fixed(Fraction(1, 40), 2)   # 0.025 -> 0.02: half to even, no float error
    '0.02'
    >>> _round_fixed(Fraction(0), 1, sign=True)
    '+0.0'
    >>> _round_fixed(Fraction(-10 ** 50 - 5 * 10 ** 44), 3)    # past 15 digits: 6 significant
    '-1.00000e+50'
    """
    value = Fraction(value)
    if abs(value) >= _LARGE:
        digits = len(str(round(abs(value))))
        mantissa = round(abs(value) / 10 ** (digits - significant))  # exact, half to even
        digits, mantissa = (digits + 1, mantissa // 10) if mantissa >= 10 ** significant \
            else (digits, mantissa)
        return ("-" if value < 0 else "+" if sign else "") + \
            f"{str(mantissa)[0]}.{str(mantissa)[1:]}e+{digits - 1}"
    scaled = round(value * 10 ** places)
    digits = str(abs(scaled)).rjust(places + 1, "0")
    text = digits[:-places] + "." + digits[-places:] if places else digits
    return ("-" if scaled < 0 else "+" if sign else "") + text


def format_pts(gap: Fraction) -> str:
    """A gap in accuracy points with one decimal and a sign: ``+3.6 pts``."""
    return _round_fixed(gap * 100, 1, sign=True) + " pts"


def _format_decimal(value: Fraction) -> str:
    """Shortest exact decimal of a terminating fraction (else 6 significant digits).

    >>> _format_decimal(Fraction("0.720")), _format_decimal(Fraction(1, 3))
    ('0.72', '0.333333')
    """
    value = Fraction(value)
    if 10 ** value.denominator.bit_length() % value.denominator:   # a prime other than 2, 5
        return f"{float(value):.6g}"
    places = 0
    while (value * 10 ** places).denominator != 1:
        places += 1
    return _round_fixed(value, places) if places else str(value.numerator)


def _format_percent(value: Fraction) -> str:
    """A confidence level as a percentage: 0.95 -> '95%', 0.995 -> '99.5%'."""
    return _format_decimal(Fraction(value) * 100) + "%"


def _percent(value) -> str:
    """A share as a percentage with one decimal, rounded exactly: 0.5365 -> '53.6%'."""
    return _round_fixed(Fraction(value) * 100, 1) + "%"


def _format_p(p: float) -> str:
    """Four decimals, or two significant digits below 0.001 (0.000143 is not 0.0001).

    >>> _format_p(0.16771), _format_p(0.000143), _format_p(3.2e-12), _format_p(0.0)
    ('0.1677', '0.00014', '3.2e-12', '<1e-300')
    """
    return "<1e-300" if p == 0 else f"{p:.4f}" if p >= 0.001 else f"{p:.2g}"


def _p_equals(p: float) -> str:
    """``p=0.1677``, or ``p<1e-300`` when the p-value underflows.

    >>> _p_equals(0.16771), _p_equals(0.0)
    ('p=0.1677', 'p<1e-300')
    """
    text = _format_p(p)
    return "p" + (text if text.startswith("<") else "=" + text)


# === Binomial and normal helpers ===
#
# Exact or correctly rounded probability functions (Loader's saddle point binomial, Student's
# t) and the counts engine's variates.  The probabilities are pure; the variates consume
# ``rng.random()`` only, never ``random.binomialvariate`` (3.12+).

# --- Exact probabilities: binomial, beta, Student's t ---

# log(k!) - log(sqrt(2 pi k) (k/e)^k) for k < 16: the doubles nearest (Decimal, 40 digits)
_STIRLERR = (math.inf,                     # k = 0: the formula is undefined; never used
             0.08106146679532726, 0.0413406959554093, 0.02767792568499834, 0.020790672103765093,
             0.016644691189821193, 0.013876128823070748, 0.01189670994589177,
             0.010411265261972096, 0.009255462182712733, 0.00833056343336287,
             0.007573675487951841, 0.00694284010720953, 0.006408994188004207,
             0.0059513701127588475, 0.005554733551962801)


def _stirlerr(k: int) -> float:
    """The Stirling-formula error log(k!) - log(sqrt(2 pi k) (k/e)^k), k >= 1."""
    if k < len(_STIRLERR):
        return _STIRLERR[k]
    k2 = 1.0 / (k * k)
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - k2 / 1188) * k2) * k2) * k2) / k


def _bd0(x: float, mean: float) -> float:
    """x log(x/mean) + mean - x, without cancellation when x is near mean (Loader)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        s = (x - mean) * v
        ej = 2 * x * v
        v *= v
        for odd in itertools.count(3, 2):
            ej *= v
            s, previous = s + ej / odd, s
            if s == previous:
                return s
    return x * math.log(x / mean) + mean - x


def binom_pmf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) = k), accurate to ~1e-14 relative for any n (Loader 2000).

    >>> round(binom_pmf(3, 10, 0.5) * 1024, 9)
    120.0
    """
    q = 1 - p
    if k < 0 or k > n:
        return 0.0
    if p == 0:
        return 1.0 if k == 0 else 0.0
    if q == 0:
        return 1.0 if k == n else 0.0
    if k == 0:
        return math.exp(n * math.log1p(-p)) if p < 0.5 else q ** n
    if k == n:
        return p ** n
    lc = _stirlerr(n) - _stirlerr(k) - _stirlerr(n - k) - _bd0(k, n * p) - _bd0(n - k, n * q)
    return math.exp(lc) * math.sqrt(n / (2 * math.pi * k * (n - k)))


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by Lentz's continued fraction
    (the symmetric form where it converges fast)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(1 - x, b, a)
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - log_beta) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * result


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with *df* degrees of freedom (df may be fractional).

    >>> round(student_t_cdf(2.0, 4), 6), round(student_t_cdf(-1.0, 1), 6)
    (0.941942, 0.25)
    """
    if math.isinf(df):
        return NormalDist().cdf(t)
    tail = 0.5 * _incomplete_beta(df / (df + t * t), df / 2, 0.5)
    return 1.0 - tail if t > 0 else tail


def student_t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t (bisection on the cdf; the normal's beyond 1e7 df).

    >>> round(student_t_quantile(0.975, 4), 4)
    2.7764
    """
    if df > 1e7 or math.isinf(df):
        return NormalDist().inv_cdf(p)
    low, high = -1.0, 1.0
    while student_t_cdf(low, df) > p:
        low *= 2
    while student_t_cdf(high, df) < p:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if student_t_cdf(middle, df) < p else (low, middle)
        if high - low < 1e-12:
            break
    return (low + high) / 2


def _binom_cdf_lower(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k) for k at or below the mean, summed down from k."""
    term, total, ratio = binom_pmf(k, n, p), 0.0, (1 - p) / p
    for i in range(k, -1, -1):
        total += term
        if not term or term < total * 1e-17:
            break
        term *= i * ratio / (n - i + 1)
    return total


def _z_value(confidence) -> float:
    """The two-sided normal quantile of a confidence level (1.96 at 0.95)."""
    return NormalDist().inv_cdf(1 - float(1 - Fraction(confidence)) / 2)


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k): the shorter tail summed from Loader's probabilities
    (``_binom_cdf_lower``), the upper one by symmetry.

    >>> round(_binom_cdf(3, 10, 0.5) * 1024, 9), round(_binom_cdf(6, 10, 0.5) * 1024, 9)
    (176.0, 848.0)
    """
    if k < 0:
        return 0.0
    if k >= n or p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    if k <= n * p:
        return _binom_cdf_lower(k, n, p)
    return 1.0 - _binom_cdf_lower(n - k - 1, n, 1 - p)


# --- Binomial and multinomial variates from rng.random() (the counts engine's) ---

def _btrd_accept(n, p, k, v) -> bool:
    """BTRD's exact acceptance test of k for the uniform-scaled v."""
    m = math.floor((n + 1) * p)
    r = p / (1 - p)
    nr = (n + 1) * r
    km = abs(k - m)
    if km <= 15:
        f = 1.0
        if m < k:
            for i in range(m + 1, k + 1):
                f *= nr / i - r
        else:
            for i in range(k + 1, m + 1):
                v *= nr / i - r
        return v <= f
    npq = n * p * (1 - p)
    v = math.log(v)
    rho = (km / npq) * (((km / 3 + 0.625) * km + 1 / 6) / npq + 0.5)
    t = -km * km / (2 * npq)
    if v < t - rho:
        return True
    if v > t + rho:
        return False
    nm, nk = n - m + 1, n - k + 1
    h = (m + 0.5) * math.log((m + 1) / (r * nm)) + _stirlerr(m + 1) + _stirlerr(n - m + 1)
    return v <= (h + (n + 1) * math.log(nm / nk) + (k + 0.5) * math.log(nk * r / (k + 1))
                 - _stirlerr(k + 1) - _stirlerr(n - k + 1))


def binomial_variates(rng: random.Random, trials, p: float) -> list:
    """One Binomial(t, p) draw for each t in *trials* (same p), in order: the draws of one
    ``binomial_variate`` call per t.  t*p < 10: sequential search from 0 (expected t*p + 1
    steps); else Hormann's transformed rejection with decomposition (BTRD), its setup redone
    only when t changes, its fast path one ``rng.random()``: about a microsecond a draw."""
    if p <= 0:
        return [0] * len(trials)
    if p >= 1:
        return list(trials)
    flip = p > 0.5
    q = 1 - p if flip else p
    random_, floor, sqrt = rng.random, math.floor, math.sqrt
    out, last = [], None
    for t in trials:
        if t != last:
            last, small = t, t * q < 10
            if small:
                s, a, r0 = q / (1 - q), (t + 1) * q / (1 - q), (1 - q) ** t
            else:
                spq = sqrt(t * q * (1 - q))
                b = 1.15 + 2.53 * spq
                a2 = -0.1746 + 0.0496 * b + 0.02 * q          # 2a of BTRD
                c, vr = t * q + 0.5, 0.92 - 4.2 / b
                urvr, alpha = 0.86 * vr, (2.83 + 5.1 / b) * spq
        if small:
            while True:
                r, u, x = r0, random_(), 0
                while u > r:
                    u -= r
                    x += 1
                    if x > t:             # rounding ran past t: draw again
                        break
                    r *= a / x - s
                else:
                    break
        else:
            v = random_()
            while True:
                if v <= urvr:                               # BTRD's fast path
                    u = v / vr - 0.43
                    x = floor((a2 / (0.5 - abs(u)) + b) * u + c)
                    break
                if v >= vr:
                    u = random_() - 0.5
                else:
                    u = v / vr - 0.93
                    u = math.copysign(0.5, u) - u
                    v = random_() * vr
                us = 0.5 - abs(u)
                x = floor((a2 / us + b) * u + c)
                if 0 <= x <= t and _btrd_accept(t, q, x, v * alpha / (a2 / 2 / (us * us) + b)):
                    break
                v = random_()
        out.append(t - x if flip else x)
    return out


def binomial_variate(rng: random.Random, n: int, p: float) -> int:
    """One draw from Binomial(n, p) (see ``binomial_variates``).

    >>> rng = random.Random(1)
    >>> [binomial_variate(rng, 500, 0.3) for _ in range(4)]
    [142, 158, 147, 157]
    """
    return binomial_variates(rng, (n,), p)[0]


@functools.lru_cache(maxsize=4)
def _all_ratio_factors(n: int) -> list:
    """All of them for one n, computed once: a coverage loop reuses them every replay."""
    return list(map(operator.truediv, range(n, 0, -1), range(1, n + 1)))


def _ratio_factors(n: int, lo: int, hi: int) -> list:
    """(n-k)/(k+1) for k in lo..hi-1: pmf(k+1)/pmf(k) of Binomial(n, 1/2)."""
    if n <= _FACTOR_CACHE_LIMIT:
        return _all_ratio_factors(n)[lo:hi]
    return list(map(operator.truediv, range(n - lo, n - hi, -1), range(lo + 1, hi + 1)))


def _uniforms(rng: random.Random, count: int):
    """*count* lazy ``rng.random()`` draws, at C speed."""
    return itertools.starmap(rng.random, itertools.repeat((), count))


def _table_draws(rng: random.Random, table: tuple, count: int):
    """*count* lazy draws from a ``(lo, cdf)`` table: a ``random()`` and a bisection each."""
    lo, cdf = table
    return map(lo.__add__, map(bisect.bisect_right, itertools.repeat(cdf), _uniforms(rng, count)))


def _from_mode(peak: float, down, up) -> list:
    """The cdf of a table from its mode's *peak* times the ratios *down* and *up* from it."""
    below = list(itertools.accumulate(down, operator.mul, initial=peak))
    below.reverse()
    below.pop()                                    # the peak is the first value above
    return list(itertools.accumulate(itertools.chain(
        below, itertools.accumulate(up, operator.mul, initial=peak))))


@functools.lru_cache(maxsize=256)
def _binomial_cdf_table(n: int, p: float) -> tuple:
    """(lo, cumulative probabilities of lo..hi, the last exactly 1.0) of Binomial(n, p).
    lo..hi is the mode +- (8.5 sd + 8): each tail outside holds under 2**-54, below what a
    53-bit ``random()`` resolves.  Loader's pmf at the mode times exact ratios is good to
    about 1e-13; clamping the last value to 1.0 moves that residue to the top value."""
    mode = min(n, math.floor((n + 1) * p))
    ratio = p / (1 - p)
    spread = 8.5 * math.sqrt(n * p * (1 - p)) + 8
    lo, hi = max(0, math.floor(mode - spread)), min(n, math.ceil(mode + spread))
    factors = _ratio_factors(n, lo, hi)           # (n-k)/(k+1) for k = lo..hi-1
    cdf = _from_mode(binom_pmf(mode, n, p), map(operator.truediv, itertools.repeat(1 / ratio),
                                                reversed(factors[:mode - lo])),
                     map(operator.mul, factors[mode - lo:], itertools.repeat(ratio)))
    while len(cdf) > 1 and cdf[-2] >= 1.0:        # rounding past 1 at the top: clamp
        cdf.pop()
    cdf[-1] = 1.0                                  # random() < 1.0: every draw lands in the table
    return lo, cdf


def binomial_table_variates(rng: random.Random, n: int, p: float, count: int) -> list:
    """*count* draws from Binomial(n, p) by inverting its cumulative table (computed once a
    batch): one ``rng.random()`` and a bisection each, both run from C, about 0.3 microseconds.

    >>> rng = random.Random(1)
    >>> binomial_table_variates(rng, 500, 0.3, 4)
    [139, 161, 157, 143]
    """
    if p <= 0 or p >= 1:
        return [0 if p <= 0 else n] * count
    return list(_table_draws(rng, _binomial_cdf_table(n, p), count))


@functools.lru_cache(maxsize=4096)
def _poisson_cdf_table(mean: int) -> tuple:
    """(lo, cumulative probabilities of lo..hi, the last exactly 1.0) of Poisson(*mean*), an
    integer: lo..hi is the mode +- (9 sd + 12), each tail outside under 2**-60; products of
    the ratios from the mode (good to about 1e-14), normalised (the mode's own probability
    cancels)."""
    spread = 9 * math.sqrt(mean) + 12
    lo, hi = max(0, math.floor(mean - spread)), math.ceil(mean + spread)
    cdf = _from_mode(1.0, map(operator.truediv, range(mean, lo, -1), itertools.repeat(mean)),
                     map(operator.truediv, itertools.repeat(mean), range(mean + 1, hi + 1)))
    total = cdf[-1]
    cdf = [value / total for value in cdf]
    cdf[-1] = 1.0
    return lo, cdf


def multinomial_columns(rng: random.Random, counts, resamples: int) -> list:
    """Per cell, its count in each of *resamples* draws from Multinomial(n, counts / n),
    n = sum(counts): a column per cell, each draw's columns adding to n.  Poisson counts
    given their total are multinomial, so each cell's count is drawn as Poisson(its count)
    from its table (one ``random()`` and a bisection, from C), then each draw is brought to
    n exactly: the items missing drawn from the cells' shares, or the surplus taken out at
    random without replacement.  The cost is the cells plus |total - n| (about 0.8 sqrt(n))
    per draw; where that is more than BTRD's conditional binomials (few cells, many items),
    those are drawn instead, the largest cell first.

    >>> columns = multinomial_columns(random.Random(1), [50, 30, 20], 3)
    >>> columns, [sum(draw) for draw in zip(*columns)]
    ([[41, 48, 52], [36, 32, 34], [23, 20, 14]], [100, 100, 100])
    """
    def uniform_below(size: int, count: int) -> list:
        """*count* integers uniform on 0..size-1 (size < 2**50), from ``random()`` at C speed."""
        return list(map(math.floor, map(operator.mul, _uniforms(rng, count),
                                        itertools.repeat(size))))

    n, cells = sum(counts), len(counts)
    if math.sqrt(n) > 3.5 * cells:
        order = sorted(range(cells), key=lambda j: -counts[j])
        columns, left, mass = [None] * cells, [n] * resamples, n
        for j in order[:-1]:
            columns[j] = binomial_variates(rng, left, counts[j] / mass)
            left = list(map(operator.sub, left, columns[j]))
            mass -= counts[j]
        columns[order[-1]] = left
        return columns
    rows = [_table_draws(rng, _poisson_cdf_table(count), resamples) for count in counts]
    draws = list(map(list, zip(*rows)))
    shares = list(itertools.accumulate(counts))
    for draw in draws:
        total = sum(draw)
        if total < n:                 # the missing items, each from the cells' shares
            picks = uniform_below(n, n - total)
            ends, sign = shares, 1
        elif total > n:               # distinct positions among the items drawn: taken out
            picks = set(uniform_below(total, total - n))
            while len(picks) < total - n:
                picks.update(uniform_below(total, total - n - len(picks)))
            ends, sign = list(itertools.accumulate(draw)), -1
        else:
            continue
        for j, moved in collections.Counter(map(bisect.bisect_right, itertools.repeat(ends),
                                                picks)).items():
            draw[j] += sign * moved
    return list(map(list, zip(*draws)))


def multinomial_variate(rng: random.Random, n: int, probs) -> tuple:
    """Counts of n draws over cells with the given probabilities (conditional binomials)."""
    counts, left, mass = [], n, 1.0
    for prob in probs[:-1]:
        x = binomial_variate(rng, left, min(1.0, max(0.0, prob / mass))) if mass > 0 else 0
        counts.append(x)
        left -= x
        mass -= prob
    counts.append(left)
    return tuple(counts)


# === Data model ===
#
# Frozen records for what flows through the tool: per-item scores, the 2x2 cells of 0/1 scores,
# intervals, the design (clusters, strata) and the resampling settings -- the one record that
# carries seed stream, resamples, confidence, interval rule and engine.  Validation happens in
# their constructors; nothing here draws from the random stream.

# --- Scores, cells and intervals ---

@dataclass(frozen=True)
class Cells:
    """The 2x2 table of two systems on the same items: counts or probabilities.

    ``both`` right, ``a_only`` right, ``b_only`` right, ``neither`` right.
    For 0/1 scores this table is all the bootstrap of an accuracy gap can see.
    """

    both: object
    a_only: object
    b_only: object
    neither: object

    @property
    def n(self):
        return self.both + self.a_only + self.b_only + self.neither

    @property
    def a(self):
        """A's accuracy (probabilities) or number of items A got right (counts)."""
        return self.both + self.a_only

    @property
    def b(self):
        return self.both + self.b_only

    def as_tuple(self) -> tuple:
        return (self.both, self.a_only, self.b_only, self.neither)

    def groups(self) -> dict:
        """The items as {(a, b, size): count}, for the jackknife (counts only)."""
        keys = ((1, 1, 1), (1, 0, 1), (0, 1, 1), (0, 0, 1))
        return {key: count for key, count in zip(keys, self.as_tuple()) if count}


@dataclass(frozen=True)
class _Stratum:
    """One stratum's distinct unit values (centred), their counts, mean and draws: what the
    saddlepoint approximation (below) reads of it."""

    values: tuple
    counts: tuple
    squares: tuple
    mean: float
    draws: int
    low: float
    high: float

    @classmethod
    def of(cls, values) -> _Stratum:
        tally = collections.Counter(values)
        return cls.weighted(tuple(map(float, tally)), tuple(map(float, tally.values())))

    @classmethod
    def weighted(cls, values, counts) -> _Stratum:
        """From values with their counts (a value may come twice)."""
        total = math.fsum(counts)
        mean = math.fsum(map(operator.mul, values, counts)) / total
        centred = [v - mean for v in values]
        return cls(tuple(centred), tuple(counts), tuple(map(operator.mul, centred, centred)),
                   mean, round(total), min(centred), max(centred))

    @functools.cached_property
    def at_zero(self) -> tuple:
        """``(total, first, second)`` of the saddlepoint's sums at s = 0, where every
        weight is its count: the same sums as ``_cgf`` takes there, computed once."""
        total = math.fsum(self.counts)
        return (total, math.fsum(map(operator.mul, self.counts, self.values)) / total,
                math.fsum(map(operator.mul, self.counts, self.squares)) / total)

    @functools.cached_property
    def ranked(self) -> tuple:
        """The values' indices, least value first: walks in from either end."""
        return tuple(sorted(range(len(self.values)), key=self.values.__getitem__))

    @functools.cached_property
    def rests(self) -> dict:
        """``_rest_cumulants``' cache: {values left out: the rest's mean and cumulants}."""
        return {}

    @functools.cached_property
    def third(self) -> float:
        """The third central moment of one draw (for a starting point, not an answer)."""
        total, first, second = self.at_zero
        cubes = math.fsum(map(operator.mul, map(operator.mul, self.counts, self.values),
                              self.squares)) / total
        return cubes - 3 * first * second + 2 * first ** 3


@dataclass(frozen=True)
class Units:
    """The resampling units of a design: per unit, A's and B's integer score sums and
    its number of items; per stratum, the indices of its units (None: one stratum)."""

    a: tuple
    b: tuple
    size: tuple
    strata: tuple | None
    clustered: bool

    @property
    def count(self) -> int:
        return len(self.size)

    @property
    def equal_sizes(self) -> bool:
        return len(set(self.size)) == 1

    @property
    def simple(self) -> bool:
        """Plain item resampling: the article's design."""
        return not self.clustered and self.strata is None

    @functools.cached_property
    def diff(self) -> tuple:
        """B - A per unit: what the paired bootstrap and the sign-flip test see."""
        return tuple(map(operator.sub, self.b, self.a))

    @functools.cached_property
    def moments(self) -> dict:
        """Per column ("a", "b", "paired"), each stratum's distinct values and counts: what
        the method chooser and the saddlepoint read, built once."""
        groups = self.strata or (range(self.count),)
        return {name: tuple(_Stratum.of(map(column.__getitem__, members)) for members in groups)
                for name, column in (("a", self.a), ("b", self.b), ("paired", self.diff))}

    @functools.cached_property
    def built(self) -> dict:
        """What the method chooser built and the analysis uses again (the outlier mixture)."""
        return {}

    def groups(self) -> dict:
        """{(a, b, size): count}: identical units, for the jackknife."""
        return dict(collections.Counter(zip(self.a, self.b, self.size)))


@dataclass(frozen=True)
class Scores:
    """Per-item scores of systems A and B on the same items, in item order.

    Scores are kept exactly (ints or Fractions); ``scale`` is the common
    denominator that turns every score into an integer, so that bootstrap
    sums are exact integer arithmetic.
    """

    a: tuple
    b: tuple
    clusters: tuple | None = None   # a cluster label per item: resample whole clusters
    strata: tuple | None = None     # a stratum label per item: resample within each
    runs_a: tuple | None = None     # several runs: ((label, column), ...); a and b hold
    runs_b: tuple | None = None     # each item's mean over them

    def __repr__(self) -> str:
        design = "".join(f", {name}={len(set(labels)):,}" for name, labels in
                         (("clusters", self.clusters), ("strata", self.strata)) if labels)
        runs = f", runs={len(self.runs_a)}/{len(self.runs_b)}" if self.runs_a else ""
        return (f"Scores(n={self.n:,}, mean_a={float(self.mean_a):.4g}, "
                f"mean_b={float(self.mean_b):.4g}{design}{runs})")

    def __post_init__(self):
        if len(self.a) != len(self.b):
            raise ToolError("systems A and B must be scored on the same items")
        for labels in (self.clusters, self.strata):
            if labels is not None and len(labels) != len(self.a):
                raise ToolError("a cluster or stratum label is needed for every item")
        if len(self.a) < 2:
            raise ToolError(f"need at least 2 items, got {len(self.a)}")

    @property
    def n(self) -> int:
        return len(self.a)

    @functools.cached_property
    def binary(self) -> bool:
        return all(bottom == 1 and 0 <= top <= 1     # exact: no Fraction hashed
                   for top, bottom in self._ratios.values())

    @functools.cached_property
    def proportions(self) -> bool:
        """All scores within [0, 1] (accuracies, F1): gaps are reported in points."""
        return all(0 <= top <= bottom for top, bottom in self._ratios.values())

    @functools.cached_property
    def scale(self) -> int:
        """The least common denominator of all scores (1 for integer scores)."""
        return math.lcm(*{bottom for _, bottom in self._ratios.values()})

    @functools.cached_property
    def _ratios(self) -> dict:
        """Each distinct score object's (numerator, denominator), by identity, read once."""
        return dict(zip(self._objects, map(operator.methodcaller("as_integer_ratio"),
                                           self._objects.values())))

    @functools.cached_property
    def _objects(self) -> dict:
        """The distinct score objects, by identity (the readers share one object per value
        text, so this is small and built at C speed, with no hashing of Fractions)."""
        objects = dict(zip(map(id, self.a), self.a))
        objects.update(zip(map(id, self.b), self.b))
        return objects

    @functools.cached_property
    def ints(self) -> tuple:
        """Both columns in units of 1/scale: ``(a, b)``, each object converted once."""
        if all(type(x) is int for x in self._objects.values()):    # ints already: no copy
            return self.a, self.b
        scale = self.scale                    # a multiple of every denominator: exact
        scaled = {key: top * (scale // bottom) for key, (top, bottom) in self._ratios.items()}
        return tuple(map(scaled.__getitem__, map(id, self.a))), \
            tuple(map(scaled.__getitem__, map(id, self.b)))

    @functools.cached_property
    def mean_a(self) -> Fraction:
        return Fraction(sum(self.ints[0]), self.n * self.scale)

    @functools.cached_property
    def mean_b(self) -> Fraction:
        return Fraction(sum(self.ints[1]), self.n * self.scale)

    @functools.cached_property
    def units(self) -> Units:
        """What one bootstrap draw picks: an item, or with clusters a whole cluster."""
        a, b = self.ints
        if self.clusters is None:
            units_a, units_b, sizes = a, b, (1,) * self.n
            unit_strata = self.strata
        else:
            index = {label: u for u, label in enumerate(dict.fromkeys(self.clusters))}
            if len(index) < 2:
                raise ToolError(f"need at least 2 clusters to resample, got {len(index)}")
            sums_a, sums_b, sizes = [0] * len(index), [0] * len(index), [0] * len(index)
            unit_strata = [None] * len(index) if self.strata is not None else None
            for i, label in enumerate(self.clusters):
                u = index[label]
                sums_a[u] += a[i]
                sums_b[u] += b[i]
                sizes[u] += 1
                if unit_strata is not None:
                    if unit_strata[u] is not None and unit_strata[u] != self.strata[i]:
                        raise ToolError(f"cluster {label!r} spans strata {unit_strata[u]!r} "
                                        f"and {self.strata[i]!r}; a cluster must lie in one")
                    unit_strata[u] = self.strata[i]
            units_a, units_b, sizes = tuple(sums_a), tuple(sums_b), tuple(sizes)
        groups = None
        if unit_strata is not None:
            members = {}
            for u, label in enumerate(unit_strata):
                members.setdefault(label, []).append(u)
            for label, units in members.items():
                if len(units) < 2:
                    what = "cluster" if self.clusters is not None else "item"
                    raise ToolError(f"stratum {label!r} has one {what}; resampling within it "
                                    "can only repeat it (merge it with another stratum)")
            groups = tuple(tuple(units) for units in members.values())
        return Units(units_a, units_b, sizes, groups, self.clusters is not None)

    def cells(self) -> Cells:
        """The 2x2 table of counts (0/1 scores only)."""
        ints_a, ints_b = self.ints
        both, a, b = sum(map(operator.and_, ints_a, ints_b)), sum(ints_a), sum(ints_b)
        return Cells(both, a - both, b - both, self.n - a - b + both)


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] with exact end points, in its unit: ``"pts"`` for a
    proportion or a gap between proportions (printed x100), ``"score"`` for other scores.

    >>> print(Interval(Fraction(-14, 1000), Fraction(84, 1000)), Interval(1, 2, "score"))
    [-1.4, +8.4] pts [+1.000, +2.000]
    """

    lo: Fraction
    hi: Fraction
    unit: str = "pts"
    places: int | None = dataclasses.field(   # decimals its Monte Carlo ends hold (None: as
        default=None, repr=False, compare=False)   # printed), a way to print, not a value
    reach: tuple | None = dataclasses.field(    # ... and where each lies in 99 runs of 100,
        default=None, repr=False, compare=False)   # (low, high): one reaching 0 may be 0

    def __contains__(self, value) -> bool:
        return self.lo <= value <= self.hi

    def excludes_zero(self) -> bool:
        """Whether 0 lies outside, past a Monte Carlo end's error (``_signs_held``)."""
        lo, hi = _signs_held(self)
        return self.lo > 0 and lo or self.hi < 0 and hi

    def __str__(self) -> str:
        return _format_interval(self, self.unit == "pts")

    def score_places(self, places: int = 3, point=None) -> int:
        """The decimals of its ends as scores: *places*, fewer for a wide one
        (``_width_places``), no more than Monte Carlo ends hold; of a *point* beside it, as
        many or up to two more, so that it never prints as an end it is not (0.66 beside
        [0.4, 1] is 0.7, not 1)."""
        places = _width_places(self.hi - self.lo, places)
        if self.places is not None:             # (held in points: two decimals more here)
            places = min(places, self.places + 2 * (self.unit == "pts"))
        places = next((places + extra for extra in range(_APART) if self.lo == self.hi or
                       _format_score(self.lo, places + extra) !=
                       _format_score(self.hi, places + extra)), places)   # unequal: apart
        return places if point is None else next(
            (places + extra for extra in range(2) if all(
                point == end or Fraction(_format_score(point, places + extra)) !=
                Fraction(_format_score(end, places)) for end in (self.lo, self.hi))), places + 2)

    def as_proportions(self, places: int = 3) -> str:
        places = self.score_places(places)
        return f"[{_format_score(self.lo, places)}, {_format_score(self.hi, places)}]"

    def to_json(self) -> list:
        return [float(self.lo), float(self.hi)]


def _run_mean(values) -> object:
    """The exact mean of one item's scores over runs (an int when it is one)."""
    total = sum(values)
    if len(values) == 1:
        return total
    mean = Fraction(total, len(values))
    return mean.numerator if mean.denominator == 1 else mean


# --- Designs and the resampling settings ---

@dataclass(frozen=True)
class Design:
    """How the items were resampled, and what clustering does to the precision."""

    clusters: int | None = None          # number of clusters (None: items resampled)
    mean_size: float = 1.0
    icc: float | None = None             # intra-cluster correlation of the paired differences
    strata: tuple | None = None          # stratum sizes, in units, first-appearance order

    @property
    def design_effect(self) -> float | None:
        """Kish's variance inflation ``1 + (m - 1) * icc`` for clusters of mean size m."""
        return None if self.icc is None else 1 + (self.mean_size - 1) * self.icc

    def to_json(self) -> dict:
        return {"clusters": self.clusters, "mean_cluster_size": self.mean_size,
                "icc": self.icc, "design_effect": self.design_effect,
                "strata": None if self.strata is None else list(self.strata)}


def _design_of(scores: Scores) -> Design | None:
    """The design summary of clustered or stratified scores (None for plain items), with the
    one-way ANOVA estimate of the intra-cluster correlation of B - A per item."""
    units = scores.units
    if units.simple:
        return None
    strata = None if units.strata is None else tuple(len(group) for group in units.strata)
    if not units.clustered:
        return Design(strata=strata)
    a, b = scores.ints
    groups = {}
    for label, x, y in zip(scores.clusters, a, b):
        groups.setdefault(label, []).append(y - x)
    count, k, icc = scores.n, len(groups), None
    if count > k:                       # else every cluster is one item: no ICC
        grand = (sum(b) - sum(a)) / count
        between = math.fsum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups.values())
        within = math.fsum((x - sum(g) / len(g)) ** 2 for g in groups.values() for x in g)
        msb, msw = between / (k - 1), within / (count - k)
        n0 = (count - sum(len(g) ** 2 for g in groups.values()) / count) / (k - 1)
        denominator = msb + (n0 - 1) * msw
        icc = None if denominator == 0 else (msb - msw) / denominator
    return Design(units.count, scores.n / units.count, icc, strata)


@dataclass(frozen=True)
class Settings:
    """How a comparison is resampled and judged -- one record, checked when it is made.

    ``interval`` is the rule for every interval (percentile, basic, bca, or score:
    Wilson for one accuracy, Newcombe's hybrid score for a gap); ``accuracy_interval``
    may replace it for the per-system accuracies; ``calibration`` is the number of
    simulated tables on which the chosen interval is measured (0/1 items; 0: none).

    >>> Settings(interval="BCa")
    Traceback (most recent call last):
    ...
    bootstrap_eval_deltas.ToolError: interval must be one of percentile, basic, bca, score; got 'BCa'
    """

    resamples: int | None = None        # None: exact or saddlepoint where they apply
    confidence: Fraction = CONFIDENCE
    interval: str = "percentile"
    engine: str = "auto"
    permutations: int | None = None     # None: exact, or the saddlepoint where it applies
    exact: bool = False
    accuracy_interval: str = "same"
    calibration: int = CALIBRATION_REPLAYS
    margin: Fraction | None = None      # a release gate's margin (None: no gate)
    adjust: str = "holm"                # how p is adjusted across a family: ADJUSTMENTS

    def __post_init__(self):
        object.__setattr__(self, "confidence", Fraction(self.confidence))
        for name, allowed in (("interval", INTERVALS), ("engine", _ENGINE_CHOICES),
                              ("accuracy_interval", _ACCURACY_INTERVALS),
                              ("adjust", ADJUSTMENTS)):
            if getattr(self, name) not in allowed:
                raise ToolError(f"{name} must be one of {', '.join(allowed)}; got "
                                f"{getattr(self, name)!r}")
        for name, low, high in (("resamples", 1, MAX_RESAMPLES),
                                ("permutations", 1, MAX_PERMUTATIONS),
                                ("calibration", 0, MAX_REPLAYS)):
            value = getattr(self, name)
            if value is None and name in ("resamples", "permutations"):
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ToolError(f"{name} must be a whole number from {low} to {high:,}; "
                                f"got {value!r}")
        if not (0 < self.confidence <= MAX_CONFIDENCE):
            raise ToolError(f"confidence must lie above 0 and at most "
                            f"{_format_decimal(MAX_CONFIDENCE)} (a higher level's tails are too "
                            f"thin to resolve); got {_format_decimal(self.confidence)}")


def _settings_of(settings: Settings | None, options: dict) -> Settings:
    """The one Settings record of a library call: given whole, or made from keywords."""
    if settings is not None and options:
        raise ToolError(f"give Settings or keywords, not both ({', '.join(options)})")
    return settings if settings is not None else Settings(**options)


# === Sources and files: the simulator, the user's files, files written ===
#
# The simulator draws from the stream it is given, in the article's order.
# Every reader streams its input through _CheckedReader, which hashes the raw
# bytes (the report's SHA-256 is of the file exactly as it is on disk) and
# refuses, at C speed per 64 KiB chunk, what cannot be a text table: NUL bytes,
# invalid UTF-8, a line longer than MAX_LINE_BYTES.  A UTF-8 byte-order mark
# and CRLF line ends are read as what they are.  Files are always closed
# (``with _InputFile(...)``).  No reader draws from the random stream.  Files
# the tool writes are written atomically (a temporary file in the target's
# folder, then os.replace), never over an input.

# --- The simulator: the article's Gaussian copula, clusters and runs ---

def simulate_scores(rng: random.Random, n_items: int, corr, acc_a, acc_b, progress=None) -> Scores:
    """Simulate *n_items* items scored 0/1 by two systems with correlated errors.

    Exactly the article's listing: for each item a shared difficulty
    ``d = gauss(0, 1)`` and two latent scores ``za = corr*d + w*gauss(0, 1)``,
    ``zb = corr*d + w*gauss(0, 1)`` with ``w = sqrt(1 - corr**2)``; a system
    is correct when its latent score is below ``NormalDist().inv_cdf(acc)``,
    so each hits its accuracy while the two share difficulty (their latent
    correlation is corr**2).

    >>> s = simulate_scores(random.Random(1), 5, 0.6, 0.72, 0.76)
    >>> s.a, s.b
    ((0, 1, 1, 1, 1), (0, 1, 1, 1, 1))
    """
    corr = float(corr)
    w = math.sqrt(1 - corr ** 2)
    za_cut, zb_cut = NormalDist().inv_cdf(float(acc_a)), NormalDist().inv_cdf(float(acc_b))
    gauss, a, b = rng.gauss, [], []
    for i in range(n_items):
        if progress is not None and i & 0xFFFF == 0 and i:
            progress(i, n_items)
        d = gauss(0, 1)
        za = corr * d + w * gauss(0, 1)
        zb = corr * d + w * gauss(0, 1)
        a.append(int(za < za_cut))
        b.append(int(zb < zb_cut))
    return Scores(tuple(a), tuple(b))


def simulate_clustered(rng: random.Random, n_items: int, corr, acc_a, acc_b, cluster_size: int,
                       icc) -> Scores:
    """Items in clusters of *cluster_size* (the last may be smaller).  Each latent part
    of the listing (d, each system's noise) is ``sqrt(icc)*cluster + sqrt(1-icc)*item``,
    still N(0, 1): the listing's accuracies and cells, but a cluster's items (and B - A)
    move together.  Draws: per cluster d, A's, B's noise; per item three more.

    >>> s = simulate_clustered(random.Random(1), 6, 0.6, 0.72, 0.76, 3, 0.5)
    >>> s.clusters
    (0, 0, 0, 1, 1, 1)
    """
    corr, icc = float(corr), float(icc)
    w, shared, own = math.sqrt(1 - corr ** 2), math.sqrt(icc), math.sqrt(1 - icc)
    za_cut, zb_cut = NormalDist().inv_cdf(float(acc_a)), NormalDist().inv_cdf(float(acc_b))
    gauss, a, b, clusters = rng.gauss, [], [], []
    for start in range(0, n_items, cluster_size):
        u, v_a, v_b = gauss(0, 1), gauss(0, 1), gauss(0, 1)
        for _ in range(min(cluster_size, n_items - start)):
            d = shared * u + own * gauss(0, 1)
            za = corr * d + w * (shared * v_a + own * gauss(0, 1))
            zb = corr * d + w * (shared * v_b + own * gauss(0, 1))
            a.append(int(za < za_cut))
            b.append(int(zb < zb_cut))
            clusters.append(start // cluster_size)
    return Scores(tuple(a), tuple(b), clusters=tuple(clusters))


def _run_shift_sd(run_sd: float, acc: float) -> float:
    """tau, the sd of the threshold shift that gives an accuracy sd of about run_sd."""
    u = float(run_sd) / NormalDist().pdf(NormalDist().inv_cdf(float(acc)))
    if u >= 1:
        raise ToolError(f"{_opt('run_sd')} {float(run_sd):g} is too large for an accuracy of "
                        f"{float(acc):g}")
    return u / math.sqrt(1 - u * u)


def simulate_runs(rng: random.Random, n_items: int, copula) -> Scores:
    """Items scored by both systems in several runs (seeds) each: per item d, u_A, u_B;
    per system and run a threshold shift rho ~ N(0, tau^2) (tau: an accuracy sd of about
    ``run_sd``) and fresh noise v, ``z = corr*d + w*(sqrt(1-k)*u + sqrt(k)*v)``, k =
    ``run_item_noise``; correct when ``z < Phi^-1(acc)*sqrt(1 + tau^2) + rho``, so the
    expected accuracy is exactly acc.  Draws: d, u_A, u_B; A's runs (rho, v), then B's."""
    corr, k, gauss = float(copula.corr), float(copula.run_item_noise), rng.gauss
    w, own, fresh = math.sqrt(1 - corr ** 2), math.sqrt(1 - k), math.sqrt(k)
    fixed = [(gauss(0, 1), gauss(0, 1), gauss(0, 1)) for _ in range(n_items)]
    systems = []
    for which, acc in ((1, copula.acc_a), (2, copula.acc_b)):
        tau = _run_shift_sd(float(copula.run_sd), float(acc))
        cut = NormalDist().inv_cdf(float(acc)) * math.sqrt(1 + tau * tau)
        runs = []
        for run in range(copula.runs):
            shift = gauss(0, 1) * tau
            runs.append((run + 1, tuple(int(corr * item[0] + w * (
                own * item[which] + fresh * gauss(0, 1)) < cut + shift) for item in fixed)))
        systems.append(tuple(runs))
    means = [tuple(map(lambda *v: _run_mean(v), *(c for _, c in runs))) for runs in systems]
    return Scores(means[0], means[1], runs_a=systems[0], runs_b=systems[1])


@dataclass(frozen=True)
class Copula:
    """The article's simulator: two 0/1 systems whose errors share item difficulty.

    ``corr`` is each latent score's loading on the shared difficulty (the
    systems' latent correlation is corr**2); ``acc_a`` and ``acc_b`` are the
    true accuracies, kept exact so that the true gap is exact.
    """

    corr: Fraction
    acc_a: Fraction
    acc_b: Fraction
    cluster_size: int = 1          # items per cluster (1: the article's independent items)
    icc: Fraction = Fraction(0)    # within-cluster correlation of every latent score
    runs: int = 1                  # runs (seeds) per system
    run_sd: Fraction = Fraction(0)         # sd of a system's accuracy from run to run
    run_item_noise: Fraction = Fraction(3, 10)   # share of the own noise redrawn per run

    @property
    def true_gap(self) -> Fraction:
        return Fraction(self.acc_b) - Fraction(self.acc_a)

    @property
    def clustered(self) -> bool:
        return self.cluster_size > 1

    def simulate(self, rng: random.Random, n_items: int, progress=None) -> Scores:
        if self.runs > 1:
            return simulate_runs(rng, n_items, self)
        if not self.clustered:
            return simulate_scores(rng, n_items, self.corr, self.acc_a, self.acc_b, progress)
        return simulate_clustered(rng, n_items, self.corr, self.acc_a, self.acc_b,
                                  self.cluster_size, self.icc)

    @functools.cached_property
    def cells(self) -> Cells:
        """Cell probabilities of one item, by integrating over the shared difficulty.

        ``P(both right) = integral of phi(d) Phi((za - c d)/w) Phi((zb - c d)/w)``;
        the trapezoid rule on a smooth Gaussian-weighted integrand converges
        geometrically, and the step is halved until two estimates agree to
        1e-13.  The other cells follow from the accuracies.

        >>> cells = Copula(CORR, ACC_A, ACC_B).cells
        >>> round(cells.both, 12), round(cells.b_only - cells.a_only, 12)
        (0.588152799524, 0.04)
        """
        corr, acc_a, acc_b = float(self.corr), float(self.acc_a), float(self.acc_b)
        normal = NormalDist()
        cut_a, cut_b = normal.inv_cdf(acc_a), normal.inv_cdf(acc_b)
        w = math.sqrt(1 - corr * corr)
        cdf = normal.cdf
        half_range = 12.0                         # phi(12) < 1e-31

        def trapezoid(step):
            count = int(half_range / step)
            total = 0.0
            for i in range(-count, count + 1):
                d = i * step
                both = cdf((cut_a - corr * d) / w) * cdf((cut_b - corr * d) / w)
                total += math.exp(-d * d / 2) * both
            return total * step / math.sqrt(2 * math.pi)

        step, estimate, finer = 0.125, None, trapezoid(0.125)
        while estimate is None or abs(finer - estimate) >= 1e-13 and step >= 1e-4:
            step, estimate = step / 2, finer
            finer = trapezoid(step)
        both = min(max(finer, 0.0, acc_a + acc_b - 1), acc_a, acc_b)   # a rounding step apart
        return Cells(both, acc_a - both, acc_b - both, max(0.0, 1 - acc_a - acc_b + both))

    def simulate_cells(self, rng: random.Random, n_items: int) -> Cells:
        """The cell counts of n simulated items: one multinomial draw (the counts engine)."""
        return Cells(*multinomial_variate(rng, n_items, self.cells.as_tuple()))


class _Missing:
    """The marker for an absent or empty score, id or label (never None, which is data)."""

    def __repr__(self) -> str:
        return "MISSING"


_MISSING = _Missing()
_ABSENT = _Missing()                         # a JSON key the record does not have
_BATCH = object()                            # marks a batch of clean rows in a row stream
_BINARY_TEXT = {"0": 0, "1": 1, "true": 1, "false": 0, "True": 1, "False": 0,
                "TRUE": 1, "FALSE": 0}
_FLOAT_ID = re.compile(r"[0-9]{1,18}\.0*", re.ASCII)     # an integer id written as a float
_MAGIC = (                                   # (leading bytes, what the file is)
    (b"PK\x03\x04", "zip"),
    (b"PAR1", "a Parquet file"),
    (b"\x1f\x8b", "a gzip-compressed file (decompress it first, e.g. with gunzip)"),
    (b"BZh", "a bzip2-compressed file (decompress it first)"),
    (b"\xfd7zXZ\x00", "an xz-compressed file (decompress it first)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive (unpack it first)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel (.xls) or Office file (save it as CSV)"),
    (b"%PDF", "a PDF document"),
    (b"SQLite format 3\x00", "an SQLite database (export the table as CSV)"),
    (b"\x89HDF", "an HDF5 file (export it as CSV)"),
    (b"\x93NUMPY", "a NumPy array file (save it as CSV)"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)


class _Closing:
    """A context manager that closes itself on exit."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Input(_Closing):
    """A context manager reading one input (``path``): closed on exit, a MemoryError inside
    said as the input's size (main()'s advice is for resampling)."""

    def __exit__(self, kind, error, trace) -> None:
        self.close()
        if kind is not None and issubclass(kind, MemoryError):
            raise ToolError(f"{_printable(self.path)} is too big to read in the memory this "
                            "process may use (ulimit -v, or the machine's): give it more, or "
                            "a smaller input") from None


class _CheckedReader(io.RawIOBase):
    """A raw binary stream that hashes every chunk it passes on and checks it as text
    (see above); the line limit keeps an endless line (/dev/zero's) from growing memory."""

    def __init__(self, raw, path: str, progress=None):
        self.raw, self.path, self.line_limit = raw, path, MAX_LINE_BYTES
        self.progress, self.total = progress, 0
        if progress is not None:
            try:
                info = os.fstat(raw.fileno())
                self.total = info.st_size if stat.S_ISREG(info.st_mode) else 0
            except (OSError, ValueError, AttributeError):
                pass
        self.sha = hashlib.sha256()
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.lines = 0                      # newlines before the current chunk
        self.open_line = 0                  # bytes of the line still open after them
        self.binary = False                 # an archive: hashed, not checked as text
        self.deferred = []                  # chunks read before the format was known
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            count = self.raw.readinto(buffer) or 0
        except OSError as err:                  # a failing disk or mount, /proc/self/mem
            raise ToolError(f"cannot read {self.path}: {err.strerror or err}") from None
        chunk = bytes(memoryview(buffer)[:count])
        self.sha.update(chunk)
        if self.total:
            self.size += count
            self.progress(min(self.size, self.total), self.total)
        if self.deferred is not None:           # the head: checked once the format is known
            self.deferred.append(chunk)
        elif not self.binary:
            self.check(chunk)
        return count

    def start(self, binary: bool) -> None:
        """The format is known: check the chunks read so far as text, or stop checking."""
        chunks, self.deferred, self.binary = self.deferred or [], None, binary
        if not binary:
            for chunk in chunks:
                self.check(chunk)

    def check(self, chunk: bytes) -> None:
        count = len(chunk)
        if b"\0" in chunk:
            line = self.lines + chunk.count(b"\n", 0, chunk.index(b"\0")) + 1
            raise ToolError(f"{self.path} line {line}: a NUL byte; this is a binary file, not "
                            "a text table")
        first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
        longest = self.open_line + (count if first < 0 else first)
        if longest > self.line_limit:
            raise ToolError(f"{self.path} line {self.lines + 1} is longer than "
                            f"{self.line_limit // (1 << 20)} MiB, the longest line the tool reads")
        self.open_line = longest if first < 0 else count - last - 1
        try:
            self.utf8.decode(chunk, final=count == 0)
        except UnicodeDecodeError as err:
            line = self.lines + chunk.count(b"\n", 0, max(0, min(err.start, count))) + 1
            raise ToolError(f"{self.path} line {line}: not UTF-8 text") from None
        self.lines += chunk.count(b"\n")
        if self.lines > MAX_INPUT_LINES:            # an endless stream: memory stays bounded
            raise ToolError(f"{self.path} has more than {MAX_INPUT_LINES:,} lines, the most "
                            "the tool reads from one input")


class _CollectorPaused(_Closing):
    """The cyclic garbage collector paused while one file is read, then set back as it was:
    a read makes millions of objects and no cycles, and each full collection walks all of
    them (0.6 s of a 10^6-row read)."""

    def __init__(self):
        self.enabled = gc.isenabled()
        gc.disable()

    def close(self) -> None:
        if self.enabled:
            gc.enable()


class _InputFile(_Input):
    """One input (a path, or ``-`` for stdin) opened for checked reading, as a context
    manager: ``head`` its first bytes, ``text`` (set by the reader) the decoded text."""

    def __init__(self, path: str, progress=None):
        self.path, self.owned = "<stdin>" if path == "-" else path, path != "-"
        if path == "-":
            self.raw = getattr(sys.stdin, "buffer", None)
            if self.raw is None or self.raw.closed:
                raise ToolError("cannot read stdin: it is closed")
        else:
            try:
                self.raw = open(path, "rb")
            except OSError as err:
                raise ToolError(f"cannot read {_printable(path)}: {err.strerror}") from None
        self.checked = _CheckedReader(self.raw, _printable(self.path), progress=progress)
        self.buffer = io.BufferedReader(self.checked, buffer_size=1 << 16)
        try:
            self.head = self.buffer.peek(64)[:64]
        except BaseException:
            self.close()
            raise
        self.text = None

    def close(self) -> None:
        if self.owned:
            self.raw.close()
            self.owned = False

    def finish(self) -> str:
        """Read to the end (for the hash) and return the SHA-256 of the raw bytes."""
        while self.buffer.read(1 << 16):
            pass
        return self.checked.sha.hexdigest()


def _read_at_most(handle, limit: int, sized=None):
    """At most *limit* + 1 bytes (characters) of a stream (more than *limit*: refused).

    Asked for as the file's size where ``fstat`` of *sized* (default *handle*) gives one, else
    in 16 MiB pieces: one read of the whole bound reserves it first (1 GiB for a 2 KB file,
    'out of memory' under a memory cap such as ``ulimit -v``).

    >>> _read_at_most(io.BytesIO(b"abcdef"), 3), _read_at_most(io.BytesIO(b"ab"), 3)
    (b'abcd', b'ab')
    """
    try:
        info = os.fstat((handle if sized is None else sized).fileno())
        piece = info.st_size + 1 if stat.S_ISREG(info.st_mode) else 1 << 24
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        piece = 1 << 24
    parts, total = [], 0
    while total <= limit and (part := handle.read(min(piece, limit + 1 - total))):
        parts.append(part)
        total += len(part)
    return parts[0][:0].join(parts) if parts else handle.read(0)


def _binary_kind(head: bytes) -> str | None:
    """What a file that is not text is, from its first bytes (None: maybe text).

    >>> _binary_kind(b"PAR1\\x15"), _binary_kind(b"item,a,b")
    ('a Parquet file', None)
    """
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)


def _text_kind(head: bytes) -> str:
    """The text format a file's first bytes suggest: "json" (a document), "jsonl" or "csv"."""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"{"):              # a document's "{" stands alone on its first line
        return "json" if text.split(b"\n", 1)[0].strip() == b"{" else "jsonl"
    return "json" if text.startswith(b"[") else "csv"


# --- JSON: exact numbers, limits, duplicate keys ---

class _JsonObject(dict):
    """A decoded JSON object that remembers keys it saw more than once."""

    duplicates = frozenset()

    @staticmethod
    def from_pairs(pairs) -> "_JsonObject":          # the decoder's hook
        obj = _JsonObject(pairs)
        if len(obj) != len(pairs):
            counts = collections.Counter(key for key, _ in pairs)
            obj = _JsonObjectTwice(pairs)
            obj.duplicates = frozenset(key for key, count in counts.items() if count > 1)
        return obj


class _JsonObjectTwice(_JsonObject):
    """One that saw a key more than once: it refuses to give that key's value (which copy
    would count?), whatever reader asks."""

    def __getitem__(self, key):
        if key in self.duplicates:         # (the file it is in is named by _read_file)
            error = ToolError(f"key {_shorten(str(key))} appears twice in one object")
            error.unplaced = True
            raise error
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        return self[key] if key in self else default


class _Unusable:
    """A JSON value kept only to be refused if a comparison uses it (NaN, a huge number)."""

    def __init__(self, text: str, reason: str):
        self.text, self.reason = text, reason

    def __repr__(self) -> str:
        return self.text


@functools.lru_cache(maxsize=1 << 16)          # one object per number text
def _json_number(text: str):
    try:
        return _parse_number(text)
    except ToolError as err:
        return _Unusable(text, str(err))


_JSON = json.JSONDecoder(
    object_pairs_hook=_JsonObject.from_pairs, parse_float=_json_number,
    parse_int=lambda text: int(text) if len(text) <= MAX_NUMBER_CHARS else _json_number(text),
    parse_constant=lambda name: _Unusable(name, f"{name} is not a finite number"))
_JSON_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?')    # an unclosed one runs to the end
_JSON_BRACKETS = re.compile(r"[\[\]{}]")
_JSON_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _json_weight(text: str) -> int:
    """What parsing *text* costs, in values: each comma or colon starts one, each array or
    object counts 8 (a container takes about eight numbers' memory); see _decode_json."""
    return text.count(",") + text.count(":") + 8 * (text.count("[") + text.count("{"))


def _whole_json(f, shown: str) -> str:
    """A JSON document's text, read whole: no line limit, at most MAX_ARCHIVE_BYTES
    characters (an endless stream on stdin is refused, not read until memory runs out)."""
    f.checked.line_limit = 1 << 62
    text = _read_at_most(f.text, MAX_ARCHIVE_BYTES, f.raw)
    if len(text) > MAX_ARCHIVE_BYTES:
        raise ToolError(f"{shown} is a JSON document of more than 1 GiB, the most the tool "
                        "reads whole; write it as JSON lines (a record a line)")
    return text


def _decode_json(text: str, where: str):
    """One JSON value, numbers exact; NaN and oversized numbers kept as _Unusable.

    A text nested deeper than MAX_JSON_DEPTH, or weighing more than MAX_JSON_VALUES values
    (``_json_weight``: at most about 160 bytes each once parsed; a text of small numbers or
    single-key objects takes 9 to 75 times its size), is refused.  Counted at C speed on the
    whole text first; outside its strings, piece by piece (no copy of the text), only when
    that count could be over.

    >>> _decode_json('{"a": 0.1, "b": NaN}', "x")
    {'a': Fraction(1, 10), 'b': NaN}
    """
    deep = text.count("[") + text.count("{") > MAX_JSON_DEPTH
    if deep or _json_weight(text) >= MAX_JSON_VALUES:
        weight = depth = end = 0
        for match in itertools.chain(_JSON_STRINGS.finditer(text), [None]):
            piece = text[end:] if match is None else text[end:match.start()]   # between strings
            end = end if match is None else match.end()
            weight += _json_weight(piece)
            if weight >= MAX_JSON_VALUES:
                raise ToolError(f"{where}: a JSON value of more than {MAX_JSON_VALUES:,} values "
                                "(an array or object counting as 8), the most the tool parses "
                                "at once (JSON lines are read a line at a time)")
            brackets = _JSON_BRACKETS.findall(piece) if deep else ()
            for step in map(_JSON_STEP.__getitem__, brackets):
                depth += step
                if depth > MAX_JSON_DEPTH:
                    raise ToolError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels, "
                                    "the deepest the tool reads")
    try:
        return _JSON.decode(text)
    except RecursionError:
        raise ToolError(f"{where}: JSON nested deeper than the tool reads") from None
    except json.JSONDecodeError as err:
        raise ToolError(f"{where}: not valid JSON ({err.msg})") from None


def _lookup_key(record: dict, key: str, where: str = ""):
    """A JSON field by name or dotted path (``metrics.acc``), else _ABSENT; a repeated key,
    or a name both a key and a path, is refused only when the comparison uses it."""
    nested = record
    for part in key.split("."):
        if not isinstance(nested, dict) or part not in nested:
            nested = _ABSENT
            break
        if part in nested.duplicates:
            raise ToolError(f"{where}: key {_shorten(part)} appears twice in one object")
        nested = nested[part]
    if key in record:
        if "." in key and nested is not _ABSENT:
            raise ToolError(f"{where}: {_shorten(key)} is both a key and a nested path; "
                            "rename one of them")
        if key in record.duplicates:
            raise ToolError(f"{where}: key {_shorten(key)} appears twice in one object")
        return record[key]
    return nested


def _flat_keys(record: dict, limit: int = 40) -> list:
    """A JSON object's keys in order, nested ones dotted (``["id", "metrics.f1"]``), at
    most *limit* of them (no recursion: any depth is safe)."""
    keys, stack = [], [("", iter(record.items()))]
    while stack and len(keys) < limit:
        prefix, items = stack[-1]
        entry = next(items, None)
        if entry is None:
            stack.pop()
        elif isinstance(entry[1], dict) and entry[1]:
            stack.append((f"{prefix}{entry[0]}.", iter(entry[1].items())))
        else:
            keys.append(_printable(prefix + str(entry[0])))
    return keys


def parse_score(value, where=""):
    """An exact score from a cell's text or a JSON value: 0/1, true/false or a finite real;
    MISSING for an empty cell or null.  *where* (text, or a function) names the place.

    >>> parse_score("0.75"), parse_score("true"), parse_score("2e-1"), parse_score(" ")
    (Fraction(3, 4), 1, Fraction(1, 5), MISSING)
    """
    if isinstance(value, str):
        quick = _BINARY_TEXT.get(value)
        if quick is not None:
            return quick
        text = value.strip()
        if not text:
            return _MISSING
        quick = _BINARY_TEXT.get(text.lower() if len(text) <= 5 else text)
        if quick is not None:
            return quick
        try:
            number = _parse_number(text)
        except ToolError as err:
            problem = str(err)
        else:
            if number is not None:
                return number.numerator if number.denominator == 1 else number
            problem = f"{_shorten(value)} is not a " + (
                "finite number" if text.lower() in ("nan", "inf", "infinity", "-inf", "+inf",
                                                    "-infinity", "+infinity", "-nan", "+nan") else
                "number (scores are 0/1, true/false or finite reals)")
    elif value is None or value is _MISSING:
        return _MISSING
    elif isinstance(value, bool):
        return int(value)
    elif isinstance(value, (int, Fraction)):
        if max(len(str(abs(value.numerator))), len(str(value.denominator))) <= MAX_NUMBER_CHARS:
            return value.numerator if value.denominator == 1 else value
        problem = f"a number with more than {MAX_NUMBER_CHARS} digits, the longest the tool reads"
    else:
        problem = value.reason if isinstance(value, _Unusable) else \
            f"{_shorten(json.dumps(value, default=repr))} is not a number"
    raise ToolError(f"{where() if callable(where) else where}: {problem}")


def _json_default(value):
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, _Unusable):
        return value.text
    raise TypeError(type(value).__name__)


def _item_id(value):
    """An item id, the same whatever wrote it: "17", 17, " 17", 17.0 and "17.0" are one (pandas
    writes int ids as floats once a column holds a NaN); other values as exact text.

    >>> _item_id("17"), _item_id(Fraction(17)), _item_id("17.0"), _item_id(Fraction(3, 2))
    (17, 17, 17, '1.5')
    >>> _item_id("007"), _item_id(""), _item_id(True)
    ('007', MISSING, 'true')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else _format_decimal(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return _MISSING
        if text.isdigit() and text.isascii() and len(text) <= MAX_ID_DIGITS and (
                text[0] != "0" or text == "0"):
            return int(text)
        if _FLOAT_ID.fullmatch(text) and (text[0] != "0" or text.startswith("0.")):
            return int(text.split(".")[0])
        return text
    if value is None or value is _MISSING or value is _ABSENT:
        return _MISSING
    if isinstance(value, _Unusable):
        return value.text
    return json.dumps(value, sort_keys=True, default=_json_default)


# --- Row streams: CSV, JSON lines, JSON documents ---

@dataclass(frozen=True)
class _Fields:
    """What a reader takes from each row: score columns (or dotted JSON keys), the id
    column(s) (() row numbers, None ``item`` if the file has it), label columns."""

    scores: tuple | None         # None: every column but the ids and labels (a leaderboard)
    ids: tuple | None = None
    labels: tuple = ()
    table: bool = False          # one file with several systems: a harness log is refused
    text: bool = False           # the score columns hold predictions: read as labels are

    def resolve(self, available, has) -> tuple:
        """``(fields, id keys, keys used)``, the scores (if none are named) all that
        *available* holds but the ids and labels; *has* says if the file has ``item``."""
        id_keys = (("item",) if has("item") else ()) if self.ids is None else self.ids
        fields = self
        if self.scores is None:
            chosen = tuple(key for key in available if key not in id_keys + self.labels)
            if any(not str(key).strip() for key in chosen):
                raise ToolError(f"a column has no name; name it, or list the systems with "
                                f"{_opt('systems')}")
            if not chosen:
                raise ToolError("the file has no column besides the ids and labels to rank")
            fields = dataclasses.replace(self, scores=chosen)
        return fields, id_keys, id_keys + tuple(fields.scores) + tuple(fields.labels)


@dataclass(frozen=True)
class _RowStream:
    """Rows of one file as ``(where, id, values)``: values are the scores, then the labels.
    ``used`` names the columns read, ``available`` those the file offers."""

    format: str
    used: tuple
    available: tuple
    keyed: bool                  # ids come from the file (a repeated id is an error)
    rows: object                 # the iterator
    width: int = 2               # values per row: the scores, then the labels


def _sniff_delimiter(path: str, header: str) -> str:
    counts = {d: header.count(d) for d in (",", "\t", ";")}
    best = max(counts.values())
    found = [d for d, c in counts.items() if c == best]
    if best == 0 and (header.strip() in ("null", "true", "false")
                      or _NUMBER.fullmatch(header.strip())):
        raise ToolError(f"{path} holds the JSON value {_shorten(header.strip())}, not a table "
                        "or a list of records")
    if best == 0:
        raise ToolError(f"{path}: the header has one column; expected columns separated by "
                        "commas, tabs or semicolons")
    if len(found) > 1:
        raise ToolError(f"{path}: cannot tell the delimiter (as many commas as tabs or "
                        "semicolons in the header)")
    return found[0]


def _compose(parts):
    """One id from its parts: the part itself, or a tuple (MISSING if any part is)."""
    if len(parts) == 1:
        return parts[0]
    return _MISSING if _MISSING in parts else tuple(parts)


class _CsvRows:
    """The rows of one CSV file: each checked and parsed (``row``), or, for the plain wide
    file, a batch at a time (``batches``)."""

    def __init__(self, path, width, positions, names, label_positions, id_positions, text=False):
        self.path, self.width, self.positions, self.names = path, width, positions, names
        self.label_positions, self.id_positions = label_positions, id_positions
        self.single = id_positions[0] if len(id_positions) == 1 else None
        self.parse = _item_id if text else parse_score       # predictions, or scores
        self.seen = {} if text else dict(_BINARY_TEXT)   # one object per value text: cheap
        self.labels = {}                # label text -> label, read as ids are
        self.blank = None               # the first blank line, an error if a row follows

    def row(self, row, line):
        """``(line, id, values)`` of one row; None for a blank line (allowed at the end)."""
        if len(row) != self.width:
            if not row:
                self.blank = self.blank or line
                return None
            raise ToolError(f"{self.path} line {line}: {len(row)} fields, expected {self.width}")
        if self.blank:
            raise ToolError(f"{self.path} line {self.blank}: blank line")
        values = [self.seen.get(row[p]) for p in self.positions]
        if any(v is None for v in values):     # a new text: parse it, or name the place
            values = [parse_score(row[p], lambda name=name: f"{self.path} line {line}, "
                                                          f"column {_printable(name)}")
                      if self.parse is parse_score else self.parse(row[p])
                      for p, name in zip(self.positions, self.names)]
            if len(self.seen) < 1 << 16:
                self.seen.update(zip((row[p] for p in self.positions), values))
        values += [_item_id(row[p]) for p in self.label_positions]
        if not self.id_positions:
            return line, line, values
        return line, _compose([_item_id(row[p]) for p in self.id_positions]), values

    def rows(self, reader, batched: bool):
        """The rows, or with *batched* clean batches at C speed as ``(BATCH, ids, columns)``
        (integer ids checked by printing them back); a batch with anything else goes row by
        row through ``row``, which names the place."""
        try:                                    # row() gives None for a blank line
            if not batched:
                yield from filter(None, (self.row(row, reader.line_num) for row in reader))
                return
            get = operator.itemgetter(*self.positions)
            while True:
                start = reader.line_num
                batch = list(itertools.islice(reader, 4096))     # rows taken at a time
                if not batch:
                    return
                clean = self._clean(batch, get)
                if clean is not None:
                    yield (_BATCH,) + clean
                    continue
                lines = range(start + 1, reader.line_num + 1)      # each row's last line
                if len(lines) != len(batch):        # a field spans lines: count its breaks
                    line = start
                    lines = [line := line + 1 + sum(field.count("\n") for field in row)
                             for row in batch]
                yield from filter(None, map(self.row, batch, lines))
        except csv.Error as err:
            raise ToolError(f"{self.path} line {reader.line_num}: {_printable(str(err))}") \
                from None

    def _clean(self, batch, get):
        """``(ids, columns)`` of a batch every row of which is plain, else None."""
        if self.blank or set(map(len, batch)) != {self.width}:
            return None
        picked = map(get, batch) if len(self.positions) > 1 else ((row[self.positions[0]],)
                                                                  for row in batch)
        columns, parts = [], [(texts, self.seen, self.parse) for texts in zip(*picked)]
        parts += [([row[p] for row in batch], self.labels, _item_id) for p in self.label_positions]
        for texts, known, read in parts:                        # scores, then labels
            for text in set(texts).difference(known):          # each new text read once
                try:
                    value = read(text)
                except ToolError:
                    return None                                  # row by row names the place
                if value is _MISSING or len(known) >= 1 << 16:
                    return None
                known[text] = value
            columns.append(list(map(known.__getitem__, texts)))
        if self.single is None:
            return None
        texts = [row[self.single] for row in batch]
        try:
            ids = list(map(int, texts))
        except ValueError:
            return None
        if list(map(str, ids)) != texts or min(ids) < 0 or max(ids) >= 10 ** MAX_ID_DIGITS:
            return None
        return ids, columns


def _csv_rows(lines, path: str, fields: _Fields, delimiter: str | None = None) -> _RowStream:
    """Rows of a CSV (comma, tab or semicolon, sniffed from the header) from its lines."""
    header_line = next(lines, "")
    if header_line.lstrip().startswith(("{", "[")):
        raise ToolError(f"{path} looks like JSON: use {_opt('input_format', 'jsonl')} or "
                        f"{_opt('input_format', 'json')}")
    delimiter = delimiter or _sniff_delimiter(path, header_line)
    csv.field_size_limit(MAX_FIELD_CHARS)
    reader = csv.reader(itertools.chain([header_line], lines), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except csv.Error as err:
        raise ToolError(f"{path} line 1: {err}") from None
    where = {name: i for i, name in reversed(list(enumerate(header)))}   # its first position
    fields, id_keys, wanted = fields.resolve(header, where.__contains__)
    if len(fields.scores) > MAX_SYSTEMS:       # refused before its rows are read
        raise ToolError(f"{path}: {len(fields.scores):,} columns of scores; at most {MAX_SYSTEMS} "
                        f"systems are compared (name them with {_opt('systems')})")
    for name in wanted:
        if name not in where:
            comma = next((h for h in header if "," in h and name in h.split(",")), None)
            hint = "" if comma is None else f"; the column {_shorten(comma)} holds a comma: " + (
                "give the names as a list" if _SPELLING.get() == "python" else
                f"name it as {_shorten(comma.replace(',', chr(92) + ','))}")
            raise ToolError(f"{path}: no column {_shorten(name)} (columns: "
                            f"{_printable(', '.join(header))[:300]}){hint}")
    if len(where) != len(header):
        repeated = sorted(h for h, count in collections.Counter(header).items() if count > 1)
        raise ToolError(f"{path}: column {_shorten(repeated[0])} appears twice in the header")
    positions, label_positions, id_positions = (
        list(map(where.__getitem__, names)) for names in (fields.scores, fields.labels, id_keys))
    state = _CsvRows(path, len(header), positions, fields.scores, label_positions,
                     id_positions, fields.text)
    return _RowStream("csv", wanted, tuple(header), bool(id_keys),
                      state.rows(reader, bool(len(id_positions) <= 1 and positions)),
                      len(fields.scores) + len(fields.labels))


def _jsonl_records(f: _InputFile):
    """``(line, record)`` for each line of a JSON-lines file; trailing blank lines allowed."""
    path = _printable(f.path)
    blank = None
    for line, text in enumerate(f.text, start=1):
        if not text.strip():
            blank = blank or line
            continue
        if blank:
            raise ToolError(f"{path} line {blank}: blank line")
        record = _decode_json(text, f"{path} line {line}")
        if not isinstance(record, dict):
            raise ToolError(f"{path} line {line}: expected a JSON object")
        yield f"line {line}", record


def _document_records(value, path: str):
    """``(where, record)`` of a list of objects, or of an object holding exactly one."""
    if isinstance(value, dict):
        lists = [key for key, item in value.items()
                 if isinstance(item, list) and item and isinstance(item[0], dict)]
        if len(lists) != 1:
            raise ToolError(f"{path}: a JSON object; expected a list of records, or an object "
                            f"holding one (keys: {_printable(', '.join(map(str, value)))[:200]})")
        value = value[lists[0]]
    if not isinstance(value, list):
        raise ToolError(f"{path}: expected a list of records")
    yield from _numbered(value, path, "record")


def _numbered(items: list, path: str, what: str):
    """``(where, item)`` of a JSON list whose every item must be an object."""
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ToolError(f"{path} {what} {index}: expected a JSON object")
        yield f"{what} {index}", item


def _score(value, place: str, what: str, name, read=parse_score):
    """A JSON value read as a score (MISSING if _ABSENT); an error names *what* *name*."""
    if value is _ABSENT:
        return _MISSING
    return read(value, lambda: f"{place}, {what} {_printable(name)}")


def _record_rows(records, fields: _Fields, path: str, fmt: str) -> _RowStream:
    """Rows from JSON records (JSON lines, or a document's list)."""
    records = iter(records)
    first = next(records, None)
    if first is None:
        raise ToolError(f"{path} has no records")
    fields, id_keys, wanted = fields.resolve(tuple(first[1]),
                                             lambda key: _lookup_key(first[1], key) is not _ABSENT)

    def rows():
        for where, record in itertools.chain([first], records):
            place = f"{path} {where}"
            values = [_score(_lookup_key(record, key, place), place, "key", key)
                      for key in fields.scores]
            values += [_item_id(_lookup_key(record, key, place)) for key in fields.labels]
            item = _compose([_item_id(_lookup_key(record, key, place)) for key in id_keys]) \
                if id_keys else int(where.split()[-1])
            yield where, item, values

    return _RowStream(fmt, wanted, tuple(_flat_keys(first[1])), bool(id_keys), rows(),
                      len(fields.scores) + len(fields.labels))


# --- Collecting rows: missing and repeated ids, counted or refused ---

@dataclass(frozen=True)
class _Collected:
    """The rows of one file that are kept: ids, and per value position a column."""

    ids: list
    columns: list
    rows: int                    # rows read
    dropped: int                 # rows left out under --on-missing drop
    note: str                    # why, counted


def _first(items) -> str:
    shown = [_shorten(x) if isinstance(x, str) else _printable(str(x)) for x in items[:_SHOW_IDS]]
    return ", ".join(shown) + (", ..." if len(items) > _SHOW_IDS else "")


def _repeated_ids(ids) -> set:
    """The ids that appear more than once.  Dense non-negative integer ids (the common
    1..n) are checked with a bitmap, a byte per possible id, instead of a set; increasing
    ones (a file in id order) at C speed, by comparing neighbours."""
    try:
        if all(map(operator.lt, ids, itertools.islice(ids, 1, None))):
            return set()
    except TypeError:                           # ids of several types: no order
        pass
    if ids and (isinstance(ids, array.array) or all(type(i) is int for i in ids)):
        low, high = min(ids), max(ids)
        if low >= 0 and high < 16 * len(ids) + 1024:
            seen, twice = bytearray(high + 1), set()
            for i in ids:
                if seen[i]:
                    twice.add(i)
                seen[i] = 1
            return twice
    return {i for i, count in collections.Counter(ids).items() if count > 1}


def _collect(stream: _RowStream, path: str, width: int, on_missing: str) -> _Collected:
    """Keep every complete row; a missing score, id or label, or a repeated id, is an error
    quoting the first few, or with *on_missing* "drop" left out and counted in the note.
    Rows of one item each (one id, not a harness's or long file's (id, ...)) past
    MAX_N_ITEMS are refused as read: an endless stream stops there."""
    ids, columns = array.array("q"), [[] for _ in range(width)]
    missing, rows_read, many = [], 0, MAX_N_ITEMS if on_missing != "drop" else math.inf
    for where, item, values in stream.rows:
        if len(ids) > many and type(item) is not tuple:     # rows of one item each
            raise ToolError(f"{path} has more than {MAX_N_ITEMS:,} items (rows), the most the "
                            "tool compares")
        if where is _BATCH:                       # a batch of clean rows (the CSV fast path)
            rows_read += len(item)
            ids.extend(item)                      # ints below 10**18: an array or a list
            for column, part in zip(columns, values):
                column.extend(part)
            continue
        rows_read += 1
        no_id = item is _MISSING or type(item) is tuple and _MISSING in item
        if no_id or _MISSING in values:              # a harness row's item is (id, run)
            missing.append(where if no_id else item[0] if stream.format in (
                "lm-eval", "inspect", "helm") else item)
            continue
        try:
            ids.append(item)                   # integer ids: 8 bytes each, not 36
        except (TypeError, OverflowError):
            ids = list(ids)
            ids.append(item)
        for column, value in zip(columns, values):
            column.append(value)
    if rows_read == 0:
        raise ToolError(f"{path} has a header but no rows" if stream.format == "csv"
                        else f"{path} has no records")
    notes = []
    if missing:
        if len(missing) == rows_read and stream.format != "csv":
            absent = [key for key in stream.used if key not in stream.available]
            if absent:
                raise ToolError(f"{path}: no key {_shorten(absent[0])} (the first record has: "
                                f"{', '.join(stream.available)[:300]})")
        if on_missing != "drop":
            raise ToolError(f"{path}: {len(missing)} row(s) with a missing score, id or label "
                            f"(first: {_first(missing)}); fix them or use "
                            f"{_opt('on_missing', 'drop')}")
        notes.append(f"{len(missing):,} row(s) with a missing score, id or label")
    repeated = _repeated_ids(ids) if stream.keyed else set()
    if repeated:
        if on_missing != "drop":
            ordered = [item for item in dict.fromkeys(ids) if item in repeated]
            raise ToolError(f"{path}: {len(repeated)} id(s) appear more than once (first: "
                            f"{_first(ordered)}); ids must be unique, or use "
                            f"{_opt('on_missing', 'drop')}")
        keep = [i for i, item in enumerate(ids) if item not in repeated]
        notes.append(f"{len(ids) - len(keep):,} row(s) of {len(repeated):,} repeated id(s)")
        ids = [ids[i] for i in keep] if isinstance(ids, list) else \
            array.array("q", (ids[i] for i in keep))
        columns = [[column[i] for i in keep] for column in columns]
    return _Collected(ids, columns, rows_read, rows_read - len(ids), "; ".join(notes))


# --- Harness logs: lm-evaluation-harness, Inspect, HELM ---
#
# Each adapter turns a harness's own file into rows ``(where, (item, run),
# [score])`` -- the run is an Inspect epoch or a HELM trial, 1 otherwise --
# and says what it found: the system (model) name, the task, and the choices
# the file offered (metrics, filters, scorers), so that an ambiguous choice is
# refused with the list instead of being made silently.

@dataclass(frozen=True)
class _HarnessFile:
    """What an adapter found in one harness file."""

    format: str                  # "lm-eval", "inspect" or "helm"
    stream: _RowStream           # rows (where, (item, run), [score, input's fingerprint])
    system: str | None           # the model, as the harness names it
    task: str | None
    note: str = ""
    status: str = "success"      # the harness's own status (Inspect); "started": no header
    expected: int | None = None  # samples the run set out to write (dataset x epochs)
    held: int = 0                # samples it holds
    errors: tuple = ()           # items whose sample ended in an error (left out)
    filters: tuple = ()          # lm-eval: the filters the file offers
    claimed: tuple | None = None  # what its run's results say (_LmEvalClaim; Inspect: a mean)
    lower: tuple | None = None   # (metric, who says its lower values are better: the results
    #                              file, HELM's schema, "asked"): turned when joined (_turn)
    corpus: tuple | None = None  # lm-eval: (metric, positive) its [gold, prediction] pairs are for


_RESULTS_BYTES = 1 << 26        # the most read of an lm-eval results file (64 MiB)
_LM_EVAL_NAME = re.compile(r"samples_(.+)_(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$")
_INSPECT_VALUES = {"C": 1, "I": 0, "P": Fraction(1, 2), "N": 0, "yes": 1, "no": 0,
                   "true": 1, "false": 0}
_LM_EVAL_FIELDS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
                   "metrics", "doc_hash", "prompt_hash", "target_hash"}


def _typed(mapping: dict, key: str, kind, default=None):
    """``mapping[key]`` if it is a *kind*, else *default* (a harness file's optional parts)."""
    value = mapping.get(key)
    return value if isinstance(value, kind) else default


def _choose(offered, chosen, path: str, what: str, flag: str):
    """The one choice among *offered* (a list): *chosen* if given, the only one otherwise."""
    offered = list(dict.fromkeys(offered))
    if not offered:
        raise ToolError(f"{path}: the file offers no {what}")
    if chosen is not None and "," in chosen:         # several names: the first offered
        chosen = next((c.strip() for c in chosen.split(",") if c.strip() in offered),
                      chosen.split(",")[0].strip())
    if chosen is not None:
        if chosen not in offered:
            raise ToolError(f"{path}: no {what} {_shorten(chosen)} (the file offers: "
                            f"{_printable(', '.join(map(str, offered)))[:300]})")
        return chosen
    if len(offered) == 1:
        return offered[0]
    raise ToolError(f"{path} offers {len(offered)} choices of {what} "
                    f"({_printable(', '.join(map(str, offered)))[:300]}); choose one with {flag}")


def _one_system(kind: str, path: str, fields: _Fields):
    """The score named for a harness log (None if none), one system's run: not a table."""
    if fields.table:
        raise ToolError(f"{path} is {kind}: one system's run; compare two runs with: "
                        "compare BASELINE_LOG CANDIDATE_LOG")
    return fields.scores[0] if fields.scores else None


def _open_regular(path: str):
    """*path* opened for reading if it is a regular file; ToolError for a pipe, device or
    socket, which could block the open or never end (opened without blocking, then asked)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError(f"{_printable(path)} is not a regular file (a pipe, device or "
                            "socket); the tool reads regular files only")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _results_file(path: str, limit: int = _RESULTS_BYTES) -> dict | None:
    """An lm-eval results file (or HELM's schema), decoded: None when it cannot be read whole
    as a JSON object (it only adds to what the samples say, so it is never a reason to refuse
    them)."""
    try:
        with _open_regular(path) as handle:
            data = _read_at_most(handle, limit)
        results = _JSON.decode(data.decode("utf-8")) if len(data) <= limit else None
    except (OSError, ToolError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return results if isinstance(results, dict) else None


def _lm_eval_model(real_path: str | None) -> str | None:
    """The model of an lm-eval output folder: ``model_name`` in a results file beside the
    samples, else the folder's name when it is one (``org__model`` -> ``org/model``)."""
    if real_path is None:
        return None
    folder = os.path.dirname(real_path)
    try:
        results = sorted(name for name in os.listdir(folder)
                         if name.startswith("results_") and name.endswith(".json"))
    except OSError:
        return None
    for name in reversed(results):
        value = (_results_file(os.path.join(folder, name)) or {}).get("model_name")
        if isinstance(value, str) and value:
            return value
    return os.path.basename(folder).replace("__", "/") if results else None


# What an lm-eval run's results file says of one task's metric (None where it says nothing):
# its value and sample count, the few-shot count, whether lower is better (None: it does not
# say), the aggregation, the run's prompt settings (chat template, system instruction,
# few-shot as multi-turn; None in a file written before lm-eval recorded them), and the
# task's version.
_LmEvalClaim = collections.namedtuple(
    "_LmEvalClaim", "label value samples shots lower aggregation template version")


def _lm_eval_claim(real_path: str, match, metric: str, filter_name: str):
    """The _LmEvalClaim of the results file of the same run (beside the samples file, of the
    same time: *match* of its name) for this task, metric and filter; None without one."""
    task = match.group(1)
    results = _results_file(os.path.join(os.path.dirname(real_path),
                                         f"results_{match.group(2)}.json"))
    if results is None:
        return None
    label = f"{metric},{filter_name}"
    value, counts, shots, higher, config, version = (
        part.get(task) if isinstance(part, dict) else None for part in map(results.get, (
            "results", "n-samples", "n-shot", "higher_is_better", "configs", "versions")))
    listed = config.get("metric_list") if isinstance(config, dict) else None
    aggregation = next((entry.get("aggregation") for entry in listed if isinstance(entry, dict)
                        and entry.get("metric") == metric), None) \
        if isinstance(listed, list) else None
    value = value.get(label) if isinstance(value, dict) else None
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or abs(value) > 1e300:
        value = None
    samples = counts.get("effective") if isinstance(counts, dict) else None
    return _LmEvalClaim(label, None if value is None else float(value),
                        samples if type(samples) is int else None,
                        shots if type(shots) is int else None,
                        {True: False, False: True}.get(higher.get(metric)) if isinstance(
                            higher, dict) else None,
                        aggregation if isinstance(aggregation, str) else None,
                        tuple(str(results.get(key)) for key in (       # lm-eval 0.4.3+
                            "chat_template_sha", "system_instruction_sha", "fewshot_as_multiturn"))
                        if "chat_template_sha" in results else None,
                        None if version is None else _printable(str(version)))


def _lm_eval_file(records, path: str, real_path: str | None, fields: _Fields, filter_name,
                  lower: bool = False):
    """lm-evaluation-harness ``samples_<task>_<time>.jsonl``: one line per document per
    filter (``--filter``), the metric values as top-level keys (``--score-col``); lower values
    better where the run's results file says so, or, where it says nothing, *lower* asks."""
    named = _one_system("an lm-evaluation-harness samples file", path, fields)
    records = iter(records)
    first = next(records)                     # the caller has read one
    offered = _typed(first[1], "metrics", list, [])
    metric = _choose([m for m in offered if isinstance(m, str)] or
                     [k for k in first[1] if k not in _LM_EVAL_FIELDS],
                     named, path, "metric", _opt("metric"))        # lm-eval's own word
    by_filter = {}
    for where, record in itertools.chain([first], records):
        place = f"{path} {where}"
        name = _lookup_key(record, "filter", place)
        name = "none" if name is _ABSENT else str(name)
        doc = _item_id(_lookup_key(record, "doc_id", place))
        value = _lookup_key(record, metric, place)
        prompt = str(record.get("prompt_hash", ""))
        digest = _Fingerprint(str(record.get("doc_hash", prompt)),
                              str(record.get("target_hash", "")), prompt)
        by_filter.setdefault(name, []).append((where, doc, value, [digest] + _labels_of(
            record, fields.labels, place)))
    loose = filter_name is not None and filter_name.startswith("\0")   # a folder's tasks
    wanted = filter_name.lstrip("\0") if filter_name is not None else None
    if loose and len(by_filter) == 1 and not any(
            name.strip() in by_filter for name in wanted.split(",")):
        wanted = None                      # this task has one filter: the folder's is another's
    chosen = _choose(list(by_filter), wanted, path, "filter", _opt("filter"))
    match = _LM_EVAL_NAME.search(os.path.basename(real_path or ""))
    claimed = match and _lm_eval_claim(real_path, match, metric, chosen)
    aggregation = claimed and claimed.aggregation or _LM_EVAL_AGGREGATION.get(metric)
    if aggregation not in (None, "mean"):
        raise ToolError(f"{path}: lm-eval aggregates {_printable(metric)} by "
                        f"{_printable(aggregation)}" + ("" if claimed and claimed.aggregation
                                                        else " (its registry's default)") +
                        ", not as a mean of per-sample values (its per-sample values are its "
                        "inputs), so this tool cannot compare it; compare a per-sample metric "
                        "(such as acc), or per-item scores")
    pair = next((value for _, _, value, _ in by_filter[chosen] if value is not _ABSENT), None)
    corpus = isinstance(pair, list) and len(pair) == 2 and _lm_eval_corpus(metric, pair, path)
    recorded = claimed.lower if claimed else None
    if lower and recorded is False:
        raise ToolError(f"{path}: the run's results file says higher {_printable(metric)} is "
                        f"better (higher_is_better), which {_opt('lower_is_better', True)} "
                        "contradicts")
    lower = (metric, "the run's results file says" if recorded else "asked") \
        if recorded or lower else None

    if lower and corpus:
        raise ToolError(f"{path}: lower {_printable(metric)} is better, as {lower[1]}, and it "
                        "is a corpus metric, whose pairs are compared as given")

    def read(value, place):
        if not corpus:
            return parse_score(value, place)
        if not (isinstance(value, list) and len(value) == 2 and all(       # (gold, prediction)
                isinstance(v, (int, str, Fraction)) and not isinstance(v, bool) for v in value)):
            shown = json.dumps(value, default=_json_default)
            raise ToolError(f"{place()}: {_printable(shown)[:80]} is not a [gold, prediction] "
                            "pair of class names")
        return _item_id(value[0]), _item_id(value[1])

    rows = ((where, (doc, 1), [_score(value, f"{path} {where}", "key", metric, read)] + rest)
            for where, doc, value, rest in by_filter[chosen])
    notes = [f"lm-eval filter {chosen}"] if len(by_filter) > 1 else []
    if corpus:
        notes.append(f"lm-eval's {_printable(metric)}: a [gold, prediction] pair per sample, "
                     "the metric computed over all of them as the harness's registry does by "
                     "default (" + ("F1 of class 1, scikit-learn's f1_score" if corpus[0] ==
                                    "f1" else "scikit-learn's matthews_corrcoef") + ")" + (
                         "" if claimed else "; no results file beside the samples says the "
                         "task's own aggregation"))
    stream = _RowStream("lm-eval", ("doc_id", metric) + fields.labels,
                        tuple(_flat_keys(first[1])), True, rows, 2 + len(fields.labels))
    return _HarnessFile("lm-eval", stream, _lm_eval_model(real_path), match and match.group(1),
                        "; ".join(notes), filters=tuple(by_filter),
                        claimed=claimed, corpus=corpus or None, lower=lower)


# lm-eval's registry (lm_eval/api/metrics.py, 0.4): metrics aggregated otherwise than by a mean
# of their per-sample values, where a task's metric_list names no aggregation of its own.
_LM_EVAL_AGGREGATION = {"perplexity": "perplexity", "word_perplexity": "weighted_perplexity",
                        "byte_perplexity": "weighted_perplexity",
                        "bits_per_byte": "bits_per_byte", "brier_score": "brier_score"}


def _lm_eval_corpus(metric: str, pair: list, path: str) -> tuple:
    """(metric, positive) of the tool for lm-eval's corpus *metric*, or a refusal: of those
    whose per-sample value is a [gold, prediction] pair, f1 as its registry aggregates it
    (scikit-learn's f1_score, binary, class 1) and mcc (matthews_corrcoef).  Text metrics
    (bleu, chrf, ter) are sacrebleu's, over [references, prediction] texts, with its
    tokenisation: not recomputed here."""
    if metric in ("f1", "mcc") and not any(isinstance(v, (list, dict)) for v in pair):
        return (metric, 1 if metric == "f1" else None)
    if any(isinstance(v, (str, list)) for v in pair):
        held, why = ("[references, prediction] pair of texts", "that the harness computes with "
                     "sacrebleu's tokenisation (BLEU, chrF, TER), which this tool does not "
                     "recompute")
    else:
        held, why = "[gold, prediction] pair", "this tool does not know (it computes f1 and mcc)"
    raise ToolError(f"{path}: lm-eval's {_printable(metric)} holds a {held} per sample, for a "
                    f"metric of the whole corpus {why}; compare a per-sample metric (such as "
                    "acc), or per-item scores")


def _inspect_value(value, place: str):
    """An Inspect score value as a number, as Inspect's value_to_float reads it (C 1, P 0.5,
    I and N 0, yes/true 1, no/false 0); NaN (an unscored sample) is missing."""
    if isinstance(value, str):
        mapped = _INSPECT_VALUES.get(value, _INSPECT_VALUES.get(value.lower()))
        if mapped is not None:
            return mapped
    if isinstance(value, _Unusable) and value.text == "NaN":
        return _MISSING
    return parse_score(value, place)


# What identifies an item's test in a harness log, each a short digest ("": not recorded): what
# the model reads (an lm-eval document), what it is graded against, (lm-eval) the prompt built
# for it -- its few-shot examples, template and chat template -- and (HELM) the run's setup.
_Fingerprint = collections.namedtuple("_Fingerprint", "input target prompt setup",
                                      defaults=("", "", ""))
_UNPRINTED = _Fingerprint("")


def _digest(value) -> str:
    """A short fingerprint of an item's input (a prompt, a list of messages): of what the
    model reads, so a chat message's id, source and metadata -- new in every run -- are not
    part of it."""
    def read(part):
        if isinstance(part, dict):
            return {key: read(item) for key, item in part.items()
                    if key not in {"id", "source", "metadata", "internal"}}
        return [read(item) for item in part] if isinstance(part, list) else part
    text = value if isinstance(value, str) else json.dumps(read(value), sort_keys=True,
                                                           default=_json_default)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _labels_of(record: dict, keys, place: str) -> list:
    """A harness record's label fields (``--by metadata.category``): each as text, a missing
    one as _MISSING (refused, or dropped and counted, as a missing score is)."""
    values = (_lookup_key(record, key, place) for key in keys)
    return [_MISSING if value is _ABSENT or value is None else value if isinstance(value, str)
            else json.dumps(value, sort_keys=True, default=_json_default) for value in values]


def _reduce_epochs(values, reducer: str, grades=None):
    """One score from a sample's epochs by an Inspect reducer (None: one the tool does not
    know); the mode is the first most common of *grades*, as logged (I and N differ)."""
    if reducer == "mean":
        return _run_mean(values)
    if reducer == "mode":
        grades = values if grades is None else grades
        return values[grades.index(collections.Counter(grades).most_common(1)[0][0])]
    if reducer in ("max", "min"):
        return max(values) if reducer == "max" else min(values)
    if reducer == "median":
        ordered, half = sorted(values), len(values) // 2
        return ordered[half] if len(values) % 2 else _run_mean(ordered[half - 1:half + 1])
    return None


def _inspect_claim(log: dict, scorer: str):
    """The _LmEvalClaim-shaped mean the log's results give for *scorer* (its accuracy or
    mean metric: both the mean of the samples' values), or None."""
    for entry in _typed(_typed(log, "results", dict, {}), "scores", list, []):
        if isinstance(entry, dict) and entry.get("name") == scorer:
            for metric in ("accuracy", "mean"):
                value = _lookup_key(entry, f"metrics.{metric}.value")
                if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
                    return _LmEvalClaim(f"{scorer} {metric}", float(value), *[None] * 6)
    return None


def _inspect_scorer(samples, wanted, path: str) -> tuple:
    """``(scorer, key, scorers)``: the scorer asked for (``scorer.key`` for a dict value) or
    the only one; a dict value without a key is refused with its keys and the spelling."""
    scorers = [name for sample in samples for name in _typed(sample, "scores", dict, {})]
    scorer, key = wanted, None
    if wanted is not None and wanted not in scorers and "." in wanted:
        scorer, key = wanted.split(".", 1)
    scorer = _choose(scorers, scorer, path, "scorer", _opt("score_col"))
    if key is None:
        for sample in samples:
            value = _lookup_key(sample, f"scores.{scorer}.value") if scorer in _typed(
                sample, "scores", dict, {}) else _ABSENT
            if isinstance(value, dict):
                keys = ", ".join(map(str, value))
                raise ToolError(f"{path}: scorer {_printable(scorer)} gives several values "
                                f"({_printable(keys)[:200]}); choose one with {_opt('score_col')} "
                                f"{_printable(scorer)}.{_printable(str(next(iter(value))))}")
    return scorer, key, tuple(dict.fromkeys(scorers))


def _inspect_file(log: dict, path: str, fields: _Fields, samples=None) -> _HarnessFile:
    """An Inspect AI log (``.json``, or an ``.eval``'s header and *samples*): a journal's later
    copy of a sample wins; one that ended in an error is left out (as Inspect's metrics do);
    epochs are runs, or reduced by the log's reducer when it is not the mean."""
    named = _one_system("an Inspect log", path, fields)
    if samples is None:
        if not isinstance(log.get("samples"), list):
            raise ToolError(f"{path}: an Inspect log without samples (was it written with "
                            "--no-log-samples?)")
        samples = _numbered(log["samples"], path, "sample")
    spec = _typed(log, "eval", dict, {})
    unique, twice = {}, []
    for where, sample in samples:
        key = (_item_id(_lookup_key(sample, "id", f"{path} {where}")),
               _item_id(sample.get("epoch", 1)))
        if key in unique:
            twice.append(key[0])
        unique[key] = (where, sample)              # the journal's later copy wins
    chosen = {key: pair for key, pair in unique.items() if not pair[1].get("error")}
    errors = tuple(dict.fromkeys(_item_id(s.get("id")) for _, s in unique.values()
                                 if s.get("error")))
    if not chosen:
        raise ToolError(f"{path}: an Inspect log whose {len(unique)} sample(s) all ended in an "
                        "error; nothing was scored")
    for label in fields.labels:                    # a slice's key no sample holds
        if all(_lookup_key(s, label) is _ABSENT for _, s in chosen.values()):
            shown = ", ".join(_flat_keys(next(iter(chosen.values()))[1]))
            raise ToolError(f"{path}: no sample holds the key {_shorten(label)} (a sample has: "
                            f"{shown[:300]})")
    scorer, key, scorers = _inspect_scorer([s for _, s in chosen.values()], named, path)
    rows, grades = [], {}
    for (item, epoch), (where, sample) in chosen.items():
        place = f"{path} {where}"
        score = _typed(_typed(sample, "scores", dict, {}), scorer, dict, {}).get("value", _ABSENT)
        if key is not None and isinstance(score, dict):
            score = _lookup_key(score, key, place)
        value = _score(score, place, "scorer", scorer, _inspect_value)
        rows.append((where, (item, epoch), [value, _Fingerprint(
            _digest(sample.get("input", "")), _digest(sample.get("target", "")))]
                     + _labels_of(sample, fields.labels, place)))
        grades[item, epoch] = score if isinstance(score, (str, int, Fraction)) else repr(score)
    config = _typed(spec, "config", dict, {})
    reducers = _typed(config, "epochs_reducer", list, ["mean"])
    epochs = _typed(config, "epochs", int, 1)
    note = ""
    if epochs > 1 and reducers and reducers[0] != "mean":
        rows, note = _reduced_rows(rows, reducers[0], log, None if key is not None else scorer,
                                   path, grades)
    if twice:
        note = "; ".join(filter(None, (note, f"{len(twice):,} sample(s) logged twice (the same "
                                             f"id and epoch; first: {_first(twice)}): the later "
                                             "copy read")))
    planned = _typed(_typed(spec, "dataset", dict, {}), "sample_ids", list)
    expected = len(planned) * epochs if planned else None
    stream = _RowStream("inspect", ("id", "epoch", f"scores.{scorer}.value") + fields.labels,
                        scorers, True, iter(rows), 2 + len(fields.labels))
    return _HarnessFile("inspect", stream, _typed(spec, "model", str), _typed(spec, "task", str),
                        note, _typed(log, "status", str, "started"), expected, len(unique),
                        errors, claimed=None if key else _inspect_claim(log, scorer))


def _reduced_rows(rows, reducer, log: dict, scorer, path: str, grades: dict) -> tuple:
    """One row per sample, its epochs reduced by the log's *reducer* (*grades*: values as
    logged, by (item, epoch)), and the note that says so (with Inspect's own headline number,
    if any); a reducer the tool does not know (pass_at_k, at_least_k, one of the user's) by
    the values the log's ``reductions`` hold for *scorer* (None: a dict value's key, unread)."""
    samples = scorer is not None and next((entry.get("samples") for entry in _typed(
        log, "reductions", list, []) if isinstance(entry, dict) and entry.get("scorer") == scorer
        and entry.get("reducer") == reducer), None)
    logged = {_item_id(_lookup_key(sample, "sample_id", path)): _score(
        _lookup_key(sample, "value", path), f"{path} reductions", "scorer", scorer,
        _inspect_value) for sample in samples if isinstance(sample, dict)} \
        if isinstance(samples, list) else {}
    reducer, results = str(reducer), _typed(log, "results", dict, {})
    head = _typed(results, "headline", dict, {})
    headline = next((_lookup_key(entry, f"metrics.{head.get('metric')}.value")
                     for entry in results.get("scores") or ()
                     if isinstance(entry, dict) and entry.get("name") == head.get("score")), None)
    by_item = {}
    for where, key, (value, *digest) in rows:         # digest: the input's, then labels
        entry = by_item.setdefault(key[0], [where, [], digest, []])
        entry[1].append(value)
        entry[3].append(grades.get(key))
    shown = f"; Inspect's headline {_format_decimal(headline)}" if isinstance(
        headline, (int, Fraction)) else ""
    unscored = any(v is _MISSING for _, values, _, _ in by_item.values() for v in values)
    known = _reduce_epochs([0], reducer) is not None
    from_log = not known and all(logged.get(item, _MISSING) is not _MISSING for item in by_item)
    reduced = [] if unscored and not from_log else [
        (where, (item, 1), [logged[item] if from_log else _reduce_epochs(values, reducer, shown_)]
         + digest) for item, (where, values, digest, shown_) in by_item.items()]
    if from_log:
        return reduced, (f"epochs reduced by {_printable(reducer)}, as the log's reducer: each "
                         f"sample's reduced value as Inspect logged it{shown}")
    if unscored or not known:
        why = "an epoch without a score" if unscored else "a reducer the tool does not know"
        return rows, (f"the log reduces its epochs by {_printable(reducer)}, which the tool "
                      f"does not follow ({why}): its epochs are compared as runs{shown}")
    return reduced, f"epochs reduced by {_printable(reducer)}, as the log's reducer{shown}"


def _helm_spec(real_path: str | None) -> dict | None:
    """``run_spec.json`` beside the stats (None without one); one that names no model
    (adapter_spec.model) is refused: the run cannot be told."""
    spec_path = real_path and os.path.join(os.path.dirname(real_path), "run_spec.json")
    if not spec_path or not os.path.lexists(spec_path):
        return None
    try:
        with _open_regular(spec_path) as handle:
            spec = _JSON.decode(_read_at_most(handle, 1 << 24).decode("utf-8"))
        model = spec["adapter_spec"]["model"]
    except (OSError, ValueError, UnicodeDecodeError, KeyError, TypeError, RecursionError):
        model = None
    if not isinstance(model, str) or not model:
        raise ToolError(f"{_printable(spec_path)}: not a HELM run spec naming its model "
                        "(adapter_spec.model); the run's model cannot be told")
    return spec


def _helm_inputs(real_path: str | None) -> dict:
    """{instance id: _Fingerprint of its input and correct references} from ``instances.json``
    beside the stats ({} without one): read whole or refused (an unread check passes any edit)."""
    path = real_path and os.path.join(os.path.dirname(real_path), "instances.json")
    if path is None or not os.path.lexists(path):
        return {}
    try:
        with _open_regular(path) as handle:
            large = os.fstat(handle.fileno()).st_size > MAX_ARCHIVE_BYTES
            data = b"" if large else _read_at_most(handle, MAX_ARCHIVE_BYTES)
    except OSError as err:
        raise ToolError(f"cannot read {path}: {err.strerror or err}") from None
    if large or len(data) > MAX_ARCHIVE_BYTES:
        raise ToolError(f"{path} is larger than 1 GiB, the most the tool reads to check the "
                        "runs' inputs")
    try:
        instances = _decode_json(data.decode("utf-8-sig"), path)
        return {_item_id(i["id"]): _Fingerprint(_digest(i["input"]["text"]), _digest(sorted(
            str(r["output"]["text"]) for r in i.get("references") or ()
            if "correct" in r.get("tags", ())))) for i in instances}
    except (UnicodeDecodeError, KeyError, TypeError, AttributeError):
        raise ToolError(f"{path}: not HELM's list of instances (each with an id and an "
                        "input text), so the runs' inputs cannot be checked") from None


def _helm_run(run_dir: str, spec: dict | None = None) -> tuple:
    """``(task, model)`` of a HELM run: its folder's name without the model and the data
    augmentation (a perturbation run repeats its scenario's instances), and the model named
    in the run spec (``_helm_spec``), else (none) in the folder's name (``...,model=org_m``).

    >>> _helm_run("runs/v1/mmlu:subject=anatomy,model=acme_base-7b")
    ('mmlu:subject=anatomy', 'acme_base-7b')
    >>> _helm_run("runs/v1/mmlu:model=m,data_augmentation=robustness")
    ('mmlu', 'm')
    """
    name = os.path.basename(os.path.normpath(run_dir))
    head, _, args = name.partition(":")
    kept = [arg for arg in args.split(",") if arg and not arg.startswith(
        ("model=", "data_augmentation="))]
    named = re.search(r"(?:^|[,:])model=([^,]+)", name)
    return head + (":" + ",".join(kept) if kept else ""), (
        spec["adapter_spec"]["model"] if spec is not None else named and named.group(1))


def _helm_file(records, path: str, real_path: str | None, fields: _Fields, split: str,
               lower: bool = False):
    """HELM ``per_instance_stats.json``: the unperturbed ``stats`` (``name: {name, split}``,
    ``mean``) of the chosen split, instances of other splits left out; trials are runs;
    lower values better where HELM's schema says so, or, where it says nothing, *lower* asks."""
    named = _one_system("HELM's per-instance stats", path, fields)
    kept, names, perturbed = [], [], 0
    for where, record in records:
        if "perturbation" in record:
            perturbed += 1
            continue
        stats = _typed(record, "stats", list, [])
        chosen = {}
        for entry in stats:
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, dict) or "perturbation" in name or \
                    name.get("split", split) != split:
                continue
            names.append(name.get("name"))
            chosen[name.get("name")] = entry.get("mean", _ABSENT)
        if chosen or not stats:            # an instance of another split is not this test's
            kept.append((where, record, chosen))
    metric = _choose([n for n in names if isinstance(n, str)], named, path,
                     f"metric for split {split}", _opt("metric"))

    inputs, (recorded, who) = _helm_inputs(real_path), _helm_lower(real_path, metric)
    spec = _helm_spec(real_path)
    adapter = _typed(spec or {}, "adapter_spec", dict, {})
    # The test whatever the model: the scenario (class and arguments), the adapter's method and
    # in-context examples, not the prefixes, stop sequences and token limits set per model.
    setup = "" if spec is None else _digest({"scenario": spec.get("scenario_spec"),
                                             "method": adapter.get("method"),
                                             "shots": adapter.get("max_train_instances")})
    if lower and recorded is False:
        raise ToolError(f"{path}: {who} higher {_printable(metric)} is better, which "
                        f"{_opt('lower_is_better', True)} contradicts")
    lower = (metric, who if recorded else "asked") if recorded or lower else None

    def rows():
        for where, record, chosen in kept:
            place = f"{path} {where}"
            item = _item_id(_lookup_key(record, "instance_id", place))
            trial = _lookup_key(record, "train_trial_index", place)
            yield where, (item, 0 if trial is _ABSENT else _item_id(trial)), [
                _score(chosen.get(metric, _ABSENT), place, "stat", metric),
                inputs.get(item, _UNPRINTED)._replace(setup=setup)]

    stream = _RowStream("helm", ("instance_id", "train_trial_index", metric), (), True, rows())
    run_dir = os.path.basename(os.path.dirname(real_path)) if real_path else ""
    named = spec.get("name") if spec is not None else None
    run_dir = named if isinstance(named, str) and ":" in named else run_dir   # the spec's own
    task, model = _helm_run(run_dir, spec)        # the task: the subject kept
    note = (f"{perturbed:,} perturbed record(s) left out (HELM's robustness and fairness "
            "measures): the unperturbed instances are compared") if perturbed else ""
    return _HarnessFile("helm", stream, model, task if ":" in run_dir else None, note,
                        lower=lower)


# HELM's metrics marked lower_is_better in its schema (crfm-helm 0.5.16, schema_classic), for
# runs whose suite has no schema.json (written by helm-summarize) to say it.
_HELM_LOWER = frozenset({
    "absolute_value_difference", "bbq_metric_ambiguous_bias", "bbq_metric_unambiguous_bias",
    "bits_per_byte", "demographic_parity_difference", "distance", "ece_10_bin", "ece_1_bin",
    "edit_similarity", "equalized_odds_difference", "expected_max_toxicity",
    "inference_denoised_runtime", "inference_idealized_runtime", "inference_runtime",
    "longest_common_prefix_length", "max_toxicity_probability", "perplexity", "platt_ece_10_bin",
    "platt_ece_1_bin", "toxic_frac", "training_co2_cost", "training_energy_cost"})


def _helm_lower(real_path: str | None, metric: str) -> tuple:
    """``(lower, who)``: whether HELM says lower values of *metric* are better (None: it
    does not say) and which says so: the suite's ``schema.json`` beside the run folders,
    else HELM's own schema (whose metrics listed are those lower is better)."""
    suite = real_path and os.path.dirname(os.path.dirname(real_path))
    try:
        listed = _results_file(os.path.join(suite, "schema.json"), 1 << 24)["metrics"]
        entry = next(m for m in listed if isinstance(m, dict) and m.get("name") == metric)
        if isinstance(entry.get("lower_is_better"), bool):
            return entry["lower_is_better"], "the suite's schema.json says"
    except (TypeError, KeyError, StopIteration):
        pass
    known = metric.split(":")[0] in _HELM_LOWER or metric.startswith("bias_metric:")
    return (True if known else None), "HELM's schema says"


# --- Zip archives: Inspect's .eval logs and Excel workbooks ---

MAX_ARCHIVE_BYTES = 1 << 30      # an archive, or one member of it, unpacked (1 GiB)


_ZSTD = 93                       # ZIP's method number for Zstandard (Inspect's .eval members)


class _EntityGuard:
    """A zip member read for an XML parser, every chunk checked for an entity declaration (a
    marker split between two chunks too), wherever in the part it comes: a part may not
    declare entities (a DOCTYPE can only come before the root)."""

    def __init__(self, handle, name: str, path: str):
        self.handle, self.name, self.path, self.tail = handle, name, path, b""

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        seen = self.tail + data
        if b"<!DOCTYPE" in seen or b"<!ENTITY" in seen:
            raise ToolError(f"{self.path}: {_printable(self.name)} declares XML entities; the "
                            "tool does not expand them")
        self.tail = seen[-8:]
        return data


class _Zip(_Input):
    """A zip archive (an Inspect ``.eval``, an Excel workbook) read safely: a name held twice
    is refused, no member inflates past its declared size (zipfile alone goes to 2 GiB),
    nor the archive past MAX_ARCHIVE_BYTES; a Zstandard member zipfile cannot open is read
    raw and CRC-checked here.  *source* is a path (a regular file) or bytes."""

    def __init__(self, source, path: str):
        import zipfile
        self.handle = io.BytesIO(source) if isinstance(source, bytes) else _open_regular(source)
        try:
            self.zip = zipfile.ZipFile(self.handle)
            names = self.zip.namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as err:
            self.handle.close()
            raise ToolError(f"{path}: a damaged zip archive ({_printable(str(err))})") from None
        twice = [name for name, count in collections.Counter(names).items() if count > 1]
        if twice:
            self.close()
            raise ToolError(f"{path} holds two members named {_printable(twice[0])}; the tool "
                            "will not choose one")
        self.path, self.names, self.left = path, frozenset(names), MAX_ARCHIVE_BYTES

    def close(self) -> None:
        self.zip.close()
        self.handle.close()

    def _budget(self, name: str):
        """A member's ZipInfo, its size counted against what the archive may unpack."""
        info = self.zip.getinfo(name)
        if info.file_size > self.left:
            raise ToolError(f"{self.path}: {_printable(name)} would take what is unpacked from "
                            "the archive past 1 GiB, the most the tool unpacks")
        self.left -= info.file_size
        return info

    def expect(self, names) -> None:
        """The members a reader will read: refused at once when the sizes the archive declares
        for them add up past what it may unpack (``_budget`` still bounds each as read)."""
        sizes = [self.zip.getinfo(name).file_size for name in names]
        if sum(sizes) > self.left >= max(sizes, default=0):     # one alone: _budget says so
            raise ToolError(f"{self.path}: the {len(names)} member(s) read ({_first(names)}) "
                            f"would unpack to {sum(sizes):,} bytes, as the archive declares, "
                            "past 1 GiB, the most the tool unpacks")

    def read(self, name: str) -> bytes:
        """A member, whole."""
        import zlib
        info = self._budget(name)
        where = f"{self.path} ({_printable(name)})"
        try:
            with self.zip.open(name) as member:
                return member.read(info.file_size + 1)
        except NotImplementedError as err:
            if info.compress_type != _ZSTD:
                raise ToolError(f"{where}: a compression the tool cannot unpack "
                                f"({_printable(str(err))})") from None
        except self.errors() as err:
            raise ToolError(f"{where}: a damaged zip member ({_printable(str(err))})") from None
        raw = self.zip.fp
        raw.seek(info.header_offset)
        header = raw.read(30)                     # checked by zipfile before it gave up
        raw.seek(info.header_offset + 30 + int.from_bytes(header[26:28], "little")
                 + int.from_bytes(header[28:30], "little"))
        try:
            data = self._zstd_decompress(raw.read(info.compress_size), info.file_size, where)
        except ToolError:
            raise
        except Exception as err:                  # each decompressor has its own error class
            raise ToolError(f"{where}: damaged Zstandard data ({_printable(str(err))})") from None
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise ToolError(f"{where}: the member does not unpack to what its zip header says")
        return data

    def json(self, name: str):
        """A member holding JSON, decoded."""
        try:
            text = self.read(name).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ToolError(f"{self.path}: {_printable(name)} is not UTF-8 text") from None
        return _decode_json(text, f"{self.path}: {_printable(name)}")

    def xml(self, name: str):
        """A small XML part (a workbook, its relations) whole: at most 16 MiB."""
        import xml.etree.ElementTree as ElementTree
        if self.zip.getinfo(name).file_size > 1 << 24:
            raise ToolError(f"{self.path}: {_printable(name)} is larger than 16 MiB, which no "
                            "workbook's part of that kind is")
        data = _EntityGuard(io.BytesIO(self.read(name)), name, self.path).read()
        try:
            return ElementTree.fromstring(data)
        except ElementTree.ParseError as err:
            raise ToolError(f"{self.path}: {_printable(name)} is not valid XML ({err})") from None

    def xml_parts(self, name: str, tag: str):
        """The *tag* elements of an XML part, streamed: each taken out of its parent once
        yielded, so memory holds one at a time however many the part holds."""
        import xml.etree.ElementTree as ElementTree
        self._budget(name)
        with self.zip.open(name) as handle:
            try:
                open_ = []                             # the elements begun and not yet ended
                for event, element in ElementTree.iterparse(
                        _EntityGuard(handle, name, self.path), ("start", "end")):
                    if event == "start":
                        open_.append(element)
                        continue
                    open_.pop()
                    if element.tag == tag:
                        yield element
                        if open_:
                            open_[-1].remove(element)
            except ElementTree.ParseError as err:
                raise ToolError(f"{self.path}: {_printable(name)} is not valid XML "
                                f"({err})") from None
            except self.errors() as err:
                raise ToolError(f"{self.path}: a damaged zip archive "
                                f"({_printable(str(err))})") from None

    @staticmethod
    def errors() -> tuple:
        """What zipfile's decompressors raise on damaged data (zlib, bz2 and lzma each its own)."""
        import zipfile
        import zlib
        lzma = sys.modules.get("lzma")               # imported by zipfile where Python has it
        return (zipfile.BadZipFile, zlib.error, EOFError, OSError) + (
            (lzma.LZMAError,) if lzma is not None else ())

    @staticmethod
    def _zstd_decompress(data: bytes, size: int, where: str) -> bytes:
        """Zstandard data, every frame, at most *size* + 1 bytes: by ``compression.zstd`` (3.14+)
        or the ``zstandard`` module (Inspect installs it), neither required."""
        import importlib                  # optional modules, looked up by name, never required
        try:
            zstd = importlib.import_module("compression.zstd")
        except ImportError:
            zstd = None
        if zstd is not None:                    # one frame per decompressor: every frame in turn
            out = b""
            while data and len(out) <= size:
                frame = zstd.ZstdDecompressor()
                out += frame.decompress(data, max_length=size + 1 - len(out))
                data = frame.unused_data if frame.eof else b""
            return out
        try:
            zstandard = importlib.import_module("zstandard")
        except ImportError:
            raise ToolError(f"{where} is compressed with Zstandard, which this Python cannot "
                            "read: run 'inspect log convert --to json DIR' on the logs, or use "
                            "Python 3.14 (or install the zstandard module)") from None
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data),
                                                        read_across_frames=True) as reader:
            return reader.read(size + 1)


def _is_cut(value) -> bool:
    """Whether a summary's input or target holds a text Inspect cut short (past 5,120
    characters)."""
    if isinstance(value, str):
        return value.endswith("...\n(content truncated)")
    return isinstance(value, (list, dict)) and any(
        map(_is_cut, value.values() if isinstance(value, dict) else value))


def _uncut(archive: _Zip, sample):
    """A sample summary, or its full record where the summary cut its input or target short
    (the same-input check would compare the first 5,120 characters only)."""
    if not isinstance(sample, dict) or not (_is_cut(sample.get("input")) or
                                            _is_cut(sample.get("target"))):
        return sample
    name = f"samples/{sample.get('id')}_epoch_{sample.get('epoch', 1)}.json"
    if name not in archive.names:
        raise ToolError(f"{archive.path}: sample {_printable(str(sample.get('id')))}'s input is "
                        f"cut short in the log's summaries and its full record ({name}) is "
                        "missing, so whether the runs had the same inputs cannot be checked")
    full = archive.json(name)
    if not isinstance(full, dict):
        return sample
    whole = type(sample)(sample, input=full.get("input"), target=full.get("target"))
    whole.duplicates = sample.duplicates
    return whole


def _inspect_members(archive: _Zip) -> tuple:
    """``(header, parts)``: the members an Inspect ``.eval`` is read from, its header (or
    journal start) and its summaries (journal summaries, or samples), refused at once if
    with reductions.json they declare more than the archive may unpack."""
    names = archive.names
    header = "header.json" if "header.json" in names else "_journal/start.json"
    journal = sorted((n for n in names if re.fullmatch(r"_journal/summaries/\d+\.json", n)),
                     key=lambda n: int(n.rsplit("/", 1)[1].split(".")[0]))
    parts = ["summaries.json"] if "summaries.json" in names else journal or [
        n for n in sorted(names) if n.startswith("samples/") and n.endswith(".json")]
    archive.expect([header, *parts] + ["reductions.json"] * ("reductions.json" in names))
    return header, parts


def _inspect_archive(archive: _Zip, path: str):
    """The log header and the samples of an Inspect ``.eval`` archive."""
    names = archive.names
    header, parts = _inspect_members(archive)
    log = archive.json(header)
    if not isinstance(log, dict):
        raise ToolError(f"{path}: {header} is not a JSON object")
    lists = [archive.json(n) for n in parts]
    if parts and parts[0].startswith("samples/"):       # one record each: one list of them
        lists = [lists]
    samples = [_uncut(archive, sample) for part in lists if isinstance(part, list)
               for sample in part]
    if "reductions.json" in names:                  # each sample's epochs as Inspect reduced them
        log = dict(log, reductions=archive.json("reductions.json"))
    if not samples:
        raise ToolError(f"{path}: an Inspect log without samples"
                        + (" (a run stopped before its first sample was written)"
                           if header != "header.json" else ""))
    return log, ((f"sample {i}", s) for i, s in enumerate(samples, start=1) if isinstance(s, dict))


_XLSX = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_XLSX_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_XLSX_GRID = (1_048_576, 16_384)     # Excel's rows and columns: A1 to XFD1048576
_XLSX_SHARED = 1 << 22               # shared strings read (4 per row of the longest sheet)
_CELL = re.compile(r"([A-Z]{1,3})([1-9][0-9]{0,6})")


def _xlsx_rows(archive: _Zip, path: str):
    """The first sheet of an Excel workbook as ``(row number, cell texts)``, streamed (each
    row forgotten once read), numbers as stored (their shortest decimal text)."""
    book = archive.xml("xl/workbook.xml")
    sheet = book.find(f"{_XLSX}sheets/{_XLSX}sheet")
    target = "worksheets/sheet1.xml"
    if sheet is not None and "xl/_rels/workbook.xml.rels" in archive.names:
        rel_id = sheet.get(f"{_XLSX_REL}id")
        for rel in archive.xml("xl/_rels/workbook.xml.rels"):
            if rel.get("Id") == rel_id:
                target = rel.get("Target", target).lstrip("/").removeprefix("xl/")
    member = "xl/" + target
    if member not in archive.names:
        raise ToolError(f"{path}: the workbook's first sheet ({_printable(member)}) is not in "
                        "the file")
    archive.expect([name for name in ("xl/sharedStrings.xml", member) if name in archive.names])
    shared = None
    if "xl/sharedStrings.xml" in archive.names:
        shared = []
        for item in archive.xml_parts("xl/sharedStrings.xml", f"{_XLSX}si"):
            if len(shared) == _XLSX_SHARED:
                raise ToolError(f"{path}: more than {_XLSX_SHARED:,} shared strings, more "
                                "than a sheet of scores holds; save it as CSV")
            shared.append("".join(t.text or "" for t in item.iter(f"{_XLSX}t")))
    for count, row in enumerate(archive.xml_parts(member, f"{_XLSX}row"), start=1):
        line = row.get("r", str(count))
        if not line.isdigit() or not 0 < int(line) <= _XLSX_GRID[0]:
            raise ToolError(f"{path}: row number {_shorten(line)} is not a row of an Excel "
                            "sheet (1 to 1,048,576)")
        yield int(line), _xlsx_cells(row, shared, path)


def _xlsx_cells(row, shared, path: str) -> list:
    """One row's cell texts by column (shared strings looked up, booleans as true/false)."""
    cells = {}
    for cell in row.iter(f"{_XLSX}c"):
        reference, column = cell.get("r", ""), len(cells) + 1  # 1-based; no reference: the next
        if reference:
            match, column = _CELL.fullmatch(reference), 0
            for ch in match.group(1) if match else "":
                column = column * 26 + ord(ch) - 64
            if not match or column > _XLSX_GRID[1] or int(match.group(2)) > _XLSX_GRID[0]:
                raise ToolError(f"{path}: cell reference {_shorten(reference)} is not a cell of "
                                "an Excel sheet (A1 to XFD1048576)")
        kind, value = cell.get("t", "n"), cell.find(f"{_XLSX}v")
        text = value.text or "" if value is not None else ""
        if kind == "s":
            if shared is None or not text.isdigit() or int(text) >= len(shared):
                held = "no shared strings" if shared is None else f"{len(shared):,} of them"
                raise ToolError(f"{path}: cell {_printable(reference or '?')} refers to shared "
                                f"string {_shorten(text)}, which the workbook does not hold "
                                f"({held})")
            text = shared[int(text)]
        elif kind == "inlineStr":
            text = "".join(t.text or "" for t in cell.iter(f"{_XLSX}t"))
        elif kind == "b":
            text = "true" if text == "1" else "false"
        cells[column - 1] = text
    return [cells.get(i, "") for i in range(max(cells, default=-1) + 1)]


def _tsv_lines(header, rows):
    """Rows of cells as tab-separated lines, made as the CSV reader asks (a big sheet never
    sits in memory as text), rows of empty cells skipped."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    for cells in itertools.chain([header], (cells + [""] * (len(header) - len(cells))
                                            for _, cells in rows if any(map(str.strip, cells)))):
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(cells)
        yield buffer.getvalue()


# --- Reading one file, whatever its format ---

_FORMATS = ("csv", "jsonl", "json", "xlsx", "lm-eval", "inspect", "helm", "battles", "judged")


@dataclass(frozen=True)
class ReadOptions:
    """How the user's files are read: a forced format (None: detected from the content),
    what to do with incomplete rows, and the harness choices (lm-eval filter, HELM split)."""

    input_format: str | None = None
    on_missing: str = "error"
    filter: str | None = None
    split: str | None = None     # HELM's split (None: test)
    progress: object = None      # called as progress(bytes read, file size) while reading
    allow_different_tasks: bool = False   # pair logs of tasks with other names or inputs
    allow_incomplete: bool = False        # compare a run that did not finish
    lower_is_better: bool = False         # a log's metric whose direction it does not record
    allow_different_targets: bool = False  # pair items graded against other answers
    allow_different_prompts: bool = False  # pair a document's other prompts (n-shot, template)
    pool: str | None = None      # how a harness run's tasks are pooled (None: not asked)


@dataclass(frozen=True)
class Source:
    """Where scores came from: a file (or stdin), its SHA-256, rows read, columns used."""

    path: str
    sha256: str
    rows: int
    columns: tuple
    format: str

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "columns": list(self.columns)}


@dataclass(frozen=True)
class _FileRead:
    """One file, read: the rows kept, their source, what a harness log said of itself (then
    ids are ``(item, run)`` pairs)."""

    collected: _Collected
    source: Source
    log: _HarnessFile | None = None

    @property
    def harness(self) -> bool:
        return self.log is not None

    @property
    def inputs(self) -> dict:
        """{item: _Fingerprint of its test} (harness logs that record one)."""
        return {item: digest for (item, _), digest in zip(self.collected.ids,
                self.collected.columns[1]) if any(digest)} if self.harness else {}


def _is_inspect_log(value) -> bool:
    return isinstance(value, dict) and "eval" in value and ("samples" in value
                                                             or "version" in value)


def _parse_text(f: _InputFile, path: str, fields: _Fields, options: ReadOptions):
    """A text file's rows, or a harness log's, by the format forced or detected."""
    # a link not followed: a run's results file, HELM's run spec are beside the name given
    real = None if f.path == "<stdin>" else os.path.abspath(f.path)
    fmt = options.input_format or _text_kind(f.head)
    if fmt == "json" and f.path.lower().endswith((".jsonl", ".ndjson")) and \
            options.input_format is None:
        fmt = "jsonl"
    if fmt == "csv":
        return _csv_rows(f.text, path, fields)
    if fmt in ("jsonl", "lm-eval"):
        records = _jsonl_records(f)
        first = next(records, None)
        if first is None:
            raise ToolError(f"{path} has no records")
        head = [first]
        if fmt == "jsonl" and _is_inspect_log(first[1]):
            second = next(records, None)
            if second is None:                   # an Inspect log written on one line
                return _inspect_file(first[1], path, fields)
            head.append(second)
        records = itertools.chain(head, records)
        named = _LM_EVAL_NAME.search(os.path.basename(f.path)) is not None
        if fmt == "lm-eval" or ("doc_id" in first[1] or named) and (
                "filter" in first[1] or "metrics" in first[1]):
            return _lm_eval_file(records, path, real, fields, options.filter,
                                 options.lower_is_better)
        return _record_rows(records, fields, path, "jsonl")
    text = _whole_json(f, path)
    if not text.strip():
        raise ToolError(f"{path} is empty")
    value = _decode_json(text, path)
    if fmt == "inspect" or fmt == "json" and _is_inspect_log(value):
        if not isinstance(value, dict):
            raise ToolError(f"{path} is not an Inspect log (a JSON object with eval and samples)")
        return _inspect_file(value, path, fields)
    if fmt == "helm" or fmt == "json" and isinstance(value, list) and value and \
            isinstance(value[0], dict) and "instance_id" in value[0] and "stats" in value[0]:
        return _helm_file(_document_records(value, path), path, real, fields,
                          options.split or "test", options.lower_is_better)
    return _record_rows(_document_records(value, path), fields, path, "json")


def _read_archive(f: _InputFile, path: str, fields: _Fields, options: ReadOptions):
    """An Inspect ``.eval`` log or an Excel workbook (both zip archives), read whole."""
    import zipfile
    f.checked.start(binary=True)                # an archive: hashed, not checked as text
    data = _read_at_most(f.buffer, MAX_ARCHIVE_BYTES, f.raw)
    if len(data) > MAX_ARCHIVE_BYTES:
        raise ToolError(f"{path} is larger than 1 GiB, the largest archive the tool reads")
    digest = f.finish()
    archive = _Zip(data, path)
    names = archive.names
    try:
        if "xl/workbook.xml" in names and options.input_format in (None, "xlsx"):
            rows = _xlsx_rows(archive, path)
            header = next(rows, None)
            if header is None:
                raise ToolError(f"{path}: the first sheet of the workbook is empty")
            stream = _csv_rows(_tsv_lines(header[1], rows), path, fields, delimiter="\t")
            return dataclasses.replace(stream, format="xlsx"), digest
        if ("header.json" in names or "_journal/start.json" in names) and \
                options.input_format in (None, "inspect"):
            log, samples = _inspect_archive(archive, path)
            return _inspect_file(log, path, fields, samples), digest
    except (zipfile.BadZipFile, KeyError, EOFError, NotImplementedError) as err:
        raise ToolError(f"{path}: a damaged or unsupported zip archive "
                        f"({_printable(str(err))})") from None
    raise ToolError(f"{path} is a zip archive, not an Excel workbook or an Inspect log; unpack "
                    "it first")


def _read_file(path: str, fields: _Fields, options: ReadOptions = ReadOptions()) -> _FileRead:
    """Read the named scores (then labels) of one file, its format (CSV/TSV, JSON lines or
    document, Excel, a harness log) detected from its content; an error that does not know
    its file is given the file's name."""
    try:
        with _CollectorPaused(), _InputFile(path, progress=options.progress) as f:
            shown = _printable(f.path)
            kind = _binary_kind(f.head)
            if not f.head:
                raise ToolError(f"{shown} is empty")
            if kind == "zip":
                parsed, archive_sha = _read_archive(f, shown, fields, options)
            elif kind == "UTF-16 text":
                raise ToolError(f"{shown} is UTF-16 text; save it as UTF-8 (Excel: CSV UTF-8) "
                                "and give that file")
            elif kind is not None:
                raise ToolError(f"{shown} is {kind}, not a text table; export it as CSV")
            else:
                if options.input_format == "xlsx":
                    raise ToolError(f"{shown} is not an Excel workbook (.xlsx)")
                f.checked.start(binary=False)
                f.text = io.TextIOWrapper(f.buffer, encoding="utf-8-sig", newline="")
                parsed, archive_sha = _parse_text(f, shown, fields, options), None
            harness = isinstance(parsed, _HarnessFile)
            if not harness and fields.scores == ():
                raise ToolError(f"one file per system needs {_opt('score_col')}, the score's "
                                "column or key")
            for flag, value, fmt, kind in ((_opt("filter"), options.filter, "lm-eval",
                                            "an lm-evaluation-harness"),
                                           (_opt("split"), options.split, "helm", "a HELM")):
                if value is not None and parsed.format != fmt:
                    what = "an Inspect log" if parsed.format == "inspect" else \
                        f"a {parsed.format} file"
                    raise ToolError(f"{flag} chooses within {kind} log; {shown} is {what}")
            stream = parsed.stream if harness else parsed
            collected = _collect(stream, shown, stream.width, options.on_missing)
            digest = archive_sha or f.finish()
    except ToolError as error:
        if getattr(error, "unplaced", False):
            raise ToolError(f"{_printable(path)}: {error}") from None
        raise
    source = Source(f.path, digest, collected.rows, stream.used, stream.format)
    return _FileRead(collected, source, parsed if harness else None)


# --- Preference judgments: who won each head-to-head battle ---
#
# Each format as its writer leaves it (FastChat's battles, MT-bench's pairwise judgments,
# AlpacaEval's annotations, Arena-Hard's judgments, a plain table): per battle the two
# systems, the first's share of the win (1 won, 1/2 tie, 0 lost; AlpacaEval's weighted judges
# give a probability) and its prompt.  Where the writer records it, the first was shown first.

_HALF = Fraction(1, 2)
_SHARES = {"model_a": 1, "a": 1, "model_1": 1, "model_b": 0, "b": 0, "model_2": 0,
           "tie": _HALF, "tie (bothbad)": _HALF, "draw": _HALF}
_ARENA_HARD = {"A>>B": 1, "A>B": 1, "A=B": _HALF, "B>A": 0, "B>>A": 0}
_BATTLE_KINDS = (                 # (keys a format's records hold, the format), in this order
    (frozenset({"model_1", "model_2", "g1_winner", "g2_winner"}), "mt-bench"),
    (frozenset({"judge", "model", "games"}), "arena-hard"),
    (frozenset({"generator_1", "generator_2", "preference"}), "alpaca-eval"),
    (frozenset({"model_a", "model_b", "winner"}), "fastchat"),
    (frozenset({"system_a", "system_b", "winner"}), "battles"))
_PROMPT_KEYS = {"mt-bench": ("question_id",), "arena-hard": ("question_id", "uid"),
                "alpaca-eval": ("instruction",),
                "fastchat": ("question_id",), "battles": ("prompt", "prompt_id", "question_id",
                                                          "item", "id")}
_SYSTEM_KEYS = {"mt-bench": ("model_1", "model_2"), "fastchat": ("model_a", "model_b"),
                "alpaca-eval": ("generator_1", "generator_2"), "battles": ("system_a", "system_b")}
_POSITIONED = frozenset({"mt-bench", "arena-hard", "fastchat"})   # the first was shown first
_KEYS_READ = frozenset().union(*(keys for keys, _ in _BATTLE_KINDS), *_PROMPT_KEYS.values(),
                               {"baseline"})
ARENA_HARD_BASELINE = "baseline"    # Arena-Hard's records do not name their baseline


def _battle_kind(keys) -> str | None:
    """The preference format whose keys a first record holds (None: not one).

    >>> _battle_kind(["model_a", "model_b", "winner", "tstamp"]), _battle_kind(["item", "a"])
    ('fastchat', None)
    """
    keys = set(keys)
    return next((kind for needed, kind in _BATTLE_KINDS if needed <= keys), None)


def _head(path: str, size: int = 1 << 20) -> str:
    """The first *size* bytes of a regular file, as text (a pipe or device: ToolError)."""
    with _open_regular(path) as handle:
        return handle.read(size).decode("utf-8-sig", "replace")


def _first_keys(path: str) -> tuple:
    """The keys of a file's first record (a CSV header, a JSON line, a list's first object)
    from its first MiB; () when it has none read that way (then it is not battles)."""
    try:
        text = _head(path).lstrip()
        first = text.split("\n", 1)[0]
        if text.startswith("["):
            value = json.JSONDecoder().raw_decode(text, len(text) - len(text[1:].lstrip()))[0]
        elif text.startswith("{"):
            value = json.loads(first)
        else:
            value = dict.fromkeys(next(csv.reader([first.rstrip("\r")],
                                                  delimiter=_sniff_delimiter(path, first))))
    except (OSError, ValueError, ToolError, csv.Error, RecursionError):
        return ()             # not battles: the reader of tables says what is wrong
    return tuple(value) if isinstance(value, dict) else ()


def _share(verdict, first: str, second: str, place: str):
    """The first system's share of one verdict (None: the judge gave none, e.g. "error"): a
    keyword (model_a, b, tie, ...) or, given the two names, one of them; a keyword that is
    also the other system's name is refused as ambiguous."""
    if verdict is None or isinstance(verdict, str) and verdict.strip().lower() in (
            "", "error", "null", "none", "nan", "inconsistent"):
        return None
    if not isinstance(verdict, str):
        raise ToolError(f"{place}: the winner {_shorten(repr(verdict))} is not text")
    text = verdict.strip()
    share = _SHARES.get(text.lower())
    named = 1 if text == first else 0 if text == second else None
    if share is not None and named is not None and share != named:
        raise ToolError(f"{place}: the winner {_shorten(text)} is ambiguous: a system has that "
                        "name, and it also names a position or a tie; rename the system")
    share = share if share is not None else named
    if share is None:
        raise ToolError(f"{place}: the winner {_shorten(text)} is neither system "
                        f"({_shorten(first)}, {_shorten(second)}) nor a tie")
    return share


def _alpaca_share(preference, place: str):
    """AlpacaEval's preference as the first generator's share: 1 -> 1, 2 -> 0, 1.5 a tie (and
    0, an older tie), a probability between them as is (None: no preference)."""
    if preference is None or isinstance(preference, str) and not preference.strip():
        return None
    if isinstance(preference, bool):
        raise ToolError(f"{place}: preference {str(preference).lower()} is not 1, 2 or between")
    value = parse_score(preference, lambda: f"{place}, key 'preference'")
    if value == 0:
        return _HALF
    if not 1 <= value <= 2:
        raise ToolError(f"{place}: preference {_format_decimal(value)} is not between 1 "
                        "(generator_1 preferred) and 2 (generator_2)")
    return 2 - value


def _system_name(value, key: str, place: str) -> str:
    if type(value) is str and value.strip():
        return value.strip()
    if type(value) is int:
        return str(value)
    raise ToolError(f"{place}: {key} is not a system's name")


def _record_battles(kind: str, record, place: str) -> list:
    """``[(prompt, first, second, share), ...]``: one record's battles."""
    twice = getattr(record, "duplicates", None)
    if twice and twice & _KEYS_READ:
        raise ToolError(f"{place}: key {_shorten(min(twice & _KEYS_READ))} appears twice")
    get = record.get
    prompt = next((_item_id(get(key)) for key in _PROMPT_KEYS[kind]
                   if get(key, _ABSENT) is not _ABSENT), _MISSING)
    if kind == "arena-hard":         # game 1 shows the baseline first (as A), game 2 the model
        model, games = _system_name(get("model"), "model", place), get("games")
        baseline = ARENA_HARD_BASELINE if get("baseline", _ABSENT) is _ABSENT else \
            _system_name(get("baseline"), "baseline", place)
        if not isinstance(games, list) or len(games) != 2 or not all(
                g is None or isinstance(g, dict) for g in games):
            raise ToolError(f"{place}: games is not a list of two judgments (the two orders)")
        scores = [None if game is None else game.get("score") for game in games]
        for index, score in enumerate(scores, start=1):
            if score is not None and (type(score) is not str or score not in _ARENA_HARD):
                raise ToolError(f"{place}: game {index}'s score {_shorten(str(score))} is "
                                "not one of A>>B, A>B, A=B, B>A, B>>A")
        first, second = (_ARENA_HARD.get(score) for score in scores)
        return [(prompt, baseline, model, first), (prompt, model, baseline, second)]
    a, b = (_system_name(get(key), key, place) for key in _SYSTEM_KEYS[kind])
    if kind == "mt-bench":           # game 1 shows model_1 first, game 2 model_2
        g1, g2 = (_share(get(key), "", "", place) for key in ("g1_winner", "g2_winner"))
        return [(prompt, a, b, g1), (prompt, b, a, None if g2 is None else 1 - g2)]
    if kind == "alpaca-eval":
        return [(prompt, a, b, _alpaca_share(get("preference"), place))]
    winner = get("winner")              # FastChat writes a keyword, never a name
    share = _SHARES.get(winner) if type(winner) is str and winner not in (a, b) else None
    return [(prompt, a, b, share if share is not None else _share(
        winner, *(("", "") if kind == "fastchat" else (a, b)), place))]


class _Items:
    """What the data classes read share (Table, Battles, Judged): at most MAX_N_ITEMS items
    (battles), refused as one is built, so that every reader and Python's scores meet it."""

    def __post_init__(self):
        if self.n > MAX_N_ITEMS:
            sources = self.sources if hasattr(self, "sources") else (self.source,)
            where = _printable(", ".join(s.path for s in sources))[:200] or "the scores given"
            unit = "battles" if isinstance(self, Battles) else "items"
            raise ToolError(f"{where}: {self.n:,} {unit}, more than the {MAX_N_ITEMS:,} the "
                            "tool compares")


@dataclass(frozen=True)
class Battles(_Items):
    """Head-to-head judgments of several systems: per battle the two systems (indexes into
    ``systems``; the first was shown first when ``positioned``), the first's share of the
    win (1 won, 1/2 a tie, 0 lost; a judge's probability otherwise) and its prompt -- the
    battles of one prompt (both orders, several turns) are resampled together.

    >>> battles([("p1", "a", "b", 1), ("p1", "b", "a", 0.5), ("p2", "a", "b", 0)])
    Battles(systems=('a', 'b'), battles=3, prompts=2, kind='battles')
    """

    systems: tuple
    first: tuple
    second: tuple
    shares: tuple
    prompts: tuple
    positioned: bool = False
    sources: tuple = ()
    notes: tuple = ()
    kind: str = "battles"

    incomplete = warnings = ()       # as a Table's: what a report of it says first
    slices, dropped = None, 0

    @property
    def dropped_note(self) -> str:
        return "; ".join(self.notes)

    def __repr__(self) -> str:
        return (f"Battles(systems={_shorten(repr(self.systems), 200)[1:-1]}, "
                f"battles={self.n:,}, prompts={len(set(self.prompts)):,}, kind={self.kind!r})")

    @property
    def n(self) -> int:
        return len(self.shares)


def battles(records, *, kind: str = "battles", positioned: bool = False, sources=(),
            notes=()) -> Battles:
    """Battles from ``(prompt, first system, second system, first's share)`` records (a share
    of None -- no verdict -- is left out and counted in the notes); a self-battle is refused."""
    names, first, second, shares, prompts, skipped = {}, [], [], [], [], 0
    for index, (prompt, a, b, share) in enumerate(records, start=1):
        if share is None:
            skipped += 1
            continue
        if not all(type(name) is str and name for name in (a, b)):
            raise ToolError(f"battle {index}: a system's name is not text "
                            f"({_shorten(repr((a, b)))})")
        if a == b:
            raise ToolError(f"battle {index}: {_shorten(a)} against itself")
        try:
            hash(prompt)
            if type(share) is not int:      # 0 and 1 stay ints: hashed and compared fast
                share = Fraction(share)
                share = share.numerator if share.denominator == 1 else share
        except (TypeError, ValueError, OverflowError):
            raise ToolError(f"battle {index}: the share {_shorten(repr(share))} is not a number "
                            f"in [0, 1], or the prompt {_shorten(repr(prompt))} is not an id") \
                from None
        if not 0 <= share <= 1:
            raise ToolError(f"battle {index}: the first system's share {float(share):g} is not "
                            "within [0, 1]")
        first.append(names.setdefault(a, len(names)))
        second.append(names.setdefault(b, len(names)))
        shares.append(share)
        prompts.append(("battle", index) if prompt is _MISSING or prompt is None else prompt)
    if not shares:
        raise ToolError("no battle with a verdict")
    notes = tuple(notes) + ((f"{skipped:,} judgment(s) without a verdict (an error, or none "
                             "given) left out",) if skipped else ())
    if not sources:                   # given from Python: the same battles, the same digest
        digest = hashlib.sha256(repr((list(names), prompts, first, second, shares)).encode())
        sources = (Source("<python>", digest.hexdigest(), len(shares), (), kind),)
    return Battles(tuple(names), tuple(first), tuple(second), tuple(shares), tuple(prompts),
                   positioned, tuple(sources), notes, kind)


def _text_records(f: _InputFile, what: str):
    """``(where, record)`` of a CSV, JSON-lines or JSON file of records, keyed by name (a CSV
    file's by its header)."""
    shown = _printable(f.path)
    if not f.head or _binary_kind(f.head):
        raise ToolError(f"{shown} is {'empty' if not f.head else _binary_kind(f.head)}, not "
                        f"{what} in CSV or JSON")
    f.checked.start(binary=False)
    f.text = io.TextIOWrapper(f.buffer, encoding="utf-8-sig", newline="")
    fmt = _text_kind(f.head)
    if fmt != "csv":
        yield from _jsonl_records(f) if fmt == "jsonl" else _document_records(
            _decode_json(_whole_json(f, shown), shown), shown)
        return
    header_line = next(f.text, "")
    csv.field_size_limit(MAX_FIELD_CHARS)
    reader = csv.reader(itertools.chain([header_line], f.text),
                        delimiter=_sniff_delimiter(shown, header_line), strict=True)
    try:
        header = next(reader)
        if len(set(header)) != len(header):
            repeated = min(h for h in header if header.count(h) > 1)
            raise ToolError(f"{shown}: column {_shorten(repeated)} appears twice in the header")
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise ToolError(f"{shown} line {reader.line_num}: {len(row)} fields, the header "
                                f"has {len(header)}")
            yield f"line {reader.line_num}", dict(zip(header, row))
    except csv.Error as err:
        raise ToolError(f"{shown} line {reader.line_num}: {err}") from None


def read_battles(paths, options: ReadOptions = ReadOptions()) -> Battles:
    """Battles from files of preference judgments (each file's format by its keys)."""
    collected, sources, kinds = [], [], set()
    for path in [paths] if isinstance(paths, str) else paths:
        with _InputFile(path, progress=options.progress) as f:
            shown = _printable(f.path)
            records = _text_records(f, "battles")
            first = next(records, None)
            if first is None:
                raise ToolError(f"{shown} has no records")
            kind = _battle_kind(first[1])
            if kind is None:
                raise ToolError(f"{shown} holds no battles: expected records with model_a, "
                                "model_b and winner (FastChat), model_1, model_2, g1_winner and "
                                "g2_winner (MT-bench), generator_1, generator_2 and preference "
                                "(AlpacaEval), question_id, model and games (Arena-Hard), or "
                                "system_a, system_b and winner")
            count = len(collected)
            for where, record in itertools.chain([first], records):
                found = _record_battles(kind, record, f"{shown} {where}")
                if any(a == b for _, a, b, _ in found):
                    raise ToolError(f"{shown} {where}: {_shorten(found[0][1])} against itself")
                collected += found
            kinds.add(kind)
            keys, digest = next(sorted(k) for k, name in _BATTLE_KINDS if name == kind), f.finish()
            if any(source.sha256 == digest for source in sources):
                raise ToolError(f"{shown} holds the same battles as a file before it (the same "
                                "file twice?); give each once")
            sources.append(Source(f.path, digest, len(collected) - count, tuple(keys), kind))
    if len(kinds) > 1:
        raise ToolError(f"the files hold battles in {len(kinds)} formats "
                        f"({', '.join(sorted(kinds))}); give files of one")
    kind = kinds.pop()
    notes = ("each Arena-Hard game is one battle (its show_result counts a strong verdict, "
             "A>>B, three times)",) if kind == "arena-hard" else ()
    if kind == "arena-hard" and any(ARENA_HARD_BASELINE == record[1] for record in collected):
        notes += (f"these Arena-Hard judgments do not name their baseline: it is called "
                  f"{ARENA_HARD_BASELINE!r} here",)
    return battles(collected, kind=kind, positioned=kind in _POSITIONED, sources=sources,
                   notes=notes)


def _battle_paths(paths, input_format: str | None) -> list | None:
    """The files of battles the inputs name (a folder: its CSV and JSON files, as Arena-Hard
    keeps a file per model), or None when they are not battles (named so, or by their first
    record's keys)."""
    files = []
    for path in paths:
        if isinstance(path, str) and path != "-" and os.path.isdir(path):
            inside = sorted(os.path.join(path, name) for name in os.listdir(path)
                            if name.endswith((".jsonl", ".json", ".csv"))
                            and os.path.isfile(os.path.join(path, name)))
            if not inside:
                return None
            files += inside
        else:
            files.append(path)
    if input_format is not None:
        return files if input_format == "battles" else None
    keyed = all(isinstance(p, str) and p != "-" and _battle_kind(_first_keys(p)) for p in files)
    return files if files and keyed else None


# --- Judge scores on every item, people's on a few ---
#
# One file, a row per item: each system's judge score in SYSTEM.judge and, on the items people
# scored, their score in SYSTEM.human (blank elsewhere).

JUDGE_SUFFIX, HUMAN_SUFFIX = ".judge", ".human"


def _judged_systems(keys) -> tuple:
    """The systems a file has both a judge and a human column for, in its column order."""
    keys = [str(key) for key in keys]
    return tuple(key[:-len(JUDGE_SUFFIX)] for key in keys if key.endswith(JUDGE_SUFFIX)
                 and key[:-len(JUDGE_SUFFIX)] + HUMAN_SUFFIX in keys)


_LONG_JUDGED = ("system", "judge", "human")     # a long file: a row per item and system


def _wide_judged(records, shown: str, id_key: str, by: str | None) -> tuple:
    """``(records, rows)``: a long file's rows (item, system, judge, human) as one record per
    item, keyed SYSTEM.judge and SYSTEM.human as a wide file's are (the item's slice from its
    first row), and the number of rows read."""
    items, count = {}, 0
    for count, (where, record) in enumerate(records, start=1):
        item, system = _item_id(record.get(id_key)), _item_id(record.get("system"))
        if _MISSING in (item, system):
            raise ToolError(f"{shown} {where}: no {id_key if item is _MISSING else 'system'}")
        wide = items.setdefault(item, (where, {id_key: item}))[1]
        if str(system) + JUDGE_SUFFIX in wide:
            raise ToolError(f"{shown} {where}: item {_shorten(str(item))} of system "
                            f"{_shorten(str(system))} appears twice")
        wide.update({str(system) + JUDGE_SUFFIX: record.get("judge"),
                     str(system) + HUMAN_SUFFIX: record.get("human")})
        if by is not None:
            wide.setdefault(by, record.get(by))
    return list(items.values()), count


@dataclass(frozen=True)
class Judged(_Items):
    """Two systems' judge scores on every item and people's scores on some: per system
    ``(judge column, human column)``, a human score None where no one scored the item."""

    systems: tuple
    judge: tuple
    human: tuple
    source: Source
    ids: tuple = ()              # each item's id (row numbers when the file has none)
    slices: tuple | None = None  # each item's slice (``by``)

    @property
    def n(self) -> int:
        return len(self.judge[0]) if self.judge else 0


def read_judged(path: str, systems=None, options: ReadOptions = ReadOptions(),
                by: str | None = None) -> Judged:
    """The judge and human scores of two systems (``systems``, or the file's only two), and
    each item's slice from the column *by*."""
    with _InputFile(path, progress=options.progress) as f:
        shown = _printable(f.path)
        records = _text_records(f, "judge and human scores")
        first = next(records, None)
        found = _judged_systems(first[1]) if first else ()
        id_key = next((key for key in ("item", "id", "question_id", "prompt_id", "doc_id")
                       if first and key in first[1]), None)
        if by is not None and first and by not in first[1]:
            raise ToolError(f"{shown}: no column {_shorten(by)} to slice by")
        long = not found and first and id_key and all(key in first[1] for key in _LONG_JUDGED)
        if long:
            wide, long_rows = _wide_judged(itertools.chain([first], records), shown, id_key, by)
            found = tuple(dict.fromkeys(name for _, record in wide
                                        for name in _judged_systems(record)))
            records = iter(wide)
            first = next(records)
        names = tuple(systems) if systems else found
        if len(names) != 2 or any(name not in found for name in names):
            columns = "system column" if long else \
                f"SYSTEM{JUDGE_SUFFIX} and SYSTEM{HUMAN_SUFFIX} columns"
            raise ToolError(f"{shown}: name two systems of the file's {columns} with "
                            f"{_opt('systems')} (it has {_printable(', '.join(found)) or 'none'})")
        keys = [name + suffix for suffix in (JUDGE_SUFFIX, HUMAN_SUFFIX) for name in names]
        rows, seen, slices = [], {}, []
        for where, record in itertools.chain([first], records):
            if by is not None:
                slices.append(_item_id(record.get(by)))
                if slices[-1] is _MISSING:
                    raise ToolError(f"{shown} {where}: no {_printable(by)} to slice by")
            item = _item_id(record.get(id_key)) if id_key else len(seen) + 1
            if item in seen:
                raise ToolError(f"{shown} {where}: item {_shorten(str(item))} appears twice "
                                "(the same file twice?)")
            seen[item] = None
            values = [parse_score(record.get(key), lambda key=key: f"{shown} {where}, key "
                                                                  f"{_printable(key)}")
                      for key in keys]
            if _MISSING in values[:2]:
                raise ToolError(f"{shown} {where}: a judge score is missing (the judge scores "
                                "every item)")
            if (values[2] is _MISSING) != (values[3] is _MISSING):
                raise ToolError(f"{shown} {where}: people scored one system on this item but "
                                "not the other; a human score goes with both or neither")
            rows.append([None if v is _MISSING else v for v in values])
        digest = f.finish()
    columns = list(zip(*rows))
    return Judged(names, tuple(columns[:2]), tuple(columns[2:]),
                  Source(f.path, digest, long_rows if long else len(rows),
                         tuple(keys) + ((by,) if by else ()),
                         "judged"), tuple(seen), tuple(slices) if by else None)


def _is_judged(paths, systems, input_format=None) -> bool:
    """One file with SYSTEM.judge and SYSTEM.human columns for two systems (or those named),
    or named so with ``input_format="judged"``."""
    if input_format is not None or len(paths) != 1 or not isinstance(paths[0], str) or \
            paths[0] == "-":
        return input_format == "judged"
    keys = _first_keys(paths[0])
    found = _judged_systems(keys)
    if not found and all(key in keys for key in _LONG_JUDGED):      # a long file
        return True
    return len(found) >= 2 and (not systems or all(name in found for name in systems))


# --- Tables: several systems' scores on the same items ---

@dataclass(frozen=True)
class Table(_Items):
    """Per-item scores of several systems on the same items, the first the baseline; a
    system of several runs scores each item by its mean over them."""

    systems: tuple           # names, baseline first
    columns: tuple           # one tuple of exact scores per system, item order
    ids: tuple               # item ids (line numbers when the file has no id column)
    sources: tuple
    dropped: int = 0         # rows or items left out under --on-missing drop
    dropped_note: str = ""
    clusters: tuple | None = None    # a cluster label per item (--cluster-col)
    strata: tuple | None = None      # a stratum label per item (--strata-col)
    runs: tuple | None = None        # per system: ((label, column), ...) when any has 2+
    tasks: tuple | None = None       # a task name per item (harness folders)
    notes: tuple = ()                # what the readers chose or found, said once
    task_runs: tuple | None = None   # per task: (task, runs as above) when tasks differ in runs
    warnings: tuple = ()             # what the report says first: samples left out, ...
    incomplete: tuple = ()           # runs that did not end, compared as asked
    slices: str | None = None        # tasks are slices of this column (--by), not tasks
    gold: tuple | None = None        # the true label per item: columns hold predictions
    metric: tuple | None = None      # (metric, positive) the predictions are for (lm-eval's)
    preference: tuple | None = None  # battles: (format, per battle 1 if B was shown first,
                                     # else 0, or None: not known); columns say who won

    def __repr__(self) -> str:
        extra = "".join(f", {name}={len(set(labels)):,}" for name, labels in
                        (("clusters", self.clusters), ("strata", self.strata),
                         ("tasks", self.tasks)) if labels)
        if self.runs:
            extra += f", runs={tuple(len(runs) for runs in self.runs)}"
        if self.dropped:
            extra += f", dropped={self.dropped:,}"
        files = ", ".join(source.path for source in self.sources[:3])
        return (f"Table(systems={self.systems!r}, n={self.n:,}{extra}, "
                f"from={_shorten(files, 80)})")

    @property
    def n(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    @property
    def proportions(self) -> bool:
        """Every score within [0, 1]: gaps and margins are in points (predictions: a
        metric's, but for MCC and kappa, whose analyses say so)."""
        return self.gold is not None or all(         # each score object once, none hashed
            0 <= value.numerator <= value.denominator for column in self.columns
            for value in dict(zip(map(id, column), column)).values())

    def pair(self, candidate: int) -> Scores:
        """Baseline (as A) against the given candidate (as B), with the design and runs."""
        runs = self.runs or (None,) * len(self.systems)
        return Scores(self.columns[0], self.columns[candidate], self.clusters, self.strata,
                      runs[0], runs[candidate])


# One system's runs as read: per run a label and {item: score}, in file order.
_SystemRuns = collections.namedtuple("_SystemRuns", "name runs")
# Systems' runs joined on the items all scored: per system the means over its runs, the runs
# (None when each system has one), the items dropped and the notes that say so.
_Joined = collections.namedtuple("_Joined", "items columns runs dropped notes")


def _turn(columns, runs, proportions: bool, lower=("score", "asked")) -> tuple:
    """``(columns, runs, note)``: scores whose lower values are better (*lower*: the metric
    and who says so) turned so that a positive gap is an improvement, every system alike:
    *proportions* as 1 - score (0/1 stays 0/1: an error becomes a success), others negated."""
    def turn(column):
        return tuple(1 - v if proportions else -v for v in column)
    runs = None if runs is None else tuple(
        tuple((label, turn(column)) for label, column in system) for system in runs)
    metric, who = map(_printable, lower)
    if lower == ("score", "asked"):              # a file's scores
        what = "lower is better, as asked: each score compared " + (
            "as 1 - score (a success rate)" if proportions else "negated")
    else:
        what = (f"lower {metric} is better, as {who}: compared as " +
                (f"1 - {metric}" if proportions else f"-{metric}"))
    return tuple(map(turn, columns)), runs, f"{what}, so a positive gap is an improvement"


def _turned_joined(joined: _Joined, reads, task=None) -> _Joined:
    """A task's systems joined, turned (``_turn``) where their logs' lower values are better:
    0/1 scores (an error indicator) as 1 - score, so still 0/1; others (a runtime, a
    calibration error, even within [0, 1]) negated, each mean the harness's own but signed."""
    lower = next((read.log.lower for read, _ in reads if read.harness and read.log.lower), None)
    if lower is None:
        return joined
    binary = all(v in (0, 1) for column in joined.columns for v in column) and all(
        v in (0, 1) for system in joined.runs or () for _, column in system for v in column)
    columns, runs, note = _turn(joined.columns, joined.runs, binary, lower)
    return joined._replace(columns=columns, runs=runs, notes=joined.notes + (
        f"{_printable(task)}: {note}" if task else note,))


def _join_runs(systems, order, on_missing: str, excluded=frozenset()) -> _Joined:
    """The items every run of every system scored, in *order*; one missing from some run is
    an error quoting the first few, or with *on_missing* "drop" left out and counted.
    *excluded* items (samples that ended in an error) are left out; their readers say so."""
    for system in systems:
        if len(system.runs) > MAX_RUNS:
            raise ToolError(f"{_printable(system.name)} has {len(system.runs):,} runs; the tool "
                            f"takes at most {MAX_RUNS} per system")
    single = all(len(system.runs) == 1 for system in systems)
    common = set(systems[0].runs[0][1]).intersection(
        *(scores for system in systems for _, scores in system.runs)) - excluded
    partial = [(item, system.name if single else f"{system.name} run {label}")
               for system in systems for label, scores in system.runs
               for item in scores if item not in common and item not in excluded]
    notes, dropped = [], len({item for item, _ in partial})
    if partial:
        if on_missing != "drop":
            shown = ", ".join(f"{_first([item])} only in {_printable(where)}"
                              for item, where in partial[:_SHOW_IDS])
            more = ", ..." if len(partial) > _SHOW_IDS else ""
            raise ToolError(f"{dropped} item(s) are not in every run (first: {shown}{more}); use "
                            f"{_opt('on_missing', 'drop')} to keep the items all runs share")
        notes.append(f"{dropped:,} item(s) not in every run")
    items = [item for item in order if item in common]
    if len(items) < 2:
        raise ToolError(f"the systems share {len(items)} item(s) with scores; need at least 2")
    runs = tuple(tuple((label, tuple(scores[item] for item in items))
                       for label, scores in system.runs) for system in systems)
    columns = tuple(per_run[0][1] if len(per_run) == 1 else
                    tuple(map(lambda *values: _run_mean(values), *(c for _, c in per_run)))
                    for per_run in runs)
    return _Joined(tuple(items), columns, None if single else runs, dropped, tuple(notes))


def _stem(path: str) -> str:
    if path == "-":
        return "stdin"
    base = os.path.basename(path.rstrip("/")) or path
    return base[:-5] if base.endswith(".json.eval") else os.path.splitext(base)[0]


def _system_names(found, paths, names=None) -> list:
    """Names for the systems: *names*; else the models the logs name, if all do and differ;
    else the file (or folder) names; else the paths."""
    if names:
        if len(names) != len(paths):
            raise ToolError(f"{_opt('names')} gives {len(names)} name(s) for {len(paths)} systems")
        return list(names)
    if all(found) and len(set(found)) == len(found):
        return list(found)
    stems = [_stem(p) for p in paths]
    return stems if len(set(stems)) == len(stems) else [_printable(p) for p in paths]


@dataclass(frozen=True)
class TableSpec:
    """Which columns of one file hold what: a column per system (wide), or a system and a
    score column (long); the ids; optional cluster, stratum and run (a row per run) columns."""

    systems: tuple
    ids: tuple | None = None
    cluster: str | None = None
    strata: str | None = None
    run: str | None = None
    system: str | None = None
    score: str | None = None
    gold: str | None = None      # the true labels: the systems' columns hold predictions

    @property
    def labels(self) -> tuple:
        return tuple(key for key in (self.gold, self.cluster, self.strata) if key is not None)


def _split_labels(columns, spec: TableSpec, items=None) -> tuple:
    """``(clusters, strata)`` from the label columns (``spec.labels`` order), or with *items*
    from *columns* {item: its labels}."""
    if items is not None:
        columns = [[columns[item][k] for item in items] for k in range(len(spec.labels))]
    columns = [tuple(column) for column in columns]
    clusters = columns.pop(0) if spec.cluster is not None else None
    strata = columns.pop(0) if spec.strata is not None else None
    return clusters, strata


def _long_table(got: _Collected, source: Source, spec: TableSpec, id_parts: int,
                labels, on_missing: str) -> Table:
    """A table from rows keyed by (item, system?, run?): runs grouped per system."""
    path = _printable(source.path)
    runs, item_labels, others = {}, {}, collections.Counter()     # item_labels: in file order
    for index, key in enumerate(got.ids):
        item = key[0] if id_parts == 1 else key[:id_parts]
        system = key[id_parts] if spec.system is not None else None
        run = key[-1] if spec.run is not None else 1
        item_labels.setdefault(item, [column[index] for column in labels])
        if spec.system is None:
            for name, column in zip(spec.systems, got.columns):
                runs.setdefault(name, {}).setdefault(run, {})[item] = column[index]
        elif system in spec.systems or not spec.systems:
            runs.setdefault(system, {}).setdefault(run, {})[item] = got.columns[0][index]
        else:
            others[system] += 1
    spec = spec if spec.systems else dataclasses.replace(spec, systems=tuple(runs))
    absent = [name for name in spec.systems if name not in runs]
    if absent:
        found = sorted(map(str, set(runs) | set(others)))
        raise ToolError(f"{path}: no rows for system {_shorten(str(absent[0]))} (the "
                        f"{_printable(spec.system)} column holds: "
                        f"{_printable(', '.join(found))[:300]})")
    all_runs = list(dict.fromkeys(run for name in spec.systems for run in runs[name]))
    if spec.run is not None:
        if len(all_runs) == 1:
            raise ToolError(f"{path}: the run column {_shorten(spec.run)} holds one value "
                            f"({_first(all_runs)}); with one run per system drop "
                            f"{_opt('run_col')}")
        for name in spec.systems:
            lacking = [run for run in all_runs if run not in runs[name]]
            if lacking:
                raise ToolError(f"{path}: system {_shorten(str(name))} has no rows for run "
                                f"{_first(lacking)} (runs: {_first(all_runs)})")
    systems = [_SystemRuns(str(name), tuple((run, runs[name][run]) for run in all_runs))
               for name in spec.systems]
    joined = _join_runs(systems, list(item_labels), on_missing)
    notes = [got.note] * bool(got.note) + list(joined.notes)
    if others:
        notes.append(f"rows of {len(others)} other system(s) not compared: "
                     f"{_printable(', '.join(map(str, others)))[:200]}")
    clusters, strata = _split_labels(item_labels, spec, joined.items)
    return Table(tuple(map(str, spec.systems)), joined.columns, joined.items, (source,),
                 got.dropped + joined.dropped, "; ".join(notes), clusters, strata, joined.runs)


def read_table(path: str, spec: TableSpec, options: ReadOptions = ReadOptions()) -> Table:
    """Several systems' scores from one file: a column (or JSON key) per system, or with
    ``spec.system`` one row per item and system; with ``spec.run`` one row per run."""
    if len(set(spec.systems)) != len(spec.systems):
        twice = next(name for name, count in collections.Counter(spec.systems).items()
                     if count > 1)
        raise ToolError(f"a system is named twice: {_shorten(twice)}")
    keyed = spec.system is not None or spec.run is not None
    ids = (spec.ids or ("item",)) + tuple(k for k in (spec.system, spec.run) if k is not None) \
        if keyed else spec.ids
    scores = (spec.score,) if spec.system is not None else spec.systems or None
    if spec.gold is not None and (keyed or options.input_format not in (None, "csv")):
        raise ToolError(f"{_opt('label_col')} reads a CSV file with a column of predictions "
                        "per system")
    read = _read_file(path, _Fields(scores, ids, spec.labels, table=True,
                                    text=spec.gold is not None), options)
    got, source = read.collected, read.source
    width = len(got.columns) - len(spec.labels)
    labels = got.columns[width:]
    if spec.system is None and not spec.systems:      # every column: named as the file has them
        used = len(source.columns) - len(labels)
        spec = dataclasses.replace(spec, systems=tuple(source.columns[used - width:used]))
    if not keyed:
        if len(got.ids) < 2:
            raise ToolError(f"{_printable(source.path)}: need at least 2 items, "
                            f"got {len(got.ids)}")
        gold = tuple(labels[0]) if spec.gold is not None else None
        clusters, strata = _split_labels(labels[gold is not None:], spec)
        return Table(tuple(spec.systems), tuple(tuple(c) for c in got.columns[:width]),
                     got.ids, (source,), got.dropped, got.note, clusters, strata, gold=gold)
    return _long_table(got, source, spec, len(spec.ids or ("item",)), labels, options.on_missing)


def battle_table(data: Battles, systems=None) -> Table:
    """Two systems' battles as a table of who won: per battle 1 for the winner and 0 for the
    loser (0 for both at a tie), so the gap is the net win rate and McNemar's test the
    exact sign test of the decisive battles; a judge's probabilities are the two shares.
    The battles of one prompt are a cluster when a prompt has several.

    >>> t = battle_table(battles([(1, "a", "b", 1), (2, "b", "a", 0.5), (3, "b", "a", 1)]))
    >>> t.systems, t.columns
    (('a', 'b'), ((1, 0, 0), (0, 0, 1)))
    """
    names = tuple(systems) if systems else data.systems
    if len(names) != 2:
        listed = _printable(", ".join(data.systems))[:200]
        raise ToolError(f"{len(data.systems)} systems battle here ({listed}): "
                        f"name the two to compare with {_opt('systems')} (BASELINE,CANDIDATE), or "
                        "rank them all with leaderboard")
    unknown = [name for name in names if name not in data.systems]
    if names[0] == names[1]:
        raise ToolError(f"{_opt('systems')} names {_shorten(names[0])} twice; name two systems")
    if unknown:
        raise ToolError(f"no system {_shorten(unknown[0])} in the battles (systems: "
                        f"{_printable(', '.join(data.systems))[:300]})")
    a, b = map(data.systems.index, names)
    rows = [k for k, pair in enumerate(zip(data.first, data.second)) if set(pair) == {a, b}]
    if len(rows) < 2:
        raise ToolError(f"{len(rows)} battle(s) between {_shorten(names[0])} and "
                        f"{_shorten(names[1])}; a comparison needs two or more")
    shares = [data.shares[k] if data.first[k] == b else 1 - data.shares[k] for k in rows]
    if all(s in (0, _HALF, 1) for s in shares):
        columns = (tuple(int(s == 0) for s in shares), tuple(int(s == 1) for s in shares))
    else:
        columns = (tuple(1 - s for s in shares), tuple(shares))
    prompts = tuple(data.prompts[k] for k in rows)
    clusters = prompts if len(set(prompts)) < len(prompts) else None
    positions = tuple(int(data.first[k] == b) for k in rows) if data.positioned else None
    return Table(names, columns, tuple(k + 1 for k in rows), data.sources,
                 dropped_note="; ".join(data.notes), clusters=clusters,
                 preference=(data.kind, positions))


# --- Run files and harness folders: one system per --baseline / --candidate ---
#
# A harness log says which model ran which task, and (Inspect) whether the run ended;
# two logs are compared only when they ran the same task on the same inputs, and a run
# that did not finish is refused unless asked for -- ids alone (0, 1, 2, ...) prove
# nothing.  Folders are read as the harnesses write them: an lm-eval output folder, an
# Inspect log folder or eval set (its logs.json listing skipped, a retried task's
# complete log used), a HELM suite of run folders (symlinks followed).

def _expand_paths(value: str) -> list:
    """The files one --baseline or --candidate names: a path, comma-separated paths, or a
    (quoted) glob pattern; several are runs."""
    import glob
    if value == "-" or os.path.exists(value):
        return [value]
    paths = []
    for part in value.split(","):
        part = part.strip()
        if any(ch in part for ch in "*?[") and not os.path.exists(part):
            matched = sorted(glob.glob(part))
            if not matched:
                raise ToolError(f"no file matches {_shorten(part)}")
            paths += matched
        elif part:
            paths.append(part)
    if not paths:
        raise ToolError(f"no file named in {_shorten(value)}")
    return paths


def _inspect_header(path: str) -> dict:
    """An Inspect log's eval spec and status without its samples: an ``.eval``'s header (or
    journal start), or the head of a ``.json`` log (its spec comes before its samples)."""
    import zipfile
    try:
        if path.endswith(".eval"):
            with _Zip(path, path) as archive:       # a ToolError is the log's own
                data = archive.read(_inspect_members(archive)[0])
            try:
                log = _decode_json(data.decode("utf-8-sig"), path)
            except (ToolError, UnicodeDecodeError):         # said when the log is read
                return {}
            return log if isinstance(log, dict) else {}
        text = _head(path)
    except (OSError, KeyError, zipfile.BadZipFile, NotImplementedError):
        return {}
    found = {}
    for key in ("task", "model"):
        match = re.search(rf'"{key}"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
        if match:
            found[key] = json.loads(f'"{match.group(1)}"')
    status = re.search(r'"status"\s*:\s*"([a-z]+)"', text)
    return {"eval": found, "status": status.group(1) if status else None}


# One harness log found in a folder: which model ran which task, and whether the run ended
# (always, for a harness without a status).
_LogFile = collections.namedtuple("_LogFile", "path task model complete", defaults=(True,))


def _log_of(root: str, name: str) -> _LogFile | None:
    """The harness log a file is, if any; one named as a log that is not a regular file (a
    pipe, a device) is refused before it is opened."""
    path, head = os.path.join(root, name), ""
    if name.endswith((".json", ".jsonl", ".eval")):
        try:
            head = _head(path, 4096)
        except FileNotFoundError:                   # a link to nothing: no log
            return None
        except OSError as err:
            raise ToolError(f"cannot read {_printable(path)}: {err.strerror}") from None
    match = _LM_EVAL_NAME.fullmatch(name)
    if match:
        return _LogFile(path, match.group(1), _lm_eval_model(os.path.abspath(path)))
    if name == "per_instance_stats.json":
        return _LogFile(path, *_helm_run(root, _helm_spec(os.path.abspath(path))))
    an_inspect = '"eval"' in head or '"version"' in head and '"status"' in head
    if name in ("logs.json", "eval-set.json") or not (     # an eval set's listings: not logs
            name.endswith(".eval") or name.endswith(".json") and an_inspect):
        return None
    log = _inspect_header(path)
    spec = _typed(log, "eval", dict, {})
    task, model = _typed(spec, "task", str, _stem(path)), _typed(spec, "model", str)
    return _LogFile(path, task, model, log.get("status") == "success")


def _harness_logs(folder: str, notes: list) -> list:
    """Every harness log in a folder and its subfolders (four levels: a HELM
    ``benchmark_output/runs/SUITE/RUN``), symlinked folders followed once each; one that leads
    outside the folder given (a suite of linked runs) is read but not walked further."""
    found, seen, inside, unseen = [], set(), os.path.realpath(folder), None
    for root, dirs, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        too_deep = os.path.relpath(root, folder).count(os.sep) >= 3
        if too_deep and dirs and unseen is None:
            unseen = root
        deep = too_deep or os.path.commonpath([inside, real]) != inside   # a link: not walked
        dirs[:] = [] if deep else sorted(d for d in dirs if not d.startswith("."))
        found += [log for log in (_log_of(root, name) for name in sorted(files)) if log]
    deeper = "" if unseen is None else (f"folders more than four levels down (as in "
                                        f"{_printable(unseen)}) are not searched")
    if not found:
        raise ToolError(f"{_printable(folder)}: no lm-eval samples_<task>_<time>.jsonl files, "
                        "Inspect logs or HELM per_instance_stats.json in it (or its subfolders)"
                        + (f"; {deeper}: give a deeper folder" if deeper else ""))
    if deeper:
        notes.append(f"{_printable(folder)}: {deeper}; any logs there are not read")
    for log in found:                    # a log linked from elsewhere: read, and said
        target = os.path.realpath(log.path)
        if os.path.islink(log.path) and os.path.commonpath([inside, target]) != inside:
            notes.append(f"{_printable(log.path)} is a link to {_printable(target)}, outside "
                         f"{_printable(folder)}; it is read as one of its logs")
    return found


def _by_task(logs, folder: str, notes: list) -> dict:
    """{task: path} for one model's logs: of several logs of one task (a retried Inspect
    task) the one run that ended is used, and a note says so; two that ended are refused."""
    tasks, chosen = {}, {}
    for log in logs:
        tasks.setdefault(log.task, []).append(log)
    for task, group in tasks.items():
        plain = [log for log in group if "data_augmentation=" not in
                 os.path.basename(os.path.dirname(log.path))]
        if len(group) > 1 and len(plain) == 1:          # HELM: a run and its perturbed runs
            chosen[task] = plain[0].path
            note = (f"{_printable(folder)}, task {_printable(task)}: the plain run read; "
                    f"{len(group) - 1} data_augmentation run(s) left out (they repeat its "
                    "instances; their perturbed records are HELM's robustness and fairness "
                    "measures, not compared)")
            notes += [note] if note not in notes else []        # a suite: once, not per model
            continue
        ended = [log for log in group if log.complete]
        if len(group) > 1 and len(ended) != 1:
            shown = ", ".join(os.path.basename(log.path) for log in group)
            raise ToolError(f"{_printable(folder)} holds {len(group)} logs of task "
                            f"{_shorten(task)} and {len(ended)} that ended "
                            f"({_printable(shown)[:200]}); keep one run per task in the folder")
        chosen[task] = (ended or group)[0].path
        if len(group) > 1:
            notes.append(f"{_printable(folder)}, task {_printable(task)}: {len(group)} logs, "
                         f"the one that ended used ({_printable(os.path.basename(chosen[task]))})"
                         "; the others did not finish")
    return chosen


@dataclass(frozen=True)
class RunsSpec:
    """How run files are read: the score column or key (a harness log's metric or scorer;
    None: the only one), ids, labels; for harness folders the tasks and models to take."""

    score: str | None = None
    ids: tuple | None = None
    cluster: str | None = None
    strata: str | None = None
    tasks: tuple | None = None
    names: tuple | None = None
    models: tuple | None = None
    slices: bool = False          # the strata column is --by's: slices


def _file_notes(pairs) -> list:
    """Readers' notes as ``(path, note)`` pairs, each note said once: a note that holds for
    several files names how many and the first of them.

    >>> _file_notes([("a.jsonl", "filter x"), ("b.jsonl", "filter x"), ("c.csv", "2 rows")])
    ['filter x (2 files: a.jsonl, b.jsonl)', 'c.csv: 2 rows']
    """
    where = {}
    for path, note in pairs:
        where.setdefault(note, []).append(path)
    return [f"{paths[0]}: {note}" if len(paths) == 1 else
            f"{note} ({len(paths)} files: {', '.join(paths[:2])}{', ...' * (len(paths) > 2)})"
            for note, paths in where.items()]


def _file_runs(read: _FileRead, path: str, named: bool) -> list:
    """The runs in one file, ``[(label, {item: score})]``: a harness log's epochs or trials."""
    got = read.collected
    if not read.harness:
        return [(_stem(path), dict(zip(got.ids, got.columns[0])))]
    by_run = {}
    for (item, run), score in zip(got.ids, got.columns[0]):
        by_run.setdefault(run, {})[item] = score
    if len(by_run) == 1 and named:
        return [(_stem(path), next(iter(by_run.values())))]
    return [(f"{_stem(path)}:{run}" if named else f"{run}", scores)
            for run, scores in by_run.items()]


@dataclass
class _Findings:
    """What the readers found about the runs as a whole: notes, warnings for the report's
    head, incomplete runs (for the verdict line), rows left out."""

    notes: list = dataclasses.field(default_factory=list)     # (path, note)
    warnings: list = dataclasses.field(default_factory=list)
    incomplete: list = dataclasses.field(default_factory=list)
    dropped: int = 0


def _same_task(logs, options: ReadOptions) -> None:
    """Logs (``(task, path)`` pairs) of different tasks are not one test, unless allowed."""
    if len({task for task, _ in logs}) > 1 and not options.allow_different_tasks:
        shown = ", ".join(f"{_printable(path)} is task {_shorten(str(task))}"
                          for task, path in logs[:3])
        raise ToolError(f"not the same test: {shown} ({_opt('allow_different_tasks', True)} "
                        "compares them anyway, for a renamed task)")


def _vet(reads, options: ReadOptions, found: _Findings, task=None) -> frozenset:
    """Checks that harness logs (*reads*: ``(read, path)`` pairs) are of one test (the same
    task, inputs, shots; runs that ended), unless allowed; returns the items to leave out,
    samples that ended in an error."""
    logs = [(read, path) for read, path in reads if read.harness]
    _same_task([(read.log.task, path) for read, path in logs], options)
    unnamed = [path for read, path in logs if read.log.format == "helm" and read.log.task is None]
    if unnamed:
        found.warnings.append(f"{_printable(unnamed[0])}: HELM stats outside their run folder "
                              "(SCENARIO:ARGS,model=...) name no task, so whether the runs are "
                              "of one test was not checked")
    for field, claim, what, allow in (
            ("shots", "is {}-shot", "", "allow_different_prompts"),
            ("version", "ran version {}", " of the task", "allow_different_tasks")):
        said = [(getattr(read.log.claimed, field), path) for read, path in logs
                if read.log.claimed and getattr(read.log.claimed, field) is not None]
        if len({v for v, _ in said}) > 1:
            shown = ", ".join(f"{_printable(path)} {claim.format(v)}" for v, path in said[:3])
            _refuse_or_warn(f"not the same test: {shown}{what}, as the runs' results files say",
                            allow, options, found)
    first = logs[0][0].inputs if logs else {}
    for read, path in logs[1:]:
        other, kinds = read.inputs, {}
        _unchecked(logs[0], (read, path), first, other, found)
        for item, print_ in first.items():
            kind = _difference(print_, other.get(item, print_))
            if kind:
                kinds.setdefault(kind, []).append(item)
        where = f"in {_printable(path)} than in {_printable(logs[0][1])}"
        # lm-eval runs whose prompts differ only in the chat template of each one's own model
        chats = [r.log.claimed and r.log.claimed.template for r in (logs[0][0], read)]
        chat = None not in chats and chats[0][0] != chats[1][0] and chats[0][1:] == chats[1][1:]
        for kind, allow in (("input", "allow_different_tasks"),
                            ("target", "allow_different_targets"),
                            ("prompt", "allow_different_prompts")):
            differ = kinds.get(kind)
            if differ and kind == "prompt" and chat:
                found.notes.append((path, "the prompts differ as each run applied its model's "
                                    "own chat template, as the runs' results files say "
                                    "(chat_template_sha)"))
            elif differ:
                what = {"input": "a different input", "target": "a different target (the "
                        "answer each is graded against)", "prompt": "the same instance under "
                        "another run spec (HELM's scenario, adapter method or in-context "
                        "examples)" if read.log.format == "helm" else "the same document in "
                        "a different prompt (few-shot examples, template or system "
                        "instruction)"}[kind]
                _refuse_or_warn(f"not the same items: {len(differ)} id(s) hold {what} "
                                f"{where} (first: {_first(differ)})", allow, options, found)
    lower = {bool(read.log.lower): path for read, path in logs if read.log.format == "lm-eval"}
    if len(lower) > 1:
        raise ToolError(f"{_printable(lower[True])} is a metric whose lower values are better, "
                        f"as its run's results file says; {_printable(lower[False])} has no "
                        "results file that says so: give each run's results file beside its "
                        f"samples, or {_opt('lower_is_better', True)}")
    excluded = set()
    for read, path in logs:
        log = read.log
        held = f"{log.held} of {log.expected}" if log.expected else f"{log.held}"
        if log.status != "success":
            what = "no header: it was stopped" if log.status == "started" else \
                f"status {_printable(log.status)}"
            if not options.allow_incomplete:
                raise ToolError(f"{_printable(path)} is an incomplete run ({what}; {held} "
                                f"samples); {_opt('allow_incomplete', True)} compares what it "
                                f"holds")
            found.incomplete.append(f"incomplete run: {held} samples in {_printable(path)}")
        elif log.expected and log.held < log.expected:
            found.warnings.append(f"{_printable(path)} says it ended ({_printable(log.status)}) "
                                  f"but holds {held} samples its header lists: the others are "
                                  "missing from the file")
        if log.claimed:
            found.warnings += _claim_warning(log.claimed, read.collected, path, log.format)
        if log.errors:
            excluded.update(log.errors)
            where = f" (task {_printable(task)})" if task else ""
            found.warnings.append(f"{len(log.errors)} sample(s) of {_printable(path)}{where} "
                                  f"ended in an error, with no score (first: "
                                  f"{_first(list(log.errors))}): left out for every system, as "
                                  "Inspect's own metrics leave them out")
    for read, path in reads:
        found.dropped += read.collected.dropped
        found.notes += [(read.source.path, note) for note in (
            read.collected.note, read.log and read.log.note) if note]
    return frozenset(excluded)


def _unchecked(one, two, first: dict, other: dict, found: _Findings) -> None:
    """A warning for the items two logs share whose inputs could not be compared: one log
    records none for them (a HELM run without instances.json, or one listing other ids)."""
    theirs = {item for item, _ in two[0].collected.ids}
    missing = list(dict.fromkeys(item for item, _ in one[0].collected.ids if item in theirs and
                                 not (first.get(item, _UNPRINTED).input and
                                      other.get(item, _UNPRINTED).input)))
    if missing:
        recorded = [any(print_.input for print_ in prints.values()) for prints in (first, other)]
        blank = "neither log records their inputs" if not any(recorded) else \
            f"{_printable(two[1] if recorded[0] else one[1])} records none for them"
        found.warnings.append(f"whether {len(missing):,} item(s) hold the same input in "
                              f"{_printable(one[1])} and {_printable(two[1])} was not checked: "
                              f"{blank} (first: {_first(missing)})")


def _refuse_or_warn(what: str, allow: str, options: ReadOptions, found: _Findings) -> None:
    """A difference between the runs refused, unless *allow* (an option) or
    allow_different_tasks (every check) says to compare them anyway: then a warning."""
    if not (getattr(options, allow) or options.allow_different_tasks):
        raise ToolError(f"{what}; {_opt(allow, True)} compares them anyway")
    found.warnings.append(f"{what}; compared anyway, as asked")


def _difference(a: _Fingerprint, b: _Fingerprint) -> str | None:
    """How an item's test differs between two runs: "input", "target" (the same input or
    prompt, graded against another answer: a label fixed), "prompt" (the same lm-eval
    document prompted otherwise, or a HELM run set up otherwise), or None.

    >>> _difference(_Fingerprint("doc1", "t1", "p1"), _Fingerprint("doc2", "t2", "p1"))
    'target'
    >>> _difference(_Fingerprint("doc1", "t1", "p1"), _Fingerprint("doc1", "t1", "p5"))
    'prompt'
    >>> _difference(_Fingerprint("doc1", "t1"), _Fingerprint("", "t1"))   # not recorded
    """
    a, b = (x._replace(**{name: "" for name in x._fields if not getattr(y, name)})
            for x, y in ((a, b), (b, a)))          # each part compared where both record it
    if a.setup != b.setup:
        return "prompt"
    same_prompt = a.prompt != "" and a.prompt == b.prompt
    if a.target != b.target and (a.input == b.input or same_prompt):
        return "target"
    if a.input != b.input and not same_prompt:
        return "input"
    return "prompt" if a.input == b.input and a.prompt != b.prompt else None


def _claim_warning(claimed: tuple, collected: _Collected, path: str, harness: str) -> list:
    """A warning when the samples' mean is not what the run's results file (lm-eval) or the
    log's results (Inspect) say."""
    label, value, samples = claimed[:3]
    scores = collected.columns[0]
    if value is None or scores and isinstance(scores[0], tuple):    # a corpus metric's pairs
        return []
    mean = math.fsum(map(float, scores)) / len(scores) if scores else math.nan
    if math.isclose(mean, value, rel_tol=1e-9, abs_tol=1e-12) and samples in (None, len(scores)):
        return []
    count = f" over {samples:,} samples" if samples is not None else ""
    source = "the log's results give" if harness == "inspect" else "the run's results file gives"
    return [f"{_printable(path)}: {source} {_printable(label)} "
            f"{value:.6g}{count}, but its {len(scores):,} samples average {mean:.6g}: the "
            "harness aggregates this metric otherwise than by a mean, or the files are not of "
            "one run; compared here: the per-sample mean"]


def _shared_tasks(listings: list, wanted) -> tuple:
    """``(shared, lonely)``: the tasks (*wanted*, if given) every folder holds, and those only
    some hold."""
    tasks = list(listings[0])
    if wanted is not None:
        unknown = [t for t in wanted if not any(t in listing for listing in listings)]
        if unknown:
            raise ToolError(f"{_opt('tasks')} names {_shorten(unknown[0])}, which no folder holds "
                            f"(tasks: {_printable(', '.join(sorted(tasks)))[:300]})")
        tasks = list(wanted)
    shared = [t for t in tasks if all(t in listing for listing in listings)]
    lonely = sorted({t for listing in listings for t in listing
                     if wanted is None or t in wanted} - set(shared))
    if not shared:
        raise ToolError(f"the folders share no task (tasks: "
                        f"{_printable(', '.join(sorted(set().union(*listings))))[:300]})")
    return shared, lonely


def _folder_systems(groups, spec: RunsSpec, notes: list) -> tuple:
    """``(names, [{task: path}] per system)``: a folder per system, each of one model's
    logs, or one folder holding several models', chosen by name."""
    if any(len(group) > 1 for group in groups):
        raise ToolError("give one harness folder per system")
    found = [{} for _ in groups]              # per folder {model: its logs}
    for models, group in zip(found, groups):
        for log in _harness_logs(group[0], notes):     # a log naming no model: the folder's
            models.setdefault(log.model or _stem(group[0]), []).append(log)
    if len(groups) == 1:
        models, folder = found[0], groups[0][0]
        if spec.models == ():                   # a leaderboard: every model the folder holds
            spec = dataclasses.replace(spec, models=tuple(models))
        if spec.models is None or len(spec.models) < 2:
            raise ToolError(f"{_printable(folder)} holds the runs of {len(models)} model(s) "
                            f"({_printable(', '.join(models))[:200]}); name two or more, the "
                            f"baseline first, with {_opt('systems')}")
        absent = [m for m in spec.models if m not in models]
        if absent:
            raise ToolError(f"{_printable(folder)} holds no runs of {_shorten(absent[0])} "
                            f"(models: {_printable(', '.join(models))[:200]})")
        return list(spec.models), [_by_task(models[m], folder, notes) for m in spec.models]
    for group, models in zip(groups, found):
        if len(models) > 1:
            raise ToolError(f"{_printable(group[0])} holds the runs of {len(models)} models "
                            f"({_printable(', '.join(models))[:200]}); give that folder once, "
                            f"with {_opt('systems')} naming them, baseline first")
    return [next(iter(m)) for m in found], [_by_task(next(iter(m.values())), g[0], notes)
                                            for m, g in zip(found, groups)]


def _read_folders(groups, spec: RunsSpec, options: ReadOptions) -> Table:
    """Harness folders: logs matched by task, items joined on (task, id), each task with the
    runs it has."""
    found, notes = _Findings(), []
    names, listings = _folder_systems(groups, spec, notes)
    families = [_lm_eval_groups(listing) for listing in listings]
    wanted = spec.tasks and list(dict.fromkeys(
        task for name in spec.tasks for task in families[0].get(name, (None, (name,)))[1]))
    shared, lonely = _shared_tasks(listings, wanted)
    fields = _Fields((spec.score,) if spec.score is not None else (), ("doc_id",))
    loose = dataclasses.replace(options, filter=None if options.filter is None else
                                "\0" + options.filter)
    sources, per_task, offered, metrics, task_reads = [], [], set(), {}, {}
    for task in shared:
        reads = [(_read_file(listing[task], fields, loose), listing[task]) for listing in listings]
        for read, path in reads:
            if not read.harness:
                raise ToolError(f"{_printable(path)}: not a harness log")
            if read.log.corpus:
                raise ToolError(f"{_printable(path)}: lm-eval's {read.log.corpus[0]} is a metric "
                                "of the whole corpus, not pooled across tasks: compare this "
                                "task's samples files, one per system")
            sources.append(read.source)
            offered.update(read.log.filters)
        excluded = _vet(reads, options, found, task)
        metrics[task] = reads[0][0].log.stream.used[-1]
        systems = [_SystemRuns(name, tuple(_file_runs(read, path, False)))
                   for name, (read, path) in zip(names, reads)]
        order = list(dict.fromkeys(item for item, _ in reads[0][0].collected.ids))
        per_task.append((task, _join_runs(systems, order, "drop" if found.incomplete else
                                          options.on_missing, excluded)))
        task_reads[task] = reads
    if options.filter is not None and not any(
            name.strip() in offered for name in options.filter.split(",")):
        raise ToolError(f"{_opt('filter')} {_shorten(options.filter)}: no task in the folders "
                        "offers that lm-eval filter (they offer: "
                        f"{_printable(', '.join(sorted(offered)))[:200]})")
    if lonely:
        notes.append(f"{len(lonely)} task(s) in one folder only, left out: "
                     f"{_printable(', '.join(lonely))[:300]}")
    found.warnings += _mixed_scales(metrics, per_task, options.pool)
    for family in families[0]:
        _group_note(family, families, per_task, names, metrics, options.pool, found, notes)
    per_task = [(task, _turned_joined(joined, task_reads[task], task if len(per_task) > 1
                                      else None)) for task, joined in per_task]
    items = tuple((task, item) for task, joined in per_task for item in joined.items)
    columns = tuple(tuple(v for _, joined in per_task for v in joined.columns[k])
                    for k in range(len(names)))
    runs, task_runs = _task_runs(per_task, len(names), notes)
    return Table(tuple(_system_names(names, [g[0] for g in groups] if len(groups) > 1 else names,
                                     spec.names)), columns, items, tuple(sources),
                 found.dropped + sum(j.dropped for _, j in per_task),
                 "; ".join(_file_notes(found.notes) + notes +
                           [n for _, j in per_task for n in j.notes]),
                 runs=runs, tasks=tuple(t for t, _ in items) if len(shared) > 1 else None,
                 task_runs=task_runs, warnings=tuple(found.warnings),
                 incomplete=tuple(found.incomplete))


def _lm_eval_groups(listing: dict) -> dict:
    """{group: (its results by system key, its tasks)} as the lm-eval results files beside a
    folder's samples (*listing*: {task: path}) say: ``group_subtasks``, ``groups``."""
    found, files = {}, dict.fromkeys(           # each run's results file, once
        os.path.join(os.path.dirname(path), f"results_{match.group(2)}.json")
        for path in listing.values() if (match := _LM_EVAL_NAME.search(os.path.basename(path))))
    for results in files:
        data = _results_file(results) or {}
        members, values = (_typed(data, key, dict, {}) for key in ("group_subtasks", "groups"))
        for group, tasks in members.items():
            if isinstance(tasks, list) and tasks and all(isinstance(t, str) for t in tasks):
                found[group] = (_typed(values, group, dict, {}), tuple(tasks))
    return found


def _group_note(group: str, families: list, per_task, names, metrics: dict, pool, found,
                notes) -> None:
    """Where the tasks pooled are exactly an lm-eval group's, whether the pooled mean is the
    number the harness reports for the group (its aggregate: the items' mean, or with
    weight_by_size false the tasks' mean), read off the group's reported values."""
    tasks = families[0][group][1]
    if sorted(tasks) != sorted(task for task, _ in per_task) or len(tasks) < 2 or \
            len(set(metrics.values())) > 1:
        return
    metric = next(iter(metrics.values()))
    reported, micro, macro = [], [], []
    for k, family in enumerate(families):
        values = [float(v) for key, v in family.get(group, ({}, ()))[0].items()
                  if key.split(",")[0] == metric and isinstance(v, numbers.Real) and
                  not isinstance(v, bool) and abs(v) < 1e300]
        columns = [[float(v) for v in joined.columns[k]] for _, joined in per_task]
        micro.append(math.fsum(map(math.fsum, columns)) / sum(map(len, columns)))
        macro.append(math.fsum(math.fsum(c) / len(c) for c in columns) / len(columns))
        reported.append(abs(values[0]) if len(values) == 1 else None)
    if None in reported:
        return

    def near(ours):
        return all(math.isclose(abs(a), b, rel_tol=1e-9, abs_tol=1e-12)
                   for a, b in zip(ours, reported))
    kind = "macro" if near(macro) and not near(micro) else "micro" if near(micro) else None
    shown = ", ".join(f"{value:.4f} for {_printable(name)}" for value, name in
                      zip(reported, names))
    head = f"lm-eval's group {_printable(group)} ({_printable(', '.join(tasks))}) reports {shown}"
    if kind is None:
        found.warnings.append(f"{head}: neither the mean of these samples nor of their tasks' "
                              "means; the pooled comparison is not the group's number")
    elif (kind == "macro") == (pool == "macro"):
        notes.append(f"{head}, the " + ("mean of its tasks' means (weight_by_size false)" if
                                        kind == "macro" else "mean of its items") +
                     ": the pooled comparison's")
    else:
        found.warnings.append(
            f"{head}, the " + ("mean of its tasks' means (weight_by_size false), not the mean "
                               f"of its items that the pooled comparison gives: "
                               f"{_opt('pool', 'macro')} compares the group's number"
                               if kind == "macro" else "mean of its items, not the mean of its "
                               f"tasks' means that {_opt('pool', 'macro')} gives"))


def _mixed_scales(metrics: dict, per_task, pool: str | None) -> list:
    """Tasks whose metrics differ in scale -- in name where not all are proportions (acc on
    0/1 with abs_err on 0..20), or proportions beside others -- are not pooled unless *pool*
    asks: their mean has no one scale.  Asked, a warning says so."""
    unit = {task: all(0 <= value <= 1 for column in joined.columns for value in set(column))
            for task, joined in per_task}
    if len(set(unit.values())) < 2 and (len(set(metrics.values())) < 2 or all(unit.values())):
        return []
    kinds = {}                                  # a task of each metric and scale
    for task, metric in metrics.items():
        kinds.setdefault((metric, unit[task]), task)
    shown = ", ".join(f"{_printable(task)}: {_printable(metric)}" + (
        "" if in_unit else " (not in [0, 1])") for (metric, in_unit), task in
        list(kinds.items())[:4])
    what = f"the tasks' metrics differ in scale ({shown}), so a pooled mean has no one scale"
    if pool is None:
        raise ToolError(f"{what}: compare them one task at a time ({_opt('tasks')} "
                        f"{_printable(next(iter(kinds.values())))}), or give "
                        f"{_opt('pool', 'strata')} to pool them anyway")
    return [f"{what}: pooled as asked; read the tasks one by one"]


def _task_runs(per_task, systems: int, notes: list) -> tuple:
    """``(runs, task_runs)`` of harness folders: one table of runs when every task has the
    same runs (none if a system has one), else each task's own (``task_runs``)."""
    shapes = [None if joined.runs is None else tuple(tuple(label for label, _ in system)
                                                     for system in joined.runs)
              for _, joined in per_task]
    if all(shape is None for shape in shapes):
        return None, None
    if len(per_task) == 1 or len(set(shapes)) == 1:
        joined = per_task[0][1]
        if any(len(system) < 2 for system in joined.runs):
            notes.append(f"{' and '.join(str(len(s)) for s in joined.runs)} runs: compared "
                         "single-run, on each item's mean over its runs (a two-level interval "
                         "needs two or more runs of every system)")
            return None, None
        runs = tuple(tuple((label, tuple(v for _, joined in per_task
                                         for v in joined.runs[k][r][1]))
                           for r, (label, _) in enumerate(per_task[0][1].runs[k]))
                     for k in range(systems))
        return runs, None
    return None, tuple((task, joined.runs) for task, joined in per_task)


def read_runs(groups, spec: RunsSpec, options: ReadOptions = ReadOptions()) -> Table:
    """One system per group (the baseline's first) of run files or harness folders, joined
    on the item id -- on (task, id) for folders of many tasks.  Several files in a group
    are runs of that system, as are an Inspect log's epochs and HELM's train trials.  Harness
    logs are compared only when they ran the same task on the same inputs and ended."""
    groups = [tuple(group) for group in groups]
    folders = {os.path.isdir(p) for group in groups for p in group}
    if len(folders) > 1:
        raise ToolError("give harness folders for every system or files for every system, "
                        "not both")
    label_spec = TableSpec((), cluster=spec.cluster, strata=spec.strata)
    labels = label_spec.labels
    asked = " and ".join(_opt(name) for name, key in (
        ("cluster_col", spec.cluster), ("by" if spec.slices else "strata_col", spec.strata))
        if key)
    harness_labels = ToolError(f"{asked} {'name' if ' and ' in asked else 'names'} a column "
                               "of a file of scores; harness logs have no such column to read "
                               + ("(slices are read from an lm-eval or Inspect log's own "
                                  "fields, such as doc.subject or metadata.category, one log per "
                                  "system; not from folders or HELM)" if spec.slices else
                                  "(the tasks of a harness run are already strata of its pooled "
                                  "comparison)"))
    if folders == {True}:
        if labels:
            raise harness_labels
        return _read_folders(groups, spec, options)
    named = [_log_of(os.path.dirname(path), os.path.basename(path)) for group in groups
             for path in group if _LM_EVAL_NAME.fullmatch(os.path.basename(path)) or
             os.path.basename(path) == "per_instance_stats.json" and
             ":" in os.path.basename(os.path.dirname(os.path.abspath(path)))]
    logs_by_name = any(_LM_EVAL_NAME.fullmatch(os.path.basename(path)) or path.endswith(
        (".eval", "per_instance_stats.json")) for group in groups for path in group)
    if labels and logs_by_name and (spec.cluster is not None or not spec.slices):
        raise harness_labels                 # before a log is read for a key it lacks
    _same_task([(log.task, log.path) for log in named if log is not None], options)
    fields = _Fields((spec.score,) if spec.score is not None else (),
                    spec.ids if spec.ids is not None else ("item",), labels)
    found, systems, names_found, all_reads = _Findings(), [], [], []
    for index, group in enumerate(groups):
        reads = [_read_file(path, fields if index == 0 and i == 0 else
                           _Fields(fields.scores, fields.ids), options)
                 for i, path in enumerate(group)]
        if labels and any(read.harness for read in reads) and (
                spec.cluster is not None or not spec.slices or
                any(read.log.format == "helm" for read in reads if read.harness)):
            raise harness_labels
        if len(group) > 1 and any(read.harness and read.log.corpus for read in reads):
            raise ToolError("lm-eval's corpus metrics (f1, mcc) compare one log per system: "
                            "a metric of the whole corpus has no per-sample value to average "
                            "over runs")
        all_reads += zip(reads, group)
        systems.append([run for read, path in zip(reads, group)
                        for run in _file_runs(read, path, len(group) > 1)])
        models = {read.log and read.log.system for read in reads}
        names_found.append(models.pop() if len(models) == 1 else None)
    excluded = _vet(all_reads, options, found)
    first, harness = all_reads[0][0].collected, all_reads[0][0].harness
    order = [item[0] if harness else item for item in first.ids]
    item_labels = dict(zip(order, zip(*first.columns[1 + harness:])))   # a log's: after its digest
    shown = [group[0] if len(group) == 1 else       # several runs: their names' common prefix
             os.path.commonprefix([_stem(p) for p in group]).rstrip("_-.: ") or group[0]
             for group in groups]
    names = _system_names(names_found, shown, spec.names)
    named = [_SystemRuns(name, tuple(runs)) for name, runs in zip(names, systems)]
    joined = _turned_joined(_join_runs(named, list(dict.fromkeys(order)),  # incomplete: drop
                                       "drop" if found.incomplete else options.on_missing,
                                       excluded), all_reads)
    clusters, strata = _split_labels(item_labels, label_spec, joined.items)
    corpus = {read.log.corpus for read, _ in all_reads if read.harness}
    gold, columns = _golds(names, joined, corpus, bool(labels))
    return Table(tuple(names), columns, joined.items, tuple(r.source for r, _ in all_reads),
                 found.dropped + joined.dropped,
                 "; ".join(_file_notes(found.notes) + list(joined.notes)),
                 clusters, strata, joined.runs, warnings=tuple(found.warnings),
                 incomplete=tuple(found.incomplete), gold=gold,
                 metric=corpus.pop() if gold is not None else None)


def _golds(names, joined: _Joined, corpus: set, labelled: bool) -> tuple:
    """``(gold, columns)``: lm-eval's [gold, prediction] pairs split into the golds (the same
    in every log, or refused) and each system's predictions; else (None, the columns)."""
    if corpus <= {None}:
        return None, joined.columns
    if len(corpus) > 1 or joined.runs is not None or labelled:
        raise ToolError("lm-eval's corpus metrics (f1, mcc) compare one log per system, all of "
                        "the same metric, without slices or clusters" if len(corpus) > 1 or
                        None in corpus else "lm-eval's corpus metrics (f1, mcc) compare one log "
                        "per system (no runs to average), without slices or clusters")
    gold = tuple(g for g, _ in joined.columns[0])
    for name, column in zip(names[1:], joined.columns[1:]):
        for item, label, (other, _) in zip(joined.items, gold, column):
            if label != other:
                raise ToolError(f"item {_first([item])}: gold {_printable(str(label))} in "
                                f"{_printable(names[0])}'s log, {_printable(str(other))} in "
                                f"{_printable(name)}'s: the logs are not of the same data")
    return gold, tuple(tuple(p for _, p in column) for column in joined.columns)


def read_scores_csv(path: str, a_col: str = CSV_COLUMNS[1], b_col: str = CSV_COLUMNS[2],
                    id_col: str | None = None) -> Table:
    """Two systems' per-item scores from a CSV (the shipped file's columns by default)."""
    return read_table(path, TableSpec((a_col, b_col), None if id_col is None else (id_col,)),
                      ReadOptions("csv"))


# --- Files written: atomic, never over an input ---

class _Progress(_Closing):
    """``progress(done, total)``: a line on stderr, only on a terminal and after *delay*."""

    def __init__(self, label: str, stream=None, enabled: bool = True, delay: float = 1.0):
        self.label, self.delay, self.last, self.drawn = label, delay, 0.0, False
        self.stream = stream if stream is not None else sys.stderr
        try:                                    # stderr may be closed (2>&-): then no progress
            self.enabled = enabled and self.stream.isatty()
        except (AttributeError, OSError, ValueError):
            self.enabled = False
        self.start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        elapsed = now - self.start
        if not self.enabled or elapsed < self.delay or (now - self.last < 0.2 and done < total):
            return
        self.last = now
        left = elapsed * (total - done) / done if done else 0.0
        self.stream.write(f"\r{self.label}: {done}/{total} ({100 * done // total}%), "
                          f"about {left:.0f} s left ")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str, text: str) -> None:
    """Write *text* to *path* whole or not at all: a temporary file beside the target, then
    a rename.  A symlink's target is replaced; a replaced file keeps its permissions, a new
    one gets ``0666 & ~umask``; the temporary file is removed on any error or signal."""
    target = os.path.realpath(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=os.path.dirname(target))
    except OSError as err:
        raise ToolError(f"cannot write {_printable(path)}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise ToolError(f"cannot write {_printable(path)}: {err.strerror}") from None
        raise


def write_scores_csv(path: str, scores: Scores) -> None:
    """Write the per-item scores of a simulated run, atomically, as the CSV the article
    ships (``item,system_a_correct,system_b_correct``, \\n line ends); simulated runs get a
    row per item and run, clustered items their cluster."""
    if scores.runs_a is not None:
        lines = ["item,run,system_a_correct,system_b_correct"]
        for (run, a), (_, b) in zip(scores.runs_a, scores.runs_b):
            lines += [f"{i},{run},{x},{y}" for i, (x, y) in enumerate(zip(a, b), start=1)]
    else:
        clustered = scores.clusters is not None
        tails = [f",{c + 1}" for c in scores.clusters] if clustered else [""] * scores.n
        lines = [",".join(CSV_COLUMNS + ("cluster",) * clustered)]
        lines += [f"{i},{x},{y}{t}" for i, (x, y, t)
                  in enumerate(zip(scores.a, scores.b, tails), start=1)]
    atomic_write(path, "\n".join(lines) + "\n")


# === Resampling engines ===
#
# How the engine is fast and still exact.  ``randrange(n)`` takes one 32-bit Mersenne
# Twister word, keeps its top k = n.bit_length() bits and rejects values >= n;
# ``rng.getrandbits(32*m)`` returns the next m words, the first lowest.  Asking for as
# many words as draws are missing (each one the naive loop would consume too) leaves the
# generator where the naive loop does.  Each word's top byte (``data[3::4]``) is mapped by
# ``bytes.translate`` to the drawn item's *code*, rejected words deleted in the same call;
# a code is a byte whose popcount is the score (base-8 digit planes for larger integers),
# so a resample's sum is one ``int.from_bytes(codes).bit_count()`` per plane.  When k > 8
# the next byte carries the low index bits (big integers as vectors of bytes merge the
# lookups); more than _MAX_CODES distinct scores use bulk index arithmetic instead.

@functools.lru_cache(maxsize=64)
def _lanes(pattern: bytes, m: int) -> int:
    """*pattern* repeated m times, as an integer: a vector of byte or word lanes."""
    return int.from_bytes(pattern * m, "little")


def _gather(table: bytes, index) -> bytes:
    """``bytes(table[i] for i in index)`` at C speed."""
    if len(index) == 1:
        return bytes([table[index[0]]])
    return bytes(operator.itemgetter(*index)(table)) if index else b""


@dataclass(frozen=True)
class _Lookup:
    """How one 32-bit word becomes the code of the item it draws (or is rejected): ``kind``
    "byte" (k <= 8), "class" (top byte's class of items plus the low index bits), "select"
    (a translate per low-bits value, merged by masks), "gather" (bulk index arithmetic) or
    "index" (too many distinct codes: the accepted indices)."""

    kind: str
    n: int
    k: int
    tables: tuple = ()
    final: bytes | None = None
    delete: bytes = b""
    codes: bytes = b""

    def decode(self, words: int, m: int):
        """Codes (bytes) -- or indices (list) -- of the accepted draws among m words."""
        if self.kind in ("gather", "index"):
            index = array.array("I")
            lanes = _lanes(((1 << self.k) - 1).to_bytes(4, "little"), m)
            index.frombytes(((words >> (32 - self.k)) & lanes).to_bytes(4 * m, "little"))
            if sys.byteorder == "big":
                index.byteswap()
            if self.kind == "index":
                n = self.n
                return [i for i in index if i < n]
            return _gather(self.codes, index).translate(None, self.delete)
        data = words.to_bytes(4 * m, "little")
        top = data[3::4]
        if self.kind == "byte":
            return top.translate(self.tables[0], self.delete)
        low = int.from_bytes(data[2::4], "little")
        shift = 8 - (self.k - 8)
        if self.kind == "class":
            key = int.from_bytes(top.translate(self.tables[0]), "little")
            key |= low & _lanes(bytes([(0xFF << shift) & 0xFF]), m)
        else:
            lanes = [int.from_bytes(top.translate(table), "little") for table in self.tables]
            ones = _lanes(b"\x01", m)
            bit = shift
            while len(lanes) > 1:
                mask = ((low >> bit) & ones) * 0xFF
                lanes = [x ^ ((x ^ y) & mask) for x, y in zip(lanes[0::2], lanes[1::2])]
                bit += 1
            key = lanes[0]
        return key.to_bytes(m, "little").translate(self.final, self.delete)

    @classmethod
    def of(cls, n: int, codes: bytes | None) -> _Lookup:
        """Choose the cheapest exact way to turn words into codes for n items."""
        k = n.bit_length()
        if codes is None:
            return cls("index", n, k)
        reject = bytes([_CODE_REJECT])
        extended = codes + reject * ((1 << k) - n)         # code of every k-bit value
        if k <= 8:
            spread = 8 - k
            table = bytes(extended[t >> spread] for t in range(256))
            delete = bytes(t for t in range(256) if table[t] == _CODE_REJECT)
            return cls("byte", n, k, (table,), delete=delete)
        low_bits = k - 8
        if low_bits > _SELECT_MAX_BITS:
            return cls("gather", n, k, delete=reject, codes=extended)
        width = 1 << low_bits
        blocks = [extended[t * width:(t + 1) * width] for t in range(256)]
        classes = {block: None for block in blocks}
        if len(classes) <= 1 << (8 - low_bits):
            ids = {block: i for i, block in enumerate(classes)}
            table = bytes(ids[block] for block in blocks)
            final = bytearray([_CODE_REJECT]) * 256
            for block, i in ids.items():
                for g, code in enumerate(block):
                    final[i | g << (8 - low_bits)] = code
            delete = bytes(key for key in range(256) if final[key] == _CODE_REJECT)
            return cls("class", n, k, (table,), bytes(final), delete)
        tables = tuple(bytes(block[g] for block in blocks) for g in range(width))
        return cls("select", n, k, tables, None, reject)


def _draw_parts(rng: random.Random, lookup: _Lookup, count: int):
    """The codes (or indices) of *count* accepted draws, in chunks, using rng as randrange(n)."""
    missing = count
    getrandbits = rng.getrandbits
    while missing:
        m = min(missing, _CHUNK_WORDS)
        part = lookup.decode(getrandbits(32 * m), m)
        missing -= len(part)
        yield part


def draw_codes(rng: random.Random, lookup: _Lookup, count: int):
    """All codes (bytes) or indices (list) of *count* accepted draws, as ``_draw_parts``."""
    parts = list(_draw_parts(rng, lookup, count))
    return [i for part in parts for i in part] if lookup.kind == "index" else b"".join(parts)


@dataclass(frozen=True)
class _SumPlan:
    """How resample sums of integer columns are read off the draws: unit codes (None: use
    indices), per column its base and per base-8 digit plane of ``value - base`` a code-to-byte
    table (None: codes are it), a byte's popcount the item's digit: a resample's sum is
    ``base*n + sum(8**p * popcount(plane p))`` (``int.bit_count``)."""

    n: int
    columns: tuple
    codes: bytes | None
    summers: tuple               # per column: (base, tables)
    lookup: _Lookup

    @classmethod
    def of(cls, columns) -> _SumPlan:
        n = len(columns[0])
        bases = [min(column) for column in columns]
        digit_planes = []                  # per column, per plane: the items' digit bytes
        for column, base in zip(columns, bases):
            extras, planes = [value - base for value in column], []
            while not planes or any(e >> 3 * len(planes) for e in extras):
                planes.append(tuple((1 << (e >> 3 * len(planes) & 7)) - 1 for e in extras))
            digit_planes.append(planes)
        rows = {}
        if sum(map(len, digit_planes)) > 1:
            for row in zip(*columns):
                rows.setdefault(row, len(rows))
        summers = ()
        if not rows:                               # one column, one plane: codes are plane bytes
            codes = bytes(digit_planes[0][0])
            summers = ((bases[0], (None,)),)
        elif len(rows) <= _MAX_CODES:               # codes are distinct rows, planes translated
            codes = bytes(rows[row] for row in zip(*columns))
            summers = tuple((base, tuple(bytes(dict(zip(codes, plane)).get(t, 0)   # code -> byte
                                               for t in range(256)) for plane in planes))
                            for planes, base in zip(digit_planes, bases))
        else:                                      # too many distinct rows: indices
            codes = None
        return cls(n, tuple(columns), codes, summers, _Lookup.of(n, codes))

    def sums(self, draws, column: int, rounds) -> list:
        """Sums of *column* over the given rounds' draws (round i: draws[i*n:(i+1)*n])."""
        n = self.n
        if self.codes is None:
            values = self.columns[column]
            return [sum(operator.itemgetter(*draws[i * n:(i + 1) * n])(values)) for i in rounds]
        base, tables = self.summers[column]
        totals = [base * n] * len(rounds)
        for p, table in enumerate(tables):     # a base-8 digit plane: counted by popcounts
            plane = draws if table is None else draws.translate(table)
            counts = [int.from_bytes(plane[i * n:(i + 1) * n], "big").bit_count() for i in rounds]
            totals = [t + (c << 3 * p) for t, c in zip(totals, counts)]
        return totals


def resample_sums(rng: random.Random, columns, rounds: int, *, strata=None, progress=None) -> list:
    """Bootstrap sums: round r resamples the n units and sums ``columns[r % len(columns)]``.
    Each column holds n integers (per item or cluster); each resample draws as
    ``[rng.randrange(n) for _ in range(n)]`` does and leaves rng where that loop would.
    ``(d,)``: the paired bootstrap; ``(a, b)``: the unpaired one (A's resample, then B's).
    *strata* (lists of unit indices): every stratum resampled in turn, keeping its size.

    >>> resample_sums(random.Random(5), [(0, 1, 1)], 4)
    [3, 3, 2, 2]
    """
    width = len(columns)
    if strata is not None:
        plans = [_SumPlan.of([tuple(column[u] for u in units) for column in columns])
                 for units in strata]
        sums = []
        for r in range(rounds):
            sums.append(sum(plan.sums(draw_codes(rng, plan.lookup, plan.n), r % width, (0,))[0]
                            for plan in plans))
            if progress is not None and ((r + 1) % 64 == 0 or r + 1 == rounds):
                progress(r + 1, rounds)
        return sums
    plan = _SumPlan.of(columns)
    n = plan.n
    # Decode a chunk of words, sum the rounds it completes, carry the rest over:
    # the codes are summed while they are still in the processor's cache.
    sums = [0] * rounds
    done = available = 0
    parts = []
    for part in _draw_parts(rng, plan.lookup, rounds * n):
        parts.append(part)
        available += len(part)
        if available < n:
            continue
        pending = [i for p in parts for i in p] if plan.codes is None else b"".join(parts)
        complete = available // n
        for j in range(width):
            first = (j - done) % width               # first completed round using column j
            sums[done + first:done + complete:width] = plan.sums(pending, j,
                                                                 range(first, complete, width))
        parts = [pending[complete * n:]]
        available -= complete * n
        done += complete
        if progress is not None:
            progress(done, rounds)
    return sums


def _column_groups(columns) -> list:
    """Columns split, in order, into groups whose rows take at most MAX_CODES values."""
    groups, rows = [], None
    for j, column in enumerate(columns):
        if rows is not None:
            joined = [row + (value,) for row, value in zip(rows, column)]
            if len(set(joined)) <= _MAX_CODES:
                groups[-1].append(j)
                rows = joined
                continue
        groups.append([j])
        rows = [(value,) for value in column]
    return groups


def resample_each(rng: random.Random, columns, rounds: int, progress=None) -> list:
    """Per column, the sum of each round's resample, every column over the *same* resampled
    items (drawn as ``randrange(n)``), so runs of several systems stay paired item by item;
    too many distinct rows: indices drawn once, each group of columns gathering its codes."""
    n = len(columns[0])
    whole = _SumPlan.of(columns)               # its lookup draws indices when codes are None
    groups = [list(range(len(columns)))] if whole.codes is not None else _column_groups(columns)
    plans = [whole] if whole.codes is not None else \
        [_SumPlan.of([columns[j] for j in group]) for group in groups]
    per_chunk = max(1, (1 << 22) // n)
    out = [[] for _ in columns]
    done = 0
    while done < rounds:
        count = min(per_chunk, rounds - done)
        draws = draw_codes(rng, whole.lookup, count * n)
        for group, plan in zip(groups, plans):
            codes = draws if plan is whole or plan.codes is None else _gather(plan.codes, draws)
            for k, j in enumerate(group):
                out[j] += plan.sums(codes, k, range(count))
        done += count
        if progress is not None:
            progress(done, rounds)
    return out


# --- The counts engine: multinomial cells instead of items ---
#
# For 0/1 scores a resample depends only on the multinomial counts of the 2x2 cells,
# drawn directly at a cost that does not grow with n, by the module's own binomial
# samplers on rng.random() (the same numbers on every Python from 3.10): the per-item
# engine's distribution, not its stream.

def _counts_paired_sums(rng, cells: Cells, resamples: int) -> list:
    """Resampled (B-only minus A-only) counts D of n draws from the cells, generating function
    ``(a/z + b + c*z)**n`` (a, b, c: A-only, agreeing, B-only shares).  When ``b*b >= 4*a*c``
    (any real eval) ``a + b*z + c*z*z`` factors over the reals, so ``D + n`` is
    ``Binomial(n, p1) + Binomial(n, p2)``: two table draws.  Else D comes from the discordant
    total M ~ Binomial(n, a+c) and the B-only count given M, Binomial(M, c/(a+c))."""
    n, agree = cells.n, cells.both + cells.neither
    if cells.a_only == 0 or cells.b_only == 0:       # D is one binomial count (or 0)
        hits = binomial_table_variates(rng, n, (cells.b_only or cells.a_only) / n, resamples)
        return hits if cells.a_only == 0 else [-x for x in hits]
    if agree * agree >= 4 * cells.a_only * cells.b_only:
        a, b, c = cells.a_only / n, agree / n, cells.b_only / n
        root = math.sqrt(max(0.0, b * b - 4 * a * c))
        p1, p2 = (b + root) / (b + root + 2 * a), 2 * c / (2 * c + b + root)
        x = binomial_table_variates(rng, n, p1, resamples)
        y = binomial_table_variates(rng, n, p2, resamples)
        return [i + j - n for i, j in zip(x, y)]
    discordant = cells.a_only + cells.b_only
    totals = binomial_table_variates(rng, n, discordant / n, resamples)
    b_only = binomial_variates(rng, totals, cells.b_only / discordant)
    return [2 * x - t for x, t in zip(b_only, totals)]


def _value_counts_sums(rng, column, resamples: int) -> list:
    """Resampled sums of an integer column with few distinct values: one multinomial draw
    of the values' counts per resample (conditional binomials, most frequent value first)."""
    mass = len(column)
    tally = sorted(collections.Counter(column).items(), key=lambda kv: -kv[1])
    totals, left = [0] * resamples, [mass] * resamples
    for value, count in tally[:-1]:
        drawn = binomial_variates(rng, left, count / mass)
        totals = [t + value * d for t, d in zip(totals, drawn)]
        left = [l - d for l, d in zip(left, drawn)]
        mass -= count
    last = tally[-1][0]                                 # the rest land on the last value
    return [t + last * l for t, l in zip(totals, left)]


def _distinct_values(scores: Scores) -> int:
    """The most distinct values any of the counts engine's columns has (A, B, B - A)."""
    a, b = scores.ints
    return max(len(set(a)), len(set(b)), len(set(scores.units.diff)))


# === Intervals ===
#
# Percentile, basic and BCa intervals of a resampled distribution, the exact bootstrap
# (B = infinity) of 0/1 items, score intervals that need no resampling, and the Monte
# Carlo advice.  bootstrap() consumes the stream once per resample; the rest is pure.

# --- Monte Carlo advice: how many resamples fix the printed digit ---

@dataclass(frozen=True)
class _Advice:
    """What to do about the gap ends' Monte Carlo error: ``exact`` (0/1 items: --exact),
    ``resamples`` (this many hold every end as ``_resamples_for`` says), ``method`` (more
    than MAX_RESAMPLES needed: a method without Monte Carlo error), ``lattice`` (the gap
    lives on steps wider than half the printed digit: an end at a step's edge moves by
    ``step`` at any B, more resamples only make that rarer) or ``sign`` (a paired end
    within its error of 0: this many, if any, settle its sign)."""

    kind: str
    worst: Fraction
    resamples: int | None = None
    step: Fraction | None = None
    digit: Fraction = Fraction(1, 1000)     # the last digit printed: 0.1 pts, or 0.001


def _nice_up(value: float) -> int:
    """Round up to two significant digits: 31,415 -> 32,000."""
    digits = max(0, len(str(int(value))) - 2)
    return math.ceil(value / 10 ** digits) * 10 ** digits


def _resamples_for(error, resamples: int, within) -> int:
    """The resamples that hold an end within *within* of its B = infinity value in 99 runs of
    100 (2.576 sd), from its *error* at *resamples* (``end_errors``: 1.96 sd), the sd taken
    a fifth larger for the error of its own estimate."""
    sd = float(error) / 1.96 * _ADVICE_SAFETY
    return _nice_up(resamples * (2.576 * sd / float(within)) ** 2)


def _mc_advice(analysis) -> _Advice | None:
    """Advice when a gap interval's end moves by more than the last printed digit from seed
    to seed (an end's sd falls like 1/sqrt(B)); None when it does not or the ends are exact."""
    if analysis.exact is not None or analysis.method != "bootstrap":
        return None
    paired = analysis.paired
    unsettled = [(abs(end), error) for end, error, held in zip(
        (paired.lo, paired.hi), analysis.errors["paired"], _signs_held(paired))
                 if end and not held]
    if unsettled:                              # the verdict reads this end as touching 0
        end, error = min(unsettled)
        needed = max(_resamples_for(error, analysis.resamples, end),   # (a gap in the
                     _nice_up(2 * analysis.resamples),                  # resamples: more;
                     _placing_resamples(analysis.confidence, 1, 1))     # 50 in each tail)
        return _Advice("sign", error, needed if needed <= MAX_RESAMPLES else None)
    worst = max(analysis.errors["paired"] + analysis.errors["unpaired"])
    largest = max(abs(end) for interval in (analysis.paired, analysis.unpaired)
                  for end in (interval.lo, interval.hi))
    # the last digit printed: 0.001 (0.1 pts), or past 10^15 (six significant digits) the sixth
    step = Fraction(1, 1000) if largest < _LARGE else \
        Fraction(10) ** (len(str(round(largest))) - 6)
    held = analysis.paired.places                  # printed to the digit they hold
    if held is not None and analysis.unpaired.places is not None:
        held = min(held, analysis.unpaired.places)
        step = max(step, Fraction(1, 10 ** held) / (100 if analysis.percent else 1))
    if worst <= step:
        return None
    if analysis.binary and getattr(analysis.design, "clusters", None) is None:
        return _Advice("exact", worst, digit=step)
    grid = analysis.paired_distribution.grid
    if grid is not None and grid > step / 2:
        settle = [analysis.distributions[name].settling(
            analysis.confidence, analysis.rules[name], analysis.gap,
            (analysis.jackknives or {}).get(name)) for name in ("paired", "unpaired")]
        needed = _nice_up(max(settle) * _ADVICE_SAFETY)
        return _Advice("lattice", worst, needed if needed <= MAX_RESAMPLES else None, grid, step)
    needed = _resamples_for(worst, analysis.resamples, step / 2)
    if needed <= analysis.resamples:     # the estimate of the error itself moved: ask for more
        needed = _nice_up(2 * analysis.resamples)
    if needed > MAX_RESAMPLES:
        return _Advice("method", worst, digit=step)
    return _Advice("resamples", worst, needed, digit=step)


_MAX_CLASS_ROWS = 100          # classes up to which a metric's per-class table is given
_CELL_DRAWS = 4 * 10 ** 6       # a metric's cell counts held at once: resamples drawn in chunks
_HOLDING_DRAWS = 4 * 10 ** 6    # item draws spent, at most, to hold the printed ends (~1-3 s)


def _placing_resamples(confidence, family: int, work: int) -> int:
    """The resamples that place an interval's ends (a metric's when none are asked, and the
    least a sign hint asks for): the article's B at 95% (50 in each tail), as many in each
    tail of a family's simultaneous level (10,000 for 5 at 95%), as far as _HOLDING_DRAWS
    units of *work* per resample allow (the verdict reads the ends by their reach).

    >>> _placing_resamples(Fraction(95, 100), 5, 100), _placing_resamples(0.95, 5, 10 ** 4)
    (10000, 2000)
    """
    placing = math.ceil(100 * family / (1 - Fraction(confidence)))
    return max(RESAMPLES, min(placing, _HOLDING_DRAWS // max(1, work) // 100 * 100))


def _holding_resamples(dists: dict, made: tuple, estimate, levels, resamples: int,
                       n: int) -> tuple:
    """``(resamples, {interval: digits dropped})``: the resamples that hold the paired gap's
    ends at each of *levels* (those the verdicts read) within half their last digit (or a
    lattice step): the last digit printed (0.1 pts, 0.001) if _HOLDING_DRAWS draws reach it,
    else the finest of up to three coarser ones they reach (the ends are then printed to
    it); and the unpaired gap's to the same digit where the draws reach that too.  Else
    ``(resamples, {})``: each interval is printed to the digits it holds.  Where the draws
    reach it, the paired ends also hold their sign (the verdict reads it): an end within
    its error of 0 is read as touching 0 (``_signs_held``)."""
    _, _, rules, _, jackknives = made
    worst, signs = {"paired": [], "unpaired": []}, [resamples]
    for name, level in itertools.product(worst, levels):
        dist, rule, jack = dists[name], rules[name], jackknives.get(name)
        if rule in _UNRESAMPLED:
            continue
        errors = dist.end_errors(level, rule, estimate, jack)
        if max(errors):
            worst[name].append((max(errors), dist.grid or 0))
        interval = _interval_by(dist, level, rule, estimate, jack)[0]
        signs += [_resamples_for(error, resamples, abs(end)) for end, error in
                  zip((interval.lo, interval.hi), errors) if name == "paired" and end and error]

    def needed(name, step):                     # on a lattice: within one of its steps
        return max([resamples] + [_resamples_for(error, resamples, max(step / 2, grid))
                                  for error, grid in worst[name]])
    def reach(count):                           # (the resamples drawn already count)
        return count <= resamples or 5 * count * n <= _HOLDING_DRAWS
    sign = max(signs) if reach(max(signs)) else resamples
    for coarser in range(4):
        step = Fraction(10 ** coarser, 1000)
        paired, both = max(sign, needed("paired", step)), needed("unpaired", step)
        if reach(max(paired, both)):
            return max(paired, both), {"paired": coarser, "unpaired": coarser}
        if reach(paired):
            return paired, {"paired": coarser}
    return resamples, {}


def _held_places(errors, percent: bool) -> int | None:
    """The decimals (of points, or of the score) that ends with these Monte Carlo *errors*
    (``end_errors``: 1.96 sd) hold in 99 runs of 100, half the last digit at least 2.576 sd
    (the sd taken a fifth larger, as ``_resamples_for``): the printed ones (1 for points, 3)
    or fewer, down to none; None where not even whole units hold.

    >>> _held_places((Fraction(1, 10000), Fraction(1, 5000)), False), _held_places((0.002,), False)
    (3, 2)
    >>> _held_places((10,), False) is None
    True
    """
    places = 1 if percent else 3
    sd = float(max(errors)) / 1.96 * _ADVICE_SAFETY * (100 if percent else 1)
    while places >= 0 and 2.576 * sd > 0.5 * 10 ** -places:
        places -= 1
    return places if places >= 0 else None


def _bca_levels(share, jackknife, confidence) -> tuple | str:
    """BCa's two levels ``Phi(z0 + (z0 + z)/(1 - acc*(z0 + z)))``, z = Phi^-1(q), Phi^-1(1-q),
    z0 = Phi^-1(share below the estimate, ties half), acc the jackknife's
    ``sum (m - t)^3 / (6 * (sum (m - t)^2)^1.5)`` (m their mean) -- or why BCa is undefined.

    >>> [round(level, 4) for level in _bca_levels(Fraction(1, 2), {0: 3, 1: 1}, 0.9)]
    [0.0253, 0.9222]
    >>> _bca_levels(Fraction(1), {Fraction(0): 3, Fraction(1): 1}, Fraction(9, 10))
    'every bootstrap resample lies on one side of the estimate'
    """
    if share <= 0 or share >= 1:
        return "every bootstrap resample lies on one side of the estimate"
    total = sum(jackknife.values())
    mean = sum(value * count for value, count in jackknife.items()) / total
    square = sum(count * (mean - value) ** 2 for value, count in jackknife.items())
    if square == 0:
        return "the jackknife is degenerate: every leave-one-out estimate is equal"
    cube = sum(count * (mean - value) ** 3 for value, count in jackknife.items())
    normal, acc = NormalDist(), float(cube) / (6 * float(square) ** 1.5)
    z0, q = normal.inv_cdf(float(share)), float(1 - Fraction(confidence)) / 2
    levels = []
    for z in (normal.inv_cdf(q), normal.inv_cdf(1 - q)):
        shrink = 1 - acc * (z0 + z)
        if shrink <= 0:
            return "the acceleration is too large for this confidence"
        levels.append(normal.cdf(z0 + (z0 + z) / shrink))
    return tuple(levels)


def _jackknife(groups: dict, which: str, scale: int = 1) -> dict:
    """Leave-one-unit-out estimates of *which* ("a", "b", "paired"; "unpaired" leaves a unit
    out of A's sample or of B's) as {value: count}, from units grouped as {(a, b, size):
    count} (``Units.groups``, ``Cells.groups``).  With strata still one unit at a time across
    all of them, the usual approximation for a stratified BCa.

    >>> _jackknife(Cells(1, 1, 0, 2).groups(), "paired")    # gap -1/4 on 4 items
    {Fraction(-1, 3): 3, Fraction(0, 1): 1}
    """
    total_a = sum(a * count for (a, _, _), count in groups.items())
    total_b = sum(b * count for (_, b, _), count in groups.items())
    items = sum(size * count for (_, _, size), count in groups.items())
    values = collections.Counter()
    for (a, b, size), count in groups.items():
        rest_a = Fraction(total_a - a, (items - size) * scale)       # the means without it
        rest_b = Fraction(total_b - b, (items - size) * scale)
        if which == "unpaired":
            values[Fraction(total_b, items * scale) - rest_a] += count
            values[rest_b - Fraction(total_a, items * scale)] += count
        else:
            values[{"a": rest_a, "b": rest_b, "paired": rest_b - rest_a}[which]] += count
    return dict(values)


class _Rules:
    """The percentile, basic and BCa rules on a distribution with ``quantile(level)`` (the
    smallest value whose cdf exceeds the level) and ``share_below`` (ties half)."""

    monte_carlo = False

    @property
    def support(self) -> tuple:
        """Where all but 1/2000 of the mass lies (about where 2,000 resamples would reach)."""
        return self.quantile(0.00025), self.quantile(0.99975)

    def levels(self, confidence, rule="percentile", estimate=None, jackknife=None) -> tuple:
        """The levels an interval reads: q and 1 - q, q = (1 - c) / 2; BCa's (``_bca_levels``)."""
        if rule != "bca":
            q = (1 - Fraction(confidence)) / 2
            return q, 1 - q
        levels = self.bca_levels(confidence, estimate, jackknife)
        if isinstance(levels, str):
            raise ToolError(f"BCa is undefined here: {levels} (use "
                            f"{_opt('interval', 'percentile')})")
        return levels

    def bca_levels(self, confidence, estimate, jackknife) -> tuple | str:
        """BCa's two levels, or why BCa is undefined on this distribution."""
        if self.degenerate:
            return "every bootstrap resample gives the same value"
        return _bca_levels(self.share_below(estimate), jackknife, confidence)

    def interval(self, confidence, rule: str = "percentile", estimate=None,
                 jackknife=None) -> Interval:
        """The percentile interval (for B resamples the order statistics floor(q*B) and
        floor((1-q)*B), the article's rule), basic (those reflected about the estimate) or
        BCa (the quantiles at ``_bca_levels``)."""
        low, high = (self.quantile(level) for level in
                     self.levels(confidence, rule, estimate, jackknife))
        if rule == "basic":
            return Interval(2 * estimate - high, 2 * estimate - low)
        return Interval(low, high)

    def end_errors(self, confidence, rule="percentile", estimate=None, jackknife=None):
        """Monte Carlo error of the two interval ends: none, unless resampled."""
        return Fraction(0), Fraction(0)


@dataclass(frozen=True)
class Distribution(_Rules):
    """A Monte Carlo bootstrap distribution, sorted: statistic ``sum / denominator``, sums
    integers (a mean in units of 1/scale) or, for a ratio, Fractions over 1."""

    sums: tuple
    denominator: int
    monte_carlo = True

    @classmethod
    def of(cls, sums, denominator: int = 1) -> Distribution:
        sums = list(sums)
        if sums and isinstance(sums[0], Fraction):     # by float first: the same order, fast
            sums.sort(key=lambda value: (float(value), value))
        else:
            sums.sort()
        return cls(tuple(sums), denominator)

    def value(self, index: int) -> Fraction:
        return Fraction(self.sums[index], self.denominator)

    @functools.cached_property
    def grid(self) -> Fraction | None:
        """The spacing the resampled values lie on: their differences' greatest common divisor
        over the denominator (1/denominator if they are all equal), or None for ratios."""
        if not isinstance(self.sums[0], int):
            return None
        first = self.sums[0]
        return Fraction(math.gcd(*map(first.__rsub__, self.sums)) or 1, self.denominator)

    @property
    def degenerate(self) -> bool:
        return self.sums[0] == self.sums[-1]

    @property
    def support(self) -> tuple:
        return self.value(0), self.value(-1)

    def index(self, level) -> int:
        """The order statistic a level reads: floor(level * B), within the resamples."""
        return min(len(self.sums) - 1, max(0, math.floor(level * len(self.sums))))

    def quantile(self, level) -> Fraction:
        return self.value(self.index(level))

    def share_below(self, estimate) -> Fraction:
        scaled = estimate * self.denominator
        below = bisect.bisect_left(self.sums, scaled)
        ties = bisect.bisect_right(self.sums, scaled) - below
        return Fraction(2 * below + ties, 2 * len(self.sums))

    def mass_below(self, value) -> Fraction:
        return Fraction(bisect.bisect_left(self.sums, value * self.denominator), len(self.sums))

    def end_indices(self, confidence, rule="percentile", estimate=None, jackknife=None):
        return tuple(map(self.index, self.levels(confidence, rule, estimate, jackknife)))

    def settling(self, confidence, rule="percentile", estimate=None, jackknife=None):
        """The resamples that settle both ends on the lattice values they read now in 99 runs
        of 100: once 2.576 sqrt(q(1 - q)/B) is below the level's distance d from the edges
        of its value's share (d at least half a resample's: the shares are drawn too)."""
        size, needed = len(self.sums), 0
        for level in self.levels(confidence, rule, estimate, jackknife):
            value = self.sums[self.index(level)]
            low = Fraction(bisect.bisect_left(self.sums, value), size)
            high = Fraction(bisect.bisect_right(self.sums, value), size)
            edge = max(min(level - low, high - level), Fraction(1, 2 * size))
            needed = max(needed, math.ceil(2.576 ** 2 * float(level * (1 - level) / edge ** 2)))
        return needed

    def end_errors(self, confidence, rule="percentile", estimate=None, jackknife=None):
        """Monte Carlo error of the ends: half the spread of their ``end_reach``."""
        return tuple((high - low) / 2 for low, high in
                     self.end_reach(confidence, rule, estimate, jackknife))

    def reach(self, confidence, rule="percentile", estimate=None, jackknife=None) -> tuple:
        """Where each end lies in 99 runs of 100 (``end_reach`` at _REACH_Z sd), infinite
        past the resamples drawn where all of them may miss the end's tail."""
        return self.end_reach(confidence, rule, estimate, jackknife, _REACH_Z, open_edges=True)

    def end_reach(self, confidence, rule="percentile", estimate=None, jackknife=None,
                  z=1.96, open_edges=False) -> tuple:
        """Where each end lies from seed to seed: ``(low, high)``, the order statistics
        within *z* sd of its rank (the rank of a quantile among B draws is Binomial(B, q));
        past the least or greatest resample, that one -- with *open_edges*, -inf or +inf
        where the quantile lies past every resample more often than z sd allow ((1 - q)^B)."""
        size, reach, beyond = len(self.sums), [], NormalDist().cdf(-z)
        for index in self.end_indices(confidence, rule, estimate, jackknife):
            q = min(max(index, 1), size - 1) / size
            spread = max(1, math.ceil(z * math.sqrt(size * q * (1 - q))))
            low, high, rank = self.value(0), self.value(-1), (index + 0.5) / size
            if open_edges and (1 - rank) ** size > beyond:
                low = -math.inf                     # none of B below it: not rare enough
            if open_edges and rank ** size > beyond:
                high = math.inf
            reach.append((self.value(index - spread) if index >= spread else low,
                          self.value(index + spread) if index + spread < size else high))
        if rule == "basic":                     # 2 estimate - (the other end's quantile)
            reach = [(2 * estimate - high, 2 * estimate - low) for low, high in reversed(reach)]
        return tuple(reach)


@dataclass(frozen=True)
class _Lattice(_Rules):
    """An exact (B = infinity) distribution on (base + step k) / denominator: ``cdf(k)``, 0
    below ``lo`` and 1 from ``hi`` on, from ``table`` (the cdf at lo, lo+1, ...) or computed
    by ``at``."""

    lo: int
    hi: int
    denominator: int
    table: tuple | None = None
    at: object = None
    base: int = 0
    step: int = 1

    @classmethod
    def of(cls, lo: int, cdf, denominator: int, base: int = 0, step: int = 1) -> _Lattice:
        return cls(lo, lo + len(cdf) - 1, denominator, tuple(cdf), base=base, step=step)

    def _index(self, value) -> Fraction:
        """The (maybe fractional) lattice index of a statistic's value."""
        return (Fraction(value) * self.denominator - self.base) / self.step

    def cdf(self, k: int) -> float:
        if k < self.lo:
            return 0.0
        if k >= self.hi:
            return 1.0
        return self.table[k - self.lo] if self.table is not None else self.at(k)

    @property
    def grid(self) -> Fraction:
        return Fraction(self.step, self.denominator)

    @property
    def degenerate(self) -> bool:
        return self.hi == self.lo

    def quantile(self, level) -> Fraction:
        """(base + step k) / denominator for the smallest k whose cdf exceeds *level*."""
        level = float(level)
        if self.table is not None:
            k = self.lo + bisect.bisect_right(self.table, level)
        else:
            low, k = self.lo - 1, self.hi                 # cdf(low) <= level < cdf(k)
            while k - low > 1:
                middle = (low + k) // 2
                low, k = (low, middle) if self.cdf(middle) > level else (middle, k)
        return Fraction(self.base + self.step * k, self.denominator)

    def share_below(self, estimate) -> float:
        k = self._index(estimate)
        return (self.cdf(math.ceil(k) - 1) + self.cdf(math.floor(k))) / 2

    def mass_below(self, value) -> float:
        return self.cdf(math.ceil(self._index(value)) - 1)


# --- The exact bootstrap (B = infinity) of 0/1 items ---
#
# With 0/1 items every distribution of the report is known exactly: an accuracy is
# Binomial(n, p)/n, the paired gap (B-only - A-only)/n with multinomial counts, the
# unpaired gap a difference of independent binomials.  Tails beyond the tables (under
# 2**-54 of the mass each) are left out; an end is the percentile rule's limit.

def _hits_cdf(n: int, hits: int) -> tuple:
    """(lo, cdf) of Binomial(n, hits/n): the sampler's table, or a point mass at 0 or n."""
    return _binomial_cdf_table(n, hits / n) if 0 < hits < n else (hits, [1.0])


def _pmf(cdf) -> list:
    """Probabilities from cumulative ones."""
    return [cdf[0]] + list(map(operator.sub, cdf[1:], cdf))


def _inward(n: int, a: float, b: float, c: float, start: int, stop: int, mean: float,
            sd: float) -> list:
    """Unnormalised P[d], d = start..stop >= 0, by the recurrence solved for P[d-1] from 11 sd
    and 20 beyond the mean inward: every term positive, so stable (Miller's method)."""
    top = max(stop, min(n, math.ceil(mean + 11 * sd + 20)))
    values = []
    append = values.append
    after, here = 0.0, 1.0
    up, d, down = float(n + top + 1), float(top), float(n - top + 1)    # n+d+1, d, n-d+1
    for _ in range(top - start):          # floats count exactly: the products are the same
        append(here)
        after, here = here, (a * up * after + b * d * here) / (c * down)
        up, d, down = up - 1.0, d - 1.0, down + 1.0
        if here > 1e250:                            # keep the scale finite
            after, here = after * 1e-250, here * 1e-250
            values[:] = [v * 1e-250 for v in values]
    append(here)
    values.reverse()                                # d = start .. top
    return values[:stop - start + 1]


def _upward(n: int, a: float, b: float, c: float, stop: int) -> list:
    """Unnormalised P[D = -n + k], k = 0..stop <= n, from the exact start at D = -n: the
    coefficients of (a + b x + c x^2)^n satisfy ``a(k+1) g[k+1] = b(n-k) g[k] +
    c(2n-k+1) g[k-1]``, all terms positive up to k = n, so no start is guessed."""
    values, before, here = [], 0.0, 1.0
    for k in range(stop):
        values.append(here)
        before, here = here, (b * (n - k) * here + c * (2 * n - k + 1) * before) / (a * (k + 1))
        if here > 1e250:                            # keep the scale finite
            before, here = before * 1e-250, here * 1e-250
            values[:] = [v * 1e-250 for v in values]
    values.append(here)
    return values


_LOW_AGREEMENT = 0.25   # agreeing share below which Miller's start need not die out
_EXACT_WORK = 4 * 10 ** 7   # multiply-adds the stratified exact bootstrap may take (~0.6 s)


def _paired_gap_cdf(cells: Cells, width: float = 9) -> tuple:
    """(lo, cdf at lo, lo+1, ...) of D = B-only minus A-only count among n draws from the cells,
    over mean +- (*width* sd + 10): each tail left out holds about exp(-width**2/2) (9: below
    1e-17; calibration, reading quantiles no further out than 0.1%, uses 7).

    ``a(n+d+1) P[d+1] + b d P[d] = c(n-d+1) P[d-1]`` (a, b, c: A-only, agreeing, B-only shares),
    solved for P[d-1], adds only positive terms when d > 0, and -D satisfies it with a and c
    swapped: each half is built from its tail inward (``_inward``) and the two joined at 0, stable
    to about 1e-13.  Below _LOW_AGREEMENT a second solution as large as the first keeps Miller's
    start from dying out (58% off at 16 agreeing items of 900), so each half is built from its
    exact end instead (``_upward``)."""
    n, a_only, b_only = cells.n, cells.a_only, cells.b_only
    if a_only == 0 or b_only == 0:                  # one binomial count, maybe negated
        lo, cdf = _hits_cdf(n, b_only or a_only)
        if b_only:
            return lo, cdf
        return -(lo + len(cdf) - 1), list(itertools.accumulate(reversed(_pmf(cdf))))
    if a_only + b_only == n:                        # no agreement: D = 2*(B-only) - n
        lo, cdf = _hits_cdf(n, b_only)
        pmf = [0.0] * (2 * len(cdf) - 1)
        pmf[0::2] = _pmf(cdf)
        return 2 * lo - n, list(itertools.accumulate(pmf))
    a, c = a_only / n, b_only / n
    b = 1 - a - c
    mean, sd = n * (c - a), math.sqrt(n * (a + c - (c - a) ** 2))
    lo = max(-n, math.floor(mean - width * sd - 10))
    hi = min(n, math.ceil(mean + width * sd + 10))
    if b < _LOW_AGREEMENT:
        lower = _upward(n, a, b, c, n + min(hi, 0)) if lo < 0 else []     # D = -n .. min(hi,0)
        upper = _upward(n, c, b, a, n - max(lo, 0))[::-1] if hi >= 0 else []   # max(lo,0)..n
        if lower and upper:                                               # both hold D = 0
            ratio = lower[-1] / upper[0]
            whole = lower + [v * ratio for v in upper[1:]]
        else:
            whole = lower or upper
        start = -n if lower else max(lo, 0)
        pmf = whole[lo - start:hi - start + 1]
    elif lo >= 0:
        pmf = _inward(n, a, b, c, lo, hi, mean, sd)
    else:                      # D <= 0 is the mirror image: -D has A's and B's shares swapped
        lower = _inward(n, c, b, a, max(-hi, 0), -lo, -mean, sd)[::-1]
        if hi < 0:
            pmf = lower
        else:                                       # the halves meet at d = 0: join them
            upper = _inward(n, a, b, c, 0, hi, mean, sd)
            ratio = upper[0] / lower[-1]
            pmf = [v * ratio for v in lower] + upper[1:]
    return lo, _cdf(pmf)


def exact_distributions(cells) -> dict:
    """The four bootstrap distributions of 0/1 items exactly (B = infinity): a, b, paired,
    unpaired.  *cells*: the 2x2 table, or one per stratum (their counts' convolutions).

    >>> strata = exact_distributions([Cells(10, 2, 5, 3), Cells(4, 6, 1, 9)])
    >>> print(strata["paired"].interval(CONFIDENCE), strata["a"].interval(CONFIDENCE))
    [-22.5, +12.5] pts [+40.0, +70.0] pts
    """
    if isinstance(cells, Cells):
        n = cells.n
        (lo_a, cdf_a), (lo_b, cdf_b) = _hits_cdf(n, cells.a), _hits_cdf(n, cells.b)
        pmf_a, span = _pmf(cdf_a), len(cdf_a)

        def unpaired(d):          # (X_B - X_A)/n's cdf, summed when asked (a quantile bisects)
            start = lo_a + d - lo_b       # sum over x of P(X_A = x) P(X_B <= x + d), from lo_a
            window = ([0.0] * max(0, -start) + cdf_b[max(0, start):max(0, start + span)])
            window += [1.0] * (span - len(window))
            return sum(map(operator.mul, pmf_a, window))

        return {"a": _Lattice.of(lo_a, cdf_a, n), "b": _Lattice.of(lo_b, cdf_b, n),
                "paired": _Lattice.of(*_paired_gap_cdf(cells), n),
                "unpaired": _Lattice(lo_b - (lo_a + span - 1), lo_b + len(cdf_b) - 1 - lo_a, n,
                                     at=unpaired)}
    n = sum(c.n for c in cells)
    a, b, paired = (functools.reduce(_convolve, sorted(
        ((lo, _pmf(cdf)) for lo, cdf in parts), key=lambda part: len(part[1])))
        for parts in ([_hits_cdf(c.n, c.a) for c in cells], [_hits_cdf(c.n, c.b) for c in cells],
                      map(_paired_gap_cdf, cells)))
    unpaired = _convolve(b, (-(a[0] + len(a[1]) - 1), a[1][::-1]))       # B's sum minus A's
    return {name: _Lattice.of(lo, _cdf(pmf), n) for name, (lo, pmf)
            in (("a", a), ("b", b), ("paired", paired), ("unpaired", unpaired))}


def _convolve(first: tuple, second: tuple) -> tuple:
    """``(lo, pmf)`` of the sum of two independent such variables, tails under 2**-64 of the
    mass left out (a float sum in a fixed order, the same on every Python)."""
    (lo, p), (shift, q) = sorted((first, second), key=lambda part: -len(part[1]))
    out = [0.0] * (len(p) + len(q) - 1)
    for j, weight in enumerate(q):
        out[j:j + len(p)] = map(operator.add, out[j:j + len(p)],
                                map(operator.mul, p, itertools.repeat(weight)))
    tiny = sum(out) * 2.0 ** -64
    start = next(i for i, total in enumerate(itertools.accumulate(out)) if total > tiny)
    stop = len(out) - next(i for i, total in enumerate(itertools.accumulate(reversed(out)))
                           if total > tiny)
    return lo + shift + start, out[start:stop]


def _cdf(pmf) -> list:
    """Cumulative probabilities, normalised, the last exactly 1.0."""
    cdf = list(itertools.accumulate(pmf))
    cdf = list(map(operator.truediv, cdf, itertools.repeat(cdf[-1])))
    cdf[-1] = 1.0
    return cdf


def _exact_work(cells: tuple) -> int:
    """At most the multiply-adds ``exact_distributions`` spends on strata (table widths)."""
    work, reach = 0, 0
    for c in sorted(cells, key=lambda c: c.n):
        width = min(c.n, 2 * (9 * math.sqrt(c.n / 4) + 10)) + 1
        work += 4 * reach * width
        reach += width
    return int(work)


def _strata_cells(scores: Scores) -> tuple:
    """The 2x2 table of each stratum (0/1 items, no clusters), in first-appearance order."""
    a, b = scores.ints
    return tuple(Scores(tuple(map(a.__getitem__, members)),
                        tuple(map(b.__getitem__, members))).cells()
                 for members in scores.units.strata)


def _exact_of(scores: Scores) -> dict:
    """The exact distributions of 0/1 items, plain or stratified; else of scores on a small
    lattice (``_lattice_distributions``)."""
    if not scores.binary or scores.units.clustered:
        return _lattice_distributions(scores.units, scores.scale)
    return exact_distributions(scores.cells() if scores.units.simple else _strata_cells(scores))


# --- The exact bootstrap (B = infinity) of scores on a small lattice ---
#
# Scores on a few evenly spaced values (a judge's 1 to 10, a rubric's 0 to 3, a battle's -1,
# 0, 1, or clusters of one size holding such) resample exactly too: a stratum's resampled
# sum is its units' one-draw law convolved with itself once per unit (by squaring), and the
# strata's sums are convolved together, as for 0/1 items.

_LATTICE_SPAN = 100      # a stratum's unit values at most this many lattice steps apart
_LATTICE_WORK = 4e7      # multiply-adds of the convolution powers (about a second)


def _lattice_tallies(column, groups) -> tuple | None:
    """``(base, step, tallies)``: per group, how many of its units sit k steps above its
    least value (column = base_g + step k); None past _LATTICE_SPAN steps."""
    members = [column if len(group) == len(column) else [column[i] for i in group]
               for group in groups]
    lows = list(map(min, members))
    for values, low in zip(members, lows):        # the first values' step bounds the step:
        probe = math.gcd(*(v - low for v in values[:64]))      # past the span, no tally
        if probe and (max(values) - low) // probe > _LATTICE_SPAN:
            return None
    step = math.gcd(*(column[i] - low for group, low in zip(groups, lows) for i in group)) or 1
    tallies = [collections.Counter((column[i] - low) // step for i in group)
               for group, low in zip(groups, lows)]
    if max(max(tally) for tally in tallies) > _LATTICE_SPAN:
        return None
    return sum(low * len(group) for low, group in zip(lows, groups)), step, tallies


def _lattice_fits(units: Units) -> bool:
    """Do the units sit on a small lattice, in clusters of one size, within the budget?  The
    multiply-adds ``_lattice_distributions`` takes: per stratum and column, the squarings of
    a law about 19 sd wide, then the strata's sums."""
    if not units.equal_sizes:
        return False
    groups, work, spans = units.strata or (tuple(range(units.count)),), 0.0, []
    for column in (units.a, units.b, units.diff):
        found = _lattice_tallies(column, groups)
        if found is None:
            return False
        widths = []
        for tally in found[2]:
            size = sum(tally.values())
            mean = sum(k * c for k, c in tally.items()) / size
            sd = math.sqrt(sum(c * (k - mean) ** 2 for k, c in tally.items()) / size)
            widths.append(min(size * max(tally), 19 * math.sqrt(size) * sd + 20) + 1)
        reach = 0.0
        for width in sorted(widths):
            work += 3 * width * width + reach * width
            reach += width
        spans.append((found[1], reach))
    (step_a, reach_a), (step_b, reach_b) = spans[:2]      # the unpaired gap: A's and B's
    common = math.gcd(step_a, step_b)                       # laws on their common step
    return work + reach_a * step_a // common * reach_b * step_b // common <= _LATTICE_WORK


def _lattice_distributions(units: Units, scale: int) -> dict:
    """The four bootstrap distributions exactly (B = infinity) where every column sits on a
    small lattice and the clusters (if any) are of one size (``_choose_method`` says so).
    The unpaired gap is B's sum less an independent A's, on their lattices' common step."""
    groups, laws = units.strata or (tuple(range(units.count)),), {}
    for name, column in (("a", units.a), ("b", units.b), ("paired", units.diff)):
        base, step, tallies = _lattice_tallies(column, groups)
        total = (0, [1.0])                 # the resampled sum is base + step k w.p. pmf[k]
        for tally in sorted(tallies, key=lambda tally: sum(tally.values())):
            size = sum(tally.values())
            one = (0, [tally.get(k, 0) / size for k in range(max(tally) + 1)])
            power, times = (0, [1.0]), size
            while times:                              # size draws, by squaring
                if times & 1:
                    power = _convolve(power, one)
                times >>= 1
                if times:
                    one = _convolve(one, one)
            total = _convolve(total, power)
        laws[name] = (base + step * total[0], step, total[1])
    (base_a, step_a, pmf_a), (base_b, step_b, pmf_b) = laws["a"], laws["b"]
    step = math.gcd(step_a, step_b)

    def spread(pmf, apart):                          # on the common step: zeros between
        out = [0.0] * ((len(pmf) - 1) * apart + 1)
        out[::apart] = pmf
        return out
    lo, pmf = _convolve((0, spread(pmf_b, step_b // step)),
                        (0, spread(pmf_a[::-1], step_a // step)))
    laws["unpaired"] = (base_b - base_a - step_a * (len(pmf_a) - 1) + step * lo, step, pmf)
    denominator = units.count * units.size[0] * scale
    return {name: _Lattice.of(0, _cdf(pmf), denominator, base, step)
            for name, (base, step, pmf) in laws.items()}


def exact_intervals(cells: Cells, confidence) -> dict:
    """The exact (B = infinity) percentile intervals: a, b, paired, unpaired.

    >>> exact_intervals(Cells(289, 67, 85, 59), CONFIDENCE)["paired"]
    Interval(lo=Fraction(-3, 250), hi=Fraction(21, 250), unit='pts')
    """
    return {name: dist.interval(confidence) for name, dist in exact_distributions(cells).items()}


def _resampled_means(rng, units: Units, columns, rounds: int, scale: int, progress=None) -> tuple:
    """``(means, denominator)``: round r's resampled mean is ``means[r] / denominator``.
    For clusters of unequal size (a ratio) each unit carries ``value + big * size``, so one
    sum gives numerator and item count (``big`` exceeds any numerator): Fractions over 1."""
    if units.equal_sizes:
        sums = resample_sums(rng, columns, rounds, strata=units.strata, progress=progress)
        return sums, units.count * units.size[0] * scale
    big = 2 * units.count * max(max(map(abs, column)) for column in columns) + 1
    packed = [tuple(value + big * size for value, size in zip(column, units.size))
              for column in columns]
    sums = resample_sums(rng, packed, rounds, strata=units.strata, progress=progress)
    means = []
    for total in sums:
        items = (total + big // 2) // big
        means.append(Fraction(total - items * big, items * scale))
    return means, 1


def _steps(progress, sizes):
    """Split one progress callback over consecutive steps of the given sizes."""
    offset, total = 0, sum(sizes)
    for size in sizes:
        yield None if progress is None else (
            lambda done, _total, base=offset: progress(base + done, total))
        offset += size


def bootstrap(rng: random.Random, scores: Scores, resamples: int, *, engine: str = "stream",
              progress=None) -> dict:
    """The four bootstrap distributions of the report, in the stream's order: ``a`` and ``b``
    (each system's mean), ``paired`` (mean of B - A on the same resampled units) and ``unpaired``
    (B's resample minus A's).  The ``stream`` engine resamples units -- items, or whole clusters,
    within strata if given -- bit-exact with the article's listing for plain items; the ``counts``
    engine (0/1 items) draws the multinomial cell counts."""
    if engine == "counts":          # counts of the 2x2 cells, or over the distinct values
        if scores.binary:
            cells = scores.cells()
            a, b = (functools.partial(binomial_table_variates, rng, cells.n, hits / cells.n,
                                      resamples) for hits in (cells.a, cells.b))
            paired = functools.partial(_counts_paired_sums, rng, cells, resamples)
        else:
            a, b, paired = (functools.partial(_value_counts_sums, rng, column, resamples)
                            for column in (*scores.ints, scores.units.diff))
        sums = {"a": a(), "b": b(), "paired": paired()}
        sums["unpaired"] = [y - x for x, y in zip(a(), b())]      # fresh resamples of A, B
        return {key: Distribution.of(value, scores.n * scores.scale)
                for key, value in sums.items()}
    units, scale = scores.units, scores.scale
    steps = _steps(progress, [resamples, resamples, resamples, 2 * resamples])
    dists = {}
    for key, column in (("a", units.a), ("b", units.b), ("paired", units.diff)):
        dists[key] = Distribution.of(*_resampled_means(rng, units, (column,), resamples, scale,
                                                       next(steps)))
    both, denominator = _resampled_means(rng, units, (units.a, units.b), 2 * resamples, scale,
                                         next(steps))
    dists["unpaired"] = Distribution.of([b - a for a, b in zip(both[0::2], both[1::2])],
                                        denominator)
    return dists


def paired_distribution(rng: random.Random, data, resamples: int, engine: str = "stream"
                        ) -> Distribution:
    """The paired distribution alone (coverage): of Scores (stream) or Cells (counts)."""
    if engine == "counts":
        return Distribution.of(_counts_paired_sums(rng, data, resamples), data.n)
    units = data.units
    return Distribution.of(*_resampled_means(rng, units, (units.diff,), resamples, data.scale))


# --- The saddlepoint approximation to the bootstrap (real scores, clusters, strata) ---
#
# A bootstrap mean's cumulant generating function is known exactly, K(s) = sum over
# strata of n_h log(mean_h exp(s z)); Lugannani and Rice's formula turns it into tails
# with relative error like n**-1.5 (Daniels 1987 for the lattice correction; Davison and
# Hinkley 1988 for the bootstrap), given many units none of which moves the sum much.  A
# ratio (clusters of unequal size) is exact for one system and the paired gap, as
# P(sum (y - t m)* <= 0), and linearized for the unpaired gap (Davison and Hinkley 1997,
# section 2.7).

_SADDLEPOINT_UNITS = 1000        # from this many units the saddlepoint is used
_SADDLEPOINT_SMOOTH_UNITS = 50   # ... or from this many, when no value holds 20% of them
_SADDLEPOINT_LUMP = Fraction(1, 5)
_SADDLEPOINT_REACH = 3           # no unit may move the sum by more than sd/3 on its own
_MIXTURE_OUTLIERS = 3            # ... or the few that do (at most this many) taken exactly
_MIXTURE_TAKEN = 100             # ... where a group of nearby ones counts as one: values in all


def _root(parts, target: float) -> float:
    """The saddle point s with K'(s) = target: Newton's method from the normal guess,
    Illinois if it strays."""
    _, mean, k2 = _cgf(parts, 0.0)
    spread = math.sqrt(max(k2, 1e-300))
    s = guess = (target - mean) / spread ** 2
    for _ in range(30):
        _, k1, k2 = _cgf(parts, s)
        if k2 <= 0:
            break
        step = (target - k1) / k2
        s += max(-2 / spread, min(2 / spread, step))
        if abs(step) * spread < 1e-13:
            return s
    return _solve(lambda s: _cgf(parts, s)[1], target, guess, 1 / spread)


def _cgf(parts, s: float) -> tuple:
    """``(K, K', K'')`` of a signed sum of independent resampled sums: *parts* holds
    ``(sign, strata)`` -- B's sum minus A's for the unpaired gap.  Each stratum's terms
    are shifted by the largest exponent (no exp overflows) and summed exactly."""
    k = k1 = k2 = 0.0
    for sign, strata in parts:
        t = sign * s
        for stratum in strata:
            top = t * (stratum.high if t > 0 else stratum.low)
            if t == 0:                    # every weight its count
                total, first, second = stratum.at_zero
            else:
                weights = list(map(operator.mul, stratum.counts,
                                   map(math.exp, [t * v - top for v in stratum.values])))
                total = math.fsum(weights)
                first = math.fsum(map(operator.mul, weights, stratum.values)) / total
                second = math.fsum(map(operator.mul, weights, stratum.squares)) / total
            n = stratum.draws
            k += n * (math.log(total / n) + top + t * stratum.mean)
            k1 += sign * (n * (first + stratum.mean))
            k2 += n * max(0.0, second - first * first)
    return k, k1, k2


def _lugannani_rice(parts, s: float, span: float) -> tuple:
    """``(x, P(S < x), dP/ds, dx/ds)`` at the saddle point s: x = K'(s), dx/ds = K''(s), with
    Daniels' second continuity correction for a sum on a lattice of the given span (0: continuous);
    the slope is the saddlepoint density times K''(s), ``phi(w) sqrt(K''(s))``.  Near s = 0 the
    limit ``1/2 + k3/(6 sqrt(2 pi) K''^1.5)`` is used, k3 the third cumulant (numerically)."""
    k, k1, k2 = _cgf(parts, s)
    normal = NormalDist()
    if k2 <= 0:
        return k1, 0.5, 0.0, 0.0
    root = math.sqrt(k2)
    if abs(s) * root < 1e-5:
        step = 1e-3 / root
        third = (_cgf(parts, step)[2] - _cgf(parts, -step)[2]) / (2 * step)
        p = 0.5 + third / (6 * math.sqrt(2 * math.pi) * k2 ** 1.5)
        return k1, p, normal.pdf(0) * root, k2
    w = math.copysign(math.sqrt(max(0.0, 2 * (s * k1 - k))), s)
    u = (2 / span * math.sinh(s * span / 2) if span else s) * root
    if abs(w) < 1e-8:
        return k1, 0.5, normal.pdf(0) * root, k2
    p = normal.cdf(w) + normal.pdf(w) * (1 / w - 1 / u)
    return k1, min(1.0, max(0.0, p)), normal.pdf(w) * root, k2


def _solve(f, target: float, guess: float, scale: float) -> float:
    """The s with f(s) = target, f increasing: a bracket, then Illinois (a safe secant)."""
    low, high = guess - scale, guess + scale
    f_low, f_high = f(low) - target, f(high) - target
    while f_low > 0:
        low, high, f_high = low - 2 * (high - low), low, f_low
        f_low = f(low) - target
    while f_high < 0:
        low, high, f_low = high, high + 2 * (high - low), f_high
        f_high = f(high) - target
    side = 0
    for _ in range(100):
        middle = high - f_high * (high - low) / (f_high - f_low) if f_high != f_low \
            else (low + high) / 2
        f_middle = f(middle) - target
        if abs(f_middle) < 1e-12 or high - low < 1e-14 * max(1.0, abs(middle)):
            return middle
        if f_middle > 0:
            high, f_high = middle, f_middle
            if side == 1:
                f_low /= 2
            side = 1
        else:
            low, f_low = middle, f_middle
            if side == -1:
                f_high /= 2
            side = -1
    return (low + high) / 2


@dataclass(frozen=True)
class _Saddlepoint(_Rules):
    """The saddlepoint approximation to a bootstrap mean ``S / denominator``, S the parts'
    signed resampled sum, on the lattice ``base + span*k`` (span 0: none); with ``ratio``
    (clusters of unequal size) the ratio ``sum y* / (scale * sum m*)`` instead."""

    parts: tuple
    denominator: int
    span: int = 0
    base: int = 0
    ratio: tuple | None = None          # per stratum ((y, m) pairs, counts); scale; items
    offset: Fraction = Fraction(0)      # added to the statistic (a linearized one's estimate)

    @functools.cached_property
    def spread(self) -> float:
        return math.sqrt(max(_cgf(self.parts, 0.0)[2], 1e-300))

    @functools.cached_property
    def skew(self) -> float:
        """The sum's skewness at s = 0: the saddle point of a quantile starts from Cornish and
        Fisher's correction to the normal one, s = (z - skew (2 z^2 + 1) / 6) / sd, so that
        Newton's method takes one step fewer."""
        third = math.fsum(sign * stratum.draws * stratum.third for sign, strata in self.parts
                          for stratum in strata)
        return third / self.spread ** 3

    @functools.cached_property
    def degenerate(self) -> bool:
        return self.ratio is None and _cgf(self.parts, 0.0)[2] == 0

    @property
    def grid(self) -> Fraction | None:
        return Fraction(self.span, self.denominator) if self.span and self.ratio is None else None

    def quantile(self, level) -> Fraction:
        """The smallest lattice value whose P(S <= x) exceeds the level (off a lattice: x, the
        point where P(S < x) reaches it, by Newton's method on the saddle point s)."""
        level = float(level)

        def newton(f, guess: float, width: float, passes: int) -> float:
            """The value where a probability reaches *level*: ``f(t)`` gives (value, probability,
            slope, rate), rate the value's slope in t; Newton steps of at most *width* from
            *guess*, Illinois (``_solve``) if they stray; within 1e-8 of the level the last step
            is on the value alone, saving an evaluation (ends move under 1e-8 of a width)."""
            t = guess
            for _ in range(passes):
                value, p, slope, rate = f(t)
                if slope <= 0:
                    break
                miss = level - p
                if abs(miss) < 1e-8 * max(1.0, min(level, 1 - level) * 1e3):
                    return value + rate * miss / slope
                t += max(-width, min(width, miss / slope))
            return f(_solve(lambda t: f(t)[1], level, guess, width))[0]

        if self.degenerate:                         # a point: every resample gives it
            return self.offset + Fraction(self.base, self.denominator)
        if self.ratio is not None:                  # Newton's method in t
            pairs, scale, items = self.ratio
            centre = math.fsum(y * c for units, counts in pairs
                               for (y, _), c in zip(units, counts)) / (scale * items)
            width = self.spread / (scale * items)
            return Fraction(newton(lambda t: (t, *self._ratio_cdf(t, slope=True), 1.0),
                                   centre + NormalDist().inv_cdf(level) * width, width, 12))
        z = NormalDist().inv_cdf(min(max(level, 1e-15), 1 - 1e-15))
        x = newton(lambda s: _lugannani_rice(self.parts, s, self.span),
                   (z - max(-abs(z) / 2, min(abs(z) / 2, self.skew * (2 * z * z + 1) / 6)))
                   / self.spread, 1 / self.spread, 8)
        if not self.span:
            return self.offset + Fraction(x) / self.denominator
        k = math.floor((x - self.span / 2 - self.base) / self.span) + 1
        return self.offset + Fraction(self.base + k * self.span, self.denominator)

    def share_below(self, estimate) -> float:
        if self.ratio is None and abs(float((estimate - self.offset) * self.denominator)
                                      - _cgf(self.parts, 0.0)[1]) < 1e-9 * self.spread:
            return _lugannani_rice(self.parts, 0.0, self.span)[1]
        return self.mass_below(estimate)

    def mass_below(self, value) -> float:
        """P(statistic < value)."""
        if self.ratio is not None:
            return self._ratio_cdf(float(value))
        if self.degenerate:
            return float(value > self.quantile(0.5))
        target = float((value - self.offset) * self.denominator)
        return _lugannani_rice(self.parts, _root(self.parts, target), 0)[1]

    # --- a ratio: P(sum y* / (scale * sum m*) <= t) = P(sum (y - t scale m)* <= 0) ---

    def _ratio_cdf(self, t: float, slope: bool = False):
        """P(ratio < t); with *slope* also dP/dt (the sum's density at 0 times scale*items)."""
        pairs, scale, items = self.ratio
        shift = t * scale
        parts = ((1, tuple(_Stratum.weighted([y - shift * m for y, m in units], counts)
                           for units, counts in pairs)),)
        s = _root(parts, 0.0)
        _, p, ds, _ = _lugannani_rice(parts, s, 0)
        if not slope:
            return p
        return p, ds / max(_cgf(parts, s)[2], 1e-300) * scale * items


def _saddlepoint_fits(units: Units) -> bool:
    """Enough units, smooth enough values, and none moving a sum by a third of its sd?"""
    return units.count >= _SADDLEPOINT_SMOOTH_UNITS and all(
        _column_fits(strata, units) for strata in units.moments.values())


def _column_fits(strata, units: Units) -> bool:
    """One column's strata: smooth enough, none moving the sum by a third of its sd (or a
    point: B = A on every item, exact)."""
    spread = math.sqrt(_cgf(((1, strata),), 0.0)[2])
    if spread == 0:
        return units.equal_sizes
    reach = max(max(map(abs, stratum.values)) for stratum in strata)
    lump = max(max(stratum.counts) for stratum in strata) / units.count
    return _SADDLEPOINT_REACH * reach <= spread and not (
        units.count < _SADDLEPOINT_UNITS and lump > _SADDLEPOINT_LUMP) and not _rare_lump(
        strata, [frozenset()] * len(strata), units)


def _rare_lump(strata, taken, units: Units) -> bool:
    """Do a few units (2 to 100, at most 5%), those whose draws move the sum most, on either
    side and in any stratum, lie apart from the others by more than a third of the others'
    sum's sd?  Their draws then make lumps (one per number drawn) that no smooth law
    follows, though no one unit moves the sum on its own.  The group grows from the ends of
    every stratum's values inwards, so that far groups of both signs (ten scores of 10^5 in
    B, eight in A) or spread over strata do not hide behind each other's spread."""
    def moves(stratum: _Stratum, out, centre: float, h: int):
        """``(-|move|, h, value, count)`` of the stratum's values not in *out*, the largest
        moves from *centre* first (to merge over strata): the sorted values' ends walked in."""
        values, counts, ranked = stratum.values, stratum.counts, stratum.ranked
        low, high = 0, len(ranked) - 1
        while low <= high:
            if values[ranked[low]] in out:
                low += 1
                continue
            if values[ranked[high]] in out:
                high -= 1
                continue
            if centre - values[ranked[low]] > values[ranked[high]] - centre:
                i, low = ranked[low], low + 1
            else:
                i, high = ranked[high], high - 1
            yield -abs(values[i] - centre), h, values[i], counts[i]

    limit, walks, rests, spread = min(100, units.count / 20), [], [], []
    for h, (stratum, out) in enumerate(zip(strata, taken)):
        if out:                                        # of all the units not out
            mean, variance = _rest_cumulants(stratum, out)[:2]
            total = math.fsum(c for v, c in zip(stratum.values, stratum.counts) if v not in out)
        else:
            total, mean, second = stratum.at_zero
            variance = second - mean * mean
        rests.append((mean * total, (variance + mean * mean) * total, total))
        spread.append(stratum.draws * variance)
        walks.append(moves(stratum, out, mean, h))
    held, variance = 0.0, math.fsum(spread)
    for _, h, v, c in heapq.merge(*walks):
        first, second, total = rests[h]
        held += c
        if held > limit or c >= total:                 # (a rest is never empty)
            return False
        first, second, total = first - v * c, second - v * v * c, total - c
        rests[h], mean = (first, second, total), first / total
        variance -= spread[h]
        spread[h] = strata[h].draws * max(0.0, second / total - mean * mean)
        variance += spread[h]
        if held >= 2 and _SADDLEPOINT_REACH * abs(v - mean) > math.sqrt(max(0.0, variance)):
            return True
    return False


def _lattice_of(column, groups) -> tuple:
    """``(base, span)`` of the lattice a resampled sum of this integer column lies on."""
    base, span = 0, 0
    for units in groups:
        first = column[units[0]]
        base += first * len(units)
        values = set(column) if len(units) == len(column) else set(map(column.__getitem__, units))
        span = math.gcd(span, *map(operator.sub, values, itertools.repeat(first)))
    return base, span


def saddlepoint_distributions(scores: Scores) -> dict:
    """The four bootstrap distributions by the saddlepoint approximation: a, b, paired
    (exactly as ratios for clusters of unequal size) and unpaired."""
    units, scale = scores.units, scores.scale
    groups = units.strata or (tuple(range(units.count)),)
    out = {}
    if units.equal_sizes:
        denominator = units.count * units.size[0] * scale
        for name, column in (("a", units.a), ("b", units.b), ("paired", units.diff)):
            base, span = _lattice_of(column, groups)
            out[name] = _Saddlepoint(((1, units.moments[name]),), denominator, span, base)
        a, b = out["a"], out["b"]                   # the unpaired gap: B's sum minus A's
        out["unpaired"] = _Saddlepoint(b.parts + ((-1, a.parts[0][1]),), denominator,
                                       math.gcd(b.span, a.span), b.base - a.base)
        return out
    for name, column in (("a", units.a), ("b", units.b), ("paired", units.diff)):
        pairs = []                              # per stratum: distinct (y, m), their counts
        for members in groups:
            tally = collections.Counter((column[u], units.size[u]) for u in members)
            pairs.append((tuple((float(y), float(m)) for y, m in tally),
                          tuple(map(float, tally.values()))))
        out[name] = _Saddlepoint(((1, units.moments[name]),), units.count * scale,
                                 ratio=(tuple(pairs), scale, sum(units.size)))
    items = sum(units.size) / units.count          # the unpaired gap, linearized
    linear = []
    for sign, column in ((1, units.b), (-1, units.a)):
        mean = math.fsum(column) / sum(units.size)
        shifted = [(y - mean * m) / items for y, m in zip(column, units.size)]
        linear.append((sign, tuple(_Stratum.of([shifted[u] for u in members])
                                   for members in groups)))
    out["unpaired"] = _Saddlepoint(tuple(linear), units.count * scale,
                                   offset=scores.mean_b - scores.mean_a)
    return out


# --- A few outlying units: their draws counted exactly, the rest by Edgeworth's series ---
#
# Where a few units move a resampled sum on their own (a score of 10^5 among scores in
# [0, 1]) the saddlepoint does not hold, and 2,000 resamples do not place the ends: the
# distribution is a few lumps, one per number of the outliers' draws.  Those numbers are
# binomial and the outliers' sums a convolution, both exact; given them, the other units'
# draws are a sum of many small terms, taken by Edgeworth's two-term series from their
# cumulants (error of order n**-1.5, as the saddlepoint's; Hall 1992, section 2.4).

_MIXTURE_STATES = 10_000         # the outliers' (draws, sum) states kept, at most
_MIXTURE_DRAWN = 50_000          # ... one stratum's, before those of nearly one centre merge
_MIXTURE_NEGLIGIBLE = 1e-14      # a state less likely than this is left out
_MIXTURE_MERGE = 0.2             # states this many of the rest's sds apart merge


def _outlying(strata, units: Units) -> tuple | None:
    """Per stratum, the groups of outlying values (at most _MIXTURE_OUTLIERS groups and
    _MIXTURE_TAKEN values in all) without which the column fits the saddlepoint's guard,
    taken farthest first; a group's values lie within a third of the rest's sd of one
    another.  None if no such few."""
    def near_groups(values, reach: float) -> frozenset:
        """*values* in groups, each spanning at most *reach* (from its least value up)."""
        groups, group = [], []
        for value in sorted(values):
            if group and value - group[0] > reach:
                groups.append(frozenset(group))
                group = []
            group.append(value)
        return frozenset(groups + [frozenset(group)] if group else groups)

    taken = [frozenset() for _ in strata]
    ordered = [sorted(stratum.values) for stratum in strata]
    while True:                                    # at most _MIXTURE_TAKEN + 1 rounds
        rests = [_rest_cumulants(stratum, out) for stratum, out in zip(strata, taken)]
        spread = math.sqrt(math.fsum(stratum.draws * rest[1]
                                     for stratum, rest in zip(strata, rests)))
        pooled = frozenset(v + stratum.mean for stratum, out in zip(strata, taken) for v in out)
        if len(near_groups(pooled, spread / _SADDLEPOINT_REACH)) > _MIXTURE_OUTLIERS:
            return None           # (a group over strata counts once; the reach only shrinks)
        ends = []                                  # each stratum's least and greatest not out
        for h, (values, out, rest) in enumerate(zip(ordered, taken, rests)):
            for v in (next(x for x in values if x not in out),
                      next(x for x in reversed(values) if x not in out)):
                ends.append((abs(v - rest[0]), h, v))
        far, where, value = max(ends)
        if _SADDLEPOINT_REACH * far <= spread and not _rare_lump(    # (far 0: all equal)
                strata, taken, units):
            return tuple(near_groups(out, spread / _SADDLEPOINT_REACH)
                         for out in taken) if any(taken) else None
        if sum(map(len, taken)) == _MIXTURE_TAKEN:
            return None
        taken[where] = taken[where] | {value}


def _rest_cumulants(stratum: _Stratum, out: frozenset) -> tuple:
    """Mean and the 2nd to 4th cumulants of one draw from the stratum's units but *out*
    (cached on the stratum: the chooser and the four distributions ask alike)."""
    cache = stratum.rests
    if out not in cache:
        keep = [v not in out for v in stratum.values] if out else None
        values = list(itertools.compress(stratum.values, keep)) if out else stratum.values
        counts = list(itertools.compress(stratum.counts, keep)) if out else stratum.counts
        cache[out] = _cumulants(values, counts)
    return cache[out]


def _cumulants(values, counts) -> tuple:
    """Mean and the 2nd to 4th cumulants of one draw from *values* held *counts* times."""
    total = math.fsum(counts)
    mean = math.fsum(map(operator.mul, values, counts)) / total
    centred = [v - mean for v in values]
    weighted = list(map(operator.mul, counts, centred))
    m2 = math.fsum(map(operator.mul, weighted, centred)) / total
    weighted = list(map(operator.mul, weighted, centred))
    m3 = math.fsum(map(operator.mul, weighted, centred)) / total
    m4 = math.fsum(map(operator.mul, map(operator.mul, weighted, centred), centred)) / total
    return mean, m2, m3, m4 - 3 * m2 * m2


def _stratum_states(stratum: _Stratum, out) -> list | None:
    """``(probability, outliers' sum, the rest's draws, (k2, k3, k4))`` of one stratum's resample:
    the outliers' draws K ~ Binomial(n, their share), their sum given K a K-fold convolution over
    the groups *out* (each at its mean, the draws' spread about it kept as cumulants, added to the
    rest's); None past _MIXTURE_STATES or when the outliers are not rare (K's mean above 100)."""
    n = stratum.draws
    if not out:
        return [(1.0, 0.0, n, (0.0, 0.0, 0.0))]
    weights = dict(zip(stratum.values, stratum.counts))
    held = math.fsum(weights[v] for group in out for v in group)
    share = held / math.fsum(stratum.counts)
    if n * share > 100:
        return None
    groups = []                   # per group: its chance per draw, its (mean, k2, k3, k4)
    for group in out:
        counts = [weights[v] for v in group]
        groups.append((math.fsum(counts) / held, _cumulants(list(group), counts)))
    states, draws = [], {(0,) * len(groups): 1.0}   # the groups' draws (exact counts): chance
    chance = math.exp(n * math.log1p(-share))       # P(K = 0), at least e**-100
    for k in range(n + 1):
        if k:
            chance *= (n - k + 1) / k * share / (1 - share)
            merged = collections.defaultdict(float)
            for before, p in draws.items():
                for g, (q, _) in enumerate(groups):
                    merged[before[:g] + (before[g] + 1,) + before[g + 1:]] += p * q
            draws = {j: p for j, p in merged.items() if p > _MIXTURE_NEGLIGIBLE}
        for j, p in draws.items():
            if chance * p > _MIXTURE_NEGLIGIBLE:
                t = [math.fsum(c * cumulants[i] for c, (_, cumulants) in zip(j, groups))
                     for i in range(4)]
                states.append((chance * p, t[0], n - k, tuple(t[1:])))
        if len(states) > _MIXTURE_DRAWN:
            return None
        if k > n * share and chance < _MIXTURE_NEGLIGIBLE:
            break
    return states


@dataclass(frozen=True)
class _Mixture(_Rules):
    """A bootstrap mean ``S / denominator`` on the lattice ``base + span*k`` (span 0: none)
    as a mixture: per state of the outliers' draws, its probability and the rest's
    ``(mean, sd, skewness, excess kurtosis)``, S's continuous law by Edgeworth's series."""

    states: tuple
    denominator: int
    span: int = 0
    base: int = 0
    degenerate = False

    @classmethod
    def of(cls, parts, denominator: int, span: int = 0, base: int = 0) -> _Mixture | None:
        """From *parts*, ``(sign, strata, outliers per stratum)``: None past _MIXTURE_STATES."""
        states = [(1.0, 0.0, 0.0, 0.0, 0.0)]           # p, centre, k2, k3, k4
        within = _MIXTURE_MERGE * math.sqrt(math.fsum(     # of the rest's sum, in the end
            stratum.draws * _rest_cumulants(stratum, frozenset().union(*out))[1]
            for _, strata, taken in parts for stratum, out in zip(strata, taken)))
        for sign, strata, taken in parts:
            for stratum, out in zip(strata, taken):
                mean, k2, k3, k4 = _rest_cumulants(stratum, frozenset().union(*out))
                local = _stratum_states(stratum, out)
                if local is None:
                    return None
                local = _merged_states([(q, sign * (t + stratum.draws * stratum.mean
                                                    + draws * mean), draws * k2 + d2,
                                         sign * (draws * k3 + d3), draws * k4 + d4)
                                        for q, t, draws, (d2, d3, d4) in local], within)
                states = _merged_states([(p * q, centre + at, c2 + e2, c3 + e3, c4 + e4)
                                         for p, centre, c2, c3, c4 in states
                                         for q, at, e2, e3, e4 in local
                                         if p * q > _MIXTURE_NEGLIGIBLE], within)
                if len(states) > _MIXTURE_STATES:
                    return None
        mass = math.fsum(p for p, *_ in states)         # all but the states left out
        if mass < 0.5:
            return None
        return cls(tuple((p / mass, centre, math.sqrt(c2), c3 / c2 ** 1.5, c4 / c2 ** 2)
                         if c2 > 0 else (p / mass, centre, 0.0, 0.0, 0.0)  # the rest all equal
                         for p, centre, c2, c3, c4 in states), denominator, span, base)

    @functools.cached_property
    def spread(self) -> float:
        mean = math.fsum(p * c for p, c, *_ in self.states)
        return math.sqrt(math.fsum(p * (sd * sd + (c - mean) ** 2)
                                   for p, c, sd, *_ in self.states))

    @property
    def grid(self) -> Fraction | None:
        return Fraction(self.span, self.denominator) if self.span else None

    def cdf(self, x: float) -> float:
        """The continuous law's P(S < x): Edgeworth's series per state, weighted."""
        total = 0.0
        for p, centre, sd, skew, kurt in self.states:
            z = (x - centre) / sd if sd else 0.0
            if z > 12 or z < -12 or sd == 0:
                total += p if x > centre else 0.0
                continue
            density = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
            series = skew / 6 * (z * z - 1) + kurt / 24 * z * (z * z - 3) + \
                skew * skew / 72 * z * (z ** 4 - 10 * z * z + 15)
            total += p * min(1.0, max(0.0, math.erfc(-z / math.sqrt(2)) / 2 - density * series))
        return total

    def quantile(self, level) -> Fraction:
        """The smallest lattice value whose P(S <= x) exceeds the level, P(S <= x) read as the
        continuous law at x + span/2 (off a lattice: where the law reaches the level)."""
        level = min(max(float(level), 1e-12), 1 - 1e-12)
        mean = math.fsum(p * c for p, c, *_ in self.states)
        x = _solve(self.cdf, level, mean + NormalDist().inv_cdf(level) * self.spread, self.spread)
        if not self.span:
            return Fraction(x) / self.denominator
        k = math.floor((x - self.span / 2 - self.base) / self.span) + 1
        return Fraction(self.base + k * self.span, self.denominator)

    def share_below(self, estimate) -> float:
        """P(S < estimate) + P(S = estimate) / 2: on a lattice, the law half a step either side
        (a lump at the estimate counts half, as BCa's bias correction reads it)."""
        x = float(estimate * self.denominator)
        return (self.cdf(x - self.span / 2) + self.cdf(x + self.span / 2)) / 2

    def mass_below(self, value) -> float:
        """P(statistic < value): on a lattice, the law at the lattice value below, plus span/2."""
        x = float(value * self.denominator)
        if self.span:
            x = self.base + self.span * math.ceil((x - self.base) / self.span) - self.span / 2
        return self.cdf(x)


def _merged_states(states: list, within: float) -> list:
    """``(p, centre, k2, k3, k4)`` states whose centres lie *within* (a fifth of the rest's
    sum's sd) of the first of a run, as one: probabilities summed, centre, variance and
    third cumulant matched, k4 averaged, which moves the law by under 10^-4 of its sd (the
    same numbers drawn of one far group's values in different strata, or sums of three far
    groups' draws that nearly coincide, differ by far less than the rest's spread, and had
    multiplied past _MIXTURE_STATES)."""
    states.sort(key=operator.itemgetter(1))
    out, run = [], []
    for state in states + [None]:
        if run and (state is None or state[1] - run[0][1] > within):
            if len(run) == 1:
                out.append(run[0])
            else:
                first = run[0][1]
                weight = math.fsum(p for p, *_ in run)
                shift = math.fsum(p * (c - first) for p, c, *_ in run) / weight
                apart = [c - first - shift for _, c, *_ in run]
                out.append((weight, first + shift,
                            math.fsum(p * (c2 + d * d) for (p, _, c2, _, _), d in zip(run, apart))
                            / weight,
                            math.fsum(p * (c3 + 3 * c2 * d + d ** 3)
                                      for (p, _, c2, c3, _), d in zip(run, apart)) / weight,
                            math.fsum(p * c4 for p, *_, c4 in run) / weight))
            run = []
        run.append(state)
    return out


def _mixture_fits(units: Units) -> bool:
    """Each column fits the saddlepoint, or would without a few outlying values, and the
    mixtures stay small?"""
    return units.count >= _SADDLEPOINT_UNITS and units.equal_sizes and \
        _mixture_distributions(units, 1) is not None


def _mixture_distributions(units: Units, scale: int) -> dict | None:
    """The four bootstrap distributions where a few units move a sum on their own: a column with
    such outliers by ``_Mixture``, one without by the saddlepoint; None if a column fits neither.
    Built once per design (the chooser asks first), each mean's denominator then scaled."""
    def build() -> dict | None:                  # at scale 1
        groups = units.strata or (tuple(range(units.count)),)
        denominator = units.count * units.size[0]
        out, taken = {}, {}
        for name, column in (("a", units.a), ("b", units.b), ("paired", units.diff)):
            strata = units.moments[name]
            base, span = _lattice_of(column, groups)
            fits = _column_fits(strata, units)
            taken[name] = None if fits else _outlying(strata, units)
            if not fits and taken[name] is None:
                return None
            out[name] = _Saddlepoint(((1, strata),), denominator, span, base) if fits else \
                _Mixture.of(((1, strata, taken[name]),), denominator, span, base)
            if out[name] is None:
                return None
        a, b = out["a"], out["b"]                   # the unpaired gap: B's sum minus A's
        none = tuple(frozenset() for _ in groups)
        out["unpaired"] = _Mixture.of(((1, units.moments["b"], taken["b"] or none),
                                       (-1, units.moments["a"], taken["a"] or none)), denominator,
                                      math.gcd(b.span, a.span), b.base - a.base) \
            if taken["a"] or taken["b"] else _Saddlepoint(
                b.parts + ((-1, a.parts[0][1]),), denominator, math.gcd(b.span, a.span),
                b.base - a.base)
        return out if out["unpaired"] is not None else None

    if "mixture" not in units.built:
        units.built["mixture"] = build()
    built = units.built["mixture"]
    return built and {name: dataclasses.replace(dist, denominator=dist.denominator * scale)
                      for name, dist in built.items()}


# --- Score intervals: never of zero width, no resampling ---

def wilson_interval(successes, n: int, confidence) -> tuple:
    """Wilson's score interval for a binomial proportion (never of zero width; *successes*
    may be a real p*n when planning).

    >>> [round(x, 4) for x in wilson_interval(30, 30, CONFIDENCE)]
    [0.8865, 1.0]
    """
    z = _z_value(confidence)
    p, z2 = successes / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    spread = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - spread), min(1.0, centre + spread)


def clopper_pearson(successes: int, n: int, confidence) -> tuple:
    """The exact (Clopper-Pearson) interval for a binomial proportion: each end solves a binomial
    tail equation, its root bracketed from the Wilson interval's end and found by the Illinois
    method (a safeguarded secant), a dozen tail sums instead of sixty bisection steps.

    >>> [round(x, 6) for x in clopper_pearson(0, 30, CONFIDENCE)]
    [0.0, 0.115703]
    """
    def root(f, guess: float) -> float:
        """The root in (0, 1) of an increasing f, from a guess: bracket, then Illinois."""
        guess = min(max(guess, 1e-300), 1 - 1e-16)
        step = max(1e-12, min(guess, 1 - guess) / 8)
        low = high = guess
        f_low = f_high = f(guess)
        while f_low > 0 and low > 0.0:
            low = max(0.0, low - step)
            f_low, step = f(low), step * 2
        while f_high < 0 and high < 1.0:
            high = min(1.0, high + step)
            f_high, step = f(high), step * 2
        side = 0
        for _ in range(200):
            if high - low <= 1e-13 * max(1e-300, high) or f_low == 0 or f_high == 0:
                break
            middle = (low * f_high - high * f_low) / (f_high - f_low)
            if not low < middle < high:
                middle = (low + high) / 2
            value = f(middle)
            if value < 0:
                low, f_low = middle, value
                f_high, side = f_high / 2 if side == -1 else f_high, -1
            else:
                high, f_high = middle, value
                f_low, side = f_low / 2 if side == 1 else f_low, 1
        return low if f_low == 0 else high if f_high == 0 else (low + high) / 2

    alpha = float(1 - Fraction(confidence)) / 2
    guess = wilson_interval(successes, n, confidence)
    lower = 0.0 if successes == 0 else root(
        lambda q: (1 - _binom_cdf(successes - 1, n, q)) - alpha, guess[0])
    upper = 1.0 if successes == n else root(
        lambda q: alpha - _binom_cdf(successes, n, q), guess[1])
    return lower, upper


def newcombe_paired(cells: Cells, confidence) -> Interval:
    """Newcombe's hybrid score ("square-and-add") interval for the gap B - A of two paired
    proportions: method 10 of R. G. Newcombe, "Improved confidence intervals for the difference
    between binomial proportions based on paired data", Statistics in Medicine 17 (1998)
    2635-2650 (as in Altman et al., Statistics with Confidence, 2000, ch. 6, and Fagerland,
    Lydersen and Laake, Statistical Analysis of Contingency Tables, 2017, ch. 8): Wilson
    intervals (l, u) for each accuracy, combined through the correlation psi of the 2x2 table,
    ``A = both*neither - a_only*b_only``, ``psi = (A - n/2)/sqrt(margins)`` when A > n/2, 0 when
    0 <= A <= n/2, and ``A/sqrt(margins)`` when A < 0:
    ``gap - sqrt((pB-lB)^2 + (uA-pA)^2 - 2 psi (pB-lB)(uA-pA))`` and likewise above.

    >>> print(newcombe_paired(Cells(289, 67, 85, 59), CONFIDENCE))
    [-1.2, +8.4] pts
    """
    n = cells.n
    margins = cells.a * (n - cells.a) * cells.b * (n - cells.b)
    agreement = cells.both * cells.neither - cells.a_only * cells.b_only
    psi = 0.0
    if margins and agreement > n / 2:
        psi = (agreement - n / 2) / math.sqrt(margins)
    elif margins and agreement < 0:
        psi = agreement / math.sqrt(margins)
    return _clamp(newcombe_unpaired(cells.a, cells.b, n, confidence, psi), -1, 1)


def newcombe_unpaired(hits_a: int, hits_b: int, n: int, confidence, psi: float = 0.0) -> Interval:
    """Newcombe's hybrid score ("square-and-add" Wilson) interval for B - A of two
    independent proportions: method 10 of R. G. Newcombe, "Interval estimation for
    the difference between independent proportions", Statistics in Medicine 17
    (1998) 873-890 -- and, given the paired table's correlation *psi*, the paired one's
    sums before newcombe_paired() cuts them to [-1, 1]."""
    pa, pb = hits_a / n, hits_b / n
    la, ua = wilson_interval(hits_a, n, confidence)
    lb, ub = wilson_interval(hits_b, n, confidence)
    delta, epsilon = (math.sqrt(max(0.0, x ** 2 + y ** 2 - 2 * psi * x * y))
                      for x, y in ((pb - lb, ua - pa), (pa - la, ub - pb)))
    gap = Fraction(hits_b - hits_a, n)
    return Interval(gap - Fraction(delta), gap + Fraction(epsilon))


def _clamp(interval: Interval, low, high) -> Interval:
    """The interval cut to [low, high] (a basic interval can pass 1)."""
    return Interval(min(max(interval.lo, low), high), max(min(interval.hi, high), low))


@dataclass(frozen=True)
class _FellBack(Interval):
    """The percentile interval standing in where BCa is undefined, as in a comparison."""


def _interval_by(dist, confidence, rule: str, estimate=None, jack=None) -> tuple:
    """``(interval, rule used, why)``: the bootstrap interval by *rule*, or where BCa is
    undefined the percentile one, with why (else None) -- the one place BCa falls back."""
    why = dist.bca_levels(confidence, estimate, jack) if rule == "bca" else None
    if isinstance(why, str):
        return dist.interval(confidence), "percentile", why
    return dist.interval(confidence, rule, estimate, jack), rule, None


def _gap_intervals(dist, estimate: Fraction, confidence, rules, *, groups=None,
                   scale: int = 1, cells: Cells | None = None) -> dict:
    """The paired gap's interval by each rule in *rules*, as analyze() shows it (a _FellBack
    where BCa is undefined; None for score without a 2x2 table).  Draws nothing: coverage
    and calibration measure every rule on the same replays."""
    out = {}
    for rule in rules:
        if rule == "score":
            out[rule] = None if cells is None else newcombe_paired(cells, confidence)
            continue
        jack = _jackknife(groups, "paired", scale) if rule == "bca" else None
        interval, used, _ = _interval_by(dist, confidence, rule, estimate, jack)
        interval = _clamp(interval, -1, 1)
        out[rule] = interval if used == rule else _FellBack(*dataclasses.astuple(interval))
    return out


def _mean_and_spread(values) -> tuple:
    """(mean, population variance) in floats (numpy's mean and var)."""
    mean = math.fsum(values) / len(values)
    return mean, math.fsum((v - mean) ** 2 for v in values) / len(values)


def ppi_mean(labels, predicted, unlabelled, tuning=None) -> tuple:
    """Prediction-powered mean (PPI++ of Angelopoulos, Duchi and Zrnic 2023): *labels* and
    the *predicted* values of the same items, the predictions alone on *unlabelled* items.
    ``(estimate, standard error, tuning)``; the tuning parameter lambda, if not given, is the
    variance-minimising one clipped to [0, 1] (0: the labels alone; 1: plain PPI).  The same
    numbers as ``ppi_py.ppi_mean_ci``: estimate +- z * s.e. is its interval.

    >>> [round(x, 6) for x in ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1])]
    [0.796875, 0.192796, 0.28125]
    """
    n, big = len(labels), len(unlabelled)
    if tuning is None:
        y_mean, p_mean = math.fsum(labels) / n, math.fsum(predicted) / n
        cov = math.fsum((y - y_mean) * (p - p_mean) for y, p in zip(labels, predicted)) / n
        every = list(predicted) + list(unlabelled)
        var = _mean_and_spread(every)[1] * len(every) / (len(every) - 1)
        tuning = min(1.0, max(0.0, cov / ((1 + n / big) * var))) if var > 0 else 0.0
    imputed, imputed_var = _mean_and_spread([tuning * p for p in unlabelled])
    rectifier, rectifier_var = _mean_and_spread([y - tuning * p for y, p in
                                                 zip(labels, predicted)])
    return imputed + rectifier, math.sqrt(imputed_var / big + rectifier_var / n), tuning


# === Paired tests ===
#
# Exact McNemar, the paired sign-flip permutation test (exact when small, else
# PERMUTATIONS random flips drawn after the intervals), and the p-value adjustments.

@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on the discordant items."""

    a_only: int
    b_only: int
    p: float

    name = "McNemar exact"

    @property
    def p_text(self) -> str:
        return _format_p(self.p)


def mcnemar_exact(a_only: int, b_only: int) -> McNemar:
    """Exact two-sided McNemar test: ``min(1, 2 * P(Binomial(b+c, 1/2) <= min(b, c)))``, summed in
    exact integers up to ``_MCNEMAR_EXACT_LIMIT`` discordant pairs (each binomial coefficient from
    the last) and divided once, correctly rounded; beyond, the binomial tail is summed from
    Loader's saddle-point probabilities (relative error below 1e-12, no big-integer powers).

    >>> mcnemar_exact(67, 85).p_text, mcnemar_exact(0, 0).p, mcnemar_exact(5, 5).p
    ('0.1677', 1.0, 1.0)
    """
    n, k = a_only + b_only, min(a_only, b_only)
    if n <= _MCNEMAR_EXACT_LIMIT:                       # n = 0 too: the sum is 1, p is 1
        term = total = 1                                # C(n, 0), then C(n, i) from C(n, i-1)
        for i in range(k):
            term = term * (n - i) // (i + 1)
            total += term
        p = 2 * total / 2 ** n
    else:
        p = 2 * _binom_cdf_lower(k, n, 0.5)
    return McNemar(a_only, b_only, min(1.0, p))


@dataclass(frozen=True)
class PermutationTest:
    """Paired sign-flip permutation test of mean(B - A) = 0, two-sided: |sum of B - A|
    against its values under sign flips, exact over all 2**k patterns, by R random ones
    (p = (hits + 1) / (R + 1)) or by Robinson's saddlepoint approximation."""

    p: float
    exact: bool
    permutations: int          # 2**k when exact, R for Monte Carlo, 0 for the saddlepoint
    saddlepoint: bool = False
    swaps: bool = False        # a metric's test: the two systems' predictions swapped

    @property
    def name(self) -> str:
        how = "exact" if self.exact else "saddlepoint" if self.saddlepoint else "Monte Carlo"
        return f"{'prediction-swap' if self.swaps else 'sign-flip'} permutation ({how})"

    @property
    def at_floor(self) -> bool:
        """No random pattern was as extreme: p is the least R patterns give, a bound."""
        return self.mc_error is not None and self.p <= 1 / (self.permutations + 1)

    @property
    def mc_error(self) -> float | None:
        """A Monte Carlo p's standard error, sqrt(p (1 - p) / R); None when p is not one."""
        if self.exact or self.saddlepoint:
            return None
        return math.sqrt(self.p * (1 - self.p) / self.permutations)


def _sign_flip_saddlepoint(nonzero, observed: int, outlying=()) -> PermutationTest:
    """The sign-flip p by Robinson's saddlepoint approximation ("Saddlepoint approximations
    for permutation tests and confidence intervals", JRSS B 44, 1982): T = sum of +-d_i,
    ``K(s) = sum log cosh(s d_i)``, Daniels' correction for T's lattice of span 2 gcd(d).
    A few *outlying* differences, each of which moves T on its own, are taken exactly: each of
    their 2**m sign patterns o shifts the rest's tail, P(T >= t) = mean of P(T' >= t - o)."""
    tally = collections.Counter(map(abs, nonzero))
    span = 2 * functools.reduce(math.gcd, tally)
    values, counts = tuple(map(float, tally)), tuple(map(float, tally.values()))
    firsts = tuple(map(operator.mul, counts, values))
    seconds = tuple(map(operator.mul, firsts, values))
    log2, mul, fsum = math.log(2), operator.mul, math.fsum

    def cgf(s):                        # log cosh x = |x| + log1p(exp(-2|x|)) - log 2
        xs = [s * v for v in values]
        ts = list(map(math.tanh, xs))
        return (fsum(map(mul, counts, [abs(x) + math.log1p(math.exp(-2 * abs(x))) - log2
                                       for x in xs])),
                fsum(map(mul, firsts, ts)), fsum(map(mul, seconds, [1 - t * t for t in ts])))

    spread = math.sqrt(cgf(0.0)[2])
    top = sum(tally.elements())                        # T's lattice: top - span * k

    def upper(t) -> float:                             # P(T >= t), T symmetric about 0
        t = top - span * ((top - t) // span)           # the least lattice value >= t
        if t <= 0:
            return 1 - upper(span - t)
        far = _sign_flip_far_tail(nonzero, t) if t <= top else PermutationTest(0.0, True, 0)
        if far is not None:                            # few patterns reach t: counted
            return far.p / 2
        target = t - span / 2                          # P(T >= t) = P(T > t - span/2)
        s = target / spread ** 2
        for _ in range(60):                            # Newton on K'(s) = target
            k, k1, k2 = cgf(s)
            step = (target - k1) / k2
            s += step
            if abs(step) * spread < 1e-12:
                break
        k, k1, k2 = cgf(s)
        w = math.sqrt(max(0.0, 2 * (s * target - k)))
        u = 2 / span * math.sinh(s * span / 2) * math.sqrt(k2)
        normal = NormalDist()
        return 1 - normal.cdf(w) - normal.pdf(w) * (1 / w - 1 / u) if w > 1e-8 else 0.5

    shifts = [sum(map(operator.mul, signs, outlying))
              for signs in itertools.product((1, -1), repeat=len(outlying))]
    tail = math.fsum(upper(observed - shift) for shift in shifts) / len(shifts)
    return PermutationTest(min(1.0, 2 * max(0.0, tail)), False, 0, True)


_SIGN_FLIP_LATTICE_BITS = 1 << 27  # the exact lattice count's largest number (16 MiB)
_SIGN_FLIP_LATTICE_WORK = 1 << 35  # bits shifted and added in all (a few tenths of a second)
_SIGN_FLIP_TAIL_PATTERNS = 1 << 16  # the far tail is counted pattern by pattern up to this many
_SIGN_FLIP_FEW_SUMS = 10 ** 6       # the few-values count's sums (a few tenths of a second)


def _sign_flip_lattice(nonzero, observed: int) -> PermutationTest | None:
    """The sign-flip test exactly by its generating function: with d_i = |difference| / gcd and
    D their sum, the kept sum U has counts ``prod (1 + x**d_i)``, a big integer of k+1-bit digits;
    T = gcd * (2U - D), symmetric, so p = 2 P(U <= (D - |t|) / 2).  None past
    _SIGN_FLIP_LATTICE_BITS (a fine lattice) or _SIGN_FLIP_LATTICE_WORK.

    >>> _sign_flip_lattice([1] * 30, 30).p == 2 ** -29
    True
    """
    step = functools.reduce(math.gcd, nonzero, 0)
    total, width = sum(map(abs, nonzero)) // step, len(nonzero) + 1
    size = (total + 1) * width
    if size > _SIGN_FLIP_LATTICE_BITS or size * len(nonzero) > 2 * _SIGN_FLIP_LATTICE_WORK:
        return None
    counts = 1
    for d in nonzero:
        counts += counts << (abs(d) // step * width)
    low = (total - observed // step) // 2 + 1           # U = 0 .. low - 1 are as extreme
    tail = (counts & ((1 << (low * width)) - 1)) % ((1 << width) - 1)   # their digits' sum
    return PermutationTest(float(Fraction(2 * tail, 1 << len(nonzero))), True, 2 ** len(nonzero))


def _sign_flip_few_values(nonzero, observed: int) -> PermutationTest | None:
    """The sign-flip test exactly where the differences take few distinct sizes, however far apart
    (0.3333333333333333 and 0.3333333333333334, a rubric's thirds as decimals): of the m_v
    differences of size v, Binomial(m_v, 1/2) keep their sign, so T's law is the product of those
    counts, summed exactly over the sums it reaches; None past _SIGN_FLIP_FEW_SUMS of them.

    >>> _sign_flip_few_values([3, -3, 3, 10], 19).p, _sign_flip_few_values([3, -3, 3, 10], 13).p
    (0.125, 0.5)
    """
    tally = collections.Counter(map(abs, nonzero))
    if math.prod(count + 1 for count in tally.values()) > _SIGN_FLIP_FEW_SUMS:
        return None
    sums = {0: 1}                                     # T's value: its number of patterns
    for size, count in tally.items():
        step = collections.defaultdict(int)
        for kept in range(count + 1):
            ways, shift = math.comb(count, kept), size * (2 * kept - count)
            for total, patterns in sums.items():
                step[total + shift] += patterns * ways
        sums = step
    hits = sum(patterns for total, patterns in sums.items() if abs(total) >= observed)
    return PermutationTest(float(Fraction(hits, 1 << len(nonzero))), True, 2 ** len(nonzero))


def _sign_flip_far_tail(nonzero, observed: int) -> PermutationTest | None:
    """The sign-flip test exactly where few patterns are as extreme as the observed sum, as when
    B is above A on (nearly) every item and the saddlepoint's Newton steps run out of floating
    point: T >= |t| when the items flipped against the all-one-sign pattern hold |d| summing to
    at most (D - |t|) / 2.  Such sets are counted one by one (None past
    _SIGN_FLIP_TAIL_PATTERNS); p = 2 count / 2**k.

    >>> _sign_flip_far_tail([5, 7, 9], 21).p       # only +++ and ---
    0.25
    >>> _sign_flip_far_tail([5, 7, 9], 11).p       # and the two with only the 5 flipped
    0.5
    """
    room, least = (sum(map(abs, nonzero)) - observed) // 2, _SIGN_FLIP_TAIL_PATTERNS.bit_length()
    if sum(map(operator.le, map(least.__mul__, map(abs, nonzero)), itertools.repeat(room))) \
            >= least:
        return None                          # any *least* of these fit: 2**least sets at least
    sizes = sorted(map(abs, nonzero))
    count, sets = 0, [(0, room)]                                # (next index, room left)
    while sets:
        start, room = sets.pop()
        count += 1
        if count > _SIGN_FLIP_TAIL_PATTERNS:
            return None
        for index in range(start, len(sizes)):
            if sizes[index] > room:
                break
            sets.append((index + 1, room - sizes[index]))
    return PermutationTest(float(Fraction(2 * count, 1 << len(sizes))), True, 2 ** len(sizes))


def _sign_flip_outlying(nonzero) -> tuple | None:
    """``(rest, outlying)``: many differences, none moving T = sum +-d by a third of its sd on
    its own once the largest few (at most _MIXTURE_OUTLIERS) are taken out, nor a group of the
    largest (2 to 100, at most 5%) standing apart from the others by that much (their signs
    would make lumps no smooth law follows); None if none such."""
    ordered = sorted(map(abs, nonzero))
    squares = list(itertools.accumulate(d * d for d in ordered))    # of the least k + 1
    for taken in range(_MIXTURE_OUTLIERS + 1):
        size = len(ordered) - taken
        if size < _SADDLEPOINT_SMOOTH_UNITS:
            return None
        if (_SADDLEPOINT_REACH * ordered[size - 1]) ** 2 <= squares[size - 1]:
            lumps = range(2, min(100, size // 20) + 1)
            if any((_SADDLEPOINT_REACH * ordered[size - j]) ** 2 > squares[size - j - 1]
                   for j in lumps):
                return None
            return ordered[:size], tuple(ordered[size:])
    return None


def sign_flip_test(rng: random.Random, diffs, permutations: int | None = None, *,
                   exact_limit: int = _EXACT_SIGN_FLIP_LIMIT, progress=None,
                   counts: bool = False) -> PermutationTest:
    """The paired sign-flip test on integer differences (scores scaled to integers).  Exact
    enumeration meets in the middle: the signed sums of each half of the nonzero differences
    are listed (2**10 each), one half sorted, and every pattern counted with two bisections.
    Beyond, with *permutations* None, the saddlepoint approximation where it is safe
    (``_sign_flip_saddlepoint``), else PERMUTATIONS random patterns.  The Monte Carlo version draws
    each pattern as ``rng.getrandbits(n)`` (bit i set: item i keeps its sign) and sums with
    popcounts over the differences' binary digit planes; with *counts* (the counts engine) it
    draws, for each distinct |difference| v held by m items, how many keep their sign --
    Binomial(m, 1/2), the same distribution at a cost set by the distinct values, not by n.

    >>> sign_flip_test(random.Random(1), [3, 1, 2]).p     # |sum| 6: only +++ and ---
    0.25
    """
    observed = abs(sum(diffs))
    nonzero = [d for d in diffs if d]
    if observed == 0:
        return PermutationTest(1.0, True, 2 ** len(nonzero))
    if len(nonzero) <= exact_limit:
        half, sides = len(nonzero) // 2, []
        for part in (nonzero[:half], nonzero[half:]):       # every signed sum of each half
            sums = [0]
            for value in part:
                sums = [s + value for s in sums] + [s - value for s in sums]
            sides.append(sums)
        left, right = sides[0], sorted(sides[1])
        hits = sum(len(right) - bisect.bisect_left(right, observed - s)
                   + bisect.bisect_right(right, -observed - s) for s in left)
        return PermutationTest(float(Fraction(hits, 1 << len(nonzero))), True, 2 ** len(nonzero))
    if permutations is None:
        exact = _sign_flip_lattice(nonzero, observed) or \
            _sign_flip_few_values(nonzero, observed) or _sign_flip_far_tail(nonzero, observed)
        if exact is not None:
            return exact
        split = _sign_flip_outlying(nonzero)
        if split is not None:
            return _sign_flip_saddlepoint(split[0], observed, split[1])
        permutations = PERMUTATIONS
    if counts:                      # per distinct |d|, largest first: how many keep their sign
        sums = [0] * permutations
        for value, count in sorted(collections.Counter(map(abs, nonzero)).items(), reverse=True):
            kept = binomial_table_variates(rng, count, 0.5, permutations)
            sums = [s + value * (2 * k - count) for s, k in zip(sums, kept)]
        hits = sum(abs(s) >= observed for s in sums)
    else:
        low = min(diffs)
        shifted = [d - low for d in diffs]              # >= 0, so digit planes are bit masks
        planes = [int(bytes(48 + (d >> bit & 1) for d in reversed(shifted)), 2)
                  for bit in range(max(shifted).bit_length())]
        total, hits = sum(diffs), 0
        # The planes below *cut* move T by far less than its sd: summed only where the upper
        # planes leave the verdict open (kept lies within count * (2**cut - 1) above them).
        cut = min(len(planes), max(0, sum(d * d for d in diffs).bit_length() // 2
                                   - len(diffs).bit_length() - 6))
        upper, lower = list(enumerate(planes))[cut:], list(enumerate(planes))[:cut]
        for done in range(1, permutations + 1):
            keep = rng.getrandbits(len(diffs))
            count = keep.bit_count()
            kept = sum((keep & plane).bit_count() << bit for bit, plane in upper) + low * count
            least = 2 * kept - total
            most = least + 2 * count * ((1 << cut) - 1)
            if least >= observed or most <= -observed:
                hits += 1
            elif most >= observed or least <= -observed:      # open: the lower planes too
                kept += sum((keep & plane).bit_count() << bit for bit, plane in lower)
                hits += abs(2 * kept - total) >= observed
            if progress is not None and done % 1024 == 0:
                progress(done, permutations)
    return PermutationTest((hits + 1) / (permutations + 1), False, permutations)


def bonferroni(pvalues) -> list:
    """Bonferroni-adjusted p-values: ``min(1, m*p)`` for a family of m tests.

    >>> bonferroni([0.01, 0.04, 0.03])
    [0.03, 0.12, 0.09]
    """
    m = len(pvalues)
    return [float(min(1, m * Fraction(p))) for p in pvalues]


def holm(pvalues) -> list:
    """Holm's step-down adjusted p-values, in the input order: the i-th smallest p times
    (m - i + 1), made non-decreasing in that order and capped at 1.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(pvalues)
    adjusted = [0.0] * m
    running = Fraction(0)                   # exact, so that a float cannot flip a verdict
    for rank, index in enumerate(sorted(range(m), key=lambda i: pvalues[i])):
        running = max(running, min(Fraction(1), (m - rank) * Fraction(pvalues[index])))
        adjusted[index] = float(running)
    return adjusted


def benjamini_hochberg(pvalues) -> list:
    """Benjamini and Hochberg's step-up adjusted p-values (the false discovery rate), in
    the input order: the i-th smallest of m is ``min over j >= i of m p_(j) / j``.

    >>> [round(p, 4) for p in benjamini_hochberg([0.01, 0.04, 0.03])]
    [0.03, 0.04, 0.04]
    """
    m = len(pvalues)
    adjusted = [0.0] * m
    running = Fraction(1)                   # exact, so that a float cannot flip a verdict
    for rank, index in reversed(list(enumerate(sorted(range(m), key=lambda i: pvalues[i]),
                                               start=1))):
        running = min(running, m * Fraction(pvalues[index]) / rank)
        adjusted[index] = float(running)
    return adjusted


_ADJUST = {"holm": holm, "bh": benjamini_hochberg, "bonferroni": bonferroni}
_ADJUST_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "bonferroni": "Bonferroni"}
_ADJUST_SHORT = {"holm": "Holm", "bh": "BH", "bonferroni": "Bonf."}


# --- Metrics of a confusion matrix: F1, precision, recall, MCC, kappa ---
#
# A metric such as macro-F1 is a function of the whole confusion matrix, not a mean of
# per-item numbers, so it is recomputed on every resample.  Two systems' predictions of
# the same labelled items reduce to counts over (label, A's prediction, B's prediction)
# cells; a paired resample of n items is a multinomial draw over those cells (the counts
# engine's idea), at a cost set by the number of cells, not by n.

METRICS = ("accuracy", "macro-f1", "micro-f1", "f1", "precision", "recall",
           "balanced-accuracy", "mcc", "kappa")
_CLASS_METRICS = ("f1", "precision", "recall")        # of one class: needs ``positive``
_SIGNED_METRICS = ("mcc", "kappa")                      # in [-1, 1]: gaps in score units


@dataclass(frozen=True)
class Confusions:
    """Two systems' predictions of the same labelled items as counts over (label, A's prediction,
    B's prediction) cells: all a paired resample of a confusion-matrix metric sees.  ``classes``
    are every class in the labels or either system's predictions (sorted as numbers where all are
    numbers), or more where given; a cell's key holds their indices.

    >>> c = Confusions.of(["x", "y", "y"], ["x", "y", "x"], ["x", "x", "y"])
    >>> c.classes, c.cells, c.n
    (('x', 'y'), (((0, 0, 0), 1), ((1, 0, 1), 1), ((1, 1, 0), 1)), 3)
    """

    classes: tuple
    cells: tuple

    @classmethod
    def of(cls, labels, preds_a, preds_b, classes=None) -> Confusions:
        """*classes* (all those seen, by default) may name more, in order: those another
        system predicts, say."""
        if not len(labels) == len(preds_a) == len(preds_b):
            raise ToolError(f"{len(labels):,} labels, {len(preds_a):,} and {len(preds_b):,} "
                            "predictions: give one of each per item")
        named = collections.Counter(zip(labels, preds_a, preds_b))
        classes = classes or _classes({name for key in named for name in key})
        index = {name: i for i, name in enumerate(classes)}
        return cls(classes, tuple(sorted((tuple(map(index.__getitem__, key)), count)
                                         for key, count in named.items())))

    @property
    def n(self) -> int:
        return sum(count for _, count in self.cells)


def _classes(names) -> tuple:
    """Class names in order: as numbers where all are numbers, else as text."""
    numeric = all(isinstance(name, (int, float, Fraction)) for name in names)
    return tuple(sorted(names, key=None if numeric else str))


def _ratio(top, bottom) -> Fraction:
    """top / bottom exactly, 0 where bottom is 0 (scikit-learn's ``zero_division=0``)."""
    return Fraction(top, bottom) if bottom else Fraction(0)


def metric_value(metric: str, true, tp, predicted, positive: int | None = None,
                 exact: bool = True):
    """One system's *metric* from per-class counts (labels, right, predicted): a Fraction, but for
    ``mcc`` whose square root is rounded (then held as a Fraction); floats with *exact* false.
    Undefined ratios are 0, as scikit-learn's ``zero_division=0``; macro-F1 averages the classes in
    the labels or this system's predictions, and balanced accuracy those in the labels, as
    scikit-learn does on the same items; the kappa of one class alone is 0 (scikit-learn: NaN).

    >>> metric_value("macro-f1", [2, 1], [1, 1], [1, 2])     # F1 2/3 and 2/3
    Fraction(2, 3)
    >>> metric_value("kappa", [2, 1], [1, 1], [1, 2])
    Fraction(2, 5)
    """
    ratio = _ratio if exact else lambda top, bottom: top / bottom if bottom else 0.0
    n, right = sum(true), sum(tp)
    if metric in ("accuracy", "micro-f1"):
        return ratio(right, n)
    if metric in _CLASS_METRICS:
        t, p, x = true[positive], predicted[positive], tp[positive]
        return ratio(2 * x, t + p) if metric == "f1" else \
            ratio(x, p if metric == "precision" else t)
    if metric in ("macro-f1", "balanced-accuracy"):
        tops, bottoms = ([2 * x for x in tp], list(map(operator.add, true, predicted))) if \
            metric == "macro-f1" else (tp, true)
        count = len(bottoms) - bottoms.count(0)    # classes in the labels or predicted
        if not exact:
            return sum(map(ratio, tops, bottoms)) / count
        top, bottom = 0, 1           # on one common denominator: one reduction, not many
        for x, d in zip(tops, bottoms):
            if d:
                top, bottom = top * d + x * bottom, bottom * d
        return Fraction(top, bottom * count)
    chance = sum(map(operator.mul, true, predicted))
    if metric == "kappa":
        return ratio(n * right - chance, n * n - chance)
    spread = (n * n - sum(t * t for t in true)) * (n * n - sum(p * p for p in predicted))
    value = (n * right - chance) / math.sqrt(spread) if spread else 0.0
    return Fraction(value) if exact else value


def _cell_roles(y: int, a: int, b: int) -> tuple:
    """``(tag, class, 0 or 1)``: the per-class totals an item of cell (y, a, b) counts in."""
    return (("t", y, 1), ("pa", a, 1), ("pb", b, 1), ("ta", y, int(a == y)),
            ("tb", y, int(b == y)))


def _class_totals(confusions: Confusions) -> dict:
    """The per-class totals of all the items: "t" the labels, "ta"/"tb" A's/B's right,
    "pa"/"pb" their predictions."""
    full = {tag: [0] * len(confusions.classes) for tag in ("t", "ta", "tb", "pa", "pb")}
    for key, count in confusions.cells:
        for tag, j, hit in _cell_roles(*key):
            full[tag][j] += count * hit
    return full


def _metric_columns(keyed, classes: int, specs, exact: bool = True) -> list:
    """Per ``(metric, class index)`` of *specs*, A's and B's metric in each resample, from
    ``((label, a, b), column)`` pairs, a column giving the cell's count in every resample:
    the columns add into per-class totals first, so that a resample's metrics cost the
    classes, not the cells, and every metric reads the same totals."""
    members, size = collections.defaultdict(list), len(keyed[0][1])
    for cell, column in keyed:
        for tag, j, hit in _cell_roles(*cell):
            if hit:
                members[tag, j].append(column)
    sums = {key: list(map(sum, zip(*columns))) for key, columns in members.items()}
    return _metrics_of({tag: list(zip(*(sums.get((tag, k), itertools.repeat(0, size))
                                         for k in range(classes))))
                        for tag in ("t", "ta", "tb", "pa", "pb")}, specs, exact)


def _metrics_of(totals: dict, specs, exact: bool = True) -> list:
    """``_metric_columns`` from the per-class totals (as ``_class_totals``, a row per
    resample).  One class's metric in floats is taken column-wise, at C speed."""
    def class_floats(metric: str, positive: int, side: str) -> list:
        """``metric_value(metric, ..., positive, exact=False)`` of one system (*side* "a" or
        "b") in each resample of *totals*, the same divisions column by column."""
        pick = operator.itemgetter(positive)
        right = map(pick, totals["t" + side])
        if metric == "f1":
            tops = map(operator.mul, right, itertools.repeat(2))
            bottoms = map(operator.add, map(pick, totals["t"]), map(pick, totals["p" + side]))
        else:
            tops, bottoms = right, map(pick, totals["p" + side if metric == "precision" else "t"])
        return [top / bottom if bottom else 0.0 for top, bottom in zip(tops, bottoms)]

    return [tuple(class_floats(metric, positive, s) if metric in _CLASS_METRICS and
                  not exact else
                  [metric_value(metric, t, x, p, positive, exact) for t, x, p in
                   zip(totals["t"], totals["t" + s], totals["p" + s])] for s in ("a", "b"))
            for metric, positive in specs]


def _cell_draws(rng: random.Random, counts, resamples: int, groups=None) -> list:
    """Per cell, its count in each of *resamples* multinomial resamples of all the items
    (``multinomial_columns``): a column per cell.  With *groups* (a group per cell), within
    each group in turn, keeping its size (strata)."""
    if groups is None:
        return multinomial_columns(rng, counts, resamples)
    columns = [None] * len(counts)
    for group in dict.fromkeys(groups):
        members = [j for j, g in enumerate(groups) if g == group]
        for j, column in zip(members, multinomial_columns(rng, [counts[j] for j in members],
                                                          resamples)):
            columns[j] = column
    return columns


def metric_permutation_test(rng: random.Random, confusions: Confusions, metric: str,
                            positive=None, permutations: int = PERMUTATIONS) -> PermutationTest:
    """The paired permutation test of "A and B have the same *metric*": each item's two predictions
    swapped with probability 1/2, |gap| compared with the observed one, p = (hits + 1) / (R + 1); 1
    when the gap is 0.  A cell (y, a, b) and its mirror (y, b, a) holding m items together hold
    Binomial(m, 1/2) of them after the swaps (the kept of one plus the swapped of the other), one
    table draw per group of pairs that move A's totals alike; the gaps are screened in floats and
    those within 1e-9 of the observed one recomputed exactly."""
    return _permutation_tests(rng, confusions, [(metric, positive)], permutations)[0]


def _permutation_tests(rng: random.Random, confusions: Confusions, specs,
                       permutations: int) -> list:
    """``metric_permutation_test`` of each ``(metric, class index)`` of *specs*, on the same
    swaps (none drawn when every observed gap is 0).  Swaps leave the labels and both
    systems' sums as they are, so B's totals are those sums less A's."""
    k = len(confusions.classes)
    observed = [abs(b - a) for (a,), (b,) in _metric_columns(
        [(key, [count]) for key, count in confusions.cells], k, specs)]
    if not any(observed):
        return [PermutationTest(1.0, True, 1, swaps=True)] * len(specs)
    full = _class_totals(confusions)
    labels, both_right, both_said = full["t"], list(map(operator.add, full["ta"], full["tb"])), \
        list(map(operator.add, full["pa"], full["pb"]))
    right, said, groups = [0] * k, [0] * k, collections.Counter()
    for (y, a, b), count in confusions.cells:
        if a == b:
            said[a] += count
            right[y] += count * (a == y)
        else:            # A's side: a for the kept, b for the swapped of (y, min, max)
            low, high = min(a, b), max(a, b)
            groups[low, high, (y == low) - (y == high)] += count
    hits, chunk = [0] * len(specs), max(1, _CELL_DRAWS // (len(groups) + 2 * k))
    for start in range(0, permutations, chunk):    # memory: the groups x chunk swaps
        size = min(chunk, permutations - start)
        said_columns = [[count] * size for count in said]
        right_columns = [[count] * size for count in right]
        for (low, high, hit), total in groups.items():
            kept = binomial_table_variates(rng, total, 0.5, size)
            moved = [total - x for x in kept]
            said_columns[low] = list(map(operator.add, said_columns[low], kept))
            said_columns[high] = list(map(operator.add, said_columns[high], moved))
            if hit:
                j, column = (low, kept) if hit == 1 else (high, moved)
                right_columns[j] = list(map(operator.add, right_columns[j], column))
        rows = {"t": [tuple(labels)] * size, "ta": list(zip(*right_columns)),
                "pa": list(zip(*said_columns))}
        rows["tb"] = [tuple(map(operator.sub, both_right, row)) for row in rows["ta"]]
        rows["pb"] = [tuple(map(operator.sub, both_said, row)) for row in rows["pa"]]
        for index, (spec, seen, (a_gaps, b_gaps)) in enumerate(zip(
                specs, observed, _metrics_of(rows, specs, exact=False))):
            gaps, level = list(map(abs, map(operator.sub, b_gaps, a_gaps))), float(seen)
            near = [i for i, gap in enumerate(gaps) if abs(gap - level) <= 1e-9]
            exact = _metrics_of({tag: [values[i] for i in near] for tag, values in
                                 rows.items()}, [spec])[0]   # the near ones, exactly
            hits[index] += sum(gap > level for gap in gaps) - sum(
                gaps[i] > level for i in near) + sum(abs(b - a) >= seen for a, b in zip(*exact))
    return [PermutationTest((hit + 1) / (permutations + 1), False, permutations, swaps=True)
            if seen else PermutationTest(1.0, True, 1, swaps=True)
            for hit, seen in zip(hits, observed)]


# === Analysis ===
#
# analyze() draws from the generator in the article's order (A's interval, B's, the paired
# one, the unpaired one), then the permutation test's sign flips, then any calibration
# replays.  Every verdict is made once, by decide(), from the paired interval and test.

# --- Several runs per system: the seed's spread and a two-level interval ---
#
# A run (a training seed, a sampling epoch, a HELM trial) shifts a system's score as a whole.
# The two-level bootstrap resamples items (the same for both systems: the pairing stays) and,
# within each system, its runs.  A plain bootstrap of a handful of runs is too narrow (it sees
# (R-1)/R of their variance and has normal tails), so its interval is widened to the unbiased
# variance split below and to Student's t with Satterthwaite's df; the test is the matching t.

@dataclass(frozen=True)
class RunStats:
    """One system's runs: each run's mean score, and their spread."""

    labels: tuple
    scores: tuple                 # each run's mean score (exact)

    @property
    def count(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> Fraction:
        return sum(self.scores) / len(self.scores)

    @property
    def sd(self) -> float | None:
        """Run-to-run standard deviation (None: one run, the spread is unknown)."""
        if len(self.scores) < 2:
            return None
        mean = self.mean
        return math.sqrt(float(sum((s - mean) ** 2 for s in self.scores)) / (len(self.scores) - 1))

    def to_json(self) -> dict:
        return {"runs": len(self.scores), "labels": [str(x) for x in self.labels],
                "scores": [float(s) for s in self.scores], "mean": float(self.mean),
                "sd": self.sd, "min": float(min(self.scores)), "max": float(max(self.scores))}


@dataclass(frozen=True)
class RunsTest:
    """The two-level t test of gap = 0 (variance split, Satterthwaite's df)."""

    t: float
    df: float
    p: float
    exact: bool = False

    name = "two-level t (items and runs)"


@dataclass(frozen=True)
class RunsAnalysis:
    """The gap of two systems' mean scores over several runs each."""

    a: RunStats
    b: RunStats
    gap: Fraction
    confidence: Fraction
    distribution: Distribution    # the two-level bootstrap of the gap
    variance_items: float         # of the gap: from the item sample
    variance_runs_a: float        # from A's runs (0 with one run: unknown, not zero)
    variance_runs_b: float
    test: RunsTest

    @property
    def variance(self) -> float:
        return self.variance_items + self.variance_runs_a + self.variance_runs_b

    @property
    def overlap(self) -> bool:
        """Do the two systems' run scores overlap (the seed's plain test)?"""
        return max(min(self.a.scores), min(self.b.scores)) <= min(max(self.a.scores),
                                                                   max(self.b.scores))

    @property
    def interval(self) -> Interval:
        return self.interval_at(self.confidence)

    def scale(self, confidence) -> float:
        """The plain two-level spread's widening: to the unbiased variance, times t / normal."""
        values = [float(Fraction(s, self.distribution.denominator))
                  for s in self.distribution.sums]
        mean = math.fsum(values) / len(values)
        spread = math.fsum((v - mean) ** 2 for v in values) / max(1, len(values) - 1)
        q = 1 - float(1 - Fraction(confidence)) / 2
        ratio = student_t_quantile(q, self.test.df) / NormalDist().inv_cdf(q)
        return (math.sqrt(self.variance / spread) if spread > 0 else 1.0) * ratio

    def interval_at(self, confidence) -> Interval:
        """The widened two-level percentile interval at a confidence."""
        plain = self.distribution.interval(confidence)
        low, high, k = plain.lo, plain.hi, Fraction(self.scale(confidence))
        return Interval(self.gap + (low - self.gap) * k, self.gap + (high - self.gap) * k)

    @property
    def shares(self) -> tuple:
        """Shares of the gap's variance from items, A's runs and B's runs."""
        total = self.variance or 1.0
        return (self.variance_items / total, self.variance_runs_a / total,
                self.variance_runs_b / total)


def _run_variance(runs, n: int, scale: int) -> float:
    """The run component of the gap's variance for one system (0 with one run)."""
    r = len(runs)
    if r < 2:
        return 0.0
    scores = [Fraction(sum(column), n * scale) for _, column in runs]
    mean = sum(scores) / r
    between = sum((s - mean) ** 2 for s in scores) / (r - 1)
    within = Fraction(0)
    for values in zip(*(column for _, column in runs)):
        total = sum(values)
        within += Fraction(sum(v * v for v in values) * r - total * total, r * (r - 1))
    within /= n * scale * scale
    return max(0.0, float(between - within / n)) / r


def analyze_runs(rng: random.Random, runs_a, runs_b, scale: int, confidence,
                 resamples: int, progress=None) -> RunsAnalysis:
    """The two-level bootstrap of the gap of mean scores, its variance split and test.

    *runs_a*, *runs_b*: per system ``((label, column), ...)`` of integer scores in units of
    1/scale.  Each round resamples the n items once for every run (``resample_each``), then
    each system's runs (``randrange(R)`` R times, A's first).  The variance split is the
    one-way random-effects one: items ``Var(d_i)/n``, d_i the per-item gap of run means;
    per system ``max(0, S^2 - s_w^2 / n) / R``, S^2 the variance of the run scores and s_w^2
    the mean within-item variance across runs (so item noise is not counted twice).
    """
    n = len(runs_a[0][1])
    ra, rb = len(runs_a), len(runs_b)
    columns = [column for _, column in runs_a] + [column for _, column in runs_b]
    sums = resample_each(rng, columns, resamples, progress)
    values = []
    randrange = rng.randrange
    for r in range(resamples):
        total_a = sum(sums[randrange(ra)][r] for _ in range(ra))
        total_b = sum(sums[ra + randrange(rb)][r] for _ in range(rb))
        values.append(ra * total_b - rb * total_a)
    dist = Distribution.of(values, n * scale * ra * rb)
    stats_a, stats_b = (RunStats(tuple(label for label, _ in runs), tuple(
        Fraction(sum(column), n * scale) for _, column in runs)) for runs in (runs_a, runs_b))
    sums_a, sums_b = (map(sum, zip(*(column for _, column in runs))) for runs in (runs_a, runs_b))
    diffs = [ra * y - rb * x for x, y in zip(sums_a, sums_b)]     # in units of 1/(scale ra rb)
    d_sum, d_square = sum(diffs), sum(d * d for d in diffs)     # Var(d_i)/n, sample variance
    variance = Fraction(d_square * n - d_sum * d_sum, n * (n - 1)) / (scale * ra * rb) ** 2
    v_items = float(variance) / n
    v_a, v_b = _run_variance(runs_a, n, scale), _run_variance(runs_b, n, scale)
    gap = stats_b.mean - stats_a.mean
    terms = [(v_items, n - 1)] + [(v, r - 1) for v, r in ((v_a, ra), (v_b, rb)) if r > 1]
    total = v_items + v_a + v_b
    denominator = sum(v * v / df for v, df in terms if v > 0)
    df = total * total / denominator if denominator > 0 else float(n - 1)
    t = float(gap) / math.sqrt(total) if total > 0 else (0.0 if gap == 0 else math.inf)
    p = 1.0 if gap == 0 else 0.0 if math.isinf(t) else 2 * (1 - student_t_cdf(abs(t), df))
    return RunsAnalysis(stats_a, stats_b, gap, Fraction(confidence), dist, v_items, v_a, v_b,
                        RunsTest(t, df, min(1.0, p)))


# --- The analysis of two systems on the same items ---

@dataclass(frozen=True)
class Analysis:
    """Everything the report prints about two systems scored on the same items."""

    n: int
    accuracy_a: Fraction          # mean score (the accuracy for 0/1 scores)
    accuracy_b: Fraction
    ci_a: Interval
    ci_b: Interval
    paired: Interval
    unpaired: Interval
    resamples: int
    confidence: Fraction
    engine: str = "stream"
    test: object = None           # McNemar, PermutationTest or RunsTest: what produced p
    percent: bool = True          # scores in [0, 1]: gaps in points (x100)
    interval: str = "percentile"  # percentile, basic, bca or score
    errors: dict | None = None    # Monte Carlo error of each interval's ends
    design: Design | None = None
    binary: bool = True           # 0/1 scores
    notes: tuple = ()             # fallbacks taken, in plain words
    cells: Cells | None = None    # the 2x2 table (0/1 items, no clusters or strata)
    distributions: dict | None = None   # the four bootstrap distributions
    jackknives: dict | None = None      # BCa's leave-one-out values, per interval
    diff_variance: Fraction = Fraction(0)   # per-unit variance of B - A (for planning)
    calibration: Calibration | None = None
    rules: dict | None = None   # the rule behind each interval (after any fallback)
    runs: RunsAnalysis | None = None    # several runs per system: the two-level analysis
    method: str = "bootstrap"   # bootstrap (Monte Carlo), exact (B = infinity), saddlepoint
    unasked: bool = False       # resampled though no resamples were asked: nothing exact fits
    exact_distributions: dict | None = None   # exact ones beside a Monte Carlo run (--exact)
    metric: str | None = None   # a confusion-matrix metric (METRICS); None: the mean score

    def __post_init__(self):
        unit = "pts" if self.percent else "score"       # each interval in the scores' unit
        for name in ("ci_a", "ci_b", "paired", "unpaired"):
            interval = getattr(self, name)
            if isinstance(interval, Interval) and interval.unit != unit:
                object.__setattr__(self, name, dataclasses.replace(interval, unit=unit))

    def __repr__(self) -> str:
        return (f"Analysis(n={self.n:,}, gap={float(self.gap):.4g}, "
                f"paired=[{float(self.paired.lo):.4g}"
                f", {float(self.paired.hi):.4g}], p={self.p:.4g} ({self.test.name}), "
                f"method={self.method!r})")

    @property
    def gap(self) -> Fraction:
        return self.accuracy_b - self.accuracy_a

    @property
    def p(self) -> float:
        return self.test.p

    @property
    def mcnemar(self) -> McNemar | None:
        """McNemar's test, when it gave p (0/1 items without clusters)."""
        return self.test if isinstance(self.test, McNemar) else None

    @property
    def paired_distribution(self):
        """The bootstrap distribution of the paired gap the intervals read."""
        return self.distributions["paired"]

    @property
    def exact(self) -> dict | None:
        """The exact (B = infinity) percentile intervals beside a Monte Carlo run (exact)."""
        return None if self.exact_distributions is None else {
            name: dist.interval(self.confidence) for name, dist in
            self.exact_distributions.items()}

    def paired_at(self, confidence) -> Interval:
        """The paired interval the verdict reads, at a confidence (a family's simultaneous
        level), by the same rule: from the exact distribution when it was computed beside
        the resamples (--exact), else from the same resamples."""
        confidence = Fraction(confidence)
        if confidence == self.confidence and self.exact_distributions is None:
            return self.paired
        rule = (self.rules or {}).get("paired", self.interval)
        if rule == "score":
            return newcombe_paired(self.cells, confidence)
        dist = (self.exact_distributions or {}).get("paired", self.paired_distribution)
        jack = (self.jackknives or {}).get("paired")
        interval = _interval_by(dist, confidence, rule, self.gap, jack)[0]
        return _clamp(interval, -1, 1) if self.percent else interval

    def paired_errors_at(self, confidence, reach=False) -> tuple | None:
        """The Monte Carlo error of the ends of ``paired_at(confidence)`` (``end_errors``),
        or with *reach* where they lie in 99 runs of 100 (``Distribution.reach``); None where
        they have none (exact, saddlepoint, score or two-level intervals)."""
        rule = (self.rules or {}).get("paired", self.interval)
        if self.method != "bootstrap" or rule in _UNRESAMPLED or self.runs is not None or \
                self.exact_distributions is not None:
            return None
        jack, dist = (self.jackknives or {}).get("paired"), self.paired_distribution
        rule = _interval_by(dist, confidence, rule, self.gap, jack)[1]
        if reach:
            return dist.reach(Fraction(confidence), rule, self.gap, jack)
        return dist.end_errors(Fraction(confidence), rule, self.gap, jack)


def _choose_method(scores: Scores, settings: Settings) -> str:
    """The method: exact (0/1 items, or scores on a small lattice), else saddlepoint where
    safe, else the outlier mixture, else (or when asked) the bootstrap."""
    units = scores.units
    if settings.resamples is not None or scores.runs_a is not None:
        return "bootstrap"
    if scores.binary and not units.clustered and (
            units.simple or _exact_work(_strata_cells(scores)) <= _EXACT_WORK) or \
            _lattice_fits(units):      # on a small lattice: B = infinity
        return "exact"
    if _saddlepoint_fits(units):
        return "saddlepoint"
    return "mixture" if _mixture_fits(units) else "bootstrap"


def _why_resampled(units: Units) -> str:
    """Why neither the saddlepoint nor the outlier mixture fits (``_choose_method`` gave
    "bootstrap" unasked), in the report's words."""
    counted = f"{units.count:,} {'clusters' if units.clustered else 'items'}"
    if units.count < _SADDLEPOINT_SMOOTH_UNITS:
        return (f"{counted}: the saddlepoint approximation needs {_SADDLEPOINT_SMOOTH_UNITS} "
                "or more")
    if units.count < _SADDLEPOINT_UNITS:
        return (f"{counted}, with a value held by more than a fifth of them or a few far from "
                f"the rest: without resampling that needs {_SADDLEPOINT_UNITS:,}")
    if not units.equal_sizes:
        return ("a few values move a resampled mean on their own and the clusters' sizes "
                "differ: the outlier mixture counts them in clusters of one size")
    return (f"more than {_MIXTURE_OUTLIERS} values, or a group of nearby ones, move a "
            f"resampled mean on their own: the outlier mixture counts at most "
            f"{_MIXTURE_OUTLIERS} exactly")


def _choose_engine(requested: str, draws, *, stream=False, counts=lambda: True) -> str:
    """The engine "auto" picks: stream (bit-exact with the article's listing) when *stream*
    says the design or size needs it or the work is at most _STREAM_BUDGET item *draws*;
    else counts (a cost independent of n) where *counts()* says it can."""
    if requested != "auto":
        return requested
    return "stream" if stream or draws <= _STREAM_BUDGET or not counts() else "counts"


def _comparison_engine(requested: str, scores: Scores, resamples: int) -> str:
    """A comparison's engine: five distributions of *resamples* over the items."""
    return _choose_engine(requested, 5 * resamples * scores.n, stream=not scores.units.simple,
                          counts=lambda: scores.binary or
                          _distinct_values(scores) <= _MAX_COUNTS_VALUES)


def _coverage_engine(requested: str, copula: Copula, n_items: int, replays: int,
                     resamples: int) -> str:
    """A coverage loop's engine: the stream engine at the article's size or below."""
    return _choose_engine(requested, replays * resamples * n_items,
                          stream=copula.clustered or n_items <= N_ITEMS)


def _check_applicable(scores: Scores, settings: Settings) -> None:
    """Refuse a rule that needs what the data lack (0/1 scores, plain items)."""
    needs_binary = settings.interval == "score" or settings.accuracy_interval != "same"
    if needs_binary and not scores.binary:
        what = _opt("interval", "score") if settings.interval == "score" else \
            _opt("accuracy_interval")
        raise ToolError(f"{what} needs 0/1 scores; these are real-valued")
    units = scores.units
    if settings.exact and not (scores.binary and not units.clustered) and not _lattice_fits(units):
        raise ToolError(
            f"{_opt('exact', True)} needs 0/1 scores (items resampled one by one) or scores on "
            f"a small lattice (at most {_LATTICE_SPAN} steps from least to most, clusters of "
            f"one size); these are " + ("in clusters of different sizes" if not
                                        units.equal_sizes else "not"))
    if settings.engine == "counts" and not scores.binary and \
            _distinct_values(scores) > _MAX_COUNTS_VALUES:
        raise ToolError(f"the counts engine resamples counts over distinct values; these scores "
                        f"have {_distinct_values(scores):,} (at most {_MAX_COUNTS_VALUES:,}): "
                        f"use {_opt('engine', 'stream')}")
    if not scores.units.simple and (settings.interval == "score" or settings.engine == "counts"):
        what = _opt("interval", "score") if settings.interval == "score" else "the counts engine"
        raise ToolError(f"{what} covers plain items; it does not apply with clusters or strata")


_UNRESAMPLED = ("score", "wilson", "clopper-pearson")


def _estimates(scores: Scores) -> dict:
    """What each interval estimates: A's and B's means, the gap (paired and unpaired)."""
    gap = scores.mean_b - scores.mean_a
    return {"a": scores.mean_a, "b": scores.mean_b, "paired": gap, "unpaired": gap}


def _intervals(scores: Scores, dists: dict, settings: Settings) -> tuple:
    """``(intervals, errors, rules, notes, jackknives)`` keyed ``a``, ``b``, ``paired``,
    ``unpaired``: undefined BCa falls back to percentile, a zero-width per-system interval on
    0/1 scores to Clopper-Pearson, each said in a note; proportions stay within [0, 1]."""
    confidence, rule, estimates = settings.confidence, settings.interval, _estimates(scores)
    groups = scores.units.groups() if rule == "bca" else None

    def one_interval(name, rule, dist, jack) -> tuple:
        """``(interval, rule used, note)``: one interval by *rule*, or its fallback and why.
        At 30 of 30 Clopper-Pearson gives [0.884, 1]: the two-sided rule of three."""
        if rule in _UNRESAMPLED:
            cells = scores.cells()
            if name == "paired":
                return newcombe_paired(cells, confidence), rule, ""
            if name == "unpaired":
                return newcombe_unpaired(cells.a, cells.b, cells.n, confidence), rule, ""
            ends = clopper_pearson if rule == "clopper-pearson" else wilson_interval
            hits = cells.a if name == "a" else cells.b
            return Interval(*map(Fraction, ends(hits, cells.n, confidence))), rule, ""
        interval, rule, why = _interval_by(dist, confidence, rule, estimates[name], jack)
        why = f"BCa is undefined ({why}); the percentile interval is shown" if why else ""
        hits = sum(scores.ints[0 if name == "a" else 1]) if name in ("a", "b") else None
        if scores.binary and hits in (0, scores.n):
            what = "every item right" if hits == scores.n else "every item wrong"
            return (Interval(*map(Fraction, clopper_pearson(hits, scores.n, confidence))),
                    "clopper-pearson", f"the bootstrap cannot vary {hits}/{scores.n} "
                    f"({what}); the exact Clopper-Pearson interval is shown")
        return interval, rule, why
    intervals, errors, rules, notes, jacks = {}, {}, {}, [], {}
    for name, dist in dists.items():
        chosen = rule if name in ("paired", "unpaired") or settings.accuracy_interval == \
            "same" else settings.accuracy_interval
        jack = _jackknife(groups, name, scores.scale) if chosen == "bca" else None
        interval, used, note = one_interval(name, chosen, dist, jack)
        if note:
            label = {"a": "A's interval", "b": "B's interval"}.get(name, f"the {name} interval")
            notes.append(f"{label}: {note}")
        low, high = (0, 1) if name in ("a", "b") else (-1, 1)
        intervals[name] = _clamp(interval, low, high) if scores.proportions else interval
        rules[name], jacks[name] = used, jack if used == "bca" else None
        errors[name] = (Fraction(0), Fraction(0)) if used in _UNRESAMPLED else \
            dist.end_errors(confidence, used, estimates[name], jack)
    return intervals, errors, rules, tuple(notes), jacks


def _diff_variance(scores: Scores) -> Fraction:
    """The variance of B - A over items (population form), exactly."""
    if scores.binary:
        cells = scores.cells()
        return Fraction(cells.a_only + cells.b_only, cells.n) - Fraction(cells.b - cells.a,
                                                                          cells.n) ** 2
    a, b = scores.ints
    n, scale = scores.n, scores.scale
    total = sum(b) - sum(a)
    diff = list(map(operator.sub, b, a))
    squares = sum(map(operator.mul, diff, diff))
    return Fraction(squares * n - total * total, n * n * scale * scale)


def _paired_test(rng: random.Random, scores: Scores, settings: Settings, progress) -> tuple:
    """``(runs, test)``: two-level t with runs, exact McNemar for plain 0/1 items, else signs
    flipped per item or cluster."""
    if scores.runs_a is not None:
        if not scores.units.simple:
            raise ToolError(f"several runs per system with {_opt('cluster_col')} or "
                            f"{_opt('strata_col')} are not "
                            "supported; compare the run means, or one run at a time")
        values = {value for runs in (scores.runs_a, scores.runs_b) for _, column in runs
                  for value in set(column)}
        scale = math.lcm(*(Fraction(v).denominator for v in values))
        as_ints = lambda runs: tuple((label, tuple(int(Fraction(v) * scale) for v in column))
                                     for label, column in runs)
        runs = analyze_runs(rng, as_ints(scores.runs_a), as_ints(scores.runs_b), scale,
                            settings.confidence, settings.resamples or RESAMPLES, progress)
        return runs, runs.test
    if scores.binary and not scores.units.clustered:
        return None, mcnemar_exact(scores.cells().a_only, scores.cells().b_only)
    return None, sign_flip_test(rng, scores.units.diff, settings.permutations,
                                progress=progress, counts=settings.engine == "counts")


def _fewest_resamples(confidence) -> int:
    """The fewest resamples that leave 10 in each tail of an interval (400 at 95%)."""
    return math.ceil(20 / (1 - Fraction(confidence)))


def analyze(scores: Scores, rng: random.Random, settings: Settings | None = None, *,
            progress=None, family: int = 1, **options) -> Analysis:
    """Means, per-system, paired and unpaired intervals, and the paired test.

    *settings* (or its fields as keywords) say how.  The generator is consumed in the
    article's order: A's interval, B's, the paired one, then the unpaired one; then, for the
    permutation test (real-valued scores, or clusters) with more than 20 nonzero differences,
    the Monte Carlo sign flips; then the calibration replays.  McNemar (0/1 items) draws
    nothing.  Where nothing exact fits and no resamples were asked for, the resampling is run
    again with as many as hold the printed ends (at 95% and at the simultaneous level of a
    *family* of that many comparisons), within about a second of work.  *progress*, if given,
    is called as ``progress(done, total)``.
    """
    settings = _settings_of(settings, options)
    method = _choose_method(scores, settings)
    resamples = settings.resamples or RESAMPLES
    engine = _comparison_engine(settings.engine, scores, resamples) if method == "bootstrap" \
        else None
    settings = dataclasses.replace(settings, engine=engine or (
        "stream" if settings.engine == "auto" else settings.engine))
    _check_applicable(scores, settings)
    confidence = settings.confidence
    plain_binary = scores.binary and scores.units.simple
    cells = scores.cells() if plain_binary else None
    resampling, permuting, calibrating = _steps(progress, [
        5 * resamples if method == "bootstrap" else 0, settings.permutations or 0,
        2 * settings.calibration])
    dists = (_exact_of(scores) if method == "exact" else
             saddlepoint_distributions(scores) if method == "saddlepoint" else
             _mixture_distributions(scores.units, scores.scale) if method == "mixture" else
             bootstrap(rng, scores, resamples, engine=engine, progress=resampling))
    made = _intervals(scores, dists, settings)
    unasked = method == "bootstrap" and settings.resamples is None and scores.runs_a is None
    levels = {confidence, 1 - (1 - confidence) / family}
    holding, dropped = _holding_resamples(dists, made, scores.mean_b - scores.mean_a, levels,
                                          resamples, scores.n) if unasked else (0, {})
    if holding > resamples:               # nothing exact fits: enough resamples for the digits
        resamples = holding
        dists = bootstrap(rng, scores, resamples, engine=engine)
        made = _intervals(scores, dists, settings)
    intervals, errors, rules, notes, jackknives = made
    if unasked:
        notes = (f"resampled, as no method without Monte Carlo error fits: "
                 f"{_why_resampled(scores.units)}",) + tuple(notes)
    for name, interval in intervals.items():    # Monte Carlo ends: where each lies in 99
        if method == "bootstrap" and scores.runs_a is None and any(errors[name]) and \
                max(abs(interval.lo), abs(interval.hi)) < _LARGE:        # runs of 100 ...
            # ... and, unasked, printed to the digits they hold: dropped[name] fewer where the
            # resamples were set to hold that digit, else as many as their errors hold
            places = None if not unasked else max(0, (1 if scores.proportions else 3) - dropped[
                name]) if name in dropped else _held_places(errors[name], scores.proportions) or 0
            intervals[name] = dataclasses.replace(interval, places=places, reach=dists[
                name].reach(confidence, rules[name], _estimates(scores)[name],
                            jackknives.get(name)))
    if method == "bootstrap" and resamples < _fewest_resamples(confidence):
        tail = float(resamples * (1 - confidence) / 2)
        notes += (f"B={resamples:,} resamples leave {tail:.3g} in each tail of a "
                  f"{_format_level(confidence)} interval: its ends are mostly Monte Carlo noise "
                  f"({_fewest_resamples(confidence):,} or more place them)",)
    runs, test = _paired_test(rng, scores, settings, permuting)
    calibration = None
    if settings.calibration and plain_binary and runs is None:
        replays = settings.calibration if scores.n <= _CALIBRATION_LARGE_N else \
            min(settings.calibration, _CALIBRATION_LARGE_REPLAYS)
        calibration = calibrate_cells(rng, cells, confidence, rules["paired"],
                                min(resamples, RESAMPLES), replays, progress=calibrating)
    exact = _exact_of(scores) if settings.exact and method != "exact" else None
    return Analysis(
        n=scores.n, accuracy_a=scores.mean_a, accuracy_b=scores.mean_b,
        ci_a=intervals["a"], ci_b=intervals["b"], paired=intervals["paired"],
        unpaired=intervals["unpaired"], resamples=resamples, confidence=confidence,
        engine=engine, test=test, percent=scores.proportions, interval=settings.interval,
        errors=errors, design=_design_of(scores), binary=scores.binary, notes=notes,
        cells=cells, distributions=dists, jackknives=jackknives,
        diff_variance=_diff_variance(scores), calibration=calibration, rules=rules, runs=runs,
        method=method, unasked=unasked, exact_distributions=exact)


_METRIC_NAMES = {"accuracy": "accuracy", "macro-f1": "macro-F1", "micro-f1": "micro-F1",
                 "f1": "F1", "precision": "precision", "recall": "recall",
                 "balanced-accuracy": "balanced accuracy", "mcc": "MCC", "kappa": "Cohen's kappa",
                 "logit": "rating (log-odds)", "elo": "rating (Elo)"}


def analyze_metric(confusions: Confusions, rng: random.Random, settings: Settings | None = None,
                   *, metric: str, positive=None, within_classes: bool = False,
                   family: int = 1, **options) -> Analysis:
    """A's and B's *metric* (``METRICS``), each recomputed on every paired resample of the
    items -- a multinomial draw over the (label, A, B) cells -- with per-system, paired and
    unpaired intervals (percentile, basic or BCa, BCa's jackknife leaving out one item of
    each cell), and the paired permutation test (``metric_permutation_test``).  *positive*
    names the class of ``f1``, ``precision`` and ``recall``; *within_classes* resamples
    within each label, keeping its count (strata); unasked, the resamples place the ends at
    a *family*'s simultaneous level too.  The generator is consumed in this order: the
    paired resamples, then the permutations.
    """
    settings = _settings_of(settings, options)
    if metric not in METRICS:
        raise ToolError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    index = None
    if metric in _CLASS_METRICS:
        if positive is None:
            raise ToolError(f"{metric} is of one class: name it with {_opt('positive')} (classes: "
                            f"{', '.join(map(str, confusions.classes))})")
        if positive not in confusions.classes:      # none of these items has it: F1 etc. 0
            confusions = Confusions(confusions.classes + (positive,), confusions.cells)
        index = confusions.classes.index(positive)
    return _metric_analyses(confusions, rng, settings, [(metric, index)], within_classes,
                            family)[0]


def _metric_analyses(confusions: Confusions, rng: random.Random, settings: Settings, specs,
                     within_classes: bool, family: int = 1) -> list:
    """``analyze_metric`` of each ``(metric, class index)`` of *specs*, all on the same
    resamples and the same swaps (so a per-class table costs its classes, not new draws);
    unasked, as many resamples as place the ends of the largest *family*'s intervals."""
    if settings.interval not in ("percentile", "basic", "bca") or settings.exact or \
            settings.accuracy_interval != "same":
        raise ToolError("a metric of the confusion matrix takes percentile, basic or bca "
                        "intervals, resampled")
    keys, counts = zip(*confusions.cells)
    measure = lambda columns: _metric_columns(list(zip(keys, columns)),
                                              len(confusions.classes), specs)
    values = measure([[count] for count in counts])
    resamples = settings.resamples or _placing_resamples(
        settings.confidence, family, len(counts) + len(specs) * len(confusions.classes))
    if resamples < 2:
        raise ToolError(f"a metric's intervals need {_opt('resamples')} of 2 or more")
    groups = [key[0] for key in keys] if within_classes else None
    paired, chunk = [([], []) for _ in specs], max(1, _CELL_DRAWS // len(counts))
    for start in range(0, resamples, chunk):          # memory: the cells x chunk draws
        for (a, b), (more_a, more_b) in zip(paired, measure(_cell_draws(
                rng, counts, min(chunk, resamples - start), groups))):
            a += more_a
            b += more_b
    left = _leave_one_out(confusions, specs) if settings.interval == "bca" else [None] * len(specs)
    tests = _permutation_tests(rng, confusions, specs, settings.permutations or PERMUTATIONS)
    return [_metric_analysis(confusions, settings, spec, *parts, counts, within_classes)
            for spec, *parts in zip(specs, values, paired, left, tests)]


def _leave_one_out(confusions: Confusions, specs) -> list:
    """Per ``(metric, class index)`` of *specs*, A's and B's metric with one item of each
    cell left out in turn (BCa's jackknife): the per-class totals less that item, so the
    memory is the cells times the classes, not the cells squared."""
    full = _class_totals(confusions)
    rows = {tag: [] for tag in full}
    for key, _ in confusions.cells:
        for tag, j, hit in _cell_roles(*key):
            row = list(full[tag])
            row[j] -= hit
            rows[tag].append(tuple(row))
    return _metrics_of(rows, specs)


def _metric_analysis(confusions: Confusions, settings: Settings, spec, values, draws,
                     left, test, counts, within_classes) -> Analysis:
    """One metric's Analysis from its values, its paired draws, leave-one-out values (BCa)
    and test.  The unpaired interval sets A's metric in each resample against B's in the
    next: two independent resamples of the items, as the unpaired bootstrap draws them."""
    metric, resamples = spec[0], len(draws[0])
    (a_value,), (b_value,) = values
    a_draws, b_draws = draws
    dists = {"a": Distribution.of(a_draws), "b": Distribution.of(b_draws),
             "paired": Distribution.of(map(operator.sub, b_draws, a_draws)),
             "unpaired": Distribution.of(map(operator.sub, b_draws[1:] + b_draws[:1], a_draws))}
    estimates = {"a": a_value, "b": b_value, "paired": b_value - a_value,
                 "unpaired": b_value - a_value}
    jacks = {}
    if left is not None:                 # leave one item of each cell out
        left_a, left_b = left
        for name, values in (("a", left_a), ("b", left_b), ("paired", map(
                operator.sub, left_b, left_a))):
            jacks[name] = collections.Counter()
            for value, count in zip(values, counts):
                jacks[name][value] += count
        jacks["unpaired"] = jacks["paired"]
    low = -1 if metric in _SIGNED_METRICS else 0
    intervals, errors, rules, notes = {}, {}, {}, []
    for name, dist in dists.items():
        interval, rules[name], why = _interval_by(dist, settings.confidence, settings.interval,
                                                  estimates[name], jacks.get(name))
        if why:
            notes.append(f"{name}: BCa is undefined ({why}); the percentile interval is shown")
        intervals[name] = _clamp(interval, low, 1) if name in ("a", "b") else \
            _clamp(interval, low - 1, 1 - low)
        errors[name] = dist.end_errors(settings.confidence, rules[name], estimates[name],
                                       jacks.get(name))
        intervals[name] = dataclasses.replace(intervals[name], reach=dist.reach(
            settings.confidence, rules[name], estimates[name], jacks.get(name)))
    notes.insert(0, f"{_METRIC_NAMES[metric]} recomputed on each resample of the items (a "
                    f"multinomial draw over {len(counts):,} (label, A, B) cells"
                    f"{', within each label' if within_classes else ''}); p by swapping the "
                    "two systems' predictions item by item")
    return Analysis(
        n=confusions.n, accuracy_a=a_value, accuracy_b=b_value, ci_a=intervals["a"],
        ci_b=intervals["b"], paired=intervals["paired"], unpaired=intervals["unpaired"],
        resamples=resamples, confidence=settings.confidence, engine="counts", test=test,
        percent=metric not in _SIGNED_METRICS, interval=settings.interval, errors=errors,
        binary=False, notes=tuple(notes), distributions=dists,
        jackknives={name: jack for name, jack in jacks.items() if rules[name] == "bca"},
        rules=rules, metric=metric, diff_variance=Fraction(confusions.n * math.fsum(
            (float(x) - float(estimates["paired"])) ** 2 for x in dists["paired"].sums) /
            resamples))      # per item, as a mean's: what the act plan reads


# --- The release gate: the verdict against a margin ---

@dataclass(frozen=True)
class Gate:
    """A release gate: pass if the verdict's interval's lower end is above *margin*
    (superiority, margin >= 0, also needing "better"; non-inferiority, margin < 0), never on
    "unreliable".  At a true gap equal to the margin it passes at most (1 - confidence)/2."""

    margin: Fraction
    passed: bool
    lower: Fraction
    word: str

    @property
    def kind(self) -> str:
        return "superiority" if self.margin >= 0 else "non-inferiority"

    def to_json(self) -> dict:
        return {"margin": float(self.margin), "passed": self.passed, "kind": self.kind,
                "lower": float(self.lower), "verdict": self.word,
                "rule": "pass if the interval's lower end > margin" + (
                    " and the verdict is 'better'" if self.margin >= 0 else
                    " and the verdict is not 'unreliable'")}


def _gate_passes(lower: Fraction, word: str, margin: Fraction) -> bool:
    """The gate's rule, one function for reports and simulations alike."""
    return word != "unreliable" and lower > margin and (margin < 0 or word == "better")


# --- One verdict, made once ---

_VERDICTS = ("better", "worse", "cannot tell", "borderline", "unreliable")
_MIN_CLUSTERS = 30              # fewer clusters: a cluster bootstrap's interval is not trusted


@dataclass(frozen=True)
class Decision:
    """The verdict on one candidate against the baseline, and what it read.

    ``better``/``worse``: the paired interval excludes 0 and the paired test agrees at the
    same level.  ``cannot tell``: neither does.  ``borderline``: they disagree.
    ``unreliable``: a winner, but from fewer than 30 clusters.  In a family of m the
    interval is at 1 - alpha/m (Bonferroni) and p Holm-adjusted, so the two read alike.
    """

    word: str
    interval: Interval
    level: Fraction
    p: float
    alpha: Fraction
    family: int = 1
    gate: Gate | None = None
    adjust: str = "holm"          # how p was adjusted in the family (ADJUSTMENTS)
    errors: tuple | None = None   # Monte Carlo error of the interval's ends (None: exact)
    p_settled: bool = True        # False: a Monte Carlo p within its error of alpha

    @property
    def claims(self) -> bool:
        return self.word in ("better", "worse")

    @property
    def joint(self) -> str:
        """What the family's intervals hold: together (Holm, Bonferroni), or their false
        coverage rate (Benjamini-Hochberg's discoveries, Benjamini & Yekutieli 2005)."""
        return "FCR-adjusted" if self.adjust == "bh" else "simultaneous"

    def to_json(self) -> dict:
        return {"verdict": self.word, "interval": self.interval.to_json(),
                "end_within_mc_error_of_zero": not all(_signs_held(self.interval)),
                "p_within_mc_error_of_alpha": not self.p_settled,
                "level": float(self.level), "p": float(self.p), "alpha": float(self.alpha),
                "family": self.family, "adjust": self.adjust,
                "mc_error": None if self.errors is None else [float(e) for e in self.errors],
                "mc_reach": None if self.interval.reach is None else [   # 99 runs of 100
                    [float(v) if math.isfinite(v) else None for v in span]   # None: past
                    for span in self.interval.reach],                        # the resamples
                "gate": None if self.gate is None else self.gate.to_json()}


def _verdict_word(interval: Interval, p, alpha, clusters=None, settled=True) -> str:
    """The verdict rule itself (reports and simulations use this one function); a Monte
    Carlo p not *settled* (within its error of alpha) is not read as below it."""
    excludes, significant = interval.excludes_zero(), Fraction(p) < alpha and settled
    if excludes and significant:
        if clusters is not None and clusters < _MIN_CLUSTERS:
            return "unreliable"
        return "better" if interval.lo > 0 else "worse"
    return "borderline" if excludes or significant else "cannot tell"


def _p_settled(p, alpha, error) -> bool:
    """Whether a p lies clear of *alpha* from seed to seed: exact (*error* None), or a Monte
    Carlo p more than _REACH_Z of its s.e. away."""
    return error is None or abs(float(p) - float(alpha)) > _REACH_Z * error


def decide(analysis: Analysis, family: int = 1, p=None, margin=None, adjust: str = "holm",
           discoveries: int = 1, p_error=None) -> Decision:
    """The one verdict: the paired interval (at 1 - alpha/m; with Benjamini-Hochberg the FCR
    interval, 1 - R alpha/m for R discoveries) and the paired test's adjusted p (its Monte
    Carlo s.e. *p_error*), read together; with a *margin*, the release gate on the same
    interval and verdict."""
    alpha = 1 - analysis.confidence
    level = 1 - alpha * (max(1, discoveries) if adjust == "bh" else 1) / family
    interval = analysis.runs.interval_at(level) if analysis.runs is not None else \
        analysis.paired_at(level)
    interval = dataclasses.replace(interval, unit="pts" if analysis.percent else "score")
    errors = analysis.paired_errors_at(level)
    if errors is not None:         # Monte Carlo ends: read where they lie in 99 runs of 100
        interval = dataclasses.replace(interval, places=analysis.paired.places,  # held here too
                                       reach=analysis.paired_errors_at(level, reach=True))
    p = analysis.p if p is None else p
    clusters = analysis.design.clusters if analysis.design is not None else None
    if p_error is None and isinstance(analysis.test, PermutationTest):
        p_error = analysis.test.mc_error
    settled = _p_settled(p, alpha, p_error)
    word = _verdict_word(interval, p, alpha, clusters, settled)
    gate = None if margin is None else Gate(Fraction(margin), _gate_passes(   # a lower end
        interval.lo, word, Fraction(margin)) and _signs_held(interval, Fraction(margin))[0],
                                            interval.lo, word)   # clear of its Monte Carlo error
    return Decision(word, interval, level, p, alpha, family, gate, adjust, errors, settled)


@dataclass(frozen=True)
class Comparison:
    """One candidate against the baseline: its analysis, family-adjusted p and verdict."""

    baseline: str
    candidate: str
    analysis: Analysis
    p_holm: float
    p_bonferroni: float
    decision: Decision | None = None
    p_bh: float | None = None


def _family(baseline: str, candidates, analyses, settings: Settings) -> list:
    """A Comparison per analysis of the family: p adjusted across it, a verdict each."""
    ps = [a.p for a in analyses]
    adjusted = {how: _ADJUST[how](ps) for how in ADJUSTMENTS}
    chosen = adjusted[settings.adjust]
    errors = _adjusted_errors(ps, [a.test.mc_error if isinstance(a.test, PermutationTest) else
                                   None for a in analyses], settings.adjust)
    alpha = 1 - settings.confidence             # BH's R: the discoveries no seed decides
    discoveries = sum(Fraction(p) < alpha and _p_settled(p, alpha, e)
                      for p, e in zip(chosen, errors))
    return [Comparison(baseline, name, a, h, b, decide(a, len(ps), p, settings.margin,
                                                       settings.adjust, discoveries, e), bh)
            for name, a, h, b, bh, p, e in zip(candidates, analyses, adjusted["holm"],
                                               adjusted["bonferroni"], adjusted["bh"], chosen,
                                               errors)]


def _adjusted_errors(ps, errors, adjust: str) -> list:
    """The Monte Carlo s.e. of each adjusted p from the raw ones' *errors* (None: exact),
    through the adjustment's slopes (piecewise linear in each p: Holm's running maximum
    carries the error of the p that sets it); None where no p is Monte Carlo."""
    if not any(errors):
        return [None] * len(ps)
    base, total = _ADJUST[adjust](ps), [0.0] * len(ps)
    for j, error in enumerate(errors):
        if error:
            step = max(ps[j], 1e-12) * 1e-6
            moved = _ADJUST[adjust]([p + step * (k == j) for k, p in enumerate(ps)])
            total = [t + ((m - b) / step * error) ** 2 for t, m, b in zip(total, moved, base)]
    return [math.sqrt(t) for t in total]


def compare_systems(table: Table, rng: random.Random, settings: Settings | None = None, *,
                    progress=None, metric: str = "accuracy", positive=None,
                    within_classes: bool = False, **options) -> list:
    """Each candidate against the baseline, in input order, on one generator; then p adjusted
    across the family, and one verdict per candidate.  A table of predictions (``gold``)
    compares *metric* (``analyze_metric``)."""
    settings = _settings_of(settings, options)
    per = 5 * (settings.resamples or RESAMPLES) + (settings.permutations or 0) + \
        2 * settings.calibration
    steps = _steps(progress, [per] * (len(table.systems) - 1))
    if table.gold is not None:
        analyses = [analyze_metric(Confusions.of(table.gold, table.columns[0], column), rng,
                                   settings, metric=metric, positive=positive,
                                   within_classes=within_classes,
                                   family=len(table.systems) - 1)
                    for column in table.columns[1:]]
    else:
        analyses = [analyze(table.pair(index), rng, settings, progress=next(steps),
                            family=len(table.systems) - 1)
                    for index in range(1, len(table.systems))]
    return _family(table.systems[0], table.systems[1:], analyses, settings)


# --- Whole harness runs: many tasks per model ---

@dataclass(frozen=True)
class TaskComparison:
    """One task of a harness run: each candidate's comparison, a family across the tasks."""

    task: str
    n: int
    comparisons: tuple
    runs: str = ""               # the runs each system has here, and how they were compared
    rates: tuple = ()            # a class: per candidate, base's and its precision and recall


@dataclass(frozen=True)
class TasksResult:
    """Per task, and pooled over every item with the task as a stratum (or a cluster)."""

    tasks: tuple                 # TaskComparison per task, in task order
    pooled: tuple                # Comparison per candidate, over all items
    pool: str                    # "strata", "clusters" or "macro" ("items": pooled plainly)


def _too_small(units: int, family: int, alpha) -> int | None:
    """The units a slice (or task) would need when its paired test could not reach *alpha*
    across a *family* of slices even were every unit to favour one system -- the exact test's
    smallest p is 2**(1 - n), Holm's first threshold alpha/family -- or None when it can.

    >>> _too_small(6, 8, Fraction(1, 20)), _too_small(80, 8, Fraction(1, 20))
    (9, None)
    """
    needed = _first_true(lambda n: Fraction(2) ** (1 - n) * family < alpha, units, units)
    return needed if needed > units else None


def _regressions(result: TasksResult) -> list:
    """``(task, candidate)`` of each slice whose interval lies below min(margin, 0), clear of
    its Monte Carlo error: a slice need not clear the overall gain, only not be shown worse."""
    return [(task.task, c.candidate) for task in result.tasks for c in task.comparisons
            if c.decision.gate is not None and c.decision.interval.hi < (floor := min(
                c.decision.gate.margin, 0)) and _signs_held(c.decision.interval, floor)[1]]


def compare_tasks(table: Table, rng: random.Random, settings: Settings | None = None, *,
                  pool: str = "strata", progress=None, metric: str = "accuracy",
                  positive=None, **options) -> TasksResult:
    """Each task on its own (a family across the tasks), then every item pooled with its
    task as a stratum (each task keeps its size) or, with ``pool="clusters"``, a cluster;
    ``pool="macro"``: as strata, each task weighted equally (the mean of the tasks' means,
    as an lm-eval group with weight_by_size false reports it).
    A table of predictions (``gold``) compares *metric* in each and over all the items
    (resampled as one: a metric's cells are not held per task)."""
    settings = _settings_of(settings, options)
    if pool not in ("strata", "clusters", "macro"):
        raise ToolError(f"pool must be strata, clusters or macro; got {pool!r}")

    def subtable(keep, task) -> tuple:
        """``(table, runs note)``: one task's items with their runs, compared two-level only
        when every system has two or more, else by each item's mean."""
        pick = operator.itemgetter(*keep) if len(keep) > 1 else (lambda seq: (seq[keep[0]],))
        runs = None if table.runs is None else tuple(tuple(
            (label, tuple(pick(column))) for label, column in system) for system in table.runs)
        if table.task_runs is not None:
            runs = dict(table.task_runs).get(task)
        note = ""
        if runs is not None:
            two_level = table.task_runs is None or all(len(system) > 1 for system in runs)
            note = " and ".join(str(len(system)) for system in runs) + " runs, " + (
                "two-level" if two_level else "single-run (each item's mean)")
            runs = runs if two_level else None
        return dataclasses.replace(
            table, columns=tuple(tuple(pick(c)) for c in table.columns),
            ids=tuple(pick(table.ids)), runs=runs, tasks=None, clusters=None, strata=None,
            task_runs=None, gold=None if table.gold is None else tuple(pick(table.gold))), note
    members = {}                          # each task's items, in one pass over the items
    for i, task in enumerate(table.tasks):
        members.setdefault(task, []).append(i)
    order = list(members)
    per_task, run_notes = [], []
    for index, task in enumerate(order):
        sub, note = subtable(members[task], task)
        run_notes.append(note)
        per_task.append([c.analysis for c in compare_systems(
            sub, rng, dataclasses.replace(settings, calibration=0), metric=metric,
            positive=positive)])
        if progress is not None:
            progress(index + 1, len(order) + 1)
    columns = [_family(table.systems[0], [candidate] * len(order), analyses, settings)
               for candidate, analyses in zip(table.systems[1:], zip(*per_task))]
    tasks = [TaskComparison(task, len(members[task]),
                            tuple(column[t] for column in columns), note)
             for t, (task, note) in enumerate(zip(order, run_notes))]
    labels = tuple(table.tasks)
    if table.runs is not None or table.gold is not None:     # pooled plainly
        pool = "items"
    pooled_table = dataclasses.replace(table, strata=labels if pool in ("strata", "macro")
                                       else None, clusters=labels if pool == "clusters" else None)
    if pool == "macro":            # item i of task t weighs n / (tasks x n_t): the tasks' means
        weight = {task: Fraction(table.n, len(order) * len(items))
                  for task, items in members.items()}
        pooled_table = dataclasses.replace(pooled_table, columns=tuple(
            tuple(v * weight[t] for v, t in zip(column, labels)) for column in table.columns))
    pooled = compare_systems(pooled_table, rng, dataclasses.replace(
        settings, engine="stream" if pool != "items" and settings.engine == "counts" else
        settings.engine), metric=metric, positive=positive)
    if pool == "macro" and table.proportions:       # the tasks' means: still proportions
        pooled = [dataclasses.replace(c, analysis=dataclasses.replace(c.analysis, percent=True))
                  for c in pooled]
    return TasksResult(tuple(tasks), tuple(pooled), pool)


def compare_classes(table: Table, rng: random.Random, settings: Settings | None = None, *,
                    metric: str = "macro-f1", within_classes: bool = False,
                    **options) -> TasksResult:
    """A table of predictions (``gold``): *metric* over all the items, then class by class
    the metric it averages -- each class's F1 for macro-F1, its recall for accuracy and
    balanced accuracy -- all on the same resamples and swaps, p adjusted and intervals
    simultaneous across the classes, so that a rare class's regression is seen.
    *within_classes* holds each label's count."""
    settings = _settings_of(settings, options)
    if metric not in ("accuracy", "micro-f1", "macro-f1", "balanced-accuracy"):
        raise ToolError(f"compare_classes takes a metric that averages the classes (accuracy, "
                        f"micro-f1, macro-f1, balanced-accuracy); got {metric!r}")
    each = "f1" if metric == "macro-f1" else "recall"
    sizes = collections.Counter(table.gold)         # each label's items, in one pass
    classes = _classes(set(sizes).union(*table.columns))
    labelled = [index for index, name in enumerate(classes) if name in sizes]
    specs = [(metric, None)] + [(each, index) for index in labelled]
    pooled, per_class, rates = [], [[] for _ in labelled], [[] for _ in labelled]
    for candidate, column in zip(table.systems[1:], table.columns[1:]):
        confusions = Confusions.of(table.gold, table.columns[0], column, classes)
        analyses = _metric_analyses(confusions, rng, settings, specs, within_classes,
                                    max(len(labelled), len(table.systems) - 1))
        pooled.append(analyses[0])
        values = _metric_columns([(key, [count]) for key, count in confusions.cells],
                                 len(classes), [(name, index) for index in labelled
                                                for name in ("precision", "recall")])
        for row, ((pa,), (pb,)), ((ra,), (rb,)) in zip(rates, values[::2], values[1::2]):
            row.append((pa, ra, pb, rb))        # base's precision and recall, then its
        for row, comparison in zip(per_class, _family(
                table.systems[0], [candidate] * len(labelled), analyses[1:], settings)):
            row.append(comparison)
    tasks = (TaskComparison(str(classes[index]), sizes[classes[index]], tuple(row),
                            rates=tuple(rate))
             for index, row, rate in zip(labelled, per_class, rates))
    return TasksResult(tuple(tasks), tuple(_family(table.systems[0], table.systems[1:], pooled,
                                                   settings)), each)


# --- Leaderboards: k systems on the same items, every pair ---
#
# Ranks and tiers need intervals that hold for all k(k-1)/2 gaps at once: the k scores'
# covariance is computed exactly under the design (a harness run's tasks are strata), and the
# critical value of the largest |gap / se| is simulated from it -- the max-t simultaneous
# intervals of Hothorn, Bretz & Westfall (2008).  A rank interval runs from 1 + the systems
# surely above to k - those surely below; all hold together with confidence at least the level
# (Mogstad, Romano, Shaikh & Wilhelm 2024).  Tiers are greedy (the leader and all not told
# apart from it, then so on), so a tier boundary can fall between systems not told apart;
# letter groups (Piepho 2004) never do.  Each pair's own test is compare's, adjusted.

@dataclass(frozen=True)
class Standing:
    """One system on a leaderboard: score, interval, the ranks it may hold (1: top), tier."""

    system: str
    score: Fraction
    interval: Interval
    ranks: tuple
    tier: int
    groups: str = ""     # letters: systems that share one are not told apart ("": over 52)


@dataclass(frozen=True)
class PairGap:
    """Two systems of a leaderboard, the higher first: gap, joint interval, test, adjusted p."""

    first: str
    second: str
    gap: Fraction
    interval: Interval
    test: object
    p_adjusted: float
    apart: bool
    differing: int | None        # 0/1 items: those the two score differently


@dataclass(frozen=True)
class Leaderboard:
    """Every system's standing (highest score first), every pair, and how they were made:
    the max-|t| critical value and its Monte Carlo error, the items a target power needs
    to separate the top two (alone, and within the board's joint level)."""

    standings: tuple
    pairs: tuple
    n: int
    units: int
    critical: float
    critical_error: float
    draws: int
    confidence: Fraction
    adjust: str
    percent: bool
    binary: bool
    design: str
    target_power: Fraction
    separate: tuple | None
    warnings: tuple = ()
    metric: str | None = None    # a metric of predictions (``METRICS``), else mean scores

    def __repr__(self) -> str:
        return (f"Leaderboard(n={self.n:,}, systems={tuple(s.system for s in self.standings)!r}"
                f", tiers={tuple(s.tier for s in self.standings)}, "
                f"confidence={_format_decimal(self.confidence)}, adjust={self.adjust!r})")

    def pair(self, first: str, second: str) -> PairGap:
        for p in self.pairs:
            if {p.first, p.second} == {first, second}:
                return p
        raise ToolError(f"no pair {_shorten(first)}, {_shorten(second)} on this leaderboard")


def _score_covariance(columns, strata, scale: int, binary: bool) -> tuple:
    """``(means, covariance, cross)`` of the k mean scores, exactly: the ratio estimator
    linearized over units, centred per stratum, times n_h / (n_h - 1) (the delta method of
    survey sampling); ``cross[i][j]`` sums products of unit totals (0/1 items: on bit sets)."""
    dot = math.sumprod if hasattr(math, "sumprod") else (     # exact on integers, C speed
        lambda a, b: sum(map(operator.mul, a, b)))
    k = len(columns)
    total_n = sum(len(unit) for units in strata for unit in units)
    totals = [sum(column) for column in columns]
    by_df = {}                   # n_h - 1: per pair, the integer sum over such strata
    cross = [[0] * k for _ in range(k)]
    for units in strata:
        count, sizes = len(units), [len(unit) for unit in units]
        if any(size > 1 for size in sizes):
            sums = [[sum(column[i] for i in unit) for unit in units] for column in columns]
        elif count == len(columns[0]):
            sums = columns
        else:
            pick = operator.itemgetter(*(unit[0] for unit in units))
            sums = [pick(column) if count > 1 else (pick(column),) for column in columns]
        if binary and count == sum(sizes):
            bits = [int.from_bytes(bytes(map(int, s)), "little") for s in sums]
            products = [[(bits[i] & bits[j]).bit_count() for j in range(i + 1)] for i in range(k)]
        else:
            products = [[dot(sums[i], sums[j]) for j in range(i + 1)] for i in range(k)]
        q, size_h = dot(sizes, sizes), sum(sizes)
        r = [dot(s, sizes) for s in sums]
        h = [total_n * sum(s) - t * size_h for s, t in zip(sums, totals)]
        sums_ij = by_df.setdefault(count - 1, [[0] * (i + 1) for i in range(k)])
        for i in range(k):
            for j in range(i + 1):
                cross[i][j] += products[i][j]
                cross[j][i] = cross[i][j]
                centred = total_n * total_n * products[i][j] - total_n * (
                    totals[j] * r[i] + totals[i] * r[j]) + totals[i] * totals[j] * q
                sums_ij[i][j] += count * centred - h[i] * h[j]
    base = total_n ** 4 * scale * scale
    cov = [[sum(Fraction(sums_ij[max(i, j)][min(i, j)], df * base)
                for df, sums_ij in by_df.items() if df) for j in range(k)] for i in range(k)]
    means = [Fraction(t, total_n * scale) for t in totals]
    return means, cov, cross


def _max_t_critical(rng: random.Random, cov, variances, confidence, draws: int,
                    progress=None) -> tuple:
    """``(critical value, its Monte Carlo +-, draws made)``: the *confidence* quantile of
    max |Z_j - Z_i| / se_ij, Z ~ N(0, cov), k ``rng.gauss`` per draw, summed with fsum."""
    k = len(cov)
    inverse = [[1 / math.sqrt(variances[i][j]) if variances[i][j] else 0.0
                for j in range(i + 1, k)] for i in range(k)]
    pairs = sum(1 for row in inverse for value in row if value)
    p = Fraction(confidence)
    # The largest |t| of m pairs is at least one pair's and at most Bonferroni's: both
    # bounds are exact, and with one pair (or none) they meet: nothing to draw.
    low, high = (NormalDist().inv_cdf(1 - float(1 - p) / 2 / m) for m in (1, max(1, pairs)))
    if pairs <= 1:
        return low, 0.0, 0
    lower = [[0.0] * k for _ in range(k)]       # cov's Cholesky factor in floats: a pivot
    for i in range(k):                          # that vanishes leaves its column zero
        for j in range(i + 1):
            rest = float(cov[i][j]) - math.fsum(lower[i][m] * lower[j][m] for m in range(j))
            if i == j:
                lower[i][i] = math.sqrt(rest) if rest > 1e-12 * float(cov[i][i]) else 0.0
            else:
                lower[i][j] = rest / lower[j][j] if lower[j][j] else 0.0
    gauss, fsum, mul, sub = rng.gauss, math.fsum, operator.mul, operator.sub
    maxima = []
    for done in range(draws):
        g = [gauss(0.0, 1.0) for _ in range(k)]
        z = [fsum(map(mul, row[:i + 1], g)) for i, row in enumerate(lower)]
        maxima.append(max(max(map(abs, map(mul, map(sub, z[i + 1:], itertools.repeat(z[i])),
                                             inverse[i])), default=0.0) for i in range(k)))
        if progress is not None and (done + 1) % 512 == 0:
            progress(done + 1, draws)
    maxima.sort()
    at = min(draws, math.ceil(p * draws)) - 1
    spread = NormalDist().inv_cdf(0.975) * math.sqrt(draws * float(p * (1 - p)))
    ends = [maxima[max(0, int(at - spread))], maxima[at],
            maxima[min(draws - 1, math.ceil(at + spread))]]
    lo, critical, hi = (min(max(value, low), high) for value in ends)
    return critical, (hi - lo) / 2, draws


@dataclass(frozen=True)
class ZTest:
    """A leaderboard pair's two-sided z test on its design-based standard error."""

    z: float
    p: float
    name: str = "paired z test (design-based s.e.)"


def _z_test(gap, var, name: str = ZTest.name) -> ZTest:
    z = float(gap) / math.sqrt(var) if var else math.inf if gap else 0.0
    return ZTest(z, 2 * NormalDist().cdf(-abs(z)) if var else 0.0 if gap else 1.0, name)


def _letter_groups(order, apart) -> dict:
    """Compact letter display (Piepho 2004's insert-and-absorb): per system, letters such
    that two systems share a letter exactly when the board does not tell them apart; ``{}``
    when more than 52 letters would be needed.

    >>> apart = [[False, False, True], [False, False, False], [True, False, False]]
    >>> _letter_groups([0, 1, 2], apart)
    {0: 'a', 1: 'ab', 2: 'b'}
    """
    columns = [frozenset(order)]
    for x, i in enumerate(order):
        for j in order[x + 1:]:
            if not apart[i][j]:
                continue
            split = [part for column in columns for part in (
                (column - {j}, column - {i}) if i in column and j in column else (column,))]
            columns = [column for k, column in enumerate(split) if not any(
                column < other or (column == other and m < k) for m, other in enumerate(split))]
            if len(columns) > len(_LETTERS):
                return {}
    position = {system: x for x, system in enumerate(order)}
    columns.sort(key=lambda column: sorted(map(position.__getitem__, column)))
    return {system: "".join(letter for letter, column in zip(_LETTERS, columns)
                            if system in column) for system in order}


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"   # letter groups, at most 52
_FEW_DIFFERING = 20              # 0/1 pairs scored differently on fewer items: warned about
_FEW_UNITS = 30                  # fewer units: the normal approximation is warned about


def rank_systems(table: Table, rng: random.Random, settings: Settings | None = None, *,
                draws: int = LEADERBOARD_DRAWS, target_power=Fraction("0.8"),
                progress=None, metric: str = "accuracy", positive=None,
                **options) -> Leaderboard:
    """Rank the table's systems: each one's score and interval, every pair's gap with
    simultaneous intervals and its own test (p adjusted by ``settings.adjust``), the rank
    interval and tier of each, and the items that would separate the top two.  A table of
    predictions (``gold``) ranks *metric*, its covariance from paired resamples of the items
    and each pair's test the predictions' swaps (``metric_permutation_test``)."""
    settings = _settings_of(settings, options)
    k = len(table.systems)
    if not 2 <= k <= MAX_SYSTEMS:
        raise ToolError(f"a leaderboard needs 2 to {MAX_SYSTEMS} systems, got {k}")
    labels = table.strata if table.strata is not None else table.tasks
    grouped = {}              # per stratum (strata, tasks, else one), per unit: its positions
    for index in range(table.n):
        stratum = grouped.setdefault(None if labels is None else labels[index], {})
        unit = index if table.clusters is None else table.clusters[index]
        stratum.setdefault(unit, []).append(index)
    strata = [list(units.values()) for units in grouped.values()]
    units = sum(map(len, strata))
    if table.gold is not None:
        means, cov, design = _metric_covariance(table, rng, metric, positive,
                                                settings.resamples or RESAMPLES)
        binary, cross = False, None
    else:
        scale = math.lcm(*{Fraction(v).denominator for column in table.columns
                           for v in set(column)})
        columns = table.columns if scale == 1 else [tuple(int(v * scale) for v in column)
                                                    for column in table.columns]
        if labels is not None or table.clusters is not None:   # the design's checks: compare's
            Scores(table.columns[0], table.columns[1], table.clusters, labels).units
        binary, design = all(set(column) <= {0, 1} for column in table.columns), None
        means, cov, cross = _score_covariance(columns, strata, scale, binary)
    for s, runs in enumerate(table.runs or ()):     # a run shifts a whole system: the run
        run_scale = math.lcm(*{Fraction(v).denominator    # component, as compare's
                               for _, column in runs for v in set(column)})
        cov[s][s] += Fraction(_run_variance([(label, [int(v * run_scale) for v in column])
                                             for label, column in runs], table.n, run_scale))
    plain = binary and table.clusters is None and table.runs is None
    cells = None if not plain else [[sum(columns[i]) - cross[i][j] for j in range(k)]
                                    for i in range(k)]    # i scores 1 and j scores 0

    def test(i, j, variances):
        """The pair's test: a metric's swaps, compare's McNemar (plain 0/1 items) or two-level t
        (runs); else a z test (compare's sign flips would take k(k-1)/2 saddlepoints)."""
        if design is not None:
            pair = Confusions.of(table.gold, table.columns[j], table.columns[i])
            if positive is not None and positive not in pair.classes:   # neither has it: F1 0
                pair = Confusions(pair.classes + (positive,), pair.cells)
            index = None if positive is None else pair.classes.index(positive)
            return metric_permutation_test(rng, pair, metric, index,
                                           settings.permutations or PERMUTATIONS)
        if cells is not None:
            return mcnemar_exact(cells[j][i], cells[i][j])
        if table.runs is None:
            return _z_test(means[i] - means[j], variances[i][j])
        scores = Scores(table.columns[j], table.columns[i], table.clusters, labels,
                        table.runs[j], table.runs[i])
        return _paired_test(rng, scores, settings, None)[1]

    def interval(s, half):
        if plain:
            return wilson_interval(sum(table.columns[s]), table.n, settings.confidence)
        lo, hi = float(means[s]) - half, float(means[s]) + half
        if table.proportions:
            lo, hi = max(-1.0 if metric in _SIGNED_METRICS else 0.0, lo), min(1.0, hi)
        return lo, hi
    standings, pairs, critical, error, draws, separate = _board(
        table.systems, means, cov, rng, settings, draws=draws, progress=progress, test=test,
        interval=interval, n=table.n, target_power=target_power, plan=table.runs is None,
        differing=None if cells is None else
        [[cells[i][j] + cells[j][i] for j in range(k)] for i in range(k)])
    warnings = []
    few = [p for p in pairs if p.differing is not None and 0 < p.differing < _FEW_DIFFERING]
    if few:
        warnings.append(f"{len(few)} pair(s) are scored differently on fewer than "
                        f"{_FEW_DIFFERING} items (first: {_printable(few[0].first)} and "
                        f"{_printable(few[0].second)}, {few[0].differing}): the normal "
                        "approximation behind their intervals may not hold, nor the ranks and "
                        "tiers that lean on them")
    if units < _FEW_UNITS:
        warnings.append(f"only {units} {'clusters' if table.clusters is not None else 'items'}: "
                        "the normal approximation behind the intervals, ranks and tiers may "
                        "not hold")
    parts = [f"{units:,} clusters"] if table.clusters is not None else []    # the design
    if table.strata is not None or table.tasks is not None:
        parts.append(f"{len(strata):,} " + ("strata" if table.strata is not None else
                                             "slices as strata" if table.slices else
                                             "tasks as strata"))
    if table.runs is not None:
        parts.append("each item's mean over its runs, plus the runs' own variance")
    return Leaderboard(tuple(standings), tuple(pairs), table.n, units, critical, error, draws,
                       settings.confidence, settings.adjust, table.proportions and
                       metric not in _SIGNED_METRICS, binary,
                       design or ", ".join(parts) or "items", Fraction(target_power),
                       separate, tuple(warnings), None if design is None else metric)


def _board(names, means, cov, rng, settings, *, draws, progress, test, interval, n,
           target_power, plan=True, differing=None) -> tuple:
    """``(standings, pairs, critical value, its error, draws, items to separate the top two)``
    from the scores and covariance; *test(i, j, variances)*, *interval(s, half-width)*."""
    k = len(names)
    variances = [[cov[i][i] + cov[j][j] - 2 * cov[i][j] for j in range(k)] for i in range(k)]
    order = sorted(range(k), key=lambda s: -means[s])    # highest first, ties in input order
    positioned = [[variances[i][j] for j in order] for i in order]
    critical, error, draws = _max_t_critical(rng, [[cov[i][j] for j in order] for i in order],
                                             positioned, settings.confidence, draws, progress)
    ranked = [(i, j) for x, i in enumerate(order) for j in order[x + 1:]]
    found = [test(i, j, variances) for i, j in ranked]
    adjusted = _ADJUST[settings.adjust]([t.p for t in found])
    c = Fraction(critical)
    apart = [[False] * k for _ in range(k)]
    pairs = []
    for (i, j), pair_test, p_adj in zip(ranked, found, adjusted):
        gap, var = means[i] - means[j], variances[i][j]
        apart[i][j] = apart[j][i] = gap * gap > c * c * var if var else gap != 0
        half = Fraction(critical * math.sqrt(var))
        pairs.append(PairGap(names[i], names[j], gap, Interval(gap - half, gap + half), pair_test,
                             p_adj, apart[i][j], None if differing is None else differing[i][j]))
    tiers, rest, tier = {}, list(order), 1      # the leader and all not told apart from it,
    while rest:                                 # then so on among the rest
        members = [s for s in rest if s == rest[0] or not apart[rest[0]][s]]
        tiers.update(dict.fromkeys(members, tier))
        rest = [s for s in rest if s not in members]
        tier += 1
    letters = _letter_groups(order, apart)
    z = NormalDist().inv_cdf((1 + float(settings.confidence)) / 2)
    standings = []
    for s in order:
        above = sum(apart[s][t] and means[t] > means[s] for t in range(k))
        below = sum(apart[s][t] and means[t] < means[s] for t in range(k))
        lo, hi = interval(s, z * math.sqrt(cov[s][s]))
        standings.append(Standing(names[s], means[s], Interval(Fraction(lo), Fraction(hi)),
                                  (1 + above, k - below), tiers[s], letters.get(s, "")))
    separate = None
    top, second = order[0], order[1]
    gap = means[top] - means[second]
    if gap and variances[top][second] and plan:
        power = NormalDist().inv_cdf(float(target_power))
        share = float(variances[top][second] / (gap * gap))
        separate = tuple(math.ceil(n * (q + power) ** 2 * share) for q in (z, critical))
    return standings, pairs, critical, error, draws, separate


def _metric_covariance(table: Table, rng: random.Random, metric: str, positive,
                       resamples: int) -> tuple:
    """``(values, covariance, design)`` of the systems' *metric* over paired resamples of the
    (label, each system's prediction) cells, drawn 100 at a time (memory)."""
    classes = _classes(set(table.gold).union(*table.columns, [positive] if positive is not None
                                             else []))
    if metric not in METRICS or (metric in _CLASS_METRICS) != (positive is not None):
        raise ToolError(f"metric must be one of {', '.join(METRICS)}; positive names the class "
                        "of f1, precision or recall, and goes with them alone")
    if resamples < 2:
        raise ToolError(f"a metric's intervals need {_opt('resamples')} of 2 or more")
    index = {name: i for i, name in enumerate(classes)}
    spec = [(metric, index.get(positive))]
    keys, counts = zip(*collections.Counter(zip(table.gold, *table.columns)).items())
    values, samples = [], [[] for _ in table.systems]
    for start in range(0, resamples, 100):
        draws = multinomial_columns(rng, counts, min(100, resamples - start))
        for s, sample in enumerate(samples):
            seen = {}
            for key, count, column in zip(keys, counts, draws):
                cell = (index[key[0]], index[key[s + 1]], index[key[s + 1]])
                total, drawn = seen.get(cell, (0, None))
                seen[cell] = (total + count, column if drawn is None else
                              list(map(operator.add, drawn, column)))
            if start == 0:
                ((value,), _), = _metric_columns([(key, [total]) for key, (total, _) in
                                                  seen.items()], len(classes), spec)
                values.append(value)
            sample += map(float, _metric_columns([(key, drawn) for key, (_, drawn) in
                                                  seen.items()], len(classes), spec)[0][0])
    centred = [[x - math.fsum(sample) / resamples for x in sample] for sample in samples]
    cov = [[Fraction(math.fsum(map(operator.mul, a, b)) / (resamples - 1)) for b in centred]
           for a in centred]
    return values, cov, (f"{_METRIC_NAMES[metric]}'s {resamples:,} paired resamples of the "
                         "items")


def _slice_scores(table: Table, confidence=CONFIDENCE) -> tuple:
    """Per slice (``tasks``) ``(slice, items, ((system, score, Interval), ...))``: marginal
    intervals, Wilson's for 0/1 scores, else normal (clamped to [0, 1] for proportions)."""
    if table.clusters is not None or table.runs is not None:
        raise ToolError("scores by slice cover plain items: not with clusters or runs")
    z = NormalDist().inv_cdf((1 + float(confidence)) / 2)
    out = []
    for label in dict.fromkeys(table.tasks):
        keep = [i for i, task in enumerate(table.tasks) if task == label]
        scores = []
        for system, column in zip(table.systems, table.columns):
            values = [Fraction(column[i]) for i in keep]
            mean = sum(values) / len(values)
            if set(values) <= {0, 1}:
                lo, hi = wilson_interval(int(sum(values)), len(values), confidence)
            else:
                sd = math.sqrt(float(sum((v - mean) ** 2 for v in values)) / (len(values) - 1))
                lo, hi = (float(mean) + sign * z * sd / math.sqrt(len(values)) for sign in (-1, 1))
                lo, hi = (max(0.0, lo), min(1.0, hi)) if table.proportions else (lo, hi)
            scores.append((system, mean, Interval(Fraction(lo), Fraction(hi))))
        out.append((label, len(keep), tuple(scores)))
    return tuple(out)


# --- Battles: Bradley-Terry ratings, Davidson's ties, prompts as clusters ---
#
# P(i beats j) = a / D, P(tie) = c / D with a = e^theta_i, b = e^theta_j, c = e^(lambda +
# (theta_i + theta_j) / 2), D = a + b + c (Davidson 1970; c = 0 is Bradley and Terry's model,
# used when no battle ties or a judge gives probabilities).  The log-likelihood is that of an
# exponential family, concave in (theta, lambda): Newton's method with step halving finds its
# maximum.  The covariance is the sandwich H^-1 M H^-1, M summing each prompt's score
# outer product, so battles of one prompt are resampled together in effect.

ELO = 400 / math.log(10)             # log-odds to Elo points; the anchor is at ELO_ANCHOR
ELO_ANCHOR = 1000


@dataclass(frozen=True)
class BradleyTerry:
    """Each system's rating on the log-odds scale (the anchor at 0), the robust covariance
    (prompts as clusters), Davidson's tie parameter nu (None: Bradley-Terry without ties),
    and the Newton steps taken."""

    systems: tuple
    ratings: tuple
    covariance: tuple
    tie: float | None
    anchor: int
    prompts: int
    steps: int
    robust: bool = True          # False: the model-based covariance (the robust one degenerate)
    position: tuple | None = None   # (log-odds of being shown first, its s.e.), if fitted


_MAX_LOG_ODDS = 20      # a rating or log nu past this is a fit running off to infinity


def _linear_solve(matrix, columns) -> list:
    """The columns x of matrix x = columns (Gauss-Jordan, partial pivoting, floats)."""
    n = len(matrix)
    rows = [list(row) + [column[r] for column in columns] for r, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col]              # never 0: the graph's checks make the fit unique
        head[:] = [value / head[col] for value in head]
        for r in range(n):
            factor = rows[r][col] if r != col else 0.0
            if factor:
                rows[r] = [x - factor * y for x, y in zip(rows[r], head)]
    return [[row[n + c] for row in rows] for c in range(len(columns))]


def _check_graph(data: Battles, kinds) -> None:
    """One line when the ratings cannot be finite: the systems fall in groups that never met,
    or a group won (or lost) every battle against the rest (*kinds*: the distinct battles)."""
    k, names = len(data.systems), data.systems
    met, won, lost = ([set() for _ in range(k)] for _ in range(3))
    for i, j, share in kinds:
        met[i].add(j), met[j].add(i)
        for winner, loser, scored in ((i, j, share > 0), (j, i, share < 1)):
            if scored:
                won[winner].add(loser)
                lost[loser].add(winner)

    def reach(edges, start: int) -> set:          # the systems reached along the edges
        seen, todo = {start}, [start]
        while todo:
            for other in edges[todo.pop()] - seen:
                seen.add(other)
                todo.append(other)
        return seen
    reached = reach(met, 0)
    if len(reached) < k:
        apart = next(s for s in range(k) if s not in reached)
        raise ToolError(f"the battles fall in groups that never met ({_shorten(names[0])} and "
                        f"{_shorten(names[apart])} are in different ones): their ratings cannot "
                        "be compared; rank each group alone")
    for edges, what in ((won, "lost"), (lost, "won")):
        for s in range(k):
            group = reach(edges, s)
            if len(group) < k:
                rest = [names[t] for t in range(k) if t not in group]
                raise ToolError(f"{_shorten(', '.join(rest), 80)} never {what} a battle against "
                                f"the other systems (ties count both ways): no finite rating "
                                "fits; add battles, or rank the others alone")


def _pair_counts(kinds, ordered: bool = False) -> dict:
    """{(i, j): [battles, i's share, ties]} from ``{(first, second, share): m}``: i < j, or
    with *ordered* i the first shown (for a position term)."""
    counts = {}
    for (i, j, share), m in kinds.items():
        if i > j and not ordered:
            i, j, share = j, i, 1 - share
        entry = counts.setdefault((i, j), [0, 0, 0])
        entry[0] += m
        entry[1] += m * share
        entry[2] += m * (share == _HALF)
    return counts


def _pair_moments(theta, tie, i, j) -> tuple:
    """(p_i, p_j, p_tie) of one battle of i (shown first: ``theta[-1]``, the position term, is
    added to its rating; 0 without one) and j."""
    first = theta[i] + theta[-1]
    a, b = math.exp(first), math.exp(theta[j])
    c = 0.0 if tie is None else math.exp(tie + (first + theta[j]) / 2)
    d = a + b + c
    return a / d, b / d, c / d


def _bt_newton(counts, theta, tie, free, n: int) -> tuple:
    """``(theta, tie, gradient, Hessian, steps)`` at the maximum, by Newton's method."""
    position = {s: x for x, s in enumerate(free)}

    def derivatives(theta, tie) -> tuple:
        """(log-likelihood, gradient, Hessian) over the free parameters (then log nu)."""
        m = len(free) + (tie is not None)
        grad, hess, loglik = [0.0] * m, [[0.0] * m for _ in range(m)], 0.0
        for (i, j), (battles, y, t) in counts.items():
            t = t if tie is not None else 0          # without Davidson a tie is half a win
            pi, pj, pt = _pair_moments(theta, tie, i, j)
            wins_i, wins_j = y - t / 2, battles - y - t / 2
            loglik += float(wins_i) * math.log(pi) + float(wins_j) * math.log(pj) + (
                float(t) * math.log(pt) if t else 0.0)
            mean = (pi + pt / 2, pj + pt / 2, pt)
            second = ((pi + pt / 4, pt / 4, pt / 2), (pt / 4, pj + pt / 4, pt / 2),
                      (pt / 2, pt / 2, pt))
            # the position term moves with the first shown's rating: its component is i's
            slots = [(position.get(i), 0), (position.get(j), 1),
                     (m - 1 if tie is not None else None, 2), (position.get(len(theta) - 1), 0)]
            observed = (float(y), float(battles - y), float(t))
            for su, u in slots:
                if su is None:
                    continue
                grad[su] += observed[u] - battles * mean[u]
                for sv, v in slots:
                    if sv is not None:
                        hess[su][sv] -= battles * (second[u][v] - mean[u] * mean[v])
        return loglik, grad, hess
    loglik, grad, hess = derivatives(theta, tie)
    steps = 0
    while max(map(abs, grad)) > 1e-10 * n and steps < 200:
        step, steps = _linear_solve([[-x for x in row] for row in hess], [grad])[0], steps + 1
        while True:                    # halve the step until the log-likelihood does not fall
            trial = [value + step[position[s]] if s in position else value
                     for s, value in enumerate(theta)]
            trial_tie = None if tie is None else tie + step[-1]
            new = derivatives(trial, trial_tie)
            if new[0] >= loglik - 1e-12 * abs(loglik) or max(map(abs, step)) < 1e-15:
                break
            step = [x / 2 for x in step]
        theta, tie, (loglik, grad, hess) = trial, trial_tie, new
    return theta, tie, grad, hess, steps


def _prompt_members(data: Battles, kinds) -> dict:
    """{prompt: [the position in *kinds* of each of its battles' (first, second, share)]}."""
    code = {kind: x for x, kind in enumerate(kinds)}
    by_prompt = collections.defaultdict(list)
    for prompt, x in zip(data.prompts, map(code.__getitem__, zip(data.first, data.second,
                                                                  data.shares))):
        by_prompt[prompt].append(x)
    return by_prompt


def _prompt_bootstrap(data: Battles, fit: BradleyTerry, rng: random.Random,
                      resamples: int) -> tuple:
    """``(covariance of the ratings over resamples of the prompts, resamples left out)``: each
    resample draws the prompts with replacement (multinomial counts over the prompts' distinct
    patterns of battles) and refits from the fit's ratings; a resample whose ratings have no
    finite maximum (a system that never lost in it) is left out and counted."""
    kinds = list(collections.Counter(zip(data.first, data.second, data.shares)))
    by_prompt = _prompt_members(data, kinds)
    patterns = collections.Counter(tuple(sorted(members)) for members in by_prompt.values())
    probs = [count / len(by_prompt) for count in patterns.values()]
    k, ordered = len(data.systems), fit.position is not None
    free = [s for s in range(k) if s != fit.anchor] + [k] * ordered
    start = list(fit.ratings) + [fit.position[0] if ordered else 0.0]
    log_tie = None if fit.tie is None else math.log(fit.tie)
    draws, left_out = [], 0
    for _ in range(resamples):
        counted = collections.Counter()
        for pattern, times in zip(patterns, multinomial_variate(rng, len(by_prompt), probs)):
            for x in pattern if times else ():
                counted[kinds[x]] += times
        try:
            _check_graph(data, counted)
        except ToolError:
            left_out += 1
            continue
        draws.append(_bt_newton(_pair_counts(counted, ordered), start, log_tie, free, data.n)[0])
    if len(draws) < 2:
        raise ToolError(f"{left_out:,} of {resamples:,} resamples of the prompts have no finite "
                        "ratings: the board needs the robust covariance, or more battles")
    means = [math.fsum(d[s] for d in draws) / len(draws) for s in range(k)]
    return [[math.fsum((d[s] - means[s]) * (d[t] - means[t]) for d in draws) / (len(draws) - 1)
             for t in range(k)] for s in range(k)], left_out


def bradley_terry(data: Battles, anchor: int = 0, position: bool = False) -> BradleyTerry:
    """The maximum-likelihood Bradley-Terry ratings of *data* (Davidson's ties when battles
    tie and every share is a win, a tie or a loss), anchored at 0, with their robust
    covariance over prompts; with *position* a term for the first shown (its log-odds).

    >>> fit = bradley_terry(battles([(1, "a", "b", 1), (2, "a", "b", 1), (3, "b", "a", 1)]))
    >>> [round(r, 4) for r in fit.ratings], fit.tie
    ([0.0, -0.6931], None)
    """
    kinds = collections.Counter(zip(data.first, data.second, data.shares))
    _check_graph(data, kinds)
    k = len(data.systems)
    counts = _pair_counts(kinds, position)
    ties = any(t for _, _, t in counts.values())
    davidson = ties and all(s in (0, _HALF, 1) for s in set(data.shares))
    free = [s for s in range(k) if s != anchor] + [k] * position
    theta, tie, grad, hess, steps = _bt_newton(counts, [0.0] * (k + 1),
                                               0.0 if davidson else None, free, data.n)
    # the meat, sum over prompts of (their battles' scores summed) squared: each battle's
    # own square, then the products of two battles of one prompt (scores: observed - expected)
    index, m = {s: x for x, s in enumerate(free)}, len(grad)
    vectors = []
    for i, j, share in kinds:
        if i > j and not position:
            i, j, share = j, i, 1 - share
        pi, pj, pt = _pair_moments(theta, tie, i, j)
        vector = [(index[s], float(y) - p - pt / 2) for s, y, p in
                  ((i, share, pi), (j, 1 - share, pj), (k, share, pi)) if s in index]
        vectors.append(vector + ([(m - 1, float(share == _HALF) - pt)] if tie is not None else []))
    products = collections.Counter({(x, x): count for x, count in enumerate(kinds.values())})
    by_prompt = _prompt_members(data, kinds)
    products.update(pair for members in by_prompt.values() if len(members) > 1
                    for pair in itertools.permutations(members, 2))
    meat = [[0.0] * m for _ in range(m)]
    for (x, y), count in products.items():
        for u, a in vectors[x]:
            for v, b in vectors[y]:
                meat[u][v] += count * a * b
    bread = _linear_solve([[-x for x in row] for row in hess],
                          [[float(u == v) for u in range(m)] for v in range(m)])  # (-H)^-1
    runaway = [s for s, u in index.items() if bread[u][u] > math.exp(_MAX_LOG_ODDS / 2)]
    if runaway or tie is not None and tie > _MAX_LOG_ODDS:
        what = (f"{_shorten(', '.join(data.systems[s] for s in runaway), 80)} won or lost "
                "nothing but ties against the rest" if runaway else "nearly every battle tied")
        raise ToolError(f"no finite ratings fit these battles ({what}: the fit runs off to "
                        "infinity); add battles, or rank without those systems")
    half = [[math.fsum(bread[w][u] * meat[w][v] for w in range(m)) for v in range(m)]
            for u in range(m)]
    sandwich = [[math.fsum(half[u][w] * bread[v][w] for w in range(m)) for v in range(m)]
                for u in range(m)]
    # The sandwich degenerates where battles fit the model exactly (two systems that only
    # tied): a gap's robust variance under a quarter of the model's takes the model's.
    robust = all(sandwich[u][u] + sandwich[v][v] - 2 * sandwich[u][v] >= (
        bread[u][u] + bread[v][v] - 2 * bread[u][v]) / 4 for u in range(len(free))
                 for v in range(u + 1)) and all(sandwich[u][u] >= bread[u][u] / 4
                                                for u in range(len(free)))
    chosen = sandwich if robust else bread
    cov = [[chosen[index[s]][index[t]] if s in index and t in index else 0.0 for t in range(k)]
           for s in range(k)]
    return BradleyTerry(data.systems, tuple(theta[:k]), tuple(map(tuple, cov)),
                        None if tie is None else math.exp(tie), anchor,
                        len(by_prompt), steps, robust, (theta[k], math.sqrt(
                            chosen[index[k]][index[k]])) if position else None)


SCALES = ("logit", "elo")           # a Bradley-Terry board's ratings: log-odds, Elo points


def rank_battles(data: Battles, rng: random.Random, settings: Settings | None = None, *,
                 draws: int = LEADERBOARD_DRAWS, target_power=Fraction("0.8"),
                 progress=None, anchor: str | None = None, scale: str = "logit",
                 bootstrap: int = 0, position: bool = False, **options) -> Leaderboard:
    """Rank the systems of *data* by their Bradley-Terry ratings (``bradley_terry``) on the
    log-odds scale or in Elo points (``scale="elo"``: 400 per factor of 10 in the odds, the
    anchor at 1000), the anchor the first system unless named: each rating with its robust
    interval (relative to the anchor), every pair's gap with simultaneous max-|t| intervals
    and a Wald z test, rank intervals and tiers, and the battles that would separate the top
    two.  Pairs that never met, and too few prompts, are warned about.  ``bootstrap=B``: the
    covariance from B resamples of the prompts instead of the sandwich; ``position=True`` fits a
    term for the system shown first (battles whose format records it)."""
    settings = _settings_of(settings, options)
    k = len(data.systems)
    if not 2 <= k <= MAX_SYSTEMS:
        raise ToolError(f"a leaderboard needs 2 to {MAX_SYSTEMS} systems, got {k}")
    if anchor is not None and anchor not in data.systems:
        raise ToolError(f"{_opt('anchor')}: no system {_shorten(anchor)} in the battles")
    if scale not in SCALES:
        raise ToolError(f"{_opt('scale')} is one of {', '.join(SCALES)}, not {_shorten(scale)}")
    if bootstrap == 1:
        raise ToolError(f"{_opt('bootstrap')} takes 2 or more resamples (0: the robust "
                        "covariance)")
    if position and not data.positioned:
        raise ToolError(f"{_opt('position', True)} needs battles whose format records who was "
                        f"shown first ({data.kind} does not)")
    fit = bradley_terry(data, 0 if anchor is None else data.systems.index(anchor), position)
    covariance, left_out = _prompt_bootstrap(data, fit, rng, bootstrap) if bootstrap else \
        (fit.covariance, 0)
    factor, offset = (ELO, ELO_ANCHOR) if scale == "elo" else (1.0, 0)
    means = [offset + Fraction(round(factor * rating, 9)) for rating in fit.ratings]  # no
    # float noise past the fit's own precision: systems that only tied are at one rating
    cov = [[Fraction(factor * factor * value) for value in row] for row in covariance]
    name = f"Wald z ({'bootstrap' if bootstrap else 'robust' if fit.robust else 'model'} s.e.)"
    standings, pairs, critical, error, draws, separate = _board(
        data.systems, means, cov, rng, settings, draws=draws, progress=progress,
        test=lambda i, j, variances: _z_test(means[i] - means[j], variances[i][j], name),
        interval=lambda s, half: (float(means[s]) - half, float(means[s]) + half),
        n=data.n, target_power=target_power)
    met = {frozenset(pair) for pair in zip(data.first, data.second)}
    never = [p for p in pairs if frozenset(map(data.systems.index, (p.first, p.second)))
             not in met]
    warnings = [f"{len(never)} pair(s) never met (first: {_printable(never[0].first)} and "
                f"{_printable(never[0].second)}): their gaps rest on battles with the others "
                "alone"] if never else []
    if fit.prompts < _FEW_UNITS:
        warnings.append(f"only {fit.prompts} prompts: the normal approximation behind the "
                        "intervals, ranks and tiers may not hold")
    if left_out:
        warnings.append(f"{left_out:,} of {bootstrap:,} resamples of the prompts had no finite "
                        "ratings and were left out: the bootstrap covariance leans on the rest")
    ties = "" if fit.tie is None else f", ties by Davidson (1970), nu={fit.tie:.3f}"
    how = f"bootstrap covariance, {bootstrap:,} resamples of" if bootstrap else \
        "robust covariance," if fit.robust else ("model-based covariance (the robust one "
                                                 "degenerates: some battles fit exactly, as two "
                                                 "systems that only tied),")
    if fit.position is not None:
        h, se = fit.position
        z = _z_value(settings.confidence)
        ties += (f", a position term: the first shown {h:+.3f} log-odds "
                 f"[{h - z * se:+.3f}, {h + z * se:+.3f}]")
    design = (f"Bradley-Terry{ties}, the anchor {data.systems[fit.anchor]} at "
              f"{_format_decimal(Fraction(offset))}; {how} {fit.prompts:,} prompts as clusters")
    return Leaderboard(tuple(standings), tuple(pairs), data.n, fit.prompts, critical, error,
                       draws, settings.confidence, settings.adjust, False, False, design,
                       Fraction(target_power), separate, tuple(warnings), scale)


# --- A judge on every item, people on a few: the prediction-powered gap ---

@dataclass(frozen=True)
class JudgeCorrected:
    """The paired gap B - A of two systems scored by a judge on every item and by people on
    some: the prediction-powered (PPI++) gap with its interval and z test's p, its tuning
    lambda; beside it the gap of the people's scores alone and of the judge's alone, the
    judge's bias on the gap (judge minus people, on the labelled items), the labels the
    corrected interval is worth, each system's agreement of judge with people (0/1: the
    share agreeing and Cohen's kappa; else the correlation and the mean of judge - people),
    and the corrected interval's coverage in replays simulated from these data."""

    systems: tuple
    labelled: int
    items: int
    gap: float
    interval: Interval
    p: float
    tuning: float
    human: tuple                 # (gap, Interval)
    judge: tuple                 # (gap, Interval)
    bias: tuple                  # (bias, Interval)
    effective: float
    agreement: tuple             # per system: (kind, first value, second value)
    coverage: tuple | None       # (share covered, replays); None: not replayed
    confidence: Fraction

    @property
    def verdict(self) -> str:
        return "cannot tell" if not self.interval.excludes_zero() else \
            "better" if self.gap > 0 else "worse"


_FEW_VALUES = 64                 # distinct values drawn as multinomial counts, not one by one
_REPLAY_DRAWS = 2e7              # items drawn one by one over all replays, at most


def _ppi_coverage(rng: random.Random, labels, predicted, big: int, confidence,
                  replays: int) -> tuple:
    """``(share, replays)``: how often the PPI++ interval covers the labels' mean, in replays
    that draw n labelled items and *big* unlabelled predictions from the labelled items (a
    world whose truth is known and where labelled and unlabelled items are alike), by their
    sums; with many distinct values, as many replays as 20 million draws allow (at least
    100)."""
    def draw_sums(values, k: int, few: bool) -> list:
        """Column sums of k draws with replacement from *values* (multinomial if *few*)."""
        if few:
            distinct = sorted(collections.Counter(values).items())
            counts = multinomial_variate(rng, k, [count / len(values) for _, count in distinct])
            picked = [(value, c) for (value, _), c in zip(distinct, counts) if c]
        else:
            picked = [(value, 1) for value in rng.choices(values, k=k)]
        width = len(values[0])
        return [math.fsum(c * value[i] for value, c in picked) for i in range(width)]

    n, z = len(labels), _z_value(confidence)
    truth = math.fsum(labels) / n
    pairs = [(y, p, y * y, p * p, y * p) for y, p in zip(labels, predicted)]
    alone = [(p, p * p) for p in predicted]
    few_pairs, few_alone = (len(set(v)) <= _FEW_VALUES for v in (pairs, alone))
    if not (few_pairs and few_alone):
        replays = min(replays, max(100, int(_REPLAY_DRAWS / (n + big))))
    hits = 0
    for _ in range(replays):
        sy, sp, syy, spp, syp = draw_sums(pairs, n, few_pairs)
        su, su2 = draw_sums(alone, big, few_alone)
        cov = syp / n - (sy / n) * (sp / n)
        total = n + big
        var = (spp + su2 - (sp + su) ** 2 / total) / (total - 1)
        lam = min(1.0, max(0.0, cov / ((1 + n / big) * var))) if var > 1e-15 else 0.0
        rectifier = (sy - lam * sp) / n
        rectifier_var = max(0.0, (syy - 2 * lam * syp + lam * lam * spp) / n - rectifier ** 2)
        imputed_var = lam * lam * max(0.0, su2 / big - (su / big) ** 2)
        estimate = lam * su / big + rectifier
        half = z * math.sqrt(imputed_var / big + rectifier_var / n)
        hits += estimate - half <= truth <= estimate + half
    return hits / replays, replays


def judge_corrected(data: Judged, rng: random.Random, confidence=CONFIDENCE,
                    replays: int = CALIBRATION_REPLAYS) -> JudgeCorrected:
    """The judge-corrected comparison of *data*'s two systems (see ``JudgeCorrected``)."""
    (judge_a, judge_b), (human_a, human_b) = data.judge, data.human
    labelled = [k for k, h in enumerate(human_a) if h is not None]
    unlabelled = [k for k, h in enumerate(human_a) if h is None]
    if len(labelled) < 2 or not unlabelled:
        raise ToolError(f"{_printable(data.source.path)}: {len(labelled):,} of "
                        f"{len(human_a):,} items have human scores; a judge-corrected "
                        "comparison needs two or more, and items without (else compare the "
                        "human scores themselves, as the scores compared)")
    y = [float(human_b[k] - human_a[k]) for k in labelled]
    yhat = [float(judge_b[k] - judge_a[k]) for k in labelled]
    u = [float(judge_b[k] - judge_a[k]) for k in unlabelled]
    z = _z_value(confidence)

    def normal(estimate: float, se: float) -> tuple:      # (estimate, its normal interval)
        return estimate, Interval(Fraction(estimate - z * se), Fraction(estimate + z * se))

    def agreement(judge, human) -> tuple:
        """("kappa", share agreeing, Cohen's kappa -- 0 when one class alone) for 0/1 scores,
        else ("correlation", Pearson's r or None if either is constant, mean judge - people)."""
        n = len(judge)
        if set(judge) | set(human) <= {0, 1}:      # people's labels as the truth, the judge's
            both = sum(j == h == 1 for j, h in zip(judge, human))   # as predictions
            neither = sum(j == h == 0 for j, h in zip(judge, human))
            kappa = metric_value("kappa", [n - sum(human), sum(human)], [neither, both],
                                 [n - sum(judge), sum(judge)])
            return "kappa", (both + neither) / n, float(kappa)
        x, y = list(map(float, judge)), list(map(float, human))
        (mx, vx), (my, vy) = _mean_and_spread(x), _mean_and_spread(y)
        r = math.fsum((a - mx) * (b - my) for a, b in zip(x, y)) / n / math.sqrt(vx * vy) \
            if vx > 0 and vy > 0 else None
        return "correlation", r, mx - my
    estimate, se, tuning = ppi_mean(y, yhat, u)
    human_gap, human_se, _ = ppi_mean(y, yhat, u, tuning=0.0)
    judge_gap, judge_var = _mean_and_spread(yhat + u)
    bias, bias_var = _mean_and_spread([p - t for p, t in zip(yhat, y)])
    p = 2 * NormalDist().cdf(-abs(estimate) / se) if se else 0.0 if estimate else 1.0
    agreements = tuple(agreement([judge[k] for k in labelled], [human[k] for k in labelled])
                       for judge, human in zip(data.judge, data.human))
    return JudgeCorrected(
        data.systems, len(labelled), len(human_a), estimate,
        normal(estimate, se)[1], p, tuning, normal(human_gap, human_se),
        normal(judge_gap, math.sqrt(judge_var / len(human_a))),
        normal(bias, math.sqrt(bias_var / len(y))),
        len(y) * (human_se / se) ** 2 if se else math.inf, agreements,
        _ppi_coverage(rng, y, yhat, len(u), confidence, replays) if replays else None,
        Fraction(confidence))


def judged_slices(data: Judged, rng: random.Random, confidence=CONFIDENCE,
                  adjust: str = "holm") -> tuple:
    """Per slice of *data* (``data.slices``), in the slices' order: ``(label, items,
    JudgeCorrected or None, adjusted p or None)`` -- None for a slice with fewer than two
    labelled items or none without (too small to correct); p adjusted across the others."""
    found = []
    for label in dict.fromkeys(data.slices):
        keep = [k for k, s in enumerate(data.slices) if s == label]
        part = Judged(data.systems, tuple(tuple(column[k] for k in keep) for column in data.judge),
                      tuple(tuple(column[k] for k in keep) for column in data.human),
                      data.source)
        labelled = sum(h is not None for h in part.human[0])
        found.append((label, len(keep), judge_corrected(part, rng, confidence, replays=0)
                      if 2 <= labelled < len(keep) else None))
    adjusted = iter(_ADJUST[adjust]([r.p for _, _, r in found if r is not None]))
    return tuple((label, n, r, None if r is None else next(adjusted)) for label, n, r in found)


# --- The ledger: every comparison made on a test set ---
#
# An append-only JSON-lines file the user keeps: a line per comparison with the test set's
# SHA-256 (of item ids and baseline scores: a re-export with other columns is the same test
# set), the systems, gap, interval, p, time and version.  Appends hold an exclusive lock
# (flock) and write one buffer, so concurrent CI jobs leave whole lines; a ledger with a line
# not the tool's (truncated, foreign, corrupt) is refused by line number, never rewritten.

_LEDGER_TOOL = "bootstrap-eval-deltas"
_LEDGER_VERSION = 1
MAX_LEDGER_BYTES = 1 << 30       # a ledger, read whole (1 GiB: millions of comparisons)


def _test_set_digest(ids, baseline) -> str:
    """SHA-256 of the test set: each item's id with the baseline's score, sorted by id, so
    the same items and baseline scores give the same digest whatever else the file holds."""
    lines = sorted(json.dumps(list(item) if isinstance(item, tuple) else item,
                              default=_json_default) + f"\t{_format_decimal(score)}"
                   for item, score in zip(ids, baseline))
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    """One comparison in the ledger, as read back."""

    test_set: str
    baseline: str
    candidate: str
    p: float
    gap: float
    verdict: str
    time: str
    interval: tuple = ()
    level: float = 0.95
    percent: bool = True


@dataclass(frozen=True)
class LedgerNote:
    """This run's comparisons on their test set: numbered k of K, and each p Holm-adjusted
    over every comparison the ledger holds for the test set (this run's included)."""

    path: str
    test_set: str
    first: int                  # the number of this run's first comparison on the test set
    total: int                  # comparisons on the test set, this run's included
    p_holm: tuple               # per this run's comparison


def _ledger_entry(record, number: int, shown: str) -> LedgerEntry:
    """One line of the ledger, every field checked; ToolError names the line and field."""
    def bad(field):
        return ToolError(f"the ledger {shown} line {number}: {field}; the file is left as it is")

    def finite(value, low=None, high=None):
        """*value* if a finite number (not a boolean) within [low, high] if given, else None."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                abs(value) > sys.float_info.max or not math.isfinite(value) or \
                low is not None and value < low or high is not None and value > high:
            return None                         # (a 400-digit integer is no float either)
        return value

    if not isinstance(record, dict) or record.get("tool") != _LEDGER_TOOL or \
            record.get("ledger_version") != _LEDGER_VERSION:
        raise bad(f"not a {_LEDGER_TOOL} ledger entry")
    for key in ("test_set", "time", "version", "baseline", "candidate"):
        if not isinstance(record.get(key), str):
            raise bad(f"field {key} is not text")
    if not re.fullmatch(r"[0-9a-f]{64}", record["test_set"]):
        raise bad("field test_set is not a SHA-256")
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z",
                            record["time"]) or record["time"][17:19] > "59":
            raise ValueError
        time.strptime(record["time"], "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise bad("field time is not a UTC time as the tool writes it (2026-01-31T12:00:00Z)") \
            from None
    if record.get("verdict") not in _VERDICTS:
        raise bad("field verdict is not one of " + ", ".join(_VERDICTS))
    checks = (("n", 2, None), ("gap", None, None), ("level", 0, 1), ("p", 0, 1))
    values = {key: finite(record.get(key), low, high) for key, low, high in checks}
    for key, value in values.items():
        if value is None or key == "n" and not isinstance(value, int) or \
                key == "level" and not 0 < value < 1:
            raise bad(f"field {key} is not a valid number")
    interval = record.get("interval")
    if not isinstance(interval, list) or len(interval) != 2 or None in (
            finite(x) for x in interval) or interval[0] > interval[1]:
        raise bad("field interval is not two finite numbers, low then high")
    if not isinstance(record.get("percent", True), bool):
        raise bad("field percent is not true or false")
    return LedgerEntry(record["test_set"], record["baseline"], record["candidate"],
                       float(values["p"]), float(values["gap"]), record["verdict"],
                       record["time"], tuple(map(float, interval)), float(values["level"]),
                       record.get("percent", True))


def _parse_ledger(raw, path: str) -> list:
    """A ledger's entries, its bytes read through the checked reader every input goes
    through (no NUL, UTF-8, bounded lines), at most MAX_LEDGER_BYTES."""
    def no_constants(name: str):                  # NaN and Infinity: not JSON
        raise ValueError(f"{name} is not a number")

    def unique_keys(pairs) -> dict:               # a key held twice: which one would count?
        found = dict(pairs)
        if len(found) < len(pairs):
            twice = next(key for key, count in collections.Counter(k for k, _ in pairs).items()
                         if count > 1)
            raise ToolError(f"key {_shorten(twice)} appears twice in one object")
        return found
    shown = _printable(path)
    checked = _CheckedReader(raw, shown)
    checked.start(binary=False)
    chunks, size = [], 0
    while chunk := checked.read(1 << 16):
        size += len(chunk)
        if size > MAX_LEDGER_BYTES:
            raise ToolError(f"the ledger {shown} is larger than 1 GiB, the most the tool reads")
        chunks.append(chunk)
    data = b"".join(chunks)
    if data and not data.endswith(b"\n"):
        line = data.count(b"\n") + 1
        raise ToolError(f"the ledger {shown} line {line} is truncated (no line end); it is left "
                        "as it is: repair or move it, the tool never rewrites a ledger")
    entries = []
    for number, raw in enumerate(data.split(b"\n")[:-1] if data else [], start=1):
        try:
            record = json.loads(raw.decode("utf-8"), parse_constant=no_constants,
                                object_pairs_hook=unique_keys)
        except ToolError as err:
            raise ToolError(f"the ledger {shown} line {number}: {err}; it is left as it "
                            "is") from None
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ToolError(f"the ledger {shown} line {number} is not JSON; it is left as it "
                            "is") from None
        entries.append(_ledger_entry(record, number, shown))
    return entries


def read_ledger(path: str) -> list:
    """The ledger's entries ([] when there is no ledger yet); ToolError naming the line and
    the field for anything that is not one, for a folder, a device or a pipe."""
    shown = _printable(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):     # before open: a pipe would block
            raise ToolError(f"the ledger {shown} is not a regular file (a folder, device or "
                            "pipe)")
        handle = open(path, "rb")
    except FileNotFoundError:
        return []
    except OSError as err:
        raise ToolError(f"cannot read the ledger {shown}: {err.strerror}") from None
    with handle:
        return _parse_ledger(handle, path)


class _PendingAppend:
    """The append of a run to its ledger, made by calling it; ``release()`` gives the lock up
    without appending (the report could not be printed).  Made, it locks the ledger's folder
    and, when it exists, the file itself, exclusively from counting to appending, so two runs
    never both say "comparison 2 of 2", whatever hard link or folder they reach it by; the
    folder first, so a run that fails leaves no new ledger."""

    def __init__(self, path: str, lines):
        import fcntl
        fds, real = [], os.path.realpath(path)            # a link's target
        try:
            for target in (os.path.dirname(real), real):
                if target == real and not os.path.exists(real):
                    break
                fds.append(os.open(target, os.O_RDONLY))
                fcntl.flock(fds[-1], fcntl.LOCK_EX)
        except OSError as err:
            for fd in fds:
                os.close(fd)
            raise ToolError(f"cannot append to the ledger {_printable(path)}: {err.strerror}") \
                from None
        self.locks, self.path, self.lines = tuple(fds), path, lines

    def __call__(self) -> None:
        try:
            self._append()
        finally:
            self.release()

    def _append(self) -> None:
        """Append the lines whole under an exclusive lock on the file, all or nothing: on any
        failure the file is cut back to its old length; a ledger no longer whole is refused."""
        import fcntl
        shown = _printable(self.path)
        mode = 0o666 & ~_umask()
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, mode)
        except OSError as err:
            raise ToolError(f"cannot open the ledger {shown}: {err.strerror}") from None
        try:
            if len(self.locks) < 2:          # (a second lock on the file would wait forever)
                fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as raw:
                _parse_ledger(raw, self.path)
            size = os.fstat(fd).st_size
            payload = "".join(self.lines).encode("utf-8")
            try:
                done = 0
                while done < len(payload):
                    done += os.write(fd, payload[done:])
                os.fsync(fd)
            except BaseException as err:
                os.ftruncate(fd, size)
                os.fsync(fd)
                if isinstance(err, OSError):
                    raise ToolError(f"cannot append to the ledger {shown}: {err.strerror}; it "
                                    "is as it was") from None
                raise
        except OSError as err:
            raise ToolError(f"cannot append to the ledger {shown}: {err.strerror}") from None
        finally:
            os.close(fd)                         # closing releases the lock

    def release(self) -> None:
        for fd in self.locks:
            os.close(fd)                      # closing releases the lock
        self.locks = ()


def _comparison_entries(table: Table, comparisons) -> list:
    """The ledger's record of each comparison (what it says; the time and set come later)."""
    return [{"baseline": c.baseline, "candidate": c.candidate, "n": table.n,
             "gap": float(c.analysis.gap), "interval": c.decision.interval.to_json(),
             "level": float(c.decision.level), "p": float(c.analysis.p),
             "verdict": c.decision.word, "percent": c.analysis.percent} for c in comparisons]


def _ledger_append(path: str, digest: str, entries, when: str | None = None) -> tuple:
    """``(note, append)``: where this run's comparisons (*entries*, on the test set *digest*)
    stand on their test set, counted under the ledger's lock, and the _PendingAppend that
    releases it.  The time is now, in UTC to the second, or ``SOURCE_DATE_EPOCH`` when set
    (the reproducible-builds convention: a recorded example replays exactly)."""
    if not when:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
        moment = int(epoch) if epoch.isdigit() and len(epoch) <= 12 else None
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
    lines = []
    for entry in entries:           # a line each: json refuses NaN and infinities here
        record = {"tool": _LEDGER_TOOL, "ledger_version": _LEDGER_VERSION, "test_set": digest,
                  "time": when, "version": __version__, **entry}
        try:
            lines.append(json.dumps(record, sort_keys=True, allow_nan=False) + "\n")
        except ValueError:
            raise ToolError("a comparison with a non-finite number cannot go in the ledger") \
                from None
    append = _PendingAppend(path, lines)
    try:
        before = [e.p for e in read_ledger(path) if e.test_set == digest]
    except BaseException:
        append.release()
        raise
    ours = [entry["p"] for entry in entries]                  # Holm over the test set
    note = LedgerNote(path, digest, len(before) + 1, len(before) + len(ours),
                      tuple(holm(before + ours)[len(before):]))
    return note, append


def append_ledger(path: str, table: Table, comparisons, when: str | None = None) -> LedgerNote:
    """Append this run's comparisons to the ledger, all or nothing and under a lock, and say
    where they stand on their test set."""
    note, append = _ledger_append(path, _test_set_digest(table.ids, table.columns[0]),
                                  _comparison_entries(table, comparisons), when)
    append()
    return note


@dataclass(frozen=True)
class LedgerSummary:
    """Every test set a ledger holds: its comparisons and their Holm-adjusted p."""

    path: str
    sets: tuple                 # (digest, entries, holm p's)
    alpha: Fraction


def summarize_ledger(path: str, confidence) -> LedgerSummary:
    if not os.path.lexists(path):
        raise ToolError(f"no ledger at {_printable(path)}")
    entries = read_ledger(path)
    if not entries:
        raise ToolError(f"the ledger {_printable(path)} is empty: it holds no comparisons")
    groups = {}
    for entry in entries:
        groups.setdefault(entry.test_set, []).append(entry)
    sets = tuple((digest, tuple(group), tuple(holm([e.p for e in group])))
                 for digest, group in groups.items())
    return LedgerSummary(path, sets, 1 - Fraction(confidence))


# === Simulation studies: coverage, calibration and power ===
#
# A coverage study replays a simulation whose true gap is known and counts how often each
# interval rule covers it and excludes 0, every rule on the same replays.  Calibration is the
# same study on the user's own 2x2 table.  Each replay draws its items, then its resamples,
# from one stream; the planners are exact sums and draw nothing.

@dataclass(frozen=True)
class Coverage:
    """How often an interval covers the true gap, over all simulation replays (where BCa is
    undefined the percentile interval stands in, as in a comparison) -- or, with ``exact``,
    the probabilities themselves, summed over every outcome (no replays)."""

    replays: int
    covers: int | float
    excludes_zero: int | float
    width_sum: Fraction = Fraction(0)     # sum of the intervals' widths
    undefined: int = 0                    # replays where BCa was undefined (fell back)
    item_level: Coverage | None = None    # clustered replays: the interval ignoring clusters
    rule: str = "percentile"
    others: tuple = ()                    # (method, Coverage) for the other rules
    gate_passes: int | None = None        # replays a release gate passed (with --gate)
    margin: Fraction | None = None        # that gate's margin
    exact: bool = False                   # covers and excludes_zero are probabilities

    @property
    def covers_rate(self):
        return self.covers if self.exact else Fraction(self.covers, max(1, self.replays))

    @property
    def excludes_zero_rate(self):
        return self.excludes_zero if self.exact else Fraction(self.excludes_zero,
                                                              max(1, self.replays))

    @property
    def mean_half_width(self) -> Fraction:
        return self.width_sum / (2 * max(1, self.replays))

    def standard_error(self, rate) -> float:
        """Monte Carlo standard error of one of these rates, ``sqrt(p(1-p)/K)`` (0: exact)."""
        return 0.0 if self.exact else math.sqrt(float(rate * (1 - rate)) / max(1, self.replays))

    def of(self, rule: str) -> Coverage:
        """The study of another rule, measured on the same replays."""
        return self if rule == self.rule else dict(self.others)[rule]

    @property
    def rules(self) -> tuple:
        return (self.rule,) + tuple(m for m, _ in self.others)

    def to_json(self) -> dict:
        body = {"replays": self.replays, "interval": self.rule,
                "covers": float(self.covers_rate),
                "covers_se": self.standard_error(self.covers_rate),
                "excludes_zero": float(self.excludes_zero_rate),
                "excludes_zero_se": self.standard_error(self.excludes_zero_rate),
                "mean_half_width": None if self.exact else float(self.mean_half_width),
                "undefined": self.undefined, "exact": self.exact}
        if self.item_level is not None:
            body["item_level"] = self.item_level.to_json()
        if self.others:
            body["others"] = {rule: {k: v for k, v in cov.to_json().items()
                                       if k not in ("others", "interval")}
                              for rule, cov in self.others}
        if self.gate_passes is not None:
            rate = Fraction(self.gate_passes, max(1, self.replays))
            body["gate"] = {"margin": float(self.margin), "passes": float(rate),
                            "passes_se": self.standard_error(rate)}
        return body


class _Study:
    """Per rule, over the same replays: [covers, excludes 0 on the side of the true gap (either
    side when it is 0), width, undefined]."""

    def __init__(self, true_gap: Fraction, rules):
        self.true_gap, self.rules = true_gap, tuple(rules)
        self.counts = {rule: [0, 0, 0, 0] for rule in self.rules}

    def add(self, intervals: dict) -> None:
        for rule, count in self.counts.items():
            interval = intervals[rule]
            if interval is None or isinstance(interval, _FellBack):
                count[3] += 1
                if interval is None:
                    continue
            gap = self.true_gap
            count[0] += gap in interval
            count[1] += interval.lo > 0 if gap > 0 else interval.hi < 0 if gap < 0 else \
                interval.excludes_zero()
            count[2] += interval.hi - interval.lo

    def result(self, replays: int, item_level=None) -> Coverage:
        made = {rule: Coverage(replays, covers, hits, Fraction(width), undefined, rule=rule)
                for rule, (covers, hits, width, undefined) in self.counts.items()}
        first, *rest = self.rules
        return dataclasses.replace(made[first], item_level=item_level,
                                   others=tuple((m, made[m]) for m in rest))


def _study_rules(chosen: str, plain_binary: bool = True) -> tuple:
    """The rules a study measures: the chosen one first, then the others that apply."""
    usable = INTERVALS if plain_binary else tuple(m for m in INTERVALS if m != "score")
    return (chosen,) + tuple(m for m in usable if m != chosen)


def _table_intervals(rng, table: Cells, resamples: int, confidence, rules,
                     width: float | None = None) -> dict:
    """Every rule's paired interval for one 2x2 table: resampled (counts engine) or, with
    *width*, exact (B = infinity, the cdf to mean +- width sd); score is Newcombe's.

    >>> got = _table_intervals(None, Cells(289, 67, 85, 59), 0, CONFIDENCE, ("percentile",), 9)
    >>> print(got["percentile"])
    [-1.2, +8.4] pts
    """
    dist = _Lattice.of(*_paired_gap_cdf(table, width), table.n) if width else \
        paired_distribution(rng, table, resamples, "counts")
    return _gap_intervals(dist, Fraction(table.b - table.a, table.n), confidence, rules,
                         groups=table.groups(), cells=table)


def _scores_intervals(rng, data: Scores, resamples: int, confidence, rules) -> dict:
    """Every rule's paired interval for one simulated set of items (stream engine)."""
    units, dist = data.units, paired_distribution(rng, data, resamples)
    return _gap_intervals(dist, data.mean_b - data.mean_a, confidence, rules,
                         groups=units.groups() if "bca" in rules else None, scale=data.scale,
                         cells=data.cells() if units.simple else None)


def coverage(rng: random.Random, copula: Copula, n_items: int, settings: Settings | None = None,
             *, replays: int, progress=None, **options) -> Coverage:
    """Replay simulate-then-paired-CI *replays* times on one generator; *settings* (or its
    fields as keywords) as for analyze(), and a release gate's margin.

    The true gap is ``acc_b - acc_a`` exactly; an interval covers it when ``lo <= gap <= hi``,
    and "excludes zero" counts intervals that exclude 0 on the true gap's side (power when the
    gap is not 0, type-I error when it is).  Every rule is measured on each replay's resamples
    (the chosen one reported, the others in ``others``); only the resampling draws.  The
    ``counts`` engine draws each replay's cell counts as one multinomial.  With clusters each
    replay computes the interval that ignores them, then the cluster bootstrap's; with runs,
    the single-run interval (run 1 of each system: one seed per system), then the two-level one.
    """
    settings = _settings_of(settings, options)
    confidence, interval = settings.confidence, settings.interval
    resamples, margin = settings.resamples or RESAMPLES, settings.margin
    engine = _coverage_engine(settings.engine, copula, n_items, replays, resamples)
    rules = ("two-level",) if copula.runs > 1 else _study_rules(interval, not copula.clustered)
    study = _Study(copula.true_gap, rules)
    items = _Study(copula.true_gap, ("percentile",) if copula.runs > 1 else rules[:1])

    def one_replay() -> tuple:
        """Every rule's intervals, the item-level intervals (the ones that ignore the clusters,
        or run 1's, drawn first; else None), and the p-value the verdict reads as a function
        (None: no 2x2 table to gate on)."""
        if copula.runs > 1:
            data = copula.simulate(rng, n_items)
            first = Scores(data.runs_a[0][1], data.runs_b[0][1])
            single = {"percentile": paired_distribution(rng, first, resamples).interval(
                confidence)}
            runs = analyze_runs(rng, data.runs_a, data.runs_b, 1, confidence, resamples)
            return {"two-level": runs.interval}, single, lambda: runs.test.p
        if engine == "counts":
            table = copula.simulate_cells(rng, n_items)
            intervals = _table_intervals(rng, table, resamples, confidence, rules)
        else:
            data = copula.simulate(rng, n_items)
            if copula.clustered:
                single = _scores_intervals(rng, Scores(data.a, data.b), resamples, confidence,
                                           rules[:1])
                return _scores_intervals(rng, data, resamples, confidence, rules), single, None
            intervals = _scores_intervals(rng, data, resamples, confidence, rules)
            table = data.cells()
        return intervals, None, lambda: mcnemar_exact(table.a_only, table.b_only).p
    passes = 0
    for replay in range(replays):
        intervals, single, p_value = one_replay()
        study.add(intervals)
        if single is not None:
            items.add(single)
        chosen = intervals[rules[0]]
        if margin is not None and p_value is not None and chosen is not None:
            word = _verdict_word(chosen, p_value(), 1 - confidence)
            passes += _gate_passes(chosen.lo, word, Fraction(margin))
        if progress:
            progress(replay + 1, replays)
    nested = copula.runs > 1 or copula.clustered
    result = study.result(replays, items.result(replays) if nested else None)
    return result if margin is None else dataclasses.replace(result, gate_passes=passes,
                                                             margin=Fraction(margin))


_CALIBRATION_EXACT_SD = 800     # beyond this sd of D, calibration resamples each table (counts)
_CALIBRATION_LARGE_N = 100_000  # above, calibration draws at most CALIBRATION_LARGE_REPLAYS
_CALIBRATION_LARGE_REPLAYS = 300  # tables each way (s.e. about 1.3 pts at 95%)


def _shortfalls(cov: Coverage, nominal, null: Coverage | None = None) -> tuple:
    """Where the interval misses by more than the slack: ``("covers", rate)`` below nominal,
    ``("false", rate)`` false positives (with a null study) above 1 - nominal.  The slack is
    2 Monte Carlo standard errors, or for an exact study a tenth of 1 - nominal (exact
    coverage of a discrete statistic moves with n).  None: the interval holds its level."""
    def slack(study: Coverage, rate) -> float:
        return float((1 - Fraction(nominal)) / 10) if study.exact else \
            2 * max(study.standard_error(rate), 1e-12)

    out = []
    if float(cov.covers_rate) < float(nominal) - slack(cov, cov.covers_rate):
        out.append(("covers", cov.covers_rate))
    if null is not None:
        false = null.excludes_zero_rate
        if float(false) > float(1 - Fraction(nominal)) + slack(null, false):
            out.append(("false", false))
    return tuple(out)


def _recommended(cov: Coverage, nominal: Fraction, null: Coverage | None = None):
    """When the chosen rule does not hold, the holding one with coverage nearest nominal."""
    if not _shortfalls(cov, nominal, null):
        return None
    good = [m for m in cov.rules[1:]
            if not _shortfalls(cov.of(m), nominal, null.of(m) if null is not None else None)]
    return min(good, key=lambda m: abs(cov.of(m).covers_rate - nominal), default=None)


@dataclass(frozen=True)
class Calibration:
    """The chosen interval on the user's own 2x2 table at its n: replays covering the
    observed gap, and replays with the discordant items split evenly (false positives)."""

    n: int
    replays: int
    resamples: int                 # B of each table's bootstrap; 0: exact (B = infinity)
    nominal: Fraction
    coverage: Coverage
    null: Coverage

    @property
    def rule(self) -> str:
        return self.coverage.rule

    @property
    def holds(self) -> bool:
        return not _shortfalls(self.coverage, self.nominal, self.null)

    @property
    def recommended(self):
        return _recommended(self.coverage, self.nominal, self.null)

    def to_json(self) -> dict:
        return {"replays": self.replays, "resamples": self.resamples,
                "interval": self.rule, "holds": self.holds,
                "recommended": self.recommended,
                "coverage": self.coverage.to_json(), "null": self.null.to_json()}


def _calibrates_exactly(probs, n: int) -> bool:
    """Take each table's bootstrap exactly (about 17 sd wide, a Python step per value) while
    cheaper than resampling: the discordant count's sd up to _CALIBRATION_EXACT_SD."""
    return n * (probs[1] + probs[2]) <= _CALIBRATION_EXACT_SD ** 2


def _interval_study(rng, probs, n: int, true_gap: Fraction, rules, confidence, replays: int,
                   resamples: int, progress=None) -> Coverage:
    """Every rule measured on *replays* 2x2 tables of n items drawn from *probs*, each
    table's bootstrap exact while ``_calibrates_exactly``, else resampled (counts)."""
    study = _Study(true_gap, rules)
    exact = _calibrates_exactly(probs, n)
    for replay in range(replays):
        table = Cells(*multinomial_variate(rng, n, probs))
        study.add(_table_intervals(rng, table, resamples, confidence, rules, 7 if exact else None))
        if progress is not None and (replay + 1) % 64 == 0:
            progress(replay + 1, replays)
    return study.result(replays)


def calibrate_cells(rng: random.Random, cells: Cells, confidence, rule: str, resamples: int,
                    replays: int, progress=None) -> Calibration:
    """Every paired rule on *replays* tables drawn from the observed cells (coverage of the
    observed gap), then on as many with the discordant share split evenly (no gap)."""
    n, confidence = cells.n, Fraction(confidence)
    truth = tuple(count / n for count in cells.as_tuple())
    half = (cells.a_only + cells.b_only) / (2 * n)
    settings = ((truth, cells.b_only - cells.a_only),
                ((cells.both / n, half, half, cells.neither / n), 0))
    rules, exact = _study_rules(rule), 0 if _calibrates_exactly(truth, n) else resamples

    def percentile_study(probs, gap: int) -> Coverage:
        """The exact percentile interval's coverage of gap/n and rate of excluding 0 on the
        gap's side, as probabilities summed over every 2x2 table, no replays."""
        q = float(1 - confidence) / 2
        a, c = probs[1], probs[2]
        above = _upper_share(a, c, n, q, gap, exact=False)       # lower end above gap/n
        below = _upper_share(c, a, n, q, -gap, exact=False)      # upper end below gap/n
        detects = above + below if gap == 0 else _upper_share(
            *((a, c) if gap > 0 else (c, a)), n, q, 0, exact=False)
        return Coverage(0, max(0.0, 1 - above - below), detects, exact=True)
    if rule == "percentile":              # summed exactly, no replays
        at_gap, no_gap = (percentile_study(probs, g) for probs, g in settings)
        if not _shortfalls(at_gap, confidence, no_gap) or not replays:
            return Calibration(n, 0, 0, confidence, at_gap, no_gap)
        rules = rules[1:]                 # it does not hold: measure the others to name one
    steps = _steps(progress, [replays, replays])
    studies = [_interval_study(rng, probs, n, Fraction(g, n), rules, confidence, replays,
                               resamples, next(steps)) for probs, g in settings]
    if rule == "percentile":
        studies = [dataclasses.replace(study, others=tuple((m, other.of(m)) for m in rules))
                   for study, other in zip((at_gap, no_gap), studies)]
    return Calibration(n, replays, exact, confidence, *studies)


@dataclass(frozen=True)
class _CalibrationRow:
    """One setting of the interval table: every rule at the true gap and with none."""

    acc_a: Fraction
    acc_b: Fraction
    n: int
    coverage: Coverage
    null: Coverage

    def recommended(self, nominal) -> str | None:
        """The narrowest rule that holds its level here (None: none does)."""
        good = [m for m in self.coverage.rules
                if not _shortfalls(self.coverage.of(m), nominal, self.null.of(m))]
        return min(good, key=lambda m: self.coverage.of(m).mean_half_width, default=None)


@dataclass(frozen=True)
class CalibrationTable:
    """Every paired interval's coverage and false positives over sizes and accuracy pairs
    (the README's table comes from here)."""

    corr: Fraction
    confidence: Fraction
    replays: int
    rows: tuple


def calibration_table(rng: random.Random, pairs, grid, corr, confidence, replays: int,
                      progress=None) -> CalibrationTable:
    """Per accuracy pair and n: *replays* tables from the copula (coverage of the true gap)
    and as many with both at their mean (false positives), every rule on the same tables."""
    confidence, rows = Fraction(confidence), []
    steps = _steps(progress, [2 * replays] * (len(pairs) * len(grid)))
    for acc_a, acc_b in pairs:
        mean = (Fraction(acc_a) + Fraction(acc_b)) / 2
        truth, null = Copula(corr, acc_a, acc_b).cells, Copula(corr, mean, mean).cells
        for n in grid:
            cov = _interval_study(rng, truth.as_tuple(), n, Fraction(acc_b) - Fraction(acc_a),
                                 INTERVALS, confidence, replays, RESAMPLES, next(steps))
            none = _interval_study(rng, null.as_tuple(), n, Fraction(0), INTERVALS, confidence,
                                  replays, RESAMPLES)
            rows.append(_CalibrationRow(Fraction(acc_a), Fraction(acc_b), n, cov, none))
    return CalibrationTable(Fraction(corr), confidence, replays, tuple(rows))


# --- Planning: power and items needed, analytic and exact ---

_EXACT_POWER_LIMIT = 20_000      # largest n whose exact power the planner computes
_TABLE_SADDLEPOINT_SD = 5        # calibration: beyond this sd of D, a table's cdf by saddlepoint
_SHARE_ROWS = 1024               # calibration: A-only counts summed one by one, at most
_SHARE_SLACK = 1e-9              # widens a share's upper bound: far above its rounding error
_RUNS_PLAN_ITEMS = 20_000        # simulated items behind a RunsPlan's variance parts


@functools.lru_cache(maxsize=4096)
def _table_gap_cdf(n: int, x: int, y: int) -> tuple:
    """``(lo, cdf)`` of D* for x A-only and y B-only items among n (studies revisit tables)."""
    return _paired_gap_cdf(Cells(0, x, y, n - x - y))


def _table_saddlepoint_cdf(n: int, x: int, y: int, t: int) -> float:
    """P(D* <= t) by the saddlepoint approximation with Daniels' continuity correction: D*
    sums n draws of -1, 0, +1 (shares a = x/n, b, c = y/n), its cumulant generating function
    ``n log(a e^-s + b + c e^s)``, so the saddle point solves a quadratic in e^s."""
    a, c = x / n, y / n
    b = 1 - a - c
    target = t + 0.5                                  # P(D <= t) = P(D < t + 1/2)
    if target <= -n:
        return 0.0
    if target >= n:
        return 1.0
    u = (target * b + math.sqrt(target * target * b * b + 4 * (n - target) * c * (n + target)
                                * a)) / (2 * (n - target) * c)
    s = math.log(u)
    mgf = a / u + b + c * u
    k, k2 = n * math.log(mgf), n * ((c * u + a / u) * mgf - (c * u - a / u) ** 2) / mgf ** 2
    if abs(s) < 1e-7:
        return 0.5
    w = math.copysign(math.sqrt(max(0.0, 2 * (s * target - k))), s)
    v = 2 * math.sinh(s / 2) * math.sqrt(k2)
    normal = NormalDist()
    return min(1.0, max(0.0, normal.cdf(w) + normal.pdf(w) * (1 / w - 1 / v)))


def _first_true(predicate, start: int | None = None, low: int = 2, high: int | None = None,
                gallop: bool = True) -> int:
    """The smallest n in low..high with predicate(n), false then true (high + 1: none).
    From *start* it gallops (steps 1, 2, 4, ...) then bisects the last step, else bisects
    low..high; ``gallop=False`` walks one n at a time, for a predicate monotone only near
    its edge (the exact power at a few items)."""
    no, yes = low - 1, None if high is None else high + 1     # predicate false / true there
    if start is not None:
        n = max(low, start if yes is None else min(start, yes))
        step, grow = 1, 2 if gallop else 1
        if n != yes and predicate(n):
            yes = n
            while yes > low:
                probe = max(low, yes - step)
                if not predicate(probe):
                    no = probe
                    break
                yes, step = probe, grow * step
        else:
            no = n
            while high is None or no < high:
                probe = no + step if high is None else min(high, no + step)
                if predicate(probe):
                    yes = probe
                    break
                no, step = probe, grow * step
    while yes - no > 1:
        middle = (no + yes) // 2
        no, yes = (no, middle) if predicate(middle) else (middle, yes)
    return yes


class _BinomialTail:
    """P(Binomial(m, r) >= k) along (m, k) moving a step or two at a time, by the recurrences
    ``P(Bin(m-1) >= k) = P(Bin(m) >= k) - r P(Bin(m-1) = k-1)`` and
    ``P(Bin(m) >= k+1) = P(Bin(m) >= k) - P(Bin(m) = k)``."""

    def __init__(self, r: float):
        self.r, self.m, self.k, self.tail = r, None, None, None

    def __call__(self, m: int, k: int) -> float:
        r = self.r
        if k <= 0:
            return 1.0
        if k > m:
            return 0.0
        if self.m is None or not 0 <= self.m - m <= 16 or abs(self.k - k) > 32:
            self.m, self.k, self.tail = m, k, 1.0 - _binom_cdf(k - 1, m, r)
            return self.tail
        tail, here, at = self.tail, self.m, self.k
        while here > m:
            tail -= r * binom_pmf(at - 1, here - 1, r)
            here -= 1
        while at < k:
            tail -= binom_pmf(at, here, r)
            at += 1
        while at > k:
            at -= 1
            tail += binom_pmf(at, here, r)
        self.m, self.k, self.tail = here, at, min(1.0, max(0.0, tail))
        return self.tail


def _share_rows(n: int, p_a: float) -> tuple:
    """``(first, last, block)``: the A-only counts a sum visits (mean +- 9 sd + 10) and, past
    _SHARE_ROWS of them, how many counts one evaluation stands for."""
    spread = 9 * math.sqrt(n * p_a * (1 - p_a)) + 10
    first, last = max(0, math.floor(n * p_a - spread)), min(n, math.ceil(n * p_a + spread))
    return first, last, max(1, math.ceil((last - first + 1) / _SHARE_ROWS))


def _upper_share(p_a: float, p_b: float, n: int, q: float, t: int = 0,
                 exact: bool = True, verdict: bool = False) -> float:
    """P over tables of n items that the bootstrap puts at most q of its mass at D* <= t:
    the exact percentile interval's lower end is above t/n (power for t = 0).  Per A-only
    count x, the B-only counts y from the smallest y*(x) that does (y*(x) rises with x).
    ``exact=False``: saddlepoint cdfs, and past _SHARE_ROWS counts x a block weighed at its
    middle (the midpoint rule).  ``verdict``: McNemar's p below 2q too (the verdict "better";
    p falls as y rises, so both together still start at one y*(x))."""
    share = 0.0
    for share, _ in _partial_shares(p_a, p_b, n, q, t, exact, verdict):
        pass
    return share


def _partial_shares(p_a: float, p_b: float, n: int, q: float, t: int = 0,
                    exact: bool = True, verdict: bool = False):
    """``_upper_share``'s sum row by row: ``(sum so far, weight of the rows to come)``, so
    the whole sum lies between the sum and the sum plus the weight."""
    def table_cdf(x: int, y: int) -> float:
        """P*(D* <= t) for a table with x A-only and y B-only items: exactly, or with
        ``exact=False`` by the saddlepoint when D's sd is above _TABLE_SADDLEPOINT_SD."""
        if not exact and min(x, y) > 0 and x + y < n and \
                n * (x / n + y / n - ((y - x) / n) ** 2) > _TABLE_SADDLEPOINT_SD ** 2:
            return _table_saddlepoint_cdf(n, x, y, t)
        lo, cdf = _table_gap_cdf(n, x, y)
        index = t - lo
        return 0.0 if index < 0 else 1.0 if index >= len(cdf) else cdf[index]

    if p_b <= 0:
        yield 0.0, 0.0
        return
    conditional = min(1.0, p_b / (1 - p_a)) if p_a < 1 else 0.0
    first, last, block = _share_rows(n, p_a)
    block = 1 if exact else block
    ratio = p_a / (1 - p_a) if p_a < 1 else 0.0
    rows = []                                         # (the count weighed, the weight)
    for start in range(first, last + 1, block):
        counts = range(start, min(start + block, last + 1))
        term = weight = binom_pmf(start, n, p_a)
        for x in counts[:-1]:                         # the block's other probabilities
            term *= (n - x) / (x + 1) * ratio
            weight += term
        rows.append((counts[len(counts) // 2], weight))
    later = [*itertools.accumulate(weight for _, weight in reversed(rows)), 0.0][::-1]
    share, threshold, tail = 0.0, None, _BinomialTail(conditional)
    for (x, weight), rest_weight in zip(rows, later[1:]):
        rest = n - x
        threshold = _first_true(lambda y: table_cdf(x, y) <= q and (
            not verdict or y > x and mcnemar_exact(x, y).p < 2 * q), threshold, 0, rest)
        if threshold <= rest:
            share += weight * tail(rest, threshold)
        yield share, rest_weight


class _ExactPowerBounds:
    """One exact power, summed only as far as needed: the partial sum is a lower bound, with
    the weight to come and _SHARE_SLACK added an upper one (a gap's: one side)."""

    def __init__(self, probs: tuple, n: int, confidence: Fraction):
        self._sums = _partial_shares(*sorted(probs[1:3]), n, float(1 - confidence) / 2)
        self.lower = self.upper = None

    def settle(self, answer):
        """Sum until ``answer(lower, upper)`` is not None (once whole, both are the power)."""
        while self.lower is None or (result := answer(self.lower, self.upper)) is None:
            try:
                share, rest = next(self._sums)
                self.lower, self.upper = share, share + rest + _SHARE_SLACK
            except StopIteration:
                self.upper = self.lower
        return result


@functools.lru_cache(maxsize=512)
def exact_power(cells: Cells, n: int, confidence) -> float:
    """P(the exact percentile interval of the paired gap excludes 0 on the true side), over
    every table of n items drawn from the cell probabilities; the false-positive rate
    (either side) when the true gap is 0."""
    a, b, q = cells.a_only, cells.b_only, float(1 - Fraction(confidence)) / 2
    return sum(_upper_share(p, r, n, q) for p, r in ((a, b), (b, a)) if r >= p)


@dataclass(frozen=True)
class PowerPlan:
    """Power of the paired (and unpaired) interval from the cell probabilities.

    Analytic: per-item differences in {-1, 0, +1} have ``sd**2 = P(B only) + P(A only) -
    gap**2`` (unpaired: ``a(1-a) + b(1-b)``), so the interval ``gap +- z*sd/sqrt(n)`` excludes
    0 on the true side with probability ``Phi(sqrt(n)*|gap|/sd - z)``.  Exact
    (``exact_power``): summed over every 2x2 table, with no normal approximation.

    >>> plan = PowerPlan(Copula(CORR, ACC_A, ACC_B).cells, CONFIDENCE)
    >>> round(plan.power(500), 4), round(plan.exact_power(500), 4)
    (0.3697, 0.3567)
    >>> plan.items_needed(0.8), plan.items_needed(0.8, paired=False), plan.exact_items_needed(0.8)
    (1482, 1884, 1507)
    """

    cells: Cells
    confidence: Fraction

    @property
    def gap(self) -> float:
        return self.cells.b - self.cells.a

    def sd(self, paired: bool = True) -> float:
        c = self.cells
        return math.sqrt(max(0.0, c.a_only + c.b_only - self.gap ** 2) if paired else
                         c.a * (1 - c.a) + c.b * (1 - c.b))

    def power(self, n: int, paired: bool = True) -> float:
        """P(the interval excludes 0 on the true gap's side); 1 - confidence when the gap is 0."""
        z, sd = _z_value(self.confidence), self.sd(paired)
        if self.gap == 0 or sd == 0:
            return float(1 - self.confidence) if self.gap == 0 else 1.0
        return NormalDist().cdf(math.sqrt(n) * abs(self.gap) / sd - z)

    def items_needed(self, target, paired: bool = True):
        """Smallest n (>= 2) whose analytic power reaches *target*; None when the gap is 0."""
        if self.gap == 0:
            return None
        z, sd = _z_value(self.confidence), self.sd(paired)
        n = max(2, math.ceil(((z + NormalDist().inv_cdf(float(target))) * sd / self.gap) ** 2))
        if n > 10 ** 9:        # a float's power cannot tell n from n + 1 there: the formula's
            return n
        return _first_true(lambda m: self.power(m, paired) >= target, n - 1, gallop=False)

    def half_width(self, n: int, paired: bool = True) -> float:
        """The interval's expected half-width, ``z*sd/sqrt(n)``."""
        return _z_value(self.confidence) * self.sd(paired) / math.sqrt(n)

    def exact_power(self, n: int) -> float | None:
        """The exact power at n (None above _EXACT_POWER_LIMIT items: seconds per n)."""
        return None if n > _EXACT_POWER_LIMIT else exact_power(self.cells, n, self.confidence)

    def exact_items_needed(self, target):
        """The first n whose exact power reaches *target* (smooth and rising in n, so every
        larger n does too; the tests check it on a grid); None for no gap or above
        _EXACT_POWER_LIMIT.  Newton steps on the analytic slope, then one n at a time, each
        exact power summed only until the step or side is settled (``_ExactPowerBounds``)."""
        n = self.items_needed(target)
        if n is None or n > _EXACT_POWER_LIMIT:
            return None
        probs, confidence = self.cells.as_tuple(), Fraction(self.confidence)
        exact = functools.cache(lambda m: _ExactPowerBounds(probs, m, confidence))

        def newton(lower: float, upper: float):           # the step, if both ends agree
            step = round((float(target) - upper) / slope)
            return step if step == round((float(target) - lower) / slope) else None

        def reaches(lower: float, upper: float):
            return True if lower >= target else False if upper < target else None

        for _ in range(6):                     # Newton steps on the analytic curve's slope
            slope = self.power(n + 1) - self.power(n)
            step = exact(n).settle(newton) if slope > 0 else 0
            if step == 0 or not 2 <= n + step <= _EXACT_POWER_LIMIT:
                break
            n += step
        n = _first_true(lambda m: exact(m).settle(reaches), n, high=_EXACT_POWER_LIMIT,
                        gallop=False)          # then to the boundary, one item at a time
        return n if n <= _EXACT_POWER_LIMIT else None


@dataclass(frozen=True)
class RunsPlan:
    """Power over items and runs (normal approximation): the gap's variance at n items and R
    runs is ``(fixed + fresh / R) / n + (runs_a + runs_b) / R``: per item, what stays fixed
    across runs and what each run draws afresh; per system, its accuracy's run variance."""

    gap: float
    confidence: Fraction
    fixed: float
    fresh: float
    runs_a: float
    runs_b: float

    def variance(self, n: int, runs: int) -> float:
        return (self.fixed + self.fresh / runs) / n + (self.runs_a + self.runs_b) / runs

    def power(self, n: int, runs: int) -> float:
        if self.gap == 0:
            return float(1 - self.confidence)
        return NormalDist().cdf(abs(self.gap) / math.sqrt(self.variance(n, runs))
                                - _z_value(self.confidence))

    def items_needed(self, runs: int, target) -> int | None:
        """Items for *target* power at these runs (None: the runs' variance alone is too large)."""
        k = _z_value(self.confidence) + NormalDist().inv_cdf(float(target))
        room = self.gap ** 2 / k ** 2 - (self.runs_a + self.runs_b) / runs
        if self.gap == 0 or room <= 0:
            return None
        return max(2, math.ceil((self.fixed + self.fresh / runs) / room))


def _accuracy_variance(run_sd: float, acc: float) -> float:
    """Var over runs of a system's expected accuracy Phi(cut + rho), rho ~ N(0, tau^2)."""
    tau = _run_shift_sd(run_sd, acc)
    if tau == 0:
        return 0.0
    normal, step, total, square = NormalDist(), 0.01, 0.0, 0.0
    cut = normal.inv_cdf(acc) * math.sqrt(1 + tau * tau)
    for i in range(-900, 901):
        weight = normal.pdf(i * step) * step
        value = normal.cdf(cut + tau * i * step)
        total += weight * value
        square += weight * value * value
    return max(0.0, square - total * total)


def runs_plan(copula: Copula, confidence, rng: random.Random) -> RunsPlan:
    """The variance parts of a setting with runs: per item from _RUNS_PLAN_ITEMS simulated
    items with one run and two; per system Var(Phi(cut + rho)), by quadrature."""
    one = dataclasses.replace(copula, runs=2, run_sd=Fraction(0))
    data = simulate_runs(rng, _RUNS_PLAN_ITEMS, one)
    first = Scores(data.runs_a[0][1], data.runs_b[0][1])
    v1, v2 = float(_diff_variance(first)), float(_diff_variance(data))
    fresh, fixed = max(0.0, 2 * (v1 - v2)), max(0.0, 2 * v2 - v1)
    parts = [_accuracy_variance(float(copula.run_sd), float(acc))
             for acc in (copula.acc_a, copula.acc_b)]
    return RunsPlan(float(copula.true_gap), Fraction(confidence), fixed, fresh, *parts)


@dataclass(frozen=True)
class _PlanSummary:
    """The plan line of a simulated run: power at its n, and the items a target needs."""

    n: int
    target: Fraction
    power: float                    # normal approximation, paired
    exact_power: float | None       # exact (B = infinity), paired
    unpaired_power: float
    n_needed: int | None
    exact_n_needed: int | None
    unpaired_n_needed: int | None
    verdict_power: float | None = None   # the verdict "better" (interval and McNemar), exact


def _plan_summary(plan: PowerPlan, n: int, target) -> _PlanSummary:
    """Everything the plan line prints, computed once."""
    verdict = None if plan.gap <= 0 or n > _EXACT_POWER_LIMIT else _upper_share(
        plan.cells.a_only, plan.cells.b_only, n, float(1 - Fraction(plan.confidence)) / 2,
        verdict=True)          # P(the verdict says "better"): the interval and McNemar's p
    return _PlanSummary(n, Fraction(target), plan.power(n), plan.exact_power(n),
                       plan.power(n, paired=False), plan.items_needed(target),
                       plan.exact_items_needed(target), plan.items_needed(target, paired=False),
                       verdict)


@dataclass(frozen=True)
class ActPlan:
    """What would settle a verdict that claims nothing (normal approximation, 80% power): the
    smallest gap detectable now, and the items (with runs: or the runs) the observed gap
    needs.  ``basis``: ``discordant`` (share), ``sd`` (of B - A) or ``runs`` (two-level)."""

    power: float
    detectable: float | None        # None: no item tells the systems apart
    basis: str
    basis_value: float
    items_needed: int | None
    runs_needed: int | None = None

    def to_json(self) -> dict:
        return {"power": self.power, "minimum_detectable_gap": self.detectable,
                "basis": self.basis, "basis_value": self.basis_value,
                "items_to_detect_observed_gap": self.items_needed,
                "runs_to_detect_observed_gap": self.runs_needed}


def act_plan(result) -> ActPlan:
    """The :class:`ActPlan` of an analysis (one record for every output format)."""
    power = Fraction("0.8")
    k = _z_value(result.confidence) + NormalDist().inv_cdf(float(power))
    runs = result.runs
    if runs is not None:
        budget = float(runs.gap) ** 2 / (k * k)
        v_runs = runs.variance_runs_a + runs.variance_runs_b
        items = runs_count = None
        if runs.gap != 0 and budget > v_runs and runs.variance_items > 0:
            items = math.ceil(runs.variance_items * result.n / (budget - v_runs))
        if runs.gap != 0 and budget > runs.variance_items and v_runs > 0:
            scale = v_runs / (budget - runs.variance_items)
            runs_count = math.ceil(scale * max(runs.a.count, runs.b.count))
        return ActPlan(float(power), k * math.sqrt(runs.variance) if runs.variance > 0 else None,
                       "runs", float(runs.variance), items, runs_count)
    # From the per-item variance of B - A; for 0/1 items ``variance = d - gap**2`` with d
    # the discordant share, so the smallest gap solves ``sqrt(n)*g = k*sqrt(d - g**2)``.
    binary = result.binary and result.design is None
    spread = result.diff_variance + result.gap ** 2 if binary else result.diff_variance
    smallest = None if spread <= 0 else k * math.sqrt(float(spread) / (
        result.n + k * k if binary else result.n))
    items = None if result.gap == 0 or result.diff_variance <= 0 else max(2, math.ceil(
        k * k * float(result.diff_variance) / float(result.gap) ** 2))
    return ActPlan(float(power), smallest, "discordant" if binary else "sd",
                   float(spread) if binary else math.sqrt(result.diff_variance), items)


@dataclass(frozen=True)
class LabelPlan:
    """Human labels a judge-corrected gap needs for a half-width, among *items* the judge
    scores: with the judge (PPI++ at its best lambda) and by people alone (None: not within
    the items); the judge and people's correlation on the gap B - A."""

    agreement: Fraction
    half_width: Fraction
    items: int
    confidence: Fraction
    with_judge: int | None
    alone: int | None
    correlation: float


def plan_labels(cells: Cells, agreement, half_width, items: int, confidence) -> LabelPlan:
    """Labels for a +-half_width judge-corrected interval on the gap of two systems whose
    people's 0/1 scores fall in *cells*, graded on every one of *items* by a judge that agrees
    with people with probability *agreement* on each system's item, its errors independent:
    then Cov(people's gap, judge's gap) = (2a - 1) Var(people's gap), and PPI++'s variance at
    n labels and items - n unlabelled is minimised over lambda."""
    a, b = cells.both + cells.a_only, cells.both + cells.b_only
    cov_ab, g = cells.both - a * b, 2 * float(agreement) - 1
    var_y = a * (1 - a) + b * (1 - b) - 2 * cov_ab
    judge_a, judge_b = (1 - float(agreement) + g * p for p in (a, b))
    var_f = judge_a * (1 - judge_a) + judge_b * (1 - judge_b) - 2 * g * g * cov_ab
    cov, z, h = g * var_y, _z_value(confidence), float(half_width)

    def narrow_enough(n: int) -> bool:
        rest = items - n
        lam = cov / ((1 + n / rest) * var_f) if var_f > 0 else 0.0
        var = lam * lam * var_f / rest + (var_y - 2 * lam * cov + lam * lam * var_f) / n
        return z * math.sqrt(max(var, 0.0)) <= h
    with_judge = _first_true(narrow_enough, low=2, high=items - 1)
    alone = math.ceil(z * z * var_y / (h * h))
    return LabelPlan(Fraction(agreement), Fraction(half_width), items, Fraction(confidence),
                     with_judge if with_judge < items else None,
                     alone if alone <= items else None,
                     cov / math.sqrt(var_y * var_f) if var_y > 0 and var_f > 0 else 0.0)


@dataclass(frozen=True)
class AccuracyPlan:
    """Items needed for one accuracy's interval to reach a half-width, three ways."""

    accuracy: Fraction
    half_width: Fraction
    confidence: Fraction
    wald: int
    wilson: int
    clopper_pearson: int


def plan_accuracy(accuracy, half_width, confidence) -> AccuracyPlan:
    """Items for a +-half_width interval on one accuracy near *accuracy*, three ways.

    Wald: ``n = z**2 p(1-p) / h**2``.  Wilson: the smallest n whose score interval is no
    wider (its width falls steadily with n).  Clopper-Pearson: the n from which on *every*
    larger n fits with round(p*n) correct, as rounding makes the exact width jump (at 0.999
    +- 0.005 it first fits at 368 items, no longer from 501, for good from 553).

    >>> plan = plan_accuracy(Fraction("0.85"), Fraction("0.015"), CONFIDENCE)
    >>> plan.wald, plan.wilson, plan.clopper_pearson
    (2177, 2177, 2241)
    """
    p, h, z = Fraction(accuracy), float(half_width), _z_value(confidence)

    def width(interval, k, n: int) -> float:         # the half-width at k of n correct
        low, high = interval(k, n, confidence)
        return (high - low) / 2

    def exact_fits(n: int) -> bool:
        return width(clopper_pearson, round(p * n), n) <= h

    def envelope_fits(n: int) -> bool:   # the exact widths at floor(p*n - 1/2), ceil(p*n + 1/2)
        low = max(0, math.floor(p * n - Fraction(1, 2)))
        high = min(n, math.ceil(p * n + Fraction(1, 2)))
        return max(width(clopper_pearson, low, n), width(clopper_pearson, high, n)) <= h

    wald = max(2, math.ceil(z * z * float(p * (1 - p)) / (h * h)))
    wilson = _first_true(lambda n: width(wilson_interval, float(p) * n, n) <= h, wald)
    # Rounding p*n can lift a larger n above h, but not once the envelope fits too, so the
    # n in between are checked one by one.
    first = _first_true(exact_fits, wilson)
    failing = [n for n in range(first, _first_true(envelope_fits, first)) if not exact_fits(n)]
    exact = failing[-1] + 1 if failing else first
    return AccuracyPlan(p, Fraction(half_width), Fraction(confidence), wald, wilson, exact)


@dataclass(frozen=True)
class _SweepRow:
    """One eval-set size of a power sweep."""

    n: int
    power: float               # analytic, paired
    unpaired_power: float      # analytic, unpaired
    half_width: float          # analytic paired half-width
    unpaired_half_width: float
    simulated: Coverage
    exact_power: float | None = None   # exact (B = infinity), paired


@dataclass(frozen=True)
class Sweep:
    """Power, coverage and widths over eval-set sizes, and the size a target power needs."""

    copula: Copula
    rows: tuple
    target_power: Fraction
    n_needed: int | None               # by the exact power when it could be computed
    unpaired_n_needed: int | None
    confirmation: Coverage | None      # the simulation run at n_needed
    analytic_n_needed: int | None = None
    exact: bool = False                # n_needed comes from the exact power


def sweep(rng: random.Random, copula: Copula, grid, settings: Settings | None = None, *,
          replays: int, target_power, progress=None, **options) -> Sweep:
    """Analytic, exact and simulated power and coverage at each n of *grid*, then the n for
    *target_power* (exact where it can be) confirmed by one more simulation at that n.
    *settings* (or its fields as keywords) as for coverage(); the engine defaults to counts."""
    settings = _settings_of(settings, {"engine": "counts", **options} if settings is None
                            else options)
    plan = PowerPlan(copula.cells, settings.confidence)
    analytic = plan.items_needed(target_power)
    exact = plan.exact_items_needed(target_power)
    n_needed = exact if exact is not None else analytic
    steps = _steps(progress, [replays] * (len(grid) + 1))
    rows = []
    for n in grid:
        simulated = coverage(rng, copula, n, settings, replays=replays, progress=next(steps))
        rows.append(_SweepRow(n, plan.power(n), plan.power(n, paired=False), plan.half_width(n),
                             plan.half_width(n, paired=False), simulated, plan.exact_power(n)))
    confirmation = None if n_needed is None else coverage(
        rng, copula, n_needed, settings, replays=replays, progress=next(steps))
    return Sweep(copula, tuple(rows), Fraction(target_power), n_needed,
                 plan.items_needed(target_power, paired=False), confirmation, analytic,
                 exact is not None)


# === Output ===
#
# Each kind of report is one document (lines and tables) drawn as text, markdown or HTML, and
# one JSON body built from its fields; SVG pictures; one table from report type to both.
# Renderers are pure: they print decisions made in Analysis and never recompute
# one, and draw nothing from the random stream.

# --- Reports: the records the renderers print ---

@dataclass(frozen=True)
class Report:
    """One comparison run: what was asked, where the data came from, what came out."""

    params: dict
    source: str                 # "simulation", or the input format: "csv", "jsonl", "runs"
    comparisons: tuple          # Comparison per candidate (one for two systems)
    coverage: Coverage | None = None
    table: Table | None = None
    plan: _PlanSummary | None = None
    runs_plan: RunsPlan | None = None
    ledger: LedgerNote | None = None
    details: bool = False       # the text report in full (diagnostics, provenance, histogram)

    @property
    def analysis(self) -> Analysis:
        return self.comparisons[0].analysis


@dataclass(frozen=True)
class _TasksReport:
    """A whole harness run: the per-task table and the pooled comparison."""

    params: dict
    table: Table
    result: TasksResult
    ledger: LedgerNote | None = None
    details: bool = False

    @property
    def pooled(self) -> Report:
        """The pooled comparison as a report of its own (the usual renderers draw it)."""
        pool, tasks = self.result.pool, self.table.tasks
        pooled = dataclasses.replace(self.table, clusters=tasks if pool == "clusters" else None,
                                     strata=tasks if pool in ("strata", "macro") else None)
        return Report(self.params, "tasks", self.result.pooled, table=pooled,
                      ledger=self.ledger, details=self.details)


# The records of a sweep, a ledger's summary, an interval table, one accuracy's plan, plan at
# one size (the power there and the items a target needs, no simulation) and a leaderboard as
# the command line reports it (with --by, each slice's scores).
_SweepReport = collections.namedtuple("_SweepReport", "params sweep")
_LedgerSummaryReport = collections.namedtuple("_LedgerSummaryReport", "params summary")
_CalibrationTableReport = collections.namedtuple("_CalibrationTableReport", "params table")
_AccuracyPlanReport = collections.namedtuple("_AccuracyPlanReport", "params plan")
_LabelPlanReport = collections.namedtuple("_LabelPlanReport", "params plan")
_PowerPlanReport = collections.namedtuple("_PowerPlanReport", "params plan summary runs_plan",
                                          defaults=(None,))
_LeaderboardReport = collections.namedtuple("_LeaderboardReport",
                                            "params table board details slices",
                                            defaults=(False, None))
# A judge-corrected comparison: its input (table: the Source), the result, the gate's margin
# (None: no gate) and whether gaps are in points.
_JudgedReport = collections.namedtuple("_JudgedReport",
                                       "params table result margin percent ledger slices",
                                       defaults=(None, None))


_MARKDOWN = str.maketrans({"|": "\\|", "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_",
                           "[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;", "&": "&amp;"})


def _md(text) -> str:
    """Text from an input made inert in markdown: no new cell, HTML as text, marks literal.

    >>> _md("a|b <i>x</i>")
    'a\\\\|b &lt;i&gt;x&lt;/i&gt;'
    """
    return _printable(str(text)).translate(_MARKDOWN)


# --- Documents: each report is a list of blocks that every format draws ---
#
# A block is a line of text (a str; two spaces in marks a detail of the line above), a
# _Grid (a table: its header, rows, the columns aligned right and the text renderer's indent)
# or a _Pre (lines kept as they are: a histogram's bars).  One function per kind of report
# builds its document; _text, _markdown and _html draw any document.

_Grid = collections.namedtuple("_Grid", "header rows right indent", defaults=(frozenset(), 2))
_Pre = collections.namedtuple("_Pre", "lines")


# --- units: accuracies and other scores in [0, 1] in points, the rest as they are ---

def _format_level(level) -> str:
    """A confidence level as a percentage: at most four significant digits, more if 100% shows.

    >>> _format_level(Fraction(59, 60)), _format_level(Fraction(999999, 1000000))
    ('98.33%', '99.9999%')
    """
    text, value = _format_decimal(Fraction(level) * 100), float(Fraction(level) * 100)
    short = text if len(text.replace(".", "")) <= 5 else next(
        f"{value:.{digits}g}" for digits in range(4, 18) if f"{value:.{digits}g}" != "100")
    return short + "%"


_INTERVAL_NAMES = {"percentile": "percentile", "basic": "basic", "bca": "BCa",
                  "score": "Newcombe score", "wilson": "Wilson",
                  "clopper-pearson": "Clopper-Pearson", "two-level": "two-level"}


def _interval_label(result: Analysis, name: str) -> str:
    """``paired bootstrap 95% CI`` (the article's words), ``... (BCa)``, or the score rule."""
    rule = result.rules[name] if result.rules else result.interval
    tail = "" if rule == "percentile" else f" ({_INTERVAL_NAMES[rule]})"
    return (f"{name} {'score' if rule == 'score' else 'bootstrap'} "
            f"{_format_level(result.confidence)} CI{tail}")


def _runs_lines(runs: RunsAnalysis, percent: bool) -> list:
    """Each system's runs, spread and overlap; the two-level interval, test, variance split."""
    unit = (lambda v: _round_fixed(Fraction(v) * 100, 1)) if percent else \
        (lambda v: _round_fixed(Fraction(v), 3))
    systems, lines = (("A", runs.a), ("B", runs.b)), []
    for name, stats in systems:
        spread = "spread unknown (one run)" if stats.sd is None else (
            f"sd {unit(stats.sd)}, range {unit(min(stats.scores))} to {unit(max(stats.scores))}")
        lines.append(f"runs: {name} ({stats.count}): {', '.join(unit(s) for s in stats.scores)}"
                     f"{' pts' if percent else ''}; mean {unit(stats.mean)}, {spread}")
    if runs.a.count > 1 and runs.b.count > 1:
        better, worse = ("B", "A") if min(runs.b.scores) > max(runs.a.scores) else ("A", "B")
        lines.append("  the two systems' run scores overlap: by the seed-spread rule the gap of "
                     "their means is not a finding on its own" if runs.overlap else
                     f"  the run scores do not overlap: every {better} run beats every "
                     f"{worse} run")
    scale = runs.scale(runs.confidence)
    lines += [f"  two-level bootstrap {_format_level(runs.confidence)} CI (items and runs): "
              f"{_format_interval(runs.interval, percent)} (the plain two-level spread "
              f"{'widened' if scale >= 1 else 'narrowed'} x{scale:.2f} for {runs.a.count} and "
              f"{runs.b.count} runs: the unbiased variance, Student's t on {runs.test.df:.1f} df)",
              f"  two-level t test: t={runs.test.t:.2f} on {runs.test.df:.1f} df, "
              f"{_p_equals(runs.test.p)}"]
    items, share_a, share_b = runs.shares
    unknown = [name for name, stats in systems if stats.count == 1]
    lines.append(f"  variance of the gap: {100 * items:.0f}% from the item sample, "
                 f"{100 * (share_a + share_b):.0f}% from runs (A {100 * share_a:.0f}%, "
                 f"B {100 * share_b:.0f}%)" + (
                     f"; {' and '.join(unknown)} had one run, whose share is unknown, not zero"
                     if unknown else ""))
    return lines


def _test_line(result: Analysis) -> str:
    if isinstance(result.test, RunsTest):
        return ("  (the paired interval above ignores the runs: it resamples items only, on "
                "each item's mean over its runs)")
    if result.mcnemar is not None:
        m = result.mcnemar
        return (f"  discordant pairs: B-only correct={m.b_only}, A-only correct={m.a_only}; "
                f"McNemar exact {_p_equals(m.p)}")
    test = result.test
    patterns = f"{test.permutations:,}" if test.permutations <= 1 << 20 else \
        f"all 2^{test.permutations.bit_length() - 1}"
    how = (f"exact over {patterns} sign patterns" if test.exact
           else "the saddlepoint approximation of Robinson 1982" if test.saddlepoint
           else f"Monte Carlo, {test.permutations:,} random sign patterns" if not test.swaps
           else f"Monte Carlo, {test.permutations:,} random swaps of the two systems' "
                "predictions")
    head = f"  paired {'sign-flip ' * (not test.swaps)}permutation test ({how}): "
    if test.swaps and test.exact:
        return head.replace(f" ({how})", "") + "p=1 (the two metrics are equal)"
    return head + (_p_equals(test.p) if test.mc_error is None else _monte_carlo_p(test))


def _monte_carlo_p(test: PermutationTest) -> str:
    """A Monte Carlo p with its error: its s.e., or the bound it is at its floor."""
    if test.at_floor:
        return (f"p<={_format_p(test.p)} (no pattern as extreme: the smallest p this many "
                "patterns can give)")
    return f"{_p_equals(test.p)} +-{_format_p(test.mc_error)} (its Monte Carlo s.e.)"


def _engine_lines(report: Report, result: Analysis) -> list:
    """Which engine drew the resamples, when it is not the article's per-item stream."""
    chosen = " (chosen by --engine auto: the stream engine would take minutes here; " \
             "--engine stream forces it)" if report.params.get("engine") == "auto" else ""
    if result.engine == "counts":
        what = "cell counts" if result.binary else "counts of each distinct value"
        return [f"note: counts engine: resamples drawn as multinomial {what} (the same "
                f"distribution as resampling items, not the article's random stream){chosen}"]
    if report.params.get("coverage_engine") == "counts":
        return [f"note: the coverage loop used the counts engine (replays drawn as multinomial "
                f"cell counts){chosen}"]
    return []


def _design_lines(design) -> list:
    if design is None:
        return []
    lines = []
    if design.clusters is not None:
        icc = "n/a" if design.icc is None else f"{design.icc:.3f}"
        effect = "n/a" if design.design_effect is None else f"{design.design_effect:.2f}"
        lines.append(f"clusters: {design.clusters:,} resampled whole (mean {design.mean_size:.1f} "
                     f"items); intra-cluster correlation of B - A {icc}; design effect {effect}; "
                     "the paired test flips signs cluster by cluster")
        if design.clusters < _MIN_CLUSTERS:
            lines.append(f"warning: only {design.clusters} clusters; a cluster bootstrap wants "
                         f"about {_MIN_CLUSTERS} or more before its interval can be trusted")
    if design.strata is not None:
        what = "clusters" if design.clusters is not None else "items"
        lines.append(f"strata: {len(design.strata)} ({', '.join(map(str, design.strata))} "
                     f"{what}), each resampled within itself, keeping its size")
    return lines


def _magnitude(value: Fraction, percent: bool, beside=None) -> str:
    """A size (>= 0) printed as a gap (with *beside*'s decimals), unsigned; 0.0 only for 0."""
    return _format_gap(value, percent, beside=beside).lstrip("+")


def _precision_lines(result: Analysis) -> list:
    """Monte Carlo error of each interval end, and advice when B is too small."""
    pct, errors = result.percent, result.errors
    if result.method != "bootstrap" or all(m in _UNRESAMPLED for m in result.rules.values()):
        return []
    parts = [f"{label} +-{_magnitude(errors[name][0], p)}/+-{_magnitude(errors[name][1], p)}"
             for name, label, p in (("a", "A", False), ("b", "B", False),
                                    ("paired", "paired", pct), ("unpaired", "unpaired", pct))]
    lines = [f"Monte Carlo error of the interval ends (B={result.resamples:,}): "
             + ", ".join(parts)]
    if (advice := _mc_advice(result)) is None:
        return lines
    if advice.kind == "sign":
        return lines + [
            f"hint: an end of the paired interval lies within its Monte Carlo error "
            f"(+-{_magnitude(advice.worst, pct)}) of 0 at B={result.resamples:,}, so the verdict "
            "reads it as touching 0; " + (
                f"about {advice.resamples:,} resamples (--resamples) would settle its sign in 99 "
                "runs of 100" if advice.resamples else
                f"more than {MAX_RESAMPLES:,} resamples would be needed to settle its sign")]
    moves = (f"hint: the gap intervals' ends move by up to +-{_magnitude(advice.worst, pct)} "
             f"from seed to seed at B={result.resamples:,}, more than the last digit printed; ")
    if advice.kind == "exact":
        return lines + [moves + "for 0/1 scores --exact gives the exact ends (B = infinity) at "
                        "no cost"]
    half = _magnitude(advice.digit / 2, pct) if advice.digit < 1 else \
        f"{float(advice.digit) / 2:.0e}"             # half the sixth significant digit
    if advice.kind == "lattice":
        hint = (f"the gap's resampled values lie {_magnitude(advice.step, pct)} apart, so an end "
                "moves by whole steps: " + (
                    f"about {advice.resamples:,} resamples (--resamples) would settle each on one "
                    "value in 99 runs of 100" if advice.resamples else "an end sits at a step's "
                    f"edge, or near enough that more than {MAX_RESAMPLES:,} resamples would not "
                    "settle it"))
    elif advice.kind == "resamples":
        hint = (f"about {advice.resamples:,} resamples (--resamples) would hold each within "
                f"+-{half} (half that digit) of its value at B = infinity in 99 runs of 100")
    else:
        hint = (f"holding them within +-{half} would take more than {MAX_RESAMPLES:,} "
                "resamples; " + ("no method without Monte Carlo error fits these scores (the "
                                 "saddlepoint approximation needs more units, none dominant)"
                                 if result.unasked else "without --resamples the tool uses a "
                                 "method with no Monte Carlo error where one applies"))
    return lines + [moves + hint]


def _exact_lines(result: Analysis) -> list:
    """The exact intervals asked for (``exact``) beside the resampled ones: the verdict's."""
    if result.exact is None:
        return []
    ex, pct = result.exact, result.percent
    return [f"exact bootstrap (B=infinity, percentile; the verdict reads it): A "
            f"{ex['a'].as_proportions()}  B {ex['b'].as_proportions()}  "
            f"paired {_format_interval(ex['paired'], pct)}  "
            f"unpaired {_format_interval(ex['unpaired'], pct)}"]


def _format_point(value, interval: Interval) -> str:
    """A system's score beside its interval (``Interval.score_places``)."""
    return _format_score(value, interval.score_places(point=value))


def _input_names(table: Table) -> str:
    sources = table.sources
    return f"{len(sources)} files" if len(sources) > 3 else ", ".join(s.path for s in sources)


def _input_lines(table: Table, seed, labels) -> list:
    """Provenance: each input file with its format, rows and SHA-256; columns; seed."""
    sources = table.sources
    if len(sources) > 4:                 # many files: a line per folder
        folders = collections.Counter(os.path.dirname(s.path) for s in sources)
        kinds = sorted({s.format for s in sources})
        lines = [f"input: {len(sources)} files ({', '.join(kinds)}), "
                 f"{sum(s.rows for s in sources):,} rows: "
                 + ", ".join(f"{count} in {folder or '.'}" for folder, count in folders.items())
                 + " (each file's SHA-256: --json)"]
    else:
        lines = [f"input: {s.path} ({s.format}, {s.rows:,} rows, sha256 {s.sha256}); "
                 f"columns used: {', '.join(s.columns)}" for s in sources]
    roles = (f"baseline {table.systems[0]}; candidates {', '.join(table.systems[1:])}"
             if labels is None else
             ", ".join(f"{label} = {name}" for label, name in zip(labels, table.systems)))
    return lines + [f"systems: {roles}; seed {seed}"]


def _dropped_lines(table: Table) -> list:
    """What the readers left out or chose, counted: in every report, never only in details."""
    if table.dropped:
        return [f"dropped (--on-missing drop): {table.dropped:,} ({table.dropped_note}); "
                f"{table.n:,} items kept"]
    return [f"note: {table.dropped_note}"] if table.dropped_note else []


def _measured(cov: Coverage, rate) -> str:
    """A rate as measured: ``94.1% +- 0.7`` (its Monte Carlo s.e.), or ``94.1%`` exact."""
    text = _percent(rate)
    return text if cov.exact else text + f" +- {cov.standard_error(rate) * 100:.1f}"


def _holds_lines(cov: Coverage, null: Coverage | None, nominal) -> list:
    """A warning when the interval misses its level by more than the slack, and the remedy."""
    problems = [f"covers {_measured(cov, rate)} of the time, short of its "
                f"{_format_level(nominal)}" if kind == "covers" else
                f"excludes 0 under no gap {_measured(null, rate)} of the time, above "
                f"{_format_level(1 - nominal)}" for kind, rate in _shortfalls(cov, nominal, null)]
    if not problems:
        return []
    better = _recommended(cov, nominal, null)
    if better is None:
        fix = ("no interval the tool offers holds here; more items, or an exact test, are "
               "the remedy")
    else:
        alt, alt_null = cov.of(better), null.of(better) if null is not None else None
        fix = (f"the {_INTERVAL_NAMES[better]} interval (--interval {better}) covers "
               f"{_measured(alt, alt.covers_rate)}"
               + (" and excludes 0 under no gap "
                  f"{_round_fixed(alt_null.excludes_zero_rate * 100, 1)}%"
                  if alt_null is not None else "") + " here")
    return [f"warning: at this n the {_INTERVAL_NAMES[cov.rule]} interval "
            f"{' and '.join(problems)}; {fix}"]


def _calibration_lines(result: Analysis, details: bool) -> list:
    """The calibration (with *details*) and its warning when the interval does not hold."""
    cal = result.calibration
    if cal is None:
        return []
    cov, null = cal.coverage, cal.null
    warning = _holds_lines(cov, null, cal.nominal)
    if not details:
        return warning
    how = (f"exact: summed over every 2x2 table of {cal.n:,} items drawn from this one, and "
           f"from it with no gap; each table's bootstrap exact, past an sd of "
           f"{_TABLE_SADDLEPOINT_SD} by its saddlepoint approximation" if cov.exact else
           f"{cal.replays:,} tables drawn from this 2x2 table, and as many with no gap; "
           + ("each table's bootstrap exact" if cal.resamples == 0 else
              f"B={cal.resamples:,} per table"))
    return [f"calibration: at n={cal.n:,} and these accuracies the paired "
            f"{_format_level(cal.nominal)} {_INTERVAL_NAMES[cal.rule]} CI covers the gap "
            f"{_measured(cov, cov.covers_rate)} of the time and excludes 0 under no gap "
            f"{_measured(null, null.excludes_zero_rate)} ({how})"] + warning


def _plan_line(plan: _PlanSummary) -> str:
    target = _format_percent(plan.target)
    if plan.exact_power is None:
        paired = f"{100 * plan.power:.1f}% that the paired interval excludes 0 (normal " \
                 "approximation)"
    else:
        paired = (f"{100 * plan.exact_power:.1f}% that the paired interval excludes 0 (exact, "
                  f"B=infinity; the normal approximation says {100 * plan.power:.1f}%)")
    if plan.verdict_power is not None:
        paired += (f", {100 * plan.verdict_power:.1f}% that the verdict says better (the "
                   "interval and McNemar's p together, exact)")
    head = (f"plan: power at n={plan.n:,}: {paired}, {100 * plan.unpaired_power:.1f}% for the "
            "unpaired interval; ")
    if plan.n_needed is None:        # a zero gap: then no n exists unpaired either (items_needed)
        return head + (f"no n reaches {target} power (the true gap is 0: that is the "
                       "false-positive rate)")
    paired_n = (f"n={plan.exact_n_needed:,} paired (exact; the approximation says "
                f"{plan.n_needed:,})" if plan.exact_n_needed is not None else
                f"n={plan.n_needed:,} paired (normal approximation)")
    return head + (f"{target} interval power needs {paired_n}, "
                   f"n={plan.unpaired_n_needed:,} unpaired")


_RUNS_TABLE = (1, 2, 3, 5, 10)


def _runs_plan_lines(plan: RunsPlan, n: int, params: dict) -> list:
    """Items x runs: items needed and power at n per run count; whether runs or items help."""
    target, runs = params["target_power"], params.get("runs", 1)
    lines = [f"plan (items x runs, normal approximation; variance parts from "
             f"{_RUNS_PLAN_ITEMS:,} simulated items): {_format_percent(target)} power needs"]
    for count in sorted(set(_RUNS_TABLE) | {runs}):
        needed = plan.items_needed(count, target)
        what = f"{needed:,} items" if needed is not None else \
            "no number of items (the true gap is 0)" if plan.gap == 0 else \
            "no number of items (the runs' own spread is too large)"
        lines.append(f"  {count:>3} run(s) per system: {what}; power at n={n:,}: "
                     f"{100 * plan.power(n, count):.1f}%")
    more_runs, more_items = plan.power(n, 2 * runs), plan.power(2 * n, runs)
    better = "more runs help more than more items" if more_runs > more_items else \
        "more items help more than more runs" if more_items > more_runs else "neither helps more"
    lines.append(f"  at n={n:,} and {runs} run(s), doubling the runs gives {100 * more_runs:.1f}% "
                 f"power and doubling the items {100 * more_items:.1f}%: {better} here")
    return lines


def _margin(decision: Decision) -> Fraction | None:
    """The gate's margin, which the verdict's interval never prints as (None: no gate)."""
    return None if decision.gate is None else decision.gate.margin


def _excludes_zero_words(shown: str) -> str:
    """"excludes 0", and why where an end printed as +0 or -0 (its sign held past its digits).

    >>> _excludes_zero_words("[+0, +2]")
    'excludes 0 (its lower end, printed +0, lies above 0 from seed to seed)'
    """
    ends = shown.split(" pts")[0].strip("[]").split(", ")
    zero = [(side, end) for side, end in zip(("lower", "upper"), ends)
            if end[:1] in "+-" and not end.strip("+-0.")]
    return "excludes 0" + "".join(f" (its {side} end, printed {end}, lies "
                                  f"{'above' if end[0] == '+' else 'below'} 0 from seed to seed)"
                                  for side, end in zero[:1])


def _verdict_sentence(comparison: Comparison, labels=None, incomplete=()) -> str:
    """The verdict and the numbers that decided it (first: which runs did not finish)."""
    decision, result = comparison.decision, comparison.analysis
    family = decision.family > 1
    base, cand = labels or (comparison.baseline, comparison.candidate)
    shown = _format_interval(decision.interval, result.percent, _margin(decision))
    excludes = _excludes_zero_words(shown)
    ci = (f"{'exact ' * (result.exact_distributions is not None)}"
          f"{'two-level' if result.runs is not None else 'paired'} "
          f"{_format_level(decision.level)} CI{f' ({decision.joint})' if family else ''} {shown}")
    test = ("McNemar's" if result.mcnemar is not None else "the two-level t test's"
            if result.runs is not None else "the permutation test's" if result.metric else
            "the sign-flip test's")
    below = "is within its Monte Carlo error of" if not decision.p_settled else \
        "is below" if Fraction(decision.p) < decision.alpha else "is not below"
    bound = isinstance(result.test, PermutationTest) and result.test.at_floor   # a bound
    decided = (f"{test} {f'{_ADJUST_NAMES[decision.adjust]}-adjusted ' if family else ''}"
               f"{f'p<={_format_p(decision.p)}' if bound else _p_equals(decision.p)} {below} "
               f"{_format_decimal(decision.alpha)}")
    word, gap = decision.word, _format_gap(result.gap, result.percent, beside=decision.interval)
    head = f"verdict: {word}" + (f" ({'; '.join(incomplete)})" if incomplete else "")
    if word in ("better", "worse"):
        return f"{head}. {cand} is likely {word} than {base} ({gap}): the {ci} {excludes} and " \
            f"{decided}."
    interval = decision.interval                     # (an end at 0 is no Monte Carlo matter)
    lo, hi = (held or not end for held, end in zip(_signs_held(interval),
                                                   (interval.lo, interval.hi)))
    side = excludes if interval.excludes_zero() else "includes 0" if lo and hi else \
        f"has {'its upper end' if lo else 'its lower end' if hi else 'both ends'} within its " \
        "Monte Carlo error of 0"
    if word == "cannot tell":
        return f"{head}. The {ci} {side} and {decided}, so the observed {gap} may be noise."
    if word == "borderline":
        return (f"{head}. The observed {gap}: the {ci} {side} but {decided}; the interval and "
                "the test disagree, too close to call at this level.")
    clusters = result.design.clusters if result.design else None
    return (f"{head}. The observed {gap}: the {ci} {excludes} and {decided}, but with {clusters} "
            f"clusters a cluster bootstrap cannot be trusted (it wants about {_MIN_CLUSTERS}); do "
            "not claim a winner.")


def _gate_lines(comparison: Comparison, percent: bool) -> list:
    """The gate's outcome and the numbers that decided it, in one line."""
    gate = comparison.decision.gate
    if gate is None:
        return []
    lower, margin = _format_apart(gate.lower, gate.margin, percent)
    above = "is within its Monte Carlo error of" if not _signs_held(
        comparison.decision.interval, gate.margin)[0] else \
        "is above" if gate.lower > gate.margin else "is not above"
    need = (f" and the verdict is {gate.word}" if gate.kind == "superiority" else
            " (the verdict is unreliable)" if gate.word == "unreliable" else "")
    return [f"gate: {'PASS' if gate.passed else 'FAIL'} ({gate.kind} at {margin}): the lower "
            f"end of the {'two-level' if comparison.analysis.runs else 'paired'} "
            f"{_format_level(comparison.decision.level)} CI, {lower}, {above} {margin}{need}"]


def _ledger_lines(report) -> list:
    """Where the ledger recorded the comparisons (a judged report's one too), Holm's p."""
    note = report.ledger
    if note is None:
        return []
    tested = [(report.result.systems[1], report.result.p)] if isinstance(
        report, _JudgedReport) else [(c.candidate, c.analysis.p) for c in report.comparisons]
    numbers = f"comparison {note.first}" if len(tested) == 1 else \
        f"comparisons {note.first}-{note.first + len(tested) - 1}"
    parts = [f"{name} {_p_equals(p)} -> {_format_p(p_holm)}"
             for (name, p), p_holm in zip(tested, note.p_holm)]
    return [f"ledger: {numbers} of {note.total} on this test set (sha256 {note.test_set[:12]}) "
            f"in {note.path}; p adjusted by Holm over all {note.total}: {'; '.join(parts)}"]


def _act_lines(comparison: Comparison) -> list:
    """For a verdict that claims nothing: its :class:`ActPlan` in words."""
    result = comparison.analysis
    if comparison.decision.claims:
        return []
    act = act_plan(result)
    if act.detectable is None:
        return ["to act on it: the two systems score alike on every item, so this set holds "
                "no information about a gap between them; only other items can tell them apart"]
    gap = (f"a gap of +-{_magnitude(Fraction(act.detectable), result.percent, result.paired)} "
           "or more")
    observed = f"the observed {_format_gap(result.gap, result.percent, beside=result.paired)}"
    if act.basis == "runs":
        runs = result.runs
        text = (f"to act on it: with 80% power these {result.n:,} items and {runs.a.count}+"
                f"{runs.b.count} runs detect {gap}")
        options = [f"about {count:,} {what}" for count, what in (
            (act.items_needed, "items at these runs"),
            (act.runs_needed, "runs per system at these items")) if count is not None]
        if runs.gap == 0:
            return [text + "; the observed gap is 0"]
        if not options:
            return [text + "; the observed gap needs both more items and more runs"]
        return [text + f"; detecting {observed} would take {' or '.join(options)} (normal "
                       "approximation)"]
    basis = (f"its discordant items: {_round_fixed(Fraction(act.basis_value) * 100, 1)}%"
             if act.basis == "discordant" else
             f"{'sqrt(n) x the bootstrap sd' if result.metric else 'per-item sd'} of B - A: "
             f"{_magnitude(Fraction(act.basis_value), False)}")
    text = f"to act on it: with 80% power this set detects {gap} ({basis}); "
    if act.items_needed is None:
        return [text + "the observed gap is 0, which no number of items can tell from 0"]
    return [text + f"detecting {observed} would take about {act.items_needed:,} items (normal "
                   "approximation)"]


def _histogram_bins(dist, bins: int) -> list:
    """[(lo, hi, share of the mass in [lo, hi))]: exact edges, on the statistic's grid if any."""
    (low, high), step = dist.support, dist.grid
    if step is None:
        step = (high - low) / (bins * 1000) or Fraction(1, 1000)
    width = max(1, math.ceil((high - low + step) / bins / step)) * step
    start = math.floor(low / width) * width
    count = math.floor((high - start) / width) + 1
    cuts = [dist.mass_below(start + i * width) for i in range(count + 1)]
    return [(start + i * width, start + (i + 1) * width, cuts[i + 1] - cuts[i])
            for i in range(count)]


def _distribution_words(dist) -> str:
    if dist.monte_carlo:
        return f" over {len(dist.sums)} resamples"
    return ", its exact bootstrap distribution (B = infinity)" if isinstance(dist, _Lattice) \
        else ", its bootstrap distribution (the outliers' draws exact, Edgeworth's series for " \
        "the rest)" if isinstance(dist, _Mixture) \
        else ", the saddlepoint approximation to its bootstrap distribution"


def _histogram_lines(result: Analysis) -> list:
    """The gap's ASCII histogram, '#' inside the interval: counts of resamples, or shares."""
    if result.runs is not None:
        dist, interval = result.runs.distribution, result.runs.interval
        what = "two-level gap (plain, before rescaling)"
    else:
        dist, interval, what = result.paired_distribution, result.paired, "paired gap"
    rows = _histogram_bins(dist, 12)
    tallest = max(share for _, _, share in rows)
    lines = []
    for lo, hi, share in rows:
        mark = "#" if lo + (hi - lo) / 2 in interval else "."
        bar = mark * max(1 if share else 0, round(40 * share / tallest))
        zero = "  <- 0" if lo <= 0 < hi else ""
        amount = f"{int(share * len(dist.sums)):>6}" if dist.monte_carlo else \
            f"{100 * float(share):>5.1f}%"
        lines.append(f"  {_format_gap(lo, result.percent):>10} |{bar:<40} {amount}{zero}")
    return [f"{what}{_distribution_words(dist)} (bins from the value shown; '#' inside the "
            f"{_format_level(result.confidence)} CI, '.' outside):", _Pre(tuple(lines))]


def _comparison_document(report: Report) -> list:
    """A family table, a simulated run in the article's layout, or the user's data."""
    if len(report.comparisons) > 1:
        return _family_document(report)
    return _simulation_document(report) if report.table is None else _data_document(report)


def _method_text(result: Analysis) -> str:
    """How the intervals were computed, in the report's words."""
    named = {"exact": "exact bootstrap (B = infinity)",
             "saddlepoint": "saddlepoint approximation to the bootstrap (Davison and Hinkley "
                            "1988; no resampling)",
             "mixture": "bootstrap with the outlying scores' draws counted exactly, the rest by "
                        "Edgeworth's series (no resampling)"}
    if result.method in named:
        return named[result.method]
    engine = "" if result.engine == "stream" else f", {result.engine} engine"
    held = result.paired.places
    loose = held is not None and _held_places(result.errors["paired"], result.percent) is None
    why = "" if not result.unasked else " (no method without resampling fits these scores" + (
        "; as many as hold the printed ends" if result.resamples > RESAMPLES else "") + (
        "; the ends printed to the digit they hold" if held is not None and not loose and
        held < (1 if result.percent else 3) else "") + (
        "; the ends' Monte Carlo error, +-" + _magnitude(max(result.errors["paired"]),
                                                         result.percent) +
        ", is more than their last digit" if loose else "") + ")"
    return f"bootstrap, B={result.resamples:,} resamples{engine}{why}"


def _battle_summary(table: Table, comparison: Comparison) -> dict:
    """Two systems' battles in numbers (the JSON's ``battles``; _battle_lines prints them)."""
    (a, b), n, confidence = table.columns, table.n, comparison.analysis.confidence
    interval = comparison.decision.interval
    summary = {"format": table.preference[0], "battles": n,
               "win_rate": (1 + comparison.analysis.gap) / 2,
               "win_rate_ci": [(1 + interval.lo) / 2, (1 + interval.hi) / 2]}
    if not comparison.analysis.binary:
        return summary
    wins_a, wins_b = sum(a), sum(b)
    decisive = wins_a + wins_b
    summary.update(wins={"a": wins_a, "b": wins_b}, ties=n - decisive, decisive=decisive,
                   decisive_win_rate=Fraction(wins_b, decisive) if decisive else None,
                   decisive_ci=list(map(Fraction, clopper_pearson(wins_b, decisive, confidence)))
                   if decisive else None, position=None)
    if (positions := table.preference[1]) is not None:
        summary["position"] = _position(sum(y if shown else x for x, y, shown in
                                            zip(a, b, positions)), decisive)
    return summary


def _first_position(data: Battles) -> dict | None:
    """How often the system shown first won the decisive battles; exact binomial test vs half."""
    won = sum(share == 1 for share in data.shares)
    return _position(won, won + sum(share == 0 for share in data.shares)) \
        if data.positioned else None


def _position(first_won: int, decisive: int) -> dict | None:
    return {"first_won": first_won, "decisive": decisive, "p": mcnemar_exact(
        first_won, decisive - first_won).p} if decisive else None


def _position_line(position: dict) -> str:
    return (f"  position: the system shown first won {position['first_won']:,} of the "
            f"{position['decisive']:,} decisive battles "
            f"({_percent(Fraction(position['first_won'], position['decisive']))}; "
            f"exact binomial test against half {_p_equals(position['p'])})")


def _battle_lines(table: Table, comparison: Comparison) -> list:
    """The battles' lines of a comparison: who won how often, the win rate, position bias."""
    s, result = _battle_summary(table, comparison), comparison.analysis
    level = _format_level(result.confidence)
    rate = (f"win rate of B (ties as half): {_percent(s['win_rate'])}, "
            f"{level} CI [{_percent(s['win_rate_ci'][0])}, {_percent(s['win_rate_ci'][1])}]")
    gate = comparison.decision.gate
    if gate is not None:
        rate += (f" (the gate's margin {_format_gap(gate.margin / 2, True)} on the win rate "
                 f"above 50% is {_format_gap(gate.margin, True)} on the net win rate)")
    if not result.binary:
        return [f"  {s['battles']:,} battles of {table.systems[0]} (A) and {table.systems[1]} "
                f"(B) judged as probabilities; {rate}"]
    lines = [f"  {s['battles']:,} battles: A = {table.systems[0]} won {s['wins']['a']:,}, "
             f"B = {table.systems[1]} won {s['wins']['b']:,}, {s['ties']:,} ties", f"  {rate}"]
    if s["decisive"]:
        lo, hi = s["decisive_ci"]
        lines[-1] += (f"; of the {s['decisive']:,} decisive battles B won "
                      f"{_percent(s['decisive_win_rate'])} (Clopper-Pearson {level} CI "
                      f"[{_percent(lo)}, {_percent(hi)}])")
    if result.mcnemar is not None:
        lines.append(f"  exact sign test of the decisive battles (McNemar's): "
                     f"{_p_equals(result.mcnemar.p)}")
    if s["position"] is not None:
        lines.append(_position_line(s["position"]))
    return lines


def _data_document(report: Report) -> list:
    """The verdict, systems, gap and test; ``details`` add errors, provenance, histogram."""
    comparison = report.comparisons[0]
    result, table, percent = comparison.analysis, report.table, comparison.analysis.percent
    lines = [_verdict_sentence(comparison, ("A", "B"), table.incomplete)]
    lines += [f"warning: {w}" for w in table.warnings] + _gate_lines(comparison, percent)
    means, cis = (result.accuracy_a, result.accuracy_b), (result.ci_a, result.ci_b)
    what = f"{_METRIC_NAMES[result.metric]} " if result.metric else ""
    battles = table.preference is not None
    lines += _battle_lines(table, comparison) if battles else [
        f"  {label} = {name}: {what}{_format_point(mean, ci)} "
        f"{ci.as_proportions()}"
        for label, name, mean, ci in zip("AB", table.systems, means, cis)]
    lines += [f"  gap B - A{' (net win rate: wins minus losses per battle)' * battles}: "
              f"{_format_gap(result.gap, percent, beside=result.paired)}; "
              f"{_interval_label(result, 'paired')} "
              f"{_format_interval(result.paired, percent, _margin(comparison.decision))}"
              + (not battles) * (f"; {_interval_label(result, 'unpaired')} "
                                 f"{_format_interval(result.unpaired, percent)} (ignores the "
                                 "pairing)")]
    if not (battles and result.mcnemar is not None):
        lines.append(_test_line(result))
    lines += _exact_lines(result)
    if result.runs is not None:
        lines += _runs_lines(result.runs, percent)
    lines += (_design_lines(result.design) + [f"note: {note}" for note in result.notes]
              + _dropped_lines(table) + _calibration_lines(result, report.details)
              + _ledger_lines(report) + _act_lines(comparison))
    if not report.details:
        kind = (f"each item's mean over {result.runs.a.count} and {result.runs.b.count} runs"
                if result.runs is not None else "battles: who won each" if battles
                else "0/1 scores" if result.binary else
                "predictions and labels" if result.metric else "real-valued scores")
        error = "Monte Carlo error, " if result.method == "bootstrap" else ""
        lines.append(f"n={result.n:,} {'battles' if battles else 'items'} from "
                     f"{_input_names(table)} ({kind}); "
                     f"{_method_text(result)}; seed {report.params['seed']}; --details for "
                     f"{error}calibration, provenance and the gap's distribution")
        return lines
    lines += _precision_lines(result) + _input_lines(table, report.params["seed"], ("A", "B"))
    if len(table.sources) == 1 and table.sources[0].columns == CSV_COLUMNS:   # --write-csv's
        how = (f"resampled from Random({report.params['seed']}) afresh, match it by Monte "
               "Carlo error" if result.method == "bootstrap" else
               "exact here, differ from its resampled ones by their Monte Carlo error")
        lines.append("note: for a file written by --write-csv the accuracies and McNemar match "
                     f"the simulated run exactly; the intervals, {how}")
    return lines + _engine_lines(report, result) + _histogram_lines(result)


def _simulation_document(report: Report) -> list:
    """The article's report, line for line, then coverage, plan, notes, verdict, histogram."""
    def rate_text(value: Fraction, cov: Coverage, tail: str = " of the time") -> str:
        se = cov.standard_error(value) * 100
        return f"{_round_fixed(value * 100, 1)}%{tail} (Monte Carlo s.e. {se:.1f}%)"
    p, comparison, result = report.params, report.comparisons[0], report.analysis
    lines = [f"n={result.n}, true accuracies A={_format_decimal(p['acc_a'])} "
             f"B={_format_decimal(p['acc_b'])}, true gap={format_pts(p['acc_b'] - p['acc_a'])}",
             f"observed: A={_round_fixed(result.accuracy_a, 3)} {result.ci_a.as_proportions()}   "
             f"B={_round_fixed(result.accuracy_b, 3)} {result.ci_b.as_proportions()}",
             f"observed gap: {_format_gap(result.gap, result.percent)}",
             f"  {_interval_label(result, 'paired')}:   "
             f"{_format_interval(result.paired, result.percent)}",
             f"  {_interval_label(result, 'unpaired')}: "
             f"{_format_interval(result.unpaired, result.percent)}", _test_line(result)]
    if result.runs is not None:
        lines += _runs_lines(result.runs, result.percent)
    if (cov := report.coverage) is not None:     # over the replays: coverage, false positives
        true_gap = p["acc_b"] - p["acc_a"]
        which = (f"a 'significant' {'+' if true_gap >= 0 else '-'}gap" if true_gap != 0
                 else "a false positive")
        lines += [f"over {cov.replays} replays: "
                  f"{'two-level' if cov.rule == 'two-level' else 'paired'} CI covers the true gap "
                  f"{rate_text(cov.covers_rate, cov)};",
                  f"CI excludes zero ({which}) {rate_text(cov.excludes_zero_rate, cov)}"]
        if (items := cov.item_level) is not None:
            other = ("the two-level interval's, over every run; the single-run interval, one run "
                     "per system," if cov.rule == "two-level" else
                     "the cluster bootstrap's; the item-level bootstrap, ignoring the clusters,")
            lines.append(f"  (those are {other} covers {rate_text(items.covers_rate, items, '')} "
                         f"and excludes zero {rate_text(items.excludes_zero_rate, items, '')})")
        if cov.undefined:
            lines.append(f"  ({cov.undefined} of {cov.replays} replays had no "
                         f"{_INTERVAL_NAMES[cov.rule]} interval (undefined); the percentile "
                         "interval stood in, as it does in a comparison)")
        if cov.gate_passes is not None:
            truth = (f"; the true gap equals the margin, so this is the gate's false-pass rate "
                     f"(at most {_format_level((1 - result.confidence) / 2)} by design)"
                     if true_gap == cov.margin else "")
            rate = Fraction(cov.gate_passes, max(1, cov.replays))
            lines.append(f"gate at {_format_gap(cov.margin, True)}: passes "
                         f"{rate_text(rate, cov)}{truth}")
        lines += _holds_lines(cov, None, result.confidence)
    if report.plan is not None:
        lines.append(_plan_line(report.plan))
    if report.runs_plan is not None:
        lines += _runs_plan_lines(report.runs_plan, result.n, p)
    lines += _design_lines(result.design) + _precision_lines(result) + _exact_lines(result)
    lines += [f"note: {note}" for note in result.notes] + _engine_lines(report, result)
    lines.append(_verdict_sentence(comparison, ("A", "B")))
    return lines + _gate_lines(comparison, result.percent) + _histogram_lines(result)


def _family_document(report: Report) -> list:
    """Candidates against one baseline: verdicts, a table; ``details`` add the inputs."""
    comparisons, table = report.comparisons, report.table
    first, decision = comparisons[0].analysis, comparisons[0].decision
    base = comparisons[0].baseline
    percent = all(c.analysis.percent for c in comparisons)
    header = ("system", "mean", f"{_format_level(first.confidence)} CI", f"gap vs {base}",
              f"{decision.joint} {_format_level(decision.level)} CI", "test", "p",
              f"{_ADJUST_SHORT[decision.adjust]} p", "verdict")
    rows = [[base, _format_point(first.accuracy_a, first.ci_a),
              first.ci_a.as_proportions()] + [""] * 6]
    rows += [[c.candidate, _format_point(c.analysis.accuracy_b, c.analysis.ci_b),
              c.analysis.ci_b.as_proportions(),
              _format_gap(c.analysis.gap, percent, beside=c.decision.interval),
              _format_interval(c.decision.interval, percent, _margin(c.decision)),
              c.analysis.test.name, _format_p(c.analysis.p), _format_p(c.decision.p),
              c.decision.word] for c in comparisons]
    lines = [f"{c.candidate}: {line}" for c in comparisons
             for line in [_verdict_sentence(c, None, table.incomplete), *_gate_lines(c, percent)]]
    lines += [f"warning: {w}" for w in table.warnings]
    lines += [f"{len(table.systems)} systems on {table.n:,} items from "
              f"{_input_names(table)}; baseline {base}; each candidate against it, p "
              f"{_ADJUST_NAMES[decision.adjust]}-adjusted over the {len(comparisons)}, "
              f"intervals {decision.joint} at {_format_level(decision.level)}",
              _Grid(header, tuple(rows), frozenset({1, 3, 6, 7}))]
    lines += _ledger_lines(report) + _dropped_lines(table)
    for c in comparisons:
        lines += [f"note: {c.candidate}: {note}" for note in c.analysis.notes]
        test = c.analysis.test
        if isinstance(test, PermutationTest) and test.mc_error is not None:
            kind, drawn = ("prediction-swap", "swaps") if test.swaps else \
                ("sign-flip", "sign patterns")
            lines.append(f"note: {c.candidate}: the {kind} test's p is Monte Carlo "
                         f"({test.permutations:,} random {drawn}): {_monte_carlo_p(test)}")
        lines += [f"{c.candidate}: {line}" for line in
                  _calibration_lines(c.analysis, report.details)]
    if report.details:
        lines += [f"{c.candidate}: Monte Carlo error of the {c.decision.joint} interval's ends "
                  f"(B={c.analysis.resamples:,}): +-{_magnitude(c.decision.errors[0], percent)}"
                  f"/+-{_magnitude(c.decision.errors[1], percent)}"
                  for c in comparisons if c.decision.errors is not None]
        lines.append(f"family: {len(comparisons)} comparisons against {base}; p adjusted by "
                     f"{_ADJUST_NAMES[decision.adjust]} across the family (--adjust; every "
                     f"adjustment in the JSON); intervals {decision.joint} at "
                     f"{_format_level(decision.level)}, so each row's interval and adjusted p "
                     "read alike")
        lines += _input_lines(table, report.params["seed"], None)
    else:
        error = "Monte Carlo error, " if any(c.decision.errors for c in comparisons) else ""
        lines.append(f"{_method_text(first)}; seed {report.params['seed']}; --details for "
                     f"{error}calibration and provenance")
    return lines


def _analysis_json(result: Analysis) -> dict:
    advice, test, runs = _mc_advice(result), result.test, result.runs
    return {"method": result.method,
            "resamples": result.resamples if result.method == "bootstrap" else None,
            "interval_method": result.interval, "interval_methods": dict(result.rules),
            "mc_error": {name: [float(lo), float(hi)] for name, (lo, hi) in result.errors.items()},
            "mc_advice": None if advice is None else {
                "kind": advice.kind, "resamples": advice.resamples, "worst": float(advice.worst)},
            "exact": None if result.exact is None else {
                name: interval.to_json() for name, interval in result.exact.items()},
            "design": None if result.design is None else result.design.to_json(),
            "accuracy": {"a": float(result.accuracy_a), "b": float(result.accuracy_b)},
            **({"metric": result.metric} if result.metric else {}),
            "gap": float(result.gap),
            "ci": {"a": result.ci_a.to_json(), "b": result.ci_b.to_json(),
                   "paired": result.paired.to_json(), "unpaired": result.unpaired.to_json()},
            "mcnemar": None if result.mcnemar is None else dataclasses.asdict(result.mcnemar),
            "test": {"name": test.name, "p": result.p, **(
                {"exact": test.exact, "permutations": test.permutations,
                 "saddlepoint": test.saddlepoint, **({} if test.mc_error is None else {
                     "mc_error": test.mc_error, "bound": test.at_floor})}
                if isinstance(test, PermutationTest) else
                {"t": test.t, "df": test.df} if isinstance(test, RunsTest) else {})},
            "runs": None if runs is None else {
                "a": runs.a.to_json(), "b": runs.b.to_json(), "gap": float(runs.gap),
                "overlap": runs.overlap, "interval": runs.interval.to_json(),
                "scale": runs.scale(runs.confidence),
                "test": {"t": runs.test.t, "df": runs.test.df, "p": runs.test.p},
                "variance": {"items": runs.variance_items, "runs_a": runs.variance_runs_a,
                             "runs_b": runs.variance_runs_b,
                             "shares": dict(zip(("items", "runs_a", "runs_b"), runs.shares))}},
            "notes": list(result.notes),
            "calibration": None if result.calibration is None else result.calibration.to_json()}


def _comparison_json(report: Report) -> dict:
    """Where the scores came from, then each comparison (none of whose keys repeats here)."""
    body = {"kind": "simulation" if report.table is None else "comparison"}
    if (table := report.table) is not None:
        body["input"] = {**table.sources[0].to_json(),
                         "files": [s.to_json() for s in table.sources],
                         "systems": list(table.systems), "items": table.n,
                         "dropped": table.dropped, "dropped_note": table.dropped_note,
                         "warnings": list(table.warnings), "incomplete": list(table.incomplete)}
    body["family_size"] = len(report.comparisons)
    gates = [c.decision.gate for c in report.comparisons if c.decision.gate is not None]
    if gates:
        body["gate_passed"] = all(g.passed for g in gates)
    for key, part, build in (("ledger", report.ledger, dataclasses.asdict),
                             ("coverage", report.coverage, lambda cov: cov.to_json()),
                             ("plan", report.plan, _plan_json)):
        if part is not None:
            body[key] = build(part)
    body["comparisons"] = [     # each candidate against the baseline: its numbers and words
        {"baseline": c.baseline, "candidate": c.candidate, "engine": c.analysis.engine,
         **_analysis_json(c.analysis), "p_holm": c.p_holm, "p_bonferroni": c.p_bonferroni,
         "p_bh": c.p_bh, "verdict": c.decision.word, "decision": c.decision.to_json(),
         "act": None if c.decision.claims else act_plan(c.analysis).to_json(),
         "histogram": [{"lo": float(lo), "hi": float(hi), "share": float(share),
                        **({"count": int(share * len(dist.sums))} if dist.monte_carlo else {})}
                       for lo, hi, share in _histogram_bins(dist, 12)]}
        for c in report.comparisons for dist in [c.analysis.paired_distribution]]
    if report.table is not None and report.table.preference is not None:
        body["battles"] = _battle_summary(report.table, report.comparisons[0])
    return body


def _rate(value: Fraction, cov: Coverage) -> str:
    return f"{100 * float(value):.1f}% ({100 * cov.standard_error(value):.1f})"


def _sweep_document(report: _SweepReport) -> list:
    p, result = report.params, report.sweep
    copula, target = result.copula, _format_percent(result.target_power)
    lines = [f"power sweep: true accuracies A={_format_decimal(copula.acc_a)} "
             f"B={_format_decimal(copula.acc_b)} (true gap {format_pts(copula.true_gap)}), "
             f"corr={_format_decimal(copula.corr)}, paired {_format_percent(p['confidence'])} "
             "percentile CI",
             f"  {p['engine']} engine, {p['replays']} replays x {p['resamples']} resamples per n, "
             f"seed {p['seed']}; simulated rates with Monte Carlo s.e. in parentheses",
             _Grid(("n", "analytic power", "exact power", "simulated power", "coverage",
                    "paired +-", "unpaired +-"),
                   tuple((f"{row.n:,}", f"{100 * row.power:.1f}%",
                          "-" if row.exact_power is None else f"{100 * row.exact_power:.1f}%",
                          _rate(row.simulated.excludes_zero_rate, row.simulated),
                          _rate(row.simulated.covers_rate, row.simulated),
                          f"{100 * row.half_width:.2f} pts",
                          f"{100 * row.unpaired_half_width:.2f} pts") for row in result.rows),
                   frozenset(range(7)))]
    if result.n_needed is None:
        lines.append(f"{target} power: never reached, the true gap is 0")
    else:
        conf = result.confirmation
        how = (f"exact power, B=infinity; the normal approximation says "
               f"{result.analytic_n_needed:,}" if result.exact else "normal approximation")
        lines.append(f"{target} power needs n={result.n_needed:,} paired ({how}; simulated at "
                     f"n={result.n_needed:,}: {_rate(conf.excludes_zero_rate, conf)} power, "
                     f"{_rate(conf.covers_rate, conf)} coverage); unpaired needs "
                     f"n={result.unpaired_n_needed:,}")
    return lines + ["(+- columns: analytic half-width of the interval, z*sd/sqrt(n); exact power: "
                    "the exact bootstrap interval's, summed over every 2x2 table; '-' above "
                    f"{_EXACT_POWER_LIMIT:,} items)"]


def _sweep_json(report: _SweepReport) -> dict:
    result = report.sweep
    return {"rows": [{"n": row.n, "analytic_power": row.power, "exact_power": row.exact_power,
                      "analytic_unpaired_power": row.unpaired_power,
                      "paired_half_width": row.half_width,
                      "unpaired_half_width": row.unpaired_half_width,
                      "simulated": row.simulated.to_json()} for row in result.rows],
            "target_power": float(result.target_power), "n_needed": result.n_needed,
            "n_needed_by": "exact" if result.exact else "analytic",
            "analytic_n_needed": result.analytic_n_needed,
            "unpaired_n_needed": result.unpaired_n_needed,
            "confirmation": result.confirmation.to_json() if result.confirmation else None}


def _accuracy_plan_document(report: _AccuracyPlanReport) -> list:
    plan = report.plan
    lines = [f"items needed for a {_format_percent(plan.confidence)} interval of "
             f"+-{_round_fixed(plan.half_width * 100, 2)} pts on one accuracy near "
             f"{_format_decimal(plan.accuracy)}:",
             f"  Wald (normal approximation):  n={plan.wald:,}",
             f"  Wilson score interval:        n={plan.wilson:,}",
             f"  Clopper-Pearson (exact):      n={plan.clopper_pearson:,} (and every larger n)",
             "(the half-width shrinks as 1/sqrt(n): halving it takes four times the items)"]
    expected = plan.wald * float(min(plan.accuracy, 1 - plan.accuracy))
    if expected < 10:
        lines.append(f"warning: Wald's n expects {expected:.1f} "
                     f"{'errors' if plan.accuracy > Fraction(1, 2) else 'successes'}; with "
                     "fewer than about 10 its interval is not to be trusted (it has zero width "
                     "at 0 or n correct): plan by Wilson or Clopper-Pearson")
    return lines


def _power_plan_document(report: _PowerPlanReport) -> list:
    p, plan, summary = report.params, report.plan, report.summary
    lines = [f"plan: true accuracies A={_format_decimal(p['acc_a'])} "
             f"B={_format_decimal(p['acc_b'])} (true gap {format_pts(p['acc_b'] - p['acc_a'])}), "
             f"corr={_format_decimal(p['corr'])}, n={summary.n:,}; computed, not simulated"]
    if report.runs_plan is not None:                 # one run's power would mislead here
        return lines + _runs_plan_lines(report.runs_plan, summary.n, p)
    return lines + ["  " + _plan_line(summary).removeprefix("plan: "),
                    f"  expected half-width at n={summary.n:,}: paired "
                    f"+-{100 * plan.half_width(summary.n):.2f} pts, unpaired "
                    f"+-{100 * plan.half_width(summary.n, paired=False):.2f} pts (normal "
                    "approximation, z*sd/sqrt(n))"]


def _plan_json(plan: _PlanSummary) -> dict:
    return {"power": plan.power, "exact_power": plan.exact_power,
            "unpaired_power": plan.unpaired_power, "target_power": float(plan.target),
            "n_needed": plan.n_needed, "exact_n_needed": plan.exact_n_needed,
            "unpaired_n_needed": plan.unpaired_n_needed}


def _power_plan_json(report: _PowerPlanReport) -> dict:
    summary, plan, runs = report.summary, report.plan, report.runs_plan
    body = {"n": summary.n, "plan": _plan_json(summary),
            "half_width": {"paired": plan.half_width(summary.n),
                           "unpaired": plan.half_width(summary.n, paired=False)}}
    if runs is not None:
        target = report.params["target_power"]
        body["runs_plan"] = {
            "variance_parts": {"fixed": runs.fixed, "fresh": runs.fresh, "runs_a": runs.runs_a,
                               "runs_b": runs.runs_b},
            "rows": [{"runs": count, "items_needed": runs.items_needed(count, target),
                      "power_at_n": runs.power(summary.n, count)} for count in _RUNS_TABLE]}
    return body


def _calibration_table_document(report: _CalibrationTableReport) -> list:
    table, rows = report.table, []
    level = _format_level(table.confidence)
    for row in table.rows:                      # per setting and rule: covers, false positives
        best = row.recommended(table.confidence)
        for rule in INTERVALS:
            cov, none = row.coverage.of(rule), row.null.of(rule)
            rows.append([f"{_format_decimal(row.acc_a)}/{_format_decimal(row.acc_b)}",
                         f"{row.n:,}", _INTERVAL_NAMES[rule], _rate(cov.covers_rate, cov),
                         _rate(none.excludes_zero_rate, none),
                         "no" if _shortfalls(cov, table.confidence, none) else "yes",
                         "<- recommended" if rule == best else ""])
    header = ("A/B", "n", "interval", "covers (s.e.)", "false + (s.e.)", "holds", "")
    return [f"paired {level} intervals measured: {table.replays:,} tables per setting drawn "
            f"from the copula (corr={_format_decimal(table.corr)}), each table's bootstrap "
            "exact; false positives with both accuracies at their mean; Monte Carlo s.e. in "
            f"parentheses; 'holds': coverage at most 2 s.e. below {level} and false positives "
            f"at most 2 s.e. above {_format_level(1 - table.confidence)}",
            _Grid(header, tuple(rows), frozenset({1, 3, 4})),
            "recommended: the narrowest interval that holds at that setting"]


def _tasks_document(report: _TasksReport) -> list:
    """Slices shown worse, the pooled comparison nested two spaces in, then the task table."""
    table, result, percent = report.table, report.result, report.table.proportions
    tasks, first = len(result.tasks), result.tasks[0].comparisons[0].decision
    noun, of = ("slice", f" of {table.slices}") if table.slices else ("task", "")
    each = f"on the {noun}'s items"
    if result.pool in ("f1", "recall"):                  # compare_classes
        noun, each = "class", f"by the class's {_METRIC_NAMES[result.pool]} (all items)"
    nouns = "classes" if noun == "class" else f"{noun}s"
    lines = [f"{len(table.systems)} systems on {table.n:,} items in {tasks} {nouns}{of}; "
             f"baseline {table.systems[0]}",
             f"per {noun}: each candidate against {table.systems[0]} {each}; "
             f"intervals {first.joint} at {_format_level(first.level)} over the {tasks} "
             f"{nouns}, p {_ADJUST_NAMES[first.adjust]}-adjusted across them"]
    with_runs = any(task.runs for task in result.tasks)    # the runs column only then
    rows = tuple([task.task, f"{task.n:,}", c.candidate,
                  _format_point(c.analysis.accuracy_a, c.analysis.ci_a),
                  _format_point(c.analysis.accuracy_b, c.analysis.ci_b),
                  _format_gap(c.analysis.gap, percent, beside=c.decision.interval),
                  _format_interval(c.decision.interval, percent, _margin(c.decision)),
                  c.analysis.test.name, _format_p(c.analysis.p), _format_p(c.decision.p),
                  "too small" if _slice_needs(task, c.decision) else c.decision.word]
                 + ([task.runs or "one run each"] if with_runs else [])
                 for task in result.tasks for c in task.comparisons)
    header = [table.slices if table.slices else "task", "items", "candidate",
              "base", "cand", "gap", f"{_format_level(first.level)} CI", "test", "p",
              f"{_ADJUST_SHORT[first.adjust]} p", "verdict", "runs"]
    lines.append(_Grid(tuple(header[:len(rows[0])]), rows, frozenset({1, 3, 4, 5, 8, 9})))
    if result.tasks[0].rates:
        lines.append("each class's precision (of the items predicted as it) and recall (of its "
                     "items):")
        lines.append(_Grid(("class", "candidate", "base P", "base R", "cand P", "cand R"), tuple(
            [task.task, c.candidate, *(_round_fixed(v, 3) for v in rate)]
            for task in result.tasks for c, rate in zip(task.comparisons, task.rates)),
            frozenset({2, 3, 4, 5})))
    lines += [f"too small to judge: {task.task} ({task.n:,} items): even were every item to "
              f"favour one system, its {_ADJUST_NAMES[first.adjust]}-adjusted p could not fall "
              f"below {_format_decimal(first.alpha)}; it would take {needed:,} items at this "
              "family's level" for task in result.tasks if (needed := _slice_needs(task, first))]
    unsettled = [f"{task.task}{f' ({c.candidate})' if len(table.systems) > 2 else ''}"
                 for task in result.tasks for c in task.comparisons
                 if not c.decision.p_settled or not all(_signs_held(c.decision.interval))]
    lines += [f"within Monte Carlo error: {', '.join(unsettled)}: an interval end within its "
              f"error of 0, or a p of {_format_decimal(first.alpha)}, is not read as past it"
              ] if unsettled else []
    worse = [(task, c) for task in result.tasks for c in task.comparisons
             if c.decision.word == "worse"] if table.slices else []
    head = [f"worse in {len(worse)} {'class(es)' if noun == 'class' else 'slice(s)'} of "
            f"{table.slices} ({_format_level(first.level)} {first.joint}): " + "; ".join(
                f"{task.task} {_format_gap(c.analysis.gap, percent, beside=c.decision.interval)} "
                f"{_format_interval(c.decision.interval, percent, _margin(c.decision))}"
                + (f" ({c.candidate})" if len(table.systems) > 2 else "")
                for task, c in worse)] if worse else []
    if first.gate is not None and table.slices:
        regressed = _regressions(result)
        head.append(f"gate over the slices: FAIL: {len(regressed)} slice(s) shown worse than "
                    f"the margin by their simultaneous intervals "
                    f"({', '.join(t for t, _ in regressed)})" if regressed else
                    "gate over the slices: no slice is shown worse than the margin")
    how = {"strata": f"each {noun} a stratum (its items resampled within it, so each {noun} "
                     "keeps its size)",
           "clusters": f"each {noun} a cluster (resampled whole)",
           "macro": f"each {noun} weighted equally, the mean of the {noun}s' means (each a "
                    "stratum, resampled within itself)",
           "items": "items pooled plainly (" + ("a metric's resamples are not held per slice"
                                                if table.gold is not None else
                                                "runs and task strata together are not "
                                                "supported") + ")",
           "f1": "macro-F1", "recall": _METRIC_NAMES[
               result.pooled[0].analysis.metric or "accuracy"]}
    head.append(f"{'overall' if table.slices else 'pooled'} over all {table.n:,} items, "
                f"{how[result.pool]}:")
    pooled = [f"  {block}" if isinstance(block, str) else      # nested, two spaces further in
              block._replace(indent=block.indent + 2) if isinstance(block, _Grid)
              else _Pre(tuple(f"  {line}" for line in block.lines))
              for block in _comparison_document(report.pooled)]
    return head + pooled + lines


def _slice_needs(task: TaskComparison, decision: Decision) -> int | None:
    """The units a task or slice would need to be judged at all (``too_small``)."""
    design = task.comparisons[0].analysis.design
    units = design.clusters if design is not None and design.clusters else task.n
    return _too_small(units, decision.family, decision.alpha)


def _tasks_json(report: _TasksReport) -> dict:
    """A whole harness run: the pooled comparisons, then each task's."""
    body = {**_comparison_json(report.pooled), "kind": "tasks", "pool": report.result.pool,
            "by": report.table.slices}
    body["tasks"] = [{"task": task.task, "items": task.n, "runs": task.runs,
                      "too_small": _slice_needs(task, task.comparisons[0].decision),
                      "comparisons": [
        {"baseline": c.baseline, "candidate": c.candidate, **_analysis_json(c.analysis),
         "p_holm": c.p_holm, "verdict": c.decision.word, "decision": c.decision.to_json(),
         **({"precision": {"a": float(rate[0]), "b": float(rate[2])},
             "recall": {"a": float(rate[1]), "b": float(rate[3])}} if rate else {})}
        for c, rate in itertools.zip_longest(task.comparisons, task.rates)]}
        for task in report.result.tasks]
    if report.table.slices and "gate_passed" in body:
        regressed = _regressions(report.result)
        body["regressed"] = [{"slice": t, "candidate": c} for t, c in regressed]
        body["gate_passed"] = body["gate_passed"] and not regressed
    return body


def _ledger_summary_document(report: _LedgerSummaryReport) -> list:
    summary, rows = report.summary, []
    for digest, entries, adjusted in summary.sets:
        for k, (entry, p_holm) in enumerate(zip(entries, adjusted), start=1):
            after = entry.verdict if Fraction(p_holm) < summary.alpha or entry.verdict in (
                "cannot tell", "borderline") else "cannot tell"
            rows.append([digest[:12], str(k), entry.time, entry.baseline, entry.candidate,
                         _format_gap(Fraction(entry.gap), entry.percent), _format_p(entry.p),
                         _format_p(p_holm), entry.verdict, after])
    header = ("test set", "#", "time", "baseline", "candidate", "gap", "p", "Holm p", "verdict",
              "after Holm")
    return [f"ledger {summary.path}: {len(summary.sets)} test set(s), {len(rows)} comparison(s); "
            f"p adjusted by Holm over every comparison on each test set, alpha "
            f"{_format_decimal(summary.alpha)}",
            _Grid(header, tuple(rows), frozenset({1, 5, 6, 7}))]


# --- Leaderboards ---

def _ranks_text(ranks: tuple) -> str:
    return str(ranks[0]) if ranks[0] == ranks[1] else f"{ranks[0]}-{ranks[1]}"


def _board_headline(board: Leaderboard, table: Table, incomplete=()) -> str:
    """The first line: tiers, whom the leader is told apart from, runs that did not finish."""
    n_text = f"{table.n:,} {'battles' if board.metric in SCALES else 'items'}" + (
        f" ({'; '.join(incomplete)})" if incomplete else "")
    top, count = board.standings[0], len(board.standings)
    beaten = sum(p.apart for p in board.pairs if top.system in (p.first, p.second))
    head, level = f"leaderboard of {count} systems on {n_text}: ", _format_level(board.confidence)
    if beaten == 0:
        return (f"{head}no system is told apart from the leader, {_printable(top.system)} "
                f"({level} joint): one tier")
    return (f"{head}{max(s.tier for s in board.standings)} tiers; the leader, "
            f"{_printable(top.system)}, is told apart from {beaten} of the other {count - 1} "
            f"({level} joint)")


def _board_method(board: Leaderboard, params: dict) -> str:
    pairs, level = len(board.pairs), _format_level(board.confidence)
    critical = (f"critical value {board.critical:.3f} +-{board.critical_error:.3f} from "
                f"{board.draws:,} draws, seed {params['seed']}" if board.draws else
                f"critical value {board.critical:.3f}, exact: one pair to compare")
    adjusted = f"p adjusted by {_ADJUST_NAMES[board.adjust]} over {pairs} pairs"
    if board.metric in SCALES:
        how = "bootstrap" if "bootstrap covariance" in board.design else "robust" if \
            "robust covariance" in board.design else "model-based"
        return (f"method: {board.design}; ratings by maximum likelihood (Newton's method), on "
                f"the {'Elo' if board.metric == 'elo' else 'log-odds'} scale; ranks and tiers "
                f"from simultaneous {level} max-|t| intervals on all {pairs} gaps ({critical}); "
                f"each pair's test: Wald z on the {how} s.e., {adjusted}; each rating's "
                f"interval: normal, {how} s.e., relative to the anchor's")
    tests = ", ".join(sorted({p.test.name for p in board.pairs}))
    return (f"method: ranks and tiers from simultaneous {level} intervals on all {pairs} gaps, "
            f"the max-|t| intervals of the gaps' joint normal approximation (covariance "
            f"{'from' if board.metric else 'exact over'} {board.design}; {critical}); each "
            f"pair's test: {tests}, {adjusted}; each score's interval: "
            + ("Wilson" if board.binary and "clusters" not in board.design and
               "runs" not in board.design else "normal, " + (
                   "bootstrap" if board.metric else "design-based") + " standard error"))


def _leaderboard_document(report: _LeaderboardReport) -> list:
    board, table = report.board, report.table
    unit = "battles" if board.metric in SCALES else "items"
    lines = [_board_headline(board, table, table.incomplete)]
    lines += [f"warning: {w}" for w in (*table.warnings, *board.warnings)]
    level = _format_level(board.confidence)
    places = 1 if board.metric == "elo" else 3
    rows = [[_ranks_text(s.ranks), s.system, _round_fixed(s.score, places),
             s.interval.as_proportions(places), str(s.tier), s.groups] for s in board.standings]
    lines.append(_Grid(("rank", "system", _METRIC_NAMES.get(board.metric, "score"),
                        f"{level} CI", "tier", "groups"), tuple(rows), frozenset({0, 2})))
    lines.append(f"groups: systems that share a letter are not told apart ({level} joint), "
                 "those that share none are; tiers are greedy, so a tier boundary alone is not "
                 "a separation" if board.standings[0].groups else "groups: more than 52 letters "
                 "would be needed; the pairs say which systems are told apart")
    out_of_order = [(above, below) for x, above in enumerate(board.standings)
                    for below in board.standings[x + 1:] if below.tier < above.tier]
    if out_of_order:
        above, below = out_of_order[0]
        lines.append(f"note: tiers are not in score order: {below.system} (tier {below.tier}) is "
                     f"not told apart from its tier's leader, while {above.system} above it is; a "
                     "system measured less precisely can share a tier that a closer one does not")
    order = [s.system for s in board.standings]
    pairs = board.pairs if report.details else [board.pair(*two) for two in zip(order, order[1:])]
    lines.append(f"pairs told apart: {sum(p.apart for p in board.pairs)} of {len(board.pairs)} "
                 f"({level} joint); {'every pair' if report.details else 'next to each other'}:")
    lines += [f"  {p.first} - {p.second}: "
              f"{_format_gap(p.gap, board.percent, beside=p.interval)} "
              f"{_format_interval(p.interval, board.percent)}"
              f" ({level} joint); {p.test.name} {_p_equals(p.test.p)}, "
              f"{_ADJUST_NAMES[board.adjust]} {_format_p(p.p_adjusted)}: "
              f"{'told apart' if p.apart else 'not told apart'}" for p in pairs]
    if report.slices is not None:
        lines.append(f"by {table.slices}: each system's score and its {level} interval in each "
                     "slice (marginal; compare --by tells gaps apart slice by slice)")
        rows = []
        for label, n, scores in report.slices:
            shown = {system: f"{_round_fixed(score, 3)} {interval.as_proportions(3)}"
                     for system, score, interval in scores}
            rows.append([label, f"{n:,}"] + [shown[system] for system in order])
        lines.append(_Grid((table.slices, "items", *order), tuple(rows), frozenset({1})))
    position = _first_position(table) if isinstance(table, Battles) else None
    lines += [_position_line(position)[2:]] if position else []
    separate = f"to separate the top two ({order[0]}, {order[1]})"
    if board.separate is not None:
        alone, jointly = board.separate
        separate += (f" with {_format_level(board.target_power)} power: about {alone:,} "
                     f"{unit[:-1]}{'s' * (alone != 1)} as a pair alone, {jointly:,} within this "
                     f"board's {level} joint intervals (normal approximation, from the observed "
                     "gap and its variance)")
    else:
        separate += (": every item scores them the same distance apart, so any number of "
                     "items does" if board.pair(*order[:2]).apart else
                     ": not planned in items, since the runs' own variance does not shrink with "
                     "them (plan --runs plans items x runs)" if "runs" in board.design else
                     ": they score the same here, which no number of items can tell apart")
    lines += [separate, *_dropped_lines(table), _board_method(board, report.params)]
    if report.details:
        lines += _input_lines(table, report.params["seed"], None)[:-1]
    else:
        lines.append(f"n={table.n:,} {unit} from {_input_names(table)}; --details for every "
                     "pair and the inputs")
    return lines


def _label_plan_document(report: _LabelPlanReport) -> list:
    p, plan = report.params, report.plan

    def labels(n):
        return f"{n:,} labels" if n is not None else f"more than the {plan.items:,} items"
    return [f"human labels for a {_format_level(plan.confidence)} judge-corrected interval of "
            f"+-{_round_fixed(plan.half_width * 100, 1)} pts on the gap B - A (accuracies "
            f"A={_format_decimal(p['acc_a'])} B={_format_decimal(p['acc_b'])}, correlation "
            f"{_format_decimal(p['corr'])}), a judge agreeing with people on "
            f"{_round_fixed(plan.agreement * 100, 1)}% of answers, {plan.items:,} judged items:",
            f"  with the judge (PPI++ at its best lambda): {labels(plan.with_judge)}",
            f"  people alone: {labels(plan.alone)}",
            f"  the judge's and people's gaps correlate at {plan.correlation:.3f} on an item",
            "assumes the judge errs independently on each answer, as often on right answers as "
            "on wrong ones; compare on a labelled pilot tests it (its calibration line replays "
            "the interval at your numbers)"]


def _judged_passed(report: _JudgedReport) -> bool | None:
    return None if report.margin is None else report.result.interval.lo > report.margin


def _judged_document(report: _JudgedReport) -> list:
    """The corrected verdict, the people-only and judge-only gaps beside it, the judge's worth."""
    r, percent, level = report.result, report.percent, _format_level(report.result.confidence)

    def shown(pair):
        return (f"{_format_gap(Fraction(pair[0]), percent, beside=pair[1])} "
                f"{_format_interval(pair[1], percent)}")
    gap = _format_gap(Fraction(r.gap), percent, beside=r.interval)
    ci = f"judge-corrected {level} CI {_format_interval(r.interval, percent)}"
    below = "is below" if r.p < 1 - r.confidence else "is not below"
    decided = f"the z test's {_p_equals(r.p)} {below} {_format_decimal(1 - r.confidence)}"
    lines = [f"verdict: {r.verdict}. B is likely {r.verdict} than A ({gap}): the {ci} excludes "
             f"0 and {decided}." if r.verdict != "cannot tell" else
             f"verdict: cannot tell. The {ci} includes 0 and {decided}, so the observed {gap} "
             "may be noise."]
    rate, replays = r.coverage or (1.0, 1)
    error = math.sqrt(max(rate * (1 - rate), 1e-12) / replays)
    if r.interval.lo == r.interval.hi:
        lines.append("warning: the corrected interval has zero width: on every labelled item "
                     "the people's gap and the judge's are constant, so the normal interval "
                     "says nothing of its error; label more varied items")
    elif rate < float(r.confidence) - max(0.01, 2 * error):
        lines.append(f"warning: at {r.labelled:,} human labels the corrected interval covered "
                     f"{_percent(rate)} of {replays:,} replays simulated "
                     f"from these data (Monte Carlo s.e. {error * 100:.1f}%), short of its "
                     f"{level}: label more items, or read it as wider than it is")
    if (passed := _judged_passed(report)) is not None:
        margin = _format_gap(Fraction(report.margin), percent)
        lower = _format_gap(r.interval.lo, percent)
        lines.append(f"gate: {'PASS' if passed else 'FAIL'} (at {margin}): the lower end of the "
                     f"judge-corrected {level} CI, {lower}, is {'' if passed else 'not '}above "
                     f"{margin}")
    lines += [f"  judge-corrected gap B - A (PPI++, lambda={r.tuning:.3f}): "
              f"{shown((r.gap, r.interval))} from {r.labelled:,} items people scored and "
              f"{r.items:,} the judge scored",
              f"  people's scores alone ({r.labelled:,} items): {shown(r.human)}",
              f"  the judge's alone ({r.items:,} items): {shown(r.judge)}; the judge's bias on "
              f"the gap (judge - people): {shown(r.bias)}",
              f"  with the judge the interval is as narrow as about {r.effective:,.0f} human "
              f"labels alone would make it ({r.labelled:,} used)"]
    for label, name, (kind, first, second) in zip("AB", r.systems, r.agreement):
        lines.append(f"  judge and people on {label} = {name}: " + (
            f"agree on {_percent(first)} of items, Cohen's kappa "
            f"{second:.3f}" if kind == "kappa" else
            f"correlation {'undefined' if first is None else f'{first:.3f}'}, judge - people "
            f"{_format_gap(Fraction(second), percent)} on average"))
    if report.slices is not None:
        lines.append(f"by {report.params['by']}: each slice's judge-corrected gap "
                     f"(marginal {level} intervals; p adjusted by "
                     f"{_ADJUST_NAMES[report.params['adjust']]} across the slices)")
        rows = [[str(label), f"{n:,}"] + (
            ["", "", "", "", "too few labels to correct"] if s is None else
            [f"{s.labelled:,}", _format_gap(Fraction(s.gap), percent, beside=s.interval),
             _format_interval(s.interval, percent), _format_p(p), _slice_word(s, p)])
            for label, n, s, p in report.slices]
        lines.append(_Grid(("slice", "items", "labelled", "gap B - A", f"{level} CI",
                            f"{_ADJUST_SHORT[report.params['adjust']]} p", "verdict"),
                           tuple(rows), frozenset({1, 2, 3})))
    lines += _ledger_lines(report)
    lines.append("calibration: not replayed (calibration=0)" if r.coverage is None else
                 f"calibration: the corrected interval covered {_percent(rate)} of {replays:,} "
                 f"replays simulated from these data at {r.labelled:,} labels and "
                 f"{r.items - r.labelled:,} judged-only items")
    lines.append(f"n={r.items:,} items from {report.table.path} ({r.labelled:,} with human "
                 "scores); prediction-powered inference (PPI++, Angelopoulos, Duchi and Zrnic "
                 f"2023), normal intervals; seed {report.params['seed']}")
    return lines


def _slice_word(result: JudgeCorrected, p_adjusted: float) -> str:
    """A slice's verdict: its own, where its adjusted p is below the level's alpha."""
    return result.verdict if p_adjusted < 1 - result.confidence else "cannot tell"


def _judged_json(report: _JudgedReport) -> dict:
    r = report.result

    def pair(value):
        return {"gap": value[0], "interval": value[1].to_json()}
    return {"systems": list(r.systems), "labelled": r.labelled, "items": r.items,
            "verdict": r.verdict, "gap": r.gap, "interval": r.interval.to_json(), "p": r.p,
            "tuning": r.tuning, "human_only": pair(r.human), "judge_only": pair(r.judge),
            "judge_bias": pair(r.bias), "effective_labels": r.effective,
            "agreement": [dict(zip(("kind", "value", "second"), a)) for a in r.agreement],
            "coverage": None if r.coverage is None else {"rate": r.coverage[0],
                                                         "replays": r.coverage[1]},
            "gate_passed": _judged_passed(report), "input": report.table.to_json(),
            "ledger": None if report.ledger is None else dataclasses.asdict(report.ledger),
            "slices": None if report.slices is None else [
                {"slice": label, "items": n, "labelled": None if s is None else s.labelled,
                 "gap": None if s is None else s.gap,
                 "interval": None if s is None else s.interval.to_json(),
                 "p": None if s is None else s.p, "p_adjusted": p,
                 "verdict": None if s is None else _slice_word(s, p)}
                for label, n, s, p in report.slices]}


def _leaderboard_json(report: _LeaderboardReport) -> dict:
    board, table = report.board, report.table
    return {"headline": _board_headline(board, table),
            "systems": [{"system": s.system, "score": s.score, "interval": s.interval.to_json(),
                         "ranks": list(s.ranks), "tier": s.tier, "groups": s.groups}
                        for s in board.standings],
            "pairs": [{"first": p.first, "second": p.second, "gap": p.gap,
                       "interval": p.interval.to_json(),
                       "test": {"name": p.test.name, "p": p.test.p}, "p_adjusted": p.p_adjusted,
                       "apart": p.apart, "differing": p.differing} for p in board.pairs],
            "by": table.slices,
            "slices": None if report.slices is None else [
                {"slice": label, "items": n, "scores": [
                    {"system": system, "score": score, "interval": interval.to_json()}
                    for system, score, interval in scores]} for label, n, scores in report.slices],
            "tiers": max(s.tier for s in board.standings),
            "joint": {"confidence": board.confidence, "critical_value": board.critical,
                      "critical_error": board.critical_error, "draws": board.draws,
                      "design": board.design},
            "adjust": board.adjust,
            "separate_top_two": None if board.separate is None else {
                "power": board.target_power, "items_alone": board.separate[0],
                "items_jointly": board.separate[1]},
            "warnings": list(table.warnings) + list(board.warnings),
            **({"position": _first_position(table)} if isinstance(table, Battles) else {}),
            "method": _board_method(board, report.params),
            "input": {"files": [s.to_json() for s in table.sources],
                      "systems": list(table.systems), "items": table.n, "dropped": table.dropped,
                      "dropped_note": table.dropped_note, "incomplete": list(table.incomplete)}}


# --- Pictures: self-contained SVG, no dependencies ---

class _Svg:
    """A tiny SVG canvas with a plot frame and data coordinates."""

    def __init__(self, width, height, xrange, yrange, margin=(70, 30, 70, 60)):
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = margin
        (self.x0, self.x1), (self.y0, self.y1) = xrange, yrange
        self.parts = []

    def x(self, value):
        return self.left + (value - self.x0) / (self.x1 - self.x0) * (
            self.width - self.left - self.right)

    def y(self, value):
        return self.height - self.bottom - (value - self.y0) / (self.y1 - self.y0) * (
            self.height - self.top - self.bottom)

    def add(self, element: str):
        self.parts.append(element)

    @staticmethod
    def ticks(lo: float, hi: float, count: int = 6) -> list:
        """Round tick values covering [lo, hi]."""
        raw = max(hi - lo, 1e-12) / count
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
        value, ticks = math.ceil(lo / step) * step, []
        while value <= hi + step * 1e-9:
            ticks.append(round(value, 10))
            value += step
        return ticks

    def text(self, x, y, content, size=12, anchor="middle", extra=""):
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"'
                 f'{extra}>{html.escape(content)}</text>')

    def line(self, x1, y1, x2, y2, stroke="#333", width=1.0, dash=None):
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                 f'stroke="{stroke}" stroke-width="{width}"{dashes}/>')

    def axes(self, xticks, yticks, xlabel, ylabel, xfmt=str, yfmt=str):
        bottom, left = self.height - self.bottom, self.left
        self.line(left, bottom, self.width - self.right, bottom)
        self.line(left, self.top, left, bottom)
        for tick in xticks:
            self.line(self.x(tick), bottom, self.x(tick), bottom + 5)
            self.text(self.x(tick), bottom + 20, xfmt(tick))
        for tick in yticks:
            self.line(left - 5, self.y(tick), left, self.y(tick))
            self.text(left - 8, self.y(tick) + 4, yfmt(tick), anchor="end")
        self.text((left + self.width - self.right) / 2, self.height - 15, xlabel, size=13)
        self.text(18, (self.top + bottom) / 2, ylabel, size=13,
                  extra=f' transform="rotate(-90 18 {(self.top + bottom) / 2:.1f})"')

    def svg(self, title: str) -> str:
        head = (f'<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
                f'font-family="Helvetica, Arial, sans-serif">\n'
                f'<title>{html.escape(title)}</title>\n'
                f'<rect width="{self.width}" height="{self.height}" fill="white"/>\n')
        return head + "\n".join(self.parts) + "\n</svg>\n"


def svg_histogram(result: Analysis, true_gap=None, bins: int = 40) -> str:
    """The gap's bootstrap distribution, the interval shaded; 0, observed and true gap marked."""
    dist = result.paired_distribution
    scale = len(dist.sums) if dist.monte_carlo else 100      # counts, or percent of the mass
    rows = [(lo, hi, share * scale) for lo, hi, share in _histogram_bins(dist, bins)]
    unit = 100 if result.percent else 1
    ends = [float(value) * unit for value in (rows[0][0], rows[-1][1], 0, result.gap, true_gap)
            if value is not None]                     # the bars, 0 and the gaps marked
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.05 or 1.0
    tallest = max(count for _, _, count in rows)
    canvas = _Svg(760, 440, (lo - pad, hi + pad), (0, tallest * 1.15))
    ci_lo, ci_hi = float(result.paired.lo) * unit, float(result.paired.hi) * unit
    canvas.add(f'<rect x="{canvas.x(ci_lo):.1f}" y="{canvas.top}" '
               f'width="{canvas.x(ci_hi) - canvas.x(ci_lo):.1f}" '
               f'height="{canvas.y(0) - canvas.top:.1f}" fill="#dbe9f6"/>')
    for left, right, count in rows:
        x0, x1 = canvas.x(float(left) * unit), canvas.x(float(right) * unit)
        inside = left + (right - left) / 2 in result.paired
        canvas.add(f'<rect x="{x0:.1f}" y="{canvas.y(count):.1f}" '
                   f'width="{max(x1 - x0 - 1, 0.5):.1f}" '
                   f'height="{canvas.y(0) - canvas.y(count):.1f}" '
                   f'fill="{"#3b75af" if inside else "#9bb8d3"}"/>')
    canvas.axes(canvas.ticks(lo - pad, hi + pad), canvas.ticks(0, tallest * 1.1, 5),
                "gap B - A (accuracy points)" if result.percent else "gap B - A (score units)",
                "resamples" if dist.monte_carlo else "% of the distribution",
                xfmt=lambda v: f"{v:+g}" if v else "0", yfmt=lambda v: f"{v:g}")
    top = canvas.top
    canvas.line(canvas.x(0), top, canvas.x(0), canvas.y(0), stroke="#555", width=1.5, dash="5,4")
    canvas.text(canvas.x(0), top - 6, "0")
    gap = float(result.gap) * unit
    canvas.line(canvas.x(gap), top + 14, canvas.x(gap), canvas.y(0), stroke="#222", width=1.5,
                dash="2,3")
    canvas.text(canvas.x(gap), top + 10, f"observed {gap:+.1f}")
    if true_gap is not None:
        truth = float(true_gap) * unit
        canvas.line(canvas.x(truth), top + 28, canvas.x(truth), canvas.y(0), stroke="#c0392b",
                    width=2)
        canvas.text(canvas.x(truth), top + 24, f"true gap {truth:+.1f}", extra=' fill="#c0392b"')
    canvas.text(canvas.width / 2, 22, "Paired bootstrap distribution of the gap "
                f"{_distribution_words(dist).lstrip(', ')}", size=15)
    canvas.text(canvas.width / 2, 40, f"shaded: {_format_percent(result.confidence)} CI "
                f"{_format_interval(result.paired, result.percent)}", extra=' fill="#2c5d8a"')
    return canvas.svg("Paired bootstrap distribution of the accuracy gap")


def svg_power_curve(report: _SweepReport) -> str:
    """Simulated power (with 95% Monte Carlo bars), the analytic curves, the target and its n."""
    result = report.sweep
    plan = PowerPlan(result.copula.cells, report.params["confidence"])
    ns = [row.n for row in result.rows] + ([result.n_needed] if result.n_needed else [])
    top_n = max(ns) * 1.08
    canvas = _Svg(760, 440, (0, top_n), (0, 1.0))
    grid = [top_n * i / 200 for i in range(1, 201)]
    for paired, colour, dash in ((False, "#999", "6,4"), (True, "#3b75af", None)):
        points = " ".join(f"{canvas.x(n):.1f},{canvas.y(plan.power(max(2, n), paired)):.1f}"
                          for n in grid)
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        canvas.add(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{dashes}/>')
    target = float(result.target_power)
    canvas.line(canvas.x(0), canvas.y(target), canvas.x(top_n), canvas.y(target),
                stroke="#c0392b", dash="5,4")
    canvas.text(canvas.x(top_n) - 4, canvas.y(target) - 6, f"target {100 * target:g}%",
                anchor="end", extra=' fill="#c0392b"')
    if result.n_needed:
        canvas.line(canvas.x(result.n_needed), canvas.y(0), canvas.x(result.n_needed),
                    canvas.y(target), stroke="#c0392b", dash="5,4")
        canvas.text(canvas.x(result.n_needed) + 4, canvas.y(0.04), f"n={result.n_needed:,}",
                    anchor="start", extra=' fill="#c0392b"')
    for n, cov in [(row.n, row.simulated) for row in result.rows] + (
            [(result.n_needed, result.confirmation)] if result.confirmation is not None else []):
        rate, se = float(cov.excludes_zero_rate), cov.standard_error(cov.excludes_zero_rate)
        canvas.line(canvas.x(n), canvas.y(max(0, rate - 1.96 * se)), canvas.x(n),
                    canvas.y(min(1, rate + 1.96 * se)), stroke="#222", width=1.5)
        canvas.add(f'<circle cx="{canvas.x(n):.1f}" cy="{canvas.y(rate):.1f}" r="4" '
                   f'fill="#222"/>')
    canvas.axes(canvas.ticks(0, top_n), [0, 0.2, 0.4, 0.6, 0.8, 1.0], "items in the eval set (n)",
                "power (interval excludes 0)", xfmt=lambda v: f"{v:,.0f}",
                yfmt=lambda v: f"{100 * v:.0f}%")
    # the legend: the two analytic curves and the simulated points
    legend = [("#3b75af", None, "analytic, paired"), ("#999", "6,4", "analytic, unpaired")]
    for i, (colour, dash, label) in enumerate(legend):
        y = canvas.top + 14 + 18 * i
        canvas.line(canvas.left + 14, y, canvas.left + 44, y, stroke=colour, width=2, dash=dash)
        canvas.text(canvas.left + 50, y + 4, label, anchor="start")
    y = canvas.top + 14 + 18 * len(legend)
    canvas.add(f'<circle cx="{canvas.left + 29}" cy="{y}" r="4" fill="#222"/>')
    canvas.text(canvas.left + 50, y + 4, "simulated, \u00b11.96 Monte Carlo s.e.", anchor="start")
    copula = result.copula
    canvas.text(canvas.width / 2, 22, f"Power to detect a {format_pts(copula.true_gap)} gap "
                f"(A={_format_decimal(copula.acc_a)}, B={_format_decimal(copula.acc_b)}, "
                f"corr={_format_decimal(copula.corr)})", size=15)
    return canvas.svg("Power of the paired bootstrap interval by eval-set size")


def svg_forest(report) -> str:
    """A forest plot: a leaderboard's scores, intervals, ranks, tiers (shaded) and groups, or
    each task's or slice's gaps and simultaneous intervals, the overall gap dashed."""
    if isinstance(report, _LeaderboardReport):
        board, marks = report.board, ()
        percent, title = board.percent, "Leaderboard: scores, intervals, ranks and tiers"
        rows = [(_printable(s.system)[:32], s.score, s.interval,
                 f"rank {_ranks_text(s.ranks)}, tier {s.tier}, group {s.groups or '-'}",
                 s.tier % 2 == 0) for s in board.standings]
        heading = (f"{_format_level(board.confidence)} interval of each score; ranks jointly, "
                   "tiers shaded in turn")
        xlabel = "score (points)" if percent else "score"
    else:
        percent, several = report.table.proportions, len(report.table.systems) > 2
        rows = [(_printable(f"{task.task} ({task.n:,})" + (f", {c.candidate}" if several else ""))
                 [:36], c.analysis.gap, c.decision.interval,
                 "too small" if _slice_needs(task, c.decision) else c.decision.word, False)
                for task in report.result.tasks for c in task.comparisons]
        first = report.result.tasks[0].comparisons[0].decision
        pooled = float(report.pooled.comparisons[0].analysis.gap) * (100 if percent else 1)
        noun = "slice" if report.table.slices else "task"
        heading = (f"gap B - A per {noun}, {_format_level(first.level)} {first.joint} "
                   "intervals; dashed: the overall gap")
        xlabel, title = "gap (points)" if percent else "gap", f"Gap per {noun}"
        marks = ((0.0, "#999", None), (pooled, "#c0504d", "6,4"))     # lines under the rows
    unit = 100 if percent else 1
    ends = [float(e) * unit for row in rows for e in (row[2].lo, row[2].hi)] + [
        value for value, _, _ in marks]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.05 or 1.0
    canvas = _Svg(900, 90 + 26 * len(rows), (lo - pad, hi + pad), (len(rows) + 0.5, 0.5),
                  margin=(230, 190, 50, 50))
    bottom = canvas.height - canvas.bottom
    for value, stroke, dash in marks:
        canvas.line(canvas.x(value), canvas.top, canvas.x(value), bottom, stroke=stroke, dash=dash)
    for index, (label, point, interval, note, shaded) in enumerate(rows, start=1):
        y = canvas.y(index)
        if shaded:
            canvas.add(f'<rect x="10" y="{y - 13:.1f}" width="{canvas.width - 20}" height="26" '
                       'fill="#f1f4f8"/>')
        x0, x1 = (canvas.x(float(e) * unit) for e in (interval.lo, interval.hi))
        canvas.line(x0, y, x1, y, stroke="#3b75af", width=2.5)
        canvas.add(f'<circle cx="{canvas.x(float(point) * unit):.1f}" cy="{y:.1f}" '
                   f'r="5" fill="#1f4e79"/>')
        canvas.text(canvas.left - 10, y + 4, label, anchor="end")
        canvas.text(canvas.width - canvas.right + 12, y + 4, note, anchor="start")
    canvas.line(canvas.left, bottom, canvas.width - canvas.right, bottom)
    for tick in canvas.ticks(lo - pad, hi + pad):
        canvas.line(canvas.x(tick), bottom, canvas.x(tick), bottom + 5)
        canvas.text(canvas.x(tick), bottom + 18, f"{tick:g}")
    canvas.text(canvas.width / 2, 24, heading, size=15)
    canvas.text((canvas.left + canvas.width - canvas.right) / 2, canvas.height - 8, xlabel)
    return canvas.svg(title)


# --- Rendering: a document in each format; one table of report type, document and JSON ---

def _text(document: list) -> str:
    """For a terminal: tables padded; an input's control characters (forged lines) escaped."""
    lines = []
    for block in document:
        if isinstance(block, _Grid):             # columns padded to their widest cell
            rows = [[_printable(cell) for cell in row] for row in (block.header, *block.rows)]
            widths = [max(len(row[i]) for row in rows) for i in range(len(block.header))]
            lines += [" " * block.indent + "  ".join(
                cell.rjust(w) if i in block.right else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
        else:
            lines += [_printable(block)] if isinstance(block, str) else list(block.lines)
    return "\n".join(lines) + "\n"


def _markdown(document: list) -> str:
    """For a pull request: first line bold, details a list, pipe tables, inputs inert (_md)."""
    lines = []
    for index, block in enumerate(document):
        if isinstance(block, _Grid):
            lines += ["", "| " + " | ".join(map(_md, block.header)) + " |",
                      "|" + "".join("---:|" if i in block.right else "---|"
                                    for i in range(len(block.header)))]
            lines += ["| " + " | ".join(map(_md, row)) + " |" for row in block.rows] + [""]
        elif isinstance(block, _Pre):
            lines += ["", "```", *block.lines, "```", ""]
        elif block.startswith("  "):
            lines.append(f"- {_md(block.strip())}")
        else:
            lines += ["", f"**{_md(block)}**" if index == 0 else _md(block)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines).strip("\n")) + "\n"


def _html(document: list) -> str:
    """For a notebook: a paragraph per line, tables and preformatted text as HTML."""
    def row(cells, tag):
        return "<tr>" + "".join(f"<{tag}>{html.escape(_printable(cell))}</{tag}>"
                                for cell in cells) + "</tr>"
    parts = []
    for block in document:
        if isinstance(block, _Grid):
            parts.append("<table>" + row(block.header, "th")
                         + "".join(row(cells, "td") for cells in block.rows) + "</table>")
        elif isinstance(block, _Pre):
            parts.append("<pre>" + html.escape("\n".join(block.lines)) + "</pre>")
        else:
            parts.append(f"<p>{html.escape(_printable(block.strip()))}</p>")
    return "\n".join(parts) + "\n"


# One row per report type: its document, its JSON body (a dict built from its fields; the
# smallest written here) and the JSON's source (None: the report's own).
_RENDERERS = {
    Report: (_comparison_document, _comparison_json, None),
    _TasksReport: (_tasks_document, _tasks_json, "tasks"),
    _LedgerSummaryReport: (_ledger_summary_document, lambda report: {"test_sets": [
        {"test_set": digest, "comparisons": [
            {"time": e.time, "baseline": e.baseline, "candidate": e.candidate, "gap": e.gap,
             "p": e.p, "p_holm": p, "verdict": e.verdict} for e, p in zip(entries, adjusted)]}
        for digest, entries, adjusted in report.summary.sets]}, "ledger summary"),
    _CalibrationTableReport: (_calibration_table_document, lambda report: {"rows": [
        {"acc_a": float(row.acc_a), "acc_b": float(row.acc_b), "n": row.n,
         "recommended": row.recommended(report.table.confidence),
         "coverage": row.coverage.to_json(), "null": row.null.to_json()}
        for row in report.table.rows]}, "calibration table"),
    _SweepReport: (_sweep_document, _sweep_json, "sweep"),
    _LabelPlanReport: (_label_plan_document, lambda report: {
        "with_judge": report.plan.with_judge, "alone": report.plan.alone,
        "correlation": report.plan.correlation, "items": report.plan.items}, "label plan"),
    _AccuracyPlanReport: (_accuracy_plan_document, lambda report: {"n_needed": {
        "wald": report.plan.wald, "wilson": report.plan.wilson,
        "clopper_pearson": report.plan.clopper_pearson}}, "accuracy plan"),
    _PowerPlanReport: (_power_plan_document, _power_plan_json, "power plan"),
    _LeaderboardReport: (_leaderboard_document, _leaderboard_json, "leaderboard"),
    _JudgedReport: (_judged_document, _judged_json, "judge-corrected comparison"),
}


def render(report, output: str = "text") -> str:
    """The report as text for a terminal, one JSON object, markdown for a pull request, or
    HTML for a notebook: the same document in each, never with an input's control character
    (an ANSI escape in a column name is shown escaped; JSON escapes everything it must)."""
    if output not in OUTPUTS:
        raise ToolError(f"unknown output {output!r}; choose one of {', '.join(OUTPUTS)}")
    if type(report) not in _RENDERERS:
        raise ToolError(f"render() takes a report, not {type(report).__name__}")
    if output == "json":
        return json.dumps(_json_dict(report), indent=2) + "\n"
    return {"text": _text, "markdown": _markdown, "html": _html}[output](
        _RENDERERS[type(report)][0](report))


JSON_SCHEMA = 2       # the JSON's layout: 2 puts each comparison in "comparisons" alone


def _json_dict(report) -> dict:
    """The report's JSON: the schema, the tool's version, the kind of report, its body."""
    def plain(value):               # exact numbers as floats, tuples as lists
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        if isinstance(value, (Fraction, _Unusable)):
            return _json_default(value)
        return value
    _, build, source = _RENDERERS[type(report)]
    body, source = build(report), source or report.source
    params = {key: value for key, value in report.params.items() if value is not None}
    return plain({"schema": JSON_SCHEMA, "version": __version__,
                  "kind": body.pop("kind", source), "source": source, "params": params, **body})


# === The Python API: compare, leaderboard, read, plan, simulate, calibrate, ledger ===
#
# One function per subcommand, called by a notebook, a test suite and the command line: its
# keywords (the tool's defaults) make one _Request, checked once (_validate: errors name
# keywords from Python, flags on the command line) and run (_run: the report, and the files
# that wait for it).  A Result prints as the text report, shows as markdown or HTML in a
# notebook and gives its JSON (to_dict).

@dataclass(frozen=True)
class Result:
    """A comparison, a plan or a simulation, as the command line reports it.

    For a comparison the first candidate's numbers are at hand -- ``verdict`` (the word),
    ``sentence``, ``gap``, ``interval`` (the one the verdict read), ``p`` and ``test``,
    ``n``, ``method`` -- and every candidate's in ``comparisons``.  ``str()`` is the text
    report, ``to_dict()`` the JSON; a notebook shows it as markdown or HTML.
    """

    report: object

    @property
    def board(self) -> Leaderboard | None:
        """A leaderboard's standings and pairs (None for other results)."""
        return self.report.board if isinstance(self.report, _LeaderboardReport) else None

    @property
    def comparisons(self) -> tuple:
        report = self.report.pooled if isinstance(self.report, _TasksReport) else self.report
        return report.comparisons if isinstance(report, Report) else ()

    def _first(self, value, judged):
        """The first candidate's *value*, or a judge-corrected result's *judged*."""
        if isinstance(self.report, _JudgedReport):
            return judged(self.report.result)
        return value(self.comparisons[0]) if self.comparisons else None

    verdict = property(lambda self: self._first(lambda c: c.decision.word, lambda r: r.verdict))
    sentence = property(lambda self: self._first(_verdict_sentence,
                                                 lambda r: str(self).splitlines()[0]))
    gap = property(lambda self: self._first(lambda c: c.analysis.gap, lambda r: r.gap))
    interval = property(lambda self: self._first(lambda c: c.decision.interval,
                                                 lambda r: r.interval))
    p = property(lambda self: self._first(lambda c: c.decision.p, lambda r: r.p))
    test = property(lambda self: self._first(lambda c: c.analysis.test.name,
                                             lambda r: "z (PPI++)"))
    n = property(lambda self: self._first(lambda c: c.analysis.n, lambda r: r.items))
    method = property(lambda self: self._first(lambda c: _method_text(c.analysis),
                                               lambda r: "prediction-powered (PPI++)"))

    @property
    def passed(self) -> bool | None:
        """Did every candidate clear the gate (None: no gate was asked for)?  With slices, no
        slice may be shown worse than the margin either."""
        if isinstance(self.report, _JudgedReport):
            return _judged_passed(self.report)
        gates = [c.decision.gate for c in self.comparisons if c.decision.gate is not None]
        sliced = isinstance(self.report, _TasksReport) and self.report.table.slices
        return (all(g.passed for g in gates) and not (
            sliced and _regressions(self.report.result))) if gates else None

    def to_dict(self) -> dict:
        """The JSON, as Python values (built from the report's fields)."""
        return _json_dict(self.report)

    def __str__(self) -> str:
        return render(self.report, "text")

    def _repr_markdown_(self) -> str:
        return render(self.report, "markdown")

    def _repr_html_(self) -> str:
        return render(self.report, "html")

    def __repr__(self) -> str:
        if not self.comparisons:
            return f"Result({str(self).splitlines()[0][:200]!r})"
        c = self.comparisons[0]
        r = c.analysis
        return (f"Result(verdict={c.decision.word!r}, gap={_format_gap(r.gap, r.percent)}, "
                f"interval={_format_interval(c.decision.interval, r.percent)}, "
                f"{_p_equals(c.decision.p)} ({r.test.name}), n={r.n:,}, "
                f"method={_method_text(r)!r}, candidates={len(self.comparisons)})")


# --- scores given from Python: taken by their type ---

def _score_of(value, where: str):
    """One score from Python: a number or a bool (numpy's too; a float by its shortest decimal,
    as a CSV holds it) or text; None, NaN, pandas' NA and numpy's masked value are missing."""
    value = _plain_number(value)
    if value is None:
        return _MISSING
    if isinstance(value, (bool, int, Fraction, str)):
        return parse_score(str(int(value)) if isinstance(value, bool) else value, where)
    if not isinstance(value, float):
        raise ToolError(f"{where}: {_shorten(repr(value))} is not a score")
    if math.isnan(value):
        return _MISSING
    if not math.isfinite(value):
        raise ToolError(f"{where}: {value} is not a finite number")
    return parse_score(repr(float(value)), where)


def _python_id(value, where: str):
    """An item id or label given from Python: text or an integer (numpy's too)."""
    value = _plain_number(value)
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        item = _item_id(value)
        if item is not _MISSING:
            return item
    raise ToolError(f"{where}: {_shorten(repr(value))} is not an id (ids and labels are text "
                    "or integers)")


def _index_of(values):
    """A pandas Series' index (``.index`` that is not a method), else None."""
    index = getattr(values, "index", None)
    return None if index is None or callable(index) else index


def _keyed(values) -> bool:
    """Values that name their items: a mapping (any kind) or an indexed sequence."""
    return isinstance(values, collections.abc.Mapping) or _index_of(values) is not None


def _sequence(values, where: str) -> list:
    """Values given from Python in item order, as a list (not text, a set or a DataFrame)."""
    if isinstance(values, (str, bytes, bytearray)) or not hasattr(values, "__iter__"):
        raise ToolError(f"{where}: {_shorten(repr(values))} is not a sequence of values in item "
                        "order (or a mapping from item id)")
    if isinstance(values, collections.abc.Set):
        raise ToolError(f"{where}: a set has no order; give a list in item order or a mapping "
                        "from item id")
    if getattr(values, "columns", None) is not None and _index_of(values) is not None:
        raise ToolError(f"{where}: a table of several columns; give one column (a Series) per "
                        "system")
    try:
        try:
            return list(values)
        except OverflowError:                    # a length past any list's: only a hint
            return list(iter(values))
    except TypeError as error:                   # a 0-d array: iterable in name only
        raise ToolError(f"{where}: {error}") from None
    except Exception as error:                   # the values' own iterator failed
        raise ToolError(f"{where}: reading the values raised {type(error).__name__}: "
                        f"{_printable(str(error))[:200]}") from None


def _per_item(values, ids, where: str) -> list:
    """``(item, value)`` pairs: by key, by a Series' index, or in order against *ids* (1..n)."""
    if isinstance(values, collections.abc.Mapping):
        return [(_python_id(key, where), value) for key, value in values.items()]
    index = _index_of(values)
    values = _sequence(values, where)
    keys = range(1, len(values) + 1) if ids is None else ids
    if index is not None:
        keys = [_python_id(key, f"{where}, index") for key in _sequence(index, where)]
    if len(keys) != len(values):
        raise ToolError(f"{where} has {len(values):,} values for {len(keys):,} ids")
    return list(zip(keys, values))


def _is_runs(data, where: str) -> bool:
    """A list of runs (each a mapping, a Series or a sized sequence that is not text), not one
    run's scores?  Refused: a list of pairs (an (id, score) pair looks like a run of two items)
    and more runs than items (each item's samples look like runs)."""
    if not isinstance(data, (list, tuple)) or not data:
        return False
    for run in data:
        if not _keyed(run):
            if isinstance(run, (str, bytes, bytearray)):
                return False
            try:
                len(run)
            except TypeError:                    # a 0-d array: sized in name only
                return False
    if all(not _keyed(run) and len(run) == 2 for run in data):
        raise ToolError(f"{where}: every element holds two values: for (id, score) pairs give "
                        "dict(pairs); runs of two items each go as mappings from item id")
    items = max(len(run) for run in data)
    if len(data) > items:
        raise ToolError(f"{where}: {len(data):,} runs of {items:,} "
                        "items? A list of lists is runs (each a list of every item's score); "
                        "give each item's mean over its samples, or the runs")
    return True


def _labels(column, ids, keyed: bool, items, positions, label: str) -> tuple:
    """Each item's cluster or stratum label: by item id from a mapping or Series, by position
    from a sequence (which then goes with scores in item order, of its length)."""
    if _keyed(column):
        if not keyed and ids is None:
            raise ToolError(f"{label} names its items (a mapping or a Series); the scores are "
                            "in item order: give both one way")
        by_item = dict(_per_item(column, None, label))
    else:
        if keyed:
            raise ToolError(f"{label} is in item order; the scores name their items (mappings "
                            "or Series): give both one way")
        by_item = dict(_per_item(column, ids, label))
        if len(by_item) != positions:
            raise ToolError(f"{label} has {len(by_item):,} labels for {positions:,} items")
    lacking = [item for item in items if item not in by_item]
    if lacking:
        raise ToolError(f"{label} gives no label for item {_first(lacking)}")
    return tuple(_python_id(by_item[item], label) for item in items)


def _table_of(systems, names, ids, clusters, strata, on_missing: str) -> Table:
    """Scores given from Python as a Table, joined as run files are: named items sorted (their
    order cannot change a seeded result), items in order by position, of one length."""
    def item_order(item) -> tuple:          # one order whatever the order given: numbers, text
        return (isinstance(item, str), item)

    if ids is not None:
        ids = [_python_id(i, "ids") for i in _sequence(ids, "ids")]
        if len(set(ids)) != len(ids):
            raise ToolError("ids repeats an id")
    names = _names(names, "names") or (("baseline", "candidate") if len(systems) == 2 else (
        "baseline",) + tuple(f"candidate {k}" for k in range(1, len(systems))))
    if len(names) != len(systems) or len(set(names)) != len(names) or not all(names):
        raise ToolError(f"names needs {len(systems)} different names, the baseline first")
    named, kinds, lengths = [], set(), set()
    for data, name in zip(systems, names):
        shown = _shorten(name, 60)[1:-1]
        runs = list(data) if _is_runs(data, shown) else [data]
        labelled = []
        for number, run in enumerate(runs, start=1):
            where = shown + (f" run {number}" if len(runs) > 1 else "")
            kinds.add(_keyed(run))
            if _keyed(run) and ids is not None:
                raise ToolError(f"{where} names its items (a mapping or a Series); ids goes "
                                "with values in item order")
            pairs = _per_item(run, ids, where)
            lengths.add(len(pairs))
            scores = {}
            for item, value in pairs:
                score = _score_of(value, f"{where}, item {_first([item])}")
                if score is _MISSING:
                    if on_missing != "drop":
                        raise ToolError(f"{where}: item {_first([item])} has no score; use "
                                        "on_missing='drop' to leave such items out")
                elif item in scores:
                    raise ToolError(f"{where}: item {_first([item])} appears twice")
                else:
                    scores[item] = score
            labelled.append((str(number) if len(runs) > 1 else name, scores))
        named.append(_SystemRuns(name, tuple(labelled)))
    if len(kinds) > 1:
        raise ToolError("the scores mix mappings or Series (joined on their items) with plain "
                        "sequences (in item order); give every system one way")
    keyed = kinds == {True}
    if not keyed and len(lengths) > 1:
        raise ToolError(f"scores in item order must be of one length, got "
                        f"{', '.join(f'{n:,}' for n in sorted(lengths))} (a missing score is "
                        "None, not a shorter list)")
    order = dict.fromkeys(item for system in named for _, scores in system.runs
                          for item in scores)
    if keyed:
        order = sorted(order, key=item_order)
    joined = _join_runs(named, list(order), on_missing)
    positions = max(lengths)
    labels = [None if column is None else
              _labels(column, ids, keyed, joined.items, positions, label)
              for column, label in ((clusters, "clusters"), (strata, "strata"))]
    rows = sorted(zip(joined.items, *joined.columns, *filter(None, labels)),
                  key=lambda row: item_order(row[0]))        # the same data, the same digest
    digest = hashlib.sha256(repr(rows).encode()).hexdigest()
    source = Source("<python>", digest, len(joined.items), tuple(names), "python")
    return Table(tuple(names), joined.columns, joined.items, (source,), joined.dropped,
                 "; ".join(joined.notes), labels[0], labels[1], joined.runs)


def _names(value, keyword: str) -> tuple | None:
    """Names from Python: a list (a name may hold a comma), or one text separated by commas."""
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(","))
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ToolError(f"{keyword} is a list of names, got {_shorten(repr(value))}")
    return tuple(part.strip() for part in value)


def _plain_number(value):
    """numpy's and pandas' scalars as Python's int, float or bool, their missing markers
    (``pd.NA``, ``np.ma.masked``) as None; anything else (complex too) as it is."""
    if value is None or isinstance(value, (bool, int, float, Fraction, str, complex)):
        return value
    if type(value).__name__ in ("NAType", "NaTType", "MaskedConstant"):    # pandas', numpy's
        return None
    decimal = sys.modules.get("decimal")          # a Decimal means decimal is imported
    if decimal is not None and isinstance(value, decimal.Decimal):
        return Fraction(value) if value.is_finite() else None if value.is_nan() else float(value)
    try:
        if getattr(getattr(value, "dtype", None), "kind", None) == "b":
            return bool(value)                   # numpy's bool (``preds == labels``)
        if hasattr(value, "__index__"):
            return operator.index(value)
        if isinstance(value, numbers.Real):      # float32's 0.9 is "0.9": its own shortest
            try:                                  # decimal, as a file would hold it
                return float(str(value))
            except ValueError:
                return float(value)
    except Exception:                            # a number type that will not convert
        return value
    return value


def _exact(value, name: str) -> Fraction:
    """A number given from Python, exactly (a float by its shortest decimal, as typed)."""
    value = _plain_number(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or \
            isinstance(value, float) and not math.isfinite(value):
        raise ToolError(f"{name} must be a finite number, got {_shorten(repr(value))}")
    return Fraction(parse_score(Fraction(repr(float(value))) if isinstance(value, float) else
                                Fraction(value), name))


# --- the request: every option of every entry point, taken once ---

_DEFAULT_ACC_PAIRS = ((Fraction("0.72"), Fraction("0.76")), (Fraction("0.95"), Fraction("0.95")),
                     (Fraction("0.98"), Fraction("0.99")))
_DEFAULT_TABLE_GRID = (30, 100, 500, 2000)


def _count(value, name: str) -> int:
    number = _exact(value, name)
    if number.denominator != 1:
        raise ToolError(f"{name} must be a whole number, got {_format_decimal(number)}")
    return number.numerator


# How a Python value is taken, by the option's kind (the command line's flags arrive
# already parsed by their types, and pass these checks unchanged).
_TAKERS = {**dict.fromkeys(("confidence", "min_delta", "corr", "acc_a", "acc_b", "icc", "run_sd",
                            "run_item_noise", "target_power", "half_width", "accuracy",
                            "judge_agreement"), _exact),
           **dict.fromkeys(("seed", "resamples", "permutations", "calibration", "draws",
                            "n_items", "replays", "cluster_size", "runs", "bootstrap"), _count),
           **dict.fromkeys(("systems", "names", "tasks", "id_col"), _names)}
_CHOICES = {"interval": INTERVALS, "accuracy_interval": _ACCURACY_INTERVALS,
            "engine": _ENGINE_CHOICES, "adjust": ADJUSTMENTS, "scale": SCALES,
            "pool": ("strata", "clusters", "macro"), "on_missing": ("error", "drop"),
            "input_format": _FORMATS, "output": OUTPUTS}


def _taken(name: str, value, default):
    """One option's Python value as the request holds it (None only where it is the default)."""
    value, where = _plain_number(value), _opt(name)
    if value is None:
        if default is None:
            return None
        raise ToolError(f"{where} takes a value (default {default!r}), not None")
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ToolError(f"{where} is True or False, got {_shorten(repr(value))}")
        return value
    if name in _TAKERS:
        return _TAKERS[name](value, where)
    if name in ("n_grid", "acc_pairs"):
        what = "a list of sizes" if name == "n_grid" else "a list of (A, B) accuracy pairs"
        if not isinstance(value, (list, tuple)) or name == "acc_pairs" and not all(
                isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in value):
            raise ToolError(f"{where} is {what}, got {_shorten(repr(value))}")
        if name == "n_grid":
            return tuple(_count(size, where) for size in value)
        return tuple((_exact(a, where), _exact(b, where)) for a, b in value)
    if name == "positive" and isinstance(value, numbers.Real) and not isinstance(value, bool):
        return str(_item_id(value))          # a class named by its number, as labels are read
    if not isinstance(value, str):
        raise ToolError(f"{where} is text, got {_shorten(repr(value))}")
    if name in _CHOICES and value not in _CHOICES[name]:
        raise ToolError(f"{where} is one of {', '.join(map(repr, _CHOICES[name]))}, "
                        f"got {_shorten(repr(value))}")
    return value


@functools.lru_cache(maxsize=None)
def _defaults(command: str) -> dict:
    """The keyword options of an entry point and their defaults, from its signature."""
    return {name: default for name, default in globals()[command].__kwdefaults__.items()
            if name not in ("ids", "clusters", "strata")}


def _request(command: str, options: dict, given=None, **outputs) -> _Request:
    """A request from an entry point's keyword values, each as _taken takes it.  *given*: the
    flags typed; from Python, the options whose value differs from the default."""
    defaults = _defaults(command)
    values = {name: _taken(name, options.get(name, default), default)
              for name, default in defaults.items()}
    if given is None:
        given = {name for name, value in values.items()
                 if value != _taken(name, defaults[name], defaults[name])}
    if values.get("metric") is not None and values["label_col"] is None:   # a log's metric
        if values["score_col"] is not None:
            raise ToolError(f"{_opt('metric')} and {_opt('score_col')} name one thing; give one")
        values.update(score_col=values["metric"], metric=None)
        given = set(given) - {"metric"} | {"score_col"}
    return _Request(command, frozenset(given), **values, **outputs)


def _python_paths(value) -> str | list:
    """A system given as a path, or as a list of paths (its runs)."""
    single = isinstance(value, (str, os.PathLike))
    paths = [os.fspath(p) for p in ([value] if single else value)]
    if any("\0" in p for p in paths):
        raise ToolError("a path holds a NUL character")
    return paths[0] if single else paths


def _is_paths(value) -> bool:
    """A path, or a list of paths (a system's runs); a list of numbers as text is scores."""
    if isinstance(value, (str, os.PathLike)):
        return True
    if not isinstance(value, (list, tuple)) or not value or \
            not all(isinstance(p, (str, os.PathLike)) for p in value):
        return False
    def number(text):
        try:
            return text.strip().lower() in _BINARY_TEXT or _parse_number(text.strip()) is not None
        except ToolError:                         # a number beyond the limits: still a number
            return True
    return not all(isinstance(p, str) and number(p) for p in value)


def _with_inputs(request: _Request, inputs, ids=None, clusters=None, strata=None) -> _Request:
    """The request with its inputs in place: a Table, paths to read, or scores from Python."""
    command = request.command
    labels = any(value is not None for value in (ids, clusters, strata))
    reading = [name for name in ("systems", "a_col", "b_col", "score_col", "id_col",
                                 "cluster_col", "strata_col", "run_col", "system_col",
                                 "input_format", "filter", "split", "tasks", "pool",
                                 "allow_different_tasks", "allow_different_targets",
                                 "allow_different_prompts", "allow_incomplete")
               if name in request.given]
    if len(inputs) == 1 and isinstance(inputs[0], list) and inputs[0] and isinstance(
            inputs[0][0], collections.abc.Mapping) and (kind := _battle_kind(inputs[0][0])):
        inputs = (battles([b for i, record in enumerate(inputs[0], start=1) for b in
                           _record_battles(kind, record, f"record {i}")], kind=kind,
                          positioned=kind in _POSITIONED),)
    if isinstance(inputs[0], (Table, Battles, Judged)):
        if len(inputs) > 1 or labels:
            raise ToolError(f"{command}(table) takes the table alone")
        if isinstance(inputs[0], (Battles, Judged)):    # systems picks the two compared
            reading = [name for name in reading if name != "systems"]
        if reading or "names" in request.given:
            raise ToolError(f"{(reading or ['names'])[0]} says how to read files; a "
                            f"{type(inputs[0]).__name__} has been read")
        return dataclasses.replace(request, table=inputs[0])
    if all(map(_is_paths, inputs)):
        if labels:
            raise ToolError("ids, clusters and strata go with scores given from Python; files "
                            "name theirs with id_col, cluster_col and strata_col")
        if len(inputs) == 1 and isinstance(inputs[0], (str, os.PathLike)):
            return dataclasses.replace(request, csv=_python_paths(inputs[0]))
        return dataclasses.replace(request, baseline=_python_paths(inputs[0]),
                                   candidate=tuple(_python_paths(p) for p in inputs[1:]))
    if any(isinstance(i, (str, os.PathLike)) for i in inputs):
        raise ToolError(f"{command} takes paths or scores, not both")
    if len(inputs) < 2:
        raise ToolError(f"{command} needs at least two systems' scores")
    if reading:
        raise ToolError(f"{reading[0]} says how to read files; these scores are given from "
                        "Python (clusters= and strata= give the labels)")
    try:
        table = _table_of(inputs, request.names, ids, clusters, strata, request.on_missing)
    except ToolError:
        raise
    except Exception as error:           # a value's own len, iteration or float: one ToolError
        raise ToolError(f"reading the values given raised {type(error).__name__}: "
                        f"{_printable(str(error))[:200]}") from None
    return dataclasses.replace(request, table=table)


# --- validate: checks only, in the order a reader would think of them ---

def _named(request: _Request, names) -> list:
    """Those of *names* the caller set, spelt as the caller spells them."""
    return [_opt(name) for name in names if name in request.given]


def _in_open_unit(value) -> bool:
    """Strictly between 0 and 1, also once rounded to a float (1e-400 and 1 - 1e-20 are not)."""
    return 0 < value < 1 and 0 < float(value) < 1


def _check_columns(r: _Request) -> None:
    """Options that name systems and columns: complete and consistent."""
    if r.system_col is not None:
        if r.score_col is None or r.systems is None and r.command == "compare":
            raise ToolError(f"{_opt('system_col')} reads a long file: it needs {_opt('score_col')}"
                            f" (the score column) and {_opt('systems')} (baseline first)")
        if _named(r, ("a_col", "b_col")):
            raise ToolError(f"{_opt('system_col')} reads a long file: name the systems with "
                            f"{_opt('systems')}")
    if r.names is not None:
        count = (len(r.systems) if r.systems else 2) if r.csv is not None else 1 + len(r.candidate)
        if r.command == "leaderboard" and r.csv is not None and not r.systems:
            count = len(r.names)               # every column: counted once the file is read
        if not all(r.names):
            raise ToolError(f"{_opt('names')} holds an empty name")
        if len(r.names) != count:
            raise ToolError(f"{_opt('names')} needs {count} names (baseline first), got "
                            f"{len(r.names)}")
        if len(set(r.names)) != len(r.names):
            raise ToolError(f"{_opt('names')} repeats a name")
    if r.systems is not None:
        if _named(r, ("a_col", "b_col")):
            raise ToolError(f"{_opt('systems')} replaces {_opt('a_col')} and {_opt('b_col')}; "
                            "give one or the other")
        if len(r.systems) < 2 or not all(r.systems):
            raise ToolError(f"{_opt('systems')} needs a baseline and at least one candidate")


def _check_compare(r: _Request) -> None:
    """compare: one file with a column per system, or one file (or folder) per system."""
    if r.table is None:
        folder = r.csv not in (None, "-") and os.path.isdir(r.csv)
        one_file = _named(r, ("a_col", "b_col", "run_col", "system_col"))
        if folder and one_file:
            raise ToolError(f"{one_file[0]} names a column of one file; a folder of harness "
                            f"logs names its models with {_opt('systems')}")
        if r.baseline is None and not folder:
            for name in _named(r, ("tasks", "pool")):
                raise ToolError(f"{name} goes with harness folders or one file per system "
                                "(compare BASELINE CANDIDATE)")
            if r.score_col is not None and r.system_col is None:
                raise ToolError(f"{_opt('score_col')} names the score in one file per system "
                                f"(compare BASELINE CANDIDATE), or with {_opt('system_col')} "
                                "in a long file")
        elif r.baseline is not None:
            if _named(r, ("a_col", "b_col", "systems", "run_col", "system_col")):
                raise ToolError(f"{_opt('a_col')}, {_opt('b_col')}, {_opt('systems')}, "
                                f"{_opt('run_col')} and {_opt('system_col')} name columns of "
                                f"one file; with one file per system use {_opt('score_col')}")
        _check_columns(r)
    if r.human_scorer is not None and (r.table is not None or r.baseline is None):
        raise ToolError(f"{_opt('human_scorer')} names people's scores in a harness log or "
                        "file per system (compare BASELINE CANDIDATE); in one file they are the "
                        "SYSTEM.human columns")
    if r.human_scorer is not None and r.score_col in (None, r.human_scorer):
        raise ToolError(f"{_opt('human_scorer')} goes with the judge's scorer, "
                        f"{_opt('score_col')}, another one")
    designed = [name for name in ("cluster_col", "strata_col") if name in r.given]
    if designed and r.engine == "counts":
        raise ToolError(f"{_opt(designed[0])} needs the per-item engine: the counts engine "
                        "resamples plain items only")
    if designed and r.interval == "score":
        raise ToolError(f"{_opt('interval', 'score')} covers plain 0/1 items; it does not "
                        f"apply with {_opt(designed[0])}")
    if r.cluster_col is not None and r.cluster_col == r.strata_col:
        raise ToolError(f"{_opt('cluster_col')} and {_opt('strata_col')} name the same column")
    if "by" in r.given and "strata_col" in r.given:
        raise ToolError(f"{_opt('by')} makes each slice a stratum of the overall comparison; "
                        f"give {_opt('by')} or {_opt('strata_col')}, not both")
    scores = {r.a_col, r.b_col, r.score_col} | set(r.systems or ()) | (
        {CSV_COLUMNS[1], CSV_COLUMNS[2]} if r.systems is None and r.a_col is None else set())
    for name in designed:
        column = getattr(r, name)
        if column in scores:
            raise ToolError(f"{_opt(name)} names a score column ({_shorten(column)}); clusters "
                            "and strata come from a label column")
    if r.command == "compare" and r.plot is not None and (
            r.systems and len(r.systems) > 2 or len(r.candidate) > 1):
        raise ToolError(f"{_opt('plot')} draws one comparison; it does not apply to several "
                        "candidates")
    _check_metric(r)
    if "engine" in r.given and r.resamples is None:
        raise ToolError(f"{_opt('engine')} chooses how resamples are drawn; give "
                        f"{_opt('resamples')} too (without it compare uses the exact or "
                        "saddlepoint bootstrap where they apply, which draw nothing)")


def _check_metric(r: _Request) -> None:
    """label_col, metric and positive: a metric of the confusion matrix, of one CSV file."""
    if r.label_col is None:
        for name in _named(r, ("positive",)):
            raise ToolError(f"{name} names a class of {_opt('label_col')}'s labels; give it too")
        return
    if r.csv is None or r.table is not None:
        raise ToolError(f"{_opt('label_col')} reads one CSV file with a column of predictions "
                        "per system")
    for name in _named(r, ("score_col", "system_col", "run_col", "cluster_col",
                           "lower_is_better", "exact")):
        raise ToolError(f"{name} does not apply to a metric of predictions ({_opt('label_col')})")
    if r.label_col in (r.systems or ()) or r.label_col in (r.a_col, r.b_col):
        raise ToolError(f"{_opt('label_col')} {_shorten(r.label_col)} is also named as a "
                        "system: the true labels are not a system's predictions")
    if r.command == "leaderboard" and (r.strata_col or r.by):
        raise ToolError(f"{_opt('strata_col' if r.strata_col else 'by')} does not apply to a "
                        f"leaderboard of predictions ({_opt('label_col')})")
    if r.strata_col not in (None, r.label_col):
        raise ToolError(f"{_opt('strata_col')} with {_opt('label_col')} resamples within "
                        "each label: name the label column")
    if (r.metric or "accuracy") not in METRICS:
        raise ToolError(f"{_opt('metric')} with {_opt('label_col')} is one of "
                        f"{', '.join(METRICS)}; got {_shorten(r.metric)}")
    if r.metric in _CLASS_METRICS and r.positive is None:
        raise ToolError(f"{_opt('metric')} {r.metric} is of one class: name it with "
                        f"{_opt('positive')} CLASS")
    if r.metric not in _CLASS_METRICS and r.positive is not None:
        raise ToolError(f"{_opt('positive')} names the class of {_opt('metric')} f1, precision "
                        "or recall, and goes with them alone")


def _check_runs(r: _Request) -> None:
    for name in _named(r, ("run_sd", "run_item_noise")):
        if "runs" not in r.given:
            raise ToolError(f"{name} goes with {_opt('runs')}")
    if "runs" not in r.given:
        return
    if not 0 <= r.run_sd < Fraction(1, 4):
        raise ToolError(f"{_opt('run_sd')} must lie in [0, 0.25), got {_format_decimal(r.run_sd)}")
    if not 0 <= r.run_item_noise <= 1:
        raise ToolError(f"{_opt('run_item_noise')} must lie in [0, 1], got "
                        f"{_format_decimal(r.run_item_noise)}")
    for acc in filter(_in_open_unit, (r.acc_a, r.acc_b)):
        _run_shift_sd(r.run_sd, acc)


def _check_simulate(r: _Request) -> None:
    _check_runs(r)
    if r.runs > 1 and (r.cluster_size > 1 or r.engine == "counts"):
        raise ToolError(f"{_opt('runs')} simulates runs item by item: no "
                        f"{_opt('cluster_size')}, the stream engine")
    if r.engine == "counts" and r.write_csv is not None:
        raise ToolError(f"{_opt('write_csv')} needs per-item scores; the counts engine "
                        f"simulates cell counts only (use {_opt('engine', 'stream')})")
    if "icc" in r.given and "cluster_size" not in r.given:
        raise ToolError(f"{_opt('icc')} goes with {_opt('cluster_size')}")
    if "cluster_size" in r.given:
        if r.cluster_size < 1:
            raise ToolError(f"{_opt('cluster_size')} must be at least 1, got {r.cluster_size}")
        if r.engine == "counts":
            raise ToolError(f"{_opt('cluster_size')} simulates per item: it needs the stream "
                            f"engine (not {_opt('engine', 'counts')})")
        if r.exact:
            raise ToolError(f"{_opt('exact', True)} covers 0/1 items resampled one by one; it "
                            f"does not apply with {_opt('cluster_size')}")
        if not 0 <= r.icc <= 1:
            raise ToolError(f"{_opt('icc')} must be between 0 and 1, got {_format_decimal(r.icc)}")
        if r.gate:
            raise ToolError(f"{_opt('gate', True)} in a simulation needs plain items (not "
                            f"{_opt('cluster_size')})")


def _check_plan(r: _Request) -> None:
    """plan: one accuracy's half-width, a sweep over sizes, or the power at one size."""
    if r.judge_agreement is not None:
        others = sorted(r.given - {"judge_agreement", "half_width", "n_items", "acc_a",
                                   "acc_b", "corr", "confidence", "output", "json", "quiet"})
        if others or r.half_width is None:
            raise ToolError(f"{_opt('judge_agreement')} plans human labels for a "
                            f"{_opt('half_width')} among {_opt('n_items')} judged items" + (
                                f"; {', '.join(map(_opt, others))} do not apply" if others
                                else f": give {_opt('half_width')}"))
        if not Fraction(1, 2) <= r.judge_agreement <= 1 or not 0 < r.half_width < 1:
            raise ToolError(f"{_opt('judge_agreement')} is a share from 0.5 (no better than a "
                            f"coin) to 1, and {_opt('half_width')} a proportion above 0, like "
                            "0.03")
        _copula(r)
        return
    if r.half_width is not None:
        others = sorted(r.given - {"half_width", "accuracy", "confidence", "output", "json",
                                   "quiet"})
        if others:
            raise ToolError(f"{_opt('half_width')} plans one accuracy by formula; "
                            f"{', '.join(map(_opt, others))} do not apply to it")
        if not 0 < r.half_width < 1:
            raise ToolError(f"{_opt('half_width')} must be a proportion above 0, like 0.015, "
                            f"got {_format_decimal(r.half_width)}")
        if r.half_width < MIN_HALF_WIDTH:
            raise ToolError(f"{_opt('half_width')} must be at least "
                            f"{_format_decimal(MIN_HALF_WIDTH)} "
                            f"(+-{_format_decimal(MIN_HALF_WIDTH * 100)} pts), got "
                            f"{_format_decimal(r.half_width)}")
        accuracy = r.accuracy if r.accuracy is not None else Fraction(1, 2)
        if not _in_open_unit(accuracy):
            raise ToolError(f"{_opt('accuracy')} must be strictly between 0 and 1, "
                            f"got {_format_decimal(accuracy)}")
        return
    if r.accuracy is not None:
        raise ToolError(f"{_opt('accuracy')} goes with {_opt('half_width')}")
    _check_runs(r)
    if r.n_grid is not None:
        if "n_items" in r.given:
            raise ToolError(f"{_opt('n_grid')} replaces {_opt('n_items')}; give one of them")
        if r.runs > 1:
            raise ToolError(f"{_opt('runs')} plans items x runs at one size "
                            f"({_opt('n_items')}), not over {_opt('n_grid')}")
        _check_grid(r.n_grid, increasing=True)
        if r.replays < 1:
            raise ToolError(f"{_opt('n_grid')} simulates: {_opt('replays')} must be at least 1")
        return
    simulated = _named(r, ("replays", "resamples", "engine", "plot") + (
        ("seed",) if r.runs == 1 else ()))
    if simulated:
        raise ToolError(f"plan at one size ({_opt('n_items')}) is computed, not simulated; "
                        f"{', '.join(simulated)} {'go' if len(simulated) > 1 else 'goes'} with "
                        f"{_opt('n_grid')} (a simulated sweep)")


def _check_grid(grid, increasing: bool) -> None:
    if not grid:
        raise ToolError(f"{_opt('n_grid')} is empty")
    if min(grid) < 2 or max(grid) > MAX_N_ITEMS:
        raise ToolError(f"{_opt('n_grid')} sizes must lie between 2 and {MAX_N_ITEMS:,}, got "
                        f"{min(grid) if min(grid) < 2 else max(grid):,}")
    if increasing and any(a >= b for a, b in zip(grid, grid[1:])):
        raise ToolError(f"{_opt('n_grid')} must be strictly increasing, got "
                        f"{','.join(map(str, grid))}")


def _check_calibrate(request: _Request) -> None:
    _check_grid(_DEFAULT_TABLE_GRID if request.n_grid is None else request.n_grid,
                increasing=False)
    if request.acc_pairs == ():
        raise ToolError(f"{_opt('acc_pairs')} is empty")
    for a, b in request.acc_pairs or _DEFAULT_ACC_PAIRS:
        if not (_in_open_unit(a) and _in_open_unit(b)):
            raise ToolError(f"{_opt('acc_pairs')} accuracies must lie strictly between 0 and "
                            f"1, got {_format_decimal(a)}/{_format_decimal(b)}")
    if request.replays < 1:
        raise ToolError(f"calibrate simulates: {_opt('replays')} must be at least 1")


_CHECKS = {"compare": _check_compare, "simulate": _check_simulate, "plan": _check_plan,
           "calibrate": _check_calibrate, "ledger": lambda request: None,
           "leaderboard": _check_compare}


def _validate(request: _Request) -> _Request:
    """Raise ToolError (one line) for a bad value or combination; else return the request."""
    if request.json and request.output not in (None, "json"):
        raise ToolError(f"--json means --output json; it conflicts with --output {request.output}")
    if "min_delta" in request.given and not request.gate:
        raise ToolError(f"{_opt('min_delta')} is the margin of the gate; give "
                        f"{_opt('gate', True)} too")
    _CHECKS[request.command](request)
    options = _defaults(request.command)   # its numbers (read() checks as compare or leaderboard)
    if request.command == "leaderboard" and request.target_power <= Fraction(1, 2):
        raise ToolError(f"{_opt('target_power')} must be above 0.5 to plan items for it "
                        "(below it, the normal formula for the items needed no longer holds)")
    for name, low, high in (("n_items", 2, MAX_N_ITEMS), ("resamples", 1, MAX_RESAMPLES),
                            ("draws", 100, MAX_RESAMPLES), ("replays", 0, MAX_REPLAYS),
                            ("permutations", 1, MAX_PERMUTATIONS),
                            ("calibration", 0, MAX_REPLAYS), ("runs", 1, MAX_RUNS),
                            ("seed", 0, 10 ** MAX_NUMBER_CHARS), ("bootstrap", 0, MAX_RESAMPLES)):
        value = getattr(request, name) if name in options else None
        if value is not None and value < low:
            least = "0 or more" if low == 0 else f"at least {low}"
            raise ToolError(f"{_opt(name)} must be {least}, got {value}")
        if value is not None and value > high:
            raise ToolError(f"{_opt(name)} must be at most {high:,}, got {value:,}")
    if "confidence" in options and not 0 < request.confidence <= MAX_CONFIDENCE:
        raise ToolError(f"{_opt('confidence')} must lie above 0 and at most "
                        f"{_format_decimal(MAX_CONFIDENCE)} (a higher level's tails are too "
                        f"thin to resolve), got {_shorten(_format_decimal(request.confidence))}")
    for name in ("acc_a", "acc_b", "target_power"):
        value = getattr(request, name)
        if name in options and not _in_open_unit(value):
            close = " (so close that it rounds to 0 or 1)" if 0 < value < 1 else ""
            raise ToolError(f"{_opt(name)} must be strictly between 0 and 1{close}, got "
                            f"{_shorten(_format_decimal(value))}")
    if "corr" in options and not (-1 < request.corr < 1 and -1 < float(request.corr) < 1):
        raise ToolError(f"{_opt('corr')} must be strictly between -1 and 1, got "
                        f"{_format_decimal(request.corr)} (at +-1 both systems would share one "
                        "latent score and no item could separate them)")
    return request


# --- run: one function per subcommand, each returning its report and the files that wait ---

_NAME = "bootstrap_eval_deltas"


def _encodable(text: str, stream) -> str:
    """*text* as *stream* can encode it: unchanged, or with typographic characters spelled
    in ASCII (``…`` as ``...``) and anything else backslash-escaped."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        plain = text.translate(str.maketrans({
            "\u2026": "...", "\u00b1": "+-", "\u2212": "-", "\u00d7": "x", "\u221e": "infinity",
            "\u2014": "-", "\u2013": "-", "\u2264": "<=", "\u2265": ">=", "\u2248": "~",
            "\u2009": " ", "\u00a0": " "}))
        try:
            return plain.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:
            return plain.encode("ascii", "backslashreplace").decode("ascii")


def _say(message: str) -> None:
    """One line on stderr (if there is a stderr to write to)."""
    try:
        stream = sys.stderr
        stream.write(_encodable(f"{_NAME}: {_printable(message)}\n", stream))
        stream.flush()
    except (AttributeError, OSError, ValueError):
        pass


def _progress(request: _Request, label: str) -> _Progress:
    return _Progress(label, enabled=not request.quiet, delay=_PROGRESS_DELAY)


def _copula(r: _Request) -> Copula:
    return Copula(r.corr, r.acc_a, r.acc_b, r.cluster_size,
                  r.icc if r.cluster_size > 1 else Fraction(0), r.runs, r.run_sd, r.run_item_noise)


def _params(r: _Request, names: str) -> dict:
    """The request's values of *names* (separated by spaces), in order, for a report."""
    return {name: getattr(r, name) for name in names.split()}


def _simulation_params(r: _Request) -> dict:
    params = _params(r, "n_items corr acc_a acc_b seed resamples replays confidence engine "
                        "target_power interval")
    if r.command != "simulate":
        params["interval"] = None
    if r.cluster_size > 1:
        params.update(_params(r, "cluster_size icc"))
    if r.runs > 1:
        params.update(_params(r, "runs run_sd run_item_noise"))
    return params


def _run_plan(r: _Request, writes: list):
    """One accuracy's interval by formula; a power sweep over n_grid; or at one size: exact
    and analytic power, the items a target needs, half-widths (with runs, items x runs)."""
    if r.judge_agreement is not None:
        params = _params(r, "judge_agreement half_width n_items acc_a acc_b corr confidence")
        return _LabelPlanReport(params, plan_labels(_copula(r).cells, r.judge_agreement,
                                                    r.half_width, r.n_items, r.confidence))
    if r.half_width is not None:
        accuracy = r.accuracy if r.accuracy is not None else Fraction(1, 2)
        params = {"half_width": r.half_width, "accuracy": accuracy, "confidence": r.confidence}
        return _AccuracyPlanReport(params, plan_accuracy(accuracy, r.half_width, r.confidence))
    copula, params = _copula(r), _simulation_params(r)
    if r.n_grid is not None:
        engine = _choose_engine(r.engine, math.inf)            # a sweep: counts
        params.update(n_items=None, n_grid=list(r.n_grid), engine=engine)
        with _progress(r, "power sweep") as progress:
            result = sweep(random.Random(r.seed), copula, r.n_grid,
                           Settings(r.resamples, r.confidence, engine=engine),
                           replays=r.replays, target_power=r.target_power, progress=progress)
        return _SweepReport(params, result)
    params.update(replays=None, resamples=None, engine=None)
    plan = PowerPlan(copula.cells, r.confidence)
    return _PowerPlanReport(params, plan, _plan_summary(plan, r.n_items, r.target_power),
                            runs_plan(copula, r.confidence, random.Random(r.seed))
                            if copula.runs > 1 else None)


def _settings_from(r: _Request, calibration: int = 0, engine: str | None = None) -> Settings:
    """The resampling settings asked for (compare resamples only when resamples is given)."""
    return Settings(r.resamples, r.confidence, r.interval, engine or r.engine,
                    r.permutations, r.exact, r.accuracy_interval, calibration, adjust=r.adjust)


def _read_options(r: _Request, on_missing: str, progress=None) -> ReadOptions:
    return ReadOptions(r.input_format, on_missing, r.filter, r.split, progress,
                       r.allow_different_tasks, r.allow_incomplete, r.lower_is_better,
                       r.allow_different_targets, r.allow_different_prompts, r.pool)


def _read_input(r: _Request, progress=None) -> Table | Battles:
    """The user's scores: one file, one file or folder per system, or files of battles."""
    options = _read_options(r, r.on_missing, progress)
    systems = r.systems
    paths = [r.csv] if r.baseline is None else [r.baseline, *r.candidate]
    if sum(isinstance(path, str) and path == "-" for path in paths) > 1:
        raise ToolError("- (stdin) is given more than once; it can be read once: give the "
                        "other systems as files")
    seen = {}           # one file twice (a.csv and ./a.csv, - and /dev/stdin): A against A
    for path in paths:
        try:
            info = os.fstat(0) if path == "-" else os.stat(path)
        except (OSError, TypeError, ValueError):
            continue                        # not a path here: the reader says what it is
        other = seen.setdefault((info.st_dev, info.st_ino), path)
        if other is not path:
            raise ToolError(f"{_shorten(other)} and {_shorten(path)} are the same "
                            f"{'folder' if stat.S_ISDIR(info.st_mode) else 'file'}; give "
                            "each system its own")
    found = _battle_paths(paths, r.input_format)
    if found:
        return read_battles(found, options)
    if r.baseline is not None or r.csv != "-" and os.path.isdir(r.csv):
        groups = [_expand_paths(p) if isinstance(p, str) else p for p in
                  (r.baseline,) + tuple(r.candidate)] if r.baseline is not None else [[r.csv]]
        every = () if r.command == "leaderboard" else None     # every model a folder holds
        return read_runs(groups, RunsSpec(r.score_col, r.id_col or ("item",), r.cluster_col,
                                          r.by or r.strata_col, r.tasks, r.names,
                                          systems or every, r.by is not None), options)
    if r.command == "compare" and (r.label_col is None or r.a_col or r.b_col):
        systems = systems or (r.a_col or CSV_COLUMNS[1], r.b_col or CSV_COLUMNS[2])
    table = read_table(r.csv, TableSpec(systems or (), r.id_col, r.cluster_col,
                                        r.by or r.strata_col, r.run_col, r.system_col,
                                        r.score_col, r.label_col), options)
    if r.names is not None and len(r.names) != len(table.systems):
        raise ToolError(f"{_opt('names')} gives {len(r.names)} names for the "
                        f"{len(table.systems)} systems of {_printable(r.csv)}")
    return table if r.names is None else dataclasses.replace(table, systems=r.names)


def _ledger_after(r: _Request, table: Table, comparisons, writes: list) -> LedgerNote | None:
    """The ledger note the report prints; the append waits in *writes* until it is out."""
    if r.ledger is None:
        return None
    note, append = _ledger_append(r.ledger, _test_set_digest(table.ids, table.columns[0]),
                                  _comparison_entries(table, comparisons))
    writes.append(append)
    return note


# Rough costs on a 2-core machine of 2026, for the one line said before long work only.
_DRAWS_PER_SECOND = 3.5e7          # the stream engine's resampled items
_ITEMS_PER_SECOND = 7e5            # simulated items
_SIGNS_PER_SECOND = 8e8            # item x sign pattern of the Monte Carlo sign-flip test


def _say_if_long(seconds: float, what: str, shorter: str) -> None:
    """One line on stderr, terminal or not, before work of more than a minute."""
    if seconds > 60:
        minutes = f"{max(2, round(seconds / 60)):,} minutes" if seconds < 7200 else \
            f"{round(seconds / 3600):,} hours"
        _say(f"note: this will take about {minutes} ({what}); {shorter} shortens it")


def _refuse_idle_options(r: _Request, table: Table | Battles) -> None:
    """An option given that these data would ignore is refused, saying why (battles, as a
    board ranks them: systems and sources, no items)."""
    if isinstance(table, Battles):
        table = Table(table.systems, ((),) * len(table.systems), (), table.sources)
    formats, board = {s.format for s in table.sources}, r.command == "leaderboard"
    asked = {"permutations", "calibration"} & set(r.given)
    binary = bool(asked) and all(set(column) <= {0, 1} for column in table.columns)
    design = [name for name, labels in (("clusters", table.clusters), ("strata", table.strata),
                                        ("runs", table.runs)) if labels]
    logs, one = "applies to harness logs, and these inputs are not", table.tasks is None
    what = "real-valued" if not binary else "with " + " and ".join(design)
    for name, idle, why in (
            ("allow_different_tasks", not formats & {"lm-eval", "inspect", "helm"}, logs),
            ("allow_different_targets", not formats & {"lm-eval", "inspect", "helm"}, logs),
            ("allow_different_prompts", not formats & {"lm-eval", "helm"}, "applies to lm-eval "
             "and HELM logs (the harnesses that record each run's prompts), and these inputs "
             "are not"),
            ("allow_incomplete", "inspect" not in formats, "applies to Inspect logs (the "
             "harness that records whether a run ended), and these inputs are not"),
            ("pool", one, "pools the tasks of whole harness runs, and these inputs hold one task"),
            ("adjust", len(table.systems) == 2 and (board or one and table.gold is None),
             "adjusts p across candidates, tasks, slices or classes, and these inputs hold one "
             "comparison"),
            ("id_col", formats <= {"lm-eval", "inspect", "helm"}, "names a column of a file of "
             "scores; a harness log's items carry their own ids"),
            ("permutations", not board and one and binary and table.gold is None and not {
                "clusters", "runs"} & set(design), "sets the sign-flip test's random patterns; "
             "these 0/1 scores are tested by McNemar's exact test, which draws none"),
            ("permutations", board and table.gold is None, "sets the random swaps of a metric's "
             "board (predictions and labels); a board of scores or battles tests each pair by "
             "McNemar's exact test or the z test, which draw none"),
            ("calibration", one and r.calibration and (not binary or design), "measures the "
             "interval on 0/1 scores without clusters, strata or runs; these scores are " + what)):
        if idle and name in r.given:
            raise ToolError(f"{_opt(name, getattr(r, name))} does not apply here: it {why}")


def _table(r: _Request) -> Table:
    """The request's table, given from Python or read from its files: battles of the systems
    named, scores turned when lower is better, in slices (``by``)."""
    if r.table is not None:
        table = r.table
    else:
        with _progress(r, "reading (bytes)") as progress:
            table = _read_input(r, progress)
    if isinstance(table, Battles):
        idle = _named(r, _NOT_FOR_BATTLES) + [_opt(name) for name in ("lower_is_better", "by")
                                              if getattr(r, name)]
        if idle:
            raise ToolError(f"{idle[0]} goes with scores, not battles (a prompt's battles are "
                            "its cluster already)")
        if r.command == "compare":
            return battle_table(table, r.systems)
        if not r.systems:
            return table
        unknown = [name for name in r.systems if name not in table.systems]
        if unknown:                              # a leaderboard of the named systems only
            raise ToolError(f"no system {_shorten(unknown[0])} in the battles (systems: "
                            f"{_printable(', '.join(table.systems))[:300]})")
        keep = {table.systems.index(name) for name in r.systems}
        return battles([(prompt, table.systems[i], table.systems[j], share) for i, j, share, prompt
                        in zip(table.first, table.second, table.shares, table.prompts)
                        if i in keep and j in keep], kind=table.kind, positioned=table.positioned,
                       sources=table.sources, notes=table.notes)
    read = {source.format in ("lm-eval", "helm") for source in table.sources}
    if r.lower_is_better and len(read) > 1:
        raise ToolError(f"{_opt('lower_is_better', True)} with lm-eval's or HELM's logs beside "
                        "other files: give one kind of input for every system")
    if r.lower_is_better and read != {True}:     # those logs turned as they were joined
        columns, runs, note = _turn(table.columns, table.runs, table.proportions)
        table = dataclasses.replace(table, columns=columns, runs=runs, dropped_note="; ".join(
            filter(None, (table.dropped_note, note))))
    repeated = [name for name, count in collections.Counter(table.systems).items() if count > 1]
    if repeated:                                 # the same file given twice
        raise ToolError(f"two systems are named {_shorten(repeated[0])} (the same file twice?); "
                        f"give them {_opt('names')}")
    if r.by is None:
        return table
    if table.tasks is not None or table.runs is not None:    # by's slices: compared as tasks
        raise ToolError(f"{_opt('by')} slices the items of one file of scores; these are "
                        "several tasks or runs")
    if table.strata is None:
        raise ToolError(f"{_opt('by')} names a column of a file; with scores given from "
                        "Python it gives each item's slice (a list, or a mapping by item id)")
    lonely = [label for label, size in collections.Counter(table.strata).items() if size < 2]
    if lonely:
        raise ToolError(f"{len(lonely):,} slice(s) of {_shorten(r.by)} hold one item (first: "
                        f"{_shorten(str(lonely[0]))}); a slice needs two or more: merge them, "
                        f"or compare without {_opt('by')}")
    return dataclasses.replace(table, tasks=table.strata, strata=None, slices=r.by)


_NOT_FOR_BATTLES = ("cluster_col", "strata_col", "id_col", "names", "run_col", "label_col",
                    "system_col", "score_col", "a_col", "b_col", "on_missing", "metric",
                    "positive", "filter", "split", "tasks", "allow_constant")


def _metric_of(r: _Request, table: Table) -> tuple:
    """``(metric, positive)``: a log's own (lm-eval's f1 and mcc), else the request's, the
    positive class one the labels or predictions hold (a misspelt class is refused)."""
    if table.metric is not None:
        return table.metric
    positive = None if r.positive is None else _item_id(r.positive)
    classes = None if table.gold is None else set(table.gold).union(*table.columns)
    if positive is not None and classes is not None and positive not in classes:
        raise ToolError(f"{_opt('positive')} {_shorten(str(r.positive))} is not a class of the "
                        "labels or predictions (classes: "
                        f"{_printable(', '.join(map(str, _classes(classes))))[:200]})")
    return r.metric or "accuracy", positive


def _judged_logs(r: _Request) -> Judged:
    """Two systems' harness logs (or files, one per system) scored by a judge (``score_col``,
    every sample) and by people (``human_scorer``: some samples, Inspect's unscored or a blank
    elsewhere), checked as one test."""
    judge = _table(r)
    if len(judge.systems) != 2 or judge.runs is not None or \
            judge.tasks is not None and judge.slices is None:
        raise ToolError(f"{_opt('human_scorer')} compares two systems' logs of one task and one "
                        "run (epoch) each")
    options = _read_options(r, "drop")
    labels = []
    for group in (r.baseline, *r.candidate):
        human = read_runs([_expand_paths(group) if isinstance(group, str) else group],
                          RunsSpec(r.human_scorer, r.id_col or ("item",)), options)
        labels.append(dict(zip(human.ids, human.columns[0])))
    one = [item for item in judge.ids if (item in labels[0]) != (item in labels[1])]
    if one:
        raise ToolError(f"people scored one system but not the other on {len(one)} item(s) "
                        f"(first: {_first(one)}); a human score goes with both or neither")
    digest = hashlib.sha256("".join(s.sha256 for s in judge.sources).encode()).hexdigest()
    source = Source(" and ".join(s.path for s in judge.sources), digest,
                    sum(s.rows for s in judge.sources), (r.score_col, r.human_scorer), "judged")
    return Judged(judge.systems, judge.columns,
                  tuple(tuple(found.get(item) for item in judge.ids) for found in labels),
                  source, judge.ids, judge.tasks if judge.slices else None)


def _run_judged(r: _Request, writes: list) -> _JudgedReport:
    """Two systems' judge scores on every item and people's on some: the corrected gap."""
    allowed = ("allow_different_tasks", "allow_different_targets", "allow_different_prompts",
               "allow_incomplete")
    read = ("score_col", "id_col", "filter", "split") + allowed if r.human_scorer else ()
    unused = _named(r, [name for name in ("plot",) + _NOT_FOR_BATTLES + (
        "resamples", "permutations", "interval", "exact", "engine", "accuracy_interval",
        "pool") + allowed if name not in read])
    if unused or r.lower_is_better:
        raise ToolError(f"{unused[0] if unused else _opt('lower_is_better')} is not taken by a "
                        "judge-corrected comparison")
    if r.systems and len(set(r.systems)) != len(r.systems):
        raise ToolError(f"{_opt('systems')} names a system twice; name two systems")
    if isinstance(r.table, Judged):
        data = r.table
        if r.systems and tuple(r.systems) != data.systems:
            raise ToolError(f"this Judged holds {_printable(', '.join(data.systems))}; read the "
                            "file again with systems to choose others")
    elif r.human_scorer is not None:
        data = _judged_logs(r)
    else:
        with _progress(r, "reading (bytes)") as progress:
            data = read_judged(r.csv, r.systems, ReadOptions(progress=progress), r.by)
    percent = all(0 <= v <= 1 for column in data.judge + data.human for v in column
                  if v is not None)
    result = judge_corrected(data, random.Random(r.seed), r.confidence, r.calibration)
    margin = None if not r.gate else float(r.min_delta / 100 if percent else r.min_delta)
    params = _params(r, "seed confidence calibration" + (" gate min_delta" if r.gate else ""))
    note = None
    if r.ledger is not None:             # the corrected gap, on the items and A's judge scores
        ids = data.ids or tuple(range(1, len(data.judge[0]) + 1))
        note, append = _ledger_append(r.ledger, _test_set_digest(ids, data.judge[0]), [{
            "baseline": data.systems[0], "candidate": data.systems[1], "n": result.items,
            "gap": result.gap, "interval": result.interval.to_json(),
            "level": float(result.confidence), "p": result.p, "verdict": result.verdict,
            "percent": percent}])
        writes.append(append)
    slices = None
    if r.by is not None:
        if data.slices is None:
            raise ToolError(f"{_opt('by')} names a column of the file; a Judged read without "
                            "one has no slices")
        params.update(by=r.by, adjust=r.adjust)
        slices = judged_slices(data, random.Random(r.seed), r.confidence, r.adjust)
    return _JudgedReport(params, data.source, result, margin, percent, note, slices)


def _run_data(r: _Request, writes: list) -> Report:
    if isinstance(r.table, Judged) or r.human_scorer is not None or r.table is None and \
            r.baseline is None and _is_judged([r.csv], r.systems, r.input_format):
        return _run_judged(r, writes)
    table = _table(r)
    _refuse_idle_options(r, table)
    candidates = max(1, len(table.systems) - 1)        # the Monte Carlo work asked for, if long
    seconds = what = 0
    if r.resamples is not None:
        seconds += candidates * 5 * r.resamples * table.n / _DRAWS_PER_SECOND
        what = f"{r.resamples:,} resamples of {table.n:,} items"
    if r.permutations is not None:
        seconds += candidates * r.permutations * (2.5e-5 + table.n / _SIGNS_PER_SECOND)
        what = (what + " and " if what else "") + f"{r.permutations:,} sign patterns"
    _say_if_long(seconds, what, f"fewer {_opt('resamples')} or {_opt('permutations')} (or "
                                "none: the default methods need no Monte Carlo)")
    params = _params(r, "seed confidence interval accuracy_interval calibration resamples "
                        "engine permutations")
    if r.resamples is None:                      # None: did not apply
        params["engine"] = None
    metric, positive = _metric_of(r, table)
    if table.gold is not None:        # a metric's resamples: no calibration, no exact method
        params.update(metric=metric, calibration=0, resamples=r.resamples or RESAMPLES,
                      engine="counts", permutations=r.permutations or PERMUTATIONS)
    margin = None
    if r.gate and r.resamples is not None and r.resamples < _fewest_resamples(r.confidence):
        raise ToolError(f"{_opt('gate')} reads an interval's end, which {r.resamples:,} "
                        f"resamples cannot place at {_format_level(r.confidence)}: give "
                        f"{_opt('resamples')} {_fewest_resamples(r.confidence):,} or more, or "
                        "none (the default methods need no Monte Carlo)")
    if r.gate:      # battles: min_delta is the win rate's points above half; the gap is twice
        margin = r.min_delta / 100 if table.proportions and metric not in _SIGNED_METRICS \
            else r.min_delta
        margin *= 2 if table.preference is not None else 1
        params.update(gate=True, min_delta=r.min_delta)
    settings = dataclasses.replace(_settings_from(r, r.calibration), margin=margin)
    if table.tasks is not None:                  # a whole harness run: per task, and pooled
        params.update(tasks=len(set(table.tasks)), pool=r.pool or "strata")
        with _progress(r, "tasks") as progress:
            result = compare_tasks(table, random.Random(r.seed), settings, pool=r.pool or "strata",
                                   metric=metric, positive=positive, progress=progress)
        return _TasksReport(params, table, result,
                            _ledger_after(r, table, result.pooled, writes), r.details)
    averaged = metric in ("accuracy", "micro-f1", "macro-f1", "balanced-accuracy")
    if table.gold is not None and averaged and len(set(table.gold)) > _MAX_CLASS_ROWS:
        table = dataclasses.replace(table, dropped_note="; ".join(filter(None, (
            table.dropped_note, f"no per-class table: {len(set(table.gold)):,} classes in the "
            f"labels (it is given for up to {_MAX_CLASS_ROWS}); {_opt('metric')} f1 "
            f"{_opt('positive')} CLASS compares one class"))))
    elif table.gold is not None and averaged:
        by_class = dataclasses.replace(table, tasks=table.gold, slices=r.label_col)
        result = compare_classes(by_class, random.Random(r.seed), settings, metric=metric,
                                 within_classes=table.strata is not None)
        return _TasksReport(params, by_class, result,
                            _ledger_after(r, table, result.pooled, writes), r.details)
    with _progress(r, "resampling") as progress:
        comparisons = compare_systems(table, random.Random(r.seed), settings,
                                      progress=progress, metric=metric, positive=positive,
                                      within_classes=table.strata is not None)
    source = "runs" if r.baseline is not None else table.sources[0].format
    return Report(params, source, tuple(comparisons), table=table,
                  ledger=_ledger_after(r, table, comparisons, writes), details=r.details)


def _run_simulation(r: _Request, writes: list) -> Report:
    rng, copula = random.Random(r.seed), _copula(r)
    engine = _coverage_engine(r.engine, copula, r.n_items, r.replays, r.resamples)
    n, b, replays, runs = r.n_items, r.resamples, r.replays, r.runs      # runs: 1 or more
    stream = 5 * b * n / _DRAWS_PER_SECOND if 5 * b * n <= _STREAM_BUDGET else 5 * b * 4e-6
    per_replay = (runs * n / _ITEMS_PER_SECOND + runs * b * n / _DRAWS_PER_SECOND) \
        if engine == "stream" else b * 4e-6 + 1e-4
    _say_if_long(n / _ITEMS_PER_SECOND + stream + replays * per_replay,
                 f"{replays:,} replays x {b:,} resamples of {n:,} items",
                 f"fewer {_opt('replays')} (0 skips the loop) or {_opt('resamples')}")
    margin = r.min_delta / 100 if r.gate else None
    items = engine == "stream" or r.engine == "auto" and (
        r.write_csv is not None or r.n_items <= _SIMULATED_ITEMS_LIMIT)
    with _progress(r, "simulating items") as progress:
        if items:
            scores = copula.simulate(rng, r.n_items, progress)
        else:                                     # 0/1 items grouped by cell of the 2x2 table
            c = copula.simulate_cells(rng, r.n_items)
            scores = Scores((1,) * (c.both + c.a_only) + (0,) * (c.b_only + c.neither),
                            (1,) * c.both + (0,) * c.a_only + (1,) * c.b_only + (0,) * c.neither)
    if r.write_csv is not None:
        writes.append(lambda: write_scores_csv(r.write_csv, scores))
    run_engine = _choose_engine(r.engine, 5 * r.resamples * r.n_items if items else math.inf)
    with _progress(r, "resampling") as progress:
        result = analyze(scores, rng, _settings_from(r, engine=run_engine), progress=progress)
    cov = None
    if r.replays:
        with _progress(r, "coverage replays") as progress:
            settings = dataclasses.replace(_settings_from(r, engine=engine), margin=margin)
            cov = coverage(rng, copula, r.n_items, settings, replays=r.replays, progress=progress)
    plan = None if copula.clustered or copula.runs > 1 else _plan_summary(
        PowerPlan(copula.cells, r.confidence), r.n_items, r.target_power)
    params = {**_simulation_params(r), "coverage_engine": engine if r.replays else None}
    comparison = Comparison("A", "B", result, result.p, result.p, decide(result, margin=margin))
    return Report(params, "simulation", (comparison,), cov, plan=plan, runs_plan=runs_plan(
        copula, r.confidence, random.Random(r.seed)) if copula.runs > 1 else None)


def _run_calibration_table(r: _Request, writes: list) -> _CalibrationTableReport:
    pairs, grid = r.acc_pairs or _DEFAULT_ACC_PAIRS, r.n_grid or _DEFAULT_TABLE_GRID
    params = {"n_grid": list(grid), "acc_pairs": [[float(a), float(b)] for a, b in pairs],
              **_params(r, "corr confidence replays seed")}
    _say_if_long(r.replays * len(pairs) * sum(3.5e-4 + n * 2e-9 for n in grid),
                 f"{r.replays:,} replays x {len(grid)} sizes x {len(pairs)} accuracy pairs",
                 f"fewer {_opt('replays')} or sizes")
    with _progress(r, "interval table") as progress:
        table = calibration_table(random.Random(r.seed), pairs, grid, r.corr,
                                  r.confidence, r.replays, progress)
    return _CalibrationTableReport(params, table)


def _run_leaderboard(r: _Request, writes: list) -> _LeaderboardReport:
    if isinstance(r.table, Judged) or r.table is None and r.baseline is None and _is_judged(
            [r.csv], None, r.input_format):
        raise ToolError("judge and human scores (SYSTEM.judge, SYSTEM.human) compare two "
                        "systems: use compare")
    table = _table(r)
    params = {"systems": len(table.systems), "n_items": table.n,
              **_params(r, "seed confidence draws adjust target_power permutations")}
    _refuse_idle_options(r, table)
    if isinstance(table, Battles):
        params.update(n_items=None, battles=table.n, permutations=None, scale=r.scale,
                      anchor=r.anchor or table.systems[0], bootstrap=r.bootstrap or None)
        with _progress(r, "leaderboard draws") as progress:
            board = rank_battles(table, random.Random(r.seed), Settings(
                None, r.confidence, calibration=0, adjust=r.adjust), draws=r.draws,
                target_power=r.target_power, progress=progress, anchor=r.anchor,
                scale=r.scale, bootstrap=r.bootstrap, position=r.position)
        return _LeaderboardReport(params, table, board, r.details)
    battle_options = [name for name in ("anchor", "bootstrap", "position") if getattr(r, name)]
    if battle_options or r.scale != "logit":
        raise ToolError(f"{_opt((battle_options or ['scale'])[0])} goes with battles (files of "
                        "judges' verdicts), not with scores")
    constant = [(name, column[0]) for name, column in zip(table.systems, table.columns)
                if len(set(column)) == 1 and table.gold is None]
    if constant and not r.allow_constant:
        name, value = constant[0]
        raise ToolError(f"{_printable(name)} scores {_format_decimal(Fraction(value))} on every "
                        f"item: most often a run that failed or the wrong {_opt('score_col')}; "
                        f"{_opt('allow_constant', True)} ranks it anyway")
    settings = Settings(None, r.confidence, permutations=r.permutations, calibration=0,
                        adjust=r.adjust)
    metric, positive = _metric_of(r, table)
    with _progress(r, "leaderboard draws") as progress:
        board = rank_systems(table, random.Random(r.seed), settings, draws=r.draws,
                             target_power=r.target_power, progress=progress, metric=metric,
                             positive=positive)
    return _LeaderboardReport(params, table, board, r.details, _slice_scores(
        table, r.confidence) if table.slices else None)


_RUNNERS = {"compare": _run_data, "simulate": _run_simulation, "plan": _run_plan,
            "leaderboard": _run_leaderboard, "calibrate": _run_calibration_table,
            "ledger": lambda r, writes: _LedgerSummaryReport(
                {"ledger": r.ledger_summary, "confidence": r.confidence},
                summarize_ledger(r.ledger_summary, r.confidence))}


# --plot's picture of each report that has one (a simulation marks its true gap).
_PICTURES = {Report: lambda report: svg_histogram(report.analysis, None if report.table else
                                                  report.params["acc_b"] - report.params["acc_a"]),
             _SweepReport: svg_power_curve, _LeaderboardReport: svg_forest,
             _TasksReport: svg_forest}


def _run(request: _Request) -> tuple:
    """Carry out a checked request: ``(report, writes)``, the files it writes (the picture
    first, the ledger's append last) waiting in *writes* until the report is out."""
    writes = []
    report = _RUNNERS[request.command](request, writes)
    if request.plot and type(report) in _PICTURES:
        writes.insert(0, lambda: atomic_write(request.plot, _PICTURES[type(report)](report)))
    return report, writes


def _result(request: _Request) -> Result:
    """From Python: check and run."""
    report, _ = _run(_validate(request))          # a Python call names no file to write
    return Result(report)


def _slice_labels(by, strata) -> tuple:
    """``(strata, by)``: slices given per item from Python (a sequence or mapping) are the
    strata, named "slice"; a column name is read from the file."""
    if by is None or isinstance(by, str):
        return strata, by
    if strata is not None:
        raise ToolError("by gives each item's slice, and each slice is a stratum of the "
                        "overall comparison: give strata or by, not both")
    return by, "slice"


# --- the entry points ---

def compare(baseline, *candidates, ids=None, clusters=None, strata=None,
            names: Sequence[str] | str | None = None, systems: Sequence[str] | str | None = None,
            a_col: str | None = None, b_col: str | None = None, score_col: str | None = None,
            human_scorer: str | None = None, label_col: str | None = None,
            metric: str | None = None, positive=None, id_col: Sequence[str] | str | None = None,
            cluster_col: str | None = None, strata_col: str | None = None,
            by: str | Sequence | None = None, run_col: str | None = None,
            system_col: str | None = None, input_format: str | None = None,
            filter: str | None = None, split: str | None = None,
            tasks: Sequence[str] | str | None = None, pool: str | None = None,
            allow_different_tasks: bool = False, allow_different_targets: bool = False,
            allow_different_prompts: bool = False, allow_incomplete: bool = False,
            on_missing: str = "error", confidence: float = float(CONFIDENCE), seed: int = SEED,
            resamples: int | None = None, interval: str = "percentile",
            accuracy_interval: str = "same", exact: bool = False, engine: str = "auto",
            calibration: int = CALIBRATION_REPLAYS, permutations: int | None = None,
            adjust: str = "holm", gate: bool = False, min_delta: float = 0,
            lower_is_better: bool = False, details: bool = False) -> Result:
    """Is each candidate better than the baseline?  The command line's ``compare``.

    *baseline* and each candidate: one system's scores -- 0/1 or real scores in item
    order (a list, a tuple, an array), a mapping from item id to score (any Mapping), a
    pandas Series (joined on its index), or a list of runs of these -- or paths to read,
    or alone a Table from read().  *ids*, *clusters* and *strata* go per item with
    sequences (or map item ids to labels).  ``resamples=None`` (the default) uses the
    exact bootstrap for 0/1 items and the saddlepoint bootstrap for real scores;
    ``gate=True`` judges ``min_delta`` (points for scores in [0, 1], else score units).
    The rest say how to read paths: the columns (``systems``, ``a_col``, ``score_col``,
    ``id_col``, ...), harness logs (``filter``, ``split``, ``tasks``), missing scores.
    With ``label_col`` the systems' columns hold predictions of that column's labels and
    ``metric`` (``METRICS``: macro-f1, mcc, ...; ``positive`` names the class of f1,
    precision and recall) is recomputed on each resample; without it ``metric`` is
    ``score_col``, the metric of a harness log.  ``human_scorer`` names, in a harness log or file
    per system whose ``score_col`` is a judge's, the scorer (or column) holding people's scores
    on some items: the judge-corrected comparison of a file's SYSTEM.judge and SYSTEM.human
    columns.

    >>> result = compare([1, 1, 0, 1, 0, 1, 1, 1] * 5, [1, 1, 1, 1, 0, 1, 1, 0] * 5)
    >>> result.verdict, result.n, str(result.interval), result.method
    ('cannot tell', 40, '[-15.0, +15.0] pts', 'exact bootstrap (B = infinity)')
    >>> compare([0.2, 0.5, 0.7, 0.4] * 30, [0.3, 0.5, 0.9, 0.4] * 30).verdict
    'better'
    """
    strata, by = _slice_labels(by, strata)
    request = _request("compare", locals())
    return _result(_with_inputs(request, (baseline,) + candidates, ids, clusters, strata))


def leaderboard(*inputs, ids=None, clusters=None, strata=None,
                names: Sequence[str] | str | None = None,
                systems: Sequence[str] | str | None = None, score_col: str | None = None,
                label_col: str | None = None, metric: str | None = None, positive=None,
                id_col: Sequence[str] | str | None = None, cluster_col: str | None = None,
                strata_col: str | None = None, by: str | Sequence | None = None,
                run_col: str | None = None, system_col: str | None = None,
                input_format: str | None = None, filter: str | None = None,
                split: str | None = None, tasks: Sequence[str] | str | None = None,
                allow_different_tasks: bool = False, allow_different_targets: bool = False,
                allow_different_prompts: bool = False, allow_incomplete: bool = False,
                allow_constant: bool = False, on_missing: str = "error",
                confidence: float = float(CONFIDENCE), seed: int = SEED,
                permutations: int | None = None, adjust: str = "holm",
                draws: int = LEADERBOARD_DRAWS, target_power: float = 0.8,
                lower_is_better: bool = False, anchor: str | None = None, scale: str = "logit",
                bootstrap: int = 0, position: bool = False, details: bool = False) -> Result:
    """Rank many systems on the same items: the command line's ``leaderboard``.

    *inputs*: a mapping from each system's name to its scores, or the systems' scores one
    after another (named by ``names``), or paths (one file with a column per system, or a
    file or folder per system), or a Table.  ``systems`` picks columns of one file.
    Battles (files of preference judgments, a Battles, or a list of their records) are
    ranked by Bradley-Terry ratings on ``scale`` ("logit" or "elo"), ``anchor`` (a system's
    name; default the first) at 0 (or 1000 Elo), their covariance robust, or from
    ``bootstrap`` resamples of the prompts; ``position=True`` adds a term for the first shown.

    >>> board = leaderboard({"a": [1, 0, 1, 0] * 40, "b": [1, 1, 1, 0] * 40,
    ...                      "c": [0, 0, 1, 0] * 40})
    >>> [(s.system, s.ranks, s.tier) for s in board.board.standings]
    [('b', (1, 1), 1), ('a', (2, 2), 2), ('c', (3, 3), 3)]
    """
    strata, by = _slice_labels(by, strata)
    request = _request("leaderboard", locals())
    if len(inputs) == 1 and isinstance(inputs[0], collections.abc.Mapping):
        if names is not None:
            raise ToolError("a mapping names its systems; names goes with scores given one "
                            "after another")
        request = dataclasses.replace(request, names=tuple(map(str, inputs[0])))
        inputs = tuple(inputs[0].values())
    elif len(inputs) == 1 and getattr(inputs[0], "columns", None) is not None:
        raise ToolError("a DataFrame: give leaderboard(df.to_dict('series')), a column (a "
                        "Series) per system")
    if not inputs:
        raise ToolError("leaderboard needs the systems' scores, or files to read")
    return _result(_with_inputs(request, inputs, ids, clusters, strata))


def read(*paths, systems: Sequence[str] | str | None = None, a_col: str | None = None,
         b_col: str | None = None, score_col: str | None = None,
         id_col: Sequence[str] | str | None = None, names: Sequence[str] | str | None = None,
         cluster_col: str | None = None, strata_col: str | None = None, run_col: str | None = None,
         system_col: str | None = None, input_format: str | None = None, filter: str | None = None,
         split: str | None = None, tasks: Sequence[str] | str | None = None,
         allow_different_tasks: bool = False, allow_different_targets: bool = False,
         allow_different_prompts: bool = False, allow_incomplete: bool = False,
         on_missing: str = "error") -> Table | Battles | Judged:
    """The user's scores, as compare() and leaderboard() take them: one file with a column
    per system (CSV, JSON lines, JSON, .xlsx; every column but the ids and labels, unless
    systems or a_col and b_col name them; a harness folder: every model), or one file or
    folder per system, a list of paths for its runs; a file of battles as Battles, one of
    judge and human scores as Judged.

    >>> table = read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "datasets",
    ...                           "bootstrap-eval-deltas.csv"))
    >>> table.systems, table.n
    (('system_a_correct', 'system_b_correct'), 500)
    """
    request = _request("read", locals())
    if not paths:
        raise ToolError("read needs a file, or one file or folder per system")
    for path in paths:
        if not _is_paths(path):
            raise ToolError(f"{_shorten(repr(path))} is not a path (read takes files and folders)")
    command = "compare" if {"a_col", "b_col"} & request.given else "leaderboard"
    request = _validate(_with_inputs(dataclasses.replace(request, command=command), paths))
    if request.baseline is None and _is_judged([request.csv], request.systems,
                                               request.input_format):
        return read_judged(request.csv, request.systems)
    return _read_input(request)


def assert_not_worse(baseline, candidate, *, margin: float, ids=None, clusters=None, strata=None,
                     names: Sequence[str] | str | None = None,
                     systems: Sequence[str] | str | None = None, a_col: str | None = None,
                     b_col: str | None = None, score_col: str | None = None,
                     id_col: Sequence[str] | str | None = None, cluster_col: str | None = None,
                     strata_col: str | None = None, run_col: str | None = None,
                     system_col: str | None = None, input_format: str | None = None,
                     filter: str | None = None, split: str | None = None,
                     tasks: Sequence[str] | str | None = None, pool: str | None = None,
                     allow_different_tasks: bool = False, allow_different_targets: bool = False,
                     allow_different_prompts: bool = False, allow_incomplete: bool = False,
                     on_missing: str = "error", confidence: float = float(CONFIDENCE),
                     seed: int = SEED, resamples: int | None = None, interval: str = "percentile",
                     accuracy_interval: str = "same", exact: bool = False, engine: str = "auto",
                     calibration: int = CALIBRATION_REPLAYS, permutations: int | None = None,
                     adjust: str = "holm") -> Result:
    """A regression test in one line: AssertionError carrying the report unless the
    candidate is shown not worse than the baseline by more than *margin* (required, above
    0) -- points for scores in [0, 1], else score units -- by the lower end of the interval
    the verdict reads: compare's gate with ``min_delta = -margin``, and compare's options.

    >>> assert_not_worse([1, 0, 1, 1] * 50, [1, 0, 1, 1] * 50, margin=2).passed
    True
    """
    options = {name: value for name, value in locals().items()
               if name not in ("baseline", "candidate", "margin")}
    margin = _exact(margin, "margin")
    if margin <= 0:
        raise ToolError("margin is the largest drop you accept, above 0 (points for scores in "
                        "[0, 1]); at 0 the candidate would have to be shown better: "
                        "compare(..., gate=True)")
    result = compare(baseline, candidate, gate=True, min_delta=-margin, **options)
    if not result.passed:
        raise AssertionError(str(result))
    return result


def plan(*, n_items: int = N_ITEMS, acc_a: float = float(ACC_A), acc_b: float = float(ACC_B),
         corr: float = float(CORR), target_power: float = 0.8,
         confidence: float = float(CONFIDENCE), runs: int = 1, run_sd: float = 0.01,
         run_item_noise: float = 0.3, half_width: float | None = None,
         accuracy: float | None = None, judge_agreement: float | None = None,
         n_grid: Sequence[int] | None = None, replays: int = REPLAYS, resamples: int = RESAMPLES,
         engine: str = "auto", seed: int = SEED) -> Result:
    """Before the eval set is built: the command line's ``plan``.  With half_width (and
    accuracy), the items one accuracy's interval needs (with judge_agreement, the human labels
    a judge-corrected gap needs among n_items judged items); with n_grid, a power sweep
    (simulated too: replays, resamples, engine, seed); else the exact and analytic power
    at n_items and the items target_power needs (with runs, items x runs).

    >>> print(str(plan(half_width=0.015, accuracy=0.85)).splitlines()[0])
    items needed for a 95% interval of +-1.50 pts on one accuracy near 0.85:
    """
    return _result(_request("plan", locals()))


def simulate(*, n_items: int = N_ITEMS, acc_a: float = float(ACC_A), acc_b: float = float(ACC_B),
             corr: float = float(CORR), replays: int = REPLAYS, resamples: int = RESAMPLES,
             seed: int = SEED, confidence: float = float(CONFIDENCE), interval: str = "percentile",
             accuracy_interval: str = "same", exact: bool = False, engine: str = "auto",
             cluster_size: int = 1, icc: float = 0.3, runs: int = 1, run_sd: float = 0.01,
             run_item_noise: float = 0.3, target_power: float = 0.8, gate: bool = False,
             min_delta: float = 0) -> Result:
    """The article's experiment: the command line's ``simulate``.  A Gaussian-copula eval
    set of n_items with true accuracies acc_a and acc_b, compared as the article does;
    replays of it measure the interval's coverage and power (0 skips them).

    >>> print(str(simulate(replays=0)).splitlines()[2])
    observed gap: +3.6 pts
    """
    return _result(_request("simulate", locals()))


def calibrate(*, n_grid: Sequence[int] | None = None,
              acc_pairs: Sequence[Sequence[float]] | None = None, corr: float = float(CORR),
              replays: int = REPLAYS, confidence: float = float(CONFIDENCE),
              seed: int = SEED) -> Result:
    """Every paired interval's coverage and false-positive rate on a grid of sizes
    (default 30, 100, 500, 2000) and accuracy pairs: the command line's ``calibrate``."""
    return _result(_request("calibrate", locals()))


def ledger(path: str, *, confidence: float = float(CONFIDENCE)) -> Result:
    """A ledger's test sets, comparisons and Holm-adjusted verdicts: the command line's
    ``ledger``."""
    if not isinstance(path, (str, os.PathLike)):
        raise ToolError(f"ledger reads a ledger file, got {_shorten(repr(path))}")
    request = _request("ledger", {"confidence": confidence})
    return _result(dataclasses.replace(request, ledger_summary=os.fspath(path)))


# A request: one call of an entry point, what _validate checks and _run carries out.  ``given``:
# the options the caller set (from Python, those unlike the default; the flags typed).  Inputs:
# a Table, one file (``csv``) or a file or folder (or list of run paths) per system.  Options:
# every entry point's keywords at their defaults (compare's first: resamples is None), so each
# command reads those it lacks.  The outputs are the command line's alone.
_Request = dataclasses.make_dataclass("_Request", [
    ("command", str), ("given", frozenset, frozenset()), ("table", Table, None),
    ("csv", str, None), ("baseline", object, None), ("candidate", tuple, ()),
    *((name, object, _taken(name, default, default)) for name, default in collections.ChainMap(
        *map(_defaults, ("compare", "leaderboard", "plan", "simulate", "calibrate"))).items()),
    ("ledger", str, None), ("ledger_summary", str, None), ("output", str, None),
    ("json", bool, False), ("quiet", bool, True), ("plot", str, None), ("write_csv", str, None),
], frozen=True)


# === CLI ===
#
# main() alone turns exceptions into exit statuses: ToolError (bad input or flags) is one line
# and status 2, a bug one line and 70, never a traceback.  Each subcommand's parser is built
# from one table of flags, so a flag not its own is refused; version 1.1's flat spellings
# (``--csv FILE``, ``--n-grid``) are refused naming their subcommand.  _validate() checks what
# a parser cannot; every output path is checked against every input before any work.

def _prog() -> str:
    """The command as the user typed it: the installed script, or the file."""
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "bootstrap-eval-deltas" if argv0.startswith("bootstrap-eval-deltas") \
        else "python3 bootstrap_eval_deltas.py"


def _exit_statuses(command: str | None) -> str:
    """The exit statuses a command can end with (only compare's --gate fails with 1)."""
    gate = {"compare": " 1 the --gate failed,", None: " 1 compare's --gate failed,"}
    return (f"exit status: 0 success,{gate.get(command, '')} 2 bad input or flags (one line on "
            "stderr),\n70 internal error, 130 interrupted, 141 the reader of stdout went away, "
            "143 terminated")

# Each subcommand: what it does, and two or three examples (%(prog)s is the subcommand).
_COMMANDS = {
    "compare": ("is B really better than A? your own results: files, folders, harness logs", """\
  %(prog)s results.csv --a-col base --b-col tuned        one file, a column per system
  %(prog)s base.jsonl tuned.jsonl --score-col metrics.f1 --id-col id
  %(prog)s runs/base runs/tuned          whole lm-eval, Inspect or HELM output folders
  %(prog)s results.csv --systems base,v2,v3 --gate --min-delta 1 --ledger evals.jsonl"""),
    "simulate": ("the article's experiment: a simulated 500-item comparison with a known gap, "
                 "its coverage and power (the default)", """\
  %(prog)s                               reproduce the article (n=500, 1000 replays)
  %(prog)s --n-items 2000 --replays 200  preview coverage and power at 2,000 items
  %(prog)s --runs 3 --run-sd 0.02        several seeds per system"""),
    "plan": ("power, items needed and interval half-widths, before the eval set is built", """\
  %(prog)s --acc-a 0.72 --acc-b 0.76 --n-items 500   power at 500 items, items for 80%%
  %(prog)s --n-grid 250,500,1000,2000 --plot power.svg   a power sweep, simulated too
  %(prog)s --half-width 0.015 --accuracy 0.85        items for +-1.5 pts on one accuracy"""),
    "calibrate": ("measure every paired interval's coverage and false positives on a grid of "
                  "sizes and accuracies", """\
  %(prog)s                               the README's table (1,000 tables per setting)
  %(prog)s --n-grid 30,100 --acc-pairs 0.9/0.95 --output markdown"""),
    "ledger": ("list a ledger's test sets, comparisons and Holm-adjusted verdicts", """\
  %(prog)s evals.jsonl
  %(prog)s evals.jsonl --output markdown"""),
    "leaderboard": ("rank many systems on the same items: every pair, rank intervals and "
                    "tiers", """\
  %(prog)s prompts.csv                   every column but the id, ranked
  %(prog)s results.csv --systems a,b,c,d --adjust bh --plot board.svg
  %(prog)s runs/m1 runs/m2 runs/m3       one file or harness folder per system
  %(prog)s long.csv --system-col model --score-col correct"""),
}

# The flat spellings of version 1.1 and before (no subcommand), refused naming the new one.
_FLAT = {"--csv": "compare FILE", "--baseline": "compare BASELINE CANDIDATE",
         "--half-width": "plan --half-width", "--n-grid": "plan --n-grid",
         "--calibration-table": "calibrate", "--ledger-summary": "ledger FILE"}


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr and exit status 2."""

    def error(self, message):
        raise ToolError(f"{_printable(message)} (see --help)")


def _number_arg(text: str, what: str = "number") -> Fraction:
    try:
        value = _parse_number(text.strip().replace("_", ""))
    except ToolError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if value is None or what != "number" and value.denominator != 1:
        raise argparse.ArgumentTypeError(f"not a {what}: {_shorten(text)}")
    return value


def _count_arg(text: str) -> int:
    """A whole number: ``2000``, ``2,000``, ``2_000`` or ``2e3``."""
    text = text.strip()
    if re.fullmatch(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+", text, re.ASCII):
        text = text.replace(",", "")
    return _number_arg(text, "whole number").numerator


def _grid_arg(text: str) -> tuple:
    """Eval-set sizes: ``500,1000,2000``, or with the thousands separators the tool prints
    when the sizes are set apart by spaces or semicolons: ``500, 1,000, 2,000``."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty grid")
    spaced = re.search(r"[;\s]", text.strip()) is not None
    parts = re.split(r"\s*;\s*|,\s+|\s+", text.strip()) if spaced else text.split(",")
    try:
        return tuple(_count_arg(part.strip().rstrip(",;")) for part in parts
                     if part.strip().rstrip(",;"))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of whole numbers: {_shorten(text)}") from None


def _names_arg(text: str) -> tuple:
    """Names separated by commas; ``\\,`` is a comma inside a name (``base\\,v1,tuned``)."""
    return tuple(part.replace("\\,", ",").strip() for part in re.split(r"(?<!\\),", text))


def _pairs_arg(text: str) -> tuple:
    """Accuracy pairs ``0.72/0.76,0.95/0.95``."""
    pairs = []
    for part in text.split(","):
        halves = part.strip().split("/")
        if len(halves) != 2:
            raise argparse.ArgumentTypeError(f"not a list of A/B accuracy pairs: {_shorten(text)}")
        pairs.append(tuple(_number_arg(h) for h in halves))
    return tuple(pairs)


# One flag: its spellings, the subcommands that take it, its help group, argparse's keywords.
def _flag(commands: str, group: str, *names, **options) -> argparse.Namespace:
    return argparse.Namespace(commands=commands.split(), group=group, names=names, options=options)


_C, _S, _P, _K, _G, _L = "compare", "simulate", "plan", "calibrate", "ledger", "leaderboard"
_FLAGS = (
    # --- what to compare: the user's results ---
    _flag(_C, "your results", "--csv", metavar="PATH",
          help="one file with a column per system (the same as giving it as FILE): CSV (comma, "
               "tab or semicolon), JSON lines, a JSON list of records or an .xlsx workbook's "
               "first sheet, found by content; - reads stdin"),
    _flag(_C, "your results", "--baseline", metavar="FILE",
          help="the baseline's run file or harness folder (the same as the first FILE)"),
    _flag(_C, "your results", "--candidate", metavar="FILE", action="append",
          help="a candidate's run file or folder, joined to the baseline on the item id "
               "(repeat for several)"),
    _flag(_C, "your results", "--a-col", metavar="NAME",
          help=f"system A's column or JSON key in one file (default {CSV_COLUMNS[1]})"),
    _flag(_C, "your results", "--b-col", metavar="NAME",
          help=f"system B's column or JSON key in one file (default {CSV_COLUMNS[2]})"),
    _flag(f"{_C} {_L}", "your results", "--systems", type=_names_arg, metavar="BASE,CAND1,...",
          help="several systems' columns of one file, the baseline first: each candidate "
               "against it, with adjusted p-values (\\, is a comma inside a name, as in "
               "--names, --id-col and --tasks)"),
    _flag(f"{_C} {_L}", "your results", "--score-col", "--scorer", dest="score_col",
          metavar="NAME",
          help="the score column or key of run files (dots reach into nested JSON: "
               "metrics.acc), the lm-eval metric, the Inspect scorer (scorer.key for a dict "
               "value) or the HELM stat -- found by itself when a harness log offers one; "
               "with --system-col: the score column of a long file"),
    _flag(_C, "your results", "--human-scorer", metavar="NAME",
          help="a harness log or file per system whose --scorer is an LLM judge's: the scorer "
               "(or column) holding people's scores on some items (unscored or blank elsewhere), "
               "for the judge-corrected comparison"),
    _flag(f"{_C} {_L}", "your results", "--metric", metavar="NAME",
          help="with --label-col: the metric of the confusion matrix (" + ", ".join(METRICS)
               + "), recomputed on every resample; else the same as --score-col"),
    _flag(f"{_C} {_L}", "your results", "--label-col", metavar="NAME",
          help="the column of true labels: each system's column holds its predictions"),
    _flag(f"{_C} {_L}", "your results", "--positive", metavar="CLASS",
          help="the class whose f1, precision or recall --metric compares"),
    _flag(f"{_C} {_L}", "your results", "--id-col", type=_names_arg, metavar="NAME",
          help="item id column or key (default: item when the file has one; needed to join "
               "run files)"),
    _flag(f"{_C} {_L}", "your results", "--names", type=_names_arg, metavar="A,B,...",
          help="names for the systems, baseline first (default: the model a harness log "
               "names, else the file names)"),
    _flag(f"{_C} {_L}", "your results", "--filter", metavar="NAME",
          help="lm-eval samples written per filter (gsm8k's strict-match, flexible-extract): "
               "the one to compare"),
    _flag(f"{_C} {_L}", "your results", "--split", metavar="NAME",
          help="HELM: the split whose stats to compare (default test)"),
    _flag(f"{_C} {_L}", "your results", "--tasks", type=_names_arg, metavar="T1,T2,...",
          help="harness folders: compare only these tasks"),
    _flag(_C, "your results", "--pool", choices=("strata", "clusters", "macro"),
          help="harness folders: in the pooled comparison each task is a stratum (default), "
               "a cluster, or a stratum weighted equally (macro: the mean of the tasks' means, "
               "as an lm-eval group with weight_by_size false); given, tasks whose metrics "
               "differ in scale are pooled too (refused otherwise)"),
    _flag(f"{_C} {_L}", "your results", "--run-col", metavar="NAME",
          help="several rows per item, one per run (a seed): the column naming the run"),
    _flag(f"{_C} {_L}", "your results", "--system-col", metavar="NAME",
          help="a long file, one row per item and system: the column naming the system "
               "(with --score-col and --systems)"),
    _flag(f"{_C} {_L}", "your results", "--cluster-col", metavar="NAME",
          help="items sharing this column's value form a cluster (a passage, a "
               "conversation): resample whole clusters"),
    _flag(f"{_C} {_L}", "your results", "--strata-col", metavar="NAME",
          help="resample within each value of this column (a class, a source), keeping "
               "each stratum's size"),
    _flag(f"{_C} {_L}", "your results", "--by", metavar="COLUMN",
          help="slice by slice (a category, a source): compare gives a row per value of this "
               "column (intervals simultaneous and p adjusted across the slices) after the "
               "overall comparison with each slice a stratum; leaderboard gives every "
               "system's score in every slice beside the overall board"),
    _flag(f"{_C} {_L}", "your results", "--input-format", choices=_FORMATS,
          help="force the input format (default: found from the file's content)"),
    _flag(f"{_C} {_L}", "your results", "--allow-different-tasks", action="store_true",
          help="harness logs: compare logs of tasks with different names, or different inputs "
               "under one id (a renamed or edited task); refused by default; turns off every "
               "same-test check"),
    _flag(f"{_C} {_L}", "your results", "--allow-different-targets", action="store_true",
          help="harness logs: compare items whose target (the answer graded against) differs "
               "between the runs (a label fixed); refused by default"),
    _flag(f"{_C} {_L}", "your results", "--allow-different-prompts", action="store_true",
          help="lm-eval logs: compare a document prompted otherwise (n-shot, template, system "
               "instruction; prompt_hash differs on the same doc_hash); HELM logs: runs set up "
               "otherwise (scenario, adapter method, in-context examples); refused by default"),
    _flag(f"{_C} {_L}", "your results", "--allow-incomplete", action="store_true",
          help="harness logs: compare a run that did not finish (status error, cancelled, or "
               "stopped); the verdict then says how many samples it holds"),
    _flag(f"{_C} {_L}", "your results", "--on-missing", choices=("error", "drop"),
          help="rows with a missing score or id, repeated ids, items missing from a run: an "
               "error (default) or dropped and counted in the report"),
    # --- the simulation: the article's experiment ---
    _flag(f"{_S} {_P}", "simulation", "--n-items", type=_count_arg, metavar="N",
          help=f"items in the eval set, N_ITEMS (default {N_ITEMS})"),
    _flag(f"{_S} {_P} {_K}", "simulation", "--corr", type=_number_arg, metavar="R",
          help=f"loading of each system's latent score on the shared item difficulty, "
               f"-1 < R < 1 (default {CORR})"),
    _flag(f"{_S} {_P}", "simulation", "--acc-a", type=_number_arg, metavar="P",
          help=f"true accuracy of system A (default {_format_decimal(ACC_A)})"),
    _flag(f"{_S} {_P}", "simulation", "--acc-b", type=_number_arg, metavar="P",
          help=f"true accuracy of system B (default {_format_decimal(ACC_B)})"),
    _flag(f"{_S} {_P} {_K}", "simulation", "--replays", type=_count_arg, metavar="K",
          help=f"simulated replays; 0 skips the coverage loop (default {REPLAYS})"),
    _flag(_S, "simulation", "--write-csv", metavar="PATH.csv",
          help="also write the simulated per-item scores to PATH (atomically)"),
    _flag(_S, "simulation", "--cluster-size", type=_count_arg, metavar="K",
          help="simulate items in clusters of K (e.g. questions per passage); the coverage "
               "loop then shows item-level and cluster bootstrap side by side"),
    _flag(_S, "simulation", "--icc", type=_number_arg, metavar="R",
          help="with --cluster-size: within-cluster correlation of each latent score, "
               "0 <= R <= 1 (default 0.3)"),
    _flag(f"{_S} {_P}", "simulation", "--runs", type=_count_arg, metavar="K",
          help="K runs (seeds) per system: the two-level interval, its coverage beside the "
               "single-run one, and an items x runs plan"),
    _flag(f"{_S} {_P}", "simulation", "--run-sd", type=_number_arg, metavar="S",
          help="with --runs: run-to-run sd of a system's accuracy, as a proportion (default "
               "0.01: 1 pt)"),
    _flag(f"{_S} {_P}", "simulation", "--run-item-noise", type=_number_arg, metavar="F",
          help="with --runs: share of each system's own per-item noise drawn afresh in every "
               "run, 0 <= F <= 1 (default 0.3)"),
    # --- planning ---
    _flag(f"{_P} {_K}", "planning", "--n-grid", type=_grid_arg, metavar="N1,N2,...",
          help="plan: a power sweep over these eval-set sizes (increasing), analytic, exact and "
               "simulated; calibrate: the sizes to measure (default 30,100,500,2000)"),
    _flag(f"{_S} {_P} {_L}", "planning", "--target-power", type=_number_arg, metavar="P",
          help="power to plan for, 0 < P < 1 (default 0.8)"),
    _flag(_P, "planning", "--half-width", type=_number_arg, metavar="H",
          help="items needed for a +-H interval on one accuracy (e.g. 0.015)"),
    _flag(_P, "planning", "--accuracy", type=_number_arg, metavar="P",
          help="with --half-width: the accuracy expected (default 0.5, the worst case)"),
    _flag(_P, "planning", "--judge-agreement", type=_number_arg, metavar="A",
          help="with --half-width: human labels a judge-corrected gap needs, for a judge that "
               "agrees with people on a share A of answers, among --n-items judged items"),
    _flag(_K, "planning", "--acc-pairs", type=_pairs_arg, metavar="A/B,...",
          help="accuracy pairs to measure (default 0.72/0.76,0.95/0.95,0.98/0.99)"),
    # --- resampling ---
    _flag(f"{_C} {_S} {_P} {_K} {_L}", "resampling", "--seed", type=_count_arg,
          help=f"seed of the one random.Random that drives the run (default {SEED})"),
    _flag(f"{_C} {_S} {_P}", "resampling", "--resamples", type=_count_arg, metavar="B",
          help=f"bootstrap resamples per interval (default {RESAMPLES:,}; at most "
               f"{MAX_RESAMPLES:,})"),
    _flag(f"{_C} {_S} {_P} {_K} {_G} {_L}", "resampling", "--confidence", type=_number_arg,
          metavar="C",
          help=f"confidence level, 0 < C < 1 (default {_format_decimal(CONFIDENCE)})"),
    _flag(f"{_C} {_S}", "resampling", "--interval", choices=INTERVALS,
          help="percentile (the article's, default), basic, bca (bias-corrected and "
               "accelerated, with the jackknife), or score (0/1 items: Wilson for each "
               "accuracy, Newcombe's hybrid score for the gaps)"),
    _flag(f"{_C} {_S}", "resampling", "--accuracy-interval", choices=_ACCURACY_INTERVALS,
          help="the per-system accuracies' interval: the same rule as --interval (default), "
               "wilson, or clopper-pearson (exact)"),
    _flag(f"{_C} {_S}", "resampling", "--exact", action="store_true",
          help="also print the exact bootstrap intervals (B = infinity) beside resamples: 0/1 "
               "items (strata too), or scores on a small lattice (clusters of one size too)"),
    _flag(f"{_C} {_S} {_P}", "resampling", "--engine", choices=_ENGINE_CHOICES,
          help="auto (default): the stream engine where it finishes in seconds, else counts; "
               "stream: resample items, bit-exact with the article's listing; counts: draw "
               "how many resampled items take each value, cost independent of n"),
    _flag(_C, "resampling", "--calibration", type=_count_arg, metavar="K",
          help="0/1 data: measure the chosen interval's coverage and false-positive rate on K "
               f"tables drawn from your own 2x2 table, and as many with no gap (default "
               f"{CALIBRATION_REPLAYS:,}; 0 skips it)"),
    _flag(f"{_C} {_L}", "resampling", "--permutations", type=_count_arg, metavar="R",
          help="random sign patterns of the permutation test for real-valued scores (default "
               f"{PERMUTATIONS:,}; exact up to {_EXACT_SIGN_FLIP_LIMIT} nonzero differences)"),
    _flag(f"{_C} {_L}", "resampling", "--adjust", choices=ADJUSTMENTS,
          help="how p is adjusted across several candidates, tasks or a leaderboard's pairs: "
               "holm (the family-wise error, default), bh (Benjamini-Hochberg, the false "
               "discovery rate) or bonferroni"),
    _flag(_L, "resampling", "--draws", type=_count_arg, metavar="K",
          help=f"draws from the gaps' joint normal approximation for the max-|t| critical "
               f"value of the simultaneous intervals (default {LEADERBOARD_DRAWS:,})"),
    _flag(f"{_C} {_L}", "your results", "--lower-is-better", action="store_true",
          help="lower scores are better (an error rate, a latency): proportions are compared "
               "as 1 - score, others negated, so that a positive gap is an improvement"),
    _flag(_L, "your results", "--scale", choices=SCALES,
          help="battles: the Bradley-Terry ratings' scale, logit (log-odds, default) or elo "
               f"(400 points per factor of 10 in the odds, the anchor at {ELO_ANCHOR})"),
    _flag(_L, "resampling", "--bootstrap", type=_count_arg, metavar="B",
          help="battles: the ratings' covariance from B resamples of the prompts (default 0: "
               "the robust sandwich covariance)"),
    _flag(_L, "your results", "--position", action="store_true",
          help="battles: fit a term for the system shown first (a judge's position bias), "
               "where the format records it"),
    _flag(_L, "your results", "--anchor", metavar="SYSTEM",
          help="battles: the system whose rating is fixed (0, or 1000 Elo; default the first "
               "named in the file)"),
    _flag(_L, "your results", "--allow-constant", action="store_true",
          help="rank a system that scores the same on every item (most often a run that "
               "failed, or the wrong --score-col); refused by default"),
    # --- release gate and ledger ---
    _flag(f"{_C} {_S}", "gate and ledger", "--gate", action="store_true",
          help="a release gate: exit status 1 unless every candidate clears --min-delta "
               "(judged by the lower end of the interval the verdict reads); with simulate, "
               "the coverage loop measures how often it passes"),
    _flag(f"{_C} {_S}", "gate and ledger", "--min-delta", type=_number_arg, metavar="D",
          help="the gate's margin, in points for scores in [0, 1] (else in score units): "
               "1.0 = better by more than 1 pt, -0.5 = not worse by more than 0.5 pts"),
    _flag(_C, "gate and ledger", "--ledger", metavar="FILE",
          help="append this run's comparisons to a JSON-lines ledger of every comparison made "
               "on the test set, and report p adjusted by Holm over all of them"),
    # --- output ---
    _flag(f"{_C} {_S} {_P} {_K} {_G} {_L}", "output", "--output", choices=OUTPUTS,
          help="text (default), json, markdown (for a pull request) or html: the same report"),
    _flag(f"{_C} {_S} {_P} {_K} {_G} {_L}", "output", "--json", action="store_true",
          help="the same as --output json"),
    _flag(f"{_C} {_L}", "output", "--details", action="store_true",
          help="the whole report: Monte Carlo error, calibration, provenance (files, SHA-256), "
               "the gap's distribution (the JSON always has everything)"),
    _flag(f"{_C} {_S}", "output", "--plot", metavar="PATH.svg",
          help="write an SVG picture (atomically): the paired gap's bootstrap distribution; "
               "with several tasks or --by, each task's or slice's gap and interval"),
    _flag(_P, "output", "--plot", metavar="PATH.svg",
          help="with --n-grid, write the power curve as an SVG picture (atomically)"),
    _flag(_L, "output", "--plot", metavar="PATH.svg",
          help="write the forest plot as an SVG picture (atomically): each system's score and "
               "interval, highest first"),
    _flag(f"{_C} {_S} {_P} {_K} {_G} {_L}", "output", "--quiet", action="store_true",
          help="no progress indicator on stderr (it is drawn on a terminal only, for loops "
               "longer than a second)"),
)


def _top_help() -> str:
    """``--help`` with no subcommand: what each subcommand does."""
    width = max(map(len, _COMMANDS))
    lines = [f"usage: {_prog()} [COMMAND] [flags]", "",
             "Is B really better than A? Paired bootstrap CIs for an eval delta, McNemar's "
             "exact test,", "and a coverage check on a simulator with a known gap.", "",
             "commands (each has its own --help):"]
    lines += [f"  {name:<{width}}  {summary}" for name, (summary, _) in _COMMANDS.items()]
    lines += ["", "With no command the tool runs simulate.", "", "examples:"]
    lines += [f"  {_prog()}                      reproduce the article",
              f"  {_prog()} compare results.csv --a-col base --b-col tuned",
              f"  {_prog()} compare base.jsonl tuned.jsonl --score-col metrics.f1 --id-col id",
              f"  {_prog()} plan --half-width 0.015 --accuracy 0.85", "", _exit_statuses(None)]
    return "\n".join(lines) + "\n"


def _build_parser(command: str) -> argparse.ArgumentParser:
    """The parser of one subcommand: its flags only, grouped, and its examples."""
    summary, examples = _COMMANDS[command]
    inputs = {"compare": " FILE [FILE ...]", "leaderboard": " FILE [FILE ...]",
              "ledger": " LEDGER"}.get(command, "")
    parser = _Parser(prog=f"{_prog()} {command}", allow_abbrev=False,
                     argument_default=argparse.SUPPRESS, usage=f"%(prog)s{inputs} [flags]",
                     description=summary[0].upper() + summary[1:] + ".",
                     epilog="examples:\n" + examples + "\n\n" + _exit_statuses(command),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    if command in ("compare", "leaderboard"):
        parser.add_argument("inputs", nargs="*", metavar="FILE", default=[],
                            help="one file with a column per system, or one file or harness "
                                 "folder per system" + (", the baseline first" if command ==
                                                        "compare" else ""))
    elif command == "ledger":
        parser.add_argument("inputs", nargs="*", metavar="LEDGER", default=[],
                            help="the ledger file")
    groups = {}
    for flag in _FLAGS:
        if command in flag.commands:
            groups[flag.group] = groups.get(flag.group) or parser.add_argument_group(flag.group)
            groups[flag.group].add_argument(*flag.names, **flag.options)
    parser.add_argument("--version", action="version", version=f"{_NAME} {__version__}")
    return parser


def _checked_argv(command: str, parser: argparse.ArgumentParser, argv) -> list:
    """*argv* as *parser* takes it.  Refused in one line: a flag of another subcommand (argparse
    would only say it is unrecognized) and a flag with a value given twice (argparse would keep
    the last without a word), but for one that collects a list (``--candidate``) and a switch.
    ``--min-delta -1e50`` is joined as ``--min-delta=-1e50``: argparse takes a negative number
    in exponent form for a flag of its own and refuses the flag's value as missing."""
    flags = [token.split("=", 1)[0] for token in itertools.takewhile(lambda t: t != "--", argv)]
    for name in flags:
        if not name.startswith("--") or name in parser._option_string_actions:
            continue
        others = [c for c in _COMMANDS if any(name in f.names and c in f.commands
                                               for f in _FLAGS)]
        if others:
            where = ", ".join(others[:-1]) + " and " + others[-1] if len(others) > 1 else others[0]
            raise ToolError(f"{_printable(name)} does not apply to {command} (it is a flag of "
                            f"{where}); see {command} --help")
    seen = {}
    for name in flags:
        action = parser._option_string_actions.get(name)
        if action is None or action.nargs == 0 or isinstance(action, argparse._AppendAction):
            continue
        if action.dest in seen:
            raise ToolError(f"{_printable(name)} is given twice (also as {seen[action.dest]}); "
                            "give it once")
        seen[action.dest] = _printable(name)
    out, tokens = [], iter(argv)
    for token in tokens:
        action = parser._option_string_actions.get(token)
        if token == "--":
            return out + [token, *tokens]
        value = next(tokens, None) if action is not None and action.nargs is None else None
        if value is not None and value.startswith("-") and \
                _NUMBER.fullmatch(value.replace("_", "")):
            out.append(f"{token}={value}")
        else:
            out += [token] if value is None else [token, value]
    return out


def _parse_args(argv) -> _Request:
    """The request a command line makes: the flags typed, defaults for the rest, its inputs."""
    argv = list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(_top_help())
        raise SystemExit(0)
    if argv and argv[0] in _COMMANDS:
        command, rest = argv[0], argv[1:]
    else:                       # the default; 1.1's flat spellings refused, naming their command
        command, rest = "simulate", argv
        for flag in (t.split("=", 1)[0] for t in itertools.takewhile(lambda t: t != "--", argv)):
            if flag in _FLAT:
                raise ToolError(f"{flag} without a command is the spelling of version 1.1 and "
                                f"before; write {_FLAT[flag]}")
    parser = _build_parser(command)
    given = vars(parser.parse_args(_checked_argv(command, parser, rest)))
    outputs = {name: given[name] for name in ("output", "json", "quiet", "plot", "write_csv",
                                              "ledger") if name in given}
    options = {name: value for name, value in given.items()   # an entry point's keywords
               if name not in ("inputs", "csv", "baseline", "candidate") and name not in outputs}
    request = _request(command, options, given=set(options) | set(outputs),
                       **{"quiet": False, **outputs})
    if command == "ledger":
        paths = given["inputs"]
        if len(paths) != 1:
            raise ToolError("ledger reads one ledger file" if paths else
                            "ledger needs the ledger file: ledger FILE")
        return dataclasses.replace(request, ledger_summary=paths[0])
    if command not in ("compare", "leaderboard"):
        return request
    # FILE (--csv), one file with a column per system, or BASELINE CANDIDATE..., one per system
    inputs, csv, baseline = given["inputs"], given.get("csv"), given.get("baseline")
    candidates = given.get("candidate", [])
    if inputs and (csv is not None or baseline is not None or candidates):
        raise ToolError("give the files as FILE arguments or with --csv/--baseline/--candidate, "
                        "not both")
    if csv is not None and (baseline is not None or candidates):
        raise ToolError("use --csv (one file, a column per system) or --baseline/--candidate "
                        "(one file per run), not both")
    if baseline is not None and not candidates:
        raise ToolError("--baseline needs at least one --candidate run file")
    if candidates and baseline is None:
        raise ToolError("--candidate goes with --baseline (compare BASELINE CANDIDATE)")
    paths = inputs or [path for path in (csv, baseline) if path is not None] + candidates
    if not paths:
        what = "CANDIDATE" if command == "compare" else "SYSTEM3 ..."
        raise ToolError(f"{command} needs your results: {command} FILE (a column per system) "
                        f"or {command} BASELINE {what} (a file or folder per system)")
    return _with_inputs(request, paths)


# --- outputs: checked against the inputs before any work ---

def _check_outputs(request: _Request) -> None:
    """Refuse, in one line and before any work, an output path that cannot or must not be
    written (any file read, harness folders expanded: through a symlink too, or stdin's file)."""
    def same_file(real: str, source: str) -> bool:
        try:
            out = os.stat(real)
        except OSError:
            return False
        if source == "-":
            try:
                info = os.fstat(sys.stdin.fileno())
            except (AttributeError, OSError, ValueError):
                return False
            return stat.S_ISREG(info.st_mode) and os.path.samestat(info, out)
        try:
            return os.path.samefile(real, source)
        except OSError:
            return os.path.realpath(source) == real

    inputs = [] if request.csv is None else [request.csv]
    for value in () if request.baseline is None else (request.baseline,) + request.candidate:
        for path in _expand_paths(value):
            inputs += [os.path.join(root, name) for root, _, names in os.walk(path)
                       for name in names] if os.path.isdir(path) else [path]
    seen = {}
    for flag, path in [(_opt(name), getattr(request, name)) for name in
                       ("write_csv", "plot", "ledger") if getattr(request, name) is not None]:
        shown = _printable(path)
        if not path:
            raise ToolError(f"{flag} needs a file name")
        if path.endswith(("/", os.sep)) or os.path.isdir(path):
            raise ToolError(f"cannot write {shown}: it is a folder ({flag})")
        suffix = {"--plot": ".svg", "--write-csv": ".csv"}.get(flag)
        if suffix and not path.lower().endswith(suffix):
            raise ToolError(f"{flag} writes {suffix[1:].upper()}: give a path ending in "
                            f"{suffix}, got {shown}")
        real = os.path.realpath(path)
        folder = os.path.dirname(real) or "."
        if not os.path.isdir(folder):
            raise ToolError(f"cannot write {shown}: no such folder {_printable(folder)}")
        try:                                # the real test (os.access lies to root)
            fd, probe = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as err:
            raise ToolError(f"cannot write {shown}: folder {_printable(folder)} is not "
                            f"writable ({err.strerror})") from None
        try:
            regular = stat.S_ISREG(os.stat(real).st_mode)
        except FileNotFoundError:
            regular = True
        except OSError as err:
            raise ToolError(f"cannot write {shown}: {err.strerror}") from None
        if not regular:
            raise ToolError(f"cannot write {shown}: it is not a regular file (a device, pipe or "
                            f"socket); {flag} writes regular files only")
        if real in seen:
            raise ToolError(f"{seen[real]} and {flag} both name {shown}; give each output its "
                            "own file")
        seen[real] = flag
        for source in inputs:
            if same_file(real, source):
                what = "stdin's file" if source == "-" else _printable(source)
                raise ToolError(f"{flag} {shown} is an input ({what}); the tool never writes "
                                "over its input")
        if suffix and not real.lower().endswith(suffix) and os.path.exists(real):
            raise ToolError(f"{flag} {shown} is a link to {_printable(real)}, whose name does not "
                            f"end in {suffix}: the tool writes through a link only to such a file")


# --- main: the one place exceptions become exit statuses ---

class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (temporary files are removed), exit 143."""


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def _emit(text: str) -> None:
    """Write the report to stdout and flush it, so that a full disk or a closed stdout is
    reported here, in one line, and not by the interpreter at exit."""
    stream = sys.stdout
    if stream is None:
        raise ToolError("cannot write the report: stdout is closed")
    try:
        stream.write(_encodable(text, stream))
        stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as err:
        _silence_stdout()
        reason = getattr(err, "strerror", None) or "it is closed"
        raise ToolError(f"cannot write the report to stdout: {reason}") from None


def main(argv=None) -> int:
    """Entry point: parse, validate, run, print.  Returns the exit status; never raises
    (but for --help and --version, which exit through argparse)."""
    def terminate(signum, frame):
        raise _Terminated(signum)

    argv = sys.argv[1:] if argv is None else list(argv)
    old = {}        # SIGINT raises KeyboardInterrupt, SIGTERM and SIGHUP _Terminated, so that
    try:            # every ``finally`` and ``except BaseException`` cleanup runs
        old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in ("SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                number = getattr(signal, name)
                old[number] = signal.signal(number, terminate)
    except ValueError:                      # not the main thread: leave signals alone
        pass
    spelling = _SPELLING.set("command line")
    try:
        request = _validate(_parse_args(argv))
        _check_outputs(request)
        if request.ledger is not None:              # a corrupt or read-only ledger is refused
            read_ledger(request.ledger)             # before any work
            if os.path.exists(request.ledger):
                try:                                # the real test: os.access lies to root
                    os.close(os.open(request.ledger, os.O_WRONLY | os.O_APPEND))
                except OSError as err:
                    raise ToolError(f"cannot append to the ledger "
                                    f"{_printable(request.ledger)}: {err.strerror}") from None
        report, writes = _run(request)
        try:
            _emit(render(report, "json" if request.json else request.output or "text"))
            for write in writes:                    # files only after the report is out, and
                write()                             # the ledger's append last of all
        finally:
            for write in writes:                    # a ledger still locked: let it go
                getattr(write, "release", lambda: None)()
        gate_failed = Result(report).passed is False and report.table is not None  # simulated?
        return EXIT_GATE_FAILED if gate_failed else EXIT_OK
    except ToolError as err:
        _say(f"error: {err}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED
    except _Terminated:
        _say("terminated")
        return EXIT_TERMINATED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except MemoryError:
        _say("error: out of memory; try fewer --resamples or --replays, or a smaller input")
        return EXIT_INTERNAL
    except Exception as err:        # a bug: one line, never a traceback
        _say(f"internal error: {type(err).__name__}: {err}; please report it with the command "
             "line")
        return EXIT_INTERNAL
    finally:
        _SPELLING.reset(spelling)
        for number, handler in old.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


if __name__ == "__main__":
    sys.exit(main())
