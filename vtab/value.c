/*
** value.c — cell values between the store and SQL: typed encodings of
** declared qualifier columns, the SQL value of a cell, and the JSON form of
** a family (one object per row: {"qualifier": value, ...}).
**
** Cells hold bytes. A declared qualifier column gives them a type
** (DESIGN.md §3, keyschema/schema.h ks_vtype):
**
**   INT64 BIG ENDIAN   8 bytes, big-endian two's complement (Bigtable's
**                      increment format; the default)
**   INT64 DECIMAL(n)   ASCII digits, zero-padded to n (n 1 to 19)
**   FLOAT64            8 bytes, big-endian IEEE 754 binary64
**   STRING             UTF-8 bytes
**   BYTES              the bytes
**   JSON               UTF-8 JSON text
**
** JSON conventions (documented in doc/sql.md, "Values"), lossless:
**   - a qualifier name is a JSON string; bytes that are not part of valid
**     UTF-8 appear as \udc80..\udcff escapes (the "surrogateescape" of PEP
**     383: valid UTF-8 never holds a surrogate, so the mapping is one to one);
**   - an undeclared value is a JSON string when it is valid UTF-8 without
**     control characters other than tab, CR and LF; otherwise, and for every
**     BYTES value, it is the object {"$hex":"<lowercase hex>"};
**   - a declared value is typed: INT64 and FLOAT64 are numbers, STRING a
**     string, JSON the JSON value itself (its text; but null, and an object
**     led by "$hex", are $hex, as they would write back as a delete and as
**     bytes); stored bytes that do not decode under the declared type are
**     {"$hex":...} (written back as given). A JSON column written through
**     the family stores the value's text as written.
**   - SUM/MIN/MAX aggregate states (8 bytes) are numbers; HLL states hex.
** Writing JSON back (wcsParseObject) inverts all of these.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtab/vtab.h"

SQLITE_EXTENSION_INIT3

/* ====================================================================
** UTF-8 and numbers
** ==================================================================== */

/* Length of the valid UTF-8 sequence at p[0..n-1], or 0 if invalid. */
static int utf8Len(const uint8_t *p, int n) {
  uint8_t c = p[0];
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    return (n >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  /* overlong */
    if (c == 0xED && p[1] >= 0xA0) return 0; /* surrogate */
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
        (p[3] & 0xC0) != 0x80)
      return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;  /* overlong */
    if (c == 0xF4 && p[1] >= 0x90) return 0; /* > U+10FFFF */
    return 4;
  }
  return 0;
}

