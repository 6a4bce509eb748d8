/*
** shell.h — internals shared by the files of the `wcs` command-line program
** (DESIGN.md §8; the user manual is doc/shell.md).
**
** Files:
**   main.c      arguments, the read-eval-print loop (readline, multi-line
**               statements, Ctrl-C), scripts, error reporting
**   output.c    running SQL and printing results in the output modes
**   commands.c  the dot-commands (.mode, .tables, .schema, ...)
**   explain.c   .explain: the plan in words and its key ranges
**   store.c     the store behind the database: attaching store tables,
**               canonical schemas, statistics, compaction (engine C API)
**   import.c    .import and .export: cbt CSV, CSV, JSON lines, DynamoDB
**               JSON exports (formats described in doc/shell.md)
**   keyviz.c    the key-distribution / hotspot picture (SVG)
**   demo.c      `wcs demo`: the schema guide's examples and a tour
**
** The shell owns no on-disk format of its own; the import/export file
** formats it reads and writes are documented in doc/shell.md.
*/
#ifndef WCS_SHELL_H
#define WCS_SHELL_H

#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "storage/util.h"
#include "wcs.h"

#define SHELL_MAX_STORES 8 /* stores named by STORE clauses, per session */

/* Output modes (.mode). list is the default when stdout is not a
** terminal (scripts), table when it is. */
#define SHELL_MODE_LIST  0 /* values joined by '|' */
#define SHELL_MODE_TABLE 1 /* ASCII-framed table */
#define SHELL_MODE_BOX   2 /* table framed with Unicode box characters */
#define SHELL_MODE_CSV   3 /* RFC 4180 CSV */
#define SHELL_MODE_JSON  4 /* a JSON array of objects */
#define SHELL_MODE_LINE  5 /* one "column = value" line per column */

typedef struct Shell {
  sqlite3 *db;        /* the open database, module registered */
  char *zDbPath;      /* database file as named by the user (malloc'd) */
  FILE *out;          /* where results go (stdout) */
  int eMode;          /* SHELL_MODE_* */
  int bHeaders;       /* print column names */
  int bTimer;         /* print the time each statement took */
  int bInteractive;   /* input is a terminal: prompts and history */
  int bProgress;      /* stderr is a terminal: progress bars allowed */
  int nErr;           /* errors reported so far */
  int nReadDepth;     /* .read files being run, one inside another */
  int bReconnect;     /* a command altered a table behind the SQL
                      ** connection: reconnect it (shell_reconnect) */
  const char *zInput; /* name of the input being read, for messages */
  int iLine;          /* line of zInput where the current statement
                      ** starts, 0 when not reading a script */
  wcs_engine *pFollow; /* while another process writes the default store:
                       ** a read-only open of it beside that process
                       ** (wcs_options.bFollow), replaced when it moved on */
  wcs_engine *pEng;   /* engine of the default store, or NULL until
                      ** opened by shell_engine() */
  char *zStore;       /* path of the default store (malloc'd), or NULL
                      ** for in-memory and temporary databases */
  int nExtra;         /* stores other than the default one, opened */
  wcs_engine *apExtra[SHELL_MAX_STORES]; /* ... their engines */
  char *azExtra[SHELL_MAX_STORES];       /* ... and paths (malloc'd) */
  char *zTempDir; /* `wcs demo`'s temporary directory, removed by
                  ** shell_close(), or NULL */
  int bExitCode;  /* `.exit CODE` ran: the shell's exit status is ... */
  int iExitCode;  /* ... this */
} Shell;

/* Set by the SIGINT handler; cleared before each statement and import. */
extern volatile sig_atomic_t shell_interrupted;
/* Nonzero while a statement, an import, an export, .keyviz or .backup
** runs (they react to Ctrl-C themselves); otherwise a Ctrl-C ends a
** non-interactive run at once. */
extern volatile sig_atomic_t shell_busy;

