#!/usr/bin/env python3
"""Writes examples/tiny_mlp_training.json: a SYNTHETIC PyTorch-profiler (Kineto)
trace of 3 training iterations of a tiny 3-layer MLP on one NVIDIA A100.

Nothing here was measured: the event structure follows what torch.profiler
writes for such a loop (with_modules=True, foreach=False Adam), and the
durations are plausible round numbers with a little seeded jitter. See
examples/README.md for what it models. Deterministic: re-running it gives
the same bytes.

usage: python3 examples/make_synthetic_trace.py [OUT.json]
"""
import json
import os
import random
import sys

PID, MAIN, AUTOGRAD = 4242, 4242, 4300
COMPUTE, COPY = 7, 20           # CUDA streams
DEVICE = 0
BASE_US = 5_000_000_000.0       # trace clock origin, in microseconds
LAUNCH_LATENCY = 4.0            # launch call end -> kernel start on an idle stream
BATCH, IN, HIDDEN, OUT = 512, 1024, 4096, 10
LAYERS = [("Linear_0", IN, HIDDEN), ("Linear_1", HIDDEN, HIDDEN), ("Linear_2", HIDDEN, OUT)]

rng = random.Random(2024)
events = []
state = {"corr": 1000, "ext": 1, "seq": 100, "pyid": 10, "flow": 1, "event_id": 1}
stream_free = {COMPUTE: 0.0, COPY: 0.0}


def j(x):
    """Jitter a duration by up to +-8%, rounded to ns."""
    return round(x * rng.uniform(0.92, 1.08), 3)


def us(t):
    return round(BASE_US + t, 3)


def nxt(key):
    state[key] += 1
    return state[key]


def X(cat, name, tid, t, dur, pid=PID, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": us(t), "dur": round(dur, 3)}
    if args:
        e["args"] = args
    events.append(e)
    return e


def gpu(kind, name, stream, ready, dur, corr, ext, launch_t, tid, **extra):
    """A GPU activity launched at `launch_t` by thread `tid`; returns its end."""
    start = max(ready, stream_free[stream])
    stream_free[stream] = start + dur
    args = {"External id": ext, "device": DEVICE, "stream": stream, "correlation": corr}
    args.update(extra)
    X(kind, name, stream, start, dur, pid=DEVICE, **args)
    events.append({"ph": "s", "id": corr, "pid": PID, "tid": tid, "ts": us(launch_t), "cat": "ac2g", "name": "ac2g"})
    events.append({"ph": "f", "id": corr, "pid": DEVICE, "tid": stream, "ts": us(start), "cat": "ac2g",
                   "name": "ac2g", "bp": "e"})
    return start + dur


def launch(tid, t, kernel, kdur, ext, stream=COMPUTE, grid=(8, 1, 1), block=(256, 1, 1)):
    """cudaLaunchKernel at t on `tid` + its kernel; returns CPU time after the call."""
    corr = nxt("corr")
    call = j(5.0)
    X("cuda_runtime", "cudaLaunchKernel", tid, t, call, **{"External id": ext, "cbid": 211, "correlation": corr})
    gpu("kernel", kernel, stream, t + call + LAUNCH_LATENCY, j(kdur), corr, ext, t, tid,
        **{"registers per thread": 64, "grid": list(grid), "block": list(block)})
    return t + call


def op(tid, t, name, body, seq=None, own=2.0):
    """A cpu_op from t; `body(t, ext)` adds children and returns the time they end."""
    ext = nxt("ext")
    args = {"External id": ext}
    if seq is not None:
        args["Sequence number"] = seq
        args["Fwd thread id"] = 0 if tid == MAIN else 1
    e = X("cpu_op", name, tid, t, 0.0, **args)
    end = body(t + j(own), ext) + j(own)
    e["dur"] = round(end - t, 3)
    return e, end


def kernel_op(tid, t, name, kernel, kdur, seq=None, grid=(8, 1, 1)):
    return op(tid, t, name, lambda t0, ext: launch(tid, t0, kernel, kdur, ext, grid=grid), seq)


def module(name, parent_id, t, body):
    pyid = nxt("pyid")
    e = X("python_function", "nn.Module: " + name, MAIN, t, 0.0,
          **{"Python parent id": parent_id, "Python id": pyid})
    end = body(t + j(3.0), pyid) + j(2.0)
    e["dur"] = round(end - t, 3)
    return end


GEMM = "ampere_sgemm_64x32_sliced1x4_tn"
GEMM_NT = "ampere_sgemm_32x32_sliced1x4_nt"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::clamp_min_scalar_kernel, at::detail::Array<char*, 2>)"
RELU_BWD = "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward_kernel, at::detail::Array<char*, 3> >(int, at::native::threshold_backward_kernel, at::detail::Array<char*, 3>)"
SUM = "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::{op}_kernel_cuda, at::detail::Array<char*, {n}> >"


