/*
** sqlcheck.h — Check assertions over tu_sql_run() (sqlutil.h), for the
** suites that run SQL through the module. Header-only, so that programs
** that link the test utilities without Check (the fuzz targets) need not.
** Each suite defines its OK and CHECK macros with its value format.
*/
#ifndef WCS_SQLCHECK_H
#define WCS_SQLCHECK_H
#include <check.h>
#include <sqlite3.h>
#include <string.h>

#include "sqlutil.h"

/* zSql runs without an error (iLine: the caller's line, for the message). */
static inline void tu_sql_ok_at(sqlite3 *db, const char *zSql, int eFormat,
                                int iLine) {
  char *zGot = tu_sql_run(db, zSql, eFormat);
  ck_assert_msg(strncmp(zGot, "ERROR: ", 7) != 0, "line %d: %s\n  %s", iLine,
                zSql, zGot);
  sqlite3_free(zGot);
}

/* The rows of zSql, as tu_sql_run() gives them, are zWant. */
static inline void tu_sql_check_at(sqlite3 *db, const char *zSql, int eFormat,
                                   const char *zWant, int iLine) {
  char *zGot = tu_sql_run(db, zSql, eFormat);
  ck_assert_msg(strcmp(zGot, zWant) == 0, "line %d: %s\n  got:  %s\n  want: %s",
                iLine, zSql, zGot, zWant);
  sqlite3_free(zGot);
}

#endif
