// Moving arrays in and out of the module's memory, and writing the int64
// argument records of the C API (csrc/samebits.h: every sb_*_args struct is
// a run of int64_t fields; abi.mjs has their layouts, read from the header).
import { LAYOUTS } from "./abi.mjs";

export class Heap {
    constructor(module) {
        this.module = module;
        this.blocks = [];
    }

    // The memory's current buffer: it is replaced whenever the memory grows,
    // possibly from another thread, so views are made afresh on every use.
    buffer() {
        const memory = this.module.wasmMemory;
        return memory ? memory.buffer : this.module.HEAPU8.buffer;
    }

    /** A block of `bytes` bytes (16-byte aligned by malloc), freed by release(). */
    alloc(bytes) {
        const ptr = this.module._malloc(Math.max(bytes, 16));
        if (ptr === 0) {
            this.release();
            throw new RangeError(`samebits: out of WebAssembly memory (asked for ${bytes} bytes)`);
        }
        this.blocks.push(ptr);
        return ptr;
    }

    /** Copies a Float32Array in; returns its address. */
    floatsIn(array) {
        const ptr = this.alloc(array.length * 4);
        new Float32Array(this.buffer(), ptr, array.length).set(array);
        return ptr;
    }

    /** A block for `count` floats, left as malloc gives it (the C call writes all of it). */
    floats(count) {
        return this.alloc(count * 4);
    }

    /** Copies `count` floats at `ptr` into `out` (a Float32Array of that length), or a new array. */
    floatsOut(ptr, count, out) {
        const view = new Float32Array(this.buffer(), ptr, count);
        if (out) {
            out.set(view);
            return out;
        }
        return view.slice();
    }

    /** Writes the int64 record `fields` (numbers) and returns its address. */
    record(fields) {
        const ptr = this.alloc(fields.length * 8);
        const view = new BigInt64Array(this.buffer(), ptr, fields.length);
        for (let i = 0; i < fields.length; i++) view[i] = BigInt(fields[i]);
        return ptr;
    }

    /**
     * Writes the record of struct `name` (abi.mjs's LAYOUTS, in the header's
     * field order) from `values`, an object of its fields by name: an array
     * field takes an array (the rest zeros), an absent field is 0. A name the
     * struct lacks is a TypeError, so that no value lands in the wrong field.
     * Returns its address.
     */
    args(name, values) {
        const layout = LAYOUTS[name];
        if (!layout) throw new TypeError(`no argument record ${name} in samebits.h`);
        const known = new Set(layout.map(([field]) => field));
        for (const key of Object.keys(values)) {
            if (!known.has(key)) throw new TypeError(`${name} has no field ${key}`);
        }
        const fields = [];
        for (const [field, length] of layout) {
            if (length === 1) {
                fields.push(values[field] ?? 0);
                continue;
            }
            const v = values[field] ?? [];
            if (v.length > length) throw new RangeError(`${name}.${field}: at most ${length} values`);
            for (let i = 0; i < length; i++) fields.push(v[i] ?? 0);
        }
        return this.record(fields);
    }

    /** Frees every block of this call. */
    release() {
        for (const ptr of this.blocks) this.module._free(ptr);
        this.blocks.length = 0;
    }
}
