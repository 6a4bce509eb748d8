/*
** crash_test — kill a writer at random moments and check that recovery
** keeps every acknowledged commit and never half a commit.
**
** Each round the parent forks a child that opens the store (SYNC FULL,
** NORMAL and OFF in turn; tiny memtables so flushes and compactions run
** all the time) and commits batch after batch, writing each acknowledged
** batch id to a pipe. After a
** random delay (sometimes before the child has even finished opening, so
** recovery itself gets interrupted) the parent sends SIGKILL, drains the
** pipe, opens the store read-only and checks it with one scan:
**
**   - batch i puts keys "b<i>#<j>" for j < 1 + i % 23 and sets "last" = i;
**     from i > D it also range-deletes every key of batch i - D, so batches
**     (N - D, N] are live, where N is the newest batch present;
**   - N is the last acknowledged batch or the one after it (written but
**     not acknowledged), never older, never further;
**   - every live batch has all of its keys with the right values and no
**     other key exists: a batch is there entirely or not at all.
**
** Batches of 1 KiB or more (the ones with the most keys, about a third of
** them) are committed by bulk ingest (nIngestBytes): written straight into
** sorted files, range delete included, installed by one manifest edit, so
** kills also land in the middle of ingests, between the files and the
** edit, and among the logged commits around them. Every fifth batch is a
** prebuilt one (wcs_prebuild, storage/wal.h): the same effect with point
** deletes of batch i - D's keys instead of the range delete, in key order,
** offered to the prebuild's thread in two pieces (the buffer withdrawn and
** moved between them) and installed by its commit, so kills also land
** while that thread writes its files and around their install.
**
** Rounds: 200, or WCS_CRASH_ROUNDS (make crashtest runs 10,000). The seed
** is printed; WCS_SEED replays a run.
*/
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storage/util.h"
#include "storage/wal.h"
#include "testutil.h"
#include "wcs.h"

#define D 40 /* batch i deletes batch i - D */

static int nKeysOf(uint64_t i) {
  return 1 + (int)(i % 23);
}

/* The sync mode of round r: FULL, NORMAL and OFF in turn. A process
** crash loses no acknowledged commit in any of them (doc/storage.md, "Sync
** modes"); they differ in what reaches the disk, which a kill does not
** test. */
static int syncOfRound(int iRound) {
  static const int aMode[3] = {WCS_SYNC_FULL, WCS_SYNC_NORMAL, WCS_SYNC_OFF};
  return aMode[iRound % 3];
}

static void options(wcs_options *o, int iSync) {
  wcs_options_init(o);
  o->iSync = iSync;
  o->nMemtable = 48 * 1024;
  o->nL1Bytes = 64 * 1024;
  o->nFileBytes = 32 * 1024;
  o->nBlockSize = 2048;
  o->nL0Trigger = 2;
  o->nL0Stop = 8;
  o->nIngestBytes = 1024; /* the larger batches are ingested */
}

static size_t valueOf(uint64_t i, int j, char *z) {
  return (size_t)sprintf(z, "value of batch %llu key %d %0*d",
                         (unsigned long long)i, j, (int)(i % 40), 0);
}

/* Append a batch record (storage/wal.h) to payload b. */
static void payloadOp(wcs_buf *b, int op, const char *k, size_t nK,
                      const char *v, size_t nV) {
  uint8_t aLen[16];
  if (wcs_buf_append(b, &(uint8_t){(uint8_t)op}, 1)) _exit(5);
  if (wcs_buf_append(b, aLen, (size_t)wcs_put_varint(aLen, nK))) _exit(5);
  if (wcs_buf_append(b, k, nK)) _exit(5);
  if (op == WAL_OP_PUT) {
    if (wcs_buf_append(b, aLen, (size_t)wcs_put_varint(aLen, nV))) _exit(5);
    if (wcs_buf_append(b, v, nV)) _exit(5);
  }
}

