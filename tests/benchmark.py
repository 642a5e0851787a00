#!/usr/bin/env python3
"""Benchmark: whole runs of the tool at default flags, this version beside the previous one
(its module taken from git) and beside a NumPy paired bootstrap where NumPy is installed.

Run by hand (it is not a test):  python3 tests/benchmark.py [--quick] [--previous REV]

Each workload is one process, timed from start to exit, with its peak memory (from the
kernel's rusage of that child); this version's time is the best of three runs where a run
takes under 10 s, as the machine's noise (about 0.2 s a run) would otherwise decide whether
the time falls as n grows.  The inputs are written first to a temporary folder: 0/1
scores and real-valued scores with every value distinct (four decimals of a continuous
score, the paired differences of which all but never repeat), at the mid sizes where most
eval sets live (10^3 to 10^5) and beyond; clusters of 5 to 15 items and 10 strata; five
systems (Holm across four comparisons); leaderboards of 20 and 50 systems.  Old runs are
stopped after --cap seconds and shown as ">cap".  The last column says whether the
target of issue 20 (or 23) is met.

The NumPy column is a plain vectorised paired bootstrap (B = 2,000 resamples of the items,
percentile ends), not the same statistics: it is the cost a user would otherwise pay.
"""

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODULE = os.path.join(ROOT, "bootstrap_eval_deltas.py")


def write_binary(path, n, systems=2, clusters=False, seed=1):
    """0/1 scores with shared item difficulty (the article's copula, in floats)."""
    rng = random.Random(seed)
    cuts = [0.58, 0.70, 0.60, 0.62, 0.50][:systems] + [0.55] * max(0, systems - 5)
    with open(path, "w") as f:
        f.write("item,cluster,stratum," + ",".join(f"s{k}" for k in range(systems)) + "\n")
        cluster, left, shift = 0, 0, 0.0
        for i in range(n):
            if left == 0:
                cluster, left, shift = cluster + 1, rng.randint(5, 15), rng.gauss(0, 0.7)
            left -= 1
            d = rng.gauss(0, 1) + (shift if clusters else 0.0)
            row = [int(0.6 * d + 0.8 * rng.gauss(0, 1) < cut + 0.01 * k)
                   for k, cut in enumerate(cuts)]
            f.write(f"{i},{cluster},{cluster % 10}," + ",".join(map(str, row)) + "\n")


def write_real(path, n, systems=2, seed=2):
    """Real-valued scores in [0, 1] with four decimals: every value distinct for n <= 10^4."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write("item,cluster,stratum," + ",".join(f"s{k}" for k in range(systems)) + "\n")
        cluster, left, base = 0, 0, 0.5
        for i in range(n):
            if left == 0:
                cluster, left, base = cluster + 1, rng.randint(5, 15), rng.random()
            left -= 1
            d = min(1.0, max(0.0, base + rng.gauss(0, 0.2)))
            row = [min(1.0, max(0.0, d + 0.01 * k + rng.gauss(0, 0.15))) for k in range(systems)]
            f.write(f"{i},{cluster},{cluster % 10}," + ",".join(f"{v:.4f}" for v in row) + "\n")


def write_predictions(path, n, classes, seed=3):
    """A label and two classifiers' predictions per item, right 70% and 72% of the time
    (independently), wrong uniformly: every one of the classes^3 cells is populated."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write("item,label,base,tuned\n")
        for i in range(n):
            y = rng.randrange(classes)
            a = y if rng.random() < 0.7 else rng.randrange(classes)
            b = y if rng.random() < 0.72 else rng.randrange(classes)
            f.write(f"{i},{y},{a},{b}\n")


def run(argv, cap):
    """(seconds, peak MB, exit status) of one process; seconds None when stopped at *cap*."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + cap
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return time.monotonic() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(
                status)
        if time.monotonic() > deadline:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            return None, usage.ru_maxrss / 1024, None
        time.sleep(0.02)


def best_run(argv, cap, repeat=3):
    """The fastest of *repeat* runs when one takes under 10 s (this machine's noise is about
    0.2 s a run), else the one run."""
    runs = [run(argv, cap)]
    if runs[0][0] is not None and runs[0][0] < 10:
        runs += [run(argv, cap) for _ in range(repeat - 1)]
    return min(runs, key=lambda r: (r[2] != 0, r[0]))


def numpy_seconds(path, systems=2):
    """A vectorised NumPy paired bootstrap of the first two columns (B = 2,000)."""
    code = f"""
