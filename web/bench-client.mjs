// The page side of the benchmark workers (bench.mjs, js-bench.mjs): a
// worker answering one request at a time.

/**
 * Starts worker `url` (`type` "module" or "classic") for library `lib`.
 * Returns {worker, send}: send(message) resolves on the worker's "ready" or
 * "shapeDone" and rejects on "error"; every other message goes to onData.
 */
export function startWorker(lib, url, type, onData) {
  const worker = new Worker(new URL(url, location.href), { type });
  let pending = null;
  worker.onmessage = ({ data }) => {
    if (data.type === "ready" || data.type === "shapeDone") pending.resolve(data);
    else if (data.type === "error") pending.reject(new Error(`${lib}: ${data.message}`));
    else onData(data);
  };
  worker.onerror = (e) => pending && pending.reject(new Error(`${lib} worker: ${e.message}`));
  const send = (message) => new Promise((resolve, reject) => {
    pending = { resolve, reject };
    worker.postMessage(message);
  });
  return { worker, send };
}
