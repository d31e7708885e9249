// Put before emscripten 3.1.6's ES module output by js/build.sh. Under Node
// that output calls require() and reads __dirname, which ES modules lack;
// this gives them both. In a browser or worker the branches never run.
const samebitsOnNode = typeof process == "object" && typeof process.versions == "object" &&
    typeof process.versions.node == "string";
const require = samebitsOnNode ?
    (await import("node:module")).createRequire(import.meta.url) : undefined;
const __dirname = samebitsOnNode ?
    require("node:path").dirname(require("node:url").fileURLToPath(import.meta.url)) : "";
