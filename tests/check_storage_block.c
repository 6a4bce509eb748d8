/*
** Tests of the block layer (storage/block.c): golden bytes of a small
** block and its trailer, and of a block whose entries share suffixes,
** cursor moves compared with a sorted array (plain and internal keys,
** every restart interval shape, with and without suffixes), the framing
** round trip
** with and without zstd, and bad bytes: every truncation, every flipped
** byte of a framed block, random garbage — always an error, never a crash.
*/
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/block.h"
#include "storage/ikey.h"
#include "testutil.h"

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

/* The block of doc/format.md's worked example: restart interval 2. */
static const uint8_t aGoldenBlock[] = {
    0x00, 0x05, 0x01, 'a',  'p',  'p',  'l',  'e',  '1',      /* entry 0 */
    0x05, 0x05, 0x01, 's',  'a',  'u',  'c',  'e',  '2',      /* entry 1 */
    0x00, 0x06, 0x01, 'b',  'a',  'n',  'a',  'n',  'a', '3', /* entry 2 */
    0x00, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, /* restarts 0, 18 */
    0x02, 0x00, 0x00, 0x00,                         /* 2 restarts */
};
static const uint8_t aGoldenTrailer[] = {
    0x00,                   /* raw */
    0x28, 0x00, 0x00, 0x00, /* raw length 40 */
    0xa5, 0xe8, 0xbb, 0x82, /* masked CRC-32C */
};

/* The same keys and values in a block whose entries share suffixes, with
** a restart interval of 3: entry 1 takes "x#9" from the base (entry 0,
** stored whole), entry 2 one byte of prefix from entry 1 and "#9" from the
** base. doc/format.md, "Block contents", walks through it. */
static const uint8_t aGoldenSuffixBlock[] = {
    0x00, 0x04, 0x00, 0x01, 'a', 'x', '#', '9', '1', /* entry 0: whole */
    0x00, 0x01, 0x03, 0x01, 'b', '2',                /* entry 1: "b" + "x#9" */
    0x01, 0x01, 0x02, 0x01, 'z', '3',                /* "b" + "z" + "#9" */
    0x00, 0x00, 0x00, 0x00,                          /* restart 0 */
    0x01, 0x00, 0x00, 0x80, /* 1 restart | WCS_BLOCK_SUFFIX */
};

typedef struct Ent {
  uint8_t *pKey;
  size_t nKey;
  uint8_t *pVal;
  size_t nVal;
} Ent;

static int gIKey; /* comparison mode for qsort */
static int entCmp(const void *a, const void *b) {
  const Ent *x = a, *y = b;
  return block_key_cmp(gIKey, x->pKey, x->nKey, y->pKey, y->nKey);
}

static void freeEnts(Ent *a, int n) {
  int i;
  for (i = 0; i < n; i++) {
    free(a[i].pKey);
    free(a[i].pVal);
  }
  free(a);
}

/* n distinct random entries, sorted. Keys share prefixes (drawn from a few
** stems) so prefix compression has something to do; bIKey appends a
** trailer, with repeated user keys at different sequence numbers. */
static Ent *randomEnts(int n, int bIKey) {
  static const char *azStem[] = {"", "a", "app", "apple#", "zz\xff", "row#42#"};
  Ent *a = calloc((size_t)n, sizeof *a);
  int i = 0, j;
  while (i < n) {
    const char *zStem = azStem[tu_rand_range(6)];
    size_t nStem = strlen(zStem), nTail = tu_rand_range(12);
    size_t nU = nStem + nTail;
    uint8_t *k = malloc(nU + 8 + 1);
    int bDup = 0;
    memcpy(k, zStem, nStem);
    tu_rand_bytes(k + nStem, nTail);
    for (j = 0; j < (int)nTail; j++)
      k[nStem + j] = (uint8_t)('a' + k[nStem + j] % 4);
    a[i].nKey = nU;
    if (bIKey) {
      wcs_put64(k + nU, wcs_ikey_pack(tu_rand_range(1000), WCS_KT_PUT));
      a[i].nKey = nU + 8;
    }
    a[i].pKey = k;
    for (j = 0; j < i && !bDup; j++) {
      bDup = a[j].nKey == a[i].nKey && memcmp(a[j].pKey, k, a[i].nKey) == 0;
    }
    if (bDup) {
      free(k);
      continue;
    }
    a[i].nVal = tu_rand_range(4) == 0 ? 0 : tu_rand_range(60);
    a[i].pVal = malloc(a[i].nVal + 1);
    tu_rand_bytes(a[i].pVal, a[i].nVal);
    i++;
  }
  gIKey = bIKey;
  qsort(a, (size_t)n, sizeof *a, entCmp);
  return a;
}

static int gSuffix; /* buildBlock writes suffixes */
static int gSeek;   /* ... and seek points, about four per interval */

/* Each test starts with the plain format, also when the tests run in one
** process (CK_FORK=no, as under valgrind): a loop test leaves them set. */
static void resetFormat(void) {
  gSuffix = 0;
  gSeek = 0;
}

/* Build a block; returns a malloc'd copy of its contents. */
static uint8_t *buildBlock(const Ent *a, int n, int nInterval, size_t *pn) {
  block_builder b;
  const uint8_t *p;
  uint8_t *pOut;
  int i;
  block_builder_init(&b, nInterval);
  b.bSuffix = gSuffix;
  b.nSeekEvery = gSeek && nInterval >= 2 ? (nInterval + 3) / 4 : 0;
  for (i = 0; i < n; i++) {
    QUICK_EQ(block_builder_add(&b, a[i].pKey, a[i].nKey, a[i].pVal, a[i].nVal),
             WCS_OK);
  }
  QUICK_EQ(block_builder_finish(&b, &p, pn), WCS_OK);
  QUICK_EQ(*pn, block_builder_size(&b));
  /* asked for, the seek slots are there (not a silent no-op) */
  QUICK_EQ((wcs_get32(p + *pn - 4) & WCS_BLOCK_SEEK) != 0,
           b.nSeekEvery > 0 && n > 0);
  pOut = malloc(*pn);
  memcpy(pOut, p, *pn);
  block_builder_free(&b);
  return pOut;
}

static void assertAt(const block_iter *it, const Ent *a, int n, int i) {
  if (i < 0 || i >= n) {
    QUICK_ASSERT(!block_iter_valid(it));
    return;
  }
  QUICK_ASSERT(block_iter_valid(it));
  QUICK_EQ(it->nKey, a[i].nKey);
  QUICK_ASSERT(memcmp(it->pKey, a[i].pKey, a[i].nKey) == 0);
  QUICK_EQ(it->nVal, a[i].nVal);
  QUICK_ASSERT(a[i].nVal == 0 || memcmp(it->pVal, a[i].pVal, a[i].nVal) == 0);
}

