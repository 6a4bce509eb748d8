/*
** codec.c — row key encoding and decoding under a ks_schema.
**
** A row key is built in two layers (byte formats in doc/keyschema.md):
**
**   1. Field encodings turn each value into "field bytes", preserving
**      order: STRING = its UTF-8 bytes, BYTES = as-is, and for
**      INT64/TIMESTAMP one of
**        BIG ENDIAN        8 bytes, two's complement (values >= 0 only)
**        ORDERED CODE      orderedcode's signed varint, 1..10 bytes
**        DECIMAL(n)        n ASCII digits, zero-padded (0 <= v < 10^n)
**        REVERSED DECIMAL  the n digits of (10^n - 1) - v
**   2. The struct encoding joins the field bytes:
**        SINGLETON         the one field's bytes
**        DELIMITED BY d    fields joined by d; every field byte must be
**                          above d[0], so no field can contain d and a
**                          shorter field sorts first
**        ORDERED CODE      00 escaped as 00 FF, fields joined by 00 01, an
**                          empty field written 00 00, trailing empty fields
**                          dropped, nothing at all written 00 00
**      With SALT n, one bucket byte XXH3_64(rest) % n comes first.
**
** Decoding is strict: it accepts exactly the byte strings encoding can
** produce, so decode-then-encode returns the input (tests/fuzz_keydecode.c
** holds that). It allocates nothing per key: field views point into the
** key, or for ORDERED CODE fields with escaped 00 bytes into a scratch
** buffer the caller reuses; a message is built only on error.
*/
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "keyschema/ksint.h"

/* ====================================================================
** orderedcode signed integers (Google's orderedcode, appendInt64)
** ==================================================================== */

/* Bytes needed for a non-negative x: the smallest n with x < 2^(7n-1). */
static int ocLen(uint64_t x) {
  int nBits = x ? 64 - __builtin_clzll(x) : 0; /* 7n-1 >= nBits */
  return (nBits + 7) / 7;
}

int ksOcPutInt(uint8_t *a, int64_t v) {
  uint64_t x = v < 0 ? ~(uint64_t)v : (uint64_t)v;
  uint64_t y = x;
  int n = ocLen(x), i;
  for (i = n - 1; i >= 0; i--) {
    a[i] = (uint8_t)y;
    y >>= 8;
  }
  /* header: n one-bits then a zero-bit, from the top of the first byte;
  ** for n >= 8 the first byte is all ones and the header continues */
  if (n <= 7) {
    a[0] |= (uint8_t)(0xFF << (8 - n));
  } else {
    a[0] = 0xFF;
    if (n == 9) a[1] |= 0x80;
    if (n == 10) a[1] |= 0xC0;
  }
  if (v < 0) {
    for (i = 0; i < n; i++)
      a[i] ^= 0xFF;
  }
  return n;
}

int ksOcGetInt(const uint8_t *p, int n, int64_t *pv) {
  uint8_t inv, c;
  uint64_t x;
  int len, i, iFirst;
  if (n < 1) return 0;
  inv = (p[0] & 0x80) ? 0x00 : 0xFF;
  c = p[0] ^ inv;
  if (c != 0xFF) {
    len = __builtin_clz((unsigned)(uint8_t)~c << 24);
    x = c & (0xFF >> (len + 1));
    iFirst = 1;
  } else {
    uint8_t d;
    if (n < 2) return 0;
    d = p[1] ^ inv;
    if ((d & 0x80) == 0) {
      len = 8;
      x = d;
    } else if ((d & 0x40) == 0) {
      len = 9;
      x = d & 0x3F;
    } else if ((d & 0x20) == 0) {
      len = 10;
      if ((d & 0x1F) != 0) return 0; /* more than 64 bits */
      x = 0;
    } else {
      return 0;
    }
    iFirst = 2;
  }
  if (n < len) return 0;
  if (len == 10 && ((p[2] ^ inv) & 0x80) != 0) return 0; /* >= 2^63 */
  for (i = iFirst; i < len; i++)
    x = x << 8 | (uint8_t)(p[i] ^ inv);
  if (ocLen(x) != len) return 0; /* not the shortest form */
  *pv = inv ? (int64_t)~x : (int64_t)x;
  return len;
}

/* ====================================================================
** UTF-8
** ==================================================================== */

int ks_utf8_valid(const uint8_t *p, int n, int *piBad) {
  int i = 0;
  while (i < n) {
    uint8_t c = p[i];
    int nCont;
    if (c < 0x80) {
      /* ASCII run: 8 bytes at a time */
      while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ULL) break;
        i += 8;
      }
      while (i < n && p[i] < 0x80)
        i++;
      continue;
    }
    if (c < 0xC2) goto bad;
    if (c < 0xE0) {
      nCont = 1;
    } else if (c < 0xF0) {
      nCont = 2;
      if (i + 1 < n && c == 0xE0 && p[i + 1] < 0xA0) goto bad;  /* overlong */
      if (i + 1 < n && c == 0xED && p[i + 1] >= 0xA0) goto bad; /* surrogate */
    } else if (c < 0xF5) {
      nCont = 3;
      if (i + 1 < n && c == 0xF0 && p[i + 1] < 0x90) goto bad;  /* overlong */
      if (i + 1 < n && c == 0xF4 && p[i + 1] >= 0x90) goto bad; /* >10FFFF */
    } else {
      goto bad;
    }
    if (i + nCont >= n) goto bad;
    {
      int k;
      for (k = 1; k <= nCont; k++) {
        if ((p[i + k] & 0xC0) != 0x80) goto bad;
      }
    }
    i += nCont + 1;
  }
  return 1;
bad:
  if (piBad) *piBad = i;
  return 0;
}

/* ====================================================================
** Integer fields
** ==================================================================== */

static const uint64_t aPow10[20] = {
    1ULL,
    10ULL,
    100ULL,
    1000ULL,
    10000ULL,
    100000ULL,
    1000000ULL,
    10000000ULL,
    100000000ULL,
    1000000000ULL,
    10000000000ULL,
    100000000000ULL,
    1000000000000ULL,
    10000000000000ULL,
    100000000000000ULL,
    1000000000000000ULL,
    10000000000000000ULL,
    100000000000000000ULL,
    1000000000000000000ULL,
    10000000000000000000ULL,
};

