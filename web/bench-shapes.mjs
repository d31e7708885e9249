// The products of the browser benchmarks (bench.mjs, js-bench.mjs).
// name -> [m, n, k]: C (m x n) = A (m x k) B (k x n)
export const SHAPES = {
  "sq64": [64, 64, 64], "sq128": [128, 128, 128], "sq256": [256, 256, 256],
  "sq512": [512, 512, 512], "sq1024": [1024, 1024, 1024],
  "bert4096-qkvo": [4096, 768, 768], "bert4096-ffn-up": [4096, 3072, 768],
  "bert4096-ffn-down": [4096, 768, 3072],
  "bert128-qkvo": [128, 768, 768], "bert128-ffn-up": [128, 3072, 768],
  "bert128-ffn-down": [128, 768, 3072],
  "m1": [1, 768, 768], "m32": [32, 768, 768],
};
