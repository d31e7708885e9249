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

#endif
