/* See stdlib.h here: declarations only, resolved against the main module. */
#ifndef SB_FREESTANDING_STDIO_H
#define SB_FREESTANDING_STDIO_H
#include <stddef.h>

int snprintf(char *restrict dst, size_t size, const char *restrict format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
