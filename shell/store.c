/*
** store.c — the store behind the shell's database, through the engine's
** C API (include/wcs.h, "Tables"): attaching store tables as virtual
** tables, canonical schemas for .schema, .stats and .compact.
**
** Which store: a database file DB keeps its default store in the
** directory DB.wcs/ (DESIGN.md §3), named from sqlite3_db_filename() as the
** module names it, so wcs_engine_open_path() hands the shell the very
** engine the module's tables use (opens of one path share one engine).
** In-memory and temporary databases keep their tables in the module's
** in-memory store, which wcs_sqlite_engine() hands over.
**
** Which store table a virtual table shows: the module arguments of its
** CREATE VIRTUAL TABLE text (sqlite_schema.sql) are parsed with the
** keyschema grammar (ks_parse_text); TABLE 'x' names the store table,
** otherwise it is the virtual table's own name; HISTORY marks the history
** view.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyschema/schema.h"
#include "shell/shell.h"

char *shell_quote_ident(const char *z) {
  size_t n = strlen(z), i, j = 0;
  char *zOut = malloc(n * 2 + 3);
  if (!zOut) return 0;
  zOut[j++] = '"';
  for (i = 0; i < n; i++) {
    if (z[i] == '"') zOut[j++] = '"';
    zOut[j++] = z[i];
  }
  zOut[j++] = '"';
  zOut[j] = 0;
  return zOut;
}

/* SQL string literal quoting ('a''b'), malloc'd. */
static char *quote_literal(const char *z) {
  size_t n = strlen(z), i, j = 0;
  char *zOut = malloc(n * 2 + 3);
  if (!zOut) return 0;
  zOut[j++] = '\'';
  for (i = 0; i < n; i++) {
    if (z[i] == '\'') zOut[j++] = '\'';
    zOut[j++] = z[i];
  }
  zOut[j++] = '\'';
  zOut[j] = 0;
  return zOut;
}

/* The store read beside a process that writes it, or without taking its
** lock (a follower, kept up with its commits): the follower opened before
** while it is current, else a new one (wcs_engine_open_reader with
** bReader, else wcs_engine_open_shared, which opens the store itself once
** no other process holds it). *ppEng is set when the open's code is
** WCS_OK. */
static int open_follower(Shell *p, int bReader, wcs_engine **ppEng,
                         char **pzErr) {
  int bReopen = 1, bFollow = 0, rc;
  if (p->pFollow && wcs_engine_follow(p->pFollow, &bReopen) == WCS_OK &&
      !bReopen) {
    *ppEng = p->pFollow;
    return WCS_OK;
  }
  wcs_engine_close(p->pFollow);
  p->pFollow = 0;
  rc = bReader
           ? wcs_engine_open_reader(&p->pEng, p->zStore, 0, &bFollow, pzErr)
           : wcs_engine_open_shared(&p->pEng, p->zStore, 0, &bFollow, pzErr);
  if (rc == WCS_OK && bFollow) {
    p->pFollow = p->pEng;
    p->pEng = 0;
  }
  if (rc == WCS_OK) *ppEng = bFollow ? p->pFollow : p->pEng;
  return rc;
}

int shell_engine(Shell *p, int bCreate, wcs_engine **ppEng) {
  const char *zFile;
  char *zErr = 0;
  struct stat st;
  int rc;

  *ppEng = 0;
  if (p->pEng) {
    *ppEng = p->pEng;
    return 0;
  }
  zFile = sqlite3_db_filename(p->db, "main");
  if (!zFile || !zFile[0]) {
    /* :memory: or a temporary database: the module's in-memory store,
    ** once a table made it (it belongs to the connection: not kept in
    ** p->pEng, which shell_close_store closes) */
    *ppEng = wcs_sqlite_engine(p->db, "main");
    return 0;
  }
  if (!p->zStore) {
    p->zStore = malloc(strlen(zFile) + 5);
    if (!p->zStore) return shell_error(p, "out of memory");
    sprintf(p->zStore, "%s.wcs", zFile);
  }
  if (!bCreate && stat(p->zStore, &st) != 0) return 0;
  if (sqlite3_db_readonly(p->db, "main") == 1 ||
      (!bCreate && access(p->zStore, W_OK) != 0)) {
    /* a read-only database, or a store this user may not write: read it
    ** as the module's tables do, without taking its lock; writes through
    ** it say the store is read-only */
    rc = open_follower(p, 1, ppEng, &zErr);
  } else {
    rc = wcs_engine_open_path(&p->pEng, p->zStore, 0, &zErr);
    if (rc == WCS_OK) {
      wcs_engine_close(p->pFollow); /* the other process has gone */
      p->pFollow = 0;
      *ppEng = p->pEng;
    } else if (rc == WCS_BUSY) {
      /* another process writes the store: read it beside that process, as
      ** the module's tables do (doc/sql.md, "Another process"), kept up
      ** with its commits; writes through it say the store is read-only */
      p->pEng = 0;
      wcs_free(zErr);
      zErr = 0;
      rc = open_follower(p, 0, ppEng, &zErr);
    }
  }
  if (rc != WCS_OK) {
    shell_error(p, "cannot open the store %s: %s", p->zStore,
                zErr ? zErr : wcs_errstr(rc));
    wcs_free(zErr);
    p->pEng = 0;
    *ppEng = 0;
    return 1;
  }
  return 0;
}

