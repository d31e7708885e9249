"""The operation-code tables (activations, elementwise functions, arithmetic,
reductions) are written once, in tools/make_tables.py, and turned into the C
enums of samebits.h, the Python dicts of samebits._binding.codes and the npm
package's js/src/codes.mjs: all three must be what the tool writes now."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("make_tables", ROOT / "tools" / "make_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_tables"] = module   # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def test_outputs_are_current():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "make_tables.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_every_host_reads_the_same_codes():
    from samebits._binding import codes
    tool = _tool()
    header = (ROOT / "csrc" / "samebits.h").read_text()
    js = (ROOT / "js" / "src" / "codes.mjs").read_text()
    for table in tool.TABLES:
        python = getattr(codes, table.python)
        assert list(python) == [e.name for e in table.entries]
        assert list(python.values()) == list(range(len(table.entries)))
        body = re.search(rf"enum {table.enum} \{{(.*?)\}};", header, re.S).group(1)
        assert re.findall(rf"{table.prefix}(\w+) = (\d+)", body) == \
            [(e.name.upper(), str(code)) for code, e in enumerate(table.entries)]
        js_body = re.search(rf"export const {table.js} = Object.freeze\(\{{(.*?)\}}\);", js, re.S).group(1)
        assert re.findall(r"(\w+): (\d+)", js_body) == \
            [(e.js, str(code)) for code, e in enumerate(table.entries) if e.js is not None]


def test_a_stale_output_is_found(tmp_path, monkeypatch):
    tool = _tool()
    stale = tmp_path / "codes.py"
    stale.write_text(tool.python_text().replace('"relu": 5', '"relu": 50'))
    monkeypatch.setattr(tool, "PY_FILE", stale)
    monkeypatch.setattr(sys, "argv", ["make_tables.py", "--check"])
    assert tool.main() == 1


def test_status_codes_and_element_types_read_the_same_everywhere():
    """STATUSES and DTYPES: samebits.h / graph/tensor.h, codes.py, codes.mjs
    and what the library itself says (sb_dtype_name through the runtime's
    messages is covered by the onnx tests; here the numbers)."""
    from samebits._binding import codes, lib
    tool = _tool()
    header = (ROOT / "csrc" / "samebits.h").read_text()
    tensor = (ROOT / "csrc" / "graph" / "tensor.h").read_text()
    js = (ROOT / "js" / "src" / "codes.mjs").read_text()
    body = re.search(r"enum sb_status \{(.*?)\};", header, re.S).group(1)
    assert re.findall(r"(SB_\w+) = (-?\d+)", body) == \
        [(tool.status_c_name(st), str(st.code)) for st in tool.STATUSES]
    for st in tool.STATUSES:
        assert getattr(codes, f"STATUS_{st.name.upper()}") == st.code
        if st.code:
            assert getattr(lib, f"STATUS_{st.name.upper()}") == st.code
    assert re.findall(r"(\w+): (-?\d+)", re.search(r"STATUS = Object.freeze\(\{(.*?)\}\)", js,
                                                    re.S).group(1)) == \
        [(st.name, str(st.code)) for st in tool.STATUSES]
    body = re.search(r"enum sb_dtype \{(.*?)\};", tensor, re.S).group(1)
    assert re.findall(r"SB_DT_(\w+) = (\d+)", body) == [(t.c, str(t.code)) for t in tool.DTYPES]
    assert codes.DTYPE_NAMES == {t.code: t.name for t in tool.DTYPES[1:]}
    assert codes.DTYPE_SIZES == {t.code: t.size for t in tool.DTYPES if t.size}


def test_js_argument_layouts_are_the_headers():
    """js/src/abi.mjs lists every int64 argument record of samebits.h with
    the fields the header has, in its order (as tests/builds/test_abi.py holds
    abi.py to the header)."""
    tool = _tool()
    header = (ROOT / "csrc" / "samebits.h").read_text()
    structs = tool.header_structs(header)
    js = (ROOT / "js" / "src" / "abi.mjs").read_text()
    found = dict(re.findall(r"(sb_\w+): Object.freeze\(\[(.*?)\]\),", js, re.S))
    assert set(found) == set(structs)
    for name, fields in structs.items():
        assert re.findall(r'\["(\w+)", (\d+)\]', found[name]) == [(f, str(n)) for f, n in fields]
    # and the parse finds what test_abi's does for the argument structures
    assert [f for f, _ in structs["sb_matmul_args"]][:4] == ["path", "mode", "max_threads", "m"]
    assert dict(structs["sb_binary_args"])["shape"] == 16
