// samebits.testing.digest for Float32Arrays (docs/testing.md): SHA-256 of
// "samebits-digest-v1\n", then "float32 d0,d1,...\n", then the values as
// little-endian bytes, every NaN hashed as 0x7FC00000 unless canonicalNan
// is false. The same digest as the Python function for the same array.
import { Sha256 } from "./sha256.mjs";
import * as check from "./checks.mjs";

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const CHUNK = 16384;   // values converted at a time

export function digest(x, opts) {
    const what = "digest";
    opts = check.options(opts, ["shape", "canonicalNan"], what);
    check.floats(x, "x", what);
    const shape = opts.shape === undefined ? [x.length] : check.shape(opts.shape, undefined, "shape", what);
    check.floatsOfShape(x, shape, "x", what);
    const canonical = opts.canonicalNan === undefined ? true
        : check.bool(opts.canonicalNan, "canonicalNan", what);
    const h = new Sha256();
    h.update(new TextEncoder().encode(`samebits-digest-v1\nfloat32 ${shape.join(",")}\n`));
    const bits = new Uint32Array(x.buffer, x.byteOffset, x.length);
    if (!canonical && littleEndian) return h.update(x).hex();
    const chunk = new Uint32Array(Math.min(CHUNK, x.length));
    const bytes = new DataView(chunk.buffer);
    for (let start = 0; start < x.length; start += CHUNK) {
        const n = Math.min(CHUNK, x.length - start);
        for (let i = 0; i < n; i++) {
            let b = bits[start + i];
            if (canonical && (b & 0x7FFFFFFF) > 0x7F800000) b = 0x7FC00000;
            bytes.setUint32(4 * i, b, true);
        }
        h.update(new Uint8Array(chunk.buffer, 0, 4 * n));
    }
    return h.hex();
}
