/* Per-thread workspace for one call's packed B and scratch.
 *
 * Allocating and freeing ~100 KiB on every call made small products pay for
 * fresh pages each time (the allocator gives the memory back, and a page fault
 * in a VM costs microseconds). Each calling thread therefore keeps one
 * buffer of up to WORKSPACE_KEEP bytes between calls; larger requests, whose
 * compute dwarfs the page faults, are allocated and freed per call. 64 MiB
 * covers the packed B of a 2048 x 4096 operand and a convolution's gathered
 * patches (ResNet-50's stem: 7 MiB), which faulted in ~1800 fresh pages on
 * every call at the old 4 MiB limit. */
#include <stdlib.h>
#include "sb_internal.h"

#define WORKSPACE_KEEP ((size_t)64 << 20)

/* Two kept buffers per thread: a convolution holds its patch matrix in one
 * while the matrix product it calls takes the other. */
#define KEPT_SLOTS 2

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
static void *kept[KEPT_SLOTS];
static size_t kept_size[KEPT_SLOTS];
static int kept_in_use[KEPT_SLOTS];
static void remember_for_thread_exit(int slot) { (void)slot; }
#else
#include <pthread.h>
static _Thread_local void *kept[KEPT_SLOTS];
static _Thread_local size_t kept_size[KEPT_SLOTS];
static _Thread_local int kept_in_use[KEPT_SLOTS];

static pthread_key_t exit_keys[KEPT_SLOTS];
static pthread_once_t exit_keys_once = PTHREAD_ONCE_INIT;

/* The destructor gets the thread's buffer as its value. */
static void free_at_thread_exit(void *buffer) { sb_free_aligned(buffer); }

static void make_exit_keys(void)
{
    for (int slot = 0; slot < KEPT_SLOTS; ++slot)
        pthread_key_create(&exit_keys[slot], free_at_thread_exit);
}

static void remember_for_thread_exit(int slot)
{
    pthread_once(&exit_keys_once, make_exit_keys);
    pthread_setspecific(exit_keys[slot], kept[slot]);
}
#endif

void *sb_workspace_get(size_t bytes)
{
    int slot = 0;
    while (slot < KEPT_SLOTS && kept_in_use[slot]) ++slot;
    if (bytes > WORKSPACE_KEEP || slot == KEPT_SLOTS) return sb_alloc_aligned(bytes);
    if (kept_size[slot] < bytes) {
        void *bigger = sb_alloc_aligned(bytes);
        if (!bigger) return NULL;
        sb_free_aligned(kept[slot]);
        kept[slot] = bigger;
        kept_size[slot] = bytes;
        remember_for_thread_exit(slot);
    }
    kept_in_use[slot] = 1;
    return kept[slot];
}

void sb_workspace_release(void *p)
{
    if (!p) return;
    for (int slot = 0; slot < KEPT_SLOTS; ++slot) {
        if (p == kept[slot]) {
            kept_in_use[slot] = 0;
            return;
        }
    }
    sb_free_aligned(p);
}