/* Block p[0..n) of internal keys reads as a[0..nEnt) forward and
** backward, and a seek to every nStep-th key lands on it. */
static void assertReads(const uint8_t *p, size_t n, const Ent *a, int nEnt,
                        int nStep) {
  block_iter it;
  int i;
  memset(&it, 0, sizeof it);
  QUICK_EQ(block_iter_init(&it, p, n, 1), WCS_OK);
  QUICK_EQ(block_iter_first(&it), WCS_OK);
  for (i = 0; i < nEnt; i++) {
    assertAt(&it, a, nEnt, i);
    QUICK_EQ(block_iter_next(&it), WCS_OK);
  }
  QUICK_EQ(block_iter_last(&it), WCS_OK);
  for (i = nEnt - 1; i >= 0; i--) {
    assertAt(&it, a, nEnt, i);
    QUICK_EQ(block_iter_prev(&it), WCS_OK);
  }
  for (i = 0; i < nEnt; i += nStep) {
    QUICK_EQ(block_iter_seek(&it, a[i].pKey, a[i].nKey), WCS_OK);
    assertAt(&it, a, nEnt, i);
  }
  block_iter_clear(&it);
}

/* First index with key >= (p, n). */
static int modelSeek(const Ent *a, int nEnt, int bIKey, const uint8_t *p,
                     size_t n) {
  int i = 0;
  while (i < nEnt && block_key_cmp(bIKey, a[i].pKey, a[i].nKey, p, n) < 0)
    i++;
  return i;
}

/* Internal-key entries whose user keys all start with zStem followed by a
** tail of 0..19 bytes from {0x00, 'a', 'b', 0xff} (past both 8-byte
** slices of a seek aid), several versions of some user keys; sorted, no
** duplicates. */
static Ent *stemEnts(int n, const char *zStem) {
  static const uint8_t aTail[] = {0x00, 'a', 'b', 0xff};
  Ent *a = calloc((size_t)n, sizeof *a);
  size_t nStem = strlen(zStem);
  int i = 0, j;
  while (i < n) {
    size_t nTail = tu_rand_range(20), nU = nStem + nTail;
    uint8_t *k = malloc(nU + 8);
    int bDup = 0;
    memcpy(k, zStem, nStem);
    for (j = 0; j < (int)nTail; j++)
      k[nStem + j] = aTail[tu_rand_range(4)];
    wcs_put64(k + nU, wcs_ikey_pack(tu_rand_range(5), WCS_KT_PUT));
    for (j = 0; j < i && !bDup; j++) {
      bDup = a[j].nKey == nU + 8 && memcmp(a[j].pKey, k, nU + 8) == 0;
    }
    if (bDup) {
      free(k);
      continue;
    }
    a[i].pKey = k;
    a[i].nKey = nU + 8;
    a[i].nVal = tu_rand_range(30);
    a[i].pVal = malloc(a[i].nVal + 1);
    tu_rand_bytes(a[i].pVal, a[i].nVal);
    i++;
  }
  gIKey = 1;
  qsort(a, (size_t)n, sizeof *a, entCmp);
  return a;
}

/* Seeks through a seek aid land where seeks without one do, whatever the
** shared prefix of the block and the target. */
START_TEST(test_block_seek_aid_agrees_with_model) {
  static const char *azStem[] = {"", "d", "device#0001#", "zz\xff\xff"};
  static const int aInterval[] = {1, 3, 16, 64};
  int iStem, iInt, k, i;
  tu_seed(0);
  gSuffix = _i & 1;
  gSeek = _i >> 1;
  for (iStem = 0; iStem < 4; iStem++) {
    for (iInt = 0; iInt < 4; iInt++) {
      /* up to ten restart intervals of 64 entries */
      int n = 1 + (int)tu_rand_range(600);
      Ent *a = stemEnts(n, azStem[iStem]);
      size_t nBlk, nAid;
      uint8_t *pBlk = buildBlock(a, n, aInterval[iInt], &nBlk);
      block_aid *pAid = NULL;
      block_iter it;
      memset(&it, 0, sizeof it);
      QUICK_EQ(block_aid_build(pBlk, nBlk, &pAid, &nAid), WCS_OK);
      QUICK_ASSERT(pAid != NULL);
      QUICK_ASSERT(pAid->nPrefix >= strlen(azStem[iStem]));
      QUICK_EQ(block_iter_init_aid(&it, pBlk, nBlk, pAid), WCS_OK);
      for (i = 0; i < n; i++) {
        QUICK_EQ(block_iter_seek(&it, a[i].pKey, a[i].nKey), WCS_OK);
        assertAt(&it, a, n, i);
      }
      for (k = 0; k < 2000; k++) {
        uint8_t t[40];
        size_t nU;
        int j = (int)tu_rand_range((uint64_t)n), m;
        /* a key near entry j: cut, extended or with one byte changed */
        nU = a[j].nKey - 8;
        memcpy(t, a[j].pKey, nU);
        switch (tu_rand_range(4)) {
        case 0:
          nU = tu_rand_range(nU + 1);
          break;
        case 1:
          if (nU < 30) t[nU++] = (uint8_t)tu_rand_range(256);
          break;
        case 2:
          if (nU) t[tu_rand_range(nU)] += (uint8_t)(tu_rand_range(3) - 1);
          break;
        default:
          break;
        }
        wcs_put64(t + nU, wcs_ikey_pack(tu_rand_range(6), WCS_KT_PUT));
        m = modelSeek(a, n, 1, t, nU + 8);
        QUICK_EQ(block_iter_seek(&it, t, nU + 8), WCS_OK);
        assertAt(&it, a, n, m);
        if (m < n && tu_rand_range(2)) {
          QUICK_EQ(block_iter_prev(&it), WCS_OK);
          assertAt(&it, a, n, m - 1);
        } else if (m < n) {
          QUICK_EQ(block_iter_next(&it), WCS_OK);
          assertAt(&it, a, n, m + 1);
        }
      }
      block_iter_clear(&it);
      free(pAid);
      free(pBlk);
      freeEnts(a, n);
    }
  }
}
END_TEST

START_TEST(test_block_golden_bytes) {
  Ent a[3];
  const char *azKey[] = {"apple", "applesauce", "banana"};
  const char *azVal[] = {"1", "2", "3"};
  block_builder b;
  const uint8_t *p;
  size_t n, nStored;
  wcs_buf out = {0}, scratch = {0};
  int i;
  for (i = 0; i < 3; i++) {
    a[i].pKey = (uint8_t *)azKey[i];
    a[i].nKey = strlen(azKey[i]);
    a[i].pVal = (uint8_t *)azVal[i];
    a[i].nVal = 1;
  }
  block_builder_init(&b, 2);
  for (i = 0; i < 3; i++) {
    block_builder_add(&b, a[i].pKey, a[i].nKey, a[i].pVal, a[i].nVal);
  }
  QUICK_EQ(block_builder_finish(&b, &p, &n), WCS_OK);
  QUICK_EQ(n, sizeof aGoldenBlock);
  QUICK_ASSERT(memcmp(p, aGoldenBlock, n) == 0);
  QUICK_EQ(block_frame(p, n, 0, NULL, &scratch, &out, &nStored), WCS_OK);
  QUICK_EQ(nStored, n);
  QUICK_EQ(out.n, n + WCS_BLOCK_TRAILER);
  QUICK_ASSERT(memcmp(out.a + n, aGoldenTrailer, sizeof aGoldenTrailer) == 0);
  block_builder_free(&b);
  wcs_buf_free(&out);
  wcs_buf_free(&scratch);
}
END_TEST

