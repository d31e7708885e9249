"""The tables the C library shares with its hosts, written once here and
turned into C, Python and JavaScript: the operation codes (the activations of
the fused epilogue, the elementwise functions, the arithmetic and the
reductions), the status codes, and the element types of the graph runtime
(ONNX's TensorProto.DataType numbers). Each code is part of the ABI between the
C library and its hosts (never renumber: append).

    python tools/make_tables.py           # writes the outputs
    python tools/make_tables.py --check   # fails if any is stale (a test runs it)

Outputs:
  csrc/samebits.h                  the operation enums and enum sb_status, between
                                   GENERATED markers
  csrc/graph/tensor.h              enum sb_dtype and SB_DTYPE_TABLE (an X-macro of
                                   each type's name and size), between markers
  py/samebits/_binding/codes.py    {Python name: code} per table, the status
                                   constants, the element types' names, sizes,
                                   struct formats and numpy dtypes
  js/src/codes.mjs                 {JavaScript name: code} per table (the entries
                                   the npm package's API offers), STATUS, DTYPES
  docs/c-api.md                    the status table, between GENERATED comments
  js/src/abi.mjs                   the argument records' layouts, read from samebits.h
                                   (the npm package writes its records by field name)
  py/samebits/_binding/abi_layouts.py  the same layouts for abi.py's ctypes Structures
  csrc/isa/paths.h                 SB_ISA_PATHS, the X-macro of csrc/build.json's paths
  csrc/graph/early_opsets.h        from onnx.defs: the operators' versions below opset 8
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Entry:
    name: str                 # the Python name (torch's where torch has one)
    js: str | None            # the npm package's name; None: not offered there
    note: str = ""            # a comment for the C enum


@dataclass(frozen=True)
class Table:
    enum: str                 # the C enum
    prefix: str               # its constants' prefix
    python: str               # the Python dict
    js: str                   # the JavaScript object
    doc: str
    entries: tuple[Entry, ...]


TABLES = (
    Table("sb_activation", "SB_ACT_", "ACTIVATION_CODES", "ACTIVATIONS",
          "the fused epilogue's activations (bits 0-7 of the activation argument)",
          (Entry("none", "none"), Entry("relu", "relu"), Entry("relu6", "relu6"),
           Entry("leaky_relu", "leaky_relu", "the slope's binary32 bits in bits 32-63"),
           Entry("gelu", "gelu"), Entry("gelu_tanh", "gelu_tanh"), Entry("silu", "silu"),
           Entry("hardswish", "hardswish"), Entry("hardsigmoid", "hardsigmoid"),
           Entry("sigmoid", "sigmoid"), Entry("tanh", "tanh"),
           Entry("hardswish_onnx", None, "ONNX's HardSwish formula"),
           Entry("hardsigmoid_onnx", None, "ONNX's HardSigmoid: alpha's bits in bits 32-63, beta 0.5"),
           Entry("swish_onnx", None, "ONNX's Mul(x, Sigmoid(x)): the sigmoid rounded, then one multiply"))),
    Table("sb_unary_op", "SB_OP_", "UNARY_CODES", "UNARY",
          "the elementwise functions of sb_unary",
          (Entry("exp", "exp"), Entry("log", "log"), Entry("tanh", "tanh"), Entry("erf", "erf"),
           Entry("sigmoid", "sigmoid"), Entry("relu", "relu"), Entry("relu6", "relu6"),
           Entry("leaky_relu", "leakyRelu", "the one with a parameter: the negative slope"),
           Entry("gelu", "gelu"), Entry("gelu_tanh", "geluTanh"), Entry("silu", "silu"),
           Entry("hardswish", "hardswish"), Entry("hardsigmoid", "hardsigmoid"),
           Entry("sqrt", "sqrt"),
           Entry("hardswish_onnx", None, "ONNX's formulas (math/activation.h)"),
           Entry("hardsigmoid_onnx", None, "parameter: alpha (beta is 0.5)"),
           Entry("elu", "elu", "parameter: alpha"), Entry("softplus", "softplus"),
           Entry("mish", "mish"), Entry("sin", "sin", "math/trig.h"), Entry("cos", "cos"))),
    Table("sb_binary_op", "SB_BIN_", "BINARY_CODES", "BINARY",
          "the arithmetic of sb_binary (math/arith.h)",
          (Entry("add", "add"), Entry("sub", "sub"), Entry("mul", "mul"), Entry("div", "div"),
           Entry("maximum", "maximum"), Entry("minimum", "minimum"), Entry("pow", "pow"))),
    Table("sb_reduce_op", "SB_RED_", "REDUCE_CODES", "REDUCE",
          "the reductions and normalizations of sb_reduce",
          (Entry("sum", "sum"), Entry("mean", "mean"), Entry("softmax", "softmax"),
           Entry("log_softmax", "logSoftmax"), Entry("layer_norm", "layerNorm"))),
)


@dataclass(frozen=True)
class Status:
    name: str                 # SB_ERR_<NAME> (SB_OK for "ok"), STATUS_<NAME>, STATUS.<name>
    code: int
    python: str               # what the Python host raises for it in the graph runtime
    js: str                   # what the npm package raises (its own class, or a built-in)
    note: str                 # the C comment
    doc: str                  # docs/c-api.md's "meaning"


STATUSES = (
    Status("ok", 0, "", "", "",
           "done"),
    Status("argument", -1, "ValueError", "RangeError",
           "a null pointer with a nonzero size, bad mode, size or thread count",
           "a null pointer, a bad mode or thread count"),
    Status("path", -2, "ValueError", "RangeError",
           "path not built into this library or not runnable on this CPU",
           "the path cannot run on this CPU"),
    Status("no_memory", -3, "MemoryError", "RangeError",
           "a scratch or packing buffer could not be allocated",
           "an allocation failed (the message says what for)"),
    Status("decode", -4, "DecodeError", "DecodeError",
           "the bytes are not a well-formed ONNX file (the graph runtime's, from here on, "
           "each with a message: sb_last_error)",
           "the bytes are not a well-formed ONNX file"),
    Status("unsupported", -5, "UnsupportedModelError", "UnsupportedModelError",
           "an operator, attribute, opset or type the runtime lacks",
           "an operator, attribute, opset, domain or type the runtime lacks"),
    Status("value", -6, "ValueError", "RangeError",
           "an input or attribute value that does not fit (ValueError)",
           "an input or attribute value that does not fit"),
    Status("type", -7, "TypeError", "TypeError", "an input of the wrong element type (TypeError)",
           "an input of the wrong element type"),
    Status("index", -8, "IndexError", "RangeError", "an index out of range (IndexError)",
           "an index out of range"),
)


@dataclass(frozen=True)
class DType:
    code: int                 # TensorProto.DataType
    c: str                    # SB_DT_<C>
    name: str                 # numpy's name (ONNX's for the types numpy lacks)
    size: int                 # bytes per element; 0: graphs never compute with it
    fmt: str = ""             # struct format
    numpy: str = ""           # numpy dtype string
    js: str = ""              # the typed array that holds it


DTYPES = (
    DType(0, "UNDEFINED", "undefined", 0),
    DType(1, "FLOAT", "float32", 4, "f", "<f4", "Float32Array"),
    DType(2, "UINT8", "uint8", 1, "B", "u1", "Uint8Array"),
    DType(3, "INT8", "int8", 1, "b", "i1", "Int8Array"),
    DType(4, "UINT16", "uint16", 2, "H", "<u2", "Uint16Array"),
    DType(5, "INT16", "int16", 2, "h", "<i2", "Int16Array"),
    DType(6, "INT32", "int32", 4, "i", "<i4", "Int32Array"),
    DType(7, "INT64", "int64", 8, "q", "<i8", "BigInt64Array"),
    DType(8, "STRING", "string", 0),
    DType(9, "BOOL", "bool", 1, "?", "?", "Uint8Array"),
    DType(10, "FLOAT16", "float16", 0),
    DType(11, "DOUBLE", "float64", 0),
    DType(12, "UINT32", "uint32", 4, "I", "<u4", "Uint32Array"),
    DType(13, "UINT64", "uint64", 8, "Q", "<u8", "BigUint64Array"),
    DType(14, "COMPLEX64", "complex64", 0),
    DType(15, "COMPLEX128", "complex128", 0),
    DType(16, "BFLOAT16", "bfloat16", 0),
)

C_FILE = ROOT / "csrc" / "samebits.h"
DTYPE_C_FILE = ROOT / "csrc" / "graph" / "tensor.h"
C_BEGIN = "/* GENERATED by tools/make_tables.py from its TABLES: do not edit by hand. */\n"
C_END = "/* END GENERATED (tools/make_tables.py) */\n"
STATUS_BEGIN = "/* GENERATED by tools/make_tables.py from its STATUSES: do not edit by hand. */\n"
STATUS_END = "/* END GENERATED (tools/make_tables.py, STATUSES) */\n"
DOC_FILE = ROOT / "docs" / "c-api.md"
DOC_BEGIN = "<!-- GENERATED by tools/make_tables.py from its STATUSES: do not edit by hand. -->\n"
DOC_END = "<!-- END GENERATED (tools/make_tables.py, STATUSES) -->\n"
DTYPE_BEGIN = "/* GENERATED by tools/make_tables.py from its DTYPES: do not edit by hand. */\n"
DTYPE_END = "/* END GENERATED (tools/make_tables.py, DTYPES) */\n"
ABI_JS_FILE = ROOT / "js" / "src" / "abi.mjs"
ABI_PY_FILE = ROOT / "py" / "samebits" / "_binding" / "abi_layouts.py"
PATHS_C_FILE = ROOT / "csrc" / "isa" / "paths.h"
EARLY_OPS_FILE = ROOT / "csrc" / "graph" / "early_opsets.h"
MANIFEST = ROOT / "csrc" / "build.json"
PY_FILE = ROOT / "py" / "samebits" / "_binding" / "codes.py"
JS_FILE = ROOT / "js" / "src" / "codes.mjs"
HEADER = "GENERATED by tools/make_tables.py from its TABLES: do not edit by hand."


def c_block() -> str:
    out = [C_BEGIN]
    for t in TABLES:
        out.append(f"/* {t.doc[0].upper() + t.doc[1:]}. Part of the ABI: never renumber. */\n")
        out.append(f"enum {t.enum} {{\n")
        for code, e in enumerate(t.entries):
            note = f"   /* {e.note} */" if e.note else ""
            out.append(f"    {t.prefix}{e.name.upper()} = {code},{note}\n")
        out.append(f"    {t.prefix}COUNT\n}};\n")
    out.append(C_END)
    return "".join(out)


def header_structs(header: str) -> dict[str, list[tuple[str, int]]]:
    """Every `typedef struct sb_x {...} sb_x;` of samebits.h whose fields are
    all int64_t: its fields in order, each with its length (1, or
    SB_MAX_BATCH_DIMS for an array)."""
    dims = int(re.search(r"#define SB_MAX_BATCH_DIMS (\d+)", header).group(1))
    out: dict[str, list[tuple[str, int]]] = {}
    for m in re.finditer(r"typedef struct (sb_\w+) \{(.*?)\} \1;", header, re.S):
        body = re.sub(r"/\*.*?\*/", "", m.group(2), flags=re.S)
        fields: list[tuple[str, int]] = []
        for decl in (d.strip() for d in body.split(";")):
            if not decl:
                continue
            if not decl.startswith("int64_t "):
                fields = []
                break
            for part in decl[len("int64_t "):].split(","):
                part = part.strip()
                if part.endswith("[SB_MAX_BATCH_DIMS]"):
                    fields.append((part[:-len("[SB_MAX_BATCH_DIMS]")], dims))
                else:
                    assert "[" not in part, part
                    fields.append((part, 1))
        if fields:
            out[m.group(1)] = fields
    return out


def _wrapped(cells: list[str], last: str = "") -> str:
    """cells joined by ", " in lines of at most 88 characters (a trailing
    comma on each full line, `last` after the final one), indented 8."""
    lines, line = [], ""
    for cell in cells:
        if line and len(line) + len(cell) + 2 > 88:
            lines.append(line + ",")
            line = ""
        line = f"{line}, {cell}" if line else cell
    lines.append(line + last)
    return "\n".join(" " * 8 + ln for ln in lines)


def abi_js_text(header: str) -> str:
    structs = header_structs(header)
    out = ["// The argument records of csrc/samebits.h, read from the header: every field\n"
           "// an int64, in the header's order, with its length (an array holds\n"
           "// SB_MAX_BATCH_DIMS). memory.mjs's args() writes a record from named values.\n"
           "// GENERATED by tools/make_tables.py from csrc/samebits.h: do not edit by hand.\n\n"
           "export const LAYOUTS = Object.freeze({\n"]
    for name, fields in structs.items():
        body = _wrapped([f'["{f}", {n}]' for f, n in fields])
        out.append(f"    {name}: Object.freeze([\n{body}]),\n")
    out.append("});\n")
    return "".join(out)


def abi_py_text(header: str) -> str:
    structs = header_structs(header)
    out = ['"""The argument records of csrc/samebits.h, read from the header: every\n'
           'field an int64, in the header\'s order, with its length (an array holds\n'
           'SB_MAX_BATCH_DIMS). abi.py builds its ctypes Structures from them.\n\n'
           'GENERATED by tools/make_tables.py from csrc/samebits.h: do not edit by hand.\n"""\n\n'
           "LAYOUTS: dict[str, tuple[tuple[str, int], ...]] = {\n"]
    for name, fields in structs.items():
        body = _wrapped([f'("{f}", {n})' for f, n in fields], "," if len(fields) == 1 else "")
        out.append(f'    "{name}": (\n{body}),\n')
    out.append("}\n")
    return "".join(out)