#define SIGN_BIT ((uint64_t)1 << 63)

/* 10^w - 1: the largest w-digit number (fits in uint64 for w <= 19). */
static uint64_t decMax(int w) {
  return aPow10[w] - 1;
}

/* ksIntDomain and ksIntToU, inline for the key encoder, which calls them
** for every integer field of every row written. */
static inline void intDomain(const ks_field *f, int64_t *pMin, int64_t *pMax) {
  switch (f->eEnc) {
  case KS_ENC_ORDERED_CODE:
    *pMin = INT64_MIN;
    *pMax = INT64_MAX;
    break;
  case KS_ENC_DECIMAL:
  case KS_ENC_REVERSED_DECIMAL: {
    uint64_t m = decMax(f->nWidth);
    *pMin = 0;
    *pMax = m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
    break;
  }
  default:
    *pMin = 0;
    *pMax = INT64_MAX;
    break;
  }
}

static inline uint64_t intToU(const ks_field *f, int64_t v) {
  switch (f->eEnc) {
  case KS_ENC_ORDERED_CODE:
    return (uint64_t)v ^ SIGN_BIT;
  case KS_ENC_REVERSED_DECIMAL:
    return decMax(f->nWidth) - (uint64_t)v;
  default:
    return (uint64_t)v;
  }
}

void ksIntDomain(const ks_field *f, int64_t *pMin, int64_t *pMax) {
  intDomain(f, pMin, pMax);
}

uint64_t ksIntToU(const ks_field *f, int64_t v) {
  return intToU(f, v);
}

int64_t ksIntFromU(const ks_field *f, uint64_t u) {
  switch (f->eEnc) {
  case KS_ENC_ORDERED_CODE:
    return (int64_t)(u ^ SIGN_BIT);
  case KS_ENC_REVERSED_DECIMAL:
    return (int64_t)(decMax(f->nWidth) - u);
  default:
    return (int64_t)u;
  }
}

void ksIntURange(const ks_field *f, uint64_t *puMin, uint64_t *puMax) {
  int64_t vMin, vMax;
  ksIntDomain(f, &vMin, &vMax);
  if (f->eEnc == KS_ENC_REVERSED_DECIMAL) {
    *puMin = ksIntToU(f, vMax);
    *puMax = ksIntToU(f, vMin);
  } else {
    *puMin = ksIntToU(f, vMin);
    *puMax = ksIntToU(f, vMax);
  }
}

