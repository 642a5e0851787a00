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
import functools
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

    @property
    def binary(self) -> bool:
        return all(x in (0, 1) for x in self.a) and all(x in (0, 1) for x in self.b)

    @property
    def scale(self) -> int:
        return math.lcm(*(Fraction(x).denominator for x in self.a + self.b))

    def integers(self, column) -> tuple:
        """A column (``self.a`` or ``self.b``) as integers in units of 1/scale."""
        scale = self.scale
        return tuple(int(Fraction(x) * scale) for x in column)

    def mean(self, column) -> Fraction:
        return Fraction(sum(self.integers(column)), self.n * self.scale)


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
    ordered = sorted(sums)
    lo, hi = percentile_indices(len(ordered), confidence)
    return Interval(Fraction(ordered[lo], denominator), Fraction(ordered[hi], denominator))


def mean_interval(rng, column, resamples, confidence, denominator, progress=None) -> Interval:
    """Percentile interval of one system's mean score."""
    sums = resample_sums(rng, (column,), resamples, progress=progress)
    return scaled_interval(sums, confidence, denominator)


def paired_interval(rng, a, b, resamples, confidence, denominator, progress=None) -> Interval:
    """Percentile interval of mean(B - A), resampling items with both scores kept together."""
    diff = tuple(y - x for x, y in zip(a, b))
    sums = resample_sums(rng, (diff,), resamples, progress=progress)
    return scaled_interval(sums, confidence, denominator)


def unpaired_interval(rng, a, b, resamples, confidence, denominator, progress=None) -> Interval:
    """Percentile interval of mean(B) - mean(A) with A and B resampled independently."""
    sums = resample_sums(rng, (a, b), 2 * resamples, progress=progress)
    gaps = [sb - sa for sa, sb in zip(sums[0::2], sums[1::2])]
    return scaled_interval(gaps, confidence, denominator)


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

    @property
    def covers_rate(self) -> Fraction:
        return Fraction(self.covers, self.replays)

    @property
    def excludes_zero_rate(self) -> Fraction:
        return Fraction(self.excludes_zero, self.replays)

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
        }


def _steps(progress, sizes):
    """Split one progress callback over consecutive steps of the given sizes."""
    offset, total = 0, sum(sizes)
    for size in sizes:
        yield None if progress is None else (
            lambda done, _total, base=offset: progress(base + done, total))
        offset += size


def detects(interval: Interval, true_gap: Fraction) -> bool:
    """Does the interval exclude 0 on the side of the true gap (either side when it is 0)?"""
    if true_gap > 0:
        return interval.lo > 0
    if true_gap < 0:
        return interval.hi < 0
    return interval.excludes_zero()


def coverage(rng, n_items, corr, acc_a, acc_b, *, replays, resamples, confidence,
             progress=None) -> Coverage:
    """Replay simulate-then-paired-CI *replays* times on one generator.

    The true gap is ``acc_b - acc_a`` in exact arithmetic; an interval
    covers it when ``lo <= gap <= hi``, and "excludes zero" counts intervals
    that exclude 0 on the side of the true gap (power when the gap is not 0,
    type-I error when it is).
    """
    true_gap = exact(acc_b) - exact(acc_a)
    covers = hits = 0
    for replay in range(replays):
        scores = simulate(rng, n_items, corr, acc_a, acc_b)
        interval = paired_interval(rng, scores.a, scores.b, resamples, confidence, n_items)
        covers += true_gap in interval
        hits += detects(interval, true_gap)
        if progress:
            progress(replay + 1, replays)
    return Coverage(replays, covers, hits)


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

    @property
    def gap(self) -> Fraction:
        return self.accuracy_b - self.accuracy_a


