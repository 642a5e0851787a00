"""Shared helpers for the tests: run the command line in-process and capture it, and the
files, tables and constants that tests of several layers use."""

import contextlib
import io
import json
import math
import os
import random
import zipfile
from fractions import Fraction
from statistics import NormalDist

import bootstrap_eval_deltas as bed

import make_examples

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bootstrap_eval_deltas.py")
SHIPPED_CSV = os.path.join(ROOT, "datasets", "bootstrap-eval-deltas.csv")

ARTICLE_LINES = [
    "n=500, true accuracies A=0.72 B=0.76, true gap=+4.0 pts",
    "observed: A=0.712 [0.672, 0.750]   B=0.748 [0.712, 0.786]",
    "observed gap: +3.6 pts",
    "  paired bootstrap 95% CI:   [-1.4, +8.4] pts",
    "  unpaired bootstrap 95% CI: [-1.8, +9.0] pts",
    "  discordant pairs: B-only correct=85, A-only correct=67; McNemar exact p=0.1677",
]


def cli(*argv, stdin=None):
    """Run main(argv); return (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = bed.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def cli_help(*command):
    """Run main([*command, "--help"]) (the top help with no command); return (exit status,
    the help printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            status = bed.main([*command, "--help"])
        except SystemExit as stop:
            status = stop.code
    return status, out.getvalue()


def cli_json(*argv, quiet=False):
    """Run main(argv) with --json; assert it exits 0 (with *quiet*, also that it writes
    nothing on stderr) and return the report, parsed."""
    status, out, err = cli(*argv, "--json")
    assert status == 0, err
    if quiet:
        assert err == ""
    return json.loads(out)


def assert_one_line_error(status, out, err, fragment=""):
    """A refusal: exit 2, nothing on stdout, exactly one line on stderr, no traceback."""
    assert status == 2, (status, out, err)
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("bootstrap_eval_deltas: error: "), err
    assert "Traceback" not in err
    assert fragment in err, (fragment, err)


def write(path, content):
    """Write *content* (text as UTF-8 with no newline translation, or bytes) at *path*,
    making its folder; return the path as text."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    if isinstance(content, bytes):
        with open(path, "wb") as handle:
            handle.write(content)
    else:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
    return str(path)


C95 = Fraction("0.95")


def scores_of_cells(cells):
    """Per-item 0/1 scores (a public ``Scores``) with a ``Cells``' counts, items grouped by
    cell: both right, A only, B only, neither."""
    both, a_only, b_only, neither = cells.as_tuple()
    rows = [(1, 1)] * both + [(1, 0)] * a_only + [(0, 1)] * b_only + [(0, 0)] * neither
    return bed.Scores(tuple(a for a, _ in rows), tuple(b for _, b in rows))


def clopper_pearson_half_width(successes, n, confidence):
    """Half the width of the exact (Clopper-Pearson) interval, as plan_accuracy measures it."""
    lower, upper = bed.clopper_pearson(successes, n, confidence)
    return (upper - lower) / 2


def table_file(tmp_path, cells, name="t.csv"):
    """A 0/1 CSV with the given (both, a_only, b_only, neither) counts."""
    both, a_only, b_only, neither = cells
    rows = [(1, 1)] * both + [(1, 0)] * a_only + [(0, 1)] * b_only + [(0, 0)] * neither
    path = tmp_path / name
    path.write_text("item,a,b\n" + "".join(f"{i},{a},{b}\n" for i, (a, b) in enumerate(rows)))
    return str(path)


SHIPPED_ROWS = open(SHIPPED_CSV).read().splitlines()[1:]


def shipped_records():
    for line in SHIPPED_ROWS:
        item, a, b = line.split(",")
        yield int(item), int(a), int(b)


AB = ["--a-col", "a", "--b-col", "b"]


EXAMPLES = os.path.join(ROOT, "datasets", "examples")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def quick_body(*argv):
    return cli_json(*argv, "--resamples", "300", "--calibration", "0")


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


def multipletests(pvalues, method):
    """statsmodels.stats.multitest.multipletests(p, method)[1], as it computes them."""
    import numpy as np  # only the tests that use numpy call this

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


FAST = ["--resamples", "1000", "--calibration", "0"]   # places a 97.5% end


def clear_gap_csv(tmp_path, n=400, name="clear.csv"):
    """0/1 items, B right on every item A is right on and on some more: a clear gap."""
    rng = random.Random(7)
    rows = ["item,a,b"]
    for i in range(n):
        u = rng.random()
        rows.append(f"{i},{int(u < 0.6)},{int(u < 0.7)}")
    return write(tmp_path / name, "\n".join(rows) + "\n")


def zip_bytes(members):
    """A zip archive's bytes holding *members* (name: text or bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def xlsx_bytes(rows, drop=(), **parts):
    """A minimal Excel workbook's bytes, built by the code that writes the shipped example
    (tests/make_examples.py), with parts replaced or dropped
    (``**{"xl/workbook.xml": ...}``)."""
    members = make_examples.xlsx_parts(rows)
    for name in drop:
        del members[name]
    members.update(parts)
    return zip_bytes(members)


def inspect_folder(folder, tasks, model=None):
    """A folder of Inspect JSON logs, one per task: *tasks* maps a task to its epochs (runs),
    each a list of sample values ("C", "I" or a number; sample ids from 1); the model is
    the folder's name unless given.  Returns the folder, as text."""
    folder.mkdir(parents=True)
    for task, epochs in tasks.items():
        samples = [{"id": i, "epoch": e, "scores": {"match": {"value": v}}}
                   for e, values in enumerate(epochs, start=1)
                   for i, v in enumerate(values, start=1)]
        (folder / f"{task}.json").write_text(json.dumps(
            {"version": 2, "status": "success",
             "eval": {"task": task, "model": folder.name if model is None else model},
             "samples": samples}, indent=2))
    return str(folder)


def wilson(hits, n, z=1.959963984540054):
    """Wilson's score interval, from its closed form."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return centre - half, centre + half
