/* The exact transcendentals' constants (docs/exact-ops.md, docs/exact-ops-tables.md).
 * Written by tools/make_coefficients.py: every value is part of exact mode's
 * contract and never changes unless the contract does. Polynomials are
 * stored lowest degree first. */
#ifndef SB_TRANSCENDENTAL_COEFFICIENTS_H
#define SB_TRANSCENDENTAL_COEFFICIENTS_H

#define SB_INV_LN2 0x1.71547652b82fep+0
#define SB_LN2_HI 0x1.62e42fee00000p-1
#define SB_LN2_LO 0x1.a39ef35793c76p-33
#define SB_SQRT2 0x1.6a09e667f3bcdp+0

#define SB_SIGMOID_C3 -0x1.5555555555555p-6
#define SB_SIGMOID_C5 0x1.1111111111111p-9
#define SB_SIGMOID_C7 -0x1.ba1ba1ba1ba1cp-13
#define SB_SIGMOID_C9 0x1.664f4882c10fap-16

static const double sb_exp_p[10] = {
    0x1.0000000000001p-1,
    0x1.5555555555556p-3,
    0x1.5555555553d68p-5,
    0x1.11111111109b5p-7,
    0x1.6c16c17889ef1p-10,
    0x1.a01a01a7c2efep-13,
    0x1.a019b9149a41cp-16,
    0x1.71de0db2f6b19p-19,
    0x1.28917c89a43a7p-22,
    0x1.af389ecfc4b9cp-26,
};
static const double sb_log_g[7] = {
    0x1.5555555555558p-1,
    0x1.99999999952e2p-2,
    0x1.2492492df148dp-2,
    0x1.c71c62e5800a1p-3,
    0x1.7462b4ab2ef6bp-3,
    0x1.39fe606542ddep-3,
    0x1.2b584aae78a57p-3,
};
#define SB_ERF_PIECES 14
#define SB_ERF_SMALL_COLUMN 14
#define SB_ERF_COLUMNS 15
#define SB_ERF_TERMS 12
/* Coefficient i of column j at [i * SB_ERF_COLUMNS + j]: coefficient-major, so
 * a vector of elements gathers one coefficient from one row. Columns 0-13: the
 * pieces ERF_B[j]; column 14: ERF_A (c0..c8), zero above, so that one Horner
 * loop of SB_ERF_TERMS steps evaluates either (its zero steps give +0, then c8). */
