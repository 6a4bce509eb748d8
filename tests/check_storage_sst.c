/*
** Tests of sorted files (storage/sst.c): golden bytes of a tiny file,
** round trips of random entries (empty and 64 KiB values, zstd on and off,
** many block and restart shapes) read forward, backward and by seeks and
** compared with a sorted array, metadata and range tombstones, the cache
** path, and bad files: every truncation, a wrong magic, an unknown
** version, and every flipped byte of whole files — always WCS_CORRUPT with
** the file and offset named, never a crash, never a wrong row.
*/
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/block.h"
#include "storage/bloom.h"
#include "storage/env.h"
#include "storage/ikey.h"
#include "storage/sst.h"
#include "testutil.h"

/* What every message about a damaged sorted file ends with: what to do. */
#define SST_ADVICE                                                             \
  " (the file changed after it was written: the disk or another program "    \
  "damaged it; restore the store from a backup)"

/* ck_assert records every passing check (a write per call), which makes
** hot loops slow; these reach Check only when the condition fails. */
#define QUICK_ASSERT(c)                                                        \
  do {                                                                         \
    if (!(c)) ck_assert_msg(0, "Assertion '%s' failed", #c);                   \
  } while (0)
#define QUICK_EQ(a, b)                                                         \
  do {                                                                         \
    unsigned long long qa_ = (unsigned long long)(a);                          \
    unsigned long long qb_ = (unsigned long long)(b);                          \
    if (qa_ != qb_) {                                                          \
      ck_assert_msg(0, "Assertion '%s == %s' failed: %llu != %llu", #a, #b,    \
                    qa_, qb_);                                                 \
    }                                                                          \
  } while (0)

typedef struct Ent {
  uint8_t *pKey; /* internal key */
  size_t nKey;
  uint8_t *pVal;
  size_t nVal;
} Ent;

static int entCmp(const void *a, const void *b) {
  const Ent *x = a, *y = b;
  return wcs_ikey_cmp(x->pKey, x->nKey, y->pKey, y->nKey);
}

static void freeEnts(Ent *a, int n) {
  int i;
  for (i = 0; i < n; i++) {
    free(a[i].pKey);
    free(a[i].pVal);
  }
  free(a);
}

static uint8_t *mkIKey(const char *zU, size_t nU, uint64_t seq, int type,
                       size_t *pn) {
  uint8_t *k = malloc(nU + 8);
  memcpy(k, zU, nU);
  wcs_put64(k + nU, wcs_ikey_pack(seq, type));
  *pn = nU + 8;
  return k;
}

/* The user key of row iRow, column c into z (at least 40 bytes); returns
** its length. With gLongKeys the rows of two groups share a long middle,
** so that index separators and restart keys tie on their first 8 bytes
** after the shared prefix and differ only further on (the engine's keys
** look like this: a long row key before the column). */
static int gLongKeys;
static int userKey(char *z, int iRow, char c) {
  if (gLongKeys) {
    return snprintf(z, 40, "row%c:device#0000:%05d#%c", 'a' + iRow % 2, iRow,
                    c);
  }
  return snprintf(z, 40, "row%05d#%c", iRow, c);
}

/* n random entries with distinct internal keys, sorted: user keys from a
** small space (so versions repeat), values mostly short, some empty, and
** nBig of 64 KiB. */
static Ent *randomEnts(int n, int nBig) {
  Ent *a = calloc((size_t)n, sizeof *a);
  uint64_t seq = 1;
  int i;
  for (i = 0; i < n; i++) {
    char zU[40];
    int nU = userKey(zU, (int)tu_rand_range((uint64_t)n),
                     (char)('a' + tu_rand_range(3)));
    a[i].pKey =
        mkIKey(zU, (size_t)nU, seq++,
               tu_rand_range(8) ? WCS_KT_PUT : WCS_KT_DELETE, &a[i].nKey);
    if (i < nBig) {
      a[i].nVal = 65536;
    } else {
      a[i].nVal = tu_rand_range(5) == 0 ? 0 : tu_rand_range(120);
    }
    a[i].pVal = malloc(a[i].nVal + 1);
    tu_rand_bytes(a[i].pVal, a[i].nVal);
    if (a[i].nVal > 4) memset(a[i].pVal, 'v', a[i].nVal / 2); /* compressible */
  }
  qsort(a, (size_t)n, sizeof *a, entCmp);
  return a;
}

static void putFile(wcs_env *env, const char *zPath, const void *p, size_t n) {
  wcs_file *f;
  QUICK_EQ(env->xOpen(env, zPath, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &f, NULL),
           WCS_OK);
  QUICK_EQ(env->xAppend(f, p, n, NULL), WCS_OK);
  env->xClose(f);
}

static uint8_t *getFile(wcs_env *env, const char *zPath, size_t *pn) {
  wcs_file *f;
  uint64_t n;
  uint8_t *p;
  size_t nRead;
  QUICK_EQ(env->xOpen(env, zPath, WCS_OPEN_READ, &f, NULL), WCS_OK);
  QUICK_EQ(env->xSize(f, &n, NULL), WCS_OK);
  p = malloc(n + 1);
  QUICK_EQ(env->xRead(f, 0, p, n, &nRead, NULL), WCS_OK);
  QUICK_EQ(nRead, n);
  env->xClose(f);
  *pn = n;
  return p;
}

static void buildFile(wcs_env *env, const char *zPath, const Ent *a, int n,
                      const sst_options *pOpt, const sst_rangedel *aDel,
                      int nDel, sst_meta *pMeta) {
  sst_builder *b;
  char *zErr = NULL;
  int i;
  QUICK_EQ(sst_builder_new(env, zPath, 7, pOpt, &b, &zErr), WCS_OK);
  for (i = 0; i < n; i++) {
    QUICK_EQ(
        sst_builder_add(b, a[i].pKey, a[i].nKey, a[i].pVal, a[i].nVal, &zErr),
        WCS_OK);
  }
  for (i = 0; i < nDel; i++) {
    QUICK_EQ(sst_builder_add_rangedel(b, &aDel[i], &zErr), WCS_OK);
  }
  QUICK_EQ(sst_builder_entries(b), (uint64_t)n);
  QUICK_EQ(sst_builder_finish(b, pMeta, &zErr), WCS_OK);
  QUICK_ASSERT((zErr) == NULL);
}

static int gSuffix; /* opts() asks for data blocks with suffixes */

/* Each test starts with the plain block format, also when the tests run
** in one process (CK_FORK=no, as under valgrind): a loop test leaves
** gSuffix set. */
static void resetSuffix(void) {
  gSuffix = 0;
}

static sst_options opts(int nBlock, int nRestart, int iZstd, int nBloom) {
  sst_options o;
  memset(&o, 0, sizeof o);
  o.bSuffix = gSuffix;
  /* with suffixes, the store's format: seek points too (a few per
  ** interval, so that seeks and steps back start from them) */
  o.nSeekEvery = gSuffix && nRestart >= 3 ? nRestart / 3 : 0;
  o.nBlockSize = nBlock;
  o.nRestart = nRestart;
  o.iZstdLevel = iZstd;
  o.nBloomBits = nBloom;
  return o;
}

static void assertAt(wcs_iiter *it, const Ent *a, int n, int i) {
  const uint8_t *p;
  size_t np;
  if (i < 0 || i >= n) {
    QUICK_ASSERT(!it->pMethods->xValid(it));
    QUICK_EQ(it->pMethods->xStatus(it, NULL), WCS_OK);
    return;
  }
  QUICK_ASSERT(it->pMethods->xValid(it));
  p = it->pMethods->xKey(it, &np);
  QUICK_EQ(np, a[i].nKey);
  QUICK_ASSERT(memcmp(p, a[i].pKey, np) == 0);
  p = it->pMethods->xValue(it, &np);
  QUICK_EQ(np, a[i].nVal);
  QUICK_ASSERT(np == 0 || memcmp(p, a[i].pVal, np) == 0);
}

static int modelSeek(const Ent *a, int n, const uint8_t *p, size_t np) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (wcs_ikey_cmp(a[mid].pKey, a[mid].nKey, p, np) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Every way of reading the file agrees with the array. */
static void checkReader(sst_reader *r, const Ent *a, int n, int nSeek) {
  wcs_iiter *it;
  const wcs_iiter_methods *m;
  int i, k;
  QUICK_EQ(sst_reader_iter(r, 1, &it, NULL), WCS_OK);
  m = it->pMethods;
  QUICK_ASSERT(!m->xValid(it));
  QUICK_EQ(m->xFirst(it), WCS_OK);
  for (i = 0; i < n; i++) {
    assertAt(it, a, n, i);
    QUICK_EQ(m->xNext(it), WCS_OK);
  }
  assertAt(it, a, n, n);
  QUICK_EQ(m->xLast(it), WCS_OK);
  for (i = n - 1; i >= 0; i--) {
    assertAt(it, a, n, i);
    QUICK_EQ(m->xPrev(it), WCS_OK);
  }
  assertAt(it, a, n, -1);
  for (k = 0; k < nSeek; k++) {
    char zU[40];
    size_t nT;
    int nU = userKey(zU, (int)tu_rand_range((uint64_t)n + 2),
                     (char)('a' + tu_rand_range(4)));
    uint8_t *t;
    int j;
    if (n > 0 && k % 3 == 0) {
      /* exactly an existing key */
      j = (int)tu_rand_range((uint64_t)n);
      QUICK_EQ(m->xSeek(it, a[j].pKey, a[j].nKey), WCS_OK);
      assertAt(it, a, n, j);
      QUICK_EQ(m->xSeekForPrev(it, a[j].pKey, a[j].nKey), WCS_OK);
      assertAt(it, a, n, j);
      continue;
    }
    t = mkIKey(zU, (size_t)nU, tu_rand_range((uint64_t)n + 2), WCS_KT_PUT, &nT);
    j = modelSeek(a, n, t, nT);
    QUICK_EQ(m->xSeek(it, t, nT), WCS_OK);
    assertAt(it, a, n, j);
    if (j < n && tu_rand_range(2)) {
      QUICK_EQ(m->xPrev(it), WCS_OK);
      assertAt(it, a, n, j - 1);
    }
    QUICK_EQ(m->xSeekForPrev(it, t, nT), WCS_OK);
    if (j < n && wcs_ikey_cmp(a[j].pKey, a[j].nKey, t, nT) == 0) j++;
    assertAt(it, a, n, j - 1);
    if (j - 1 >= 0 && tu_rand_range(2)) {
      QUICK_EQ(m->xNext(it), WCS_OK);
      assertAt(it, a, n, j);
    }
    free(t);
  }
  m->xClose(it);
}

START_TEST(test_sst_round_trips_random_entries) {
  static const int aShape[][4] = {
      /* block size, restart interval, zstd level, bloom bits */
      {4096, 16, 0, 10},
      {4096, 16, 3, 10},
      {256, 1, 0, 0},
      {256, 3, 1, 5},
      {65536, 16, 3, 10},
      {64, 2, 0, 10},
      /* the same with long keys (gLongKeys) */
      {4096, 16, 3, 10},
      {256, 3, 0, 10},
  };
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  size_t s;
  gSuffix = _i; /* both data block formats */
  tu_seed(0);
  QUICK_EQ(wcs_cache_new(1 << 20, &cache), WCS_OK);
  for (s = 0; s < sizeof aShape / sizeof aShape[0]; s++) {
    int n = s == 5 ? 300 : 2500;
    Ent *a;
    gLongKeys = s >= 6;
    a = randomEnts(n, 0);
    sst_options o =
        opts(aShape[s][0], aShape[s][1], aShape[s][2], aShape[s][3]);
    sst_meta meta;
    sst_reader *r;
    uint64_t nE, nRaw, nB;
    buildFile(env, "000007.sst", a, n, &o, NULL, 0, &meta);
    QUICK_EQ(meta.nEntries, (uint64_t)n);
    QUICK_EQ(
        sst_reader_open(env, "000007.sst", 7 + s, meta.nBytes, cache, &r, NULL),
        WCS_OK);
    sst_reader_props(r, &nE, &nRaw, &nB);
    QUICK_EQ(nE, (uint64_t)n);
    QUICK_EQ(nRaw, meta.nRawBytes);
    QUICK_EQ(nB, meta.nBytes);
    checkReader(r, a, n, 600);
    sst_reader_close(r);
    sst_meta_clear(&meta);
    freeEnts(a, n);
  }
  gLongKeys = 0;
  wcs_cache_free(cache);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_round_trips_empty_and_64k_values) {
  wcs_env *env = wcs_env_mem_new();
  int lvl;
  gSuffix = _i; /* both data block formats */
  tu_seed(0);
  for (lvl = 0; lvl <= 3; lvl += 3) {
    int n = 400;
    Ent *a = randomEnts(n, 0);
    sst_options o = opts(4096, 16, lvl, 10);
    sst_meta meta;
    sst_reader *r;
    int i;
    /* Every 25th value is 64 KiB, every 3rd is empty. */
    for (i = 0; i < n; i++) {
      size_t nv = i % 25 == 0 ? 65536 : (i % 3 == 0 ? 0 : a[i].nVal);
      a[i].pVal = realloc(a[i].pVal, nv + 1);
      a[i].nVal = nv;
      tu_rand_bytes(a[i].pVal, nv);
    }
    buildFile(env, "big.sst", a, n, &o, NULL, 0, &meta);
    QUICK_EQ(sst_reader_open(env, "big.sst", 1, 0, NULL, &r, NULL), WCS_OK);
    checkReader(r, a, n, 200);
    sst_reader_close(r);
    sst_meta_clear(&meta);
    freeEnts(a, n);
  }
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_versions_of_one_key_straddle_blocks) {
  /* 600 versions of one user key, tiny blocks: seeks at every snapshot
  ** find the newest version <= the snapshot even across block edges. */
  wcs_env *env = wcs_env_mem_new();
  int n = 600, i;
  Ent *a = calloc((size_t)n + 2, sizeof *a);
  sst_options o = opts(128, 4, 0, 10);
  sst_meta meta;
  sst_reader *r;
  wcs_iiter *it;
  o.bSuffix = _i; /* both data block formats */
  a[0].pKey = mkIKey("a", 1, 5, WCS_KT_PUT, &a[0].nKey);
  for (i = 1; i <= n; i++) {
    a[i].pKey =
        mkIKey("k", 1, (uint64_t)(2 * (n - i) + 2), WCS_KT_PUT, &a[i].nKey);
  }
  a[n + 1].pKey = mkIKey("z", 1, 3, WCS_KT_PUT, &a[n + 1].nKey);
  for (i = 0; i < n + 2; i++) {
    a[i].pVal = malloc(8);
    a[i].nVal = 8;
    wcs_put64(a[i].pVal, (uint64_t)i);
  }
  buildFile(env, "v.sst", a, n + 2, &o, NULL, 0, &meta);
  QUICK_EQ(sst_reader_open(env, "v.sst", 1, meta.nBytes, NULL, &r, NULL),
           WCS_OK);
  QUICK_EQ(sst_reader_iter(r, 0, &it, NULL), WCS_OK);
  for (i = 0; i <= 2 * n + 2; i++) {
    size_t nT;
    uint8_t *t = mkIKey("k", 1, (uint64_t)i, WCS_KT_PUT, &nT);
    int j = modelSeek(a, n + 2, t, nT);
    QUICK_EQ(it->pMethods->xSeek(it, t, nT), WCS_OK);
    assertAt(it, a, n + 2, j);
    QUICK_EQ(it->pMethods->xSeekForPrev(it, t, nT), WCS_OK);
    assertAt(it, a, n + 2,
             j < n + 2 && wcs_ikey_cmp(a[j].pKey, a[j].nKey, t, nT) == 0
                 ? j
                 : j - 1);
    free(t);
  }
  checkReader(r, a, n + 2, 0);
  it->pMethods->xClose(it);
  sst_reader_close(r);
  sst_meta_clear(&meta);
  freeEnts(a, n + 2);
  env->xDestroy(env);
}
END_TEST

/* The tiny file of doc/format.md's worked example. */
static void buildGolden(wcs_env *env, const char *zPath, sst_meta *pMeta) {
  Ent a[2];
  sst_rangedel d;
  sst_options o = opts(4096, 16, 0, 10);
  o.bSuffix = 0; /* version 1: the bytes below */
  a[0].pKey = mkIKey("a", 1, 1, WCS_KT_PUT, &a[0].nKey);
  a[0].pVal = (uint8_t *)"x";
  a[0].nVal = 1;
  a[1].pKey = mkIKey("b", 1, 2, WCS_KT_DELETE, &a[1].nKey);
  a[1].pVal = NULL;
  a[1].nVal = 0;
  d.pStart = (const uint8_t *)"c";
  d.nStart = 1;
  d.pEnd = (const uint8_t *)"d";
  d.nEnd = 1;
  d.seq = 3;
  buildFile(env, zPath, a, 2, &o, &d, 1, pMeta);
  free(a[0].pKey);
  free(a[1].pKey);
}

static const uint8_t aGoldenFile[] = {
    /* 0: data block 0: two entries, restart array */
    0x00,
    0x09,
    0x01,
    0x61,
    0x01,
    0x01,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x78,
    0x00,
    0x09,
    0x00,
    0x62,
    0x00,
    0x02,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    0x00,
    0x00,
    /* 33: trailer: raw, 33 bytes, CRC */
    0x00,
    0x21,
    0x00,
    0x00,
    0x00,
    0x15,
    0x97,
    0x29,
    0xf6,
    /* 42: bloom block: one 64-byte line, nLines=1, k=7, kind 0, hash 1 */
    0x00,
    0x00,
    0x00,
    0x00,
    0x10,
    0x00,
    0x00,
    0x60,
    0xad,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x0a,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x02,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x40,
    0x01,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x40,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    0x00,
    0x00,
    0x07,
    0x00,
    0x01,
    0x00,
    /* 114: trailer */
    0x00,
    0x48,
    0x00,
    0x00,
    0x00,
    0x1f,
    0xa3,
    0x40,
    0xc2,
    /* 123: range tombstones: 1 x [c, d) at seq 3 */
    0x01,
    0x01,
    0x63,
    0x02,
    0x64,
    0x03,
    /* 129: trailer */
    0x00,
    0x06,
    0x00,
    0x00,
    0x00,
    0xda,
    0x92,
    0x6f,
    0x37,
    /* 138: properties */
    0x01,
    0x01,
    0x02,
    0x02,
    0x01,
    0x13,
    0x03,
    0x01,
    0x01,
    0x04,
    0x01,
    0x01,
    0x05,
    0x01,
    0x03,
    0x06,
    0x01,
    0x01,
    0x07,
    0x09,
    0x61,
    0x01,
    0x01,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x08,
    0x09,
    0x64,
    0x01,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0x09,
    0x01,
    0x00,
    /* 181: trailer */
    0x00,
    0x2b,
    0x00,
    0x00,
    0x00,
    0x52,
    0xf6,
    0xfc,
    0xbc,
    /* 190: index block: separator "b" -> (0, 33) */
    0x00,
    0x01,
    0x02,
    0x62,
    0x00,
    0x21,
    0x00,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    0x00,
    0x00,
    /* 204: trailer */
    0x00,
    0x0e,
    0x00,
    0x00,
    0x00,
    0xcc,
    0x37,
    0x72,
    0x39,
    /* 213: footer */
    0x2a,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x48,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x7b,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x06,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x8a,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x2b,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0xbe,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x0e,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    0x00,
    0x00,
    0x75,
    0x5e,
    0x26,
    0xa8,
    0x89,
    0x57,
    0x53,
    0x54,
    0x0d,
    0x0a,
    0x1a,
    0x0a,
};

START_TEST(test_sst_golden_file_bytes) {
  wcs_env *env = wcs_env_mem_new();
  sst_meta meta;
  size_t n, i;
  uint8_t *p;
  buildGolden(env, "000001.sst", &meta);
  p = getFile(env, "000001.sst", &n);
  if (getenv("WCS_PRINT_GOLDEN")) {
    for (i = 0; i < n; i++) {
      printf("0x%02x,%s", p[i], i % 12 == 11 ? "\n" : " ");
    }
    printf("\n");
  }
  QUICK_EQ(n, sizeof aGoldenFile);
  QUICK_ASSERT(memcmp(p, aGoldenFile, n) == 0);
  QUICK_EQ(meta.nBytes, n);
  free(p);
  sst_meta_clear(&meta);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_meta_reports_bounds_seqs_and_tombstones) {
  wcs_env *env = wcs_env_mem_new();
  sst_meta meta, back;
  sst_reader *r;
  const sst_rangedel *aDel;
  int nDel;
  size_t nK;
  uint8_t *k;
  Ent a[2];
  sst_rangedel d[3];
  sst_options o = opts(4096, 16, 3, 10);

  buildGolden(env, "g.sst", &meta);
  QUICK_EQ(meta.iFile, 7);
  QUICK_EQ(meta.nEntries, 2);
  QUICK_EQ(meta.nRangeDel, 1);
  QUICK_EQ(meta.minSeq, 1);
  QUICK_EQ(meta.maxSeq, 3);
  QUICK_EQ(meta.bUnbounded, 0);
  k = mkIKey("a", 1, 1, WCS_KT_PUT, &nK);
  QUICK_ASSERT(meta.nSmallest == nK && memcmp(meta.pSmallest, k, nK) == 0);
  free(k);
  /* The tombstone [c, d) extends the largest key to d at the top seq. */
  k = mkIKey("d", 1, WCS_SEQ_MAX, WCS_KT_PUT, &nK);
  QUICK_ASSERT(meta.nLargest == nK && memcmp(meta.pLargest, k, nK) == 0);
  free(k);
  QUICK_EQ(sst_reader_open(env, "g.sst", 7, 0, NULL, &r, NULL), WCS_OK);
  QUICK_EQ(sst_reader_meta(r, &back), WCS_OK);
  QUICK_EQ(back.nBytes, meta.nBytes);
  QUICK_EQ(back.nEntries, meta.nEntries);
  QUICK_EQ(back.nRawBytes, meta.nRawBytes);
  QUICK_EQ(back.minSeq, meta.minSeq);
  QUICK_EQ(back.maxSeq, meta.maxSeq);
  QUICK_ASSERT(back.nSmallest == meta.nSmallest &&
               memcmp(back.pSmallest, meta.pSmallest, meta.nSmallest) == 0);
  QUICK_ASSERT(back.nLargest == meta.nLargest &&
               memcmp(back.pLargest, meta.pLargest, meta.nLargest) == 0);
  sst_meta_clear(&back);
  sst_reader_close(r);
  sst_meta_clear(&meta);

  /* Tombstones in any order come back sorted; one unbounded; one starts
  ** before every key and so becomes the smallest bound. */
  a[0].pKey = mkIKey("m", 1, 10, WCS_KT_PUT, &a[0].nKey);
  a[0].pVal = (uint8_t *)"1";
  a[0].nVal = 1;
  a[1].pKey = mkIKey("n", 1, 11, WCS_KT_PUT, &a[1].nKey);
  a[1].pVal = (uint8_t *)"2";
  a[1].nVal = 1;
  d[0].pStart = (const uint8_t *)"x";
  d[0].nStart = 1;
  d[0].pEnd = NULL;
  d[0].nEnd = 0;
  d[0].seq = 20;
  d[1].pStart = (const uint8_t *)"b";
  d[1].nStart = 1;
  d[1].pEnd = (const uint8_t *)"c";
  d[1].nEnd = 1;
  d[1].seq = 4;
  d[2].pStart = (const uint8_t *)"b";
  d[2].nStart = 1;
  d[2].pEnd = (const uint8_t *)"";
  d[2].nEnd = 0;
  d[2].seq = 9;
  buildFile(env, "t.sst", a, 2, &o, d, 3, &meta);
  QUICK_EQ(meta.bUnbounded, 1);
  QUICK_EQ(meta.minSeq, 4);
  QUICK_EQ(meta.maxSeq, 20);
  k = mkIKey("b", 1, WCS_SEQ_MAX, WCS_KT_PUT, &nK);
  QUICK_ASSERT(meta.nSmallest == nK && memcmp(meta.pSmallest, k, nK) == 0);
  free(k);
  k = mkIKey("x", 1, WCS_SEQ_MAX, WCS_KT_PUT, &nK);
  QUICK_ASSERT(meta.nLargest == nK && memcmp(meta.pLargest, k, nK) == 0);
  free(k);
  QUICK_EQ(sst_reader_open(env, "t.sst", 8, meta.nBytes, NULL, &r, NULL),
           WCS_OK);
  sst_reader_rangedels(r, &aDel, &nDel);
  QUICK_EQ(nDel, 3);
  QUICK_ASSERT(aDel[0].seq == 9 && aDel[0].pEnd != NULL && aDel[0].nEnd == 0);
  QUICK_ASSERT(aDel[1].seq == 4 && aDel[1].nEnd == 1 && aDel[1].pEnd[0] == 'c');
  QUICK_ASSERT(aDel[2].seq == 20 && aDel[2].pEnd == NULL);
  QUICK_ASSERT(aDel[2].nStart == 1 && aDel[2].pStart[0] == 'x');
  sst_reader_close(r);
  sst_meta_clear(&meta);
  free(a[0].pKey);
  free(a[1].pKey);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_empty_file_has_no_entries) {
  wcs_env *env = wcs_env_mem_new();
  sst_options o = opts(4096, 16, 3, 10);
  sst_meta meta;
  sst_reader *r;
  wcs_iiter *it;
  uint8_t t[9] = "k";
  buildFile(env, "e.sst", NULL, 0, &o, NULL, 0, &meta);
  QUICK_EQ(meta.nEntries, 0);
  QUICK_EQ(meta.nSmallest, 0);
  QUICK_EQ(sst_reader_open(env, "e.sst", 1, meta.nBytes, NULL, &r, NULL),
           WCS_OK);
  QUICK_EQ(sst_reader_may_contain(r, "k", 1), 0);
  QUICK_EQ(sst_reader_iter(r, 1, &it, NULL), WCS_OK);
  QUICK_EQ(it->pMethods->xFirst(it), WCS_OK);
  QUICK_ASSERT(!it->pMethods->xValid(it));
  QUICK_EQ(it->pMethods->xLast(it), WCS_OK);
  QUICK_ASSERT(!it->pMethods->xValid(it));
  QUICK_EQ(it->pMethods->xSeekForPrev(it, t, 9), WCS_OK);
  QUICK_ASSERT(!it->pMethods->xValid(it));
  QUICK_EQ(sst_reader_approx_offset(r, t, 1), 0);
  it->pMethods->xClose(it);
  sst_reader_close(r);
  sst_meta_clear(&meta);
  env->xDestroy(env);
}
END_TEST

static int collectIndex(void *pCtx, const uint8_t *pU, size_t nU,
                        uint64_t iOff) {
  uint64_t *a = pCtx;
  (void)pU;
  (void)nU;
  QUICK_ASSERT(a[0] == 0 || iOff > a[a[0]]);
  a[++a[0]] = iOff;
  return a[0] >= 1000;
}

START_TEST(test_sst_index_gives_offsets_without_reading_blocks) {
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  int n = 3000, i;
  Ent *a;
  sst_options o = opts(1024, 16, 0, 10);
  sst_meta meta;
  sst_reader *r;
  uint64_t aOff[1001], nHit, nMiss, iPrev = 0;
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, "i.sst", a, n, &o, NULL, 0, &meta);
  QUICK_EQ(wcs_cache_new(1 << 20, &cache), WCS_OK);
  QUICK_EQ(sst_reader_open(env, "i.sst", 1, meta.nBytes, cache, &r, NULL),
           WCS_OK);
  aOff[0] = 0;
  QUICK_EQ(sst_reader_index_keys(r, aOff, collectIndex), 0);
  QUICK_ASSERT((aOff[0]) > (50));
  QUICK_EQ(aOff[1], 0);
  for (i = 0; i < n; i += 7) {
    uint64_t iOff =
        sst_reader_approx_offset(r, a[i].pKey, a[i].nKey - WCS_IKEY_TRAILER);
    QUICK_ASSERT((iOff) >= (iPrev));
    QUICK_ASSERT((iOff) < (meta.nBytes));
    iPrev = iOff;
  }
  QUICK_ASSERT((sst_reader_approx_offset(r, (const uint8_t *)"zzz", 3)) <=
               (meta.nBytes));
  QUICK_ASSERT((sst_reader_approx_offset(r, (const uint8_t *)"zzz", 3)) >=
               (iPrev));
  wcs_cache_stats(cache, NULL, &nHit, &nMiss);
  QUICK_EQ(nHit + nMiss, 0);
  sst_reader_close(r);
  wcs_cache_free(cache);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_second_scan_is_served_by_cache) {
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  int n = 2000;
  Ent *a;
  sst_options o = opts(2048, 16, 3, 10);
  sst_meta meta;
  sst_reader *r;
  wcs_iiter *it;
  uint64_t nBytes, nBytes0, nHit, nMiss, nMiss1;
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, "c.sst", a, n, &o, NULL, 0, &meta);
  QUICK_EQ(wcs_cache_new(8 << 20, &cache), WCS_OK);
  QUICK_EQ(sst_reader_open(env, "c.sst", 3, meta.nBytes, cache, &r, NULL),
           WCS_OK);
  /* Opening caches the index and filter, nothing else. */
  wcs_cache_stats(cache, &nBytes0, NULL, NULL);
  QUICK_ASSERT(nBytes0 > 0);
  /* A scan that does not fill the cache adds no data block to it. */
  QUICK_EQ(sst_reader_iter(r, 0, &it, NULL), WCS_OK);
  for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
       it->pMethods->xNext(it)) {
  }
  it->pMethods->xClose(it);
  wcs_cache_stats(cache, &nBytes, &nHit, &nMiss1);
  QUICK_EQ(nBytes, nBytes0);
  QUICK_EQ(nHit, 0);
  checkReader(r, a, n, 0);
  wcs_cache_stats(cache, &nBytes, &nHit, &nMiss);
  QUICK_ASSERT((nBytes) > (0));
  QUICK_ASSERT((nHit) > (0));
  /* Two full passes (forward, backward): the second one all hits. */
  QUICK_EQ(nMiss - nMiss1, nMiss1);
  wcs_cache_evict_file(cache, 3);
  wcs_cache_stats(cache, &nBytes, NULL, NULL);
  QUICK_EQ(nBytes, 0);
  sst_reader_close(r);
  wcs_cache_free(cache);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

