/*
** fuzz_sql.c — fuzz target for the SQL module (vtab/): planning
** (xBestIndex with every constraint kind, IN lists, LIMIT/OFFSET, ORDER BY,
** starts_with, _key terms, skip scans, salted fan-out), xFilter's value
** conversions, writes (INSERT/UPDATE/DELETE, upserts, JSON into family
** columns, _timestamp), transactions and savepoints, history views and the
** SQL functions.
**
** How it works. Each input gets a fresh in-memory database with wcs
** registered and the same few tables (zSetup: every key kind, a salted
** table, one without KEY, GC policies, aggregate families, history views,
** a native table to join with), all in the connection's in-memory store,
** so inputs are independent and touch no file. The input is
**
**   <generator bytes> [ 0x00 <SQL text> ]
**
** The generator bytes drive a small grammar (genStmt): each statement
** kind, table, column, operator and literal is picked by the next byte,
** literals from pools of edge values (extreme integers, reals that
** overflow, text with delimiter bytes, invalid UTF-8 through CAST(x'..'
** AS TEXT), blobs, encoded keys) or from the input bytes themselves. The
** SQL text after the first NUL runs as it is, so the fuzzer can also
** find syntax the grammar does not make.
**
** Invariant: a generated SELECT on one wcs table whose terms read alike
** whoever evaluates them (no TEXT compared with _key, no latest_n, LIMIT
** only under a total order) runs twice, as written and over
** `(SELECT <every column> FROM t LIMIT -1 OFFSET 0)`, which SQLite can
** neither flatten nor push terms into, so the module only full-scans;
** both must give the same rows (in the same order under a total order:
** ORDER BY _key, or by every key field).
** Now and then a table's column is also counted against its history
** view (checkHistory). Errors are fine; a crash, a sanitizer report, a
** leak, a hang or a differing result is a failure.
**
** Bounds: 32 generated statements and 16 raw ones per input, 256 rows
** read per statement, a progress handler that interrupts every statement
** once an input has run about 200k VDBE steps, and sqlite3_limit() caps
** on string length, SQL length, expression depth and compounds. An
** authorizer keeps the SQL in memory: ATTACH only of ':memory:', a short
** list of PRAGMAs, no wcs_backup, and no statement naming STORE, VACUUM
** or a backup is run.
**
** Seeds in tests/corpus/sql/.
*/
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_GEN_STMT   32    /* generated statements per input */
#define MAX_RAW_STMT   16    /* raw SQL statements per input */
#define MAX_RAW_SQL    2048  /* bytes of raw SQL text used */
#define MAX_ROWS       256   /* rows read per statement */
#define PROGRESS_OPS   100   /* VDBE steps between progress callbacks */
#define MAX_TICKS      2000  /* callbacks per input: ~200k steps */

/* ---- the tables --------------------------------------------------------- */

static const char zSetup[] =
    "CREATE VIRTUAL TABLE m USING wcs("
    " KEY (dev STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',"
    " FAMILY st (cpu INT64, mem INT64 DECIMAL(6), load FLOAT64) MAX VERSIONS 3,"
    " FAMILY meta (note STRING, doc JSON, raw BYTES) MAX AGE '30d');"
    "CREATE VIRTUAL TABLE r USING wcs("
    " KEY (usr STRING, ts INT64 REVERSED DECIMAL(6)) DELIMITED BY '#|',"
    " FAMILY f (v INT64, s STRING) MAX VERSIONS 2 MAX AGE '3650d'"
    " INTERSECTION);"
    "CREATE VIRTUAL TABLE o USING wcs("
    " KEY (a STRING, n INT64, t TIMESTAMP BIG ENDIAN, b BYTES) ORDERED CODE,"
    " FAMILY cf (x INT64, y FLOAT64), FAMILY g);"
    "CREATE VIRTUAL TABLE s USING wcs("
    " KEY (k STRING, n INT64 BIG ENDIAN) ORDERED CODE SALT 4,"
    " FAMILY f (v INT64, w STRING));"
    "CREATE VIRTUAL TABLE c USING wcs(KEY (k BYTES),"
    " FAMILY hits (cnt INT64) AGGREGATE SUM,"
    " FAMILY lo (lv INT64) AGGREGATE MIN, FAMILY u AGGREGATE HLL);"
    "CREATE VIRTUAL TABLE raw USING wcs(FAMILY f (v INT64),"
    " FAMILY h MAX VERSIONS 2);"
    "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'm', HISTORY);"
    "CREATE VIRTUAL TABLE sh USING wcs(TABLE 's', HISTORY);"
    "CREATE VIRTUAL TABLE ch USING wcs(TABLE 'c', HISTORY);"
    "CREATE TABLE nat(k TEXT, n INTEGER, b BLOB, r REAL);"
    "INSERT INTO nat VALUES ('phone',20200501,x'01',1.5),('a',1,x'00',NULL),"
    " ('u1',5,NULL,-0.0),('x',7,x'00ff',1e308),('b',0,x'70686f6e65',0.5),"
    " (NULL,-5,x'',NULL);"
    "INSERT INTO m(dev,id,day,cpu,mem,load) VALUES"
    " ('phone','a',20200501,1,10,0.5),('phone','b',20200502,2,20,1.5),"
    " ('watch','a',1,3,NULL,NULL),('p','4c41',99999999,4,5,2.5);"
    "INSERT INTO m(dev,id,day,note,doc,raw) VALUES"
    " ('phone','a',20200501,'hi','{\"a\":1}',x'00ff'),('tab','a0',0,'x',NULL,"
    " NULL);"
    "UPDATE m SET cpu = cpu + 1 WHERE dev = 'phone';"
    "INSERT INTO m(dev,id,day,meta) VALUES"
    " ('ph','b',2,'{\"z\":\"q\",\"w\":{\"$hex\":\"ff\"}}');"
    "INSERT INTO r(usr,ts,v,s) VALUES ('u1',0,1,'a'),('u1',5,2,'b'),"
    " ('u2',999999,3,NULL),('u',123,NULL,'c');"
    "INSERT INTO o(a,n,t,b,x,y) VALUES ('',-5,0,x'',1,0.5),"
    " ('x',0,1000,x'00',2,NULL),('x',7,1,x'00ff',3,-1.0),"
    " ('xy',-9223372036854775808,0,x'ff',4,2.0),"
    " ('y',9223372036854775807,1000,x'',NULL,3.0);"
    "INSERT INTO o(a,n,t,b,g) VALUES ('x',0,1000,x'00','{\"k\":\"v\"}');"
    "INSERT INTO s(k,n,v,w) VALUES ('a',0,1,'x'),('a',1,2,'y'),('b',2,3,NULL),"
    " ('c',100,4,'z'),('b',0,5,'w');"
    "INSERT INTO c(k,cnt,lv) VALUES (x'01',5,9),(x'02',7,3);"
    "INSERT INTO c(k,cnt,lv,_timestamp) VALUES (x'01',2,1,3600000000);"
    "INSERT INTO c(k,u) VALUES (x'01','{\"a\":\"alice\"}'),"
    " (x'01','{\"a\":\"bob\"}');"
    "INSERT INTO raw(_key,v) VALUES (x'6162',1),('k1',2),(x'00',3);"
    "INSERT INTO raw(_key,h) VALUES ('k1','{\"q\":\"v\"}');";

/* Column kinds: what a column holds, for picking likely values. */
enum {
  K_KS,  /* key field, STRING */
  K_KI,  /* key field, INT64 or TIMESTAMP */
  K_KB,  /* key field, BYTES */
  K_QI,  /* qualifier column, INT64 */
  K_QR,  /* qualifier column, FLOAT64 */
  K_QT,  /* qualifier column, STRING */
  K_QB,  /* qualifier column, BYTES */
  K_QJ,  /* qualifier column, JSON */
  K_FAM, /* family column (JSON object) */
  K_KEY, /* _key */
  K_TS,  /* _timestamp */
  K_HF,  /* history: family */
  K_HQ,  /* history: qualifier */
  K_HV,  /* history: value */
  K_HN   /* history: latest_n */
};

typedef struct Col {
  const char *z;              /* column name */
  int k;                      /* K_ kind */
  const char *const *az;      /* likely values as SQL literals, NULL-ended */
} Col;

