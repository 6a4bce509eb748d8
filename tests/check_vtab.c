/*
** check_vtab.c — Check suite "vtab": the SQLite module through SQL, linked
** statically (wcs_register): tables and columns, the JSON conventions of
** family columns, writes and upserts, transactions and savepoints across
** tables, errors, history views, SQL functions, and the safety settings
** (SQLITE_VTAB_DIRECTONLY under SQLITE_DBCONFIG_DEFENSIVE), and a bulk load
** (the prebuilt commit) against the same load into a native table.
**
** Plans (EXPLAIN QUERY PLAN) are in check_vtab_plan.c.
*/
#include <check.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sqlcheck.h"
#include "sqlutil.h"
#include "testutil.h"
#include "wcs.h"

Suite *vtab_suite(void);

/* ---- helpers --------------------------------------------------------- */

static sqlite3 *openDb(const char *zFile) {
  sqlite3 *db = NULL;
  ck_assert_int_eq(sqlite3_open(zFile ? zFile : ":memory:", &db), SQLITE_OK);
  ck_assert_int_eq(wcs_register(db), SQLITE_OK);
  return db;
}

/* zFile opened read-only (SQLITE_OPEN_READONLY), the module registered. */
static sqlite3 *openReadOnly(const char *zFile) {
  sqlite3 *db = NULL;
  ck_assert_int_eq(sqlite3_open_v2(zFile, &db, SQLITE_OPEN_READONLY, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(wcs_register(db), SQLITE_OK);
  return db;
}

/* A database file in a directory of its own, for the tests that need one
** (the store beside it, other connections, other processes). */
typedef struct TmpDb {
  const char *zDir;
  char *zDb; /* zDir/app.db */
} TmpDb;

static sqlite3 *tmpDbOpen(TmpDb *t) {
  t->zDir = tu_tmpdir("vtab");
  t->zDb = sqlite3_mprintf("%s/app.db", t->zDir);
  return openDb(t->zDb);
}

static void tmpDbDone(TmpDb *t) {
  sqlite3_free(t->zDb);
  tu_rmrf(t->zDir);
}

/* Run every statement of zSql; the rows of all of them as "a|b" lines
** joined by "\n" (BLOBs as x'HEX', NULL as NULL), or "ERROR: message".
** sqlite3_free the result. */
static char *run(sqlite3 *db, const char *zSql) {
  return tu_sql_run(db, zSql, TU_SQL_TYPED);
}

#define CHECK(db, sql, want)                                                   \
  tu_sql_check_at(db, sql, TU_SQL_TYPED, want, __LINE__)

/* The statement fails with a message containing zPart. */
static void checkErrAt(sqlite3 *db, const char *zSql, const char *zPart,
                       int iLine) {
  char *zGot = run(db, zSql);
  ck_assert_msg(strncmp(zGot, "ERROR: ", 7) == 0 && strstr(zGot, zPart),
                "line %d: %s\n  got:  %s\n  want an error with: %s", iLine,
                zSql, zGot, zPart);
  sqlite3_free(zGot);
}
#define CHECK_ERR(db, sql, part) checkErrAt(db, sql, part, __LINE__)

#define OK(db, sql) tu_sql_ok_at(db, sql, TU_SQL_TYPED, __LINE__)

static const char *zMetrics =
    "CREATE VIRTUAL TABLE metrics USING wcs("
    "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',"
    "FAMILY stats (cpu INT64, mem INT64, load FLOAT64) MAX VERSIONS 3,"
    "FAMILY meta)";

/* ---- tables and columns ----------------------------------------------- */

START_TEST(test_columns_follow_the_design) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  /* key fields, qualifier columns, family columns; hidden _key, _timestamp */
  CHECK(db, "SELECT name, type, hidden, pk FROM pragma_table_xinfo('metrics')",
        "device|TEXT|0|0\nid|TEXT|0|0\nday|INTEGER|0|0\ncpu|INTEGER|0|0\n"
        "mem|INTEGER|0|0\nload|REAL|0|0\nstats|TEXT|0|0\nmeta|TEXT|0|0\n"
        "_key|BLOB|1|1\n_timestamp|INTEGER|1|0");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,load,meta) VALUES "
         "('phone','4c41',20200501,7,0.5,'{\"os\":\"android\"}')");
  CHECK(db, "SELECT * FROM metrics",
        "phone|4c41|20200501|7|NULL|0.5|{\"cpu\":7,\"load\":0.5}|"
        "{\"os\":\"android\"}");
  CHECK(db, "SELECT _key, typeof(_timestamp) FROM metrics",
        "x'70686F6E652334633431233230323030353031'|integer");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_table_without_key_schema_shows_raw_key) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE raw USING wcs(FAMILY cf)");
  CHECK(db, "SELECT name, hidden, pk FROM pragma_table_xinfo('raw')",
        "_key|0|1\ncf|0|0\n_timestamp|1|0");
  OK(db, "INSERT INTO raw(_key, cf) VALUES (x'00ff01', '{\"q\":\"v\"}'), "
         "('text-key', '{\"a\":\"b\"}')");
  CHECK(db, "SELECT _key, cf FROM raw",
        "x'00FF01'|{\"q\":\"v\"}\nx'746578742D6B6579'|{\"a\":\"b\"}");
  CHECK(db, "SELECT cf ->> 'a' FROM raw WHERE _key = CAST('text-key' AS BLOB)",
        "b");
  CHECK_ERR(db, "INSERT INTO raw(cf) VALUES ('{\"q\":1}')",
            "NOT NULL constraint failed: raw._key");
  /* so is an UPDATE that sets it to NULL, as for a native table's key */
  CHECK_ERR(db, "UPDATE raw SET _key = NULL WHERE _key = x'00ff01'",
            "NOT NULL constraint failed: raw._key");
  CHECK(db, "SELECT count(*) FROM raw", "2");
  /* both, and an empty key, are constraint failures: OR IGNORE passes over
  ** such rows and keeps the others */
  OK(db, "INSERT OR IGNORE INTO raw(_key, cf) VALUES ('k2', '{\"q\":1}'), "
         "(NULL, '{\"q\":1}'), (x'', '{\"q\":1}'), ('k3', '{\"q\":1}')");
  CHECK(db, "SELECT CAST(_key AS TEXT) FROM raw WHERE _key BETWEEN 'k' AND 'l'",
        "k2\nk3");
  OK(db, "DELETE FROM raw WHERE _key = 'k3'");
  OK(db, "UPDATE OR IGNORE raw SET _key = NULL WHERE _key = 'k2'");
  CHECK(db, "SELECT count(*) FROM raw", "3");
  OK(db, "DELETE FROM raw WHERE _key = 'k2'");
  /* keys are never empty: an empty key is refused and matches nothing */
  OK(db, "CREATE VIRTUAL TABLE b USING wcs(KEY (k BYTES), FAMILY f (v INT64))");
  OK(db, "INSERT INTO b(k, v) VALUES (x'61', 1), (x'62', 2)");
  CHECK_ERR(db, "INSERT INTO b(k, v) VALUES (x'', 3)", "cannot be empty");
  OK(db, "INSERT OR IGNORE INTO b(k, v) VALUES (x'', 3)");
  CHECK(db, "SELECT count(*) FROM b WHERE k = x''", "0");
  CHECK(db, "SELECT v FROM b WHERE k IN (x'', x'62')", "2");
  CHECK(db, "SELECT count(*) FROM b WHERE k <= x''", "0");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_text_compared_with_key_uses_its_bytes) {
  sqlite3 *db = openDb(NULL);
  sqlite3_stmt *pStmt = NULL;
  OK(db, "CREATE VIRTUAL TABLE users USING wcs(FAMILY cf)");
  OK(db, "INSERT INTO users(_key, cf) VALUES ('user#0001', '{\"n\":\"a\"}'), "
         "('user#0002', '{\"n\":\"b\"}'), ('user#0010', '{\"n\":\"c\"}'), "
         "(x'7573657223ff', '{\"n\":\"d\"}'), ('admin#1', '{\"n\":\"e\"}')");
  /* the Bigtable habit: a text key, as bytes (SQLite alone: never equal) */
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key = 'user#0001'", "a");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key IS 'user#0002'", "b");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key > 'user#0001'", "b\nc\nd");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key <= 'user#0002'",
        "e\na\nb");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key < 'user#'", "e");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key >= 'user#0002'",
        "b\nc\nd");
  CHECK(db,
        "SELECT cf ->> 'n' FROM users WHERE _key BETWEEN 'user#0002' AND "
        "'user#1'",
        "b\nc");
  CHECK(db,
        "SELECT cf ->> 'n' FROM users WHERE _key IN ('user#0010', 'nope', "
        "x'7573657223ff', 7)",
        "c\nd");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key GLOB 'user#00?0'", "c");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key LIKE 'USER#%1'", "a");
  /* with PRAGMA case_sensitive_like, LIKE tells case: so does the
  ** module's own check of a LIKE on _key */
  OK(db, "INSERT INTO users(_key, cf) VALUES ('USER#0003', '{\"n\":\"f\"}')");
  OK(db, "PRAGMA case_sensitive_like = ON");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key LIKE '%er#%3'", "");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key LIKE '%ER#_0_3'", "f");
  OK(db, "PRAGMA case_sensitive_like = OFF");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key LIKE '%er#%3'", "f");
  /* a term on _key with another collation is SQLite's (which compares a
  ** TEXT with the BLOB key by its own rule): not the module's bytes; a
  ** LIKE with ESCAPE, which SQLite keeps, brings such terms */
  CHECK(db,
        "SELECT count(*) FROM users WHERE _key = 'user#0001' "
        "COLLATE NOCASE",
        "0");
  CHECK(db, "SELECT count(*) FROM users WHERE _key LIKE 'u!_%' ESCAPE '!'",
        "0");
  OK(db, "DELETE FROM users WHERE _key = 'USER#0003'");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE starts_with(_key, 'user#')",
        "a\nb\nc\nd");
  CHECK(db, "SELECT cf ->> 'n' FROM users WHERE _key > 'user#0001' LIMIT 1",
        "b");
  /* numbers and NULL keep SQLite's rules: below every key, never equal */
  CHECK(db, "SELECT count(*) FROM users WHERE _key > 5", "5");
  CHECK(db, "SELECT count(*) FROM users WHERE _key = 5 OR _key = NULL", "0");
  /* a bound parameter, whatever its type */
  ck_assert_int_eq(
      sqlite3_prepare_v2(db, "SELECT cf ->> 'n' FROM users WHERE _key = ?", -1,
                         &pStmt, NULL),
      SQLITE_OK);
  sqlite3_bind_text(pStmt, 1, "user#0010", -1, SQLITE_STATIC);
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(pStmt, 0), "c");
  sqlite3_reset(pStmt);
  sqlite3_bind_blob(pStmt, 1, "user#0002", 9, SQLITE_STATIC);
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(pStmt, 0), "b");
  sqlite3_finalize(pStmt);
  /* writes find their rows the same way */
  OK(db, "UPDATE users SET cf = '{\"n\":\"A\"}' WHERE _key = 'user#0001'");
  OK(db, "DELETE FROM users WHERE _key = 'user#0002'");
  CHECK(db, "SELECT group_concat(cf ->> 'n') FROM users", "e,A,c,d");
  /* and in a table with a key schema, and its history view */
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,5), "
         "('p','b',1,6)");
  OK(db, "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'metrics', HISTORY)");
  CHECK(db, "SELECT id, cpu FROM metrics WHERE _key = 'p#b#00000001'", "b|6");
  CHECK(db, "SELECT id, value FROM mh WHERE _key > 'p#a#00000001'", "b|6");
  sqlite3_close(db);
}
END_TEST

/* A prepared lookup of one row by its key fields; the text operands are
** bound as z1 (n1 bytes, not terminated: the byte after them is 'X') and
** z2 in UTF-16. Returns cpu, or -1 when no row is found. */
static int lookupCpu(sqlite3 *db, const char *z1, int n1, const char *z2) {
  sqlite3_stmt *pStmt = NULL;
  char zBuf[64];
  unsigned short a16[32];
  int i, cpu = -1;
  ck_assert_int_lt(n1 + 1, (int)sizeof(zBuf));
  ck_assert_int_lt((int)strlen(z2), 32);
  memcpy(zBuf, z1, (size_t)n1);
  zBuf[n1] = 'X';
  for (i = 0; z2[i]; i++) /* ASCII to UTF-16 in the machine's order */
    a16[i] = (unsigned char)z2[i];
  ck_assert_int_eq(
      sqlite3_prepare_v2(db,
                         "SELECT cpu FROM metrics WHERE device = ? AND id = ? "
                         "AND day = 1",
                         -1, &pStmt, NULL),
      SQLITE_OK);
  sqlite3_bind_text(pStmt, 1, zBuf, n1, SQLITE_TRANSIENT);
  sqlite3_bind_text16(pStmt, 2, a16, i * 2, SQLITE_TRANSIENT);
  if (sqlite3_step(pStmt) == SQLITE_ROW) cpu = sqlite3_column_int(pStmt, 0);
  sqlite3_finalize(pStmt);
  return cpu;
}

START_TEST(test_text_operands_read_alike_in_every_encoding) {
  /* key operands are taken as the connection holds them: UTF-8 text bytes,
  ** or converted from UTF-16 */
  static const char *azEnc[] = {"UTF-8", "UTF-16le", "UTF-16be"};
  int k;
  for (k = 0; k < 3; k++) {
    sqlite3 *db = openDb(NULL);
    char *zSql = sqlite3_mprintf("PRAGMA encoding = '%s'", azEnc[k]);
    OK(db, zSql);
    sqlite3_free(zSql);
    OK(db, zMetrics);
    OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES "
           "('d\xc3\xa9v','a',1,5), ('p','b',1,6), ('','c',1,7)");
    ck_assert_int_eq(lookupCpu(db, "d\xc3\xa9v", 4, "a"), 5);
    ck_assert_int_eq(lookupCpu(db, "p", 1, "b"), 6);
    ck_assert_int_eq(lookupCpu(db, "", 0, "c"), 7);
    ck_assert_int_eq(lookupCpu(db, "p", 1, "c"), -1);
    ck_assert_int_eq(lookupCpu(db, "pX", 2, "b"), -1);
    CHECK(db, "SELECT cpu FROM metrics WHERE device = 'd' || char(233) || "
              "'v' AND id = 'a' AND day = 1",
          "5");
    /* the operand stays TEXT for the rest of the statement */
    CHECK(db, "SELECT typeof('p'), quote('p'), 'p' < x'00', cpu FROM metrics "
              "WHERE device = 'p' AND id = 'b' AND day = 1",
          "text|'p'|1|6");
    sqlite3_close(db);
  }
}
END_TEST

START_TEST(test_text_key_fields_from_any_binding) {
  /* key fields are read as bytes, not NUL-terminated: text bound with a
  ** length (bytes after it must not count), text bound as UTF-16, and a
  ** UTF-16 database all give the UTF-8 key */
  int e;
  for (e = 0; e < 2; e++) {
    sqlite3 *db = openDb(NULL);
    sqlite3_stmt *pStmt = NULL;
    static const unsigned short azId16[] = {'i', 'd', 0xE9, 0};
    if (e == 1) OK(db, "PRAGMA encoding = 'UTF-16'");
    OK(db, zMetrics);
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "INSERT INTO metrics(device, id, day, "
                                        "cpu) VALUES (?, ?, ?, ?)",
                                        -1, &pStmt, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(pStmt, 1, "phoneXYZ", 5, SQLITE_TRANSIENT);
    sqlite3_bind_text16(pStmt, 2, azId16, -1, SQLITE_STATIC);
    sqlite3_bind_int(pStmt, 3, 20240101);
    sqlite3_bind_int(pStmt, 4, 7);
    ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_DONE);
    sqlite3_reset(pStmt);
    sqlite3_bind_text(pStmt, 1, "tabletQ", 6, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, "", 0, SQLITE_STATIC);
    sqlite3_bind_int(pStmt, 4, 8);
    ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_DONE);
    sqlite3_finalize(pStmt);
    CHECK(db,
          "SELECT hex(_key), device, id = 'id' || char(233), cpu FROM metrics "
          "ORDER BY cpu",
          "70686F6E65236964C3A9233230323430313031|phone|1|7\n"
          "7461626C657423233230323430313031|tablet|0|8");
    sqlite3_close(db);
  }
}
END_TEST

START_TEST(test_text_results_outlive_their_row) {
  /* SQLite keeps an SQLITE_STATIC result by reference (max(), GROUP BY's
  ** previous key), so every text or blob result must be a copy: the row's
  ** bytes change when the cursor moves */
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (device STRING, id STRING, "
         "day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY s (n STRING, "
         "b BYTES), FAMILY f)");
  OK(db,
     "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM r WHERE "
     "i < 299) INSERT INTO m(device, id, day, n, b, f) SELECT 'dev' || "
     "(i % 7), printf('%04d', i), 1, printf('n%04d', 299 - i), "
     "CAST(printf('b%04d', i % 11) AS BLOB), json_object('q', 'v' || (i % 5)) "
     "FROM r");
  CHECK(db,
        "SELECT max(id), min(id), max(device), min(n), max(b), max(f) "
        "FROM m",
        "0299|0000|dev6|n0000|x'6230303130'|{\"q\":\"v4\"}");
  CHECK(db, "SELECT max(_key), min(_key) FROM m",
        "x'646576362330323933233030303030303031'|"
        "x'646576302330303030233030303030303031'");
  CHECK(db, "SELECT device, count(*) FROM m GROUP BY device",
        "dev0|43\ndev1|43\ndev2|43\ndev3|43\ndev4|43\ndev5|43\ndev6|42");
  CHECK(db,
        "SELECT count(DISTINCT id), count(DISTINCT b), count(DISTINCT f) "
        "FROM m",
        "300|11|5");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_typed_columns_store_bigtable_bytes) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), "
         "FAMILY f (i INT64, d INT64 DECIMAL(4), r FLOAT64, s STRING, "
         "b BYTES, j JSON))");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  OK(db, "INSERT INTO t(k,i,d,r,s,b,j) VALUES "
         "('a', 258, 7, 1.0, 'x', x'00ff', '{\"n\":[1,2]}')");
  CHECK(db, "SELECT i, d, r, s, b, j FROM t",
        "258|7|1.0|x|x'00FF'|{\"n\":[1,2]}");
  /* INT64 is 8-byte big-endian: wcs_increment (Bigtable's format) works */
  CHECK(db, "SELECT wcs_increment('t', 'a', 'f', 'i', 1)", "259");
  CHECK(db, "SELECT i FROM t", "259");
  /* the history view is read-only to the writing functions too */
  CHECK_ERR(db, "SELECT wcs_increment('h', 'a', 'f', 'i', 1)",
            "wcs_increment: h is a HISTORY view and is read-only");
  CHECK_ERR(db, "SELECT wcs_delete_prefix('h', 'a')",
            "wcs_delete_prefix: h is a HISTORY view and is read-only");
  CHECK(db, "SELECT i FROM t", "259");
  /* the family column shows the bytes by type */
  CHECK(db, "SELECT f FROM t",
        "{\"b\":{\"$hex\":\"00ff\"},\"d\":7,\"i\":259,\"j\":{\"n\":[1,2]},"
        "\"r\":1.0,\"s\":\"x\"}");
  /* numeric text goes into numeric columns; other text is an error */
  OK(db, "UPDATE t SET i = '12', r = '2.5'");
  CHECK(db, "SELECT i, r FROM t", "12|2.5");
  CHECK_ERR(db, "UPDATE t SET i = 'twelve'",
            "column i is INT64: cannot store TEXT 'twelve'");
  CHECK_ERR(db, "UPDATE t SET d = 12345", "more than 4 digits");
  CHECK_ERR(db, "UPDATE t SET j = '{bad'", "not valid JSON");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_cell_bytes_of_every_value_type_in_every_column_type) {
  /* The bytes stored for each SQL value type in each declared column
  ** type, written as a column and as a member of the family's JSON, and
  ** in an undeclared qualifier (pass-through cases and encoded ones). */
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), "
         "FAMILY f (i INT64, d INT64 DECIMAL(4), r FLOAT64, s STRING, "
         "b BYTES, j JSON))");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  OK(db, "INSERT INTO t(k,i,d,r,s,b,j) VALUES "
         "('a', 258, 7, 1.5, 'xy', 'ab', '[1]'), "
         "('b', -2, 12, 3, 42, 2.5, 5), "
         "('c', x'0102', x'03', x'04', x'', x'00ff', x'7b7d'), "
         "('d', '77', '8', '0.5', '', '', '\"q\"'), "
         "('e', 3.0, 9.0, -1, 'caf\xc3\xa9', x'', 'null')");
  OK(db, "INSERT INTO t(k, f) VALUES ('g', '{\"i\":258,\"s\":\"xy\","
         "\"b\":\"ab\",\"u\":\"text\",\"v\":7,\"w\":{\"$hex\":\"00ff\"}}')");
  /* the view shows each value decoded by its column's type */
  CHECK(db,
        "SELECT CAST(_key AS TEXT), qualifier, hex(CAST(value AS BLOB)) "
        "FROM h ORDER BY 1, 2",
        "a|b|6162\na|d|37\na|i|323538\na|j|5B315D\na|r|312E35\na|s|7879\n"
        "b|b|322E35\nb|d|3132\nb|i|2D32\nb|j|35\nb|r|332E30\nb|s|3432\n"
        "c|b|00FF\nc|d|03\nc|i|0102\nc|j|7B7D\nc|r|04\nc|s|\n"
        "d|b|\nd|d|38\nd|i|3737\nd|j|227122\nd|r|302E35\nd|s|\n"
        "e|b|\ne|d|39\ne|i|33\ne|j|6E756C6C\ne|r|2D312E30\n"
        "e|s|636166C3A9\n"
        "g|b|6162\ng|i|323538\ng|s|7879\ng|u|74657874\n"
        "g|v|0000000000000007\ng|w|00FF");
  /* INT64 cells are 8-byte big-endian (Bigtable's increment format) */
  CHECK(db, "SELECT wcs_increment('t', 'b', 'f', 'i', 1)", "-1");
  CHECK(db, "SELECT wcs_increment('t', 'g', 'f', 'i', 1)", "259");
  CHECK(db, "SELECT wcs_increment('t', 'e', 'f', 'i', 1)", "4");
  /* the family column shows the bytes by type */
  CHECK(db, "SELECT f FROM t WHERE k = 'a'",
        "{\"b\":{\"$hex\":\"6162\"},\"d\":7,\"i\":258,\"j\":[1],\"r\":1.5,"
        "\"s\":\"xy\"}");
  CHECK(db, "SELECT f FROM t WHERE k = 'c'",
        "{\"b\":{\"$hex\":\"00ff\"},\"d\":{\"$hex\":\"03\"},"
        "\"i\":{\"$hex\":\"0102\"},\"j\":{},\"r\":{\"$hex\":\"04\"},"
        "\"s\":\"\"}");
  sqlite3_close(db);
}
END_TEST

/* Values at the edges of their written forms: numbers of any length (in
** JSON and in text), infinities in JSON, text that is not UTF-8, whole
** REALs near INT64's ends. */
START_TEST(test_values_at_the_edges_of_their_forms) {
  sqlite3 *db = openDb(NULL);
  char zNum[200], zSql[400];
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), "
         "FAMILY f (x FLOAT64, i INT64, s STRING, j JSON, b BYTES, "
         "d INT64 DECIMAL), FAMILY c AGGREGATE SUM)");
  /* a JSON number of 66 characters is the number it writes */
  OK(db,
     "INSERT INTO t(k, f) VALUES ('a', '{\"x\": "
     "1.000000000000000000000000000000000000000000000000000000000000e5, "
     "\"i\": 1.000000000000000000000000000000000000000000000000000000000000e5, "
     "\"u\": 1000000000000000000000000000000000000000000000000000000000000"
     "000000000.0}')");
  CHECK(db, "SELECT x, i, to_float64(f -> 'u') FROM t WHERE k = 'a'",
        "100000.0|100000|1.0e+69");
  /* an integer literal is an INT64 in an undeclared qualifier: one beyond
  ** its range is refused, not rounded into a FLOAT64 */
  CHECK_ERR(db,
            "INSERT INTO t(k, f) VALUES ('a2', '{\"u\": 9223372036854775808}')",
            "the integer 9223372036854775808 of qualifier u is beyond INT64; "
            "write it with a fraction or an exponent (e.g. 9.2e+18)");
  CHECK_ERR(
      db, "INSERT INTO t(k, f) VALUES ('a2', '{\"u\": -9223372036854775809}')",
      "beyond INT64");
  OK(db, "INSERT INTO t(k, f) VALUES ('a2', '{\"u\": -9223372036854775808, "
         "\"v\": 9.3e18}')");
  CHECK(db,
        "SELECT to_int64(f -> 'u'), to_float64(f -> 'v') FROM t "
        "WHERE k = 'a2'",
        "-9223372036854775808|9.3e+18");
  /* numeric text past 128 characters, as SQLite's affinity takes it */
  memset(zNum, '0', 150);
  zNum[150] = '5';
  zNum[151] = 0;
  sqlite3_snprintf(sizeof zSql, zSql,
                   "INSERT INTO t(k, i, x) VALUES ('b', '%s', '%s.5')", zNum,
                   zNum);
  OK(db, zSql);
  CHECK(db, "SELECT i, x FROM t WHERE k = 'b'", "5|5.5");
  /* an infinity in a JSON column is JSON that reads back as it; a FLOAT64
  ** infinity shows in the family column the same way */
  OK(db, "INSERT INTO t(k, j, x) VALUES ('c', 9e999, -9e999)");
  CHECK(db, "SELECT j, json_valid(j), f, f ->> 'x' FROM t WHERE k = 'c'",
        "9.0e+999|1|{\"j\":9.0e+999,\"x\":-9.0e+999}|-Inf");
  OK(db, "UPDATE t SET f = (SELECT f FROM t WHERE k = 'c') WHERE k = 'a'");
  CHECK(db, "SELECT hex(to_float64(x) = -9e999), j FROM t WHERE k = 'a'",
        "31|9.0e+999");
  /* text that is not UTF-8 is refused by STRING and JSON columns (it would
  ** read back as a BLOB), kept by BYTES ones; a BLOB goes in as given */
  CHECK_ERR(db, "INSERT INTO t(k, s) VALUES ('d', CAST(x'61ff62' AS TEXT))",
            "t: column s is STRING: the TEXT is not valid UTF-8 (byte 1, "
            "0xff); write a BLOB to store other bytes");
  CHECK_ERR(db, "INSERT INTO t(k, j) VALUES ('d', CAST(x'2261ff6222' AS TEXT))",
            "column j is JSON: the TEXT is not valid UTF-8 (byte 2, 0xff)");
  CHECK_ERR(db, "INSERT INTO t(k, f) VALUES ('d', '{\"s\": \"\\udcff\"}')",
            "column f.s is STRING: the TEXT is not valid UTF-8 (byte 0");
  OK(db, "INSERT INTO t(k, s, b) VALUES ('d', x'61ff62', "
         "CAST(x'61ff62' AS TEXT))");
  CHECK(db, "SELECT typeof(s), hex(s), hex(b) FROM t WHERE k = 'd'",
        "blob|61FF62|61FF62");
  /* whole REALs up to 2^63 are integers for _timestamp and SUM cells as
  ** for INT64 columns */
  OK(db, "INSERT INTO t(k, i, c, _timestamp) VALUES ('e', 1, "
         "'{\"n\": 9.21e18}', 9.2e18)");
  CHECK(db, "SELECT c ->> 'n', _timestamp FROM t WHERE k = 'e'",
        "9210000000000000000|9200000000000000000");
  CHECK_ERR(db, "SELECT wcs_increment('t', 'e', 'f', 'd', 1)",
            "column f:d is INT64 DECIMAL; it adds to 8-byte");
  /* a family's JSON past SQLite's limit on a value names the row */
  OK(db, "INSERT INTO t(k, b, s) VALUES ('big', zeroblob(3000), 'x')");
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 4000);
  CHECK(db, "SELECT s, length(b) FROM t WHERE k = 'big'", "x|3000");
  CHECK_ERR(db, "SELECT f FROM t WHERE k = 'big'",
            "t: the JSON of family f in row 'big' would be 6");
  sqlite3_close(db);
}
END_TEST

/* Integer cells of a family column: every digit count and sign, the
** INT64 extremes among them. */
START_TEST(test_family_json_integers) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k INT64 DECIMAL(2)), "
         "FAMILY f (n INT64))");
  OK(db, "INSERT INTO t(k, n) VALUES (1, -9223372036854775808), (2, -10), "
         "(3, -1), (4, 0), (5, 7), (6, 10), (7, 99), (8, 1000000007), "
         "(9, 9223372036854775807)");
  CHECK(db, "SELECT group_concat(f, ' ') FROM t",
        "{\"n\":-9223372036854775808} {\"n\":-10} {\"n\":-1} {\"n\":0} "
        "{\"n\":7} {\"n\":10} {\"n\":99} {\"n\":1000000007} "
        "{\"n\":9223372036854775807}");
  CHECK(db, "SELECT sum(f ->> 'n' = n) FROM t", "9");
  sqlite3_close(db);
}
END_TEST

