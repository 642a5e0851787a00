"""The command line: flags into the entry points' keywords, and what it refuses itself."""

import pytest

from helpers import SHIPPED_CSV, assert_one_line_error, cli


@pytest.mark.parametrize("argv, fragment", [
    (["compare", SHIPPED_CSV, "--plot", "a.svg", "--plot", "b.svg"],
     "--plot is given twice (also as --plot); give it once"),
    (["compare", SHIPPED_CSV, "--seed=1", "--seed", "2"], "--seed is given twice"),
    (["compare", SHIPPED_CSV, "--score-col", "x", "--metric", "y"],
     "--metric is given twice (also as --score-col)"),
    (["--replays", "0", "--replays", "0"], "--replays is given twice"),
])
def test_a_flag_given_twice_is_refused_not_overwritten(argv, fragment):
    assert_one_line_error(*cli(*argv), fragment)


def test_a_flag_that_collects_a_list_may_repeat(tmp_path):
    runs = []
    for name in ("base", "one", "two"):
        path = tmp_path / f"{name}.csv"
        path.write_text("item,score\n" + "".join(f"{i},{(i * len(name)) % 3 % 2}\n"
                                                  for i in range(1, 41)))
        runs.append(str(path))
    status, out, err = cli("compare", "--baseline", runs[0], "--candidate", runs[1],
                           "--candidate", runs[2], "--score-col", "score", "--id-col", "item")
    assert status == 0, err
    assert "one" in out and "two" in out


def test_a_switch_given_twice_is_the_switch():
    assert cli("--replays", "0", "--json", "--json")[0] == 0
