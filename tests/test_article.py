"""The article as software: its numbers, its stream, its CSV, its flags."""

import json
import math
import random
import subprocess
import sys
from fractions import Fraction

import pytest

import bootstrap_eval_deltas as bed
import oracle
from helpers import (
    ARTICLE_LINES,
    ROOT,
    SCRIPT,
    SHIPPED_CSV,
    assert_one_line_error,
    cli,
    cli_help,
)


def test_default_run_prints_the_article_six_lines_first():
    status, out, err = cli("--replays", "0")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[:6] == ARTICLE_LINES
    assert lines[6] == ("plan: power at n=500: 35.7% that the paired interval excludes 0 "
                        "(exact, B=infinity; the normal approximation says 37.0%), 33.9% that "
                        "the verdict says better (the interval and McNemar's p together, "
                        "exact), 30.3% for the unpaired interval; 80% interval power needs "
                        "n=1,507 paired (exact; the approximation says 1,482), n=1,884 unpaired")
    assert lines[7].startswith("Monte Carlo error of the interval ends (B=2,000): ")
    assert lines[8].startswith("hint: the gap intervals' ends move by up to")
    assert lines[8].endswith("for 0/1 scores --exact gives the exact ends (B = infinity) at "
                             "no cost")
    assert lines[9] == ("verdict: cannot tell. The paired 95% CI [-1.4, +8.4] pts includes 0 "
                        "and McNemar's p=0.1677 is not below 0.05, so the observed +3.6 pts may "
                        "be noise.")
    assert lines[10].startswith("paired gap over 2000 resamples")


def test_the_readme_shows_the_articles_full_run():
    """1,000 replays on the contract's stream: 95.6% coverage, 35.7% power.  The README's
    block of ``python3 bootstrap_eval_deltas.py`` shows them, and its test (a ``once`` test
    in test_readme.py) runs that command and compares: the 25-second run is made once."""
    import readme_examples
    with open(readme_examples.README, encoding="utf-8") as f:
        blocks = readme_examples.blocks(f.read())
    shown = [expected for _, block in blocks for _, command, expected, _ in block
             if command == "python3 bootstrap_eval_deltas.py"]
    assert len(shown) == 1
    assert shown[0][:6] == ARTICLE_LINES
    assert shown[0][6] == ("over 1000 replays: paired CI covers the true gap 95.6% of the time "
                           "(Monte Carlo s.e. 0.6%);")
    assert shown[0][7] == ("CI excludes zero (a 'significant' +gap) 35.7% of the time "
                           "(Monte Carlo s.e. 1.5%)")


def test_json_report_fields():
    status, out, _ = cli("simulate", "--replays", "2", "--json")
    assert status == 0
    body = json.loads(out)
    assert body["source"] == "simulation"
    assert body["version"] == bed.__version__
    assert body["params"] == {"n_items": 500, "corr": 0.6, "acc_a": 0.72, "acc_b": 0.76,
                              "seed": 2026, "resamples": 2000, "replays": 2,
                              "confidence": 0.95, "engine": "auto", "target_power": 0.8,
                              "interval": "percentile", "coverage_engine": "stream"}
    assert body["schema"] == 2 and body["kind"] == "simulation"
    first = body["comparisons"][0]
    assert first["engine"] == "stream"
    assert first["accuracy"] == {"a": 0.712, "b": 0.748}
    assert first["gap"] == pytest.approx(0.036, abs=1e-15)
    assert first["ci"] == {"a": [0.672, 0.75], "b": [0.712, 0.786],
                           "paired": [-0.014, 0.084], "unpaired": [-0.018, 0.09]}
    assert first["mcnemar"]["a_only"] == 67 and first["mcnemar"]["b_only"] == 85
    assert first["mcnemar"]["p"] == pytest.approx(0.16772199317919748, rel=1e-15)
    cov = body["coverage"]
    assert {"replays", "covers", "covers_se", "excludes_zero", "excludes_zero_se"} <= set(cov)
    assert cov["replays"] == 2
    assert first["verdict"] == "cannot tell"


def test_json_coverage_is_null_when_skipped():
    status, out, _ = cli("simulate", "--replays", "0", "--json")
    assert status == 0 and "coverage" not in json.loads(out)      # schema 2: left out, not null


