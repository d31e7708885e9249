#!/usr/bin/env bash
# Builds the WebAssembly side module of samebits and the Pyodide wheel around it.
#
#   bash wasm/build.sh            # -> wasm/out/libsamebits.so, wasm/out/samebits-*.whl
#
# Every .c file under csrc/ is compiled with emcc; the kernel folders of other
# ISAs (csrc/isa/avx2, avx512, neon) guard on their target macros and come
# out empty, and the vec4 path runs on wasm SIMD128. The module is an emscripten SIDE_MODULE (what Pyodide
# loads with dlopen) and must never be built with -pthread: Pyodide cannot
# load threaded modules, and csrc/framework/threads.c runs serially without threads.
#
# Environment:
#   EMCC        the emscripten compiler (default: emcc on PATH; Debian's 3.1.x
#               and current emsdk releases both work)
#   PYTHON      the Python that runs wasm/make_wheel.py (default: python3)
#   EMCFLAGS    extra compile flags, appended (for experiments; never -pthread)
#   SAMEBITS_WASM_OUT   output folder (default: wasm/out)
#   CLANG, WASM_LD      the compiler and linker of the relaxed-SIMD module
#               (default: clang-19 and wasm-ld-19; Debian: apt-get install
#               clang-19 lld-19)
#   RELAXED     1 (default): also build the relaxed-SIMD module for fast mode;
#               0: skip it (the wheel then runs fast mode unfused)
#
# The second module, libsamebits-relaxed.wasm, is for fast mode: vec4's
# product kernels (csrc/isa/vec4/ukernel_vec4.c, the only file that uses vec4_fma)
# compiled by clang with -mrelaxed-simd, so that they use f32x4.relaxed_madd
# (fused multiply-add), linked with the plain module's emcc objects of every
# other file. emcc 3.1.6 (clang 14) cannot emit relaxed SIMD, so that one file
# is compiled freestanding for wasm32-unknown-emscripten (wasm/freestanding/
# declares the C library it may call) and the module is linked by wasm-ld as
# a position-independent side module that imports its few C library
# functions (malloc, free, memcpy, memset, ...) from Pyodide's main module.
# Only that file: clang 19's WebAssembly backend turns a select on a
# non-strict comparison into pmin/pmax, wrong for signed zeros (relu's
# `x <= 0 ? 0 : x` becomes f32x4.pmax(x, 0), so relu(-0) = -0), and fast mode
# runs the exact kernels for everything but the products and exp, sigmoid,
# tanh, log, erf: those keep the plain module's code and bits. It is linked
# with -Bsymbolic: its own functions and tables are bound inside it, never
# through the global offset table that it would otherwise share with
# libsamebits.so (same symbol names), so it cannot end up calling the plain
# kernels.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${SAMEBITS_WASM_OUT:-$here/out}
EMCC=${EMCC:-emcc}
PYTHON=${PYTHON:-python3}
read -r -a extra <<<"${EMCFLAGS:-}"
CLANG=${CLANG:-clang-19}
WASM_LD=${WASM_LD:-wasm-ld-19}
RELAXED=${RELAXED:-1}

die() { echo "wasm/build.sh: $*" >&2; exit 1; }

command -v "$EMCC" >/dev/null 2>&1 ||
    die "'$EMCC' not found: install emscripten (Debian: apt-get install emscripten) or activate emsdk"
command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found (set PYTHON)"
case $RELAXED in
    0) ;;
    1)  command -v "$CLANG" >/dev/null 2>&1 ||
            die "'$CLANG' not found: install clang 16 or newer (Debian: apt-get install clang-19 lld-19), set CLANG, or build without the relaxed-SIMD module: RELAXED=0"
        command -v "$WASM_LD" >/dev/null 2>&1 ||
            die "'$WASM_LD' not found: install lld (Debian: apt-get install lld-19), set WASM_LD, or RELAXED=0" ;;
    *) die "RELAXED=$RELAXED: use 1 (build the relaxed-SIMD module) or 0 (skip it)" ;;
esac
for flag in "${extra[@]+"${extra[@]}"}"; do
    case $flag in
        -pthread | -pthreads | -sUSE_PTHREADS* | -sSHARED_MEMORY*)
            die "EMCFLAGS has $flag: Pyodide cannot load a side module built with threads" ;;
    esac
done

version=$("$EMCC" --version 2>/dev/null | sed -n 1p)   # sed reads it all: head would SIGPIPE emcc under pipefail
echo "wasm/build.sh: $version"

# The version, written once in py/samebits/_version.py.
sb_version=$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' "$root/py/samebits/_version.py")
[ -n "$sb_version" ] || die "no __version__ in py/samebits/_version.py"
# SB_SIDE_MODULE: the graph runtime reads no clock in a side module (its C
# library is Pyodide's, csrc/graph/executor.c says why).
# As natively (CMakeLists.txt): only the public API (SB_API in samebits.h) is
# exported, the version is compiled in.
apiflags=(-fvisibility=hidden -DSB_BUILDING_LIBRARY "-DSB_VERSION=\"$sb_version\"" -DSB_SIDE_MODULE)
# The same floating-point rules as the native build: no contraction into
# fused multiply-add, no fast-math, no errno (csrc/build.json, read by every
# build; tools/build_flags.py prints them).
read -r -a common <<<"$("$PYTHON" "$root/tools/build_flags.py" common)"
read -r -a warnings <<<"$("$PYTHON" "$root/tools/build_flags.py" warnings)"
# each folder's own flags for clang (the scalar path stays scalar)
declare -A folder_flags=()
while read -r folder flags; do folder_flags[$folder]=$flags; done \
    < <("$PYTHON" "$root/tools/build_flags.py" folders clang)
