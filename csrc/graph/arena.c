/* The bump allocator (arena.h): a list of blocks, newest first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "graph/arena.h"

#define BLOCK_BYTES ((size_t)64 << 10)

struct sb_arena_block {
    sb_arena_block *next;
    size_t used, capacity;
    _Alignas(16) unsigned char data[];
};

void *sb_arena_alloc(sb_arena_block **arena, size_t count, size_t size)
{
    if (size && count > (SIZE_MAX / 2) / size) return NULL;
    size_t bytes = (count * size + 15) & ~(size_t)15;
    if (bytes == 0) bytes = 16;
    sb_arena_block *b = *arena;
    if (!b || b->capacity - b->used < bytes) {
        size_t capacity = bytes > BLOCK_BYTES ? bytes : BLOCK_BYTES;
        if (capacity > SIZE_MAX - sizeof(sb_arena_block)) return NULL;
        sb_arena_block *fresh = malloc(sizeof(sb_arena_block) + capacity);
        if (!fresh) return NULL;
        fresh->used = 0;
        fresh->capacity = capacity;
        if (b && bytes > BLOCK_BYTES) {
            /* a large one goes behind the current block, which keeps serving */
            fresh->next = b->next;
            b->next = fresh;
            fresh->used = bytes;
            memset(fresh->data, 0, bytes);
            return fresh->data;
        }
        fresh->next = b;
        *arena = b = fresh;
    }
    void *p = b->data + b->used;
    b->used += bytes;
    memset(p, 0, bytes);
    return p;
}

char *sb_arena_strdup(sb_arena_block **arena, const char *text, size_t length)
{
    char *s = sb_arena_alloc(arena, length + 1, 1);
    if (!s) return NULL;
    if (length) memcpy(s, text, length);
    s[length] = 0;
    return s;
}

void sb_arena_free(sb_arena_block *arena)
{
    while (arena) {
        sb_arena_block *next = arena->next;
        free(arena);
        arena = next;
    }
}
