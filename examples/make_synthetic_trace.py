#!/usr/bin/env python3
"""Writes SYNTHETIC PyTorch-profiler (Kineto) traces of 3 training steps
of a tiny 3-layer MLP on NVIDIA A100s:

- examples/tiny_mlp_training.json: one GPU;
- with --ddp: the two ranks of a DistributedDataParallel job (gradient
  all-reduce on an NCCL stream during backward), rank 1 a straggler whose
  kernels run 20% slower. The two files are computed together, so that each
  all-reduce ends at the same time on both ranks: when the later rank is
  ready, plus the transfer time.

Nothing here was measured: the event structure follows what torch.profiler
writes for such a loop (with_modules=True, foreach=False Adam, DDP with
default buckets), and the durations are plausible round numbers with a
little seeded jitter. See examples/README.md for what it models.
Deterministic: re-running it gives the same bytes.

usage: python3 examples/make_synthetic_trace.py [OUT.json]
       python3 examples/make_synthetic_trace.py --ddp [RANK0.json RANK1.json]
"""
import argparse
import json
import os
import random

PID, MAIN, AUTOGRAD = 4242, 4242, 4300
COMPUTE, COPY, NCCL = 7, 20, 28  # CUDA streams (NCCL: only with --ddp)
DEVICE = 0
BASE_US = 5_000_000_000.0       # trace clock origin, in microseconds
LAUNCH_LATENCY = 4.0            # launch call end -> kernel start on an idle stream
BATCH, IN, HIDDEN, OUT = 512, 1024, 4096, 10
LAYERS = [("Linear_0", IN, HIDDEN), ("Linear_1", HIDDEN, HIDDEN), ("Linear_2", HIDDEN, OUT)]

rng = random.Random(2024)
events = []
state = {"corr": 1000, "ext": 1, "seq": 100, "pyid": 10, "flow": 1, "event_id": 1}
stream_free = {COMPUTE: 0.0, COPY: 0.0}

# DistributedDataParallel (--ddp). None for the single-GPU trace; else the
# rank being written, see generate_rank().
ddp = None
WORLD_SIZE = 2
STRAGGLER_SLOWDOWN = 1.2        # rank 1's kernels: a GPU running at a lower clock
NCCL_BYTES_PER_US = 150e3       # ~150 GB/s effective all-reduce bandwidth (NVLink)
NCCL_LATENCY = 12.0
FIRST_BUCKET_BYTES, BUCKET_BYTES = 1 << 20, 25 << 20  # DDP's defaults
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
MUL = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)"
PG_ARGS = {"Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]",
           "Group size": WORLD_SIZE, "dtype": "Float", "In split size": "[]", "Out split size": "[]"}


def j(x):
    """Jitter a duration by up to +-8%, rounded to ns."""
    return round(x * rng.uniform(0.92, 1.08), 3)


def us(t):
    return round(BASE_US + t, 3)


def nxt(key):
    state[key] += 1
    return state[key]


