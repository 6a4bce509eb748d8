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
**     the caller and is freed by the matching _free() or _close() call, which
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

/* A short English description of a result code (WCS_CORRUPT: "corruption
** detected"), static; "unknown error" for a code not listed above. */
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
  int bReadOnly;          /* open for reading only, with a shared lock:
                          ** beside other read-only opens, not beside a
                          ** writer (WCS_BUSY; bFollow reads beside one) */
  int bFollow;            /* open for reading beside a writer in another
                          ** process, without the lock: the store as it
                          ** was at open (its sorted files, its logs
                          ** replayed), kept readable while the writer
                          ** compacts (every sorted file stays open);
                          ** wcs_db_moved_on() tells when a new open would
                          ** see more. Implies bReadOnly, not bCreate */
  int bCreate;            /* create the store if missing; default 1 */
  int bInMemory;          /* no files at all: zPath is ignored */
  size_t nMemtable;       /* memtable byte budget, shared by the active
                          ** memtable and the one being flushed (each
                          ** switches at half); what the memtables do not
                          ** hold is lent to the block cache (bFixedCache);
                          ** default 64 MiB, at least 16 KiB (a smaller
                          ** budget is raised to that) */
  size_t nCache;          /* block cache byte budget: data blocks and
                          ** every sorted file's index and bloom filter;
                          ** the cache may also use the part of nMemtable
                          ** the memtables do not hold, so memtables and
                          ** cache together stay within nMemtable + nCache
                          ** (bFixedCache); default 64 MiB */
  int bFixedCache;        /* 0 (default): the block cache's budget is
                          ** nCache plus nMemtable less the bytes the
                          ** memtables hold; it shrinks (evicting idle
                          ** blocks) as they fill and grows back when a
                          ** flush frees one. 1: the cache keeps exactly
                          ** nCache and idle memtable budget stays unused
                          ** (doc/storage.md, "Memory budget") */
  int nMaxOpenFiles;      /* sorted files kept open at once (closed in
                          ** CLOCK order, which approximates least
                          ** recently used; reopened when read);
                          ** default 1000, and never more than half the
                          ** process's limit on open files (ulimit -n) */
  int nBlockSize;         /* data block target size, 1024..65536; def 8K */
  int iZstdLevel;         /* zstd level for data blocks (1..19; 0 = none);
                          ** default 3 */
  int nBloomBits;         /* bloom bits per key; 0 = no bloom; default 10 */
  /* Optional: which leading part of a key the bloom filters index, so a
  ** whole row (many keys sharing the prefix) is found or skipped by one
  ** probe. Returns the prefix length (<= nKey), or -1 to leave the key out
  ** of the filter. NULL: blooms index whole keys. Must be a pure function,
  ** the same every time the store is opened, and prefix-closed: if it
  ** returns n >= 1 for a key, it returns n for every key that begins with
  ** the same n bytes (file builders call it once per run of such keys). */
  int (*xBloomPrefix)(const void *pKey, int nKey);
  int nL0Trigger;         /* level-0 files that start a compaction; def 4 */
  int nL0Stop;            /* level-0 files that stall writers; default 20 */
  uint64_t nL1Bytes;      /* target size of level 1; default 256 MiB; each
                          ** deeper level is 10x bigger */
  uint64_t nFileBytes;    /* target size of a sorted file, at most a
                          ** quarter of its level's target; default 64 MiB */
  int bNoBackground;      /* flush/compact in the writer's thread (tests) */
  /* 1: long forward scans decompress every block on their own thread.
  ** 0 (default): with two cores or more, a scan that has read 16 blocks of
  ** a file in a row has the next ones checked and decompressed ahead of it
  ** by one worker thread per store (doc/storage.md, "Readahead and
  ** prefetch"). Same rows and errors either way. */
  int bNoPrefetch;
  /*
  ** Optional compaction filter: lets the layer above drop entries
  ** physically (expired cells, versions beyond a limit) while compactions
  ** rewrite them. NULL: no filter.
  **
  ** Which entries. The filter is offered the entries a compaction writes
  ** that are the newest version of their key among the compaction's
  ** inputs, are puts (not deletes), and are not hidden by a range delete —
  ** at most one call per key, in ascending key order within the compaction, so a policy can follow a column's
  ** versions across consecutive keys. It is consulted only by compactions
  ** that run while no snapshot is live (wcs_snapshot_new, or an iterator
  ** made at a snapshot, holds one): an entry a snapshot could read, or any
  ** data newer than the oldest live snapshot, is never offered, so a
  ** snapshot reads the same data before and after. Flushes, trivial moves
  ** (a file moved to the next level unchanged) and compactions that run
  ** while a snapshot is live do not call it; such data is offered when a
  ** later compaction rewrites it. Not every key is seen: only keys whose
  ** file is being compacted.
  **
  ** The call. pKey/pVal are borrowed for the call only. Set *pbDrop to 1
  ** to remove the entry: the key then reads as absent (an older version
  ** of it stored below is hidden by a delete left in its place until the
  ** last level drops both). Return WCS_OK, or an error code to fail the
  ** compaction (it is retried later; wcs_db_close reports it).
  **
  ** Threading. Called from the thread running the compaction: the
  ** background compaction thread, or the caller of wcs_db_compact_range()
  ** (or, with bNoBackground, the writer that triggered it) — never from two
  ** threads at once for one store. It must not call back into the store
  ** and must be fast: the compaction holds no lock while calling it, but
  ** writers stall when compactions fall behind.
  */
  int (*xCompactionFilter)(void *pFilterCtx, const void *pKey, size_t nKey,
                           const void *pVal, size_t nVal, int *pbDrop);
  void *pFilterCtx;       /* first argument of xCompactionFilter */
  /* Bulk ingest: a write batch of at least this many bytes (wcs_batch_bytes)
  ** is written straight into sorted files, installed by one manifest edit,
  ** instead of going through the WAL and the memtable (doc/storage.md,
  ** "Bulk ingest"). 0: the default, nMemtable / 4 (16 MiB); UINT64_MAX:
  ** never. Readers see the same data either way. */
  uint64_t nIngestBytes;
  /*
  ** Optional file notes (doc/storage.md, "File notes"): a summary of a
  ** sorted file's entries that the layer above computes while the file is
  ** written, stored in the file and handed back by wcs_iter_notes(). Every
  ** file the store writes (flush, compaction, bulk ingest) gets one while
  ** these are set. xNoteBegin starts a summary (NULL: out of memory; the
  ** file is then written without a note); xNoteAdd gets each entry in
  ** file order: its user key and whether it is a delete (range
  ** tombstones are not passed: their count is in wcs_file_note); xNoteEnd
  ** frees the summary and, unless bAbandon (the file is not kept), puts
  ** malloc'd note bytes in *ppOut, *pnOut (NULL and 0: an empty note).
  ** Called on the thread writing the file; must not call into the store.
  */
  void *(*xNoteBegin)(void *pNoteCtx);
  void (*xNoteAdd)(void *pSum, const void *pKey, size_t nKey, int bDelete);
  int (*xNoteEnd)(void *pSum, int bAbandon, void **ppOut, size_t *pnOut);
  void *pNoteCtx; /* argument of xNoteBegin */
} wcs_options;

/*
** Inside xCompactionFilter only (on the thread running the compaction):
** could a delete or range delete stored outside this compaction's input
** hide a key k with lo <= k < hi (pHi NULL: no upper end)? "Outside" is
** whatever can hold newer data for the input's keys: the memtables, the
** files of the levels above the input level and the files of the input
** level that are not inputs — as of the pick of the inputs, plus anything
** written since. *pbCovered = 0 means no such delete exists, and the puts
** of [lo, hi) this compaction offered are live when its result is
** installed, so a filter may count them (e.g. as newer versions that push
** an older one past a version limit). The store keeps that promise: if,
** before the install, a delete written since the pick reaches a range
** answered 0, or a snapshot taken since the pick is live (a reader at it
** may apply deletes of its own), the compaction runs again with every
** answer covered ("filter_reruns" in wcs_db_stats()).
**
** Conservative by contract: any doubt answers covered (*pbCovered = 1):
** an error (returned), a range starting before the first key this
** compaction offered the filter (its versions may not all be in the
** input), a rerun. Called outside a filter call: WCS_MISUSE, covered.
** Every delete counts, also one whose effect the caller could prove
** harmless. Cost: a seek and a scan of [lo, hi) over the sources above
** (the first call builds the iterator), plus an overlap test per range
** tombstone there; meant for one call per group of keys, not per key.
*/
int wcs_compaction_covered(const void *pLo, size_t nLo, const void *pHi,
                           size_t nHi, int *pbCovered);

