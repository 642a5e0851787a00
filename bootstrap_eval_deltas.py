#!/usr/bin/env python3
"""Is model B really better than model A?  Paired bootstrap intervals for eval deltas.

System B scores 74.8% on a 500-item test set and system A 71.2%.  This module
answers "is B better?" the way the article *Bootstrap CIs for eval deltas*
does: a paired bootstrap interval on the gap, an unpaired one for contrast,
McNemar's exact test on the discordant items, and a coverage check that
replays a Gaussian-copula simulation whose true gap is known.  Standard
library only; every number is reproducible from the seed and the inputs.

==========================  ====================================================
Function / class            What it does
==========================  ====================================================
``simulate``                the article's Gaussian-copula simulator (0/1 items)
``Scores``                  per-item scores of two systems, kept exactly
``resample_sums``           the resampling engine: sums over bootstrap resamples
``draw_codes``              bulk, bit-exact ``randrange`` draws mapped to item codes
``percentile_interval``     the percentile rule: sorted stats, floor(q*B)
``analyze``                 accuracies, per-system, paired, unpaired CIs, McNemar
``mcnemar_exact``           exact two-sided McNemar p-value
``binom_pmf``               binomial probabilities, accurate for any n
``coverage``                replay the simulation: coverage and power
``read_scores_csv``         per-item scores from a CSV file
``write_scores_csv``        the simulated run as CSV, written atomically
``Progress``                a progress line on stderr (terminals only)
``main``                    the command line
==========================  ====================================================

The default run reproduces the article's numbers (``--replays 0`` skips the
1,000-replay coverage loop):

>>> rng = random.Random(SEED)
>>> scores = simulate(rng, N_ITEMS, CORR, ACC_A, ACC_B)
>>> result = analyze(scores, rng, resamples=RESAMPLES, confidence=CONFIDENCE)
>>> print(format_pts(result.gap), result.paired, result.mcnemar.p_text)
+3.6 pts [-1.4, +8.4] pts 0.1677

Intervals are exact rationals (bootstrap statistics on n items are k/n):

>>> percentile_interval([Fraction(k, 10) for k in range(10)], Fraction(8, 10))
Interval(lo=Fraction(1, 10), hi=Fraction(9, 10))
>>> mcnemar_exact(67, 85).p_text
'0.1677'
"""

from __future__ import annotations

import argparse
import array
import bisect
import functools
import html
import itertools
import json
import math
import operator
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

__version__ = "1.0.0"

__all__ = [
    "ACC_A", "ACC_B", "CONFIDENCE", "CORR", "N_ITEMS", "REPLAYS", "RESAMPLES", "SEED",
    "Analysis", "Coverage", "Interval", "McNemar", "Progress", "Scores", "ToolError",
    "analyze", "binom_pmf", "coverage", "draw_codes", "format_pts", "main", "mcnemar_exact",
    "percentile_interval", "read_scores_csv", "resample_sums", "simulate",
    "write_scores_csv",
]


# === Constants ===

N_ITEMS = 500                 # items in the eval set (the article's N_ITEMS)
CORR = Fraction("0.6")        # loading of each system's latent score on shared difficulty
ACC_A = Fraction("0.72")      # true accuracy of system A
ACC_B = Fraction("0.76")      # true accuracy of system B
SEED = 2026                   # the article's seed
RESAMPLES = 2000              # bootstrap resamples per interval (the article's B)
REPLAYS = 1000                # coverage replays
CONFIDENCE = Fraction("0.95")

CSV_COLUMNS = ("item", "system_a_correct", "system_b_correct")
MCNEMAR_EXACT_LIMIT = 1000    # discordant pairs up to which McNemar is summed exactly
PROGRESS_DELAY = 1.0          # seconds before a progress indicator appears (terminals only)


class ToolError(Exception):
    """A problem with the user's input or flags: reported in one line, exit status 2."""


