"""Your own eval results: formats, joins, real-valued scores, many systems, bad input."""

import itertools
import json
import math
import random
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bootstrap_eval_deltas as bed
from helpers import ROOT, SHIPPED_CSV, assert_one_line_error, cli
from helpers import cli_json as body

SHIPPED_ROWS = open(SHIPPED_CSV).read().splitlines()[1:]


def shipped_records():
    for line in SHIPPED_ROWS:
        item, a, b = line.split(",")
        yield int(item), int(a), int(b)


def write(path, text):
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


# --- every format gives the shipped file's numbers ------------------------------------------

@pytest.fixture(scope="module")
def shipped():
    return body("--csv", SHIPPED_CSV)


def same_numbers(a, b):
    keys = ("accuracy", "gap", "ci", "mcnemar", "test")
    a, b = a["comparisons"][0], b["comparisons"][0]
    return all(a[k] == b[k] for k in keys)


@pytest.mark.parametrize("delimiter", [",", "\t", ";"])
def test_delimiters_are_sniffed(tmp_path, shipped, delimiter):
    text = "\n".join(line.replace(",", delimiter) for line in open(SHIPPED_CSV).read().splitlines())
    path = write(tmp_path / "s.txt", text + "\n")
    assert same_numbers(body("--csv", path), shipped)


def test_explicit_columns_reordered_and_renamed(tmp_path, shipped):
    lines = ["id,extra,sys_b,sys_a"] + [f"q{i},x,{b},{a}" for i, a, b in shipped_records()]
    path = write(tmp_path / "r.csv", "\n".join(lines) + "\n")
    got = body("--csv", path, "--a-col", "sys_a", "--b-col", "sys_b", "--id-col", "id")
    assert same_numbers(got, shipped)
    assert got["input"]["columns"] == ["id", "sys_a", "sys_b"]


def test_jsonl_with_nested_keys_and_booleans(tmp_path, shipped):
    lines = [json.dumps({"item": i, "runs": {"a": bool(a), "b": float(b)}})
             for i, a, b in shipped_records()]
    path = write(tmp_path / "s.jsonl", "\n".join(lines) + "\n")
    got = body("--csv", path, "--a-col", "runs.a", "--b-col", "runs.b")
    assert same_numbers(got, shipped) and got["source"] == "jsonl"


