#!/usr/bin/env python3
"""One device session: the collector checked on a GPU, and validation pairs.

Runs, under one time budget, the phases a lent GPU machine is used for
(each configuration in a fresh process through _harness.py):

  env       GPU, driver, CUDA, torch versions (in results.json)
  twin      a few MLP steps under reverie_torch (.pb) and under
            torch.profiler (.json.gz), and examples/cuda_mlp under
            `reverie collect` (twin.tar)
  pairs     validation pairs, torch.profiler only: per model FP32 (no
            TF32), bf16 autocast, fp16 autocast + GradScaler, Adam fused;
            Adam foreach unless fused; each configuration twice
            (pairs_MODEL.tar)
  overhead  per model and repeat, one process under the collector and one
            under torch.profiler, each timing bare steps first and then
            recorded steps; the first repeat keeps its traces
            (overhead.tar)

Everything lands in --out (at most 8 files: the device tool's limit) with
results.json (every harness result) and a table printed last. A phase
starts a process only while the budget allows, so a run that is cut short
still returns what it finished.

    python3 frameworks/pytorch/tools/device_check.py --out $OUT --budget-s 390
    python3 frameworks/pytorch/tools/device_check.py --device cpu --out /tmp/o \\
        --models mlp --phases pairs    # a dry run without a GPU
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
HARNESS = os.path.join(HERE, "_harness.py")

# Per model: batch, seconds one process is expected to take (startup included).
MODELS = {"resnet50": (64, 14), "gpt2": (8, 16), "gpt2s": (8, 14), "mlp": (512, 8) if os.environ.get("DRY") is None else (64, 8)}
CONFIGS = {
    "fp32": ["--optimizer", "adam"],
    "bf16": ["--optimizer", "adam", "--amp", "bf16"],
    "fp16": ["--optimizer", "adam", "--amp", "fp16"],
    "fused": ["--optimizer", "adam_fused"],
}


class Session:
    def __init__(self, args):
        self.args = args
        self.t0 = time.monotonic()
        self.results = []
        self.skipped = []
        self.env = {}
        self.gpt2_ok = False
        self.gpt2_fallback = False
        self.work = tempfile.mkdtemp(prefix="device_check_")

    def left(self):
        return self.args.budget_s - (time.monotonic() - self.t0)

    def save(self):
        with open(os.path.join(self.args.out, "results.json"), "w") as f:
            json.dump({"env": self.env, "results": self.results, "skipped": self.skipped}, f,
                      indent=1)

    def harness(self, label, model, extra, trace="", expect_s=None):
        """Runs one configuration; returns its result dict or None.

        If the transformers GPT-2 fails before any run of it succeeded (an
        API change), the torch.nn model of the same size stands in for it.
        """
        if model == "gpt2" and self.gpt2_fallback:
            model = "gpt2s"
        r = self._harness(label, model, extra, trace, expect_s)
        if r is None and model == "gpt2" and not self.gpt2_ok and self.left() > 30:
            print("gpt2 (transformers) failed: gpt2s (torch.nn, same size) from here on",
                  flush=True)
            self.gpt2_fallback = True
            return self._harness(label, "gpt2s", extra, trace, expect_s)
        if r is not None and model == "gpt2":
            self.gpt2_ok = True
        return r

    def _harness(self, label, model, extra, trace, expect_s):
        batch, typical = MODELS[model]
        expect = expect_s or typical
        if self.left() < expect:
            self.skipped.append(label)
            print(f"skip {label}: {self.left():.0f} s left", flush=True)
            return None
        result_json = os.path.join(self.work, label + ".result.json")
        cmd = ([sys.executable, HARNESS, "--model", model, "--batch", str(batch),
                "--device", self.args.device, "--json", result_json] + extra +
               (["--out", trace] if trace else []))
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, timeout=max(30, self.left()))
        except subprocess.TimeoutExpired:
            print(f"FAIL {label}: still running when the budget ran out", flush=True)
            self.results.append({"label": label, "error": "timeout"})
            self.save()
            return None
        wall = time.monotonic() - started
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-3:]
            print(f"FAIL {label} ({wall:.0f} s): {' | '.join(tail)}", flush=True)
            self.results.append({"label": label, "error": proc.stderr[-2000:]})
            self.save()
            return None
        with open(result_json) as f:
            r = json.load(f)
        r["label"], r["wall_s"] = label, round(wall, 1)
        if trace:
            r["trace"] = os.path.basename(trace)
        self.results.append(r)
        self.save()
        print(f"ok   {label} ({wall:.0f} s): median {r['median_ms']:.2f} ms", flush=True)
        return r


def pack(session, name, files):
    files = [f for f in files if os.path.exists(f)]
    if not files:
        return
    with tarfile.open(os.path.join(session.args.out, name), "w") as tar:
        for f in files:
            tar.add(f, arcname=os.path.basename(f))


def env_phase(session):
    info = {"python": sys.version.split()[0]}
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        info["nvidia_smi"] = out
    except (OSError, subprocess.SubprocessError) as e:
        info["nvidia_smi"] = f"unavailable: {e}"
    probe = ("import json, torch; d = torch.cuda.is_available();"
             "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda,"
             "'cudnn': torch.backends.cudnn.version(),"
             "'gpu': torch.cuda.get_device_name() if d else None}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if out.returncode == 0:
        info.update(json.loads(out.stdout))
    try:
        import transformers  # noqa: F401
        info["transformers"] = transformers.__version__
    except ImportError:
        info["transformers"] = None
    session.env = info
    session.save()
    print(json.dumps(info), flush=True)
    return info


def find_libs(pattern_names):
    """Folders holding the named shared libraries, from the CUDA toolkit or pip."""
    roots = glob.glob("/usr/local/cuda*/lib64") + glob.glob("/usr/local/cuda*/extras/CUPTI/lib64")
    for site in sys.path:
        roots += glob.glob(os.path.join(site, "nvidia", "*", "lib"))
        roots += glob.glob(os.path.join(site, "nvidia", "*", "*", "lib"))
    found = {}
    for name in pattern_names:
        for root in roots:
            hits = glob.glob(os.path.join(root, name))
            if hits:
                found[name] = hits[0]
                break
    return found


def twin_phase(session):
    w = session.work
    files = []
    common = ["--optimizer", "adam", "--warmup", "3", "--record-warmup", "1",
              "--steps", "5"]
    for record, ext in (("reverie", ".pb"), ("torch", ".json.gz")):
        trace = os.path.join(w, "mlp_twin" + ext)
        if session.harness(f"twin_mlp_{record}", "mlp", common + ["--record", record], trace):
            files.append(trace)
    if session.args.device == "cuda":
        files += cuda_mlp(session)
    pack(session, "twin.tar", files)


def cuda_mlp(session):
    """examples/cuda_mlp under `reverie collect` (the CLI carried with its libraries)."""
    exe = os.path.join(REPO, "build/release/examples/cuda_mlp/cuda_mlp")
    cli = os.path.join(REPO, "build/release/cli/reverie")
    lib = os.path.join(REPO, "build/release/collector/libreverie_collector.so")
    if not all(os.path.exists(p) for p in (exe, cli, lib)):
        print("skip cuda_mlp: build not carried", flush=True)
        return []
    libs = find_libs(["libcublas.so.13", "libcublasLt.so.13", "libcupti.so.13"])
    env = dict(os.environ)
    dirs = [os.path.dirname(lib), os.path.join(REPO, ".devlibs")]
    dirs += sorted({os.path.dirname(p) for p in libs.values()})
    env["LD_LIBRARY_PATH"] = ":".join(dirs + [env.get("LD_LIBRARY_PATH", "")])
    env["REVERIE_COLLECTOR_LIB"] = lib
    if "libcupti.so.13" in libs:
        env["REVERIE_CUPTI_LIB"] = libs["libcupti.so.13"]
    trace = os.path.join(session.work, "cuda_mlp.pb")
    cmd = [cli, "collect", "-o", trace, "--warmup", "2", "--steps", "3", "--", exe,
           "--steps", "6"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    print(f"cuda_mlp under reverie collect: rc {proc.returncode}; "
          f"{(proc.stdout + proc.stderr).strip()[-600:]}", flush=True)
    session.results.append({"label": "cuda_mlp_collect", "rc": proc.returncode,
                            "output": (proc.stdout + proc.stderr)[-3000:],
                            "libs": libs})
    session.save()
    return [trace]


def pairs_phase(session):
    a = session.args
    for model in a.models:
        files = []
        for rep in range(1, a.repeats + 1):
            for config in a.configs:
                label = f"{model}_{config}_r{rep}"
                trace = os.path.join(session.work, label + ".json.gz")
                extra = CONFIGS[config] + ["--no-tf32", "--warmup", "5", "--record-warmup", "2",
                                           "--steps", str(a.pair_steps), "--record", "torch"]
                if session.harness(label, model, extra, trace):
                    files.append(trace)
        pack(session, f"pairs_{model}.tar", files)


def overhead_phase(session):
    a = session.args
    files = []
    # Repeat-major, so a run cut short still has every model's first repeat.
    for rep in range(1, a.overhead_repeats + 1):
        for model in a.models:
            for mode, ext in (("reverie", ".pb"), ("torch", ".json.gz")):
                label = f"overhead_{model}_{mode}_r{rep}"
                trace = os.path.join(session.work, label + ext)
                extra = CONFIGS["fp32"] + ["--no-tf32", "--warmup", "5", "--bare-steps", "20",
                                           "--record-warmup", "2", "--steps", "20",
                                           "--record", mode]
                if mode == "torch" and rep > 1:
                    extra.append("--no-export")  # timing only; export is not in the steps
                r = session.harness(label, model, extra, trace,
                                    expect_s=MODELS[model][1] + 6)
                if r and rep == 1:
                    files.append(trace)
                elif os.path.exists(trace):
                    os.remove(trace)
    pack(session, "overhead.tar", files)


def table(session):
    print("\n| label | bare ms | recorded ms | ratio | wall s |")
    print("|---|---|---|---|---|")
    for r in session.results:
        if "median_ms" not in r:
            continue
        bare = r.get("bare_median_ms")
        ratio = f"{r['median_ms'] / bare:.3f}" if bare else "-"
        bare_text = f"{bare:.2f}" if bare else "-"
        print(f"| {r['label']} | {bare_text} | {r['median_ms']:.2f} | {ratio} | {r['wall_s']} |")
    if session.skipped:
        print(f"skipped: {', '.join(session.skipped)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=390)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--phases", default="env,twin,pairs,overhead")
    p.add_argument("--models", default="resnet50,gpt2")
    p.add_argument("--configs", default="fp32,bf16,fp16,fused")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--pair-steps", type=int, default=8)
    p.add_argument("--overhead-repeats", type=int, default=3)
    args = p.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    args.configs = [c for c in args.configs.split(",") if c]
    os.makedirs(args.out, exist_ok=True)
    session = Session(args)
    phases = args.phases.split(",")
    info = env_phase(session) if "env" in phases else {}
    if "gpt2" in args.models and info.get("transformers") is None and "env" in phases:
        # No transformers: the same-sized model built from torch.nn.
        args.models = ["gpt2s" if m == "gpt2" else m for m in args.models]
    for name, fn in (("twin", twin_phase), ("pairs", pairs_phase),
                     ("overhead", overhead_phase)):
        if name in phases:
            fn(session)
    session.save()
    table(session)
    shutil.rmtree(session.work, ignore_errors=True)


if __name__ == "__main__":
    main()
