/*
** vtab.h — internals shared by the files of the SQLite module (vtab/).
** The public entry points are wcs_register() (include/wcs.h, section
** "SQLite") and sqlite3_wcs_init() (the loadable extension); the SQL
** surface is documented in doc/sql.md.
**
** Files:
**   vtab.c   the module `wcs`: tables and history views, planning
**            (xBestIndex/xFilter), writes, transactions, entry points
**   func.c   the SQL functions (wcs_key_encode, to_int64, starts_with, ...)
**   value.c  cell values <-> SQL values and family cells <-> JSON text,
**            with the lossless conventions of doc/sql.md ("Values")
**
** Objects:
**   WcsConn   one per SQLite connection (the module's client data): the
**             stores this connection opened and its connected tables.
**   WcsStore  one open store (engine) as this connection uses it, with the
**             one wcs_txn that every table of that store shares, so a
**             SQLite transaction is atomic over all of them.
**   WcsTab    one virtual table (sqlite3_vtab subclass).
*/
#ifndef WCS_VTAB_H
#define WCS_VTAB_H

#include <sqlite3ext.h>
#include <stdint.h>

#include "keyschema/schema.h"
#include "storage/util.h"
#include "wcs.h"

#ifndef SQLITE_CORE
extern const sqlite3_api_routines *sqlite3_api;
#endif

/* The subtype SQLite's JSON functions give their results, and by which
** they take an argument as JSON rather than as a string: family columns
** and valid text of declared JSON columns carry it, so that
** json_object('stats', stats) nests the object. */
#define WCS_JSON_SUBTYPE 74 /* 'J' */

typedef struct WcsConn WcsConn;
typedef struct WcsStore WcsStore;
/* A declared qualifier column as xColumn's common case needs it: one
** place to read per column of a row, instead of the schema's qualifier
** and family records. Built with the table; zName is the schema's. */
typedef struct WcsQualCol {
  int iFamily;       /* family index */
  int nName;         /* bytes of zName */
  const char *zName; /* the qualifier */
  int bInt8;         /* an 8-byte value is a big-endian int64: an INT64
                     ** column (not DECIMAL) or a SUM/MIN/MAX family */
} WcsQualCol;

typedef struct WcsTab WcsTab;

/* A database file's read moment of a store (vtab.c, readSnap). */
typedef struct WcsReadSnap {
  uint64_t iKey;   /* the file (gateKey) */
  wcs_snapshot *p; /* the store's state it reads */
} WcsReadSnap;

struct WcsStore {
  WcsStore *pNext;  /* next store of the same connection */
  char *zPath;      /* resolved store directory; NULL for the connection's
                    ** in-memory store */
  wcs_engine *pEng; /* the engine (shared by path across connections) */
  wcs_txn *pTxn;    /* the shared transaction; NULL until first needed */
  int nTab;         /* connected tables (WcsTab) of this connection using
                    ** this store; at 0 the heat counters are saved */
  int nActive;      /* tables of this store inside the SQLite write
                    ** transaction (xBegin seen, no xCommit/xRollback yet) */
  int bCommitted;   /* the current transaction was committed (by the
                     ** first xCommit of its tables) */
  int rcLost;       /* a commit that failed in xCommit, which SQLite
                    ** cannot report (zLost says what): the next statement
                    ** on a table of the store does */
  char *zLost;
  int nSp;          /* entries in aSp */
  int nSpAlloc;     /* allocated entries of aSp */
  int *aSp;         /* aSp[i] = SQLite savepoint level recorded as engine
                    ** savepoint i+1 (engine savepoint 0 = begin), strictly
                    ** increasing */
  int bFollow;      /* another process writes the store: pEng is this
                    ** connection's own read-only open of it, as of a
                    ** moment (wcs_options.bFollow), opened again when a
                    ** statement starts and the writer moved on */
  int nCursor;      /* cursors of this connection open on the store */
  struct WcsCursor *pOpen; /* those cursors, linked by pNextOpen */
  /* The statement writing the store now, of a table declared another way
  ** too (markWrite): sqlite3_total_changes64 when it first wrote (which
  ** moves when it ends), the table and declaration it writes, the store
  ** transaction's mark before its first write, and the moment made from
  ** that mark once a reader needs it; iMarkLevel: SQLite's savepoints
  ** numbered below it were open when it first wrote (its own statement
  ** savepoint, if it has one, is the last of them): a savepoint begun or
  ** released at that number or above is a statement nested in it */
  int bMark;
  int iMarkLevel;
  sqlite3_int64 nMarkChanges;
  uint32_t iMarkTable;
  struct WcsTab *pMarkTab;
  size_t iMark;
  wcs_moment *pMoment;
  WcsReadSnap *aReadSnap; /* what they read outside a store transaction,
                          ** while any is open: a moment per database
                          ** file (readSnap) */
  int nReadSnap, nReadSnapAlloc;
  wcs_options opt;  /* the options it was opened with */
};

