// samebits for JavaScript: the same kernels as the Python package, with the
// same exact-mode bits, in a browser page, a worker or Node.
//
//   import * as samebits from "samebits";
//   await samebits.init({ threads: 4 });
//   const c = samebits.matmul(a, b, m, k, n, { mode: "exact" });
//   samebits.digest(c, { shape: [m, n] });   // equal to samebits.testing.digest in Python
import { Samebits } from "./src/samebits.mjs";
import { loadModule, threadsUnavailableReason, processorCount, chooseRelaxed } from "./src/load.mjs";
import * as check from "./src/checks.mjs";
export { digest } from "./src/digest.mjs";
export { Samebits };
export { PackedMatrix, PackedConv2dWeight } from "./src/packed.mjs";
export { Model } from "./src/model.mjs";

let current = null;

/**
 * Loads the WebAssembly module and returns the API object (also used by
 * this module's own functions afterwards). threads: how many threads the
 * calls may use (default 1; "auto" for every processor). With more than one
 * it loads the threaded module, which needs SharedArrayBuffer (in a browser:
 * a cross-origin-isolated page); without it, it falls back to one thread and
 * says why in `threadsNote`. relaxedSimd: undefined (the default) loads the
 * relaxed-SIMD build, whose fast mode fuses multiply-adds, where the engine
 * has relaxed SIMD; false never, true always (a RangeError where it cannot).
 * Exact bits are the same either way.
 */
export async function init(opts) {
    opts = check.options(opts, ["threads", "relaxedSimd"], "init");
    if (opts.relaxedSimd !== undefined) check.bool(opts.relaxedSimd, "relaxedSimd", "init");
    let threads = opts.threads ?? 1;
    if (threads === "auto") threads = await processorCount();
    check.int(threads, "threads", "init", { min: 1, max: 256 });
    let note = null;
    if (threads > 1) {
        const reason = threadsUnavailableReason();
        if (reason !== null) {
            note = `one thread instead of ${threads}: ${reason}`;
            threads = 1;
        }
    }
    const relaxed = await chooseRelaxed(opts.relaxedSimd);
    current = new Samebits(await loadModule(threads, relaxed),
        { threads, threadsNote: note, relaxedSimd: relaxed });
    return current;
}

/**
 * Loads an ONNX model (bytes: Uint8Array or ArrayBuffer) with the module of
 * init(): init is called first when it was not, or with other threads or
 * relaxedSimd than asked. opts: mode ("exact" by default, or "fast"),
 * threads, relaxedSimd. Returns a Model.
 */
export async function loadModel(bytes, opts) {
    opts = check.options(opts, ["mode", "threads", "relaxedSimd", "external"], "loadModel");
    const { relaxedSimd, threads, ...rest } = opts;
    if (current === null || (threads !== undefined && threads !== current.threads) ||
        (relaxedSimd !== undefined && relaxedSimd !== current.relaxedSimd)) {
        await init({ threads: threads ?? current?.threads ?? 1,
            ...(relaxedSimd !== undefined ? { relaxedSimd } : {}) });
    }
    return current.loadModel(bytes, { ...rest, threads: current.threads });
}

function api(name) {
    if (current === null) {
        throw new Error(`samebits.${name}: call "await samebits.init()" first`);
    }
    return current;
}

// The module-level functions: the methods of the object init() made last.
const methods = ["info", "matmul", "conv2d", "maxPool2d", "avgPool2d", "adaptiveAvgPool2d",
    "interpolate", "exp", "log", "tanh", "erf", "sigmoid", "relu", "relu6", "leakyRelu", "gelu",
    "silu", "hardswish", "hardsigmoid", "sqrt", "elu", "softplus", "mish", "sin", "cos", "add",
    "sub", "mul", "div", "maximum", "minimum", "pow", "sum", "mean", "softmax", "logSoftmax",
    "layerNorm", "batchNorm", "groupNorm", "portableValues", "packMatrix", "packConv2dWeight"];
const bound = Object.fromEntries(methods.map(name => [name, (...args) => api(name)[name](...args)]));
export const { info, matmul, conv2d, maxPool2d, avgPool2d, adaptiveAvgPool2d, interpolate, exp,
    log, tanh, erf, sigmoid, relu, relu6, leakyRelu, gelu, silu, hardswish, hardsigmoid, sqrt, elu,
    softplus, mish, sin, cos, add, sub, mul, div, maximum, minimum, pow, sum, mean, softmax,
    logSoftmax, layerNorm, batchNorm, groupNorm, portableValues, packMatrix, packConv2dWeight } = bound;
