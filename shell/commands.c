/*
** commands.c — the shell's dot-commands (doc/shell.md, "Dot-commands").
**
** A dot-command is one line: the command word, then arguments separated by
** spaces; an argument may be quoted with '...' or "..." to hold spaces.
** .explain takes the rest of the line as SQL, unsplit. Each command returns
** 0, 1 after reporting an error, or 2 for .quit.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/shell.h"

#define MAX_ARGS 64

static const char zHelp[] =
    ".backup FILE              copy the database to FILE and its store to "
    "FILE.wcs\n"
    ".compact [TABLE]          drop deleted, shadowed and expired data; "
    "compact the store\n"
    ".explain SQL              the plan of SQL in words, with key ranges\n"
    ".export TABLE FILE [FMT] [timestamp=none]\n"
    "                          write a table as cbt CSV (cbt), CSV (csv) or "
    "JSON lines (jsonl)\n"
    ".headers on|off           column names in results\n"
    ".help                     this text\n"
    ".import FILE TABLE [OPT]  load cbt CSV, CSV, JSON lines or a DynamoDB "
    "export;\n"
    "                          options name=value: format=, column-family=, "
    "timestamp=,\n"
    "                          key=, map=, family=, keep-key=, skip-bad=, "
    "batch=\n"
    "                          (see doc/shell.md)\n"
    ".keyviz TABLE FILE.svg [buckets=N]\n"
    "                          key-distribution and read/write heat map as "
    "SVG\n"
    ".mode [MODE]              output mode: table, box, csv, json, line or "
    "list\n"
    ".quit                     leave (also Ctrl-D)\n"
    ".exit ?CODE?              leave, with exit status CODE\n"
    ".read FILE                run SQL and dot-commands from FILE\n"
    ".schema [PATTERN]         CREATE statements; wcs tables show the "
    "canonical schema\n"
    "                          from the store catalog\n"
    ".show                     current settings\n"
    ".stats [TABLE]            files, levels, bytes, compression ratio, row "
    "estimate\n"
    ".tables [PATTERN]         list tables (LIKE pattern)\n"
    ".timer on|off             time each statement\n";

/* Split zLine into at most MAX_ARGS arguments, in place in a copy. Returns
** the count, or -1 when a quote is not closed; *pzCopy must be freed. */
static int split_args(const char *zLine, char **pzCopy, char **azArg) {
  char *z = strdup(zLine);
  int n = 0;
  *pzCopy = z;
  if (!z) return 0;
  while (*z && n < MAX_ARGS) {
    while (*z == ' ' || *z == '\t' || *z == '\r' || *z == '\n')
      z++;
    if (*z == 0) break;
    if (*z == '\'' || *z == '"') {
      char q = *z++;
      char *zOut = z;
      int bClosed = 0;
      azArg[n++] = z;
      while (*z) {
        if (*z == q) {
          if (z[1] == q) { /* a doubled quote is one quote */
            *zOut++ = q;
            z += 2;
            continue;
          }
          z++;
          bClosed = 1;
          break;
        }
        *zOut++ = *z++;
      }
      *zOut = 0; /* zOut < z unless the quote was never closed */
      if (!bClosed) return -1;
    } else {
      azArg[n++] = z;
      while (*z && *z != ' ' && *z != '\t' && *z != '\r' && *z != '\n')
        z++;
      if (*z) *z++ = 0;
    }
  }
  return n;
}

int shell_parse_bool(Shell *p, const char *z, int *pb) {
  if (strcmp(z, "on") == 0 || strcmp(z, "1") == 0 || strcmp(z, "yes") == 0) {
    *pb = 1;
  } else if (strcmp(z, "off") == 0 || strcmp(z, "0") == 0 ||
             strcmp(z, "no") == 0) {
    *pb = 0;
  } else {
    return shell_error(p, "expected on or off, not \"%s\"", z);
  }
  return 0;
}

