// ONNX models in the C graph runtime (csrc/graph/, the C API of samebits.h):
// a Model is one sb_session in the module's memory. Every argument is checked
// here first (TypeError for a wrong kind, RangeError for a wrong value, naming
// the method and the argument); the C runtime's own errors come back with its
// message.
import * as check from "./checks.mjs";
import { LAYOUTS } from "./abi.mjs";
import { DTYPES, DTYPE_NAMES, STATUS_ERRORS } from "./codes.mjs";

// The built-in errors a status may become (the others are Errors named as
// the status table says: DecodeError, UnsupportedModelError).
const BUILTIN_ERRORS = { RangeError, TypeError };
const MAX_DIMS = 16;
// The int64 fields of a record (abi.mjs, read from samebits.h): the
// tensors' and the infos' arrays are read and written field by field below.
const fieldCount = name => LAYOUTS[name].reduce((n, [, length]) => n + length, 0);
const TENSOR_FIELDS = fieldCount("sb_tensor_arg");   // dtype, rank, dims[16], data
const IO_FIELDS = fieldCount("sb_io_info");          // name, dtype, rank, dims[16], dim_names[16]
const NODE_FIELDS = fieldCount("sb_node_info");      // name, file_index, label
if (TENSOR_FIELDS !== 3 + MAX_DIMS || IO_FIELDS !== 3 + 2 * MAX_DIMS || NODE_FIELDS !== 3) {
    throw new Error("samebits: abi.mjs's sb_tensor_arg / sb_io_info / sb_node_info are not the " +
        "layouts this file reads");
}

function dtypeName(code) {
    return DTYPE_NAMES[code] ?? (code ? `type ${code}` : "unknown");
}

/** An error of the C runtime as a JavaScript exception with its message. */
function runtimeError(module, status, what) {
    const message = module.UTF8ToString(module._sb_last_error()) || `${what}: status ${status}`;
    const kind = STATUS_ERRORS[status];
    if (kind && !BUILTIN_ERRORS[kind]) {
        const error = new Error(message);
        error.name = kind;
        return error;
    }
    return new (BUILTIN_ERRORS[kind] ?? RangeError)(message);
}

// float16 and bfloat16 (docs/onnx.md): an input of either takes a
// Float32Array (rounded to the type once by the runtime) or a Uint16Array of
// the type's bits; their outputs come back as Float32Array holding the
// values, with dtype "float16" / "bfloat16".
const NARROW = { 10: "float16", 16: "bfloat16" };

function narrowValues(code, bits) {
    const out = new Float32Array(bits.length);
    if (code === 16) {
        const words = new Uint32Array(out.buffer);
        for (let i = 0; i < bits.length; i++) words[i] = bits[i] << 16;
        return out;
    }
    for (let i = 0; i < bits.length; i++) {
        const h = bits[i], sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
        out[i] = e === 0x1f ? (f ? NaN : sign * Infinity)
            : e ? sign * (1 + f / 1024) * 2 ** (e - 15) : sign * f * 2 ** -24;
    }
    return out;
}

function typedArrayCode(data, want) {
    if (NARROW[want]) {
        if (data instanceof Float32Array) return 1;
        if (data instanceof Uint16Array) return want;
    }
    for (const [code, [, Kind]] of Object.entries(DTYPES)) {
        if (data instanceof Kind && (Kind !== Uint8Array || Number(code) === (want === 9 ? 9 : 2))) {
            return Number(code);
        }
    }
    return 0;
}