cflags=(-O3 -msimd128 "${common[@]}" "${warnings[@]}" -fPIC -sSIDE_MODULE=1 -I"$root/csrc"
        "${apiflags[@]}")
# Pyodide's ABI passes 64-bit integers as BigInt: without WASM_BIGINT a call
# with an int64 argument through ctypes aborts the runtime. --profiling-funcs
# keeps the function names (the name section) for the tests' disassembly.
ldflags=(-O3 -sSIDE_MODULE=1 -sWASM_BIGINT --profiling-funcs)

obj="$out/obj"
rm -rf "$obj"
mkdir -p "$obj"
mapfile -t sources < <(find "$root/csrc" -name '*.c' | LC_ALL=C sort)
[ ${#sources[@]} -gt 0 ] || die "no C sources in $root/csrc"

# one compiler per core (the files are independent; js/build.sh does the same)
jobs=$(nproc 2>/dev/null || echo 2)
objects=()
pids=()
# objects are named by their path under csrc/ (graph/ops/nn/conv.c ->
# graph_ops_nn_conv): two files of one name in two folders never meet
objname() { local n=${1#"$root"/csrc/}; n=${n%.c}; echo "${n//\//_}"; }
for src in "${sources[@]}"; do
    name=$(objname "$src")
    rel=${src#"$root"/csrc/}
    read -r -a fileflags <<<"${folder_flags[${rel%/*}]:-}"
    echo "  emcc $name.c"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    "$EMCC" "${cflags[@]}" "${fileflags[@]+"${fileflags[@]}"}" "${extra[@]+"${extra[@]}"}" \
        -c "$src" -o "$obj/$name.o" &
    pids+=($!)
    objects+=("$obj/$name.o")
done
for pid in "${pids[@]}"; do wait "$pid" || die "compiling for the side module failed"; done

lib="$out/libsamebits.so"
rm -f "$lib"
"$EMCC" "${ldflags[@]}" "${objects[@]}" -o "$lib"
echo "wasm/build.sh: $lib ($(wc -c <"$lib") bytes)"

# The relaxed-SIMD module for fast mode (see the top of this file).
fast=()
if [ "$RELAXED" = 1 ]; then
    echo "wasm/build.sh: $("$CLANG" --version | sed -n 1p) (relaxed-SIMD module)"
    robj="$out/obj-relaxed"
    rm -rf "$robj"
    mkdir -p "$robj"
    rflags=(--target=wasm32-unknown-emscripten -ffreestanding -fPIC "${apiflags[@]}"
            -O3 -msimd128 -mrelaxed-simd "${common[@]}" "${warnings[@]}"
            -isystem "$here/freestanding" -I"$root/csrc")
    # The files clang compiles with relaxed SIMD: those that call vec4_fma
    # (today ukernel_vec4.c; found, not listed, so that a new one cannot be
    # missed; js/build.sh finds them the same way). Every other object is the
    # plain module's, from emcc (see the top).
    relaxed_sources=" $(grep -rl --include='*.c' vec4_fma "$root"/csrc | while read -r f; do objname "$f"; done | tr '\n' ' ')"
    [ "$relaxed_sources" != " " ] || die "no .c file under csrc/ calls vec4_fma: nothing to build with relaxed SIMD"
    robjects=()
    rpids=()
    for src in "${sources[@]}"; do
        name=$(objname "$src")
        if [[ $relaxed_sources != *" $name "* ]]; then
            robjects+=("$obj/$name.o")
            continue
        fi
        echo "  $CLANG $name.c"
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
        "$CLANG" "${rflags[@]}" -c "$src" -o "$robj/$name.o" &
        rpids+=($!)
        robjects+=("$robj/$name.o")
    done
    for pid in "${rpids[@]+"${rpids[@]}"}"; do wait "$pid" || die "compiling for the relaxed-SIMD module failed"; done
    relaxed="$out/libsamebits-relaxed.wasm"
    rm -f "$relaxed"
    "$WASM_LD" --experimental-pic -shared --no-entry --export-dynamic -Bsymbolic \
        --unresolved-symbols=import-dynamic "${robjects[@]}" -o "$relaxed"
    echo "wasm/build.sh: $relaxed ($(wc -c <"$relaxed") bytes)"
    fast=(--fast-library "$relaxed")
else
    rm -f "$out/libsamebits-relaxed.wasm"
    echo "wasm/build.sh: RELAXED=0: no relaxed-SIMD module; fast mode in wasm stays unfused"
fi

# The wheel: checks that each module is a side module without shared memory
# (and that the relaxed one imports only what Pyodide provides), then
# packages them with py/samebits.
"$PYTHON" "$here/make_wheel.py" --library "$lib" "${fast[@]+"${fast[@]}"}" --out "$out"
