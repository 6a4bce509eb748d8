/*
** prog_sql_diff.c — the differential test of the SQLite module `wcs`: the
** same rows in a wcs virtual table and in a plain SQLite table, the same
** random SQL against both, and the results must agree (DESIGN.md §3–§6).
**
** HOW IT WORKS
**   Ten key schemas, each loaded with random rows into a wcs table w_<tag>
**   and into an ordinary table n_<tag> with the same decoded columns, the
**   qualifier columns, and _key (computed here from the documented
**   encodings, doc/keyschema.md §3-§5, independently of the module; a
**   salted key's bucket byte with xxHash's XXH3_64):
**     tele   KEY (device STRING, id STRING, day INT64 DECIMAL(8))
**            DELIMITED BY '#' — empty segments, multi-byte UTF-8, bytes just
**            above the delimiter ('$'), digit-only strings, DECIMAL extremes;
**            families stats (cpu, mem, temp FLOAT64) and meta (note STRING)
**     oc     KEY (tenant INT64 ORDERED CODE, ts INT64 ORDERED CODE,
**            name STRING) ORDERED CODE — INT64 extremes, control bytes and
**            empty strings in names
**     bytes  KEY (k BYTES), a singleton key of raw bytes (00 and FF too)
**     raw    no KEY clause: only the raw _key BLOB
**     stele  tele's key with SALT 4: every scan fans out over the buckets
**            and, for ORDER BY on key fields, merges them back into key
**            order (with LIMIT/OFFSET pushed down, DESC, prefix, range, IN
**            and skip plans); ORDER BY _key is the physical (bucket) order
**     rev    tele's key with day REVERSED DECIMAL(8): newest first, so
**            ORDER BY day ASC is a reverse scan; ranges, BETWEEN, IN and
**            literals just outside 0 .. 10^8 - 1 on it
**     soc    KEY (tenant INT64 ORDERED CODE, ts INT64 REVERSED
**            DECIMAL(19), name STRING) ORDERED CODE SALT 3: a reversed
**            middle field of 0 .. INT64_MAX in a salted ORDERED CODE key
**     ocs    KEY (a STRING, b STRING, c BYTES) ORDERED CODE: every field
**            may be empty, so trailing empty fields are left out and a
**            key may end right after any field ('a' is a byte prefix of
**            'ab' and of 'a' 01); BYTES with 00 and FF
**     hist   KEY (device, id, day REVERSED DECIMAL(8)) with families
**            s MAX VERSIONS 3, m MAX AGE '1000d', g MAX VERSIONS 2 MAX AGE
**            '1000d' INTERSECTION and u (no rule), every cell written with
**            an explicit _timestamp (several versions per column, out of
**            order, equal timestamps replacing a version, some deletes of
**            columns, families and rows, key moves). Its native side is a
**            table of cells n_cells, the live cells n_live (the GC rules of
**            doc/sql.md §8 applied at read time, by position in the column
**            and by age; the timestamps lie in 1970 or 2100, so no clock is
**            needed), n_hist (each column's newest live cell, _timestamp
**            the newest of the row) and a view n_histv whose INSTEAD OF
**            triggers turn the same INSERT/UPDATE/DELETE text into cell
**            mutations. Besides the statements below, the history view
**            h_hist (CREATE ... USING wcs(TABLE 'w_hist', HISTORY)) is
**            compared with n_live: every version, h_hist(n) and
**            latest_n = n (the n newest after the time filter), _timestamp
**            ranges, =, BETWEEN and as-of (<=), family and qualifier terms,
**            value terms (SQLite's, after latest-N), ORDER BY and LIMIT,
**            and one column's versions, which must come newest first; and
**            the table's latest values and _timestamp under the rules.
**            Without latest-N also _timestamp IN lists and ORs of ranges
**            (doc/sql.md §8 defines the time filter that latest-N follows
**            for =, <, <=, >, >= and BETWEEN only). The native tables of
**            a hist schema are named by its prefix (n_cells, ns_cells).
**     shist  hist over tele's key with SALT 4 (a history view fanning out
**            over the buckets and merging them back, key-field plans,
**            ORDER BY key fields ASC/DESC with LIMIT/OFFSET), families
**            s (a, b) MAX VERSIONS 3, u (e) and j MAX VERSIONS 2, which
**            declares no qualifier: its qualifiers exist only through the
**            family column. JSON objects written into j (INSERT, OR
**            REPLACE, OR IGNORE, UPDATE merging into the qualifiers, SET
**            j = j writing the latest bytes again, SET j = NULL) carry
**            strings, \udcXX bytes, {"$hex": ...}, integers, reals,
**            true/false, objects and arrays as written, and null, which
**            deletes the qualifier; qualifier names with escapes and
**            non-UTF-8 bytes. The native side turns each into cells with
**            the bytes of doc/sql.md §4 (in the history view a qualifier
**            is TEXT when UTF-8, a value when plain text, else BLOB) and
**            rebuilds the family column from
**            them (a string, or {"$hex": ...}, qualifiers in byte order);
**            it is compared qualifier by qualifier through json_each, and
**            read with ->>, json_type, json_each joins, map_keys() and in
**            WHERE, and through the history view.
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
**   tombstones reach the sorted files, and GC drops expired cells there;
**   w_tele and w_stele are loaded with every family in every row, so that
**   reads after a compaction find the rows from one family until writes
**   make the families differ), statements that must fail without leaving
**   partial rows. At a third and at two thirds the database is closed and
**   reopened (the wcs tables and the history view reconnect to their
**   store) and every table is compared whole.
**
** COMPARISON
**   Results are compared as multisets, except that when ORDER BY fixes the
**   order (it covers a unique key) the rows are compared in order; when
**   ORDER BY does not fix it, the sequence of the ORDER BY columns (which
**   lead the select list) must agree, and the multiset too unless a LIMIT
**   cut the result. LIMIT without ORDER BY compares row counts. Values are
**   compared with their SQLite storage class; REAL values to twelve digits,
**   and a difference of a few units in the twelfth is let pass (sums of
**   the same values in another row order round differently). After every
**   write the tables
**   are compared whole (w_hist and w_shist with _timestamp, h_hist and
**   h_shist cell by cell, w_shist's JSON family by json_each in object
**   order). Both sides failing counts as agreement; one side failing is a
**   mismatch. A write compares sqlite3_changes(); on w_hist with the rows
**   the native tables say it must change.
**
** ENVIRONMENT
**   WCS_SEED=n           replay a run (the seed is printed first)
**   WCS_DIFF_QUERIES=n   random statements in all (default 3000, 1500
**                        under sanitizers); each is one to a dozen compared
**                        statements
**   WCS_DIFF_AVOID=list  known module bugs to steer around (see aAvoidName;
**                        "none" tests everything)
**   WCS_DIFF_SCALE=n     load n times more rows (default 1: 600-1500 rows
**                        per table, 250 and 100 rows of cells in w_hist
**                        and w_shist, which fit the memtable until a
**                        wcs_compact() statement moves them to sorted
**                        files)
**   WCS_DIFF_VERBOSE=1   print every statement pair as it runs
**   WCS_TEST_TMP         where the database directory is made
**
** On a mismatch it prints the seed, the statement number, both SQL texts
** and both results, and exits 1 at the end. Exit 0: everything agreed.
*/
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xxhash.h>

#include "testutil.h"
#include "wcs.h"

