// The models hash suite through the npm package's loadModel: a network's
// outputs hashed as samebits.onnx.suite.output_digest does (SHA-256 over
// the outputs in graph order, float32 and int64 as little-endian bytes,
// other integer types as int64), and its inputs read from suite.pack_feeds's
// container (one JSON header line, then each array's bytes).
import { Sha256 } from "./sha256.mjs";

/** {name: {data, dims}} from a feeds container (a Uint8Array). */
export function unpackFeeds(bytes) {
    const end = bytes.indexOf(10);
    if (end < 0) throw new RangeError("unpackFeeds: no header line");
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, end)));
    let at = end + 1;
    const feeds = {};
    for (const [name, dtype, dims] of header) {
        const Kind = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array }[dtype];
        if (!Kind) throw new RangeError(`unpackFeeds: '${name}' has dtype ${dtype}`);
        const count = dims.reduce((a, b) => a * b, 1);
        const size = count * Kind.BYTES_PER_ELEMENT;
        if (at + size > bytes.length) throw new RangeError(`unpackFeeds: '${name}' is truncated`);
        feeds[name] = { data: new Kind(bytes.slice(at, at + size).buffer), dims };
        at += size;
    }
    return feeds;
}

/** The suite's digest of a run's outputs (in the order the model declares them). */
export function outputDigest(model, outputs) {
    const h = new Sha256();
    for (const { name } of model.outputs) {
        const { data, dtype } = outputs[name];
        if (dtype === "float32" || dtype === "int64") {
            h.update(data);
        } else {
            h.update(BigInt64Array.from(data, v => BigInt(v)));
        }
    }
    return h.hex();
}

/** One suite line, as samebits.onnx.suite.format_line writes it. */
export function modelsLine(network, mode, path, threads, digest) {
    return `models ${network} ${mode.padEnd(5)} ${path.padEnd(6)} threads=${String(threads).padEnd(3)} ` +
        `sha256=${digest}`;
}
