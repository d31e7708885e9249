"""The exceptions samebits.onnx raises for a model (beside TypeError,
ValueError, IndexError and MemoryError for inputs that do not fit)."""
from __future__ import annotations


class DecodeError(ValueError):
    """The bytes are not a well-formed ONNX (protobuf) file."""


class UnsupportedModelError(ValueError):
    """The model asks for an operator, attribute, opset or type the runtime lacks."""