START_TEST(test_block_reads_golden_block) {
  block_iter it;
  memset(&it, 0, sizeof it);
  QUICK_EQ(block_iter_init(&it, aGoldenBlock, sizeof aGoldenBlock, 0), WCS_OK);
  QUICK_EQ(block_iter_seek(&it, (const uint8_t *)"applet", 6), WCS_OK);
  QUICK_ASSERT(block_iter_valid(&it));
  QUICK_ASSERT(it.nKey == 6 && memcmp(it.pKey, "banana", 6) == 0);
  QUICK_EQ(block_iter_prev(&it), WCS_OK);
  QUICK_ASSERT(it.nKey == 10 && memcmp(it.pKey, "applesauce", 10) == 0);
  QUICK_ASSERT(it.nVal == 1 && it.pVal[0] == '2');
  QUICK_EQ(block_iter_prev(&it), WCS_OK);
  QUICK_ASSERT(it.nKey == 5 && memcmp(it.pKey, "apple", 5) == 0);
  QUICK_EQ(block_iter_prev(&it), WCS_OK);
  QUICK_ASSERT(!block_iter_valid(&it));
  block_iter_clear(&it);
}
END_TEST

/* Walk a block with forward scans, reverse scans, seeks and a random mix
** of moves, comparing every position with the sorted array. */
static void checkBlockAgainstModel(int n, int nInterval, int bIKey) {
  Ent *a = randomEnts(n, bIKey);
  size_t nBlk;
  uint8_t *pBlk = buildBlock(a, n, nInterval, &nBlk);
  block_iter it;
  int i, k, pos;
  memset(&it, 0, sizeof it);
  QUICK_EQ(block_iter_init(&it, pBlk, nBlk, bIKey), WCS_OK);
  QUICK_ASSERT(!block_iter_valid(&it));

  QUICK_EQ(block_iter_first(&it), WCS_OK);
  for (i = 0; i < n; i++) {
    assertAt(&it, a, n, i);
    QUICK_EQ(block_iter_next(&it), WCS_OK);
  }
  assertAt(&it, a, n, n);
  QUICK_EQ(block_iter_last(&it), WCS_OK);
  for (i = n - 1; i >= 0; i--) {
    assertAt(&it, a, n, i);
    QUICK_EQ(block_iter_prev(&it), WCS_OK);
  }
  assertAt(&it, a, n, -1);

  for (i = 0; i < n; i++) {
    QUICK_EQ(block_iter_seek(&it, a[i].pKey, a[i].nKey), WCS_OK);
    assertAt(&it, a, n, i);
  }
  /* Seeks between and beyond the keys. */
  for (k = 0; k < 200; k++) {
    uint8_t t[24];
    size_t nT = (bIKey ? 8 : 0) + tu_rand_range(12);
    int j;
    tu_rand_bytes(t, nT);
    for (j = 0; j < (int)nT - (bIKey ? 8 : 0); j++)
      t[j] = (uint8_t)('`' + t[j] % 6);
    QUICK_EQ(block_iter_seek(&it, t, nT), WCS_OK);
    assertAt(&it, a, n, modelSeek(a, n, bIKey, t, nT));
  }

  /* Random walk mixing directions. */
  pos = -1;
  for (k = 0; k < 4000; k++) {
    int op = (int)tu_rand_range(10);
    if (pos < 0 || pos >= n || op == 0) {
      if (tu_rand_range(2)) {
        QUICK_EQ(block_iter_first(&it), WCS_OK);
        pos = 0;
      } else {
        QUICK_EQ(block_iter_last(&it), WCS_OK);
        pos = n - 1;
      }
      if (n == 0) pos = -1;
    } else if (op == 1) {
      int j = (int)tu_rand_range((uint64_t)n);
      QUICK_EQ(block_iter_seek(&it, a[j].pKey, a[j].nKey), WCS_OK);
      pos = j;
    } else if (op < 6) {
      QUICK_EQ(block_iter_next(&it), WCS_OK);
      pos++;
    } else {
      QUICK_EQ(block_iter_prev(&it), WCS_OK);
      pos--;
    }
    assertAt(&it, a, n, pos);
  }
  block_iter_clear(&it);
  free(pBlk);
  freeEnts(a, n);
}

START_TEST(test_block_cursor_agrees_with_sorted_array) {
  static const int aInterval[] = {1, 2, 3, 16, 1000};
  int i, n;
  tu_seed(0);
  gSuffix = _i & 1;
  gSeek = _i >> 1;
  for (i = 0; i < 5; i++) {
    for (n = 0; n <= 40; n += 13)
      checkBlockAgainstModel(n, aInterval[i], 0);
    checkBlockAgainstModel(300, aInterval[i], 0);
  }
}
END_TEST

START_TEST(test_block_cursor_orders_internal_keys) {
  static const int aInterval[] = {1, 4, 16};
  int i;
  tu_seed(0);
  gSuffix = _i & 1;
  gSeek = _i >> 1;
  for (i = 0; i < 3; i++) {
    checkBlockAgainstModel(1, aInterval[i], 1);
    checkBlockAgainstModel(250, aInterval[i], 1);
  }
}
END_TEST

START_TEST(test_block_versions_of_one_key_newest_first) {
  /* One user key at seqs 9, 5, 1: a seek at seq 6 lands on seq 5. */
  uint8_t k[3][9], t[9];
  Ent a[3];
  size_t nBlk;
  uint8_t *pBlk;
  block_iter it;
  int i;
  uint64_t aSeq[] = {9, 5, 1};
  for (i = 0; i < 3; i++) {
    k[i][0] = 'k';
    wcs_put64(k[i] + 1, wcs_ikey_pack(aSeq[i], WCS_KT_PUT));
    a[i].pKey = k[i];
    a[i].nKey = 9;
    a[i].pVal = (uint8_t *)"v";
    a[i].nVal = 1;
  }
  pBlk = buildBlock(a, 3, 16, &nBlk);
  memset(&it, 0, sizeof it);
  block_iter_init(&it, pBlk, nBlk, 1);
  t[0] = 'k';
  wcs_put64(t + 1, wcs_ikey_pack(6, WCS_KT_PUT));
  QUICK_EQ(block_iter_seek(&it, t, 9), WCS_OK);
  QUICK_ASSERT(block_iter_valid(&it));
  QUICK_EQ(wcs_ikey_seq(it.pKey, it.nKey), 5);
  block_iter_clear(&it);
  free(pBlk);
}
END_TEST

