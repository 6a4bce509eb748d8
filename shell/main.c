/*
** main.c — the `wcs` program: an SQLite shell with the wcs module
** registered statically (DESIGN.md §8, manual in doc/shell.md).
**
**   wcs [OPTIONS] [DB [SQL | .command]...]   shell, or run the arguments
**   wcs demo [DB]                            the demo and its tour
**   wcs import DB TABLE FILE [name=value...] an import, no shell
**   wcs export DB TABLE FILE [format] [...]  an export, no shell
**   wcs keyviz DB TABLE FILE.svg             the key-distribution picture
**
** How input is read: lines are collected until sqlite3_complete() says the
** text holds a complete statement, then it runs; a line starting with '.'
** while nothing is pending is a dot-command. On a terminal, lines come from
** readline (history in ~/.wcs_history); otherwise from the stream, and the
** first error stops the script (exit status 1, message on stderr).
**
** Ctrl-C: the SIGINT handler never ends the program while it is
** interactive. While a statement runs it calls sqlite3_interrupt() (which
** SQLite allows from a signal handler), so the statement fails with
** "interrupted" and the prompt comes back; imports, exports and .keyviz
** poll shell_interrupted between rows, .backup between its two copies. At the
*prompt it throws away the line
** being typed and any unfinished multi-line statement.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef WCS_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#include "shell/shell.h"

volatile sig_atomic_t shell_interrupted = 0;
volatile sig_atomic_t shell_busy = 0;

static sqlite3 *volatile g_db = 0;              /* for the SIGINT handler */
static volatile sig_atomic_t g_atPrompt = 0;    /* 1 while readline waits */
static volatile sig_atomic_t g_interactive = 0; /* input is a terminal */

#define PROMPT_MAIN "wcs> "
#define PROMPT_MORE "...> "

int shell_error(Shell *p, const char *zFmt, ...) {
  va_list ap;
  fflush(p->out);
  if (p->iLine > 0 && p->zInput) {
    fprintf(stderr, "Error: %s line %d: ", p->zInput, p->iLine);
  } else {
    fprintf(stderr, "Error: ");
  }
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  p->nErr++;
  return 1;
}

static void on_sigint(int sig) {
  (void)sig;
  shell_interrupted = 1;
#ifdef WCS_HAVE_READLINE
  if (g_atPrompt) {
    /* Drop the line being typed and start a fresh prompt. */
    if (write(STDOUT_FILENO, "^C\n", 3) < 0) { /* nothing to do */
    }
    rl_replace_line("", 0);
    rl_set_prompt(PROMPT_MAIN);
    rl_on_new_line();
    rl_redisplay();
    return;
  }
#endif
  if (!g_interactive && !shell_busy) {
    /* A script between statements: stop it, as a shell would. */
    static const char zMsg[] = "\nError: interrupted\n";
    if (write(STDERR_FILENO, zMsg, sizeof(zMsg) - 1) < 0) { /* ignore */
    }
    _exit(130);
  }
  if (g_db) sqlite3_interrupt(g_db);
}

static void install_sigint(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, 0);
}

/* Read one line (without its newline) into a malloc'd string; NULL at end
** of input. *pn is its length in bytes, which is more than strlen() when
** the line holds a NUL byte. */
static char *read_line(Shell *p, FILE *in, const char *zPrompt, size_t *pn) {
#ifdef WCS_HAVE_READLINE
  if (p->bInteractive && in == stdin) {
    char *z;
    g_atPrompt = 1;
    z = readline(zPrompt);
    g_atPrompt = 0;
    if (z && z[0]) add_history(z);
    *pn = z ? strlen(z) : 0;
    return z;
  }
#else
  if (p->bInteractive && in == stdin) {
    fputs(zPrompt, stdout);
    fflush(stdout);
  }
#endif
  {
    size_t nAlloc = 256, n = 0;
    char *z = malloc(nAlloc);
    int c;
    if (!z) return 0;
    while ((c = fgetc(in)) != EOF) {
      if (c == '\n') break;
      if (n + 2 > nAlloc) {
        char *zNew = realloc(z, nAlloc * 2);
        if (!zNew) {
          free(z);
          return 0;
        }
        z = zNew;
        nAlloc *= 2;
      }
      z[n++] = (char)c;
    }
    if (c == EOF && n == 0) {
      free(z);
      return 0;
    }
    if (n > 0 && z[n - 1] == '\r') n--;
    z[n] = 0;
    *pn = n;
    return z;
  }
}

