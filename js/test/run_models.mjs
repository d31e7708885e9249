// Prints the models suite's lines under Node through loadModel, for
// tests/test_js.py and by hand:
//
//   node js/test/run_models.mjs DIR [--networks a,b] [--threads N] [--mode exact]
//
// DIR holds <network>.onnx and <network>.feeds (web/make_models.py writes them).
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import * as samebits from "../index.mjs";
import { unpackFeeds, outputDigest, modelsLine } from "../src/models.mjs";

const { values, positionals } = parseArgs({ allowPositionals: true, options: {
    networks: { type: "string", default: "" },
    threads: { type: "string", default: "1" },
    mode: { type: "string", default: "exact" },
} });
const dir = positionals[0];
const threads = Number(values.threads);
const sb = await samebits.init({ threads });
console.log(`# module: ${JSON.stringify(sb.info())}`);
const names = values.networks ? values.networks.split(",") :
    JSON.parse(await readFile(`${dir}/models.json`, "utf8")).networks.map(n => n.name);
for (const network of names) {
    const bytes = new Uint8Array(await readFile(`${dir}/${network}.onnx`));
    const feeds = unpackFeeds(new Uint8Array(await readFile(`${dir}/${network}.feeds`)));
    const model = sb.loadModel(bytes, { mode: values.mode, threads });
    const start = performance.now();
    const outputs = model.run(feeds);
    const ms = performance.now() - start;
    console.log(modelsLine(network, values.mode, sb.info().path, threads, outputDigest(model, outputs)) +
        `  # ${ms.toFixed(0)} ms`);
    model.dispose();
}
process.exit(0);