def test_input_format_forces_jsonl_and_stdin_works(shipped):
    lines = [json.dumps({"item": i, "system_a_correct": a, "system_b_correct": b})
             for i, a, b in shipped_records()]
    proc = subprocess.run([sys.executable, "bootstrap_eval_deltas.py", "--csv", "-",
                           "--input-format", "jsonl", "--json"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert same_numbers(got, shipped) and got["input"]["path"] == "<stdin>"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_two_run_files_joined_on_id_in_any_order(tmp_path, shipped, fmt):
    records = list(shipped_records())
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    if fmt == "csv":
        base = "id,score\n" + "".join(f"q{i},{a}\n" for i, a, _ in records)
        cand = "id,score\n" + "".join(f"q{i},{b}\n" for i, _, b in shuffled)
    else:
        base = "".join(json.dumps({"id": f"q{i}", "m": {"acc": a}}) + "\n" for i, a, _ in records)
        cand = "".join(json.dumps({"id": f"q{i}", "m": {"acc": b}}) + "\n" for i, _, b in shuffled)
    score = "score" if fmt == "csv" else "m.acc"
    paths = [write(tmp_path / f"base.{fmt}", base), write(tmp_path / f"tuned.{fmt}", cand)]
    got = body("--baseline", paths[0], "--candidate", paths[1], "--score-col", score,
               "--id-col", "id")
    assert same_numbers(got, shipped)
    assert got["source"] == "runs" and [f["rows"] for f in got["input"]["files"]] == [500, 500]
    assert got["input"]["systems"] == ["base", "tuned"]


def test_missing_rows_are_dropped_only_when_asked_and_then_counted(tmp_path):
    base = "id,s\n" + "".join(f"{i},{i % 2}\n" for i in range(1, 41))
    cand = "id,s\n" + "".join(f"{i},{(i // 3) % 2}\n" for i in range(3, 41)) + "99,1\n"
    paths = [write(tmp_path / "b.csv", base), write(tmp_path / "c.csv", cand)]
    argv = ["--baseline", paths[0], "--candidate", paths[1], "--score-col", "s", "--id-col", "id"]
    assert_one_line_error(*cli(*argv), "3 item(s) are not in every run (first: 1 only in b, "
                                       "2 only in b, 99 only in c)")
    got = body(*argv, "--on-missing", "drop")
    assert got["input"]["items"] == 38 and got["input"]["dropped"] == 3
    status, out, _ = cli(*argv, "--on-missing", "drop")
    assert "dropped (--on-missing drop): 3 (3 item(s) not in every run); 38 items kept" in out


def test_missing_score_in_one_file(tmp_path):
    text = "item,a,b\n1,1,0\n2,,1\n3,1,1\n4,0,\n5,1,1\n"
    path = write(tmp_path / "m.csv", text)
    assert_one_line_error(*cli("--csv", path, "--a-col", "a", "--b-col", "b"),
                          "2 row(s) with a missing score, id or label (first: 2, 4)")
    got = body("--csv", path, "--a-col", "a", "--b-col", "b", "--on-missing", "drop")
    assert got["input"]["items"] == 3 and got["input"]["dropped"] == 2


# --- real-valued scores ----------------------------------------------------------------------

def real_table(n=60, seed=4, shift=Fraction(0)):
    rng = random.Random(seed)
    a = [Fraction(rng.randrange(1000), 1000) for _ in range(n)]
    b = [x + Fraction(rng.randrange(-150, 200), 1000) + shift for x in a]
    return a, b


def test_real_valued_scores_use_the_permutation_test(tmp_path):
    a, b = real_table()
    lines = ["item,base,new"] + [f"{i},{float(x)},{float(y)}" for i, (x, y) in enumerate(zip(a, b))]
    path = write(tmp_path / "f1.csv", "\n".join(lines) + "\n")
    got = body("--csv", path, "--a-col", "base", "--b-col", "new", "--permutations", "10000")
    got = got["comparisons"][0]
    assert got["mcnemar"] is None
    assert got["test"]["name"] == "sign-flip permutation (Monte Carlo)"
    assert got["test"]["permutations"] == 10_000 and 0 < got["test"]["p"] <= 1
    status, out, _ = cli("--csv", path, "--a-col", "base", "--b-col", "new", "--permutations",
                         "10000")
    assert "paired sign-flip permutation test (Monte Carlo, 10,000 random sign patterns)" in out
    auto = body("--csv", path, "--a-col", "base", "--b-col", "new")["comparisons"][0]["test"]
    assert auto["name"] == "sign-flip permutation (saddlepoint)" and auto["saddlepoint"]
    assert abs(auto["p"] - got["test"]["p"]) < 4 * (auto["p"] * (1 - auto["p"]) / 1e4) ** 0.5
    assert "(real-valued scores)" in out.splitlines()[-1]


def test_judge_scores_are_reported_in_their_own_units(tmp_path):
    lines = ["item,a,b"] + [f"{i},{i % 7 + 2},{i % 5 + 3}" for i in range(40)]
    path = write(tmp_path / "j.csv", "\n".join(lines) + "\n")
    status, out, _ = cli("--csv", path, "--a-col", "a", "--b-col", "b", "--details")
    assert status == 0 and "pts" not in out.split("paired gap over")[0]
    assert "  gap B - A: +0.125; " in out   # means 4.875 and 5.000


def brute_force_p(diffs):
    observed = abs(sum(diffs))
    hits = sum(abs(sum(s * d for s, d in zip(signs, diffs))) >= observed
               for signs in itertools.product((1, -1), repeat=len(diffs)))
    return Fraction(hits, 2 ** len(diffs))


@pytest.mark.parametrize("diffs", [[3, 1, 2], [5, -1, 2, 0, 7, -3], [1] * 9, [2, -2, 2, -2],
                                   list(range(-6, 7)), [10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]])
def test_exact_permutation_p_equals_enumeration_by_hand(diffs):
    got = bed.sign_flip_test(random.Random(0), diffs)
    assert got.exact and got.p == float(brute_force_p([d for d in diffs if d]))


def test_monte_carlo_permutation_p_is_within_error_of_exact():
    rng = random.Random(3)
    diffs = [rng.randrange(-40, 60) for _ in range(16)]
    exact = bed.sign_flip_test(random.Random(0), diffs).p
    mc = bed.sign_flip_test(random.Random(9), diffs, 20_000, exact_limit=0)
    assert not mc.exact
    assert abs(mc.p - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_permutation_test_type_one_error_is_at_most_alpha():
    """Null data (B - A symmetric about 0): rejections at 5% within Monte Carlo error."""
    rng = random.Random(12)
    rejections, trials = 0, 400
    for _ in range(trials):
        diffs = [rng.choice((-1, 1)) * rng.randrange(1, 100) for _ in range(30)]
        rejections += bed.sign_flip_test(rng, diffs, 199).p <= 0.05
    assert rejections / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


# --- many systems: Holm and Bonferroni --------------------------------------------------------

def test_holm_and_bonferroni_hand_examples():
    ps = [0.01, 0.02, 0.03, 0.04, 0.05]
    assert bed.bonferroni(ps) == pytest.approx([0.05, 0.10, 0.15, 0.20, 0.25])
    assert bed.holm(ps) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert bed.holm([0.04, 0.001, 0.9]) == pytest.approx([0.08, 0.003, 0.9])
    assert bed.holm([0.5, 0.6]) == [1.0, 1.0]
    assert bed.holm([0.2]) == [0.2] and bed.bonferroni([0.2]) == [0.2]


def test_three_systems_in_input_order_with_adjusted_p(tmp_path):
    rng = random.Random(5)
    lines = ["item,base,c1,c2"]
    for i in range(400):
        d = rng.gauss(0, 1)
        lines.append(",".join([str(i)] + [str(int(0.6 * d + 0.8 * rng.gauss(0, 1) < t))
                                          for t in (0.3, 0.75, 0.35)]))
    path = write(tmp_path / "three.csv", "\n".join(lines) + "\n")
    got = body("--csv", path, "--systems", "base,c1,c2")
    comps = got["comparisons"]
    assert [c["candidate"] for c in comps] == ["c1", "c2"] and got["family_size"] == 2
    ps = [c["test"]["p"] for c in comps]
    assert [c["p_holm"] for c in comps] == pytest.approx(bed.holm(ps))
    assert [c["p_bonferroni"] for c in comps] == pytest.approx(bed.bonferroni(ps))
    assert comps[0]["verdict"] == "better"
    status, out, _ = cli("--csv", path, "--systems", "base,c1,c2", "--details")
    assert "family: 2 comparisons against base" in out
    assert out.startswith("c1: verdict: better.")
    assert out.index("\n  c1 ") < out.index("\n  c2 ")
    status, md, _ = cli("--csv", path, "--systems", "base,c1,c2", "--output", "markdown")
    assert md.startswith("| candidate | baseline | n |") and "| c1 | base | 400 |" in md


def test_first_comparison_of_a_family_equals_the_two_system_run(tmp_path):
    lines = ["item,a,b,c"] + [f"{i},{a},{b},{b}" for i, a, b in shipped_records()]
    path = write(tmp_path / "t.csv", "\n".join(lines) + "\n")
    family = body("--csv", path, "--systems", "a,b,c")
    single = body("--csv", SHIPPED_CSV)
    assert family["comparisons"][0]["ci"] == single["comparisons"][0]["ci"]


# --- properties -------------------------------------------------------------------------------

pair_lists = st.integers(2, 30).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 20), min_size=n, max_size=n),
    st.lists(st.integers(0, 20), min_size=n, max_size=n)))


