/*
** check_vtab_plan.c — Check suite "vtab_plan": how the module plans
** canonical queries. Each test reads the plan from EXPLAIN QUERY PLAN (the
** words xBestIndex puts in idxStr, doc/sql.md "Plans") and checks that the
** rows are those of a native SQLite table holding the same data, so a plan
** that omits a constraint it does not capture shows up as wrong rows.
*/
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlcheck.h"
#include "sqlutil.h"
#include "testutil.h"
#include "wcs.h"

Suite *vtab_plan_suite(void);

/* ---- helpers --------------------------------------------------------- */

static char *run(sqlite3 *db, const char *zSql) {
  return tu_sql_run(db, zSql, TU_SQL_TEXT);
}

#define OK(db, sql) tu_sql_ok_at(db, sql, TU_SQL_TEXT, __LINE__)

#define CHECK(db, sql, want)                                                   \
  tu_sql_check_at(db, sql, TU_SQL_TEXT, want, __LINE__)

/* The plan lines of EXPLAIN QUERY PLAN, joined by "\n". */
static char *plan(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *pStmt = NULL;
  sqlite3_str *pOut = sqlite3_str_new(db);
  char *zQ = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", zSql);
  int n = 0;
  if (sqlite3_prepare_v2(db, zQ, -1, &pStmt, NULL) != SQLITE_OK) {
    sqlite3_str_appendf(pOut, "ERROR: %s", sqlite3_errmsg(db));
  } else {
    while (sqlite3_step(pStmt) == SQLITE_ROW) {
      if (n++) sqlite3_str_appendall(pOut, "\n");
      sqlite3_str_appendall(pOut, (const char *)sqlite3_column_text(pStmt, 3));
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zQ);
  {
    char *z = sqlite3_str_finish(pOut);
    return z ? z : sqlite3_mprintf("");
  }
}

static void planAt(sqlite3 *db, const char *zSql, const char *zWant,
                   int iLine) {
  char *zGot = plan(db, zSql);
  ck_assert_msg(strcmp(zGot, zWant) == 0,
                "line %d: EXPLAIN QUERY PLAN %s\n  got:  %s\n  want: %s", iLine,
                zSql, zGot, zWant);
  sqlite3_free(zGot);
}
#define PLAN(db, sql, want) planAt(db, sql, want, __LINE__)

/* The rows of zA (a wcs query) equal those of zB (a native one), and there
** are at least nMin of them. */
static void sameQueryAt(sqlite3 *db, const char *zA, const char *zB, int nMin,
                        int iLine) {
  char *zGotA = run(db, zA);
  char *zGotB = run(db, zB);
  int nRow = zGotA[0] ? 1 : 0;
  const char *z;
  for (z = zGotA; *z; z++)
    nRow += *z == '\n';
  ck_assert_msg(strncmp(zGotA, "ERROR", 5) != 0, "line %d: %s\n  %s", iLine, zA,
                zGotA);
  ck_assert_msg(strcmp(zGotA, zGotB) == 0,
                "line %d: %s\n  wcs:    %.300s\n  native: %.300s", iLine, zA,
                zGotA, zGotB);
  ck_assert_msg(nRow >= nMin, "line %d: %s: %d rows, want >= %d", iLine, zA,
                nRow, nMin);
  sqlite3_free(zGotA);
  sqlite3_free(zGotB);
}

/* sameQueryAt() for "SELECT <cols> FROM metrics <zWhere>" and the native
** copy nat. */
static void sameAt(sqlite3 *db, const char *zCols, const char *zWhere, int nMin,
                   int iLine) {
  char *zA = sqlite3_mprintf("SELECT %s FROM metrics %s", zCols, zWhere);
  char *zB = sqlite3_mprintf("SELECT %s FROM nat %s", zCols, zWhere);
  sameQueryAt(db, zA, zB, nMin, iLine);
  sqlite3_free(zA);
  sqlite3_free(zB);
}
#define SAME(db, cols, where, nmin) sameAt(db, cols, where, nmin, __LINE__)

/* An in-memory database with the module registered. */
static sqlite3 *openMem(void) {
  sqlite3 *db = NULL;
  ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
  ck_assert_int_eq(wcs_register(db), SQLITE_OK);
  return db;
}

/* metrics: 3 devices x 40 ids x 30 days = 3600 rows, and the same rows in
** the native WITHOUT ROWID table nat. */
static sqlite3 *openMetrics(void) {
  sqlite3 *db = openMem();
  OK(db, "CREATE VIRTUAL TABLE metrics USING wcs("
         "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) "
         "DELIMITED BY '#', FAMILY stats (cpu INT64, mem INT64), FAMILY meta)");
  OK(db, "CREATE TABLE nat(device TEXT, id TEXT, day INTEGER, cpu INTEGER, "
         "mem INTEGER, PRIMARY KEY(device, id, day)) WITHOUT ROWID");
  OK(db, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n "
         "WHERE i < 3599) "
         "INSERT INTO nat SELECT CASE i % 3 WHEN 0 THEN 'phone' "
         "WHEN 1 THEN 'tablet' ELSE 'watch' END, printf('%04x', (i / 3) % 40), "
         "20200101 + i / 120, i, i % 7 FROM n");
  OK(db, "INSERT INTO metrics(device, id, day, cpu, mem) "
         "SELECT device, id, day, cpu, mem FROM nat");
  return db;
}

#define SCAN "SCAN metrics VIRTUAL TABLE INDEX "

/* ---- tests ------------------------------------------------------------ */

START_TEST(test_plan_all_fields_equal_is_point_lookup) {
  sqlite3 *db = openMetrics();
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'phone' AND id = '0001' "
       "AND day = 20200102",
       SCAN "1:POINT LOOKUP");
  SAME(db, "device, id, day, cpu, mem",
       "WHERE device = 'phone' AND id = '0001' AND day = 20200102", 1);
  /* text that reads as a number meets the INTEGER field as a number */
  SAME(db, "cpu", "WHERE device = 'phone' AND id = '0001' AND day = '20200102'",
       1);
  SAME(db, "cpu", "WHERE device = 'phone' AND id = '0001' AND day = 20200102.5",
       0);
  sqlite3_close(db);
}
END_TEST

/* An IN list taken whole is planned with placeholder values, two of them;
** a known bound on the same field can leave one (day > 1 keeps the
** placeholder 2), which looked like a point lookup and was marked as one
** row at most: SQLite then ran an UPDATE or DELETE in one pass and
** stopped after the list's first row. */
START_TEST(test_plan_in_list_beside_a_bound_is_not_one_row) {
  sqlite3 *db = openMetrics();
  const char *zWhere = "WHERE device = 'phone' AND id = '0001' AND day IN "
                       "(20200101, 20200102, 20200103) AND day > 1";
  char *zSql = sqlite3_mprintf("UPDATE metrics SET mem = 99 %s", zWhere);
  PLAN(db, zSql, SCAN "2:MULTI-POINT (IN list)");
  OK(db, zSql);
  CHECK(db, "SELECT changes()", "3");
  sqlite3_free(zSql);
  zSql = sqlite3_mprintf("UPDATE nat SET mem = 99 %s", zWhere);
  OK(db, zSql);
  sqlite3_free(zSql);
  SAME(db, "device, id, day, mem", "WHERE mem = 99 ORDER BY 1, 2, 3", 3);
  /* the same through _key: a known range beside the list */
  zSql = sqlite3_mprintf(
      "DELETE FROM metrics WHERE _key IN (CAST('phone#0001#20200101' AS "
      "BLOB), CAST('phone#0001#20200102' AS BLOB), CAST('phone#0001#20200103' "
      "AS BLOB)) AND _key BETWEEN x'70' AND x'71'");
  PLAN(db, zSql, SCAN "2:MULTI-POINT (IN list)");
  OK(db, zSql);
  sqlite3_free(zSql);
  CHECK(db, "SELECT changes()", "3");
  CHECK(db, "SELECT count(*) FROM metrics WHERE mem = 99", "0");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_in_list_becomes_points) {
  sqlite3 *db = openMetrics();
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'phone' AND id IN ('0001', "
       "'0002') AND day IN (20200101, 20200103)",
       SCAN "2:MULTI-POINT (IN list)");
  SAME(db, "device, id, day, cpu",
       "WHERE device = 'phone' AND id IN ('0001', '0002') "
       "AND day IN (20200101, 20200103) ORDER BY device, id, day",
       4);
  PLAN(db,
       "SELECT * FROM metrics WHERE device IN ('phone', 'watch') AND "
       "id = '0003'",
       SCAN "5:MULTI-RANGE SCAN (device,id)");
  SAME(db, "device, id, day",
       "WHERE device IN ('phone','watch') AND "
       "id = '0003' ORDER BY device, id, day",
       10);
  /* the IN list is consumed all at once, so the order is kept */
  PLAN(db,
       "SELECT * FROM metrics WHERE device IN ('watch', 'phone') "
       "ORDER BY device DESC LIMIT 5",
       SCAN "5:MULTI-RANGE SCAN (device) REVERSE LIMIT");
  SAME(db, "device, id, day",
       "WHERE device IN ('watch', 'phone') "
       "ORDER BY device DESC, id DESC, day DESC LIMIT 5",
       5);
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_leading_equalities_are_a_prefix_scan) {
  sqlite3 *db = openMetrics();
  PLAN(db, "SELECT * FROM metrics WHERE device = 'phone' AND id = '0001'",
       SCAN "3:PREFIX SCAN (device,id)");
  PLAN(db, "SELECT * FROM metrics WHERE device = 'tablet'",
       SCAN "3:PREFIX SCAN (device)");
  SAME(db, "device, id, day, cpu, mem",
       "WHERE device = 'phone' AND id = '0001'", 30);
  /* the prefix is "phone#0001#", never "phone#00010" */
  SAME(db, "count(*)", "WHERE device = 'phone' AND id = '000'", 1);
  sqlite3_close(db);
}
END_TEST