/* "00" .. "99": the digits of n are azDigitPair[2n], [2n+1]. */
static const char azDigitPair[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The eight ASCII digits of u < 10^8, most significant first, as the bytes
** of a little-endian word. SWAR: the two 4-digit halves in 32-bit lanes
** split into 2-digit pairs (x * 10486 >> 20 is x / 100 for x < 10^4), then
** into digits (x * 103 >> 10 is x / 10 for x < 100), every lane at once. */
static inline uint64_t digits8Word(uint32_t u) {
  uint64_t v = (uint64_t)(u / 10000) | ((uint64_t)(u % 10000) << 32);
  uint64_t t = ((v * 10486) >> 20) & 0x0000007F0000007FULL;
  v = t | ((v - t * 100) << 16);
  t = ((v * 103) >> 10) & 0x000F000F000F000FULL;
  v = t | ((v - t * 10) << 8);
  return v | 0x3030303030303030ULL;
}
#endif

int ksIntFieldBytes(const ks_field *f, uint64_t u, uint8_t *a) {
  int i;
  switch (f->eEnc) {
  case KS_ENC_ORDERED_CODE:
    return ksOcPutInt(a, (int64_t)(u ^ SIGN_BIT));
  case KS_ENC_DECIMAL:
  case KS_ENC_REVERSED_DECIMAL:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (f->nWidth == 8 && u < 100000000u) {
      /* the common width (dates as YYYYMMDD) in one word */
      uint64_t w = digits8Word((uint32_t)u);
      memcpy(a, &w, 8);
      return 8;
    }
#endif
    /* two digits per division; 32-bit divisions once u fits */
    for (i = f->nWidth - 1; i >= 1 && u > 0xFFFFFFFFu; i -= 2) {
      unsigned d = (unsigned)(u % 100);
      u /= 100;
      a[i] = (uint8_t)azDigitPair[2 * d + 1];
      a[i - 1] = (uint8_t)azDigitPair[2 * d];
    }
    if (u <= 0xFFFFFFFFu) {
      uint32_t v = (uint32_t)u;
      for (; i >= 1; i -= 2) {
        unsigned d = v % 100;
        v /= 100;
        a[i] = (uint8_t)azDigitPair[2 * d + 1];
        a[i - 1] = (uint8_t)azDigitPair[2 * d];
      }
      u = v;
    }
    if (i == 0) a[0] = (uint8_t)('0' + u % 10);
    return f->nWidth;
  default:
    wcs_put64be(a, u);
    return 8;
  }
}

int ksIntFieldDecode(const ks_field *f, const uint8_t *p, int n, int64_t *pv,
                     const char **pzWhy) {
  switch (f->eEnc) {
  case KS_ENC_ORDERED_CODE:
    if (n == 0 || ksOcGetInt(p, n, pv) != n) {
      *pzWhy = "not one ORDERED CODE integer";
      return WCS_MISMATCH;
    }
    return WCS_OK;
  case KS_ENC_DECIMAL:
  case KS_ENC_REVERSED_DECIMAL: {
    uint64_t u = 0;
    int i = 0;
    if (n != f->nWidth) {
      *pzWhy = "wrong number of digits";
      return WCS_MISMATCH;
    }
    for (; i + 8 <= n; i += 8) {
      uint64_t v8;
      if (!ks_digits8(p + i, &v8)) {
        *pzWhy = "not a decimal digit";
        return WCS_MISMATCH;
      }
      u = u * 100000000ULL + v8;
    }
    for (; i < n; i++) {
      unsigned d = (unsigned)p[i] - '0';
      if (d > 9) {
        *pzWhy = "not a decimal digit";
        return WCS_MISMATCH;
      }
      u = u * 10 + d;
    }
    if (n == KS_MAX_DECIMAL) {
      /* only 19 digits can exceed INT64_MAX */
      uint64_t m = decMax(n);
      if (f->eEnc == KS_ENC_DECIMAL ? u > (uint64_t)INT64_MAX
                                    : u < m - (uint64_t)INT64_MAX) {
        *pzWhy = "value beyond the INT64 range";
        return WCS_MISMATCH;
      }
    }
    *pv = f->eEnc == KS_ENC_DECIMAL ? (int64_t)u : (int64_t)(decMax(n) - u);
    return WCS_OK;
  }
  default:
    if (n != 8) {
      *pzWhy = "BIG ENDIAN integers have 8 bytes";
      return WCS_MISMATCH;
    }
    if (p[0] & 0x80) {
      *pzWhy = "a negative BIG ENDIAN integer (only values >= 0 sort)";
      return WCS_MISMATCH;
    }
    *pv = (int64_t)wcs_get64be(p);
    return WCS_OK;
  }
}

ks_view ksFieldMin(const ks_field *f, uint8_t *aBuf) {
  ks_view v;
  v.p = aBuf;
  v.n = 0;
  if (f->eType == KS_INT64 || f->eType == KS_TIMESTAMP) {
    uint64_t uMin, uMax;
    ksIntURange(f, &uMin, &uMax);
    v.n = ksIntFieldBytes(f, uMin, aBuf);
  }
  return v;
}

int ksPrefixSuccessor(uint8_t *p, int n) {
  while (n > 0 && p[n - 1] == 0xFF)
    n--;
  if (n > 0) p[n - 1]++;
  return n;
}

int ksDelimByte(const ks_schema *s) {
  return s->eStruct == KS_STRUCT_DELIMITED ? s->aDelim[0] : -1;
}

/* ====================================================================
** Struct encodings: split and join
** ==================================================================== */

/* DELIMITED: one pass over the key; every byte above d belongs to a field,
** d itself must start the delimiter, anything below d is an error. */
static int splitDelimited(const ks_schema *s, const uint8_t *a, int n,
                          int iField, int iStart, ks_view *aView,
                          const char **pzWhy, int *piField) {
  const uint8_t d = s->aDelim[0];
  const int nDelim = s->nDelim;
  int i = iStart;
  for (;;) {
    /* skip bytes above the delimiter, 8 at a time while d < 0x80 */
    if (d < 0x80) {
      const uint64_t k = 0x0101010101010101ULL * (uint64_t)(d + 1);
      while (i + 8 <= n) {
        uint64_t w, m;
        memcpy(&w, a + i, 8);
        /* bytes below d+1 (<= 0x80), the classic "hasless" test: the
        ** lowest flagged byte is exact (no borrow reaches it) */
        m = (w - k) & ~w & 0x8080808080808080ULL;
        if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
          i += __builtin_ctzll(m) >> 3;
          goto found;
#else
          break;
#endif
        }
        i += 8;
      }
    }
    while (i < n && a[i] > d)
      i++;
  found:
    if (i == n) break;
    if (a[i] < d || i + nDelim > n ||
        (nDelim > 1 && memcmp(a + i, s->aDelim, (size_t)nDelim) != 0)) {
      *pzWhy = "a byte at or below the delimiter inside a field";
      *piField = iField;
      return WCS_MISMATCH;
    }
    if (iField + 1 >= s->nField) {
      *pzWhy = "more fields than the key schema has";
      *piField = -1;
      return WCS_MISMATCH;
    }
    aView[iField].p = a + iStart;
    aView[iField].n = i - iStart;
    iField++;
    i += nDelim;
    iStart = i;
  }
  if (iField + 1 != s->nField) {
    *pzWhy = "fewer fields than the key schema has";
    *piField = -1;
    return WCS_MISMATCH;
  }
  aView[iField].p = a + iStart;
  aView[iField].n = n - iStart;
  return WCS_OK;
}

/* The first 00 byte in [p, pEnd), or NULL: 8 bytes at a time ("haszero"),
** inline because fields are short and a memchr call costs more. */
static inline const uint8_t *findZero(const uint8_t *p, const uint8_t *pEnd) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (pEnd - p >= 8) {
    uint64_t w, m;
    memcpy(&w, p, 8);
    m = (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL;
    if (m) return p + (__builtin_ctzll(m) >> 3);
    p += 8;
  }
#endif
  for (; p < pEnd; p++) {
    if (*p == 0) return p;
  }
  return NULL;
}