@settings(max_examples=40, deadline=None)
@given(pair_lists, st.integers(0, 2 ** 32), st.sampled_from([1, 7, 40]))
def test_swapping_a_and_b_negates_gap_and_distribution(pair, seed, resamples):
    a, b = (tuple(Fraction(x, 10) for x in column) for column in pair)
    forward = bed.analyze(bed.Scores(a, b), random.Random(seed), resamples=resamples,
                          confidence=Fraction("0.9"), permutations=50)
    swapped = bed.analyze(bed.Scores(b, a), random.Random(seed), resamples=resamples,
                          confidence=Fraction("0.9"), permutations=50)
    assert swapped.gap == -forward.gap
    sums = forward.paired_distribution.sums
    assert swapped.paired_distribution.sums == tuple(sorted(-s for s in sums))
    lo, hi = forward.paired_distribution.end_indices(Fraction("0.9"))
    denominator = forward.paired_distribution.denominator
    assert swapped.paired == bed.Interval(Fraction(-sums[resamples - 1 - lo], denominator),
                                          Fraction(-sums[resamples - 1 - hi], denominator))
    assert 0 <= forward.p <= 1 and 0 <= swapped.p <= 1


@settings(max_examples=40, deadline=None)
@given(pair_lists, st.fractions(-3, 3, max_denominator=1000), st.integers(0, 2 ** 32))
def test_shifting_b_shifts_gap_and_interval_exactly(pair, shift, seed):
    a = tuple(Fraction(x, 7) for x in pair[0])
    b = tuple(Fraction(x, 7) for x in pair[1])
    moved = tuple(x + shift for x in b)
    # 0/1 scores take a proportion's interval (Wilson, Clopper-Pearson at 0 or n), which no
    # shift carries to another column's: equivariance is a property of the bootstrap's
    assume(not set(b) <= {0, 1} and not set(moved) <= {0, 1})
    base = bed.analyze(bed.Scores(a, b), random.Random(seed), resamples=30,
                       confidence=bed.CONFIDENCE, permutations=20)
    after = bed.analyze(bed.Scores(a, moved), random.Random(seed), resamples=30,
                        confidence=bed.CONFIDENCE, permutations=20)
    assert after.gap == base.gap + shift
    assert (after.paired.lo, after.paired.hi) == (base.paired.lo + shift, base.paired.hi + shift)
    assert (after.ci_b.lo, after.ci_b.hi) == (base.ci_b.lo + shift, base.ci_b.hi + shift)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=40), st.integers(0, 2 ** 32))