/* ORDERED CODE drops trailing empty fields, so with only STRING and BYTES
** fields after the equal ones a key may end right after them: ("a") is a
** prefix of the bytes of ("ab", ...) too. The prefix scan must take the
** row whose key is the fields alone and no row whose first field only
** begins with the value, in reads and in a DELETE. */
START_TEST(test_plan_ordered_code_prefix_ends_at_the_field) {
  sqlite3 *db = openMem();
  OK(db, "CREATE VIRTUAL TABLE w USING wcs(KEY (a STRING, b STRING, "
         "c BYTES) ORDERED CODE, FAMILY f (v INT64))");
  OK(db, "INSERT INTO w(a, b, c, v) VALUES ('a', 'b', x'01', 1), "
         "('ab', 'b', x'01', 2), ('a', '', x'', 3), ('a', '', x'02', 4), "
         "('a', 'A', x'', 5), ('a' || char(1), 'b', x'', 6), ('', '', x'', 7), "
         "('', 'b', x'', 8)");
  PLAN(db, "SELECT v FROM w WHERE a = 'a'",
       "SCAN w VIRTUAL TABLE INDEX "
       "3:PREFIX SCAN (a)");
  CHECK(db, "SELECT group_concat(v) FROM w WHERE a = 'a'", "3,4,5,1");
  CHECK(db, "SELECT group_concat(v) FROM w WHERE a = 'a' AND b = ''", "3,4");
  CHECK(db, "SELECT group_concat(v) FROM w WHERE a = ''", "7,8");
  CHECK(db, "SELECT group_concat(v) FROM w WHERE a = '' AND b = ''", "7");
  CHECK(db, "SELECT group_concat(DISTINCT b) FROM w WHERE a = 'a'", ",A,b");
  OK(db, "DELETE FROM w WHERE a = 'a'");
  CHECK(db, "SELECT group_concat(v) FROM w", "7,8,6,2");
  sqlite3_close(db);
}
END_TEST

/* A LIKE term of the inner table of a LEFT JOIN is left to SQLite: SQLite
** 3.40 codes an omitted LIKE there as a condition it checks for the NULL
** row too, and the outer rows without a match were lost. */
START_TEST(test_plan_left_join_keeps_rows_a_like_term_rules_out) {
  sqlite3 *db = openMem();
  OK(db,
     "CREATE VIRTUAL TABLE w USING wcs(KEY (a STRING), FAMILY f (v INT64))");
  OK(db, "CREATE TABLE o(a TEXT NOT NULL PRIMARY KEY, v INTEGER)");
  OK(db, "INSERT INTO w(a, v) VALUES ('x', 1), ('y', 2)");
  OK(db, "INSERT INTO o(a, v) VALUES ('x', 1), ('y', 2)");
  CHECK(db,
        "SELECT A.a, B.a FROM o A LEFT JOIN w B ON B.a = 'y' AND B.a LIKE 'x'",
        "x|NULL\ny|NULL");
  CHECK(db,
        "SELECT A.a, B.a FROM o A LEFT JOIN w B ON B.a = 'x' AND B.a LIKE 'X' "
        "ORDER BY 1",
        "x|x\ny|x");
  CHECK(db, "SELECT A.a, B.a FROM o A LEFT JOIN w B ON B.a LIKE 'p'",
        "x|NULL\ny|NULL");
  sqlite3_close(db);
}
END_TEST

/* The value SQLite gives xBestIndex for a constant may differ from the
** one the statement compares: CAST(281474976710656.5 AS TEXT) is the
** literal's text then, and "281474976710656.0" when run, which equals
** the row. A plan decided empty from the first found nothing. */
START_TEST(test_plan_empty_only_from_values_that_hold) {
  sqlite3 *db = openMem();
  OK(db,
     "CREATE VIRTUAL TABLE t USING wcs(KEY (ts INT64), FAMILY f (v INT64))");
  OK(db, "INSERT INTO t(ts, v) VALUES (281474976710656, 1)");
  CHECK(db, "SELECT v FROM t WHERE ts = CAST(281474976710656.5 AS TEXT)", "1");
  CHECK(db, "SELECT count(*) FROM t WHERE ts = 'abc'", "0");
  PLAN(db, "SELECT v FROM t WHERE ts = NULL",
       "SCAN t VIRTUAL TABLE INDEX 0:EMPTY");
  sqlite3_close(db);
}
END_TEST

/* GLOB and LIKE read pattern and value up to their first 00 byte, as
** C strings: a pattern "ab" 00 "*" is "ab", and a value "ab" 00 "x"
** matches the pattern "ab" (a field that can hold a 00: not delimited). */
START_TEST(test_plan_patterns_end_at_a_nul) {
  sqlite3 *db = openMem();
  OK(db,
     "CREATE VIRTUAL TABLE t USING wcs(KEY (s STRING), FAMILY f (v INT64))");
  OK(db, "CREATE TABLE p(s TEXT, v INTEGER)");
  OK(db, "INSERT INTO t(s, v) VALUES ('ab', 1), ('abc', 2), ('12', 3), "
         "('123', 4), (CAST(X'0078' AS TEXT), 5), (CAST(X'61620079' AS TEXT), "
         "6)");
  OK(db, "INSERT INTO p SELECT s, v FROM t");
  CHECK(db,
        "SELECT group_concat(v) FROM t WHERE s GLOB CAST(X'6162002a' AS "
        "TEXT)",
        "1,6");
  CHECK(db,
        "SELECT group_concat(v) FROM p WHERE s GLOB CAST(X'6162002a' AS "
        "TEXT)",
        "1,6");
  CHECK(db,
        "SELECT group_concat(v) FROM t WHERE s LIKE CAST(X'31320025' AS "
        "TEXT)",
        "3");
  CHECK(db,
        "SELECT group_concat(v) FROM p WHERE s LIKE CAST(X'31320025' AS "
        "TEXT)",
        "3");
  CHECK(db, "SELECT group_concat(v) FROM t WHERE s GLOB ''", "5");
  CHECK(db, "SELECT group_concat(v) FROM p WHERE s GLOB ''", "5");
  CHECK(db, "SELECT group_concat(v) FROM t WHERE s GLOB 'ab'", "1,6");
  CHECK(db, "SELECT group_concat(v) FROM p WHERE s GLOB 'ab'", "1,6");
  CHECK(db, "SELECT group_concat(v) FROM t WHERE s LIKE 'AB'", "1,6");
  CHECK(db, "SELECT group_concat(v) FROM p WHERE s LIKE 'AB'", "1,6");
  sqlite3_close(db);
}
END_TEST

/* SQLite's pattern matcher reads U+FFFE, U+FFFF and bytes that are not
** UTF-8 as U+FFFD, and a lone continuation byte as the character of that
** number: a pattern's prefix is a range of bytes only up to such a
** character. The patterns are expressions, which SQLite's own LIKE
** optimisation (range terms from a literal's bytes, for native indexes
** and virtual tables alike; doc/sql.md) does not rewrite. */
START_TEST(test_plan_patterns_fold_as_sqlite_reads_them) {
  static const char *azCond[] = {
      "s GLOB char(65535) || '*'",
      "s GLOB char(65533) || '*'",
      "s GLOB char(65533)",
      "s LIKE char(65534) || '%'",
      "s GLOB CAST(X'FF' AS TEXT) || '*'",
      "s GLOB CAST(X'80' AS TEXT) || '*'",
      "s LIKE CAST(X'80' AS TEXT)",
      "s GLOB 'a' || char(65535) || '*'",
      "s GLOB char(233) || '*'",
  };
  sqlite3 *db = openMem();
  size_t i;
  OK(db,
     "CREATE VIRTUAL TABLE t USING wcs(KEY (s STRING), FAMILY f (v INT64))");
  OK(db, "CREATE TABLE p(s TEXT, v INTEGER)");
  OK(db, "INSERT INTO t(s, v) VALUES (char(65533), 1), (char(65534), 2), "
         "(char(65535), 3), (char(128), 4), ('a', 5), ('a' || char(65533), 6), "
         "(char(233), 7), (char(65533) || 'x', 8)");
  OK(db, "INSERT INTO p SELECT s, v FROM t");
  for (i = 0; i < sizeof(azCond) / sizeof(azCond[0]); i++) {
    char *zW = sqlite3_mprintf(
        "SELECT group_concat(v) FROM (SELECT v FROM t WHERE %s ORDER BY v)",
        azCond[i]);
    char *zN = sqlite3_mprintf(
        "SELECT group_concat(v) FROM (SELECT v FROM p WHERE %s ORDER BY v)",
        azCond[i]);
    sameQueryAt(db, zW, zN, 1, __LINE__);
    sqlite3_free(zW);
    sqlite3_free(zN);
  }
  /* (the folded rows are there: not an empty answer on both sides) */
  CHECK(db,
        "SELECT group_concat(v) FROM (SELECT v FROM t WHERE s GLOB "
        "char(65535) || '*' ORDER BY v)",
        "1,2,3,8");
  sqlite3_close(db);
}
END_TEST

/* GLOB and LIKE on a BYTES field are SQLite's to answer (Debian's build
** matches no BLOB): an empty literal prefix does not make them "every
** row", nor does a field fixed at run time. */
START_TEST(test_plan_patterns_on_bytes_are_sqlites) {
  sqlite3 *db = openMem();
  OK(db, "CREATE VIRTUAL TABLE w USING wcs(KEY (k BYTES), FAMILY f "
         "(v INT64))");
  OK(db, "CREATE TABLE n(k BLOB PRIMARY KEY, v INT) WITHOUT ROWID");
  OK(db, "INSERT INTO w(k, v) VALUES (x'00', 1), (x'61', 2), (x'ff', 3)");
  OK(db, "INSERT INTO n SELECT k, v FROM w");
  sameQueryAt(db, "SELECT count(*) FROM w WHERE k GLOB '*'",
              "SELECT count(*) FROM n WHERE k GLOB '*'", 1, __LINE__);
  sameQueryAt(db, "SELECT count(*) FROM w WHERE k LIKE '%'",
              "SELECT count(*) FROM n WHERE k LIKE '%'", 1, __LINE__);
  sameQueryAt(db, "SELECT count(*) FROM w WHERE k >= x'00' AND k LIKE 'a%'",
              "SELECT count(*) FROM n WHERE k >= x'00' AND k LIKE 'a%'", 1,
              __LINE__);
  sameQueryAt(db,
              "SELECT (SELECT count(*) FROM w WHERE w.k = n.k AND k GLOB "
              "'[a-b]*') FROM n",
              "SELECT (SELECT count(*) FROM n AS m WHERE m.k = n.k AND k GLOB "
              "'[a-b]*') FROM n",
              3, __LINE__);
  sqlite3_close(db);
}
END_TEST