static int all_space(const char *z) {
  while (*z == ' ' || *z == '\t' || *z == '\n' || *z == '\r' || *z == '\f')
    z++;
  return *z == 0;
}

int shell_run_text(Shell *p, const char *zText) {
  const char *z = zText;
  while (*z == ' ' || *z == '\t')
    z++;
  if (z[0] == '.') return shell_dot(p, z);
  return shell_exec(p, zText);
}

int shell_process(Shell *p, FILE *in, const char *zName, int bBail) {
  wcs_buf sql = {0, 0, 0};
  const char *zSaveInput = p->zInput;
  int iSaveLine = p->iLine;
  int iLine = 0, iStart = 0;
  int rc = 0;
  char *zLine;
  size_t nLine = 0;

  p->zInput = zName;
  while ((zLine = read_line(p, in, sql.n ? PROMPT_MORE : PROMPT_MAIN,
                            &nLine)) != 0) {
    iLine++;
    if (shell_interrupted && p->bInteractive) {
      /* Ctrl-C at the prompt: forget the unfinished statement. */
      sql.n = 0;
      shell_interrupted = 0;
    }
    if (strlen(zLine) != nLine) {
      /* SQL text and dot-commands end at a NUL: the rest of the line, and
      ** so of its statement, would be lost without a word */
      p->iLine = p->bInteractive ? 0 : iLine;
      shell_error(p,
                  "a NUL byte at column %d; SQL and dot-commands cannot "
                  "hold one (write it as char(0) or x'00' in SQL)%s",
                  (int)strlen(zLine) + 1,
                  sql.n ? "; the unfinished statement is dropped" : "");
      free(zLine);
      sql.n = 0;
      if (bBail) {
        rc = 1;
        break;
      }
      continue;
    }
    if (sql.n > 0 && *shell_skip_space((const char *)sql.a) == 0) {
      sql.n = 0; /* comments between statements: as a blank line */
    }
    if (sql.n == 0) {
      const char *z = zLine;
      while (*z == ' ' || *z == '\t')
        z++;
      if (*z == 0 || (z[0] == '-' && z[1] == '-')) {
        /* blank, or a line comment between statements: the statement's
        ** line (for error messages) is the one where its text starts */
        free(zLine);
        continue;
      }
      if (*z == '.') {
        int rcDot;
        p->iLine = p->bInteractive ? 0 : iLine;
        rcDot = shell_dot(p, z);
        free(zLine);
        if (rcDot == 2) {
          rc = 2;
          break;
        }
        if (rcDot && bBail) {
          rc = 1;
          break;
        }
        continue;
      }
      iStart = iLine;
    }
    if (wcs_buf_append(&sql, zLine, strlen(zLine)) ||
        wcs_buf_append(&sql, "\n", 1) || wcs_buf_reserve(&sql, 1)) {
      free(zLine);
      shell_error(p, "out of memory");
      rc = 1;
      break;
    }
    free(zLine);
    sql.a[sql.n] = 0;
    if (sqlite3_complete((const char *)sql.a)) {
      p->iLine = p->bInteractive ? 0 : iStart;
      if (shell_exec(p, (const char *)sql.a) && bBail) {
        rc = 1;
        sql.n = 0;
        break;
      }
      sql.n = 0;
    }
  }
  if (rc == 0 && sql.n > 0) {
    if (wcs_buf_reserve(&sql, 1) == WCS_OK) {
      sql.a[sql.n] = 0;
      if (!all_space((const char *)sql.a)) {
        p->iLine = p->bInteractive ? 0 : iStart;
        /* Let SQLite say what is wrong with the unfinished text. */
        if (shell_exec(p, (const char *)sql.a) && bBail) rc = 1;
      }
    }
  }
  if (p->bInteractive && in == stdin && rc != 2) fputc('\n', p->out);
  wcs_buf_free(&sql);
  p->zInput = zSaveInput;
  p->iLine = iSaveLine;
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "Usage: wcs [OPTIONS] [DB [SQL | .command]...]\n"
          "       wcs demo [DB]\n"
          "       wcs import DB TABLE FILE [name=value...]\n"
          "       wcs export DB TABLE FILE [cbt|csv|jsonl] [timestamp=none]\n"
          "       wcs keyviz DB TABLE FILE.svg [buckets=N]\n"
          "\n"
          "An SQL shell for SQLite with the wcs module (Bigtable-style "
          "tables).\n"
          "DB defaults to wcs.db in the current directory; its store is "
          "DB.wcs/.\n"
          "With SQL arguments each runs in turn and the program exits; "
          "without,\n"
          "SQL is read from standard input (a script, or the prompt on a "
          "terminal).\n"
          "\n"
          "Options:\n"
          "  --mode MODE       list, table, box, csv, json or line\n"
          "  --headers on|off  print column names (also --header, "
          "--noheader)\n"
          "  --version         print the version\n"
          "  --help, -h        this text\n"
          "\n"
          "Inside the shell, .help lists the dot-commands.\n");
}

