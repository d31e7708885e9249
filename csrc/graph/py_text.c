/* Python-style text (py_text.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/py_text.h"

void sb_py_float_repr(double v, char *buf, size_t size)
{
    if (v != v) { snprintf(buf, size, "nan"); return; }
    if (isinf(v)) { snprintf(buf, size, v > 0 ? "inf" : "-inf"); return; }
    char tmp[64];
    int p = 1;
    for (; p < 17; ++p) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v) break;
    }
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
    const char *s = tmp;
    int neg = *s == '-';
    if (neg) ++s;
    char digits[32];
    int nd = 0;
    for (; *s && *s != 'e'; ++s)
        if (*s >= '0' && *s <= '9') digits[nd++] = *s;
    int exp = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') --nd;
    digits[nd] = 0;
    char out[96];
    size_t at = 0;
    if (neg) out[at++] = '-';
    if (exp >= -4 && exp < 16) {
        if (exp >= 0) {
            for (int i = 0; i <= exp; ++i) out[at++] = i < nd ? digits[i] : '0';
            out[at++] = '.';
            if (nd > exp + 1)
                for (int i = exp + 1; i < nd; ++i) out[at++] = digits[i];
            else
                out[at++] = '0';
        } else {
            out[at++] = '0', out[at++] = '.';
            for (int i = 0; i < -exp - 1; ++i) out[at++] = '0';
            for (int i = 0; i < nd; ++i) out[at++] = digits[i];
        }
        out[at] = 0;
    } else {
        out[at++] = digits[0];
        if (nd > 1) {
            out[at++] = '.';
            for (int i = 1; i < nd; ++i) out[at++] = digits[i];
        }
        snprintf(out + at, sizeof out - at, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
    snprintf(buf, size, "%s", out);
}

const char *sb_py_tuple_text(const int64_t *v, int n, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < n && at < size; ++i)
        at += (size_t)snprintf(buf + at, size - at, i ? ", %lld" : "%lld", (long long)v[i]);
    if (at < size) snprintf(buf + at, size - at, n == 1 ? ",)" : ")");
    return buf;
}

const char *sb_py_list_text(const int64_t *v, size_t n, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < n && at < size; ++i)
        at += (size_t)snprintf(buf + at, size - at, i ? ", %lld" : "%lld", (long long)v[i]);
    if (at < size) snprintf(buf + at, size - at, "]");
    return buf;
}

size_t sb_py_str_repr(const uint8_t *s, size_t len, char *buf, size_t size)
{
    int sq = memchr(s, '\'', len) != NULL, dq = memchr(s, '"', len) != NULL;
    char q = sq && !dq ? '"' : '\'';
    size_t at = 0;
    if (size < 8) { if (size) buf[0] = 0; return 0; }
    buf[at++] = q;
    for (size_t i = 0; i < len && at + 6 < size; ++i) {
        unsigned char c = s[i];
        if (c == '\\' || c == (unsigned char)q) buf[at++] = '\\', buf[at++] = (char)c;
        else if (c == '\n') buf[at++] = '\\', buf[at++] = 'n';
        else if (c == '\t') buf[at++] = '\\', buf[at++] = 't';
        else if (c == '\r') buf[at++] = '\\', buf[at++] = 'r';
        else if (c < 0x20 || c == 0x7F) at += (size_t)snprintf(buf + at, size - at, "\\x%02x", c);
        else buf[at++] = (char)c;
    }
    buf[at++] = q;
    buf[at] = 0;
    return at;
}

const char *sb_py_cstr_repr(const char *s, char *buf, size_t size)
{
    sb_py_str_repr((const uint8_t *)s, strlen(s), buf, size);
    return buf;
}
