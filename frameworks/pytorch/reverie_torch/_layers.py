"""Layer ranges from nn.Module hooks, mirrored onto the collector's C API.

The collector keeps one stack of open ranges per thread and closes the
innermost on ``reverie_layer_pop``. Module hooks do not always arrive in
stack order (a module whose input needs no gradient has no "backward ended"
signal of its own; residual branches finish out of order), so LayerTracker
keeps its own copy of each thread's stack and turns "range X ended" into the
right number of pops: ranges opened inside X and still open end with it.

Backward ranges come from tensor hooks (``Tensor.register_hook``), not from
``register_full_backward_hook``: full backward hooks wrap module outputs in
views that in-place ops (``ReLU(inplace=True)`` in torchvision's ResNet)
reject. A module's backward starts when the gradient of one of its outputs
is computed and ends when the gradients of all its inputs that need one are
computed; a module none of whose inputs needs a gradient (the first layer,
the model itself) ends when the gradients of all its parameters are.

Everything here is duck-typed (``register_hook``, ``requires_grad``,
``named_modules``...), so the unit tests drive it with fake modules and
tensors, without torch.
"""

import collections
import threading

from . import _lib


def iter_tensors(obj, depth=0):
    """Tensor-like objects inside nested tuples/lists/dicts (module args)."""
    if depth > 4:
        return
    if hasattr(obj, "register_hook") and hasattr(obj, "requires_grad"):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from iter_tensors(x, depth + 1)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from iter_tensors(x, depth + 1)


def needs_grad(obj):
    return [t for t in iter_tensors(obj) if getattr(t, "requires_grad", False)]


class LayerTracker:
    """Per-thread stacks of open ranges; every push/pop reaches the library.

    Invariant: for each thread, ``_stack()`` lists exactly the ranges this
    tracker opened on the collector for that thread and has not closed, in
    push order.
    """

    def __init__(self, lib):
        self._lib = lib
        self._local = threading.local()
        self.generation = 0  # bumped per step; stale entries close first
        self.pushes = 0  # ranges opened so far (any thread)
        self.anomalies = collections.Counter()

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def push(self, name, phase, layer=True):
        """Opens a range: a model layer, or (layer=False) another region."""
        stack = self._stack()
        # Ranges left open by an earlier step on this thread (their end
        # signal never came) end now, before anything new opens.
        while stack and stack[0][2] < self.generation:
            stack.pop()
            self._lib.layer_pop()
            self.anomalies["closed_late"] += 1
        stack.append((name, phase, self.generation))
        self.pushes += 1
        if layer:
            self._lib.layer_push(name, phase)
        else:
            self._lib.range_push(name, phase)

    def pop(self, name, phase):
        """Ends the innermost open (name, phase) range and those inside it."""
        stack = self._stack()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == name and stack[i][1] == phase:
                break
        else:
            self.anomalies["end_not_open"] += 1
            return False
        while len(stack) > i + 1:
            stack.pop()
            self._lib.layer_pop()
            self.anomalies["closed_by_parent"] += 1
        stack.pop()
        self._lib.layer_pop()
        return True

    def close_all(self):
        """Ends every range open on the calling thread."""
        stack = self._stack()
        while stack:
            stack.pop()
            self._lib.layer_pop()

    def depth(self):
        return len(self._stack())


class _Call:
    """One call of one module: its forward and the backward it causes."""

    __slots__ = ("name", "inputs_pending", "params_pending", "started", "ended")

    def __init__(self, name):
        self.name = name
        self.inputs_pending = 0
        self.params_pending = None  # set of parameter ids, when inputs need no grad
        self.started = False
        self.ended = False


