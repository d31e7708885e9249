/* CPU detection, the table of ISA paths (best last), and the library's
 * identity (version, compiler). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samebits.h"
#include "isa/isa.h"
#include "isa/cpu_x86.h"

#ifndef SB_VERSION
#error "SB_VERSION must be defined by the build (from py/samebits/_version.py)"
#endif

const char *sb_version(void) { return SB_VERSION; }

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long read_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* AVX state usable: OSXSAVE set and XCR0 enables XMM and YMM state. */
static int os_saves_ymm(unsigned int ecx1)
{
    return (ecx1 & bit_OSXSAVE) && (read_xcr0() & 0x6) == 0x6;
}

int sb_cpu_has_avx2_fma(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & bit_AVX) || !(c & bit_FMA) || !os_saves_ymm(c)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_AVX2) != 0;
}

int sb_cpu_has_avx512f(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & bit_FMA) || !os_saves_ymm(c)) return 0;
    /* opmask, upper ZMM0-15 and ZMM16-31 state (XCR0 bits 5, 6, 7) */
    if ((read_xcr0() & 0xE6) != 0xE6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    /* VL too (every AVX-512 CPU since Skylake-SP has it): the path's
     * 256-bit code uses all 32 vector registers (ukernel_avx512_ymm.c) */
    return (b & bit_AVX512F) && (b & bit_AVX512VL);
}

/* AMD family 19h (Zen 4; Zen 3 of the same family has no AVX-512): its
 * 512-bit operations run as two 256-bit halves on one pipe pair. Zen 5
 * (family 1Ah) has full-width pipes, as do Intel's AVX-512 cores. */
static int read_splits_512(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
    /* "AuthenticAMD" in ebx, edx, ecx */
    if (b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u) return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    unsigned int family = (a >> 8) & 0xfu;
    if (family == 0xfu) family += (a >> 20) & 0xffu;
    return family == 0x19u;
}

/* Read once: CPUID traps to the hypervisor in a virtual machine (microseconds
 * a call), and every product plan asks. A race only reads it twice.
 * SAMEBITS_SPLIT_512=0 or 1 overrides the check: for a CPU it does not know,
 * and for the tests, which run the split tile on every AVX-512 machine (the
 * tile changes speed only, never a bit). */
int sb_cpu_splits_512(void)
{
    static volatile int known = -1;
    int v = known;
    if (v < 0) {
        const char *forced = getenv("SAMEBITS_SPLIT_512");
        if (forced && (forced[0] == '0' || forced[0] == '1') && !forced[1]) v = forced[0] == '1';
        else v = read_splits_512();
        known = v;
    }
    return v;
}
#else
int sb_cpu_has_avx2_fma(void) { return 0; }
int sb_cpu_has_avx512f(void) { return 0; }
int sb_cpu_splits_512(void) { return 0; }
#endif

/* Index order is part of the ABI with the Python binding (it asks for names):
 * SB_ISA_PATHS's (isa/paths.h, from csrc/build.json). */
static const sb_isa *const all_isas[] = {
#define SB_ISA_ADDRESS(name) &sb_isa_##name,
    SB_ISA_PATHS(SB_ISA_ADDRESS)
#undef SB_ISA_ADDRESS
};
#define PATH_COUNT ((int)(sizeof all_isas / sizeof all_isas[0]))

const sb_isa *sb_isa_get(int path)
{
    if (path < 0 || path >= PATH_COUNT) return NULL;
    return all_isas[path];
}

int sb_path_count(void) { return PATH_COUNT; }

const char *sb_path_name(int path)
{
    const sb_isa *isa = sb_isa_get(path);
    return isa ? isa->name : NULL;
}

int sb_path_built(int path)
{
    const sb_isa *isa = sb_isa_get(path);
    return isa && isa->supported != NULL;
}

/* CPUID and XGETBV can trap to the hypervisor in a VM: ask once per path. */
static _Atomic int supported_cache[PATH_COUNT]; /* 0 unknown, 1 no, 2 yes */

int sb_path_supported(int path)
{
    if (!sb_path_built(path)) return 0;
    int known = supported_cache[path];
    if (!known) {
        known = all_isas[path]->supported() ? 2 : 1;
        supported_cache[path] = known;
    }
    return known == 2;
}

const sb_isa *sb_isa_supported(int path)
{
    return sb_path_supported(path) ? all_isas[path] : NULL;
}

/* The table is ordered slowest to fastest among the paths of one target. */
int sb_path_best(void)
{
    for (int p = PATH_COUNT - 1; p >= 0; --p)
        if (sb_path_supported(p)) return p;
    return 0;
}

static const sb_tile *product_tile(int path)
{
    return sb_path_built(path) ? all_isas[path]->gemm->product_tile[SB_MODE_FAST] : NULL;
}

int sb_path_tile_rows(int path) { return product_tile(path) ? product_tile(path)->mr : 0; }
int sb_path_tile_cols(int path) { return product_tile(path) ? product_tile(path)->nr : 0; }
int sb_path_fused(int path) { return sb_path_built(path) ? all_isas[path]->fused : 0; }

const sb_tile *sb_mode_product_tile(const sb_gemm_config *gemm, int mode, int splits_512)
{
    if (mode == SB_MODE_EXACT && splits_512 && gemm->split_exact_tile) return gemm->split_exact_tile;
    return gemm->product_tile[mode == SB_MODE_EXACT];
}

const sb_tile *sb_conv_tile(const sb_gemm_config *gemm, size_t cout_g)
{
    return gemm->conv_tile ? gemm->conv_tile(cout_g) : gemm->product_tile[SB_MODE_FAST];
}

const sb_tile *sb_conv_product_tile(const sb_gemm_config *gemm, const sb_tile *packed, int mode,
                                    int splits_512)
{
    const sb_tile *split = gemm->split_exact_conv_tile;
    if (mode == SB_MODE_EXACT && splits_512 && split && split->mr == packed->mr) return split;
    return packed;
}

const char *sb_build_info(void)
{
    static char info[160];
    if (!info[0]) {
#if defined(__clang__)
        snprintf(info, sizeof info, "clang %s", __clang_version__);
        size_t len = strlen(info);
        while (len && info[len - 1] == ' ') info[--len] = 0;
#elif defined(__GNUC__)
        snprintf(info, sizeof info, "gcc %s", __VERSION__);
#else
        snprintf(info, sizeof info, "unknown compiler");
#endif
    }
    return info;
}
