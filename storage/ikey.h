/*
** ikey.h — internal keys: how the store versions user keys.
**
** Every stored entry is keyed by an internal key:
**
**     user key bytes | trailer (8 bytes, little-endian) = seq << 8 | type
**
** where seq (56 bits) is the sequence number of the write and type is
** WCS_KT_DELETE or WCS_KT_PUT. Internal keys order by user key (memcmp,
** shorter prefix first) ascending, then by trailer DESCENDING, so the newest
** version of a key comes first and a reader at snapshot S takes the first
** entry with seq <= S. Range deletions are not internal keys: they are
** range tombstones (start, end, seq) kept beside the data (see sst.h and
** doc/format.md).
*/
#ifndef WCS_IKEY_H
#define WCS_IKEY_H

#include <stdint.h>
#include <string.h>

#include "storage/util.h"

#define WCS_KT_DELETE    0
#define WCS_KT_PUT       1
#define WCS_IKEY_TRAILER 8
#define WCS_SEQ_MAX      ((((uint64_t)1) << 56) - 1)

static inline uint64_t wcs_ikey_pack(uint64_t seq, int type) {
  return seq << 8 | (uint64_t)type;
}
/* Trailer of an internal key of n >= 8 bytes. */
static inline uint64_t wcs_ikey_trailer(const uint8_t *p, size_t n) {
  return wcs_get64(p + n - WCS_IKEY_TRAILER);
}
static inline uint64_t wcs_ikey_seq(const uint8_t *p, size_t n) {
  return wcs_ikey_trailer(p, n) >> 8;
}
static inline int wcs_ikey_type(const uint8_t *p, size_t n) {
  return (int)(wcs_ikey_trailer(p, n) & 0xff);
}

/* User keys compare in memcmp order, shorter prefix first
** (wcs_bytes_cmp). */
static inline int wcs_ukey_cmp(const void *a, size_t na, const void *b,
                               size_t nb) {
  return wcs_bytes_cmp(a, na, b, nb);
}

/* Internal key order: user key ascending, trailer descending. */
static inline int wcs_ikey_cmp(const uint8_t *a, size_t na, const uint8_t *b,
                               size_t nb) {
  int c = wcs_ukey_cmp(a, na - WCS_IKEY_TRAILER, b, nb - WCS_IKEY_TRAILER);
  if (c == 0) {
    uint64_t ta = wcs_ikey_trailer(a, na), tb = wcs_ikey_trailer(b, nb);
    c = ta > tb ? -1 : (ta < tb ? 1 : 0);
  }
  return c;
}

#endif /* WCS_IKEY_H */