/* An IN list past the planner's cap on points (10,000) is read as one
** range and every row checked against the list, sorted and searched:
** the rows are those of the list, present or not. */
START_TEST(test_plan_in_list_past_the_cap_is_checked_per_row) {
  sqlite3 *db = openMetrics();
  const char *zList =
      "(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
      "WHERE i < 11999) SELECT 20200101 + (i * 7) % 24000 - 12000 FROM n)";
  char *zWhere = sqlite3_mprintf(
      "WHERE device = 'phone' AND id IN ('0001', '0002') AND day IN %s", zList);
  SAME(db, "device, id, day, cpu", zWhere, 10);
  sqlite3_free(zWhere);
  zWhere = sqlite3_mprintf("WHERE day IN %s AND device = 'watch'", zList);
  SAME(db, "count(*), sum(cpu)", zWhere, 1);
  sqlite3_free(zWhere);
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_range_after_prefix) {
  sqlite3 *db = openMetrics();
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'phone' AND id = '0001' "
       "AND day BETWEEN 20200105 AND 20200110",
       SCAN "4:RANGE SCAN (device,id,day)");
  SAME(db, "day",
       "WHERE device = 'phone' AND id = '0001' "
       "AND day BETWEEN 20200105 AND 20200110",
       6);
  SAME(db, "day", "WHERE device = 'phone' AND id = '0001' AND day > 20200127",
       3);
  SAME(db, "day", "WHERE device = 'phone' AND id = '0001' AND day < 20200103.5",
       3);
  SAME(db, "device, id, day", "WHERE device > 'phone' AND device <= 'tablet'",
       1200);
  SAME(db, "device, id, day", "WHERE device < 'tablet'", 1200);
  /* bounds whose values come later (parameters) are planned as ranges
  ** too, and said so */
  PLAN(db,
       "SELECT * FROM metrics WHERE device = ? AND id = ? "
       "AND day BETWEEN ? AND ?",
       SCAN "4:RANGE SCAN (device,id,day)");
  PLAN(db, "SELECT * FROM metrics WHERE device = 'phone' AND id >= ?",
       SCAN "4:RANGE SCAN (device,id)");
  PLAN(db, "SELECT * FROM metrics WHERE device > ?",
       SCAN "4:RANGE SCAN (device)");
  PLAN(db, "SELECT * FROM metrics WHERE _key < ?", SCAN "4:RANGE SCAN (_key)");
  PLAN(db, "SELECT * FROM metrics WHERE device = ?",
       SCAN "3:PREFIX SCAN (device)");
  {
    sqlite3_stmt *pStmt = NULL;
    int nRow = 0, nStep;
    ck_assert_int_eq(
        sqlite3_prepare_v2(db,
                           "SELECT day FROM metrics WHERE device = ? AND "
                           "id = ? AND day BETWEEN ? AND ?",
                           -1, &pStmt, NULL),
        SQLITE_OK);
    sqlite3_bind_text(pStmt, 1, "phone", -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, "0001", -1, SQLITE_STATIC);
    sqlite3_bind_int(pStmt, 3, 20200105);
    sqlite3_bind_int(pStmt, 4, 20200110);
    while (sqlite3_step(pStmt) == SQLITE_ROW) {
      ck_assert_int_eq(sqlite3_column_int(pStmt, 0), 20200105 + nRow);
      nRow++;
    }
    nStep = sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_VM_STEP, 0);
    ck_assert_int_eq(nRow, 6);
    ck_assert_int_lt(nStep, 60); /* the six rows, not the id's thirty */
    ck_assert_int_eq(sqlite3_finalize(pStmt), SQLITE_OK);
  }
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_glob_like_and_starts_with_prefixes) {
  sqlite3 *db = openMetrics();
  PLAN(db, "SELECT * FROM metrics WHERE device GLOB 'ph*'",
       SCAN "4:RANGE SCAN (device)");
  /* LIKE folds ASCII letters: a range per way of writing 'ph' (one range
  ** from 'PH' to 'ph' would read every key between them) */
  PLAN(db, "SELECT * FROM metrics WHERE device LIKE 'ph%'",
       SCAN "5:MULTI-RANGE SCAN (4 ranges on device)");
  SAME(db, "device, id, day", "WHERE device LIKE 'pH%' ORDER BY 1, 2, 3", 1200);
  SAME(db, "device, id, day",
       "WHERE device LIKE 'Wat%' AND id LIKE '0%' "
       "ORDER BY 1, 2, 3",
       1200);
  PLAN(db, "SELECT * FROM metrics WHERE starts_with(device, 'ph')",
       SCAN "4:RANGE SCAN (device)");
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'phone' AND "
       "starts_with(id, '000')",
       SCAN "4:RANGE SCAN (device,id)");
  SAME(db, "count(*)", "WHERE device GLOB 'ph*'", 1);
  SAME(db, "count(*)", "WHERE device GLOB 'Ph*'", 1);
  /* LIKE is case-insensitive: the range covers, SQLite re-checks */
  SAME(db, "count(*)", "WHERE device LIKE 'PH%'", 1);
  SAME(db, "count(*)", "WHERE device LIKE 'p_one'", 1);
  SAME(db, "count(*)", "WHERE device = 'phone' AND id LIKE '001%'", 1);
  SAME(db, "count(*)", "WHERE substr(device, 1, 2) = 'ph'", 1);
  {
    char *z = run(db, "SELECT count(*) FROM metrics WHERE "
                      "starts_with(device, 'ph') AND starts_with(id, '001')");
    ck_assert_str_eq(z, "480"); /* 16 hex ids x 30 days */
    sqlite3_free(z);
  }
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_key_column_ranges) {
  sqlite3 *db = openMetrics();
  PLAN(db,
       "SELECT * FROM metrics WHERE _key >= CAST('phone#0001#' AS BLOB) "
       "AND _key < CAST('phone#0003#' AS BLOB)",
       SCAN "4:RANGE SCAN (_key)");
  PLAN(db, "SELECT * FROM metrics WHERE starts_with(_key, 'watch#')",
       SCAN "3:PREFIX SCAN (_key)");
  PLAN(db,
       "SELECT * FROM metrics WHERE _key = CAST('phone#0001#20200102' AS "
       "BLOB)",
       SCAN "1:POINT LOOKUP");
  {
    char *z = run(db, "SELECT count(*) FROM metrics WHERE _key >= "
                      "CAST('phone#0001#' AS BLOB) AND _key < "
                      "CAST('phone#0003#' AS BLOB)");
    ck_assert_str_eq(z, "60");
    sqlite3_free(z);
    /* _key takes text as its bytes (SQLite alone would put TEXT < BLOB) */
    CHECK(db,
          "SELECT count(*) FROM metrics WHERE _key = "
          "'phone#0001#20200102'",
          "1");
    CHECK(db,
          "SELECT count(*) FROM metrics WHERE starts_with(_key, "
          "'watch#0002#')",
          "30");
  }
  sqlite3_close(db);
}
END_TEST

/* `_key <zTerm>` on metrics selects the rows whose key text satisfies
** `k <zTerm>` in the native copy: TEXT compared with TEXT is a byte
** comparison in SQLite, so this checks _key's bytes semantics. */
static void textKeyAt(sqlite3 *db, const char *zTerm, int nMin, int iLine) {
  char *zA = sqlite3_mprintf(
      "SELECT device, id, day FROM metrics WHERE _key %s ORDER BY 1, 2, 3",
      zTerm);
  char *zB = sqlite3_mprintf(
      "SELECT device, id, day FROM natk WHERE k %s ORDER BY 1, 2, 3", zTerm);
  sameQueryAt(db, zA, zB, nMin, iLine);
  sqlite3_free(zA);
  sqlite3_free(zB);
}
#define TEXT_KEY(db, term, nmin) textKeyAt(db, term, nmin, __LINE__)