/* Family columns and declared JSON columns are JSON to SQLite's JSON
** functions (the subtype they give their own results), so they nest as
** objects, not as strings; STRING columns stay strings. */
START_TEST(test_json_columns_nest_in_json_functions) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE j USING wcs(KEY (k STRING), "
         "FAMILY f (doc JSON, s STRING), FAMILY g)");
  OK(db, "CREATE VIRTUAL TABLE jh USING wcs(TABLE 'j', HISTORY)");
  OK(db, "INSERT INTO j(k, doc, s, g) VALUES ('a', '{\"x\":[1,2]}', "
         "'{\"y\":1}', '{\"n\":{\"$hex\":\"00ff\"}}')");
  CHECK(db, "SELECT json_object('doc', doc, 's', s, 'g', g) FROM j",
        "{\"doc\":{\"x\":[1,2]},\"s\":\"{\\\"y\\\":1}\","
        "\"g\":{\"n\":{\"$hex\":\"00ff\"}}}");
  CHECK(db, "SELECT json_group_array(f) FROM j",
        "[{\"doc\":{\"x\":[1,2]},\"s\":\"{\\\"y\\\":1}\"}]");
  CHECK(db, "SELECT json_group_array(value) FROM jh WHERE family = 'f'",
        "[{\"x\":[1,2]},\"{\\\"y\\\":1}\"]");
  /* the subtype does not change the value: text, equal to its JSON */
  CHECK(db, "SELECT typeof(f), f = json(f), doc ->> '$.x[1]' FROM j",
        "text|1|2");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_family_json_is_lossless_for_bytes) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f)");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  /* a non-UTF-8 qualifier (\udcff = byte ff), a binary value, a counter */
  OK(db, "INSERT INTO t(k, f) VALUES ('a', "
         "'{\"q\\udcff\":\"v\",\"bin\":{\"$hex\":\"00ff10\"},\"n\":5,"
         "\"s\":\"caf\\u00e9\",\"nul\":null}')");
  CHECK(db, "SELECT f FROM t",
        "{\"bin\":{\"$hex\":\"00ff10\"},\"n\":{\"$hex\":\"0000000000000005\"},"
        "\"q\\udcff\":\"v\",\"s\":\"caf\xc3\xa9\"}");
  CHECK(db,
        "SELECT hex(CAST(qualifier AS BLOB)), hex(CAST(value AS BLOB)) "
        "FROM h ORDER BY 1",
        "62696E|00FF10\n6E|0000000000000005\n71FF|76\n73|636166C3A9");
  /* writing the JSON read back gives the same bytes */
  OK(db, "INSERT INTO t(k, f) SELECT 'b', f FROM t WHERE k = 'a'");
  CHECK(db, "SELECT count(DISTINCT f) FROM t", "1");
  CHECK(db, "SELECT map_keys(f) FROM t WHERE k = 'a'",
        "[\"bin\",\"n\",\"q\\udcff\",\"s\"]");
  CHECK_ERR(db, "UPDATE t SET f = '[1,2]'", "JSON object");
  /* a $hex object that is not one even string of hex digits is refused,
  ** not stored as JSON text */
  CHECK_ERR(db, "UPDATE t SET f = '{\"x\":{\"$hex\":\"zz\"}}'", "$hex");
  CHECK_ERR(db, "UPDATE t SET f = '{\"x\":{\"$hex\":\"abc\"}}'", "$hex");
  CHECK_ERR(db, "UPDATE t SET f = '{\"x\":{\"$hex\":\"ab\",\"y\":1}}'",
            "$hex");
  CHECK(db, "SELECT count(*) FROM h WHERE qualifier = 'x'", "0");
  /* declared columns holding bytes their type does not decode (stored as
  ** BLOBs): a BLOB in SQL, $hex in the family, and written back as is */
  OK(db, "CREATE VIRTUAL TABLE d USING wcs(KEY (k STRING), FAMILY f ("
         "n INT64 DECIMAL(3), j JSON, s STRING))");
  OK(db, "INSERT INTO d(k, n, j, s) VALUES ('a', x'4142', x'7b', x'ff')");
  OK(db, "INSERT INTO d(k, j) VALUES ('c', '[1,2]')");
  CHECK(db, "SELECT typeof(n), typeof(j), typeof(s), f FROM d WHERE k = 'a'",
        "blob|blob|blob|{\"j\":{\"$hex\":\"7b\"},\"n\":{\"$hex\":\"4142\"},"
        "\"s\":{\"$hex\":\"ff\"}}");
  CHECK(db, "SELECT typeof(j), f FROM d WHERE k = 'c'", "text|{\"j\":[1,2]}");
  OK(db, "INSERT INTO d(k, f) SELECT 'b', f FROM d WHERE k = 'a'");
  CHECK(db, "SELECT hex(n), hex(j), hex(s) FROM d WHERE k = 'b'", "4142|7B|FF");
  /* digits that a DECIMAL column does not write (too few, a sign, a
  ** leading zero without a width) decode no more than letters do; -0.0
  ** keeps its sign */
  OK(db, "CREATE VIRTUAL TABLE dd USING wcs(KEY (k STRING), FAMILY f ("
         "d INT64 DECIMAL(3), dn INT64 DECIMAL, r FLOAT64))");
  OK(db, "INSERT INTO dd(k, d, dn, r) VALUES ('a', CAST('12' AS BLOB), "
         "CAST('012' AS BLOB), x'8000000000000000'), ('b', CAST('-12' AS "
         "BLOB), CAST('-0' AS BLOB), NULL), ('c', 12, -12, -0.5)");
  CHECK(db, "SELECT k, typeof(d), typeof(dn), f FROM dd",
        "a|blob|blob|{\"d\":{\"$hex\":\"3132\"},\"dn\":{\"$hex\":"
        "\"303132\"},\"r\":-0.0}\n"
        "b|blob|blob|{\"d\":{\"$hex\":\"2d3132\"},\"dn\":{\"$hex\":"
        "\"2d30\"}}\n"
        "c|integer|integer|{\"d\":12,\"dn\":-12,\"r\":-0.5}");
  OK(db, "INSERT INTO dd(k, f) SELECT k || '2', f FROM dd");
  CHECK(db,
        "SELECT count(*) FROM dd AS x JOIN dd AS y ON y.k = x.k || '2' "
        "WHERE x.d IS y.d AND x.dn IS y.dn AND x.r IS y.r AND "
        "hex(x.r) IS hex(y.r)",
        "3");
  OK(db, "CREATE VIRTUAL TABLE ddh USING wcs(TABLE 'dd', HISTORY)");
  CHECK(db,
        "SELECT k, qualifier, hex(value) FROM ddh WHERE k IN ('a2', 'b2') "
        "ORDER BY 1, 2",
        "a2|d|3132\na2|dn|303132\na2|r|302E30\n"
        "b2|d|2D3132\nb2|dn|2D30");
  /* (a REAL shows 0.0 either way; the family shows the sign it kept) */
  CHECK(db, "SELECT f ->> 'r', f FROM dd WHERE k = 'a2'",
        "0.0|{\"d\":{\"$hex\":\"3132\"},\"dn\":{\"$hex\":\"303132\"},"
        "\"r\":-0.0}");
  /* a JSON column shows its JSON value in the family, and that value is
  ** what a write of the family stores: its text as written (a string with
  ** its quotes, true, a number as spelled); text that would read back as
  ** something else (null deletes, an object led by "$hex" is bytes) is
  ** shown as $hex */
  OK(db, "CREATE VIRTUAL TABLE js USING wcs(KEY (k INT64 DECIMAL(2)), "
         "FAMILY f (j JSON))");
  OK(db, "INSERT INTO js(k, j) VALUES (1, '\"str\"'), (2, 'true'), "
         "(3, '1.50'), (4, 'null'), (5, '{\"$hex\":\"00\"}'), "
         "(6, '[1, {\"a\":false}]'), (7, '-0')");
  CHECK(db, "SELECT f FROM js",
        "{\"j\":\"str\"}\n{\"j\":true}\n{\"j\":1.50}\n"
        "{\"j\":{\"$hex\":\"6e756c6c\"}}\n"
        "{\"j\":{\"$hex\":\"7b2224686578223a223030227d\"}}\n"
        "{\"j\":[1, {\"a\":false}]}\n{\"j\":-0}");
  OK(db, "INSERT INTO js(k, f) SELECT k + 10, f FROM js");
  CHECK(db,
        "SELECT count(*) FROM js a JOIN js b ON b.k = a.k + 10 "
        "WHERE a.j IS b.j AND typeof(a.j) = typeof(b.j)",
        "7");
  OK(db, "INSERT INTO js(k, f) VALUES (20, '{\"j\": \"x\" }')");
  CHECK(db, "SELECT j, f ->> 'j' FROM js WHERE k = 20", "\"x\"|x");
  sqlite3_close(db);
}
END_TEST

/* ---- writes ----------------------------------------------------------- */

START_TEST(test_insert_is_an_upsert_and_null_deletes) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',20200101,1)");
  OK(db, "INSERT INTO metrics(device,id,day,mem) VALUES ('p','a',20200101,2)");
  CHECK(db, "SELECT cpu, mem FROM metrics", "1|2");
  OK(db, "UPDATE metrics SET cpu = NULL");
  CHECK(db, "SELECT cpu, mem, stats FROM metrics", "NULL|2|{\"mem\":2}");
  /* a JSON object sets several qualifiers; JSON null deletes one */
  OK(db,
     "UPDATE metrics SET stats = '{\"cpu\":5,\"mem\":null,\"extra\":\"x\"}'");
  CHECK(db, "SELECT cpu, mem, stats FROM metrics",
        "5|NULL|{\"cpu\":5,\"extra\":\"x\"}");
  /* NULL into a family column deletes the family */
  OK(db, "UPDATE metrics SET stats = NULL, meta = '{\"m\":\"1\"}'");
  CHECK(db, "SELECT cpu, stats, meta FROM metrics", "NULL|NULL|{\"m\":\"1\"}");
  /* a row with no cell left is gone */
  OK(db, "UPDATE metrics SET meta = NULL");
  CHECK(db, "SELECT count(*) FROM metrics", "0");
  CHECK_ERR(db, "INSERT INTO metrics(device,id,day) VALUES ('p','a',1)",
            "writes no cell");
  /* a table without a family can hold no row: the error says so */
  OK(db, "CREATE VIRTUAL TABLE nofam USING wcs(KEY (k STRING))");
  CHECK_ERR(db, "INSERT INTO nofam(k) VALUES ('a')",
            "nofam: the table has no column family, so it cannot hold a row");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_conflict_clauses) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu,mem) VALUES ('p','a',1,1,1)");
  OK(db, "INSERT OR IGNORE INTO metrics(device,id,day,cpu) VALUES "
         "('p','a',1,9), ('p','b',1,9)");
  CHECK(db, "SELECT id, cpu, mem FROM metrics", "a|1|1\nb|9|NULL");
  CHECK_ERR(db,
            "INSERT OR FAIL INTO metrics(device,id,day,cpu) VALUES "
            "('p','c',1,3), ('p','a',1,3)",
            "UNIQUE constraint failed: metrics._key");
  /* FAIL keeps the rows before the failing one */
  CHECK(db, "SELECT id FROM metrics", "a\nb\nc");
  OK(db, "INSERT OR REPLACE INTO metrics(device,id,day,cpu) VALUES "
         "('p','a',1,7)");
  CHECK(db, "SELECT id, cpu, mem FROM metrics WHERE id = 'a'", "a|7|NULL");
  CHECK_ERR(db,
            "INSERT OR ROLLBACK INTO metrics(device,id,day,cpu) VALUES "
            "('p','a',1,3)",
            "UNIQUE constraint failed");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_update_of_key_fields_moves_the_row_with_its_history) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE hist USING wcs(TABLE 'metrics', HISTORY)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',20200101,1,100)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',20200101,2,200)");
  OK(db, "UPDATE metrics SET day = 20200102 WHERE id = 'a'");
  CHECK(db, "SELECT device, id, day, cpu FROM metrics", "p|a|20200102|2");
  CHECK(db, "SELECT day, _timestamp, value FROM hist",
        "20200102|200|2\n20200102|100|1");
  /* moving onto an existing row is refused (as in SQLite's own tables),
  ** under ABORT and OR FAIL; OR IGNORE skips it, OR REPLACE replaces */
  OK(db, "INSERT INTO metrics(device,id,day,mem) VALUES ('p','b',1,5)");
  CHECK_ERR(db,
            "UPDATE OR FAIL metrics SET id = 'a', day = 20200102 "
            "WHERE id = 'b'",
            "UNIQUE constraint failed");
  CHECK_ERR(db, "UPDATE metrics SET id = 'a', day = 20200102 WHERE id = 'b'",
            "the UPDATE moves row 'p#b#00000001' onto row 'p#a#20200102', "
            "which exists");
  OK(db, "UPDATE OR IGNORE metrics SET id = 'a', day = 20200102 "
         "WHERE id = 'b'");
  CHECK(db, "SELECT id, day, cpu, mem FROM metrics",
        "a|20200102|2|NULL\nb|1|NULL|5");
  OK(db, "UPDATE OR REPLACE metrics SET id = 'a', day = 20200102 "
         "WHERE id = 'b'");
  CHECK(db, "SELECT id, day, cpu, mem FROM metrics", "a|20200102|NULL|5");
  sqlite3_close(db);
}
END_TEST

/* Shifting keys onto each other (k = k + 1 over rows 1, 2, 3) moves row 1
** onto row 2 first: refused, and the statement's moves undone, so no row
** loses a value; in the other direction every target is free. */
START_TEST(test_update_shifting_keys_onto_each_other_loses_nothing) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES "
         "('p','a',1,10), ('p','a',2,20), ('p','a',3,30)");
  OK(db, "INSERT INTO metrics(device,id,day,mem) VALUES ('p','a',3,33)");
  CHECK_ERR(db, "UPDATE metrics SET day = day + 1 WHERE id = 'a'",
            "UNIQUE constraint failed");
  CHECK(db, "SELECT day, cpu, mem FROM metrics",
        "1|10|NULL\n2|20|NULL\n3|30|33");
  OK(db, "BEGIN");
  CHECK_ERR(db, "UPDATE metrics SET day = day + 1 WHERE id = 'a'",
            "UNIQUE constraint failed");
  OK(db, "UPDATE metrics SET day = day + 10 WHERE id = 'a'");
  OK(db, "UPDATE metrics SET day = day - 10 WHERE id = 'a' AND day > 10");
  OK(db, "COMMIT");
  CHECK(db, "SELECT day, cpu, mem FROM metrics",
        "1|10|NULL\n2|20|NULL\n3|30|33");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_timestamp_column_sets_cell_time) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,1,1234567)");
  CHECK(db, "SELECT _timestamp FROM metrics", "1234567");
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
            "('p','a',1,1,-5)",
            "_timestamp must be an integer from 0 to");
  /* INT64_MAX could never be read (time ranges end before it) */
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
            "('p','b',1,1,9223372036854775807)",
            "_timestamp must be an integer from 0 to");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','b',1,7,9223372036854775806)");
  CHECK(db, "SELECT cpu, _timestamp FROM metrics WHERE id='b'",
        "7|9223372036854775806");
  /* a whole REAL or numeric text is the integer, as for INTEGER columns */
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','c',1,1,100.0), ('p','d',1,1,'1e2')");
  CHECK(db, "SELECT _timestamp FROM metrics WHERE id IN ('c','d')", "100\n100");
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
            "('p','e',1,1,100.5)",
            "_timestamp must be an integer from 0 to");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_reading_some_families_keeps_every_row) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  /* one row with stats only, one with meta only */
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,5)");
  OK(db, "INSERT INTO metrics(device,id,day,meta) VALUES "
         "('p','b',1,'{\"k\":\"v\"}')");
  CHECK(db, "SELECT id, cpu FROM metrics", "a|5\nb|NULL");
  CHECK(db, "SELECT id FROM metrics", "a\nb");
  CHECK(db, "SELECT count(*), count(cpu), sum(cpu) FROM metrics", "2|1|5");
  CHECK(db, "SELECT id, meta FROM metrics", "a|NULL\nb|{\"k\":\"v\"}");
  /* a NULL-rejecting term lets the scan read stats alone */
  CHECK(db, "SELECT id, cpu FROM metrics WHERE cpu > 0", "a|5");
  CHECK(db, "SELECT id FROM metrics WHERE cpu IS NULL", "b");
  CHECK(db, "SELECT id FROM metrics WHERE cpu IN (5, 6)", "a");
  CHECK(db, "SELECT id, _timestamp > 0 FROM metrics", "a|1\nb|1");
  /* a term in the ON clause of a LEFT JOIN keeps every row of the left
  ** table, though SQLite offers it to xBestIndex like a WHERE term */
  OK(db, "CREATE TABLE t(x INTEGER, y TEXT)");
  OK(db, "INSERT INTO t VALUES (5, 'five')");
  CHECK(db,
        "SELECT m.id, t.y FROM metrics m LEFT JOIN t ON m.cpu = t.x "
        "AND m.cpu > 0",
        "a|five\nb|NULL");
  CHECK(db,
        "SELECT m.id, t.y FROM metrics m LEFT JOIN t ON t.x = m.cpu "
        "AND m.cpu IN (5, 6)",
        "a|five\nb|NULL");
  CHECK(db,
        "SELECT m.id, t.y FROM metrics m LEFT JOIN t ON t.x = m.cpu "
        "WHERE m.cpu > 0",
        "a|five");
  CHECK(db, "SELECT t.y, m.id FROM t RIGHT JOIN metrics m ON m.cpu > 0",
        "five|a\nNULL|b");
  sqlite3_close(db);
}
END_TEST

/* Blocks the store looked up in its cache so far (hits and misses). */
static long blocksRead(sqlite3 *db, const char *zTab) {
  char *zSql = sqlite3_mprintf(
      "SELECT (wcs_stats('%q') ->> '$.store.stats.cache_hits') + "
      "(wcs_stats('%q') ->> '$.store.stats.cache_misses')",
      zTab, zTab);
  char *z = run(db, zSql);
  long n = strtol(z, NULL, 10);
  sqlite3_free(zSql);
  sqlite3_free(z);
  return n;
}

/* A statement that reads no column (count(*)) counts the rows of settled
** data from the files' notes instead of reading them, and reads them
** whenever the notes cannot tell: the count is the same either way. */
START_TEST(test_count_of_settled_rows_reads_no_block) {
  sqlite3 *db = openDb(NULL);
  long n0;
  OK(db, "CREATE VIRTUAL TABLE ev USING wcs(KEY (k STRING), "
         "FAMILY a (x INT64), FAMILY b (y INT64))");
  OK(db, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
         "WHERE i < 20000) INSERT INTO ev(k, x, y) "
         "SELECT printf('k%06d', i), i, -i FROM c");
  CHECK(db, "SELECT count(*) FROM ev", "20000"); /* in the memtable */
  CHECK(db, "SELECT wcs_compact('ev')", "ok");
  n0 = blocksRead(db, "ev");
  CHECK(db, "SELECT count(*) FROM ev", "20000");
  ck_assert_int_le(blocksRead(db, "ev") - n0, 4); /* the first row's */
  n0 = blocksRead(db, "ev");
  CHECK(db, "SELECT count(*) FROM ev WHERE k >= 'k'", "20000");
  ck_assert_int_gt(blocksRead(db, "ev") - n0, 20); /* a range: read */
  CHECK(db, "SELECT count(*) FROM (SELECT 1 FROM ev LIMIT 10 OFFSET 5)", "10");
  CHECK(db, "SELECT count(*) FROM (SELECT 1 FROM ev LIMIT 10 OFFSET 19995)",
        "5");
  CHECK(db, "SELECT count(*) FROM (SELECT 1 FROM ev LIMIT -1 OFFSET 19999)",
        "1");
  CHECK(db, "SELECT count(*) FROM (SELECT 1 FROM ev LIMIT 0)", "0");
  /* the table as the inner loop of a join: counted at each xFilter */
  CHECK(db, "SELECT count(*) FROM (SELECT 1 UNION ALL SELECT 2), ev", "40000");
  /* a transaction's own writes are counted by reading */
  OK(db, "BEGIN");
  CHECK(db, "SELECT count(*) FROM ev", "20000");
  OK(db, "INSERT INTO ev(k, x) VALUES ('k999999', 1)");
  OK(db, "DELETE FROM ev WHERE k = 'k000001'");
  OK(db, "DELETE FROM ev WHERE k = 'k000002'");
  CHECK(db, "SELECT count(*) FROM ev", "19999");
  OK(db, "ROLLBACK");
  CHECK(db, "SELECT count(*) FROM ev", "20000");
  /* a delete, before and after the compaction that drops its cells */
  OK(db, "DELETE FROM ev WHERE k = 'k000003'");
  CHECK(db, "SELECT count(*) FROM ev", "19999");
  CHECK(db, "SELECT wcs_compact('ev')", "ok");
  CHECK(db, "SELECT count(*) FROM ev", "19999");
  /* a row of one family only: the families' rows differ, still 20000 */
  OK(db, "INSERT INTO ev(k, y) VALUES ('k999999', 1)");
  CHECK(db, "SELECT wcs_compact('ev')", "ok");
  CHECK(db, "SELECT count(*) FROM ev", "20000");
  CHECK(db, "SELECT count(x), count(y) FROM ev", "19999|20000");
  /* writes that use no column by colUsed still go row by row */
  CHECK(db, "SELECT wcs_compact('ev')", "ok");
  OK(db, "UPDATE ev SET x = 5");
  CHECK(db, "SELECT count(*), sum(x), count(DISTINCT k) FROM ev",
        "20000|100000|20000");
  CHECK(db, "SELECT wcs_compact('ev')", "ok");
  OK(db, "DELETE FROM ev");
  CHECK(db, "SELECT count(*) FROM ev", "0");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_aggregate_families_fold_writes) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE c USING wcs(KEY (k STRING), "
         "FAMILY hits (n INT64) AGGREGATE SUM, FAMILY users AGGREGATE HLL)");
  OK(db, "INSERT INTO c(k, n) VALUES ('a', 5)");
  OK(db, "INSERT INTO c(k, n) VALUES ('a', 7)");
  CHECK(db, "SELECT n, hits FROM c", "12|{\"n\":12}");
  OK(db, "INSERT INTO c(k, users) VALUES ('a', '{\"u\":\"alice\"}')");
  OK(db, "INSERT INTO c(k, users) VALUES ('a', '{\"u\":\"bob\"}')");
  OK(db, "INSERT INTO c(k, users) VALUES ('a', '{\"u\":\"alice\"}')");
  OK(db, "CREATE VIRTUAL TABLE c_h USING wcs(TABLE 'c', HISTORY)");
  CHECK(db, "SELECT wcs_hll_count(value) FROM c_h WHERE family = 'users'", "2");
  CHECK_ERR(db, "INSERT INTO c(k, n) VALUES ('b', 'many')",
            "aggregate family hits");
  /* an increment of an aggregate family says how to add instead */
  CHECK_ERR(db, "SELECT wcs_increment('c', 'a', 'hits', 'n', 1)",
            "family hits of table c is an aggregate family");
  CHECK(db, "SELECT n FROM c WHERE k = 'a'", "12");
  CHECK_ERR(db, "SELECT wcs_hll_count(x'0102')",
            "not an HLL state (give it a cell of a FAMILY ... AGGREGATE HLL)");
  /* an INT64 column of an HLL family: its elements are integers, converted
  ** as the column's affinity would, and it reads as the sketch (a sketch of
  ** one element is 8 bytes long, and must not read as an integer) */
  OK(db, "CREATE VIRTUAL TABLE hi USING wcs(KEY (k STRING), "
         "FAMILY h (n INT64) AGGREGATE HLL)");
  OK(db, "INSERT INTO hi(k, n) VALUES ('a', 5)");
  CHECK(db,
        "SELECT typeof(n), wcs_hll_count(n), wcs_hll_count(h -> 'n') "
        "FROM hi",
        "blob|1|1");
  OK(db, "CREATE VIRTUAL TABLE hi_h USING wcs(TABLE 'hi', HISTORY)");
  CHECK(db, "SELECT typeof(value), wcs_hll_count(value) FROM hi_h", "blob|1");
  OK(db, "INSERT INTO hi(k, n) VALUES ('a', '5'), ('a', 5.0), ('a', ' 5')");
  CHECK(db, "SELECT wcs_hll_count(n) FROM hi", "1");
  CHECK_ERR(db, "INSERT INTO hi(k, n) VALUES ('a', 'abc')",
            "cannot store TEXT 'abc'");
  CHECK_ERR(db, "INSERT INTO hi(k, n) VALUES ('a', 5.5)", "column n");
  OK(db, "INSERT INTO hi(k, n) VALUES ('a', 6)");
  CHECK(db, "SELECT wcs_hll_count(n) FROM hi", "2");
  /* an explicit _timestamp makes a separate time bucket */
  OK(db, "INSERT INTO c(k, n, _timestamp) VALUES ('a', 100, 3600000000)");
  CHECK(db, "SELECT _timestamp, value FROM c_h WHERE family = 'hits'",
        "3600000000|100\n0|12");
  /* with a MAX AGE, timestamp 0 would be hidden at once: refused */
  OK(db, "CREATE VIRTUAL TABLE d USING wcs(KEY (k STRING), "
         "FAMILY hits (n INT64) AGGREGATE SUM MAX AGE '1d')");
  CHECK_ERR(db, "INSERT INTO d(k, n) VALUES ('a', 5)",
            "aggregate family hits has a MAX AGE");
  OK(db, "INSERT INTO d(k, n, _timestamp) VALUES ('a', 5, "
         "(unixepoch() - 60) * 1000000), ('a', 6, (unixepoch() - 60) * "
         "1000000)");
  CHECK(db, "SELECT n FROM d", "11");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_or_terms_and_registering_twice) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1), "
         "('q','b',2,2), ('r','c',3,3)");
  CHECK(db,
        "SELECT id FROM metrics WHERE device = 'p' OR "
        "(device = 'r' AND id = 'c') ORDER BY id",
        "a\nc");
  /* a second registration replaces the module; tables keep working */
  ck_assert_int_eq(wcs_register(db), SQLITE_OK);
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  sqlite3_close(db);
}
END_TEST

/* ---- transactions ------------------------------------------------------ */

START_TEST(test_rollback_spans_tables_of_one_store) {
  sqlite3 *db = openDb(NULL);
  OK(db,
     "CREATE VIRTUAL TABLE a USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db,
     "CREATE VIRTUAL TABLE b USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO a(k,v) VALUES ('x', 1)");
  OK(db, "INSERT INTO b(k,v) VALUES ('y', 2)");
  /* reads inside the transaction see its writes */
  CHECK(db, "SELECT (SELECT v FROM a), (SELECT v FROM b)", "1|2");
  OK(db, "ROLLBACK");
  CHECK(db, "SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b)", "0|0");
  OK(db, "BEGIN; INSERT INTO a(k,v) VALUES ('x', 1); "
         "INSERT INTO b(k,v) VALUES ('y', 2); COMMIT");
  CHECK(db, "SELECT (SELECT v FROM a), (SELECT v FROM b)", "1|2");
  sqlite3_close(db);
}
END_TEST

/* DROP TABLE is immediate: dropping a table the open transaction wrote
** to is refused, and the transaction (with a native table's write) still
** commits whole; a table it did not write to drops at once. */
START_TEST(test_drop_in_a_transaction_loses_no_write) {
  sqlite3 *db = openDb(NULL);
  OK(db,
     "CREATE VIRTUAL TABLE a USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db,
     "CREATE VIRTUAL TABLE b USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db,
     "CREATE VIRTUAL TABLE c USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "CREATE TABLE n(x)");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO n VALUES (1)");
  OK(db, "INSERT INTO a(k,v) VALUES ('x', 1)");
  OK(db, "INSERT INTO b(k,v) VALUES ('y', 2)");
  CHECK_ERR(db, "DROP TABLE a", "locked");
  OK(db, "DROP TABLE c");
  OK(db, "COMMIT");
  CHECK(db,
        "SELECT (SELECT v FROM a), (SELECT v FROM b), (SELECT x FROM n), "
        "(SELECT group_concat(name) FROM sqlite_schema WHERE name='c')",
        "1|2|1|NULL");
  OK(db, "DROP TABLE a");
  CHECK(db, "SELECT count(*) FROM sqlite_schema WHERE name='a'", "0");
  /* written through another declaration of the store table, or by a
  ** function: refused the same */
  OK(db, "CREATE VIRTUAL TABLE b2 USING wcs(TABLE 'b')");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO n VALUES (2)");
  OK(db, "INSERT INTO b2(k,v) VALUES ('z', 3)");
  CHECK_ERR(db, "DROP TABLE b", "locked");
  OK(db, "COMMIT");
  /* (a function joins the store transaction once a statement wrote to
  ** the store in it; before that it commits on its own) */
  OK(db,
     "CREATE VIRTUAL TABLE d USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO n VALUES (3)");
  OK(db, "INSERT INTO d(k,v) VALUES ('u', 5)");
  CHECK(db, "SELECT wcs_increment('b2', 'w', 'f', 'v', 4)", "4");
  CHECK_ERR(db, "DROP TABLE b", "locked");
  OK(db, "COMMIT");
  CHECK(db,
        "SELECT (SELECT group_concat(k || v) FROM b), (SELECT sum(x) FROM n), "
        "(SELECT v FROM d)",
        "w4,y2,z3|6|5");
  sqlite3_close(db);
}
END_TEST