static int isSpace(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

int wcsRealToInt(double r, sqlite3_int64 *pi) {
  if (r > -9223372036854775808.0 && r < 9223372036854775808.0 &&
      r == floor(r)) {
    *pi = (sqlite3_int64)r;
    return 1;
  }
  return 0;
}

int wcsTextToNumber(const uint8_t *p, int n, sqlite3_int64 *pi, double *pr) {
  char aBuf[128], *buf = aBuf;
  int i = 0, j, bDigit = 0, bReal = 0, eRet;
  char *zEnd;
  while (n > 0 && isSpace(p[0]))
    p++, n--;
  while (n > 0 && isSpace(p[n - 1]))
    n--;
  if (n <= 0) return WCSV_TEXT;
  /* validate the shape: [+-] digits [. digits] [e [+-] digits] */
  if (p[i] == '+' || p[i] == '-') i++;
  for (j = i; j < n && p[j] >= '0' && p[j] <= '9'; j++)
    bDigit = 1;
  if (j < n && p[j] == '.') {
    bReal = 1;
    for (j++; j < n && p[j] >= '0' && p[j] <= '9'; j++)
      bDigit = 1;
  }
  if (!bDigit) return WCSV_TEXT;
  if (j < n && (p[j] == 'e' || p[j] == 'E')) {
    int k = j + 1, bExp = 0;
    bReal = 1;
    if (k < n && (p[k] == '+' || p[k] == '-')) k++;
    for (; k < n && p[k] >= '0' && p[k] <= '9'; k++)
      bExp = 1;
    if (!bExp) return WCSV_TEXT;
    j = k;
  }
  if (j != n) return WCSV_TEXT;
  /* (a text of any length: leading zeros or a long fraction make a
  ** number as SQLite's affinity takes it) */
  if (n >= (int)sizeof(aBuf) && (buf = sqlite3_malloc(n + 1)) == NULL) {
    return WCSV_TEXT;
  }
  memcpy(buf, p, (size_t)n);
  buf[n] = 0;
  eRet = WCSV_REAL;
  if (!bReal) {
    long long v;
    errno = 0;
    v = strtoll(buf, &zEnd, 10);
    if (errno == 0 && *zEnd == 0) {
      *pi = v;
      eRet = WCSV_INT;
    }
  }
  if (eRet == WCSV_REAL) {
    double r = strtod(buf, &zEnd);
    /* (not -2^63 itself: an integer text past INT64's range rounds to it,
    ** as "9223372036854775808" rounds to 2^63) */
    if (r > -9223372036854775808.0 && r < 9223372036854775808.0 &&
        r == floor(r)) {
      *pi = (sqlite3_int64)r;
      eRet = WCSV_INT;
    } else {
      *pr = r;
    }
  }
  if (buf != aBuf) sqlite3_free(buf);
  return eRet;
}

char *wcsIntFieldErr(const char *zField, const char *zType, sqlite3_value *v) {
  const int t = sqlite3_value_type(v);
  sqlite3_int64 x;
  double r = 0;
  int e = t == SQLITE_FLOAT ? WCSV_REAL : WCSV_BLOB;
  char *zQ, *z;
  if (t == SQLITE_FLOAT) r = sqlite3_value_double(v);
  if (t == SQLITE_TEXT) {
    e = wcsTextToNumber(sqlite3_value_text(v), sqlite3_value_bytes(v), &x, &r);
  }
  zQ = t == SQLITE_BLOB    ? NULL
       : t == SQLITE_FLOAT ? sqlite3_mprintf("%!.17g", r) /* all digits */
                           : sqlite3_mprintf("%.60Q", sqlite3_value_text(v));
  z = sqlite3_mprintf(
      "key field %s is %s: cannot store %s%s%s%s%s", zField, zType,
      t == SQLITE_BLOB                               ? "a BLOB"
      : e == WCSV_REAL && r == floor(r) && !isinf(r) ? "the out-of-range"
      : t == SQLITE_NULL                             ? "a NULL"
                                                     : "the non-integer",
      t == SQLITE_TEXT    ? " TEXT "
      : t == SQLITE_FLOAT ? " REAL "
                          : "",
      zQ && t != SQLITE_NULL ? zQ : "",
      e == WCSV_REAL && r == floor(r) && !isinf(r)
          ? " (INT64 holds -9223372036854775808 to 9223372036854775807)"
          : "",
      t == SQLITE_FLOAT && r == -9223372036854775808.0
          ? "; a REAL -2^63 is also what -9223372036854775809 rounds to: "
            "write the INTEGER -9223372036854775808"
          : "");
  sqlite3_free(zQ);
  return z;
}

void wcsValFromSql(WcsVal *pV, sqlite3_value *pVal) {
  memset(pV, 0, sizeof(*pV));
  switch (sqlite3_value_type(pVal)) {
  case SQLITE_INTEGER:
    pV->eType = WCSV_INT;
    pV->i = sqlite3_value_int64(pVal);
    break;
  case SQLITE_FLOAT:
    pV->eType = WCSV_REAL;
    pV->r = sqlite3_value_double(pVal);
    break;
  case SQLITE_TEXT:
    pV->eType = WCSV_TEXT;
    pV->p = sqlite3_value_text(pVal);
    pV->n = sqlite3_value_bytes(pVal);
    break;
  case SQLITE_BLOB:
    pV->eType = WCSV_BLOB;
    pV->p = sqlite3_value_blob(pVal);
    pV->n = sqlite3_value_bytes(pVal);
    break;
  default:
    pV->eType = WCSV_NULL;
    break;
  }
}

/* ====================================================================
** Encoding a value for a cell
** ==================================================================== */

static const char *valTypeName(int eType) {
  switch (eType) {
  case WCSV_INT:
    return "INTEGER";
  case WCSV_REAL:
    return "REAL";
  case WCSV_TEXT:
    return "TEXT";
  case WCSV_BLOB:
    return "BLOB";
  case WCSV_JSON:
    return "a JSON object or array";
  default:
    return "NULL";
  }
}

static int mismatch(char **pzErr, const char *zCol, const char *zType,
                    const WcsVal *v) {
  if (pzErr && *pzErr == 0) {
    if (v->eType == WCSV_TEXT) {
      char *zEsc = wcs_escape(v->p, (size_t)v->n, 40);
      *pzErr = sqlite3_mprintf("column %s is %s: cannot store TEXT '%s'", zCol,
                               zType, zEsc ? zEsc : "");
      free(zEsc);
    } else if (v->eType == WCSV_REAL) {
      *pzErr = sqlite3_mprintf("column %s is %s: cannot store REAL %!.15g",
                               zCol, zType, v->r);
    } else {
      *pzErr = sqlite3_mprintf("column %s is %s: cannot store %s", zCol, zType,
                               valTypeName(v->eType));
    }
  }
  return WCS_MISMATCH;
}

static int putBe64(wcs_buf *pOut, uint64_t u) {
  uint8_t a[8];
  wcs_put64be(a, u);
  return wcs_buf_append(pOut, a, 8);
}

/* The integer a value stands for, as an INTEGER column would take it. */
static int valToInt(const WcsVal *v, sqlite3_int64 *pi) {
  switch (v->eType) {
  case WCSV_INT:
    *pi = v->i;
    return 1;
  case WCSV_REAL:
    return wcsRealToInt(v->r, pi);
  case WCSV_TEXT: {
    double rr;
    int e = wcsTextToNumber(v->p, v->n, pi, &rr);
    return e == WCSV_INT;
  }
  default:
    return 0;
  }
}

static int valToReal(const WcsVal *v, double *pr) {
  switch (v->eType) {
  case WCSV_INT:
    *pr = (double)v->i;
    return 1;
  case WCSV_REAL:
    *pr = v->r;
    return 1;
  case WCSV_TEXT: {
    sqlite3_int64 i;
    int e = wcsTextToNumber(v->p, v->n, &i, pr);
    if (e == WCSV_INT) *pr = (double)i;
    return e != WCSV_TEXT;
  }
  default:
    return 0;
  }
}

/* Text rendering of a number as SQLite's TEXT affinity makes it. */
static int appendNumberText(wcs_buf *pOut, const WcsVal *v) {
  char z[64];
  if (v->eType == WCSV_INT) {
    sqlite3_snprintf(sizeof(z), z, "%lld", v->i);
  } else {
    sqlite3_snprintf(sizeof(z), z, "%!.15g", v->r);
  }
  return wcs_buf_append(pOut, z, strlen(z));
}

int wcsCellBytes(const ks_qualifier *pQual, const WcsVal *v, uint8_t aInt[8],
                 const void **pp, size_t *pn) {
  if (v->eType == WCSV_BLOB ||
      (pQual && v->eType == WCSV_TEXT &&
       (pQual->eVType == KS_V_BYTES ||
        (pQual->eVType == KS_V_STRING && ks_utf8_valid(v->p, v->n, NULL))))) {
    *pp = v->p ? (const void *)v->p : (const void *)"";
    *pn = (size_t)v->n;
    return 1;
  }
  if (pQual && v->eType == WCSV_INT && pQual->eVType == KS_V_INT64 &&
      pQual->eEnc != KS_ENC_DECIMAL) {
    wcs_put64be(aInt, (uint64_t)v->i);
    *pp = aInt;
    *pn = 8;
    return 1;
  }
  return 0;
}

/* WCS_OK if text v is valid UTF-8; else WCS_MISMATCH with an error
** naming column zCol of type zType (STRING and JSON columns hold UTF-8,
** as a STRING key field does: such text would read back as a BLOB). */
static int notUtf8(const WcsVal *v, const char *zType, const char *zCol,
                   char **pzErr) {
  int iBad = 0;
  if (ks_utf8_valid(v->p, v->n, &iBad)) return WCS_OK;
  if (pzErr && *pzErr == 0) {
    *pzErr = sqlite3_mprintf(
        "column %s is %s: the TEXT is not valid UTF-8 (byte %d, 0x%02x); "
        "write a BLOB to store other bytes",
        zCol, zType, iBad, iBad < v->n ? v->p[iBad] : 0);
  }
  return WCS_MISMATCH;
}

int wcsEncodeCell(const ks_qualifier *pQual, const WcsVal *v, wcs_buf *pOut,
                  const char *zCol, char **pzErr) {
  sqlite3_int64 i;
  double r;
  uint8_t aInt[8];
  const void *pAs;
  size_t nAs;
  pOut->n = 0;
  if (wcsCellBytes(pQual, v, aInt, &pAs, &nAs)) {
    /* raw bytes as given whatever the declared type, text into a string
    ** or bytes column, an integer into a big-endian INT64 column */
    return wcs_buf_append(pOut, pAs, nAs);
  }
  if (pQual == NULL) {
    switch (v->eType) {
    case WCSV_INT:
      return putBe64(pOut, (uint64_t)v->i);
    case WCSV_REAL: {
      uint64_t u;
      memcpy(&u, &v->r, 8);
      return putBe64(pOut, u);
    }
    case WCSV_TEXT:
    case WCSV_JSON:
      return wcs_buf_append(pOut, v->p, (size_t)v->n);
    default:
      return mismatch(pzErr, zCol, "BYTES", v);
    }
  }
  switch (pQual->eVType) {
  case KS_V_INT64:
    if (!valToInt(v, &i)) return mismatch(pzErr, zCol, "INT64", v);
    if (pQual->eEnc == KS_ENC_DECIMAL) {
      char z[32];
      if (pQual->nWidth > 0) {
        if (i < 0) {
          if (pzErr && *pzErr == 0) {
            *pzErr = sqlite3_mprintf(
                "column %s is INT64 DECIMAL(%d): %lld is negative", zCol,
                pQual->nWidth, i);
          }
          return WCS_RANGE;
        }
        sqlite3_snprintf(sizeof(z), z, "%0*lld", pQual->nWidth, i);
        if ((int)strlen(z) > pQual->nWidth) {
          if (pzErr && *pzErr == 0) {
            *pzErr = sqlite3_mprintf(
                "column %s is INT64 DECIMAL(%d): %lld has more than %d digits",
                zCol, pQual->nWidth, i, pQual->nWidth);
          }
          return WCS_RANGE;
        }
      } else {
        sqlite3_snprintf(sizeof(z), z, "%lld", i);
      }
      return wcs_buf_append(pOut, z, strlen(z));
    }
    return putBe64(pOut, (uint64_t)i);
  case KS_V_FLOAT64: {
    uint64_t u;
    if (!valToReal(v, &r)) return mismatch(pzErr, zCol, "FLOAT64", v);
    memcpy(&u, &r, 8);
    return putBe64(pOut, u);
  }
  case KS_V_STRING:
  case KS_V_BYTES:
    if (pQual->eVType == KS_V_STRING &&
        (v->eType == WCSV_TEXT || v->eType == WCSV_JSON)) {
      int rc = notUtf8(v, "STRING", zCol, pzErr);
      if (rc != WCS_OK) return rc;
    }
    if (v->eType == WCSV_TEXT || v->eType == WCSV_JSON) {
      return wcs_buf_append(pOut, v->p, (size_t)v->n);
    }
    if (v->eType == WCSV_INT || v->eType == WCSV_REAL) {
      return appendNumberText(pOut, v);
    }
    return mismatch(pzErr, zCol,
                    pQual->eVType == KS_V_STRING ? "STRING" : "BYTES", v);
  case KS_V_JSON:
    if (v->eType == WCSV_REAL && isinf(v->r)) {
      /* valid JSON that reads back as the infinity, not SQLite 3.40's
      ** text "Inf" */
      const char *z = v->r > 0 ? "9.0e+999" : "-9.0e+999";
      return wcs_buf_append(pOut, z, strlen(z));
    }
    if (v->eType == WCSV_INT || v->eType == WCSV_REAL) {
      return appendNumberText(pOut, v);
    }
    if (v->eType == WCSV_TEXT || v->eType == WCSV_JSON) {
      int rc = notUtf8(v, "JSON", zCol, pzErr);
      if (rc != WCS_OK) return rc;
    }
    if (v->eType == WCSV_JSON ||
        (v->eType == WCSV_TEXT && wcsJsonValid((const char *)v->p, v->n))) {
      return wcs_buf_append(pOut, v->p, (size_t)v->n);
    }
    if (v->eType == WCSV_TEXT) {
      if (pzErr && *pzErr == 0) {
        char *zEsc = wcs_escape(v->p, (size_t)v->n, 40);
        *pzErr = sqlite3_mprintf("column %s is JSON: '%s' is not valid JSON",
                                 zCol, zEsc ? zEsc : "");
        free(zEsc);
      }
      return WCS_MISMATCH;
    }
    return mismatch(pzErr, zCol, "JSON", v);
  }
  return mismatch(pzErr, zCol, "?", v);
}

/* ====================================================================
** Cell value -> SQL value
** ==================================================================== */

/* Parse unpadded or padded ASCII decimal digits (optional '-'). */
static int parseDecimal(const uint8_t *p, size_t n, sqlite3_int64 *pi) {
  size_t k = 0;
  int bNeg = 0;
  uint64_t u = 0;
  if (n == 0 || n > 20) return 0;
  if (p[0] == '-') {
    bNeg = 1;
    k = 1;
    if (n == 1) return 0;
  }
  for (; k < n; k++) {
    if (p[k] < '0' || p[k] > '9') return 0;
    if (u > (UINT64_MAX - 9) / 10) return 0;
    u = u * 10 + (uint64_t)(p[k] - '0');
  }
  if (bNeg) {
    if (u > (uint64_t)INT64_MAX + 1) return 0;
    *pi = (sqlite3_int64)(0 - u);
  } else {
    if (u > (uint64_t)INT64_MAX) return 0;
    *pi = (sqlite3_int64)u;
  }
  return 1;
}

/* Decode a declared value: 1 and *pi or *pr filled (return WCSV_INT/REAL), or
** 0 if the bytes do not hold the type. */
int wcsDecodeNumber(const ks_qualifier *pQual, int eAgg, const uint8_t *p,
                    size_t n, sqlite3_int64 *pi, double *pr) {
  if (eAgg == KS_AGG_SUM || eAgg == KS_AGG_MIN || eAgg == KS_AGG_MAX) {
    if (n == 8) {
      *pi = (sqlite3_int64)wcs_get64be(p);
      return WCSV_INT;
    }
    return 0;
  }
  /* an HLL cell is a sketch whatever the column's type: a one-element
  ** sketch can be 8 bytes long, and would read as a made-up integer */
  if (pQual == NULL || eAgg == KS_AGG_HLL) return 0;
  if (pQual->eVType == KS_V_INT64) {
    if (pQual->eEnc == KS_ENC_DECIMAL) {
      /* only the bytes an INT64 DECIMAL writes (exactly nWidth digits, or
      ** the integer's shortest text): others, '12' in a DECIMAL(3) say,
      ** would not be written back the same (doc/sql.md §4) */
      size_t k = n > 0 && p[0] == '-';
      if (pQual->nWidth > 0 ? k || n != (size_t)pQual->nWidth
                            : n == k || (p[k] == '0' && (k || n > 1))) {
        return 0;
      }
      return parseDecimal(p, n, pi) ? WCSV_INT : 0;
    }
    if (n == 8) {
      *pi = (sqlite3_int64)wcs_get64be(p);
      return WCSV_INT;
    }
    return 0;
  }
  if (pQual->eVType == KS_V_FLOAT64) {
    if (n == 8) {
      uint64_t u = wcs_get64be(p);
      memcpy(pr, &u, 8);
      return WCSV_REAL;
    }
    return 0;
  }
  return 0;
}

static int isPlainText(const uint8_t *p, size_t n);

void wcsResultCell(sqlite3_context *ctx, const ks_qualifier *pQual, int eAgg,
                   const void *pv, size_t n) {
  const uint8_t *p = (const uint8_t *)pv;
  sqlite3_int64 i;
  double r;
  int e = wcsDecodeNumber(pQual, eAgg, p, n, &i, &r);
  if (e == WCSV_INT) {
    sqlite3_result_int64(ctx, i);
    return;
  }
  if (e == WCSV_REAL) {
    if (isnan(r))
      sqlite3_result_blob(ctx, p, (int)n, SQLITE_TRANSIENT);
    else
      sqlite3_result_double(ctx, r);
    return;
  }
  if (pQual && pQual->eVType == KS_V_BYTES) {
    sqlite3_result_blob(ctx, n ? p : (const void *)"", (int)n,
                        SQLITE_TRANSIENT);
    return;
  }
  /* an undeclared value is text as its family's JSON shows it: plain
  ** text (an 8-byte counter, say, is valid UTF-8, NULs and all, but shows
  ** as {"$hex": ...} there and is a BLOB here) */
  if (eAgg != KS_AGG_HLL &&
      (pQual == NULL || pQual->eVType == KS_V_STRING ||
       pQual->eVType == KS_V_JSON) &&
      (pQual == NULL ? isPlainText(p, n) : ks_utf8_valid(p, (int)n, NULL)) &&
      (pQual == NULL || pQual->eVType != KS_V_JSON ||
       wcsJsonValid((const char *)p, (int)n))) {
    sqlite3_result_text(ctx, n ? (const char *)p : "", (int)n,
                        SQLITE_TRANSIENT);
    if (pQual && pQual->eVType == KS_V_JSON) {
      sqlite3_result_subtype(ctx, WCS_JSON_SUBTYPE);
    }
    return;
  }
  sqlite3_result_blob(ctx, n ? p : (const void *)"", (int)n, SQLITE_TRANSIENT);
}

/* ====================================================================
** JSON output
** ==================================================================== */

static const char hexDigit[] = "0123456789abcdef";

static int appendStr(wcs_buf *pOut, const char *z) {
  return wcs_buf_append(pOut, z, strlen(z));
}

int wcsJsonString(wcs_buf *pOut, const uint8_t *p, size_t n) {
  size_t i = 0, iRun = 0;
  int rc;
  while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\') {
    i++;
  }
  if (i == n) {
    /* printable ASCII with nothing to escape (qualifier names, most
    ** text): quoted in one copy */
    if (wcs_buf_reserve(pOut, n + 2) != WCS_OK) return WCS_NOMEM;
    pOut->a[pOut->n++] = '"';
    if (n > 0) memcpy(pOut->a + pOut->n, p, n);
    pOut->n += n;
    pOut->a[pOut->n++] = '"';
    return WCS_OK;
  }
  rc = wcs_buf_append(pOut, "\"", 1);
  while (rc == WCS_OK && i < n) {
    uint8_t c = p[i];
    char esc[8];
    int nEsc = 0, k;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      i++;
      continue;
    }
    if (c >= 0x80) {
      k = utf8Len(p + i, (int)(n - i));
      if (k > 0) {
        i += (size_t)k;
        continue;
      }
      /* an invalid byte: \udcXX */
      memcpy(esc, "\\udc", 4);
      esc[4] = hexDigit[c >> 4];
      esc[5] = hexDigit[c & 15];
      nEsc = 6;
    } else if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      nEsc = 2;
    } else if (c == '\n') {
      memcpy(esc, "\\n", 2), nEsc = 2;
    } else if (c == '\t') {
      memcpy(esc, "\\t", 2), nEsc = 2;
    } else if (c == '\r') {
      memcpy(esc, "\\r", 2), nEsc = 2;
    } else {
      memcpy(esc, "\\u00", 4);
      esc[4] = hexDigit[c >> 4];
      esc[5] = hexDigit[c & 15];
      nEsc = 6;
    }
    rc = wcs_buf_append(pOut, p + iRun, i - iRun);
    if (rc == WCS_OK) rc = wcs_buf_append(pOut, esc, (size_t)nEsc);
    i++;
    iRun = i;
  }
  if (rc == WCS_OK) rc = wcs_buf_append(pOut, p + iRun, i - iRun);
  if (rc == WCS_OK) rc = wcs_buf_append(pOut, "\"", 1);
  return rc;
}

