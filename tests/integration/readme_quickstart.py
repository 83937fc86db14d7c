#!/usr/bin/env python3
"""Runs the README's quick start as written, in the manner of SimGrid's tesh.

The section "## Quick start" holds one ```console block: lines starting with "$ " are commands,
the lines after a command its sample output. Each command runs verbatim (through sh, in a
scratch directory where `build/release` points at the build tree and `commgauge` is on PATH)
and must exit 0. Its output must show every sample line in the same order: measured numbers
differ run to run, so lines are compared by shape (every number replaced by "#", runs of
blanks by one, a table's rule of dashes by any rule); a line "..." in the sample stands for output left out.

usage: readme_quickstart.py README BUILD_DIR
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


def quick_start_block(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Quick start\n(.*?)^## ", text, re.S | re.M)
    if not section:
        sys.exit(f"{readme}: no '## Quick start' section")
    block = re.search(r"^```console\n(.*?)^```", section.group(1), re.S | re.M)
    if not block:
        sys.exit(f"{readme}: the quick start has no ```console block")
    steps = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif not steps:
            sys.exit(f"{readme}: the quick start's block must start with a command")
        elif line.strip() and line.strip() != "...":
            steps[-1][1].append(line)
    return steps


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    readme, build = sys.argv[1], os.path.abspath(sys.argv[2])
    steps = quick_start_block(readme)
    if not steps:
        sys.exit(f"{readme}: the quick start has no command")
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "src", "cli") + os.pathsep + env["PATH"]
    # The README's commands are a user's; as root (CI), Open MPI wants to be told it is meant.
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="commgauge-quickstart-") as scratch:
        os.makedirs(os.path.join(scratch, "build"))
        os.symlink(build, os.path.join(scratch, "build", "release"))
        for command, sample in steps:
            print(f"$ {command}", flush=True)
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
                print("FAILED: still running after 900 s, ended", file=sys.stderr)
                failures += 1
                break
            print(out, end="", flush=True)
            if child.returncode != 0:
                print(err, end="", file=sys.stderr)
                print(f"FAILED: exit status {child.returncode}", file=sys.stderr)
                failures += 1
                break
            shapes = [shape(line) for line in out.splitlines()]
            at = 0
            for line in sample:
                want = shape(line)
                while at < len(shapes) and shapes[at] != want:
                    at += 1
                if at == len(shapes):
                    print(f"FAILED: the output has no line shaped like the README's\n  {line}\n"
                          f"(shape: {want}) after the sample lines before it", file=sys.stderr)
                    failures += 1
                    break
                at += 1
    if failures:
        sys.exit(1)
    print(f"the quick start's {len(steps)} commands ran as the README shows them")


if __name__ == "__main__":
    main()