/* A table of the user's named like a commit clock is not taken for one:
** the CREATE is refused, and a clock dropped and replaced by such a table
** is neither ticked nor dropped with its wcs table. */
START_TEST(test_a_user_table_is_never_taken_for_a_clock) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE TABLE foo_wcsclock(n, note)");
  OK(db, "INSERT INTO foo_wcsclock VALUES (100, 'a'), (200, 'b')");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE foo USING wcs(KEY (k STRING), FAMILY f)",
            "wcs: cannot create foo: main.foo_wcsclock exists and is not a "
            "commit clock");
  OK(db,
     "CREATE VIRTUAL TABLE bar USING wcs(KEY (k STRING), FAMILY f (v STRING))");
  OK(db, "DROP TABLE bar_wcsclock");
  OK(db, "CREATE TABLE bar_wcsclock(n, note)");
  OK(db, "INSERT INTO bar_wcsclock VALUES (7, 'mine'), (8, 'also')");
  OK(db, "INSERT INTO bar(k, v) VALUES ('a', 'x')");
  OK(db, "DROP TABLE bar");
  CHECK(db, "SELECT group_concat(n || note) FROM foo_wcsclock", "100a,200b");
  CHECK(db, "SELECT group_concat(n || note) FROM bar_wcsclock", "7mine,8also");
  sqlite3_close(db);
}
END_TEST

/* INSERT ... SELECT from another declaration of the same store table (a
** TABLE 'x' one, a HISTORY view), which SQLite does not know to read
** first: the reader sees the transaction's writes from before the
** statement (rows, deletes, prefix deletes), never the statement's own,
** forward, in reverse and across salt buckets. */
START_TEST(test_insert_select_from_an_alias_reads_before_its_writes) {
  sqlite3 *db = openDb(NULL);
  OK(db,
     "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE m2 USING wcs(TABLE 'm')");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'm', HISTORY)");
  OK(db, "INSERT INTO m(k, v) VALUES ('a', 1), ('ax', 1), ('b', 2), "
         "('bx', 2), ('c', 3), ('cx', 3)");
  OK(db, "INSERT INTO m(k, v) SELECT k || 'y', v FROM m2");
  CHECK(db, "SELECT count(*), group_concat(k) FROM m",
        "12|a,ax,axy,ay,b,bx,bxy,by,c,cx,cxy,cy");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO m(k, v) VALUES ('d', 4)");
  OK(db, "DELETE FROM m WHERE k GLOB '*y'");
  OK(db, "DELETE FROM m WHERE k = 'ax'");
  CHECK(db, "SELECT wcs_delete_prefix('m', 'c')", "1");
  OK(db, "INSERT INTO m(k, v) SELECT 'b' || k, v + 10 FROM m2");
  CHECK(db, "SELECT group_concat(k || v) FROM m",
        "a1,b2,ba11,bb12,bbx12,bd14,bx2,d4");
  /* in reverse, the rows written land before the reader */
  OK(db, "INSERT INTO m(k, v) SELECT k || 'z', v FROM m2 ORDER BY k DESC");
  CHECK(db, "SELECT count(*) FROM m", "16");
  /* a history view's cells: one row each, the new versions unseen */
  OK(db, "INSERT INTO m(k, v) SELECT 'h' || CAST(_key AS TEXT), "
         "to_int64(value) FROM h WHERE qualifier = 'v' AND k GLOB 'b?'");
  CHECK(db, "SELECT group_concat(k || v) FROM m WHERE k GLOB 'h*'",
        "hba11,hbb12,hbd14,hbx2,hbz2");
  OK(db, "COMMIT");
  CHECK(db, "SELECT count(*) FROM m2", "21");
  /* by groups (an ORDER BY whose direction changes): the rows written
  ** land in groups the reader has yet to read, on either side of it */
  OK(db, "CREATE VIRTUAL TABLE g USING wcs(KEY (a STRING, b INT64 "
         "DECIMAL(4)), FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE g2 USING wcs(TABLE 'g')");
  OK(db, "INSERT INTO g(a, b, v) VALUES ('p', 1, 1), ('p', 2, 2), "
         "('r', 1, 3), ('r', 2, 4), ('t', 1, 5)");
  OK(db, "INSERT INTO g(a, b, v) SELECT a || 'x', b + 10, v FROM g2 "
         "ORDER BY a, b DESC LIMIT 100");
  CHECK(db, "SELECT count(*), group_concat(a || b) FROM g",
        "10|p1,p2,px11,px12,r1,r2,rx11,rx12,t1,tx11");
  OK(db, "INSERT INTO g(a, b, v) SELECT 'q' || a, b, v FROM g2 "
         "ORDER BY a DESC, b LIMIT 100");
  CHECK(db, "SELECT count(*) FROM g WHERE a GLOB 'q*'", "10");
  /* an UPDATE with subqueries through the alias: SQLite computes a
  ** virtual table's new rows first (the subqueries see none of them) */
  OK(db, "BEGIN");
  OK(db, "UPDATE m SET v = (SELECT count(*) FROM m2 AS x WHERE x.v > 100 "
         "AND x.k < m.k) + (SELECT x.v FROM m2 AS x WHERE x.k = m.k) + 100 "
         "WHERE k < 'b'");
  CHECK(db, "SELECT group_concat(k || ':' || v) FROM m WHERE k < 'b'",
        "a:101,az:101");
  /* and a value written with the same timestamp as the cell being read
  ** through the history view replaces it under the reader */
  OK(db, "INSERT INTO m(k, v, _timestamp) SELECT k, to_int64(value) + 1, "
         "_timestamp FROM h WHERE k < 'b' AND qualifier = 'v'");
  OK(db, "COMMIT");
  CHECK(db, "SELECT group_concat(k || ':' || v) FROM m WHERE k < 'b'",
        "a:102,az:102");
  /* a reader SQLite starts again for each outer row (the inner loop of a
  ** join) reads the transaction's writes as of before the statement */
  OK(db, "CREATE TABLE nums(x)");
  OK(db, "INSERT INTO nums VALUES (1), (2), (3)");
  OK(db,
     "CREATE VIRTUAL TABLE j USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE j2 USING wcs(TABLE 'j')");
  OK(db, "INSERT INTO j(k, v) VALUES ('a', 1)");
  OK(db, "INSERT INTO j(k, v) SELECT n.x || a.k, a.v FROM nums n "
         "CROSS JOIN j2 a");
  CHECK(db, "SELECT group_concat(k) FROM j", "1a,2a,3a,a");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO j(k, v) VALUES ('b', 2)");
  OK(db, "INSERT INTO j(k, v) SELECT n.x || a.k, a.v FROM nums n "
         "CROSS JOIN j2 a WHERE a.k GLOB '[ab]'");
  CHECK(db, "SELECT group_concat(k) FROM j", "1a,1b,2a,2b,3a,3b,a,b");
  OK(db, "COMMIT");
  /* a reader frozen by a write, then a ROLLBACK TO: it reads what is left,
  ** as a reader that was never frozen does */
  {
    sqlite3_stmt *pS = NULL;
    char zGot[64] = "";
    OK(db, "DELETE FROM j");
    OK(db, "INSERT INTO j(k, v) VALUES ('b', 1), ('d', 1)");
    OK(db, "BEGIN");
    OK(db, "INSERT INTO j(k, v) VALUES ('a', 1)");
    OK(db, "SAVEPOINT s");
    OK(db, "INSERT INTO j(k, v) VALUES ('c', 1)");
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT k FROM j2", -1, &pS, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(pS), SQLITE_ROW);
    strcat(zGot, (const char *)sqlite3_column_text(pS, 0));
    OK(db, "INSERT INTO j(k, v) VALUES ('x', 1)"); /* freezes it */
    OK(db, "ROLLBACK TO s");
    while (sqlite3_step(pS) == SQLITE_ROW) {
      strcat(zGot, (const char *)sqlite3_column_text(pS, 0));
    }
    ck_assert_int_eq(sqlite3_finalize(pS), SQLITE_OK);
    ck_assert_str_eq(zGot, "abd");
    OK(db, "COMMIT");
  }
  /* single-row statements in a transaction, each prepared anew (at the
  ** address the last one freed, likely): each reads the ones before */
  OK(db,
     "CREATE VIRTUAL TABLE q USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE q2 USING wcs(TABLE 'q')");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO q(k, v) VALUES ('a', (SELECT count(*) FROM q2))");
  OK(db, "INSERT INTO q(k, v) VALUES ('b', (SELECT count(*) FROM q2))");
  OK(db, "INSERT INTO q(k, v) VALUES ('c', (SELECT count(*) FROM q2))");
  CHECK(db, "SELECT group_concat(k || v) FROM q", "a0,b1,c2");
  /* a reader SQLite opens only when first needed, after the statement's
  ** first writes, reads as of before them too */
  OK(db, "CREATE TEMP TABLE src(k)");
  OK(db, "INSERT INTO src VALUES ('d'), ('e'), ('f'), ('g')");
  OK(db, "INSERT INTO q(k, v) SELECT k || 'x', CASE WHEN k = 'f' THEN "
         "(SELECT count(*) FROM q2) ELSE -1 END FROM src");
  CHECK(db, "SELECT v FROM q WHERE k = 'fx'", "3");
  OK(db, "COMMIT");
  CHECK(db, "SELECT count(*) FROM q", "7");
  /* salted: every bucket's reader */
  OK(db, "CREATE VIRTUAL TABLE s USING wcs(KEY (k STRING) SALT 4, "
         "FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE s2 USING wcs(TABLE 's')");
  OK(db, "INSERT INTO s(k, v) VALUES ('p', 1), ('q', 2), ('r', 3), ('t', 4)");
  OK(db, "INSERT INTO s(k, v) SELECT k || k, v FROM s2 ORDER BY k");
  CHECK(db, "SELECT count(*), sum(v) FROM s", "8|20");
  sqlite3_close(db);
}
END_TEST

/* A function that writes a table of another store inside a statement
** that writes a store table (wcs_increment, which ticks that table's
** commit clock with a statement of its own) does not end the statement
** for the readers of another declaration: SQLite starts the subquery
** again for each row, and it reads as of before the statement. */
START_TEST(test_a_nested_clock_tick_keeps_the_statement_moment) {
  TmpDb t;
  sqlite3 *db = tmpDbOpen(&t);
  char *zU = sqlite3_mprintf("CREATE VIRTUAL TABLE u USING wcs(KEY (k STRING), "
                             "FAMILY f (n INT64), STORE '%s/other.wcs')",
                             t.zDir);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (a STRING, b INT64 "
         "DECIMAL(6)), FAMILY f (v INT64, s STRING))");
  OK(db, "CREATE VIRTUAL TABLE t2 USING wcs(TABLE 't')");
  OK(db, zU);
  OK(db, "INSERT INTO t(a, b, v, s) VALUES ('k1', 1, 0, 's'), "
         "('k2', 2, 0, 's'), ('k3', 3, 0, 's'), ('k4', 4, 0, 's')");
  OK(db, "INSERT INTO t(a, b, v, s) SELECT a || 'x', b, (SELECT count(*) "
         "FROM t2 AS y WHERE y.b <= x.b), 's' || wcs_increment('u', "
         "wcs_key_encode('u', 'c'), 'f', 'n', 1) FROM t2 AS x");
  CHECK(db, "SELECT group_concat(v || s) FROM t WHERE a GLOB '*x'",
        "1s1,2s2,3s3,4s4");
  /* the same inside a transaction */
  OK(db, "BEGIN");
  OK(db, "INSERT INTO t(a, b, v, s) SELECT a || 'y', b, (SELECT count(*) "
         "FROM t2 AS y WHERE y.b <= x.b), 's' || wcs_increment('u', "
         "wcs_key_encode('u', 'c'), 'f', 'n', 1) FROM t2 AS x "
         "WHERE a NOT GLOB '*x'");
  OK(db, "COMMIT");
  CHECK(db, "SELECT group_concat(v) FROM t WHERE a GLOB '*y'", "2,4,6,8");
  CHECK(db, "SELECT n FROM u", "8");
  sqlite3_free(zU);
  sqlite3_close(db);
  tmpDbDone(&t);
}
END_TEST

START_TEST(test_savepoints_across_tables) {
  sqlite3 *db = openDb(NULL);
  OK(db,
     "CREATE VIRTUAL TABLE a USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db,
     "CREATE VIRTUAL TABLE b USING wcs(KEY (k STRING), FAMILY f (v INT64))");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO a(k,v) VALUES ('a1', 1)");
  OK(db, "SAVEPOINT s1");
  OK(db, "INSERT INTO b(k,v) VALUES ('b1', 1)"); /* b joins inside s1 */
  OK(db, "INSERT INTO a(k,v) VALUES ('a2', 1)");
  OK(db, "SAVEPOINT s2");
  OK(db, "INSERT INTO a(k,v) VALUES ('a3', 1)");
  OK(db, "ROLLBACK TO s2");
  CHECK(db,
        "SELECT (SELECT group_concat(k) FROM a), "
        "(SELECT group_concat(k) FROM b)",
        "a1,a2|b1");
  OK(db, "ROLLBACK TO s1");
  CHECK(db,
        "SELECT (SELECT group_concat(k) FROM a), "
        "(SELECT group_concat(k) FROM b)",
        "a1|NULL");
  OK(db, "INSERT INTO b(k,v) VALUES ('b2', 1)");
  OK(db, "RELEASE s1");
  OK(db, "COMMIT");
  CHECK(db,
        "SELECT (SELECT group_concat(k) FROM a), "
        "(SELECT group_concat(k) FROM b)",
        "a1|b2");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_failed_statement_leaves_no_partial_rows) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  /* autocommit: the bad third row undoes the first two */
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu) VALUES "
            "('p','a',1,1), ('p','b',1,1), ('p#','c',1,1)",
            "key field \"device\"");
  CHECK(db, "SELECT count(*) FROM metrics", "0");
  /* inside a transaction: only the failed statement is undone */
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','x',1,1)");
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu) VALUES "
            "('p','a',1,1), ('p','b',1,'bad')",
            "cannot store TEXT 'bad'");
  OK(db, "COMMIT");
  CHECK(db, "SELECT id FROM metrics", "x");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_cells_of_one_transaction_share_its_timestamp) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'metrics', HISTORY)");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,mem) VALUES ('p','a',1,1,2)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,3)");
  /* the same column again in the same transaction: the same version */
  OK(db, "UPDATE metrics SET cpu = 4 WHERE id = 'a'");
  OK(db, "COMMIT");
  CHECK(db, "SELECT count(DISTINCT _timestamp), count(*) FROM h", "1|3");
  CHECK(db, "SELECT id, qualifier, value FROM h", "a|cpu|4\na|mem|2\nb|cpu|3");
  CHECK(db,
        "SELECT (SELECT _timestamp FROM metrics WHERE id = 'a') = "
        "(SELECT _timestamp FROM metrics WHERE id = 'b')",
        "1");
  /* an explicit _timestamp still sets its own */
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','c',1,5,77)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','d',1,6)");
  OK(db, "COMMIT");
  CHECK(db, "SELECT _timestamp FROM metrics WHERE id = 'c'", "77");
  /* a later transaction is a later version */
  sqlite3_sleep(3);
  OK(db, "UPDATE metrics SET cpu = 9 WHERE id = 'b'");
  CHECK(db,
        "SELECT group_concat(value) FROM h WHERE id = 'b' AND qualifier = "
        "'cpu'",
        "9,3");
  sqlite3_close(db);
}
END_TEST

/* _timestamp IN (...) on a history view is one read filtered by the list
** (sqlite3_vtab_in): each column's versions stay newest first, latest_n
** counts the cells the list kept, and two lists intersect. SQLite used to
** run one read per value, ascending, with latest_n applied within each. */
START_TEST(test_history_timestamp_in_list_is_one_filtered_read) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'metrics', HISTORY)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,10,5), ('p','a',1,11,7), ('p','a',1,12,9), "
         "('p','b',1,20,5), ('p','b',1,21,8)");
  OK(db, "INSERT INTO metrics(device,id,day,mem,_timestamp) VALUES "
         "('p','a',1,30,9)");
  CHECK(db,
        "SELECT id, qualifier, _timestamp FROM h WHERE _timestamp IN (5, 9, 8)",
        "a|cpu|9\na|cpu|5\na|mem|9\nb|cpu|8\nb|cpu|5");
  CHECK(db, "SELECT id, qualifier, _timestamp FROM h(1) "
            "WHERE _timestamp IN (5, 7)",
        "a|cpu|7\nb|cpu|5");
  CHECK(db, "SELECT id, _timestamp FROM h WHERE latest_n = 1 AND "
            "qualifier = 'cpu' AND _timestamp IN (9, 5)",
        "a|9\nb|5");
  CHECK(db, "SELECT id, qualifier, _timestamp FROM h WHERE _timestamp IN "
            "(5, 7, 9) AND _timestamp IN (7, 9, 8, NULL, 'x', 1.5)",
        "a|cpu|9\na|cpu|7\na|mem|9");
  CHECK(db, "SELECT count(*) FROM h WHERE _timestamp IN (NULL, -3, 2.5)", "0");
  CHECK(db, "SELECT id, _timestamp FROM h WHERE qualifier = 'cpu' AND "
            "_timestamp IN (SELECT 5 UNION SELECT 9) ORDER BY id DESC",
        "b|5\na|9\na|5");
  CHECK(db, "SELECT id, _timestamp FROM h WHERE _timestamp IN ('8', 7.0)",
        "a|7\nb|8");
  /* SQLite also tries the plan without IN lists, cheaper here (a range on
  ** device against a list of unknown length); it must not win, or the
  ** times would filter after latest-N */
  CHECK(db, "SELECT id, qualifier, _timestamp FROM h(1) WHERE _timestamp IN "
            "(5, 7) AND device > 'o' AND device IN ('p', 'q') AND family IN "
            "('stats', 'meta')",
        "a|cpu|7\nb|cpu|5");
  sqlite3_close(db);
}
END_TEST

/* An UPDATE writes the columns it sets and no other: the columns it leaves
** keep their one version (SQLite asks xColumn for them with
** sqlite3_vtab_nochange, which only an UPDATE's scan may skip). Scans
** outside a write transaction never ask, inside one they must. */
START_TEST(test_update_writes_only_the_columns_it_sets) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'metrics', HISTORY)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,mem,meta) VALUES "
         "('p','a',1,1,2,'{\"fw\":\"1\"}'), ('p','b',1,3,4,NULL)");
  CHECK(db, "SELECT sum(cpu), sum(mem) FROM metrics", "4|6");
  sqlite3_sleep(3);
  OK(db, "UPDATE metrics SET cpu = cpu + 10"); /* a full scan */
  sqlite3_sleep(3);
  OK(db, "UPDATE metrics SET cpu = 30 WHERE device = 'p' AND id = 'a' "
         "AND day = 1"); /* a point lookup */
  sqlite3_sleep(3);
  OK(db, "BEGIN");
  CHECK(db, "SELECT count(*) FROM metrics", "2");
  OK(db, "UPDATE metrics SET mem = mem + 1 WHERE id = 'b'");
  OK(db, "COMMIT");
  CHECK(db,
        "SELECT id, qualifier, count(*), group_concat(value) FROM h "
        "GROUP BY id, qualifier ORDER BY id, qualifier",
        "a|cpu|3|30,11,1\na|fw|1|1\na|mem|1|2\nb|cpu|2|13,3\n"
        "b|mem|2|5,4");
  sqlite3_close(db);
}
END_TEST

/* UPDATE ... FROM: SQLite gives the module every column, changed or not,
** _timestamp (the row's newest time) included. The columns that hold the
** row's own values are left alone as in a plain UPDATE: no aggregate is
** folded again, no version is added or overwritten at the row's time. A
** row an earlier FROM row moved away is not written again. */
START_TEST(test_update_from_writes_only_what_changes) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), "
         "FAMILY f (note STRING, v INT64) MAX VERSIONS 5, "
         "FAMILY c (hits INT64) AGGREGATE SUM, FAMILY j)");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  OK(db, "CREATE TABLE m(k TEXT, n TEXT)");
  OK(db, "INSERT INTO m VALUES('a','from'),('b','from')");
  OK(db, "INSERT INTO t(k, note, hits, j) VALUES('a','x',6,'{\"q\":\"w\"}')");
  OK(db, "UPDATE t SET note = m.n FROM m WHERE m.k = t.k");
  CHECK(db, "SELECT note, hits, j FROM t", "from|6|{\"q\":\"w\"}");
  CHECK(db, "SELECT qualifier, count(*) FROM h GROUP BY qualifier",
        "hits|1\nnote|2\nq|1");
  OK(db, "INSERT INTO t(k, v, _timestamp) VALUES('b', 1, 1000)");
  OK(db, "INSERT INTO t(k, v, _timestamp) VALUES('b', 2, 2000)");
  OK(db, "UPDATE t SET v = 3 FROM m WHERE m.k = t.k AND t.k = 'b'");
  CHECK(db, "SELECT value, _timestamp > 2000 FROM h WHERE k = 'b'",
        "3|1\n2|0\n1|0");
  /* an explicit _timestamp other than the row's is still taken */
  OK(db, "UPDATE t SET v = 4, _timestamp = 3000 FROM m WHERE m.k = t.k AND "
         "t.k = 'b'");
  CHECK(db, "SELECT count(*) FROM h WHERE k = 'b' AND _timestamp = 3000", "1");
  OK(db, "CREATE VIRTUAL TABLE u USING wcs(KEY (k INT64), FAMILY f (v INT64))");
  OK(db, "INSERT INTO u(k, v) VALUES(1, 10)");
  OK(db, "CREATE TABLE mv(k INT, nk INT)");
  OK(db, "INSERT INTO mv VALUES(1, 100), (1, 200)");
  OK(db, "UPDATE u SET k = mv.nk FROM mv WHERE mv.k = u.k");
  CHECK(db, "SELECT count(*), sum(v) FROM u", "1|10");
  sqlite3_close(db);
}
END_TEST

/* More of UPDATE ... FROM: a row several FROM rows match is written once
** (SQLite hands every match over, each with the values read before the
** first was written: one applies, as SQLite's own tables take one); an
** HLL column the statement does not set keeps its count; a declared
** column set to a new value beside its family's JSON wins as in a plain
** UPDATE (one holding its own value counts as not set); and a
** row that fails undoes the statement's earlier rows inside a
** transaction too (SQLite takes no statement savepoint on this path). */
START_TEST(test_update_from_matches_hll_and_failures) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k INT64), FAMILY f (s STRING, "
         "v INT64) MAX VERSIONS 9, FAMILY h (vis BYTES) AGGREGATE HLL)");
  OK(db, "CREATE VIRTUAL TABLE th USING wcs(TABLE 't', HISTORY)");
  OK(db, "CREATE TABLE src(k INT, nv)");
  OK(db, "INSERT INTO t(k, s, v, vis, _timestamp) VALUES (1, 'x', 1, 'a', "
         "1000), (2, 'y', 2, 'b', 1000)");
  OK(db, "INSERT INTO t(k, vis, _timestamp) VALUES (1, 'c', 1000)");
  OK(db, "INSERT INTO src VALUES (1, 5), (1, 6)");
  OK(db, "UPDATE t SET s = NULL FROM src WHERE t.k = src.k");
  CHECK(db, "SELECT k, s, v, wcs_hll_count(vis) FROM t", "1|NULL|1|2\n2|y|2|1");
  OK(db, "UPDATE t SET v = src.nv FROM src WHERE t.k = src.k");
  CHECK(db, "SELECT count(*) FROM th WHERE k = 1 AND qualifier = 'v'", "2");
  CHECK(db, "SELECT v IN (5, 6), wcs_hll_count(vis) FROM t WHERE k = 1", "1|2");
  OK(db, "UPDATE t SET s = 'y', f = '{\"s\":null,\"v\":7}' FROM src "
         "WHERE t.k + 1 = src.k + 1 AND src.nv = 5");
  CHECK(db, "SELECT s, v FROM t WHERE k = 1", "y|7");
  OK(db, "DELETE FROM src");
  OK(db, "INSERT INTO src VALUES (1, 11), (2, 'twelve')");
  OK(db, "BEGIN");
  CHECK_ERR(db, "UPDATE t SET v = src.nv FROM src WHERE t.k = src.k",
            "cannot store TEXT 'twelve'");
  CHECK(db, "SELECT k, v FROM t", "1|7\n2|2");
  CHECK_ERR(db, "UPDATE t SET k = 2 FROM src WHERE t.k = src.k",
            "UNIQUE constraint failed");
  CHECK(db, "SELECT k, v FROM t", "1|7\n2|2");
  OK(db, "COMMIT");
  CHECK(db, "SELECT k, v FROM t", "1|7\n2|2");
  /* many rows, each matched twice: one version each */
  OK(db, "DELETE FROM src");
  OK(db, "INSERT INTO t(k, v) WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL "
         "SELECT i + 1 FROM n WHERE i < 309) SELECT i, i FROM n");
  OK(db, "INSERT INTO src SELECT k, v + 1000 FROM t WHERE k >= 10 UNION ALL "
         "SELECT k, v + 2000 FROM t WHERE k >= 10");
  OK(db, "UPDATE t SET v = src.nv FROM src WHERE t.k = src.k");
  CHECK(db, "SELECT count(*), sum(v - k IN (1000, 2000)) FROM t WHERE k >= 10",
        "300|300");
  CHECK(db, "SELECT count(*) FROM th WHERE k >= 10 AND qualifier = 'v'", "600");
  sqlite3_close(db);
}
END_TEST

/* Rows written in one transaction in key order, in reverse, shuffled, with
** the same row written twice, and across a failed statement: the result is
** the last write of each cell whatever order the commit used. */
START_TEST(test_write_order_in_a_transaction_does_not_change_the_result) {
  sqlite3 *db = openDb(NULL);
  static const int aPerm[12] = {7, 2, 11, 0, 5, 9, 3, 10, 1, 6, 8, 4};
  char zSql[200];
  int i, pass;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING, n INT64 DECIMAL(4)), "
         "FAMILY s (a INT64, b STRING), FAMILY m (c STRING))");
  for (pass = 0; pass < 3; pass++) {
    OK(db, "DELETE FROM t");
    OK(db, "BEGIN");
    for (i = 0; i < 12; i++) {
      int n = pass == 0 ? i : pass == 1 ? 11 - i : aPerm[i];
      sqlite3_snprintf(sizeof zSql, zSql,
                       "INSERT INTO t(k,n,a,b,c) VALUES ('r', %d, %d, 'x%d', "
                       "'y%d')",
                       n, n, n, n);
      OK(db, zSql);
    }
    /* the same row again, and a failed statement in between */
    OK(db, "INSERT INTO t(k,n,a) VALUES ('r', 3, 300)");
    CHECK_ERR(db, "INSERT INTO t(k,n,a) VALUES ('r', 20, 1), ('r', 21, 'no')",
              "cannot store");
    OK(db, "INSERT INTO t(k,n,c) VALUES ('r', 5, 'late')");
    OK(db, "COMMIT");
    CHECK(db,
          "SELECT group_concat(n || ':' || a || ':' || b || ':' || c, ' ') "
          "FROM t",
          "0:0:x0:y0 1:1:x1:y1 2:2:x2:y2 3:300:x3:y3 4:4:x4:y4 "
          "5:5:x5:late 6:6:x6:y6 7:7:x7:y7 8:8:x8:y8 9:9:x9:y9 "
          "10:10:x10:y10 11:11:x11:y11");
  }
  /* in key order with a rollback to the start and more rows after it */
  OK(db, "DELETE FROM t");
  OK(db, "BEGIN");
  OK(db, "SAVEPOINT s");
  OK(db, "INSERT INTO t(k,n,a,c) VALUES ('r', 5, 5, 'c5'), ('r', 6, 6, 'c6')");
  OK(db, "ROLLBACK TO s");
  OK(db, "INSERT INTO t(k,n,a,c) VALUES ('r', 1, 1, 'c1'), ('r', 2, 2, 'c2')");
  OK(db, "COMMIT");
  CHECK(db, "SELECT group_concat(n || ':' || a || ':' || c, ' ') FROM t",
        "1:1:c1 2:2:c2");
  sqlite3_close(db);
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

START_TEST(test_bad_key_values_name_field_and_byte) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu) VALUES "
            "('ph!one','a',1,1)",
            "key field \"device\" holds byte 0x21 at offset 2");
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu) VALUES "
            "('p','a',123456789,1)",
            "DECIMAL(8)");
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu) VALUES "
            "('p','a','x',1)",
            "key field day is INT64");
  CHECK_ERR(db,
            "INSERT INTO metrics(device,id,day,cpu) VALUES "
            "(NULL,'a',1,1)",
            "NOT NULL constraint failed: metrics.device");
  /* each is a constraint error: INSERT OR IGNORE skips those rows and
  ** keeps the others, as SQLite does for NOT NULL and STRICT types */
  OK(db, "INSERT OR IGNORE INTO metrics(device,id,day,cpu) VALUES "
         "(NULL,'a',1,1), ('p','a','x',2), ('ph!one','a',1,3), "
         "('p','a',123456789,4), ('p','a',1,5)");
  CHECK(db, "SELECT device, id, day, cpu FROM metrics", "p|a|1|5");
  sqlite3_close(db);
}
END_TEST

/* A database file whose store other programs write to as well: raw()
** writes stats:cpu = 1 (8 bytes, big-endian) under a row key that need not
** follow the table's schema, through the engine's C API, as a program that
** does not know the schema would. The SQL connection is closed for it (the
** store is locked by the process holding it open) and opened again. */
typedef struct RawDb {
  const char *zDir;
  char *zDb, *zStore;
  sqlite3 *db;
} RawDb;

static void rawOpen(RawDb *r) {
  r->zDir = tu_tmpdir("vtab");
  r->zDb = sqlite3_mprintf("%s/app.db", r->zDir);
  r->zStore = sqlite3_mprintf("%s/app.db.wcs", r->zDir);
  r->db = openDb(r->zDb);
}