typedef struct Tab {
  const char *z;      /* SQL name */
  const char *zBase;  /* the table whose key schema it shows */
  int bHist;          /* a HISTORY view (read-only) */
  int nKey;           /* key fields: columns 0..nKey-1 */
  int bHidden;        /* _key and _timestamp are hidden (all but raw) */
  const char *azFam[4];  /* families, NULL-ended */
  const char *azQual[4]; /* a qualifier of each family, "" if none */
  Col a[14];          /* columns, ended by z == NULL */
} Tab;

static const char *const azDev[] = {"'phone'", "'watch'", "'p'", "'ph'",
                                    "'tab'", 0};
static const char *const azId[] = {"'a'", "'b'", "'4c41'", "'a0'", 0};
static const char *const azDay[] = {"20200501", "20200502", "0", "99999999",
                                    "1", "2", 0};
static const char *const azUsr[] = {"'u1'", "'u2'", "'u'", "'u10'", 0};
static const char *const azTs[] = {"0", "5", "999999", "123", 0};
static const char *const azOa[] = {"''", "'x'", "'xy'", "'y'", 0};
static const char *const azOn[] = {"-5", "0", "7", "-9223372036854775808",
                                   "9223372036854775807", 0};
static const char *const azOt[] = {"0", "1000", "1", 0};
static const char *const azOb[] = {"x''", "x'00'", "x'00ff'", "x'ff'", 0};
static const char *const azSk[] = {"'a'", "'b'", "'c'", 0};
static const char *const azSn[] = {"0", "1", "2", "100", 0};
static const char *const azCk[] = {"x'01'", "x'02'", "x'0100'", 0};
static const char *const azRawKey[] = {"x'6162'", "'k1'", "x'00'", "'abc'",
                                       0};
static const char *const azInt[] = {"1", "5", "-1", "100",
                                    "9223372036854775807", "'12'", 0};
static const char *const azReal[] = {"1.5", "0.25", "-2.0", "1e308", 0};
static const char *const azText[] = {"'hello'", "''", "'x'", "'hi'", 0};
static const char *const azBlob[] = {"x'00'", "x'0102030405060708'",
                                     "x'00ff'", 0};
static const char *const azJson[] = {"'{\"a\":1}'", "'[1,2]'", "'\"s\"'",
                                     "'null'", "'1.50'", "'not json'",
                                     "'{\"$hex\":\"00\"}'", 0};
static const char *const azFamJson[] = {
    "'{\"a\":\"x\"}'",
    "'{\"cpu\":5}'",
    "'{\"q\":{\"$hex\":\"00ff\"}}'",
    "'{\"n\":null}'",
    "'{\"\\udcff\":1}'",
    "'{\"a\":1.5,\"b\":true,\"c\":[1],\"d\":{\"e\":2}}'",
    "'{\"$hex\":\"zz\"}'",
    "'{\"q\":{\"$hex\":\"0\"}}'",
    "'[1]'",
    "'x'",
    "'{}'",
    "'{\"mem\":12,\"load\":2.5,\"cpu\":\"7\"}'",
    "'{\"u\":\"alice\"}'",
    "'{\"cnt\":3,\"lv\":-4}'",
    "'{\"note\":\"n\",\"doc\":{\"k\":[true]},\"raw\":{\"$hex\":\"01\"}}'",
    /* every JSON escape, surrogates (a pair, a lone one, an escaped byte) */
    "'{\"t\":\"a\\\"b\\\\c\\nd\\te\\r\\u0001\\u00e9\\ud83d\\ude00"
    "\\/\\b\\f\"}'",
    "'{\"q\\u00ff\\udc80\":1,\"r\":\"\\u00ff\\udcff\"}'",
    "'{\"l\":\"\\ud800\"}'",
    "'{\"bad\":\"\\x\"}'",
    0};
static const char *const azTsVal[] = {"0", "1", "1000000", "-1",
                                      "9223372036854775806",
                                      "9223372036854775807", "3600000000", 0};
static const char *const azHFam[] = {"'st'", "'meta'", "'f'", "'hits'",
                                     "'u'", "'zz'", 0};
static const char *const azHQual[] = {"'cpu'", "'mem'", "'note'", "'v'",
                                      "'cnt'", "'a'", 0};
static const char *const azLatest[] = {"1",    "2",          "0",
                                       "-1",   "3",          "NULL",
                                       "1.0",  "2147483648", "'2'",
                                       "9223372036854775807", 0};
static const char *const azKeyM[] = {
    "wcs_key_encode('m','phone','a',20200501)", "x'7068#6f6e65'",
    "'phone#a#20200501'", "'p#4c41#99999999'", "x'70'", 0};

#define KEYCOLS(pool) {"_key", K_KEY, pool}, {"_timestamp", K_TS, azTsVal}

static const Tab aTab[] = {
    {"m", "m", 0, 3, 1, {"st", "meta", 0}, {"cpu", "note"},
     {{"dev", K_KS, azDev},
      {"id", K_KS, azId},
      {"day", K_KI, azDay},
      {"cpu", K_QI, azInt},
      {"mem", K_QI, azInt},
      {"load", K_QR, azReal},
      {"note", K_QT, azText},
      {"doc", K_QJ, azJson},
      {"raw", K_QB, azBlob},
      {"st", K_FAM, azFamJson},
      {"meta", K_FAM, azFamJson},
      KEYCOLS(azKeyM),
      {0, 0, 0}}},
    {"r", "r", 0, 2, 1, {"f", 0}, {"v"},
     {{"usr", K_KS, azUsr},
      {"ts", K_KI, azTs},
      {"v", K_QI, azInt},
      {"s", K_QT, azText},
      {"f", K_FAM, azFamJson},
      KEYCOLS(0),
      {0, 0, 0}}},
    {"o", "o", 0, 4, 1, {"cf", "g", 0}, {"x", ""},
     {{"a", K_KS, azOa},
      {"n", K_KI, azOn},
      {"t", K_KI, azOt},
      {"b", K_KB, azOb},
      {"x", K_QI, azInt},
      {"y", K_QR, azReal},
      {"cf", K_FAM, azFamJson},
      {"g", K_FAM, azFamJson},
      KEYCOLS(0),
      {0, 0, 0}}},
    {"s", "s", 0, 2, 1, {"f", 0}, {"v"},
     {{"k", K_KS, azSk},
      {"n", K_KI, azSn},
      {"v", K_QI, azInt},
      {"w", K_QT, azText},
      {"f", K_FAM, azFamJson},
      KEYCOLS(0),
      {0, 0, 0}}},
    {"c", "c", 0, 1, 1, {"hits", "lo", "u", 0}, {"cnt", "lv", ""},
     {{"k", K_KB, azCk},
      {"cnt", K_QI, azInt},
      {"lv", K_QI, azInt},
      {"hits", K_FAM, azFamJson},
      {"lo", K_FAM, azFamJson},
      {"u", K_FAM, azFamJson},
      KEYCOLS(azCk),
      {0, 0, 0}}},
    {"raw", "raw", 0, 0, 0, {"f", "h", 0}, {"v", ""},
     {{"_key", K_KEY, azRawKey},
      {"v", K_QI, azInt},
      {"f", K_FAM, azFamJson},
      {"h", K_FAM, azFamJson},
      {"_timestamp", K_TS, azTsVal},
      {0, 0, 0}}},
    {"mh", "m", 1, 3, 1, {0}, {0},
     {{"dev", K_KS, azDev},
      {"id", K_KS, azId},
      {"day", K_KI, azDay},
      {"family", K_HF, azHFam},
      {"qualifier", K_HQ, azHQual},
      {"_timestamp", K_TS, azTsVal},
      {"value", K_HV, azInt},
      {"latest_n", K_HN, azLatest},
      {"_key", K_KEY, azKeyM},
      {0, 0, 0}}},
    {"sh", "s", 1, 2, 1, {0}, {0},
     {{"k", K_KS, azSk},
      {"n", K_KI, azSn},
      {"family", K_HF, azHFam},
      {"qualifier", K_HQ, azHQual},
      {"_timestamp", K_TS, azTsVal},
      {"value", K_HV, azInt},
      {"latest_n", K_HN, azLatest},
      {"_key", K_KEY, 0},
      {0, 0, 0}}},
    {"ch", "c", 1, 1, 1, {0}, {0},
     {{"k", K_KB, azCk},
      {"family", K_HF, azHFam},
      {"qualifier", K_HQ, azHQual},
      {"_timestamp", K_TS, azTsVal},
      {"value", K_HV, azInt},
      {"latest_n", K_HN, azLatest},
      {"_key", K_KEY, azCk},
      {0, 0, 0}}},
};
#define NTAB (int)(sizeof(aTab) / sizeof(aTab[0]))
#define NWRITABLE 6 /* aTab[0..5] are tables, the rest history views */

