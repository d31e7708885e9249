/* The sme path's tile kernels (ukernel_sme.c describes the path), written
 * in assembly because the compiler must not put an Advanced SIMD
 * instruction between entering and leaving streaming mode (hardware
 * without FEAT_SME_FA64 traps on one) and because C code using ZA needs
 * the SME ABI support routines, which Debian 12's libgcc lacks. Each
 * kernel is a private-ZA, non-streaming function as AAPCS64 describes: it
 * saves d8-d15 (entering and leaving streaming mode zeroes the vector
 * registers), commits a caller's lazy ZA save itself (TPIDR2_EL0, as
 * __arm_tpidr2_save does), and enters and leaves streaming mode once per
 * call: once for a run of tiles down one B strip.
 *
 * The tile is 2VL x 2VL floats (VL = the streaming vector length in
 * floats, read at run time: 8 x 8 at 128 bits up to 128 x 128 at 2048),
 * over a packed A strip (element (p, r) at p * 2VL + r) and kc rows of B
 * (row p at bp + p * b_step floats), down `strips` consecutive strips in
 * one call (sb_strips_kernel_fn): x0 strips, x1 kc, x2 ap, x3 bp,
 * x4 b_step, x5 c, x6 ldc, w7 accumulate.
 *
 * sb_sme_strips_fast: FMOPA into the four 32-bit ZA tiles (za0 rows [0, VL)
 *   x columns [0, VL), za1 the same rows x [VL, 2VL), za2 and za3 rows
 *   [VL, 2VL)), one k step per FMOPA in increasing k: each output is
 *   fma(a, b, acc) from +0 or from C, the fused reference's bits.
 * sb_sme_strips_exact: streaming-SVE FMUL then FADD on Z registers, eight
 *   rows x two vectors at a time: each output from +0 or from C adds its
 *   rounded products in increasing k, the bits of every other path.
 * Both store each row with every NaN made 0x7FC00000. */
#if defined(__aarch64__) && defined(__ELF__)

#define SB_SME_ASM(name) ".globl " #name "\n.type " #name ", %function\n.p2align 4\n" #name ":\n"
#define SB_SME_END(name) ".size " #name ", .-" #name "\n"

/* Prologue of both kernels: d8-d15 saved, a pending lazy ZA save
 * committed (a TPIDR2 block with nonzero reserved bytes aborts, as the
 * ABI's routine does). */
#define SB_SME_ENTER                                                          \
    "stp d8, d9, [sp, #-96]!\n"                                               \
    "stp d10, d11, [sp, #16]\n"                                               \
    "stp d12, d13, [sp, #32]\n"                                               \
    "stp d14, d15, [sp, #48]\n"                                               \
    "stp x29, x30, [sp, #64]\n"                                               \
    "stp x19, x20, [sp, #80]\n"                                               \
    "mrs x9, tpidr2_el0\n"                                                    \
    "cbz x9, 91f\n"                                                           \
    "ldrh w10, [x9, #10]\n"                                                   \
    "cbnz w10, 92f\n"                                                         \
    "ldr w10, [x9, #12]\n"                                                    \
    "cbnz w10, 92f\n"                                                         \
    "ldr x10, [x9]\n"                                                         \
    "cbz x10, 90f\n"                                                          \
    "ldrh w11, [x9, #8]\n"                                                    \
    "cbz w11, 90f\n"                                                          \
    "mov w12, #0\n"                                                           \
    "89:\n"                                                                   \
    "str za[w12, 0], [x10]\n"                                                 \
    "addsvl x10, x10, #1\n"                                                   \
    "add w12, w12, #1\n"                                                      \
    "cmp w12, w11\n"                                                          \
    "b.ne 89b\n"                                                              \
    "90:\n"                                                                   \
    "msr tpidr2_el0, xzr\n"                                                   \
    "91:\n"

