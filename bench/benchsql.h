/*
** benchsql.h — the three helpers every bench program that speaks SQL
** needs (bench_sql.c, pgo_train.c): fail with a message and exit 1, run
** a statement that must succeed, prepare one that must. Each program
** defines BENCH_NAME, the prefix of its messages, before including it.
*/
#ifndef WCS_BENCHSQL_H
#define WCS_BENCHSQL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
