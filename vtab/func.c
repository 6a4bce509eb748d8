/*
** func.c — the SQL functions of the wcs module (doc/sql.md, "Functions").
**
**   starts_with(a, b)                 1 if the bytes of a begin with b;
**                                     planned as a prefix scan on key
**                                     columns (xFindFunction in vtab.c)
**   to_int64(bytes)                   8-byte big-endian -> INTEGER
**   to_float64(bytes)                 8-byte big-endian IEEE -> REAL
**                                     (both also read a family column's
**                                     {"$hex": ...}, and take numbers as
**                                     they are)
**   map_keys(family)                  JSON array of a family's qualifiers
**   wcs_hll_count(state)              distinct count of an HLL state
**   wcs_key_encode(table, f1, ...)    row key BLOB for key field values
**   wcs_key_decode(table, key)        JSON array of a row key's fields
**   wcs_increment(table, key, family, qualifier, delta)
**                                     ReadModifyWrite increment; the new
**                                     value
**   wcs_delete_prefix(table, prefix)  delete every row whose key starts
**                                     with prefix (tenant removal; with
**                                     SALT, the key after its bucket
**                                     byte, in every bucket)
**   wcs_compact([table])              drop expired cells, compact
**   wcs_backup(table, dir)            a consistent copy of the table's
**                                     store in a new directory
**   wcs_stats([table])                statistics as JSON
**   wcs_alter(table, clauses)         add or change families (FAMILY
**                                     clauses); the new schema text
**   wcs_drop_family(table, family)    drop a family and its cells
**
** The first five are pure: SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS. The
** ones that name a table read the store's catalog, and some write or
** compact files: all are SQLITE_DIRECTONLY, so a view or trigger in a
** database file (a hostile schema) cannot call them.
**
** Writes (wcs_increment, wcs_delete_prefix) join the current SQLite
** transaction when it already writes to the same store, and so commit or
** roll back with it; otherwise each call commits on its own, atomically.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vtab/vtab.h"

SQLITE_EXTENSION_INIT3

/* Bytes of a BLOB or TEXT argument (numbers as their text). */
static const uint8_t *argBytes(sqlite3_value *v, int *pn) {
  const void *p = sqlite3_value_type(v) == SQLITE_BLOB
                      ? sqlite3_value_blob(v)
                      : (const void *)sqlite3_value_text(v);
  *pn = sqlite3_value_bytes(v);
  return p ? (const uint8_t *)p : (const uint8_t *)"";
}

void wcsStartsWithFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const uint8_t *a, *b;
  int na, nb;
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL ||
      sqlite3_value_type(argv[1]) == SQLITE_NULL) {
    return;
  }
  b = argBytes(argv[1], &nb);
  a = argBytes(argv[0], &na);
  sqlite3_result_int(ctx,
                     na >= nb && (nb == 0 || memcmp(a, b, (size_t)nb) == 0));
}

/* The bytes a BLOB or TEXT argument stands for: a TEXT that is the object
** {"$hex": "..."}, as a family column shows bytes that are not text (an
** undeclared counter, an HLL state), stands for those bytes, so that
** to_int64(stats -> 'hits') reads the counter, and so does a JSON string
** with the JSON subtype, as `->` gives a cell whose bytes are text; any
** other TEXT is its own bytes. *pTmp holds decoded bytes (the caller frees
** it). NULL with the error set if out of memory. */
static const uint8_t *cellBytes(sqlite3_context *ctx, sqlite3_value *v,
                                wcs_buf *pTmp, int *pn) {
  const uint8_t *p = argBytes(v, pn);
  if (sqlite3_value_type(v) == SQLITE_TEXT && *pn >= 2) {
    int rc =
        *pn >= 10 ? wcsJsonHexValue((const char *)p, *pn, pTmp) : WCS_MISMATCH;
    if (rc == WCS_MISMATCH && sqlite3_value_subtype(v) == WCS_JSON_SUBTYPE) {
      rc = wcsJsonStringValue((const char *)p, *pn, pTmp);
    }
    if (rc == WCS_NOMEM) {
      sqlite3_result_error_nomem(ctx);
      return NULL;
    }
    if (rc == WCS_OK) {
      *pn = (int)pTmp->n;
      return pTmp->a ? pTmp->a : (const uint8_t *)"";
    }
  }
  return p;
}

/*
** to_int64() and to_float64(): the 8 bytes of the argument decoded by
** xDecode, or an error naming the function zFunc. A number is taken as it
** is (what a declared INT64 or FLOAT64 column, or a history view's value
** of one, already reads as), so that one expression serves declared and
** undeclared qualifiers alike.
*/
static void eightBytes(sqlite3_context *ctx, sqlite3_value *v,
                       const char *zFunc,
                       void (*xDecode)(sqlite3_context *, const uint8_t *)) {
  int n, t = sqlite3_value_type(v);
  const uint8_t *p;
  wcs_buf tmp = {0};
  if (t == SQLITE_NULL) return;
  if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
    sqlite3_result_value(ctx, v);
    return;
  }
  p = cellBytes(ctx, v, &tmp, &n);
  if (p && n != 8) {
    char *z = sqlite3_mprintf("%s: expected 8 bytes, got %d", zFunc, n);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
  } else if (p) {
    xDecode(ctx, p);
  }
  wcs_buf_free(&tmp);
}

static void decodeInt64(sqlite3_context *ctx, const uint8_t *p) {
  sqlite3_result_int64(ctx, (sqlite3_int64)wcs_get64be(p));
}

static void decodeFloat64(sqlite3_context *ctx, const uint8_t *p) {
  uint64_t u = wcs_get64be(p);
  double r;
  memcpy(&r, &u, 8);
  if (isnan(r)) return; /* SQLite has no NaN: NULL */
  sqlite3_result_double(ctx, r);
}

/* A JSON number is taken as the number it writes: TEXT with the JSON
** subtype, as `cnt -> 'hits'` gives for an aggregate cell (which a family
** column shows as a number) or a number in a declared JSON column, gets
** numeric affinity, as `->>` would have given it. Other JSON (a string,
** an object such as {"$hex": ...}) stays TEXT. */
static void jsonNumber(sqlite3_value *v) {
  if (sqlite3_value_type(v) == SQLITE_TEXT &&
      sqlite3_value_subtype(v) == WCS_JSON_SUBTYPE) {
    (void)sqlite3_value_numeric_type(v);
  }
}