#define SB_SME_LEAVE                                                          \
    "ldp x19, x20, [sp, #80]\n"                                               \
    "ldp x29, x30, [sp, #64]\n"                                               \
    "ldp d14, d15, [sp, #48]\n"                                               \
    "ldp d12, d13, [sp, #32]\n"                                               \
    "ldp d10, d11, [sp, #16]\n"                                               \
    "ldp d8, d9, [sp], #96\n"                                                 \
    "ret\n"                                                                   \
    "92:\n"                                                                   \
    "bl abort\n"

/* The fast kernel's rows of one ZA half (x9 of them) from or to C (x8 /
 * x5, row step x6): the left tile takes columns [0, VL) under p4, the right
 * one [VL, 2VL) under p5, so nothing past the live columns is read or
 * written; the store makes NaN 0x7FC00000 (z31). */
#define SB_SME_LOAD_HALF(loop, test, left, right)                             \
    "mov w12, #0\n"                                                           \
    "b " #test "f\n"                                                          \
    #loop ":\n"                                                               \
    "ld1w {za" #left "h.s[w12, 0]}, p4/z, [x8]\n"                             \
    "ld1w {za" #right "h.s[w12, 0]}, p5/z, [x8, x13, lsl #2]\n"               \
    "add x8, x8, x6\n"                                                        \
    "add w12, w12, #1\n"                                                      \
    #test ":\n"                                                               \
    "cmp x12, x9\n"                                                           \
    "b.lo " #loop "b\n"

#define SB_SME_STORE_HALF(loop, test, left, right)                            \
    "mov w12, #0\n"                                                           \
    "b " #test "f\n"                                                          \
    #loop ":\n"                                                               \
    "mova z0.s, p0/m, za" #left "h.s[w12, 0]\n"                               \
    "mova z1.s, p0/m, za" #right "h.s[w12, 0]\n"                              \
    "fcmuo p1.s, p0/z, z0.s, z0.s\n"                                          \
    "fcmuo p2.s, p0/z, z1.s, z1.s\n"                                          \
    "sel z0.s, p1, z31.s, z0.s\n"                                             \
    "sel z1.s, p2, z31.s, z1.s\n"                                             \
    "st1w {z0.s}, p4, [x5]\n"                                                 \
    "st1w {z1.s}, p5, [x5, #1, mul vl]\n"                                     \
    "add x5, x5, x6\n"                                                        \
    "add w12, w12, #1\n"                                                      \
    #test ":\n"                                                               \
    "cmp x12, x9\n"                                                           \
    "b.lo " #loop "b\n"

/* Both kernels' arguments (sb_strips_kernel_fn) into the body's registers:
 * x0 rows, x16 cols, x1 kc, x2 ap, x3 bp, x4 b_step and x6 ldc in bytes,
 * x5 c, w7 accumulate (the ninth argument, on the caller's stack: read
 * before the prologue moves sp). */
#define SB_SME_ARGUMENTS                                                      \
    "ldr w9, [sp]\n"                                                          \
    "mov x16, x1\n"                                                           \
    "mov x1, x2\n"                                                            \
    "mov x2, x3\n"                                                            \
    "mov x3, x4\n"                                                            \
    "lsl x4, x5, #2\n"                                                        \
    "mov x5, x6\n"                                                            \
    "lsl x6, x7, #2\n"                                                        \
    "mov w7, w9\n"

/* The eight rows of an exact-mode group: (row, A's byte offset within a k
 * step, the row's two accumulators). */
#define SB_SME_GROUP_ROWS(X)                                                  \
    X(0, 0, 0, 1) X(1, 4, 2, 3) X(2, 8, 4, 5) X(3, 12, 6, 7)                  \
    X(4, 16, 8, 9) X(5, 20, 10, 11) X(6, 24, 12, 13) X(7, 28, 14, 15)

