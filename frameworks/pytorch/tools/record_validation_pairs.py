#!/usr/bin/env python3
"""Record validation pairs: a baseline trace + the measured truth of a change.

Daydream-style validation: reverie predicts, from the baseline trace alone,
how long an iteration takes after an optimization; the prediction is then
compared with the iteration time actually measured with the optimization.
For each pair this script

  1. records the baseline with reverie_torch (REVERIE trace, .pb), and
  2. runs the changed configuration, measures its iteration time, and
     records it as well (for debugging a wrong prediction),

each in a fresh process, and writes PAIRS_DIR/pairs.json:

    {"pairs": [{"name": "resnet50_amp", "script": "amp.lua",
                "baseline": {"trace": ".../resnet50_amp.baseline.pb", "median_ms": ...},
                "variant":  {"trace": ".../resnet50_amp.variant.pb",  "median_ms": ...}}]}

Then, per pair:  reverie predict BASELINE.pb --script SCRIPT  vs. variant.median_ms.

    python3 frameworks/pytorch/tools/record_validation_pairs.py --out-dir pairs/
    python3 frameworks/pytorch/tools/record_validation_pairs.py --only resnet50_amp

Needs torch (+ torchvision), a CUDA GPU and libreverie_collector.so. The
`script` names are the reverie Lua scripts the pair validates; a pair whose
script does not exist yet is still recorded.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# name, script, common harness args, baseline-only args, variant-only args
PAIRS = [
    ("resnet50_amp", "amp.lua", ["--model", "resnet50", "--batch", "64"], [], ["--amp", "fp16"]),
    ("resnet50_batch2x", "batch_size.lua", ["--model", "resnet50"], ["--batch", "32"],
     ["--batch", "64"]),
    ("resnet50_channels_last", "channels_last.lua", ["--model", "resnet50", "--batch", "64"],
     [], ["--channels-last"]),
    ("transformer_fused_adam", "fused_adam.lua", ["--model", "transformer", "--batch", "16"],
     ["--optimizer", "adam"], ["--optimizer", "adam_fused"]),
    ("mlp_amp_bf16", "amp.lua", ["--model", "mlp", "--batch", "256"], [], ["--amp", "bf16"]),
]


def run(common, extra, trace, args):
    result_json = trace[:-3] + ".json"
    cmd = ([sys.executable, os.path.join(HERE, "_harness.py")] + common + extra +
           ["--warmup", str(args.warmup), "--iterations", str(args.iterations),
            "--record", "reverie", "--out", trace, "--json", result_json])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(result_json) as f:
        r = json.load(f)
    return {"trace": trace, "median_ms": r["median_ms"], "iteration_ms": r["iteration_ms"],
            "gpu": r["gpu"], "torch": r["torch"], "args": common + extra}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default="validation_pairs")
    p.add_argument("--only", action="append", default=[], help="pair name (repeatable)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=3,
                   help="iterations recorded in each trace (and timed)")
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
        base = run(common, base_extra, os.path.join(args.out_dir, f"{name}.baseline.pb"), args)
        var = run(common, var_extra, os.path.join(args.out_dir, f"{name}.variant.pb"), args)
        pairs.append({"name": name, "script": script, "baseline": base, "variant": var})
        print(f"  baseline {base['median_ms']:.2f} ms, variant {var['median_ms']:.2f} ms")
    with open(os.path.join(args.out_dir, "pairs.json"), "w") as f:
        json.dump({"pairs": pairs}, f, indent=1)
    print(f"wrote {os.path.join(args.out_dir, 'pairs.json')}")


if __name__ == "__main__":
    main()