static int getNop(void *pCtx, const uint8_t *pKey, size_t nKey,
                  const uint8_t *pVal, size_t nVal);

/* Point gets of the entries at each eighth of a. */
static void getEighths(sst_reader *r, const Ent *a, int n) {
  int i, nGot = 0;
  for (i = 0; i < 8; i++) {
    const Ent *e = &a[i * (n / 8)];
    int bFound = 0;
    QUICK_EQ(sst_reader_get(r, e->pKey, e->nKey, &bFound, &nGot, getNop, NULL),
             WCS_OK);
  }
}

/* A scan much larger than the cache leaves the blocks point reads keep
** using where they are: past SST_SCAN_RUN neighbouring blocks it fills
** the cache only where there is room, so it evicts nothing. */
START_TEST(test_sst_long_scan_keeps_hot_blocks) {
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  int n = 6000, i, nSeen = 0;
  Ent *a;
  sst_options o = opts(1024, 16, 3, 10);
  sst_meta meta;
  sst_reader *r;
  wcs_iiter *it;
  uint64_t nBytes, nMiss0, nMiss1, nMiss2, nRaw = 0;
  const int nBudget = 128 * 1024;
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, "h.sst", a, n, &o, NULL, 0, &meta);
  for (i = 0; i < n; i++)
    nRaw += a[i].nKey + a[i].nVal;
  ck_assert_uint_gt(nRaw, 3 * (uint64_t)nBudget); /* decoded blocks */
  QUICK_EQ(wcs_cache_new((size_t)nBudget, &cache), WCS_OK);
  QUICK_EQ(sst_reader_open(env, "h.sst", 5, meta.nBytes, cache, &r, NULL),
           WCS_OK);
  /* Eight hot blocks, read by point gets. */
  getEighths(r, a, n);
  wcs_cache_stats(cache, NULL, NULL, &nMiss0);
  ck_assert_uint_eq(nMiss0, 8);
  /* A full scan through a cache-filling iterator. */
  QUICK_EQ(sst_reader_iter(r, 1, &it, NULL), WCS_OK);
  for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
       it->pMethods->xNext(it)) {
    assertAt(it, a, n, nSeen++);
  }
  QUICK_EQ(nSeen, n);
  it->pMethods->xClose(it);
  wcs_cache_stats(cache, &nBytes, NULL, &nMiss1);
  ck_assert_uint_le(nBytes, (uint64_t)nBudget);
  /* The hot blocks are all still there. */
  getEighths(r, a, n);
  wcs_cache_stats(cache, NULL, NULL, &nMiss2);
  ck_assert_uint_eq(nMiss2, nMiss1);
  sst_reader_close(r);
  wcs_cache_free(cache);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_builder_rejects_out_of_order_keys) {
  wcs_env *env = wcs_env_mem_new();
  sst_options o = opts(4096, 16, 0, 10);
  sst_builder *b;
  char *zErr = NULL;
  size_t n1, n2;
  uint8_t *k1 = mkIKey("b", 1, 5, WCS_KT_PUT, &n1);
  uint8_t *k2 = mkIKey("a", 1, 9, WCS_KT_PUT, &n2);
  int bExists = 1;
  QUICK_EQ(sst_builder_new(env, "o.sst", 1, &o, &b, &zErr), WCS_OK);
  QUICK_EQ(sst_builder_add(b, k1, n1, NULL, 0, &zErr), WCS_OK);
  QUICK_EQ(sst_builder_add(b, k2, n2, NULL, 0, &zErr), WCS_MISUSE);
  QUICK_ASSERT((zErr) != NULL);
  QUICK_ASSERT((strstr(zErr, "o.sst")) != NULL);
  free(zErr);
  zErr = NULL;
  /* The same key twice is out of order too. */
  QUICK_EQ(sst_builder_add(b, k1, n1, NULL, 0, &zErr), WCS_MISUSE);
  free(zErr);
  sst_builder_abandon(b);
  env->xExists(env, "o.sst", &bExists);
  QUICK_EQ(bExists, 0);
  free(k1);
  free(k2);
  env->xDestroy(env);
}
END_TEST

