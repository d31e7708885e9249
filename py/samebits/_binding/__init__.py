"""The binding to the C library (csrc/samebits.h): loading it, its argument
structures, paths, threads, and the checks every integer and array passes
before it reaches C. It imports nothing from samebits but _version and
_typing; the operations (samebits._ops), samebits.onnx and the tools build on
it (tests/builds/test_layout.py checks the arrows)."""
