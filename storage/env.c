/*
** env.c — the three implementations of the file-system seam (env.h):
**
**   env_posix  files on disk: pread for reads, write() loops for appends,
**              fdatasync for xSync, rename + directory fsync for atomic
**              replacement, flock() on the store's LOCK file for the one-
**              writer rule (flock locks belong to an open file description,
**              so a second open inside the same process is refused too,
**              and a SIGKILLed owner releases its lock with its last fd).
**   env_mem    files are heap buffers in a name table guarded by one mutex;
**              each file has a reader/writer lock so readers run in
**              parallel with one appender (an append may move the buffer).
**              Each file remembers how many bytes were synced, which lets
**              the fault env simulate a power cut.
**   env_fault  wraps another env, counts appends, syncs and reads, fails
**              the Nth one (WCS_FULL or WCS_IOERR, optionally sticky), and
**              on wcs_env_fault_crash() cuts every file it wrote back to
**              the bytes it had synced, as a machine crash would.
**
** This module owns no on-disk format. Error messages name the path and the
** OS reason; errno is mapped as env.h says.
*/
#include "storage/env.h"
#include "storage/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

/* ====================================================================
** Shared helpers
** ==================================================================== */

static int errnoToRc(int e, int bOpen) {
  switch (e) {
  case ENOSPC:
  case EDQUOT:
    return WCS_FULL;
  case EACCES:
  case EPERM:
  case EROFS:
    return WCS_PERM;
  case ENOENT:
    return bOpen ? WCS_CANTOPEN : WCS_IOERR;
  case ENOMEM:
    return WCS_NOMEM;
  default:
    return WCS_IOERR;
  }
}

static char *dupStr(const char *z) {
  size_t n = strlen(z) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, z, n);
  return p;
}

/* The directory part of a path, for "store <dir> is locked" messages. */
static void dirOf(const char *zPath, char *zOut, size_t nOut) {
  const char *zSlash = strrchr(zPath, '/');
  size_t n = zSlash ? (size_t)(zSlash - zPath) : strlen(zPath);
  if (zSlash == zPath) n = 1;
  if (zSlash == NULL) {
    snprintf(zOut, nOut, ".");
    return;
  }
  if (n >= nOut) n = nOut - 1;
  memcpy(zOut, zPath, n);
  zOut[n] = 0;
}

/* An error about the store whose lock file is zLockPath: zFmt names the
** store directory with its one %s. */
static int storeErr(char **pzErr, int rc, const char *zLockPath,
                    const char *zFmt) {
  char zDir[4096];
  dirOf(zLockPath, zDir, sizeof zDir);
  return wcs_seterr(pzErr, rc, zFmt, zDir);
}

/* ====================================================================
** POSIX env
** ==================================================================== */

typedef struct PosixFile {
  int fd;      /* open descriptor, O_CLOEXEC */
  char *zPath; /* for messages, owned */
} PosixFile;

static int posixErr(char **pzErr, int bOpen, const char *zWhat,
                    const char *zPath) {
  int e = errno;
  int rc = errnoToRc(e, bOpen);
  return wcs_seterr(pzErr, rc, "%s %s: %s%s", zWhat, zPath, strerror(e),
                    e == EMFILE || e == ENFILE
                        ? " (raise the limit on open files, ulimit -n, or "
                          "open fewer stores at once)"
                        : "");
}

