/*
** import.c — .import and .export (and `wcs import` / `wcs export`): moving
** tables in and out of the store as cbt CSV, CSV with a header, JSON lines
** and DynamoDB JSON exports. The file formats, options and examples are in
** doc/shell.md ("Imports and exports").
**
** How an import works:
**   - Records are read one at a time (a CSV record may span lines; a JSON
**     record is one line) and turned into one pending row: the row key
**     plus its cells (family, qualifier, timestamp, value bytes). JSON is
**     parsed by SQLite's own json_tree() on a private in-memory connection,
**     so numbers keep their exact text (`->` returns a number's source
**     text) and no JSON parser is written here.
**   - The whole row is checked before any of it is written: key length and
**     schema conformance (ks_key_decode), family, qualifier length, typed
**     columns. A record that fails is "malformed": the import stops there,
**     commits what came before it and names the line and the reason; with
**     skip-bad=yes it is skipped and counted instead.
**   - Rows go into an engine transaction (wcs_txn) committed every batch=N
**     lines (default 10000), where the next row begins, so memory stays
**     bounded and a failure loses at most the current batch, never a
**     committed one; the lines of one row share a transaction, and so the
**     time WCS_TS_NOW stands for.
**   - Progress: on a terminal, after one second, a bar of bytes read over
**     the file size with rows/s; the summary line gives rows, cells, time
**     and rows/s.
**
** How an export works: a history read of the table (every live cell, all
** versions; wcs_cursor with nVersions 0), written so that importing the
** file again gives the same keys, families, qualifiers, timestamps and
** value bytes. cbt and CSV write `value@timestamp` (cbt's value-encoded
** timestamps); a column with several versions spreads over several lines
** of the same row key, newest first.
*/
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <xxhash.h>

#include "keyschema/schema.h"
#include "shell/shell.h"

#define FMT_AUTO     0
#define FMT_CBT      1 /* cbt import's CSV: family row, qualifier row */
#define FMT_CSV      2 /* CSV whose header names key fields and columns */
#define FMT_JSONL    3 /* one JSON object per line */
#define FMT_DYNAMODB 4 /* DynamoDB JSON export: {"Item": {...}} per line */

#define TS_NOW     0 /* cells get the engine clock (cbt's timestamp=now) */
#define TS_ENCODED 1 /* value@timestamp (cbt's timestamp=value-encoded) */
#define TS_FIXED   2 /* timestamp=<micros>: every cell gets that time */

#define IMP_OK   0 /* record turned into a row */
#define IMP_BAD  1 /* malformed record: imp->zReason says why */
#define IMP_FAIL 2 /* I/O, engine or memory failure: already reported */

#define DEFAULT_BATCH 10000
#define MAX_WARNINGS  10 /* skipped-line messages printed before silence */

static const char *const azFormat[] = {"auto", "cbt", "csv", "jsonl",
                                       "dynamodb"};

/* One attribute → family:qualifier mapping (map= option). */
typedef struct MapEntry {
  char *zAttr;   /* attribute / member / column name */
  char *zFamily; /* target family */
  char *zQual;   /* target qualifier (NULL: the attribute name) */
} MapEntry;

typedef struct ImpOpts {
  int eFormat;         /* FMT_* */
  const char *zFamily; /* column-family= / family=: the default family */
  int eTs;             /* TS_* */
  int64_t iTs;         /* TS_FIXED: the timestamp */
  const char *zKey;    /* key=: template of the row key, "{pk}#{sk}" */
  MapEntry *aMap;      /* map= entries */
  int nMap;
  int bSkipBad;      /* skip-bad=yes: skip and count malformed records */
  int nBatch;        /* rows per transaction */
  int bKeepKeyAttrs; /* keep-key=yes: key template attributes also
                     ** become cells */
} ImpOpts;

/* A cell of the pending row; offsets into Importer.arena. */
typedef struct PendCell {
  int iFam; /* family index in the table */
  size_t oQual, nQual;
  size_t oVal, nVal;
  int64_t iTs;
  int iSrc; /* JSON: the node the cell came from (Importer.iSrc), else -1 */
} PendCell;

/* A cell the lines of the current row wrote (Importer.aRun): its column
** and timestamp, the qualifier's bytes in Importer.runQual. */
typedef struct RunCell {
  uint64_t h; /* hash of (iFam, qualifier, iTs) */
  int iFam;
  int64_t iTs; /* as written: WCS_TS_NOW is the row's one time */
  size_t oQual, nQual;
  int iSlot; /* its slot in Importer.aRunSlot */
} RunCell;

typedef struct Importer {
  Shell *p;
  ImpOpts o;
  const char *zFile;
  FILE *in;
  int bSeekable;       /* a regular file: it can be read twice */
  uint8_t aHead[64];   /* the first bytes, read to guess the format; the
                       ** readers get them before the rest of the stream */
  int nHead, iHead;    /* bytes in aHead; the next one to give back */
  int cBack;           /* a byte given back by imp_ungetc, or -1 */
  int iReadErrno;      /* reading the input failed (errno), or 0: the
                       ** readers saw an early end of input */
  uint64_t nFileBytes; /* size of the file (0 if unknown: a pipe) */
  uint64_t nRead;      /* bytes consumed so far */
  int iLine;           /* physical line the current record starts on */
  int iNextLine;       /* physical line the reader is at */
  int bNoSkip;         /* the bad record cannot be skipped (skip-bad=yes
                       ** stops all the same): an unterminated quote */
  wcs_engine *pEng;
  wcs_table *pTab;
  char *zTable;             /* store table name */
  int bCreated;             /* this import created the table */
  char *zSchemaBefore;      /* the table's schema text before this import
                            ** added families to it (malloc'd), or NULL */
  const ks_schema *pSchema; /* borrowed from pTab */
  wcs_txn *pTxn;
  int64_t nTxnRows;      /* rows in the uncommitted transaction */
  int64_t nRows;         /* rows committed */
  int64_t nTxnNew;       /* of nTxnRows, those with another key than the
                         ** row before (the lines of a cbt row's versions,
                         ** or JSON lines of one key in a run, are one) */
  int64_t nNewRows;      /* the same, committed: the rows reported */
  wcs_buf lastKey;       /* the key of the row before */
  /* the cells the lines of the current row (a run of lines of one key)
  ** wrote: a cell written again at the same timestamp replaces the
  ** earlier one, and is counted once. A hash set over aRun. */
  RunCell *aRun;
  int nRun, nRunAlloc;
  int *aRunSlot; /* nRunSlot slots (a power of 2, or 0): index+1 into
                 ** aRun, or 0 for an empty slot; at most half are used */
  int nRunSlot;
  wcs_buf runQual;       /* qualifier bytes of aRun */
  int64_t nCells;        /* cells committed */
  int64_t nPendCellsTxn; /* cells in the uncommitted transaction */
  int64_t nBad;          /* malformed records skipped */
  char zReason[512];     /* why the current record is malformed */
  /* the pending row */
  wcs_buf key;   /* row key bytes */
  wcs_buf arena; /* qualifier and value bytes of pending cells */
  PendCell *aCell;
  int nCell, nCellAlloc;
  int64_t iRowTs; /* a _timestamp column/member, or -1 */
  int iSrc;       /* JSON: node of the member being added, else -1 */
  /* progress */
  double tStart;
  double tLastDraw;
  int bDrawn;
  /* JSON through SQLite */
  sqlite3 *jdb;
  sqlite3_stmt *pTree;  /* json_tree() of one line */
  sqlite3_stmt *pValid; /* json_valid() */
  wcs_buf scratch;      /* ks_key_decode scratch */
  wcs_buf tmp;          /* value conversion scratch */
} Importer;