/* Footer handle i (0 bloom, 1 tombstones, 2 properties, 3 index) of the
** file bytes p[0..n). */
static uint64_t footOff(const uint8_t *p, size_t n, int i) {
  return wcs_get64(p + n - WCS_SST_FOOTER + 16 * i);
}

/* The builder accepts a key exactly when wcs_ikey_cmp puts it after the
** last key accepted: a chain of keys, each the last one changed a little
** (a byte, the length, the trailer), from a small alphabet with 00 bytes
** so that user keys are often prefixes of one another or equal. */
START_TEST(test_sst_builder_order_check_agrees_with_ikey_cmp) {
  static const uint8_t aAlpha[] = {0x00, 0x01, 0xff};
  wcs_env *env = wcs_env_mem_new();
  sst_options o = opts(256, 4, 0, 10);
  sst_builder *b = NULL;
  sst_meta meta;
  char *zErr = NULL;
  uint8_t aLast[64], aKey[64];
  size_t nLast = 0, nU;
  int k, nAccept = 0, nReject = 0;
  tu_seed(0);
  for (k = 0; k < 20000; k++) {
    int rc, bAfter;
    if (k % 400 == 0) { /* a new file: keys drift to where few follow */
      if (b) QUICK_EQ(sst_builder_finish(b, &meta, &zErr), WCS_OK);
      if (b) sst_meta_clear(&meta);
      QUICK_EQ(sst_builder_new(env, "o.sst", 1, &o, &b, &zErr), WCS_OK);
      nLast = 0;
    }
    nU = nLast ? nLast - WCS_IKEY_TRAILER : 0;
    memcpy(aKey, aLast, nU);
    switch (nLast ? tu_rand_range(5) : 1) {
    case 0: /* another byte somewhere, and maybe nothing after it */
      if (nU) {
        size_t i = tu_rand_range(nU);
        aKey[i] = aAlpha[tu_rand_range(3)];
        if (tu_rand_range(2)) nU = i + 1;
      }
      break;
    case 1: /* longer */
      if (nU < 40) aKey[nU++] = aAlpha[tu_rand_range(3)];
      break;
    case 2: /* shorter */
      nU -= tu_rand_range(nU + 1) / 2;
      break;
    default: /* the same user key */
      break;
    }
    wcs_put64(aKey + nU, wcs_ikey_pack(1 + tu_rand_range(300), WCS_KT_PUT));
    bAfter = nLast == 0 || wcs_ikey_cmp(aKey, nU + 8, aLast, nLast) > 0;
    rc = sst_builder_add(b, aKey, nU + 8, aKey, nU, &zErr);
    free(zErr);
    zErr = NULL;
    QUICK_EQ(rc, bAfter ? WCS_OK : WCS_MISUSE);
    if (rc == WCS_OK) {
      memcpy(aLast, aKey, nU + 8);
      nLast = nU + 8;
      nAccept++;
    } else {
      nReject++;
    }
  }
  QUICK_ASSERT(nAccept > 2000 && nReject > 2000);
  QUICK_EQ(sst_builder_finish(b, &meta, &zErr), WCS_OK);
  sst_meta_clear(&meta);
  env->xDestroy(env);
}
END_TEST