class ModuleHooks:
    """Forward/backward layer ranges for every module of ``model``.

    ``model.named_modules()`` names the ranges (module paths; the root is
    called after its class). Hooks are removed by ``remove()``.
    """

    def __init__(self, model, tracker, enabled=lambda: True):
        self._tracker = tracker
        self._enabled = enabled
        self._lock = threading.Lock()
        self._handles = []
        self._open_calls = collections.defaultdict(list)  # module id -> [_Call] in forward
        self._param_waiters = collections.defaultdict(list)  # param id -> [_Call]
        self._module_params = {}
        root_name = type(model).__name__
        for path, module in model.named_modules():
            name = path or root_name
            params = [p for p in module.parameters() if getattr(p, "requires_grad", False)]
            self._module_params[id(module)] = [id(p) for p in params]
            self._handles.append(module.register_forward_pre_hook(self._make_pre(name)))
            self._handles.append(module.register_forward_hook(self._make_post()))
        seen = set()
        for _, p in model.named_parameters():
            if getattr(p, "requires_grad", False) and id(p) not in seen:
                seen.add(id(p))
                self._handles.append(p.register_hook(self._make_param_hook(id(p))))

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def new_step(self):
        """Forgets waits that never completed (unused parameters...)."""
        with self._lock:
            self._param_waiters.clear()
            self._open_calls.clear()

    # Forward -------------------------------------------------------------
    def _make_pre(self, name):
        def pre_hook(module, args):
            if not self._enabled():
                return None
            call = _Call(name)
            inputs = needs_grad(args)
            call.inputs_pending = len(inputs)
            if not inputs:
                call.params_pending = set(self._module_params.get(id(module), ()))
            with self._lock:
                self._open_calls[id(module)].append(call)
            self._tracker.push(name, _lib.PHASE_FORWARD)
            for t in inputs:
                self._attach(t, "in", call)
            return None
        return pre_hook

    def _make_post(self):
        def post_hook(module, args, output):
            with self._lock:
                calls = self._open_calls.get(id(module))
                call = calls.pop() if calls else None
            if call is None:
                return None  # enabled mid-forward
            self._tracker.pop(call.name, _lib.PHASE_FORWARD)
            for t in needs_grad(output):
                self._attach(t, "out", call)
            return None
        return post_hook

    def _attach(self, tensor, role, call):
        """One hook per tensor, whatever the number of modules watching it.

        The same tensor is often the output of a module and of its parent
        (the last child's output is the model's), and the output of one
        module and the input of the next. When its gradient is computed,
        modules that consumed it end first (innermost first), then modules
        that produced it start (outermost first): so the ranges nest.
        Hooks registered separately would fire in registration order, the
        opposite.
        """
        roles = getattr(tensor, "_reverie_calls", None)
        if roles is None:
            roles = {"generation": self._tracker.generation, "in": [], "out": []}
            try:
                tensor._reverie_calls = roles
            except AttributeError:  # a tensor type without __dict__
                pass
            tensor.register_hook(lambda grad, roles=roles: self._on_grad(roles))
        elif roles["generation"] != self._tracker.generation:
            # A tensor that outlives a step (a leaf input reused every
            # step): forget the calls of earlier steps.
            roles.update(generation=self._tracker.generation, **{"in": [], "out": []})
        roles[role].append(call)

    def _on_grad(self, roles):
        for call in reversed(roles["in"]):
            self._input_done(call)
        for call in reversed(roles["out"]):
            self._output_grad(call)
        return None

    # Backward ------------------------------------------------------------
    def _output_grad(self, call):
        with self._lock:
            if call.started:
                return
            call.started = True
            if call.params_pending is not None:
                for pid in call.params_pending:
                    self._param_waiters[pid].append(call)
        self._tracker.push(call.name, _lib.PHASE_BACKWARD)

    def _input_done(self, call):
        with self._lock:
            call.inputs_pending -= 1
            done = call.inputs_pending == 0 and call.started and not call.ended
            if done:
                call.ended = True
        if done:
            self._tracker.pop(call.name, _lib.PHASE_BACKWARD)

    def _make_param_hook(self, pid):
        def param_hook(grad):
            finished = []
            with self._lock:
                for call in self._param_waiters.pop(pid, ()):
                    call.params_pending.discard(pid)
                    if not call.params_pending and not call.ended:
                        call.ended = True
                        finished.append(call)
            # Innermost (latest started) first.
            for call in reversed(finished):
                self._tracker.pop(call.name, _lib.PHASE_BACKWARD)
            return None
        return param_hook
