#!/usr/bin/env bash
# Builds the standalone WebAssembly modules of the npm package (js/):
#
#   bash js/build.sh          # -> js/dist/samebits-{single,threads}.{mjs,wasm}
#
# Unlike wasm/build.sh (a Pyodide side module that borrows Pyodide's C
# library), these are emscripten main modules with their own C library, so
# they load in any page, worker or Node process without Pyodide:
#
#   samebits-single    one thread; needs only WebAssembly SIMD128
#   samebits-threads   -pthread: csrc/framework/threads.c's fixed-chunk pool runs on Web
#                      Workers (worker_threads under Node) over a shared
#                      memory; needs SharedArrayBuffer, so in a browser a
#                      cross-origin-isolated page (COOP/COEP headers)
#
# The sources and floating-point flags are those of every other build
# (CMakeLists.txt, wasm/build.sh): no contraction into fused multiply-add, no
# fast-math, the scalar kernels kept scalar. Exact mode therefore gives the
# native bits; js/test/ checks it.
#
# Each comes twice: as above, and "-relaxed", where the file of vec4's
# fast-mode product kernels (RELAXED_SOURCES) is compiled with
# -mrelaxed-simd, so that they use f32x4.relaxed_madd (fused multiply-add),
# as the Pyodide wheel's relaxed module does (wasm/README.md); every other
# object is the plain module's own, compiled once. init() loads a
# relaxed module where the engine validates relaxed SIMD. emscripten 3.1.6's
# clang 14 cannot emit the final relaxed opcodes, so that object comes from
# clang 19 (through a directory that gives emcc clang-19 under the name it
# calls, EM_LLVM_ROOT), and the link skips binaryen, whose Debian version
# cannot parse them: -O1, WASM_BIGINT. Only that file: clang 19's
# WebAssembly backend lowers the vectorized `x <= 0 ? 0 : x` of relu to
# f32x4.pmax(x, 0), which keeps -0 where the definition gives +0 (seen in the
# ops suite; wasm/build.sh splits the Pyodide relaxed module the same way).
# Exact mode never uses a relaxed instruction: its bits are the same.
#
# Environment: EMCC (default emcc; Debian 12's emscripten 3.1.6 works),
# CLANG (default clang-19; RELAXED=0 skips the relaxed modules),
# SAMEBITS_JS_OUT (default js/dist).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${SAMEBITS_JS_OUT:-$here/dist}
EMCC=${EMCC:-emcc}
CLANG=${CLANG:-clang-19}
RELAXED=${RELAXED:-1}

die() { echo "js/build.sh: $*" >&2; exit 1; }
command -v "$EMCC" >/dev/null 2>&1 ||
    die "'$EMCC' not found: install emscripten (Debian: apt-get install emscripten) or activate emsdk"
case $RELAXED in
    0) ;;
    1) command -v "$CLANG" >/dev/null 2>&1 ||
           die "'$CLANG' not found: install clang 16 or newer (Debian: apt-get install clang-19), set CLANG, or RELAXED=0" ;;
    *) die "RELAXED=$RELAXED: use 1 (build the relaxed-SIMD modules) or 0 (skip them)" ;;
esac
# emcc's JavaScript passes need acorn: Debian installs it (node-acorn) in
# /usr/share/nodejs, where only Debian's own node looks by default.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
echo "js/build.sh: $("$EMCC" --version 2>/dev/null | sed -n 1p)"

sb_version=$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' "$root/py/samebits/_version.py")
[ -n "$sb_version" ] || die "no __version__ in py/samebits/_version.py"

# The library's flags (csrc/build.json, read by every build), and each
# folder's own for clang (the scalar path stays scalar).
PYTHON=${PYTHON:-python3}
read -r -a common <<<"$("$PYTHON" "$root/tools/build_flags.py" common)"
read -r -a warnings <<<"$("$PYTHON" "$root/tools/build_flags.py" warnings)"
declare -A folder_flags=()
while read -r folder flags; do folder_flags[$folder]=$flags; done \
    < <("$PYTHON" "$root/tools/build_flags.py" folders clang)
