"""Every command in the README prints what the README shows (tests/readme_examples.py): one
test per fenced block, its commands in order in a scratch folder of their own."""

import pytest

import readme_examples

with open(readme_examples.README, encoding="utf-8") as _f:
    BLOCKS = readme_examples.blocks(_f.read())


def test_the_readme_has_examples():
    assert sum(len(block) for _, block in BLOCKS) >= 20


@pytest.mark.parametrize("block", [
    pytest.param(block, id=f"line-{block[0][0] + 1}",
                 marks=[pytest.mark.simulation] if once else [])
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


def test_the_python_session_prints_what_the_readme_shows(monkeypatch):
    """The ``>>>`` session of "From Python", run by doctest from the repository's root (its
    paths are relative to it)."""
    import doctest
    monkeypatch.chdir(readme_examples.ROOT)
    failures, tried = doctest.testfile(readme_examples.README, module_relative=False,
                                       optionflags=doctest.ELLIPSIS)
    assert tried >= 6 and failures == 0


def test_the_pytest_example_passes_and_can_fail():
    """The README's regression test, run as pytest would run it; and with a candidate that is
    worse, it fails with the report."""
    import bootstrap_eval_deltas as bed
    with open(readme_examples.README, encoding="utf-8") as f:
        text = f.read()
    start = text.index("```python\nimport bootstrap_eval_deltas as bed\n") + len("```python\n")
    source = text[start:text.index("```", start)]
    namespace = {}
    exec(compile(source, "README.md", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert len(tests) == 1
    tests[0]()
    worse = source.replace("candidate = [1, 0, 1, 1, 1, 1, 1, 1]", "candidate = [0, 0, 1, 1, 0, 1, 1, 1]")
    assert worse != source
    exec(compile(worse, "README.md", "exec"), namespace)
    with pytest.raises(AssertionError, match="verdict: worse"):
        namespace[tests[0].__name__]()
    assert bed.ToolError
