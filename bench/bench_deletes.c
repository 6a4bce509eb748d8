/*
** bench_deletes.c — reads after rows were deleted one by one: a retention
** job's DELETEs (each row delete is a range tombstone per family in wcs,
** doc/storage.md, "Range deletes") against native SQLite, side by side in
** one database file, before and after `wcs_compact`.
**
** USAGE
**   bench_deletes [-n ROWS] [-x DELETED] [-r RUNS] [-d DIR] [-s]
**
**   -n ROWS     rows loaded (default 300000), keys 0 .. ROWS-1
**   -x DELETED  rows then deleted one by one, the lowest keys first, in
**               transactions of 1000 (default 200000)
**   -r RUNS     repetitions of the reads; each number is the median
**               (default 5)
**   -d DIR      where the database is made (default ./bench-deletes-data),
**               removed at the end
**   -s          the rows deleted by one statement instead (DELETE ... WHERE
**               k < DELETED, one transaction): SQLite still hands the
**               module one row at a time
**
** Tables: wcs `KEY (k INT64 ORDERED CODE), FAMILY f (v INT64)`, SYNC
** NORMAL, compacted after the load; native `k INTEGER PRIMARY KEY, v`,
** WAL, synchronous=NORMAL. Reads, each on both: 10,000 point lookups of
** live keys (prepared), 1,000 counts of a 50-key range of live keys, and
** a full `count(*), sum(v)`. Prints microseconds (milliseconds for the
** full scan) and native ÷ wcs (above 1: wcs faster), after the deletes and
** again after `SELECT wcs_compact('w')`.
*/
#define BENCH_NAME "bench_deletes"
#include "benchsql.h"

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int wcs_register(sqlite3 *db);

/* Run st (one integer parameter per ?, from aArg) to its end. */
static void runStmt(sqlite3 *db, sqlite3_stmt *st, const sqlite3_int64 *aArg,
                    int nArg) {
  int i, rc;
  for (i = 0; i < nArg; i++)
    sqlite3_bind_int64(st, i + 1, aArg[i]);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
  }
  if (rc != SQLITE_DONE) die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
  sqlite3_reset(st);
}

/* A pseudo-random live key (xorshift). */
static sqlite3_int64 liveKey(uint64_t *pState, long nRows, long nDel) {
  *pState ^= *pState << 13;
  *pState ^= *pState >> 7;
  *pState ^= *pState << 17;
  return nDel + (sqlite3_int64)(*pState % (uint64_t)(nRows - nDel));
}

/* Seconds for the three reads of table zTable, in a[0..2] (per point
** lookup, per range count, per full scan). */
static void reads(sqlite3 *db, const char *zTable, long nRows, long nDel,
                  double *a) {
  char *zPoint = sqlite3_mprintf("SELECT v FROM %s WHERE k = ?", zTable);
  char *zRange = sqlite3_mprintf(
      "SELECT count(*) FROM %s WHERE k BETWEEN ? AND ?", zTable);
  char *zAll = sqlite3_mprintf("SELECT count(*), sum(v) FROM %s", zTable);
  sqlite3_stmt *pPoint = prep(db, zPoint), *pRange = prep(db, zRange);
  sqlite3_stmt *pAll = prep(db, zAll);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  double t0;
  int i;
  t0 = benchNow();
  for (i = 0; i < 10000; i++) {
    sqlite3_int64 k = liveKey(&s, nRows, nDel);
    runStmt(db, pPoint, &k, 1);
  }
  a[0] = (benchNow() - t0) / 10000;
  t0 = benchNow();
  for (i = 0; i < 1000; i++) {
    sqlite3_int64 ak[2];
    ak[0] = liveKey(&s, nRows - 50, nDel);
    ak[1] = ak[0] + 49;
    runStmt(db, pRange, ak, 2);
  }
  a[1] = (benchNow() - t0) / 1000;
  t0 = benchNow();
  runStmt(db, pAll, NULL, 0);
  a[2] = benchNow() - t0;
  sqlite3_finalize(pPoint);
  sqlite3_finalize(pRange);
  sqlite3_finalize(pAll);
  sqlite3_free(zPoint);
  sqlite3_free(zRange);
  sqlite3_free(zAll);
}

/* Medians of nRun rounds of reads of both tables, the order turning. */
static void measure(sqlite3 *db, long nRows, long nDel, int nRun,
                    const char *zWhen) {
  static const char *const azRead[3] = {"point lookup (us)",
                                        "count of 50 keys (us)",
                                        "full count(*), sum(v) (ms)"};
  static const double aScale[3] = {1e6, 1e6, 1e3};
  double *a[6];
  int i, r;
  for (i = 0; i < 6; i++) {
    a[i] = malloc(sizeof(double) * (size_t)nRun);
    if (a[i] == NULL) die("out of memory");
  }
  for (r = 0; r < nRun; r++) {
    double x[3];
    for (i = 0; i < 2; i++) {
      int bWcs = (i + r) % 2;
      reads(db, bWcs ? "w" : "n", nRows, nDel, x);
      a[bWcs * 3][r] = x[0];
      a[bWcs * 3 + 1][r] = x[1];
      a[bWcs * 3 + 2][r] = x[2];
    }
  }
  printf("\n%s:\n| read | native | wcs | ratio |\n|---|---|---|---|\n", zWhen);
  for (i = 0; i < 3; i++) {
    double n = benchMedian(a[i], nRun), w = benchMedian(a[3 + i], nRun);
    printf("| %s | %.1f | %.1f | %.2fx |\n", azRead[i], n * aScale[i],
           w * aScale[i], w > 0 ? n / w : 0);
  }
  for (i = 0; i < 6; i++)
    free(a[i]);
}