def exact(value) -> Fraction:
    """Return *value* as an exact Fraction; floats are read at their shortest repr.

    >>> exact(0.76) - exact(0.72)
    Fraction(1, 25)
    >>> exact("1e-3")
    Fraction(1, 1000)
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ToolError(f"not a finite number: {value!r}")
        value = repr(value)
    try:
        result = Fraction(value)
    except (ValueError, ZeroDivisionError, TypeError):
        raise ToolError(f"not a number: {value!r}") from None
    return result


def round_fixed(value: Fraction, places: int, *, sign: bool = False) -> str:
    """Format an exact value with *places* decimals, rounding half to even exactly.

    >>> round_fixed(Fraction(-7, 500) * 100, 1, sign=True)
    '-1.4'
    >>> round_fixed(Fraction(1, 40), 2)   # 0.025 -> 0.02: half to even, no float error
    '0.02'
    >>> round_fixed(Fraction(0), 1, sign=True)
    '+0.0'
    """
    scaled = round(Fraction(value) * 10 ** places)
    digits = str(abs(scaled)).rjust(places + 1, "0")
    text = digits[:-places] + "." + digits[-places:] if places else digits
    if scaled < 0:
        return "-" + text
    return ("+" if sign else "") + text


def format_pts(gap: Fraction) -> str:
    """A gap in accuracy points with one decimal and a sign: ``+3.6 pts``."""
    return round_fixed(gap * 100, 1, sign=True) + " pts"


def format_decimal(value: Fraction) -> str:
    """Shortest exact decimal of a terminating fraction (else 6 significant digits).

    >>> format_decimal(Fraction("0.720")), format_decimal(Fraction(1, 3))
    ('0.72', '0.333333')
    """
    value = Fraction(value)
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    if den != 1:
        return f"{float(value):.6g}"
    places = 0
    while (value * 10 ** places).denominator != 1:
        places += 1
    return round_fixed(value, places) if places else str(value.numerator)


def format_percent(value: Fraction) -> str:
    """A confidence level as a percentage: 0.95 -> '95%', 0.995 -> '99.5%'."""
    return format_decimal(Fraction(value) * 100) + "%"


# === Simulation ===

def simulate(rng: random.Random, n_items: int, corr, acc_a, acc_b) -> "Scores":
    """Simulate *n_items* items scored 0/1 by two systems with correlated errors.

    Exactly the article's listing: for each item a shared difficulty
    ``d = gauss(0, 1)`` and two latent scores ``za = corr*d + w*gauss(0, 1)``,
    ``zb = corr*d + w*gauss(0, 1)`` with ``w = sqrt(1 - corr**2)``; a system
    is correct when its latent score is below ``NormalDist().inv_cdf(acc)``,
    so each hits its accuracy while the two share difficulty (their latent
    correlation is corr**2).

    >>> s = simulate(random.Random(1), 5, 0.6, 0.72, 0.76)
    >>> s.a, s.b
    ((0, 1, 1, 1, 1), (0, 1, 1, 1, 1))
    """
    corr = float(corr)
    w = math.sqrt(1 - corr ** 2)
    za_cut = NormalDist().inv_cdf(float(acc_a))
    zb_cut = NormalDist().inv_cdf(float(acc_b))
    gauss = rng.gauss
    a, b = [], []
    for _ in range(n_items):
        d = gauss(0, 1)
        za = corr * d + w * gauss(0, 1)
        zb = corr * d + w * gauss(0, 1)
        a.append(int(za < za_cut))
        b.append(int(zb < zb_cut))
    return Scores(tuple(a), tuple(b))


@dataclass(frozen=True)
class Scores:
    """Per-item scores of systems A and B on the same items, in item order.

    Scores are kept exactly (ints or Fractions); ``scale`` is the common
    denominator that turns every score into an integer, so that bootstrap
    sums are exact integer arithmetic.
    """

    a: tuple
    b: tuple

    def __post_init__(self):
        if len(self.a) != len(self.b):
            raise ToolError("systems A and B must be scored on the same items")
        if len(self.a) < 2:
            raise ToolError(f"need at least 2 items, got {len(self.a)}")

    @property
    def n(self) -> int:
        return len(self.a)

    @functools.cached_property
    def binary(self) -> bool:
        return set(self.a).issubset((0, 1)) and set(self.b).issubset((0, 1))

    @functools.cached_property
    def scale(self) -> int:
        """The least common denominator of all scores (1 for integer scores)."""
        if set(map(type, self.a + self.b)) <= {int}:
            return 1
        return math.lcm(*(Fraction(x).denominator for x in self.a + self.b))

    @functools.cached_property
    def ints(self) -> tuple:
        """Both columns as integers in units of 1/scale: ``(a, b)``."""
        if self.scale == 1:
            return tuple(map(int, self.a)), tuple(map(int, self.b))
        return tuple(tuple(int(Fraction(x) * self.scale) for x in column)
                     for column in (self.a, self.b))

    @property
    def mean_a(self) -> Fraction:
        return Fraction(sum(self.ints[0]), self.n * self.scale)

    @property
    def mean_b(self) -> Fraction:
        return Fraction(sum(self.ints[1]), self.n * self.scale)

    def cells(self) -> Cells:
        """The 2x2 table of counts (0/1 scores only)."""
        pairs = list(zip(self.a, self.b))
        return Cells(pairs.count((1, 1)), pairs.count((1, 0)), pairs.count((0, 1)),
                     pairs.count((0, 0)))


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

    @property
    def true_gap(self) -> Fraction:
        return Fraction(self.acc_b) - Fraction(self.acc_a)

    def simulate(self, rng: random.Random, n_items: int) -> "Scores":
        return simulate(rng, n_items, self.corr, self.acc_a, self.acc_b)

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
        both = _integrate_both_right(float(self.corr), float(self.acc_a), float(self.acc_b))
        acc_a, acc_b = float(self.acc_a), float(self.acc_b)
        return Cells(both, acc_a - both, acc_b - both, 1 - acc_a - acc_b + both)

    def simulate_cells(self, rng: random.Random, n_items: int) -> Cells:
        """The cell counts of n simulated items: one multinomial draw (the counts engine)."""
        return Cells(*multinomial_variate(rng, n_items, self.cells.as_tuple()))


def _integrate_both_right(corr: float, acc_a: float, acc_b: float) -> float:
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
            total += math.exp(-d * d / 2) * cdf((cut_a - corr * d) / w) * cdf((cut_b - corr * d) / w)
        return total * step / math.sqrt(2 * math.pi)

    step = 0.125
    estimate = trapezoid(step)
    while True:
        step /= 2
        finer = trapezoid(step)
        if abs(finer - estimate) < 1e-13 or step < 1e-4:
            return finer
        estimate = finer


# === Resampling engine ===
#
# How the engine is fast and still exact.  ``randrange(n)`` takes one 32-bit
# Mersenne Twister word, keeps its top k = n.bit_length() bits and rejects
# values >= n (taking the next word).  ``rng.getrandbits(32*m)`` returns the
# next m words of the same stream, the first in the lowest bits.  The engine
# asks for exactly as many words as draws are still missing -- every one of
# them the naive loop would consume too -- so the generator ends where the
# naive loop leaves it.  The words become bytes; the top byte of each word is
# sliced out at C speed (``data[3::4]``) and mapped by ``bytes.translate`` to
# the drawn item's *code*, rejected words deleted in the same call.  Items with
# equal scores share a code, so a resample's sum is a few ``bytes.count``
# calls on its n codes.  When k > 8 the next byte carries the low k-8 index
# bits; big integers, used as vectors of bytes, merge the two lookups.

CODE_REJECT = 255          # code of a word that randrange would reject
MAX_CODES = 254            # distinct score rows that fit the byte-code path
CHUNK_WORDS = 1 << 14      # words per getrandbits call (64 KiB of bytes: stays in cache)
SELECT_MAX_BITS = 5        # low index bits resolved by a select tree (32 lookups)


@functools.lru_cache(maxsize=64)
def _lanes(pattern: bytes, m: int) -> int:
    """*pattern* repeated m times, as an integer: a vector of byte or word lanes."""
    return int.from_bytes(pattern * m, "little")


@dataclass(frozen=True)
class _Lookup:
    """How one 32-bit word becomes the code of the item it draws (or is rejected).

    ``kind`` is "byte" (k <= 8: one translate of the top byte), "class" (the
    top byte's class of neighbouring items plus the next byte's low index bits,
    then one translate), "select" (one translate per value of the low bits,
    merged by masks), "gather" (index arithmetic in bulk, codes looked up by
    ``operator.itemgetter``) or "index" (too many distinct codes: the accepted
    indices themselves).
    """

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
            looked = _gather(self.codes, index)
            return looked.translate(None, self.delete)
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


def _gather(table: bytes, index) -> bytes:
    """``bytes(table[i] for i in index)`` at C speed."""
    if len(index) == 1:
        return bytes([table[index[0]]])
    return bytes(operator.itemgetter(*index)(table)) if index else b""


def _lookup(n: int, codes: bytes | None) -> _Lookup:
    """Choose the cheapest exact way to turn words into codes for n items."""
    k = n.bit_length()
    if codes is None:
        return _Lookup("index", n, k)
    reject = bytes([CODE_REJECT])
    extended = codes + reject * ((1 << k) - n)         # code of every k-bit value
    if k <= 8:
        spread = 8 - k
        table = bytes(extended[t >> spread] for t in range(256))
        delete = bytes(t for t in range(256) if table[t] == CODE_REJECT)
        return _Lookup("byte", n, k, (table,), delete=delete)
    low_bits = k - 8
    if low_bits > SELECT_MAX_BITS:
        return _Lookup("gather", n, k, delete=reject, codes=extended)
    width = 1 << low_bits
    blocks = [extended[t * width:(t + 1) * width] for t in range(256)]
    classes = {block: None for block in blocks}
    if len(classes) <= 1 << (8 - low_bits):
        ids = {block: i for i, block in enumerate(classes)}
        table = bytes(ids[block] for block in blocks)
        final = bytearray([CODE_REJECT]) * 256
        for block, i in ids.items():
            for g, code in enumerate(block):
                final[i | g << (8 - low_bits)] = code
        delete = bytes(key for key in range(256) if final[key] == CODE_REJECT)
        return _Lookup("class", n, k, (table,), bytes(final), delete)
    tables = tuple(bytes(block[g] for block in blocks) for g in range(width))
    return _Lookup("select", n, k, tables, None, reject)


def draw_parts(rng: random.Random, lookup: _Lookup, count: int):
    """Yield the codes (or indices) of *count* accepted draws, a chunk at a time,
    consuming rng exactly as ``[rng.randrange(n) for _ in range(count)]`` would."""
    missing = count
    getrandbits = rng.getrandbits
    while missing:
        m = min(missing, CHUNK_WORDS)
        part = lookup.decode(getrandbits(32 * m), m)
        missing -= len(part)
        yield part


def draw_codes(rng: random.Random, lookup: _Lookup, count: int):
    """All codes (bytes) or indices (list) of *count* accepted draws, as ``draw_parts``."""
    parts = list(draw_parts(rng, lookup, count))
    if lookup.kind == "index":
        return [i for part in parts for i in part]
    return b"".join(parts)


def _planes(values, base: int) -> list:
    """Split ``value - base`` into base-8 digits, each coded as a byte whose popcount is it.

    Returns one tuple of bytes per digit plane, item by item: a resample's sum
    is then ``base*n + sum(8**p * popcount(plane p of its draws))``, counted
    with ``int.bit_count`` (no branch per byte, unlike ``bytes.count``).
    """
    extras = [value - base for value in values]
    planes = []
    while True:
        planes.append(tuple((1 << (e >> 3 * len(planes) & 7)) - 1 for e in extras))
        if not any(e >> 3 * len(planes) for e in extras):
            return planes


@dataclass(frozen=True)
class _Summer:
    """How one column's resample sums are read off the decoded draws.

    ``tables`` holds, per digit plane, the translate table from code to plane
    byte (None when the codes already are the plane bytes).
    """

    base: int
    tables: tuple

    def sums(self, draws: bytes, n: int, rounds) -> list:
        """Sums of the given rounds (their positions in *draws*, n draws each)."""
        from_bytes = int.from_bytes
        totals = [self.base * n] * len(rounds)
        for p, table in enumerate(self.tables):
            plane = draws if table is None else draws.translate(table)
            counts = [from_bytes(plane[i * n:(i + 1) * n], "big").bit_count() for i in rounds]
            totals = [t + (c << 3 * p) for t, c in zip(totals, counts)]
        return totals


def resample_sums(rng: random.Random, columns, rounds: int, *, progress=None) -> list:
    """Bootstrap sums: round r resamples the n items and sums ``columns[r % len(columns)]``.

    Each column is a sequence of n integers.  Every resample draws its n item
    indices exactly as ``[rng.randrange(n) for _ in range(n)]`` would, round
    after round, and leaves the generator where that loop would.
    ``columns=(d,)`` gives the paired bootstrap of the difference d;
    ``columns=(a, b)`` the unpaired one (A's resample, then B's).

    >>> resample_sums(random.Random(5), [(0, 1, 1)], 4)
    [3, 3, 2, 2]
    """
    n, width = len(columns[0]), len(columns)
    bases = [min(column) for column in columns]
    digit_planes = [_planes(column, base) for column, base in zip(columns, bases)]
    rows = {}
    if sum(map(len, digit_planes)) > 1:
        for row in zip(*columns):
            rows.setdefault(row, len(rows))
    if not rows:                                   # one column, one plane: codes are plane bytes
        codes = bytes(digit_planes[0][0])
        summers = [_Summer(bases[0], (None,))]
    elif len(rows) <= MAX_CODES:                   # codes are distinct rows, planes translated
        codes = bytes(rows[row] for row in zip(*columns))
        summers = []
        for planes, base in zip(digit_planes, bases):
            tables = []
            for plane in planes:
                table = bytearray(256)
                for code, byte in zip(codes, plane):
                    table[code] = byte
                tables.append(bytes(table))
            summers.append(_Summer(base, tuple(tables)))
    else:                                          # too many distinct rows: indices
        codes = None
    lookup = _lookup(n, codes)
    # Decode a chunk of words, sum the rounds it completes, carry the rest over:
    # the codes are summed while they are still in the processor's cache.
    sums = [0] * rounds
    done = available = 0
    parts = []
    for part in draw_parts(rng, lookup, rounds * n):
        parts.append(part)
        available += len(part)
        if available < n:
            continue
        pending = [i for p in parts for i in p] if codes is None else b"".join(parts)
        complete = available // n
        for j in range(width):
            first = (j - done) % width               # first completed round using column j
            own = range(first, complete, width)
            if codes is None:
                column = columns[j]
                part_sums = [sum(operator.itemgetter(*pending[i * n:(i + 1) * n])(column))
                             for i in own]
            else:
                part_sums = summers[j].sums(pending, n, own)
            sums[done + first:done + complete:width] = part_sums
        parts = [pending[complete * n:]]
        available -= complete * n
        done += complete
        if progress is not None:
            progress(done, rounds)
    return sums


# --- The counts engine: multinomial cells instead of items ---
#
# For 0/1 scores a resample's accuracy gap depends only on how many of the n
# draws land in each cell of the 2x2 table, and those counts are multinomial.
# The counts engine draws them directly -- cost independent of n -- with its
# own binomial sampler (BTRD, Hormann 1993, or inversion when n*p < 10) built
# on rng.random(), so a seed gives the same numbers on every Python from 3.10
# (``random.binomialvariate`` only exists from 3.12).  It draws from the same
# distribution as the per-item engine, not the same stream.

def binomial_variates(rng: random.Random, trials, p: float) -> list:
    """One Binomial(t, p) draw for each t in *trials* (same p), in order.

    BTRD's setup is recomputed only when t changes and its fast path (taken
    about 86% of the time, one ``rng.random()``) runs inline, so a long run
    of draws costs about a microsecond each.  ``binomial_variates(rng, [n]*k,
    p)`` equals k calls of ``binomial_variate(rng, n, p)``.
    """
    if p <= 0:
        return [0] * len(trials)
    if p >= 1:
        return list(trials)
    flip = p > 0.5
    q = 1 - p if flip else p
    random_, floor, sqrt = rng.random, math.floor, math.sqrt
    out = []
    last = None
    for t in trials:
        if t != last:
            last, small = t, t * q < 10
            if small:
                setup = (q / (1 - q), (t + 1) * q / (1 - q), (1 - q) ** t)
            else:
                spq = sqrt(t * q * (1 - q))
                b = 1.15 + 2.53 * spq
                a2 = -0.1746 + 0.0496 * b + 0.02 * q          # 2a of BTRD
                c, vr = t * q + 0.5, 0.92 - 4.2 / b
                urvr = 0.86 * vr
        if small:
            x = _inversion(rng, t, setup)
        else:
            v = random_()
            if v <= urvr:                                   # BTRD's fast path, inline
                u = v / vr - 0.43
                x = floor((a2 / (0.5 - abs(u)) + b) * u + c)
            else:
                x = _btrd(rng, t, q, (a2 / 2, b, c, vr, (2.83 + 5.1 / b) * spq), v)
        out.append(t - x if flip else x)
    return out


def binomial_variate(rng: random.Random, n: int, p: float) -> int:
    """One draw from Binomial(n, p) (see ``binomial_variates``).

    >>> rng = random.Random(1)
    >>> [binomial_variate(rng, 500, 0.3) for _ in range(4)]
    [142, 158, 147, 157]
    """
    return binomial_variates(rng, (n,), p)[0]


def binomial_table_variates(rng: random.Random, n: int, p: float, count: int) -> list:
    """*count* draws from Binomial(n, p) by inverting its cumulative table.

    For a batch with fixed parameters: the probabilities are computed once
    (Loader's value at the mode, then exact ratios outward, at C speed with
    ``itertools.accumulate``) over the range outside which each tail holds
    less than 1e-16 of the peak; each draw is one ``rng.random()`` and a
    bisection, both called from C (``map``), about 0.2 microseconds a draw.

    >>> rng = random.Random(1)
    >>> binomial_table_variates(rng, 500, 0.3, 4)
    [139, 161, 157, 143]
    """
    if p <= 0 or p >= 1:
        return [0 if p <= 0 else n] * count
    lo, cdf = _binomial_cdf_table(n, p)
    uniforms = itertools.starmap(rng.random, itertools.repeat((), count))
    return list(map(lo.__add__, map(bisect.bisect_right, itertools.repeat(cdf), uniforms)))


@functools.lru_cache(maxsize=256)
def _binomial_cdf_table(n: int, p: float) -> tuple:
    """(lo, cumulative probabilities of lo..hi, the last set to exactly 1.0), Binomial(n, p).

    lo..hi spans the mode +- (8.5 sd + 8); each tail left outside holds less
    than 2**-54 of the mass, below what a 53-bit ``random()`` can resolve.
    Probabilities are Loader's value at the mode times exact-ratio products,
    good to about 1e-13 in total; clamping the last cumulative value to 1.0
    moves that rounding residue to the top value.
    """
    mode = min(n, math.floor((n + 1) * p))
    ratio = p / (1 - p)
    spread = 8.5 * math.sqrt(n * p * (1 - p)) + 8
    lo, hi = max(0, math.floor(mode - spread)), min(n, math.ceil(mode + spread))
    peak = binom_pmf(mode, n, p)
    factors = _ratio_factors(n, lo, hi)           # (n-k)/(k+1) for k = lo..hi-1
    up = itertools.accumulate(map(operator.mul, factors[mode - lo:], itertools.repeat(ratio)),
                              operator.mul, initial=peak)
    down = list(itertools.accumulate(
        map(operator.truediv, itertools.repeat(1 / ratio), reversed(factors[:mode - lo])),
        operator.mul, initial=peak))
    down.reverse()
    down.pop()                                     # the peak is the first value of `up`
    cdf = list(itertools.accumulate(itertools.chain(down, up)))
    while len(cdf) > 1 and cdf[-2] >= 1.0:        # rounding past 1 at the top: clamp
        cdf.pop()
    cdf[-1] = 1.0                                  # random() < 1.0: every draw lands in the table
    return lo, cdf


FACTOR_CACHE_LIMIT = 1_000_000


def _ratio_factors(n: int, lo: int, hi: int) -> list:
    """(n-k)/(k+1) for k in lo..hi-1: pmf(k+1)/pmf(k) of Binomial(n, 1/2)."""
    if n <= FACTOR_CACHE_LIMIT:
        return _all_ratio_factors(n)[lo:hi]
    return list(map(operator.truediv, range(n - lo, n - hi, -1), range(lo + 1, hi + 1)))


@functools.lru_cache(maxsize=4)
def _all_ratio_factors(n: int) -> list:
    """All of them for one n, computed once: a coverage loop reuses them every replay."""
    return list(map(operator.truediv, range(n, 0, -1), range(1, n + 1)))


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


def _inversion(rng, n, setup) -> int:
    """Sequential search from 0 (expected n*p + 1 steps), for n*p < 10."""
    s, a, r0 = setup
    while True:
        r, u, x = r0, rng.random(), 0
        while u > r:
            u -= r
            x += 1
            if x > n:             # rounding ran past n: draw again
                break
            r *= a / x - s
        else:
            return x


def _btrd(rng, n, p, setup, v) -> int:
    """Hormann's transformed rejection with decomposition (p <= 1/2, n*p >= 10),
    entered with a first uniform *v* that missed the fast path."""
    a, b, c, vr, alpha = setup
    random_ = rng.random
    while True:
        if v <= 0.86 * vr:
            u = v / vr - 0.43
            return math.floor((2 * a / (0.5 - abs(u)) + b) * u + c)
        if v >= vr:
            u = random_() - 0.5
        else:
            u = v / vr - 0.93
            u = math.copysign(0.5, u) - u
            v = random_() * vr
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if 0 <= k <= n and _btrd_accept(n, p, k, v * alpha / (a / (us * us) + b)):
            return k
        v = random_()


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
    h = (m + 0.5) * math.log((m + 1) / (r * nm)) + stirlerr(m + 1) + stirlerr(n - m + 1)
    return v <= (h + (n + 1) * math.log(nm / nk) + (k + 0.5) * math.log(nk * r / (k + 1))
                 - stirlerr(k + 1) - stirlerr(n - k + 1))


def counts_mean_sums(rng, hits: int, n: int, resamples: int) -> list:
    """Resampled numbers of correct items: Binomial(n, hits/n), B times."""
    return binomial_table_variates(rng, n, hits / n, resamples)


def counts_paired_sums(rng, cells: Cells, resamples: int) -> list:
    """Resampled (B-only minus A-only) counts D of n draws from the observed cells.

    Each draw adds -1, 0 or +1 with probabilities a, b, c (A only, agreement,
    B only), so D's generating function is ``(a/z + b + c*z)**n``.  When
    ``b*b >= 4*a*c`` (the systems agree more often than not, as on any real
    eval) the quadratic ``a + b*z + c*z*z`` has real roots and factors, which
    makes ``D + n`` exactly the sum of two independent binomials,
    ``Binomial(n, p1) + Binomial(n, p2)``: two table draws per resample.
    Otherwise D is drawn through the discordant total M ~ Binomial(n, a+c)
    and the B-only count given M, Binomial(M, c/(a+c)).
    """
    n, agree = cells.n, cells.both + cells.neither
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


def counts_unpaired_sums(rng, cells: Cells, resamples: int) -> list:
    """Resampled B-correct minus A-correct counts, A and B drawn independently (A's first)."""
    a = counts_mean_sums(rng, cells.a, cells.n, resamples)
    b = counts_mean_sums(rng, cells.b, cells.n, resamples)
    return [y - x for x, y in zip(a, b)]


# === Intervals ===

@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] with exact end points."""

    lo: Fraction
    hi: Fraction

    def __contains__(self, value) -> bool:
        return self.lo <= value <= self.hi

    def excludes_zero(self) -> bool:
        return self.lo > 0 or self.hi < 0

    def negate(self) -> "Interval":
        return Interval(-self.hi, -self.lo)

    def __str__(self) -> str:
        return (f"[{round_fixed(self.lo * 100, 1, sign=True)}, "
                f"{round_fixed(self.hi * 100, 1, sign=True)}] pts")

    def as_proportions(self, places: int = 3) -> str:
        return f"[{round_fixed(self.lo, places)}, {round_fixed(self.hi, places)}]"

    def to_json(self) -> list:
        return [float(self.lo), float(self.hi)]


def percentile_indices(rounds: int, confidence) -> tuple:
    """Indices of the interval ends among *rounds* sorted statistics.

    ``q = (1 - c) / 2`` in exact arithmetic; the ends are the order statistics
    at ``floor(q*B)`` and ``floor((1-q)*B)`` (0-based), the article's rule.

    >>> percentile_indices(2000, Fraction("0.95"))
    (50, 1950)
    """
    q = (1 - Fraction(confidence)) / 2
    return math.floor(q * rounds), math.floor((1 - q) * rounds)


def percentile_interval(stats, confidence) -> Interval:
    """The percentile bootstrap interval of *stats* (any exactly comparable values)."""
    ordered = sorted(stats)
    lo, hi = percentile_indices(len(ordered), confidence)
    return Interval(Fraction(ordered[lo]), Fraction(ordered[hi]))


def scaled_interval(sums, confidence, denominator: int) -> Interval:
    """Percentile interval of integer bootstrap sums, divided by *denominator*."""
    return Distribution.of(sums, denominator).interval(confidence)


@dataclass(frozen=True)
class Distribution:
    """A bootstrap distribution: sorted integer sums, each statistic ``sum / denominator``."""

    sums: tuple
    denominator: int

    @classmethod
    def of(cls, sums, denominator: int) -> "Distribution":
        return cls(tuple(sorted(sums)), denominator)

    def interval(self, confidence) -> Interval:
        lo, hi = percentile_indices(len(self.sums), confidence)
        return Interval(Fraction(self.sums[lo], self.denominator),
                        Fraction(self.sums[hi], self.denominator))


ENGINES = ("stream", "counts")


def bootstrap(rng: random.Random, scores: "Scores", resamples: int, *, engine: str = "stream",
              progress=None) -> dict:
    """The four bootstrap distributions of the report, in the stream's order.

    ``a`` and ``b`` (each system's mean), ``paired`` (mean of B - A on the
    same resampled items) and ``unpaired`` (B's resample minus A's).  The
    ``stream`` engine resamples items, bit-exact with the article's listing;
    the ``counts`` engine (0/1 scores) draws the multinomial cell counts.
    """
    if engine == "counts":
        cells = scores.cells()
        sums = {"a": counts_mean_sums(rng, cells.a, cells.n, resamples),
                "b": counts_mean_sums(rng, cells.b, cells.n, resamples),
                "paired": counts_paired_sums(rng, cells, resamples),
                "unpaired": counts_unpaired_sums(rng, cells, resamples)}
        return {key: Distribution.of(value, cells.n) for key, value in sums.items()}
    steps = _steps(progress, [resamples, resamples, resamples, 2 * resamples])
    a, b = scores.ints
    diff = tuple(y - x for x, y in zip(a, b))
    sums = {"a": resample_sums(rng, (a,), resamples, progress=next(steps)),
            "b": resample_sums(rng, (b,), resamples, progress=next(steps)),
            "paired": resample_sums(rng, (diff,), resamples, progress=next(steps))}
    both = resample_sums(rng, (a, b), 2 * resamples, progress=next(steps))
    sums["unpaired"] = [sb - sa for sa, sb in zip(both[0::2], both[1::2])]
    denominator = scores.n * scores.scale
    return {key: Distribution.of(value, denominator) for key, value in sums.items()}


def paired_distribution(rng: random.Random, data, resamples: int, engine: str = "stream"
                        ) -> Distribution:
    """The paired bootstrap distribution alone (the coverage loop's): *data* is
    Scores for the stream engine, Cells for the counts engine."""
    if engine == "counts":
        return Distribution.of(counts_paired_sums(rng, data, resamples), data.n)
    a, b = data.ints
    diff = tuple(y - x for x, y in zip(a, b))
    return Distribution.of(resample_sums(rng, (diff,), resamples), data.n * data.scale)


def _steps(progress, sizes):
    """Split one progress callback over consecutive steps of the given sizes."""
    offset, total = 0, sum(sizes)
    for size in sizes:
        yield None if progress is None else (
            lambda done, _total, base=offset: progress(base + done, total))
        offset += size


# === Tests ===

@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on the discordant items."""

    a_only: int
    b_only: int
    p: float

    @property
    def p_text(self) -> str:
        return format_p(self.p)


def format_p(p: float) -> str:
    """Four decimals, or scientific notation below 0.0001.

    >>> format_p(0.16771), format_p(3.2e-12), format_p(0.0)
    ('0.1677', '3.2e-12', '<1e-300')
    """
    if p == 0:
        return "<1e-300"
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.2g}"


