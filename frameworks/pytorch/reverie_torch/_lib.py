"""Finding and calling libreverie_collector.so through ctypes.

The C API is declared in collector/include/reverie/collector.h; this module
mirrors it. ``CollectorLib`` is the only place that touches ctypes, so tests
replace it with a fake object that has the same methods.
"""

import ctypes
import glob
import os

LIBRARY_NAME = "libreverie_collector.so"

# Phases: trace.proto's Phase values (and REVERIE_PHASE_* in collector.h).
PHASE_UNKNOWN = 0
PHASE_FORWARD = 1
PHASE_BACKWARD = 2
PHASE_UPDATE = 3
PHASE_DATA_LOADING = 4
PHASE_OTHER = 5

# Result codes (REVERIE_* in collector.h).
OK = 0
HOST_ONLY = 1
NOT_COLLECTING = 2
BAD_ARGUMENT = 3
ALREADY_STARTED = 4


class CollectorNotFound(RuntimeError):
    """libreverie_collector.so could not be found or loaded."""


def candidate_paths():
    """Where to look for the library, in order.

    1. $REVERIE_COLLECTOR_LIB (what `reverie collect` sets);
    2. next to this package (an installed copy);
    3. the build trees of the source checkout this package lives in
       (<repo>/build*/collector/, <repo>/build/*/collector/);
    4. the dynamic loader's search path.
    """
    paths = []
    env = os.environ.get("REVERIE_COLLECTOR_LIB")
    if env:
        paths.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    paths.append(os.path.join(here, LIBRARY_NAME))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    for pattern in ("build*/collector/" + LIBRARY_NAME, "build/*/collector/" + LIBRARY_NAME):
        paths.extend(sorted(glob.glob(os.path.join(repo, pattern))))
    paths.append(LIBRARY_NAME)
    return paths


def find_library(explicit=None):
    """The first candidate that exists (or the bare name for the loader)."""
    if explicit:
        if not os.path.exists(explicit):
            raise CollectorNotFound(f"{explicit}: no such file")
        return explicit
    env = os.environ.get("REVERIE_COLLECTOR_LIB")
    if env and not os.path.exists(env):
        raise CollectorNotFound(f"REVERIE_COLLECTOR_LIB={env}: no such file")
    for path in candidate_paths():
        if os.path.sep not in path or os.path.exists(path):
            return path
    raise CollectorNotFound(LIBRARY_NAME + " not found")


class CollectorLib:
    """Typed wrappers around the C functions. Strings are passed as UTF-8."""

    def __init__(self, path=None):
        self.path = find_library(path)
        try:
            self._c = ctypes.CDLL(self.path)
        except OSError as e:
            raise CollectorNotFound(
                f"cannot load {self.path}: {e} (was reverie built with CUDA? "
                "set REVERIE_COLLECTOR_LIB)") from e
        c = self._c
        c_str = ctypes.c_char_p
        self._declare(c.reverie_configure, ctypes.c_int, [c_str, c_str])
        self._declare(c.reverie_start, ctypes.c_int, [])
        self._declare(c.reverie_stop, ctypes.c_int, [])
        self._declare(c.reverie_flush, ctypes.c_int, [])
        self._declare(c.reverie_is_collecting, ctypes.c_int, [])
        self._declare(c.reverie_set_metadata, None, [c_str, c_str])
        self._declare(c.reverie_layer_push, None, [c_str, ctypes.c_int])
        self._declare(c.reverie_layer_pop, None, [])
        self._declare(c.reverie_range_push, None, [c_str, ctypes.c_int])
        self._declare(c.reverie_step_begin, None, [])
        self._declare(c.reverie_step_end, None, [])
        self._declare(c.reverie_comm_bucket, None,
                      [ctypes.c_int32, ctypes.c_int64, ctypes.POINTER(c_str), ctypes.c_int32])
        self._declare(c.reverie_parameter_typed, None,
                      [c_str, c_str, ctypes.c_int64, c_str])
        self._declare(c.reverie_collector_version, c_str, [])

    @staticmethod
    def _declare(fn, restype, argtypes):
        fn.restype = restype
        fn.argtypes = argtypes

    @staticmethod
    def _b(s):
        return s.encode("utf-8", "replace") if isinstance(s, str) else s

    def configure(self, key, value):
        return self._c.reverie_configure(self._b(key), self._b(str(value)))

    def start(self):
        return self._c.reverie_start()

    def stop(self):
        return self._c.reverie_stop()

    def flush(self):
        return self._c.reverie_flush()

    def is_collecting(self):
        return bool(self._c.reverie_is_collecting())

    def set_metadata(self, key, value):
        self._c.reverie_set_metadata(self._b(key), self._b(value))

    def layer_push(self, name, phase):
        self._c.reverie_layer_push(self._b(name), int(phase))

    def layer_pop(self):
        self._c.reverie_layer_pop()

    def range_push(self, name, phase):
        """A range that is not a model layer (optimizer step, data loading)."""
        self._c.reverie_range_push(self._b(name), int(phase))

    def step_begin(self):
        self._c.reverie_step_begin()

    def step_end(self):
        self._c.reverie_step_end()

    def comm_bucket(self, index, nbytes, names):
        arr = (ctypes.c_char_p * max(1, len(names)))(*[self._b(n) for n in names])
        self._c.reverie_comm_bucket(int(index), int(nbytes), arr, len(names))

    def parameter(self, name, layer, nbytes, dtype=""):
        self._c.reverie_parameter_typed(self._b(name), self._b(layer), int(nbytes),
                                        self._b(dtype))

    def version(self):
        return self._c.reverie_collector_version().decode()