def tool_run(n, corr, acc_a, acc_b, seed, resamples, replays, confidence):
    """The tool's library calls, in the command line's order, on one generator."""
    rng = random.Random(seed)
    scores = bed.simulate_scores(rng, n, corr, acc_a, acc_b)
    result = bed.analyze(scores, rng, resamples=resamples, confidence=confidence, calibration=0)
    cov = bed.coverage(rng, bed.Copula(corr, acc_a, acc_b), n, replays=replays,
                       resamples=resamples, confidence=confidence)
    return scores, result, cov, rng.getstate()


# The oracle's cases, listed: sizes around the engine's byte boundaries (255-257), every
# sign of the true gap (positive, zero, negative), negative and steep correlations, and
# resample counts from 1 up.
ORACLE_CASES = [
    # n, corr, acc_a, acc_b, seed, resamples, confidence
    (2, "0.6", "0.72", "0.76", 11, 1, "0.95"),
    (3, "0", "0.5", "0.5", 12, 2, "0.9"),            # zero true gap
    (7, "-0.3", "0.76", "0.72", 13, 19, "0.5"),      # negative true gap
    (40, "0.95", "0.9", "0.1", 14, 40, "0.99"),      # large negative gap, steep correlation
    (255, "0.6", "0.33", "0.34", 15, 101, "0.95"),
    (256, "0.6", "0.1", "0.9", 16, 19, "0.9"),       # large positive gap
    (257, "0", "0.72", "0.72", 17, 40, "0.95"),      # zero true gap
    (300, "-0.3", "0.8", "0.7", 18, 19, "0.99"),     # negative true gap
]


@pytest.mark.parametrize("n,corr,acc_a,acc_b,seed,resamples,confidence", ORACLE_CASES)
def test_bit_exact_with_the_listing_oracle(n, corr, acc_a, acc_b, seed, resamples, confidence):
    """Every number and the final generator state agree with the listing's oracle."""
    replays = 3
    scores, result, cov, state = tool_run(n, Fraction(corr), Fraction(acc_a), Fraction(acc_b),
                                          seed, resamples, replays, Fraction(confidence))
    ref = oracle.run(n, float(corr), float(acc_a), float(acc_b), seed, resamples, replays,
                     Fraction(confidence))
    assert list(zip(scores.a, scores.b)) == ref["scores"]
    assert (result.accuracy_a, result.accuracy_b) == ref["accuracy"]
    for got, want, hits in ((result.ci_a, ref["ci_a"], sum(scores.a)),
                            (result.ci_b, ref["ci_b"], sum(scores.b))):
        if hits in (0, n):      # the listing's [1, 1] at n of n: the tool shows Clopper-Pearson
            exact = tuple(map(Fraction, bed.clopper_pearson(hits, n, Fraction(confidence))))
            assert want[0] == want[1] and (got.lo, got.hi) == exact and result.notes
        else:
            assert (got.lo, got.hi) == want
    assert (result.paired.lo, result.paired.hi) == ref["paired"]
    assert (result.unpaired.lo, result.unpaired.hi) == ref["unpaired"]
    assert (result.mcnemar.a_only, result.mcnemar.b_only, result.mcnemar.p) == ref["mcnemar"]
    gap = Fraction(acc_b) - Fraction(acc_a)
    detected = (ref["positive"] if gap > 0 else ref["negative"] if gap < 0
                else ref["positive"] + ref["negative"])
    assert (cov.covers, cov.excludes_zero) == (ref["covers"], detected)
    assert state == ref["state"]


def test_true_gap_is_exact_not_float():
    """0.76 - 0.72 is 1/25 exactly; in floats it is 0.040000000000000036."""
    assert 0.76 - 0.72 != 0.04
    interval = bed.Interval(Fraction(-1, 100), Fraction(1, 25))
    assert Fraction("0.76") - Fraction("0.72") in interval
    assert not (float(interval.hi) >= 0.76 - 0.72)   # the float comparison would flip it


def test_percentile_indices_are_exact():
    def indices(rounds, confidence):
        return bed.Distribution.of(range(rounds)).end_indices(confidence)
    assert indices(2000, Fraction("0.95")) == (50, 1950)
    assert indices(1000, Fraction("0.9")) == (50, 950)
    assert indices(1, Fraction("0.95")) == (0, 0)
    # in floats (1-0.9)/2*1000 = 49.99999999999999, which would floor to 49
    assert math.floor((1 - 0.9) / 2 * 1000) == 49