def mcnemar_exact(a_only: int, b_only: int) -> McNemar:
    """Exact two-sided McNemar test: ``min(1, 2 * P(Binomial(b+c, 1/2) <= min(b, c)))``.

    Summed as an exact rational up to ``MCNEMAR_EXACT_LIMIT`` discordant
    pairs; beyond, the binomial tail is summed from Loader's saddle-point
    probabilities (relative error below 1e-12, no big-integer powers).

    >>> mcnemar_exact(67, 85).p_text, mcnemar_exact(0, 0).p, mcnemar_exact(5, 5).p
    ('0.1677', 1.0, 1.0)
    """
    n = a_only + b_only
    k = min(a_only, b_only)
    if n == 0:
        return McNemar(a_only, b_only, 1.0)
    if n <= MCNEMAR_EXACT_LIMIT:
        tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
        return McNemar(a_only, b_only, float(min(Fraction(1), 2 * tail)))
    return McNemar(a_only, b_only, min(1.0, 2 * binom_cdf_lower(k, n, 0.5)))


def _stirlerr_table(size: int) -> list:
    """log(k!) - log(sqrt(2 pi k) (k/e)^k) for k < size, to double precision via Decimal."""
    from decimal import Decimal, localcontext
    with localcontext() as ctx:
        ctx.prec = 40
        pi = Decimal("3.141592653589793238462643383279502884197")
        table = [math.inf]                     # k = 0: the formula is undefined; never used
        for k in range(1, size):
            dk = Decimal(k)
            exact_log = Decimal(math.factorial(k)).ln()
            stirling = (2 * pi * dk).ln() / 2 + dk * dk.ln() - dk
            table.append(float(exact_log - stirling))
    return table


