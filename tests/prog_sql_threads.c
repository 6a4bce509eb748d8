/*
** sql_threads — several threads of one process, each with its own
** connection to one database, use the same store through the module at
** once, and what each reads must be whole transactions:
**
**   - two writers each rewrite every row of t (NROW rows) in one
**     transaction: UPDATE t SET v = <writer, n>, g = <writer>;
**   - a third appends rows to u, one transaction per row, numbered 1, 2,
**     3, ... in order;
**   - readers check that every statement sees all NROW rows of t with one
**     and the same (v, g) — never a mix of two transactions — and that u
**     holds rows 1 .. n with nothing missing in between, n never going
**     down; inside a transaction that has written (to a table of its
**     own, x), two reads of t give the same value (its snapshot is taken
**     at its first read, doc/sql.md §7);
**   - two incrementers add 1 to one row of c by read-modify-write, in
**     turn `UPDATE c SET v = v + 1` and SELECT then UPDATE inside BEGIN
**     IMMEDIATE; at the end v must be the number of increments made
**     (SQLite's write lock orders them, and the module makes each wait
**     for the store commit of the one before, which SQLite has let go of
**     the lock before: doc/sql.md §7, "When the store is written").
**
** Runs for WCS_THREADS_SECONDS (default 3). The connections use SQLite's
** WAL journal and a busy timeout, as doc/sql.md advises for connections
** that share a database file. Built with -fsanitize=thread it also checks
** the module and the store for data races.
*/
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "wcs.h"

#define NROW 64

static char zDb[1100];
static atomic_int bStop;   /* set by main when time is up */
static atomic_int bFailed; /* set by a thread that found a problem */
static atomic_llong nIncr; /* increments of c made */
static pthread_mutex_t muErr = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *zWho, const char *zWhat, const char *zDetail) {
  pthread_mutex_lock(&muErr);
  if (!bFailed) {
    fprintf(stderr, "sql_threads: %s: %s%s%s\n", zWho, zWhat,
            zDetail ? ": " : "", zDetail ? zDetail : "");
  }
  bFailed = 1;
  bStop = 1;
  pthread_mutex_unlock(&muErr);
}

static sqlite3 *openConn(const char *zWho) {
  sqlite3 *db = NULL;
  if (sqlite3_open(zDb, &db) != SQLITE_OK || wcs_register(db) != SQLITE_OK) {
    fail(zWho, "cannot open the database", db ? sqlite3_errmsg(db) : NULL);
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_busy_timeout(db, 20000);
  return db;
}

static int exec(sqlite3 *db, const char *zWho, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK) {
    fail(zWho, zSql, zErr);
    sqlite3_free(zErr);
    return 1;
  }
  return 0;
}

/* One row of one statement: columns 0 and 1 as integers. */
static int row2(sqlite3 *db, const char *zWho, const char *zSql,
                sqlite3_int64 *pA, sqlite3_int64 *pB) {
  sqlite3_stmt *p = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &p, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(p);
  if (rc != SQLITE_ROW) {
    fail(zWho, zSql, sqlite3_errmsg(db));
    sqlite3_finalize(p);
    return 1;
  }
  *pA = sqlite3_column_int64(p, 0);
  *pB = sqlite3_column_int64(p, 1);
  sqlite3_finalize(p);
  return 0;
}

static void *writer(void *pArg) {
  const int iWriter = (int)(intptr_t)pArg;
  char zWho[32], zSql[200];
  sqlite3 *db;
  sqlite3_int64 n;
  snprintf(zWho, sizeof zWho, "writer %d", iWriter);
  db = openConn(zWho);
  if (db == NULL) return NULL;
  for (n = 1; !bStop; n++) {
    snprintf(zSql, sizeof zSql, "BEGIN; UPDATE t SET v = %lld, g = %d; COMMIT",
             (long long)(n * 10 + iWriter), iWriter);
    if (exec(db, zWho, zSql)) break;
  }
  sqlite3_close(db);
  return NULL;
}

