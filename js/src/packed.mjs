// Weights packed once into the module's memory, in the layout the product
// kernels read: a matmul's B (PackedMatrix) or a convolution's weights
// (PackedConv2dWeight). Passing one in place of the array skips copying and
// packing the weights on every call, as inference does with a layer's
// weights; the bits are those of the unpacked call. The memory is freed by
// dispose(), or when the object is garbage-collected.

const registry = typeof FinalizationRegistry == "function"
    ? new FinalizationRegistry(({ module, base }) => module._free(base)) : null;

class Packed {
    constructor(module, bytes, what) {
        this.module = module;
        // 64 spare bytes so that the data can start on a cache line.
        this.base = module._malloc(bytes + 64);
        if (this.base === 0) {
            throw new RangeError(`${what}: out of WebAssembly memory (asked for ${bytes + 64} bytes)`);
        }
        this.ptr = (this.base + 63) & ~63;
        this.bytes = bytes;
        registry?.register(this, { module, base: this.base }, this);
    }

    /** Frees the packed data now; the object cannot be used afterwards. */
    dispose() {
        if (this.base !== 0) {
            registry?.unregister(this);
            this.module._free(this.base);
            this.base = 0;
            this.ptr = 0;
        }
    }

    /** The address, or a TypeError once disposed. */
    address(what) {
        if (this.ptr === 0) throw new TypeError(`${what}: the packed weights were disposed`);
        return this.ptr;
    }
}

/** B (k x n) packed for matmul(a, packed, m, k, n). */
export class PackedMatrix extends Packed {
    constructor(module, bytes, k, n) {
        super(module, bytes, "packMatrix");
        this.k = k;
        this.n = n;
    }
}

/** Convolution weights (Cout, C / groups, KH, KW) packed for conv2d. */
export class PackedConv2dWeight extends Packed {
    constructor(module, bytes, shape, groups) {
        super(module, bytes, "packConv2dWeight");
        this.shape = shape;
        this.groups = groups;
    }
}
