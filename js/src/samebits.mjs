// The JavaScript API: one Samebits object per loaded module. Each method
// checks its arguments (checks.mjs), copies the inputs into the module's
// memory, calls one C function of csrc/samebits.h and copies the result out.
// The definitions of the results are the C library's (docs/), so exact mode
// gives the bits of every other samebits build.
import * as check from "./checks.mjs";
import { ACTIVATIONS, BINARY, REDUCE, UNARY } from "./codes.mjs";
import { Heap } from "./memory.mjs";
import { float32Bits, finiteFloat32 } from "./float32.mjs";
import { PackedMatrix, PackedConv2dWeight } from "./packed.mjs";
import { Model } from "./model.mjs";

const MODES = { fast: 0, exact: 1 };
const STATUS = { [-1]: "bad argument", [-2]: "path not available", [-3]: "out of memory" };

const LEAKY_RELU_DEFAULT_SLOPE = 0.01;
const MAX_DIMS = 16;

const COMMON = ["mode", "out", "threads"];

export class Samebits {
    /** Use init() rather than this constructor. */
    constructor(module, { threads, threadsNote, relaxedSimd }) {
        this.module = module;
        this.heap = new Heap(module);
        /** The threads calls use unless told otherwise (1 without the threaded module). */
        this.threads = threads;
        /** Why fewer threads than asked for are used, or null. */
        this.threadsNote = threadsNote;
        /** Whether the relaxed-SIMD build is loaded. */
        this.relaxedSimd = relaxedSimd;
        this.version = module.UTF8ToString(module._sb_version());
        this.path = module._sb_path_best();
        this.pathName = module.UTF8ToString(module._sb_path_name(this.path));
    }

    /** Facts about this module: version, path, threads. */
    info() {
        this._live("info");
        return { version: this.version, path: this.pathName, threads: this.threads,
            threaded: this.module._sb_threading_available() === 1, threadsNote: this.threadsNote,
            relaxedSimd: this.relaxedSimd,
            fastModeFused: this.module._sb_path_fused(this.path) === 1 };
    }

    /**
     * Ends this object: the threaded module's workers are terminated (under
     * Node the process can then exit by itself). Every later call on it is
     * a TypeError; packed weights made by it must not be used either.
     */
    dispose() {
        if (this.module === null) return;
        this.module.PThread?.terminateAllThreads();
        this.module = null;
    }

    // ---- shared plumbing -------------------------------------------------

    _live(what) {
        if (this.module === null) throw new TypeError(`${what}: this samebits object was disposed`);
    }

    _mode(opts, what) {
        const mode = opts.mode ?? "fast";
        return MODES[check.choice(mode, Object.keys(MODES), "mode", what)];
    }

    _threads(opts, what) {
        if (opts.threads === undefined) return this.threads;
        return check.int(opts.threads, "threads", what, { min: 1, max: this.threads });
    }

    _out(opts, count, what, shapeText) {
        return check.optionalFloats(opts.out, count, "out", what, shapeText);
    }

    // Runs fn (which allocates through this.heap and returns the C status),
    // freeing every block afterwards whatever happens.
    _call(what, fn) {
        this._live(what);
        try {
            const status = fn();
            if (status !== 0) {
                throw new RangeError(`${what}: the C library refused the call ` +
                    `(${STATUS[status] ?? "status " + status})`);
            }
        } finally {
            this.heap.release();
        }
    }

    _callFloats(what, count, out, fn) {
        let result;
        this._call(what, () => {
            const y = this.heap.floats(count);
            const status = fn(y);
            if (status === 0) result = this.heap.floatsOut(y, count, out);
            return status;
        });
        return result;
    }

    // ---- ONNX models ---------------------------------------------------------

    /**
     * Loads an ONNX model (its bytes: a Uint8Array or ArrayBuffer) into the C
     * graph runtime: every operator, attribute and type checked, constants
     * folded, weights packed. mode: "exact" (the default, as
     * samebits.onnx.load) or "fast"; threads: at most this module's;
     * external: {location: Uint8Array} for a model whose weights are in
     * external data files (as the model names them).
     * Returns a Model (run, inputs, outputs, profile, dispose).
     */
    loadModel(bytes, opts) {
        const what = "loadModel";
        this._live(what);
        opts = check.options(opts, ["mode", "threads", "external"], what);
        if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
        let external;
        if (opts.external !== undefined) {
            if (opts.external === null || typeof opts.external != "object" || Array.isArray(opts.external)) {
                throw new TypeError(`${what}: external must be an object of {location: Uint8Array}`);
            }
            external = {};
            for (const [location, content] of Object.entries(opts.external)) {
                const data = content instanceof ArrayBuffer ? new Uint8Array(content) : content;
                if (!(data instanceof Uint8Array)) {
                    throw new TypeError(`${what}: external['${location}'] must be a Uint8Array or an ArrayBuffer`);
                }
                external[location] = data;
            }
        }
        if (!(bytes instanceof Uint8Array)) {
            const kind = bytes === null ? "null" : bytes?.constructor?.name ?? typeof bytes;
            throw new TypeError(`${what}: bytes must be a Uint8Array or an ArrayBuffer, got ${kind}`);
        }
        const mode = opts.mode ?? "exact";
        const modeCode = MODES[check.choice(mode, Object.keys(MODES), "mode", what)];
        return new Model(this, bytes, { mode, modeCode, threads: this._threads(opts, what), external });
    }