/* For the builder test below: the bytes up to a key's first '#' are its
** prefix; keys starting with 'z' or without a '#' have none. */
static long nHashPrefixCalls; /* calls of hashPrefix, for the builder's */

static int hashPrefix(const void *pKey, int nKey) {
  const uint8_t *p = pKey;
  int i;
  nHashPrefixCalls++;
  if (nKey > 0 && p[0] == 'z') return -1;
  for (i = 0; i < nKey; i++) {
    if (p[i] == '#') return i + 1;
  }
  return -1;
}

/*
** The builder finds each key's common prefix with the last key once and
** derives from it the data block's shared prefix, the index separator, and
** whether the filter already has the key or its prefix. Check every part
** of a file against what that information was computed from: each data
** block is rebuilt from its entries with block_builder_add and must come
** out the same, each separator is recomputed byte by byte from its
** neighbours, and the filter is rebuilt from the user keys or prefixes,
** hashed where they change. Keys of 0 to 20 bytes from {00, '#', 'a',
** 'z'} with several versions each; _i: suffixes, prefix filter. The
** prefix function is called only for keys that do not begin with the
** prefix of the key before (it is prefix-closed, wcs.h).
*/
START_TEST(test_sst_builder_parts_agree_with_models) {
  static const uint8_t aAlpha[] = {0x00, '#', 'a', 'z'};
  int bSuffix = _i & 1, bPrefix = (_i >> 1) & 1;
  wcs_env *env = wcs_env_mem_new();
  int n = 3000, i, nBlk = 0, iEnt = 0, bHave = 0;
  Ent *a = calloc((size_t)n, sizeof *a);
  sst_options o;
  sst_meta meta;
  uint8_t *pFile;
  size_t nFile, nIdx, nBloom;
  uint64_t iIdx, iBloom;
  block_iter ix, it;
  wcs_buf last = {0}, sep = {0}, bloomBytes = {0};
  bloom_builder bb;
  tu_seed(0);
  for (i = 0; i < n; i++) {
    uint8_t zU[24];
    size_t nU = tu_rand_range(4) == 0 ? tu_rand_range(4) : tu_rand_range(21);
    size_t k;
    if (i > 0 && tu_rand_range(3) == 0) { /* another version of a key */
      nU = a[i - 1].nKey - 8;
      memcpy(zU, a[i - 1].pKey, nU);
    } else {
      for (k = 0; k < nU; k++) {
        zU[k] = aAlpha[tu_rand_range(4)];
      }
    }
    a[i].pKey =
        mkIKey((const char *)zU, nU, (uint64_t)i + 1,
               tu_rand_range(4) ? WCS_KT_PUT : WCS_KT_DELETE, &a[i].nKey);
    a[i].nVal = tu_rand_range(8) == 0 ? 130 : tu_rand_range(12);
    a[i].pVal = malloc(a[i].nVal + 1);
    tu_rand_bytes(a[i].pVal, a[i].nVal);
  }
  qsort(a, (size_t)n, sizeof *a, entCmp);
  gSuffix = bSuffix;
  o = opts(256, 1 + _i, 0, 10);
  gSuffix = 0;
  if (bPrefix) o.xBloomPrefix = hashPrefix;
  nHashPrefixCalls = 0;
  buildFile(env, "m.sst", a, n, &o, NULL, 0, &meta);
  pFile = getFile(env, "m.sst", &nFile);
  if (bPrefix) {
    long nBuilt = nHashPrefixCalls, nWant = 0, nSkip = 0;
    int nPrev = -1;
    for (i = 0; i < n; i++) {
      const uint8_t *pU = a[i].pKey;
      int nU = (int)a[i].nKey - 8;
      if (i > 0 && nPrev > 0 && nU >= nPrev &&
          memcmp(a[i - 1].pKey, pU, (size_t)nPrev) == 0) {
        nSkip++; /* the same prefix as the key before */
      } else {
        nWant++;
        nPrev = hashPrefix(pU, nU);
      }
    }
    QUICK_EQ(nBuilt, nWant);
    QUICK_ASSERT(nSkip > n / 10);
  }

  /* the data blocks, through the index */
  iIdx = footOff(pFile, nFile, 3);
  nIdx = (size_t)wcs_get64(pFile + nFile - WCS_SST_FOOTER + 16 * 3 + 8);
  QUICK_EQ(pFile[iIdx + nIdx], WCS_BLOCK_RAW);
  memset(&ix, 0, sizeof ix);
  memset(&it, 0, sizeof it);
  QUICK_EQ(block_iter_init(&ix, pFile + iIdx, nIdx, 0), WCS_OK);
  QUICK_EQ(block_iter_first(&ix), WCS_OK);
  for (; block_iter_valid(&ix); nBlk++) {
    uint64_t iOff, nSize;
    const uint8_t *pv = ix.pVal, *pvEnd = ix.pVal + ix.nVal;
    block_builder bm;
    const uint8_t *pm;
    size_t nm;
    int iFirst = iEnt;
    pv += wcs_get_varint(pv, pvEnd, &iOff);
    pv += wcs_get_varint(pv, pvEnd, &nSize);
    QUICK_EQ(pFile[iOff + nSize], WCS_BLOCK_RAW);
    block_builder_init(&bm, o.nRestart);
    bm.bSuffix = bSuffix;
    bm.nSeekEvery = o.nSeekEvery;
    QUICK_EQ(block_iter_init(&it, pFile + iOff, (size_t)nSize, 1), WCS_OK);
    QUICK_EQ(block_iter_first(&it), WCS_OK);
    for (; block_iter_valid(&it); iEnt++) {
      QUICK_ASSERT(iEnt < n);
      QUICK_ASSERT(it.nKey == a[iEnt].nKey &&
                   memcmp(it.pKey, a[iEnt].pKey, it.nKey) == 0);
      QUICK_EQ(block_builder_add(&bm, it.pKey, it.nKey, it.pVal, it.nVal),
               WCS_OK);
      QUICK_EQ(block_iter_next(&it), WCS_OK);
    }
    QUICK_EQ(block_builder_finish(&bm, &pm, &nm), WCS_OK);
    QUICK_EQ(nm, nSize);
    QUICK_ASSERT(memcmp(pm, pFile + iOff, nm) == 0);
    block_builder_free(&bm);
    /* the separator: a (this block's last user key), or a with one byte
    ** raised when that stays below b (the next block's first) */
    QUICK_ASSERT(iEnt > iFirst);
    sep.n = 0;
    QUICK_EQ(wcs_buf_append(&sep, a[iEnt - 1].pKey, a[iEnt - 1].nKey - 8),
             WCS_OK);
    if (iEnt < n) {
      const uint8_t *pB = a[iEnt].pKey;
      size_t nB = a[iEnt].nKey - 8, nMin = sep.n < nB ? sep.n : nB, k = 0;
      while (k < nMin && sep.a[k] == pB[k])
        k++;
      if (k < nMin && sep.a[k] < 0xff && sep.a[k] + 1 < pB[k]) {
        sep.a[k]++;
        sep.n = k + 1;
      }
    }
    QUICK_ASSERT(ix.nKey == sep.n &&
                 (sep.n == 0 || memcmp(ix.pKey, sep.a, sep.n) == 0));
    QUICK_EQ(block_iter_next(&ix), WCS_OK);
  }
  QUICK_EQ(iEnt, n);
  QUICK_ASSERT(nBlk > 20);

  /* the filter: every user key, or every prefix where it changes among
  ** the keys that have one */
  bloom_builder_init(&bb, 10);
  for (i = 0; i < n; i++) {
    const uint8_t *pU = a[i].pKey;
    size_t nU = a[i].nKey - 8;
    if (bPrefix) {
      int nP = hashPrefix(pU, (int)nU);
      if (nP < 0) continue;
      if (bHave && last.n == (size_t)nP &&
          (nP == 0 || memcmp(last.a, pU, last.n) == 0)) {
        continue;
      }
      bHave = 1;
      last.n = 0;
      QUICK_EQ(wcs_buf_append(&last, pU, (size_t)nP), WCS_OK);
      QUICK_EQ(bloom_builder_add(&bb, bloom_hash(pU, (size_t)nP)), WCS_OK);
    } else if (i == 0 ||
               wcs_ukey_cmp(pU, nU, a[i - 1].pKey, a[i - 1].nKey - 8) != 0) {
      QUICK_EQ(bloom_builder_add(&bb, bloom_hash(pU, nU)), WCS_OK);
    }
  }
  QUICK_EQ(bloom_builder_finish(
               &bb, bPrefix ? WCS_BLOOM_KIND_PREFIX : WCS_BLOOM_KIND_KEYS,
               &bloomBytes),
           WCS_OK);
  iBloom = footOff(pFile, nFile, 0);
  nBloom = (size_t)wcs_get64(pFile + nFile - WCS_SST_FOOTER + 8);
  QUICK_EQ(nBloom, bloomBytes.n);
  QUICK_ASSERT(memcmp(pFile + iBloom, bloomBytes.a, nBloom) == 0);

  bloom_builder_free(&bb);
  block_iter_clear(&ix);
  block_iter_clear(&it);
  wcs_buf_free(&last);
  wcs_buf_free(&sep);
  wcs_buf_free(&bloomBytes);
  free(pFile);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_works_on_posix_files) {
  wcs_env *env = wcs_env_posix();
  const char *zDir = tu_tmpdir("sst");
  char zPath[4200];
  int n = 1500;
  Ent *a;
  sst_options o = opts(4096, 16, 3, 10);
  sst_meta meta;
  sst_reader *r;
  tu_seed(0);
  snprintf(zPath, sizeof zPath, "%s/000042.sst", zDir);
  a = randomEnts(n, 3);
  buildFile(env, zPath, a, n, &o, NULL, 0, &meta);
  QUICK_EQ(sst_reader_open(env, zPath, 42, meta.nBytes, NULL, &r, NULL),
           WCS_OK);
  checkReader(r, a, n, 100);
  sst_reader_close(r);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  tu_rmrf(zDir);
}
END_TEST

