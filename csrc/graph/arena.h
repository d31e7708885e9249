/* A bump allocator: many small allocations freed together (a parsed model,
 * a plan's tables). Blocks are zeroed and 16-byte aligned. */
#ifndef SB_GRAPH_ARENA_H
#define SB_GRAPH_ARENA_H

#include <stddef.h>

typedef struct sb_arena_block sb_arena_block;

/* `count` elements of `size` bytes from *arena (a null *arena starts one);
 * null when it overflows or memory runs out. */
void *sb_arena_alloc(sb_arena_block **arena, size_t count, size_t size);
char *sb_arena_strdup(sb_arena_block **arena, const char *text, size_t length);
void sb_arena_free(sb_arena_block *arena);

#endif
