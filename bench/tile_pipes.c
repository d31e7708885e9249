/* Register-only tile kernels, exact (multiply, then add) against fast (fused
 * multiply-add): how a CPU's pipes take each. bench/results/exact-tiles-2026-12-06.md
 * used it to choose 256-bit exact tiles on AMD Zen 4.
 *
 *   gcc -O3 -mavx512f -mavx512vl -mfma -ffp-contract=off -DMR=6 -DNV=4 bench/tile_pipes.c -o tile_pipes
 *   (256-bit vectors; add '-DV=__m512' '-DP(x)=_mm512_##x' -DL=16 for 512-bit ones)
 *
 * MR rows x NV vectors of L lanes of accumulators; each k step loads NV
 * vectors of B and broadcasts MR values of A, all from L1. Prints GFLOP/s. */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#ifndef MR
#define MR 8
#endif
#ifndef NV
#define NV 3
#endif
#ifndef V
#define V __m256
#define P(x) _mm256_##x
#define L 8
#endif
/* One k step per iteration: the accumulators stay in registers; fused picks
 * a fused multiply-add or a multiply then an add (a constant of each caller,
 * so each gets its own straight code). */
static inline __attribute__((always_inline)) void tile(long kc, const float *a, const float *b,
                                                       float *c, const int fused)
{
  V acc[MR][NV];
  for (int r = 0; r < MR; r++) for (int v = 0; v < NV; v++) acc[r][v] = P(setzero_ps)();
  for (long p = 0; p < kc; p++) {
    V bb[NV];
    const float *bp = b + (p & 15) * NV * L;
    for (int v = 0; v < NV; v++) bb[v] = P(loadu_ps)(bp + v * L);
    const float *ap = a + (p & 63) * MR;
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      V av = P(set1_ps)(ap[r]);
      for (int v = 0; v < NV; v++)
        acc[r][v] = fused ? P(fmadd_ps)(av, bb[v], acc[r][v])
                          : P(add_ps)(acc[r][v], P(mul_ps)(av, bb[v]));
    }
  }
  for (int r = 0; r < MR; r++) for (int v = 0; v < NV; v++) P(storeu_ps)(c + (r * NV + v) * L, acc[r][v]);
}
__attribute__((noinline)) void k_exact(long kc, const float *a, const float *b, float *c) { tile(kc, a, b, c, 0); }
__attribute__((noinline)) void k_fast(long kc, const float *a, const float *b, float *c) { tile(kc, a, b, c, 1); }
float A[4096],B[4096],C[4096];
int main(){
  for(int i=0;i<4096;i++){A[i]=1e-3f*i;B[i]=1;}
  long kc=1<<25;
  double fl=2.0*MR*NV*L*kc;
  for(int rep=0;rep<2;rep++){
  double t=now(); k_exact(kc,A,B,C); double te=now()-t;
  t=now(); k_fast(kc,A,B,C); double tf=now()-t;
  printf("MR %d NV %d L %d: exact %.1f GF/s fast %.1f GF/s\n", MR,NV,L,fl/te/1e9, fl/tf/1e9);}
}