void wcs_options_init(wcs_options *pOpt);

/*
** Open (or create) the store in directory zPath. On success *ppDb is an open
** handle to be closed with wcs_db_close(). On failure *ppDb is NULL and, if
** pzErr is not NULL, *pzErr is a message to free with wcs_free() (e.g.
** "store app.db.wcs is locked by another process" with WCS_BUSY, or
** "cannot create directory /x: Permission denied" with WCS_PERM).
** Recovery happens here: the WAL is replayed and a torn tail discarded.
** One writer process at a time; read-only opens (bReadOnly) may share the
** store with each other, and followers (bFollow) read beside a writer.
*/
int wcs_db_open(wcs_db **ppDb, const char *zPath, const wcs_options *pOpt,
                char **pzErr);

/* Flush nothing, wait for background work, release everything. NULL is a
** no-op. Returns the first background error seen, if any. */
int wcs_db_close(wcs_db *db);

/* A store opened with bFollow: *pbMoved = 1 when the writer has changed
** the store since (a commit, flush or compaction: its manifest or its
** newest log grew, or CURRENT names another manifest), so that an open
** now would read more; 0 otherwise, and always 0 for other opens. A few
** small reads of the store's files. */
int wcs_db_moved_on(wcs_db *db, int *pbMoved);

/* A store opened with bFollow catches up with the commits the writer
** appended to its log since: they are read and applied, and the handle
** then reads them, as if they had been committed here. *pbMoved = 1 when
** the writer did more than append (a flush, log switch, compaction,
** ingest): then only a new open sees it. *pbWatched = 1 when a commit
** applied wrote a key beginning with pWatch[0..nWatch) (or a range delete
** from below it), for the layer above to notice changes to its own
** records (NULL: none watched). Other opens: both 0, nothing done. */
int wcs_db_follow(wcs_db *db, const void *pWatch, size_t nWatch, int *pbMoved,
                  int *pbWatched);

/* The message of the last error on this handle, or "" (borrowed: valid
** until the next call on db from the same thread). */
const char *wcs_errmsg(wcs_db *db);

/* Free memory returned by wcs (messages, values, property strings). */
void wcs_free(void *p);

/* --- write batches: puts, deletes and range deletes applied atomically.
** A key may be empty. A key over 4 GiB - 9 bytes, a value over 4 GiB - 2
** bytes, or a batch whose operations (wcs_batch_bytes) would pass
** 2 GiB - 1 bytes is refused with WCS_TOOBIG, a NULL pointer with a
** nonzero length with WCS_MISUSE; the batch is then unchanged. */
int wcs_batch_new(wcs_batch **ppBatch);
void wcs_batch_free(wcs_batch *pBatch);
void wcs_batch_clear(wcs_batch *pBatch);
int wcs_batch_put(wcs_batch *pBatch, const void *pKey, size_t nKey,
                  const void *pVal, size_t nVal);
int wcs_batch_delete(wcs_batch *pBatch, const void *pKey, size_t nKey);
/* Delete every key k with start <= k < end (nEnd==0 with pEnd==NULL means
** "to the end of the key space"). O(1) at the call: a range tombstone. An
** empty range (start >= end) adds nothing and returns WCS_OK. */
int wcs_batch_delete_range(wcs_batch *pBatch, const void *pStart,
                           size_t nStart, const void *pEnd, size_t nEnd);
/* Number of operations and approximate bytes in the batch. */
int wcs_batch_count(const wcs_batch *pBatch);
size_t wcs_batch_bytes(const wcs_batch *pBatch);

/* Apply a batch atomically (one WAL record). After a crash either all of
** it is visible or none. Durability follows the store's sync mode. The
** batch is unchanged and may be reused after wcs_batch_clear().
** After a failed WAL sync, flush or manifest write (disk full, I/O error)
** the store refuses every later write with that first error, so no commit
** is acknowledged over a log or file set it could not make durable; close
** and reopen once the cause is fixed (recovery keeps every acknowledged
** commit). Reads go on working meanwhile. */
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

/* --- snapshots: a consistent read view while writes continue. Free each
** once, before the store closes (wcs_db_close() frees those still live). */
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

/*
** Move the iterator to the latest committed state, keeping its bounds,
** prefix and buffers, so that one iterator can serve many short reads
** (seek, read a key or a few, refresh, seek again) without the cost of
** wcs_iter_new. An iterator made at a snapshot (pSnap) reads the latest
** state from now on; the snapshot itself is not touched. The iterator is
** left unpositioned: call a seek/first/last next.
**
** Cheap when no memtable switch, flush or compaction has happened and no
** range delete has been committed since the iterator was made or last
** refreshed: only the sequence number to read at moves (one mutex round
** trip, no allocation). Otherwise the iterator re-pins the current
** memtables and files, as wcs_iter_new does.
**
** Returns WCS_OK, or WCS_NOMEM / WCS_IOERR / WCS_CORRUPT when re-pinning
** fails; then the iterator stays unpositioned, every move returns that
** code, and it must still be freed with wcs_iter_free(). Keys and values
** borrowed from the iterator before the call are invalid after it.
*/
int wcs_iter_refresh(wcs_iter *pIter);

/*
** Give the iterator new options — bounds, prefix, snapshot, cache option —
** as if it were freed and made again with wcs_iter_new(db, pOpt), keeping
** what it can: so that a prepared point read or short scan moves one
** iterator from row to row. pOpt NULL means no bounds and the latest
** state. The iterator is left unpositioned: call a seek/first/last next.
**
** Cheap when no memtable switch, flush or compaction has happened since
** the iterator was made or last re-pinned: it keeps its memtable
** children, and keeps the iterator of every sorted file the new range
** selects again, with that file's index and filter pinned and its last
** data block loaded; a file whose bloom filter rules out the new prefix
** is left out by one probe of the filter it already holds. Only range
** tombstones are collected again (nothing to do when there are none).
** No allocation then, unless the new range spans several files of one
** level or buffers must grow. Otherwise it re-pins the current memtables
** and files, as wcs_iter_new does.
**
** Returns WCS_OK, or WCS_NOMEM / WCS_IOERR / WCS_CORRUPT; then, as after
** a failed wcs_iter_refresh(), every move returns that code until a
** retarget or refresh succeeds, and it must still be freed with
** wcs_iter_free(). The option keys are copied (they may be borrowed from
** this iterator); keys and values borrowed from it before the call are
** invalid after it.
*/
int wcs_iter_retarget(wcs_iter *pIter, const wcs_iter_options *pOpt);

/*
** How many sources (memtables, level-0 files, deeper levels) the
** iterator merges for its current bounds; 0 if it is unusable. With one,
** a seek reads one sorted run and bloom filters could skip nothing, so a
** reader of one row may as well seek an iterator over a wider range
** (engine/cursor.c does) instead of retargeting one per row.
*/
int wcs_iter_sources(const wcs_iter *pIter);

/*
** 1 when the iterator's sources certainly hold no key starting with
** pPre[0..nPre): it merges no memtable for its current bounds, the store's
** xBloomPrefix (wcs_options) gives nPre for pPre, and the bloom filter of
** every file of its version whose range meets those keys rules pPre out.
** 0 when a source may hold one, or it cannot tell. What a point read of
** one row asks before seeking an iterator over a wider range, so that a
** missing row still costs only filter probes (engine/cursor.c).
*/
int wcs_iter_prefix_absent(const wcs_iter *pIter, const void *pPre,
                           size_t nPre);