/* ---- bad files */

/* Open and fully scan (forward, then backward) a file; rows seen must be
** a prefix (suffix) of the model. Returns the first error, or WCS_OK;
** *pzErr gets its message. */
static int openAndScan(wcs_env *env, const char *zPath, uint64_t nSize,
                       const Ent *a, int n, char **pzErr) {
  sst_reader *r;
  wcs_iiter *it;
  int rc, i;
  rc = sst_reader_open(env, zPath, 1, nSize, NULL, &r, pzErr);
  if (rc != WCS_OK) return rc;
  rc = sst_reader_iter(r, 1, &it, pzErr);
  QUICK_EQ(rc, WCS_OK);
  i = 0;
  for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
       it->pMethods->xNext(it)) {
    QUICK_ASSERT((i) < (n));
    assertAt(it, a, n, i);
    i++;
  }
  rc = it->pMethods->xStatus(it, pzErr);
  if (rc == WCS_OK) {
    QUICK_EQ(i, n);
    i = n - 1;
    for (it->pMethods->xLast(it); it->pMethods->xValid(it);
         it->pMethods->xPrev(it)) {
      QUICK_ASSERT((i) >= (0));
      assertAt(it, a, n, i);
      i--;
    }
    rc = it->pMethods->xStatus(it, pzErr);
  }
  it->pMethods->xClose(it);
  sst_reader_close(r);
  return rc;
}

START_TEST(test_sst_rejects_truncated_footer) {
  wcs_env *env = wcs_env_mem_new();
  int n = 300;
  Ent *a;
  sst_options o = opts(1024, 16, 0, 10);
  sst_meta meta;
  uint8_t *p;
  size_t nFile, k;
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, "f.sst", a, n, &o, NULL, 0, &meta);
  p = getFile(env, "f.sst", &nFile);
  /* Every shorter length: the file as found on disk, size from the env. */
  for (k = 0; k < nFile; k++) {
    char *zErr = NULL;
    putFile(env, "short.sst", p, k);
    QUICK_EQ(openAndScan(env, "short.sst", 0, a, n, &zErr), WCS_CORRUPT);
    QUICK_ASSERT((zErr) != NULL);
    QUICK_ASSERT((strstr(zErr, "short.sst")) != NULL);
    free(zErr);
  }
  /* The manifest's size is larger than the file: short read. */
  {
    char *zErr = NULL;
    putFile(env, "short.sst", p, nFile - 1);
    QUICK_EQ(openAndScan(env, "short.sst", nFile, a, n, &zErr), WCS_CORRUPT);
    QUICK_ASSERT((strstr(zErr, "shorter than recorded")) != NULL);
    free(zErr);
  }
  free(p);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_rejects_wrong_magic_and_unknown_version) {
  wcs_env *env = wcs_env_mem_new();
  sst_meta meta;
  uint8_t *p;
  size_t nFile;
  char *zErr = NULL;
  uint8_t *f;
  buildGolden(env, "m.sst", &meta);
  p = getFile(env, "m.sst", &nFile);
  f = p + nFile - WCS_SST_FOOTER;

  f[WCS_SST_FOOT_MAGIC + 3] ^= 0x20;
  putFile(env, "bad.sst", p, nFile);
  QUICK_EQ(openAndScan(env, "bad.sst", 0, NULL, 0, &zErr), WCS_CORRUPT);
  QUICK_ASSERT((strstr(zErr, "magic")) != NULL);
  QUICK_ASSERT((strstr(zErr, "bad.sst")) != NULL);
  free(zErr);
  zErr = NULL;
  f[WCS_SST_FOOT_MAGIC + 3] ^= 0x20;

  /* A well-formed footer of a future version: not corruption. */
  wcs_put32(f + WCS_SST_FOOT_VERSION, 4);
  wcs_put32(f + WCS_SST_FOOT_CRC,
            wcs_crc_mask(wcs_crc32c(0, f, WCS_SST_FOOT_CRC)));
  putFile(env, "v4.sst", p, nFile);
  QUICK_EQ(openAndScan(env, "v4.sst", 0, NULL, 0, &zErr), WCS_PROTOCOL);
  QUICK_ASSERT((strstr(zErr, "version 4")) != NULL);
  free(zErr);
  free(p);
  sst_meta_clear(&meta);
  env->xDestroy(env);
}
END_TEST

/* Flip each byte of the file in turn (a different bit pattern each time);
** every flip must be reported as WCS_CORRUPT naming file and offset. */
static void flipEveryByte(wcs_env *env, const char *zSrc, const Ent *a, int n,
                          size_t nStep) {
  uint8_t *p;
  size_t nFile, k;
  int nDetected = 0;
  p = getFile(env, zSrc, &nFile);
  QUICK_EQ(openAndScan(env, zSrc, 0, a, n, NULL), WCS_OK);
  for (k = 0; k < nFile; k += nStep) {
    static const uint8_t aMask[] = {0x01, 0x80, 0xff, 0x10, 0x42};
    char *zErr = NULL;
    int rc;
    p[k] ^= aMask[k % sizeof aMask];
    putFile(env, "flip.sst", p, nFile);
    rc = openAndScan(env, "flip.sst", nFile, a, n, &zErr);
    if (rc != WCS_CORRUPT) {
      fprintf(stderr, "flip at offset %zu of %zu: rc=%d %s\n", k, nFile, rc,
              zErr ? zErr : "");
    }
    QUICK_EQ(rc, WCS_CORRUPT);
    QUICK_ASSERT((zErr) != NULL);
    QUICK_ASSERT((strstr(zErr, "flip.sst")) != NULL);
    QUICK_ASSERT((strstr(zErr, "offset")) != NULL);
    free(zErr);
    p[k] ^= aMask[k % sizeof aMask];
    nDetected++;
  }
  QUICK_ASSERT((nDetected) > (0));
  free(p);
}

