#!/usr/bin/env python3
"""Benchmark: the resampling engine against the article's naive loop, side by side.

Run by hand (it is not a test):  python3 tests/benchmark.py [--quick]

For each n it times, in one process and interleaved, (1) the listing's naive
loop -- simulate, then ``[rng.randrange(n) for _ in range(n)]`` per resample --
for a few replays; (2) the tool's engine on the same replays, checking that
every interval and the generator state are identical; (3) the bare
``getrandbits`` cost of exactly the words the engine consumed (the floor no
bit-exact engine can beat).  It prints the ratios and, at the article's
parameters, the wall time of the full default run.  Time is per replay
(simulate + one paired interval of B resamples).
"""

import argparse
import math
import os
import random
import subprocess
import sys
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import bootstrap_eval_deltas as bed  # noqa: E402
import oracle  # noqa: E402


class CountingRandom(random.Random):
    """A Random that counts the 32-bit words drawn through getrandbits."""

    words = 0

    def getrandbits(self, k):
        self.words += (k + 31) // 32
        return super().getrandbits(k)


def listing_paired_bootstrap(scores, rng, resamples):
    """The article's paired_bootstrap, verbatim (floats, as the listing has it)."""
    n = len(scores)
    deltas = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        deltas.append(sum(scores[i][1] - scores[i][0] for i in idx) / n)
    deltas.sort()
    lo, hi = bed.percentile_indices(resamples, bed.CONFIDENCE)
    return deltas[lo], deltas[hi]


def naive_replays(seed, n, resamples, replays):
    rng = random.Random(seed)
    out = []
    for _ in range(replays):
        scores = oracle.simulate(rng, n, 0.6, 0.72, 0.76)
        out.append(listing_paired_bootstrap(scores, rng, resamples))
    return out, rng.getstate()


def engine_replays(seed, n, resamples, replays, rng_class=random.Random):
    rng = rng_class(seed)
    out = []
    for _ in range(replays):
        scores = bed.simulate(rng, n, bed.CORR, bed.ACC_A, bed.ACC_B)
        iv = bed.paired_interval(rng, scores.a, scores.b, resamples, bed.CONFIDENCE, n)
        out.append((float(iv.lo), float(iv.hi)))
    return out, rng.getstate(), rng


def bare_getrandbits(seed, n, replays, words):
    """Simulate as the engine does, then draw the same number of words, no decoding."""
    rng = random.Random(seed)
    per_replay = words // replays
    for _ in range(replays):
        bed.simulate(rng, n, bed.CORR, bed.ACC_A, bed.ACC_B)
        left = per_replay
        while left:
            m = min(left, bed.CHUNK_WORDS)
            rng.getrandbits(32 * m)
            left -= m


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def bench(n, resamples, naive_count, engine_count, seed=2026):
    # identical outputs on the naive replays, and the words the engine draws
    ref, ref_state = naive_replays(seed, n, resamples, naive_count)
    got, got_state, counter = engine_replays(seed, n, resamples, naive_count, CountingRandom)
    identical = ref == got and ref_state == got_state
    words_per_replay = counter.words / naive_count
    # timings, interleaved so that machine drift hits all three alike; best of 3 each
    t_naive = t_engine = t_bare = math.inf
    for _ in range(3):
        t_naive = min(t_naive, timed(naive_replays, seed, n, resamples, naive_count)[0]
                      / naive_count)
        t_engine = min(t_engine, timed(engine_replays, seed, n, resamples, engine_count)[0]
                       / engine_count)
        words = round(words_per_replay * engine_count)
        t_bare = min(t_bare, timed(bare_getrandbits, seed, n, engine_count, words)[0]
                     / engine_count)
    print(f"n={n:>6}  B={resamples}  "
          f"identical={'yes' if identical else 'NO'}  "
          f"naive {t_naive * 1e3:8.1f} ms/replay  engine {t_engine * 1e3:7.1f}  "
          f"getrandbits {t_bare * 1e3:6.1f}  "
          f"ratio vs listing {t_naive / t_engine:5.1f}x  engine/getrandbits {t_engine / t_bare:4.2f}")
    return identical


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer replays, skip the full run")
    args = parser.parse_args()
    scale = 1 if not args.quick else 0
    print(f"Python {sys.version.split()[0]}; times are best-effort on a shared machine, "
          "ratios come from interleaved runs")
    ok = bench(500, 2000, 2 + 4 * scale, 10 + 40 * scale)
    ok &= bench(2000, 2000, 1, 3 + 7 * scale)
    ok &= bench(50000, 200, 1, 1)
    if not args.quick:
        start = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "bootstrap_eval_deltas.py")],
                       check=True, stdout=subprocess.DEVNULL)
        print(f"full default run (1000 replays x 2000 resamples x 500 items): "
              f"{time.perf_counter() - start:.1f} s")
    print("identical = " + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
