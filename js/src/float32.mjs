// binary32 bit patterns of JavaScript numbers (round to nearest even, as C's
// and numpy's float32 conversion).
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function float32Bits(value) {
    f32[0] = value;
    return u32[0];
}

/** A finite number that float32 holds finitely after rounding, else RangeError naming it. */
export function finiteFloat32(value, name, what) {
    if (typeof value != "number") {
        throw new TypeError(`${what}: ${name} must be a number, got ${typeof value}`);
    }
    if (Number.isNaN(value) || !Number.isFinite(Math.fround(value))) {
        throw new RangeError(`${what}: ${name} must be a finite float32 value, got ${value}`);
    }
    return value;
}
