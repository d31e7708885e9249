// Reading numpy's .npy format (versions 1 to 3) for the front page:
// little-endian float32 arrays in C order only. Anything else is refused
// with a message saying how to convert it, never cast silently.

/** {shape, data: Float32Array} of a .npy file's bytes; `name` is for messages. */
export function parseNpy(bytes, name = "the file") {
    const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];   // \x93NUMPY
    if (bytes.length < 10 || magic.some((b, i) => bytes[i] !== b)) {
        throw new Error(`${name} is not a .npy file (numpy.save writes them)`);
    }
    const major = bytes[6];
    if (major < 1 || major > 3) throw new Error(`${name}: .npy version ${major} is not known`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const lengthBytes = major === 1 ? 2 : 4;
    const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
    const start = 8 + lengthBytes;
    const header = new TextDecoder(major === 3 ? "utf-8" : "latin1")
        .decode(bytes.subarray(start, start + headerLength));
    const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
    const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
    const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
    if (descr === undefined || fortran === undefined || shapeText === undefined) {
        throw new Error(`${name}: the .npy header could not be read`);
    }
    if (descr !== "<f4" && descr !== "=f4") {
        throw new Error(`${name} holds ${descr}, not little-endian float32: save ` +
                        "a.astype(np.float32) (samebits never converts silently)");
    }
    if (fortran === "True") {
        throw new Error(`${name} is in Fortran order: save np.ascontiguousarray(a)`);
    }
    const shape = shapeText.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
    const count = shape.reduce((p, d) => p * d, 1);
    const offset = start + headerLength;
    if (bytes.length - offset < 4 * count) {
        throw new Error(`${name}: shape (${shape.join(", ")}) needs ${4 * count} bytes of data, ` +
                        `the file has ${bytes.length - offset}`);
    }
    // A copy: the data need not be 4-byte aligned in the file.
    const data = new Float32Array(count);
    new Uint8Array(data.buffer).set(bytes.subarray(offset, offset + 4 * count));
    return { shape, data };
}