_STIRLERR = _stirlerr_table(16)


def stirlerr(k: int) -> float:
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
        j = 1
        while True:
            ej *= v
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
            j += 1
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
    lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - _bd0(k, n * p) - _bd0(n - k, n * q)
    return math.exp(lc) * math.sqrt(n / (2 * math.pi * k * (n - k)))


def binom_cdf_lower(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k) for k at or below the mean, summed down from k."""
    term = binom_pmf(k, n, p)
    total = 0.0
    ratio = (1 - p) / p
    i = k
    while term > 0 and i >= 0:
        total += term
        if term < total * 1e-17:
            break
        term *= i * ratio / (n - i + 1)
        i -= 1
    return total


# === Coverage and power ===

@dataclass(frozen=True)
class Coverage:
    """How often the paired interval covers the true gap, over simulation replays."""

    replays: int
    covers: int
    excludes_zero: int
    width_sum: Fraction = Fraction(0)     # sum of the paired intervals' widths

    @property
    def covers_rate(self) -> Fraction:
        return Fraction(self.covers, self.replays)

    @property
    def excludes_zero_rate(self) -> Fraction:
        return Fraction(self.excludes_zero, self.replays)

    @property
    def mean_half_width(self) -> Fraction:
        return self.width_sum / (2 * self.replays)

    @staticmethod
    def standard_error(rate: Fraction, replays: int) -> float:
        """Monte Carlo standard error of a rate estimated from *replays* replays."""
        return math.sqrt(float(rate * (1 - rate)) / replays)

    def to_json(self) -> dict:
        return {
            "replays": self.replays,
            "covers": float(self.covers_rate),
            "covers_se": self.standard_error(self.covers_rate, self.replays),
            "excludes_zero": float(self.excludes_zero_rate),
            "excludes_zero_se": self.standard_error(self.excludes_zero_rate, self.replays),
            "mean_half_width": float(self.mean_half_width),
        }


def detects(interval: Interval, true_gap: Fraction) -> bool:
    """Does the interval exclude 0 on the side of the true gap (either side when it is 0)?"""
    if true_gap > 0:
        return interval.lo > 0
    if true_gap < 0:
        return interval.hi < 0
    return interval.excludes_zero()


def coverage(rng: random.Random, copula: Copula, n_items: int, *, replays: int, resamples: int,
             confidence, engine: str = "stream", progress=None) -> Coverage:
    """Replay simulate-then-paired-CI *replays* times on one generator.

    The true gap is ``acc_b - acc_a`` in exact arithmetic; an interval
    covers it when ``lo <= gap <= hi``, and "excludes zero" counts intervals
    that exclude 0 on the side of the true gap (power when the gap is not 0,
    type-I error when it is).  The ``counts`` engine simulates each replay's
    cell counts as one multinomial draw instead of n items.
    """
    true_gap = copula.true_gap
    covers = hits = 0
    width = Fraction(0)
    for replay in range(replays):
        if engine == "counts":
            data = copula.simulate_cells(rng, n_items)
        else:
            data = copula.simulate(rng, n_items)
        interval = paired_distribution(rng, data, resamples, engine).interval(confidence)
        covers += true_gap in interval
        hits += detects(interval, true_gap)
        width += interval.hi - interval.lo
        if progress:
            progress(replay + 1, replays)
    return Coverage(replays, covers, hits, width)


# --- Planning: analytic power, items needed, interval widths ---

def z_value(confidence) -> float:
    """The two-sided normal quantile of a confidence level (1.96 at 0.95)."""
    return NormalDist().inv_cdf(1 - float(1 - Fraction(confidence)) / 2)


@dataclass(frozen=True)
class PowerPlan:
    """Analytic power of the paired (and unpaired) interval from the cell probabilities.

    The paired gap averages per-item differences in {-1, 0, +1} with variance
    ``sd**2 = P(B only) + P(A only) - gap**2``; its interval is close to
    ``gap +- z*sd/sqrt(n)``, so it excludes 0 on the true side with probability
    ``Phi(sqrt(n)*|gap|/sd - z)``.  Unpaired: ``sd**2 = a(1-a) + b(1-b)``.

    >>> plan = PowerPlan(Copula(CORR, ACC_A, ACC_B).cells, CONFIDENCE)
    >>> round(plan.power(500), 3), plan.items_needed(0.8), plan.items_needed(0.8, paired=False)
    (0.37, 1482, 1884)
    """

    cells: Cells
    confidence: Fraction

    @property
    def gap(self) -> float:
        return self.cells.b - self.cells.a

    def sd(self, paired: bool = True) -> float:
        c = self.cells
        if paired:
            return math.sqrt(max(0.0, c.a_only + c.b_only - self.gap ** 2))
        return math.sqrt(c.a * (1 - c.a) + c.b * (1 - c.b))

    def power(self, n: int, paired: bool = True) -> float:
        """P(the interval excludes 0 on the true gap's side); 1 - confidence when the gap is 0."""
        z, sd = z_value(self.confidence), self.sd(paired)
        if self.gap == 0 or sd == 0:
            return float(1 - self.confidence) if self.gap == 0 else 1.0
        return NormalDist().cdf(math.sqrt(n) * abs(self.gap) / sd - z)

    def items_needed(self, target, paired: bool = True):
        """Smallest n (>= 2) whose analytic power reaches *target*; None when the gap is 0."""
        if self.gap == 0:
            return None
        z, sd = z_value(self.confidence), self.sd(paired)
        n = max(2, math.ceil(((z + NormalDist().inv_cdf(float(target))) * sd / self.gap) ** 2))
        while n > 2 and self.power(n - 1, paired) >= target:
            n -= 1
        while self.power(n, paired) < target:
            n += 1
        return n

    def half_width(self, n: int, paired: bool = True) -> float:
        """The interval's expected half-width, ``z*sd/sqrt(n)``."""
        return z_value(self.confidence) * self.sd(paired) / math.sqrt(n)


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
    """Items for a +-half_width interval on one accuracy near *accuracy*.

    Wald: ``n = z**2 p(1-p) / h**2``.  Wilson: the smallest n whose score
    interval around p is no wider.  Clopper-Pearson (exact): the smallest n
    whose exact interval for round(p*n) successes has half-width <= h.

    >>> plan_accuracy(Fraction("0.85"), Fraction("0.015"), CONFIDENCE).wald
    2177
    """
    p, h, z = float(accuracy), float(half_width), z_value(confidence)
    wald = max(2, math.ceil(z * z * p * (1 - p) / (h * h)))

    def wilson_half_width(n):
        return z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))

    lo, hi = 1, max(4, 4 * wald)
    while wilson_half_width(hi) > h:
        hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if wilson_half_width(mid) > h else (lo, mid)
    wilson = max(2, hi)
    n = max(2, min(wald, wilson) - 60)
    while clopper_pearson_half_width(round(Fraction(accuracy) * n), n, confidence) > h:
        n += 1
    return AccuracyPlan(Fraction(accuracy), Fraction(half_width), Fraction(confidence),
                        wald, wilson, n)


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k), from the cumulative table (absolute error ~1e-15)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    lo, cdf = _binomial_cdf_table(n, p)
    if k < lo:
        return 0.0
    return min(1.0, cdf[min(k - lo, len(cdf) - 1)] / cdf[-1])


