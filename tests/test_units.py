"""Small functions at their edges, each against a closed form or a published value."""

import math
import random
from fractions import Fraction
from statistics import NormalDist

import pytest

import bootstrap_eval_deltas as bed

C95 = Fraction("0.95")


# --- probabilities ------------------------------------------------------------------------

@pytest.mark.parametrize("k,n,p", [(-1, 5, 0.3), (6, 5, 0.3), (0, 5, 0.0), (2, 5, 0.0),
                                   (5, 5, 1.0), (4, 5, 1.0), (0, 40, 0.7), (0, 40, 0.2),
                                   (17, 40, 0.3)])
def test_binomial_probabilities_at_their_edges_equal_the_exact_sum(k, n, p):
    exact = math.comb(n, k) * Fraction(p) ** k * (1 - Fraction(p)) ** (n - k) \
        if 0 <= k <= n else 0
    assert bed.binom_pmf(k, n, p) == pytest.approx(float(exact), rel=1e-13, abs=1e-300)
    cdf = sum(math.comb(n, j) * Fraction(p) ** j * (1 - Fraction(p)) ** (n - j)
              for j in range(0, min(k, n) + 1))
    assert bed._binom_cdf(k, n, p) == pytest.approx(float(cdf), rel=1e-12, abs=1e-300)


def test_incomplete_beta_edges_and_closed_forms():
    assert bed._incomplete_beta(0.0, 2, 3) == 0.0 and bed._incomplete_beta(1.0, 2, 3) == 1.0
    for x in (0.1, 0.5, 0.9):
        assert bed._incomplete_beta(x, 1, 1) == pytest.approx(x, rel=1e-14)        # uniform
        assert bed._incomplete_beta(x, 1, 3) == pytest.approx(1 - (1 - x) ** 3, rel=1e-13)
    assert bed._incomplete_beta(0.5, 7, 7) == pytest.approx(0.5, rel=1e-14)         # symmetry


def test_student_t_in_its_closed_forms_and_limits():
    # Cauchy (one degree of freedom): F(t) = 1/2 + atan(t)/pi, far into both tails
    for p in (0.001, 0.2, 0.999):
        assert bed.student_t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)),
                                                             rel=1e-9)
    assert bed.student_t_cdf(-30.0, 1) == pytest.approx(0.5 + math.atan(-30) / math.pi,
                                                        rel=1e-12)
    # two degrees of freedom: F(t) = 1/2 + t / (2 sqrt(2 + t^2))
    for t in (-3.0, 0.4, 5.0):
        assert bed.student_t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)),
                                                        rel=1e-12)
    assert bed.student_t_cdf(1.3, math.inf) == NormalDist().cdf(1.3)
    assert bed.student_t_quantile(0.975, 1e8) == NormalDist().inv_cdf(0.975)


# --- intervals ----------------------------------------------------------------------------

def test_newcombe_unpaired_equals_the_published_example():
    """Newcombe (1998), example (b): 9/10 against 3/10, method 10: 0.1705 to 0.8090."""
    interval = bed.newcombe_unpaired(3, 9, 10, C95)
    assert (round(float(interval.lo), 4), round(float(interval.hi), 4)) == (0.1705, 0.8090)
    mirrored = bed.newcombe_unpaired(9, 3, 10, C95)
    assert (mirrored.lo, mirrored.hi) == (-interval.hi, -interval.lo)


def test_bca_is_undefined_when_every_resample_is_on_one_side():
    with pytest.raises(bed.ToolError, match="every bootstrap resample lies on one side"):
        bed._bca_levels(0, [1, 2, 3], C95)
    with pytest.raises(bed.ToolError, match="every bootstrap resample lies on one side"):
        bed._bca_levels(1, [1, 2, 3], C95)


def test_bca_with_a_huge_acceleration_is_refused_not_wrong():
    skewed = {Fraction(0): 30, Fraction(100): 1}     # a jackknife with one far outlier
    assert bed._acceleration(skewed) < -0.1
    with pytest.raises(bed.ToolError, match="acceleration is too large"):
        bed._bca_levels(Fraction(1, 10 ** 6), skewed, Fraction("0.999999"))
    with pytest.raises(bed.ToolError, match="the jackknife is degenerate"):
        bed._acceleration({Fraction(1, 2): 7})


# --- the numerical guards of the saddlepoint ----------------------------------------------

