"""reverie_torch: record reverie traces of PyTorch training (see profiler.py).

Pure Python; talks to libreverie_collector.so through ctypes. torch is only
imported when a feature needs it (DDP's default all-reduce hook, the
framework version string).
"""

from ._lib import (PHASE_BACKWARD, PHASE_DATA_LOADING, PHASE_FORWARD, PHASE_OTHER,
                   PHASE_UNKNOWN, PHASE_UPDATE, CollectorLib, CollectorNotFound,
                   candidate_paths, find_library)
from .profiler import Profiler, profile

__all__ = [
    "CollectorLib", "CollectorNotFound", "PHASE_BACKWARD", "PHASE_DATA_LOADING",
    "PHASE_FORWARD", "PHASE_OTHER", "PHASE_UNKNOWN", "PHASE_UPDATE", "Profiler",
    "candidate_paths", "find_library", "profile",
]
__version__ = "0.1"
