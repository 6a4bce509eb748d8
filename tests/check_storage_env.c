/*
** Tests of the file-system seam (storage/env.c): the same conformance cases
** run against the POSIX env (in a temporary directory) and the memory env,
** then the POSIX-only behaviours (process lock across fork(), permission
** errors naming the path) and the fault env (Nth call fails, sticky faults,
** a simulated crash keeps only synced bytes).
*/
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/db_int.h"
#include "storage/env.h"
#include "storage/util.h"
#include "testutil.h"

/* ---- a test fixture: one env and a directory in it */
typedef struct Fix {
  wcs_env *pEnv;
  char zDir[1024];
  int bMem;
} Fix;

static void fixOpen(Fix *f, int bMem) {
  memset(f, 0, sizeof *f);
  f->bMem = bMem;
  if (bMem) {
    f->pEnv = wcs_env_mem_new();
    snprintf(f->zDir, sizeof f->zDir, "/mem/store");
    ck_assert_int_eq(f->pEnv->xMkdir(f->pEnv, f->zDir, NULL), WCS_OK);
  } else {
    f->pEnv = wcs_env_posix();
    snprintf(f->zDir, sizeof f->zDir, "%s", tu_tmpdir("env"));
  }
}

static void fixClose(Fix *f) {
  if (!f->bMem) tu_rmrf(f->zDir);
  f->pEnv->xDestroy(f->pEnv);
}

static void pathOf(Fix *f, const char *zName, char *zOut, size_t n) {
  snprintf(zOut, n, "%s/%s", f->zDir, zName);
}

static int countCb(void *pCtx, const char *zName) {
  (void)zName;
  (*(int *)pCtx)++;
  return WCS_OK;
}