/* Open the SQL connection to p->zDbPath with the module registered. */
static int shell_connect(Shell *p) {
  const char *zPath = p->zDbPath;
  int rc = sqlite3_open_v2(
      zPath, &p->db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, 0);
  if (rc != SQLITE_OK) {
    shell_error(p, "cannot open %s: %s", zPath,
                p->db ? sqlite3_errmsg(p->db) : sqlite3_errstr(rc));
    sqlite3_close(p->db);
    p->db = 0;
    return 1;
  }
  sqlite3_extended_result_codes(p->db, 1);
  sqlite3_busy_timeout(p->db, 5000);
  rc = wcs_register(p->db);
  if (rc != SQLITE_OK) {
    return shell_error(p, "cannot register the wcs module: %s",
                       sqlite3_errstr(rc));
  }
  g_db = p->db;
  return shell_attach_all(p);
}

int shell_open(Shell *p, const char *zPath) {
  p->zDbPath = strdup(zPath);
  if (!p->zDbPath) return shell_error(p, "out of memory");
  return shell_connect(p);
}

/* Close and open the SQL connection again, so that its wcs tables pick up
** a schema changed behind them (a family an import added). Only between
** statements, outside a transaction. A database in memory (or a temporary
** one) cannot be opened again and is kept: a statement that reads its
** schema sees the new schema cookie (the caller wrote one), so SQLite
** reads the schema again and connects each wcs table anew at its next
** use; the next statement then has the new columns. */
int shell_reconnect(Shell *p) {
  const char *zFile = p->db ? sqlite3_db_filename(p->db, "main") : 0;
  p->bReconnect = 0;
  if (!p->db || !sqlite3_get_autocommit(p->db)) return 0;
  if (!zFile || !zFile[0]) {
    sqlite3_exec(p->db, "SELECT 1 FROM main.sqlite_schema LIMIT 0", 0, 0, 0);
    return 0;
  }
  g_db = 0;
  sqlite3_close_v2(p->db); /* a statement still open keeps it until done */
  p->db = 0;
  return shell_connect(p);
}