    // ---- products ----------------------------------------------------------

    /**
     * C = A B for A (m x k) and B (k x n), row-major Float32Arrays (or their
     * transposes with transposeA / transposeB), then + bias (n) and an
     * activation. Returns C (m x n), in `out` if given.
     */
    matmul(a, b, m, k, n, opts) {
        const what = "matmul";
        opts = check.options(opts, [...COMMON, "bias", "activation", "negativeSlope",
            "transposeA", "transposeB"], what);
        check.int(m, "m", what);
        check.int(k, "k", what);
        check.int(n, "n", what);
        const ta = opts.transposeA === undefined ? false : check.bool(opts.transposeA, "transposeA", what);
        const tb = opts.transposeB === undefined ? false : check.bool(opts.transposeB, "transposeB", what);
        check.elementCount([m, k], "a", what);
        check.elementCount([k, n], "b", what);
        check.elementCount([m, n], "the output", what);
        check.floatsOfLength(a, m * k, "a", what, ta ? `[${k}, ${m}]` : `[${m}, ${k}]`);
        const packed = b instanceof PackedMatrix;
        if (packed) {
            if (b.k !== k || b.n !== n) {
                throw new RangeError(`${what}: b was packed as ${b.k} x ${b.n}, not ${k} x ${n}`);
            }
            if (opts.transposeB !== undefined) {
                throw new TypeError(`${what}: transposeB is given to packMatrix, not with packed b`);
            }
        } else {
            check.floatsOfLength(b, k * n, "b", what, tb ? `[${n}, ${k}]` : `[${k}, ${n}]`);
        }
        const bias = check.optionalFloats(opts.bias, n, "bias", what, `[${n}]`);
        const activation = this._activation(opts, what);
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const out = this._out(opts, m * n, what, `[${m}, ${n}]`);
        return this._callFloats(what, m * n, out, c => {
            const h = this.heap;
            const pa = h.floatsIn(a), pbias = bias ? h.floatsIn(bias) : 0;
            const pb = packed ? b.address(what) : h.floatsIn(b);
            const args = h.args("sb_matmul_args", { path: this.path, mode, max_threads: threads,
                m, n, k, a: pa, a_row: ta ? 1 : k, a_col: ta ? m : 1,
                b: pb, b_row: packed ? 0 : tb ? 1 : n, b_col: packed ? 0 : tb ? k : 1,
                b_packed: packed ? 1 : 0, c, c_row: n, bias: pbias, activation });
            return this.module._sb_matmul(args);
        });
    }

    _activation(opts, what) {
        const name = opts.activation ?? "none";
        check.choice(name, Object.keys(ACTIVATIONS), "activation", what);
        if (name !== "leaky_relu") {
            if (opts.negativeSlope !== undefined) {
                throw new TypeError(`${what}: negativeSlope is for activation "leaky_relu"`);
            }
            return ACTIVATIONS[name];
        }
        const slope = finiteFloat32(opts.negativeSlope ?? LEAKY_RELU_DEFAULT_SLOPE, "negativeSlope", what);
        // The slope's binary32 bits ride in bits 32..63 of the activation code.
        return BigInt.asIntN(64, BigInt(ACTIVATIONS.leaky_relu) | (BigInt(float32Bits(slope)) << 32n));
    }