static double now_seconds(void) {
  struct timeval tv;
  gettimeofday(&tv, 0);
  return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static int bad(Importer *imp, const char *zFmt, ...)
    __attribute__((format(printf, 2, 3)));
static int bad(Importer *imp, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  vsnprintf(imp->zReason, sizeof(imp->zReason), zFmt, ap);
  va_end(ap);
  return IMP_BAD;
}

/* A NUL-terminated copy of n bytes that may themselves hold NULs. */
static char *memdup(const void *p, size_t n) {
  char *z = malloc(n + 1);
  if (z) {
    if (n) memcpy(z, p, n);
    z[n] = 0;
  }
  return z;
}

/* Printable form of bytes for messages (malloc'd, cut at 60 chars). */
static char *printable(const void *p, size_t n) {
  char *z = wcs_escape(p, n, 60);
  return z ? z : strdup("?");
}

/* The next byte of the input (the head read to guess the format first),
** or EOF. Every reader goes through this, so that a pipe, which cannot be
** rewound, loses nothing to the guess. */
static int imp_getc(Importer *imp) {
  int c;
  if (imp->cBack >= 0) {
    c = imp->cBack;
    imp->cBack = -1;
    return c;
  }
  if (imp->iHead < imp->nHead) return imp->aHead[imp->iHead++];
  c = fgetc(imp->in);
  if (c == EOF && ferror(imp->in) && imp->iReadErrno == 0) {
    imp->iReadErrno = errno ? errno : EIO;
  }
  return c;
}

/* Give back the byte imp_getc() just returned. */
static void imp_ungetc(Importer *imp, int c) {
  imp->cBack = c;
}

/* Read the first bytes of the input into aHead, skipping a UTF-8 byte
** order mark. */
static void imp_read_head(Importer *imp) {
  imp->nHead = (int)fread(imp->aHead, 1, sizeof(imp->aHead), imp->in);
  if (ferror(imp->in)) imp->iReadErrno = errno ? errno : EIO;
  imp->iHead = 0;
  imp->cBack = -1;
  if (imp->nHead >= 3 && memcmp(imp->aHead, "\xef\xbb\xbf", 3) == 0) {
    imp->iHead = 3;
  }
}

/* ==================================================================
** Options
** ================================================================== */

static int parse_int64(const char *z, size_t n, int64_t *pv) {
  int64_t v = 0;
  size_t i = 0;
  int bNeg = 0;
  if (n == 0) return 0;
  if (z[0] == '-' || z[0] == '+') {
    bNeg = z[0] == '-';
    i = 1;
    if (n == 1) return 0;
  }
  for (; i < n; i++) {
    int d;
    if (z[i] < '0' || z[i] > '9') return 0;
    d = z[i] - '0';
    if (!bNeg && v > (INT64_MAX - d) / 10) return 0;
    if (bNeg && v < (INT64_MIN + d) / 10) return 0;
    v = bNeg ? v * 10 - d : v * 10 + d;
  }
  *pv = v;
  return 1;
}

/* A yes/no option's value into *pb; 1 if it is neither. */
static int yes_no(const char *z, int *pb) {
  if (strcmp(z, "yes") == 0 || strcmp(z, "1") == 0 ||
      strcmp(z, "true") == 0 || strcmp(z, "on") == 0) {
    *pb = 1;
  } else if (strcmp(z, "no") == 0 || strcmp(z, "0") == 0 ||
             strcmp(z, "false") == 0 || strcmp(z, "off") == 0) {
    *pb = 0;
  } else {
    return 1;
  }
  return 0;
}

static void free_opts(ImpOpts *o) {
  int i;
  for (i = 0; i < o->nMap; i++) {
    free(o->aMap[i].zAttr);
    free(o->aMap[i].zFamily);
    free(o->aMap[i].zQual);
  }
  free(o->aMap);
  o->aMap = 0;
  o->nMap = 0;
}

/* map=ATTR:FAMILY[:QUALIFIER][,ATTR:FAMILY[:QUALIFIER]...] */
static int parse_map(Shell *p, ImpOpts *o, const char *zMap) {
  const char *z = zMap;
  while (*z) {
    const char *zEnd = strchr(z, ',');
    size_t n = zEnd ? (size_t)(zEnd - z) : strlen(z);
    char *zItem = strndup(z, n);
    char *c1, *c2;
    MapEntry *a;
    if (!zItem) return shell_error(p, "out of memory");
    c1 = strchr(zItem, ':');
    if (!c1 || c1 == zItem || c1[1] == 0) {
      shell_error(p, "map entry \"%s\": expected ATTRIBUTE:FAMILY[:QUALIFIER]",
                  zItem);
      free(zItem);
      return 1;
    }
    *c1++ = 0;
    c2 = strchr(c1, ':');
    if (c2) *c2++ = 0;
    a = realloc(o->aMap, sizeof(MapEntry) * (size_t)(o->nMap + 1));
    if (!a) {
      free(zItem);
      return shell_error(p, "out of memory");
    }
    o->aMap = a;
    a[o->nMap].zAttr = strdup(zItem);
    a[o->nMap].zFamily = strdup(c1);
    a[o->nMap].zQual = c2 && c2[0] ? strdup(c2) : 0;
    o->nMap++;
    free(zItem);
    z += n;
    if (*z == ',') z++;
  }
  return 0;
}

/* The FMT_* value of a format name (cbt, csv, jsonl, dynamodb), or -1. */
static int format_index(const char *z) {
  int j;
  for (j = 1; j < 5; j++) {
    if (strcmp(z, azFormat[j]) == 0) return j;
  }
  return -1;
}

static int parse_opts(Shell *p, ImpOpts *o, int nOpt, char **azOpt) {
  int i;
  memset(o, 0, sizeof(*o));
  o->nBatch = DEFAULT_BATCH;
  for (i = 0; i < nOpt; i++) {
    const char *z = azOpt[i];
    const char *zEq;
    size_t nName;
    const char *zVal;
    while (*z == '-')
      z++;
    zEq = strchr(z, '=');
    if (!zEq) {
      /* A bare word is a format name (".export t f.csv csv"). */
      int j = format_index(z);
      if (j > 0) {
        o->eFormat = j;
        continue;
      }
      return shell_error(p, "option \"%s\": expected name=value", azOpt[i]);
    }
    nName = (size_t)(zEq - z);
    zVal = zEq + 1;
#define IS(x) (nName == strlen(x) && strncmp(z, x, nName) == 0)
    if (IS("format")) {
      int j = format_index(zVal);
      if (strcmp(zVal, "json") == 0 || strcmp(zVal, "ndjson") == 0) j = 3;
      if (strcmp(zVal, "dynamo") == 0 || strcmp(zVal, "ddb") == 0) j = 4;
      if (j <= 0) {
        return shell_error(p, "format=%s: expected cbt, csv, jsonl or dynamodb",
                           zVal);
      }
      o->eFormat = j;
    } else if (IS("column-family") || IS("family")) {
      o->zFamily = zVal;
    } else if (IS("timestamp")) {
      if (strcmp(zVal, "now") == 0) {
        o->eTs = TS_NOW;
      } else if (strcmp(zVal, "value-encoded") == 0) {
        o->eTs = TS_ENCODED;
      } else if (parse_int64(zVal, strlen(zVal), &o->iTs) && o->iTs >= 0) {
        o->eTs = TS_FIXED;
      } else {
        return shell_error(p,
                           "timestamp=%s: expected now, value-encoded or "
                           "microseconds since the epoch",
                           zVal);
      }
    } else if (IS("key")) {
      o->zKey = zVal;
    } else if (IS("map")) {
      if (parse_map(p, o, zVal)) return 1;
    } else if (IS("skip-bad") || IS("keep-key")) {
      if (yes_no(zVal, IS("skip-bad") ? &o->bSkipBad : &o->bKeepKeyAttrs)) {
        return shell_error(p, "%s: expected yes or no", z);
      }
    } else if (IS("batch") || IS("batch-size")) {
      int64_t v;
      if (!parse_int64(zVal, strlen(zVal), &v) || v < 1 || v > 10000000) {
        return shell_error(p, "batch=%s: expected 1..10000000 rows", zVal);
      }
      o->nBatch = (int)v;
    } else if (IS("app-profile") || IS("workers")) {
      /* cbt options with no meaning for an embedded store: accepted. */
    } else {
      return shell_error(p,
                         "unknown option \"%.*s\" (options: format, "
                         "column-family or family, timestamp, key, map, "
                         "skip-bad, keep-key, batch; cbt's app-profile and "
                         "workers are taken and ignored)",
                         (int)nName, z);
    }
#undef IS
  }
  return 0;
}

/* ==================================================================
** The target table
** ================================================================== */

static int table_has_family(wcs_table *pTab, const char *zFam) {
  return wcs_table_family_index(pTab, zFam) >= 0;
}

/* Create SQL table zTable as a wcs table with families azFam[0..nFam-1]
** (through SQL, so that it is a virtual table too). */
static int imp_create_table(Importer *imp, const char *zTable,
                            const char **azFam, int nFam) {
  Shell *p = imp->p;
  wcs_buf sql = {0, 0, 0};
  char *zId = shell_quote_ident(zTable);
  char *zFamId;
  const char *zSep = "";
  int i;
  if (nFam == 0) {
    free(zId);
    return shell_error(p,
                       "no such table: %s (to create it, name its "
                       "families: column-family=NAME or map=...)",
                       zTable);
  }
  wcs_buf_append(&sql, "CREATE VIRTUAL TABLE ", 21);
  wcs_buf_append(&sql, zId, strlen(zId));
  wcs_buf_append(&sql, " USING wcs(", 11);
  for (i = 0; i < nFam; i++) {
    int j;
    for (j = 0; j < i; j++) {
      if (strcmp(azFam[j], azFam[i]) == 0) break;
    }
    if (j < i) continue;
    /* quoted: a name from the file is never read as DDL */
    zFamId = shell_quote_ident(azFam[i]);
    if (!zFamId) {
      free(zId);
      wcs_buf_free(&sql);
      return shell_error(p, "out of memory");
    }
    wcs_buf_append(&sql, zSep, strlen(zSep));
    wcs_buf_append(&sql, "FAMILY ", 7);
    wcs_buf_append(&sql, zFamId, strlen(zFamId));
    free(zFamId);
    zSep = ", ";
  }
  wcs_buf_append(&sql, ")", 2);
  free(zId);
  if (sqlite3_exec(p->db, (const char *)sql.a, 0, 0, 0) != SQLITE_OK) {
    shell_error(p, "cannot create table %s: %s", zTable, sqlite3_errmsg(p->db));
    wcs_buf_free(&sql);
    return 1;
  }
  wcs_buf_free(&sql);
  fprintf(p->out, "created table %s\n", zTable);
  imp->bCreated = 1;
  return 0;
}

/* Open the store table behind SQL table zTable, creating it with
** families azFam[0..nFam-1] when it does not exist (imp_create_table),
** and adding those of them it lacks. */
static int imp_open_table(Importer *imp, const char *zTable, const char **azFam,
                          int nFam) {
  Shell *p = imp->p;
  char *zStoreName = 0;
  int bHistory = 0, rc;
  const char *zKind = shell_other_table(p, zTable);

  if (zKind) {
    /* before the store is opened: refusing creates no DB.wcs/ */
    return shell_error(p,
                       "cannot import into %s: it is %s, not a wcs table; "
                       "import into a wcs table, or name a new table to "
                       "create one",
                       zTable, zKind);
  }
  if (shell_table_store(p, zTable, 1, &imp->pEng, &zStoreName, &bHistory)) {
    return 1;
  }
  if (!imp->pEng && !zStoreName) {
    /* an in-memory database, whose store (the connection's) exists once a
    ** table made it: this one */
    if (imp_create_table(imp, zTable, azFam, nFam)) return 1;
    if (shell_table_store(p, zTable, 1, &imp->pEng, &zStoreName, &bHistory)) {
      return 1;
    }
  }
  if (!imp->pEng) {
    free(zStoreName);
    return shell_error(p, "cannot import into %s: its store is not open",
                       zTable);
  }
  if (imp->pEng == p->pFollow) {
    /* read beside the process that writes it: an import would fail at
    ** its first commit */
    free(zStoreName);
    return shell_error(p,
                       "cannot import into %s: another process writes the "
                       "store %s, and only it can write there; import once "
                       "that process has closed it (reads work meanwhile)",
                       zTable, p->zStore ? p->zStore : "");
  }
  if (bHistory) {
    free(zStoreName);
    return shell_error(p, "%s is a HISTORY view; import into the table itself",
                       zTable);
  }
  if (!zStoreName) {
    /* Not a wcs table in this database. A store table of that name? */
    wcs_table *pTab = 0;
    wcs_table_open(imp->pEng, zTable, &pTab);
    if (pTab) {
      wcs_table_close(pTab);
      zStoreName = strdup(zTable);
    } else {
      if (imp_create_table(imp, zTable, azFam, nFam)) return 1;
      if (shell_store_table(p, zTable, &zStoreName, &bHistory)) return 1;
      if (!zStoreName) zStoreName = strdup(zTable);
      /* (created in the default store, which imp->pEng already is) */
    }
  }
  imp->zTable = zStoreName;
  rc = wcs_table_open(imp->pEng, zStoreName, &imp->pTab);
  if (rc != WCS_OK || !imp->pTab) {
    return shell_error(p, "cannot open table %s: %s", zTable,
                       rc ? wcs_engine_errmsg(imp->pEng) : "not in the store");
  }
  imp->pSchema = wcs_table_schema(imp->pTab);
  rc = wcs_txn_begin(imp->pEng, 0, &imp->pTxn);
  if (rc != WCS_OK) {
    return shell_error(p, "cannot begin a transaction: %s",
                       wcs_engine_errmsg(imp->pEng));
  }
  return 0;
}

/* Add the families azFam[0..nFam-1] that the file needs and the table
** lacks (a schema change: done only once the file's header is known to
** be usable). */
static int imp_add_families(Importer *imp, const char *zTable,
                            const char **azFam, int nFam) {
  Shell *p = imp->p;
  const char *zStoreName = imp->zTable;
  int i, rc;
  for (i = 0; i < nFam; i++) {
    if (!table_has_family(imp->pTab, azFam[i])) {
      const char *zOld = wcs_table_schema_text(imp->pTab);
      char *zFamId = shell_quote_ident(azFam[i]);
      if (!imp->zSchemaBefore && !(imp->zSchemaBefore = strdup(zOld))) {
        free(zFamId);
        return shell_error(p, "out of memory");
      }
      char *zNew = zFamId ? sqlite3_mprintf("%s%sFAMILY %s", zOld,
                                            zOld[0] ? ", " : "", zFamId)
                          : 0;
      free(zFamId);
      if (!zNew) return shell_error(p, "out of memory");
      rc = wcs_table_alter(imp->pEng, zStoreName, zNew);
      sqlite3_free(zNew);
      if (rc != WCS_OK) {
        return shell_error(p, "cannot add family %s to %s: %s", azFam[i],
                           zTable, wcs_engine_errmsg(imp->pEng));
      }
      fprintf(p->out, "added family %s to %s\n", azFam[i], zTable);
      p->bReconnect = 1; /* the SQL table still has the old schema */
      wcs_table_close(imp->pTab);
      imp->pTab = 0;
      rc = wcs_table_open(imp->pEng, zStoreName, &imp->pTab);
      if (rc != WCS_OK || !imp->pTab) {
        return shell_error(p, "cannot reopen table %s", zTable);
      }
      imp->pSchema = wcs_table_schema(imp->pTab);
    }
  }
  return 0;
}

/* ==================================================================
** The pending row
** ================================================================== */

static void row_reset(Importer *imp) {
  imp->key.n = 0;
  imp->arena.n = 0;
  imp->nCell = 0;
  imp->iRowTs = -1;
  imp->iSrc = -1;
}

/* Family index of zFam, or IMP_BAD. */
static int row_family(Importer *imp, const char *zFam, size_t nFam,
                      int *piFam) {
  char zName[WCS_MAX_FAMILY_NAME + 1];
  if (nFam == 0 || nFam > WCS_MAX_FAMILY_NAME) {
    return bad(imp, "no column family \"%.*s\" in table %s", (int)nFam, zFam,
               imp->zTable);
  }
  if (memchr(zFam, 0, nFam)) {
    char *zP = printable(zFam, nFam);
    bad(imp, "family name \"%s\" holds a NUL byte, which no family name can",
        zP);
    free(zP);
    return IMP_BAD;
  }
  memcpy(zName, zFam, nFam);
  zName[nFam] = 0;
  *piFam = wcs_table_family_index(imp->pTab, zName);
  if (*piFam < 0) {
    return bad(imp, "no column family \"%s\" in table %s", zName, imp->zTable);
  }
  return IMP_OK;
}

static int row_add(Importer *imp, int iFam, const void *pQual, size_t nQual,
                   int64_t iTs, const void *pVal, size_t nVal) {
  PendCell *c;
  if (nQual > WCS_MAX_QUALIFIER) {
    return bad(imp, "qualifier of %zu bytes (the limit is %d)", nQual,
               WCS_MAX_QUALIFIER);
  }
  if (nVal > WCS_MAX_VALUE) {
    return bad(imp, "value of %zu bytes (the limit is %d)", nVal,
               WCS_MAX_VALUE);
  }
  if (imp->nCell == imp->nCellAlloc) {
    int nNew = imp->nCellAlloc ? imp->nCellAlloc * 2 : 64;
    PendCell *a = realloc(imp->aCell, sizeof(PendCell) * (size_t)nNew);
    if (!a) {
      shell_error(imp->p, "out of memory");
      return IMP_FAIL;
    }
    imp->aCell = a;
    imp->nCellAlloc = nNew;
  }
  c = &imp->aCell[imp->nCell];
  c->iFam = iFam;
  c->iTs = iTs;
  c->iSrc = imp->iSrc;
  c->oQual = imp->arena.n;
  c->nQual = nQual;
  if (wcs_buf_append(&imp->arena, pQual, nQual)) goto nomem;
  c->oVal = imp->arena.n;
  c->nVal = nVal;
  if (wcs_buf_append(&imp->arena, pVal, nVal)) goto nomem;
  imp->nCell++;
  return IMP_OK;
nomem:
  shell_error(imp->p, "out of memory");
  return IMP_FAIL;
}

/* Split "value@timestamp" (value-encoded timestamps, as cbt does: the last
** '@' followed by a non-negative integer; otherwise all of it is value). */
static void split_ts(Importer *imp, const char *z, size_t n, size_t *pnVal,
                     int64_t *piTs) {
  *pnVal = n;
  *piTs = imp->iRowTs >= 0         ? imp->iRowTs
          : imp->o.eTs == TS_FIXED ? imp->o.iTs
                                   : WCS_TS_NOW;
  if (imp->o.eTs == TS_ENCODED) {
    size_t i = n;
    int64_t ts;
    while (i > 0 && z[i - 1] != '@')
      i--;
    if (i > 0 && i < n && parse_int64(z + i, n - i, &ts) && ts >= 0 &&
        z[i] != '+' && z[i] != '-') {
      *pnVal = i - 1;
      *piTs = ts;
    }
  }
}

/* The timestamp for cells whose value carries none. */
static int64_t default_ts(Importer *imp) {
  if (imp->iRowTs >= 0) return imp->iRowTs;
  return imp->o.eTs == TS_FIXED ? imp->o.iTs : WCS_TS_NOW;
}

static int imp_commit(Importer *imp);

/* Bytes at offset o of the pending row's arena. Cells of empty qualifiers
** and values alone leave it without bytes, and arena.a NULL: "" then. */
static const uint8_t *arena_at(Importer *imp, size_t o) {
  return imp->arena.a ? imp->arena.a + o : (const uint8_t *)"";
}

/* (the column and time seed xxHash's hash of the qualifier) */
static uint64_t run_hash(int iFam, const void *pQual, size_t nQual,
                         int64_t iTs) {
  return XXH3_64bits_withSeed(pQual, nQual,
                              ((uint64_t)(unsigned)iFam << 48) ^ (uint64_t)iTs);
}

/* A new row: forget the cells of the one before. */
static void run_reset(Importer *imp) {
  int i;
  for (i = 0; i < imp->nRun; i++)
    imp->aRunSlot[imp->aRun[i].iSlot] = 0;
  imp->nRun = 0;
  imp->runQual.n = 0;
}

/* Note that the current row wrote cell (iFam, qualifier, iTs): 1 if it
** had not, 0 if it had (the cell replaced that one), -1 out of memory. */
static int run_add(Importer *imp, int iFam, const void *pQual, size_t nQual,
                   int64_t iTs) {
  uint64_t h = run_hash(iFam, pQual, nQual, iTs);
  int mask = imp->nRunSlot - 1;
  RunCell *c;
  int i;
  if (imp->nRunSlot > 0) {
    for (i = (int)(h & (uint64_t)mask); imp->aRunSlot[i]; i = (i + 1) & mask) {
      c = &imp->aRun[imp->aRunSlot[i] - 1];
      if (c->h == h && c->iFam == iFam && c->iTs == iTs && c->nQual == nQual &&
          (nQual == 0 ||
           memcmp(imp->runQual.a + c->oQual, pQual, nQual) == 0)) {
        return 0;
      }
    }
  }
  if (imp->nRun == imp->nRunAlloc) {
    int nNew = imp->nRunAlloc ? imp->nRunAlloc * 2 : 64;
    RunCell *a = realloc(imp->aRun, sizeof(RunCell) * (size_t)nNew);
    if (!a) return -1;
    imp->aRun = a;
    imp->nRunAlloc = nNew;
  }
  if ((imp->nRun + 1) * 2 > imp->nRunSlot) {
    /* twice the slots, and every cell placed again */
    int nNew = imp->nRunSlot ? imp->nRunSlot * 2 : 128;
    int *a = calloc((size_t)nNew, sizeof(int));
    int j;
    if (!a) return -1;
    free(imp->aRunSlot);
    imp->aRunSlot = a;
    imp->nRunSlot = nNew;
    mask = nNew - 1;
    for (j = 0; j < imp->nRun; j++) {
      c = &imp->aRun[j];
      for (i = (int)(c->h & (uint64_t)mask); a[i]; i = (i + 1) & mask)
        ;
      a[i] = j + 1;
      c->iSlot = i;
    }
  }
  for (i = (int)(h & (uint64_t)mask); imp->aRunSlot[i]; i = (i + 1) & mask)
    ;
  c = &imp->aRun[imp->nRun];
  c->h = h;
  c->iFam = iFam;
  c->iTs = iTs;
  c->oQual = imp->runQual.n;
  c->nQual = nQual;
  c->iSlot = i;
  if (wcs_buf_append(&imp->runQual, pQual, nQual)) return -1;
  imp->aRunSlot[i] = ++imp->nRun;
  return 1;
}

/* Check the pending row and hand it to the transaction. A batch of
** batch=N lines is committed when the next row begins, so that the lines
** of one row share a transaction, and with it the one time WCS_TS_NOW
** stands for: a column such lines give again at that time keeps the last
** line's value, as cbt import leaves it, whatever the batches. */
static int row_finish(Importer *imp) {
  int i, rc, bNewRow;
  if (imp->nCell == 0) return IMP_OK; /* nothing to write: no row */
  if (imp->key.n == 0) return bad(imp, "empty row key");
  if (imp->key.n > WCS_MAX_ROW_KEY) {
    return bad(imp, "row key of %zu bytes (the limit is %d)", imp->key.n,
               WCS_MAX_ROW_KEY);
  }
  if (imp->pSchema && imp->pSchema->nField > 0) {
    ks_value aVal[KS_MAX_FIELDS];
    char *zErr = 0;
    if (ks_key_decode(imp->pSchema, imp->key.a, (int)imp->key.n, aVal,
                      &imp->scratch, &zErr) != WCS_OK) {
      bad(imp, "%s", zErr ? zErr : "row key does not match the key schema");
      free(zErr);
      return IMP_BAD;
    }
  }
  bNewRow = imp->lastKey.n != imp->key.n ||
            memcmp(imp->lastKey.a, imp->key.a, imp->key.n) != 0;
  if (bNewRow && imp->nTxnRows >= imp->o.nBatch && imp_commit(imp)) {
    return IMP_FAIL;
  }
  rc = wcs_txn_savepoint(imp->pTxn, 1);
  for (i = 0; i < imp->nCell && rc == WCS_OK; i++) {
    PendCell *c = &imp->aCell[i];
    wcs_family_info fi;
    rc = wcs_table_family(imp->pTab, c->iFam, &fi);
    if (rc == WCS_OK && fi.eAggregate != WCS_AGG_NONE) {
      /* an aggregate family's cell is its state (an export writes it so):
      ** merged in, as Bigtable's MergeToCell does, which rebuilds it in an
      ** empty table */
      rc = wcs_txn_merge_to_cell(imp->pTxn, imp->pTab, imp->key.a, imp->key.n,
                                 fi.zName, arena_at(imp, c->oQual), c->nQual,
                                 c->iTs, arena_at(imp, c->oVal), c->nVal);
    } else if (rc == WCS_OK) {
      rc = wcs_txn_set_cell(imp->pTxn, imp->pTab, imp->key.a, imp->key.n,
                            fi.zName, arena_at(imp, c->oQual), c->nQual, c->iTs,
                            arena_at(imp, c->oVal), c->nVal);
    }
  }
  if (rc != WCS_OK) {
    const char *zMsg = wcs_engine_errmsg(imp->pEng);
    wcs_txn_rollback_to(imp->pTxn, 1);
    wcs_txn_release(imp->pTxn, 1);
    if (rc == WCS_NOMEM || rc == WCS_IOERR || rc == WCS_FULL) {
      shell_error(imp->p, "%s", zMsg);
      return IMP_FAIL;
    }
    return bad(imp, "%s", zMsg[0] ? zMsg : wcs_errstr(rc));
  }
  wcs_txn_release(imp->pTxn, 1);
  imp->nTxnRows++;
  if (bNewRow) {
    imp->nTxnNew++;
    imp->lastKey.n = 0;
    run_reset(imp);
    if (wcs_buf_append(&imp->lastKey, imp->key.a, imp->key.n)) {
      shell_error(imp->p, "out of memory");
      return IMP_FAIL;
    }
  }
  /* the cells the table holds after the line, not those it replaced */
  for (i = 0; i < imp->nCell; i++) {
    PendCell *c = &imp->aCell[i];
    int bNew = run_add(imp, c->iFam, arena_at(imp, c->oQual), c->nQual, c->iTs);
    if (bNew < 0) {
      shell_error(imp->p, "out of memory");
      return IMP_FAIL;
    }
    imp->nPendCellsTxn += bNew;
  }
  return IMP_OK;
}

static int imp_commit(Importer *imp) {
  int rc;
  if (imp->nTxnRows == 0 || !imp->pTxn) return 0;
  rc = wcs_txn_commit(imp->pTxn);
  if (rc != WCS_OK) {
    shell_error(imp->p, "commit failed: %s", wcs_engine_errmsg(imp->pEng));
    return 1;
  }
  imp->nRows += imp->nTxnRows;
  imp->nNewRows += imp->nTxnNew;
  imp->nCells += imp->nPendCellsTxn;
  imp->nTxnRows = 0;
  imp->nTxnNew = 0;
  imp->nPendCellsTxn = 0;
  return 0;
}

/* ==================================================================
** Progress
** ================================================================== */

static void progress(Importer *imp, int bFinal) {
  double t = now_seconds();
  double dt = t - imp->tStart;
  int64_t nRows = imp->nRows + imp->nTxnRows;
  if (!imp->p->bProgress) return;
  if (bFinal) {
    if (imp->bDrawn) fprintf(stderr, "\r\033[K");
    return;
  }
  if (dt < 1.0 || t - imp->tLastDraw < 0.1) return;
  imp->tLastDraw = t;
  imp->bDrawn = 1;
  if (imp->nFileBytes > 0) {
    int w = 30, i;
    double f = (double)imp->nRead / (double)imp->nFileBytes;
    int nFill;
    if (f > 1) f = 1;
    nFill = (int)(f * w);
    fprintf(stderr, "\r[");
    for (i = 0; i < w; i++)
      fputc(i < nFill ? '#' : '.', stderr);
    fprintf(stderr, "] %3.0f%%  %.1f/%.1f MB  %.0f rows/s\033[K", f * 100,
            imp->nRead / 1e6, imp->nFileBytes / 1e6, nRows / dt);
  } else {
    fprintf(stderr, "\r%.1f MB  %" PRId64 " rows  %.0f rows/s\033[K",
            imp->nRead / 1e6, nRows, nRows / dt);
  }
  fflush(stderr);
}

/* ==================================================================
** CSV records
** ================================================================== */

typedef struct CsvField {
  size_t o, n; /* bytes in CsvReader.rec */
  int bQuoted; /* the field was quoted ("" is an empty value, not absent) */
} CsvField;

typedef struct CsvReader {
  Importer *imp;
  wcs_buf rec; /* unescaped field bytes of the current record */
  CsvField *aField;
  int nField, nAlloc;
  int bEof;
} CsvReader;

static int csv_getc(CsvReader *r) {
  int c = imp_getc(r->imp);
  if (c != EOF) r->imp->nRead++;
  if (c == '\n') r->imp->iNextLine++;
  return c;
}

static int csv_push_field(CsvReader *r, size_t o, int bQuoted) {
  if (r->nField == r->nAlloc) {
    int nNew = r->nAlloc ? r->nAlloc * 2 : 32;
    CsvField *a = realloc(r->aField, sizeof(CsvField) * (size_t)nNew);
    if (!a) return 1;
    r->aField = a;
    r->nAlloc = nNew;
  }
  r->aField[r->nField].o = o;
  r->aField[r->nField].n = r->rec.n - o;
  r->aField[r->nField].bQuoted = bQuoted;
  r->nField++;
  return 0;
}

/* After a quoting error, skip to the end of the physical line, so that
** the next record starts on the next line (the rest of a broken line is
** never read as a record of its own). c is the byte last read. */
static void csv_skip_line(CsvReader *r, int c) {
  while (c != '\n' && c != EOF)
    c = csv_getc(r);
}

/* Read one record. Returns IMP_OK (r->bEof set at end of input), IMP_BAD
** for malformed quoting, IMP_FAIL when out of memory. Blank lines are
** skipped. */
static int csv_next(CsvReader *r) {
  Importer *imp = r->imp;
  int c;
  r->rec.n = 0;
  r->nField = 0;
  do {
    imp->iLine = imp->iNextLine;
    c = csv_getc(r);
    if (c == '\r') {
      c = csv_getc(r);
      if (c != '\n' && c != EOF) {
        imp_ungetc(imp, c);
        imp->nRead--;
        c = '\r';
        break;
      }
    }
  } while (c == '\n');
  if (c == EOF) {
    r->bEof = 1;
    return IMP_OK;
  }
  for (;;) {
    size_t o = r->rec.n;
    int bQuoted = 0;
    if (c == '"') {
      bQuoted = 1;
      for (;;) {
        c = csv_getc(r);
        if (c == EOF) {
          /* not one bad line that skip-bad=yes could pass over: the
          ** lines after the quote were read as the field's text */
          imp->bNoSkip = 1;
          return bad(imp,
                     "unterminated quoted field: the %d lines after it "
                     "would be its text, which skip-bad=yes cannot pass "
                     "over; close the quote (a quote inside a quoted field "
                     "is written twice)",
                     imp->iNextLine - imp->iLine);
        }
        if (c == '"') {
          c = csv_getc(r);
          if (c != '"') break;
        }
        {
          uint8_t b = (uint8_t)c;
          if (wcs_buf_append(&r->rec, &b, 1)) return IMP_FAIL;
        }
      }
      if (c != ',' && c != '\n' && c != '\r' && c != EOF) {
        csv_skip_line(r, c);
        return bad(imp, "text after a closing quote in field %d",
                   r->nField + 1);
      }
    } else {
      while (c != ',' && c != '\n' && c != '\r' && c != EOF) {
        uint8_t b = (uint8_t)c;
        if (c == '"') {
          csv_skip_line(r, c);
          return bad(imp,
                     "a bare \" in unquoted field %d (quote the field "
                     "and double the quote)",
                     r->nField + 1);
        }
        if (wcs_buf_append(&r->rec, &b, 1)) return IMP_FAIL;
        c = csv_getc(r);
      }
    }
    if (csv_push_field(r, o, bQuoted)) return IMP_FAIL;
    if (c == ',') {
      c = csv_getc(r);
      continue;
    }
    if (c == '\r') {
      c = csv_getc(r);
      if (c != '\n' && c != EOF) {
        imp_ungetc(imp, c);
        imp->nRead--;
      }
    }
    break;
  }
  return IMP_OK;
}

/* Field i of the current record (not NUL-terminated). A record of empty
** fields alone has no bytes, and rec.a is NULL then: "" stands for them. */
static const char *fld(CsvReader *r, int i, size_t *pn) {
  *pn = r->aField[i].n;
  if (!r->rec.a) return "";
  return (const char *)r->rec.a + r->aField[i].o;
}

/* ==================================================================
** Typed values: declared qualifier columns (ks_qualifier)
** ================================================================== */

/* Encode a value given as text for a declared column, into imp->tmp. */
static int typed_value(Importer *imp, const ks_qualifier *q, const char *z,
                       size_t n) {
  imp->tmp.n = 0;
  switch (q->eVType) {
  case KS_V_INT64: {
    int64_t v;
    if (!parse_int64(z, n, &v)) {
      char *zP = printable(z, n);
      bad(imp, "value '%s' for INT64 column %s is not an integer", zP,
          q->zName);
      free(zP);
      return IMP_BAD;
    }
    if (q->eEnc == KS_ENC_DECIMAL) {
      char zNum[32];
      int nNum = q->nWidth > 0 && v >= 0
                     ? snprintf(zNum, sizeof(zNum), "%0*" PRId64, q->nWidth, v)
                     : snprintf(zNum, sizeof(zNum), "%" PRId64, v);
      if (q->nWidth > 0 && (v < 0 || nNum > q->nWidth)) {
        /* as an INSERT refuses it: it would not read back as a number */
        bad(imp, "value %" PRId64 " for INT64 DECIMAL(%d) column %s %s", v,
            q->nWidth, q->zName, v < 0 ? "is negative" : "has too many digits");
        return IMP_BAD;
      }
      if (wcs_buf_append(&imp->tmp, zNum, (size_t)nNum)) return IMP_FAIL;
    } else {
      uint8_t a[8];
      wcs_put64be(a, (uint64_t)v);
      if (wcs_buf_append(&imp->tmp, a, 8)) return IMP_FAIL;
    }
    return IMP_OK;
  }
  case KS_V_FLOAT64: {
    char zNum[64];
    char *zEnd = 0;
    double r;
    uint64_t u;
    uint8_t a[8];
    size_t k;
    if (n == 0 || n >= sizeof(zNum)) goto notnum;
    /* decimal numbers only, as SQL reads text: no nan, inf or hex, which
    ** strtod() would take; one too large is infinite, as in SQL */
    for (k = 0; k < n; k++) {
      if (!strchr("0123456789+-.eE", z[k]) || z[k] == 0) goto notnum;
    }
    memcpy(zNum, z, n);
    zNum[n] = 0;
    r = strtod(zNum, &zEnd);
    if (*zEnd || zEnd == zNum) goto notnum;
    memcpy(&u, &r, 8);
    wcs_put64be(a, u);
    if (wcs_buf_append(&imp->tmp, a, 8)) return IMP_FAIL;
    return IMP_OK;
  notnum : {
    char *zP = printable(z, n);
    bad(imp, "value '%s' for FLOAT64 column %s is not a number", zP, q->zName);
    free(zP);
    return IMP_BAD;
  }
  }
  default:
    if (wcs_buf_append(&imp->tmp, z, n)) return IMP_FAIL;
    return IMP_OK;
  }
}

/* The declared qualifier column named zName in family iFam, or NULL. */
static const ks_qualifier *declared_in(Importer *imp, int iFam,
                                       const char *zQual, size_t nQual) {
  const ks_schema *s = imp->pSchema;
  int i;
  if (!s || iFam < 0 || iFam >= s->nFamily) return 0;
  for (i = s->aFamily[iFam].iFirstQual;
       i < s->aFamily[iFam].iFirstQual + s->aFamily[iFam].nQual; i++) {
    if (strlen(s->aQual[i].zName) == nQual &&
        memcmp(s->aQual[i].zName, zQual, nQual) == 0) {
      return &s->aQual[i];
    }
  }
  return 0;
}

/* Add a cell from text input: typed when the column is declared. */
static int add_text_cell(Importer *imp, int iFam, const char *zQual,
                         size_t nQual, const char *z, size_t n, int64_t iTs) {
  const ks_qualifier *q = declared_in(imp, iFam, zQual, nQual);
  if (q && q->eVType != KS_V_STRING && q->eVType != KS_V_BYTES &&
      q->eVType != KS_V_JSON) {
    int rc = typed_value(imp, q, z, n);
    if (rc) return rc;
    return row_add(imp, iFam, zQual, nQual, iTs, imp->tmp.a, imp->tmp.n);
  }
  return row_add(imp, iFam, zQual, nQual, iTs, z, n);
}

/* Encode the key tuple from per-field text values (azVal[i], anVal[i]). */
static int key_from_fields(Importer *imp, const char *const *azVal,
                           const size_t *anVal) {
  const ks_schema *s = imp->pSchema;
  ks_value aVal[KS_MAX_FIELDS];
  char *zErr = 0;
  int i;
  for (i = 0; i < s->nField; i++) {
    if (!azVal[i])
      return bad(imp, "key field %s is missing", s->aField[i].zName);
    if (s->aField[i].eType == KS_INT64 || s->aField[i].eType == KS_TIMESTAMP) {
      aVal[i].eType = KS_VAL_INT;
      if (!parse_int64(azVal[i], anVal[i], &aVal[i].i)) {
        char *zP = printable(azVal[i], anVal[i]);
        bad(imp, "key field %s: '%s' is not an integer", s->aField[i].zName,
            zP);
        free(zP);
        return IMP_BAD;
      }
    } else {
      aVal[i].eType = KS_VAL_BYTES;
      aVal[i].p = (const uint8_t *)azVal[i];
      aVal[i].n = (int)anVal[i];
    }
  }
  imp->key.n = 0;
  if (ks_key_encode(s, aVal, &imp->key, &zErr) != WCS_OK) {
    bad(imp, "%s", zErr ? zErr : "the key fields do not make a row key");
    free(zErr);
    return IMP_BAD;
  }
  return IMP_OK;
}

/* ==================================================================
** cbt CSV and CSV with a header
** ================================================================== */

/* A column of a CSV file. */
typedef struct CsvCol {
  int eKind;   /* COL_* */
  int iFam;    /* COL_CELL: family index */
  char *zQual; /* COL_CELL: qualifier (malloc'd) */
  size_t nQual;
  int iField; /* COL_FIELD: key field index */
  int bRaw;   /* COL_CELL named family:qualifier: the value's bytes as
              ** written, whatever the column's declared type */
} CsvCol;
#define COL_IGNORE 0
#define COL_KEY    1 /* the raw row key (_key, or cbt's first column) */
#define COL_FIELD  2 /* a key field */
#define COL_TS     3 /* _timestamp */
#define COL_CELL   4 /* family:qualifier */

/* Collect the families a CSV header names, for creating the table: the
** family row of cbt CSV (whose first column is the row key), or the
** family:qualifier names of a CSV header, in any column. cbt CSV with
** column-family= has only that family: its qualifiers are names as they
** are. IMP_BAD for a family name holding a NUL byte, IMP_FAIL when out of
** memory (reported). */
static int csv_header_families(Importer *imp, CsvReader *r, CsvReader *rFam,
                               const char ***pazFam, int *pnFam) {
  const char **az = 0;
  int n = 0, i, rc = IMP_OK;
  int bCbt = imp->o.eFormat == FMT_CBT;
  *pazFam = 0;
  *pnFam = 0;
  if (imp->o.zFamily) {
    az = malloc(sizeof(char *));
    if (!az) goto nomem;
    az[n++] = imp->o.zFamily;
  }
  for (i = 0; i < r->nField && rc == IMP_OK && !(bCbt && !rFam); i++) {
    size_t nF;
    const char *z;
    char *zCopy;
    if (rFam) {
      z = fld(rFam, i, &nF);
    } else {
      const char *zColon;
      z = fld(r, i, &nF);
      zColon = memchr(z, ':', nF);
      if (!zColon) continue;
      nF = (size_t)(zColon - z);
    }
    if ((bCbt && i == 0) || nF == 0) continue;
    if (memchr(z, 0, nF)) {
      char *zP = printable(z, nF);
      rc = bad(imp,
               "column %d: family name \"%s\" holds a NUL byte, which no "
               "family name can",
               i + 1, zP);
      free(zP);
      break;
    }
    zCopy = memdup(z, nF);
    {
      const char **a = realloc(az, sizeof(char *) * (size_t)(n + 1));
      if (!a || !zCopy) {
        free(zCopy);
        if (a) az = a;
        goto nomem;
      }
      az = a;
      az[n++] = zCopy;
    }
  }
  *pazFam = az;
  *pnFam = n;
  return rc;
nomem:
  *pazFam = az;
  *pnFam = n;
  shell_error(imp->p, "out of memory");
  return IMP_FAIL;
}

static void free_families(Importer *imp, const char **az, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (az[i] != imp->o.zFamily) free((char *)az[i]);
  }
  free(az);
}