def test_rounding_is_exact_half_even():
    assert bed._round_fixed(Fraction(1, 40), 2) == "0.02"
    assert bed._round_fixed(Fraction(3, 40), 2) == "0.08"
    assert bed._round_fixed(Fraction(-1, 8), 2, sign=True) == "-0.12"
    assert bed._round_fixed(Fraction(2, 3), 0) == "1"


# --- CSV ---------------------------------------------------------------------

def test_shipped_csv_is_the_default_run(tmp_path):
    path = tmp_path / "run.csv"
    status, _, _ = cli("simulate", "--replays", "0", "--write-csv", str(path))
    assert status == 0
    with open(SHIPPED_CSV, "rb") as shipped:
        assert path.read_bytes() == shipped.read()
    assert b"\r" not in path.read_bytes()


def test_csv_round_trip(tmp_path):
    rng = random.Random(7)
    scores = bed.simulate_scores(rng, 123, Fraction("0.3"), Fraction("0.6"), Fraction("0.65"))
    path = tmp_path / "s.csv"
    bed.write_scores_csv(str(path), scores)
    back = bed.read_scores_csv(str(path))
    assert back.pair(1) == scores and back.sources[0].rows == 123 and back.n == 123
    assert [p.name for p in tmp_path.iterdir()] == ["s.csv"]   # no temporary left behind


def test_csv_recompute_matches_simulated_run_where_it_must():
    status, out, _ = cli("compare", SHIPPED_CSV, "--details")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("verdict: cannot tell.") and "observed +3.6 pts" in lines[0]
    assert lines[1].startswith("  A = system_a_correct: 0.712 [")
    assert lines[2].startswith("  B = system_b_correct: 0.748 [")
    assert lines[4] == ARTICLE_LINES[5]
    assert any(line.startswith("note: for a file written by --write-csv the accuracies and "
                               "McNemar match the simulated run exactly; the intervals, exact "
                               "here") for line in lines)


def test_csv_recompute_json_has_input_block():
    status, out, _ = cli("compare", SHIPPED_CSV, "--json")
    body = json.loads(out)
    assert status == 0 and body["source"] == "csv" and "coverage" not in body
    # schema 2: the simulation's settings do not apply to a file and are left out of params
    assert "n_items" not in body["params"] and "acc_a" not in body["params"]
    assert body["input"]["items"] == 500
    assert body["input"]["rows"] == 500 and len(body["input"]["sha256"]) == 64


BAD_CSV = [
    ("missing", None, "No such file"),
    ("empty", b"", "is empty"),
    ("header only", b"item,system_a_correct,system_b_correct\n", "header but no rows"),
    ("missing column", b"item,system_a_correct\n1,0\n", "no column 'system_b_correct'"),
    ("not a number", b"item,system_a_correct,system_b_correct\n1,0,2x\n2,1,1\n",
     "line 2, column system_b_correct: '2x' is not a number"),
    ("text", b"item,system_a_correct,system_b_correct\n1,yes,1\n", "'yes' is not a number"),
    ("ragged", b"item,system_a_correct,system_b_correct\n1,0,1\n2,1\n", "line 3: 2 fields"),
    ("duplicate", b"item,system_a_correct,system_b_correct\n1,0,1\n1,1,1\n",
     "1 id(s) appear more than once (first: 1)"),
    ("latin-1", b"item,system_a_correct,system_b_correct\n\xe9,0,1\n", "not UTF-8"),
    ("one row", b"item,system_a_correct,system_b_correct\n1,0,1\n", "at least 2 items"),
]