static void *appender(void *pArg) {
  sqlite3 *db = openConn("appender");
  sqlite3_stmt *p = NULL;
  sqlite3_int64 n;
  (void)pArg;
  if (db == NULL) return NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO u(n, w) VALUES (?1, ?1 * 3)", -1, &p,
                         NULL) != SQLITE_OK) {
    fail("appender", "prepare", sqlite3_errmsg(db));
  }
  for (n = 1; p && !bStop; n++) {
    sqlite3_bind_int64(p, 1, n);
    if (sqlite3_step(p) != SQLITE_DONE) {
      fail("appender", "INSERT INTO u", sqlite3_errmsg(db));
      break;
    }
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  sqlite3_close(db);
  return NULL;
}

static void *incrementer(void *pArg) {
  const int iInc = (int)(intptr_t)pArg;
  char zWho[32], zSql[100];
  sqlite3 *db;
  sqlite3_int64 n, v, one;
  snprintf(zWho, sizeof zWho, "incrementer %d", iInc);
  db = openConn(zWho);
  if (db == NULL) return NULL;
  for (n = 0; !bStop; n++) {
    if (n % 2 == 0) {
      if (exec(db, zWho, "UPDATE c SET v = v + 1 WHERE k = 0")) break;
    } else {
      if (exec(db, zWho, "BEGIN IMMEDIATE") ||
          row2(db, zWho, "SELECT v, 1 FROM c WHERE k = 0", &v, &one)) {
        break;
      }
      snprintf(zSql, sizeof zSql, "UPDATE c SET v = %lld WHERE k = 0; COMMIT",
               (long long)(v + 1));
      if (exec(db, zWho, zSql)) break;
    }
    atomic_fetch_add(&nIncr, 1);
  }
  sqlite3_close(db);
  return NULL;
}

static void *reader(void *pArg) {
  const int iReader = (int)(intptr_t)pArg;
  char zWho[32], zMsg[200];
  sqlite3 *db;
  sqlite3_int64 nLast = 0, nRead = 0;
  snprintf(zWho, sizeof zWho, "reader %d", iReader);
  db = openConn(zWho);
  if (db == NULL) return NULL;
  while (!bStop) {
    sqlite3_int64 a, b, c, d, s1, s2;
    /* t: one transaction's values in every row */
    if (row2(db, zWho, "SELECT count(*), count(DISTINCT v * 100 + g) FROM t",
             &a, &b)) {
      break;
    }
    if (a != NROW || b != 1) {
      snprintf(zMsg, sizeof zMsg, "%lld rows, %lld distinct values",
               (long long)a, (long long)b);
      fail(zWho, "t is not one transaction's", zMsg);
      break;
    }
    /* u: rows 1 .. n, n not going down */
    if (row2(db, zWho, "SELECT count(*), coalesce(max(n), 0) FROM u", &a, &b) ||
        row2(db, zWho, "SELECT coalesce(sum(n), 0), coalesce(sum(w), 0) FROM u",
             &c, &d)) {
      break;
    }
    /* (the sums are of another statement, which may see more rows) */
    if (a != b || b < nLast || d != 3 * c) {
      snprintf(zMsg, sizeof zMsg, "count %lld, max %lld, before %lld",
               (long long)a, (long long)b, (long long)nLast);
      fail(zWho, "u has a gap", zMsg);
      break;
    }
    nLast = b;
    /* one snapshot for a whole transaction, from its first read once it
    ** has written (SQLite tells a virtual table of a transaction only
    ** when it writes: a transaction that only reads reads the latest
    ** state at each statement, doc/sql.md §7) */
    snprintf(zMsg, sizeof zMsg, "BEGIN; INSERT INTO x(id, c) VALUES (%d, %lld)",
             iReader, (long long)nRead);
    if (exec(db, zWho, zMsg) ||
        row2(db, zWho, "SELECT sum(v), count(*) FROM t", &s1, &a) ||
        row2(db, zWho, "SELECT sum(v), count(*) FROM t", &s2, &b) ||
        exec(db, zWho, "COMMIT")) {
      break;
    }
    if (s1 != s2 || a != NROW || b != NROW) {
      snprintf(zMsg, sizeof zMsg, "sum %lld then %lld", (long long)s1,
               (long long)s2);
      fail(zWho, "two reads of one transaction differ", zMsg);
      break;
    }
    nRead++;
  }
  if (nRead == 0 && !bFailed) fail(zWho, "read nothing", NULL);
  sqlite3_close(db);
  return NULL;
}