static void toInt64Func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  jsonNumber(argv[0]);
  if (sqlite3_value_type(argv[0]) == SQLITE_FLOAT) {
    /* a REAL is taken as INT64 would be written: whole, in range */
    sqlite3_int64 x;
    if (wcsRealToInt(sqlite3_value_double(argv[0]), &x)) {
      sqlite3_result_int64(ctx, x);
    } else {
      sqlite3_result_error(
          ctx,
          sqlite3_value_double(argv[0]) == -9223372036854775808.0
              ? "to_int64: the REAL -2^63 is also what -9223372036854775809 "
                "rounds to: pass the INTEGER -9223372036854775808"
              : "to_int64: the REAL is not a whole number in INT64's range",
          -1);
    }
    return;
  }
  eightBytes(ctx, argv[0], "to_int64", decodeInt64);
}

static void toFloat64Func(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  (void)argc;
  jsonNumber(argv[0]);
  if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER) {
    sqlite3_result_double(ctx, (double)sqlite3_value_int64(argv[0]));
    return;
  }
  eightBytes(ctx, argv[0], "to_float64", decodeFloat64);
}

typedef struct KeyList {
  wcs_buf out;
  int n;
} KeyList;

static int addKey(void *pCtx, const uint8_t *p, int n) {
  KeyList *k = (KeyList *)pCtx;
  int rc = WCS_OK;
  if (k->n++) rc = wcs_buf_append(&k->out, ",", 1);
  if (rc == WCS_OK) rc = wcsJsonString(&k->out, p, (size_t)n);
  return rc;
}

static void mapKeysFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  KeyList k;
  char *zErr = NULL;
  int rc;
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  memset(&k, 0, sizeof(k));
  rc = wcs_buf_append(&k.out, "[", 1);
  if (rc == WCS_OK) {
    rc = wcsJsonKeys((const char *)sqlite3_value_text(argv[0]),
                     sqlite3_value_bytes(argv[0]), &k, addKey, &zErr);
  }
  if (rc == WCS_OK) rc = wcs_buf_append(&k.out, "]", 1);
  if (rc == WCS_OK) {
    sqlite3_result_text(ctx, (const char *)k.out.a, (int)k.out.n,
                        SQLITE_TRANSIENT);
    sqlite3_result_subtype(ctx, WCS_JSON_SUBTYPE);
  } else if (rc == WCS_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else {
    char *z = sqlite3_mprintf("map_keys: %s", zErr ? zErr : "not an object");
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
  }
  sqlite3_free(zErr);
  wcs_buf_free(&k.out);
}

static void hllCountFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  uint64_t n = 0;
  int nState, rc;
  const uint8_t *p;
  wcs_buf tmp = {0};
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  p = cellBytes(ctx, argv[0], &tmp, &nState);
  if (p == NULL) return;
  rc = wcs_hll_estimate(p, (size_t)nState, &n);
  wcs_buf_free(&tmp);
  if (rc != WCS_OK) {
    sqlite3_result_error(ctx,
                         "wcs_hll_count: the argument is not an HLL state "
                         "(give it a cell of a FAMILY ... AGGREGATE HLL)",
                         -1);
    return;
  }
  sqlite3_result_int64(ctx, (sqlite3_int64)n);
}

/* ---- functions that name a table */

typedef struct TabRef {
  WcsTab *pTab;  /* the table a name was found to mean */
  unsigned nGen; /* WcsConn.nGen when it was found */
} TabRef;

/* 1 if a function zFunc may write to store pStore; else 0 after setting
** the error (SQLITE_BUSY: another process writes it, wcsStoreWritable). */
static int storeWritable(sqlite3_context *ctx, const char *zFunc,
                         WcsConn *pConn, WcsStore *pStore) {
  char *zErr = NULL, *z;
  if (wcsStoreWritable(pConn, pStore, &zErr) == SQLITE_OK) return 1;
  z = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : "busy");
  sqlite3_result_error(ctx, z, -1);
  sqlite3_result_error_code(ctx, SQLITE_BUSY);
  sqlite3_free(z);
  sqlite3_free(zErr);
  return 0;
}

static int dataWritable(sqlite3_context *ctx, const char *zFunc, WcsTab *pTab);

/* The table named by argv[0], or NULL after setting the error. bWrite:
** the function writes to the table's store (wcsStoreWritable), which a
** read-only connection may not (dataWritable, asked first: the store is
** not opened for writing on the way); TAB_WRITES_ROWS: it writes rows,
** which a HISTORY view refuses as its INSERT, UPDATE and DELETE do. */
#define TAB_WRITES_ROWS 2
static WcsTab *tableArg(sqlite3_context *ctx, sqlite3_value *v,
                        const char *zFunc, int bWrite) {
  WcsConn *pConn = (WcsConn *)sqlite3_user_data(ctx);
  const char *zName = (const char *)sqlite3_value_text(v);
  char *zErr = NULL;
  WcsTab *pTab;
  if (zName == NULL) {
    char *z =
        sqlite3_mprintf("%s: the first argument names a wcs table", zFunc);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    return NULL;
  }
  {
    /* a constant table name is looked up once per statement: SQLite keeps
    ** the answer with the argument, valid while no table of the connection
    ** connects or disconnects */
    TabRef *pRef = (TabRef *)sqlite3_get_auxdata(ctx, 0);
    if (pRef && pRef->nGen == pConn->nGen) {
      pTab = pRef->pTab;
    } else {
      pTab = wcsFindTable(pConn, zName, &zErr);
      if (pTab) wcsStoreFresh(pTab); /* once per statement */
      if (pTab && (pRef = sqlite3_malloc(sizeof(*pRef))) != NULL) {
        pRef->pTab = pTab;
        pRef->nGen = pConn->nGen;
        sqlite3_set_auxdata(ctx, 0, pRef, sqlite3_free);
      }
    }
  }
  if (pTab && pTab->pStore && wcs_engine_forked(pTab->pStore->pEng)) {
    sqlite3_free(zErr);
    wcsForkedErr(pTab);
    zErr = pTab->base.zErrMsg;
    pTab->base.zErrMsg = NULL;
    pTab = NULL;
  } else if (pTab && wcsTableFresh(pTab)) {
    sqlite3_free(zErr);
    wcsReplacedErr(pTab);
    zErr = pTab->base.zErrMsg;
    pTab->base.zErrMsg = NULL;
    pTab = NULL;
  } else if (pTab && pTab->pTab == NULL) {
    /* the reason every use of the table gives */
    sqlite3_free(zErr);
    wcsMissingErr(pTab);
    zErr = pTab->base.zErrMsg;
    pTab->base.zErrMsg = NULL;
    pTab = NULL;
  } else if (pTab && wcsDroppedErr(pTab)) {
    /* (an alias or history view of a table dropped since: as statements
    ** on it say) */
    sqlite3_free(zErr);
    zErr = pTab->base.zErrMsg;
    pTab->base.zErrMsg = NULL;
    pTab = NULL;
  }
  if (pTab == NULL) {
    char *z = sqlite3_mprintf("%s: %s", zFunc, zErr ? zErr : "no such table");
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
  } else if (bWrite == TAB_WRITES_ROWS && pTab->bHistory) {
    char *z = sqlite3_mprintf("%s: %s is a HISTORY view and is read-only; "
                              "write to the table itself",
                              zFunc, pTab->zName);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    pTab = NULL;
  } else if (bWrite && (!dataWritable(ctx, zFunc, pTab) ||
                        !storeWritable(ctx, zFunc, pConn, pTab->pStore))) {
    pTab = NULL;
  }
  sqlite3_free(zErr);
  return pTab;
}