/* Commit batch i as a prebuild: batch i - D's keys deleted one by one,
** batch i's keys put, "last" set, in key order. 0 when the store took it,
** else (declined) the caller commits it the usual way. */
static int prebuilt(wcs_db *db, uint64_t i) {
  wcs_buf pay = {0};
  wcs_prebuild *pb = NULL;
  uint8_t *pMoved;
  char k[64], v[128];
  int j, nOp = 0, rc;
  size_t nHalf;
  if (wcs_buf_reserve(&pay, WAL_BATCH_HEADER)) _exit(5);
  memset(pay.a, 0, WAL_BATCH_HEADER);
  pay.n = WAL_BATCH_HEADER;
  if (i > D) {
    for (j = 0; j < nKeysOf(i - D); j++) {
      size_t nK =
          (size_t)sprintf(k, "b%08llu#%02d", (unsigned long long)(i - D), j);
      payloadOp(&pay, WAL_OP_DELETE, k, nK, NULL, 0);
      nOp++;
    }
  }
  nHalf = pay.n;
  for (j = 0; j < nKeysOf(i); j++) {
    size_t nK = (size_t)sprintf(k, "b%08llu#%02d", (unsigned long long)i, j);
    payloadOp(&pay, WAL_OP_PUT, k, nK, v, valueOf(i, j, v));
    nOp++;
  }
  sprintf(v, "%llu", (unsigned long long)i);
  payloadOp(&pay, WAL_OP_PUT, "last", 4, v, strlen(v));
  nOp++;
  rc = wcs_prebuild_start(db, 0, &pb);
  if (rc == WCS_OK) {
    wcs_prebuild_offer(pb, pay.a, nHalf);
    wcs_prebuild_offer(pb, NULL, 0); /* the buffer moves */
    pMoved = malloc(pay.n);
    if (pMoved == NULL) _exit(5);
    memcpy(pMoved, pay.a, pay.n);
    memset(pay.a, 0xee, pay.n);
    rc = wcs_prebuild_commit(pb, pMoved, pay.n, nOp);
    free(pMoved);
  }
  wcs_buf_free(&pay);
  if (rc != WCS_OK && rc != WCS_NOTFOUND) {
    fprintf(stderr, "crash_test child: prebuilt commit: %s\n", wcs_errmsg(db));
    _exit(6);
  }
  return rc == WCS_OK ? 0 : -1;
}

/* The child: commit batches from id iFirst on, reporting each. */
static void child(const char *zPath, uint64_t iFirst, int fd, int iSync) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_batch *b = NULL;
  uint64_t i;
  char *zErr = NULL;
  options(&o, iSync);
  if (wcs_db_open(&db, zPath, &o, &zErr) != WCS_OK) {
    fprintf(stderr, "crash_test child: open: %s\n", zErr ? zErr : "?");
    _exit(3);
  }
  if (wcs_batch_new(&b)) _exit(4);
  for (i = iFirst;; i++) {
    char k[64], v[128], e[64];
    int j, n = nKeysOf(i);
    if (i % 5 == 0 && prebuilt(db, i) == 0) {
      if (write(fd, &i, sizeof i) != (ssize_t)sizeof i) _exit(7);
      continue;
    }
    wcs_batch_clear(b);
    for (j = 0; j < n; j++) {
      size_t nK = (size_t)sprintf(k, "b%08llu#%02d", (unsigned long long)i, j);
      size_t nV = valueOf(i, j, v);
      if (wcs_batch_put(b, k, nK, v, nV)) _exit(5);
    }
    sprintf(v, "%llu", (unsigned long long)i);
    if (wcs_batch_put(b, "last", 4, v, strlen(v))) _exit(5);
    if (i > D) {
      sprintf(k, "b%08llu#", (unsigned long long)(i - D));
      sprintf(e, "b%08llu$", (unsigned long long)(i - D));
      if (wcs_batch_delete_range(b, k, strlen(k), e, strlen(e))) _exit(5);
    }
    if (wcs_db_write(db, b) != WCS_OK) {
      fprintf(stderr, "crash_test child: write: %s\n", wcs_errmsg(db));
      _exit(6);
    }
    if (write(fd, &i, sizeof i) != (ssize_t)sizeof i) _exit(7);
  }
}