void shell_close_store(Shell *p) {
  int i;
  for (i = 0; i < p->nExtra; i++) {
    wcs_engine_close(p->apExtra[i]);
    free(p->azExtra[i]);
  }
  p->nExtra = 0;
  if (p->pEng) wcs_engine_close(p->pEng);
  p->pEng = 0;
  wcs_engine_close(p->pFollow);
  p->pFollow = 0;
  free(p->zStore);
  p->zStore = 0;
}

/* 1 if c can be part of a bare SQL name (as SQLite's tokenizer sees it:
** letters, digits, _, $ and every byte of a UTF-8 sequence). */
static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         (unsigned char)c >= 0x80;
}

const char *shell_skip_space(const char *z) {
  for (;;) {
    if (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r' || *z == '\f') {
      z++;
    } else if (z[0] == '-' && z[1] == '-') {
      while (*z && *z != '\n')
        z++;
    } else if (z[0] == '/' && z[1] == '*') {
      const char *zEnd = strstr(z + 2, "*/");
      if (zEnd == NULL) return z; /* unclosed: text still to come */
      z = zEnd + 2;
    } else {
      return z;
    }
  }
}

/* If z starts with keyword zWord (any case) as a whole token, the text
** after it and the space that follows; else NULL. */
static const char *skip_word(const char *z, const char *zWord) {
  size_t n = strlen(zWord);
  if (sqlite3_strnicmp(z, zWord, (int)n) != 0 || is_name_char(z[n])) return 0;
  return shell_skip_space(z + n);
}

/* The end of the name token at z: bare, or quoted as "x", 'x', `x` (the
** quote doubled inside) or [x]. NULL if z holds no name. */
static const char *skip_name(const char *z) {
  if (*z == '"' || *z == '\'' || *z == '`') {
    char q = *z++;
    for (; *z; z++) {
      if (*z == q && z[1] == q) {
        z++;
      } else if (*z == q) {
        return z + 1;
      }
    }
    return 0;
  }
  if (*z == '[') {
    const char *zEnd = strchr(z, ']');
    return zEnd ? zEnd + 1 : 0;
  }
  if (!is_name_char(*z)) return 0;
  while (is_name_char(*z))
    z++;
  return z;
}

/* If zSql is "CREATE VIRTUAL TABLE [IF NOT EXISTS] [schema.]name USING
** wcs[(ARGS)]", return ARGS (malloc'd; "" without arguments), else NULL.
** Tokens may be separated by any SQL whitespace and comments, as SQLite
** reads them; the module name may be quoted. */
static char *wcs_module_args(const char *zSql) {
  const char *z, *zEnd, *zOpen, *zClose;
  char *zArgs;
  if (!zSql) return 0;
  z = shell_skip_space(zSql);
  if (!(z = skip_word(z, "CREATE")) || !(z = skip_word(z, "VIRTUAL")) ||
      !(z = skip_word(z, "TABLE"))) {
    return 0;
  }
  if (skip_word(z, "IF")) {
    const char *zIf = skip_word(z, "IF");
    if ((zIf = skip_word(zIf, "NOT")) != 0 &&
        (zIf = skip_word(zIf, "EXISTS")) != 0) {
      z = zIf;
    }
  }
  if (!(zEnd = skip_name(z))) return 0;
  z = shell_skip_space(zEnd);
  if (*z == '.') {
    if (!(zEnd = skip_name(shell_skip_space(z + 1)))) return 0;
    z = shell_skip_space(zEnd);
  }
  if (!(z = skip_word(z, "USING")) || !(zEnd = skip_name(z))) return 0;
  if (!((zEnd - z == 3 && sqlite3_strnicmp(z, "wcs", 3) == 0) ||
        (zEnd - z == 5 && !is_name_char(z[0]) &&
         sqlite3_strnicmp(z + 1, "wcs", 3) == 0))) {
    return 0;
  }
  z = shell_skip_space(zEnd);
  if (*z == 0 || *z == ';') return strdup(""); /* USING wcs, no arguments */
  if (*z != '(') return 0;
  zOpen = z + 1;
  zClose = strrchr(zOpen, ')');
  if (!zClose) return 0;
  zArgs = malloc((size_t)(zClose - zOpen) + 1);
  if (!zArgs) return 0;
  memcpy(zArgs, zOpen, (size_t)(zClose - zOpen));
  zArgs[zClose - zOpen] = 0;
  return zArgs;
}

/* The store table name and history flag of a wcs virtual table whose
** schema SQL is zSql and SQL name zName, (if pzStore is not NULL) its
** STORE clause or NULL, and (if pzSettings is not NULL) its STORE, SYNC
** and CACHE clauses as one text, malloc'd ("" for none, NULL if it does
** not parse). Returns 1 if it is one. */
static int vtab_target_settings(const char *zName, const char *zSql,
                                char **pzTable, int *pbHistory, char **pzStore,
                                char **pzSettings, int *pbAttach) {
  char *zArgs = wcs_module_args(zSql);
  ks_schema *pSchema = 0;
  char *zErr = 0;
  *pzTable = 0;
  *pbHistory = 0;
  if (pzStore) *pzStore = 0;
  if (pzSettings) *pzSettings = 0;
  if (pbAttach) *pbAttach = 1; /* no clauses at all: attaches */
  if (!zArgs) return 0;
  if (zArgs[0] && ks_parse_text(zArgs, &pSchema, &zErr) == WCS_OK) {
    if (pSchema->zTable) *pzTable = strdup(pSchema->zTable);
    *pbHistory = pSchema->bHistory;
    if (pbAttach) *pbAttach = pSchema->nField == 0 && pSchema->nFamily == 0;
    if (pzStore && pSchema->zStore) *pzStore = strdup(pSchema->zStore);
    if (pzSettings) ks_schema_settings_text(pSchema, pzSettings);
  }
  if (!*pzTable) *pzTable = strdup(zName);
  ks_schema_free(pSchema);
  free(zErr);
  free(zArgs);
  return *pzTable != 0;
}