import numpy as np, time
t = time.monotonic()
data = np.loadtxt({path!r}, delimiter=",", skiprows=1, usecols=(3, 4))
d = data[:, 1] - data[:, 0]
rng = np.random.default_rng(0)
n = len(d)
means = np.empty(2000)
step = max(1, 2_000_000 // n)
for i in range(0, 2000, step):
    k = min(step, 2000 - i)
    means[i:i + k] = d[rng.integers(0, n, (k, n))].mean(axis=1)
np.percentile(means, [2.5, 97.5])
"""
    done, _, status = run([sys.executable, "-c", code], 600)
    return done if status == 0 else None


def previous_module(rev, folder):
    path = os.path.join(folder, f"previous_{rev[:7]}.py")
    with open(path, "wb") as f:
        f.write(subprocess.run(["git", "-C", ROOT, "show", f"{rev}:bootstrap_eval_deltas.py"],
                               capture_output=True, check=True).stdout)
    return path


def cell(seconds, memory, cap):
    return (f">{cap:.0f} s (stopped)" if seconds is None else f"{seconds:6.2f} s") + \
        f" {memory:6.0f} MB"


def write_battles(path, n, systems, seed=4):
    """FastChat's battle records (JSON lines): n battles, two per prompt, among *systems*
    of normal log-odds ratings, ties by Davidson's model (nu = 0.5)."""
    rng = random.Random(seed)
    rating = [rng.gauss(0, 1) for _ in range(systems)]
    with open(path, "w") as f:
        for b in range(n):
            i, j = rng.sample(range(systems), 2) if systems > 2 else rng.sample((0, 1), 2)
            pa, pb = math.exp(rating[i]), math.exp(rating[j])
            u = rng.random() * (pa + pb + 0.5 * math.sqrt(pa * pb))
            winner = "model_a" if u < pa else "model_b" if u < pa + pb else "tie"
            f.write(json.dumps({"question_id": b // 2, "model_a": f"m{i}", "model_b": f"m{j}",
                                "winner": winner}) + "\n")


def workloads(folder, quick):
    """(label, argv, target, series) per row: a target is seconds, ("x2", label) for "within
    twice that row's time", or None; *series* names the plain runs whose time must not fall
    as n grows.  The compare rows are written in the flat ``--csv FILE`` spelling, which the
    previous revisions take (the default one, c05ad0a, has no subcommands); this version, which
    refuses it, runs them as ``compare FILE`` (``current``)."""
    sizes = [1000, 10_000, 20_000, 50_000, 100_000] + ([] if quick else [1_000_000])
    rows = []
    for n in [500] + sizes + ([] if quick else [10_000_000]):
        path = os.path.join(folder, f"bin{n}.csv")
        write_binary(path, n)
        rows.append((f"0/1, n={n:,}", ["--csv", path, "--systems", "s0,s1"],
                     1.5 if n <= 100_000 else 10 if n <= 1_000_000 else 60, "0/1"))
        if n in (500, 100_000):
            rows.append((f"0/1, n={n:,}, no calibration", ["--csv", path, "--systems", "s0,s1",
                                                           "--calibration", "0"], None, None))
    for n in sizes:
        path = os.path.join(folder, f"real{n}.csv")
        write_real(path, n)
        rows.append((f"real, distinct, n={n:,}", ["--csv", path, "--systems", "s0,s1"],
                     3 if n <= 10_000 else 10 if n <= 100_000 else 60, "real-valued"))
    for kind, write in (("0/1", lambda p, n: write_binary(p, n, 5, clusters=True)),
                        ("real", lambda p, n: write_real(p, n, 5))):
        for n in (10_000, 100_000):
            path = os.path.join(folder, f"design-{kind[0]}{n}.csv")
            write(path, n)
            plain = f"{kind}, n={n:,}" if kind == "0/1" else f"real, distinct, n={n:,}"
            for what, flags in (("clusters", ["--systems", "s0,s1", "--cluster-col", "cluster"]),
                                ("10 strata", ["--systems", "s0,s1", "--strata-col", "stratum"]),
                                ("five systems, Holm", ["--systems", "s0,s1,s2,s3,s4"])):
                rows.append((f"{kind}, n={n:,}, {what}", ["--csv", path, *flags], ("x2", plain),
                             None))
    for kind, write in (("0/1", write_binary), ("real", write_real)):
        path = os.path.join(folder, f"slices-{kind[0]}.csv")
        write(path, 100_000, 2)
        with open(path) as f:                       # a slice column of 50 values
            lines = f.read().splitlines()
        with open(path, "w") as f:
            f.write("\n".join([lines[0] + ",slice"] + [f"{line},c{i % 50}" for i, line in
                                                       enumerate(lines[1:])]) + "\n")
        rows.append((f"{kind}, n=100,000, 50 slices (--by)",
                     ["compare", path, "--systems", "s0,s1", "--by", "slice"], 3, None))
    for n, classes in ((10_000, 10), (1_000_000, 10)):     # issue 30: predictions, labels
        path = os.path.join(folder, f"preds{n}.csv")
        write_predictions(path, n, classes)
        for metric in ("macro-f1", "mcc"):
            rows.append((f"{metric}, n={n:,}, {classes} classes",
                         ["compare", path, "--label-col", "label", "--metric", metric],
                         5, None))
    for kind, k, n, target, extra in (("0/1", 20, 10_000, 10, []), ("0/1", 50, 100_000, 60, []),
                                      ("real", 20, 10_000, None, []),
                                      ("0/1", 20, 10_000, None, ["--cluster-col", "cluster"])):
        path = os.path.join(folder, f"board-{kind[0]}{k}x{n}.csv")
        if not os.path.exists(path):
            (write_binary if kind == "0/1" else write_real)(path, n, k)
        label = f"leaderboard, {kind}, {k} x {n:,}" + (", clusters" if extra else "")
        rows.append((label, ["leaderboard", path, "--systems",
                             ",".join(f"s{i}" for i in range(k)), *extra], target, None))
    for command, k, n in (("compare", 2, 100_000), ("leaderboard", 20, 100_000)) + (
            () if quick else (("leaderboard", 100, 1_000_000),)):      # issue 31: battles
        path = os.path.join(folder, f"battles{k}x{n}.jsonl")
        write_battles(path, n, k)
        rows.append((f"battles, {command}, {k} systems, {n:,}",
                     [command, path] + (["--systems", "m0,m1"] if k == 2 else []),
                     30 if n == 1_000_000 else 5, None))
    return rows


def current(argv) -> list:
    """A row's command line as this version spells it."""
    return ["compare", *argv[1:]] if argv[0] == "--csv" else list(argv)


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--previous", default="c05ad0a", help="git revision to compare with")
    parser.add_argument("--cap", type=float, default=120, help="seconds before an old run stops")
    parser.add_argument("--quick", action="store_true", help="skip the 10^6 and 10^7 rows")
    args = parser.parse_args(argv)
    have_numpy = subprocess.run([sys.executable, "-c", "import numpy"]).returncode == 0
    folder = tempfile.mkdtemp(prefix="bed-bench-")
    try:
        old = previous_module(args.previous, folder)
        print(f"{'workload':38} {'target':>9}   {'this version':>17}   "
              f"{'previous (' + args.previous[:7] + ')':>24}   {'numpy':>8}")
        seen, series = {}, {}
        for label, argv, target, family in workloads(folder, args.quick):
            new = best_run([sys.executable, MODULE, *current(argv)], 3600)
            before = run([sys.executable, old, *argv], args.cap)
            if before[2] not in (0, None) and current(argv) != argv:   # no flat spellings
                before = run([sys.executable, old, *current(argv)], args.cap)
            fast = numpy_seconds(argv[1]) if have_numpy and "--cluster-col" not in argv \
                and "--strata-col" not in argv and argv[0] == "--csv" else None
            seen[label] = new[0]
            if family is not None:
                series.setdefault(family, []).append(new[0])
            limit = 2 * seen[target[1]] if isinstance(target, tuple) else target
            verdict = "" if limit is None else \
                "met" if new[0] is not None and new[0] <= limit and new[2] == 0 else "NOT met"
            shown = "" if limit is None else f"{limit:.1f} s"
            earlier = cell(*before[:2], args.cap) if before[2] in (0, None) else \
                "(no such command)"
            print(f"{label:38} {shown:>9}   {cell(*new[:2], 3600):>17}   {earlier:>24}   "
                  f"{'' if fast is None else f'{fast:6.2f} s':>8}   {verdict}", flush=True)
        for family, times in series.items():
            falls = sum(1 for a, b in zip(times, times[1:]) if b < a - 0.15)
            print(f"{family}: as n grows the time {'never falls' if not falls else 'falls'} "
                  f"by more than 0.15 s" + (f" ({falls} times)" if falls else ""))
        for n in ("500", "100,000"):
            with_, without = seen.get(f"0/1, n={n}"), seen.get(f"0/1, n={n}, no calibration")
            if with_ and without:
                print(f"calibration line at n={n}: adds {with_ - without:+.2f} s")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
