/*
** SQL helpers shared by the test programs that run statements through the
** wcs module.
*/
#ifndef WCS_SQLUTIL_H
#define WCS_SQLUTIL_H
#include <sqlite3.h>

/* How tu_sql_run() writes a value. */
#define TU_SQL_TEXT  0 /* every value as sqlite3_column_text (NULL: "NULL") */
#define TU_SQL_TYPED 1 /* the same, but blobs as x'HEX' */

/* Run every statement of zSql and return the rows, one line each, columns
** separated by '|'; or "ERROR: <message>" for the first statement that
** fails (earlier statements have run). Free with sqlite3_free(). */
char *tu_sql_run(sqlite3 *db, const char *zSql, int eFormat);

#endif
