/* The exact-mode definition, literally: one accumulator per output, from +0,
 * increasing p, each product and each sum rounded on its own (this file is
 * compiled with -ffp-contract=off), every NaN stored as 0x7FC00000. */
#include <string.h>
#include "samebits.h"
#include "sb_internal.h"

int sb_sgemm_naive(size_t m, size_t n, size_t k,
                   const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                   const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                   float *c, ptrdiff_t ldc)
{
    if ((m && n && !c) || (m && n && k && (!a || !b))) return SB_ERR_ARGUMENT;
    sb_fpenv env;
    sb_fpenv_enter(&env);
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
            volatile float acc = 0.0f;  /* volatile: no reassociation, no contraction */
            for (size_t p = 0; p < k; ++p) {
                float prod = a[(ptrdiff_t)i * a_row + (ptrdiff_t)p * a_col] *
                             b[(ptrdiff_t)p * b_row + (ptrdiff_t)j * b_col];
                acc = acc + prod;
            }
            float result = acc;
            uint32_t bits;
            memcpy(&bits, &result, sizeof bits);
            if ((bits & 0x7fffffffu) > 0x7f800000u) bits = 0x7fc00000u;
            memcpy(&c[(ptrdiff_t)i * ldc + (ptrdiff_t)j], &bits, sizeof bits);
        }
    }
    sb_fpenv_leave(&env);
    return SB_OK;
}
