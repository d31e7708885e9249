/* The floating-point environment kernels run in (fpenv.c): round to nearest,
 * no flush-to-zero, no denormals-are-zero. Every thread that runs kernel
 * work enters it first and leaves it after, restoring the caller's. */
#ifndef SB_FPENV_H
#define SB_FPENV_H

#include <stdint.h>

typedef struct { uint64_t saved; } sb_fpenv;
void sb_fpenv_enter(sb_fpenv *env);
void sb_fpenv_leave(const sb_fpenv *env);

#endif
