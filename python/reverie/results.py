"""Results of reverie's Python API as plain Python objects.

Each result holds the JSON the matching CLI command prints with ``--json``
(same field names, times in microseconds), read by attribute or by key::

    p = trace.predict("amp.lua")
    p.speedup, p["speedup"], p.time_split.baseline.cpu_only_us

``to_dict()`` gives that JSON as dicts and lists (a copy), ``to_pandas()`` a
DataFrame of the result's main table when pandas is installed (pandas is not
required by anything else).
"""

import copy
import json


class Record:
    """A JSON object read by attribute (``r.name``) or key (``r["name"]``)."""

    def __init__(self, data):
        self._data = data

    def __getattr__(self, name):
        data = self.__dict__.get("_data")
        if data is None or name not in data:
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        return _wrap(data[name])

    def __getitem__(self, key):
        return _wrap(self._data[key])

    def __contains__(self, key):
        return key in self._data

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def keys(self):
        return self._data.keys()

    def to_dict(self):
        """The fields as plain dicts and lists (a deep copy)."""
        return copy.deepcopy(self._data)

    def __eq__(self, other):
        return isinstance(other, Record) and self._data == other._data

    def __repr__(self):
        shown = {k: v for k, v in self._data.items() if not isinstance(v, (dict, list))}
        inner = ", ".join(f"{k}={v!r}" for k, v in list(shown.items())[:6])
        return f"{type(self).__name__}({inner})"


def _wrap(value):
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _flatten(row, prefix=""):
    """{"a": 1, "b": {"c": 2}} -> {"a": 1, "b.c": 2}; lists stay as they are."""
    out = {}
    for key, value in row.items():
        name = prefix + key
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


class Result(Record):
    """One command's answer. ``TABLE`` names the list ``to_pandas()`` shows."""

    TABLE = None

    @classmethod
    def from_json(cls, text):
        return cls(json.loads(text))

    def rows(self, table=None):
        """The rows of a list field (default: the result's main table), each
        a flat dict (nested objects become "outer.inner" columns)."""
        name = table or self.TABLE
        node = self._data
        for part in name.split("."):
            node = node[part]
        return [_flatten(r) if isinstance(r, dict) else {"value": r} for r in node]

    def to_pandas(self, table=None):
        """A pandas DataFrame of rows(table). Raises ImportError, saying so,
        when pandas is not installed."""
        return _dataframe(self.rows(table))


def _dataframe(rows):
    try:
        import pandas
    except ImportError as e:
        raise ImportError(
            "to_pandas() needs pandas (Debian: python3-pandas); "
            "to_dict() and rows() work without it") from e
    return pandas.DataFrame(rows)


class Info(Result):
    """``reverie info --json``: counts, steps, their CPU split, breakdown."""

    TABLE = "graph.steps"

    def memory_rows(self):
        """The memory table of ``reverie info``: one flat dict per device and
        step (peak allocated, reserved, what is live at the peak); empty
        when the trace recorded no memory (profile_memory=True)."""
        rows = []
        for d in self._data.get("graph", {}).get("memory", {}).get("devices", []):
            for s in d.get("steps", []):
                row = {"device": d["device"], "kind": d["kind"], "levels": d["levels"]}
                row.update(_flatten(s))
                rows.append(row)
        return rows

    def memory(self):
        """memory_rows() as a pandas DataFrame."""
        return _dataframe(self.memory_rows())


class Replay(Result):
    """``reverie replay --json``: measured vs simulated per step."""

    TABLE = "steps"


class Prediction(Result):
    """``reverie predict --json``: baseline vs predicted step time."""

    TABLE = "steps"

    def __repr__(self):
        d = self._data
        names = ", ".join(s["name"] for s in d["scripts"])
        return (f"Prediction({names}: baseline_us={d['baseline_us']:.1f}, "
                f"predicted_us={d['predicted_us']:.1f}, speedup={d['speedup']:.3f})")


class Sweep(Result):
    """``reverie sweep --json``: one prediction per point of a grid."""

    TABLE = "points"


class Validation(Result):
    """``reverie validate --json``: a prediction against a measured AFTER."""

    TABLE = "steps"


class Job(Result):
    """``reverie ranks --json``: the ranks of one job simulated together."""

    TABLE = "baseline.per_rank"


class CriticalPath(Result):
    """The tasks on one simulated step's critical path, in time order (times
    in us from the step's start). No CLI command lists them."""

    TABLE = "tasks"


class Advice(Result):
    """``reverie advise --json``: the diagnosis, ranked candidates, the best
    combined, and what does not apply. ``to_pandas()`` has a row per
    candidate; ``to_pandas("combined")`` and ``to_pandas("not_applicable")``
    the others."""

    TABLE = "candidates"

    def __repr__(self):
        d = self._data
        best = d["candidates"][0]["label"] if d["candidates"] else "none"
        return (f"Advice(step {d['baseline_us']:.1f} us, busy side: {d['diagnosis']['side']}; "
                f"{d['candidates_total']} candidates, best: {best})")


class Scripts(Result):
    """``reverie scripts --json``: the script library, one row per script."""

    TABLE = "scripts"
