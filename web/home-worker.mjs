// The front page's worker: the npm package with the page's thread count.
// Messages: {type: "init", threads} -> {type: "ready", info};
// {type: "run", m, k, n, a?, b?} -> {type: "result", mode, ms, digest, head}
// per mode, then {type: "done"}; errors -> {type: "error", message}.
import * as samebits from "../js/index.mjs";

let sb = null;

function median(values) {
    const sorted = [...values].sort((x, y) => x - y);
    return sorted[Math.floor(sorted.length / 2)];
}

function run({ m, k, n, a, b }) {
    a = a ?? sb.portableValues(m * k, 1);
    b = b ?? sb.portableValues(k * n, 2);
    // B packed once, as the weights of a layer are; the result is the same.
    const packed = sb.packMatrix(b, k, n);
    const out = new Float32Array(m * n);
    try {
        for (const mode of ["exact", "fast"]) {
            sb.matmul(a, packed, m, k, n, { mode, out });     // warm-up
            const times = [];
            const until = performance.now() + 300;
            do {
                const start = performance.now();
                sb.matmul(a, packed, m, k, n, { mode, out });
                times.push(performance.now() - start);
            } while (times.length < 5 || (performance.now() < until && times.length < 50));
            postMessage({ type: "result", mode, ms: median(times), runs: times.length,
                          digest: samebits.digest(out, { shape: [m, n] }),
                          head: Array.from(out.subarray(0, 4)) });
        }
    } finally {
        packed.dispose();
    }
}

onmessage = async ({ data }) => {
    try {
        if (data.type === "init") {
            sb = await samebits.init({ threads: data.threads });
            postMessage({ type: "ready", info: sb.info() });
        } else if (data.type === "run") {
            run(data);
            postMessage({ type: "done" });
        }
    } catch (error) {
        postMessage({ type: "error", message: String(error?.message ?? error) });
    }
};