static int run_csv(Importer *imp, const char *zTable) {
  CsvReader r, rFam;
  CsvCol *aCol = 0;
  int nCol = 0, i, rc = 0, bCbt = imp->o.eFormat == FMT_CBT;
  int bTwoRows = bCbt && !imp->o.zFamily;
  const char **azFam = 0;
  int nFam = 0;
  const char *azKey[KS_MAX_FIELDS];
  size_t anKey[KS_MAX_FIELDS];
  int nWarn = 0;
  int nRec = 0;      /* data records read */
  int iHeadLine = 0; /* line of the (qualifier) header row */
  int iFamLine = 0;  /* line of the cbt family row */
  int bNoCells = 0;  /* the header names no column for cells */

  memset(&r, 0, sizeof(r));
  memset(&rFam, 0, sizeof(rFam));
  r.imp = rFam.imp = imp;

  /* Header row(s). */
  if (bTwoRows) {
    rc = csv_next(&rFam);
    if (rc == IMP_OK && rFam.bEof) goto empty_input;
    if (rc) goto header_error;
    iFamLine = imp->iLine;
  }
  rc = csv_next(&r);
  if (rc == IMP_OK && r.bEof && !bTwoRows) goto empty_input;
  if (rc == IMP_OK && r.bEof) rc = bad(imp, "no header row");
  if (rc) goto header_error;
  iHeadLine = imp->iLine;
  /* cbt's header rows leave the row-key column empty: a row with a key is
  ** data. Taken for a header row, it would name the columns, and its row
  ** would be lost: the first data row of a file with a qualifier row alone,
  ** given without column-family=, most of all. */
  if (bCbt && bTwoRows && rFam.aField[0].n > 0) {
    size_t n;
    const char *z = fld(&rFam, 0, &n);
    char *zP = printable(z, n);
    imp->iLine = iFamLine;
    rc = bad(imp,
             "the family row has a row key (\"%s\"), so it is no header row "
             "(a cbt file's header rows leave the first column empty; for "
             "CSV with a header, give format=csv)",
             zP);
    free(zP);
    goto header_error;
  }
  if (bCbt && r.aField[0].n > 0) {
    size_t n;
    const char *z = fld(&r, 0, &n);
    char *zP = printable(z, n);
    if (bTwoRows) {
      rc = bad(imp,
               "the qualifier row has a row key (\"%s\"), so it is a data "
               "row and line %d the only header row: with a qualifier row "
               "alone, give column-family=NAME, the family of every column "
               "(as cbt import needs)",
               zP, iFamLine);
    } else {
      rc = bad(imp,
               "the qualifier row has a row key (\"%s\"), so it is no "
               "header row (a cbt file's header rows leave the first column "
               "empty)",
               zP);
    }
    free(zP);
    goto header_error;
  }
  if (bTwoRows && rFam.nField != r.nField) {
    rc = bad(imp,
             "the family row has %d fields and the qualifier row %d (without "
             "a family row, give column-family=NAME)",
             rFam.nField, r.nField);
    goto header_error;
  }
  rc = csv_header_families(imp, &r, bTwoRows ? &rFam : 0, &azFam, &nFam);
  if (rc == IMP_BAD) goto header_error;
  if (rc) goto done;
  if (imp_open_table(imp, zTable, azFam, nFam)) {
    rc = IMP_FAIL;
    goto done;
  }
  /* A CSV header must give the row key: _key, or every key field. */
  if (!bCbt) {
    int bKey = 0, nFields = 0, nNeed;
    nNeed = imp->pSchema ? imp->pSchema->nField : 0;
    for (i = 0; i < r.nField; i++) {
      size_t n;
      const char *z = fld(&r, i, &n);
      char *zName = memdup(z, n);
      if (!zName) {
        rc = IMP_FAIL;
        goto done;
      }
      /* (a name holding a NUL byte is neither: strlen() stops short) */
      if (strlen(zName) == n && strcmp(zName, "_key") == 0)
        bKey = 1;
      else if (strlen(zName) == n && nNeed > 0 &&
               ks_schema_field(imp->pSchema, zName) >= 0)
        nFields++;
      free(zName);
    }
    if (!bKey && (nNeed == 0 || nFields < nNeed)) {
      rc = bad(imp, "the header names neither _key nor every key field");
      goto header_error;
    }
  }
  if (imp_add_families(imp, zTable, azFam, nFam)) {
    rc = IMP_FAIL;
    goto done;
  }

  nCol = r.nField;
  aCol = calloc((size_t)nCol, sizeof(CsvCol));
  if (!aCol) {
    rc = IMP_FAIL;
    shell_error(imp->p, "out of memory");
    goto done;
  }
  {
    int iCurFam = -1;
    for (i = 0; i < nCol; i++) {
      size_t n;
      const char *z = fld(&r, i, &n);
      if (bCbt) {
        if (i == 0) {
          aCol[i].eKind = COL_KEY;
          continue;
        }
        if (bTwoRows) {
          size_t nF;
          const char *zF = fld(&rFam, i, &nF);
          if (nF > 0) {
            rc = row_family(imp, zF, nF, &iCurFam);
            if (rc) goto header_error;
          }
          if (iCurFam < 0) {
            rc = bad(imp,
                     "column %d has no family (the family row names a "
                     "family at or left of each column)",
                     i + 1);
            goto header_error;
          }
        } else if (iCurFam < 0) {
          rc =
              row_family(imp, imp->o.zFamily, strlen(imp->o.zFamily), &iCurFam);
          if (rc) goto header_error;
        }
        aCol[i].eKind = COL_CELL;
        aCol[i].iFam = iCurFam;
        aCol[i].zQual = memdup(z, n);
        aCol[i].nQual = n;
        continue;
      }
      /* CSV with a header naming key fields and columns. */
      {
        const char *zColon = memchr(z, ':', n);
        char *zName = memdup(z, n);
        int iField = -1, iQual = -1;
        int bNul; /* the name holds a NUL byte: a qualifier's bytes, as
                  ** they are, never a key field or a declared column */
        if (!zName) {
          rc = IMP_FAIL;
          goto done;
        }
        bNul = strlen(zName) != n;
        if (imp->pSchema && imp->pSchema->nField > 0 && !bNul) {
          iField = ks_schema_field(imp->pSchema, zName);
        }
        if (imp->pSchema && !bNul) {
          iQual = ks_schema_qualifier(imp->pSchema, zName);
        }
        if (!bNul && strcmp(zName, "_key") == 0) {
          aCol[i].eKind = COL_KEY;
        } else if (!bNul && strcmp(zName, "_timestamp") == 0) {
          aCol[i].eKind = COL_TS;
        } else if (iField >= 0) {
          aCol[i].eKind = COL_FIELD;
          aCol[i].iField = iField;
        } else if (zColon) {
          rc = row_family(imp, z, (size_t)(zColon - z), &aCol[i].iFam);
          if (rc) {
            free(zName);
            goto header_error;
          }
          aCol[i].eKind = COL_CELL;
          aCol[i].bRaw = 1;
          aCol[i].nQual = n - (size_t)(zColon - z) - 1;
          aCol[i].zQual = memdup(zColon + 1, aCol[i].nQual);
        } else if (iQual >= 0) {
          aCol[i].eKind = COL_CELL;
          aCol[i].iFam = imp->pSchema->aQual[iQual].iFamily;
          aCol[i].zQual = strdup(imp->pSchema->aQual[iQual].zName);
          aCol[i].nQual = strlen(aCol[i].zQual);
        } else if (imp->o.zFamily) {
          rc = row_family(imp, imp->o.zFamily, strlen(imp->o.zFamily),
                          &aCol[i].iFam);
          if (rc) {
            free(zName);
            goto header_error;
          }
          aCol[i].eKind = COL_CELL;
          aCol[i].zQual = memdup(z, n);
          aCol[i].nQual = n;
        } else {
          char *zP = printable(z, n);
          rc = bad(imp,
                   "column \"%s\" is not a key field, _key, _timestamp or "
                   "family:qualifier (or give family=NAME)",
                   zP);
          free(zP);
          free(zName);
          goto header_error;
        }
        free(zName);
      }
    }
  }
  for (i = 0; i < nCol; i++) {
    if (aCol[i].eKind == COL_CELL && !aCol[i].zQual) {
      rc = IMP_FAIL;
      shell_error(imp->p, "out of memory");
      goto done;
    }
  }
  /* Each column once: a file that would lose one of two values is refused
  ** at its header. */
  {
    int nCell = 0, j;
    for (i = 0; i < nCol; i++) {
      if (aCol[i].eKind == COL_CELL) nCell++;
      if (aCol[i].eKind == COL_CELL && aCol[i].nQual > WCS_MAX_QUALIFIER) {
        rc = bad(imp, "column %d: qualifier of %zu bytes (the limit is %d)",
                 i + 1, aCol[i].nQual, WCS_MAX_QUALIFIER);
        goto header_error;
      }
      for (j = 0; j < i; j++) {
        const CsvCol *a = &aCol[i], *b = &aCol[j];
        if (a->eKind != b->eKind || a->eKind == COL_IGNORE) continue;
        if ((a->eKind == COL_FIELD && a->iField != b->iField) ||
            (a->eKind == COL_CELL &&
             (a->iFam != b->iFam || a->nQual != b->nQual ||
              memcmp(a->zQual, b->zQual, a->nQual) != 0))) {
          continue;
        }
        {
          size_t n;
          const char *z = fld(&r, i, &n);
          char *zP = printable(z, n);
          rc = bad(imp, "columns %d and %d are both \"%s\"", j + 1, i + 1,
                   zP);
          free(zP);
        }
        goto header_error;
      }
    }
    /* No column for cells: refused at the first record, as a file that
    ** would import nothing; a header alone, which .export writes for a
    ** table without cells, imports no rows. */
    bNoCells = nCell == 0;
  }
  /* Records. */
  for (;;) {
    int bKeyCol = 0;
    if (shell_interrupted) {
      shell_error(imp->p, "interrupted");
      rc = IMP_FAIL;
      break;
    }
    rc = csv_next(&r);
    if (rc == IMP_OK && r.bEof) break;
    if (rc == IMP_OK && bNoCells) {
      imp->iLine = iHeadLine;
      rc = bad(imp, "the header names no column for cells (family:qualifier, "
                    "a declared column, or any name with family=NAME)");
      goto header_error;
    }
    if (rc == IMP_OK && r.nField != nCol) {
      rc = bad(imp, "%d fields, expected %d as in the header", r.nField, nCol);
    }
    row_reset(imp);
    for (i = 0; i < KS_MAX_FIELDS; i++)
      azKey[i] = 0;
    /* Key and row timestamp first. */
    for (i = 0; i < nCol && rc == IMP_OK; i++) {
      size_t n;
      const char *z = fld(&r, i, &n);
      if (aCol[i].eKind == COL_KEY) {
        bKeyCol = 1;
        imp->key.n = 0;
        if (wcs_buf_append(&imp->key, z, n)) rc = IMP_FAIL;
      } else if (aCol[i].eKind == COL_FIELD) {
        azKey[aCol[i].iField] = z;
        anKey[aCol[i].iField] = n;
      } else if (aCol[i].eKind == COL_TS && n > 0) {
        if (!parse_int64(z, n, &imp->iRowTs) || imp->iRowTs < 0) {
          rc = bad(imp, "_timestamp must be microseconds since the epoch");
        }
      }
    }
    if (rc == IMP_OK && !bKeyCol) rc = key_from_fields(imp, azKey, anKey);
    if (rc == IMP_OK && bCbt && !bTwoRows && imp->key.n == 0 && nRec == 0) {
      /* cbt import's rule: column-family= means no family row */
      rc = bad(imp, "empty row key: a second header row? with a family row, "
                    "leave out column-family=");
    }
    nRec++;
    for (i = 0; i < nCol && rc == IMP_OK; i++) {
      size_t n, nVal;
      int64_t iTs;
      const char *z = fld(&r, i, &n);
      if (aCol[i].eKind != COL_CELL) continue;
      if (n == 0 && !r.aField[i].bQuoted) continue; /* no cell */
      split_ts(imp, z, n, &nVal, &iTs);
      if (bCbt || aCol[i].bRaw) {
        rc = row_add(imp, aCol[i].iFam, aCol[i].zQual, aCol[i].nQual, iTs, z,
                     nVal);
      } else {
        rc = add_text_cell(imp, aCol[i].iFam, aCol[i].zQual, aCol[i].nQual, z,
                           nVal, iTs);
      }
    }
    if (rc == IMP_OK) rc = row_finish(imp);
    if (rc == IMP_BAD && imp->o.bSkipBad && !imp->bNoSkip) {
      imp->nBad++;
      if (nWarn++ < MAX_WARNINGS) {
        fprintf(stderr, "%s line %d: %s (skipped)\n", imp->zFile, imp->iLine,
                imp->zReason);
      }
      rc = IMP_OK;
      continue;
    }
    if (rc) break;
    progress(imp, 0);
  }
  goto done;

empty_input:
  /* No record at all: an empty file, or blank lines (what .export writes
  ** for a table without cells). Nothing to import, and no error: the
  ** table must exist, or be made with column-family=NAME. */
  {
    const char *azOne[1];
    int nOne = 0;
    if (imp->o.zFamily) azOne[nOne++] = imp->o.zFamily;
    rc = imp_open_table(imp, zTable, azOne, nOne) ||
                 imp_add_families(imp, zTable, azOne, nOne)
             ? IMP_FAIL
             : IMP_OK;
  }
  goto done;

header_error:
  /* (a read error is reported by import_run, not what it made of it) */
  if (rc == IMP_BAD && !imp->iReadErrno) {
    shell_error(imp->p, "%s line %d: %s", imp->zFile, imp->iLine, imp->zReason);
    rc = IMP_FAIL;
  }
done:
  for (i = 0; i < nCol; i++)
    free(aCol[i].zQual);
  free(aCol);
  free_families(imp, azFam, nFam);
  wcs_buf_free(&r.rec);
  wcs_buf_free(&rFam.rec);
  free(r.aField);
  free(rFam.aField);
  return rc;
}

