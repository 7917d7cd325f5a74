"""Optimizer (UPDATE phase), parameter sizes and DDP gradient buckets."""

import threading

from . import _lib

# torch dtype -> the names Kineto traces use.
_DTYPE_NAMES = {
    "float32": "Float", "float": "Float", "float16": "Half", "half": "Half",
    "bfloat16": "BFloat16", "float64": "Double", "double": "Double",
    "int64": "Long", "int32": "Int", "uint8": "Byte", "int8": "Char", "bool": "Bool",
}


def dtype_name(dtype):
    text = str(dtype).replace("torch.", "")
    return _DTYPE_NAMES.get(text, text)


def unwrap(model):
    """The module DDP/FSDP-style wrappers hold (their names drop "module.")."""
    inner = getattr(model, "module", None)
    if inner is not None and type(model).__name__ in (
            "DistributedDataParallel", "DataParallel"):
        return inner
    return model


def is_ddp(model):
    return type(model).__name__ == "DistributedDataParallel" and hasattr(model, "module")


def parameter_bytes(p):
    return int(p.numel()) * int(p.element_size())


def record_parameters(model, lib):
    """Declares every parameter that gets a gradient: name, layer, bytes.

    Returns {id(param): name} for bucket membership.
    """
    names = {}
    for name, p in unwrap(model).named_parameters():
        if not getattr(p, "requires_grad", False):
            continue
        names[id(p)] = name
        layer = name.rpartition(".")[0]
        lib.parameter(name, layer, parameter_bytes(p), dtype_name(getattr(p, "dtype", "")))
    return names


class OptimizerHooks:
    """Marks optimizer.step() and optimizer.zero_grad() as UPDATE ranges.

    The ranges carry the names PyTorch's own profiler gives them
    (``Optimizer.step#Adam.step``, ``Optimizer.zero_grad#Adam.zero_grad``),
    so reverie reads a collector trace's optimizer exactly as it reads a
    Kineto trace's: one name, one detection (depgraph/facts.cc and the
    optimizer-step flag of depgraph/builder_annotate.cc).

    step: the public step hooks (torch >= 2.0:
    Optimizer.register_step_pre_hook / register_step_post_hook); on older
    optimizers a wrapper on the instance's ``step``. zero_grad has no hook:
    a wrapper on the instance's ``zero_grad``, removed by remove().
    """

    def __init__(self, optimizer, tracker, enabled=lambda: True):
        self._tracker = tracker
        self._enabled = enabled
        self._handles = []
        self._optimizer = optimizer
        self._wrapped = []  # (attribute, the instance's own value or None)
        self._active = threading.local()
        cls = type(optimizer).__name__
        self.step_name = "Optimizer.step#%s.step" % cls
        self.zero_grad_name = "Optimizer.zero_grad#%s.zero_grad" % cls
        if hasattr(optimizer, "register_step_pre_hook") and hasattr(
                optimizer, "register_step_post_hook"):
            self._handles.append(optimizer.register_step_pre_hook(self._pre))
            self._handles.append(optimizer.register_step_post_hook(self._post))
        else:
            original = optimizer.step

            def step(*args, **kwargs):
                self._pre(optimizer, args, kwargs)
                try:
                    return original(*args, **kwargs)
                finally:
                    self._post(optimizer, args, kwargs)

            self._wrap("step", step)
        original_zero_grad = getattr(optimizer, "zero_grad", None)
        if callable(original_zero_grad):

            def zero_grad(*args, **kwargs):
                if not self._enabled():
                    return original_zero_grad(*args, **kwargs)
                self._tracker.push(self.zero_grad_name, _lib.PHASE_UPDATE, layer=False)
                try:
                    return original_zero_grad(*args, **kwargs)
                finally:
                    self._tracker.pop(self.zero_grad_name, _lib.PHASE_UPDATE)

            self._wrap("zero_grad", zero_grad)

    def _wrap(self, attribute, fn):
        own = vars(self._optimizer).get(attribute) if hasattr(self._optimizer, "__dict__") else None
        setattr(self._optimizer, attribute, fn)
        self._wrapped.append((attribute, own))

    def _pre(self, optimizer, args, kwargs):
        if self._enabled():
            self._active.on = True
            self._tracker.push(self.step_name, _lib.PHASE_UPDATE, layer=False)

    def _post(self, optimizer, args, kwargs):
        if getattr(self._active, "on", False):
            self._active.on = False
            self._tracker.pop(self.step_name, _lib.PHASE_UPDATE)

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []
        for attribute, own in reversed(self._wrapped):
            if own is None:
                delattr(self._optimizer, attribute)  # back to the class's method
            else:
                setattr(self._optimizer, attribute, own)
        self._wrapped = []


class DdpBuckets:
    """Which parameters DDP all-reduces together.

    Primary: a DDP communication hook (the public
    DistributedDataParallel.register_comm_hook) that records each
    GradBucket's index and parameters, then runs DDP's default all-reduce
    (torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook),
    so training is unchanged. DDP rebuilds its buckets after the first
    step; the last layout seen is the one written.

    Fallback (a comm hook is already registered -- DDP allows one -- or the
    hook API is missing): buckets are approximated the way DDP first builds
    them, parameters in reverse order filled up to ``bucket_bytes_cap``, and
    the trace says so (metadata ``ddp_buckets=approximate``).
    """

    def __init__(self, ddp_model, names, lib, allreduce_hook=None):
        self._lib = lib
        self._names = names
        self._lock = threading.Lock()
        self.buckets = {}  # index -> (bytes, [names])
        self.mode = "none"
        try:
            if allreduce_hook is None:
                from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
                allreduce_hook = default_hooks.allreduce_hook
            self._allreduce = allreduce_hook
            ddp_model.register_comm_hook(state=None, hook=self._hook)
            self.mode = "comm_hook"
        except Exception:  # noqa: BLE001 - any failure means "use the fallback"
            self._approximate(ddp_model)
            self.mode = "approximate"

    def _hook(self, state, bucket):
        try:
            params = bucket.parameters()
            names = [self._names.get(id(p), "") for p in params]
            nbytes = sum(parameter_bytes(p) for p in params)
            with self._lock:
                self.buckets[int(bucket.index())] = (nbytes, names)
        except Exception:  # noqa: BLE001 - recording must never break training
            pass
        return self._allreduce(state, bucket)

    def _approximate(self, ddp_model):
        cap = int(getattr(ddp_model, "bucket_bytes_cap", 25 * 1024 * 1024))
        first_cap = 1024 * 1024  # DDP's first bucket is small (dist._DEFAULT_FIRST_BUCKET_BYTES)
        params = [p for p in unwrap(ddp_model).parameters() if getattr(p, "requires_grad", False)]
        index, current, size = 0, [], 0
        for p in reversed(params):
            current.append(self._names.get(id(p), ""))
            size += parameter_bytes(p)
            if size >= (first_cap if index == 0 else cap):
                self.buckets[index] = (size, current)
                index, current, size = index + 1, [], 0
        if current:
            self.buckets[index] = (size, current)

    def emit(self):
        with self._lock:
            items = sorted(self.buckets.items())
        for index, (nbytes, names) in items:
            self._lib.comm_bucket(index, nbytes, names)
        if self.mode == "approximate":
            self._lib.set_metadata("ddp_buckets", "approximate")