cflags=(-O3 -msimd128 "${common[@]}" "${warnings[@]}"
        -fvisibility=hidden -DSB_BUILDING_LIBRARY "-DSB_VERSION=\"$sb_version\"" -I"$root/csrc")

# The functions the JavaScript API calls (js/src/core.mjs), and malloc/free
# for its buffers.
exports=_malloc,_free
for f in sb_version sb_path_count sb_path_name sb_path_supported sb_path_best sb_path_fused \
         sb_threading_available sb_sgemm sb_matmul sb_conv2d sb_max_pool2d sb_unary sb_binary \
         sb_reduce sb_avg_pool2d sb_norm sb_resize2d sb_copy sb_fill_test_values sb_matmul_plan \
         sb_threads_wake_ns sb_packed_b_bytes sb_pack_b sb_conv2d_packed_bytes sb_conv2d_pack \
         sb_session_load sb_session_free sb_last_error sb_session_io_count sb_session_io_info \
         sb_session_run sb_buffer_free sb_session_profile_count sb_session_profile_label \
         sb_session_node_count sb_session_node_info sb_session_plan_count sb_onnx_operator_count \
         sb_onnx_operator_name; do
    exports="$exports,_$f"
done

# Shared by every module: an ES module exporting a factory, the memory
# allowed to grow (to 4 GiB), no filesystem, nothing printed.
ldcommon=(-msimd128 -sMODULARIZE=1 -sEXPORT_ES6=1 -sALLOW_MEMORY_GROWTH=1
          -sMAXIMUM_MEMORY=4GB -sFILESYSTEM=0 -sENVIRONMENT=web,worker,node
          "-sEXPORTED_FUNCTIONS=$exports" -sEXPORTED_RUNTIME_METHODS=UTF8ToString,wasmMemory
          -sINCOMING_MODULE_JS_API=locateFile,pthreadPoolSize,print,printErr,wasmMemory,wasmBinary,mainScriptUrlOrBlob)

jobs=$(nproc 2>/dev/null || echo 2)
# The files that call vec4_fma (today ukernel_vec4.c, where the depthwise
# kernels live too): found, not listed, as wasm/build.sh finds them.
# Objects are named by their path under csrc/ (graph/ops/nn/conv.c ->
# graph_ops_nn_conv), so that two files of one name in two folders never meet.
RELAXED_SOURCES=" $(cd "$root"/csrc && grep -rl --include='*.c' vec4_fma . | sed 's|^\./||; s/\.c$//; s|/|_|g' | tr '\n' ' ')"
[ "$RELAXED_SOURCES" != " " ] || die "no .c file under csrc/ calls vec4_fma: nothing to build with relaxed SIMD"
mapfile -t SOURCES < <(find "$root/csrc" -name '*.c' | LC_ALL=C sort)
relaxed=0   # build(): compile RELAXED_SOURCES with clang 19 and -mrelaxed-simd

