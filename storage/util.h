/*
** util.h — small pieces every module shares: fixed-width and varint coding
** (little-endian, LevelDB's varint), a growable byte buffer, error messages
** and the corruption breakpoint.
**
** Error convention: internal functions return a WCS_* code and, on error,
** may set *pzErr to a malloc'd message (free with wcs_free/free). Use
** wcs_seterr() to build one; it never overwrites an earlier message, so the
** first (most specific) cause wins.
*/
#ifndef WCS_UTIL_H
#define WCS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wcs.h"

/* ---- fixed-width little-endian */
static inline void wcs_put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void wcs_put64(uint8_t *p, uint64_t v) {
  wcs_put32(p, (uint32_t)v);
  wcs_put32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t wcs_get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static inline uint64_t wcs_get64(const uint8_t *p) {
  return (uint64_t)wcs_get32(p) | (uint64_t)wcs_get32(p + 4) << 32;
}
/* ---- fixed-width big-endian (order-preserving for unsigned values) */
static inline void wcs_put64be(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v); /* one swap and a store (cell keys' timestamps) */
  memcpy(p, &v, 8);
#else
  int i;
  for (i = 7; i >= 0; i--) { p[i] = (uint8_t)v; v >>= 8; }
#endif
}
static inline uint64_t wcs_get64be(const uint8_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v; /* one load and a byte swap: cell keys end in a timestamp */
  memcpy(&v, p, 8);
  return __builtin_bswap64(v);
#else
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
#endif
}

/* Bytes [iFrom, iFrom + 8) of key u (nU bytes), zero-padded, as a
** big-endian number: slice(a) < slice(b) implies a < b for keys that share
** their first iFrom bytes (the seek aids of blocks and of sorted files'
** indexes compare these before the keys). */
static inline uint64_t wcs_key_slice(const uint8_t *u, size_t nU,
                                     size_t iFrom) {
  uint64_t v = 0;
  size_t i;
  if (iFrom + 8 <= nU) return wcs_get64be(u + iFrom);
  for (i = iFrom; i < iFrom + 8; i++)
    v = v << 8 | (i < nU ? u[i] : 0);
  return v;
}

/* The smallest key greater than every key with prefix p is p with
** trailing 0xff bytes removed and the last byte incremented: its length
** (0: none, p is all 0xff). */
static inline size_t wcs_successor_len(const uint8_t *p, size_t n) {
  while (n > 0 && p[n - 1] == 0xff)
    n--;
  return n;
}

/* The length of the common prefix of a and b, both at least n bytes long,
** at most n: eight bytes at a time. Little-endian, the exclusive or of two
** words has its lowest set bit in the first differing byte, and the last
** word overlaps the bytes before it (known equal), so there is no byte
** loop past the first word; the file builders ask once or twice per
** entry. */
static inline size_t wcs_common_prefix(const uint8_t *a, const uint8_t *b,
                                       size_t n) {
  size_t i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                            \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n >= 8) {
    uint64_t x, y;
    for (; i < n - 8; i += 8) {
      memcpy(&x, a + i, 8);
      memcpy(&y, b + i, 8);
      if (x != y) return i + (size_t)(__builtin_ctzll(x ^ y) >> 3);
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return x == y ? n : n - 8 + (size_t)(__builtin_ctzll(x ^ y) >> 3);
  }
#else
  while (i + 8 <= n) {
    uint64_t x = wcs_get64be(a + i) ^ wcs_get64be(b + i);
    if (x) return i + (size_t)(__builtin_clzll(x) >> 3);
    i += 8;
  }
#endif
  while (i < n && a[i] == b[i])
    i++;
  return i;
}

/* Compare byte strings in memcmp order, the shorter first when one is a
** prefix of the other; <0, 0 or >0 (not necessarily memcmp's values).
** Keys, row keys and bounds are short and compared many times per row or
** seek: the first difference is found eight bytes at a time inline, the
** last word overlapping the equal bytes before it, so there is no byte
** loop unless both are shorter than a word. */
static inline int wcs_bytes_cmp(const void *pA, size_t na, const void *pB,
                                size_t nb) {
  const uint8_t *a = pA, *b = pB;
  size_t n = na < nb ? na : nb, i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                            \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (i < n && n >= 8) {
    for (;;) {
      uint64_t x, y;
      if (i + 8 > n) i = n - 8;
      memcpy(&x, a + i, 8);
      memcpy(&y, b + i, 8);
      if (x != y) {
        x = __builtin_bswap64(x); /* first byte most significant */
        y = __builtin_bswap64(y);
        return x < y ? -1 : 1;
      }
      i += 8;
      if (i >= n) break;
    }
  }
#else
  if (n > 0) {
    int c = memcmp(a, b, n);
    if (c) return c;
    i = n;
  }
#endif
  for (; i < n; i++) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return na < nb ? -1 : (na > nb);
}

