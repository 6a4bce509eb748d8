/*
** wcs.h — the public C API of wcs, an embedded Bigtable-style wide-column
** store. This header is the manual for embedders.
**
** Three levels, each usable without the ones above it:
**
**   1. The store (section "Store"): a sorted, durable key-value store — an
**      LSM tree with a write-ahead log, zstd-compressed sorted files,
**      snapshots and iterators. Keys and values are byte strings ordered by
**      memcmp (shorter prefix first).
**   2. Tables (section "Tables"): Bigtable's data model on the store —
**      tables with row key schemas, column families with GC policies,
**      timestamped cells, mutations and row reads.
**   3. SQL: wcs_register() (section "SQLite") makes every table visible to
**      SQLite as a virtual table; see doc/sql.md.
**
** Conventions (as in SQLite and LMDB):
**   - Every call returns an int result code: WCS_OK (0) or an error below.
**     The codes are numbered like SQLite's so the SQL layer passes them on
**     unchanged. "Not found" is a result (an out-parameter), never an error.
**   - After an error, wcs_errmsg(db) gives a message that names the thing
**     (file and offset, key, table) and what to do; it stays valid until the
**     next call on the same handle.
**   - Out-parameters come first. A `**ppOut` that the call fills belongs to
**     the caller and is freed by the matching *_free()/*_close(), which
**     accept NULL. Borrowed pointers say how long they remain valid.
**   - A wcs_db handle may be used from several threads at once; iterators,
**     batches and snapshots may be used by one thread at a time.
*/
#ifndef WCS_H
#define WCS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WCS_VERSION        "0.1.0"
#define WCS_VERSION_NUMBER 1000

/*
** Result codes. Same numbers as SQLite's primary result codes where the
** meaning matches.
*/
#define WCS_OK         0  /* success */
#define WCS_ERROR      1  /* generic error: bad argument, bad schema, ... */
#define WCS_INTERNAL   2  /* an internal invariant failed (a bug) */
#define WCS_PERM       3  /* permission denied on a file or directory */
#define WCS_ABORT      4  /* operation aborted (e.g. CheckAndMutate lost) */
#define WCS_BUSY       5  /* store is locked by another process */
#define WCS_LOCKED     6  /* resource in use within this process */
#define WCS_NOMEM      7  /* out of memory */
#define WCS_READONLY   8  /* write to a store opened read-only */
#define WCS_INTERRUPT  9  /* interrupted by the caller */
#define WCS_IOERR     10  /* an I/O error; the message names the file */
#define WCS_CORRUPT   11  /* bad bytes on disk; message names file, offset */
#define WCS_NOTFOUND  12  /* internal only: never returned by a public call */
#define WCS_FULL      13  /* disk full (ENOSPC) */
#define WCS_CANTOPEN  14  /* cannot open or create a file or directory */
#define WCS_PROTOCOL  15  /* file format version not understood */
#define WCS_SCHEMA    17  /* schema or catalog problem */
#define WCS_TOOBIG    18  /* a key, qualifier or value exceeds a limit */
#define WCS_CONSTRAINT 19 /* a value breaks the key order or a constraint */
#define WCS_MISMATCH  20  /* data type mismatch */
#define WCS_MISUSE    21  /* API used incorrectly */
#define WCS_RANGE     25  /* argument out of range */

/* A short English name for a result code ("WCS_CORRUPT: ..."), static. */
const char *wcs_errstr(int rc);

/* ====================================================================
** Store
** ==================================================================== */

typedef struct wcs_db wcs_db;             /* an open store */
typedef struct wcs_batch wcs_batch;       /* an atomic group of writes */
typedef struct wcs_iter wcs_iter;         /* a cursor over sorted keys */
typedef struct wcs_snapshot wcs_snapshot; /* a frozen view (a sequence no.) */

/* When a commit reaches the disk. */
#define WCS_SYNC_OFF    0 /* never fsync: a process crash loses nothing that
                          ** write() accepted, a power cut may lose more */
#define WCS_SYNC_NORMAL 1 /* fsync at WAL rotation, flush and close: a
                          ** process crash loses nothing, a power cut may
                          ** lose the last commits */
#define WCS_SYNC_FULL   2 /* fsync the WAL before a commit returns (group
                          ** commit shares one fsync among waiting writers) */