static void raw(RawDb *r, const void *pRow, size_t nRow) {
  static const uint8_t aOne[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  wcs_engine *pEng = NULL;
  wcs_table *pTab = NULL;
  wcs_txn *pTxn = NULL;
  sqlite3_close(r->db);
  ck_assert_int_eq(wcs_engine_open_path(&pEng, r->zStore, NULL, NULL), WCS_OK);
  ck_assert_int_eq(wcs_table_open(pEng, "metrics", &pTab), WCS_OK);
  ck_assert_int_eq(wcs_txn_begin(pEng, 0, &pTxn), WCS_OK);
  ck_assert_int_eq(wcs_txn_set_cell(pTxn, pTab, pRow, nRow, "stats", "cpu", 3,
                                    WCS_TS_NOW, aOne, 8),
                   WCS_OK);
  ck_assert_int_eq(wcs_txn_commit(pTxn), WCS_OK);
  wcs_txn_free(pTxn);
  wcs_table_close(pTab);
  wcs_engine_close(pEng);
  r->db = openDb(r->zDb);
}
#define RAW(r, z) raw(r, z, sizeof(z) - 1)

static void rawClose(RawDb *r) {
  sqlite3_close(r->db);
  tu_rmrf(r->zDir);
  sqlite3_free(r->zDb);
  sqlite3_free(r->zStore);
}

START_TEST(test_undecodable_row_key_is_an_error_naming_it) {
  RawDb r;
  sqlite3 *db;
  rawOpen(&r);
  db = r.db;
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  /* a raw write of a key that does not follow the schema */
  RAW(&r, "p#zz");
  db = r.db;
  CHECK_ERR(db, "SELECT * FROM metrics", "p#zz");
  CHECK_ERR(db, "SELECT id, cpu FROM metrics WHERE device = 'p'", "p#zz");
  CHECK_ERR(db, "SELECT device, count(*) FROM metrics GROUP BY 1", "p#zz");
  CHECK_ERR(db, "SELECT count(*) FROM metrics WHERE day > 0", "p#zz");
  CHECK_ERR(db, "SELECT count(*) FROM metrics WHERE id LIKE 'Z%'", "p#zz");
  /* a statement that names no key field sees the row as stored; one
  ** whose term on a field the key range takes meets it all the same */
  CHECK(db, "SELECT count(*), sum(cpu) FROM metrics", "2|2");
  CHECK_ERR(db, "SELECT count(*), sum(cpu) FROM metrics WHERE device = 'p'",
            "p#zz");
  CHECK(db, "SELECT _key FROM metrics WHERE cpu = 1 ORDER BY _key DESC",
        "x'70237A7A'\nx'702361233030303030303031'");
  /* rows outside the bad key's range still read */
  CHECK(db, "SELECT cpu FROM metrics WHERE device = 'p' AND id = 'a'", "1");
  /* and the bad row can be removed by its key */
  OK(db, "DELETE FROM metrics WHERE _key = 'p#zz'");
  CHECK(db, "SELECT id, cpu FROM metrics", "a|1");
  /* keys that share the head of the good row before them in the scan,
  ** where a scan reading only the last field takes it from that row's
  ** split: a delimiter in the tail, one digit too many */
  RAW(&r, "p#a#0000#001");
  db = r.db;
  CHECK_ERR(db, "SELECT day FROM metrics", "p#a#0000#001");
  CHECK_ERR(db, "SELECT max(day) FROM metrics WHERE device = 'p'",
            "p#a#0000#001");
  OK(db, "DELETE FROM metrics WHERE _key = 'p#a#0000#001'");
  RAW(&r, "p#a#000000012");
  db = r.db;
  CHECK_ERR(db, "SELECT day FROM metrics", "p#a#000000012");
  OK(db, "DELETE FROM metrics WHERE _key = 'p#a#000000012'");
  /* a head as long as the good row's, but with a field too many */
  RAW(&r, "q###00000002");
  db = r.db;
  CHECK_ERR(db, "SELECT day FROM metrics", "q###00000002");
  OK(db, "DELETE FROM metrics WHERE _key = 'q###00000002'");
  CHECK(db, "SELECT id, day, cpu FROM metrics", "a|1|1");
  rawClose(&r);
}
END_TEST

/* A statement that names a key field decodes every key it meets whole,
** whichever fields it reads: a field that does not decode is an error for
** it, as in GoogleSQL; one that names none reads the row as stored. */
START_TEST(test_key_fields_named_decode_the_whole_key) {
  RawDb r;
  sqlite3 *db;
  rawOpen(&r);
  OK(r.db, zMetrics);
  /* device is not UTF-8; id and day are fine */
  RAW(&r, "p\xC3#a#00000001");
  db = r.db;
  CHECK(db, "SELECT cpu, count(*) FROM metrics", "1|1");
  CHECK(db, "SELECT length(_key) FROM metrics WHERE cpu = 1", "13");
  CHECK_ERR(db, "SELECT day, cpu FROM metrics", "invalid UTF-8");
  CHECK_ERR(db, "SELECT id FROM metrics WHERE day = 1", "invalid UTF-8");
  CHECK_ERR(db, "SELECT count(*) FROM metrics WHERE id = 'a' AND day > 0",
            "invalid UTF-8");
  CHECK_ERR(db, "SELECT device FROM metrics", "invalid UTF-8");
  CHECK_ERR(db, "SELECT day FROM metrics WHERE length(device) > 0",
            "invalid UTF-8");
  CHECK_ERR(db, "SELECT * FROM metrics", "invalid UTF-8");
  /* the same row read again after an error decodes from scratch */
  CHECK_ERR(db, "SELECT day FROM metrics ORDER BY day DESC", "invalid UTF-8");
  OK(db, "DELETE FROM metrics WHERE _key = CAST(X'70C32361233030303030303031' "
         "AS BLOB)");
  CHECK(db, "SELECT count(*) FROM metrics", "0");
  rawClose(&r);
}
END_TEST

/* ---- history ----------------------------------------------------------- */

START_TEST(test_history_view_lists_every_version) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE metrics_history USING wcs(TABLE 'metrics', "
         "HISTORY)");
  CHECK(db, "SELECT name, hidden FROM pragma_table_xinfo('metrics_history')",
        "device|0\nid|0\nday|0\nfamily|0\nqualifier|0\n_timestamp|0\n"
        "value|0\nlatest_n|1\n_key|1\n_cell|1");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,10,100), ('p','b',1,20,100)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,11,200)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,mem,_timestamp) VALUES "
         "('p','a',1,12,5,300)");
  CHECK(db,
        "SELECT id, family, qualifier, _timestamp, value "
        "FROM metrics_history WHERE device = 'p' AND id = 'a'",
        "a|stats|cpu|300|12\na|stats|cpu|200|11\na|stats|cpu|100|10\n"
        "a|stats|mem|300|5");
  /* latest_n, as an argument or a constraint */
  CHECK(db,
        "SELECT id, _timestamp FROM metrics_history(2) "
        "WHERE qualifier = 'cpu'",
        "a|300\na|200\nb|100");
  /* time range and as-of */
  CHECK(db,
        "SELECT id, value FROM metrics_history "
        "WHERE _timestamp >= 150 AND _timestamp < 300",
        "a|11");
  CHECK(db,
        "SELECT id, value FROM metrics_history "
        "WHERE _timestamp <= 250 AND latest_n = 1 AND qualifier = 'cpu'",
        "a|11\nb|20");
  CHECK(db, "SELECT value FROM metrics_history WHERE family = 'meta'", "");
  CHECK_ERR(db, "DELETE FROM metrics_history", "read-only");
  /* an UPDATE names every column, latest_n too: refused as a write */
  CHECK_ERR(db, "UPDATE metrics_history SET value = 3", "read-only");
  CHECK_ERR(db, "UPDATE metrics_history SET value = 3 WHERE id = 'a'",
            "read-only");
  CHECK_ERR(db, "INSERT INTO metrics_history(value) VALUES (1)", "read-only");
  CHECK_ERR(db, "SELECT * FROM metrics_history(0)",
            "latest_n must be a positive integer");
  /* MAX VERSIONS 3 holds at read time */
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,13,400)");
  CHECK(db,
        "SELECT group_concat(value) FROM metrics_history "
        "WHERE id = 'a' AND qualifier = 'cpu'",
        "13,12,11");
  CHECK_ERR(db,
            "CREATE VIRTUAL TABLE bad USING wcs(TABLE 'metrics', "
            "HISTORY, FAMILY x)",
            "HISTORY view takes no KEY or FAMILY");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE bad USING wcs(HISTORY)",
            "a HISTORY view shows an existing table: name it with TABLE");
  /* a signed number says what the clause takes */
  CHECK_ERR(db, "CREATE VIRTUAL TABLE bad USING wcs(FAMILY f MAX VERSIONS -1)",
            "near \"-\": unrecognized token; the numbers of these clauses "
            "are whole numbers without a sign");
  /* a key field named like a column of the view is named in the error */
  OK(db, "CREATE VIRTUAL TABLE kv USING wcs(KEY (Family STRING, "
         "value INT64 DECIMAL(2)), FAMILY f)");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE kvh USING wcs(TABLE 'kv', HISTORY)",
            "kvh: key field \"Family\" of store table 'kv' has the name of a "
            "column of every history view");
  sqlite3_close(db);
}
END_TEST

/* ---- functions --------------------------------------------------------- */

START_TEST(test_key_functions) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  CHECK(db, "SELECT wcs_key_encode('metrics', 'phone', '4c41', 20200501)",
        "x'70686F6E652334633431233230323030353031'");
  CHECK(db,
        "SELECT wcs_key_decode('metrics', "
        "CAST('phone#4c41#20200501' AS BLOB))",
        "[\"phone\",\"4c41\",20200501]");
  CHECK_ERR(db, "SELECT wcs_key_decode('metrics', 'phone#4c41')", "phone#4c41");
  CHECK_ERR(db, "SELECT wcs_key_encode('metrics', 'phone', 1)",
            "3 key fields; 2 values given");
  CHECK_ERR(db, "SELECT wcs_key_encode('nosuch', 1)", "no wcs table");
  /* a key INSERT would refuse is refused here too; a table without a key
  ** schema says so */
  OK(db, "CREATE VIRTUAL TABLE s USING wcs(KEY (k STRING), FAMILY f)");
  OK(db, "CREATE VIRTUAL TABLE r USING wcs(FAMILY f)");
  CHECK_ERR(db, "SELECT wcs_key_encode('s', '')",
            "s: a row key cannot be empty");
  CHECK(db, "SELECT wcs_key_encode('s', 'a')", "x'61'");
  CHECK_ERR(db, "SELECT wcs_key_encode('r')", "table r has no key schema");
  /* JSON results nest in SQLite's JSON functions as arrays, not strings */
  OK(db, "INSERT INTO metrics(device, id, day, cpu) VALUES ('p', 'a', 7, 1)");
  CHECK(db,
        "SELECT json_object('k', wcs_key_decode('metrics', _key), "
        "'q', map_keys(stats), 's', json_type(wcs_stats('metrics'))) "
        "FROM metrics",
        "{\"k\":[\"p\",\"a\",7],\"q\":[\"cpu\"],\"s\":\"object\"}");
  CHECK(db, "SELECT json_array(wcs_stats('metrics')) ->> '$[0].table'",
        "metrics");
  sqlite3_close(db);
}
END_TEST

/* The functions that name a table find the one SQL means by that name:
** temp before main before attached databases, whichever was connected
** first; "schema.table" picks one. */
START_TEST(test_functions_find_the_table_sql_names) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zAttach = sqlite3_mprintf("ATTACH '%s/aux.db' AS aux", zDir);
  sqlite3 *db = openDb(zDb);
  OK(db, zMetrics);
  OK(db, zAttach);
  OK(db, "CREATE VIRTUAL TABLE aux.metrics USING wcs(KEY (k STRING), "
         "FAMILY f)");
  CHECK(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  CHECK(db, "SELECT wcs_key_encode('aux.metrics', 'a')", "x'61'");
  CHECK(db, "SELECT wcs_key_encode('MAIN.Metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  CHECK_ERR(db, "SELECT wcs_key_encode('nosuch.metrics', 'a')",
            "no wcs table named 'nosuch.metrics'");
  OK(db, "CREATE VIRTUAL TABLE temp.metrics USING wcs(KEY (a STRING, "
         "b STRING), FAMILY f)");
  CHECK(db, "SELECT wcs_key_encode('metrics', 'a', 'b')", "x'612362'");
  OK(db, "DROP TABLE temp.metrics");
  CHECK(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  /* a native temp table of that name is what SQL means by it: the
  ** functions say so instead of using main.metrics behind it */
  OK(db, "CREATE TEMP TABLE metrics(x)");
  CHECK_ERR(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
            "'metrics' is temp.metrics, which is not a wcs table; name "
            "the wcs table with its schema, as 'main.metrics'");
  CHECK_ERR(db, "SELECT wcs_stats('Metrics')", "not a wcs table");
  CHECK(db, "SELECT wcs_key_encode('main.metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  OK(db, "DROP TABLE temp.metrics");
  OK(db, "CREATE TEMP VIEW metrics AS SELECT 1");
  CHECK_ERR(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
            "not a wcs table");
  OK(db, "DROP VIEW temp.metrics");
  CHECK(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  sqlite3_close(db);
  /* a new connection that used the attached table first */
  db = openDb(zDb);
  OK(db, zAttach);
  CHECK(db, "SELECT count(*) FROM aux.metrics", "0");
  CHECK(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  /* behind a native temp table, the one to name is main's (searched
  ** before aux), whichever was connected first */
  OK(db, "CREATE TEMP TABLE metrics(x)");
  CHECK_ERR(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
            "name the wcs table with its schema, as 'main.metrics'");
  OK(db, "DROP TABLE temp.metrics");
  sqlite3_close(db);
  sqlite3_free(zDb);
  sqlite3_free(zAttach);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_value_functions) {
  sqlite3 *db = openDb(NULL);
  CHECK(db,
        "SELECT to_int64(x'00000000000001F4'), "
        "to_int64(x'FFFFFFFFFFFFFFFF'), to_float64(x'3FF8000000000000'), "
        "to_int64(NULL)",
        "500|-1|1.5|NULL");
  CHECK_ERR(db, "SELECT to_int64(x'0102')", "expected 8 bytes, got 2");
  /* a family column shows bytes that are not text as {"$hex": ...}: that
  ** JSON stands for its bytes (GoogleSQL's TO_INT64(cf['q']) habit) */
  OK(db, "CREATE VIRTUAL TABLE cnt USING wcs(KEY (k STRING), FAMILY f, "
         "FAMILY u AGGREGATE HLL)");
  CHECK(db, "SELECT wcs_increment('cnt', 'a', 'f', 'hits', 41)", "41");
  CHECK(db, "SELECT wcs_increment('cnt', 'a', 'f', 'hits', 1)", "42");
  OK(db, "INSERT INTO cnt(k, f) VALUES ('a', '{\"ratio\": 0.25}')");
  OK(db, "INSERT INTO cnt(k, u) VALUES ('a', '{\"who\": \"x\"}'), "
         "('a', '{\"who\": \"y\"}'), ('a', '{\"who\": \"x\"}')");
  CHECK(db,
        "SELECT f ->> 'hits', to_int64(f -> 'hits'), to_int64(f ->> 'hits'), "
        "to_float64(f -> 'ratio'), wcs_hll_count(u -> 'who') FROM cnt",
        "{\"$hex\":\"000000000000002a\"}|42|42|0.25|2");
  CHECK(db,
        "SELECT to_int64(' { \"$hex\" : \"FFFFFFFFFFFFFFFE\" } '), "
        "to_int64('{\"$hex\":\"0000000000000001\"}')",
        "-2|1");
  CHECK_ERR(db, "SELECT to_int64('{\"$hex\":\"0102\"}')",
            "to_int64: expected 8 bytes, got 2");
  /* text that is not exactly one $hex object is its own bytes */
  CHECK_ERR(db, "SELECT to_int64('{\"$hex\":\"0g\"}')",
            "to_int64: expected 8 bytes, got 13");
  CHECK_ERR(db, "SELECT to_int64('{\"$hex\":\"0000000000000001\",\"a\":1}')",
            "expected 8 bytes, got 33");
  CHECK(db, "SELECT to_int64('12345678')", "3544952156018063160");
  /* JSON numbers (the JSON subtype's TEXT, as -> gives them) are numbers:
  ** an aggregate cell, a number inside a declared JSON column */
  OK(db, "CREATE VIRTUAL TABLE agg USING wcs(KEY (k STRING), "
         "FAMILY c AGGREGATE SUM, FAMILY j (doc JSON))");
  OK(db, "INSERT INTO agg(k, c, doc) VALUES ('a', '{\"hits\": 5}', "
         "'{\"x\": 2.5, \"n\": -3, \"s\": \"12\"}')");
  OK(db, "INSERT INTO agg(k, c) VALUES ('a', '{\"hits\": 7}')");
  CHECK(db,
        "SELECT c -> 'hits', to_int64(c -> 'hits'), to_float64(c -> 'hits'), "
        "to_float64(doc -> 'x'), to_int64(doc -> 'n'), "
        "to_int64(json('4')) FROM agg",
        "12|12|12.0|2.5|-3|4");
  CHECK_ERR(db, "SELECT to_int64(doc -> 'x') FROM agg",
            "not a whole number in INT64's range");
  /* a JSON string is not a number, nor is TEXT without the subtype: a
  ** string stands for its bytes, as a family column shows a cell whose
  ** bytes are text (here an 8-byte counter of 0x41 bytes, "AAAAAAAA") */
  CHECK_ERR(db, "SELECT to_int64(doc -> 's') FROM agg",
            "expected 8 bytes, got 2");
  OK(db, "INSERT INTO cnt(k, f) VALUES ('b', "
         "'{\"hits\": 4702111234474983745, \"esc\": \"\\udcff\\u0001\"}')");
  CHECK(db,
        "SELECT f -> 'hits', to_int64(f -> 'hits'), to_int64(f ->> 'hits'), "
        "to_float64(f -> 'hits') > 0, quote(f -> 'esc') FROM cnt WHERE k = 'b'",
        "\"AAAAAAAA\"|4702111234474983745|4702111234474983745|1|"
        "'{\"$hex\":\"ff01\"}'");
  CHECK_ERR(db, "SELECT to_int64('12')", "expected 8 bytes, got 2");
  /* numbers are taken as they are: declared columns read as numbers */
  CHECK(db,
        "SELECT to_int64(7), to_int64(-3.0), to_float64(2), to_float64(0.5)",
        "7|-3|2.0|0.5");
  CHECK_ERR(db, "SELECT to_int64(2.5)", "not a whole number in INT64's range");
  CHECK_ERR(db, "SELECT to_int64(1e30)", "not a whole number in INT64");
  /* -2^63 as a REAL is what a literal past the range rounds to */
  CHECK_ERR(db, "SELECT to_int64(-9223372036854775809)",
            "the REAL -2^63 is also what -9223372036854775809 rounds to: "
            "pass the INTEGER -9223372036854775808");
  CHECK(db, "SELECT to_int64(-9223372036854774784.0)", "-9223372036854774784");
  CHECK(db,
        "SELECT starts_with('phone#1', 'phone'), "
        "starts_with(x'0001', x'00'), starts_with('a', 'ab'), "
        "starts_with(NULL, 'a')",
        "1|1|0|NULL");
  CHECK(db, "SELECT map_keys('{\"b\":1,\"a\":{\"x\":2}}')", "[\"b\",\"a\"]");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_write_functions) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES "
         "('t1','a',1,1), ('t1','b',1,1), ('t2','a',1,1)");
  CHECK(db,
        "SELECT wcs_increment('metrics', "
        "wcs_key_encode('metrics','t2','a',1), 'stats', 'cpu', 41)",
        "42");
  CHECK(db, "SELECT wcs_delete_prefix('metrics', 't1#')", "1");
  CHECK(db, "SELECT device, id, cpu FROM metrics", "t2|a|42");
  /* salted: the prefix is of the key after its bucket byte, and the rows
  ** go in every bucket (a tenant's rows hash to all of them) */
  OK(db, "CREATE VIRTUAL TABLE s USING wcs(KEY (a STRING, b STRING) SALT 4, "
         "FAMILY f (v INT64))");
  OK(db, "INSERT INTO s(a, b, v) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
         "SELECT i + 1 FROM c WHERE i < 40) SELECT 'ab', i, i FROM c");
  OK(db, "INSERT INTO s(a, b, v) VALUES ('abc', '1', 100), ('ac', '1', 200)");
  CHECK(db, "SELECT count(DISTINCT substr(_key, 1, 1)) FROM s WHERE a = 'ab'",
        "4");
  CHECK(db, "SELECT wcs_delete_prefix('s', 'ab#')", "1");
  CHECK(db, "SELECT a, b, v FROM s ORDER BY a", "abc|1|100\nac|1|200");
  /* a row key the schema cannot decode is refused, as an INSERT's _key
  ** is: it would make every later read of the table fail */
  CHECK_ERR(db, "SELECT wcs_increment('metrics', 't9#zz', 'stats', 'cpu', 5)",
            "does not match the key schema");
  /* an increment of a value that is not 8 bytes names the column */
  OK(db, "INSERT INTO metrics(device,id,day,meta) VALUES "
         "('t2','a',1,'{\"fw\":\"1.2\"}')");
  CHECK_ERR(db,
            "SELECT wcs_increment('metrics', "
            "wcs_key_encode('metrics','t2','a',1), 'meta', 'fw', 1)",
            "column meta:fw: the value has 3 bytes");
  CHECK(db, "SELECT device, id, cpu FROM metrics", "t2|a|42");
  /* a declared column whose type is not an 8-byte big-endian INT64 is
  ** refused by name, before anything is read or written: adding to the
  ** bits of a FLOAT64, or writing 8 bytes into a DECIMAL column that
  ** cannot read them, would change the value silently */
  OK(db, "INSERT INTO metrics(device,id,day,load) VALUES ('t2','a',1,1.5)");
  CHECK_ERR(db,
            "SELECT wcs_increment('metrics', "
            "wcs_key_encode('metrics','t2','a',1), 'stats', 'load', 1)",
            "column stats:load is FLOAT64");
  CHECK(db, "SELECT load FROM metrics", "1.5");
  OK(db, "CREATE VIRTUAL TABLE dec USING wcs(KEY (k STRING), "
         "FAMILY f (d INT64 DECIMAL(4), s STRING, j JSON, b BYTES))");
  CHECK_ERR(db, "SELECT wcs_increment('dec', 'r', 'f', 'd', 1)",
            "column f:d is INT64 DECIMAL(4)");
  CHECK_ERR(db, "SELECT wcs_increment('dec', 'r', 'f', 's', 1)",
            "column f:s is STRING");
  CHECK_ERR(db, "SELECT wcs_increment('dec', 'r', 'f', 'j', 1)",
            "column f:j is JSON");
  CHECK_ERR(db, "SELECT wcs_increment('dec', 'r', 'f', 'b', 1)",
            "column f:b is BYTES");
  CHECK(db, "SELECT count(*) FROM dec", "0");
  /* an undeclared qualifier of the same family is a counter */
  CHECK(db, "SELECT wcs_increment('dec', 'r', 'f', 'n', 2)", "2");
  /* inside a transaction that writes the store, they roll back with it */
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('t3','a',1,1)");
  CHECK(db,
        "SELECT wcs_increment('metrics', "
        "wcs_key_encode('metrics','t2','a',1), 'stats', 'cpu', 1)",
        "43");
  OK(db, "ROLLBACK");
  CHECK(db, "SELECT device, cpu FROM metrics", "t2|42");
  CHECK(db, "SELECT wcs_compact('metrics'), wcs_compact()", "ok|ok");
  CHECK(db,
        "SELECT json_valid(wcs_stats('metrics')), "
        "wcs_stats('metrics') ->> '$.families[0].name', "
        "json_valid(wcs_stats())",
        "1|stats|1");
  {
    /* wcs_compact() compacts the store once, not once per table (the
    ** tables share its files): a rewrite of each level at most */
    int i;
    for (i = 0; i < 40; i++) {
      char z[160];
      sqlite3_snprintf(sizeof z, z,
                       "CREATE VIRTUAL TABLE x%d USING wcs(FAMILY f); "
                       "INSERT INTO x%d(_key, f) VALUES ('k', '{\"q\":\"v\"}')",
                       i, i);
      OK(db, z);
    }
    OK(db, "CREATE TEMP TABLE before AS SELECT wcs_stats('x0') ->> "
           "'$.store.stats.compactions' AS n");
    CHECK(db, "SELECT wcs_compact()", "ok");
    CHECK(db,
          "SELECT (wcs_stats('x0') ->> '$.store.stats.compactions') - n "
          "BETWEEN 1 AND 7 FROM before",
          "1");
  }
  sqlite3_close(db);
}
END_TEST

/* ---- stores, attaching, dropping ---------------------------------------- */

START_TEST(test_table_clause_attaches_and_drop_rule) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  /* TABLE 'name' alone attaches with the stored schema */
  OK(db, "CREATE VIRTUAL TABLE m2 USING wcs(TABLE 'metrics')");
  CHECK(db, "SELECT device, cpu FROM m2", "p|1");
  /* declaring a schema over an existing store table is refused */
  CHECK_ERR(db,
            "CREATE VIRTUAL TABLE m3 USING wcs(TABLE 'metrics', "
            "KEY (a STRING), FAMILY f)",
            "already exists");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE m4 USING wcs(TABLE 'nosuch')",
            "no store table 'nosuch'");
  /* dropping an attachment keeps the data */
  OK(db, "DROP TABLE m2");
  CHECK(db, "SELECT cpu FROM metrics", "1");
  /* dropping the defining table drops the store table; attachments and
  ** history views of it then fail, reading as well as writing, also once
  ** a new table of that name exists */
  OK(db, "CREATE VIRTUAL TABLE m5 USING wcs(TABLE 'metrics')");
  OK(db, "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'metrics', HISTORY)");
  CHECK(db, "SELECT (SELECT count(*) FROM m5), (SELECT count(*) FROM mh)",
        "1|1");
  OK(db, "DROP TABLE metrics");
  CHECK(db, "SELECT wcs_stats() ->> '$.stores[0].tables'", "[]");
  CHECK_ERR(db, "SELECT count(*) FROM m5",
            "store table 'metrics' is missing (dropped since this connection "
            "opened it); DROP TABLE m5 removes this declaration");
  CHECK_ERR(db, "SELECT count(*) FROM mh", "store table 'metrics' is missing");
  CHECK_ERR(db, "INSERT INTO m5(device,id,day,cpu) VALUES ('p','a',1,1)",
            "store table 'metrics' is missing");
  /* and the functions naming them say the same */
  CHECK_ERR(db, "SELECT wcs_stats('m5')",
            "wcs_stats: m5: store table 'metrics' is missing (dropped since "
            "this connection opened it); DROP TABLE m5 removes this "
            "declaration");
  CHECK_ERR(db, "SELECT wcs_compact('mh')",
            "wcs_compact: mh: store table 'metrics' is missing");
  CHECK_ERR(db, "SELECT wcs_alter('m5', 'FAMILY g')",
            "wcs_alter: m5: store table 'metrics' is missing");
  OK(db, zMetrics);
  CHECK(db, "SELECT count(*) FROM metrics", "0");
  CHECK_ERR(db, "SELECT cpu FROM m5 WHERE device = 'p'",
            "store table 'metrics' was dropped and created again since this "
            "connection opened it; open the database again to use the new "
            "table, or DROP TABLE m5 to remove this declaration");
  CHECK_ERR(db, "INSERT INTO m5(device,id,day,cpu) VALUES ('p','a',1,1)",
            "was dropped and created again");
  OK(db, "DROP TABLE m5");
  OK(db, "DROP TABLE mh");
  CHECK_ERR(db, "ALTER TABLE metrics RENAME TO m9", "cannot rename");
  sqlite3_close(db);
}
END_TEST

/* Attaching where no store was ever made (a fresh in-memory database, a
** database file without its store directory) is "no store table", not a
** failure to open the store; nothing is created on the way. */
START_TEST(test_attaching_without_a_store_says_no_table) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs", zDir);
  sqlite3 *db = openDb(NULL);
  FILE *f;
  CHECK_ERR(db, "CREATE VIRTUAL TABLE m USING wcs(TABLE 'metrics')",
            "no store table 'metrics' in the in-memory store; declare its "
            "KEY and FAMILY");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'metrics', HISTORY)",
            "no store table 'metrics' in the in-memory store; a HISTORY");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE metrics USING wcs()",
            "no store table 'metrics'");
  sqlite3_close(db);
  db = openDb(zDb);
  CHECK_ERR(db, "CREATE VIRTUAL TABLE m USING wcs(TABLE 'metrics')",
            "no store table 'metrics' in ");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'metrics', HISTORY)",
            "(no store there yet); a HISTORY view shows an existing table");
  CHECK(db, "SELECT count(*) FROM sqlite_schema", "0");
  sqlite3_close(db);
  f = fopen(zStore, "rb");
  ck_assert_msg(f == NULL, "an attach made the store %s", zStore);
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_store_beside_database_and_reopen) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs/CURRENT", zDir);
  sqlite3 *db = openDb(zDb);
  FILE *f;
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  sqlite3_close(db);
  f = fopen(zStore, "rb");
  ck_assert_msg(f != NULL, "no store at %s", zStore);
  fclose(f);
  /* a new connection reconnects */
  db = openDb(zDb);
  CHECK(db, "SELECT device, cpu FROM metrics", "p|1");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)");
  sqlite3_close(db);
  db = openDb(zDb);
  CHECK(db, "SELECT id, cpu FROM metrics", "a|1\nb|2");
  sqlite3_close(db);
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  tu_rmrf(zDir);
}
END_TEST

/* Make database file zDb with the metrics table and its row p#a#1. */
static void seedMetricsDb(const char *zDb) {
  sqlite3 *db = openDb(zDb);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  sqlite3_close(db);
}

