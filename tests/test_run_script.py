"""tests/run.py, the README's test command: its refusals (the happy path is what CI runs)."""

import os
import subprocess
import sys

import pytest

from helpers import ROOT

RUN = os.path.join(ROOT, "tests", "run.py")
OLD_PYTHON = os.path.expanduser("~/.pyenv/versions/3.9.18/bin/python")


def run_script(python, env=None):
    return subprocess.run([python, RUN, "--version"], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=120)


@pytest.mark.skipif(not os.path.exists(OLD_PYTHON), reason="no Python 3.9 on this machine")
def test_python_older_than_3_10_gets_one_line_and_status_2():
    done = run_script(OLD_PYTHON)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "tests/run.py: needs Python 3.10 or newer; this is 3.9.18\n"


def test_a_folder_that_is_not_a_virtual_environment_is_never_removed(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me\n")
    done = run_script(sys.executable, {"BED_VENV": str(folder)})
    assert done.returncode == 2
    assert done.stderr.strip().endswith("is not a virtual environment; move it or set BED_VENV")
    assert done.stderr.count("\n") == 1
    assert (folder / "notes.txt").read_text() == "keep me\n"
