/* Memory for kernel work (memory.h): aligned blocks, and each calling
 * thread's reusable workspace.
 *
 * Allocating and freeing ~100 KiB on every call made small products pay for
 * fresh pages each time (the allocator gives the memory back, and a page fault
 * in a VM costs microseconds). Each calling thread therefore keeps one
 * buffer of up to WORKSPACE_KEEP bytes between calls; larger requests, whose
 * compute dwarfs the page faults, are allocated and freed per call. 64 MiB
 * covers the packed B of a 2048 x 4096 operand and a convolution's gathered
 * patches (ResNet-50's stem: 7 MiB), which faulted in ~1800 fresh pages on
 * every call at the old 4 MiB limit. */
#include <stdint.h>
#include <stdlib.h>
#include "framework/memory.h"

/* Over-allocate and align by hand: plain malloc is all a wasm side module
 * is sure to import from its host. */
void *sb_alloc_aligned(size_t bytes)
{
    if (bytes > (size_t)-1 - 64 - sizeof(void *)) return NULL;
    unsigned char *raw = malloc(bytes + 64 + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t start = (uintptr_t)(raw + sizeof(void *));
    unsigned char *aligned = (unsigned char *)((start + 63) & ~(uintptr_t)63);
    ((void **)aligned)[-1] = raw;
    return aligned;
}

void sb_free_aligned(void *p)
{
    if (p) free(((void **)p)[-1]);
}

#define WORKSPACE_KEEP ((size_t)64 << 20)

/* Three kept buffers per thread: a convolution holds its packed weights in
 * one and its padded input in another while the driver takes the third for
 * the products. */
#define KEPT_SLOTS 3

/* Pyodide loads only modules built without threads; Windows builds (untested,
 * CMakeLists.txt) have no pthreads. Both run serially. */
#if (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)) || defined(_WIN32)
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