static int nCol(const Tab *t) {
  int n = 0;
  while (t->a[n].z) n++;
  return n;
}

static int isHidden(const Tab *t, const Col *c) {
  if (t->bHist) return c->k == K_HN || c->k == K_KEY;
  return t->bHidden && (c->k == K_KEY || c->k == K_TS);
}

/* ---- reading the input ---------------------------------------------------- */

typedef struct Gen {
  const uint8_t *a; /* generator bytes */
  size_t n;         /* their count */
  size_t i;         /* next byte to read, <= n */
  int bCheck;       /* the query being built reads alike planned or scanned */
} Gen;

static unsigned byte(Gen *g) { return g->i < g->n ? g->a[g->i++] : 0; }
static unsigned pick(Gen *g, unsigned n) { return n ? byte(g) % n : 0; }
static int done(const Gen *g) { return g->i >= g->n; }

static const char *poolPick(Gen *g, const char *const *az) {
  unsigned n = 0;
  while (az[n]) n++;
  return az[pick(g, n)];
}

/* ---- literals ------------------------------------------------------------- */

/* What a literal is, as far as the _key rule and the affinity rule
** (doc/sql.md §5) care. L_NUMAFF: an operand with numeric affinity. */
enum { L_NULL, L_NUM, L_TEXT, L_BLOB, L_OTHER, L_NUMAFF };

static int litClass(const char *z) {
  if (z[0] == '\'') return L_TEXT;
  if ((z[0] == 'x' || z[0] == 'X') && z[1] == '\'') return L_BLOB;
  if (z[0] == '-' || (z[0] >= '0' && z[0] <= '9')) return L_NUM;
  if (strncmp(z, "NULL", 4) == 0) return L_NULL;
  if (strncmp(z, "wcs_key_encode", 14) == 0) return L_BLOB;
  return L_OTHER;
}

static const char *const azBigInt[] = {
    "0", "-1", "1", "9223372036854775807", "-9223372036854775808",
    "4294967296", "9007199254740993", "99999999", "100000000", "999999",
    "1000000", "20200501", "-20200501", "255", "256", "-9223372036854775807",
    0};
static const char *const azAnyReal[] = {
    "1.5", "-0.0", "0.0", "1e308", "-1e308", "9e999", "-9e999", "4.9e-324",
    "9.223372036854775807e18", "9223372036854775808.0",
    "-9223372036854775809.0", "20200501.0", "20200501.5", "0.1",
    "to_float64(x'7ff8000000000000')", "to_float64(x'fff0000000000000')", 0};
static const char *const azAnyText[] = {
    "''", "'a'", "'phone'", "'p'", "'p#'", "'#'", "'#|'", "'|'", "'a#b'",
    "'u1'", "'u1#|'", "'4c41'", "'12'", "' 12'", "'12abc'", "'1e3'",
    "'20200501'", "'-5'", "'x'", "'xy'", "'\xc3\xa9'", "'%'", "'_'", "'*'",
    "'a%'", "'{\"a\":1}'", "'9223372036854775808'", "'0x10'", "'ph%'",
    "'p*'", "'[a-z]*'", 0};
static const char *const azAnyBlob[] = {
    "x''", "x'00'", "x'ff'", "x'23'", "x'70686f6e65'", "zeroblob(3)",
    "x'0000000000000005'", "x'00ff'", "x'01'", "x'02'", "x'0100'",
    "x'ffffffffffffffff'", "x'7ff0000000000000'", "x'7068'", 0};

static void hexBytes(Gen *g, sqlite3_str *s, unsigned n) {
  unsigned k;
  for (k = 0; k < n; k++) sqlite3_str_appendf(s, "%02x", byte(g));
}

/* Append a value to s: one of the column's likely values (az) most of the
** time, else any literal. Returns its L_ class. */
static int lit(Gen *g, sqlite3_str *s, const char *const *az) {
  unsigned c = pick(g, az ? 20 : 12);
  const char *z;
  switch (c) {
  case 0:
    sqlite3_str_appendall(s, "NULL");
    return L_NULL;
  case 1:
    sqlite3_str_appendf(s, "%d", (int)(signed char)byte(g));
    return L_NUM;
  case 2:
    z = poolPick(g, azBigInt);
    break;
  case 3:
    z = poolPick(g, azAnyReal);
    sqlite3_str_appendall(s, z);
    return z[0] == 't' ? L_OTHER : L_NUM;
  case 4:
    z = poolPick(g, azAnyText);
    break;
  case 5: { /* text from the input: maybe not UTF-8, maybe with NULs */
    unsigned n = pick(g, 9);
    sqlite3_str_appendall(s, "CAST(x'");
    hexBytes(g, s, n);
    sqlite3_str_appendall(s, "' AS TEXT)");
    return L_TEXT;
  }
  case 6:
    z = poolPick(g, azAnyBlob);
    break;
  case 7: {
    unsigned n = pick(g, 9);
    sqlite3_str_appendall(s, "x'");
    hexBytes(g, s, n);
    sqlite3_str_appendall(s, "'");
    return L_BLOB;
  }
  case 8: { /* long: past the 4 KiB row key limit, or a qualifier's */
    static const char *const azLen[] = {"4095", "4096", "5000", "16385",
                                        "0", "200", 0};
    sqlite3_str_appendf(s, "printf('%%.*c', %s, '%c')", poolPick(g, azLen),
                        'a' + (int)pick(g, 3));
    return L_TEXT;
  }
  case 9: { /* an encoded key of some table */
    const Tab *t = &aTab[pick(g, NWRITABLE)];
    int i, n = t->nKey + (int)pick(g, 3) - 1;
    sqlite3_str_appendf(s, "wcs_key_encode('%s'", t->zBase);
    for (i = 0; i < n; i++) {
      sqlite3_str_appendall(s, ", ");
      if (i < t->nKey && t->a[i].az && pick(g, 4) != 0) {
        sqlite3_str_appendall(s, poolPick(g, t->a[i].az));
      } else {
        lit(g, s, NULL);
      }
    }
    sqlite3_str_appendall(s, ")");
    return L_BLOB;
  }
  case 10: {
    static const char *const azExpr[] = {
        "(SELECT n FROM nat ORDER BY n LIMIT 1)", "(SELECT k FROM nat LIMIT 1)",
        "(SELECT b FROM nat WHERE b IS NOT NULL LIMIT 1 OFFSET 2)",
        "CAST('7' AS INTEGER)", "CAST(20200501 AS TEXT)", "CAST('p' AS BLOB)",
        "(1 << 62) * 2", "abs(-9223372036854775807 - 1)", "char(0x23)",
        "json('{\"a\":1}')", "json_object('cpu', 9)", "-(-5)", 0};
    z = poolPick(g, azExpr);
    sqlite3_str_appendall(s, z);
    return strncmp(z, "CAST('7'", 8) == 0 || strncmp(z, "(SELECT n", 9) == 0
               ? L_NUMAFF
               : L_OTHER;
  }
  default:
    if (az == NULL) {
      z = poolPick(g, azBigInt);
      break;
    }
    z = poolPick(g, az);
    break;
  }
  sqlite3_str_appendall(s, z);
  return litClass(z);
}

/* ---- expressions ---------------------------------------------------------- */

/* A column of t: a key field or _key half of the time. */
static const Col *pickCol(Gen *g, const Tab *t) {
  int n = nCol(t);
  if (pick(g, 2) == 0) {
    int i;
    unsigned k = pick(g, (unsigned)t->nKey + 1);
    if ((int)k < t->nKey) return &t->a[k];
    for (i = 0; i < n; i++) {
      if (t->a[i].k == K_KEY) return &t->a[i];
    }
  }
  return &t->a[pick(g, (unsigned)n)];
}