/* ORDERED CODE struct: 00 FF is a literal 00, 00 01 ends a field, a field
** that is exactly 00 00 is empty, missing trailing fields are empty. The
** split starts at field iField, at byte i (0 and 0 for a whole key; else
** just after a separator, as ks_key_split_from says). With aOff, each
** field's first byte in a, or -1 for a field the key ended before. */
static int splitOrderedCode(const ks_schema *s, const uint8_t *a, int n,
                            int iField, int i, ks_view *aView, int *aOff,
                            wcs_buf *pScratch, const char **pzWhy,
                            int *piField) {
  int k;
  if (n == 0) {
    *pzWhy = "an empty key (an all-empty key is 00 00)";
    *piField = -1;
    return WCS_MISMATCH;
  }
  if (pScratch) pScratch->n = 0;
  if (iField == 0 && n == 2 && a[0] == 0 && a[1] == 0) {
    for (k = 0; k < s->nField; k++) {
      aView[k].p = a;
      aView[k].n = 0;
      if (aOff) aOff[k] = k == 0 ? 0 : -1;
    }
    return WCS_OK;
  }
  if (iField > 0 && i == n) {
    /* (where a whole split finds it: the separator before field iField) */
    *pzWhy = "a separator at the end of the key";
    *piField = iField;
    return WCS_MISMATCH;
  }
  for (;;) {
    int iStart = i, bEscaped = 0;
    if (iField >= s->nField) {
      *pzWhy = "more fields than the key schema has";
      *piField = -1;
      return WCS_MISMATCH;
    }
    if (i + 1 < n && a[i] == 0 && a[i + 1] == 0) {
      /* an empty field: must be followed by a separator (a trailing
      ** empty field is dropped, never written) */
      i += 2;
      if (i == n) {
        *pzWhy = "a trailing empty field that should have been dropped";
        *piField = iField;
        return WCS_MISMATCH;
      }
      if (!(i + 1 < n && a[i] == 0 && a[i + 1] == 0x01)) {
        *pzWhy = "an empty field (00 00) not followed by a separator";
        *piField = iField;
        return WCS_MISMATCH;
      }
      aView[iField].p = a + iStart;
      aView[iField].n = 0;
    } else {
      const uint8_t *z;
      while (i < n) {
        z = findZero(a + i, a + n);
        if (z == NULL) {
          i = n;
          break;
        }
        i = (int)(z - a);
        if (i + 1 < n && a[i + 1] == 0xFF) {
          bEscaped = 1;
          i += 2;
          continue;
        }
        break;
      }
      if (i < n && !(i + 1 < n && a[i + 1] == 0x01)) {
        *pzWhy = "a 00 byte that is neither 00 FF (escape) nor 00 01 "
                 "(separator)";
        *piField = iField;
        return WCS_MISMATCH;
      }
      if (i == iStart) {
        *pzWhy = "an empty field not written as 00 00";
        *piField = iField;
        return WCS_MISMATCH;
      }
      if (bEscaped) {
        uint8_t *o;
        int j;
        if (pScratch == NULL) {
          *pzWhy = "no scratch buffer for an escaped field";
          *piField = iField;
          return WCS_MISUSE;
        }
        if (pScratch->n == 0 &&
            wcs_buf_reserve(pScratch, (size_t)n) != WCS_OK) {
          return WCS_NOMEM;
        }
        o = pScratch->a + pScratch->n;
        aView[iField].p = o;
        for (j = iStart; j < i;) {
          /* copy the run up to the next 00 FF, then one 00 */
          const uint8_t *zz = findZero(a + j, a + i);
          int nRun = (zz ? (int)(zz - a) : i) - j;
          memcpy(o, a + j, (size_t)nRun);
          o += nRun;
          j += nRun;
          if (zz) {
            *o++ = 0;
            j += 2;
          }
        }
        aView[iField].n = (int)(o - aView[iField].p);
        pScratch->n += (size_t)aView[iField].n;
      } else {
        aView[iField].p = a + iStart;
        aView[iField].n = i - iStart;
      }
    }
    if (aOff) aOff[iField] = iStart;
    iField++;
    if (i == n) break;
    i += 2; /* the 00 01 separator */
    if (i == n) {
      *pzWhy = "a separator at the end of the key";
      *piField = iField;
      return WCS_MISMATCH;
    }
  }
  for (k = iField; k < s->nField; k++) {
    aView[k].p = a + n;
    aView[k].n = 0;
    if (aOff) aOff[k] = -1;
  }
  return WCS_OK;
}

int ksSplitKey(const ks_schema *s, const uint8_t *pKey, int nKey,
               ks_view *aView, wcs_buf *pScratch, const char **pzWhy,
               int *piField) {
  switch (s->eStruct) {
  case KS_STRUCT_SINGLETON:
    aView[0].p = pKey;
    aView[0].n = nKey;
    return WCS_OK;
  case KS_STRUCT_DELIMITED:
    return splitDelimited(s, pKey, nKey, 0, 0, aView, pzWhy, piField);
  case KS_STRUCT_ORDERED_CODE:
    return splitOrderedCode(s, pKey, nKey, 0, 0, aView, NULL, pScratch, pzWhy,
                            piField);
  default:
    *pzWhy = "the table has no key schema";
    *piField = -1;
    return WCS_MISUSE;
  }
}

/* Append field bytes with 00 escaped as 00 FF. */
static int appendEscaped(wcs_buf *b, const ks_view *v) {
  int i, iRun = 0, rc = WCS_OK;
  static const uint8_t aEsc[2] = {0x00, 0xFF};
  for (i = 0; i < v->n && rc == WCS_OK; i++) {
    if (v->p[i] == 0) {
      rc = wcs_buf_append(b, v->p + iRun, (size_t)(i - iRun));
      if (rc == WCS_OK) rc = wcs_buf_append(b, aEsc, 2);
      iRun = i + 1;
    }
  }
  if (rc == WCS_OK && v->n > iRun) {
    rc = wcs_buf_append(b, v->p + iRun, (size_t)(v->n - iRun));
  }
  return rc;
}

static const uint8_t aSep[2] = {0x00, 0x01};
static const uint8_t aEmpty[2] = {0x00, 0x00};

/* ORDERED CODE: fields 0..m-1, each escaped (empty = 00 00), joined by
** 00 01, nothing after the last. */
static int ocJoinAll(const ks_view *aView, int m, wcs_buf *b) {
  int i, rc = WCS_OK;
  for (i = 0; i < m && rc == WCS_OK; i++) {
    if (i > 0) rc = wcs_buf_append(b, aSep, 2);
    if (rc != WCS_OK) break;
    if (aView[i].n == 0)
      rc = wcs_buf_append(b, aEmpty, 2);
    else
      rc = appendEscaped(b, &aView[i]);
  }
  return rc;
}

/* ORDERED CODE, a whole tuple: trailing empty fields dropped; nothing left
** is 00 00. */
static int ocJoinFull(const ks_view *aView, int n, wcs_buf *b) {
  while (n > 0 && aView[n - 1].n == 0)
    n--;
  if (n == 0) return wcs_buf_append(b, aEmpty, 2);
  return ocJoinAll(aView, n, b);
}