def clopper_pearson(successes: int, n: int, confidence) -> tuple:
    """The exact (Clopper-Pearson) interval for a binomial proportion, by bisection."""
    alpha = float(1 - Fraction(confidence)) / 2

    def solve(f):                         # f is increasing in p; find f(p) = 0
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        return (lo + hi) / 2

    lower = 0.0 if successes == 0 else solve(
        lambda q: (1 - binom_cdf(successes - 1, n, q)) - alpha)
    upper = 1.0 if successes == n else solve(lambda q: alpha - binom_cdf(successes, n, q))
    return lower, upper


def clopper_pearson_half_width(successes: int, n: int, confidence) -> float:
    lower, upper = clopper_pearson(successes, n, confidence)
    return (upper - lower) / 2


@dataclass(frozen=True)
class SweepRow:
    """One eval-set size of a power sweep."""

    n: int
    power: float               # analytic, paired
    unpaired_power: float      # analytic, unpaired
    half_width: float          # analytic paired half-width
    unpaired_half_width: float
    simulated: Coverage


@dataclass(frozen=True)
class Sweep:
    """Power, coverage and widths over eval-set sizes, and the size a target power needs."""

    copula: Copula
    rows: tuple
    target_power: Fraction
    n_needed: int | None
    unpaired_n_needed: int | None
    confirmation: Coverage | None     # the simulation run at n_needed


def sweep(rng: random.Random, copula: Copula, grid, *, replays: int, resamples: int,
          confidence, target_power, engine: str = "counts", progress=None) -> Sweep:
    """Analytic and simulated power and coverage at each n of *grid*, then the n for
    *target_power* (analytic) confirmed by one more simulation at that n."""
    plan = PowerPlan(copula.cells, Fraction(confidence))
    n_needed = plan.items_needed(target_power)
    steps = _steps(progress, [replays] * (len(grid) + 1))
    rows = []
    for n in grid:
        simulated = coverage(rng, copula, n, replays=replays, resamples=resamples,
                             confidence=confidence, engine=engine, progress=next(steps))
        rows.append(SweepRow(n, plan.power(n), plan.power(n, paired=False), plan.half_width(n),
                             plan.half_width(n, paired=False), simulated))
    confirmation = None
    if n_needed is not None:
        confirmation = coverage(rng, copula, n_needed, replays=replays, resamples=resamples,
                                confidence=confidence, engine=engine, progress=next(steps))
    return Sweep(copula, tuple(rows), Fraction(target_power), n_needed,
                 plan.items_needed(target_power, paired=False), confirmation)


# === Analysis ===

@dataclass(frozen=True)
class Analysis:
    """Everything the report prints about two systems scored on the same items."""

    n: int
    accuracy_a: Fraction
    accuracy_b: Fraction
    ci_a: Interval
    ci_b: Interval
    paired: Interval
    unpaired: Interval
    mcnemar: McNemar
    resamples: int
    confidence: Fraction
    paired_distribution: Distribution
    engine: str = "stream"

    @property
    def gap(self) -> Fraction:
        return self.accuracy_b - self.accuracy_a


def analyze(scores: Scores, rng: random.Random, *, resamples: int, confidence,
            engine: str = "stream", progress=None) -> Analysis:
    """Accuracies, per-system, paired and unpaired intervals, and McNemar.

    The generator is consumed in the article's order: A's interval, B's,
    the paired one, then the unpaired one.  *progress*, if given, is called
    as ``progress(done, total)`` in units of resamples.
    """
    confidence = Fraction(confidence)
    dists = bootstrap(rng, scores, resamples, engine=engine, progress=progress)
    b_only = sum(1 for x, y in zip(scores.a, scores.b) if y == 1 and x == 0)
    a_only = sum(1 for x, y in zip(scores.a, scores.b) if x == 1 and y == 0)
    return Analysis(
        n=scores.n, accuracy_a=scores.mean_a, accuracy_b=scores.mean_b,
        ci_a=dists["a"].interval(confidence), ci_b=dists["b"].interval(confidence),
        paired=dists["paired"].interval(confidence),
        unpaired=dists["unpaired"].interval(confidence),
        mcnemar=mcnemar_exact(a_only, b_only), resamples=resamples, confidence=confidence,
        paired_distribution=dists["paired"], engine=engine,
    )


# === I/O ===

class Progress:
    """A one-line progress indicator on stderr, only on a terminal and only for slow loops.

    Nothing is drawn during the first second, nor ever when the stream is not
    a TTY; stdout is never touched.  Call it as ``progress(done, total)``.
    """

    def __init__(self, label: str, stream=None, enabled: bool = True, delay: float = 1.0):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.delay = delay
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self.start
        if elapsed < self.delay or (now - self.last < 0.2 and done < total):
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

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class Dataset:
    """Scores read from a file, with where they came from."""

    scores: Scores
    path: str
    sha256: str
    rows: int
    columns: tuple


def atomic_write(path: str, text: str) -> None:
    """Write *text* to *path* via a temporary file in the same folder and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=folder)
    except OSError as err:
        raise ToolError(f"cannot write {path}: {err.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise ToolError(f"cannot write {path}: {err.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise


def scores_csv_text(scores: Scores) -> str:
    """The CSV the article ships: ``item,system_a_correct,system_b_correct``, \\n line ends."""
    lines = [",".join(CSV_COLUMNS)]
    lines += [f"{i},{x},{y}" for i, (x, y) in enumerate(zip(scores.a, scores.b), start=1)]
    return "\n".join(lines) + "\n"


def write_scores_csv(path: str, scores: Scores) -> None:
    """Write the per-item scores of a simulated run, atomically."""
    atomic_write(path, scores_csv_text(scores))


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as err:
        raise ToolError(f"cannot read {path}: {err.strerror}") from None


def read_scores_csv(path: str, a_col: str = CSV_COLUMNS[1], b_col: str = CSV_COLUMNS[2],
                    id_col: str = CSV_COLUMNS[0]) -> Dataset:
    """Read per-item 0/1 scores of two systems from a comma-separated file.

    Refuses, with a one-line ToolError, anything it cannot read unambiguously:
    a missing or empty file, a byte-order mark, CRLF line ends, no rows, a
    missing column, a row with the wrong number of fields, a value other
    than 0 or 1, or a repeated item id.  No row is ever dropped.
    """
    import csv
    import hashlib
    import io
    raw = _read_bytes(path)
    if not raw:
        raise ToolError(f"{path} is empty")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ToolError(f"{path} starts with a UTF-8 byte-order mark; save it without one")
    if b"\r" in raw:
        line = raw[:raw.index(b"\r")].count(b"\n") + 1
        raise ToolError(f"{path} line {line}: CRLF (Windows) line end; convert line ends to \\n")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise ToolError(f"{path} line {line}: not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
        index = {}
        for name in (id_col, a_col, b_col):
            if name not in header:
                raise ToolError(f"{path}: no column {name!r} (columns: {', '.join(header)})")
            index[name] = header.index(name)
        seen, a, b = set(), [], []
        for row in reader:
            line = reader.line_num
            if len(row) != len(header):
                raise ToolError(f"{path} line {line}: {len(row)} fields, expected {len(header)}")
            item = row[index[id_col]]
            if item in seen:
                raise ToolError(f"{path} line {line}: item {item!r} appears twice")
            seen.add(item)
            a.append(_binary_cell(path, line, a_col, row[index[a_col]]))
            b.append(_binary_cell(path, line, b_col, row[index[b_col]]))
    except csv.Error as err:
        raise ToolError(f"{path} line {reader.line_num}: {err}") from None
    if not a:
        raise ToolError(f"{path} has a header but no rows")
    digest = hashlib.sha256(raw).hexdigest()
    return Dataset(Scores(tuple(a), tuple(b)), path, digest, len(a), (id_col, a_col, b_col))


def _binary_cell(path, line, column, text) -> int:
    if text not in ("0", "1"):
        raise ToolError(f"{path} line {line}, column {column}: {text!r} is not 0 or 1")
    return int(text)


# === Report ===

@dataclass(frozen=True)
class Report:
    """One comparison run: what was asked, where the data came from, what came out."""

    params: dict
    source: str                 # "simulation" or "csv"
    analysis: Analysis
    coverage: Coverage | None
    dataset: Dataset | None = None
    plan: PowerPlan | None = None


@dataclass(frozen=True)
class SweepReport:
    params: dict
    sweep: Sweep


@dataclass(frozen=True)
class AccuracyPlanReport:
    params: dict
    plan: AccuracyPlan


def render_text(report) -> str:
    """The report as text for a terminal."""
    if isinstance(report, SweepReport):
        return _sweep_text(report)
    if isinstance(report, AccuracyPlanReport):
        return _accuracy_plan_text(report)
    return _comparison_text(report)


def render_json(report) -> str:
    """The report as one JSON object (proportions as floats)."""
    if isinstance(report, SweepReport):
        body = _sweep_json(report)
    elif isinstance(report, AccuracyPlanReport):
        body = _accuracy_plan_json(report)
    else:
        body = _comparison_json(report)
    return json.dumps({"version": __version__, **body}, indent=2) + "\n"


def _params_json(params: dict) -> dict:
    return {key: (float(value) if isinstance(value, Fraction) else value)
            for key, value in params.items()}


def _comparison_text(report: Report) -> str:
    """The article's report, line for line, then coverage, plan, notes, verdict, histogram."""
    p, result = report.params, report.analysis
    level = format_percent(result.confidence)
    if report.source == "simulation":
        true_gap = p["acc_b"] - p["acc_a"]
        head = (f"n={result.n}, true accuracies A={format_decimal(p['acc_a'])} "
                f"B={format_decimal(p['acc_b'])}, true gap={format_pts(true_gap)}")
    else:
        head = f"n={result.n} items from {report.dataset.path} (true accuracies unknown)"
    lines = [
        head,
        f"observed: A={round_fixed(result.accuracy_a, 3)} {result.ci_a.as_proportions()}   "
        f"B={round_fixed(result.accuracy_b, 3)} {result.ci_b.as_proportions()}",
        f"observed gap: {format_pts(result.gap)}",
        f"  paired bootstrap {level} CI:   {result.paired}",
        f"  unpaired bootstrap {level} CI: {result.unpaired}",
        f"  discordant pairs: B-only correct={result.mcnemar.b_only}, "
        f"A-only correct={result.mcnemar.a_only}; McNemar exact p={result.mcnemar.p_text}",
    ]
    if report.coverage is not None:
        lines += _coverage_lines(report.coverage, p["acc_b"] - p["acc_a"])
    if report.plan is not None:
        lines.append(_plan_line(report.plan, result.n, p["target_power"]))
    if result.engine == "counts":
        lines.append("note: counts engine: resamples drawn as multinomial cell counts (same "
                     "distribution as resampling items, not the article's random stream)")
    if report.source == "csv":
        lines.append(
            f"note: the bootstrap here starts from Random({p['seed']}) afresh, so the intervals "
            "differ from the simulated run's by Monte Carlo error; accuracies and McNemar "
            "are exact functions of the file and match it exactly")
    lines.append(verdict(result))
    lines += text_histogram(result.paired_distribution, result.paired, level)
    return "\n".join(lines) + "\n"