# build NAME [FROM]: compiles with cflags + extra_cflags, links with ldflags +
# extra_ldflags. With FROM (a relaxed module's plain twin, built with the same
# cflags and extra_cflags), every object but RELAXED_SOURCES' is FROM's own:
# only those files differ, so the relaxed build compiles one file, not all.
build() {
    local name=$1 from=${2:-}
    local obj="$out/obj-$name"
    rm -rf "$obj"; mkdir -p "$obj"
    local objects=() pids=() src base fileflags pid
    for src in "${SOURCES[@]}"; do
        base=${src#"$root"/csrc/}; base=${base%.c}; base=${base//\//_}
        if [ -n "$from" ] && [[ $RELAXED_SOURCES != *" $base "* ]]; then
            objects+=("$out/obj-$from/$base.o")
            continue
        fi
        local rel=${src#"$root"/csrc/}
        read -r -a fileflags <<<"${folder_flags[${rel%/*}]:-}"
        local compiler=("$EMCC")
        if [ "$relaxed" = 1 ] && [[ $RELAXED_SOURCES == *" $base "* ]]; then
            fileflags+=(-mrelaxed-simd -Wno-unused-command-line-argument)
            compiler=(env EM_LLVM_ROOT="$shim" "$EMCC")
        fi
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
        "${compiler[@]}" "${cflags[@]}" "${fileflags[@]+"${fileflags[@]}"}" \
            "${extra_cflags[@]+"${extra_cflags[@]}"}" -c "$src" -o "$obj/$base.o" &
        pids+=($!)
        objects+=("$obj/$base.o")
    done
    for pid in "${pids[@]}"; do wait "$pid" || die "compiling for samebits-$name failed"; done
    "$EMCC" "${ldflags[@]}" "${extra_cflags[@]+"${extra_cflags[@]}"}" \
        "${extra_ldflags[@]+"${extra_ldflags[@]}"}" "${objects[@]}" -sEXPORT_NAME="samebits_${name//-/_}" \
        -o "$obj/samebits-$name.mjs"
    cat "$here/node-shim.mjs" "$obj/samebits-$name.mjs" >"$out/samebits-$name.mjs"
    mv "$obj/samebits-$name.wasm" "$out/"
    [ ! -f "$obj/samebits-$name.worker.js" ] || mv "$obj/samebits-$name.worker.js" "$out/"
    echo "js/build.sh: $out/samebits-$name.wasm ($(wc -c <"$out/samebits-$name.wasm") bytes)"
}

# The npm package's version is the Python package's.
grep -q "\"version\": \"$sb_version\"" "$here/package.json" ||
    die "js/package.json's version differs from py/samebits/_version.py's ($sb_version)"
# npm pack takes the package's files from js/ only.
cp "$root/LICENSE" "$here/LICENSE"

mkdir -p "$out"
# The pool's workers are started when the module is created (Module.pthreadPoolSize,
# set by init({threads})): a browser's main thread cannot start a worker
# and then wait for it within one call.
pool=('-sPTHREAD_POOL_SIZE=Module.pthreadPoolSize||0')

ldflags=(-O3 "${ldcommon[@]}")
extra_cflags=() extra_ldflags=()
build single
extra_cflags=(-pthread) extra_ldflags=("${pool[@]}")
build threads

if [ "$RELAXED" = 1 ]; then
    # emcc calls "clang-14" in EM_LLVM_ROOT (Debian's naming): a wrapper
    # there runs $CLANG without the features clang 19 enables by default
    # that emscripten 3.1.6's linker predates; wasm-ld and the tools stay 14.
    shim="$out/llvm-shim"
    rm -rf "$shim"; mkdir -p "$shim"
    printf '#!/bin/sh\nexec %s "$@" -mno-reference-types -mno-multivalue\n' \
        "$(command -v "$CLANG")" >"$shim/clang-14"
    chmod +x "$shim/clang-14"
    ln -s clang-14 "$shim/clang++-14"
    for tool in wasm-ld llvm-ar llvm-nm llvm-objcopy llvm-dwarfdump llvm-ranlib; do
        [ ! -e "/usr/bin/$tool-14" ] || ln -s "/usr/bin/$tool-14" "$shim/$tool-14"
    done
    relaxed=1
    ldflags=(-O1 -sWASM_BIGINT "${ldcommon[@]}")
    extra_cflags=() extra_ldflags=()
    build single-relaxed single
    extra_cflags=(-pthread) extra_ldflags=("${pool[@]}")
    build threads-relaxed threads
    rm -rf "$shim"
else
    rm -f "$out"/samebits-*-relaxed.*
    echo "js/build.sh: RELAXED=0: no relaxed-SIMD modules; fast mode stays unfused"
fi
rm -rf "$out"/obj-*