/* Append, read back, size, truncate, reopen: the basic file contract. */
static void conformanceBasic(int bMem) {
  Fix f;
  char zPath[1100], zTo[1100];
  wcs_file *pFile = NULL;
  char aBuf[64];
  size_t nRead = 0;
  uint64_t nSize = 0;
  int bExists = 0, nEntry = 0;
  fixOpen(&f, bMem);
  pathOf(&f, "a.log", zPath, sizeof zPath);

  ck_assert_int_eq(f.pEnv->xOpen(f.pEnv, zPath, WCS_OPEN_WRITE | WCS_OPEN_READ,
                                 &pFile, NULL),
                   WCS_OK);
  ck_assert_int_eq(f.pEnv->xAppend(pFile, "hello ", 6, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xAppend(pFile, "world", 5, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xSync(pFile, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xSize(pFile, &nSize, NULL), WCS_OK);
  ck_assert_uint_eq(nSize, 11);
  ck_assert_int_eq(f.pEnv->xRead(pFile, 6, aBuf, 64, &nRead, NULL), WCS_OK);
  ck_assert_uint_eq(nRead, 5);
  ck_assert(memcmp(aBuf, "world", 5) == 0);
  /* a read past the end is short, not an error */
  ck_assert_int_eq(f.pEnv->xRead(pFile, 100, aBuf, 4, &nRead, NULL), WCS_OK);
  ck_assert_uint_eq(nRead, 0);
  /* truncate, then appends continue at the new end */
  ck_assert_int_eq(f.pEnv->xTruncate(pFile, 5, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xAppend(pFile, "!", 1, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xRead(pFile, 0, aBuf, 64, &nRead, NULL), WCS_OK);
  ck_assert_uint_eq(nRead, 6);
  ck_assert(memcmp(aBuf, "hello!", 6) == 0);
  f.pEnv->xClose(pFile);

  /* reopen for appending keeps the content; TRUNCATE empties it */
  ck_assert_int_eq(f.pEnv->xOpen(f.pEnv, zPath, WCS_OPEN_WRITE, &pFile, NULL),
                   WCS_OK);
  ck_assert_int_eq(f.pEnv->xAppend(pFile, "?", 1, NULL), WCS_OK);
  f.pEnv->xClose(pFile);
  ck_assert_int_eq(f.pEnv->xOpen(f.pEnv, zPath, WCS_OPEN_READ, &pFile, NULL),
                   WCS_OK);
  ck_assert_int_eq(f.pEnv->xRead(pFile, 0, aBuf, 64, &nRead, NULL), WCS_OK);
  ck_assert_uint_eq(nRead, 7);
  ck_assert(memcmp(aBuf, "hello!?", 7) == 0);
  f.pEnv->xClose(pFile);

  /* rename replaces, delete removes, list sees entries */
  pathOf(&f, "b.log", zTo, sizeof zTo);
  ck_assert_int_eq(f.pEnv->xRename(f.pEnv, zPath, zTo, NULL), WCS_OK);
  f.pEnv->xExists(f.pEnv, zPath, &bExists);
  ck_assert_int_eq(bExists, 0);
  f.pEnv->xExists(f.pEnv, zTo, &bExists);
  ck_assert_int_eq(bExists, 1);
  ck_assert_int_eq(f.pEnv->xList(f.pEnv, f.zDir, &nEntry, countCb, NULL),
                   WCS_OK);
  ck_assert_int_eq(nEntry, 1);
  ck_assert_int_eq(f.pEnv->xSyncDir(f.pEnv, f.zDir, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xDelete(f.pEnv, zTo, NULL), WCS_OK);
  f.pEnv->xExists(f.pEnv, zTo, &bExists);
  ck_assert_int_eq(bExists, 0);
  fixClose(&f);
}

START_TEST(test_env_posix_basic_file_contract) {
  conformanceBasic(0);
}
END_TEST

START_TEST(test_env_mem_basic_file_contract) {
  conformanceBasic(1);
}
END_TEST

/* A missing file opened for reading is WCS_CANTOPEN and names the path. */
static void conformanceMissing(int bMem) {
  Fix f;
  char zPath[1100];
  wcs_file *pFile = NULL;
  char *zErr = NULL;
  fixOpen(&f, bMem);
  pathOf(&f, "nope.sst", zPath, sizeof zPath);
  ck_assert_int_eq(f.pEnv->xOpen(f.pEnv, zPath, WCS_OPEN_READ, &pFile, &zErr),
                   WCS_CANTOPEN);
  ck_assert_ptr_null(pFile);
  ck_assert_ptr_nonnull(zErr);
  ck_assert_ptr_nonnull(strstr(zErr, "nope.sst"));
  free(zErr);
  zErr = NULL;
  ck_assert_int_ne(f.pEnv->xDelete(f.pEnv, zPath, &zErr), WCS_OK);
  ck_assert_ptr_nonnull(strstr(zErr, "nope.sst"));
  free(zErr);
  fixClose(&f);
}

START_TEST(test_env_posix_missing_file_names_path) {
  conformanceMissing(0);
}
END_TEST

START_TEST(test_env_mem_missing_file_names_path) {
  conformanceMissing(1);
}
END_TEST

/* Exclusive locks exclude each other and shared locks; shared locks share. */
static void conformanceLock(int bMem) {
  Fix f;
  char zPath[1100];
  void *pA = NULL, *pB = NULL, *pC = NULL;
  char *zErr = NULL;
  fixOpen(&f, bMem);
  pathOf(&f, "LOCK", zPath, sizeof zPath);
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 1, &pA, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 1, &pB, &zErr), WCS_BUSY);
  ck_assert_ptr_nonnull(strstr(zErr, "is locked by another process"));
  ck_assert_ptr_nonnull(strstr(zErr, f.zDir));
  free(zErr);
  zErr = NULL;
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 0, &pB, &zErr), WCS_BUSY);
  free(zErr);
  f.pEnv->xUnlock(f.pEnv, pA);
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 0, &pA, NULL), WCS_OK);
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 0, &pB, NULL), WCS_OK);
  zErr = NULL;
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 1, &pC, &zErr), WCS_BUSY);
  free(zErr);
  f.pEnv->xUnlock(f.pEnv, pA);
  f.pEnv->xUnlock(f.pEnv, pB);
  ck_assert_int_eq(f.pEnv->xLock(f.pEnv, zPath, 1, &pC, NULL), WCS_OK);
  f.pEnv->xUnlock(f.pEnv, pC);
  fixClose(&f);
}

START_TEST(test_env_posix_lock_modes) {
  conformanceLock(0);
}
END_TEST

