/* The graph runtime's error message: one per calling thread, set where an
 * error is found, read by the host through sb_last_error(). */
#ifndef SB_GRAPH_ERROR_H
#define SB_GRAPH_ERROR_H

#include <stdarg.h>

/* Sets the message (printf format) and returns status, so that
 * `return sb_fail(SB_ERR_VALUE, "...")` reads as one statement. */
int sb_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int sb_vfail(int status, const char *fmt, va_list ap);
/* Prefixes the current message with text (a node's name, ...). */
void sb_error_prefix(const char *prefix);
void sb_error_clear(void);
const char *sb_error_text(void);

#endif
