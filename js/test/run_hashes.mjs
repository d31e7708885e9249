// Prints the exact-mode hash lines of the suites under Node, for
// tests/test_js.py and by hand:
//
//   node js/test/run_hashes.mjs [--threads N] [--suites gemm,conv,ops] [--flip-bit B]
//                               [--relaxed-simd auto|on|off]
//
// The first line is "# module: {info()}" (which module ran).
// --flip-bit flips that bit of each suite's first nonempty output before
// hashing (the negative control of py/samebits/hashes.py).
import { parseArgs } from "node:util";
import * as samebits from "../index.mjs";
import { SUITES, header, hashLine } from "../src/hashes.mjs";

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
const flipBit = values["flip-bit"] === undefined ? null : Number(values["flip-bit"]);
for (const suite of values.suites.split(",")) {
    console.log(header(suite));
    console.log(hashLine(sb, suite, { threads, flipBit }));
}
process.exit(0);