/* One sorted file of a run, as wcs_iter_notes() reports it. */
typedef struct wcs_file_note {
  const void *pNote; /* the file's note (wcs_options.xNoteEnd's bytes);
                     ** NULL: written without one */
  size_t nNote;      /* bytes at pNote */
  uint64_t iFile;    /* file number */
  uint64_t maxSeq;   /* largest sequence number in the file */
  uint64_t nRangeDel; /* range tombstones in the file */
} wcs_file_note;

/*
** Whether the iterator's current bounds read one sorted run of files, and
** if so what those files' notes say. *pbRun = 1 when no memtable holds a
** key within the bounds or any range delete, and the files that may hold
** a key in them are one file, or files of one level (which never
** overlap); x is then called for each
** such file in key order (none: nothing in the bounds). Otherwise, or
** with the prefix option set (bloom filters may have left files out),
** *pbRun = 0 and x is not called. The notes are borrowed for the call.
** Returns WCS_OK, x's nonzero return, or the iterator's error.
*/
int wcs_iter_notes(const wcs_iter *pIter, int *pbRun, void *pCtx,
                   int (*x)(void *pCtx, const wcs_file_note *pNote));

/*
** A number that changes whenever the iterator chooses its sources again
** (made, re-pinned by a refresh that found new memtables or files, a
** memtable grown, or a new range delete, retargeted); while it stays the
** same, so do the sources and what wcs_iter_notes() reports, so a caller
** may keep what it computed from them.
*/
uint64_t wcs_iter_epoch(const wcs_iter *pIter);

/*
** 1 if the iterator still reads the store's current memtables and files:
** no memtable switch, flush or compaction has been installed since it was
** made or last re-pinned by wcs_iter_refresh(); else 0. A compaction
** changes no sequence number, yet its compaction filter may have removed
** entries such an iterator still shows, so a caller that reuses iterators
** made at one sequence number checks this too. One mutex round trip.
*/
int wcs_iter_current(const wcs_iter *pIter);

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
/* Borrowed: valid until the iterator moves or is freed. Both return NULL
** (and a length of 0) exactly when the iterator is not valid, and a
** non-NULL pointer for an empty key or value, so one call can stand for
** wcs_iter_valid() too. */
const void *wcs_iter_key(const wcs_iter *pIter, size_t *pnKey);
const void *wcs_iter_value(const wcs_iter *pIter, size_t *pnVal);
/* Both at once, for the step of a scan: 1 with the key and value (as the
** two calls above give them), or 0 with NULLs and lengths of 0 when the
** iterator is not valid. */
int wcs_iter_entry(const wcs_iter *pIter, const void **ppKey, size_t *pnKey,
                   const void **ppVal, size_t *pnVal);

/* --- maintenance */
/* Turn the memtable into a sorted file now and wait for it. */
int wcs_db_flush(wcs_db *db);
/* Make a consistent copy of the store in directory zDir, which must not
** exist (WCS_CANTOPEN if it does): everything committed before the call,
** as a store that
** wcs_db_open() opens (a backup taken while the store is in use). The
** memtable is flushed first; then the sorted files of that moment are
** copied (they stay while they are copied, whatever compactions do) and a
** manifest naming them is written, with no log. Writes may go on
** meanwhile; they are not in the copy. An in-memory store's copy goes to
** disk. On failure nothing of the copy is left. (doc/storage.md,
** "Checkpoints") */
int wcs_db_checkpoint(wcs_db *db, const char *zDir);
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
** {"levels":[{"level":0,"files":2,"bytes":...},...],
**  "open_files":... (sorted files open now, <= nMaxOpenFiles plus those a
**  read is using), "readers":... (sorted files known), "reader_bytes":...
**  (bytes the readers hold outside the cache: a fixed struct, the path and
**  the key bounds per file, plus range tombstones; see doc/storage.md,
**  "Memory budget"), "file_reopens":..., "index_hits":...,
**  "index_misses":... (lookups of a file's index and filter in the
**  cache), "cache_budget":... (nCache), "memtable_bytes":...,
**  "cache_budget_now":... (the cache's budget at the moment: nCache plus
**  nMemtable less what the memtables hold, see bFixedCache; nCache with
**  bFixedCache), "cache_bytes":... (blocks, indexes and filters;
**  <= cache_budget_now plus what reads pin at the moment),
**  "cache_hits":..., "cache_misses":... (data block lookups), "seq":...,
**  "raw_bytes":..., "stored_bytes":..., "keys":..., "wal_bytes":...,
**  "compactions":..., "flushes":..., "stall_micros":...,
**  "filtered":... (entries removed by xCompactionFilter),
**  "filter_reruns":... (compactions run again with every
**  wcs_compaction_covered() answer covered, see there),
**  "prefetched_blocks":... (data blocks decompressed ahead of long scans
**  by the worker thread, see bNoPrefetch)}
*/
int wcs_db_stats(wcs_db *db, char **pzJson);

/* ====================================================================
** Tables
**
** Bigtable's data model on a store. A store holds many tables; a table has
** a row key schema (see DESIGN.md §3 and keyschema/schema.h) and column
** families; a family holds columns named by qualifiers (any bytes); a
** column holds cells, each a (timestamp, value) pair, newest first. A row
** exists while it has at least one live cell.
**
**   wcs_engine   the data model over one open wcs_db: the catalog of
**                tables (persisted in the store), the commit lock, clock.
**   wcs_table    a handle on one table and the schema it had when opened.
**   wcs_txn      buffered mutations over any rows and tables, committed
**                atomically as one store write batch (one WAL record);
**                reads through it see its own uncommitted writes.
**   wcs_cursor   a streaming row reader over key ranges (one row in
**                memory at a time), forward or reverse.
**
** Timestamps are int64 microseconds since the epoch, 0 to INT64_MAX - 1 (a
** read's time range [start, end) ends at INT64_MAX at most, so a write at
** INT64_MAX is refused with WCS_RANGE). WCS_TS_NOW (-1)
** as a write timestamp means "the transaction's time" (Bigtable's -1): the
** engine's clock at the transaction's first such write, shared by every
** cell it writes with WCS_TS_NOW.
** Writing a cell whose (row, family, qualifier, timestamp) exists replaces
** its value.
**
** Limits (Bigtable's): row key 1..4096 bytes, qualifier <= 16384 bytes,
** value <= 100 MiB, family name [-_.a-zA-Z0-9]{1,64}. A violation fails the
** call with WCS_TOOBIG (sizes past a limit; an empty row key is WCS_ERROR)
** or WCS_SCHEMA (a family name in a schema text) and a message naming the
** limit and the (escaped) key or name. A
** (pointer, length) argument whose pointer is NULL and length is not 0 is
** WCS_MISUSE (empty bytes are NULL or "" with length 0). Handles must not
** be NULL, except where a call says so (the _free and _close calls); the
** calls that write cells, open cursors and create, open, alter or drop
** tables check theirs (WCS_MISUSE). More
*than 100 families is allowed with a
** warning (wcs_engine_warning()).
**
** Garbage collection policies (MAX VERSIONS, MAX AGE, UNION/INTERSECTION)
** are applied exactly at read time: no read returns a cell its family's
** policy has expired, even before compaction removes it physically
** (wcs_engine_gc()).
**
** Errors: every call returns a WCS_* code; the message of the last failed
** engine call on this thread is wcs_engine_errmsg(). Cells, row keys and
** strings a call hands out are borrowed unless said otherwise.
** Threads: a wcs_engine and wcs_table may be shared between threads; a
** wcs_txn or wcs_cursor is used by one thread at a time.
** The storage layout is documented in doc/engine.md.
** ==================================================================== */