static void resultErr(sqlite3_context *ctx, const char *zFunc, int rc,
                      const char *zMsg) {
  char *z;
  if (rc == WCS_NOMEM) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  z = sqlite3_mprintf("%s: %s", zFunc, zMsg && zMsg[0] ? zMsg : wcs_errstr(rc));
  sqlite3_result_error(ctx, z, -1);
  sqlite3_result_error_code(ctx, wcsToSqlite(rc));
  sqlite3_free(z);
}

/* The error wcsWriteTxn() or wcsEndOwnTxn() left on pTab, as zFunc's,
** with the code rc it returned (a row key past the limit is SQLITE_TOOBIG,
** as in an INSERT); for SQLITE_ERROR the connection's code when a BEGIN or
** COMMIT met a lock or a read-only connection. */
static void ownErr(sqlite3_context *ctx, const char *zFunc, WcsTab *pTab,
                   int rc) {
  sqlite3 *db = pTab->pConn->db;
  char *z = sqlite3_mprintf("%s: %s", zFunc,
                            pTab->base.zErrMsg ? pTab->base.zErrMsg : "failed");
  sqlite3_free(pTab->base.zErrMsg);
  pTab->base.zErrMsg = NULL;
  sqlite3_result_error(ctx, z, -1);
  if (rc == SQLITE_ERROR) {
    int e = sqlite3_errcode(db);
    if ((e & 0xff) == SQLITE_BUSY || (e & 0xff) == SQLITE_LOCKED ||
        (e & 0xff) == SQLITE_READONLY) {
      rc = e;
    }
  }
  sqlite3_result_error_code(ctx, rc);
  sqlite3_free(z);
}

/* 1 when the connection may change the data of pTab's database; else 0
** after setting zFunc's error: a read-only connection (opened so, or
** PRAGMA query_only) changes nothing, as SQLite refuses its INSERTs. */
static int dataWritable(sqlite3_context *ctx, const char *zFunc, WcsTab *pTab) {
  sqlite3 *db = pTab->pConn->db;
  const char *zWhy = NULL;
  if (sqlite3_db_readonly(db, pTab->zDb) == 1) {
    zWhy = "the database was opened so";
  } else {
    sqlite3_stmt *pStmt = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA query_only", -1, &pStmt, NULL) ==
            SQLITE_OK &&
        sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_int(pStmt, 0)) {
      zWhy = "PRAGMA query_only";
    }
    sqlite3_finalize(pStmt);
  }
  if (zWhy) {
    char *z = sqlite3_mprintf(
        "%s: this connection is read-only (%s), so %s cannot be changed", zFunc,
        zWhy, pTab->zName);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_result_error_code(ctx, SQLITE_READONLY);
    sqlite3_free(z);
    return 0;
  }
  return 1;
}

static void keyEncodeFunc(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  WcsTab *pTab;
  const ks_schema *s;
  ks_value *a;
  char *zNum, *zErr = NULL;
  wcs_buf out = {0};
  int i, rc = WCS_OK;
  if (argc < 1) {
    sqlite3_result_error(ctx, "wcs_key_encode(table, field values...)", -1);
    return;
  }
  pTab = tableArg(ctx, argv[0], "wcs_key_encode", 0);
  if (pTab == NULL) return;
  s = pTab->pSchema;
  if (s->nField == 0 || argc - 1 != s->nField) {
    char *z =
        s->nField == 0
            ? sqlite3_mprintf("wcs_key_encode: table %s has no key schema; "
                              "its row keys are the _key column's bytes",
                              pTab->zName)
            : sqlite3_mprintf(
                  "wcs_key_encode: table %s has %d key fields; %d values given",
                  pTab->zName, s->nField, argc - 1);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    return;
  }
  a = sqlite3_malloc64(sizeof(ks_value) * (size_t)s->nField);
  zNum = sqlite3_malloc64(32 * (size_t)s->nField);
  if (!a || !zNum) {
    sqlite3_free(a);
    sqlite3_free(zNum);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  for (i = 0; i < s->nField && rc == WCS_OK; i++) {
    sqlite3_value *v = argv[i + 1];
    const ks_field *f = &s->aField[i];
    int t = sqlite3_value_type(v);
    memset(&a[i], 0, sizeof(a[i]));
    if (t == SQLITE_NULL) {
      a[i].eType = KS_VAL_NULL;
    } else if (f->eType == KS_INT64 || f->eType == KS_TIMESTAMP) {
      sqlite3_int64 x = 0;
      double r;
      int e = t == SQLITE_INTEGER ? WCSV_INT : WCSV_BLOB;
      if (t == SQLITE_INTEGER) x = sqlite3_value_int64(v);
      if (t == SQLITE_TEXT) {
        e = wcsTextToNumber(sqlite3_value_text(v), sqlite3_value_bytes(v), &x,
                            &r);
      } else if (t == SQLITE_FLOAT) {
        /* as INSERT takes it (fieldValue) */
        if (wcsRealToInt(sqlite3_value_double(v), &x)) e = WCSV_INT;
      }
      if (e != WCSV_INT) {
        zErr = wcsIntFieldErr(f->zName, ks_type_name(f->eType), v);
        rc = WCS_MISMATCH;
        break;
      }
      a[i].eType = KS_VAL_INT;
      a[i].i = x;
    } else {
      a[i].eType = KS_VAL_BYTES;
      if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
        const unsigned char *z = sqlite3_value_text(v);
        int n = sqlite3_value_bytes(v);
        if (n > 31) n = 31;
        memcpy(zNum + 32 * i, z, (size_t)n);
        a[i].p = (const uint8_t *)zNum + 32 * i;
        a[i].n = n;
      } else {
        a[i].p = argBytes(v, &a[i].n);
      }
    }
  }
  if (rc == WCS_OK) {
    char *zKsErr = NULL;
    rc = ks_key_encode(s, a, &out, &zKsErr);
    if (rc != WCS_OK) {
      zErr = sqlite3_mprintf("%s", zKsErr ? zKsErr : wcs_errstr(rc));
      wcs_free(zKsErr);
    } else if (out.n == 0) {
      /* (a single STRING or BYTES field, empty) as INSERT refuses it */
      zErr = sqlite3_mprintf("%s: a row key cannot be empty", pTab->zName);
      rc = WCS_CONSTRAINT;
    }
  }
  if (rc == WCS_OK) {
    sqlite3_result_blob(ctx, out.a ? (const void *)out.a : "", (int)out.n,
                        SQLITE_TRANSIENT);
  } else {
    resultErr(ctx, "wcs_key_encode", rc, zErr);
  }
  sqlite3_free(zErr);
  sqlite3_free(a);
  sqlite3_free(zNum);
  wcs_buf_free(&out);
}

