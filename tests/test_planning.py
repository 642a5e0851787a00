"""Planning: cell probabilities, analytic power, the counts engine, sweeps and pictures."""

import json
import math
import random
import xml.etree.ElementTree as ET
from fractions import Fraction
from statistics import NormalDist

import pytest

import bootstrap_eval_deltas as bed
import oracle
from helpers import assert_one_line_error, cli

ARTICLE = bed.Copula(bed.CORR, bed.ACC_A, bed.ACC_B)


# --- cell probabilities ----------------------------------------------------------

def tetrachoric_both_right(corr, acc_a, acc_b, terms=200):
    """P(za < h, zb < k) for latent correlation rho = corr**2 by the tetrachoric series,
    an independent check on the quadrature: Phi(h)Phi(k) + phi(h)phi(k) sum rho^j/j!
    He_{j-1}(h) He_{j-1}(k)."""
    normal = NormalDist()
    h, k, rho = normal.inv_cdf(acc_a), normal.inv_cdf(acc_b), corr * corr
    he_h, he_k = [1.0, h], [1.0, k]
    for j in range(2, terms):
        he_h.append(h * he_h[-1] - (j - 1) * he_h[-2])
        he_k.append(k * he_k[-1] - (j - 1) * he_k[-2])
    total, power = 0.0, 1.0
    for j in range(1, terms):
        power *= rho / j
        total += power * he_h[j - 1] * he_k[j - 1]
    return normal.cdf(h) * normal.cdf(k) + normal.pdf(h) * normal.pdf(k) * total


@pytest.mark.parametrize("corr,acc_a,acc_b", [
    ("0.6", "0.72", "0.76"), ("0", "0.5", "0.9"), ("-0.6", "0.72", "0.76"), ("0.8", "0.3", "0.95"),
    ("0.3", "0.01", "0.99"),
])
def test_cell_probabilities_match_the_tetrachoric_series(corr, acc_a, acc_b):
    cells = bed.Copula(Fraction(corr), Fraction(acc_a), Fraction(acc_b)).cells
    want = tetrachoric_both_right(float(corr), float(acc_a), float(acc_b))
    assert cells.both == pytest.approx(want, abs=1e-10)
    assert sum(cells.as_tuple()) == pytest.approx(1.0, abs=1e-12)
    assert cells.a == pytest.approx(float(acc_a), abs=1e-12)
    assert cells.b == pytest.approx(float(acc_b), abs=1e-12)
    assert min(cells.as_tuple()) >= 0


def test_cell_probabilities_at_steep_correlation_agree_with_simulation():
    cells = bed.Copula(Fraction("0.99"), Fraction("0.72"), Fraction("0.76")).cells
    n = 200_000
    scores = bed.simulate_scores(random.Random(4), n, 0.99, 0.72, 0.76)
    both = sum(a & b for a, b in zip(scores.a, scores.b))
    se = math.sqrt(cells.both * (1 - cells.both) / n)
    assert abs(both / n - cells.both) < 4 * se


# --- analytic power ------------------------------------------------------------------

def test_article_power_and_items_needed():
    plan = bed.PowerPlan(ARTICLE.cells, bed.CONFIDENCE)
    assert plan.power(500) == pytest.approx(0.3697, abs=5e-4)
    assert plan.items_needed(Fraction("0.8")) == 1482
    assert plan.items_needed(Fraction("0.8"), paired=False) == 1884
    n = plan.items_needed(Fraction("0.9"))
    assert plan.power(n) >= 0.9 > plan.power(n - 1)
    assert plan.power(n, paired=False) < plan.power(n)            # pairing helps
    assert plan.half_width(500) == pytest.approx(0.0482, abs=1e-4)


def test_power_at_zero_gap_is_the_type_one_error_and_never_reaches_a_target():
    plan = bed.PowerPlan(bed.Copula(Fraction("0.6"), Fraction("0.7"), Fraction("0.7")).cells,
                         Fraction("0.95"))
    assert plan.power(1000) == pytest.approx(0.05)
    assert plan.items_needed(Fraction("0.8")) is None