int main(void) {
  const char *zSec = getenv("WCS_THREADS_SECONDS");
  int nSec = zSec ? atoi(zSec) : 3, i;
  const char *zTmp = tu_tmpdir("sql_threads");
  pthread_t aTh[8];
  sqlite3 *db;
  sqlite3_int64 nT, nU;
  if (zTmp == NULL) return 1;
  snprintf(zDb, sizeof zDb, "%.1000s/threads.db", zTmp);
  db = openConn("main");
  if (db == NULL ||
      exec(db, "main",
           "PRAGMA journal_mode=WAL;"
           "CREATE VIRTUAL TABLE t USING wcs(KEY (k INT64 ORDERED CODE), "
           "FAMILY f (v INT64, g INT64));"
           "CREATE VIRTUAL TABLE u USING wcs(KEY (n INT64 DECIMAL(10)), "
           "FAMILY f (w INT64));"
           "CREATE VIRTUAL TABLE x USING wcs(KEY (id INT64 DECIMAL(2)), "
           "FAMILY f (c INT64));"
           "CREATE VIRTUAL TABLE c USING wcs(KEY (k INT64 DECIMAL(2)), "
           "FAMILY f (v INT64));"
           "INSERT INTO c(k, v) VALUES (0, 0);"
           "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c "
           "WHERE i < 63) INSERT INTO t(k, v, g) SELECT i, 0, 0 FROM c")) {
    return 1;
  }
  sqlite3_close(db);
  pthread_create(&aTh[0], NULL, writer, (void *)(intptr_t)1);
  pthread_create(&aTh[1], NULL, writer, (void *)(intptr_t)2);
  pthread_create(&aTh[2], NULL, appender, NULL);
  pthread_create(&aTh[3], NULL, reader, (void *)(intptr_t)1);
  pthread_create(&aTh[4], NULL, reader, (void *)(intptr_t)2);
  pthread_create(&aTh[5], NULL, reader, (void *)(intptr_t)3);
  pthread_create(&aTh[6], NULL, incrementer, (void *)(intptr_t)1);
  pthread_create(&aTh[7], NULL, incrementer, (void *)(intptr_t)2);
  for (i = 0; i < nSec * 10 && !bStop; i++) {
    struct timespec t = {0, 100 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  bStop = 1;
  for (i = 0; i < 8; i++)
    pthread_join(aTh[i], NULL);
  if (bFailed) return 1;
  db = openConn("main");
  if (db == NULL ||
      row2(db, "main", "SELECT count(*), count(DISTINCT v) FROM t", &nT, &nU)) {
    return 1;
  }
  if (nT != NROW || nU != 1) {
    fprintf(stderr, "sql_threads: at the end t has %lld rows, %lld values\n",
            (long long)nT, (long long)nU);
    return 1;
  }
  {
    sqlite3_int64 v, one;
    if (row2(db, "main", "SELECT v, 1 FROM c WHERE k = 0", &v, &one)) return 1;
    if (v != atomic_load(&nIncr)) {
      fprintf(stderr,
              "sql_threads: c counts %lld of %lld increments: updates lost\n",
              (long long)v, (long long)atomic_load(&nIncr));
      return 1;
    }
  }
  row2(db, "main", "SELECT count(*), (SELECT max(v) FROM t) FROM u", &nU, &nT);
  printf("sql_threads: ok, %d s, %lld rows appended, t last written as %lld, "
         "%lld increments\n",
         nSec, (long long)nU, (long long)nT, (long long)atomic_load(&nIncr));
  sqlite3_close(db);
  tu_rmrf(zTmp);
  return 0;
}
