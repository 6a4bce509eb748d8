/*
** prog_sql_diff.c — the differential test of the SQLite module `wcs`: the
** same rows in a wcs virtual table and in a plain SQLite table, the same
** random SQL against both, and the results must agree (DESIGN.md §3–§6).
**
** HOW IT WORKS
**   Four key schemas, each loaded with random rows into a wcs table w_<tag>
**   and into an ordinary table n_<tag> with the same decoded columns, the
**   qualifier columns, and _key (computed here from the documented
**   encodings, independently of the module):
**     tele   KEY (device STRING, id STRING, day INT64 DECIMAL(8))
**            DELIMITED BY '#' — empty segments, multi-byte UTF-8, bytes just
**            above the delimiter ('$'), digit-only strings, DECIMAL extremes;
**            families stats (cpu, mem, temp FLOAT64) and meta (note STRING)
**     oc     KEY (tenant INT64 ORDERED CODE, ts INT64 ORDERED CODE,
**            name STRING) ORDERED CODE — INT64 extremes, control bytes and
**            empty strings in names
**     bytes  KEY (k BYTES), a singleton key of raw bytes (00 and FF too)
**     raw    no KEY clause: only the raw _key BLOB
**   A small native "probe" table p_<tag> per schema feeds joins and IN
**   subqueries. Then a stream of random statements, each written once for
**   the wcs table and once for the native one: =, IN lists on one or more
**   fields, <, <=, >, >=, BETWEEN, GLOB/LIKE prefixes (mixed case), other
**   LIKE/GLOB patterns, starts_with(), _key ranges, odd literals (reals,
**   numeric text, out-of-range numbers), ORDER BY key fields ASC/DESC/mixed,
**   LIMIT/OFFSET, aggregates, GROUP BY, DISTINCT, joins with the native probe
**   table and self-joins, family JSON columns (`stats ->> 'cpu'`) and
**   wcs_key_encode/decode against the native columns, UPDATE/DELETE/INSERT
**   (key moves, and INSERT, OR REPLACE, OR IGNORE onto existing rows with
**   the upsert rules of doc/sql.md §6), transactions with ROLLBACK or
**   COMMIT, loading transactions (many INSERTs and upserts, nothing read),
**   SAVEPOINT/ROLLBACK TO/RELEASE, wcs_compact() (so that data and
**   tombstones reach the sorted files; w_tele is loaded with every family
**   in every row, so that reads after a compaction find the rows from one
**   family until writes make the families differ), statements that must
**   fail without leaving partial rows. At a third and at two thirds the database is
**   closed and reopened (the wcs tables reconnect to their store) and every
**   table is compared whole.
**
** COMPARISON
**   Results are compared as multisets, except that when ORDER BY fixes the
**   order (it covers a unique key) the rows are compared in order; when
**   ORDER BY does not fix it, the sequence of the ORDER BY columns (which
**   lead the select list) must agree, and the multiset too unless a LIMIT
**   cut the result. LIMIT without ORDER BY compares row counts. Values are
**   compared with their SQLite storage class. After every write the tables
**   are compared whole. Both sides failing counts as agreement; one side
**   failing is a mismatch.
**
** ENVIRONMENT
**   WCS_SEED=n           replay a run (the seed is printed first)
**   WCS_DIFF_QUERIES=n   random statements in all (default 3000, 1500
**                        under sanitizers); each is one to a dozen compared
**                        statements
**   WCS_DIFF_AVOID=list  known module bugs to steer around (see aAvoidName;
**                        "none" tests everything)
**   WCS_DIFF_SCALE=n     load n times more rows (default 1: 1000-1500 rows
**                        per table, which fit the memtable until a
**                        wcs_compact() statement moves them to sorted files)
**   WCS_DIFF_VERBOSE=1   print every statement pair as it runs
**   WCS_TEST_TMP         where the database directory is made
**
** On a mismatch it prints the seed, the statement number, both SQL texts
** and both results, and exits 1 at the end. Exit 0: everything agreed.
*/
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "wcs.h"

#define MAXF           4   /* key fields or qualifier columns per schema */
#define MAX_PRINT_FAIL 25  /* mismatches printed in full */
#define MAX_FAIL       300 /* stop early after this many */

/* ------------------------------------------------------------------ */
/* Values                                                              */

typedef struct Val {
  int t;            /* SQLITE_INTEGER/FLOAT/TEXT/BLOB/NULL */
  int64_t i;        /* SQLITE_INTEGER */
  double r;         /* SQLITE_FLOAT */
  int n;            /* TEXT/BLOB: bytes at z */
  unsigned char *z; /* TEXT/BLOB: malloc'd, NUL-terminated; owned */
} Val;

static void valClear(Val *v) {
  free(v->z);
  memset(v, 0, sizeof *v);
  v->t = SQLITE_NULL;
}

static void valBytes(Val *v, int t, const void *p, int n) {
  valClear(v);
  v->t = t;
  v->n = n;
  v->z = malloc((size_t)n + 1);
  if (n) memcpy(v->z, p, (size_t)n);
  v->z[n] = 0;
}
static void valText(Val *v, const char *z) {
  valBytes(v, SQLITE_TEXT, z, (int)strlen(z));
}
static void valInt(Val *v, int64_t i) {
  valClear(v);
  v->t = SQLITE_INTEGER;
  v->i = i;
}
static void valReal(Val *v, double r) {
  valClear(v);
  v->t = SQLITE_FLOAT;
  v->r = r;
}
static void valCopy(Val *v, const Val *p) {
  if (p->t == SQLITE_TEXT || p->t == SQLITE_BLOB) {
    valBytes(v, p->t, p->z, p->n);
  } else {
    valClear(v);
    *v = *p;
    v->z = NULL;
  }
}
static void valFromCol(Val *v, sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_INTEGER:
    valInt(v, sqlite3_column_int64(st, i));
    break;
  case SQLITE_FLOAT:
    valReal(v, sqlite3_column_double(st, i));
    break;
  case SQLITE_TEXT:
    valBytes(v, SQLITE_TEXT, sqlite3_column_text(st, i),
             sqlite3_column_bytes(st, i));
    break;
  case SQLITE_BLOB:
    valBytes(v, SQLITE_BLOB, sqlite3_column_blob(st, i),
             sqlite3_column_bytes(st, i));
    break;
  default:
    valClear(v);
    break;
  }
}
static void valBind(sqlite3_stmt *st, int i, const Val *v) {
  switch (v->t) {
  case SQLITE_INTEGER:
    sqlite3_bind_int64(st, i, v->i);
    break;
  case SQLITE_FLOAT:
    sqlite3_bind_double(st, i, v->r);
    break;
  case SQLITE_TEXT:
    sqlite3_bind_text(st, i, (const char *)v->z, v->n, SQLITE_TRANSIENT);
    break;
  case SQLITE_BLOB:
    sqlite3_bind_blob(st, i, v->z, v->n, SQLITE_TRANSIENT);
    break;
  default:
    sqlite3_bind_null(st, i);
    break;
  }
}
static int valEq(const Val *a, const Val *b) {
  if (a->t != b->t) return 0;
  switch (a->t) {
  case SQLITE_INTEGER:
    return a->i == b->i;
  case SQLITE_FLOAT:
    return a->r == b->r;
  case SQLITE_TEXT:
  case SQLITE_BLOB:
    return a->n == b->n && memcmp(a->z, b->z, a->n) == 0;
  default:
    return 1;
  }
}

/* A SQL literal for v. INT64_MIN is written as an expression half the time
** (its literal parses as an integer only through a special case). */
static void appendLit(sqlite3_str *s, const Val *v) {
  int i;
  switch (v->t) {
  case SQLITE_INTEGER:
    if (v->i == INT64_MIN) {
      sqlite3_str_appendf(s, "%s",
                          (tu_rand() & 1) ? "(-9223372036854775807-1)"
                                          : "-9223372036854775808");
    } else {
      sqlite3_str_appendf(s, "%lld", (long long)v->i);
    }
    break;
  case SQLITE_FLOAT: {
    char z[64];
    snprintf(z, sizeof z, "%.17g", v->r);
    if (strpbrk(z, ".eEn") == NULL) strcat(z, ".0");
    sqlite3_str_appendf(s, "%s", z);
    break;
  }
  case SQLITE_TEXT:
    sqlite3_str_appendf(s, "%Q", (const char *)v->z);
    break;
  case SQLITE_BLOB:
    sqlite3_str_appendall(s, "x'");
    for (i = 0; i < v->n; i++)
      sqlite3_str_appendf(s, "%02x", v->z[i]);
    sqlite3_str_appendall(s, "'");
    break;
  default:
    sqlite3_str_appendall(s, "NULL");
    break;
  }
}

/* ------------------------------------------------------------------ */
/* Random helpers                                                      */

static int rnd(int n) {
  return (int)tu_rand_range((uint64_t)n);
}
static int pct(int p) {
  return rnd(100) < p;
}

/* An int64 of random magnitude (every bit length equally likely), random
** sign, sometimes one of the extremes. */
static int64_t randWide(void) {
  static const int64_t aEdge[] = {INT64_MIN,
                                  INT64_MIN + 1,
                                  -8193,
                                  -8192,
                                  -65,
                                  -64,
                                  -1,
                                  0,
                                  1,
                                  63,
                                  64,
                                  8191,
                                  8192,
                                  (int64_t)1 << 48,
                                  INT64_MAX - 1,
                                  INT64_MAX};
  if (pct(15)) return aEdge[rnd((int)(sizeof aEdge / sizeof aEdge[0]))];
  {
    int nBit = rnd(64);
    uint64_t x = tu_rand() & ((nBit == 0) ? 0 : (((uint64_t)1 << nBit) - 1));
    int64_t v = (int64_t)(x >> 1);
    return (tu_rand() & 1) ? -v - 1 : v;
  }
}

/* ------------------------------------------------------------------ */
/* Schemas                                                             */

enum { KEY_DELIM = 1, KEY_OC, KEY_SINGLE, KEY_NONE };

typedef struct Col {
  const char *zName;
  int t; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB */
} Col;

typedef struct Spec {
  const char *zTag;    /* table names: w_<tag>, n_<tag>, p_<tag> */
  const char *zArgs;   /* module arguments */
  const char *zNative; /* column definitions of the native table */
  int eKey;            /* KEY_* */
  int nKey;            /* key fields (KEY_NONE: 1, the _key column) */
  Col aKey[MAXF];
  int nQual; /* qualifier columns; the first is never NULL */
  Col aQual[MAXF];
  int nLoad;  /* rows to load */
  int nProbe; /* key fields in the probe table */
  int bDense; /* the load gives every row a cell in every family, so that
              ** after wcs_compact() reads can find the rows from one
              ** family (doc/engine.md, "Rows from the files' notes") until
              ** writes make the families differ */
} Spec;

static Spec aSpec[] = {
    {"tele",
     "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', "
     "FAMILY stats (cpu INT64, mem INT64, temp FLOAT64), "
     "FAMILY meta (note STRING), SYNC OFF",
     "device TEXT, id TEXT, day INTEGER, cpu INTEGER, mem INTEGER, temp REAL, "
     "note TEXT, _key BLOB, PRIMARY KEY(device, id, day)",
     KEY_DELIM,
     3,
     {{"device", SQLITE_TEXT}, {"id", SQLITE_TEXT}, {"day", SQLITE_INTEGER}},
     4,
     {{"cpu", SQLITE_INTEGER},
      {"mem", SQLITE_INTEGER},
      {"temp", SQLITE_FLOAT},
      {"note", SQLITE_TEXT}},
     1500,
     2,
     1},
    {"oc",
     "KEY (tenant INT64 ORDERED CODE, ts INT64 ORDERED CODE, name STRING) "
     "ORDERED CODE, FAMILY f (v INT64, s STRING), SYNC OFF",
     "tenant INTEGER, ts INTEGER, name TEXT, v INTEGER, s TEXT, _key BLOB, "
     "PRIMARY KEY(tenant, ts, name)",
     KEY_OC,
     3,
     {{"tenant", SQLITE_INTEGER},
      {"ts", SQLITE_INTEGER},
      {"name", SQLITE_TEXT}},
     2,
     {{"v", SQLITE_INTEGER}, {"s", SQLITE_TEXT}},
     1500,
     2,
     0},
    {"bytes",
     "KEY (k BYTES), FAMILY f (v INT64, s STRING), SYNC OFF",
     "k BLOB PRIMARY KEY, v INTEGER, s TEXT, _key BLOB",
     KEY_SINGLE,
     1,
     {{"k", SQLITE_BLOB}},
     2,
     {{"v", SQLITE_INTEGER}, {"s", SQLITE_TEXT}},
     1000,
     1,
     0},
    {"raw",
     "FAMILY f (v INT64), FAMILY g (s STRING), SYNC OFF",
     "_key BLOB PRIMARY KEY, v INTEGER, s TEXT",
     KEY_NONE,
     1,
     {{"_key", SQLITE_BLOB}},
     2,
     {{"v", SQLITE_INTEGER}, {"s", SQLITE_TEXT}},
     1000,
     1,
     0},
};
#define NSPEC ((int)(sizeof aSpec / sizeof aSpec[0]))

