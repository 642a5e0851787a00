"""Leaderboards: k systems on the same items, every pair, rank intervals and tiers.

Oracles: numpy recomputes each pair's standard error under the design (items, clusters,
strata) from the raw scores; the adjusted p-values are recomputed here the way
statsmodels' ``multipletests`` does (and by statsmodels itself where it is installed);
simulated leaderboards with known accuracies check the joint coverage of the rank
intervals and the error rates of Holm and Benjamini-Hochberg."""

import csv
import json
import math
import os
import random
import xml.etree.ElementTree as ET
from fractions import Fraction
from statistics import NormalDist

import pytest
from hypothesis import given, settings, strategies as st

import bootstrap_eval_deltas as bed
from helpers import ROOT, assert_one_line_error, cli
from helpers import cli_json as body

np = pytest.importorskip("numpy")
EXAMPLES = os.path.join(ROOT, "datasets", "examples")
PROMPTS = os.path.join(EXAMPLES, "prompts.csv")


def correlated(rng, accuracies, n, corr=0.5):
    """0/1 scores of systems sharing each item's difficulty (the article's copula)."""
    cuts = [NormalDist().inv_cdf(a) for a in accuracies]
    w = math.sqrt(1 - corr * corr)
    columns = [[] for _ in accuracies]
    for _ in range(n):
        d = rng.gauss(0, 1)
        for column, cut in zip(columns, cuts):
            column.append(int(corr * d + w * rng.gauss(0, 1) < cut))
    return columns


def table_of(columns, clusters=None, strata=None):
    names = tuple(f"s{i}" for i in range(len(columns)))
    n = len(columns[0])
    return bed.Table(names, tuple(map(tuple, columns)), tuple(range(n)),
                     (bed.Source("sim", "", n, names, "csv"),), clusters=clusters,
                     strata=strata)


def board_of(columns, seed=1, draws=1000, adjust="holm", **labels):
    return bed.rank_systems(table_of(columns, **labels), random.Random(seed),
                            bed.Settings(calibration=0, adjust=adjust), draws=draws)


# --- the numbers, against numpy ---

def numpy_gap_se(columns, clusters=None, strata=None):
    """Each pair's standard error of the gap of means, from the raw scores: the linearized
    ratio estimator over clusters, within strata, with n_h / (n_h - 1)."""
    x = np.array(columns, dtype=float)                      # k x n
    n = x.shape[1]
    clusters = np.arange(n) if clusters is None else np.array(clusters)
    strata = np.zeros(n, dtype=int) if strata is None else np.array(strata)
    means = x.mean(axis=1)
    cov = np.zeros((len(columns), len(columns)))
    for h in np.unique(strata):
        in_h = strata == h
        units = np.unique(clusters[in_h])
        if len(units) < 2:
            continue
        z = np.array([(x[:, in_h & (clusters == u)] - means[:, None]).sum(axis=1)
                      for u in units]) / n                  # units x k
        z -= z.mean(axis=0)
        cov += len(units) / (len(units) - 1) * z.T @ z
    diag = np.diag(cov)
    return np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2 * cov, 0))


