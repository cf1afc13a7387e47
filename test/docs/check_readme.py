#!/usr/bin/env python3
"""The `idxmap` commands in README.md's code blocks exist as written.

README's blocks hold synopses (`idxmap simplify FILE [--stats] ...`), and
commands that need a GPU (`idxmap run ... --bench`), not commands to run on
the repository's files. So each line that invokes idxmap is checked against
the tool itself: `idxmap COMMAND --help` exits 0 and lists every `--option`
the line names. A command or option renamed without updating README fails.
Usage: check_readme.py IDXMAP README.md
"""
import re
import subprocess
import sys


def code_lines(path):
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                inside = not inside
                continue
            if inside:
                yield number, line.rstrip("\n")


def main():
    idxmap, readme = sys.argv[1], sys.argv[2]
    helps = {}
    failures = 0
    checked = 0
    for number, line in code_lines(readme):
        # `idxmap CMD ...` or `PATH/idxmap CMD ...`, before any `#` comment.
        text = line.split(" #", 1)[0]
        m = re.match(r"^\s*(?:\$ )?(?:\S*/)?idxmap\s+([a-z][a-z-]*)(.*)$", text)
        if not m:
            continue
        command, rest = m.group(1), m.group(2)
        if command not in helps:
            p = subprocess.run([idxmap, command, "--help"],
                               capture_output=True, text=True)
            helps[command] = p.stdout if p.returncode == 0 else None
        help_text = helps[command]
        if help_text is None:
            print("README.md:%d: `idxmap %s --help` failed" % (number, command))
            failures += 1
            continue
        for option in re.findall(r"(--[a-z][a-z0-9-]*)", rest):
            if not re.search(r"(^|[\s,\[])" + re.escape(option) + r"\b",
                             help_text, re.M):
                print("README.md:%d: idxmap %s has no option %s"
                      % (number, command, option))
                failures += 1
        checked += 1
    if checked == 0:
        print("no idxmap command found in README.md's code blocks")
        return 1
    print("%d README lines checked, %d commands, %d failures"
          % (checked, len(helps), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
