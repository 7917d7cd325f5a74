#!/usr/bin/env python3
"""ASTRA-sim against reverie: how well `reverie export --chakra` keeps
reverie's timing under ASTRA-sim, how ASTRA-sim's network times the
collectives of a ddp.lua what-if, and what a data-parallel what-if costs at
8 to 4096 NPUs. Writes the tables of docs/ACCURACY.md ("Cluster scale:
ASTRA-sim vs reverie") and docs/PERFORMANCE.md ("ASTRA-sim export and runs")
with --write-docs, else prints them.

usage: ASTRA_SIM=/path/to/AstraSim_Analytical_Congestion_Unaware \\
         bench/astra_sim/run.py [--reverie BIN] [--work DIR] [--scale 8,64,512,4096]
                                [--sections accuracy,all-traces,collectives,scale] [--write-docs]

Without $ASTRA_SIM (or when it is not executable) it says so and exits 0:
ASTRA-sim is not part of reverie's build (README "Cluster scale" has the
recipe). Shared traces come from ../shared/traces or $REVERIE_TRACES; a
missing one is skipped and said so.
"""

import argparse
import glob
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import astra  # noqa: E402
import chakra_et  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRACES = os.environ.get("REVERIE_TRACES", os.path.join(REPO, "..", "shared", "traces"))
HTA = "facebookresearch__HolisticTraceAnalysis/tests/data/"
# (label, path: "examples/..." in the repo, else under the shared traces)
ITEM1 = [
    ("examples/tiny_mlp_training.json", "examples/tiny_mlp_training.json"),
    ("examples/ddp_rank0.json", "examples/ddp_rank0.json"),
    ("HTA nccl_data (A100 DDP)", HTA + "nccl_parser_config/nccl_data.json.gz"),
    ("HTA DLRM rank 0", HTA + "negative_queue_length_values_check/rank0.json.gz"),
    ("Quentin-Anthony H100 transformer", "Quentin-Anthony__torch-profiling-tutorial/log/transformer/"
     "dcb0aa1a78e7_4399.1752181589589738346.pt.trace.json"),
    ("TraceLens H100 bert-small",
     "AMD-AGI__TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"),
]
WHAT_IF_TRACE = ("HTA nccl_data (A100 DDP)", HTA + "nccl_parser_config/nccl_data.json.gz")
DDP_GBPS = 8 * astra.LINK_GBPS  # ddp.lua's bus bandwidth in Gbit/s = ASTRA-sim's link GB/s
SCALE_DIMS = {8: [8], 64: [8, 8], 512: [8, 8, 8], 4096: [8, 8, 64]}


def resolve(path):
    full = os.path.join(REPO, path) if path.startswith("examples/") else os.path.join(TRACES, path)
    return full if os.path.exists(full) else None


class Bench:
    def __init__(self, binary, reverie, work):
        self.binary, self.reverie, self.work = binary, reverie, work
        self.count = 0

    def export(self, traces, npus, *flags):
        """Runs reverie export; returns a dict with prefix, span_ns,
        steps, wall, rss_kib, stderr, or error."""
        self.count += 1
        folder = os.path.join(self.work, f"e{self.count}")
        os.makedirs(folder, exist_ok=True)
        prefix = os.path.join(folder, "et")
        cmd = [self.reverie, "export", *traces, "--chakra", prefix, *flags]
        if len(traces) == 1:
            cmd += ["--ranks", str(npus)]
        wall, rss, status, out, err = astra.measure(cmd)
        if status != 0:
            return {"error": err.strip().splitlines()[-1] if err.strip() else f"exit {status}"}
        span = re.search(r"compare with (\d+)", out)
        its = re.search(r", (\d+) steps", out)
        return {"prefix": prefix, "folder": folder, "span_ns": int(span.group(1)),
                "steps": int(its.group(1)) if its else 1, "wall": wall, "rss_kib": rss,
                "stderr": err}

    def astra(self, exported, dims, trace=False):
        configs = astra.write_configs(os.path.join(self.work, "configs"), dims, trace)
        npus = 1
        for d in dims:
            npus *= d
        log = os.path.join(exported["folder"], "log")
        result = astra.run(self.binary, exported["prefix"], npus, configs, log)
        result["log"] = log
        result["ok"] = result["status"] == 0 and None not in result["finish"]
        return result