def analyze(scores: Scores, rng: random.Random, *, resamples: int, confidence,
            progress=None) -> Analysis:
    """Accuracies, per-system, paired and unpaired intervals, and McNemar.

    The generator is consumed in the article's order: A's interval, B's,
    the paired one, then the unpaired one.  *progress*, if given, is called
    as ``progress(done, total)`` in units of resamples.
    """
    confidence = Fraction(confidence)
    a, b = scores.integers(scores.a), scores.integers(scores.b)
    denominator = scores.n * scores.scale
    steps = _steps(progress, [resamples, resamples, resamples, 2 * resamples])
    ci_a = mean_interval(rng, a, resamples, confidence, denominator, next(steps))
    ci_b = mean_interval(rng, b, resamples, confidence, denominator, next(steps))
    paired = paired_interval(rng, a, b, resamples, confidence, denominator, next(steps))
    unpaired = unpaired_interval(rng, a, b, resamples, confidence, denominator, next(steps))
    b_only = sum(1 for x, y in zip(scores.a, scores.b) if y == 1 and x == 0)
    a_only = sum(1 for x, y in zip(scores.a, scores.b) if x == 1 and y == 0)
    return Analysis(
        n=scores.n, accuracy_a=scores.mean(scores.a), accuracy_b=scores.mean(scores.b),
        ci_a=ci_a, ci_b=ci_b, paired=paired, unpaired=unpaired,
        mcnemar=mcnemar_exact(a_only, b_only), resamples=resamples, confidence=confidence,
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
    """One run: what was asked, where the data came from, and what came out."""

    params: dict
    source: str                 # "simulation" or "csv"
    analysis: Analysis
    coverage: Coverage | None
    dataset: Dataset | None = None


def render_text(report: Report) -> str:
    """The article's report, line for line, then coverage, notes and a verdict."""
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
    if report.source == "csv":
        lines.append(
            f"note: the bootstrap here starts from Random({p['seed']}) afresh, so the intervals "
            "differ from the simulated run's by Monte Carlo error; accuracies and McNemar "
            "are exact functions of the file and match it exactly")
    lines.append(verdict(result))
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


def verdict(result: Analysis) -> str:
    """One plain sentence from the paired interval."""
    level = format_percent(result.confidence)
    if not result.paired.excludes_zero():
        return (f"verdict: cannot tell. The paired {level} CI {result.paired} includes 0, "
                f"so the observed {format_pts(result.gap)} may be noise.")
    better, worse = ("B", "A") if result.paired.lo > 0 else ("A", "B")
    return (f"verdict: {better} is likely better than {worse}: the paired {level} CI "
            f"{result.paired} excludes 0.")


def render_json(report: Report) -> str:
    """The report as one JSON object (proportions as floats)."""
    p, result = report.params, report.analysis
    params = {key: (float(value) if isinstance(value, Fraction) else value)
              for key, value in p.items()}
    body = {
        "version": __version__,
        "source": report.source,
        "params": params,
        "accuracy": {"a": float(result.accuracy_a), "b": float(result.accuracy_b)},
        "gap": float(result.gap),
        "ci": {"a": result.ci_a.to_json(), "b": result.ci_b.to_json(),
               "paired": result.paired.to_json(), "unpaired": result.unpaired.to_json()},
        "mcnemar": {"a_only": result.mcnemar.a_only, "b_only": result.mcnemar.b_only,
                    "p": result.mcnemar.p},
        "coverage": report.coverage.to_json() if report.coverage else None,
        "verdict": "cannot tell" if not result.paired.excludes_zero()
        else ("B better" if result.paired.lo > 0 else "A better"),
    }
    if report.dataset is not None:
        body["input"] = {"path": report.dataset.path, "sha256": report.dataset.sha256,
                         "rows": report.dataset.rows, "columns": list(report.dataset.columns)}
    return json.dumps(body, indent=2) + "\n"


# === CLI ===

EXAMPLES = """\
examples:
  %(prog)s                                  reproduce the article (n=500, 1000 replays)
  %(prog)s --replays 0                      the six numbers only, no coverage loop
  %(prog)s --n-items 2000 --replays 200     preview coverage and power at 2,000 items
  %(prog)s --write-csv run.csv              also save the simulated per-item scores
  %(prog)s --csv datasets/bootstrap-eval-deltas.csv   recompute from per-item scores
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
    boot = parser.add_argument_group("bootstrap")
    boot.add_argument("--seed", type=_int_arg, default=SEED,
                      help=f"seed of the one random.Random that drives the run (default {SEED})")
    boot.add_argument("--resamples", type=_int_arg, default=RESAMPLES, metavar="B",
                      help=f"bootstrap resamples per interval (default {RESAMPLES})")
    boot.add_argument("--confidence", type=_fraction_arg, default=CONFIDENCE, metavar="C",
                      help=f"confidence level, 0 < C < 1 (default {format_decimal(CONFIDENCE)})")
    data = parser.add_argument_group("your data")
    data.add_argument("--csv", metavar="PATH",
                      help="recompute from per-item scores in PATH "
                           "(columns item,system_a_correct,system_b_correct)")
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    out.add_argument("--quiet", action="store_true",
                     help="no progress indicator on stderr (it is only drawn on a terminal, "
                          "for loops longer than a second)")
    out.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def validate(args) -> None:
    """Check flag values; raise ToolError with a one-line message."""
    if args.csv is not None:
        given = [name for name in SIMULATION_FLAGS if getattr(args, name) is not None]
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ToolError(f"{flags} describe the simulation and do not apply to --csv "
                            "(the true gap of a file is unknown)")
        if args.write_csv is not None:
            raise ToolError("--write-csv writes a simulated run; it does not apply to --csv")
    for name, default in (("n_items", N_ITEMS), ("corr", CORR), ("acc_a", ACC_A),
                          ("acc_b", ACC_B), ("replays", REPLAYS)):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.n_items < 2:
        raise ToolError(f"--n-items must be at least 2, got {args.n_items}")
    if args.resamples < 1:
        raise ToolError(f"--resamples must be at least 1, got {args.resamples}")
    if args.replays < 0:
        raise ToolError(f"--replays must be 0 or more, got {args.replays}")
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


def _progress(args, label: str) -> Progress:
    return Progress(label, enabled=not args.quiet, delay=PROGRESS_DELAY)


def run(args) -> Report:
    """Carry out a validated command line; return the report."""
    rng = random.Random(args.seed)
    params = {"n_items": args.n_items, "corr": args.corr, "acc_a": args.acc_a,
              "acc_b": args.acc_b, "seed": args.seed, "resamples": args.resamples,
              "replays": args.replays, "confidence": args.confidence}
    if args.csv is not None:
        dataset = read_scores_csv(args.csv)
        params.update(n_items=dataset.rows, corr=None, acc_a=None, acc_b=None, replays=0)
        result = _analyze_with_progress(args, dataset.scores, rng)
        return Report(params, "csv", result, None, dataset)
    scores = simulate(rng, args.n_items, args.corr, args.acc_a, args.acc_b)
    if args.write_csv is not None:
        write_scores_csv(args.write_csv, scores)
    result = _analyze_with_progress(args, scores, rng)
    cov = None
    if args.replays:
        progress = _progress(args, "coverage replays")
        try:
            cov = coverage(rng, args.n_items, args.corr, args.acc_a, args.acc_b,
                           replays=args.replays, resamples=args.resamples,
                           confidence=args.confidence, progress=progress)
        finally:
            progress.close()
    return Report(params, "simulation", result, cov)


def _analyze_with_progress(args, scores, rng) -> Analysis:
    progress = _progress(args, "bootstrap resamples")
    try:
        return analyze(scores, rng, resamples=args.resamples, confidence=args.confidence,
                       progress=progress)
    finally:
        progress.close()


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