/* Note a value compared with column c: TEXT (or anything that may be
** TEXT) against _key reads differently where SQLite checks the term, an
** operand with numeric affinity makes SQLite compare a STRING field as a
** number where the module compares text (it sees values, not affinities;
** doc/sql.md §5), and latest_n is no filter of rows; such a query gets no
** planned-vs-scan check. */
static void noteOperand(Gen *g, const Col *c, int eClass) {
  if (c->k == K_HN) g->bCheck = 0;
  if (c->k == K_KS && eClass == L_NUMAFF) g->bCheck = 0;
  if (c->k == K_KEY && eClass != L_NULL && eClass != L_NUM &&
      eClass != L_BLOB) {
    g->bCheck = 0;
  }
}

static void value(Gen *g, sqlite3_str *s, const Col *c) {
  noteOperand(g, c, lit(g, s, c->az));
}

static const char *const azCmp[] = {"=",  "==", "<",  "<=",     ">",
                                    ">=", "!=", "IS", "IS NOT", "<>"};

static void expr(Gen *g, sqlite3_str *s, const Tab *t, int depth) {
  const Col *c = pickCol(g, t);
  unsigned k = pick(g, depth < 3 ? 20 : 15);
  switch (k) {
  case 0:
  case 1:
  case 2:
  case 3:
    sqlite3_str_appendf(s, "%s %s ", c->z, azCmp[pick(g, 10)]);
    value(g, s, c);
    break;
  case 4:
    value(g, s, c);
    sqlite3_str_appendf(s, " %s %s", azCmp[pick(g, 6)], c->z);
    break;
  case 5: {
    int i, n = (int)pick(g, 6);
    sqlite3_str_appendf(s, "%s %sIN (", c->z, pick(g, 4) == 0 ? "NOT " : "");
    for (i = 0; i < n; i++) {
      if (i) sqlite3_str_appendall(s, ", ");
      value(g, s, c);
    }
    sqlite3_str_appendall(s, ")");
    break;
  }
  case 6:
    sqlite3_str_appendf(s, "%s %sBETWEEN ", c->z, pick(g, 4) == 0 ? "NOT " : "");
    value(g, s, c);
    sqlite3_str_appendall(s, " AND ");
    value(g, s, c);
    break;
  case 7:
    sqlite3_str_appendf(s, "%s IS %sNULL", c->z, pick(g, 2) ? "NOT " : "");
    break;
  case 8: { /* a LIKE or GLOB prefix */
    static const char *const azPat[] = {"%", "*", "_", "", "%a", "[a-z]*",
                                        "\\%", "#%"};
    if (c->k == K_KEY) g->bCheck = 0;
    sqlite3_str_appendf(s, "%s %s ", c->z, pick(g, 2) ? "LIKE" : "GLOB");
    sqlite3_str_appendall(s, "(");
    lit(g, s, c->az);
    sqlite3_str_appendf(s, " || '%s')", azPat[pick(g, 8)]);
    if (pick(g, 8) == 0) sqlite3_str_appendall(s, " ESCAPE '\\'");
    break;
  }
  case 9:
    sqlite3_str_appendf(s, "starts_with(%s, ", c->z);
    lit(g, s, c->az); /* bytes either way: no _key rule */
    sqlite3_str_appendall(s, ")");
    break;
  case 10: {
    static const char *const azSub[] = {
        "SELECT k FROM nat", "SELECT n FROM nat", "SELECT b FROM nat",
        "SELECT r FROM nat WHERE r < 2", "SELECT k FROM nat WHERE n > 0",
        "SELECT n FROM nat LIMIT 2"};
    const char *zSub = azSub[pick(g, 6)];
    if (c->k == K_KEY || c->k == K_HN) g->bCheck = 0;
    /* n INTEGER and r REAL have numeric affinity */
    if (c->k == K_KS && (zSub[7] == 'n' || zSub[7] == 'r')) g->bCheck = 0;
    sqlite3_str_appendf(s, "%s %s (%s)", c->z, pick(g, 2) ? "IN" : "=", zSub);
    break;
  }
  case 11: { /* a row value: reaches the module as one bound */
    const Col *c2 = pickCol(g, t);
    sqlite3_str_appendf(s, "(%s, %s) %s (", c->z, c2->z,
                        azCmp[2 + pick(g, 4)]);
    value(g, s, c);
    sqlite3_str_appendall(s, ", ");
    value(g, s, c2);
    sqlite3_str_appendall(s, ")");
    break;
  }
  case 12:
    sqlite3_str_appendf(s, "%s %s ", c->z, azCmp[pick(g, 6)]);
    value(g, s, c);
    sqlite3_str_appendf(s, " COLLATE %s", pick(g, 2) ? "NOCASE" : "RTRIM");
    break;
  case 13: {
    static const char *const azPath[] = {"'cpu'", "'$.a'", "'q'", "'$.n'",
                                         "'note'", "'v'"};
    sqlite3_str_appendf(s, "%s ->> %s %s ", c->z, azPath[pick(g, 6)],
                        azCmp[pick(g, 6)]);
    lit(g, s, NULL);
    break;
  }
  case 14:
    sqlite3_str_appendf(s, "+%s %s ", c->z, azCmp[pick(g, 6)]);
    value(g, s, c);
    break;
  case 15:
  case 16:
  case 17:
    sqlite3_str_appendall(s, "(");
    expr(g, s, t, depth + 1);
    sqlite3_str_appendall(s, pick(g, 3) ? ") AND (" : ") OR (");
    expr(g, s, t, depth + 1);
    sqlite3_str_appendall(s, ")");
    break;
  case 18:
    sqlite3_str_appendall(s, "NOT (");
    expr(g, s, t, depth + 1);
    sqlite3_str_appendall(s, ")");
    break;
  default:
    sqlite3_str_appendf(s, "CASE WHEN %s %s ", c->z, azCmp[pick(g, 6)]);
    value(g, s, c);
    sqlite3_str_appendall(s, " THEN 1 ELSE ");
    expr(g, s, t, depth + 1);
    sqlite3_str_appendall(s, " END");
    break;
  }
}

/* A WHERE clause's terms: one to three, ANDed, as queries usually are
** (several key terms at once: ranges, residual checks, skip scans). */
static void whereTerms(Gen *g, sqlite3_str *s, const Tab *t) {
  int i, n = 1 + (int)pick(g, 3);
  for (i = 0; i < n; i++) {
    if (i) sqlite3_str_appendall(s, " AND ");
    expr(g, s, t, 0);
  }
}

/* ---- running statements --------------------------------------------------- */

typedef struct Fz {
  sqlite3 *db; /* this input's connection */
  int nTick;   /* progress callbacks so far */
} Fz;

typedef struct Rows {
  char **az;  /* rows as text, sqlite3_malloc'd */
  int n;      /* rows in az */
  int bAll;   /* every row was read, no error */
} Rows;

static int progress(void *p) {
  Fz *f = (Fz *)p;
  return ++f->nTick > MAX_TICKS;
}

static void rowsFree(Rows *r) {
  int i;
  for (i = 0; i < r->n; i++) sqlite3_free(r->az[i]);
  sqlite3_free(r->az);
  memset(r, 0, sizeof *r);
}

static char *rowText(sqlite3_stmt *p) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  int i, j;
  for (i = 0; i < sqlite3_column_count(p); i++) {
    switch (sqlite3_column_type(p, i)) {
    case SQLITE_INTEGER:
      sqlite3_str_appendf(s, "|i%lld", sqlite3_column_int64(p, i));
      break;
    case SQLITE_FLOAT:
      sqlite3_str_appendf(s, "|r%!.17g", sqlite3_column_double(p, i));
      break;
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      const unsigned char *a = sqlite3_column_type(p, i) == SQLITE_TEXT
                                   ? sqlite3_column_text(p, i)
                                   : sqlite3_column_blob(p, i);
      int n = sqlite3_column_bytes(p, i);
      sqlite3_str_appendf(s, "|%c", sqlite3_column_type(p, i) == SQLITE_TEXT
                                        ? 't'
                                        : 'b');
      for (j = 0; j < n && a; j++) sqlite3_str_appendf(s, "%02x", a[j]);
      break;
    }
    default:
      sqlite3_str_appendall(s, "|n");
      break;
    }
  }
  return sqlite3_str_finish(s);
}