int ksJoin(const ks_schema *s, const ks_view *aView, int m, int eMode,
           wcs_buf *pOut) {
  int i, rc = WCS_OK;
  const int nField = s->nField;
  assert(m >= 0 && m <= nField);
  if (m == nField) {
    if (s->eStruct == KS_STRUCT_ORDERED_CODE) {
      rc = ocJoinFull(aView, m, pOut);
    } else {
      /* the fields and delimiters in one reservation */
      size_t nAll = (size_t)s->nDelim * (size_t)(m > 0 ? m - 1 : 0) + 1;
      for (i = 0; i < m; i++)
        nAll += (size_t)aView[i].n;
      rc = wcs_buf_reserve(pOut, nAll);
      if (rc == WCS_OK) {
        uint8_t *z = pOut->a + pOut->n;
        for (i = 0; i < m; i++) {
          if (i > 0 && s->nDelim == 1) {
            *z++ = s->aDelim[0]; /* the usual delimiter, without a call */
          } else if (i > 0 && s->nDelim > 0) {
            memcpy(z, s->aDelim, (size_t)s->nDelim);
            z += s->nDelim;
          }
          if (aView[i].n > 0) memcpy(z, aView[i].p, (size_t)aView[i].n);
          z += aView[i].n;
        }
        pOut->n = (size_t)(z - pOut->a);
      }
    }
    if (rc == WCS_OK && eMode == KS_JOIN_HIGH) {
      rc = wcs_buf_append(pOut, "", 1); /* the immediate successor */
    }
    return rc;
  }
  if (s->eStruct == KS_STRUCT_DELIMITED) {
    size_t nBefore;
    for (i = 0; i < m && rc == WCS_OK; i++) {
      rc = wcs_buf_append(pOut, aView[i].p, (size_t)aView[i].n);
      if (rc == WCS_OK) {
        rc = wcs_buf_append(pOut, s->aDelim, (size_t)s->nDelim);
      }
    }
    if (m == 0 || rc != WCS_OK || eMode != KS_JOIN_HIGH) return rc;
    nBefore = pOut->n - (size_t)s->nDelim;
    /* successor of the prefix: only the delimiter bytes change, since
    ** delimiter[0] < 0xFF */
    pOut->n = nBefore + (size_t)ksPrefixSuccessor(pOut->a + nBefore, s->nDelim);
    return WCS_OK;
  }
  if (s->eStruct == KS_STRUCT_ORDERED_CODE) {
    ks_view aAll[KS_MAX_FIELDS];
    uint8_t aMin[KS_MAX_FIELDS][KS_FIELD_INT_MAX];
    int bAllMayBeEmpty = 1;
    if (m == 0 && eMode != KS_JOIN_HIGH) return WCS_OK;
    switch (eMode) {
    case KS_JOIN_LOW:
      for (i = 0; i < nField; i++) {
        aAll[i] = i < m ? aView[i] : ksFieldMin(&s->aField[i], aMin[i]);
      }
      return ocJoinFull(aAll, nField, pOut);
    case KS_JOIN_PREFIX:
      for (i = m; i < nField; i++) {
        ks_type t = s->aField[i].eType;
        if (t != KS_STRING && t != KS_BYTES) bAllMayBeEmpty = 0;
      }
      if (bAllMayBeEmpty) return ocJoinFull(aView, m, pOut);
      rc = ocJoinAll(aView, m, pOut);
      if (rc == WCS_OK) rc = wcs_buf_append(pOut, aSep, 2);
      return rc;
    default: { /* KS_JOIN_HIGH: E(fields) 00 02 */
      static const uint8_t aHigh[2] = {0x00, 0x02};
      assert(m > 0);
      rc = ocJoinAll(aView, m, pOut);
      if (rc == WCS_OK) rc = wcs_buf_append(pOut, aHigh, 2);
      return rc;
    }
    }
  }
  /* SINGLETON with m == 0 < nField: the empty prefix */
  return WCS_OK;
}

/* ====================================================================
** Values → field bytes
** ==================================================================== */

/* 1 if every one of the n bytes at p is ASCII and above d (d < 0x80):
** such a field is valid UTF-8 and holds no delimiter byte. Eight bytes at
** a time: a word passes if no byte has its top bit set and none is below
** d + 1 (the "has a byte less than" test, exact for d + 1 <= 128). */
static inline int asciiAbove(const uint8_t *p, int n, int d) {
  const uint64_t kOnes = 0x0101010101010101ULL;
  const uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t kBelow = kOnes * (uint64_t)(d + 1);
  int i = 0;
  if (n >= 4 && n < 8) {
    /* two 4-byte words, overlapping: the same tests on half words */
    const uint32_t kHigh4 = (uint32_t)kHigh, kBelow4 = (uint32_t)kBelow;
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + n - 4, 4);
    return !(((a | b) & kHigh4) || ((a - kBelow4) & ~a & kHigh4) ||
             ((b - kBelow4) & ~b & kHigh4));
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if ((w & kHigh) || ((w - kBelow) & ~w & kHigh)) return 0;
  }
  if (i < n && n >= 8) {
    /* the tail as the last word, overlapping bytes already passed */
    uint64_t w;
    memcpy(&w, p + n - 8, 8);
    return !((w & kHigh) || ((w - kBelow) & ~w & kHigh));
  }
  for (; i < n; i++) {
    if (p[i] >= 0x80 || p[i] <= d) return 0;
  }
  return 1;
}

