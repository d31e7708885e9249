/* See stdlib.h here: declarations only, resolved against the main module. */
#ifndef SB_FREESTANDING_STRING_H
#define SB_FREESTANDING_STRING_H
#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int value, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);

#endif
