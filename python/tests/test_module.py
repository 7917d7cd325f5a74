"""Tests of the Python module reverie: every result equals the CLI's --json
for the same question, errors carry the CLI's one-line message, scripts can
be given as text, the GIL is released while scripts run, and the package
imports from the source tree and installs with cmake --install."""

import glob
import os
import subprocess
import sys
import threading
import time

import pytest

import reverie
from conftest import SOURCE_DIR, cli_error, cli_json, example

TINY = example("tiny_mlp_training.json")
RANK0 = example("ddp_rank0.json")
RANK1 = example("ddp_rank1.json")
HALVE_KERNELS = "-- every kernel twice as fast\ngraph:select{kind = 'kernel'}:scale(0.5)\n"


def build_dir():
    # build/<preset>/python/reverie/__init__.py -> build/<preset>
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(reverie.__file__))))


def test_the_package_under_test_is_the_build_trees():
    assert os.path.exists(os.path.join(build_dir(), "CMakeCache.txt")), reverie.__file__


def test_acceptance_line_from_the_source_root():
    # README: after the build, from the repository root, no PYTHONPATH; the
    # `reverie` link to python/reverie finds the build tree's extension.
    code = ("import reverie; print(reverie.__file__); "
            "print(reverie.load('examples/tiny_mlp_training.json').predict('amp.lua').speedup)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["REVERIE_BUILD_DIR"] = build_dir()
    p = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR, env=env,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    where, speedup = p.stdout.split()
    assert where == os.path.join(SOURCE_DIR, "reverie", "__init__.py")
    assert float(speedup) == reverie.load(TINY).predict("amp.lua").speedup


def test_info_is_the_clis(tiny):
    assert tiny.info().to_dict() == cli_json("info", TINY)


@pytest.mark.parametrize("critical", [False, True])
def test_replay_is_the_clis(tiny, critical):
    args = ["replay", TINY] + (["--critical-path"] if critical else [])
    assert tiny.replay(critical_path=critical).to_dict() == cli_json(*args)


@pytest.mark.parametrize("scripts, settings, cli_args", [
    ("amp.lua", None, ["--script", "amp.lua"]),
    (["amp.lua", "fused_adam.lua"], None, ["--script", "amp.lua", "--script", "fused_adam.lua"]),
    ("retarget_gpu", {"to": "H100-SXM"}, ["--script", "retarget_gpu", "--set", "to=H100-SXM"]),
])
def test_predict_is_the_clis(tiny, scripts, settings, cli_args):
    p = tiny.predict(scripts, set=settings)
    assert p.to_dict() == cli_json("predict", TINY, *cli_args)


def test_predict_top_and_cpu_model_are_the_clis():
    gaps = reverie.load(TINY, cpu_model="gaps")
    assert gaps.cpu_model == "gaps"
    assert gaps.predict("amp.lua", top=3).to_dict() == cli_json(
        "predict", TINY, "--script", "amp.lua", "--cpu-model", "gaps", "--top", "3")


def test_sweep_is_the_clis(tiny):
    s = tiny.sweep("retarget_gpu.lua", {"to": ["T4", "H100-SXM"]})
    assert s.to_dict() == cli_json("sweep", TINY, "--script", "retarget_gpu.lua",
                                   "--set", "to=T4,H100-SXM")
    assert [p.settings.to for p in s.points] == ["T4", "H100-SXM"]


def test_validate_is_the_clis(tiny):
    v = tiny.validate(TINY, "identity.lua")
    assert v.to_dict() == cli_json("validate", TINY, TINY, "--script", "identity.lua")
    assert v.step.predicted_us == pytest.approx(v.step.baseline_us)
    assert v.host.launch_time_ratio == 1  # the same run: the same host speed


@pytest.mark.parametrize("scripts", [None, "amp.lua"])
def test_ranks_is_the_clis(scripts):
    job = reverie.ranks([RANK0, RANK1], scripts=scripts)
    cli_args = ["--script", scripts] if scripts else []
    assert job.to_dict() == cli_json("ranks", RANK0, RANK1, *cli_args)
    assert job.baseline.straggler == 1
    assert ("predicted" in job) == bool(scripts)


def test_advise_is_the_clis(tiny):
    a = tiny.advise(threads=2, top=3)
    assert a.to_dict() == cli_json("advise", TINY, "--threads", "2", "--top", "3")
    gains = [c.gain for c in a.candidates]
    assert len(gains) == min(3, a.candidates_total) and gains == sorted(gains, reverse=True)
    assert a.diagnosis.side in ("CPU", "GPU", "both", "neither")


def test_advise_settings_are_the_clis(tiny):
    a = tiny.advise(set={"dataloader.num_workers": 4}, threads=1)
    assert a.to_dict() == cli_json("advise", TINY, "--set", "dataloader.num_workers=4",
                                   "--threads", "1")
    labels = [c.label for c in a.candidates] + [n.script + " " + n.settings
                                                for n in a.not_applicable]
    assert not any("num_workers=2" in l or "num_workers=8" in l for l in labels)
    with pytest.raises(reverie.Error) as e:
        tiny.advise(set={"no_such_key": 1})
    assert str(e.value) == cli_error("advise", TINY, "--set", "no_such_key=1")


def test_advise_to_pandas_has_a_row_per_candidate(tiny):
    pandas = pytest.importorskip("pandas")
    a = tiny.advise(top=1000)
    frame = a.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["label"]) == [c.label for c in a.candidates]
    assert len(a.to_pandas("not_applicable")) == len(a.not_applicable)