/* Run one statement, at most MAX_ROWS rows; keep the rows in pRows if
** given. */
static void runStmt(Fz *f, sqlite3_stmt *p, Rows *pRows) {
  int rc, n = 0;
  while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
    if (pRows) {
      char *z = rowText(p);
      char **az = sqlite3_realloc64(pRows->az, sizeof(char *) * (size_t)(n + 1));
      if (z == NULL || az == NULL) {
        sqlite3_free(z);
        if (az) pRows->az = az;
        return;
      }
      pRows->az = az;
      pRows->az[pRows->n++] = z;
    }
    if (++n >= MAX_ROWS) return;
  }
  if (pRows && rc == SQLITE_DONE) pRows->bAll = 1;
  (void)f;
}

static int runSql(Fz *f, const char *zSql, Rows *pRows) {
  sqlite3_stmt *p = NULL;
  int rc = sqlite3_prepare_v2(f->db, zSql, -1, &p, NULL);
  if (rc == SQLITE_OK && p) runStmt(f, p, pRows);
  sqlite3_finalize(p);
  return rc;
}

static int cmpStr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run the query planned and as a plain scan; the rows must agree. */
static void checkQuery(Fz *f, const char *zPlanned, const char *zScan,
                       int bOrdered) {
  Rows a = {0}, b = {0};
  int i;
  runSql(f, zPlanned, &a);
  runSql(f, zScan, &b);
  if (a.bAll && b.bAll) {
    int bSame = a.n == b.n;
    if (!bOrdered) {
      if (a.n) qsort(a.az, (size_t)a.n, sizeof(char *), cmpStr);
      if (b.n) qsort(b.az, (size_t)b.n, sizeof(char *), cmpStr);
    }
    for (i = 0; bSame && i < a.n; i++) bSame = strcmp(a.az[i], b.az[i]) == 0;
    if (!bSame) {
      fprintf(stderr, "fuzz_sql: planned and scanned rows differ\n"
                      "  planned: %s\n  scanned: %s\n", zPlanned, zScan);
      for (i = 0; i < a.n || i < b.n; i++) {
        fprintf(stderr, "  %-40s %s\n", i < a.n ? a.az[i] : "-",
                i < b.n ? b.az[i] : "-");
      }
      abort();
    }
  }
  rowsFree(&a);
  rowsFree(&b);
}

/* ---- statements ----------------------------------------------------------- */

/* Select list of a query on t; *pbAgg set when it aggregates. */
static void selectList(Gen *g, sqlite3_str *s, const Tab *t, int *pbAgg) {
  int n = nCol(t), i, m;
  *pbAgg = 0;
  switch (pick(g, 8)) {
  case 0:
    sqlite3_str_appendall(s, "count(*)");
    *pbAgg = 1;
    return;
  case 1: {
    int bFirst = 1;
    for (i = 0; i < n; i++) {
      if (isHidden(t, &t->a[i])) continue;
      sqlite3_str_appendf(s, "%s%s", bFirst ? "" : ", ", t->a[i].z);
      bFirst = 0;
    }
    return;
  }
  case 2: {
    const Col *c = &t->a[pick(g, (unsigned)n)];
    sqlite3_str_appendf(s, "%s(%s), count(*)", pick(g, 2) ? "min" : "max",
                        c->k == K_HN ? "_timestamp" : c->z);
    *pbAgg = 1;
    return;
  }
  default:
    break;
  }
  m = 1 + (int)pick(g, 3);
  for (i = 0; i < m; i++) {
    const Col *c = &t->a[pick(g, (unsigned)n)];
    if (i) sqlite3_str_appendall(s, ", ");
    if (c->k == K_HN) c = &t->a[0]; /* latest_n reads back as given */
    switch (pick(g, 6)) {
    case 0:
      sqlite3_str_appendf(s, "typeof(%s)", c->z);
      break;
    case 1:
      sqlite3_str_appendf(s, "hex(%s)", c->z);
      break;
    case 2:
      if (c->k == K_FAM) {
        sqlite3_str_appendf(s, "map_keys(%s)", c->z);
      } else {
        sqlite3_str_appendf(s, "wcs_key_decode('%s', _key)", t->zBase);
      }
      break;
    default:
      sqlite3_str_appendall(s, c->z);
      break;
    }
  }
}

static const char *const azLimit[] = {
    "0", "1", "2", "3", "-1", "-5", "9223372036854775807",
    "-9223372036854775808", "(SELECT 2)", "'3'", "1.5", "NULL", "5", "1"};

/* SELECT on one table; with a WHERE clause that reads alike planned or
** scanned, also checked against the plain scan. */
static void genSelect(Fz *f, Gen *g, const Tab *t) {
  sqlite3_str *sel = sqlite3_str_new(f->db), *wh = sqlite3_str_new(f->db);
  sqlite3_str *tail = sqlite3_str_new(f->db);
  char *zSel, *zWhere, *zTail, *zFrom;
  int bAgg, bOrdered = 0, bLimit = 0, bDistinct = pick(g, 8) == 0;
  int n = nCol(t), i;

  g->bCheck = 1;
  selectList(g, sel, t, &bAgg);
  if (pick(g, 6) != 0) {
    sqlite3_str_appendall(wh, " WHERE ");
    whereTerms(g, wh, t);
  }
  switch (pick(g, 6)) {
  case 0: { /* ORDER BY _key */
    int bDesc = (int)pick(g, 2);
    sqlite3_str_appendf(tail, " ORDER BY _key%s", bDesc ? " DESC" : "");
    bOrdered = !bAgg && !bDistinct;
    break;
  }
  case 1:
  case 2: { /* key fields in order, each ASC or DESC */
    int m = 1 + (int)pick(g, (unsigned)(t->nKey ? t->nKey : 1));
    sqlite3_str_appendall(tail, " ORDER BY ");
    for (i = 0; i < m; i++) {
      const Col *c = i < t->nKey ? &t->a[i] : pickCol(g, t);
      sqlite3_str_appendf(tail, "%s%s%s", i ? ", " : "", c->z,
                          pick(g, 2) ? " DESC" : "");
    }
    /* every key field: a total order, as _key is */
    if (m == t->nKey && !t->bHist) bOrdered = !bAgg && !bDistinct;
    break;
  }
  case 3:
    sqlite3_str_appendf(tail, " ORDER BY %s%s", t->a[pick(g, (unsigned)n)].z,
                        pick(g, 2) ? " DESC" : " ASC");
    break;
  default:
    break;
  }
  if (pick(g, 3) == 0) {
    bLimit = 1;
    sqlite3_str_appendf(tail, " LIMIT %s", azLimit[pick(g, 14)]);
    if (pick(g, 2)) sqlite3_str_appendf(tail, " OFFSET %s", azLimit[pick(g, 14)]);
  }
  if (bLimit && !bOrdered) g->bCheck = 0;

  zSel = sqlite3_str_finish(sel);
  zWhere = sqlite3_str_finish(wh);
  zTail = sqlite3_str_finish(tail);
  if (t->bHist && pick(g, 4) == 0) {
    zFrom = sqlite3_mprintf("%s(%s)", t->z, poolPick(g, azLatest));
    g->bCheck = 0;
  } else {
    zFrom = sqlite3_mprintf("%s", t->z);
  }
  if (zSel && zWhere && zTail && zFrom) {
    char *zPlanned = sqlite3_mprintf("SELECT %s%s FROM %s%s%s",
                                     bDistinct ? "DISTINCT " : "", zSel, zFrom,
                                     zWhere, zTail);
    if (zPlanned && g->bCheck) {
      /* every column but latest_n, from a scan SQLite cannot push into */
      sqlite3_str *all = sqlite3_str_new(f->db);
      char *zAll, *zScan;
      int bFirst = 1;
      for (i = 0; i < n; i++) {
        if (t->a[i].k == K_HN) continue;
        sqlite3_str_appendf(all, "%s%s", bFirst ? "" : ", ", t->a[i].z);
        bFirst = 0;
      }
      zAll = sqlite3_str_finish(all);
      zScan = sqlite3_mprintf(
          "SELECT %s%s FROM (SELECT %s FROM %s LIMIT -1 OFFSET 0) AS %s%s%s",
          bDistinct ? "DISTINCT " : "", zSel, zAll, t->z, t->z, zWhere, zTail);
      if (zAll && zScan) checkQuery(f, zPlanned, zScan, bOrdered);
      sqlite3_free(zAll);
      sqlite3_free(zScan);
    } else if (zPlanned) {
      runSql(f, zPlanned, NULL);
    }
    sqlite3_free(zPlanned);
  }
  sqlite3_free(zSel);
  sqlite3_free(zWhere);
  sqlite3_free(zTail);
  sqlite3_free(zFrom);
}