@pytest.mark.parametrize("name,content,message", BAD_CSV, ids=[c[0] for c in BAD_CSV])
def test_bad_csv_is_refused_in_one_line(tmp_path, name, content, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_bytes(content)
    assert_one_line_error(*cli("compare", str(path)), message)


def test_write_csv_into_missing_folder_fails_cleanly(tmp_path):
    target = tmp_path / "no" / "such" / "dir.csv"
    assert_one_line_error(*cli("simulate", "--replays", "0", "--write-csv", str(target)),
                          "cannot write")
    assert not (tmp_path / "no").exists()


# --- McNemar -------------------------------------------------------------------

@pytest.mark.parametrize("a_only,b_only,p", [
    (0, 0, Fraction(1)), (5, 5, Fraction(1)), (0, 10, Fraction(2, 1024)),
    (1, 9, Fraction(22, 1024)), (2, 8, Fraction(2 * 56, 1024)), (0, 1, Fraction(1)),
    (3, 0, Fraction(1, 4)),
])
def test_mcnemar_hand_values(a_only, b_only, p):
    assert bed.mcnemar_exact(a_only, b_only).p == float(p)


def test_mcnemar_symmetric_and_matches_listing():
    for a_only in range(0, 60, 7):
        for b_only in range(0, 60, 5):
            p = bed.mcnemar_exact(a_only, b_only).p
            assert p == bed.mcnemar_exact(b_only, a_only).p
            scores = [(1, 0)] * a_only + [(0, 1)] * b_only + [(1, 1)] * 3
            assert oracle.mcnemar_exact(scores) == (a_only, b_only, p)


@pytest.mark.parametrize("n", [1001, 1002, 1500, 2999, 5000])
def test_mcnemar_large_counts_agree_with_exact_rational(n):
    for k in (0, n // 10, n // 2 - 40, n // 2 - 3, n // 2):
        exact_tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)
        want = float(min(Fraction(1), 2 * exact_tail))
        got = bed.mcnemar_exact(k, n - k).p
        assert got == pytest.approx(want, rel=1e-9, abs=0), (n, k)


def test_mcnemar_a_million_discordant_pairs_is_fast_and_valid():
    import time
    start = time.perf_counter()
    p = bed.mcnemar_exact(499_000, 501_000).p
    assert time.perf_counter() - start < 1.0
    # normal approximation with continuity correction as a sanity anchor
    z = (500_000 - 499_000 - 0.5) / math.sqrt(1_000_000 / 4)
    assert p == pytest.approx(2 * (1 - bed.NormalDist().cdf(z)), rel=1e-2)
    assert bed.mcnemar_exact(400_000, 600_000).p < 1e-300     # underflows to 0.0: printed <1e-300


# --- flags -----------------------------------------------------------------------

BAD_FLAGS = [
    (["simulate", "--n-items", "1"], "--n-items must be at least 2"),
    (["simulate", "--n-items", "0"], "--n-items must be at least 2"),
    (["simulate", "--n-items", "ten"], "not a whole number"),
    (["simulate", "--resamples", "0"], "--resamples must be at least 1"),
    (["simulate", "--replays", "-1"], "--replays must be 0 or more"),
    (["simulate", "--acc-a", "0"], "--acc-a must be strictly between 0 and 1"),
    (["simulate", "--acc-a", "1"], "--acc-a must be strictly between 0 and 1"),
    (["simulate", "--acc-b", "1.2"], "--acc-b must be strictly between 0 and 1"),
    (["simulate", "--acc-b", "nan"], "not a number"),
    (["simulate", "--corr", "1"], "--corr must be strictly between -1 and 1"),
    (["simulate", "--corr", "-1"], "--corr must be strictly between -1 and 1"),
    (["simulate", "--corr", "inf"], "not a number"),
    (["simulate", "--confidence", "1"], "--confidence must lie above 0 and at most 0.999999"),
    (["simulate", "--confidence", "0"], "--confidence must lie above 0 and at most 0.999999"),
    (["simulate", "--confidence", "95"], "--confidence must lie above 0 and at most 0.999999"),
    (["simulate", "--seed", "1.5"], "not a whole number"),
    (["simulate", "--bogus"], "unrecognized arguments"),
    (["compare", SHIPPED_CSV, "--replays", "10"], "--replays does not apply to compare"),
    (["compare", SHIPPED_CSV, "--n-items", "10"], "--n-items does not apply to compare"),
    (["compare", SHIPPED_CSV, "--write-csv", "x.csv"], "--write-csv does not apply to compare"),
]


@pytest.mark.parametrize("argv,message", BAD_FLAGS, ids=[" ".join(a) for a, _ in BAD_FLAGS])
def test_invalid_flags_give_one_line_and_exit_2(argv, message):
    assert_one_line_error(*cli(*argv), message)


def test_script_entry_point_refuses_without_traceback():
    proc = subprocess.run([sys.executable, SCRIPT,
                           "simulate", "--n-items", "1"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_python_dash_m_and_version():
    proc = subprocess.run([sys.executable, "-m", "bootstrap_eval_deltas", "--version"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip().endswith(bed.__version__)


def test_help_has_examples():
    status, out = cli_help()
    assert status == 0 and "examples:" in out and "compare" in out and "--n-items" not in out
    status, out = cli_help("simulate")
    assert status == 0 and "examples:" in out and "--n-items" in out and "--csv" not in out