/* ==================================================================
** JSON lines and DynamoDB exports, parsed by SQLite's json_tree()
** ================================================================== */

/* One node of a parsed JSON line. */
typedef struct JNode {
  int id, parent; /* json_tree ids */
  char *zKey;     /* member name (NULL for array elements) */
  int eType;      /* J_* */
  char *z;        /* text: decoded string, number source text, or the
                  ** JSON text of an object/array */
  size_t n;
  int iFirst, iNext; /* first child / next sibling (indexes), -1 none */
} JNode;
#define J_NULL   0
#define J_TRUE   1
#define J_FALSE  2
#define J_NUMBER 3
#define J_TEXT   4
#define J_ARRAY  5
#define J_OBJECT 6

typedef struct JDoc {
  JNode *a;
  int n, nAlloc;
} JDoc;

static void jdoc_clear(JDoc *d) {
  int i;
  for (i = 0; i < d->n; i++) {
    free(d->a[i].zKey);
    free(d->a[i].z);
  }
  d->n = 0;
}

static int json_open(Importer *imp) {
  if (imp->jdb) return 0;
  if (sqlite3_open(":memory:", &imp->jdb) != SQLITE_OK ||
      sqlite3_prepare_v2(imp->jdb,
                         "SELECT id, parent, key, type, CASE WHEN type IN "
                         "('integer','real') THEN NULL ELSE value END "
                         "FROM json_tree(?1) ORDER BY id",
                         -1, &imp->pTree, 0) != SQLITE_OK ||
      sqlite3_prepare_v2(imp->jdb, "SELECT json_valid(?1)", -1, &imp->pValid,
                         0) != SQLITE_OK) {
    return shell_error(imp->p, "cannot open SQLite's JSON functions: %s",
                       imp->jdb ? sqlite3_errmsg(imp->jdb) : "no memory");
  }
  return 0;
}

/* Whether JSON text z[0..n) escapes a NUL (\u0000) in a string or name:
** SQLite's JSON functions end a string there, so the bytes after it would
** be lost without a word. */
static int json_has_nul(const char *z, size_t n) {
  size_t i;
  int bStr = 0;
  for (i = 0; i < n; i++) {
    if (!bStr) {
      bStr = z[i] == '"';
    } else if (z[i] == '"') {
      bStr = 0;
    } else if (z[i] == '\\' && i + 1 < n) {
      if (z[i + 1] == 'u' && i + 5 < n && memcmp(z + i + 2, "0000", 4) == 0) {
        return 1;
      }
      i++; /* the escaped character */
    }
  }
  return 0;
}

/* Give every number node of d its text as written (1.50 stays "1.50", a
** 20-digit integer keeps its digits). json_tree()'s value column holds
** numbers as SQL integers and reals, which lose that, and a path lookup
** (`->` fullkey) finds no member whose name holds a '"'; so the numbers
** are read from the object's JSON text as json_tree() renders it (the
** root's value column: numbers as written, strings quoted). Outside
** strings a number is the only token holding a digit or '-', and the
** numbers come in the order of the nodes' ids, which is document order.
** IMP_BAD if the two do not match, rather than a number stored wrong. */
static int json_number_texts(Importer *imp, JDoc *d) {
  const char *z = d->a[0].z;
  size_t n = d->a[0].n, i = 0;
  int k = 0;
  if (!z) return IMP_OK; /* not an object: reported by the caller */
  for (;;) {
    size_t iStart;
    while (i < n && z[i] != '-' && !(z[i] >= '0' && z[i] <= '9')) {
      if (z[i] == '"') {
        for (i++; i < n && z[i] != '"'; i++) {
          if (z[i] == '\\') i++;
        }
      }
      i++;
    }
    while (k < d->n && d->a[k].eType != J_NUMBER)
      k++;
    if (i >= n || k >= d->n) break;
    iStart = i;
    while (i < n && z[i] && strchr("0123456789+-.eE", z[i]))
      i++;
    free(d->a[k].z);
    d->a[k].z = memdup(z + iStart, i - iStart);
    d->a[k].n = i - iStart;
    if (!d->a[k].z) {
      shell_error(imp->p, "out of memory");
      return IMP_FAIL;
    }
    k++;
  }
  if (i < n || k < d->n) {
    return bad(imp, "cannot match the numbers of the line to SQLite's "
                    "reading of it; write them as strings");
  }
  return IMP_OK;
}