def pct(a, b):
    return f"{100.0 * (a - b) / b:+.2f}%"


def cell(bench, exported, dims):
    """'ASTRA-sim us (vs reverie)' for one export, or why there is none."""
    if "error" in exported:
        return f"export failed: {exported['error']}"
    r = bench.astra(exported, dims)
    if not r["ok"]:
        done = sum(f is not None for f in r["finish"])
        return f"FAILED ({done} of {len(r['finish'])} NPUs finished, exit {r['status']})"
    finish = max(r["finish"])
    return f"{finish / 1e3:.1f} ({pct(finish, exported['span_ns'])})"


def lanes_of(stderr):
    m = re.search(r"warning: (\d+) CPU threads and (\d+) GPU streams", stderr)
    return f"{m.group(1)} / {m.group(2)}" if m else "1 / 1"


def accuracy_table(bench):
    rows = ["| trace | NPUs | threads / streams | network collectives | reverie span (us) | "
            "lane, communication replayed | lane, collectives on ASTRA-sim's network | "
            "kernel-level (`--chakra-detail kernels`) |", "|---|---|---|---|---|---|---|---|"]
    cases = [(label, path, 2) for label, path in ITEM1]
    cases += [("examples/ddp_rank0.json", "examples/ddp_rank0.json", n) for n in (4, 8)]
    for label, path, npus in cases:
        trace = resolve(path)
        if trace is None:
            rows.append(f"| {label} | {npus} | skipped: not under {TRACES} | | | | | |")
            continue
        replay = bench.export([trace], npus, "--chakra-comm", "replay")
        network = bench.export([trace], npus)
        kernels = bench.export([trace], npus, "--chakra-detail", "kernels")
        if "error" in network:
            rows.append(f"| {label} | {npus} | export failed: {network['error']} | | | | | |")
            continue
        comm = re.search(r"(\d+) communication nodes", network["stderr"])
        rows.append(f"| {label} | {npus} | {lanes_of(kernels.get('stderr', ''))} | "
                    f"{comm.group(1) if comm else 0} | {network['span_ns'] / 1e3:.1f} | "
                    f"{cell(bench, replay, [npus])} | {cell(bench, network, [npus])} | "
                    f"{cell(bench, kernels, [npus])} |")
    return "\n".join(rows)


def all_traces_table(bench):
    """Every shared Kineto trace, lane export with communication replayed."""
    item1 = {path for _, path in ITEM1}
    paths = sorted(glob.glob(os.path.join(TRACES, "**", "*.json*"), recursive=True))
    rows = ["| trace | reverie span (us) | ASTRA-sim, lane with communication replayed |",
            "|---|---|---|"]
    within, total = 0, 0
    for trace in paths:
        rel = os.path.relpath(trace, TRACES)
        if rel in item1 or re.search(r"(_et\.json|linear_et|resnet_et)", rel):
            continue  # execution traces are not Kineto profiles
        exported = bench.export([trace], 2, "--chakra-comm", "replay")
        if "error" in exported:
            rows.append(f"| {rel} | - | not exported: {exported['error'][:120]} |")
            continue
        text = cell(bench, exported, [2])
        m = re.search(r"^([0-9.]+) \(([+-][0-9.]+)%\)", text)
        total += 1
        # Chakra's durations are whole microseconds: 0.5 us is the resolution.
        off_ns = abs(float(m.group(1)) * 1e3 - exported["span_ns"]) if m else None
        within += bool(m and (abs(float(m.group(2))) <= 1.0 or off_ns <= 500))
        rows.append(f"| {rel} | {exported['span_ns'] / 1e3:.3f} | {text} |")
    rows.append(f"\n{within} of {total} exported traces within 1% or within the 0.5 us "
                "resolution of Chakra's microseconds.")
    return "\n".join(rows)