typedef struct wcs_engine wcs_engine; /* the data model over a store */
typedef struct wcs_table wcs_table;   /* an open table handle */
typedef struct wcs_txn wcs_txn;       /* a transaction: buffered mutations */
typedef struct wcs_cursor wcs_cursor; /* a row reader */
typedef struct wcs_moment wcs_moment; /* a transaction's writes as of a
                                      ** mark (wcs_txn_moment) */
struct ks_schema;                     /* parsed schema: keyschema/schema.h */

#define WCS_TS_NOW (-1) /* write timestamp: the transaction's time */

#define WCS_MAX_ROW_KEY    4096       /* bytes, row keys are non-empty */
#define WCS_MAX_QUALIFIER  16384      /* bytes */
#define WCS_MAX_VALUE      104857600  /* bytes (100 MiB) */
#define WCS_MAX_FAMILY_NAME 64        /* chars of [-_.a-zA-Z0-9] */
#define WCS_WARN_FAMILIES  100        /* more families than this warns */

/* ---- the engine ---------------------------------------------------- */

/*
** The bloom-prefix function for stores that hold tables: returns the
** length of a storage key up to the end of its row key, so one bloom probe
** finds or skips a whole row of a family. Pass it as wcs_options.
** xBloomPrefix (wcs_engine_options() does that) every time the store is
** opened; a store opened without it still works, with whole-key blooms
** that point row reads cannot use.
*/
int wcs_engine_bloom_prefix(const void *pKey, int nKey);

/* Set the options a store holding tables should be opened with: the row
** bloom prefix (xBloomPrefix) and the file notes (xNoteBegin, xNoteAdd,
** xNoteEnd: rows per table family, doc/engine.md). Call after
** wcs_options_init(). It sets no compaction
** filter: GC at compaction needs a per-store context bound to the engine,
** which only wcs_engine_open_path() installs (doc/engine.md, "Physical GC
** at compaction"). */
void wcs_engine_options(wcs_options *pOpt);

/*
** Open the data model over an open store: reads the catalog (creating it
** in an empty store). db is borrowed and must outlive the engine; close
** the engine first. A store handle takes one engine at a time: a second
** wcs_engine_open() over the same db while the first is open returns
** WCS_MISUSE (two would number new tables alike). On failure *ppEng is
** NULL and pzErr (if not NULL) receives a message to free with
** wcs_free(). Expired cells are hidden by
** reads and collected by wcs_engine_gc(), not by compactions: the
** compaction filter is installed only by wcs_engine_open_path().
*/
int wcs_engine_open(wcs_engine **ppEng, wcs_db *db, char **pzErr);

/*
** Open the store at zPath (with wcs_engine_options() applied over pOpt,
** which may be NULL) and the engine over it, in one call. Opens of the
** same path in one process share one store and engine (reference
** counted; the options of the first open win), so several SQLite
** connections can use one store. With pOpt->bInMemory, stores are shared
** by zPath as a name; zPath NULL gives a private in-memory store. A
** follower (pOpt->bFollow) is never shared: each such open is its own,
** as of its moment (wcs_engine_db() and wcs_db_moved_on() tell when to
** open another). The
** engine owns the store: wcs_engine_close() closes it with the last
** reference.
*/
int wcs_engine_open_path(wcs_engine **ppEng, const char *zPath,
                         const wcs_options *pOpt, char **pzErr);

/* wcs_engine_open_path(), and when another process holds the store
** (WCS_BUSY), a follower of it instead (*pbFollow = 1; wcs_options.bFollow):
** the store read beside that process, to be kept up with
** wcs_engine_follow(). Returns the first open's error if neither works. */
int wcs_engine_open_shared(wcs_engine **ppEng, const char *zPath,
                           const wcs_options *pOpt, int *pbFollow,
                           char **pzErr);

/* An engine to read the store at zPath with: the one this process has open
** for it (shared, *pbFollow = 0), else a follower (*pbFollow = 1), which
** takes no lock and writes nothing (a read-only SQL connection's store,
** on a read-only file system too). */
int wcs_engine_open_reader(wcs_engine **ppEng, const char *zPath,
                           const wcs_options *pOpt, int *pbFollow,
                           char **pzErr);

/* An engine over a follower (wcs_options.bFollow): catch up with the
** writer's latest commits (wcs_db_follow). *pbReopen = 1 when that is not
** enough and the engine must be opened again to see them: the writer did
** more than commit to its log, or changed the catalog (a table created,
** altered or dropped). 0 for other engines. */
int wcs_engine_follow(wcs_engine *pEng, int *pbReopen);

/* Release the engine (and its store, if opened by wcs_engine_open_path()
** and this was the last reference). Every table handle, transaction and
** cursor must be closed first. NULL is a no-op. */
int wcs_engine_close(wcs_engine *pEng);

/* 1 if pEng was opened by a parent of this process before fork(): the
** child must not use it (its store's writer and threads are the
** parent's) but open the store itself, which then gives a follower while
** the parent has it open for writing. wcs_engine_close() of such an
** engine does nothing, and opens by path in the child do not share it. */
int wcs_engine_forked(const wcs_engine *pEng);

/* The store under the engine (borrowed, valid while the engine is open). */
wcs_db *wcs_engine_db(wcs_engine *pEng);

/* The message of the last failed engine call on this thread, or "".
** Borrowed until the thread's next failed call; the thread keeps it in a
** buffer of its own (nothing to free when it ends), so a message longer
** than 2047 bytes is cut, ending in "...". */
const char *wcs_engine_errmsg(wcs_engine *pEng);

/* The warning left by the last wcs_table_create()/wcs_table_alter() on
** this thread (e.g. "table t has 120 column families; more than 100 ..."),
** or NULL. Borrowed until the next such call on this thread. */
const char *wcs_engine_warning(wcs_engine *pEng);

/* Replace the clock used for WCS_TS_NOW and MAX AGE (tests, replays).
** xNow returns microseconds since the epoch; NULL restores the wall
** clock. Not thread-safe against concurrent calls on the engine. */
void wcs_engine_set_clock(wcs_engine *pEng, int64_t (*xNow)(void *pCtx),
                          void *pCtx);

/*
** Physically remove what reads already hide: cells expired by their
** family's GC policy (as of the engine clock now) in table zTable, or in
** every table when zTable is NULL. Then, if bCompact, compact the table's
** key space so deleted and shadowed data is dropped from disk. Costs a
** full scan of the table(s); meant for maintenance, not the write path.
*/
int wcs_engine_gc(wcs_engine *pEng, const char *zTable, int bCompact);

/*
** A consistent copy of the whole store (every table, the catalog) in
** directory zDir, which must not exist: every transaction committed
** before the call, and none after it. The engine opens the copy as a
** store (wcs_engine_open_path). Reads and writes go on meanwhile. See
** wcs_db_checkpoint().
*/
int wcs_engine_backup(wcs_engine *pEng, const char *zDir);

/* ---- tables and the catalog ---------------------------------------- */

/* Aggregate kinds of a family (wcs_family_info.eAggregate). */
#define WCS_AGG_NONE 0 /* ordinary family: SetCell writes values */
#define WCS_AGG_SUM  1 /* INT64 sum; state: 8-byte big-endian signed */
#define WCS_AGG_MIN  2 /* INT64 minimum; same state */
#define WCS_AGG_MAX  3 /* INT64 maximum; same state */
#define WCS_AGG_HLL  4 /* HyperLogLog++ unique count; state: wcs_hll_* */

/* One column family as the catalog has it. Strings are borrowed from the
** table handle. */
typedef struct wcs_family_info {
  const char *zName;     /* family name, [-_.a-zA-Z0-9]{1,64} */
  int eAggregate;        /* WCS_AGG_* */
  int nMaxVersions;      /* GC: keep the newest n cells per column; 0=off */
  int64_t iMaxAge;       /* GC: drop cells older than now-age, micros;
                         ** 0 = off */
  int bIntersection;     /* with both rules: a cell expires only when both
                         ** say so (INTERSECTION); else when either does
                         ** (UNION, the default) */
  int nColumn;           /* declared qualifier columns (see ks_schema) */
} wcs_family_info;

