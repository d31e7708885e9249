/* The floating-point environment kernels run in: round to nearest even,
 * subnormals computed (no flush-to-zero, no denormals-are-zero). The caller's
 * environment is restored afterwards. WebAssembly has no such modes. */
#include <float.h>
#include "samebits.h"
#include "framework/fpenv.h"

/* Exact mode rounds every float32 and binary64 operation once, to its own
 * format. A compiler that evaluates floating-point expressions in a wider
 * format (x87's 80-bit registers on 32-bit x86: FLT_EVAL_METHOD 2) rounds
 * twice and gives other bits, silently. Such a build is refused here; on
 * 32-bit x86 build with -msse2 -mfpmath=sse (CMakeLists.txt adds them). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "samebits needs FLT_EVAL_METHOD == 0 (each operation rounded to its own type); on 32-bit x86 compile with -msse2 -mfpmath=sse"
#endif

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#include <xmmintrin.h>
#define MXCSR_DAZ 0x0040u
#define MXCSR_RC 0x6000u
#define MXCSR_FTZ 0x8000u

void sb_fpenv_enter(sb_fpenv *env)
{
    unsigned int csr = _mm_getcsr();
    env->saved = csr;
    unsigned int want = csr & ~(MXCSR_DAZ | MXCSR_RC | MXCSR_FTZ);
    if (want != csr) _mm_setcsr(want);
}

void sb_fpenv_leave(const sb_fpenv *env)
{
    if (_mm_getcsr() != (unsigned int)env->saved) _mm_setcsr((unsigned int)env->saved);
}

int sb_set_flush_to_zero(int on)
{
    unsigned int csr = _mm_getcsr() & ~(MXCSR_DAZ | MXCSR_FTZ);
    _mm_setcsr(on ? csr | MXCSR_DAZ | MXCSR_FTZ : csr);
    return 1;
}

int sb_get_flush_to_zero(void) { return (_mm_getcsr() & MXCSR_FTZ) != 0; }

#elif defined(__aarch64__)
/* FPCR: FIZ (0) and AH (1) of FEAT_AFP, FZ16 (19), RMode (22-23), FZ (24). */
#define FPCR_CLEAR ((1ull << 0) | (1ull << 1) | (1ull << 19) | (3ull << 22) | (1ull << 24))
#define FPCR_FZ (1ull << 24)

static uint64_t read_fpcr(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, fpcr" : "=r"(v));
    return v;
}

static void write_fpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" : : "r"(v)); }

void sb_fpenv_enter(sb_fpenv *env)
{
    uint64_t v = read_fpcr();
    env->saved = v;
    if (v & FPCR_CLEAR) write_fpcr(v & ~FPCR_CLEAR);
}

void sb_fpenv_leave(const sb_fpenv *env)
{
    if (read_fpcr() != env->saved) write_fpcr(env->saved);
}

int sb_set_flush_to_zero(int on)
{
    uint64_t v = read_fpcr() & ~FPCR_FZ;
    write_fpcr(on ? v | FPCR_FZ : v);
    return 1;
}

int sb_get_flush_to_zero(void) { return (read_fpcr() & FPCR_FZ) != 0; }

#else
void sb_fpenv_enter(sb_fpenv *env) { env->saved = 0; }
void sb_fpenv_leave(const sb_fpenv *env) { (void)env; }
int sb_set_flush_to_zero(int on) { (void)on; return 0; }
int sb_get_flush_to_zero(void) { return 0; }
#endif
