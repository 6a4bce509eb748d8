/*
** sqlutil.c — statements to text for the SQL tests (see sqlutil.h).
*/
#include "sqlutil.h"

#include <stddef.h>

static void appendValue(sqlite3_str *pOut, sqlite3_stmt *pStmt, int i,
                        int eFormat) {
  int eType = sqlite3_column_type(pStmt, i);
  if (eType == SQLITE_BLOB && eFormat == TU_SQL_TYPED) {
    const unsigned char *p = sqlite3_column_blob(pStmt, i);
    int n = sqlite3_column_bytes(pStmt, i), k;
    sqlite3_str_appendall(pOut, "x'");
    for (k = 0; k < n; k++)
      sqlite3_str_appendf(pOut, "%02X", p[k]);
    sqlite3_str_appendall(pOut, "'");
  } else {
    const char *z = (const char *)sqlite3_column_text(pStmt, i);
    sqlite3_str_appendall(pOut, z ? z : "NULL");
  }
}

static char *fail(sqlite3 *db, sqlite3_str *pOut) {
  sqlite3_str_reset(pOut);
  sqlite3_str_appendf(pOut, "ERROR: %s", sqlite3_errmsg(db));
  return sqlite3_str_finish(pOut);
}

char *tu_sql_run(sqlite3 *db, const char *zSql, int eFormat) {
  sqlite3_str *pOut = sqlite3_str_new(db);
  const char *zTail = zSql;
  int nRow = 0;
  char *z;
  while (zTail && zTail[0]) {
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, zTail, -1, &pStmt, &zTail);
    if (rc != SQLITE_OK) return fail(db, pOut);
    if (pStmt == NULL) break;
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
      int i;
      if (nRow++) sqlite3_str_appendall(pOut, "\n");
      for (i = 0; i < sqlite3_column_count(pStmt); i++) {
        if (i) sqlite3_str_appendall(pOut, "|");
        appendValue(pOut, pStmt, i, eFormat);
      }
    }
    if (rc != SQLITE_DONE) {
      z = fail(db, pOut);
      sqlite3_finalize(pStmt);
      return z;
    }
    sqlite3_finalize(pStmt);
  }
  z = sqlite3_str_finish(pOut);
  return z ? z : sqlite3_mprintf("");
}