START_TEST(test_plan_key_compared_with_text_uses_its_bytes) {
  sqlite3 *db = openMetrics();
  OK(db, "CREATE VIEW natk AS SELECT *, device || '#' || id || '#' || "
         "printf('%08d', day) AS k FROM nat");
  /* planned as for a BLOB, and omitted from SQLite's re-check */
  PLAN(db, "SELECT * FROM metrics WHERE _key = 'phone#0001#20200102'",
       SCAN "1:POINT LOOKUP");
  PLAN(db, "SELECT * FROM metrics WHERE _key = ?", SCAN "1:POINT LOOKUP");
  PLAN(db,
       "SELECT * FROM metrics WHERE _key >= 'phone#0001#' AND "
       "_key < 'phone#0003#' LIMIT 5",
       SCAN "4:RANGE SCAN (_key) LIMIT");
  PLAN(db, "SELECT * FROM metrics WHERE _key IN ('a', 'b')",
       SCAN "2:MULTI-POINT (IN list)");
  TEXT_KEY(db, "= 'phone#0001#20200102'", 1);
  TEXT_KEY(db, "IS 'phone#0001#20200102'", 1);
  TEXT_KEY(db, "= (SELECT 'watch#0027#20200130')", 1); /* known at run time */
  TEXT_KEY(db, "IN ('phone#0001#20200102', 'watch#0003#20200101', 'nope')", 2);
  TEXT_KEY(db, "IN (SELECT k FROM natk WHERE cpu % 100 = 7)", 36);
  sameQueryAt(db,
              "SELECT day FROM metrics WHERE _key >= 'phone#0001#' AND "
              "_key < 'phone#0003#'",
              "SELECT day FROM natk WHERE k >= 'phone#0001#' AND "
              "k < 'phone#0003#' ORDER BY k",
              60, __LINE__);
  TEXT_KEY(db, "BETWEEN 'tablet#0027' AND 'watch#0000#20200115'", 45);
  TEXT_KEY(db, "> 'watch#0027#20200110'", 20);
  TEXT_KEY(db, "<= 'phone#0000#20200130'", 30);
  TEXT_KEY(db, "< 'phone'", 0);
  TEXT_KEY(db, "> ''", 3600);
  TEXT_KEY(db, "GLOB 'watch#002*'", 240);
  TEXT_KEY(db, "LIKE 'WATCH#0002%'", 30);
  /* patterns the key range only narrows: the cursor matches them */
  TEXT_KEY(db, "LIKE '%#0002#2020011_'", 30);
  TEXT_KEY(db, "GLOB 'phone#00?2#*'", 90);
  sameQueryAt(db,
              "SELECT day FROM metrics WHERE _key GLOB "
              "CAST('phone#00?2#*' AS BLOB) ORDER BY _key",
              "SELECT day FROM natk WHERE k GLOB 'phone#00?2#*' ORDER BY k", 90,
              __LINE__);
  sameQueryAt(db,
              "SELECT day FROM metrics WHERE _key LIKE "
              "(SELECT 'Tablet#001_#%') AND _key < 'tablet#0013' LIMIT 50",
              "SELECT day FROM natk WHERE k LIKE 'Tablet#001_#%' "
              "AND k < 'tablet#0013' ORDER BY k LIMIT 50",
              50, __LINE__);
  sameQueryAt(db,
              "SELECT day FROM metrics WHERE _key > "
              "(SELECT 'tablet#0027#20200110') ORDER BY _key LIMIT 7 OFFSET 23",
              "SELECT day FROM natk WHERE k > 'tablet#0027#20200110' "
              "ORDER BY k LIMIT 7 OFFSET 23",
              7, __LINE__);
  /* numbers still sort below every key, as in SQLite */
  TEXT_KEY(db, "> 5", 3600);
  TEXT_KEY(db, "= 5", 0);
  sameQueryAt(db,
              "SELECT count(*) FROM metrics WHERE starts_with(_key, "
              "'watch#0002#')",
              "SELECT count(*) FROM natk WHERE k GLOB 'watch#0002#*'", 1,
              __LINE__);
  /* a join term reaches the module as a constraint on _key */
  CHECK(db,
        "SELECT count(*) FROM natk CROSS JOIN metrics "
        "ON metrics._key = natk.k WHERE natk.device = 'tablet'",
        "1200");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_row_values_keep_limit_with_sqlite) {
  sqlite3 *db = openMetrics();
  /* SQLite hands (a,b) > (x,y) over as a >= x and re-checks the term */
  PLAN(db,
       "SELECT * FROM metrics WHERE (device, id) > ('phone', '0027') LIMIT 5",
       SCAN "4:RANGE SCAN (device)");
  SAME(db, "device, id, day", "WHERE (device, id) > ('phone', '0027') LIMIT 5",
       5);
  SAME(db, "device, id, day",
       "WHERE (device, id, day) > ('phone', '0027', 20200115) "
       "ORDER BY device, id, day LIMIT 20 OFFSET 3",
       20);
  SAME(db, "device, id, day",
       "WHERE (device, id) <= ('tablet', '0001') "
       "ORDER BY device DESC, id DESC, day DESC LIMIT 40",
       40);
  /* a plain bound keeps LIMIT with the module */
  PLAN(db, "SELECT * FROM metrics WHERE device >= 'phone' LIMIT 5",
       SCAN "4:RANGE SCAN (device) LIMIT");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_later_field_alone_is_a_skip_scan) {
  sqlite3 *db = openMetrics();
  PLAN(db, "SELECT * FROM metrics WHERE id = '0007'", SCAN "6:SKIP SCAN on id");
  SAME(db, "device, id, day", "WHERE id = '0007'", 90);
  SAME(db, "device, id, day", "WHERE day = 20200105 AND id = '0002'", 3);
  /* without key structure to skip over, a full scan */
  PLAN(db, "SELECT * FROM metrics WHERE cpu > 5",
       SCAN "7:FULL SCAN FILTER (cpu)");
  sqlite3_close(db);
}
END_TEST

/* A bound whose value SQLite does not know when it plans (a parameter, a
** column of another table) is planned as a bound, as a known one: a range
** on a later field is a skip scan, and a small table drives it; IN lists
** whose values SQLite does not show are costed as the few values such
** lists mostly hold, so a small table drives point lookups into this one
** rather than this one being scanned to probe the small one. */
START_TEST(test_plan_unknown_bounds_and_lists_plan_as_known_ones) {
  sqlite3 *db = openMetrics();
  char *z;
  PLAN(db, "SELECT * FROM metrics WHERE day BETWEEN ? AND ?",
       SCAN "6:SKIP SCAN on day");
  PLAN(db, "SELECT * FROM metrics WHERE device = ? AND day BETWEEN ? AND ?",
       SCAN "6:SKIP SCAN on day");
  OK(db, "CREATE TABLE w(lo INTEGER, hi INTEGER)");
  OK(db, "INSERT INTO w VALUES (20200103, 20200104), (20200120, 20200120)");
  OK(db, "CREATE TABLE ids(id TEXT PRIMARY KEY)");
  OK(db, "INSERT INTO ids VALUES ('0001'), ('0002'), ('0005')");
  OK(db, "ANALYZE");
  z = plan(db, "SELECT count(*) FROM w JOIN metrics m "
               "ON m.day BETWEEN w.lo AND w.hi");
  ck_assert_str_eq(z, "SCAN w\nSCAN m VIRTUAL TABLE INDEX 6:SKIP SCAN on day");
  sqlite3_free(z);
  CHECK(db,
        "SELECT count(*) FROM w JOIN metrics m ON m.day BETWEEN w.lo AND w.hi",
        "360");
  z = plan(db, "SELECT count(*) FROM ids i JOIN metrics m ON m.id = i.id "
               "WHERE m.device IN ('phone', 'watch') "
               "AND m.day IN (20200101, 20200102)");
  ck_assert_msg(strstr(z, "SCAN i") == z &&
                    strstr(z, "SCAN m VIRTUAL TABLE INDEX 2:MULTI-POINT"),
                "%s", z);
  sqlite3_free(z);
  CHECK(db,
        "SELECT count(*) FROM ids i JOIN metrics m ON m.id = i.id "
        "WHERE m.device IN ('phone', 'watch') "
        "AND m.day IN (20200101, 20200102)",
        "12");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_skip_scan_only_when_cheaper) {
  sqlite3 *db = NULL;
  char *z;
  db = openMem();
  /* every row has its own leading value: skipping saves nothing */
  OK(db, "CREATE VIRTUAL TABLE u USING wcs(KEY (a STRING, b STRING) "
         "DELIMITED BY '#', FAMILY f (v INT64))");
  OK(db, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n "
         "WHERE i < 4999) INSERT INTO u(a, b, v) "
         "SELECT printf('%06d', i), printf('%d', i % 5), i FROM n");
  z = plan(db, "SELECT * FROM u WHERE b = '3'");
  ck_assert_str_eq(z, "SCAN u VIRTUAL TABLE INDEX 7:FULL SCAN");
  sqlite3_free(z);
  CHECK(db, "SELECT count(*) FROM u WHERE b = '3'", "1000");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_order_by_key_desc_is_a_reverse_scan) {
  sqlite3 *db = openMetrics();
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'phone' AND id = '0001' "
       "ORDER BY day DESC LIMIT 10",
       SCAN "3:PREFIX SCAN (device,id) REVERSE LIMIT");
  SAME(db, "day, cpu",
       "WHERE device = 'phone' AND id = '0001' "
       "ORDER BY day DESC LIMIT 10",
       10);
  PLAN(db, "SELECT * FROM metrics ORDER BY device, id, day",
       SCAN "7:FULL SCAN");
  PLAN(db, "SELECT * FROM metrics ORDER BY _key DESC",
       SCAN "7:FULL SCAN REVERSE");
  /* an order the key cannot give is left to SQLite */
  PLAN(db, "SELECT * FROM metrics WHERE device = 'phone' ORDER BY day",
       SCAN "3:PREFIX SCAN (device)\nUSE TEMP B-TREE FOR ORDER BY");
  SAME(db, "id, day", "WHERE device = 'phone' ORDER BY day, id LIMIT 7", 7);
  SAME(db, "device, id, day",
       "ORDER BY device DESC, id DESC, day DESC "
       "LIMIT 3 OFFSET 100",
       3);
  sqlite3_close(db);
}
END_TEST

/* The virtual machine steps a statement takes to run to its end: a scan
** that reads every row of metrics takes several per row. */
static int vmSteps(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *pStmt = NULL;
  int n;
  ck_assert_int_eq(sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL), SQLITE_OK);
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
  }
  n = sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_VM_STEP, 0);
  ck_assert_int_eq(sqlite3_finalize(pStmt), SQLITE_OK);
  return n;
}

START_TEST(test_plan_distinct_key_fields_read_one_row_each) {
  sqlite3 *db = openMetrics();
  /* DISTINCT over leading key fields: one row per value, one seek to the
  ** next (3 devices, 3 x 40 device/id pairs among 3,600 rows) */
  PLAN(db, "SELECT DISTINCT device FROM metrics",
       SCAN "7:FULL SCAN DISTINCT (device)\nUSE TEMP B-TREE FOR DISTINCT");
  SAME(db, "DISTINCT device", "", 3);
  ck_assert_int_lt(vmSteps(db, "SELECT DISTINCT device FROM metrics"), 100);
  PLAN(db, "SELECT DISTINCT id, device FROM metrics WHERE device > 'q'",
       SCAN "4:RANGE SCAN (device) DISTINCT (device,id)\n"
            "USE TEMP B-TREE FOR DISTINCT");
  SAME(db, "DISTINCT id, device", "WHERE device > 'q' ORDER BY 2, 1", 80);
  ck_assert_int_lt(
      vmSteps(db, "SELECT DISTINCT id, device FROM metrics WHERE device > 'q'"),
      2000);
  SAME(db, "DISTINCT id", "WHERE device = 'watch' AND id >= '0010' ORDER BY 1",
       24);
  SAME(db, "count(*)", "WHERE device IN (SELECT DISTINCT device FROM metrics)",
       1);
  SAME(db, "DISTINCT device", "WHERE id = '0003' LIMIT 2 OFFSET 1", 2);
  /* a column outside the leading fields decides nothing: every row read */
  PLAN(db, "SELECT DISTINCT device FROM metrics WHERE cpu > 3000",
       SCAN "7:FULL SCAN FILTER (cpu)\nUSE TEMP B-TREE FOR DISTINCT");
  SAME(db, "DISTINCT device", "WHERE cpu > 3000 ORDER BY 1", 3);
  SAME(db, "DISTINCT device, day", "WHERE day = 20200105 ORDER BY 1", 3);
  /* out of key order and sorted: SQLite sorts */
  SAME(db, "DISTINCT id, device", "ORDER BY id, device", 120);
  SAME(db, "DISTINCT id, device", "ORDER BY id DESC, device", 120);
  /* GROUP BY out of key order is sorted by SQLite, which may then take
  ** the groups as ordered for an ORDER BY that repeats it */
  PLAN(db, "SELECT id, device, count(*) FROM metrics GROUP BY id, device",
       SCAN "7:FULL SCAN\nUSE TEMP B-TREE FOR GROUP BY");
  SAME(db, "id, device, count(*), sum(cpu)",
       "GROUP BY id, device ORDER BY 1, 2", 120);
  sqlite3_close(db);
}
END_TEST