def early_ops_text() -> str:
    """csrc/graph/early_opsets.h from onnx.defs (ONNX's operator history,
    which later onnx releases do not change): every default-domain operator
    defined below opset 8, its first opset and the opsets 2-7 at which it
    got a new version."""
    import onnx.defs
    versions: dict[str, set[int]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == "":
            versions.setdefault(schema.name, set()).add(schema.since_version)
    rows = []
    for name in sorted(versions):
        early = sorted(v for v in versions[name] if v <= 7)
        if not early:
            continue
        mask = sum(1 << v for v in early if v >= 2)
        rows.append(f'    {{"{name}", {early[0]}, 0x{mask:02x}}},\n')
    return ("/* GENERATED by tools/make_tables.py from onnx.defs: do not edit by hand.\n"
            " * Every default-domain operator ONNX defines below opset 8: its first opset\n"
            " * and, as bit v, each opset v from 2 to 7 at which it got a new version. A\n"
            " * model below opset 7 runs an operator only when it has no new version\n"
            " * after the model's opset up to 7: then it is the operator opset 7 defines\n"
            " * (graph_load.c). */\n"
            "#ifndef SB_GRAPH_EARLY_OPSETS_H\n#define SB_GRAPH_EARLY_OPSETS_H\n\n"
            "typedef struct { const char *op; unsigned char first, changed; } sb_early_op;\n\n"
            "static const sb_early_op SB_EARLY_OPS[] = {\n" + "".join(rows) + "};\n\n#endif\n")


def paths_c_text() -> str:
    """csrc/isa/paths.h: the ISA paths of csrc/build.json as one X-macro."""
    import json
    paths = json.loads(MANIFEST.read_text())["paths"]
    rows = " \\\n".join(f"    X({p})" for p in paths)
    return ("/* The ISA paths, in index order (part of the ABI: sb_path_name(i) is the\n"
            " * i-th), from csrc/build.json's \"paths\". X(name): the path's sb_isa is\n"
            " * sb_isa_<name>, its kernels in csrc/isa/<name>/.\n"
            " * GENERATED by tools/make_tables.py from csrc/build.json: do not edit by hand. */\n"
            "#ifndef SB_ISA_PATHS_H\n#define SB_ISA_PATHS_H\n\n"
            f"#define SB_ISA_PATHS(X) \\\n{rows}\n\n#endif\n")


def status_c_name(st: Status) -> str:
    return "SB_OK" if st.code == 0 else f"SB_ERR_{st.name.upper()}"


def status_block() -> str:
    out = [STATUS_BEGIN, "/* What every function returns: 0, or a negative status. Part of the ABI:\n"
           " * never renumber. */\n", "enum sb_status {\n"]
    for st in STATUSES:
        note = f"   /* {st.note} */" if st.note else ""
        out.append(f"    {status_c_name(st)} = {st.code},{note}\n")
    out.append("};\n")
    out.append(STATUS_END)
    return "".join(out)


def status_doc() -> str:
    def js(st: Status) -> str:
        return f"`{st.js}`" if st.js in ("RangeError", "TypeError") else f"`Error` named `{st.js}`"
    out = [DOC_BEGIN, "| status | meaning | Python | JavaScript |\n", "| --- | --- | --- | --- |\n"]
    for st in STATUSES:
        py = f"`{st.python}`" if st.python else ""
        out.append(f"| `{status_c_name(st)}` ({st.code}) | {st.doc} | {py} | {js(st) if st.js else ''} |\n")
    out.append(DOC_END)
    return "".join(out)


def dtype_block() -> str:
    out = [DTYPE_BEGIN, "/* TensorProto.DataType: the element types a graph computes with (a size)\n"
           " * and those it only reads as stored constants (float16, bfloat16 and float64,\n"
           " * converted to float32 when the model is loaded) or refuses. */\n", "enum sb_dtype {\n"]
    for t in DTYPES:
        out.append(f"    SB_DT_{t.c} = {t.code},\n")
    out.append("};\n\n/* X(code, name, bytes per element: 0 when graphs never compute with it) */\n"
               "#define SB_DTYPE_TABLE(X) \\\n")
    rows = [f'    X({t.code}, "{t.name}", {t.size})' for t in DTYPES]
    out.append(" \\\n".join(rows) + "\n")
    out.append(DTYPE_END)
    return "".join(out)


def python_text() -> str:
    out = [f'"""The operation codes of csrc/samebits.h, by Python name. {HEADER}"""\n']
    for t in TABLES:
        out.append(f"\n# enum {t.enum}: {t.doc}\n{t.python}: dict[str, int] = {{\n")
        for code, e in enumerate(t.entries):
            out.append(f'    "{e.name}": {code},\n')
        out.append("}\n")
    out.append("\n# enum sb_status: what every C function returns\n")
    for st in STATUSES:
        out.append(f"STATUS_{st.name.upper()} = {st.code}\n")
    out.append("# the exception the graph runtime's status becomes (a builtin, or samebits.onnx's)\n"
               "STATUS_EXCEPTIONS: dict[int, str] = {\n")
    for st in STATUSES:
        if st.python:
            out.append(f'    {st.code}: "{st.python}",\n')
    out.append("}\n")
    out.append("\n# enum sb_dtype: TensorProto.DataType numbers, their names (numpy's, else ONNX's)\n"
               "DTYPE_NAMES: dict[int, str] = {\n")
    for t in DTYPES[1:]:
        out.append(f'    {t.code}: "{t.name}",\n')
    out.append("}\n# the types a graph computes with: bytes per element, struct format, numpy dtype\n"
               "DTYPE_SIZES: dict[int, int] = {\n")
    for t in DTYPES:
        if t.size:
            out.append(f"    {t.code}: {t.size},\n")
    out.append("}\nDTYPE_FORMATS: dict[int, str] = {\n")
    for t in DTYPES:
        if t.size:
            out.append(f'    {t.code}: "{t.fmt}",\n')
    out.append("}\nDTYPE_NUMPY: dict[int, str] = {\n")
    for t in DTYPES:
        if t.size:
            out.append(f'    {t.code}: "{t.numpy}",\n')
    out.append("}\n")
    return "".join(out)


def js_text() -> str:
    out = [f"// The operation codes of csrc/samebits.h, by the npm package's names.\n// {HEADER}\n"]
    for t in TABLES:
        out.append(f"\n// enum {t.enum}: {t.doc}\nexport const {t.js} = Object.freeze({{\n")
        for code, e in enumerate(t.entries):
            if e.js is not None:
                out.append(f"    {e.js}: {code},\n")
        out.append("});\n")
    out.append("\n// enum sb_status: what every C function returns\nexport const STATUS = Object.freeze({\n")
    for st in STATUSES:
        out.append(f"    {st.name}: {st.code},\n")
    out.append("});\n// the error the graph runtime's status becomes (a built-in, or the package's own)\n"
               "export const STATUS_ERRORS = Object.freeze({\n")
    for st in STATUSES:
        if st.js:
            out.append(f'    [{st.code}]: "{st.js}",\n')
    out.append("});\n")
    out.append("\n// enum sb_dtype: TensorProto.DataType numbers. For the types a graph computes\n"
               "// with: [name, typed array, bytes per element]\nexport const DTYPES = Object.freeze({\n")
    for t in DTYPES:
        if t.size:
            out.append(f'    {t.code}: Object.freeze(["{t.name}", {t.js}, {t.size}]),\n')
    out.append("});\n// every type's name (numpy's, else ONNX's)\nexport const DTYPE_NAMES = Object.freeze({\n")
    for t in DTYPES[1:]:
        out.append(f'    {t.code}: "{t.name}",\n')
    out.append("});\n")
    return "".join(out)


def with_block(path: Path, text: str, begin: str, end_marker: str, block: str) -> str:
    """text (path's) with its generated block replaced (the markers must be there)."""
    if text.count(begin) != 1 or text.count(end_marker) != 1:
        raise SystemExit(f"{_shown(path)}: expected one pair of GENERATED markers ({begin.strip()})")
    start = text.index(begin)
    end = text.index(end_marker) + len(end_marker)
    return text[:start] + block + text[end:]


def _shown(p: Path) -> Path:
    return p.relative_to(ROOT) if p.is_relative_to(ROOT) else p


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if an output is stale")
    args = parser.parse_args()
    for t in TABLES:
        names = [e.name for e in t.entries]
        assert len(set(names)) == len(names), t.enum
    header = with_block(C_FILE, C_FILE.read_text(), C_BEGIN, C_END, c_block())
    header = with_block(C_FILE, header, STATUS_BEGIN, STATUS_END, status_block())
    tensor = with_block(DTYPE_C_FILE, DTYPE_C_FILE.read_text(), DTYPE_BEGIN, DTYPE_END, dtype_block())
    doc = with_block(DOC_FILE, DOC_FILE.read_text(), DOC_BEGIN, DOC_END, status_doc())
    wanted = {C_FILE: header, DTYPE_C_FILE: tensor, PY_FILE: python_text(), JS_FILE: js_text(),
              DOC_FILE: doc, ABI_JS_FILE: abi_js_text(header), ABI_PY_FILE: abi_py_text(header),
              PATHS_C_FILE: paths_c_text(), EARLY_OPS_FILE: early_ops_text()}
    stale = [p for p, text in wanted.items() if not p.is_file() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"{_shown(p)} is stale: run python tools/make_tables.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(wanted[p])
        print(f"wrote {_shown(p)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
