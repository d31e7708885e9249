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

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
static void *kept;
static size_t kept_size;
static int kept_in_use;
#define KEPT kept
#define KEPT_SIZE kept_size
#define KEPT_IN_USE kept_in_use
static void remember_for_thread_exit(void) {}
#else
#include <pthread.h>
static _Thread_local void *kept;
static _Thread_local size_t kept_size;
static _Thread_local int kept_in_use;
#define KEPT kept
#define KEPT_SIZE kept_size
#define KEPT_IN_USE kept_in_use

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* The destructor gets the thread's buffer as its value. */
static void free_at_thread_exit(void *buffer) { sb_free_aligned(buffer); }
static void make_exit_key(void) { pthread_key_create(&exit_key, free_at_thread_exit); }

static void remember_for_thread_exit(void)
{
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, KEPT);
}
#endif

void *sb_workspace_get(size_t bytes)
{
    if (bytes > WORKSPACE_KEEP || KEPT_IN_USE) return sb_alloc_aligned(bytes);
    if (KEPT_SIZE < bytes) {
        void *bigger = sb_alloc_aligned(bytes);
        if (!bigger) return NULL;
        sb_free_aligned(KEPT);
        KEPT = bigger;
        KEPT_SIZE = bytes;
        remember_for_thread_exit();
    }
    KEPT_IN_USE = 1;
    return KEPT;
}

void sb_workspace_release(void *p)
{
    if (!p) return;
    if (p == KEPT) {
        KEPT_IN_USE = 0;
        return;
    }
    sb_free_aligned(p);
}