static int appendHexObject(wcs_buf *pOut, const uint8_t *p, size_t n) {
  size_t i;
  int rc = appendStr(pOut, "{\"$hex\":\"");
  if (rc == WCS_OK) rc = wcs_buf_reserve(pOut, n * 2 + 2);
  if (rc != WCS_OK) return rc;
  for (i = 0; i < n; i++) {
    pOut->a[pOut->n++] = (uint8_t)hexDigit[p[i] >> 4];
    pOut->a[pOut->n++] = (uint8_t)hexDigit[p[i] & 15];
  }
  return appendStr(pOut, "\"}");
}

/* 1 if the bytes read well as a JSON string: valid UTF-8, no control
** characters but tab, CR and LF. */
static int isPlainText(const uint8_t *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') {
      return 0;
    }
  }
  return ks_utf8_valid(p, (int)n, NULL);
}

int wcsJsonBytes(wcs_buf *pOut, const uint8_t *p, size_t n) {
  if (isPlainText(p, n)) return wcsJsonString(pOut, p, n);
  return appendHexObject(pOut, p, n);
}

static int jsonReadsAsOther(const uint8_t *p, size_t n);

/* Append integer i as decimal text. A family column shows every integer
** cell of every row read, where sqlite3_snprintf's format parsing cost
** more than the rest of the cell. */
static int appendInt(wcs_buf *pOut, sqlite3_int64 i) {
  char z[20]; /* a sign and 19 digits at most, written from the end */
  uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
  int k = (int)sizeof z;
  do {
    z[--k] = (char)('0' + u % 10);
    u /= 10;
  } while (u > 0);
  if (i < 0) z[--k] = '-';
  return wcs_buf_append(pOut, z + k, sizeof z - (size_t)k);
}