/* Each query of azQ (a template with %s for the table) gives the same
** rows, at least one, on wcs table zW and native table zN. */
static void sameQueries(sqlite3 *db, const char *const *azQ, const char *zW,
                        const char *zN) {
  int i;
  for (i = 0; azQ[i]; i++) {
    char *zQW = sqlite3_mprintf(azQ[i], zW);
    char *zQN = sqlite3_mprintf(azQ[i], zN);
    char *zGotW = run(db, zQW), *zGotN = run(db, zQN);
    ck_assert_msg(strcmp(zGotW, zGotN) == 0, "%s\n  wcs:    %s\n  native: %s",
                  zQW, zGotW, zGotN);
    ck_assert_msg(zGotW[0] != 0, "%s: no rows", zQW);
    sqlite3_free(zQW);
    sqlite3_free(zQN);
    sqlite3_free(zGotW);
    sqlite3_free(zGotN);
  }
}

/* A registered in-memory database after the statements of azSql
** (NULL-ended): a wcs table and its native copy. */
static sqlite3 *openTwins(const char *const *azSql) {
  sqlite3 *db = NULL;
  int i;
  db = openMem();
  for (i = 0; azSql[i]; i++)
    OK(db, azSql[i]);
  return db;
}

/* An ORDER BY on key fields whose direction changes once (ORDER BY id,
** day DESC): the groups of the fields before the change in one direction,
** each group's rows scanned the other way (GROUPS ... EACH REVERSE), with
** a LIMIT or where groups hold many rows; else SQLite sorts. */
START_TEST(test_plan_order_by_changing_direction_scans_groups) {
  static const char *const azQ[] = {
      "SELECT id, day, cpu FROM %s WHERE device = 'phone' "
      "ORDER BY id, day DESC LIMIT 12",
      "SELECT id, day, cpu FROM %s WHERE device = 'phone' "
      "ORDER BY id DESC, day LIMIT 7 OFFSET 50",
      "SELECT device, id, day FROM %s ORDER BY device, id, day DESC LIMIT 40",
      "SELECT device, id, day FROM %s ORDER BY device DESC, id, day "
      "LIMIT 100 OFFSET 1190",
      "SELECT device, id, day FROM %s ORDER BY device, id DESC, day DESC",
      "SELECT device, id, day FROM %s WHERE device IN ('watch', 'phone') "
      "AND id BETWEEN '0003' AND '0005' ORDER BY device DESC, id, day LIMIT 70",
      "SELECT device, id, day FROM %s WHERE device > 'p' AND day < 20200105 "
      "ORDER BY device, id DESC, day LIMIT 30",
      "SELECT id, day FROM %s WHERE device = 'tablet' AND cpu % 5 = 0 "
      "ORDER BY id DESC, day DESC, device LIMIT 9",
      "SELECT device, id, day FROM %s WHERE mem = 3 ORDER BY device, id, day "
      "DESC LIMIT 25",
      0};
  sqlite3 *db = openMetrics();
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'phone' ORDER BY id, day DESC "
       "LIMIT 10",
       SCAN "3:PREFIX SCAN (device) GROUPS (device,id) EACH REVERSE");
  PLAN(db, "SELECT * FROM metrics ORDER BY device DESC, id, day",
       SCAN "7:FULL SCAN REVERSE GROUPS (device) EACH FORWARD");
  /* groups of 30 rows without a LIMIT: sorted by SQLite */
  PLAN(db, "SELECT * FROM metrics ORDER BY device, id, day DESC",
       SCAN "7:FULL SCAN\nUSE TEMP B-TREE FOR ORDER BY");
  /* a direction changing twice: sorted by SQLite */
  PLAN(db, "SELECT * FROM metrics ORDER BY device, id DESC, day LIMIT 3",
       SCAN "7:FULL SCAN\nUSE TEMP B-TREE FOR ORDER BY");
  PLAN(db, "SELECT * FROM metrics ORDER BY device, id DESC, day DESC",
       SCAN "7:FULL SCAN GROUPS (device) EACH REVERSE");
  sameQueries(db, azQ, "metrics", "nat");
  /* the LIMIT reads the first groups only */
  ck_assert_int_lt(vmSteps(db, "SELECT id, day FROM metrics ORDER BY device, "
                               "id, day DESC LIMIT 5"),
                   200);
  /* a group with no row of the families read is passed over, and the
  ** transaction's own writes are in their groups */
  OK(db, "INSERT INTO metrics(device, id, day, meta) VALUES "
         "('phone', '0000a', 1, '{\"n\":\"x\"}')");
  OK(db, "INSERT INTO nat(device, id, day) VALUES ('phone', '0000a', 1)");
  OK(db, "BEGIN");
  OK(db, "INSERT INTO metrics(device, id, day, cpu) VALUES ('phone', '0001', "
         "1, 7), ('phone', '0001', 99999999, 8)");
  OK(db, "INSERT INTO nat(device, id, day, cpu) VALUES ('phone', '0001', "
         "1, 7), ('phone', '0001', 99999999, 8)");
  sameQueries(db, azQ, "metrics", "nat");
  CHECK(db,
        "SELECT id, day, cpu FROM metrics WHERE device = 'phone' AND "
        "cpu IS NOT NULL ORDER BY id, day DESC LIMIT 2 OFFSET 30",
        "0001|99999999|8\n0001|20200130|3483");
  OK(db, "ROLLBACK");
  sqlite3_close(db);
}
END_TEST

/* ORDERED CODE keys, with empty fields (dropped at the end of a key) and
** integers of both signs: DISTINCT seeks past each value's key range. */
START_TEST(test_plan_distinct_ordered_code_keys) {
  static const char *const azQ[] = {
      "SELECT DISTINCT a FROM %s ORDER BY 1",
      "SELECT DISTINCT a, n FROM %s ORDER BY 1, 2",
      "SELECT DISTINCT n, a FROM %s WHERE a = 'ab' ORDER BY 1",
      "SELECT DISTINCT n FROM %s WHERE a = '' ORDER BY 1",
      "SELECT count(*) FROM (SELECT DISTINCT a, n FROM %s WHERE a > 'a')",
      0};
  static const char *const azSetup[] = {
      "CREATE VIRTUAL TABLE oc USING wcs(KEY (a STRING, n INT64 ORDERED "
      "CODE, c STRING) ORDERED CODE, FAMILY f (v INT64))",
      "CREATE TABLE noc(a TEXT, n INTEGER, c TEXT, v INTEGER, "
      "PRIMARY KEY(a, n, c)) WITHOUT ROWID",
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM i "
      "WHERE x < 59) INSERT INTO noc SELECT "
      "CASE x % 4 WHEN 0 THEN '' WHEN 1 THEN 'a' WHEN 2 THEN 'ab' "
      "ELSE 'b' END, CASE (x / 4) % 5 WHEN 0 THEN -300 WHEN 1 THEN -1 "
      "WHEN 2 THEN 0 WHEN 3 THEN 7 ELSE 9000000000 END, "
      "CASE (x / 20) % 3 WHEN 0 THEN '' WHEN 1 THEN 'x' ELSE 'y' END, x "
      "FROM i",
      "INSERT INTO oc(a, n, c, v) SELECT a, n, c, v FROM noc", 0};
  sqlite3 *db = openTwins(azSetup);
  PLAN(db, "SELECT DISTINCT a FROM oc",
       "SCAN oc VIRTUAL TABLE INDEX 7:FULL SCAN DISTINCT (a)\n"
       "USE TEMP B-TREE FOR DISTINCT");
  sameQueries(db, azQ, "oc", "noc");
  ck_assert_int_lt(vmSteps(db, "SELECT DISTINCT a FROM oc"), 60);
  sqlite3_close(db);
}
END_TEST

/* Salted keys: a DISTINCT reads the buckets merged into key order, and
** each value's rows, spread over the buckets, are passed by a seek in
** every bucket. */
START_TEST(test_plan_distinct_salted_keys) {
  static const char *const azQ[] = {
      "SELECT DISTINCT t FROM %s",
      "SELECT DISTINCT t, u FROM %s",
      "SELECT DISTINCT u FROM %s WHERE t = 'b'",
      "SELECT DISTINCT t FROM %s WHERE t > 'a' ORDER BY t",
      "SELECT count(*) FROM (SELECT DISTINCT t, u FROM %s WHERE t < 'c')",
      0};
  static const char *const azSetup[] = {
      "CREATE VIRTUAL TABLE sk USING wcs(KEY (t STRING, u STRING, "
      "n INT64 DECIMAL(4)) DELIMITED BY '#' SALT 4, FAMILY f (v INT64))",
      "CREATE TABLE nsk(t TEXT, u TEXT, n INTEGER, v INTEGER, "
      "PRIMARY KEY(t, u, n)) WITHOUT ROWID",
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM i "
      "WHERE x < 299) INSERT INTO nsk SELECT char(97 + x % 5), "
      "'u' || (x / 5) % 7, x, x FROM i",
      "INSERT INTO sk(t, u, n, v) SELECT t, u, n, v FROM nsk", 0};
  sqlite3 *db = openTwins(azSetup);
  PLAN(db, "SELECT DISTINCT t FROM sk",
       "SCAN sk VIRTUAL TABLE INDEX 7:FULL SCAN OVER 4 BUCKETS DISTINCT (t)"
       "\nUSE TEMP B-TREE FOR DISTINCT");
  sameQueries(db, azQ, "sk", "nsk");
  ck_assert_int_lt(vmSteps(db, "SELECT DISTINCT t FROM sk"), 100);
  /* a _key whose value the plan does not know yet (it begins with its
  ** bucket byte): a point, not the empty plan of a key in no bucket */
  PLAN(db, "SELECT v FROM sk WHERE _key = ?",
       "SCAN sk VIRTUAL TABLE INDEX 1:POINT LOOKUP");
  PLAN(db, "SELECT v FROM sk WHERE _key = wcs_key_encode('sk', 'b', '0', 6)",
       "SCAN sk VIRTUAL TABLE INDEX 1:POINT LOOKUP");
  CHECK(db, "SELECT v FROM sk WHERE _key = wcs_key_encode('sk', 'b', '0', 6)",
        "6");
  /* _key after a key field: salted keys are in _key order bucket by
  ** bucket, which no order of the field before it keeps, so SQLite sorts
  ** (it was told the order was kept, and got the buckets one by one) */
  OK(db, "CREATE TABLE nk AS SELECT t, u, n, _key AS k FROM sk");
  {
    static const char *const azOrd[][2] = {
        {"ORDER BY t, _key", "ORDER BY t, k"},
        {"ORDER BY t DESC, _key DESC LIMIT 7",
         "ORDER BY t DESC, k DESC LIMIT 7"},
        {"ORDER BY t, u, _key LIMIT 40", "ORDER BY t, u, k LIMIT 40"},
        {"ORDER BY _key LIMIT 9", "ORDER BY k LIMIT 9"}};
    size_t i;
    for (i = 0; i < sizeof azOrd / sizeof azOrd[0]; i++) {
      char *zW = sqlite3_mprintf("SELECT group_concat(n) FROM (SELECT n FROM "
                                 "sk WHERE t < 'd' %s)",
                                 azOrd[i][0]);
      char *zN = sqlite3_mprintf("SELECT group_concat(n) FROM (SELECT n FROM "
                                 "nk WHERE t < 'd' %s)",
                                 azOrd[i][1]);
      char *zA = run(db, zW), *zB = run(db, zN);
      ck_assert_msg(strcmp(zA, zB) == 0, "%s\nwcs    %s\nnative %s", zW, zA,
                    zB);
      sqlite3_free(zA);
      sqlite3_free(zB);
      sqlite3_free(zW);
      sqlite3_free(zN);
    }
  }
  sqlite3_close(db);
}
END_TEST