static void keyDecodeFunc(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  WcsTab *pTab = tableArg(ctx, argv[0], "wcs_key_decode", 0);
  const ks_schema *s;
  ks_value *a;
  wcs_buf scratch = {0}, out = {0};
  const uint8_t *pKey;
  char *zErr = NULL;
  int nKey, i, rc;
  (void)argc;
  if (pTab == NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
  s = pTab->pSchema;
  if (s->nField == 0) {
    char *z = sqlite3_mprintf("wcs_key_decode: table %s has no key schema",
                              pTab->zName);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    return;
  }
  pKey = argBytes(argv[1], &nKey);
  a = sqlite3_malloc64(sizeof(ks_value) * (size_t)s->nField);
  if (a == NULL) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = ks_key_decode(s, pKey, nKey, a, &scratch, &zErr);
  if (rc == WCS_OK) rc = wcs_buf_append(&out, "[", 1);
  for (i = 0; rc == WCS_OK && i < s->nField; i++) {
    if (i) rc = wcs_buf_append(&out, ",", 1);
    if (rc != WCS_OK) break;
    if (a[i].eType == KS_VAL_INT) {
      char z[32];
      sqlite3_snprintf(sizeof(z), z, "%lld", (long long)a[i].i);
      rc = wcs_buf_append(&out, z, strlen(z));
    } else if (s->aField[i].eType == KS_STRING) {
      rc = wcsJsonString(&out, a[i].p, (size_t)a[i].n);
    } else {
      rc = wcsJsonBytes(&out, a[i].p, (size_t)a[i].n);
    }
  }
  if (rc == WCS_OK) rc = wcs_buf_append(&out, "]", 1);
  if (rc == WCS_OK) {
    sqlite3_result_text(ctx, (const char *)out.a, (int)out.n, SQLITE_TRANSIENT);
    sqlite3_result_subtype(ctx, WCS_JSON_SUBTYPE);
  } else {
    resultErr(ctx, "wcs_key_decode", rc, zErr);
  }
  wcs_free(zErr);
  sqlite3_free(a);
  wcs_buf_free(&scratch);
  wcs_buf_free(&out);
}

/* The declared column named pQual[0..nQual-1] of family zFam, or NULL
** (an undeclared qualifier, or no such family: the engine reports that). */
static const ks_qualifier *declaredColumn(const ks_schema *s, const char *zFam,
                                          const uint8_t *pQual, int nQual) {
  int i, k;
  for (i = 0; i < s->nFamily; i++) {
    const ks_family *f = &s->aFamily[i];
    if (strcmp(f->zName, zFam) != 0) continue;
    for (k = 0; k < f->nQual; k++) {
      const ks_qualifier *q = &s->aQual[f->iFirstQual + k];
      if ((int)strlen(q->zName) == nQual &&
          memcmp(q->zName, pQual, (size_t)nQual) == 0) {
        return q;
      }
    }
    break;
  }
  return NULL;
}

static void incrementFunc(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  WcsTab *pTab = tableArg(ctx, argv[0], "wcs_increment", TAB_WRITES_ROWS);
  const uint8_t *pKey, *pQual;
  const char *zFam;
  int nKey, nQual, eOwn = WCS_OWN_NONE, rc, eDelta;
  wcs_txn *pTxn = NULL;
  int64_t iNew = 0;
  sqlite3_int64 iDelta = 0;
  (void)argc;
  if (pTab == NULL) return;
  if (sqlite3_value_type(argv[1]) == SQLITE_NULL ||
      sqlite3_value_type(argv[2]) == SQLITE_NULL ||
      sqlite3_value_type(argv[3]) == SQLITE_NULL) {
    sqlite3_result_error(ctx,
                         "wcs_increment: key, family and qualifier "
                         "must not be NULL",
                         -1);
    return;
  }
  /* a whole REAL counts as its integer, as an INT64 column takes it:
  ** better-sqlite3 binds every JavaScript number as a REAL */
  eDelta = sqlite3_value_numeric_type(argv[4]);
  if (eDelta == SQLITE_INTEGER) {
    iDelta = sqlite3_value_int64(argv[4]);
  } else if (eDelta != SQLITE_FLOAT ||
             !wcsRealToInt(sqlite3_value_double(argv[4]), &iDelta)) {
    sqlite3_result_error(ctx,
                         "wcs_increment: the delta must be an integer (a "
                         "REAL only when whole and inside INT64's range)",
                         -1);
    return;
  }
  pKey = argBytes(argv[1], &nKey);
  zFam = (const char *)sqlite3_value_text(argv[2]);
  pQual = argBytes(argv[3], &nQual);
  {
    /* an aggregate family folds what is written into its cells already:
    ** say how to add to one instead of the engine's bare mismatch */
    wcs_family_info fi;
    int iFam = wcs_table_family_index(pTab->pTab, zFam);
    if (iFam >= 0 && wcs_table_family(pTab->pTab, iFam, &fi) == WCS_OK &&
        fi.eAggregate != WCS_AGG_NONE) {
      char *z = sqlite3_mprintf(
          "wcs_increment: family %s of table %s is an aggregate family, "
          "which folds every write into its cells; to add to one, write the "
          "amount (INSERT INTO %s(..., %s) VALUES (..., json_object('q', n)))",
          zFam, pTab->zName, pTab->zName, zFam);
      sqlite3_result_error(ctx, z, -1);
      sqlite3_free(z);
      return;
    }
  }
  {
    /* an increment adds to an 8-byte big-endian integer: a declared column
    ** of another type would be changed into bytes it does not read (or, for
    ** FLOAT64, have its bits added to) */
    const ks_qualifier *q = declaredColumn(pTab->pSchema, zFam, pQual, nQual);
    if (q && (q->eVType != KS_V_INT64 || q->eEnc == KS_ENC_DECIMAL)) {
      char zType[32];
      char *z;
      if (q->eVType == KS_V_INT64 && q->nWidth > 0) {
        sqlite3_snprintf(sizeof(zType), zType, "INT64 DECIMAL(%d)", q->nWidth);
      } else if (q->eVType == KS_V_INT64) {
        sqlite3_snprintf(sizeof(zType), zType, "INT64 DECIMAL");
      } else {
        sqlite3_snprintf(sizeof(zType), zType, "%s", ks_vtype_name(q->eVType));
      }
      z = sqlite3_mprintf(
          "wcs_increment: column %s:%s is %s; it adds to 8-byte big-endian "
          "INT64 cells only (UPDATE %s SET %s = %s + ... changes this one)",
          zFam, q->zName, zType, pTab->zName, q->zName, q->zName);
      sqlite3_result_error(ctx, z, -1);
      sqlite3_free(z);
      return;
    }
  }
  {
    /* the same rule as an INSERT's _key: a row the schema cannot decode
    ** would make every later read of the table fail */
    char *zErr = NULL;
    rc = wcsCheckRowKey(pTab, pKey, nKey, &zErr);
    if (rc != SQLITE_OK) {
      resultErr(ctx, "wcs_increment", rc, zErr); /* codes as SQLite's */
      sqlite3_free(zErr);
      return;
    }
  }
  rc = wcsWriteTxn(pTab, &pTxn, &eOwn);
  if (rc != SQLITE_OK) {
    ownErr(ctx, "wcs_increment", pTab, rc);
    return;
  }
  rc = wcs_txn_increment(pTxn, pTab->pTab, pKey, (size_t)nKey, zFam, pQual,
                         (size_t)nQual, iDelta, &iNew);
  if (eOwn != WCS_OWN_NONE) {
    rc = wcsEndOwnTxn(pTab, pTxn, eOwn, rc);
    if (rc != SQLITE_OK) {
      ownErr(ctx, "wcs_increment", pTab, rc);
      return;
    }
    rc = WCS_OK;
  }
  if (rc == WCS_OK) {
    sqlite3_result_int64(ctx, iNew);
  } else {
    resultErr(ctx, "wcs_increment", rc, wcs_engine_errmsg(pTab->pStore->pEng));
  }
}

static void deletePrefixFunc(sqlite3_context *ctx, int argc,
                             sqlite3_value **argv) {
  WcsTab *pTab = tableArg(ctx, argv[0], "wcs_delete_prefix", TAB_WRITES_ROWS);
  const uint8_t *p;
  int n, eOwn = WCS_OWN_NONE, rc;
  wcs_txn *pTxn = NULL;
  (void)argc;
  if (pTab == NULL) return;
  if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
  p = argBytes(argv[1], &n);
  if (n == 0) {
    sqlite3_result_error(ctx,
                         "wcs_delete_prefix: the prefix must not be "
                         "empty (DELETE FROM the table to empty it)",
                         -1);
    return;
  }
  rc = wcsWriteTxn(pTab, &pTxn, &eOwn);
  if (rc != SQLITE_OK) {
    ownErr(ctx, "wcs_delete_prefix", pTab, rc);
    return;
  }
  if (pTab->pSchema->nSalt > 0) {
    /* a salted key's bucket hashes the whole key: the rows that begin with
    ** the prefix lie in every bucket, one range each */
    uint8_t *z = sqlite3_malloc64((sqlite3_uint64)n + 1);
    int b;
    rc = z ? WCS_OK : WCS_NOMEM;
    if (z) memcpy(z + 1, p, (size_t)n);
    for (b = 0; rc == WCS_OK && b < pTab->pSchema->nSalt; b++) {
      z[0] = (uint8_t)b;
      rc = wcs_txn_delete_prefix(pTxn, pTab->pTab, z, (size_t)n + 1);
    }
    sqlite3_free(z);
  } else {
    rc = wcs_txn_delete_prefix(pTxn, pTab->pTab, p, (size_t)n);
  }
  if (eOwn != WCS_OWN_NONE) {
    rc = wcsEndOwnTxn(pTab, pTxn, eOwn, rc);
    if (rc != SQLITE_OK) {
      ownErr(ctx, "wcs_delete_prefix", pTab, rc);
      return;
    }
    rc = WCS_OK;
  }
  if (rc == WCS_OK) {
    sqlite3_result_int(ctx, 1);
  } else {
    resultErr(ctx, "wcs_delete_prefix", rc,
              wcs_engine_errmsg(pTab->pStore->pEng));
  }
}

static void compactFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  int rc = WCS_OK;
  WcsStore *pFailed = NULL;
  if (argc > 0 && sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    WcsTab *pTab = tableArg(ctx, argv[0], "wcs_compact", 1);
    if (pTab == NULL) return;
    rc = wcs_engine_gc(pTab->pStore->pEng, pTab->zStoreTable, 1);
    if (rc != WCS_OK) pFailed = pTab->pStore;
  } else {
    WcsConn *pConn = (WcsConn *)sqlite3_user_data(ctx);
    WcsStore *s;
    for (s = pConn->pStore; s && rc == WCS_OK; s = s->pNext) {
      WcsTab *pTab, *pAny = NULL;
      /* a table of the store in a database this connection may write, if
      ** any (a read-only connection compacts no store, as with a table) */
      for (pTab = pConn->pTab; pTab; pTab = pTab->pNextTab) {
        if (pTab->pStore != s) continue;
        if (pAny == NULL) pAny = pTab;
        if (sqlite3_db_readonly(pConn->db, pTab->zDb) != 1) break;
      }
      if (pTab == NULL) pTab = pAny;
      if (pTab && !dataWritable(ctx, "wcs_compact", pTab)) return;
      if (!storeWritable(ctx, "wcs_compact", pConn, s)) return;
      rc = wcs_engine_gc(s->pEng, NULL, 1);
      if (rc != WCS_OK) pFailed = s;
    }
  }
  if (rc == WCS_OK) {
    sqlite3_result_text(ctx, "ok", 2, SQLITE_STATIC);
  } else {
    resultErr(ctx, "wcs_compact", rc, wcs_engine_errmsg(pFailed->pEng));
  }
}