export class Model {
    /** Use Samebits.loadModel (or samebits.loadModel) rather than this constructor. */
    constructor(owner, bytes, opts) {
        const what = "loadModel";
        this.owner = owner;
        this.module = owner.module;
        this.mode = opts.mode;
        this.threads = opts.threads;
        const heap = owner.heap;
        const m = this.module;
        try {
            const data = heap.alloc(bytes.length);
            new Uint8Array(heap.buffer(), data, bytes.length).set(bytes);
            const out = heap.alloc(8);
            new BigInt64Array(heap.buffer(), out, 1)[0] = 0n;
            // external data files the caller supplies: sb_external_data records
            const files = Object.entries(opts.external ?? {});
            const records = [];
            for (const [location, content] of files) {
                const name = new TextEncoder().encode(location + "\0");
                const namePtr = heap.alloc(name.length);
                new Uint8Array(heap.buffer(), namePtr, name.length).set(name);
                const contentPtr = heap.alloc(content.length);
                new Uint8Array(heap.buffer(), contentPtr, content.length).set(content);
                records.push(namePtr, contentPtr, content.length);
            }
            const external = files.length ? heap.record(records) : 0;
            // the bytes are given: no file, no base_dir
            const args = heap.args("sb_load_args", { data, size: bytes.length, mode: opts.modeCode,
                path: owner.path, max_threads: opts.threads, external_count: files.length, external,
                session: out });
            const status = m._sb_session_load(args);
            if (status !== 0) throw runtimeError(m, status, what);
            this.session = Number(new BigInt64Array(heap.buffer(), out, 1)[0]);
        } finally {
            heap.release();
        }
        /** The graph inputs: [{name, dtype, shape}] (shape entries: a number, a symbolic name, or null). */
        this.inputs = this._ios(0);
        /** The graph outputs, as inputs. */
        this.outputs = this._ios(1);
        this._labels = [];
        for (let i = 0; i < m._sb_session_profile_count(this.session); i++) {
            this._labels.push(m.UTF8ToString(m._sb_session_profile_label(this.session, i)));
        }
        // the nodes left to run; their names and labels are read by the first
        // run with {profile: true} (one call per node, which every load paid
        // before)
        this._nodeCount = m._sb_session_node_count(this.session);
        this._nodes = null;
        this._profile = new Map();
        this._nodeMs = new Array(this._nodeCount).fill(0);
        this._nodeCalls = new Array(this._nodeCount).fill(0);
    }

    // each node left to run: {name, index (its position in the file), op (its
    // label)}; `what` names the call for an error
    _nodeInfos(what) {
        const m = this.module, heap = this.owner.heap;
        const list = [];
        try {
            const info = heap.alloc(NODE_FIELDS * 8);
            for (let k = 0; k < this._nodeCount; k++) {
                const status = m._sb_session_node_info(this.session, k, info);
                if (status !== 0) throw runtimeError(m, status, what);
                const f = new BigInt64Array(heap.buffer(), info, NODE_FIELDS);
                list.push({ name: m.UTF8ToString(Number(f[0])), index: Number(f[1]),
                    op: this._labels[Number(f[2])] });
            }
        } finally {
            heap.release();
        }
        return list;
    }

    _ios(outputs) {
        const m = this.module, heap = this.owner.heap;
        const list = [];
        try {
            const info = heap.alloc(IO_FIELDS * 8);
            for (let i = 0; i < m._sb_session_io_count(this.session, outputs); i++) {
                m._sb_session_io_info(this.session, outputs, i, info);
                const f = new BigInt64Array(heap.buffer(), info, IO_FIELDS);
                const rank = Number(f[2]);
                const shape = rank < 0 ? null : Array.from({ length: rank }, (_, d) => {
                    const size = Number(f[3 + d]), name = Number(f[3 + MAX_DIMS + d]);
                    return size >= 0 ? size : name ? m.UTF8ToString(name) : null;
                });
                list.push({ name: m.UTF8ToString(Number(f[0])), dtype: dtypeName(Number(f[1])),
                    code: Number(f[1]), shape });
            }
        } finally {
            heap.release();
        }
        return list.map(({ name, dtype, code, shape }) =>
            Object.defineProperty({ name, dtype, shape }, "code", { value: code, enumerable: false }));
    }

    _live(what) {
        if (this.session === null) throw new TypeError(`${what}: this model was disposed`);
        this.owner._live(what);
    }