/* Key fields read row after row: a row that keeps the fields before the
** last keeps them decoded (an integer's value, a string's check), and a
** row that changes any of them decodes them anew. */
START_TEST(test_plan_key_fields_decoded_across_rows) {
  static const char *const azQ[] = {
      "SELECT a, b, c, v FROM %s ORDER BY a, b, c",
      "SELECT b, v FROM %s WHERE a BETWEEN 3 AND 5",
      "SELECT a, count(*), sum(c) FROM %s GROUP BY a ORDER BY a",
      "SELECT c, a FROM %s WHERE a > 2 AND b <> 'k' ORDER BY a, b, c", 0};
  /* heads (a, b) of one to four rows each; b changes with a kept, a
  ** changes with b kept, and both change */
  static const char *const azSetup[] = {
      "CREATE VIRTUAL TABLE dk USING wcs(KEY (a INT64 DECIMAL(3), "
      "b STRING, c INT64 DECIMAL(4)) DELIMITED BY '#', FAMILY f (v INT64))",
      "CREATE TABLE ndk(a INTEGER, b TEXT, c INTEGER, v INTEGER, "
      "PRIMARY KEY(a, b, c)) WITHOUT ROWID",
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM i "
      "WHERE x < 119) INSERT INTO ndk SELECT x / 12, "
      "CASE (x / 4) % 3 WHEN 0 THEN 'k' WHEN 1 THEN 'kk' ELSE 'l' END, "
      "x % 4 * 7, x FROM i WHERE x % 4 <= (x / 4) % 4",
      "INSERT INTO dk(a, b, c, v) SELECT a, b, c, v FROM ndk", 0};
  sqlite3 *db = openTwins(azSetup);
  sameQueries(db, azQ, "dk", "ndk");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_min_of_key_field_stops_at_first_row) {
  sqlite3 *db = openMetrics();
  /* key fields are declared NOT NULL, so SQLite asks for them in order
  ** (min() wants NULLs last) and stops at the first row */
  CHECK(db,
        "SELECT name, \"notnull\" FROM pragma_table_info('metrics') "
        "WHERE name IN ('device', 'id', 'day', 'cpu')",
        "device|1\nid|1\nday|1\ncpu|0");
  SAME(db, "min(id)", "WHERE device = 'tablet'", 1);
  SAME(db, "min(device), max(device)", "", 1);
  SAME(db, "min(day)", "WHERE device = 'tablet' AND id = '0007'", 1);
  ck_assert_int_lt(
      vmSteps(db, "SELECT min(id) FROM metrics WHERE device = 'tablet'"), 50);
  ck_assert_int_lt(vmSteps(db, "SELECT min(device) FROM metrics"), 50);
  sqlite3_close(db);
}
END_TEST

/* touch(): counts its calls and is true, to see which rows reach SQLite's
** own check of a WHERE clause. */
static void touchFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  int *pn = (int *)sqlite3_user_data(ctx);
  (void)argc, (void)argv;
  (*pn)++;
  sqlite3_result_int(ctx, 1);
}

/* Value filters: a comparison of a declared number column that SQLite
** still checks (not omitted) lets the cursor pass over the rows that
** cannot satisfy it (FILTER in the plan). Whatever the value's type, the
** rows are those SQLite's own check keeps: a column without a cell is
** NULL, a TEXT value is left to SQLite's affinity, an INTEGER against a
** REAL compares exactly. */
START_TEST(test_plan_value_filters) {
  sqlite3 *db = openMetrics();
  static const char *azWhere[] = {"i = 5",
                                  "i != 5",
                                  "i < 5",
                                  "i <= 5",
                                  "i > 5",
                                  "i >= 5",
                                  "i > 5.5",
                                  "i = 5.0",
                                  "i <= 4.99",
                                  "i < '6'",
                                  "i = '5'",
                                  "i > NULL",
                                  "i != NULL",
                                  "i = 9007199254740993",
                                  "i = 9007199254740992.0",
                                  "i > 9007199254740992.0",
                                  "i < -9007199254740992.0",
                                  "i < 9.3e18",
                                  "i >= -9.3e18",
                                  "i > x'05'",
                                  "r = 1",
                                  "r > 0",
                                  "r >= 0.5",
                                  "r < 0",
                                  "r != 0",
                                  "r = -0.0",
                                  "r = 9007199254740993",
                                  "r > 9007199254740992",
                                  "r < 'a'",
                                  "r = '0.5'",
                                  "r > 1e308",
                                  "i > 1 AND r < 100",
                                  "i >= 2 AND i <= 7 AND r != 2.5",
                                  "i > 3 AND i > 2",
                                  "+i > 3",
                                  "s = 'x'",
                                  "s = 'q'",
                                  "s = ''",
                                  "s = x'78'",
                                  "s = x'ff78'",
                                  "s = 5",
                                  "s > 'x'",
                                  "s = 'X' COLLATE NOCASE",
                                  "s = 'x' AND i = 5",
                                  "s = '5' AND r > 0"};
  int i, nTouch = 0;
  OK(db, "CREATE VIRTUAL TABLE v USING wcs(KEY (k STRING), "
         "FAMILY f (i INT64, r FLOAT64), FAMILY g (s STRING))");
  OK(db, "CREATE TABLE vn(k TEXT PRIMARY KEY, i INTEGER, r REAL, s TEXT)");
  OK(db, "INSERT INTO vn VALUES ('a', 5, 0.5, 'x'), ('b', NULL, 1.0, 'y'), "
         "('c', 7, NULL, 'z'), ('d', NULL, NULL, 'w'), "
         "('e', 9007199254740993, 9007199254740992.0, NULL), "
         "('f', -9223372036854775808, -0.0, NULL), "
         "('g', 9223372036854775807, 1e308, NULL), ('h', 4, -2.5, NULL), "
         "('i', 0, 0.0, ''), ('j', 6, 2.5, x'ff78'), ('k', 5, 0.5, '5')");
  OK(db, "INSERT INTO v(k, i, r, s) SELECT k, i, r, s FROM vn");
  for (i = 0; i < (int)(sizeof azWhere / sizeof azWhere[0]); i++) {
    char *zA =
        sqlite3_mprintf("SELECT k FROM v WHERE %s ORDER BY k", azWhere[i]);
    char *zB =
        sqlite3_mprintf("SELECT k FROM vn WHERE %s ORDER BY k", azWhere[i]);
    char *zGotA = run(db, zA), *zGotB = run(db, zB);
    ck_assert_msg(strcmp(zGotA, zGotB) == 0, "%s\n  wcs:    %s\n  native: %s",
                  zA, zGotA, zGotB);
    sqlite3_free(zA);
    sqlite3_free(zB);
    sqlite3_free(zGotA);
    sqlite3_free(zGotB);
  }
  PLAN(db,
       "SELECT * FROM metrics WHERE device = 'watch' AND cpu >= 100 "
       "AND mem < 3 AND cpu < 3000",
       SCAN "3:PREFIX SCAN (device) FILTER (cpu,mem)");
  SAME(db, "device, id, day",
       "WHERE device = 'watch' AND cpu >= 100 "
       "AND mem < 3 AND cpu < 3000",
       100);
  PLAN(db, "SELECT * FROM v WHERE s = 'x' AND r > 1",
       "SCAN v VIRTUAL TABLE INDEX 7:FULL SCAN FILTER (s,r)");
  /* not filters: an IN list (one scan, SQLite checks each row), IS, a
  ** text column compared otherwise than by = with BINARY collation */
  PLAN(db, "SELECT * FROM metrics WHERE cpu IN (1, 2)", SCAN "7:FULL SCAN");
  PLAN(db, "SELECT * FROM metrics WHERE cpu IS 5", SCAN "7:FULL SCAN");
  PLAN(db, "SELECT * FROM v WHERE s > 'x'",
       "SCAN v VIRTUAL TABLE INDEX 7:FULL SCAN");
  PLAN(db, "SELECT * FROM v WHERE s = 'x' COLLATE NOCASE",
       "SCAN v VIRTUAL TABLE INDEX 7:FULL SCAN");
  /* an ON term of a LEFT JOIN on its left table keeps every row: 3598
  ** rows without a match, 2 rows with cpu > 3597 matching 2 each */
  PLAN(db, "SELECT * FROM metrics LEFT JOIN nat ON metrics.cpu > 3590",
       SCAN "7:FULL SCAN\nSCAN nat LEFT-JOIN");
  CHECK(db,
        "SELECT count(*) FROM metrics LEFT JOIN nat "
        "ON metrics.cpu > 3597 AND nat.cpu < 2",
        "3602");
  /* != and IS NOT NULL too: SQLite 3.40 passes them from the ON clause
  ** without the join's prerequisite, so they filter nothing and prune no
  ** family (they once lost the 3 rows with cpu 1, 2 or 3; and a row with
  ** no cell of the family) */
  CHECK(db,
        "SELECT count(*) FROM metrics LEFT JOIN nat "
        "ON metrics.cpu != 1 AND metrics.cpu != 2 AND metrics.cpu != 3 "
        "AND nat.cpu < 2",
        "7197");
  PLAN(db, "SELECT * FROM metrics WHERE cpu != 7", SCAN "7:FULL SCAN");
  OK(db, "INSERT INTO metrics(device, id, day, meta) "
         "VALUES ('zz', 'z', 20230101, '{\"n\": \"only meta\"}')");
  CHECK(db,
        "SELECT count(*) FROM metrics LEFT JOIN nat "
        "ON metrics.cpu IS NOT NULL AND nat.cpu < 0",
        "3601");
  OK(db, "DELETE FROM metrics WHERE device = 'zz'");
  /* and the rows the filter rules out never reach SQLite */
  ck_assert_int_eq(sqlite3_create_function(db, "touch", 0, SQLITE_UTF8, &nTouch,
                                           touchFunc, NULL, NULL),
                   SQLITE_OK);
  {
    /* each op: exactly the rows that satisfy it reach SQLite */
    static const struct {
      const char *zSql;
      int n;
    } aT[] = {
        {"SELECT count(*) FROM metrics WHERE touch() AND cpu > 3590", 9},
        {"SELECT count(*) FROM metrics WHERE touch() AND cpu >= 3590", 10},
        {"SELECT count(*) FROM metrics WHERE touch() AND cpu < 7", 7},
        {"SELECT count(*) FROM metrics WHERE touch() AND cpu <= 7", 8},
        {"SELECT count(*) FROM metrics WHERE touch() AND cpu = 7", 1},
        {"SELECT count(*) FROM metrics WHERE touch() AND cpu < 7.5", 8},
        {"SELECT count(*) FROM v WHERE touch() AND s = 'x'", 1},
        {"SELECT count(*) FROM v WHERE touch() AND r >= 1", 4},
    };
    for (i = 0; i < (int)(sizeof aT / sizeof aT[0]); i++) {
      char *zGot;
      nTouch = 0;
      zGot = run(db, aT[i].zSql);
      ck_assert_msg(atoi(zGot) == aT[i].n && nTouch == aT[i].n,
                    "%s: %s rows, %d reached SQLite, want %d", aT[i].zSql, zGot,
                    nTouch, aT[i].n);
      sqlite3_free(zGot);
    }
  }
  /* writes: an UPDATE and a DELETE read through the filter too */
  OK(db, "UPDATE metrics SET mem = 99 WHERE cpu >= 3595");
  OK(db, "UPDATE nat SET mem = 99 WHERE cpu >= 3595");
  SAME(db, "device, id, day, cpu, mem", "WHERE mem = 99", 5);
  OK(db, "DELETE FROM metrics WHERE cpu < 10 AND mem != 3");
  OK(db, "DELETE FROM nat WHERE cpu < 10 AND mem != 3");
  SAME(db, "device, id, day, cpu, mem", "", 3500);
  sqlite3_close(db);
}
END_TEST

