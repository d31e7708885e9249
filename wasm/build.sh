#!/usr/bin/env bash
# Builds the WebAssembly side module of samebits and the Pyodide wheel around it.
#
#   bash wasm/build.sh            # -> wasm/out/libsamebits.so, wasm/out/samebits-*.whl
#
# Every csrc/*.c is compiled with emcc; files for other ISAs (AVX2, AVX-512,
# NEON) guard on their target macros and come out empty, and the vec4 path
# runs on wasm SIMD128. The module is an emscripten SIDE_MODULE (what Pyodide
# loads with dlopen) and must never be built with -pthread: Pyodide cannot
# load threaded modules, and csrc/pool.c runs serially without threads.
#
# Environment:
#   EMCC        the emscripten compiler (default: emcc on PATH; Debian's 3.1.x
#               and current emsdk releases both work)
#   PYTHON      the Python that runs wasm/make_wheel.py (default: python3)
#   EMCFLAGS    extra compile flags, appended (for experiments; never -pthread)
#   SAMEBITS_WASM_OUT   output folder (default: wasm/out)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${SAMEBITS_WASM_OUT:-$here/out}
EMCC=${EMCC:-emcc}
PYTHON=${PYTHON:-python3}
read -r -a extra <<<"${EMCFLAGS:-}"

die() { echo "wasm/build.sh: $*" >&2; exit 1; }

command -v "$EMCC" >/dev/null 2>&1 ||
    die "'$EMCC' not found: install emscripten (Debian: apt-get install emscripten) or activate emsdk"
command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found (set PYTHON)"
for flag in "${extra[@]+"${extra[@]}"}"; do
    case $flag in
        -pthread | -pthreads | -sUSE_PTHREADS* | -sSHARED_MEMORY*)
            die "EMCFLAGS has $flag: Pyodide cannot load a side module built with threads" ;;
    esac
done

version=$("$EMCC" --version 2>/dev/null | head -n 1)
echo "wasm/build.sh: $version"

# The same floating-point rules as the native build (CMakeLists.txt): no
# contraction into fused multiply-add, no fast-math, no errno.
cflags=(-O3 -msimd128 -ffp-contract=off -fno-fast-math -fno-math-errno -std=gnu11
        -Wall -Wextra -fPIC -sSIDE_MODULE=1 -I"$root/csrc")
# Pyodide's ABI passes 64-bit integers as BigInt: without WASM_BIGINT a call
# with an int64 argument through ctypes aborts the runtime.
ldflags=(-O3 -sSIDE_MODULE=1 -sWASM_BIGINT)

obj="$out/obj"
rm -rf "$obj"
mkdir -p "$obj"
shopt -s nullglob
sources=("$root"/csrc/*.c)
[ ${#sources[@]} -gt 0 ] || die "no C sources in $root/csrc"

objects=()
for src in "${sources[@]}"; do
    name=$(basename "$src" .c)
    fileflags=()
    # The scalar path stays scalar, as in the native build.
    [ "$name" = ukernel_scalar ] && fileflags=(-fno-vectorize -fno-slp-vectorize)
    echo "  emcc $name.c"
    "$EMCC" "${cflags[@]}" "${fileflags[@]+"${fileflags[@]}"}" "${extra[@]+"${extra[@]}"}" \
        -c "$src" -o "$obj/$name.o"
    objects+=("$obj/$name.o")
done

lib="$out/libsamebits.so"
rm -f "$lib"
"$EMCC" "${ldflags[@]}" "${objects[@]}" -o "$lib"
echo "wasm/build.sh: $lib ($(wc -c <"$lib") bytes)"

# The wheel: checks that the module is a side module without shared memory,
# then packages it with py/samebits.
"$PYTHON" "$here/make_wheel.py" --library "$lib" --out "$out"