    /**
     * B (k x n, row-major; with transposeB its n x k transpose) packed once
     * for matmul(a, packed, m, k, n): the weights of a linear layer.
     */
    packMatrix(b, k, n, opts) {
        const what = "packMatrix";
        opts = check.options(opts, ["transposeB", "threads"], what);
        check.int(k, "k", what);
        check.int(n, "n", what);
        check.elementCount([k, n], "b", what);
        const tb = opts.transposeB === undefined ? false : check.bool(opts.transposeB, "transposeB", what);
        check.floatsOfLength(b, k * n, "b", what, tb ? `[${n}, ${k}]` : `[${k}, ${n}]`);
        const threads = this._threads(opts, what);
        this._live(what);
        const bytes = this.module._sb_packed_b_bytes(this.path, k, n) >>> 0;
        if (bytes === 0 && k * n > 0) throw new RangeError(`${what}: ${k} x ${n} is too large to pack`);
        const packed = new PackedMatrix(this.module, bytes, k, n);
        try {
            this._call(what, () => this.module._sb_pack_b(this.path, threads, k, n,
                this.heap.floatsIn(b), tb ? 1 : n, tb ? k : 1, packed.ptr, bytes));
        } catch (error) {
            packed.dispose();
            throw error;
        }
        return packed;
    }

    /** Convolution weights (Cout, C / groups, KH, KW) packed once for conv2d. */
    packConv2dWeight(weight, weightShape, opts) {
        const what = "packConv2dWeight";
        opts = check.options(opts, ["groups"], what);
        const [cout, cg, kh, kw] = check.shape(weightShape, 4, "weightShape", what);
        const groups = check.int(opts.groups ?? 1, "groups", what, { min: 1 });
        if (cout % groups !== 0) {
            throw new RangeError(`${what}: output channels ${cout} must divide by groups ${groups}`);
        }
        check.floatsOfShape(weight, weightShape, "weight", what);
        this._live(what);
        const bytes = this.module._sb_conv2d_packed_bytes(this.path, cout, cg, kh, kw, groups) >>> 0;
        if (bytes === 0 && weight.length > 0) {
            throw new RangeError(`${what}: weights [${weightShape}] are too large to pack`);
        }
        const packed = new PackedConv2dWeight(this.module, bytes, [...weightShape], groups);
        try {
            this._call(what, () => this.module._sb_conv2d_pack(this.path, cout, cg, kh, kw, groups,
                this.heap.floatsIn(weight), packed.ptr, bytes));
        } catch (error) {
            packed.dispose();
            throw error;
        }
        return packed;
    }

    // ---- convolution and pooling --------------------------------------------

    /**
     * 2-D convolution of x (N, C, H, W) with weight (Cout, C / groups, KH, KW),
     * torch's definition; returns { data, shape } with shape (N, Cout, OH, OW).
     */
    conv2d(x, xShape, weight, weightShape, opts) {
        const what = "conv2d";
        opts = check.options(opts, [...COMMON, "bias", "stride", "padding", "dilation", "groups",
            "activation", "negativeSlope"], what);
        const [n, c, h, w] = check.shape(xShape, 4, "xShape", what);
        const packed = weight instanceof PackedConv2dWeight;
        if (packed) {
            if (weightShape === undefined || weightShape === null) weightShape = weight.shape;
            if (String(weightShape) !== String(weight.shape)) {
                throw new RangeError(`${what}: weight was packed with shape [${weight.shape}], not [${weightShape}]`);
            }
            if (opts.groups !== undefined && opts.groups !== weight.groups) {
                throw new RangeError(`${what}: weight was packed for groups=${weight.groups}, not ${opts.groups}`);
            }
        }
        const [cout, cg, kh, kw] = check.shape(weightShape, 4, "weightShape", what);
        const groups = packed ? weight.groups : check.int(opts.groups ?? 1, "groups", what, { min: 1 });
        if (c % groups !== 0 || cout % groups !== 0 || cg * groups !== c) {
            throw new RangeError(`${what}: with groups=${groups}, input channels ${c} and output ` +
                `channels ${cout} must divide by groups and weightShape[1] must be ${c} / ${groups}; ` +
                `got xShape [${xShape}], weightShape [${weightShape}]`);
        }
        const stride = check.pair(opts.stride ?? 1, "stride", what, { min: 1 });
        const dilation = check.pair(opts.dilation ?? 1, "dilation", what, { min: 1 });
        const pads = convPadding(opts.padding ?? 0, stride, dilation, kh, kw, what);
        const [oh, ow] = windows(what, [h, w], pads, [kh, kw], dilation, stride);
        check.floatsOfShape(x, xShape, "x", what);
        if (!packed) check.floatsOfShape(weight, weightShape, "weight", what);
        const bias = check.optionalFloats(opts.bias, cout, "bias", what, `[${cout}]`);
        const activation = this._activation(opts, what);
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const shape = [n, cout, oh, ow];
        const count = check.elementCount(shape, "the output", what);
        const out = this._out(opts, count, what, `[${shape}]`);
        const data = this._callFloats(what, count, out, y => {
            const hp = this.heap;
            const px = hp.floatsIn(x), pbias = bias ? hp.floatsIn(bias) : 0;
            const pw = packed ? weight.address(what) : hp.floatsIn(weight);
            const [pad_top, pad_bottom, pad_left, pad_right] = pads;
            return this.module._sb_conv2d(hp.args("sb_conv2d_args", { path: this.path, mode,
                max_threads: threads, n, c, h, w, cout, kh, kw, groups,
                stride_h: stride[0], stride_w: stride[1], dil_h: dilation[0], dil_w: dilation[1],
                pad_top, pad_bottom, pad_left, pad_right, x: px, weights: pw, packed: packed ? 1 : 0,
                bias: pbias, activation, y }));
        });
        return { data, shape };
    }

