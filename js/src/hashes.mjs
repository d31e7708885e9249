// The three hash suites of docs/hash-suite.md, run through this package's
// API: the exact-mode lines must equal those of every other samebits build
// (samebits hashes, natively; the Pyodide module). The cases come from
// suite-data.mjs, generated from py/samebits/hashes.py.
import { Sha256 } from "./sha256.mjs";
import * as S from "./suite-data.mjs";

export const SUITES = ["gemm", "conv", "ops"];

/** The line printed before a suite's lines, as `samebits hashes` prints it. */
export function header(suite) {
    if (!SUITES.includes(suite)) throw new RangeError(`hashSuite: unknown suite "${suite}"`);
    return S.HEADERS[suite];
}

/** A hash line, "exact vec4   threads=2   sha256=..." (after the suite's name for conv and ops). */
export function formatLine(suite, mode, path, threads, digest) {
    const line = `${mode.padEnd(5)} ${path.padEnd(6)} threads=${String(threads).padEnd(3)} sha256=${digest}`;
    return suite === "gemm" ? line : `${suite} ${line}`;
}

// The hashed bytes are little-endian float32: a big-endian engine would need
// a byte swap here (none exists among WebAssembly engines).
function* gemmOutputs(sb, mode, threads) {
    let index = 0;
    for (const [m, n, k, ta, tb, padA, padB] of S.GEMM_CASES) {
        const a = storedMatrix(sb, m, k, ta, padA, 2 * index + 1);
        const b = storedMatrix(sb, k, n, tb, padB, 2 * index + 2);
        yield sb.matmul(a, b, m, k, n, { mode, threads, transposeA: ta === 1, transposeB: tb === 1 });
        index++;
    }
}

// The suite stores a rows x cols operand row-major (or its transpose) with
// `pad` extra test values per stored row; the API takes it without them.
function storedMatrix(sb, rows, cols, transposed, pad, seed) {
    const [storedRows, storedCols] = transposed ? [cols, rows] : [rows, cols];
    const ld = storedCols + pad;
    const all = sb.portableValues(storedRows * ld, seed, S.NSPECIAL);
    if (pad === 0) return all;
    const packed = new Float32Array(storedRows * storedCols);
    for (let r = 0; r < storedRows; r++) packed.set(all.subarray(r * ld, r * ld + storedCols), r * storedCols);
    return packed;
}

function* convOutputs(sb, mode, threads) {
    let q = 0;
    for (const [kind, , , c, h, w, cout, kh, kw, stride, padding, groups, activation] of S.CONV_CASES) {
        const x = sb.portableValues(c * h * w, (S.CONV_SEED + 3 * q) >>> 0, S.NSPECIAL);
        if (kind === "maxpool") {
            yield sb.maxPool2d(x, [1, c, h, w], { threads, kernelSize: [kh, kw], stride, padding }).data;
        } else {
            const weight = sb.portableValues(cout * (c / groups) * kh * kw, (S.CONV_SEED + 3 * q + 1) >>> 0, S.NSPECIAL);
            const bias = sb.portableValues(cout, (S.CONV_SEED + 3 * q + 2) >>> 0, 0);
            yield sb.conv2d(x, [1, c, h, w], weight, [cout, c / groups, kh, kw],
                { mode, threads, bias, stride, padding, groups, activation }).data;
        }
        q++;
    }
}

function opsInput(sb) {
    const n = S.OPS_SWEEP + S.OPS_TEST_VALUES;
    const x = new Float32Array(n);
    const bits = new Uint32Array(x.buffer);
    for (let i = 0; i < S.OPS_SWEEP; i++) bits[i] = Math.imul(i, 65537) >>> 0;
    x.set(sb.portableValues(S.OPS_TEST_VALUES, S.OPS_SEED, S.NSPECIAL), S.OPS_SWEEP);
    S.OPS_HARD_INPUTS.forEach((b, i) => { bits[n - S.OPS_HARD_INPUTS.length + i] = b; });
    return x;
}

function bitsToFloat(bits) {
    return new Float32Array(new Uint32Array([bits]).buffer)[0];
}

const UNARY_METHODS = { exp: "exp", log: "log", tanh: "tanh", erf: "erf", sigmoid: "sigmoid",
    relu: "relu", relu6: "relu6", leaky_relu: "leakyRelu", gelu: "gelu", gelu_tanh: "gelu",
    silu: "silu", hardswish: "hardswish", hardsigmoid: "hardsigmoid", sqrt: "sqrt", elu: "elu",
    softplus: "softplus", mish: "mish", sin: "sin", cos: "cos" };