/*
** Create table zName (1..128 bytes, any characters but NUL) from schema
** text in the DDL grammar of DESIGN.md §3, the module arguments joined by
** commas, e.g. "KEY (device STRING, day INT64 DECIMAL(8)) DELIMITED BY
** '#', FAMILY stats (cpu INT64) MAX VERSIONS 3, FAMILY meta". STORE, SYNC,
** TABLE, CACHE and HISTORY clauses are accepted and ignored here (they
** concern the SQL module's store); COMPRESSION is kept in the canonical
** text but sets nothing (the store's level is wcs_options.iZstdLevel, set
** when it opens). An empty or NULL zSchema
** makes a table without key schema or families, which holds no cell until
** wcs_table_alter() gives it a family. The catalog keeps the
** canonical text (ks_schema_text()) with schema version 1. Fails with
** WCS_SCHEMA if the name exists, and on bad text (the parser's message: a
** family name outside the limits above, a family declared twice, ...). If ppTab
*is not NULL it receives an open handle.
*/
int wcs_table_create(wcs_engine *pEng, const char *zName,
                     const char *zSchema, wcs_table **ppTab);

/*
** Open table zName. *ppTab is the handle (close with wcs_table_close()), or
** NULL if there is no such table (not an error). The handle carries the
** schema as it was at open; if the table is altered or dropped later,
** operations through the handle fail with WCS_SCHEMA and the caller
** reopens it.
*/
int wcs_table_open(wcs_engine *pEng, const char *zName, wcs_table **ppTab);
void wcs_table_close(wcs_table *pTab);

/*
** Change table zName's schema to zSchema (full text, as for create). The
** KEY clause must be unchanged and an aggregate family keeps its kind;
** otherwise anything goes: new families are added, a family absent from
** the new text is dropped with all its data (one range delete), GC
** policies and declared columns change (GC changes are retroactive, as in
** Bigtable). The schema version is incremented. Atomic.
*/
int wcs_table_alter(wcs_engine *pEng, const char *zName, const char *zSchema);

/* Drop table zName with all its data: one range tombstone, so the cost
** does not grow with the data; space is reclaimed by compaction. Table ids
** are never reused. WCS_ERROR "no such table" if absent. Atomic. */
int wcs_table_drop(wcs_engine *pEng, const char *zName);

/* Call xTable for each table in name order with its canonical schema text
** (both borrowed for the call). A nonzero return stops the walk and is
** returned. */
int wcs_table_list(wcs_engine *pEng, void *pCtx,
                   int (*xTable)(void *pCtx, const char *zName,
                                 const char *zSchema));

/* Properties of an open handle, borrowed until wcs_table_close(). */
const char *wcs_table_name(const wcs_table *pTab);
const char *wcs_table_schema_text(const wcs_table *pTab);
uint64_t wcs_table_schema_version(const wcs_table *pTab);
const struct ks_schema *wcs_table_schema(const wcs_table *pTab);
/* 1 once the table was altered or dropped (through this engine) since the
** handle was opened: reads and writes through it fail with WCS_SCHEMA, and
** wcs_table_open() gives the table as it is now. */
int wcs_table_stale(const wcs_table *pTab);
/* The table's id in its store: an alter keeps it; a table dropped and
** created again under the same name has another (ids are never reused). */
uint32_t wcs_table_id(const wcs_table *pTab);
int wcs_table_family_count(const wcs_table *pTab);
/* Family i (0 <= i < count) in schema order; WCS_RANGE if i is out of
** range. */
int wcs_table_family(const wcs_table *pTab, int i, wcs_family_info *pInfo);
/* Index of family zName, or -1 if the table has none of that name. */
int wcs_table_family_index(const wcs_table *pTab, const char *zName);

/* ---- transactions and mutations ------------------------------------ */

/*
** A transaction buffers mutations in memory; wcs_txn_commit() applies all
** of them as ONE store write batch, so after a crash either all or none
** are visible. Reads through the transaction (wcs_cursor_open() with
** pTxn) see a snapshot taken at the transaction's first read (after
** begin, or after the last commit/rollback), the same for every later
** read, merged with the transaction's own uncommitted writes.
**
** Concurrency: commits are serialized by the engine. A plain transaction
** does not lock: two transactions may interleave and the later commit
** wins, cell by cell, as in Bigtable (aggregate writes are the exception:
** AddToCell/MergeToCell are merged into the latest committed value at
** commit, so concurrent counters never lose updates). WCS_TXN_EXCLUSIVE
** holds the engine's writer lock from begin until commit/rollback/free,
** so the read-then-write steps (check, increment, append) are atomic
** against every other writer; other exclusive transactions wait.
**
** SQLite mapping (vtab): xBegin -> wcs_engine_await_commits then
** wcs_txn_begin (or reuse), xSync -> wcs_txn_precheck (what the commit
** would refuse, before SQLite commits; a commit in flight from then on),
** xCommit -> wcs_txn_commit (once SQLite's own commit has succeeded: it
** can fail after xSync), xRollback -> wcs_txn_rollback, xSavepoint(N) ->
** wcs_txn_savepoint(N), xRelease(N) -> wcs_txn_release(N),
** xRollbackTo(N) -> wcs_txn_rollback_to(N).
*/
#define WCS_TXN_EXCLUSIVE 0x01

int wcs_txn_begin(wcs_engine *pEng, int flags, wcs_txn **ppTxn);
/* Apply every buffered mutation atomically. Afterwards the transaction is
** empty, has a new snapshot, and may be used again. On error nothing was
** applied and the buffered mutations are discarded. Fails with WCS_SCHEMA
** if a table written was dropped or altered after its handle opened.
** Cursors still open on the transaction go on showing what they showed
** before the commit (its writes included) until they close. */
int wcs_txn_commit(wcs_txn *pTxn);
/* A mark in the transaction's writes: what it has written so far. */
size_t wcs_txn_mark(const wcs_txn *pTxn);
/* The transaction's writes as they were at mark iMark (wcs_txn_mark),
** for cursors that must not see its later writes (wcs_read_options.
** pMoment, wcs_cursor_freeze_at): built from its log, one pass over the
** writes before the mark. The mark must be valid: no rollback to a
** savepoint before it, no commit since (only a mark past the writes is
** refused; the caller must forget its marks at such a rollback). Free with
*wcs_moment_free(); each
** cursor that reads it holds it until it is closed. */
int wcs_txn_moment(wcs_txn *pTxn, size_t iMark, wcs_moment **ppMoment);
void wcs_moment_free(wcs_moment *pMoment);
/* What wcs_txn_commit() would refuse before it writes anything, checked
** without committing: WCS_SCHEMA (with the message commit would give) if a
** table written was dropped or altered. For a caller whose commit comes in
** two phases (SQLite's xSync, then xCommit once SQLite's own commit has
** succeeded): a failure it reports here, where it can still stop the
** transaction. The transaction's writes are unchanged either way; on
** success it counts as a commit in flight (below). */
int wcs_txn_precheck(wcs_txn *pTxn);
/* Commits in flight. From a successful wcs_txn_precheck() of a
** transaction that wrote until its commit, rollback or free, the engine
** counts it as a commit in flight. For a caller whose commits follow a
** lock of its own (the SQL module: SQLite's lock on the database file is
** let go before xCommit writes the store), a reader that has just taken
** that lock waits for the commits in flight before it reads, or it would
** read the store without the commit of the lock's previous holder (and an
** UPDATE ... SET v = v + 1 would lose one update of two).
** wcs_engine_commits_in_flight() is their number, not counting pMine's
** (NULL: none); wcs_engine_await_commits() waits until it is 0 or nMillis
** have passed: 1 if it is 0, 0 on timeout. With iKey not 0 they count
** only the transactions given that key by wcs_txn_gate_key(), or given
** none: a lock's key (the SQL module: its database file's), so that a
** reader waits for the commits that passed its own lock, not for those of
** other locks (another database file sharing the store), which may be
** held up for as long as their owners wait. */
int wcs_engine_commits_in_flight(wcs_engine *pEng, const wcs_txn *pMine,
                                 uint64_t iKey);
