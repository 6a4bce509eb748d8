/*
** check_storage_faults.c — faults and bad input at the store's public API
** (issue 2, "Faults and bad input"). Suite `storage_faults`.
**
** Two kinds of tests:
**
**   Injected faults. The store is opened over the fault env (storage/env.h,
**   wcs_env_fault_new) through wcs_db_open_env (storage/db_int.h). The Nth
**   append, sync or read fails with WCS_FULL (ENOSPC) or WCS_IOERR, once or
**   for good; sweeps move N across the whole life of a small store, so the
**   failure lands in turn on the WAL, a flush, the manifest and a
**   compaction (flush and compaction run in the writer's thread:
**   bNoBackground). Each case checks that the failing call returns exactly
**   the injected code and a message naming a file inside the store, then
**   (optionally after a simulated power cut, wcs_env_fault_crash) that the
**   store reopens with every acknowledged commit and that the failed batch
**   is there entirely or not at all.
**
**   Real files. Bad things done to a closed store on disk: a directory the
**   process may not write (permission error names the path; as root the
**   attempt runs in a child that drops to an unprivileged user), a store
**   path that is a regular file, a garbage or truncated CURRENT and
**   manifest, flipped bytes in a sorted file and in the middle of a WAL
**   (WCS_CORRUPT naming the file, never a wrong row), and a second writer
**   process (WCS_BUSY, "locked").
**
** Data: batch b holds KEYS_PER_BATCH keys "b000123.k07" whose values are a
** function of (b, k) with a length that varies, so every row read back can
** be checked and a half-applied batch is visible as a count.
*/
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/util.h"
#include "testutil.h"
#include "wcs.h"

#define KEYS_PER_BATCH 12
#define MAX_BATCHES 400
#define VAL_MAX 300

/* ------------------------------------------------------------------ */
/* Data: batches whose every key and value can be recomputed           */

static int key_of(char *z, int b, int k) {
  return snprintf(z, 32, "b%06d.k%02d", b, k);
}

/* Value of key (b, k): 20..VAL_MAX bytes, filled from a tiny hash so it
** compresses a little but not to nothing. Returns its length. */
static size_t value_of(unsigned char *p, int b, int k) {
  uint32_t h = (uint32_t)b * 2654435761u ^ (uint32_t)k * 40503u;
  size_t n = 20 + h % (VAL_MAX - 20), i;
  for (i = 0; i < n; i++) {
    h = h * 1103515245u + 12345u;
    p[i] = (unsigned char)('a' + (h >> 16) % 8);
  }
  return n;
}

static int write_batch(wcs_db *db, int b) {
  wcs_batch *pB = NULL;
  char zKey[32];
  unsigned char aVal[VAL_MAX];
  int rc = wcs_batch_new(&pB), k;
  ck_assert_int_eq(rc, WCS_OK);
  for (k = 0; k < KEYS_PER_BATCH; k++) {
    int nKey = key_of(zKey, b, k);
    size_t nVal = value_of(aVal, b, k);
    ck_assert_int_eq(wcs_batch_put(pB, zKey, (size_t)nKey, aVal, nVal),
                     WCS_OK);
  }
  rc = wcs_db_write(db, pB);
  wcs_batch_free(pB);
  return rc;
}

/* Read the whole store, check every key and value, and count the keys of
** each batch into aCount[0..MAX_BATCHES]. Returns WCS_OK, or the error of
** a read. */
static int count_batches(wcs_db *db, int *aCount) {
  wcs_iter *pIt = NULL;
  int rc, b;
  memset(aCount, 0, sizeof(int) * (MAX_BATCHES + 1));
  rc = wcs_iter_new(db, NULL, &pIt);
  if (rc != WCS_OK) return rc;
  for (rc = wcs_iter_first(pIt); rc == WCS_OK && wcs_iter_valid(pIt);
       rc = wcs_iter_next(pIt)) {
    size_t nKey = 0, nVal = 0, nWant;
    const char *pKey = wcs_iter_key(pIt, &nKey);
    const void *pVal = wcs_iter_value(pIt, &nVal);
    unsigned char aWant[VAL_MAX];
    char zKey[64];
    int k;
    ck_assert_uint_lt(nKey, sizeof zKey);
    memcpy(zKey, pKey, nKey);
    zKey[nKey] = 0;
    ck_assert_msg(sscanf(zKey, "b%06d.k%02d", &b, &k) == 2,
                  "unexpected key %s", zKey);
    ck_assert_msg(b >= 0 && b <= MAX_BATCHES && k >= 0 && k < KEYS_PER_BATCH,
                  "unexpected key %s", zKey);
    nWant = value_of(aWant, b, k);
    ck_assert_msg(nVal == nWant && memcmp(pVal, aWant, nVal) == 0,
                  "wrong value for key %s", zKey);
    aCount[b]++;
  }
  if (rc == WCS_OK) rc = wcs_iter_status(pIt);
  wcs_iter_free(pIt);
  return rc;
}

/*
** Read the whole store and check it: every batch < nAcked is complete,
** batch iMaybe (if >= 0) is complete or absent, nothing else exists, and
** every value is right. Returns WCS_OK, or the error of a read.
*/
static int verify(wcs_db *db, int nAcked, int iMaybe) {
  static int aCount[MAX_BATCHES + 1];
  int rc = count_batches(db, aCount), b;
  if (rc != WCS_OK) return rc;
  for (b = 0; b <= MAX_BATCHES; b++) {
    if (b < nAcked) {
      ck_assert_msg(aCount[b] == KEYS_PER_BATCH,
                    "acknowledged batch %d has %d of %d keys", b, aCount[b],
                    KEYS_PER_BATCH);
    } else if (b == iMaybe) {
      ck_assert_msg(aCount[b] == 0 || aCount[b] == KEYS_PER_BATCH,
                    "failed batch %d is half there (%d of %d keys)", b,
                    aCount[b], KEYS_PER_BATCH);
    } else {
      ck_assert_msg(aCount[b] == 0, "batch %d was never written but has %d "
                    "keys", b, aCount[b]);
    }
  }
  return WCS_OK;
}

/*
** After a power cut in SYNC NORMAL or OFF, which may lose the last
** commits: the batches present are complete and come first, [0, m) with
** m <= nAcked (m = nAcked + 1 when the failed batch iMaybe = nAcked made
** it), and every value is right.
*/
static int verify_prefix(wcs_db *db, int nAcked, int iMaybe) {
  static int aCount[MAX_BATCHES + 1];
  int rc = count_batches(db, aCount), b, m;
  if (rc != WCS_OK) return rc;
  for (m = 0; m <= MAX_BATCHES && aCount[m] == KEYS_PER_BATCH; m++) {
  }
  for (b = m; b <= MAX_BATCHES; b++) {
    ck_assert_msg(aCount[b] == 0,
                  "batch %d has %d of %d keys after a power cut, and batch "
                  "%d is gone: not a prefix of the commits",
                  b, aCount[b], KEYS_PER_BATCH, m);
  }
  ck_assert_msg(m <= nAcked || (m == nAcked + 1 && iMaybe == nAcked),
                "%d batches after a power cut, %d were acknowledged", m,
                nAcked);
  return WCS_OK;
}