static const char *const azConflict[] = {"",          "OR REPLACE ",
                                         "OR IGNORE ", "OR FAIL ",
                                         "OR ROLLBACK ", "OR ABORT "};

static void genInsert(Fz *f, Gen *g, const Tab *t) {
  sqlite3_str *s = sqlite3_str_new(f->db);
  int aCol[14], nUse = 0, n = nCol(t), i, r, nRow;
  char *z;
  unsigned how = pick(g, 4);
  /* columns: the key fields (or _key, or both), some others */
  for (i = 0; i < n; i++) {
    const Col *c = &t->a[i];
    int bUse;
    if (i < t->nKey) {
      bUse = how != 1 || pick(g, 6) == 0;
    } else if (c->k == K_KEY) {
      bUse = how == 1 || how == 2 || t->nKey == 0;
    } else if (c->k == K_TS) {
      bUse = pick(g, 5) == 0;
    } else {
      bUse = pick(g, 3) == 0;
    }
    if (bUse) aCol[nUse++] = i;
  }
  if (pick(g, 10) == 0) {
    sqlite3_str_appendf(s, "REPLACE INTO %s(", t->z);
  } else {
    sqlite3_str_appendf(s, "INSERT %sINTO %s(", azConflict[pick(g, 6)], t->z);
  }
  for (i = 0; i < nUse; i++) {
    sqlite3_str_appendf(s, "%s%s", i ? ", " : "", t->a[aCol[i]].z);
  }
  sqlite3_str_appendall(s, ")");
  if (nUse > 0 && pick(g, 6) == 0) { /* INSERT ... SELECT */
    sqlite3_str_appendall(s, " SELECT ");
    for (i = 0; i < nUse; i++) {
      const Col *c = &t->a[aCol[i]];
      if (i) sqlite3_str_appendall(s, ", ");
      if (pick(g, 2) == 0) {
        static const char *const azNat[] = {"k", "n", "b", "r", "n + 1",
                                            "k || '#'"};
        sqlite3_str_appendall(s, azNat[pick(g, 6)]);
      } else {
        lit(g, s, c->az);
      }
    }
    sqlite3_str_appendall(s, " FROM nat");
    if (pick(g, 2)) {
      sqlite3_str_appendall(s, " WHERE ");
      lit(g, s, NULL);
      sqlite3_str_appendall(s, " IS NOT k");
    }
  } else if (nUse > 0 && pick(g, 8) == 0) { /* from the table itself */
    sqlite3_str_appendall(s, " SELECT ");
    for (i = 0; i < nUse; i++) {
      const Col *c = &t->a[aCol[i]];
      sqlite3_str_appendf(s, "%s%s", i ? ", " : "", c->z);
      if (c->k == K_KI && pick(g, 2)) sqlite3_str_appendall(s, " + 1");
    }
    sqlite3_str_appendf(s, " FROM %s", t->z);
    if (pick(g, 2)) {
      sqlite3_str_appendall(s, " WHERE ");
      expr(g, s, t, 1);
    }
  } else {
    nRow = 1 + (int)pick(g, 3);
    sqlite3_str_appendall(s, " VALUES ");
    for (r = 0; r < nRow; r++) {
      sqlite3_str_appendf(s, "%s(", r ? ", " : "");
      for (i = 0; i < nUse; i++) {
        if (i) sqlite3_str_appendall(s, ", ");
        lit(g, s, t->a[aCol[i]].az);
      }
      sqlite3_str_appendall(s, ")");
    }
  }
  switch (pick(g, 10)) {
  case 0:
    sqlite3_str_appendall(s, " RETURNING *");
    break;
  case 1:
    sqlite3_str_appendall(s, " ON CONFLICT DO NOTHING");
    break;
  default:
    break;
  }
  z = sqlite3_str_finish(s);
  if (z) runSql(f, z, NULL);
  sqlite3_free(z);
}

static void genUpdate(Fz *f, Gen *g, const Tab *t) {
  sqlite3_str *s = sqlite3_str_new(f->db);
  int n = nCol(t), i, m = 1 + (int)pick(g, 3);
  char *z;
  sqlite3_str_appendf(s, "UPDATE %s%s SET ", azConflict[pick(g, 6)], t->z);
  for (i = 0; i < m; i++) {
    const Col *c = &t->a[pick(g, (unsigned)n)];
    sqlite3_str_appendf(s, "%s%s = ", i ? ", " : "", c->z);
    switch (pick(g, 8)) {
    case 0:
      sqlite3_str_appendf(s, "%s + 1", c->z);
      break;
    case 1:
      sqlite3_str_appendall(s, "NULL");
      break;
    case 2:
      if (c->k == K_FAM) {
        sqlite3_str_appendf(s, "json_set(coalesce(%s, '{}'), '$.q', %d)", c->z,
                            (int)pick(g, 10));
      } else {
        sqlite3_str_appendall(s, c->z);
      }
      break;
    case 3:
      sqlite3_str_appendf(s, "(SELECT n FROM nat WHERE nat.k = %s.%s)", t->z,
                          t->a[0].z);
      break;
    default:
      lit(g, s, c->az);
      break;
    }
  }
  if (pick(g, 8) == 0) {
    sqlite3_str_appendf(s, " FROM nat WHERE nat.k = %s.%s", t->z, t->a[0].z);
    if (pick(g, 2)) {
      sqlite3_str_appendall(s, " AND ");
      expr(g, s, t, 1);
    }
  } else if (pick(g, 5) != 0) {
    sqlite3_str_appendall(s, " WHERE ");
    whereTerms(g, s, t);
  }
  z = sqlite3_str_finish(s);
  if (z) runSql(f, z, NULL);
  sqlite3_free(z);
}

static void genDelete(Fz *f, Gen *g, const Tab *t) {
  sqlite3_str *s = sqlite3_str_new(f->db);
  char *z;
  sqlite3_str_appendf(s, "DELETE FROM %s", t->z);
  if (pick(g, 6) != 0) {
    sqlite3_str_appendall(s, " WHERE ");
    whereTerms(g, s, t);
  }
  z = sqlite3_str_finish(s);
  if (z) runSql(f, z, NULL);
  sqlite3_free(z);
}

static void genTxn(Fz *f, Gen *g) {
  static const char *const az[] = {
      "BEGIN", "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "END",
      "SAVEPOINT s%d", "RELEASE s%d", "ROLLBACK TO s%d", "SAVEPOINT s%d",
      "ROLLBACK TO s%d", "PRAGMA case_sensitive_like = %d",
      "ATTACH ':memory:' AS aux%d", "PRAGMA query_only = %d"};
  char *z = sqlite3_mprintf(az[pick(g, 13)], (int)pick(g, 2));
  if (z) runSql(f, z, NULL);
  sqlite3_free(z);
}