    /** Max pooling of x (N, C, H, W), torch's max_pool2d; returns { data, shape }. */
    maxPool2d(x, xShape, opts) {
        const what = "maxPool2d";
        opts = check.options(opts, ["out", "threads", "kernelSize", "stride", "padding",
            "dilation", "ceilMode"], what);
        const [n, c, h, w] = check.shape(xShape, 4, "xShape", what);
        const dilation = check.pair(opts.dilation ?? 1, "dilation", what, { min: 1 });
        const size = [h, w];
        const { kernel, stride, padding, ceil, extent, out } = poolGeometry(what, opts, size, dilation);
        // Ceil mode's last windows reach past the padding: more end padding,
        // which max pooling never takes as a value, gives the same maxima.
        const end = [0, 1].map(i => padding[i] + (ceil ? Math.max(0,
            (out[i] - 1) * stride[i] + extent[i] - (size[i] + 2 * padding[i])) : 0));
        return this._windowed(what, x, xShape, out, opts, (px, y, threads) =>
            this.module._sb_max_pool2d(this.heap.args("sb_max_pool2d_args", { n, c, h, w,
                kh: kernel[0], kw: kernel[1], stride_h: stride[0], stride_w: stride[1],
                dil_h: dilation[0], dil_w: dilation[1], pad_top: padding[0], pad_bottom: end[0],
                pad_left: padding[1], pad_right: end[1], x: px, y, max_threads: threads })));
    }

    /** Average pooling of x (N, C, H, W), torch's avg_pool2d; returns { data, shape }. */
    avgPool2d(x, xShape, opts) {
        const what = "avgPool2d";
        opts = check.options(opts, ["out", "threads", "kernelSize", "stride", "padding",
            "ceilMode", "countIncludePad", "divisorOverride"], what);
        const [, , h, w] = check.shape(xShape, 4, "xShape", what);
        const include = opts.countIncludePad === undefined ? true
            : check.bool(opts.countIncludePad, "countIncludePad", what);
        const divisor = opts.divisorOverride === undefined || opts.divisorOverride === null ? 0
            : check.int(opts.divisorOverride, "divisorOverride", what, { min: 1, max: 2 ** 31 - 1 });
        const { kernel, stride, padding, out } = poolGeometry(what, opts, [h, w]);
        return this._avgPool(what, x, xShape, out, { kh: kernel[0], kw: kernel[1],
            stride_h: stride[0], stride_w: stride[1], pad_top: padding[0], pad_bottom: padding[0],
            pad_left: padding[1], pad_right: padding[1], count_include_pad: include ? 1 : 0,
            divisor_override: divisor }, opts);
    }

    /** torch's adaptive_avg_pool2d to outputSize (an int or [OH, OW]); returns { data, shape }. */
    adaptiveAvgPool2d(x, xShape, outputSize, opts) {
        const what = "adaptiveAvgPool2d";
        opts = check.options(opts, ["out", "threads"], what);
        check.shape(xShape, 4, "xShape", what);
        const out = check.pair(outputSize, "outputSize", what, { min: 1 });
        return this._avgPool(what, x, xShape, out, { adaptive: 1 }, opts);
    }

    _avgPool(what, x, xShape, out, windows, opts) {   // windows: sb_avg_pool2d_args' window fields
        const [n, c, h, w] = xShape;
        return this._windowed(what, x, xShape, out, opts, (px, y, threads) =>
            this.module._sb_avg_pool2d(this.heap.args("sb_avg_pool2d_args", { n, c, h, w,
                oh: out[0], ow: out[1], ...windows, x: px, y, max_threads: threads })));
    }