    /**
     * Runs the model: feeds is {name: {data, dims}} with data a typed array
     * (Float32Array for float32, BigInt64Array for int64, Int32Array,
     * Uint8Array for uint8 or bool, ...) and dims its shape. Returns
     * {name: {data, dims, dtype}} for every output, or those in
     * opts.outputs. opts.profile: add this run's time per operator type to
     * `profile`.
     */
    run(feeds, opts) {
        const what = "Model.run";
        this._live(what);
        opts = check.options(opts, ["outputs", "threads", "profile"], what);
        if (feeds === null || typeof feeds != "object" || Array.isArray(feeds)) {
            throw new TypeError(`${what}: feeds must be an object of {name: {data, dims}}`);
        }
        const names = this.inputs.map(i => i.name);
        for (const name of Object.keys(feeds)) {
            if (!names.includes(name)) {
                throw new RangeError(`${what}: '${name}' is not an input of the model (inputs: ${names.join(", ")})`);
            }
        }
        for (const name of names) {
            if (!(name in feeds)) throw new RangeError(`${what}: input '${name}' is missing`);
        }
        const wanted = opts.outputs === undefined ? this.outputs.map(o => o.name) : opts.outputs;
        if (!Array.isArray(wanted)) throw new TypeError(`${what}: outputs must be an array of names`);
        const indices = wanted.map(name => {
            const k = this.outputs.findIndex(o => o.name === name);
            if (k < 0) throw new RangeError(`${what}: '${name}' is not an output of the model`);
            return k;
        });
        const threads = opts.threads === undefined ? this.threads
            : check.int(opts.threads, "threads", what, { min: 1, max: this.owner.threads });
        const profile = opts.profile === undefined ? false : check.bool(opts.profile, "profile", what);
        const checked = this.inputs.map(info => this._feed(info, feeds[info.name], what));
        const m = this.module, heap = this.owner.heap;
        const result = {};
        let outs = 0;
        try {
            const tensors = heap.alloc(Math.max(1, checked.length) * TENSOR_FIELDS * 8);
            checked.forEach(({ code, dims, data }, i) => {
                const ptr = heap.alloc(data.byteLength);
                new Uint8Array(heap.buffer(), ptr, data.byteLength)
                    .set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
                const f = new BigInt64Array(heap.buffer(), tensors + i * TENSOR_FIELDS * 8, TENSOR_FIELDS);
                f.fill(0n);
                f[0] = BigInt(code);
                f[1] = BigInt(dims.length);
                dims.forEach((d, k) => { f[2 + k] = BigInt(d); });
                f[2 + MAX_DIMS] = BigInt(ptr);
            });
            const idx = heap.record(indices.length ? indices : [0]);
            outs = heap.alloc(Math.max(1, indices.length) * TENSOR_FIELDS * 8);
            const count = this._labels.length;
            const ns = profile ? heap.record(new Array(Math.max(1, count)).fill(0)) : 0;
            const calls = profile ? heap.record(new Array(Math.max(1, count)).fill(0)) : 0;
            const nodes = this._nodeCount;
            const nodeNs = profile ? heap.record(new Array(Math.max(1, nodes)).fill(0)) : 0;
            const nodeCalls = profile ? heap.record(new Array(Math.max(1, nodes)).fill(0)) : 0;
            const args = heap.args("sb_run_args", { inputs: tensors, output_count: indices.length,
                output_indices: idx, outputs: outs, profile_ns: ns, profile_calls: calls,
                max_threads: threads, node_ns: nodeNs, node_calls: nodeCalls });
            const status = m._sb_session_run(this.session, args);
            if (status !== 0) {
                outs = 0;
                throw runtimeError(m, status, what);
            }
            wanted.forEach((name, k) => {
                const f = new BigInt64Array(heap.buffer(), outs + k * TENSOR_FIELDS * 8, TENSOR_FIELDS);
                const code = Number(f[0]), rank = Number(f[1]);
                const dims = Array.from({ length: rank }, (_, d) => Number(f[2 + d]));
                const length = check.product(dims);
                if (NARROW[code]) {
                    const bits = new Uint16Array(heap.buffer(), Number(f[2 + MAX_DIMS]), length);
                    result[name] = { data: narrowValues(code, bits), dims, dtype: NARROW[code] };
                    return;
                }
                const [dtype, Kind] = DTYPES[code];
                result[name] = { data: new Kind(heap.buffer(), Number(f[2 + MAX_DIMS]), length).slice(),
                    dims, dtype };
            });
            if (profile) {
                const t = new BigInt64Array(heap.buffer(), ns, count);
                const c = new BigInt64Array(heap.buffer(), calls, count);
                this._labels.forEach((label, i) => {
                    if (c[i] === 0n) return;
                    const entry = this._profile.get(label) ?? { ms: 0, calls: 0 };
                    entry.ms += Number(t[i]) / 1e6;
                    entry.calls += Number(c[i]);
                    this._profile.set(label, entry);
                });
                const nt = new BigInt64Array(heap.buffer(), nodeNs, nodes);
                const nc = new BigInt64Array(heap.buffer(), nodeCalls, nodes);
                for (let k = 0; k < nodes; k++) {
                    this._nodeMs[k] += Number(nt[k]) / 1e6;
                    this._nodeCalls[k] += Number(nc[k]);
                }
            }
        } finally {
            if (outs) {
                for (let k = 0; k < indices.length; k++) {
                    const f = new BigInt64Array(heap.buffer(), outs + k * TENSOR_FIELDS * 8, TENSOR_FIELDS);
                    m._sb_buffer_free(Number(f[2 + MAX_DIMS]));
                }
            }
            heap.release();
        }
        if (profile && this._nodes === null) this._nodes = this._nodeInfos(what);
        return result;
    }