START_TEST(test_sst_every_flipped_byte_is_detected) {
  wcs_env *env = wcs_env_mem_new();
  int n = 250, lvl;
  Ent *a;
  sst_rangedel d[2];
  sst_meta meta;
  gSuffix = _i; /* both data block formats */
  tu_seed(0);
  a = randomEnts(n, 0);
  d[0].pStart = (const uint8_t *)"row1";
  d[0].nStart = 4;
  d[0].pEnd = (const uint8_t *)"row2";
  d[0].nEnd = 4;
  d[0].seq = 7;
  d[1].pStart = (const uint8_t *)"row3";
  d[1].nStart = 4;
  d[1].pEnd = NULL;
  d[1].nEnd = 0;
  d[1].seq = 8;
  for (lvl = 0; lvl <= 3; lvl += 3) {
    sst_options o = opts(1024, 8, lvl, 10);
    buildFile(env, "src.sst", a, n, &o, d, 2, &meta);
    flipEveryByte(env, "src.sst", a, n, 1);
    sst_meta_clear(&meta);
  }
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_flipped_bytes_in_big_file_are_detected) {
  /* A file of ~100 blocks with 64 KiB values: a dense sample of offsets. */
  wcs_env *env = wcs_env_mem_new();
  int n = 1200;
  Ent *a;
  sst_meta meta;
  sst_options o = opts(4096, 16, 3, 10);
  tu_seed(0);
  a = randomEnts(n, 4);
  buildFile(env, "src.sst", a, n, &o, NULL, 0, &meta);
  flipEveryByte(env, "src.sst", a, n, 97);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

START_TEST(test_sst_error_names_file_and_block_offset) {
  wcs_env *env = wcs_env_mem_new();
  int n = 500;
  Ent *a;
  sst_meta meta;
  sst_options o = opts(1024, 16, 0, 10);
  sst_reader *r;
  uint64_t aOff[1001];
  uint8_t *p;
  size_t nFile;
  char *zErr = NULL, zWant[200];
  gSuffix = _i; /* both data block formats */
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, "000012.sst", a, n, &o, NULL, 0, &meta);
  QUICK_EQ(sst_reader_open(env, "000012.sst", 1, 0, NULL, &r, NULL), WCS_OK);
  aOff[0] = 0;
  sst_reader_index_keys(r, aOff, collectIndex);
  sst_reader_close(r);
  QUICK_ASSERT((aOff[0]) > (3));
  /* Damage a byte inside the third data block. */
  p = getFile(env, "000012.sst", &nFile);
  p[aOff[3] + 5] ^= 0x04;
  putFile(env, "000012.sst", p, nFile);
  QUICK_EQ(openAndScan(env, "000012.sst", 0, a, n, &zErr), WCS_CORRUPT);
  snprintf(zWant, sizeof zWant,
           "corrupt block at offset %llu of 000012.sst: checksum mismatch"
           SST_ADVICE,
           (unsigned long long)aOff[3]);
  ck_assert_str_eq(zErr, zWant);
  free(zErr);
  free(p);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

typedef struct GetOut {
  const Ent *pWant; /* expected entry, NULL if none */
  int nCall;
} GetOut;

static int checkGot(void *pCtx, const uint8_t *pKey, size_t nKey,
                    const uint8_t *pVal, size_t nVal) {
  GetOut *g = pCtx;
  g->nCall++;
  QUICK_ASSERT(g->pWant != NULL);
  QUICK_ASSERT(nKey == g->pWant->nKey &&
               memcmp(pKey, g->pWant->pKey, nKey) == 0);
  QUICK_ASSERT(nVal == g->pWant->nVal);
  QUICK_ASSERT(nVal == 0 || memcmp(pVal, g->pWant->pVal, nVal) == 0);
  return WCS_OK;
}

START_TEST(test_sst_point_get_finds_newest_version_at_snapshot) {
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  int n = 3000, k, lvl;
  Ent *a;
  sst_meta meta;
  sst_reader *r;
  gSuffix = _i; /* both data block formats */
  tu_seed(0);
  ck_assert_int_eq(wcs_cache_new(1 << 20, &cache), WCS_OK);
  a = randomEnts(n, 0);
  for (lvl = 0; lvl <= 3; lvl += 3) {
    sst_options o = opts(512, 4, lvl, 10);
    buildFile(env, "g.sst", a, n, &o, NULL, 0, &meta);
    ck_assert_int_eq(
        sst_reader_open(env, "g.sst", 9 + lvl, meta.nBytes, cache, &r, NULL),
        WCS_OK);
    for (k = 0; k < 5000; k++) {
      char zU[40];
      int nU = userKey(zU, (int)tu_rand_range((uint64_t)n + 2),
                       (char)('a' + tu_rand_range(4)));
      size_t nT;
      /* The lookup key of a read at snapshot s: (u, s, type 0xff). */
      uint8_t *t =
          mkIKey(zU, (size_t)nU, tu_rand_range((uint64_t)n + 2), 0xff, &nT);
      int j = modelSeek(a, n, t, nT), bFound = -1;
      GetOut g;
      g.nCall = 0;
      g.pWant = (j < n && a[j].nKey == nT &&
                 memcmp(a[j].pKey, t, nT - WCS_IKEY_TRAILER) == 0)
                    ? &a[j]
                    : NULL;
      QUICK_EQ(sst_reader_get(r, t, nT, &bFound, &g, checkGot, NULL), WCS_OK);
      QUICK_EQ(bFound, g.pWant != NULL);
      QUICK_EQ(g.nCall, g.pWant != NULL);
      free(t);
    }
    sst_reader_close(r);
    sst_meta_clear(&meta);
  }
  /* Versions of one key filling whole blocks: the get moves on. */
  {
    Ent *v = calloc(300, sizeof *v);
    sst_options o = opts(64, 2, 0, 10);
    int i;
    for (i = 0; i < 300; i++) {
      v[i].pKey = mkIKey("k", 1, (uint64_t)(1000 - i), WCS_KT_PUT, &v[i].nKey);
      v[i].pVal = malloc(4);
      v[i].nVal = 4;
      wcs_put32(v[i].pVal, (uint32_t)i);
    }
    buildFile(env, "v.sst", v, 300, &o, NULL, 0, &meta);
    ck_assert_int_eq(
        sst_reader_open(env, "v.sst", 30, meta.nBytes, cache, &r, NULL),
        WCS_OK);
    for (i = 0; i < 300; i++) {
      size_t nT;
      uint8_t *t = mkIKey("k", 1, (uint64_t)(1000 - i), 0xff, &nT);
      int bFound = 0;
      GetOut g;
      g.nCall = 0;
      g.pWant = &v[i];
      QUICK_EQ(sst_reader_get(r, t, nT, &bFound, &g, checkGot, NULL), WCS_OK);
      QUICK_EQ(bFound, 1);
      free(t);
    }
    sst_reader_close(r);
    sst_meta_clear(&meta);
    freeEnts(v, 300);
  }
  freeEnts(a, n);
  wcs_cache_free(cache);
  env->xDestroy(env);
}
END_TEST

/* A file of ~200 blocks of 1 KiB on a fault env that counts reads, open
** without a cache: for the readahead tests. */
typedef struct RaFile {
  wcs_env *mem, *env;
  wcs_fault fault;
  Ent *a;
  int n;
  sst_meta meta;
  sst_reader *r;
} RaFile;

static void raOpen(RaFile *f, const char *zName) {
  sst_options o = opts(1024, 16, 0, 10);
  memset(f, 0, sizeof *f);
  tu_seed(0);
  f->mem = wcs_env_mem_new();
  f->env = wcs_env_fault_new(f->mem, &f->fault);
  f->n = 3000;
  f->a = randomEnts(f->n, 0);
  buildFile(f->env, zName, f->a, f->n, &o, NULL, 0, &f->meta);
  ck_assert_uint_gt(f->meta.nBytes, 128 * 1024);
  ck_assert_int_eq(
      sst_reader_open(f->env, zName, 1, f->meta.nBytes, NULL, &f->r, NULL),
      WCS_OK);
}

static void raClose(RaFile *f) {
  sst_reader_close(f->r);
  sst_meta_clear(&f->meta);
  freeEnts(f->a, f->n);
  f->env->xDestroy(f->env);
  f->mem->xDestroy(f->mem);
}

START_TEST(test_sst_short_scan_reads_little_ahead) {
  /* A scan of a few blocks reads the first two alone and then 32 KiB,
  ** not 256 KiB; the next piece is twice as large; a new scan of the same
  ** iterator (retargeted) starts from 32 KiB again. */
  static RaFile f;
  wcs_iiter *it;
  int64_t nBytes;
  int k;
  raOpen(&f, "short.sst");
  ck_assert_int_eq(sst_reader_iter(f.r, 0, &it, NULL), WCS_OK);
  for (k = 0; k < 2; k++) {
    int i, nSeen = 0;
    nBytes = f.fault.nReadBytes;
    if (k == 1) ck_assert_int_eq(sst_iter_retarget(it, 0, 0), 1);
    it->pMethods->xFirst(it);
    /* about four blocks of entries */
    for (i = 0; i < 40 && it->pMethods->xValid(it); i++) {
      assertAt(it, f.a, f.n, nSeen++);
      it->pMethods->xNext(it);
    }
    QUICK_EQ(nSeen, 40);
    nBytes = f.fault.nReadBytes - nBytes;
    ck_assert_int_ge(nBytes, 32 * 1024);
    ck_assert_int_le(nBytes, 32 * 1024 + 3 * 1100);
  }
  /* on past the first 32 KiB: the next read is 64 KiB */
  nBytes = f.fault.nReadBytes;
  for (k = 0; k < 1000 && it->pMethods->xValid(it); k++)
    it->pMethods->xNext(it);
  nBytes = f.fault.nReadBytes - nBytes;
  ck_assert_int_eq(nBytes, 64 * 1024);
  it->pMethods->xClose(it);
  raClose(&f);
}
END_TEST

START_TEST(test_sst_forward_scan_reads_ahead) {
  /* ~200 blocks of 1 KiB, no cache: a forward scan reads several blocks
  ** at a time once it sees two blocks in a row (32 KiB, then twice as much
  ** each time up to 256 KiB); a backward scan block by block. */
  static RaFile f;
  wcs_iiter *it;
  int64_t nReads;
  int nSeen = 0;
  raOpen(&f, "ra.sst");
  ck_assert_int_eq(sst_reader_iter(f.r, 0, &it, NULL), WCS_OK);
  nReads = f.fault.nReads;
  for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
       it->pMethods->xNext(it)) {
    assertAt(it, f.a, f.n, nSeen++);
  }
  QUICK_EQ(nSeen, f.n);
  nReads = f.fault.nReads - nReads;
  ck_assert_int_le(nReads, 2 + 3 + (int64_t)(f.meta.nBytes / (256 * 1024)) + 2);
  /* A fresh iterator going backward reads block by block. */
  it->pMethods->xClose(it);
  ck_assert_int_eq(sst_reader_iter(f.r, 0, &it, NULL), WCS_OK);
  nReads = f.fault.nReads;
  for (it->pMethods->xLast(it); it->pMethods->xValid(it);
       it->pMethods->xPrev(it)) {
    assertAt(it, f.a, f.n, --nSeen);
  }
  QUICK_EQ(nSeen, 0);
  {
    uint64_t aOff[1001];
    aOff[0] = 0;
    sst_reader_index_keys(f.r, aOff, collectIndex);
    ck_assert_int_ge(f.fault.nReads - nReads, (int64_t)aOff[0]);
  }
  it->pMethods->xClose(it);
  raClose(&f);
}
END_TEST