/* Check aVal against field i and produce its field bytes (pointing at the
** value for strings, into aBuf for integers). */
static int fieldBytes(const ks_schema *s, int i, const ks_value *pVal,
                      ks_view *pView, uint8_t *aBuf, char **pzErr) {
  const ks_field *f = &s->aField[i];
  if (pVal->eType == KS_VAL_NULL) {
    return wcs_seterr(pzErr, WCS_CONSTRAINT,
                      "key field \"%s\" may not be "
                      "NULL",
                      f->zName);
  }
  if (f->eType == KS_STRING || f->eType == KS_BYTES) {
    /* ksDelimByte, inline */
    int d = s->eStruct == KS_STRUCT_DELIMITED ? s->aDelim[0] : -1, iBad = 0;
    if (pVal->eType != KS_VAL_BYTES || pVal->n < 0) {
      return wcs_seterr(pzErr, WCS_MISMATCH,
                        "key field \"%s\" is %s; got "
                        "a number",
                        f->zName, ks_type_name(f->eType));
    }
    pView->p = pVal->n ? pVal->p : (const uint8_t *)"";
    pView->n = pVal->n;
    if (d >= 0 && d < 0x80 && asciiAbove(pView->p, pView->n, d)) {
      return WCS_OK; /* the common case: valid UTF-8 and no byte <= d */
    }
    if (f->eType == KS_STRING && !ks_utf8_valid(pView->p, pView->n, &iBad)) {
      return wcs_seterr(pzErr, WCS_CONSTRAINT,
                        "key field \"%s\": invalid "
                        "UTF-8 at offset %d",
                        f->zName, iBad);
    }
    if (d >= 0) {
      int k;
      for (k = 0; k < pView->n; k++) {
        if (pView->p[k] <= d) {
          return wcs_seterr(pzErr, WCS_CONSTRAINT,
                            "key field \"%s\" holds "
                            "byte 0x%02X at offset %d, which is not above "
                            "the delimiter's first byte 0x%02X: delimited "
                            "fields may only hold bytes above it, or keys "
                            "would not sort by field",
                            f->zName, pView->p[k], k, d);
        }
      }
    }
    return WCS_OK;
  } else {
    int64_t v, vMin, vMax;
    if (pVal->eType == KS_VAL_INT) {
      v = pVal->i;
    } else if (pVal->eType == KS_VAL_REAL && pVal->r > -9223372036854775808.0 &&
               pVal->r < 9223372036854775808.0 &&
               (double)(int64_t)pVal->r == pVal->r) {
      v = (int64_t)pVal->r;
    } else {
      return wcs_seterr(pzErr, WCS_MISMATCH,
                        "key field \"%s\" is %s; got "
                        "a non-integer value",
                        f->zName, ks_type_name(f->eType));
    }
    intDomain(f, &vMin, &vMax);
    if (v < vMin) {
      if (f->eEnc == KS_ENC_BIG_ENDIAN) {
        return wcs_seterr(pzErr, WCS_RANGE,
                          "key field \"%s\" is BIG ENDIAN, "
                          "which sorts only values >= 0 (negative values "
                          "would sort after positive ones); got %lld; use "
                          "ORDERED CODE for negative values",
                          f->zName, (long long)v);
      }
      return wcs_seterr(pzErr, WCS_RANGE,
                        "key field \"%s\" is %s(%d), which "
                        "holds only values >= 0; got %lld",
                        f->zName, ks_enc_name(f->eEnc), f->nWidth,
                        (long long)v);
    }
    if (v > vMax) {
      return wcs_seterr(pzErr, WCS_RANGE,
                        "key field \"%s\" is %s(%d); %lld "
                        "has more than %d digits",
                        f->zName, ks_enc_name(f->eEnc), f->nWidth, (long long)v,
                        f->nWidth);
    }
    pView->p = aBuf;
    pView->n = ksIntFieldBytes(f, intToU(f, v), aBuf);
    return WCS_OK;
  }
}

/* ====================================================================
** The public codec
** ==================================================================== */

int ks_salt_bucket(const ks_schema *s, const uint8_t *p, int n) {
  if (s->nSalt <= 0) return -1;
  return (int)(XXH3_64bits(p, (size_t)n) % (uint64_t)s->nSalt);
}