def _coverage_lines(cov: Coverage, true_gap: Fraction) -> list:
    sign = "+" if true_gap >= 0 else "-"
    which = f"a 'significant' {sign}gap" if true_gap != 0 else "a false positive"

    def rate(value):
        se = Coverage.standard_error(value, cov.replays) * 100
        return f"{round_fixed(value * 100, 1)}% of the time (Monte Carlo s.e. {se:.1f}%)"

    return [
        f"over {cov.replays} replays: paired CI covers the true gap {rate(cov.covers_rate)};",
        f"CI excludes zero ({which}) {rate(cov.excludes_zero_rate)}",
    ]


def _plan_line(plan: PowerPlan, n: int, target) -> str:
    def needed(paired):
        value = plan.items_needed(target, paired)
        return "never (the true gap is 0)" if value is None else f"n={value:,}"

    return (f"plan (analytic): power at n={n:,} is {100 * plan.power(n):.1f}% paired, "
            f"{100 * plan.power(n, paired=False):.1f}% unpaired; {format_percent(target)} power "
            f"needs {needed(True)} paired, {needed(False)} unpaired")


def verdict(result: Analysis) -> str:
    """One plain sentence from the paired interval."""
    level = format_percent(result.confidence)
    if not result.paired.excludes_zero():
        return (f"verdict: cannot tell. The paired {level} CI {result.paired} includes 0, "
                f"so the observed {format_pts(result.gap)} may be noise.")
    better, worse = ("B", "A") if result.paired.lo > 0 else ("A", "B")
    return (f"verdict: {better} is likely better than {worse}: the paired {level} CI "
            f"{result.paired} excludes 0.")


def _verdict_word(result: Analysis) -> str:
    if not result.paired.excludes_zero():
        return "cannot tell"
    return "B better" if result.paired.lo > 0 else "A better"


def histogram_bins(dist: Distribution, bins: int) -> list:
    """[(lo, hi, count)] over the distribution's range, edges exact and on its value grid."""
    step = Fraction(1, dist.denominator)
    low, high = Fraction(dist.sums[0], dist.denominator), Fraction(dist.sums[-1], dist.denominator)
    width = max(1, math.ceil((high - low + step) / bins / step)) * step
    start = math.floor(low / width) * width
    count = math.floor((high - start) / width) + 1
    edges = [start + i * width for i in range(count + 1)]
    cuts = [bisect.bisect_left(dist.sums, edge * dist.denominator) for edge in edges]
    return [(edges[i], edges[i + 1], cuts[i + 1] - cuts[i]) for i in range(count)]


def text_histogram(dist: Distribution, interval: Interval, level: str, bins: int = 12) -> list:
    """A compact ASCII histogram of the paired gap: '#' inside the interval, '.' outside."""
    rows = histogram_bins(dist, bins)
    tallest = max(count for _, _, count in rows)
    lines = [f"paired gap over {len(dist.sums)} resamples (bins from the value shown; "
             f"'#' inside the {level} CI, '.' outside):"]
    for lo, hi, count in rows:
        mark = "#" if lo + (hi - lo) / 2 in interval else "."
        bar = mark * max(1 if count else 0, round(40 * count / tallest))
        zero = "  <- 0" if lo <= 0 < hi else ""
        lines.append(f"  {round_fixed(lo * 100, 1, sign=True):>6} pts |{bar:<40} "
                     f"{count:>6}{zero}")
    return lines


def _comparison_json(report: Report) -> dict:
    result = report.analysis
    body = {
        "source": report.source,
        "engine": result.engine,
        "params": _params_json(report.params),
        "accuracy": {"a": float(result.accuracy_a), "b": float(result.accuracy_b)},
        "gap": float(result.gap),
        "ci": {"a": result.ci_a.to_json(), "b": result.ci_b.to_json(),
               "paired": result.paired.to_json(), "unpaired": result.unpaired.to_json()},
        "mcnemar": {"a_only": result.mcnemar.a_only, "b_only": result.mcnemar.b_only,
                    "p": result.mcnemar.p},
        "coverage": report.coverage.to_json() if report.coverage else None,
        "verdict": _verdict_word(result),
        "histogram": [{"lo": float(lo), "hi": float(hi), "count": count}
                      for lo, hi, count in histogram_bins(result.paired_distribution, 12)],
    }
    if report.plan is not None:
        target = report.params["target_power"]
        body["plan"] = {
            "power": report.plan.power(result.n),
            "unpaired_power": report.plan.power(result.n, paired=False),
            "target_power": float(target),
            "n_needed": report.plan.items_needed(target),
            "unpaired_n_needed": report.plan.items_needed(target, paired=False),
        }
    if report.dataset is not None:
        body["input"] = {"path": report.dataset.path, "sha256": report.dataset.sha256,
                         "rows": report.dataset.rows, "columns": list(report.dataset.columns)}
    return body


def _sweep_text(report: SweepReport) -> str:
    p, result = report.params, report.sweep
    level = format_percent(p["confidence"])
    copula = result.copula
    lines = [
        f"power sweep: true accuracies A={format_decimal(copula.acc_a)} "
        f"B={format_decimal(copula.acc_b)} (true gap {format_pts(copula.true_gap)}), "
        f"corr={format_decimal(copula.corr)}, paired {level} percentile CI",
        f"  {p['engine']} engine, {p['replays']} replays x {p['resamples']} resamples per n, "
        f"seed {p['seed']}; simulated rates with Monte Carlo s.e. in parentheses",
        f"  {'n':>7}  {'analytic power':>14}  {'simulated power':>16}  {'coverage':>15}  "
        f"{'paired +-':>10}  {'unpaired +-':>11}",
    ]
    for row in result.rows:
        sim = row.simulated
        lines.append(
            f"  {row.n:>7,}  {100 * row.power:>13.1f}%  {_rate(sim.excludes_zero_rate, sim):>16}  "
            f"{_rate(sim.covers_rate, sim):>15}  {100 * row.half_width:>6.2f} pts  "
            f"{100 * row.unpaired_half_width:>7.2f} pts")
    target = format_percent(result.target_power)
    if result.n_needed is None:
        lines.append(f"{target} power: never reached, the true gap is 0")
    else:
        conf = result.confirmation
        lines.append(
            f"{target} power needs n={result.n_needed:,} paired (analytic; simulated at "
            f"n={result.n_needed:,}: {_rate(conf.excludes_zero_rate, conf)} power, "
            f"{_rate(conf.covers_rate, conf)} coverage); unpaired needs "
            f"n={result.unpaired_n_needed:,}")
    lines.append("(+- columns: analytic half-width of the interval, z*sd/sqrt(n))")
    return "\n".join(lines) + "\n"


def _rate(value: Fraction, cov: Coverage) -> str:
    se = Coverage.standard_error(value, cov.replays)
    return f"{100 * float(value):.1f}% ({100 * se:.1f})"


def _sweep_json(report: SweepReport) -> dict:
    result = report.sweep
    return {
        "source": "sweep",
        "params": _params_json(report.params),
        "rows": [{"n": row.n, "analytic_power": row.power,
                  "analytic_unpaired_power": row.unpaired_power,
                  "paired_half_width": row.half_width,
                  "unpaired_half_width": row.unpaired_half_width,
                  "simulated": row.simulated.to_json()} for row in result.rows],
        "target_power": float(result.target_power),
        "n_needed": result.n_needed,
        "unpaired_n_needed": result.unpaired_n_needed,
        "confirmation": result.confirmation.to_json() if result.confirmation else None,
    }


def _accuracy_plan_text(report: AccuracyPlanReport) -> str:
    plan = report.plan
    level = format_percent(plan.confidence)
    lines = [
        f"items needed for a {level} interval of +-{round_fixed(plan.half_width * 100, 2)} pts "
        f"on one accuracy near {format_decimal(plan.accuracy)}:",
        f"  Wald (normal approximation):  n={plan.wald:,}",
        f"  Wilson score interval:        n={plan.wilson:,}",
        f"  Clopper-Pearson (exact):      n={plan.clopper_pearson:,}",
        "(the half-width shrinks as 1/sqrt(n): halving it takes four times the items)",
    ]
    return "\n".join(lines) + "\n"


