// Runs the hash suites with the npm package in a module worker (so the
// page stays responsive) and posts each line to js-check.mjs.
import * as samebits from "../js/index.mjs";
import { header, hashLine } from "../js/src/hashes.mjs";
import { unpackFeeds, outputDigest, modelsLine } from "../js/src/models.mjs";

async function bytesOf(url) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
}

// The models suite through loadModel: each network of models/ (web/make_models.py).
async function modelLines(sb, models, threads) {
    for (const network of models) {
        const model = sb.loadModel(await bytesOf(`out/models/${network}.onnx`), { mode: "exact" });
        const feeds = unpackFeeds(await bytesOf(`out/models/${network}.feeds`));
        const start = performance.now();
        const outputs = model.run(feeds);
        const seconds = (performance.now() - start) / 1000;
        const digest = outputDigest(model, outputs);
        postMessage({ model: network, line: modelsLine(network, "exact", sb.info().path, threads, digest),
            digest, seconds, threadsUsed: sb.threads });
        model.dispose();
    }
}

// A chain of Adds (?chain=URL of the model, its input "x"): the median time
// per node over `runs` runs, after one run that plans.
async function chainCost(sb, url, nodes, runs) {
    const model = sb.loadModel(await bytesOf(url), { mode: "exact", threads: 1 });
    const x = { x: { data: new Float32Array(16).fill(1), dims: [16] } };
    model.run(x);
    const times = [];
    for (let r = 0; r < runs; r++) {
        const start = performance.now();
        model.run(x, { threads: 1 });
        times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    model.dispose();
    return { usPerNode: times[times.length >> 1] * 1000 / nodes, runs };
}

onmessage = async ({ data: { threads, suites, models, chain } }) => {
    try {
        const sb = await samebits.init({ threads });
        await modelLines(sb, models ?? [], threads);
        if (chain) postMessage({ chain: await chainCost(sb, chain.url, chain.nodes, chain.runs) });
        for (const suite of suites) {
            const start = performance.now();
            const line = hashLine(sb, suite);
            postMessage({ suite, header: header(suite), line, digest: line.split("sha256=")[1],
                seconds: (performance.now() - start) / 1000, threadsUsed: sb.threads });
        }
        postMessage({ done: true, info: sb.info() });
    } catch (error) {
        postMessage({ error: String(error?.stack ?? error) });
    }
};