/* The SQL functions, on literals and on the tables' columns. */
static void genFunc(Fz *f, Gen *g) {
  sqlite3_str *s = sqlite3_str_new(f->db);
  const Tab *t = &aTab[pick(g, NTAB)];
  static const char *const azOdd[] = {"nope", "nat", "main.m", "temp.m",
                                      "mh", "", "main.nope", "m.m"};
  const char *zT = pick(g, 6) ? t->zBase : azOdd[pick(g, 8)];
  char *z;
  int i;
  switch (pick(g, 14)) {
  case 0:
  case 1: {
    int nArg = t->nKey + (int)pick(g, 3) - 1;
    sqlite3_str_appendf(s, "SELECT hex(wcs_key_encode('%s'", zT);
    for (i = 0; i < nArg; i++) {
      sqlite3_str_appendall(s, ", ");
      lit(g, s, i < t->nKey ? t->a[i].az : NULL);
    }
    sqlite3_str_appendall(s, "))");
    break;
  }
  case 2:
    sqlite3_str_appendf(s, "SELECT wcs_key_decode('%s', ", zT);
    lit(g, s, NULL);
    sqlite3_str_appendall(s, ")");
    break;
  case 3:
    sqlite3_str_appendf(s, "SELECT wcs_key_decode('%s', _key), _key FROM %s",
                        zT, t->z);
    break;
  case 4:
    sqlite3_str_appendf(s, "SELECT %s(", pick(g, 2) ? "to_int64" : "to_float64");
    lit(g, s, azAnyBlob);
    sqlite3_str_appendall(s, ")");
    break;
  case 5: { /* a read-modify-write increment */
    int nFam = 0;
    while (t->azFam[nFam]) nFam++;
    sqlite3_str_appendf(s, "SELECT wcs_increment('%s', ", zT);
    if (pick(g, 2) && t->nKey > 0) {
      sqlite3_str_appendf(s, "wcs_key_encode('%s'", t->zBase);
      for (i = 0; i < t->nKey; i++) {
        sqlite3_str_appendall(s, ", ");
        lit(g, s, t->a[i].az);
      }
      sqlite3_str_appendall(s, ")");
    } else {
      lit(g, s, NULL);
    }
    if (nFam && pick(g, 5)) {
      unsigned k = pick(g, (unsigned)nFam);
      sqlite3_str_appendf(s, ", '%s', '%s', ", t->azFam[k],
                          t->azQual[k] && pick(g, 3) ? t->azQual[k] : "zz");
    } else {
      sqlite3_str_appendall(s, ", 'st', 'cpu', ");
    }
    lit(g, s, azBigInt);
    sqlite3_str_appendall(s, ")");
    break;
  }
  case 6:
    sqlite3_str_appendf(s, "SELECT wcs_delete_prefix('%s', ", zT);
    lit(g, s, t->a[0].az);
    sqlite3_str_appendall(s, ")");
    break;
  case 7:
    if (pick(g, 2)) {
      sqlite3_str_appendall(s, "SELECT wcs_compact()");
    } else {
      sqlite3_str_appendf(s, "SELECT wcs_compact('%s')", zT);
    }
    break;
  case 8:
    if (pick(g, 2)) {
      sqlite3_str_appendall(s, "SELECT length(wcs_stats())");
    } else {
      sqlite3_str_appendf(s, "SELECT wcs_stats('%s')", zT);
    }
    break;
  case 9:
    sqlite3_str_appendall(s, "SELECT map_keys(");
    if (pick(g, 2)) {
      lit(g, s, azFamJson);
    } else {
      sqlite3_str_appendall(s, "(SELECT meta FROM m WHERE meta IS NOT NULL)");
    }
    sqlite3_str_appendall(s, ")");
    break;
  case 10:
    sqlite3_str_appendall(s, "SELECT wcs_hll_count(");
    if (pick(g, 2)) {
      lit(g, s, NULL);
    } else {
      sqlite3_str_appendall(s, "value) FROM ch WHERE family = 'u'");
      break;
    }
    sqlite3_str_appendall(s, ")");
    break;
  case 11: { /* change a family, or try what cannot change */
    static const char *const azClause[] = {
        "FAMILY fz",
        "FAMILY fz (q INT64) MAX VERSIONS 2",
        "KEY (a STRING)",
        "FAMILY",
        "FAMILY st AGGREGATE SUM",
        "FAMILY fz, STORE ''x''",
        "FAMILY fz MAX AGE ''1d'' INTERSECTION"};
    int nFam = 0;
    while (t->azFam[nFam])
      nFam++;
    if (nFam && pick(g, 2)) {
      sqlite3_str_appendf(
          s, "SELECT wcs_alter('%s', 'FAMILY %s MAX VERSIONS %d')", zT,
          t->azFam[pick(g, (unsigned)nFam)], (int)pick(g, 4));
    } else {
      sqlite3_str_appendf(s, "SELECT wcs_alter('%s', '%s')", zT,
                          azClause[pick(g, 7)]);
    }
    break;
  }
  case 12:
    sqlite3_str_appendf(s, "SELECT wcs_drop_family('%s', '%s')", zT,
                        pick(g, 8) ? "fz" : "meta");
    break;
  default:
    sqlite3_str_appendall(s, "SELECT starts_with(");
    lit(g, s, NULL);
    sqlite3_str_appendall(s, ", ");
    lit(g, s, NULL);
    sqlite3_str_appendall(s, ")");
    break;
  }
  z = sqlite3_str_finish(s);
  if (z) runSql(f, z, NULL);
  sqlite3_free(z);
}

/* Joins, subqueries and compounds over wcs and native tables. */
static void genJoin(Fz *f, Gen *g) {
  static const char *const az[] = {
      "SELECT m.dev, m.cpu, nat.n FROM nat JOIN m ON m.dev = nat.k",
      "SELECT * FROM nat LEFT JOIN m ON m.dev = nat.k AND m.day = nat.n",
      "SELECT m._key, o.a FROM m JOIN o ON o.a = m.id",
      "SELECT count(*) FROM nat, s WHERE s.k = nat.k AND s.n = nat.n",
      "SELECT nat.k, raw.v FROM nat JOIN raw ON raw._key = nat.b",
      "SELECT * FROM m WHERE id IN (SELECT k FROM nat)",
      "SELECT dev, (SELECT count(*) FROM s WHERE s.k = m.id) FROM m",
      "SELECT * FROM r WHERE EXISTS (SELECT 1 FROM nat WHERE nat.k = r.usr)",
      "SELECT dev FROM m UNION ALL SELECT k FROM s UNION SELECT usr FROM r",
      ("WITH x AS (SELECT dev, day FROM m WHERE day > 0) SELECT * FROM x, r "
       "WHERE r.usr = x.dev"),
      "SELECT * FROM mh JOIN m USING (dev, id, day)",
      "SELECT s.k, sh.value FROM s JOIN sh ON sh.k = s.k AND sh.n = s.n",
      "SELECT * FROM nat LEFT JOIN c ON c.k = nat.b WHERE c.cnt IS NULL",
      "SELECT a.dev, b.dev FROM m a JOIN m b ON b.dev > a.dev AND b.id = a.id",
      "SELECT * FROM o WHERE (a, n) IN (SELECT k, n FROM nat)",
      "SELECT * FROM s WHERE n IN (SELECT n FROM nat) ORDER BY k DESC, n",
  };
  char *z;
  const Tab *t = &aTab[pick(g, NTAB)];
  sqlite3_str *s = sqlite3_str_new(f->db);
  sqlite3_str_appendall(s, az[pick(g, 16)]);
  if (pick(g, 3) == 0) {
    sqlite3_str_appendf(s, " %s ", pick(g, 2) ? "UNION ALL" : "EXCEPT");
    sqlite3_str_appendf(s, "SELECT * FROM %s WHERE ", t->z);
    expr(g, s, t, 1);
    sqlite3_str_appendall(s, "");
  }
  z = sqlite3_str_finish(s);
  if (z) runSql(f, z, NULL);
  sqlite3_free(z);
}

static void genDdl(Fz *f, Gen *g) {
  static const char *const az[] = {
      "CREATE VIRTUAL TABLE m2 USING wcs(TABLE 'm')",
      "CREATE VIRTUAL TABLE rh USING wcs(TABLE 'r', HISTORY)",
      "CREATE VIRTUAL TABLE rawh USING wcs(TABLE 'raw', HISTORY)",
      "CREATE VIRTUAL TABLE n1 USING wcs(KEY (k INT64), FAMILY f (v INT64))",
      ("CREATE VIRTUAL TABLE temp.tt USING wcs(KEY (k STRING, j BYTES) "
       "DELIMITED BY X'00', FAMILY f MAX VERSIONS 1)"),
      "CREATE VIRTUAL TABLE m USING wcs(TABLE 'm')",
      "DROP TABLE m2",
      "DROP TABLE mh",
      "DROP TABLE r",
      "DROP TABLE IF EXISTS tt",
      "ALTER TABLE m2 RENAME TO m3",
      "SELECT * FROM m2 WHERE dev = 'phone'",
      "INSERT INTO m2(dev, id, day, cpu) VALUES ('phone', 'z', 3, 9)",
      "SELECT count(*) FROM rh",
      "INSERT INTO tt(k, j, f) VALUES ('a', x'0001', '{\"x\":\"y\"}')",
      "SELECT * FROM tt WHERE j > x'00'",
  };
  runSql(f, az[pick(g, 16)], NULL);
}