int wcs_engine_await_commits(wcs_engine *pEng, const wcs_txn *pMine,
                             uint64_t iKey, int nMillis);
/* Add iKey (not 0) to the keys of the transaction's commit in flight (see
** above): those of the locks its commit passes. Up to four are kept; a
** fifth makes it count for every key. A commit or rollback clears them. */
void wcs_txn_gate_key(wcs_txn *pTxn, uint64_t iKey);
/* Discard every buffered mutation; the transaction stays usable. */
int wcs_txn_rollback(wcs_txn *pTxn);
/* Discard and free. NULL is a no-op. Cursors on it must be closed first. */
void wcs_txn_free(wcs_txn *pTxn);

/* Savepoints, numbered as SQLite numbers them: savepoint(N) records the
** current state as savepoint N (discarding any >= N); rollback_to(N)
** returns to the state at N, keeping N; release(N) forgets every
** savepoint >= N, keeping the mutations. A rollback_to(N) below every
** recorded savepoint, or with none recorded (SQLite's savepoint opened
** before the table joined the transaction), discards every mutation and
** every savepoint; one above every recorded savepoint changes nothing. */
int wcs_txn_savepoint(wcs_txn *pTxn, int iSavepoint);
int wcs_txn_rollback_to(wcs_txn *pTxn, int iSavepoint);
int wcs_txn_release(wcs_txn *pTxn, int iSavepoint);

/* Number of buffered mutations and approximate buffered bytes. */
int wcs_txn_count(const wcs_txn *pTxn);
size_t wcs_txn_bytes(const wcs_txn *pTxn);

/* SetCell: write a cell. iTs >= 0 or WCS_TS_NOW. Fails with WCS_MISMATCH
** ("column family type mismatch") on an aggregate family. */
int wcs_txn_set_cell(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                     size_t nRow, const char *zFamily, const void *pQual,
                     size_t nQual, int64_t iTs, const void *pVal,
                     size_t nVal);

/* DeleteFromColumn: delete the column's cells with iStartTs <= ts <
** iEndTs; iEndTs 0 means no upper bound, so (0, 0) deletes every cell.
** An empty range (iEndTs != 0 and iEndTs <= iStartTs) fails with
** WCS_RANGE. */
int wcs_txn_delete_cells(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                         size_t nRow, const char *zFamily, const void *pQual,
                         size_t nQual, int64_t iStartTs, int64_t iEndTs);
/* DeleteFromFamily: every cell of the row in family zFamily. */
int wcs_txn_delete_family(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                          size_t nRow, const char *zFamily);
/* DeleteFromRow: every cell of the row. */
int wcs_txn_delete_row(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                       size_t nRow);

/*
** AddToCell (aggregate families): fold an input into the cell at iTs
** (WCS_TS_NOW allowed; cells of different timestamps stay separate, which
** makes time buckets). SUM/MIN/MAX take iValue; HLL takes the bytes of one
** element via wcs_txn_add_to_cell_bytes(), or iValue, counted as the
** element of its 8 bytes big-endian. MergeToCell folds a state of
** the family's type (8-byte big-endian for SUM/MIN/MAX, a wcs_hll sketch
** for HLL); an empty state is a no-op. WCS_MISMATCH on a non-aggregate
** family or the wrong input kind; WCS_CORRUPT if a stored state is bad.
*/
int wcs_txn_add_to_cell(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                        size_t nRow, const char *zFamily, const void *pQual,
                        size_t nQual, int64_t iTs, int64_t iValue);
int wcs_txn_add_to_cell_bytes(wcs_txn *pTxn, wcs_table *pTab,
                              const void *pRow, size_t nRow,
                              const char *zFamily, const void *pQual,
                              size_t nQual, int64_t iTs, const void *pElem,
                              size_t nElem);
int wcs_txn_merge_to_cell(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                          size_t nRow, const char *zFamily, const void *pQual,
                          size_t nQual, int64_t iTs, const void *pState,
                          size_t nState);

/*
** ReadModifyWrite on the latest live cell of a column (as this transaction
** sees it). Increment: the value must be exactly 8 bytes, big-endian
** signed (a missing cell counts as 0), else WCS_MISMATCH; the sum wraps
** like Bigtable's. Append: a missing cell counts as "". The new cell's
** timestamp is max(latest cell's timestamp, now). *piNew / (*ppNew,
** *pnNew) receive the new value if not NULL; *ppNew is malloc'd, free with
** wcs_free().
*/
int wcs_txn_increment(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                      size_t nRow, const char *zFamily, const void *pQual,
                      size_t nQual, int64_t iDelta, int64_t *piNew);
int wcs_txn_append(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                   size_t nRow, const char *zFamily, const void *pQual,
                   size_t nQual, const void *pVal, size_t nVal, void **ppNew,
                   size_t *pnNew);

/* A predicate on one row for CheckAndMutate. */
#define WCS_PRED_ROW_EXISTS 0 /* the row has any live cell (zFamily ignored;
                              ** Bigtable's unset predicate) */
#define WCS_PRED_EXISTS     1 /* the column has a live cell */
#define WCS_PRED_NOT_EXISTS 2 /* it has none */
#define WCS_PRED_EQ         3 /* the latest live cell's value, compared as */
#define WCS_PRED_NE         4 /* bytes (memcmp, shorter first) with pVal; */
#define WCS_PRED_LT         5 /* false when the column has no live cell */
#define WCS_PRED_LE         6
#define WCS_PRED_GT         7
#define WCS_PRED_GE         8
typedef struct wcs_predicate {
  int eOp;                 /* WCS_PRED_* */
  const char *zFamily;     /* the column: family ... */
  const void *pQual;       /* ... and qualifier */
  size_t nQual;
  const void *pVal;        /* comparison operand for EQ..GE */
  size_t nVal;
} wcs_predicate;

/* Evaluate pPred (NULL = WCS_PRED_ROW_EXISTS) on a row as this transaction
** sees it: *pbMatch is 1 or 0. CheckAndMutate is this followed by the
** mutations of the chosen branch (see wcs_table_check_and_mutate()). */
int wcs_txn_check(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                  size_t nRow, const wcs_predicate *pPred, int *pbMatch);

/* A key range of rows. Unbounded start: pStart NULL (or nStart 0);
** unbounded end: pEnd NULL (or nEnd 0). Default bounds are [start, end),
** Bigtable's default; the flags flip each side. One row key k is
** {k, n, 0, k, n, 1}. */
typedef struct wcs_key_range {
  const void *pStart;      /* first row key, NULL = table start */
  size_t nStart;
  int bStartExcl;          /* 1: start is excluded */
  const void *pEnd;        /* end row key, NULL = table end */
  size_t nEnd;
  int bEndIncl;            /* 1: end is included */
} wcs_key_range;

/* Delete every row in a key range (pRange NULL: every row of the table),
** or every row whose key starts with a prefix (nPrefix 0: every row of the
** table). One range tombstone per family: the cost does not grow with the
** number of rows deleted. */
int wcs_txn_delete_range(wcs_txn *pTxn, wcs_table *pTab,
                         const wcs_key_range *pRange);
int wcs_txn_delete_prefix(wcs_txn *pTxn, wcs_table *pTab, const void *pPrefix,
                          size_t nPrefix);

/* ---- Data-API style one-row mutation lists ------------------------- */

#define WCS_MUT_SET_CELL        1 /* zFamily, qual, iTs, value */
#define WCS_MUT_DELETE_CELLS    2 /* zFamily, qual, [iTs, iEndTs) */
#define WCS_MUT_DELETE_FAMILY   3 /* zFamily */
#define WCS_MUT_DELETE_ROW      4 /* - */
#define WCS_MUT_ADD_TO_CELL     5 /* zFamily, qual, iTs, iValue (SUM/MIN/
                                  ** MAX) or value bytes (HLL element) */