void shell_close(Shell *p) {
  g_db = 0;
  if (p->db) {
    /* Save the key-distribution counters for `wcs keyviz` in a later
    ** process. While the database is open the module still holds its
    ** engine, so this opens (shares) that very engine and its counters. */
    wcs_engine *pEng = 0;
    int nErr = p->nErr;
    int i;
    if (shell_engine(p, 0, &pEng) == 0 && pEng) wcs_engine_heat_save(pEng);
    for (i = 0; i < p->nExtra; i++)
      wcs_engine_heat_save(p->apExtra[i]);
    p->nErr = nErr;
  }
  if (p->db) sqlite3_close(p->db);
  p->db = 0;
  shell_close_store(p);
  shell_demo_cleanup(p);
  free(p->zDbPath);
  p->zDbPath = 0;
}

#ifdef WCS_HAVE_READLINE
static char *history_path(void) {
  const char *zHome = getenv("HOME");
  char *z;
  if (!zHome || !zHome[0]) return 0;
  z = malloc(strlen(zHome) + 20);
  if (z) sprintf(z, "%s/.wcs_history", zHome);
  return z;
}
#endif

/* The interactive session or script on stdin. */
static int run_stdin(Shell *p) {
  int rc;
  if (p->bInteractive) {
#ifdef WCS_HAVE_READLINE
    char *zHist = history_path();
    rl_catch_signals = 0;
    rl_readline_name = "wcs";
    stifle_history(2000);
    if (zHist) read_history(zHist);
#endif
    printf("wcs %s (SQLite %s) on %s\n"
           "Enter \".help\" for the dot-commands, \".quit\" to leave; "
           "Ctrl-C cancels a statement.\n",
           WCS_VERSION, sqlite3_libversion(), p->zDbPath);
    rc = shell_process(p, stdin, "stdin", 0);
#ifdef WCS_HAVE_READLINE
    if (zHist) {
      write_history(zHist);
      free(zHist);
    }
#endif
    return p->nErr && !p->bInteractive ? 1 : 0;
  }
  rc = shell_process(p, stdin, "stdin", 1);
  return rc == 1 || p->nErr ? 1 : 0;
}

/* `wcs import|export|keyviz DB TABLE FILE ...` */
static int run_tool(Shell *p, const char *zTool, int nArg, char **azArg) {
  if (nArg < 3) {
    fprintf(stderr, "Error: wcs %s needs DB TABLE %s; see wcs --help\n", zTool,
            strcmp(zTool, "keyviz") == 0 ? "FILE.svg" : "FILE");
    return 1;
  }
  if (strcmp(zTool, "import") != 0 && access(azArg[0], F_OK) != 0) {
    /* opening would create an empty database to read nothing from */
    fprintf(stderr, "Error: no database %s: wcs %s reads an existing one\n",
            azArg[0], zTool);
    return 1;
  }
  if (shell_open(p, azArg[0])) return 1;
  if (strcmp(zTool, "import") == 0) {
    return shell_import(p, azArg[2], azArg[1], nArg - 3, azArg + 3);
  }
  if (strcmp(zTool, "export") == 0) {
    return shell_export(p, azArg[1], azArg[2], nArg - 3, azArg + 3);
  }
  return shell_keyviz(p, azArg[1], azArg[2], nArg - 3, azArg + 3);
}

/* The exit status: the CODE of `.exit CODE`, else 1 after an error; 1
** too when the output could not be written (a full disk, a closed pipe),
** which is an error whatever the script asked for. */
static int finish_output(const Shell *p, int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    /* (errno is the failed write's only if the flush made it) */
    fprintf(stderr, "Error: the output could not be written in full\n");
    return 1;
  }
  if (p->bExitCode) return p->iExitCode;
  return rc ? 1 : 0;
}