struct WcsConn {
  sqlite3 *db;        /* the connection */
  WcsConn *pNextConn; /* the process's list of registrations (vtab.c) */
  int nRef;           /* 1 for the module registration + 1 per WcsTab */
  WcsStore *pStore;   /* stores opened by this connection (kept open until
                      ** the connection closes, so an in-memory store lives
                      ** as long as the connection) */
  WcsTab *pTab;       /* connected tables, for the SQL functions */
  unsigned nGen;      /* changes whenever a table connects or disconnects,
                      ** so the functions' cached lookups can tell */
};

struct WcsTab {
  sqlite3_vtab base;        /* must be first */
  WcsConn *pConn;           /* owning connection state (a reference) */
  WcsStore *pStore;         /* the store (owned by pConn) */
  WcsTab *pNextTab;         /* next connected table of pConn */
  unsigned iOthersGen;      /* pConn->nGen + 1 when bOthers was found */
  int bOthers;              /* another declaration of the connection names
                            ** the same store table (otherDeclarations) */
  char *zName;              /* the virtual table's SQL name */
  char *zDb;                /* its schema ("main", "temp", ...) */
  uint64_t iGateKey;        /* its database file's key in the commit gate
                            ** (gateKey); 0 until first needed */
  int bFnWrote;             /* a SQL function wrote it in the store
                            ** transaction (wcsWriteTxn joined it) */
  char *zStoreTable;        /* the table's name inside the store */
  char *zMissing;           /* why the store table could not be opened (set
                            ** when pTab is NULL) */
  int bStoreBusy;           /* ... because another process holds the store */
  int bStoreDamaged;        /* ... because a file of the store is damaged */
  int rcStoreFailed;        /* ... or, not 0, because the store, which is
                            ** there, could not be opened for this SQLite
                            ** code (a full disk, an I/O error, a file
                            ** system that refuses the lock file) */
  char *zPath;              /* the store's path, kept while bStoreBusy,
                            ** bStoreDamaged or rcStoreFailed so that a
                            ** later statement can try again */
  char *zDecl;              /* the CREATE TABLE text declared to SQLite */
  int bStale;               /* the store is free, but its schema declares
                            ** other columns than zDecl: reopen to use it */
  wcs_table *pTab;          /* handle on the store table; NULL if it is missing
                            ** (then only DROP TABLE works) */
  const ks_schema *pSchema; /* wcs_table_schema(pTab), or pOwnSchema */
  ks_schema *pOwnSchema;    /* schema parsed from the arguments, kept when
                            ** the store table is missing */
  int bHistory;             /* a HISTORY view: one row per cell */
  int bOwner;               /* declared with KEY/FAMILY clauses: it created the
                            ** store table, so DROP TABLE drops it */
  int bNamed;               /* a TABLE 'name' clause was given */
  int bInTxn;               /* xBegin seen in the current transaction */
  int bJoining;             /* xBegin just joined an active store transaction;
                            ** the next xSavepoint must not re-record a level */
  int bCreating;            /* made by xCreate in the SQLite transaction still
                            ** open, which SQLite joins it to without an
                            ** xBegin (xUpdate begins instead); its ROLLBACK
                            ** drops the store table xCreate made (bOwner) */
  /* --- the commit clock (vtab.c, "The commit clock") */
  sqlite3_stmt *pTick; /* UPDATE of the table's <name>_wcsclock; NULL
                       ** until first needed */
  int bNoClock;        /* the table has no clock (declared before
                       ** clocks existed): commits tick nothing */
  /* --- column layout (see the comment on declareTable in vtab.c) */
  int nField;               /* key fields */
  int nQual;                /* declared qualifier columns */
  int nFamily;              /* families */
  int nCol;                 /* declared SQL columns */
  int iColQual;             /* first qualifier column (main table) */
  int iColFam;              /* first family JSON column (main table) */
  int iColKey;              /* _key */
  int iColTs;               /* _timestamp */
  int iColFamily;           /* history: family */
  int iColQualifier;        /* history: qualifier */
  int iColValue;            /* history: value */
  int iColLatest;           /* history: hidden latest_n argument */
  int iColCell;             /* history: hidden _cell, the primary key */
  int *aQualOrder;          /* [nQual] declared qualifiers ordered by (family,
                            ** qualifier bytes), the order cells arrive in */
  int *aFamQual;            /* [nFamily+1]: family f's entries in aQualOrder are
                            ** aQualOrder[aFamQual[f] .. aFamQual[f+1]-1] */
  int *aQualLen;            /* [nQual] strlen of each qualifier name */
  WcsQualCol *aQualCol;     /* [nQual] what xColumn's common case reads */
  double nRowEst;           /* cached row estimate for costs */
  double *aPrefixEst;       /* [nField+1] distinct values of the first n key
                            ** fields, 0 = not known yet (costs only) */
  sqlite3_int64 *aPrefixAt; /* [nField+1] when aPrefixEst[n] was taken,
                            ** milliseconds of CLOCK_MONOTONIC */
  struct WcsCursor *pSpare; /* a closed cursor kept with its buffers for
                            ** the next xOpen (SQLite opens one per run of
                            ** a statement); freed by tabFree */
  wcs_buf updKey;           /* xUpdate's row key, kept between calls */
  wcs_buf updCell;          /* xUpdate's encoded cell value, likewise */
  /* UPDATE ... FROM's rows written by the running statement (fromSeen) */
  sqlite3_stmt *pFromStmt; /* that statement, or NULL */
  int nFromRun;            /* ... and its run (SQLITE_STMTSTATUS_RUN) */
  uint64_t nOpens;         /* cursors opened on the table (xOpen) */
  uint64_t nFromOpens;     /* ... when that statement wrote its first row */
  wcs_buf fromKeys;        /* the rows' keys, each led by its length */
  uint32_t *aFromSlot;     /* hash set of offsets+1 into fromKeys */
  uint32_t nFromSlot, nFromUsed; /* slots (a power of 2), and used */
  int iFromSp;                   /* the engine savepoint that statement took
                                 ** (0: none): a failing row rolls back to it */
};

