"""reverie: "what if" questions about deep-learning training from one profiled
step (Daydream-style), from Python.

    import reverie
    t = reverie.load("examples/tiny_mlp_training.json")
    t.info()                                   # counts, steps, CPU split
    t.replay(critical_path=True)               # measured vs simulated
    p = t.predict("amp.lua")                   # baseline vs predicted
    p.speedup, p.to_dict(), p.to_pandas()
    t.sweep("retarget_gpu.lua", {"to": ["T4", "H100-SXM"]})
    a = t.advise()                             # what to try first, ranked
    a.to_pandas()                              # one row per candidate
    reverie.scripts(trace=t)                   # the library, and what applies
    reverie.ranks(["examples/ddp_rank0.json", "examples/ddp_rank1.json"])

The same C++ as the ``reverie`` command does the work, and results carry the
fields of its ``--json`` output (times in us). Errors raise
``reverie.Error`` with the command's one-line message. See docs/PYTHON.md.
"""

import os

from . import results
from ._locate import native as _native
from ._locate import script_dirs as _script_dirs
from .results import (Advice, CriticalPath, Info, Job, Prediction, Record, Replay, Result,
                      Scripts, Sweep, Validation)

Error = _native.Error

__all__ = ["Error", "Script", "Trace", "load", "ranks", "scripts", "results", "Record", "Result",
           "Info", "Replay", "Prediction", "Sweep", "Validation", "Job", "CriticalPath", "Advice",
           "Scripts"]


class Script:
    """Lua source given as text instead of a file. ``name`` is how messages,
    results and qualified settings (``set={"NAME.key": v}``) call it."""

    def __init__(self, code, name="inline.lua"):
        if not isinstance(code, str):
            raise TypeError("Script code must be a str of Lua source")
        if not isinstance(name, str):
            raise TypeError(f"Script name must be a str, not {type(name).__name__}")
        if not name or any(ord(c) < 0x20 or ord(c) == 0x7f for c in name):
            # Messages name the script on one line: a newline in the name
            # would split them (issue 29, D32).
            raise ValueError(f"Script name {name!r} must be a non-empty file name without "
                             "control characters")
        if not name.endswith(".lua"):
            name += ".lua"
        if "/" in name:
            raise ValueError(f"Script name '{name}' must be a file name, not a path")
        self.code = code
        self.name = name

    def __repr__(self):
        return f"Script(name={self.name!r}, {len(self.code)} characters)"


def _scripts(scripts):
    """Names for the native runner and the sources of scripts given as text.

    A str containing a newline is Lua source (named inline.lua, inline_2.lua,
    ...); any other str or os.PathLike is a path or a library name
    ("amp.lua", "amp")."""
    if scripts is None:
        return [], []
    if isinstance(scripts, (str, os.PathLike, Script)):
        scripts = [scripts]
    if not isinstance(scripts, (list, tuple)):
        # A dict would give its keys and drop its values, a set its order
        # (issue 29, D32); settings go in set={...}.
        raise TypeError(f"scripts is a path, a library name, Lua source, a reverie.Script or a "
                        f"list of them (settings go in set={{...}}), not {type(scripts).__name__}")
    names, sources = [], []
    for s in scripts:
        if isinstance(s, str) and "\n" in s:
            n = len(sources) + 1
            s = Script(s, "inline.lua" if n == 1 else f"inline_{n}.lua")
        if isinstance(s, Script):
            if any(name == s.name for name, _ in sources):
                raise Error(f"two scripts given as text are both named {s.name}")
            sources.append((s.name, s.code))
            names.append(s.name)
        elif isinstance(s, (str, os.PathLike)):
            names.append(_path(s, "a script path"))
        else:
            raise TypeError(f"a script is a path, a library name, Lua source or a "
                            f"reverie.Script, not {type(s).__name__}")
    return names, sources


def _text(value):
    """A setting's value as the CLI's --set text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise TypeError(f"a setting's value is a number, a bool or a str, not {type(value).__name__}")


def _path(path, what="path"):
    """os.fspath(path), refusing a NUL byte as open() does (the C++ side
    would stop reading the path there: issue 29, D32)."""
    p = os.fspath(path)
    if "\0" in (p if isinstance(p, str) else p.decode("latin-1")):
        raise ValueError(f"{what} holds a NUL byte: {p!r}")
    return p


def _count(value, name, minimum=None):
    """An int argument (not a bool), at least `minimum` when given, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _spec(scripts, settings, lua_budget, lua_memory_mb, sandbox):
    # Only True or False: None, 0, [] or "" used to open the sandbox (issue
    # 29, D26), and a script without it can do anything the user can.
    if not isinstance(sandbox, bool):
        raise TypeError(f"sandbox must be True or False, not {sandbox!r}")
    if settings is not None and not isinstance(settings, dict):
        raise TypeError(f"set must be a dict {{\"[SCRIPT.]KEY\": value}}, not "
                        f"{type(settings).__name__}")
    lua_budget = _count(lua_budget, "lua_budget")
    lua_memory_mb = _count(lua_memory_mb, "lua_memory_mb")
    names, sources = _scripts(scripts)
    pairs = [(str(k), _text(v)) for k, v in (settings or {}).items()]
    return _native.ScriptSpec(names, sources, pairs, lua_budget, lua_memory_mb, sandbox,
                              _script_dirs())