/* wcs_backup copies the table's store as of the call, while the database
** is in use: with VACUUM INTO for the declarations, the copy is a
** database of its own; errors name what is wrong. */
START_TEST(test_backup_is_the_store_as_of_the_call) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zCopyDb = sqlite3_mprintf("%s/copy.db", zDir);
  char *zBackup = sqlite3_mprintf("%s/bk.wcs", zDir);
  char *zCopyStore = sqlite3_mprintf("%s/copy.db.wcs", zDir);
  char *zGot;
  sqlite3 *db;
  seedMetricsDb(zDb);
  db = openDb(zDb);
  OK(db, "CREATE VIRTUAL TABLE other USING wcs(KEY (k STRING), "
         "FAMILY f (n INT64))");
  OK(db, "INSERT INTO other(k, n) VALUES ('x', 1)");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',2,2)");
  OK(db, "COMMIT");
  /* a write not yet committed is not in the backup */
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','c',3,3)");
  zGot = run(db, "SELECT wcs_backup('metrics', 'bk.wcs')");
  ck_assert_msg(strstr(zGot, "/bk.wcs") != NULL && zGot[0] == '/', "%s", zGot);
  sqlite3_free(zGot);
  OK(db, "COMMIT");
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  CHECK_ERR(db, "SELECT wcs_backup('metrics', 'bk.wcs')", "already exists");
  /* a directory in the way is not a misuse of the API (drivers raise
  ** another kind of exception for SQLITE_MISUSE) */
  ck_assert_int_eq(sqlite3_errcode(db), SQLITE_CANTOPEN);
  CHECK_ERR(db, "SELECT wcs_backup('nosuch', 'b2.wcs')", "nosuch");
  CHECK_ERR(db, "SELECT wcs_backup('metrics', '')", "new directory");
  CHECK_ERR(db, "SELECT wcs_backup('metrics', ':memory:')",
            "directory on disk");
  {
    char *zVac = sqlite3_mprintf("VACUUM INTO '%q'", zCopyDb);
    OK(db, zVac);
    sqlite3_free(zVac);
  }
  sqlite3_close(db);
  ck_assert_int_eq(rename(zBackup, zCopyStore), 0);
  db = openDb(zCopyDb);
  CHECK(db, "SELECT device, id, day, cpu FROM metrics", "p|a|1|1\np|b|2|2");
  CHECK(db, "SELECT k, n FROM other", "x|1");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('q','a',1,5)");
  sqlite3_close(db);
  db = openDb(zCopyDb);
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  sqlite3_close(db);
  db = openDb(zDb);
  CHECK(db, "SELECT group_concat(id) FROM metrics", "a,b,c");
  sqlite3_close(db);
  sqlite3_free(zDb);
  sqlite3_free(zCopyDb);
  sqlite3_free(zBackup);
  sqlite3_free(zCopyStore);
  tu_rmrf(zDir);
}
END_TEST

/* A store that cannot be opened (moved away here; a lock held by another
** process is the same case): the table still connects, every use is an
** error naming the store and the reason, DROP TABLE still works. */
START_TEST(test_unreachable_store_is_an_error_for_every_use) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs", zDir);
  char *zAway = sqlite3_mprintf("%s/away.wcs", zDir);
  sqlite3 *db;
  seedMetricsDb(zDb);
  ck_assert_int_eq(rename(zStore, zAway), 0);
  db = openDb(zDb);
  CHECK_ERR(db, "SELECT count(*) FROM metrics", "does not exist");
  CHECK_ERR(db, "SELECT cpu FROM metrics WHERE device='p' AND id='a' AND day=1",
            "store table 'metrics' is missing");
  CHECK_ERR(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)",
            "store table 'metrics' is missing");
  OK(db, "BEGIN");
  CHECK_ERR(db, "UPDATE metrics SET cpu = 3", "is missing");
  CHECK_ERR(db, "DELETE FROM metrics", "is missing");
  OK(db, "ROLLBACK");
  OK(db, "DROP TABLE metrics");
  CHECK(db, "SELECT count(*) FROM sqlite_schema", "0");
  sqlite3_close(db);
  /* the data was never touched */
  ck_assert_int_eq(rename(zAway, zStore), 0);
  db = openDb(zDb);
  OK(db, "CREATE VIRTUAL TABLE m2 USING wcs(TABLE 'metrics')");
  CHECK(db, "SELECT device, cpu FROM m2", "p|1");
  sqlite3_close(db);
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  sqlite3_free(zAway);
  tu_rmrf(zDir);
}
END_TEST

/* SQLite's error log, as SQLITE_CONFIG_LOG gives it: the wcs lines. */
static char zWcsLog[4096];
static void wcsLogLine(void *pArg, int iCode, const char *zMsg) {
  size_t n = strlen(zWcsLog);
  (void)pArg;
  if (strncmp(zMsg, "wcs: ", 5) == 0 &&
      n + strlen(zMsg) + 16 < sizeof zWcsLog) {
    snprintf(zWcsLog + n, sizeof zWcsLog - n, "%d %s\n", iCode, zMsg);
  }
}

/* A store whose manifest is damaged: every use is an SQLITE_CORRUPT error
** naming the file and saying to repair or restore the store, not to drop
** the table; once the file is whole again, the same connection uses the
** table. */
START_TEST(test_damaged_store_says_repair_not_drop) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs", zDir);
  char *zManifest = NULL, *zGot;
  uint8_t *p;
  size_t n = 0;
  DIR *d;
  struct dirent *e;
  sqlite3 *db;
  seedMetricsDb(zDb);
  d = opendir(zStore);
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "MANIFEST-", 9) == 0) {
      zManifest = sqlite3_mprintf("%s/%s", zStore, e->d_name);
    }
  }
  closedir(d);
  ck_assert_ptr_nonnull(zManifest);
  p = tu_read_file(zManifest, &n);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_gt(n, 8);
  p[n / 2] ^= 0x20;
  ck_assert_int_eq(tu_write_file(zManifest, p, n), 0);
  zWcsLog[0] = 0;
  sqlite3_shutdown();
  ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_LOG, wcsLogLine, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
  db = openDb(zDb);
  zGot = run(db, "SELECT cpu FROM metrics WHERE device='p' AND id='a' AND "
                 "day=1");
  ck_assert_msg(strstr(zGot, "MANIFEST-") && strstr(zGot, "repair the store") &&
                    !strstr(zGot, "DROP"),
                "%s", zGot);
  sqlite3_free(zGot);
  ck_assert_int_eq(sqlite3_errcode(db), SQLITE_CORRUPT);
  CHECK_ERR(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)",
            "restore it from a backup");
  ck_assert_int_eq(sqlite3_errcode(db) & 0xff, SQLITE_CORRUPT);
  /* nor is the table dropped meanwhile: the repaired or restored store
  ** still holds its rows, which would be left without a declaration
  ** (SQLite 3.40 reports the refusal by its code alone) */
  zGot = run(db, "DROP TABLE metrics");
  ck_assert_msg(strncmp(zGot, "ERROR", 5) == 0, "%s", zGot);
  sqlite3_free(zGot);
  ck_assert_int_eq(sqlite3_errcode(db) & 0xff, SQLITE_BUSY);
  ck_assert_msg(strstr(zWcsLog, "cannot drop metrics while its store is "
                                "damaged"),
                "log: %s", zWcsLog);
  /* repaired: the next statement opens the store */
  p[n / 2] ^= 0x20;
  ck_assert_int_eq(tu_write_file(zManifest, p, n), 0);
  CHECK(db, "SELECT device, id, cpu FROM metrics", "p|a|1");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)");
  CHECK(db, "SELECT count(*) FROM metrics", "2");
  sqlite3_close(db);
  sqlite3_shutdown();
  ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_LOG, NULL, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
  free(p);
  sqlite3_free(zManifest);
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  tu_rmrf(zDir);
}
END_TEST

/* The other process of test_store_held_by_another_process_is_read_beside
** it: holds the store of zDb open (through the module, as an application
** would), writes a row for each 'i' read from fdIn (answering on fdOut),
** creates table m2 with a row at 'c', drops it at 'd', closes and exits
** at 'x'. */
static void holdStore(const char *zDb, int fdIn, int fdOut) {
  sqlite3 *db = openDb(zDb);
  char c = 'y', z[160];
  int n = 0;
  if (sqlite3_exec(db, "SELECT count(*) FROM metrics", NULL, NULL, NULL)) {
    c = 'n';
  }
  if (write(fdOut, &c, 1) != 1) _exit(2);
  while (read(fdIn, &c, 1) == 1 && c != 'x') {
    if (c == 'c') {
      snprintf(z, sizeof z,
               "CREATE VIRTUAL TABLE m2 USING wcs(KEY (k STRING), FAMILY g "
               "(x STRING)); INSERT INTO m2(k, x) VALUES ('p', 'hello')");
    } else if (c == 'd') {
      snprintf(z, sizeof z, "DROP TABLE m2");
    } else {
      snprintf(z, sizeof z,
               "INSERT INTO metrics(device,id,day,cpu) VALUES ('q','%c',1,%d)",
               'a' + n, 7 + n);
      n++;
    }
    c = sqlite3_exec(db, z, NULL, NULL, NULL) == SQLITE_OK ? 'y' : 'n';
    if (write(fdOut, &c, 1) != 1) _exit(2);
  }
  _exit(sqlite3_close(db) == SQLITE_OK ? 0 : 1);
}

/* A store another process holds and writes: this connection reads it as
** of the latest commit when each statement begins (a statement already
** reading keeps its moment, and so does every statement that starts
** meanwhile), refuses writes and DROP TABLE saying why, with SQLITE_BUSY,
** and once the other process lets go, the same connection, and a
** statement prepared before, write and read the table. */
/* wcs_alter and wcs_drop_family: Bigtable's createfamily, setgcpolicy and
** deletefamily from SQL; the connections on the database connect the table
** again with its new columns at their next statement. */
START_TEST(test_families_change_from_sql) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  sqlite3 *db = openDb(zDb), *db2;
  sqlite3_stmt *pStmt = NULL;
  int bOn = 0;
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (d STRING, n INT64 "
         "DECIMAL(4)), FAMILY stats (cpu INT64) MAX VERSIONS 3, FAMILY meta)");
  OK(db, "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'm', HISTORY)");
  OK(db, "INSERT INTO m(d, n, cpu, _timestamp) VALUES ('a', 1, 10, 1000000), "
         "('a', 1, 11, 2000000), ('a', 1, 12, 3000000), ('b', 2, 20, 1000000)");
  OK(db, "INSERT INTO m(d, n, meta) VALUES ('a', 1, '{\"os\":\"x\"}')");
  db2 = openDb(zDb);
  CHECK(db2, "SELECT count(*) FROM mh", "5");
  ck_assert_int_eq(
      sqlite3_prepare_v2(db2, "SELECT * FROM m ORDER BY d", -1, &pStmt, NULL),
      SQLITE_OK);

  /* a new declared column and GC policy for stats, a new family */
  CHECK(db,
        "SELECT wcs_alter('m', 'FAMILY stats (cpu INT64, mem INT64) "
        "MAX VERSIONS 1, FAMILY events MAX AGE ''7d''')",
        "KEY (d STRING, n INT64 DECIMAL(4)) DELIMITED BY '#', "
        "FAMILY stats (cpu INT64 BIG ENDIAN, mem INT64 BIG ENDIAN) "
        "MAX VERSIONS 1, FAMILY meta, FAMILY events MAX AGE '7d'");
  CHECK(db, "SELECT * FROM m",
        "a|1|12|NULL|{\"cpu\":12}|{\"os\":\"x\"}|NULL\n"
        "b|2|20|NULL|{\"cpu\":20}|NULL|NULL");
  CHECK(db, "SELECT count(*) FROM mh", "3"); /* GC now keeps 1 version */
  OK(db, "INSERT INTO m(d, n, mem, events) VALUES ('a', 1, 99, "
         "'{\"e\":\"boot\"}')");
  CHECK(db, "SELECT mem, events FROM m WHERE d = 'a' AND n = 1",
        "99|{\"e\":\"boot\"}");
  /* the other connection connects again, its prepared statement too */
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_count(pStmt), 7);
  ck_assert_str_eq((const char *)sqlite3_column_text(pStmt, 6),
                   "{\"e\":\"boot\"}");
  sqlite3_finalize(pStmt);
  CHECK(db2, "SELECT d, mem FROM m WHERE mem IS NOT NULL", "a|99");

  /* dropping a family drops its cells; an attachment's name works too */
  CHECK(db, "SELECT wcs_drop_family('mh', 'meta')",
        "KEY (d STRING, n INT64 DECIMAL(4)) DELIMITED BY '#', "
        "FAMILY stats (cpu INT64 BIG ENDIAN, mem INT64 BIG ENDIAN) "
        "MAX VERSIONS 1, FAMILY events MAX AGE '7d'");
  CHECK(db, "SELECT * FROM m WHERE d = 'a'",
        "a|1|12|99|{\"cpu\":12,\"mem\":99}|{\"e\":\"boot\"}");
  CHECK(db2, "SELECT count(*) FROM mh WHERE family = 'meta'", "0");
  /* family names compare as SQL names do; the stored name stays */
  CHECK(db, "SELECT wcs_alter('m', 'FAMILY EVENTS')",
        "KEY (d STRING, n INT64 DECIMAL(4)) DELIMITED BY '#', "
        "FAMILY stats (cpu INT64 BIG ENDIAN, mem INT64 BIG ENDIAN) "
        "MAX VERSIONS 1, FAMILY events");

  /* what cannot be done says so, and changes nothing */
  CHECK_ERR(db, "SELECT wcs_drop_family('m', 'nope')",
            "wcs_drop_family: table m has no family nope");
  CHECK_ERR(db, "SELECT wcs_alter('m', 'KEY (x STRING)')",
            "a table's KEY cannot change");
  CHECK_ERR(db, "SELECT wcs_alter('m', 'FAMILY x, SYNC FULL')",
            "give FAMILY clauses only");
  CHECK_ERR(db, "SELECT wcs_alter('m', 'FAMILY stats AGGREGATE SUM')",
            "family stats cannot change its aggregate type");
  ck_assert_int_eq(sqlite3_errcode(db), SQLITE_ERROR);
  /* a name the table's columns use: the parser's message, not the one
  ** the call before left */
  CHECK_ERR(db, "SELECT wcs_alter('m', 'FAMILY g (cpu STRING)')",
            "wcs_alter: near \"cpu\": the name \"cpu\" is already used by "
            "column \"cpu\" of family \"stats\"");
  CHECK_ERR(db, "SELECT wcs_alter('m', 'FAMILY (')", "wcs_alter: near \"(\"");
  CHECK_ERR(db, "SELECT wcs_alter('m', '')", "holds FAMILY clauses");
  CHECK_ERR(db, "SELECT wcs_alter('nosuch', 'FAMILY x')", "nosuch");
  OK(db, "BEGIN");
  CHECK_ERR(db, "SELECT wcs_alter('m', 'FAMILY x')",
            "cannot run inside a transaction");
  OK(db, "ROLLBACK");
  CHECK(db, "SELECT * FROM m WHERE d = 'b'", "b|2|20|NULL|{\"cpu\":20}|NULL");

  /* a database of its own on the same store (no cookie of this one's to
  ** see): a change of GC policy is taken as it is; new columns say to
  ** open that database again */
  {
    char *zOther = sqlite3_mprintf("%s/other.db", zDir);
    char *zSql = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE om USING wcs(TABLE 'm', STORE '%s/app.db.wcs')",
        zDir);
    sqlite3 *db3 = openDb(zOther);
    OK(db3, zSql);
    sqlite3_free(zSql);
    zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE omh USING wcs(TABLE 'm', "
                           "STORE '%s/app.db.wcs', HISTORY)",
                           zDir);
    OK(db3, zSql);
    CHECK(db3, "SELECT d, cpu FROM om ORDER BY d", "a|12\nb|20");
    OK(db, "INSERT INTO m(d, n, cpu, _timestamp) VALUES ('b', 2, 21, 2000000)");
    CHECK(db3, "SELECT value FROM omh WHERE d = 'b'", "21");
    CHECK(db,
          "SELECT wcs_alter('m', 'FAMILY stats (cpu INT64, mem INT64) "
          "MAX VERSIONS 2') IS NOT NULL",
          "1");
    CHECK(db3, "SELECT d, cpu FROM om ORDER BY d", "a|12\nb|21");
    CHECK(db3, "SELECT value FROM omh WHERE d = 'b'", "21\n20");
    CHECK(db,
          "SELECT wcs_alter('m', 'FAMILY stats (cpu INT64, mem INT64, "
          "disk INT64) MAX VERSIONS 2') IS NOT NULL",
          "1");
    CHECK(db, "SELECT disk FROM m WHERE d = 'b'", "NULL");
    CHECK_ERR(db3, "SELECT d, cpu FROM om", "open this database again");
    CHECK(db3, "SELECT value FROM omh WHERE d = 'b'", "21\n20");
    sqlite3_close(db3);
    sqlite3_free(zSql);
    sqlite3_free(zOther);
  }

  /* where the schema cookie cannot be written, the changed table says to
  ** open the database again, and then has its new columns */
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &bOn);
  ck_assert_int_eq(bOn, 1);
  CHECK(db, "SELECT wcs_alter('m', 'FAMILY late') IS NOT NULL", "1");
  CHECK_ERR(db, "SELECT * FROM m", "open this database again");
  sqlite3_close(db);
  sqlite3_close(db2);
  db = openDb(zDb);
  CHECK(db, "SELECT * FROM m WHERE d = 'b'",
        "b|2|21|NULL|NULL|{\"cpu\":21}|NULL|NULL");
  CHECK(db, "SELECT count(*) FROM pragma_table_info('m') WHERE name = 'late'",
        "1");
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_store_held_by_another_process_is_read_beside_it) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  int aCmd[2], aAck[2], st = 0;
  char c = 0;
  pid_t pid;
  sqlite3 *db;
  sqlite3_stmt *pStmt;
  seedMetricsDb(zDb);
  db = openDb(zDb);
  OK(db, "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'metrics', HISTORY)");
  /* the other process commits while a statement here reads: with
  ** SQLite's rollback journal that statement's lock on the database file
  ** would make its commit fail (SQLITE_BUSY), and then write nothing */
  CHECK(db, "PRAGMA journal_mode=WAL", "wal");
  sqlite3_close(db);
  ck_assert_int_eq(pipe(aCmd), 0);
  ck_assert_int_eq(pipe(aAck), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) holdStore(zDb, aCmd[0], aAck[1]);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');

  db = openDb(zDb);
  pStmt = NULL;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT device, cpu FROM metrics", -1,
                                      &pStmt, NULL),
                   SQLITE_OK);
  CHECK(db, "SELECT device, id, cpu FROM metrics", "p|a|1");
  CHECK_ERR(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)",
            "is held by another process, which writes it");
  ck_assert_int_eq(sqlite3_errcode(db) & 0xff, SQLITE_BUSY);
  /* (SQLite reports xDestroy's code alone: "database is locked") */
  CHECK_ERR(db, "DROP TABLE metrics", "locked");
  ck_assert_int_eq(sqlite3_errcode(db) & 0xff, SQLITE_BUSY);
  CHECK_ERR(db, "SELECT wcs_delete_prefix('metrics', 'p')",
            "wcs_delete_prefix: store");
  CHECK_ERR(db, "SELECT wcs_delete_prefix('metrics', 'p')",
            "is held by another process, which writes it");
  ck_assert_int_eq(sqlite3_errcode(db) & 0xff, SQLITE_BUSY);
  /* compacting every store of the connection says the same */
  CHECK_ERR(db, "SELECT wcs_compact()", "wcs_compact: store");
  CHECK_ERR(db, "SELECT wcs_compact()",
            "is held by another process, which writes it");
  ck_assert_int_eq(sqlite3_errcode(db) & 0xff, SQLITE_BUSY);
  CHECK(db,
        "SELECT wcs_key_decode('metrics', wcs_key_encode('metrics', "
        "'p', 'a', 1))",
        "[\"p\",\"a\",1]");

  /* the other process commits: the next statement sees it */
  ck_assert_int_eq(write(aCmd[1], "i", 1), 1);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  CHECK(db, "SELECT device, id, cpu FROM metrics", "p|a|1\nq|a|7");
  CHECK(db, "SELECT count(*) FROM mh", "2");

  /* a statement reading keeps its moment, as do those started meanwhile */
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(pStmt, 0), "p");
  ck_assert_int_eq(write(aCmd[1], "i", 1), 1);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  CHECK(db, "SELECT count(*) FROM metrics", "2");
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  ck_assert_str_eq((const char *)sqlite3_column_text(pStmt, 0), "q");
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_DONE);
  sqlite3_reset(pStmt);
  CHECK(db, "SELECT count(*), sum(cpu) FROM metrics", "3|16");

  /* a table the other process creates, then drops */
  ck_assert_int_eq(write(aCmd[1], "c", 1), 1);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  CHECK(db, "SELECT k, x FROM m2", "p|hello");
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  ck_assert_int_eq(write(aCmd[1], "d", 1), 1);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  CHECK_ERR(db, "SELECT * FROM m2", "no such table");

  /* the other process lets go: this one writes */
  ck_assert_int_eq(write(aCmd[1], "x", 1), 1);
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  close(aCmd[0]);
  close(aCmd[1]);
  close(aAck[0]);
  close(aAck[1]);
  CHECK(db, "SELECT wcs_compact()", "ok");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)");
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  sqlite3_reset(pStmt);
  CHECK(db, "SELECT device, id, cpu FROM metrics",
        "p|a|1\np|b|2\nq|a|7\nq|b|8");
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  db = openDb(zDb);
  CHECK(db, "SELECT count(*) FROM metrics", "4");
  CHECK(db, "SELECT count(*) FROM mh", "4");
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* wcs_sqlite_engine: the engine behind a connection's tables, for the
** in-memory store (reachable no other way) and a file store alike. */
START_TEST(test_sqlite_engine_reaches_the_module_store) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs", zDir);
  sqlite3 *db = openDb(NULL);
  wcs_engine *pEng, *pOpen = NULL;
  wcs_table *pTab = NULL;
  ck_assert_ptr_null(wcs_sqlite_engine(NULL, "main"));
  ck_assert_ptr_null(wcs_sqlite_engine(db, "main")); /* no table yet */
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  pEng = wcs_sqlite_engine(db, NULL);
  ck_assert_ptr_nonnull(pEng);
  ck_assert_int_eq(wcs_table_open(pEng, "metrics", &pTab), WCS_OK);
  ck_assert_ptr_nonnull(pTab);
  wcs_table_close(pTab);
  ck_assert_ptr_null(wcs_sqlite_engine(db, "nosuch"));
  sqlite3_close(db);
  /* a file store: the very engine wcs_engine_open_path shares */
  db = openDb(zDb);
  OK(db, zMetrics);
  pEng = wcs_sqlite_engine(db, "main");
  ck_assert_ptr_nonnull(pEng);
  ck_assert_int_eq(wcs_engine_open_path(&pOpen, zStore, NULL, NULL), WCS_OK);
  ck_assert_ptr_eq(pEng, pOpen);
  wcs_engine_close(pOpen);
  sqlite3_close(db);
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  tu_rmrf(zDir);
}
END_TEST

/* A salted table's scans agree with the same rows in a native table:
** ORDER BY _key DESC (raw key order, buckets last to first) and skip scans
** whose _key bounds leave some buckets without a range (each bucket's
** filter must stay its own). */
START_TEST(test_salted_scans_match_native) {
  static const char *const azWhere[] = {
      "b = '1' AND _key >= x'0161'",
      "b = '1' AND _key < x'0263'",
      "b = '1' AND _key >= x'01' AND _key < x'03'",
      "b IN ('0', '2') AND _key >= x'0162'",
      "b = '2' AND _key > x'0362'",
      "1",
  };
  sqlite3 *db = openDb(NULL);
  int i;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (a STRING, b STRING) "
         "DELIMITED BY '#' SALT 4, FAMILY f (n INT64))");
  OK(db, "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i "
         "WHERE x < 59) INSERT INTO t(a, b, n) SELECT char(97 + x % 20), "
         "x % 3, x FROM i");
  OK(db, "CREATE TEMP TABLE n AS SELECT _key AS k, a, b, n FROM t");
  for (i = 0; i < (int)(sizeof(azWhere) / sizeof(azWhere[0])); i++) {
    int d;
    for (d = 0; d < 2; d++) {
      const char *zDir = d ? "DESC" : "";
      char *zW = sqlite3_mprintf(
          "SELECT group_concat(a || b, ',') FROM (SELECT a, b FROM t WHERE "
          "%s ORDER BY _key %s)",
          azWhere[i], zDir);
      char *zWhere = sqlite3_mprintf("%s", azWhere[i]);
      char *zN, *zGotW, *zGotN;
      char *z;
      /* the same WHERE on the native copy, whose key column is k */
      while ((z = strstr(zWhere, "_key")) != NULL)
        memcpy(z, "   k", 4);
      zN = sqlite3_mprintf("SELECT group_concat(a || b, ',') FROM (SELECT "
                           "a, b FROM n WHERE %s ORDER BY k %s)",
                           zWhere, zDir);
      zGotW = run(db, zW);
      zGotN = run(db, zN);
      ck_assert_msg(strcmp(zGotW, zGotN) == 0, "%s\n  wcs:    %s\n  native: %s",
                    zW, zGotW, zGotN);
      sqlite3_free(zW);
      sqlite3_free(zN);
      sqlite3_free(zWhere);
      sqlite3_free(zGotW);
      sqlite3_free(zGotN);
    }
  }
  sqlite3_close(db);
}
END_TEST

/* An OR that SQLite runs as several scans of a history view (MULTI-INDEX
** OR) keeps every cell: SQLite tells the scans' rows apart by the
** primary key, _cell, which names the cell. */
START_TEST(test_history_or_of_scans_keeps_every_cell) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (d STRING, id STRING) "
         "DELIMITED BY '#', FAMILY f (a INT64))");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  OK(db, "INSERT INTO t(d, id, a, _timestamp) VALUES ('p', 'x', 1, 10)");
  OK(db, "INSERT INTO t(d, id, a, _timestamp) VALUES ('p', 'x', 2, 20)");
  OK(db, "INSERT INTO t(d, id, a, _timestamp) VALUES ('p', 'y', 3, 30)");
  CHECK(db,
        "SELECT _timestamp, value FROM h WHERE d IN ('p', 'q') AND "
        "(_timestamp >= 20 OR _timestamp <= 10) ORDER BY 1",
        "10|1\n20|2\n30|3");
  CHECK(db,
        "SELECT count(*) FROM h WHERE (d = 'p' AND _timestamp < 15) OR "
        "(id = 'y' AND _timestamp > 25) OR (id = 'x' AND _timestamp = 20)",
        "3");
  /* one _cell per cell, the same from any scan */
  CHECK(db, "SELECT count(DISTINCT _cell) FROM h", "3");
  CHECK(db,
        "SELECT count(*) FROM h a JOIN h b ON a._cell = b._cell AND "
        "a.value = b.value",
        "3");
  sqlite3_close(db);
}
END_TEST

/* A history view types an undeclared qualifier's value as its family's
** JSON does: text when plain text, else bytes (an 8-byte counter, valid
** UTF-8 with its NULs, is a BLOB, as it is {"$hex": ...} in the JSON). */
START_TEST(test_history_undeclared_values_typed_as_the_family_json) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING) DELIMITED BY '#', "
         "FAMILY f)");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  OK(db, "INSERT INTO t(k, f) VALUES ('a', json_object('n', 5, 's', "
         "'x' || char(9) || 'y', 'c', 'x' || char(1)))");
  CHECK(db, "SELECT qualifier, typeof(value), hex(value) FROM h ORDER BY 1",
        "c|blob|7801\nn|blob|0000000000000005\ns|text|780979");
  CHECK(db, "SELECT f ->> 'n', f ->> 's' = 'x' || char(9) || 'y' FROM t",
        "{\"$hex\":\"0000000000000005\"}|1");
  sqlite3_close(db);
}
END_TEST

/* An authorizer that refuses PRAGMA and reads of the schema tables (as
** some applications install): the functions that name a table still find
** a connected one, in SQL's order. */
static int denyPragmas(void *pArg, int op, const char *z1, const char *z2,
                       const char *z3, const char *z4) {
  (void)pArg;
  (void)z2;
  (void)z3;
  (void)z4;
  if (op == SQLITE_PRAGMA) return SQLITE_DENY;
  if (op == SQLITE_READ && z1 && sqlite3_strnicmp(z1, "sqlite_", 7) == 0) {
    return SQLITE_DENY;
  }
  return SQLITE_OK;
}

START_TEST(test_functions_find_tables_under_a_strict_authorizer) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  CHECK(db, "SELECT count(*) FROM metrics", "0");
  sqlite3_set_authorizer(db, denyPragmas, NULL);
  CHECK(db, "SELECT wcs_key_encode('metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  CHECK(db, "SELECT wcs_key_encode('main.metrics', 'a', 'b', 1)",
        "x'612362233030303030303031'");
  sqlite3_set_authorizer(db, NULL, NULL);
  sqlite3_close(db);
}
END_TEST

