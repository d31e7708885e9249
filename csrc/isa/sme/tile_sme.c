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
    "stp d8, d9, [sp, #-80]!\n"                                               \
    "stp d10, d11, [sp, #16]\n"                                               \
    "stp d12, d13, [sp, #32]\n"                                               \
    "stp d14, d15, [sp, #48]\n"                                               \
    "stp x29, x30, [sp, #64]\n"                                               \
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
    "ldp x29, x30, [sp, #64]\n"                                               \
    "ldp d14, d15, [sp, #48]\n"                                               \
    "ldp d12, d13, [sp, #32]\n"                                               \
    "ldp d10, d11, [sp, #16]\n"                                               \
    "ldp d8, d9, [sp], #80\n"                                                 \
    "ret\n"                                                                   \
    "92:\n"                                                                   \
    "bl abort\n"

/* The fast kernel's VL rows of C (from x8 / x5, row step x6, VL in x13)
 * into or out of a pair of ZA tiles: the left one takes columns [0, VL),
 * the right one [VL, 2VL); the store makes NaN 0x7FC00000 (z31). */
#define SB_SME_LOAD_HALF(label, left, right)                                  \
    "mov w12, #0\n"                                                           \
    #label ":\n"                                                              \
    "ld1w {za" #left "h.s[w12, 0]}, p0/z, [x8]\n"                             \
    "ld1w {za" #right "h.s[w12, 0]}, p0/z, [x8, x13, lsl #2]\n"               \
    "add x8, x8, x6\n"                                                        \
    "add w12, w12, #1\n"                                                      \
    "cmp x12, x13\n"                                                          \
    "b.lo " #label "b\n"

#define SB_SME_STORE_HALF(label, left, right)                                 \
    "mov w12, #0\n"                                                           \
    #label ":\n"                                                              \
    "mova z0.s, p0/m, za" #left "h.s[w12, 0]\n"                               \
    "mova z1.s, p0/m, za" #right "h.s[w12, 0]\n"                              \
    "fcmuo p1.s, p0/z, z0.s, z0.s\n"                                          \
    "fcmuo p2.s, p0/z, z1.s, z1.s\n"                                          \
    "sel z0.s, p1, z31.s, z0.s\n"                                             \
    "sel z1.s, p2, z31.s, z1.s\n"                                             \
    "st1w {z0.s}, p0, [x5]\n"                                                 \
    "st1w {z1.s}, p0, [x5, #1, mul vl]\n"                                     \
    "add x5, x5, x6\n"                                                        \
    "add w12, w12, #1\n"                                                      \
    "cmp x12, x13\n"                                                          \
    "b.lo " #label "b\n"

