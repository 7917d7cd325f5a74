"""Running ASTRA-sim (analytical, congestion unaware) on reverie's exports.

Configs are written here rather than taken from ASTRA-sim's tree, with the
values of the configs known to work (README "Cluster scale"): the system
config is examples/system/native_collectives/Ring_4chunks.json's (ring
algorithms in every dimension, 4 chunks, roofline and local-memory tracking
off), the networks are rings of 50 GB/s, 500 ns links per dimension like
examples/network/analytical/Ring_8npus.yml.
"""

import json
import os
import re
import subprocess
import tempfile
import time

SYSTEM = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4,
    "collective-optimization": "localBWAware",
    "local-mem-bw": 1600,
    "boost-mode": 0,
    "roofline-enabled": 0,
    "peak-perf": 900,
}
LINK_GBPS = 50.0  # GB/s per link and direction: bytes per ns
LINK_NS = 500.0

FINISHED = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles, exposed communication (\d+) cycles")
COMM_TIME = re.compile(r"sys\[0\], Comm time: (\d+)")
NODE_EVENT = re.compile(r"(issue|callback),sys->id=(\d+), tick=(\d+), node->id=(\d+),")


def write_configs(folder, dims, trace=False):
    """System, network and remote-memory configs for a ring per dimension.
    Returns (system, network, memory) paths."""
    os.makedirs(folder, exist_ok=True)
    tag = "x".join(str(d) for d in dims) + ("_trace" if trace else "")
    system = dict(SYSTEM)
    for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        system[op + "-implementation"] = ["ring"] * len(dims)
    if trace:
        system["trace-enabled"] = 1
    paths = (os.path.join(folder, f"system_{tag}.json"), os.path.join(folder, f"ring_{tag}.yml"),
             os.path.join(folder, "no_memory_expansion.json"))
    with open(paths[0], "w") as f:
        json.dump(system, f, indent=1)
    with open(paths[1], "w") as f:
        n = len(dims)
        f.write(f"topology: [ {', '.join(['Ring'] * n)} ]\n")
        f.write(f"npus_count: [ {', '.join(str(d) for d in dims)} ]\n")
        f.write(f"bandwidth: [ {', '.join([str(LINK_GBPS)] * n)} ]  # GB/s\n")
        f.write(f"latency: [ {', '.join([str(LINK_NS)] * n)} ]  # ns\n")
    with open(paths[2], "w") as f:
        json.dump({"memory-type": "NO_MEMORY_EXPANSION"}, f)
    return paths


def measure(cmd):
    """(wall seconds, peak RSS in KiB, exit status, stdout, stderr) of one run,
    the RSS from wait4 on that child alone."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return wall, usage.ru_maxrss, p.returncode, out.read(), err.read()


def run(binary, prefix, npus, configs, log_folder):
    """Runs ASTRA-sim on PREFIX.0.et .. PREFIX.(npus-1).et. Returns a dict:
    finish and exposed communication (per NPU, cycles = ns; None when the NPU
    never finished), comm0 (NPU 0's communication time from its statistics),
    wall, rss_kib, status, cpu_warning (the statistics pass failed on CPU
    nodes)."""
    system, network, memory = configs
    cmd = [binary, f"--workload-configuration={prefix}", f"--system-configuration={system}",
           f"--remote-memory-configuration={memory}", f"--network-configuration={network}",
           f"--logging-folder={log_folder}"]
    wall, rss, status, out, err = measure(cmd)
    finish, exposed = [None] * npus, [None] * npus
    for m in FINISHED.finditer(out + err):
        if int(m.group(1)) < npus:
            finish[int(m.group(1))] = int(m.group(2))
            exposed[int(m.group(1))] = int(m.group(3))
    comm = COMM_TIME.search(out + err)
    return {"finish": finish, "exposed": exposed, "comm0": int(comm.group(1)) if comm else None,
            "wall": wall, "rss_kib": rss, "status": status,
            "cpu_warning": "Only GPU and COMM types are supported" in out + err}


def node_times(log_folder):
    """(issue tick, callback tick) per (NPU, node id), from a run with
    trace-enabled (its debug lines go to log.log)."""
    times = {}
    with open(os.path.join(log_folder, "log.log")) as f:
        for line in f:
            m = NODE_EVENT.search(line)
            if not m:
                continue
            key = (int(m.group(2)), int(m.group(4)))
            start, end = times.get(key, (None, None))
            if m.group(1) == "issue":
                start = int(m.group(3))
            else:
                end = int(m.group(3))
            times[key] = (start, end)
    return times


def replay(nodes, comm_ns=None):
    """ASTRA-sim's workload-layer model of one rank (export/astra_model.h):
    one CPU, one GPU-compute and one communication node at a time, dependency-
    free nodes issued by id whenever a node ends. A communication node takes
    comm_ns[id] when given, else its duration_micros. Returns the finish in ns."""
    import heapq
    pending = [len(n["data_deps"]) for n in nodes]
    children = [[] for _ in nodes]
    for n in nodes:
        for p in n["data_deps"]:
            children[p].append(n["id"])
    free = sorted(n["id"] for n in nodes if not n["data_deps"])
    busy = {"cpu": False, "gpu": False, "comm": False}
    running, now = [], 0

    def slot(n):
        if n["attr"].get("is_cpu_op"):
            return "cpu"
        if n["type"] == 4:
            return "gpu"
        return None if n["type"] == 6 else "comm"

    def issue():
        nonlocal free
        kept = []
        for i in free:
            s = slot(nodes[i])
            if s and busy[s]:
                kept.append(i)
                continue
            if s:
                busy[s] = True
            ns = max(1, nodes[i]["duration_us"] * 1000)
            if comm_ns and i in comm_ns:
                ns = comm_ns[i]
            heapq.heappush(running, (now + ns, i))
        free = kept

    issue()
    while running:
        now, i = heapq.heappop(running)
        s = slot(nodes[i])
        if s:
            busy[s] = False
        for c in children[i]:
            pending[c] -= 1
            if pending[c] == 0:
                free.append(c)
        free.sort()
        issue()
    return now
