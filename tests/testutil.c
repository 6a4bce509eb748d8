/* Test helpers; see testutil.h. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char zTmp[4096];
static int nTmp = 0;

const char *tu_tmpdir(const char *zTag) {
  const char *zBase = getenv("WCS_TEST_TMP");
  if (zBase == NULL || zBase[0] == 0) zBase = "/tmp";
  mkdir(zBase, 0755);
  for (;;) {
    snprintf(zTmp, sizeof zTmp, "%s/%s-%d-%d", zBase, zTag ? zTag : "t",
             (int)getpid(), nTmp++);
    tu_rmrf(zTmp);
    if (mkdir(zTmp, 0755) == 0) return zTmp;
    if (errno != EEXIST) return NULL;
  }
}

static int rmOne(const char *z, const struct stat *st, int flag,
                 struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  return remove(z);
}

int tu_count_ssts(const char *zDir) {
  DIR *d = opendir(zDir);
  struct dirent *e;
  int n = 0;
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL) {
    size_t m = strlen(e->d_name);
    n += m > 4 && strcmp(e->d_name + m - 4, ".sst") == 0;
  }
  closedir(d);
  return n;
}

int tu_rmrf(const char *zPath) {
  struct stat st;
  if (lstat(zPath, &st) != 0) return 0;
  return nftw(zPath, rmOne, 16, FTW_DEPTH | FTW_PHYS);
}

static uint64_t rngState = 1;

uint64_t tu_seed(uint64_t seed) {
  if (seed == 0) {
    /* A fixed default keeps `make test` repeatable (a run that lands is a
    ** run that can be replayed); WCS_SEED=random explores new seeds. */
    const char *z = getenv("WCS_SEED");
    if (z == NULL || z[0] == 0) {
      seed = 0x5EED2026u;
    } else if (strcmp(z, "random") == 0) {
      seed = (uint64_t)time(0) * 2654435761u ^ (uint64_t)getpid();
    } else {
      seed = strtoull(z, 0, 0);
    }
    if (seed == 0) seed = 1;
    fprintf(stderr, "seed: WCS_SEED=%llu\n", (unsigned long long)seed);
  }
  rngState = seed;
  return seed;
}

uint64_t tu_rand(void) {
  rngState ^= rngState >> 12;
  rngState ^= rngState << 25;
  rngState ^= rngState >> 27;
  return rngState * 0x2545F4914F6CDD1Dull;
}

uint64_t tu_rand_range(uint64_t n) { return tu_rand() % n; }

void tu_rand_bytes(void *p, size_t n) {
  unsigned char *a = p;
  size_t i;
  for (i = 0; i < n; i++) a[i] = (unsigned char)tu_rand();
}

void *tu_read_file(const char *zPath, size_t *pn) {
  FILE *f = fopen(zPath, "rb");
  long n;
  void *p;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) { fclose(f); return NULL; }
  rewind(f);
  p = malloc(n ? (size_t)n : 1);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) { free(p); p = NULL; }
  fclose(f);
  if (p && pn) *pn = (size_t)n;
  return p;
}

int tu_write_file(const char *zPath, const void *p, size_t n) {
  FILE *f = fopen(zPath, "wb");
  int rc;
  if (f == NULL) return -1;
  rc = fwrite(p, 1, n, f) == n ? 0 : -1;
  if (fclose(f) != 0) rc = -1;
  return rc;
}

uint64_t tu_db_stat(wcs_db *db, const char *zName) {
  char *zJson = NULL, zKey[64];
  const char *z;
  uint64_t v;
  snprintf(zKey, sizeof zKey, "\"%s\":", zName);
  if (wcs_db_stats(db, &zJson) != WCS_OK || (z = strstr(zJson, zKey)) == 0) {
    fprintf(stderr, "no statistic %s in %s\n", zName, zJson ? zJson : "?");
    abort();
  }
  v = strtoull(z + strlen(zKey), NULL, 10);
  wcs_free(zJson);
  return v;
}

void tu_key_of(char *z, const char *zPre, int i) {
  sprintf(z, "%s%06d", zPre, i);
}

void tu_val_of(char *z, const char *zTag, int i) {
  uint64_t h = (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
  sprintf(z, "%s value %d %016llx %016llx", zTag, i, (unsigned long long)h,
          (unsigned long long)(h * 0xbf58476d1ce4e5b9ull));
}

int tu_put_one(wcs_db *db, const char *zPre, int i, const char *zTag) {
  char k[64], v[128];
  tu_key_of(k, zPre, i);
  tu_val_of(v, zTag, i);
  return wcs_db_put(db, k, strlen(k), v, strlen(v));
}

int tu_level_files(wcs_db *db, int i) {
  char *z = NULL, *p, aPat[64];
  int n;
  snprintf(aPat, sizeof aPat, "{\"level\":%d,\"files\":", i);
  if (wcs_db_stats(db, &z) != WCS_OK || (p = strstr(z, aPat)) == NULL) {
    fprintf(stderr, "no level %d in the statistics %s\n", i, z ? z : "?");
    abort();
  }
  n = atoi(p + strlen(aPat));
  wcs_free(z);
  return n;
}

int tu_only_level(wcs_db *db) {
  int i, iLevel = -1;
  for (i = 0; i < 7; i++) {
    if (tu_level_files(db, i) == 0) continue;
    if (iLevel >= 0) return -1;
    iLevel = i;
  }
  return iLevel;
}

const char *tu_get_str(wcs_db *db, const wcs_snapshot *s, const char *k) {
  static char aBuf[1024];
  void *p = NULL;
  size_t n = 0;
  if (wcs_db_get(db, s, k, strlen(k), &p, &n) != WCS_OK) {
    fprintf(stderr, "get %s: %s\n", k, wcs_errmsg(db));
    abort();
  }
  if (p == NULL) return NULL;
  if (n >= sizeof aBuf) {
    fprintf(stderr, "get %s: a value of %zu bytes\n", k, n);
    abort();
  }
  memcpy(aBuf, p, n);
  aBuf[n] = 0;
  wcs_free(p);
  return aBuf;
}

int tu_kill_round(pid_t pid, int fd, long nDelay, uint64_t *pnAcked,
                  int iRound) {
  struct timespec ts;
  uint64_t id;
  int st = 0, bBad = 0;
  ts.tv_sec = nDelay / 1000000;
  ts.tv_nsec = (nDelay % 1000000) * 1000;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  kill(pid, SIGKILL);
  while (!bBad && read(fd, &id, sizeof id) == (ssize_t)sizeof id) {
    if (id != *pnAcked + 1) {
      fprintf(stderr, "round %d: acknowledgements out of order\n", iRound);
      bBad = 1;
    } else {
      *pnAcked = id;
    }
  }
  close(fd);
  waitpid(pid, &st, 0);
  if (!bBad && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)) {
    fprintf(stderr, "round %d: the child ended on its own (status %d)\n",
            iRound, st);
    bBad = 1;
  }
  return bBad;
}

pid_t tu_fork_acked(int *pfd) {
  int aPipe[2];
  pid_t pid;
  if (pipe(aPipe) != 0) {
    perror("pipe");
    return -1;
  }
  pid = fork();
  if (pid < 0) {
    perror("fork");
    close(aPipe[0]);
    close(aPipe[1]);
    return -1;
  }
  close(aPipe[pid == 0 ? 0 : 1]);
  *pfd = aPipe[pid == 0 ? 1 : 0];
  return pid;
}