/* Parse zLine into d. IMP_BAD if it is not a JSON object. */
static int json_parse(Importer *imp, const char *zLine, size_t nLine, JDoc *d) {
  int rc = IMP_OK, i, bValid = 0;
  jdoc_clear(d);
  if (json_has_nul(zLine, nLine)) {
    return bad(imp, "a string holds \\u0000, which SQLite's JSON functions "
                    "cut short there; give such bytes as {\"$hex\": \"...\"}");
  }
  sqlite3_bind_text(imp->pValid, 1, zLine, (int)nLine, SQLITE_STATIC);
  if (sqlite3_step(imp->pValid) == SQLITE_ROW) {
    bValid = sqlite3_column_int(imp->pValid, 0);
  }
  sqlite3_reset(imp->pValid);
  if (!bValid) return bad(imp, "not valid JSON");
  sqlite3_bind_text(imp->pTree, 1, zLine, (int)nLine, SQLITE_STATIC);
  while (sqlite3_step(imp->pTree) == SQLITE_ROW) {
    JNode *nd;
    const char *zType = (const char *)sqlite3_column_text(imp->pTree, 3);
    if (d->n == d->nAlloc) {
      int nNew = d->nAlloc ? d->nAlloc * 2 : 64;
      JNode *a = realloc(d->a, sizeof(JNode) * (size_t)nNew);
      if (!a) {
        rc = IMP_FAIL;
        break;
      }
      d->a = a;
      d->nAlloc = nNew;
    }
    nd = &d->a[d->n++];
    memset(nd, 0, sizeof(*nd));
    nd->id = sqlite3_column_int(imp->pTree, 0);
    nd->parent = sqlite3_column_type(imp->pTree, 1) == SQLITE_NULL
                     ? -1
                     : sqlite3_column_int(imp->pTree, 1);
    nd->iFirst = nd->iNext = -1;
    if (sqlite3_column_type(imp->pTree, 2) == SQLITE_TEXT) {
      nd->zKey = strdup((const char *)sqlite3_column_text(imp->pTree, 2));
    }
    if (!zType) zType = "null";
    if (strcmp(zType, "true") == 0)
      nd->eType = J_TRUE;
    else if (strcmp(zType, "false") == 0)
      nd->eType = J_FALSE;
    else if (strcmp(zType, "integer") == 0 || strcmp(zType, "real") == 0)
      nd->eType = J_NUMBER;
    else if (strcmp(zType, "text") == 0)
      nd->eType = J_TEXT;
    else if (strcmp(zType, "array") == 0)
      nd->eType = J_ARRAY;
    else if (strcmp(zType, "object") == 0)
      nd->eType = J_OBJECT;
    else
      nd->eType = J_NULL;
    if (sqlite3_column_type(imp->pTree, 4) != SQLITE_NULL) {
      const void *pv = sqlite3_column_text(imp->pTree, 4);
      nd->n = (size_t)sqlite3_column_bytes(imp->pTree, 4);
      nd->z = malloc(nd->n + 1);
      if (!nd->z) {
        rc = IMP_FAIL;
        break;
      }
      memcpy(nd->z, pv, nd->n);
      nd->z[nd->n] = 0;
    }
  }
  sqlite3_reset(imp->pTree);
  if (rc == IMP_FAIL) {
    shell_error(imp->p, "out of memory");
    return rc;
  }
  /* Link children to parents, keeping source order: walk backwards and
  ** prepend. json_tree ids are node indexes, so an array maps id -> node. */
  if (d->n > 0) {
    int maxId = 0, *aMap;
    for (i = 0; i < d->n; i++) {
      if (d->a[i].id > maxId) maxId = d->a[i].id;
    }
    aMap = malloc(sizeof(int) * (size_t)(maxId + 1));
    if (!aMap) {
      shell_error(imp->p, "out of memory");
      return IMP_FAIL;
    }
    for (i = 0; i <= maxId; i++)
      aMap[i] = -1;
    for (i = 0; i < d->n; i++) {
      if (d->a[i].id >= 0) aMap[d->a[i].id] = i;
    }
    for (i = d->n - 1; i >= 1; i--) {
      int j = d->a[i].parent >= 0 && d->a[i].parent <= maxId
                  ? aMap[d->a[i].parent]
                  : -1;
      if (j >= 0) {
        d->a[i].iNext = d->a[j].iFirst;
        d->a[j].iFirst = i;
      }
    }
    free(aMap);
  }
  if (d->n == 0 || d->a[0].eType != J_OBJECT) {
    return bad(imp, "not a JSON object");
  }
  return json_number_texts(imp, d);
}

static int jchild(JDoc *d, int iNode, const char *zKey) {
  int i;
  for (i = d->a[iNode].iFirst; i >= 0; i = d->a[i].iNext) {
    if (d->a[i].zKey && strcmp(d->a[i].zKey, zKey) == 0) return i;
  }
  return -1;
}

/* ---- base64 (DynamoDB B and BS values) */

static int b64val(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

/* Decode base64 z[0..n-1], appending to pOut. 0, or 1 if malformed. */
static int base64_decode(const char *z, size_t n, wcs_buf *pOut) {
  uint32_t acc = 0;
  int nBits = 0;
  size_t i;
  while (n > 0 && z[n - 1] == '=')
    n--;
  for (i = 0; i < n; i++) {
    int v = b64val((unsigned char)z[i]);
    if (v < 0) return 1;
    acc = acc << 6 | (uint32_t)v;
    nBits += 6;
    if (nBits >= 8) {
      uint8_t b = (uint8_t)(acc >> (nBits - 8));
      nBits -= 8;
      if (wcs_buf_append(pOut, &b, 1)) return 1;
    }
  }
  return nBits >= 6 ? 1 : 0; /* a lone 6-bit group is not base64 */
}

/* 1 if z[0..n-1] is a JSON-compatible decimal number. */
static int is_number(const char *z, size_t n) {
  size_t i = 0;
  int nDigit = 0;
  if (i < n && (z[i] == '-' || z[i] == '+')) i++;
  while (i < n && z[i] >= '0' && z[i] <= '9')
    i++, nDigit++;
  if (i < n && z[i] == '.') {
    i++;
    while (i < n && z[i] >= '0' && z[i] <= '9')
      i++, nDigit++;
  }
  if (nDigit == 0) return 0;
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    int nExp = 0;
    i++;
    if (i < n && (z[i] == '-' || z[i] == '+')) i++;
    while (i < n && z[i] >= '0' && z[i] <= '9')
      i++, nExp++;
    if (nExp == 0) return 0;
  }
  return i == n;
}

/* Append a JSON number from DynamoDB's decimal text, which is_number()
** accepted: JSON has no leading '+', no leading zeros, and needs digits on
** both sides of a '.' ("-007.50" is -7.50, ".5" 0.5, "5." 5). */
static int append_json_number(wcs_buf *b, const char *z, size_t n) {
  size_t i = 0, j;
  int rc = 0;
  if (i < n && (z[i] == '+' || z[i] == '-')) {
    if (z[i] == '-') rc = wcs_buf_append(b, "-", 1);
    i++;
  }
  for (j = i; j < n && z[j] >= '0' && z[j] <= '9'; j++) {
  }
  while (i + 1 < j && z[i] == '0') /* keep one digit */
    i++;
  rc = rc ||
       (i == j ? wcs_buf_append(b, "0", 1) : wcs_buf_append(b, z + i, j - i));
  i = j;
  if (i < n && z[i] == '.') {
    for (j = i + 1; j < n && z[j] >= '0' && z[j] <= '9'; j++) {
    }
    if (j > i + 1) rc = rc || wcs_buf_append(b, z + i, j - i);
    i = j;
  }
  if (i < n) rc = rc || wcs_buf_append(b, z + i, n - i); /* the exponent */
  return rc;
}

/* Convert a DynamoDB typed value (an object with one type member) to plain
** JSON text, appended to b. */
static int ddb_to_json(Importer *imp, JDoc *d, int iNode, wcs_buf *b,
                       int nDepth) {
  JNode *nd = &d->a[iNode];
  int iT = nd->iFirst, i, rc = IMP_OK;
  const char *zT;
  JNode *v;
  if (nDepth > 64) return bad(imp, "attribute nested more than 64 deep");
  if (nd->eType != J_OBJECT || iT < 0 || d->a[iT].iNext >= 0 ||
      !d->a[iT].zKey) {
    return bad(imp,
               "attribute %s: a DynamoDB value is an object with one "
               "type member (S, N, B, BOOL, NULL, M, L, SS, NS, BS)",
               nd->zKey ? nd->zKey : "(element)");
  }
  zT = d->a[iT].zKey;
  v = &d->a[iT];
  if (strcmp(zT, "S") == 0 || strcmp(zT, "B") == 0) {
    if (v->eType != J_TEXT) return bad(imp, "%s value is not a string", zT);
    return shell_json_string(b, v->z, v->n) ? IMP_FAIL : IMP_OK;
  }
  if (strcmp(zT, "N") == 0) {
    if (v->eType != J_TEXT || !is_number(v->z, v->n)) {
      return bad(imp, "N value is not a decimal number in a string");
    }
    return append_json_number(b, v->z, v->n) ? IMP_FAIL : IMP_OK;
  }
  if (strcmp(zT, "BOOL") == 0) {
    if (v->eType != J_TRUE && v->eType != J_FALSE) {
      return bad(imp, "BOOL value is not true or false");
    }
    return wcs_buf_append(b, v->eType == J_TRUE ? "true" : "false",
                          v->eType == J_TRUE ? 4 : 5)
               ? IMP_FAIL
               : IMP_OK;
  }
  if (strcmp(zT, "NULL") == 0) {
    return wcs_buf_append(b, "null", 4) ? IMP_FAIL : IMP_OK;
  }
  if (strcmp(zT, "M") == 0) {
    int bFirst = 1;
    if (v->eType != J_OBJECT) return bad(imp, "M value is not an object");
    if (wcs_buf_append(b, "{", 1)) return IMP_FAIL;
    for (i = v->iFirst; i >= 0 && rc == IMP_OK; i = d->a[i].iNext) {
      JNode *c = &d->a[i];
      if (!bFirst && wcs_buf_append(b, ",", 1)) return IMP_FAIL;
      bFirst = 0;
      if (shell_json_string(b, c->zKey, strlen(c->zKey)) ||
          wcs_buf_append(b, ":", 1)) {
        return IMP_FAIL;
      }
      rc = ddb_to_json(imp, d, i, b, nDepth + 1);
    }
    if (rc == IMP_OK && wcs_buf_append(b, "}", 1)) return IMP_FAIL;
    return rc;
  }
  if (strcmp(zT, "L") == 0 || strcmp(zT, "SS") == 0 || strcmp(zT, "NS") == 0 ||
      strcmp(zT, "BS") == 0) {
    int bFirst = 1;
    if (v->eType != J_ARRAY) return bad(imp, "%s value is not an array", zT);
    if (wcs_buf_append(b, "[", 1)) return IMP_FAIL;
    for (i = v->iFirst; i >= 0 && rc == IMP_OK; i = d->a[i].iNext) {
      JNode *c = &d->a[i];
      if (!bFirst && wcs_buf_append(b, ",", 1)) return IMP_FAIL;
      bFirst = 0;
      if (zT[0] == 'L') {
        rc = ddb_to_json(imp, d, i, b, nDepth + 1);
      } else if (c->eType != J_TEXT) {
        rc = bad(imp, "%s elements must be strings", zT);
      } else if (zT[0] == 'N') {
        if (!is_number(c->z, c->n))
          rc = bad(imp, "NS element is not a number");
        else if (append_json_number(b, c->z, c->n))
          rc = IMP_FAIL;
      } else if (shell_json_string(b, c->z, c->n)) {
        rc = IMP_FAIL;
      }
    }
    if (rc == IMP_OK && wcs_buf_append(b, "]", 1)) return IMP_FAIL;
    return rc;
  }
  return bad(imp, "unknown DynamoDB type \"%s\"", zT);
}