#define MAXF           6   /* key fields or qualifier columns per schema */
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
  int t;    /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB */
  int nDec; /* INT64 key field: DECIMAL(nDec) digits; 0: ORDERED CODE */
  int bRev; /* with nDec: REVERSED DECIMAL (larger values sort first) */
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
  int nSalt;  /* SALT n of the key (0: none) */
  const char *azFam[MAXF]; /* the family of each qualifier column */
  int bHist; /* the cells table with timestamps and GC policies (the
             ** "hist" schemas; the native twin is built over a cells
             ** table: see histCreate) */
  /* hist schemas only: */
  const char *zPre;           /* prefix of the native tables (<zPre>cells) */
  const char *azFamAll[MAXF]; /* every family, NULL-terminated */
  const char *zGc;            /* n_live's GC rule, an SQL expression over a
                              ** cell's family, _timestamp and rn */
  const char *zJson; /* a family without declared qualifiers, written and
                     ** read through its JSON column only (or NULL) */
  const char *azHQual[12]; /* qualifier literals for history-view terms */
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
     {{"device", SQLITE_TEXT, 0, 0},
      {"id", SQLITE_TEXT, 0, 0},
      {"day", SQLITE_INTEGER, 8, 0}},
     4,
     {{"cpu", SQLITE_INTEGER, 0, 0},
      {"mem", SQLITE_INTEGER, 0, 0},
      {"temp", SQLITE_FLOAT, 0, 0},
      {"note", SQLITE_TEXT, 0, 0}},
     1500,
     2,
     1,
     0,
     {"stats", "stats", "stats", "meta"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    {"oc",
     "KEY (tenant INT64 ORDERED CODE, ts INT64 ORDERED CODE, name STRING) "
     "ORDERED CODE, FAMILY f (v INT64, s STRING), SYNC OFF",
     "tenant INTEGER, ts INTEGER, name TEXT, v INTEGER, s TEXT, _key BLOB, "
     "PRIMARY KEY(tenant, ts, name)",
     KEY_OC,
     3,
     {{"tenant", SQLITE_INTEGER, 0, 0},
      {"ts", SQLITE_INTEGER, 0, 0},
      {"name", SQLITE_TEXT, 0, 0}},
     2,
     {{"v", SQLITE_INTEGER, 0, 0}, {"s", SQLITE_TEXT, 0, 0}},
     1500,
     2,
     0,
     0,
     {"f", "f"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    {"bytes",
     "KEY (k BYTES), FAMILY f (v INT64, s STRING), SYNC OFF",
     "k BLOB PRIMARY KEY, v INTEGER, s TEXT, _key BLOB",
     KEY_SINGLE,
     1,
     {{"k", SQLITE_BLOB, 0, 0}},
     2,
     {{"v", SQLITE_INTEGER, 0, 0}, {"s", SQLITE_TEXT, 0, 0}},
     1000,
     1,
     0,
     0,
     {"f", "f"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    {"raw",
     "FAMILY f (v INT64), FAMILY g (s STRING), SYNC OFF",
     "_key BLOB PRIMARY KEY, v INTEGER, s TEXT",
     KEY_NONE,
     1,
     {{"_key", SQLITE_BLOB, 0, 0}},
     2,
     {{"v", SQLITE_INTEGER, 0, 0}, {"s", SQLITE_TEXT, 0, 0}},
     1000,
     1,
     0,
     0,
     {"f", "g"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    /* tele's key salted: scans fan out over 4 buckets and merge */
    {"stele",
     "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#' "
     "SALT 4, FAMILY stats (cpu INT64, mem INT64), FAMILY meta (note STRING), "
     "SYNC OFF",
     "device TEXT, id TEXT, day INTEGER, cpu INTEGER, mem INTEGER, "
     "note TEXT, _key BLOB, PRIMARY KEY(device, id, day)",
     KEY_DELIM,
     3,
     {{"device", SQLITE_TEXT, 0, 0},
      {"id", SQLITE_TEXT, 0, 0},
      {"day", SQLITE_INTEGER, 8, 0}},
     3,
     {{"cpu", SQLITE_INTEGER, 0, 0},
      {"mem", SQLITE_INTEGER, 0, 0},
      {"note", SQLITE_TEXT, 0, 0}},
     700,
     2,
     1,
     4,
     {"stats", "stats", "meta"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    /* a reversed last field: newest first in key order */
    {"rev",
     "KEY (device STRING, id STRING, day INT64 REVERSED DECIMAL(8)) "
     "DELIMITED BY '#', FAMILY stats (cpu INT64, temp FLOAT64), SYNC OFF",
     "device TEXT, id TEXT, day INTEGER, cpu INTEGER, temp REAL, _key BLOB, "
     "PRIMARY KEY(device, id, day)",
     KEY_DELIM,
     3,
     {{"device", SQLITE_TEXT, 0, 0},
      {"id", SQLITE_TEXT, 0, 0},
      {"day", SQLITE_INTEGER, 8, 1}},
     2,
     {{"cpu", SQLITE_INTEGER, 0, 0}, {"temp", SQLITE_FLOAT, 0, 0}},
     600,
     2,
     0,
     0,
     {"stats", "stats"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    /* ORDERED CODE struct, salted over 3 buckets, with a reversed middle
    ** field of 19 digits (0 .. INT64_MAX) */
    {"soc",
     "KEY (tenant INT64 ORDERED CODE, ts INT64 REVERSED DECIMAL(19), "
     "name STRING) ORDERED CODE SALT 3, FAMILY f (v INT64, s STRING), "
     "SYNC OFF",
     "tenant INTEGER, ts INTEGER, name TEXT, v INTEGER, s TEXT, _key BLOB, "
     "PRIMARY KEY(tenant, ts, name)",
     KEY_OC,
     3,
     {{"tenant", SQLITE_INTEGER, 0, 0},
      {"ts", SQLITE_INTEGER, 19, 1},
      {"name", SQLITE_TEXT, 0, 0}},
     2,
     {{"v", SQLITE_INTEGER, 0, 0}, {"s", SQLITE_TEXT, 0, 0}},
     700,
     2,
     0,
     3,
     {"f", "f"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    /* ORDERED CODE over byte-string fields only: trailing empty fields are
    ** left out of the key, so a key may end right after any field, and
    ** ("a") is a byte prefix of ("ab", ...) */
    {"ocs",
     "KEY (a STRING, b STRING, c BYTES) ORDERED CODE, FAMILY f (v INT64, "
     "s STRING), SYNC OFF",
     "a TEXT, b TEXT, c BLOB, v INTEGER, s TEXT, _key BLOB, "
     "PRIMARY KEY(a, b, c)",
     KEY_OC,
     3,
     {{"a", SQLITE_TEXT, 0, 0},
      {"b", SQLITE_TEXT, 0, 0},
      {"c", SQLITE_BLOB, 0, 0}},
     2,
     {{"v", SQLITE_INTEGER, 0, 0}, {"s", SQLITE_TEXT, 0, 0}},
     900,
     2,
     0,
     0,
     {"f", "f"},
     0,
     NULL,
     {NULL},
     NULL,
     NULL,
     {NULL}},
    /* cells with explicit timestamps under GC policies (see histCreate):
    ** the native twin n_hist is made from the cells table n_cells */
    {"hist",
     "KEY (device STRING, id STRING, day INT64 REVERSED DECIMAL(8)) "
     "DELIMITED BY '#', FAMILY s (a INT64, b STRING) MAX VERSIONS 3, "
     "FAMILY m (c INT64) MAX AGE '1000d', "
     "FAMILY g (d STRING) MAX VERSIONS 2 MAX AGE '1000d' INTERSECTION, "
     "FAMILY u (e INT64), SYNC OFF",
     NULL,
     KEY_DELIM,
     3,
     {{"device", SQLITE_TEXT, 0, 0},
      {"id", SQLITE_TEXT, 0, 0},
      {"day", SQLITE_INTEGER, 8, 1}},
     5,
     {{"a", SQLITE_INTEGER, 0, 0},
      {"b", SQLITE_TEXT, 0, 0},
      {"c", SQLITE_INTEGER, 0, 0},
      {"d", SQLITE_TEXT, 0, 0},
      {"e", SQLITE_INTEGER, 0, 0}},
     250,
     2,
     0,
     0,
     {"s", "s", "m", "g", "u"},
     1,
     "n_",
     {"s", "m", "g", "u"},
     "CASE family WHEN 's' THEN rn <= 3 "
     "WHEN 'm' THEN _timestamp >= 2000000000000000 "
     "WHEN 'g' THEN rn <= 2 OR _timestamp >= 2000000000000000 ELSE 1 END",
     NULL,
     {"'a'", "'b'", "'c'", "'d'", "'e'", "'A'", "'zz'", "x'61'"}},
    /* hist over a salted key, with a JSON-only family j (qualifiers that
    ** exist only through the family column); native tables ns_* */
    {"shist",
     "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#' "
     "SALT 4, FAMILY s (a INT64, b STRING) MAX VERSIONS 3, "
     "FAMILY j MAX VERSIONS 2, FAMILY u (e INT64), SYNC OFF",
     NULL,
     KEY_DELIM,
     3,
     {{"device", SQLITE_TEXT, 0, 0},
      {"id", SQLITE_TEXT, 0, 0},
      {"day", SQLITE_INTEGER, 8, 0}},
     3,
     {{"a", SQLITE_INTEGER, 0, 0},
      {"b", SQLITE_TEXT, 0, 0},
      {"e", SQLITE_INTEGER, 0, 0}},
     100,
     2,
     0,
     4,
     {"s", "s", "u"},
     1,
     "ns_",
     {"s", "j", "u"},
     "CASE family WHEN 's' THEN rn <= 3 WHEN 'j' THEN rn <= 2 ELSE 1 END",
     "j",
     {"'a'", "'e'", "'q'", "'n'", "'日本'", "''", "'qz'", "x'ff'", "x'7a80'",
      "'é'", "x'71'", "'Q'"}},
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
    if (s->aKey[iField].t == SQLITE_TEXT) {
      valText(v, azName[rnd((int)(sizeof azName / sizeof(char *)))]);
    } else if (s->aKey[iField].t == SQLITE_BLOB) {
      if (bLoad || pct(70)) {
        /* few values, so that rows share them */
        static const unsigned char aC[][2] = {{0, 0},       {0x61, 0},
                                              {0x00, 0},    {0xff, 0},
                                              {0x61, 0x62}, {0x00, 0xff}};
        static const int anC[] = {0, 1, 1, 1, 2, 2};
        int k = rnd(6);
        valBytes(v, SQLITE_BLOB, aC[k], anC[k]);
      } else {
        randBytes(v, 0, 3);
      }
    } else if (iField == 0) {
      valInt(v, (bLoad || pct(80)) ? aTenant[rnd(16)] : randWide());
    } else if (iField == 1) {
      int64_t x = (bLoad || pct(70)) ? aTs[rnd(60)] : randWide();
      /* a DECIMAL field holds 0 .. 10^n - 1 (here n = 19: every x >= 0) */
      if (s->aKey[1].nDec && x < 0) x = -(x + 1);
      valInt(v, x);
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

/* 10^n - 1 for n <= 19 (the largest DECIMAL(n) value). */
static uint64_t decMax(int n) {
  uint64_t x = 1;
  while (n-- > 0)
    x *= 10;
  return x - 1;
}

/* DECIMAL(n) or REVERSED DECIMAL(n) digits of v (doc/keyschema.md §3):
** v zero-padded, or (10^n - 1) - v. */
static int decDigits(const Col *c, int64_t v, unsigned char *a) {
  uint64_t x = (uint64_t)v;
  char z[32];
  if (c->bRev) x = decMax(c->nDec) - x;
  snprintf(z, sizeof z, "%0*llu", c->nDec, (unsigned long long)x);
  memcpy(a, z, (size_t)c->nDec);
  return c->nDec;
}

/* The row key for a tuple, from the documented encodings; with SALT n the
** bucket byte XXH3_64(key) % n comes first (doc/keyschema.md §5). */
static void encodeKey(const Spec *s, const Val *aKey, Val *pOut) {
  unsigned char a[4200];
  int n = 0, i;
  if (s->nSalt) n = 1;
  if (s->eKey == KEY_DELIM) {
    for (i = 0; i < s->nKey; i++) {
      if (i) a[n++] = '#';
      if (s->aKey[i].t == SQLITE_INTEGER) {
        n += decDigits(&s->aKey[i], aKey[i].i, a + n);
      } else {
        memcpy(a + n, aKey[i].z, (size_t)aKey[i].n);
        n += aKey[i].n;
      }
    }
  } else if (s->eKey == KEY_OC) {
    unsigned char aF[3][64];
    int anF[3], nLast;
    for (i = 0; i < 3; i++) {
      if (s->aKey[i].t == SQLITE_INTEGER) {
        anF[i] = s->aKey[i].nDec ? decDigits(&s->aKey[i], aKey[i].i, aF[i])
                                 : ocInt(aKey[i].i, aF[i]);
      } else {
        if (aKey[i].n > 0) memcpy(aF[i], aKey[i].z, (size_t)aKey[i].n);
        anF[i] = aKey[i].n;
      }
    }
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
    memcpy(a + n, aKey[0].z, aKey[0].n);
    n += aKey[0].n;
  }
  if (s->nSalt) {
    a[0] = (unsigned char)(XXH3_64bits(a + 1, (size_t)(n - 1)) %
                           (uint64_t)s->nSalt);
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

/* A canonical REAL field (appendCanon: "%!.12g" always writes a '.' or an
** exponent, which no other field has outside quotes) as a number. */
static int canonReal(const char *z, size_t n, double *pr) {
  char buf[64], *zEnd;
  if (n == 0 || n >= sizeof buf || z[0] == '\'' || z[0] == 'x') return 0;
  if (memchr(z, '.', n) == NULL && memchr(z, 'e', n) == NULL) return 0;
  memcpy(buf, z, n);
  buf[n] = 0;
  *pr = strtod(buf, &zEnd);
  return zEnd == buf + n;
}

/* Two canonical rows are equal, or differ only in REAL fields by a few
** units in their twelfth digit. Sums and averages of the same REAL values
** in another order round differently (a salted table's buckets, a
** REVERSED DECIMAL field read in key order, against native SQLite's
** order), and a rounding that crosses a boundary of the twelfth digit
** shows. Fields are split at '|', which appendCanon escapes in text. */
static int sameRow(const char *a, const char *b) {
  if (strcmp(a, b) == 0) return 1;
  for (;;) {
    size_t na = strcspn(a, "|"), nb = strcspn(b, "|");
    double x, y;
    if (na != nb || memcmp(a, b, na) != 0) {
      if (!canonReal(a, na, &x) || !canonReal(b, nb, &y) ||
          !(fabs(x - y) <= 1e-10 * fmax(fabs(x), fabs(y)))) {
        return 0;
      }
    }
    if ((a[na] == 0) != (b[nb] == 0)) return 0;
    if (a[na] == 0) return 1;
    a += na + 1;
    b += nb + 1;
  }
}

static int sameSeq(char **a, char **b, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (!sameRow(a[i] ? a[i] : "", b[i] ? b[i] : "")) return 0;
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
#define AVOID_SALT_KEY_DESC                                                    \
  0x08 /* ORDER BY _key DESC on a salted table: the                            \
       ** buckets come in ascending order, each reversed                       \
       ** (vtab.c, pickStream; fixed): the generator                           \
       ** writes ASC */
#define AVOID_SALT_SKIP_FILTER                                                 \
  0x10 /* a _key term beside key-field terms on a                              \
       ** salted table: a skip scan whose _key bound                           \
       ** leaves a bucket empty filters its rows with                          \
       ** another bucket's state (vtab.c, xFilter drops                        \
       ** the empty stream and moves the others, whose                         \
       ** engine cursors keep the old pFilterCtx;                              \
       ** fixed): the generator keeps such WHEREs to one                       \
       ** kind */
#define AVOID_HIST_MULTI_OR                                                    \
  0x20 /* an OR of _timestamp ranges on a history                              \
       ** view that SQLite runs as a MULTI-INDEX OR                            \
       ** dropped rows of the second branch while the                          \
       ** view was a rowid table with a row counter for                        \
       ** rowid (fixed: its primary key is _cell); the                         \
       ** generator writes +_timestamp */
#define AVOID_HIST_TS_IN_ORDER                                                 \
  0x40 /* _timestamp IN (...) on a history view: SQLite                        \
       ** ran one scan per value, in ascending order, so                       \
       ** a column's versions came oldest first, not                           \
       ** newest first, and latest_n applied per value                         \
       ** (fixed: xBestIndex takes the list whole,                             \
       ** sqlite3_vtab_in): no IN where that order is                          \
       ** checked, none beside latest_n */
static const struct {
  const char *zName;
  int m;
} aAvoidName[] = {
    {"hist-ts-in-order", AVOID_HIST_TS_IN_ORDER},
    {"hist-multi-or", AVOID_HIST_MULTI_OR},
    {"salt-key-desc", AVOID_SALT_KEY_DESC},
    {"salt-skip-filter", AVOID_SALT_SKIP_FILTER},
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

static char *hsub(const Spec *s, const char *z); /* hist table names */

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
  if (s->bHist) sqlite3_str_appendall(a, ", _timestamp");
  if (s->zJson) sqlite3_str_appendf(a, ", %s IS NULL", s->zJson);
  zCols = sqlite3_str_finish(a);
  zOrd = sqlite3_str_finish(o);
  zW = sqlite3_mprintf("SELECT %s FROM w_%s ORDER BY %s", zCols, s->zTag, zOrd);
  zN = sqlite3_mprintf("SELECT %s FROM n_%s ORDER BY %s", zCols, s->zTag, zOrd);
  ok = compare2(zW, zN, CMP_ORDERED, 0, 0, zWhy);
  {
    /* a statement that reads no column: after a compaction the files'
    ** notes may count the rows instead of a scan */
    char *zCW = sqlite3_mprintf("SELECT count(*) FROM w_%s", s->zTag);
    char *zCN = sqlite3_mprintf("SELECT count(*) FROM n_%s", s->zTag);
    ok &= compare2(zCW, zCN, CMP_ORDERED, 0, 0, zWhy);
    sqlite3_free(zCW);
    sqlite3_free(zCN);
  }
  if (s->bHist) {
    /* every live cell, through the history view */
    static const char *zH =
        "SELECT device, id, day, family, qualifier, _timestamp, value FROM %s "
        "ORDER BY device, id, day, family, qualifier, _timestamp DESC";
    char *zHW = sqlite3_mprintf(zH, "@HVIEW");
    char *zHN = sqlite3_mprintf(zH, "@LIVE");
    char *zHW2 = hsub(s, zHW), *zHN2 = hsub(s, zHN);
    ok &= compare2(zHW2, zHN2, CMP_ORDERED, 0, 0, zWhy);
    sqlite3_free(zHW);
    sqlite3_free(zHN);
    sqlite3_free(zHW2);
    sqlite3_free(zHN2);
  }
  if (s->zJson) {
    /* the JSON family column, qualifier by qualifier in object order (the
    ** text itself may differ in white space and escapes) */
    static const char *zJ =
        "SELECT _key, je.key, je.type, CASE WHEN je.type IN ('object', "
        "'array') THEN json(je.value) ELSE je.value END FROM %s_%s AS t, "
        "json_each(t.%s) AS je ORDER BY _key, je.id";
    char *zJW = sqlite3_mprintf(zJ, "w", s->zTag, s->zJson);
    char *zJN = sqlite3_mprintf(zJ, "n", s->zTag, s->zJson);
    ok &= compare2(zJW, zJN, CMP_ORDERED, 0, 0, zWhy);
    sqlite3_free(zJW);
    sqlite3_free(zJN);
  }
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
  int nKeyField; /* terms made on key fields (anyKeyTerm) */
  int nRawKey;   /* terms made on _key (rawKeyTerm) */
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
      else if (c->nDec && pct(60))
        /* just outside DECIMAL(n): -1 or 10^n (a REAL for n = 19) */
        qa(q, "%s %s %s%llu", zCol, azCmp[rnd(4)], pct(50) ? "-" : "",
           pct(50) ? 1ULL : (unsigned long long)decMax(c->nDec) + 1);
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
  q->nRawKey++;
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
  } else if (c->t == SQLITE_INTEGER || c->t == SQLITE_FLOAT) {
    /* comparisons of number columns are the cursor's value filters too
    ** (as SQLite checks them): =, != and the ranges, against an INTEGER,
    ** a REAL or a TEXT value */
    static const char *azOp[] = {"<", "<=", ">", ">=", "=", "!="};
    const char *zOp = azOp[rnd(6)];
    int y = rnd(10);
    if (c->t == SQLITE_INTEGER && y < 6) {
      qa(q, "%s%s %s %d", zAlias, c->zName, zOp,
         i == 0 ? rnd(2000001) - 1000000 : rnd(1000));
    } else if (y < 9) {
      qa(q, "%s%s %s %g", zAlias, c->zName, zOp, (rnd(801) - 400) * 0.25);
    } else {
      qa(q, "%s%s %s '%d'", zAlias, c->zName, zOp, rnd(1000) - 500);
    }
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
  q->nKeyField++;
  char *zCol = sqlite3_mprintf("%s%s", zAlias, q->s->aKey[i].zName);
  keyTerm(q, i, zCol);
  sqlite3_free(zCol);
}

/* 0..3 terms joined by AND (sometimes an OR of two). Returns terms made. */
static int genWhere(Q *q, const char *zAlias, int nMax, int bWhereWord) {
  int nTerm = rnd(nMax + 1), i;
  /* see AVOID_SALT_SKIP_FILTER */
  int bOneKind = q->s->nSalt && (g.mAvoid & AVOID_SALT_SKIP_FILTER);
  for (i = 0; i < nTerm; i++) {
    int x = rnd(100);
    qa(q, i == 0 ? (bWhereWord ? " WHERE " : " AND ") : " AND ");
    if (bOneKind && x < 82 && q->nRawKey > 0) {
      x = 82; /* a qualifier term instead of a key-field one */
    } else if (bOneKind && x >= 70 && x < 82 && q->nKeyField > 0) {
      x = 0; /* a key-field term instead of a _key one */
    } else if (bOneKind && x >= 92 && q->nRawKey > 0) {
      x = 82;
    }
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
    int bDesc = pct(50);
    if (s->nSalt && (g.mAvoid & AVOID_SALT_KEY_DESC)) bDesc = 0;
    qa(&q, "_key, ");
    sqlite3_str_appendf(pOrd, "_key%s", bDesc ? " DESC" : "");
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
    int f = rnd(s->nKey), f2 = s->nKey > 1 && pct(30) ? rnd(s->nKey) : f;
    if (f2 != f) {
      /* two key fields, in either order: rows with equal values of the
      ** leading fields are read once (a DISTINCT over key fields) */
      qa(&q, "SELECT DISTINCT %s, %s FROM ", s->aKey[f].zName,
         s->aKey[f2].zName);
    } else {
      qa(&q, "SELECT DISTINCT %s FROM ", s->aKey[f].zName);
    }
    qtab(&q);
    genWhere(&q, "", 2, 1);
    if (pct(40)) {
      qa(&q, " ORDER BY %s%s", s->aKey[f].zName, pct(50) ? " DESC" : "");
      if (f2 != f) qa(&q, ", %s", s->aKey[f2].zName);
      eCmp = CMP_ORDERED;
    }
    if (pct(20)) {
      /* the ORDER BY covers every column: one order; without it, which
      ** rows a LIMIT keeps is open, only their number is not */
      qa(&q, " LIMIT %d OFFSET %d", 1 + rnd(5), rnd(3));
      if (eCmp != CMP_ORDERED) eCmp = CMP_COUNT;
    }
  } else if (x < 90 && s->nKey > 1) {
    /* GROUP BY key fields out of key order: groups are still runs of a
    ** key-order scan */
    qa(&q, "SELECT %s, %s, count(*), max(%s) FROM ", s->aKey[1].zName, zK0,
       zQ0);
    qtab(&q);
    genWhere(&q, "", 2, 1);
    qa(&q, " GROUP BY %s, %s", s->aKey[1].zName, zK0);
    if (pct(50)) {
      /* an ORDER BY that repeats the GROUP BY: SQLite sorts once, for
      ** both, so the groups must come out sorted */
      qa(&q, " ORDER BY %s, %s", s->aKey[1].zName, zK0);
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
  qInit(&q, iSpec);
  qa(&q, "SELECT _key");
  if (x < 50 || s->eKey == KEY_NONE) {
    for (i = 0; i < s->nQual; i++) {
      qw(&q, ", %s ->> '%s'", s->azFam[i], s->aQual[i].zName);
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

static int histWrite(int iSpec); /* the hist schema's writes (below) */

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
  if (aSpec[iSpec].bHist) return histWrite(iSpec);
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
  if (pct(2)) {
    /* every row, of settled data too: a statement that uses no column, as
    ** count(*), which the files' notes could count */
    char *z = sqlite3_mprintf("SELECT wcs_compact('w_%s')", q.s->zTag);
    if (pct(50) && execOk(z) != SQLITE_OK) g.nFail++;
    sqlite3_free(z);
  } else if ((qa(&q, " WHERE "), pct(50))) {
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

/* Change one row's key (the module deletes the old row, writes the new);
** sometimes onto a row that exists, which both tables refuse (or skip,
** or replace, as the conflict clause says). */
static int stmtMoveKey(int iSpec) {
  Q q;
  const Spec *s = &aSpec[iSpec];
  Val aNew[MAXF], newKey;
  int i, ok, iLast = s->nKey - 1;
  const char *zOr = ""; /* the conflict clause (a target that exists) */
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
    if (pct(20)) { /* onto an existing row: refused, skipped or replaced */
      zOr = pct(50) ? "" : pct(50) ? " OR IGNORE" : " OR REPLACE";
      break;
    }
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
  qa(&q, "UPDATE%s ", zOr);
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
  if (aSpec[iSpec].bHist) return histWrite(iSpec);
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
  if (aSpec[iSpec].bHist) return histWrite(iSpec);
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

/* ------------------------------------------------------------------ */
/* The "hist" schema: cells, timestamps, GC policies, the history view */

/* Cell timestamps come from two bands that the MAX AGE '1000d' rule
** splits the same way on any day between 1973 and 2097: the old band
** (1970: expired under MAX AGE) and the new band (2100: never expired).
** HIST_CUT lies between them, so the native side needs no clock. A pool
** of a few values makes versions collide (a write at an existing
** timestamp replaces that version) and arrive out of order. */
#define HIST_NEW (INT64_C(4102444800000000)) /* 2100-01-01 */
#define HIST_CUT (INT64_C(2000000000000000))
static int64_t aHts[24];

static void initHistTs(void) {
  int i;
  aHts[0] = 0;
  for (i = 1; i < 11; i++)
    aHts[i] = 1 + (int64_t)tu_rand_range(UINT64_C(1000000000000));
  for (i = 11; i < 23; i++)
    aHts[i] = HIST_NEW + (int64_t)tu_rand_range(UINT64_C(1000000000));
  aHts[23] = INT64_MAX - 1; /* the largest timestamp a cell may have */
}
static int64_t histTs(void) {
  return pct(3) ? aHts[23] : aHts[rnd(23)];
}

/* The native side of a hist schema (doc/sql.md §4, §6, §8), its tables
** named with the schema's prefix zPre (n_ for hist, ns_ for shist):
**   n_cells  one row per cell: key fields, _key, family, qualifier,
**            _timestamp, value; a write at an existing (column, timestamp)
**            replaces it. A cell of the JSON-only family (shist's j) also
**            has qk, its qualifier as a JSON string, and jv, its value as
**            the family column shows it (both made here from the bytes:
**            jsonWrite)
**   n_live   the cells GC leaves at read time, with rn, the position in
**            the column (1 = newest), under the schema's zGc: for hist
**            s MAX VERSIONS 3; m MAX AGE (the old band); g MAX VERSIONS 2
**            MAX AGE INTERSECTION (both rules); u every version
**   n_histv  the table: each column's newest live cell, rows with at least
**            one; _timestamp the newest cell of the row. INSTEAD OF
**            triggers turn the same INSERT, UPDATE and DELETE statements
**            into Bigtable mutations on n_cells: NULL leaves a column
**            alone on INSERT and deletes all its versions on UPDATE,
**            SET family = NULL deletes the family, DELETE the row, a new
**            key moves every cell; _replace (OR REPLACE) deletes the row
**            first, _ignore (OR IGNORE) skips an existing row. Writes of
**            the JSON family column are turned into cell mutations here
**            (jsonNative), statements run after the view's
**   n_<tag>  n_histv's rows in a table (histRefresh after every write, in
**            the write's transaction, so that ROLLBACK undoes it too): the
**            statements on the table and sampleRow() read it; for shist
**            with the JSON family's column j, rebuilt from qk and jv in
**            byte order of the qualifiers
** The SQL is written with tokens that hsub() turns into the schema's
** names: @CELLS @TOUCHED @LIVE @HISTV (<zPre>cells, ...), @NHIST
** (n_<tag>), @HVIEW (h_<tag>, the history view), @WTAB (w_<tag>). */
static char *azHistRows[NSPEC]; /* SELECT of n_<tag>'s touched rows */

static char *hsub(const Spec *s, const char *z) {
  static const char *azTok[] = {"@CELLS", "@TOUCHED", "@LIVE", "@HISTV",
                                "@NHIST", "@HVIEW",   "@WTAB"};
  static const char *azFmt[] = {"%scells", "%stouched", "%slive", "%shistv",
                                "n_%s",    "h_%s",      "w_%s"};
  sqlite3_str *o = sqlite3_str_new(NULL);
  while (*z) {
    int i, bTok = 0;
    for (i = 0; *z == '@' && i < 7; i++) {
      size_t n = strlen(azTok[i]);
      if (strncmp(z, azTok[i], n) == 0) {
        sqlite3_str_appendf(o, azFmt[i], i < 4 ? s->zPre : s->zTag);
        z += n;
        bTok = 1;
        break;
      }
    }
    if (!bTok) sqlite3_str_appendchar(o, 1, *z++);
  }
  return sqlite3_str_finish(o);
}

/* execOk() of hsub(s, z). */
static int hexec(const Spec *s, const char *z) {
  char *zx = hsub(s, z);
  int rc = execOk(zx);
  sqlite3_free(zx);
  return rc;
}

static int histCreate(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  sqlite3_str *a = sqlite3_str_new(NULL);
  char *z;
  int i, rc;
  sqlite3_str_appendf(
      a,
      "CREATE TABLE @CELLS(device TEXT, id TEXT, day INTEGER, _key BLOB, "
      "family TEXT, qualifier TEXT, _timestamp INTEGER, value, qk TEXT, "
      "jv TEXT, PRIMARY KEY(_key, family, qualifier, _timestamp));"
      "CREATE TABLE @TOUCHED(k BLOB PRIMARY KEY);"
      "CREATE VIEW @LIVE AS SELECT * FROM (SELECT c.*, (SELECT count(*) "
      "FROM @CELLS AS o WHERE o._key = c._key AND o.family = c.family AND "
      "o.qualifier = c.qualifier AND o._timestamp >= c._timestamp) AS rn "
      "FROM @CELLS AS c) WHERE %s;"
      "CREATE VIEW @HISTV AS SELECT device, id, day",
      s->zGc);
  {
    sqlite3_str *r = sqlite3_str_new(NULL);
    sqlite3_str_appendall(r, "SELECT device, id, day");
    for (i = 0; i < s->nQual; i++) {
      sqlite3_str_appendf(r,
                          ", max(CASE WHEN family = '%s' AND qualifier = '%s' "
                          "THEN value END) AS %s",
                          s->azFam[i], s->aQual[i].zName, s->aQual[i].zName);
      sqlite3_str_appendf(a, ", %s", s->aQual[i].zName);
    }
    sqlite3_str_appendall(r, ", _key, max(_timestamp)");
    if (s->zJson) {
      /* the family column: the newest version of each qualifier (which
      ** the family's MAX VERSIONS never expires), in byte order */
      sqlite3_str_appendf(
          r,
          ", (SELECT '{' || group_concat(qk || ':' || jv, ',') || '}' FROM "
          "(SELECT c.qk, c.jv FROM @CELLS AS c WHERE c._key = x._key AND "
          "c.family = '%s' AND c._timestamp = (SELECT max(o._timestamp) FROM "
          "@CELLS AS o WHERE o._key = c._key AND o.family = c.family AND "
          "o.qualifier = c.qualifier) ORDER BY CAST(c.qualifier AS BLOB)))",
          s->zJson);
    }
    sqlite3_str_appendall(r, " FROM @LIVE AS x WHERE rn = 1 AND _key IN "
                             "(SELECT k FROM @TOUCHED) GROUP BY _key");
    z = sqlite3_str_finish(r);
    sqlite3_free(azHistRows[iSpec]);
    azHistRows[iSpec] = hsub(s, z);
    sqlite3_free(z);
  }
  /* the view is only written to: its rows come from n_<tag> */
  sqlite3_str_appendall(a, ", _key, _timestamp");
  for (i = 0; s->azFamAll[i]; i++)
    sqlite3_str_appendf(a, ", NULL AS %s", s->azFamAll[i]);
  sqlite3_str_appendall(a, ", NULL AS _replace, NULL AS _ignore FROM @NHIST;");
  sqlite3_str_appendall(
      a, "CREATE TRIGGER @HISTV_ins INSTEAD OF INSERT ON @HISTV BEGIN "
         "SELECT RAISE(IGNORE) WHERE NEW._ignore AND EXISTS "
         "(SELECT 1 FROM @NHIST WHERE _key = NEW._key); "
         "INSERT OR IGNORE INTO @TOUCHED VALUES (NEW._key); "
         "DELETE FROM @CELLS WHERE _key = NEW._key AND NEW._replace;");
  for (i = 0; i < s->nQual; i++) {
    sqlite3_str_appendf(
        a,
        " INSERT OR REPLACE INTO @CELLS(device, id, day, _key, family, "
        "qualifier, _timestamp, value) SELECT NEW.device, NEW.id, NEW.day, "
        "NEW._key, '%s', '%s', NEW._timestamp, NEW.%s WHERE NEW.%s IS NOT "
        "NULL;",
        s->azFam[i], s->aQual[i].zName, s->aQual[i].zName, s->aQual[i].zName);
  }
  sqlite3_str_appendall(a, " END;");
  for (i = 0; i < s->nQual; i++) {
    const char *q = s->aQual[i].zName, *f = s->azFam[i];
    sqlite3_str_appendf(
        a,
        "CREATE TRIGGER @HISTV_upd_%s INSTEAD OF UPDATE OF %s ON @HISTV "
        "BEGIN "
        "INSERT OR IGNORE INTO @TOUCHED VALUES (NEW._key); "
        "DELETE FROM @CELLS WHERE _key = NEW._key AND family = '%s' AND "
        "qualifier = '%s' AND NEW.%s IS NULL; "
        "INSERT OR REPLACE INTO @CELLS(device, id, day, _key, family, "
        "qualifier, _timestamp, value) SELECT NEW.device, NEW.id, NEW.day, "
        "NEW._key, '%s', '%s', NEW._timestamp, NEW.%s WHERE NEW.%s IS NOT "
        "NULL; END;",
        q, q, f, q, q, f, q, q, q);
  }
  for (i = 0; s->azFamAll[i]; i++) {
    const char *f = s->azFamAll[i];
    sqlite3_str_appendf(a,
                        "CREATE TRIGGER @HISTV_fam_%s INSTEAD OF UPDATE OF %s "
                        "ON @HISTV WHEN NEW.%s IS NULL BEGIN "
                        "INSERT OR IGNORE INTO @TOUCHED VALUES (OLD._key); "
                        "DELETE FROM "
                        "@CELLS WHERE _key = OLD._key AND family = '%s'; END;",
                        f, f, f, f);
  }
  sqlite3_str_appendall(
      a, "CREATE TRIGGER @HISTV_move INSTEAD OF UPDATE OF device, id, day ON "
         "@HISTV BEGIN INSERT OR IGNORE INTO @TOUCHED VALUES (OLD._key), "
         "(NEW._key); UPDATE OR REPLACE @CELLS SET device = NEW.device, "
         "id = NEW.id, day = NEW.day, _key = NEW._key WHERE _key = OLD._key; "
         "END;"
         "CREATE TRIGGER @HISTV_del INSTEAD OF DELETE ON @HISTV BEGIN "
         "INSERT OR IGNORE INTO @TOUCHED VALUES (OLD._key); DELETE FROM "
         "@CELLS WHERE _key = OLD._key; END;"
         "CREATE VIRTUAL TABLE @HVIEW USING wcs(TABLE '@WTAB', HISTORY);"
         "CREATE TABLE @NHIST(device TEXT, id TEXT, day INTEGER");
  for (i = 0; i < s->nQual; i++) {
    sqlite3_str_appendf(a, ", %s %s", s->aQual[i].zName,
                        s->aQual[i].t == SQLITE_INTEGER ? "INTEGER" : "TEXT");
  }
  sqlite3_str_appendall(a, ", _key BLOB, _timestamp INTEGER");
  if (s->zJson) sqlite3_str_appendf(a, ", %s TEXT", s->zJson);
  sqlite3_str_appendall(a, ", PRIMARY KEY(device, id, day));");
  z = sqlite3_str_finish(a);
  rc = hexec(s, z);
  sqlite3_free(z);
  return rc;
}

/* Bring n_<tag> up to date with the cells. */
static int histRefresh(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  char *z = sqlite3_mprintf(
      "DELETE FROM @NHIST WHERE _key IN (SELECT k FROM @TOUCHED); "
      "INSERT INTO @NHIST %s; DELETE FROM @TOUCHED",
      azHistRows[iSpec]);
  int rc = hexec(s, z);
  sqlite3_free(z);
  return rc;
}

/* ---- the JSON-only family (doc/sql.md §4, "Family columns") ----
** A write of a JSON object into the family column sets the qualifiers it
** names and keeps the others: a string is its UTF-8 bytes (\udcXX is
** byte XX), {"$hex": ...} the given bytes, an integer 8 bytes big-endian,
** a real the 8 bytes of its IEEE double, true/false 1/0 as an integer,
** an object or array its JSON text as written, null deletes the
** qualifier (all versions). Read back, a value is a JSON string when its
** bytes are UTF-8 without control characters other than tab, CR, LF, and
** {"$hex": "<lowercase hex>"} otherwise; a qualifier name's bytes that
** are not UTF-8 are \udcXX. In the history view the qualifier and the
** value are TEXT when UTF-8, else BLOB. */

typedef struct JCell {
  unsigned char aQ[16]; /* qualifier bytes */
  int nQ;
  unsigned char aV[48]; /* value bytes */
  int nV;
  int bDel; /* null: delete the qualifier */
} JCell;

typedef struct JWrite {
  char *zJson; /* the object written (sqlite3_malloc'd) */
  int n;       /* cells in a[] */
  JCell a[5];
} JWrite;

typedef struct JText {
  const char *zJson;  /* JSON text */
  const char *zBytes; /* the bytes it stands for */
  int n;              /* bytes at zBytes */
} JText;

/* qualifier names ("\udcc3\udca9" is the UTF-8 of "é") */
static const JText aJQual[] = {
    {"q", "q", 1},          {"n", "n", 1},
    {"Q", "Q", 1},          {"日本", "日本", 6},
    {"a b", "a b", 3},      {"", "", 0},
    {"\\u0071z", "qz", 2},  {"\\udcff", "\xff", 1},
    {"z\\udc80", "z\x80", 2}, {"\\udcc3\\udca9", "\xc3\xa9", 2},
    {"é", "\xc3\xa9", 2},   {"x\\\"y", "x\"y", 3},
    {"a\\\\b", "a\\b", 3}};
/* strings, objects and arrays */
static const JText aJStr[] = {
    {"\"ok\"", "ok", 2},
    {"\"\"", "", 0},
    {"\"日本\"", "日本", 6},
    {"\"a\\tb\"", "a\tb", 3},
    {"\"a\\u0001\"", "a\x01", 2},
    {"\"\\udcff\\udc80\"", "\xff\x80", 2},
    {"\"x\\\"y\"", "x\"y", 3},
    {"\"l\\nx\\r\"", "l\nx\r", 4},
    {"\"\\u00e9\"", "\xc3\xa9", 2},
    {"\"\\udcc3\\udca9\"", "\xc3\xa9", 2},
    {"\"a\\\\b\"", "a\\b", 3},
    {"\"\\u0000\"", "\0", 1},
    {"[1,\"a\"]", "[1,\"a\"]", 7},
    {"{\"x\": [1, 2]}", "{\"x\": [1, 2]}", 13},
    {"[]", "[]", 2},
    {"{}", "{}", 2}};

static void be64(uint64_t x, unsigned char *a) {
  int i;
  for (i = 0; i < 8; i++)
    a[i] = (unsigned char)(x >> (56 - 8 * i));
}

/* A JSON value and its bytes; 1 for null (a delete). */
static int jsonValue(sqlite3_str *o, JCell *c) {
  static const int64_t aI[] = {0,   1,   5,     127,       128,
                               200, 255, 50089, -1,        -300,
                               INT64_MIN, INT64_MAX, (int64_t)1 << 40};
  static const char *azR[] = {"2.5", "-0.25", "1.0", "1e3", "1.5e-3", "-0.0"};
  int x = rnd(100);
  c->nV = 0;
  if (x < 10) {
    sqlite3_str_appendall(o, "null");
    return 1;
  } else if (x < 50) {
    const JText *t = &aJStr[rnd((int)(sizeof aJStr / sizeof aJStr[0]))];
    sqlite3_str_appendall(o, t->zJson);
    memcpy(c->aV, t->zBytes, (size_t)t->n);
    c->nV = t->n;
  } else if (x < 68) {
    int64_t v = aI[rnd((int)(sizeof aI / sizeof aI[0]))];
    sqlite3_str_appendf(o, "%lld", (long long)v);
    be64((uint64_t)v, c->aV);
    c->nV = 8;
  } else if (x < 78) {
    const char *z = azR[rnd((int)(sizeof azR / sizeof azR[0]))];
    double r = strtod(z, NULL);
    uint64_t u;
    memcpy(&u, &r, 8);
    sqlite3_str_appendall(o, z);
    be64(u, c->aV);
    c->nV = 8;
  } else if (x < 84) {
    int b = pct(50);
    sqlite3_str_appendall(o, b ? "true" : "false");
    be64((uint64_t)b, c->aV);
    c->nV = 8;
  } else {
    Val v;
    int i;
    memset(&v, 0, sizeof v);
    randBytes(&v, 0, 6);
    sqlite3_str_appendall(o, pct(50) ? "{\"$hex\":\"" : "{ \"$hex\" : \"");
    for (i = 0; i < v.n; i++)
      sqlite3_str_appendf(o, "%02x", v.z[i]);
    sqlite3_str_appendall(o, "\"}");
    memcpy(c->aV, v.z, (size_t)v.n);
    c->nV = v.n;
    valClear(&v);
  }
  return 0;
}

/* A JSON object of 1..4 distinct qualifiers (sometimes {}), with white
** space here and there. */
static void jsonWrite(JWrite *p) {
  sqlite3_str *o = sqlite3_str_new(NULL);
  int n = pct(5) ? 0 : 1 + rnd(4), i, j;
  const char *zSp = pct(20) ? " " : "";
  p->n = 0;
  sqlite3_str_appendf(o, "%s{%s", zSp, zSp);
  for (i = 0; i < n; i++) {
    const JText *q = &aJQual[rnd((int)(sizeof aJQual / sizeof aJQual[0]))];
    JCell *c = &p->a[p->n];
    int bDup = 0;
    for (j = 0; j < p->n; j++) {
      bDup |= p->a[j].nQ == q->n && memcmp(p->a[j].aQ, q->zBytes, q->n) == 0;
    }
    if (bDup) continue;
    memcpy(c->aQ, q->zBytes, (size_t)q->n);
    c->nQ = q->n;
    sqlite3_str_appendf(o, "%s\"%s\"%s:%s", p->n ? "," : "", q->zJson, zSp,
                        zSp);
    c->bDel = jsonValue(o, c);
    p->n++;
  }
  sqlite3_str_appendf(o, "%s}%s", zSp, zSp);
  p->zJson = sqlite3_str_finish(o);
}

/* The length of the UTF-8 character at a[0..n), 0 if there is none. */
static int utf8Char(const unsigned char *a, int n) {
  int k, i;
  unsigned cp;
  if (a[0] < 0x80) return 1;
  if (a[0] >= 0xc2 && a[0] <= 0xdf)
    k = 2, cp = a[0] & 0x1f;
  else if (a[0] >= 0xe0 && a[0] <= 0xef)
    k = 3, cp = a[0] & 0x0f;
  else if (a[0] >= 0xf0 && a[0] <= 0xf4)
    k = 4, cp = a[0] & 0x07;
  else
    return 0;
  if (n < k) return 0;
  for (i = 1; i < k; i++) {
    if ((a[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (a[i] & 0x3f);
  }
  if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  if (cp >= 0xd800 && cp <= 0xdfff) return 0;
  return k;
}
static int isUtf8(const unsigned char *a, int n) {
  int i = 0, k;
  while (i < n) {
    if ((k = utf8Char(a + i, n - i)) == 0) return 0;
    i += k;
  }
  return 1;
}

/* 1 if the bytes are plain text: UTF-8 without control characters other
** than tab, CR and LF (the JSON string rule of undeclared values). */
static int isPlainText(const unsigned char *a, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (a[i] < 0x20 && a[i] != '\t' && a[i] != '\n' && a[i] != '\r') return 0;
  }
  return isUtf8(a, n);
}

/* The bytes as the history view shows them: a qualifier (bValue 0) is
** TEXT if UTF-8, an undeclared value (bValue 1) if plain text; else
** BLOB. */
static void appendTyped(sqlite3_str *o, const unsigned char *a, int n,
                        int bValue) {
  int i;
  int bText = bValue ? isPlainText(a, n) : isUtf8(a, n);
  sqlite3_str_appendall(o, bText ? "CAST(x'" : "x'");
  for (i = 0; i < n; i++)
    sqlite3_str_appendf(o, "%02x", a[i]);
  sqlite3_str_appendall(o, bText ? "' AS TEXT)" : "'");
}

/* A JSON string of the bytes: UTF-8 as it is, other bytes \udcXX. */
static void appendJsonStr(sqlite3_str *o, const unsigned char *a, int n) {
  int i = 0, k;
  sqlite3_str_appendchar(o, 1, '"');
  while (i < n) {
    k = utf8Char(a + i, n - i);
    if (k == 0) {
      sqlite3_str_appendf(o, "\\u%04x", 0xdc00 + a[i]);
      k = 1;
    } else if (a[i] == '"' || a[i] == '\\') {
      sqlite3_str_appendf(o, "\\%c", a[i]);
    } else if (a[i] < 0x20) {
      sqlite3_str_appendf(o, "\\u%04x", a[i]);
    } else {
      sqlite3_str_append(o, (const char *)a + i, k);
    }
    i += k;
  }
  sqlite3_str_appendchar(o, 1, '"');
}

/* The value as a family column shows it. */
static char *jsonShown(const unsigned char *a, int n) {
  sqlite3_str *o = sqlite3_str_new(NULL);
  int i, bStr = isUtf8(a, n);
  for (i = 0; bStr && i < n; i++) {
    if (a[i] < 0x20 && a[i] != '\t' && a[i] != '\r' && a[i] != '\n') bStr = 0;
  }
  if (bStr) {
    appendJsonStr(o, a, n);
  } else {
    sqlite3_str_appendall(o, "{\"$hex\":\"");
    for (i = 0; i < n; i++)
      sqlite3_str_appendf(o, "%02x", a[i]);
    sqlite3_str_appendall(o, "\"}");
  }
  return sqlite3_str_finish(o);
}

/* The cell mutations of a JSON write at timestamp ts on the rows zSrc
** (a SELECT of device, id, day, _key), appended to the native script. */
static void jsonNative(const Spec *s, const JWrite *p, int64_t ts,
                       const char *zSrc, sqlite3_str *o) {
  int i;
  sqlite3_str_appendf(o, "INSERT OR IGNORE INTO @TOUCHED SELECT _key FROM "
                         "(%s); ",
                      zSrc);
  for (i = 0; i < p->n; i++) {
    const JCell *c = &p->a[i];
    if (c->bDel) {
      sqlite3_str_appendf(o, "DELETE FROM @CELLS WHERE family = '%s' AND "
                             "qualifier = ",
                          s->zJson);
      appendTyped(o, c->aQ, c->nQ, 0);
      sqlite3_str_appendf(o, " AND _key IN (SELECT _key FROM (%s)); ", zSrc);
    } else {
      sqlite3_str *k = sqlite3_str_new(NULL);
      char *zK, *zV;
      appendJsonStr(k, c->aQ, c->nQ);
      zK = sqlite3_str_finish(k);
      zV = jsonShown(c->aV, c->nV);
      sqlite3_str_appendf(o,
                          "INSERT OR REPLACE INTO @CELLS(device, id, day, "
                          "_key, family, qualifier, _timestamp, value, qk, "
                          "jv) SELECT device, id, day, _key, '%s', ",
                          s->zJson);
      appendTyped(o, c->aQ, c->nQ, 0);
      sqlite3_str_appendf(o, ", %lld, ", (long long)ts);
      appendTyped(o, c->aV, c->nV, 1);
      sqlite3_str_appendf(o, ", %Q, %Q FROM (%s); ", zK, zV, zSrc);
      sqlite3_free(zK);
      sqlite3_free(zV);
    }
  }
}

/* UPDATE ... SET j = j: every qualifier's newest cell written again at ts
** with the same bytes (doc/sql.md §4: reading a family and writing the
** JSON back gives the same bytes). */
static void jsonRewriteNative(const Spec *s, int64_t ts, const char *zWhereN,
                              sqlite3_str *o) {
  sqlite3_str_appendf(
      o,
      "INSERT OR IGNORE INTO @TOUCHED SELECT _key FROM @NHIST%s; "
      "INSERT OR REPLACE INTO @CELLS(device, id, day, _key, family, "
      "qualifier, _timestamp, value, qk, jv) SELECT device, id, day, _key, "
      "family, qualifier, %lld, value, qk, jv FROM @CELLS AS c WHERE "
      "family = '%s' AND _key IN (SELECT _key FROM @NHIST%s) AND _timestamp = "
      "(SELECT max(o._timestamp) FROM @CELLS AS o WHERE o._key = c._key AND "
      "o.family = c.family AND o.qualifier = c.qualifier); ",
      zWhereN, (long long)ts, s->zJson, zWhereN);
}

/* A value for qualifier column i of a hist schema (never NULL). */
static void histVal(const Spec *s, int i, Val *v) {
  static const char *az[] = {"", "ok", "hot", "日本", "a'b", "x"};
  if (s->aQual[i].t == SQLITE_INTEGER) {
    /* bounded, so that sums and `x + 1` stay integers */
    valInt(v, pct(10) ? ((int64_t)rnd(2001) - 1000) * ((int64_t)1 << 40)
                      : rnd(200) - 50);
  } else {
    valText(v, az[rnd((int)(sizeof az / sizeof az[0]))]);
  }
}

/* The scalar a native query returns (-1 on error). */
static int64_t nativeCount(const char *zSql) {
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  if (sqlite3_prepare_v2(g.db, zSql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    n = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return n;
}
static int64_t hCount(const Spec *s, const char *zSql) {
  char *z = hsub(s, zSql);
  int64_t n = nativeCount(z);
  sqlite3_free(z);
  return n;
}

/* Every statement of zSql in turn, up to the first error. */
static void runScript(const char *zSql, Res *r) {
  const char *zTail = zSql;
  memset(r, 0, sizeof *r);
  while (zTail && zTail[0]) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(g.db, zTail, -1, &st, &zTail);
    if (rc == SQLITE_OK && st == NULL) break; /* only white space left */
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    if (rc != SQLITE_OK) {
      r->rc = rc;
      r->zErr = sqlite3_mprintf("%s", sqlite3_errmsg(g.db));
      r->nChange = -1;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) break;
  }
}

/* A write on w_<tag> and the same write on the view n_histv (a script:
** the view's statement and the JSON family's cell mutations). The view's
** triggers do the work, so sqlite3_changes() counts nothing natively:
** the rows the write must change come from zCount, run first. */
static int histRunWrite(int iSpec, const char *zW0, const char *zN0,
                        const char *zCount, const char *zWhat) {
  const Spec *s = &aSpec[iSpec];
  Res w, n;
  int64_t nExpect = hCount(s, zCount);
  char *zW = hsub(s, zW0), *zN = hsub(s, zN0);
  int ok;
  g.iStmt++;
  g.nWrite++;
  if (g.bVerbose) fprintf(stderr, "[%d] %s\n     %s\n", g.iStmt, zW, zN);
  runSql(g.db, zW, 0, &w);
  runScript(zN, &n);
  if (n.rc == SQLITE_OK) n.nChange = (int)nExpect;
  histRefresh(iSpec);
  ok = resultsAgree(&w, &n, CMP_CHANGES, 0);
  if (!ok) reportMismatch(zWhat, zW, zN, &w, &n);
  resFree(&w);
  resFree(&n);
  sqlite3_free(zW);
  sqlite3_free(zN);
  return ok;
}

/* INSERT [OR REPLACE | OR IGNORE] of 1..3 rows (existing or new), each
** with its own _timestamp and some columns NULL (left alone); on a
** schema with a JSON family, sometimes a JSON object for it too. */
static int histInsert(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  static const char *azVerb[] = {"INSERT", "INSERT OR REPLACE",
                                 "INSERT OR IGNORE"};
  sqlite3_str *w = sqlite3_str_new(NULL), *n = sqlite3_str_new(NULL);
  sqlite3_str *k = sqlite3_str_new(NULL), *js = sqlite3_str_new(NULL);
  Val aKey[MAXF], aDone[3], v;
  int x = pct(60) ? 0 : 1 + rnd(2), nRow = 1 + rnd(3), nDone = 0, r, i, ok;
  int bJson = s->zJson && pct(50);
  char *zW, *zN, *zK, *zCount, *zJs;
  memset(aKey, 0, sizeof aKey);
  memset(aDone, 0, sizeof aDone);
  memset(&v, 0, sizeof v);
  sqlite3_str_appendf(w, "%s INTO @WTAB(device, id, day", azVerb[x]);
  sqlite3_str_appendall(n, "INSERT INTO @HISTV(device, id, day");
  for (i = 0; i < s->nQual; i++) {
    sqlite3_str_appendf(w, ", %s", s->aQual[i].zName);
    sqlite3_str_appendf(n, ", %s", s->aQual[i].zName);
  }
  if (bJson) sqlite3_str_appendf(w, ", %s", s->zJson);
  sqlite3_str_appendall(w, ", _timestamp) VALUES ");
  sqlite3_str_appendall(n, ", _timestamp, _key, _replace, _ignore) VALUES ");
  for (r = 0; r < nRow; r++) {
    int bDup = 0, iSet = rnd(s->nQual);
    long long ts = (long long)histTs();
    if (pct(50)) {
      sampleRow(iSpec, aKey, &aDone[nDone]);
    } else if (!freshKey(iSpec, aKey, &aDone[nDone], aDone, nDone)) {
      continue;
    }
    for (i = 0; i < nDone; i++)
      bDup |= valEq(&aDone[i], &aDone[nDone]);
    if (bDup) continue; /* one row once: OR IGNORE counts per row */
    sqlite3_str_appendall(w, nDone ? ", (" : "(");
    sqlite3_str_appendall(n, nDone ? ", (" : "(");
    for (i = 0; i < s->nKey; i++) {
      sqlite3_str *t = sqlite3_str_new(NULL);
      char *zl;
      appendLit(t, &aKey[i]);
      zl = sqlite3_str_finish(t);
      sqlite3_str_appendf(w, "%s%s", i ? ", " : "", zl);
      sqlite3_str_appendf(n, "%s%s", i ? ", " : "", zl);
      sqlite3_free(zl);
    }
    for (i = 0; i < s->nQual; i++) {
      sqlite3_str *t = sqlite3_str_new(NULL);
      char *zl;
      if (i == iSet || pct(45))
        histVal(s, i, &v);
      else
        valClear(&v);
      appendLit(t, &v);
      zl = sqlite3_str_finish(t);
      sqlite3_str_appendf(w, ", %s", zl);
      sqlite3_str_appendf(n, ", %s", zl);
      sqlite3_free(zl);
    }
    if (bJson && pct(75)) {
      JWrite jw;
      sqlite3_str *t = sqlite3_str_new(NULL), *q = sqlite3_str_new(NULL);
      char *zKey, *zSrc;
      int bSkip = 0;
      jsonWrite(&jw);
      sqlite3_str_appendf(w, ", '%q'", jw.zJson);
      appendLit(t, &aDone[nDone]);
      zKey = sqlite3_str_finish(t);
      if (x == 2) { /* OR IGNORE skips an existing row */
        char *zq = sqlite3_mprintf(
            "SELECT count(*) FROM @NHIST WHERE _key = %s", zKey);
        bSkip = hCount(s, zq) != 0;
        sqlite3_free(zq);
      }
      sqlite3_str_appendall(q, "SELECT ");
      for (i = 0; i < s->nKey; i++) {
        appendLit(q, &aKey[i]);
        sqlite3_str_appendf(q, " AS %s, ", s->aKey[i].zName);
      }
      sqlite3_str_appendf(q, "%s AS _key", zKey);
      zSrc = sqlite3_str_finish(q);
      if (!bSkip) jsonNative(s, &jw, ts, zSrc, js);
      sqlite3_free(zSrc);
      sqlite3_free(zKey);
      sqlite3_free(jw.zJson);
    } else if (bJson) {
      sqlite3_str_appendall(w, ", NULL");
    }
    sqlite3_str_appendf(w, ", %lld)", ts);
    sqlite3_str_appendf(n, ", %lld, ", ts);
    appendLit(n, &aDone[nDone]);
    sqlite3_str_appendf(n, ", %d, %d)", x == 1, x == 2);
    if (nDone) sqlite3_str_appendall(k, ", ");
    appendLit(k, &aDone[nDone]);
    nDone++;
  }
  zJs = sqlite3_str_finish(js);
  sqlite3_str_appendf(n, "; %s", zJs ? zJs : "");
  zW = sqlite3_str_finish(w);
  zN = sqlite3_str_finish(n);
  zK = sqlite3_str_finish(k);
  if (x == 2) {
    zCount = sqlite3_mprintf(
        "SELECT %d - (SELECT count(*) FROM @NHIST WHERE _key IN (%s))", nDone,
        zK);
  } else {
    zCount = sqlite3_mprintf("SELECT %d", nDone);
  }
  ok = nDone == 0 || histRunWrite(iSpec, zW, zN, zCount, azVerb[x]);
  sqlite3_free(zW);
  sqlite3_free(zN);
  sqlite3_free(zK);
  sqlite3_free(zJs);
  sqlite3_free(zCount);
  freeVals(aKey, MAXF);
  freeVals(aDone, 3);
  valClear(&v);
  refreshCount(iSpec);
  return ok;
}

/* UPDATE ... SET <columns>, _timestamp = t WHERE ...: a value writes a
** version at t, NULL deletes the column (every version), `x = x` writes
** the latest value again at t; a JSON object into the JSON family (merged
** into its qualifiers), or `j = j`; or SET family = NULL. Or DELETE, or a
** key move (every cell keeps its timestamp). */
static int histUpdate(int iSpec, int eKind) {
  const Spec *s = &aSpec[iSpec];
  Q q;
  char *zSetW = NULL, *zW, *zN, *zWhereW, *zWhereN, *zCount;
  sqlite3_str *set = sqlite3_str_new(NULL);
  int i, ok, nSet = 1 + (pct(35) ? 1 : 0), iPrev = -1, nFam = 0;
  int64_t ts = histTs();
  int eJson = 0; /* 1: SET j = '<object>'; 2: SET j = j */
  JWrite jw;
  Val v;
  memset(&v, 0, sizeof v);
  memset(&jw, 0, sizeof jw);
  while (s->azFamAll[nFam])
    nFam++;
  qInit(&q, iSpec);
  if (eKind == 0) {
    if (s->zJson && pct(40)) {
      eJson = pct(80) ? 1 : 2;
      if (pct(40)) nSet = 0; /* the family column alone */
    }
    for (i = 0; i < nSet; i++) {
      int j = rnd(s->nQual), y = rnd(100);
      const Col *c = &s->aQual[j];
      if (j == iPrev) continue;
      iPrev = j;
      if (i) sqlite3_str_appendall(set, ", ");
      if (y < 60) {
        histVal(s, j, &v);
        sqlite3_str_appendf(set, "%s = ", c->zName);
        appendLit(set, &v);
      } else if (y < 75) {
        sqlite3_str_appendf(set, "%s = NULL", c->zName);
      } else if (y < 85) {
        sqlite3_str_appendf(set, "%s = %s", c->zName, c->zName);
      } else if (c->t == SQLITE_INTEGER) {
        sqlite3_str_appendf(set, "%s = %s + 1", c->zName, c->zName);
      } else {
        sqlite3_str_appendf(set, "%s = %s || 'x'", c->zName, c->zName);
      }
    }
    if (nSet) sqlite3_str_appendall(set, ", ");
    sqlite3_str_appendf(set, "_timestamp = %lld", (long long)ts);
  } else if (eKind == 1) {
    sqlite3_str_appendf(set, "%s = NULL", s->azFamAll[rnd(nFam)]);
  }
  zSetW = sqlite3_str_finish(set);
  if (eKind == 3) {
    /* a key move: same device and id, a day no visible row has */
    Val aNew[MAXF], newKey;
    int iTry;
    memset(aNew, 0, sizeof aNew);
    memset(&newKey, 0, sizeof newKey);
    for (iTry = 0; iTry < 30; iTry++) {
      char *z;
      for (i = 0; i < s->nKey; i++)
        valCopy(&aNew[i], &q.aRow[i]);
      genField(s, 2, 0, &aNew[2]);
      encodeKey(s, aNew, &newKey);
      {
        sqlite3_str *t = sqlite3_str_new(NULL);
        sqlite3_str_appendall(t, "SELECT count(*) FROM @NHIST WHERE _key = ");
        appendLit(t, &newKey);
        z = sqlite3_str_finish(t);
      }
      if (hCount(s, z) == 0) {
        sqlite3_free(z);
        break;
      }
      sqlite3_free(z);
    }
    if (iTry == 30) { /* every day tried is taken */
      char *zA, *zB;
      freeVals(aNew, MAXF);
      valClear(&newKey);
      qDone(&q, &zA, &zB);
      sqlite3_free(zA);
      sqlite3_free(zB);
      sqlite3_free(zSetW);
      return 1;
    }
    sqlite3_free(zSetW);
    set = sqlite3_str_new(NULL);
    sqlite3_str_appendf(set, "day = %lld", (long long)aNew[2].i);
    zSetW = sqlite3_str_finish(set);
    qa(&q, " WHERE device = ");
    qlit(&q, &q.aRow[0]);
    qa(&q, " AND id = ");
    qlit(&q, &q.aRow[1]);
    qa(&q, " AND day = ");
    qlit(&q, &q.aRow[2]);
    qDone(&q, &zWhereW, &zWhereN);
    zW = sqlite3_mprintf("UPDATE @WTAB SET %s%s", zSetW, zWhereW);
    {
      sqlite3_str *t = sqlite3_str_new(NULL);
      char *zKey;
      appendLit(t, &newKey);
      zKey = sqlite3_str_finish(t);
      zN = sqlite3_mprintf("UPDATE @HISTV SET %s, _key = %s%s", zSetW, zKey,
                           zWhereN);
      sqlite3_free(zKey);
    }
    freeVals(aNew, MAXF);
    valClear(&newKey);
  } else {
    if (eKind != 0 || pct(50)) {
      /* one row, or the rows of a prefix */
      qa(&q, " WHERE ");
      for (i = 0; i < s->nKey; i++) {
        if (i && pct(30)) break;
        qa(&q, "%s%s = ", i ? " AND " : "", s->aKey[i].zName);
        qlit(&q, &q.aRow[i]);
      }
    } else if (genWhere(&q, "", 2, 1) == 0) {
      qa(&q, " WHERE ");
      anyKeyTerm(&q, "");
    }
    qDone(&q, &zWhereW, &zWhereN);
    if (eKind == 2) {
      zW = sqlite3_mprintf("DELETE FROM @WTAB%s", zWhereW);
      zN = sqlite3_mprintf("DELETE FROM @HISTV%s", zWhereN);
    } else if (eJson) {
      sqlite3_str *t = sqlite3_str_new(NULL);
      if (eJson == 1) {
        jsonWrite(&jw);
        zW = sqlite3_mprintf("UPDATE @WTAB SET %s = '%q', %s%s", s->zJson,
                             jw.zJson, zSetW, zWhereW);
      } else {
        zW = sqlite3_mprintf("UPDATE @WTAB SET %s = %s, %s%s", s->zJson,
                             s->zJson, zSetW, zWhereW);
      }
      /* the declared columns through the view first (it reads n_<tag>,
      ** which changes only at histRefresh), then the family's cells */
      if (nSet) {
        sqlite3_str_appendf(t, "UPDATE @HISTV SET %s%s; ", zSetW, zWhereN);
      }
      if (eJson == 1) {
        char *zSrc = sqlite3_mprintf(
            "SELECT device, id, day, _key FROM @NHIST%s", zWhereN);
        jsonNative(s, &jw, ts, zSrc, t);
        sqlite3_free(zSrc);
      } else {
        jsonRewriteNative(s, ts, zWhereN, t);
      }
      zN = sqlite3_str_finish(t);
    } else {
      zW = sqlite3_mprintf("UPDATE @WTAB SET %s%s", zSetW, zWhereW);
      zN = sqlite3_mprintf("UPDATE @HISTV SET %s%s", zSetW, zWhereN);
    }
  }
  zCount = sqlite3_mprintf("SELECT count(*) FROM @NHIST%s", zWhereN);
  ok = histRunWrite(iSpec, zW, zN, zCount,
                    eKind == 0   ? (eJson ? "update family JSON" : "update cells")
                    : eKind == 1 ? "delete family"
                    : eKind == 2 ? "delete rows"
                                 : "move row");
  sqlite3_free(jw.zJson);
  sqlite3_free(zSetW);
  sqlite3_free(zW);
  sqlite3_free(zN);
  sqlite3_free(zWhereW);
  sqlite3_free(zWhereN);
  sqlite3_free(zCount);
  valClear(&v);
  refreshCount(iSpec);
  return ok;
}

static int histWrite(int iSpec) {
  int x = rnd(100);
  if (g.anRow[iSpec] < aSpec[iSpec].nLoad / 2 && x >= 40) x = 0;
  if (x < 40) return histInsert(iSpec);
  if (x < 75) return histUpdate(iSpec, 0);
  if (x < 83) return histUpdate(iSpec, 1);
  if (x < 93) return histUpdate(iSpec, 2);
  return g.anRow[iSpec] > 0 ? histUpdate(iSpec, 3) : 1;
}

static int64_t histTsNear(void) {
  int64_t x = aHts[rnd(24)];
  if (pct(25) && x > 0 && x < INT64_MAX) x += pct(50) ? 1 : -1;
  if (pct(5)) x = pct(50) ? -1 : HIST_CUT;
  return x;
}

/* Terms on _timestamp, the same text on both sides (inside the window on
** the native side: the time filter comes before latest-N). doc/sql.md §8
** defines the time filter for =, <, <=, >, >= and BETWEEN only, so IN
** lists and ORs of ranges come only where there is no latest-N (bLatest
** 0): then they are plain filters on the cells. */
static void histTimeTerms(sqlite3_str *t, int bLatest, int bNoIn) {
  int n = rnd(3), i;
  if (bLatest && (g.mAvoid & AVOID_HIST_TS_IN_ORDER)) bNoIn = 1;
  for (i = 0; i < n; i++) {
    int64_t x = histTsNear();
    int y = rnd(100);
    /* beside latest_n only an IN list, which the view applies before
    ** latest-N; an OR or a NOT IN is SQLite's, after it (doc/sql.md §8) */
    if (y < 20 && !(bLatest && bNoIn)) {
      if (!bNoIn && (bLatest || pct(50))) {
        int k = 1 + rnd(4), j;
        sqlite3_str_appendf(t, " AND _timestamp %sIN (%lld",
                            !bLatest && pct(15) ? "NOT " : "", (long long)x);
        for (j = 1; j < k; j++)
          sqlite3_str_appendf(t, ", %lld", (long long)histTsNear());
        sqlite3_str_appendall(t, ")");
      } else {
        int64_t a = histTsNear(), b = histTsNear();
        const char *zP = (g.mAvoid & AVOID_HIST_MULTI_OR) ? "+" : "";
        sqlite3_str_appendf(t,
                            " AND (%s_timestamp %s %lld OR %s_timestamp "
                            "BETWEEN %lld AND %lld)",
                            zP, azCmp[rnd(4)], (long long)x, zP,
                            (long long)(a < b ? a : b),
                            (long long)(a < b ? b : a));
      }
      continue;
    }
    y = rnd(100);
    if (y < 15) {
      sqlite3_str_appendf(t, " AND _timestamp = %lld", (long long)x);
    } else if (y < 80) {
      sqlite3_str_appendf(t, " AND _timestamp %s %lld", azCmp[rnd(4)],
                          (long long)x);
    } else if (y < 92) {
      int64_t x2 = aHts[rnd(24)];
      sqlite3_str_appendf(t, " AND _timestamp BETWEEN %lld AND %lld",
                          (long long)(x < x2 ? x : x2),
                          (long long)(x < x2 ? x2 : x));
    } else if (y < 96) {
      sqlite3_str_appendf(t, " AND _timestamp %s %lld.5", azCmp[rnd(4)],
                          (long long)(x / 2));
    } else {
      sqlite3_str_appendf(t, " AND _timestamp %s '%lld'", azCmp[rnd(4)],
                          (long long)x);
    }
  }
}

/* A read of the history view h_<tag> against the live cells n_live: key
** terms (on a salted key: fanned out over the buckets and merged back),
** family and qualifier terms (the JSON family's qualifiers too, BLOB ones
** included), time terms, latest-N (as h_<tag>(n) or latest_n = n), value
** terms (SQLite's, after latest-N), ORDER BY key fields ASC/DESC and
** LIMIT/OFFSET; or one column's versions without ORDER BY, which must
** come newest first (doc/sql.md §8). */
static void histSelect(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  Q q;
  sqlite3_str *t = sqlite3_str_new(NULL);
  char *zT, *zKW, *zKN, *zW, *zN, *zLim = NULL, *zx;
  const char *zOrd = "";
  int nLatest = pct(40) ? 1 + rnd(4) : 0, bTvf = pct(50), x = rnd(100), i;
  int eCmp = CMP_BAG, nOrd = 0, bLimit = 0, nFam = 0, nHQual = 0;
  const char *azFam[MAXF + 3];
  for (nFam = 0; s->azFamAll[nFam]; nFam++)
    azFam[nFam] = s->azFamAll[nFam];
  azFam[nFam++] = "S";
  azFam[nFam++] = "zz";
  while (nHQual < 12 && s->azHQual[nHQual])
    nHQual++;
  qInit(&q, iSpec);
  if (x < 12) {
    /* one column, every version: newest first without ORDER BY */
    qa(&q, " AND _key = ");
    qlit(&q, &q.rowKey);
    if (s->zJson && pct(40)) {
      qa(&q, " AND family = '%s' AND qualifier = %s", s->zJson,
         s->azHQual[rnd(nHQual)]);
    } else {
      int j = rnd(s->nQual);
      qa(&q, " AND family = '%s' AND qualifier = '%s'", s->azFam[j],
         s->aQual[j].zName);
    }
    qn(&q, " ORDER BY _timestamp DESC");
    eCmp = CMP_ORDERED;
  } else {
    int nTerm = rnd(3);
    for (i = 0; i < nTerm; i++) {
      qa(&q, " AND ");
      if (pct(80))
        anyKeyTerm(&q, "");
      else
        rawKeyTerm(&q, "_key");
    }
    if (pct(30)) {
      if (pct(80))
        qa(&q, " AND family = '%s'", azFam[rnd(nFam)]);
      else
        qa(&q, " AND family IN ('%s', '%s')", azFam[rnd(nFam)],
           azFam[rnd(nFam)]);
    }
    if (pct(25)) {
      int y = rnd(10);
      if (y < 9)
        qa(&q, " AND qualifier = %s", s->azHQual[rnd(nHQual)]);
      else
        qa(&q, " AND qualifier > 'b'");
    }
    if (pct(15)) {
      static const char *azV[] = {"value > 20", "value < 0", "value = 'ok'",
                                  "typeof(value) = 'text'",
                                  "value IS NOT NULL"};
      qa(&q, " AND %s", azV[rnd(5)]);
    }
  }
  qDone(&q, &zKW, &zKN);
  histTimeTerms(t, nLatest > 0,
                x < 12 && (g.mAvoid & AVOID_HIST_TS_IN_ORDER) != 0);
  zT = sqlite3_str_finish(t);
  if (x >= 12) {
    int y = rnd(100);
    if (y < 30) {
      zOrd = pct(50) ? " ORDER BY device, id, day"
                     : " ORDER BY device DESC, id DESC, day DESC";
      eCmp = CMP_ORDPREFIX;
      nOrd = 3;
    } else if (y < 50) {
      zOrd = pct(50) ? " ORDER BY device, id, day, family, qualifier, "
                       "_timestamp DESC"
                     : " ORDER BY device DESC, id, day DESC, family, "
                       "qualifier DESC, _timestamp";
      eCmp = CMP_ORDERED;
    } else if (y < 60) {
      zOrd = " ORDER BY _timestamp DESC, device, id, day, family, qualifier";
      eCmp = CMP_ORDERED;
    }
    if (zOrd[0] && pct(45)) {
      bLimit = 1;
      zLim = pct(30) ? sqlite3_mprintf(" LIMIT %d OFFSET %d", rnd(30), rnd(10))
                     : sqlite3_mprintf(" LIMIT %d", rnd(25));
    } else if (!zOrd[0] && pct(8)) {
      bLimit = 1;
      eCmp = CMP_COUNT;
      zLim = sqlite3_mprintf(" LIMIT %d", rnd(20));
    }
  }
  {
    char zTvf[32] = "", zLatW[48] = "", zLatN[48] = "";
    if (nLatest) {
      if (bTvf)
        snprintf(zTvf, sizeof zTvf, "(%d)", nLatest);
      else
        snprintf(zLatW, sizeof zLatW, " AND latest_n = %d", nLatest);
      snprintf(zLatN, sizeof zLatN, " AND k <= %d", nLatest);
    }
    zx = sqlite3_mprintf("SELECT device, id, day, family, qualifier, "
                         "_timestamp, value FROM @HVIEW%s WHERE 1%s%s%s%s%s",
                         zTvf, zT, zLatW, zKW, zOrd, zLim ? zLim : "");
    zW = hsub(s, zx);
    sqlite3_free(zx);
    zx = sqlite3_mprintf(
        "SELECT device, id, day, family, qualifier, _timestamp, value FROM "
        "(SELECT *, row_number() OVER (PARTITION BY _key, family, qualifier "
        "ORDER BY _timestamp DESC) AS k FROM @LIVE WHERE 1%s) WHERE 1%s%s%s%s",
        zT, zLatN, zKN, zOrd, zLim ? zLim : "");
    zN = hsub(s, zx);
    sqlite3_free(zx);
  }
  g.nSelect++;
  compare2(zW, zN, eCmp, nOrd, bLimit, "history view");
  sqlite3_free(zT);
  sqlite3_free(zKW);
  sqlite3_free(zKN);
  sqlite3_free(zW);
  sqlite3_free(zN);
  sqlite3_free(zLim);
}

/* The JSON family read as SQL reads JSON: the same expression over the
** module's family column and over the native one (whose JSON is made
** from the cells as doc/sql.md §4 says): `j ->> '$."q"'` and json_type,
** json_each() joined to the table (object order: qualifiers in byte
** order), map_keys() against the native object's keys, a WHERE on it. */
static void jsonRead(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  const char *j = s->zJson;
  Q q;
  int x = rnd(100), i, eCmp = CMP_BAG;
  qInit(&q, iSpec);
  if (x < 35) {
    int n = 1 + rnd(3);
    qa(&q, "SELECT _key");
    for (i = 0; i < n; i++) {
      const JText *t = &aJQual[rnd((int)(sizeof aJQual / sizeof aJQual[0]))];
      if (strchr(t->zJson, '\\')) t = &aJQual[0];
      qa(&q, ", %s ->> '$.\"%s\"', json_type(%s, '$.\"%s\"')", j, t->zJson, j,
         t->zJson);
    }
    qa(&q, " FROM ");
    qtab(&q);
    genWhere(&q, "", 2, 1);
  } else if (x < 60) {
    qa(&q, "SELECT t._key, je.key, je.type, CASE WHEN je.type IN ('object', "
           "'array') THEN json(je.value) ELSE je.value END FROM ");
    qtab(&q);
    qa(&q, " AS t, json_each(t.%s) AS je", j);
    genWhere(&q, "t.", 2, 1);
    qa(&q, " ORDER BY t._key, je.id");
    eCmp = CMP_ORDERED;
  } else if (x < 80) {
    qw(&q, "SELECT _key, (SELECT group_concat(hex(value), ',') FROM "
           "json_each(map_keys(%s))) FROM ",
       j);
    qn(&q, "SELECT _key, (SELECT group_concat(hex(key), ',') FROM "
           "json_each(%s)) FROM ",
       j);
    qtab(&q);
    genWhere(&q, "", 2, 1);
  } else {
    static const char *azJ[] = {
        "%s ->> 'q' IS NOT NULL", "json_type(%s, '$.n') = 'object'",
        "%s IS NULL", "%s ->> 'q' = 'ok'", "json_array_length(map_keys(%s)) > 2"};
    int y = rnd(5);
    qa(&q, "SELECT device, id, day, a FROM ");
    qtab(&q);
    qa(&q, " WHERE ");
    if (y == 4) {
      qw(&q, azJ[4], j);
      qn(&q, "(SELECT count(*) FROM json_each(%s)) > 2", j);
    } else {
      qa(&q, azJ[y], j);
    }
    genWhere(&q, "", 1, 0);
  }
  g.nSelect++;
  runPair(&q, eCmp, 0, 0, "family JSON column");
}

/* The table's latest values and _timestamp (the newest live cell of the
** row) under the GC policies, some columns or all, or per family. */
static void histLatest(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  Q q;
  int i, x = rnd(100), eCmp = CMP_BAG, nOrd = 0, bLimit = 0;
  qInit(&q, iSpec);
  if (x < 70) {
    int bOrd = pct(50);
    qa(&q, "SELECT ");
    if (bOrd) qa(&q, "day, device, id, ");
    for (i = 0; i < s->nQual; i++) {
      if (pct(50)) qa(&q, "%s, ", s->aQual[i].zName);
    }
    qa(&q, "_timestamp FROM ");
    qtab(&q);
    genWhere(&q, "", 2, 1);
    if (bOrd) {
      const char *zDir = pct(50) ? " DESC" : "";
      qa(&q, " ORDER BY day%s, device, id", zDir);
      eCmp = CMP_ORDERED;
      if (pct(50)) {
        qa(&q, " LIMIT %d", rnd(20));
        bLimit = 1;
      }
    }
  } else {
    /* per family: max(_timestamp) of the rows holding a column of it */
    int j = rnd(s->nQual);
    qa(&q, "SELECT count(*), max(_timestamp), min(_timestamp), sum(%s) FROM ",
       s->aQual[j].zName);
    qtab(&q);
    qa(&q, " WHERE %s IS NOT NULL", s->aQual[j].zName);
    genWhere(&q, "", 1, 0);
  }
  g.nSelect++;
  runPair(&q, eCmp, nOrd, bLimit, "table under GC policies");
}

/* A hist schema's rows: 1..4 writes per key at random timestamps (on a
** schema with a JSON family, some of them JSON objects for it too). */
static int histLoadRows(int iSpec) {
  const Spec *s = &aSpec[iSpec];
  int r, k, rc = SQLITE_OK;
  Val aKey[MAXF], key, v;
  memset(aKey, 0, sizeof aKey);
  memset(&key, 0, sizeof key);
  memset(&v, 0, sizeof v);
  if (execOk("BEGIN")) return SQLITE_ERROR;
  for (r = 0; rc == SQLITE_OK && r < s->nLoad; r++) {
    int nVer = 1 + rnd(4), i;
    for (i = 0; i < s->nKey; i++)
      genField(s, i, 1, &aKey[i]);
    encodeKey(s, aKey, &key);
    for (k = 0; rc == SQLITE_OK && k < nVer; k++) {
      sqlite3_str *a = sqlite3_str_new(NULL), *c = sqlite3_str_new(NULL);
      char *z, *zVals, *zCols, *zKeyLit;
      int iSet = rnd(s->nQual);
      int64_t ts = histTs();
      JWrite jw;
      memset(&jw, 0, sizeof jw);
      for (i = 0; i < s->nKey; i++) {
        if (i) sqlite3_str_appendall(a, ", ");
        appendLit(a, &aKey[i]);
        sqlite3_str_appendf(c, "%s%s", i ? ", " : "", s->aKey[i].zName);
      }
      for (i = 0; i < s->nQual; i++) {
        if (i == iSet || pct(50))
          histVal(s, i, &v);
        else
          valClear(&v);
        sqlite3_str_appendall(a, ", ");
        appendLit(a, &v);
        sqlite3_str_appendf(c, ", %s", s->aQual[i].zName);
      }
      sqlite3_str_appendf(a, ", %lld", (long long)ts);
      sqlite3_str_appendall(c, ", _timestamp");
      zVals = sqlite3_str_finish(a);
      zCols = sqlite3_str_finish(c);
      a = sqlite3_str_new(NULL);
      appendLit(a, &key);
      zKeyLit = sqlite3_str_finish(a);
      a = sqlite3_str_new(NULL);
      if (s->zJson && pct(50)) {
        char *zSrc;
        jsonWrite(&jw);
        sqlite3_str_appendf(a, "INSERT INTO @WTAB(%s, %s) VALUES (%s, '%q'); ",
                            zCols, s->zJson, zVals, jw.zJson);
        zSrc = sqlite3_mprintf("SELECT ");
        for (i = 0; i < s->nKey; i++) {
          sqlite3_str *t = sqlite3_str_new(NULL);
          char *zl, *zp = zSrc;
          appendLit(t, &aKey[i]);
          zl = sqlite3_str_finish(t);
          zSrc = sqlite3_mprintf("%s%s AS %s, ", zp, zl, s->aKey[i].zName);
          sqlite3_free(zp);
          sqlite3_free(zl);
        }
        {
          char *zp = zSrc;
          zSrc = sqlite3_mprintf("%s%s AS _key", zp, zKeyLit);
          sqlite3_free(zp);
        }
        sqlite3_str_appendf(a,
                            "INSERT INTO @HISTV(%s, _key) VALUES (%s, %s); ",
                            zCols, zVals, zKeyLit);
        jsonNative(s, &jw, ts, zSrc, a);
        sqlite3_free(zSrc);
      } else {
        sqlite3_str_appendf(a,
                            "INSERT INTO @WTAB(%s) VALUES (%s); INSERT INTO "
                            "@HISTV(%s, _key) VALUES (%s, %s)",
                            zCols, zVals, zCols, zVals, zKeyLit);
      }
      z = sqlite3_str_finish(a);
      rc = hexec(s, z);
      sqlite3_free(z);
      sqlite3_free(zVals);
      sqlite3_free(zCols);
      sqlite3_free(zKeyLit);
      sqlite3_free(jw.zJson);
    }
  }
  if (rc == SQLITE_OK) rc = histRefresh(iSpec);
  if (rc == SQLITE_OK)
    rc = execOk("COMMIT");
  else
    sqlite3_exec(g.db, "ROLLBACK", NULL, NULL, NULL);
  freeVals(aKey, MAXF);
  valClear(&key);
  valClear(&v);
  return rc;
}

static int stmtWrite(int iSpec) {
  int x = rnd(100);
  if (aSpec[iSpec].bHist) return histWrite(iSpec);
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
  if (aSpec[iSpec].bHist && pct(50))
    histSelect(iSpec);
  else if (pct(70))
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
  } else if (s->eKey == KEY_OC && s->aKey[0].t == SQLITE_TEXT) {
    sqlite3_str_appendall(w, x < 50 ? "NULL, 'a', x'01'" : "'a', NULL, x''");
  } else if (s->eKey == KEY_OC) {
    sqlite3_str_appendall(w, x < 40                       ? "NULL, 1, 'a'"
                             : x < 70 || !s->aKey[1].nDec ? "1, 2, NULL"
                                                          : "1, -1, 'a'");
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

  if (s->bHist) {
    z = sqlite3_mprintf("CREATE VIRTUAL TABLE w_%s USING wcs(%s)", s->zTag,
                        s->zArgs);
  } else {
    z = sqlite3_mprintf("CREATE VIRTUAL TABLE w_%s USING wcs(%s);"
                        "CREATE TABLE n_%s(%s);",
                        s->zTag, s->zArgs, s->zTag, s->zNative);
  }
  rc = execOk(z);
  sqlite3_free(z);
  if (rc == SQLITE_OK && s->bHist) rc = histCreate(iSpec);
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
  for (r = 0;
       rc == SQLITE_OK && !s->bHist && nDone < s->nLoad && r < s->nLoad * 20;
       r++) {
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
  if (rc == SQLITE_OK && s->bHist) rc = histLoadRows(iSpec);
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
    for (i = 0; i < s->nKey; i++) {
      sqlite3_str_appendf(o, "%s%s%s", i ? ", " : "", s->aKey[i].zName,
                          s->aKey[i].bRev ? " DESC" : "");
    }
    z = sqlite3_str_finish(o);
    /* a salted key sorts by its bucket byte first, then the rest */
    zA = sqlite3_mprintf("SELECT _key FROM n_%s ORDER BY %s", s->zTag,
                         s->nSalt ? "substr(_key, 2)" : "_key");
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
  if (x < 490 && aSpec[iSpec].bHist && pct(65)) {
    if (aSpec[iSpec].zJson && pct(25))
      jsonRead(iSpec);
    else if (pct(70))
      histSelect(iSpec);
    else
      histLatest(iSpec);
  } else if (x < 490)
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
  initHistTs();
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
    sqlite3_free(azHistRows[i]);
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