/* wcs_same_bytes() for n < 8, always inline: a qualifier's name is
** mostly that short, and where the compiler leaves wcs_same_bytes() a
** call, a caller that tests for such a length first saves it. */
__attribute__((always_inline)) static inline int
wcs_same_short_bytes(const uint8_t *a, const uint8_t *b, size_t n) {
  if (n >= 4) {
    uint32_t u, v, u2, v2;
    memcpy(&u, a, 4);
    memcpy(&v, b, 4);
    memcpy(&u2, a + n - 4, 4);
    memcpy(&v2, b + n - 4, 4);
    return ((u ^ v) | (u2 ^ v2)) == 0;
  }
  /* under 4: the first, middle and last byte are all of them */
  return n == 0 ||
         ((a[0] ^ b[0]) | (a[n / 2] ^ b[n / 2]) | (a[n - 1] ^ b[n - 1])) == 0;
}

/* 1 if the n bytes at a and b are equal. Row keys, qualifiers and run
** prefixes are short and mostly equal: up to 32 bytes take at most four
** overlapping pairs of words, or-ed together with no branch between them,
** cheaper inline than a call to memcmp. */
static inline int wcs_same_bytes(const uint8_t *a, const uint8_t *b,
                                 size_t n) {
  if (n >= 8) {
    uint64_t x, y, d = 0;
    if (n > 64) return memcmp(a, b, n) == 0;
    while (n > 32) {
      memcpy(&x, a, 8);
      memcpy(&y, b, 8);
      if (x != y) return 0;
      a += 8, b += 8, n -= 8;
    }
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    d |= x ^ y;
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    d |= x ^ y;
    if (n > 16) {
      memcpy(&x, a + 8, 8);
      memcpy(&y, b + 8, 8);
      d |= x ^ y;
      memcpy(&x, a + n - 16, 8);
      memcpy(&y, b + n - 16, 8);
      d |= x ^ y;
    }
    return d == 0;
  }
  return wcs_same_short_bytes(a, b, n);
}

/* 1 if the n bytes at p hold a 00 byte. Qualifiers and row keys are short
** and rarely hold one: whole words, the last one overlapping the bytes
** before it, each by the "has a zero byte" test (exact as a yes or no);
** under 8 bytes two overlapping 4-byte words, under 4 the first, middle
** and last byte (all of them). Reads nothing outside the n bytes. */
static inline int wcs_has_zero(const uint8_t *p, size_t n) {
  const uint64_t k1 = 0x0101010101010101ULL, kH = 0x8080808080808080ULL;
  if (n >= 8) {
    size_t i = 0;
    for (;;) {
      uint64_t x;
      if (i + 8 > n) i = n - 8;
      memcpy(&x, p + i, 8);
      if ((x - k1) & ~x & kH) return 1;
      i += 8;
      if (i >= n) return 0;
    }
  } else if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + n - 4, 4);
    return ((((a - (uint32_t)k1) & ~a) | ((b - (uint32_t)k1) & ~b)) &
            (uint32_t)kH) != 0;
  }
  return n > 0 && (p[0] == 0 || p[n / 2] == 0 || p[n - 1] == 0);
}

/* Copy n bytes from p to z, which do not overlap. Keys, qualifiers and
** short values are mostly a few dozen bytes: up to 64 are copied by at
** most two overlapping loads and stores of one size, inline, which costs
** less than a call to memcpy (profiles of scans showed those calls near
** the top; cell keys, about 50 bytes, are copied once per cell by loads
** and compactions); longer runs go to memcpy. */
static inline void wcs_copy_short(uint8_t *z, const uint8_t *p, size_t n) {
  if (n > 32) {
    if (n > 64) {
      memcpy(z, p, n);
    } else {
      uint8_t t[32], u[32];
      memcpy(t, p, 32);
      memcpy(u, p + n - 32, 32);
      memcpy(z, t, 32);
      memcpy(z + n - 32, u, 32);
    }
  } else if (n >= 16) {
    uint8_t t[16], u[16];
    memcpy(t, p, 16);
    memcpy(u, p + n - 16, 16);
    memcpy(z, t, 16);
    memcpy(z + n - 16, u, 16);
  } else if (n >= 8) {
    uint64_t t, u;
    memcpy(&t, p, 8);
    memcpy(&u, p + n - 8, 8);
    memcpy(z, &t, 8);
    memcpy(z + n - 8, &u, 8);
  } else if (n >= 4) {
    uint32_t t, u;
    memcpy(&t, p, 4);
    memcpy(&u, p + n - 4, 4);
    memcpy(z, &t, 4);
    memcpy(z + n - 4, &u, 4);
  } else if (n > 0) {
    /* 1 to 3 bytes: first, middle and last cover them */
    uint8_t t0 = p[0], t1 = p[n / 2], t2 = p[n - 1];
    z[0] = t0;
    z[n / 2] = t1;
    z[n - 1] = t2;
  }
}