/*
** Make every connection to database zDb read its schema again at its next
** statement, and so connect its wcs tables anew, with the columns of their
** altered store tables: what SQLite's own DDL does, by a new schema
** cookie. Where the cookie cannot be written (a read-only database,
** SQLITE_DBCONFIG_DEFENSIVE), the tables whose columns changed say so, and
** that the database is to be opened again (tabAdopt). SQLITE_OK, or the
** error (SQLITE_BUSY, SQLITE_LOCKED: another connection holds the
** database) for which the caller changes nothing.
*/
static int schemaReload(sqlite3 *db, const char *zDb) {
  char *zSql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", zDb);
  sqlite3_stmt *pStmt = NULL;
  sqlite3_int64 v = -1;
  int rc;
  if (zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) == SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    v = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if (v < 0 || v >= 0x7fffffff) return SQLITE_OK;
  zSql = sqlite3_mprintf("PRAGMA \"%w\".schema_version = %lld", zDb, v + 1);
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
  sqlite3_free(zSql);
  /* a read-only database keeps its cookie (documented); another
  ** connection's lock would hide the change from it: the caller's error */
  rc &= 0xff;
  return rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_NOMEM
             ? rc
             : SQLITE_OK;
}

/* An error of wcs_alter() or wcs_drop_family(): as resultErr, but a schema
** that cannot work (WCS_SCHEMA) is reported as SQLITE_ERROR, not as
** SQLITE_SCHEMA, which would make SQLite prepare and run the statement
** again. */
static void alterErr(sqlite3_context *ctx, const char *zFunc, int rc,
                     const char *zMsg) {
  resultErr(ctx, zFunc, rc, zMsg);
  if (rc != WCS_NOMEM && wcsToSqlite(rc) == SQLITE_SCHEMA) {
    sqlite3_result_error_code(ctx, SQLITE_ERROR);
  }
}