/* ---- vtab.c */

/* Find the wcs table that SQL means by zName (case-insensitive): the one
** of the schema SQLite searches first (temp, main, attached databases in
** order), or "schema.table"; connecting it first if it exists in the
** schema but was not used yet. On failure returns NULL and sets *pzErr
** (sqlite3_malloc'd). */
WcsTab *wcsFindTable(WcsConn *pConn, const char *zName, char **pzErr);

/* A transaction to write through for the SQL functions: the store's
** shared transaction when the current SQLite transaction already writes to
** this store (*peOwn = WCS_OWN_NONE), else a new exclusive one, under
** SQLite's write lock on the table's database (vtab.c), that the caller
** ends with wcsEndOwnTxn(). SQLITE_OK, or an error code with the message
** on pTab (zErrMsg). */
#define WCS_OWN_NONE   0 /* joined the SQLite transaction's */
#define WCS_OWN_BEGUN  1 /* own, after BEGIN IMMEDIATE */
#define WCS_OWN_TICKED 2 /* own, inside an enclosing transaction */
int wcsWriteTxn(WcsTab *pTab, wcs_txn **ppTxn, int *peOwn);

/* For a SQL function about pTab: a store another process writes is brought
** up to its latest commit first, unless the connection is reading it
** (vtab.c, storeFollow). */
void wcsStoreFresh(WcsTab *pTab);

/* pTab's store table was altered (wcs_alter, in another connection or
** program) since its handle opened: take it as it is now while no cursor
** or transaction of the connection uses the store (tabRefresh). Returns 1
** when the name now holds another table (dropped and created again: the
** declaration keeps the old one), else 0. */
int wcsTableFresh(WcsTab *pTab);

/* For a SQL function that writes pStore of pConn: a store another process
** writes is opened for writing if that process has closed it. SQLITE_OK,
** or SQLITE_BUSY and *pzErr (sqlite3_free) saying why it cannot be. */
int wcsStoreWritable(WcsConn *pConn, WcsStore *pStore, char **pzErr);
/* SQLITE_OK when the row key decodes under pTab's key schema (every key
** does when the table has none); else the error code and, unless out of
** memory, *pzErr = "table: why" (sqlite3_free it). */
int wcsCheckRowKey(WcsTab *pTab, const uint8_t *pKey, int nKey, char **pzErr);
/* End an own transaction of wcsWriteTxn(): commit it if rc (a WCS_* code
** of the writes) is WCS_OK, else roll it back; frees pTxn. SQLITE_OK, or
** the error code with the message on pTab. */
int wcsEndOwnTxn(WcsTab *pTab, wcs_txn *pTxn, int eOwn, int rc);

