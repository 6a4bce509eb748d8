/*
** benchsql.h — the helpers every bench program that speaks SQL needs
** (bench_sql.c, bench_commit.c, bench_deletes.c, pgo_train.c): fail with a
** message and exit 1, run a statement that must succeed, prepare one that
** must; and the clock and the median they time with. Each program defines
** BENCH_NAME, the prefix of its messages, before including it.
*/
#ifndef WCS_BENCHSQL_H
#define WCS_BENCHSQL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double benchNow(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline int benchCmpDouble(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of a[0..n-1], n >= 1 (a is sorted in place). */
static inline double benchMedian(double *a, int n) {
  qsort(a, (size_t)n, sizeof *a, benchCmpDouble);
  return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

static void die(const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  fputs(BENCH_NAME ": ", stderr);
  vfprintf(stderr, zFmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void exec(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK) {
    die("%s: %s", zSql, zErr ? zErr : sqlite3_errmsg(db));
  }
}

static sqlite3_stmt *prep(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, zSql, -1, &st, NULL) != SQLITE_OK) {
    die("prepare %s: %s", zSql, sqlite3_errmsg(db));
  }
  return st;
}

#endif