/*
** A whole key of a DELIMITED or SINGLETON schema (what ksJoin's
** KS_JOIN_FULL makes of fieldBytes' views), each field checked by
** fieldBytes and written straight into pOut: integer fields are formatted
** in place, strings copied inline, the room for each field checked as it
** comes. Every INSERT encodes its row key; the views, their scratch and
** the join's copy calls cost more than the fields themselves. Returns -1,
** with nothing done, for a string field longer than a key may be: the
** general way checks every field before it reserves room for them. On
** error pOut->n is unchanged.
*/
static int encodeFlat(const ks_schema *s, const ks_value *aVal, int bSalt,
                      wcs_buf *pOut, char **pzErr) {
  const int m = s->nField, nDelim = s->nDelim;
  const int d = s->eStruct == KS_STRUCT_DELIMITED ? s->aDelim[0] : -1;
  size_t n0 = pOut->n, o = n0 + (size_t)bSalt, nKey;
  int i, rc;
  for (i = 0; i < m; i++) {
    const ks_field *f = &s->aField[i];
    const ks_value *pVal = &aVal[i];
    /* room for the delimiter and the field: a string's bytes, or the
    ** longest integer field */
    size_t nField = pVal->eType == KS_VAL_BYTES && pVal->n > KS_FIELD_INT_MAX
                        ? (size_t)pVal->n
                        : KS_FIELD_INT_MAX;
    uint8_t *z;
    ks_view v = {NULL, 0}; /* (set by fieldBytes when it succeeds) */
    if (nField > KS_MAX_KEY) return -1;
    if (o + (size_t)nDelim + nField > pOut->nAlloc) {
      pOut->n = o; /* wcs_buf_reserve counts from n */
      rc = wcs_buf_reserve(pOut, (size_t)nDelim + nField);
      pOut->n = n0;
      if (rc != WCS_OK) return rc;
    }
    z = pOut->a + o;
    if (i > 0) {
      if (nDelim == 1) {
        *z++ = s->aDelim[0];
      } else {
        memcpy(z, s->aDelim, (size_t)nDelim);
        z += nDelim;
      }
    }
    /* the usual fields inline, as fieldBytes would accept and write them:
    ** ASCII text above the delimiter (valid UTF-8, no byte to check),
    ** and a DECIMAL(8) integer in range (a date); fieldBytes takes the
    ** rest, and names what is wrong */
    if (pVal->eType == KS_VAL_BYTES && pVal->n >= 0 &&
        (f->eType == KS_STRING || f->eType == KS_BYTES) && d >= 0 && d < 0x80 &&
        asciiAbove(pVal->p, pVal->n, d)) {
      wcs_copy_short(z, pVal->p, (size_t)pVal->n);
      o = (size_t)(z - pOut->a) + (size_t)pVal->n;
      continue;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (pVal->eType == KS_VAL_INT && f->eEnc == KS_ENC_DECIMAL &&
        f->nWidth == 8 && (f->eType == KS_INT64 || f->eType == KS_TIMESTAMP) &&
        pVal->i >= 0 && pVal->i < 100000000) {
      uint64_t w = digits8Word((uint32_t)pVal->i);
      memcpy(z, &w, 8);
      o = (size_t)(z - pOut->a) + 8;
      continue;
    }
#endif
    rc = fieldBytes(s, i, pVal, &v, z, pzErr);
    if (rc != WCS_OK) return rc;
    if (v.p != z) wcs_copy_short(z, v.p, (size_t)v.n);
    o = (size_t)(z - pOut->a) + (size_t)v.n;
  }
  nKey = o - n0 - (size_t)bSalt;
  if (nKey + (size_t)bSalt > KS_MAX_KEY) {
    return wcs_seterr(pzErr, WCS_TOOBIG,
                      "the row key would have %zu bytes; "
                      "the limit is %d",
                      nKey + (size_t)bSalt, KS_MAX_KEY);
  }
  if (bSalt) {
    pOut->a[n0] = (uint8_t)ks_salt_bucket(s, pOut->a + n0 + 1, (int)nKey);
  }
  pOut->n = o;
  return WCS_OK;
}

static int encodeTuple(const ks_schema *s, const ks_value *aVal, int m,
                       int eMode, int bSalt, wcs_buf *pOut, char **pzErr) {
  ks_view aView[KS_MAX_FIELDS];
  uint8_t aBuf[KS_MAX_FIELDS][KS_FIELD_INT_MAX];
  size_t n0 = pOut->n;
  int i, rc = WCS_OK;
  if (s->nField == 0) {
    return wcs_seterr(pzErr, WCS_MISUSE, "the table has no key schema");
  }
  if (m < 0 || m > s->nField) {
    return wcs_seterr(pzErr, WCS_MISUSE, "%d leading fields of %d", m,
                      s->nField);
  }
  for (i = 0; i < m && rc == WCS_OK; i++) {
    rc = fieldBytes(s, i, &aVal[i], &aView[i], aBuf[i], pzErr);
  }
  if (rc != WCS_OK) return rc;
  if (bSalt) rc = wcs_buf_append(pOut, "", 1);
  if (rc == WCS_OK) rc = ksJoin(s, aView, m, eMode, pOut);
  if (rc == WCS_OK && bSalt) {
    pOut->a[n0] =
        (uint8_t)ks_salt_bucket(s, pOut->a + n0 + 1, (int)(pOut->n - n0 - 1));
  }
  if (rc == WCS_OK && pOut->n - n0 > KS_MAX_KEY) {
    rc = wcs_seterr(pzErr, WCS_TOOBIG,
                    "the row key would have %zu bytes; "
                    "the limit is %d",
                    pOut->n - n0, KS_MAX_KEY);
  }
  if (rc != WCS_OK) pOut->n = n0;
  return rc;
}

int ks_key_encode(const ks_schema *s, const ks_value *aField, wcs_buf *pOut,
                  char **pzErr) {
  if (s->nField > 0 && s->eStruct != KS_STRUCT_ORDERED_CODE) {
    /* a function of its own, not a branch of encodeTuple: its loop keeps
    ** its values in registers */
    int rc = encodeFlat(s, aField, s->nSalt > 0, pOut, pzErr);
    if (rc >= 0) return rc;
  }
  return encodeTuple(s, aField, s->nField, KS_JOIN_FULL, s->nSalt > 0, pOut,
                     pzErr);
}

int ks_key_prefix(const ks_schema *s, const ks_value *aVal, int nLeading,
                  wcs_buf *pOut, char **pzErr) {
  return encodeTuple(s, aVal, nLeading,
                     nLeading == s->nField ? KS_JOIN_FULL : KS_JOIN_PREFIX, 0,
                     pOut, pzErr);
}

int ks_key_prefix_of(const ks_schema *s, const uint8_t *pKey, int nKey,
                     int nLeading, wcs_buf *pOut) {
  ks_view aView[KS_MAX_FIELDS];
  uint8_t aScratch[KS_MAX_KEY];
  wcs_buf scratch;
  const char *zWhy;
  int iField, nSalt = s->nSalt > 0 ? 1 : 0;
  if (s->nField == 0 || nLeading < 0 || nLeading > s->nField) {
    return WCS_MISUSE;
  }
  if (nKey > KS_MAX_KEY || nKey < nSalt) return WCS_MISMATCH;
  scratch.a = aScratch;
  scratch.n = 0;
  scratch.nAlloc = sizeof aScratch;
  if (ksSplitKey(s, pKey + nSalt, nKey - nSalt, aView, &scratch, &zWhy,
                 &iField) != WCS_OK) {
    return WCS_MISMATCH;
  }
  if (s->eStruct == KS_STRUCT_ORDERED_CODE) {
    int rc = ocJoinAll(aView, nLeading, pOut);
    if (rc == WCS_OK && nLeading < s->nField) {
      rc = wcs_buf_append(pOut, aSep, 2);
    }
    return rc;
  }
  return ksJoin(s, aView, nLeading,
                nLeading == s->nField ? KS_JOIN_FULL : KS_JOIN_PREFIX, pOut);
}

/* The error for a key that does not decode: names the key and the field. */
static int decodeError(const ks_schema *s, const uint8_t *pKey, int nKey,
                       int iField, const char *zWhy, char **pzErr) {
  char *zKey;
  if (pzErr == NULL || *pzErr) return WCS_MISMATCH;
  zKey = wcs_escape(pKey, (size_t)nKey, 200);
  if (iField >= 0 && iField < s->nField) {
    wcs_seterr(pzErr, WCS_MISMATCH,
               "row key '%s' does not match the key "
               "schema: field \"%s\": %s",
               zKey ? zKey : "?", s->aField[iField].zName, zWhy);
  } else {
    wcs_seterr(pzErr, WCS_MISMATCH,
               "row key '%s' does not match the key "
               "schema: %s",
               zKey ? zKey : "?", zWhy);
  }
  free(zKey);
  return WCS_MISMATCH;
}

/* 1 if every byte is below 0x80 (then it is valid UTF-8). */
static inline int isAscii(const uint8_t *p, int n) {
  uint64_t acc = 0;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; i++)
    acc |= p[i];
  return (acc & 0x8080808080808080ULL) == 0;
}