/*
** Options for wcs_db_open(). Call wcs_options_init() first, then change
** what you need; zero/unset fields keep their defaults.
*/
typedef struct wcs_options {
  int iSync;              /* WCS_SYNC_*; default WCS_SYNC_NORMAL */
  int bReadOnly;          /* open for reading only (shared lock) */
  int bCreate;            /* create the store if missing; default 1 */
  int bInMemory;          /* no files at all: zPath is ignored */
  size_t nMemtable;       /* memtable byte budget; default 64 MiB */
  size_t nCache;          /* block cache byte budget; default 64 MiB */
  int nBlockSize;         /* data block target size, 4096..65536; def 16K */
  int iZstdLevel;         /* zstd level for data blocks (1..19; 0 = none);
                          ** default 3 */
  int nBloomBits;         /* bloom bits per key; 0 = no bloom; default 10 */
  /* Optional: which leading part of a key the bloom filters index, so a
  ** whole row (many keys sharing the prefix) is found or skipped by one
  ** probe. Returns the prefix length (<= nKey), or -1 to leave the key out
  ** of the filter. NULL: blooms index whole keys. Must be a pure function,
  ** the same every time the store is opened. */
  int (*xBloomPrefix)(const void *pKey, int nKey);
  int nL0Trigger;         /* level-0 files that start a compaction; def 4 */
  int nL0Stop;            /* level-0 files that stall writers; default 20 */
  uint64_t nL1Bytes;      /* target size of level 1; default 64 MiB; each
                          ** deeper level is 10x bigger */
  uint64_t nFileBytes;    /* target size of a sorted file; default 64 MiB */
  int bNoBackground;      /* flush/compact in the writer's thread (tests) */
} wcs_options;

void wcs_options_init(wcs_options *pOpt);

/*
** Open (or create) the store in directory zPath. On success *ppDb is an open
** handle to be closed with wcs_db_close(). On failure *ppDb is NULL and, if
** pzErr is not NULL, *pzErr is a message to free with wcs_free() (e.g.
** "store app.db.wcs is locked by another process" with WCS_BUSY, or
** "cannot create directory /x: Permission denied" with WCS_PERM).
** Recovery happens here: the WAL is replayed and a torn tail discarded.
** One writer process at a time; read-only opens may share the store.
*/
int wcs_db_open(wcs_db **ppDb, const char *zPath, const wcs_options *pOpt,
                char **pzErr);

/* Flush nothing, wait for background work, release everything. NULL is a
** no-op. Returns the first background error seen, if any. */
int wcs_db_close(wcs_db *db);

/* The message of the last error on this handle, or "" (borrowed: valid
** until the next call on db from the same thread). */
const char *wcs_errmsg(wcs_db *db);

/* Free memory returned by wcs (messages, values, property strings). */
void wcs_free(void *p);

/* --- write batches: puts, deletes and range deletes applied atomically */
int wcs_batch_new(wcs_batch **ppBatch);
void wcs_batch_free(wcs_batch *pBatch);
void wcs_batch_clear(wcs_batch *pBatch);
int wcs_batch_put(wcs_batch *pBatch, const void *pKey, size_t nKey,
                  const void *pVal, size_t nVal);
int wcs_batch_delete(wcs_batch *pBatch, const void *pKey, size_t nKey);
/* Delete every key k with start <= k < end (nEnd==0 with pEnd==NULL means
** "to the end of the key space"). O(1) at the call: a range tombstone. */
int wcs_batch_delete_range(wcs_batch *pBatch, const void *pStart,
                           size_t nStart, const void *pEnd, size_t nEnd);
/* Number of operations and approximate bytes in the batch. */
int wcs_batch_count(const wcs_batch *pBatch);
size_t wcs_batch_bytes(const wcs_batch *pBatch);

/* Apply a batch atomically (one WAL record). After a crash either all of
** it is visible or none. Durability follows the store's sync mode. The
** batch is unchanged and may be reused after wcs_batch_clear(). */
int wcs_db_write(wcs_db *db, wcs_batch *pBatch);

/* Convenience single-key writes (each is a one-operation batch). */
int wcs_db_put(wcs_db *db, const void *pKey, size_t nKey, const void *pVal,
               size_t nVal);
int wcs_db_delete(wcs_db *db, const void *pKey, size_t nKey);