/* vtab_target_settings() without the settings. */
static int vtab_target(const char *zName, const char *zSql, char **pzTable,
                       int *pbHistory, char **pzStore) {
  return vtab_target_settings(zName, zSql, pzTable, pbHistory, pzStore, 0, 0);
}

/* The engine of the store named by a STORE clause, resolved as the module
** resolves it (absolute; else relative to the database file's directory;
** else to the current directory), opened on first use and kept until
** shell_close_store(). */
static int store_engine(Shell *p, const char *zStore, wcs_engine **ppEng) {
  const char *zFile = sqlite3_db_filename(p->db, "main");
  char *zPath;
  char *zErr = 0;
  int i, rc;
  *ppEng = 0;
  if (strcmp(zStore, ":memory:") == 0) {
    return shell_error(p, "the table's store is in memory (STORE ':memory:') "
                          "and only its own connection can reach it");
  }
  if (zStore[0] == '/') {
    zPath = sqlite3_mprintf("%s", zStore);
  } else if (zFile && zFile[0]) {
    const char *zSlash = strrchr(zFile, '/');
    zPath = sqlite3_mprintf("%.*s/%s", zSlash ? (int)(zSlash - zFile) : 1,
                            zSlash ? zFile : ".", zStore);
  } else {
    zPath = sqlite3_mprintf("%s", zStore);
  }
  if (!zPath) return shell_error(p, "out of memory");
  for (i = 0; i < p->nExtra; i++) {
    if (strcmp(p->azExtra[i], zPath) == 0) {
      *ppEng = p->apExtra[i];
      sqlite3_free(zPath);
      return 0;
    }
  }
  if (p->nExtra == SHELL_MAX_STORES) {
    sqlite3_free(zPath);
    return shell_error(p, "more than %d stores in one session",
                       SHELL_MAX_STORES);
  }
  rc = wcs_engine_open_path(ppEng, zPath, 0, &zErr);
  if (rc != WCS_OK) {
    shell_error(p, "cannot open the store %s: %s", zPath,
                zErr ? zErr : wcs_errstr(rc));
    wcs_free(zErr);
    sqlite3_free(zPath);
    *ppEng = 0;
    return 1;
  }
  p->apExtra[p->nExtra] = *ppEng;
  p->azExtra[p->nExtra] = strdup(zPath);
  p->nExtra++;
  sqlite3_free(zPath);
  return 0;
}

/* Look zName up in sqlite_schema and, if it is a wcs virtual table, set
** *pzTable, *pbHistory and (pzStore not NULL) *pzStore from its
** declaration. Returns nonzero after reporting a failed lookup. */
static int schema_target(Shell *p, const char *zName, char **pzTable,
                         int *pbHistory, char **pzStore) {
  sqlite3_stmt *pStmt = 0;
  int rc;
  *pzTable = 0;
  *pbHistory = 0;
  rc = sqlite3_prepare_v2(p->db,
                          "SELECT name, sql FROM sqlite_schema "
                          "WHERE type='table' AND name=?1 COLLATE NOCASE",
                          -1, &pStmt, 0);
  if (rc != SQLITE_OK) return shell_error(p, "%s", sqlite3_errmsg(p->db));
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    vtab_target((const char *)sqlite3_column_text(pStmt, 0),
                (const char *)sqlite3_column_text(pStmt, 1), pzTable, pbHistory,
                pzStore);
  }
  sqlite3_finalize(pStmt);
  return 0;
}

int shell_table_store(Shell *p, const char *zName, int bCreate,
                      wcs_engine **ppEng, char **pzTable, int *pbHistory) {
  char *zStore = 0;
  int rc;
  *ppEng = 0;
  if (schema_target(p, zName, pzTable, pbHistory, &zStore)) return 1;
  rc =
      zStore ? store_engine(p, zStore, ppEng) : shell_engine(p, bCreate, ppEng);
  free(zStore);
  if (rc) {
    free(*pzTable);
    *pzTable = 0;
  }
  return rc;
}

const char *shell_other_table(Shell *p, const char *zName) {
  sqlite3_stmt *pStmt = 0;
  const char *zKind = 0;
  if (sqlite3_prepare_v2(p->db,
                         "SELECT type, sql FROM sqlite_schema "
                         "WHERE type IN ('table','view') "
                         "AND name=?1 COLLATE NOCASE",
                         -1, &pStmt, 0) != SQLITE_OK) {
    return 0;
  }
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zType = (const char *)sqlite3_column_text(pStmt, 0);
    const char *zSql = (const char *)sqlite3_column_text(pStmt, 1);
    char *zArgs = wcs_module_args(zSql);
    if (zArgs) {
      free(zArgs);
    } else if (zType && strcmp(zType, "view") == 0) {
      zKind = "a view";
    } else if (zSql && skip_word(shell_skip_space(zSql), "CREATE") &&
               skip_word(skip_word(shell_skip_space(zSql), "CREATE"),
                         "VIRTUAL")) {
      zKind = "a virtual table of another module";
    } else {
      zKind = "a plain SQLite table";
    }
  }
  sqlite3_finalize(pStmt);
  return zKind;
}

