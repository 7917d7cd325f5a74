"""Runs examples/whatif.ipynb top to bottom in a headless Jupyter kernel
(nbclient) from examples/, as a student would, and checks what its cells
show against the module's own answers. The notebook file is not modified."""

import os

import nbformat
import pytest
from nbclient import NotebookClient

import reverie
from conftest import SOURCE_DIR, example

NOTEBOOK = os.path.join(SOURCE_DIR, "examples", "whatif.ipynb")


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # A failing cell raises CellExecutionError, naming the cell and the error.
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": os.path.join(SOURCE_DIR, "examples")}}).execute()
    return nb


def cell(nb, tag):
    found = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert len(found) == 1, f"one cell tagged {tag!r}"
    return found[0]


def text(c):
    """Everything a cell printed or displayed as text."""
    parts = []
    for out in c.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif "data" in out:
            parts.append(out.data.get("text/plain", ""))
    return "\n".join(parts)


def test_every_cell_ran_without_an_error(executed):
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]


def test_the_breakdown_shows_each_step(executed):
    info = reverie.load(example("tiny_mlp_training.json")).info()
    shown = text(cell(executed, "info"))
    assert f"step time {info.graph.step.mean_us:.1f} us" in shown
    for step in info.graph.steps:
        assert step.name in shown
    assert "ProfilerStep" in text(cell(executed, "breakdown"))


def test_the_three_whatifs_are_the_modules(executed):
    t = reverie.load(example("tiny_mlp_training.json"))
    shown = text(cell(executed, "whatifs"))
    for name, p in [("mixed precision", t.predict("amp.lua")),
                    ("H100 instead of A100", t.predict("retarget_gpu.lua", set={"to": "H100-SXM"}))]:
        assert (f"{name:22s} baseline {p.baseline_us:7.1f} us   predicted {p.predicted_us:7.1f} us"
                f"   speedup {p.speedup:.3f}x") in shown
    assert "update kernels 2x" in shown
    assert shown.count("speedup") == 3


def test_the_plot_is_drawn(executed):
    outputs = cell(executed, "plot").outputs
    try:
        import matplotlib  # noqa: F401  (the kernel runs this same interpreter)
    except ImportError:
        assert "cpu_only_us" in text(cell(executed, "plot"))
        return
    assert any("image/png" in o.get("data", {}) for o in outputs), outputs


def test_the_critical_path_is_read(executed):
    cp = reverie.load(example("tiny_mlp_training.json")).replay(critical_path=True).critical_path[0]
    shown = text(cell(executed, "critical-path"))
    assert f"critical path {cp.length_us:.1f} us over {cp.tasks} tasks -> {cp.verdict}-bound" in shown


def test_the_sweep_and_the_job(executed):
    assert "H200" in text(cell(executed, "sweep"))
    job = reverie.ranks([example("ddp_rank0.json"), example("ddp_rank1.json")])
    assert f"straggler: rank {job.baseline.straggler}" in text(cell(executed, "ranks"))


def test_the_advice_is_the_modules(executed):
    a = reverie.load(example("tiny_mlp_training.json")).advise()
    shown = text(cell(executed, "advise"))
    for line in a.diagnosis.lines:
        assert line in shown
    assert a.candidates[0].label in shown
