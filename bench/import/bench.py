#!/usr/bin/env python3
"""Import benchmarks whose figures go into docs/PERFORMANCE.md ("Import").

Every figure is a ratio against a baseline measured in the same run, on the
same file, on the same machine:

  import   `reverie import T -o X.pb` (the import alone: read, inflate, parse,
           build the Trace, write it) and `reverie info T` (the import, the
           summary, and info's dependency-graph section) vs Python's
           json.load of T and zcat T (medians of N)
  hta      `reverie replay T --critical-path` vs Holistic Trace Analysis
           loading T and computing the critical path of one ProfilerStep
           (medians of N; HTA timed inside its process: interpreter start and
           module imports excluded, which favours HTA)
  alternate  the same `import` (or `info`) with several builds (--bins A,B),
           run in turn N times so that the machine's drift falls on all alike:
           medians of wall, user and system time and peak memory per build
  scaling  `reverie import` and `reverie info` on traces of ~0.5, 1 and 2 GB made by repeating
           the steps of T with shifted timestamps and ids (written to a
           temporary folder, deleted afterwards): time and peak memory vs size

Time is wall (perf_counter) and CPU (user + system, from wait4); peak memory
is the child's ru_maxrss. Linux starts a spawned child's maxrss at its
parent's RSS, so this script keeps its own memory small (sizes and scaled
traces are computed in child processes) and says so if it is not.

usage: bench.py import  [--bin B] [--trace T] [--runs N]
       bench.py hta     --hta DIR [--bin B] [--trace T] [--runs N]
       bench.py alternate --bins A,B[,...] [--command import|info] [--trace T] [--runs N]
       bench.py scaling [--bin B] [--trace T] [--sizes-gb 0.5,1,2] [--tmp DIR]
"""
import argparse
import gzip
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = os.environ.get("REVERIE_TRACES") or os.path.join(os.path.dirname(REPO), "shared", "traces")
DEFAULT_TRACE = os.path.join(TRACES, "facebookresearch__HolisticTraceAnalysis", "tests", "data",
                             "df_index_resolver", "df_index_resolver.json.gz")
MIB = 1024 * 1024


def measure(cmd, rss=True):
    """(wall s, cpu s, peak RSS KiB or None, user s) of one run of `cmd` (a list)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench.py: {' '.join(cmd)} failed ({status}): {err.strip()[-500:]}")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if rss and own >= usage.ru_maxrss:
        print(f"warning: this script's own RSS ({own} KiB) bounds the measured peak", file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss if rss else None, usage.ru_utime


def median_of(cmd, runs, rss=True):
    """Median wall, CPU and user time over `runs` runs, and the largest peak RSS
    (medians, not the best run: on a shared machine the best run flatters)."""
    results = [measure(cmd, rss) for _ in range(runs)]
    peak = max(r[2] for r in results) if rss else None
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            peak, statistics.median(r[3] for r in results))


def raw_size(path):
    """Size of the (inflated) JSON, counted by a child process."""
    out = subprocess.run(["sh", "-c", 'zcat -f "$0" | wc -c', path], capture_output=True, text=True)
    return int(out.stdout.strip())


def json_load_cmd(trace, python=sys.executable):
    return [python, "-c", "import gzip,json,sys; f=sys.argv[1]; "
            "json.load(gzip.open(f) if open(f,'rb').read(2)==b'\\x1f\\x8b' else open(f,'rb'))", trace]


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def header(args, trace):
    print(f"trace: {trace}\nraw JSON {raw_size(trace) / MIB:.1f} MiB, file {os.path.getsize(trace) / MIB:.1f} MiB; "
          f"medians of {args.runs}; load average {load_average()}; {os.cpu_count()} CPUs")


def row(name, r, base=None):
    ratio = f"   {base[0] / r[0]:6.2f}x wall  {base[1] / r[1]:6.2f}x cpu" if base else ""
    peak = f"{r[2] / 1024:9.1f}" if r[2] is not None else f"{'-':>9s}"
    print(f"  {name:44s} {r[0]:8.3f} {r[1]:8.3f} {peak}{ratio}")


def cmd_import(args):
    header(args, args.trace)
    print(f"  {'':44s} {'wall s':>8s} {'cpu s':>8s} {'peak MiB':>9s}")
    with tempfile.TemporaryDirectory() as out:
        imp = median_of([args.bin, "import", args.trace, "-o", os.path.join(out, "t.pb")], args.runs)
    info = median_of([args.bin, "info", args.trace], args.runs)
    load = median_of(json_load_cmd(args.trace), args.runs)
    zcat = median_of(["sh", "-c", 'zcat -f "$0" > /dev/null', args.trace], args.runs, rss=False)
    row("reverie import -o X.pb", imp)
    row("reverie info", info)
    row("python json.load (baseline)", load, None)
    row("zcat (baseline)", zcat, None)
    raw = raw_size(args.trace)
    # Issue 31's targets: import >= 8x json.load, info >= 6x.
    for name, r, target in (("import", imp, 8), ("info", info, 6)):
        print(f"json.load / reverie {name + ':':7s} {load[0] / r[0]:5.2f}x wall, {load[1] / r[1]:5.2f}x cpu "
              f"(target >= {target}x);  zcat / reverie {name}: {zcat[0] / r[0]:.2f}x wall, "
              f"{zcat[1] / r[1]:.2f}x cpu")
    print(f"peak RSS / raw JSON: import {imp[2] * 1024 / raw:.2f}x, info {info[2] * 1024 / raw:.2f}x "
          f"(target <= 2x)")


def cmd_alternate(args):
    bins = [b for b in args.bins.split(",") if b]
    for b in bins:
        if not os.access(b, os.X_OK):
            sys.exit(f"bench.py: no reverie binary at {b}")
    header(args, args.trace)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "X.pb")
        extra = ["-o", out] if args.command == "import" else []
        runs = {b: [] for b in bins}
        for _ in range(args.runs):
            for b in bins:  # in turn, so that a slower minute falls on every build
                runs[b].append(measure([b, args.command, args.trace] + extra))
    print(f"reverie {args.command}, builds run in turn, medians of {args.runs}:")
    for b in bins:
        wall, cpu_s, peak, user = (statistics.median(r[i] for r in runs[b]) for i in range(4))
        print(f"  {b}: wall {wall:.3f} s, user {user:.3f} s, sys {cpu_s - user:.3f} s, "
              f"peak {peak / 1024:.0f} MiB")


HTA_SCRIPT = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import logging
from hta.trace_analysis import TraceAnalysis
logging.getLogger("hta").setLevel(logging.ERROR)
def cpu():
    r = [os.times()]
    return r[0].user + r[0].system + r[0].children_user + r[0].children_system
t0, c0 = time.perf_counter(), cpu()
analyzer = TraceAnalysis(trace_dir=sys.argv[2])
t1 = time.perf_counter()
rank = sorted(analyzer.t.traces.keys())[0]
graph, ok = analyzer.critical_path_analysis(rank=rank, annotation="ProfilerStep", instance_id=None)
t2, c2 = time.perf_counter(), cpu()
print(json.dumps({"load_s": t1 - t0, "critical_path_s": t2 - t1, "cpu_s": c2 - c0, "ok": bool(ok),
                  "nodes": graph.number_of_nodes() if graph is not None else 0}))
"""