def _accuracy_plan_json(report: AccuracyPlanReport) -> dict:
    plan = report.plan
    return {"source": "accuracy plan",
            "params": _params_json(report.params),
            "n_needed": {"wald": plan.wald, "wilson": plan.wilson,
                         "clopper_pearson": plan.clopper_pearson}}


# --- Pictures: self-contained SVG, no dependencies ---

def _nice_ticks(lo: float, hi: float, count: int = 6) -> list:
    """Round tick values covering [lo, hi]."""
    span = max(hi - lo, 1e-12)
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(lo / step) * step
    ticks = []
    value = first
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


class _Svg:
    """A tiny SVG canvas with a plot frame and data coordinates."""

    def __init__(self, width, height, xrange, yrange, margin=(70, 30, 70, 60)):
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = margin
        self.x0, self.x1 = xrange
        self.y0, self.y1 = yrange
        self.parts = []

    def x(self, value):
        return self.left + (value - self.x0) / (self.x1 - self.x0) * (
            self.width - self.left - self.right)

    def y(self, value):
        return self.height - self.bottom - (value - self.y0) / (self.y1 - self.y0) * (
            self.height - self.top - self.bottom)

    def add(self, element: str):
        self.parts.append(element)

    def text(self, x, y, content, size=13, anchor="middle", extra=""):
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
            self.text(self.x(tick), bottom + 20, xfmt(tick), size=12)
        for tick in yticks:
            self.line(left - 5, self.y(tick), left, self.y(tick))
            self.text(left - 8, self.y(tick) + 4, yfmt(tick), size=12, anchor="end")
        self.text((left + self.width - self.right) / 2, self.height - 15, xlabel)
        self.text(18, (self.top + bottom) / 2, ylabel,
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
    """The paired gap's bootstrap distribution: bars, the interval shaded, 0 and the truth marked."""
    rows = histogram_bins(result.paired_distribution, bins)
    pts = [float(edge) * 100 for edge in [rows[0][0], rows[-1][1]]]
    marks = [0.0, float(result.gap) * 100] + ([float(true_gap) * 100] if true_gap is not None else [])
    lo, hi = min(pts + marks), max(pts + marks)
    pad = (hi - lo) * 0.05 or 1.0
    tallest = max(count for _, _, count in rows)
    canvas = _Svg(760, 440, (lo - pad, hi + pad), (0, tallest * 1.15))
    level = format_percent(result.confidence)
    ci_lo, ci_hi = float(result.paired.lo) * 100, float(result.paired.hi) * 100
    canvas.add(f'<rect x="{canvas.x(ci_lo):.1f}" y="{canvas.top}" '
               f'width="{canvas.x(ci_hi) - canvas.x(ci_lo):.1f}" '
               f'height="{canvas.y(0) - canvas.top:.1f}" fill="#dbe9f6"/>')
    for left, right, count in rows:
        x0, x1 = canvas.x(float(left) * 100), canvas.x(float(right) * 100)
        inside = left + (right - left) / 2 in result.paired
        canvas.add(f'<rect x="{x0:.1f}" y="{canvas.y(count):.1f}" width="{max(x1 - x0 - 1, 0.5):.1f}" '
                   f'height="{canvas.y(0) - canvas.y(count):.1f}" '
                   f'fill="{"#3b75af" if inside else "#9bb8d3"}"/>')
    canvas.axes(_nice_ticks(lo - pad, hi + pad), _nice_ticks(0, tallest * 1.1, 5),
                "gap B - A (accuracy points)", "resamples",
                xfmt=lambda v: f"{v:+g}" if v else "0", yfmt=lambda v: f"{v:g}")
    top = canvas.top
    canvas.line(canvas.x(0), top, canvas.x(0), canvas.y(0), stroke="#555", width=1.5, dash="5,4")
    canvas.text(canvas.x(0), top - 6, "0", size=12)
    gap = float(result.gap) * 100
    canvas.line(canvas.x(gap), top + 14, canvas.x(gap), canvas.y(0), stroke="#222", width=1.5,
                dash="2,3")
    canvas.text(canvas.x(gap), top + 10, f"observed {gap:+.1f}", size=12)
    if true_gap is not None:
        truth = float(true_gap) * 100
        canvas.line(canvas.x(truth), top + 28, canvas.x(truth), canvas.y(0), stroke="#c0392b",
                    width=2)
        canvas.text(canvas.x(truth), top + 24, f"true gap {truth:+.1f}", size=12,
                    extra=' fill="#c0392b"')
    canvas.text(canvas.width / 2, 22, f"Paired bootstrap distribution of the gap "
                f"({len(result.paired_distribution.sums)} resamples)", size=15)
    canvas.text(canvas.width / 2, 40, f"shaded: {level} CI {result.paired}", size=12,
                extra=' fill="#2c5d8a"')
    return canvas.svg("Paired bootstrap distribution of the accuracy gap")


def svg_power_curve(report: SweepReport) -> str:
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
                size=12, anchor="end", extra=' fill="#c0392b"')
    if result.n_needed:
        canvas.line(canvas.x(result.n_needed), canvas.y(0), canvas.x(result.n_needed),
                    canvas.y(target), stroke="#c0392b", dash="5,4")
        canvas.text(canvas.x(result.n_needed) + 4, canvas.y(0.04), f"n={result.n_needed:,}",
                    size=12, anchor="start", extra=' fill="#c0392b"')
    simulated = [(row.n, row.simulated) for row in result.rows]
    if result.confirmation is not None:
        simulated.append((result.n_needed, result.confirmation))
    for n, cov in simulated:
        rate = float(cov.excludes_zero_rate)
        se = Coverage.standard_error(cov.excludes_zero_rate, cov.replays)
        canvas.line(canvas.x(n), canvas.y(max(0, rate - 1.96 * se)), canvas.x(n),
                    canvas.y(min(1, rate + 1.96 * se)), stroke="#222", width=1.5)
        canvas.add(f'<circle cx="{canvas.x(n):.1f}" cy="{canvas.y(rate):.1f}" r="4" '
                   f'fill="#222"/>')
    canvas.axes(_nice_ticks(0, top_n), [0, 0.2, 0.4, 0.6, 0.8, 1.0], "items in the eval set (n)",
                "power (interval excludes 0)", xfmt=lambda v: f"{v:,.0f}",
                yfmt=lambda v: f"{100 * v:.0f}%")
    legend = [("#3b75af", None, "analytic, paired"), ("#999", "6,4", "analytic, unpaired")]
    for i, (colour, dash, label) in enumerate(legend):
        y = canvas.top + 14 + 18 * i
        canvas.line(canvas.left + 14, y, canvas.left + 44, y, stroke=colour, width=2, dash=dash)
        canvas.text(canvas.left + 50, y + 4, label, size=12, anchor="start")
    y = canvas.top + 14 + 18 * len(legend)
    canvas.add(f'<circle cx="{canvas.left + 29}" cy="{y}" r="4" fill="#222"/>')
    canvas.text(canvas.left + 50, y + 4, "simulated, \u00b11.96 Monte Carlo s.e.", size=12,
                anchor="start")
    copula = result.copula
    canvas.text(canvas.width / 2, 22, f"Power to detect a {format_pts(copula.true_gap)} gap "
                f"(A={format_decimal(copula.acc_a)}, B={format_decimal(copula.acc_b)}, "
                f"corr={format_decimal(copula.corr)})", size=15)
    return canvas.svg("Power of the paired bootstrap interval by eval-set size")



# === CLI ===

EXAMPLES = """\
examples:
  %(prog)s                                  reproduce the article (n=500, 1000 replays)
  %(prog)s --replays 0                      the six numbers only, no coverage loop
  %(prog)s --n-items 2000 --replays 200     preview coverage and power at 2,000 items
  %(prog)s --n-grid 250,500,1000,2000,4000  power sweep over eval-set sizes (counts engine)
  %(prog)s --n-grid 500,1000,2000 --plot power.svg   ... and draw the power curve
  %(prog)s --half-width 0.015 --accuracy 0.85        items for +-1.5 pts on one accuracy
  %(prog)s --write-csv run.csv              also save the simulated per-item scores
  %(prog)s --csv datasets/bootstrap-eval-deltas.csv   recompute from per-item scores
  %(prog)s --plot gap.svg                   draw the paired gap's bootstrap distribution
  %(prog)s --json                           one JSON object instead of the text report

exit status: 0 success, 2 usage or input error (one line on stderr)
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr and exit status 2."""

    def error(self, message):
        raise ToolError(f"{message} (see --help)")


def _fraction_arg(text: str) -> Fraction:
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    return value


