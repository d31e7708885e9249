"""samebits.onnx: run ONNX models in samebits' C graph runtime, natively and
in Pyodide.

>>> import samebits.onnx
>>> sess = samebits.onnx.load("model.onnx", mode="exact")     # doctest: +SKIP
>>> sess.inputs                                                 # doctest: +SKIP
[TensorInfo(name='input', dtype='float32', shape=('batch', 3, 224, 224))]
>>> sess.run({"input": x})["logits"]                            # doctest: +SKIP

The model is read, checked, planned and run in C (csrc/graph/, the C API of
docs/c-api.md), the same core the npm package uses: no onnx or protobuf
package is needed. Every operator and attribute the model uses is checked at
load; what the runtime lacks raises UnsupportedModelError naming the node,
the operator and the attribute. docs/onnx.md lists the operators and how
each maps onto samebits' exact definitions.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

from . import _core
from ._core import NodeTime, Session, TensorInfo
from ._errors import DecodeError, UnsupportedModelError

__all__ = ["DecodeError", "NodeTime", "Session", "TensorInfo", "UnsupportedModelError", "load",
           "supported_operators"]


def load(model: Union[str, os.PathLike[str], bytes, bytearray, memoryview], mode: str = "exact",
         threads: Optional[int] = None) -> Session:
    """Loads an ONNX model and prepares it to run.

    Parameters
    ----------
    model
        A path to an .onnx file, or its bytes.
    mode
        "exact" (the default: the same bits on every machine, path, thread
        count and runtime) or "fast".
    threads
        Maximum threads per operator (default: every core, capped by
        SAMEBITS_THREADS). Never changes a result.

    Raises
    ------
    UnsupportedModelError (a ValueError)
        An operator, attribute, opset or type the runtime does not support.
    DecodeError (a ValueError)
        The bytes are not a well-formed ONNX file.
    """
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        # the runtime reads the file itself (mapped, each initializer's pages
        # released once converted: the file and the weights are never all in
        # memory at once); opening it here first raises what read_bytes would
        # (FileNotFoundError, IsADirectoryError, PermissionError)
        with open(path, "rb"):
            pass
        return Session(None, mode, threads, path.parent, file=path)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return Session(model, mode, threads, None)
    raise TypeError(f"load: model must be a path or bytes, got {type(model).__name__}")


def supported_operators() -> list[str]:
    """The operator types (default ONNX domain) the runtime can load, sorted."""
    return _core.supported_operators()