def test_half_width_planning_three_ways():
    plan = bed.plan_accuracy(Fraction("0.85"), Fraction("0.015"), Fraction("0.95"))
    assert plan.wald == 2177
    assert abs(plan.wilson - 2177) <= 5
    assert plan.clopper_pearson >= plan.wilson
    assert bed._clopper_pearson_half_width(round(0.85 * plan.clopper_pearson),
                                          plan.clopper_pearson, Fraction("0.95")) <= 0.015


def test_clopper_pearson_known_values():
    lo, hi = bed.clopper_pearson(7, 20, Fraction("0.95"))
    assert (round(lo, 6), round(hi, 6)) == (0.153909, 0.592189)   # R: binom.test(7, 20)
    assert bed.clopper_pearson(0, 10, Fraction("0.95"))[0] == 0.0
    assert bed.clopper_pearson(10, 10, Fraction("0.95"))[1] == 1.0


# --- the binomial samplers --------------------------------------------------------------

def chi_square_z(draws, probabilities: dict) -> float:
    """Standardised chi-square statistic of draws against {value: probability}: cells
    expecting at least 5 draws on their own, the rest pooled."""
    counts = {}
    for x in draws:
        counts[x] = counts.get(x, 0) + 1
    size, stat, cells, tail_expected, tail_observed = len(draws), 0.0, 0, 0.0, 0
    for value, probability in probabilities.items():
        expected = size * probability
        if expected < 5:
            tail_expected += expected
            tail_observed += counts.get(value, 0)
            continue
        stat += (counts.get(value, 0) - expected) ** 2 / expected
        cells += 1
    if tail_expected > 0:
        stat += (tail_observed - tail_expected) ** 2 / tail_expected
        cells += 1
    df = cells - 1
    return (stat - df) / math.sqrt(2 * df)


def binomial(n, p) -> dict:
    return {k: bed.binom_pmf(k, n, p) for k in range(n + 1)}


@pytest.mark.parametrize("n,p", [(500, 0.3), (150, 0.56), (20, 0.2), (1000, 0.9),
                                 (100_000, 0.3), (40, 0.26), (12, 0.9), (2, 0.5)])
def test_binomial_samplers_fit_the_binomial(n, p):
    btrd = bed.binomial_variates(random.Random(n), [n] * 40_000, p)
    table = bed.binomial_table_variates(random.Random(n), n, p, 40_000)
    assert abs(chi_square_z(btrd, binomial(n, p))) < 4
    assert abs(chi_square_z(table, binomial(n, p))) < 4


def test_batched_binomials_equal_single_draws():
    one, many = random.Random(3), random.Random(3)
    trials = [500, 500, 7, 150, 151, 150, 100000]
    assert bed.binomial_variates(many, trials, 0.3) == [bed.binomial_variate(one, t, 0.3)
                                                        for t in trials]
    assert one.getstate() == many.getstate()


def test_multinomial_counts_add_up_and_edge_probabilities():
    rng = random.Random(1)
    assert sum(bed.multinomial_variate(rng, 1000, (0.2, 0.3, 0.5))) == 1000
    assert bed.binomial_variate(rng, 10, 0.0) == 0 and bed.binomial_variate(rng, 10, 1.0) == 10
    assert bed.multinomial_variate(rng, 5, (0.0, 1.0, 0.0)) == (0, 5, 0)


# --- the counts engine against the item engine and the exact distribution ----------------

@pytest.mark.parametrize("engine,cells", [
    ("counts", bed.Cells(18, 6, 9, 7)),       # agreement dominates: two-binomial factorisation
    ("counts", bed.Cells(2, 15, 16, 7)),      # mostly discordant: the conditional route
    ("counts", bed.Cells(30, 0, 6, 4)),       # one kind of discordance only
    ("stream", bed.Cells(18, 6, 9, 7)),
])
def test_paired_bootstrap_distribution_is_the_exact_multinomial_one(engine, cells):
    scores = bed._cells_as_scores(cells)
    data = cells if engine == "counts" else scores
    dist = bed.paired_distribution(random.Random(5), data, 20_000, engine)
    exact = {d: float(p) for d, p in oracle.exact_paired_gap_distribution(
        cells.a_only, cells.b_only, cells.n).items()}
    assert abs(chi_square_z(dist.sums, exact)) < 4


