#!/usr/bin/env python3
"""Fails when a library function body runs over 100 lines (issue 30).

Scans the .cc and .h files of reverie's library folders (tests, benchmarks
and fuzzers are not library code) for function definitions: a line whose
code ends a parameter list with `{`, outside control statements, and counts
the lines to its matching `}`. String and character literals and comments
are blanked first so that their braces do not count.

  check_function_length.py SOURCE_DIR   check the tree
  check_function_length.py --self-test  check the checker on planted code
"""
import pathlib
import re
import sys

LIMIT = 100
FOLDERS = ["base", "proto", "frameworks", "hardware", "depgraph", "transforms", "lua",
           "whatif", "report", "export", "cli", "python", "collector"]
CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\(")
DEFINITION = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>,\s]+)?\{\s*$")


def blank_literals(line):
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return re.sub(r"//.*", "", line)


def long_functions(text, limit=LIMIT):
    """(first line, length, signature) of each function longer than `limit`."""
    lines = [blank_literals(x) for x in text.split("\n")]
    out, i = [], 0
    while i < len(lines):
        code = lines[i]
        head = code.split("(")[0]
        if (DEFINITION.search(code) and not CONTROL.search(code) and "=" not in head
                and not code.strip().startswith(("else", "do", "}"))):
            depth, j = code.count("{") - code.count("}"), i + 1
            while j < len(lines) and depth > 0:
                depth += lines[j].count("{") - lines[j].count("}")
                j += 1
            if j - i > limit:
                out.append((i + 1, j - i, code.strip()))
            i = j
        else:
            i += 1
    return out


def check(root):
    bad = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cc", ".h") or path.name.endswith("_test.cc"):
                continue
            if "testing" in path.relative_to(root).parts:
                continue
            for line, length, sig in long_functions(path.read_text(errors="replace")):
                bad.append(f"{path.relative_to(root)}:{line}: {length} lines (limit {LIMIT}): {sig}")
    for b in bad:
        print(b)
    print(f"{len(bad)} functions over {LIMIT} lines")
    return 1 if bad else 0


def self_test():
    body = "\n".join(f"  x += {k};" for k in range(LIMIT))
    planted = ("int Long(int a,\n         int b) {\n  int x = '{';\n" + body +
               "\n  return x;\n}\n"
               "int Short() {\n  const char* s = \"}}}\";\n  return 0;\n}\n"
               "void F() {\n  if (a) {\n" + body + "\n  }\n}\n")
    found = long_functions(planted)
    # Long (its signature over two lines) and F (braces inside it) are
    # found; Short's braces in literals do not make it long.
    ok = [f[2] for f in found] == ["int b) {", "void F() {"]
    print("self-test", "passed" if ok else f"FAILED: {found}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(check(pathlib.Path(sys.argv[1])))