__asm__(
    ".arch armv9-a+sme\n"
    ".text\n"

    /* SVL in bytes (callable outside streaming mode). */
    SB_SME_ASM(sb_sme_vector_bytes)
    "rdsvl x0, #1\n"
    "ret\n"
    SB_SME_END(sb_sme_vector_bytes)

    SB_SME_ASM(sb_sme_strips_fast)
    SB_SME_ARGUMENTS
    SB_SME_ENTER
    "smstart\n"
    "ptrue p0.s\n"
    "cntw x13\n"                      /* VL */
    "whilelo p4.s, xzr, x16\n"        /* the live columns of the left tiles */
    "whilelo p5.s, x13, x16\n"        /* and of the right ones */
    "mov w9, #0x7fc00000\n"
    "dup z31.s, w9\n"
    "20:\n"                           /* one strip: x10 + x11 rows of A from x2, of C from x5 */
    "lsl x9, x13, #1\n"
    "cmp x0, x9\n"
    "csel x17, x0, x9, lo\n"          /* this strip's rows: min(rows left, 2VL) */
    "sub x0, x0, x17\n"
    "cmp x17, x13\n"
    "csel x10, x17, x13, lo\n"        /* in the upper tiles */
    "sub x11, x17, x10\n"             /* in the lower tiles */
    "zero {za}\n"
    "cbz w7, 3f\n"
    /* continuing a k-block: C into ZA, rows [0, VL) then [VL, 2VL) */
    "mov x8, x5\n"
    "mov x9, x10\n"
    SB_SME_LOAD_HALF(1, 21, 0, 1)
    "mov x9, x11\n"
    SB_SME_LOAD_HALF(2, 22, 2, 3)
    "3:\n"
    "mov x14, x1\n"                   /* k steps left */
    "mov x15, x3\n"                   /* B's row */
    "lsl x8, x4, #3\n"                /* B's prefetch distance: 8 rows */
    "cmp x14, #4\n"
    "b.lo 8f\n"
    "40:\n"                           /* four k steps in four load slots (z0-z3 ... z12-z15): */
    "ld1w {z0.s}, p0/z, [x2, #0, mul vl]\n"
    "ld1w {z1.s}, p0/z, [x2, #1, mul vl]\n"
    "ld1w {z2.s}, p0/z, [x15]\n"
    "ld1w {z3.s}, p0/z, [x15, #1, mul vl]\n"
    "prfm pldl2keep, [x15, x8]\n"
    "add x15, x15, x4\n"
    "ld1w {z4.s}, p0/z, [x2, #2, mul vl]\n"
    "ld1w {z5.s}, p0/z, [x2, #3, mul vl]\n"
    "ld1w {z6.s}, p0/z, [x15]\n"
    "ld1w {z7.s}, p0/z, [x15, #1, mul vl]\n"
    "prfm pldl2keep, [x15, x8]\n"
    "add x15, x15, x4\n"
    "fmopa za0.s, p0/m, p0/m, z0.s, z2.s\n"
    "fmopa za1.s, p0/m, p0/m, z0.s, z3.s\n"
    "fmopa za2.s, p0/m, p0/m, z1.s, z2.s\n"
    "fmopa za3.s, p0/m, p0/m, z1.s, z3.s\n"
    "ld1w {z8.s}, p0/z, [x2, #4, mul vl]\n"
    "ld1w {z9.s}, p0/z, [x2, #5, mul vl]\n"
    "ld1w {z10.s}, p0/z, [x15]\n"
    "ld1w {z11.s}, p0/z, [x15, #1, mul vl]\n"
    "prfm pldl2keep, [x15, x8]\n"
    "add x15, x15, x4\n"
    "fmopa za0.s, p0/m, p0/m, z4.s, z6.s\n"
    "fmopa za1.s, p0/m, p0/m, z4.s, z7.s\n"
    "fmopa za2.s, p0/m, p0/m, z5.s, z6.s\n"
    "fmopa za3.s, p0/m, p0/m, z5.s, z7.s\n"
    "ld1w {z12.s}, p0/z, [x2, #6, mul vl]\n"
    "ld1w {z13.s}, p0/z, [x2, #7, mul vl]\n"
    "ld1w {z14.s}, p0/z, [x15]\n"
    "ld1w {z15.s}, p0/z, [x15, #1, mul vl]\n"
    "prfm pldl2keep, [x15, x8]\n"
    "add x15, x15, x4\n"
    "fmopa za0.s, p0/m, p0/m, z8.s, z10.s\n"
    "fmopa za1.s, p0/m, p0/m, z8.s, z11.s\n"
    "fmopa za2.s, p0/m, p0/m, z9.s, z10.s\n"
    "fmopa za3.s, p0/m, p0/m, z9.s, z11.s\n"
    "fmopa za0.s, p0/m, p0/m, z12.s, z14.s\n"
    "fmopa za1.s, p0/m, p0/m, z12.s, z15.s\n"
    "fmopa za2.s, p0/m, p0/m, z13.s, z14.s\n"
    "fmopa za3.s, p0/m, p0/m, z13.s, z15.s\n"
    "addvl x2, x2, #8\n"              /* A's k + 4 */
    "sub x14, x14, #4\n"
    "cmp x14, #4\n"
    "b.hs 40b\n"
    "8:\n"                            /* the k tail, one step at a time: 2 + 2 loads, 4 FMOPA */
    "cbz x14, 5f\n"
    "4:\n"
    "ld1w {z0.s}, p0/z, [x2]\n"
    "ld1w {z1.s}, p0/z, [x2, #1, mul vl]\n"
    "ld1w {z2.s}, p0/z, [x15]\n"
    "ld1w {z3.s}, p0/z, [x15, #1, mul vl]\n"
    "fmopa za0.s, p0/m, p0/m, z0.s, z2.s\n"
    "fmopa za1.s, p0/m, p0/m, z0.s, z3.s\n"
    "fmopa za2.s, p0/m, p0/m, z1.s, z2.s\n"
    "fmopa za3.s, p0/m, p0/m, z1.s, z3.s\n"
    "addvl x2, x2, #2\n"              /* A's next k; after the last, the next strip */
    "add x15, x15, x4\n"
    "subs x14, x14, #1\n"
    "b.ne 4b\n"
    "5:\n"                            /* store the live rows, NaN made canonical */
    "mov x9, x10\n"
    SB_SME_STORE_HALF(6, 23, 0, 1)
    "mov x9, x11\n"
    SB_SME_STORE_HALF(7, 24, 2, 3)
    "cbnz x0, 20b\n"                  /* x5 is now the next strip's C */
    "smstop\n"
    SB_SME_LEAVE
    SB_SME_END(sb_sme_strips_fast)

    /* Exact: row groups of eight; z0-z15 the accumulators (row r in z2r and
     * z2r+1), z16-z17 B's row, z18 A's broadcast, z19-z20 the products.
     * A row past the strip's live rows is computed from A's zero padding
     * and neither read nor written (its predicates p1, p2 are empty). */
    SB_SME_ASM(sb_sme_strips_exact)
    SB_SME_ARGUMENTS
    SB_SME_ENTER
    "smstart sm\n"
    "ptrue p0.s\n"
    "cntw x13\n"                      /* VL; MR = 2VL rows */
    "mov x14, x16\n"                  /* cols */
    "mov w9, #0x7fc00000\n"
    "dup z31.s, w9\n"
    "mul x17, x1, x13\n"
    "lsl x17, x17, #3\n"              /* one strip of A: kc * 2VL floats, in bytes */
    "30:\n"                           /* one strip */
    "lsl x9, x13, #1\n"
    "cmp x0, x9\n"
    "csel x12, x0, x9, lo\n"          /* this strip's rows: min(rows left, 2VL) */
    "sub x0, x0, x12\n"
    "add x16, x12, #7\n"
    "lsr x16, x16, #3\n"              /* its groups of eight rows */
    "mov x9, #0\n"                    /* group */
    "10:\n"
    "mul x8, x9, x6\n"
    "add x8, x5, x8, lsl #3\n"        /* C + 8 * group rows */
    "sub x19, x12, x9, lsl #3\n"      /* live rows from the group's first */
    "cbz w7, 11f\n"
    "mov x10, x8\n"
#define SB_SME_ROW_PREDICATES(row)                                            \
    "cmp x19, #" #row "\n"                                                    \
    "csel x20, x14, xzr, hi\n"                                                \
    "whilelo p1.s, xzr, x20\n"                                                \
    "whilelo p2.s, x13, x20\n"
#define SB_SME_LOAD_ROW(row, off, lo, hi)                                     \
    SB_SME_ROW_PREDICATES(row)                                                \
    "ld1w {z" #lo ".s}, p1/z, [x10]\n"                                        \
    "ld1w {z" #hi ".s}, p2/z, [x10, #1, mul vl]\n"                            \
    "add x10, x10, x6\n"
    SB_SME_GROUP_ROWS(SB_SME_LOAD_ROW)
    "b 12f\n"
    "11:\n"
    "dup z0.s, #0\n"  "dup z1.s, #0\n"  "dup z2.s, #0\n"  "dup z3.s, #0\n"
    "dup z4.s, #0\n"  "dup z5.s, #0\n"  "dup z6.s, #0\n"  "dup z7.s, #0\n"
    "dup z8.s, #0\n"  "dup z9.s, #0\n"  "dup z10.s, #0\n" "dup z11.s, #0\n"
    "dup z12.s, #0\n" "dup z13.s, #0\n" "dup z14.s, #0\n" "dup z15.s, #0\n"
    "12:\n"
    "add x10, x2, x9, lsl #5\n"       /* the strip's A + 8 * group floats */
    "mov x11, x3\n"
    "mov x15, x1\n"
    "cbz x15, 14f\n"
    "13:\n"
    "ld1w {z16.s}, p0/z, [x11]\n"
    "ld1w {z17.s}, p0/z, [x11, #1, mul vl]\n"
#define SB_SME_EXACT_ROW(row, off, lo, hi)                                    \
    "ld1rw {z18.s}, p0/z, [x10, #" #off "]\n"                                 \
    "fmul z19.s, z18.s, z16.s\n"                                              \
    "fmul z20.s, z18.s, z17.s\n"                                              \
    "fadd z" #lo ".s, z" #lo ".s, z19.s\n"                                    \
    "fadd z" #hi ".s, z" #hi ".s, z20.s\n"
    SB_SME_GROUP_ROWS(SB_SME_EXACT_ROW)
    "addvl x10, x10, #2\n"            /* next k: 2VL floats on */
    "add x11, x11, x4\n"
    "subs x15, x15, #1\n"
    "b.ne 13b\n"
    "14:\n"
#define SB_SME_STORE_ROW(row, off, lo, hi)                                    \
    SB_SME_ROW_PREDICATES(row)                                                \
    "fcmuo p3.s, p0/z, z" #lo ".s, z" #lo ".s\n"                              \
    "fcmuo p6.s, p0/z, z" #hi ".s, z" #hi ".s\n"                              \
    "sel z" #lo ".s, p3, z31.s, z" #lo ".s\n"                                 \
    "sel z" #hi ".s, p6, z31.s, z" #hi ".s\n"                                 \
    "st1w {z" #lo ".s}, p1, [x8]\n"                                           \
    "st1w {z" #hi ".s}, p2, [x8, #1, mul vl]\n"                               \
    "add x8, x8, x6\n"
    SB_SME_GROUP_ROWS(SB_SME_STORE_ROW)
    "add x9, x9, #1\n"
    "cmp x9, x16\n"
    "b.lo 10b\n"
    "mov x5, x8\n"                    /* the next strip's C: 2VL rows on (a ragged strip is the last) */
    "add x2, x2, x17\n"               /* and its A */
    "cbnz x0, 30b\n"
    "smstop sm\n"
    SB_SME_LEAVE
    SB_SME_END(sb_sme_strips_exact)
);

#endif
