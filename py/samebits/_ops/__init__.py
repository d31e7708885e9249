"""The operations of the public API, one module per family (products,
convolution, pooling, elementwise, reductions, norms, resize, data movement),
each a thin host over csrc/kernels/ through samebits._binding."""