@pytest.mark.parametrize("n,acc_a,acc_b,corr", [
    (60, "0.72", "0.76", "0.6"), (150, "0.5", "0.6", "0.3"), (120, "0.8", "0.8", "0.6"),
])
def test_counts_and_item_engines_agree_on_coverage_and_power(n, acc_a, acc_b, corr):
    copula = bed.Copula(Fraction(corr), Fraction(acc_a), Fraction(acc_b))
    runs = {}
    for engine, replays in (("stream", 300), ("counts", 1500)):
        runs[engine] = bed.coverage(random.Random(11), copula, n, replays=replays,
                                    resamples=400, confidence=Fraction("0.9"), engine=engine)
    for rate in ("covers_rate", "excludes_zero_rate"):
        a, b = getattr(runs["stream"], rate), getattr(runs["counts"], rate)
        pooled = (a * runs["stream"].replays + b * runs["counts"].replays) / 1800
        se = math.sqrt(float(pooled * (1 - pooled)) * (1 / 300 + 1 / 1500)) or 1e-9
        assert abs(float(a - b)) < 4 * se, (rate, float(a), float(b))


def test_counts_engine_coverage_is_nominal_and_power_is_analytic():
    cov = bed.coverage(random.Random(8), ARTICLE, 500, replays=2000, resamples=1000,
                       confidence=bed.CONFIDENCE, engine="counts")
    plan = bed.PowerPlan(ARTICLE.cells, bed.CONFIDENCE)
    se = math.sqrt(0.95 * 0.05 / 2000)
    assert abs(float(cov.covers_rate) - 0.95) < 4 * se + 0.005       # percentile CI at n=500
    power_se = math.sqrt(plan.power(500) * (1 - plan.power(500)) / 2000)
    assert abs(float(cov.excludes_zero_rate) - plan.power(500)) < 4 * power_se


class CountingRandom(random.Random):
    """Counts the uniforms drawn: the counts engine's work is that many draws."""

    calls = 0

    def random(self):
        self.calls += 1
        return super().random()


def test_counts_engine_draws_as_many_uniforms_at_any_n():
    """Cost independent of n (the benchmark times it): the same number of draws per replay
    at n = 500 and n = 100,000, up to the few extra uniforms of BTRD's rejection steps."""
    calls = {}
    for n in (500, 100_000):
        rng = CountingRandom(1)
        bed.coverage(rng, ARTICLE, n, replays=20, resamples=2000, confidence=bed.CONFIDENCE,
                     engine="counts")
        calls[n] = rng.calls
    assert calls[500] >= 20 * 4000
    assert abs(calls[100_000] - calls[500]) < 0.01 * calls[500]


# --- command line: sweep, planning, pictures, bad input -----------------------------------

def test_sweep_text_and_json():
    status, out, _ = cli("--n-grid", "100,200", "--replays", "50", "--resamples", "200")
    assert status == 0
    assert out.startswith("power sweep: true accuracies A=0.72 B=0.76 (true gap +4.0 pts)")
    assert ("80% power needs n=1,507 paired (exact power, B=infinity; the normal approximation "
            "says 1,482; simulated at n=1,507") in out and "unpaired needs n=1,884" in out
    status, out, _ = cli("--n-grid", "100,200", "--replays", "50", "--resamples", "200",
                         "--json")
    body = json.loads(out)
    assert body["source"] == "sweep" and body["n_needed"] == 1507
    assert body["analytic_n_needed"] == 1482 and body["n_needed_by"] == "exact"
    assert [round(row["exact_power"], 4) for row in body["rows"]] == [0.0969, 0.1615]
    assert [row["n"] for row in body["rows"]] == [100, 200]
    assert body["params"]["engine"] == "counts" and body["params"]["n_grid"] == [100, 200]
    assert 0 <= body["rows"][0]["simulated"]["excludes_zero"] <= 1
    assert body["confirmation"]["replays"] == 50


