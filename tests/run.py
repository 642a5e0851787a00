#!/usr/bin/env python3
"""The test command: ``python3 tests/run.py [--coverage] [pytest arguments]``.

It needs nothing but the ``python3`` that runs it (3.10 or newer), also one that refuses
``pip install`` outside a virtual environment (PEP 668, as Debian's does):

1. makes a virtual environment in ``.venv`` beside this repository, or reuses the one there
   when it was made by the same Python (``BED_VENV=DIR`` puts it elsewhere). If the Python
   has no ``ensurepip`` (Debian without ``python3-venv``), the environment is made without pip
   and pip is installed into it by the Python's own pip or, failing that, from PyPI's wheel,
   checked against the SHA-256 that PyPI lists;
2. installs the project with its ``test`` extra into it (again only when ``pyproject.toml``
   changed since the last install);
3. runs pytest there with the arguments given, on every core (pytest-xdist's ``-n auto``,
   unless the arguments choose ``-n`` themselves). With ``--coverage`` the run is measured by
   coverage.py, subprocesses included, and fails when the module's line or branch coverage is
   below ``LINE_FLOOR`` or ``BRANCH_FLOOR``.

Exit status: pytest's (or coverage's); 2 with one line on stderr when the environment cannot
be made.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAMP = "bootstrap-eval-deltas-installed"
PIP_INDEX = "https://pypi.org/pypi/pip/json"
LINE_FLOOR, BRANCH_FLOOR = 99, 97    # percent of the module's lines and branches run by tests


def fail(message: str) -> "NoReturn":
    print(f"tests/run.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def venv_python(venv: str) -> str:
    return os.path.join(venv, "Scripts" if os.name == "nt" else "bin",
                        "python.exe" if os.name == "nt" else "python")


def same_python(venv: str) -> bool:
    """True when *venv* is a virtual environment made by this very Python."""
    python = venv_python(venv)
    if not os.path.exists(python):
        return False
    probe = subprocess.run([python, "-c", "import sys; print(sys.version)"],
                           capture_output=True, text=True)
    return probe.returncode == 0 and probe.stdout.strip() == sys.version.strip()


def make_venv(venv: str) -> None:
    """A fresh environment in *venv*; an existing folder is replaced only if it is one."""
    import venv as venv_module

    if os.path.lexists(venv):
        if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            fail(f"{venv} exists and is not a virtual environment; move it or set BED_VENV")
        shutil.rmtree(venv)
    print(f"tests/run.py: making a virtual environment in {venv}", flush=True)
    try:
        venv_module.EnvBuilder(with_pip=True).create(venv)
        return
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"tests/run.py: no pip from ensurepip ({error}); installing pip another way",
              flush=True)
    venv_module.EnvBuilder(with_pip=False, clear=True).create(venv)
    bootstrap_pip(venv_python(venv))


def bootstrap_pip(python: str) -> None:
    """pip into a pip-less environment: by this Python's pip, else from PyPI's wheel."""
    own_pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if own_pip.returncode == 0 and subprocess.run(
            [sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
             "--disable-pip-version-check", "pip"]).returncode == 0:
        return
    with urllib.request.urlopen(PIP_INDEX, timeout=60) as response:
        release = json.load(response)
    wheel = next(f for f in release["urls"] if f["filename"].endswith("-py3-none-any.whl"))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, wheel["filename"])
        with urllib.request.urlopen(wheel["url"], timeout=300) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != wheel["digests"]["sha256"]:
            fail(f"{wheel['filename']} from PyPI does not match its listed SHA-256")
        with open(path, "wb") as out:
            out.write(data)
        # A pip wheel runs from the zip: it installs itself.
        run([python, os.path.join(path, "pip"), "install", "--quiet", "--no-index", path],
            "installing pip from its wheel")


def run(command: list, what: str, env=None) -> None:
    if subprocess.run(command, env=env).returncode != 0:
        fail(f"{what} failed: {' '.join(command)}")


def install(python: str, venv: str) -> None:
    """The project and its test extra, unless this pyproject.toml is what was installed."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    stamp = os.path.join(venv, STAMP)
    try:
        with open(stamp) as f:
            if f.read().strip() == digest:
                return
    except OSError:
        pass
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-e", f"{ROOT}[test]"], "installing the project's test extra")
    with open(stamp, "w") as f:
        f.write(digest + "\n")


def main(argv: list) -> int:
    if sys.version_info < (3, 10):
        fail(f"needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    coverage = "--coverage" in argv[:1]
    pytest_args = argv[1:] if coverage else argv
    venv = os.path.abspath(os.environ.get("BED_VENV") or os.path.join(ROOT, ".venv"))
    if not same_python(venv):
        make_venv(venv)
    python = venv_python(venv)
    install(python, venv)
    os.chdir(ROOT)
    if not any(arg in ("-n", "--numprocesses") or arg.startswith(("-n", "--numprocesses="))
               or arg == "no:xdist" for arg in pytest_args):
        pytest_args = ["-n", "auto", *pytest_args]
    if not coverage:
        return subprocess.run([python, "-m", "pytest", *pytest_args]).returncode
    return measured(python, pytest_args)


def measured(python: str, pytest_args: list) -> int:
    """pytest under coverage.py; then the module's line and branch coverage against floors."""
    env = dict(os.environ, BED_ROOT=ROOT,
               COVERAGE_RCFILE=os.path.join(ROOT, "pyproject.toml"))
    coverage = [python, "-m", "coverage"]
    subprocess.run(coverage + ["erase"], env=env)
    status = subprocess.run(coverage + ["run", "-m", "pytest", *pytest_args], env=env).returncode
    subprocess.run(coverage + ["combine", "--quiet"], env=env)
    subprocess.run(coverage + ["report"], env=env)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "coverage.json")
        run(coverage + ["json", "--quiet", "-o", path], "coverage json", env)
        with open(path) as f:
            totals = json.load(f)["totals"]
    lines = 100 * totals["covered_lines"] / max(1, totals["num_statements"])
    branches = 100 * totals["covered_branches"] / max(1, totals["num_branches"])
    below = lines < LINE_FLOOR or branches < BRANCH_FLOOR
    print(f"tests/run.py: coverage of bootstrap_eval_deltas.py: lines {lines:.1f}% "
          f"(floor {LINE_FLOOR}%), branches {branches:.1f}% (floor {BRANCH_FLOOR}%)"
          + (" -- BELOW THE FLOOR" if below else ""))
    return status or (1 if below else 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