#define WCS_MUT_MERGE_TO_CELL   6 /* zFamily, qual, iTs, value = state */
typedef struct wcs_mutation {
  int eType;               /* WCS_MUT_* */
  const char *zFamily;
  const void *pQual;
  size_t nQual;
  int64_t iTs;             /* cell timestamp or range start */
  int64_t iEndTs;          /* DELETE_CELLS range end, 0 = none */
  const void *pVal;
  size_t nVal;
  int64_t iValue;          /* ADD_TO_CELL integer input */
} wcs_mutation;

/* Append mutations of one row, in order (later ones mask earlier ones).
** They are one, as Bigtable's MutateRow: when one fails, none of them is
** kept (the transaction's earlier writes are). */
int wcs_txn_mutate_row(wcs_txn *pTxn, wcs_table *pTab, const void *pRow,
                       size_t nRow, const wcs_mutation *aMut, int nMut);

/* One-shot MutateRow: the mutations committed atomically on their own. */
int wcs_table_mutate_row(wcs_table *pTab, const void *pRow, size_t nRow,
                         const wcs_mutation *aMut, int nMut);

/* One-shot CheckAndMutateRow, atomic against every other writer: evaluate
** pPred (NULL: row has any cell) on the latest state, apply aTrue if it
** matched, else aFalse, commit. *pbMatched (if not NULL) gets the result.
** Both lists are checked first, as Bigtable checks the whole request: a
** mutation in either that could not apply (an unknown family, a plain
** cell in an aggregate family, an empty time range...) fails the call
** with nothing written, whichever branch the predicate would pick. */
int wcs_table_check_and_mutate(wcs_table *pTab, const void *pRow,
                               size_t nRow, const wcs_predicate *pPred,
                               const wcs_mutation *aTrue, int nTrue,
                               const wcs_mutation *aFalse, int nFalse,
                               int *pbMatched);

/* ---- HyperLogLog++ sketches (WCS_AGG_HLL states) -------------------- */

/*
** State format (doc/engine.md): byte 0 'H', byte 1 version (1), byte 2
** precision p (14), byte 3 encoding (0 sparse, 1 dense); sparse: a varint
** count then sorted varint-delta register entries (index << 6 | rank);
** dense: 2^p one-byte registers. Elements are hashed with 64-bit XXH3.
** The estimate (Ertl's improved estimator) has a standard error of about
** 1.04/sqrt(2^14) = 0.81%, and is exact-ish (linear-counting accuracy)
** for small counts.
*/
#define WCS_HLL_PRECISION 14
/* *pnCount: the estimated number of distinct elements (0 for an empty
** state). WCS_CORRUPT if the state is malformed. */
int wcs_hll_estimate(const void *pState, size_t nState, uint64_t *pnCount);

/* ---- reading rows -------------------------------------------------- */

/* A row filter's verdicts (wcs_read_options.xRowFilter). */
#define WCS_ROW_EMIT 0 /* read and return this row */
#define WCS_ROW_SKIP 1 /* skip this row, go on with the next */
#define WCS_ROW_SEEK 2 /* skip to the key in *ppSeek (see xRowFilter) */
#define WCS_ROW_DONE 3 /* end of the scan */
#define WCS_ROW_EMIT_PREFIX 4 /* return this row, and every row that starts
                              ** with *ppSeek without asking (xRowFilter) */

struct wcs_cell; /* below */

typedef struct wcs_read_options {
  /* Rows: the union of these ranges, each row once, in key order (they
  ** may overlap and come in any order). NULL/0: the whole table. */
  const wcs_key_range *aRange;
  int nRange;
  int bReverse;            /* descending row key order (cells in a row keep
                           ** their order) */
  uint64_t nRowLimit;      /* stop after this many rows returned; 0 = none */
  /* Families to read, by name; only those are read from storage. NULL:
  ** all. A row with no live cell in them is not returned. */
  const char *const *azFamily;
  int nFamily;
  /* With azFamily, or with bKeysOnly: the rows are still every row of the
  ** table (a live cell in any family), and cells of azFamily are wanted.
  ** The other families are read only to find rows, and not at all when
  ** the files' notes show that every family has the same rows
  ** (doc/engine.md, "Rows from the files' notes"); then only azFamily's
  ** cells are returned, else the other families' too. */
  int bRowsOfAll;
  int nVersions;           /* newest n cells per column after the time
                           ** filter; 0 = all (history) */
  int64_t iMinTs;          /* only cells with ts >= iMinTs; default 0 */
  int64_t iMaxTs;          /* only cells with ts < iMaxTs; default
                           ** INT64_MAX (no bound) */
  int64_t iAsOf;           /* if >= 0: only cells with ts <= iAsOf (with
                           ** nVersions 1: the value as of that time);
                           ** default -1 */
  int bKeysOnly;           /* return row keys only: cells are checked for
                           ** liveness but not copied (ncell is 0) */
  int bNoHeat;             /* not counted as reads in the key-distribution
                           ** counters (wcs_table_heatmap): a tool's own
                           ** pass over the table, which is not its traffic */
  /*
  ** Optional, for skip scans: called with each candidate row key (raw,
  ** borrowed for the call) before its cells are read. Return a
  ** WCS_ROW_* verdict. For WCS_ROW_SEEK set *ppSeek and *pnSeek to a key
  ** (owned by the filter, valid until its next call): forward, the next
  ** candidate is the first row >= that key; reverse, the last row < it.
  ** A seek that does not move in scan direction acts as WCS_ROW_SKIP.
  ** For WCS_ROW_EMIT_PREFIX set *ppSeek and *pnSeek to a prefix of the row
  ** key: the row is returned, and so is every later row that starts with
  ** those bytes, without a call (the cursor keeps a copy; the next row
  ** that does not start with them is asked about again). For a skip
  ** scan, the fields it checks: the rows of one such prefix are a run.
  ** Other return values are errors returned by the cursor.
  */
  int (*xRowFilter)(void *pCtx, const void *pRow, size_t nRow,
                    const void **ppSeek, size_t *pnSeek);
  void *pFilterCtx;
  /*
  ** Optional, for filters on values: called with the cells of each row
  ** the read would return (as wcs_cursor_cells() would give them,
  ** borrowed for the call), once they are read. Return 0 to pass over the
  ** row (it is not returned and does not count toward nRowLimit), 1 to
  ** return it. Not called with bKeysOnly (the rows have no cells).
  */
  int (*xCellFilter)(void *pCtx, const struct wcs_cell *aCell, int nCell);
  void *pCellFilterCtx;
  /* Without a transaction: read as of this snapshot of the engine's store
  ** (wcs_snapshot_new(wcs_engine_db(...))), which must stay live until
  ** wcs_cursor_open() returns, so that several cursors read one moment
  ** (the cursor holds what it reads by itself then). NULL:
  ** the latest state. Ignored with a transaction (its snapshot). */
  const wcs_snapshot *pSnap;
  /* With a transaction: read its writes as they were at this moment
  ** (wcs_txn_moment), not as they are now; NULL: now. The moment must be
  ** the transaction's (another one's is refused, WCS_MISUSE), made since
  ** its last commit; the cursor holds it until it is closed. */
  struct wcs_moment *pMoment;
} wcs_read_options;

/* Defaults: whole table, forward, all families, all versions, no time
** bounds (iMaxTs = INT64_MAX, iAsOf = -1). */
void wcs_read_options_init(wcs_read_options *pOpt);

/* One cell of the current row. Pointers are borrowed until the cursor
** moves or closes. */
typedef struct wcs_cell {
  int iFamily;             /* index in the table's families */
  const char *zFamily;     /* its name */
  const void *pQual;       /* qualifier bytes */
  size_t nQual;
  int64_t iTs;             /* timestamp, microseconds */
  const void *pVal;        /* value bytes */
  size_t nVal;
} wcs_cell;