static int getNop(void *pCtx, const uint8_t *pKey, size_t nKey,
                  const uint8_t *pVal, size_t nVal) {
  (void)pKey;
  (void)nKey;
  (void)pVal;
  (void)nVal;
  ++*(int *)pCtx;
  return 0;
}

/* The index and filter are cache entries: once evicted they are read and
** checked again, and damage found then names the file and block offset,
** for point reads and iterators alike. */
START_TEST(test_sst_index_and_bloom_reloaded_from_cache_are_checked) {
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  int n = 400, i, nCall = 0, bFound = 0, iBlk;
  Ent *a;
  sst_meta meta;
  sst_options o = opts(1024, 16, 0, 10);
  sst_reader *r;
  sst_probe pr;
  wcs_iiter *it;
  uint8_t *p;
  size_t nFile;
  uint64_t nHit, nMiss;
  char *zErr = NULL, zWant[200];
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, "000012.sst", a, n, &o, NULL, 0, &meta);
  QUICK_EQ(wcs_cache_new(1 << 20, &cache), WCS_OK);
  QUICK_EQ(sst_reader_open(env, "000012.sst", 12, 0, cache, &r, NULL), WCS_OK);
  p = getFile(env, "000012.sst", &nFile);
  for (iBlk = 3; iBlk >= 0; iBlk -= 3) { /* the index, then the bloom */
    uint64_t iOff = footOff(p, nFile, iBlk);
    p[iOff + 2] ^= 0x10;
    putFile(env, "000012.sst", p, nFile);
    /* Still cached: reads work from the entry checked at open. */
    QUICK_EQ(
        sst_reader_get(r, a[7].pKey, a[7].nKey, &bFound, &nCall, getNop, NULL),
        WCS_OK);
    QUICK_EQ(bFound, 1);
    wcs_cache_evict_file(cache, 12);
    snprintf(zWant, sizeof zWant,
             "corrupt block at offset %llu of 000012.sst: checksum mismatch"
             SST_ADVICE,
             (unsigned long long)iOff);
    memset(&pr, 0, sizeof pr);
    pr.hKey = sst_bloom_hash(a[7].pKey, a[7].nKey - WCS_IKEY_TRAILER);
    QUICK_EQ(sst_reader_get_probe(r, a[7].pKey, a[7].nKey, &pr, &bFound, &nCall,
                                  getNop, &zErr),
             WCS_CORRUPT);
    ck_assert_str_eq(zErr, zWant);
    free(zErr);
    zErr = NULL;
    QUICK_EQ(sst_reader_iter(r, 1, &it, NULL), WCS_OK);
    QUICK_EQ(it->pMethods->xSeek(it, a[9].pKey, a[9].nKey), WCS_CORRUPT);
    QUICK_ASSERT(!it->pMethods->xValid(it));
    QUICK_EQ(it->pMethods->xStatus(it, &zErr), WCS_CORRUPT);
    ck_assert_str_eq(zErr, zWant);
    free(zErr);
    zErr = NULL;
    it->pMethods->xClose(it);
    /* Repaired: the next read loads the entry again, with one miss. */
    p[iOff + 2] ^= 0x10;
    putFile(env, "000012.sst", p, nFile);
    wcs_cache_meta_stats(cache, &nHit, &nMiss);
    checkReader(r, a, n, 50);
    for (i = 0; i < n; i += 13) {
      QUICK_EQ(sst_reader_get_probe(r, a[i].pKey, a[i].nKey, &pr, &bFound,
                                    &nCall, getNop, NULL),
               WCS_OK);
    }
    {
      uint64_t nHit2, nMiss2;
      wcs_cache_meta_stats(cache, &nHit2, &nMiss2);
      QUICK_EQ(nMiss2, nMiss + 1);
      QUICK_ASSERT(nHit2 > nHit);
    }
  }
  free(p);
  sst_reader_close(r);
  wcs_cache_free(cache);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