/* Append the JSON form of one cell value. */
static int appendCellJson(wcs_buf *pOut, const ks_qualifier *pQual, int eAgg,
                          const uint8_t *p, size_t n) {
  sqlite3_int64 i;
  double r;
  char z[64];
  int e = wcsDecodeNumber(pQual, eAgg, p, n, &i, &r);
  if (e == WCSV_INT) return appendInt(pOut, i);
  if (e == WCSV_REAL && isinf(r)) {
    /* JSON has no infinity: the number past FLOAT64's range that reads
    ** back as it (SQLite's own spelling since 3.45) */
    return appendStr(pOut, r > 0 ? "9.0e+999" : "-9.0e+999");
  }
  if (e == WCSV_REAL && isfinite(r)) {
    /* -0.0 keeps its sign (its bytes are not those of 0.0) */
    if (r == 0.0 && signbit(r)) return appendStr(pOut, "-0.0");
    sqlite3_snprintf(sizeof(z), z, "%!.17g", r);
    return appendStr(pOut, z);
  }
  if (eAgg == KS_AGG_HLL) return appendHexObject(pOut, p, n);
  if (pQual) {
    switch (pQual->eVType) {
    case KS_V_BYTES:
      return appendHexObject(pOut, p, n);
    case KS_V_STRING:
      if (ks_utf8_valid(p, (int)n, NULL)) return wcsJsonString(pOut, p, n);
      break;
    case KS_V_JSON:
      if (ks_utf8_valid(p, (int)n, NULL) &&
          wcsJsonValid((const char *)p, (int)n) && !jsonReadsAsOther(p, n)) {
        return wcs_buf_append(pOut, p, n);
      }
      break;
    default:
      break;
    }
    /* bytes the declared type does not decode: as given, so that writing
    ** the JSON back (a $hex is a BLOB, stored as given) keeps them */
    return appendHexObject(pOut, p, n);
  }
  return wcsJsonBytes(pOut, p, n);
}

