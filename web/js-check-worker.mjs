// Runs the hash suites with the npm package in a module worker (so the
// page stays responsive) and posts each line to js-check.mjs.
import * as samebits from "../js/index.mjs";
import { header, hashLine } from "../js/src/hashes.mjs";

onmessage = async ({ data: { threads, suites } }) => {
    try {
        const sb = await samebits.init({ threads });
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