def test_scripts_lists_the_library_as_the_cli_does(tiny):
    lib = reverie.scripts()
    cli = cli_json("scripts")
    # The paths differ where the CLI and the package find the library in
    # different (equal) folders; everything else is the same.
    strip = lambda d: [{k: v for k, v in s.items() if k != "path"} for s in d["scripts"]]
    assert strip(lib.to_dict()) == strip(cli)
    amp = reverie.scripts("amp.lua", trace=tiny)
    assert [s.name for s in amp.scripts] == ["amp.lua"]
    assert "dtype" in [p.name for p in amp.scripts[0].params]
    assert amp.scripts[0].on_trace.outcome in ("applied", "unchanged", "refused", "failed")
    with pytest.raises(reverie.Error):
        reverie.scripts("no_such_script.lua")


def test_results_read_by_attribute_key_and_dict(tiny):
    p = tiny.predict("amp.lua")
    d = p.to_dict()
    assert p.speedup == p["speedup"] == d["speedup"]
    assert p.time_split.baseline.cpu_only_us == d["time_split"]["baseline"]["cpu_only_us"]
    assert p.scripts[0].name == "amp.lua"
    assert p.speedup == pytest.approx(p.baseline_us / p.predicted_us)
    d["speedup"] = -1  # a copy: the result does not change
    assert p.speedup != -1
    with pytest.raises(AttributeError, match="no field 'nope'"):
        p.nope  # noqa: B018
    assert "speedup" in repr(p)


def test_rows_flatten_the_main_table(tiny):
    rows = tiny.info().rows()
    assert len(rows) == len(tiny.info().graph.steps) == 3
    assert {"name", "counted", "step_us", "cpu.api_us", "cpu.op_us"} <= set(rows[0])
    assert [r["predicted_us"] for r in tiny.predict("amp.lua").rows()] == [
        it.predicted_us for it in tiny.predict("amp.lua").steps]


def test_to_pandas(tiny):
    pandas = pytest.importorskip("pandas")
    df = tiny.predict("amp.lua").to_pandas()
    assert isinstance(df, pandas.DataFrame)
    assert list(df.columns) == ["name", "counted", "baseline_us", "predicted_us"]
    assert len(df) == 3
    phases = tiny.predict("amp.lua").to_pandas("phases")
    assert "delta_us" in phases.columns


BATCH16 = os.path.join(
    os.environ.get("REVERIE_TRACES") or os.path.join(SOURCE_DIR, "..", "shared", "traces"),
    "JonathanHourany__pytorch-sandbox/profiling/data-bottleneck/profiler-output/"
    "num-workers-8-batch-size-16/trace-num-workers-8-batch-size-16.json")


def test_memory_is_a_dataframe_measured_and_predicted():
    if not os.path.exists(BATCH16):
        pytest.skip(f"real trace not found: {BATCH16} (set REVERIE_TRACES)")
    pandas = pytest.importorskip("pandas")
    t = reverie.load(BATCH16)
    steps = t.info().memory()
    assert isinstance(steps, pandas.DataFrame)
    gpu = steps[steps["kind"] == "gpu"]
    assert len(gpu) == 3 and (gpu["peak_bytes"] > 0).all()
    p = t.predict("batch_size.lua", set={"factor": "128.5"})
    mem = p.to_pandas("memory")
    assert mem.loc[0, "predicted_peak_bytes"] > mem.loc[0, "baseline_peak_bytes"]
    assert bool(mem.loc[0, "fits"])
    assert mem.to_dict("records") == [dict(r) for r in cli_json(
        "predict", BATCH16, "--script", "batch_size.lua", "--set", "factor=128.5")["memory"]]