static const double sb_erf_table[180] = {
    /* c0 */ 0x1.3f196dcd0f135p-1, 0x1.91724951b8fc6p-1, 0x1.c6dad2829ec62p-1, 0x1.e5768c3b4a3fcp-1, 0x1.f4f693b67bd77p-1, 0x1.fbe61eef4cf6ap-1, 0x1.fea4218d6594ap-1, 0x1.ff9960f3eb327p-1, 0x1.ffe514bbdc197p-1, 0x1.fff9ba420e834p-1, 0x1.fffeb3ebb267bp-1, 0x1.ffffc316d9ed0p-1, 0x1.fffff618c3da6p-1, 0x1.fffffe92ced93p-1, 0x1.20dd750429b6dp+0,
    /* c1 */ 0x1.86e9694134b9ep-1, 0x1.0cab61f084b93p-1, 0x1.45e99bcbb7915p-2, 0x1.5ce595c455b0ap-3, 0x1.499d478bca735p-4, 0x1.12ceb37ff9bc3p-5, 0x1.94624e78e0fafp-7, 0x1.06918b6355624p-8, 0x1.2ce898809244ep-10, 0x1.30538fbb77ecdp-12, 0x1.0f9e1b4dd36dfp-14, 0x1.abe09e9144b60p-17, 0x1.296a70f414056p-19, 0x1.6ce1aa3fd7bdep-22, -0x1.812746b0379b5p-2,
    /* c2 */ -0x1.e8a3c39181e6dp-2, -0x1.d62beb64e84b2p-2, -0x1.6ea6cf452e88bp-2, -0x1.dfbbadedf5d0dp-3, -0x1.0bcfca2194774p-3, -0x1.01a1c847fa1b2p-4, -0x1.ada873606f135p-6, -0x1.37ccd585f57d2p-7, -0x1.8af14828c01a2p-9, -0x1.b5781e9d7c3eap-11, -0x1.a8670aa9998e6p-13, -0x1.690585ca90b67p-15, -0x1.0d88765d31c40p-17, -0x1.617a9cedde0a9p-20, 0x1.ce2f21a03d814p-4,
    /* c3 */ -0x1.c8105021684b6p-5, 0x1.7c9d756a11577p-4, 0x1.4cb3cf0aa0bd5p-3, 0x1.4374d82e04c98p-3, 0x1.d6631e1a28e95p-4, 0x1.143d1c6f4f062p-4, 0x1.0ea475da3be57p-5, 0x1.c1ec102e3652bp-7, 0x1.407fbd18f129dp-8, 0x1.89e17c074d427p-10, 0x1.a3737e2a2f1c6p-12, 0x1.84522fe881164p-14, 0x1.394b1fa670b7fp-16, 0x1.b95fa39b39e30p-19, -0x1.b82ce30f2b28fp-6,
    /* c4 */ 0x1.6963c8a394a22p-3, 0x1.cc60567dcb2f2p-4, 0x1.ca5083176cd42p-6, -0x1.f3b8d52d65ce9p-6, -0x1.974c0368b26acp-5, -0x1.5a316520d72b3p-5, -0x1.afe553fa2b847p-6, -0x1.ae59615f4763cp-7, -0x1.62d4c6d46e3ffp-8, -0x1.ed4ac7db216e4p-10, -0x1.24544f03686b3p-11, -0x1.298f8d46e1d55p-13, -0x1.05760ad2036e9p-15, -0x1.8e1fc4118b714p-18, 0x1.565bcbf8e0365p-8,
    /* c5 */ -0x1.c1242dff5208fp-6, -0x1.1350f4b216313p-4, -0x1.f65d15f1f9ca6p-5, -0x1.f572c4c90f4a0p-6, -0x1.17d430bd1edc1p-9, 0x1.779b1e574b71ep-7, 0x1.9973b48a1754cp-7, 0x1.11dae4734632bp-7, 0x1.146c4b3e0c3f8p-8, 0x1.c11f27063bc8fp-10, 0x1.2e7e763d49ed7p-11, 0x1.57757788c4d89p-13, 0x1.4c1fe48ae502ap-15, 0x1.137172181077fp-17, -0x1.c02d4f6e4921ap-11,
    /* c6 */ -0x1.52b2666914c7bp-5, -0x1.53bb4d1a8d5b4p-7, 0x1.fd1c6a0c1b1e0p-7, 0x1.6b16f560081acp-6, 0x1.d857f405e8b95p-7, 0x1.0d099d8433ba5p-8, -0x1.dd78efc7aa65cp-10, -0x1.982b287bcb7bfp-9, -0x1.267f3c2685aabp-9, -0x1.2add1cac8eeb1p-10, -0x1.da496d13c99f2p-12, -0x1.330aaa7ca787bp-13, -0x1.4b981fe883cd7p-15, -0x1.2eb292a7b5c82p-17, 0x1.f98db34e8872ep-14,
    /* c7 */ 0x1.c7cd9ab14a5eep-7, 0x1.30ac215e3e32cp-6, 0x1.3acc78f6568cfp-7, -0x1.73ffa4f2322fbp-10, -0x1.954ab113ee578p-8, -0x1.42fcbb40519b4p-8, -0x1.ea03bc1db74a1p-10, 0x1.0283e390eb655p-13, 0x1.64f892a42fd68p-11, 0x1.151f789ab71cbp-11, 0x1.176cf6341dee3p-12, 0x1.ac999704d61bcp-14, 0x1.085c0eee934ecp-15, 0x1.0d8c35bad4b31p-17, -0x1.f224dfc5409afp-17,
    /* c8 */ 0x1.b62eba164eaf3p-8, -0x1.e3ea35cb11457p-10, -0x1.8b41d0bfe168ep-8, -0x1.1740ab24a012cp-8, -0x1.2e4d9de469b58p-11, 0x1.76fd58c2a6dbcp-10, 0x1.6aa39274cbc62p-10, 0x1.377e903c78e31p-11, 0x1.22aad1ff5ec7ep-15, -0x1.1c64e2cd46235p-13, -0x1.d2aed4fcbf6a3p-14, -0x1.cc175cf8e2c78p-15, -0x1.510a840f07070p-16, -0x1.888385a064df7p-18, 0x1.8b4b60851826bp-20,
    /* c9 */ -0x1.dc3889d810d90p-9, -0x1.aae160aa13dabp-9, -0x1.79bb2c79f597dp-12, 0x1.9da1871f90f2ep-10, 0x1.71cdb33e5aa43p-10, 0x1.7bdf0e2c4fecap-12, -0x1.2fd94f6272590p-12, -0x1.61ed2093c695fp-12, -0x1.4008911631e6ep-13, -0x1.0ec8f02c90ac9p-16, 0x1.aaff2ff947d6bp-16, 0x1.64c6d1c108577p-16, 0x1.51667115f1e2fp-17, 0x1.d25c64d8df19cp-19, 0x0.0p+0,
    /* c10 */ -0x1.80141b1a9e8f8p-11, 0x1.d22b9babc231bp-11, 0x1.2c9625343c636p-10, 0x1.54b3ebfeac25bp-12, -0x1.70f66e215ee0ap-12, -0x1.9755ea0d15658p-12, -0x1.02ee7acbf3cc4p-13, 0x1.c2bf325fecd8fp-15, 0x1.34e03bad6df21p-14, 0x1.18df44e8fb689p-15, 0x1.0c8410e96fd02p-18, -0x1.3193ec71a7962p-18, -0x1.f29b2a0cae15cp-19, -0x1.bd6ae1950c0bep-20, 0x0.0p+0,
    /* c11 */ 0x1.61097834adbfdp-11, 0x1.9792cf62e415bp-12, -0x1.6e432174e4fb9p-13, -0x1.6186925b1a49ep-12, -0x1.07f2942f29257p-13, 0x1.312b5209d33c1p-14, 0x1.8c2cbbbde9747p-14, 0x1.0a61099461ab4p-15, -0x1.53f781a2f8ce9p-17, -0x1.ef219c71728b5p-17, -0x1.ac797b25b8411p-18, -0x1.6b294e4729e88p-21, 0x1.ac810845afcbcp-21, 0x1.3fe6871d5d01cp-21, 0x0.0p+0,
};

