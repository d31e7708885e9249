/* What writing memory the other core has just read costs: thread A writes a
 * buffer, thread B reads it (or A reads it itself), in turns, and A's write
 * time is reported. On a 2-vCPU Zen 4 VM (2026-12-06, built as below) 600 KB
 * took 42 us to write when only A had read it and 276-279 us when B had:
 * 24 ns more per 64-byte line (runs built with -march=native: 6 against
 * 66-280 us, 6-25 ns more), the cost that one-chunk-per-claim scheduling
 * paid at chunk boundaries (csrc/framework/threads.c).
 *
 *   cc -O2 -pthread bench/cache_line_handoff.c -o /tmp/handoff
 *   /tmp/handoff KB      (default 600)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 2000

static float *buf;
static size_t n;
static atomic_int turn;
static int other_reads;
static volatile float sink;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void read_all(void)
{
    float s = 0;
    for (size_t i = 0; i < n; i += 16) s += buf[i];   /* one float per line */
    sink = s;
}

static void *reader(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; ++r) {
        while (atomic_load(&turn) != 2 * r - 1) {}
        if (other_reads) read_all();
        atomic_store(&turn, 2 * r);
    }
    return NULL;
}

static double write_ns(int cross)
{
    other_reads = cross;
    atomic_store(&turn, 0);
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    double total = 0;
    for (int r = 1; r <= ROUNDS; ++r) {
        double t0 = now_ns();
        for (size_t i = 0; i < n; ++i) buf[i] = (float)r;
        total += now_ns() - t0;
        if (!cross) read_all();
        atomic_store(&turn, 2 * r - 1);
        while (atomic_load(&turn) != 2 * r) {}
    }
    pthread_join(t, NULL);
    return total / ROUNDS;
}

int main(int argc, char **argv)
{
    size_t kb = argc > 1 ? (size_t)atol(argv[1]) : 600;
    n = kb * 1024 / sizeof(float);
    buf = aligned_alloc(64, n * sizeof(float));
    if (!buf || n == 0) return 1;
    memset(buf, 0, n * sizeof(float));
    double local = write_ns(0), handed = write_ns(1);
    printf("%zu KB: write after own read %.1f us, after the other thread's read %.1f us "
           "(%.1f ns more per line)\n", kb, local / 1e3, handed / 1e3,
           (handed - local) / (double)(n / 16));
    return 0;
}
