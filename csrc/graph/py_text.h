/* Python-style text for the graph runtime's error messages, which read as
 * the Python runner's did (tests compare them): written once here. */
#ifndef SB_GRAPH_PY_TEXT_H
#define SB_GRAPH_PY_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* repr() of a Python float: the shortest digits that read back, fixed
 * notation for exponents -4 to 15, else scientific ("1e-05", "inf"). */
void sb_py_float_repr(double v, char *buf, size_t size);

/* Python's text of a tuple of ints, "(2, 3)", "(5,)", "()", and of a list,
 * "[1, 1]". Both return buf. */
const char *sb_py_tuple_text(const int64_t *v, int n, char *buf, size_t size);
const char *sb_py_list_text(const int64_t *v, size_t n, char *buf, size_t size);

/* Python's repr of a str of len bytes (ASCII escapes; other bytes as they
 * are), quoted as Python quotes it: its length. sb_py_cstr_repr: the same
 * for a NUL-terminated string, returning buf. */
size_t sb_py_str_repr(const uint8_t *s, size_t len, char *buf, size_t size);
const char *sb_py_cstr_repr(const char *s, char *buf, size_t size);

#endif