/*
** wcs_alter(table, clauses) and wcs_drop_family(table, family) (bDrop):
** change the families of a table's store table (wcs_table_alter), as
** Bigtable's createfamily, setgcpolicy and deletefamily do. clauses are
** FAMILY clauses of the DDL grammar, joined by commas; each replaces the
** family of that name, or adds it. Returns the table's new schema text.
** Not inside a transaction: like DROP TABLE, the change is not undone by
** ROLLBACK.
*/
static void alterFamilies(sqlite3_context *ctx, sqlite3_value **argv,
                          int bDrop) {
  const char *zFunc = bDrop ? "wcs_drop_family" : "wcs_alter";
  WcsConn *pConn = (WcsConn *)sqlite3_user_data(ctx);
  const char *zArg = (const char *)sqlite3_value_text(argv[1]);
  ks_schema *pAdd = NULL;
  wcs_table *t = NULL;
  char *zErr = NULL, *zText = NULL, *z;
  WcsTab *pTab;
  int rc;
  if (sqlite3_get_autocommit(pConn->db) == 0) {
    z = sqlite3_mprintf("%s cannot run inside a transaction (a change of "
                        "families is not undone by ROLLBACK); COMMIT or "
                        "ROLLBACK first",
                        zFunc);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    return;
  }
  pTab = tableArg(ctx, argv[0], zFunc, 1);
  if (pTab == NULL) return;
  if (wcsWriteInProgress(pConn->db)) {
    z = sqlite3_mprintf("%s: call it in a statement of its own, not from "
                        "one that writes",
                        zFunc);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    return;
  }
  if (zArg == NULL || zArg[0] == 0) {
    z = sqlite3_mprintf(bDrop ? "%s: the second argument names a family"
                              : "%s: the second argument holds FAMILY clauses "
                                "(e.g. 'FAMILY meta MAX VERSIONS 1')",
                        zFunc);
    sqlite3_result_error(ctx, z, -1);
    sqlite3_free(z);
    return;
  }
  /* the store table's schema now (another connection may have changed it
  ** since this one connected the table) */
  rc = wcs_table_open(pTab->pStore->pEng, pTab->zStoreTable, &t);
  if (rc != WCS_OK) {
    alterErr(ctx, zFunc, rc, wcs_engine_errmsg(pTab->pStore->pEng));
    return;
  }
  if (t == NULL) {
    z = sqlite3_mprintf("store table '%s' is missing", pTab->zStoreTable);
    alterErr(ctx, zFunc, WCS_ERROR, z);
    sqlite3_free(z);
    return;
  }
  if (bDrop) {
    if (ks_schema_family(wcs_table_schema(t), zArg) < 0) {
      z = sqlite3_mprintf("%s: table %s has no family %s", zFunc, pTab->zName,
                          zArg);
      sqlite3_result_error(ctx, z, -1);
      sqlite3_free(z);
      goto done;
    }
  } else {
    rc = ks_parse_text(zArg, &pAdd, &zErr);
    if (rc != WCS_OK) {
      alterErr(ctx, zFunc, rc, zErr);
      goto done;
    }
    if (pAdd->bKeyClause || pAdd->nFamily == 0 || pAdd->zStore ||
        pAdd->zTable || pAdd->iSync >= 0 || pAdd->bHistory ||
        pAdd->iZstdLevel >= 0 || pAdd->nCacheBytes >= 0) {
      z = sqlite3_mprintf(
          "%s: give FAMILY clauses only (each adds a family or replaces the "
          "one of its name: its declared columns and GC policy); %s",
          zFunc,
          pAdd->bKeyClause ? "a table's KEY cannot change"
                           : "STORE, TABLE, SYNC, COMPRESSION, CACHE and "
                             "HISTORY belong to CREATE VIRTUAL TABLE");
      sqlite3_result_error(ctx, z, -1);
      sqlite3_free(z);
      goto done;
    }
  }
  rc = ks_schema_merge_text(wcs_table_schema(t), pAdd, bDrop ? zArg : NULL,
                            &zText);
  if (rc == WCS_OK && !bDrop) {
    /* the columns must fit SQLite's limit, or no connection could declare
    ** the table again (nor drop it) */
    ks_schema *pNew = NULL;
    char *zWhy = NULL;
    rc = ks_parse_text(zText, &pNew, &zWhy);
    if (rc != WCS_OK) {
      /* the changed table's own rules (a name its columns already use):
      ** the parser's message, not one an earlier call left */
      alterErr(ctx, zFunc, rc, zWhy);
      wcs_free(zWhy);
      ks_schema_free(pNew);
      goto done;
    }
    wcs_free(zWhy);
    if (rc == WCS_OK) {
      char *zCols = NULL;
      if (wcsColumnsFit(pConn->db, pTab->zName, pNew, &zCols) != SQLITE_OK) {
        z = sqlite3_mprintf("%s: %s", zFunc, zCols);
        sqlite3_result_error(ctx, z, -1);
        sqlite3_free(z);
        sqlite3_free(zCols);
        ks_schema_free(pNew);
        goto done;
      }
    }
    ks_schema_free(pNew);
  }
  if (rc == WCS_OK && schemaReload(pConn->db, pTab->zDb) != SQLITE_OK) {
    /* the connections would not learn of the change: make none */
    z = sqlite3_mprintf("%s: the change must reach every connection to the "
                        "database, and its schema cannot be written now "
                        "(%s); nothing was changed: try again",
                        zFunc, sqlite3_errmsg(pConn->db));
    sqlite3_result_error(ctx, z, -1);
    sqlite3_result_error_code(ctx, SQLITE_BUSY);
    sqlite3_free(z);
    goto done;
  }
  if (rc == WCS_OK) {
    rc = wcs_table_alter(pTab->pStore->pEng, pTab->zStoreTable, zText);
  }
  if (rc != WCS_OK) {
    alterErr(ctx, zFunc, rc, wcs_engine_errmsg(pTab->pStore->pEng));
    goto done;
  }
  sqlite3_result_text(ctx, zText, -1, SQLITE_TRANSIENT);
done:
  wcs_table_close(t);
  ks_schema_free(pAdd);
  wcs_free(zErr);
  free(zText);
}

