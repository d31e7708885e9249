/* SHA-256 (FIPS 180-4) for the C test programs' digests. */
#ifndef SB_TEST_SHA256_H
#define SB_TEST_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t length;             /* bytes hashed so far */
    uint8_t block[64];
    size_t used;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t size);
void sha256_hex(sha256_ctx *c, char out[65]);   /* finishes the hash */

#endif