/* Value pools the loaders draw from (so that prefixes repeat). */
static const char *azDevice[] = {"phone", "tablet", "pc", "Phone",
                                 "",      "phönix", "$",  "$x",
                                 "ph$",   "日本",   "ph"};
static const char *azIdPiece[] = {"a", "b", "z",  "0", "7", "$", "%",
                                  "_", "é", "日", "😀", "A", "~", "\x7f"};
static const char *azName[] = {"",    "\x01",  " ",     "!",    "#",    "a",
                               "ab",  "a\x01", "é",     "日本", "\x7f", "A",
                               "a b", "zz",    "a\x1f", "%",    "_x",   "aa"};
static char aaId[50][24];
static int64_t aDay[40];
static int64_t aTenant[16];
static int64_t aTs[60];

static void randIdText(char *z) {
  int n = rnd(5), j;
  z[0] = 0;
  for (j = 0; j < n; j++)
    strcat(z, azIdPiece[rnd((int)(sizeof azIdPiece / sizeof azIdPiece[0]))]);
}

static void initPools(void) {
  int i;
  static const int64_t aDayEdge[] = {
      0, 1, 9, 10, 99999999, 99999998, 20200101, 20200102, 12345678};
  static const int64_t aTenantEdge[] = {INT64_MIN,
                                        INT64_MIN + 1,
                                        -8193,
                                        -65,
                                        -64,
                                        -1,
                                        0,
                                        1,
                                        63,
                                        64,
                                        8191,
                                        8192,
                                        (int64_t)1 << 48,
                                        INT64_MAX - 1,
                                        INT64_MAX,
                                        424242};
  for (i = 0; i < 50; i++) {
    if (i == 0)
      strcpy(aaId[i], "");
    else if (i == 1)
      strcpy(aaId[i], "007");
    else if (i == 2)
      strcpy(aaId[i], "12");
    else if (i == 3)
      strcpy(aaId[i], "4c410523");
    else
      randIdText(aaId[i]);
  }
  for (i = 0; i < 40; i++) {
    aDay[i] = i < 9 ? aDayEdge[i] : 20190101 + rnd(50000);
  }
  for (i = 0; i < 16; i++)
    aTenant[i] = aTenantEdge[i];
  for (i = 0; i < 60; i++)
    aTs[i] = randWide();
}

static void randBytes(Val *v, int nMin, int nMax) {
  static const unsigned char aB[] = {0x00, 0x01, 0x22, 0x23, 0x24, 0x41,
                                     0x61, 0x7f, 0x80, 0xc3, 0xfe, 0xff};
  unsigned char a[16];
  int n = nMin + rnd(nMax - nMin + 1), j;
  for (j = 0; j < n; j++) {
    a[j] = pct(70) ? aB[rnd((int)sizeof aB)] : (unsigned char)tu_rand();
  }
  valBytes(v, SQLITE_BLOB, a, n);
}

/* A key field value. bLoad: drawn from the pools (load and inserts);
** otherwise sometimes a value that is in no row. */
static void genField(const Spec *s, int iField, int bLoad, Val *v) {
  char z[64];
  switch (s->eKey) {
  case KEY_DELIM:
    if (iField == 0) {
      if (bLoad || pct(80)) {
        valText(v, azDevice[rnd((int)(sizeof azDevice / sizeof(char *)))]);
      } else {
        randIdText(z);
        valText(v, z);
      }
    } else if (iField == 1) {
      if (bLoad || pct(75)) {
        valText(v, aaId[rnd(50)]);
      } else {
        randIdText(z);
        valText(v, z);
      }
    } else {
      valInt(v, (bLoad || pct(75)) ? aDay[rnd(40)] : rnd(100000000));
    }
    break;
  case KEY_OC:
    if (iField == 0) {
      valInt(v, (bLoad || pct(80)) ? aTenant[rnd(16)] : randWide());
    } else if (iField == 1) {
      valInt(v, (bLoad || pct(70)) ? aTs[rnd(60)] : randWide());
    } else {
      valText(v, azName[rnd((int)(sizeof azName / sizeof(char *)))]);
    }
    break;
  case KEY_SINGLE:
    randBytes(v, 1, 5);
    break;
  default:
    if (pct(50)) {
      snprintf(z, sizeof z, "%s#%s#%d", azDevice[rnd(4)], aaId[3 + rnd(6)],
               rnd(30));
      valBytes(v, SQLITE_BLOB, z, (int)strlen(z));
    } else {
      randBytes(v, 1, 6);
    }
    break;
  }
}

/* A qualifier value; the first qualifier is never NULL (a row exists while
** it has a cell, DESIGN.md §4; a native row has no such rule). */
static void genQual(const Spec *s, int iQual, Val *v) {
  static const char *azNote[] = {"", "ok", "hot", "日本語", "a'b", "x y", "%_"};
  const Col *c = &s->aQual[iQual];
  if (iQual > 0 && pct(25)) {
    valClear(v);
    return;
  }
  if (c->t == SQLITE_INTEGER) {
    if (iQual == 0)
      valInt(v, (int64_t)rnd(2000001) - 1000000);
    else
      valInt(v, pct(15) ? randWide() : rnd(1000));
  } else if (c->t == SQLITE_FLOAT) {
    valReal(v, (rnd(801) - 400) * 0.25);
  } else {
    valText(v, azNote[rnd((int)(sizeof azNote / sizeof(char *)))]);
  }
}

/* Google orderedcode signed int64 ("sorted and distinct for all values"). */
static int ocInt(int64_t v, unsigned char *a) {
  uint64_t x = v < 0 ? ~(uint64_t)v : (uint64_t)v;
  int n = 1, nBit = 0, i;
  unsigned char buf[10];
  uint64_t t = x;
  while (t) {
    nBit++;
    t >>= 1;
  }
  n = nBit / 7 + 1; /* value bits + sign bit fit in 7n */
  /* big-endian x over n bytes, sign-extended (zero for x >= 0) */
  memset(buf, 0, sizeof buf);
  for (i = 0; i < 8; i++)
    buf[9 - i] = (unsigned char)(x >> (8 * i));
  {
    unsigned char *p = buf + 10 - n;
    /* header: n one-bits then a zero-bit, in the top n+1 bits */
    int nOne = n;
    int k = 0;
    while (nOne >= 8) {
      p[k++] |= 0xff;
      nOne -= 8;
    }
    p[k] |= (unsigned char)(0xff << (8 - nOne));
    for (i = 0; i < n; i++)
      a[i] = v < 0 ? (unsigned char)~p[i] : p[i];
  }
  return n;
}

/* The row key for a tuple, from the documented encodings. */
static void encodeKey(const Spec *s, const Val *aKey, Val *pOut) {
  unsigned char a[4200];
  int n = 0, i;
  if (s->eKey == KEY_DELIM) {
    n = snprintf((char *)a, sizeof a, "%s#%s#%08lld", (const char *)aKey[0].z,
                 (const char *)aKey[1].z, (long long)aKey[2].i);
  } else if (s->eKey == KEY_OC) {
    unsigned char aF[3][64];
    int anF[3], nLast;
    anF[0] = ocInt(aKey[0].i, aF[0]);
    anF[1] = ocInt(aKey[1].i, aF[1]);
    memcpy(aF[2], aKey[2].z, aKey[2].n);
    anF[2] = aKey[2].n;
    nLast = 3;
    while (nLast > 0 && anF[nLast - 1] == 0)
      nLast--;
    if (nLast == 0) {
      a[n++] = 0;
      a[n++] = 0;
    }
    for (i = 0; i < nLast; i++) {
      int j;
      if (i > 0) {
        a[n++] = 0;
        a[n++] = 1;
      }
      if (anF[i] == 0) {
        a[n++] = 0;
        a[n++] = 0;
      }
      for (j = 0; j < anF[i]; j++) {
        a[n++] = aF[i][j];
        if (aF[i][j] == 0) a[n++] = 0xff;
      }
    }
  } else {
    memcpy(a, aKey[0].z, aKey[0].n);
    n = aKey[0].n;
  }
  valBytes(pOut, SQLITE_BLOB, a, n);
}

/* ------------------------------------------------------------------ */
/* Running SQL and comparing results                                   */

typedef struct Res {
  int rc;     /* SQLITE_OK or the error */
  char *zErr; /* error message (sqlite3_malloc'd) */
  int nRow;
  char **aRow; /* canonical text of each row */
  char **aOrd; /* canonical text of its leading nOrd columns */
  int nChange; /* sqlite3_changes() after a write */
} Res;

static void resFree(Res *r) {
  int i;
  for (i = 0; i < r->nRow; i++) {
    sqlite3_free(r->aRow[i]);
    sqlite3_free(r->aOrd[i]);
  }
  free(r->aRow);
  free(r->aOrd);
  sqlite3_free(r->zErr);
  memset(r, 0, sizeof *r);
}

static void appendCanon(sqlite3_str *s, sqlite3_stmt *st, int i) {
  int j, n;
  const unsigned char *z;
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL:
    sqlite3_str_appendall(s, "NULL");
    break;
  case SQLITE_INTEGER:
    sqlite3_str_appendf(s, "%lld", (long long)sqlite3_column_int64(st, i));
    break;
  case SQLITE_FLOAT:
    sqlite3_str_appendf(s, "%!.12g", sqlite3_column_double(st, i));
    break;
  case SQLITE_TEXT:
    z = sqlite3_column_text(st, i);
    n = sqlite3_column_bytes(st, i);
    sqlite3_str_appendchar(s, 1, '\'');
    for (j = 0; j < n; j++) {
      if (z[j] < 0x20 || z[j] == 0x7f || z[j] == '\\' || z[j] == '|') {
        sqlite3_str_appendf(s, "\\x%02x", z[j]);
      } else {
        sqlite3_str_appendchar(s, 1, (char)z[j]);
      }
    }
    sqlite3_str_appendchar(s, 1, '\'');
    break;
  default:
    z = sqlite3_column_blob(st, i);
    n = sqlite3_column_bytes(st, i);
    sqlite3_str_appendall(s, "x'");
    for (j = 0; j < n; j++)
      sqlite3_str_appendf(s, "%02x", z[j]);
    sqlite3_str_appendchar(s, 1, '\'');
    break;
  }
}

static void runSql(sqlite3 *db, const char *zSql, int nOrd, Res *r) {
  sqlite3_stmt *st = NULL;
  int nAlloc = 0, rc, nCol, i;
  memset(r, 0, sizeof *r);
  rc = sqlite3_prepare_v2(db, zSql, -1, &st, NULL);
  if (rc == SQLITE_OK && st == NULL) return;
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    sqlite3_str *s = sqlite3_str_new(NULL);
    nCol = sqlite3_column_count(st);
    if (r->nRow == nAlloc) {
      nAlloc = nAlloc ? nAlloc * 2 : 16;
      r->aRow = realloc(r->aRow, sizeof(char *) * nAlloc);
      r->aOrd = realloc(r->aOrd, sizeof(char *) * nAlloc);
    }
    r->aOrd[r->nRow] = NULL;
    for (i = 0; i < nCol; i++) {
      if (i) sqlite3_str_appendchar(s, 1, '|');
      appendCanon(s, st, i);
      if (i + 1 == nOrd)
        r->aOrd[r->nRow] = sqlite3_mprintf("%s", sqlite3_str_value(s));
    }
    r->aRow[r->nRow++] = sqlite3_str_finish(s);
    rc = SQLITE_OK;
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  if (rc != SQLITE_OK) {
    r->rc = rc;
    r->zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  r->nChange = sqlite3_changes(db);
  if (r->rc != SQLITE_OK) r->nChange = -1;
}

static int cmpStr(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  return strcmp(x ? x : "", y ? y : "");
}

/* How two results are compared. */
enum {
  CMP_BAG = 0,   /* as multisets */
  CMP_ORDERED,   /* row by row in order */
  CMP_ORDPREFIX, /* leading nOrd columns in order (+ multiset if !bLimit) */
  CMP_COUNT,     /* number of rows */
  CMP_CHANGES    /* a write: both succeed with the same changes() */
};

static int sameSeq(char **a, char **b, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (strcmp(a[i] ? a[i] : "", b[i] ? b[i] : "") != 0) return 0;
  }
  return 1;
}