int shell_store_table(Shell *p, const char *zName, char **pzTable,
                      int *pbHistory) {
  return schema_target(p, zName, pzTable, pbHistory, 0);
}

int shell_open_table(Shell *p, const char *zName, wcs_table **ppTab) {
  wcs_engine *pEng = 0;
  char *zStoreName = 0;
  int bHistory = 0, rc;
  *ppTab = 0;
  if (shell_table_store(p, zName, 0, &pEng, &zStoreName, &bHistory)) return 1;
  if (!pEng) {
    free(zStoreName);
    return shell_error(p, "no such wcs table: %s (the database has no store)",
                       zName);
  }
  rc = wcs_table_open(pEng, zStoreName ? zStoreName : zName, ppTab);
  if (rc != WCS_OK) {
    shell_error(p, "cannot open table %s: %s", zName, wcs_engine_errmsg(pEng));
  } else if (!*ppTab) {
    shell_error(p, "no such wcs table: %s", zName);
    rc = WCS_ERROR;
  }
  free(zStoreName);
  return rc == WCS_OK ? 0 : 1;
}

/* ---- attaching store tables */

typedef struct AttachCtx {
  Shell *p;
  char **azHave; /* store tables some virtual table already shows */
  int nHave;
  char **azNew; /* store tables to attach */
  int nNew;
} AttachCtx;

static int collect_table(void *pCtx, const char *zName, const char *zSchema) {
  AttachCtx *c = pCtx;
  int i;
  char **a;
  (void)zSchema;
  for (i = 0; i < c->nHave; i++) {
    if (strcmp(c->azHave[i], zName) == 0) return 0;
  }
  a = realloc(c->azNew, sizeof(char *) * (size_t)(c->nNew + 1));
  if (!a) return WCS_NOMEM;
  c->azNew = a;
  c->azNew[c->nNew] = strdup(zName);
  if (!c->azNew[c->nNew]) return WCS_NOMEM;
  c->nNew++;
  return 0;
}

int shell_attach_all(Shell *p) {
  wcs_engine *pEng = 0;
  AttachCtx c;
  sqlite3_stmt *pStmt = 0;
  int i, rc = 0;

  if (shell_engine(p, 0, &pEng)) return 1;
  if (!pEng) return 0;
  memset(&c, 0, sizeof(c));
  c.p = p;
  if (sqlite3_prepare_v2(p->db,
                         "SELECT name, sql FROM sqlite_schema WHERE "
                         "type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%'",
                         -1, &pStmt, 0) != SQLITE_OK) {
    return shell_error(p, "%s", sqlite3_errmsg(p->db));
  }
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
    char *zTable = 0;
    int bHistory;
    char *zStore = 0;
    if (vtab_target((const char *)sqlite3_column_text(pStmt, 0),
                    (const char *)sqlite3_column_text(pStmt, 1), &zTable,
                    &bHistory, &zStore)) {
      char **a;
      if (zStore) { /* another store: its tables are not ours to attach */
        free(zStore);
        free(zTable);
        continue;
      }
      if (bHistory) { /* a history view does not show the table itself */
        free(zTable);
        continue;
      }
      a = realloc(c.azHave, sizeof(char *) * (size_t)(c.nHave + 1));
      if (!a) {
        free(zTable);
        break;
      }
      c.azHave = a;
      c.azHave[c.nHave++] = zTable;
    }
  }
  sqlite3_finalize(pStmt);
  if (wcs_table_list(pEng, &c, collect_table) != WCS_OK) {
    rc = shell_error(p, "cannot list the store's tables: %s",
                     wcs_engine_errmsg(pEng));
  }
  for (i = 0; i < c.nNew && rc == 0; i++) {
    char *zId = shell_quote_ident(c.azNew[i]);
    char *zLit = quote_literal(c.azNew[i]);
    char *zSql = sqlite3_mprintf(
        "SELECT 1 FROM sqlite_schema WHERE name=%s COLLATE NOCASE", zLit);
    int bTaken = 0;
    if (zSql && sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0) == SQLITE_OK) {
      bTaken = sqlite3_step(pStmt) == SQLITE_ROW;
      sqlite3_finalize(pStmt);
    }
    sqlite3_free(zSql);
    if (bTaken) {
      fprintf(stderr,
              "warning: store table %s is not attached: the name is taken "
              "in the database\n",
              c.azNew[i]);
    } else {
      zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE %s USING wcs(TABLE %s)", zId,
                             zLit);
      if (zSql && sqlite3_exec(p->db, zSql, 0, 0, 0) != SQLITE_OK) {
        fprintf(stderr, "warning: cannot attach store table %s: %s\n",
                c.azNew[i], sqlite3_errmsg(p->db));
      }
      sqlite3_free(zSql);
    }
    free(zId);
    free(zLit);
  }
  for (i = 0; i < c.nHave; i++)
    free(c.azHave[i]);
  for (i = 0; i < c.nNew; i++)
    free(c.azNew[i]);
  free(c.azHave);
  free(c.azNew);
  return rc;
}

/* ---- .schema */

