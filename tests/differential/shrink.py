"""Shrinks a graph samebits gets wrong, and keeps it as a regression graph.

Shrinking keeps only the outputs samebits gets wrong, then repeats while
the graph stays wrong: make an input of an output's node the output
instead (the nodes after it fall away), or bypass a node whose first input
has its output's type and shape; nodes that no output needs are dropped.
The result is saved under tests/differential/regressions/ as NAME.onnx
(its tolerance families in the doc string) and NAME.npz (the feeds), which
tests/graph/test_differential.py replays against both oracles."""
from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, shape_inference

from compare import judge
from generate import Case

REGRESSIONS = Path(__file__).resolve().parent / "regressions"


def _with(case: Case, model, outputs: list[str]) -> Case:
    every = frozenset().union(*case.families.values()) if case.families else frozenset()
    return Case(case.seed, model, case.feeds, [n.op_type for n in model.graph.node],
                {o: every for o in outputs}, set())


def _prune(model) -> None:
    """Drops the nodes no graph output needs, and unused initializers."""
    needed = {o.name for o in model.graph.output}
    keep = []
    for n in reversed(list(model.graph.node)):
        if any(o in needed for o in n.output):
            keep.append(n)
            needed.update(i for i in n.input if i)
    del model.graph.node[:]
    model.graph.node.extend(reversed(keep))
    inits = [i for i in model.graph.initializer if i.name in needed]
    del model.graph.initializer[:]
    model.graph.initializer.extend(inits)


def _set_outputs(model, names: list[str]) -> None:
    infos = {}
    inferred = shape_inference.infer_shapes(model)
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input):
        infos[vi.name] = vi
    del model.graph.output[:]
    for n in names:
        model.graph.output.append(copy.deepcopy(infos[n]) if n in infos
                                  else helper.make_empty_tensor_value_info(n))


def _still_wrong(case: Case) -> bool:
    try:
        onnx.checker.check_model(case.model)
    except Exception:
        return False
    return judge(case).status == "wrong"


def shrink(case: Case, wrong_outputs: list[str]) -> Case:
    model = copy.deepcopy(case.model)
    _set_outputs(model, list(dict.fromkeys(wrong_outputs)))
    _prune(model)
    best = _with(case, model, [o.name for o in model.graph.output])
    if not _still_wrong(best):
        best = case
    changed = True
    while changed:
        changed = False
        outs = [o.name for o in best.model.graph.output]
        producers = {o: n for n in best.model.graph.node for o in n.output}
        # 1. an output's node's input as the output instead
        for k, out in enumerate(outs):
            node = producers.get(out)
            if node is None:
                continue
            for inp in node.input:
                if not inp or inp in {i.name for i in best.model.graph.initializer}:
                    continue
                if inp in {i.name for i in best.model.graph.input}:
                    continue
                trial = copy.deepcopy(best.model)
                names = outs[:k] + [inp] + outs[k + 1:]
                _set_outputs(trial, list(dict.fromkeys(names)))
                _prune(trial)
                candidate = _with(best, trial, list(dict.fromkeys(names)))
                if _still_wrong(candidate):
                    best, changed = candidate, True
                    break
            if changed:
                break
        if changed:
            continue
        # 2. bypass a node: its readers read its first input instead
        inferred = shape_inference.infer_shapes(best.model)
        types = {vi.name: vi.type for vi in list(inferred.graph.value_info) +
                 list(inferred.graph.input) + list(inferred.graph.output)}
        for idx, node in enumerate(best.model.graph.node):
            if len(node.output) != 1 or not node.input or node.output[0] in outs:
                continue
            src, dst = node.input[0], node.output[0]
            if src not in types or dst not in types or types[src] != types[dst]:
                continue
            trial = copy.deepcopy(best.model)
            del trial.graph.node[idx]
            for n in trial.graph.node:
                for j, i in enumerate(n.input):
                    if i == dst:
                        n.input[j] = src
            _prune(trial)
            candidate = _with(best, trial, outs)
            if _still_wrong(candidate):
                best, changed = candidate, True
                break
    return best


def save(case: Case, name: str, note: str, folder: Path = REGRESSIONS, oracle: str = "") -> Path:
    """Writes NAME.onnx and NAME.npz under `folder` (regressions/). oracle
    "reference": the replay holds it to onnx.reference alone (a bug
    samebits shared with ONNX Runtime)."""
    folder.mkdir(parents=True, exist_ok=True)
    model = copy.deepcopy(case.model)
    model.doc_string = json.dumps({"note": note, "oracle": oracle,
                                   "families": {k: sorted(v) for k, v in case.families.items()}})
    onnx.save(model, folder / f"{name}.onnx")
    arrays = {f"{b}:{k}": v for b, feeds in enumerate(case.feeds) for k, v in feeds.items()}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (folder / f"{name}.npz").write_bytes(buf.getvalue())
    return folder / f"{name}.onnx"


def load(path: Path) -> Case:
    model = onnx.load(path)
    meta = json.loads(model.doc_string or "{}")
    data = np.load(path.with_suffix(".npz"))
    feeds: dict[int, dict] = {}
    for key in data.files:
        b, name = key.split(":", 1)
        feeds.setdefault(int(b), {})[name] = data[key]
    return Case(-1, model, [feeds[b] for b in sorted(feeds)], [n.op_type for n in model.graph.node],
                {k: frozenset(v) for k, v in meta.get("families", {}).items()}, set())