START_TEST(test_block_empty_block_is_valid_and_empty) {
  size_t n;
  uint8_t *p = buildBlock(NULL, 0, 16, &n);
  block_iter it;
  memset(&it, 0, sizeof it);
  QUICK_EQ(n, 4);
  QUICK_EQ(block_iter_init(&it, p, n, 1), WCS_OK);
  QUICK_EQ(block_iter_first(&it), WCS_OK);
  QUICK_ASSERT(!block_iter_valid(&it));
  QUICK_EQ(block_iter_last(&it), WCS_OK);
  QUICK_ASSERT(!block_iter_valid(&it));
  block_iter_clear(&it);
  free(p);
}
END_TEST

/* Run every move over possibly-bad block bytes; return the first error. */
static int exerciseBlock(const uint8_t *a, size_t n, int bIKey) {
  block_iter it;
  int rc, k;
  uint8_t t[16] = "apple\0\0\0\0\0\0\0\0";
  memset(&it, 0, sizeof it);
  rc = block_iter_init(&it, a, n, bIKey);
  if (rc == WCS_OK) {
    for (block_iter_first(&it), k = 0; block_iter_valid(&it) && k < 100000; k++)
      block_iter_next(&it);
    rc = it.rc;
  }
  if (rc == WCS_OK) {
    for (block_iter_last(&it), k = 0; block_iter_valid(&it) && k < 100000; k++)
      block_iter_prev(&it);
    rc = it.rc;
  }
  if (rc == WCS_OK) {
    block_iter_seek(&it, t, 13);
    if (block_iter_valid(&it)) block_iter_prev(&it);
    rc = it.rc;
  }
  block_iter_clear(&it);
  return rc;
}

START_TEST(test_block_truncations_are_errors_not_crashes) {
  Ent *a;
  size_t nBlk, n;
  uint8_t *pBlk;
  tu_seed(0);
  gSuffix = _i & 1;
  gSeek = _i >> 1;
  a = randomEnts(60, 1);
  pBlk = buildBlock(a, 60, 4, &nBlk);
  QUICK_EQ(exerciseBlock(pBlk, nBlk, 1), WCS_OK);
  for (n = 0; n < nBlk; n++) {
    /* A prefix of a block read as a whole block: its "restart count" is
    ** some entry byte; whatever happens must be in bounds. */
    uint8_t *p = malloc(n ? n : 1);
    memcpy(p, pBlk, n);
    (void)exerciseBlock(p, n, 1);
    (void)exerciseBlock(p, n, 0);
    free(p);
  }
  QUICK_EQ(exerciseBlock(pBlk, 3, 1), WCS_CORRUPT);
  free(pBlk);
  freeEnts(a, 60);
}
END_TEST

START_TEST(test_block_random_bytes_are_errors_not_crashes) {
  int k;
  tu_seed(0);
  for (k = 0; k < 3000; k++) {
    size_t n = tu_rand_range(200), nR;
    uint8_t *p = malloc(n + 1);
    tu_rand_bytes(p, n);
    if (n >= 8 && tu_rand_range(2)) {
      /* A plausible restart array so that entries get decoded. */
      nR = 1 + tu_rand_range(3);
      if (4 + 4 * nR <= n) {
        size_t i;
        wcs_put32(p + n - 4, (uint32_t)nR);
        for (i = 0; i < nR; i++) {
          wcs_put32(p + n - 4 - 4 * (nR - i),
                    i == 0 ? 0 : (uint32_t)tu_rand_range(n));
        }
      }
    }
    (void)exerciseBlock(p, n, (int)(k & 1));
    free(p);
  }
}
END_TEST

START_TEST(test_block_restart_key_with_shared_prefix_is_corrupt) {
  /* A restart point must store its key whole. */
  uint8_t a[sizeof aGoldenBlock];
  memcpy(a, aGoldenBlock, sizeof a);
  a[18] = 0x01; /* entry 2 claims one shared byte */
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_CORRUPT);
  memcpy(a, aGoldenBlock, sizeof a);
  a[1] = 0x30; /* entry 0's key runs past the entries */
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_CORRUPT);
  memcpy(a, aGoldenBlock, sizeof a);
  a[36] = 0x0b; /* restart count larger than the block */
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_CORRUPT);
}
END_TEST

/* Build keys azKey[0..n) (each nKey bytes) with one-byte values '1',
** '2', ... into a block with suffixes, restart interval nInterval and
** nSeekEvery; it must be aWant's nWant bytes exactly. */
static void assertBuildsGolden(const char *const *azKey, size_t nKey, int n,
                               int nInterval, int nSeekEvery,
                               const uint8_t *aWant, size_t nWant) {
  block_builder b;
  const uint8_t *p;
  size_t nGot;
  int i;
  block_builder_init(&b, nInterval);
  b.bSuffix = 1;
  b.nSeekEvery = nSeekEvery;
  for (i = 0; i < n; i++) {
    uint8_t v = (uint8_t)('1' + i);
    QUICK_EQ(block_builder_add(&b, (const uint8_t *)azKey[i], nKey, &v, 1),
             WCS_OK);
  }
  QUICK_EQ(block_builder_finish(&b, &p, &nGot), WCS_OK);
  QUICK_EQ(nGot, nWant);
  QUICK_ASSERT(memcmp(p, aWant, nWant) == 0);
  block_builder_free(&b);
}

START_TEST(test_block_suffix_golden_bytes) {
  static const char *const azKey[] = {"ax#9", "bx#9", "bz#9"};
  const char *azVal[] = {"1", "2", "3"};
  block_iter it;
  int i;
  assertBuildsGolden(azKey, 4, 3, 3, 0, aGoldenSuffixBlock,
                     sizeof aGoldenSuffixBlock);
  /* and it reads back, every way */
  memset(&it, 0, sizeof it);
  QUICK_EQ(block_iter_init(&it, aGoldenSuffixBlock, sizeof aGoldenSuffixBlock,
                           0),
           WCS_OK);
  QUICK_EQ(block_iter_first(&it), WCS_OK);
  for (i = 0; i < 3; i++) {
    QUICK_ASSERT(block_iter_valid(&it));
    QUICK_ASSERT(it.nKey == 4 && memcmp(it.pKey, azKey[i], 4) == 0);
    QUICK_ASSERT(it.nVal == 1 && it.pVal[0] == azVal[i][0]);
    QUICK_EQ(block_iter_next(&it), WCS_OK);
  }
  QUICK_ASSERT(!block_iter_valid(&it));
  QUICK_EQ(block_iter_seek(&it, (const uint8_t *)"by", 2), WCS_OK);
  QUICK_ASSERT(it.nKey == 4 && memcmp(it.pKey, "bz#9", 4) == 0);
  QUICK_EQ(block_iter_prev(&it), WCS_OK);
  QUICK_ASSERT(it.nKey == 4 && memcmp(it.pKey, "bx#9", 4) == 0);
  QUICK_EQ(block_iter_next(&it), WCS_OK);
  QUICK_ASSERT(it.nKey == 4 && memcmp(it.pKey, "bz#9", 4) == 0);
  block_iter_clear(&it);
}
END_TEST