static int sameBag(const Res *pA, const Res *pB) {
  int ok;
  char **a, **b;
  if (pA->nRow != pB->nRow) return 0;
  if (pA->nRow == 0) return 1;
  a = malloc(sizeof(char *) * pA->nRow);
  b = malloc(sizeof(char *) * pB->nRow);
  memcpy(a, pA->aRow, sizeof(char *) * pA->nRow);
  memcpy(b, pB->aRow, sizeof(char *) * pB->nRow);
  qsort(a, pA->nRow, sizeof(char *), cmpStr);
  qsort(b, pB->nRow, sizeof(char *), cmpStr);
  ok = sameSeq(a, b, pA->nRow);
  free(a);
  free(b);
  return ok;
}

static int resultsAgree(const Res *w, const Res *n, int eCmp, int bLimit) {
  if ((w->rc != SQLITE_OK) != (n->rc != SQLITE_OK)) return 0;
  if (w->rc != SQLITE_OK) return 1; /* both failed */
  switch (eCmp) {
  case CMP_ORDERED:
    return w->nRow == n->nRow && sameSeq(w->aRow, n->aRow, w->nRow);
  case CMP_ORDPREFIX:
    if (w->nRow != n->nRow || !sameSeq(w->aOrd, n->aOrd, w->nRow)) return 0;
    return bLimit || sameBag(w, n);
  case CMP_COUNT:
    return w->nRow == n->nRow;
  case CMP_CHANGES:
    return w->nChange == n->nChange;
  default:
    return sameBag(w, n);
  }
}

/* ------------------------------------------------------------------ */
/* Test state                                                          */

typedef struct Run {
  sqlite3 *db;
  char zDb[4200]; /* database file */
  uint64_t seed;
  int iStmt; /* statements run (numbering for messages) */
  int nFail; /* mismatches */
  int bVerbose;
  int nSelect, nWrite, nTxn, nReject; /* counters for the summary */
  int nNonEmpty;                      /* compared reads that returned rows */
  int nRandom;                        /* random statements run */
  int mAvoid;                         /* AVOID_* bits */
  int bInOr;                          /* generating a term inside an OR */
  int anRow[NSPEC];                   /* rows in each native table */
  int abBroken[NSPEC]; /* the tables diverged after a write: stop using them */
} Run;

static Run g;

/* Known module bugs the generator can steer around, so that the rest of
** the surface stays tested while a fix is pending. WCS_DIFF_AVOID lists
** them by name ("none": avoid nothing); unset, DEFAULT_AVOID applies.
** Remove a name from DEFAULT_AVOID when its bug is fixed. */
#define DEFAULT_AVOID "key-text"
#define AVOID_EMPTY_BLOB                                                       \
  0x01 /* x'' as a point or upper bound on a BLOB                              \
        ** key column (_key < x'', k = x'') */
#define AVOID_ROW_VALUE_LIMIT                                                  \
  0x02 /* (a, b) > (x, y) with a LIMIT: the                                    \
       ** generator then writes (a, b) = (x, y) */
#define AVOID_KEY_TEXT                                                         \
  0x04 /* _key <op> 'text': plan-dependent (inside an                          \
       ** OR, or beside a point lookup on _key) */
static const struct {
  const char *zName;
  int m;
} aAvoidName[] = {
    {"empty-blob", AVOID_EMPTY_BLOB},
    {"row-value-limit", AVOID_ROW_VALUE_LIMIT},
    {"key-text", AVOID_KEY_TEXT},
};
static int parseAvoid(const char *z) {
  int m = 0, i;
  if (z == NULL) return 0;
  for (i = 0; i < (int)(sizeof aAvoidName / sizeof aAvoidName[0]); i++) {
    if (strstr(z, aAvoidName[i].zName)) m |= aAvoidName[i].m;
  }
  return m;
}

static void printRes(const char *zWho, const Res *r) {
  int i;
  if (r->rc != SQLITE_OK) {
    fprintf(stderr, "  %s: error %d: %s\n", zWho, r->rc, r->zErr);
    return;
  }
  fprintf(stderr, "  %s: %d rows (changes %d)\n", zWho, r->nRow, r->nChange);
  for (i = 0; i < r->nRow && i < 30; i++) {
    fprintf(stderr, "    %s\n", r->aRow[i]);
  }
  if (r->nRow > 30) fprintf(stderr, "    ...\n");
}

/* Rows in one result and not in the other (multiset difference), to make a
** large mismatch readable. */
static void printDiff(const Res *w, const Res *n) {
  char **a, **b;
  int i = 0, j = 0, nShown = 0;
  if (w->rc || n->rc || (w->nRow < 30 && n->nRow < 30)) return;
  a = malloc(sizeof(char *) * (w->nRow + 1));
  b = malloc(sizeof(char *) * (n->nRow + 1));
  memcpy(a, w->aRow, sizeof(char *) * w->nRow);
  memcpy(b, n->aRow, sizeof(char *) * n->nRow);
  qsort(a, w->nRow, sizeof(char *), cmpStr);
  qsort(b, n->nRow, sizeof(char *), cmpStr);
  fprintf(stderr, "  difference (first 20):\n");
  while ((i < w->nRow || j < n->nRow) && nShown < 20) {
    int c = i >= w->nRow ? 1 : j >= n->nRow ? -1 : strcmp(a[i], b[j]);
    if (c == 0) {
      i++;
      j++;
    } else if (c < 0) {
      fprintf(stderr, "    only wcs:    %s\n", a[i++]);
      nShown++;
    } else {
      fprintf(stderr, "    only native: %s\n", b[j++]);
      nShown++;
    }
  }
  free(a);
  free(b);
}

static void reportMismatch(const char *zWhat, const char *zW, const char *zN,
                           const Res *w, const Res *n) {
  g.nFail++;
  if (g.nFail > MAX_PRINT_FAIL) return;
  fprintf(stderr,
          "\nMISMATCH (%s) at statement %d, seed WCS_SEED=%llu\n"
          "  wcs SQL:    %s\n  native SQL: %s\n",
          zWhat, g.iStmt, (unsigned long long)g.seed, zW, zN);
  printRes("wcs   ", w);
  printRes("native", n);
  printDiff(w, n);
}

/* Run a statement pair and compare; returns 1 if they agree. */
static int compare2(const char *zW, const char *zN, int eCmp, int nOrd,
                    int bLimit, const char *zWhat) {
  Res w, n;
  int ok;
  g.iStmt++;
  if (g.bVerbose) fprintf(stderr, "[%d] %s\n     %s\n", g.iStmt, zW, zN);
  runSql(g.db, zW, nOrd, &w);
  runSql(g.db, zN, nOrd, &n);
  ok = resultsAgree(&w, &n, eCmp, bLimit);
  if (eCmp != CMP_CHANGES && n.nRow > 0) g.nNonEmpty++;
  if (!ok) reportMismatch(zWhat, zW, zN, &w, &n);
  resFree(&w);
  resFree(&n);
  return ok;
}

/* Execute SQL that must succeed (setup, transaction control). */
static int execOk(const char *zSql) {
  char *zErr = NULL;
  int rc = sqlite3_exec(g.db, zSql, NULL, NULL, &zErr);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "error %d in \"%s\": %s (seed WCS_SEED=%llu)\n", rc, zSql,
            zErr ? zErr : "", (unsigned long long)g.seed);
    sqlite3_free(zErr);
  }
  return rc;
}

/* Compare a whole wcs table with its native twin, in key order. */
static int compareWhole(int iSpec, const char *zWhy) {
  const Spec *s = &aSpec[iSpec];
  sqlite3_str *a = sqlite3_str_new(NULL);
  sqlite3_str *o = sqlite3_str_new(NULL);
  char *zCols, *zOrd, *zW, *zN;
  int i, ok;
  for (i = 0; i < s->nKey; i++) {
    sqlite3_str_appendf(a, "%s%s", i ? ", " : "", s->aKey[i].zName);
    sqlite3_str_appendf(o, "%s%s", i ? ", " : "", s->aKey[i].zName);
  }
  for (i = 0; i < s->nQual; i++)
    sqlite3_str_appendf(a, ", %s", s->aQual[i].zName);
  if (s->eKey != KEY_NONE) sqlite3_str_appendall(a, ", _key");
  zCols = sqlite3_str_finish(a);
  zOrd = sqlite3_str_finish(o);
  zW = sqlite3_mprintf("SELECT %s FROM w_%s ORDER BY %s", zCols, s->zTag, zOrd);
  zN = sqlite3_mprintf("SELECT %s FROM n_%s ORDER BY %s", zCols, s->zTag, zOrd);
  ok = compare2(zW, zN, CMP_ORDERED, 0, 0, zWhy);
  sqlite3_free(zCols);
  sqlite3_free(zOrd);
  sqlite3_free(zW);
  sqlite3_free(zN);
  return ok;
}