    // The (N, C, OH, OW) result over x (N, C, H, W): checks x and `out`, then
    // call(px, y, threads) runs the C function on x's copy; {data, shape}.
    _windowed(what, x, xShape, out, opts, call) {
        check.floatsOfShape(x, xShape, "x", what);
        const shape = [xShape[0], xShape[1], out[0], out[1]];
        const count = check.elementCount(shape, "the output", what);
        const threads = this._threads(opts, what);
        const result = this._out(opts, count, what, `[${shape}]`);
        const data = this._callFloats(what, count, result,
            y => call(this.heap.floatsIn(x), y, threads));
        return { data, shape };
    }

    /**
     * Resizing of x (N, C, H, W) to size [OH, OW], torch's interpolate with
     * mode "nearest" or "bilinear" (alignCorners for bilinear); { data, shape }.
     */
    interpolate(x, xShape, opts) {
        const what = "interpolate";
        opts = check.options(opts, ["out", "threads", "size", "mode", "alignCorners"], what);
        const [n, c, h, w] = check.shape(xShape, 4, "xShape", what);
        if (opts.size === undefined) throw new TypeError(`${what}: size is required`);
        const [oh, ow] = check.pair(opts.size, "size", what, { min: 1 });
        const kind = check.choice(opts.mode ?? "nearest", ["nearest", "bilinear"], "mode", what);
        const align = opts.alignCorners === undefined ? false
            : check.bool(opts.alignCorners, "alignCorners", what);
        if (align && kind === "nearest") {
            throw new TypeError(`${what}: alignCorners is only for mode "bilinear"`);
        }
        // torch's source-per-output scale, in binary64, then rounded to float32.
        const scale = (size, outSize) => float32Bits(align ? (outSize > 1 ? (size - 1) / (outSize - 1) : 0)
            : size / outSize);
        return this._windowed(what, x, xShape, [oh, ow], opts, (px, y, threads) =>
            this.module._sb_resize2d(this.heap.args("sb_resize2d_args", { n, c, h, w, oh, ow,
                mode: kind === "bilinear" ? 1 : 0, align_corners: align ? 1 : 0,
                scale_h: scale(h, oh), scale_w: scale(w, ow), x: px, y, max_threads: threads })));
    }

    // ---- elementwise ---------------------------------------------------------

    _unary(what, x, opts, extra = [], paramOf = () => 0) {
        opts = check.options(opts, [...COMMON, ...extra], what);
        check.floats(x, "x", what);
        const param = paramOf(opts);
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const out = this._out(opts, x.length, what);
        return this._callFloats(what, x.length, out, y => {
            const px = this.heap.floatsIn(x);
            return this.module._sb_unary(this.heap.args("sb_unary_args", { path: this.path, mode,
                op: UNARY[what], max_threads: threads, count: x.length, x: px, y, param }));
        });
    }

    exp(x, opts) { return this._unary("exp", x, opts); }
    log(x, opts) { return this._unary("log", x, opts); }
    tanh(x, opts) { return this._unary("tanh", x, opts); }
    erf(x, opts) { return this._unary("erf", x, opts); }
    sigmoid(x, opts) { return this._unary("sigmoid", x, opts); }
    relu(x, opts) { return this._unary("relu", x, opts); }
    relu6(x, opts) { return this._unary("relu6", x, opts); }
    silu(x, opts) { return this._unary("silu", x, opts); }
    hardswish(x, opts) { return this._unary("hardswish", x, opts); }
    hardsigmoid(x, opts) { return this._unary("hardsigmoid", x, opts); }
    sqrt(x, opts) { return this._unary("sqrt", x, opts); }
    softplus(x, opts) { return this._unary("softplus", x, opts); }
    mish(x, opts) { return this._unary("mish", x, opts); }
    sin(x, opts) { return this._unary("sin", x, opts); }
    cos(x, opts) { return this._unary("cos", x, opts); }

    /** torch's leaky_relu: x, or negativeSlope * x below 0 (default slope 0.01). */
    leakyRelu(x, opts) {
        return this._unary("leakyRelu", x, opts, ["negativeSlope"], o => float32Bits(
            finiteFloat32(o.negativeSlope ?? LEAKY_RELU_DEFAULT_SLOPE, "negativeSlope", "leakyRelu")));
    }

    /** torch's elu with alpha (default 1). */
    elu(x, opts) {
        return this._unary("elu", x, opts, ["alpha"], o => float32Bits(
            finiteFloat32(o.alpha ?? 1, "alpha", "elu")));
    }

    /** torch's gelu: approximate "none" (erf, the default) or "tanh". */
    gelu(x, opts) {
        const approximate = opts?.approximate ?? "none";
        check.choice(approximate, ["none", "tanh"], "approximate", "gelu");
        if (approximate === "tanh") {
            const { approximate: _, ...rest } = opts;
            return this._unary("geluTanh", x, rest);
        }
        return this._unary("gelu", x, opts, ["approximate"]);
    }

