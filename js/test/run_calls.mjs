// Runs calls of the package's API described as JSON, for tests/test_js.py,
// which makes the same calls through the Python package and compares.
//
//   node js/test/run_calls.mjs CALLS.json [PACKAGE]   -> JSON on stdout
//
// CALLS.json: {"init": {init's options}, "calls": [{"name", "fn", "args",
// "values"?}]}. In args, an object {"portableValues": [count, seed, nspecial]}
// stands for that Float32Array (docs/test-values.md), at any depth;
// {"packMatrix": [...]} and {"packConv2dWeight": [...]} for the packed
// weights those methods make of their (resolved) arguments, and
// {"disposed": {...}} for such weights already disposed. Each
// result is the digest of the returned array (with its shape for NCHW
// results; with "values": true also its bytes, base64), or the error's class
// and message.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [file, pkg] = process.argv.slice(2);
// PACKAGE: a package name ("samebits", as installed) or a path to index.mjs.
const target = pkg === undefined ? new URL("../index.mjs", import.meta.url).href
    : pkg.startsWith("/") || pkg.startsWith(".") ? pathToFileURL(pkg).href : pkg;
const samebits = await import(target);
const spec = JSON.parse(readFileSync(file, "utf8"));
const sb = await samebits.init(spec.init ?? {});

function resolve(value) {
    if (Array.isArray(value)) return value.map(resolve);
    if (value !== null && typeof value == "object") {
        if (Array.isArray(value.portableValues)) return sb.portableValues(...value.portableValues);
        for (const pack of ["packMatrix", "packConv2dWeight"]) {
            if (Array.isArray(value[pack])) return sb[pack](...resolve(value[pack]));
        }
        if (value.disposed) {
            const packed = resolve(value.disposed);
            packed.dispose();
            return packed;
        }
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
    }
    return value;
}

const results = {};
for (const call of spec.calls) {
    try {
        const out = sb[call.fn](...resolve(call.args));
        const data = out instanceof Float32Array ? out : out.data;
        results[call.name] = out instanceof Float32Array
            ? { digest: samebits.digest(out), length: out.length }
            : { digest: samebits.digest(out.data, { shape: out.shape }), shape: out.shape };
        if (call.values) {
            results[call.name].base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
                .toString("base64");
        }
    } catch (error) {
        results[call.name] = { error: `${error.constructor.name}: ${error.message}` };
    }
}
results["#info"] = sb.info();
process.stdout.write(JSON.stringify(results));
process.exit(0);