static void alterFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  alterFamilies(ctx, argv, 0);
}

static void dropFamilyFunc(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  (void)argc;
  alterFamilies(ctx, argv, 1);
}

/* wcs_backup(table, dir): wcs_engine_backup of the store holding table
** into dir (relative: from the database file's directory, as STORE).
** Returns the copy's absolute path. */
static void backupFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  WcsConn *pConn = (WcsConn *)sqlite3_user_data(ctx);
  const char *zDir = (const char *)sqlite3_value_text(argv[1]);
  char *zPath = NULL;
  WcsTab *pTab;
  int rc;
  (void)argc;
  pTab = tableArg(ctx, argv[0], "wcs_backup", 1);
  if (pTab == NULL) return;
  if (zDir == NULL || zDir[0] == 0) {
    sqlite3_result_error(
        ctx, "wcs_backup: the second argument names a new directory", -1);
    return;
  }
  rc = wcsPathFromDb(pConn->db, pTab->zDb, zDir, &zPath);
  if (rc == SQLITE_NOMEM) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (rc != SQLITE_OK || zPath == NULL) {
    sqlite3_result_error(
        ctx, "wcs_backup: the second argument names a directory on disk", -1);
    sqlite3_free(zPath);
    return;
  }
  rc = wcs_engine_backup(pTab->pStore->pEng, zPath);
  if (rc == WCS_OK) {
    sqlite3_result_text(ctx, zPath, -1, sqlite3_free);
    return;
  }
  resultErr(ctx, "wcs_backup", rc, wcs_engine_errmsg(pTab->pStore->pEng));
  sqlite3_free(zPath);
}

static int appendStr(wcs_buf *b, const char *z) {
  return wcs_buf_append(b, z, strlen(z));
}

static int appendJsonStr(wcs_buf *b, const char *z) {
  return wcsJsonString(b, (const uint8_t *)z, strlen(z));
}

static int appendInt(wcs_buf *b, sqlite3_int64 i) {
  char z[32];
  sqlite3_snprintf(sizeof(z), z, "%lld", i);
  return appendStr(b, z);
}

static int listTable(void *pCtx, const char *zName, const char *zSchema) {
  wcs_buf *b = (wcs_buf *)pCtx;
  int rc = WCS_OK;
  (void)zSchema;
  if (b->a[b->n - 1] != '[') rc = appendStr(b, ",");
  if (rc == WCS_OK) rc = appendJsonStr(b, zName);
  return rc;
}

/* {"path":...,"tables":[...],"stats":{...}} for one store. */
static int storeJson(wcs_buf *b, WcsStore *s) {
  char *zStats = NULL;
  int rc = appendStr(b, "{\"path\":");
  if (rc == WCS_OK) rc = appendJsonStr(b, s->zPath ? s->zPath : ":memory:");
  if (rc == WCS_OK) rc = appendStr(b, ",\"tables\":[");
  if (rc == WCS_OK) rc = wcs_table_list(s->pEng, b, listTable);
  if (rc == WCS_OK) rc = appendStr(b, "],\"stats\":");
  if (rc == WCS_OK) rc = wcs_db_stats(wcs_engine_db(s->pEng), &zStats);
  if (rc == WCS_OK) rc = appendStr(b, zStats ? zStats : "null");
  if (rc == WCS_OK) rc = appendStr(b, "}");
  wcs_free(zStats);
  return rc;
}