def fit_ddp(groups, workers):
    """ddp.lua's latency_us and bandwidth_gbps that give its all-reduces
    ASTRA-sim's times: a least-squares line through (bytes, ASTRA-sim ns)
    over the sizes (one size: ddp.lua's bandwidth, the rest as latency)."""
    points = [(size, ast / count) for (kind, size), (count, _, ast) in groups.items()
              if kind == "ALL_REDUCE"]
    if not points:
        return None
    ring = 2 * (workers - 1) / workers
    if len(points) == 1:
        slope = ring * 8 / (DDP_GBPS * 1e9) * 1e9  # ns per byte
    else:
        n = len(points)
        mx = sum(x for x, _ in points) / n
        my = sum(y for _, y in points) / n
        slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    intercept = sum(y - slope * x for x, y in points) / len(points)
    return intercept / 1e3, ring * 8 / slope  # us, Gbit/s


def collectives_section(bench, label, traces, npus, flags, ddp_base=None):
    """Per collective: ASTRA-sim's time (its log) beside reverie's (ddp.lua's,
    the node's duration in the file), and the whole step. With
    ddp_base (ddp.lua's flags without bandwidth and latency), reverie is
    then run again with ddp.lua fitted to ASTRA-sim's all-reduce times: what
    is left between the two is the lane's approximation."""
    exported = bench.export(traces, npus, *flags)
    if "error" in exported:
        return f"{label}: export failed: {exported['error']}\n"
    r = bench.astra(exported, [npus], trace=True)
    if not r["ok"]:
        return f"{label}: ASTRA-sim did not finish on every NPU (exit {r['status']})\n"
    # The k-th communication node of every rank is one collective. Its time
    # is the shortest of the NPUs' issue-to-completion times: an NPU that
    # issued it early also waited for its peers (reverie ranks' rule).
    comm_of = []
    for rank in range(npus if len(traces) > 1 else 1):
        rank_nodes = chakra_et.read(f"{exported['prefix']}.{rank}.et")
        comm_of.append([n for n in rank_nodes if n["type"] in (5, 6, 7)])
    nodes = chakra_et.read(exported["prefix"] + ".0.et")
    times = astra.node_times(r["log"])
    groups, astra_ns = {}, {}
    for k, n in enumerate(comm_of[0]):
        spans = [times.get((rank, comm[k]["id"]), (None, None)) for rank, comm in enumerate(comm_of)]
        if any(start is None or end is None for start, end in spans):
            continue
        astra_ns[n["id"]] = spans[0][1] - spans[0][0]  # rank 0's own, for its replay
        took = min(end - start for start, end in spans)
        kind = chakra_et.COLLECTIVES.get(n["attr"].get("comm_type"), chakra_et.NODE_TYPES[n["type"]])
        g = groups.setdefault((kind, n["attr"].get("comm_size", 0)), [0, 0, 0])
        g[0] += 1
        g[1] += n["duration_us"] * 1000
        g[2] += took
    rows = [f"**{label}** ({npus} NPUs; ASTRA-sim ring of {astra.LINK_GBPS:g} GB/s, "
            f"{astra.LINK_NS:g} ns links; reverie: {' '.join(flags) or 'as traced'})", "",
            "| collective | bytes | count | reverie us each | ASTRA-sim us each | ASTRA-sim / reverie |",
            "|---|---|---|---|---|---|"]
    for (kind, size), (count, rev, ast) in sorted(groups.items()):
        rows.append(f"| {kind} | {size:,} | {count} | {rev / count / 1e3:.1f} | "
                    f"{ast / count / 1e3:.1f} | {ast / rev:.3f} |" if rev else
                    f"| {kind} | {size:,} | {count} | 0 | {ast / count / 1e3:.1f} | - |")
    finish = max(r["finish"])
    delta_sum = sum(g[2] - g[1] for g in groups.values())
    modelled = astra.replay(nodes, astra_ns)
    rows += ["", f"Whole run: reverie {exported['span_ns'] / 1e3:.1f} us, ASTRA-sim "
             f"{finish / 1e3:.1f} us ({pct(finish, exported['span_ns'])}); the collectives take "
             f"{delta_sum / 1e3:+.1f} us more in all on ASTRA-sim's network than in reverie. "
             f"Rank 0's lane replayed with ASTRA-sim's collective times (bench/astra_sim/astra.py "
             f"replay) ends at {modelled / 1e3:.1f} us, ASTRA-sim's rank 0 at "
             f"{r['finish'][0] / 1e3:.1f} us ({pct(modelled, r['finish'][0])}).", ""]
    fit = fit_ddp(groups, npus) if ddp_base else None
    if fit:
        refit = bench.export(traces, npus, *ddp_base, "--set", f"latency_us={fit[0]:.3f}",
                             "--set", f"bandwidth_gbps={fit[1]:.3f}")
        if "error" not in refit:
            rows += [f"reverie with ddp.lua fitted to ASTRA-sim's all-reduce times (latency_us="
                     f"{fit[0]:.1f}, bandwidth_gbps={fit[1]:.1f}): {refit['span_ns'] / 1e3:.1f} us; "
                     f"ASTRA-sim's finish on the first export is {pct(finish, refit['span_ns'])} "
                     "from it (the lane's approximation).", ""]
    return "\n".join(rows)