def cmd_hta(args):
    hta = os.path.abspath(args.hta) if args.hta else ""
    if not hta or not os.path.isfile(os.path.join(hta, "hta", "trace_analysis.py")):
        print(f"SKIP: no Holistic Trace Analysis checkout at '{args.hta or ''}' (give --hta DIR, the "
              "folder holding HTA's hta/ package, fetched from github.com/facebookresearch/"
              "HolisticTraceAnalysis outside this repository; it needs Debian's python3-pandas "
              "python3-plotly python3-networkx python3-psutil python3-pydot)")
        return 0
    header(args, args.trace)
    with tempfile.TemporaryDirectory() as trace_dir:
        # HTA analyses every trace in a folder: give it one holding only T.
        os.symlink(os.path.abspath(args.trace), os.path.join(trace_dir, os.path.basename(args.trace)))
        runs = []
        for _ in range(args.runs):
            p = subprocess.run([args.python, "-c", HTA_SCRIPT, hta, trace_dir], capture_output=True,
                               text=True)
            if p.returncode != 0:
                sys.exit(f"bench.py: HTA failed: {p.stderr.strip()[-800:]}")
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    hta_load = min(r["load_s"] for r in runs)
    hta_total = min(r["load_s"] + r["critical_path_s"] for r in runs)
    hta_cpu = min(r["cpu_s"] for r in runs)
    replay = median_of([args.bin, "replay", args.trace, "--critical-path"], args.runs)
    load = median_of(json_load_cmd(args.trace, args.python), args.runs)
    print(f"  {'':44s} {'wall s':>8s} {'cpu s':>8s} {'peak MiB':>9s}")
    row("reverie replay --critical-path (all steps)", replay)
    row("python json.load (same interpreter as HTA)", load)
    print(f"  HTA load {hta_load:.3f} s, load + critical path of one step {hta_total:.3f} s wall, "
          f"{hta_cpu:.3f} s cpu (best of {args.runs}; graph of {runs[0]['nodes']} nodes, "
          f"ok={runs[0]['ok']})")
    print(f"HTA / reverie replay --critical-path: {hta_total / replay[0]:.1f}x wall, "
          f"{hta_cpu / replay[1]:.1f}x cpu (target >= 20x)")
    print(f"json.load / reverie replay --critical-path: {load[0] / replay[0]:.1f}x wall")
    return 0


