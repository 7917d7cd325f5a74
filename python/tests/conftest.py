"""Shared fixtures: where the sources, the CLI and the example traces are.

ctest (python/CMakeLists.txt) sets REVERIE_SOURCE_DIR and REVERIE_CLI and
puts the build tree's package first on PYTHONPATH.
"""

import json
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get(
    "REVERIE_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLI = os.environ.get("REVERIE_CLI", os.path.join(SOURCE_DIR, "build", "release", "cli", "reverie"))


def example(name):
    return os.path.join(SOURCE_DIR, "examples", name)


def run_cli(*args):
    """(exit status, stdout, stderr) of the reverie command."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    status, out, err = run_cli(*args, "--json")
    assert status == 0, err
    return json.loads(out)


def cli_error(*args):
    """The one line the CLI prints for bad input, without its "reverie: "."""
    status, _, err = run_cli(*args)
    assert status == 2, err
    first = err.splitlines()[0]
    assert first.startswith("reverie: "), err
    return first[len("reverie: "):]


@pytest.fixture(scope="session")
def tiny():
    import reverie
    return reverie.load(example("tiny_mlp_training.json"))
