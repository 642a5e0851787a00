#!/usr/bin/env python3
"""Benchmark: the resampling engines against the article's loop and against NumPy.

Run by hand (it is not a test):  python3 tests/benchmark.py [--quick]

Part 1, the stream engine (bit-exact):

For each n it times, in one process and interleaved, (1) the listing's naive
loop -- simulate, then ``[rng.randrange(n) for _ in range(n)]`` per resample --
for a few replays; (2) the tool's engine on the same replays, checking that
every interval and the generator state are identical; (3) the bare
``getrandbits`` cost of exactly the words the engine consumed (the floor no
bit-exact engine can beat).  It prints the ratios and, at the article's
parameters, the wall time of the full default run.  Time is per replay
(simulate + one paired interval of B resamples).

Part 2, the counts engine: 1,000 replays x 2,000 resamples of the coverage
loop at n = 500, 2,000 and 100,000, against a vectorised NumPy loop that draws
its indices as ``rng.integers(0, n, (B, n))`` (run only if NumPy imports; it is
never a dependency of the tool), and the ratio time(n=100,000)/time(n=500).

Part 3, a million items: reading a 10**6-row 0/1 CSV, and the exact (B =
infinity) bootstrap intervals of its 2x2 table.

Part 4 (``--defaults``), default flags side by side with the previous release (its
module taken from git, ``--previous REV``): a simulated --n-items 2000 run, a 10**6-row
0/1 CSV, a 10**7-row 0/1 CSV (plain and --exact), a 10**6-row real-valued CSV, and a
refusal that depends only on flags; wall time and peak memory of each process (the old
runs are stopped after ``--cap`` seconds and reported as ">cap").
"""

import argparse
import statistics
import os
import random
import subprocess
import sys
import time

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
    lo, hi = bed._percentile_indices(resamples, bed.CONFIDENCE)
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
        iv = bed.paired_distribution(rng, scores, resamples).interval(bed.CONFIDENCE)
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
            m = min(left, bed._CHUNK_WORDS)
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
    # Timings interleaved replay by replay (one naive replay, then a few engine replays and
    # the bare words), so that the shared machine's slow and fast phases hit all three
    # alike; each side reports its median time per replay, robust to the machine's stalls.
    naive_times, engine_times, bare_times = [], [], []
    for block in range(naive_count):
        naive_times.append(timed(naive_replays, seed + block, n, resamples, 1)[0])
        for step in range(engine_count):
            engine_times.append(timed(engine_replays, seed + step, n, resamples, 1)[0])
            bare_times.append(timed(bare_getrandbits, seed + step, n, 1,
                                    round(words_per_replay))[0])
    t_naive, t_engine, t_bare = map(statistics.median, (naive_times, engine_times, bare_times))
    print(f"n={n:>6}  B={resamples}  "
          f"identical={'yes' if identical else 'NO'}  "
          f"naive {t_naive * 1e3:8.1f} ms/replay  engine {t_engine * 1e3:7.1f}  "
          f"getrandbits {t_bare * 1e3:6.1f}  "
          f"ratio vs listing {t_naive / t_engine:5.1f}x  "
          f"engine/getrandbits {t_engine / t_bare:4.2f}")
    return identical


def numpy_replays(n, replays, resamples=2000, seed=0):
    """The coverage loop vectorised with NumPy: simulate, (B, n) indices, sums, sort."""
    import numpy as np
    from statistics import NormalDist
    rng = np.random.default_rng(seed)
    cut_a, cut_b = NormalDist().inv_cdf(0.72), NormalDist().inv_cdf(0.76)
    lo_index, hi_index = bed._percentile_indices(resamples, bed.CONFIDENCE)
    covers = 0
    for _ in range(replays):
        d = rng.standard_normal(n)
        a = (0.6 * d + 0.8 * rng.standard_normal(n) < cut_a).astype(np.int8)
        b = (0.6 * d + 0.8 * rng.standard_normal(n) < cut_b).astype(np.int8)
        diff = (b - a).astype(np.int32)
        sums = np.sort(diff[rng.integers(0, n, (resamples, n))].sum(axis=1))
        covers += int(sums[lo_index] <= 0.04 * n <= sums[hi_index])
    return covers


def counts_replays(n, replays, resamples=2000, seed=2026):
    copula = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B)
    return bed.coverage(random.Random(seed), copula, n, replays=replays, resamples=resamples,
                        confidence=bed.CONFIDENCE, engine="counts")


def bench_counts(replays, numpy_replays_count):
    try:
        import numpy  # noqa: F401
        have_numpy = True
    except ImportError:
        have_numpy = False
    per = {}
    for n in (500, 2000, 100_000):
        t_counts = min(timed(counts_replays, n, replays)[0] for _ in range(2))
        per[n] = t_counts
        line = f"counts engine n={n:>7,}: {replays} replays x 2000 resamples {t_counts:6.2f} s"
        if n in (500, 2000):
            if have_numpy:
                t_np = min(timed(numpy_replays, n, numpy_replays_count)[0] for _ in range(2))
                t_np *= replays / numpy_replays_count
                line += (f"   NumPy loop (scaled from {numpy_replays_count} replays) "
                         f"{t_np:6.2f} s   NumPy/counts {t_np / t_counts:5.1f}x")
            else:
                line += "   NumPy loop: skipped (NumPy not importable)"
        print(line)
    print(f"counts engine time(n=100,000)/time(n=500) = {per[100_000] / per[500]:.2f}")