/* Split canonical schema text into top-level clauses (commas outside
** parentheses and quotes), appending "  clause" lines to pOut. */
static void append_clauses(wcs_buf *pOut, const char *z, int *pnClause) {
  int depth = 0;
  char q = 0;
  const char *zStart = z;
  for (;; z++) {
    if (q) {
      if (*z == q) q = 0;
      if (*z) continue;
    }
    if (*z == '\'' || *z == '"' || *z == '`') {
      q = *z;
    } else if (*z == '(') {
      depth++;
    } else if (*z == ')') {
      depth--;
    } else if ((*z == ',' && depth == 0) || *z == 0) {
      const char *zEnd = z;
      while (*zStart == ' ' || *zStart == '\n')
        zStart++;
      while (zEnd > zStart && (zEnd[-1] == ' ' || zEnd[-1] == '\n'))
        zEnd--;
      if (zEnd > zStart) {
        if (*pnClause) wcs_buf_append(pOut, ",\n", 2);
        wcs_buf_append(pOut, "  ", 2);
        wcs_buf_append(pOut, zStart, (size_t)(zEnd - zStart));
        (*pnClause)++;
      }
      zStart = z + 1;
      if (*z == 0) break;
    }
  }
}

char *shell_table_ddl(const char *zSqlName, const char *zStoreName,
                      const char *zSchemaText, const char *zSettings,
                      int bHistory, int bAttach) {
  wcs_buf b = {0, 0, 0};
  char *zId = shell_quote_ident(zSqlName);
  char *zLit = quote_literal(zStoreName);
  char *zOut = 0;
  int nClause = 0;
  int bPlain = sqlite3_stricmp(zSqlName, zStoreName) == 0;
  if (!zId || !zLit) goto done;
  /* Quote the name only when it needs it. */
  {
    const char *z = zSqlName;
    int bSimple =
        (*z >= 'a' && *z <= 'z') || (*z >= 'A' && *z <= 'Z') || *z == '_';
    for (; *z && bSimple; z++) {
      bSimple = (*z >= 'a' && *z <= 'z') || (*z >= 'A' && *z <= 'Z') ||
                (*z >= '0' && *z <= '9') || *z == '_';
    }
    wcs_buf_append(&b, "CREATE VIRTUAL TABLE ", 21);
    if (bSimple)
      wcs_buf_append(&b, zSqlName, strlen(zSqlName));
    else
      wcs_buf_append(&b, zId, strlen(zId));
  }
  if (bHistory || bAttach) {
    wcs_buf_append(&b, " USING wcs(TABLE ", 17);
    wcs_buf_append(&b, zLit, strlen(zLit));
    if (zSettings && zSettings[0]) {
      wcs_buf_append(&b, ", ", 2);
      wcs_buf_append(&b, zSettings, strlen(zSettings));
    }
    wcs_buf_append(&b, bHistory ? ", HISTORY);" : ");", bHistory ? 11 : 2);
  } else {
    wcs_buf_append(&b, " USING wcs(\n", 12);
    append_clauses(&b, zSchemaText ? zSchemaText : "", &nClause);
    if (!bPlain || (nClause == 0 && !(zSettings && zSettings[0]))) {
      /* (a table of no clauses at all, made by the C API: its name) */
      if (nClause++) wcs_buf_append(&b, ",\n", 2);
      wcs_buf_append(&b, "  TABLE ", 8);
      wcs_buf_append(&b, zLit, strlen(zLit));
    }
    append_clauses(&b, zSettings ? zSettings : "", &nClause);
    wcs_buf_append(&b, "\n);", 3);
  }
  if (wcs_buf_append(&b, "", 1) == WCS_OK) {
    zOut = (char *)b.a;
    b.a = 0;
  }
done:
  wcs_buf_free(&b);
  free(zId);
  free(zLit);
  return zOut;
}