static void statsFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  wcs_buf b = {0};
  int rc = WCS_OK, i;
  WcsStore *pStore = NULL;
  if (argc > 0 && sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    WcsTab *pTab = tableArg(ctx, argv[0], "wcs_stats", 0);
    uint64_t nRows = 0;
    if (pTab == NULL) return;
    pStore = pTab->pStore;
    rc = appendStr(&b, "{\"table\":");
    if (rc == WCS_OK) rc = appendJsonStr(&b, pTab->zName);
    if (rc == WCS_OK) rc = appendStr(&b, ",\"store_table\":");
    if (rc == WCS_OK) rc = appendJsonStr(&b, pTab->zStoreTable);
    if (rc == WCS_OK) rc = appendStr(&b, ",\"history\":");
    if (rc == WCS_OK) rc = appendStr(&b, pTab->bHistory ? "true" : "false");
    if (rc == WCS_OK) rc = appendStr(&b, ",\"schema\":");
    if (rc == WCS_OK) rc = appendJsonStr(&b, wcs_table_schema_text(pTab->pTab));
    if (rc == WCS_OK) rc = appendStr(&b, ",\"schema_version\":");
    if (rc == WCS_OK) {
      rc = appendInt(&b, (sqlite3_int64)wcs_table_schema_version(pTab->pTab));
    }
    if (rc == WCS_OK) {
      rc = wcs_table_estimate_rows(pTab->pTab, NULL, 0, &nRows);
    }
    if (rc == WCS_OK) rc = appendStr(&b, ",\"estimated_rows\":");
    if (rc == WCS_OK) rc = appendInt(&b, (sqlite3_int64)nRows);
    if (rc == WCS_OK) rc = appendStr(&b, ",\"families\":[");
    for (i = 0; rc == WCS_OK && i < wcs_table_family_count(pTab->pTab); i++) {
      wcs_family_info fi;
      static const char *azAgg[] = {"none", "sum", "min", "max", "hll"};
      rc = wcs_table_family(pTab->pTab, i, &fi);
      if (rc == WCS_OK && i) rc = appendStr(&b, ",");
      if (rc == WCS_OK) rc = appendStr(&b, "{\"name\":");
      if (rc == WCS_OK) rc = appendJsonStr(&b, fi.zName);
      if (rc == WCS_OK) rc = appendStr(&b, ",\"aggregate\":");
      if (rc == WCS_OK) {
        rc = appendJsonStr(&b, fi.eAggregate >= 0 && fi.eAggregate <= 4
                                   ? azAgg[fi.eAggregate]
                                   : "?");
      }
      if (rc == WCS_OK) rc = appendStr(&b, ",\"max_versions\":");
      if (rc == WCS_OK) rc = appendInt(&b, fi.nMaxVersions);
      if (rc == WCS_OK) rc = appendStr(&b, ",\"max_age_micros\":");
      if (rc == WCS_OK) rc = appendInt(&b, fi.iMaxAge);
      if (rc == WCS_OK) rc = appendStr(&b, ",\"gc\":");
      if (rc == WCS_OK) {
        rc = appendJsonStr(&b, fi.bIntersection ? "intersection" : "union");
      }
      if (rc == WCS_OK) rc = appendStr(&b, ",\"columns\":");
      if (rc == WCS_OK) rc = appendInt(&b, fi.nColumn);
      if (rc == WCS_OK) rc = appendStr(&b, "}");
    }
    if (rc == WCS_OK) rc = appendStr(&b, "],\"store\":");
    if (rc == WCS_OK) rc = storeJson(&b, pTab->pStore);
    if (rc == WCS_OK) rc = appendStr(&b, "}");
  } else {
    WcsConn *pConn = (WcsConn *)sqlite3_user_data(ctx);
    WcsStore *s;
    rc = appendStr(&b, "{\"stores\":[");
    for (s = pConn->pStore; s && rc == WCS_OK; s = s->pNext) {
      pStore = s;
      if (s != pConn->pStore) rc = appendStr(&b, ",");
      if (rc == WCS_OK) rc = storeJson(&b, s);
    }
    if (rc == WCS_OK) rc = appendStr(&b, "]}");
  }
  if (rc == WCS_OK) {
    sqlite3_result_text(ctx, (const char *)b.a, (int)b.n, SQLITE_TRANSIENT);
    sqlite3_result_subtype(ctx, WCS_JSON_SUBTYPE);
  } else {
    resultErr(ctx, "wcs_stats", rc,
              pStore ? wcs_engine_errmsg(pStore->pEng) : NULL);
  }
  wcs_buf_free(&b);
}

int wcsRegisterFunctions(sqlite3 *db, WcsConn *pConn) {
  static const struct {
    const char *zName;
    int nArg;
    int bPure; /* deterministic and innocuous; else direct-only */
    int bJson; /* returns JSON text, with its subtype */
    void (*xFunc)(sqlite3_context *, int, sqlite3_value **);
  } aFunc[] = {
      {"starts_with", 2, 1, 0, wcsStartsWithFunc},
      {"to_int64", 1, 1, 0, toInt64Func},
      {"to_float64", 1, 1, 0, toFloat64Func},
      {"map_keys", 1, 1, 1, mapKeysFunc},
      {"wcs_hll_count", 1, 1, 0, hllCountFunc},
      {"wcs_key_encode", -1, 0, 0, keyEncodeFunc},
      {"wcs_key_decode", 2, 0, 1, keyDecodeFunc},
      {"wcs_increment", 5, 0, 0, incrementFunc},
      {"wcs_delete_prefix", 2, 0, 0, deletePrefixFunc},
      {"wcs_compact", 0, 0, 0, compactFunc},
      {"wcs_compact", 1, 0, 0, compactFunc},
      {"wcs_backup", 2, 0, 0, backupFunc},
      {"wcs_alter", 2, 0, 0, alterFunc},
      {"wcs_drop_family", 2, 0, 0, dropFamilyFunc},
      {"wcs_stats", 0, 0, 1, statsFunc},
      {"wcs_stats", 1, 0, 1, statsFunc},
  };
  size_t i;
  int rc = SQLITE_OK;
  for (i = 0; rc == SQLITE_OK && i < sizeof(aFunc) / sizeof(aFunc[0]); i++) {
    int fl =
        SQLITE_UTF8 | (aFunc[i].bPure ? SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
                                      : SQLITE_DIRECTONLY);
#ifdef SQLITE_RESULT_SUBTYPE
    /* (SQLite 3.45 on keeps a subtype only of functions that say so) */
    if (aFunc[i].bJson) fl |= SQLITE_RESULT_SUBTYPE;
#endif
    rc = sqlite3_create_function_v2(db, aFunc[i].zName, aFunc[i].nArg, fl,
                                    pConn, aFunc[i].xFunc, NULL, NULL, NULL);
  }
  return rc;
}