@pytest.mark.parametrize("guess", [-40.0, -1.0, 1.9, 3.0, 60.0])
def test_solve_finds_the_root_from_a_guess_on_either_side(guess):
    """x**3 + x = 10 at x = 2: the bracket grows down or up from the guess, then the
    Illinois steps close on the root from both sides."""
    root = bed._solve(lambda x: x ** 3 + x, 10.0, guess, 0.5)
    assert root == pytest.approx(2.0, abs=1e-10)


def test_lugannani_rice_near_its_removable_singularity_is_continuous():
    """At s = 0 the formula is 0/0: the limit 1/2 + k3/(6 sqrt(2 pi) K''^1.5) is used; it
    must meet the formula's values just outside."""
    stratum = bed._Stratum.of([0.0, 0.0, 0.1, 0.3, 1.0, 2.5])
    parts = ((1, (stratum,)),)
    root = math.sqrt(bed._cgf(parts, 0.0)[2])
    limit = bed._lugannani_rice(parts, 1e-9 / root, 0)[1]
    outside = bed._lugannani_rice(parts, 1e-4 / root, 0)[1]
    assert limit > 0.5                                   # right-skewed: the median below the mean
    assert limit == pytest.approx(outside, abs=1e-3)
    # a sum that cannot move: no spread, the middle
    flat = ((1, (bed._Stratum.of([0.7, 0.7]),)),)
    assert bed._lugannani_rice(flat, 0.3, 0)[1:] == (0.5, 0.0)


def test_binomial_variates_at_p_0_and_1_are_constants_without_a_draw():
    rng = random.Random(1)
    assert bed.binomial_table_variates(rng, 7, 0.0, 3) == [0, 0, 0]
    assert bed.binomial_table_variates(rng, 7, 1.0, 2) == [7, 7]
    assert rng.random() == random.Random(1).random()


def test_ratio_factors_beyond_the_cache_equal_the_cached_ones(monkeypatch):
    cached = bed._ratio_factors(50, 10, 20)
    monkeypatch.setattr(bed, "_FACTOR_CACHE_LIMIT", 10)
    assert bed._ratio_factors(50, 10, 20) == cached == [(50 - k) / (k + 1) for k in range(10, 20)]


def test_sign_flip_drawn_as_counts_agrees_with_the_exact_p():
    """The counts engine's sign-flip test (one table draw per distinct |d|) against the
    exact enumeration on 18 differences, within its Monte Carlo error."""
    diffs = [3, -1, 2, 2, 5, -2, 1, 4, 3, -1, 2, 6, -3, 1, 1, 2, -4, 3]
    exact = bed.sign_flip_test(random.Random(0), diffs)
    assert exact.exact
    drawn = bed.sign_flip_test(random.Random(0), diffs, 20_000, exact_limit=0, counts=True)
    assert not drawn.exact and drawn.permutations == 20_000
    assert abs(drawn.p - exact.p) < 4 * math.sqrt(exact.p * (1 - exact.p) / 20_000)


def test_clusters_of_one_item_have_no_intra_cluster_correlation():
    rng = random.Random(5)
    a, b = [rng.randint(0, 1) for _ in range(60)], [rng.randint(0, 1) for _ in range(60)]
    design = bed.compare(a, b, clusters=list(range(60))).to_dict()["comparisons"][0]["design"]
    assert design["clusters"] == 60 and design["icc"] is None and design["design_effect"] is None


# --- records ------------------------------------------------------------------------------

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
    ({"confidence": 1}, "confidence must lie strictly between 0 and 1"),
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


def test_render_refuses_what_is_not_a_report_and_outputs_it_does_not_know():
    with pytest.raises(bed.ToolError, match="unknown output 'markdwn'"):
        bed.render(object(), "markdwn")
    with pytest.raises(bed.ToolError, match="render\\(\\) takes a report, not dict"):
        bed.render({}, "text")


# --- ids and JSON -------------------------------------------------------------------------

def test_item_ids_from_every_writer_are_one_id():
    assert bed._item_id(None) is bed._MISSING
    assert bed._item_id([1, "a"]) == '[1, "a"]'
    assert bed._item_id({"b": 1, "a": Fraction(1, 2)}) == '{"a": 0.5, "b": 1}'
    assert bed._item_id(" 0.5 ") == "0.5" and bed._item_id("0.0") == 0
    assert bed._item_id(False) == "false"


def test_json_default_refuses_what_it_does_not_know():
    assert bed._json_default(Fraction(1, 4)) == 0.25
    with pytest.raises(TypeError):
        bed._json_default(object())


# --- files written ------------------------------------------------------------------------

def test_atomic_write_into_a_missing_folder_is_one_error(tmp_path):
    with pytest.raises(bed.ToolError, match="cannot write .*No such file or directory"):
        bed.atomic_write(str(tmp_path / "no" / "x.svg"), "x")