__asm__(
    ".arch armv9-a+sme\n"
    ".text\n"

    /* SVL in bytes (callable outside streaming mode). */
    SB_SME_ASM(sb_sme_vector_bytes)
    "rdsvl x0, #1\n"
    "ret\n"
    SB_SME_END(sb_sme_vector_bytes)

    SB_SME_ASM(sb_sme_strips_fast)
    SB_SME_ENTER
    "smstart\n"
    "ptrue p0.s\n"
    "cntw x13\n"                      /* VL */
    "lsl x4, x4, #2\n"                /* b_step, ldc in bytes */
    "lsl x6, x6, #2\n"
    "mov w9, #0x7fc00000\n"
    "dup z31.s, w9\n"
    "20:\n"                           /* one strip: 2VL rows of A from x2, of C from x5 */
    "zero {za}\n"
    "cbz w7, 3f\n"
    /* continuing a k-block: C into ZA, rows [0, VL) then [VL, 2VL) */
    "mov x8, x5\n"
    SB_SME_LOAD_HALF(1, 0, 1)
    SB_SME_LOAD_HALF(2, 2, 3)
    "3:\n"
    "mov x14, x1\n"                   /* k steps left */
    "mov x15, x3\n"                   /* B's row */
    "cbz x14, 5f\n"
    "4:\n"                            /* one k step: 2 + 2 loads, 4 FMOPA */
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
    "5:\n"                            /* store, NaN made canonical */
    SB_SME_STORE_HALF(6, 0, 1)
    SB_SME_STORE_HALF(7, 2, 3)
    "subs x0, x0, #1\n"               /* x5 is now the next strip's C */
    "b.ne 20b\n"
    "smstop\n"
    SB_SME_LEAVE
    SB_SME_END(sb_sme_strips_fast)

    /* Exact: row groups of eight; z0-z15 the accumulators (row r in z2r and
     * z2r+1), z16-z17 B's row, z18 A's broadcast, z19-z20 the products. */
    SB_SME_ASM(sb_sme_strips_exact)
    SB_SME_ENTER
    "smstart sm\n"
    "ptrue p0.s\n"
    "cntw x13\n"                      /* VL; MR = 2VL rows, VL / 4 groups of 8 */
    "lsl x4, x4, #2\n"
    "lsl x6, x6, #2\n"
    "mov w9, #0x7fc00000\n"
    "dup z31.s, w9\n"
    "lsr x16, x13, #2\n"              /* groups */
    "mul x17, x1, x13\n"
    "lsl x17, x17, #3\n"              /* one strip of A: kc * 2VL floats, in bytes */
    "30:\n"                           /* one strip */
    "mov x9, #0\n"                    /* group */
    "10:\n"
    "mul x8, x9, x6\n"
    "add x8, x5, x8, lsl #3\n"        /* C + 8 * group rows */
    "cbz w7, 11f\n"
    "mov x10, x8\n"
    "ld1w {z0.s}, p0/z, [x10]\n"  "ld1w {z1.s}, p0/z, [x10, #1, mul vl]\n"  "add x10, x10, x6\n"
    "ld1w {z2.s}, p0/z, [x10]\n"  "ld1w {z3.s}, p0/z, [x10, #1, mul vl]\n"  "add x10, x10, x6\n"
    "ld1w {z4.s}, p0/z, [x10]\n"  "ld1w {z5.s}, p0/z, [x10, #1, mul vl]\n"  "add x10, x10, x6\n"
    "ld1w {z6.s}, p0/z, [x10]\n"  "ld1w {z7.s}, p0/z, [x10, #1, mul vl]\n"  "add x10, x10, x6\n"
    "ld1w {z8.s}, p0/z, [x10]\n"  "ld1w {z9.s}, p0/z, [x10, #1, mul vl]\n"  "add x10, x10, x6\n"
    "ld1w {z10.s}, p0/z, [x10]\n" "ld1w {z11.s}, p0/z, [x10, #1, mul vl]\n" "add x10, x10, x6\n"
    "ld1w {z12.s}, p0/z, [x10]\n" "ld1w {z13.s}, p0/z, [x10, #1, mul vl]\n" "add x10, x10, x6\n"
    "ld1w {z14.s}, p0/z, [x10]\n" "ld1w {z15.s}, p0/z, [x10, #1, mul vl]\n"
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
#define SB_SME_EXACT_ROW(off, lo, hi)                                         \
    "ld1rw {z18.s}, p0/z, [x10, #" #off "]\n"                                 \
    "fmul z19.s, z18.s, z16.s\n"                                              \
    "fmul z20.s, z18.s, z17.s\n"                                              \
    "fadd z" #lo ".s, z" #lo ".s, z19.s\n"                                    \
    "fadd z" #hi ".s, z" #hi ".s, z20.s\n"
    SB_SME_EXACT_ROW(0, 0, 1)
    SB_SME_EXACT_ROW(4, 2, 3)
    SB_SME_EXACT_ROW(8, 4, 5)
    SB_SME_EXACT_ROW(12, 6, 7)
    SB_SME_EXACT_ROW(16, 8, 9)
    SB_SME_EXACT_ROW(20, 10, 11)
    SB_SME_EXACT_ROW(24, 12, 13)
    SB_SME_EXACT_ROW(28, 14, 15)
    "addvl x10, x10, #2\n"            /* next k: 2VL floats on */
    "add x11, x11, x4\n"
    "subs x15, x15, #1\n"
    "b.ne 13b\n"
    "14:\n"
#define SB_SME_STORE_ROW(lo, hi)                                              \
    "fcmuo p1.s, p0/z, z" #lo ".s, z" #lo ".s\n"                              \
    "fcmuo p2.s, p0/z, z" #hi ".s, z" #hi ".s\n"                              \
    "sel z" #lo ".s, p1, z31.s, z" #lo ".s\n"                                 \
    "sel z" #hi ".s, p2, z31.s, z" #hi ".s\n"                                 \
    "st1w {z" #lo ".s}, p0, [x8]\n"                                           \
    "st1w {z" #hi ".s}, p0, [x8, #1, mul vl]\n"                               \
    "add x8, x8, x6\n"
    SB_SME_STORE_ROW(0, 1)
    SB_SME_STORE_ROW(2, 3)
    SB_SME_STORE_ROW(4, 5)
    SB_SME_STORE_ROW(6, 7)
    SB_SME_STORE_ROW(8, 9)
    SB_SME_STORE_ROW(10, 11)
    SB_SME_STORE_ROW(12, 13)
    SB_SME_STORE_ROW(14, 15)
    "add x9, x9, #1\n"
    "cmp x9, x16\n"
    "b.lo 10b\n"
    "mov x5, x8\n"                    /* the next strip's C: 2VL rows on */
    "add x2, x2, x17\n"               /* and its A */
    "subs x0, x0, #1\n"
    "b.ne 30b\n"
    "smstop sm\n"
    SB_SME_LEAVE
    SB_SME_END(sb_sme_strips_exact)
);

#endif