START_TEST(test_cache_clause_sizes_the_store_block_cache) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  const char *zBudget =
      "SELECT json_extract(wcs_stats(), '$.stores[0].stats.cache_budget')";
  sqlite3 *db = openDb(zDb);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (a STRING), FAMILY f, "
         "CACHE '8MiB')");
  CHECK(db, zBudget, "8388608");
  OK(db, "INSERT INTO t(a, f) VALUES ('x', '{\"q\":\"v\"}')");
  sqlite3_close(db);
  /* a new connection opens the store with the declared budget again */
  db = openDb(zDb);
  CHECK(db, "SELECT a FROM t", "x");
  CHECK(db, zBudget, "8388608");
  sqlite3_close(db);
  /* without the clause: the default 64 MiB */
  db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE u USING wcs(KEY (a STRING), FAMILY f)");
  CHECK(db, zBudget, "67108864");
  CHECK_ERR(db,
            "CREATE VIRTUAL TABLE v USING wcs(KEY (a STRING), FAMILY f, "
            "CACHE '12 parsecs')",
            "bad CACHE size '12 parsecs'");
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* A scan by groups (an ORDER BY whose direction changes) that meets a
** key with too few fields for its group is an error naming the key: the
** key is no group's, and taking its bytes for one took in the rows of
** the groups after it. */
START_TEST(test_scan_by_groups_meets_an_undecodable_key) {
  RawDb r;
  rawOpen(&r);
  OK(r.db, zMetrics);
  OK(r.db, "INSERT INTO metrics(device,id,day,cpu) VALUES "
           "('p','a',20240101,1), ('p','a',20240102,2), "
           "('p','ab',20240101,3), ('p','ab',20240102,4)");
  RAW(&r, "p#a");
  CHECK_ERR(r.db,
            "SELECT id, day FROM metrics WHERE device = 'p' "
            "ORDER BY id, day DESC LIMIT 3",
            "p#a");
  CHECK_ERR(r.db,
            "SELECT id, day FROM metrics WHERE device = 'p' "
            "ORDER BY id DESC, day LIMIT 10",
            "p#a");
  /* (a LIMIT the groups before it fill never meets it) */
  CHECK(r.db,
        "SELECT id, day FROM metrics WHERE device = 'p' "
        "ORDER BY id DESC, day LIMIT 3",
        "ab|20240101\nab|20240102\na|20240101");
  rawClose(&r);
}
END_TEST

/* A statement that names a key field meets every row's key, even where it
** reads no field (the range takes the term, an ORDER BY is consumed, only
** rows are counted): a key that does not decode is an error naming it,
** never a row (DESIGN §4). A statement that names no key field (count(*),
** a family, _key) reads the store's rows as they are. */
START_TEST(test_key_field_terms_meet_undecodable_keys) {
  static const char *azNamed[] = {
      "SELECT cpu FROM metrics WHERE device = 'p' AND id = 'a'",
      "SELECT count(*) FROM metrics WHERE device = 'p' AND id = 'a'",
      "SELECT cpu FROM metrics WHERE device = 'p' AND id = 'a' "
      "AND day BETWEEN 20240101 AND 20240102",
      "SELECT cpu FROM metrics WHERE device = 'p' AND id = 'a' "
      "ORDER BY day DESC",
      "SELECT count(*) FROM metrics WHERE id = 'a'",
      "SELECT cpu FROM metrics WHERE device > 'o'",
      "SELECT cpu FROM metrics ORDER BY device, id, day",
      "SELECT cpu FROM metrics WHERE device = 'p' AND id = 'a' LIMIT 5",
  };
  RawDb r;
  sqlite3 *db;
  size_t i;
  rawOpen(&r);
  OK(r.db, zMetrics);
  OK(r.db, "INSERT INTO metrics(device,id,day,cpu) VALUES "
           "('p','a',20240101,1), ('p','a',20240102,1)");
  /* inside the prefix, the range and the skip scan's rows: a fourth field */
  RAW(&r, "p#a#20240101#5");
  db = r.db;
  for (i = 0; i < sizeof(azNamed) / sizeof(azNamed[0]); i++) {
    CHECK_ERR(db, azNamed[i], "p#a#20240101#5");
  }
  /* a lookup of its _key meets it, when a key field is named */
  CHECK_ERR(db, "SELECT device FROM metrics WHERE _key = 'p#a#20240101#5'",
            "p#a#20240101#5");
  CHECK_ERR(db,
            "SELECT count(*) FROM metrics WHERE device = 'p' AND _key IN "
            "('p#a#20240101#5', 'p#a#20240102')",
            "p#a#20240101#5");
  CHECK(db, "SELECT count(*) FROM metrics WHERE _key = 'p#a#20240101#5'", "1");
  /* a point lookup does not meet it; nor statements that name no field */
  CHECK(db,
        "SELECT cpu FROM metrics WHERE device = 'p' AND id = 'a' "
        "AND day = 20240102",
        "1");
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  CHECK(db, "SELECT count(*) FROM metrics WHERE _key >= 'p#a#20240101#'", "2");
  CHECK(db, "SELECT sum(cpu) FROM metrics", "3");
  /* rows a DISTINCT scan seeks past are not met */
  CHECK(db, "SELECT DISTINCT device FROM metrics", "p");
  /* a bad key of a good key's length that keeps the head of the good rows
  ** before it (where a scan checks the last field alone) */
  OK(db, "DELETE FROM metrics WHERE _key = 'p#a#20240101#5'");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',20240101,1), "
         "('p','b',20240102,1)");
  RAW(&r, "p#b#2024010x");
  db = r.db;
  CHECK_ERR(db, "SELECT count(*) FROM metrics WHERE device = 'p' AND id = 'b'",
            "p#b#2024010x");
  CHECK_ERR(db, "SELECT sum(cpu) FROM metrics WHERE device = 'p'",
            "p#b#2024010x");
  CHECK(db, "SELECT count(*) FROM metrics WHERE device = 'p' AND id = 'a'",
        "2");
  rawClose(&r);
}
END_TEST

/* _key is the primary key and never NULL: an UPDATE that sets it to NULL
** is refused, with or without a key schema, and changes nothing. */
START_TEST(test_update_of_key_to_null_is_refused) {
  sqlite3 *db = openDb(NULL);
  OK(db,
     "CREATE VIRTUAL TABLE m USING wcs(KEY (d STRING), FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE r USING wcs(FAMILY f (v INT64))");
  OK(db, "INSERT INTO m(d, v) VALUES ('a', 1)");
  OK(db, "INSERT INTO r(_key, v) VALUES ('a', 1)");
  CHECK_ERR(db, "UPDATE m SET _key = NULL WHERE d = 'a'",
            "NOT NULL constraint failed: m._key");
  CHECK_ERR(db, "UPDATE m SET _key = NULL, d = 'b'",
            "NOT NULL constraint failed: m._key");
  CHECK_ERR(db, "UPDATE r SET _key = NULL",
            "NOT NULL constraint failed: r._key");
  CHECK(db, "SELECT d, CAST(_key AS TEXT), v FROM m", "a|a|1");
  CHECK(db, "SELECT CAST(_key AS TEXT), v FROM r", "a|1");
  /* other updates keep or move the key as before */
  OK(db, "UPDATE m SET v = 2");
  OK(db, "UPDATE m SET d = 'b'");
  CHECK(db, "SELECT d, CAST(_key AS TEXT), v FROM m", "b|b|2");
  sqlite3_close(db);
}
END_TEST

/* latest_n is the history view's argument: a term on it inside an OR, or
** a comparison other than =, never reaches the view, which would read it
** as NULL and SQLite's own check of the term then drop every row. Such a
** statement runs with the term given to the view (SQLite's OR of two
** scans) or is refused saying so; it never loses rows silently. */
START_TEST(test_history_latest_n_not_given_is_an_error) {
  sqlite3 *db = openDb(NULL);
  OK(db,
     "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f (c INT64))");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'm', HISTORY)");
  OK(db, "INSERT INTO m(k, c, _timestamp) VALUES ('a', 1, 1), ('b', 5, 15), "
         "('b', 6, 25)");
  CHECK(db,
        "SELECT k, _timestamp FROM h WHERE (latest_n = 1 AND k = 'b') OR "
        "(latest_n = 2 AND k = 'b') ORDER BY 2",
        "b|15\nb|25");
  CHECK_ERR(db, "SELECT k FROM h WHERE latest_n = 1 OR k = 'a'",
            "h: latest_n is named but not given to the view");
  CHECK_ERR(db, "SELECT k FROM h WHERE latest_n > 1",
            "h: latest_n is named but not given to the view");
  CHECK_ERR(db, "SELECT latest_n FROM h WHERE k = 'b'",
            "h: latest_n is named but not given to the view");
  CHECK(db,
        "SELECT k, _timestamp, latest_n FROM h WHERE k = 'b' AND latest_n = 1",
        "b|25|1");
  CHECK(db, "SELECT count(*) FROM m JOIN h USING (k) WHERE h.latest_n = m.c",
        "3");
  sqlite3_close(db);
}
END_TEST

/* Rows read and cells written in a table's saved key-distribution
** counters, as a later process sees them. */
static void heatTotals(const char *zStore, const char *zTable, uint64_t *pnRead,
                       uint64_t *pnWrite) {
  wcs_engine *pEng = NULL;
  wcs_table *pTab = NULL;
  wcs_heatmap *m = NULL;
  int i, b;
  *pnRead = *pnWrite = 0;
  ck_assert_int_eq(wcs_engine_open_path(&pEng, zStore, NULL, NULL), WCS_OK);
  ck_assert_int_eq(wcs_table_open(pEng, zTable, &pTab), WCS_OK);
  ck_assert_int_eq(wcs_table_heatmap(pTab, &m), WCS_OK);
  for (i = 0; i < m->nSlot; i++) {
    for (b = 0; b < m->nBucket; b++) {
      *pnRead += m->aSlot[i].aRead[b];
      *pnWrite += m->aSlot[i].aWrite[b];
    }
  }
  wcs_heatmap_free(m);
  wcs_table_close(pTab);
  wcs_engine_close(pEng);
}

START_TEST(test_last_disconnect_saves_heat_counters) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs", zDir);
  sqlite3 *db = openDb(zDb);
  uint64_t nRead, nWrite;
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1), "
         "('p','b',1,2), ('q','a',1,3)");
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  /* a client that never calls wcs_engine_heat_save itself: closing the
  ** connection disconnects the store's last table, which saves them */
  sqlite3_close(db);
  heatTotals(zStore, "metrics", &nRead, &nWrite);
  ck_assert_uint_ge(nWrite, 3);
  ck_assert_uint_ge(nRead, 3);
  /* and a later connection adds to what it loaded */
  db = openDb(zDb);
  CHECK(db, "SELECT count(*) FROM metrics WHERE device = 'p'", "2");
  sqlite3_close(db);
  {
    uint64_t nRead2, nWrite2;
    heatTotals(zStore, "metrics", &nRead2, &nWrite2);
    ck_assert_uint_ge(nRead2, nRead + 2);
    ck_assert_uint_eq(nWrite2, nWrite);
  }
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_heat_counts_every_cell_inserted_committed_or_not) {
  /* INSERTs count their cells in the heat map in batches of rows; every
  ** cell is counted once the transaction ends, whether it commits, rolls
  ** back or rolls back to a savepoint, and in its own table. */
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  char *zStore = sqlite3_mprintf("%s/app.db.wcs", zDir);
  sqlite3 *db = openDb(zDb);
  uint64_t nRead, nWrite;
  static const char zIns[] =
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
      "WHERE i < %d) INSERT INTO %s(device, id, day, cpu, mem) "
      "SELECT '%s', printf('%%04d', i), 20200101, i, i * 2 FROM n";
  char *z;
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE other USING wcs(KEY (device STRING, id "
         "STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY stats (cpu "
         "INT64, mem INT64))");
  OK(db, "BEGIN");
  z = sqlite3_mprintf(zIns, 300, "metrics", "p");
  OK(db, z);
  sqlite3_free(z);
  OK(db, "COMMIT");
  OK(db, "BEGIN");
  z = sqlite3_mprintf(zIns, 100, "metrics", "q");
  OK(db, z);
  sqlite3_free(z);
  OK(db, "ROLLBACK");
  OK(db, "BEGIN");
  OK(db, "SAVEPOINT s");
  z = sqlite3_mprintf(zIns, 50, "metrics", "r");
  OK(db, z);
  sqlite3_free(z);
  OK(db, "ROLLBACK TO s");
  z = sqlite3_mprintf(zIns, 20, "metrics", "s");
  OK(db, z);
  sqlite3_free(z);
  z = sqlite3_mprintf(zIns, 70, "other", "s");
  OK(db, z);
  sqlite3_free(z);
  z = sqlite3_mprintf(zIns, 5, "metrics", "t");
  OK(db, z);
  sqlite3_free(z);
  OK(db, "COMMIT");
  CHECK(db, "SELECT count(*) FROM metrics", "325");
  sqlite3_close(db);
  heatTotals(zStore, "metrics", &nRead, &nWrite);
  ck_assert_uint_eq(nWrite, 2 * (300 + 100 + 50 + 20 + 5));
  heatTotals(zStore, "other", &nRead, &nWrite);
  ck_assert_uint_eq(nWrite, 2 * 70);
  sqlite3_free(zDb);
  sqlite3_free(zStore);
  tu_rmrf(zDir);
}
END_TEST

START_TEST(test_store_clause_and_two_connections) {
  const char *zDir = tu_tmpdir("vtab");
  char *zSql = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f (v INT64), "
      "STORE '%s/s.wcs')",
      zDir);
  sqlite3 *db1 = openDb(NULL);
  sqlite3 *db2 = openDb(NULL);
  char *zAttach = sqlite3_mprintf("CREATE VIRTUAL TABLE t USING wcs(TABLE 't', "
                                  "STORE '%s/s.wcs')",
                                  zDir);
  OK(db1, zSql);
  OK(db1, "INSERT INTO t(k,v) VALUES ('a', 1)");
  /* a second connection shares the store in this process */
  OK(db2, zAttach);
  CHECK(db2, "SELECT v FROM t", "1");
  OK(db2, "INSERT INTO t(k,v) VALUES ('b', 2)");
  CHECK(db1, "SELECT group_concat(v) FROM t", "1,2");
  sqlite3_close(db2);
  sqlite3_close(db1);
  sqlite3_free(zSql);
  sqlite3_free(zAttach);
  tu_rmrf(zDir);
}
END_TEST

/* ---- safety -------------------------------------------------------------- */

START_TEST(test_hostile_schema_cannot_use_the_module) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/hostile.db", zDir);
  sqlite3 *db = openDb(zDb);
  int bOn = -1;
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  sqlite3_close(db);
  /* the "attacker" writes a view and a trigger into the file with plain
  ** SQLite, the way a hostile database would arrive */
  ck_assert_int_eq(sqlite3_open(zDb, &db), SQLITE_OK);
  OK(db, "PRAGMA writable_schema = ON");
  OK(db, "INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql) VALUES "
         "('view','v','v',0,'CREATE VIEW v AS SELECT * FROM metrics'),"
         "('view','vf','vf',0,'CREATE VIEW vf AS SELECT wcs_stats() AS s')");
  OK(db, "CREATE TABLE log(x)");
  OK(db, "PRAGMA writable_schema = OFF");
  sqlite3_close(db);

  db = openDb(zDb);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &bOn);
  ck_assert_int_eq(bOn, 1);
  CHECK_ERR(db, "SELECT * FROM v", "unsafe use of virtual table");
  CHECK_ERR(db, "SELECT * FROM vf", "unsafe use of wcs_stats()");
  OK(db, "CREATE TRIGGER tr AFTER INSERT ON log BEGIN "
         "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','z',1,1); END");
  CHECK_ERR(db, "INSERT INTO log VALUES (1)", "unsafe use of virtual table");
  /* direct use is fine, and so is a TEMP view, which no file holds; a
  ** TEMP trigger still cannot write (doc/sql.md, "Safety") */
  CHECK(db, "SELECT id FROM metrics", "a");
  OK(db, "CREATE TEMP VIEW tv AS SELECT id, cpu FROM metrics");
  CHECK(db, "SELECT * FROM tv", "a|1");
  OK(db, "CREATE TEMP TRIGGER ttr AFTER INSERT ON log BEGIN "
         "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','t',1,1); END");
  CHECK_ERR(db, "INSERT INTO log VALUES (2)", "unsafe use of virtual table");
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* SQLite may fail its own commit after the module's xSync: with the
** default rollback journal it locks the database file then, and another
** connection reading the file makes that fail (SQLITE_BUSY). SQLite then
** rolls the transaction back, and the store must not keep it: a retried
** INSERT into an aggregate family would count twice. A COMMIT that failed
** so keeps its transaction open, to be retried or rolled back. */
START_TEST(test_commit_sqlite_refuses_writes_nothing) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  sqlite3 *db = openDb(zDb), *db2;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64), FAMILY c AGGREGATE SUM)");
  OK(db, "CREATE TABLE n(x)");
  CHECK(db, "PRAGMA journal_mode", "delete");
  db2 = openDb(zDb);

  /* a statement of its own */
  OK(db2, "BEGIN; SELECT count(*) FROM n");
  CHECK_ERR(db, "INSERT INTO t(k, v, c) VALUES ('a', 1, '{\"hits\": 5}')",
            "database is locked");
  ck_assert_int_eq(sqlite3_errcode(db), SQLITE_BUSY);
  CHECK(db, "SELECT count(*) FROM t", "0");
  CHECK(db2, "SELECT count(*) FROM t", "0");
  OK(db2, "COMMIT");
  OK(db, "INSERT INTO t(k, v, c) VALUES ('a', 1, '{\"hits\": 5}')");
  CHECK(db2, "SELECT k, v, c ->> 'hits' FROM t", "a|1|5");

  /* a COMMIT refused, then a ROLLBACK */
  OK(db, "BEGIN; INSERT INTO t(k, v, c) VALUES ('b', 2, '{\"hits\": 1}')");
  OK(db2, "BEGIN; SELECT count(*) FROM n");
  CHECK_ERR(db, "COMMIT", "database is locked");
  CHECK(db, "SELECT k FROM t", "a\nb"); /* still open: its own writes */
  CHECK(db2, "SELECT k FROM t", "a");
  OK(db, "ROLLBACK");
  OK(db2, "COMMIT");
  CHECK(db, "SELECT k FROM t", "a");
  CHECK(db2, "SELECT k FROM t", "a");

  /* a COMMIT refused, more writes, then the COMMIT again */
  OK(db, "BEGIN; INSERT INTO t(k, v, c) VALUES ('c', 3, '{\"hits\": 2}')");
  OK(db2, "BEGIN; SELECT count(*) FROM n");
  CHECK_ERR(db, "COMMIT", "database is locked");
  OK(db, "INSERT INTO t(k, c) VALUES ('a', '{\"hits\": 10}')");
  CHECK(db2, "SELECT k, c ->> 'hits' FROM t", "a|5");
  OK(db2, "COMMIT");
  OK(db, "COMMIT");
  CHECK(db2, "SELECT k, v, c ->> 'hits' FROM t", "a|1|15\nc|3|2");
  sqlite3_close(db2);
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* A transaction that read a wcs table and then writes it, after another
** connection committed to the table in between, is refused as SQLite
** refuses it for its own tables (WAL: SQLITE_BUSY_SNAPSHOT), because the
** other commit ticks the table's commit clock while this connection
** reads: no update is lost. */
/* The rows of one statement come from one moment of the store, as a WAL
** read transaction gives SQLite's own tables: another connection's
** commit between two rows of a join (or of a subquery per row) shows in
** none of them; a statement of the same connection that runs while the
** first still reads sees what it sees; the next statement sees the
** commit, and so does the writer's own next read. */
static char *stepWithCommit(sqlite3 *db, sqlite3 *db2, const char *zSql,
                            const char *zCommit) {
  sqlite3_stmt *p = NULL;
  sqlite3_str *pOut = sqlite3_str_new(NULL);
  int n = 0;
  ck_assert_int_eq(sqlite3_prepare_v2(db, zSql, -1, &p, NULL), SQLITE_OK);
  while (sqlite3_step(p) == SQLITE_ROW) {
    sqlite3_str_appendf(pOut, "%s%lld", n ? "," : "",
                        sqlite3_column_int64(p, 0));
    if (n++ == 0) {
      OK(db2, zCommit);
      /* another statement of this connection, while the first reads */
      CHECK(db, "SELECT sum(v) FROM b", "0");
    }
  }
  sqlite3_finalize(p);
  return sqlite3_str_finish(pOut);
}

