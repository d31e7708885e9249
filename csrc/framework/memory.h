/* Memory for kernel work (memory.c): 64-byte aligned blocks, and the calling
 * thread's reusable workspace. */
#ifndef SB_MEMORY_H
#define SB_MEMORY_H

#include <stddef.h>

void *sb_alloc_aligned(size_t bytes);
void sb_free_aligned(void *p);

/* A 64-byte aligned buffer for one call on the calling thread: reused between
 * calls when small. Release it before the call returns. */
void *sb_workspace_get(size_t bytes);
void sb_workspace_release(void *p);

/* Asks for rows x cols floats at p (rows ld floats apart) to be brought into
 * cache. For an epilogue's residual: its rows lie far apart, where the
 * hardware prefetchers do not look ahead, and asked for before the kernel's
 * last pass over the tile they arrive while it computes. Never changes a
 * value. */
static inline void sb_prefetch_rows(const float *p, ptrdiff_t ld, size_t rows, size_t cols)
{
    if (cols == 0) return;
    for (size_t r = 0; r < rows; ++r, p += ld) {
        for (size_t j = 0; j < cols; j += 16) __builtin_prefetch(p + j);
        __builtin_prefetch(p + cols - 1);   /* the last line of an unaligned row */
    }
}

#endif
