/* x86 feature checks: CPUID for the instructions, XCR0 for the operating
 * system's promise to save the wider registers. Defined in dispatch.c. */
#ifndef SB_CPU_X86_H
#define SB_CPU_X86_H
int sb_cpu_has_avx2_fma(void);
int sb_cpu_has_avx512f(void);    /* F and VL, with the OS saving their state */
int sb_cpu_splits_512(void);     /* 512-bit operations run as two halves (Zen 4) */
#endif