/*
** Point read. On success *ppVal is a malloc'd copy of the value (free with
** wcs_free) and *pnVal its size, or *ppVal is NULL when the key is absent.
** pSnap NULL reads the latest committed state.
*/
int wcs_db_get(wcs_db *db, const wcs_snapshot *pSnap, const void *pKey,
               size_t nKey, void **ppVal, size_t *pnVal);

/* --- snapshots: a consistent read view while writes continue */
int wcs_snapshot_new(wcs_db *db, wcs_snapshot **ppSnap);
void wcs_snapshot_free(wcs_db *db, wcs_snapshot *pSnap);
uint64_t wcs_snapshot_seq(const wcs_snapshot *pSnap);

/* --- iterators */
typedef struct wcs_iter_options {
  const wcs_snapshot *pSnap; /* NULL: the state when the iterator is made */
  const void *pLower;        /* if set, keys < lower are never returned */
  size_t nLower;
  const void *pUpper;        /* if set, keys >= upper are never returned */
  size_t nUpper;
  /* If set, only keys that start with this prefix are returned, and files
  ** whose bloom filter (over xBloomPrefix, when its prefix has exactly this
  ** length) rules the prefix out are not read. */
  const void *pPrefix;
  size_t nPrefix;
  int bNoCacheFill;          /* long scans: don't evict hot blocks */
} wcs_iter_options;

/* Create an iterator (pOpt may be NULL). It starts unpositioned: call a
** seek/first/last before reading. Free with wcs_iter_free() before closing
** the store. */
int wcs_iter_new(wcs_db *db, const wcs_iter_options *pOpt, wcs_iter **ppIter);
void wcs_iter_free(wcs_iter *pIter);

int wcs_iter_first(wcs_iter *pIter);
int wcs_iter_last(wcs_iter *pIter);
/* Position at the first key >= (pKey,nKey). */
int wcs_iter_seek(wcs_iter *pIter, const void *pKey, size_t nKey);
/* Position at the last key <= (pKey,nKey). */
int wcs_iter_seek_for_prev(wcs_iter *pIter, const void *pKey, size_t nKey);
int wcs_iter_next(wcs_iter *pIter);
int wcs_iter_prev(wcs_iter *pIter);
/* Nonzero if positioned on a key. After an error it is 0 and the error is
** returned by the moving call (and again by wcs_iter_status()). */
int wcs_iter_valid(const wcs_iter *pIter);
int wcs_iter_status(const wcs_iter *pIter);
/* Borrowed: valid until the iterator moves or is freed. */
const void *wcs_iter_key(const wcs_iter *pIter, size_t *pnKey);
const void *wcs_iter_value(const wcs_iter *pIter, size_t *pnVal);

/* --- maintenance */
/* Turn the memtable into a sorted file now and wait for it. */
int wcs_db_flush(wcs_db *db);
/* Compact every file overlapping [start, end) (NULLs: everything) down to
** the last level, and wait. Removes deleted and shadowed data. */
int wcs_db_compact_range(wcs_db *db, const void *pStart, size_t nStart,
                         const void *pEnd, size_t nEnd);

/* Approximate bytes of stored (compressed) data in [start, end) and the
** approximate number of keys there, from file metadata; cheap. */
int wcs_db_approximate(wcs_db *db, const void *pStart, size_t nStart,
                       const void *pEnd, size_t nEnd, uint64_t *pnBytes,
                       uint64_t *pnKeys);

/*
** Sample keys that split the key space into roughly equal parts (like
** Bigtable's SampleRowKeys), in order, from the index blocks of the sorted
** files. Calls xSample once per sample key with its approximate offset in
** bytes; a nonzero return stops. Cheap: no data blocks are read.
*/
int wcs_db_sample_keys(wcs_db *db, void *pCtx,
                       int (*xSample)(void *pCtx, const void *pKey,
                                      size_t nKey, uint64_t nOffset));

/*
** Statistics and properties as a JSON object string (free with wcs_free):
** {"levels":[{"level":0,"files":2,"bytes":...},...], "memtable_bytes":...,
**  "cache_bytes":..., "cache_hits":..., "cache_misses":..., "seq":...,
**  "raw_bytes":..., "stored_bytes":..., "keys":..., "wal_bytes":...,
**  "compactions":..., "flushes":..., "stall_micros":...}
*/
int wcs_db_stats(wcs_db *db, char **pzJson);

#ifdef __cplusplus
}
#endif
#endif /* WCS_H */
