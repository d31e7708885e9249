// Loading one of the two WebAssembly modules (js/build.sh): the one-thread
// module, or the threaded one when more than one thread is asked for and the
// environment can share memory between workers.

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
 * browser's main thread cannot start a worker and wait for it in one call).
 */
export async function loadModule(threads) {
    const name = threads > 1 ? "threads" : "single";
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