static int posixOpen(wcs_env *pEnv, const char *zPath, int flags,
                     wcs_file **ppFile, char **pzErr) {
  int oflags = O_CLOEXEC;
  PosixFile *p;
  int fd;
  (void)pEnv;
  *ppFile = NULL;
  if (flags & WCS_OPEN_WRITE) {
    oflags |= O_CREAT | ((flags & WCS_OPEN_READ) ? O_RDWR : O_WRONLY);
    if (flags & WCS_OPEN_TRUNCATE) oflags |= O_TRUNC;
  } else {
    oflags |= O_RDONLY;
  }
  do {
    fd = open(zPath, oflags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return posixErr(pzErr, 1, "cannot open", zPath);
  if (flags & WCS_OPEN_WRITE) {
    if (lseek(fd, 0, SEEK_END) < 0) {
      int rc = posixErr(pzErr, 0, "cannot seek in", zPath);
      close(fd);
      return rc;
    }
  }
  p = malloc(sizeof *p);
  if (p) p->zPath = dupStr(zPath);
  if (p == NULL || p->zPath == NULL) {
    free(p);
    close(fd);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory opening %s", zPath);
  }
  p->fd = fd;
  *ppFile = (wcs_file *)p;
  return WCS_OK;
}

static int posixRead(wcs_file *f, uint64_t iOff, void *pBuf, size_t n,
                     size_t *pnRead, char **pzErr) {
  PosixFile *p = (PosixFile *)f;
  size_t nDone = 0;
  while (nDone < n) {
    ssize_t r =
        pread(p->fd, (char *)pBuf + nDone, n - nDone, (off_t)(iOff + nDone));
    if (r < 0) {
      if (errno == EINTR) continue;
      *pnRead = nDone;
      return wcs_seterr(pzErr, errnoToRc(errno, 0),
                        "cannot read %s at offset %llu: %s", p->zPath,
                        (unsigned long long)(iOff + nDone), strerror(errno));
    }
    if (r == 0) break;
    nDone += (size_t)r;
  }
  *pnRead = nDone;
  return WCS_OK;
}

static int posixAppend(wcs_file *f, const void *pBuf, size_t n, char **pzErr) {
  PosixFile *p = (PosixFile *)f;
  const char *a = pBuf;
  while (n > 0) {
    ssize_t w = write(p->fd, a, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return posixErr(pzErr, 0, "cannot write", p->zPath);
    }
    a += w;
    n -= (size_t)w;
  }
  return WCS_OK;
}

static int posixSync(wcs_file *f, char **pzErr) {
  PosixFile *p = (PosixFile *)f;
  int r;
  do {
    r = fdatasync(p->fd);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return posixErr(pzErr, 0, "cannot sync", p->zPath);
  return WCS_OK;
}

static int posixSize(wcs_file *f, uint64_t *pnSize, char **pzErr) {
  PosixFile *p = (PosixFile *)f;
  struct stat st;
  if (fstat(p->fd, &st) < 0) return posixErr(pzErr, 0, "cannot stat", p->zPath);
  *pnSize = (uint64_t)st.st_size;
  return WCS_OK;
}

static int posixStat(wcs_file *f, uint64_t *pnSize, int *pbGone, char **pzErr) {
  PosixFile *p = (PosixFile *)f;
  struct stat st;
  if (fstat(p->fd, &st) < 0) return posixErr(pzErr, 0, "cannot stat", p->zPath);
  *pnSize = (uint64_t)st.st_size;
  *pbGone = st.st_nlink == 0;
  return WCS_OK;
}

static int posixTruncate(wcs_file *f, uint64_t n, char **pzErr) {
  PosixFile *p = (PosixFile *)f;
  int r;
  do {
    r = ftruncate(p->fd, (off_t)n);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return posixErr(pzErr, 0, "cannot truncate", p->zPath);
  /* appends continue at the new end (O_APPEND is not used) */
  if (lseek(p->fd, (off_t)n, SEEK_SET) < 0) {
    return posixErr(pzErr, 0, "cannot seek in", p->zPath);
  }
  return WCS_OK;
}

static void posixClose(wcs_file *f) {
  PosixFile *p = (PosixFile *)f;
  if (p == NULL) return;
  close(p->fd);
  free(p->zPath);
  free(p);
}

static int posixDelete(wcs_env *pEnv, const char *zPath, char **pzErr) {
  (void)pEnv;
  if (unlink(zPath) < 0) return posixErr(pzErr, 0, "cannot delete", zPath);
  return WCS_OK;
}

static int posixRename(wcs_env *pEnv, const char *zFrom, const char *zTo,
                       char **pzErr) {
  (void)pEnv;
  if (rename(zFrom, zTo) < 0) {
    int e = errno;
    return wcs_seterr(pzErr, errnoToRc(e, 0), "cannot rename %s to %s: %s",
                      zFrom, zTo, strerror(e));
  }
  return WCS_OK;
}

static int posixExists(wcs_env *pEnv, const char *zPath, int *pbExists) {
  struct stat st;
  (void)pEnv;
  *pbExists = stat(zPath, &st) == 0;
  return WCS_OK;
}

static int posixMkdir(wcs_env *pEnv, const char *zPath, char **pzErr) {
  struct stat st;
  (void)pEnv;
  if (mkdir(zPath, 0755) == 0) return WCS_OK;
  if (errno == EEXIST && stat(zPath, &st) == 0 && S_ISDIR(st.st_mode)) {
    return WCS_OK;
  }
  if (errno == EEXIST) {
    return wcs_seterr(pzErr, WCS_CANTOPEN,
                      "cannot create directory %s: a file of that name exists",
                      zPath);
  }
  return posixErr(pzErr, 1, "cannot create directory", zPath);
}

static int posixSyncDir(wcs_env *pEnv, const char *zPath, char **pzErr) {
  int fd, r;
  (void)pEnv;
  fd = open(zPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return posixErr(pzErr, 1, "cannot open directory", zPath);
  do {
    r = fsync(fd);
  } while (r < 0 && errno == EINTR);
  if (r < 0 && errno != EINVAL) {
    int rc = posixErr(pzErr, 0, "cannot sync directory", zPath);
    close(fd);
    return rc;
  }
  close(fd);
  return WCS_OK;
}

static int posixList(wcs_env *pEnv, const char *zPath, void *pCtx,
                     int (*x)(void *, const char *), char **pzErr) {
  DIR *d;
  struct dirent *e;
  int rc = WCS_OK;
  (void)pEnv;
  d = opendir(zPath);
  if (d == NULL) return posixErr(pzErr, 1, "cannot list directory", zPath);
  while (rc == WCS_OK && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    rc = x(pCtx, e->d_name);
  }
  closedir(d);
  return rc;
}

typedef struct PosixLock {
  int fd; /* descriptor holding the flock() */
} PosixLock;

static int posixLock(wcs_env *pEnv, const char *zPath, int bExclusive,
                     void **ppLock, char **pzErr) {
  int fd, r;
  PosixLock *p;
  (void)pEnv;
  *ppLock = NULL;
  fd = open(zPath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EACCES || errno == EROFS) && !bExclusive) {
    int eFirst = errno;
    fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && eFirst == EROFS) {
      /* a store on a read-only file system that has no lock file (a
      ** copy wcs_db_checkpoint made, mounted read-only): no process can
      ** write it there, so a shared lock has nothing to keep out */
      p = malloc(sizeof *p);
      if (p == NULL) {
        return wcs_seterr(pzErr, WCS_NOMEM, "out of memory locking %s", zPath);
      }
      p->fd = -1;
      *ppLock = p;
      return WCS_OK;
    }
  }
  if (fd < 0 && errno == ENOTDIR) {
    /* the store's path names a file (mkdir was not tried: a read-only open
    ** or one without bCreate) */
    return storeErr(pzErr, WCS_CANTOPEN, zPath,
                    "cannot open store %s: it is a file, not a store "
                    "directory");
  }
  if (fd < 0) return posixErr(pzErr, 1, "cannot open lock file", zPath);
  do {
    r = flock(fd, (bExclusive ? LOCK_EX : LOCK_SH) | LOCK_NB);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK) {
      return storeErr(pzErr, WCS_BUSY, zPath,
                      "store %s is locked by another process (or another "
                      "handle in this process); close it first");
    }
    return wcs_seterr(pzErr, errnoToRc(e, 0), "cannot lock %s: %s", zPath,
                      strerror(e));
  }
  p = malloc(sizeof *p);
  if (p == NULL) {
    close(fd);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory locking %s", zPath);
  }
  p->fd = fd;
  *ppLock = p;
  return WCS_OK;
}

static void posixUnlock(wcs_env *pEnv, void *pLock) {
  PosixLock *p = pLock;
  (void)pEnv;
  if (p == NULL) return;
  if (p->fd >= 0) {
    flock(p->fd, LOCK_UN);
    close(p->fd);
  }
  free(p);
}

static void posixDestroy(wcs_env *pEnv) {
  (void)pEnv;
}

static wcs_env posixEnv = {
    posixOpen,     posixRead,    posixAppend, posixSync,   posixSize,
    posixTruncate, posixClose,   posixDelete, posixRename, posixExists,
    posixMkdir,    posixSyncDir, posixList,   posixLock,   posixUnlock,
    posixDestroy,  posixStat};

wcs_env *wcs_env_posix(void) {
  return &posixEnv;
}

/* ====================================================================
** Memory env
** ==================================================================== */

typedef struct MemNode MemNode;
struct MemNode {
  char *zName;         /* full path, owned */
  int bDir;            /* a directory entry (no data) */
  int nRef;            /* open handles + 1 while linked in the table */
  pthread_rwlock_t rw; /* guards a/n/nAlloc against a moving buffer */
  uint8_t *a;          /* file bytes */
  size_t n;            /* bytes in the file */
  size_t nAlloc;       /* bytes allocated at a */
  size_t nSynced;      /* prefix made durable by xSync, <= n */
  int nLockShared;     /* shared store locks held */
  int bLockExcl;       /* an exclusive store lock is held */
  MemNode *pNext;      /* next in the env's list */
};

typedef struct MemEnv {
  wcs_env base;       /* must be first */
  pthread_mutex_t mu; /* guards the list and every nRef / lock count */
  MemNode *pList;     /* every linked node */
} MemEnv;

typedef struct MemFile {
  MemEnv *pEnv;   /* owning env */
  MemNode *pNode; /* referenced node (nRef held) */
  int bWrite;     /* opened for appends */
} MemFile;

static MemNode *memFind(MemEnv *p, const char *zPath) {
  MemNode *n;
  for (n = p->pList; n; n = n->pNext) {
    if (strcmp(n->zName, zPath) == 0) return n;
  }
  return NULL;
}

/* Caller holds p->mu. */
static void memNodeUnref(MemNode *n) {
  if (--n->nRef == 0) {
    pthread_rwlock_destroy(&n->rw);
    free(n->a);
    free(n->zName);
    free(n);
  }
}

static MemNode *memNodeNew(MemEnv *p, const char *zPath, int bDir) {
  MemNode *n = calloc(1, sizeof *n);
  if (n == NULL) return NULL;
  n->zName = dupStr(zPath);
  if (n->zName == NULL) {
    free(n);
    return NULL;
  }
  pthread_rwlock_init(&n->rw, NULL);
  n->bDir = bDir;
  n->nRef = 1;
  n->pNext = p->pList;
  p->pList = n;
  return n;
}

static void memUnlink(MemEnv *p, MemNode *n) {
  MemNode **pp;
  for (pp = &p->pList; *pp; pp = &(*pp)->pNext) {
    if (*pp == n) {
      *pp = n->pNext;
      memNodeUnref(n);
      return;
    }
  }
}

static int memOpen(wcs_env *pEnv, const char *zPath, int flags,
                   wcs_file **ppFile, char **pzErr) {
  MemEnv *p = (MemEnv *)pEnv;
  MemNode *n;
  MemFile *f;
  *ppFile = NULL;
  f = malloc(sizeof *f);
  if (f == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  pthread_mutex_lock(&p->mu);
  n = memFind(p, zPath);
  if (n && n->bDir) {
    pthread_mutex_unlock(&p->mu);
    free(f);
    return wcs_seterr(pzErr, WCS_CANTOPEN, "cannot open %s: Is a directory",
                      zPath);
  }
  if (n == NULL) {
    if ((flags & WCS_OPEN_WRITE) == 0) {
      pthread_mutex_unlock(&p->mu);
      free(f);
      return wcs_seterr(pzErr, WCS_CANTOPEN,
                        "cannot open %s: No such file or directory", zPath);
    }
    n = memNodeNew(p, zPath, 0);
    if (n == NULL) {
      pthread_mutex_unlock(&p->mu);
      free(f);
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
  } else if ((flags & WCS_OPEN_WRITE) && (flags & WCS_OPEN_TRUNCATE)) {
    pthread_rwlock_wrlock(&n->rw);
    n->n = 0;
    n->nSynced = 0;
    pthread_rwlock_unlock(&n->rw);
  }
  n->nRef++;
  pthread_mutex_unlock(&p->mu);
  f->pEnv = p;
  f->pNode = n;
  f->bWrite = (flags & WCS_OPEN_WRITE) != 0;
  *ppFile = (wcs_file *)f;
  return WCS_OK;
}

static int memRead(wcs_file *pf, uint64_t iOff, void *pBuf, size_t n,
                   size_t *pnRead, char **pzErr) {
  MemNode *m = ((MemFile *)pf)->pNode;
  size_t nGot = 0;
  (void)pzErr;
  pthread_rwlock_rdlock(&m->rw);
  if (iOff < m->n) {
    nGot = m->n - (size_t)iOff;
    if (nGot > n) nGot = n;
    memcpy(pBuf, m->a + iOff, nGot);
  }
  pthread_rwlock_unlock(&m->rw);
  *pnRead = nGot;
  return WCS_OK;
}

static int memAppend(wcs_file *pf, const void *pBuf, size_t n, char **pzErr) {
  MemFile *f = (MemFile *)pf;
  MemNode *m = f->pNode;
  int rc = WCS_OK;
  if (!f->bWrite) {
    return wcs_seterr(pzErr, WCS_IOERR, "cannot write %s: opened read-only",
                      m->zName);
  }
  if (n == 0) return WCS_OK;
  pthread_rwlock_wrlock(&m->rw);
  if (m->n + n > m->nAlloc) {
    size_t nNew = m->nAlloc ? m->nAlloc * 2 : 4096;
    uint8_t *a;
    while (nNew < m->n + n)
      nNew *= 2;
    a = realloc(m->a, nNew);
    if (a == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory writing %s", m->zName);
    } else {
      m->a = a;
      m->nAlloc = nNew;
    }
  }
  if (rc == WCS_OK) {
    memcpy(m->a + m->n, pBuf, n);
    m->n += n;
  }
  pthread_rwlock_unlock(&m->rw);
  return rc;
}

static int memSync(wcs_file *pf, char **pzErr) {
  MemNode *m = ((MemFile *)pf)->pNode;
  (void)pzErr;
  pthread_rwlock_wrlock(&m->rw);
  m->nSynced = m->n;
  pthread_rwlock_unlock(&m->rw);
  return WCS_OK;
}

static int memSize(wcs_file *pf, uint64_t *pnSize, char **pzErr) {
  MemNode *m = ((MemFile *)pf)->pNode;
  (void)pzErr;
  pthread_rwlock_rdlock(&m->rw);
  *pnSize = m->n;
  pthread_rwlock_unlock(&m->rw);
  return WCS_OK;
}

/* (Memory stores have no followers: a deleted file reads as present.) */
static int memStat(wcs_file *pf, uint64_t *pnSize, int *pbGone, char **pzErr) {
  *pbGone = 0;
  return memSize(pf, pnSize, pzErr);
}

static int memTruncate(wcs_file *pf, uint64_t n, char **pzErr) {
  MemNode *m = ((MemFile *)pf)->pNode;
  int rc = WCS_OK;
  pthread_rwlock_wrlock(&m->rw);
  if (n <= m->n) {
    m->n = (size_t)n;
    if (m->nSynced > m->n) m->nSynced = m->n;
  } else if (n > m->nAlloc) {
    uint8_t *a = realloc(m->a, (size_t)n);
    if (a == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory extending %s", m->zName);
    } else {
      m->a = a;
      m->nAlloc = (size_t)n;
    }
  }
  if (rc == WCS_OK && n > m->n) {
    memset(m->a + m->n, 0, (size_t)n - m->n);
    m->n = (size_t)n;
  }
  pthread_rwlock_unlock(&m->rw);
  return rc;
}

static void memClose(wcs_file *pf) {
  MemFile *f = (MemFile *)pf;
  if (f == NULL) return;
  pthread_mutex_lock(&f->pEnv->mu);
  memNodeUnref(f->pNode);
  pthread_mutex_unlock(&f->pEnv->mu);
  free(f);
}

static int memDelete(wcs_env *pEnv, const char *zPath, char **pzErr) {
  MemEnv *p = (MemEnv *)pEnv;
  MemNode *n;
  int rc = WCS_OK;
  pthread_mutex_lock(&p->mu);
  n = memFind(p, zPath);
  if (n == NULL || n->bDir) {
    rc = wcs_seterr(pzErr, WCS_IOERR,
                    "cannot delete %s: No such file or directory", zPath);
  } else {
    memUnlink(p, n);
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

static int memRename(wcs_env *pEnv, const char *zFrom, const char *zTo,
                     char **pzErr) {
  MemEnv *p = (MemEnv *)pEnv;
  MemNode *n, *pOld;
  char *zNew;
  int rc = WCS_OK;
  zNew = dupStr(zTo);
  if (zNew == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  pthread_mutex_lock(&p->mu);
  n = memFind(p, zFrom);
  if (n == NULL || n->bDir) {
    rc = wcs_seterr(pzErr, WCS_IOERR,
                    "cannot rename %s to %s: No such file or directory", zFrom,
                    zTo);
    free(zNew);
  } else {
    pOld = memFind(p, zTo);
    if (pOld && pOld != n) memUnlink(p, pOld);
    free(n->zName);
    n->zName = zNew;
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

static int memExists(wcs_env *pEnv, const char *zPath, int *pbExists) {
  MemEnv *p = (MemEnv *)pEnv;
  pthread_mutex_lock(&p->mu);
  *pbExists = memFind(p, zPath) != NULL;
  pthread_mutex_unlock(&p->mu);
  return WCS_OK;
}

static int memMkdir(wcs_env *pEnv, const char *zPath, char **pzErr) {
  MemEnv *p = (MemEnv *)pEnv;
  MemNode *n;
  int rc = WCS_OK;
  pthread_mutex_lock(&p->mu);
  n = memFind(p, zPath);
  if (n == NULL) {
    if (memNodeNew(p, zPath, 1) == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
  } else if (!n->bDir) {
    rc = wcs_seterr(pzErr, WCS_CANTOPEN,
                    "cannot create directory %s: a file of that name exists",
                    zPath);
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

static int memSyncDir(wcs_env *pEnv, const char *zPath, char **pzErr) {
  (void)pEnv;
  (void)zPath;
  (void)pzErr;
  return WCS_OK;
}

static int memList(wcs_env *pEnv, const char *zPath, void *pCtx,
                   int (*x)(void *, const char *), char **pzErr) {
  MemEnv *p = (MemEnv *)pEnv;
  size_t nDir = strlen(zPath);
  char **azName = NULL;
  int nName = 0, nAlloc = 0, i, rc = WCS_OK;
  MemNode *n;
  /* Copy the names first: x may create or delete files. */
  pthread_mutex_lock(&p->mu);
  for (n = p->pList; n && rc == WCS_OK; n = n->pNext) {
    const char *zRest;
    if (strncmp(n->zName, zPath, nDir) != 0 || n->zName[nDir] != '/') continue;
    zRest = n->zName + nDir + 1;
    if (zRest[0] == 0 || strchr(zRest, '/')) continue;
    if (nName == nAlloc) {
      char **a;
      nAlloc = nAlloc ? nAlloc * 2 : 16;
      a = realloc(azName, sizeof(char *) * (size_t)nAlloc);
      if (a == NULL) {
        rc = WCS_NOMEM;
        break;
      }
      azName = a;
    }
    azName[nName] = dupStr(zRest);
    if (azName[nName] == NULL)
      rc = WCS_NOMEM;
    else
      nName++;
  }
  pthread_mutex_unlock(&p->mu);
  if (rc) wcs_seterr(pzErr, rc, "out of memory listing %s", zPath);
  for (i = 0; i < nName; i++) {
    if (rc == WCS_OK) rc = x(pCtx, azName[i]);
    free(azName[i]);
  }
  free(azName);
  return rc;
}

typedef struct MemLock {
  MemNode *pNode; /* the lock node (nRef held) */
  int bExclusive; /* kind of lock held */
} MemLock;

static int memLock(wcs_env *pEnv, const char *zPath, int bExclusive,
                   void **ppLock, char **pzErr) {
  MemEnv *p = (MemEnv *)pEnv;
  MemNode *n;
  MemLock *l;
  int rc = WCS_OK;
  *ppLock = NULL;
  l = malloc(sizeof *l);
  if (l == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  pthread_mutex_lock(&p->mu);
  n = memFind(p, zPath);
  if (n == NULL) n = memNodeNew(p, zPath, 0);
  if (n == NULL) {
    rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  } else if (n->bLockExcl || (bExclusive && n->nLockShared > 0)) {
    char zDir[4096];
    dirOf(zPath, zDir, sizeof zDir);
    rc = wcs_seterr(pzErr, WCS_BUSY,
                    "store %s is locked by another process "
                    "(or another handle in this process); close it first",
                    zDir);
  } else {
    if (bExclusive)
      n->bLockExcl = 1;
    else
      n->nLockShared++;
    n->nRef++;
    l->pNode = n;
    l->bExclusive = bExclusive;
  }
  pthread_mutex_unlock(&p->mu);
  if (rc)
    free(l);
  else
    *ppLock = l;
  return rc;
}

static void memUnlock(wcs_env *pEnv, void *pLock) {
  MemEnv *p = (MemEnv *)pEnv;
  MemLock *l = pLock;
  if (l == NULL) return;
  pthread_mutex_lock(&p->mu);
  if (l->bExclusive)
    l->pNode->bLockExcl = 0;
  else
    l->pNode->nLockShared--;
  memNodeUnref(l->pNode);
  pthread_mutex_unlock(&p->mu);
  free(l);
}

static void memDestroy(wcs_env *pEnv) {
  MemEnv *p = (MemEnv *)pEnv;
  if (p == NULL) return;
  pthread_mutex_lock(&p->mu);
  while (p->pList)
    memUnlink(p, p->pList);
  pthread_mutex_unlock(&p->mu);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

wcs_env *wcs_env_mem_new(void) {
  MemEnv *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  p->base.xOpen = memOpen;
  p->base.xRead = memRead;
  p->base.xAppend = memAppend;
  p->base.xSync = memSync;
  p->base.xSize = memSize;
  p->base.xStat = memStat;
  p->base.xTruncate = memTruncate;
  p->base.xClose = memClose;
  p->base.xDelete = memDelete;
  p->base.xRename = memRename;
  p->base.xExists = memExists;
  p->base.xMkdir = memMkdir;
  p->base.xSyncDir = memSyncDir;
  p->base.xList = memList;
  p->base.xLock = memLock;
  p->base.xUnlock = memUnlock;
  p->base.xDestroy = memDestroy;
  pthread_mutex_init(&p->mu, NULL);
  return &p->base;
}

/* ====================================================================
** Fault env
** ==================================================================== */

/* What the fault env knows about a file it has written: the bytes that
** a crash would keep. */
typedef struct FaultPath FaultPath;
struct FaultPath {
  char *zPath;      /* owned */
  uint64_t nSynced; /* bytes made durable by the last xSync */
  FaultPath *pNext;
};

typedef struct FaultEnv {
  wcs_env base;       /* must be first */
  wcs_env *pBase;     /* the wrapped env (not owned) */
  wcs_fault *pFault;  /* triggers and counters (not owned) */
  pthread_mutex_t mu; /* guards counters and the path list */
  FaultPath *pPaths;  /* files written through this env */
} FaultEnv;

typedef struct FaultFile {
  FaultEnv *pEnv;  /* owning env */
  wcs_file *pReal; /* the base env's file */
  char *zPath;     /* owned */
  uint64_t nSize;  /* bytes appended so far (tracked for crash) */
} FaultFile;

enum { FAULT_WRITE, FAULT_SYNC, FAULT_READ };

/* Count a call of kind k; its error code (WCS_FULL or WCS_IOERR) if it is
** to fail, else 0. Settings and counters are read under the env's lock,
** which wcs_env_fault_change() takes too. */
static int faultHit(FaultEnv *p, int k, size_t nBytes) {
  wcs_fault *f = p->pFault;
  int64_t n, nTrig;
  int rc = 0;
  pthread_mutex_lock(&p->mu);
  switch (k) {
  case FAULT_WRITE:
    n = ++f->nWrites;
    nTrig = f->nWriteFail;
    break;
  case FAULT_SYNC:
    n = ++f->nSyncs;
    nTrig = f->nSyncFail;
    break;
  default:
    n = ++f->nReads;
    f->nReadBytes += (int64_t)nBytes;
    nTrig = f->nReadFail;
    break;
  }
  if (nTrig > 0 && (n == nTrig || (f->bSticky && n > nTrig))) {
    rc = f->rcFail ? f->rcFail : WCS_IOERR;
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

void wcs_env_fault_change(wcs_env *pEnv, void (*xChange)(wcs_fault *, void *),
                          void *pArg) {
  FaultEnv *p = (FaultEnv *)pEnv;
  pthread_mutex_lock(&p->mu);
  xChange(p->pFault, pArg);
  pthread_mutex_unlock(&p->mu);
}

static const char *faultReason(int rc) {
  return rc == WCS_FULL ? "No space left on device (injected)"
                        : "Input/output error (injected)";
}

static FaultPath *faultPathFind(FaultEnv *p, const char *zPath, int bAdd) {
  FaultPath *fp;
  for (fp = p->pPaths; fp; fp = fp->pNext) {
    if (strcmp(fp->zPath, zPath) == 0) return fp;
  }
  if (!bAdd) return NULL;
  fp = calloc(1, sizeof *fp);
  if (fp == NULL) return NULL;
  fp->zPath = dupStr(zPath);
  if (fp->zPath == NULL) {
    free(fp);
    return NULL;
  }
  fp->pNext = p->pPaths;
  p->pPaths = fp;
  return fp;
}

static int faultOpen(wcs_env *pEnv, const char *zPath, int flags,
                     wcs_file **ppFile, char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  FaultFile *f;
  int rc;
  *ppFile = NULL;
  f = calloc(1, sizeof *f);
  if (f) f->zPath = dupStr(zPath);
  if (f == NULL || f->zPath == NULL) {
    free(f);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  rc = p->pBase->xOpen(p->pBase, zPath, flags, &f->pReal, pzErr);
  if (rc == WCS_OK) {
    rc = p->pBase->xSize(f->pReal, &f->nSize, pzErr);
  }
  if (rc == WCS_OK && (flags & WCS_OPEN_WRITE)) {
    FaultPath *fp;
    pthread_mutex_lock(&p->mu);
    fp = faultPathFind(p, zPath, 1);
    if (fp && (flags & WCS_OPEN_TRUNCATE))
      fp->nSynced = 0;
    else if (fp && fp->nSynced > f->nSize)
      fp->nSynced = f->nSize;
    pthread_mutex_unlock(&p->mu);
    if (fp == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (rc) {
    if (f->pReal) p->pBase->xClose(f->pReal);
    free(f->zPath);
    free(f);
    return rc;
  }
  f->pEnv = p;
  *ppFile = (wcs_file *)f;
  return WCS_OK;
}

static int faultRead(wcs_file *pf, uint64_t iOff, void *pBuf, size_t n,
                     size_t *pnRead, char **pzErr) {
  FaultFile *f = (FaultFile *)pf;
  int rc = faultHit(f->pEnv, FAULT_READ, n);
  if (rc) {
    *pnRead = 0;
    return wcs_seterr(pzErr, rc == WCS_FULL ? WCS_IOERR : rc,
                      "cannot read %s at offset %llu: %s", f->zPath,
                      (unsigned long long)iOff, faultReason(WCS_IOERR));
  }
  return f->pEnv->pBase->xRead(f->pReal, iOff, pBuf, n, pnRead, pzErr);
}

static int faultAppend(wcs_file *pf, const void *pBuf, size_t n, char **pzErr) {
  FaultFile *f = (FaultFile *)pf;
  int rc = faultHit(f->pEnv, FAULT_WRITE, 0);
  if (rc) {
    return wcs_seterr(pzErr, rc, "cannot write %s: %s", f->zPath,
                      faultReason(rc));
  }
  rc = f->pEnv->pBase->xAppend(f->pReal, pBuf, n, pzErr);
  if (rc == WCS_OK) f->nSize += n;
  return rc;
}

static int faultSync(wcs_file *pf, char **pzErr) {
  FaultFile *f = (FaultFile *)pf;
  int rc = faultHit(f->pEnv, FAULT_SYNC, 0);
  if (rc) {
    return wcs_seterr(pzErr, rc, "cannot sync %s: %s", f->zPath,
                      faultReason(rc));
  }
  rc = f->pEnv->pBase->xSync(f->pReal, pzErr);
  if (rc == WCS_OK) {
    FaultPath *fp;
    pthread_mutex_lock(&f->pEnv->mu);
    fp = faultPathFind(f->pEnv, f->zPath, 0);
    if (fp) fp->nSynced = f->nSize;
    pthread_mutex_unlock(&f->pEnv->mu);
  }
  return rc;
}

static int faultSize(wcs_file *pf, uint64_t *pnSize, char **pzErr) {
  FaultFile *f = (FaultFile *)pf;
  return f->pEnv->pBase->xSize(f->pReal, pnSize, pzErr);
}

static int faultStat(wcs_file *pf, uint64_t *pnSize, int *pbGone,
                     char **pzErr) {
  FaultFile *f = (FaultFile *)pf;
  return f->pEnv->pBase->xStat(f->pReal, pnSize, pbGone, pzErr);
}

static int faultTruncate(wcs_file *pf, uint64_t n, char **pzErr) {
  FaultFile *f = (FaultFile *)pf;
  int rc = f->pEnv->pBase->xTruncate(f->pReal, n, pzErr);
  if (rc == WCS_OK) {
    FaultPath *fp;
    f->nSize = n;
    pthread_mutex_lock(&f->pEnv->mu);
    fp = faultPathFind(f->pEnv, f->zPath, 0);
    if (fp && fp->nSynced > n) fp->nSynced = n;
    pthread_mutex_unlock(&f->pEnv->mu);
  }
  return rc;
}

static void faultClose(wcs_file *pf) {
  FaultFile *f = (FaultFile *)pf;
  if (f == NULL) return;
  f->pEnv->pBase->xClose(f->pReal);
  free(f->zPath);
  free(f);
}

static int faultDelete(wcs_env *pEnv, const char *zPath, char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  int rc = p->pBase->xDelete(p->pBase, zPath, pzErr);
  if (rc == WCS_OK) {
    FaultPath **pp;
    pthread_mutex_lock(&p->mu);
    for (pp = &p->pPaths; *pp; pp = &(*pp)->pNext) {
      if (strcmp((*pp)->zPath, zPath) == 0) {
        FaultPath *fp = *pp;
        *pp = fp->pNext;
        free(fp->zPath);
        free(fp);
        break;
      }
    }
    pthread_mutex_unlock(&p->mu);
  }
  return rc;
}

static int faultRename(wcs_env *pEnv, const char *zFrom, const char *zTo,
                       char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  int rc = p->pBase->xRename(p->pBase, zFrom, zTo, pzErr);
  if (rc == WCS_OK) {
    FaultPath *fp, *pTo;
    pthread_mutex_lock(&p->mu);
    fp = faultPathFind(p, zFrom, 0);
    pTo = faultPathFind(p, zTo, 0);
    if (pTo && pTo != fp) {
      /* the replaced file is gone; forget it */
      FaultPath **pp;
      for (pp = &p->pPaths; *pp; pp = &(*pp)->pNext) {
        if (*pp == pTo) {
          *pp = pTo->pNext;
          free(pTo->zPath);
          free(pTo);
          break;
        }
      }
    }
    if (fp) {
      char *z = dupStr(zTo);
      if (z) {
        free(fp->zPath);
        fp->zPath = z;
      }
    }
    pthread_mutex_unlock(&p->mu);
  }
  return rc;
}

static int faultExists(wcs_env *pEnv, const char *zPath, int *pbExists) {
  FaultEnv *p = (FaultEnv *)pEnv;
  return p->pBase->xExists(p->pBase, zPath, pbExists);
}

static int faultMkdir(wcs_env *pEnv, const char *zPath, char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  return p->pBase->xMkdir(p->pBase, zPath, pzErr);
}

static int faultSyncDir(wcs_env *pEnv, const char *zPath, char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  int rc = faultHit(p, FAULT_SYNC, 0);
  if (rc) {
    return wcs_seterr(pzErr, rc, "cannot sync directory %s: %s", zPath,
                      faultReason(rc));
  }
  return p->pBase->xSyncDir(p->pBase, zPath, pzErr);
}

static int faultList(wcs_env *pEnv, const char *zPath, void *pCtx,
                     int (*x)(void *, const char *), char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  return p->pBase->xList(p->pBase, zPath, pCtx, x, pzErr);
}

static int faultLock(wcs_env *pEnv, const char *zPath, int bExclusive,
                     void **ppLock, char **pzErr) {
  FaultEnv *p = (FaultEnv *)pEnv;
  return p->pBase->xLock(p->pBase, zPath, bExclusive, ppLock, pzErr);
}

static void faultUnlock(wcs_env *pEnv, void *pLock) {
  FaultEnv *p = (FaultEnv *)pEnv;
  p->pBase->xUnlock(p->pBase, pLock);
}

static void faultDestroy(wcs_env *pEnv) {
  FaultEnv *p = (FaultEnv *)pEnv;
  if (p == NULL) return;
  while (p->pPaths) {
    FaultPath *fp = p->pPaths;
    p->pPaths = fp->pNext;
    free(fp->zPath);
    free(fp);
  }
  pthread_mutex_destroy(&p->mu);
  free(p);
}

wcs_env *wcs_env_fault_new(wcs_env *pBase, wcs_fault *pFault) {
  FaultEnv *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  p->base.xOpen = faultOpen;
  p->base.xRead = faultRead;
  p->base.xAppend = faultAppend;
  p->base.xSync = faultSync;
  p->base.xSize = faultSize;
  p->base.xStat = faultStat;
  p->base.xTruncate = faultTruncate;
  p->base.xClose = faultClose;
  p->base.xDelete = faultDelete;
  p->base.xRename = faultRename;
  p->base.xExists = faultExists;
  p->base.xMkdir = faultMkdir;
  p->base.xSyncDir = faultSyncDir;
  p->base.xList = faultList;
  p->base.xLock = faultLock;
  p->base.xUnlock = faultUnlock;
  p->base.xDestroy = faultDestroy;
  p->pBase = pBase;
  p->pFault = pFault;
  pthread_mutex_init(&p->mu, NULL);
  return &p->base;
}

int wcs_env_fault_crash(wcs_env *pEnv) {
  FaultEnv *p = (FaultEnv *)pEnv;
  FaultPath *fp;
  int rc = WCS_OK;
  pthread_mutex_lock(&p->mu);
  for (fp = p->pPaths; fp; fp = fp->pNext) {
    wcs_file *f = NULL;
    int bExists = 0;
    p->pBase->xExists(p->pBase, fp->zPath, &bExists);
    if (!bExists) continue;
    if (p->pBase->xOpen(p->pBase, fp->zPath, WCS_OPEN_WRITE, &f, NULL) ==
        WCS_OK) {
      uint64_t n = 0;
      if (p->pBase->xSize(f, &n, NULL) == WCS_OK && n > fp->nSynced) {
        if (p->pBase->xTruncate(f, fp->nSynced, NULL)) rc = WCS_IOERR;
      }
      p->pBase->xClose(f);
    } else {
      rc = WCS_IOERR;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}