/* The fast route of exp and sigmoid (math/exp_route.h): not part of the contract;
 * a result is kept only when the rounding test proves it correctly rounded. */
#define SB_EXP_ROUTE_16_OVER_LN2 0x1.71547652b82fep+4
#define SB_EXP_ROUTE_LN2_16_HI 0x1.62e42fefa0000p-5
#define SB_EXP_ROUTE_LN2_16_LO 0x1.cf79abc9e3b3ap-44
static const double sb_exp_route_q[4] = {
    0x1.0000000000000p-1,
    0x1.5555555555555p-3,
    0x1.5555555555555p-5,
    0x1.1111111111111p-7,
};
/* 2^(j/16), j = 0..15, each rounded to the nearest binary64 */
static const double sb_exp_route_table[16] = {
    0x1.0000000000000p+0,
    0x1.0b5586cf9890fp+0,
    0x1.172b83c7d517bp+0,
    0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0,
    0x1.3dea64c123422p+0,
    0x1.4bfdad5362a27p+0,
    0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0,
    0x1.7a11473eb0187p+0,
    0x1.8ace5422aa0dbp+0,
    0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0,
    0x1.c199bdd85529cp+0,
    0x1.d5818dcfba487p+0,
    0x1.ea4afa2a490dap+0,
};
/* log's fast route (math/log_route.h): x = 2^e z, z in [OFF, 2 OFF), interval j of
 * z by the next 4 bits; C[j] ~ 1/z there (1 around 1), L[j] = -log C[j],
 * log1p(r) = r + r^2 P(r) */
#define SB_LOG_ROUTE_OFF 0x3FE6800000000000u
static const double sb_log_route_c[16] = {
    0x1.642c800000000p+0,
    0x1.5555600000000p+0,
    0x1.47ae200000000p+0,
    0x1.3b13c00000000p+0,
    0x1.2f68400000000p+0,
    0x1.2492400000000p+0,
    0x1.1a7ba00000000p+0,
    0x1.1111200000000p+0,
    0x1.0842200000000p+0,
    0x1.0000000000000p+0,
    0x1.e1e1e00000000p-1,
    0x1.c71c800000000p-1,
    0x1.af28600000000p-1,
    0x1.9999a00000000p-1,
    0x1.8618600000000p-1,
    0x1.745d200000000p-1,
};
static const double sb_log_route_l[16] = {
    -0x1.522ad0738a1d8p-2,
    -0x1.269641134d392p-2,
    -0x1.f9920ecb39f39p-3,
    -0x1.a93f33c8ab5e3p-3,
    -0x1.5bf3b6b5424b2p-3,
    -0x1.1178a8227d47cp-3,
    -0x1.933675d592109p-4,
    -0x1.085a6b59dd807p-4,
    -0x1.0417b89e66344p-5,
    0x0.0p+0,
    0x1.f0a32c01163a6p-5,
    0x1.e26ff6e2b12e6p-4,
    0x1.5ff33f0a7a014p-3,
    0x1.c8ff5c79a9e22p-3,
    0x1.1675cebaba62ep-2,
    0x1.4618a421c6342p-2,
};
static const double sb_log_route_p[7] = {
    -0x1.000000000004dp-1,
    0x1.555555557de2ep-2,
    -0x1.fffffff8926f9p-3,
    0x1.99998ec7ec177p-3,
    -0x1.5555b90878bf2p-3,
    0x1.24eef966e8251p-3,
    -0x1.fdbc9cf9fd46fp-4,
};

#endif