def test_half_width_plan_cli():
    status, out, _ = cli("--half-width", "0.015", "--accuracy", "0.85")
    assert status == 0 and "Wald (normal approximation):  n=2,177" in out
    body = json.loads(cli("--half-width", "0.015", "--accuracy", "0.85", "--json")[1])
    assert body["n_needed"]["wald"] == 2177


def test_single_run_report_has_a_text_histogram_that_counts_every_resample():
    status, out, _ = cli("--replays", "0", "--resamples", "300")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("paired gap over 300"))
    counts = [int(line.split()[-1]) if not line.endswith("<- 0") else int(line.split()[-3])
              for line in lines[start + 1:]]
    assert sum(counts) == 300


def test_histogram_svg_is_valid_and_labelled(tmp_path):
    path = tmp_path / "gap.svg"
    status, _, _ = cli("--replays", "0", "--plot", str(path))
    assert status == 0
    root = ET.parse(path).getroot()
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "gap B - A (accuracy points)" in text and "true gap +4.0" in text
    assert "95% CI [-1.4, +8.4] pts" in text and "resamples" in text
    assert len(list(root.iter("{http://www.w3.org/2000/svg}rect"))) > 20
    assert [p.name for p in tmp_path.iterdir()] == ["gap.svg"]


def test_power_curve_svg(tmp_path):
    path = tmp_path / "power.svg"
    status, _, _ = cli("--n-grid", "250,500", "--replays", "30", "--resamples", "200",
                       "--plot", str(path))
    assert status == 0
    root = ET.parse(path).getroot()
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "target 80%" in text and "n=1,507" in text and "analytic, paired" in text
    assert len(list(root.iter("{http://www.w3.org/2000/svg}polyline"))) == 2


BAD_PLANNING = [
    (["--n-grid", ""], "empty grid"),
    (["--n-grid", "500,250"], "strictly increasing"),
    (["--n-grid", "500,500"], "strictly increasing"),
    (["--n-grid", "1,10"], "--n-grid sizes must lie between 2"),
    (["--n-grid", "10,x"], "comma-separated list"),
    (["--n-grid", "100,200", "--n-items", "100"], "--n-grid replaces --n-items"),
    (["--n-grid", "100,200", "--replays", "0"], "--replays must be at least 1"),
    (["--target-power", "1"], "--target-power must be strictly between 0 and 1"),
    (["--target-power", "0"], "--target-power must be strictly between 0 and 1"),
    (["--half-width", "0"], "--half-width must be a proportion above 0"),
    (["--half-width", "-0.1"], "--half-width must be a proportion above 0"),
    (["--half-width", "0.01", "--accuracy", "1.5"], "--accuracy must be strictly between"),
    (["--accuracy", "0.5"], "--accuracy does not apply to simulate (it is a flag of plan)"),
    (["plan", "--accuracy", "0.5"], "--accuracy goes with --half-width"),
    (["--half-width", "0.01", "--n-items", "9"], "--n-items do not apply to it"),
    (["--plot", "/nonexistent-folder/x.svg"], "cannot write /nonexistent-folder/x.svg"),
    (["--engine", "counts", "--write-csv", "x.csv"], "counts engine simulates cell counts"),
    (["--engine", "fast"], "invalid choice"),
]


@pytest.mark.parametrize("argv,message", BAD_PLANNING, ids=[" ".join(a) for a, _ in BAD_PLANNING])
def test_bad_planning_input(argv, message):
    assert_one_line_error(*cli(*argv), message)


def test_plot_onto_a_folder_is_refused_before_any_work(tmp_path):
    assert_one_line_error(*cli("--plot", str(tmp_path)), "it is a folder")
    assert list(tmp_path.iterdir()) == []