/* ---- varints: 7 bits per byte, low groups first, high bit = more */
#define WCS_VARINT_MAX 10
/* Write v at p (room for WCS_VARINT_MAX bytes); returns bytes written. */
int wcs_put_varint(uint8_t *p, uint64_t v);
/* Read a varint from [p, pEnd). Returns bytes consumed, or 0 if the input
** is truncated or longer than 10 bytes (corrupt). */
int wcs_get_varint(const uint8_t *p, const uint8_t *pEnd, uint64_t *pv);
/* wcs_get_varint with the one-byte case (every value below 128) inline,
** for loops that decode many short lengths. */
static inline int wcs_get_varint_fast(const uint8_t *p, const uint8_t *pEnd,
                                      uint64_t *pv) {
  if (p < pEnd && p[0] < 0x80) {
    *pv = p[0];
    return 1;
  }
  return wcs_get_varint(p, pEnd, pv);
}
int wcs_varint_len(uint64_t v);
/* wcs_put_varint with the one-byte case inline (most lengths). */
static inline int wcs_put_varint_fast(uint8_t *p, uint64_t v) {
  if (v < 0x80) {
    *p = (uint8_t)v;
    return 1;
  }
  return wcs_put_varint(p, v);
}

/* ---- growable byte buffer. Zero-initialise; free with wcs_buf_free. */
typedef struct wcs_buf {
  uint8_t *a;    /* bytes, NULL while empty */
  size_t n;      /* bytes in use, <= nAlloc */
  size_t nAlloc; /* bytes allocated */
} wcs_buf;
int wcs_buf_reserve(wcs_buf *b, size_t nMore); /* WCS_OK or WCS_NOMEM */
int wcs_buf_append_grow(wcs_buf *b, const void *p, size_t n);
/* Append n bytes; WCS_OK or WCS_NOMEM. Inline while they fit (most
** appends: buffers are reused), so a short key costs a copy, not two
** calls. */
static inline int wcs_buf_append(wcs_buf *b, const void *p, size_t n) {
  if (n > b->nAlloc - b->n) return wcs_buf_append_grow(b, p, n);
  if (n) memcpy(b->a + b->n, p, n);
  b->n += n;
  return WCS_OK;
}
int wcs_buf_append_varint(wcs_buf *b, uint64_t v);
int wcs_buf_append32(wcs_buf *b, uint32_t v);
int wcs_buf_append64(wcs_buf *b, uint64_t v);
void wcs_buf_free(wcs_buf *b);

/* ---- errors */
/* If pzErr is not NULL and *pzErr is NULL, set it to the formatted message
** (malloc'd). Returns rc, so `return wcs_seterr(pzErr, WCS_IOERR, ...)`. */
int wcs_seterr(char **pzErr, int rc, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "zDir/zName", malloc'd (NULL when out of memory). */
char *wcs_path_join(const char *zDir, const char *zName);

/* Printable, escaped form of a byte string for messages: printable ASCII as
** is, other bytes as \xNN, cut at nMax chars with "...". malloc'd. */
char *wcs_escape(const void *p, size_t n, size_t nMax);

/* Every corruption return goes through this, so a breakpoint on
** wcs_corrupt_at (or the recorded line) finds the check that fired. */
int wcs_corrupt_at(int iLine);
#define WCS_CORRUPT_BKPT wcs_corrupt_at(__LINE__)
extern int wcs_corrupt_line; /* line of the last corruption detected */

/* Current wall clock in microseconds since the epoch. */
int64_t wcs_now_micros(void);

#endif /* WCS_UTIL_H */
