"""The resampling engine equals the naive loop draw for draw, generator state included."""

import random
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed

BOUNDARY_N = [2, 3, 255, 256, 257, 500, 511, 512, 513, 1000, 65536, 100003]


def naive_sums(rng, columns, rounds):
    n = len(columns[0])
    return [sum(columns[r % len(columns)][rng.randrange(n)] for _ in range(n))
            for r in range(rounds)]


def rounds_for(n):
    return max(2, 40000 // n)


def check_same(columns, rounds, seed):
    fast_rng, slow_rng = random.Random(seed), random.Random(seed)
    fast_rng.gauss(0, 1)           # leave a pending gauss_next: it must survive the engine
    slow_rng.gauss(0, 1)
    fast = bed.resample_sums(fast_rng, columns, rounds)
    slow = naive_sums(slow_rng, columns, rounds)
    assert fast == slow
    assert fast_rng.getstate() == slow_rng.getstate()
    assert fast_rng.gauss(0, 1) == slow_rng.gauss(0, 1)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_binary_paired_difference(n):
    pick = random.Random(n)
    a = [int(pick.random() < 0.7) for _ in range(n)]
    b = [int(pick.random() < 0.75) for _ in range(n)]
    check_same((tuple(y - x for x, y in zip(a, b)),), rounds_for(n), seed=n + 1)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_binary_unpaired_two_columns(n):
    pick = random.Random(-n)
    a = tuple(int(pick.random() < 0.6) for _ in range(n))
    b = tuple(int(pick.random() < 0.4) for _ in range(n))
    check_same((a, b), rounds_for(n), seed=n + 2)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_real_valued_few_distinct_values(n):
    """Judge scores 1..10 scaled to integers: grouped codes, several digit planes."""
    pick = random.Random(3 * n)
    a = tuple(pick.randint(1, 10) * 37 for _ in range(n))
    b = tuple(pick.randint(1, 10) * 37 for _ in range(n))
    check_same((tuple(y - x for x, y in zip(a, b)),), rounds_for(n), seed=n + 3)


@pytest.mark.parametrize("n", BOUNDARY_N)
def test_real_valued_all_distinct(n):
    """F1-like scores, all different: the engine falls back to bulk index arithmetic."""
    pick = random.Random(5 * n)
    scale = 10 ** 6
    a = tuple(pick.randrange(scale) for _ in range(n))
    b = tuple(pick.randrange(scale) for _ in range(n))
    check_same((a, b), rounds_for(n), seed=n + 4)


@pytest.mark.parametrize("n,alphabet,kind", [
    (200, 3, "byte"), (500, 3, "class"), (300, 40, "select"), (1000, 12, "select"),
    (2000, 3, "select"), (9000, 3, "gather"), (70000, 2, "gather"), (600, 300, "index"),
])
def test_every_lookup_kind_is_exercised(n, alphabet, kind):
    pick = random.Random(n * alphabet)
    values = tuple(pick.randrange(alphabet) for _ in range(n))
    column = tuple(v * 1000 for v in values)     # several planes when alphabet > 1
    rows = {}
    for v in values:
        rows.setdefault(v, len(rows))
    codes = bytes(rows[v] for v in values) if len(rows) <= bed._MAX_CODES else None
    assert bed._lookup(n, codes).kind == kind
    check_same((column,), max(2, 20000 // n), seed=alphabet)


@pytest.mark.parametrize("n", [2, 257, 513, 65536])
def test_draw_codes_is_the_naive_draw(n):
    pick = random.Random(n)
    codes = bytes(pick.randrange(3) for _ in range(n))
    fast_rng, slow_rng = random.Random(9), random.Random(9)
    count = 3 * bed._CHUNK_WORDS + 17      # spans several getrandbits chunks
    fast = bed.draw_codes(fast_rng, bed._lookup(n, codes), count)
    slow = bytes(codes[slow_rng.randrange(n)] for _ in range(count))
    assert fast == slow and fast_rng.getstate() == slow_rng.getstate()


def test_whole_default_run_equals_oracle_at_reduced_replays():
    import oracle
    ref = oracle.run(500, 0.6, 0.72, 0.76, 2026, 2000, 4, Fraction("0.95"))
    rng = random.Random(2026)
    scores = bed.simulate_scores(rng, 500, bed.CORR, bed.ACC_A, bed.ACC_B)
    result = bed.analyze(scores, rng, resamples=2000, confidence=bed.CONFIDENCE)
    cov = bed.coverage(rng, bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B), 500, replays=4,
                       resamples=2000, confidence=bed.CONFIDENCE)
    assert (result.paired.lo, result.paired.hi) == ref["paired"]
    assert (result.unpaired.lo, result.unpaired.hi) == ref["unpaired"]
    assert (result.ci_a.lo, result.ci_a.hi) == ref["ci_a"]
    assert (result.ci_b.lo, result.ci_b.hi) == ref["ci_b"]
    assert (cov.covers, cov.excludes_zero) == (ref["covers"], ref["positive"])
    assert rng.getstate() == ref["state"]


class FakeTTY:
    """A stderr stand-in that claims to be a terminal."""

    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_draws_only_on_a_tty_after_the_delay():
    tty = FakeTTY()
    progress = bed._Progress("work", stream=tty, delay=0.0)
    progress(5, 10)
    progress(10, 10)
    progress.close()
    assert "work: 5/10 (50%)" in tty.text and tty.text.endswith("\r\033[K")
    quiet = FakeTTY()
    late = bed._Progress("work", stream=quiet, delay=3600.0)
    late(5, 10)
    late.close()
    assert quiet.text == ""
    pipe = bed._Progress("work", stream=__import__("io").StringIO(), delay=0.0)
    assert not pipe.enabled


def test_progress_never_changes_stdout_and_quiet_silences_it(monkeypatch):
    import contextlib
    import io
    from helpers import cli

    monkeypatch.setattr(bed, "_PROGRESS_DELAY", 0.0)
    plain = cli("--replays", "40", "--seed", "3")
    for extra, drawn in (([], True), (["--quiet"], False)):
        tty, out = FakeTTY(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(tty):
            status = bed.main(["--replays", "40", "--seed", "3", *extra])
        assert status == 0 and out.getvalue() == plain[1]
        assert ("coverage replays:" in tty.text) == drawn, tty.text


def naive_resample_each(rng, columns, rounds):
    """The listing's way, for several columns on the same resampled items."""
    n = len(columns[0])
    out = [[] for _ in columns]
    for _ in range(rounds):
        idx = [rng.randrange(n) for _ in range(n)]
        for column, sums in zip(columns, out):
            sums.append(sum(column[i] for i in idx))
    return out


@pytest.mark.parametrize("n,kind", [(7, "binary"), (256, "binary"), (300, "few"),
                                    (300, "many"), (257, "mixed"), (300, "merged")])
def test_resample_each_equals_the_naive_loop_draw_for_draw(n, kind):
    """Columns sharing one byte code (few distinct rows), split into groups (many distinct
    rows), or both, or a group of several: the sums and the generator state equal the naive loop's."""
    pick = random.Random(n)
    if kind == "binary":
        columns = [[pick.randrange(2) for _ in range(n)] for _ in range(4)]
    elif kind == "few":
        columns = [[pick.randrange(3) for _ in range(n)] for _ in range(3)]
    elif kind == "many":
        columns = [[pick.randrange(1000) for _ in range(n)] for _ in range(3)]
    elif kind == "mixed":
        columns = [[pick.randrange(2) for _ in range(n)], [pick.randrange(5000) for _ in range(n)],
                   [pick.randrange(2) for _ in range(n)]]
    else:                              # a many-valued column, then two that share a code
        columns = [[pick.randrange(1000) for _ in range(n)], [pick.randrange(2) for _ in range(n)],
                   [pick.randrange(3) for _ in range(n)]]
        assert bed._column_groups(columns) == [[0], [1, 2]]
    got_rng, want_rng = random.Random(9), random.Random(9)
    got = bed.resample_each(got_rng, columns, 23)
    want = naive_resample_each(want_rng, columns, 23)
    assert [list(sums) for sums in got] == want
    assert got_rng.getstate() == want_rng.getstate()