def _int_arg(text: str) -> int:
    try:
        return int(text.strip().replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _grid_arg(text: str) -> tuple:
    parts = [part for part in text.replace(" ", "").split(",")]
    if not any(parts):
        raise argparse.ArgumentTypeError("empty grid")
    try:
        return tuple(int(part.replace("_", "")) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of whole numbers: {text!r}") from None


SIMULATION_FLAGS = ("n_items", "corr", "acc_a", "acc_b", "replays")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bootstrap_eval_deltas",
        description="Is B really better than A? Paired bootstrap CIs for an eval delta, "
                    "McNemar's exact test, and a coverage check on a simulator with a known gap.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sim = parser.add_argument_group("simulation (the article's experiment)")
    sim.add_argument("--n-items", type=_int_arg, default=None, metavar="N",
                     help=f"items in the eval set, N_ITEMS (default {N_ITEMS})")
    sim.add_argument("--corr", type=_fraction_arg, default=None, metavar="R",
                     help=f"loading of each system's latent score on the shared item "
                          f"difficulty, -1 < R < 1 (default {CORR})")
    sim.add_argument("--acc-a", type=_fraction_arg, default=None, metavar="P",
                     help=f"true accuracy of system A (default {format_decimal(ACC_A)})")
    sim.add_argument("--acc-b", type=_fraction_arg, default=None, metavar="P",
                     help=f"true accuracy of system B (default {format_decimal(ACC_B)})")
    sim.add_argument("--replays", type=_int_arg, default=None, metavar="K",
                     help=f"coverage replays; 0 skips the loop (default {REPLAYS})")
    sim.add_argument("--write-csv", metavar="PATH",
                     help="also write the simulated per-item scores to PATH (atomically)")
    plan = parser.add_argument_group("planning")
    plan.add_argument("--n-grid", type=_grid_arg, metavar="N1,N2,...",
                      help="power sweep over these eval-set sizes (increasing): analytic and "
                           "simulated power, coverage, interval half-widths")
    plan.add_argument("--target-power", type=_fraction_arg, default=Fraction("0.8"),
                      metavar="P", help="power to plan for, 0 < P < 1 (default 0.8)")
    plan.add_argument("--half-width", type=_fraction_arg, metavar="H",
                      help="items needed for a +-H interval on one accuracy (e.g. 0.015)")
    plan.add_argument("--accuracy", type=_fraction_arg, metavar="P",
                      help="the accuracy expected, with --half-width (default 0.5, the worst case)")
    boot = parser.add_argument_group("bootstrap")
    boot.add_argument("--seed", type=_int_arg, default=SEED,
                      help=f"seed of the one random.Random that drives the run (default {SEED})")
    boot.add_argument("--resamples", type=_int_arg, default=RESAMPLES, metavar="B",
                      help=f"bootstrap resamples per interval (default {RESAMPLES})")
    boot.add_argument("--confidence", type=_fraction_arg, default=CONFIDENCE, metavar="C",
                      help=f"confidence level, 0 < C < 1 (default {format_decimal(CONFIDENCE)})")
    boot.add_argument("--engine", choices=ENGINES, default=None,
                      help="stream: resample items, bit-exact with the article (default); "
                           "counts: draw multinomial cell counts, cost independent of n "
                           "(0/1 scores; the default for --n-grid)")
    data = parser.add_argument_group("your data")
    data.add_argument("--csv", metavar="PATH",
                      help="recompute from per-item scores in PATH "
                           "(columns item,system_a_correct,system_b_correct)")
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    out.add_argument("--plot", metavar="PATH.svg",
                     help="write an SVG picture: the paired gap's bootstrap distribution, or "
                          "with --n-grid the power curve (atomically)")
    out.add_argument("--quiet", action="store_true",
                     help="no progress indicator on stderr (it is only drawn on a terminal, "
                          "for loops longer than a second)")
    out.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _flags(args, names) -> list:
    return ["--" + name.replace("_", "-") for name in names if getattr(args, name) is not None]


def validate(args) -> None:
    """Check flag values and combinations; raise ToolError with a one-line message."""
    if args.half_width is not None:
        others = _flags(args, SIMULATION_FLAGS + ("n_grid", "csv", "write_csv", "plot", "engine"))
        if others:
            raise ToolError(f"--half-width plans one accuracy on its own; drop {', '.join(others)}")
        if not 0 < args.half_width < 1:
            raise ToolError(f"--half-width must be a proportion above 0, like 0.015, "
                            f"got {format_decimal(args.half_width)}")
        args.accuracy = Fraction(1, 2) if args.accuracy is None else args.accuracy
        if not 0 < args.accuracy < 1:
            raise ToolError(f"--accuracy must be strictly between 0 and 1, "
                            f"got {format_decimal(args.accuracy)}")
    elif args.accuracy is not None:
        raise ToolError("--accuracy goes with --half-width")
    if args.csv is not None:
        given = _flags(args, SIMULATION_FLAGS + ("n_grid",))
        if given:
            raise ToolError(f"{', '.join(given)} describe the simulation and do not apply to "
                            "--csv (the true gap of a file is unknown)")
        if args.write_csv is not None:
            raise ToolError("--write-csv writes a simulated run; it does not apply to --csv")
    if args.n_grid is not None:
        if args.n_items is not None:
            raise ToolError("--n-grid replaces --n-items; give one of them")
        if args.write_csv is not None:
            raise ToolError("--write-csv writes one simulated run; it does not apply to --n-grid")
        if min(args.n_grid) < 2:
            raise ToolError(f"--n-grid sizes must be at least 2, got {min(args.n_grid)}")
        if any(a >= b for a, b in zip(args.n_grid, args.n_grid[1:])):
            raise ToolError(f"--n-grid must be strictly increasing, got "
                            f"{','.join(map(str, args.n_grid))}")
    if args.engine == "counts" and args.write_csv is not None:
        raise ToolError("--write-csv needs per-item scores; the counts engine simulates "
                        "cell counts only (use --engine stream)")
    for name, default in (("n_items", N_ITEMS), ("corr", CORR), ("acc_a", ACC_A),
                          ("acc_b", ACC_B), ("replays", REPLAYS)):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.engine is None:
        args.engine = "counts" if args.n_grid is not None else "stream"
    if args.n_items < 2:
        raise ToolError(f"--n-items must be at least 2, got {args.n_items}")
    if args.resamples < 1:
        raise ToolError(f"--resamples must be at least 1, got {args.resamples}")
    if args.replays < 0:
        raise ToolError(f"--replays must be 0 or more, got {args.replays}")
    if args.n_grid is not None and args.replays < 1:
        raise ToolError("--n-grid simulates: --replays must be at least 1")
    for flag, value in (("--acc-a", args.acc_a), ("--acc-b", args.acc_b)):
        if not 0 < value < 1:
            raise ToolError(f"{flag} must be strictly between 0 and 1, got {format_decimal(value)}")
    if not -1 < args.corr < 1:
        raise ToolError(f"--corr must be strictly between -1 and 1, got {format_decimal(args.corr)} "
                        "(at +-1 both systems would share one latent score and no item could "
                        "separate them)")
    if not 0 < args.confidence < 1:
        raise ToolError(f"--confidence must be strictly between 0 and 1, "
                        f"got {format_decimal(args.confidence)}")
    if not 0 < args.target_power < 1:
        raise ToolError(f"--target-power must be strictly between 0 and 1, "
                        f"got {format_decimal(args.target_power)}")
    for flag in ("write_csv", "plot"):
        _check_writable(getattr(args, flag), "--" + flag.replace("_", "-"))


def _check_writable(path, flag) -> None:
    """Refuse early (before any long computation) a path that cannot be written."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(folder):
        raise ToolError(f"cannot write {path}: no such folder {folder}")
    if not os.access(folder, os.W_OK):
        raise ToolError(f"cannot write {path}: folder {folder} is not writable")
    if os.path.isdir(path):
        raise ToolError(f"cannot write {path}: it is a folder ({flag})")


def _progress(args, label: str) -> Progress:
    return Progress(label, enabled=not args.quiet, delay=PROGRESS_DELAY)


def run(args):
    """Carry out a validated command line; return the report (files written atomically)."""
    rng = random.Random(args.seed)
    if args.half_width is not None:
        params = {"half_width": args.half_width, "accuracy": args.accuracy,
                  "confidence": args.confidence}
        return AccuracyPlanReport(params, plan_accuracy(args.accuracy, args.half_width,
                                                        args.confidence))
    copula = Copula(args.corr, args.acc_a, args.acc_b)
    params = {"n_items": args.n_items, "corr": args.corr, "acc_a": args.acc_a,
              "acc_b": args.acc_b, "seed": args.seed, "resamples": args.resamples,
              "replays": args.replays, "confidence": args.confidence, "engine": args.engine,
              "target_power": args.target_power}
    if args.n_grid is not None:
        params.update(n_items=None, n_grid=list(args.n_grid))
        with _progress(args, "power sweep") as progress:
            result = sweep(rng, copula, args.n_grid, replays=args.replays,
                           resamples=args.resamples, confidence=args.confidence,
                           target_power=args.target_power, engine=args.engine,
                           progress=progress)
        report = SweepReport(params, result)
        if args.plot:
            atomic_write(args.plot, svg_power_curve(report))
        return report
    if args.csv is not None:
        dataset = read_scores_csv(args.csv)
        _check_engine(args.engine, dataset.scores)
        params.update(n_items=dataset.rows, corr=None, acc_a=None, acc_b=None, replays=0)
        result = _analyze_with_progress(args, dataset.scores, rng)
        report = Report(params, "csv", result, None, dataset)
        if args.plot:
            atomic_write(args.plot, svg_histogram(result))
        return report
    scores = copula.simulate(rng, args.n_items) if args.engine == "stream" else \
        _cells_as_scores(copula.simulate_cells(rng, args.n_items))
    if args.write_csv is not None:
        write_scores_csv(args.write_csv, scores)
    result = _analyze_with_progress(args, scores, rng)
    cov = None
    if args.replays:
        with _progress(args, "coverage replays") as progress:
            cov = coverage(rng, copula, args.n_items, replays=args.replays,
                           resamples=args.resamples, confidence=args.confidence,
                           engine=args.engine, progress=progress)
    report = Report(params, "simulation", result, cov, plan=PowerPlan(copula.cells,
                                                                      args.confidence))
    if args.plot:
        atomic_write(args.plot, svg_histogram(result, copula.true_gap))
    return report


def _cells_as_scores(cells: Cells) -> Scores:
    """Per-item 0/1 scores with the given cell counts (items grouped by cell)."""
    pairs = ([(1, 1)] * cells.both + [(1, 0)] * cells.a_only + [(0, 1)] * cells.b_only
             + [(0, 0)] * cells.neither)
    return Scores(tuple(x for x, _ in pairs), tuple(y for _, y in pairs))


def _check_engine(engine: str, scores: Scores) -> None:
    if engine == "counts" and not scores.binary:
        raise ToolError("the counts engine needs 0/1 scores; use --engine stream")


def _analyze_with_progress(args, scores, rng) -> Analysis:
    with _progress(args, "bootstrap resamples") as progress:
        return analyze(scores, rng, resamples=args.resamples, confidence=args.confidence,
                       engine=args.engine, progress=progress)


def main(argv=None) -> int:
    """Entry point: parse, validate, run, print.  Returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        validate(args)
        report = run(args)
        sys.stdout.write(render_json(report) if args.json else render_text(report))
    except ToolError as err:
        print(f"bootstrap_eval_deltas: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bootstrap_eval_deltas: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