static int cmd_tables(Shell *p, const char *zPattern) {
  sqlite3_stmt *pStmt = 0;
  char **azName = 0;
  int nName = 0, nAlloc = 0, nWidth = 0, i, nPerLine;
  int rc = sqlite3_prepare_v2(
      p->db,
      "SELECT name FROM sqlite_schema WHERE type IN ('table','view') "
      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name LIKE ?1 "
      "AND (sql IS NULL OR sql NOT LIKE 'CREATE TABLE %' OR rootpage > 0) "
      "AND name NOT IN (SELECT name FROM pragma_table_list "
      "WHERE schema = 'main' AND type = 'shadow') "
      "ORDER BY name",
      -1, &pStmt, 0);
  if (rc != SQLITE_OK) return shell_error(p, "%s", sqlite3_errmsg(p->db));
  sqlite3_bind_text(pStmt, 1, zPattern ? zPattern : "%", -1, SQLITE_STATIC);
  while (sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(pStmt, 0);
    if (nName == nAlloc) {
      char **a = realloc(azName, sizeof(char *) * (nAlloc ? nAlloc * 2 : 32));
      if (!a) break;
      azName = a;
      nAlloc = nAlloc ? nAlloc * 2 : 32;
    }
    azName[nName] = strdup(z ? z : "");
    if (!azName[nName]) break;
    {
      int w = shell_display_width(azName[nName], strlen(azName[nName]));
      if (w > nWidth) nWidth = w;
    }
    nName++;
  }
  sqlite3_finalize(pStmt);
  nPerLine = 80 / (nWidth + 2);
  if (nPerLine < 1) nPerLine = 1;
  for (i = 0; i < nName; i++) {
    int bLast = (i % nPerLine) == nPerLine - 1 || i == nName - 1;
    if (bLast)
      fprintf(p->out, "%s\n", azName[i]);
    else /* padded by display width, as %-*s would pad by bytes */
      fprintf(p->out, "%s%*s", azName[i],
              nWidth + 2 - shell_display_width(azName[i], strlen(azName[i])),
              "");
    free(azName[i]);
  }
  free(azName);
  return 0;
}

/* .read files nest this deep at most: a file that reads itself (or a
** cycle of them) stops with an error instead of exhausting the stack. */
#define SHELL_READ_DEPTH 64

static int cmd_read(Shell *p, const char *zFile) {
  FILE *in;
  int rc, bSave = p->bInteractive;
  if (p->nReadDepth >= SHELL_READ_DEPTH) {
    return shell_error(p,
                       ".read \"%s\": files read each other %d deep; is "
                       "there a cycle?",
                       zFile, SHELL_READ_DEPTH);
  }
  in = fopen(zFile, "rb");
  if (!in) {
    return shell_error(p, "cannot open \"%s\": %s", zFile, strerror(errno));
  }
  p->bInteractive = 0;
  p->nReadDepth++;
  rc = shell_process(p, in, zFile, 1);
  p->nReadDepth--;
  p->bInteractive = bSave;
  fclose(in);
  return rc == 2 ? 2 : rc ? 1 : 0;
}

static int cmd_show(Shell *p) {
  fprintf(p->out,
          "database: %s\n   store: %s\n    mode: %s\n headers: %s\n"
          "   timer: %s\n",
          p->zDbPath ? p->zDbPath : "", p->zStore ? p->zStore : "(in memory)",
          shell_mode_name(p->eMode), p->bHeaders ? "on" : "off",
          p->bTimer ? "on" : "off");
  return 0;
}