/* The builder as first written, a byte at a time: the model whose bytes
** block_builder_add and block_builder_add_shared (which find the shared
** prefix and the suffix a word at a time, and write one-byte headers
** inline) must reproduce exactly. Finished with block_builder_finish. */
static int modelAdd(block_builder *p, const uint8_t *pKey, size_t nKey,
                    const uint8_t *pVal, size_t nVal) {
  size_t nShared = 0, nSuffix = 0, nUnshared;
  uint8_t aHead[4 * WCS_VARINT_MAX];
  int nHead = 0;
  if (p->nEntry == 0 || p->nSince >= p->nInterval) {
    if (wcs_buf_append32(&p->restarts, (uint32_t)p->data.n)) return WCS_NOMEM;
    p->nSince = 0;
  } else {
    size_t nMax = p->last.n < nKey ? p->last.n : nKey;
    while (nShared < nMax && p->last.a[nShared] == pKey[nShared])
      nShared++;
    if (p->bSuffix && nKey <= WCS_BLOCK_KEY_MAX) {
      nMax = nKey - nShared < p->base.n ? nKey - nShared : p->base.n;
      while (nSuffix < nMax &&
             p->base.a[p->base.n - 1 - nSuffix] == pKey[nKey - 1 - nSuffix])
        nSuffix++;
    }
  }
  nUnshared = nKey - nShared - nSuffix;
  nHead += wcs_put_varint(aHead + nHead, nShared);
  nHead += wcs_put_varint(aHead + nHead, nUnshared);
  if (p->bSuffix) nHead += wcs_put_varint(aHead + nHead, nSuffix);
  nHead += wcs_put_varint(aHead + nHead, nVal);
  if (wcs_buf_append(&p->data, aHead, (size_t)nHead) ||
      wcs_buf_append(&p->data, pKey + nShared, nUnshared) ||
      wcs_buf_append(&p->data, pVal, nVal)) {
    return WCS_NOMEM;
  }
  p->last.n = 0;
  if (wcs_buf_append(&p->last, pKey, nKey)) return WCS_NOMEM;
  if (p->bSuffix && nShared == 0 && nSuffix == 0) {
    p->base.n = 0;
    if (wcs_buf_append(&p->base, pKey, nKey)) return WCS_NOMEM;
  }
  p->nSince++;
  p->nEntry++;
  return WCS_OK;
}

static int cmpKeyBuf(const void *pa, const void *pb) {
  const wcs_buf *a = pa, *b = pb;
  return wcs_ukey_cmp(a->a, a->n, b->a, b->n);
}

/* Build the same entries through the model, block_builder_add and
** block_builder_add_shared (given the shared prefix the model finds, the
** way sst.c gives it), and compare the finished blocks byte for byte. Keys
** of 0 to 20 bytes from a four-letter alphabet with 00 and ff bytes share
** prefixes and suffixes of every length, end equal to their base, are
** prefixes of one another; some keys and values are 128 bytes or more, for
** the varint headers; intervals of 1 to 16, with and without suffixes.
** _i 1: keys of a few letters and a run of 00 bytes instead. */
START_TEST(test_block_builders_agree_with_model) {
  static const uint8_t aAlpha[] = {0x00, 0x01, 'a', 0xff};
  enum { NKEY = 2000 };
  static wcs_buf aKey[NKEY];
  uint8_t aVal[300];
  int nKey = 0, i, iRound;
  memset(aKey, 0, sizeof aKey);
  tu_seed(0);
  tu_rand_bytes(aVal, sizeof aVal);
  for (i = 0; i < NKEY; i++) {
    size_t n =
        tu_rand_range(8) == 0 ? 120 + tu_rand_range(40) : tu_rand_range(21);
    size_t k;
    QUICK_EQ(wcs_buf_reserve(&aKey[i], 200), WCS_OK);
    for (k = 0; k < n; k++) {
      aKey[i].a[k] = aAlpha[tu_rand_range(k < n / 2 ? 2 : 4)];
    }
    if (_i == 1) {
      /* a letter or three, then a run of 00 bytes, maybe one byte more:
      ** the unshared part of a key is often all suffix, however long */
      size_t nHead = 1 + tu_rand_range(3);
      n = nHead + (tu_rand_range(4) ? 8 + tu_rand_range(17) : tu_rand_range(8));
      for (k = 0; k < n; k++)
        aKey[i].a[k] = k < nHead ? (uint8_t)('a' + tu_rand_range(2)) : 0;
      if (tu_rand_range(2)) aKey[i].a[n++] = aAlpha[1 + tu_rand_range(2)];
    }
    aKey[i].n = n;
  }
  qsort(aKey, NKEY, sizeof aKey[0], cmpKeyBuf);
  for (i = 0; i < NKEY; i++) { /* strictly increasing: drop repeats */
    if (nKey > 0 && cmpKeyBuf(&aKey[nKey - 1], &aKey[i]) == 0) continue;
    if (nKey != i) {
      wcs_buf t = aKey[nKey];
      aKey[nKey] = aKey[i];
      aKey[i] = t;
    }
    nKey++;
  }
  for (iRound = 0; iRound < 16; iRound++) {
    static const int aInterval[] = {1, 2, 3, 16};
    int nInterval = aInterval[iRound % 4], bSuffix = (iRound / 4) % 2;
    int iFrom = iRound / 8 ? nKey / 3 : 0; /* another first key */
    block_builder m, b, s;
    const uint8_t *pm, *pb, *ps;
    size_t nm, nb, ns;
    block_builder_init(&m, nInterval);
    block_builder_init(&b, nInterval);
    block_builder_init(&s, nInterval);
    m.bSuffix = b.bSuffix = s.bSuffix = bSuffix;
    for (i = iFrom; i < nKey; i++) {
      size_t nVal =
          tu_rand_range(6) == 0 ? 128 + tu_rand_range(170) : tu_rand_range(20);
      size_t nShared = 0;
      if (i > iFrom) {
        size_t nMax = aKey[i - 1].n < aKey[i].n ? aKey[i - 1].n : aKey[i].n;
        while (nShared < nMax && aKey[i - 1].a[nShared] == aKey[i].a[nShared])
          nShared++;
      }
      QUICK_EQ(modelAdd(&m, aKey[i].a, aKey[i].n, aVal, nVal), WCS_OK);
      QUICK_EQ(block_builder_add(&b, aKey[i].a, aKey[i].n, aVal, nVal), WCS_OK);
      QUICK_EQ(block_builder_add_shared(&s, aKey[i].a, aKey[i].n, nShared, aVal,
                                        nVal),
               WCS_OK);
      QUICK_EQ(block_builder_size(&b), block_builder_size(&m));
      QUICK_EQ(block_builder_size(&s), block_builder_size(&m));
    }
    QUICK_EQ(block_builder_finish(&m, &pm, &nm), WCS_OK);
    QUICK_EQ(block_builder_finish(&b, &pb, &nb), WCS_OK);
    QUICK_EQ(block_builder_finish(&s, &ps, &ns), WCS_OK);
    QUICK_EQ(nb, nm);
    QUICK_EQ(ns, nm);
    QUICK_ASSERT(memcmp(pb, pm, nm) == 0);
    QUICK_ASSERT(memcmp(ps, pm, nm) == 0);
    QUICK_EQ(exerciseBlock(pm, nm, 0), WCS_OK);
    block_builder_free(&m);
    block_builder_free(&b);
    block_builder_free(&s);
  }
  for (i = 0; i < NKEY; i++)
    wcs_buf_free(&aKey[i]);
}
END_TEST

