// Shared by the benchmark workers: input values and the timing method.
//
// Method (the same as samebits.bench.time_call): two warm-up calls, then
// calls repeated until at least minMs have passed and averaged; the median of
// `reps` such means. Inputs and outputs are allocated before timing starts.

/** n floats uniform in [-1, 1) from a 32-bit xorshift stream: the same
 *  values for every library, no subnormals, no special values. */
export function randomFloats(n, seed) {
  const out = new Float32Array(n);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = (x >>> 8) / 8388608 - 1;
  }
  return out;
}

/** The input of an operator benchmark: uniform in [-4, 4), or in [0.5, 1.5)
 *  for log; the same values for every library. */
export function opInput(op, n) {
  const x = randomFloats(n, 3);
  for (let i = 0; i < n; i++) x[i] = op === "log" ? x[i] * 0.5 + 1 : x[i] * 4;
  return x;
}

/** The inputs of a reference network from the container web/make_models.py
 *  writes (samebits.onnx.suite.pack_feeds): a JSON header line [[name, dtype,
 *  shape], ...], then each array's little-endian bytes. Returns
 *  [{name, dtype, shape, data}] with Float32Array, BigInt64Array or
 *  Int32Array data. */
export function unpackFeeds(bytes) {
  const nl = bytes.indexOf(10);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, nl)));
  let at = nl + 1;
  return header.map(([name, dtype, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const size = dtype === "int64" ? 8 : 4;
    const raw = bytes.slice(at, at + n * size);
    at += n * size;
    const data = dtype === "int64" ? new BigInt64Array(raw.buffer)
      : dtype === "int32" ? new Int32Array(raw.buffer) : new Float32Array(raw.buffer);
    return { name, dtype, shape, data };
  });
}

/** Three outputs of a row-major m x n product, for the cross-library check:
 *  the first, the middle and the last. */
export function probes(c, m, n) {
  return [c[0], c[Math.floor(m / 2) * n + Math.floor(n / 2)], c[m * n - 1]];
}

/** Three values of a network's output, for the cross-library check: the
 *  first, the middle and the last. */
export function outputProbes(y) {
  return [y[0], y[y.length >> 1], y[y.length - 1]];
}

/** The bytes at `url` (a reference network's files: web/make_models.py). */
export async function fetchBytes(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: ${response.status} (run python web/make_models.py)`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Calls `call` (synchronous or returning a promise) for at least ms
 *  milliseconds, untimed: lets the engine tier hot WebAssembly functions up
 *  to its optimising compiler before a whole network is timed. */
export async function warmFor(call, ms) {
  const start = performance.now();
  do {
    const r = call();
    if (r instanceof Promise) await r;
  } while (performance.now() - start < ms);
}

/** Median over opts.reps of the mean milliseconds per call of `call`, which
 *  may be synchronous or return a promise. */
export async function timeCall(call, { warmup = 2, minMs = 80, reps = 3 } = {}) {
  const first = call();                      // the first warm-up call
  const isAsync = first instanceof Promise;  // tells whether to await the others
  if (isAsync) await first;
  for (let i = 1; i < warmup; i++) {
    if (isAsync) await call(); else call();
  }
  const means = [];
  for (let r = 0; r < reps; r++) {
    let calls = 0;
    let elapsed = 0;
    const start = performance.now();
    do {
      if (isAsync) await call(); else call();
      calls++;
      elapsed = performance.now() - start;
    } while (elapsed < minMs);
    means.push(elapsed / calls);
  }
  const sorted = [...means].sort((a, b) => a - b);
  return { ms: sorted[Math.floor(sorted.length / 2)], means };
}
