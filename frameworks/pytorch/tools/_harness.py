"""Shared training harness for the GPU scripts in this folder.

One process = one configuration: build a model on synthetic data, train,
time every iteration with CUDA synchronization at the step boundary, and
optionally record it with reverie_torch or torch.profiler. The scripts run
each configuration in a fresh subprocess (`python3 _harness.py --json ...`)
because only one CUPTI client may exist per process.

Not run in CI (needs torch and a GPU).
"""

import argparse
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


def run(args):
    import torch
    import torch.nn as nn

    device = "cuda"
    torch.backends.cudnn.benchmark = True
    model, x, y = build(args.model, args.batch, device, args.channels_last)
    if args.ddp:
        import torch.distributed as dist
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        model = nn.parallel.DistributedDataParallel(model)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        # "adam" is PyTorch's default multi-tensor (foreach) implementation.
        fused = args.optimizer == "adam_fused"
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, fused=fused,
                               foreach=None if fused else True)
    loss_fn = nn.CrossEntropyLoss()
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.amp)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp == "fp16")

    def train_step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    total = args.warmup + args.iterations + 1
    times = []
    recorder = None
    if args.record == "reverie":
        import reverie_torch
        recorder = reverie_torch.profile(model, opt, out=args.out, iterations=args.iterations,
                                         warmup=args.warmup)
    elif args.record == "torch":
        from torch.profiler import ProfilerActivity, profile, schedule
        # export_chrome_trace gzips when the name ends in .gz.
        recorder = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                           schedule=schedule(wait=0, warmup=args.warmup, active=args.iterations),
                           on_trace_ready=lambda prof: prof.export_chrome_trace(args.out))
    if recorder is not None:
        recorder.__enter__()
    try:
        torch.cuda.synchronize()
        for i in range(total):
            t0 = time.perf_counter()
            train_step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            if recorder is not None:
                recorder.step()
    finally:
        if recorder is not None:
            recorder.__exit__(None, None, None)
    measured = times[args.warmup:args.warmup + args.iterations]
    result = {
        "model": args.model, "batch": args.batch, "amp": args.amp, "optimizer": args.optimizer,
        "channels_last": args.channels_last, "record": args.record,
        "iteration_ms": [t * 1e3 for t in measured],
        "median_ms": statistics.median(measured) * 1e3,
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
    }
    if args.out and os.path.exists(args.out):
        result["trace_bytes"] = os.path.getsize(args.out)
    return result


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet50", choices=["resnet50", "transformer", "gpt2s", "mlp"])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--amp", default="none", choices=["none", "fp16", "bf16"])
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam", "adam_fused"])
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--ddp", action="store_true", help="run under torchrun")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--record", default="none", choices=["none", "reverie", "torch"])
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