/* The model builder m and the one under test s wrote the same bytes; both
** are freed. */
static void sameBlockFree(block_builder *m, block_builder *s) {
  const uint8_t *pm, *ps;
  size_t nm, ns;
  QUICK_EQ(block_builder_finish(m, &pm, &nm), WCS_OK);
  QUICK_EQ(block_builder_finish(s, &ps, &ns), WCS_OK);
  QUICK_EQ(ns, nm);
  QUICK_ASSERT(memcmp(ps, pm, nm) == 0);
  block_builder_free(m);
  block_builder_free(s);
}

/* Keys a suffix and a prefix can each take whole: equal to the base but
** for one byte at either end, the base a suffix of the key, keys shorter
** than a word, a suffix reaching back to the shared prefix. */
START_TEST(test_block_builders_agree_on_edge_keys) {
  static const char *const azKey[] = {"",
                                      "\x00",
                                      "\x00\x00",
                                      "\x00\x00\x00\x00\x00\x00\x00\x00",
                                      "\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                                      "\x00\x01",
                                      "a",
                                      "aaaaaaaaaaaaaaaaaaaa",
                                      "aaaaaaaaaaaaaaaaaaab",
                                      "aaaaaaaab",
                                      "aaaaaaaab\x00",
                                      "aaaaaaaabaaaaaaaab",
                                      "b",
                                      "baaaaaaaab",
                                      "bbaaaaaaab",
                                      "bbbbbbbbbbbbbbbbbbb",
                                      "bbbbbbbbbbbbbbbbbbbb",
                                      "bbbbbbbbbbbbbbbbbbbbb",
                                      "c\x00\x00\x00\x00\x00\x00\x00\x00",
                                      "c\x01\x00\x00\x00\x00\x00\x00\x00",
                                      "cc\x00\x00\x00\x00\x00\x00\x00",
                                      "d",
                                      "da",
                                      "dab",
                                      "dabc",
                                      "dabcdefgh",
                                      "dabcdefghi"};
  /* lengths: strlen stops at 00 bytes, so give them */
  static const int anKey[] = {0,  1,  2,  8,  9, 2, 1, 20, 20, 9, 10, 18, 1, 10,
                              10, 19, 20, 21, 9, 9, 9, 1,  2,  3, 4,  9,  10};
  int nKey = (int)(sizeof anKey / sizeof anKey[0]), iRound, i;
  for (iRound = 0; iRound < 8; iRound++) {
    int nInterval = 1 + iRound % 4, bSuffix = iRound / 4;
    block_builder m, s;
    block_builder_init(&m, nInterval);
    block_builder_init(&s, nInterval);
    m.bSuffix = s.bSuffix = bSuffix;
    for (i = 0; i < nKey; i++) {
      const uint8_t *k = (const uint8_t *)azKey[i];
      size_t nShared = 0;
      if (i > 0) {
        const uint8_t *l = (const uint8_t *)azKey[i - 1];
        int nMax = anKey[i - 1] < anKey[i] ? anKey[i - 1] : anKey[i];
        QUICK_ASSERT(
            wcs_ukey_cmp(l, (size_t)anKey[i - 1], k, (size_t)anKey[i]) < 0);
        while ((int)nShared < nMax && l[nShared] == k[nShared])
          nShared++;
      }
      QUICK_EQ(modelAdd(&m, k, (size_t)anKey[i], k, (size_t)anKey[i]), WCS_OK);
      QUICK_EQ(block_builder_add_shared(&s, k, (size_t)anKey[i], nShared, k,
                                        (size_t)anKey[i]),
               WCS_OK);
    }
    sameBlockFree(&m, &s);
  }
  /* A key whose unshared bytes are all suffix, found in the word that
  ** also compares the shared prefix: after base "aab"+14 zeros and "ba"+3
  ** zeros (a suffix of 3, so not a base), "bb"+14 zeros shares "b" and
  ** takes 15 bytes from the base (16 match). The same shapes shorter than
  ** a word and around 8 and 16 bytes. */
  for (iRound = 0; iRound < 24; iRound++) {
    int nZ = iRound, k;
    uint8_t aK[3][40];
    size_t anK[3];
    block_builder m, s;
    memcpy(aK[0], "aab", 3);
    memcpy(aK[1], "ba", 2);
    memcpy(aK[2], "bb", 2);
    memset(aK[0] + 3, 0, (size_t)nZ);
    memset(aK[1] + 2, 0, 3);
    memset(aK[2] + 2, 0, (size_t)nZ);
    anK[0] = 3 + (size_t)nZ;
    anK[1] = 2 + 3;
    anK[2] = 2 + (size_t)nZ;
    block_builder_init(&m, 16);
    block_builder_init(&s, 16);
    m.bSuffix = s.bSuffix = 1;
    for (k = 0; k < 3; k++) {
      size_t nShared = k == 2 ? 1 : 0;
      QUICK_EQ(modelAdd(&m, aK[k], anK[k], aK[k], 1), WCS_OK);
      QUICK_EQ(block_builder_add_shared(&s, aK[k], anK[k], nShared, aK[k], 1),
               WCS_OK);
    }
    sameBlockFree(&m, &s);
  }
}
END_TEST

START_TEST(test_block_bad_suffix_is_corrupt) {
  uint8_t a[sizeof aGoldenSuffixBlock];
  memcpy(a, aGoldenSuffixBlock, sizeof a);
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_OK);
  a[11] = 0x05; /* entry 1: a suffix longer than the 4-byte base */
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_CORRUPT);
  memcpy(a, aGoldenSuffixBlock, sizeof a);
  a[2] = 0x01; /* entry 0, a restart point: a suffix with no base */
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_CORRUPT);
  memcpy(a, aGoldenSuffixBlock, sizeof a);
  a[sizeof a - 1] = 0x00; /* read without suffixes: the lengths are off */
  QUICK_EQ(exerciseBlock(a, sizeof a, 0), WCS_CORRUPT);
}
END_TEST