/* The single integer zSql gives, or 0 if it fails or gives no integer. */
static int scalar(Fz *f, const char *zSql, sqlite3_int64 *piVal) {
  sqlite3_stmt *p = NULL;
  int bOk = 0;
  if (sqlite3_prepare_v2(f->db, zSql, -1, &p, NULL) == SQLITE_OK &&
      sqlite3_step(p) == SQLITE_ROW &&
      sqlite3_column_type(p, 0) == SQLITE_INTEGER) {
    *piVal = sqlite3_column_int64(p, 0);
    bOk = sqlite3_step(p) == SQLITE_DONE;
  }
  sqlite3_finalize(p);
  return bOk;
}

/* A table and its history view tell the same story: the rows with a cell
** in a column are the rows whose history has a live version of it, and
** those with one version when the view keeps the latest. */
static void checkHistory(Fz *f, Gen *g) {
  static const char *const az[][3] = {
      {"SELECT count(*) FROM m WHERE cpu IS NOT NULL",
       "SELECT count(DISTINCT _key) FROM mh WHERE family = 'st' AND "
       "qualifier = 'cpu'",
       "SELECT count(*) FROM mh(1) WHERE family = 'st' AND qualifier = 'cpu'"},
      {"SELECT count(*) FROM m WHERE note IS NOT NULL",
       "SELECT count(DISTINCT _key) FROM mh WHERE family = 'meta' AND "
       "qualifier = 'note'",
       "SELECT count(*) FROM mh WHERE latest_n = 1 AND family = 'meta' AND "
       "qualifier = 'note'"},
      {"SELECT count(*) FROM s WHERE v IS NOT NULL",
       "SELECT count(DISTINCT _key) FROM sh WHERE family = 'f' AND "
       "qualifier = 'v'",
       "SELECT count(*) FROM sh(1) WHERE family = 'f' AND qualifier = 'v'"},
      {"SELECT count(*) FROM c WHERE cnt IS NOT NULL",
       "SELECT count(DISTINCT _key) FROM ch WHERE family = 'hits' AND "
       "qualifier = 'cnt'",
       "SELECT count(*) FROM ch(1) WHERE family = 'hits' AND "
       "qualifier = 'cnt'"},
  };
  const char *const *q = az[pick(g, 4)];
  sqlite3_int64 a, b, c;
  if (scalar(f, q[0], &a) && scalar(f, q[1], &b) && scalar(f, q[2], &c) &&
      (a != b || a != c)) {
    fprintf(stderr, "fuzz_sql: table and history differ: %lld, %lld, %lld\n"
                    "  %s\n  %s\n  %s\n", a, b, c, q[0], q[1], q[2]);
    abort();
  }
}

static void genStmt(Fz *f, Gen *g) {
  unsigned k = pick(g, 21);
  if (k == 20) {
    checkHistory(f, g);
  } else if (k < 6) {
    genSelect(f, g, &aTab[pick(g, NTAB)]);
  } else if (k < 9) {
    genInsert(f, g, &aTab[pick(g, NWRITABLE)]);
  } else if (k < 11) {
    genUpdate(f, g, &aTab[pick(g, NWRITABLE + 1)]);
  } else if (k < 12) {
    genDelete(f, g, &aTab[pick(g, NWRITABLE + 1)]);
  } else if (k < 14) {
    genTxn(f, g);
  } else if (k < 16) {
    genFunc(f, g);
  } else if (k < 17) {
    genJoin(f, g);
  } else if (k < 18) {
    genDdl(f, g);
  } else { /* only the plan */
    const Tab *t = &aTab[pick(g, NTAB)];
    sqlite3_str *s = sqlite3_str_new(f->db);
    char *z;
    sqlite3_str_appendf(s, "EXPLAIN QUERY PLAN SELECT * FROM %s WHERE ", t->z);
    whereTerms(g, s, t);
    if (pick(g, 2)) sqlite3_str_appendf(s, " ORDER BY %s DESC", t->a[0].z);
    if (pick(g, 2)) sqlite3_str_appendf(s, " LIMIT %s", azLimit[pick(g, 14)]);
    z = sqlite3_str_finish(s);
    if (z) runSql(f, z, NULL);
    sqlite3_free(z);
  }
}

/* ---- raw SQL -------------------------------------------------------------- */

/* Statements that could reach the file system are not run. */
static int isSafe(sqlite3_stmt *p) {
  const char *z = sqlite3_sql(p);
  return z && strcasestr(z, "store") == NULL &&
         strcasestr(z, "vacuum") == NULL && strcasestr(z, "backup") == NULL;
}

static void runRaw(Fz *f, const char *zSql) {
  int n = 0;
  while (zSql && *zSql && n++ < MAX_RAW_STMT) {
    sqlite3_stmt *p = NULL;
    const char *zTail = NULL;
    int rc = sqlite3_prepare_v2(f->db, zSql, -1, &p, &zTail);
    if (rc != SQLITE_OK) {
      zSql = strchr(zSql, ';'); /* go on after the next ';' */
      if (zSql) zSql++;
      continue;
    }
    if (p && isSafe(p)) runStmt(f, p, NULL);
    sqlite3_finalize(p);
    if (zTail == NULL || zTail == zSql) break;
    zSql = zTail;
  }
}

static int authorize(void *pArg, int op, const char *z1, const char *z2,
                     const char *zDb, const char *zTrigger) {
  static const char *const azPragma[] = {
      "case_sensitive_like", "reverse_unordered_selects", "recursive_triggers",
      "table_info", "table_xinfo", "foreign_keys", "query_only",
      "defer_foreign_keys", "index_list", "function_list", "database_list", 0};
  int i;
  (void)pArg;
  (void)zDb;
  (void)zTrigger;
  if (op == SQLITE_ATTACH) {
    return z1 && strcmp(z1, ":memory:") == 0 ? SQLITE_OK : SQLITE_DENY;
  }
  if (op == SQLITE_FUNCTION && z2 && sqlite3_stricmp(z2, "wcs_backup") == 0) {
    return SQLITE_DENY; /* it writes a directory */
  }
  if (op == SQLITE_PRAGMA) {
    for (i = 0; z1 && azPragma[i]; i++) {
      if (sqlite3_stricmp(z1, azPragma[i]) == 0) return SQLITE_OK;
    }
    return SQLITE_DENY;
  }
  return SQLITE_OK;
}

/* ---- entry point ---------------------------------------------------------- */

static sqlite3 *openDb(void) {
  sqlite3 *db = NULL;
  char *zErr = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK || wcs_register(db) != SQLITE_OK) {
    fprintf(stderr, "fuzz_sql: cannot open the database\n");
    abort();
  }
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
  if (sqlite3_exec(db, zSetup, NULL, NULL, &zErr) != SQLITE_OK) {
    fprintf(stderr, "fuzz_sql: set-up failed: %s\n", zErr ? zErr : "?");
    abort();
  }
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 200000);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 20000);
  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 50);
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 8);
  sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 25000);
  sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 16);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 2);
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100);
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 4);
  sqlite3_set_authorizer(db, authorize, NULL);
  return db;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Fz f;
  Gen g;
  const uint8_t *pNul = memchr(data, 0, size);
  int n = 0;
  memset(&f, 0, sizeof f);
  memset(&g, 0, sizeof g);
  f.db = openDb();
  sqlite3_progress_handler(f.db, PROGRESS_OPS, progress, &f);
  g.a = data;
  g.n = pNul ? (size_t)(pNul - data) : size;
  while (!done(&g) && n++ < MAX_GEN_STMT) genStmt(&f, &g);
  if (pNul) {
    size_t nRaw = size - g.n - 1;
    char *z = malloc(nRaw + 1);
    if (z) {
      if (nRaw > MAX_RAW_SQL) nRaw = MAX_RAW_SQL;
      memcpy(z, pNul + 1, nRaw);
      z[nRaw] = 0;
      runRaw(&f, z);
      free(z);
    }
  }
  if (sqlite3_close(f.db) != SQLITE_OK) {
    fprintf(stderr, "fuzz_sql: close failed: %s\n", sqlite3_errmsg(f.db));
    abort();
  }
  return 0;
}
