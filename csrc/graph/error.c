/* The thread's last error message (error.h). Pyodide's side module and the
 * one-thread npm module have no threads: a plain static is that thread's. */
#include <stdio.h>
#include <string.h>
#include "samebits.h"
#include "graph/error.h"

#define MESSAGE_SIZE 1024

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
static char message[MESSAGE_SIZE];
#else
static _Thread_local char message[MESSAGE_SIZE];
#endif

int sb_vfail(int status, const char *fmt, va_list ap)
{
    vsnprintf(message, sizeof message, fmt, ap);
    return status;
}

int sb_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vfail(status, fmt, ap);
    va_end(ap);
    return status;
}

void sb_error_prefix(const char *prefix)
{
    char old[MESSAGE_SIZE];
    memcpy(old, message, sizeof old);
    snprintf(message, sizeof message, "%s%s", prefix, old);
}

void sb_error_clear(void) { message[0] = 0; }
const char *sb_error_text(void) { return message; }

const char *sb_last_error(void) { return message; }
