"""Every command in the README prints what the README shows (tests/readme_examples.py)."""

import pytest

import readme_examples

with open(readme_examples.README, encoding="utf-8") as _f:
    EXAMPLES = readme_examples.examples(_f.read())


@pytest.fixture(scope="module")
def scratch():
    with readme_examples.Scratch() as folder:
        yield folder


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 20


@pytest.mark.slow
def test_every_readme_command_prints_what_the_readme_shows(scratch):
    """One test, the commands in README order (``echo $?`` reads the previous status)."""
    differs = []
    for index, command, expected, shortened in EXAMPLES:
        actual = scratch.run(command)
        if not readme_examples.compare(expected, shortened, actual):
            differs.append((index + 1, command, expected, actual[:len(expected) + 3]))
    assert not differs, "\n\n".join(
        f"README line {line}: $ {command}\nexpected:\n" + "\n".join(exp) + "\nactual:\n"
        + "\n".join(act) for line, command, exp, act in differs[:3])