int shell_dot(Shell *p, const char *zLine) {
  char *zCopy = 0;
  char *azArg[MAX_ARGS];
  int nArg, rc = 0;
  const char *zCmd;
  size_t nCmd;

  while (*zLine == ' ' || *zLine == '\t')
    zLine++;
  if (*zLine == '.') zLine++;
  /* .explain takes the rest of the line as SQL. */
  nCmd = strcspn(zLine, " \t");
  if (nCmd == 7 && strncmp(zLine, "explain", 7) == 0) {
    return shell_explain(p, zLine + 7);
  }
  nArg = split_args(zLine, &zCopy, azArg);
  if (nArg < 0) {
    free(zCopy);
    return shell_error(p, "a quote in .%.*s is not closed", (int)nCmd, zLine);
  }
  if (nArg == 0) {
    free(zCopy);
    return 0;
  }
  zCmd = azArg[0];
  if (strcmp(zCmd, "quit") == 0 || strcmp(zCmd, "exit") == 0) {
    char *zEnd = 0;
    long iCode = nArg == 2 ? strtol(azArg[1], &zEnd, 10) : 0;
    if (nArg > 2 || (nArg == 2 && (zEnd == azArg[1] || *zEnd != 0 ||
                                   iCode < 0 || iCode > 255))) {
      rc = shell_error(p, "usage: .%s ?CODE? (CODE: an exit status, 0 to 255)",
                       zCmd);
    } else {
      if (nArg == 2) {
        p->bExitCode = 1;
        p->iExitCode = (int)iCode;
      }
      rc = 2;
    }
  } else if (strcmp(zCmd, "help") == 0) {
    fputs(zHelp, p->out);
  } else if (strcmp(zCmd, "mode") == 0) {
    if (nArg < 2) {
      fprintf(p->out, "current output mode: %s\n", shell_mode_name(p->eMode));
    } else {
      int e = shell_mode_parse(azArg[1]);
      if (e < 0) {
        rc = shell_error(p,
                         "unknown mode \"%s\": use table, box, csv, json, "
                         "line or list",
                         azArg[1]);
      } else {
        if (e != p->eMode && e != SHELL_MODE_LIST) p->bHeaders = 1;
        p->eMode = e;
      }
    }
  } else if (strcmp(zCmd, "headers") == 0 || strcmp(zCmd, "header") == 0) {
    if (nArg != 2)
      rc = shell_error(p, "usage: .headers on|off");
    else
      rc = shell_parse_bool(p, azArg[1], &p->bHeaders);
  } else if (strcmp(zCmd, "timer") == 0) {
    if (nArg != 2)
      rc = shell_error(p, "usage: .timer on|off");
    else
      rc = shell_parse_bool(p, azArg[1], &p->bTimer);
  } else if (strcmp(zCmd, "tables") == 0) {
    rc = cmd_tables(p, nArg > 1 ? azArg[1] : 0);
  } else if (strcmp(zCmd, "schema") == 0) {
    rc = shell_schema(p, nArg > 1 ? azArg[1] : 0);
  } else if (strcmp(zCmd, "stats") == 0) {
    rc = shell_stats(p, nArg > 1 ? azArg[1] : 0);
  } else if (strcmp(zCmd, "compact") == 0) {
    rc = shell_compact(p, nArg > 1 ? azArg[1] : 0);
  } else if (strcmp(zCmd, "backup") == 0) {
    if (nArg != 2)
      rc = shell_error(p, "usage: .backup FILE");
    else
      rc = shell_backup(p, azArg[1]);
  } else if (strcmp(zCmd, "import") == 0) {
    if (nArg < 3)
      rc = shell_error(p, "usage: .import FILE TABLE [name=value...]");
    else
      rc = shell_import(p, azArg[1], azArg[2], nArg - 3, azArg + 3);
  } else if (strcmp(zCmd, "export") == 0) {
    if (nArg < 3) {
      rc = shell_error(p, "usage: .export TABLE FILE [cbt|csv|jsonl]");
    } else {
      rc = shell_export(p, azArg[1], azArg[2], nArg - 3, azArg + 3);
    }
  } else if (strcmp(zCmd, "keyviz") == 0) {
    if (nArg < 3)
      rc = shell_error(p, "usage: .keyviz TABLE FILE.svg");
    else
      rc = shell_keyviz(p, azArg[1], azArg[2], nArg - 3, azArg + 3);
  } else if (strcmp(zCmd, "read") == 0) {
    if (nArg != 2)
      rc = shell_error(p, "usage: .read FILE");
    else
      rc = cmd_read(p, azArg[1]);
  } else if (strcmp(zCmd, "show") == 0) {
    rc = cmd_show(p);
  } else {
    rc = shell_error(p, "unknown command \".%s\"; enter \".help\" for the list",
                     zCmd);
  }
  free(zCopy);
  fflush(p->out);
  return rc;
}