class Trace:
    """One loaded trace: imported, its dependency graph built and simulated
    (the baseline). Immutable: every prediction works on a copy, so a Trace
    can answer many questions, from several threads too."""

    def __init__(self, native_trace):
        self._t = native_trace

    @property
    def path(self):
        return self._t.path

    @property
    def cpu_model(self):
        return self._t.cpu_model

    def __repr__(self):
        return f"reverie.Trace({self.path!r}, cpu_model={self.cpu_model!r})"

    def info(self):
        """Counts, threads, streams, steps and their CPU time (API calls, ops,
        framework), the measured breakdown: ``reverie info --json``."""
        return Info.from_json(self._t.info_json())

    def replay(self, critical_path=False):
        """The trace simulated unchanged, measured vs simulated per step, the
        breakdown and (critical_path=True) each step's critical path:
        ``reverie replay --json [--critical-path]``."""
        return Replay.from_json(self._t.replay_json(bool(critical_path)))

    def predict(self, scripts, set=None, lua_budget=None, lua_memory_mb=None, sandbox=True,
                top=10):
        """Baseline vs predicted step time after the scripts, applied in
        order: ``reverie predict --json``. ``scripts``: one or a list of paths,
        library names ("amp.lua"), Lua source (a str with a newline) or
        reverie.Script; ``set``: {"[SCRIPT.]KEY": value} (--set); ``top``:
        how many layers to list."""
        spec = _spec(scripts, set, lua_budget, lua_memory_mb, sandbox)
        return Prediction.from_json(self._t.predict_json(spec, _count(top, "top", 0)))

    def sweep(self, scripts, grid, set=None, lua_budget=None, lua_memory_mb=None, sandbox=True):
        """A prediction at every point of the grid {"[SCRIPT.]KEY": [v1, v2, ...]}
        (the cartesian product, the last key varying fastest), with the
        fixed settings ``set``: ``reverie sweep --json``. A point that fails
        keeps its error in its row."""
        spec = _spec(scripts, set, lua_budget, lua_memory_mb, sandbox)
        pairs = []
        for key, values in grid.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                values = [values]
            pairs.append((str(key), [_text(v) for v in values]))
        return Sweep.from_json(self._t.sweep_json(spec, pairs))

    def validate(self, after, scripts, set=None, lua_budget=None, lua_memory_mb=None,
                 sandbox=True, top=10):
        """This trace predicted with the scripts, against ``after`` (a path or
        a Trace) measured with the change made: ``reverie validate --json``."""
        if not isinstance(after, Trace):
            after = load(after, cpu_model=self.cpu_model)
        spec = _spec(scripts, set, lua_budget, lua_memory_mb, sandbox)
        return Validation.from_json(self._t.validate_json(after._t, spec, _count(top, "top", 0)))

    def advise(self, set=None, top=10, threads=0, lua_budget=None, lua_memory_mb=None,
               sandbox=True):
        """What limits the step and which optimization to try first:
        ``reverie advise --json``. The diagnosis, every candidate (a library
        script with the settings a user would try, predicted as predict
        would) ranked by gain (the first two by measured evidence where
        their gains are within noise: ``first_by_evidence`` is then true and
        ``order_note`` says why), the best two
        and three combined, and what
        does not apply with why. ``set``: {"[SCRIPT.]KEY": value} overriding
        the settings tried; ``top``: candidates listed; ``threads``:
        predictions at once (0: $REVERIE_THREADS, else every core; the answer
        is the same)."""
        spec = _spec(None, set, lua_budget, lua_memory_mb, sandbox)
        return Advice.from_json(self._t.advise_json(spec, int(top), int(threads)))

    def critical_path(self, step=0):
        """The tasks on step ``step``'s critical path in the baseline
        simulation (index into replay().steps), in time order."""
        return CriticalPath.from_json(self._t.critical_path_json(int(step)))


def load(path, cpu_model="ops"):
    """Loads a Kineto JSON (optionally gzipped) or a reverie .pb trace, builds
    its dependency graph and simulates it. ``cpu_model``: "ops" (an op's own
    CPU time apart from framework time, the default) or "gaps" (the older
    model: whole gaps between calls), as the CLI's --cpu-model."""
    return Trace(_native.load(_path(path, "a trace path"), cpu_model))


def scripts(name=None, trace=None, lua_budget=None, lua_memory_mb=None, sandbox=True):
    """The library's optimization scripts (or one, by name or path): summary,
    preconditions, what each ignores and its parameters with defaults and
    bounds; with ``trace`` (a path or a Trace), whether each applies to it,
    run alone with its defaults: ``reverie scripts [NAME] [--trace T] --json``."""
    if trace is not None and not isinstance(trace, Trace):
        trace = load(trace)
    spec = _spec(None, None, lua_budget, lua_memory_mb, sandbox)
    return Scripts.from_json(_native.scripts_json(os.fspath(name) if name else "",
                                                  trace._t if trace is not None else None, spec))


def ranks(traces, scripts=None, set=None, lua_budget=None, lua_memory_mb=None, sandbox=True):
    """The ranks of one distributed job simulated together, one trace (path
    or Trace) per rank, in rank order; with scripts, each rank transformed
    and the job simulated again: ``reverie ranks --json``."""
    if not isinstance(traces, (list, tuple)):
        # A str would be taken character by character (issue 29, D29).
        raise TypeError(f"traces is a list of traces (paths or reverie.Trace), one per rank, "
                        f"not {type(traces).__name__}")
    loaded = [t if isinstance(t, Trace) else load(t) for t in traces]
    spec = _spec(scripts, set, lua_budget, lua_memory_mb, sandbox)
    return Job.from_json(_native.ranks_json([t._t for t in loaded], spec))
