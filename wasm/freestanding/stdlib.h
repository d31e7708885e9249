/* The few C library declarations samebits needs, for the relaxed-SIMD side
 * module built with clang -ffreestanding (wasm/build.sh). There is no libc in
 * that module: these functions are imported from the main module that loads
 * it (Pyodide's, which exports all of emscripten's libc). */
#ifndef SB_FREESTANDING_STDLIB_H
#define SB_FREESTANDING_STDLIB_H
#include <stddef.h>

void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *p, size_t size);
void free(void *p);
void abort(void) __attribute__((noreturn));
char *getenv(const char *name);

#endif
