"""The module itself: standard library only, doctests, public names."""

import ast
import doctest
import sys

import bootstrap_eval_deltas as bed


def test_standard_library_only():
    tree = ast.parse(open(bed.__file__, encoding="utf-8").read())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    outside = sorted(m for m in modules if m not in sys.stdlib_module_names and m != "__future__")
    assert outside == []


def test_doctests_pass():
    failures, tried = doctest.testmod(bed)
    assert tried > 10 and failures == 0


def test_all_names_exist():
    assert all(hasattr(bed, name) for name in bed.__all__)