def X(cat, name, tid, t, dur, pid=None, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": PID if pid is None else pid, "tid": tid, "ts": us(t), "dur": round(dur, 3)}
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
    kd = j(kdur) if ddp is None else round(j(kdur) * ddp["slowdown"], 3)
    gpu("kernel", kernel, stream, t + call + LAUNCH_LATENCY, kd, corr, ext, t, tid,
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


def event_record(tid, t, dur, ext):
    """cudaEventRecord at t; returns (its correlation, the event's id)."""
    corr, ev_id = nxt("corr"), nxt("event_id")
    X("cuda_runtime", "cudaEventRecord", tid, t, dur, **{"External id": ext, "cbid": 135, "correlation": corr})
    return corr, ev_id


def stream_wait(tid, t, dur, ext, stream, on_stream, record):
    """cudaStreamWaitEvent at t: `stream` waits for the event `record` (from
    event_record) recorded on `on_stream`; with its cuda_sync record."""
    corr = nxt("corr")
    X("cuda_runtime", "cudaStreamWaitEvent", tid, t, dur, **{"External id": ext, "cbid": 147, "correlation": corr})
    X("cuda_sync", "Stream Wait Event", stream, t + 1.0, 1.0, pid=DEVICE,
      **{"External id": ext, "cuda_sync_kind": "Stream Wait Event", "wait_on_stream": on_stream,
         "wait_on_cuda_event_record_corr_id": record[0], "wait_on_cuda_event_id": record[1],
         "stream": stream, "correlation": corr, "device": DEVICE, "context": 1})


def ddp_buckets():
    """DDP's gradient buckets as (layer, parameter, numel) lists, in launch order.

    After its first step DDP rebuilds the buckets in the order the
    gradients became ready in backward (here: Linear_2's bias, weight, then
    Linear_1's, then Linear_0's) and fills each until it reaches its cap:
    1 MiB for the first, 25 MiB after. For this MLP: {Linear_2.*, Linear_1.*}
    (67 MB, closed by Linear_1.weight) and {Linear_0.*} (17 MB).
    """
    buckets, cur, size = [], [], 0
    for i in reversed(range(len(LAYERS))):
        _, fan_in, fan_out = LAYERS[i]
        for name, numel in (("bias", fan_out), ("weight", fan_in * fan_out)):
            cur.append((i, name, numel))
            size += numel * 4
            if size >= (BUCKET_BYTES if buckets else FIRST_BUCKET_BYTES):
                buckets.append(cur)
                cur, size = [], 0
    if cur:
        buckets.append(cur)
    return buckets


BUCKETS = ddp_buckets()


def comm_args(nelems):
    return dict({"Collective name": "allreduce", "In msg nelems": nelems, "Out msg nelems": nelems}, **PG_ARGS)


def ddp_allreduce(t, bucket):
    """c10d::allreduce_ of a full bucket, called by the reducer's hook on
    autograd's thread at t; returns the CPU time after it.

    As ProcessGroupNCCL does it: an event recorded on the compute stream, the
    NCCL stream waits for it (the bucket's gradients), the NCCL kernel, and an
    event recorded on the NCCL stream for the later wait. The kernel starts
    when this rank is ready (`ddp["ready"]`) and ends when the job's
    collective ends (`ddp["ends"]`, computed over both ranks by write_ddp):
    on the rank that arrived first it spins, waiting for the other.
    """
    nelems = sum(numel for _, _, numel in BUCKETS[bucket])
    c10d = X("cpu_op", "c10d::allreduce_", AUTOGRAD, t, 0.0, **{"External id": nxt("ext")})
    t1 = t + j(14.0)
    ext = nxt("ext")
    rpc = X("cpu_op", "record_param_comms", AUTOGRAD, t1, 0.0,
            **dict({"External id": ext, "Rank": ddp["rank"], "Global rank start": 0, "Global rank stride": 1},
                   **comm_args(nelems)))
    t2 = t1 + j(4.0)
    grads = event_record(AUTOGRAD, t2, j(1.7), ext)
    grads_ready = stream_free[COMPUTE]  # what the event waits for: the compute work so far, up to the last mul_out
    t2 += 4.0
    stream_wait(AUTOGRAD, t2, j(1.8), ext, NCCL, COMPUTE, grads)
    t2 += 5.0
    corr = nxt("corr")
    call = j(8.0)
    X("cuda_runtime", "cudaLaunchKernel", AUTOGRAD, t2, call, **{"External id": ext, "cbid": 211, "correlation": corr})
    k = len(ddp["ready"])
    start = round(max(t2 + call + LAUNCH_LATENCY, stream_free[NCCL], grads_ready), 3)
    ddp["ready"].append(start)
    end = ddp["ends"][k] if k < len(ddp["ends"]) else start + ddp["transfer"][k]
    gpu("kernel", NCCL_KERNEL, NCCL, start, round(end - start, 3), corr, ext, t2, AUTOGRAD,
        **dict({"registers per thread": 96, "shared memory": 87568, "grid": [8, 1, 1], "block": [544, 1, 1]},
               **comm_args(nelems)))
    ddp["nccl_end"].append(stream_free[NCCL])
    t2 += call + 1.5
    ddp["done_events"].append(event_record(AUTOGRAD, t2, j(0.7), ext))
    t2 += 3.0
    rpc["dur"] = round(t2 - t1, 3)
    t2 += j(3.0)
    c10d["dur"] = round(t2 - t, 3)
    return t2


def ddp_finalize(tb):
    """Reducer::finalize_backward at the end of backward on autograd's thread:
    the compute stream waits for each bucket's all-reduce, then the averaged
    gradients are copied out of the bucket (so the optimizer waits too)."""
    for b, bucket in enumerate(BUCKETS):
        stream_wait(AUTOGRAD, tb, j(2.4), state["ext"], COMPUTE, NCCL, ddp["done_events"][b])
        stream_free[COMPUTE] = max(stream_free[COMPUTE], ddp["nccl_end"][b])
        tb += 5.0
        for _, _, numel in bucket:
            def copy(t1, ext, numel=numel):
                def memcpy(t2, ext2):
                    corr = nxt("corr")
                    call = j(7.0)
                    X("cuda_runtime", "cudaMemcpyAsync", AUTOGRAD, t2, call, **{"External id": ext2, "cbid": 41, "correlation": corr})
                    gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", COMPUTE, t2 + call + 2.0,
                        j(2.0 + numel * 4 / 700e3), corr, ext2, t2, AUTOGRAD, bytes=numel * 4)
                    return t2 + call
                return op(AUTOGRAD, t1, "aten::copy_", memcpy)[1]
            _, tb = op(AUTOGRAD, tb, "torch.distributed.ddp.reducer::copy_bucket_to_grad", copy)
            tb += j(3.0)
    return tb


GEMM = "ampere_sgemm_64x32_sliced1x4_tn"
GEMM_NT = "ampere_sgemm_32x32_sliced1x4_nt"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::clamp_min_scalar_kernel, at::detail::Array<char*, 2>)"
RELU_BWD = "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward_kernel, at::detail::Array<char*, 3> >(int, at::native::threshold_backward_kernel, at::detail::Array<char*, 3>)"
SUM = "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::{op}_kernel_cuda, at::detail::Array<char*, {n}> >"


