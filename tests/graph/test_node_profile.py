"""Session.node_profile: each node's time and runs, the per-node twin of
Session.profile (the C runtime's node_ns / node_calls counters)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402


def profiled_model() -> bytes:
    """A Conv with a Relu it absorbs, a Split whose outputs are views, named
    and unnamed nodes, and an If whose branch is chosen by an input (so it
    runs as a subgraph at run time)."""
    w = numpy_helper.from_array(np.linspace(-1, 1, 4 * 2 * 9, dtype=np.float32)
                                .reshape(4, 2, 3, 3), "w")
    then_branch = helper.make_graph(
        [helper.make_node("Neg", ["a"], ["t"], name="neg")], "then", [],
        [helper.make_tensor_value_info("t", TP.FLOAT, None)])
    else_branch = helper.make_graph(
        [helper.make_node("Abs", ["a"], ["e"], name="abs")], "else", [],
        [helper.make_tensor_value_info("e", TP.FLOAT, None)])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Split", ["r"], ["s1", "s2"], name="split", axis=1, num_outputs=2),
        helper.make_node("Add", ["s1", "s2"], ["a"], name="add"),
        helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_branch,
                         else_branch=else_branch),
        helper.make_node("Mul", ["y", "y"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "profiled",
        [helper.make_tensor_value_info("x", TP.FLOAT, [1, 2, 5, 5]),
         helper.make_tensor_value_info("cond", TP.BOOL, [])],
        [helper.make_tensor_value_info("z", TP.FLOAT, None)], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return model.SerializeToString()


FEEDS = {"x": np.linspace(-2, 2, 50, dtype=np.float32).reshape(1, 2, 5, 5),
         "cond": np.array(True)}

# (name, position in the file, label) of every node left after loading, in run order
NODES = [("stem", 0, "Conv+relu"), ("split", 2, "Split"), ("add", 3, "Add"),
         ("branch", 4, "If"), ("", 5, "Mul")]


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_node_profile_names_counts_and_sums(mode: str) -> None:
    s = so.load(profiled_model(), mode=mode)
    assert s.node_profile == []
    for _ in range(3):
        s.run(FEEDS, profile=True)
    s.run(FEEDS)                        # not profiled
    s.run(FEEDS, profile={})            # per type into its own dict only
    nodes = s.node_profile
    assert [(t.name, t.index, t.op) for t in nodes] == NODES
    assert all(t.calls == 3 and t.seconds >= 0 for t in nodes)
    # the per-type profile is the per-node one added up: the same counters
    assert set(s.profile) == {op for _, _, op in NODES}
    for op, (seconds, calls) in s.profile.items():
        mine = [t for t in nodes if t.op == op]
        assert calls == sum(t.calls for t in mine)
        assert seconds == pytest.approx(sum(t.seconds for t in mine), rel=1e-12, abs=1e-15)
    # the If node ran its subgraph: its time is counted, not left at zero
    assert next(t for t in nodes if t.op == "If").seconds > 0
    s.reset_profile()
    assert s.profile == {} and s.node_profile == []
    s.run(FEEDS, profile=True)
    assert [t.calls for t in s.node_profile] == [1] * len(NODES)


def test_node_profile_sums_over_threads_running_at_once() -> None:
    """Runs from several host threads add to one profile under its lock."""
    import threading
    s = so.load(profiled_model())

    def work() -> None:
        for _ in range(5):
            s.run(FEEDS, profile=True)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [t.calls for t in s.node_profile] == [20] * len(NODES)
    assert all(calls == 20 * sum(op == label for _, _, op in NODES)
               for label, (_, calls) in s.profile.items())
