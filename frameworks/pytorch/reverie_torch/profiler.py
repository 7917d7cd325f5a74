"""reverie_torch.profile: record a reverie trace of a PyTorch training loop.

    with reverie_torch.profile(model, optimizer, out="trace.pb",
                               steps=3, warmup=2) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

The collector (libreverie_collector.so) records CUDA activity through CUPTI;
this package adds what only the framework knows: layer ranges (module
paths, forward/backward), the optimizer step (UPDATE), step marks,
parameter sizes and DDP gradient buckets.
"""

import contextlib
import warnings

from . import _layers
from . import _lib
from . import _training


class Profiler:
    """One recording session. Use through ``profile(...)``.

    Step i runs from the i-th ``step()`` (or the ``with`` entry) to the
    next; the collector keeps steps ``warmup .. warmup+steps-1``
    and stops recording after them (``steps=0``: all). A step
    begun by the last ``step()`` with no work in it is discarded.
    """

    def __init__(self, model, optimizer=None, out="trace.pb", steps=3, warmup=2,
                 lib=None, record_parameters=True, ddp_buckets=True, framework=None,
                 iterations=None):
        if iterations is not None:
            warnings.warn("reverie_torch: 'iterations' is deprecated; use 'steps'",
                          DeprecationWarning, stacklevel=2)
            steps = iterations
        self.model = model
        self.optimizer = optimizer
        self.out = out
        self.steps = int(steps)
        self.warmup = int(warmup)
        self._lib = lib if lib is not None else _lib.CollectorLib()
        self._record_parameters = record_parameters
        self._ddp_buckets = ddp_buckets
        self._framework = framework
        self.status = None
        self.step_index = -1
        self._active = False
        self._tracker = _layers.LayerTracker(self._lib)
        self._modules = None
        self._optimizer_hooks = None
        self._buckets = None
        self._pushes_at_begin = 0

    # Lifecycle -----------------------------------------------------------
    def start(self):
        lib = self._lib
        settings = {"REVERIE_OUTPUT": self.out, "REVERIE_STEPS": self.steps,
                    "REVERIE_WARMUP": self.warmup}
        for key, value in settings.items():
            if value is None:
                continue
            r = lib.configure(key, value)
            if r == _lib.ALREADY_STARTED:
                # Started by CUDA_INJECTION64_PATH / `reverie collect`: its
                # REVERIE_* environment decides.
                warnings.warn("reverie_torch: the collector was already started (reverie collect "
                              f"or CUDA_INJECTION64_PATH); {key} from its environment applies")
                break
            if r != _lib.OK:
                raise ValueError(f"reverie_torch: bad setting {key}={value!r}")
        self.status = lib.start()
        self._active = self.status in (_lib.OK, _lib.HOST_ONLY)
        if not self._active:
            warnings.warn("reverie_torch: the collector is not collecting; no trace will be written")
            return self
        lib.set_metadata("framework", self._framework or _framework_name())
        enabled = lambda: self._active  # noqa: E731
        self._modules = _layers.ModuleHooks(_training.unwrap(self.model), self._tracker, enabled)
        if self.optimizer is not None:
            self._optimizer_hooks = _training.OptimizerHooks(self.optimizer, self._tracker, enabled)
        names = {}
        if self._record_parameters:
            names = _training.record_parameters(self.model, lib)
        if self._ddp_buckets and _training.is_ddp(self.model):
            self._buckets = _training.DdpBuckets(self.model, names, lib)
        self._begin_step()
        return self

    def step(self):
        """Ends the current step and begins the next."""
        if not self._active:
            return
        self._tracker.close_all()
        self._lib.step_end()
        self._begin_step()

    def stop(self):
        if not self._active:
            return
        self._active = False
        self._tracker.close_all()
        if self._tracker.pushes > self._pushes_at_begin:
            # Work happened since the last step(): a real (maybe partial)
            # step. An empty one is left open and the collector drops it.
            self._lib.step_end()
        for hooks in (self._modules, self._optimizer_hooks):
            if hooks is not None:
                hooks.remove()
        if self._buckets is not None:
            self._buckets.emit()
        # The package's own anomalies (hooks out of order) go in the header.
        for name, count in sorted(self._tracker.anomalies.items()):
            self._lib.set_metadata("reverie_torch." + name, str(count))
        self._lib.stop()

    @contextlib.contextmanager
    def region(self, name, phase=_lib.PHASE_OTHER):
        """A named range of the calling thread, e.g. data loading:

            with prof.region("data", reverie_torch.PHASE_DATA_LOADING):
                batch = next(it)
        """
        if not self._active:
            yield
            return
        self._tracker.push(name, phase, layer=False)
        try:
            yield
        finally:
            self._tracker.pop(name, phase)

    def _begin_step(self):
        self.step_index += 1
        self._tracker.generation = self.step_index
        if self._modules is not None:
            self._modules.new_step()
        self._pushes_at_begin = self._tracker.pushes
        self._lib.step_begin()

    # Context manager -------------------------------------------------------
    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False


def profile(model, optimizer=None, out="trace.pb", steps=3, warmup=2, **kwargs):
    """A Profiler for ``with`` (see Profiler)."""
    return Profiler(model, optimizer, out=out, steps=steps, warmup=warmup, **kwargs)


def _framework_name():
    try:
        import torch  # noqa: PLC0415 - optional
        return "pytorch " + torch.__version__
    except Exception:  # noqa: BLE001
        return "pytorch"