int ks_key_split(const ks_schema *s, const uint8_t *pKey, int nKey,
                 ks_value *aOut, wcs_buf *pScratch, char **pzErr) {
  ks_view aView[KS_MAX_FIELDS];
  const uint8_t *p = pKey;
  int n = nKey, i, rc, iField = -1;
  const char *zWhy = NULL;
  if (s->nField == 0) {
    return wcs_seterr(pzErr, WCS_MISUSE, "the table has no key schema");
  }
  if (nKey > KS_MAX_KEY) {
    return decodeError(s, pKey, nKey, -1, "longer than 4096 bytes", pzErr);
  }
  if (s->nSalt > 0) {
    if (nKey < 1) {
      return decodeError(s, pKey, nKey, -1, "no salt byte", pzErr);
    }
    if (pKey[0] != (uint8_t)ks_salt_bucket(s, pKey + 1, nKey - 1)) {
      return decodeError(s, pKey, nKey, -1,
                         "the salt byte does not match "
                         "the hash of the rest of the key",
                         pzErr);
    }
    p++;
    n--;
  }
  rc = ksSplitKey(s, p, n, aView, pScratch, &zWhy, &iField);
  if (rc == WCS_NOMEM) return rc;
  if (rc != WCS_OK) return decodeError(s, pKey, nKey, iField, zWhy, pzErr);
  for (i = 0; i < s->nField; i++) {
    aOut[i].eType = KS_VAL_BYTES;
    aOut[i].p = aView[i].p;
    aOut[i].n = aView[i].n;
    aOut[i].i = 0;
  }
  return WCS_OK;
}

int ks_key_split_from(const ks_schema *s, const uint8_t *pKey, int nKey,
                      int iField, int iOff, ks_value *aOut, int *aOff,
                      wcs_buf *pScratch, char **pzErr) {
  ks_view aView[KS_MAX_FIELDS];
  const char *zWhy = NULL;
  int i, rc, iBad = -1;
  if (!ks_key_split_resumes(s) || iField < 0 || iField >= s->nField ||
      iOff < 0 || iOff > nKey || (iField == 0) != (iOff == 0) ||
      nKey > KS_MAX_KEY) {
    return wcs_seterr(pzErr, WCS_MISUSE, "ks_key_split_from: field %d at %d",
                      iField, iOff);
  }
  if (s->eStruct == KS_STRUCT_ORDERED_CODE) {
    rc = splitOrderedCode(s, pKey, nKey, iField, iOff, aView, aOff, pScratch,
                          &zWhy, &iBad);
    if (rc == WCS_NOMEM) return rc;
  } else if (iField == s->nField - 1 && s->nDelim == 1 && s->aDelim[0] < 0x80 &&
             asciiAbove(pKey + iOff, nKey - iOff, s->aDelim[0])) {
    /* The last field, as a scan mostly asks: it is the rest of the key,
    ** valid when every byte of it is above the delimiter (the ASCII case
    ** is tested here; any other takes the general path, for its
    ** message) */
    aView[iField].p = pKey + iOff;
    aView[iField].n = nKey - iOff;
    rc = WCS_OK;
  } else {
    rc = splitDelimited(s, pKey, nKey, iField, iOff, aView, &zWhy, &iBad);
  }
  if (rc != WCS_OK) return decodeError(s, pKey, nKey, iBad, zWhy, pzErr);
  for (i = iField; i < s->nField; i++) {
    aOut[i].eType = KS_VAL_BYTES;
    aOut[i].p = aView[i].p;
    aOut[i].n = aView[i].n;
    aOut[i].i = 0;
    if (aOff && s->eStruct != KS_STRUCT_ORDERED_CODE) {
      aOff[i] = (int)(aView[i].p - pKey);
    }
  }
  return WCS_OK;
}

int ks_key_last_int_any(const ks_schema *s, const uint8_t *pKey, int nKey,
                        int iOff, int64_t *pv) {
  const char *zWhy = NULL;
  if (!ks_key_last_int_fits(s, nKey, iOff)) return WCS_MISMATCH;
  if (s->eStruct == KS_STRUCT_ORDERED_CODE &&
      (iOff == nKey || findZero(pKey + iOff, pKey + nKey) != NULL)) {
    return WCS_MISMATCH; /* escaped, or more fields: the general path */
  }
  /* (a DECIMAL field's width is checked there) */
  return ksIntFieldDecode(&s->aField[s->nField - 1], pKey + iOff, nKey - iOff,
                          pv, &zWhy);
}

int ks_key_field_decode(const ks_schema *s, int iField, ks_value *pVal,
                        const uint8_t *pKey, int nKey, char **pzErr) {
  const ks_field *f = &s->aField[iField];
  const char *zWhy = NULL;
  assert(iField >= 0 && iField < s->nField && pVal->eType == KS_VAL_BYTES);
  if (f->eType == KS_STRING || f->eType == KS_BYTES) {
    int iBad;
    if (f->eType == KS_STRING && !isAscii(pVal->p, pVal->n) &&
        !ks_utf8_valid(pVal->p, pVal->n, &iBad)) {
      return decodeError(s, pKey, nKey, iField, "invalid UTF-8", pzErr);
    }
    return WCS_OK;
  }
  if (ksIntFieldDecode(f, pVal->p, pVal->n, &pVal->i, &zWhy) != WCS_OK) {
    return decodeError(s, pKey, nKey, iField, zWhy, pzErr);
  }
  pVal->eType = KS_VAL_INT;
  pVal->p = NULL;
  pVal->n = 0;
  return WCS_OK;
}

int ks_key_decode(const ks_schema *s, const uint8_t *pKey, int nKey,
                  ks_value *aOut, wcs_buf *pScratch, char **pzErr) {
  int i, rc = ks_key_split(s, pKey, nKey, aOut, pScratch, pzErr);
  for (i = 0; rc == WCS_OK && i < s->nField; i++) {
    rc = ks_key_field_decode(s, i, &aOut[i], pKey, nKey, pzErr);
  }
  return rc;
}