def test_atomic_write_that_fails_at_the_rename_leaves_nothing_behind(tmp_path, monkeypatch):
    target = tmp_path / "out.svg"
    target.write_text("old")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(bed.os, "replace", refuse)
    with pytest.raises(bed.ToolError, match="cannot write .*Permission denied"):
        bed.atomic_write(str(target), "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == \
        ["out.svg"]


def test_atomic_write_interrupted_removes_its_temporary_file(tmp_path, monkeypatch):
    def interrupt(fd):
        raise KeyboardInterrupt
    monkeypatch.setattr(bed.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        bed.atomic_write(str(tmp_path / "out.svg"), "new")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content,fragment", [
    (b"not json\n", "line 1 is not JSON"),
    (b'{"tool": "other"}\n', "line 1: not a bootstrap-eval-deltas ledger entry"),
])
def test_a_foreign_ledger_is_refused_and_never_rewritten(tmp_path, content, fragment):
    ledger = tmp_path / "evals.jsonl"
    ledger.write_bytes(content)
    with pytest.raises(bed.ToolError, match=fragment):
        bed.read_ledger(str(ledger))
    assert ledger.read_bytes() == content


def test_a_ledger_entry_with_a_p_outside_0_1_is_refused(tmp_path):
    import json
    import helpers
    ledger = tmp_path / "evals.jsonl"
    status, _, err = helpers.cli("--csv", helpers.SHIPPED_CSV, "--resamples", "50",
                                 "--calibration", "0", "--ledger", str(ledger))
    assert status == 0, err
    record = json.loads(ledger.read_text())
    record["p"] = 1.5
    ledger.write_text(json.dumps(record) + "\n")
    with pytest.raises(bed.ToolError, match="line 1: field p is not a valid number"):
        bed.read_ledger(str(ledger))


def test_a_ledger_that_cannot_be_opened_is_one_error(tmp_path):
    import helpers
    status, out, err = helpers.cli("--csv", helpers.SHIPPED_CSV, "--resamples", "50",
                                   "--calibration", "0", "--ledger", str(tmp_path))
    helpers.assert_one_line_error(status, out, err, "ledger")


@pytest.mark.parametrize("error,status,message", [
    (RecursionError("too deep"), 70, "internal error: RecursionError: too deep"),
    (MemoryError(), 70, "error: out of memory; try fewer --resamples or --replays"),
])
def test_main_turns_the_last_resort_errors_into_one_line(monkeypatch, error, status, message):
    import helpers

    def fail(args):
        raise error
    monkeypatch.setattr(bed, "_run", fail)
    got, out, err = helpers.cli("--replays", "0", "--resamples", "10")
    assert got == status and out == "" and err.count("\n") == 1 and message in err


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


def test_items_needed_walks_down_to_the_first_n_with_the_power():
    plan = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B).cells, C95)
    n = plan.items_needed(Fraction("0.8"))
    assert plan.power(n) >= 0.8 > plan.power(n - 1)
    level = bed.PowerPlan(bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_A).cells, C95)
    assert level.items_needed(Fraction("0.8")) is None


def test_counts_engine_refuses_real_scores_with_too_many_values():
    scores = bed.Scores(tuple(Fraction(i, 3001) for i in range(3000)),
                        tuple(Fraction(i + 1, 3001) for i in range(3000)))
    with pytest.raises(bed.ToolError, match="use engine='stream'"):
        bed.analyze(scores, random.Random(1), resamples=10, engine="counts")
    clustered = bed.Scores((1, 0, 1, 0), (1, 1, 1, 0), clusters=(1, 1, 2, 2))
    with pytest.raises(bed.ToolError, match="the counts engine covers plain items"):
        bed.analyze(clustered, random.Random(1), resamples=10, engine="counts")
    with pytest.raises(bed.ToolError, match="exact=True covers plain items"):
        bed.analyze(clustered, random.Random(1), resamples=10, exact=True)


def test_coverage_needs_its_engine_named_and_takes_settings_or_keywords_alike():
    copula = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B)
    auto = bed.coverage(random.Random(1), copula, 30, replays=2, engine="auto", resamples=20)
    assert auto == bed.coverage(random.Random(1), copula, 30, replays=2, engine="stream",
                                resamples=20)
    by_record = bed.coverage(random.Random(5), copula, 40, bed.Settings(60, C95, "basic"),
                             replays=5)
    by_keywords = bed.coverage(random.Random(5), copula, 40, replays=5, resamples=60,
                               confidence=C95, interval="basic")
    assert by_record == by_keywords
