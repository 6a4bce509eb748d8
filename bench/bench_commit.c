/*
** bench_commit.c — what a commit costs when it is a statement of its own:
** single-row INSERTs outside BEGIN...COMMIT, each its own transaction, into
** a wcs table and into a native table of the same database file, with and
** without a second connection holding a read transaction on that file.
** While such a reader exists, a commit that writes a wcs table also ticks
** the table's commit clock (doc/sql.md §7: one page of the database file,
** so that SQLite refuses the reader's later write as it would after a
** commit to a native table); without one, a wcs commit writes no page.
**
** USAGE
**   bench_commit [-n INSERTS] [-r RUNS] [-d DIR]
**
**   -n INSERTS  autocommit INSERTs per measurement (default 3000)
**   -r RUNS     repetitions; each number is the median (default 5)
**   -d DIR      where the database is made (default ./bench-commit-data),
**               fresh for every run and removed at the end
**
** Both tables: WAL, synchronous=NORMAL (wcs: SYNC NORMAL), keys 'k000000'
** upward, one INT64 value. Per run, the four measurements (wcs or native,
** reader or not) go in an order that turns with the run. Prints
** microseconds per INSERT, the medians, and the clock's ticks.
*/
#define BENCH_NAME "bench_commit"
#include "benchsql.h"

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int wcs_register(sqlite3 *db);

static sqlite3 *openConn(const char *zDb) {
  sqlite3 *db = NULL;
  if (sqlite3_open(zDb, &db) != SQLITE_OK) {
    die("open %s: %s", zDb, sqlite3_errmsg(db));
  }
  if (wcs_register(db) != SQLITE_OK)
    die("wcs_register: %s", sqlite3_errmsg(db));
  return db;
}

/* Remove the database file, its WAL and shared-memory files, and its
** store (a directory of plain files). */
static void removeAll(const char *zDb) {
  char *z = sqlite3_mprintf("rm -rf '%s' '%s-wal' '%s-shm' '%s.wcs'", zDb, zDb,
                            zDb, zDb);
  if (z == NULL || system(z) != 0) die("cannot remove %s", zDb);
  sqlite3_free(z);
}

/* Microseconds per autocommit INSERT of n rows into zTable. */
static double inserts(sqlite3 *db, const char *zTable, long n) {
  char *zSql = sqlite3_mprintf("INSERT INTO %s(k, v) VALUES (?1, ?2)", zTable);
  sqlite3_stmt *st = prep(db, zSql);
  char zKey[32];
  double t0;
  long i;
  t0 = benchNow();
  for (i = 0; i < n; i++) {
    snprintf(zKey, sizeof zKey, "k%06ld", i);
    sqlite3_bind_text(st, 1, zKey, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, i);
    if (sqlite3_step(st) != SQLITE_DONE) {
      die("%s: %s", zSql, sqlite3_errmsg(db));
    }
    sqlite3_reset(st);
  }
  t0 = benchNow() - t0;
  sqlite3_finalize(st);
  sqlite3_free(zSql);
  return t0 * 1e6 / (double)n;
}

/* One measurement on a fresh database: bWcs picks the table, bReader
** whether a second connection holds a read transaction throughout.
** *pnTick gets the commit clock's value after the wcs INSERTs. */
static double measure(const char *zDb, int bWcs, int bReader, long n,
                      long *pnTick) {
  sqlite3 *db, *pReader = NULL;
  sqlite3_stmt *st;
  double us;
  removeAll(zDb);
  db = openConn(zDb);
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
  exec(db, "CREATE VIRTUAL TABLE w USING wcs(KEY (k STRING), FAMILY f "
           "(v INT64), SYNC NORMAL)");
  exec(db, "CREATE TABLE n(k TEXT PRIMARY KEY, v INTEGER)");
  if (bReader) {
    pReader = openConn(zDb);
    exec(pReader, "BEGIN");
    st = prep(pReader, "SELECT count(*) FROM w");
    if (sqlite3_step(st) != SQLITE_ROW) die("reader: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
  }
  us = inserts(db, bWcs ? "w" : "n", n);
  st = prep(db, "SELECT n FROM w_wcsclock");
  if (sqlite3_step(st) != SQLITE_ROW) die("clock: %s", sqlite3_errmsg(db));
  if (bWcs) *pnTick = (long)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (pReader) {
    exec(pReader, "COMMIT");
    sqlite3_close(pReader);
  }
  sqlite3_close(db);
  return us;
}

int main(int argc, char **argv) {
  long n = 3000, anTick[2] = {0, 0};
  int nRun = 5, i, r;
  const char *zDir = "bench-commit-data";
  char zDb[4096];
  double *a[4];
  static const char *const azWhat[4] = {"native, no reader", "wcs, no reader",
                                        "native, a reader", "wcs, a reader"};
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
      n = atol(argv[++i]);
    } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      nRun = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
      zDir = argv[++i];
    } else {
      die("usage: bench_commit [-n INSERTS] [-r RUNS] [-d DIR]");
    }
  }
  if (n < 1 || nRun < 1) die("-n and -r must be at least 1");
  mkdir(zDir, 0755);
  snprintf(zDb, sizeof zDb, "%s/commit.db", zDir);
  for (i = 0; i < 4; i++) {
    a[i] = malloc(sizeof(double) * (size_t)nRun);
    if (a[i] == NULL) die("out of memory");
  }
  for (r = 0; r < nRun; r++) {
    for (i = 0; i < 4; i++) {
      int k = (i + r) % 4; /* the order turns with the run */
      long nTick = 0;
      a[k][r] = measure(zDb, k % 2, k / 2, n, &nTick);
      if (k % 2) anTick[k / 2] = nTick;
    }
  }
  removeAll(zDb);
  rmdir(zDir);
  printf("bench_commit: %ld autocommit INSERTs per measurement, medians of "
         "%d runs (WAL, synchronous=NORMAL)\n",
         n, nRun);
  printf("| table | us per INSERT | commit clock ticks |\n|---|---|---|\n");
  for (i = 0; i < 4; i++) {
    if (i % 2) {
      printf("| %s | %.1f | %ld |\n", azWhat[i], benchMedian(a[i], nRun),
             anTick[i / 2]);
    } else {
      printf("| %s | %.1f | |\n", azWhat[i], benchMedian(a[i], nRun));
    }
  }
  for (i = 0; i < 4; i++)
    free(a[i]);
  return 0;
}