/* The declared qualifier of family iFamily named p[0..n-1], or NULL. */
static const ks_qualifier *findDeclared(const ks_schema *pSchema, int iFamily,
                                        const void *p, size_t n) {
  const ks_family *pFam = &pSchema->aFamily[iFamily];
  int k;
  for (k = 0; k < pFam->nQual; k++) {
    const ks_qualifier *q = &pSchema->aQual[pFam->iFirstQual + k];
    /* (names are 1 or more bytes: the first one rules most out) */
    if (n > 0 && q->zName[0] == *(const char *)p && strlen(q->zName) == n &&
        memcmp(q->zName, p, n) == 0) {
      return q;
    }
  }
  return NULL;
}

int wcsFamilyJson(wcs_buf *pOut, const ks_schema *pSchema, int iFamily,
                  const wcs_cell *aCell, int nCell) {
  int i, rc = wcs_buf_append(pOut, "{", 1);
  int eAgg = pSchema->aFamily[iFamily].eAgg;
  const wcs_cell *pPrev = NULL;
  for (i = 0; rc == WCS_OK && i < nCell; i++) {
    const wcs_cell *c = &aCell[i];
    if (pPrev && pPrev->nQual == c->nQual &&
        memcmp(pPrev->pQual, c->pQual, c->nQual) == 0) {
      continue; /* an older version of the same column */
    }
    if (pPrev) rc = wcs_buf_append(pOut, ",", 1);
    pPrev = c;
    if (rc == WCS_OK) rc = wcsJsonString(pOut, c->pQual, c->nQual);
    if (rc == WCS_OK) rc = wcs_buf_append(pOut, ":", 1);
    if (rc == WCS_OK) {
      rc = appendCellJson(pOut,
                          findDeclared(pSchema, iFamily, c->pQual, c->nQual),
                          eAgg, c->pVal, c->nVal);
    }
  }
  if (rc == WCS_OK) rc = wcs_buf_append(pOut, "}", 1);
  return rc;
}

/* ====================================================================
** JSON input
** ==================================================================== */

typedef struct JParse {
  const char *z;    /* input */
  int n;            /* bytes */
  int i;            /* position */
  int nDepth;       /* nesting depth, bounded */
  const char *zErr; /* static description of the first error */
} JParse;

#define JSON_MAX_DEPTH 1000

static void jSkipSpace(JParse *p) {
  while (p->i < p->n && (p->z[p->i] == ' ' || p->z[p->i] == '\t' ||
                         p->z[p->i] == '\n' || p->z[p->i] == '\r')) {
    p->i++;
  }
}

static int jFail(JParse *p, const char *zErr) {
  if (p->zErr == 0) p->zErr = zErr;
  return 0;
}

