#!/usr/bin/env python3
"""The README's examples, run: every ``$ command`` line in a fenced block of README.md runs in a
scratch folder (the module copied in, ``datasets/`` linked), stdout and stderr together, and
its output is compared with the lines under it up to the next ``$``. A block whose output ends
with a line ``...`` is compared up to that line. ``$ echo $?`` checks the exit status of the
command before it.

Each fenced block is one example, its commands run in order in one scratch folder (a later
command may read what an earlier one wrote); blocks are independent of each other.  A block
whose opening fence is preceded by the line ``<!-- once -->`` is a long simulation that
``tests/test_readme.py`` marks ``simulation`` (CI runs it under one Python, unmeasured).

``python3 tests/readme_examples.py --update`` rewrites the outputs in README.md from real runs
(keeping each shortened output's length); ``tests/test_readme.py`` checks them.
"""

import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
ELLIPSIS = "..."


ONCE = "<!-- once -->"


def blocks(text: str) -> list:
    """The fenced blocks of *text* that hold commands: ``(once, examples)`` each, where an
    example is ``(line index of the command, command, expected output lines, shortened)``."""
    lines = text.split("\n")
    found, fenced, current = [], False, None
    for index, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            current = None
            if fenced:
                found.append((index > 0 and lines[index - 1].strip() == ONCE, []))
            continue
        if not fenced:
            continue
        if line.startswith("$ "):
            current = [index, line[2:], [], False]
            found[-1][1].append(current)
        elif current is not None:
            if line == ELLIPSIS:
                current[3] = True
            elif not current[3]:
                current[2].append(line)
    return [(once, [tuple(example) for example in block]) for once, block in found if block]


def examples(text: str) -> list:
    """Every example of every block, in README order."""
    return [example for _, block in blocks(text) for example in block]


class Scratch:
    """A scratch folder holding the module and a link to ``datasets/``, with ``python3`` on
    PATH being the interpreter that runs the tests."""

    def __enter__(self):
        self.folder = tempfile.mkdtemp(prefix="readme-")
        shutil.copy(os.path.join(ROOT, "bootstrap_eval_deltas.py"), self.folder)
        os.symlink(os.path.join(ROOT, "datasets"), os.path.join(self.folder, "datasets"))
        bin_dir = os.path.join(self.folder, ".bin")
        os.mkdir(bin_dir)
        for name in ("python3", "python"):
            # a script, not a link: a link would hide the virtual environment (Python finds
            # its pyvenv.cfg from the path it was started by), and with it coverage.py
            shim = os.path.join(bin_dir, name)
            with open(shim, "w") as f:
                f.write(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
            os.chmod(shim, 0o755)
        # Measured by coverage.py like every other subprocess the tests start.
        env = dict(os.environ)
        self.env = dict(env, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
                        COLUMNS="100", SOURCE_DATE_EPOCH="1764400000")
        self.status = None
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, command: str) -> list:
        """The output lines of *command* (``echo $?`` answers the previous command's status)."""
        if command.strip() == "echo $?":
            return [str(self.status)]
        done = subprocess.run(["bash", "-c", command + " 2>&1"], cwd=self.folder, env=self.env,
                              capture_output=True, text=True)
        self.status = done.returncode
        output = done.stdout
        return output[:-1].split("\n") if output.endswith("\n") else output.split("\n")


def histogram_start(lines: list) -> int:
    """Where a report's histogram begins (a new shortened example keeps what is above it)."""
    for index, line in enumerate(lines):
        if " over " in line and "resamples (bins from" in line:
            return index
    return len(lines)


def compare(expected: list, shortened: bool, actual: list) -> bool:
    return actual[:len(expected)] == expected if shortened else actual == expected


def main(argv: list) -> int:
    with open(README, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    found = examples(text)
    outputs = []
    for _, block in blocks(text):
        with Scratch() as scratch:
            for index, command, expected, shortened in block:
                print(f"$ {command}", file=sys.stderr, flush=True)
                outputs.append(scratch.run(command))
    if "--update" not in argv:
        bad = [(c, e, a) for (_, c, e, s), a in zip(found, outputs) if not compare(e, s, a)]
        for command, expected, actual in bad:
            print(f"differs: $ {command}")
        return 1 if bad else 0
    # Rewrite from the last example up, so earlier line numbers stay valid.
    for (index, command, expected, shortened), actual in reversed(list(zip(found, outputs))):
        start = index + 1
        end = start
        while end < len(lines) and not lines[end].startswith(("$ ", "```")):
            end += 1
        keep = actual[:len(expected) or histogram_start(actual)] + [ELLIPSIS] if shortened \
            else actual
        lines[start:end] = keep
    with open(README + ".part", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(README + ".part", README)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