def bench_million():
    import tempfile
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "million.csv")
        with open(path, "w") as handle:
            handle.write("item,system_a_correct,system_b_correct\n")
            for i in range(1, 1_000_001):
                d = rng.random()
                handle.write(f"{i},{int(d < 0.72)},{int(d + rng.random() * 0.3 < 0.85)}\n")
        seconds, table = timed(bed.read_scores_csv, path)
        print(f"read a 10^6-row 0/1 CSV ({os.path.getsize(path) / 1e6:.1f} MB): {seconds:.2f} s")
    cells = table.pair(1).cells()
    bed._binomial_cdf_table.cache_clear()
    bed._all_ratio_factors.cache_clear()
    seconds, exact = timed(bed.exact_intervals, cells, bed.CONFIDENCE)
    print(f"exact bootstrap intervals of 10^6 items (B = infinity): {seconds:.2f} s; "
          f"paired {float(exact['paired'].lo) * 100:+.3f}.."
          f"{float(exact['paired'].hi) * 100:+.3f} pts")


def write_csv(path, rows, real=False, seed=1):
    """A wide CSV of two systems on *rows* items: 0/1, or scores in steps of 0.05."""
    rng = random.Random(seed)
    steps = [f"{k / 20:.2f}" for k in range(21)]
    with open(path, "w") as handle:
        handle.write("item,a,b\n")
        buffer = []
        for i in range(1, rows + 1):
            if real:
                x = rng.randrange(21)
                y = min(20, max(0, x + rng.randrange(-3, 5)))
                buffer.append(f"{i},{steps[x]},{steps[y]}\n")
            else:
                d = rng.gauss(0, 1)
                a = 0.6 * d + 0.8 * rng.gauss(0, 1) < 0.58
                b = 0.6 * d + 0.8 * rng.gauss(0, 1) < 0.64
                buffer.append(f"{i},{int(a)},{int(b)}\n")
            if len(buffer) == 100_000:
                handle.write("".join(buffer))
                buffer = []
        handle.write("".join(buffer))


def run_measured(argv, cap):
    """(seconds, peak RSS in MB, finished) of one process, stopped after *cap* seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return time.perf_counter() - start, usage.ru_maxrss / 1024, True
        if time.perf_counter() - start > cap:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return cap, usage.ru_maxrss / 1024, False
        time.sleep(0.05)


def bench_defaults(previous: str, cap: float, quick: bool):
    """The issue's workloads with default flags, this version beside the previous one."""
    import tempfile
    root = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory() as folder:
        old = os.path.join(folder, "previous.py")
        with open(old, "wb") as handle:
            handle.write(subprocess.run(["git", "show", f"{previous}:bootstrap_eval_deltas.py"],
                                        cwd=root, check=True, capture_output=True).stdout)
        big = 10_000_000 if not quick else 2_000_000
        files = {"m1": (1_000_000, False), "r1": (1_000_000, True), "m10": (big, False)}
        for name, (rows, real) in files.items():
            write_csv(os.path.join(folder, f"{name}.csv"), rows, real)
        path = lambda name: os.path.join(folder, f"{name}.csv")
        cols = ["--a-col", "a", "--b-col", "b"]
        work = [("--n-items 2000 (simulated run, 1000 replays)", ["--n-items", "2000"], 15),
                ("10^6-row 0/1 CSV", ["--csv", path("m1")] + cols, 10),
                (f"{big:,}-row 0/1 CSV", ["--csv", path("m10")] + cols, 60),
                (f"{big:,}-row 0/1 CSV --exact", ["--csv", path("m10"), "--exact"] + cols, 60),
                ("10^6-row real-valued CSV", ["--csv", path("r1")] + cols, 60),
                ("flag-only refusal on the 10^6-row file",
                 ["--csv", path("r1"), "--engine", "counts", "--cluster-col", "a"] + cols, 1)]
        print(f"{'workload':44} {'target':>7} {'this version':>22} {'previous (' + previous + ')':>26}")
        for label, argv, target in work:
            now = run_measured([sys.executable, os.path.join(root, "bootstrap_eval_deltas.py"),
                                *argv, "--quiet"], 600)
            before = run_measured([sys.executable, old, *argv, "--quiet"], cap)
            show = lambda m: (f"{m[0]:7.1f} s {m[1]:6.0f} MB" if m[2] else
                              f"  >{m[0]:.0f} s (stopped) {m[1]:4.0f} MB")
            print(f"{label:44} {target:>5} s {show(now):>22} {show(before):>26}"
                  f"   {'met' if now[2] and now[0] <= target else 'NOT met'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer replays, skip the full run")
    parser.add_argument("--defaults", action="store_true",
                        help="only part 4: default flags beside the previous release")
    parser.add_argument("--previous", default="bf43baa", help="the previous release (git rev)")
    parser.add_argument("--cap", type=float, default=180, help="seconds before an old run stops")
    args = parser.parse_args()
    if args.defaults:
        bench_defaults(args.previous, args.cap, args.quick)
        return 0
    scale = 1 if not args.quick else 0
    print(f"Python {sys.version.split()[0]}; times are best-effort on a shared machine, "
          "ratios come from interleaved runs")
    print("-- stream engine vs the article's listing (bit-exact) --")
    ok = bench(500, 2000, 4 + 8 * scale, 5)
    ok &= bench(2000, 2000, 2, 2)
    ok &= bench(50000, 200, 1, 1)
    if not args.quick:
        start = time.perf_counter()
        script = os.path.join(os.path.dirname(HERE), "bootstrap_eval_deltas.py")
        subprocess.run([sys.executable, script], check=True, stdout=subprocess.DEVNULL)
        print(f"full default run (1000 replays x 2000 resamples x 500 items): "
              f"{time.perf_counter() - start:.1f} s")
    print("-- counts engine vs a vectorised NumPy loop --")
    bench_counts(1000 if not args.quick else 200, 100 if not args.quick else 20)
    print("-- a million items --")
    bench_million()
    print("identical = " + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