def test_permutation_p_is_a_probability(diffs, seed):
    result = bed.sign_flip_test(random.Random(seed), diffs, 30)
    assert 0 < result.p <= 1


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=2, max_size=40), st.integers(0, 2 ** 32))
def test_identical_systems_give_a_zero_interval(column, seed):
    result = bed.analyze(bed.Scores(tuple(column), tuple(column)), random.Random(seed),
                         resamples=25, confidence=bed.CONFIDENCE)
    assert (result.paired.lo, result.paired.hi) == (0, 0) and result.p == 1.0


# --- malformed input: one line, exit 2, no traceback ---------------------------------------------

GOOD = "item,a,b\n1,1,0\n2,0,1\n3,1,1\n"
AB = ["--a-col", "a", "--b-col", "b"]
MALFORMED = [
    ("missing file", {}, ["--csv", "{d}/nope.csv"], "cannot read"),
    ("empty", {"x.csv": ""}, ["--csv", "{d}/x.csv"], "is empty"),
    ("header only", {"x.csv": "item,a,b\n"}, ["--csv", "{d}/x.csv", *AB],
     "has a header but no rows"),
    ("missing column", {"x.csv": GOOD}, ["--csv", "{d}/x.csv", "--a-col", "a", "--b-col", "c"],
     "no column 'c' (columns: item, a, b)"),
    ("missing id column", {"x.csv": GOOD},
     ["--csv", "{d}/x.csv", *AB, "--id-col", "qid"], "no column 'qid'"),
    ("text value", {"x.csv": "item,a,b\n1,1,0\n2,good,1\n"},
     ["--csv", "{d}/x.csv", *AB],
     "line 3, column a: 'good' is not a number"),
    ("nan", {"x.csv": "item,a,b\n1,1,0\n2,nan,1\n"},
     ["--csv", "{d}/x.csv", *AB], "line 3, column a: 'nan' is not a finite"),
    ("inf", {"x.csv": "item,a,b\n1,1,-inf\n2,0,1\n"},
     ["--csv", "{d}/x.csv", *AB], "'-inf' is not a finite number"),
    ("huge exponent", {"x.csv": "item,a,b\n1,1,1e99999\n2,0,1\n"},
     ["--csv", "{d}/x.csv", *AB], "'1e99999' is out of range"),
    ("empty cells", {"x.csv": "item,a,b\n1,,0\n2,0,1\n3,1,\n"},
     ["--csv", "{d}/x.csv", *AB], "2 row(s) with a missing score"),
    ("too few fields", {"x.csv": "item,a,b\n1,1,0\n2,1\n"},
     ["--csv", "{d}/x.csv", *AB], "line 3: 2 fields, expected 3"),
    ("too many fields", {"x.csv": "item,a,b\n1,1,0,0\n2,1,1\n"},
     ["--csv", "{d}/x.csv", *AB], "line 2: 4 fields, expected 3"),
    ("blank line", {"x.csv": "item,a,b\n1,1,0\n\n2,1,1\n"},
     ["--csv", "{d}/x.csv", *AB], "line 3: blank line"),
    ("not utf-8", {"x.csv": b"item,a,b\n1,1,0\n\xff,0,1\n"}, ["--csv", "{d}/x.csv"],
     "line 3: not UTF-8 text"),
    ("repeated ids", {"x.csv": "item,a,b\n7,1,0\n8,0,1\n7,1,1\n8,1,1\n"},
     ["--csv", "{d}/x.csv", *AB], "2 id(s) appear more than once (first: 7, 8)"),
    ("repeated header", {"x.csv": "item,a,a\n1,1,0\n"}, ["--csv", "{d}/x.csv", "--a-col", "a",
                                                        "--b-col", "a"], "a system is named twice"),
    ("ambiguous delimiter", {"x.csv": "item,a;b\n1,1;0\n"}, ["--csv", "{d}/x.csv"],
     "cannot tell the delimiter"),
    ("one column", {"x.csv": "item\n1\n"}, ["--csv", "{d}/x.csv"], "the header has one column"),
    ("jsonl bad json", {"x.jsonl": '{"a": 1, "b": 0}\n{"a": 1, "b":\n'},
     ["--csv", "{d}/x.jsonl", *AB], "line 2: not valid JSON"),
    ("jsonl not an object", {"x.jsonl": '[1, 0]\n'}, ["--csv", "{d}/x.jsonl"],
     "line 1: expected a JSON object"),
    ("jsonl NaN", {"x.jsonl": '{"a": NaN, "b": 0}\n{"a": 1, "b": 1}\n'},
     ["--csv", "{d}/x.jsonl", *AB], "line 1, key a: NaN is not a finite number"),
    ("jsonl text score", {"x.jsonl": '{"a": "great", "b": 0}\n{"a": 1, "b": 1}\n'},
     ["--csv", "{d}/x.jsonl", *AB], "line 1, key a: 'great' is not a number"),
    ("jsonl list score", {"x.jsonl": '{"a": [1], "b": 0}\n{"a": 1, "b": 1}\n'},
     ["--csv", "{d}/x.jsonl", *AB], "line 1, key a: '[1]' is not a number"),
    ("jsonl blank line", {"x.jsonl": '{"a": 1, "b": 0}\n\n{"a": 1, "b": 1}\n'},
     ["--csv", "{d}/x.jsonl", *AB], "line 2: blank line"),
    ("jsonl missing nested key", {"x.jsonl": '{"m": {"f1": 1}, "b": 0}\n{"m": {}, "b": 1}\n'},
     ["--csv", "{d}/x.jsonl", "--a-col", "m.f1", "--b-col", "b"], "1 row(s) with a missing score"),
    ("json lines found by content, wrong keys", {"x.txt": '{"a": 1, "b": 0}\n'},
     ["--csv", "{d}/x.txt"], "no key 'system_a_correct' (the first record has: a, b)"),
    ("one item", {"x.csv": "item,a,b\n1,1,0\n"}, ["--csv", "{d}/x.csv", *AB],
     "need at least 2 items"),
    ("run item missing", {"b.csv": "id,s\n1,1\n2,0\n3,1\n", "c.csv": "id,s\n1,1\n2,0\n"},
     ["--baseline", "{d}/b.csv", "--candidate", "{d}/c.csv", "--score-col", "s", "--id-col", "id"],
     "1 item(s) are not in every run (first: 3 only in b)"),
    ("run repeated id", {"b.csv": "id,s\n1,1\n2,0\n", "c.csv": "id,s\n1,1\n1,0\n2,1\n"},
     ["--baseline", "{d}/b.csv", "--candidate", "{d}/c.csv", "--score-col", "s", "--id-col", "id"],
     "c.csv: 1 id(s) appear more than once"),
    ("run without id column", {"b.csv": "s,t\n1,0\n0,1\n", "c.csv": "s,t\n1,0\n0,1\n"},
     ["--baseline", "{d}/b.csv", "--candidate", "{d}/c.csv", "--score-col", "s"],
     "b.csv: no column 'item' (columns: s, t)"),
    ("candidate without baseline", {"c.csv": GOOD}, ["--candidate", "{d}/c.csv"],
     "--candidate does not apply to simulate"),
    ("baseline without score column", {"b.csv": GOOD, "c.csv": GOOD},
     ["--baseline", "{d}/b.csv", "--candidate", "{d}/c.csv"], "one file per system needs --score-col"),
    ("baseline without candidate", {"b.csv": GOOD}, ["--baseline", "{d}/b.csv", "--score-col", "a"],
     "needs at least one --candidate"),
    ("csv and baseline", {"b.csv": GOOD}, ["--csv", "{d}/b.csv", "--baseline", "{d}/b.csv"],
     "not both"),
    ("one system", {"x.csv": GOOD}, ["--csv", "{d}/x.csv", "--systems", "a"],
     "--systems needs a baseline and at least one candidate"),
    ("systems with a-col", {"x.csv": GOOD},
     ["--csv", "{d}/x.csv", "--systems", "a,b", "--a-col", "a"], "--systems replaces --a-col"),
    ("zero permutations", {"x.csv": GOOD}, ["--csv", "{d}/x.csv", "--permutations", "0"],
     "--permutations must be at least 1"),
    ("json and markdown", {"x.csv": GOOD}, ["--csv", "{d}/x.csv", "--json", "--output", "markdown"],
     "conflicts with --output markdown"),
    ("plot of a family", {"x.csv": GOOD}, ["--csv", "{d}/x.csv", "--systems", "a,b,item",
                                           "--plot", "{d}/p.svg"], "--plot draws one comparison"),
    ("column flags without a file", {}, ["--a-col", "a"], "--a-col does not apply to simulate"),
]


@pytest.mark.parametrize("name,files,argv,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_is_refused_in_one_line(tmp_path, name, files, argv, message):
    for filename, content in files.items():
        target = tmp_path / filename
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8", newline="")
    args = [arg.replace("{d}", str(tmp_path)) for arg in argv]
    assert_one_line_error(*cli(*args), message)
    assert not (tmp_path / "p.svg").exists()


def test_malformed_input_through_the_real_entry_point_has_no_traceback(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("item,a,b\n1,1,0\n2,nan,1\n")
    proc = subprocess.run([sys.executable, "bootstrap_eval_deltas.py", "--csv", str(path),
                           "--a-col", "a", "--b-col", "b"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
