/* util.c — coding helpers, buffers and error messages; see util.h. */
#include "storage/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int wcs_put_varint(uint8_t *p, uint64_t v) {
  int n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

int wcs_get_varint(const uint8_t *p, const uint8_t *pEnd, uint64_t *pv) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < WCS_VARINT_MAX && p + i < pEnd; i++) {
    uint8_t c = p[i];
    if (i == 9 && c > 1) return 0; /* would overflow 64 bits */
    v |= (uint64_t)(c & 0x7f) << (7 * i);
    if ((c & 0x80) == 0) {
      *pv = v;
      return i + 1;
    }
  }
  return 0;
}

int wcs_varint_len(uint64_t v) {
  int n = 1;
  while (v >= 0x80) { v >>= 7; n++; }
  return n;
}

int wcs_buf_reserve(wcs_buf *b, size_t nMore) {
  size_t nNeed = b->n + nMore;
  if (nNeed > b->nAlloc) {
    size_t nNew = b->nAlloc ? b->nAlloc * 2 : 64;
    uint8_t *a;
    while (nNew < nNeed) nNew *= 2;
    a = realloc(b->a, nNew);
    if (a == NULL) return WCS_NOMEM;
    b->a = a;
    b->nAlloc = nNew;
  }
  return WCS_OK;
}

/* wcs_buf_append's way when the bytes do not fit. */
int wcs_buf_append_grow(wcs_buf *b, const void *p, size_t n) {
  if (n == 0) return WCS_OK;
  if (wcs_buf_reserve(b, n)) return WCS_NOMEM;
  memcpy(b->a + b->n, p, n);
  b->n += n;
  return WCS_OK;
}

int wcs_buf_append_varint(wcs_buf *b, uint64_t v) {
  if (wcs_buf_reserve(b, WCS_VARINT_MAX)) return WCS_NOMEM;
  b->n += (size_t)wcs_put_varint(b->a + b->n, v);
  return WCS_OK;
}

int wcs_buf_append32(wcs_buf *b, uint32_t v) {
  if (wcs_buf_reserve(b, 4)) return WCS_NOMEM;
  wcs_put32(b->a + b->n, v);
  b->n += 4;
  return WCS_OK;
}

int wcs_buf_append64(wcs_buf *b, uint64_t v) {
  if (wcs_buf_reserve(b, 8)) return WCS_NOMEM;
  wcs_put64(b->a + b->n, v);
  b->n += 8;
  return WCS_OK;
}

void wcs_buf_free(wcs_buf *b) {
  free(b->a);
  b->a = NULL;
  b->n = b->nAlloc = 0;
}

int wcs_seterr(char **pzErr, int rc, const char *zFmt, ...) {
  if (pzErr && *pzErr == NULL) {
    va_list ap;
    int n;
    va_start(ap, zFmt);
    n = vsnprintf(NULL, 0, zFmt, ap);
    va_end(ap);
    if (n >= 0) {
      char *z = malloc((size_t)n + 1);
      if (z) {
        va_start(ap, zFmt);
        vsnprintf(z, (size_t)n + 1, zFmt, ap);
        va_end(ap);
        *pzErr = z;
      }
    }
  }
  return rc;
}

char *wcs_path_join(const char *zDir, const char *zName) {
  size_t n = strlen(zDir) + strlen(zName) + 2;
  char *z = malloc(n);
  if (z) snprintf(z, n, "%s/%s", zDir, zName);
  return z;
}

char *wcs_escape(const void *p, size_t n, size_t nMax) {
  const uint8_t *a = p;
  size_t i, j = 0;
  char *z = malloc(nMax * 4 + 8);
  if (z == NULL) return NULL;
  for (i = 0; i < n; i++) {
    if (j >= nMax) {
      memcpy(z + j, "...", 3);
      j += 3;
      break;
    }
    if (a[i] >= 0x20 && a[i] < 0x7f && a[i] != '\\') {
      z[j++] = (char)a[i];
    } else {
      j += (size_t)sprintf(z + j, "\\x%02X", a[i]);
    }
  }
  z[j] = 0;
  return z;
}

int wcs_corrupt_line = 0;
int wcs_corrupt_at(int iLine) {
  wcs_corrupt_line = iLine;
  return WCS_CORRUPT;
}

int64_t wcs_now_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void wcs_free(void *p) { free(p); }

const char *wcs_errstr(int rc) {
  switch (rc) {
  case WCS_OK: return "ok";
  case WCS_ERROR: return "error";
  case WCS_INTERNAL: return "internal error";
  case WCS_PERM: return "permission denied";
  case WCS_ABORT: return "aborted";
  case WCS_BUSY: return "store is locked by another process";
  case WCS_LOCKED: return "resource in use";
  case WCS_NOMEM: return "out of memory";
  case WCS_READONLY: return "store is read-only";
  case WCS_INTERRUPT: return "interrupted";
  case WCS_IOERR: return "I/O error";
  case WCS_CORRUPT: return "corruption detected";
  case WCS_NOTFOUND: return "not found";
  case WCS_FULL: return "disk full";
  case WCS_CANTOPEN: return "cannot open";
  case WCS_PROTOCOL: return "unsupported format version";
  case WCS_SCHEMA: return "schema error";
  case WCS_TOOBIG: return "too big";
  case WCS_CONSTRAINT: return "constraint failed";
  case WCS_MISMATCH: return "type mismatch";
  case WCS_MISUSE: return "API misuse";
  case WCS_RANGE: return "out of range";
  default: return "unknown error";
  }
}
