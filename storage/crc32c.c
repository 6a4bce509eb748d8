/*
** crc32c.c — CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
** checksum of every block trailer, the sst footer and (through the same
** routine) the WAL and manifest records. Declared in sst.h; the masking
** applied before a CRC is stored is described in doc/format.md.
**
** How it works. wcs_crc32c(crc, p, n) extends a finished CRC: it undoes the
** final inversion, feeds the bytes, and inverts again, so
** wcs_crc32c(wcs_crc32c(0, a, na), b, nb) == wcs_crc32c(0, a||b, na+nb).
** Two engines compute the same function:
**   - x86 with SSE4.2: the `crc32` instruction, 8 bytes per step, chosen at
**     run time by __builtin_cpu_supports("sse4.2") (the function is compiled
**     with a target attribute, so the build needs no -msse4.2);
**   - anywhere else: "slicing by 8" — eight 256-entry tables, built once
**     (pthread_once), that fold 8 input bytes per step with 8 lookups.
** Test vectors: CRC-32C("123456789") = 0xE3069283, of 32 zero bytes
** 0x8A9136AA (RFC 3720, B.4).
*/
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "storage/sst.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define WCS_HAVE_SSE42_PATH 1
#endif

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t aTable[8][256]; /* aTable[k][b]: CRC of byte b then k zeros */
static pthread_once_t tableOnce = PTHREAD_ONCE_INIT;

static void buildTables(void) {
  uint32_t b, k;
  for (b = 0; b < 256; b++) {
    uint32_t c = b;
    for (k = 0; k < 8; k++)
      c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
    aTable[0][b] = c;
  }
  for (b = 0; b < 256; b++) {
    for (k = 1; k < 8; k++) {
      uint32_t c = aTable[k - 1][b];
      aTable[k][b] = (c >> 8) ^ aTable[0][c & 0xff];
    }
  }
}

/* Portable engine on the un-inverted register state. */
static uint32_t crcSoft(uint32_t c, const uint8_t *p, size_t n) {
  pthread_once(&tableOnce, buildTables);
  while (n > 0 && ((uintptr_t)p & 7) != 0) {
    c = (c >> 8) ^ aTable[0][(c ^ *p++) & 0xff];
    n--;
  }
  while (n >= 8) {
    uint32_t lo = c ^ wcs_get32(p);
    uint32_t hi = wcs_get32(p + 4);
    c = aTable[7][lo & 0xff] ^ aTable[6][(lo >> 8) & 0xff] ^
        aTable[5][(lo >> 16) & 0xff] ^ aTable[4][lo >> 24] ^
        aTable[3][hi & 0xff] ^ aTable[2][(hi >> 8) & 0xff] ^
        aTable[1][(hi >> 16) & 0xff] ^ aTable[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0)
    c = (c >> 8) ^ aTable[0][(c ^ *p++) & 0xff];
  return c;
}

#ifdef WCS_HAVE_SSE42_PATH
/* Hardware engine; only called when the CPU reports SSE4.2. */
__attribute__((target("sse4.2"))) static uint32_t
crcHard(uint32_t c, const uint8_t *p, size_t n) {
  while (n > 0 && ((uintptr_t)p & 7) != 0) {
    c = _mm_crc32_u8(c, *p++);
    n--;
  }
#if defined(__x86_64__)
  {
    uint64_t c64 = c;
    while (n >= 8) {
      uint64_t v;
      memcpy(&v, p, 8);
      c64 = _mm_crc32_u64(c64, v);
      p += 8;
      n -= 8;
    }
    c = (uint32_t)c64;
  }
#endif
  while (n >= 4) {
    uint32_t v;
    memcpy(&v, p, 4);
    c = _mm_crc32_u32(c, v);
    p += 4;
    n -= 4;
  }
  while (n-- > 0)
    c = _mm_crc32_u8(c, *p++);
  return c;
}

static int hasSse42(void) {
  static volatile int iHave = -1; /* -1 unknown, else 0/1; races are benign:
                                  ** every thread computes the same value */
  if (iHave < 0) {
    __builtin_cpu_init();
    iHave = __builtin_cpu_supports("sse4.2") ? 1 : 0;
  }
  return iHave;
}
#endif

uint32_t wcs_crc32c(uint32_t crc, const void *p, size_t n) {
  uint32_t c = ~crc;
#ifdef WCS_HAVE_SSE42_PATH
  if (hasSse42()) return ~crcHard(c, (const uint8_t *)p, n);
#endif
  return ~crcSoft(c, (const uint8_t *)p, n);
}

uint32_t wcs_crc32c_portable(uint32_t crc, const void *p, size_t n) {
  return ~crcSoft(~crc, (const uint8_t *)p, n);
}

int wcs_crc32c_hw(void) {
#ifdef WCS_HAVE_SSE42_PATH
  return hasSse42();
#else
  return 0;
#endif
}