/* The common range scan made without the planner (= on every key field
** but the last, a closed range on the last, DECIMAL or REVERSED DECIMAL)
** gives the planner's rows: bounds open or closed, empty, beyond the
** field's digits, REAL and TEXT values, with ORDER BY, LIMIT, OFFSET. */
START_TEST(test_plan_direct_range_scans) {
  sqlite3 *db = openMetrics();
  static const char *azRange[] = {
      "day BETWEEN 20200105 AND 20200110",
      "day >= 20200105 AND day < 20200110",
      "day > 20200105 AND day <= 20200110",
      "day > 20200105 AND day < 20200106",
      "day > 20200110 AND day < 20200105",
      "day BETWEEN 20200110 AND 20200110",
      "day BETWEEN -5 AND 20200103",
      "day BETWEEN 20200128 AND 123456789",
      "day BETWEEN -9223372036854775808 AND 9223372036854775807",
      "day > 9223372036854775807 AND day < 5",
      "day BETWEEN 20200104.5 AND 20200107.5",
      "day BETWEEN '20200104' AND '20200106'",
      "day >= 20200105 AND day <= 20200105.0",
      "day < 20200103 AND day > 20200101"};
  static const char *azTail[] = {"", " ORDER BY day DESC", " LIMIT 3",
                                 " ORDER BY day DESC LIMIT 2 OFFSET 1"};
  /* each last-field encoding the direct range takes, and both structs
  ** its prefix takes; bReversed: the table's order is newest first */
  static const struct {
    const char *zName, *zKey;
    int bReversed;
  } aTab[] = {
      {"metrics", NULL, 0},
      {"rmetrics",
       "KEY (device STRING, id STRING, day INT64 REVERSED DECIMAL(8)) "
       "DELIMITED BY '#'",
       1},
      {"ometrics",
       "KEY (device STRING, id STRING, day INT64 ORDERED CODE) ORDERED CODE",
       0},
      {"bmetrics",
       "KEY (device STRING, id STRING, day INT64 BIG ENDIAN) ORDERED CODE", 0},
  };
  int i, j, t;
  for (t = 1; t < (int)(sizeof aTab / sizeof aTab[0]); t++) {
    char *z = sqlite3_mprintf("CREATE VIRTUAL TABLE %s USING wcs(%s, "
                              "FAMILY stats (cpu INT64, mem INT64))",
                              aTab[t].zName, aTab[t].zKey);
    OK(db, z);
    sqlite3_free(z);
    z = sqlite3_mprintf("INSERT INTO %s(device, id, day, cpu, mem) "
                        "SELECT device, id, day, cpu, mem FROM nat",
                        aTab[t].zName);
    OK(db, z);
    sqlite3_free(z);
  }
  for (t = 0; t < (int)(sizeof aTab / sizeof aTab[0]); t++) {
    const int bRev = aTab[t].bReversed;
    for (i = 0; i < (int)(sizeof azRange / sizeof azRange[0]); i++) {
      for (j = 0; j < (int)(sizeof azTail / sizeof azTail[0]); j++) {
        char *zA = sqlite3_mprintf(
            "SELECT day, cpu FROM %s WHERE device = 'watch' AND id = '0002' "
            "AND %s%s",
            aTab[t].zName, azRange[i], azTail[j]);
        /* the native rows in the order asked, or in the table's (key
        ** order: REVERSED DECIMAL newest first) */
        char *zB = sqlite3_mprintf(
            "SELECT day, cpu FROM nat WHERE device = 'watch' AND id = '0002' "
            "AND %s%s",
            azRange[i],
            j == 0   ? (bRev ? " ORDER BY day DESC" : " ORDER BY day")
            : j == 2 ? (bRev ? " ORDER BY day DESC LIMIT 3"
                             : " ORDER BY day LIMIT 3")
                     : azTail[j]);
        sameQueryAt(db, zA, zB, 0, __LINE__);
        sqlite3_free(zA);
        sqlite3_free(zB);
      }
    }
  }
  /* prefixes: = on the leading fields */
  {
    static const char *azPrefix[] = {"device = 'watch'",
                                     "device = 'watch' AND id = '0002'",
                                     "device = 'phone' AND id = '0027'",
                                     "device = 'wat'",
                                     "device = 'watch' AND id = ''",
                                     "device = ''",
                                     "device = 'wa#tch'",
                                     "device = 'wa!tch'",
                                     "id = '0003' AND device = 'tablet'",
                                     "device = 'tablet' AND id = '00'"};
    static const char *azOrder[] = {" ORDER BY device, id, day",
                                    " ORDER BY device DESC, id DESC, day DESC",
                                    " ORDER BY device, id, day LIMIT 7",
                                    (" ORDER BY device DESC, id DESC, day "
                                     "DESC LIMIT 5 OFFSET 40")};
    for (t = 0; t < (int)(sizeof aTab / sizeof aTab[0]); t++) {
      for (i = 0; i < (int)(sizeof azPrefix / sizeof azPrefix[0]); i++) {
        for (j = 0; j < (int)(sizeof azOrder / sizeof azOrder[0]); j++) {
          char *zA =
              sqlite3_mprintf("SELECT device, id, day, cpu FROM %s WHERE %s%s",
                              aTab[t].zName, azPrefix[i], azOrder[j]);
          char *zB =
              sqlite3_mprintf("SELECT device, id, day, cpu FROM nat WHERE %s%s",
                              azPrefix[i], azOrder[j]);
          sameQueryAt(db, zA, zB, 0, __LINE__);
          sqlite3_free(zA);
          sqlite3_free(zB);
        }
      }
    }
    PLAN(db, "SELECT * FROM metrics WHERE device = 'watch' AND id = '0002'",
         SCAN "3:PREFIX SCAN (device,id)");
  }
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_limit_and_offset_pushed_down) {
  sqlite3 *db = openMetrics();
  PLAN(db, "SELECT * FROM metrics LIMIT 5", SCAN "7:FULL SCAN LIMIT");
  PLAN(db, "SELECT * FROM metrics LIMIT 5 OFFSET 10",
       SCAN "7:FULL SCAN LIMIT OFFSET");
  PLAN(db, "SELECT * FROM metrics WHERE device = 'watch' LIMIT 5",
       SCAN "3:PREFIX SCAN (device) LIMIT");
  /* a constraint SQLite must check itself keeps LIMIT with SQLite */
  PLAN(db, "SELECT * FROM metrics WHERE cpu > 100 LIMIT 5",
       SCAN "7:FULL SCAN FILTER (cpu)");
  PLAN(db, "SELECT * FROM metrics WHERE device LIKE 'wa%' LIMIT 5",
       SCAN "5:MULTI-RANGE SCAN (4 ranges on device)");
  SAME(db, "device, id, day", "LIMIT 5 OFFSET 10", 5);
  SAME(db, "device, id, day", "WHERE device = 'watch' LIMIT 5 OFFSET 29", 5);
  SAME(db, "device, id, day", "WHERE cpu > 100 LIMIT 5", 5);
  SAME(db, "device, id, day", "WHERE device LIKE 'wa%' LIMIT 5", 5);
  SAME(db, "device, id, day", "LIMIT 0", 0);
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_joins_pick_key_lookups) {
  sqlite3 *db = openMetrics();
  OK(db, "CREATE TABLE wanted(device TEXT, id TEXT)");
  OK(db, "INSERT INTO wanted VALUES ('phone','0001'), ('watch','0002')");
  PLAN(db,
       "SELECT m.day FROM wanted w JOIN metrics m ON m.device = w.device "
       "AND m.id = w.id",
       "SCAN w\nSCAN m VIRTUAL TABLE INDEX 3:PREFIX SCAN (device,id)");
  {
    char *zA = run(db, "SELECT m.device, m.id, m.day FROM wanted w JOIN "
                       "metrics m ON m.device = w.device AND m.id = w.id "
                       "ORDER BY 1, 2, 3");
    char *zB = run(db, "SELECT m.device, m.id, m.day FROM wanted w JOIN "
                       "nat m ON m.device = w.device AND m.id = w.id "
                       "ORDER BY 1, 2, 3");
    ck_assert_str_eq(zA, zB);
    sqlite3_free(zA);
    sqlite3_free(zB);
  }
  /* wcs joined with wcs on the full key */
  OK(db, "CREATE VIRTUAL TABLE m2 USING wcs(TABLE 'metrics')");
  PLAN(db,
       "SELECT a.cpu, b.cpu FROM metrics a JOIN m2 b ON b.device = a.device "
       "AND b.id = a.id AND b.day = a.day WHERE a.device = 'phone' "
       "AND a.id = '0003'",
       "SCAN a VIRTUAL TABLE INDEX 3:PREFIX SCAN (device,id)\n"
       "SCAN b VIRTUAL TABLE INDEX 1:POINT LOOKUP");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_salted_keys_merge_buckets_in_order) {
  sqlite3 *db = NULL;
  char *z;
  db = openMem();
  OK(db, "CREATE VIRTUAL TABLE s USING wcs(KEY (device STRING, day INT64 "
         "DECIMAL(8)) DELIMITED BY '#' SALT 4, FAMILY f (v INT64))");
  OK(db, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n "
         "WHERE i < 199) INSERT INTO s(device, day, v) SELECT "
         "CASE i % 2 WHEN 0 THEN 'a' ELSE 'b' END, 20200101 + i, i FROM n");
  z = plan(db, "SELECT day FROM s WHERE device = 'a' ORDER BY day");
  ck_assert_str_eq(z, "SCAN s VIRTUAL TABLE INDEX 3:PREFIX SCAN (device) "
                      "OVER 4 BUCKETS");
  sqlite3_free(z);
  CHECK(db,
        "SELECT group_concat(day - 20200100) FROM (SELECT day FROM s "
        "WHERE device = 'a' ORDER BY day LIMIT 5)",
        "1,3,5,7,9");
  CHECK(db,
        "SELECT group_concat(day - 20200100) FROM (SELECT day FROM s "
        "WHERE device = 'b' ORDER BY day DESC LIMIT 3)",
        "200,198,196");
  CHECK(db, "SELECT v FROM s WHERE device = 'b' AND day = 20200104", "3");
  CHECK(db, "SELECT count(*), sum(v) FROM s", "200|19900");
  sqlite3_close(db);
}
END_TEST

