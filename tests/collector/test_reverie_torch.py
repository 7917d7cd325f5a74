"""Unit tests of frameworks/pytorch/reverie_torch without torch or a GPU.

A fake collector library records the C API calls; fake modules, tensors and
a tiny reverse-mode "autograd" fire the same hooks torch would, in the same
order (tensor hooks when a gradient is computed, parameter hooks when a
parameter's gradient is). The last test loads the real
libreverie_collector.so when the build provides it (REVERIE_TEST_COLLECTOR_LIB).
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
import warnings

import reverie_torch
from reverie_torch import _layers, _lib, _training

F, B, U = _lib.PHASE_FORWARD, _lib.PHASE_BACKWARD, _lib.PHASE_UPDATE


class FakeLib:
    def __init__(self, start_result=_lib.OK, configure_result=_lib.OK):
        self.calls = []
        self.start_result = start_result
        self.configure_result = configure_result
        self.lock = threading.Lock()

    def _log(self, *call):
        with self.lock:
            self.calls.append(call)

    def configure(self, key, value):
        self._log("configure", key, str(value))
        return self.configure_result

    def start(self):
        self._log("start")
        return self.start_result

    def stop(self):
        self._log("stop")
        return _lib.OK

    def set_metadata(self, key, value):
        self._log("metadata", key, value)

    def layer_push(self, name, phase):
        self._log("push", name, phase, threading.get_ident())

    def layer_pop(self):
        self._log("pop", threading.get_ident())

    def range_push(self, name, phase):
        self._log("push", name, phase, threading.get_ident(), "annotation")

    def step_begin(self):
        self._log("begin")

    def step_end(self):
        self._log("end")

    def comm_bucket(self, index, nbytes, names):
        self._log("bucket", index, nbytes, tuple(names))

    def parameter(self, name, layer, nbytes, dtype=""):
        self._log("param", name, layer, nbytes, dtype)

    def marks(self):
        """push/pop as (kind, name, phase) with pops resolved to their push."""
        out, stacks = [], {}
        for c in self.calls:
            if c[0] == "push":
                stacks.setdefault(c[3], []).append((c[1], c[2]))
                out.append(("+", c[1], c[2]))
            elif c[0] == "pop":
                name, phase = stacks[c[1]].pop()
                out.append(("-", name, phase))
        return out


class Handle:
    def __init__(self, hooks, fn):
        self.hooks, self.fn = hooks, fn

    def remove(self):
        if self.fn in self.hooks:
            self.hooks.remove(self.fn)


class Tensor:
    """requires_grad + register_hook, like torch.Tensor; `producer` is the op."""

    def __init__(self, requires_grad=False, numel=1, dtype="torch.float32"):
        self.requires_grad = requires_grad
        self.hooks = []
        self._numel = numel
        self.dtype = dtype

    def register_hook(self, fn):
        self.hooks.append(fn)
        return Handle(self.hooks, fn)

    def grad_ready(self):
        for fn in list(self.hooks):
            fn(object())

    def numel(self):
        return self._numel

    def element_size(self):
        return 4


class Tape:
    """Records ops; backward() replays them in reverse, firing hooks."""

    def __init__(self):
        self.ops = []

    def op(self, inputs, params):
        out = Tensor(requires_grad=any(t.requires_grad for t in list(inputs) + list(params)))
        self.ops.append((out, list(inputs), list(params)))
        return out

    def backward(self, loss):
        loss.grad_ready()
        for out, inputs, params in reversed(self.ops):
            for p in params:
                if p.requires_grad:
                    p.grad_ready()
            for t in inputs:
                if t.requires_grad:
                    t.grad_ready()


class Module:
    def __init__(self, tape):
        self.tape = tape
        self._children = {}
        self._params = {}
        self.pre, self.post = [], []

    def add(self, name, child):
        self._children[name] = child
        return child

    def param(self, name, numel):
        self._params[name] = Tensor(requires_grad=True, numel=numel)

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._children.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix=""):
        for name, p in self._params.items():
            yield (f"{prefix}.{name}" if prefix else name), p
        for name, child in self._children.items():
            yield from child.named_parameters(f"{prefix}.{name}" if prefix else name)

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def register_forward_pre_hook(self, fn):
        self.pre.append(fn)
        return Handle(self.pre, fn)

    def register_forward_hook(self, fn):
        self.post.append(fn)
        return Handle(self.post, fn)

    def __call__(self, x):
        for fn in list(self.pre):
            fn(self, (x,))
        out = self.forward(x)
        for fn in list(self.post):
            fn(self, (x,), out)
        return out


class Linear(Module):
    def __init__(self, tape, n):
        super().__init__(tape)
        self.param("weight", n * n)
        self.param("bias", n)

    def forward(self, x):
        return self.tape.op([x], self._params.values())


class ReLU(Module):
    def forward(self, x):
        return self.tape.op([x], [])


class Seq(Module):
    def __init__(self, tape):
        super().__init__(tape)
        self.fc1 = self.add("fc1", Linear(tape, 4))
        self.relu = self.add("relu", ReLU(tape))
        self.fc2 = self.add("fc2", Linear(tape, 2))

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def make_model():
    tape = Tape()
    return tape, Seq(tape)


class LayerTrackerTest(unittest.TestCase):
    def test_pop_closes_inner_ranges_and_counts(self):
        lib = FakeLib()
        t = _layers.LayerTracker(lib)
        t.push("a", F)
        t.push("b", F)
        t.push("c", F)
        self.assertTrue(t.pop("a", F))
        self.assertEqual([c[0] for c in lib.calls], ["push"] * 3 + ["pop"] * 3)
        self.assertEqual(t.anomalies["closed_by_parent"], 2)
        self.assertFalse(t.pop("b", F))
        self.assertEqual(t.anomalies["end_not_open"], 1)

    def test_stale_ranges_close_before_a_new_step_pushes(self):
        lib = FakeLib()
        t = _layers.LayerTracker(lib)
        t.push("left_open", B)
        t.generation = 1
        t.push("next", F)
        self.assertEqual(lib.marks(), [("+", "left_open", B), ("-", "left_open", B),
                                       ("+", "next", F)])
        self.assertEqual(t.anomalies["closed_late"], 1)


class ModuleHooksTest(unittest.TestCase):
    def run_step(self, backward_thread=False):
        tape, model = make_model()
        lib = FakeLib()
        tracker = _layers.LayerTracker(lib)
        hooks = _layers.ModuleHooks(model, tracker)
        loss = model(Tensor(requires_grad=False))
        if backward_thread:
            th = threading.Thread(target=tape.backward, args=(loss,))
            th.start()
            th.join()
        else:
            tape.backward(loss)
        return lib, hooks, model, tracker

    def test_forward_and_backward_ranges_nest(self):
        lib, _, _, tracker = self.run_step()
        self.assertEqual(lib.marks(), [
            ("+", "Seq", F), ("+", "fc1", F), ("-", "fc1", F), ("+", "relu", F),
            ("-", "relu", F), ("+", "fc2", F), ("-", "fc2", F), ("-", "Seq", F),
            # backward: the model starts first (outermost), fc2 ends before relu starts,
            # fc1 (input needs no grad) and the model end with their parameters' grads.
            ("+", "Seq", B), ("+", "fc2", B), ("-", "fc2", B), ("+", "relu", B),
            ("-", "relu", B), ("+", "fc1", B), ("-", "fc1", B), ("-", "Seq", B),
        ])
        self.assertEqual(sum(tracker.anomalies.values()), 0, tracker.anomalies)

    def test_backward_on_another_thread_uses_that_threads_stack(self):
        lib, _, _, _ = self.run_step(backward_thread=True)
        main = threading.get_ident()
        backward_threads = {c[3] for c in lib.calls if c[0] == "push" and c[2] == B}
        self.assertEqual(len(backward_threads), 1)
        self.assertNotIn(main, backward_threads)

    def test_module_called_twice_gets_two_ranges(self):
        tape = Tape()
        lib = FakeLib()
        relu = ReLU(tape)
        hooks = _layers.ModuleHooks(relu, _layers.LayerTracker(lib))
        x = Tensor(requires_grad=True)
        y = relu(relu(x))
        tape.backward(y)
        self.assertEqual([m for m in lib.marks() if m[2] == B],
                         [("+", "ReLU", B), ("-", "ReLU", B), ("+", "ReLU", B), ("-", "ReLU", B)])
        hooks.remove()
        self.assertEqual(relu.pre, [])
        self.assertEqual(relu.post, [])

    def test_reused_leaf_input_does_not_accumulate_old_calls(self):
        tape, model = make_model()
        lib = FakeLib()
        tracker = _layers.LayerTracker(lib)
        _layers.ModuleHooks(model, tracker)
        x = Tensor(requires_grad=True)  # the same leaf every step
        for generation in range(3):
            tracker.generation = generation
            tape.ops.clear()
            tape.backward(model(x))
        self.assertEqual(len(x._reverie_calls["in"]), 2)  # Seq and fc1, this step only
        self.assertEqual(len(x.hooks), 1)
        self.assertEqual(sum(tracker.anomalies.values()), 0, tracker.anomalies)

    def test_disabled_hooks_record_nothing(self):
        tape, model = make_model()
        lib = FakeLib()
        _layers.ModuleHooks(model, _layers.LayerTracker(lib), enabled=lambda: False)
        tape.backward(model(Tensor()))
        self.assertEqual(lib.calls, [])


class FakeOptimizer:
    def __init__(self, with_hooks=True):
        self.pre, self.post, self.steps, self.zeroed = [], [], 0, 0
        if with_hooks:
            self.register_step_pre_hook = lambda fn: (self.pre.append(fn), Handle(self.pre, fn))[1]
            self.register_step_post_hook = lambda fn: (self.post.append(fn), Handle(self.post, fn))[1]

    def step(self):
        for fn in list(self.pre):
            fn(self, (), {})
        self.steps += 1
        for fn in list(self.post):
            fn(self, (), {})

    def zero_grad(self, set_to_none=True):
        self.zeroed += 1


class TrainingTest(unittest.TestCase):
    def test_optimizer_step_hooks_and_fallback_wrapper(self):
        # Named as PyTorch's profiler names them, so that reverie detects the
        # optimizer in a collector trace as in a Kineto trace (issue 32).
        step = "Optimizer.step#FakeOptimizer.step"
        zero = "Optimizer.zero_grad#FakeOptimizer.zero_grad"
        for with_hooks in (True, False):
            lib = FakeLib()
            opt = FakeOptimizer(with_hooks)
            hooks = _training.OptimizerHooks(opt, _layers.LayerTracker(lib))
            opt.step()
            opt.zero_grad(set_to_none=False)
            self.assertEqual(lib.marks(), [("+", step, U), ("-", step, U),
                                           ("+", zero, U), ("-", zero, U)])
            self.assertEqual(lib.calls[0][-1], "annotation")  # not a model layer
            self.assertEqual(opt.zeroed, 1)
            hooks.remove()
            self.assertNotIn("zero_grad", vars(opt))  # the class's method again
            opt.step()
            opt.zero_grad()
            self.assertEqual((opt.steps, opt.zeroed), (2, 2))
            self.assertEqual(len(lib.marks()), 4, "hooks removed")

    def test_parameters_named_by_module_path(self):
        _, model = make_model()
        lib = FakeLib()
        names = _training.record_parameters(model, lib)
        params = [c for c in lib.calls if c[0] == "param"]
        self.assertEqual(params[0], ("param", "fc1.weight", "fc1", 64, "Float"))
        self.assertEqual(params[-1], ("param", "fc2.bias", "fc2", 8, "Float"))
        self.assertEqual(len(names), 4)

    def test_ddp_buckets_from_the_comm_hook(self):
        _, inner = make_model()

        class DistributedDataParallel:
            def __init__(self, module):
                self.module = module
                self.hook = None

            def register_comm_hook(self, state, hook):
                self.hook = hook

        class Bucket:
            def __init__(self, index, params):
                self._i, self._p = index, params

            def index(self):
                return self._i

            def parameters(self):
                return self._p

        ddp = DistributedDataParallel(inner)
        lib = FakeLib()
        names = _training.record_parameters(ddp, lib)
        reduced = []
        buckets = _training.DdpBuckets(ddp, names, lib,
                                       allreduce_hook=lambda s, b: reduced.append(b) or "future")
        self.assertEqual(buckets.mode, "comm_hook")
        p = inner.parameters()
        self.assertEqual(ddp.hook(None, Bucket(0, [p[3], p[2]])), "future")
        self.assertEqual(ddp.hook(None, Bucket(1, [p[1], p[0]])), "future")
        self.assertEqual(len(reduced), 2)
        buckets.emit()
        self.assertEqual([c for c in lib.calls if c[0] == "bucket"], [
            ("bucket", 0, 24, ("fc2.bias", "fc2.weight")),
            ("bucket", 1, 80, ("fc1.bias", "fc1.weight")),
        ])

    def test_ddp_buckets_fallback_is_marked_approximate(self):
        _, inner = make_model()

        class DistributedDataParallel:
            bucket_bytes_cap = 50

            def __init__(self, module):
                self.module = module

            def register_comm_hook(self, state, hook):
                raise RuntimeError("register_comm_hook may only be called once")

        ddp = DistributedDataParallel(inner)
        lib = FakeLib()
        buckets = _training.DdpBuckets(ddp, _training.record_parameters(ddp, lib), lib,
                                       allreduce_hook=lambda s, b: None)
        self.assertEqual(buckets.mode, "approximate")
        buckets.emit()
        emitted = [c for c in lib.calls if c[0] == "bucket"]
        self.assertEqual(sum(len(c[3]) for c in emitted), 4)
        self.assertEqual(emitted[0][3][0], "fc2.bias")  # reverse parameter order
        self.assertIn(("metadata", "ddp_buckets", "approximate"), lib.calls)


class ProfilerTest(unittest.TestCase):
    def test_session_calls_in_order(self):
        tape, model = make_model()
        opt = FakeOptimizer()
        lib = FakeLib()
        with reverie_torch.profile(model, opt, out="t.pb", steps=3, warmup=2, lib=lib,
                                   framework="fake 1.0") as prof:
            for _ in range(2):
                tape.backward(model(Tensor()))
                opt.step()
                prof.step()
        kinds = [c[0] for c in lib.calls]
        self.assertEqual(lib.calls[:4], [("configure", "REVERIE_OUTPUT", "t.pb"),
                                         ("configure", "REVERIE_STEPS", "3"),
                                         ("configure", "REVERIE_WARMUP", "2"), ("start",)])
        self.assertIn(("metadata", "framework", "fake 1.0"), lib.calls)
        self.assertEqual(kinds.count("param"), 4)
        self.assertEqual(kinds.count("begin"), 3)
        self.assertEqual(kinds.count("end"), 2)  # the empty third step is not ended
        self.assertEqual(kinds[-1], "stop")
        self.assertEqual(kinds.count("push"), kinds.count("pop"))
        self.assertEqual(model.pre, [])  # hooks removed at exit
        self.assertEqual(opt.pre, [])

    def test_partial_last_step_is_ended(self):
        tape, model = make_model()
        lib = FakeLib()
        with reverie_torch.profile(model, lib=lib):
            tape.backward(model(Tensor()))
        kinds = [c[0] for c in lib.calls]
        self.assertEqual(kinds.count("begin"), 1)
        self.assertEqual(kinds.count("end"), 1)

    def test_already_started_by_injection_warns_and_records(self):
        tape, model = make_model()
        lib = FakeLib(configure_result=_lib.ALREADY_STARTED)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with reverie_torch.profile(model, lib=lib):
                model(Tensor())
        self.assertTrue(any("already started" in str(w.message) for w in caught))
        self.assertIn(("start",), lib.calls)
        self.assertTrue(any(c[0] == "push" for c in lib.calls))

    def test_not_collecting_installs_nothing(self):
        _, model = make_model()
        lib = FakeLib(start_result=_lib.NOT_COLLECTING)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            with reverie_torch.profile(model, lib=lib) as prof:
                model(Tensor())
                prof.step()
                with prof.region("data", reverie_torch.PHASE_DATA_LOADING):
                    pass
        self.assertEqual([c[0] for c in lib.calls][-1], "start")
        self.assertEqual(model.pre, [])

    def test_bad_setting_raises(self):
        _, model = make_model()
        with self.assertRaises(ValueError):
            reverie_torch.profile(model, lib=FakeLib(configure_result=_lib.BAD_ARGUMENT)).start()


class LibraryTest(unittest.TestCase):
    def test_missing_library_is_a_clear_error(self):
        old = os.environ.get("REVERIE_COLLECTOR_LIB")
        os.environ["REVERIE_COLLECTOR_LIB"] = "/nonexistent/libreverie_collector.so"
        try:
            with self.assertRaises(reverie_torch.CollectorNotFound) as ctx:
                reverie_torch.CollectorLib()
            self.assertIn("/nonexistent", str(ctx.exception))
        finally:
            if old is None:
                del os.environ["REVERIE_COLLECTOR_LIB"]
            else:
                os.environ["REVERIE_COLLECTOR_LIB"] = old

    def test_candidates_start_with_the_environment(self):
        os.environ["REVERIE_COLLECTOR_LIB"] = "/x/libreverie_collector.so"
        try:
            self.assertEqual(reverie_torch.candidate_paths()[0], "/x/libreverie_collector.so")
        finally:
            del os.environ["REVERIE_COLLECTOR_LIB"]

    @unittest.skipUnless(os.environ.get("REVERIE_TEST_COLLECTOR_LIB"),
                         "the build has no libreverie_collector.so (no CUDA toolkit)")
    def test_real_library_records_the_fake_model(self):
        """The real .so in a child process: without a GPU driver it records
        the host-side markers (one warning line); with one, CUPTI too."""
        lib_path = os.environ["REVERIE_TEST_COLLECTOR_LIB"]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "torch.pb")
            script = textwrap.dedent(f"""
                import sys
                sys.path.insert(0, {os.path.dirname(__file__)!r})
                from test_reverie_torch import Tensor, make_model, FakeOptimizer
                import reverie_torch
                lib = reverie_torch.CollectorLib({lib_path!r})
                tape, model = make_model()
                opt = FakeOptimizer()
                with reverie_torch.profile(model, opt, out={out!r}, steps=2, warmup=1,
                                           lib=lib) as prof:
                    for _ in range(4):
                        tape.backward(model(Tensor()))
                        opt.step()
                        prof.step()
                print("status", prof.status)
            """)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
            r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               env=env, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            status = int(r.stdout.split()[-1])
            self.assertIn(status, (_lib.OK, _lib.HOST_ONLY))
            lines = [l for l in r.stderr.splitlines() if l.startswith("reverie-collector")]
            self.assertEqual(len(lines), 1 if status == _lib.HOST_ONLY else 0, r.stderr)
            with open(out, "rb") as f:
                data = f.read()
            self.assertIn(b"reverie.trace", data[:32])
            for name in (b"fc1.weight", b"Optimizer.step#FakeOptimizer.step", b"Step#1",
                         b"Step#2"):
                self.assertIn(name, data)
            self.assertNotIn(b"Step#0", data)  # warmup
            self.assertNotIn(b"Step#3", data)


if __name__ == "__main__":
    unittest.main()