/* Check the store; returns the newest batch present (N), or -1. */
static int64_t verify(const char *zPath, uint64_t nAcked, int iRound) {
  wcs_db *db = NULL;
  wcs_options o;
  wcs_iter *it = NULL;
  char *zErr = NULL;
  void *p = NULL;
  size_t n = 0;
  uint64_t N, i;
  int *aSeen;
  int rc, bad = 0;
  options(&o, WCS_SYNC_FULL);
  o.bReadOnly = 1;
  rc = wcs_db_open(&db, zPath, &o, &zErr);
  if (rc != WCS_OK) {
    fprintf(stderr, "round %d: open after the crash: %s (%s)\n", iRound,
            wcs_errstr(rc), zErr ? zErr : "");
    wcs_free(zErr);
    return -1;
  }
  rc = wcs_db_get(db, NULL, "last", 4, &p, &n);
  if (rc != WCS_OK) {
    fprintf(stderr, "round %d: get last: %s\n", iRound, wcs_errmsg(db));
    wcs_db_close(db);
    return -1;
  }
  {
    char aNum[32]; /* the value is not NUL-terminated */
    if (n >= sizeof aNum) n = sizeof aNum - 1;
    if (p) memcpy(aNum, p, n);
    aNum[p ? n : 0] = 0;
    N = strtoull(aNum, NULL, 10);
  }
  wcs_free(p);
  if (N < nAcked || N > nAcked + 1) {
    fprintf(stderr,
            "round %d: newest batch present is %llu, acknowledged %llu\n",
            iRound, (unsigned long long)N, (unsigned long long)nAcked);
    wcs_db_close(db);
    return -1;
  }
  aSeen = calloc(D + 2, sizeof(int));
  if (wcs_iter_new(db, NULL, &it) != WCS_OK) {
    fprintf(stderr, "round %d: iterator: %s\n", iRound, wcs_errmsg(db));
    bad = 1;
  }
  for (rc = it ? wcs_iter_first(it) : WCS_ERROR; !bad && wcs_iter_valid(it);
       rc = wcs_iter_next(it)) {
    size_t nK, nV;
    const char *k = wcs_iter_key(it, &nK);
    const char *v = wcs_iter_value(it, &nV);
    unsigned long long id;
    int j;
    char aWant[128];
    if (nK == 4 && memcmp(k, "last", 4) == 0) continue;
    if (nK != 12 || sscanf(k, "b%8llu#%2d", &id, &j) != 2) {
      fprintf(stderr, "round %d: unexpected key %.*s\n", iRound, (int)nK, k);
      bad = 1;
      break;
    }
    if (id > N || id + D <= N || j >= nKeysOf(id)) {
      fprintf(stderr,
              "round %d: key %.*s should not exist (newest batch "
              "%llu)\n",
              iRound, (int)nK, k, (unsigned long long)N);
      bad = 1;
      break;
    }
    if (valueOf(id, j, aWant) != nV || memcmp(aWant, v, nV) != 0) {
      fprintf(stderr, "round %d: wrong value for %.*s\n", iRound, (int)nK, k);
      bad = 1;
      break;
    }
    aSeen[id - (N + 1 - D)]++;
  }
  if (!bad && (rc != WCS_OK || wcs_iter_status(it) != WCS_OK)) {
    fprintf(stderr, "round %d: scan: %s\n", iRound, wcs_errmsg(db));
    bad = 1;
  }
  for (i = N >= D ? N + 1 - D : 1; !bad && i <= N; i++) {
    int nHave = aSeen[i - (N + 1 - D)];
    if (nHave != nKeysOf(i)) {
      fprintf(stderr, "round %d: batch %llu has %d of its %d keys%s\n", iRound,
              (unsigned long long)i, nHave, nKeysOf(i),
              i > nAcked ? " (not acknowledged: must be all or nothing)" : "");
      bad = 1;
    }
  }
  free(aSeen);
  wcs_iter_free(it);
  wcs_db_close(db);
  return bad ? -1 : (int64_t)N;
}

int main(void) {
  const char *zRounds = getenv("WCS_CRASH_ROUNDS");
  int nRound = zRounds ? atoi(zRounds) : 200;
  const char *zTmp = tu_tmpdir("crash");
  char zPath[1100];
  uint64_t nNext = 1, nAckTotal = 0;
  int iRound, nEarly = 0;
  time_t t0 = time(NULL);
  if (zTmp == NULL) {
    fprintf(stderr, "crash_test: cannot make a temporary directory\n");
    return 1;
  }
  snprintf(zPath, sizeof zPath, "%s/store", zTmp);
  tu_seed(0);
  for (iRound = 1; iRound <= nRound; iRound++) {
    int fd;
    pid_t pid;
    uint64_t nAcked = nNext - 1;
    int64_t N;
    long nDelay;
    pid = tu_fork_acked(&fd);
    if (pid < 0) return 1;
    if (pid == 0) {
      child(zPath, nNext, fd, syncOfRound(iRound));
      _exit(0);
    }
    /* mostly while committing; one round in eight early, during open */
    nDelay = (tu_rand_range(8) == 0) ? (long)tu_rand_range(40000)
                                     : 20000 + (long)tu_rand_range(120000);
    if (tu_kill_round(pid, fd, nDelay, &nAcked, iRound)) return 1;
    if (nAcked == nNext - 1) nEarly++;
    nAckTotal += nAcked - (nNext - 1);
    N = verify(zPath, nAcked, iRound);
    if (N < 0) {
      fprintf(stderr, "crash_test: FAILED in round %d; store kept in %s\n",
              iRound, zPath);
      return 1;
    }
    nNext = (uint64_t)N + 1;
    if (iRound % 50 == 0) {
      fprintf(stderr, "crash_test: %d rounds, %llu batches acknowledged\n",
              iRound, (unsigned long long)nAckTotal);
    }
  }
  printf("crash_test: %d rounds in %lds, %llu batches acknowledged, %d kills "
         "before the first commit; every acknowledged batch present, none "
         "half present\n",
         nRound, (long)(time(NULL) - t0), (unsigned long long)nAckTotal,
         nEarly);
  tu_rmrf(zTmp);
  return 0;
}
