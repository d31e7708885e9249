// Prints the exact-mode hash lines of the suites under Node, for
// tests/test_js.py and by hand:
//
//   node js/test/run_hashes.mjs [--threads N] [--suites gemm,conv,ops] [--flip-bit B]
//                               [--relaxed-simd auto|on|off]
//
// The first line is "# module: {info()}" (which module ran).
// --flip-bit flips that bit of the suite's first nonempty output before
// hashing (the negative control of py/samebits/hashes.py).
import { parseArgs } from "node:util";
import * as samebits from "../index.mjs";
import { SUITES, header, formatLine, suiteOutputs } from "../src/hashes.mjs";
import { Sha256 } from "../src/sha256.mjs";

const { values } = parseArgs({ options: {
    threads: { type: "string", default: "1" },
    suites: { type: "string", default: SUITES.join(",") },
    "flip-bit": { type: "string" },
    "relaxed-simd": { type: "string", default: "auto" },
} });
const threads = Number(values.threads);
const relaxedSimd = { auto: undefined, on: true, off: false }[values["relaxed-simd"]];
const sb = await samebits.init({ threads, relaxedSimd });
console.log(`# module: ${JSON.stringify(sb.info())}`);
let flip = values["flip-bit"] === undefined ? null : Number(values["flip-bit"]);
for (const suite of values.suites.split(",")) {
    console.log(header(suite));
    const h = new Sha256();
    for (const out of suiteOutputs(sb, suite, "exact", threads)) {
        let bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
        if (flip !== null && bytes.length > 0) {
            bytes = bytes.slice();
            bytes[Math.floor(flip / 8) % bytes.length] ^= 1 << (flip % 8);
            flip = null;
        }
        h.update(bytes);
    }
    console.log(formatLine(suite, "exact", sb.pathName, threads, h.hex()));
}
process.exit(0);