    _binary(what, a, b, opts) {
        opts = check.options(opts, [...COMMON, "aShape", "bShape"], what);
        check.floats(a, "a", what);
        check.floats(b, "b", what);
        const aShape = opts.aShape === undefined ? [a.length] : check.shape(opts.aShape, undefined, "aShape", what);
        const bShape = opts.bShape === undefined ? [b.length] : check.shape(opts.bShape, undefined, "bShape", what);
        check.floatsOfShape(a, aShape, "a", what);
        check.floatsOfShape(b, bShape, "b", what);
        const shape = broadcastShape(aShape, bShape, what);
        if (shape.length > MAX_DIMS) {
            throw new RangeError(`${what}: at most ${MAX_DIMS} dimensions, got ${shape.length}`);
        }
        const count = check.elementCount(shape, "the output", what);
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const out = this._out(opts, count, what, `[${shape}]`);
        const sa = broadcastStrides(aShape, shape), sb = broadcastStrides(bShape, shape);
        return this._callFloats(what, count, out, y => {
            const pa = this.heap.floatsIn(a), pb = this.heap.floatsIn(b);
            return this.module._sb_binary(this.heap.args("sb_binary_args", { path: this.path, mode,
                op: BINARY[what], max_threads: threads, ndim: shape.length, shape,
                a: pa, a_stride: sa, b: pb, b_stride: sb, y }));
        });
    }

    /** a + b elementwise; with aShape/bShape, numpy broadcasting. */
    add(a, b, opts) { return this._binary("add", a, b, opts); }
    sub(a, b, opts) { return this._binary("sub", a, b, opts); }
    mul(a, b, opts) { return this._binary("mul", a, b, opts); }
    div(a, b, opts) { return this._binary("div", a, b, opts); }
    maximum(a, b, opts) { return this._binary("maximum", a, b, opts); }
    minimum(a, b, opts) { return this._binary("minimum", a, b, opts); }
    pow(a, b, opts) { return this._binary("pow", a, b, opts); }

    // ---- reductions and normalizations -------------------------------------------

    _reduce(what, x, xShape, axis, opts, keep) {
        check.shape(xShape, undefined, "xShape", what);
        check.floatsOfShape(x, xShape, "x", what);
        const rank = xShape.length;
        check.int(axis, "axis", what, { min: -rank, max: rank - 1 });
        const a = axis < 0 ? axis + rank : axis;
        const outer = check.product(xShape.slice(0, a));
        const n = xShape[a];
        const inner = check.product(xShape.slice(a + 1));
        const count = keep ? x.length : outer * inner;
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const out = this._out(opts, count, what);
        return this._callFloats(what, count, out, y => {
            const px = this.heap.floatsIn(x);
            return this.module._sb_reduce(this.heap.args("sb_reduce_args", { path: this.path, mode,
                op: REDUCE[what], max_threads: threads, outer, n, inner, x: px, y }));
        });
    }

    /** The sum along one axis of x (shape xShape); the result drops that axis. */
    sum(x, xShape, axis, opts) {
        return this._reduce("sum", x, xShape, axis, check.options(opts, COMMON, "sum"), false);
    }

    mean(x, xShape, axis, opts) {
        return this._reduce("mean", x, xShape, axis, check.options(opts, COMMON, "mean"), false);
    }

    /** torch's softmax along `axis` (default -1); the result has x's shape. */
    softmax(x, xShape, axis = -1, opts) {
        return this._reduce("softmax", x, xShape, axis, check.options(opts, COMMON, "softmax"), true);
    }

    logSoftmax(x, xShape, axis = -1, opts) {
        return this._reduce("logSoftmax", x, xShape, axis, check.options(opts, COMMON, "logSoftmax"), true);
    }