/* Keys shaped like the engine's cells: a row, a column, and a 16-byte tail
** (timestamp and trailer) that most neighbours share. Suffixes keep the
** tails out of the entries: every move agrees with the model, and the
** block is well under two thirds of the plain one. */
START_TEST(test_block_suffixes_shrink_cell_keys) {
  enum { N = 600 };
  Ent *a = calloc(N, sizeof *a);
  size_t nPlain, nSuffix;
  uint8_t *pPlain, *pSuffix;
  int i;
  for (i = 0; i < N; i++) {
    char z[64];
    int nz = snprintf(z, sizeof z, "dev#%06d#%c", i / 3, "abc"[i % 3]);
    a[i].nKey = (size_t)nz + 16;
    a[i].pKey = malloc(a[i].nKey);
    memcpy(a[i].pKey, z, (size_t)nz);
    memset(a[i].pKey + nz, i % 50 == 0 ? 0x7f : 0x5a, 8); /* timestamp */
    memset(a[i].pKey + nz + 8, 0, 8);                     /* seq 0 trailer */
    a[i].pKey[nz + 8] = WCS_KT_PUT;
    a[i].nVal = 8;
    a[i].pVal = malloc(8);
    memset(a[i].pVal, i, 8);
  }
  gSuffix = 0;
  pPlain = buildBlock(a, N, 16, &nPlain);
  gSuffix = 1;
  pSuffix = buildBlock(a, N, 16, &nSuffix);
  QUICK_ASSERT(nSuffix * 3 < nPlain * 2);
  assertReads(pSuffix, nSuffix, a, N, 7);
  free(pPlain);
  free(pSuffix);
  freeEnts(a, N);
}
END_TEST

/* Seek points (doc/format.md, "Seek points"), restart interval 9, one
** every 3 entries: two slots, for entries [3, 6) and [6, 9). Entry 3 "bx1"
** shares with its predecessor "ay1" what it shares with the restart key
** "ax1" (nothing): the first slot, offset 20. Entry 6 "by1" shares "b"
** with its predecessor "bx3", one byte more than with "ax1": the second
** slot, offset 38 with the flag and the byte "b". The entries are those
** of a block without seek points. */
static const uint8_t aGoldenSeekBlock[] = {
    0x00, 0x03, 0x00, 0x01, 'a', 'x', '1', '1', /* 0 @0: "ax1", the base */
    0x02, 0x01, 0x00, 0x01, '2', '2',           /* 1 @8: "ax" "2" */
    0x01, 0x01, 0x01, 0x01, 'y', '3',           /* 2 @14: "a" "y" "1" */
    0x00, 0x01, 0x02, 0x01, 'b', '4',           /* 3 @20: "b" "x1" */
    0x02, 0x01, 0x00, 0x01, '2', '5',           /* 4 @26: "bx" "2" */
    0x02, 0x01, 0x00, 0x01, '3', '6',           /* 5 @32: "bx" "3" */
    0x01, 0x01, 0x01, 0x01, 'y', '7',           /* 6 @38: "b" "y" "1" */
    0x02, 0x01, 0x00, 0x01, '2', '8',           /* 7 @44: "by" "2" */
    0x02, 0x01, 0x00, 0x01, '3', '9',           /* 8 @50: "by" "3" */
    0x14, 0x00, 0x00,                           /* slot: 20 */
    0x26, 0x80, 'b',                            /* slot: 38 | EXTRA, "b" */
    0x00, 0x00, 0x00, 0x00,                     /* restart 0 */
    0x01, 0x00, 0x00, 0xc2, /* 1 | 2 slots << 24 | SEEK | SUFFIX */
};

START_TEST(test_block_seek_golden_bytes) {
  static const char *const azKey[] = {"ax1", "ax2", "ay1", "bx1", "bx2",
                                      "bx3", "by1", "by2", "by3"};
  block_iter it;
  int i;
  assertBuildsGolden(azKey, 3, 9, 9, 3, aGoldenSeekBlock,
                     sizeof aGoldenSeekBlock);

  /* backwards, each step back past the reverse cache decodes from the
  ** nearest seek point before it: the cache holds [6, 9), then [3, 6),
  ** then [0, 3), not the whole interval */
  memset(&it, 0, sizeof it);
  QUICK_EQ(block_iter_init(&it, aGoldenSeekBlock, sizeof aGoldenSeekBlock, 0),
           WCS_OK);
  QUICK_EQ(block_iter_last(&it), WCS_OK);
  for (i = 8; i >= 0; i--) {
    QUICK_ASSERT(block_iter_valid(&it));
    QUICK_EQ(it.nKey, 3);
    QUICK_ASSERT(memcmp(it.pKey, azKey[i], 3) == 0);
    QUICK_EQ(it.pVal[0], '1' + i);
    QUICK_EQ(it.nPrev, 3);
    QUICK_EQ(block_iter_prev(&it), WCS_OK);
  }
  QUICK_ASSERT(!block_iter_valid(&it));
  /* forwards, the seek points read as any entry */
  QUICK_EQ(block_iter_first(&it), WCS_OK);
  for (i = 0; i < 9; i++) {
    QUICK_ASSERT(block_iter_valid(&it) && memcmp(it.pKey, azKey[i], 3) == 0);
    QUICK_EQ(block_iter_next(&it), WCS_OK);
  }
  QUICK_ASSERT(!block_iter_valid(&it));
  block_iter_clear(&it);
}
END_TEST

/* A byte limit on the restart interval: a restart point once the entries
** since the last one take nIntervalBytes, before nInterval entries; the
** restart array then lists exactly those offsets, and every move reads the
** block as a model does. */
START_TEST(test_block_restart_points_by_bytes) {
  enum { N = 500 };
  Ent *a = stemEnts(N, "row#");
  size_t anLimit[3] = {0, 100, 400}, k;
  for (k = 0; k < 3; k++) {
    block_builder b;
    const uint8_t *p;
    size_t n, o = 0, oLast = 0;
    uint32_t nWant = 0, nGot;
    int i;
    block_builder_init(&b, 64);
    b.bSuffix = 1;
    b.nIntervalBytes = anLimit[k];
    for (i = 0; i < N; i++) {
      size_t nBefore = b.data.n;
      int bRestart = i == 0 || i - (int)oLast >= 64 ||
                     (anLimit[k] && nBefore - o >= anLimit[k]);
      QUICK_EQ(block_builder_add(&b, a[i].pKey, a[i].nKey, a[i].pVal,
                                 a[i].nVal),
               WCS_OK);
      if (bRestart) {
        /* a restart entry starts with shared == 0 and suffix == 0 */
        QUICK_EQ(b.data.a[nBefore], 0);
        QUICK_EQ(b.restarts.n / 4, nWant + 1);
        QUICK_EQ(wcs_get32(b.restarts.a + 4 * nWant), nBefore);
        nWant++;
        o = nBefore;
        oLast = (size_t)i;
      }
    }
    QUICK_EQ(block_builder_finish(&b, &p, &n), WCS_OK);
    nGot = wcs_get32(p + n - 4) & ~WCS_BLOCK_SUFFIX;
    QUICK_EQ(nGot, nWant);
    if (anLimit[k] == 100) QUICK_ASSERT(nWant > N / 16);
    if (anLimit[k] == 0) QUICK_EQ(nWant, (N + 63) / 64);
    assertReads(p, n, a, N, 3);
    block_builder_free(&b);
  }
  freeEnts(a, N);
}
END_TEST