def scaled_trace(source, copies, out_path):
    """Writes `source` with its events repeated `copies` times: copy k is
    shifted by k x 10^d us (d chosen so copies do not overlap), and its
    correlation / external / flow ids, sequence numbers and ProfilerStep
    numbers get a 4-digit prefix 1kkk, so each copy is a distinct set of
    steps. Returns the size written."""
    with (gzip.open(source) if open(source, "rb").read(2) == b"\x1f\x8b" else open(source, "rb")) as f:
        text = f.read()
    start = text.index(b'"traceEvents": [') + len(b'"traceEvents": [')
    end = text.rindex(b"]")
    body = text[start:end].rstrip()
    stamps = [int(m) for m in re.findall(rb'"ts": (\d+)', body)]
    if not stamps or len({len(str(s)) for s in stamps}) != 1 or len(str(stamps[0])) < 12:
        sys.exit("bench.py: the scaling trace needs integer ts values of one width (>= 12 digits)")
    digits = len(str(stamps[0]))
    unit = 10 ** (digits - 9)  # shift ts by whole units: only the 9-digit prefix changes
    prefixes = sorted({s // unit for s in stamps})
    per_copy = prefixes[-1] - prefixes[0] + 1
    ids = re.compile(rb'("correlation": |"External id": |"external id": |"id": |"Sequence number": )(\d)')
    with open(out_path, "wb") as out:
        out.write(text[:start])
        for k in range(copies):
            b = body
            for p in prefixes:
                b = b.replace(b'"ts": %d' % p, b'"ts": %d' % (p + k * per_copy))
            b = ids.sub(rb"\g<1>1%03d\g<2>" % k, b)
            b = b.replace(b"ProfilerStep#", b"ProfilerStep#1%03d" % k)
            if k:
                out.write(b",\n")
            out.write(b)
        out.write(text[end:])
        return out.tell()


def cmd_scaling(args):
    sizes = [float(s) for s in args.sizes_gb.split(",")]
    print(f"source: {args.trace}; best of {args.runs}; load average {load_average()}; "
          f"{os.cpu_count()} CPUs")
    body = raw_size(args.trace)
    tmp = tempfile.mkdtemp(prefix="reverie_scaling_", dir=args.tmp)
    rows = []
    try:
        for gb in sizes:
            copies = max(1, round(gb * 1e9 / body))
            path = os.path.join(tmp, f"scaled_{copies}x.json")
            # In a child process: this one must stay small (see measure()).
            subprocess.run([sys.executable, os.path.abspath(__file__), "make-scaled", "--trace",
                            args.trace, "--copies", str(copies), "--out", path], check=True)
            size = os.path.getsize(path)
            imp = median_of([args.bin, "import", path, "-o", path + ".pb"], args.runs)
            os.remove(path + ".pb")
            info = median_of([args.bin, "info", path], args.runs)
            rows.append((size, copies, imp, info))
            os.remove(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("  (per GB of JSON; user = CPU in reverie's own code, sys = the kernel's: reading the file,")
    print("   zeroing and mapping memory, writing the .pb)")
    print(f"  {'JSON size':>10s} {'copies':>6s} | {'import: wall':>12s} {'user':>6s} {'sys':>6s} "
          f"{'peak':>6s} | {'info: wall':>10s} {'user':>6s} {'sys':>6s} {'peak':>6s}   (s/GB, peak/size)")
    for size, copies, imp, info in rows:
        gb = size / 1e9
        cells = []
        for r in (imp, info):
            cells.append(f"{r[0] / gb:12.2f} {r[3] / gb:6.2f} {(r[1] - r[3]) / gb:6.2f} "
                         f"{r[2] * 1024 / size:6.2f}")
        print(f"  {gb:8.2f}GB {copies:6d} | {cells[0]} | {cells[1][2:]}")
    (s0, _, i0, f0), (s1, _, i1, f1) = rows[0], rows[-1]
    print(f"size x{s1 / s0:.2f}: import user x{i1[3] / i0[3]:.2f}, cpu x{i1[1] / i0[1]:.2f}, "
          f"peak x{i1[2] / i0[2]:.2f}; info user x{f1[3] / f0[3]:.2f}, cpu x{f1[1] / f0[1]:.2f}, "
          f"peak x{f1[2] / f0[2]:.2f} (linear: each equal to the size ratio)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["import", "hta", "alternate", "scaling", "make-scaled"])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "release", "cli", "reverie"))
    ap.add_argument("--bins", default="", help="alternate: the builds to compare, comma-separated")
    ap.add_argument("--command", default="import", choices=["import", "info"])
    ap.add_argument("--trace", default=DEFAULT_TRACE)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hta", default="", help="folder holding HTA's hta/ package")
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter with Debian's pandas etc. for HTA (and its json.load)")
    ap.add_argument("--sizes-gb", default="0.5,1,2")
    ap.add_argument("--tmp", default=None, help="where scaling traces are written (default: $TMPDIR)")
    ap.add_argument("--copies", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.what == "make-scaled":
        scaled_trace(args.trace, args.copies, args.out)
        return 0
    if args.what != "alternate" and not os.access(args.bin, os.X_OK):
        sys.exit(f"bench.py: no reverie binary at {args.bin} (build it, or give --bin)")
    if not os.path.isfile(args.trace):
        sys.exit(f"bench.py: trace {args.trace} not found (set REVERIE_TRACES or give --trace)")
    if args.what == "scaling":
        args.runs = min(args.runs, 3)
    commands = {"import": cmd_import, "hta": cmd_hta, "alternate": cmd_alternate, "scaling": cmd_scaling}
    return commands[args.what](args) or 0


if __name__ == "__main__":
    sys.exit(main())