/* 1 if z is one of the options (which an SQL argument never is: SQL
** starting with "--" is a comment). */
static int is_option(const char *z) {
  static const char *const azOpt[] = {"mode",   "headers",  "header",
                                      "noheader", "help", "version"};
  int i;
  if (z[0] != '-') return 0;
  z += z[1] == '-' ? 2 : 1;
  for (i = 0; i < (int)(sizeof(azOpt) / sizeof(azOpt[0])); i++) {
    if (strcmp(z, azOpt[i]) == 0) return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  Shell s;
  Shell *p = &s;
  int i, rc = 0;
  const char *zDb = 0;
  int iFirstCmd = 0;

  memset(p, 0, sizeof(*p));
  p->out = stdout;
  p->bInteractive = isatty(STDIN_FILENO);
  g_interactive = p->bInteractive;
  p->bProgress = isatty(STDERR_FILENO);
  if (isatty(STDOUT_FILENO)) {
    p->eMode = SHELL_MODE_TABLE;
    p->bHeaders = 1;
  } else {
    p->eMode = SHELL_MODE_LIST;
    p->bHeaders = 0;
  }

  for (i = 1; i < argc; i++) {
    const char *z = argv[i];
    if (z[0] != '-' || z[1] == 0) break;
    if (z[1] == '-') z++;
    if (strcmp(z, "-help") == 0 || strcmp(z, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(z, "-version") == 0) {
      printf("wcs %s (SQLite %s)\n", WCS_VERSION, sqlite3_libversion());
      return 0;
    } else if ((strcmp(z, "-mode") == 0 || strcmp(z, "-headers") == 0) &&
               i + 1 == argc) {
      fprintf(stderr, "Error: %s needs a value: %s\n", argv[i],
              z[1] == 'm' ? "list, table, box, csv, json or line" : "on or off");
      return 1;
    } else if (strcmp(z, "-mode") == 0 && i + 1 < argc) {
      int e = shell_mode_parse(argv[++i]);
      if (e < 0) {
        fprintf(stderr, "Error: unknown mode \"%s\"\n", argv[i]);
        return 1;
      }
      p->eMode = e;
      p->bHeaders = e != SHELL_MODE_LIST;
    } else if (strcmp(z, "-headers") == 0 && i + 1 < argc) {
      if (shell_parse_bool(p, argv[++i], &p->bHeaders)) return 1;
    } else if (strcmp(z, "-header") == 0) {
      p->bHeaders = 1;
    } else if (strcmp(z, "-noheader") == 0) {
      p->bHeaders = 0;
    } else {
      fprintf(stderr, "Error: unknown option %s\n", argv[i]);
      usage(stderr);
      return 1;
    }
  }
  install_sigint();

  if (i < argc &&
      (strcmp(argv[i], "import") == 0 || strcmp(argv[i], "export") == 0 ||
       strcmp(argv[i], "keyviz") == 0)) {
    rc = run_tool(p, argv[i], argc - i - 1, argv + i + 1);
    shell_close(p);
    return finish_output(p, rc);
  }
  if (i < argc && strcmp(argv[i], "demo") == 0) {
    const char *zDemoDb = i + 1 < argc ? argv[i + 1] : 0;
    p->zDbPath = zDemoDb ? strdup(zDemoDb) : 0;
    rc = shell_demo(p);
    if (rc == 0 && p->db && p->bInteractive) rc = run_stdin(p);
    shell_close(p);
    return finish_output(p, rc);
  }

  if (i < argc) zDb = argv[i++];
  iFirstCmd = i;
  for (; i < argc; i++) {
    if (is_option(argv[i])) {
      fprintf(stderr,
              "Error: %s: options go before the database "
              "(wcs [OPTIONS] [DB [SQL]...])\n",
              argv[i]);
      return 1;
    }
  }
  if (shell_open(p, zDb ? zDb : "wcs.db")) {
    shell_close(p);
    return 1;
  }
  if (iFirstCmd < argc) {
    for (i = iFirstCmd; i < argc; i++) {
      int r = shell_run_text(p, argv[i]);
      if (r == 2) break;
      if (r) {
        rc = 1;
        break;
      }
    }
  } else {
    rc = run_stdin(p);
  }
  shell_close(p);
  return finish_output(p, rc);
}
