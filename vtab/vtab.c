/*
** vtab.c — the SQLite module `wcs`: every wcs table as a virtual table,
** with key-range planning, writes as Bigtable mutations, transactions over
** the store, history views, and the extension entry points.
**
** USAGE
**
**   .load ./build/wcs                      (or wcs_register(db) from C)
**   CREATE VIRTUAL TABLE metrics USING wcs(
**     KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
**     FAMILY stats (cpu INT64, mem INT64) MAX VERSIONS 3,
**     FAMILY meta MAX AGE '30d');
**   CREATE VIRTUAL TABLE metrics_history USING wcs(TABLE 'metrics', HISTORY);
**
**   Clauses are parsed by keyschema (ks_parse_args); doc/sql.md is the
**   reference for every clause, column, function and plan.
**
** EXAMPLE
**
**   INSERT INTO metrics(device, id, day, cpu) VALUES
*('phone','4c41',20200501,7);
**   SELECT day, cpu FROM metrics WHERE device = 'phone' AND id = '4c41';
**   EXPLAIN QUERY PLAN SELECT * FROM metrics WHERE device='phone' AND
*id='4c41';
**     -> SCAN metrics VIRTUAL TABLE INDEX 3:PREFIX SCAN (device,id)
**
** INTERNALS
**
**   Declared schema of a table (declareTable):
**
**     CREATE TABLE x(<key fields, each NOT NULL>, <declared qualifier
**                    columns>, <one JSON column per family>,
**                    _key BLOB HIDDEN PRIMARY KEY, _timestamp INTEGER HIDDEN)
**     WITHOUT ROWID
**
**   SQLite allows a writable WITHOUT ROWID virtual table only a one-column
**   PRIMARY KEY, so the PK is the hidden raw row key `_key`; an INSERT
**   computes it from the key fields (xUpdate). Without a KEY clause `_key`
**   is the first, visible column. Key fields are never NULL, and saying
**   so lets SQLite hand min() of a key field to xBestIndex as an ORDER BY
**   (it withholds ORDER BY terms that would need NULLs last), so that the
**   scan stops at the first row. A HISTORY view is read-only:
**
**     CREATE TABLE x(<key fields, each NOT NULL>, family TEXT,
**                    qualifier TEXT, _timestamp INTEGER, value,
**                    latest_n INTEGER HIDDEN, _key BLOB HIDDEN,
**                    _cell BLOB HIDDEN PRIMARY KEY) WITHOUT ROWID
**
**   Stores: each connection keeps the stores it opened (WcsConn), one
**   WcsStore per directory plus one in-memory store for :memory: and temp
**   databases; all tables of a store share one wcs_txn, so a SQLite
**   transaction is atomic over every table of the store (see "Transactions"
**   below for the xBegin..xRollbackTo mapping). When the connection's last
**   table on a store disconnects, the store's heat counters are saved
**   (wcs_engine_heat_save), for `wcs keyviz` in a later process.
**
**   Plans: see the comment above wcsBestIndex for the idxNum/idxStr
**   encoding that xBestIndex hands to xFilter.
**
**   Rows: a cursor (WcsCursor) drives one engine cursor per stream (one,
**   or one per salt bucket, merged into key order when ORDER BY needs it).
**   Per row it only points at the engine's key and cells; the key is
**   split when a key field is first asked for (a column or a residual
**   check) and each field decoded when it is first asked for, so a
**   statement using one field pays for that one (a key that does not
**   split, or a field that does not decode, is then an error naming it), a
**   declared column's cell is found where it was in the last row (rows
**   of a scan share their layout), and a family's JSON is built only when
**   that column is asked for. Text and blob results are copies
**   (SQLITE_TRANSIENT, into the register's own buffer): SQLite keeps an
**   SQLITE_STATIC result by reference (max(), GROUP BY), and the row's
**   bytes change when the cursor moves.
**
**   Families read: only those of the columns used (colUsed) when rows
**   lacking all of them cannot be in the result: no family column used
**   (row keys only), or a NULL-rejecting WHERE term on a read family
**   (claimed with an argv slot, so that an outer join's ON term, which
**   must keep every row, cannot pass for one: see wcsBestIndex, step 6).
**   Otherwise those too, asking the engine for every row of the table
**   (bRowsOfAll): it reads the other families only to find rows, and not
**   at all when the files' notes show every family has the same rows.
**
**   Writes: xUpdate turns a row into mutations of the store's shared
**   transaction; sqlite3_vtab_nochange() keeps UPDATE to the columns it
**   changes. doc/sql.md has the user-facing rules.
*/
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "vtab/vtab.h"

#ifndef SQLITE_CORE
SQLITE_EXTENSION_INIT1
#endif

/* Column numbers depend on the schema (how many key fields, qualifiers
** and families), so each table computes them once in declareTable and
** keeps them in WcsTab: iColQual, iColFam, iColKey, iColTs for tables;
** iColFamily, iColQualifier, iColTs, iColValue, iColLatest, iColKey for
** history views. Key fields are always columns 0..nField-1. */

/* Plan cost units: one row read = 1, one seek = SEEK_COST. */
#define SEEK_COST 10.0

/* Value filters (spec token v) a plan takes at most; terms past them stay
** SQLite's alone. */
#define WCS_MAX_VF 8

/* Truth of a comparison whose operand could not become a key value. */
#define VAL_USE   0 /* the operand is a key value */
#define VAL_TRUE  1 /* holds for every row */
#define VAL_FALSE 2 /* holds for no row */

static int setErr(sqlite3_vtab *pVtab, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  return SQLITE_ERROR;
}

int wcsToSqlite(int rc) {
  switch (rc) {
  case WCS_OK:
    return SQLITE_OK;
  case WCS_RANGE:
    return SQLITE_CONSTRAINT;
  case WCS_NOTFOUND:
    return SQLITE_INTERNAL;
  default:
    return rc; /* numbered like SQLite's */
  }
}

int wcsReplacedErr(WcsTab *pTab) {
  setErr(&pTab->base,
         "%s: store table '%s' was dropped and created again since this "
         "connection opened it; open the database again to use the new "
         "table, or DROP TABLE %s to remove this declaration",
         pTab->zName, pTab->zStoreTable, pTab->zName);
  return SQLITE_SCHEMA;
}

/* The error of a table whose store table is gone (another table of this
** connection dropped it, say): set on pTab, SQLITE_ERROR returned. */
static int tabGoneErr(WcsTab *pTab) {
  return setErr(&pTab->base,
                "%s: store table '%s' is missing (dropped since this "
                "connection opened it); DROP TABLE %s removes this "
                "declaration",
                pTab->zName, pTab->zStoreTable, pTab->zName);
}

/* pTab's store table as the store has it now (*ppNow NULL: none); 0 when
** that cannot be told. */
static int tabNow(WcsTab *pTab, wcs_table **ppNow) {
  *ppNow = NULL;
  return pTab->pStore && pTab->zStoreTable &&
         wcs_table_open(pTab->pStore->pEng, pTab->zStoreTable, ppNow) == WCS_OK;
}

int wcsDroppedErr(WcsTab *pTab) {
  wcs_table *pNow;
  if (pTab->pTab == NULL || !wcs_table_stale(pTab->pTab)) return 0;
  if (!tabNow(pTab, &pNow) || pNow != NULL) {
    wcs_table_close(pNow);
    return 0;
  }
  tabGoneErr(pTab);
  return 1;
}

/* Report an engine error on the vtab, with its message. */
static int engErr(WcsTab *pTab, int rc, const char *zWhat) {
  const char *zMsg = pTab->pStore ? wcs_engine_errmsg(pTab->pStore->pEng) : "";
  if (rc == WCS_SCHEMA && pTab->pStore && pTab->zStoreTable) {
    /* "altered or dropped": which, when it is gone */
    wcs_table *pNow;
    int bKnown = tabNow(pTab, &pNow);
    if (bKnown && pNow == NULL) return tabGoneErr(pTab);
    if (pNow && pTab->pTab && wcs_table_id(pNow) != wcs_table_id(pTab->pTab)) {
      /* a new table of the name: this declaration keeps the old one */
      wcs_table_close(pNow);
      return wcsReplacedErr(pTab);
    }
    wcs_table_close(pNow);
    if (pNow && pTab->bInTxn) {
      /* the transaction keeps the table as it began */
      setErr(&pTab->base,
             "%s: store table '%s' was altered by another connection "
             "during this transaction, which cannot commit: roll it back "
             "(a COMMIT refused with this message has) and run it again",
             pTab->zName, pTab->zStoreTable);
      return SQLITE_SCHEMA;
    }
    if (pNow && zWhat && strcmp(zWhat, pTab->zName) == 0) {
      /* altered as the statement began (a statement that starts after
      ** takes the table as it is now) */
      setErr(&pTab->base,
             "%s: store table '%s' was altered by another connection as "
             "this statement began; run the statement again",
             pTab->zName, pTab->zStoreTable);
      return SQLITE_SCHEMA;
    }
  }
  if (zMsg == NULL || zMsg[0] == 0) zMsg = wcs_errstr(rc);
  sqlite3_free(pTab->base.zErrMsg);
  pTab->base.zErrMsg =
      sqlite3_mprintf("%s%s%s", zWhat ? zWhat : "", zWhat ? ": " : "", zMsg);
  return wcsToSqlite(rc);
}

/* A commit of this connection that failed in xCommit, reported once, on
** the next statement that uses a table of the store: SQLITE_OK if none. */
static int lostReport(WcsTab *pTab) {
  WcsStore *st = pTab->pStore;
  int rc;
  if (st == NULL || st->rcLost == SQLITE_OK) return SQLITE_OK;
  setErr(&pTab->base, "%s: %s", pTab->zName,
         st->zLost ? st->zLost : "a COMMIT could not write the store");
  rc = st->rcLost;
  sqlite3_free(st->zLost);
  st->zLost = NULL;
  st->rcLost = SQLITE_OK;
  return rc;
}

/* Whether zSql (sqlite3_mprintf'd here, then freed) gives a row, and,
** with zWant, one whose first column is that text (any case). */
static int firstRow(sqlite3 *db, char *zSql, const char *zWant) {
  sqlite3_stmt *pStmt = NULL;
  int bYes = 0;
  if (zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) == SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    const char *z = (const char *)sqlite3_column_text(pStmt, 0);
    bYes = zWant == NULL || (z && sqlite3_stricmp(z, zWant) == 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return bYes;
}

/* Whether the table's database is in WAL mode (asked only while commits
** are in flight, so rarely). */
static int isWal(WcsTab *pTab) {
  return firstRow(pTab->pConn->db,
                  sqlite3_mprintf("PRAGMA \"%w\".journal_mode", pTab->zDb),
                  "wal");
}

/* How long a statement waits for the commits in flight of other
** connections on its database file (awaitCommits): far longer than any
** store commit takes, so that it ends only if one is stuck between
** SQLite's commit and its own. */
#define WCS_AWAIT_MILLIS 30000

/* The table's database file as a key of the commit gate
** (wcs_txn_gate_key): the same for every connection of the process on
** that file, so that a statement waits only for the commits in flight
** that passed its own file's lock. A file of no name (":memory:", temp)
** is the connection's alone. */
static uint64_t gateKey(WcsTab *pTab) {
  if (pTab->iGateKey == 0) {
    const char *zFile = sqlite3_db_filename(pTab->pConn->db, pTab->zDb);
    uint64_t h;
    if (zFile && zFile[0]) {
      h = XXH3_64bits(zFile, strlen(zFile));
    } else {
      char aId[64];
      int n = snprintf(aId, sizeof aId, "%p %s", (void *)pTab->pConn->db,
                       pTab->zDb);
      h = XXH3_64bits(aId, (size_t)n < sizeof aId ? (size_t)n : sizeof aId);
    }
    pTab->iGateKey = h ? h : 1;
  }
  return pTab->iGateKey;
}

/* Before this connection reads the store while it holds SQLite's write
** lock on the table's database (bWriting: it is known to; else asked), wait
** for the commits in flight of other connections on that database file
** (wcs_engine_await_commits in include/wcs.h, keyed by gateKey; those of
** other files passed no lock of this one): the lock's previous holder has
** let go of it before
** its xCommit wrote the store, and a read-modify-write must see that
** commit, as SQLite's own tables would. Without the lock, a wait in WAL
** mode only: a reader there may write next in the same transaction (or
** while its statement is open), and a commit in flight that saw no reader
** when it looked (othersReading) did not tick the clock that would refuse
** that write, so the reader must see the commit instead. With a rollback
** journal a commit in flight may still be waiting for SQLite's lock,
** which a reader of the file holds, so the reader does not wait (and the
** lock refuses that commit or orders it before the reader). Almost never
** a long wait (the commits in flight have passed SQLite's commit on this
** file, if they wrote it). */
static void awaitCommits(WcsTab *pTab, int bWriting) {
  WcsStore *st = pTab->pStore;
  if (st == NULL || st->pEng == NULL ||
      wcs_engine_commits_in_flight(st->pEng, st->pTxn, gateKey(pTab)) <= 0) {
    return;
  }
  if (!bWriting &&
      sqlite3_txn_state(pTab->pConn->db, pTab->zDb) != SQLITE_TXN_WRITE &&
      !isWal(pTab)) {
    return;
  }
  wcs_engine_await_commits(st->pEng, st->pTxn, gateKey(pTab), WCS_AWAIT_MILLIS);
}

/* ====================================================================
** Connections and stores
** ==================================================================== */

/* Every connection the module is registered on, so that a program linking
** the module can reach a connection's stores (wcs_sqlite_engine). */
static pthread_mutex_t gConnMutex = PTHREAD_MUTEX_INITIALIZER;
static WcsConn *gConnList;

static void readSnapDrop(WcsStore *st);

static void connUnref(WcsConn *pConn) {
  if (pConn && --pConn->nRef == 0) {
    WcsStore *s = pConn->pStore;
    WcsConn **pp;
    pthread_mutex_lock(&gConnMutex);
    for (pp = &gConnList; *pp; pp = &(*pp)->pNextConn) {
      if (*pp == pConn) {
        *pp = pConn->pNextConn;
        break;
      }
    }
    pthread_mutex_unlock(&gConnMutex);
    while (s) {
      WcsStore *pNext = s->pNext;
      readSnapDrop(s);
      sqlite3_free(s->aReadSnap);
      wcs_moment_free(s->pMoment);
      wcs_txn_free(s->pTxn);
      wcs_engine_close(s->pEng);
      sqlite3_free(s->zPath);
      sqlite3_free(s->aSp);
      if (s->zLost) {
        sqlite3_log(s->rcLost,
                    "wcs: never reported, the connection closed "
                    "first: %s",
                    s->zLost);
      }
      sqlite3_free(s->zLost);
      sqlite3_free(s);
      s = pNext;
    }
    sqlite3_free(pConn);
  }
}

static void connDestroy(void *p) {
  connUnref((WcsConn *)p);
}

/* Directory part of z (without the slash); "." if none. */
static char *dirName(const char *z) {
  const char *zSlash = strrchr(z, '/');
  if (zSlash == NULL) return sqlite3_mprintf(".");
  if (zSlash == z) return sqlite3_mprintf("/");
  return sqlite3_mprintf("%.*s", (int)(zSlash - z), z);
}

/* Canonical form of a path that may not exist yet: realpath() of the
** longest existing parent plus the rest. */
static char *canonicalPath(const char *zPath) {
  char *zReal = realpath(zPath, NULL);
  char *zOut;
  if (zReal) {
    zOut = sqlite3_mprintf("%s", zReal);
    free(zReal);
    return zOut;
  }
  {
    char *zDir = dirName(zPath);
    const char *zBase = strrchr(zPath, '/');
    zBase = zBase ? zBase + 1 : zPath;
    if (zDir == NULL) return NULL;
    zReal = realpath(zDir, NULL);
    if (zReal) {
      zOut = sqlite3_mprintf("%s%s%s", zReal,
                             zReal[strlen(zReal) - 1] == '/' ? "" : "/", zBase);
      free(zReal);
    } else {
      zOut = sqlite3_mprintf("%s", zPath);
    }
    sqlite3_free(zDir);
    return zOut;
  }
}

/*
** Where the store of a table declared in schema zDb lives. *pzPath is
** NULL for the connection's in-memory store. Rules (doc/sql.md, STORE):
** STORE ':memory:' is the in-memory store; an absolute STORE path is used
** as is; a relative one is taken from the directory of the database file
** (the current directory for in-memory databases); without STORE the store
** is "<database file>.wcs", or in memory for :memory:, temp and memdb
** (deserialized) databases.
*/
static int storePath(sqlite3 *db, const char *zDb, const char *zStore,
                     char **pzPath) {
  const char *zFile = sqlite3_db_filename(db, zDb);
  sqlite3_vfs *pVfs = NULL;
  if (zFile && zFile[0] &&
      sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs) ==
          SQLITE_OK &&
      pVfs && pVfs->zName && strcmp(pVfs->zName, "memdb") == 0) {
    /* sqlite3_deserialize() and "file:/name?vfs=memdb" give a name ("x",
    ** "/name") to a database that is in memory all the same */
    zFile = NULL;
  }
  char *zPath = NULL;
  *pzPath = NULL;
  if (zStore) {
    if (strcmp(zStore, ":memory:") == 0) return SQLITE_OK;
    if (zStore[0] == '/') {
      zPath = sqlite3_mprintf("%s", zStore);
    } else if (zFile && zFile[0]) {
      char *zDir = dirName(zFile);
      zPath = zDir ? sqlite3_mprintf("%s/%s", zDir, zStore) : NULL;
      sqlite3_free(zDir);
    } else {
      char zCwd[4096];
      if (getcwd(zCwd, sizeof(zCwd)) == NULL) return SQLITE_CANTOPEN;
      zPath = sqlite3_mprintf("%s/%s", zCwd, zStore);
    }
  } else {
    if (zFile == NULL || zFile[0] == 0) return SQLITE_OK;
    zPath = sqlite3_mprintf("%s.wcs", zFile);
  }
  if (zPath == NULL) return SQLITE_NOMEM;
  *pzPath = canonicalPath(zPath);
  sqlite3_free(zPath);
  return *pzPath ? SQLITE_OK : SQLITE_NOMEM;
}

int wcsPathFromDb(sqlite3 *db, const char *zDb, const char *zPath,
                  char **pzPath) {
  if (strcmp(zPath, ":memory:") == 0) {
    *pzPath = NULL;
    return SQLITE_MISUSE;
  }
  return storePath(db, zDb, zPath, pzPath);
}

/* The store at zPath (NULL: in memory) this connection opened, or NULL. */
static WcsStore *connFindStore(WcsConn *pConn, const char *zPath) {
  WcsStore *s;
  for (s = pConn->pStore; s; s = s->pNext) {
    if (zPath ? s->zPath && strcmp(zPath, s->zPath) == 0 : s->zPath == NULL) {
      return s;
    }
  }
  return NULL;
}

/* Find or open the store at zPath (NULL: in memory) for this connection.
** bReadOnly: the table's database is read-only to this connection (opened
** so, mode=ro): the store is read as a follower's, which takes no lock,
** recovers and writes nothing, so it works on a read-only file system and
** leaves the store to the process that writes it. */
static int connStore(WcsConn *pConn, const char *zPath, const ks_schema *pArgs,
                     int bCreate, int bReadOnly, WcsStore **ppStore,
                     char **pzErr) {
  WcsStore *s;
  wcs_options opt;
  char *zErr = NULL;
  int rc;
  if ((s = connFindStore(pConn, zPath)) != NULL) {
    *ppStore = s;
    return SQLITE_OK;
  }
  s = sqlite3_malloc(sizeof(*s));
  if (s == NULL) return SQLITE_NOMEM;
  memset(s, 0, sizeof(*s));
  if (zPath) {
    s->zPath = sqlite3_mprintf("%s", zPath);
    if (s->zPath == NULL) {
      sqlite3_free(s);
      return SQLITE_NOMEM;
    }
  }
  wcs_options_init(&opt);
  opt.bCreate = bCreate;
  if (zPath == NULL) opt.bInMemory = 1;
  if (pArgs && pArgs->iSync >= 0) opt.iSync = pArgs->iSync;
  if (pArgs && pArgs->iZstdLevel >= 0) opt.iZstdLevel = pArgs->iZstdLevel;
  if (pArgs && pArgs->nCacheBytes >= 0) {
    opt.nCache = (size_t)pArgs->nCacheBytes;
  }
  s->opt = opt;
  if (bCreate) {
    rc = wcs_engine_open_path(&s->pEng, zPath, &opt, &zErr);
  } else if (bReadOnly && zPath) {
    /* the process's open engine for the store, else a follower */
    rc = wcs_engine_open_reader(&s->pEng, zPath, &opt, &s->bFollow, &zErr);
    if (rc != WCS_OK) s->bFollow = 0;
  } else {
    /* another process may write it: then read it beside that process, as
    ** of the latest commit when each statement begins (storeFollow) */
    rc = wcs_engine_open_shared(&s->pEng, zPath, &opt, &s->bFollow, &zErr);
  }
  if (rc != WCS_OK && zPath == NULL && !bCreate) {
    /* a table declared with STORE ':memory:' in a database file, opened
    ** again: its store lived in the connection that made it; or a
    ** database file's image in memory (a backup, sqlite3_deserialize),
    ** which brought the declaration without the file's store */
    *pzErr = sqlite3_mprintf(
        "wcs: its store is in memory (STORE ':memory:', or an in-memory "
        "database), and this connection's has no such table: an in-memory "
        "store belongs to the connection that made its tables (and goes "
        "when it closes), and a database file's image in memory (a backup "
        "into :memory:, sqlite3_deserialize) brings the declarations, not "
        "the file's store (open or ATTACH the file itself)");
    wcs_free(zErr);
    sqlite3_free(s);
    return SQLITE_CANTOPEN;
  }
  if (rc != WCS_OK) {
    *pzErr = sqlite3_mprintf(
        "wcs: cannot open store %s: %s",
        zPath ? zPath : ":memory:", zErr ? zErr : wcs_errstr(rc));
    wcs_free(zErr);
    sqlite3_free(s->zPath);
    sqlite3_free(s);
    return wcsToSqlite(rc);
  }
  s->pNext = pConn->pStore;
  pConn->pStore = s;
  *ppStore = s;
  return SQLITE_OK;
}

wcs_txn *wcsReadTxn(WcsStore *pStore) {
  return pStore->nActive > 0 ? pStore->pTxn : NULL;
}

/* What the connection's cursors on st read outside a store transaction,
** one moment per database file: a snapshot of the store taken by the
** first of them on that file to filter, after awaitCommits (so it holds
** what a read of the file at that moment must see), and kept while any of
** the connection's cursors on the store is open. So a statement (a join,
** a subquery per row, a self-join) reads each file's tables at one
** moment, and so do the connection's statements that run while another
** still reads, as SQLite reads each database file of a connection in one
** read transaction; tables of two files read at two moments, as SQLite's
** would. Dropped with the last cursor; a file's is renewed by the
** connection's own commit to it (readSnapRenew). A follower reads as of
** its moment already (storeFollow): none. *ppSnap is NULL then, or in a
** store transaction (its own snapshot). */
static int readSnap(WcsTab *pTab, const wcs_snapshot **ppSnap) {
  WcsStore *st = pTab->pStore;
  uint64_t iKey;
  int i;
  *ppSnap = NULL;
  if (st == NULL || st->bFollow || wcsReadTxn(st) != NULL) return SQLITE_OK;
  iKey = gateKey(pTab);
  for (i = 0; i < st->nReadSnap && st->aReadSnap[i].iKey != iKey; i++) {
  }
  if (i == st->nReadSnap) {
    if (i == st->nReadSnapAlloc) {
      int nNew = i ? 2 * i : 2;
      WcsReadSnap *a =
          sqlite3_realloc64(st->aReadSnap, sizeof(*a) * (sqlite3_uint64)nNew);
      if (a == NULL) return SQLITE_NOMEM;
      st->aReadSnap = a;
      st->nReadSnapAlloc = nNew;
    }
    if (wcs_snapshot_new(wcs_engine_db(st->pEng), &st->aReadSnap[i].p) !=
        WCS_OK) {
      return SQLITE_NOMEM;
    }
    st->aReadSnap[i].iKey = iKey;
    st->nReadSnap++;
  }
  *ppSnap = st->aReadSnap[i].p;
  return SQLITE_OK;
}

static void readSnapDrop(WcsStore *st) {
  int i;
  for (i = 0; i < st->nReadSnap; i++) {
    wcs_snapshot_free(wcs_engine_db(st->pEng), st->aReadSnap[i].p);
  }
  st->nReadSnap = 0;
}

/* The connection committed to pTab's file: while a statement of it still
** reads, its later reads of that file see the commit and nothing later
** (SQLite's own read snapshot of a file becomes the state the
** connection's commit to it made); the moments of its other files stay.
** Else the next read takes a moment of its own. */
static void readSnapRenew(WcsTab *pTab) {
  WcsStore *st = pTab->pStore;
  uint64_t iKey = gateKey(pTab);
  int i;
  for (i = 0; i < st->nReadSnap && st->aReadSnap[i].iKey != iKey; i++) {
  }
  if (i == st->nReadSnap) return;
  wcs_snapshot_free(wcs_engine_db(st->pEng), st->aReadSnap[i].p);
  if (wcs_snapshot_new(wcs_engine_db(st->pEng), &st->aReadSnap[i].p) !=
      WCS_OK) {
    /* (out of memory: taken afresh at the next read) */
    st->aReadSnap[i] = st->aReadSnap[--st->nReadSnap];
  }
}

/* The connection committed a write of w's store table: renew the read
** moments of every file with a table of the connection over that store
** table (a TABLE 'x' declaration in another file, or in temp, reads the
** same cells), so that its later reads see its own write there too. */
static void readSnapRenewTable(WcsTab *w) {
  WcsTab *q;
  if (w->pStore == NULL || w->pStore->nReadSnap == 0) return; /* none held */
  for (q = w->pConn->pTab; q; q = q->pNextTab) {
    if (q->pStore == w->pStore && q->zStoreTable && w->zStoreTable &&
        strcmp(q->zStoreTable, w->zStoreTable) == 0) {
      readSnapRenew(q);
    }
  }
}

/* A statement of db that is running and writes, or NULL. */
static sqlite3_stmt *busyWriter(sqlite3 *db) {
  sqlite3_stmt *p;
  for (p = sqlite3_next_stmt(db, NULL); p; p = sqlite3_next_stmt(db, p)) {
    if (sqlite3_stmt_busy(p) && !sqlite3_stmt_readonly(p)) return p;
  }
  return NULL;
}

int wcsWriteInProgress(sqlite3 *db) {
  return busyWriter(db) != NULL;
}

static int clockTick(WcsTab *pTab);
static int othersReading(WcsTab *pTab);
static int freezeReaders(WcsTab *pW, const void *pRow, size_t nRow);
static void fromClear(WcsTab *pTab);

/*
** A SQL function's write commits on its own unless the SQLite transaction
** already writes to the store (then it joins it: *peOwn = WCS_OWN_NONE).
** On its own it is ordered with the other connections' writes as an
** INSERT is, by SQLite's write lock on the table's database: taken first,
** so that the function waits for (or, past the busy timeout, is refused
** by) a transaction of another connection that writes, and reads the
** cells that transaction committed; its commit then ticks the table's
** clock as xSync does, so that a transaction which read before it cannot
** then write over it. In autocommit (WCS_OWN_BEGUN) that is BEGIN
** IMMEDIATE here and COMMIT in wcsEndOwnTxn; inside a transaction, or
** inside a statement that writes (WCS_OWN_TICKED), a tick of the clock
** now takes the lock, which the enclosing transaction keeps.
*/
int wcsWriteTxn(WcsTab *pTab, wcs_txn **ppTxn, int *peOwn) {
  WcsStore *s = pTab->pStore;
  sqlite3 *db = pTab->pConn->db;
  int rc;
  *ppTxn = NULL;
  *peOwn = WCS_OWN_NONE;
  if (s->nActive > 0 && s->pTxn) {
    /* the store transaction's: its commit writes this table too, and
    ** passes this file's lock */
    *ppTxn = s->pTxn;
    pTab->bFnWrote = 1;
    wcs_txn_gate_key(s->pTxn, gateKey(pTab));
    return freezeReaders(pTab, NULL, 0);
  }
  if (sqlite3_get_autocommit(db) && !wcsWriteInProgress(db)) {
    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      return setErr(&pTab->base, "%s: %s%s", pTab->zName, sqlite3_errmsg(db),
                    (rc & 0xff) == SQLITE_BUSY
                        ? " (another connection writes the database; "
                          "nothing was changed: try again, or set a busy "
                          "timeout to wait)"
                        : "");
    }
    *peOwn = WCS_OWN_BEGUN;
  } else {
    rc = clockTick(pTab);
    if (rc != SQLITE_OK) return rc;
    *peOwn = WCS_OWN_TICKED;
  }
  /* the lock is held: the commits of its previous holders come first */
  awaitCommits(pTab, 1);
  rc = wcs_txn_begin(s->pEng, WCS_TXN_EXCLUSIVE, ppTxn);
  if (rc != WCS_OK) {
    rc = engErr(pTab, rc, pTab->zName);
    if (*peOwn == WCS_OWN_BEGUN) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    *peOwn = WCS_OWN_NONE;
  } else {
    /* its commit passes this file's lock only (wcsBegin) */
    wcs_txn_gate_key(*ppTxn, gateKey(pTab));
  }
  return rc;
}

int wcsEndOwnTxn(WcsTab *pTab, wcs_txn *pTxn, int eOwn, int rc) {
  sqlite3 *db = pTab->pConn->db;
  if (rc == WCS_OK) {
    rc = wcs_txn_precheck(pTxn);
    if (rc != WCS_OK) rc = engErr(pTab, rc, pTab->zName);
  } else {
    rc = engErr(pTab, rc, pTab->zName);
  }
  if (rc == SQLITE_OK && eOwn == WCS_OWN_BEGUN) {
    if (!pTab->bNoClock && othersReading(pTab)) rc = clockTick(pTab);
    if (rc == SQLITE_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) {
      rc = setErr(&pTab->base, "%s: %s", pTab->zName, sqlite3_errmsg(db));
    }
  }
  if (rc == SQLITE_OK) {
    rc = wcs_txn_commit(pTxn);
    if (rc != WCS_OK) {
      rc = engErr(pTab, rc, pTab->zName);
    } else if (wcsReadTxn(pTab->pStore) == NULL) {
      readSnapRenewTable(pTab);
    }
  } else if (eOwn == WCS_OWN_BEGUN && !sqlite3_get_autocommit(db)) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  }
  wcs_txn_free(pTxn);
  return rc;
}

/* ====================================================================
** Creating and connecting
** ==================================================================== */

static void cursorFree(struct WcsCursor *p);
static int tabRetry(WcsTab *pTab);
static int tabAdopt(WcsTab *pTab, wcs_table *t, const char *zStale);
static int storeFollow(WcsConn *pConn, WcsStore *s, int bWrite, char **pzErr);
static int wcsBegin(sqlite3_vtab *pVtab);

/* Free pTab's per-schema lookup arrays (tableLayout makes them). */
static void tableLayoutFree(WcsTab *pTab) {
  sqlite3_free(pTab->aQualOrder);
  sqlite3_free(pTab->aFamQual);
  sqlite3_free(pTab->aQualLen);
  sqlite3_free(pTab->aQualCol);
  sqlite3_free(pTab->aPrefixEst);
  sqlite3_free(pTab->aPrefixAt);
  pTab->aQualOrder = pTab->aFamQual = pTab->aQualLen = NULL;
  pTab->aQualCol = NULL;
  pTab->aPrefixEst = NULL;
  pTab->aPrefixAt = NULL;
}

static void tabFree(WcsTab *pTab) {
  if (pTab == NULL) return;
  cursorFree(pTab->pSpare);
  if (pTab->pConn) {
    WcsTab **pp;
    pTab->pConn->nGen++;
    for (pp = &pTab->pConn->pTab; *pp; pp = &(*pp)->pNextTab) {
      if (*pp == pTab) {
        *pp = pTab->pNextTab;
        break;
      }
    }
  }
  wcs_table_close(pTab->pTab);
  if (pTab->pStore && --pTab->pStore->nTab == 0 && pTab->pStore->zPath &&
      !pTab->pStore->bFollow && !wcs_engine_forked(pTab->pStore->pEng) &&
      !(pTab->pConn && pTab->zDb &&
        sqlite3_db_readonly(pTab->pConn->db, pTab->zDb) == 1)) {
    /* the last table of this connection on the store is going: keep the
    ** key-distribution counters for later processes (the wcs shell's
    ** .keyviz); best effort, a disconnect cannot fail. Not from a
    ** read-only connection, which changes nothing. */
    wcs_engine_heat_save(pTab->pStore->pEng);
  }
  ks_schema_free(pTab->pOwnSchema);
  wcs_buf_free(&pTab->updKey);
  wcs_buf_free(&pTab->updCell);
  fromClear(pTab);
  tableLayoutFree(pTab);
  sqlite3_free(pTab->zName);
  sqlite3_free(pTab->zDb);
  sqlite3_free(pTab->zStoreTable);
  sqlite3_free(pTab->zMissing);
  sqlite3_free(pTab->zPath);
  sqlite3_free(pTab->zDecl);
  sqlite3_free(pTab->base.zErrMsg);
  sqlite3_finalize(pTab->pTick);
  connUnref(pTab->pConn);
  sqlite3_free(pTab);
}

/* ====================================================================
** The commit clock
**
** SQLite tells a virtual table of a transaction only at its first write
** (xBegin), so the store alone cannot tell that a transaction which read
** a table and then writes it read before another connection's commit.
** SQLite tells for its own tables: in WAL mode a transaction that began
** reading before another connection committed cannot then write
** (SQLITE_BUSY_SNAPSHOT: roll back and run it again), and with a
** rollback journal the commit waits for the reader (which wcs commits
** already do: they take SQLite's write lock). In WAL mode a wcs commit
** writes no page of the database file, so SQLite sees nothing to refuse.
** So each writable wcs table has a one-row native table beside it in the
** same schema, <name>_wcsclock (n INTEGER), a shadow table
** (xShadowName), and a commit that writes the table adds one to it
** (xSync) while another connection of this process that has the store
** open holds a read transaction (othersReading): that reader's snapshot
** of the database file is then older than the file, and SQLite refuses
** its next write as it would after a commit to a native table, so a
** read-modify-write over several statements loses no update. (Only this
** process can write the store: doc/sql.md, "Another process".) A commit
** with no such reader, the common case, writes no page and pays nothing.
** A table declared before clocks existed has none and ticks nothing
** (bNoClock).
** ==================================================================== */

/* The module's own statement (a clock's tick) changed nDelta rows while a
** statement of the connection may be writing a store table (a function's
** write to another store's table, inside that statement): it ended no
** statement that marked (markCurrent), so the marks count its rows as
** already seen. */
static void marksShift(WcsConn *pConn, sqlite3_int64 nDelta) {
  WcsStore *st;
  if (nDelta == 0) return;
  for (st = pConn->pStore; st; st = st->pNext) {
    if (st->bMark) st->nMarkChanges += nDelta;
  }
}

/* Run zSql (sqlite3_mprintf'd here; NULL: out of memory) on db. */
static int execFree(sqlite3 *db, char *zSql) {
  int rc;
  if (zSql == NULL) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
  sqlite3_free(zSql);
  return rc;
}

/* CREATE VIRTUAL TABLE: make the clock of table zName in schema zDb. */
/* Whether table zName of database zDb has its commit clock: 1 if so, 0 if
** there is no table by the clock's name, -1 if one of another shape is
** there (a table of the user's, which the clock must not tick or drop). */
static int clockState(sqlite3 *db, const char *zDb, const char *zName) {
  if (!firstRow(db,
                sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE "
                                "type = 'table' AND name = '%q_wcsclock'",
                                zDb, zName),
                NULL)) {
    return 0;
  }
  return firstRow(db,
                  sqlite3_mprintf(
                      "SELECT (SELECT group_concat(name) FROM "
                      "pragma_table_info('%q_wcsclock', '%q')) = 'n' AND "
                      "(SELECT count(*) <= 1 FROM \"%w\".\"%w_wcsclock\")",
                      zName, zDb, zDb, zName),
                  "1")
             ? 1
             : -1;
}

static int clockCreate(sqlite3 *db, const char *zDb, const char *zName,
                       char **pzErr) {
  int rc;
  if (clockState(db, zDb, zName) < 0) {
    /* a table of the user's by that name: ticking and dropping it as the
    ** clock would change and lose its rows */
    *pzErr = sqlite3_mprintf(
        "wcs: cannot create %s: %s.%s_wcsclock exists and is not a commit "
        "clock (a table of one column n and one row, which wcs keeps "
        "beside each of its tables); rename that table or name this one "
        "otherwise",
        zName, zDb, zName);
    return SQLITE_ERROR;
  }
  rc = execFree(
      db,
      sqlite3_mprintf("CREATE TABLE IF NOT EXISTS \"%w\".\"%w_wcsclock\""
                      "(n INTEGER NOT NULL);"
                      "INSERT INTO \"%w\".\"%w_wcsclock\"(n) SELECT 0 "
                      "WHERE NOT EXISTS (SELECT 1 FROM \"%w\".\"%w_wcsclock\")",
                      zDb, zName, zDb, zName, zDb, zName));
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("wcs: cannot create %s_wcsclock, the commit clock "
                             "of %s: %s",
                             zName, zName, sqlite3_errmsg(db));
  }
  return rc;
}

/* Whether the table's clock exists (a table declared before clocks
** existed has none). */
static int clockExists(WcsTab *pTab) {
  return clockState(pTab->pConn->db, pTab->zDb, pTab->zName) > 0;
}

/* A commit that writes the table while another connection reads
** (xSync): add one to the table's clock. */
static int clockTick(WcsTab *pTab) {
  sqlite3 *db = pTab->pConn->db;
  sqlite3_int64 nBefore;
  int rc;
  if (pTab->bNoClock) return SQLITE_OK;
  if (pTab->pTick == NULL) {
    char *zSql;
    if (!clockExists(pTab)) {
      pTab->bNoClock = 1;
      return SQLITE_OK;
    }
    zSql = sqlite3_mprintf("UPDATE \"%w\".\"%w_wcsclock\" SET n = n + 1",
                           pTab->zDb, pTab->zName);
    if (zSql == NULL) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_PERSISTENT,
                            &pTab->pTick, NULL);
    sqlite3_free(zSql);
    if (rc != SQLITE_OK) {
      return setErr(&pTab->base, "%s: cannot tick %s_wcsclock: %s", pTab->zName,
                    pTab->zName, sqlite3_errmsg(db));
    }
  }
  nBefore = sqlite3_total_changes64(db);
  rc = sqlite3_step(pTab->pTick);
  marksShift(pTab->pConn, sqlite3_total_changes64(db) - nBefore);
  if (rc != SQLITE_DONE) {
    setErr(&pTab->base, "%s: cannot tick %s_wcsclock: %s", pTab->zName,
           pTab->zName, sqlite3_errmsg(db));
    sqlite3_finalize(pTab->pTick);
    pTab->pTick = NULL;
    if (!clockExists(pTab)) {
      /* dropped since (SQL may drop it outside defensive mode) */
      pTab->bNoClock = 1;
      return SQLITE_OK;
    }
    return rc == SQLITE_ROW ? SQLITE_ERROR : rc;
  }
  sqlite3_reset(pTab->pTick);
  return SQLITE_OK;
}

/* Whether a connection of this process other than pTab's has pTab's
** store open and holds a read transaction (on any schema), or may: one
** whose mutex is held (busy in a statement) or that has none to take
** (opened without one, SQLITE_OPEN_NOMUTEX) counts, since it cannot be
** looked at safely, and a needless tick costs only a page write. Never
** waits for another connection: its mutex is only tried, with the list's
** held (gConnMutex before a connection's mutex, never after). */
static int othersReading(WcsTab *pTab) {
  sqlite3 *db = pTab->pConn->db;
  wcs_engine *pEng = pTab->pStore->pEng;
  WcsConn *p;
  int bYes = 0;
  pthread_mutex_lock(&gConnMutex);
  for (p = gConnList; p && !bYes; p = p->pNextConn) {
    sqlite3_mutex *m;
    WcsStore *st;
    if (p->db == db) continue;
    m = sqlite3_db_mutex(p->db);
    if (m == NULL || sqlite3_mutex_try(m) != SQLITE_OK) {
      bYes = 1;
      break;
    }
    for (st = p->pStore; st && st->pEng != pEng; st = st->pNext) {
    }
    bYes = st != NULL && sqlite3_txn_state(p->db, NULL) != SQLITE_TXN_NONE;
    sqlite3_mutex_leave(m);
  }
  pthread_mutex_unlock(&gConnMutex);
  return bYes;
}

/* xShadowName: the clock is the module's; in defensive mode SQL may read
** it but not write it. */
static int wcsShadowName(const char *zSuffix) {
  return sqlite3_stricmp(zSuffix, "wcsclock") == 0;
}

/* Compare qualifier names as the store orders them: bytes, shorter first. */
static int qualCmp(const char *zA, int nA, const char *zB, int nB) {
  int c = memcmp(zA, zB, (size_t)(nA < nB ? nA : nB));
  return c ? c : nA - nB;
}

/* Order of declared qualifiers as cells arrive: by family, then name
** bytes. */
static int qualOrderCmp(const ks_schema *s, int a, int b) {
  const ks_qualifier *qa = &s->aQual[a], *qb = &s->aQual[b];
  if (qa->iFamily != qb->iFamily) return qa->iFamily - qb->iFamily;
  return qualCmp(qa->zName, (int)strlen(qa->zName), qb->zName,
                 (int)strlen(qb->zName));
}

static const char *fieldSqlType(const ks_field *f) {
  switch (f->eType) {
  case KS_STRING:
    return "TEXT";
  case KS_BYTES:
    return "BLOB";
  default:
    return "INTEGER";
  }
}

static const char *qualSqlType(const ks_qualifier *q) {
  switch (q->eVType) {
  case KS_V_INT64:
    return "INTEGER";
  case KS_V_FLOAT64:
    return "REAL";
  case KS_V_BYTES:
    return "BLOB";
  default:
    return "TEXT";
  }
}

/* Lay out the columns and declare the table to SQLite. */
static int tableSql(sqlite3 *db, WcsTab *pTab, const ks_schema *s, char **pzSql,
                    char **pzErr) {
  sqlite3_str *pStr = sqlite3_str_new(db);
  int i, iCol = 0;
  pTab->nField = s->nField;
  pTab->nQual = s->nQual;
  pTab->nFamily = s->nFamily;
  sqlite3_str_appendall(pStr, "CREATE TABLE x(");
  if (pTab->bHistory) {
    static const char *const azFixed[] = {"family", "qualifier", "value",
                                          "latest_n", "_cell"};
    for (i = 0; i < s->nField; i++) {
      int k;
      for (k = 0; k < (int)(sizeof(azFixed) / sizeof(azFixed[0])); k++) {
        if (sqlite3_stricmp(s->aField[i].zName, azFixed[k]) == 0) {
          /* SQL columns need distinct names, and a key field cannot be
          ** renamed: say which one stands in the way */
          *pzErr = sqlite3_mprintf(
              "wcs: %s: key field \"%s\" of store table '%s' has the name "
              "of a column of every history view (family, qualifier, "
              "_timestamp, value, latest_n, _cell), so the table cannot have "
              "one; "
              "its cells stay readable through the table and its family "
              "columns",
              pTab->zName, s->aField[i].zName, pTab->zStoreTable);
          sqlite3_free(sqlite3_str_finish(pStr));
          return SQLITE_ERROR;
        }
      }
    }
    if (s->nField == 0) {
      sqlite3_str_appendall(pStr, "\"_key\" BLOB, ");
      pTab->iColKey = iCol++;
    }
    for (i = 0; i < s->nField; i++, iCol++) {
      sqlite3_str_appendf(pStr, "\"%w\" %s NOT NULL, ", s->aField[i].zName,
                          fieldSqlType(&s->aField[i]));
    }
    pTab->iColFamily = iCol++;
    pTab->iColQualifier = iCol++;
    pTab->iColTs = iCol++;
    pTab->iColValue = iCol++;
    pTab->iColLatest = iCol++;
    sqlite3_str_appendall(pStr, "\"family\" TEXT, \"qualifier\" TEXT, "
                                "\"_timestamp\" INTEGER, \"value\", "
                                "\"latest_n\" INTEGER HIDDEN");
    if (s->nField > 0) {
      pTab->iColKey = iCol++;
      sqlite3_str_appendall(pStr, ", \"_key\" BLOB HIDDEN");
    }
    /* A view row is a cell: _cell names it (row key, family, qualifier,
    ** timestamp) and is the primary key. SQLite tells the rows of the
    ** branches of an OR it runs as several scans apart by the primary
    ** key (by the rowid of a rowid table), so it must be the cell's own;
    ** a row counter would make rows of one scan look like another's. */
    pTab->iColCell = iCol++;
    sqlite3_str_appendall(pStr,
                          ", \"_cell\" BLOB HIDDEN PRIMARY KEY) WITHOUT ROWID");
  } else {
    if (s->nField == 0) {
      sqlite3_str_appendall(pStr, "\"_key\" BLOB PRIMARY KEY, ");
      pTab->iColKey = iCol++;
    }
    for (i = 0; i < s->nField; i++, iCol++) {
      sqlite3_str_appendf(pStr, "\"%w\" %s NOT NULL, ", s->aField[i].zName,
                          fieldSqlType(&s->aField[i]));
    }
    pTab->iColQual = iCol;
    for (i = 0; i < s->nQual; i++, iCol++) {
      sqlite3_str_appendf(pStr, "\"%w\" %s, ", s->aQual[i].zName,
                          qualSqlType(&s->aQual[i]));
    }
    pTab->iColFam = iCol;
    for (i = 0; i < s->nFamily; i++, iCol++) {
      sqlite3_str_appendf(pStr, "\"%w\" TEXT, ", s->aFamily[i].zName);
    }
    if (s->nField > 0) {
      pTab->iColKey = iCol++;
      sqlite3_str_appendall(pStr, "\"_key\" BLOB HIDDEN PRIMARY KEY, ");
    }
    pTab->iColTs = iCol++;
    sqlite3_str_appendall(pStr, "\"_timestamp\" INTEGER HIDDEN) WITHOUT ROWID");
  }
  pTab->nCol = iCol;
  *pzSql = sqlite3_str_finish(pStr);
  return *pzSql ? SQLITE_OK : SQLITE_NOMEM;
}

/* Per-schema lookup arrays of pTab for schema s (replacing any). */
static int tableLayout(WcsTab *pTab, const ks_schema *s) {
  int i;
  tableLayoutFree(pTab);
  /* declared qualifiers in cell order, for the per-row lookup */
  pTab->aQualOrder = sqlite3_malloc64(sizeof(int) * (size_t)(s->nQual + 1));
  pTab->aQualLen = sqlite3_malloc64(sizeof(int) * (size_t)(s->nQual + 1));
  pTab->aQualCol =
      sqlite3_malloc64(sizeof(WcsQualCol) * (size_t)(s->nQual + 1));
  pTab->aFamQual = sqlite3_malloc64(sizeof(int) * (size_t)(s->nFamily + 1));
  pTab->aPrefixEst = sqlite3_malloc64(sizeof(double) * (size_t)(s->nField + 1));
  pTab->aPrefixAt =
      sqlite3_malloc64(sizeof(sqlite3_int64) * (size_t)(s->nField + 1));
  if (!pTab->aQualOrder || !pTab->aFamQual || !pTab->aQualLen ||
      !pTab->aQualCol || !pTab->aPrefixEst || !pTab->aPrefixAt) {
    return SQLITE_NOMEM;
  }
  memset(pTab->aPrefixEst, 0, sizeof(double) * (size_t)(s->nField + 1));
  for (i = 0; i < s->nQual; i++) {
    const ks_qualifier *q = &s->aQual[i];
    int eAgg = s->aFamily[q->iFamily].eAgg;
    pTab->aQualOrder[i] = i;
    pTab->aQualLen[i] = (int)strlen(q->zName);
    pTab->aQualCol[i].iFamily = q->iFamily;
    pTab->aQualCol[i].nName = pTab->aQualLen[i];
    pTab->aQualCol[i].zName = q->zName;
    /* as wcsResultCell() decodes 8 bytes */
    pTab->aQualCol[i].bInt8 = eAgg == KS_AGG_SUM || eAgg == KS_AGG_MIN ||
                              eAgg == KS_AGG_MAX ||
                              (eAgg == KS_AGG_NONE && q->eVType == KS_V_INT64 &&
                               q->eEnc != KS_ENC_DECIMAL);
  }
  for (i = 1; i < s->nQual; i++) { /* insertion sort: lists are short */
    int v = pTab->aQualOrder[i], j = i;
    while (j > 0 && qualOrderCmp(s, pTab->aQualOrder[j - 1], v) > 0) {
      pTab->aQualOrder[j] = pTab->aQualOrder[j - 1];
      j--;
    }
    pTab->aQualOrder[j] = v;
  }
  {
    int k = 0;
    for (i = 0; i <= s->nFamily; i++) {
      while (k < s->nQual && s->aQual[pTab->aQualOrder[k]].iFamily < i)
        k++;
      pTab->aFamQual[i] = k;
    }
  }
  return SQLITE_OK;
}

int wcsTableColumns(const ks_schema *s) {
  /* tableSql: the key fields and _key (or _key alone), the declared
  ** qualifiers, a column per family, _timestamp */
  return (s->nField > 0 ? s->nField + 1 : 1) + s->nQual + s->nFamily + 1;
}

int wcsColumnsFit(sqlite3 *db, const char *zName, const ks_schema *s,
                  char **pzErr) {
  int nCol = wcsTableColumns(s),
      nMax = sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1);
  if (nCol <= nMax) return SQLITE_OK;
  *pzErr = sqlite3_mprintf(
      "%s would have %d columns and SQLite allows %d: one per key field "
      "and declared qualifier, one per family and two hidden ones; declare "
      "fewer qualifier columns (every cell stays readable through its "
      "family's column)",
      zName, nCol, nMax);
  return SQLITE_ERROR;
}

/* Declare pTab's columns for pTab->pSchema to SQLite, and keep the text
** (zDecl) to compare with later (tabRetry). */
static int declareTable(sqlite3 *db, WcsTab *pTab, char **pzErr) {
  char *zSql = NULL;
  int rc = tableSql(db, pTab, pTab->pSchema, &zSql, pzErr);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_declare_vtab(db, zSql);
  if (rc != SQLITE_OK) {
    *pzErr = sqlite3_mprintf("wcs: cannot declare table %s (%.200s%s): %s",
                             pTab->zName, zSql, strlen(zSql) > 200 ? "..." : "",
                             sqlite3_errmsg(db));
    sqlite3_free(zSql);
    return rc;
  }
  sqlite3_free(pTab->zDecl);
  pTab->zDecl = zSql;
  return tableLayout(pTab, pTab->pSchema);
}

/* The schema text to create a store table with: only what the store
** keeps (KEY, FAMILY, COMPRESSION; not SYNC or CACHE, settings of the open
** store). */
static int createText(const ks_schema *pArgs, char **pzText) {
  ks_schema *pCopy = NULL;
  int rc = ks_schema_dup(pArgs, &pCopy);
  if (rc == WCS_OK) {
    free(pCopy->zStore);
    free(pCopy->zTable);
    pCopy->zStore = NULL;
    pCopy->zTable = NULL;
    pCopy->iSync = -1;
    pCopy->nCacheBytes = -1;
    pCopy->bHistory = 0;
    rc = ks_schema_text(pCopy, pzText);
  }
  ks_schema_free(pCopy);
  return rc;
}

/* The error for attaching to a store table that does not exist in zWhere
** (zNote: why, or ""), with what to declare instead. */
static char *noTableErr(const WcsTab *pTab, const char *zWhere,
                        const char *zNote) {
  return sqlite3_mprintf(
      "wcs: no store table '%s' in %s%s; %s", pTab->zStoreTable, zWhere, zNote,
      pTab->bHistory ? "a HISTORY view shows an existing table: name it with "
                       "TABLE 'name'"
                     : "declare its KEY and FAMILY clauses to create it");
}

/*
** Whether open store table pTab->pTab, which a CREATE VIRTUAL TABLE with
** clauses pArgs finds already there, is what such a CREATE left when its
** process was killed between making the store table (xCreate) and
** SQLite's commit of the declaration: the same schema, and no row (the
** data of that transaction was never committed to the store either). The
** CREATE then takes it over rather than refusing it. A table with rows,
** or another schema, stays someone else's (the DROP rule); so does any
** table of a store named by STORE, which other databases may share (the
** caller asks only for the database's own store, "<file>.wcs"), and any
** that a virtual table declared in a database of this connection may
** name (TABLE 'x': its declaration holds the name).
*/
static int orphanOfCreate(WcsTab *pTab, const ks_schema *pArgs) {
  sqlite3 *db = pTab->pConn->db;
  sqlite3_stmt *pList = NULL;
  char *zText = NULL;
  int bSame, bEmpty = 0, bNamed = 0;
  wcs_read_options opt;
  wcs_cursor *pCur = NULL;
  if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list", -1,
                         &pList, NULL) != SQLITE_OK) {
    return 0;
  }
  while (!bNamed && sqlite3_step(pList) == SQLITE_ROW) {
    const char *zSchema = (const char *)sqlite3_column_text(pList, 0);
    char *zSql = sqlite3_mprintf(
        "SELECT 1 FROM \"%w\".sqlite_schema WHERE type = 'table' AND sql "
        "LIKE 'CREATE VIRTUAL TABLE%%' AND instr(sql, %Q) > 0 AND NOT "
        "(%Q = %Q AND name = %Q)",
        zSchema ? zSchema : "main", pTab->zStoreTable, zSchema ? zSchema : "",
        pTab->zDb, pTab->zName);
    sqlite3_stmt *pFind = NULL;
    if (zSql == NULL ||
        sqlite3_prepare_v2(db, zSql, -1, &pFind, NULL) != SQLITE_OK ||
        sqlite3_step(pFind) != SQLITE_DONE) {
      bNamed = 1; /* a row, or no answer: not to be taken */
    }
    sqlite3_finalize(pFind);
    sqlite3_free(zSql);
  }
  sqlite3_finalize(pList);
  if (bNamed) return 0;
  if (createText(pArgs, &zText) != WCS_OK) return 0;
  bSame = strcmp(zText, wcs_table_schema_text(pTab->pTab)) == 0;
  free(zText);
  if (!bSame) return 0;
  wcs_read_options_init(&opt);
  opt.bKeysOnly = 1;
  opt.nRowLimit = 1;
  if (wcs_cursor_open(&pCur, pTab->pTab, NULL, &opt) == WCS_OK) {
    bEmpty = wcs_cursor_eof(pCur);
  }
  wcs_cursor_close(pCur);
  return bEmpty;
}

/* Why the store at zPath (NULL: in memory) could not be opened, from
** connStore's code rc: held by another process, damaged, or, when the
** store is there, a failure a later statement may not meet (a full disk,
** an I/O error, a file too large); any of these keeps the table for a
** retry (tabRetry). Else (no store there, no CURRENT, no permission) the
** store is gone: nothing to retry, and DROP TABLE drops the declaration. */
static void storeFailed(WcsTab *pTab, int rc, const char *zPath) {
  int e = rc & 0xff;
  pTab->bStoreBusy = rc == SQLITE_BUSY;
  pTab->bStoreDamaged = e == SQLITE_CORRUPT;
  pTab->rcStoreFailed = 0;
  /* (a store whose files this process may not open, which a restore by
  ** another user or a read-only mount leaves, is there all the same; a
  ** directory without the store's files, SQLITE_CANTOPEN, holds none) */
  if (zPath && access(zPath, F_OK) == 0 &&
      (e == SQLITE_IOERR || e == SQLITE_FULL || e == SQLITE_NOLFS ||
       e == SQLITE_PERM || e == SQLITE_READONLY)) {
    pTab->rcStoreFailed = rc;
  }
}

/*
** xCreate and xConnect. argv[0] is the module name, argv[1] the schema,
** argv[2] the table name, argv[3..] the clauses.
**
** The DROP rule: a virtual table declared with KEY or FAMILY clauses
** defines its store table — xCreate creates it (and refuses if a store
** table of that name exists), and DROP TABLE drops it with its data. A
** virtual table declared without them (only TABLE 'name', STORE, SYNC) or
** with HISTORY attaches to an existing store table and never drops it. So
** the declaration itself, kept by SQLite in sqlite_schema, records whether
** the table created its store table.
*/
static int wcsInit(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                   sqlite3_vtab **ppVtab, char **pzErr, int bCreate) {
  WcsConn *pConn = (WcsConn *)pAux;
  WcsTab *pTab = NULL;
  ks_schema *pArgs = NULL;
  char *zErr = NULL, *zPath = NULL;
  int rc, bClauses, bMade = 0;

  *ppVtab = NULL;
  rc = ks_parse_args(argc - 3, argv + 3, &pArgs, &zErr);
  if (rc != WCS_OK) {
    *pzErr = sqlite3_mprintf("wcs: %s", zErr ? zErr : wcs_errstr(rc));
    wcs_free(zErr);
    return SQLITE_ERROR;
  }
  pTab = sqlite3_malloc(sizeof(*pTab));
  if (pTab == NULL) {
    ks_schema_free(pArgs);
    return SQLITE_NOMEM;
  }
  memset(pTab, 0, sizeof(*pTab));
  pTab->pConn = pConn;
  pConn->nRef++;
  pTab->zName = sqlite3_mprintf("%s", argv[2]);
  pTab->zDb = sqlite3_mprintf("%s", argv[1]);
  pTab->zStoreTable =
      sqlite3_mprintf("%s", pArgs->zTable ? pArgs->zTable : argv[2]);
  pTab->bHistory = pArgs->bHistory;
  pTab->bNamed = pArgs->zTable != NULL;
  bClauses = pArgs->bKeyClause || pArgs->nFamily > 0;
  if (!pTab->zName || !pTab->zDb || !pTab->zStoreTable) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  if (pTab->bHistory && bClauses) {
    *pzErr = sqlite3_mprintf(
        "wcs: a HISTORY view takes no KEY or FAMILY clauses: it shows store "
        "table '%s' with its stored schema",
        pTab->zStoreTable);
    rc = SQLITE_ERROR;
    goto fail;
  }

  rc = storePath(db, argv[1], pArgs->zStore, &zPath);
  if (rc != SQLITE_OK) goto fail;
  if (bCreate && !bClauses && zPath && access(zPath, F_OK) != 0) {
    /* attaching to a store that was never made: there is no table to
    ** attach to, which is what the user needs to hear (not why the store
    ** cannot be opened) */
    *pzErr = noTableErr(pTab, zPath, " (no store there yet)");
    rc = SQLITE_ERROR;
    goto fail;
  }
  /* the connection's in-memory store is made on first use by any table,
  ** so that attaching to it before it holds tables says "no store table" */
  rc = connStore(pConn, zPath, pArgs, bCreate && (bClauses || zPath == NULL),
                 sqlite3_db_readonly(db, argv[1]) == 1, &pTab->pStore, pzErr);
  if (rc == SQLITE_OK) pTab->pStore->nTab++; /* tabFree takes it back */
  if (rc != SQLITE_OK && !bCreate) {
    /* the store is gone or held by another process: connect anyway so
    ** that DROP TABLE works and every use says why it cannot read */
    storeFailed(pTab, rc, zPath);
    if (pTab->bStoreBusy || pTab->bStoreDamaged || pTab->rcStoreFailed) {
      pTab->zPath = zPath; /* tabRetry opens it again */
      zPath = NULL;
    }
    pTab->zMissing = *pzErr;
    *pzErr = NULL;
    pTab->pStore = NULL;
    rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) goto fail;

  if (pTab->pStore && pTab->pStore->bFollow) {
    /* a table the writer just created: its catalog is newer than the
    ** follower's (the other tables of the connection move along); a
    ** table to create needs the store for writing */
    char *zFollowErr = NULL;
    int bWrite = bCreate && bClauses;
    if (storeFollow(pConn, pTab->pStore, bWrite, &zFollowErr) != SQLITE_OK) {
      *pzErr = sqlite3_mprintf("wcs: cannot create %s: %s", pTab->zName,
                               zFollowErr ? zFollowErr : "busy");
      sqlite3_free(zFollowErr);
      rc = SQLITE_BUSY;
      goto fail;
    }
    sqlite3_free(zFollowErr);
  }
  if (pTab->pStore) {
    rc = wcs_table_open(pTab->pStore->pEng, pTab->zStoreTable, &pTab->pTab);
    if (rc != WCS_OK) {
      *pzErr =
          sqlite3_mprintf("wcs: %s", wcs_engine_errmsg(pTab->pStore->pEng));
      rc = wcsToSqlite(rc);
      goto fail;
    }
  }
  if (bCreate && pTab->pTab && bClauses && zPath && pArgs->zStore == NULL &&
      orphanOfCreate(pTab, pArgs)) {
    /* what a CREATE VIRTUAL TABLE of this very text left when its process
    ** was killed before SQLite committed it: take it, as that CREATE
    ** would have (and drop it as that one would, should this one fail) */
    bMade = 1;
  }
  if (bCreate) {
    if (pTab->pTab && bClauses && !bMade) {
      *pzErr = sqlite3_mprintf(
          "wcs: store table '%s' already exists in %s; to use it, declare "
          "the virtual table with TABLE '%s' and no KEY or FAMILY clauses",
          pTab->zStoreTable, zPath ? zPath : "the in-memory store",
          pTab->zStoreTable);
      rc = SQLITE_ERROR;
      goto fail;
    }
    if (pTab->pTab == NULL && !bClauses) {
      *pzErr = noTableErr(pTab, zPath ? zPath : "the in-memory store", "");
      rc = SQLITE_ERROR;
      goto fail;
    }
    if (pTab->pTab == NULL) {
      char *zCols = NULL;
      rc = wcsColumnsFit(db, argv[2], pArgs, &zCols);
      if (rc != SQLITE_OK) {
        *pzErr = sqlite3_mprintf("wcs: %s", zCols);
        sqlite3_free(zCols);
        goto fail;
      }
    }
    if (!pTab->bHistory) {
      rc = clockCreate(db, argv[1], argv[2], pzErr);
      if (rc != SQLITE_OK) goto fail;
    }
    if (pTab->pTab == NULL) {
      char *zText = NULL;
      rc = createText(pArgs, &zText);
      if (rc == WCS_OK) {
        rc = wcs_table_create(pTab->pStore->pEng, pTab->zStoreTable, zText,
                              &pTab->pTab);
        if (rc != WCS_OK) {
          *pzErr =
              sqlite3_mprintf("wcs: %s", wcs_engine_errmsg(pTab->pStore->pEng));
        }
      }
      free(zText);
      if (rc != WCS_OK) {
        rc = wcsToSqlite(rc);
        goto fail;
      }
      bMade = 1;
    }
    /* SQLite joins the new table to the open transaction without an
    ** xBegin (see bCreating) */
    pTab->bCreating = 1;
  }
  pTab->bOwner = bClauses && !pTab->bHistory;
  if (pTab->pTab) {
    pTab->pSchema = wcs_table_schema(pTab->pTab);
    ks_schema_free(pArgs);
  } else {
    pTab->pOwnSchema = pArgs;
    pTab->pSchema = pArgs;
  }
  pArgs = NULL;

  rc = declareTable(db, pTab, pzErr);
  if (rc != SQLITE_OK) goto fail;
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  pTab->pNextTab = pConn->pTab;
  pConn->pTab = pTab;
  pConn->nGen++;
  sqlite3_free(zPath);
  *ppVtab = &pTab->base;
  return SQLITE_OK;

fail:
  if (bMade && pTab->pTab) {
    /* the CREATE fails: the store table it made goes too (the clock is
    ** SQLite's, rolled back with the statement) */
    wcs_table_close(pTab->pTab);
    pTab->pTab = NULL;
    wcs_table_drop(pTab->pStore->pEng, pTab->zStoreTable);
  }
  sqlite3_free(zPath);
  ks_schema_free(pArgs);
  tabFree(pTab);
  return rc;
}

/* xCreate: CREATE VIRTUAL TABLE; creates the store table if declared. */
static int wcsCreate(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                     sqlite3_vtab **ppVtab, char **pzErr) {
  return wcsInit(db, pAux, argc, argv, ppVtab, pzErr, 1);
}

/* xConnect: reattach an existing virtual table (reopened database). */
static int wcsConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr) {
  return wcsInit(db, pAux, argc, argv, ppVtab, pzErr, 0);
}

/* xDisconnect: release the handle; the store stays open with the
** connection. */
static int wcsDisconnect(sqlite3_vtab *pVtab) {
  tabFree((WcsTab *)pVtab);
  return SQLITE_OK;
}

/* xDestroy: DROP TABLE. Drops the store table when this virtual table
** defined it (see wcsInit for the rule). Not transactional. */
/*
** A DROP TABLE of its own (autocommit) in rollback-journal mode commits
** after xDestroy has dropped the store table, and that commit waits for
** the file's readers: when they outlast the busy timeout, SQLite rolls
** the declaration back, and the data would be gone under it. So before
** anything is dropped, take the database file's exclusive lock that the
** commit will need (the pager holds the reserved lock by now, and takes
** the exclusive one at commit from the same file handle, which then has
** it already), waiting up to DROP_LOCK_MILLIS for readers to finish.
** SQLITE_BUSY: they did not, and nothing was dropped. WAL mode needs
** nothing: its writer's commit does not wait for readers; inside a
** transaction, DROP TABLE is not transactional anyway (doc/sql.md §7).
*/
#define DROP_LOCK_MILLIS 2000

static int lockForDrop(WcsTab *pTab) {
  sqlite3 *db = pTab->pConn->db;
  sqlite3_file *pFile = NULL;
  int rc, nWaited = 0;
  if (!sqlite3_get_autocommit(db) || isWal(pTab)) return SQLITE_OK;
  if (sqlite3_file_control(db, pTab->zDb, SQLITE_FCNTL_FILE_POINTER, &pFile) !=
          SQLITE_OK ||
      pFile == NULL || pFile->pMethods == NULL) {
    return SQLITE_OK; /* no file of its own: no readers to wait for */
  }
  while ((rc = pFile->pMethods->xLock(pFile, SQLITE_LOCK_EXCLUSIVE)) ==
             SQLITE_BUSY &&
         nWaited < DROP_LOCK_MILLIS) {
    sqlite3_sleep(10);
    nWaited += 10;
  }
  if (rc == SQLITE_OK) return SQLITE_OK;
  if ((rc & 0xff) == SQLITE_BUSY) {
    setErr(&pTab->base,
           "cannot drop %s: another connection reads the database, and the "
           "DROP could not commit (rollback journal); the table is intact: "
           "try again once that read is done, or use PRAGMA "
           "journal_mode=WAL",
           pTab->zName);
  } else {
    setErr(&pTab->base,
           "cannot drop %s: the database file could not be locked for the "
           "DROP's commit (%s); the table is intact",
           pTab->zName, sqlite3_errstr(rc));
  }
  return rc;
}

/* 1 if the connection's open store transaction wrote pTab's store table,
** through any declaration of it or a SQL function. */
static int storeTableWritten(const WcsTab *pTab) {
  const WcsTab *q;
  for (q = pTab->pConn->pTab; q; q = q->pNextTab) {
    if (q->pStore == pTab->pStore && (q->bInTxn || q->bFnWrote) &&
        strcmp(q->zStoreTable, pTab->zStoreTable) == 0) {
      return 1;
    }
  }
  return 0;
}

static int destroyTable(sqlite3_vtab *pVtab);

/* xDestroy. SQLite 3.40 reports a failed xDestroy by its code alone
** ("database is locked"), so the reason also goes to its error log. */
static int wcsDestroy(sqlite3_vtab *pVtab) {
  int rc = destroyTable(pVtab);
  if (rc != SQLITE_OK && pVtab->zErrMsg) {
    sqlite3_log(rc, "wcs: %s", pVtab->zErrMsg);
  }
  return rc;
}

static int destroyTable(sqlite3_vtab *pVtab) {
  WcsTab *pTab = (WcsTab *)pVtab;
  int rc = WCS_OK;
  if (pTab->pTab == NULL) tabRetry(pTab); /* the store may be free now */
  if (pTab->bOwner && pTab->pStore && pTab->pStore->bFollow) {
    /* another process writes the store: dropping needs it for writing */
    char *zErr = NULL;
    if (storeFollow(pTab->pConn, pTab->pStore, 1, &zErr) != SQLITE_OK) {
      setErr(pVtab,
             "cannot drop %s: %s; the table is intact: drop it once the "
             "store is closed there",
             pTab->zName, zErr ? zErr : "busy");
      sqlite3_free(zErr);
      return SQLITE_BUSY;
    }
  }
  if (pTab->bOwner && pTab->bStoreBusy) {
    /* dropping the declaration alone would leave the data, which the
    ** next open shows again: refuse until the store table can go too */
    setErr(pVtab,
           "cannot drop %s while another process holds its store (%s); "
           "the table is intact: drop it once the store is closed there",
           pTab->zName, pTab->zMissing ? pTab->zMissing : "locked");
    return SQLITE_BUSY;
  }
  if (pTab->bOwner && pTab->bStoreDamaged) {
    /* the same while a damaged file keeps the store from opening: its
    ** repaired or restored copy would still hold the table */
    setErr(pVtab,
           "cannot drop %s while its store is damaged (%s); the table is "
           "intact: restore the store, or drop the table once it opens",
           pTab->zName, pTab->zMissing ? pTab->zMissing : "damaged");
    return SQLITE_BUSY;
  }
  if (pTab->bOwner && pTab->rcStoreFailed) {
    /* the same while the store cannot be opened (a full disk, say) */
    setErr(pVtab,
           "cannot drop %s while its store cannot be opened (%s); the table "
           "is intact: drop it once the store opens",
           pTab->zName, pTab->zMissing ? pTab->zMissing : "failed");
    return pTab->rcStoreFailed;
  }
  if (pTab->bOwner && pTab->pTab && pTab->pStore) {
    if (storeTableWritten(pTab)) {
      /* The drop is immediate and the open transaction holds writes to
      ** the table (through this declaration, another one of the same
      ** store table, or a function), which its commit would then refuse,
      ** taking every other write of the transaction with it: refuse the
      ** drop instead, as SQLite refuses to drop a table in use. (SQLite
      ** reports xDestroy's code alone, "database table is locked"; the
      ** message is kept for versions that pass it on.) */
      setErr(pVtab,
             "cannot drop %s: the open transaction wrote to it; COMMIT or "
             "ROLLBACK first (dropping a table is not transactional)",
             pTab->zName);
      return SQLITE_LOCKED;
    }
    rc = lockForDrop(pTab);
    if (rc != SQLITE_OK) return rc;
  }
  /* the clock first: a failure there still leaves everything as it was
  ** (a history view has none) */
  sqlite3_finalize(pTab->pTick);
  pTab->pTick = NULL;
  if (!pTab->bHistory && clockExists(pTab) &&
      execFree(pTab->pConn->db,
               sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_wcsclock\"",
                               pTab->zDb, pTab->zName)) != SQLITE_OK) {
    return setErr(pVtab, "cannot drop %s: dropping %s_wcsclock failed: %s",
                  pTab->zName, pTab->zName, sqlite3_errmsg(pTab->pConn->db));
  }
  if (pTab->bOwner && pTab->pTab && pTab->pStore) {
    wcs_table_close(pTab->pTab);
    pTab->pTab = NULL;
    rc = wcs_table_drop(pTab->pStore->pEng, pTab->zStoreTable);
    if (rc != WCS_OK) return engErr(pTab, rc, "DROP TABLE");
  }
  tabFree(pTab);
  return SQLITE_OK;
}

/* xRename: the store table keeps its name, so a table that took its store
** name from its SQL name cannot be renamed. */
static int wcsRename(sqlite3_vtab *pVtab, const char *zNew) {
  WcsTab *pTab = (WcsTab *)pVtab;
  if (!pTab->bNamed) {
    return setErr(pVtab,
                  "cannot rename %s: its store table is named after it; "
                  "declare a new virtual table with TABLE '%s'",
                  pTab->zName, pTab->zStoreTable);
  }
  /* its clock goes with it (the tick is prepared again, under the new
  ** name) */
  sqlite3_finalize(pTab->pTick);
  pTab->pTick = NULL;
  if (clockExists(pTab) &&
      execFree(pTab->pConn->db,
               sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_wcsclock\" RENAME TO "
                               "\"%w_wcsclock\"",
                               pTab->zDb, pTab->zName, zNew)) != SQLITE_OK) {
    return setErr(pVtab, "cannot rename %s: renaming %s_wcsclock failed: %s",
                  pTab->zName, pTab->zName, sqlite3_errmsg(pTab->pConn->db));
  }
  {
    char *z = sqlite3_mprintf("%s", zNew);
    if (z == NULL) return SQLITE_NOMEM;
    sqlite3_free(pTab->zName);
    pTab->zName = z;
  }
  return SQLITE_OK;
}

/* The schema in which SQL finds the unqualified table or view name zTab
** (temp, then main, then the attached databases in the order of PRAGMA
** database_list), as a new string; NULL when none has it, or when the
** schemas cannot be read (an authorizer may refuse the PRAGMA or the
** schema tables): then *pbBlind is set. */
static char *schemaOf(sqlite3 *db, const char *zTab, int *pbBlind) {
  static const char *const azFirst[] = {"temp", "main"};
  sqlite3_stmt *pList = NULL;
  char *zFound = NULL;
  int i;
  *pbBlind = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &pList, NULL) !=
      SQLITE_OK) {
    *pbBlind = 1;
    return NULL;
  }
  /* temp and main first, then the others as listed */
  for (i = 0; zFound == NULL && !*pbBlind; i++) {
    const char *zDb;
    sqlite3_stmt *pFind = NULL;
    char *zSql;
    if (i < 2) {
      zDb = azFirst[i];
    } else if (sqlite3_step(pList) != SQLITE_ROW) {
      break;
    } else {
      zDb = (const char *)sqlite3_column_text(pList, 1);
      if (zDb == NULL || sqlite3_stricmp(zDb, "temp") == 0 ||
          sqlite3_stricmp(zDb, "main") == 0) {
        continue;
      }
    }
    zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type "
                           "IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
                           zDb);
    if (zSql && sqlite3_prepare_v2(db, zSql, -1, &pFind, NULL) == SQLITE_OK) {
      sqlite3_bind_text(pFind, 1, zTab, -1, SQLITE_STATIC);
      if (sqlite3_step(pFind) == SQLITE_ROW)
        zFound = sqlite3_mprintf("%s", zDb);
    } else if (zSql) {
      *pbBlind = 1;
    }
    sqlite3_finalize(pFind);
    sqlite3_free(zSql);
  }
  sqlite3_finalize(pList);
  return zFound;
}

/* The connected table zTab of schema zDb, or NULL. */
static WcsTab *findConnected(WcsConn *pConn, const char *zDb,
                             const char *zTab) {
  WcsTab *p;
  for (p = pConn->pTab; p; p = p->pNextTab) {
    if (sqlite3_stricmp(p->zName, zTab) == 0 &&
        sqlite3_stricmp(p->zDb, zDb) == 0) {
      return p;
    }
  }
  return NULL;
}

/* Have SQLite connect the table it finds by that name (not connected
** until a statement uses it): preparing a statement that names it does. */
static void connectByName(WcsConn *pConn, const char *zDb, const char *zTab) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql =
      zDb ? sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" WHERE 0", zDb, zTab)
          : sqlite3_mprintf("SELECT 1 FROM \"%w\" WHERE 0", zTab);
  if (zSql == NULL) return;
  sqlite3_prepare_v2(pConn->db, zSql, -1, &pStmt, NULL);
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
}

WcsTab *wcsFindTable(WcsConn *pConn, const char *zName, char **pzErr) {
  const char *zDot = strchr(zName, '.');
  WcsTab *p = NULL;
  /* the table SQL means by the name, whether or not it is connected yet
  ** (a same-named table of a schema searched later may be) */
  int bBlind = 0;
  char *zIn = schemaOf(pConn->db, zName, &bBlind);
  if (zIn == NULL && bBlind) {
    /* the schemas cannot be read: the connected table SQL would search
    ** first (temp, main, then the others) */
    p = findConnected(pConn, "temp", zName);
    if (p == NULL) p = findConnected(pConn, "main", zName);
    for (p = p ? p : pConn->pTab; p; p = p->pNextTab) {
      if (sqlite3_stricmp(p->zName, zName) == 0) break;
    }
  }
  if (zIn) {
    connectByName(pConn, zIn, zName);
    p = findConnected(pConn, zIn, zName);
    if (p == NULL) {
      /* a native table or view in front: name the wcs table behind it,
      ** if one of that name is connected (main's first, as SQL searches
      ** main before attached databases) */
      const char *zWcs = NULL;
      WcsTab *q;
      for (q = pConn->pTab; q; q = q->pNextTab) {
        if (sqlite3_stricmp(q->zName, zName) == 0 &&
            sqlite3_stricmp(q->zDb, zIn) != 0 &&
            (zWcs == NULL || sqlite3_stricmp(q->zDb, "main") == 0)) {
          zWcs = q->zDb;
        }
      }
      if (zWcs) {
        *pzErr = sqlite3_mprintf(
            "'%s' is %s.%s, which is not a wcs table; name the wcs table "
            "with its schema, as '%s.%s'",
            zName, zIn, zName, zWcs, zName);
      } else {
        *pzErr = sqlite3_mprintf(
            "'%s' is %s.%s, which is not a wcs table (the functions take "
            "the name of a table made by CREATE VIRTUAL TABLE ... USING wcs)",
            zName, zIn, zName);
      }
      sqlite3_free(zIn);
      return NULL;
    }
    sqlite3_free(zIn);
  }
  if (p == NULL && zDot && zDot > zName) {
    char *zDb = sqlite3_mprintf("%.*s", (int)(zDot - zName), zName);
    if (zDb) {
      connectByName(pConn, zDb, zDot + 1);
      p = findConnected(pConn, zDb, zDot + 1);
      sqlite3_free(zDb);
    }
  }
  if (p == NULL) *pzErr = sqlite3_mprintf("no wcs table named '%s'", zName);
  return p;
}

/* ====================================================================
** Operands: SQL values -> key values
** ==================================================================== */

/* Class of a value in SQLite's ordering: NULL < numbers < text < blob. */
#define CLS_NULL 0
#define CLS_NUM  1
#define CLS_TEXT 2
#define CLS_BLOB 3

/* The field type a constraint compares with: a key field type, or
** FT_KEY for _key (raw bytes). */
#define FT_KEY (-1)

static int fieldClass(int eType) {
  if (eType == KS_STRING) return CLS_TEXT;
  if (eType == KS_BYTES || eType == FT_KEY) return CLS_BLOB;
  return CLS_NUM;
}

/* Truth of `col op val` when val's class differs from col's. */
static int classTruth(int colCls, int valCls, ks_op op) {
  int bColLess = colCls < valCls;
  switch (op) {
  case KS_OP_LT:
  case KS_OP_LE:
    return bColLess ? VAL_TRUE : VAL_FALSE;
  case KS_OP_GT:
  case KS_OP_GE:
    return bColLess ? VAL_FALSE : VAL_TRUE;
  default:
    return VAL_FALSE; /* EQ, IN */
  }
}

/* An integer field compared with a real: turn into an integer bound. */
static int realOperand(double r, ks_op *pOp, ks_value *pOut) {
  const double dMax = 9223372036854775808.0; /* 2^63 */
  double f;
  if (isnan(r)) return VAL_FALSE;
  f = floor(r);
  switch (*pOp) {
  case KS_OP_LT:
    if (r > dMax) return VAL_TRUE;
    if (r <= -dMax) return VAL_FALSE;
    if (f == r) break;
    *pOp = KS_OP_LE;
    r = f;
    break;
  case KS_OP_LE:
    if (r >= dMax) return VAL_TRUE;
    if (r < -dMax) return VAL_FALSE;
    r = f;
    break;
  case KS_OP_GT:
    if (r >= dMax) return VAL_FALSE;
    if (r < -dMax) return VAL_TRUE;
    r = f;
    break;
  case KS_OP_GE:
    if (r > dMax) return VAL_FALSE;
    if (r <= -dMax) return VAL_TRUE;
    if (f == r) break;
    *pOp = KS_OP_GT;
    r = f;
    break;
  default:
    if (f != r || r >= dMax || r < -dMax) return VAL_FALSE;
    break;
  }
  if (r >= dMax)
    return *pOp == KS_OP_GT || *pOp == KS_OP_GE ? VAL_FALSE : VAL_TRUE;
  pOut->eType = KS_VAL_INT;
  pOut->i = (int64_t)r;
  return VAL_USE;
}

/* The bytes of a TEXT value as UTF-8, without sqlite3_value_text, which
** NUL-terminates: text bound with a length has no terminator, and adding
** one copies it into a fresh allocation on every call. sqlite3_value_bytes
** comes first: it leaves the value UTF-8 (converting it in place, as
** sqlite3_value_text would, when the connection's text is UTF-16); the
** blob of a TEXT value is then those bytes, the value unchanged ("TEXT to
** BLOB: no change"; it stays TEXT to sqlite3_value_type). Never NULL. */
static const uint8_t *textBytes(sqlite3_value *v, int *pn) {
  const uint8_t *p;
  *pn = sqlite3_value_bytes(v);
  p = sqlite3_value_blob(v);
  return p ? p : (const uint8_t *)"";
}

/*
** Turn the SQL operand pVal of `col op pVal` into a key value of field type
** eType (FT_KEY for _key), applying SQLite's comparison affinity: an
** INTEGER field converts numeric text, a TEXT field renders numbers as
** text, a BYTES field converts nothing; _key takes TEXT as its bytes (the
** one departure from SQLite's rules). Returns VAL_USE (with
** *pOut filled and *pOp possibly tightened), VAL_TRUE or VAL_FALSE. zNum
** (>= 32 bytes) holds rendered numbers; other bytes are borrowed from pVal.
** For the pattern ops (GLOB/LIKE prefix, PREFIX) the operand is taken as
** text bytes, as the functions take it.
*/
static int coerceOperand(int eType, ks_op *pOp, sqlite3_value *pVal,
                         ks_value *pOut, char *zNum) {
  int vt = sqlite3_value_type(pVal);
  int colCls = fieldClass(eType);
  memset(pOut, 0, sizeof(*pOut));
  if (vt == SQLITE_NULL) return VAL_FALSE;
  if (*pOp == KS_OP_GLOB_PREFIX || *pOp == KS_OP_LIKE_PREFIX ||
      *pOp == KS_OP_PREFIX) {
    if (vt == SQLITE_BLOB) {
      pOut->p = sqlite3_value_blob(pVal);
    } else {
      pOut->p = sqlite3_value_text(pVal);
    }
    pOut->n = sqlite3_value_bytes(pVal);
    if (*pOp != KS_OP_PREFIX && pOut->p) {
      /* GLOB and LIKE read their pattern up to its first 00 byte */
      const void *pNul = memchr(pOut->p, 0, (size_t)pOut->n);
      if (pNul) pOut->n = (int)((const uint8_t *)pNul - pOut->p);
    }
    pOut->eType = KS_VAL_BYTES;
    return VAL_USE;
  }
  if (colCls == CLS_NUM) {
    if (vt == SQLITE_INTEGER) {
      pOut->eType = KS_VAL_INT;
      pOut->i = sqlite3_value_int64(pVal);
      return VAL_USE;
    }
    if (vt == SQLITE_FLOAT) {
      return realOperand(sqlite3_value_double(pVal), pOp, pOut);
    }
    if (vt == SQLITE_TEXT) {
      sqlite3_int64 i;
      double r;
      int e = wcsTextToNumber(sqlite3_value_text(pVal),
                              sqlite3_value_bytes(pVal), &i, &r);
      if (e == WCSV_INT) {
        pOut->eType = KS_VAL_INT;
        pOut->i = i;
        return VAL_USE;
      }
      if (e == WCSV_REAL) return realOperand(r, pOp, pOut);
      return classTruth(colCls, CLS_TEXT, *pOp);
    }
    return classTruth(colCls, CLS_BLOB, *pOp);
  }
  if (colCls == CLS_TEXT) {
    if (vt == SQLITE_INTEGER) {
      sqlite3_snprintf(32, zNum, "%lld", sqlite3_value_int64(pVal));
    } else if (vt == SQLITE_FLOAT) {
      sqlite3_snprintf(32, zNum, "%!.15g", sqlite3_value_double(pVal));
    } else if (vt == SQLITE_TEXT) {
      pOut->eType = KS_VAL_BYTES;
      pOut->p = textBytes(pVal, &pOut->n);
      return VAL_USE;
    } else {
      return classTruth(colCls, CLS_BLOB, *pOp);
    }
    pOut->eType = KS_VAL_BYTES;
    pOut->p = (const uint8_t *)zNum;
    pOut->n = (int)strlen(zNum);
    return VAL_USE;
  }
  /* BYTES: BLOB affinity converts nothing. _key also takes TEXT as its
  ** bytes (doc/sql.md, "_key and text"): the cursor compares bytes, and
  ** xBestIndex never leaves a _key term to SQLite, whose TEXT < BLOB rule
  ** would disagree. */
  if (vt == SQLITE_BLOB || (eType == FT_KEY && vt == SQLITE_TEXT)) {
    pOut->eType = KS_VAL_BYTES;
    pOut->p = vt == SQLITE_BLOB ? sqlite3_value_blob(pVal)
                                : sqlite3_value_text(pVal); /* UTF-8 */
    pOut->n = sqlite3_value_bytes(pVal);
    return VAL_USE;
  }
  return classTruth(colCls, vt == SQLITE_TEXT ? CLS_TEXT : CLS_NUM, *pOp);
}

/* ====================================================================
** Planning: xBestIndex
** ==================================================================== */

/* One pushable constraint found by xBestIndex. */
typedef struct PlanCons {
  int iCons;  /* index in aConstraint */
  int iField; /* key field, or KS_FIELD_KEY */
  ks_op op;
  int bIn;          /* an IN list handled all at once */
  int bKnown;       /* the value is known (sqlite3_vtab_rhs_value) */
  int bPattern;     /* LIKE/GLOB whose exactness depends on the value */
  ks_value aVal[2]; /* values for planning (placeholders if unknown) */
  int nVal;
  char zNum[32]; /* rendered number for aVal[0] */
} PlanCons;

/* The values an IN list whose values xBestIndex cannot see (SQLite does
** not show a list to it) is costed as holding: a few, as the literal
** lists of a WHERE clause mostly are; several lists multiply. More, and
** a plan that probes this table from a small outer one with such lists
** costs more than a scan of the whole table from which SQLite then probes
** the other. */
#define IN_GUESS 3.0

/* Placeholder operands for a constraint whose value is not known yet,
** chosen so that constraints on one field stay consistent: equalities sit
** between lower and upper bounds. */
static void placeholder(const ks_schema *pSchema, PlanCons *c) {
  int eType = c->iField == KS_FIELD_KEY ? FT_KEY
                                        : (int)pSchema->aField[c->iField].eType;
  ks_value *v = c->aVal;
  static const uint8_t aHigh[] = {0xef, 0xbf, 0xbf, 0xef, 0xbf, 0xbf};
  static const uint8_t aHighB[] = {0xff, 0xff, 0xff, 0xff};
  memset(c->aVal, 0, sizeof(c->aVal));
  c->nVal = 1;
  if (fieldClass(eType) == CLS_NUM) {
    const ks_field *f = &pSchema->aField[c->iField];
    int64_t iHigh = INT64_MAX / 2;
    if (f->eEnc == KS_ENC_DECIMAL || f->eEnc == KS_ENC_REVERSED_DECIMAL) {
      int k;
      iHigh = 1;
      for (k = 0; k < f->nWidth && k < 18; k++)
        iHigh *= 10;
      iHigh -= 1;
    }
    v[0].eType = v[1].eType = KS_VAL_INT;
    /* bounds inside the domain (a non-negative encoding's starts at 0,
    ** DECIMAL(n)'s ends at n nines): a bound of unknown value bounds
    ** something, so that a plan may seek to it (a skip scan on the field)
    ** as it would for a known one */
    switch (c->op) {
    case KS_OP_LT:
    case KS_OP_LE:
      v[0].i = iHigh - 1;
      break;
    case KS_OP_GT:
    case KS_OP_GE:
      v[0].i = 1;
      break;
    default:
      v[0].i = 2;
      v[1].i = 3;
      break;
    }
  } else {
    v[0].eType = v[1].eType = KS_VAL_BYTES;
    switch (c->op) {
    case KS_OP_LT:
    case KS_OP_LE:
      if (eType == KS_STRING) {
        v[0].p = aHigh, v[0].n = (int)sizeof(aHigh);
      } else {
        v[0].p = aHighB, v[0].n = (int)sizeof(aHighB);
      }
      break;
    case KS_OP_GT:
    case KS_OP_GE:
      v[0].p = (const uint8_t *)"0", v[0].n = 1;
      break;
    case KS_OP_GLOB_PREFIX:
      v[0].p = (const uint8_t *)"m*", v[0].n = 2;
      break;
    case KS_OP_LIKE_PREFIX:
      v[0].p = (const uint8_t *)"m%", v[0].n = 2;
      break;
    default:
      if (eType == FT_KEY && pSchema->nSalt > 0) {
        /* a salted key begins with its bucket: one that exists */
        v[0].p = (const uint8_t *)"\0m", v[0].n = 2;
        v[1].p = (const uint8_t *)"\0n", v[1].n = 2;
      } else {
        v[0].p = (const uint8_t *)"m", v[0].n = 1;
        v[1].p = (const uint8_t *)"n", v[1].n = 1;
      }
      break;
    }
  }
  if (c->bIn) c->nVal = 2;
}

/* Map a constraint op to a key op. Returns -1 if not pushable. */
static int keyOp(int op) {
  switch (op) {
  case SQLITE_INDEX_CONSTRAINT_EQ:
  case SQLITE_INDEX_CONSTRAINT_IS:
    return KS_OP_EQ;
  case SQLITE_INDEX_CONSTRAINT_LT:
    return KS_OP_LT;
  case SQLITE_INDEX_CONSTRAINT_LE:
    return KS_OP_LE;
  case SQLITE_INDEX_CONSTRAINT_GT:
    return KS_OP_GT;
  case SQLITE_INDEX_CONSTRAINT_GE:
    return KS_OP_GE;
  case SQLITE_INDEX_CONSTRAINT_GLOB:
    return KS_OP_GLOB_PREFIX;
  case SQLITE_INDEX_CONSTRAINT_LIKE:
    return KS_OP_LIKE_PREFIX;
  case SQLITE_INDEX_CONSTRAINT_ISNULL:
    return KS_OP_ISNULL;
  case SQLITE_INDEX_CONSTRAINT_ISNOTNULL:
    return KS_OP_ISNOTNULL;
  default:
    if (op == SQLITE_INDEX_CONSTRAINT_FUNCTION) return KS_OP_PREFIX;
    return -1;
  }
}

/* 1 if `col op x` is false or NULL whenever col is NULL. */
static int rejectsNull(int op) {
  switch (op) {
  case SQLITE_INDEX_CONSTRAINT_EQ:
  case SQLITE_INDEX_CONSTRAINT_GT:
  case SQLITE_INDEX_CONSTRAINT_GE:
  case SQLITE_INDEX_CONSTRAINT_LT:
  case SQLITE_INDEX_CONSTRAINT_LE:
    return 1;
  default:
    /* also the ones that reject NULL but that SQLite 3.40 passes from the
    ** ON clause of a LEFT JOIN without the join's prerequisite (!=, IS
    ** NOT NULL, LIKE, GLOB, functions: its "auxiliary" terms), so that a
    ** plan relying on them would not be dropped as below, and the rows
    ** they rule out, which that join keeps, would be lost */
    return 0;
  }
}

/* The row count comes from the engine's cached sample on every call; the
** distinct-prefix estimates walk the table's prefixes (a seek each), so
** they are kept for PREFIX_EST_MS: they only steer costs. */
#define PREFIX_EST_MS 10000

static sqlite3_int64 nowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (sqlite3_int64)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static double tableRows(WcsTab *pTab, int *pbFresh) {
  uint64_t n = 0;
  if (pbFresh) *pbFresh = 0;
  if (pTab->pTab &&
      wcs_table_estimate_rows(pTab->pTab, NULL, 0, &n) == WCS_OK) {
    pTab->nRowEst = (double)n;
    if (pbFresh) *pbFresh = 1; /* nRowEst is the estimate of all keys */
  }
  /* never assume a tiny table: a seek must always look cheaper than
  ** reading everything, whatever the statistics say today */
  return pTab->nRowEst > 1000 ? pTab->nRowEst : 1000;
}

static double distinctPrefixes(WcsTab *pTab, int nField, double nRow) {
  uint64_t n = 0;
  sqlite3_int64 iNow;
  if (nField <= 0) return 1;
  if (nField > pTab->nField) nField = pTab->nField;
  iNow = nowMs();
  if (pTab->aPrefixEst && pTab->aPrefixEst[nField] > 0 &&
      iNow - pTab->aPrefixAt[nField] < PREFIX_EST_MS) {
    return pTab->aPrefixEst[nField];
  }
  if (pTab->pTab == NULL ||
      wcs_table_estimate_prefixes(pTab->pTab, nField, &n) != WCS_OK || n == 0) {
    /* no statistics: assume each field multiplies by 10 */
    double d = pow(10.0, nField);
    return d < nRow ? d : nRow;
  }
  if (pTab->aPrefixEst) {
    pTab->aPrefixEst[nField] = (double)n;
    pTab->aPrefixAt[nField] = iNow;
  }
  return (double)n;
}

/* The plan in words, for EXPLAIN QUERY PLAN (doc/sql.md, "Plans"). With
** IN lists whose length is unknown the count is left out, and a plan
** made from their placeholder values that kept one key (a known bound on
** the same field left out the other) is still a list of keys. */
static void describePlan(sqlite3_str *pStr, WcsTab *pTab, const ks_plan *p,
                         int bInUnknown) {
  const ks_schema *s = pTab->pSchema;
  int i;
  switch (p->eKind) {
  case KS_PLAN_EMPTY:
    sqlite3_str_appendall(pStr, "EMPTY");
    break;
  case KS_PLAN_POINT:
    sqlite3_str_appendall(pStr, bInUnknown ? "MULTI-POINT (IN list)"
                                           : "POINT LOOKUP");
    break;
  case KS_PLAN_MULTI_POINT:
    if (bInUnknown)
      sqlite3_str_appendall(pStr, "MULTI-POINT (IN list)");
    else
      sqlite3_str_appendf(pStr, "MULTI-POINT (%d keys)", p->nPoint);
    break;
  case KS_PLAN_SKIP:
    sqlite3_str_appendf(pStr, "SKIP SCAN on %s",
                        p->iSkipField >= 0 && p->iSkipField < s->nField
                            ? s->aField[p->iSkipField].zName
                            : "_key");
    break;
  case KS_PLAN_FULL:
    sqlite3_str_appendall(pStr, "FULL SCAN");
    break;
  default: {
    const char *zKind = p->eKind == KS_PLAN_PREFIX  ? "PREFIX SCAN"
                        : p->eKind == KS_PLAN_RANGE ? "RANGE SCAN"
                                                    : "MULTI-RANGE SCAN";
    sqlite3_str_appendf(pStr, "%s (", zKind);
    if (p->eKind == KS_PLAN_MULTI_RANGE && !bInUnknown) {
      sqlite3_str_appendf(pStr, "%d ranges on ", p->nRange);
    }
    if (p->nKeyField == 0 || s->nField == 0) {
      sqlite3_str_appendall(pStr, "_key");
    } else {
      for (i = 0; i < p->nKeyField && i < s->nField; i++) {
        sqlite3_str_appendf(pStr, "%s%s", i ? "," : "", s->aField[i].zName);
      }
    }
    sqlite3_str_appendall(pStr, ")");
    break;
  }
  }
  if (p->nBucket > 0 && p->eKind != KS_PLAN_POINT &&
      p->eKind != KS_PLAN_MULTI_POINT && p->eKind != KS_PLAN_EMPTY) {
    sqlite3_str_appendf(pStr, " OVER %d BUCKETS", p->nBucket);
  }
}

/* Convert plan ranges for wcs_table_estimate_rows / wcs_cursor_open. */
static void toKeyRanges(const ks_plan *p, int iBucket, wcs_key_range *aOut,
                        int *pnOut) {
  int i, n = 0;
  for (i = 0; i < p->nRange; i++) {
    const ks_range *r = &p->aRange[i];
    wcs_key_range *o;
    if (iBucket >= 0 && r->iBucket != iBucket) continue;
    o = &aOut[n++];
    memset(o, 0, sizeof(*o));
    if (!r->bStartUnbounded) {
      o->pStart = r->pStart;
      o->nStart = (size_t)r->nStart;
      o->bStartExcl = !r->bStartIncl;
    }
    if (!r->bEndUnbounded) {
      if (r->nEnd == 0) {
        /* keys are never empty, so a range ending at "" holds none; the
        ** engine would read a zero-length end as "no bound" */
        n--;
        continue;
      }
      o->pEnd = r->pEnd;
      o->nEnd = (size_t)r->nEnd;
      o->bEndIncl = r->bEndIncl;
    }
  }
  *pnOut = n;
}

/* The key fields a DISTINCT must keep apart: 1 + the last key field in
** colUsed, or 0 when it uses any other column (whose values the leading
** fields do not decide). Key fields are columns 0..nField-1. */
static int distinctDepth(const WcsTab *pTab, sqlite3_uint64 mUsed) {
  int c, k = 0;
  for (c = 0; c < 64; c++) {
    if (((mUsed >> c) & 1) == 0) continue;
    if (c >= pTab->pSchema->nField || c == 63) return 0; /* 63: 63 and up */
    k = c + 1;
  }
  return k;
}

/* Estimated rows and cost of a plan. */
static void planCost(WcsTab *pTab, const ks_plan *p, int bAllKnown,
                     int nInUnknown, double *pRows, double *pCost) {
  int bFresh;
  double N = tableRows(pTab, &bFresh);
  double rows, cost;
  switch (p->eKind) {
  case KS_PLAN_EMPTY:
    rows = 1;
    cost = 1;
    break;
  case KS_PLAN_POINT:
  case KS_PLAN_MULTI_POINT:
    if (p->eKind == KS_PLAN_POINT && nInUnknown == 0) {
      rows = 1;
      cost = SEEK_COST + 1;
      break;
    }
    /* (a point only because of an IN list's placeholder values: a list) */
    rows = bAllKnown ? p->nPoint : pow(IN_GUESS, nInUnknown);
    if (rows < 1) rows = 1;
    cost = rows * (SEEK_COST + 1);
    break;
  case KS_PLAN_SKIP: {
    double dA = distinctPrefixes(pTab, p->nSkipDepth, N);
    double dB = distinctPrefixes(pTab, p->iSkipField + 1, N);
    rows = dB > 0 ? N * dA / dB : N;
    cost = dA * SEEK_COST + rows;
    break;
  }
  case KS_PLAN_FULL:
    rows = N;
    cost = N + 2 * SEEK_COST;
    break;
  default: {
    double d = distinctPrefixes(pTab, p->nEqField, N);
    rows = N / (d > 1 ? d : 1);
    if (p->eKind == KS_PLAN_RANGE || p->eKind == KS_PLAN_MULTI_RANGE) {
      if (p->nKeyField > p->nEqField || p->bKeyColumn) rows /= 4;
    }
    if (p->eKind == KS_PLAN_MULTI_RANGE) {
      double k = bAllKnown ? p->nRange : pow(IN_GUESS, nInUnknown);
      rows *= k > 1 ? k : 1;
      if (rows > N) rows = N;
      cost = k * SEEK_COST + rows;
    } else {
      cost = SEEK_COST + rows;
    }
    break;
  }
  }
  if (bAllKnown && p->eKind != KS_PLAN_SKIP && p->eKind != KS_PLAN_EMPTY &&
      p->eKind != KS_PLAN_POINT && pTab->pTab && p->nRange <= 64) {
    wcs_key_range aR[64];
    int nR;
    uint64_t nEst = 0;
    toKeyRanges(p, -1, aR, &nR);
    if (bFresh && nR == 1 && aR[0].pStart == NULL && aR[0].pEnd == NULL) {
      /* the whole key space: tableRows() just estimated this very range
      ** (an estimate reads every file's index, tens of ms on big tables) */
      rows = pTab->nRowEst > 0 ? pTab->nRowEst : 1;
      cost = SEEK_COST * (p->nRange > 0 ? p->nRange : 1) + rows;
    } else if (nR == 0) {
      rows = 1; /* no range holds a key (an empty range list means all) */
      cost = 1;
    } else if (wcs_table_estimate_rows(pTab->pTab, aR, nR, &nEst) == WCS_OK) {
      rows = nEst > 0 ? (double)nEst : 1;
      cost = SEEK_COST * (p->nRange > 0 ? p->nRange : 1) + rows;
    }
  }
  if (rows < 1) rows = 1;
  *pRows = rows;
  *pCost = cost;
}

/*
** The plan as EXPLAIN's words and the cost take it. A range bound whose
** value is not known yet (a parameter, a column of another table) is
** planned with a placeholder that leaves the field's whole domain, so a
** plan of equal leading fields and such a bound on the next one (device =
** ? AND id = ? AND day BETWEEN ? AND ?) comes out as a prefix scan, and
** one with only a bound on the first field (or on _key) as a full scan.
** xFilter plans the real values into a range, so *pSaid says a range scan
** over one more field, and costs a quarter of the rows, as for known
** bounds.
*/
static void unknownRange(const ks_plan *pPlan, const PlanCons *aPC, int nPC,
                         ks_plan *pSaid) {
  int i;
  *pSaid = *pPlan;
  if (pPlan->eKind != KS_PLAN_PREFIX && pPlan->eKind != KS_PLAN_FULL) return;
  for (i = 0; i < nPC; i++) {
    const PlanCons *c = &aPC[i];
    int bBound = c->op == KS_OP_LT || c->op == KS_OP_LE || c->op == KS_OP_GT ||
                 c->op == KS_OP_GE || c->op == KS_OP_PREFIX ||
                 c->op == KS_OP_GLOB_PREFIX || c->op == KS_OP_LIKE_PREFIX;
    if (c->bKnown || !bBound) continue;
    if (c->iField == KS_FIELD_KEY && pPlan->eKind == KS_PLAN_FULL) {
      pSaid->eKind = KS_PLAN_RANGE;
      pSaid->nKeyField = 0;
      pSaid->bKeyColumn = 1;
      return;
    }
    if (c->iField >= 0 && c->iField == pPlan->nEqField) {
      pSaid->eKind = KS_PLAN_RANGE;
      pSaid->nKeyField = pPlan->nEqField + 1;
      return;
    }
  }
}

/* Whether declared column q shows numbers: INT64, FLOAT64, or a column of
** a SUM, MIN or MAX family (whatever its declared type). */
static int valueIsNumber(const ks_schema *s, int q) {
  const ks_qualifier *d = &s->aQual[q];
  int eAgg = s->aFamily[d->iFamily].eAgg;
  return eAgg == KS_AGG_SUM || eAgg == KS_AGG_MIN || eAgg == KS_AGG_MAX ||
         d->eVType == KS_V_INT64 || d->eVType == KS_V_FLOAT64;
}

/* Whether constraint i may be a value filter (spec token v): a comparison
** (=, <, <=, >, >=) of a table's declared number column, or = on a
** STRING column with BINARY collation; not an IN list (its values would
** each cost an xFilter). SQLite still checks the term (it is not
** omitted): the cursor only passes over rows that cannot satisfy it
** (valueMatch). Not !=: SQLite 3.40 passes it from the ON clause of a
** LEFT JOIN on this table without the join's prerequisite, where it
** must keep every row (rejectsNull). */
static int valueFilterTerm(const WcsTab *pTab, sqlite3_index_info *pInfo,
                           int i) {
  const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
  const ks_schema *s = pTab->pSchema;
  int q = pC->iColumn - pTab->iColQual;
  if (pTab->bHistory || q < 0 || q >= s->nQual) return 0;
  switch (pC->op) {
  case SQLITE_INDEX_CONSTRAINT_EQ:
  case SQLITE_INDEX_CONSTRAINT_LT:
  case SQLITE_INDEX_CONSTRAINT_LE:
  case SQLITE_INDEX_CONSTRAINT_GT:
  case SQLITE_INDEX_CONSTRAINT_GE:
    break;
  default:
    return 0;
  }
  if (!valueIsNumber(s, q)) {
    const char *zColl = sqlite3_vtab_collation(pInfo, i);
    if (s->aQual[q].eVType != KS_V_STRING ||
        pC->op != SQLITE_INDEX_CONSTRAINT_EQ ||
        (zColl && sqlite3_stricmp(zColl, "BINARY") != 0)) {
      return 0;
    }
  }
  return pC->op != SQLITE_INDEX_CONSTRAINT_EQ || !sqlite3_vtab_in(pInfo, i, -1);
}

/*
** xBestIndex.
**
** Every usable constraint on a key field or _key (=, IS, IN, <, <=, >, >=,
** GLOB, LIKE, IS NULL, IS NOT NULL, starts_with()) becomes a ks_constraint
** and the keyschema planner turns them into key ranges (ks_plan_make). The
** values are not known here (except literals, from sqlite3_vtab_rhs_value):
** the plan is made with placeholders to learn its kind and which
** constraints it captures exactly; xFilter makes it again with the values.
** A constraint is omitted from SQLite's re-check only if captured exactly,
** except terms on _key, which are always omitted: the module compares _key
** with TEXT as bytes, where SQLite would put every TEXT below every BLOB,
** and matches GLOB and LIKE patterns against the key's bytes, where
** SQLite built with SQLITE_LIKE_DOESNT_MATCH_BLOBS (Debian's) matches no
** BLOB. Should xFilter find an omitted constraint not exact after all (an
** IN list past the point cap, a LIKE pattern), the cursor checks it itself
** (the residual), with byte comparisons and sqlite3_strglob/_strlike.
**
** SQLite honours an omit only for the first 16 constraints and never for a
** row value (`(a,b) > (x,y)` arrives as `a >= x` with no known value); it
** re-checks those itself, so LIMIT is not pushed down past either.
**
** Plan encoding handed to xFilter:
**
**   idxNum   the ks_plan_kind (3 = PREFIX, as in "INDEX 3:PREFIX SCAN")
**   idxStr   two NUL-terminated strings back to back: the plan in words
**            (what EXPLAIN QUERY PLAN prints, e.g. "PREFIX SCAN (device,id)
**            LIMIT"), then the spec, space-separated tokens:
**              c<f>,<op>,<a>,<fl>  constraint on key field f (-1: _key),
**                                  ks_op op, value in argv[a-1]; fl bit 1:
**                                  omitted (exact), bit 2: IN list handled
**                                  all at once (sqlite3_vtab_in)
**              h<what>,<op>,<a>    history: what 0 family, 1 qualifier,
**                                  2 latest_n, 3 _timestamp, 4 _timestamp
**                                  IN list handled all at once; SQLite op
**              v<q>,<op>,<a>       value filter: declared column q
**                                  compared by SQLite op with argv[a-1],
**                                  a term SQLite still checks (not
**                                  omitted; valueFilterTerm, valueMatch)
**              L<a> O<a>           LIMIT / OFFSET value in argv[a-1]
**              E                   nothing can match (e.g. key IS NULL)
**              R                   reverse scan (ORDER BY consumed DESC)
**              M                   merge salt buckets into key order
**              S                   skip scans allowed
**              K                   row keys only (no column of a family)
**              N                   with K: no column at all (count(*)):
**                                  rows the engine counts need no reads
**              F<i>,<j>,...        read only these families (else all)
**              A                   with F: still every row of the table
**                                  (wcs_read_options.bRowsOfAll)
**              X                   history: latest_n is named but this
**                                  plan was not given it (xFilter fails)
**              V                   the statement names a key field
**                                  (colUsed): every row's key is checked
**                                  against the schema before it is
**                                  returned, even where no field is read
**                                  (a term the range captured, an ORDER
**                                  BY consumed), so that a key that does
**                                  not decode is an error, never a row
**            SQLite passes idxStr to xFilter unchanged (a P4 pointer).
**            An argv slot no token names is a claimed NULL-rejecting term
**            (step 6); xFilter ignores it.
**
** Costs come from wcs_table_estimate_rows/_prefixes (SEEK_COST per seek, 1
** per row); a skip scan is allowed only when cheaper than a full scan.
*/
static int wcsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  WcsTab *pTab = (WcsTab *)pVtab;
  const ks_schema *s = pTab->pSchema;
  PlanCons *aPC = NULL;
  ks_constraint *aKC = NULL;
  ks_plan *pPlan = NULL;
  ks_plan planSaid; /* *pPlan as the words and the cost take it */
  ks_plan_opts opts;
  sqlite3_str *pStr = NULL, *pSpec = NULL;
  char *zErr = NULL;
  int nPC = 0, i, rc = SQLITE_OK, nArgv = 0;
  int iLimit = -1, iOffset = -1, bEmpty = 0, bAllKnown = 1, nInUnknown = 0;
  int bKeyLike = 0; /* a usable LIKE on _key is offered */
  int bSkip = 0, bReverse = 0, bOrdered = 0, bLimitOk = 1;
  int aHist[4] = {-1, -1, -1, -1}; /* history: family, qualifier, latest */
  int bLatestAbsent = 0;           /* spec X */
  int nTsCons = 0, aTsCons[8], abTsIn[8];
  int bTsUnusable = 0; /* history: a _timestamp term SQLite holds back */
  int bTsLeft = 0;     /* history: a usable _timestamp term this plan
                       ** cannot take (its operator, or past aTsCons) */
  int nDistinct = 0;   /* DISTINCT over this many leading key fields */
  int nGroup = 0;      /* ordered within groups of this many leading key
                       ** fields (spec G) */
  double nGroupRows = 1; /* rows a group has, on average */
  int bMerged = 0;     /* salted: the buckets merged into key order (M) */
  int nVF = 0, aVF[WCS_MAX_VF]; /* value filters: their constraints */
  int eDistinct = sqlite3_vtab_distinct(pInfo); /* 0..3 (GROUP BY: 1) */
  int *aFixed = NULL; /* per key field: 1 if fixed by a single = */
  int nCons = pInfo->nConstraint;
  double rows = 1, cost = 1;

  if (pTab->pTab == NULL && !tabRetry(pTab)) {
    /* the store table is missing: any plan will fail in xFilter */
    pInfo->estimatedCost = 1;
    pInfo->estimatedRows = 1;
    return SQLITE_OK;
  }
  aPC = sqlite3_malloc64(sizeof(PlanCons) * (size_t)(nCons + 1));
  aKC = sqlite3_malloc64(sizeof(ks_constraint) * (size_t)(nCons + 1));
  aFixed = sqlite3_malloc64(sizeof(int) * (size_t)(s->nField + 1));
  if (!aPC || !aKC || !aFixed) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  memset(aFixed, 0, sizeof(int) * (size_t)(s->nField + 1));

  /* 1. Gather the usable constraints. */
  for (i = 0; i < nCons; i++) {
    if (pInfo->aConstraint[i].usable &&
        pInfo->aConstraint[i].iColumn == pTab->iColKey &&
        pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_LIKE) {
      bKeyLike = 1;
    }
  }
  for (i = 0; i < nCons; i++) {
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    int iCol = pC->iColumn, op, iField;
    PlanCons *c;
    sqlite3_value *pRhs = NULL;
    if (pC->op == SQLITE_INDEX_CONSTRAINT_LIMIT) {
      if (pC->usable) iLimit = i;
      continue;
    }
    if (pC->op == SQLITE_INDEX_CONSTRAINT_OFFSET) {
      if (pC->usable) iOffset = i;
      continue;
    }
    if (!pC->usable) {
      bLimitOk = 0;
      if (pTab->bHistory && iCol == pTab->iColTs) bTsUnusable = 1;
      continue;
    }
    if (pTab->bHistory) {
      int iWhat = -1;
      const char *zColl = sqlite3_vtab_collation(pInfo, i);
      if ((iCol == pTab->iColFamily || iCol == pTab->iColQualifier) && zColl &&
          sqlite3_stricmp(zColl, "BINARY") != 0) {
        bLimitOk = 0;
        continue;
      }
      if (iCol == pTab->iColFamily && pC->op == SQLITE_INDEX_CONSTRAINT_EQ) {
        iWhat = 0;
      } else if (iCol == pTab->iColQualifier &&
                 pC->op == SQLITE_INDEX_CONSTRAINT_EQ) {
        iWhat = 1;
      } else if (iCol == pTab->iColLatest &&
                 pC->op == SQLITE_INDEX_CONSTRAINT_EQ) {
        iWhat = 2;
      } else if (iCol == pTab->iColTs &&
                 (pC->op == SQLITE_INDEX_CONSTRAINT_EQ ||
                  pC->op == SQLITE_INDEX_CONSTRAINT_IS ||
                  pC->op == SQLITE_INDEX_CONSTRAINT_LT ||
                  pC->op == SQLITE_INDEX_CONSTRAINT_LE ||
                  pC->op == SQLITE_INDEX_CONSTRAINT_GT ||
                  pC->op == SQLITE_INDEX_CONSTRAINT_GE)) {
        iWhat = 3;
      } else if (iCol == pTab->iColTs &&
                 pC->op != SQLITE_INDEX_CONSTRAINT_ISNULL &&
                 pC->op != SQLITE_INDEX_CONSTRAINT_ISNOTNULL) {
        /* (!=, IS NOT, a function: SQLite's to check; IS [NOT] NULL
        ** holds for no cell or every one, before latest-N or after) */
        bTsLeft = 1;
      }
      if (iWhat >= 0) {
        if (iWhat == 3) {
          if (nTsCons < 8) {
            /* an IN list whole (sqlite3_vtab_in), so that its times filter
            ** one scan, which keeps each column's versions newest first
            ** and latest_n after the filter; SQLite would otherwise run
            ** one scan per value */
            abTsIn[nTsCons] = pC->op == SQLITE_INDEX_CONSTRAINT_EQ &&
                              sqlite3_vtab_in(pInfo, i, -1);
            aTsCons[nTsCons++] = i;
          } else {
            bLimitOk = 0;
            bTsLeft = 1;
          }
        } else if (aHist[iWhat] < 0) {
          aHist[iWhat] = i;
        } else {
          bLimitOk = 0; /* a second one stays with SQLite */
        }
        continue;
      }
    }
    if (iCol == pTab->iColKey) {
      iField = KS_FIELD_KEY;
    } else if (iCol >= 0 && iCol < s->nField) {
      iField = iCol; /* key fields come first in both layouts */
    } else {
      bLimitOk = 0;
      if (nVF < WCS_MAX_VF && valueFilterTerm(pTab, pInfo, i)) aVF[nVF++] = i;
      continue;
    }
    op = keyOp(pC->op);
    if (op < 0) {
      bLimitOk = 0;
      continue;
    }
    {
      int eType =
          iField == KS_FIELD_KEY ? FT_KEY : (int)s->aField[iField].eType;
      /* patterns and prefixes only on byte-string fields; what GLOB and
      ** LIKE make of a BYTES field's BLOB is SQLite's to say (a build with
      ** SQLITE_LIKE_DOESNT_MATCH_BLOBS, Debian's, matches none): left to
      ** it */
      if (((op == KS_OP_GLOB_PREFIX || op == KS_OP_LIKE_PREFIX ||
            op == KS_OP_PREFIX) &&
           fieldClass(eType) == CLS_NUM) ||
          ((op == KS_OP_GLOB_PREFIX || op == KS_OP_LIKE_PREFIX) &&
           eType == KS_BYTES)) {
        bLimitOk = 0;
        continue;
      }
      /* text comparisons must use BINARY, the key's byte order: so must
      ** _key's, which the module would check as bytes. But for the NOCASE
      ** range terms SQLite makes of a LIKE on _key that it hands over
      ** too: their bytes' range holds every match, and the module checks
      ** that LIKE on each row (left to SQLite, they would compare TEXT
      ** with the BLOB key and fail every row). Of a LIKE ... ESCAPE, which
      ** SQLite keeps, they are SQLite's. */
      if ((eType == KS_STRING || (eType == FT_KEY && !bKeyLike)) &&
          (op == KS_OP_EQ || op == KS_OP_LT || op == KS_OP_LE ||
           op == KS_OP_GT || op == KS_OP_GE)) {
        const char *zColl = sqlite3_vtab_collation(pInfo, i);
        if (zColl && sqlite3_stricmp(zColl, "BINARY") != 0) {
          bLimitOk = 0;
          continue;
        }
      }
    }
    if (op == KS_OP_ISNULL || op == KS_OP_ISNOTNULL) {
      /* key fields are never NULL: IS NULL matches nothing, IS NOT NULL
      ** everything (SQLite honours omit only for the first 16) */
      if (op == KS_OP_ISNULL) bEmpty = 1;
      pInfo->aConstraintUsage[i].omit = 1;
      if (i >= 16) bLimitOk = 0;
      continue;
    }
    c = &aPC[nPC++];
    memset(c, 0, sizeof(*c));
    c->iCons = i;
    c->iField = iField;
    c->op = (ks_op)op;
    if (op == KS_OP_EQ && pC->op == SQLITE_INDEX_CONSTRAINT_EQ &&
        sqlite3_vtab_in(pInfo, i, -1)) {
      c->bIn = 1;
      c->op = KS_OP_IN;
    }
    if (!c->bIn && sqlite3_vtab_rhs_value(pInfo, i, &pRhs) != SQLITE_OK) {
      pRhs = NULL;
    }
    if (pRhs == NULL && (pC->op == SQLITE_INDEX_CONSTRAINT_GE ||
                         pC->op == SQLITE_INDEX_CONSTRAINT_LE)) {
      /* Maybe a row value: SQLite hands `(a,b) > (x,y)` over as `a >= x`
      ** (its right-hand side has no single value), ignores the omit and
      ** re-checks the whole term, so rows the scan returns can still be
      ** dropped: a LIMIT pushed down would then return too few. */
      bLimitOk = 0;
    }
    if (pRhs) {
      ks_op o2 = c->op;
      int t = coerceOperand(
          iField == KS_FIELD_KEY ? FT_KEY : (int)s->aField[iField].eType, &o2,
          pRhs, &c->aVal[0], c->zNum);
      if (t == VAL_FALSE && sqlite3_value_type(pRhs) == SQLITE_NULL) {
        bEmpty = 1;
      }
      /* another operand no row can match is left to xFilter, which gets
      ** the value the statement compares: SQLite's value here may be
      ** another (CAST(281474976710656.5 AS TEXT) is the literal's text
      ** here, and the number rendered to 15 digits, "281474976710656.0",
      ** when the statement runs) */
      if (t == VAL_USE) {
        c->op = o2;
        c->nVal = 1;
        c->bKnown = 1;
      }
      /* VAL_TRUE: planned with a placeholder, value decides in xFilter */
    }
    if (!c->bKnown) {
      bAllKnown = 0;
      if (c->bIn) nInUnknown++;
      placeholder(s, c);
      if (c->op == KS_OP_GLOB_PREFIX || c->op == KS_OP_LIKE_PREFIX) {
        c->bPattern = 1;
      }
    }
    if (c->op == KS_OP_EQ && iField >= 0 && !c->bIn) aFixed[iField] = 1;
  }

  /* An unknown equality or IN list on a field is planned with placeholder
  ** values, which a known bound on the same field may leave out (day IN
  ** (?, ?) AND day > 1 would keep one of the placeholders 1 and 2, and
  ** look like one key; _key IN (...) AND _key BETWEEN x'70' AND x'71'
  ** would keep none, and look empty). The field's other terms are planned
  ** with placeholders too, which are consistent with each other; xFilter
  ** plans with every real value. */
  if (!bAllKnown) {
    int j;
    for (i = 0; i < nPC; i++) {
      const PlanCons *u = &aPC[i];
      if (u->bKnown || (u->op != KS_OP_EQ && u->op != KS_OP_IN)) continue;
      for (j = 0; j < nPC; j++) {
        if (aPC[j].bKnown && aPC[j].iField == u->iField) {
          aPC[j].bKnown = 0;
          placeholder(s, &aPC[j]);
        }
      }
    }
  }

  /* 2. Plan (with skip scans if they are cheaper than a full scan). */
  for (i = 0; i < nPC; i++) {
    memset(&aKC[i], 0, sizeof(aKC[i]));
    aKC[i].iField = aPC[i].iField;
    aKC[i].op = aPC[i].op;
    aKC[i].aVal = aPC[i].aVal;
    aKC[i].nVal = aPC[i].nVal;
  }
  memset(&opts, 0, sizeof(opts));
  opts.bAllowSkip = 1;
  rc = ks_plan_make(s, aKC, nPC, &opts, &pPlan, &zErr);
  if (rc == WCS_OK && pPlan->eKind == KS_PLAN_SKIP) {
    double rSkip, cSkip;
    double N = tableRows(pTab, NULL);
    planCost(pTab, pPlan, bAllKnown, nInUnknown, &rSkip, &cSkip);
    if (cSkip < N + 2 * SEEK_COST) {
      bSkip = 1;
    } else {
      ks_plan_free(pPlan);
      pPlan = NULL;
      opts.bAllowSkip = 0;
      for (i = 0; i < nPC; i++)
        aKC[i].bExact = 0;
      rc = ks_plan_make(s, aKC, nPC, &opts, &pPlan, &zErr);
    }
  }
  if (rc != WCS_OK) {
    setErr(pVtab, "wcs: planning failed: %s", zErr ? zErr : wcs_errstr(rc));
    wcs_free(zErr);
    rc = wcsToSqlite(rc);
    goto done;
  }
  unknownRange(pPlan, aPC, nPC, &planSaid);

  /* 3. Hand out argv slots; omit what the plan captures exactly. */
  pSpec = sqlite3_str_new(NULL);
  for (i = 0; i < nPC; i++) {
    PlanCons *c = &aPC[i];
    /* a _key term is the module's (TEXT as bytes; GLOB and LIKE match the
    ** key's bytes, where SQLite's own functions may refuse every BLOB):
    ** always omitted, and whatever the plan made in xFilter does not
    ** capture exactly the cursor re-checks itself */
    int bKeyTerm = c->iField == KS_FIELD_KEY;
    int bOmit = (aKC[i].bExact && !c->bPattern) || bKeyTerm;
    if (c->op == KS_OP_LIKE_PREFIX && !bKeyTerm) {
      /* SQLite 3.40 codes an omitted LIKE of the inner table of a LEFT
      ** JOIN as a condition it also checks for the NULL row, which then
      ** never comes: the outer row is lost. SQLite checks LIKE itself. */
      bOmit = 0;
    }
    int fl = 0;
    pInfo->aConstraintUsage[c->iCons].argvIndex = ++nArgv;
    if (bOmit) {
      pInfo->aConstraintUsage[c->iCons].omit = 1;
      fl |= 1;
      if (c->iCons >= 16 || nArgv > 16) bLimitOk = 0;
    } else {
      bLimitOk = 0;
    }
    if (c->bIn) {
      sqlite3_vtab_in(pInfo, c->iCons, 1);
      fl |= 2;
    }
    sqlite3_str_appendf(pSpec, "c%d,%d,%d,%d ", c->iField, (int)c->op, nArgv,
                        fl);
  }
  for (i = 0; i < nVF; i++) {
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[aVF[i]];
    pInfo->aConstraintUsage[aVF[i]].argvIndex = ++nArgv;
    sqlite3_str_appendf(pSpec, "v%d,%d,%d ", pC->iColumn - pTab->iColQual,
                        (int)pC->op, nArgv);
  }
  if (pTab->bHistory) {
    int w;
    for (w = 0; w < 3; w++) {
      if (aHist[w] >= 0) {
        pInfo->aConstraintUsage[aHist[w]].argvIndex = ++nArgv;
        pInfo->aConstraintUsage[aHist[w]].omit = 1;
        sqlite3_str_appendf(pSpec, "h%d,%d,%d ", w,
                            pInfo->aConstraint[aHist[w]].op, nArgv);
        if (aHist[w] >= 16 || nArgv > 16) bLimitOk = 0;
      }
    }
    for (w = 0; w < nTsCons; w++) {
      pInfo->aConstraintUsage[aTsCons[w]].argvIndex = ++nArgv;
      pInfo->aConstraintUsage[aTsCons[w]].omit = 1;
      if (abTsIn[w]) sqlite3_vtab_in(pInfo, aTsCons[w], 1);
      sqlite3_str_appendf(pSpec, "h%d,%d,%d ", abTsIn[w] ? 4 : 3,
                          pInfo->aConstraint[aTsCons[w]].op, nArgv);
      if (aTsCons[w] >= 16 || nArgv > 16) bLimitOk = 0;
    }
  }
  if (bEmpty) sqlite3_str_appendall(pSpec, "E ");
  if (bSkip) sqlite3_str_appendall(pSpec, "S ");

  /* 4. ORDER BY on key fields in key order (fields fixed by = may be
  ** skipped on either side); DESC by a reverse scan. REVERSED DECIMAL
  ** fields sort backwards, so their ASC is a reverse scan. */
  if (pInfo->nOrderBy > 0) {
    int j, f = 0, dir = -1, bOk = 1, bPhysical = 0, bUnique = 0;
    int bByField = 0; /* a key field not fixed by = was ordered on */
    int nGroupAt = 0, dirGroups = 0; /* where the direction changed */
    for (j = 0; j < pInfo->nOrderBy && bOk; j++) {
      const struct sqlite3_index_orderby *o = &pInfo->aOrderBy[j];
      int iCol = o->iColumn, d = o->desc ? 1 : 0;
      if (bUnique) break; /* rows are distinct: later terms change nothing */
      if (iCol == pTab->iColKey) {
        /* _key order is scan order, all fields at once; salted, it is
        ** bucket by bucket, which no order of fields before it keeps */
        if (dir >= 0 && dir != d) bOk = 0;
        if (nGroupAt > 0) bOk = 0;
        if (s->nSalt > 0 && bByField) bOk = 0;
        dir = d;
        bPhysical = 1;
        f = s->nField;
        bUnique = !pTab->bHistory;
        continue;
      }
      if (iCol >= 0 && iCol < s->nField && aFixed[iCol]) continue;
      while (f < s->nField && f != iCol && aFixed[f])
        f++;
      if (f < s->nField && iCol == f) {
        d ^= s->aField[f].eEnc == KS_ENC_REVERSED_DECIMAL ? 1 : 0;
        if (dir >= 0 && dir != d) {
          /* one change of direction: the groups of the fields before
          ** this one in the first direction, each group's rows in the
          ** other (spec G); not where groups would be spread over
          ** buckets or found by a skip scan's filter, and only in
          ** DELIMITED keys, where a group's rows are those that begin
          ** with its bytes (an ORDERED CODE key drops its trailing empty
          ** fields, and may end before the separator of its group) */
          if (nGroupAt > 0 || s->nSalt > 0 || pTab->bHistory || bSkip ||
              s->eStruct != KS_STRUCT_DELIMITED) {
            bOk = 0;
          } else {
            nGroupAt = f;
            dirGroups = dir;
          }
        }
        dir = d;
        bByField = 1;
        f++;
        if (f == s->nField && !pTab->bHistory) bUnique = 1;
        continue;
      }
      bOk = 0;
    }
    if (bOk && nGroupAt > 0) {
      /* Two seeks a group cost about what SQLite's sort of 16 rows does
      ** (measured): worth it where groups hold 32 rows or more, or where
      ** a LIMIT (and OFFSET) needs the rows of a few groups out of many
      ** rows. */
      double N = tableRows(pTab, NULL);
      double g = distinctPrefixes(pTab, nGroupAt, N);
      double rpg = g > 0 ? N / g : 1, l = -1;
      sqlite3_value *pV = NULL;
      if (iLimit >= 0 &&
          sqlite3_vtab_rhs_value(pInfo, iLimit, &pV) == SQLITE_OK && pV) {
        l = (double)sqlite3_value_int64(pV);
        pV = NULL;
        if (l >= 0 && iOffset >= 0 &&
            sqlite3_vtab_rhs_value(pInfo, iOffset, &pV) == SQLITE_OK && pV) {
          l += (double)sqlite3_value_int64(pV);
        }
      } else if (iLimit >= 0) {
        l = 100; /* a parameter: a page, most likely */
      }
      if (rpg >= 32 || (l >= 0 && (l / rpg + 1) * 16 <= N)) {
        nGroup = nGroupAt;
        nGroupRows = rpg;
        dir = dirGroups;
        bLimitOk = 0; /* SQLite stops reading at its LIMIT */
        sqlite3_str_appendf(pSpec, "G%d ", nGroup);
      } else {
        bOk = 0;
      }
    }
    if (bOk) {
      pInfo->orderByConsumed = 1;
      bOrdered = 1;
      bReverse = dir == 1;
      if (bReverse) sqlite3_str_appendall(pSpec, "R ");
      if (pPlan->nBucket > 0 && !bPhysical && dir >= 0) {
        sqlite3_str_appendall(pSpec, "M ");
        bMerged = 1;
      }
    }
  }

  /* 4b. DISTINCT without ORDER BY (sqlite3_vtab_distinct() 2) needs only
  ** rows with equal ORDER BY columns next to each other: key fields in
  ** any order that, with the fields fixed by =, make up the leading fields
  ** are, in a forward scan of unsalted keys. Not GROUP BY (1): SQLite 3.40
  ** also takes such rows as sorted in the GROUP BY's order when an ORDER
  ** BY repeats it, and leaves out its sort. */
  if (eDistinct == 2 && pInfo->nOrderBy > 0 && !bOrdered && !pTab->bHistory &&
      s->nField > 0 && pPlan->nBucket == 0) {
    int j, f, nLead = 0, bOk = 1;
    unsigned char aIn[KS_MAX_FIELDS];
    memset(aIn, 0, sizeof aIn);
    for (j = 0; j < pInfo->nOrderBy && bOk; j++) {
      int iCol = pInfo->aOrderBy[j].iColumn;
      if (iCol < 0 || iCol >= s->nField) {
        bOk = 0;
      } else {
        aIn[iCol] = 1;
        if (iCol >= nLead) nLead = iCol + 1;
      }
    }
    for (f = 0; f < nLead && bOk; f++) {
      if (!aIn[f] && !aFixed[f]) bOk = 0;
    }
    if (bOk) {
      pInfo->orderByConsumed = 1;
      bOrdered = 1;
    }
  }

  /* 4c. DISTINCT (sqlite3_vtab_distinct() 2 or 3) over columns that are
  ** all among the first k key fields: rows with equal values of those
  ** fields are equal in every column the statement uses, and all but one
  ** may be left out, so the scan reads one row per value of them and
  ** seeks past the rest (distinctNext; forward scans, salted keys only
  ** with their buckets merged into key order: SQLite 3.40 asks for
  ** DISTINCT with a descending ORDER BY as 0, all rows). */
  if (bOrdered && !bReverse && nGroup == 0 && !pTab->bHistory &&
      (pPlan->nBucket == 0 ? s->nSalt == 0 : bMerged) && eDistinct >= 2) {
    int k = distinctDepth(pTab, (sqlite3_uint64)pInfo->colUsed);
    if (k > 0 && k < s->nField) {
      nDistinct = k;
      sqlite3_str_appendf(pSpec, "D%d ", k);
    }
  }

  /* 5. LIMIT/OFFSET, when every constraint is captured and the order is
  ** settled. */
  if (iLimit >= 0 && bLimitOk && (pInfo->nOrderBy == 0 || bOrdered) &&
      iLimit < 16 && (iOffset < 0 || iOffset < 16)) {
    pInfo->aConstraintUsage[iLimit].argvIndex = ++nArgv;
    pInfo->aConstraintUsage[iLimit].omit = 1;
    sqlite3_str_appendf(pSpec, "L%d ", nArgv);
    if (iOffset >= 0) {
      pInfo->aConstraintUsage[iOffset].argvIndex = ++nArgv;
      pInfo->aConstraintUsage[iOffset].omit = 1;
      sqlite3_str_appendf(pSpec, "O%d ", nArgv);
    }
  } else {
    iLimit = iOffset = -1;
  }

  /* 6. Families: only those of the columns used, when rows lacking all of
  ** them cannot be in the result anyway; else those, with every row of
  ** the table (A: the engine reads the other families only when the
  ** files' notes do not show that these have every row). */
  if (!pTab->bHistory) {
    sqlite3_uint64 m = (sqlite3_uint64)pInfo->colUsed;
    int nFam = s->nFamily, bAll = 0, bAny = 0, bSafe = 0, bRowsOfAll = 0;
    unsigned char *aUse = sqlite3_malloc(nFam + 1);
    if (aUse == NULL) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    memset(aUse, 0, (size_t)nFam + 1);
#define COLUSED(c) ((c) >= 63 ? (m >> 63) & 1 : (m >> (c)) & 1)
    for (i = 0; i < s->nQual; i++) {
      if (COLUSED(pTab->iColQual + i)) aUse[s->aQual[i].iFamily] = 1, bAny = 1;
    }
    for (i = 0; i < nFam; i++) {
      if (COLUSED(pTab->iColFam + i)) aUse[i] = 1, bAny = 1;
    }
    if (COLUSED(pTab->iColTs)) bAll = 1;
#undef COLUSED
    if (bAny && !bAll) {
      /* A NULL-rejecting term on a read family's column drops rows that
      ** lack the family, if it filters this table's rows at all: a term
      ** from the ON clause of a LEFT JOIN with this table on the left
      ** arrives here too, usable, yet must keep every row. So the term
      ** the plan relies on is claimed (an argv slot, not omitted, ignored
      ** by xFilter): its prerequisites become the plan's, and for such an
      ** ON term they include this very table, which makes SQLite drop the
      ** plan for one made without the term. A claimed IN list is taken
      ** all at once (sqlite3_vtab_in), not one xFilter per value. */
      for (i = 0; i < nCons && !bSafe; i++) {
        const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
        int iCol = pC->iColumn, iFam = -1;
        if (!pC->usable || !rejectsNull(pC->op)) continue;
        if (iCol >= pTab->iColQual && iCol < pTab->iColQual + s->nQual) {
          iFam = s->aQual[iCol - pTab->iColQual].iFamily;
        } else if (iCol >= pTab->iColFam && iCol < pTab->iColFam + nFam) {
          iFam = iCol - pTab->iColFam;
        }
        if (iFam >= 0 && aUse[iFam]) {
          bSafe = 1;
          if (pInfo->aConstraintUsage[i].argvIndex == 0) {
            pInfo->aConstraintUsage[i].argvIndex = ++nArgv;
            if (pC->op == SQLITE_INDEX_CONSTRAINT_EQ) {
              sqlite3_vtab_in(pInfo, i, 1);
            }
          }
        }
      }
      if (!bSafe) bRowsOfAll = 1;
    }
    if (!bAny && !bAll) {
      sqlite3_str_appendall(pSpec, m == 0 ? "K N " : "K ");
    } else if (!bAll) {
      int bFirst = 1;
      sqlite3_str_appendall(pSpec, "F");
      for (i = 0; i < nFam; i++) {
        if (aUse[i]) {
          sqlite3_str_appendf(pSpec, "%s%d", bFirst ? "" : ",", i);
          bFirst = 0;
        }
      }
      sqlite3_str_appendall(pSpec, bRowsOfAll ? " A " : " ");
    }
    sqlite3_free(aUse);
  }
  {
    /* V: a key field named anywhere in the statement (colUsed's last bit
    ** stands for every column from the 64th on) */
    sqlite3_uint64 m = (sqlite3_uint64)pInfo->colUsed, mKey;
    mKey = s->nField >= 64 ? ~(sqlite3_uint64)0
                           : (((sqlite3_uint64)1 << s->nField) - 1);
    if (s->nField > 0 && (m & mKey) != 0) sqlite3_str_appendall(pSpec, "V ");
    /* X: a history view's latest_n named but not given to this plan (a
    ** term inside an OR, or on a table not yet open): the column reads
    ** NULL, so SQLite's own check of the term would drop every row. The
    ** plan costs the most, for SQLite to take one that gives it; if it
    ** takes this one all the same, xFilter says why it cannot run. */
    /* An UPDATE's colUsed has every bit set (SQLite reads every column
    ** for xUpdate, which refuses it, a history view being read-only): not
    ** flagged, so that the refusal says so. A query's colUsed has only the
    ** bits of its columns (the last for all from the 64th on). */
    if (pTab->bHistory && aHist[2] < 0 && m != ~(sqlite3_uint64)0 &&
        ((pTab->iColLatest >= 63 ? m >> 63 : m >> pTab->iColLatest) & 1)) {
      sqlite3_str_appendall(pSpec, "X ");
      bLatestAbsent = 1;
    }
  }

  /* 7. Words, costs, flags. */
  pStr = sqlite3_str_new(NULL);
  if (bEmpty) {
    sqlite3_str_appendall(pStr, "EMPTY");
  } else {
    describePlan(pStr, pTab, &planSaid, nInUnknown > 0);
  }
  if (nDistinct > 0) {
    sqlite3_str_appendall(pStr, " DISTINCT (");
    for (i = 0; i < nDistinct; i++) {
      sqlite3_str_appendf(pStr, "%s%s", i ? "," : "", s->aField[i].zName);
    }
    sqlite3_str_appendall(pStr, ")");
  }
  if (bReverse) sqlite3_str_appendall(pStr, " REVERSE");
  if (nGroup > 0) {
    sqlite3_str_appendall(pStr, " GROUPS (");
    for (i = 0; i < nGroup; i++) {
      sqlite3_str_appendf(pStr, "%s%s", i ? "," : "", s->aField[i].zName);
    }
    sqlite3_str_appendf(pStr, ") EACH %s", bReverse ? "FORWARD" : "REVERSE");
  }
  if (nVF > 0 && !bEmpty) {
    /* each column once, in the order of the terms */
    int bFirst = 1, j;
    sqlite3_str_appendall(pStr, " FILTER (");
    for (i = 0; i < nVF; i++) {
      int iCol = pInfo->aConstraint[aVF[i]].iColumn;
      for (j = 0; j < i && pInfo->aConstraint[aVF[j]].iColumn != iCol; j++) {
      }
      if (j < i) continue;
      sqlite3_str_appendf(pStr, "%s%s", bFirst ? "" : ",",
                          s->aQual[iCol - pTab->iColQual].zName);
      bFirst = 0;
    }
    sqlite3_str_appendall(pStr, ")");
  }
  if (pTab->bHistory) {
    if (aHist[0] >= 0) sqlite3_str_appendall(pStr, " FAMILY");
    if (nTsCons > 0) sqlite3_str_appendall(pStr, " TIME RANGE");
    if (aHist[2] >= 0) sqlite3_str_appendall(pStr, " LATEST N");
  }
  if (iLimit >= 0) sqlite3_str_appendall(pStr, " LIMIT");
  if (iOffset >= 0) sqlite3_str_appendall(pStr, " OFFSET");
  {
    int bOom = sqlite3_str_errcode(pStr) || sqlite3_str_errcode(pSpec);
    char *zWords = sqlite3_str_finish(pStr);
    char *zSpec = sqlite3_str_finish(pSpec);
    pStr = pSpec = NULL;
    if (bOom) {
      sqlite3_free(zWords);
      sqlite3_free(zSpec);
      rc = SQLITE_NOMEM;
      goto done;
    }
    {
      size_t nW = zWords ? strlen(zWords) : 0, nS = zSpec ? strlen(zSpec) : 0;
      char *z = sqlite3_malloc64(nW + nS + 2);
      if (z == NULL) {
        sqlite3_free(zWords);
        sqlite3_free(zSpec);
        rc = SQLITE_NOMEM;
        goto done;
      }
      memcpy(z, zWords ? zWords : "", nW + 1);
      memcpy(z + nW + 1, zSpec ? zSpec : "", nS + 1);
      pInfo->idxStr = z;
      pInfo->needToFreeIdxStr = 1;
    }
    sqlite3_free(zWords);
    sqlite3_free(zSpec);
  }
  pInfo->idxNum = bEmpty ? KS_PLAN_EMPTY
                  : pPlan->eKind == KS_PLAN_POINT && nInUnknown > 0
                      ? KS_PLAN_MULTI_POINT /* as describePlan says */
                      : (int)planSaid.eKind;
  if (bEmpty) {
    rows = 1;
    cost = 1;
  } else {
    planCost(pTab, &planSaid, bAllKnown, nInUnknown, &rows, &cost);
  }
  if (pTab->bHistory) {
    rows *= 4; /* a few cells per row */
    cost += rows;
  }
  if (nDistinct > 0) {
    /* one seek and one row per value of the leading fields, in the share
    ** of the table the plan reads */
    int bFresh;
    double N = tableRows(pTab, &bFresh);
    double d = distinctPrefixes(pTab, nDistinct, N) * (N > 0 ? rows / N : 1);
    if (d < 1) d = 1;
    if (d < rows) {
      rows = d;
      cost = d * (SEEK_COST + 1);
    }
  }
  if (nGroup > 0) {
    /* two seeks a group: the group cursor's and the stream's */
    double g = rows / nGroupRows;
    cost += (g < 1 ? 1 : g) * 2 * SEEK_COST;
  }
  if (iLimit >= 0) {
    sqlite3_value *pV = NULL;
    if (sqlite3_vtab_rhs_value(pInfo, iLimit, &pV) == SQLITE_OK && pV) {
      double l = (double)sqlite3_value_int64(pV);
      if (l >= 0 && l < rows) {
        cost = cost * (l / rows) + SEEK_COST;
        rows = l > 0 ? l : 1;
      }
    }
  }
  if (aHist[2] >= 0 && (bTsLeft || bTsUnusable) && pInfo->needToFreeIdxStr) {
    /* (no plan follows: the words go now) */
    sqlite3_free(pInfo->idxStr);
    pInfo->idxStr = NULL;
    pInfo->needToFreeIdxStr = 0;
  }
  if (aHist[2] >= 0 && bTsLeft) {
    /* latest_n counts the cells the time terms keep: a term SQLite
    ** checked after latest-N would return fewer versions, or none */
    rc = setErr(pVtab,
                "%s: latest_n needs its _timestamp terms as =, IS, <, <=, >, "
                ">= or IN (at most 8 of them), which it applies before "
                "counting versions; a !=, IS NOT or function of _timestamp "
                "would be checked after it: filter the versions in an outer "
                "query instead",
                pTab->zName);
    goto done;
  }
  if (bTsUnusable && aHist[2] >= 0) {
    /* the same for a time term this plan would leave to SQLite (an IN
    ** list SQLite tries without, a join's term before its table is
    ** open): this plan cannot be used, and SQLite takes one that has the
    ** term (a join order forced the other way has none: "no query
    ** solution" rather than missing rows) */
    rc = SQLITE_CONSTRAINT;
    goto done;
  }
  pInfo->estimatedRows = (sqlite3_int64)rows;
  pInfo->estimatedCost = bLatestAbsent ? 1e300 : cost;
  /* One row at most: SQLite then runs an UPDATE or DELETE in one pass,
  ** stopping after the first row. Not with an IN list taken whole: its
  ** placeholder values can plan one key (a known bound on the same field
  ** leaving out the other) where its real values give several. */
  if (bEmpty ||
      (pPlan->eKind == KS_PLAN_POINT && nInUnknown == 0 && !pTab->bHistory)) {
    pInfo->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  }

done:
  if (pStr) sqlite3_free(sqlite3_str_finish(pStr));
  if (pSpec) sqlite3_free(sqlite3_str_finish(pSpec));
  ks_plan_free(pPlan);
  sqlite3_free(aPC);
  sqlite3_free(aKC);
  sqlite3_free(aFixed);
  return rc;
}

/* ====================================================================
** Cursors: xOpen, xFilter, xNext, xColumn
** ==================================================================== */

typedef struct WcsCursor WcsCursor;
typedef struct Spec Spec;

/* One ordered stream of rows: the whole plan, or one salt bucket. */
typedef struct WcsStream {
  WcsCursor *pCsr;  /* owning cursor */
  wcs_cursor *pCur; /* the engine cursor */
  int iStream;      /* ks stream number, -1 for the whole plan */
  wcs_buf seek;     /* seek target handed to the engine by rowFilter */
} WcsStream;

/* A constraint the cursor checks itself: promised to SQLite as omitted,
** but not captured exactly by the plan made with the real values. */
typedef struct Residual {
  int iField; /* key field, or KS_FIELD_KEY */
  ks_op op;
  int nVal;
  ks_value *aVal; /* values, bytes in the cursor's arena */
} Residual;

/* A value filter: a term on a declared column that SQLite still checks
** (not omitted), taken by the cursor so that the engine passes over rows
** that cannot satisfy it (cellFilter, valueMatch) before they reach
** SQLite or even leave the engine cursor: a comparison of
** a number column (INT64, FLOAT64, or a SUM/MIN/MAX family's) with a
** number, or a STRING column equal to a TEXT value. */
typedef struct ValFilter {
  int q;       /* declared column */
  int mAccept; /* the op as the orders it accepts: bit c + 1 for a value
               ** c (-1, 0, 1) below, equal to, above the filter's */
  int eVal;    /* WCSV_INT (i), WCSV_REAL (r, never a NaN), or 0: the text
               ** at oText in WcsCursor.vfText, nText bytes */
  sqlite3_int64 i;
  double r;
  size_t oText, nText;
} ValFilter;

struct WcsCursor {
  sqlite3_vtab_cursor base; /* must be first */
  WcsCursor *pNextOpen;     /* the next open cursor of pCounted's list */
  WcsCursor *pPrevOpen;     /* and the one before, or NULL */
  int bFrozen;              /* its engine cursors read the transaction's
                            ** writes as of a write to its store table
                            ** through another declaration (freezeReaders) */
  WcsStore *pCounted;       /* the store whose nCursor counts this open
                            ** cursor, or NULL */
  ks_plan *pPlan;           /* the plan made by xFilter */
  int bReverse;             /* scan in descending key order */
  int bMerge;               /* merge streams into key order (salted) */
  int nStream;              /* streams in aStream */
  int nStreamAlloc;         /* entries allocated at aStream (kept across
                            ** xFilter calls) */
  WcsStream *aStream;       /* [nStream] */
  int iCur;                 /* stream holding the current row */
  int *aHeap;               /* bMerge: the streams not at their end, a
                            ** binary heap in key order (aHeap[0] is
                            ** iCur), nHeap of them; [nStreamAlloc] */
  int nHeap;                /* -1: to be built (pickStream) */
  int bEof;                 /* past the last row */
  int bMayUpdate;           /* a write transaction was open at xFilter: the
                            ** statement may be an UPDATE, which asks
                            ** xColumn for unchanged columns (nochange) */
  int bPlain;               /* one stream, no residual, not a history view,
                            ** no DISTINCT step: xNext takes the short path */
  int bCheckKey;            /* spec V: each row's key is decoded before
                            ** it is returned (checkRowKey) */
  int bCountOnly;           /* the statement reads no column (spec N) and
                            ** the engine counts the rows without reading
                            ** them: xNext only counts them down */
  sqlite3_uint64 nCountLeft; /* with bCountOnly: rows after the current one */
  int nDistinct;            /* DISTINCT over the first nDistinct key fields
                            ** (spec D): each step seeks past the current
                            ** row's values of them (distinctNext); 0 no */
  wcs_buf distinctKey;      /* distinctNext's seek key */
  int bLikeCase;            /* a residual LIKE tells case (PRAGMA
                            ** case_sensitive_like on) */
  wcs_buf likeGlob;         /* such a LIKE's pattern as a GLOB */
  int nGroup;               /* rows in key order within groups of equal
                            ** first nGroup key fields, the groups in the
                            ** opposite order (spec G: an ORDER BY whose
                            ** direction changes once); 0 no */
  wcs_cursor *pGroupCur;    /* with nGroup: keys only, in the groups'
                            ** order, on the first row of the current
                            ** group (groupNext) */
  wcs_buf groupKey;         /* the current group's leading key bytes */
  wcs_buf groupSeek;        /* groupNext's seek key */
  sqlite3_int64 nLimit;     /* rows still to return, -1 = unlimited */
  sqlite3_int64 nSkip;      /* OFFSET rows still to skip */
  sqlite3_int64 iRowid;     /* rows returned so far (history rowid) */
  /* the current row */
  const uint8_t *pRow; /* raw row key (borrowed from the engine) */
  size_t nRow;
  const wcs_cell *aCell; /* its cells (borrowed) */
  int nCell;
  ks_value *aKey;     /* [nField] key fields of the row: split bytes once
                      ** bSplit, field i decoded once bit i of mDecoded */
  wcs_buf keyScratch; /* decoding scratch, reused */
  /* the last row split, for ks_key_split_from() (a schema for which
  ** ks_key_split_resumes()): where each of its first nSplitOff fields
  ** began and how long its view is, and its bytes up to the last of them:
  ** a later row's split may start at any of them and keep those before
  ** (they end at an ORDERED CODE field the key ends before, or just after
  ** one unescaped into keyScratch, whose view cannot be kept) */
  int nSplitOff; /* 0: none */
  int aSplitOff[KS_MAX_FIELDS];
  int aSplitLen[KS_MAX_FIELDS];
  wcs_buf splitHead;
  int bSplit;        /* aKey holds this row's split fields */
  int eLast8;        /* the key's last field is an integer ks_key_last_int
                     ** reads as 8 digits (set by xFilter): 1 DECIMAL, 2
                     ** REVERSED DECIMAL; 0 otherwise */
  uint64_t mDecoded; /* fields of aKey decoded (on demand, per field) */
  const uint8_t *pKeptRow; /* headKept pointed the head's views into this
                           ** row buffer (NULL: not known) */
  int oFast; /* checkRowKey's short path: the offset of the last field
             ** (iFast), eight digits (eLast8), in a row whose head is
             ** splitHead with every head field decoded; -1: none */
  int iFast;
  int bHeadInRange;      /* the scan's range holds keys of one head alone (set
                         ** by xFilter): every row's head is splitHead */
  uint64_t mHeadDecoded; /* fields before the last decoded in a row whose
                         ** head was splitHead: the same bytes, so a row
                         ** that keeps the head keeps them decoded */
  int *aQualHint;    /* [nQual] where each declared column's cell was last
                     ** found: rows of a scan mostly share their layout */
  wcs_buf out;       /* JSON and text building, reused */
  /* residual checks */
  int nResidual;
  Residual *aResidual;
  wcs_buf arena; /* bytes of residual values */
  int nVF;       /* value filters in aVF */
  ValFilter aVF[WCS_MAX_VF];
  wcs_buf vfText; /* their text values */
  /* history */
  int iCell;             /* current cell of the row */
  int bLatest;           /* latest_n was given */
  sqlite3_int64 iLatest; /* its value */
  int bQualFilter;       /* qualifier = ... given */
  wcs_buf qual;          /* its bytes */
  sqlite3_int64 nTsIn;   /* _timestamp IN (...) lists given whole: only
                         ** cells at one of these nTsIn times (int64_t,
                         ** ascending, in tsIn) are shown; -1: no list */
  wcs_buf tsIn;
  int nLatestHere;      /* with a list: latest_n applied by histCell after
                        ** it (the engine returns every version); else 0 */
  int iColFam;          /* histCell's column while nLatestHere: family, */
  const void *pColQual; /* qualifier (-1 bytes: none yet) */
  size_t nColQual;
  sqlite3_int64 nColKept; /* and the cells of it shown so far */
  /* xFilter's per-call arrays, kept to avoid allocating on every call */
  Spec *pSpec; /* the last spec parsed (specParse), reused while the same
               ** spec and argc come back: a prepared statement passes the
               ** same idxStr to every call */
  void *pScratch;
  size_t nScratch;  /* bytes at pScratch */
  wcs_buf pointKey; /* the key of a point lookup made without a plan, or
                    ** the first key of such a range (directRange) */
  wcs_buf rangeEnd; /* the last key of such a range */
};

/* The handle of pTab's store table in engine pEng as it is now, if it is
** the same table as pTab's handle: an alter keeps a table's id, while a
** table dropped and made again under the name is another table, which
** the DROP rule keeps the virtual tables of the old one from reaching.
** NULL otherwise (dropped, another table, or an error). */
static wcs_table *sameTable(WcsTab *pTab, wcs_engine *pEng) {
  wcs_table *t = NULL;
  if (wcs_table_open(pEng, pTab->zStoreTable, &t) != WCS_OK) return NULL;
  if (t && wcs_table_id(t) != wcs_table_id(pTab->pTab)) {
    wcs_table_close(t);
    t = NULL;
  }
  return t;
}

/* Replace pTab's handle by t (sameTable; NULL: the table is gone), if
** SQLite's declaration of its columns still holds (tabAdopt), and close
** the old handle. */
static void tabSwap(WcsTab *pTab, wcs_table *t, const char *zStale) {
  wcs_table *pOld = pTab->pTab;
  pTab->pTab = NULL;
  tabAdopt(pTab, t, zStale);
  wcs_table_close(pOld);
}

/*
** The store table of pTab was altered (wcs_alter in another connection,
** wcs_table_alter in another program of this process) since the handle
** was opened: take the table as it is now, if SQLite's declaration of
** its columns still holds (a GC policy changed, say); otherwise every use
** says to open the database again, which declares the new columns.
** (wcs_alter makes the connections on its database do that at their next
** statement, where it can write the schema cookie.) A table dropped keeps
** its old handle, whose uses say so. Only while no cursor or transaction
** of the connection uses the store: they hold the old handle.
*/
static void tabRefresh(WcsTab *pTab) {
  wcs_table *t = sameTable(pTab, pTab->pStore->pEng);
  if (t == NULL) return;
  tabSwap(pTab, t,
          "its store table was altered since this connection declared its "
          "columns (wcs_alter, or another program); open this database "
          "again to use it");
}

void wcsStoreFresh(WcsTab *pTab) {
  WcsStore *st = pTab->pStore;
  char *zErr = NULL;
  /* (a follower that cannot be opened again now is kept) */
  if (st && st->bFollow) storeFollow(pTab->pConn, st, 0, &zErr);
  sqlite3_free(zErr);
}

/* A cursor opens on pTab: count it on the store, which a statement
** reading a store another process writes first brings up to date, when
** no other cursor of the connection reads it (storeFollow). */
static void cursorCount(WcsTab *pTab, WcsCursor *p) {
  WcsStore *st = pTab->pStore;
  if (st == NULL) return;
  wcsStoreFresh(pTab);
  wcsTableFresh(pTab);
  st->nCursor++;
  p->pCounted = st;
  p->pPrevOpen = NULL;
  p->pNextOpen = st->pOpen;
  if (st->pOpen) st->pOpen->pPrevOpen = p;
  st->pOpen = p;
}

/* Forget the writing statement's mark and its moment. */
static void markDrop(WcsStore *st) {
  st->bMark = 0;
  st->iMarkLevel = 0;
  st->pMarkTab = NULL;
  wcs_moment_free(st->pMoment);
  st->pMoment = NULL;
}

/* Whether st's mark is that of the statement writing now: no statement
** of the connection has ended having changed rows since the mark
** (sqlite3_total_changes64 grows when one ends; the marked statement,
** which changed a row, has not). A statement prepared anew at the freed
** address of an ended one, or the next run of the same one, is so told
** apart. Else the mark goes. The module's own statements nested in the
** marked one (clockTick) are discounted (marksShift); a statement of the
** user's nested in it (a function of theirs that writes) ends the mark
** (doc/sql.md, §7). */
static int markCurrent(WcsStore *st, sqlite3 *db) {
  if (!st->bMark) return 0;
  if (sqlite3_total_changes64(db) == st->nMarkChanges) return 1;
  markDrop(st);
  return 0;
}

/* 1 if the connection declares pW's store table another way too (a
** TABLE 'x' declaration, a HISTORY view), in any of its databases. */
static int otherDeclarations(WcsTab *pW) {
  WcsTab *q;
  uint32_t iId;
  if (pW->iOthersGen == pW->pConn->nGen + 1) return pW->bOthers;
  iId = wcs_table_id(pW->pTab);
  pW->bOthers = 0;
  for (q = pW->pConn->pTab; q && !pW->bOthers; q = q->pNextTab) {
    pW->bOthers = q != pW && q->pStore == pW->pStore && q->pTab &&
                  wcs_table_id(q->pTab) == iId;
  }
  /* (known until a table of the connection comes or goes) */
  pW->iOthersGen = pW->pConn->nGen + 1;
  return pW->bOthers;
}

/* The moment of st's mark, made on first need. */
static int markMoment(WcsStore *st, WcsTab *pTab, wcs_moment **ppM) {
  if (st->pMoment == NULL) {
    int rc = wcs_txn_moment(st->pTxn, st->iMark, &st->pMoment);
    if (rc != WCS_OK) return engErr(pTab, rc, pTab->zName);
  }
  *ppM = st->pMoment;
  return SQLITE_OK;
}

/* After a rollback of the store transaction (to a savepoint or whole):
** frozen readers read its writes as they are now again, from their
** current rows on, as unfrozen ones do (a frozen one would show writes
** rolled back), and the writing statement's mark is gone with the log it
** marked. */
static void thawReaders(WcsStore *st) {
  WcsCursor *p;
  int i;
  for (p = st->pOpen; p; p = p->pNextOpen) {
    if (!p->bFrozen) continue;
    for (i = 0; i < p->nStream; i++)
      wcs_cursor_thaw(p->aStream[i].pCur);
    if (p->pGroupCur) wcs_cursor_thaw(p->pGroupCur);
    p->bFrozen = 0;
  }
  markDrop(st);
}

/*
** A statement writes pW's store table (xUpdate, before its write): if
** the table is declared another way too, remember the store
** transaction's mark before the statement's first write, so that cursors
** of those declarations that SQLite starts (or starts again) while the
** statement runs (the inner loop of a join, a subquery per row or one
** first needed late) read the transaction's writes as of that mark, not
** the statement's own rows (wcsFilter). The moment is made from the mark
** only when such a cursor starts; a mark costs a log offset.
*/
static void markWrite(WcsTab *pW) {
  WcsStore *st = pW->pStore;
  if (st->bMark && st->pMarkTab == pW && markCurrent(st, pW->pConn->db)) {
    return; /* the same run of the same statement */
  }
  /* (readers SQLite opens only when first needed, a subquery in a CASE,
  ** may come after this write: so whenever the table has another
  ** declaration, read or not yet) */
  if (!otherDeclarations(pW)) return;
  markDrop(st);
  st->bMark = 1;
  st->nMarkChanges = sqlite3_total_changes64(pW->pConn->db);
  st->iMarkTable = wcs_table_id(pW->pTab);
  st->pMarkTab = pW;
  st->iMarkLevel = st->nSp > 0 ? st->aSp[st->nSp - 1] + 1 : 0;
  st->iMark = wcs_txn_mark(st->pTxn);
}

/*
** A write to pW's store table while cursors of the connection read the
** same store table through other declarations (a TABLE 'x' one, a
** HISTORY view): SQLite, which sees other tables, does not read an
** INSERT ... SELECT's rows first as it does from the table written, so
** such a reader would meet the statement's own writes among its rows (and
** an INSERT ... SELECT k || 'x' FROM alias would feed on itself). Each
** reader that may still reach row pRow (NULL: any row) reads the
** transaction's writes as they are before this one from now on
** (wcs_cursor_freeze), as a statement reads one moment; one that has
** passed it, as a subquery's point lookup of the row an UPDATE writes
** has, need not copy them. The declaration written keeps SQLite's own
** rules (its one-pass UPDATE reads the row it writes).
*/
static int freezeReaders(WcsTab *pW, const void *pRow, size_t nRow) {
  WcsStore *st = pW->pStore;
  wcs_moment *pM = NULL;
  WcsCursor *p;
  uint32_t iId;
  if (st == NULL || st->pOpen == NULL || pW->pTab == NULL) return SQLITE_OK;
  iId = wcs_table_id(pW->pTab);
  for (p = st->pOpen; p; p = p->pNextOpen) {
    WcsTab *pR = (WcsTab *)p->base.pVtab;
    int i;
    if (p->bFrozen || p->nStream == 0 || pR == pW || pR->pTab == NULL ||
        wcs_table_id(pR->pTab) != iId) {
      continue;
    }
    for (i = 0; i < p->nStream; i++) {
      if (wcs_cursor_ahead(p->aStream[i].pCur, pRow, nRow)) break;
    }
    /* every stream is past the row; not so a plan by groups, whose
    ** stream goes on to groups on either side of it */
    if (i == p->nStream && !p->pGroupCur) continue;
    if (pM == NULL && st->bMark && st->pMarkTab == pW &&
        markCurrent(st, pW->pConn->db)) {
      /* the moment before the statement's first write (a function's
      ** write makes no mark: a mark of an ended statement is no use) */
      int rc = markMoment(st, pW, &pM);
      if (rc != SQLITE_OK) return rc;
    }
    for (i = 0; i < p->nStream; i++) {
      int rc = pM ? wcs_cursor_freeze_at(p->aStream[i].pCur, pM)
                  : wcs_cursor_freeze(p->aStream[i].pCur);
      if (rc != WCS_OK) return engErr(pW, rc, pW->zName);
    }
    if (p->pGroupCur) {
      int rc = pM ? wcs_cursor_freeze_at(p->pGroupCur, pM)
                  : wcs_cursor_freeze(p->pGroupCur);
      if (rc != WCS_OK) return engErr(pW, rc, pW->zName);
    }
    p->bFrozen = 1;
  }
  return SQLITE_OK;
}

int wcsTableFresh(WcsTab *pTab) {
  WcsStore *st = pTab->pStore;
  wcs_table *pNow = NULL;
  int bReplaced = 0;
  if (st == NULL || pTab->pTab == NULL || !wcs_table_stale(pTab->pTab)) {
    return 0;
  }
  if (st->nCursor == 0 && st->nActive == 0) tabRefresh(pTab);
  if (pTab->pTab && wcs_table_stale(pTab->pTab) && pTab->zStoreTable &&
      wcs_table_open(st->pEng, pTab->zStoreTable, &pNow) == WCS_OK && pNow &&
      wcs_table_id(pNow) != wcs_table_id(pTab->pTab)) {
    bReplaced = 1;
  }
  wcs_table_close(pNow);
  return bReplaced;
}

int wcsStoreWritable(WcsConn *pConn, WcsStore *pStore, char **pzErr) {
  if (pStore == NULL || !pStore->bFollow) return SQLITE_OK;
  return storeFollow(pConn, pStore, 1, pzErr);
}

/* xOpen: the table's spare cursor if it has one (a prepared statement
** opens a cursor on every run), else a new one. */
static int wcsOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsCursor *p = pTab->pSpare;
  pTab->nOpens++; /* a statement begins reading the table (fromStatement) */
  if (p) {
    pTab->pSpare = NULL;
    cursorCount(pTab, p);
    *ppCursor = &p->base;
    return SQLITE_OK;
  }
  p = sqlite3_malloc(sizeof(*p));
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->aKey = sqlite3_malloc64(sizeof(ks_value) * (size_t)(pTab->nField + 1));
  p->aQualHint = sqlite3_malloc64(sizeof(int) * (size_t)(pTab->nQual + 1));
  if (!p->aKey || !p->aQualHint) {
    sqlite3_free(p->aKey);
    sqlite3_free(p->aQualHint);
    sqlite3_free(p);
    return SQLITE_NOMEM;
  }
  memset(p->aQualHint, 0, sizeof(int) * (size_t)(pTab->nQual + 1));
  p->bEof = 1;
  p->nTsIn = -1;
  cursorCount(pTab, p);
  *ppCursor = &p->base;
  return SQLITE_OK;
}

static void cursorReset(WcsCursor *p) {
  int i;
  for (i = 0; i < p->nStream; i++) {
    wcs_cursor_close(p->aStream[i].pCur);
    wcs_buf_free(&p->aStream[i].seek);
  }
  p->nStream = 0;
  wcs_cursor_close(p->pGroupCur);
  p->pGroupCur = NULL;
  p->nGroup = 0;
  p->bFrozen = 0;
  ks_plan_free(p->pPlan);
  p->pPlan = NULL;
  for (i = 0; i < p->nResidual; i++)
    sqlite3_free(p->aResidual[i].aVal);
  sqlite3_free(p->aResidual);
  p->aResidual = NULL;
  p->nResidual = 0;
  p->arena.n = 0;
  p->nVF = 0;
  p->vfText.n = 0;
  p->bEof = 1;
  p->bPlain = 0;
  p->bCountOnly = 0;
  p->bCheckKey = 0;
  p->nDistinct = 0;
  p->mHeadDecoded = 0;
  p->pKeptRow = NULL;
  p->oFast = -1;
  p->bHeadInRange = 0;
  p->pRow = NULL;
  p->nRow = 0;
  p->aCell = NULL;
  p->nCell = 0;
  p->bLatest = 0;
  p->bQualFilter = 0;
  p->nTsIn = -1;
  p->nLatestHere = 0;
  p->iRowid = 0;
}

static void cursorFree(WcsCursor *p) {
  if (p == NULL) return;
  cursorReset(p);
  sqlite3_free(p->aStream);
  sqlite3_free(p->aHeap);
  wcs_buf_free(&p->keyScratch);
  wcs_buf_free(&p->splitHead);
  wcs_buf_free(&p->out);
  wcs_buf_free(&p->arena);
  wcs_buf_free(&p->vfText);
  wcs_buf_free(&p->qual);
  wcs_buf_free(&p->tsIn);
  sqlite3_free(p->pSpec);
  sqlite3_free(p->pScratch);
  wcs_buf_free(&p->pointKey);
  wcs_buf_free(&p->rangeEnd);
  wcs_buf_free(&p->distinctKey);
  wcs_buf_free(&p->groupKey);
  wcs_buf_free(&p->groupSeek);
  wcs_buf_free(&p->likeGlob);
  sqlite3_free(p->aKey);
  sqlite3_free(p->aQualHint);
  sqlite3_free(p);
}

/* xClose: the engine cursors close now; the cursor and its buffers stay
** with the table as its spare, if it has none yet. */
static int wcsClose(sqlite3_vtab_cursor *pCursor) {
  WcsCursor *p = (WcsCursor *)pCursor;
  WcsTab *pTab = (WcsTab *)pCursor->pVtab;
  cursorReset(p);
  if (p->pCounted) {
    WcsStore *st = p->pCounted;
    if (p->pPrevOpen) {
      p->pPrevOpen->pNextOpen = p->pNextOpen;
    } else {
      st->pOpen = p->pNextOpen;
    }
    if (p->pNextOpen) p->pNextOpen->pPrevOpen = p->pPrevOpen;
    p->pNextOpen = p->pPrevOpen = NULL;
    if (--st->nCursor == 0) readSnapDrop(st);
    p->pCounted = NULL;
  }
  if (pTab->pSpare == NULL) {
    pTab->pSpare = p;
  } else {
    cursorFree(p);
  }
  return SQLITE_OK;
}

/* The engine's row filter for skip scans: ask the plan about each row. A
** row it matches comes with the prefix of the fields it navigated, when
** the plan can tell: the engine then emits the rest of that run of rows
** without asking (ks_plan_match_prefix, WCS_ROW_EMIT_PREFIX). */
static int rowFilter(void *pCtx, const void *pRow, size_t nRow,
                     const void **ppSeek, size_t *pnSeek) {
  WcsStream *s = (WcsStream *)pCtx;
  WcsCursor *p = s->pCsr;
  int rc;
  if (s->iStream < 0) {
    rc = ks_plan_check(p->pPlan, pRow, (int)nRow, p->bReverse, &s->seek);
  } else {
    rc = ks_plan_check_stream(p->pPlan, s->iStream, pRow, (int)nRow,
                              p->bReverse, &s->seek);
  }
  switch (rc) {
  case KS_MATCH: {
    int n = ks_plan_match_prefix(p->pPlan, pRow, (int)nRow);
    if (n <= 0) return WCS_ROW_EMIT;
    *ppSeek = pRow;
    *pnSeek = (size_t)n;
    return WCS_ROW_EMIT_PREFIX;
  }
  case KS_SEEK:
    *ppSeek = s->seek.a ? s->seek.a : (const void *)"";
    *pnSeek = s->seek.n;
    return WCS_ROW_SEEK;
  case KS_DONE:
    return WCS_ROW_DONE;
  default:
    return rc;
  }
}

/* Compare two ks values of the same class (ints, or bytes). */
static int valueCmp(const ks_value *a, const ks_value *b) {
  if (a->eType == KS_VAL_INT && b->eType == KS_VAL_INT) {
    return a->i < b->i ? -1 : a->i > b->i;
  }
  if (a->eType == KS_VAL_BYTES && b->eType == KS_VAL_BYTES) {
    int n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->p, b->p, (size_t)n) : 0;
    return c ? c : a->n - b->n;
  }
  return a->eType - b->eType;
}

/* valueCmp() for qsort(). */
static int valueCmpQ(const void *a, const void *b) {
  return valueCmp((const ks_value *)a, (const ks_value *)b);
}

/* An IN list of a residual with more values than this is sorted and
** searched (residualMatch); a shorter one is scanned. */
#define RESIDUAL_SCAN_MAX 8

/* The last field of row pRow[0..nRow), which begins at iOff, as
** ks_key_last_int() would read it, for the schemas p->eLast8 marks: eight
** digits, checked and converted at once. Returns 1 with *pv; 0 for
** anything else, which the general code then takes (and names). */
__attribute__((always_inline)) static inline int lastInt8(const WcsCursor *p,
                                                          const uint8_t *pRow,
                                                          int nRow, int iOff,
                                                          int64_t *pv) {
  uint64_t u;
  if (p->eLast8 == 0 || iOff < 0 || nRow - iOff != 8 ||
      !ks_digits8(pRow + iOff, &u)) {
    return 0;
  }
  *pv = p->eLast8 == 1 ? (int64_t)u : (int64_t)(99999999u - u);
  return 1;
}

/* Split the current row's key into aKey. Rows of a scan mostly begin with
** the fields of the row before: where the schema allows it, the split
** starts at the last field boundary of the previous split that lies in
** the bytes the two keys share (ks_key_split_from), and the split is kept
** for the next row. The usual case, a row that keeps every field but the
** last, is tested first with one comparison of the head. */
static int splitRow(WcsCursor *p, const ks_schema *s, char **pzErr) {
  const uint8_t *pRow = p->pRow;
  int nRow = (int)p->nRow, nField = s->nField, k = 0, i, rc, bHeadKept = 0;
  int aOff[KS_MAX_FIELDS];
  p->mDecoded = 0;
  p->pKeptRow = NULL;
  p->oFast = -1;
  if (!ks_key_split_resumes(s) || pRow == NULL) {
    p->mHeadDecoded = 0;
    return ks_key_split(s, pRow, nRow, p->aKey, &p->keyScratch, pzErr);
  }
  if (p->nSplitOff > 0) {
    int oLast = p->aSplitOff[nField - 1];
    k = p->nSplitOff - 1;
    if (k == nField - 1 && nRow >= oLast &&
        wcs_same_bytes(pRow, p->splitHead.a, (size_t)oLast)) {
      /* every field but the last as in the row before (the head is its
      ** bytes up to the last field, and stays): the common case of a
      ** scan, tested first */
      bHeadKept = 1;
    } else {
      size_t nSame = wcs_common_prefix(
          pRow, p->splitHead.a,
          (size_t)nRow < p->splitHead.n ? (size_t)nRow : p->splitHead.n);
      while (k > 0 && (size_t)p->aSplitOff[k] > nSame)
        k--;
    }
    if (!bHeadKept) p->mHeadDecoded = 0;
    for (i = 0; i < k; i++) {
      if ((p->mHeadDecoded >> i) & 1) {
        /* decoded in a row before, from the same bytes: an integer keeps
        ** its value, text and bytes (a view) are pointed at this row */
        if (p->aKey[i].eType == KS_VAL_BYTES) {
          p->aKey[i].p = pRow + p->aSplitOff[i];
        }
        continue;
      }
      p->aKey[i].eType = KS_VAL_BYTES;
      p->aKey[i].p = pRow + p->aSplitOff[i];
      p->aKey[i].n = p->aSplitLen[i];
      p->aKey[i].i = 0;
    }
  } else {
    p->mHeadDecoded = 0;
  }
  if (bHeadKept && lastInt8(p, pRow, nRow, p->aSplitOff[k], &p->aKey[k].i)) {
    /* the last field an integer of the usual form (a day, a time): its
    ** check is its decoding, which the split would leave to later */
    p->aKey[k].eType = KS_VAL_INT;
    p->aKey[k].p = NULL;
    p->aKey[k].n = 0;
    p->mDecoded = p->mHeadDecoded | ((uint64_t)1 << k);
    return WCS_OK;
  }
  rc = ks_key_split_from(s, pRow, nRow, k, k > 0 ? p->aSplitOff[k] : 0, p->aKey,
                         aOff, &p->keyScratch, pzErr);
  if (bHeadKept) {
    if (rc == WCS_OK) p->mDecoded = p->mHeadDecoded;
    return rc;
  }
  p->nSplitOff = 0;
  if (rc != WCS_OK) return rc;
  /* the fields a later split may start at: those before k, and from k on
  ** those the key holds, up to the first whose view is not in it */
  for (i = k; i < nField && aOff[i] >= 0; i++) {
    p->aSplitOff[i] = aOff[i];
    p->aSplitLen[i] = p->aKey[i].n;
    if (p->aKey[i].p != pRow + aOff[i]) {
      i++;
      break;
    }
  }
  if (i == 0) return WCS_OK;
  /* the head's first aSplitOff[k] bytes are already this row's */
  p->splitHead.n = k > 0 ? (size_t)p->aSplitOff[k] : 0;
  if (wcs_buf_append(&p->splitHead, pRow + p->splitHead.n,
                     (size_t)p->aSplitOff[i - 1] - p->splitHead.n) == WCS_OK) {
    p->nSplitOff = i;
  }
  return WCS_OK;
}

/* The head's fields decoded in a row before are this row's too (the
** same bytes, up to the last field iLast): text and bytes (views) are
** pointed at this row. */
static void headKept(WcsCursor *p, int iLast) {
  int i;
  if (p->pRow != p->pKeptRow) {
    /* (rows mostly come in one buffer of the engine cursor: pointed
    ** there once, the views stay right while the head is kept) */
    for (i = 0; i < iLast; i++) {
      if (((p->mHeadDecoded >> i) & 1) && p->aKey[i].eType == KS_VAL_BYTES) {
        p->aKey[i].p = p->pRow + p->aSplitOff[i];
      }
    }
    p->pKeptRow = p->pRow;
  }
  p->mDecoded |= p->mHeadDecoded;
}

/* decodeField() of the last field, iField, of a row that keeps the head
** of the row split before (the common case of a scan reading a day or a
** timestamp), when it is eight digits (lastInt8): decoded from its offset
** there, without a split or a call. 1 when it was; 0 for anything else,
** left to decodeField(). */
static inline int lastFieldKept(WcsCursor *p, int nField, int iField) {
  int oLast;
  if (p->bSplit || p->nSplitOff != nField || iField != nField - 1) return 0;
  oLast = p->aSplitOff[iField];
  if ((int)p->nRow < oLast ||
      !wcs_same_bytes(p->pRow, p->splitHead.a, (size_t)oLast) ||
      !lastInt8(p, p->pRow, (int)p->nRow, oLast, &p->aKey[iField].i)) {
    return 0;
  }
  p->aKey[iField].eType = KS_VAL_INT;
  p->aKey[iField].p = NULL;
  p->aKey[iField].n = 0;
  p->mDecoded |= (uint64_t)1 << iField;
  if (p->mHeadDecoded) headKept(p, iField);
  return 1;
}

/* Decode key field iField of the current row into aKey[iField], once per
** row and field: statements pay only for the fields they use (a column,
** or a residual check). The key is split once per row, which checks its
** structure; a field's bytes are checked when it is decoded. A key that
** does not decode under the schema is an error naming it; *pzErr is
** sqlite3_malloc'd. */
static int decodeField(WcsCursor *p, int iField, char **pzErr) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  char *zErr = NULL;
  int rc = WCS_OK;
  if ((p->mDecoded >> iField) & 1) return SQLITE_OK;
  if (lastFieldKept(p, pTab->pSchema->nField, iField)) return SQLITE_OK;
  if (!p->bSplit && p->nSplitOff == pTab->pSchema->nField &&
      iField == p->nSplitOff - 1) {
    /* the same, for a last field of any other integer form */
    int oLast = p->aSplitOff[iField];
    if ((int)p->nRow >= oLast &&
        wcs_same_bytes(p->pRow, p->splitHead.a, (size_t)oLast) &&
        ks_key_last_int(pTab->pSchema, p->pRow, (int)p->nRow, oLast,
                        &p->aKey[iField].i) == WCS_OK) {
      p->aKey[iField].eType = KS_VAL_INT;
      p->aKey[iField].p = NULL;
      p->aKey[iField].n = 0;
      p->mDecoded |= (uint64_t)1 << iField;
      if (p->mHeadDecoded) headKept(p, iField);
      return SQLITE_OK;
    }
  }
  if (!p->bSplit) {
    /* the split sets every field's bytes again, the last one decoded
    ** above among them: it will be decoded again if asked (fields
    ** before the last stay decoded while the row keeps the head) */
    rc = splitRow(p, pTab->pSchema, &zErr);
    p->bSplit = rc == WCS_OK;
  }
  if (rc == WCS_OK && ((p->mDecoded >> iField) & 1)) return SQLITE_OK;
  if (rc == WCS_OK) {
    p->pKeptRow = NULL;
    rc = ks_key_field_decode(pTab->pSchema, iField, &p->aKey[iField], p->pRow,
                             (int)p->nRow, &zErr);
  }
  if (rc == WCS_NOMEM) {
    wcs_free(zErr);
    return SQLITE_NOMEM;
  }
  if (rc != WCS_OK) {
    *pzErr =
        sqlite3_mprintf("%s: %s", pTab->zName,
                        zErr ? zErr : "row key does not match the key schema");
    wcs_free(zErr);
    return SQLITE_ERROR;
  }
  p->mDecoded |= (uint64_t)1 << iField;
  if (iField < p->nSplitOff - 1) p->mHeadDecoded |= (uint64_t)1 << iField;
  return SQLITE_OK;
}

/* Spec V: decode every key field of the current row, as a statement that
** names a key field may meet a key that does not decode under the schema
** (written by a raw tool) where it reads no field of it: a term the key
** range captured, an ORDER BY consumed. That is an error naming the key,
** as when the field is read (DESIGN §4), never a row. The fields stay
** decoded for xColumn; the last first, which a row that keeps the head
** of the row before decodes without a split (lastFieldKept). */
__attribute__((noinline)) static int checkRowKeyAll(WcsCursor *p) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  const int nField = pTab->pSchema->nField, iLast = nField - 1;
  int i;
  for (i = iLast; i >= 0; i--) {
    char *zErr = NULL;
    int rc = decodeField(p, i, &zErr);
    if (rc != SQLITE_OK) {
      if (zErr) setErr(&pTab->base, "%s", zErr);
      sqlite3_free(zErr);
      return rc;
    }
  }
  /* the rows after this one that keep its head need only their last
  ** field checked (checkRowKey) */
  if (p->eLast8 && nField <= 64 && p->nSplitOff == nField &&
      p->aKey[iLast].eType == KS_VAL_INT &&
      (size_t)p->aSplitOff[iLast] + 8 == p->nRow &&
      p->splitHead.n >= (size_t)p->aSplitOff[iLast] &&
      (p->mHeadDecoded | ((uint64_t)1 << iLast)) ==
          (nField == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nField) - 1)) {
    p->oFast = p->aSplitOff[iLast];
    p->iFast = iLast;
  }
  return SQLITE_OK;
}

__attribute__((always_inline)) static inline int checkRowKey(WcsCursor *p) {
  const int o = p->oFast;
  if (o >= 0 && p->nRow == (size_t)o + 8 &&
      (p->bHeadInRange || wcs_same_bytes(p->pRow, p->splitHead.a, (size_t)o)) &&
      lastInt8(p, p->pRow, (int)p->nRow, o, &p->aKey[p->iFast].i)) {
    /* the head of the row before, and eight digits */
    p->mDecoded = p->mHeadDecoded | ((uint64_t)1 << p->iFast);
    if (p->pRow != p->pKeptRow) headKept(p, p->iFast);
    return SQLITE_OK;
  }
  return checkRowKeyAll(p);
}

/* LIKE pattern zPat against zStr with case (PRAGMA case_sensitive_like
** on), as SQLite's LIKE then matches; sqlite3_strlike folds ASCII case
** always, so the pattern is matched as the GLOB it is equal to: % as *,
** _ as ?, and GLOB's own *, ? and [ as themselves ([*], [?], [[]). */
static int likeCaseMatch(wcs_buf *pGlob, const char *zPat, const char *zStr) {
  pGlob->n = 0;
  for (; *zPat; zPat++) {
    const char *z = *zPat == '%'   ? "*"
                    : *zPat == '_' ? "?"
                    : *zPat == '*' ? "[*]"
                    : *zPat == '?' ? "[?]"
                    : *zPat == '[' ? "[[]"
                                   : NULL;
    if (z ? wcs_buf_append(pGlob, z, strlen(z))
          : wcs_buf_append(pGlob, zPat, 1)) {
      return -1;
    }
  }
  if (wcs_buf_append(pGlob, "", 1)) return -1;
  return sqlite3_strglob((const char *)pGlob->a, zStr) == 0;
}

/* Whether LIKE tells case on this connection: PRAGMA case_sensitive_like
** has no form that reads it, so ask LIKE itself. */
static int likeTellsCase(sqlite3 *db) {
  sqlite3_stmt *pStmt = NULL;
  int b = 0;
  if (sqlite3_prepare_v2(db, "SELECT 'a' LIKE 'A'", -1, &pStmt, NULL) ==
          SQLITE_OK &&
      sqlite3_step(pStmt) == SQLITE_ROW) {
    b = sqlite3_column_int(pStmt, 0) == 0;
  }
  sqlite3_finalize(pStmt);
  return b;
}

/* Check the residual constraints on the current row. */
static int residualMatch(WcsCursor *p, int *pbMatch, char **pzErr) {
  int i, k;
  *pbMatch = 1;
  for (i = 0; i < p->nResidual && *pbMatch; i++) {
    Residual *r = &p->aResidual[i];
    ks_value v;
    if (r->iField == KS_FIELD_KEY) {
      v.eType = KS_VAL_BYTES;
      v.i = 0;
      v.p = p->pRow;
      v.n = (int)p->nRow;
    } else {
      int rc = decodeField(p, r->iField, pzErr);
      if (rc != SQLITE_OK) return rc;
      v = p->aKey[r->iField];
    }
    switch (r->op) {
    case KS_OP_EQ:
      *pbMatch = valueCmp(&v, &r->aVal[0]) == 0;
      break;
    case KS_OP_LT:
      *pbMatch = valueCmp(&v, &r->aVal[0]) < 0;
      break;
    case KS_OP_LE:
      *pbMatch = valueCmp(&v, &r->aVal[0]) <= 0;
      break;
    case KS_OP_GT:
      *pbMatch = valueCmp(&v, &r->aVal[0]) > 0;
      break;
    case KS_OP_GE:
      *pbMatch = valueCmp(&v, &r->aVal[0]) >= 0;
      break;
    case KS_OP_IN:
      *pbMatch = 0;
      if (r->nVal > RESIDUAL_SCAN_MAX) {
        /* sorted when the residual was made */
        int lo = 0, hi = r->nVal - 1;
        while (lo <= hi && !*pbMatch) {
          int mid = lo + (hi - lo) / 2, c = valueCmp(&v, &r->aVal[mid]);
          if (c == 0) {
            *pbMatch = 1;
          } else if (c < 0) {
            hi = mid - 1;
          } else {
            lo = mid + 1;
          }
        }
        break;
      }
      for (k = 0; k < r->nVal && !*pbMatch; k++) {
        *pbMatch = valueCmp(&v, &r->aVal[k]) == 0;
      }
      break;
    case KS_OP_PREFIX:
      *pbMatch = v.eType == KS_VAL_BYTES && v.n >= r->aVal[0].n &&
                 (r->aVal[0].n == 0 ||
                  memcmp(v.p, r->aVal[0].p, (size_t)r->aVal[0].n) == 0);
      break;
    case KS_OP_GLOB_PREFIX:
    case KS_OP_LIKE_PREFIX: {
      /* patterns are stored NUL-terminated; make the subject so too */
      p->out.n = 0;
      if (v.eType != KS_VAL_BYTES ||
          wcs_buf_append(&p->out, v.p, (size_t)v.n) ||
          wcs_buf_append(&p->out, "", 1)) {
        *pzErr = sqlite3_mprintf("out of memory");
        return SQLITE_NOMEM;
      }
      if (r->op == KS_OP_GLOB_PREFIX) {
        *pbMatch = sqlite3_strglob((const char *)r->aVal[0].p,
                                   (const char *)p->out.a) == 0;
      } else if (p->bLikeCase) {
        *pbMatch = likeCaseMatch(&p->likeGlob, (const char *)r->aVal[0].p,
                                 (const char *)p->out.a);
        if (*pbMatch < 0) {
          *pzErr = sqlite3_mprintf("out of memory");
          return SQLITE_NOMEM;
        }
      } else {
        *pbMatch = sqlite3_strlike((const char *)r->aVal[0].p,
                                   (const char *)p->out.a, 0) == 0;
      }
      break;
    }
    default:
      break;
    }
  }
  return SQLITE_OK;
}

/* Stream order comparison for the salted merge: keys without the bucket
** byte. */
static int streamCmp(WcsCursor *p, int a, int b) {
  size_t na, nb;
  const uint8_t *ka = wcs_cursor_row(p->aStream[a].pCur, &na);
  const uint8_t *kb = wcs_cursor_row(p->aStream[b].pCur, &nb);
  size_t n;
  int c;
  if (na > 0) ka++, na--;
  if (nb > 0) kb++, nb--;
  n = na < nb ? na : nb;
  c = n ? memcmp(ka, kb, n) : 0;
  if (c == 0) c = na < nb ? -1 : na > nb;
  return p->bReverse ? -c : c;
}

/* Move the stream at aHeap[i] down the heap to its place. */
static void heapDown(WcsCursor *p, int i) {
  int *a = p->aHeap, n = p->nHeap, x = a[i];
  for (;;) {
    int k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && streamCmp(p, a[k + 1], a[k]) < 0) k++;
    if (streamCmp(p, a[k], x) >= 0) break;
    a[i] = a[k];
    i = k;
  }
  a[i] = x;
}

/* Choose the stream holding the next row; 0 if all are done. Merged
** streams (a salted table's buckets in key order) are a binary heap: the
** stream that moved, on top, goes down to its place in about log2(n)
** comparisons, where a pass over them all would take n - 1 (255 for SALT
** 256). A step that moved other streams (distinctNext) has the heap built
** again. */
static int pickStream(WcsCursor *p) {
  int i;
  if (!p->bMerge) {
    while (p->iCur < p->nStream && wcs_cursor_eof(p->aStream[p->iCur].pCur)) {
      p->iCur++;
    }
    return p->iCur < p->nStream ? 1 : 0;
  }
  if (p->nHeap < 0 || p->nDistinct) {
    p->nHeap = 0;
    for (i = 0; i < p->nStream; i++) {
      if (!wcs_cursor_eof(p->aStream[i].pCur)) p->aHeap[p->nHeap++] = i;
    }
    for (i = p->nHeap / 2 - 1; i >= 0; i--)
      heapDown(p, i);
  } else if (p->nHeap > 0) {
    /* the top is the stream the step moved (iCur) */
    if (wcs_cursor_eof(p->aStream[p->iCur].pCur)) {
      p->aHeap[0] = p->aHeap[--p->nHeap];
    }
    if (p->nHeap > 1) heapDown(p, 0);
  }
  if (p->nHeap == 0) return 0;
  p->iCur = p->aHeap[0];
  return 1;
}

/* Point at the row the current stream is on (key and cells, borrowed
** until the stream moves); its key fields are decoded when first used. */
static void loadRow(WcsCursor *p) {
  wcs_cursor *c = p->aStream[p->iCur].pCur;
  p->pRow = wcs_cursor_row(c, &p->nRow);
  p->aCell = wcs_cursor_cells(c, &p->nCell);
  p->bSplit = 0;
  p->mDecoded = 0;
}

/* 1 if the na bytes at a are the nb bytes at b (qualifier names: short,
** so wcs_same_bytes' few overlapping loads beat a call to memcmp, and a
** byte loop, whose exit the CPU mispredicts). */
__attribute__((always_inline)) static inline int
sameBytes(const void *a, size_t na, const void *b, size_t nb) {
  return na == nb &&
         (na < 8 ? wcs_same_short_bytes(a, b, na)
                 : wcs_same_bytes((const uint8_t *)a, (const uint8_t *)b, na));
}

/* 1 if time t is in the _timestamp IN set (binary search). */
static int tsInHas(const WcsCursor *p, int64_t t) {
  const int64_t *a = (const int64_t *)p->tsIn.a;
  sqlite3_int64 lo = 0, hi = p->nTsIn;
  while (lo < hi) {
    sqlite3_int64 mid = lo + (hi - lo) / 2;
    if (a[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < p->nTsIn && a[lo] == t;
}

/* The first cell at or after iCell that the history view shows: of the
** qualifier asked for, at a time of the IN set, and, when latest_n is
** applied here, among the newest latest_n of its column that passed.
** iCell 0 starts a row. Cells come grouped by column, newest first. */
static int histCell(WcsCursor *p, int iCell) {
  if (iCell == 0) p->nColQual = (size_t)-1;
  for (; iCell < p->nCell; iCell++) {
    const wcs_cell *c = &p->aCell[iCell];
    if (p->bQualFilter &&
        !sameBytes(c->pQual, c->nQual, p->qual.a, p->qual.n)) {
      continue;
    }
    if (p->nTsIn >= 0 && !tsInHas(p, c->iTs)) continue;
    if (p->nLatestHere > 0) {
      if (c->iFamily != p->iColFam ||
          !sameBytes(c->pQual, c->nQual, p->pColQual, p->nColQual)) {
        p->iColFam = c->iFamily;
        p->pColQual = c->pQual;
        p->nColQual = c->nQual;
        p->nColKept = 0;
      }
      if (p->nColKept >= p->nLatestHere) continue;
      p->nColKept++;
    }
    return iCell;
  }
  return iCell;
}

static int cmpInt64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* A _timestamp IN list given whole (spec token h4): its times, sorted and
** without repeats, become p->tsIn, or its intersection with the set of an
** earlier list of the same call. Values no _timestamp equals (NULL, a
** fraction, text that is not an integer, a negative time) are dropped,
** as SQLite's own test would drop them. */
static int tsInCollect(WcsCursor *p, sqlite3_value *pList) {
  size_t nOld = p->nTsIn >= 0 ? (size_t)p->nTsIn : 0, n = 0, i, j, k;
  sqlite3_value *v = NULL;
  int64_t *a;
  int rc;
  p->tsIn.n = nOld * sizeof(int64_t);
  for (rc = sqlite3_vtab_in_first(pList, &v); rc == SQLITE_OK && v;
       rc = sqlite3_vtab_in_next(pList, &v)) {
    ks_op op = KS_OP_EQ;
    ks_value kv;
    char zNum[32];
    if (coerceOperand(KS_INT64, &op, v, &kv, zNum) != VAL_USE) continue;
    if (kv.i < 0 || kv.i == INT64_MAX) continue;
    if (wcs_buf_append(&p->tsIn, &kv.i, sizeof kv.i)) return SQLITE_NOMEM;
    n++;
  }
  if (rc != SQLITE_OK && rc != SQLITE_DONE) return rc;
  a = (int64_t *)p->tsIn.a;
  if (n > 0) qsort(a + nOld, n, sizeof(int64_t), cmpInt64);
  for (i = j = 0; i < n; i++) {
    if (j == 0 || a[nOld + j - 1] != a[nOld + i]) a[nOld + j++] = a[nOld + i];
  }
  n = j;
  if (p->nTsIn >= 0) {
    for (i = j = k = 0; i < nOld && j < n;) {
      if (a[i] < a[nOld + j]) {
        i++;
      } else if (a[i] > a[nOld + j]) {
        j++;
      } else {
        a[k++] = a[i];
        i++;
        j++;
      }
    }
    n = k;
  }
  p->nTsIn = (sqlite3_int64)n;
  return SQLITE_OK;
}

/*
** The step of a DISTINCT over the first nDistinct key fields (spec D, a
** forward scan): past every row that has the current row's values of
** those fields. Those rows are the key range [LOW(t), HIGH(t)) of the
** values t (doc/keyschema.md, "Key ranges"), and HIGH(t) is the successor
** of t's bytes as ks_key_prefix_of() gives them (DELIMITED "phone#4c41#"
** -> "phone#4c41$"; ORDERED CODE: the fields, empty ones written out, and
** 00 01 -> 00 02): one seek (wcs_cursor_seek, which keeps to the plan's
** ranges) per distinct value. Salted keys, their buckets merged into key
** order (one stream per bucket), spread those rows over the buckets:
** each bucket's stream not yet past them seeks to its bucket byte and
** HIGH(t). A row whose key does not decode is stepped over plainly;
** reading its columns reports it.
*/
static int distinctNext(WcsCursor *p) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  wcs_cursor *c = p->aStream[p->iCur].pCur;
  wcs_buf *b = &p->distinctKey;
  int rc, i, nSalt = pTab->pSchema->nSalt > 0;
  b->n = 0;
  if (nSalt && wcs_buf_append(b, "", 1)) return WCS_NOMEM; /* bucket byte */
  rc = ks_key_prefix_of(pTab->pSchema, p->pRow, (int)p->nRow, p->nDistinct, b);
  if (rc == WCS_NOMEM) return rc;
  while (rc == WCS_OK && b->n > (size_t)nSalt && b->a[b->n - 1] == 0xFF)
    b->n--;
  if (rc != WCS_OK || b->n == (size_t)nSalt) return wcs_cursor_next(c);
  b->a[b->n - 1]++;
  if (!nSalt) return wcs_cursor_seek(c, b->a, b->n);
  for (i = 0; i < p->nStream; i++) {
    wcs_cursor *ci = p->aStream[i].pCur;
    size_t nR;
    const void *pR;
    if (wcs_cursor_eof(ci)) continue;
    b->a[0] = (uint8_t)p->aStream[i].iStream;
    pR = wcs_cursor_row(ci, &nR);
    if (wcs_bytes_cmp(pR, nR, b->a, b->n) >= 0) continue; /* past them */
    rc = wcs_cursor_seek(ci, b->a, b->n);
    if (rc != WCS_OK) return rc;
  }
  return WCS_OK;
}

/* groupEnter's result for a key that does not decode: the error is set
** on the table, for SQLite. */
#define GROUP_BAD_KEY (-1)

/*
** Spec G: the rows of each group (equal values of the first nGroup key
** fields) in the stream's direction, the groups in the opposite one
** (ORDER BY id, day DESC: the ids ascending, each id's days descending,
** a forward walk of the groups and a reverse scan of each). A group's
** rows are the keys that begin with its leading bytes P (ks_key_prefix_of),
** the key range [P, P FF FF ...) of every length a row key may have; the
** keys-only group cursor, over the plan's ranges in the groups' order,
** sits on a row of the current group, and the stream is sought to the
** group's first row in its own direction. A key without the group's
** fields is an error naming it (GROUP_BAD_KEY).
**
** groupBound puts in groupSeek where both cursors seek from the current
** group: P for a forward stream (whose groups come descending: the group
** cursor to the last row below P), P FF ... for a reverse one (the first
** row past the group, the last row within it).
*/
static int groupBound(WcsCursor *p) {
  wcs_buf *b = &p->groupSeek;
  size_t n = WCS_MAX_ROW_KEY + 1;
  b->n = 0;
  if (wcs_buf_append(b, p->groupKey.a, p->groupKey.n)) return WCS_NOMEM;
  if (p->bReverse && b->n < n) {
    if (wcs_buf_reserve(b, n - b->n)) return WCS_NOMEM;
    memset(b->a + b->n, 0xFF, n - b->n);
    b->n = n;
  }
  return WCS_OK;
}

static int groupEnter(WcsCursor *p, int *pbDone) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  wcs_cursor *g = p->pGroupCur;
  wcs_buf *k = &p->groupKey;
  const void *pR;
  size_t nR;
  int rc;
  *pbDone = wcs_cursor_eof(g);
  if (*pbDone) return WCS_OK;
  pR = wcs_cursor_row(g, &nR);
  k->n = 0;
  rc = ks_key_prefix_of(pTab->pSchema, pR, (int)nR, p->nGroup, k);
  if (rc == WCS_NOMEM) return rc;
  if (rc != WCS_OK || k->n == 0) {
    /* no group to place it in (the statement names key fields, so such
    ** a key is an error wherever it is met, DESIGN §4) */
    char *zErr = NULL;
    rc = wcsCheckRowKey(pTab, pR, (int)nR, &zErr);
    setErr(&pTab->base, "%s",
           zErr ? zErr : "a row key does not match the key schema");
    sqlite3_free(zErr);
    return rc == SQLITE_NOMEM ? WCS_NOMEM : GROUP_BAD_KEY;
  }
  if (groupBound(p)) return WCS_NOMEM;
  return wcs_cursor_seek(p->aStream[0].pCur, p->groupSeek.a, p->groupSeek.n);
}

/* The group cursor to the group after the current one, in the groups'
** order, and the stream to its first row. */
static int groupNext(WcsCursor *p, int *pbDone) {
  int rc = groupBound(p);
  if (rc == WCS_OK) {
    rc = wcs_cursor_seek(p->pGroupCur, p->groupSeek.a, p->groupSeek.n);
  }
  return rc == WCS_OK ? groupEnter(p, pbDone) : rc;
}

/* Keep the stream within the current group, moving on to the next group
** that has a row the stream reads when it leaves it (a group may have
** none: a row of families the statement does not read). */
static int groupStay(WcsCursor *p, int *pbDone) {
  wcs_cursor *c = p->aStream[0].pCur;
  *pbDone = 0;
  for (;;) {
    if (!wcs_cursor_eof(c)) {
      size_t nR;
      const uint8_t *pR = wcs_cursor_row(c, &nR);
      if (nR >= p->groupKey.n &&
          memcmp(pR, p->groupKey.a, p->groupKey.n) == 0) {
        return WCS_OK;
      }
    }
    {
      int rc = groupNext(p, pbDone);
      if (rc != WCS_OK || *pbDone) return rc;
    }
  }
}

/* Open the group cursor over the ranges of the stream's options o, in the
** groups' order, keys only, and enter the first group. */
static int groupOpen(WcsCursor *p, const wcs_read_options *o) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  wcs_read_options g = *o;
  int bDone, rc;
  g.bReverse = !o->bReverse;
  g.bKeysOnly = 1;
  g.xCellFilter = NULL;
  g.pCellFilterCtx = NULL;
  g.xRowFilter = NULL;
  g.pFilterCtx = NULL;
  g.nRowLimit = 0;
  rc = wcs_cursor_open(&p->pGroupCur, pTab->pTab, wcsReadTxn(pTab->pStore), &g);
  if (rc == WCS_OK) rc = groupEnter(p, &bDone);
  return rc;
}

/*
** Move to the next row (the first one if bFirst) that passes the residual
** checks, honouring OFFSET and LIMIT. History views step cell by cell.
*/
static int cursorStep(WcsCursor *p, int bFirst) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  int rc;
  while (!p->bEof) {
    int bFound = 0;
    if (!bFirst && pTab->bHistory && p->pRow) {
      p->iCell = histCell(p, p->iCell + 1);
      bFound = p->iCell < p->nCell;
    }
    while (!bFound) {
      if (!bFirst) {
        rc = p->nDistinct ? distinctNext(p)
                          : wcs_cursor_next(p->aStream[p->iCur].pCur);
        if (rc != WCS_OK) return engErr(pTab, rc, pTab->zName);
      }
      bFirst = 0;
      if (p->nGroup) {
        int bDone;
        rc = groupStay(p, &bDone);
        if (rc == GROUP_BAD_KEY) return SQLITE_ERROR;
        if (rc != WCS_OK) return engErr(pTab, rc, pTab->zName);
        if (bDone) {
          p->bEof = 1;
          return SQLITE_OK;
        }
      } else if (pickStream(p) == 0) {
        p->bEof = 1;
        return SQLITE_OK;
      }
      loadRow(p);
      if (p->bCheckKey) {
        rc = checkRowKey(p);
        if (rc != SQLITE_OK) return rc;
      }
      if (p->nResidual) {
        int bMatch;
        char *zErr = NULL;
        rc = residualMatch(p, &bMatch, &zErr);
        if (rc != SQLITE_OK) {
          if (zErr) setErr(&pTab->base, "%s", zErr);
          sqlite3_free(zErr);
          return rc;
        }
        if (!bMatch) continue;
      }
      if (pTab->bHistory) {
        p->iCell = histCell(p, 0);
        if (p->iCell >= p->nCell) continue;
      }
      bFound = 1;
    }
    bFirst = 0;
    if (p->nSkip > 0) {
      p->nSkip--;
      continue;
    }
    if (p->nLimit == 0) {
      p->bEof = 1;
      return SQLITE_OK;
    }
    if (p->nLimit > 0) p->nLimit--;
    p->iRowid++;
    return SQLITE_OK;
  }
  return SQLITE_OK;
}

/* Make aStream hold n zeroed streams, reusing its memory across calls (a
** prepared point lookup runs xFilter once per lookup). */
static int streamsAlloc(WcsCursor *p, int n) {
  if (n > p->nStreamAlloc) {
    WcsStream *a = sqlite3_realloc64(p->aStream, sizeof(WcsStream) * (size_t)n);
    int *aH;
    if (a == NULL) return SQLITE_NOMEM;
    p->aStream = a;
    aH = sqlite3_realloc64(p->aHeap, sizeof(int) * (size_t)n);
    if (aH == NULL) return SQLITE_NOMEM;
    p->aHeap = aH;
    p->nStreamAlloc = n;
  }
  p->nHeap = -1;
  memset(p->aStream, 0, sizeof(WcsStream) * (size_t)n);
  return SQLITE_OK;
}

/* One constraint of the spec, with its values from argv. */
typedef struct SpecCons {
  int iField;
  ks_op op;
  int iArgv; /* 0-based */
  int fl;
} SpecCons;

/* A spec token whose meaning depends on its argv value: h, L or O. */
typedef struct SpecArg {
  char cTok; /* 'h', 'L' or 'O' */
  int a, b;  /* h: what, SQLite op; unused for L, O */
  int iArgv; /* 1-based, checked against the spec's argc */
} SpecArg;

/* A value filter of the spec (token v): declared column q compared by
** SQLite op with argv[iArgv] (0-based). */
typedef struct SpecVF {
  int q, op, iArgv;
} SpecVF;

/* The spec of an idxStr, parsed by specParse: all of it that does not
** depend on argv values. One sqlite3_malloc'd block holding the struct,
** its arrays and the spec text. */
struct Spec {
  int argc;          /* argc it was parsed for (argv indexes checked) */
  const char *zText; /* the spec text, in this block */
  int nSC;           /* key constraints (c tokens), <= argc */
  SpecCons *aSC;     /* [nSC] in spec order */
  int nArg;          /* h, L and O tokens */
  SpecArg *aArg;     /* [nArg] in spec order */
  int bEmpty, bReverse, bMerge, bSkip, bKeysOnly; /* E R M S K */
  int bNoColumn;  /* N: the statement reads no column of the table */
  int bCheckKey;  /* V: every row's key is checked against the schema */
  int bLatestAbsent; /* X: latest_n named but not given: an error */
  int nDistinct;  /* D: rows distinct over this many leading key fields */
  int nGroup;     /* G: ordered within groups of this many leading key
                  ** fields, the groups in the opposite order (R: the
                  ** groups descending) */
  int bRowsOfAll; /* A: the F families' cells, every row of the table */
  int nFamSel;    /* F: families in aiFam; -1 none given, -2 too many */
  int aiFam[256]; /* [nFamSel] family indexes */
  int nVF;        /* v: value filters in aVF */
  SpecVF aVF[WCS_MAX_VF];
};

/* Append the bytes of v to the arena, remembering the offset in v->p
** (turned into a pointer by fixValues once the arena stops moving). */
static int stashValue(wcs_buf *pArena, ks_value *v, int bNul) {
  size_t off = pArena->n;
  if (v->eType != KS_VAL_BYTES) return WCS_OK;
  if (wcs_buf_append(pArena, v->p, (size_t)v->n)) return WCS_NOMEM;
  if (bNul && wcs_buf_append(pArena, "", 1)) return WCS_NOMEM;
  v->p = (const uint8_t *)(uintptr_t)off;
  return WCS_OK;
}

static void fixValues(wcs_buf *pArena, ks_value *a, int n) {
  int i;
  for (i = 0; i < n; i++) {
    if (a[i].eType == KS_VAL_BYTES) {
      a[i].p = pArena->a ? pArena->a + (uintptr_t)a[i].p : (const uint8_t *)"";
    }
  }
}

/* Read a decimal integer (optional '-') at *pz, advancing past it and one
** following ','. Returns 0 if there is none. */
static int readInt(const char **pz, int *pv) {
  const char *z = *pz;
  int bNeg = 0, v = 0, n = 0;
  if (*z == '-') bNeg = 1, z++;
  while (*z >= '0' && *z <= '9' && n < 9)
    v = v * 10 + (*z++ - '0'), n++;
  if (n == 0) return 0;
  if (*z == ',') z++;
  *pz = z;
  *pv = bNeg ? -v : v;
  return 1;
}

/* Parse zSpec (format below, at xFilter) for a call with argc values into
** *ppSpec (sqlite3_malloc'd, the caller frees it). Tokens that do not parse
** or name an argv index outside 1..argc are ignored. */
static int specParse(const char *zSpec, int argc, int nFamily, Spec **ppSpec) {
  size_t nText = strlen(zSpec);
  size_t nTok = nText + 1; /* every token takes a byte */
  size_t nByte =
      sizeof(Spec) + nTok * (sizeof(SpecCons) + sizeof(SpecArg)) + nText + 1;
  Spec *pSp = sqlite3_malloc64(nByte);
  char *zCopy;
  *ppSpec = NULL;
  if (pSp == NULL) return SQLITE_NOMEM;
  memset(pSp, 0, sizeof(*pSp));
  pSp->aSC = (SpecCons *)&pSp[1];
  pSp->aArg = (SpecArg *)&pSp->aSC[nTok];
  zCopy = (char *)&pSp->aArg[nTok];
  memcpy(zCopy, zSpec, nText + 1);
  pSp->zText = zCopy;
  pSp->argc = argc;
  pSp->nFamSel = -1;
  while (*zSpec) {
    char cTok = *zSpec++;
    int a = 0, b = 0, c = 0, d = 0;
    switch (cTok) {
    case 'c':
      if (readInt(&zSpec, &a) && readInt(&zSpec, &b) && readInt(&zSpec, &c) &&
          readInt(&zSpec, &d) && c >= 1 && c <= argc && pSp->nSC < argc) {
        SpecCons *sc = &pSp->aSC[pSp->nSC++];
        sc->iField = a;
        sc->op = (ks_op)b;
        sc->iArgv = c - 1;
        sc->fl = d;
      }
      break;
    case 'h':
      if (readInt(&zSpec, &a) && readInt(&zSpec, &b) && readInt(&zSpec, &c) &&
          c >= 1 && c <= argc) {
        SpecArg *pa = &pSp->aArg[pSp->nArg++];
        pa->cTok = cTok;
        pa->a = a;
        pa->b = b;
        pa->iArgv = c;
      }
      break;
    case 'v':
      if (readInt(&zSpec, &a) && readInt(&zSpec, &b) && readInt(&zSpec, &c) &&
          c >= 1 && c <= argc && a >= 0 && pSp->nVF < WCS_MAX_VF) {
        SpecVF *vf = &pSp->aVF[pSp->nVF++];
        vf->q = a;
        vf->op = b;
        vf->iArgv = c - 1;
      }
      break;
    case 'L':
    case 'O':
      if (readInt(&zSpec, &a) && a >= 1 && a <= argc) {
        SpecArg *pa = &pSp->aArg[pSp->nArg++];
        pa->cTok = cTok;
        pa->iArgv = a;
      }
      break;
    case 'E':
      pSp->bEmpty = 1;
      break;
    case 'R':
      pSp->bReverse = 1;
      break;
    case 'M':
      pSp->bMerge = 1;
      break;
    case 'S':
      pSp->bSkip = 1;
      break;
    case 'K':
      pSp->bKeysOnly = 1;
      break;
    case 'N':
      pSp->bNoColumn = 1;
      break;
    case 'V':
      pSp->bCheckKey = 1;
      break;
    case 'X':
      pSp->bLatestAbsent = 1;
      break;
    case 'D':
      if (readInt(&zSpec, &a) && a > 0) pSp->nDistinct = a;
      break;
    case 'G':
      if (readInt(&zSpec, &a) && a > 0) pSp->nGroup = a;
      break;
    case 'A':
      pSp->bRowsOfAll = 1;
      break;
    case 'F':
      if (pSp->nFamSel < 0) pSp->nFamSel = 0;
      while (readInt(&zSpec, &a)) {
        if (a >= 0 && a < nFamily) {
          if (pSp->nFamSel >= 0 && pSp->nFamSel < 256)
            pSp->aiFam[pSp->nFamSel++] = a;
          else
            pSp->nFamSel = -2; /* too many to list: read them all */
        }
      }
      break;
    default:
      break;
    }
    while (*zSpec && *zSpec != ' ')
      zSpec++;
    while (*zSpec == ' ')
      zSpec++;
  }
  *ppSpec = pSp;
  return SQLITE_OK;
}

/*
** A table connected while another process held its store (bStoreBusy),
** while a damaged file kept the store from opening (bStoreDamaged), or
** while the store failed to open otherwise (rcStoreFailed, a full disk
** say),
** until it is repaired or restored): try to open the store again, as each
** statement on the table begins.
** The columns were declared from the CREATE VIRTUAL TABLE arguments then,
** and SQLite keeps that declaration, so the table is used only if its
** stored schema declares the very same text; otherwise the error says to
** open the database again (which connects it from the stored schema).
** Returns 1 when pTab->pTab is now usable.
*/
static int tabRetry(WcsTab *pTab) {
  WcsStore *pStore = NULL;
  wcs_table *t = NULL;
  char *zErr = NULL;
  int rc;
  if (!pTab->bStoreBusy && !pTab->bStoreDamaged && !pTab->rcStoreFailed) {
    return 0;
  }
  rc = connStore(pTab->pConn, pTab->zPath, pTab->pOwnSchema, 0,
                 sqlite3_db_readonly(pTab->pConn->db, pTab->zDb) == 1, &pStore,
                 &zErr);
  if (rc != SQLITE_OK) {
    if (zErr) { /* still held, damaged or failing: the newest reason */
      sqlite3_free(pTab->zMissing);
      pTab->zMissing = zErr;
      storeFailed(pTab, rc, pTab->zPath);
    }
    return 0;
  }
  pStore->nTab++; /* tabFree takes it back */
  pTab->pStore = pStore;
  pTab->bStoreBusy = 0;
  pTab->bStoreDamaged = 0;
  pTab->rcStoreFailed = 0;
  rc = wcs_table_open(pStore->pEng, pTab->zStoreTable, &t);
  if (rc != WCS_OK) {
    sqlite3_free(pTab->zMissing);
    pTab->zMissing = sqlite3_mprintf("%s", wcs_engine_errmsg(pStore->pEng));
    return 0;
  }
  return tabAdopt(pTab, t,
                  "the store is free now, but this connection declared the "
                  "table while it was locked, from other columns than its "
                  "stored schema has; open this database again to use it");
}

/* pTab is left without a table handle, and its schema may be that of the
** handle its caller closes next: keep a copy of its own, which planning
** still reads (every use then reports the reason, missingErr). On OOM the
** table keeps the arguments it was declared with, if any. */
static void keepSchema(WcsTab *pTab) {
  ks_schema *pCopy = NULL;
  if (pTab->pSchema == NULL || pTab->pSchema == pTab->pOwnSchema) return;
  if (ks_schema_dup(pTab->pSchema, &pCopy) == WCS_OK) {
    ks_schema_free(pTab->pOwnSchema);
    pTab->pOwnSchema = pCopy;
  }
  pTab->pSchema = pTab->pOwnSchema;
}

/*
** Make table handle t pTab's (pTab->pTab is NULL, or closed by the caller
** after this). The columns were declared to SQLite once, and SQLite keeps
** that declaration, so t is used only if its stored schema declares the
** very same text; otherwise t is closed and every use of pTab says
** zStale. Returns 1 when pTab->pTab is t.
*/
static int tabAdopt(WcsTab *pTab, wcs_table *t, const char *zStale) {
  char *zErr = NULL, *zSql = NULL;
  int rc;
  if (t == NULL) { /* no such table in the store (any more) */
    wcs_table *pNow = NULL;
    int bNew = pTab->pStore && pTab->zStoreTable &&
               wcs_table_open(pTab->pStore->pEng, pTab->zStoreTable, &pNow) ==
                   WCS_OK &&
               pNow != NULL;
    wcs_table_close(pNow);
    sqlite3_free(pTab->zMissing);
    pTab->zMissing =
        bNew ? sqlite3_mprintf("it was dropped and a new table of that name "
                               "made since this connection opened it; open "
                               "the database again to use the new table")
             : sqlite3_mprintf("the store has no table of that name (any "
                               "more)");
    pTab->pTab = NULL;
    keepSchema(pTab);
    return 0;
  }
  {
    WcsTab tmp = *pTab; /* tableSql sets column indexes: on a copy */
    rc = tableSql(pTab->pConn->db, &tmp, wcs_table_schema(t), &zSql, &zErr);
  }
  if (rc != SQLITE_OK || pTab->zDecl == NULL || strcmp(zSql, pTab->zDecl)) {
    wcs_table_close(t);
    sqlite3_free(pTab->zMissing);
    pTab->zMissing = sqlite3_mprintf("%s", zStale);
    pTab->bStale = 1;
    pTab->pTab = NULL;
    keepSchema(pTab);
    sqlite3_free(zSql);
    sqlite3_free(zErr);
    return 0;
  }
  sqlite3_free(zSql);
  /* the same text declares the same columns: pTab's column indexes hold */
  rc = tableLayout(pTab, wcs_table_schema(t));
  if (rc != SQLITE_OK) {
    wcs_table_close(t);
    pTab->pTab = NULL;
    return 0;
  }
  pTab->pTab = t;
  pTab->pSchema = wcs_table_schema(t);
  sqlite3_free(pTab->zMissing);
  pTab->zMissing = NULL;
  pTab->pConn->nGen++; /* the SQL functions' cached lookups */
  return 1;
}

/*
** A store another process writes (bFollow): this connection reads it
** through its own read-only open, as of a moment. When no cursor of the
** connection reads it and no transaction of it is open, open it again if
** the writer moved on since (a statement then reads the latest commit
** as it begins), or, with bWrite, for writing, which succeeds once the
** other process has closed it. The tables of the connection on the store
** move to the new open (tabAdopt); the old one is closed. A follower
** that cannot be opened again right now (the writer changing the store
** at every try) is kept: the next statement tries again. Returns
** SQLITE_OK, or SQLITE_BUSY with *pzErr when bWrite cannot write.
*/
static int storeFollow(WcsConn *pConn, WcsStore *s, int bWrite, char **pzErr) {
  wcs_engine *pNew = NULL, *pOld = s->pEng;
  wcs_options o = s->opt;
  char *zErr = NULL;
  WcsTab *pTab;
  int rc;
  if (!s->bFollow || s->nCursor > 0 || s->nActive > 0) {
    if (bWrite && s->bFollow) goto busy;
    return SQLITE_OK;
  }
  if (!bWrite) {
    /* commits appended to the writer's log are caught up with in place;
    ** anything more needs a new open */
    int bReopen = 0;
    if (wcs_engine_follow(pOld, &bReopen) != WCS_OK || !bReopen) {
      return SQLITE_OK;
    }
  }
  o.bFollow = !bWrite;
  rc = wcs_engine_open_path(&pNew, s->zPath, &o, &zErr);
  wcs_free(zErr);
  if (rc != WCS_OK) {
    if (bWrite) goto busy;
    return SQLITE_OK;
  }
  wcs_txn_free(s->pTxn); /* of the old open, and empty (nActive is 0) */
  s->pTxn = NULL;
  s->pEng = pNew;
  s->bFollow = !bWrite;
  for (pTab = pConn->pTab; pTab; pTab = pTab->pNextTab) {
    if (pTab->pStore != s || pTab->pTab == NULL) continue;
    tabSwap(pTab, sameTable(pTab, pNew), /* NULL: the writer dropped it */
            "the process writing the store changed the table's "
            "schema; open this database again to use it");
  }
  pConn->nGen++;
  wcs_engine_close(pOld);
  return SQLITE_OK;
busy:
  *pzErr = sqlite3_mprintf(
      "store %s is held by another process, which writes it: this "
      "connection reads it (each statement as of the latest commit when "
      "it begins) but cannot write to it until that process closes it%s",
      s->zPath,
      s->nCursor > 0 || s->nActive > 0
          ? "; finish this connection's open statements first"
          : "");
  return SQLITE_BUSY;
}

int wcsForkedErr(WcsTab *pTab) {
  return setErr(&pTab->base,
                "%s: this connection was opened before fork() by a parent "
                "process, which writes its store; open a new connection in "
                "this process (it reads the store beside the parent)",
                pTab->zName);
}

/* Whether pTab's store was opened by a parent process before fork(): the
** child must neither write it nor touch the engine's state, whose locks
** the parent's threads may have held at the fork. */
static int tabForked(const WcsTab *pTab) {
  return pTab->pStore && wcs_engine_forked(pTab->pStore->pEng);
}

/* A transaction the parent had open at the fork ends in the child
** without the engine: the child's copy of it is only forgotten. */
static void forkedTxnEnd(WcsTab *pTab) {
  if (pTab->bInTxn) {
    pTab->bInTxn = 0;
    pTab->bJoining = 0;
    if (pTab->pStore->nActive > 0) pTab->pStore->nActive--;
  }
  pTab->bCreating = 0;
}

/* The error of every use of a table whose store table could not be
** reached (pTab->pTab NULL): the reason, and what still works. */
int wcsMissingErr(WcsTab *pTab) {
  if (pTab->bStoreBusy) {
    /* the table is fine: dropping it is the last thing to suggest */
    setErr(&pTab->base,
           "%s: %s; the table is intact: the next statement tries again, "
           "once the store is closed there",
           pTab->zName, pTab->zMissing);
    return SQLITE_BUSY;
  }
  if (pTab->bStoreDamaged) {
    /* nor here: the data may well be there, once the store is repaired */
    setErr(&pTab->base,
           "%s: %s; the table and the store's files are left as they are: "
           "repair the store or restore it from a backup, and the next "
           "statement opens it again",
           pTab->zName, pTab->zMissing);
    return SQLITE_CORRUPT;
  }
  if (pTab->rcStoreFailed) {
    /* nor here: a full disk, an I/O error or a file's permissions may
    ** pass */
    setErr(&pTab->base,
           "%s: %s; the table is intact: the next statement tries to open "
           "the store again%s",
           pTab->zName, pTab->zMissing,
           (pTab->rcStoreFailed & 0xff) == SQLITE_PERM
               ? " (let this user read and write the store's files)"
               : "");
    return pTab->rcStoreFailed;
  }
  if (pTab->bStale) {
    return setErr(&pTab->base, "%s: %s", pTab->zName, pTab->zMissing);
  }
  return setErr(
      &pTab->base,
      "%s: store table '%s' is missing (%s); DROP TABLE %s "
      "removes this declaration",
      pTab->zName, pTab->zStoreTable,
      pTab->zMissing ? pTab->zMissing
      : pTab->pStore && pTab->pStore->bFollow
          /* a follower does not look for files its manifest does not
          ** name (a writer may be adding them): a manifest that lost
          ** edits may look like this, which a writable open reports */
          ? "its store was moved or the table dropped, or its manifest lost "
            "edits, which a connection that may write the store reports"
          : "its store was moved or the table dropped",
      pTab->zName);
}

static int cellFilter(void *pCtx, const wcs_cell *aCell, int nCell);

/* Value v with its bytes, if any, at their place in the arena (stashValue
** keeps offsets until the arena stops growing), v itself unchanged. */
static ks_value arenaValue(const wcs_buf *pArena, const ks_value *v) {
  ks_value r = *v;
  if (r.eType == KS_VAL_BYTES) {
    r.p = pArena->a ? pArena->a + (uintptr_t)v->p : (const uint8_t *)"";
  }
  return r;
}

/*
** The common scans without the planner, in a key DELIMITED by one byte, in
** ORDERED CODE or of a single field, without SALT, every term captured
** exactly:
**
** - a range: = on every key field but the last, and a closed range (>=
**   or >, and <= or <) on the last one, an integer in DECIMAL(n),
**   REVERSED DECIMAL(n), ORDERED CODE or BIG ENDIAN ("... AND day BETWEEN
**   ? AND ?"). Each encodes the integers it holds in their order (REVERSED:
**   the opposite one) and every key with the same head sorts as its last
**   field's encoding does, so the rows are those from the key with the
**   lower value to the key with the upper one, both encoded as a point
**   lookup's (REVERSED: from the upper to the lower): *pbDirect 1,
**   pointKey .. rangeEnd, both included; 2 when the range is empty.
** - a prefix: = on the first k fields, k below the number of fields, and
**   nothing else ("device = ? AND id = ?"). The rows are the keys that
**   begin with those fields and a separator after each (ks_key_prefix):
**   *pbDirect 3, from pointKey (included) to rangeEnd (excluded), the
**   prefix's successor (wcs_successor_len). Delimited fields hold no byte
**   at or below the delimiter, and an ORDERED CODE field is escaped so
**   that its first 00 01 is its end, so a key that begins with the prefix
**   has exactly those leading fields. Not in ORDERED CODE when every later
**   field may be empty: a key may then end right after the prefix's
**   fields, whose bytes have no separator to end them (KS_JOIN_PREFIX).
**
** *pbDirect 0 for anything else, or a value that does not encode among
** it (a DECIMAL bound beyond its digits, a negative BIG ENDIAN one), for
** the planner, which clamps such a bound.
*/
static int directRange(WcsCursor *p, const SpecCons *aSC, ks_value **apVal,
                       const int *anVal, int nSC, int *pbDirect) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  const ks_schema *s = pTab->pSchema;
  const int nField = s->nField, last = nField - 1;
  ks_value aVal[KS_MAX_FIELDS];
  uint64_t mSeen = 0;
  int i, iLo = -1, iHi = -1, rc;
  sqlite3_int64 lo, hi;
  *pbDirect = 0;
  if (nField < 1 || nField > 64 || nSC < 1 || nSC > nField + 1 ||
      s->nSalt > 0 ||
      (s->eStruct == KS_STRUCT_DELIMITED
           ? s->nDelim != 1
           : s->eStruct != KS_STRUCT_SINGLETON &&
                 s->eStruct != KS_STRUCT_ORDERED_CODE)) {
    return SQLITE_OK;
  }
  for (i = 0; i < nSC; i++) {
    int f = aSC[i].iField;
    ks_op op = aSC[i].op;
    if (anVal[i] != 1 || f < 0 || f > last) return SQLITE_OK;
    if (f < last) {
      if (op != KS_OP_EQ || (mSeen >> f) & 1) return SQLITE_OK;
      mSeen |= (uint64_t)1 << f;
      aVal[f] = arenaValue(&p->arena, &apVal[i][0]);
    } else if (apVal[i][0].eType != KS_VAL_INT) {
      return SQLITE_OK;
    } else if ((op == KS_OP_GE || op == KS_OP_GT) && iLo < 0) {
      iLo = i;
    } else if ((op == KS_OP_LE || op == KS_OP_LT) && iHi < 0) {
      iHi = i;
    } else {
      return SQLITE_OK;
    }
  }
  if (iLo < 0 && iHi < 0 && nSC < nField && mSeen == ((uint64_t)1 << nSC) - 1) {
    /* a prefix of nSC fields */
    size_t n;
    if (s->eStruct == KS_STRUCT_ORDERED_CODE) {
      /* when every later field may be empty (STRING, BYTES), a key may
      ** end right after these fields, and its prefix bytes end without
      ** the separator: ("a") begins ("ab") too. The planner bounds such a
      ** prefix exactly (KS_JOIN_LOW .. KS_JOIN_HIGH). */
      int bAllMayBeEmpty = 1;
      for (i = nSC; i < nField; i++) {
        if (s->aField[i].eType != KS_STRING && s->aField[i].eType != KS_BYTES) {
          bAllMayBeEmpty = 0;
        }
      }
      if (bAllMayBeEmpty) return SQLITE_OK;
    }
    p->pointKey.n = 0;
    rc = ks_key_prefix(s, aVal, nSC, &p->pointKey, NULL);
    if (rc == WCS_NOMEM) return SQLITE_NOMEM;
    if (rc != WCS_OK) return SQLITE_OK;
    n = wcs_successor_len(p->pointKey.a, p->pointKey.n);
    if (n == 0) return SQLITE_OK;
    p->rangeEnd.n = 0;
    if (wcs_buf_append(&p->rangeEnd, p->pointKey.a, n)) return SQLITE_NOMEM;
    p->rangeEnd.a[n - 1]++;
    *pbDirect = 3;
    return SQLITE_OK;
  }
  if (iLo < 0 || iHi < 0 || nSC != nField + 1 ||
      mSeen != ((uint64_t)1 << last) - 1 ||
      (s->aField[last].eEnc != KS_ENC_DECIMAL &&
       s->aField[last].eEnc != KS_ENC_REVERSED_DECIMAL &&
       s->aField[last].eEnc != KS_ENC_ORDERED_CODE &&
       s->aField[last].eEnc != KS_ENC_BIG_ENDIAN)) {
    return SQLITE_OK;
  }
  lo = apVal[iLo][0].i;
  hi = apVal[iHi][0].i;
  if ((aSC[iLo].op == KS_OP_GT && lo == INT64_MAX) ||
      (aSC[iHi].op == KS_OP_LT && hi == INT64_MIN)) {
    return SQLITE_OK;
  }
  if (aSC[iLo].op == KS_OP_GT) lo++;
  if (aSC[iHi].op == KS_OP_LT) hi--;
  if (lo > hi) {
    *pbDirect = 2;
    return SQLITE_OK;
  }
  if (s->aField[last].eEnc == KS_ENC_REVERSED_DECIMAL) {
    sqlite3_int64 t = lo;
    lo = hi;
    hi = t;
  }
  aVal[last].eType = KS_VAL_INT;
  aVal[last].p = NULL;
  aVal[last].n = 0;
  aVal[last].i = lo;
  p->pointKey.n = 0;
  rc = ks_key_encode(s, aVal, &p->pointKey, NULL);
  if (rc == WCS_OK && p->pointKey.n > 0) {
    aVal[last].i = hi;
    p->rangeEnd.n = 0;
    rc = ks_key_encode(s, aVal, &p->rangeEnd, NULL);
    if (rc == WCS_OK && p->rangeEnd.n > 0) *pbDirect = 1;
  }
  return rc == WCS_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
}

/*
** xFilter: decode the spec in idxStr, turn argv into key values, make the
** plan with them, open one engine cursor per stream and move to the first
** row. The encoding (written by wcsBestIndex, documented there in full):
**
**   idxNum   ks_plan_kind, for EXPLAIN only
**   idxStr   "<words>\0<spec>"; spec tokens:
**              c<f>,<op>,<a>,<fl>  key field f (-1 = _key) <op> argv[a-1];
**                                  fl 1 = omitted, 2 = IN list all at once
**              h<what>,<op>,<a>    history family/qualifier/latest_n/_timestamp
**              L<a> O<a>           LIMIT / OFFSET in argv[a-1]
**              E R M S K F<i,..>   empty, reverse, merge buckets, skip scans
**                                  allowed, keys only, families to read
**              D<k>                DISTINCT over the first k key fields:
**                                  one row per value of them
**
** The spec is parsed once and kept with the cursor while the same spec
** comes back with the same argc (specParse); only the argv values are
** read on every call.
**
** Every argv value is converted as SQLite's comparison affinity would
** (coerceOperand); a comparison that holds for every row is dropped, one
** that holds for none makes the scan empty. Omitted constraints the plan
** made with real values does not capture exactly are checked here
** (residual), so an omit promised by xBestIndex always holds.
*/
static int wcsFilter(sqlite3_vtab_cursor *pCursor, int idxNum,
                     const char *idxStr, int argc, sqlite3_value **argv) {
  WcsCursor *p = (WcsCursor *)pCursor;
  WcsTab *pTab = (WcsTab *)pCursor->pVtab;
  const ks_schema *s = pTab->pSchema;
  const char *zSpec;
  const Spec *pSp;
  SpecCons *aSC = NULL;
  ks_constraint *aKC = NULL;
  ks_value **apVal = NULL; /* per constraint: its values */
  int *anVal = NULL;
  int *abHeap = NULL;         /* per constraint: apVal[i] is sqlite3_malloc'd */
  ks_value *aOne = NULL;      /* storage of single values */
  ks_value *aFieldVal = NULL; /* point lookups: the value of each field */
  int bPoint = 0;             /* the key is pointKey, no plan was made */
  int bDirect = 0; /* the keys are pointKey .. rangeEnd, no plan was made */
  int nSC = 0, i, rc = SQLITE_OK, bEmpty = 0, bSkip = 0, bKeysOnly = 0;
  int nFamSel;
  const int *aiFam;
  const char *azFam[256];
  wcs_read_options opt;
  int64_t iMinTs = 0, iMaxTs = INT64_MAX, iAsOf = -1;
  int nVersions = pTab->bHistory ? 0 : 1;
  int iFamilyEq = -2; /* history: family = (index), -1 unknown family */
  char *zErr = NULL;
  (void)idxNum;

  cursorReset(p);
  rc = lostReport(pTab);
  if (rc != SQLITE_OK) return rc;
  awaitCommits(pTab, 0);
  p->nLimit = -1;
  p->nSkip = 0;
  p->bReverse = 0;
  p->bMerge = 0;
  p->iCur = 0;
  if (pTab->pTab == NULL && !tabRetry(pTab)) return wcsMissingErr(pTab);
  if (tabForked(pTab)) {
    return wcsForkedErr(pTab);
  }
  /* a store that could not be opened at xOpen and is now: count the
  ** cursor, as xOpen would have (its close then ends its read moment) */
  if (p->pCounted == NULL) cursorCount(pTab, p);
  /* xUpdate runs only inside xBegin (an UPDATE's VBegin comes before its
  ** scan), so without a write transaction nothing asks for nochange */
  p->bMayUpdate = wcsReadTxn(pTab->pStore) != NULL;
  p->eLast8 = 0;
  if (s->nField > 0 && s->aField[s->nField - 1].nWidth == 8 &&
      (s->aField[s->nField - 1].eEnc == KS_ENC_DECIMAL ||
       s->aField[s->nField - 1].eEnc == KS_ENC_REVERSED_DECIMAL) &&
      ks_key_last_int_fits(s, 8, 0)) {
    p->eLast8 = s->aField[s->nField - 1].eEnc == KS_ENC_DECIMAL ? 1 : 2;
  }
  zSpec = idxStr ? idxStr + strlen(idxStr) + 1 : "";
  if (p->pSpec == NULL || p->pSpec->argc != argc ||
      strcmp(p->pSpec->zText, zSpec) != 0) {
    Spec *pNew;
    rc = specParse(zSpec, argc, s->nFamily, &pNew);
    if (rc != SQLITE_OK) return rc;
    sqlite3_free(p->pSpec);
    p->pSpec = pNew;
  }
  pSp = p->pSpec;
  {
    /* one scratch block for the per-call arrays, reused across calls */
    size_t n1 = (size_t)(argc + 1);
    size_t nNeed =
        n1 * (sizeof(SpecCons) + sizeof(ks_constraint) + sizeof(ks_value *) +
              sizeof(ks_value) + 2 * sizeof(int)) +
        (size_t)(pTab->nField + 1) * sizeof(ks_value);
    uint8_t *pS;
    if (nNeed > p->nScratch) {
      void *pNew = sqlite3_realloc64(p->pScratch, nNeed);
      if (pNew == NULL) return SQLITE_NOMEM;
      p->pScratch = pNew;
      p->nScratch = nNeed;
    }
    pS = (uint8_t *)p->pScratch;
    aOne = (ks_value *)pS;
    pS += n1 * sizeof(ks_value);
    aFieldVal = (ks_value *)pS;
    pS += (size_t)(pTab->nField + 1) * sizeof(ks_value);
    aKC = (ks_constraint *)pS;
    pS += n1 * sizeof(ks_constraint);
    apVal = (ks_value **)pS;
    pS += n1 * sizeof(ks_value *);
    aSC = (SpecCons *)pS;
    pS += n1 * sizeof(SpecCons);
    anVal = (int *)pS;
    pS += n1 * sizeof(int);
    abHeap = (int *)pS;
    memset(apVal, 0, sizeof(ks_value *) * n1);
    memset(abHeap, 0, sizeof(int) * n1);
  }

  /* 1. The spec: its constraints are copied, as their ops may be
  ** tightened by this call's values; then the tokens read from argv. */
  nSC = pSp->nSC;
  memcpy(aSC, pSp->aSC, sizeof(SpecCons) * (size_t)nSC);
  bEmpty = pSp->bEmpty;
  /* (G: R orders the groups; the stream reads each the other way) */
  p->bReverse = pSp->bReverse ^ (pSp->nGroup > 0);
  p->nGroup = pSp->nGroup < s->nField ? pSp->nGroup : 0;
  p->bMerge = pSp->bMerge;
  bSkip = pSp->bSkip;
  bKeysOnly = pSp->bKeysOnly;
  p->bCheckKey = pSp->bCheckKey;
  if (pSp->bLatestAbsent) {
    return setErr(&pTab->base,
                  "%s: latest_n is named but not given to the view: give it "
                  "as latest_n = N (or IN) joined to the other terms by AND, "
                  "not inside an OR, and not compared otherwise; it is an "
                  "argument (at most N newest cells per column), not a "
                  "value of the cells",
                  pTab->zName);
  }
  nFamSel = pSp->nFamSel;
  aiFam = pSp->aiFam;
  for (i = 0; i < pSp->nArg; i++) {
    const SpecArg *pa = &pSp->aArg[i];
    int a = pa->a, b = pa->b;
    if (pa->cTok == 'L') {
      sqlite3_int64 n = sqlite3_value_int64(argv[pa->iArgv - 1]);
      p->nLimit = n < 0 ? -1 : n;
    } else if (pa->cTok == 'O') {
      sqlite3_int64 n = sqlite3_value_int64(argv[pa->iArgv - 1]);
      p->nSkip = n < 0 ? 0 : n;
    } else {
      sqlite3_value *v = argv[pa->iArgv - 1];
      if (a == 0) {
        /* TEXT affinity: numbers compare as text, a BLOB never equals
        ** (its type asked before sqlite3_value_text() makes it TEXT) */
        const int bBlob = sqlite3_value_type(v) == SQLITE_BLOB;
        const char *zF = (const char *)sqlite3_value_text(v);
        iFamilyEq = zF && !bBlob ? ks_schema_family(s, zF) : -1;
        if (iFamilyEq < 0 || strcmp(zF, s->aFamily[iFamilyEq].zName) != 0) {
          bEmpty = 1;
        }
      } else if (a == 1) {
        int t = sqlite3_value_type(v);
        if (t == SQLITE_NULL) {
          bEmpty = 1;
        } else {
          const void *pQ =
              t == SQLITE_BLOB ? sqlite3_value_blob(v) : sqlite3_value_text(v);
          int nQ = sqlite3_value_bytes(v);
          p->qual.n = 0;
          if (wcs_buf_append(&p->qual, pQ, (size_t)nQ)) {
            rc = SQLITE_NOMEM;
            goto done;
          }
          p->bQualFilter = 1;
          /* TEXT = BLOB never holds in SQLite; qualifiers come back as
          ** TEXT when valid UTF-8, else BLOB */
          if ((t == SQLITE_BLOB) == (ks_utf8_valid(p->qual.a, nQ, NULL) != 0)) {
            bEmpty = 1;
          }
        }
      } else if (a == 2) {
        /* the column's INTEGER affinity: '3' and 3.0 are 3 */
        int t = sqlite3_value_numeric_type(v);
        sqlite3_int64 n = sqlite3_value_int64(v);
        if (t == SQLITE_FLOAT && sqlite3_value_double(v) == (double)n) {
          t = SQLITE_INTEGER;
        }
        if (t != SQLITE_INTEGER || n < 1) {
          rc = setErr(&pTab->base, "%s: latest_n must be a positive integer",
                      pTab->zName);
          goto done;
        }
        /* no column holds more than INT_MAX versions: a larger n keeps
        ** them all, as INT_MAX does (the column still reads back n) */
        nVersions = n > INT_MAX ? INT_MAX : (int)n;
        p->bLatest = 1;
        p->iLatest = n;
      } else if (a == 4) {
        rc = tsInCollect(p, v);
        if (rc != SQLITE_OK) goto done;
      } else if (a == 3) {
        ks_op op = b == SQLITE_INDEX_CONSTRAINT_LT   ? KS_OP_LT
                   : b == SQLITE_INDEX_CONSTRAINT_LE ? KS_OP_LE
                   : b == SQLITE_INDEX_CONSTRAINT_GT ? KS_OP_GT
                   : b == SQLITE_INDEX_CONSTRAINT_GE ? KS_OP_GE
                                                     : KS_OP_EQ;
        ks_value kv;
        char zNum[32];
        int t = coerceOperand(KS_INT64, &op, v, &kv, zNum);
        if (t == VAL_FALSE) {
          bEmpty = 1;
        } else if (t == VAL_USE) {
          int64_t x = kv.i;
          switch (op) {
          case KS_OP_EQ:
            if (x < 0 || x == INT64_MAX)
              bEmpty = 1;
            else {
              if (x > iMinTs) iMinTs = x;
              if (x + 1 < iMaxTs) iMaxTs = x + 1;
            }
            break;
          case KS_OP_GT:
            if (x == INT64_MAX)
              bEmpty = 1;
            else if (x + 1 > iMinTs)
              iMinTs = x + 1;
            break;
          case KS_OP_GE:
            if (x > iMinTs) iMinTs = x;
            break;
          case KS_OP_LT:
            if (x < iMaxTs) iMaxTs = x;
            break;
          case KS_OP_LE:
            if (x < 0)
              bEmpty = 1;
            else if (iAsOf < 0 || x < iAsOf)
              iAsOf = x;
            break;
          default:
            break;
          }
        }
      }
    }
  }
  if (p->nTsIn == 0) bEmpty = 1;
  if (p->nTsIn > 0) {
    /* the engine reads the list's span; histCell keeps its times, then
    ** takes latest_n (time filters come before latest-N) */
    const int64_t *aTs = (const int64_t *)p->tsIn.a;
    if (aTs[0] > iMinTs) iMinTs = aTs[0];
    if (aTs[p->nTsIn - 1] + 1 < iMaxTs) iMaxTs = aTs[p->nTsIn - 1] + 1;
    if (p->bLatest) {
      p->nLatestHere = nVersions;
      nVersions = 0;
    }
  }
  if (p->nLimit == 0) bEmpty = 1;
  if (iMinTs >= iMaxTs) bEmpty = 1;

  /* 2. Values. */
  p->arena.n = 0;
  for (i = 0; i < nSC && !bEmpty; i++) {
    SpecCons *sc = &aSC[i];
    int eType = sc->iField == KS_FIELD_KEY ? FT_KEY
                : sc->iField >= 0 && sc->iField < s->nField
                    ? (int)s->aField[sc->iField].eType
                    : FT_KEY;
    int bNul = sc->op == KS_OP_GLOB_PREFIX || sc->op == KS_OP_LIKE_PREFIX;
    sqlite3_value *pList = argv[sc->iArgv];
    if (sc->fl & 2) {
      /* an IN list, all at once */
      sqlite3_value *pV = NULL;
      int nAlloc = 0, n = 0, rc2;
      ks_value *a = NULL;
      for (rc2 = sqlite3_vtab_in_first(pList, &pV); rc2 == SQLITE_OK && pV;
           rc2 = sqlite3_vtab_in_next(pList, &pV)) {
        ks_op op = KS_OP_EQ;
        char zNum[32];
        ks_value kv;
        int t = coerceOperand(eType, &op, pV, &kv, zNum);
        if (t != VAL_USE) continue;
        if (n >= nAlloc) {
          int nNew = nAlloc ? nAlloc * 2 : 16;
          ks_value *aNew =
              sqlite3_realloc64(a, sizeof(ks_value) * (size_t)nNew);
          if (aNew == NULL) {
            sqlite3_free(a);
            rc = SQLITE_NOMEM;
            goto done;
          }
          a = aNew;
          nAlloc = nNew;
        }
        a[n] = kv;
        if (stashValue(&p->arena, &a[n], 0)) {
          sqlite3_free(a);
          rc = SQLITE_NOMEM;
          goto done;
        }
        n++;
      }
      if (rc2 != SQLITE_OK && rc2 != SQLITE_DONE) {
        sqlite3_free(a);
        rc = rc2;
        goto done;
      }
      if (n == 0) bEmpty = 1;
      apVal[i] = a;
      abHeap[i] = 1;
      anVal[i] = n;
    } else {
      ks_op op = sc->op;
      char zNum[32];
      ks_value kv;
      int t = coerceOperand(eType, &op, pList, &kv, zNum);
      if (t == VAL_FALSE) {
        bEmpty = 1;
        anVal[i] = 0;
        continue;
      }
      if (t == VAL_TRUE) {
        anVal[i] = -1; /* drop it */
        continue;
      }
      sc->op = op;
      apVal[i] = &aOne[i];
      apVal[i][0] = kv;
      anVal[i] = 1;
      if (stashValue(&p->arena, &apVal[i][0], bNul)) {
        rc = SQLITE_NOMEM;
        goto done;
      }
    }
  }
  if (bEmpty) {
    p->bEof = 1;
    goto done;
  }
  /* the value filters (v): a number for a number column, a TEXT for a
  ** STRING one; a value of any other type (TEXT for a number column,
  ** which SQLite may compare after an affinity, a BLOB, NULL) is left to
  ** SQLite's check alone */
  for (i = 0; i < pSp->nVF && !pTab->bHistory && pSp->nDistinct == 0; i++) {
    const SpecVF *vf = &pSp->aVF[i];
    sqlite3_value *v = argv[vf->iArgv];
    int t = sqlite3_value_type(v);
    ValFilter *f = &p->aVF[p->nVF];
    if (vf->q >= s->nQual) continue;
    f->q = vf->q;
    f->mAccept = vf->op == SQLITE_INDEX_CONSTRAINT_EQ   ? 2
                 : vf->op == SQLITE_INDEX_CONSTRAINT_NE ? 5
                 : vf->op == SQLITE_INDEX_CONSTRAINT_LT ? 1
                 : vf->op == SQLITE_INDEX_CONSTRAINT_LE ? 3
                 : vf->op == SQLITE_INDEX_CONSTRAINT_GT ? 4
                 : vf->op == SQLITE_INDEX_CONSTRAINT_GE ? 6
                                                        : 7;
    f->i = 0;
    f->r = 0;
    if (!valueIsNumber(s, vf->q)) {
      const unsigned char *z;
      if (t != SQLITE_TEXT || vf->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
      z = sqlite3_value_text(v);
      f->eVal = 0;
      f->oText = p->vfText.n;
      f->nText = (size_t)sqlite3_value_bytes(v);
      if (z == NULL ||
          (f->nText > 0 && wcs_buf_append(&p->vfText, z, f->nText))) {
        rc = SQLITE_NOMEM;
        goto done;
      }
    } else if (t == SQLITE_INTEGER) {
      f->eVal = WCSV_INT;
      f->i = sqlite3_value_int64(v);
    } else if (t == SQLITE_FLOAT) {
      f->eVal = WCSV_REAL;
      f->r = sqlite3_value_double(v);
      if (isnan(f->r)) continue;
    } else {
      continue;
    }
    p->nVF++;
  }

  /* 3. The plan, with the values. Equalities on every key field need no
  ** planner: the key is encoded directly (the common prepared lookup). A
  ** key that cannot be encoded (a value out of range, a delimiter byte)
  ** is a key no row has. */
  if (pTab->nField > 0 && nSC == pTab->nField && pTab->nField <= 64) {
    uint64_t mSeen = 0;
    bPoint = 1;
    for (i = 0; i < nSC && bPoint; i++) {
      int f = aSC[i].iField;
      if (anVal[i] != 1 || aSC[i].op != KS_OP_EQ || f < 0 ||
          f >= pTab->nField || (mSeen >> f) & 1) {
        bPoint = 0;
      } else {
        mSeen |= (uint64_t)1 << f;
      }
    }
    if (bPoint) {
      int rc2;
      for (i = 0; i < nSC; i++) {
        fixValues(&p->arena, apVal[i], 1);
        aFieldVal[aSC[i].iField] = apVal[i][0];
      }
      p->pointKey.n = 0;
      rc2 = ks_key_encode(s, aFieldVal, &p->pointKey, NULL);
      if (rc2 == WCS_NOMEM) {
        rc = SQLITE_NOMEM;
        goto done;
      }
      if (rc2 != WCS_OK || p->pointKey.n == 0) {
        p->bEof = 1; /* no row has this key (keys are never empty) */
        goto done;
      }
      p->bCheckKey = 0; /* the one row's key is this valid encoding */
    }
  }
  if (!bPoint && !pTab->bHistory) {
    rc = directRange(p, aSC, apVal, anVal, nSC, &bDirect);
    if (rc != SQLITE_OK) goto done;
    if (bDirect == 2) {
      p->bEof = 1; /* an empty range */
      goto done;
    }
    /* every key in a range of one head (= on every field but the last,
    ** and a range or nothing on the last) begins with that head's bytes,
    ** which its bounds share: checkRowKey need not compare them */
    p->bHeadInRange =
        bDirect == 1 || (bDirect == 3 && nSC == pTab->pSchema->nField - 1);
  }
  if (!bPoint && !bDirect) {
    int nKC = 0;
    ks_plan_opts opts;
    memset(&opts, 0, sizeof(opts));
    opts.bAllowSkip = bSkip;
    for (i = 0; i < nSC; i++) {
      if (anVal[i] < 0) continue;
      fixValues(&p->arena, apVal[i], anVal[i]);
      memset(&aKC[nKC], 0, sizeof(aKC[nKC]));
      aKC[nKC].iField = aSC[i].iField;
      aKC[nKC].op = aSC[i].op;
      aKC[nKC].aVal = apVal[i];
      aKC[nKC].nVal = anVal[i];
      nKC++;
    }
    rc = ks_plan_make(s, aKC, nKC, &opts, &p->pPlan, &zErr);
    if (rc != WCS_OK) {
      setErr(&pTab->base, "%s: %s", pTab->zName, zErr ? zErr : wcs_errstr(rc));
      wcs_free(zErr);
      rc = wcsToSqlite(rc);
      goto done;
    }
    if (p->pPlan->eKind == KS_PLAN_EMPTY) {
      p->bEof = 1;
      goto done;
    }
    if ((p->pPlan->eKind == KS_PLAN_POINT ||
         p->pPlan->eKind == KS_PLAN_MULTI_POINT) &&
        !p->pPlan->bKeyColumn) {
      /* each row's key is one the plan encoded from field values (not
      ** _key's bytes, which are any key's) */
      p->bCheckKey = 0;
    }
    /* residual checks for promised constraints the plan did not capture */
    {
      int k = 0;
      for (i = 0; i < nSC; i++) {
        if (anVal[i] < 0) continue;
        if ((aSC[i].fl & 1) && !aKC[k].bExact) {
          Residual *pNew = sqlite3_realloc64(
              p->aResidual, sizeof(Residual) * (size_t)(p->nResidual + 1));
          Residual *r;
          if (pNew == NULL) {
            rc = SQLITE_NOMEM;
            goto done;
          }
          p->aResidual = pNew;
          r = &p->aResidual[p->nResidual++];
          r->iField = aSC[i].iField;
          r->op = aSC[i].op;
          if (r->op == KS_OP_LIKE_PREFIX) {
            p->bLikeCase = likeTellsCase(pTab->pConn->db);
          }
          r->nVal = anVal[i];
          if (abHeap[i]) {
            r->aVal = apVal[i];
            apVal[i] = NULL; /* now owned by the residual */
          } else {
            r->aVal = sqlite3_malloc(sizeof(ks_value));
            if (r->aVal == NULL) {
              p->nResidual--;
              rc = SQLITE_NOMEM;
              goto done;
            }
            r->aVal[0] = apVal[i][0];
          }
          if (r->op == KS_OP_IN && r->nVal > RESIDUAL_SCAN_MAX) {
            /* checked by binary search (residualMatch): a list past the
            ** plan's cap on points, up to SQLite's whole IN list, is read
            ** as one range whose every row is checked */
            qsort(r->aVal, (size_t)r->nVal, sizeof(ks_value), valueCmpQ);
          }
        }
        k++;
      }
    }
  }

  /* 4. Read options and streams. */
  wcs_read_options_init(&opt);
  rc = readSnap(pTab, &opt.pSnap);
  if (rc != SQLITE_OK) goto done;
  {
    WcsStore *st = pTab->pStore;
    if (st->bMark && st->pMarkTab != pTab && wcsReadTxn(st) &&
        wcs_table_id(pTab->pTab) == st->iMarkTable &&
        markCurrent(st, pTab->pConn->db)) {
      /* started again while a statement writes the table through another
      ** declaration: the writes as of before that statement (markWrite);
      ** counted as frozen, so that a rollback thaws it (thawReaders) */
      rc = markMoment(st, pTab, &opt.pMoment);
      if (rc != SQLITE_OK) goto done;
      p->bFrozen = 1;
    }
  }
  opt.bReverse = p->bReverse;
  opt.nVersions = nVersions;
  opt.iMinTs = iMinTs;
  opt.iMaxTs = iMaxTs;
  opt.iAsOf = iAsOf;
  if (p->nVF > 0 && !bKeysOnly) {
    /* the engine passes over the rows the filters rule out (DISTINCT
    ** steps, which seek past the rows after each one read, are of plans
    ** that read key fields only: none has a filter) */
    opt.xCellFilter = cellFilter;
    opt.pCellFilterCtx = p;
  }
  if (pTab->bHistory) {
    if (iFamilyEq >= 0) {
      azFam[0] = s->aFamily[iFamilyEq].zName;
      opt.azFamily = azFam;
      opt.nFamily = 1;
    }
  } else if (bKeysOnly) {
    opt.bKeysOnly = 1;
  } else if (nFamSel > 0) {
    for (i = 0; i < nFamSel; i++)
      azFam[i] = s->aFamily[aiFam[i]].zName;
    opt.azFamily = azFam;
    opt.nFamily = nFamSel;
    opt.bRowsOfAll = pSp->bRowsOfAll;
  }
  if (bPoint || bDirect) {
    wcs_key_range r;
    memset(&r, 0, sizeof(r));
    r.pStart = r.pEnd = p->pointKey.a;
    r.nStart = r.nEnd = p->pointKey.n;
    r.bEndIncl = 1;
    if (bDirect) {
      r.pEnd = p->rangeEnd.a;
      r.nEnd = p->rangeEnd.n;
      r.bEndIncl = bDirect == 1;
      if (p->nLimit > 0 && p->nResidual == 0) {
        /* in uint64_t: LIMIT and OFFSET may each be up to 2^63 - 1 */
        opt.nRowLimit = (uint64_t)p->nLimit + (uint64_t)p->nSkip;
      }
    }
    opt.aRange = &r;
    opt.nRange = 1;
    p->bMerge = 0;
    rc = streamsAlloc(p, 1);
    if (rc != SQLITE_OK) goto done;
    p->aStream[0].pCsr = p;
    p->aStream[0].iStream = -1;
    p->nStream = 1;
    rc = wcs_cursor_open(&p->aStream[0].pCur, pTab->pTab,
                         wcsReadTxn(pTab->pStore), &opt);
    if (rc != WCS_OK) {
      p->nStream = 0;
      rc = engErr(pTab, rc, pTab->zName);
      goto done;
    }
    if (p->nGroup) {
      rc = groupOpen(p, &opt);
      if (rc != WCS_OK) {
        rc = rc == GROUP_BAD_KEY ? SQLITE_ERROR : engErr(pTab, rc, pTab->zName);
        goto done;
      }
    }
  } else {
    const ks_plan *pl = p->pPlan;
    int nBucket = pl->nBucket, bByBucket = nBucket > 0;
    wcs_key_range *aR =
        sqlite3_malloc64(sizeof(wcs_key_range) * (size_t)(pl->nRange + 1));
    if (aR == NULL) {
      rc = SQLITE_NOMEM;
      goto done;
    }
    for (i = 0; i < pl->nRange && bByBucket; i++) {
      if (pl->aRange[i].iBucket < 0) bByBucket = 0;
    }
    if (!bByBucket) p->bMerge = 0;
    rc = streamsAlloc(p, bByBucket ? nBucket : 1);
    if (rc != SQLITE_OK) {
      sqlite3_free(aR);
      goto done;
    }
    /* a row limit for the engine when nothing else can drop rows */
    if (p->nLimit > 0 && p->nResidual == 0 && !pTab->bHistory && !bByBucket) {
      /* in uint64_t: LIMIT and OFFSET may each be up to 2^63 - 1 */
      opt.nRowLimit = (uint64_t)p->nLimit + (uint64_t)p->nSkip;
    }
    /* One stream per bucket with ranges, in the order they are read
    ** unmerged: raw key order, so the last bucket first in reverse. Slots
    ** are given before the cursors open and never move after, since a
    ** skip scan's filter holds its stream's address. */
    p->nStream = 0;
    for (i = 0; i < (bByBucket ? nBucket : 1); i++) {
      int iB =
          bByBucket ? (p->bReverse && !p->bMerge ? nBucket - 1 - i : i) : -1;
      WcsStream *st = &p->aStream[p->nStream];
      int nR = 0;
      toKeyRanges(pl, iB, aR, &nR);
      if (nR == 0) continue; /* an empty range list would mean everything */
      st->pCsr = p;
      st->iStream = iB;
      p->nStream++;
      opt.aRange = aR;
      opt.nRange = nR;
      if (pl->eKind == KS_PLAN_SKIP) {
        opt.xRowFilter = rowFilter;
        opt.pFilterCtx = st;
      } else {
        opt.xRowFilter = NULL;
        opt.pFilterCtx = NULL;
      }
      rc = wcs_cursor_open(&st->pCur, pTab->pTab, wcsReadTxn(pTab->pStore),
                           &opt);
      if (rc != WCS_OK) {
        p->nStream--; /* its slot holds no cursor */
        sqlite3_free(aR);
        rc = engErr(pTab, rc, pTab->zName);
        goto done;
      }
      if (p->nGroup) {
        /* (never with buckets or a skip scan's filter: xBestIndex) */
        rc = groupOpen(p, &opt);
        if (rc != WCS_OK) {
          sqlite3_free(aR);
          rc = rc == GROUP_BAD_KEY ? SQLITE_ERROR
                                   : engErr(pTab, rc, pTab->zName);
          goto done;
        }
      }
    }
    sqlite3_free(aR);
  }
  p->bEof = p->nStream == 0;
  /* (xBestIndex wrote D under its conditions; how many streams there are
  ** is known here) */
  if (pSp->nDistinct < s->nField &&
      (s->nSalt == 0 ? p->nStream == 1 : p->bMerge)) {
    p->nDistinct = pSp->nDistinct;
  }
  p->bPlain = p->nStream == 1 && p->nResidual == 0 && !pTab->bHistory &&
              p->nDistinct == 0 && p->nGroup == 0;
  rc = cursorStep(p, 1);
  if (rc == SQLITE_OK && p->bPlain && pSp->bNoColumn && !p->bEof &&
      !p->bMayUpdate) {
    /* SELECT count(*) FROM t: SQLite only counts the rows, and the files'
    ** notes may count them (an exact count, or none). Not in a write
    ** transaction: a DELETE without WHERE also uses no column by colUsed,
    ** yet asks each row's _key. The row is cleared, so that a column
    ** asked all the same is an error, never the first row's again. */
    uint64_t n;
    if (wcs_cursor_rows_left(p->aStream[0].pCur, &n)) {
      p->bCountOnly = 1;
      p->nCountLeft = n;
      p->pRow = NULL;
      p->nRow = 0;
      p->aCell = NULL;
      p->nCell = 0;
    }
  }

done:
  if (apVal) {
    for (i = 0; i < nSC; i++) {
      if (abHeap[i]) sqlite3_free(apVal[i]);
    }
  }
  return rc;
}

/* xNext: the next row. A plain scan (one stream, nothing to check) only
** moves the engine cursor and counts LIMIT; OFFSET was skipped by
** xFilter's first step. A count (bCountOnly) moves nothing. */
static int wcsNext(sqlite3_vtab_cursor *pCursor) {
  WcsCursor *p = (WcsCursor *)pCursor;
  if (p->bCountOnly) {
    /* no column is read: the current row stands for each one counted */
    if (p->nLimit == 0 || p->nCountLeft == 0) {
      p->bEof = 1;
    } else {
      p->nCountLeft--;
      if (p->nLimit > 0) p->nLimit--;
    }
    return SQLITE_OK;
  }
  if (p->bPlain && !p->bEof) {
    wcs_cursor *c = p->aStream[0].pCur;
    int rc = wcs_cursor_next(c);
    if (rc != WCS_OK) {
      WcsTab *pTab = (WcsTab *)pCursor->pVtab;
      return engErr(pTab, rc, pTab->zName);
    }
    if (p->nLimit == 0 || wcs_cursor_eof(c)) {
      p->bEof = 1;
    } else {
      if (p->nLimit > 0) p->nLimit--;
      loadRow(p);
      if (p->bCheckKey) return checkRowKey(p);
    }
    return SQLITE_OK;
  }
  return cursorStep(p, 0);
}

/* xEof */
static int wcsEof(sqlite3_vtab_cursor *pCursor) {
  return ((WcsCursor *)pCursor)->bEof;
}

/* The cell of declared column q in the current row, or -1. Cells come
** grouped by family, qualifiers ascending, one per column (a latest read:
** nVersions 1), and rows of a scan mostly have the same columns, so the
** place the column was found in the last row is tried first. */
static int qualCell(WcsCursor *p, WcsTab *pTab, int q) {
  const ks_qualifier *d = &pTab->pSchema->aQual[q];
  const int n = pTab->aQualLen[q], f = d->iFamily;
  const wcs_cell *a = p->aCell;
  int i = p->aQualHint[q];
  if (i < p->nCell && a[i].iFamily == f &&
      sameBytes(a[i].pQual, a[i].nQual, d->zName, (size_t)n)) {
    return i;
  }
  for (i = 0; i < p->nCell && a[i].iFamily <= f; i++) {
    if (a[i].iFamily == f &&
        sameBytes(a[i].pQual, a[i].nQual, d->zName, (size_t)n)) {
      p->aQualHint[q] = i;
      return i;
    }
  }
  return -1;
}

/* The order of number x (WCSV_INT xi, else xr) against filter f's value:
** -1, 0 or 1, as SQLite compares an INTEGER or REAL with another; 2 when
** a conversion to double could round (beyond 2^53), left to SQLite. */
static int numberCmp(int eX, sqlite3_int64 xi, double xr, const ValFilter *f) {
  const sqlite3_int64 kExact = (sqlite3_int64)1 << 53;
  double a, b;
  if (eX == WCSV_INT && f->eVal == WCSV_INT) return (xi > f->i) - (xi < f->i);
  if (eX == WCSV_INT) {
    if (xi > kExact || xi < -kExact) return 2;
    a = (double)xi;
    b = f->r;
  } else if (f->eVal == WCSV_INT) {
    if (f->i > kExact || f->i < -kExact) return 2;
    a = xr;
    b = (double)f->i;
  } else {
    a = xr;
    b = f->r;
  }
  return (a > b) - (a < b);
}

/* Whether the current row may satisfy every value filter: 0 only when
** SQLite's own check of the term would fail, so the row need not reach
** it. A column without a cell is NULL, which no filter's comparison
** holds for. A number filter passes on a value that is not a number, a
** NaN, or a comparison that would round, for SQLite to decide; a text
** filter rules out other bytes (the column is that TEXT, or a BLOB when
** not UTF-8, which equals no TEXT) and passes on the same bytes. */
static int valueMatch(WcsCursor *p) {
  WcsTab *pTab = (WcsTab *)p->base.pVtab;
  const ks_schema *s = pTab->pSchema;
  int k;
  for (k = 0; k < p->nVF; k++) {
    const ValFilter *f = &p->aVF[k];
    const int i = qualCell(p, pTab, f->q);
    const wcs_cell *pc;
    sqlite3_int64 xi = 0;
    double xr = 0;
    int e, c;
    if (i < 0) return 0;
    pc = &p->aCell[i];
    if (pTab->aQualCol[f->q].bInt8 && f->eVal == WCSV_INT && pc->nVal == 8) {
      /* the common case: an INT64 column against an integer */
      xi = (sqlite3_int64)wcs_get64be(pc->pVal);
      c = (xi > f->i) - (xi < f->i);
    } else if (f->eVal == 0) {
      if (pc->nVal != f->nText ||
          (f->nText > 0 &&
           memcmp(pc->pVal, p->vfText.a + f->oText, f->nText) != 0)) {
        return 0;
      }
      continue;
    } else {
      const ks_qualifier *d = &s->aQual[f->q];
      e = wcsDecodeNumber(d, s->aFamily[d->iFamily].eAgg, pc->pVal, pc->nVal,
                          &xi, &xr);
      if (e == 0 || (e == WCSV_REAL && isnan(xr))) continue;
      c = numberCmp(e, xi, xr, f);
      if (c == 2) continue;
    }
    if (((f->mAccept >> (c + 1)) & 1) == 0) return 0;
  }
  return 1;
}

/* wcs_read_options.xCellFilter: valueMatch on the cells of a row the
** engine is about to return (the cursor's own row set aside meanwhile). */
static int cellFilter(void *pCtx, const wcs_cell *aCell, int nCell) {
  WcsCursor *p = (WcsCursor *)pCtx;
  const wcs_cell *aOld = p->aCell;
  int nOld = p->nCell, bMatch;
  p->aCell = aCell;
  p->nCell = nCell;
  bMatch = valueMatch(p);
  p->aCell = aOld;
  p->nCell = nOld;
  return bMatch;
}

static void resultKeyField(sqlite3_context *ctx, const ks_field *f,
                           const ks_value *v) {
  if (v->eType == KS_VAL_INT) {
    sqlite3_result_int64(ctx, v->i);
  } else if (f->eType == KS_STRING) {
    sqlite3_result_text(ctx, v->n ? (const char *)v->p : "", v->n,
                        SQLITE_TRANSIENT);
  } else {
    sqlite3_result_blob(ctx, v->n ? (const void *)v->p : "", v->n,
                        SQLITE_TRANSIENT);
  }
}

/* The _cell value of cell c of the current row: row key, family index
** and qualifier, each led by its length, then the timestamp: one value
** per cell of the table, the same whichever scan finds it. */
static int resultCellId(sqlite3_context *ctx, const WcsCursor *p,
                        const wcs_cell *c) {
  size_t n = 4 + p->nRow + 2 + 4 + c->nQual + 8;
  uint8_t *z = sqlite3_malloc64(n), *q = z;
  if (z == NULL) {
    sqlite3_result_error_nomem(ctx);
    return SQLITE_NOMEM;
  }
  wcs_put32(q, (uint32_t)p->nRow);
  q += 4;
  if (p->nRow) memcpy(q, p->pRow, p->nRow);
  q += p->nRow;
  q[0] = (uint8_t)(c->iFamily >> 8);
  q[1] = (uint8_t)c->iFamily;
  q += 2;
  wcs_put32(q, (uint32_t)c->nQual);
  q += 4;
  if (c->nQual) memcpy(q, c->pQual, c->nQual);
  q += c->nQual;
  wcs_put64be(q, (uint64_t)c->iTs);
  sqlite3_result_blob64(ctx, z, n, sqlite3_free);
  return SQLITE_OK;
}

/* The cells of family f among a[0..n), which come grouped by family in
** family order: their count, the first at *pi0. */
static int familyCells(const wcs_cell *a, int n, int f, int *pi0) {
  int i0 = 0, i1;
  while (i0 < n && a[i0].iFamily < f)
    i0++;
  for (i1 = i0; i1 < n && a[i1].iFamily == f; i1++) {
  }
  *pi0 = i0;
  return i1 - i0;
}

/* xColumn, all cases (see wcsColumn for the common one). Kept out of
** line: inlined, its frame and saved registers made every call of the
** common case pay for them. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int columnAny(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                     int iCol) {
  WcsCursor *p = (WcsCursor *)pCursor;
  WcsTab *pTab = (WcsTab *)pCursor->pVtab;
  const ks_schema *s = pTab->pSchema;
  if (iCol == pTab->iColKey) {
    sqlite3_result_blob(ctx, p->nRow ? (const void *)p->pRow : "", (int)p->nRow,
                        SQLITE_TRANSIENT);
    return SQLITE_OK;
  }
  if (p->bMayUpdate && !pTab->bHistory && sqlite3_vtab_nochange(ctx)) {
    return SQLITE_OK; /* an UPDATE leaves this column alone */
  }
  if (iCol < s->nField) {
    if (!((p->mDecoded >> iCol) & 1)) {
      char *zErr = NULL;
      int rc = decodeField(p, iCol, &zErr);
      if (rc != SQLITE_OK) {
        if (zErr)
          sqlite3_result_error(ctx, zErr, -1);
        else
          sqlite3_result_error_nomem(ctx);
        sqlite3_free(zErr);
        return rc;
      }
    }
    resultKeyField(ctx, &s->aField[iCol], &p->aKey[iCol]);
    return SQLITE_OK;
  }
  if (pTab->bHistory) {
    const wcs_cell *c = p->iCell < p->nCell ? &p->aCell[p->iCell] : NULL;
    if (iCol == pTab->iColLatest) {
      if (p->bLatest) sqlite3_result_int64(ctx, p->iLatest);
      return SQLITE_OK;
    }
    if (c == NULL) return SQLITE_OK;
    if (iCol == pTab->iColCell) {
      return resultCellId(ctx, p, c);
    }
    if (iCol == pTab->iColFamily) {
      sqlite3_result_text(ctx, c->zFamily, -1, SQLITE_TRANSIENT);
    } else if (iCol == pTab->iColQualifier) {
      if (ks_utf8_valid(c->pQual, (int)c->nQual, NULL)) {
        sqlite3_result_text(ctx, c->nQual ? (const char *)c->pQual : "",
                            (int)c->nQual, SQLITE_TRANSIENT);
      } else {
        sqlite3_result_blob(ctx, c->pQual, (int)c->nQual, SQLITE_TRANSIENT);
      }
    } else if (iCol == pTab->iColTs) {
      sqlite3_result_int64(ctx, c->iTs);
    } else if (iCol == pTab->iColValue) {
      const ks_qualifier *q = NULL;
      const ks_family *fam = &s->aFamily[c->iFamily];
      int k;
      for (k = 0; k < fam->nQual; k++) {
        const ks_qualifier *d = &s->aQual[fam->iFirstQual + k];
        if (pTab->aQualLen[fam->iFirstQual + k] == (int)c->nQual &&
            memcmp(d->zName, c->pQual, c->nQual) == 0) {
          q = d;
          break;
        }
      }
      wcsResultCell(ctx, q, fam->eAgg, c->pVal, c->nVal);
    }
    return SQLITE_OK;
  }
  if (iCol >= pTab->iColQual && iCol < pTab->iColQual + pTab->nQual) {
    int q = iCol - pTab->iColQual;
    int iCell = qualCell(p, pTab, q);
    if (iCell >= 0) {
      const wcs_cell *c = &p->aCell[iCell];
      wcsResultCell(ctx, &s->aQual[q], s->aFamily[c->iFamily].eAgg, c->pVal,
                    c->nVal);
    }
    return SQLITE_OK;
  }
  if (iCol >= pTab->iColFam && iCol < pTab->iColFam + pTab->nFamily) {
    /* the family's JSON, built only when this column is asked for */
    int f = iCol - pTab->iColFam, i0;
    int n = familyCells(p->aCell, p->nCell, f, &i0);
    if (n > 0) {
      p->out.n = 0;
      if (wcsFamilyJson(&p->out, s, f, p->aCell + i0, n) != WCS_OK) {
        return SQLITE_NOMEM;
      }
      if (p->out.n >
          (size_t)sqlite3_limit(pTab->pConn->db, SQLITE_LIMIT_LENGTH, -1)) {
        /* a row of very large cells: say which, and how to read them */
        char *zKey = wcs_escape(p->pRow, p->nRow, 40);
        char *z = sqlite3_mprintf(
            "%s: the JSON of family %s in row '%s' would be %llu bytes, more "
            "than SQLite's limit on a value (SQLITE_LIMIT_LENGTH); read its "
            "cells one by one through a HISTORY view or its declared columns "
            "(a cell itself past the limit needs a higher limit)",
            pTab->zName, s->aFamily[f].zName, zKey ? zKey : "",
            (unsigned long long)p->out.n);
        free(zKey);
        sqlite3_result_error(ctx, z ? z : "out of memory", -1);
        sqlite3_free(z);
        return SQLITE_TOOBIG;
      }
      sqlite3_result_text64(ctx, (const char *)p->out.a, p->out.n,
                            SQLITE_TRANSIENT, SQLITE_UTF8);
      sqlite3_result_subtype(ctx, WCS_JSON_SUBTYPE);
    }
    return SQLITE_OK;
  }
  if (iCol == pTab->iColTs) {
    int i;
    int64_t iMax = -1;
    for (i = 0; i < p->nCell; i++) {
      if (p->aCell[i].iTs > iMax) iMax = p->aCell[i].iTs;
    }
    if (iMax >= 0) sqlite3_result_int64(ctx, iMax);
  }
  return SQLITE_OK;
}

/* wcsColumn's declared column q, found as cell c: the value, unless an
** UPDATE leaves the column alone. Out of line, like columnAny, so that
** the common case keeps a small frame. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int columnCell(const WcsCursor *p, const WcsTab *pTab,
                      sqlite3_context *ctx, unsigned q, const wcs_cell *c) {
  const WcsQualCol *d = &pTab->aQualCol[q];
  const ks_schema *s = pTab->pSchema;
  if (p->bMayUpdate && sqlite3_vtab_nochange(ctx)) return SQLITE_OK;
  if (d->bInt8 && c->nVal == 8) {
    sqlite3_result_int64(ctx, (sqlite3_int64)wcs_get64be(c->pVal));
  } else {
    wcsResultCell(ctx, &s->aQual[q], s->aFamily[d->iFamily].eAgg, c->pVal,
                  c->nVal);
  }
  return SQLITE_OK;
}

/* xColumn. The common case, a declared qualifier column of a table whose
** cell is where the column was found in the previous row (qualCell), is
** kept small: it runs for every column of every row of a scan. */
static int wcsColumn(sqlite3_vtab_cursor *pCursor, sqlite3_context *ctx,
                     int iCol) {
  WcsCursor *p = (WcsCursor *)pCursor;
  const WcsTab *pTab = (const WcsTab *)pCursor->pVtab;
  unsigned q = (unsigned)(iCol - pTab->iColQual);
  if (q < (unsigned)pTab->nQual && !pTab->bHistory) {
    const WcsQualCol *d = &pTab->aQualCol[q];
    int i = p->aQualHint[q];
    if (i < p->nCell) {
      const wcs_cell *c = &p->aCell[i];
      if (c->iFamily == d->iFamily &&
          sameBytes(c->pQual, c->nQual, d->zName, (size_t)d->nName)) {
        if (d->bInt8 && c->nVal == 8 && !p->bMayUpdate) {
          /* the common case: an INT64 column read by a query */
          sqlite3_result_int64(ctx, (sqlite3_int64)wcs_get64be(c->pVal));
          return SQLITE_OK;
        }
        return columnCell(p, pTab, ctx, q, c);
      }
    }
  } else if ((unsigned)iCol < (unsigned)pTab->pSchema->nField &&
             !p->bMayUpdate) {
    if ((p->mDecoded >> iCol) & 1) {
      /* decoded already (checkRowKey, an earlier column of the row) */
      if (p->aKey[iCol].eType == KS_VAL_INT) {
        sqlite3_result_int64(ctx, p->aKey[iCol].i);
        return SQLITE_OK;
      }
    } else if (iCol == pTab->pSchema->nField - 1 && p->eLast8 &&
               lastFieldKept(p, iCol + 1, iCol)) {
      /* the last key field, eight digits, of a row that keeps the head of
      ** the row before (a scan reading its days) */
      sqlite3_result_int64(ctx, p->aKey[iCol].i);
      return SQLITE_OK;
    }
  }
  return columnAny(pCursor, ctx, iCol);
}

/* xRowid: tables and history views are WITHOUT ROWID, so SQLite never
** asks; a row counter, should it. */
static int wcsRowid(sqlite3_vtab_cursor *pCursor, sqlite_int64 *pRowid) {
  *pRowid = ((WcsCursor *)pCursor)->iRowid;
  return SQLITE_OK;
}

/* ====================================================================
** Writes: xUpdate
** ==================================================================== */

/* Whether SQLite leaves column value v unchanged: only an UPDATE does
** (sqlite3_value_nochange); an INSERT (bInsert) gives every column, so
** the call is skipped for its many columns. */
static int unchanged(sqlite3_value *v, int bInsert) {
  return !bInsert && sqlite3_value_nochange(v);
}

/* Whether the row exists as the transaction sees it. */
static int rowExists(WcsTab *pTab, wcs_txn *pTxn, const void *pKey, size_t nKey,
                     int *pbExists) {
  return wcs_txn_check(pTxn, pTab->pTab, pKey, nKey, NULL, pbExists);
}

/* Write one cell value (set, or fold into an aggregate). */
static int writeCell(WcsTab *pTab, wcs_txn *pTxn, const void *pKey, size_t nKey,
                     int iFamily, const void *pQual, size_t nQual, int64_t iTs,
                     const WcsVal *v, const ks_qualifier *pDecl,
                     const char *zCol, wcs_buf *pScratch) {
  const ks_family *fam = &pTab->pSchema->aFamily[iFamily];
  char *zErr = NULL;
  int rc;
  if (v->eType == WCSV_NULL) {
    return wcs_txn_delete_cells(pTxn, pTab->pTab, pKey, nKey, fam->zName, pQual,
                                nQual, 0, 0);
  }
  /* aggregate cells fold writes of one timestamp: without an explicit
  ** _timestamp they all go to timestamp 0, one running value per column,
  ** which a MAX AGE would hide as soon as it is written */
  if (fam->eAgg != KS_AGG_NONE && iTs == WCS_TS_NOW) {
    if (fam->nMaxAgeMicros > 0) {
      setErr(&pTab->base,
             "%s: aggregate family %s has a MAX AGE, and a write without "
             "_timestamp goes to timestamp 0 (one running value per column), "
             "which that age hides at once: give each write a _timestamp "
             "(the start of its time bucket, say)",
             pTab->zName, fam->zName);
      return WCS_MISMATCH;
    }
    iTs = 0;
  }
  if (fam->eAgg == KS_AGG_SUM || fam->eAgg == KS_AGG_MIN ||
      fam->eAgg == KS_AGG_MAX) {
    sqlite3_int64 x;
    double r;
    int e = v->eType;
    if (e == WCSV_TEXT)
      e = wcsTextToNumber(v->p, v->n, &x, &r);
    else if (e == WCSV_INT)
      x = v->i;
    else if (e == WCSV_REAL && wcsRealToInt(v->r, &x))
      e = WCSV_INT;
    if (e != WCSV_INT) {
      setErr(&pTab->base,
             "%s: column %s is in aggregate family %s: it takes "
             "integers",
             pTab->zName, zCol, fam->zName);
      return WCS_MISMATCH;
    }
    return wcs_txn_add_to_cell(pTxn, pTab->pTab, pKey, nKey, fam->zName, pQual,
                               nQual, iTs, x);
  }
  if (fam->eAgg == KS_AGG_NONE) {
    uint8_t aInt[8];
    const void *p;
    size_t n;
    if (wcsCellBytes(pDecl, v, aInt, &p, &n)) {
      /* no encoding to do: the value's bytes as they are */
      return wcs_txn_set_cell(pTxn, pTab->pTab, pKey, nKey, fam->zName, pQual,
                              nQual, iTs, p, n);
    }
  }
  /* an HLL element: an INT64 column's converted as the column's affinity
  ** would ('5', 5.0 and 5 are one element; 'abc' is refused), as Bigtable's
  ** inthll takes integers; others as an undeclared qualifier's value */
  rc = wcsEncodeCell(fam->eAgg == KS_AGG_HLL &&
                             !(pDecl && pDecl->eVType == KS_V_INT64)
                         ? NULL
                         : pDecl,
                     v, pScratch, zCol, &zErr);
  if (rc != WCS_OK) {
    setErr(&pTab->base, "%s: %s", pTab->zName, zErr ? zErr : wcs_errstr(rc));
    sqlite3_free(zErr);
    return rc;
  }
  if (fam->eAgg == KS_AGG_HLL) {
    return wcs_txn_add_to_cell_bytes(pTxn, pTab->pTab, pKey, nKey, fam->zName,
                                     pQual, nQual, iTs, pScratch->a,
                                     pScratch->n);
  }
  return wcs_txn_set_cell(pTxn, pTab->pTab, pKey, nKey, fam->zName, pQual,
                          nQual, iTs, pScratch->a ? pScratch->a : (void *)"",
                          pScratch->n);
}

/* A cursor over row pRow alone as transaction pTxn sees it, with the
** newest nVersions cells of each column (0: all). */
static int rowCursor(WcsTab *pTab, wcs_txn *pTxn, const void *pRow, size_t nRow,
                     int nVersions, wcs_cursor **ppCur) {
  wcs_read_options opt;
  wcs_key_range r;
  memset(&r, 0, sizeof(r));
  r.pStart = pRow;
  r.nStart = nRow;
  r.pEnd = pRow;
  r.nEnd = nRow;
  r.bEndIncl = 1;
  wcs_read_options_init(&opt);
  opt.aRange = &r;
  opt.nRange = 1;
  opt.nVersions = nVersions;
  return wcs_cursor_open(ppCur, pTab->pTab, pTxn, &opt);
}

/* Copy every live cell (all versions) of row pOld to pNew, then delete
** pOld: an UPDATE that changes key fields moves the row. */
static int moveRow(WcsTab *pTab, wcs_txn *pTxn, const void *pOld, size_t nOld,
                   const void *pNew, size_t nNew) {
  wcs_cursor *pCur = NULL;
  typedef struct Saved {
    int iFamily;
    size_t oQual, nQual, oVal, nVal;
    int64_t iTs;
  } Saved;
  Saved *aSaved = NULL;
  wcs_buf bytes = {0};
  int nSaved = 0, i, rc;
  rc = rowCursor(pTab, pTxn, pOld, nOld, 0, &pCur);
  if (rc == WCS_OK && !wcs_cursor_eof(pCur)) {
    int nCell = 0;
    const wcs_cell *aCell = wcs_cursor_cells(pCur, &nCell);
    aSaved = sqlite3_malloc64(sizeof(Saved) * (size_t)(nCell + 1));
    if (aSaved == NULL) rc = WCS_NOMEM;
    for (i = 0; rc == WCS_OK && i < nCell; i++) {
      Saved *sv = &aSaved[nSaved++];
      sv->iFamily = aCell[i].iFamily;
      sv->iTs = aCell[i].iTs;
      sv->oQual = bytes.n;
      sv->nQual = aCell[i].nQual;
      rc = wcs_buf_append(&bytes, aCell[i].pQual, aCell[i].nQual);
      sv->oVal = bytes.n;
      sv->nVal = aCell[i].nVal;
      if (rc == WCS_OK)
        rc = wcs_buf_append(&bytes, aCell[i].pVal, aCell[i].nVal);
    }
  }
  wcs_cursor_close(pCur);
  if (rc == WCS_OK) rc = wcs_txn_delete_row(pTxn, pTab->pTab, pOld, nOld);
  for (i = 0; rc == WCS_OK && i < nSaved; i++) {
    Saved *sv = &aSaved[i];
    const ks_family *fam = &pTab->pSchema->aFamily[sv->iFamily];
    const uint8_t *pQ = bytes.a ? bytes.a + sv->oQual : (const uint8_t *)"";
    const uint8_t *pV = bytes.a ? bytes.a + sv->oVal : (const uint8_t *)"";
    if (fam->eAgg != KS_AGG_NONE) {
      rc = wcs_txn_merge_to_cell(pTxn, pTab->pTab, pNew, nNew, fam->zName, pQ,
                                 sv->nQual, sv->iTs, pV, sv->nVal);
    } else {
      rc = wcs_txn_set_cell(pTxn, pTab->pTab, pNew, nNew, fam->zName, pQ,
                            sv->nQual, sv->iTs, pV, sv->nVal);
    }
  }
  sqlite3_free(aSaved);
  wcs_buf_free(&bytes);
  return rc;
}

/* Bytes of a value given for _key (BLOB, or TEXT taken as bytes). */
static const void *keyBytes(sqlite3_value *v, int *pn) {
  const void *p = sqlite3_value_type(v) == SQLITE_BLOB
                      ? sqlite3_value_blob(v)
                      : (const void *)sqlite3_value_text(v);
  *pn = sqlite3_value_bytes(v);
  return p ? p : (const void *)"";
}

/* One key field value of an INSERT/UPDATE as a key value. zNum (32 bytes)
** holds a rendered number for text fields. */
static int fieldValue(WcsTab *pTab, const ks_field *f, sqlite3_value *v,
                      ks_value *pOut, char *zNum) {
  int t = sqlite3_value_type(v);
  memset(pOut, 0, sizeof(*pOut));
  /* constraint errors, as for the key's order and bounds: INSERT OR
  ** IGNORE skips the row, as SQLite does for a NOT NULL column or a
  ** STRICT table's type */
  if (t == SQLITE_NULL) {
    setErr(&pTab->base, "NOT NULL constraint failed: %s.%s", pTab->zName,
           f->zName);
    return SQLITE_CONSTRAINT;
  }
  if (f->eType == KS_INT64 || f->eType == KS_TIMESTAMP) {
    sqlite3_int64 x = 0;
    double r = 0;
    int e = WCSV_BLOB;
    if (t == SQLITE_INTEGER) {
      x = sqlite3_value_int64(v);
      e = WCSV_INT;
    } else if (t == SQLITE_FLOAT) {
      r = sqlite3_value_double(v);
      e = WCSV_REAL;
    } else if (t == SQLITE_TEXT) {
      e = wcsTextToNumber(sqlite3_value_text(v), sqlite3_value_bytes(v), &x,
                          &r);
    }
    if (e == WCSV_REAL && wcsRealToInt(r, &x)) e = WCSV_INT;
    if (e != WCSV_INT) {
      char *z = wcsIntFieldErr(f->zName, ks_type_name(f->eType), v);
      setErr(&pTab->base, "%s: %s", pTab->zName, z ? z : "out of memory");
      sqlite3_free(z);
      return SQLITE_CONSTRAINT;
    }
    pOut->eType = KS_VAL_INT;
    pOut->i = x;
    return SQLITE_OK;
  }
  pOut->eType = KS_VAL_BYTES;
  if (t == SQLITE_BLOB) {
    pOut->p = sqlite3_value_blob(v);
  } else if (t == SQLITE_TEXT) {
    pOut->p = textBytes(v, &pOut->n); /* the codec takes a length */
    return SQLITE_OK;
  } else {
    if (t == SQLITE_INTEGER) {
      sqlite3_snprintf(32, zNum, "%lld", sqlite3_value_int64(v));
    } else {
      sqlite3_snprintf(32, zNum, "%!.15g", sqlite3_value_double(v));
    }
    pOut->p = (const uint8_t *)zNum;
    pOut->n = (int)strlen(zNum);
    return SQLITE_OK;
  }
  pOut->n = sqlite3_value_bytes(v);
  if (pOut->p == NULL) pOut->p = (const uint8_t *)"";
  return SQLITE_OK;
}

int wcsCheckRowKey(WcsTab *pTab, const uint8_t *pKey, int nKey,
                   char **pzErr) {
  const ks_schema *s = pTab->pSchema;
  wcs_buf scratch = {0};
  char *zErr = NULL;
  ks_value *a;
  int rc;
  *pzErr = NULL;
  if (s->nField == 0) return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(ks_value) * (size_t)s->nField);
  if (a == NULL) return SQLITE_NOMEM;
  rc = ks_key_decode(s, pKey, nKey, a, &scratch, &zErr);
  sqlite3_free(a);
  wcs_buf_free(&scratch);
  if (rc == WCS_OK) return SQLITE_OK;
  if (rc != WCS_NOMEM) {
    *pzErr = sqlite3_mprintf("%s: %s", pTab->zName, zErr ? zErr : "bad key");
  }
  wcs_free(zErr);
  return wcsToSqlite(rc);
}

/*
** The row key of an INSERT or UPDATE: encoded from the key fields, with
** fields SQLite reports unchanged taken from the old key pOld (UPDATE). A
** raw _key given alone is used as is once it decodes under the schema; a
** _key given with fields must agree with them.
*/
static int newRowKey(WcsTab *pTab, sqlite3_value **argv, const uint8_t *pOld,
                     int nOld, wcs_buf *pKey) {
  const ks_schema *s = pTab->pSchema;
  sqlite3_value *pKeyVal = argv[2 + pTab->iColKey];
  int bIns = pOld == NULL;
  int bKeyGiven =
      !unchanged(pKeyVal, bIns) && sqlite3_value_type(pKeyVal) != SQLITE_NULL;
  int bKeyChanged = 0;
  int i, bFieldGiven = 0, bFieldChanged = 0, rc = SQLITE_OK, nGiven = 0;
  const void *pGiven = NULL;
  ks_value *a = NULL, *aOld = NULL;
  char *zNum = NULL, *zErr = NULL;
  wcs_buf scratch = {0};
  /* most keys have a few fields: no allocation for those */
  ks_value aStack[8];
  char zNumStack[8 * 32];
  int bStack = s->nField <= 8;

  pKey->n = 0;
  if (pOld && !bKeyGiven && !unchanged(pKeyVal, bIns)) {
    /* UPDATE ... SET _key = NULL: no row is without a key */
    setErr(&pTab->base, "NOT NULL constraint failed: %s._key", pTab->zName);
    return SQLITE_CONSTRAINT;
  }
  if (bKeyGiven) {
    pGiven = keyBytes(pKeyVal, &nGiven);
    bKeyChanged = pOld == NULL || nGiven != nOld ||
                  memcmp(pGiven, pOld, (size_t)nGiven) != 0;
  }
  /* which fields are given matters to an UPDATE and to a _key given;
  ** an INSERT of the fields alone (a load) goes straight to them */
  for (i = 0; (pOld || bKeyGiven) && i < s->nField; i++) {
    sqlite3_value *v = argv[2 + i];
    if (unchanged(v, bIns)) continue;
    bFieldChanged = 1;
    if (!bFieldGiven && sqlite3_value_type(v) != SQLITE_NULL) bFieldGiven = 1;
  }
  if (s->nField == 0 || (bKeyGiven && !bFieldGiven && pOld == NULL) ||
      (bKeyChanged && pOld && !bFieldChanged)) {
    /* the raw key decides */
    if (!bKeyGiven) {
      /* an UPDATE keeps the key unless it sets it, and NULL is no key */
      if (pOld && unchanged(pKeyVal, bIns))
        return wcs_buf_append(pKey, pOld, (size_t)nOld) ? SQLITE_NOMEM
                                                        : SQLITE_OK;
      setErr(&pTab->base, "NOT NULL constraint failed: %s._key", pTab->zName);
      return SQLITE_CONSTRAINT;
    }
    if (nGiven == 0) {
      /* a constraint, as the empty key of a schema's fields is (wcsUpdate):
      ** INSERT OR IGNORE passes over the row */
      setErr(&pTab->base, "%s: a row key cannot be empty", pTab->zName);
      return SQLITE_CONSTRAINT;
    }
    rc = wcsCheckRowKey(pTab, pGiven, nGiven, &zErr);
    if (rc != SQLITE_OK) {
      if (zErr) setErr(&pTab->base, "%s", zErr);
      sqlite3_free(zErr);
      return rc;
    }
    return wcs_buf_append(pKey, pGiven, (size_t)nGiven) ? SQLITE_NOMEM
                                                        : SQLITE_OK;
  }
  if (pOld && !bFieldChanged) {
    return wcs_buf_append(pKey, pOld, (size_t)nOld) ? SQLITE_NOMEM : SQLITE_OK;
  }
  if (bStack) {
    a = aStack;
    zNum = zNumStack;
  } else {
    a = sqlite3_malloc64(sizeof(ks_value) * (size_t)s->nField);
    zNum = sqlite3_malloc64(32 * (size_t)s->nField);
  }
  if (pOld) aOld = sqlite3_malloc64(sizeof(ks_value) * (size_t)s->nField);
  if (!a || !zNum || (pOld && !aOld)) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  if (pOld && ks_key_decode(s, pOld, nOld, aOld, &scratch, &zErr) != WCS_OK) {
    rc = setErr(&pTab->base, "%s: %s", pTab->zName, zErr ? zErr : "bad key");
    wcs_free(zErr);
    goto done;
  }
  for (i = 0; rc == SQLITE_OK && i < s->nField; i++) {
    sqlite3_value *v = argv[2 + i];
    if (unchanged(v, bIns)) {
      if (aOld)
        a[i] = aOld[i];
      else
        memset(&a[i], 0, sizeof(a[i]));
      continue;
    }
    rc = fieldValue(pTab, &s->aField[i], v, &a[i], zNum + 32 * i);
  }
  if (rc == SQLITE_OK) {
    int rc2 = ks_key_encode(s, a, pKey, &zErr);
    if (rc2 != WCS_OK) {
      setErr(&pTab->base, "%s: %s", pTab->zName, zErr ? zErr : wcs_errstr(rc2));
      wcs_free(zErr);
      rc = wcsToSqlite(rc2);
    }
  }
  if (rc == SQLITE_OK && bKeyGiven && bKeyChanged &&
      ((size_t)nGiven != pKey->n ||
       memcmp(pGiven, pKey->a, (size_t)nGiven) != 0)) {
    char *zGiven = wcs_escape(pGiven, (size_t)nGiven, 80);
    char *zFields = wcs_escape(pKey->a, pKey->n, 80);
    rc = setErr(&pTab->base,
                "%s: the _key given ('%s') does not match the key fields, "
                "whose key is '%s'; give one or the other",
                pTab->zName, zGiven ? zGiven : "?", zFields ? zFields : "?");
    free(zGiven);
    free(zFields);
  }
done:
  if (!bStack) {
    sqlite3_free(a);
    sqlite3_free(zNum);
  }
  /* an INSERT took neither: no calls for them on its path */
  if (aOld) sqlite3_free(aOld);
  if (scratch.a) wcs_buf_free(&scratch);
  return rc;
}

/* Apply the qualifier and family columns of an INSERT (bInsert: NULL
** means "not given") or UPDATE (NULL deletes; unchanged columns skipped).
** Returns the number of cells written in *pnCell. */
static int applyColumns(WcsTab *pTab, wcs_txn *pTxn, sqlite3_value **argv,
                        const uint8_t *pKey, size_t nKey, int64_t iTs,
                        int bInsert, const char *abSame, int *pnCell) {
  const ks_schema *s = pTab->pSchema;
  wcs_buf *pScratch = &pTab->updCell;
  int i, rc = WCS_OK;
  *pnCell = 0;
  /* family JSON columns first, so qualifier columns win */
  for (i = 0; rc == WCS_OK && i < s->nFamily; i++) {
    sqlite3_value *v = argv[2 + pTab->iColFam + i];
    const ks_family *fam = &s->aFamily[i];
    WcsObject obj;
    char *zErr = NULL;
    int t, k;
    if (unchanged(v, bInsert) || (abSame && abSame[pTab->iColFam + i])) {
      continue;
    }
    t = sqlite3_value_type(v);
    if (t == SQLITE_NULL) {
      if (!bInsert) {
        rc = wcs_txn_delete_family(pTxn, pTab->pTab, pKey, nKey, fam->zName);
      }
      continue;
    }
    if (t != SQLITE_TEXT) {
      setErr(&pTab->base,
             "%s: family column %s takes a JSON object of qualifier: value",
             pTab->zName, fam->zName);
      rc = WCS_MISMATCH;
      break;
    }
    rc = wcsParseObject((const char *)sqlite3_value_text(v),
                        sqlite3_value_bytes(v), &obj, &zErr);
    if (rc != WCS_OK) {
      setErr(&pTab->base, "%s: family column %s: %s", pTab->zName, fam->zName,
             zErr ? zErr : "not a JSON object");
      sqlite3_free(zErr);
      break;
    }
    for (k = 0; rc == WCS_OK && k < obj.nMember; k++) {
      WcsMember *m = &obj.aMember[k];
      const ks_qualifier *pDecl = NULL;
      int j;
      char *zCol;
      for (j = 0; j < fam->nQual; j++) {
        const ks_qualifier *d = &s->aQual[fam->iFirstQual + j];
        if (pTab->aQualLen[fam->iFirstQual + j] == m->nKey &&
            memcmp(d->zName, m->pKey, (size_t)m->nKey) == 0) {
          pDecl = d;
          break;
        }
      }
      if (pDecl == NULL && m->bWideInt) {
        /* an integer literal is an INT64 (doc/sql.md §4): one beyond its
        ** range would be rounded as a FLOAT64 */
        setErr(&pTab->base,
               "%s: family column %s: the integer %.*s of qualifier %.*s is "
               "beyond INT64; write it with a fraction or an exponent "
               "(e.g. %.1e) to store a FLOAT64, or as a string",
               pTab->zName, fam->zName, m->nRaw > 40 ? 40 : m->nRaw, m->pRaw,
               m->nKey, m->pKey, m->v.r);
        rc = WCS_MISMATCH;
        break;
      }
      if (pDecl && pDecl->eVType == KS_V_JSON && m->v.eType != WCSV_NULL &&
          m->v.eType != WCSV_BLOB) {
        /* a JSON column keeps the value's JSON text as written (a string
        ** with its quotes, true, 1.50), which is what reading the family
        ** shows of it */
        m->v.eType = WCSV_JSON;
        m->v.p = m->pRaw;
        m->v.n = m->nRaw;
      }
      zCol = sqlite3_mprintf("%s.%.*s", fam->zName, m->nKey, m->pKey);
      rc = writeCell(pTab, pTxn, pKey, nKey, i, m->pKey, (size_t)m->nKey, iTs,
                     &m->v, pDecl, zCol ? zCol : fam->zName, pScratch);
      sqlite3_free(zCol);
      if (m->v.eType != WCSV_NULL) (*pnCell)++;
    }
    wcsObjectClear(&obj);
  }
  for (i = 0; rc == WCS_OK && i < s->nQual; i++) {
    sqlite3_value *v = argv[2 + pTab->iColQual + i];
    const ks_qualifier *q = &s->aQual[i];
    WcsVal wv;
    int t;
    if (unchanged(v, bInsert) || (abSame && abSame[pTab->iColQual + i])) {
      continue;
    }
    t = sqlite3_value_type(v);
    if (s->aFamily[q->iFamily].eAgg == KS_AGG_NONE &&
        ((t == SQLITE_INTEGER && q->eVType == KS_V_INT64 &&
          q->eEnc != KS_ENC_DECIMAL) ||
         (t == SQLITE_TEXT &&
          (q->eVType == KS_V_STRING || q->eVType == KS_V_BYTES)))) {
      /* the usual cell, a declared type's value in a plain family, stored
      ** as writeCell would (the bytes of wcsCellBytes), without building
      ** a WcsVal for it: this runs for every column of a load */
      uint8_t aInt[8];
      const void *p = aInt;
      size_t n = 8;
      if (t == SQLITE_INTEGER) {
        wcs_put64be(aInt, (uint64_t)sqlite3_value_int64(v));
      } else {
        int nText;
        p = textBytes(v, &nText); /* bound text is not copied to end it */
        n = (size_t)nText;
      }
      if (t == SQLITE_INTEGER || q->eVType == KS_V_BYTES ||
          ks_utf8_valid(p, (int)n, NULL)) {
        rc = wcs_txn_set_cell(pTxn, pTab->pTab, pKey, nKey,
                              s->aFamily[q->iFamily].zName, q->zName,
                              (size_t)pTab->aQualLen[i], iTs, p, n);
        (*pnCell)++;
        continue;
      }
      /* (text that is not UTF-8 for a STRING column: writeCell refuses
      ** it, naming the column) */
    }
    wcsValFromSql(&wv, v);
    if (wv.eType == WCSV_NULL && bInsert) continue;
    rc = writeCell(pTab, pTxn, pKey, nKey, q->iFamily, q->zName,
                   (size_t)pTab->aQualLen[i], iTs, &wv, q, q->zName, pScratch);
    if (wv.eType != WCSV_NULL) (*pnCell)++;
  }
  return rc;
}

/*
** UPDATE ... FROM calls xUpdate once per match of a row, each time with
** the values the statement read before it wrote anything: a second match
** of a row would compare stale values with the row the first one wrote
** (and find changes that are the first match's), or move a row that an
** earlier move put there. So the rows such a statement wrote are kept,
** and a later match of one of them is passed over: one match per row
** applies, as SQLite's own tables take one ("which one is arbitrary").
** The statement is told by its handle, its run and the cursors opened on
** the table so far (a statement opens its cursor as it starts, and
** UPDATE ... FROM calls xUpdate only after its scan; a new statement may
** get a finished one's handle): a new one clears the set (fromStatement,
** 1 then). fromSeen: 1 if row k was written by the
** running statement; with bAdd, it is recorded (0 returned; WCS_NOMEM
** negated on failure).
*/
static void fromClear(WcsTab *pTab) {
  pTab->iFromSp = 0;
  wcs_buf_free(&pTab->fromKeys);
  sqlite3_free(pTab->aFromSlot);
  pTab->aFromSlot = NULL;
  pTab->nFromSlot = pTab->nFromUsed = 0;
  pTab->pFromStmt = NULL;
}

static int fromStatement(WcsTab *pTab) {
  sqlite3_stmt *p = busyWriter(pTab->pConn->db);
  int nRun;
  nRun = p ? sqlite3_stmt_status(p, SQLITE_STMTSTATUS_RUN, 0) : 0;
  if (p != NULL && p == pTab->pFromStmt && nRun == pTab->nFromRun &&
      pTab->nOpens == pTab->nFromOpens) {
    return 0;
  }
  fromClear(pTab);
  pTab->pFromStmt = p;
  pTab->nFromRun = nRun;
  pTab->nFromOpens = pTab->nOpens;
  return 1;
}

/* The hash of n bytes at k in fromSeen's set (XXH3, as the engine's). */
static uint32_t fromHash(const uint8_t *k, size_t n) {
  return (uint32_t)XXH3_64bits(k, n);
}

static int fromSeen(WcsTab *pTab, const uint8_t *k, size_t n, int bAdd) {
  uint32_t h = fromHash(k, n), i;
  if (pTab->pFromStmt == NULL) return 0;
  for (i = pTab->nFromSlot ? h & (pTab->nFromSlot - 1) : 0;
       pTab->nFromSlot && pTab->aFromSlot[i];
       i = (i + 1) & (pTab->nFromSlot - 1)) {
    const uint8_t *q = pTab->fromKeys.a + pTab->aFromSlot[i] - 1;
    uint32_t m;
    memcpy(&m, q, 4);
    if (m == n && memcmp(q + 4, k, n) == 0) return 1;
  }
  if (!bAdd) return 0;
  if (2 * (pTab->nFromUsed + 1) > pTab->nFromSlot) {
    uint32_t nNew = pTab->nFromSlot ? 2 * pTab->nFromSlot : 64, x;
    uint32_t *aNew = sqlite3_malloc64(sizeof(uint32_t) * nNew);
    if (aNew == NULL) return -WCS_NOMEM;
    memset(aNew, 0, sizeof(uint32_t) * nNew);
    for (x = 0; x < pTab->nFromSlot; x++) {
      const uint8_t *q;
      uint32_t m, y;
      if (pTab->aFromSlot[x] == 0) continue;
      q = pTab->fromKeys.a + pTab->aFromSlot[x] - 1;
      memcpy(&m, q, 4);
      for (y = fromHash(q + 4, m) & (nNew - 1); aNew[y];
           y = (y + 1) & (nNew - 1)) {
      }
      aNew[y] = pTab->aFromSlot[x];
    }
    sqlite3_free(pTab->aFromSlot);
    pTab->aFromSlot = aNew;
    pTab->nFromSlot = nNew;
    for (i = h & (nNew - 1); aNew[i]; i = (i + 1) & (nNew - 1)) {
    }
  }
  {
    uint32_t m = (uint32_t)n;
    size_t o = pTab->fromKeys.n;
    if (o + 4 + n >= UINT32_MAX ||
        wcs_buf_append(&pTab->fromKeys, &m, 4) != WCS_OK ||
        wcs_buf_append(&pTab->fromKeys, k, n) != WCS_OK) {
      return -WCS_NOMEM;
    }
    pTab->aFromSlot[i] = (uint32_t)o + 1;
    pTab->nFromUsed++;
  }
  return 0;
}

/* Whether an UPDATE gave every column a value: SQLite does so on the
** paths where it cannot tell the module which columns the statement
** leaves alone (UPDATE ... FROM), _timestamp included. */
static int allColumnsGiven(const WcsTab *pTab, sqlite3_value **argv) {
  int i;
  if (sqlite3_value_nochange(argv[2 + pTab->iColTs])) return 0;
  for (i = 0; i < pTab->nQual; i++) {
    if (sqlite3_value_nochange(argv[2 + pTab->iColQual + i])) return 0;
  }
  for (i = 0; i < pTab->nFamily; i++) {
    if (sqlite3_value_nochange(argv[2 + pTab->iColFam + i])) return 0;
  }
  return 1;
}

/* Whether value v is what declared column q shows for cell bytes
** p[0..n) (pCell NULL: the row has no cell there, the column is NULL).
** pScratch: room to encode v. A value that encodes to other bytes than
** the cell's counts as changed, even where both would read back alike. */
static int sameAsCell(const WcsTab *pTab, int q, sqlite3_value *v,
                      const wcs_cell *pCell, wcs_buf *pScratch) {
  const ks_qualifier *d = &pTab->pSchema->aQual[q];
  const int eAgg = pTab->pSchema->aFamily[d->iFamily].eAgg;
  WcsVal wv;
  char *zErr = NULL;
  int rc;
  if (sqlite3_value_type(v) == SQLITE_NULL) return pCell == NULL;
  if (pCell == NULL) return 0;
  if (eAgg == KS_AGG_HLL) {
    /* the sketch's bytes, as the column shows them (a write would add
    ** them to the sketch as one more element) */
    return sqlite3_value_type(v) == SQLITE_BLOB &&
           (size_t)sqlite3_value_bytes(v) == pCell->nVal &&
           (pCell->nVal == 0 ||
            memcmp(sqlite3_value_blob(v), pCell->pVal, pCell->nVal) == 0);
  }
  if (eAgg != KS_AGG_NONE) {
    /* an aggregate shows its folded number, which a write would fold in
    ** again */
    sqlite3_int64 i;
    double r;
    int e = wcsDecodeNumber(d, eAgg, pCell->pVal, pCell->nVal, &i, &r);
    return e == WCSV_INT && sqlite3_value_type(v) == SQLITE_INTEGER &&
           sqlite3_value_int64(v) == i;
  }
  wcsValFromSql(&wv, v);
  rc = wcsEncodeCell(d, &wv, pScratch, d->zName, &zErr);
  sqlite3_free(zErr);
  return rc == WCS_OK && pScratch->n == pCell->nVal &&
         (pCell->nVal == 0 ||
          memcmp(pScratch->a, pCell->pVal, pCell->nVal) == 0);
}

/*
** An UPDATE that gave every column (allColumnsGiven): which of them hold
** the row's own values, so that applyColumns leaves those alone, as a
** plain UPDATE leaves the columns it does not set. abSame[iCol] is set
** for each such qualifier or family column; *pbTsSame: the _timestamp
** given is the row's newest time (as the column reads), so no time was
** given; *pbGone: the row is no longer there (an earlier row of an
** UPDATE ... FROM moved or deleted it), and SQLite's own tables then
** change nothing. Without this, each such UPDATE wrote every column at
** the row's newest time: aggregates folded again, versions overwritten.
*/
static int updateSameAsRow(WcsTab *pTab, wcs_txn *pTxn, sqlite3_value **argv,
                           const void *pOld, size_t nOld, char *abSame,
                           int *pbTsSame, int *pbGone) {
  const ks_schema *s = pTab->pSchema;
  wcs_cursor *pCur = NULL;
  wcs_buf scratch = {0};
  int rc, i;
  *pbTsSame = 0;
  *pbGone = 0;
  rc = rowCursor(pTab, pTxn, pOld, nOld, 1, &pCur);
  if (rc == WCS_OK && wcs_cursor_eof(pCur)) *pbGone = 1;
  if (rc == WCS_OK && !*pbGone) {
    int nCell = 0;
    const wcs_cell *a = wcs_cursor_cells(pCur, &nCell);
    int64_t iMax = -1;
    sqlite3_value *pTs = argv[2 + pTab->iColTs];
    for (i = 0; i < nCell; i++) {
      if (a[i].iTs > iMax) iMax = a[i].iTs;
    }
    *pbTsSame = sqlite3_value_type(pTs) == SQLITE_INTEGER &&
                sqlite3_value_int64(pTs) == iMax;
    for (i = 0; i < pTab->nQual; i++) {
      const ks_qualifier *d = &s->aQual[i];
      const wcs_cell *pCell = NULL;
      int j;
      for (j = 0; j < nCell; j++) {
        if (a[j].iFamily == d->iFamily &&
            sameBytes(a[j].pQual, a[j].nQual, d->zName,
                      (size_t)pTab->aQualLen[i])) {
          pCell = &a[j];
          break;
        }
      }
      abSame[pTab->iColQual + i] = (char)sameAsCell(
          pTab, i, argv[2 + pTab->iColQual + i], pCell, &scratch);
    }
    for (i = 0; rc == WCS_OK && i < pTab->nFamily; i++) {
      sqlite3_value *v = argv[2 + pTab->iColFam + i];
      int i0, n = familyCells(a, nCell, i, &i0);
      if (n == 0 || sqlite3_value_type(v) != SQLITE_TEXT) {
        abSame[pTab->iColFam + i] =
            n == 0 && sqlite3_value_type(v) == SQLITE_NULL;
        continue;
      }
      scratch.n = 0;
      rc = wcsFamilyJson(&scratch, s, i, a + i0, n);
      abSame[pTab->iColFam + i] =
          rc == WCS_OK && (size_t)sqlite3_value_bytes(v) == scratch.n &&
          memcmp(sqlite3_value_text(v), scratch.a, scratch.n) == 0;
    }
  }
  wcs_cursor_close(pCur);
  wcs_buf_free(&scratch);
  return rc;
}

/*
** xUpdate: INSERT, UPDATE and DELETE as mutations in the store's shared
** transaction. Conflict handling (sqlite3_vtab_on_conflict, doc/sql.md):
**   INSERT (ABORT, the default)  upsert: the given cells are written into
**                                the row whether it exists or not
**   INSERT OR REPLACE            the row is replaced: DeleteFromRow first
**   INSERT OR IGNORE             an existing row is left alone
**   INSERT OR FAIL / OR ROLLBACK an existing row is a UNIQUE constraint
**                                error (FAIL keeps earlier rows, ROLLBACK
**                                ends the transaction)
** UPDATE writes only the changed columns (sqlite3_vtab_nochange); NULL
** deletes a column's cells or a family's; changing key fields moves the
** row (all versions) to the new key. A move onto an existing row is a
** UNIQUE constraint error under ABORT too, as in SQLite's own tables: a
** merge there would take the target's cells along when it moves in turn
** (UPDATE t SET k = k + 1 moves row 1 onto row 2 before row 2 moves), and
** cells of one statement share a timestamp, so values would be lost. OR
** IGNORE skips the row, OR REPLACE replaces the target.
*/
static int wcsUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                     sqlite_int64 *pRowid) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st = pTab->pStore;
  wcs_txn *pTxn;
  wcs_buf *pKey = &pTab->updKey;
  const uint8_t *pOld = NULL;
  int nOld = 0, rc = SQLITE_OK, nCell = 0;
  int64_t iTs = WCS_TS_NOW;
  int eConflict;
  char *abSame = NULL; /* [nCol]: UPDATE ... FROM's unchanged columns */
  int bFrom = 0;       /* an UPDATE that gave every column (... FROM) */
  int bTsSame = 0;     /* ... and its _timestamp the row's own */
  (void)pRowid;

  if (pTab->bHistory) {
    return setErr(pVtab,
                  "%s is a HISTORY view and is read-only; write to "
                  "the table itself",
                  pTab->zName);
  }
  /* (a table in a transaction the parent had open at the fork gets no
  ** xBegin in the child) */
  if (tabForked(pTab)) return wcsForkedErr(pTab);
  if (pTab->pTab == NULL || st == NULL) return wcsMissingErr(pTab);
  if (pTab->bCreating && !pTab->bInTxn) {
    /* created in this transaction: SQLite calls no xBegin for it */
    rc = wcsBegin(pVtab);
    if (rc != SQLITE_OK) return rc;
  }
  if (st->nActive == 0 || st->pTxn == NULL) {
    return setErr(pVtab, "%s: write outside a transaction", pTab->zName);
  }
  pTxn = st->pTxn;
  markWrite(pTab);
  if (sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    pOld = sqlite3_value_blob(argv[0]);
    nOld = sqlite3_value_bytes(argv[0]);
    if (st->pOpen) {
      rc = freezeReaders(pTab, pOld, (size_t)nOld);
      if (rc != SQLITE_OK) return rc;
    }
  }
  if (argc == 1) {
    rc = wcs_txn_delete_row(pTxn, pTab->pTab, pOld, (size_t)nOld);
    return rc == WCS_OK ? SQLITE_OK : engErr(pTab, rc, pTab->zName);
  }
  if (pOld != NULL && allColumnsGiven(pTab, argv)) {
    int bGone = 0;
    bFrom = 1;
    if (fromStatement(pTab)) {
      /* SQLite opens no statement savepoint on this path: a row failing
      ** below would leave the statement's earlier rows written. So the
      ** statement takes one of its own, above the transaction's. */
      pTab->iFromSp = st->nSp + 1;
      rc = wcs_txn_savepoint(pTxn, pTab->iFromSp);
      if (rc != WCS_OK) {
        pTab->iFromSp = 0;
        return engErr(pTab, rc, pTab->zName);
      }
    }
    if (fromSeen(pTab, pOld, (size_t)nOld, 0) == 1) {
      return SQLITE_OK; /* an earlier match of this statement applied */
    }
    abSame = sqlite3_malloc64((size_t)pTab->nCol + 1);
    if (abSame == NULL) return SQLITE_NOMEM;
    memset(abSame, 0, (size_t)pTab->nCol + 1);
    rc = updateSameAsRow(pTab, pTxn, argv, pOld, (size_t)nOld, abSame, &bTsSame,
                         &bGone);
    if (rc != WCS_OK) {
      rc = engErr(pTab, rc, pTab->zName);
      goto done;
    }
    if (bGone) goto done;
  }
  {
    sqlite3_value *pTs = argv[2 + pTab->iColTs];
    if (!unchanged(pTs, pOld == NULL) && !bTsSame &&
        sqlite3_value_type(pTs) != SQLITE_NULL) {
      WcsVal wv;
      sqlite3_int64 x = -1;
      double r;
      int e;
      wcsValFromSql(&wv, pTs);
      e = wv.eType;
      if (e == WCSV_INT)
        x = wv.i;
      else if (e == WCSV_REAL)
        r = wv.r;
      else if (e == WCSV_TEXT)
        e = wcsTextToNumber(wv.p, wv.n, &x, &r);
      /* a whole REAL, as an INTEGER column's affinity takes it */
      if (e == WCSV_REAL && wcsRealToInt(r, &x)) e = WCSV_INT;
      if (e != WCSV_INT || x < 0 || x == INT64_MAX) {
        rc = setErr(pVtab,
                    "%s: _timestamp must be an integer from 0 to "
                    "9223372036854775806 (microseconds since the epoch)",
                    pTab->zName);
        goto done;
      }
      iTs = x;
    }
  }
  rc = newRowKey(pTab, argv, pOld, nOld, pKey);
  if (rc == SQLITE_OK && pKey->n == 0) {
    rc = setErr(pVtab, "%s: a row key cannot be empty", pTab->zName);
    rc = SQLITE_CONSTRAINT;
  }
  if (rc == SQLITE_OK && st->pOpen) rc = freezeReaders(pTab, pKey->a, pKey->n);
  if (rc != SQLITE_OK) goto done;
  eConflict = sqlite3_vtab_on_conflict(pTab->pConn->db);
  if (pOld == NULL || pKey->n != (size_t)nOld ||
      memcmp(pKey->a, pOld, (size_t)nOld) != 0) {
    /* a new row: INSERT, or an UPDATE that moves the row; a row there is
    ** refused (or skipped) under every mode but REPLACE and an INSERT's
    ** ABORT, the upsert */
    if (eConflict != SQLITE_REPLACE &&
        (pOld != NULL || eConflict != SQLITE_ABORT)) {
      int bExists = 0;
      rc = rowExists(pTab, pTxn, pKey->a, pKey->n, &bExists);
      if (rc != WCS_OK) {
        rc = engErr(pTab, rc, pTab->zName);
        goto done;
      }
      if (bExists) {
        if (eConflict != SQLITE_IGNORE && pOld == NULL) {
          char *zEsc = wcs_escape(pKey->a, pKey->n, 80);
          setErr(pVtab, "UNIQUE constraint failed: %s._key (row '%s' exists)",
                 pTab->zName, zEsc ? zEsc : "");
          free(zEsc);
        } else if (eConflict != SQLITE_IGNORE) {
          char *zFrom = wcs_escape(pOld, (size_t)nOld, 80);
          char *zEsc = wcs_escape(pKey->a, pKey->n, 80);
          setErr(pVtab,
                 "UNIQUE constraint failed: %s._key (the UPDATE moves row "
                 "'%s' onto row '%s', which exists; UPDATE OR REPLACE "
                 "replaces it)",
                 pTab->zName, zFrom ? zFrom : "", zEsc ? zEsc : "");
          free(zFrom);
          free(zEsc);
        }
        rc = SQLITE_CONSTRAINT;
        goto done;
      }
    } else if (eConflict == SQLITE_REPLACE) {
      rc = wcs_txn_delete_row(pTxn, pTab->pTab, pKey->a, pKey->n);
    }
    if (rc == WCS_OK && pOld) {
      rc = moveRow(pTab, pTxn, pOld, (size_t)nOld, pKey->a, pKey->n);
    }
    if (rc != WCS_OK) {
      rc = engErr(pTab, rc, pTab->zName);
      goto done;
    }
  }
  rc = applyColumns(pTab, pTxn, argv, pKey->a, pKey->n, iTs, pOld == NULL,
                    abSame, &nCell);
  if (rc != WCS_OK) {
    rc = pVtab->zErrMsg == NULL ? engErr(pTab, rc, pTab->zName)
                                : wcsToSqlite(rc);
    goto done;
  }
  if (bFrom && fromSeen(pTab, pKey->a, pKey->n, 1) < 0) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  if (pOld == NULL && nCell == 0 && wcs_table_family_count(pTab->pTab) == 0) {
    rc = setErr(pVtab,
                "%s: the table has no column family, so it cannot hold a "
                "row; declare one (FAMILY name) when creating the table",
                pTab->zName);
  } else if (pOld == NULL && nCell == 0) {
    rc = setErr(pVtab,
                "%s: this INSERT writes no cell; a row exists only while it "
                "has a cell, so give at least one qualifier or family value",
                pTab->zName);
  }
done:
  pKey->n = 0; /* its buffer is kept for the next row (tabFree frees it) */
  sqlite3_free(abSame);
  if (bFrom && rc != SQLITE_OK && pTab->iFromSp > 0) {
    /* the statement fails: none of its rows stays */
    wcs_txn_rollback_to(pTxn, pTab->iFromSp);
    fromClear(pTab);
  }
  return rc;
}

/* ====================================================================
** Transactions
**
** All tables of a store share the store's wcs_txn (WcsStore). SQLite
** calls xBegin for each table it writes; the first one starts the store
** transaction (a fresh snapshot, engine savepoint 0 = the empty state),
** later ones join it. The store commits (wcs_txn_commit: one atomic
** batch) in the first xCommit, once SQLite's own commit has succeeded:
** SQLite calls xSync before it locks the database file for its commit,
** and when that fails (SQLITE_BUSY: in rollback-journal mode another
** connection reads the file) it rolls back, which must leave nothing in
** the store. xSync checks what a commit would refuse
** (wcs_txn_precheck), so that such a failure still stops the whole
** transaction. A failure in xCommit (the store's disk full, an I/O error)
** SQLite cannot report: the next statement on a table of the store
** reports it (lostReport). SQLite has let go of its database lock by
** xCommit, so another connection may take it before the store commit is
** written: from xSync to its end the commit is "in flight" (the engine's
** commit gate), and a connection that holds SQLite's write lock waits for
** the commits in flight before it reads (awaitCommits, in xBegin and
** xFilter), as it would find SQLite's own tables committed. xCommit and
** xRollback end the store transaction when the last table leaves it. Savepoint
** levels are SQLite's (statement savepoints included); WcsStore.aSp maps
** them to engine savepoints 1, 2, ... A table joining late gets
** xSavepoint(N) for a level its store already recorded: that call must not
** record the level again (it would capture writes made after it).
** ==================================================================== */

/* xBegin */
static int wcsBegin(sqlite3_vtab *pVtab) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st;
  int rc = WCS_OK;
  if (pTab->pTab == NULL) tabRetry(pTab); /* xUpdate reports a failure */
  rc = lostReport(pTab);
  if (rc != SQLITE_OK) return rc;
  st = pTab->pStore;
  if (tabForked(pTab)) return wcsForkedErr(pTab);
  if (st && st->bFollow) {
    /* written to: open the store for writing, if its writer has gone */
    char *zErr = NULL;
    if (storeFollow(pTab->pConn, st, 1, &zErr) != SQLITE_OK) {
      setErr(pVtab, "%s: %s", pTab->zName, zErr ? zErr : "busy");
      sqlite3_free(zErr);
      return SQLITE_BUSY;
    }
  }
  if (st == NULL || pTab->pTab == NULL || pTab->bInTxn) return SQLITE_OK;
  /* a write that reads nothing first takes a table altered meanwhile as a
  ** read would (cursorCount); xUpdate reports one that cannot be */
  wcsTableFresh(pTab);
  if (pTab->pTab == NULL) return SQLITE_OK;
  if (st->nActive == 0) {
    /* SQLite holds its write lock (its OP_Transaction comes first): the
    ** transaction's reads must see the commits of its previous holders */
    awaitCommits(pTab, 1);
    if (st->pTxn == NULL) {
      rc = wcs_txn_begin(st->pEng, 0, &st->pTxn);
    } else {
      rc = wcs_txn_rollback(st->pTxn); /* empty; takes a fresh snapshot */
    }
    if (rc == WCS_OK) rc = wcs_txn_savepoint(st->pTxn, 0);
    if (rc != WCS_OK) return engErr(pTab, rc, "BEGIN");
    st->nSp = 0;
    st->bCommitted = 0;
    pTab->bJoining = 0;
  } else {
    pTab->bJoining = 1;
  }
  /* its commit passes this table's file lock: readers of that file wait
  ** for it once it is in flight */
  wcs_txn_gate_key(st->pTxn, gateKey(pTab));
  st->nActive++;
  pTab->bInTxn = 1;
  return SQLITE_OK;
}

/* xSync: whatever the store's commit would refuse is refused here, while
** SQLite can still roll the whole transaction back; the commit itself
** waits for xCommit (see above). SQLite may call it again for the same
** transaction (a COMMIT that failed with SQLITE_BUSY keeps it open). */
static int wcsSync(sqlite3_vtab *pVtab) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st = pTab->pStore;
  if (pTab->bInTxn && tabForked(pTab)) return wcsForkedErr(pTab);
  if (pTab->bInTxn && !st->bCommitted) {
    int rc = wcs_txn_precheck(st->pTxn);
    if (rc != WCS_OK) {
      /* not SQLITE_SCHEMA, on which SQLite would prepare the COMMIT again
      ** and run it after its rollback ("no transaction is active") */
      rc = engErr(pTab, rc, "COMMIT");
      return rc == SQLITE_SCHEMA ? SQLITE_ERROR : rc;
    }
    if (!pTab->bNoClock && othersReading(pTab)) {
      rc = clockTick(pTab);
      if (rc != SQLITE_OK) return rc;
    }
  }
  return SQLITE_OK;
}

static void leaveTxn(WcsTab *pTab) {
  WcsStore *st = pTab->pStore;
  pTab->bInTxn = 0;
  pTab->bJoining = 0;
  if (--st->nActive == 0) {
    WcsTab *q;
    st->bCommitted = 0;
    st->nSp = 0;
    markDrop(st); /* (the mark was in the transaction's log) */
    for (q = pTab->pConn->pTab; q; q = q->pNextTab) {
      if (q->pStore == st) q->bFnWrote = 0;
    }
  }
}

/* xCommit: SQLite's own commit succeeded; the first table of the store
** commits the store transaction. SQLite ignores what xCommit returns, so
** a failure is kept for the next statement (lostReport). */
static int wcsCommit(sqlite3_vtab *pVtab) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st = pTab->pStore;
  int rc = WCS_OK;
  if (tabForked(pTab)) {
    forkedTxnEnd(pTab);
    return SQLITE_OK;
  }
  pTab->bCreating = 0;
  if (!pTab->bInTxn) return SQLITE_OK;
  if (!st->bCommitted) {
    rc = wcs_txn_commit(st->pTxn);
    st->bCommitted = 1;
    if (rc == WCS_OK) {
      /* the store tables it wrote: those of the tables in it, and those
      ** its functions wrote */
      WcsTab *q;
      for (q = pTab->pConn->pTab; q; q = q->pNextTab) {
        if (q->pStore == st && (q->bInTxn || q->bFnWrote)) {
          readSnapRenewTable(q);
        }
      }
    }
  }
  leaveTxn(pTab);
  if (rc == WCS_OK) return SQLITE_OK;
  rc = engErr(pTab, rc, "COMMIT");
  sqlite3_free(st->zLost);
  st->zLost = sqlite3_mprintf(
      "a COMMIT of this connection that SQLite reported done could not "
      "write the store %s, and its changes to the store were not saved "
      "(%s); the store is as it was before that transaction",
      st->zPath ? st->zPath : "in memory", pTab->base.zErrMsg);
  /* (not SQLITE_NOMEM, for which SQLite would show its own words
  ** instead: the commit's memory ran out, not the report's) */
  st->rcLost = st->zLost == NULL             ? SQLITE_NOMEM
               : (rc & 0xff) == SQLITE_NOMEM ? SQLITE_ERROR
                                             : rc;
  /* and at once in SQLite's error log (sqlite3_config SQLITE_CONFIG_LOG),
  ** for a connection that closes before its next statement */
  sqlite3_log(rc, "wcs: %s", st->zLost ? st->zLost : pTab->base.zErrMsg);
  return rc;
}

/* xRollback. A table created in the transaction is gone from SQLite's
** schema after it: the store table its xCreate made goes too. */
static int wcsRollback(sqlite3_vtab *pVtab) {
  WcsTab *pTab = (WcsTab *)pVtab;
  int rc = WCS_OK;
  if (tabForked(pTab)) {
    forkedTxnEnd(pTab);
    return SQLITE_OK;
  }
  if (pTab->bInTxn) {
    if (!pTab->pStore->bCommitted) {
      rc = wcs_txn_rollback(pTab->pStore->pTxn);
      thawReaders(pTab->pStore);
    }
    leaveTxn(pTab);
  }
  if (pTab->bCreating && pTab->bOwner && pTab->pTab && pTab->pStore) {
    int rc2;
    wcs_table_close(pTab->pTab);
    pTab->pTab = NULL;
    rc2 = wcs_table_drop(pTab->pStore->pEng, pTab->zStoreTable);
    if (rc == WCS_OK) rc = rc2;
  }
  pTab->bCreating = 0;
  return rc == WCS_OK ? SQLITE_OK : engErr(pTab, rc, "ROLLBACK");
}

/* xSavepoint(N): record the current state as SQLite savepoint N. */
static int wcsSavepoint(sqlite3_vtab *pVtab, int iSavepoint) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st = pTab->pStore;
  int i, rc;
  if (!pTab->bInTxn || st->bCommitted || tabForked(pTab)) return SQLITE_OK;
  /* a statement begins (or a SAVEPOINT): the last one's mark is done,
  ** unless this one is nested in it (a statement a function runs) */
  if (iSavepoint < st->iMarkLevel) markDrop(st);
  if (pTab->bJoining) {
    pTab->bJoining = 0;
    for (i = 0; i < st->nSp; i++) {
      if (st->aSp[i] == iSavepoint) return SQLITE_OK;
    }
  }
  while (st->nSp > 0 && st->aSp[st->nSp - 1] >= iSavepoint)
    st->nSp--;
  if (st->nSp >= st->nSpAlloc) {
    int nNew = st->nSpAlloc ? st->nSpAlloc * 2 : 8;
    int *aNew = sqlite3_realloc64(st->aSp, sizeof(int) * (size_t)nNew);
    if (aNew == NULL) return SQLITE_NOMEM;
    st->aSp = aNew;
    st->nSpAlloc = nNew;
  }
  st->aSp[st->nSp++] = iSavepoint;
  rc = wcs_txn_savepoint(st->pTxn, st->nSp);
  return rc == WCS_OK ? SQLITE_OK : engErr(pTab, rc, "SAVEPOINT");
}

/* xRelease(N): forget savepoints >= N, keeping their changes. */
static int wcsRelease(sqlite3_vtab *pVtab, int iSavepoint) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st = pTab->pStore;
  int i, rc = WCS_OK;
  if (!pTab->bInTxn || st->bCommitted || tabForked(pTab)) return SQLITE_OK;
  /* a statement ends (or a RELEASE): the marked one, or one it is in,
  ** unless numbered above it (a statement nested in it) */
  if (iSavepoint < st->iMarkLevel) markDrop(st);
  for (i = 0; i < st->nSp; i++) {
    if (st->aSp[i] >= iSavepoint) {
      rc = wcs_txn_release(st->pTxn, i + 1);
      st->nSp = i;
      break;
    }
  }
  return rc == WCS_OK ? SQLITE_OK : engErr(pTab, rc, "RELEASE");
}

/* xRollbackTo(N): back to the state at savepoint N (kept). A level the
** store never recorded predates its transaction: back to the start. */
static int wcsRollbackTo(sqlite3_vtab *pVtab, int iSavepoint) {
  WcsTab *pTab = (WcsTab *)pVtab;
  WcsStore *st = pTab->pStore;
  int i, rc;
  if (!pTab->bInTxn || st->bCommitted || tabForked(pTab)) return SQLITE_OK;
  for (i = st->nSp - 1; i >= 0 && st->aSp[i] > iSavepoint; i--) {
  }
  if (i < 0) {
    rc = wcs_txn_rollback_to(st->pTxn, 0);
    st->nSp = 0;
  } else {
    rc = wcs_txn_rollback_to(st->pTxn, i + 1);
    st->nSp = i + 1;
  }
  thawReaders(st);
  return rc == WCS_OK ? SQLITE_OK : engErr(pTab, rc, "ROLLBACK TO");
}

/* xFindFunction: starts_with(column, prefix) becomes a constraint that
** xBestIndex sees (SQLITE_INDEX_CONSTRAINT_FUNCTION), so it can be planned
** as a prefix scan. */
static int wcsFindFunction(sqlite3_vtab *pVtab, int nArg, const char *zName,
                           void (**pxFunc)(sqlite3_context *, int,
                                           sqlite3_value **),
                           void **ppArg) {
  (void)pVtab;
  if (nArg == 2 && sqlite3_stricmp(zName, "starts_with") == 0) {
    *pxFunc = wcsStartsWithFunc;
    *ppArg = NULL;
    return SQLITE_INDEX_CONSTRAINT_FUNCTION;
  }
  return 0;
}

static sqlite3_module wcsModule = {
    3,               /* iVersion: savepoints, shadow tables */
    wcsCreate,       /* xCreate: CREATE VIRTUAL TABLE */
    wcsConnect,      /* xConnect: reattach on a later open */
    wcsBestIndex,    /* xBestIndex: constraints -> key ranges */
    wcsDisconnect,   /* xDisconnect */
    wcsDestroy,      /* xDestroy: DROP TABLE */
    wcsOpen,         /* xOpen: a cursor */
    wcsClose,        /* xClose */
    wcsFilter,       /* xFilter: start a scan */
    wcsNext,         /* xNext */
    wcsEof,          /* xEof */
    wcsColumn,       /* xColumn */
    wcsRowid,        /* xRowid: history views only */
    wcsUpdate,       /* xUpdate: INSERT/UPDATE/DELETE */
    wcsBegin,        /* xBegin */
    wcsSync,         /* xSync: checks what a commit would refuse */
    wcsCommit,       /* xCommit: commits the store */
    wcsRollback,     /* xRollback */
    wcsFindFunction, /* xFindFunction: starts_with */
    wcsRename,       /* xRename */
    wcsSavepoint,    /* xSavepoint */
    wcsRelease,      /* xRelease */
    wcsRollbackTo,   /* xRollbackTo */
    wcsShadowName    /* xShadowName: the commit clock */
};

/* ====================================================================
** Entry points
** ==================================================================== */

static int registerAll(sqlite3 *db, char **pzErrMsg) {
  WcsConn *pConn;
  int rc;
  if (sqlite3_libversion_number() < 3038000) {
    if (pzErrMsg) {
      *pzErrMsg = sqlite3_mprintf("wcs needs SQLite 3.38 or later, not %s",
                                  sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  pConn = sqlite3_malloc(sizeof(*pConn));
  if (pConn == NULL) return SQLITE_NOMEM;
  memset(pConn, 0, sizeof(*pConn));
  pConn->db = db;
  pConn->nRef = 1;
  /* on failure sqlite3_create_module_v2 calls connDestroy itself */
  rc = sqlite3_create_module_v2(db, "wcs", &wcsModule, pConn, connDestroy);
  if (rc == SQLITE_OK) {
    pthread_mutex_lock(&gConnMutex);
    pConn->pNextConn = gConnList;
    gConnList = pConn;
    pthread_mutex_unlock(&gConnMutex);
    rc = wcsRegisterFunctions(db, pConn);
  }
  if (rc != SQLITE_OK && pzErrMsg) {
    *pzErrMsg = sqlite3_mprintf("wcs: %s", sqlite3_errmsg(db));
  }
  return rc;
}

/* The loadable extension's entry point (`.load ./build/wcs`): the one
** symbol the module exports (it is built with hidden visibility, so that
** calls between its files are direct). */
#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
    int sqlite3_wcs_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi) {
  SQLITE_EXTENSION_INIT2(pApi);
  return registerAll(db, pzErrMsg);
}

wcs_engine *wcs_sqlite_engine(sqlite3 *db, const char *zSchema) {
  WcsConn *pConn;
  wcs_engine *pEng = NULL;
  char *zPath = NULL;
  if (zSchema == NULL) zSchema = "main";
  /* no such schema: NULL (an in-memory or temporary database: "") */
  if (db == NULL || sqlite3_db_filename(db, zSchema) == NULL) return NULL;
  if (storePath(db, zSchema, NULL, &zPath) != SQLITE_OK) return NULL;
  pthread_mutex_lock(&gConnMutex);
  /* the latest registration on db: a second one replaced the module */
  for (pConn = gConnList; pConn && pConn->db != db; pConn = pConn->pNextConn) {
  }
  if (pConn) {
    WcsStore *st = connFindStore(pConn, zPath);
    if (st) pEng = st->pEng;
  }
  pthread_mutex_unlock(&gConnMutex);
  sqlite3_free(zPath);
  return pEng;
}

int wcs_register(sqlite3 *db) {
#ifndef SQLITE_CORE
  if (sqlite3_api == NULL) return SQLITE_MISUSE;
#endif
  return registerAll(db, NULL);
}
