"""Every command in the README prints what the README shows (tests/readme_examples.py): one
test per fenced block, its commands in order in a scratch folder of their own."""

import pytest

import readme_examples

with open(readme_examples.README, encoding="utf-8") as _f:
    BLOCKS = readme_examples.blocks(_f.read())


def test_the_readme_has_examples():
    assert sum(len(block) for _, block in BLOCKS) >= 20


@pytest.mark.parametrize("block", [
    pytest.param(block, id=f"line-{block[0][0] + 1}", marks=[pytest.mark.once] if once else [])
    for once, block in BLOCKS])
def test_the_block_prints_what_the_readme_shows(block):
    """``echo $?`` reads the previous command's status."""
    differs = []
    with readme_examples.Scratch() as scratch:
        for index, command, expected, shortened in block:
            actual = scratch.run(command)
            if not readme_examples.compare(expected, shortened, actual):
                differs.append((index + 1, command, expected, actual[:len(expected) + 3]))
    assert not differs, "\n\n".join(
        f"README line {line}: $ {command}\nexpected:\n" + "\n".join(exp) + "\nactual:\n"
        + "\n".join(act) for line, command, exp, act in differs[:3])