    /** torch's layer_norm over the last `normalizedDims` axes (default 1), weight and bias optional. */
    layerNorm(x, xShape, opts) {
        const what = "layerNorm";
        opts = check.options(opts, [...COMMON, "normalizedDims", "weight", "bias", "eps"], what);
        check.shape(xShape, undefined, "xShape", what);
        const dims = check.int(opts.normalizedDims ?? 1, "normalizedDims", what,
            { min: 1, max: Math.max(1, xShape.length) });
        if (dims > xShape.length) {
            throw new RangeError(`${what}: normalizedDims ${dims} exceeds the rank of xShape [${xShape}]`);
        }
        check.floatsOfShape(x, xShape, "x", what);
        const normalized = xShape.slice(xShape.length - dims);
        const n = check.product(normalized);
        const outer = x.length / Math.max(n, 1) | 0;
        const weight = check.optionalFloats(opts.weight, n, "weight", what, `[${normalized}]`);
        const bias = check.optionalFloats(opts.bias, n, "bias", what, `[${normalized}]`);
        const eps = float32Bits(finiteFloat32(opts.eps ?? 1e-5, "eps", what));
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const out = this._out(opts, x.length, what, `[${xShape}]`);
        return this._callFloats(what, x.length, out, y => {
            const h = this.heap;
            const px = h.floatsIn(x), pw = weight ? h.floatsIn(weight) : 0, pb = bias ? h.floatsIn(bias) : 0;
            return this.module._sb_reduce(h.args("sb_reduce_args", { path: this.path, mode,
                op: REDUCE.layerNorm, max_threads: threads, outer, n, inner: 1, x: px, y,
                weight: pw, bias: pb, eps }));
        });
    }

    /** Inference batch norm of x (N, C, ...): (x - mean) / sqrt(var + eps) * weight + bias per channel. */
    batchNorm(x, xShape, opts) {
        const what = "batchNorm";
        opts = check.options(opts, [...COMMON, "runningMean", "runningVar", "weight", "bias", "eps"], what);
        const [n, c, spatial] = this._normShape(x, xShape, what);
        const mean = check.floatsOfLength(opts.runningMean, c, "runningMean", what, `[${c}]`);
        const variance = check.floatsOfLength(opts.runningVar, c, "runningVar", what, `[${c}]`);
        return this._norm(what, 0, x, [n, c, spatial, 0], mean, variance, opts);
    }

    /** torch's group_norm of x (N, C, ...) with numGroups groups. */
    groupNorm(x, xShape, numGroups, opts) {
        const what = "groupNorm";
        opts = check.options(opts, [...COMMON, "weight", "bias", "eps"], what);
        const [n, c, spatial] = this._normShape(x, xShape, what);
        check.int(numGroups, "numGroups", what, { min: 1 });
        if (c % numGroups !== 0) {
            throw new RangeError(`${what}: channels ${c} must divide by numGroups ${numGroups}`);
        }
        return this._norm(what, 1, x, [n, c, spatial, numGroups], null, null, opts);
    }

    _normShape(x, xShape, what) {
        check.shape(xShape, undefined, "xShape", what);
        if (xShape.length < 2) throw new RangeError(`${what}: xShape must be (N, C, ...), got [${xShape}]`);
        check.floatsOfShape(x, xShape, "x", what);
        return [xShape[0], xShape[1], check.product(xShape.slice(2))];
    }

    _norm(what, op, x, dims, mean, variance, opts) {
        const c = dims[1];
        const weight = check.optionalFloats(opts.weight, c, "weight", what, `[${c}]`);
        const bias = check.optionalFloats(opts.bias, c, "bias", what, `[${c}]`);
        const eps = float32Bits(finiteFloat32(opts.eps ?? 1e-5, "eps", what));
        const mode = this._mode(opts, what);
        const threads = this._threads(opts, what);
        const out = this._out(opts, x.length, what);
        return this._callFloats(what, x.length, out, y => {
            const h = this.heap;
            const ptr = v => v ? h.floatsIn(v) : 0;
            const [n, c, spatial, groups] = dims;
            return this.module._sb_norm(h.args("sb_norm_args", { path: this.path, mode, op,
                max_threads: threads, n, c, spatial, groups, x: h.floatsIn(x), y, mean: ptr(mean),
                var: ptr(variance), weight: ptr(weight), bias: ptr(bias), eps }));
        });
    }

    // ---- test support ------------------------------------------------------------

    /** `count` portable test values of stream `seed` (docs/test-values.md), nspecial of them special. */
    portableValues(count, seed, nspecial = 0) {
        const what = "portableValues";
        check.int(count, "count", what, { max: 2 ** 30 });
        check.int(seed, "seed", what, { max: 0xFFFFFFFF });
        check.int(nspecial, "nspecial", what, { max: 0xFFFFFFFF });
        return this._callFloats(what, count, null, y => {
            this.module._sb_fill_test_values(y, count, seed, nspecial);
            return 0;
        });
    }
}

