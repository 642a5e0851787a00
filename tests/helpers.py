"""Shared helpers for the tests: run the command line in-process and capture it."""

import contextlib
import io
import json
import os

import bootstrap_eval_deltas as bed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
