"""The C graph runtime as a runtime: plans cached per input shapes, runs from
many threads at once with the bits of a run alone (from Python threads and
from C threads, under AddressSanitizer and ThreadSanitizer too), a C
program's digests equal to the Python host's, the fuzz target's fixed-seed
pass, and every input that ever crashed it replayed."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from samebits.testing import portable_values  # noqa: E402

from conftest import require_tool  # noqa: E402
from native_build import build_check, isa_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(99)




def mixed_model() -> bytes:
    """A batch-symbolic model with products, a shape subgraph and softmax."""
    w = RNG.standard_normal((12, 16)).astype(np.float32)
    b = RNG.standard_normal(16).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Shape", ["r"], ["s"]),
             helper.make_node("Reshape", ["r", "s"], ["r2"]),
             helper.make_node("Softmax", ["r2"], ["y"], axis=-1),
             helper.make_node("Mul", ["y", "x2"], ["z"])]
    g = helper.make_graph(nodes, "mixed",
                          [helper.make_tensor_value_info("x", TP.FLOAT, ["n", 12]),
                           helper.make_tensor_value_info("x2", TP.FLOAT, ["n", 16])],
                          [helper.make_tensor_value_info("z", TP.FLOAT, None)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def add_chain(nodes: int) -> bytes:
    """x (16 floats) through `nodes` chained Adds of a constant: the per-node
    cost's model (bench/bench_models.py times the same graph)."""
    chain = [helper.make_node("Add", ["x" if i == 0 else f"v{i - 1}", "c"], [f"v{i}"])
             for i in range(nodes)]
    g = helper.make_graph(chain, "chain", [helper.make_tensor_value_info("x", TP.FLOAT, [16])],
                          [helper.make_tensor_value_info(f"v{nodes - 1}", TP.FLOAT, [16])],
                          [numpy_helper.from_array(np.full(16, 1e-3, np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def test_a_chain_of_adds_runs_every_node():
    """1,000 chained Adds: every node runs (none is folded away or skipped),
    in place after the first."""
    sess = so.load(add_chain(1000), mode="exact", threads=1)
    assert sess.node_count == 1000
    y = sess.run({"x": np.zeros(16, np.float32)})["v999"]
    want = np.zeros(16, np.float32)
    for _ in range(1000):
        want = want + np.float32(1e-3)
    assert y.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def feeds(batch: int) -> dict:
    return {"x": portable_values((batch, 12), batch), "x2": portable_values((batch, 16), 7 + batch)}


def test_plans_are_cached_per_input_shapes():
    sess = so.load(mixed_model(), mode="exact", threads=1)
    assert sess.plan_count == 0
    for batch in (1, 2, 1, 3, 2):
        sess.run(feeds(batch))
    assert sess.plan_count == 3


def test_runs_from_8_threads_have_the_bits_of_runs_alone():
    """8 Python threads x 200 runs on 4 input shapes, one session: every
    result equals the one its shape gives alone (ctypes releases the GIL
    for the run, so the runs overlap)."""
    sess = so.load(mixed_model(), mode="exact", threads=2)
    want = {b: sess.run(feeds(b))["z"].view(np.uint32).copy() for b in (1, 2, 3, 4)}
    errors: list[str] = []

    def work(t: int) -> None:
        for r in range(200):
            b = (t + r) % 4 + 1
            got = sess.run(feeds(b))["z"].view(np.uint32)
            if not np.array_equal(got, want[b]):
                errors.append(f"thread {t} run {r} batch {b}")
                return
    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sess.plan_count == 4


def test_a_second_session_shares_nothing():
    data = mixed_model()
    a, b = so.load(data, mode="exact"), so.load(data, mode="exact")
    x = feeds(2)
    first = a.run(x)["z"].copy()
    del a
    assert np.array_equal(b.run(x)["z"].view(np.uint32), first.view(np.uint32))


@pytest.fixture(scope="module")
def concurrent_program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("concurrent") / "concurrent_runs"
    build_check(require_tool("cc"), ["concurrent_runs.c", "sha256.c"], out,
                x86=os.uname().machine == "x86_64")
    return out


def test_c_threads_8_x_200_runs(concurrent_program, tmp_path):
    model = tmp_path / "mixed.onnx"
    model.write_bytes(mixed_model())
    r = subprocess.run([str(concurrent_program), str(model), "8", "200"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "concurrent ok 8 x 200 runs, 4 shapes" in r.stdout


def _fuzz_build_flags():
    """tests/fuzz/run.py's per-file flags (loaded by path: tests/ has other
    modules named run)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("fuzz_run", ROOT / "tests" / "fuzz" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.source_flags, module.ISA_CC


@pytest.mark.parametrize("sanitizer", ["address,undefined", "thread"])
def test_c_threads_under_sanitizers(sanitizer, tmp_path):
    clang = require_tool("clang-19")
    out = tmp_path / "concurrent_runs"
    if sanitizer == "thread":
        flags = ("-fsanitize=thread", "-fno-omit-frame-pointer", "-g")
        # every file but the ISA kernels (csrc/isa/<path>/: clang takes minutes
        # to instrument their unrolled code; make sanitize covers them with gcc)
        source_flags = lambda p: () if isa_kernel(p) else flags  # noqa: E731
        link = ("-fsanitize=thread",)
        isa_cc = "cc"
    else:
        # the fuzz target's objects exactly (ASan + UBSan, the graph with the
        # fuzzer's coverage, which a plain ASan link accepts): native_build's
        # object cache builds the library under the sanitizers once for both
        source_flags, isa_cc = _fuzz_build_flags()
        link = ("-fsanitize=address,undefined",)
    build_check(clang, ["concurrent_runs.c", "sha256.c"], out,
                x86=os.uname().machine == "x86_64", source_flags=source_flags, link_flags=link,
                isa_cc=isa_cc)
    model = tmp_path / "mixed.onnx"
    model.write_bytes(mixed_model())
    env = {**os.environ, "TSAN_OPTIONS": "halt_on_error=1", "ASAN_OPTIONS": "detect_leaks=1",
           "UBSAN_OPTIONS": "halt_on_error=1"}
    r = subprocess.run([str(out), str(model), "8", "50"], capture_output=True, text=True,
                       timeout=900, env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "concurrent ok 8 x 50 runs" in r.stdout


@pytest.fixture(scope="module")
def run_model_program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run_model") / "run_model"
    build_check(require_tool("cc"), ["run_model.c", "sha256.c"], out,
                x86=os.uname().machine == "x86_64")
    return out


def test_c_program_digest_equals_the_python_host(run_model_program, tmp_path):
    from samebits.onnx import suite
    data = mixed_model()
    x = feeds(3)
    model = tmp_path / "mixed.onnx"
    model.write_bytes(data)
    (tmp_path / "mixed.feeds").write_bytes(suite.pack_feeds(x))
    for threads in (1, 2):
        r = subprocess.run([str(run_model_program), str(model), str(tmp_path / "mixed.feeds"),
                            "--threads", str(threads)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        digest = r.stdout.split("digest ")[1].split()[0]
        assert digest == suite.output_digest(so.load(data, mode="exact").run(x))


def test_c_program_reports_errors(run_model_program, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07\x3a\x7f")   # a graph of 127 bytes that are not there
    r = subprocess.run([str(run_model_program), str(bad)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "run past the end" in r.stderr


def test_regression_inputs_give_clean_errors():
    """Every input that ever crashed the fuzz target loads and runs, or is
    refused with a documented exception, from the Python host."""
    for path in sorted((ROOT / "tests" / "fuzz" / "regressions").glob("*")):
        for mode in ("exact", "fast"):
            try:
                sess = so.load(path.read_bytes(), mode=mode)
            except (ValueError, TypeError, IndexError, MemoryError):
                continue
            for info in sess.inputs:
                if info.shape is None or info.dtype != "float32":
                    break
            else:
                try:
                    sess.run({i.name: np.zeros(tuple(d if isinstance(d, int) else 1
                                                      for d in i.shape), np.float32)
                              for i in sess.inputs})
                except (ValueError, TypeError, IndexError, MemoryError):
                    pass


def _one_input_model(nodes, outputs=("y",)) -> bytes:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TP.FLOAT, [2])],
                              [helper.make_tensor_value_info(o, TP.FLOAT, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("nodes, outputs, message", [
    # the fuzz target's first finding (tests/fuzz/regressions/node_without_outputs.onnx):
    # a node with no outputs reached the kernel with a null output and crashed
    ([helper.make_node("Relu", ["x"], []), helper.make_node("Neg", ["x"], ["y"])], ("y",),
     "node 0 \\(Relu\\): the node has no outputs"),
    ([helper.make_node("Relu", ["x"], [""]), helper.make_node("Neg", ["x"], ["y"])], ("y",),
     "output 0 is left out \\(an empty name\\); Relu needs it"),
    ([helper.make_node("Relu", ["x"], ["y", "z"])], ("y", "z"),
     "the node names 2 outputs; the operator has no output 1"),
    ([helper.make_node("Relu", ["x"], ["y", "z"])], ("y",),
     "the node names 2 outputs; the operator has no output 1"),
])
def test_node_outputs_are_checked(nodes, outputs, message):
    """A node must name its operator's first output, and no output the
    operator does not have: a clear ValueError, never a crash."""
    with pytest.raises(ValueError, match=message):
        so.load(_one_input_model(nodes, outputs)).run({"x": np.ones(2, np.float32)})


def test_lstm_may_leave_its_first_output_out():
    """LSTM's Y is optional: a node giving only Y_h runs (its kernel checks each output)."""
    hidden, inp = 3, 2
    w = numpy_helper.from_array(np.full((1, 4 * hidden, inp), 0.1, np.float32), "w")
    r = numpy_helper.from_array(np.full((1, 4 * hidden, hidden), 0.1, np.float32), "r")
    node = helper.make_node("LSTM", ["x", "w", "r"], ["", "h"], hidden_size=hidden)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TP.FLOAT, [4, 1, inp])],
                              [helper.make_tensor_value_info("h", TP.FLOAT, None)],
                              initializer=[w, r])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()
    h = so.load(data).run({"x": np.ones((4, 1, inp), np.float32)})["h"]
    assert h.shape == (1, 1, hidden) and np.all(np.isfinite(h))


def test_fuzz_target_fixed_seed_pass():
    """The libFuzzer target (make fuzz runs it for a set time) over the seed
    corpus and 2000 mutations from seed 1, under ASan and UBSan: no crash,
    no sanitizer report, no leak."""
    require_tool("clang-19")
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "run.py"), "--runs", "2000",
                        "--out", str(ROOT / "build" / "fuzz-ci")],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    assert "Done 2000 runs" in r.stdout + r.stderr


def test_external_data_from_the_model_folder(tmp_path):
    """Weights saved as external data are read from the model's folder (as
    onnx.save writes them), with the bits of the same model in one file; a
    location outside the folder, or bytes without a path, are refused."""
    import onnx as onnx_pkg
    data = mixed_model()
    m = onnx_pkg.load_from_string(data)
    onnx_pkg.save(m, tmp_path / "ext.onnx", save_as_external_data=True,
                  all_tensors_to_one_file=True, location="ext.weights", size_threshold=0)
    x = feeds(2)
    want = so.load(data).run(x)["z"]
    got = so.load(tmp_path / "ext.onnx").run(x)["z"]
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    with pytest.raises(ValueError, match="external file .*load the model from its path"):
        so.load((tmp_path / "ext.onnx").read_bytes())
    for t in m.graph.initializer:
        t.ClearField("external_data")
        t.data_location = onnx_pkg.TensorProto.EXTERNAL
        t.external_data.add(key="location", value="../ext.weights")
        t.ClearField("raw_data")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.onnx").write_bytes(m.SerializeToString())
    with pytest.raises(ValueError, match="lies outside the model's directory"):
        so.load(tmp_path / "sub" / "bad.onnx")


def test_loading_from_a_path_equals_loading_the_bytes(tmp_path):
    """load(path) has the runtime read (on POSIX, map) the file itself: the
    session is the one the bytes give, bit for bit in both modes, and a
    missing file or a folder raises what reading it in Python would."""
    data = mixed_model()
    path = tmp_path / "mixed.onnx"
    path.write_bytes(data)
    x = feeds(3)
    for mode in ("exact", "fast"):
        want = so.load(data, mode=mode).run(x)["z"]
        got = so.load(path, mode=mode).run(x)["z"]
        assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
        assert so.load(str(path), mode=mode).run(x)["z"].view(np.uint32).tolist() == \
            want.view(np.uint32).tolist()
    with pytest.raises(FileNotFoundError):
        so.load(tmp_path / "missing.onnx")
    with pytest.raises(IsADirectoryError):
        so.load(tmp_path)
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(so.DecodeError):
        so.load(empty)


_PEAK_CHILD = r"""
import sys
import samebits.onnx as so

def resident_peak_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

path, how = sys.argv[1:3]
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")          # the peak resident size restarts from the current one
before = resident_peak_kib()
model = open(path, "rb").read() if how == "bytes" else path
session = so.load(model, mode="exact", threads=1)
print(resident_peak_kib() - before)
"""


def test_loading_from_a_path_never_holds_the_file_and_the_weights(tmp_path):
    """From a path, each initializer's pages of the mapped file go back once
    it is converted, so loading peaks near the weights' size; from the bytes
    the file and the weights are both held (which shows the probe can tell
    them apart). The resident peak (VmHWM) of a fresh process, reset before
    loading."""
    if not os.access("/proc/self/clear_refs", os.W_OK):
        pytest.skip("needs Linux's /proc/self/clear_refs to reset the resident peak")
    weights_mib = 48
    w = portable_values((weights_mib * 2 ** 18,), 3)
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "big",
                          [helper.make_tensor_value_info("x", TP.FLOAT, [w.size])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [w.size])],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "big.onnx"
    path.write_bytes(m.SerializeToString())
    del w, m, g
    peaks = {}
    for how in ("path", "bytes"):
        r = subprocess.run([sys.executable, "-c", _PEAK_CHILD, str(path), how],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert r.returncode == 0, r.stderr
        peaks[how] = int(r.stdout.split()[-1]) / 1024
    assert peaks["path"] < weights_mib * 1.25, peaks
    assert peaks["bytes"] > weights_mib * 1.75, peaks