def step(n, t0):
    """One training step starting at t0 (us); returns its end."""
    step_e = X("user_annotation", f"ProfilerStep#{n}", MAIN, t0, 0.0, **{"External id": nxt("ext")})
    if ddp is not None:
        ddp["done_events"], ddp["nccl_end"] = [], []
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
    copied = event_record(MAIN, t, j(3.0), state["ext"])
    t += 4.0
    stream_wait(MAIN, t, j(2.5), state["ext"], COMPUTE, COPY, copied)
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

    if ddp is None:
        t = module("MLP_0", 1, t, mlp)
    else:
        fwd = X("user_annotation", "DistributedDataParallel.forward", MAIN, t, 0.0, **{"External id": nxt("ext")})
        t_fwd = module("MLP_0", 1, t + j(6.0), mlp) + j(3.0)
        fwd["dur"] = round(t_fwd - t, 3)
        t = t_fwd

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

    def accumulate(tb, i):
        if ddp is None:
            for _ in range(2):  # bias, weight: first use of .grad, nothing to add
                ext = nxt("ext")
                X("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", AUTOGRAD, tb,
                  j(6.0), **{"External id": ext})
                tb += 8.0
            return tb
        _, fan_in, fan_out = LAYERS[i]
        for name, numel in (("bias", fan_out), ("weight", fan_in * fan_out)):
            ext = nxt("ext")
            outer = X("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", AUTOGRAD, tb,
                      0.0, **{"External id": ext})
            t1 = tb + j(1.5)
            X("cpu_op", "torch::autograd::AccumulateGrad", AUTOGRAD, t1, j(4.0), **{"External id": nxt("ext")})
            t1 += 5.0
            # DDP's hook: the gradient times 1/world_size into its bucket.
            _, t1 = op(AUTOGRAD, t1, "torch::distributed::reducer::mul_out",
                       lambda t2, e, numel=numel: kernel_op(AUTOGRAD, t2, "aten::mul", MUL, 1.8 + numel / 400e3,
                                                            grid=(max(1, numel // 1024), 1, 1))[1])
            for b, bucket in enumerate(BUCKETS):
                if bucket[-1][:2] == (i, name):  # the bucket is full: all-reduce it
                    t1 = ddp_allreduce(t1 + j(3.0), b)
            end = t1 + j(1.5)
            outer["dur"] = round(end - tb, 3)
            tb = end + j(2.0)
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
        tb = accumulate(tb, i)
        if i > 0:
            tb = node(tb, "ReluBackward0", seqs[("relu", i - 1)], "relu", kernels([
                ("aten::threshold_backward", RELU_BWD, 2.5)]))
    if ddp is not None:
        tb = ddp_finalize(tb)
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


A100 = {"name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85097971712, "computeMajor": 8,
        "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
        "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 108,
        "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 166912, "sharedMemPerMultiprocessor": 167936}
STEPS = (10, 11, 12)


def begin(seed, pid, autograd_tid, device):
    """Starts a new trace: empty event list, fresh ids, idle streams."""
    global PID, MAIN, AUTOGRAD, DEVICE
    PID, MAIN, AUTOGRAD, DEVICE = pid, pid, autograd_tid, device
    rng.seed(seed)
    events.clear()
    state.update({"corr": 1000, "ext": 1, "seq": 100, "pyid": 10, "flow": 1, "event_id": 1})
    stream_free.update({COMPUTE: 0.0, COPY: 0.0, NCCL: 0.0})


def metadata(streams):
    meta = [
        {"name": "process_name", "ph": "M", "ts": us(0), "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": us(0), "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_name", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": 0, "args": {"labels": f"GPU {DEVICE}"}},
        {"name": "thread_name", "ph": "M", "ts": us(0), "pid": PID, "tid": MAIN, "args": {"name": f"thread {MAIN} (python3)"}},
        {"name": "thread_name", "ph": "M", "ts": us(0), "pid": PID, "tid": AUTOGRAD,
         "args": {"name": f"thread {AUTOGRAD} (pt_autograd_0)"}},
    ]
    for s in streams:
        meta.append({"name": "thread_name", "ph": "M", "ts": us(0), "pid": DEVICE, "tid": s, "args": {"name": f"stream {s} "}})
    return meta


def write(out, header, trace_events):
    doc = dict(header, traceEvents=trace_events)
    with open(out, "w") as f:
        f.write("{\n")
        keys = [k for k in doc if k != "traceEvents"]
        for k in keys:
            f.write(f"  {json.dumps(k)}: {json.dumps(doc[k], separators=(',', ':'))},\n")
        f.write('  "traceEvents": [\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in doc["traceEvents"]))
        f.write("\n  ]\n}\n")
    print(f"wrote {out}: {len(doc['traceEvents'])} events, {os.path.getsize(out)} bytes")


def run_steps():
    # Every trace (and every rank) starts its first profiled step at the same
    # time: reverie simulates every rank from time 0, so an offset between
    # ranks would show up as a modelling error.
    t = 100.0
    for n in STEPS:
        t = step(n, t) + 1.0


def bucket_bytes(bucket):
    return 4 * sum(numel for _, _, numel in bucket)


def write_single(out):
    begin(2024, 4242, 4300, 0)
    run_steps()
    header = {
        "schemaVersion": 1,
        "deviceProperties": [dict({"id": 0}, **A100)],
        "traceName": "tiny_mlp_training.json (synthetic, made by examples/make_synthetic_trace.py)",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
    }
    write(out, header, metadata([COMPUTE, COPY]) + events)


def generate_rank(rank, ends, transfer):
    """Rank `rank`'s events given the job's all-reduce end times `ends` (may be
    shorter than needed: then a collective ends when this rank is ready plus
    its transfer time); returns (trace events, this rank's readiness for each
    all-reduce). Rank 1 (pid 4243, GPU 1) is the straggler."""
    global ddp
    begin(2024 + rank, 4242 + rank, 4300 + rank, rank)
    ddp = {"rank": rank, "slowdown": STRAGGLER_SLOWDOWN if rank == 1 else 1.0, "ends": ends,
           "transfer": transfer, "ready": []}
    run_steps()
    ready = ddp["ready"]
    ddp = None
    return metadata([COMPUTE, COPY, NCCL]) + list(events), ready


def write_ddp(outs):
    # Transfer time per all-reduce: the job's, the same on both ranks.
    trng = random.Random(7)
    transfer = []
    for _ in STEPS:
        for bucket in BUCKETS:
            transfer.append(round((NCCL_LATENCY + bucket_bytes(bucket) / NCCL_BYTES_PER_US) *
                                  trng.uniform(0.97, 1.03), 3))
    # When a rank is ready for all-reduce k depends on when all-reduces < k
    # ended, so iterating from "no waiting" fixes one more collective per
    # round.
    ends = []
    for _ in range(len(transfer) + 2):
        readies = [generate_rank(r, ends, transfer)[1] for r in range(WORLD_SIZE)]
        new = [round(max(r) + x, 3) for r, x in zip(zip(*readies), transfer)]
        if new == ends:
            break
        ends = new
    else:
        raise RuntimeError("all-reduce end times did not converge")
    for rank, out in enumerate(outs):
        trace_events, ready = generate_rank(rank, ends, transfer)
        assert ready == readies[rank] and all(e - r > x - 1e-6 for e, r, x in zip(ends, ready, transfer))
        header = {
            "schemaVersion": 1,
            "deviceProperties": [dict({"id": d}, **A100) for d in range(WORLD_SIZE)],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": WORLD_SIZE, "pg_count": 1,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                                               "pg_size": WORLD_SIZE, "ranks": list(range(WORLD_SIZE))}],
                                "nccl_version": "2.21.5"},
            "traceName": f"{os.path.basename(out)} (synthetic, made by examples/make_synthetic_trace.py --ddp)",
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": 1700000000000000000,
        }
        write(out, header, trace_events)
    print("all-reduce  bucket     bytes  transfer_us  ready_r0_us  ready_r1_us  wait_r0_us  wait_r1_us")
    for k in range(len(ends)):
        b = k % len(BUCKETS)
        nbytes = bucket_bytes(BUCKETS[b])
        r0, r1 = readies[0][k], readies[1][k]
        print(f"{k:10d}  {b:6d}  {nbytes:8d}  {transfer[k]:11.3f}  {r0:11.3f}  {r1:11.3f}  {max(r0, r1) - r0:10.3f}"
              f"  {max(r0, r1) - r1:10.3f}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Write the synthetic example traces (see examples/README.md).")
    ap.add_argument("out", nargs="?", default=os.path.join(here, "tiny_mlp_training.json"),
                    help="the single-GPU trace (default: examples/tiny_mlp_training.json)")
    ap.add_argument("--ddp", nargs="*", metavar="RANKi.json",
                    help="write the 2-rank DDP pair instead (default: examples/ddp_rank0.json examples/ddp_rank1.json)")
    args = ap.parse_args()
    if args.ddp is None:
        write_single(args.out)
        return
    if args.out != ap.get_default("out"):
        ap.error("with --ddp, give the two output files after --ddp")
    if args.ddp and len(args.ddp) != WORLD_SIZE:
        ap.error(f"--ddp takes {WORLD_SIZE} output files (rank 0, rank 1) or none")
    write_ddp(args.ddp or [os.path.join(here, f"ddp_rank{r}.json") for r in range(WORLD_SIZE)])


if __name__ == "__main__":
    main()