START_TEST(test_a_statement_reads_one_moment) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir), *z;
  sqlite3 *db = openDb(zDb), *db2;
  CHECK(db, "PRAGMA journal_mode=WAL", "wal");
  OK(db, "CREATE VIRTUAL TABLE a USING wcs(KEY (k INT64), FAMILY f (v INT64))");
  OK(db, "CREATE VIRTUAL TABLE b USING wcs(KEY (k INT64), FAMILY f (v INT64))");
  OK(db, "INSERT INTO a(k, v) VALUES (1, 0), (2, 0), (3, 0)");
  OK(db, "INSERT INTO b(k, v) VALUES (1, 0), (2, 0), (3, 0)");
  db2 = openDb(zDb);
  z = stepWithCommit(db, db2, "SELECT b.v FROM a CROSS JOIN b ON b.k = a.k",
                     "UPDATE b SET v = 1");
  ck_assert_str_eq(z, "0,0,0");
  sqlite3_free(z);
  CHECK(db, "SELECT sum(v) FROM b", "3");
  OK(db2, "UPDATE b SET v = 0");
  z = stepWithCommit(db, db2, "SELECT (SELECT v FROM b WHERE b.k = a.k) FROM a",
                     "BEGIN; UPDATE b SET v = 1; UPDATE a SET v = 1; COMMIT");
  ck_assert_str_eq(z, "0,0,0");
  sqlite3_free(z);
  CHECK(db, "SELECT sum(v) FROM a", "3");
  /* a self-join of one table: both sides at one moment */
  OK(db2, "UPDATE b SET v = 0");
  z = stepWithCommit(db, db2,
                     "SELECT y.v FROM b AS x CROSS JOIN b AS y ON y.k = x.k",
                     "UPDATE b SET v = 1");
  ck_assert_str_eq(z, "0,0,0");
  sqlite3_free(z);
  /* the connection's own commit is seen by its next read, even with a
  ** statement of it still open; so are the writes of its functions, which
  ** commit by themselves */
  {
    sqlite3_stmt *p = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT k FROM a", -1, &p, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(p), SQLITE_ROW);
    OK(db, "UPDATE b SET v = 5 WHERE k = 1");
    CHECK(db, "SELECT v FROM b WHERE k = 1", "5");
    CHECK(db, "SELECT wcs_increment('b', wcs_key_encode('b', 2), 'f', 'v', 7)",
          "8");
    CHECK(db, "SELECT v FROM b WHERE k = 2", "8");
    CHECK(db, "SELECT wcs_delete_prefix('b', wcs_key_encode('b', 3))", "1");
    CHECK(db, "SELECT count(*) FROM b", "2");
    sqlite3_finalize(p);
  }
  /* a DELETE another connection commits while this one reads an older
  ** moment stays deleted once that moment ends (the engine's pooled
  ** iterators, made at the old moment, once took the newer state without
  ** the delete's tombstone, for every connection of the process) */
  {
    sqlite3_stmt *p = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT k FROM a", -1, &p, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(p), SQLITE_ROW);
    OK(db2, "DELETE FROM b WHERE k = 2");
    CHECK(db2, "SELECT group_concat(k) FROM b", "1");
    CHECK(db, "SELECT group_concat(k) FROM b", "1,2");
    sqlite3_finalize(p);
    CHECK(db, "SELECT group_concat(k) FROM b", "1");
    CHECK(db2, "SELECT group_concat(k) FROM b", "1");
    OK(db2, "INSERT INTO b(k, v) VALUES (2, 8)");
  }
  /* a statement still reading after its connection's own commit reads
  ** that commit's moment, not later commits of others */
  OK(db, "CREATE VIRTUAL TABLE z USING wcs(KEY (k INT64), FAMILY f (v INT64))");
  {
    sqlite3_stmt *p = NULL;
    int n = 0;
    ck_assert_int_eq(
        sqlite3_prepare_v2(db,
                           "SELECT (SELECT count(*) FROM b WHERE b.k != a.k) "
                           "FROM a",
                           -1, &p, NULL),
        SQLITE_OK);
    while (sqlite3_step(p) == SQLITE_ROW) {
      ck_assert_int_eq(sqlite3_column_int(p, 0), n == 0 ? 1 : 2 - (n == 1));
      if (n++ == 0) {
        OK(db, "INSERT INTO z(k, v) VALUES (1, 1)");
        OK(db2, "INSERT INTO b(k, v) VALUES (9, 9)");
      }
    }
    sqlite3_finalize(p);
    ck_assert_int_eq(n, 3);
    CHECK(db, "SELECT count(*) FROM b", "3");
  }
  /* a write through a declaration in another schema (temp) of the same
  ** store table, or by a function inside a transaction, is seen by the
  ** connection's later reads through every declaration, with a statement
  ** still open */
  {
    char *zB2 = sqlite3_mprintf(
        "CREATE VIRTUAL TABLE temp.b2 USING wcs(TABLE 'b', STORE '%s.wcs')",
        zDb);
    char *zU = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.u USING wcs(KEY (k "
                               "INT64), FAMILY f (v INT64), STORE '%s.wcs')",
                               zDb);
    OK(db, zB2);
    OK(db, zU);
    sqlite3_free(zB2);
    sqlite3_free(zU);
  }
  OK(db, "INSERT INTO temp.u(k, v) VALUES (1, 1)");
  {
    sqlite3_stmt *p = NULL, *p2 = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT k FROM a", -1, &p, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(p), SQLITE_ROW);
    ck_assert_int_eq(
        sqlite3_prepare_v2(db, "SELECT k FROM temp.u", -1, &p2, NULL),
        SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(p2), SQLITE_ROW);
    OK(db, "UPDATE temp.b2 SET v = 42 WHERE k = 1");
    CHECK(db, "SELECT v FROM main.b WHERE k = 1", "42");
    OK(db, "BEGIN; INSERT INTO main.z(k, v) VALUES (2, 2)");
    CHECK(db, "SELECT wcs_increment('u', wcs_key_encode('u', 1), 'f', 'v', 5)",
          "6");
    OK(db, "COMMIT");
    CHECK(db, "SELECT v FROM temp.u WHERE k = 1", "6");
    sqlite3_finalize(p2);
    sqlite3_finalize(p);
  }
  sqlite3_close(db2);
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* Two database files in a directory of their own whose tables share one
** store: one.db declares m (KEY (k INT64), FAMILY f (v INT64)) with zMk,
** two.db attaches to it as mm with zAt. */
typedef struct TwoFiles {
  const char *zDir;
  char *zOne, *zTwo; /* the files */
  char *zMk, *zAt;   /* the declarations */
} TwoFiles;

static void twoFilesInit(TwoFiles *t) {
  t->zDir = tu_tmpdir("vtab");
  t->zOne = sqlite3_mprintf("%s/one.db", t->zDir);
  t->zTwo = sqlite3_mprintf("%s/two.db", t->zDir);
  t->zMk = sqlite3_mprintf("CREATE VIRTUAL TABLE m USING wcs(KEY (k INT64), "
                           "FAMILY f (v INT64), STORE '%s/shared.wcs')",
                           t->zDir);
  t->zAt = sqlite3_mprintf("CREATE VIRTUAL TABLE mm USING wcs(TABLE 'm', "
                           "STORE '%s/shared.wcs')",
                           t->zDir);
}

static void twoFilesClear(TwoFiles *t) {
  sqlite3_free(t->zOne);
  sqlite3_free(t->zTwo);
  sqlite3_free(t->zMk);
  sqlite3_free(t->zAt);
  tu_rmrf(t->zDir);
}

/* Tables of two database files sharing a store are read at a moment per
** file, as SQLite reads each file in a read transaction of its own: a
** statement that reads both keeps the other file's moment when its
** connection commits to the first (it once took the latest state for
** both, another connection's commit to the second file included), and a
** file first read after another connection's commit sees it. */
START_TEST(test_each_file_read_at_its_own_moment) {
  TwoFiles f;
  sqlite3 *a, *c;
  sqlite3_stmt *p = NULL;
  char *zAttach, *zU;
  int n = 0;
  twoFilesInit(&f);
  zAttach = sqlite3_mprintf("ATTACH '%s' AS aux", f.zTwo);
  zU = sqlite3_mprintf("CREATE VIRTUAL TABLE u USING wcs(KEY (k INT64), "
                       "FAMILY f (v INT64), STORE '%s/shared.wcs')",
                       f.zDir);
  a = openDb(f.zOne);
  CHECK(a, "PRAGMA journal_mode=WAL", "wal");
  OK(a, f.zMk);
  OK(a, "INSERT INTO m(k, v) VALUES (1, 1), (2, 2), (3, 3)");
  c = openDb(f.zTwo);
  CHECK(c, "PRAGMA journal_mode=WAL", "wal");
  OK(c, zU);
  OK(c, "INSERT INTO u(k, v) VALUES (1, 1)");
  OK(a, zAttach);
  ck_assert_int_eq(sqlite3_prepare_v2(a,
                                      "SELECT (SELECT count(*) FROM aux.u) "
                                      "FROM main.m",
                                      -1, &p, NULL),
                   SQLITE_OK);
  while (sqlite3_step(p) == SQLITE_ROW) {
    ck_assert_int_eq(sqlite3_column_int(p, 0), 1);
    if (n++ == 0) {
      OK(c, "INSERT INTO u(k, v) VALUES (2, 2)");
      OK(a, "INSERT INTO main.m(k, v) VALUES (10, 10)");
      CHECK(a, "SELECT count(*) FROM main.m", "4"); /* its own commit */
    }
  }
  sqlite3_finalize(p);
  ck_assert_int_eq(n, 3);
  CHECK(a, "SELECT count(*) FROM aux.u", "2");
  /* a file first read while the other's moment is held sees the commit
  ** made before that read */
  ck_assert_int_eq(sqlite3_prepare_v2(a, "SELECT k FROM main.m", -1, &p, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(p), SQLITE_ROW);
  OK(c, "UPDATE u SET v = v + 1 WHERE k = 1");
  OK(a, "BEGIN IMMEDIATE");
  CHECK(a, "SELECT v FROM aux.u WHERE k = 1", "2");
  OK(a, "UPDATE aux.u SET v = 3 WHERE k = 1");
  OK(a, "COMMIT");
  sqlite3_finalize(p);
  CHECK(c, "SELECT v FROM u WHERE k = 1", "3");
  sqlite3_close(c);
  sqlite3_close(a);
  sqlite3_free(zAttach);
  sqlite3_free(zU);
  twoFilesClear(&f);
}
END_TEST

/* A COMMIT that SQLite refuses after xSync (a rollback journal, another
** connection reading the file) leaves the store transaction open and in
** flight; statements on another database file that shares the store do
** not wait for it (they once waited 30 s each), and the commit, retried,
** lands. */
START_TEST(test_refused_commit_holds_up_no_other_file) {
  TwoFiles f;
  sqlite3 *a, *r, *c;
  sqlite3_stmt *pRead = NULL;
  time_t t0;
  twoFilesInit(&f);
  a = openDb(f.zOne);
  OK(a, f.zMk);
  OK(a, "CREATE TABLE n(x); INSERT INTO n VALUES (1), (2)");
  sqlite3_busy_timeout(a, 100);
  c = openDb(f.zTwo);
  CHECK(c, "PRAGMA journal_mode=WAL", "wal");
  OK(c, f.zAt);
  r = openDb(f.zOne);
  OK(a, "BEGIN; INSERT INTO m(k, v) VALUES (1, 1)");
  ck_assert_int_eq(sqlite3_prepare_v2(r, "SELECT x FROM n", -1, &pRead, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(pRead), SQLITE_ROW); /* r holds the file */
  CHECK_ERR(a, "COMMIT", "database is locked");
  t0 = time(NULL);
  CHECK(c, "SELECT count(*) FROM mm", "0");
  OK(c, "INSERT INTO mm(k, v) VALUES (2, 2)");
  CHECK(c, "SELECT count(*) FROM mm", "1");
  ck_assert_int_lt((int)(time(NULL) - t0), 10);
  sqlite3_finalize(pRead);
  OK(a, "COMMIT");
  CHECK(c, "SELECT group_concat(k) FROM mm", "1,2");
  sqlite3_close(r);
  sqlite3_close(c);
  sqlite3_close(a);
  twoFilesClear(&f);
}
END_TEST

/* A statement whose store table another connection drops and creates
** again between two of its scans says so, and what to do (it said
** "reopen it", the engine's words); the declaration keeps the old table
** until the database is opened again (doc/sql.md §2). */
START_TEST(test_table_replaced_mid_statement_says_run_again) {
  TwoFiles f;
  sqlite3 *a, *c;
  sqlite3_stmt *p = NULL;
  int rc;
  twoFilesInit(&f);
  a = openDb(f.zOne);
  c = openDb(f.zTwo);
  OK(a, f.zMk);
  OK(a, "INSERT INTO m(k, v) VALUES (1, 1), (2, 2), (3, 3)");
  OK(c, f.zAt);
  ck_assert_int_eq(sqlite3_prepare_v2(c,
                                      "SELECT x.k FROM mm AS x CROSS JOIN "
                                      "mm AS y ON y.k = x.k",
                                      -1, &p, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(p), SQLITE_ROW);
  OK(a, "DROP TABLE m");
  OK(a, f.zMk);
  OK(a, "INSERT INTO m(k, v) VALUES (7, 7)");
  rc = sqlite3_step(p);
  ck_assert_int_ne(rc, SQLITE_ROW);
  ck_assert_ptr_nonnull(strstr(sqlite3_errmsg(c),
                               "store table 'm' was dropped and created "
                               "again since this connection opened it; open "
                               "the database again"));
  sqlite3_finalize(p);
  CHECK_ERR(c, "SELECT group_concat(k) FROM mm", "dropped and created again");
  /* the functions that name it refuse too (wcs_alter once altered the
  ** new table through the old declaration) */
  CHECK_ERR(c, "SELECT wcs_alter('mm', 'FAMILY g')",
            "wcs_alter: mm: store table 'm' was dropped and created again");
  CHECK_ERR(c, "SELECT wcs_compact('mm')", "dropped and created again");
  CHECK(a, "SELECT wcs_stats('m') ->> '$.families[#-1].name'", "f");
  sqlite3_close(c);
  c = openDb(f.zTwo);
  CHECK(c, "SELECT group_concat(k) FROM mm", "7");
  /* an alter of the GC policy from the other file: this file's next write
  ** takes it, read first or not (a write once kept failing until a read) */
  OK(c, "SELECT wcs_alter('mm', 'FAMILY f (v INT64) MAX VERSIONS 2')");
  OK(a, "INSERT INTO m(k, v) VALUES (8, 8)");
  OK(a, "BEGIN; INSERT INTO m(k, v) VALUES (9, 9); COMMIT");
  CHECK(c, "SELECT group_concat(k) FROM mm", "7,8,9");
  sqlite3_close(c);
  sqlite3_close(a);
  twoFilesClear(&f);
}
END_TEST

START_TEST(test_read_then_write_after_another_commit_is_refused) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  sqlite3 *db = openDb(zDb), *db2;
  CHECK(db, "PRAGMA journal_mode=WAL", "wal");
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64))");
  OK(db, "INSERT INTO t(k, v) VALUES ('a', 1)");
  db2 = openDb(zDb);

  /* read, another connection's commit, write: refused */
  OK(db, "BEGIN");
  CHECK(db, "SELECT v FROM t WHERE k = 'a'", "1");
  OK(db2, "UPDATE t SET v = v + 1 WHERE k = 'a'");
  CHECK_ERR(db, "UPDATE t SET v = 2 WHERE k = 'a'", "database is locked");
  ck_assert_int_eq(sqlite3_extended_errcode(db), SQLITE_BUSY_SNAPSHOT);
  OK(db, "ROLLBACK");
  CHECK(db2, "SELECT v FROM t", "2");

  /* run again: it reads the other commit, and its write counts */
  OK(db, "BEGIN");
  CHECK(db, "SELECT v FROM t WHERE k = 'a'", "2");
  OK(db, "UPDATE t SET v = 3 WHERE k = 'a'");
  OK(db, "COMMIT");
  CHECK(db2, "SELECT v FROM t", "3");

  /* with no commit in between, reading first is no conflict; nor is a
  ** commit of the other connection that wrote no wcs table and no
  ** native one */
  OK(db, "BEGIN");
  CHECK(db, "SELECT v FROM t WHERE k = 'a'", "3");
  CHECK(db2, "SELECT count(*) FROM t", "1");
  OK(db, "UPDATE t SET v = 4 WHERE k = 'a'");
  OK(db, "COMMIT");
  CHECK(db2, "SELECT v FROM t", "4");
  sqlite3_close(db2);
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* The SQL functions that write commit on their own as an INSERT does:
** under SQLite's write lock, so a function call waits for (here, with no
** busy timeout, is refused by) another connection's write transaction
** instead of being hidden by its later commit, and a transaction that
** read before the call cannot then write over it. */
START_TEST(test_function_writes_take_the_write_lock) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp), *db2;
  CHECK(db, "PRAGMA journal_mode=WAL", "wal");
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(n INT64, v INT64))");
  OK(db, "INSERT INTO t(k, n) VALUES ('c', 0), ('p1', 0)");
  db2 = openDb(tmp.zDb);

  /* a write transaction of the other connection: refused, nothing made */
  OK(db, "BEGIN");
  OK(db, "UPDATE t SET n = n + 1 WHERE k = 'c'");
  CHECK_ERR(db2, "SELECT wcs_increment('t', 'c', 'f', 'n', 1)",
            "database is locked");
  CHECK_ERR(db2, "SELECT wcs_delete_prefix('t', 'p')", "database is locked");
  OK(db, "COMMIT");
  CHECK(db2, "SELECT wcs_increment('t', 'c', 'f', 'n', 1)", "2");
  CHECK(db, "SELECT k, n FROM t", "c|2\np1|0");

  /* read, then the other connection's increment, then write: refused */
  OK(db, "BEGIN");
  CHECK(db, "SELECT n FROM t WHERE k = 'c'", "2");
  CHECK(db2, "SELECT wcs_increment('t', 'c', 'f', 'n', 1)", "3");
  CHECK_ERR(db, "UPDATE t SET n = 3 WHERE k = 'c'", "database is locked");
  OK(db, "ROLLBACK");
  CHECK(db, "SELECT n FROM t WHERE k = 'c'", "3");

  /* inside a transaction of its own connection that writes no wcs table
  ** the call commits at once and holds the lock to its end */
  OK(db2, "CREATE TABLE nat(x)");
  OK(db2, "BEGIN");
  OK(db2, "INSERT INTO nat VALUES (1)");
  CHECK(db2, "SELECT wcs_increment('t', 'c', 'f', 'n', 1)", "4");
  CHECK_ERR(db, "INSERT INTO t(k, n) VALUES ('d', 1)", "database is locked");
  OK(db2, "COMMIT");
  /* and from a statement that writes */
  OK(db2, "INSERT INTO nat SELECT wcs_increment('t', 'c', 'f', 'n', 1)");
  CHECK(db, "SELECT n FROM t WHERE k = 'c'", "5");
  CHECK(db, "SELECT group_concat(x) FROM nat", "1,5");

  /* a read-only connection changes nothing through them */
  OK(db2, "PRAGMA query_only = 1");
  CHECK_ERR(db2, "SELECT wcs_increment('t', 'c', 'f', 'n', 1)", "read-only");
  CHECK_ERR(db2, "SELECT wcs_delete_prefix('t', 'c')", "read-only");
  CHECK_ERR(db2, "SELECT wcs_alter('t', 'FAMILY g')", "read-only");
  CHECK_ERR(db2, "SELECT wcs_compact('t')", "read-only");
  CHECK_ERR(db2, "SELECT wcs_compact()", "read-only");
  CHECK(db, "SELECT k, n FROM t", "c|5\np1|0");
  sqlite3_close(db2);
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* A table created inside a transaction takes writes at once (SQLite joins
** it to the transaction without an xBegin), and a ROLLBACK takes back the
** store table it made as well as its declaration. */
START_TEST(test_table_created_in_a_transaction) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp);
  OK(db, "BEGIN");
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f "
         "(x INT64))");
  OK(db, "INSERT INTO m(k, x) VALUES ('a', 1)");
  CHECK(db, "SELECT wcs_increment('m', 'b', 'f', 'x', 2)", "2");
  CHECK(db, "SELECT k, x FROM m", "a|1\nb|2");
  OK(db, "CREATE VIRTUAL TABLE m2 USING wcs(TABLE 'm')");
  OK(db, "INSERT INTO m2(k, x) VALUES ('c', 3)");
  OK(db, "COMMIT");
  CHECK(db, "SELECT k, x FROM m", "a|1\nb|2\nc|3");

  OK(db, "BEGIN");
  OK(db, "CREATE VIRTUAL TABLE gone USING wcs(KEY (k STRING), FAMILY f)");
  OK(db, "INSERT INTO gone(k, f) VALUES ('a', '{\"q\":1}')");
  OK(db, "ROLLBACK");
  CHECK(db, "SELECT json_array_length(wcs_stats() -> '$.stores[0].tables')",
        "1");
  OK(db, "CREATE VIRTUAL TABLE gone USING wcs(KEY (k STRING), FAMILY f)");
  CHECK(db, "SELECT count(*) FROM gone", "0");
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* A table must fit SQLite's column limit: a CREATE or wcs_alter() that
** would pass it is refused whole, leaving no store table behind and the
** table as it was. */
START_TEST(test_columns_beyond_the_limit_are_refused) {
  sqlite3 *db = openDb(NULL);
  sqlite3_str *pStr = sqlite3_str_new(db);
  char *zSql;
  int i;
  sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 20);
  sqlite3_str_appendall(pStr, "CREATE VIRTUAL TABLE w USING wcs(KEY (k "
                              "STRING), FAMILY f (");
  for (i = 0; i < 17; i++)
    sqlite3_str_appendf(pStr, "%sc%d INT64", i ? ", " : "", i);
  sqlite3_str_appendall(pStr, "), FAMILY g)");
  zSql = sqlite3_str_finish(pStr);
  /* k, _key, 17 columns, f, g, _timestamp: 22 */
  CHECK_ERR(db, zSql, "w would have 22 columns and SQLite allows 20");
  CHECK(db, "SELECT json_array_length(wcs_stats() -> '$.stores[0].tables')",
        "0");
  OK(db, "CREATE VIRTUAL TABLE w USING wcs(KEY (k STRING), FAMILY f (c0 "
         "INT64))");
  OK(db, "INSERT INTO w(k, c0) VALUES ('a', 1)");
  CHECK_ERR(db,
            "SELECT wcs_alter('w', 'FAMILY f (c0 INT64, c1 INT64, c2 INT64, "
            "c3 INT64, c4 INT64, c5 INT64, c6 INT64, c7 INT64, c8 INT64, c9 "
            "INT64, c10 INT64, c11 INT64, c12 INT64, c13 INT64, c14 INT64, "
            "c15 INT64, c16 INT64)')",
            "w would have 21 columns");
  CHECK(db, "SELECT k, c0 FROM w", "a|1");
  OK(db, "SELECT wcs_alter('w', 'FAMILY g')");
  CHECK(db, "SELECT k, c0, g FROM w", "a|1|NULL");
  sqlite3_free(zSql);
  sqlite3_close(db);
}
END_TEST

/* A statement of db that has read its first row and holds its read
** transaction open until it is finalized. */
static sqlite3_stmt *readingStmt(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *pStmt = NULL;
  ck_assert_int_eq(sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(pStmt), SQLITE_ROW);
  return pStmt;
}

/* wcs_alter() must reach every connection: with a rollback journal another
** connection's read holds the lock the schema cookie needs, and the change
** is refused whole rather than made unseen. */
START_TEST(test_alter_refused_while_the_schema_cannot_be_written) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp), *db2;
  sqlite3_stmt *pStmt;
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f "
         "(x INT64))");
  OK(db, "INSERT INTO m(k, x) VALUES ('a', 1), ('b', 2)");
  db2 = openDb(tmp.zDb);
  pStmt = readingStmt(db2, "SELECT k FROM m");
  CHECK_ERR(db, "SELECT wcs_alter('m', 'FAMILY f (x INT64, y STRING)')",
            "nothing was changed");
  sqlite3_finalize(pStmt);
  CHECK(db2, "SELECT * FROM m", "a|1|{\"x\":1}\nb|2|{\"x\":2}");
  OK(db, "SELECT wcs_alter('m', 'FAMILY f (x INT64, y STRING)')");
  CHECK(db2, "SELECT * FROM m", "a|1|NULL|{\"x\":1}\nb|2|NULL|{\"x\":2}");
  CHECK(db, "SELECT y FROM m", "NULL\nNULL");
  sqlite3_close(db2);
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* Another process reads the store through a read-only connection
** (mode=ro): it reads as a follower, taking no lock, so this process,
** which opens the store afterwards, writes it; and its reads see those
** writes. (It used to open the store for writing, and lock this process
** out with "held by another process"; so did a writing function it
** called, refused as it was.) */
static void readOnlyReader(const char *zDb, int fdIn, int fdOut) {
  sqlite3 *db = NULL;
  char c = 'y';
  sqlite3_stmt *pStmt = NULL;
  if (sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      wcs_register(db) != SQLITE_OK ||
      sqlite3_exec(db, "SELECT count(*) FROM metrics", NULL, NULL, NULL) ||
      /* refused, and without taking the store for writing on the way */
      sqlite3_exec(db, "SELECT wcs_compact('metrics')", NULL, NULL, NULL) !=
          SQLITE_READONLY) {
    c = 'n';
  }
  if (write(fdOut, &c, 1) != 1) _exit(2);
  if (read(fdIn, &c, 1) != 1) _exit(2);
  c = 'n';
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM metrics", -1, &pStmt,
                         NULL) == SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    c = (char)('0' + sqlite3_column_int(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  if (write(fdOut, &c, 1) != 1) _exit(2);
  _exit(sqlite3_close(db) == SQLITE_OK ? 0 : 1);
}

START_TEST(test_read_only_connection_reads_beside_the_writer) {
  TmpDb tmp;
  const char *zDb;
  int aCmd[2], aAck[2], st = 0;
  char c = 0;
  pid_t pid;
  sqlite3 *db;
  sqlite3_close(tmpDbOpen(&tmp));
  zDb = tmp.zDb;
  seedMetricsDb(zDb);
  ck_assert_int_eq(pipe(aCmd), 0);
  ck_assert_int_eq(pipe(aAck), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) readOnlyReader(zDb, aCmd[0], aAck[1]);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  db = openDb(zDb);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)");
  CHECK(db, "SELECT count(*) FROM metrics", "2");
  ck_assert_int_eq(write(aCmd[1], "r", 1), 1);
  ck_assert_int_eq(read(aAck[0], &c, 1), 1);
  ck_assert_int_eq(c, '2');
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  sqlite3_close(db);
  close(aCmd[0]);
  close(aCmd[1]);
  close(aAck[0]);
  close(aAck[1]);
  tmpDbDone(&tmp);
}
END_TEST

/* In one process, a read-only connection opened after a writing one
** shares its open store (and so waits for its commits in flight like any
** reader of it); one opened before it reads as a follower. Either way it
** sees each commit of the writing one at its next statement. */
START_TEST(test_read_only_connection_in_the_writers_process) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp), *ro = NULL, *ro2 = NULL;
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1)");
  ro = openReadOnly(tmp.zDb);
  CHECK(ro, "SELECT count(*) FROM metrics", "1");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','b',1,2)");
  CHECK(ro, "SELECT count(*) FROM metrics", "2");
  sqlite3_close(db);
  /* the reader first, then a writer */
  ro2 = openReadOnly(tmp.zDb);
  CHECK(ro2, "SELECT count(*) FROM metrics", "2");
  db = openDb(tmp.zDb);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','c',1,3)");
  CHECK(ro2, "SELECT sum(cpu) FROM metrics", "6");
  CHECK(ro, "SELECT sum(cpu) FROM metrics", "6");
  CHECK_ERR(ro2, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','d',1,4)",
            "readonly");
  sqlite3_close(ro2);
  sqlite3_close(ro);
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* wcs_compact() without a table compacts each store that a table of a
** database this connection may write uses, whichever table it meets
** first: a read-only database attached beside a writable one that shares
** its store does not stop it. */
START_TEST(test_compact_all_beside_a_read_only_attachment) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp), *db2 = NULL;
  char *zRo = sqlite3_mprintf("%s/ro.db", tmp.zDir), *zSql;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64), STORE 'shared.wcs')");
  OK(db, "INSERT INTO t(k, v) VALUES ('a', 1)");
  sqlite3_close(db);
  db = openDb(zRo);
  OK(db, "CREATE VIRTUAL TABLE u USING wcs(TABLE 't', STORE 'shared.wcs')");
  sqlite3_close(db);
  ck_assert_int_eq(sqlite3_open_v2(tmp.zDb, &db2,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
                                   NULL),
                   SQLITE_OK);
  ck_assert_int_eq(wcs_register(db2), SQLITE_OK);
  CHECK(db2, "SELECT count(*) FROM t", "1");
  zSql = sqlite3_mprintf("ATTACH 'file:%s?mode=ro' AS b", zRo);
  OK(db2, zSql);
  CHECK(db2, "SELECT count(*) FROM b.u", "1");
  CHECK(db2, "SELECT wcs_compact()", "ok");
  CHECK_ERR(db2, "SELECT wcs_compact('u')", "read-only");
  sqlite3_free(zSql);
  sqlite3_free(zRo);
  sqlite3_close(db2);
  tmpDbDone(&tmp);
}
END_TEST

/* A process killed between xCreate (which makes the store table) and
** SQLite's commit of the declaration leaves a store table no declaration
** names; the same CREATE run again takes it over, since it is empty and of
** that very schema. One with rows, or of another schema, is refused as
** before. (The kill is played by taking the declaration out of
** sqlite_schema behind SQLite's back.) */
START_TEST(test_create_takes_over_what_a_killed_create_left) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp);
  static const char *zCreate =
      "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f (v INT64))";
  static const char *zForget =
      "PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name IN "
      "('t', 't_wcsclock'); PRAGMA writable_schema = OFF";
  OK(db, zCreate);
  OK(db, zForget);
  sqlite3_close(db);
  db = openDb(tmp.zDb);
  OK(db, zCreate);
  OK(db, "INSERT INTO t(k, v) VALUES ('a', 1)");
  CHECK(db, "SELECT k, v FROM t", "a|1");
  /* with a row, it is somebody's data */
  OK(db, zForget);
  sqlite3_close(db);
  db = openDb(tmp.zDb);
  CHECK_ERR(db, zCreate, "store table 't' already exists");
  CHECK_ERR(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY g)",
            "store table 't' already exists");
  /* an empty store table that another declaration names is its table */
  OK(db, "CREATE VIRTUAL TABLE a USING wcs(TABLE 'x', KEY (k STRING), "
         "FAMILY f (v INT64))");
  CHECK_ERR(db,
            "CREATE VIRTUAL TABLE b USING wcs(TABLE 'x', KEY (k STRING), "
            "FAMILY f (v INT64))",
            "store table 'x' already exists");
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* A store that is there but will not open (here its lock file cannot be
** opened; a full disk does the same) is not "missing": every statement
** says why, that the table is intact, and tries again, so the same
** connection reads it once the cause is gone; DROP TABLE, which could
** drop only the declaration, is refused meanwhile. */
START_TEST(test_store_that_fails_to_open_is_tried_again) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp);
  char *zLock;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64))");
  OK(db, "INSERT INTO t(k, v) VALUES ('a', 1)");
  sqlite3_close(db);
  zLock = sqlite3_mprintf("%s.wcs/LOCK", tmp.zDb);
  ck_assert_int_eq(unlink(zLock), 0);
  ck_assert_int_eq(mkdir(zLock, 0755), 0);
  db = openDb(tmp.zDb);
  CHECK_ERR(db, "SELECT * FROM t",
            "the table is intact: the next statement tries to open the store "
            "again");
  CHECK_ERR(db, "DROP TABLE t", "");
  CHECK(db, "SELECT count(*) FROM sqlite_schema WHERE name = 't'", "1");
  ck_assert_int_eq(rmdir(zLock), 0);
  CHECK(db, "SELECT k, v FROM t", "a|1");
  sqlite3_free(zLock);
  sqlite3_close(db);
  /* a store directory emptied of its files holds no store: the table is
  ** missing, and DROP TABLE removes the declaration */
  {
    char *zDir = sqlite3_mprintf("%s.wcs", tmp.zDb);
    tu_rmrf(zDir);
    ck_assert_int_eq(mkdir(zDir, 0755), 0);
    db = openDb(tmp.zDb);
    CHECK_ERR(db, "SELECT * FROM t", "DROP TABLE t removes this declaration");
    OK(db, "DROP TABLE t");
    CHECK(db, "SELECT count(*) FROM sqlite_schema WHERE name = 't'", "0");
    sqlite3_close(db);
    sqlite3_free(zDir);
  }
  tmpDbDone(&tmp);
}
END_TEST

/* A deserialized database is in memory though SQLite names it ("x"): its
** tables without STORE use the connection's in-memory store, not a store
** "x.wcs" in the current directory that every such database would share
** and that would outlive them. */
START_TEST(test_deserialized_database_has_an_in_memory_store) {
  int i;
  for (i = 0; i < 2; i++) {
    sqlite3 *db0 = openDb(NULL), *db = openDb(NULL);
    sqlite3_int64 n = 0;
    unsigned char *a;
    OK(db0, "CREATE TABLE n(x)");
    a = sqlite3_serialize(db0, "main", &n, 0);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(sqlite3_deserialize(db, "main", a, n, n,
                                         SQLITE_DESERIALIZE_FREEONCLOSE |
                                             SQLITE_DESERIALIZE_RESIZEABLE),
                     SQLITE_OK);
    CHECK(db, "SELECT file FROM pragma_database_list WHERE name = 'main'", "x");
    OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f)");
    OK(db, "INSERT INTO t(k, f) VALUES ('a', '{\"q\":\"v\"}')");
    CHECK(db, "SELECT json_extract(wcs_stats('t'), '$.store.path')",
          ":memory:");
    ck_assert_int_ne(access("x.wcs", F_OK), 0);
    sqlite3_close(db);
    sqlite3_close(db0);
  }
}
END_TEST

/* A database file's image in memory (a backup into :memory:) has the
** file's declarations and not its store: its tables' statements say that
** the connection's in-memory store has no such table, and how to reach
** the rows; DROP TABLE removes such a declaration. */
START_TEST(test_backup_into_memory_brings_declarations_not_the_store) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp), *mem = openDb(NULL);
  sqlite3_backup *b;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64))");
  OK(db, "INSERT INTO t(k, v) VALUES ('a', 1)");
  b = sqlite3_backup_init(mem, "main", db, "main");
  ck_assert_ptr_nonnull(b);
  ck_assert_int_eq(sqlite3_backup_step(b, -1), SQLITE_DONE);
  ck_assert_int_eq(sqlite3_backup_finish(b), SQLITE_OK);
  CHECK_ERR(mem, "SELECT * FROM t", "this connection's has no such table");
  CHECK_ERR(mem, "SELECT count(*) FROM t", "ATTACH the file itself");
  OK(mem, "DROP TABLE t");
  CHECK(db, "SELECT k, v FROM t", "a|1");
  sqlite3_close(mem);
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* A DROP TABLE of its own with a rollback journal commits only once the
** file's readers are done: while another connection reads past the wait,
** the DROP fails and the table keeps its rows (its store table was
** dropped before SQLite's commit failed). Once the read is over it
** drops. */
START_TEST(test_drop_refused_while_a_reader_holds_the_file) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp), *db2;
  sqlite3_stmt *pStmt;
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f "
         "(x INT64))");
  OK(db, "INSERT INTO m(k, x) VALUES ('a', 1), ('b', 2)");
  OK(db, "CREATE TABLE n(v)");
  OK(db, "INSERT INTO n VALUES (1)");
  db2 = openDb(tmp.zDb);
  pStmt = readingStmt(db2, "SELECT v FROM n");
  CHECK_ERR(db, "DROP TABLE m", "locked");
  CHECK(db, "SELECT k, x FROM m", "a|1\nb|2");
  sqlite3_finalize(pStmt);
  OK(db, "DROP TABLE m");
  CHECK(db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'm%'", "0");
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f "
         "(x INT64))");
  CHECK(db, "SELECT count(*) FROM m", "0");
  CHECK(db2, "SELECT count(*) FROM m", "0");
  sqlite3_close(db2);
  sqlite3_close(db);
  tmpDbDone(&tmp);
}
END_TEST

/* fork(): a child inherits the parent's open store but not its threads
** nor its right to write. The inherited connection refuses every use, and
** a connection the child opens reads the store beside the parent (the
** parent's later commits included) and cannot write it; the store stays
** whole for the parent. */
START_TEST(test_a_forked_child_reads_beside_its_parent) {
  TmpDb tmp;
  sqlite3 *db = tmpDbOpen(&tmp);
  int aGo[2], aDone[2], status = -1;
  pid_t pid;
  char c = 0;
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64))");
  OK(db, "INSERT INTO t(k, v) VALUES ('p0', 0)");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO t(k, v) VALUES ('p1', 1)");
  ck_assert_int_eq(pipe(aGo), 0);
  ck_assert_int_eq(pipe(aDone), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* the child: no Check assertions (they would report from here) */
    sqlite3 *db2;
    char *z;
    int bad = 0;
    z = run(db, "SELECT k FROM t");
    bad |= strstr(z, "before fork()") == NULL;
    sqlite3_free(z);
    z = run(db, "SELECT wcs_increment('t', 'p0', 'f', 'v', 1)");
    bad |= (strstr(z, "before fork()") == NULL) << 1;
    sqlite3_free(z);
    /* a table in the transaction the parent had open gets no xBegin here:
    ** its writes and the COMMIT are refused all the same (SQLite then
    ** rolls back, which leaves the parent's store alone) */
    z = run(db, "INSERT INTO t(k, v) VALUES ('c', 1)");
    bad |= (strstr(z, "before fork()") == NULL) << 1;
    sqlite3_free(z);
    z = run(db, "COMMIT");
    bad |= (strstr(z, "before fork()") == NULL) << 1;
    sqlite3_free(z);
    if (read(aGo[0], &c, 1) != 1) bad |= 4;
    db2 = NULL;
    if (sqlite3_open(tmp.zDb, &db2) != SQLITE_OK || wcs_register(db2)) bad |= 8;
    z = run(db2, "SELECT group_concat(k) FROM t");
    bad |= (strcmp(z, "p0,p1") != 0) << 4;
    sqlite3_free(z);
    z = run(db2, "INSERT INTO t(k, v) VALUES ('c', 1)");
    bad |= (strstr(z, "held by another process") == NULL) << 5;
    sqlite3_free(z);
    sqlite3_close(db2);
    if (write(aDone[1], &c, 1) != 1) bad |= 64;
    _exit(bad);
  }
  OK(db, "COMMIT");
  ck_assert_int_eq(write(aGo[1], "g", 1), 1);
  ck_assert_int_eq(read(aDone[0], &c, 1), 1);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child status %d (bits: see the child's checks)",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  OK(db, "INSERT INTO t(k, v) VALUES ('p2', 2)");
  sqlite3_close(db);
  db = openDb(tmp.zDb);
  CHECK(db, "SELECT group_concat(k) FROM t", "p0,p1,p2");
  sqlite3_close(db);
  close(aGo[0]);
  close(aGo[1]);
  close(aDone[0]);
  close(aDone[1]);
  tmpDbDone(&tmp);
}
END_TEST