static int countRows(const char *zTab) {
  sqlite3_stmt *st;
  char *z = sqlite3_mprintf("SELECT count(*) FROM %s", zTab);
  int n = -1;
  if (sqlite3_prepare_v2(g.db, z, -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_free(z);
  return n;
}

static void refreshCount(int iSpec) {
  char z[64];
  snprintf(z, sizeof z, "n_%s", aSpec[iSpec].zTag);
  g.anRow[iSpec] = countRows(z);
}

/* A random existing row's key fields (aKey[0..nKey-1]) and _key, read from
** the native table; fresh values if it is empty. */
static void sampleRow(int iSpec, Val *aKey, Val *pKey) {
  const Spec *s = &aSpec[iSpec];
  sqlite3_stmt *st = NULL;
  int i, bGot = 0;
  if (g.anRow[iSpec] > 0) {
    sqlite3_str *q = sqlite3_str_new(NULL);
    char *z;
    sqlite3_str_appendall(q, "SELECT ");
    for (i = 0; i < s->nKey; i++)
      sqlite3_str_appendf(q, "%s, ", s->aKey[i].zName);
    sqlite3_str_appendf(q, "_key FROM n_%s ORDER BY _key LIMIT 1 OFFSET %d",
                        s->zTag, rnd(g.anRow[iSpec]));
    z = sqlite3_str_finish(q);
    if (sqlite3_prepare_v2(g.db, z, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      for (i = 0; i < s->nKey; i++)
        valFromCol(&aKey[i], st, i);
      valFromCol(pKey, st, s->nKey);
      bGot = 1;
    }
    sqlite3_finalize(st);
    sqlite3_free(z);
  }
  if (!bGot) {
    for (i = 0; i < s->nKey; i++)
      genField(s, i, 0, &aKey[i]);
    encodeKey(s, aKey, pKey);
  }
}

static void freeVals(Val *a, int n) {
  int i;
  for (i = 0; i < n; i++)
    valClear(&a[i]);
}

/* ------------------------------------------------------------------ */
/* Statement generation: a pair of texts built side by side            */

typedef struct Q {
  sqlite3_str *w, *n;
  int iSpec;
  const Spec *s;
  Val aRow[MAXF]; /* the sampled row conditions lean on */
  Val rowKey;
} Q;

static void qInit(Q *q, int iSpec) {
  int i;
  memset(q, 0, sizeof *q);
  q->w = sqlite3_str_new(NULL);
  q->n = sqlite3_str_new(NULL);
  q->iSpec = iSpec;
  q->s = &aSpec[iSpec];
  for (i = 0; i < MAXF; i++)
    q->aRow[i].t = SQLITE_NULL;
  q->rowKey.t = SQLITE_NULL;
  sampleRow(iSpec, q->aRow, &q->rowKey);
}

static void qDone(Q *q, char **pzW, char **pzN) {
  *pzW = sqlite3_str_finish(q->w);
  *pzN = sqlite3_str_finish(q->n);
  freeVals(q->aRow, MAXF);
  valClear(&q->rowKey);
}

static void qa(Q *q, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_str_vappendf(q->w, zFmt, ap);
  va_end(ap);
  va_start(ap, zFmt);
  sqlite3_str_vappendf(q->n, zFmt, ap);
  va_end(ap);
}
static void qw(Q *q, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_str_vappendf(q->w, zFmt, ap);
  va_end(ap);
}
static void qn(Q *q, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_str_vappendf(q->n, zFmt, ap);
  va_end(ap);
}
static void qlit(Q *q, const Val *v) {
  /* the same literal text on both sides (INT64_MIN picks a spelling) */
  sqlite3_str *t = sqlite3_str_new(NULL);
  char *z;
  appendLit(t, v);
  z = sqlite3_str_finish(t);
  qa(q, "%s", z);
  sqlite3_free(z);
}
static void qtab(Q *q) { /* the table name */
  qw(q, "w_%s", q->s->zTag);
  qn(q, "n_%s", q->s->zTag);
}

/* A value for a condition on key field i: mostly the sampled row's. */
static void condVal(Q *q, int i, Val *v) {
  if (pct(75))
    valCopy(v, &q->aRow[i]);
  else
    genField(q->s, i, 0, v);
}

/* Length in bytes of a prefix of at most nChar UTF-8 characters. */
static int utf8Prefix(const unsigned char *z, int n, int nChar) {
  int i = 0, c = 0;
  while (i < n && c < nChar) {
    i++;
    while (i < n && (z[i] & 0xc0) == 0x80)
      i++;
    c++;
  }
  return i;
}
static int utf8Chars(const unsigned char *z, int n) {
  int i, c = 0;
  for (i = 0; i < n; i++)
    c += (z[i] & 0xc0) != 0x80;
  return c;
}

/* starts_with(zCol, prefix): the module's function on the wcs side, a byte
** comparison on the native side. */
static void qStartsWith(Q *q, const char *zCol, const Val *pPre) {
  qw(q, "starts_with(%s, ", zCol);
  appendLit(q->w, pPre);
  qw(q, ")");
  if (pPre->n == 0) {
    /* substr() of an empty BLOB is NULL, so say "every value" directly */
    qn(q, "%s IS NOT NULL", zCol);
    return;
  }
  qn(q, "substr(CAST(%s AS BLOB), 1, %d) = CAST(", zCol, pPre->n);
  appendLit(q->n, pPre);
  qn(q, " AS BLOB)");
}

static const char *azCmp[] = {"<", "<=", ">", ">="};

/* zCol <op> 'zText' where zCol may be _key. doc/sql.md §5 ("_key and
** text"): a TEXT value compared with _key counts as its UTF-8 bytes where
** the term reaches the module as a constraint (a top-level AND term), so
** the native side compares with CAST(text AS BLOB); inside an OR SQLite's
** own rule decides (every BLOB sorts after every TEXT), so both sides get
** the same text. Other BLOB columns keep SQLite's rule everywhere. */
static void qKeyText(Q *q, const char *zCol, const char *zOp,
                     const char *zText) {
  size_t n = strlen(zCol);
  int bKey = n >= 4 && strcmp(zCol + n - 4, "_key") == 0;
  if (bKey && (g.mAvoid & AVOID_KEY_TEXT)) {
    /* plan-dependent in the module today: bytes on both sides */
    qa(q, "%s %s CAST('%q' AS BLOB)", zCol, zOp, zText);
  } else if (bKey && !g.bInOr) {
    qw(q, "%s %s '%q'", zCol, zOp, zText);
    qn(q, "%s %s CAST('%q' AS BLOB)", zCol, zOp, zText);
  } else {
    qa(q, "%s %s '%q'", zCol, zOp, zText);
  }
}

/* One WHERE term on key field i, column reference zCol. */
static void keyTerm(Q *q, int i, const char *zCol) {
  const Col *c = &q->s->aKey[i];
  Val v, v2;
  int x = rnd(100);
  memset(&v, 0, sizeof v);
  memset(&v2, 0, sizeof v2);
  condVal(q, i, &v);
  if (c->t == SQLITE_BLOB && pct(6)) {
    /* the empty BLOB: below every key */
    valBytes(&v, SQLITE_BLOB, "", 0);
    if ((g.mAvoid & AVOID_EMPTY_BLOB) && !(x >= 40 && x < 62) &&
        !(x >= 70 && x < 86)) {
      valBytes(&v, SQLITE_BLOB, "\0", 1);
    }
  }
  if (x < 25) {
    qa(q, "%s = ", zCol);
    qlit(q, &v);
  } else if (x < 40) {
    int k = 1 + rnd(6), j;
    qa(q, "%s IN (", zCol);
    for (j = 0; j < k; j++) {
      Val a[MAXF], kk;
      memset(a, 0, sizeof a);
      memset(&kk, 0, sizeof kk);
      if (j == 0) {
        qlit(q, &v);
      } else {
        if (pct(70)) {
          sampleRow(q->iSpec, a, &kk);
          qa(q, ", ");
          qlit(q, &a[i]);
        } else {
          genField(q->s, i, 0, &a[i]);
          qa(q, ", ");
          qlit(q, &a[i]);
        }
      }
      freeVals(a, MAXF);
      valClear(&kk);
    }
    qa(q, ")");
  } else if (x < 62) {
    int iOp = rnd(4);
    if (v.n == 0 && v.t == SQLITE_BLOB && iOp < 2 &&
        (g.mAvoid & AVOID_EMPTY_BLOB)) {
      iOp += 2;
    }
    qa(q, "%s %s ", zCol, azCmp[iOp]);
    qlit(q, &v);
  } else if (x < 70) {
    condVal(q, i, &v2);
    if (pct(70)) { /* usually a non-empty interval */
      Val a[MAXF], kk;
      memset(a, 0, sizeof a);
      memset(&kk, 0, sizeof kk);
      sampleRow(q->iSpec, a, &kk);
      valCopy(&v2, &a[i]);
      freeVals(a, MAXF);
      valClear(&kk);
    }
    qa(q, "%s %sBETWEEN ", zCol, pct(10) ? "NOT " : "");
    if (pct(50)) {
      qlit(q, &v);
      qa(q, " AND ");
      qlit(q, &v2);
    } else {
      qlit(q, &v2);
      qa(q, " AND ");
      qlit(q, &v);
    }
  } else if (x < 86 && c->t == SQLITE_TEXT && v.t == SQLITE_TEXT) {
    int nChar = utf8Chars(v.z, v.n);
    int nPre = utf8Prefix(v.z, v.n, rnd(nChar + 2));
    char *zPre = sqlite3_mprintf("%.*s", nPre, (const char *)v.z);
    int y = rnd(100), j;
    if (y < 30) {
      qa(q, "%s GLOB '%q*'", zCol, zPre);
    } else if (y < 60) {
      /* LIKE is ASCII case-insensitive: flip the case of some letters */
      for (j = 0; zPre[j]; j++) {
        if (((zPre[j] >= 'a' && zPre[j] <= 'z') ||
             (zPre[j] >= 'A' && zPre[j] <= 'Z')) &&
            pct(50)) {
          zPre[j] ^= 0x20;
        }
      }
      qa(q, "%s LIKE '%q%%'", zCol, zPre);
    } else if (y < 80) {
      Val p;
      memset(&p, 0, sizeof p);
      valText(&p, zPre);
      qStartsWith(q, zCol, &p);
      valClear(&p);
    } else if (y < 87) {
      qa(q, "%s LIKE '%%%q%%'", zCol, zPre);
    } else if (y < 93) {
      qa(q, "%s GLOB '%q?*'", zCol, zPre);
    } else if (y < 97) {
      qa(q, "%s GLOB '[a-p]*'", zCol);
    } else {
      qa(q, "%s LIKE '%q%%' ESCAPE '\\'", zCol, zPre);
    }
    sqlite3_free(zPre);
  } else if (x < 86 && c->t == SQLITE_BLOB && v.t == SQLITE_BLOB) {
    Val p;
    memset(&p, 0, sizeof p);
    valBytes(&p, SQLITE_BLOB, v.z, rnd(v.n + 1));
    qStartsWith(q, zCol, &p);
    valClear(&p);
  } else if (x < 93) {
    /* literals of another class: affinity and conversion rules */
    int y = rnd(6);
    if (c->t == SQLITE_INTEGER && v.t == SQLITE_INTEGER) {
      if (y == 0)
        qa(q, "%s = '%lld'", zCol, (long long)v.i);
      else if (y == 1)
        qa(q, "%s %s %lld.5", zCol, azCmp[rnd(4)], (long long)(v.i / 2));
      else if (y == 2)
        qa(q, "%s %s %s", zCol, azCmp[rnd(4)], pct(50) ? "1e19" : "-1e19");
      else if (y == 3)
        qa(q, "%s = %lld.0", zCol, (long long)(v.i % 1000000000));
      else if (y == 4)
        qa(q, "%s %s '%lld'", zCol, azCmp[rnd(4)], (long long)v.i);
      else
        qa(q, "%s %s 9223372036854775807.0", zCol, azCmp[rnd(4)]);
    } else if (c->t == SQLITE_TEXT) {
      if (y < 2)
        qa(q, "%s = %d", zCol, pct(50) ? 7 : 12);
      else if (y < 4)
        qa(q, "%s %s %d", zCol, azCmp[rnd(4)], rnd(20));
      else
        qa(q, "%s %s x'7068'", zCol, azCmp[rnd(4)]);
    } else {
      if (y < 3)
        qKeyText(q, zCol, azCmp[rnd(4)], "ph");
      else
        qa(q, "%s = %d", zCol, rnd(5));
    }
  } else if (x < 97) {
    int y = rnd(9);
    if (y == 0)
      qa(q, "%s IS NULL", zCol);
    else if (y == 1)
      qa(q, "%s IS NOT NULL", zCol);
    else if (y == 2) {
      qa(q, "%s != ", zCol);
      qlit(q, &v);
    } else if (y == 3) {
      qa(q, "NOT (%s = ", zCol);
      qlit(q, &v);
      qa(q, ")");
    } else if (y == 4) {
      qa(q, "%s IS ", zCol);
      qlit(q, &v);
    } else if (y == 5) {
      qa(q, "%s IN (NULL, ", zCol);
      qlit(q, &v);
      qa(q, ")");
    } else if (y == 6 && c->t == SQLITE_TEXT) {
      /* another collation: SQLite must see the term (doc/sql.md §5) */
      qa(q, "%s %s ", zCol, pct(50) ? "=" : azCmp[rnd(4)]);
      qlit(q, &v);
      qa(q, " COLLATE NOCASE");
    } else if (i + 1 < q->s->nKey) {
      /* a row value over this field and the next */
      char *zNext =
          sqlite3_mprintf("%.*s%s", (int)(strlen(zCol) - strlen(c->zName)),
                          zCol, q->s->aKey[i + 1].zName);
      Val w;
      memset(&w, 0, sizeof w);
      condVal(q, i + 1, &w);
      qa(q, "(%s, %s) %s (", zCol, zNext,
         (y == 7 || (g.mAvoid & AVOID_ROW_VALUE_LIMIT)) ? "=" : azCmp[rnd(4)]);
      qlit(q, &v);
      qa(q, ", ");
      qlit(q, &w);
      qa(q, ")");
      valClear(&w);
      sqlite3_free(zNext);
    } else {
      qa(q, "%s IS NOT ", zCol);
      qlit(q, &v);
    }
  } else if (i < q->s->nProbe) {
    qa(q, "%s IN (SELECT %s FROM p_%s)", zCol, c->zName, q->s->zTag);
  } else {
    qa(q, "%s = ", zCol);
    qlit(q, &v);
  }
  valClear(&v);
  valClear(&v2);
}

/* A WHERE term on _key (a BLOB): blob literals, prefixes of real keys. */
static void rawKeyTerm(Q *q, const char *zCol) {
  Val v, p;
  int x = rnd(100);
  memset(&v, 0, sizeof v);
  memset(&p, 0, sizeof p);
  if (pct(80))
    valCopy(&v, &q->rowKey);
  else {
    Val a[MAXF];
    memset(a, 0, sizeof a);
    for (int i = 0; i < q->s->nKey; i++)
      genField(q->s, i, 0, &a[i]);
    if (q->s->eKey == KEY_NONE)
      valCopy(&v, &a[0]);
    else
      encodeKey(q->s, a, &v);
    freeVals(a, MAXF);
  }
  valBytes(&p, SQLITE_BLOB, v.z, rnd(v.n + 1));
  if (x < 15) {
    qa(q, "%s = ", zCol);
    qlit(q, &v);
  } else if (x < 45) {
    int iOp = rnd(4);
    const Val *pBound = pct(50) ? &v : &p;
    if (pBound->n == 0 && iOp < 2 && (g.mAvoid & AVOID_EMPTY_BLOB)) iOp += 2;
    qa(q, "%s %s ", zCol, azCmp[iOp]);
    qlit(q, pBound);
  } else if (x < 55) {
    Val a[MAXF], k2;
    memset(a, 0, sizeof a);
    memset(&k2, 0, sizeof k2);
    sampleRow(q->iSpec, a, &k2);
    qa(q, "%s BETWEEN ", zCol);
    qlit(q, &p);
    qa(q, " AND ");
    qlit(q, &k2);
    freeVals(a, MAXF);
    valClear(&k2);
  } else if (x < 75) {
    qStartsWith(q, zCol, &p);
  } else if (x < 83) {
    /* the DESIGN.md spelling: a text prefix (bytes of valid UTF-8 only) */
    int n = p.n, okUtf8 = 1, j;
    for (j = 0; j < n; j++) {
      if (p.z[j] == 0 || p.z[j] >= 0x80) okUtf8 = 0;
    }
    if (okUtf8) {
      Val t;
      memset(&t, 0, sizeof t);
      valBytes(&t, SQLITE_TEXT, p.z, p.n);
      qStartsWith(q, zCol, &t);
      valClear(&t);
    } else {
      qStartsWith(q, zCol, &p);
    }
  } else if (x < 93) {
    int k = 1 + rnd(4), j;
    qa(q, "%s IN (", zCol);
    qlit(q, &v);
    for (j = 1; j < k; j++) {
      Val a[MAXF], k2;
      memset(a, 0, sizeof a);
      memset(&k2, 0, sizeof k2);
      sampleRow(q->iSpec, a, &k2);
      qa(q, ", ");
      qlit(q, &k2);
      freeVals(a, MAXF);
      valClear(&k2);
    }
    qa(q, ")");
  } else if (x < 97) {
    qa(q, "%s >= ", zCol);
    qlit(q, &p);
    qa(q, " AND %s < ", zCol);
    qlit(q, &v);
  } else {
    /* a TEXT literal against _key (see qKeyText) */
    qKeyText(q, zCol, azCmp[rnd(4)], "phone#");
  }
  valClear(&v);
  valClear(&p);
}

/* A term on a qualifier column. */
static void qualTerm(Q *q, const char *zAlias) {
  int i = rnd(q->s->nQual);
  const Col *c = &q->s->aQual[i];
  int x = rnd(100);
  if (x < 15) {
    qa(q, "%s%s IS %sNULL", zAlias, c->zName, pct(50) ? "NOT " : "");
  } else if (c->t == SQLITE_INTEGER) {
    qa(q, "%s%s %s %d", zAlias, c->zName, azCmp[rnd(4)],
       i == 0 ? rnd(2000001) - 1000000 : rnd(1000));
  } else if (c->t == SQLITE_FLOAT) {
    qa(q, "%s%s %s %g", zAlias, c->zName, azCmp[rnd(4)],
       (rnd(801) - 400) * 0.25);
  } else {
    static const char *az[] = {"''", "'ok'", "'hot'", "'x y'"};
    if (pct(50))
      qa(q, "%s%s = %s", zAlias, c->zName, az[rnd(4)]);
    else
      qa(q, "%s%s LIKE 'H%%'", zAlias, c->zName);
  }
}

/* A key-field term with a bias to the leading fields. */
static void anyKeyTerm(Q *q, const char *zAlias) {
  int i = pct(45) ? 0 : rnd(q->s->nKey);
  char *zCol = sqlite3_mprintf("%s%s", zAlias, q->s->aKey[i].zName);
  keyTerm(q, i, zCol);
  sqlite3_free(zCol);
}

/* 0..3 terms joined by AND (sometimes an OR of two). Returns terms made. */
static int genWhere(Q *q, const char *zAlias, int nMax, int bWhereWord) {
  int nTerm = rnd(nMax + 1), i;
  for (i = 0; i < nTerm; i++) {
    int x = rnd(100);
    qa(q, i == 0 ? (bWhereWord ? " WHERE " : " AND ") : " AND ");
    if (x < 70) {
      anyKeyTerm(q, zAlias);
    } else if (x < 82) {
      char *z = sqlite3_mprintf("%s_key", zAlias);
      rawKeyTerm(q, z);
      sqlite3_free(z);
    } else if (x < 92) {
      qualTerm(q, zAlias);
    } else {
      qa(q, "(");
      g.bInOr = 1;
      anyKeyTerm(q, zAlias);
      qa(q, " OR ");
      if (pct(50))
        anyKeyTerm(q, zAlias);
      else
        qualTerm(q, zAlias);
      g.bInOr = 0;
      qa(q, ")");
    }
  }
  return nTerm;
}

/* ------------------------------------------------------------------ */
/* Statement kinds                                                     */

static int runPair(Q *q, int eCmp, int nOrd, int bLimit, const char *zWhat) {
  char *zW, *zN;
  int ok;
  qDone(q, &zW, &zN);
  ok = compare2(zW, zN, eCmp, nOrd, bLimit, zWhat);
  sqlite3_free(zW);
  sqlite3_free(zN);
  return ok;
}

/* SELECT columns FROM t WHERE ... [ORDER BY ...] [LIMIT ...] */
static void stmtSelect(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  sqlite3_str *pOrd = sqlite3_str_new(NULL); /* ORDER BY clause */
  char *zOrd;
  int nOrd = 0, bUnique = 0, bLimit = 0, kind = rnd(100), i, eCmp;
  qInit(&q, iSpec);
  qa(&q, "SELECT ");
  /* ORDER BY choice; its columns lead the select list */
  if (kind < 30) {
    kind = 0;
  } else if (kind < 45) { /* whole key, ASC */
    for (i = 0; i < s->nKey; i++) {
      qa(&q, "%s, ", s->aKey[i].zName);
      sqlite3_str_appendf(pOrd, "%s%s", i ? ", " : "", s->aKey[i].zName);
    }
    nOrd = s->nKey;
    bUnique = 1;
  } else if (kind < 60) { /* whole key, DESC */
    for (i = 0; i < s->nKey; i++) {
      qa(&q, "%s, ", s->aKey[i].zName);
      sqlite3_str_appendf(pOrd, "%s%s DESC", i ? ", " : "", s->aKey[i].zName);
    }
    nOrd = s->nKey;
    bUnique = 1;
  } else if (kind < 70) { /* a leading part of the key, one direction */
    int n = 1 + rnd(s->nKey);
    const char *zDir = pct(50) ? " DESC" : (pct(50) ? " ASC" : "");
    for (i = 0; i < n; i++) {
      qa(&q, "%s, ", s->aKey[i].zName);
      sqlite3_str_appendf(pOrd, "%s%s%s", i ? ", " : "", s->aKey[i].zName,
                          zDir);
    }
    nOrd = n;
    bUnique = n == s->nKey;
  } else if (kind < 77) { /* whole key, mixed directions */
    for (i = 0; i < s->nKey; i++) {
      qa(&q, "%s, ", s->aKey[i].zName);
      sqlite3_str_appendf(pOrd, "%s%s%s", i ? ", " : "", s->aKey[i].zName,
                          pct(50) ? " DESC" : "");
    }
    nOrd = s->nKey;
    bUnique = 1;
  } else if (kind < 87) { /* _key */
    qa(&q, "_key, ");
    sqlite3_str_appendf(pOrd, "_key%s", pct(50) ? " DESC" : "");
    nOrd = 1;
    bUnique = 1;
  } else if (kind < 93) { /* a qualifier, then the key */
    qa(&q, "%s, ", s->aQual[0].zName);
    sqlite3_str_appendf(pOrd, "%s%s", s->aQual[0].zName,
                        pct(50) ? " DESC" : "");
    nOrd = 1;
    for (i = 0; i < s->nKey; i++) {
      qa(&q, "%s, ", s->aKey[i].zName);
      sqlite3_str_appendf(pOrd, ", %s%s", s->aKey[i].zName,
                          pct(30) ? " DESC" : "");
      nOrd++;
    }
    bUnique = 1;
  } else { /* a later key field alone */
    int f = rnd(s->nKey);
    qa(&q, "%s, ", s->aKey[f].zName);
    sqlite3_str_appendf(pOrd, "%s%s", s->aKey[f].zName, pct(50) ? " DESC" : "");
    nOrd = 1;
    bUnique = s->nKey == 1;
  }
  /* the rest of the select list */
  for (i = 0; i < s->nKey; i++)
    qa(&q, "%s, ", s->aKey[i].zName);
  for (i = 1; i < s->nQual; i++) {
    if (pct(60)) qa(&q, "%s, ", s->aQual[i].zName);
  }
  if (pct(30)) qa(&q, "_key, ");
  qa(&q, "%s FROM ", s->aQual[0].zName);
  qtab(&q);
  genWhere(&q, "", 3, 1);
  zOrd = sqlite3_str_finish(pOrd);
  if (kind) qa(&q, " ORDER BY %s", zOrd);
  if (kind && pct(45)) {
    bLimit = 1;
    if (pct(25))
      qa(&q, " LIMIT %d OFFSET %d", pct(20) ? -1 : rnd(30), rnd(20));
    else
      qa(&q, " LIMIT %d", rnd(25));
  } else if (!kind && pct(8)) {
    bLimit = 1;
    qa(&q, " LIMIT %d", rnd(20));
  }
  sqlite3_free(zOrd);
  if (!kind)
    eCmp = bLimit ? CMP_COUNT : CMP_BAG;
  else
    eCmp = bUnique ? CMP_ORDERED : CMP_ORDPREFIX;
  g.nSelect++;
  runPair(&q, eCmp, nOrd, bLimit, "select");
}

/* Aggregates, GROUP BY, DISTINCT. */
static void stmtAggregate(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  int x = rnd(100), eCmp = CMP_BAG, nOrd = 0;
  const char *zK0 = s->aKey[0].zName;
  const char *zKL = s->aKey[s->nKey - 1].zName;
  const char *zQ0 = s->aQual[0].zName;
  qInit(&q, iSpec);
  if (x < 35) {
    qa(&q,
       "SELECT count(*), count(%s), min(%s), max(%s), sum(%s), min(_key), "
       "max(_key), avg(%s) FROM ",
       s->aQual[s->nQual - 1].zName, zK0, zKL, zQ0, zQ0);
    qtab(&q);
    genWhere(&q, "", 3, 1);
  } else if (x < 70) {
    int bTwo = s->nKey > 1 && pct(40);
    if (bTwo) {
      qa(&q, "SELECT %s, %s, count(*), sum(%s), max(%s) FROM ", zK0,
         s->aKey[1].zName, zQ0, zKL);
    } else {
      qa(&q, "SELECT %s, count(*), sum(%s), min(%s), max(%s) FROM ", zK0, zQ0,
         zKL, zKL);
    }
    qtab(&q);
    genWhere(&q, "", 2, 1);
    if (bTwo)
      qa(&q, " GROUP BY %s, %s", zK0, s->aKey[1].zName);
    else
      qa(&q, " GROUP BY %s", zK0);
    if (pct(25)) qa(&q, " HAVING count(*) > 1");
    if (pct(50)) {
      const char *zDir = pct(50) ? " DESC" : "";
      if (bTwo) {
        qa(&q, " ORDER BY %s%s, %s%s", zK0, zDir, s->aKey[1].zName, zDir);
      } else {
        qa(&q, " ORDER BY %s%s", zK0, zDir);
      }
      eCmp = CMP_ORDERED;
    }
  } else if (x < 85) {
    int f = rnd(s->nKey);
    qa(&q, "SELECT DISTINCT %s FROM ", s->aKey[f].zName);
    qtab(&q);
    genWhere(&q, "", 2, 1);
    if (pct(40)) {
      qa(&q, " ORDER BY %s%s", s->aKey[f].zName, pct(50) ? " DESC" : "");
      eCmp = CMP_ORDERED;
    }
  } else {
    int f = rnd(s->nKey);
    qa(&q, "SELECT count(DISTINCT %s), total(%s) FROM ", s->aKey[f].zName, zQ0);
    qtab(&q);
    genWhere(&q, "", 2, 1);
  }
  g.nSelect++;
  runPair(&q, eCmp, nOrd, 0, "aggregate");
}

/* Joins with the native probe table, IN subqueries, self-joins. */
static void stmtJoin(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  int x = rnd(100), i;
  qInit(&q, iSpec);
  if (x < 30) { /* probe drives, wcs is the inner loop */
    qa(&q, "SELECT t.%s, t._key", s->aQual[0].zName);
    for (i = 0; i < s->nKey; i++)
      qa(&q, ", t.%s", s->aKey[i].zName);
    qa(&q, " FROM p_%s AS p JOIN ", s->zTag);
    qtab(&q);
    qa(&q, " AS t ON ");
    for (i = 0; i < s->nProbe; i++) {
      qa(&q, "%st.%s = p.%s", i ? " AND " : "", s->aKey[i].zName,
         s->aKey[i].zName);
    }
    genWhere(&q, "t.", 1, 1);
  } else if (x < 50) { /* LEFT JOIN, wcs on the outer side */
    qa(&q, "SELECT t.%s, p.%s FROM ", s->aKey[0].zName, s->aKey[0].zName);
    qtab(&q);
    qa(&q, " AS t LEFT JOIN p_%s AS p ON p.%s = t.%s", s->zTag,
       s->aKey[0].zName, s->aKey[0].zName);
    genWhere(&q, "t.", 2, 1);
  } else if (x < 65) { /* correlated subquery per probe row */
    qa(&q, "SELECT p.%s, (SELECT count(*) FROM ", s->aKey[0].zName);
    qtab(&q);
    qa(&q, " AS t WHERE t.%s = p.%s", s->aKey[0].zName, s->aKey[0].zName);
    genWhere(&q, "t.", 1, 0);
    qa(&q, ") FROM p_%s AS p", s->zTag);
  } else if (x < 80) { /* IN subquery */
    qa(&q, "SELECT %s, _key FROM ", s->aQual[0].zName);
    qtab(&q);
    qa(&q, " WHERE %s IN (SELECT %s FROM p_%s)", s->aKey[0].zName,
       s->aKey[0].zName, s->zTag);
    genWhere(&q, "", 1, 0);
  } else { /* self-join wcs ⋈ wcs, bounded by equalities on a */
    qa(&q, "SELECT a._key, b._key, b.%s FROM ", s->aQual[0].zName);
    qtab(&q);
    qa(&q, " AS a JOIN ");
    qtab(&q);
    qa(&q, " AS b ON b.%s = a.%s", s->aKey[0].zName, s->aKey[0].zName);
    if (s->nKey > 1) {
      qa(&q, " AND b.%s = a.%s", s->aKey[1].zName, s->aKey[1].zName);
    }
    qa(&q, " WHERE a.%s = ", s->aKey[0].zName);
    qlit(&q, &q.aRow[0]);
    if (s->nKey > 1) {
      qa(&q, " AND a.%s = ", s->aKey[1].zName);
      qlit(&q, &q.aRow[1]);
    } else {
      qa(&q, " AND b.%s >= a.%s", s->aKey[0].zName, s->aKey[0].zName);
    }
    genWhere(&q, "b.", 1, 0);
  }
  g.nSelect++;
  runPair(&q, CMP_BAG, 0, 0, "join");
}

/* The family JSON columns and the key functions against the native
** columns: `family ->> 'qualifier'` is the declared column's value
** (doc/sql.md §4), wcs_key_encode() is _key, wcs_key_decode() the fields. */
static void stmtFunctions(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  int i, x = rnd(100);
  static const char *azFam[4][MAXF] = {
      {"stats", "stats", "stats", "meta"}, {"f", "f"}, {"f", "f"}, {"f", "g"}};
  qInit(&q, iSpec);
  qa(&q, "SELECT _key");
  if (x < 50 || s->eKey == KEY_NONE) {
    for (i = 0; i < s->nQual; i++) {
      qw(&q, ", %s ->> '%s'", azFam[iSpec][i], s->aQual[i].zName);
      qn(&q, ", %s", s->aQual[i].zName);
    }
  } else if (x < 75) {
    qw(&q, ", wcs_key_encode('w_%s'", s->zTag);
    for (i = 0; i < s->nKey; i++)
      qw(&q, ", %s", s->aKey[i].zName);
    qw(&q, ")");
    qn(&q, ", _key");
  } else {
    for (i = 0; i < s->nKey; i++) {
      if (s->aKey[i].t == SQLITE_BLOB) {
        /* {"$hex": ...} or, for plain text, a string: compare the bytes */
        qw(&q,
           ", (SELECT CASE WHEN json_type(d, '$[%d]') = 'object' THEN "
           "d ->> '$[%d].$hex' ELSE lower(hex(CAST(d ->> '$[%d]' AS BLOB))) "
           "END FROM (SELECT wcs_key_decode('w_%s', _key) AS d))",
           i, i, i, s->zTag);
        qn(&q, ", lower(hex(%s))", s->aKey[i].zName);
      } else {
        qw(&q, ", wcs_key_decode('w_%s', _key) ->> %d", s->zTag, i);
        qn(&q, ", %s", s->aKey[i].zName);
      }
    }
  }
  qa(&q, " FROM ");
  qtab(&q);
  genWhere(&q, "", 2, 1);
  g.nSelect++;
  runPair(&q, CMP_BAG, 0, 0, "family JSON / key functions");
}

/* ---- writes ---- */

/* A row key that is in no row of the native table (nor in aAvoid). */
static int freshKey(int iSpec, Val *aKey, Val *pKey, Val *aAvoid, int nAvoid) {
  const Spec *s = &aSpec[iSpec];
  int iTry, i;
  for (iTry = 0; iTry < 50; iTry++) {
    sqlite3_stmt *st = NULL;
    char *z;
    int bTaken = 0;
    for (i = 0; i < s->nKey; i++)
      genField(s, i, pct(70), &aKey[i]);
    encodeKey(s, aKey, pKey);
    for (i = 0; i < nAvoid; i++)
      bTaken |= valEq(&aAvoid[i], pKey);
    if (bTaken) continue;
    z = sqlite3_mprintf("SELECT 1 FROM n_%s WHERE _key = ?", s->zTag);
    if (sqlite3_prepare_v2(g.db, z, -1, &st, NULL) == SQLITE_OK) {
      valBind(st, 1, pKey);
      bTaken = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    sqlite3_free(z);
    if (!bTaken) return 1;
  }
  return 0;
}

/* INSERT INTO ... VALUES of 1..4 fresh rows. */
static int stmtInsert(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  Val aKey[MAXF], aDone[4], v;
  int nRow = 1 + rnd(4), r, i, ok;
  memset(aKey, 0, sizeof aKey);
  memset(aDone, 0, sizeof aDone);
  memset(&v, 0, sizeof v);
  qInit(&q, iSpec);
  qa(&q, "INSERT INTO ");
  qtab(&q);
  qa(&q, "(");
  for (i = 0; i < s->nKey; i++)
    qa(&q, "%s%s", i ? ", " : "", s->aKey[i].zName);
  for (i = 0; i < s->nQual; i++)
    qa(&q, ", %s", s->aQual[i].zName);
  if (s->eKey != KEY_NONE) qn(&q, ", _key");
  qa(&q, ") VALUES ");
  for (r = 0; r < nRow; r++) {
    if (!freshKey(iSpec, aKey, &aDone[r], aDone, r)) break;
    qa(&q, "%s(", r ? ", " : "");
    for (i = 0; i < s->nKey; i++) {
      if (i) qa(&q, ", ");
      qlit(&q, &aKey[i]);
    }
    for (i = 0; i < s->nQual; i++) {
      genQual(s, i, &v);
      qa(&q, ", ");
      qlit(&q, &v);
    }
    if (s->eKey != KEY_NONE) {
      qn(&q, ", ");
      appendLit(q.n, &aDone[r]);
    }
    qa(&q, ")");
  }
  valClear(&v);
  freeVals(aKey, MAXF);
  freeVals(aDone, 4);
  g.nWrite++;
  ok = runPair(&q, CMP_CHANGES, 0, 0, "insert");
  refreshCount(iSpec);
  return ok;
}

/* An assignment to a qualifier column that keeps the first one non-NULL. */
static void qualAssign(Q *q) {
  const Spec *s = q->s;
  int i = rnd(s->nQual);
  const Col *c = &s->aQual[i];
  int x = rnd(100);
  Val v;
  memset(&v, 0, sizeof v);
  if (i == 0) {
    if (x < 50)
      qa(q, "%s = %s + %d", c->zName, c->zName, rnd(100) - 50);
    else
      qa(q, "%s = %d", c->zName, rnd(2000001) - 1000000);
    return;
  }
  if (x < 25) {
    qa(q, "%s = NULL", c->zName);
  } else if (x < 40 && c->t == SQLITE_TEXT) {
    qa(q, "%s = coalesce(%s, '') || 'x'", c->zName, c->zName);
  } else if (x < 40 && c->t == SQLITE_FLOAT) {
    qa(q, "%s = %s * 2", c->zName, c->zName);
  } else {
    do
      genQual(s, i, &v);
    while (v.t == SQLITE_NULL);
    qa(q, "%s = ", c->zName);
    qlit(q, &v);
  }
  valClear(&v);
}

static int stmtUpdate(int iSpec) {
  Q q;
  int ok;
  qInit(&q, iSpec);
  qa(&q, "UPDATE ");
  qtab(&q);
  qa(&q, " SET ");
  qualAssign(&q);
  if (pct(40)) {
    qa(&q, ", ");
    qualAssign(&q);
  }
  if (pct(97)) {
    if (genWhere(&q, "", 2, 1) == 0) {
      qa(&q, " WHERE ");
      anyKeyTerm(&q, "");
    }
  }
  g.nWrite++;
  ok = runPair(&q, CMP_CHANGES, 0, 0, "update");
  return ok;
}

static int stmtDelete(int iSpec) {
  Q q;
  int ok;
  qInit(&q, iSpec);
  qa(&q, "DELETE FROM ");
  qtab(&q);
  qa(&q, " WHERE ");
  if (pct(50)) {
    int i;
    for (i = 0; i < q.s->nKey; i++) { /* one row, or a prefix of rows */
      if (i && pct(30)) break;
      qa(&q, "%s%s = ", i ? " AND " : "", q.s->aKey[i].zName);
      qlit(&q, &q.aRow[i]);
    }
  } else {
    anyKeyTerm(&q, "");
    genWhere(&q, "", 1, 0);
  }
  g.nWrite++;
  ok = runPair(&q, CMP_CHANGES, 0, 0, "delete");
  refreshCount(iSpec);
  return ok;
}

/* Change one row's key (the module deletes the old row, writes the new). */
static int stmtMoveKey(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  Val aNew[MAXF], newKey;
  int i, ok, iLast = s->nKey - 1;
  memset(aNew, 0, sizeof aNew);
  memset(&newKey, 0, sizeof newKey);
  qInit(&q, iSpec);
  if (g.anRow[iSpec] == 0) {
    char *zW, *zN;
    qDone(&q, &zW, &zN);
    sqlite3_free(zW);
    sqlite3_free(zN);
    return 1;
  }
  /* same leading fields, a fresh last field */
  for (i = 0; i < 30; i++) {
    sqlite3_stmt *st = NULL;
    char *z;
    int bTaken = 0, j;
    for (j = 0; j < s->nKey; j++)
      valCopy(&aNew[j], &q.aRow[j]);
    genField(s, iLast, 0, &aNew[iLast]);
    encodeKey(s, aNew, &newKey);
    z = sqlite3_mprintf("SELECT 1 FROM n_%s WHERE _key = ?", s->zTag);
    if (sqlite3_prepare_v2(g.db, z, -1, &st, NULL) == SQLITE_OK) {
      valBind(st, 1, &newKey);
      bTaken = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    sqlite3_free(z);
    if (!bTaken) break;
  }
  if (i == 30) { /* every key tried is taken: nothing to move to */
    char *zW, *zN;
    freeVals(aNew, MAXF);
    valClear(&newKey);
    qDone(&q, &zW, &zN);
    sqlite3_free(zW);
    sqlite3_free(zN);
    return 1;
  }
  qa(&q, "UPDATE ");
  qtab(&q);
  qa(&q, " SET %s = ", s->aKey[iLast].zName);
  qlit(&q, &aNew[iLast]);
  if (s->eKey != KEY_NONE) {
    qn(&q, ", _key = ");
    appendLit(q.n, &newKey);
  }
  if (pct(50)) {
    qa(&q, ", ");
    qualAssign(&q);
  }
  qa(&q, " WHERE ");
  for (i = 0; i < s->nKey; i++) {
    qa(&q, "%s%s = ", i ? " AND " : "", s->aKey[i].zName);
    qlit(&q, &q.aRow[i]);
  }
  freeVals(aNew, MAXF);
  valClear(&newKey);
  g.nWrite++;
  ok = runPair(&q, CMP_CHANGES, 0, 0, "update key");
  return ok;
}

/* Delete a row and write it again with new values (one transaction). */
static int stmtDeleteReinsert(int iSpec) {
  Q q, q2;
  const Spec *s = &aSpec[iSpec];
  Val v;
  int i, ok;
  memset(&v, 0, sizeof v);
  qInit(&q, iSpec);
  qa(&q, "DELETE FROM ");
  qtab(&q);
  qa(&q, " WHERE _key = ");
  qlit(&q, &q.rowKey);
  qInit(&q2, iSpec);
  valClear(&q2.rowKey);
  for (i = 0; i < s->nKey; i++)
    valCopy(&q2.aRow[i], &q.aRow[i]);
  valCopy(&q2.rowKey, &q.rowKey);
  qa(&q2, "INSERT INTO ");
  qtab(&q2);
  qa(&q2, "(");
  for (i = 0; i < s->nKey; i++)
    qa(&q2, "%s%s", i ? ", " : "", s->aKey[i].zName);
  for (i = 0; i < s->nQual; i++)
    qa(&q2, ", %s", s->aQual[i].zName);
  if (s->eKey != KEY_NONE) qn(&q2, ", _key");
  qa(&q2, ") VALUES (");
  for (i = 0; i < s->nKey; i++) {
    if (i) qa(&q2, ", ");
    qlit(&q2, &q2.aRow[i]);
  }
  for (i = 0; i < s->nQual; i++) {
    genQual(s, i, &v);
    qa(&q2, ", ");
    qlit(&q2, &v);
  }
  if (s->eKey != KEY_NONE) {
    qn(&q2, ", ");
    appendLit(q2.n, &q2.rowKey);
  }
  qa(&q2, ")");
  valClear(&v);
  g.nWrite += 2;
  ok = runPair(&q, CMP_CHANGES, 0, 0, "delete before reinsert");
  ok &= runPair(&q2, CMP_CHANGES, 0, 0, "reinsert");
  refreshCount(iSpec);
  return ok;
}

/* INSERT onto an existing row, with the conflict clauses of doc/sql.md §6:
** plain INSERT is an upsert that leaves NULL columns untouched (natively:
** ON CONFLICT DO UPDATE with coalesce), OR REPLACE replaces the row, OR
** IGNORE leaves it alone. */
static int stmtUpsert(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  Val v;
  int i, ok, x = rnd(3);
  static const char *azVerb[] = {"INSERT", "INSERT OR REPLACE",
                                 "INSERT OR IGNORE"};
  memset(&v, 0, sizeof v);
  qInit(&q, iSpec);
  qa(&q, "%s INTO ", azVerb[x]);
  qtab(&q);
  qa(&q, "(");
  for (i = 0; i < s->nKey; i++)
    qa(&q, "%s%s", i ? ", " : "", s->aKey[i].zName);
  for (i = 0; i < s->nQual; i++)
    qa(&q, ", %s", s->aQual[i].zName);
  if (s->eKey != KEY_NONE) qn(&q, ", _key");
  qa(&q, ") VALUES (");
  for (i = 0; i < s->nKey; i++) {
    if (i) qa(&q, ", ");
    qlit(&q, &q.aRow[i]);
  }
  for (i = 0; i < s->nQual; i++) {
    genQual(s, i, &v);
    qa(&q, ", ");
    qlit(&q, &v);
  }
  if (s->eKey != KEY_NONE) {
    qn(&q, ", ");
    appendLit(q.n, &q.rowKey);
  }
  qa(&q, ")");
  if (x == 0) {
    qn(&q, " ON CONFLICT DO UPDATE SET ");
    for (i = 0; i < s->nQual; i++) {
      qn(&q, "%s%s = coalesce(excluded.%s, %s)", i ? ", " : "",
         s->aQual[i].zName, s->aQual[i].zName, s->aQual[i].zName);
    }
  }
  valClear(&v);
  g.nWrite++;
  ok = runPair(&q, CMP_CHANGES, 0, 0, azVerb[x]);
  refreshCount(iSpec);
  return ok;
}

static int stmtWrite(int iSpec) {
  int x = rnd(100);
  /* keep the tables from draining */
  if (g.anRow[iSpec] < aSpec[iSpec].nLoad / 2 && x >= 60) x = 0;
  if (x < 20) return stmtInsert(iSpec);
  if (x < 30) return stmtUpsert(iSpec);
  if (x < 60) return stmtUpdate(iSpec);
  if (x < 80) return stmtDelete(iSpec);
  return stmtMoveKey(iSpec);
}

/* A read inside a transaction: must see the transaction's own writes. */
static void stmtRead(int iSpec) {
  if (pct(70))
    stmtSelect(iSpec);
  else
    stmtAggregate(iSpec);
}

/* BEGIN; writes and reads; ROLLBACK or COMMIT; compare whole. */
static int blockTxn(int iSpec) {
  int n = 2 + rnd(5), i, ok = 1;
  int bCommit = pct(50);
  g.nTxn++;
  g.iStmt++;
  if (execOk("BEGIN")) return 0;
  for (i = 0; i < n; i++) {
    if (pct(30))
      stmtRead(iSpec);
    else if (pct(15))
      ok &= stmtDeleteReinsert(iSpec);
    else
      ok &= stmtWrite(iSpec);
  }
  ok &= compareWhole(iSpec, "whole table inside a transaction");
  g.iStmt++;
  if (execOk(bCommit ? "COMMIT" : "ROLLBACK")) {
    execOk("ROLLBACK");
    ok = 0;
  }
  refreshCount(iSpec);
  ok &= compareWhole(iSpec, bCommit ? "after COMMIT" : "after ROLLBACK");
  return ok;
}

/* BEGIN; many INSERTs (new rows and upserts of existing ones, in random
** key order, sometimes the same row twice); COMMIT or ROLLBACK; compare
** whole. A write-only transaction like this commits its cells sorted by
** key (doc/engine.md §4): the later write of a cell must still win. */
static int blockLoad(int iSpec) {
  int n = 10 + rnd(30), i, ok = 1;
  int bCommit = pct(80);
  g.nTxn++;
  g.iStmt++;
  if (execOk("BEGIN")) return 0;
  for (i = 0; i < n; i++) {
    if (pct(75))
      ok &= stmtInsert(iSpec);
    else
      ok &= stmtUpsert(iSpec);
  }
  g.iStmt++;
  if (execOk(bCommit ? "COMMIT" : "ROLLBACK")) {
    execOk("ROLLBACK");
    ok = 0;
  }
  refreshCount(iSpec);
  ok &= compareWhole(iSpec, bCommit ? "after a loading COMMIT"
                                    : "after a loading ROLLBACK");
  return ok;
}

/* SAVEPOINT a; write; SAVEPOINT b; write; read; ROLLBACK TO or RELEASE;
** write; RELEASE a or ROLLBACK TO a. Sometimes inside BEGIN...COMMIT. */
static int blockSavepoint(int iSpec) {
  int ok = 1, bOuter = pct(40);
  g.nTxn++;
  g.iStmt++;
  if (bOuter && execOk("BEGIN")) return 0;
  if (execOk("SAVEPOINT a")) return 0;
  ok &= stmtWrite(iSpec);
  execOk("SAVEPOINT b");
  ok &= stmtWrite(iSpec);
  if (pct(50)) ok &= stmtWrite(iSpec);
  stmtRead(iSpec);
  switch (rnd(3)) {
  case 0:
    execOk("ROLLBACK TO b");
    break;
  case 1:
    execOk("RELEASE b");
    break;
  default:
    execOk("ROLLBACK TO a");
    break;
  }
  refreshCount(iSpec);
  ok &= compareWhole(iSpec, "after ROLLBACK TO / RELEASE of savepoint b");
  ok &= stmtWrite(iSpec);
  if (pct(35)) {
    execOk("ROLLBACK TO a");
  }
  execOk("RELEASE a");
  if (bOuter) execOk(pct(70) ? "COMMIT" : "ROLLBACK");
  refreshCount(iSpec);
  ok &= compareWhole(iSpec, "after savepoint block");
  return ok;
}

/* Writes that must fail, on the wcs table only: the table must not change
** (a failed statement leaves no partial rows). */
static int stmtReject(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  sqlite3_str *w = sqlite3_str_new(NULL);
  Val aKey[MAXF], key;
  char *zSql, *zErr = NULL;
  int rc, i, ok = 1, x = rnd(100);
  memset(aKey, 0, sizeof aKey);
  memset(&key, 0, sizeof key);
  sqlite3_str_appendf(w, "INSERT INTO w_%s(", s->zTag);
  for (i = 0; i < s->nKey; i++)
    sqlite3_str_appendf(w, "%s%s", i ? ", " : "", s->aKey[i].zName);
  for (i = 0; i < s->nQual; i++)
    sqlite3_str_appendf(w, ", %s", s->aQual[i].zName);
  sqlite3_str_appendall(w, ") VALUES (");
  /* first a valid fresh row, then the bad one */
  freshKey(iSpec, aKey, &key, NULL, 0);
  for (i = 0; i < s->nKey; i++) {
    if (i) sqlite3_str_appendall(w, ", ");
    appendLit(w, &aKey[i]);
  }
  for (i = 0; i < s->nQual; i++)
    sqlite3_str_appendf(w, ", %s", i ? "NULL" : "1");
  sqlite3_str_appendall(w, "), (");
  if (s->eKey == KEY_DELIM) {
    static const char *azBad[] = {"'ph#one', 'a', 1",    "'a', 'b c', 1",
                                  "'a', 'x!', 1",        "'a', 'b', -1",
                                  "'a', 'b', 100000000", "NULL, 'b', 1",
                                  "'a', NULL, 1",        "'a', 'b', NULL",
                                  "'a', char(1), 1",     "'a', 'b', 'x'"};
    sqlite3_str_appendall(w, azBad[x % 10]);
  } else if (s->eKey == KEY_OC) {
    sqlite3_str_appendall(w, x < 50 ? "NULL, 1, 'a'" : "1, 2, NULL");
  } else if (s->eKey == KEY_SINGLE) {
    sqlite3_str_appendall(w, x < 50 ? "NULL" : "zeroblob(5000)");
  } else {
    sqlite3_str_appendall(w, x < 33   ? "NULL"
                             : x < 66 ? "zeroblob(5000)"
                                      : "x''");
  }
  for (i = 0; i < s->nQual; i++)
    sqlite3_str_appendf(w, ", %s", i ? "NULL" : "2");
  sqlite3_str_appendall(w, ")");
  zSql = sqlite3_str_finish(w);
  g.iStmt++;
  g.nReject++;
  if (g.bVerbose) fprintf(stderr, "[%d] %s\n", g.iStmt, zSql);
  rc = sqlite3_exec(g.db, zSql, NULL, NULL, &zErr);
  if (rc == SQLITE_OK) {
    g.nFail++;
    fprintf(stderr,
            "\nMISMATCH (invalid key accepted) at statement %d, seed "
            "WCS_SEED=%llu\n  wcs SQL: %s\n",
            g.iStmt, (unsigned long long)g.seed, zSql);
    ok = 0;
    /* undo, so that the comparison can go on */
    {
      char *zDel = sqlite3_mprintf("DELETE FROM w_%s WHERE _key = ?", s->zTag);
      sqlite3_stmt *st;
      if (sqlite3_prepare_v2(g.db, zDel, -1, &st, NULL) == SQLITE_OK) {
        valBind(st, 1, &key);
        sqlite3_step(st);
        sqlite3_finalize(st);
      }
      sqlite3_free(zDel);
    }
  } else if (zErr == NULL || zErr[0] == 0) {
    g.nFail++;
    fprintf(stderr, "\nMISMATCH (error without message) at statement %d: %s\n",
            g.iStmt, zSql);
    ok = 0;
  } else if (g.bVerbose) {
    fprintf(stderr, "     rejected: %s\n", zErr);
  }
  sqlite3_free(zErr);
  sqlite3_free(zSql);
  freeVals(aKey, MAXF);
  valClear(&key);
  ok &= compareWhole(iSpec, "after a rejected multi-row INSERT");
  return ok;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */

static int openDb(void) {
  int rc = sqlite3_open(g.zDb, &g.db);
  if (rc == SQLITE_OK) rc = wcs_register(g.db);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "cannot open %s with the wcs module: %s\n", g.zDb,
            g.db ? sqlite3_errmsg(g.db) : "out of memory");
    return rc;
  }
  return execOk("PRAGMA synchronous=OFF; PRAGMA cache_size=-32000");
}

static int loadSpec(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  sqlite3_stmt *pW = NULL, *pN = NULL, *pP = NULL;
  sqlite3_str *a = sqlite3_str_new(NULL);
  char *z;
  int i, r, rc, nDone = 0;
  Val aKey[MAXF], aQ[MAXF], key;
  memset(aKey, 0, sizeof aKey);
  memset(aQ, 0, sizeof aQ);
  memset(&key, 0, sizeof key);

  z = sqlite3_mprintf("CREATE VIRTUAL TABLE w_%s USING wcs(%s);"
                      "CREATE TABLE n_%s(%s);",
                      s->zTag, s->zArgs, s->zTag, s->zNative);
  rc = execOk(z);
  sqlite3_free(z);
  if (rc) return rc;
  sqlite3_str_appendf(a, "CREATE TABLE p_%s(", s->zTag);
  for (i = 0; i < s->nProbe; i++) {
    static const char *azT[] = {"", "INTEGER", "REAL", "TEXT", "BLOB"};
    sqlite3_str_appendf(a, "%s%s %s", i ? ", " : "", s->aKey[i].zName,
                        azT[s->aKey[i].t]);
  }
  sqlite3_str_appendall(a, ")");
  z = sqlite3_str_finish(a);
  rc = execOk(z);
  sqlite3_free(z);
  if (rc) return rc;

  /* prepared inserts */
  a = sqlite3_str_new(NULL);
  sqlite3_str_appendf(a, "INSERT INTO w_%s(", s->zTag);
  for (i = 0; i < s->nKey; i++)
    sqlite3_str_appendf(a, "%s%s", i ? ", " : "", s->aKey[i].zName);
  for (i = 0; i < s->nQual; i++)
    sqlite3_str_appendf(a, ", %s", s->aQual[i].zName);
  sqlite3_str_appendall(a, ") VALUES (");
  for (i = 0; i < s->nKey + s->nQual; i++)
    sqlite3_str_appendf(a, "%s?", i ? ", " : "");
  sqlite3_str_appendall(a, ")");
  z = sqlite3_str_finish(a);
  rc = sqlite3_prepare_v2(g.db, z, -1, &pW, NULL);
  if (rc) fprintf(stderr, "prepare %s: %s\n", z, sqlite3_errmsg(g.db));
  sqlite3_free(z);
  a = sqlite3_str_new(NULL);
  sqlite3_str_appendf(a, "INSERT OR IGNORE INTO n_%s(", s->zTag);
  for (i = 0; i < s->nKey; i++)
    sqlite3_str_appendf(a, "%s%s", i ? ", " : "", s->aKey[i].zName);
  for (i = 0; i < s->nQual; i++)
    sqlite3_str_appendf(a, ", %s", s->aQual[i].zName);
  if (s->eKey != KEY_NONE) sqlite3_str_appendall(a, ", _key");
  sqlite3_str_appendall(a, ") VALUES (");
  for (i = 0; i < s->nKey + s->nQual + (s->eKey != KEY_NONE); i++) {
    sqlite3_str_appendf(a, "%s?", i ? ", " : "");
  }
  sqlite3_str_appendall(a, ")");
  z = sqlite3_str_finish(a);
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(g.db, z, -1, &pN, NULL);
  sqlite3_free(z);
  if (rc == SQLITE_OK) rc = execOk("BEGIN");
  for (r = 0; rc == SQLITE_OK && nDone < s->nLoad && r < s->nLoad * 20; r++) {
    for (i = 0; i < s->nKey; i++)
      genField(s, i, 1, &aKey[i]);
    for (i = 0; i < s->nQual; i++)
      do {
        genQual(s, i, &aQ[i]);
      } while (s->bDense && aQ[i].t == SQLITE_NULL);
    encodeKey(s, aKey, &key);
    sqlite3_reset(pN);
    for (i = 0; i < s->nKey; i++)
      valBind(pN, 1 + i, &aKey[i]);
    for (i = 0; i < s->nQual; i++)
      valBind(pN, 1 + s->nKey + i, &aQ[i]);
    if (s->eKey != KEY_NONE) valBind(pN, 1 + s->nKey + s->nQual, &key);
    if (sqlite3_step(pN) != SQLITE_DONE) {
      fprintf(stderr, "native insert: %s\n", sqlite3_errmsg(g.db));
      rc = SQLITE_ERROR;
      break;
    }
    if (sqlite3_changes(g.db) == 0) continue; /* key already loaded */
    sqlite3_reset(pW);
    for (i = 0; i < s->nKey; i++)
      valBind(pW, 1 + i, &aKey[i]);
    for (i = 0; i < s->nQual; i++)
      valBind(pW, 1 + s->nKey + i, &aQ[i]);
    if (sqlite3_step(pW) != SQLITE_DONE) {
      fprintf(stderr,
              "load of w_%s failed at row %d: %s (seed WCS_SEED=%llu)\n",
              s->zTag, nDone, sqlite3_errmsg(g.db), (unsigned long long)g.seed);
      g.nFail++;
      rc = SQLITE_ERROR;
      break;
    }
    nDone++;
  }
  sqlite3_finalize(pW);
  sqlite3_finalize(pN);
  if (rc == SQLITE_OK)
    rc = execOk("COMMIT");
  else
    sqlite3_exec(g.db, "ROLLBACK", NULL, NULL, NULL);
  freeVals(aKey, MAXF);
  freeVals(aQ, MAXF);
  valClear(&key);
  if (rc) return rc;
  refreshCount(iSpec);

  /* probe rows: some from the data, some from nowhere */
  a = sqlite3_str_new(NULL);
  sqlite3_str_appendf(a, "INSERT INTO p_%s VALUES (", s->zTag);
  for (i = 0; i < s->nProbe; i++)
    sqlite3_str_appendf(a, "%s?", i ? ", " : "");
  sqlite3_str_appendall(a, ")");
  z = sqlite3_str_finish(a);
  rc = sqlite3_prepare_v2(g.db, z, -1, &pP, NULL);
  sqlite3_free(z);
  for (r = 0; rc == SQLITE_OK && r < 20; r++) {
    if (r < 15) {
      sampleRow(iSpec, aKey, &key);
    } else {
      for (i = 0; i < s->nKey; i++)
        genField(s, i, 0, &aKey[i]);
    }
    sqlite3_reset(pP);
    for (i = 0; i < s->nProbe; i++)
      valBind(pP, 1 + i, &aKey[i]);
    sqlite3_step(pP);
  }
  sqlite3_finalize(pP);
  freeVals(aKey, MAXF);
  valClear(&key);

  /* the native key column is in key order iff the encoder here is right */
  {
    sqlite3_str *o = sqlite3_str_new(NULL);
    char *zA, *zB;
    for (i = 0; i < s->nKey; i++)
      sqlite3_str_appendf(o, "%s%s", i ? ", " : "", s->aKey[i].zName);
    z = sqlite3_str_finish(o);
    zA = sqlite3_mprintf("SELECT _key FROM n_%s ORDER BY _key", s->zTag);
    zB = sqlite3_mprintf("SELECT _key FROM n_%s ORDER BY %s", s->zTag, z);
    if (!compare2(zA, zB, CMP_ORDERED, 0, 0, "test self-check: key order")) {
      fprintf(stderr, "  (the test's own key encoder is wrong)\n");
    }
    sqlite3_free(z);
    sqlite3_free(zA);
    sqlite3_free(zB);
  }
  fprintf(stderr, "loaded %d rows into w_%s and n_%s\n", g.anRow[iSpec],
          s->zTag, s->zTag);
  return compareWhole(iSpec, "after load") ? SQLITE_OK : SQLITE_ERROR;
}

static int reopen(void) {
  int i, ok = 1;
  if (sqlite3_close(g.db) != SQLITE_OK) {
    fprintf(stderr, "sqlite3_close: %s\n", sqlite3_errmsg(g.db));
    return 0;
  }
  g.db = NULL;
  if (openDb() != SQLITE_OK) return 0;
  for (i = 0; i < NSPEC; i++) {
    if (!g.abBroken[i]) ok &= compareWhole(i, "after close and reopen");
  }
  return ok;
}

/* Flush and compact the store (the data moves from the memtable and WAL
** into sorted files, tombstones meet the cells they hide), then compare. */
static int stmtCompact(int iSpec) {
  char *z =
      pct(50) ? sqlite3_mprintf("SELECT wcs_compact('w_%s')", aSpec[iSpec].zTag)
              : sqlite3_mprintf("SELECT wcs_compact()");
  int ok = 1;
  g.iStmt++;
  if (g.bVerbose) fprintf(stderr, "[%d] %s\n", g.iStmt, z);
  if (execOk(z) != SQLITE_OK) {
    g.nFail++;
    ok = 0;
  }
  sqlite3_free(z);
  return ok & compareWhole(iSpec, "after wcs_compact()");
}

static void oneStatement(int iSpec) {
  int x = rnd(1000), ok = 1;
  if (x < 490)
    stmtSelect(iSpec);
  else if (x < 520)
    stmtFunctions(iSpec);
  else if (x < 640)
    stmtAggregate(iSpec);
  else if (x < 740)
    stmtJoin(iSpec);
  else if (x < 880) {
    ok = stmtWrite(iSpec);
    ok &= compareWhole(iSpec, "after a write");
  } else if (x < 920)
    ok = blockTxn(iSpec);
  else if (x < 940)
    ok = blockLoad(iSpec);
  else if (x < 980)
    ok = blockSavepoint(iSpec);
  else if (x < 986)
    ok = stmtCompact(iSpec);
  else
    ok = stmtReject(iSpec);
  if (!ok && !g.abBroken[iSpec]) {
    /* a write went differently: later comparisons on this pair would only
    ** repeat it, so leave this schema alone */
    if (g.nFail <= MAX_PRINT_FAIL) {
      fprintf(stderr,
              "  (schema %s diverged after a write; no more "
              "statements on it)\n",
              aSpec[iSpec].zTag);
    }
    g.abBroken[iSpec] = 1;
    if (sqlite3_get_autocommit(g.db) == 0)
      sqlite3_exec(g.db, "ROLLBACK", 0, 0, 0);
  }
}

int main(void) {
  const char *zDir, *zEnv;
  int nQuery, i, nBroken = 0;
  struct timespec t0, t1;
  double sec;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  g.seed = tu_seed(0);
#ifdef WCS_SANITIZE
  nQuery = 1500;
#else
  nQuery = 3000;
#endif
  zEnv = getenv("WCS_DIFF_QUERIES");
  if (zEnv && atoi(zEnv) > 0) nQuery = atoi(zEnv);
  zEnv = getenv("WCS_DIFF_SCALE");
  if (zEnv && atoi(zEnv) > 1) {
    for (i = 0; i < NSPEC; i++)
      aSpec[i].nLoad *= atoi(zEnv);
  }
  zEnv = getenv("WCS_DIFF_VERBOSE");
  g.bVerbose = zEnv && zEnv[0] && zEnv[0] != '0';
  zEnv = getenv("WCS_DIFF_AVOID");
  g.mAvoid = parseAvoid(zEnv ? zEnv : DEFAULT_AVOID);
  if (g.mAvoid) {
    fprintf(stderr,
            "steering around known module bugs: %s "
            "(WCS_DIFF_AVOID=none to test them)\n",
            zEnv ? zEnv : DEFAULT_AVOID);
  }
  zDir = tu_tmpdir("sql_diff");
  if (zDir == NULL) {
    fprintf(stderr, "cannot make a temporary directory\n");
    return 1;
  }
  snprintf(g.zDb, sizeof g.zDb, "%s/diff.db", zDir);
  initPools();
  if (openDb() != SQLITE_OK) return 1;
  for (i = 0; i < NSPEC; i++) {
    if (loadSpec(i) != SQLITE_OK) g.abBroken[i] = 1;
  }
  for (i = 0; i < nQuery && g.nFail < MAX_FAIL; i++) {
    int iSpec = rnd(NSPEC);
    if ((i == nQuery / 3 || i == 2 * nQuery / 3) && !reopen()) {
      fprintf(stderr, "reopen failed (seed WCS_SEED=%llu)\n",
              (unsigned long long)g.seed);
      g.nFail++;
      if (g.db == NULL) break;
    }
    if (g.abBroken[iSpec]) {
      int j;
      for (j = 0; j < NSPEC && g.abBroken[iSpec]; j++)
        iSpec = (iSpec + 1) % NSPEC;
      if (g.abBroken[iSpec]) break;
    }
    oneStatement(iSpec);
    g.nRandom++;
  }
  if (g.db && !reopen()) g.nFail++;
  if (g.db) sqlite3_close(g.db);
  for (i = 0; i < NSPEC; i++)
    nBroken += g.abBroken[i];
  clock_gettime(CLOCK_MONOTONIC, &t1);
  sec = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  fprintf(stderr,
          "sql_diff: %d random statements (%d statements compared: %d reads, "
          "%d writes, %d transaction blocks, %d rejected writes; %d results "
          "with rows) in %.1f s; %d mismatches%s; seed WCS_SEED=%llu\n",
          g.nRandom, g.iStmt, g.nSelect, g.nWrite, g.nTxn, g.nReject,
          g.nNonEmpty, sec, g.nFail,
          nBroken ? " (some schemas stopped early)" : "",
          (unsigned long long)g.seed);
  if (g.nFail == 0)
    tu_rmrf(zDir);
  else
    fprintf(stderr, "database kept in %s\n", zDir);
  return g.nFail ? 1 : 0;
}