def step(n, t0):
    """One training iteration starting at t0 (us); returns its end."""
    step_e = X("user_annotation", f"ProfilerStep#{n}", MAIN, t0, 0.0, **{"External id": nxt("ext")})
    t = t0 + j(4.0)
    X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", MAIN, t, j(55.0),
      **{"External id": nxt("ext")})
    t += 62.0

    # Inputs and labels to the GPU on the copy stream; the compute stream waits.
    def copies(t1, ext):
        for nbytes in (BATCH * IN * 4, BATCH * 8):
            corr = nxt("corr")
            call = j(7.0)
            X("cuda_runtime", "cudaMemcpyAsync", MAIN, t1, call, **{"External id": ext, "cbid": 41, "correlation": corr})
            gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", COPY, t1 + call + 2.0, j(3.0 + nbytes / 20e3),
                corr, ext, t1, MAIN, bytes=nbytes)
            t1 += call + 3.0
        return t1

    _, t = op(MAIN, t, "aten::to", copies)
    record_corr = nxt("corr")
    ev_id = nxt("event_id")
    X("cuda_runtime", "cudaEventRecord", MAIN, t, j(3.0), **{"External id": state["ext"], "cbid": 135, "correlation": record_corr})
    t += 4.0
    wait_corr = nxt("corr")
    X("cuda_runtime", "cudaStreamWaitEvent", MAIN, t, j(2.5), **{"External id": state["ext"], "cbid": 147, "correlation": wait_corr})
    X("cuda_sync", "Stream Wait Event", COMPUTE, t + 1.0, 1.0, pid=DEVICE,
      **{"External id": state["ext"], "cuda_sync_kind": "Stream Wait Event", "wait_on_stream": COPY,
         "wait_on_cuda_event_record_corr_id": record_corr, "wait_on_cuda_event_id": ev_id,
         "stream": COMPUTE, "correlation": wait_corr, "device": DEVICE, "context": 1})
    stream_free[COMPUTE] = max(stream_free[COMPUTE], stream_free[COPY])
    t += 4.0

    X("user_annotation", "Optimizer.zero_grad#Adam.zero_grad", MAIN, t, j(9.0), **{"External id": nxt("ext")})
    t += 12.0

    # Forward: MLP_0 (three Linear, ReLU between), then the loss module.
    seqs = {}

    def mlp(t1, pyid):
        for i, (name, fan_in, fan_out) in enumerate(LAYERS):
            def linear(t2, lin_id, i=i, fan_out=fan_out):
                def lin_body(t3, ext):
                    seqs[("t", i)] = nxt("seq")
                    _, t3 = op(MAIN, t3, "aten::t", lambda t4, e: t4 + j(2.0), seq=seqs[("t", i)])
                    seqs[("addmm", i)] = nxt("seq")
                    _, t3 = kernel_op(MAIN, t3, "aten::addmm", GEMM, 6.0 + fan_out / 64.0,
                                      seq=seqs[("addmm", i)], grid=(max(1, fan_out // 64), 2, 1))
                    return t3
                return op(MAIN, t2, "aten::linear", lin_body)[1]
            t1 = module(name, pyid, t1, linear)
            if i < len(LAYERS) - 1:
                def relu(t2, relu_id, i=i):
                    seqs[("relu", i)] = nxt("seq")
                    return kernel_op(MAIN, t2, "aten::relu", RELU, 2.5, seq=seqs[("relu", i)])[1]
                t1 = module(f"ReLU_{i}", pyid, t1, relu)
        return t1

    t = module("MLP_0", 1, t, mlp)

    def loss(t1, pyid):
        def ce(t2, ext):
            seqs["log_softmax"] = nxt("seq")
            _, t2 = kernel_op(MAIN, t2, "aten::log_softmax", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", 3.0, seq=seqs["log_softmax"])
            seqs["nll"] = nxt("seq")
            _, t2 = kernel_op(MAIN, t2, "aten::nll_loss_nd", "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", 4.0, seq=seqs["nll"])
            return t2
        return op(MAIN, t1, "aten::cross_entropy_loss", ce)[1]

    t = module("CrossEntropyLoss_0", 1, t, loss)

    # loss.backward(): the seed gradient on the main thread, the graph on
    # autograd's device thread.
    _, t = kernel_op(MAIN, t + 3.0, "aten::ones_like", ELEMENTWISE.format(op="fill", n=1), 1.5)
    tb = t + j(12.0)

    def node(tb, node_name, seq, fwd_key, body):
        """evaluate_function + its XBackward0 op, with the fwdbwd flow into it."""
        outer_ext = nxt("ext")
        outer = X("cpu_op", "autograd::engine::evaluate_function: " + node_name, AUTOGRAD, tb, 0.0,
                  **{"External id": outer_ext, "Sequence number": seq, "Fwd thread id": 1})
        inner_t = tb + j(1.5)
        inner, end = op(AUTOGRAD, inner_t, node_name, body, seq=seq)
        if fwd_key is not None:
            fid = nxt("flow")
            fwd = next(e for e in events if e.get("args", {}).get("Sequence number") == seq and e["tid"] == MAIN)
            events.append({"ph": "s", "id": fid, "pid": PID, "tid": MAIN, "ts": fwd["ts"], "cat": "fwdbwd", "name": "fwdbwd"})
            events.append({"ph": "f", "id": fid, "pid": PID, "tid": AUTOGRAD, "ts": inner["ts"], "cat": "fwdbwd",
                           "name": "fwdbwd", "bp": "e"})
        end += j(1.5)
        outer["dur"] = round(end - tb, 3)
        return end + j(2.0)

    def kernels(specs):
        def body(t1, ext):
            for opname, kname, kdur in specs:
                _, t1 = kernel_op(AUTOGRAD, t1, opname, kname, kdur)
            return t1
        return body

    def accumulate(tb):
        for _ in range(2):  # bias, weight: first use of .grad, nothing to add
            ext = nxt("ext")
            X("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", AUTOGRAD, tb,
              j(6.0), **{"External id": ext})
            tb += 8.0
        return tb

    tb = node(tb, "NllLossBackward0", seqs["nll"], "nll", kernels([
        ("aten::zero_", ELEMENTWISE.format(op="fill", n=1), 1.5),
        ("aten::nll_loss_backward", "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)", 2.5)]))
    tb = node(tb, "LogSoftmaxBackward0", seqs["log_softmax"], "log_softmax", kernels([
        ("aten::_log_softmax_backward_data", "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, int)", 3.0)]))
    for i in reversed(range(len(LAYERS))):
        _, fan_in, fan_out = LAYERS[i]
        specs = []
        if i > 0:
            specs.append(("aten::mm", GEMM, 5.0 + fan_in / 64.0))       # grad input
        specs.append(("aten::mm", GEMM_NT, 6.0 + fan_in / 64.0))        # grad weight
        specs.append(("aten::sum", SUM, 3.0))                           # grad bias
        tb = node(tb, "AddmmBackward0", seqs[("addmm", i)], "addmm", kernels(specs))
        tb = node(tb, "TBackward0", seqs[("t", i)], "t", lambda t1, ext: t1 + j(2.0))
        tb = accumulate(tb)
        if i > 0:
            tb = node(tb, "ReluBackward0", seqs[("relu", i - 1)], "relu", kernels([
                ("aten::threshold_backward", RELU_BWD, 2.5)]))
    t = max(t, tb) + j(10.0)

    # Adam (foreach=False): a handful of small kernels per parameter.
    def adam(t1, ext):
        for i, (_, fan_in, fan_out) in enumerate(LAYERS):
            for numel in (fan_in * fan_out, fan_out):
                kdur = 1.8 + numel / 400e3
                for opname, kname in (("aten::lerp_", "lerp"), ("aten::mul_", "mul"), ("aten::addcmul_", "addcmul"),
                                      ("aten::sqrt", "sqrt"), ("aten::div_", "div"), ("aten::add_", "add"),
                                      ("aten::addcdiv_", "addcdiv")):
                    _, t1 = kernel_op(MAIN, t1, opname, ELEMENTWISE.format(op=kname, n=3), kdur,
                                      grid=(max(1, numel // 1024), 1, 1))
        return t1

    opt_ext = nxt("ext")
    opt = X("user_annotation", "Optimizer.step#Adam.step", MAIN, t, 0.0, **{"External id": opt_ext})
    t_end = adam(t + j(8.0), opt_ext) + j(5.0)
    opt["dur"] = round(t_end - t, 3)
    t = t_end + j(6.0)

    # loss.item(): a 4-byte DtoH copy, then the host waits for the stream.
    def item(t1, ext):
        def local_scalar(t2, ext2):
            corr = nxt("corr")
            call = j(9.0)
            X("cuda_runtime", "cudaMemcpyAsync", MAIN, t2, call, **{"External id": ext2, "cbid": 41, "correlation": corr})
            copy_end = gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", COMPUTE, t2 + call + 2.0, j(2.0), corr, ext2,
                           t2, MAIN, bytes=4)
            t2 += call + 1.0
            corr = nxt("corr")
            done = max(t2 + 3.0, copy_end + 2.0)
            X("cuda_runtime", "cudaStreamSynchronize", MAIN, t2, done - t2, **{"External id": ext2, "cbid": 131, "correlation": corr})
            sync_start = max(t2 + 1.0, copy_end - 2.0)
            X("cuda_sync", "Stream Sync", COMPUTE, sync_start, done - sync_start - 0.5, pid=DEVICE, **{"External id": ext2, "cuda_sync_kind": "Stream Sync", "stream": COMPUTE,
                                          "correlation": corr, "device": DEVICE, "context": 1})
            return done
        return op(MAIN, t1, "aten::_local_scalar_dense", local_scalar)[1]

    _, t = op(MAIN, t, "aten::item", item)
    t += j(20.0)
    step_e["dur"] = round(t - t0, 3)
    return t


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "tiny_mlp_training.json")
    t = 100.0
    for n in (10, 11, 12):
        t = step(n, t) + 1.0
    meta = [
        {"name": "process_name", "ph": "M", "ts": us(0), "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": us(0), "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_name", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": us(0), "pid": PID, "tid": MAIN, "args": {"name": "thread 4242 (python3)"}},
        {"name": "thread_name", "ph": "M", "ts": us(0), "pid": PID, "tid": AUTOGRAD, "args": {"name": "thread 4300 (pt_autograd_0)"}},
        {"name": "thread_name", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": COMPUTE, "args": {"name": "stream 7 "}},
        {"name": "thread_name", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": COPY, "args": {"name": "stream 20 "}},
    ]
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85097971712, "computeMajor": 8,
            "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
            "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 108,
            "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 166912, "sharedMemPerMultiprocessor": 167936}],
        "traceName": "tiny_mlp_training.json (synthetic, made by examples/make_synthetic_trace.py)",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
        "traceEvents": meta + events,
    }
    with open(out, "w") as f:
        f.write("{\n")
        keys = [k for k in doc if k != "traceEvents"]
        for k in keys:
            f.write(f"  {json.dumps(k)}: {json.dumps(doc[k], separators=(',', ':'))},\n")
        f.write('  "traceEvents": [\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in doc["traceEvents"]))
        f.write("\n  ]\n}\n")
    print(f"wrote {out}: {len(doc['traceEvents'])} events, {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
