#!/usr/bin/env python3
"""Fails on any #include that goes against reverie's layer order.

Each top-level folder is one library; a library may include only the
folders listed for it below (docs/ARCHITECTURE.md draws the same arrows).
Nothing outside tests/ includes tests/. A folder that holds C++ but has no
entry here fails too, so a new library has to be placed in the order.

usage: check_layering.py [SOURCE_DIR]     exit 0 clean, 1 violations
       check_layering.py --self-test      the checker finds planted violations
"""
import os
import re
import sys
import tempfile

# What each library may include (besides itself and system or third-party
# headers). Lower layers first.
ALLOWED = {
    "base": set(),
    "hardware": {"base"},
    "proto": {"base"},
    "frameworks": {"base", "proto"},
    "depgraph": {"base", "proto", "hardware"},
    "transforms": {"base", "depgraph", "hardware"},
    "lua": {"base", "proto", "depgraph", "hardware", "transforms"},
    "report": {"base", "proto", "depgraph"},
    "export": {"base", "proto", "depgraph"},
    "whatif": {"base", "proto", "frameworks", "depgraph", "hardware", "transforms", "lua",
               "report"},
    # The front ends: whatif/ is their facade; report/ only to render.
    "cli": {"base", "proto", "frameworks", "depgraph", "lua", "report", "export", "whatif"},
    "python": {"base", "proto", "frameworks", "depgraph", "lua", "report", "whatif"},
    # The collector runs inside the user's process and shares only the wire
    # format (its public header is collector/include/reverie/collector.h).
    "collector": {"proto"},
    "fuzz": {"base", "proto", "frameworks", "depgraph", "hardware", "transforms", "lua",
             "whatif"},
    "bench": {"base", "proto", "frameworks", "depgraph", "hardware", "transforms", "lua",
              "report", "export", "whatif", "collector"},
    "tests": None,  # anything
}
SKIP_DIRS = {"build", ".git", "docs", "examples", "scripts", "reverie", ".ci", ".devlibs"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')
SOURCE = (".h", ".cc", ".cpp", ".cu", ".inc")


def self_test():
    """Plants an upward include, a tests/ include and an unplaced folder."""
    with tempfile.TemporaryDirectory() as root:
        files = {
            "base/a.h": '#include "absl/strings/str_cat.h"\n#include "base/b.h"\n',
            "depgraph/g.cc": '#include "whatif/pipeline.h"\n',
            "report/r_test.cc": '#include "tests/report/helper.h"\n',
            "newlib/n.cc": '#include "base/a.h"\n',
            "tests/t.cc": '#include "whatif/pipeline.h"\n',
            "whatif/pipeline.h": '#include "depgraph/g.h"\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        problems, _ = check(root)
        want = ["depgraph/g.cc:1: depgraph/ may not include whatif/",
                "newlib/n.cc: folder newlib/ has no place",
                "report/r_test.cc:1: report/ may not include tests/"]
        found = all(any(p.startswith(w) for p in problems) for w in want)
        if not found or len(problems) != len(want):
            print("self-test failed; found:", *problems, sep="\n  ")
            return 1
    print(f"layering self-test: the {len(want)} planted violations found, nothing else")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems, checked = check(root)
    for p in problems:
        print(p)
    if checked == 0:
        print(f"no C++ sources found under {root}")
        return 1
    print(f"layering: {checked} files checked, {len(problems)} violation(s)")
    return 1 if problems else 0


def check(root):
    """(problems, files checked) for the tree at root."""
    folders = {d for d in os.listdir(root)
               if os.path.isdir(os.path.join(root, d)) and d not in SKIP_DIRS
               and not d.startswith(".")}
    problems, checked = [], 0
    for top in sorted(folders):
        allowed = ALLOWED.get(top, "missing")
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in sorted(filenames):
                if not name.endswith(SOURCE):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if allowed == "missing":
                    problems.append(f"{rel}: folder {top}/ has no place in the layer order "
                                    "(tests/layering/check_layering.py)")
                    break
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line_no, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        dep = m.group(1)
                        if dep == top or dep not in folders:
                            continue  # itself, or not one of ours (absl/, google/, ...)
                        if allowed is None:
                            continue
                        if dep not in allowed:
                            problems.append(f"{rel}:{line_no}: {top}/ may not include {dep}/ "
                                            f"(\"{line.strip()}\"; layer order in "
                                            "docs/ARCHITECTURE.md)")
    return problems, checked


if __name__ == "__main__":
    sys.exit(main())