/* The commit clock, <name>_wcsclock: made with the table (not for a
** history view); ticked once by a commit that writes the table while
** another connection with the store open holds a read transaction, and
** not otherwise; renamed and dropped with the table; read-only to SQL in
** defensive mode. A table without one (declared before clocks existed)
** still takes writes. */
START_TEST(test_commit_clock_follows_the_table) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  sqlite3 *db = openDb(zDb), *db2;
  CHECK(db, "PRAGMA journal_mode=WAL", "wal");
  OK(db, "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f "
         "(v INT64))");
  OK(db, "CREATE VIRTUAL TABLE a USING wcs(TABLE 'm')");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'm', HISTORY)");
  CHECK(db,
        "SELECT name, type FROM pragma_table_list WHERE schema = 'main' AND "
        "name NOT LIKE 'sqlite%' ORDER BY name",
        "a|virtual\na_wcsclock|shadow\nh|virtual\nm|virtual\n"
        "m_wcsclock|shadow");
  CHECK(db, "SELECT n FROM m_wcsclock", "0");
  db2 = openDb(zDb);

  /* no other reader: no tick */
  OK(db, "INSERT INTO m(k, v) VALUES ('a', 1)");
  CHECK(db, "SELECT n FROM m_wcsclock", "0");

  /* while another connection reads: once per commit, and each
  ** statement's own changes() */
  OK(db2, "BEGIN");
  CHECK(db2, "SELECT count(*) FROM m", "1");
  OK(db, "INSERT INTO m(k, v) VALUES ('b', 2)");
  CHECK(db, "SELECT n FROM m_wcsclock", "1");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO m(k, v) VALUES ('c', 3), ('d', 4)");
  CHECK(db, "SELECT changes()", "2");
  OK(db, "UPDATE m SET v = v + 1 WHERE k IN ('c', 'd')");
  CHECK(db, "SELECT changes()", "2");
  OK(db, "COMMIT");
  CHECK(db, "SELECT n FROM m_wcsclock", "2");
  /* a transaction rolled back to before its writes, then writing again */
  OK(db, "BEGIN; SAVEPOINT s; INSERT INTO m(k, v) VALUES ('e', 5)");
  OK(db, "ROLLBACK TO s; INSERT INTO m(k, v) VALUES ('f', 6); COMMIT");
  CHECK(db, "SELECT n FROM m_wcsclock", "3");
  /* ... one rolled back whole ticks nothing */
  OK(db, "BEGIN; INSERT INTO m(k, v) VALUES ('g', 7); ROLLBACK");
  CHECK(db, "SELECT n FROM m_wcsclock", "3");
  CHECK(db2, "SELECT count(*) FROM m", "5"); /* reads the store's latest */
  OK(db2, "COMMIT");
  OK(db, "INSERT INTO m(k, v) VALUES ('h', 8)");
  CHECK(db, "SELECT n FROM m_wcsclock", "3");
  CHECK(db, "SELECT group_concat(k, '') FROM m", "abcdfh");

  /* renamed and dropped with its table */
  OK(db2, "BEGIN");
  CHECK(db2, "SELECT count(*) FROM m", "6");
  OK(db, "INSERT INTO a(k, v) VALUES ('i', 9)");
  CHECK(db, "SELECT n FROM a_wcsclock", "1");
  OK(db2, "COMMIT");
  OK(db, "ALTER TABLE a RENAME TO b");
  OK(db2, "BEGIN");
  CHECK(db2, "SELECT count(*) FROM m", "7");
  OK(db, "INSERT INTO b(k, v) VALUES ('j', 10)");
  CHECK(db, "SELECT n FROM b_wcsclock", "2");
  OK(db2, "COMMIT");
  OK(db, "DROP TABLE b");
  CHECK(db,
        "SELECT group_concat(name) FROM (SELECT name FROM sqlite_schema "
        "ORDER BY name)",
        "h,m,m_wcsclock");

  /* defensive mode: SQL reads the clock but does not write it; commits
  ** still tick it */
  ck_assert_int_eq(sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL),
                   SQLITE_OK);
  CHECK_ERR(db, "UPDATE m_wcsclock SET n = 0", "may not be modified");
  CHECK_ERR(db, "DROP TABLE m_wcsclock", "may not be dropped");
  OK(db2, "BEGIN");
  CHECK(db2, "SELECT count(*) FROM m", "8");
  OK(db, "INSERT INTO m(k, v) VALUES ('k', 11)");
  CHECK(db, "SELECT n FROM m_wcsclock", "4");
  ck_assert_int_eq(sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 0, NULL),
                   SQLITE_OK);

  /* without a clock, commits tick nothing and still work */
  OK(db2, "COMMIT");
  OK(db, "DROP TABLE m_wcsclock");
  OK(db2, "BEGIN");
  CHECK(db2, "SELECT count(*) FROM m", "9");
  OK(db, "INSERT INTO m(k, v) VALUES ('l', 12)");
  OK(db2, "COMMIT");
  CHECK(db, "SELECT count(*) FROM m", "10");
  OK(db, "DROP TABLE m");
  CHECK(db, "SELECT group_concat(name) FROM sqlite_schema", "h");
  sqlite3_close(db2);
  sqlite3_close(db);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* 8 MiB in one commit while the process may not grow a file past 4 MiB:
** SQLite's commit is done, the store's fails. Returns the statement's
** error text ("" for none). */
static char *commitTooBig(sqlite3 *db, const char *zPrefix) {
  struct rlimit old, lim;
  char *zGot, *zSql;
  ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, SIG_IGN);
  lim = old;
  lim.rlim_cur = 4u << 20;
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  zSql = sqlite3_mprintf(
      "INSERT INTO t(k, v) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
      "SELECT i + 1 FROM c WHERE i < 8) SELECT '%q' || i, zeroblob(1048576) "
      "FROM c",
      zPrefix);
  zGot = run(db, zSql);
  sqlite3_free(zSql);
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, SIG_DFL);
  return zGot;
}

/* A store write that fails after SQLite's commit succeeded (here: the
** process may not grow files, RLIMIT_FSIZE) cannot fail that COMMIT: the
** next statement on a table of the store says what was lost, once, and
** the store holds nothing of the transaction. SQLite's error log has it
** at once, and again if the connection closes before telling. */
START_TEST(test_commit_store_cannot_write_is_reported_next) {
  const char *zDir = tu_tmpdir("vtab");
  char *zDb = sqlite3_mprintf("%s/app.db", zDir);
  sqlite3 *db;
  char *zGot;
  zWcsLog[0] = 0;
  sqlite3_shutdown();
  ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_LOG, wcsLogLine, NULL),
                   SQLITE_OK);
  ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
  db = openDb(zDb);
  OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
         "(v STRING))");
  OK(db, "INSERT INTO t(k, v) VALUES ('a', 'x')");
  zGot = commitTooBig(db, "big");
  ck_assert_str_eq(zGot, ""); /* SQLite's commit was done: no error */
  sqlite3_free(zGot);
  ck_assert_msg(strstr(zWcsLog, "reported done could not write the store") &&
                    !strstr(zWcsLog, "never reported"),
                "log: %s", zWcsLog);
  CHECK_ERR(db, "SELECT count(*) FROM t", "could not write the store");
  CHECK(db, "SELECT count(*) FROM t", "1");
  OK(db, "INSERT INTO t(k, v) VALUES ('b', 'y')");
  CHECK(db, "SELECT k, v FROM t", "a|x\nb|y");
  /* lost again, and the connection closes before a statement tells */
  zGot = commitTooBig(db, "more");
  ck_assert_str_eq(zGot, "");
  sqlite3_free(zGot);
  sqlite3_close(db);
  ck_assert_msg(strstr(zWcsLog, "never reported, the connection closed first"),
                "log: %s", zWcsLog);
  sqlite3_shutdown();
  ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_LOG, NULL, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
  sqlite3_free(zDb);
  tu_rmrf(zDir);
}
END_TEST

/* An INT64 key field takes INT64's range and no more, on both sides: a
** text or REAL past -2^63 rounds to -2^63 as a double, and was stored as
** INT64_MIN, so distinct values became one row. INSERT and wcs_key_encode
** take the same values and say why they refuse one. */
START_TEST(test_int64_key_field_refuses_values_past_its_range) {
  sqlite3 *db = openDb(NULL);
  OK(db, "CREATE VIRTUAL TABLE o USING wcs(KEY (n INT64), FAMILY f (v INT64))");
  CHECK_ERR(db, "INSERT INTO o(n, v) VALUES ('-9223372036854775809', 1)",
            "key field n is INT64: cannot store the out-of-range TEXT "
            "'-9223372036854775809' (INT64 holds");
  CHECK_ERR(db, "INSERT INTO o(n, v) VALUES (-9223372036854775809, 1)",
            "out-of-range REAL");
  CHECK_ERR(db, "INSERT INTO o(n, v) VALUES ('9223372036854775808', 1)",
            "out-of-range TEXT");
  CHECK_ERR(db, "INSERT INTO o(n, v) VALUES ('1.5', 1)",
            "cannot store the non-integer TEXT '1.5'");
  CHECK_ERR(db, "SELECT wcs_key_encode('o', '-9223372036854775809')",
            "out-of-range TEXT");
  OK(db, "INSERT INTO o(n, v) VALUES (-9223372036854775808, 1), "
         "('-9223372036854775807', 2), (9.21e18, 3)");
  CHECK(db, "SELECT n, v FROM o",
        "-9223372036854775808|1\n-9223372036854775807|2\n"
        "9210000000000000000|3");
  CHECK(db,
        "SELECT hex(wcs_key_encode('o', 9.21e18)) = "
        "(SELECT hex(_key) FROM o WHERE v = 3)",
        "1");
  sqlite3_close(db);
}
END_TEST

/* The row key of an INSERT: from the key fields, from a _key given alone,
** or from both when they agree; the errors name the field or the key. A
** load (fields, no _key) encodes the fields straight away; these pin the
** other ways. */
START_TEST(test_insert_row_key_from_fields_or_key) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device, id, day, cpu) "
         "VALUES ('d1', 'a', 20240101, 1)");
  /* _key alone: decoded under the schema, the fields come from it */
  OK(db, "INSERT INTO metrics(_key, cpu) VALUES ('d2#b#20240102', 2)");
  /* both, agreeing */
  OK(db, "INSERT INTO metrics(_key, device, id, day, cpu) "
         "VALUES ('d3#c#20240103', 'd3', 'c', 20240103, 3)");
  CHECK(db, "SELECT device, id, day, cpu, CAST(_key AS TEXT) FROM metrics",
        "d1|a|20240101|1|d1#a#20240101\n"
        "d2|b|20240102|2|d2#b#20240102\n"
        "d3|c|20240103|3|d3#c#20240103");
  CHECK_ERR(db,
            "INSERT INTO metrics(_key, device, id, day, cpu) "
            "VALUES ('d3#c#20240104', 'd3', 'c', 20240103, 3)",
            "does not match the key fields");
  CHECK_ERR(db, "INSERT INTO metrics(_key, cpu) VALUES ('d4#x', 4)",
            "does not match the key schema");
  CHECK_ERR(db, "INSERT INTO metrics(_key, cpu) VALUES ('', 4)",
            "a row key cannot be empty");
  /* a key field missing: the first one not given is named */
  CHECK_ERR(db, "INSERT INTO metrics(device, day, cpu) VALUES ('d5', 1, 5)",
            "NOT NULL constraint failed: metrics.id");
  CHECK_ERR(db, "INSERT INTO metrics(cpu) VALUES (6)",
            "NOT NULL constraint failed: metrics.device");
  CHECK_ERR(db, "INSERT INTO metrics(device, id, day, cpu) "
                "VALUES ('d7', 'a#b', 1, 7)",
            "not above the delimiter");
  CHECK_ERR(db, "INSERT INTO metrics(device, id, day, cpu) "
                "VALUES ('d8', 'a', 100000000, 8)",
            "has more than 8 digits");
  CHECK(db, "SELECT count(*) FROM metrics", "3");
  sqlite3_close(db);
}
END_TEST

/* ---- bulk loads ------------------------------------------------------- */

/* A load of nRow rows in key order in one transaction, into the wcs table
** t and the native table n alike; with bSavepoint, rows 40000..40099 are
** inserted inside a savepoint that is rolled back. */
static void bulkLoad(sqlite3 *db, int nRow, int bSavepoint) {
  sqlite3_stmt *aSt[2];
  const char *azTab[2] = {"t", "n"};
  char zV[160];
  int i, k;
  for (k = 0; k < 2; k++) {
    char *z = sqlite3_mprintf(
        "INSERT INTO %s(a, b, v, x, w) VALUES (?, ?, ?, ?, ?)", azTab[k]);
    ck_assert_int_eq(sqlite3_prepare_v2(db, z, -1, &aSt[k], NULL), SQLITE_OK);
    sqlite3_free(z);
  }
  OK(db, "BEGIN");
  for (i = 0; i < nRow; i++) {
    int bIn = bSavepoint && i >= 40000 && i < 40100;
    size_t n = 100 + (size_t)(i % 50), j;
    for (j = 0; j < n; j++)
      zV[j] = (char)('a' + (i * 7 + (int)j) % 26);
    zV[n] = 0;
    if (bIn && i == 40000) OK(db, "SAVEPOINT s1");
    for (k = 0; k < 2; k++) {
      char zA[16];
      snprintf(zA, sizeof zA, "k%02d", i / 10000);
      sqlite3_bind_text(aSt[k], 1, zA, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int(aSt[k], 2, i % 10000);
      sqlite3_bind_text(aSt[k], 3, zV, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int(aSt[k], 4, i * 3);
      sqlite3_bind_text(aSt[k], 5, i % 3 ? "fw-1" : "fw-2", -1, SQLITE_STATIC);
      ck_assert_int_eq(sqlite3_step(aSt[k]), SQLITE_DONE);
      sqlite3_reset(aSt[k]);
    }
    if (bIn && i == 40099) OK(db, "ROLLBACK TO s1; RELEASE s1");
  }
  OK(db, "COMMIT");
  for (k = 0; k < 2; k++)
    sqlite3_finalize(aSt[k]);
}

/* A bulk load big enough for the prebuilt commit (storage/wal.h,
** wcs_prebuild: the files are written while the transaction runs) reads
** back exactly as the same load into a native table; a savepoint rolled
** back in the middle drops the prebuild, and the load still commits
** exactly what it should. */
START_TEST(test_bulk_load_matches_a_native_table) {
  int bSave;
  for (bSave = 0; bSave < 2; bSave++) {
    sqlite3 *db = openDb(NULL);
    OK(db, "CREATE VIRTUAL TABLE t USING wcs(KEY (a STRING, b INT64 "
           "DECIMAL(8)) DELIMITED BY '#', FAMILY f (v STRING, x INT64), "
           "FAMILY g (w STRING))");
    OK(db, "CREATE TABLE n(a TEXT, b INTEGER, v TEXT, x INTEGER, w TEXT, "
           "PRIMARY KEY(a, b)) WITHOUT ROWID");
    bulkLoad(db, 90000, bSave);
    CHECK(db, "SELECT json_extract(wcs_stats('t'), '$.store.stats.prebuilds')",
          bSave ? "0" : "1");
    CHECK(db, "SELECT count(*), sum(x), sum(length(v)) FROM t",
          bSave ? "89900|12137850150|11192550" : "90000|12149865000|11205000");
    CHECK(db, "SELECT count(*), sum(x), sum(length(v)) FROM n",
          bSave ? "89900|12137850150|11192550" : "90000|12149865000|11205000");
    CHECK(db, "SELECT count(*) FROM (SELECT a, b, v, x, w FROM t EXCEPT "
              "SELECT a, b, v, x, w FROM n)",
          "0");
    CHECK(db, "SELECT count(*) FROM (SELECT a, b, v, x, w FROM n EXCEPT "
              "SELECT a, b, v, x, w FROM t)",
          "0");
    CHECK(db, "SELECT a, b, x, w FROM t WHERE a = 'k04' AND b = 1 UNION ALL "
              "SELECT a, b, x, w FROM t WHERE a = 'k04' AND b = 100",
          bSave ? "k04|100|120300|fw-1" /* 40001 was rolled back */
                : "k04|1|120003|fw-1\nk04|100|120300|fw-1");
    sqlite3_close(db);
  }
}
END_TEST

/* ---- cases found by fuzz_sql ------------------------------------------- */

/* A scan whose key bounds are all empty (a full scan, the planner's row
** estimate) kept its range buffer unallocated and added offsets to its
** NULL pointer: undefined behaviour that clang's UBSan
** (-fsanitize=pointer-overflow) reports on every such scan. */
START_TEST(test_full_scan_without_key_bounds) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  CHECK(db, "SELECT count(*) FROM metrics", "0");
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1), "
         "('q','b',2,2)");
  CHECK(db, "SELECT device, cpu FROM metrics WHERE cpu > 0", "p|1\nq|2");
  CHECK(db, "SELECT device FROM metrics ORDER BY _key DESC", "q\np");
  sqlite3_close(db);
}
END_TEST

/* latest_n is any positive integer: one past INT_MAX (the engine's
** version count) keeps every version instead of being refused. */
START_TEST(test_history_latest_n_takes_any_positive_integer) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'metrics', HISTORY)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,1,10)");
  OK(db, "INSERT INTO metrics(device,id,day,cpu,_timestamp) VALUES "
         "('p','a',1,2,20)");
  CHECK(db, "SELECT count(*) FROM h(9223372036854775807)", "2");
  CHECK(db, "SELECT value, latest_n FROM h WHERE latest_n = 2147483648",
        "2|2147483648\n1|2147483648");
  CHECK(db, "SELECT value FROM h(1)", "2");
  CHECK_ERR(db, "SELECT * FROM h(0)", "latest_n must be a positive integer");
  CHECK_ERR(db, "SELECT * FROM h(-9223372036854775808)",
            "latest_n must be a positive integer");
  sqlite3_close(db);
}
END_TEST

/* latest_n counts the versions its time terms keep, so a time term that
** SQLite would check after it is refused rather than answered with too
** few versions: a !=, an IS NOT, a ninth term (the plan takes eight). IS
** is =, and latest_n takes '2' and 2.0 as the INTEGER column it is. A
** family compared with a BLOB matches nothing, as TEXT = BLOB in SQLite. */
START_TEST(test_history_latest_n_time_terms_before_counting) {
  sqlite3 *db = openDb(NULL);
  int i;
  OK(db,
     "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f (a INT64))");
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)");
  for (i = 1; i <= 4; i++) {
    char z[96];
    snprintf(z, sizeof(z), "INSERT INTO t(k,a,_timestamp) VALUES('r',%d,%d)", i,
             i * 100);
    OK(db, z);
  }
  CHECK(db, "SELECT _timestamp FROM h(1) WHERE _timestamp IS 300", "300");
  CHECK(db, "SELECT _timestamp FROM h(1) WHERE _timestamp IS NULL", "");
  CHECK(db, "SELECT _timestamp FROM h(1) WHERE _timestamp IS NOT NULL", "400");
  CHECK_ERR(db, "SELECT _timestamp FROM h(1) WHERE _timestamp != 400",
            "latest_n needs its _timestamp terms as =, IS, <, <=, >, >= or IN");
  CHECK_ERR(db, "SELECT _timestamp FROM h(1) WHERE _timestamp IS NOT 400",
            "a !=, IS NOT or function of _timestamp");
  CHECK_ERR(db,
            "SELECT _timestamp FROM h(1) WHERE _timestamp < 1000 AND "
            "_timestamp < 1001 AND _timestamp < 1002 AND _timestamp < 1003 AND "
            "_timestamp < 1004 AND _timestamp < 1005 AND _timestamp < 1006 AND "
            "_timestamp < 1007 AND _timestamp <= 250",
            "at most 8 of them");
  /* without latest_n, SQLite checks them all, as for any column */
  CHECK(db, "SELECT _timestamp FROM h WHERE _timestamp != 400",
        "300\n200\n100");
  CHECK(db,
        "SELECT _timestamp FROM h WHERE _timestamp < 1000 AND "
        "_timestamp < 1001 AND _timestamp < 1002 AND _timestamp < 1003 AND "
        "_timestamp < 1004 AND _timestamp < 1005 AND _timestamp < 1006 AND "
        "_timestamp < 1007 AND _timestamp <= 250",
        "200\n100");
  /* a join puts the view after the table its time term reads */
  OK(db, "CREATE TABLE e(k TEXT, ts INT)");
  OK(db, "INSERT INTO e VALUES('r',150),('r',250),('r',999)");
  CHECK(db,
        "SELECT e.ts, h.value FROM h, e WHERE h.k = e.k AND "
        "h._timestamp <= e.ts AND h.latest_n = 1 ORDER BY e.ts",
        "150|1\n250|2\n999|4");
  CHECK(db, "SELECT _timestamp FROM h('2')", "400\n300");
  CHECK(db, "SELECT _timestamp FROM h(2.0)", "400\n300");
  CHECK_ERR(db, "SELECT * FROM h(1.5)", "latest_n must be a positive integer");
  CHECK_ERR(db, "SELECT * FROM h('x')", "latest_n must be a positive integer");
  CHECK(db, "SELECT count(*) FROM h WHERE family = x'66'", "0");
  CHECK(db, "SELECT count(*) FROM h WHERE family = 'f'", "4");
  sqlite3_close(db);
}
END_TEST

/* The row limit handed to the engine is LIMIT + OFFSET: with LIMIT at
** 2^63 - 1 the sum overflowed a signed 64-bit integer. */
START_TEST(test_limit_plus_offset_past_int64) {
  sqlite3 *db = openDb(NULL);
  OK(db, zMetrics);
  OK(db, "INSERT INTO metrics(device,id,day,cpu) VALUES ('p','a',1,1), "
         "('q','b',2,2), ('r','c',3,3)");
  CHECK(db, "SELECT device FROM metrics LIMIT 9223372036854775807 OFFSET 2",
        "r");
  CHECK(db,
        "SELECT device FROM metrics ORDER BY _key DESC "
        "LIMIT 9223372036854775807 OFFSET 9223372036854775807",
        "");
  CHECK(db, "SELECT device FROM metrics WHERE device >= 'q' "
            "LIMIT 9223372036854775807 OFFSET 1",
        "r");
  sqlite3_close(db);
}
END_TEST

Suite *vtab_suite(void) {
  Suite *s = suite_create("vtab");
  TCase *tc = tcase_create("sql");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_columns_follow_the_design);
  tcase_add_test(tc, test_table_without_key_schema_shows_raw_key);
  tcase_add_test(tc, test_insert_row_key_from_fields_or_key);
  tcase_add_test(tc, test_int64_key_field_refuses_values_past_its_range);
  tcase_add_test(tc, test_text_compared_with_key_uses_its_bytes);
  tcase_add_test(tc, test_text_operands_read_alike_in_every_encoding);
  tcase_add_test(tc, test_text_results_outlive_their_row);
  tcase_add_test(tc, test_text_key_fields_from_any_binding);
  tcase_add_test(tc, test_typed_columns_store_bigtable_bytes);
  tcase_add_test(tc, test_cell_bytes_of_every_value_type_in_every_column_type);
  tcase_add_test(tc, test_family_json_is_lossless_for_bytes);
  tcase_add_test(tc, test_family_json_integers);
  tcase_add_test(tc, test_values_at_the_edges_of_their_forms);
  tcase_add_test(tc, test_json_columns_nest_in_json_functions);
  tcase_add_test(tc, test_insert_is_an_upsert_and_null_deletes);
  tcase_add_test(tc, test_conflict_clauses);
  tcase_add_test(tc, test_update_of_key_fields_moves_the_row_with_its_history);
  tcase_add_test(tc, test_update_shifting_keys_onto_each_other_loses_nothing);
  tcase_add_test(tc, test_timestamp_column_sets_cell_time);
  tcase_add_test(tc, test_reading_some_families_keeps_every_row);
  tcase_add_test(tc, test_aggregate_families_fold_writes);
  tcase_add_test(tc, test_or_terms_and_registering_twice);
  tcase_add_test(tc, test_rollback_spans_tables_of_one_store);
  tcase_add_test(tc, test_drop_in_a_transaction_loses_no_write);
  tcase_add_test(tc, test_savepoints_across_tables);
  tcase_add_test(tc, test_a_user_table_is_never_taken_for_a_clock);
  tcase_add_test(tc, test_insert_select_from_an_alias_reads_before_its_writes);
  tcase_add_test(tc, test_a_nested_clock_tick_keeps_the_statement_moment);
  tcase_add_test(tc, test_failed_statement_leaves_no_partial_rows);
  tcase_add_test(tc, test_cells_of_one_transaction_share_its_timestamp);
  tcase_add_test(tc, test_history_timestamp_in_list_is_one_filtered_read);
  tcase_add_test(tc, test_update_writes_only_the_columns_it_sets);
  tcase_add_test(tc, test_update_from_writes_only_what_changes);
  tcase_add_test(tc, test_update_from_matches_hll_and_failures);
  tcase_add_test(tc,
                 test_write_order_in_a_transaction_does_not_change_the_result);
  tcase_add_test(tc, test_bad_key_values_name_field_and_byte);
  tcase_add_test(tc, test_undecodable_row_key_is_an_error_naming_it);
  tcase_add_test(tc, test_key_field_terms_meet_undecodable_keys);
  tcase_add_test(tc, test_scan_by_groups_meets_an_undecodable_key);
  tcase_add_test(tc, test_update_of_key_to_null_is_refused);
  tcase_add_test(tc, test_history_latest_n_not_given_is_an_error);
  tcase_add_test(tc, test_key_fields_named_decode_the_whole_key);
  tcase_add_test(tc, test_history_view_lists_every_version);
  tcase_add_test(tc, test_key_functions);
  tcase_add_test(tc, test_functions_find_the_table_sql_names);
  tcase_add_test(tc, test_value_functions);
  tcase_add_test(tc, test_write_functions);
  tcase_add_test(tc, test_table_clause_attaches_and_drop_rule);
  tcase_add_test(tc, test_attaching_without_a_store_says_no_table);
  tcase_add_test(tc, test_store_beside_database_and_reopen);
  tcase_add_test(tc, test_unreachable_store_is_an_error_for_every_use);
  tcase_add_test(tc, test_families_change_from_sql);
  tcase_add_test(tc, test_store_held_by_another_process_is_read_beside_it);
  tcase_add_test(tc, test_damaged_store_says_repair_not_drop);
  tcase_add_test(tc, test_backup_is_the_store_as_of_the_call);
  tcase_add_test(tc, test_sqlite_engine_reaches_the_module_store);
  tcase_add_test(tc, test_salted_scans_match_native);
  tcase_add_test(tc, test_history_or_of_scans_keeps_every_cell);
  tcase_add_test(tc, test_history_undeclared_values_typed_as_the_family_json);
  tcase_add_test(tc, test_functions_find_tables_under_a_strict_authorizer);
  tcase_add_test(tc, test_cache_clause_sizes_the_store_block_cache);
  tcase_add_test(tc, test_last_disconnect_saves_heat_counters);
  tcase_add_test(tc, test_heat_counts_every_cell_inserted_committed_or_not);
  tcase_add_test(tc, test_store_clause_and_two_connections);
  tcase_add_test(tc, test_hostile_schema_cannot_use_the_module);
  tcase_add_test(tc, test_commit_sqlite_refuses_writes_nothing);
  tcase_add_test(tc, test_commit_store_cannot_write_is_reported_next);
  tcase_add_test(tc, test_read_then_write_after_another_commit_is_refused);
  tcase_add_test(tc, test_a_statement_reads_one_moment);
  tcase_add_test(tc, test_refused_commit_holds_up_no_other_file);
  tcase_add_test(tc, test_each_file_read_at_its_own_moment);
  tcase_add_test(tc, test_table_replaced_mid_statement_says_run_again);
  tcase_add_test(tc, test_function_writes_take_the_write_lock);
  tcase_add_test(tc, test_a_forked_child_reads_beside_its_parent);
  tcase_add_test(tc, test_table_created_in_a_transaction);
  tcase_add_test(tc, test_columns_beyond_the_limit_are_refused);
  tcase_add_test(tc, test_alter_refused_while_the_schema_cannot_be_written);
  tcase_add_test(tc, test_drop_refused_while_a_reader_holds_the_file);
  tcase_add_test(tc, test_deserialized_database_has_an_in_memory_store);
  tcase_add_test(tc, test_backup_into_memory_brings_declarations_not_the_store);
  tcase_add_test(tc, test_store_that_fails_to_open_is_tried_again);
  tcase_add_test(tc, test_create_takes_over_what_a_killed_create_left);
  tcase_add_test(tc, test_read_only_connection_reads_beside_the_writer);
  tcase_add_test(tc, test_read_only_connection_in_the_writers_process);
  tcase_add_test(tc, test_compact_all_beside_a_read_only_attachment);
  tcase_add_test(tc, test_commit_clock_follows_the_table);
  tcase_add_test(tc, test_bulk_load_matches_a_native_table);
  tcase_add_test(tc, test_full_scan_without_key_bounds);
  tcase_add_test(tc, test_count_of_settled_rows_reads_no_block);
  tcase_add_test(tc, test_history_latest_n_takes_any_positive_integer);
  tcase_add_test(tc, test_history_latest_n_time_terms_before_counting);
  tcase_add_test(tc, test_limit_plus_offset_past_int64);
  suite_add_tcase(s, tc);
  return s;
}
