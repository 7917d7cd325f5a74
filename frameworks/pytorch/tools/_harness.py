"""Shared training harness for the GPU scripts in this folder.

One process = one configuration: build a model on synthetic data, train,
time every step with CUDA synchronization at the step boundary, and
optionally record it with reverie_torch or torch.profiler. The scripts run
each configuration in a fresh subprocess (`python3 _harness.py --json ...`)
because only one CUPTI client may exist per process.

Not run in CI (needs torch and a GPU).
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # frameworks/pytorch: reverie_torch


def build(model_name, batch, device, channels_last=False):
    import torch
    import torch.nn as nn

    if model_name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        x = torch.randn(batch, 3, 224, 224, device=device)
        y = torch.randint(0, 1000, (batch,), device=device)
    elif model_name == "transformer":
        layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                           batch_first=True)
        model = nn.Sequential(nn.TransformerEncoder(layer, num_layers=6), nn.Flatten(),
                              nn.Linear(512 * 128, 10))
        x = torch.randn(batch, 128, 512, device=device)
        y = torch.randint(0, 10, (batch,), device=device)
    elif model_name == "gpt2s":
        # GPT-2 small-sized decoder: 12 pre-norm blocks, d_model 768, 12 heads,
        # GELU MLP 3072, tied-size LM head over GPT-2's 50257-token vocabulary;
        # causal mask; sequence 512 to keep a step short.
        seq, vocab, d = 512, 50257, 768

        class Gpt2Small(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(vocab, d)
                self.pos = nn.Embedding(seq, d)
                block = nn.TransformerEncoderLayer(d_model=d, nhead=12, dim_feedforward=4 * d,
                                                   activation="gelu", batch_first=True,
                                                   norm_first=True, dropout=0.0)
                self.blocks = nn.TransformerEncoder(block, num_layers=12, enable_nested_tensor=False)
                self.norm = nn.LayerNorm(d)
                self.head = nn.Linear(d, vocab, bias=False)
                self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq))

            def forward(self, ids):
                pos = torch.arange(ids.shape[1], device=ids.device)
                h = self.tok(ids) + self.pos(pos)
                h = self.blocks(h, mask=self.mask, is_causal=True)
                return self.head(self.norm(h)).flatten(0, 1)

        model = Gpt2Small()
        x = torch.randint(0, vocab, (batch, seq), device=device)
        y = torch.randint(0, vocab, (batch * seq,), device=device)
    elif model_name == "gpt2":
        # GPT-2 small from Hugging Face transformers (random weights, no
        # download): 12 blocks, d_model 768, 12 heads, 50257-token vocabulary,
        # sequence 512. The wrapper returns flat logits so the loss is the
        # harness's own cross-entropy, as for the other models.
        from transformers import GPT2Config, GPT2LMHeadModel
        seq = 512
        config = GPT2Config(n_positions=1024, n_embd=768, n_layer=12, n_head=12)

        class Gpt2(nn.Module):
            def __init__(self):
                super().__init__()
                self.lm = GPT2LMHeadModel(config)

            def forward(self, ids):
                return self.lm(input_ids=ids).logits.flatten(0, 1)

        model = Gpt2()
        x = torch.randint(0, config.vocab_size, (batch, seq), device=device)
        y = torch.randint(0, config.vocab_size, (batch * seq,), device=device)
    elif model_name == "mlp":
        model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                              nn.Linear(4096, 10))
        x = torch.randn(batch, 1024, device=device)
        y = torch.randint(0, 10, (batch,), device=device)
    else:
        raise SystemExit(f"unknown model {model_name}")
    model = model.to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        if x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
    return model, x, y


def make_optimizer(torch, model, name, device):
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # "adam" is PyTorch's multi-tensor (foreach) implementation, named
    # explicitly so a version change of the default cannot switch it.
    fused = name == "adam_fused"
    return torch.optim.Adam(model.parameters(), lr=1e-4, fused=fused,
                            foreach=None if fused else True)


def make_scaler(torch, enabled):
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


def make_recorder(args, model, opt):
    """The recorder of the recorded phase, or None."""
    if args.record == "reverie":
        import reverie_torch
        return reverie_torch.profile(model, opt, out=args.out, steps=args.steps,
                                     warmup=args.record_warmup)
    if args.record == "torch":
        from torch.profiler import ProfilerActivity, profile, schedule
        activities = [ProfilerActivity.CPU]
        if args.device == "cuda":
            activities.append(ProfilerActivity.CUDA)
        # export_chrome_trace gzips when the name ends in .gz. Shapes and
        # module paths are what reverie's importer reads for work per kernel
        # and layers.
        export = None if args.no_export else (lambda prof: prof.export_chrome_trace(args.out))
        return profile(activities=activities, record_shapes=True, with_modules=True,
                       schedule=schedule(wait=0, warmup=args.record_warmup, repeat=1,
                                         active=args.steps),
                       on_trace_ready=export)
    return None


def run(args):
    import torch
    import torch.nn as nn

    device = args.device
    torch.backends.cudnn.benchmark = True
    if args.no_tf32:
        # FP32 means FP32: cuDNN allows TF32 by default (matmul does not).
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    model, x, y = build(args.model, args.batch, device, args.channels_last)
    if args.ddp:
        import torch.distributed as dist
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        model = nn.parallel.DistributedDataParallel(model)
    opt = make_optimizer(torch, model, args.optimizer, device)
    loss_fn = nn.CrossEntropyLoss()
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.amp)
    scaler = make_scaler(torch, args.amp == "fp16" and device == "cuda")
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def train_step():
        opt.zero_grad(set_to_none=True)
        with (torch.autocast(device, dtype=amp_dtype) if amp_dtype is not None
              else contextlib.nullcontext()):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    def timed_steps(n, recorder=None):
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            train_step()
            sync()  # the step boundary: the time includes the GPU's work
            times.append(time.perf_counter() - t0)
            if recorder is not None:
                recorder.step()  # outside the timed window (trace processing)
        return times

    # Phases: warm-up (not recorded: CUDA init, cuDNN autotuning, allocator
    # growth), bare timed steps (the same process's overhead baseline), then
    # the recorder's own warm-up and the recorded, timed steps.
    sync()
    timed_steps(args.warmup)
    bare = timed_steps(args.bare_steps)
    recorder = make_recorder(args, model, opt)
    if recorder is not None:
        recorder.__enter__()
    try:
        timed_steps(args.record_warmup, recorder)
        measured = timed_steps(args.steps, recorder)
        # One more step so the schedule's last active step ends and the
        # trace is exported (reverie_torch drops an empty last step).
        timed_steps(1, recorder)
    finally:
        if recorder is not None:
            recorder.__exit__(None, None, None)
    result = {
        "model": args.model, "batch": args.batch, "amp": args.amp, "optimizer": args.optimizer,
        "channels_last": args.channels_last, "record": args.record, "tf32": not args.no_tf32,
        "step_ms": [t * 1e3 for t in measured],
        "median_ms": statistics.median(measured) * 1e3,
        "torch": torch.__version__,
    }
    if bare:
        result["bare_ms"] = [t * 1e3 for t in bare]
        result["bare_median_ms"] = statistics.median(bare) * 1e3
    if device == "cuda":
        result["gpu"] = torch.cuda.get_device_name()
        result["cuda"] = torch.version.cuda
    if args.out and os.path.exists(args.out):
        result["trace_bytes"] = os.path.getsize(args.out)
    return result


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet50",
                   choices=["resnet50", "transformer", "gpt2s", "gpt2", "mlp"])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--amp", default="none", choices=["none", "fp16", "bf16"])
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam", "adam_fused"])
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--ddp", action="store_true", help="run under torchrun")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: dry runs of the scripts without a GPU")
    p.add_argument("--no-tf32", action="store_true", help="FP32 without TF32 (matmul and cuDNN)")
    p.add_argument("--warmup", type=int, default=5, help="unrecorded warm-up steps")
    p.add_argument("--bare-steps", type=int, default=0,
                   help="timed steps without a recorder, before the recorded ones")
    p.add_argument("--record-warmup", type=int, default=2,
                   help="steps the recorder runs before the recorded ones")
    p.add_argument("--steps", type=int, default=10, help="recorded (and timed) steps")
    p.add_argument("--record", default="none", choices=["none", "reverie", "torch"])
    p.add_argument("--no-export", action="store_true",
                   help="torch: record but write no trace (overhead runs)")
    p.add_argument("--out", default="")
    p.add_argument("--json", default="", help="write the result here")
    return p


def main():
    args = parser().parse_args()
    result = run(args)
    text = json.dumps(result, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