static int hexVal(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int read4Hex(JParse *p, int at, unsigned *pU) {
  unsigned u = 0;
  int k;
  if (at + 4 > p->n) return 0;
  for (k = 0; k < 4; k++) {
    int h = hexVal((unsigned char)p->z[at + k]);
    if (h < 0) return 0;
    u = u << 4 | (unsigned)h;
  }
  *pU = u;
  return 1;
}

static int putUtf8(wcs_buf *pOut, unsigned c) {
  uint8_t a[4];
  int n;
  if (c < 0x80) {
    a[0] = (uint8_t)c, n = 1;
  } else if (c < 0x800) {
    a[0] = (uint8_t)(0xC0 | c >> 6), a[1] = (uint8_t)(0x80 | (c & 0x3F));
    n = 2;
  } else if (c < 0x10000) {
    a[0] = (uint8_t)(0xE0 | c >> 12);
    a[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    a[2] = (uint8_t)(0x80 | (c & 0x3F));
    n = 3;
  } else {
    a[0] = (uint8_t)(0xF0 | c >> 18);
    a[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    a[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    a[3] = (uint8_t)(0x80 | (c & 0x3F));
    n = 4;
  }
  return wcs_buf_append(pOut, a, (size_t)n) == WCS_OK;
}

/* Parse a string at p->i (on the opening quote). If pOut is not NULL the
** decoded bytes are appended to it. Returns 1 on success. */
static int jString(JParse *p, wcs_buf *pOut) {
  int iRun;
  if (p->i >= p->n || p->z[p->i] != '"') return jFail(p, "expected a string");
  p->i++;
  iRun = p->i;
  while (p->i < p->n) {
    unsigned char c = (unsigned char)p->z[p->i];
    if (c == '"') {
      if (pOut && wcs_buf_append(pOut, p->z + iRun, (size_t)(p->i - iRun)))
        return jFail(p, "out of memory");
      p->i++;
      return 1;
    }
    if (c < 0x20) return jFail(p, "control character in a string");
    if (c != '\\') {
      p->i++;
      continue;
    }
    if (pOut && wcs_buf_append(pOut, p->z + iRun, (size_t)(p->i - iRun)))
      return jFail(p, "out of memory");
    if (p->i + 1 >= p->n) return jFail(p, "unterminated string");
    c = (unsigned char)p->z[p->i + 1];
    p->i += 2;
    if (c == 'u') {
      unsigned u, u2;
      if (!read4Hex(p, p->i, &u)) return jFail(p, "bad \\u escape");
      p->i += 4;
      if (u >= 0xD800 && u <= 0xDBFF) {
        /* a high surrogate must be followed by a low one */
        if (p->i + 6 <= p->n && p->z[p->i] == '\\' && p->z[p->i + 1] == 'u' &&
            read4Hex(p, p->i + 2, &u2) && u2 >= 0xDC00 && u2 <= 0xDFFF) {
          p->i += 6;
          u = 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00);
        } else {
          return jFail(p, "unpaired surrogate in a \\u escape");
        }
        if (pOut && !putUtf8(pOut, u)) return jFail(p, "out of memory");
      } else if (u >= 0xDC00 && u <= 0xDFFF) {
        /* a lone low surrogate: \udc80..\udcff stand for raw bytes */
        if (u < 0xDC80 || u > 0xDCFF) {
          return jFail(p, "unpaired surrogate in a \\u escape");
        }
        if (pOut) {
          uint8_t b = (uint8_t)(u - 0xDC00);
          if (wcs_buf_append(pOut, &b, 1)) return jFail(p, "out of memory");
        }
      } else if (pOut && !putUtf8(pOut, u)) {
        return jFail(p, "out of memory");
      }
    } else {
      char d;
      switch (c) {
      case '"':
        d = '"';
        break;
      case '\\':
        d = '\\';
        break;
      case '/':
        d = '/';
        break;
      case 'b':
        d = '\b';
        break;
      case 'f':
        d = '\f';
        break;
      case 'n':
        d = '\n';
        break;
      case 'r':
        d = '\r';
        break;
      case 't':
        d = '\t';
        break;
      default:
        return jFail(p, "bad escape in a string");
      }
      if (pOut && wcs_buf_append(pOut, &d, 1)) return jFail(p, "out of memory");
    }
    iRun = p->i;
  }
  return jFail(p, "unterminated string");
}

/* Parse a number; sets *pbReal. */
static int jNumber(JParse *p, int *pbReal) {
  int i = p->i, bDigit = 0;
  *pbReal = 0;
  if (i < p->n && p->z[i] == '-') i++;
  if (i < p->n && p->z[i] == '0') {
    i++, bDigit = 1;
  } else {
    while (i < p->n && p->z[i] >= '0' && p->z[i] <= '9')
      i++, bDigit = 1;
  }
  if (!bDigit) return jFail(p, "bad number");
  if (i < p->n && p->z[i] == '.') {
    int b = 0;
    *pbReal = 1;
    for (i++; i < p->n && p->z[i] >= '0' && p->z[i] <= '9'; i++)
      b = 1;
    if (!b) return jFail(p, "bad number");
  }
  if (i < p->n && (p->z[i] == 'e' || p->z[i] == 'E')) {
    int b = 0;
    *pbReal = 1;
    i++;
    if (i < p->n && (p->z[i] == '+' || p->z[i] == '-')) i++;
    for (; i < p->n && p->z[i] >= '0' && p->z[i] <= '9'; i++)
      b = 1;
    if (!b) return jFail(p, "bad number");
  }
  p->i = i;
  return 1;
}

static int jLiteral(JParse *p, const char *zWord) {
  int n = (int)strlen(zWord);
  if (p->i + n <= p->n && memcmp(p->z + p->i, zWord, (size_t)n) == 0) {
    p->i += n;
    return 1;
  }
  return jFail(p, "unexpected character");
}

/* Parse any value (validation only). */
static int jValue(JParse *p) {
  int bReal;
  jSkipSpace(p);
  if (p->i >= p->n) return jFail(p, "unexpected end");
  switch (p->z[p->i]) {
  case '{':
  case '[': {
    char cEnd = p->z[p->i] == '{' ? '}' : ']';
    int bObj = cEnd == '}';
    if (++p->nDepth > JSON_MAX_DEPTH) return jFail(p, "nested too deeply");
    p->i++;
    jSkipSpace(p);
    if (p->i < p->n && p->z[p->i] == cEnd) {
      p->i++;
      p->nDepth--;
      return 1;
    }
    for (;;) {
      if (bObj) {
        jSkipSpace(p);
        if (!jString(p, NULL)) return 0;
        jSkipSpace(p);
        if (p->i >= p->n || p->z[p->i] != ':') return jFail(p, "expected ':'");
        p->i++;
      }
      if (!jValue(p)) return 0;
      jSkipSpace(p);
      if (p->i < p->n && p->z[p->i] == ',') {
        p->i++;
        continue;
      }
      if (p->i < p->n && p->z[p->i] == cEnd) {
        p->i++;
        p->nDepth--;
        return 1;
      }
      return jFail(p, bObj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  case '"':
    return jString(p, NULL);
  case 't':
    return jLiteral(p, "true");
  case 'f':
    return jLiteral(p, "false");
  case 'n':
    return jLiteral(p, "null");
  default:
    return jNumber(p, &bReal);
  }
}

int wcsJsonValid(const char *z, int n) {
  JParse p;
  memset(&p, 0, sizeof(p));
  p.z = z;
  p.n = n;
  if (!jValue(&p)) return 0;
  jSkipSpace(&p);
  return p.i == p.n;
}

/* 1 if the next member key of the object q is in (after white space) is
** "$hex", q then past it; else 0 (q moved). */
static int jHexKeyNext(JParse *q) {
  wcs_buf key = {0};
  int bHex;
  jSkipSpace(q);
  bHex = q->i < q->n && q->z[q->i] == '"' && jString(q, &key) &&
         key.n == 4 && memcmp(key.a, "$hex", 4) == 0;
  wcs_buf_free(&key);
  return bHex;
}

/* The rest of an object whose '{' q has just passed, if it is
** "$hex": "<hex digits>" } (white space allowed between the tokens): 1
** with the bytes appended to pOut and q past the '}'; -1 if it is led by
** the key "$hex" but is anything else; 0 if it is not led by "$hex". On 0
** and -1 pOut is as it was. */
static int jHexObject(JParse *q, wcs_buf *pOut) {
  size_t iStr = pOut->n, nHex, k;
  if (!jHexKeyNext(q)) return 0;
  jSkipSpace(q);
  if (q->i >= q->n || q->z[q->i] != ':') return -1;
  q->i++;
  jSkipSpace(q);
  if (!jString(q, pOut)) {
    pOut->n = iStr;
    return -1;
  }
  nHex = pOut->n - iStr;
  jSkipSpace(q);
  if (q->i >= q->n || q->z[q->i] != '}' || (nHex & 1) != 0) {
    pOut->n = iStr;
    return -1;
  }
  for (k = 0; k < nHex; k += 2) {
    int h = hexVal(pOut->a[iStr + k]), l = hexVal(pOut->a[iStr + k + 1]);
    if (h < 0 || l < 0) {
      pOut->n = iStr;
      return -1;
    }
    pOut->a[iStr + k / 2] = (uint8_t)(h << 4 | l);
  }
  pOut->n = iStr + nHex / 2;
  q->i++;
  return 1;
}

/* z[0..n-1] as one JSON value alone (white space around it allowed) of
** the kind bHex says, {"$hex": ...} or a string, its bytes appended to
** pOut: WCS_OK, WCS_MISMATCH (pOut as it was), or WCS_NOMEM. */
static int jsonWholeBytes(const char *z, int n, int bHex, wcs_buf *pOut) {
  JParse q;
  size_t iStr = pOut->n;
  int bOk;
  memset(&q, 0, sizeof(q));
  q.z = z;
  q.n = n;
  jSkipSpace(&q);
  if (q.i >= q.n || q.z[q.i] != (bHex ? '{' : '"')) return WCS_MISMATCH;
  if (bHex) {
    q.i++;
    bOk = jHexObject(&q, pOut) > 0;
  } else {
    bOk = jString(&q, pOut);
  }
  if (bOk) {
    jSkipSpace(&q);
    if (q.i == q.n) return WCS_OK;
  }
  pOut->n = iStr;
  return q.zErr && strcmp(q.zErr, "out of memory") == 0 ? WCS_NOMEM
                                                        : WCS_MISMATCH;
}

int wcsJsonHexValue(const char *z, int n, wcs_buf *pOut) {
  return jsonWholeBytes(z, n, 1, pOut);
}

int wcsJsonStringValue(const char *z, int n, wcs_buf *pOut) {
  return jsonWholeBytes(z, n, 0, pOut);
}

/* 1 if the JSON text p[0..n-1] of a declared JSON column, shown as itself
** in a family object, would be written back as something else: null
** deletes the column, and an object led by the key "$hex" stands for
** bytes. Such text is shown as {"$hex":...} of its bytes instead. */
static int jsonReadsAsOther(const uint8_t *p, size_t n) {
  JParse q;
  memset(&q, 0, sizeof(q));
  q.z = (const char *)p;
  q.n = (int)n;
  jSkipSpace(&q);
  if (q.i < q.n && q.z[q.i] == 'n') return 1; /* valid JSON: it is null */
  if (q.i >= q.n || q.z[q.i] != '{') return 0;
  q.i++;
  return jHexKeyNext(&q);
}

static int setParseErr(JParse *p, char **pzErr) {
  if (pzErr && *pzErr == 0) {
    *pzErr = sqlite3_mprintf("malformed JSON object at byte %d: %s", p->i,
                             p->zErr ? p->zErr : "syntax error");
  }
  return WCS_MISMATCH;
}

/* Walk the members of the object at p->i. For each, xMember is called with
** the key (decoded into *pKeyBuf, offset iKey) and the value's span. */
typedef int (*MemberFn)(void *pCtx, JParse *p, wcs_buf *pArena, size_t iKey,
                        int iValStart);

static int walkObject(JParse *p, wcs_buf *pArena, void *pCtx, MemberFn xMember,
                      char **pzErr) {
  jSkipSpace(p);
  if (p->i >= p->n || p->z[p->i] != '{') {
    jFail(p, "expected a JSON object");
    return setParseErr(p, pzErr);
  }
  p->i++;
  jSkipSpace(p);
  if (p->i < p->n && p->z[p->i] == '}') {
    p->i++;
  } else {
    for (;;) {
      size_t iKey;
      int iVal, rc;
      jSkipSpace(p);
      iKey = pArena->n;
      if (!jString(p, pArena)) return setParseErr(p, pzErr);
      jSkipSpace(p);
      if (p->i >= p->n || p->z[p->i] != ':') {
        jFail(p, "expected ':'");
        return setParseErr(p, pzErr);
      }
      p->i++;
      jSkipSpace(p);
      iVal = p->i;
      rc = xMember(pCtx, p, pArena, iKey, iVal);
      if (rc != WCS_OK) {
        if (rc == WCS_MISMATCH) return setParseErr(p, pzErr);
        return rc;
      }
      jSkipSpace(p);
      if (p->i < p->n && p->z[p->i] == ',') {
        p->i++;
        continue;
      }
      if (p->i < p->n && p->z[p->i] == '}') {
        p->i++;
        break;
      }
      jFail(p, "expected ',' or '}'");
      return setParseErr(p, pzErr);
    }
  }
  jSkipSpace(p);
  if (p->i != p->n) {
    jFail(p, "text after the object");
    return setParseErr(p, pzErr);
  }
  return WCS_OK;
}

/* Members are recorded with arena offsets first (the arena may move) and
** turned into pointers at the end. */
typedef struct ObjCtx {
  WcsObject *pObj;
  int nAlloc;
  size_t *aKeyOff; /* [nAlloc] key offsets in the arena */
  size_t *aValOff; /* [nAlloc] decoded string offsets (TEXT/BLOB), or -1 */
} ObjCtx;

static int objMember(void *pCtx, JParse *p, wcs_buf *pArena, size_t iKey,
                     int iVal) {
  ObjCtx *c = (ObjCtx *)pCtx;
  WcsObject *o = c->pObj;
  WcsMember *m;
  size_t nKey = pArena->n - iKey;
  if (o->nMember >= c->nAlloc) {
    int nNew = c->nAlloc ? c->nAlloc * 2 : 8;
    WcsMember *a =
        sqlite3_realloc64(o->aMember, (sqlite3_uint64)nNew * sizeof(*a));
    size_t *k = sqlite3_realloc64(c->aKeyOff, (sqlite3_uint64)nNew * 8);
    size_t *v;
    if (a) o->aMember = a;
    if (k) c->aKeyOff = k;
    if (!a || !k) return WCS_NOMEM;
    v = sqlite3_realloc64(c->aValOff, (sqlite3_uint64)nNew * 8);
    if (!v) return WCS_NOMEM;
    c->aValOff = v;
    c->nAlloc = nNew;
  }
  m = &o->aMember[o->nMember];
  memset(m, 0, sizeof(*m));
  m->nKey = (int)nKey;
  c->aKeyOff[o->nMember] = iKey;
  c->aValOff[o->nMember] = (size_t)-1;
  if (p->i >= p->n) return jFail(p, "unexpected end"), WCS_MISMATCH;
  switch (p->z[p->i]) {
  case '"': {
    size_t iStr = pArena->n;
    if (!jString(p, pArena)) return WCS_MISMATCH;
    m->v.eType = WCSV_TEXT;
    m->v.n = (int)(pArena->n - iStr);
    c->aValOff[o->nMember] = iStr;
    break;
  }
  case 't':
    if (!jLiteral(p, "true")) return WCS_MISMATCH;
    m->v.eType = WCSV_INT, m->v.i = 1;
    break;
  case 'f':
    if (!jLiteral(p, "false")) return WCS_MISMATCH;
    m->v.eType = WCSV_INT, m->v.i = 0;
    break;
  case 'n':
    if (!jLiteral(p, "null")) return WCS_MISMATCH;
    m->v.eType = WCSV_NULL;
    break;
  case '{':
  case '[': {
    int iStart = p->i;
    if (!jValue(p)) return WCS_MISMATCH;
    m->v.eType = WCSV_JSON;
    m->v.p = (const uint8_t *)p->z + iStart;
    m->v.n = p->i - iStart;
    /* {"$hex":"..."} stands for bytes; an object that starts with that
    ** key and is anything else is a mistake, not JSON text to store */
    if (p->z[iStart] == '{') {
      JParse q;
      size_t iStr = pArena->n;
      int r;
      memset(&q, 0, sizeof(q));
      q.z = p->z + iStart + 1;
      q.n = m->v.n - 1;
      r = jHexObject(&q, pArena);
      if (r > 0) {
        m->v.eType = WCSV_BLOB;
        m->v.n = (int)(pArena->n - iStr);
        c->aValOff[o->nMember] = iStr;
      } else if (r < 0) {
        p->i = iStart;
        jFail(p, "{\"$hex\": ...} must hold one string of an even number "
                 "of hex digits and nothing else");
        return WCS_MISMATCH;
      }
    }
    break;
  }
  default: {
    int bReal, iStart = p->i;
    char aBuf[64], *buf = aBuf;
    size_t nNum;
    if (!jNumber(p, &bReal)) return WCS_MISMATCH;
    /* the whole text, however long: a number of 70 digits or with 60
    ** zeros before its exponent is still one number */
    nNum = (size_t)(p->i - iStart);
    if (nNum >= sizeof(aBuf) && (buf = sqlite3_malloc64(nNum + 1)) == NULL) {
      return WCS_NOMEM;
    }
    memcpy(buf, p->z + iStart, nNum);
    buf[nNum] = 0;
    m->v.eType = WCSV_REAL;
    if (!bReal) {
      long long v;
      errno = 0;
      v = strtoll(buf, NULL, 10);
      if (errno == 0) {
        m->v.eType = WCSV_INT, m->v.i = v;
      } else {
        m->bWideInt = 1;
      }
    }
    if (m->v.eType == WCSV_REAL) m->v.r = strtod(buf, NULL);
    if (buf != aBuf) sqlite3_free(buf);
    break;
  }
  }
  m->pRaw = (const uint8_t *)p->z + iVal;
  m->nRaw = p->i - iVal;
  o->nMember++;
  return WCS_OK;
}

int wcsParseObject(const char *z, int n, WcsObject *pObj, char **pzErr) {
  JParse p;
  ObjCtx c;
  int rc, i;
  memset(&p, 0, sizeof(p));
  memset(&c, 0, sizeof(c));
  memset(pObj, 0, sizeof(*pObj));
  p.z = z;
  p.n = n;
  c.pObj = pObj;
  rc = walkObject(&p, &pObj->arena, &c, objMember, pzErr);
  if (rc == WCS_OK) {
    for (i = 0; i < pObj->nMember; i++) {
      WcsMember *m = &pObj->aMember[i];
      m->pKey = pObj->arena.a ? pObj->arena.a + c.aKeyOff[i] : (uint8_t *)"";
      if (c.aValOff[i] != (size_t)-1) {
        m->v.p =
            pObj->arena.a ? pObj->arena.a + c.aValOff[i] : (const uint8_t *)"";
      }
    }
  } else {
    wcsObjectClear(pObj);
  }
  sqlite3_free(c.aKeyOff);
  sqlite3_free(c.aValOff);
  return rc;
}

void wcsObjectClear(WcsObject *pObj) {
  sqlite3_free(pObj->aMember);
  wcs_buf_free(&pObj->arena);
  memset(pObj, 0, sizeof(*pObj));
}

typedef struct KeysCtx {
  void *pCtx;
  int (*xKey)(void *, const uint8_t *, int);
} KeysCtx;

static int keysMember(void *pCtx, JParse *p, wcs_buf *pArena, size_t iKey,
                      int iVal) {
  KeysCtx *k = (KeysCtx *)pCtx;
  int rc;
  if (!jValue(p)) return WCS_MISMATCH;
  rc = k->xKey(k->pCtx, pArena->a ? pArena->a + iKey : (const uint8_t *)"",
               (int)(pArena->n - iKey));
  pArena->n = iKey;
  return rc;
}

int wcsJsonKeys(const char *z, int n, void *pCtx,
                int (*xKey)(void *, const uint8_t *, int), char **pzErr) {
  JParse p;
  KeysCtx k;
  wcs_buf arena = {0};
  int rc;
  memset(&p, 0, sizeof(p));
  p.z = z;
  p.n = n;
  k.pCtx = pCtx;
  k.xKey = xKey;
  rc = walkObject(&p, &arena, &k, keysMember, pzErr);
  wcs_buf_free(&arena);
  return rc;
}