    _feed(info, value, what) {
        const name = `feeds['${info.name}']`;
        if (value === null || typeof value != "object" || !ArrayBuffer.isView(value.data)) {
            throw new TypeError(`${what}: ${name} must be {data: a typed array, dims: [...]}`);
        }
        if (!Array.isArray(value.dims)) throw new TypeError(`${what}: ${name}.dims must be an array`);
        if (value.dims.length > MAX_DIMS) {
            throw new RangeError(`${what}: ${name}.dims has ${value.dims.length} dimensions, at most ${MAX_DIMS}`);
        }
        const dims = value.dims.map((d, k) => check.int(d, `${name}.dims[${k}]`, what));
        check.elementCount(dims, name, what);
        const code = typedArrayCode(value.data, info.code);
        if (code === 0) {
            throw new TypeError(`${what}: ${name}.data is a ${value.data.constructor.name}, which ` +
                `holds no element type the runtime computes with`);
        }
        if (info.code && code !== info.code && !(NARROW[info.code] && code === 1)) {
            throw new TypeError(`${what}: input '${info.name}': the model wants ${info.dtype}, got ` +
                `${dtypeName(code)} (${value.data.constructor.name})`);
        }
        if (value.data.length !== check.product(dims)) {
            throw new RangeError(`${what}: ${name}.data holds ${value.data.length} elements, dims ` +
                `[${dims}] need ${check.product(dims)}`);
        }
        return { code, dims, data: value.data };
    }

    /** Milliseconds and node runs per operator type, added up over runs with {profile: true}. */
    get profile() {
        return Object.fromEntries(this._profile);
    }

    /**
     * Each node's milliseconds and runs over the runs with {profile: true}, in
     * the order the nodes run (nodes that never ran left out): [{name (as in
     * the file, "" when it has none), index (its position in the file), op
     * (a fused node as "Conv+relu"), ms, calls}]. A node with a subgraph (If,
     * Loop, Scan) counts its whole subgraph.
     */
    get nodeProfile() {
        const list = [];
        (this._nodes || []).forEach((node, k) => {
            if (this._nodeCalls[k]) list.push({ ...node, ms: this._nodeMs[k], calls: this._nodeCalls[k] });
        });
        return list;
    }

    /** Forgets what runs with {profile: true} added to profile and nodeProfile. */
    resetProfile() {
        this._profile.clear();
        this._nodeMs.fill(0);
        this._nodeCalls.fill(0);
    }

    /** Frees the session; later calls on it are TypeErrors. */
    dispose() {
        if (this.session === null) return;
        if (this.owner.module !== null) this.module._sb_session_free(this.session);
        this.session = null;
    }
}