def scale_table(bench, sizes, label, path):
    trace = resolve(path)
    if trace is None:
        return f"skipped: {path} not under {TRACES}"
    rows = ["| NPUs | ASTRA-sim network (rings of 8) | export s | export peak RSS MiB | "
            "ET per rank KiB | ASTRA-sim s | ASTRA-sim peak RSS MiB | ASTRA-sim / export (wall) | "
            "reverie us per step | ASTRA-sim us per step | ASTRA-sim communication "
            "us per step (exposed) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in sizes:
        dims = SCALE_DIMS.get(n, [n])
        exported = bench.export([trace], n, "--script", "ddp.lua", "--set", f"workers={n}",
                                "--set", f"bandwidth_gbps={DDP_GBPS:g}")
        if "error" in exported:
            rows.append(f"| {n} | export failed: {exported['error']} |")
            continue
        size = os.path.getsize(exported["prefix"] + ".0.et")
        r = bench.astra(exported, dims)
        its = exported["steps"]
        step = f"{max(r['finish']) / its / 1e3:.1f}" if r["ok"] else f"FAILED (exit {r['status']})"
        comm = (f"{r['comm0'] / its / 1e3:.1f} ({r['exposed'][0] / its / 1e3:.1f})"
                if r["ok"] and r["comm0"] is not None else "-")
        rows.append(f"| {n} | {' x '.join(map(str, dims))} | {exported['wall']:.2f} | "
                    f"{exported['rss_kib'] / 1024:.0f} | {size / 1024:.1f} | {r['wall']:.1f} | "
                    f"{r['rss_kib'] / 1024:.0f} | {r['wall'] / exported['wall']:.2f}x | "
                    f"{exported['span_ns'] / its / 1e3:.1f} | {step} | {comm} |")
        shutil.rmtree(exported["folder"], ignore_errors=True)
    return f"{label} with ddp.lua workers=N, bandwidth_gbps={DDP_GBPS:g}:\n\n" + "\n".join(rows)


def alignment_table(bench):
    """One all-reduce alone on the 8-NPU ring: sizes that are and are not a
    whole number of 4-byte elements."""
    rows = ["| bytes | multiple of 4 | ASTRA-sim us | ddp.lua us (10 us + ring term) |",
            "|---|---|---|---|"]
    configs = astra.write_configs(os.path.join(bench.work, "configs"), [8])
    for size in (21146639, 21146640, 26255360, 26255361):
        folder = os.path.join(bench.work, f"one_{size}")
        os.makedirs(folder, exist_ok=True)
        chakra_et.write_one_collective(os.path.join(folder, "et"), 8, 0, size)
        r = astra.run(bench.binary, os.path.join(folder, "et"), 8, configs, os.path.join(folder, "log"))
        ddp = 10 + 2 * 7 / 8 * size * 8 / (DDP_GBPS * 1e9) * 1e6
        took = f"{r['finish'][0] / 1e3:.1f}" if r["finish"][0] else "did not finish"
        rows.append(f"| {size:,} | {'yes' if size % 4 == 0 else 'no'} | {took} | {ddp:.1f} |")
    return "\n".join(rows)


def collectives_sections(bench):
    ex = lambda p: os.path.join(REPO, p)  # noqa: E731
    base = ["--script", "ddp.lua", "--set", "workers=8"]
    ddp = base + ["--set", f"bandwidth_gbps={DDP_GBPS:g}"]
    sections = [collectives_section(bench, "examples/tiny_mlp_training.json + ddp.lua",
                                    [ex("examples/tiny_mlp_training.json")], 8, ddp, base)]
    nccl = resolve(WHAT_IF_TRACE[1])
    if nccl:
        sections.append(collectives_section(bench, "HTA nccl_data + ddp.lua", [nccl], 8, ddp, base))
    sections.append(collectives_section(bench, "examples/ddp_rank0.json + ddp_rank1.json (a job)",
                                        [ex("examples/ddp_rank0.json"), ex("examples/ddp_rank1.json")],
                                        2, [], ["--script", "ddp.lua", "--set", "workers=2"]))
    sections.append("**One all-reduce alone** (8 NPUs, the same ring):\n\n" + alignment_table(bench))
    return "\n".join(sections)


def replace_block(path, name, text):
    begin, end = f"<!-- bench/astra_sim:{name} -->", f"<!-- /bench/astra_sim:{name} -->"
    with open(path) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        sys.exit(f"run.py: {path} has no {begin} ... {end} block")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(f"{head}{begin}\n{text.strip()}\n{end}{tail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reverie", default=os.path.join(REPO, "build", "release", "cli", "reverie"))
    ap.add_argument("--work", default="/tmp/reverie_astra_bench")
    ap.add_argument("--scale", default="8,64,512,4096")
    ap.add_argument("--sections", default="accuracy,all-traces,collectives,scale",
                    help="which tables to measure (and write with --write-docs)")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    binary = os.environ.get("ASTRA_SIM", "")
    if not binary or not os.access(binary, os.X_OK):
        print("bench/astra_sim: skipped: set ASTRA_SIM to an AstraSim_Analytical_Congestion_Unaware "
              "binary (README, 'Cluster scale: ASTRA-sim', has the build recipe)")
        return 0
    if not os.access(args.reverie, os.X_OK):
        sys.exit(f"run.py: no reverie binary at {args.reverie} (build it, or pass --reverie)")
    shutil.rmtree(args.work, ignore_errors=True)
    bench = Bench(binary, args.reverie, args.work)
    wanted = set(args.sections.split(","))
    blocks = {}
    if "accuracy" in wanted:
        blocks["accuracy"] = accuracy_table(bench)
    if "all-traces" in wanted:
        blocks["all-traces"] = all_traces_table(bench)
    if "collectives" in wanted:
        blocks["collectives"] = collectives_sections(bench)
    if "scale" in wanted:
        sizes = [int(n) for n in args.scale.split(",") if n]
        blocks["scale"] = "\n\n".join(
            [scale_table(bench, sizes, *WHAT_IF_TRACE),
             scale_table(bench, sizes, "examples/tiny_mlp_training.json",
                         "examples/tiny_mlp_training.json")])
    for name, text in blocks.items():
        print(f"\n## {name}\n\n{text}")
    if args.write_docs:
        for name, text in blocks.items():
            doc = "PERFORMANCE.md" if name == "scale" else "ACCURACY.md"
            replace_block(os.path.join(REPO, "docs", doc), name, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