def test_to_pandas_without_pandas_says_what_to_install(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    p = tiny.predict("amp.lua")
    with pytest.raises(ImportError, match="python3-pandas"):
        p.to_pandas()
    assert p.rows()  # the rest works without it


def test_a_missing_trace_is_the_clis_error():
    missing = os.path.join(SOURCE_DIR, "examples", "no_such_trace.json")
    with pytest.raises(reverie.Error) as e:
        reverie.load(missing)
    assert str(e.value) == cli_error("info", missing)
    assert e.value.traceback is None


def test_a_failing_script_is_the_clis_error_with_its_traceback(tiny, tmp_path):
    bad = tmp_path / "bad.lua"
    bad.write_text("local x = nil\nx.y = 1\n")
    with pytest.raises(reverie.Error) as e:
        tiny.predict(str(bad))
    assert str(e.value) == cli_error("predict", TINY, "--script", str(bad))
    assert ":2:" in str(e.value) and "\n" not in str(e.value)
    assert e.value.traceback  # Lua's traceback, apart from the one line


@pytest.mark.parametrize("kwargs, cli_args", [
    ({"set": {"nope": 1}}, ["--set", "nope=1"]),
    ({"lua_budget": 100}, ["--lua-budget", "100"]),
])
def test_script_limits_and_parameters_fail_as_in_the_cli(tiny, kwargs, cli_args):
    with pytest.raises(reverie.Error) as e:
        tiny.predict("amp.lua", **kwargs)
    assert str(e.value) == cli_error("predict", TINY, "--script", "amp.lua", *cli_args)


def test_bad_arguments_raise(tiny):
    with pytest.raises(reverie.Error, match="cpu_model expects ops"):
        reverie.load(TINY, cpu_model="both")
    with pytest.raises(reverie.Error, match="lua_memory_mb expects a positive integer"):
        tiny.predict("amp.lua", lua_memory_mb=0)
    with pytest.raises(reverie.Error, match="give at least one script"):
        tiny.predict([])
    with pytest.raises(reverie.Error, match="at least two ranks"):
        reverie.ranks([RANK0])
    with pytest.raises(reverie.Error, match="no step 7"):
        tiny.critical_path(7)
    with pytest.raises(TypeError):
        tiny.predict(42)


def test_the_sandbox_opens_only_for_false(tiny, tmp_path):
    # Issue 29, D26: None, 0, [] or "" used to open the sandbox.
    escape = ("io.open(" + repr(str(tmp_path / "escaped")) + ", 'w'):write('x')\n")
    for value in (None, 0, 1, [], "", "no", 0.0):
        with pytest.raises(TypeError, match="sandbox must be True or False"):
            tiny.predict(escape, sandbox=value)
    assert not (tmp_path / "escaped").exists()
    with pytest.raises(reverie.Error, match="'io' is not available"):
        tiny.predict(escape, sandbox=True)
    # The native layer takes only a bool as well.
    with pytest.raises(TypeError):
        reverie._native.ScriptSpec(["amp.lua"], [], [], None, None, None, [])


def test_arguments_are_checked_before_they_reach_cpp(tiny):
    # Issue 29, D32: each raised a C++ message, an AttributeError, or was
    # silently taken another way.
    with pytest.raises(ValueError, match="top must be >= 0"):
        tiny.predict("amp.lua", top=-1)
    with pytest.raises(TypeError, match="top must be an int"):
        tiny.predict("amp.lua", top=2.5)
    with pytest.raises(ValueError, match="NUL byte"):
        reverie.load(TINY + "\0/other")
    with pytest.raises(ValueError, match="NUL byte"):
        tiny.predict("amp.lua\0x")
    with pytest.raises(TypeError, match="Script name must be a str"):
        reverie.Script("print(1)\n", name=5)
    with pytest.raises(ValueError, match="control characters"):
        reverie.Script("error('boom')\n", name="a\nb")
    with pytest.raises(TypeError, match="set=\\{"):
        tiny.predict({"amp": {"compute_speedup": 9}})
    with pytest.raises(TypeError, match="set must be a dict"):
        tiny.predict("amp.lua", set=[("amp.compute_speedup", 9)])
    with pytest.raises(TypeError, match="list of traces"):
        reverie.ranks(RANK0)
    # Issue 29, D29: one trace per rank.
    with pytest.raises(reverie.Error, match="given for ranks 0 and 1"):
        reverie.ranks([RANK0, RANK0])


def test_a_script_given_as_text_runs_as_the_same_file_would(tiny, tmp_path):
    as_file = tmp_path / "halve.lua"
    as_file.write_text(HALVE_KERNELS)
    from_text = tiny.predict(HALVE_KERNELS)
    from_file = tiny.predict(str(as_file))
    assert from_text.scripts[0].name == "inline.lua"
    assert from_text.scripts[0].path == ""
    assert from_text.predicted_us == from_file.predicted_us
    assert from_text.predicted_us < from_text.baseline_us
    # Named, with a parameter set by the script's name; then a library script.
    code = ("local P = reverie.params{factor = {default = 1, doc = 'scale'}}\n"
            "graph:select{kind = 'kernel'}:scale(P.factor)\n")
    named = tiny.predict([reverie.Script(code, name="mine"), "amp.lua"],
                         set={"mine.factor": 0.5})
    assert [s.name for s in named.scripts] == ["mine.lua", "amp.lua"]
    assert named.scripts[0].params.factor == 0.5


def test_a_script_error_in_text_names_its_line(tiny):
    with pytest.raises(reverie.Error, match=r"^inline\.lua:2: "):
        tiny.predict("local x = nil\nx.y = 1\n")


def test_the_gil_is_released_while_scripts_run(tiny, tmp_path):
    # The script waits until the main thread, in Python, answers it. With
    # the GIL held during the call the main thread could not run: the script
    # gives up after 30 s and the prediction fails.
    ready, go = tmp_path / "ready", tmp_path / "go"
    script = f"""
io.open("{ready}", "w"):close()
local deadline = os.time() + 30
while os.time() < deadline do
  local f = io.open("{go}", "r")
  if f then f:close() return end
end
error("the main thread never ran while this script did")
"""
    out = {}

    def worker():
        try:
            out["prediction"] = tiny.predict(script, sandbox=False)
        except reverie.Error as e:
            out["error"] = e

    t = threading.Thread(target=worker)
    t.start()
    while not ready.exists() and t.is_alive():
        time.sleep(0.001)
    go.write_text("")
    t.join()
    assert "error" not in out, out.get("error")
    assert out["prediction"].speedup == pytest.approx(1.0)


def test_critical_path_lists_the_steps_tasks(tiny):
    path = tiny.critical_path(0)
    replay = tiny.replay(critical_path=True)
    assert path.step == replay.critical_path[0].name
    assert path.length_us == pytest.approx(replay.critical_path[0].length_us)
    assert path.verdict == replay.critical_path[0].verdict
    assert len(path.tasks) == replay.critical_path[0].tasks
    starts = [t.start_us for t in path.tasks]
    assert starts == sorted(starts)
    assert sum(t.duration_us for t in path.tasks) <= path.length_us + 1e-6


def test_cmake_install_gives_a_working_package(tmp_path):
    prefix = tmp_path / "prefix"
    cmake = os.environ.get("REVERIE_CMAKE", "cmake")
    p = subprocess.run([cmake, "--install", build_dir(), "--prefix", str(prefix)],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    inits = glob.glob(str(prefix / "**" / "reverie" / "__init__.py"), recursive=True)
    assert len(inits) == 1, inits
    site = os.path.dirname(os.path.dirname(inits[0]))
    code = ("import reverie, os; d = reverie._locate.script_dirs(); print(reverie.__file__); "
            "print(os.path.isfile(os.path.join(d[0], 'amp.lua'))); "
            f"print(reverie.load({TINY!r}).predict('amp.lua').speedup)")
    env = dict(os.environ, PYTHONPATH=site)
    env.pop("REVERIE_BUILD_DIR", None)
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    where, found, speedup = p.stdout.split()
    assert where == inits[0]
    assert found == "True"
    assert float(speedup) == reverie.load(TINY).predict("amp.lua").speedup
