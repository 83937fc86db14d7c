#!/usr/bin/env python3
"""Runs every command of the README's ```console blocks as written, in the manner of SimGrid's tesh.

In a ```console block, lines starting with "$ " are commands, the lines after a command its
sample output. The blocks run in the README's order in one scratch directory (a later block uses
what an earlier one wrote, as a reader following the README would), where `build/release`
points at the build tree, `examples` and `scripts` at the repository's and `commgauge` is on PATH.
Each command runs verbatim (through sh) and must exit 0. (The ```sh blocks are the set-up
commands, which CI itself runs, and the install, which tests/install runs.) Its output must show every sample line in the same order: measured numbers
differ run to run, so lines are compared by shape (every number replaced by "#", runs of
blanks by one, a table's rule of dashes by any rule); a line "..." in the sample stands for output left out.

usage: readme_commands.py README BUILD_DIR
"""

import os
import re
import signal
import subprocess
import sys
import tempfile

NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def shape(line):
    # A table's rule is as wide as its widest cell, and cells hold measured numbers.
    if line.strip() and set(line.strip()) == {"-"}:
        return "---"
    return " ".join(NUMBER.sub("#", line).split())


def console_steps(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    if not re.search(r"^## Quick start\n.*?^```console\n", text, re.S | re.M):
        sys.exit(f"{readme}: no '## Quick start' section with a ```console block")
    steps = []
    for block in re.finditer(r"^```console\n(.*?)^```", text, re.S | re.M):
        line_no = text.count("\n", 0, block.start()) + 2
        first = True
        for offset, line in enumerate(block.group(1).splitlines()):
            if line.startswith("$ "):
                steps.append((line[2:], [], line_no + offset))
            elif first:
                sys.exit(f"{readme}:{line_no + offset}: a ```console block must start with a command")
            elif line.strip() and line.strip() != "...":
                steps[-1][1].append(line)
            first = False
    return steps


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    readme, build = sys.argv[1], os.path.abspath(sys.argv[2])
    steps = console_steps(readme)
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "src", "cli") + os.pathsep + env["PATH"]
    # The README's commands are a user's; as root (CI), Open MPI wants to be told it is meant.
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="commgauge-readme-") as scratch:
        os.makedirs(os.path.join(scratch, "build"))
        os.symlink(build, os.path.join(scratch, "build", "release"))
        for name in ("examples", "scripts"):
            os.symlink(os.path.join(os.path.dirname(os.path.abspath(readme)), name),
                       os.path.join(scratch, name))
        for command, sample, line_no in steps:
            print(f"$ {command}    (README.md:{line_no})", flush=True)
            # A session of its own, so that a command over its time is ended with everything it
            # started (mpirun and its ranks), not only the shell.
            child = subprocess.Popen(["sh", "-c", command], cwd=scratch, env=env, text=True,
                                     errors="replace", stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
            try:
                out, err = child.communicate(timeout=900)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                out, err = child.communicate()
                print(out, end="", flush=True)
                print(err, end="", file=sys.stderr)
                print(f"FAILED (README.md:{line_no}): still running after 900 s, ended", file=sys.stderr)
                failures += 1
                break
            print(out, end="", flush=True)
            if child.returncode != 0:
                print(err, end="", file=sys.stderr)
                print(f"FAILED (README.md:{line_no}): exit status {child.returncode}", file=sys.stderr)
                failures += 1
                break
            shapes = [shape(line) for line in out.splitlines()]
            at = 0
            for line in sample:
                want = shape(line)
                while at < len(shapes) and shapes[at] != want:
                    at += 1
                if at == len(shapes):
                    print(f"FAILED (README.md:{line_no}): the output has no line shaped like the "
                          f"README's\n  {line}\n"
                          f"(shape: {want}) after the sample lines before it", file=sys.stderr)
                    failures += 1
                    break
                at += 1
    if failures:
        sys.exit(1)
    print(f"the README's {len(steps)} commands ran as it shows them")


if __name__ == "__main__":
    main()
