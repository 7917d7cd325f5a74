#!/usr/bin/env python3
"""What the Python module and position-independent libraries cost, as CPU
time (user + sys, best of RUNS, runs of the cases interleaved):

- CLI built with the libraries position independent (the default: the
  Python module links them) against a CLI built without (-DREVERIE_BUILD_PYTHON=OFF,
  or an older build), on `replay --critical-path` and `predict --script amp.lua`;
- `python3 -c "import reverie; reverie.load(T).predict('amp.lua')"` against
  the CLI's `predict T --script amp.lua` (interpreter start and JSON included).

    bench/python/bench.py NOPIC_CLI PIC_CLI PYTHON_PACKAGE_DIR TRACE [RUNS]
    bench/python/bench.py build-nopy/cli/reverie build/release/cli/reverie \\
        build/release/python ../shared/traces/.../df_index_resolver.json.gz 5
"""
import os
import resource
import subprocess
import sys


def cpu_seconds(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    nopic, pic, package, trace = sys.argv[1:5]
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    env = dict(os.environ, PYTHONPATH=package)
    python = [sys.executable, "-c",
              f"import reverie; reverie.load({trace!r}).predict('amp.lua')"]
    cases = {
        "replay, no PIC": [nopic, "replay", trace, "--critical-path"],
        "replay, PIC": [pic, "replay", trace, "--critical-path"],
        "predict amp, no PIC": [nopic, "predict", trace, "--script", "amp.lua"],
        "predict amp, PIC": [pic, "predict", trace, "--script", "amp.lua"],
        "python load+predict amp": python,
        "python import reverie": [sys.executable, "-c", "import reverie"],
    }
    best = {name: float("inf") for name in cases}
    for _ in range(runs):
        for name, cmd in cases.items():
            best[name] = min(best[name], cpu_seconds(cmd, env))
    for name, s in best.items():
        print(f"{name:26s} {s:.3f} s CPU")
    print(f"PIC / no PIC: replay {best['replay, PIC'] / best['replay, no PIC']:.2f}x, "
          f"predict {best['predict amp, PIC'] / best['predict amp, no PIC']:.2f}x")
    print(f"python / CLI predict: {best['python load+predict amp'] / best['predict amp, PIC']:.2f}x")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