/* .schema: the statements in two passes, so that a paste of them runs:
** first every table that defines its store table (and SQLite's own
** objects), then the attachments and history views, which need the store
** table made. */
int shell_schema(Shell *p, const char *zTable) {
  sqlite3_stmt *pStmt = 0;
  int rc = 0, nFound = 0, iPass;
  if (sqlite3_prepare_v2(
          p->db,
          "SELECT name, type, sql FROM sqlite_schema WHERE sql IS NOT NULL "
          "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND (?1 IS NULL OR "
          "name LIKE ?1 OR tbl_name LIKE ?1) "
          /* a table's commit clock: its CREATE VIRTUAL TABLE makes it */
          "AND name NOT IN (SELECT name FROM pragma_table_list "
          "WHERE schema = 'main' AND type = 'shadow') "
          "ORDER BY tbl_name, type DESC, name",
          -1, &pStmt, 0) != SQLITE_OK) {
    return shell_error(p, "%s", sqlite3_errmsg(p->db));
  }
  if (zTable) sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  for (iPass = 0; iPass < 2; iPass++) {
    while (sqlite3_step(pStmt) == SQLITE_ROW) {
      const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
      const char *zSql = (const char *)sqlite3_column_text(pStmt, 2);
      char *zStoreName = 0, *zSettings = 0;
      int bHistory = 0, bAttach = 0;
      int bWcs = vtab_target_settings(zName, zSql, &zStoreName, &bHistory, 0,
                                      &zSettings, &bAttach);
      if (iPass != (bWcs && (bHistory || bAttach))) {
        free(zStoreName);
        free(zSettings);
        continue;
      }
      nFound++;
      if (bWcs) {
        wcs_table *pTab = 0;
        wcs_engine *pEng = 0;
        char *zDdl = 0, *zIgnore = 0;
        int bIgnore;
        if (shell_table_store(p, zName, 0, &pEng, &zIgnore, &bIgnore) == 0 &&
            pEng && wcs_table_open(pEng, zStoreName, &pTab) == WCS_OK && pTab) {
          zDdl = shell_table_ddl(zName, zStoreName, wcs_table_schema_text(pTab),
                                 zSettings, bHistory, bAttach);
          wcs_table_close(pTab);
        }
        free(zIgnore);
        if (zDdl) {
          fprintf(p->out, "%s\n", zDdl);
          free(zDdl);
        } else {
          /* Not in the store (yet): what the database says. */
          fprintf(p->out, "%s;\n", zSql);
        }
        free(zStoreName);
      } else {
        fprintf(p->out, "%s;\n", zSql);
      }
      free(zSettings);
    }
    sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  if (zTable && nFound == 0) rc = shell_error(p, "no such table: %s", zTable);
  return rc;
}

/* ---- .stats */

static void human_bytes(char *zBuf, size_t nBuf, double n) {
  const char *azUnit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (n >= 1024 && i < 4) {
    n /= 1024;
    i++;
  }
  if (i == 0)
    snprintf(zBuf, nBuf, "%.0f B", n);
  else
    snprintf(zBuf, nBuf, "%.1f %s", n, azUnit[i]);
}

typedef struct StatsCtx {
  Shell *p;
  wcs_engine *pEng;
  const char *zOnly; /* store table to show, or NULL for all */
  int nShown;
} StatsCtx;

/* A GC age in microseconds as the DDL writes it: in the largest unit of
** days, hours, minutes, seconds or milliseconds it is a whole number of,
** else in microseconds. */
static void format_age(char *z, size_t n, int64_t iMicros) {
  static const struct {
    int64_t iUnit;
    const char *zUnit;
  } a[] = {{86400000000LL, "d"},
           {3600000000LL, "h"},
           {60000000LL, "m"},
           {1000000LL, "s"},
           {1000LL, "ms"}};
  int i;
  for (i = 0; i < (int)(sizeof(a) / sizeof(a[0])); i++) {
    if (iMicros % a[i].iUnit == 0) {
      snprintf(z, n, "%lld%s", (long long)(iMicros / a[i].iUnit),
               a[i].zUnit);
      return;
    }
  }
  snprintf(z, n, "%lldus", (long long)iMicros);
}

static int stats_table(void *pCtx, const char *zName, const char *zSchema) {
  StatsCtx *c = pCtx;
  wcs_table *pTab = 0;
  uint64_t nRows = 0;
  int i, nFam;
  (void)zSchema;
  if (c->zOnly && strcmp(c->zOnly, zName) != 0) return 0;
  if (wcs_table_open(c->pEng, zName, &pTab) != WCS_OK || !pTab) return 0;
  if (c->nShown == 0) {
    fprintf(c->p->out, "%-24s %14s  %s\n", "table", "rows (est.)",
            "families (GC policy)");
  }
  wcs_table_estimate_rows(pTab, 0, 0, &nRows);
  fprintf(c->p->out, "%-24s %14llu  ", zName, (unsigned long long)nRows);
  nFam = wcs_table_family_count(pTab);
  for (i = 0; i < nFam; i++) {
    wcs_family_info fi;
    if (wcs_table_family(pTab, i, &fi) != WCS_OK) continue;
    fprintf(c->p->out, "%s%s", i ? ", " : "", fi.zName);
    if (fi.nMaxVersions && fi.iMaxAge) {
      char zAge[32];
      format_age(zAge, sizeof(zAge), fi.iMaxAge);
      fprintf(c->p->out, " (max %d versions %s max age %s)", fi.nMaxVersions,
              fi.bIntersection ? "and" : "or", zAge);
    } else if (fi.nMaxVersions) {
      fprintf(c->p->out, " (max %d versions)", fi.nMaxVersions);
    } else if (fi.iMaxAge) {
      char zAge[32];
      format_age(zAge, sizeof(zAge), fi.iMaxAge);
      fprintf(c->p->out, " (max age %s)", zAge);
    }
    if (fi.eAggregate) {
      static const char *const azAgg[] = {"", "SUM", "MIN", "MAX", "HLL"};
      fprintf(c->p->out, " (aggregate %s)",
              fi.eAggregate >= 1 && fi.eAggregate <= 4 ? azAgg[fi.eAggregate]
                                                       : "?");
    }
  }
  fputc('\n', c->p->out);
  wcs_table_close(pTab);
  c->nShown++;
  return 0;
}

/* Evaluate a JSON path of zJson with SQLite's JSON functions. */
static sqlite3_int64 json_int(Shell *p, const char *zJson, const char *zPath) {
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 v = 0;
  if (sqlite3_prepare_v2(p->db, "SELECT json_extract(?1, ?2)", -1, &pStmt, 0) ==
      SQLITE_OK) {
    sqlite3_bind_text(pStmt, 1, zJson, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zPath, -1, SQLITE_STATIC);
    if (sqlite3_step(pStmt) == SQLITE_ROW) v = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return v;
}

int shell_stats(Shell *p, const char *zTable) {
  wcs_engine *pEng = 0;
  char *zJson = 0;
  char *zStoreName = 0;
  sqlite3_stmt *pStmt = 0;
  StatsCtx c;
  int bHistory = 0, rc;
  sqlite3_int64 nRaw, nStored, nFiles = 0, nBytes = 0;
  char zA[32], zB[32];

  if (zTable) {
    if (shell_table_store(p, zTable, 0, &pEng, &zStoreName, &bHistory)) {
      return 1;
    }
    if (!zStoreName) zStoreName = strdup(zTable);
  } else if (shell_engine(p, 0, &pEng)) {
    return 1;
  }
  if (!pEng) {
    free(zStoreName);
    return shell_error(p, "the database has no store (%s)",
                       p->zStore ? p->zStore
                                 : "in-memory database: its store is made "
                                   "with its first wcs table");
  }
  if (zStoreName) {
    /* a missing table is an error before anything is printed */
    wcs_table *pTab = 0;
    wcs_table_open(pEng, zStoreName, &pTab);
    if (!pTab) {
      free(zStoreName);
      return shell_error(p, "no such wcs table: %s", zTable);
    }
    wcs_table_close(pTab);
  }
  rc = wcs_db_stats(wcs_engine_db(pEng), &zJson);
  if (rc != WCS_OK) {
    free(zStoreName);
    return shell_error(p, "cannot read the store statistics: %s",
                       wcs_errmsg(wcs_engine_db(pEng)));
  }
  {
    const char *zPath = p->zStore;
    int i;
    for (i = 0; i < p->nExtra; i++) {
      if (p->apExtra[i] == pEng) zPath = p->azExtra[i];
    }
    fprintf(p->out, "store %s\n", zPath ? zPath : "(in memory)");
  }
  fprintf(p->out, "  %-6s %6s %12s\n", "level", "files", "bytes");
  if (sqlite3_prepare_v2(p->db,
                         "SELECT json_extract(value,'$.level'), "
                         "json_extract(value,'$.files'), "
                         "json_extract(value,'$.bytes') "
                         "FROM json_each(?1, '$.levels')",
                         -1, &pStmt, 0) == SQLITE_OK) {
    sqlite3_bind_text(pStmt, 1, zJson, -1, SQLITE_STATIC);
    while (sqlite3_step(pStmt) == SQLITE_ROW) {
      sqlite3_int64 nF = sqlite3_column_int64(pStmt, 1);
      sqlite3_int64 nB = sqlite3_column_int64(pStmt, 2);
      if (nF == 0 && nB == 0) continue;
      human_bytes(zA, sizeof(zA), (double)nB);
      fprintf(p->out, "  L%-5d %6lld %12s\n", sqlite3_column_int(pStmt, 0),
              (long long)nF, zA);
      nFiles += nF;
      nBytes += nB;
    }
    sqlite3_finalize(pStmt);
  }
  human_bytes(zA, sizeof(zA), (double)nBytes);
  fprintf(p->out, "  %-6s %6lld %12s\n", "total", (long long)nFiles, zA);
  nRaw = json_int(p, zJson, "$.raw_bytes");
  nStored = json_int(p, zJson, "$.stored_bytes");
  human_bytes(zA, sizeof(zA), (double)nRaw);
  human_bytes(zB, sizeof(zB), (double)nStored);
  if (nStored > 0) {
    fprintf(p->out, "  data %s raw, %s stored: compression ratio %.2fx\n", zA,
            zB, (double)nRaw / (double)nStored);
  } else {
    fprintf(p->out, "  data %s raw, %s stored\n", zA, zB);
  }
  human_bytes(zA, sizeof(zA), (double)json_int(p, zJson, "$.memtable_bytes"));
  human_bytes(zB, sizeof(zB), (double)json_int(p, zJson, "$.wal_bytes"));
  fprintf(p->out, "  memtable %s, write-ahead log %s, keys %lld\n", zA, zB,
          (long long)json_int(p, zJson, "$.keys"));
  fprintf(p->out,
          "  flushes %lld, compactions %lld, cache hits %lld, "
          "misses %lld\n",
          (long long)json_int(p, zJson, "$.flushes"),
          (long long)json_int(p, zJson, "$.compactions"),
          (long long)json_int(p, zJson, "$.cache_hits"),
          (long long)json_int(p, zJson, "$.cache_misses"));
  wcs_free(zJson);

  memset(&c, 0, sizeof(c));
  c.p = p;
  c.pEng = pEng;
  c.zOnly = zStoreName;
  fputc('\n', p->out);
  wcs_table_list(pEng, &c, stats_table);
  rc = 0;
  if (zTable && c.nShown == 0)
    rc = shell_error(p, "no such wcs table: %s", zTable);
  free(zStoreName);
  return rc;
}

/* ---- .backup */

/* After .backup: name each table whose STORE clause puts it in another
** store, which the copy does not hold (and whose declaration in the copy
** names the same STORE). */
static void backup_warn_other_stores(Shell *p, const char *zFile) {
  sqlite3_stmt *pStmt = 0;
  if (sqlite3_prepare_v2(p->db,
                         "SELECT name, sql FROM sqlite_schema WHERE "
                         "type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%'",
                         -1, &pStmt, 0) != SQLITE_OK) {
    return;
  }
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *zName = (const char *)sqlite3_column_text(pStmt, 0);
    char *zTable = 0, *zOther = 0;
    int bHistory = 0;
    if (vtab_target(zName, (const char *)sqlite3_column_text(pStmt, 1), &zTable,
                    &bHistory, &zOther) &&
        zOther) {
      fprintf(stderr,
              "warning: table %s is in store '%s' (its STORE clause), which "
              "is not in the copy; in %s it names the same STORE. Copy that "
              "store with SELECT wcs_backup('%s', 'DIR')\n",
              zName, zOther, zFile, zName);
    }
    free(zTable);
    free(zOther);
  }
  sqlite3_finalize(pStmt);
}

int shell_backup(Shell *p, const char *zFile) {
  wcs_engine *pEng = 0;
  struct stat st;
  char *zStore, *zSql;
  int rc;
  zStore = malloc(strlen(zFile) + 5);
  if (!zStore) return shell_error(p, "out of memory");
  sprintf(zStore, "%s.wcs", zFile);
  {
    const char *zThere = stat(zFile, &st) == 0    ? zFile
                         : stat(zStore, &st) == 0 ? zStore
                                                  : 0;
    if (zThere) {
      rc = shell_error(p, "%s already exists: .backup writes a new file",
                       zThere);
      free(zStore);
      return rc;
    }
  }
  /* the store first: if it cannot be copied, nothing is left behind */
  if (shell_engine(p, 0, &pEng)) {
    free(zStore);
    return 1;
  }
  if (pEng && pEng == p->pFollow) {
    /* the store is read beside the process that writes it, which alone
    ** can take a consistent copy (wcs_backup there) */
    rc = shell_error(p,
                     "cannot back up the store %s: another process writes "
                     "it; run .backup (or SELECT wcs_backup(...)) in that "
                     "process, or once it has closed the store",
                     p->zStore ? p->zStore : "");
    free(zStore);
    return rc;
  }
  /* Ctrl-C: the store's copy runs to its end (the engine cannot stop it
  ** part way) and is then removed; the database's copy stops at once
  ** (sqlite3_interrupt()). Either way nothing of the backup is left. */
  shell_interrupted = 0;
  shell_busy++;
  if (pEng && wcs_engine_backup(pEng, zStore) != WCS_OK) {
    shell_busy--;
    rc =
        shell_error(p, "cannot back up the store: %s", wcs_engine_errmsg(pEng));
    free(zStore);
    return rc;
  }
  rc = SQLITE_INTERRUPT;
  if (!shell_interrupted) {
    zSql = sqlite3_mprintf("VACUUM INTO %Q", zFile);
    rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    /* an interrupted VACUUM INTO leaves the file it began */
    if (rc == SQLITE_INTERRUPT) remove(zFile);
  }
  shell_busy--;
  if (rc != SQLITE_OK) {
    if (rc == SQLITE_INTERRUPT) {
      rc = shell_error(p,
                       "interrupted: no backup made (%s and %s are not "
                       "written)",
                       zFile, zStore);
    } else {
      rc = shell_error(p, "cannot copy the database to %s: %s", zFile,
                       sqlite3_errmsg(p->db));
    }
    if (pEng) shell_rmrf(zStore);
    free(zStore);
    return rc;
  }
  if (pEng) {
    fprintf(p->out, "backed up to %s and %s\n", zFile, zStore);
  } else {
    fprintf(p->out, "backed up to %s (the database has no store)\n", zFile);
  }
  free(zStore);
  backup_warn_other_stores(p, zFile);
  return 0;
}

/* ---- .compact */

int shell_compact(Shell *p, const char *zTable) {
  wcs_engine *pEng = 0;
  char *zStoreName = 0;
  char *zJson = 0;
  sqlite3_int64 nBefore = 0, nAfter = 0;
  int bHistory = 0, rc;
  char zA[32], zB[32];

  if (zTable) {
    wcs_table *pTab = 0;
    char *zIgnore = 0;
    if (shell_table_store(p, zTable, 0, &pEng, &zIgnore, &bHistory)) return 1;
    free(zIgnore);
    if (shell_open_table(p, zTable, &pTab)) return 1;
    zStoreName = strdup(wcs_table_name(pTab));
    wcs_table_close(pTab);
    if (!zStoreName) return shell_error(p, "out of memory");
  } else if (shell_engine(p, 0, &pEng)) {
    return 1;
  }
  if (!pEng) {
    free(zStoreName);
    return shell_error(p, "the database has no store");
  }
  if (wcs_db_stats(wcs_engine_db(pEng), &zJson) == WCS_OK) {
    nBefore = json_int(p, zJson, "$.stored_bytes");
    wcs_free(zJson);
    zJson = 0;
  }
  rc = wcs_db_flush(wcs_engine_db(pEng));
  if (rc == WCS_OK) rc = wcs_engine_gc(pEng, zStoreName, 1);
  if (rc == WCS_OK && !zStoreName) {
    rc = wcs_db_compact_range(wcs_engine_db(pEng), 0, 0, 0, 0);
  }
  if (rc != WCS_OK) {
    const char *zMsg = wcs_engine_errmsg(pEng);
    free(zStoreName);
    if (zMsg[0] == 0) zMsg = wcs_errmsg(wcs_engine_db(pEng)); /* the flush */
    return shell_error(p, "compaction failed: %s%s", zMsg,
                       pEng == p->pFollow
                           ? " (another process writes the store: compact "
                             "it there, or once it is closed there)"
                           : "");
  }
  if (wcs_db_stats(wcs_engine_db(pEng), &zJson) == WCS_OK) {
    nAfter = json_int(p, zJson, "$.stored_bytes");
    wcs_free(zJson);
  }
  human_bytes(zA, sizeof(zA), (double)nBefore);
  human_bytes(zB, sizeof(zB), (double)nAfter);
  fprintf(p->out, "compacted %s: %s stored before, %s after\n",
          zStoreName ? zStoreName : "the store", zA, zB);
  free(zStoreName);
  return 0;
}