/* The cell bytes of a top-level DynamoDB attribute into b: S text, N the
** exact decimal text, B the decoded bytes, BOOL true/false, containers as
** JSON. *pbSkip is set for NULL (no cell: absence is Bigtable's NULL). */
static int ddb_cell_bytes(Importer *imp, JDoc *d, int iAttr, wcs_buf *b,
                          int *pbSkip) {
  JNode *nd = &d->a[iAttr];
  int iT = nd->iFirst;
  JNode *v;
  b->n = 0;
  *pbSkip = 0;
  if (nd->eType != J_OBJECT || iT < 0 || d->a[iT].iNext >= 0 ||
      !d->a[iT].zKey) {
    return ddb_to_json(imp, d, iAttr, b, 0); /* reports the error */
  }
  v = &d->a[iT];
  if (strcmp(v->zKey, "S") == 0 && v->eType == J_TEXT) {
    return wcs_buf_append(b, v->z, v->n) ? IMP_FAIL : IMP_OK;
  }
  if (strcmp(v->zKey, "N") == 0 && v->eType == J_TEXT) {
    if (!is_number(v->z, v->n)) {
      return bad(imp, "attribute %s: N value \"%s\" is not a number", nd->zKey,
                 v->z);
    }
    return wcs_buf_append(b, v->z, v->n) ? IMP_FAIL : IMP_OK;
  }
  if (strcmp(v->zKey, "B") == 0 && v->eType == J_TEXT) {
    if (base64_decode(v->z, v->n, b)) {
      return bad(imp, "attribute %s: B value is not base64", nd->zKey);
    }
    return IMP_OK;
  }
  if (strcmp(v->zKey, "BOOL") == 0 &&
      (v->eType == J_TRUE || v->eType == J_FALSE)) {
    return wcs_buf_append(b, v->eType == J_TRUE ? "true" : "false",
                          v->eType == J_TRUE ? 4 : 5)
               ? IMP_FAIL
               : IMP_OK;
  }
  if (strcmp(v->zKey, "NULL") == 0) {
    *pbSkip = 1;
    return IMP_OK;
  }
  return ddb_to_json(imp, d, iAttr, b, 0);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The bytes a generic JSON member contributes as a cell or key part:
** strings as their text, {"$hex": "..."} (the SQL family columns' form,
** which .export writes) or {"hex": "..."} as the bytes, numbers as their
** source text, other values as JSON text. */
static int json_member_bytes(Importer *imp, JDoc *d, int iNode, wcs_buf *b,
                             int *pbSkip) {
  JNode *nd = &d->a[iNode];
  b->n = 0;
  *pbSkip = 0;
  switch (nd->eType) {
  case J_NULL:
    *pbSkip = 1;
    return IMP_OK;
  case J_TRUE:
    return wcs_buf_append(b, "true", 4) ? IMP_FAIL : IMP_OK;
  case J_FALSE:
    return wcs_buf_append(b, "false", 5) ? IMP_FAIL : IMP_OK;
  case J_OBJECT: {
    int iHex = jchild(d, iNode, "$hex");
    if (iHex < 0) iHex = jchild(d, iNode, "hex");
    if (iHex >= 0 && d->a[iNode].iFirst == iHex && d->a[iHex].iNext < 0 &&
        d->a[iHex].eType == J_TEXT) {
      JNode *h = &d->a[iHex];
      size_t i;
      for (i = 0; i < h->n; i += 2) {
        int v1 = hexval(h->z[i]);
        int v2 = i + 1 < h->n ? hexval(h->z[i + 1]) : -1;
        uint8_t byte;
        if (v1 < 0 || v2 < 0) {
          char *zP = printable(h->z, h->n);
          bad(imp, "\"%s\": %s in \"%s\" (give two hex digits per byte)",
              nd->zKey ? nd->zKey : "hex",
              h->n % 2 ? "odd number of hex digits" : "bad hex digit", zP);
          free(zP);
          return IMP_BAD;
        }
        byte = (uint8_t)(v1 << 4 | v2);
        if (wcs_buf_append(b, &byte, 1)) return IMP_FAIL;
      }
      return IMP_OK;
    }
    /* other objects are stored as JSON text */
    return wcs_buf_append(b, nd->z ? nd->z : "", nd->n) ? IMP_FAIL : IMP_OK;
  }
  default:
    return wcs_buf_append(b, nd->z ? nd->z : "", nd->n) ? IMP_FAIL : IMP_OK;
  }
}

/* Fill the row key from the key= template: {name} is replaced by the
** bytes of member/attribute `name`; {{ and }} are literal braces. */
static int key_from_template(Importer *imp, JDoc *d, int bDdb, int iItem,
                             wcs_buf *b) {
  const char *z = imp->o.zKey;
  imp->key.n = 0;
  while (*z) {
    if (z[0] == '{' && z[1] == '{') {
      if (wcs_buf_append(&imp->key, "{", 1)) return IMP_FAIL;
      z += 2;
    } else if (z[0] == '}' && z[1] == '}') {
      if (wcs_buf_append(&imp->key, "}", 1)) return IMP_FAIL;
      z += 2;
    } else if (z[0] == '{') {
      const char *zEnd = strchr(z, '}');
      char zName[256];
      int iAttr, rc, bSkip;
      if (!zEnd || zEnd - z - 1 >= (long)sizeof(zName)) {
        return bad(imp, "key template: unclosed {");
      }
      memcpy(zName, z + 1, (size_t)(zEnd - z - 1));
      zName[zEnd - z - 1] = 0;
      iAttr = jchild(d, iItem, zName);
      if (iAttr < 0) return bad(imp, "no attribute \"%s\" for the key", zName);
      rc = bDdb ? ddb_cell_bytes(imp, d, iAttr, b, &bSkip)
                : json_member_bytes(imp, d, iAttr, b, &bSkip);
      if (rc) return rc;
      if (bSkip) return bad(imp, "attribute \"%s\" of the key is null", zName);
      if (wcs_buf_append(&imp->key, b->a, b->n)) return IMP_FAIL;
      z = zEnd + 1;
    } else {
      if (wcs_buf_append(&imp->key, z, 1)) return IMP_FAIL;
      z++;
    }
  }
  return IMP_OK;
}

/* 1 if attribute zName appears as {zName} in the key template. */
static int in_template(Importer *imp, const char *zName) {
  const char *z = imp->o.zKey;
  size_t n = strlen(zName);
  while (z && (z = strchr(z, '{')) != 0) {
    if (z[1] == '{') {
      z += 2;
      continue;
    }
    if (strncmp(z + 1, zName, n) == 0 && z[1 + n] == '}') return 1;
    z++;
  }
  return 0;
}

static const MapEntry *find_map(Importer *imp, const char *zAttr) {
  int i;
  for (i = 0; i < imp->o.nMap; i++) {
    if (strcmp(imp->o.aMap[i].zAttr, zAttr) == 0) return &imp->o.aMap[i];
  }
  return 0;
}

/* Where a member/attribute goes: family index and qualifier. IMP_BAD if
** nowhere. */
static int route_member(Importer *imp, const char *zName, int *piFam,
                        const char **pzQual) {
  const MapEntry *m = find_map(imp, zName);
  const char *zColon;
  int iQual;
  if (m) {
    *pzQual = m->zQual ? m->zQual : zName;
    return row_family(imp, m->zFamily, strlen(m->zFamily), piFam);
  }
  if ((zColon = strchr(zName, ':')) != 0 && zColon != zName) {
    *pzQual = zColon + 1;
    return row_family(imp, zName, (size_t)(zColon - zName), piFam);
  }
  if (imp->pSchema && (iQual = ks_schema_qualifier(imp->pSchema, zName)) >= 0) {
    *piFam = imp->pSchema->aQual[iQual].iFamily;
    *pzQual = imp->pSchema->aQual[iQual].zName;
    return IMP_OK;
  }
  if (imp->o.zFamily) {
    *pzQual = zName;
    return row_family(imp, imp->o.zFamily, strlen(imp->o.zFamily), piFam);
  }
  return bad(imp,
             "\"%s\" has no family: map it (map=%s:FAMILY[:QUALIFIER]), name "
             "it FAMILY:QUALIFIER, or give family=NAME",
             zName, zName);
}

/* ---- one value per column: JSON leaves duplicate member names open, and
** a second value for one column would overwrite the first unseen */

static int name_cmp(const void *pA, const void *pB) {
  return strcmp(*(const char *const *)pA, *(const char *const *)pB);
}

/* IMP_BAD if two members of object iObj have the same name. */
static int json_unique_members(Importer *imp, JDoc *d, int iObj) {
  const char **az;
  int n = 0, i, rc = IMP_OK;
  for (i = d->a[iObj].iFirst; i >= 0; i = d->a[i].iNext)
    n++;
  if (n < 2) return IMP_OK;
  az = malloc(sizeof(char *) * (size_t)n);
  if (!az) {
    shell_error(imp->p, "out of memory");
    return IMP_FAIL;
  }
  n = 0;
  for (i = d->a[iObj].iFirst; i >= 0; i = d->a[i].iNext) {
    if (d->a[i].zKey) az[n++] = d->a[i].zKey;
  }
  qsort(az, (size_t)n, sizeof(char *), name_cmp);
  for (i = 1; i < n && rc == IMP_OK; i++) {
    if (strcmp(az[i - 1], az[i]) == 0) {
      char *zP = printable(az[i], strlen(az[i]));
      rc = bad(imp,
               "member \"%s\" appears twice, and one of its values would be "
               "lost; give each member once",
               zP);
      free(zP);
    }
  }
  free(az);
  return rc;
}

/* How a message names node i (sqlite3_malloc'd): "name" for a member of
** the line's object or of a DynamoDB Item, "q" in "f" for a member of a
** family object, "cells"[k] for an element of the cells array. */
static char *member_desc(JDoc *d, int i) {
  int iPar = -1, j, k = 0;
  char *zName, *zPar, *z;
  for (j = 0; j < d->n; j++) {
    if (d->a[j].id == d->a[i].parent) {
      iPar = j;
      break;
    }
  }
  zPar = iPar >= 0 && d->a[iPar].zKey
             ? printable(d->a[iPar].zKey, strlen(d->a[iPar].zKey))
             : strdup("?");
  if (!d->a[i].zKey) {
    for (j = iPar >= 0 ? d->a[iPar].iFirst : -1; j >= 0 && j != i;
         j = d->a[j].iNext) {
      k++;
    }
    z = sqlite3_mprintf("\"%s\"[%d]", zPar ? zPar : "?", k);
    free(zPar);
    return z;
  }
  zName = printable(d->a[i].zKey, strlen(d->a[i].zKey));
  if (iPar <= 0 || (d->a[iPar].parent == d->a[0].id && d->a[iPar].zKey &&
                    strcmp(d->a[iPar].zKey, "Item") == 0)) {
    z = sqlite3_mprintf("\"%s\"", zName ? zName : "?");
  } else {
    z = sqlite3_mprintf("\"%s\" in \"%s\"", zName ? zName : "?",
                        zPar ? zPar : "?");
  }
  free(zName);
  free(zPar);
  return z;
}

static const Importer *gCellSort; /* the pending row cell_cmp() sorts */

/* Order of pending cells aCell[*pA] and aCell[*pB]: by family, qualifier
** and timestamp, then by position. */
static int cell_cmp(const void *pA, const void *pB) {
  int iA = *(const int *)pA, iB = *(const int *)pB, c;
  const PendCell *a = &gCellSort->aCell[iA], *b = &gCellSort->aCell[iB];
  size_t n = a->nQual < b->nQual ? a->nQual : b->nQual;
  if (a->iFam != b->iFam) return a->iFam < b->iFam ? -1 : 1;
  c = n ? memcmp(gCellSort->arena.a + a->oQual, gCellSort->arena.a + b->oQual,
                 n)
        : 0;
  if (c) return c;
  if (a->nQual != b->nQual) return a->nQual < b->nQual ? -1 : 1;
  if (a->iTs != b->iTs) return a->iTs < b->iTs ? -1 : 1;
  return iA < iB ? -1 : iA > iB;
}

/* IMP_BAD if two cells of the pending row are one column at one
** timestamp ({"f:q": 1, "f": {"q": 2}}, two map= entries onto one
** column, two "cells" entries alike), naming the two members. */
static int json_unique_cells(Importer *imp, JDoc *d) {
  int *aIdx, i, rc = IMP_OK;
  if (imp->nCell < 2) return IMP_OK;
  aIdx = malloc(sizeof(int) * (size_t)imp->nCell);
  if (!aIdx) {
    shell_error(imp->p, "out of memory");
    return IMP_FAIL;
  }
  for (i = 0; i < imp->nCell; i++)
    aIdx[i] = i;
  gCellSort = imp;
  qsort(aIdx, (size_t)imp->nCell, sizeof(int), cell_cmp);
  gCellSort = 0;
  for (i = 1; i < imp->nCell && rc == IMP_OK; i++) {
    const PendCell *a = &imp->aCell[aIdx[i - 1]], *b = &imp->aCell[aIdx[i]];
    wcs_family_info fi;
    char *zA, *zB, *zQ, zTs[48];
    if (a->iFam != b->iFam || a->nQual != b->nQual || a->iTs != b->iTs ||
        (a->nQual &&
         memcmp(imp->arena.a + a->oQual, imp->arena.a + b->oQual, a->nQual))) {
      continue;
    }
    if (wcs_table_family(imp->pTab, a->iFam, &fi) != WCS_OK) fi.zName = "?";
    zA = a->iSrc >= 0 ? member_desc(d, a->iSrc) : 0;
    zB = b->iSrc >= 0 ? member_desc(d, b->iSrc) : 0;
    zQ = printable(arena_at(imp, a->oQual), a->nQual);
    zTs[0] = 0;
    if (a->iTs != WCS_TS_NOW) {
      snprintf(zTs, sizeof(zTs), " at timestamp %" PRId64, a->iTs);
    }
    rc = bad(imp,
             "%s and %s both give column %s:%s%s a value, and one would be "
             "lost; give each column once",
             zA ? zA : "two members", zB ? zB : "another", fi.zName,
             zQ ? zQ : "?", zTs);
    sqlite3_free(zA);
    sqlite3_free(zB);
    free(zQ);
  }
  free(aIdx);
  return rc;
}

/* The "cells" form written by .export ... jsonl: {"_key": ..., "cells":
** [{"family", "qualifier", "timestamp", "value"}, ...]}. */
static int jsonl_cells(Importer *imp, JDoc *d, int iCells, wcs_buf *b) {
  int iC, rc = IMP_OK, bSkip;
  for (iC = d->a[iCells].iFirst; iC >= 0 && rc == IMP_OK; iC = d->a[iC].iNext) {
    int iF = jchild(d, iC, "family"), iQ = jchild(d, iC, "qualifier");
    int iT = jchild(d, iC, "timestamp"), iV = jchild(d, iC, "value");
    int iFam = -1;
    int64_t iTs = default_ts(imp);
    size_t oQual, nQual;
    if (d->a[iC].eType != J_OBJECT || iF < 0 || iQ < 0 || iV < 0 ||
        d->a[iF].eType != J_TEXT) {
      return bad(imp, "a cell needs family, qualifier and value");
    }
    rc = json_unique_members(imp, d, iC);
    if (rc) return rc;
    imp->iSrc = iC;
    rc = row_family(imp, d->a[iF].z, d->a[iF].n, &iFam);
    if (rc) return rc;
    if (iT >= 0 && (d->a[iT].eType != J_NUMBER ||
                    !parse_int64(d->a[iT].z, d->a[iT].n, &iTs) || iTs < 0)) {
      return bad(imp, "a cell timestamp is microseconds since the epoch");
    }
    /* qualifier bytes, then value bytes, both in b */
    rc = json_member_bytes(imp, d, iQ, b, &bSkip);
    if (rc) return rc;
    oQual = 0;
    nQual = b->n;
    {
      wcs_buf v = {0, 0, 0};
      rc = json_member_bytes(imp, d, iV, &v, &bSkip);
      if (rc == IMP_OK && !bSkip) {
        rc = row_add(imp, iFam, b->a + oQual, nQual, iTs, v.a, v.n);
      }
      wcs_buf_free(&v);
    }
  }
  return rc;
}

/* One JSON line (generic or the cells form) → the pending row. */
static int jsonl_record(Importer *imp, JDoc *d, wcs_buf *b) {
  int i, rc = IMP_OK, bSkip;
  int iCells = jchild(d, 0, "cells");
  int iKey = jchild(d, 0, "_key");
  int iTs = jchild(d, 0, "_timestamp");
  const ks_schema *s = imp->pSchema;

  rc = json_unique_members(imp, d, 0);
  if (rc) return rc;
  if (iTs >= 0) {
    if (d->a[iTs].eType != J_NUMBER ||
        !parse_int64(d->a[iTs].z, d->a[iTs].n, &imp->iRowTs) ||
        imp->iRowTs < 0) {
      return bad(imp, "_timestamp must be microseconds since the epoch");
    }
  }
  /* The row key: key template, _key, or the key fields. */
  if (imp->o.zKey) {
    rc = key_from_template(imp, d, 0, 0, b);
  } else if (iKey >= 0) {
    rc = json_member_bytes(imp, d, iKey, b, &bSkip);
    if (rc == IMP_OK && bSkip) rc = bad(imp, "_key is null");
    imp->key.n = 0;
    if (rc == IMP_OK && wcs_buf_append(&imp->key, b->a, b->n)) rc = IMP_FAIL;
  } else if (s && s->nField > 0) {
    const char *azVal[KS_MAX_FIELDS];
    size_t anVal[KS_MAX_FIELDS];
    wcs_buf parts = {0, 0, 0};
    size_t aOff[KS_MAX_FIELDS];
    for (i = 0; i < s->nField && rc == IMP_OK; i++) {
      int iF = jchild(d, 0, s->aField[i].zName);
      azVal[i] = 0;
      if (iF < 0) {
        rc = bad(imp, "key field %s is missing", s->aField[i].zName);
        break;
      }
      rc = json_member_bytes(imp, d, iF, b, &bSkip);
      if (rc == IMP_OK && bSkip)
        rc = bad(imp, "key field %s is null", s->aField[i].zName);
      aOff[i] = parts.n;
      anVal[i] = b->n;
      if (rc == IMP_OK && wcs_buf_append(&parts, b->a, b->n)) rc = IMP_FAIL;
    }
    if (rc == IMP_OK) {
      for (i = 0; i < s->nField; i++) {
        azVal[i] = parts.a ? (const char *)parts.a + aOff[i] : "";
      }
      rc = key_from_fields(imp, azVal, anVal);
    }
    wcs_buf_free(&parts);
  } else {
    rc = bad(imp, "no row key: give _key, the key fields, or key=TEMPLATE");
  }
  if (rc) return rc;

  if (iCells >= 0 && d->a[iCells].eType == J_ARRAY) {
    rc = jsonl_cells(imp, d, iCells, b);
    return rc ? rc : json_unique_cells(imp, d);
  }

  /* Members → cells, in source order. */
  {
    for (i = d->a[0].iFirst; i >= 0 && rc == IMP_OK; i = d->a[i].iNext) {
      JNode *nd = &d->a[i];
      const char *zName = nd->zKey;
      int iFam, iFamObj;
      const char *zQual;
      if (!zName || strcmp(zName, "_key") == 0 ||
          strcmp(zName, "_timestamp") == 0) {
        continue;
      }
      if (s && ks_schema_field(s, zName) >= 0 && !imp->o.zKey) continue;
      if (imp->o.zKey && !imp->o.bKeepKeyAttrs && in_template(imp, zName)) {
        continue;
      }
      /* {"family": {"qualifier": value, ...}} */
      if (nd->eType == J_OBJECT && !find_map(imp, zName) &&
          (iFamObj = wcs_table_family_index(imp->pTab, zName)) >= 0) {
        int j;
        for (j = nd->iFirst; j >= 0 && rc == IMP_OK; j = d->a[j].iNext) {
          JNode *c = &d->a[j];
          imp->iSrc = j;
          rc = json_member_bytes(imp, d, j, b, &bSkip);
          if (rc == IMP_OK && !bSkip) {
            rc = add_text_cell(imp, iFamObj, c->zKey, strlen(c->zKey),
                               (const char *)b->a, b->n, default_ts(imp));
          }
        }
        continue;
      }
      if (nd->eType == J_NULL) continue; /* no cell, so no family needed */
      rc = route_member(imp, zName, &iFam, &zQual);
      if (rc) break;
      imp->iSrc = i;
      rc = json_member_bytes(imp, d, i, b, &bSkip);
      if (rc == IMP_OK && !bSkip) {
        rc = add_text_cell(imp, iFam, zQual, strlen(zQual), (const char *)b->a,
                           b->n, default_ts(imp));
      }
    }
  }
  return rc ? rc : json_unique_cells(imp, d);
}

/* One DynamoDB export line → the pending row. */
static int ddb_record(Importer *imp, JDoc *d, wcs_buf *b) {
  int iItem = jchild(d, 0, "Item");
  int i, rc, bSkip;
  if (iItem < 0 || d->a[iItem].eType != J_OBJECT) {
    return bad(imp, "no \"Item\" object (a DynamoDB export line is "
                    "{\"Item\": {...}})");
  }
  if (!imp->o.zKey) return bad(imp, "DynamoDB imports need key=TEMPLATE");
  rc = json_unique_members(imp, d, 0);
  if (rc == IMP_OK) rc = json_unique_members(imp, d, iItem);
  if (rc == IMP_OK) rc = key_from_template(imp, d, 1, iItem, b);
  if (rc) return rc;
  for (i = d->a[iItem].iFirst; i >= 0 && rc == IMP_OK; i = d->a[i].iNext) {
    JNode *nd = &d->a[i];
    int iFam;
    const char *zQual;
    if (!imp->o.bKeepKeyAttrs && in_template(imp, nd->zKey)) continue;
    rc = ddb_cell_bytes(imp, d, i, b, &bSkip);
    if (rc || bSkip) continue; /* NULL: no cell, so no family needed */
    rc = route_member(imp, nd->zKey, &iFam, &zQual);
    if (rc) break;
    imp->iSrc = i;
    rc = add_text_cell(imp, iFam, zQual, strlen(zQual), (const char *)b->a,
                       b->n, default_ts(imp));
  }
  return rc ? rc : json_unique_cells(imp, d);
}

/* Append a copy of family name z to *pazFam unless it is there. Returns 1
** when out of memory. */
static int add_family_name(const char ***pazFam, int *pnFam, const char *z) {
  const char **a;
  int i;
  for (i = 0; i < *pnFam; i++) {
    if (strcmp((*pazFam)[i], z) == 0) return 0;
  }
  a = realloc(*pazFam, sizeof(char *) * (size_t)(*pnFam + 1));
  if (!a) return 1;
  *pazFam = a;
  a[*pnFam] = strdup(z);
  if (!a[*pnFam]) return 1;
  (*pnFam)++;
  return 0;
}

/* Families a JSON import names in its options (copies, to be freed). */
static int json_families(Importer *imp, const char ***pazFam, int *pnFam) {
  int i;
  if (imp->o.zFamily && add_family_name(pazFam, pnFam, imp->o.zFamily)) {
    return 1;
  }
  for (i = 0; i < imp->o.nMap; i++) {
    if (add_family_name(pazFam, pnFam, imp->o.aMap[i].zFamily)) return 1;
  }
  return 0;
}

/* A JSON lines file names families in its data: "cells"[].family and
** "family:qualifier" members. Collect them (one pass over the file, so
** only a file that can be read twice) and add them to *pazFam, so that a
** new table can be created with them and an existing one gets those it
** lacks. */
static int jsonl_scan_families(Importer *imp, const char ***pazFam,
                               int *pnFam) {
  sqlite3_stmt *pStmt = 0;
  wcs_buf line = {0, 0, 0};
  int c, rc = 0;
  if (sqlite3_prepare_v2(
          imp->jdb,
          "SELECT json_extract(value,'$.family') FROM json_each(?1,'$.cells') "
          "WHERE json_valid(?1) UNION "
          "SELECT substr(key,1,instr(key,':')-1) FROM json_each(?1) "
          "WHERE json_valid(?1) AND instr(key,':')>1",
          -1, &pStmt, 0) != SQLITE_OK) {
    return 1;
  }
  for (;;) {
    line.n = 0;
    while ((c = imp_getc(imp)) != EOF && c != '\n') {
      uint8_t byte = (uint8_t)c;
      if (wcs_buf_append(&line, &byte, 1)) break;
    }
    if (line.n > 0) {
      sqlite3_bind_text(pStmt, 1, (const char *)line.a, (int)line.n,
                        SQLITE_STATIC);
      while (sqlite3_step(pStmt) == SQLITE_ROW) {
        const char *z = (const char *)sqlite3_column_text(pStmt, 0);
        if (!z || !z[0] || *pnFam >= 1000) continue;
        if (add_family_name(pazFam, pnFam, z)) {
          rc = 1;
          break;
        }
      }
      sqlite3_reset(pStmt);
    }
    if (c == EOF || rc) break;
  }
  sqlite3_finalize(pStmt);
  wcs_buf_free(&line);
  rewind(imp->in);
  imp_read_head(imp);
  return rc;
}

static int run_json(Importer *imp, const char *zTable) {
  const char **azFam = 0;
  int nFam = 0, rc = IMP_OK, nWarn = 0;
  JDoc d;
  wcs_buf line = {0, 0, 0};
  wcs_buf b = {0, 0, 0};

  memset(&d, 0, sizeof(d));
  if (json_open(imp)) return IMP_FAIL;
  {
    int bErr = json_families(imp, &azFam, &nFam);
    if (!bErr && imp->o.eFormat == FMT_JSONL && imp->bSeekable) {
      bErr = jsonl_scan_families(imp, &azFam, &nFam);
    }
    if (bErr) shell_error(imp->p, "out of memory");
    if (!bErr) bErr = imp_open_table(imp, zTable, azFam, nFam);
    if (!bErr) bErr = imp_add_families(imp, zTable, azFam, nFam);
    while (nFam > 0)
      free((char *)azFam[--nFam]);
    free(azFam);
    if (bErr) return IMP_FAIL;
  }
  for (;;) {
    int c;
    if (shell_interrupted) {
      shell_error(imp->p, "interrupted");
      rc = IMP_FAIL;
      break;
    }
    line.n = 0;
    imp->iLine = imp->iNextLine++;
    while ((c = imp_getc(imp)) != EOF && c != '\n') {
      uint8_t byte = (uint8_t)c;
      if (wcs_buf_append(&line, &byte, 1)) {
        rc = IMP_FAIL;
        break;
      }
    }
    imp->nRead += line.n + (c == '\n');
    if (rc) break;
    if (c == EOF && line.n == 0) break;
    while (line.n > 0 &&
           (line.a[line.n - 1] == '\r' || line.a[line.n - 1] == ' ' ||
            line.a[line.n - 1] == '\t')) {
      line.n--;
    }
    if (line.n == 0) continue;
    row_reset(imp);
    rc = json_parse(imp, (const char *)line.a, line.n, &d);
    if (rc == IMP_OK) {
      rc = imp->o.eFormat == FMT_DYNAMODB ? ddb_record(imp, &d, &b)
                                          : jsonl_record(imp, &d, &b);
    }
    if (rc == IMP_OK) rc = row_finish(imp);
    if (rc == IMP_BAD && imp->o.bSkipBad) {
      imp->nBad++;
      if (nWarn++ < MAX_WARNINGS) {
        fprintf(stderr, "%s line %d: %s (skipped)\n", imp->zFile, imp->iLine,
                imp->zReason);
      }
      rc = IMP_OK;
      continue;
    }
    if (rc) break;
    progress(imp, 0);
    if (c == EOF) break;
  }
  jdoc_clear(&d);
  free(d.a);
  wcs_buf_free(&line);
  wcs_buf_free(&b);
  return rc;
}

/* ==================================================================
** .import
** ================================================================== */

/* Guess the format from the name and first bytes. */
static int sniff_format(Importer *imp) {
  const char *zExt = strrchr(imp->zFile, '.');
  char zHead[sizeof(imp->aHead) + 1];
  int i = 0, n = imp->nHead - imp->iHead;
  memcpy(zHead, imp->aHead + imp->iHead, (size_t)n);
  zHead[n] = 0;
  while (zHead[i] == ' ' || zHead[i] == '\t' || zHead[i] == '\n' ||
         zHead[i] == '\r') {
    i++;
  }
  if (zHead[i] == '{') {
    const char *z = zHead + i + 1;
    while (*z == ' ' || *z == '\t')
      z++;
    if (strncmp(z, "\"Item\"", 6) == 0) return FMT_DYNAMODB;
    return FMT_JSONL;
  }
  if (zExt && (strcmp(zExt, ".json") == 0 || strcmp(zExt, ".jsonl") == 0 ||
               strcmp(zExt, ".ndjson") == 0)) {
    return FMT_JSONL;
  }
  /* cbt's header rows leave the row key column empty. */
  return zHead[i] == ',' ? FMT_CBT : FMT_CSV;
}

static void importer_free(Importer *imp) {
  if (imp->pTxn) wcs_txn_free(imp->pTxn);
  if (imp->pTab) wcs_table_close(imp->pTab);
  if (imp->in && imp->in != stdin) fclose(imp->in);
  sqlite3_finalize(imp->pTree);
  sqlite3_finalize(imp->pValid);
  if (imp->jdb) sqlite3_close(imp->jdb);
  free(imp->zTable);
  free(imp->zSchemaBefore);
  free(imp->aCell);
  wcs_buf_free(&imp->key);
  wcs_buf_free(&imp->lastKey);
  free(imp->aRun);
  free(imp->aRunSlot);
  wcs_buf_free(&imp->runQual);
  wcs_buf_free(&imp->arena);
  wcs_buf_free(&imp->scratch);
  wcs_buf_free(&imp->tmp);
  free_opts(&imp->o);
}

/* Free a failed import; a table it created and put no row into is
** dropped again, so that a file refused at its first line leaves nothing
** behind. */
static void import_undo_create(Importer *imp, const char *zTable) {
  Shell *p = imp->p;
  int bDrop = imp->bCreated && imp->nRows == 0;
  if (imp->pTxn) { /* the batch that failed: nothing of it is kept */
    wcs_txn_free(imp->pTxn);
    imp->pTxn = 0;
  }
  if (!imp->bCreated && imp->nRows == 0 && imp->zSchemaBefore && imp->pEng &&
      imp->zTable &&
      wcs_table_alter(imp->pEng, imp->zTable, imp->zSchemaBefore) == WCS_OK) {
    /* nothing was imported: the families it added go again */
    fprintf(p->out,
            "removed the families added to %s: nothing was "
            "imported\n",
            zTable);
    p->bReconnect = 1;
  }
  importer_free(imp);
  if (bDrop) {
    char *zId = shell_quote_ident(zTable);
    char *zSql = zId ? sqlite3_mprintf("DROP TABLE %s", zId) : 0;
    if (zSql && sqlite3_exec(p->db, zSql, 0, 0, 0) == SQLITE_OK) {
      fprintf(p->out, "dropped table %s again: nothing was imported\n",
              zTable);
    }
    sqlite3_free(zSql);
    free(zId);
  }
}

static int import_run(Shell *p, const char *zFile, const char *zTable,
                      int nOpt, char **azOpt) {
  Importer imp;
  struct stat st;
  int rc;
  double dt;

  memset(&imp, 0, sizeof(imp));
  imp.p = p;
  imp.zFile = zFile;
  imp.iNextLine = 1;
  if (parse_opts(p, &imp.o, nOpt, azOpt)) {
    free_opts(&imp.o);
    return 1;
  }
  if (!sqlite3_get_autocommit(p->db)) {
    free_opts(&imp.o);
    return shell_error(p, "finish the open transaction (COMMIT or ROLLBACK) "
                          "before an import");
  }
  imp.in = strcmp(zFile, "-") == 0 ? stdin : fopen(zFile, "rb");
  if (!imp.in) {
    free_opts(&imp.o);
    return shell_error(p, "cannot open %s: %s", zFile, strerror(errno));
  }
  if (fstat(fileno(imp.in), &st) == 0 && S_ISREG(st.st_mode)) {
    imp.nFileBytes = (uint64_t)st.st_size;
    imp.bSeekable = 1;
  } else if (imp.in != stdin && S_ISDIR(st.st_mode)) {
    importer_free(&imp);
    return shell_error(p, "cannot import %s: it is a directory", zFile);
  }
  imp_read_head(&imp);
  if (imp.o.eFormat == FMT_AUTO) imp.o.eFormat = sniff_format(&imp);
  if (imp.o.eFormat == FMT_DYNAMODB && !imp.o.zKey) {
    importer_free(&imp);
    return shell_error(p, "a DynamoDB import needs key=TEMPLATE, e.g. "
                          "key={pk}#{sk}");
  }
  imp.tStart = now_seconds();
  shell_interrupted = 0;
  shell_busy++;
  if (imp.o.eFormat == FMT_CBT || imp.o.eFormat == FMT_CSV) {
    rc = run_csv(&imp, zTable);
  } else {
    rc = run_json(&imp, zTable);
  }
  shell_busy--;
  progress(&imp, 1);
  if (imp.iReadErrno) {
    /* An error reading the input looks like its end to the readers, and
    ** the record it cut short may have been taken whole: say what
    ** happened, and keep only the batches committed before it. */
    shell_error(p,
                "cannot read %s: %s; %" PRId64 " rows imported before "
                "it (the batch being read is not kept)",
                zFile, strerror(imp.iReadErrno), imp.nNewRows);
    import_undo_create(&imp, zTable);
    return 1;
  }
  if (rc == IMP_BAD) {
    /* Keep what came before the bad record. */
    int rcCommit = imp_commit(&imp);
    shell_error(p, "%s line %d: %s; %" PRId64 " rows imported before it%s",
                zFile, imp.iLine, imp.zReason, imp.nNewRows,
                rcCommit ? " (the last batch failed to commit)" : "");
    import_undo_create(&imp, zTable);
    return 1;
  }
  if (rc == IMP_FAIL) {
    if (imp.pTxn && imp_commit(&imp) == 0 && imp.nRows > 0) {
      fprintf(stderr, "%" PRId64 " rows were imported before it stopped\n",
              imp.nNewRows);
    }
    import_undo_create(&imp, zTable);
    return 1;
  }
  if (imp_commit(&imp)) {
    importer_free(&imp);
    return 1;
  }
  dt = now_seconds() - imp.tStart;
  fprintf(p->out,
          "imported %" PRId64 " rows (%" PRId64 " cells) into %s in %.2f s, "
          "%.0f rows/s",
          imp.nNewRows, imp.nCells, zTable, dt,
          dt > 0 ? imp.nNewRows / dt : 0.0);
  if (imp.nBad) fprintf(p->out, "; %" PRId64 " bad lines skipped", imp.nBad);
  fputc('\n', p->out);
  importer_free(&imp);
  return 0;
}

/* A new schema cookie, as wcs_alter() writes: every connection to the
** database reads its schema again at its next statement, and so connects
** its wcs tables with the families an import added. Best effort (a
** read-only database keeps its cookie; those connections then say to
** open the database again). */
static void schema_bump(Shell *p) {
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 v = -1;
  if (sqlite3_prepare_v2(p->db, "PRAGMA main.schema_version", -1, &pStmt, 0) ==
          SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    v = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  if (v >= 0 && v < 0x7fffffff) {
    char *z = sqlite3_mprintf("PRAGMA main.schema_version = %lld", v + 1);
    if (z) sqlite3_exec(p->db, z, 0, 0, 0);
    sqlite3_free(z);
  }
}

int shell_import(Shell *p, const char *zFile, const char *zTable, int nOpt,
                 char **azOpt) {
  int rc = import_run(p, zFile, zTable, nOpt, azOpt);
  /* families added: the SQL connections' tables have the old schema */
  if (p->bReconnect) {
    schema_bump(p);
    if (shell_reconnect(p)) rc = 1;
  }
  return rc;
}

/* ==================================================================
** .export
** ================================================================== */

/* A (family, qualifier) column seen in the table. */
typedef struct ExpCol {
  int iFam;
  uint8_t *pQual;
  size_t nQual;
} ExpCol;

typedef struct Exporter {
  Shell *p;
  wcs_table *pTab;
  const ks_schema *pSchema;
  FILE *out;
  int eFormat;
  int bTs;      /* write value@timestamp */
  ExpCol *aCol; /* sorted by (iFam, qualifier) */
  int nCol, nAlloc;
  int bFields; /* CSV: every key decodes: write key fields */
  wcs_buf scratch;
} Exporter;

static int col_cmp(int iFamA, const void *pA, size_t nA, const ExpCol *b) {
  int c;
  if (iFamA != b->iFam) return iFamA < b->iFam ? -1 : 1;
  c = memcmp(pA, b->pQual, nA < b->nQual ? nA : b->nQual);
  if (c) return c;
  return nA < b->nQual ? -1 : nA > b->nQual ? 1 : 0;
}

/* Index of column (iFam, qual), inserting it when bAdd. -1 if absent. */
static int col_find(Exporter *x, int iFam, const void *pQual, size_t nQual,
                    int bAdd) {
  int lo = 0, hi = x->nCol;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int c = col_cmp(iFam, pQual, nQual, &x->aCol[mid]);
    if (c == 0) return mid;
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (!bAdd) return -1;
  if (x->nCol == x->nAlloc) {
    int nNew = x->nAlloc ? x->nAlloc * 2 : 32;
    ExpCol *a = realloc(x->aCol, sizeof(ExpCol) * (size_t)nNew);
    if (!a) return -2;
    x->aCol = a;
    x->nAlloc = nNew;
  }
  memmove(&x->aCol[lo + 1], &x->aCol[lo],
          sizeof(ExpCol) * (size_t)(x->nCol - lo));
  x->aCol[lo].iFam = iFam;
  x->aCol[lo].pQual = malloc(nQual ? nQual : 1);
  if (!x->aCol[lo].pQual) return -2;
  memcpy(x->aCol[lo].pQual, pQual, nQual);
  x->aCol[lo].nQual = nQual;
  x->nCol++;
  return lo;
}

/* bNoHeat: a pass that only looks the table over, so that the rows an
** export reads count once in the key-distribution picture */
static int open_history_cursor(Exporter *x, int bNoHeat, wcs_cursor **ppCur) {
  wcs_read_options ro;
  wcs_read_options_init(&ro);
  ro.nVersions = 0;
  ro.bNoHeat = bNoHeat;
  return wcs_cursor_open(ppCur, x->pTab, 0, &ro);
}

/* Pass 1: the columns, and whether every key decodes under the schema. */
static int export_scan_columns(Exporter *x) {
  wcs_cursor *pCur = 0;
  int rc = open_history_cursor(x, 1, &pCur);
  x->bFields = x->pSchema && x->pSchema->nField > 0;
  while (rc == WCS_OK && !wcs_cursor_eof(pCur)) {
    int nCell, i;
    const wcs_cell *aCell = wcs_cursor_cells(pCur, &nCell);
    if (x->bFields) {
      size_t nRow;
      const void *pRow = wcs_cursor_row(pCur, &nRow);
      ks_value aVal[KS_MAX_FIELDS];
      char *zErr = 0;
      if (ks_key_decode(x->pSchema, pRow, (int)nRow, aVal, &x->scratch,
                        &zErr) != WCS_OK) {
        x->bFields = 0;
        free(zErr);
      }
    }
    for (i = 0; i < nCell; i++) {
      if (col_find(x, aCell[i].iFamily, aCell[i].pQual, aCell[i].nQual, 1) ==
          -2) {
        rc = WCS_NOMEM;
        break;
      }
    }
    if (rc == WCS_OK) rc = wcs_cursor_next(pCur);
    if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT; /* Ctrl-C */
  }
  wcs_cursor_close(pCur);
  return rc;
}

static void family_name(Exporter *x, int iFam, const char **pz) {
  wcs_family_info fi;
  *pz = wcs_table_family(x->pTab, iFam, &fi) == WCS_OK ? fi.zName : "?";
}

static void write_ts_value(Exporter *x, const wcs_cell *c) {
  if (x->bTs) {
    /* value@timestamp; the field is quoted when needed. */
    wcs_buf b = {0, 0, 0};
    char zTs[32];
    int n = snprintf(zTs, sizeof(zTs), "@%" PRId64, c->iTs);
    wcs_buf_append(&b, c->pVal, c->nVal);
    wcs_buf_append(&b, zTs, (size_t)n);
    shell_csv_field(x->out, b.a, b.n, 1);
    wcs_buf_free(&b);
  } else {
    shell_csv_field(x->out, c->pVal, c->nVal, 1);
  }
}

static int export_csv(Exporter *x) {
  wcs_cursor *pCur = 0;
  int rc, i, iCol, nKeyCols;
  int *aFirst = 0, *aCount = 0;
  const ks_schema *s = x->pSchema;

  rc = export_scan_columns(x);
  if (rc != WCS_OK) return rc;
  nKeyCols = x->eFormat == FMT_CSV && x->bFields ? s->nField : 1;
  /* Header. */
  if (x->eFormat == FMT_CBT) {
    int iPrev = -1;
    for (iCol = 0; iCol < x->nCol; iCol++) {
      fputc(',', x->out);
      if (x->aCol[iCol].iFam != iPrev) {
        const char *zF;
        family_name(x, x->aCol[iCol].iFam, &zF);
        shell_csv_field(x->out, zF, strlen(zF), 0);
        iPrev = x->aCol[iCol].iFam;
      }
    }
    fputc('\n', x->out);
    for (iCol = 0; iCol < x->nCol; iCol++) {
      fputc(',', x->out);
      shell_csv_field(x->out, x->aCol[iCol].pQual, x->aCol[iCol].nQual, 0);
    }
    fputc('\n', x->out);
  } else {
    if (nKeyCols == 1 && !x->bFields) {
      fputs("_key", x->out);
    } else {
      for (i = 0; i < s->nField; i++) {
        if (i) fputc(',', x->out);
        shell_csv_field(x->out, s->aField[i].zName, strlen(s->aField[i].zName),
                        0);
      }
    }
    for (iCol = 0; iCol < x->nCol; iCol++) {
      const char *zF;
      wcs_buf b = {0, 0, 0};
      family_name(x, x->aCol[iCol].iFam, &zF);
      wcs_buf_append(&b, zF, strlen(zF));
      wcs_buf_append(&b, ":", 1);
      wcs_buf_append(&b, x->aCol[iCol].pQual, x->aCol[iCol].nQual);
      fputc(',', x->out);
      shell_csv_field(x->out, b.a, b.n, 0);
      wcs_buf_free(&b);
    }
    fputc('\n', x->out);
  }

  aFirst = calloc((size_t)x->nCol + 1, sizeof(int));
  aCount = calloc((size_t)x->nCol + 1, sizeof(int));
  if (!aFirst || !aCount) {
    free(aFirst);
    free(aCount);
    return WCS_NOMEM;
  }
  rc = open_history_cursor(x, 0, &pCur);
  while (rc == WCS_OK && !wcs_cursor_eof(pCur)) {
    int nCell, nLines = 0, k;
    const wcs_cell *aCell = wcs_cursor_cells(pCur, &nCell);
    size_t nRow;
    const void *pRow = wcs_cursor_row(pCur, &nRow);
    for (iCol = 0; iCol < x->nCol; iCol++)
      aCount[iCol] = 0;
    /* Cells come grouped by column, newest first. */
    for (i = 0; i < nCell; i++) {
      iCol = col_find(x, aCell[i].iFamily, aCell[i].pQual, aCell[i].nQual, 0);
      if (iCol < 0) continue;
      if (aCount[iCol]++ == 0) aFirst[iCol] = i;
      if (aCount[iCol] > nLines) nLines = aCount[iCol];
    }
    for (k = 0; k < nLines; k++) {
      if (nKeyCols > 1 || (x->eFormat == FMT_CSV && x->bFields)) {
        ks_value aVal[KS_MAX_FIELDS];
        char *zErr = 0;
        ks_key_decode(s, pRow, (int)nRow, aVal, &x->scratch, &zErr);
        free(zErr);
        for (i = 0; i < s->nField; i++) {
          if (i) fputc(',', x->out);
          if (aVal[i].eType == KS_VAL_INT) {
            fprintf(x->out, "%" PRId64, aVal[i].i);
          } else {
            shell_csv_field(x->out, aVal[i].p, (size_t)aVal[i].n, 1);
          }
        }
      } else {
        shell_csv_field(x->out, pRow, nRow, 1);
      }
      for (iCol = 0; iCol < x->nCol; iCol++) {
        fputc(',', x->out);
        if (aCount[iCol] > k) write_ts_value(x, &aCell[aFirst[iCol] + k]);
      }
      fputc('\n', x->out);
    }
    rc = wcs_cursor_next(pCur);
    if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT;
  }
  wcs_cursor_close(pCur);
  free(aFirst);
  free(aCount);
  return rc;
}

/* Append bytes as a JSON string, or {"$hex": "..."} when not text (as a
** family column shows them in SQL). */
static int json_bytes(wcs_buf *b, const void *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const uint8_t *a = p;
  size_t i;
  if (shell_is_text(p, n)) return shell_json_string(b, p, n);
  if (wcs_buf_append(b, "{\"$hex\":\"", 9)) return WCS_NOMEM;
  for (i = 0; i < n; i++) {
    char h[2];
    h[0] = hex[a[i] >> 4];
    h[1] = hex[a[i] & 15];
    if (wcs_buf_append(b, h, 2)) return WCS_NOMEM;
  }
  return wcs_buf_append(b, "\"}", 2);
}

static int export_jsonl(Exporter *x) {
  wcs_cursor *pCur = 0;
  wcs_buf b = {0, 0, 0};
  int rc = open_history_cursor(x, 0, &pCur);
  const ks_schema *s = x->pSchema;
  int i;
  /* The decoded key fields go beside _key, for readers; the import takes
  ** the key from _key and passes over them. A field named like one of the
  ** line's own members (a key field "cells") would give that member twice,
  ** which no import takes: then they are all left out, and _key alone
  ** holds the key. */
  if (s) {
    for (i = 0; i < s->nField; i++) {
      const char *z = s->aField[i].zName;
      if (strcmp(z, "_key") == 0 || strcmp(z, "_timestamp") == 0 ||
          strcmp(z, "cells") == 0) {
        s = 0;
        break;
      }
    }
  }
  while (rc == WCS_OK && !wcs_cursor_eof(pCur)) {
    int nCell;
    const wcs_cell *aCell = wcs_cursor_cells(pCur, &nCell);
    size_t nRow;
    const void *pRow = wcs_cursor_row(pCur, &nRow);
    b.n = 0;
    wcs_buf_append(&b, "{\"_key\":", 8);
    json_bytes(&b, pRow, nRow);
    if (s && s->nField > 0) {
      ks_value aVal[KS_MAX_FIELDS];
      char *zErr = 0;
      if (ks_key_decode(s, pRow, (int)nRow, aVal, &x->scratch, &zErr) ==
          WCS_OK) {
        for (i = 0; i < s->nField; i++) {
          wcs_buf_append(&b, ",", 1);
          shell_json_string(&b, s->aField[i].zName, strlen(s->aField[i].zName));
          wcs_buf_append(&b, ":", 1);
          if (aVal[i].eType == KS_VAL_INT) {
            char zNum[32];
            int n = snprintf(zNum, sizeof(zNum), "%" PRId64, aVal[i].i);
            wcs_buf_append(&b, zNum, (size_t)n);
          } else {
            json_bytes(&b, aVal[i].p, (size_t)aVal[i].n);
          }
        }
      }
      free(zErr);
    }
    wcs_buf_append(&b, ",\"cells\":[", 10);
    for (i = 0; i < nCell; i++) {
      char zTs[40];
      int n =
          snprintf(zTs, sizeof(zTs), ",\"timestamp\":%" PRId64, aCell[i].iTs);
      if (i) wcs_buf_append(&b, ",", 1);
      wcs_buf_append(&b, "{\"family\":", 10);
      shell_json_string(&b, aCell[i].zFamily, strlen(aCell[i].zFamily));
      wcs_buf_append(&b, ",\"qualifier\":", 13);
      json_bytes(&b, aCell[i].pQual, aCell[i].nQual);
      wcs_buf_append(&b, zTs, (size_t)n);
      wcs_buf_append(&b, ",\"value\":", 9);
      rc = json_bytes(&b, aCell[i].pVal, aCell[i].nVal);
      wcs_buf_append(&b, "}", 1);
    }
    rc = wcs_buf_append(&b, "]}\n", 3);
    if (rc == WCS_OK) fwrite(b.a, 1, b.n, x->out);
    if (rc == WCS_OK) rc = wcs_cursor_next(pCur);
    if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT;
  }
  wcs_cursor_close(pCur);
  wcs_buf_free(&b);
  return rc;
}

/* 1 when zPath names an entry of /proc, which is never replaced: its
** links (/proc/self/fd/N) stand for open files, not names of their own.
** *piFd is then N when the entry is one of this process's descriptors
** (/proc/PID/fd/N or /proc/PID/task/TID/fd/N with our PID), else -1. */
static int proc_entry(const char *zPath, int *piFd) {
  const char *zBase = strrchr(zPath, '/');
  char *zDir, *zReal = 0;
  int bProc = 0;
  *piFd = -1;
  if (!zBase) return 0; /* in the current directory, which /proc is not */
  zDir = memdup(zPath, zBase == zPath ? 1 : (size_t)(zBase - zPath));
  if (zDir) zReal = realpath(zDir, 0);
  free(zDir);
  zBase++;
  if (zReal &&
      (strcmp(zReal, "/proc") == 0 || strncmp(zReal, "/proc/", 6) == 0)) {
    char zOwn[40];
    size_t nOwn =
        (size_t)snprintf(zOwn, sizeof(zOwn), "/proc/%ld/", (long)getpid());
    bProc = 1;
    if (strncmp(zReal, zOwn, nOwn) == 0) {
      const char *zRest = zReal + nOwn;
      if (strncmp(zRest, "task/", 5) == 0) {
        zRest += 5;
        while (*zRest >= '0' && *zRest <= '9')
          zRest++;
        if (*zRest == '/') zRest++;
      }
      if (strcmp(zRest, "fd") == 0 && zBase[0] &&
          strspn(zBase, "0123456789") == strlen(zBase) && strlen(zBase) < 9) {
        *piFd = atoi(zBase);
      }
    }
  }
  free(zReal);
  return bProc;
}

/* Open where an export goes. "-" is standard output. A regular file (or
** a new one) is written as a temporary file beside it, *pzTmp, renamed
** over *pzDest once whole, so that a failed export leaves what was there
** before; the new file keeps the old one's permissions. A symbolic link is
** followed, so the link stays and its target is replaced. Anything else
** (a named pipe, a terminal) is written directly, never replaced, and so
** is a name for a descriptor the shell has open (/dev/stdout, /dev/fd/N,
** /proc/self/fd/N: links into /proc): it is written through that very
** descriptor, after what the shell wrote there, even when the descriptor
** is a regular file (`wcs ... >>log`), which replacing would lose. The
** links are followed one at a time, with lstat(), to see that. Returns 1
** after reporting an error. */
static int export_open(Shell *p, const char *zFile, FILE **ppOut,
                       char **pzTmp, char **pzDest) {
  struct stat st;
  mode_t mode = 0600; /* set below wherever *pzDest is */
  int fd = -1, nLink;
  char *zPath = 0; /* the name the links lead to so far */
  *ppOut = 0;
  *pzTmp = 0;
  *pzDest = 0;
  if (strcmp(zFile, "-") == 0) {
    *ppOut = stdout;
    return 0;
  }
  zPath = strdup(zFile);
  for (nLink = 0;; nLink++) {
    int iFd;
    if (!zPath) return shell_error(p, "out of memory");
    if (proc_entry(zPath, &iFd)) {
      free(zPath);
      fflush(p->out); /* what the shell wrote comes first */
      fflush(stdout);
      if (iFd == STDOUT_FILENO) {
        *ppOut = stdout;
        return 0;
      }
      if (iFd >= 0) {
        int fdDup = dup(iFd);
        *ppOut = fdDup >= 0 ? fdopen(fdDup, "wb") : 0;
        if (!*ppOut) {
          int e = errno;
          if (fdDup >= 0) close(fdDup);
          if (e == EBADF) {
            return shell_error(p,
                               "cannot export to %s: descriptor %d is not "
                               "open (open it for writing where the shell "
                               "is started, as in %d>FILE)",
                               zFile, iFd, iFd);
          }
          return shell_error(p, "cannot export to %s: descriptor %d: %s", zFile,
                             iFd, strerror(e));
        }
        return 0;
      }
      /* another process's descriptor, or a file of /proc: appended to */
      *ppOut = fopen(zFile, "ab");
      if (!*ppOut) {
        return shell_error(p, "cannot create %s: %s", zFile, strerror(errno));
      }
      return 0;
    }
    if (lstat(zPath, &st) != 0) {
      if (nLink == 0) {
        /* a new file (or one that cannot be made: mkstemp() says why) */
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
        *pzDest = zPath;
        zPath = 0;
      }
      break; /* else a link to nothing yet: written through, below */
    }
    if (S_ISLNK(st.st_mode)) {
      char zTarget[4096];
      ssize_t n = readlink(zPath, zTarget, sizeof(zTarget) - 1);
      const char *zSlash = strrchr(zPath, '/');
      char *zNext;
      if (n < 0 || nLink >= 40) {
        free(zPath);
        return shell_error(p, "cannot export to %s: %s", zFile,
                           n < 0 ? strerror(errno) : strerror(ELOOP));
      }
      zTarget[n] = 0;
      /* a relative target is relative to the link's directory */
      if (zTarget[0] != '/' && zSlash) {
        size_t nDir = (size_t)(zSlash - zPath) + 1;
        zNext = malloc(nDir + (size_t)n + 1);
        if (zNext) {
          memcpy(zNext, zPath, nDir);
          memcpy(zNext + nDir, zTarget, (size_t)n + 1);
        }
      } else {
        zNext = strdup(zTarget);
      }
      free(zPath);
      zPath = zNext;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      free(zPath);
      return shell_error(p, "cannot export to %s: it is a directory", zFile);
    }
    if (S_ISREG(st.st_mode)) {
      *pzDest = realpath(zPath, 0);
      mode = st.st_mode & 07777;
    }
    break;
  }
  free(zPath);
  if (*pzDest == 0) {
    /* Not a regular file, or a link to nothing yet: write through it. */
    *ppOut = fopen(zFile, "wb");
    if (!*ppOut) {
      return shell_error(p, "cannot create %s: %s", zFile, strerror(errno));
    }
    return 0;
  }
  *pzTmp = malloc(strlen(*pzDest) + 16);
  if (*pzTmp) {
    sprintf(*pzTmp, "%s.wcs-XXXXXX", *pzDest);
    fd = mkstemp(*pzTmp);
  } else {
    errno = ENOMEM;
  }
  if (fd < 0 || fchmod(fd, mode) != 0 || (*ppOut = fdopen(fd, "wb")) == 0) {
    shell_error(p, "cannot create %s: %s", zFile, strerror(errno));
    if (fd >= 0) {
      close(fd);
      remove(*pzTmp);
    }
    free(*pzTmp);
    free(*pzDest);
    *pzTmp = 0;
    *pzDest = 0;
    return 1;
  }
  return 0;
}

int shell_export(Shell *p, const char *zTable, const char *zFile, int nOpt,
                 char **azOpt) {
  Exporter x;
  ImpOpts o;
  int rc, i;
  const char *zExt = strrchr(zFile, '.');
  char *zTmp = NULL;  /* the file written, renamed to zDest when whole */
  char *zDest = NULL; /* the regular file replaced (a link's target) */

  memset(&x, 0, sizeof(x));
  x.p = p;
  x.bTs = 1;
  /* Options: a format word or format=, timestamp=none|value-encoded. The
  ** import's other options mean nothing here: refused, not ignored. */
  for (i = 0; i < nOpt; i++) {
    const char *z = azOpt[i];
    while (*z == '-')
      z++;
    if (strcmp(z, "timestamp=none") == 0) {
      x.bTs = 0;
    } else if (strcmp(z, "timestamp=value-encoded") == 0) {
      x.bTs = 1;
    } else if (strncmp(z, "timestamp=", 10) == 0) {
      return shell_error(p, "%s: expected timestamp=none or value-encoded",
                         azOpt[i]);
    } else if (strncmp(z, "format=", 7) == 0 || format_index(z) > 0) {
      if (parse_opts(p, &o, 1, &azOpt[i])) {
        free_opts(&o);
        return 1;
      }
      x.eFormat = o.eFormat;
      free_opts(&o);
    } else {
      return shell_error(p,
                         "option \"%s\" is not an export option (an export "
                         "takes a format, cbt, csv or jsonl, and "
                         "timestamp=none or value-encoded)",
                         azOpt[i]);
    }
  }
  if (x.eFormat == FMT_AUTO) {
    if (zExt && (strcmp(zExt, ".jsonl") == 0 || strcmp(zExt, ".json") == 0 ||
                 strcmp(zExt, ".ndjson") == 0)) {
      x.eFormat = FMT_JSONL;
    } else {
      x.eFormat = FMT_CBT;
    }
  }
  if (x.eFormat == FMT_DYNAMODB) {
    return shell_error(p, "export formats: cbt, csv, jsonl");
  }
  if (shell_open_table(p, zTable, &x.pTab)) return 1;
  x.pSchema = wcs_table_schema(x.pTab);
  /* Ctrl-C stops the export between rows (the loops poll the flag), as it
  ** stops an import: a file being replaced is left as it was */
  shell_interrupted = 0;
  shell_busy++;
  if (export_open(p, zFile, &x.out, &zTmp, &zDest)) {
    shell_busy--;
    wcs_table_close(x.pTab);
    return 1;
  }
  rc = x.eFormat == FMT_JSONL ? export_jsonl(&x) : export_csv(&x);
  if (rc == WCS_OK && shell_interrupted) rc = WCS_INTERRUPT;
  if (x.out != stdout) {
    if (fclose(x.out) != 0 && rc == WCS_OK) rc = WCS_IOERR;
    if (rc == WCS_OK && zTmp && rename(zTmp, zDest) != 0) {
      shell_error(p, "cannot replace %s: %s", zFile, strerror(errno));
      rc = WCS_IOERR;
    }
    if (rc != WCS_OK && zTmp) remove(zTmp);
  } else {
    fflush(stdout);
  }
  shell_busy--;
  for (i = 0; i < x.nCol; i++)
    free(x.aCol[i].pQual);
  free(x.aCol);
  wcs_buf_free(&x.scratch);
  if (rc == WCS_INTERRUPT) {
    if (zTmp) {
      shell_error(p,
                  "interrupted: the export of %s stopped, and %s is as "
                  "it was",
                  zTable, zFile);
    } else {
      shell_error(p,
                  "interrupted: the export of %s stopped, part way "
                  "through the table",
                  zTable);
    }
  } else if (rc != WCS_OK) {
    shell_error(p, "export of %s failed: %s", zTable,
                rc == WCS_IOERR ? "write error"
                : p->pEng       ? wcs_engine_errmsg(p->pEng)
                                : "");
  }
  free(zTmp);
  free(zDest);
  if (rc != WCS_OK) {
    wcs_table_close(x.pTab);
    return 1;
  }
  wcs_table_close(x.pTab);
  if (x.out != stdout) {
    fprintf(p->out, "exported %s to %s (%s%s)\n", zTable, zFile,
            azFormat[x.eFormat],
            x.eFormat != FMT_JSONL && x.bTs
                ? ", value@timestamp: import with timestamp=value-encoded"
                : "");
  }
  return 0;
}
