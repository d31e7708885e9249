// Loading one of the WebAssembly modules (js/build.sh): the one-thread
// module, or the threaded one when more than one thread is asked for and the
// environment can share memory between workers; each in its relaxed-SIMD
// build where the engine has relaxed SIMD (fast mode then fuses).

const onNode = typeof process == "object" && typeof process.versions == "object" &&
    typeof process.versions.node == "string";

/** Why this environment cannot run the threaded module, or null if it can. */
export function threadsUnavailableReason() {
    if (typeof SharedArrayBuffer != "function" || typeof Atomics != "object") {
        return "SharedArrayBuffer is not available in this environment";
    }
    if (!onNode && globalThis.crossOriginIsolated !== true) {
        return "the page is not cross-origin isolated (it needs the headers " +
            "Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)";
    }
    return null;
}

/** The processors the environment reports (navigator.hardwareConcurrency, os.availableParallelism). */
export async function processorCount() {
    if (onNode) {
        const os = await import("node:os");
        return typeof os.availableParallelism == "function" ? os.availableParallelism()
            : os.cpus().length;
    }
    return globalThis.navigator?.hardwareConcurrency || 1;
}

// The smallest module using f32x4.relaxed_madd (opcode 0xfd 0x105): a
// function (v128, v128, v128) -> v128 returning a * b + c.
const RELAXED_PROBE = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,                  // magic, version 1
    0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,      // type: (v128 v128 v128) -> v128
    0x03, 0x02, 0x01, 0x00,                                          // function 0 of type 0
    0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, // code: local.get 0 1 2
    0xfd, 0x85, 0x02, 0x0b]);                                        // f32x4.relaxed_madd, end

/** Whether this engine validates relaxed-SIMD instructions. */
export function hasRelaxedSimd() {
    try {
        return WebAssembly.validate(RELAXED_PROBE);
    } catch {
        return false;
    }
}

/** Whether the package holds the relaxed-SIMD modules (js/build.sh with RELAXED=1). */
async function relaxedModulesBuilt() {
    const url = new URL("../dist/samebits-single-relaxed.wasm", import.meta.url);
    if (onNode) {
        const fs = await import("node:fs");
        const { fileURLToPath } = await import("node:url");
        return fs.existsSync(fileURLToPath(url));
    }
    try {
        return (await fetch(url, { method: "HEAD" })).ok;
    } catch {
        return false;
    }
}

/** Whether to load a relaxed module: asked for (true/false) or, by default, where it can run. */
export async function chooseRelaxed(asked) {
    if (asked === false) return false;
    const available = hasRelaxedSimd() && await relaxedModulesBuilt();
    if (asked === true && !available) {
        throw new RangeError("init: relaxedSimd is true but " + (hasRelaxedSimd()
            ? "this package has no relaxed-SIMD modules (built with RELAXED=0)"
            : "this engine has no relaxed SIMD"));
    }
    return available;
}

async function wasmBytes(url) {
    if (onNode) {
        const fs = await import("node:fs/promises");
        const { fileURLToPath } = await import("node:url");
        return fs.readFile(fileURLToPath(url));
    }
    return undefined;   // a browser fetches it (streaming compilation)
}

/**
 * Creates the emscripten module: `threads` is 1 (the one-thread module) or
 * more (the threaded module, with threads - 1 workers started now, since a
 * browser's main thread cannot start a worker and wait for it in one call);
 * `relaxed` picks the relaxed-SIMD build.
 */
export async function loadModule(threads, relaxed) {
    const name = (threads > 1 ? "threads" : "single") + (relaxed ? "-relaxed" : "");
    const url = new URL(`../dist/samebits-${name}.wasm`, import.meta.url);
    const factory = (await import(`../dist/samebits-${name}.mjs`)).default;
    const options = {};
    const bytes = await wasmBytes(url);
    // Under Node, the module's own loader would fetch() a file: URL, which
    // Node's fetch refuses: give it the bytes.
    if (bytes !== undefined) options.wasmBinary = bytes;
    if (threads > 1) options.pthreadPoolSize = threads - 1;
    return factory(options);
}
