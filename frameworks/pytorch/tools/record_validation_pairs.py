#!/usr/bin/env python3
"""Record validation pairs: a baseline trace + the measured truth of a change.

Daydream-style validation: reverie predicts, from the baseline trace alone,
how long a step takes after an optimization; the prediction is then
compared with the step time actually measured with the optimization.
The pairs are the ones issue 4 asks for: FP32 vs AMP (torch.autocast bf16)
and Adam (foreach) vs Adam (fused=True), for ResNet-50 and a GPT-2-small-
sized transformer. Every configuration runs in a fresh process and is
recorded twice, once by reverie's collector (.pb) and once by the PyTorch
profiler (.json.gz), each with its own timing run, and PAIRS_DIR/pairs.json
says which file is which:

    {"pairs": [{"name": "resnet50_amp_bf16", "script": "amp.lua",
                "baseline": {"reverie": {"trace": "resnet50_amp_bf16.baseline.pb", "median_ms": ...},
                             "torch":   {"trace": "resnet50_amp_bf16.baseline.json.gz", ...}},
                "variant":  {...}}]}

Then, per pair:  reverie predict BASELINE --script SCRIPT  vs. variant median_ms
(and `reverie compare PREDICTED VARIANT` for the per-kernel view).

    python3 frameworks/pytorch/tools/record_validation_pairs.py --out-dir tests/data/validation
    python3 frameworks/pytorch/tools/record_validation_pairs.py --only resnet50_amp_bf16

Needs torch + torchvision, a CUDA GPU and libreverie_collector.so.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# name, script, common harness args, baseline-only args, variant-only args
PAIRS = [
    ("resnet50_amp_bf16", "amp.lua", ["--model", "resnet50", "--batch", "64", "--optimizer", "sgd"],
     [], ["--amp", "bf16"]),
    ("resnet50_fused_adam", "fused_adam.lua", ["--model", "resnet50", "--batch", "64"],
     ["--optimizer", "adam"], ["--optimizer", "adam_fused"]),
    ("gpt2s_amp_bf16", "amp.lua", ["--model", "gpt2s", "--batch", "8", "--optimizer", "adam"],
     [], ["--amp", "bf16"]),
    ("gpt2s_fused_adam", "fused_adam.lua", ["--model", "gpt2s", "--batch", "8"],
     ["--optimizer", "adam"], ["--optimizer", "adam_fused"]),
]


def run(common, extra, trace, record, args):
    result_json = trace + ".result.json"
    cmd = ([sys.executable, os.path.join(HERE, "_harness.py")] + common + extra +
           ["--warmup", str(args.warmup), "--steps", str(args.steps),
            "--record", record, "--out", trace, "--json", result_json])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(result_json) as f:
        r = json.load(f)
    os.remove(result_json)
    return {"trace": os.path.basename(trace), "median_ms": r["median_ms"],
            "step_ms": r["step_ms"], "gpu": r["gpu"], "torch": r["torch"],
            "args": common + extra}


def record_both(name, side, common, extra, args):
    stem = os.path.join(args.out_dir, f"{name}.{side}")
    return {"reverie": run(common, extra, stem + ".pb", "reverie", args),
            "torch": run(common, extra, stem + ".json.gz", "torch", args)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default="validation_pairs")
    p.add_argument("--only", action="append", default=[], help="pair name (repeatable)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=3,
                   help="steps recorded in each trace (and timed)")
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    if args.list:
        for name, script, *_ in PAIRS:
            print(f"{name}: {script}")
        return
    os.makedirs(args.out_dir, exist_ok=True)
    pairs = []
    for name, script, common, base_extra, var_extra in PAIRS:
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", flush=True)
        base = record_both(name, "baseline", common, base_extra, args)
        var = record_both(name, "variant", common, var_extra, args)
        pairs.append({"name": name, "script": script, "baseline": base, "variant": var})
        print(f"  baseline {base['reverie']['median_ms']:.2f} ms, "
              f"variant {var['reverie']['median_ms']:.2f} ms (reverie runs)", flush=True)
    with open(os.path.join(args.out_dir, "pairs.json"), "w") as f:
        json.dump({"pairs": pairs}, f, indent=1)
    print(f"wrote {os.path.join(args.out_dir, 'pairs.json')}")


if __name__ == "__main__":
    main()