function* opsOutputs(sb, mode, threads) {
    const x = opsInput(sb);
    for (const name of S.OPS_FUNCTIONS) {
        const opts = { mode, threads };
        if (name === "leaky_relu") opts.negativeSlope = bitsToFloat(S.OPS_LEAKY_SLOPE_BITS);
        if (name === "elu") opts.alpha = bitsToFloat(S.OPS_ELU_ALPHA_BITS);
        if (name === "gelu_tanh") opts.approximate = "tanh";
        yield sb[UNARY_METHODS[name]](x, opts);
    }
    const eps = bitsToFloat(S.OPS_NORM_EPS_BITS);
    for (const [name, , outer, n, inner] of S.OPS_REDUCTIONS) {
        // (outer, n, inner) is x seen as [256, 512] reduced over axis 1 (rows) or 0 (columns).
        const axis = inner === 1 ? 1 : 0;
        const shape = inner === 1 ? [outer, n] : [n, inner];
        const opts = { mode, threads };
        if (name.startsWith("sum")) yield sb.sum(x, shape, axis, opts);
        else if (name.startsWith("mean")) yield sb.mean(x, shape, axis, opts);
        else if (name.startsWith("softmax")) yield sb.softmax(x, shape, axis, opts);
        else if (name.startsWith("log_softmax")) yield sb.logSoftmax(x, shape, axis, opts);
        else if (name.startsWith("layer_norm")) {
            yield sb.layerNorm(x, shape, { ...opts, eps, weight: sb.portableValues(n, S.OPS_NORM_SEED, 0),
                bias: sb.portableValues(n, S.OPS_NORM_SEED + 1, 0) });
        } else throw new Error(`hash suite: unknown reduction ${name}`);
    }
    const shape = [2, 16, 64, 64];
    const vectors = [0, 1, 2, 3].map(i => {
        const v = sb.portableValues(16, S.OPS_NORM_SEED + 2 + i, 0);
        if (i === 1) v.forEach((value, j) => { v[j] = Math.abs(value) + 0.5; });   // the variance
        return v;
    });
    for (const [, spec] of S.OPS_NORMS_POOLS) {
        if ("op" in spec) {
            const common = { mode, threads, eps, weight: vectors[2], bias: vectors[3] };
            yield spec.op === 0
                ? sb.batchNorm(x, shape, { ...common, runningMean: vectors[0], runningVar: vectors[1] })
                : sb.groupNorm(x, shape, spec.groups, common);
        } else if ("resize" in spec) {
            yield sb.interpolate(x, shape, { threads, size: spec.resize,
                mode: spec.mode === 1 ? "bilinear" : "nearest",
                ...(spec.mode === 1 ? { alignCorners: spec.align === 1 } : {}) }).data;
        } else if ("out" in spec) {
            yield sb.adaptiveAvgPool2d(x, shape, spec.out, { threads }).data;
        } else {
            yield sb.avgPool2d(x, shape, { threads, kernelSize: spec.k, stride: spec.s, padding: spec.p,
                ceilMode: spec.ceil, countIncludePad: spec.include_pad === 1 }).data;
        }
    }
}

const OUTPUTS = { gemm: gemmOutputs, conv: convOutputs, ops: opsOutputs };

/** The outputs of one suite, in hashing order (Float32Arrays). */
function suiteOutputs(sb, suite, mode = "exact", threads = sb.threads) {
    if (!SUITES.includes(suite)) throw new RangeError(`hashSuite: unknown suite "${suite}"`);
    return OUTPUTS[suite](sb, mode, threads);
}

/**
 * The digest of one suite: SHA-256 over its outputs in order, run with the
 * given mode and threads (threads defaults to the object's). flipBit flips
 * that bit of the first nonempty output before hashing: the negative
 * control of py/samebits/hashes.py's suite_digest.
 */
export function suiteDigest(sb, suite, { mode = "exact", threads = sb.threads, flipBit = null } = {}) {
    const h = new Sha256();
    for (const out of suiteOutputs(sb, suite, mode, threads)) {
        let bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
        if (flipBit !== null && bytes.length > 0) {
            bytes = bytes.slice();
            bytes[Math.floor(flipBit / 8) % bytes.length] ^= 1 << (flipBit % 8);
            flipBit = null;
        }
        h.update(bytes);
    }
    return h.hex();
}

/** The hash line of one suite, as `samebits hashes --suite SUITE` prints it natively. */
export function hashLine(sb, suite, opts = {}) {
    const mode = opts.mode ?? "exact";
    const threads = opts.threads ?? sb.threads;
    const digest = suiteDigest(sb, suite, { mode, threads, flipBit: opts.flipBit ?? null });
    return formatLine(suite, mode, sb.pathName, threads, digest);
}