/*
** Open a cursor and position it on the first row (check wcs_cursor_eof()).
** pTxn NULL reads the latest committed state (a snapshot taken now);
** otherwise the transaction's view including its uncommitted writes. The
** options (and everything they point to, except xRowFilter's context) are
** copied. Memory is one row plus a block per family read, whatever the
** scan length. Close with wcs_cursor_close() before the table/txn.
** WCS_RANGE if nVersions, nRange or nFamily is negative; WCS_SCHEMA if
** the table was altered or dropped since pTab was opened.
*/
int wcs_cursor_open(wcs_cursor **ppCur, wcs_table *pTab, wcs_txn *pTxn,
                    const wcs_read_options *pOpt);
void wcs_cursor_close(wcs_cursor *pCur);
/* A cursor over a transaction reads its writes as they are when it reads:
** a write while the cursor is open shows in its later rows. After
** wcs_cursor_freeze() it reads them as they are now until it is closed
** (its seeks too), whatever the transaction writes meanwhile: for a
** reader whose rows feed writes to the same table (INSERT ... SELECT). It
** copies the transaction's writes once; a cursor without a transaction or
** already frozen is left as it is. WCS_NOMEM leaves it unfrozen. */
int wcs_cursor_freeze(wcs_cursor *pCur);
/* The same, at moment pMoment of the cursor's transaction: a cursor that
** reads the transaction's writes as they are now reads them as they were
** at the moment from now on (one that reads an older state, a moment or
** the writes before a commit, is frozen as wcs_cursor_freeze does). */
int wcs_cursor_freeze_at(wcs_cursor *pCur, wcs_moment *pMoment);
/* Undo a freeze: the cursor reads its transaction's writes as they are
** now again, from its current row on (after a rollback to a savepoint,
** say, which a frozen cursor would not see). */
void wcs_cursor_thaw(wcs_cursor *pCur);
/* 1 if a write to row pRow could show in the cursor's rows to come: it is
** not at its end and pRow lies past its current row in scan order (pRow
** NULL: any row, as for a range of rows); else 0. A cheap test before
** wcs_cursor_freeze(). */
int wcs_cursor_ahead(const wcs_cursor *pCur, const void *pRow, size_t nRow);
/* Nonzero when past the last row (or after an error). */
int wcs_cursor_eof(const wcs_cursor *pCur);
/* Move to the next row in scan order. */
int wcs_cursor_next(wcs_cursor *pCur);
/* Forward: move to the first row >= key; reverse: the last row < key.
** Stays within the ranges; may move backwards in scan order. */
int wcs_cursor_seek(wcs_cursor *pCur, const void *pKey, size_t nKey);
/* The current row's raw key, borrowed until the cursor moves. */
const void *wcs_cursor_row(const wcs_cursor *pCur, size_t *pnRow);
/* The current row's cells, grouped by family (schema order), qualifiers
** ascending, timestamps descending; borrowed until the cursor moves.
** History mode is nVersions 0: every live cell. */
const wcs_cell *wcs_cursor_cells(const wcs_cursor *pCur, int *pnCell);
/* For a keys-only read of the whole table (bKeysOnly, no aRange, no
** azFamily, no row filter) whose rows the files' notes count without
** reading them (doc/engine.md, "Rows from the files' notes"): returns 1
** with *pnLeft the rows the read returns after the current one (0 at the
** end), so that a caller that needs only how many rows there are need
** not step through them. Returns 0 when the count is not known that way
** (data not settled in one sorted run, deletes not yet compacted away, a
** transaction's own writes, a time filter, an age limit) or after
** wcs_cursor_seek(): read the rows. */
int wcs_cursor_rows_left(const wcs_cursor *pCur, uint64_t *pnLeft);

/* ---- statistics for the planner ------------------------------------ */

/* Estimated rows in the union of the ranges (aRange NULL: the table),
** from storage metadata and a small sample of rows (cached per table);
** cheap, no full scan. */
int wcs_table_estimate_rows(wcs_table *pTab, const wcs_key_range *aRange,
                            int nRange, uint64_t *pnRows);

/* Approximate size of table pTab: *pnBytes stored (compressed) bytes and
** *pnKeys cells (every version, and deleted ones until compaction drops
** them), summed over its families' key ranges, from the sorted files'
** metadata: cheap, reads no data. Writes still in the memtable are not
** counted until they are flushed. Either pointer may be NULL. */
int wcs_table_approximate(wcs_table *pTab, uint64_t *pnBytes,
                          uint64_t *pnKeys);

/* Estimated number of distinct values of the first nField key fields
** (1 <= nField <= key field count), from sampled row keys. For a table
** without key schema nField counts leading bytes. */
int wcs_table_estimate_prefixes(wcs_table *pTab, int nField,
                                uint64_t *pnDistinct);

/*
** Key-distribution counters: per table, reads (rows returned) and writes
** (cells written) counted in memory into key-space buckets x time slots,
** for the shell's hotspot picture. Bucket b of a slot holds row keys k
** with azBound[b-1] <= k < azBound[b] (first/last open-ended; a slot cut
** at fewer keys repeats its first bound, and the buckets between hold
** none); each slot has its own bounds, chosen when the slot starts from
** the keys read and written in the slot before or, if there were none
** (a fresh process, an idle minute), from the table's stored keys
** (quantiles by bytes).
*/
typedef struct wcs_heat_slot {
  int64_t iStart;          /* slot start, micros since the epoch */
  uint64_t *aRead;         /* [nBucket] rows read */
  uint64_t *aWrite;        /* [nBucket] cells written */
  const void **apBound;    /* [nBucket-1] bucket boundary row keys */
  size_t *anBound;         /* their lengths */
} wcs_heat_slot;
typedef struct wcs_heatmap {
  int nBucket;             /* key-space buckets per slot */
  int nSlot;               /* slots present, oldest first */
  int64_t iSlotMicros;     /* slot width */
  wcs_heat_slot *aSlot;    /* [nSlot] */
} wcs_heatmap;
/* A copy of a table's counters; free with wcs_heatmap_free(). */
int wcs_table_heatmap(wcs_table *pTab, wcs_heatmap **ppMap);
void wcs_heatmap_free(wcs_heatmap *pMap);
/* Persist every table's counters into the catalog (they are loaded again
** by wcs_engine_open()); optional, e.g. at close. */
int wcs_engine_heat_save(wcs_engine *pEng);

/* ====================================================================
** SQLite
**
** The module `wcs` and its SQL functions (doc/sql.md is the reference).
** The loadable extension build/wcs.so registers them from its entry point
** sqlite3_wcs_init (`.load ./build/wcs`); a program linking the static
** library calls wcs_register() on each connection, or passes
** sqlite3_wcs_init to sqlite3_auto_extension().
** ==================================================================== */

struct sqlite3;
struct sqlite3_api_routines;

/* Register the module `wcs` and the SQL functions on connection db.
** Returns an SQLite result code (SQLITE_OK is 0). */
int wcs_register(struct sqlite3 *db);

/* The engine of the store that connection db's wcs tables of schema
** zSchema ("main", "temp", an attached name; NULL: "main") use, as the
** module opened it: the store beside the database file, or the in-memory
** store of a ":memory:" or temporary database. NULL when the module is not
** registered on db or has not opened that store yet (no wcs table of the
** schema was used). The engine belongs to the connection: do not close
** it, and use it only while db is open. (A file store can also be opened
** with wcs_engine_open_path(), which shares the module's engine; an
** in-memory store is reachable only this way.) When another process
** writes the store, the connection reads it through a follower of its
** own (wcs_options.bFollow), which a later statement may replace with a
** newer one: ask again after each statement. */
wcs_engine *wcs_sqlite_engine(struct sqlite3 *db, const char *zSchema);

/* The extension entry point, for sqlite3_auto_extension(). */
int sqlite3_wcs_init(struct sqlite3 *db, char **pzErrMsg,
                     const struct sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif
#endif /* WCS_H */