/* ---- main.c */
/* Report an error on stderr ("Error: ...", with the script line if any)
** and count it. Returns 1 so callers can `return shell_error(...)`. */
int shell_error(Shell *p, const char *zFmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Read and run SQL and dot-commands from `in` until EOF, .quit or (when
** bBail) the first error. Returns 0, or 1 if an error stopped it, or 2
** after .quit. */
int shell_process(Shell *p, FILE *in, const char *zName, int bBail);
/* Open database zPath (creating it if missing), register the module and
** attach every store table. Returns 1 after reporting an error. */
int shell_open(Shell *p, const char *zPath);
int shell_reconnect(Shell *p);
/* on/1/yes or off/0/no into *pb; anything else is an error (1). */
int shell_parse_bool(Shell *p, const char *z, int *pb);
/* Save the heat counters, close the database and the store. */
void shell_close(Shell *p);
/* Run one line of input: a dot-command or complete SQL text. */
int shell_run_text(Shell *p, const char *zText);

/* ---- output.c */
/* Run every statement of zSql, printing rows in the current mode.
** Returns 0 or 1 (the error was reported). */
int shell_exec(Shell *p, const char *zSql);
/* Run zSql and print its rows in mode eMode with headers on, without
** changing the shell's settings. */
int shell_exec_mode(Shell *p, const char *zSql, int eMode);
/* z past SQL white space and comments (-- to the end of the line, and
** closed slash-star comments; an unclosed one is where it stops). */
const char *shell_skip_space(const char *z);
/* Parse a mode name; -1 if unknown. */
int shell_mode_parse(const char *z);
const char *shell_mode_name(int eMode);
/* Write n bytes as a CSV field (quoted when needed) to out. */
void shell_csv_field(FILE *out, const void *p, size_t n, int bQuoteEmpty);
/* Append p[0..n-1] to pBuf as a JSON string literal (with quotes). */
int shell_json_string(wcs_buf *pBuf, const void *p, size_t n);
/* Display width of UTF-8 text z[0..n-1] in terminal columns: wide
** characters count two, combining marks none, a byte that is not UTF-8
** one. */
int shell_display_width(const char *z, size_t n);
/* 1 if p[0..n-1] is valid UTF-8 without control characters other than
** tab, newline and carriage return. */
int shell_is_text(const void *p, size_t n);

/* ---- commands.c */
/* Run a dot-command line (starting with '.'). Returns 0, 1 on error, 2 to
** quit. */
int shell_dot(Shell *p, const char *zLine);
/* ---- explain.c */
/* Print the plan of zSql in words with key ranges (the .explain command). */
int shell_explain(Shell *p, const char *zSql);

/* ---- store.c */
/* The engine of the database's default store (DB.wcs/), opened on first
** use and kept until shell_close_store(). *ppEng is NULL (and 0 returned)
** when the database has no store on disk and bCreate is 0. Returns 1 after
** reporting an error. */
int shell_engine(Shell *p, int bCreate, wcs_engine **ppEng);
void shell_close_store(Shell *p);
/* Create a virtual table for every store table that has none. */
int shell_attach_all(Shell *p);
/* Name the store table behind SQL table zName: *pzTable (malloc'd) and
** whether it is a HISTORY view. Returns 0 with *pzTable NULL if zName is
** not a wcs virtual table. */
int shell_store_table(Shell *p, const char *zName, char **pzTable,
                      int *pbHistory);
/* If zName names a table or view of the main database that is not a wcs
** table, what it is ("a plain SQLite table", "a view", "a virtual table
** of another module"; static text), else NULL. */
const char *shell_other_table(Shell *p, const char *zName);
/* The engine of the store behind SQL table zName (its STORE clause, or
** the default store, created if bCreate), the store table's name
** (malloc'd; NULL if zName is not a wcs table) and whether it is a HISTORY
** view. *ppEng may be NULL when there is no store. Returns 1 after
** reporting an error. */
int shell_table_store(Shell *p, const char *zName, int bCreate,
                      wcs_engine **ppEng, char **pzTable, int *pbHistory);
/* Open store table zTable (SQL name or store name) for direct access.
** Returns 1 after reporting an error (including "no such table"). */
int shell_open_table(Shell *p, const char *zName, wcs_table **ppTab);
int shell_schema(Shell *p, const char *zTable);
int shell_stats(Shell *p, const char *zTable);
int shell_compact(Shell *p, const char *zTable);
/* Copy the database to zFile (VACUUM INTO) and its store, if it has one,
** to zFile.wcs (wcs_engine_backup): a database of its own. */
int shell_backup(Shell *p, const char *zFile);
/* Remove a directory tree (or a file); errors are ignored. */
void shell_rmrf(const char *zPath);
/* Write the CREATE VIRTUAL TABLE statement for a store table: its schema
** text, then zSettings (STORE, SYNC, CACHE clauses, or NULL). A history
** view (bHistory) or an attachment (bAttach: declared without KEY and
** FAMILY, so it does not define the store table) names the store table
** alone, as it was declared. */
char *shell_table_ddl(const char *zSqlName, const char *zStoreName,
                      const char *zSchemaText, const char *zSettings,
                      int bHistory, int bAttach);
/* SQL identifier quoting ("a""b"), malloc'd. */
char *shell_quote_ident(const char *z);

/* ---- import.c */
/* .import FILE TABLE [name=value ...] */
int shell_import(Shell *p, const char *zFile, const char *zTable, int nOpt,
                 char **azOpt);
/* .export TABLE FILE [format] [name=value ...] */
int shell_export(Shell *p, const char *zTable, const char *zFile, int nOpt,
                 char **azOpt);

/* ---- keyviz.c */
/* .keyviz TABLE FILE.svg [buckets=N] */
int shell_keyviz(Shell *p, const char *zTable, const char *zFile, int nOpt,
                 char **azOpt);

/* ---- demo.c */
/* `wcs demo [DB]`: build the demo tables, run the tour. */
int shell_demo(Shell *p);
/* Remove the demo's temporary directory, if any (after the database and
** store are closed). */
void shell_demo_cleanup(Shell *p);

#endif /* WCS_SHELL_H */