/* The transaction reads of this store should go through (NULL: the latest
** committed state). */
wcs_txn *wcsReadTxn(WcsStore *pStore);

/* Map a WCS_* code to the SQLite code to return. */
int wcsToSqlite(int rc);

/* Why pTab, whose store table is not open (pTab->pTab == NULL), cannot be
** used: the message is set on pTab (zErrMsg) and the code returned. */
int wcsMissingErr(WcsTab *pTab);

/* The error of a table whose store table was dropped and created again
** since the declaration opened it (wcsTableFresh returned 1): set on pTab,
** SQLITE_SCHEMA returned. */
int wcsReplacedErr(WcsTab *pTab);
/* 1 after setting pTab's error when its store table was dropped since the
** connection opened it (the error statements give); else 0. */
int wcsDroppedErr(WcsTab *pTab);

/* The error of a table whose connection a parent process opened before
** fork() (wcs_engine_forked): set on pTab, SQLITE_ERROR returned. */
int wcsForkedErr(WcsTab *pTab);

/* The SQL columns a table of schema s declares (not a history view). */
int wcsTableColumns(const ks_schema *s);

/* SQLITE_OK when a table of schema s has no more columns than SQLite
** allows on db; else SQLITE_ERROR and *pzErr (sqlite3_free) for table
** zName. */
int wcsColumnsFit(sqlite3 *db, const char *zName, const ks_schema *s,
                  char **pzErr);

/* Whether a statement of db that writes is running (one that calls a SQL
** function, or runs the statement that does). */
int wcsWriteInProgress(sqlite3 *db);
/* A directory path zPath as STORE takes it for a table of schema zDb:
** absolute as is, relative from the database file's directory (the
** current one for in-memory databases); sqlite3_malloc'd into *pzPath.
** SQLITE_MISUSE for ":memory:". */
int wcsPathFromDb(sqlite3 *db, const char *zDb, const char *zPath,
                  char **pzPath);

/* ---- func.c */
int wcsRegisterFunctions(sqlite3 *db, WcsConn *pConn);
/* starts_with(a, b): 1 if the bytes of a begin with the bytes of b. Also
** the implementation xFindFunction hands SQLite for table columns. */
void wcsStartsWithFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---- value.c */

/* A value on its way into a cell: an SQL value or a JSON member. */
#define WCSV_NULL 0
#define WCSV_INT  1
#define WCSV_REAL 2
#define WCSV_TEXT 3
#define WCSV_BLOB 4
#define WCSV_JSON 5 /* p,n: JSON text (an object or array; any value for a
                    ** declared JSON column) */
typedef struct WcsVal {
  int eType;        /* WCSV_* */
  sqlite3_int64 i;  /* WCSV_INT */
  double r;         /* WCSV_REAL */
  const uint8_t *p; /* TEXT, BLOB, JSON bytes (borrowed) */
  int n;
} WcsVal;

/* Fill *pV from an SQL value (pointers borrowed from pVal). */
void wcsValFromSql(WcsVal *pV, sqlite3_value *pVal);

/* Encode v for declared qualifier pQual (NULL: an undeclared qualifier)
** into pOut (cleared first). WCS_MISMATCH with *pzErr naming zCol on a value
** the type cannot hold. */
int wcsEncodeCell(const ks_qualifier *pQual, const WcsVal *v, wcs_buf *pOut,
                  const char *zCol, char **pzErr);

/* The common cases of wcsEncodeCell without a buffer: 1 and the cell's
** bytes in *pp, *pn (v's own bytes, or aInt's 8 bytes) for a BLOB, an
** integer for a BIG ENDIAN INT64 column, and text for a STRING or BYTES
** column; 0 for anything else (then wcsEncodeCell). */
int wcsCellBytes(const ks_qualifier *pQual, const WcsVal *v, uint8_t aInt[8],
                 const void **pp, size_t *pn);

/* The number a cell value of declared qualifier pQual (eAgg its family's
** KS_AGG_*) is as a column: WCSV_INT (*pi) or WCSV_REAL (*pr), as
** wcsResultCell gives it; 0 when it is not a number there (text, a blob,
** bytes that do not decode; a NaN is WCSV_REAL here, a BLOB there). */
int wcsDecodeNumber(const ks_qualifier *pQual, int eAgg, const uint8_t *p,
                    size_t n, sqlite3_int64 *pi, double *pr);