int main(int argc, char **argv) {
  long nRows = 300000, nDel = 200000, i;
  int nRun = 5;
  const char *zDir = "bench-deletes-data";
  char zDb[4096];
  char *z;
  sqlite3 *db = NULL;
  sqlite3_stmt *pIns[2], *pDel[2];
  double t0, aLoad[2] = {0, 0}, aDel[2] = {0, 0};
  int k, bStmt = 0;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
      nRows = atol(argv[++i]);
    } else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc) {
      nDel = atol(argv[++i]);
    } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      nRun = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
      zDir = argv[++i];
    } else if (strcmp(argv[i], "-s") == 0) {
      bStmt = 1;
    } else {
      die("usage: bench_deletes [-n ROWS] [-x DELETED] [-r RUNS] [-d DIR] "
          "[-s]");
    }
  }
  if (nRows < 100 || nDel < 0 || nDel > nRows - 100 || nRun < 1) {
    die("-n must be at least 100, -x from 0 to ROWS-100, -r at least 1");
  }
  mkdir(zDir, 0755);
  snprintf(zDb, sizeof zDb, "%s/deletes.db", zDir);
  z = sqlite3_mprintf("rm -rf '%s' '%s-wal' '%s-shm' '%s.wcs'", zDb, zDb, zDb,
                      zDb);
  if (z == NULL || system(z) != 0) die("cannot clear %s", zDb);
  if (sqlite3_open(zDb, &db) != SQLITE_OK) die("open %s", zDb);
  if (wcs_register(db) != SQLITE_OK) die("wcs_register: %s", sqlite3_errmsg(db));
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
  exec(db, "CREATE VIRTUAL TABLE w USING wcs(KEY (k INT64 ORDERED CODE), "
           "FAMILY f (v INT64), SYNC NORMAL)");
  exec(db, "CREATE TABLE n(k INTEGER PRIMARY KEY, v INTEGER)");
  pIns[0] = prep(db, "INSERT INTO n(k, v) VALUES (?1, ?1)");
  pIns[1] = prep(db, "INSERT INTO w(k, v) VALUES (?1, ?1)");
  pDel[0] = prep(db, bStmt ? "DELETE FROM n WHERE k < ?1"
                           : "DELETE FROM n WHERE k = ?1");
  pDel[1] = prep(db, bStmt ? "DELETE FROM w WHERE k < ?1"
                           : "DELETE FROM w WHERE k = ?1");
  for (k = 0; k < 2; k++) {
    t0 = benchNow();
    exec(db, "BEGIN");
    for (i = 0; i < nRows; i++) {
      sqlite3_int64 x = i;
      runStmt(db, pIns[k], &x, 1);
    }
    exec(db, "COMMIT");
    aLoad[k] = benchNow() - t0;
  }
  exec(db, "SELECT wcs_compact('w')");
  for (k = 0; k < 2; k++) {
    t0 = benchNow();
    for (i = 0; i < (bStmt ? 1 : nDel); i++) {
      sqlite3_int64 x = bStmt ? nDel : i;
      if (i % 1000 == 0) exec(db, "BEGIN");
      runStmt(db, pDel[k], &x, 1);
      if (bStmt || i % 1000 == 999 || i == nDel - 1) exec(db, "COMMIT");
    }
    aDel[k] = benchNow() - t0;
  }
  printf("bench_deletes: %ld rows, %ld deleted %s, medians of %d runs\n",
         nRows, nDel,
         bStmt ? "by one statement" : "one by one (transactions of 1000)",
         nRun);
  printf("load: native %.2f s, wcs %.2f s; deletes: native %.2f s, wcs %.2f "
         "s\n",
         aLoad[0], aLoad[1], aDel[0], aDel[1]);
  measure(db, nRows, nDel, nRun, "after the deletes");
  exec(db, "SELECT wcs_compact('w')");
  measure(db, nRows, nDel, nRun, "after SELECT wcs_compact('w')");
  for (k = 0; k < 2; k++) {
    sqlite3_finalize(pIns[k]);
    sqlite3_finalize(pDel[k]);
  }
  sqlite3_close(db);
  if (system(z) != 0) die("cannot remove %s", zDb);
  sqlite3_free(z);
  rmdir(zDir);
  return 0;
}