START_TEST(test_env_mem_lock_modes) {
  conformanceLock(1);
}
END_TEST

/* A lock held by another process gives WCS_BUSY; when that process dies
** (SIGKILL, no cleanup) the lock is free again. */
START_TEST(test_env_posix_lock_held_by_other_process_is_busy) {
  wcs_env *pEnv = wcs_env_posix();
  const char *zDir = tu_tmpdir("envlock");
  char zPath[1100];
  int aPipe[2];
  pid_t pid;
  char c;
  void *pLock = NULL;
  char *zErr = NULL;
  int st;
  snprintf(zPath, sizeof zPath, "%s/LOCK", zDir);
  ck_assert_int_eq(pipe(aPipe), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    void *p = NULL;
    int rc = pEnv->xLock(pEnv, zPath, 1, &p, NULL);
    c = rc == WCS_OK ? 'y' : 'n';
    if (write(aPipe[1], &c, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  ck_assert_int_eq(read(aPipe[0], &c, 1), 1);
  ck_assert_int_eq(c, 'y');
  ck_assert_int_eq(pEnv->xLock(pEnv, zPath, 1, &pLock, &zErr), WCS_BUSY);
  ck_assert_ptr_nonnull(strstr(zErr, "locked by another process"));
  free(zErr);
  zErr = NULL;
  ck_assert_int_eq(pEnv->xLock(pEnv, zPath, 0, &pLock, &zErr), WCS_BUSY);
  free(zErr);
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  ck_assert_int_eq(pEnv->xLock(pEnv, zPath, 1, &pLock, NULL), WCS_OK);
  pEnv->xUnlock(pEnv, pLock);
  close(aPipe[0]);
  close(aPipe[1]);
  tu_rmrf(zDir);
}
END_TEST

/* Opening in a directory the process may not enter is WCS_PERM naming the
** path. Run in a child that drops root (root ignores modes). */
START_TEST(test_env_posix_permission_error_names_path) {
  wcs_env *pEnv = wcs_env_posix();
  const char *zDir = tu_tmpdir("envperm");
  char zSub[1100], zPath[1200];
  pid_t pid;
  int st = 0;
  snprintf(zSub, sizeof zSub, "%s/locked", zDir);
  ck_assert_int_eq(mkdir(zSub, 0700), 0);
  snprintf(zPath, sizeof zPath, "%s/000001.log", zSub);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    wcs_file *pFile = NULL;
    char *zErr = NULL;
    int rc;
    if (geteuid() == 0 && setuid(65534) != 0) _exit(3);
    rc = pEnv->xOpen(pEnv, zPath, WCS_OPEN_WRITE, &pFile, &zErr);
    if (rc != WCS_PERM) _exit(4);
    if (zErr == NULL || strstr(zErr, zPath) == NULL) _exit(5);
    if (strstr(zErr, "Permission denied") == NULL) _exit(6);
    _exit(0);
  }
  waitpid(pid, &st, 0);
  ck_assert(WIFEXITED(st));
  ck_assert_int_eq(WEXITSTATUS(st), 0);
  tu_rmrf(zDir);
}
END_TEST

/* Readers of a memory file run while a writer appends (and the buffer
** moves); every read sees a consistent prefix. */
typedef struct MemRace {
  wcs_env *pEnv;
  wcs_file *pFile;
  atomic_int bStop; /* set by the writer, read by the readers */
  atomic_int nBad;  /* counted by both readers */
} MemRace;

static void *memRaceReader(void *p) {
  MemRace *r = p;
  uint8_t aBuf[256];
  while (!atomic_load(&r->bStop)) {
    uint64_t n = 0;
    size_t nRead = 0, i;
    r->pEnv->xSize(r->pFile, &n, NULL);
    if (n < sizeof aBuf) continue;
    r->pEnv->xRead(r->pFile, n - sizeof aBuf, aBuf, sizeof aBuf, &nRead, NULL);
    for (i = 0; i < nRead; i++) {
      if (aBuf[i] != (uint8_t)((n - sizeof aBuf + i) % 251)) {
        atomic_fetch_add(&r->nBad, 1);
      }
    }
  }
  return NULL;
}

START_TEST(test_env_mem_concurrent_read_while_append) {
  MemRace r;
  pthread_t t[2];
  int i;
  uint64_t off = 0;
  memset(&r, 0, sizeof r);
  atomic_init(&r.bStop, 0);
  atomic_init(&r.nBad, 0);
  r.pEnv = wcs_env_mem_new();
  ck_assert_int_eq(r.pEnv->xOpen(r.pEnv, "/x", WCS_OPEN_WRITE | WCS_OPEN_READ,
                                 &r.pFile, NULL),
                   WCS_OK);
  for (i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, memRaceReader, &r);
  for (i = 0; i < 20000; i++) {
    uint8_t a[100];
    int j;
    for (j = 0; j < 100; j++)
      a[j] = (uint8_t)((off + (uint64_t)j) % 251);
    ck_assert_int_eq(r.pEnv->xAppend(r.pFile, a, 100, NULL), WCS_OK);
    off += 100;
  }
  atomic_store(&r.bStop, 1);
  for (i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  ck_assert_int_eq(atomic_load(&r.nBad), 0);
  r.pEnv->xClose(r.pFile);
  r.pEnv->xDestroy(r.pEnv);
}
END_TEST

/* A deleted memory file stays readable through handles already open. */
START_TEST(test_env_mem_delete_keeps_open_handles) {
  wcs_env *pEnv = wcs_env_mem_new();
  wcs_file *pW = NULL, *pR = NULL;
  char a[8];
  size_t n = 0;
  int bExists = 1;
  ck_assert_int_eq(pEnv->xOpen(pEnv, "/d/f", WCS_OPEN_WRITE, &pW, NULL),
                   WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pW, "abc", 3, NULL), WCS_OK);
  pEnv->xClose(pW);
  ck_assert_int_eq(pEnv->xOpen(pEnv, "/d/f", WCS_OPEN_READ, &pR, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xDelete(pEnv, "/d/f", NULL), WCS_OK);
  pEnv->xExists(pEnv, "/d/f", &bExists);
  ck_assert_int_eq(bExists, 0);
  ck_assert_int_eq(pEnv->xRead(pR, 0, a, 8, &n, NULL), WCS_OK);
  ck_assert_uint_eq(n, 3);
  pEnv->xClose(pR);
  pEnv->xDestroy(pEnv);
}
END_TEST

/* The Nth append fails with the configured code and a message naming the
** file; the other calls pass; sticky faults keep failing. */
START_TEST(test_env_fault_nth_append_fails_then_recovers) {
  wcs_env *pMem = wcs_env_mem_new();
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_file *pFile = NULL;
  char *zErr = NULL;
  uint64_t n = 0;
  memset(&fault, 0, sizeof fault);
  fault.nWriteFail = 2;
  fault.rcFail = WCS_FULL;
  pEnv = wcs_env_fault_new(pMem, &fault);
  ck_assert_int_eq(
      pEnv->xOpen(pEnv, "/s/000003.log", WCS_OPEN_WRITE, &pFile, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pFile, "a", 1, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pFile, "b", 1, &zErr), WCS_FULL);
  ck_assert_ptr_nonnull(strstr(zErr, "/s/000003.log"));
  ck_assert_ptr_nonnull(strstr(zErr, "No space left"));
  free(zErr);
  ck_assert_int_eq(pEnv->xAppend(pFile, "c", 1, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xSize(pFile, &n, NULL), WCS_OK);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(fault.nWrites, 3);

  fault.nSyncFail = fault.nSyncs + 1;
  fault.rcFail = WCS_IOERR;
  fault.bSticky = 1;
  ck_assert_int_eq(pEnv->xSync(pFile, NULL), WCS_IOERR);
  ck_assert_int_eq(pEnv->xSync(pFile, NULL), WCS_IOERR);
  pEnv->xClose(pFile);
  pEnv->xDestroy(pEnv);
  pMem->xDestroy(pMem);
}
END_TEST

START_TEST(test_env_fault_nth_read_fails) {
  wcs_env *pMem = wcs_env_mem_new();
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_file *pFile = NULL;
  char a[4];
  size_t n;
  memset(&fault, 0, sizeof fault);
  fault.nReadFail = 1;
  fault.rcFail = WCS_IOERR;
  pEnv = wcs_env_fault_new(pMem, &fault);
  ck_assert_int_eq(
      pEnv->xOpen(pEnv, "/f", WCS_OPEN_WRITE | WCS_OPEN_READ, &pFile, NULL),
      WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pFile, "abcd", 4, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xRead(pFile, 0, a, 4, &n, NULL), WCS_IOERR);
  ck_assert_int_eq(pEnv->xRead(pFile, 0, a, 4, &n, NULL), WCS_OK);
  ck_assert_uint_eq(n, 4);
  pEnv->xClose(pFile);
  pEnv->xDestroy(pEnv);
  pMem->xDestroy(pMem);
}
END_TEST

/* A simulated crash keeps synced bytes and drops the rest, on the memory
** env and on disk. */
static void crashKeepsSynced(int bMem) {
  Fix f;
  wcs_fault fault;
  wcs_env *pEnv;
  wcs_file *pFile = NULL;
  char zA[1100], zB[1100];
  uint64_t n = 0;
  fixOpen(&f, bMem);
  memset(&fault, 0, sizeof fault);
  pEnv = wcs_env_fault_new(f.pEnv, &fault);
  pathOf(&f, "a", zA, sizeof zA);
  pathOf(&f, "b", zB, sizeof zB);
  ck_assert_int_eq(pEnv->xOpen(pEnv, zA, WCS_OPEN_WRITE, &pFile, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pFile, "durable", 7, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xSync(pFile, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pFile, "-lost", 5, NULL), WCS_OK);
  pEnv->xClose(pFile);
  ck_assert_int_eq(pEnv->xOpen(pEnv, zB, WCS_OPEN_WRITE, &pFile, NULL), WCS_OK);
  ck_assert_int_eq(pEnv->xAppend(pFile, "never synced", 12, NULL), WCS_OK);
  pEnv->xClose(pFile);

  ck_assert_int_eq(wcs_env_fault_crash(pEnv), WCS_OK);
  ck_assert_int_eq(f.pEnv->xOpen(f.pEnv, zA, WCS_OPEN_READ, &pFile, NULL),
                   WCS_OK);
  f.pEnv->xSize(pFile, &n, NULL);
  ck_assert_uint_eq(n, 7);
  f.pEnv->xClose(pFile);
  ck_assert_int_eq(f.pEnv->xOpen(f.pEnv, zB, WCS_OPEN_READ, &pFile, NULL),
                   WCS_OK);
  f.pEnv->xSize(pFile, &n, NULL);
  ck_assert_uint_eq(n, 0);
  f.pEnv->xClose(pFile);
  pEnv->xDestroy(pEnv);
  fixClose(&f);
}

START_TEST(test_env_fault_crash_keeps_only_synced_bytes_mem) {
  crashKeepsSynced(1);
}
END_TEST

START_TEST(test_env_fault_crash_keeps_only_synced_bytes_posix) {
  crashKeepsSynced(0);
}
END_TEST

Suite *storage_env_suite(void);
Suite *storage_env_suite(void) {
  Suite *s = suite_create("storage_env");
  TCase *tc = tcase_create("env");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_env_posix_basic_file_contract);
  tcase_add_test(tc, test_env_mem_basic_file_contract);
  tcase_add_test(tc, test_env_posix_missing_file_names_path);
  tcase_add_test(tc, test_env_mem_missing_file_names_path);
  tcase_add_test(tc, test_env_posix_lock_modes);
  tcase_add_test(tc, test_env_mem_lock_modes);
  tcase_add_test(tc, test_env_posix_lock_held_by_other_process_is_busy);
  tcase_add_test(tc, test_env_posix_permission_error_names_path);
  tcase_add_test(tc, test_env_mem_concurrent_read_while_append);
  tcase_add_test(tc, test_env_mem_delete_keeps_open_handles);
  tcase_add_test(tc, test_env_fault_nth_append_fails_then_recovers);
  tcase_add_test(tc, test_env_fault_nth_read_fails);
  tcase_add_test(tc, test_env_fault_crash_keeps_only_synced_bytes_mem);
  tcase_add_test(tc, test_env_fault_crash_keeps_only_synced_bytes_posix);
  suite_add_tcase(s, tc);
  return s;
}