/* Set the SQL result for a cell value of declared qualifier pQual (NULL:
** undeclared: TEXT if valid UTF-8, else BLOB; eAgg the family's KS_AGG_*: SUM,
** MIN and MAX states are INT64). Bytes that do not decode
** under the declared type come back as a BLOB. */
void wcsResultCell(sqlite3_context *ctx, const ks_qualifier *pQual, int eAgg,
                   const void *p, size_t n);

/* Append the JSON object of one family's latest cells aCell[0..nCell-1]
** (qualifiers ascending, one cell per qualifier) to pOut. */
int wcsFamilyJson(wcs_buf *pOut, const ks_schema *pSchema, int iFamily,
                  const wcs_cell *aCell, int nCell);

/* Append a JSON string for bytes p[0..n-1]; bytes that are not valid UTF-8
** become \udcXX escapes (the qualifier-name convention). */
int wcsJsonString(wcs_buf *pOut, const uint8_t *p, size_t n);

/* Append the JSON form of an undeclared cell value (string or
** {"$hex":"..."}). */
int wcsJsonBytes(wcs_buf *pOut, const uint8_t *p, size_t n);

/* One member of a JSON object written into a family column. */
typedef struct WcsMember {
  uint8_t *pKey; /* decoded qualifier bytes (points into the arena) */
  int nKey;
  WcsVal v; /* the value; TEXT/BLOB/JSON point into the arena or
            ** the input */
  const uint8_t *pRaw; /* the value's JSON text in the input, without the
                       ** white space around it (what a declared JSON
                       ** column stores) */
  int nRaw;
  int bWideInt; /* an integer literal beyond INT64 (v is its REAL) */
} WcsMember;
typedef struct WcsObject {
  int nMember;
  WcsMember *aMember; /* sqlite3_malloc'd */
  wcs_buf arena;      /* decoded strings */
} WcsObject;

/* Parse JSON text z[0..n-1], which must be an object, into pObj. On error
** WCS_MISMATCH and *pzErr (sqlite3_malloc'd). Free with wcsObjectClear. */
int wcsParseObject(const char *z, int n, WcsObject *pObj, char **pzErr);
void wcsObjectClear(WcsObject *pObj);

/* The bytes of z[0..n-1] if it is the JSON object {"$hex": "<hex>"} alone
** (white space allowed), as a family column shows bytes: WCS_OK with them
** appended to pOut, WCS_MISMATCH if it is anything else, or WCS_NOMEM. */
int wcsJsonHexValue(const char *z, int n, wcs_buf *pOut);

/* The bytes of z[0..n-1] if it is one JSON string alone (white space
** allowed), as a family column shows an undeclared value whose bytes are
** text (`\udcXX` as byte XX): WCS_OK with them appended to pOut,
** WCS_MISMATCH if it is anything else, or WCS_NOMEM. */
int wcsJsonStringValue(const char *z, int n, wcs_buf *pOut);

/* 1 if z[0..n-1] is one valid JSON value (surrounding space allowed). */
int wcsJsonValid(const char *z, int n);

/* Parse JSON text that must be an object and call xKey for each key
** (decoded bytes), for map_keys(). */
int wcsJsonKeys(const char *z, int n, void *pCtx,
                int (*xKey)(void *, const uint8_t *, int), char **pzErr);

/* Text to number as SQLite's numeric affinity does: returns WCSV_INT or
** WCSV_REAL (filling *pi / *pr), or WCSV_TEXT if it is not a number. */
int wcsTextToNumber(const uint8_t *p, int n, sqlite3_int64 *pi, double *pr);

/* A REAL as an INT64 takes it: 1 and *pi when r is whole and in
** (-2^63, 2^63), else 0. Not -2^63 itself: an integer literal past the
** range, -9223372036854775809, is that REAL, as 9223372036854775808 is
** 2^63; wcsIntFieldErr says so. */
int wcsRealToInt(double r, sqlite3_int64 *pi);

/* The message for value v that integer key field zField (of type zType)
** cannot hold: "key field F is INT64: cannot store ...", saying whether v
** is out of INT64's range or not an integer, with v as SQL quotes it
** (cut short). sqlite3_free() it; NULL when out of memory. */
char *wcsIntFieldErr(const char *zField, const char *zType, sqlite3_value *v);

#endif /* WCS_VTAB_H */
