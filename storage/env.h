/*
** env.h — the file-system seam of the storage engine.
**
** Every byte the store reads or writes goes through a wcs_env, so that
**   - the POSIX env (env_posix) serves stores on disk,
**   - the memory env (env_mem) serves in-memory stores (":memory:" SQLite
**     databases): same code paths, files are heap buffers, nothing touches
**     the disk,
**   - the fault env (env_fault) wraps another env and fails the Nth write,
**     sync or read with ENOSPC/EIO, or silently drops unsynced data on a
**     simulated crash, for the fault tests.
**
** Files are append-only for writers and random-access for readers, which is
** all an LSM needs. Errors set *pzErr to a message that names the path and
** the OS reason ("cannot open app.db.wcs/000012.sst: Permission denied").
** ENOSPC maps to WCS_FULL, EACCES/EPERM to WCS_PERM, ENOENT on open to
** WCS_CANTOPEN, other failures to WCS_IOERR.
*/
#ifndef WCS_ENV_H
#define WCS_ENV_H

#include <stddef.h>
#include <stdint.h>

typedef struct wcs_env wcs_env;
typedef struct wcs_file wcs_file; /* an open file; fields private to env */

/* Open flags */
#define WCS_OPEN_READ     0x01 /* random-access reads */
#define WCS_OPEN_WRITE    0x02 /* appends; created if missing */
#define WCS_OPEN_TRUNCATE 0x04 /* with WRITE: start empty */

struct wcs_env {
  /* Open zPath. Returns WCS_OK and *ppFile, or an error code + *pzErr. */
  int (*xOpen)(wcs_env *, const char *zPath, int flags, wcs_file **ppFile,
               char **pzErr);
  /* Read up to n bytes at offset; *pnRead gets the count (short at EOF). */
  int (*xRead)(wcs_file *, uint64_t iOff, void *p, size_t n, size_t *pnRead,
               char **pzErr);
  /* Append n bytes at the end. */
  int (*xAppend)(wcs_file *, const void *p, size_t n, char **pzErr);
  /* Make appended data durable (fdatasync). */
  int (*xSync)(wcs_file *, char **pzErr);
  /* Current size in bytes. */
  int (*xSize)(wcs_file *, uint64_t *pnSize, char **pzErr);
  /* Cut the file to n bytes (recovery discards a torn WAL tail). */
  int (*xTruncate)(wcs_file *, uint64_t n, char **pzErr);
  /* Close; NULL is a no-op. Does not sync. */
  void (*xClose)(wcs_file *);

  int (*xDelete)(wcs_env *, const char *zPath, char **pzErr);
  /* Atomic rename (replaces zTo). */
  int (*xRename)(wcs_env *, const char *zFrom, const char *zTo, char **pzErr);
  /* Does zPath exist? (*pbExists 0/1) */
  int (*xExists)(wcs_env *, const char *zPath, int *pbExists);
  /* Create directory (ok if it exists). */
  int (*xMkdir)(wcs_env *, const char *zPath, char **pzErr);
  /* fsync a directory so renames/creations inside it are durable. */
  int (*xSyncDir)(wcs_env *, const char *zPath, char **pzErr);
  /* Call x for each entry name (not "." / "..") of directory zPath. */
  int (*xList)(wcs_env *, const char *zPath, void *pCtx,
               int (*x)(void *pCtx, const char *zName), char **pzErr);
  /* Take the store's process lock on file zPath (created if missing):
  ** exclusive for a writer, shared for a read-only open. Returns WCS_BUSY
  ** with "store <dir> is locked by another process" if it is held
  ** incompatibly. *ppLock is released by xUnlock. */
  int (*xLock)(wcs_env *, const char *zPath, int bExclusive, void **ppLock,
               char **pzErr);
  void (*xUnlock)(wcs_env *, void *pLock);
  /* Free the env itself (the POSIX env is a static singleton: no-op). */
  void (*xDestroy)(wcs_env *);
  /* Current size, and whether the file was deleted since it was opened
  ** (*pbGone 1: no name leads to it any more; a follower watching a
  ** writer's manifest learns so that another one replaced it). */
  int (*xStat)(wcs_file *, uint64_t *pnSize, int *pbGone, char **pzErr);
};

/* The process-wide POSIX env (static; never destroyed). */
wcs_env *wcs_env_posix(void);

/* A new, empty memory env. Free with env->xDestroy(env) once no store uses
** it. Thread-safe. */
wcs_env *wcs_env_mem_new(void);

/*
** Fault injection over another env (tests only). Counters count calls of
** each kind made through the wrapper; when a counter reaches its trigger
** the call fails with the given errno-derived code (WCS_FULL for ENOSPC,
** WCS_IOERR for EIO) and, if bSticky, every later call of that kind fails.
*/
typedef struct wcs_fault {
  int64_t nWriteFail; /* fail the Nth xAppend (1-based); 0 = never */
  int64_t nSyncFail;  /* fail the Nth xSync */
  int64_t nReadFail;  /* fail the Nth xRead */
  int rcFail;         /* WCS_FULL or WCS_IOERR */
  int bSticky;        /* keep failing after the first failure */
  int64_t nWrites, nSyncs, nReads; /* calls seen so far */
  int64_t nReadBytes;              /* bytes those xRead calls asked for */
} wcs_fault;
wcs_env *wcs_env_fault_new(wcs_env *pBase, wcs_fault *pFault);
/* Change the settings of a fault env that other threads may be using (a
** store's background flush, say): xChange runs under the env's lock, which
** every call of the env takes to count itself and read the settings. */
void wcs_env_fault_change(wcs_env *pEnv, void (*xChange)(wcs_fault *, void *),
                          void *pArg);

/*
** Fault env only: simulate a machine crash. Every file written through the
** fault env is cut back to the bytes it had when last synced (files never
** synced become empty). Returns WCS_OK or WCS_IOERR. Call it only while no
** store is open on the env.
*/
int wcs_env_fault_crash(wcs_env *pEnv);

#endif /* WCS_ENV_H */