/* A cache far smaller than one file's index and filter: every read loads
** them, uses them and lets them go; nothing stays charged. Descriptors
** beyond the file table's limit are closed and reopened on demand. */
START_TEST(test_sst_tiny_cache_and_file_limit) {
  wcs_env *env = wcs_env_mem_new();
  wcs_cache *cache;
  enum { NFILE = 6 };
  sst_reader *ar[NFILE];
  sst_meta am[NFILE];
  Ent *a;
  int n = 1500, i, j, nOpen, nReaders;
  sst_options o = opts(512, 16, 3, 10);
  uint64_t nBytes, nHeld, nReopen;
  tu_seed(0);
  a = randomEnts(n, 0);
  QUICK_EQ(wcs_cache_new(4096, &cache), WCS_OK);
  wcs_cache_set_max_files(cache, 2);
  for (i = 0; i < NFILE; i++) {
    char zName[32];
    snprintf(zName, sizeof zName, "%06d.sst", i + 1);
    buildFile(env, zName, a, n, &o, NULL, 0, &am[i]);
    QUICK_EQ(
        sst_reader_open(env, zName, (uint64_t)i + 1, 0, cache, &ar[i], NULL),
        WCS_OK);
    wcs_cache_file_stats(cache, &nOpen, &nReaders, NULL, NULL);
    QUICK_ASSERT(nOpen <= 2);
    QUICK_EQ(nReaders, i + 1);
  }
  for (j = 0; j < 2; j++) {
    for (i = 0; i < NFILE; i++) {
      checkReader(ar[i], a, n, 30);
      wcs_cache_stats(cache, &nBytes, NULL, NULL);
      QUICK_ASSERT(nBytes <= 4096);
      wcs_cache_file_stats(cache, &nOpen, NULL, NULL, NULL);
      QUICK_ASSERT(nOpen <= 2);
    }
  }
  wcs_cache_file_stats(cache, &nOpen, &nReaders, &nHeld, &nReopen);
  QUICK_ASSERT(nReopen >= NFILE);
  QUICK_ASSERT(nHeld > 0);
  QUICK_ASSERT(nHeld <= (uint64_t)NFILE * (512 + 32 * 48)); /* + sample */
  for (i = 0; i < NFILE; i++) {
    sst_reader_close(ar[i]);
    sst_meta_clear(&am[i]);
  }
  wcs_cache_file_stats(cache, &nOpen, &nReaders, &nHeld, NULL);
  QUICK_EQ(nOpen, 0);
  QUICK_EQ(nReaders, 0);
  QUICK_EQ(nHeld, 0);
  wcs_cache_free(cache);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

/* ---- prefetch: long forward scans through a cache have the blocks ahead
** of them decompressed by the cache's worker (sst.c, "Prefetch"). With one
** core the worker is off and these tests check plain scans. */

static int haveWorker(void) {
  return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

/* A file of ~500 blocks of 1 KiB (zstd), more than one readahead buffer,
** and its block offsets in aOff[1..aOff[0]]. */
static Ent *prefetchFile(wcs_env *env, const char *zPath, int n,
                         sst_meta *pMeta, uint64_t *aOff) {
  sst_options o = opts(1024, 16, 3, 10);
  sst_reader *r;
  Ent *a;
  tu_seed(0);
  a = randomEnts(n, 0);
  buildFile(env, zPath, a, n, &o, NULL, 0, pMeta);
  QUICK_ASSERT(pMeta->nBytes > 256 * 1024);
  QUICK_EQ(sst_reader_open(env, zPath, 1, 0, NULL, &r, NULL), WCS_OK);
  aOff[0] = 0;
  sst_reader_index_keys(r, aOff, collectIndex);
  sst_reader_close(r);
  QUICK_ASSERT(aOff[0] > 300);
  return a;
}

/* Let the worker do every job the scan has queued (nothing left in the
** queue, the worker idle); a scan that does nothing with its rows otherwise
** reaches most of its jobs before the worker wakes, and takes them back. */
static void settleWorker(wcs_cache *cache) {
  sst_pfq *q = wcs_cache_pfq(cache);
  int i;
  /* until nothing is queued and the worker waits for work: on a loaded
  ** machine it may not have run at all yet (up to 20 s) */
  for (i = 0; i < 20000; i++) {
    int bBusy;
    pthread_mutex_lock(&q->mu);
    bBusy = q->bStarted && (q->pHead != NULL || !q->bIdle);
    pthread_mutex_unlock(&q->mu);
    if (!bBusy) break;
    usleep(1000);
  }
}

/* Scanning with the worker gives the rows a scan without it gives, and
** leaves the cache as that scan does: the same blocks inserted (with the
** seek aids they are charged for), the same hits and misses, once cold
** and once over what the first pass left; with a cache larger than the
** file and with one that takes a fraction of it (SST_FILL_ROOM). Point
** reads first put every second or third block in the cache, so that the
** blocks ahead of a scan mix hits (never decoded twice) and misses. The
** scan pauses now and then so that the worker's results are used. */
START_TEST(test_sst_prefetched_scan_matches_plain_scan) {
  wcs_env *env = wcs_env_mem_new();
  size_t nBudget = _i ? 96 * 1024 : 8 << 20;
  wcs_cache *aCache[2];
  sst_reader *aR[2];
  uint64_t aOff[1001];
  sst_meta meta;
  int n = 8000, k, iPass;
  Ent *a = prefetchFile(env, "p.sst", n, &meta, aOff);
  for (k = 0; k < 2; k++) {
    QUICK_EQ(wcs_cache_new(nBudget, &aCache[k]), WCS_OK);
    QUICK_EQ(sst_reader_open(env, "p.sst", 5, 0, aCache[k], &aR[k], NULL),
             WCS_OK);
  }
  wcs_cache_set_prefetch(aCache[1], 0);
  for (k = 0; k < 2; k++) {
    int i, nGot = 0;
    for (i = 0; i < n; i += 40) {
      int bFound = 0;
      QUICK_EQ(sst_reader_get(aR[k], a[i].pKey, a[i].nKey, &bFound, &nGot,
                              getNop, NULL),
               WCS_OK);
    }
  }
  for (iPass = 0; iPass < 2; iPass++) {
    uint64_t aBytes[2], aHit[2], aMiss[2];
    for (k = 0; k < 2; k++) {
      wcs_iiter *it;
      int i = 0;
      QUICK_EQ(sst_reader_iter(aR[k], 1, &it, NULL), WCS_OK);
      for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
           it->pMethods->xNext(it)) {
        assertAt(it, a, n, i++);
        if (i % 500 == 0) settleWorker(aCache[k]);
      }
      QUICK_EQ(it->pMethods->xStatus(it, NULL), WCS_OK);
      QUICK_EQ(i, n);
      it->pMethods->xClose(it);
      wcs_cache_stats(aCache[k], &aBytes[k], &aHit[k], &aMiss[k]);
    }
    QUICK_EQ(aBytes[0], aBytes[1]);
    QUICK_EQ(aHit[0], aHit[1]);
    QUICK_EQ(aMiss[0], aMiss[1]);
    if (_i) ck_assert_uint_lt(aBytes[0], meta.nRawBytes);
  }
  /* at least the blocks queued at the cold pass's pauses */
  if (haveWorker()) ck_assert_uint_ge(wcs_cache_prefetched(aCache[0]), 8);
  ck_assert_uint_eq(wcs_cache_prefetched(aCache[1]), 0);
  for (k = 0; k < 2; k++) {
    sst_reader_close(aR[k]);
    wcs_cache_free(aCache[k]);
  }
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

/* Rows of the file until the scan stops, each checked against a; returns
** how many, with the status and message. With iPause >= 0 the scan stops
** after that many rows for the worker to finish what it has queued, and
** nothing may be reported yet. */
static int scanUntilError(sst_reader *r, wcs_cache *cache, const Ent *a, int n,
                          int iPause, int *pRc, char **pzErr) {
  wcs_iiter *it;
  int i = 0;
  QUICK_EQ(sst_reader_iter(r, 1, &it, NULL), WCS_OK);
  for (it->pMethods->xFirst(it); it->pMethods->xValid(it);
       it->pMethods->xNext(it)) {
    assertAt(it, a, n, i++);
    if (i == iPause) {
      settleWorker(cache);
      QUICK_ASSERT(it->pMethods->xValid(it));
      QUICK_EQ(it->pMethods->xStatus(it, NULL), WCS_OK);
    }
  }
  *pRc = it->pMethods->xStatus(it, pzErr);
  it->pMethods->xClose(it);
  return i;
}

/* A damaged block far into the file is decoded by the worker before the
** scan gets there, but reported only when the scan reaches it, with the
** message a scan without the worker gives; no row of it comes out. */
START_TEST(test_sst_prefetched_damage_is_reported_when_reached) {
  wcs_env *env = wcs_env_mem_new();
  uint64_t aOff[1001];
  sst_meta meta;
  int n = 8000, k, aRows[2], aRc[2], iBad = 120;
  char *azErr[2] = {NULL, NULL}, zWant[200];
  wcs_cache *aCache[2];
  sst_reader *aR[2];
  Ent *a = prefetchFile(env, "000031.sst", n, &meta, aOff);
  uint8_t *p;
  size_t nFile;
  p = getFile(env, "000031.sst", &nFile);
  p[aOff[1 + iBad] + 3] ^= 0x20; /* block iBad's stored bytes */
  putFile(env, "000031.sst", p, nFile);
  free(p);
  for (k = 0; k < 2; k++) {
    QUICK_EQ(wcs_cache_new(8 << 20, &aCache[k]), WCS_OK);
    QUICK_EQ(sst_reader_open(env, "000031.sst", 9, 0, aCache[k], &aR[k], NULL),
             WCS_OK);
  }
  wcs_cache_set_prefetch(aCache[1], 0);
  aRows[1] = scanUntilError(aR[1], aCache[1], a, n, -1, &aRc[1], &azErr[1]);
  QUICK_ASSERT(aRows[1] > 100 * 10); /* the blocks before it, ~14 rows each */
  /* Pause two or three blocks (~16 rows each) before the damaged one: it
  ** is among the four or more blocks queued then, and the worker finds the
  ** damage while the scan still has blocks to read before it. */
  aRows[0] =
      scanUntilError(aR[0], aCache[0], a, n, aRows[1] - 40, &aRc[0], &azErr[0]);
  snprintf(zWant, sizeof zWant,
           "corrupt block at offset %llu of 000031.sst: checksum mismatch"
           SST_ADVICE,
           (unsigned long long)aOff[1 + iBad]);
  for (k = 0; k < 2; k++) {
    QUICK_EQ(aRc[k], WCS_CORRUPT);
    ck_assert_str_eq(azErr[k], zWant);
    free(azErr[k]);
  }
  QUICK_EQ(aRows[0], aRows[1]);
  /* at least the damaged block and the others queued at the pause */
  if (haveWorker()) ck_assert_uint_ge(wcs_cache_prefetched(aCache[0]), 4);
  for (k = 0; k < 2; k++) {
    sst_reader_close(aR[k]);
    wcs_cache_free(aCache[k]);
  }
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

/* Jobs in flight when a scan closes, seeks elsewhere, steps back or is
** retargeted are cancelled or waited for: every row after the move is
** right, and nothing leaks or is touched after it is freed (run under
** ASan). The file's blocks are evicted before each scan so that it
** misses the cache and prefetches. */
START_TEST(test_sst_prefetch_survives_moves_mid_scan) {
  wcs_env *env = wcs_env_mem_new();
  uint64_t aOff[1001];
  sst_meta meta;
  int n = 8000, iRound;
  wcs_cache *cache;
  sst_reader *r;
  Ent *a = prefetchFile(env, "m.sst", n, &meta, aOff);
  QUICK_EQ(wcs_cache_new(8 << 20, &cache), WCS_OK);
  QUICK_EQ(sst_reader_open(env, "m.sst", 4, 0, cache, &r, NULL), WCS_OK);
  for (iRound = 0; iRound < 64; iRound++) {
    const wcs_iiter_methods *m;
    wcs_iiter *it;
    int i, j, nStep = 400 + (int)tu_rand_range((uint64_t)n - 800);
    wcs_cache_evict_file(cache, 4);
    QUICK_EQ(sst_reader_iter(r, iRound & 1, &it, NULL), WCS_OK);
    m = it->pMethods;
    QUICK_EQ(m->xFirst(it), WCS_OK);
    for (i = 0; i < nStep; i++) {
      QUICK_EQ(m->xNext(it), WCS_OK);
    }
    assertAt(it, a, n, i);
    /* every other time the jobs are done rather than queued or running */
    if (iRound & 4) settleWorker(cache);
    switch (iRound % 4) {
    case 0: /* close with jobs queued or running */
      break;
    case 1: /* seek elsewhere, then scan on */
      j = (int)tu_rand_range((uint64_t)n);
      QUICK_EQ(m->xSeek(it, a[j].pKey, a[j].nKey), WCS_OK);
      for (i = j; i < j + 300 && i <= n; i++) {
        assertAt(it, a, n, i);
        QUICK_EQ(m->xNext(it), WCS_OK);
      }
      break;
    case 2: /* back over a few blocks, then forward past where it was */
      for (; i > nStep - 80; i--) {
        QUICK_EQ(m->xPrev(it), WCS_OK);
        assertAt(it, a, n, i - 1);
      }
      for (; i < nStep + 300 && i < n; i++) {
        QUICK_EQ(m->xNext(it), WCS_OK);
        assertAt(it, a, n, i + 1);
      }
      break;
    case 3: /* a new scan of the same iterator */
      sst_iter_retarget(it, 0, 0);
      QUICK_EQ(m->xFirst(it), WCS_OK);
      for (i = 0; i < 600; i++) {
        assertAt(it, a, n, i);
        QUICK_EQ(m->xNext(it), WCS_OK);
      }
      break;
    }
    QUICK_EQ(m->xStatus(it, NULL), WCS_OK);
    m->xClose(it);
  }
  if (haveWorker()) ck_assert_uint_gt(wcs_cache_prefetched(cache), 0);
  sst_reader_close(r);
  wcs_cache_free(cache);
  sst_meta_clear(&meta);
  freeEnts(a, n);
  env->xDestroy(env);
}
END_TEST

Suite *storage_sst_suite(void);
Suite *storage_sst_suite(void) {
  Suite *s = suite_create("storage_sst");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, resetSuffix, NULL);
  tcase_add_test(tc, test_sst_golden_file_bytes);
  tcase_add_loop_test(tc, test_sst_round_trips_random_entries, 0, 2);
  tcase_add_loop_test(tc, test_sst_round_trips_empty_and_64k_values, 0, 2);
  tcase_add_loop_test(tc, test_sst_versions_of_one_key_straddle_blocks, 0, 2);
  tcase_add_test(tc, test_sst_meta_reports_bounds_seqs_and_tombstones);
  tcase_add_test(tc, test_sst_empty_file_has_no_entries);
  tcase_add_test(tc, test_sst_index_gives_offsets_without_reading_blocks);
  tcase_add_test(tc, test_sst_second_scan_is_served_by_cache);
  tcase_add_test(tc, test_sst_long_scan_keeps_hot_blocks);
  tcase_add_loop_test(tc, test_sst_point_get_finds_newest_version_at_snapshot,
                      0, 2);
  tcase_add_test(tc, test_sst_forward_scan_reads_ahead);
  tcase_add_test(tc, test_sst_short_scan_reads_little_ahead);
  tcase_add_test(tc, test_sst_builder_rejects_out_of_order_keys);
  tcase_add_test(tc, test_sst_builder_order_check_agrees_with_ikey_cmp);
  tcase_add_loop_test(tc, test_sst_builder_parts_agree_with_models, 0, 4);
  tcase_add_test(tc, test_sst_works_on_posix_files);
  tcase_add_test(tc, test_sst_rejects_truncated_footer);
  tcase_add_test(tc, test_sst_rejects_wrong_magic_and_unknown_version);
  tcase_add_loop_test(tc, test_sst_every_flipped_byte_is_detected, 0, 2);
  tcase_add_test(tc, test_sst_flipped_bytes_in_big_file_are_detected);
  tcase_add_loop_test(tc, test_sst_error_names_file_and_block_offset, 0, 2);
  tcase_add_test(tc, test_sst_index_and_bloom_reloaded_from_cache_are_checked);
  tcase_add_test(tc, test_sst_tiny_cache_and_file_limit);
  suite_add_tcase(s, tc);
  tc = tcase_create("prefetch");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, resetSuffix, NULL);
  tcase_add_loop_test(tc, test_sst_prefetched_scan_matches_plain_scan, 0, 2);
  tcase_add_test(tc, test_sst_prefetched_damage_is_reported_when_reached);
  tcase_add_test(tc, test_sst_prefetch_survives_moves_mid_scan);
  suite_add_tcase(s, tc);
  return s;
}