/* Point-read every key of batches [0, nAcked): all there, all right. */
static int verify_gets(wcs_db *db, int nAcked) {
  int b, k;
  for (b = 0; b < nAcked; b++) {
    for (k = 0; k < KEYS_PER_BATCH; k++) {
      char zKey[32];
      unsigned char aWant[VAL_MAX];
      int nKey = key_of(zKey, b, k);
      size_t nWant = value_of(aWant, b, k), nVal = 0;
      void *pVal = NULL;
      int rc = wcs_db_get(db, NULL, zKey, (size_t)nKey, &pVal, &nVal);
      if (rc != WCS_OK) return rc;
      ck_assert_msg(pVal != NULL, "key %s lost", zKey);
      ck_assert_msg(nVal == nWant && memcmp(pVal, aWant, nVal) == 0,
                    "wrong value for key %s", zKey);
      wcs_free(pVal);
    }
  }
  return WCS_OK;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */

/* Small budgets so that a few hundred batches make several flushes and
** compactions, all in the calling thread (deterministic fault positions). */
static void small_options(wcs_options *pOpt, int iSync) {
  wcs_options_init(pOpt);
  pOpt->iSync = iSync;
  pOpt->nMemtable = 16 * 1024;
  pOpt->nCache = 64 * 1024;
  pOpt->nBlockSize = 4096;
  pOpt->iZstdLevel = 1;
  pOpt->nL0Trigger = 2;
  pOpt->nL0Stop = 8;
  pOpt->nL1Bytes = 64 * 1024;
  pOpt->nFileBytes = 32 * 1024;
  pOpt->bNoBackground = 1;
}

/* Open on pEnv (NULL: plain files through wcs_db_open) or fail the test. */
static wcs_db *open_ok(const char *zPath, const wcs_options *pOpt,
                       wcs_env *pEnv) {
  wcs_db *db = NULL;
  char *zErr = NULL;
  int rc = pEnv ? wcs_db_open_env(&db, zPath, pOpt, pEnv, &zErr)
                : wcs_db_open(&db, zPath, pOpt, &zErr);
  ck_assert_msg(rc == WCS_OK, "reopen %s: %s (%s)", zPath, wcs_errstr(rc),
                zErr ? zErr : "");
  wcs_free(zErr);
  return db;
}

/* Reopen the store without faults (on pEnv, or on disk if NULL) and check
** it: every acknowledged commit, or (bPrefix) a prefix of them. */
static void reopen_and_verify(const char *zPath, wcs_env *pEnv, int nAcked,
                              int iMaybe, int bPrefix) {
  wcs_options opt;
  wcs_db *db;
  int rc;
  small_options(&opt, WCS_SYNC_NORMAL);
  db = open_ok(zPath, &opt, pEnv);
  rc = bPrefix ? verify_prefix(db, nAcked, iMaybe) : verify(db, nAcked, iMaybe);
  ck_assert_msg(rc == WCS_OK, "verify after reopen: %s (%s)", wcs_errstr(rc),
                wcs_errmsg(db));
  if (!bPrefix) ck_assert_int_eq(verify_gets(db, nAcked), WCS_OK);
  /* the reopened store takes writes again */
  ck_assert_int_eq(write_batch(db, MAX_BATCHES), WCS_OK);
  ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
}

/* The message must name something inside the store directory. */
static void assert_names_store(const char *zMsg, const char *zDir,
                               const char *zWhat) {
  ck_assert_msg(zMsg != NULL && strstr(zMsg, zDir) != NULL,
                "%s: message \"%s\" does not name a file in %s", zWhat,
                zMsg ? zMsg : "(null)", zDir);
}

/* ------------------------------------------------------------------ */
/* Injected faults                                                     */

enum { FAULT_APPEND, FAULT_SYNC, FAULT_READ_ };

/* Where a case's store lives: a fresh memory env (sweeps: hundreds of
** stores, no disk syncs) or a fresh directory on disk (pEnv NULL). */
typedef struct Base {
  wcs_env *pEnv;        /* memory env, or NULL for the POSIX env */
  char zDir[1024];      /* scratch directory (disk only) */
  char zPath[1100];     /* the store's path */
} Base;

static void base_new(Base *p, int bMem) {
  memset(p, 0, sizeof *p);
  if (bMem) {
    p->pEnv = wcs_env_mem_new();
    ck_assert_ptr_nonnull(p->pEnv);
    snprintf(p->zPath, sizeof p->zPath, "/faults/store");
    ck_assert_int_eq(p->pEnv->xMkdir(p->pEnv, "/faults", NULL), WCS_OK);
  } else {
    snprintf(p->zDir, sizeof p->zDir, "%s", tu_tmpdir("faults"));
    snprintf(p->zPath, sizeof p->zPath, "%s/store", p->zDir);
  }
}

static void base_free(Base *p) {
  if (p->pEnv) p->pEnv->xDestroy(p->pEnv);
  else tu_rmrf(p->zDir);
}

static wcs_env *base_env(Base *p) {
  return p->pEnv ? p->pEnv : wcs_env_posix();
}

static int64_t calls_of(const wcs_fault *pF, int eKind) {
  return eKind == FAULT_APPEND ? pF->nWrites
         : eKind == FAULT_SYNC ? pF->nSyncs
                               : pF->nReads;
}

/*
** One case of a sweep: open a fresh store over a fault env whose Nth call
** of kind eKind fails with rcFail, write up to nBatch batches, stop at the
** first failure, close, optionally simulate a power cut, reopen without
** faults and verify. Returns 1 if the fault fired.
*/
static int fault_case(int bMem, int eKind, int64_t n, int rcFail,
                      int bSticky, int iSync, int nBatch, int bCrash) {
  Base base;
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_options opt;
  wcs_db *db = NULL;
  char *zErr = NULL;
  const int rcWant = eKind == FAULT_READ_ ? WCS_IOERR : rcFail;
  int rc, b, nAcked = 0, iMaybe = -1, bFired;

  base_new(&base, bMem);
  memset(&fault, 0, sizeof fault);
  fault.rcFail = rcFail;
  fault.bSticky = bSticky;
  if (eKind == FAULT_APPEND) fault.nWriteFail = n;
  else if (eKind == FAULT_SYNC) fault.nSyncFail = n;
  else fault.nReadFail = n;
  pEnv = wcs_env_fault_new(base_env(&base), &fault);
  ck_assert_ptr_nonnull(pEnv);
  small_options(&opt, iSync);

  rc = wcs_db_open_env(&db, base.zPath, &opt, pEnv, &zErr);
  if (rc != WCS_OK) {
    /* the fault hit the open itself */
    ck_assert_msg(rc == rcWant, "fault at call %lld: open failed with %s, "
                  "injected %s (%s)", (long long)n, wcs_errstr(rc),
                  wcs_errstr(rcFail), zErr ? zErr : "");
    assert_names_store(zErr, base.zPath, "open");
    wcs_free(zErr);
    db = NULL;
  } else {
    for (b = 0; b < nBatch; b++) {
      rc = write_batch(db, b);
      if (rc != WCS_OK) {
        ck_assert_msg(rc == rcWant, "fault at call %lld: batch %d failed "
                      "with %s, injected %s (%s)", (long long)n, b,
                      wcs_errstr(rc), wcs_errstr(rcFail), wcs_errmsg(db));
        assert_names_store(wcs_errmsg(db), base.zPath, "write");
        iMaybe = b;
        break;
      }
      nAcked = b + 1;
    }
    if (eKind == FAULT_READ_ && rc == WCS_OK) {
      /* reads: read everything back through the faulty env */
      rc = verify(db, nAcked, -1);
      if (rc != WCS_OK) {
        ck_assert_msg(rc == WCS_IOERR, "fault at call %lld: read failed "
                      "with %s (%s)", (long long)n, wcs_errstr(rc),
                      wcs_errmsg(db));
        assert_names_store(wcs_errmsg(db), base.zPath, "read");
      }
    }
    /* close may report the fault again (a background error): fine */
    rc = wcs_db_close(db);
    ck_assert_msg(rc == WCS_OK || rc == rcWant, "close gave %s",
                  wcs_errstr(rc));
  }
  bFired = calls_of(&fault, eKind) >= n;
  /* With SYNC_FULL a commit is durable when acknowledged: a power cut
  ** right after must not lose it. With NORMAL and OFF it may lose the
  ** last commits, but what is left is a prefix of them. */
  if (bCrash) ck_assert_int_eq(wcs_env_fault_crash(pEnv), WCS_OK);
  pEnv->xDestroy(pEnv);
  reopen_and_verify(base.zPath, base.pEnv, nAcked, iMaybe,
                    bCrash && iSync != WCS_SYNC_FULL);
  base_free(&base);
  return bFired;
}

/* How many calls of a kind a clean run of nBatch batches makes. */
static int64_t count_calls(int bMem, int eKind, int iSync, int nBatch) {
  Base base;
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_options opt;
  wcs_db *db = NULL;
  char *zErr = NULL;
  int b, rc;
  int64_t n;
  base_new(&base, bMem);
  memset(&fault, 0, sizeof fault);
  pEnv = wcs_env_fault_new(base_env(&base), &fault);
  small_options(&opt, iSync);
  rc = wcs_db_open_env(&db, base.zPath, &opt, pEnv, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "");
  for (b = 0; b < nBatch; b++) ck_assert_int_eq(write_batch(db, b), WCS_OK);
  if (eKind == FAULT_READ_) ck_assert_int_eq(verify(db, nBatch, -1), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  n = calls_of(&fault, eKind);
  pEnv->xDestroy(pEnv);
  base_free(&base);
  return n;
}

/* Sweep the failing call over about nCase positions of a clean run. */
static void sweep(int eKind, int iSync, int nBatch, int nCase, int bCrash) {
  int64_t nCalls = count_calls(1, eKind, iSync, nBatch), n, step;
  int nFired = 0, i = 0;
  ck_assert_int_gt(nCalls, 0);
  step = nCalls / nCase > 0 ? nCalls / nCase : 1;
  for (n = 1; n <= nCalls; n += step, i++) {
    int rcFail = (i % 2) ? WCS_IOERR : WCS_FULL;
    nFired += fault_case(1, eKind, n, rcFail, i % 3 == 0, iSync, nBatch,
                         bCrash);
  }
  /* the clean run made nCalls calls, so every case's fault fired */
  ck_assert_int_eq(nFired, i);
}

/* Appends fail at every stage of a store's life: the WAL, flushes, the
** manifest, compactions. Every acknowledged batch survives. */
START_TEST(test_append_fault_sweep_keeps_acked_commits) {
  sweep(FAULT_APPEND, WCS_SYNC_NORMAL, 100, 24, 0);
}
END_TEST

/* Syncs fail during flushes, manifest updates and compactions (SYNC_NORMAL,
** no power cut): a failed sync leaves the bytes written, so the store must
** not delete a file that a manifest record it wrote may name. */
START_TEST(test_sync_fault_sweep_keeps_acked_commits) {
  sweep(FAULT_SYNC, WCS_SYNC_NORMAL, 100, 20, 0);
}
END_TEST

/* Syncs fail (SYNC_FULL: one per commit, plus flushes and the manifest);
** then the machine "loses power": every acknowledged commit survives. */
START_TEST(test_sync_fault_sweep_then_power_cut_keeps_acked_commits) {
  sweep(FAULT_SYNC, WCS_SYNC_FULL, 80, 20, 1);
}
END_TEST

/* Appends and syncs fail at every stage (SYNC_NORMAL and OFF), then the
** machine loses power: the store opens with a prefix of the commits, each
** whole. */
START_TEST(test_fault_sweeps_then_power_cut_keep_a_prefix) {
  sweep(FAULT_APPEND, WCS_SYNC_NORMAL, 100, 16, 1);
  sweep(FAULT_SYNC, WCS_SYNC_NORMAL, 100, 16, 1);
  sweep(FAULT_APPEND, WCS_SYNC_OFF, 100, 12, 1);
}
END_TEST

/* A disk that dies for good (sticky append failures) and then a power
** cut: with SYNC_FULL, every acknowledged commit is on disk. */
START_TEST(test_dead_disk_then_power_cut_keeps_acked_commits) {
  int64_t nCalls = count_calls(1, FAULT_APPEND, WCS_SYNC_FULL, 80), n;
  for (n = 1; n <= nCalls; n += nCalls / 12 + 1) {
    ck_assert(fault_case(1, FAULT_APPEND, n, WCS_FULL, 1, WCS_SYNC_FULL, 80,
                         1));
  }
  /* and once on real files (SYNC_NORMAL, so no power cut) */
  n = count_calls(0, FAULT_APPEND, WCS_SYNC_NORMAL, 80);
  ck_assert(fault_case(0, FAULT_APPEND, n / 2, WCS_FULL, 1, WCS_SYNC_NORMAL,
                       80, 0));
}
END_TEST

/* Reads fail while opening (manifest, WAL replay) and while reading sorted
** files back: WCS_IOERR naming the file, and nothing is damaged. */
START_TEST(test_read_fault_sweep_reports_ioerr) {
  sweep(FAULT_READ_, WCS_SYNC_NORMAL, 100, 16, 0);
}
END_TEST

/* Arm a fault on the next call of a kind, under the env's lock: a store's
** background threads may be calling the env. */
typedef struct Arming {
  int eKind, rcFail, bSticky;
} Arming;
static void armLocked(wcs_fault *pF, void *pArg) {
  const Arming *a = pArg;
  pF->rcFail = a->rcFail;
  pF->bSticky = a->bSticky;
  if (a->eKind == FAULT_APPEND) pF->nWriteFail = pF->nWrites + 1;
  else if (a->eKind == FAULT_SYNC) pF->nSyncFail = pF->nSyncs + 1;
  else pF->nReadFail = pF->nReads + 1;
}
static void arm(wcs_env *pEnv, int eKind, int rcFail, int bSticky) {
  Arming a;
  a.eKind = eKind;
  a.rcFail = rcFail;
  a.bSticky = bSticky;
  wcs_env_fault_change(pEnv, armLocked, &a);
}
static void disarmLocked(wcs_fault *pF, void *pArg) {
  (void)pArg;
  pF->nWriteFail = pF->nSyncFail = pF->nReadFail = 0;
}
static void disarm(wcs_env *pEnv) {
  wcs_env_fault_change(pEnv, disarmLocked, NULL);
}

/* A store over a fault env with big budgets (nothing flushes by itself). */
typedef struct FaultStore {
  char zDir[1024];
  char zPath[1100];
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_db *db;
} FaultStore;

static void fs_open(FaultStore *p, int bBackground) {
  wcs_options opt;
  char *zErr = NULL;
  int rc;
  memset(p, 0, sizeof *p);
  snprintf(p->zDir, sizeof p->zDir, "%s", tu_tmpdir("faults"));
  snprintf(p->zPath, sizeof p->zPath, "%s/store", p->zDir);
  p->pEnv = wcs_env_fault_new(wcs_env_posix(), &p->fault);
  small_options(&opt, WCS_SYNC_NORMAL);
  opt.nMemtable = 4 << 20;
  opt.nL0Trigger = 100;
  opt.nL0Stop = 200;
  opt.bNoBackground = !bBackground;
  rc = wcs_db_open_env(&p->db, p->zPath, &opt, p->pEnv, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "");
}

static void fs_close(FaultStore *p, int nAcked, int iMaybe) {
  int rc = wcs_db_close(p->db);
  (void)rc; /* may repeat an earlier background error */
  p->pEnv->xDestroy(p->pEnv);
  reopen_and_verify(p->zPath, NULL, nAcked, iMaybe, 0);
  tu_rmrf(p->zDir);
}

/* A flush that cannot write its sorted file fails with the injected code
** naming the file; the data stays readable and survives a reopen. */
START_TEST(test_flush_fault_names_file) {
  FaultStore s;
  int b, rc;
  fs_open(&s, 0);
  for (b = 0; b < 50; b++) ck_assert_int_eq(write_batch(s.db, b), WCS_OK);
  arm(s.pEnv, FAULT_APPEND, WCS_FULL, 1);
  rc = wcs_db_flush(s.db);
  ck_assert_msg(rc == WCS_FULL, "flush on a full disk: %s (%s)",
                wcs_errstr(rc), wcs_errmsg(s.db));
  assert_names_store(wcs_errmsg(s.db), s.zPath, "flush");
  disarm(s.pEnv);
  fs_close(&s, 50, -1);
}
END_TEST

/* A sync failing during a flush is reported the same way. */
START_TEST(test_flush_sync_fault_names_file) {
  FaultStore s;
  int b, rc;
  fs_open(&s, 0);
  for (b = 0; b < 50; b++) ck_assert_int_eq(write_batch(s.db, b), WCS_OK);
  arm(s.pEnv, FAULT_SYNC, WCS_IOERR, 0);
  rc = wcs_db_flush(s.db);
  ck_assert_msg(rc == WCS_IOERR, "flush with a failing sync: %s (%s)",
                wcs_errstr(rc), wcs_errmsg(s.db));
  assert_names_store(wcs_errmsg(s.db), s.zPath, "flush sync");
  disarm(s.pEnv);
  fs_close(&s, 50, -1);
}
END_TEST

/* A compaction that runs out of space fails naming the file it was
** writing; every row is still there after a reopen. The failure is not
** the store's: once there is room, writes, flushes and compactions go on
** without a reopen. */
START_TEST(test_compaction_fault_names_file) {
  FaultStore s;
  uint64_t nCached;
  int b, rc, f;
  fs_open(&s, 0);
  for (f = 0; f < 4; f++) {
    for (b = f * 25; b < f * 25 + 25; b++) {
      ck_assert_int_eq(write_batch(s.db, b), WCS_OK);
    }
    ck_assert_int_eq(wcs_db_flush(s.db), WCS_OK);
  }
  nCached = tu_db_stat(s.db, "cache_bytes");
  arm(s.pEnv, FAULT_APPEND, WCS_FULL, 1);
  rc = wcs_db_compact_range(s.db, NULL, 0, NULL, 0);
  ck_assert_msg(rc == WCS_FULL, "compaction on a full disk: %s (%s)",
                wcs_errstr(rc), wcs_errmsg(s.db));
  assert_names_store(wcs_errmsg(s.db), s.zPath, "compaction");
  disarm(s.pEnv);
  /* the blocks the compaction put in the cache as it wrote them went
  ** with the file it gave up */
  ck_assert_uint_eq(tu_db_stat(s.db, "cache_bytes"), nCached);
  /* the failed compaction changed nothing visible */
  ck_assert_int_eq(verify(s.db, 100, -1), WCS_OK);
  for (b = 100; b < 105; b++) {
    rc = write_batch(s.db, b);
    ck_assert_msg(rc == WCS_OK, "a write after the failed compaction: %s",
                  wcs_errmsg(s.db));
  }
  ck_assert_int_eq(wcs_db_flush(s.db), WCS_OK);
  rc = wcs_db_compact_range(s.db, NULL, 0, NULL, 0);
  ck_assert_msg(rc == WCS_OK, "compaction with room again: %s",
                wcs_errmsg(s.db));
  ck_assert_int_eq(verify(s.db, 105, -1), WCS_OK);
  fs_close(&s, 105, -1);
}
END_TEST

/* A compaction that fails before its manifest edit stops no writer for
** good (with background threads, level 0 at its limit): while
** compactions fail, a write that needs one fails saying so; the
** background compaction tries again within seconds, whether or not more
** work comes, and then writes go on. Every acknowledged batch is kept. */
/* A store with background threads and the given level-0 limits, nBatch
** batches written and flushed one by one (the memtable is flushed only
** when asked), then a manual compaction that meets a full disk. */
static void openAfterFailedCompaction(FaultStore *s, int nL0Trigger,
                                      int nL0Stop, int nBatch) {
  wcs_options opt;
  char *zErr = NULL;
  int b, rc;
  memset(s, 0, sizeof *s);
  snprintf(s->zDir, sizeof s->zDir, "%s", tu_tmpdir("faults"));
  snprintf(s->zPath, sizeof s->zPath, "%s/store", s->zDir);
  s->pEnv = wcs_env_fault_new(wcs_env_posix(), &s->fault);
  small_options(&opt, WCS_SYNC_NORMAL);
  opt.nMemtable = 4 << 20;
  opt.nL0Trigger = nL0Trigger;
  opt.nL0Stop = nL0Stop;
  opt.bNoBackground = 0;
  rc = wcs_db_open_env(&s->db, s->zPath, &opt, s->pEnv, &zErr);
  ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "");
  for (b = 0; b < nBatch; b++) {
    ck_assert_int_eq(write_batch(s->db, b), WCS_OK);
    ck_assert_int_eq(wcs_db_flush(s->db), WCS_OK);
  }
  usleep(300000); /* the background compactions settle */
  arm(s->pEnv, FAULT_APPEND, WCS_FULL, 0);
  rc = wcs_db_compact_range(s->db, NULL, 0, NULL, 0);
  disarm(s->pEnv);
  ck_assert_msg(rc == WCS_FULL, "the compaction: %s", wcs_errmsg(s->db));
}

START_TEST(test_failed_compaction_never_stalls_writers) {
  FaultStore s;
  int b, rc, nAcked = 10, nRefused = 0;
  int64_t t0;
  openAfterFailedCompaction(&s, 2, 4, nAcked);
  t0 = wcs_now_micros();
  for (b = 10; b < 40; b++) {
    ck_assert_int_eq(write_batch(s.db, b), WCS_OK);
    nAcked = b + 1;
    while ((rc = wcs_db_flush(s.db)) != WCS_OK) {
      ck_assert_msg(strstr(wcs_errmsg(s.db), "its compactions fail"),
                    "a refused flush: %s", wcs_errmsg(s.db));
      ck_assert_msg(wcs_now_micros() - t0 < 30000000,
                    "writes still refused after 30 s");
      nRefused++;
      usleep(100000);
    }
  }
  (void)nRefused; /* (0 when the retry came before level 0 filled) */
  ck_assert_int_eq(verify(s.db, nAcked, -1), WCS_OK);
  fs_close(&s, nAcked, -1);
}
END_TEST

/* CPU seconds this process has used. */
static double cpuSeconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
         (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

/* After a failed compaction, with nothing due to compact, the background
** thread waits out its retry time and then sleeps until work comes: it
** does not spin. */
START_TEST(test_failed_compaction_leaves_the_store_idle) {
  FaultStore s;
  double t0;
  openAfterFailedCompaction(&s, 8, 16, 2); /* two files: nothing due */
  t0 = cpuSeconds();
  usleep(6500000); /* past the 5 s retry time */
  ck_assert_msg(cpuSeconds() - t0 < 0.5,
                "the idle store used %.2f s of CPU in 6.5 s",
                cpuSeconds() - t0);
  ck_assert_int_eq(verify(s.db, 2, -1), WCS_OK);
  fs_close(&s, 2, -1);
}
END_TEST

/* A read error on a sorted file is WCS_IOERR naming the file, and is not
** remembered: the next read works. */
START_TEST(test_read_fault_on_sorted_file_is_transient) {
  FaultStore s;
  int b, rc;
  char zKey[32];
  void *pVal = NULL;
  size_t nVal = 0;
  fs_open(&s, 0);
  for (b = 0; b < 50; b++) ck_assert_int_eq(write_batch(s.db, b), WCS_OK);
  ck_assert_int_eq(wcs_db_flush(s.db), WCS_OK);
  ck_assert_int_eq(wcs_db_close(s.db), WCS_OK);
  {
    /* reopen over the same env so the block cache is cold */
    wcs_options opt;
    char *zErr = NULL;
    small_options(&opt, WCS_SYNC_NORMAL);
    rc = wcs_db_open_env(&s.db, s.zPath, &opt, s.pEnv, &zErr);
    ck_assert_msg(rc == WCS_OK, "open: %s", zErr ? zErr : "");
  }
  arm(s.pEnv, FAULT_READ_, WCS_IOERR, 1);
  key_of(zKey, 7, 3);
  rc = wcs_db_get(s.db, NULL, zKey, strlen(zKey), &pVal, &nVal);
  ck_assert_msg(rc == WCS_IOERR, "get on a failing disk: %s", wcs_errstr(rc));
  ck_assert_ptr_null(pVal);
  assert_names_store(wcs_errmsg(s.db), s.zPath, "get");
  rc = verify(s.db, 50, -1);
  ck_assert_msg(rc == WCS_IOERR, "scan on a failing disk: %s", wcs_errstr(rc));
  disarm(s.pEnv);
  ck_assert_int_eq(verify_gets(s.db, 50), WCS_OK);
  ck_assert_int_eq(verify(s.db, 50, -1), WCS_OK);
  fs_close(&s, 50, -1);
}
END_TEST

/* Background flushes and compactions hit a disk whose syncs fail for good
** (WAL appends still work, and with SYNC_NORMAL commits do not sync, so
** the first victim is a background flush): the error reaches the writer
** (a later write, flush or close returns it, naming a file) and every
** acknowledged batch survives. */
START_TEST(test_background_fault_reaches_writer) {
  char zDir[1024], zPath[1100];
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_options opt;
  wcs_db *db = NULL;
  char *zErr = NULL;
  int rc = WCS_OK, b, nAcked = 0, iMaybe = -1, bSeen = 0;

  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  memset(&fault, 0, sizeof fault);
  pEnv = wcs_env_fault_new(wcs_env_posix(), &fault);
  small_options(&opt, WCS_SYNC_NORMAL);
  opt.bNoBackground = 0;
  ck_assert_int_eq(wcs_db_open_env(&db, zPath, &opt, pEnv, &zErr), WCS_OK);
  for (b = 0; b < 40; b++) ck_assert_int_eq(write_batch(db, b), WCS_OK);
  nAcked = 40;
  arm(pEnv, FAULT_SYNC, WCS_IOERR, 1);
  for (b = 40; b < MAX_BATCHES; b++) {
    rc = write_batch(db, b);
    if (rc != WCS_OK) {
      iMaybe = b;
      break;
    }
    nAcked = b + 1;
  }
  if (rc == WCS_OK) rc = wcs_db_flush(db);
  if (rc != WCS_OK) {
    ck_assert_msg(rc == WCS_IOERR, "got %s (%s)", wcs_errstr(rc),
                  wcs_errmsg(db));
    assert_names_store(wcs_errmsg(db), zPath, "background");
    bSeen = 1;
  }
  rc = wcs_db_close(db);
  ck_assert_msg(bSeen || rc == WCS_IOERR, "the background failure was never "
                "reported (close gave %s)", wcs_errstr(rc));
  pEnv->xDestroy(pEnv);
  reopen_and_verify(zPath, NULL, nAcked, iMaybe, 0);
  tu_rmrf(zDir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Real files                                                          */

/* Make a store on disk with nBatch batches, flushed and compacted into
** sorted files, and close it. */
static void make_store(const char *zPath, int nBatch, int bCompact) {
  wcs_options opt;
  wcs_db *db;
  int b;
  small_options(&opt, WCS_SYNC_NORMAL);
  db = open_ok(zPath, &opt, NULL);
  for (b = 0; b < nBatch; b++) ck_assert_int_eq(write_batch(db, b), WCS_OK);
  ck_assert_int_eq(wcs_db_flush(db), WCS_OK);
  if (bCompact) {
    ck_assert_int_eq(wcs_db_compact_range(db, NULL, 0, NULL, 0), WCS_OK);
  }
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
}

/* Names of the store's files of one kind. */
typedef struct FileList {
  char az[64][256];
  int n;
} FileList;

static int ends_with(const char *z, const char *zSuffix) {
  size_t n = strlen(z), m = strlen(zSuffix);
  return n >= m && strcmp(z + n - m, zSuffix) == 0;
}

/* eKind: 's' sorted files, 'w' WAL files, 'm' manifests, 'c' CURRENT */
static void list_files(const char *zPath, int eKind, FileList *pList) {
  DIR *d = opendir(zPath);
  struct dirent *e;
  ck_assert_ptr_nonnull(d);
  pList->n = 0;
  while ((e = readdir(d)) != NULL && pList->n < 64) {
    const char *z = e->d_name;
    int bWant = 0;
    switch (eKind) {
      case 's': bWant = ends_with(z, ".sst"); break;
      case 'w': bWant = ends_with(z, ".log") || ends_with(z, ".wal"); break;
      case 'm': bWant = strncmp(z, "MANIFEST", 8) == 0; break;
      case 'c': bWant = strcmp(z, "CURRENT") == 0; break;
    }
    if (bWant) {
      snprintf(pList->az[pList->n++], 256, "%s", z);
    }
  }
  closedir(d);
}

/* Open zPath expecting failure rcWant with a message naming zName. */
static void open_fails(const char *zPath, int rcWant, const char *zName) {
  wcs_options opt;
  wcs_db *db = NULL;
  char *zErr = NULL;
  int rc;
  small_options(&opt, WCS_SYNC_NORMAL);
  rc = wcs_db_open(&db, zPath, &opt, &zErr);
  ck_assert_msg(rc == rcWant, "open %s: got %s, expected %s (%s)", zPath,
                wcs_errstr(rc), wcs_errstr(rcWant), zErr ? zErr : "");
  ck_assert_ptr_null(db);
  ck_assert_msg(zErr && strstr(zErr, zName), "message \"%s\" does not name %s",
                zErr ? zErr : "(null)", zName);
  wcs_free(zErr);
}

/* Run open in a child that cannot write zPath's parent: as root, the
** child drops to user "nobody" (root ignores permission bits). Returns the
** child's open result code; the message goes back through a pipe. */
static int open_unprivileged(const char *zPath, int bCreate, char *zMsg,
                             size_t nMsg) {
  int aFd[2], status = 0;
  pid_t pid;
  ssize_t got;
  ck_assert_int_eq(pipe(aFd), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_options opt;
    wcs_db *db = NULL;
    char *zErr = NULL;
    int rc;
    close(aFd[0]);
    if (geteuid() == 0) {
      struct passwd *pw = getpwnam("nobody");
      uid_t uid = pw ? pw->pw_uid : 65534;
      gid_t gid = pw ? pw->pw_gid : 65534;
      if (setgid(gid) != 0 || setuid(uid) != 0) _exit(200);
    }
    small_options(&opt, WCS_SYNC_NORMAL);
    opt.bCreate = bCreate;
    rc = wcs_db_open(&db, zPath, &opt, &zErr);
    if (zErr) {
      ssize_t w = write(aFd[1], zErr, strlen(zErr));
      (void)w;
    }
    if (db) wcs_db_close(db);
    _exit(rc);
  }
  close(aFd[1]);
  got = read(aFd[0], zMsg, nMsg - 1);
  zMsg[got > 0 ? got : 0] = 0;
  close(aFd[0]);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_msg(WEXITSTATUS(status) != 200, "cannot drop privileges");
  return WEXITSTATUS(status);
}

/* Creating a store in a directory the process may not write fails with
** WCS_PERM naming the path. */
START_TEST(test_unwritable_directory_is_perm_naming_path) {
  char zDir[1024], zPath[1100], zMsg[1024];
  int rc;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  ck_assert_int_eq(chmod(zDir, 0555), 0);
  rc = open_unprivileged(zPath, 1, zMsg, sizeof zMsg);
  ck_assert_msg(rc == WCS_PERM, "got %s (%s)", wcs_errstr(rc), zMsg);
  ck_assert_msg(strstr(zMsg, zPath) != NULL, "message \"%s\" does not name "
                "%s", zMsg, zPath);
  chmod(zDir, 0755);
  tu_rmrf(zDir);
}
END_TEST

/* An existing store whose directory became read-only: a writer cannot
** open it (it must create its WAL and lock); WCS_PERM names the path.
** Nothing is damaged: it opens normally once writable again. */
START_TEST(test_readonly_store_directory_is_perm_naming_path) {
  char zDir[1024], zPath[1100], zMsg[1024];
  int rc;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  make_store(zPath, 30, 0);
  ck_assert_int_eq(chmod(zPath, 0555), 0);
  rc = open_unprivileged(zPath, 1, zMsg, sizeof zMsg);
  ck_assert_msg(rc == WCS_PERM, "got %s (%s)", wcs_errstr(rc), zMsg);
  ck_assert_msg(strstr(zMsg, zPath) != NULL, "message \"%s\" does not name "
                "%s", zMsg, zPath);
  ck_assert_int_eq(chmod(zPath, 0755), 0);
  reopen_and_verify(zPath, NULL, 30, -1, 0);
  tu_rmrf(zDir);
}
END_TEST

/* A store path that is a regular file is refused, naming the path; the
** file is left alone. */
START_TEST(test_store_path_that_is_a_file_is_refused) {
  char zDir[1024], zPath[1100];
  wcs_options opt;
  wcs_db *db = NULL;
  char *zErr = NULL;
  size_t n = 0;
  void *p;
  int rc;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  ck_assert_int_eq(tu_write_file(zPath, "not a store\n", 12), 0);
  small_options(&opt, WCS_SYNC_NORMAL);
  rc = wcs_db_open(&db, zPath, &opt, &zErr);
  ck_assert_msg(rc == WCS_CANTOPEN || rc == WCS_IOERR,
                "got %s (%s)", wcs_errstr(rc), zErr ? zErr : "");
  ck_assert_ptr_null(db);
  ck_assert_msg(zErr && strstr(zErr, zPath), "message \"%s\" does not name "
                "%s", zErr ? zErr : "(null)", zPath);
  wcs_free(zErr);
  p = tu_read_file(zPath, &n);
  ck_assert_ptr_nonnull(p);
  ck_assert(n == 12 && memcmp(p, "not a store\n", 12) == 0);
  free(p);
  tu_rmrf(zDir);
}
END_TEST

/* bCreate = 0 on a missing store: WCS_CANTOPEN naming the path, and
** nothing is created. */
START_TEST(test_missing_store_without_create_is_cantopen) {
  char zDir[1024], zPath[1100];
  wcs_options opt;
  wcs_db *db = NULL;
  char *zErr = NULL;
  struct stat st;
  int rc;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  small_options(&opt, WCS_SYNC_NORMAL);
  opt.bCreate = 0;
  rc = wcs_db_open(&db, zPath, &opt, &zErr);
  ck_assert_msg(rc == WCS_CANTOPEN, "got %s (%s)", wcs_errstr(rc),
                zErr ? zErr : "");
  ck_assert_msg(zErr && strstr(zErr, zPath), "message \"%s\" does not name "
                "%s", zErr ? zErr : "(null)", zPath);
  wcs_free(zErr);
  ck_assert_int_ne(stat(zPath, &st), 0);
  tu_rmrf(zDir);
}
END_TEST

static void rewrite(const char *zDir, const char *zName, const void *p,
                    size_t n) {
  char zFile[1400];
  snprintf(zFile, sizeof zFile, "%s/%s", zDir, zName);
  ck_assert_int_eq(tu_write_file(zFile, p, n), 0);
}

/* CURRENT holding garbage, or empty: WCS_CORRUPT naming CURRENT. */
START_TEST(test_garbage_current_is_corrupt) {
  char zDir[1024], zPath[1100];
  FileList cur;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  make_store(zPath, 20, 0);
  list_files(zPath, 'c', &cur);
  ck_assert_int_eq(cur.n, 1);
  rewrite(zPath, "CURRENT", "\x01\xff garbage \x00\x7f", 14);
  open_fails(zPath, WCS_CORRUPT, "CURRENT");
  rewrite(zPath, "CURRENT", "", 0);
  open_fails(zPath, WCS_CORRUPT, "CURRENT");
  rewrite(zPath, "CURRENT", "MANIFEST-999999\n", 16);
  {
    /* names a manifest that does not exist: corrupt (or cannot open),
    ** either way naming it */
    wcs_options opt;
    wcs_db *db = NULL;
    char *zErr = NULL;
    int rc;
    small_options(&opt, WCS_SYNC_NORMAL);
    rc = wcs_db_open(&db, zPath, &opt, &zErr);
    ck_assert_msg(rc == WCS_CORRUPT || rc == WCS_CANTOPEN, "got %s (%s)",
                  wcs_errstr(rc), zErr ? zErr : "");
    ck_assert_msg(zErr && strstr(zErr, "999999"), "message \"%s\"",
                  zErr ? zErr : "(null)");
    wcs_free(zErr);
  }
  tu_rmrf(zDir);
}
END_TEST

/* A manifest cut short or overwritten in the middle: WCS_CORRUPT naming
** the manifest, never a store opened with files missing. */
START_TEST(test_damaged_manifest_is_corrupt) {
  char zDir[1024], zPath[1100], zFile[1400];
  FileList man;
  unsigned char *p;
  size_t n = 0, i;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  make_store(zPath, 60, 1);
  list_files(zPath, 'm', &man);
  ck_assert_int_ge(man.n, 1);
  snprintf(zFile, sizeof zFile, "%s/%s", zPath, man.az[man.n - 1]);
  p = tu_read_file(zFile, &n);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_gt(n, 16);
  /* a flipped byte in the middle */
  p[n / 2] ^= 0x5a;
  ck_assert_int_eq(tu_write_file(zFile, p, n), 0);
  open_fails(zPath, WCS_CORRUPT, man.az[man.n - 1]);
  p[n / 2] ^= 0x5a;
  /* garbage over the first bytes */
  for (i = 0; i < 8; i++) p[i] ^= 0xff;
  ck_assert_int_eq(tu_write_file(zFile, p, n), 0);
  open_fails(zPath, WCS_CORRUPT, man.az[man.n - 1]);
  free(p);
  tu_rmrf(zDir);
}
END_TEST

/*
** Flip one byte at many offsets of a sorted file: every read either
** returns right rows or fails with WCS_CORRUPT naming the file; a flip in
** the data region (first half of the file) must be detected by a full
** scan plus point reads.
*/
START_TEST(test_flipped_sorted_file_byte_is_corrupt) {
  char zDir[1024], zPath[1100], zFile[1400];
  FileList sst;
  unsigned char *pOrig;
  size_t n = 0, off;
  int nCase = 0;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  make_store(zPath, 40, 1);
  list_files(zPath, 's', &sst);
  ck_assert_int_ge(sst.n, 1);
  snprintf(zFile, sizeof zFile, "%s/%s", zPath, sst.az[0]);
  pOrig = tu_read_file(zFile, &n);
  ck_assert_ptr_nonnull(pOrig);
  ck_assert_uint_gt(n, 64);
  for (off = 0; off < n; off += n / 37 + 1, nCase++) {
    wcs_options opt;
    wcs_db *db = NULL;
    char *zErr = NULL;
    int rc, rcScan, rcGet;
    pOrig[off] ^= 0x10;
    ck_assert_int_eq(tu_write_file(zFile, pOrig, n), 0);
    pOrig[off] ^= 0x10;
    small_options(&opt, WCS_SYNC_NORMAL);
    opt.bReadOnly = 0;
    rc = wcs_db_open(&db, zPath, &opt, &zErr);
    if (rc != WCS_OK) {
      /* some stores check footers and indexes at open */
      ck_assert_msg(rc == WCS_CORRUPT, "offset %zu: open gave %s (%s)", off,
                    wcs_errstr(rc), zErr ? zErr : "");
      ck_assert_msg(zErr && strstr(zErr, sst.az[0]), "offset %zu: \"%s\"",
                    off, zErr ? zErr : "(null)");
      wcs_free(zErr);
      continue;
    }
    /* verify() fails the test on any wrong row; errors must be CORRUPT */
    rcScan = verify(db, 40, -1);
    if (rcScan != WCS_OK) {
      ck_assert_msg(rcScan == WCS_CORRUPT, "offset %zu: scan gave %s (%s)",
                    off, wcs_errstr(rcScan), wcs_errmsg(db));
      ck_assert_msg(strstr(wcs_errmsg(db), sst.az[0]) != NULL,
                    "offset %zu: \"%s\" does not name %s", off,
                    wcs_errmsg(db), sst.az[0]);
    }
    rcGet = verify_gets(db, 40);
    if (rcGet != WCS_OK) {
      ck_assert_msg(rcGet == WCS_CORRUPT, "offset %zu: get gave %s (%s)",
                    off, wcs_errstr(rcGet), wcs_errmsg(db));
      ck_assert_msg(strstr(wcs_errmsg(db), sst.az[0]) != NULL,
                    "offset %zu: \"%s\" does not name %s", off,
                    wcs_errmsg(db), sst.az[0]);
    }
    if (off < n / 2) {
      ck_assert_msg(rcScan != WCS_OK || rcGet != WCS_OK,
                    "offset %zu of %zu: flipped byte not detected", off, n);
    }
    wcs_db_close(db);
  }
  ck_assert_int_gt(nCase, 30);
  /* the original file reads fine again */
  ck_assert_int_eq(tu_write_file(zFile, pOrig, n), 0);
  free(pOrig);
  reopen_and_verify(zPath, NULL, 40, -1, 0);
  tu_rmrf(zDir);
}
END_TEST

/* A flipped byte in the middle of a WAL (records after it are intact, so
** it is not a torn tail): WCS_CORRUPT naming the log, not silent loss. */
START_TEST(test_flipped_wal_byte_is_corrupt) {
  char zDir[1024], zPath[1100], zFile[1400];
  FileList wal;
  wcs_options opt;
  wcs_db *db;
  unsigned char *p;
  size_t n = 0;
  int b, i, iBig = 0;
  off_t nBig = -1;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  small_options(&opt, WCS_SYNC_NORMAL);
  opt.nMemtable = 4 << 20; /* everything stays in the WAL */
  db = open_ok(zPath, &opt, NULL);
  for (b = 0; b < 60; b++) ck_assert_int_eq(write_batch(db, b), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  list_files(zPath, 'w', &wal);
  ck_assert_int_ge(wal.n, 1);
  for (i = 0; i < wal.n; i++) {
    struct stat st;
    snprintf(zFile, sizeof zFile, "%s/%s", zPath, wal.az[i]);
    if (stat(zFile, &st) == 0 && st.st_size > nBig) {
      nBig = st.st_size;
      iBig = i;
    }
  }
  snprintf(zFile, sizeof zFile, "%s/%s", zPath, wal.az[iBig]);
  p = tu_read_file(zFile, &n);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_gt(n, 1000);
  p[n / 3] ^= 0x01;
  ck_assert_int_eq(tu_write_file(zFile, p, n), 0);
  open_fails(zPath, WCS_CORRUPT, wal.az[iBig]);
  free(p);
  tu_rmrf(zDir);
}
END_TEST

/* A torn WAL tail (the last record cut short) of a process that died
** without closing the store is not corruption: the store opens with
** every whole record. (A cleanly closed store records its log's length,
** and refuses a log cut below it: check_storage_db.c.) */
START_TEST(test_torn_wal_tail_is_truncated) {
  char zDir[1024], zPath[1100], zFile[1400];
  FileList wal;
  wcs_options opt;
  wcs_db *db;
  int b, i, rc, status = 0;
  pid_t pid;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  small_options(&opt, WCS_SYNC_NORMAL);
  opt.nMemtable = 4 << 20;
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* the writer: dies without closing */
    db = open_ok(zPath, &opt, NULL);
    for (b = 0; b < 30; b++) {
      if (write_batch(db, b) != WCS_OK) _exit(1);
    }
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  list_files(zPath, 'w', &wal);
  for (i = 0; i < wal.n; i++) {
    struct stat st;
    snprintf(zFile, sizeof zFile, "%s/%s", zPath, wal.az[i]);
    if (stat(zFile, &st) == 0 && st.st_size > 100) {
      ck_assert_int_eq(truncate(zFile, st.st_size - 37), 0);
    }
  }
  db = open_ok(zPath, &opt, NULL);
  /* batch 29 was cut: it is gone, everything before it is whole */
  rc = verify(db, 29, 29);
  ck_assert_msg(rc == WCS_OK, "%s", wcs_errmsg(db));
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  tu_rmrf(zDir);
}
END_TEST

/* A second process opening the store for writing gets WCS_BUSY and a
** message saying it is locked; the first writer is not disturbed. */
START_TEST(test_second_writer_process_is_busy) {
  char zDir[1024], zPath[1100], zMsg[1024];
  wcs_options opt;
  wcs_db *db;
  int aFd[2], status = 0, b;
  pid_t pid;
  ssize_t got;
  snprintf(zDir, sizeof zDir, "%s", tu_tmpdir("faults"));
  snprintf(zPath, sizeof zPath, "%s/store", zDir);
  small_options(&opt, WCS_SYNC_NORMAL);
  db = open_ok(zPath, &opt, NULL);
  for (b = 0; b < 10; b++) ck_assert_int_eq(write_batch(db, b), WCS_OK);
  ck_assert_int_eq(pipe(aFd), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_db *db2 = NULL;
    char *zErr = NULL;
    int rc;
    close(aFd[0]);
    rc = wcs_db_open(&db2, zPath, &opt, &zErr);
    if (zErr) {
      ssize_t w = write(aFd[1], zErr, strlen(zErr));
      (void)w;
    }
    _exit(rc);
  }
  close(aFd[1]);
  got = read(aFd[0], zMsg, sizeof zMsg - 1);
  zMsg[got > 0 ? got : 0] = 0;
  close(aFd[0]);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_msg(WEXITSTATUS(status) == WCS_BUSY, "second writer got %s (%s)",
                wcs_errstr(WEXITSTATUS(status)), zMsg);
  ck_assert_msg(strstr(zMsg, "locked") && strstr(zMsg, zPath),
                "message \"%s\" should say %s is locked", zMsg, zPath);
  for (b = 10; b < 20; b++) ck_assert_int_eq(write_batch(db, b), WCS_OK);
  ck_assert_int_eq(wcs_db_close(db), WCS_OK);
  reopen_and_verify(zPath, NULL, 20, -1, 0);
  tu_rmrf(zDir);
}
END_TEST

Suite *storage_faults_suite(void);
Suite *storage_faults_suite(void) {
  Suite *s = suite_create("storage_faults");
  TCase *tInject = tcase_create("injected");
  TCase *tFiles = tcase_create("files");
  tcase_set_timeout(tInject, 120);
  tcase_set_timeout(tFiles, 120);
  tcase_add_test(tInject, test_append_fault_sweep_keeps_acked_commits);
  tcase_add_test(tInject, test_sync_fault_sweep_keeps_acked_commits);
  tcase_add_test(tInject,
                 test_sync_fault_sweep_then_power_cut_keeps_acked_commits);
  tcase_add_test(tInject, test_dead_disk_then_power_cut_keeps_acked_commits);
  tcase_add_test(tInject, test_fault_sweeps_then_power_cut_keep_a_prefix);
  tcase_add_test(tInject, test_read_fault_sweep_reports_ioerr);
  tcase_add_test(tInject, test_flush_fault_names_file);
  tcase_add_test(tInject, test_flush_sync_fault_names_file);
  tcase_add_test(tInject, test_compaction_fault_names_file);
  tcase_add_test(tInject, test_failed_compaction_never_stalls_writers);
  tcase_add_test(tInject, test_failed_compaction_leaves_the_store_idle);
  tcase_add_test(tInject, test_read_fault_on_sorted_file_is_transient);
  tcase_add_test(tInject, test_background_fault_reaches_writer);
  tcase_add_test(tFiles, test_unwritable_directory_is_perm_naming_path);
  tcase_add_test(tFiles, test_readonly_store_directory_is_perm_naming_path);
  tcase_add_test(tFiles, test_store_path_that_is_a_file_is_refused);
  tcase_add_test(tFiles, test_missing_store_without_create_is_cantopen);
  tcase_add_test(tFiles, test_garbage_current_is_corrupt);
  tcase_add_test(tFiles, test_damaged_manifest_is_corrupt);
  tcase_add_test(tFiles, test_flipped_sorted_file_byte_is_corrupt);
  tcase_add_test(tFiles, test_flipped_wal_byte_is_corrupt);
  tcase_add_test(tFiles, test_torn_wal_tail_is_truncated);
  tcase_add_test(tFiles, test_second_writer_process_is_busy);
  suite_add_tcase(s, tInject);
  suite_add_tcase(s, tFiles);
  return s;
}