/* The most buckets a key may have, most of them without rows for a
** prefix (their streams end at once) and rows ending in every order: the
** merge keeps key order both ways, with LIMIT, OFFSET, DISTINCT and
** GROUP BY, as the same rows in a native table give them. */
START_TEST(test_plan_salted_keys_merge_many_buckets) {
  static const char *const azQ[] = {
      "SELECT group_concat(n) FROM (SELECT n FROM %s ORDER BY t, u, n)",
      "SELECT group_concat(n) FROM (SELECT n FROM %s ORDER BY t DESC, u "
      "DESC, n DESC)",
      "SELECT group_concat(n) FROM (SELECT n FROM %s WHERE t = 'c' "
      "ORDER BY u, n LIMIT 9 OFFSET 3)",
      "SELECT group_concat(n) FROM (SELECT n FROM %s WHERE t >= 'b' AND "
      "t < 'e' ORDER BY t DESC, u DESC, n DESC LIMIT 20)",
      "SELECT group_concat(t || u) FROM (SELECT DISTINCT t, u FROM %s "
      "ORDER BY t, u)",
      "SELECT group_concat(t || ':' || c) FROM (SELECT t, count(*) AS c "
      "FROM %s GROUP BY t)",
      0};
  static const char *const azSetup[] = {
      "CREATE VIRTUAL TABLE sk USING wcs(KEY (t STRING, u STRING, "
      "n INT64 DECIMAL(4)) DELIMITED BY '#' SALT 256, FAMILY f (v INT64))",
      "CREATE TABLE nsk(t TEXT, u TEXT, n INTEGER, v INTEGER, "
      "PRIMARY KEY(t, u, n)) WITHOUT ROWID",
      "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM i "
      "WHERE x < 899) INSERT INTO nsk SELECT char(97 + x % 7), "
      "'u' || (x / 7) % 11, (x * 37) % 1000, x FROM i",
      "INSERT INTO sk(t, u, n, v) SELECT t, u, n, v FROM nsk", 0};
  sqlite3 *db = openTwins(azSetup);
  PLAN(db, "SELECT n FROM sk ORDER BY t, u, n",
       "SCAN sk VIRTUAL TABLE INDEX 7:FULL SCAN OVER 256 BUCKETS");
  sameQueries(db, azQ, "sk", "nsk");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_history_view_pushes_time_and_latest_n) {
  sqlite3 *db = openMetrics();
  OK(db, "CREATE VIRTUAL TABLE h USING wcs(TABLE 'metrics', HISTORY)");
  PLAN(db,
       "SELECT * FROM h WHERE device = 'phone' AND id = '0001' "
       "AND _timestamp < 5000 AND latest_n = 2",
       "SCAN h VIRTUAL TABLE INDEX 3:PREFIX SCAN (device,id) TIME RANGE "
       "LATEST N");
  PLAN(db, "SELECT * FROM h WHERE family = 'stats' LIMIT 3",
       "SCAN h VIRTUAL TABLE INDEX 7:FULL SCAN FAMILY LIMIT");
  /* with latest_n, a _timestamp IN list stays in the plan: SQLite also
  ** tries the plan without its IN lists, which was the cheaper one here
  ** (a range on device against an IN list of unknown length), and would
  ** then filter by the times after latest-N */
  PLAN(db,
       "SELECT * FROM h(2) WHERE _timestamp IN (5, 9, 7) AND device > 'p' "
       "AND device IN ('phone', 'watch')",
       "SCAN h VIRTUAL TABLE INDEX 5:MULTI-RANGE SCAN (device) TIME RANGE "
       "LATEST N");
  CHECK(db, "SELECT count(*) FROM h WHERE device = 'phone' AND id = '0001'",
        "60");
  sqlite3_close(db);
}
END_TEST

START_TEST(test_plan_colliding_types_follow_sqlite_comparisons) {
  sqlite3 *db = openMetrics();
  SAME(db, "count(*)", "WHERE day < 'abc'", 1);
  SAME(db, "count(*)", "WHERE day > 'abc'", 1);
  SAME(db, "count(*)", "WHERE device = 5", 1);
  SAME(db, "count(*)", "WHERE device < x'00'", 1);
  SAME(db, "count(*)", "WHERE device IS NULL", 1);
  SAME(db, "count(*)", "WHERE device IS NOT NULL AND id IS '0001'", 1);
  SAME(db, "count(*)", "WHERE device = 'phone' COLLATE NOCASE", 1);
  SAME(db, "count(*)", "WHERE device = 'PHONE' COLLATE NOCASE", 1);
  SAME(db, "count(*)", "WHERE day IN (20200101, '20200102', 3.5, NULL)", 1);
  SAME(db, "count(*)", "WHERE id IN (SELECT id FROM nat WHERE cpu < 10)", 1);
  sqlite3_close(db);
}
END_TEST

Suite *vtab_plan_suite(void) {
  Suite *s = suite_create("vtab_plan");
  TCase *tc = tcase_create("plans");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_plan_all_fields_equal_is_point_lookup);
  tcase_add_test(tc, test_plan_in_list_becomes_points);
  tcase_add_test(tc, test_plan_leading_equalities_are_a_prefix_scan);
  tcase_add_test(tc, test_plan_ordered_code_prefix_ends_at_the_field);
  tcase_add_test(tc, test_plan_patterns_on_bytes_are_sqlites);
  tcase_add_test(tc, test_plan_patterns_end_at_a_nul);
  tcase_add_test(tc, test_plan_patterns_fold_as_sqlite_reads_them);
  tcase_add_test(tc, test_plan_empty_only_from_values_that_hold);
  tcase_add_test(tc, test_plan_left_join_keeps_rows_a_like_term_rules_out);
  tcase_add_test(tc, test_plan_in_list_past_the_cap_is_checked_per_row);
  tcase_add_test(tc, test_plan_range_after_prefix);
  tcase_add_test(tc, test_plan_glob_like_and_starts_with_prefixes);
  tcase_add_test(tc, test_plan_key_column_ranges);
  tcase_add_test(tc, test_plan_key_compared_with_text_uses_its_bytes);
  tcase_add_test(tc, test_plan_row_values_keep_limit_with_sqlite);
  tcase_add_test(tc, test_plan_later_field_alone_is_a_skip_scan);
  tcase_add_test(tc, test_plan_unknown_bounds_and_lists_plan_as_known_ones);
  tcase_add_test(tc, test_plan_skip_scan_only_when_cheaper);
  tcase_add_test(tc, test_plan_order_by_key_desc_is_a_reverse_scan);
  tcase_add_test(tc, test_plan_order_by_changing_direction_scans_groups);
  tcase_add_test(tc, test_plan_limit_and_offset_pushed_down);
  tcase_add_test(tc, test_plan_joins_pick_key_lookups);
  tcase_add_test(tc, test_plan_salted_keys_merge_buckets_in_order);
  tcase_add_test(tc, test_plan_salted_keys_merge_many_buckets);
  tcase_add_test(tc, test_plan_history_view_pushes_time_and_latest_n);
  tcase_add_test(tc, test_plan_colliding_types_follow_sqlite_comparisons);
  tcase_add_test(tc, test_plan_in_list_beside_a_bound_is_not_one_row);
  tcase_add_test(tc, test_plan_distinct_key_fields_read_one_row_each);
  tcase_add_test(tc, test_plan_min_of_key_field_stops_at_first_row);
  tcase_add_test(tc, test_plan_distinct_ordered_code_keys);
  tcase_add_test(tc, test_plan_key_fields_decoded_across_rows);
  tcase_add_test(tc, test_plan_distinct_salted_keys);
  tcase_add_test(tc, test_plan_value_filters);
  tcase_add_test(tc, test_plan_direct_range_scans);
  suite_add_tcase(s, tc);
  return s;
}
