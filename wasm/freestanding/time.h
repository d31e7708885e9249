/* See stdlib.h here: declarations only, resolved against the main module.
 * The layout is that of current emscripten (Pyodide 0.27 and later, 314):
 * 64-bit time_t, so struct timespec is 16 bytes. */
#ifndef SB_FREESTANDING_TIME_H
#define SB_FREESTANDING_TIME_H

typedef long long time_t;
typedef int clockid_t;
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1

int clock_gettime(clockid_t clock, struct timespec *ts);

#endif
