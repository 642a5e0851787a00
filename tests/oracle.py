"""The article's listing, re-implemented naively: the oracle the tool must equal.

One ``random.Random(seed)`` drives everything in the listing's order:
simulate, A's interval, B's, paired, unpaired (A's resample then B's each
round), then each coverage replay (simulate, paired interval).  Every
resample is ``[rng.randrange(n) for _ in range(n)]``.  Scores may be ints or
Fractions; sums are exact either way.  Percentiles: sort the
B statistics and take index ``floor(q*B)`` for ``q = (1-c)/2`` and ``1-q``,
with q exact.  Nothing here is optimised: it is the reference.
"""

import math
import random
from fractions import Fraction
from statistics import NormalDist


def simulate(rng, n_items, corr, acc_a, acc_b):
    """The listing's simulate(): a list of (a_correct, b_correct) pairs."""
    corr = float(corr)
    za_cut = NormalDist().inv_cdf(float(acc_a))
    zb_cut = NormalDist().inv_cdf(float(acc_b))
    out = []
    w = math.sqrt(1 - corr ** 2)
    for _ in range(n_items):
        d = rng.gauss(0, 1)
        za = corr * d + w * rng.gauss(0, 1)
        zb = corr * d + w * rng.gauss(0, 1)
        out.append((int(za < za_cut), int(zb < zb_cut)))
    return out


def pct_ci(stats, confidence):
    stats = sorted(stats)
    q = (1 - Fraction(confidence)) / 2
    return stats[math.floor(q * len(stats))], stats[math.floor((1 - q) * len(stats))]


def resample(rng, n):
    return [rng.randrange(n) for _ in range(n)]


def mean_ci(values, rng, resamples, confidence):
    n = len(values)
    stats = []
    for _ in range(resamples):
        idx = resample(rng, n)
        stats.append(Fraction(sum(values[i] for i in idx)) / n)
    return pct_ci(stats, confidence)


def paired_bootstrap(scores, rng, resamples, confidence):
    n = len(scores)
    deltas = []
    for _ in range(resamples):
        idx = resample(rng, n)
        deltas.append(Fraction(sum(scores[i][1] - scores[i][0] for i in idx)) / n)
    return pct_ci(deltas, confidence)


def unpaired_bootstrap(scores, rng, resamples, confidence):
    n = len(scores)
    deltas = []
    for _ in range(resamples):
        ia = resample(rng, n)
        ib = resample(rng, n)
        mean_a = Fraction(sum(scores[i][0] for i in ia)) / n
        mean_b = Fraction(sum(scores[i][1] for i in ib)) / n
        deltas.append(mean_b - mean_a)
    return pct_ci(deltas, confidence)


def mcnemar_exact(scores):
    """The listing's mcnemar_exact, verbatim in substance."""
    b_only = sum(1 for a, b in scores if b and not a)
    a_only = sum(1 for a, b in scores if a and not b)
    n = a_only + b_only
    k = min(a_only, b_only)
    p = sum(math.comb(n, i) for i in range(0, k + 1)) / 2 ** n * 2 if n else 1.0
    return a_only, b_only, min(1.0, p)


def analyze(scores, rng, resamples, confidence):
    """Accuracies, the four intervals and McNemar, consuming rng in the listing's order."""
    n = len(scores)
    a = [x for x, _ in scores]
    b = [y for _, y in scores]
    return {
        "accuracy": (Fraction(sum(a), n), Fraction(sum(b), n)),
        "ci_a": mean_ci(a, rng, resamples, confidence),
        "ci_b": mean_ci(b, rng, resamples, confidence),
        "paired": paired_bootstrap(scores, rng, resamples, confidence),
        "unpaired": unpaired_bootstrap(scores, rng, resamples, confidence),
        "mcnemar": mcnemar_exact(scores),
    }


def run(n_items, corr, acc_a, acc_b, seed, resamples, replays, confidence):
    """The whole default run; returns the numbers and the generator's final state."""
    rng = random.Random(seed)
    scores = simulate(rng, n_items, corr, acc_a, acc_b)
    out = analyze(scores, rng, resamples, confidence)
    true_gap = Fraction(str(acc_b)) - Fraction(str(acc_a))
    covers = positive = negative = 0
    for _ in range(replays):
        lo, hi = paired_bootstrap(simulate(rng, n_items, corr, acc_a, acc_b), rng,
                                  resamples, confidence)
        covers += lo <= true_gap <= hi
        positive += lo > 0
        negative += hi < 0
    out.update(scores=scores, covers=covers, positive=positive, negative=negative,
               state=rng.getstate())
    return out


def exact_paired_gap_distribution(a_only: int, b_only: int, n: int) -> dict:
    """P(B-only count minus A-only count = d), exactly, when n items are drawn with
    replacement from n observed items of which *a_only* are right for A only and *b_only*
    for B only: the multinomial law, summed term by term over every (j, k)."""
    p_a, p_b = Fraction(a_only, n), Fraction(b_only, n)
    p_rest = 1 - p_a - p_b
    dist = {}
    for j in range(n + 1):                 # A-only count
        for k in range(n - j + 1):         # B-only count
            ways = math.factorial(n) // (math.factorial(j) * math.factorial(k)
                                         * math.factorial(n - j - k))
            dist[k - j] = dist.get(k - j, 0) + ways * p_a ** j * p_b ** k * p_rest ** (n - j - k)
    return dist