// torch's padding of conv2d: an int, [h, w], [top, bottom, left, right],
// "valid" or "same" (stride 1; an odd total puts the extra row/column last).
function convPadding(padding, stride, dilation, kh, kw, what) {
    if (padding === "valid") return [0, 0, 0, 0];
    if (padding === "same") {
        if (stride[0] !== 1 || stride[1] !== 1) {
            throw new RangeError(`${what}: padding "same" needs stride 1 (as in torch), got [${stride}]`);
        }
        const th = dilation[0] * (kh - 1), tw = dilation[1] * (kw - 1);
        return [th >> 1, th - (th >> 1), tw >> 1, tw - (tw >> 1)];
    }
    if (typeof padding == "string") {
        throw new RangeError(`${what}: padding must be an integer, [h, w], [top, bottom, left, right], ` +
            `"valid" or "same", got "${padding}"`);
    }
    if (Array.isArray(padding) && padding.length === 4) {
        return padding.map((p, i) => check.int(p, `padding[${i}]`, what));
    }
    const [ph, pw] = check.pair(padding, "padding", what);
    return [ph, ph, pw, pw];
}

// How many windows fit along each axis (at least 1, else a RangeError with the numbers).
function windows(what, size, pads, kernel, dilation, stride) {
    const out = [0, 1].map(i => Math.floor((size[i] + pads[2 * i] + pads[2 * i + 1] -
        dilation[i] * (kernel[i] - 1) - 1) / stride[i]) + 1);
    if (out[0] < 1 || out[1] < 1) {
        throw new RangeError(`${what}: the output size ${out[0]} x ${out[1]} is below 1 (input ` +
            `${size[0]} x ${size[1]}, padding [${pads}], kernel ${kernel[0]} x ${kernel[1]}, ` +
            `dilation [${dilation}], stride [${stride}])`);
    }
    return out;
}

// The window of maxPool2d and avgPool2d: kernelSize (required), stride
// (default kernelSize), padding (at most half the window: torch's rule) and
// ceilMode, checked; each axis's output size for windows of extent
// dilation * (kernel - 1) + 1, at least 1 (else a RangeError); dilation is
// max pooling's alone (avgPool2d passes none).
function poolGeometry(what, opts, size, dilation = null) {
    if (opts.kernelSize === undefined) throw new TypeError(`${what}: kernelSize is required`);
    const kernel = check.pair(opts.kernelSize, "kernelSize", what, { min: 1 });
    const stride = check.pair(opts.stride ?? kernel, "stride", what, { min: 1 });
    const padding = check.pair(opts.padding ?? 0, "padding", what);
    const ceil = opts.ceilMode === undefined ? false : check.bool(opts.ceilMode, "ceilMode", what);
    for (let i = 0; i < 2; i++) {
        if (2 * padding[i] > kernel[i]) {
            throw new RangeError(`${what}: padding must be at most half of kernelSize, got ` +
                `padding [${padding}] and kernelSize [${kernel}]`);
        }
    }
    const extent = [0, 1].map(i => (dilation ? dilation[i] : 1) * (kernel[i] - 1) + 1);
    const out = [0, 1].map(i => pooledSize(size[i], extent[i], stride[i], padding[i], padding[i], ceil));
    if (out[0] < 1 || out[1] < 1) {
        throw new RangeError(`${what}: the output size ${out[0]} x ${out[1]} is below 1 ` +
            `(input ${size[0]} x ${size[1]}, kernelSize [${kernel}], padding [${padding}]` +
            `${dilation ? `, dilation [${dilation}]` : ""})`);
    }
    return { kernel, stride, padding, ceil, extent, out };
}

// torch's pooled size along one axis (py/samebits/_binding/args.py pooled_size).
function pooledSize(size, k, s, before, after, ceil) {
    const span = size + before + after - k;
    let out = (ceil ? Math.ceil(span / s) : Math.floor(span / s)) + 1;
    if (ceil && (out - 1) * s >= size + before) out -= 1;
    return out;
}

function broadcastShape(a, b, what) {
    const rank = Math.max(a.length, b.length);
    const shape = [];
    for (let i = 0; i < rank; i++) {
        const da = a[a.length - rank + i] ?? 1, db = b[b.length - rank + i] ?? 1;
        if (da !== db && da !== 1 && db !== 1) {
            throw new RangeError(`${what}: shapes [${a}] and [${b}] do not broadcast`);
        }
        shape.push(da === 1 ? db : da);
    }
    return shape;
}

// Element strides of a row-major operand over the broadcast shape (0 where it repeats).
function broadcastStrides(operand, shape) {
    const strides = new Array(shape.length).fill(0);
    let stride = 1;
    for (let i = operand.length - 1; i >= 0; i--) {
        const j = shape.length - operand.length + i;
        strides[j] = operand[i] === 1 && shape[j] !== 1 ? 0 : stride;
        stride *= operand[i];
    }
    return strides;
}