START_TEST(test_block_frame_round_trips_raw_and_zstd) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  wcs_buf out = {0}, scratch = {0};
  static uint8_t aText[20000], aNoise[20000], aBack[20000];
  size_t nStored, i;
  int type;
  uint32_t nRaw;
  const char *zWhy;
  tu_seed(0);
  for (i = 0; i < sizeof aText; i++)
    aText[i] = (uint8_t)("row#key#"[i % 8] + (i / 800) % 3);
  tu_rand_bytes(aNoise, sizeof aNoise);

  /* Compressible: stored as zstd, decompresses to the same bytes. */
  QUICK_EQ(block_frame(aText, sizeof aText, 3, cctx, &scratch, &out, &nStored),
           WCS_OK);
  QUICK_ASSERT((nStored) < (sizeof aText / 2));
  QUICK_EQ(block_check(out.a, out.n, &type, &nRaw, &zWhy), WCS_OK);
  QUICK_EQ(type, WCS_BLOCK_ZSTD);
  QUICK_EQ(nRaw, sizeof aText);
  QUICK_EQ(block_inflate(out.a, nStored, aBack, nRaw, &zWhy), WCS_OK);
  QUICK_ASSERT(memcmp(aBack, aText, sizeof aText) == 0);
  /* The raw length bounds the output: a smaller buffer is refused. */
  QUICK_EQ(block_inflate(out.a, nStored, aBack, nRaw - 1, &zWhy), WCS_CORRUPT);

  /* Incompressible: kept raw. */
  out.n = 0;
  QUICK_EQ(
      block_frame(aNoise, sizeof aNoise, 3, cctx, &scratch, &out, &nStored),
      WCS_OK);
  QUICK_EQ(nStored, sizeof aNoise);
  QUICK_EQ(block_check(out.a, out.n, &type, &nRaw, &zWhy), WCS_OK);
  QUICK_EQ(type, WCS_BLOCK_RAW);
  QUICK_ASSERT(memcmp(out.a, aNoise, sizeof aNoise) == 0);

  /* Saving less than 12.5% keeps it raw: half noise, half text. */
  memcpy(aBack, aNoise, sizeof aBack);
  memcpy(aBack + 18000, aText, 2000);
  out.n = 0;
  QUICK_EQ(block_frame(aBack, sizeof aBack, 3, cctx, &scratch, &out, &nStored),
           WCS_OK);
  QUICK_EQ(nStored, sizeof aBack);

  ZSTD_freeCCtx(cctx);
  wcs_buf_free(&out);
  wcs_buf_free(&scratch);
}
END_TEST

START_TEST(test_block_check_detects_every_flipped_byte) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  wcs_buf out = {0}, scratch = {0};
  uint8_t aText[3000];
  size_t nStored, i;
  int lvl, type;
  uint32_t nRaw;
  const char *zWhy;
  for (i = 0; i < sizeof aText; i++)
    aText[i] = (uint8_t)("abcabd"[i % 6]);
  for (lvl = 0; lvl <= 3; lvl += 3) {
    out.n = 0;
    block_frame(aText, sizeof aText, lvl, cctx, &scratch, &out, &nStored);
    for (i = 0; i < out.n; i++) {
      int bit;
      for (bit = 0; bit < 8; bit++) {
        out.a[i] ^= (uint8_t)(1 << bit);
        QUICK_EQ(block_check(out.a, out.n, &type, &nRaw, &zWhy), WCS_CORRUPT);
        out.a[i] ^= (uint8_t)(1 << bit);
      }
    }
    QUICK_EQ(block_check(out.a, out.n, &type, &nRaw, &zWhy), WCS_OK);
    for (i = 0; i < out.n; i++) {
      QUICK_EQ(block_check(out.a, i, &type, &nRaw, &zWhy), WCS_CORRUPT);
    }
  }
  ZSTD_freeCCtx(cctx);
  wcs_buf_free(&out);
  wcs_buf_free(&scratch);
}
END_TEST

START_TEST(test_block_inflate_rejects_garbage_frames) {
  uint8_t aIn[256], aOut[512];
  const char *zWhy;
  int k;
  tu_seed(0);
  for (k = 0; k < 2000; k++) {
    size_t n = tu_rand_range(sizeof aIn);
    tu_rand_bytes(aIn, n);
    if (n >= 4 && (k & 1)) wcs_put32(aIn, 0xFD2FB528u); /* zstd magic */
    (void)block_inflate(aIn, n, aOut, tu_rand_range(sizeof aOut), &zWhy);
  }
}
END_TEST

Suite *storage_block_suite(void);
Suite *storage_block_suite(void) {
  Suite *s = suite_create("storage_block");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, resetFormat, NULL);
  tcase_add_test(tc, test_block_golden_bytes);
  tcase_add_test(tc, test_block_reads_golden_block);
  tcase_add_loop_test(tc, test_block_cursor_agrees_with_sorted_array, 0,
                      4); /* _i: suffixes, seek points */
  tcase_add_loop_test(tc, test_block_cursor_orders_internal_keys, 0,
                      4); /* _i: suffixes, seek points */
  tcase_add_loop_test(tc, test_block_seek_aid_agrees_with_model, 0,
                      4); /* _i: suffixes, seek points */
  tcase_add_test(tc, test_block_versions_of_one_key_newest_first);
  tcase_add_test(tc, test_block_empty_block_is_valid_and_empty);
  tcase_add_loop_test(tc, test_block_truncations_are_errors_not_crashes, 0,
                      4); /* _i: suffixes, seek points */
  tcase_add_test(tc, test_block_random_bytes_are_errors_not_crashes);
  tcase_add_test(tc, test_block_restart_key_with_shared_prefix_is_corrupt);
  tcase_add_test(tc, test_block_suffix_golden_bytes);
  tcase_add_test(tc, test_block_seek_golden_bytes);
  tcase_add_test(tc, test_block_bad_suffix_is_corrupt);
  tcase_add_loop_test(tc, test_block_builders_agree_with_model, 0, 2);
  tcase_add_test(tc, test_block_builders_agree_on_edge_keys);
  tcase_add_test(tc, test_block_suffixes_shrink_cell_keys);
  tcase_add_test(tc, test_block_restart_points_by_bytes);
  tcase_add_test(tc, test_block_frame_round_trips_raw_and_zstd);
  tcase_add_test(tc, test_block_check_detects_every_flipped_byte);
  tcase_add_test(tc, test_block_inflate_rejects_garbage_frames);
  suite_add_tcase(s, tc);
  return s;
}