@pytest.mark.parametrize("design", ["items", "clusters", "strata", "both"])
def test_each_pairs_standard_error_is_numpys_under_the_design(design):
    rng = random.Random(7)
    columns = correlated(rng, [0.6, 0.65, 0.7, 0.8], 400)
    clusters = [i // 5 for i in range(400)] if design in ("clusters", "both") else None
    strata = [i % 3 for i in range(400)] if design in ("strata", "both") else None
    if design == "both":
        clusters = [f"{s}-{c}" for s, c in zip(strata, clusters)]
    board = board_of(columns, clusters=clusters, strata=strata)
    se = numpy_gap_se(columns, clusters, strata)
    names = [f"s{i}" for i in range(4)]
    for pair in board.pairs:
        i, j = names.index(pair.first), names.index(pair.second)
        half = float(pair.interval.hi - pair.interval.lo) / 2
        assert half / board.critical == pytest.approx(se[i, j], rel=1e-9)
        assert float(pair.gap) == pytest.approx(np.mean(columns[i]) - np.mean(columns[j]))


def test_real_scores_in_clusters_against_numpy():
    rng = random.Random(3)
    columns = [[round(min(1.0, max(0.0, rng.gauss(mu, 0.2))), 3) for _ in range(300)]
               for mu in (0.5, 0.55, 0.62)]
    clusters = [i // 4 for i in range(300)]
    board = board_of([[Fraction(str(v)) for v in c] for c in columns], clusters=clusters)
    se = numpy_gap_se(columns, clusters)
    for pair in board.pairs:
        i, j = int(pair.first[1:]), int(pair.second[1:])
        assert float(pair.interval.hi - pair.gap) / board.critical == \
            pytest.approx(se[i, j], rel=1e-9)
    assert board.design == "75 clusters"


def test_pair_tests_are_mcnemar_on_each_pairs_discordant_items():
    rng = random.Random(11)
    columns = correlated(rng, [0.55, 0.6, 0.7], 250)
    board = board_of(columns)
    for pair in board.pairs:
        a, b = (np.array(columns[int(name[1:])]) for name in (pair.first, pair.second))
        first_only, second_only = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        assert pair.test.p == bed.mcnemar_exact(second_only, first_only).p
        assert pair.differing == first_only + second_only


def test_ranks_and_tiers_follow_from_the_joint_intervals():
    rng = random.Random(5)
    board = board_of(correlated(rng, [0.5, 0.52, 0.6, 0.75, 0.76, 0.9], 500))
    order = [s.system for s in board.standings]
    scores = [s.score for s in board.standings]
    assert scores == sorted(scores, reverse=True)
    for s in board.standings:
        above = sum(board.pair(s.system, t).apart for t in order[:order.index(s.system)]
                    if t != s.system)
        below = sum(board.pair(s.system, t).apart for t in order[order.index(s.system) + 1:])
        assert s.ranks == (1 + above, len(order) - below)
    leader = board.standings[0]
    assert leader.tier == 1
    for s in board.standings[1:]:
        assert (s.tier == 1) == (not board.pair(leader.system, s.system).apart)
    for pair in board.pairs:     # apart exactly when the interval excludes 0
        assert pair.apart == (pair.interval.lo > 0 or pair.interval.hi < 0)


# --- adjusted p-values: statsmodels' multipletests, recomputed ---

def multipletests(pvalues, method):
    """statsmodels.stats.multitest.multipletests(p, method)[1], as it computes them."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p)
    ranked = p[order]
    if method == "bonferroni":
        adjusted = np.minimum(1, ranked * m)
    elif method == "holm":
        adjusted = np.minimum(1, np.maximum.accumulate((m - np.arange(m)) * ranked))
    else:                                                    # fdr_bh
        adjusted = np.minimum(1, np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1])
    out = np.empty(m)
    out[order] = adjusted
    return out


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_adjusted_p_values_equal_multipletests(pvalues):
    for ours, method in ((bed.holm, "holm"), (bed.benjamini_hochberg, "fdr_bh"),
                         (bed.bonferroni, "bonferroni")):
        assert ours(pvalues) == pytest.approx(list(multipletests(pvalues, method)), abs=1e-12)


def test_adjusted_p_values_equal_statsmodels_itself():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = random.Random(2)
    pvalues = [rng.random() ** 3 for _ in range(45)]
    for ours, method in ((bed.holm, "holm"), (bed.benjamini_hochberg, "fdr_bh"),
                         (bed.bonferroni, "bonferroni")):
        assert ours(pvalues) == pytest.approx(list(multitest.multipletests(pvalues,
                                                                          method=method)[1]))


def test_the_board_adjusts_its_pairs_p_as_asked():
    rng = random.Random(9)
    columns = correlated(rng, [0.6, 0.62, 0.66, 0.7, 0.72], 300)
    for adjust, method in (("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")):
        board = board_of(columns, adjust=adjust)
        raw = [p.test.p for p in board.pairs]
        assert [p.p_adjusted for p in board.pairs] == \
            pytest.approx(list(multipletests(raw, method)), abs=1e-12)


# --- statistics: joint coverage of the true ranks, FWER, FDR ---

def true_ranks(accuracies):
    return [1 + sum(b > a for b in accuracies) for a in accuracies]


@pytest.mark.once
@pytest.mark.slow
@pytest.mark.parametrize("accuracies, n, replays", [
    ([0.7] * 5, 300, 1000),                                  # k=5, all equal
    ([0.6 + 0.03 * i for i in range(10)], 400, 400),        # k=10, distinct and close
    ([0.65] * 6 + [0.7 + 0.01 * i for i in range(14)], 500, 300),   # k=20, ties and steps
])
def test_rank_intervals_hold_every_true_rank_jointly(accuracies, n, replays):
    rng = random.Random(2026)
    truth = true_ranks(accuracies)
    held = 0
    for replay in range(replays):
        board = board_of(correlated(rng, accuracies, n), seed=replay, draws=1000)
        names = [s.system for s in board.standings]
        held += all(s.ranks[0] <= truth[int(s.system[1:])] <= s.ranks[1]
                    for s in board.standings) and len(names) == len(accuracies)
    rate = held / replays
    print(f"k={len(accuracies)}: every true rank held jointly in {rate:.3f} of {replays}")
    assert rate >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / replays), rate


@pytest.mark.once
@pytest.mark.slow
def test_holm_holds_the_familywise_error_and_bh_the_false_discovery_rate():
    rng = random.Random(7)
    accuracies = [0.7] * 4 + [0.8] * 2                      # 7 true nulls of 15 pairs
    replays, any_false, fdp = 600, 0, 0.0
    for replay in range(replays):
        columns = correlated(rng, accuracies, 300)
        holm_board = board_of(columns, seed=replay, draws=200)
        bh = bed.benjamini_hochberg([p.test.p for p in holm_board.pairs])
        null = [accuracies[int(p.first[1:])] == accuracies[int(p.second[1:])]
                for p in holm_board.pairs]
        any_false += any(p.p_adjusted < 0.05 and is_null
                         for p, is_null in zip(holm_board.pairs, null))
        found = [q < 0.05 for q in bh]
        if any(found):
            fdp += sum(f and is_null for f, is_null in zip(found, null)) / sum(found)
    se = math.sqrt(0.05 * 0.95 / replays)
    print(f"Holm's familywise error {any_false / replays:.3f}, BH's false discovery rate "
          f"{fdp / replays:.3f}, of {replays}")
    assert any_false / replays <= 0.05 + 3 * se
    assert fdp / replays <= 0.05 + 3 * se


# --- the command line ---

def test_the_shipped_prompts_ranked_with_every_column():
    status, out, err = cli("leaderboard", PROMPTS)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("leaderboard of 4 systems on 600 items: 2 tiers; the leader, "
                               "prompt_v2")
    assert lines[1].split() == ["rank", "system", "score", "95%", "CI", "tier"]
    assert [line.split()[1] for line in lines[2:6]] == \
        ["prompt_v2", "prompt_v3", "baseline", "prompt_v4"]
    got = body("leaderboard", PROMPTS)
    assert [s["system"] for s in got["systems"]] == \
        ["prompt_v2", "prompt_v3", "baseline", "prompt_v4"]
    assert len(got["pairs"]) == 6 and got["adjust"] == "holm"
    assert got["headline"] == lines[0]
    with open(PROMPTS, newline="") as f:
        rows = list(csv.DictReader(f))
    for system in got["systems"]:
        assert system["score"] == pytest.approx(
            sum(int(r[system["system"]]) for r in rows) / len(rows))


def test_one_verdict_in_every_format_and_from_python(tmp_path):
    text = cli("leaderboard", PROMPTS, "--details")[1]
    markdown = cli("leaderboard", PROMPTS, "--output", "markdown", "--details")[1]
    got = body("leaderboard", PROMPTS)
    for pair in got["pairs"]:
        said = "told apart" if pair["apart"] else "not told apart"
        assert f"{pair['first']} - {pair['second']}: " in text
        assert any(line.startswith(f"  {pair['first']} - {pair['second']}: ") and
                   line.endswith(f": {said}") for line in text.splitlines())
        assert f"| {pair['first'].replace('_', chr(92) + '_')} - " in markdown
    with open(PROMPTS, newline="") as f:
        rows = list(csv.DictReader(f))
    systems = ["baseline", "prompt_v2", "prompt_v3", "prompt_v4"]
    from_python = bed.leaderboard({name: [int(r[name]) for r in rows] for name in systems},
                                  ids=[r["item"] for r in rows])
    ours = from_python.to_dict()
    assert ours["systems"] == got["systems"] and ours["pairs"] == got["pairs"]
    assert bed.leaderboard(PROMPTS).to_dict() == got
    assert repr(from_python).startswith("Result('leaderboard of 4 systems")


def test_a_long_file_and_a_file_per_system_rank_alike(tmp_path):
    with open(PROMPTS, newline="") as f:
        rows = list(csv.DictReader(f))
    systems = ["baseline", "prompt_v2", "prompt_v3", "prompt_v4"]
    long = tmp_path / "long.csv"
    long.write_text("item,model,correct\n" + "".join(
        f"{r['item']},{s},{r[s]}\n" for r in rows for s in systems))
    paths = []
    for s in systems:
        path = tmp_path / f"{s}.jsonl"
        path.write_text("".join(json.dumps({"id": r["item"], "score": int(r[s])}) + "\n"
                                for r in rows))
        paths.append(str(path))
    wide = body("leaderboard", PROMPTS)
    by_long = body("leaderboard", str(long), "--system-col", "model", "--score-col", "correct")
    per_file = body("leaderboard", *paths, "--score-col", "score", "--id-col", "id",
                    "--names", ",".join(systems))
    for other in (by_long, per_file):
        assert other["systems"] == wide["systems"] and other["pairs"] == wide["pairs"]


def test_harness_folders_rank_every_model_they_hold():
    suite = os.path.join(EXAMPLES, "helm", "runs", "mysuite")
    got = body("leaderboard", suite, "--metric", "exact_match")
    assert sorted(s["system"] for s in got["systems"]) == ["mock/parity-a", "mock/parity-b"]
    assert "tasks as strata" in got["joint"]["design"]


def test_the_forest_plot_is_svg_with_every_system(tmp_path):
    plot = tmp_path / "board.svg"
    status, out, err = cli("leaderboard", PROMPTS, "--plot", str(plot))
    assert status == 0 and plot.exists()
    svg = plot.read_text()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    for name in ("baseline", "prompt_v2", "prompt_v3", "prompt_v4"):
        assert f">{name}</text>" in svg
    assert "rank 1-2, tier 1" in svg


def test_runs_and_real_scores_carry_through():
    seeds = os.path.join(EXAMPLES, "seeds.csv")
    got = body("leaderboard", seeds, "--run-col", "seed")
    assert got["joint"]["design"] == "each item's mean over its runs, plus the runs' own variance"
    assert [p["test"]["name"] for p in got["pairs"]] == ["two-level t (items and runs)"]
    judge = os.path.join(EXAMPLES, "judge.csv")
    got = body("leaderboard", judge, "--id-col", "prompt_id")
    assert got["pairs"][0]["test"]["name"] == "paired z test (design-based s.e.)"


# --- refusals: one line, status 2 ---

def test_bad_boards_are_refused_in_one_line(tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("item,a\n1,1\n2,0\n3,1\n")
    assert_one_line_error(*cli("leaderboard", str(one)), "2 to 200 systems, got 1")
    constant = tmp_path / "constant.csv"
    constant.write_text("item,a,b,c\n" + "".join(f"{i},{i % 2},{1 - i % 3 // 2},0\n"
                                                 for i in range(40)))
    assert_one_line_error(*cli("leaderboard", str(constant)), "c scores 0 on every item")
    status, out, _ = cli("leaderboard", str(constant), "--allow-constant")
    assert status == 0 and "c " in out
    a, b, c = (tmp_path / f"{x}.jsonl" for x in "abc")
    for path, ids in ((a, range(10)), (b, range(10)), (c, range(5, 15))):
        path.write_text("".join(json.dumps({"id": i, "s": i % 2}) + "\n" for i in ids))
    assert_one_line_error(*cli("leaderboard", str(a), str(b), str(c), "--score-col", "s",
                               "--id-col", "id"), "not in every run")
    text = tmp_path / "text.csv"
    text.write_text("item,a,b,model\n1,1,0,x\n2,0,1,y\n")
    assert_one_line_error(*cli("leaderboard", str(text)), "model")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--names", "a,b"),
                          "--names gives 2 names for the 4 systems")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--draws", "10"), "--draws")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--adjust", "fdr"), "invalid choice")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--gate"), "does not apply")
    empty = tmp_path / "empty.csv"
    empty.write_text("item,a,,c\n1,1,0,1\n2,0,1,1\n3,1,1,0\n")
    assert_one_line_error(*cli("leaderboard", str(empty)), "a column has no name")
    same = tmp_path / "s.jsonl"
    same.write_text("".join(json.dumps({"id": i, "s": i % 2}) + "\n" for i in range(10)))
    assert_one_line_error(*cli("leaderboard", str(same), str(same), "--score-col", "s",
                               "--id-col", "id"), "two systems are named")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--names", "a,,c,d"), "an empty name")
    assert_one_line_error(*cli("leaderboard", PROMPTS, "--target-power", "0.3"), "above 0.5")
    with pytest.raises(bed.ToolError, match="at least two systems"):
        bed.leaderboard([1, 0, 1])
    with pytest.raises(bed.ToolError, match="mapping names its systems"):
        bed.leaderboard({"a": [1, 0], "b": [0, 1]}, names=["x", "y"])


def test_compare_adjusts_by_benjamini_hochberg_when_asked():
    systems = "baseline,prompt_v2,prompt_v3,prompt_v4"
    holm = body("compare", PROMPTS, "--systems", systems)
    bh = body("compare", PROMPTS, "--systems", systems, "--adjust", "bh")
    raw = [c["test"]["p"] for c in holm["comparisons"]]
    assert [c["decision"]["p"] for c in bh["comparisons"]] == \
        pytest.approx(list(multipletests(raw, "fdr_bh")))
    assert [c["p_bh"] for c in holm["comparisons"]] == \
        pytest.approx(list(multipletests(raw, "fdr_bh")))
    discoveries = sum(c["decision"]["p"] < 0.05 for c in bh["comparisons"])
    assert bh["comparisons"][0]["decision"]["level"] == pytest.approx(1 - 0.05 * discoveries / 3)
    status, out, _ = cli("compare", PROMPTS, "--systems", systems, "--adjust", "bh")
    assert "Benjamini-Hochberg-adjusted" in out and "FCR-adjusted" in out


# --- edges a review found ---

def test_a_stratum_of_one_item_is_refused_as_compare_refuses_it():
    rng = random.Random(1)
    columns = [[rng.randint(0, 1) for _ in range(100)] for _ in range(3)]
    with pytest.raises(bed.ToolError, match="one"):
        board_of(columns, strata=tuple(range(100)))


def test_identical_systems_share_one_tier_and_no_draws_are_needed():
    rng = random.Random(1)
    same = [rng.randint(0, 1) for _ in range(100)]
    board = board_of([same, same, same])
    assert board.draws == 0 and board.critical_error == 0
    assert {s.tier for s in board.standings} == {1}
    assert all(s.ranks == (1, 3) for s in board.standings)
    two = board_of([same, [1 - x for x in same]])
    assert two.draws == 0 and two.critical == pytest.approx(NormalDist().inv_cdf(0.975))


@given(st.lists(st.sampled_from([0.0125, 0.025, 0.0375, 0.05, 0.01, 0.3, 1 / 3, 0.04]),
                min_size=1, max_size=12))
@settings(max_examples=100, deadline=None)
def test_adjusted_p_values_are_the_exact_values_of_the_floats_given(pvalues):
    """Near the boundary a float product can land on either side of alpha; the adjustments
    are exact rationals of the p-values given, rounded once at the end."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    exact_bh = {}
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        exact_bh[index] = min([m * Fraction(pvalues[index]) / rank] +
                              [exact_bh[order[r - 1]] for r in range(rank + 1, m + 1)][:1])
    assert bed.benjamini_hochberg(pvalues) == [float(min(1, exact_bh[i])) for i in range(m)]
    running, exact_holm = Fraction(0), {}
    for rank, index in enumerate(order):
        running = max(running, min(1, (m - rank) * Fraction(pvalues[index])))
        exact_holm[index] = running
    assert bed.holm(pvalues) == [float(exact_holm[i]) for i in range(m)]


def test_tiers_out_of_score_order_are_said():
    """close trails top on 8 items, all one way: told apart; loose differs from top on 50
    items both ways and scores lower, but is not told apart: it shares top's tier."""
    top = [1] * 60 + [0] * 40
    close = [0] * 8 + [1] * 52 + [0] * 40
    loose = [1, 0] * 50
    result = bed.leaderboard({"top": top, "close": close, "loose": loose})
    board = result.board
    assert [(s.system, s.tier) for s in board.standings] == \
        [("top", 1), ("close", 2), ("loose", 1)]
    assert "note: tiers are not in score order: loose (tier 1)" in str(result)


def test_real_scores_pairs_use_the_z_test_on_the_intervals_standard_error():
    rng = random.Random(6)
    columns = [[Fraction(round(rng.random(), 3)).limit_denominator(1000) for _ in range(200)]
               for _ in range(3)]
    board = board_of(columns)
    for pair in board.pairs:
        se = float(pair.interval.hi - pair.gap) / board.critical
        assert pair.test.name == "paired z test (design-based s.e.)"
        assert pair.test.p == pytest.approx(2 * NormalDist().cdf(-abs(float(pair.gap)) / se))
