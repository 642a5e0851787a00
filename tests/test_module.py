"""The module itself: standard library only, doctests, public names."""

import ast
import doctest
import functools
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


def cached_property_functions():
    """The functions under every functools.cached_property of the module's classes: doctest
    finds them only from Python 3.13, so they are collected here by hand."""
    for cls in vars(bed).values():
        if isinstance(cls, type) and cls.__module__ == bed.__name__:
            for name, value in vars(cls).items():
                if isinstance(value, functools.cached_property):
                    yield f"{cls.__name__}.{name}", value.func


def test_doctests_in_cached_properties_run_on_every_python():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    tried = 0
    for name, func in cached_property_functions():
        for test in finder.find(func, name, globs=vars(bed)):
            result = runner.run(test)
            tried += result.attempted
            assert result.failed == 0, name
    assert tried >= 1


def test_all_names_exist():
    assert all(hasattr(bed, name) for name in bed.__all__)


def test_the_docstrings_map_is_all_and_every_public_function_takes_and_returns_public_types():
    import re
    mapped = set(re.findall(r"^``(\w+)", bed.__doc__, re.M)) | set(
        re.findall(r"^``\w+[^`]*``, ``(\w+)``", bed.__doc__, re.M))
    assert mapped == set(bed.__all__)
    public = {getattr(bed, name) for name in bed.__all__}
    assert {bed.Result, bed.Table, bed.Interval, bed.Scores, bed.Settings, bed.Copula,
            bed.McNemar, bed.Leaderboard, bed.Coverage, bed.Analysis, bed.Cells} <= public
