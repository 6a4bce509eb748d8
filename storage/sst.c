/*
** sst.c — sorted files: the builder that writes one, the reader that opens
** and checks one, and the iterator over its entries. The contract is sst.h;
** every byte of the format is in doc/format.md ("Sorted files").
**
** Layout (all integers little-endian; "handle" = u64 offset + u64 stored
** size in the footer, varint offset + varint stored size in the index):
**
**     data block 0 .. data block n-1        each followed by a block trailer
**     bloom block                           (block.h)
**     range-tombstone block
**     properties block
**     index block
**     footer (WCS_SST_FOOTER = 80 bytes):
**       bloom handle | range-tombstone handle | properties handle
**       | index handle | version u32 | masked CRC-32C of the 68 bytes
**       before it (u32) | magic "\x89WST\r\n\x1a\n"
**
** The blocks are contiguous: data blocks start at offset 0, each block
** (trailer included) ends where the next begins, and the index ends where
** the footer begins. The reader insists on that, so a handle that points
** anywhere else is corruption even before a CRC is checked.
**
** Index: one entry per data block, in a block of the same layout as data
** blocks (block.h) but with plain user keys: a separator S_i with
** (every user key in block i) <= S_i <= (every user key in block i+1),
** chosen short (LevelDB's idea: the shortest string in between), and the
** value varint offset | varint stored size. A seek for user key u starts at
** the first block whose separator is >= u; versions of one user key may
** straddle two blocks, which the iterator handles by moving on. The reader
** checks every meta block at open; it keeps the properties and range
** tombstones, and puts the index (decoded into an array: binary search, no
** block parsing) and the bloom filter into the block cache as one entry
** (sst_tmeta below), which reads pin while they use it and which is read
** and checked again after an eviction. Data blocks are read through the
** block cache; descriptors through the cache's file table, which keeps at
** most nMax of them open.
**
** Properties: a list of (tag varint, length varint, value) records, tags
** WCS_SST_PROP_* in sst.h; readers skip tags they do not know.
** Range tombstones: varint count, then per tombstone varint nStart | start
** | varint (nEnd + 1, or 0 for "unbounded") | end | varint seq, sorted by
** start ascending, then seq descending.
*/
#include "storage/sst.h"

#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/block.h"
#include "storage/bloom.h"
#include "storage/ikey.h"

#define SST_OUT_FLUSH     (256 * 1024) /* bytes buffered before an append */
#define SST_INDEX_RESTART 16           /* index entries per restart point */
#define SST_DEF_BLOCK     8192
#define SST_MIN_BLOCK     64 /* tiny blocks for tests */
#define SST_MAX_BLOCK     (16 << 20)

static int corruptMsg(char **pzErr, int rc, const char *zWhat,
                      const char *zPath, uint64_t iOff, const char *zWhy) {
  if (rc == WCS_NOMEM) {
    return wcs_seterr(pzErr, rc, "out of memory reading %s", zPath);
  }
  /* what to do, as the log reader says it for a damaged record */
  return wcs_seterr(pzErr, rc, "corrupt %s at offset %llu of %s: %s%s", zWhat,
                    (unsigned long long)iOff, zPath, zWhy,
                    rc == WCS_CORRUPT
                        ? " (the file changed after it was written: the disk "
                          "or another program damaged it; restore the store "
                          "from a backup)"
                        : "");
}

void sst_meta_clear(sst_meta *p) {
  if (p == NULL) return;
  free(p->pSmallest);
  free(p->pLargest);
  memset(p, 0, sizeof *p);
}

uint64_t sst_bloom_hash(const void *p, size_t n) {
  return bloom_hash(p, n);
}

/* ==================================================================
** Builder
** ================================================================== */

typedef struct builder_del {
  uint8_t *a;     /* start bytes then end bytes, one allocation */
  size_t nStart;  /* bytes of start at a */
  size_t nEnd;    /* bytes of end at a + nStart */
  int bUnbounded; /* no end: to the end of the key space */
  uint64_t seq;   /* sequence number of the range delete */
} builder_del;

struct sst_builder {
  wcs_env *pEnv;           /* where the file is written */
  wcs_file *pFile;         /* the open file; NULL after close */
  char *zPath;             /* path, for messages and abandon */
  uint64_t iFile;          /* file number */
  sst_options opt;         /* validated copy */
  int rc;                  /* first error; sticky */
  block_builder data;      /* the data block being filled */
  block_builder index;     /* index entries so far */
  wcs_buf lastKey;         /* last internal key added */
  wcs_buf firstKey;        /* first internal key added */
  wcs_buf sep;             /* scratch: separator under construction */
  int bPending;            /* last data block's index entry awaits the next
                           ** key (to choose a short separator) */
  uint64_t iPendOff;       /* that block's offset */
  uint64_t nPendSize;      /* that block's stored size */
  wcs_buf out;             /* framed bytes not yet appended to the file */
  uint64_t nWritten;       /* bytes appended to the file so far */
  ZSTD_CCtx *pCCtx;        /* reused for every block; NULL if raw */
  wcs_buf zbuf;            /* compression scratch */
  bloom_builder bloom;     /* hashes of keys or prefixes */
  int bHavePrefix;         /* prefix mode: a prefix was hashed, */
  size_t nPrefix;          /* the last one's bytes, which are */
  int bPrefixInLast;       /* lastKey's first when the last key added has
                           ** that prefix, else */
  wcs_buf lastPrefix;      /* these */
  builder_del *aDel;       /* range tombstones added */
  int nDel, nDelAlloc;     /* used and allocated slots of aDel */
  uint64_t nEntries;       /* internal keys added */
  uint64_t nRaw;           /* key + value bytes added */
  uint64_t minSeq, maxSeq; /* over entries and tombstones */
  uint64_t nBlocks;        /* data blocks written */
  int bWarmed;             /* a block went into opt.pWarm */
  void *pNote;             /* the file note's summary (opt.xNoteBegin's);
                           ** NULL: none */
};

static int builderErr(sst_builder *p, int rc, char **pzErr) {
  if (rc == WCS_NOMEM) {
    wcs_seterr(pzErr, rc, "out of memory writing %s", p->zPath);
  }
  if (p->rc == WCS_OK) p->rc = rc;
  return rc;
}

int sst_builder_new(wcs_env *pEnv, const char *zPath, uint64_t iFile,
                    const sst_options *pOpt, sst_builder **pp, char **pzErr) {
  sst_builder *p = calloc(1, sizeof *p);
  int rc;
  *pp = NULL;
  if (p == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  p->pEnv = pEnv;
  p->iFile = iFile;
  p->opt = *pOpt;
  if (p->opt.nBlockSize <= 0) p->opt.nBlockSize = SST_DEF_BLOCK;
  if (p->opt.nBlockSize < SST_MIN_BLOCK) p->opt.nBlockSize = SST_MIN_BLOCK;
  if (p->opt.nBlockSize > SST_MAX_BLOCK) p->opt.nBlockSize = SST_MAX_BLOCK;
  if (p->opt.nRestart <= 0) p->opt.nRestart = 16;
  if (p->opt.iZstdLevel > ZSTD_maxCLevel()) {
    p->opt.iZstdLevel = ZSTD_maxCLevel();
  }
  if (p->opt.nBloomBits < 0) p->opt.nBloomBits = 0;
  if (p->opt.nBloomBits > 100) p->opt.nBloomBits = 100;
  block_builder_init(&p->data, p->opt.nRestart);
  if (p->opt.nRestartBytes > 0) {
    p->data.nIntervalBytes = (size_t)p->opt.nRestartBytes;
  }
  p->data.bSuffix = p->opt.bSuffix != 0;
  if (!p->opt.bSuffix || p->opt.nSeekEvery < 0) p->opt.nSeekEvery = 0;
  p->data.nSeekEvery = p->opt.nSeekEvery;
  block_builder_init(&p->index, SST_INDEX_RESTART);
  bloom_builder_init(&p->bloom, p->opt.nBloomBits);
  /* no summary (out of memory): the file just has no note */
  if (p->opt.xNoteBegin) p->pNote = p->opt.xNoteBegin(p->opt.pNoteCtx);
  p->zPath = strdup(zPath);
  if (p->zPath == NULL) {
    free(p);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  if (p->opt.iZstdLevel > 0) {
    p->pCCtx = ZSTD_createCCtx();
    if (p->pCCtx == NULL) {
      free(p->zPath);
      free(p);
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
    }
  }
  rc = pEnv->xOpen(pEnv, zPath, WCS_OPEN_WRITE | WCS_OPEN_TRUNCATE, &p->pFile,
                   pzErr);
  if (rc != WCS_OK) {
    ZSTD_freeCCtx(p->pCCtx);
    free(p->zPath);
    free(p);
    return rc;
  }
  *pp = p;
  return WCS_OK;
}

static void builderFree(sst_builder *p) {
  int i;
  if (p->pNote) p->opt.xNoteEnd(p->pNote, 1, NULL, NULL);
  if (p->pFile) p->pEnv->xClose(p->pFile);
  block_builder_free(&p->data);
  block_builder_free(&p->index);
  bloom_builder_free(&p->bloom);
  wcs_buf_free(&p->lastKey);
  wcs_buf_free(&p->firstKey);
  wcs_buf_free(&p->sep);
  wcs_buf_free(&p->out);
  wcs_buf_free(&p->zbuf);
  wcs_buf_free(&p->lastPrefix);
  for (i = 0; i < p->nDel; i++)
    free(p->aDel[i].a);
  free(p->aDel);
  ZSTD_freeCCtx(p->pCCtx);
  free(p->zPath);
  free(p);
}

static int flushOut(sst_builder *p, char **pzErr) {
  int rc = WCS_OK;
  if (p->out.n > 0) {
    rc = p->pEnv->xAppend(p->pFile, p->out.a, p->out.n, pzErr);
    if (rc == WCS_OK) {
      p->nWritten += p->out.n;
      p->out.n = 0;
    }
  }
  return rc;
}

/* Frame block contents a[0..n) at the end of the output; *piOff and *pnSize
** get its handle. */
static int writeBlock(sst_builder *p, const uint8_t *a, size_t n, int iLevel,
                      uint64_t *piOff, uint64_t *pnSize, char **pzErr) {
  size_t nStored;
  int rc;
  if (n > WCS_BLOCK_MAX_RAW) {
    return wcs_seterr(pzErr, WCS_TOOBIG, "block of %zu bytes is too big for %s",
                      n, p->zPath);
  }
  *piOff = p->nWritten + p->out.n;
  rc = block_frame(a, n, iLevel, p->pCCtx, &p->zbuf, &p->out, &nStored);
  if (rc != WCS_OK) return rc;
  *pnSize = nStored;
  if (p->out.n >= SST_OUT_FLUSH) rc = flushOut(p, pzErr);
  return rc;
}

/* Put the data block just written at iOff, whose contents a[0..n) are
** what a reader decompresses, into the cache opt.pWarm with its seek aid,
** if that evicts no block. Best effort: a block left out is read from the
** file like any other. */
static void warmBlock(sst_builder *p, const uint8_t *a, size_t n,
                      uint64_t iOff) {
  wcs_cache_handle *h;
  block_aid *pAid = NULL;
  size_t nAid = 0;
  /* the aid: up to a quarter of a block (as fillBlock reckons it) */
  if (!wcs_cache_has_room(p->opt.pWarm, p->iFile, iOff, n + n / 4)) return;
  h = wcs_cache_alloc(n);
  if (h == NULL) return;
  if (n) memcpy(wcs_cache_data(h), a, n);
  if (block_aid_build(wcs_cache_data(h), n, &pAid, &nAid) != WCS_OK) {
    wcs_cache_release(NULL, h);
    return;
  }
  wcs_cache_set_aux(h, pAid, nAid);
  if (nAid > n / 4 &&
      !wcs_cache_has_room(p->opt.pWarm, p->iFile, iOff, n + nAid)) {
    wcs_cache_release(NULL, h); /* the aid came out larger: no room */
    return;
  }
  p->bWarmed = 1;
  wcs_cache_release(p->opt.pWarm,
                    wcs_cache_insert(p->opt.pWarm, p->iFile, iOff, h));
}

/* A file that will not be read: its blocks leave the cache they went to
** (its number is never used again, but they would hold the room). */
static void unwarm(sst_builder *p) {
  if (p->bWarmed) wcs_cache_evict_file(p->opt.pWarm, p->iFile);
  p->bWarmed = 0;
}

static int flushData(sst_builder *p, char **pzErr) {
  const uint8_t *a;
  size_t n;
  int rc = block_builder_finish(&p->data, &a, &n);
  if (rc == WCS_OK) {
    rc = writeBlock(p, a, n, p->opt.iZstdLevel, &p->iPendOff, &p->nPendSize,
                    pzErr);
  }
  if (rc == WCS_OK && p->opt.pWarm) warmBlock(p, a, n, p->iPendOff);
  if (rc == WCS_OK) {
    p->bPending = 1;
    p->nBlocks++;
    block_builder_reset(&p->data);
  }
  return rc;
}

/* Add the pending index entry. Its separator S satisfies a <= S <= b for
** a = the block's last user key and b = the next block's first (pB NULL:
** no next block, S = a); S < b whenever a < b, so a seek for b goes
** straight to the block holding b. nCommon is the length of the common
** prefix of the last internal key and b's (0 without b). */
static int addIndexEntry(sst_builder *p, const uint8_t *pB, size_t nB,
                         size_t nCommon) {
  const uint8_t *pA = p->lastKey.a;
  size_t nA = p->lastKey.n - WCS_IKEY_TRAILER, nSep = nA;
  uint8_t aVal[2 * WCS_VARINT_MAX];
  int nVal, rc;
  p->sep.n = 0;
  if (wcs_buf_append(&p->sep, pA, nA)) return WCS_NOMEM;
  if (pB != NULL) {
    size_t nMin = nA < nB ? nA : nB;
    size_t i = nCommon < nMin ? nCommon : nMin; /* a[i] != b[i] if i < nMin */
    if (i < nMin && pA[i] < 0xff && pA[i] + 1 < pB[i]) {
      p->sep.a[i]++;
      nSep = i + 1;
    }
  }
  /* The last block keeps a itself: a seek past the file's last user key
  ** then finds no block at all, with no block read. */
  nVal = wcs_put_varint(aVal, p->iPendOff);
  nVal += wcs_put_varint(aVal + nVal, p->nPendSize);
  rc = block_builder_add(&p->index, p->sep.a, nSep, aVal, (size_t)nVal);
  p->bPending = 0;
  return rc;
}

/* Whether internal key pIKey (nIKey >= WCS_IKEY_TRAILER bytes) comes after
** the last key added (there is one) in internal-key order, as
** wcs_ikey_cmp would say; *pnShared gets the length of their common
** prefix. One pass over the bytes the two keys share answers the order
** check, the data block's shared prefix (block_builder_add_shared), the
** filter's "same user key" and "same prefix" tests and how much of the
** kept last key changes: the engine's neighbouring cell keys share 30 or
** more of their 50-odd bytes, which each of those would read again. */
static inline int followsLast(const sst_builder *p, const uint8_t *pIKey,
                              size_t nIKey, size_t *pnShared) {
  const uint8_t *pL = p->lastKey.a;
  size_t nL = p->lastKey.n;
  size_t nU = nIKey - WCS_IKEY_TRAILER, nLU = nL - WCS_IKEY_TRAILER;
  size_t nShared = wcs_common_prefix(pIKey, pL, nIKey < nL ? nIKey : nL);
  *pnShared = nShared;
  if (nShared < nU && nShared < nLU) return pIKey[nShared] > pL[nShared];
  /* one user key is a prefix of the other: the shorter comes first */
  if (nU != nLU) return nU > nLU;
  /* versions of one user key: the newer (larger trailer) first */
  return wcs_ikey_trailer(pIKey, nIKey) < wcs_ikey_trailer(pL, nL);
}

/* Keep internal key pIKey as the last key, of which the first nShared
** bytes are there already. */
static inline int keepLast(sst_builder *p, const uint8_t *pIKey, size_t nIKey,
                           size_t nShared) {
  size_t nMore = nIKey - nShared;
  p->lastKey.n = nShared;
  if (nMore > p->lastKey.nAlloc - nShared &&
      wcs_buf_reserve(&p->lastKey, nMore)) {
    return WCS_NOMEM;
  }
  wcs_copy_short(p->lastKey.a + nShared, pIKey + nShared, nMore);
  p->lastKey.n = nIKey;
  return WCS_OK;
}

/* Hash the key's xBloomPrefix prefix into the filter unless it is the
** last prefix hashed (a row's cells share one). nShared: the key's common
** prefix with the last key added (any value for the first). While the
** last key added has the last prefix hashed, that key holds its bytes and
** the shared prefix compares them; they are copied out only when a key
** without a prefix comes next, so that a run of keys with prefixes copies
** nothing. */
static int addPrefix(sst_builder *p, const uint8_t *pIKey, size_t nU,
                     size_t nShared) {
  int nP;
  size_t n;
  int rc = WCS_OK;
  /* A key that begins with the last key's prefix has that prefix too
  ** (xBloomPrefix is prefix-closed, wcs.h): the filter has it already.
  ** This skips the call for all but the first cell of a row. */
  if (p->bPrefixInLast && p->nPrefix > 0 && nShared >= p->nPrefix &&
      nU >= p->nPrefix) {
    return WCS_OK;
  }
  nP = nU > INT_MAX ? -1 : p->opt.xBloomPrefix(pIKey, (int)nU);
  n = (size_t)nP;
  if (nP < 0 || n > nU) {
    /* no prefix: the last one must outlive the last key */
    if (p->bPrefixInLast) {
      p->bPrefixInLast = 0;
      p->lastPrefix.n = 0;
      rc = wcs_buf_append(&p->lastPrefix, p->lastKey.a, p->nPrefix);
    }
    return rc;
  }
  if (!p->bHavePrefix || p->nPrefix != n ||
      (p->bPrefixInLast ? nShared < n
                        : n > 0 && memcmp(p->lastPrefix.a, pIKey, n) != 0)) {
    rc = bloom_builder_add(&p->bloom, bloom_hash(pIKey, n));
    p->nPrefix = n;
    p->bHavePrefix = 1;
  }
  p->bPrefixInLast = 1;
  return rc;
}

int sst_builder_add(sst_builder *p, const uint8_t *pIKey, size_t nIKey,
                    const uint8_t *pVal, size_t nVal, char **pzErr) {
  size_t nU, nShared = 0;
  uint64_t seq;
  int rc = WCS_OK;
  if (p->rc) return p->rc;
  if (nIKey < WCS_IKEY_TRAILER ||
      (p->nEntries > 0 && !followsLast(p, pIKey, nIKey, &nShared))) {
    return wcs_seterr(pzErr, WCS_MISUSE,
                      "internal key added out of order to %s", p->zPath);
  }
  nU = nIKey - WCS_IKEY_TRAILER;
  if (p->bPending) rc = addIndexEntry(p, pIKey, nU, nShared);

  if (rc == WCS_OK && p->opt.nBloomBits > 0) {
    if (p->opt.xBloomPrefix) {
      rc = addPrefix(p, pIKey, nU, nShared);
    } else if (p->nEntries == 0 || nShared < nU || p->lastKey.n != nIKey) {
      /* a new user key (not the last one's, which the filter has) */
      rc = bloom_builder_add(&p->bloom, bloom_hash(pIKey, nU));
    }
  }
  if (rc == WCS_OK) {
    rc = block_builder_add_shared(&p->data, pIKey, nIKey, nShared, pVal, nVal);
  }
  if (rc == WCS_OK && p->nEntries == 0) {
    rc = wcs_buf_append(&p->firstKey, pIKey, nIKey);
  }
  if (rc == WCS_OK) rc = keepLast(p, pIKey, nIKey, nShared);
  if (rc != WCS_OK) return builderErr(p, rc, pzErr);
  if (p->pNote) {
    p->opt.xNoteAdd(p->pNote, pIKey, nU,
                    wcs_ikey_type(pIKey, nIKey) == WCS_KT_DELETE);
  }
  seq = wcs_ikey_seq(pIKey, nIKey);
  if (p->nEntries == 0 && p->nDel == 0) p->minSeq = p->maxSeq = seq;
  if (seq < p->minSeq) p->minSeq = seq;
  if (seq > p->maxSeq) p->maxSeq = seq;
  p->nEntries++;
  p->nRaw += nIKey + nVal;
  if (block_builder_size(&p->data) >= (size_t)p->opt.nBlockSize) {
    rc = flushData(p, pzErr);
    if (rc != WCS_OK) return builderErr(p, rc, pzErr);
  }
  return WCS_OK;
}

int sst_builder_add_rangedel(sst_builder *p, const sst_rangedel *pDel,
                             char **pzErr) {
  builder_del *d;
  size_t nEnd = pDel->pEnd ? pDel->nEnd : 0;
  if (p->rc) return p->rc;
  if (p->nDel >= p->nDelAlloc) {
    int nNew = p->nDelAlloc ? p->nDelAlloc * 2 : 8;
    builder_del *aNew = realloc(p->aDel, (size_t)nNew * sizeof *aNew);
    if (aNew == NULL) return builderErr(p, WCS_NOMEM, pzErr);
    p->aDel = aNew;
    p->nDelAlloc = nNew;
  }
  d = &p->aDel[p->nDel];
  d->a = malloc(pDel->nStart + nEnd + 1);
  if (d->a == NULL) return builderErr(p, WCS_NOMEM, pzErr);
  if (pDel->nStart) memcpy(d->a, pDel->pStart, pDel->nStart);
  if (nEnd) memcpy(d->a + pDel->nStart, pDel->pEnd, nEnd);
  d->nStart = pDel->nStart;
  d->nEnd = nEnd;
  d->bUnbounded = pDel->pEnd == NULL;
  d->seq = pDel->seq;
  if (p->nEntries == 0 && p->nDel == 0) p->minSeq = p->maxSeq = d->seq;
  if (d->seq < p->minSeq) p->minSeq = d->seq;
  if (d->seq > p->maxSeq) p->maxSeq = d->seq;
  p->nDel++;
  return WCS_OK;
}

/* The file's bytes so far, the data block being filled included: asked
** before every entry of a compaction or a load (sst_builder_full). */
static inline uint64_t builderSize(const sst_builder *p) {
  return p->nWritten + p->out.n + block_builder_size(&p->data);
}

uint64_t sst_builder_size(const sst_builder *p) {
  return builderSize(p);
}

uint64_t sst_builder_entries(const sst_builder *p) {
  return p->nEntries;
}

/* Tombstone order: start ascending, seq descending, end ascending with
** unbounded last. */
static int delCmp(const void *pa, const void *pb) {
  const builder_del *a = pa, *b = pb;
  int c = wcs_ukey_cmp(a->a, a->nStart, b->a, b->nStart);
  if (c) return c;
  if (a->seq != b->seq) return a->seq > b->seq ? -1 : 1;
  if (a->bUnbounded != b->bUnbounded) return a->bUnbounded ? 1 : -1;
  return wcs_ukey_cmp(a->a + a->nStart, a->nEnd, b->a + b->nStart, b->nEnd);
}

static int putPropU64(wcs_buf *b, int iTag, uint64_t v) {
  int rc = wcs_buf_append_varint(b, (uint64_t)iTag);
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, (uint64_t)wcs_varint_len(v));
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, v);
  return rc;
}

static int putPropBytes(wcs_buf *b, int iTag, const uint8_t *a, size_t n) {
  int rc = wcs_buf_append_varint(b, (uint64_t)iTag);
  if (rc == WCS_OK) rc = wcs_buf_append_varint(b, n);
  if (rc == WCS_OK) rc = wcs_buf_append(b, a, n);
  return rc;
}

/* An internal key made of user key u with the largest trailer, which sorts
** before every real entry of u: the bound a tombstone edge contributes to
** the file's smallest/largest keys. */
static int boundKey(wcs_buf *b, const uint8_t *u, size_t n) {
  b->n = 0;
  if (wcs_buf_append(b, u, n)) return WCS_NOMEM;
  return wcs_buf_append64(b, wcs_ikey_pack(WCS_SEQ_MAX, WCS_KT_PUT));
}

/* Smallest and largest keys, entries and tombstones together. */
static int computeBounds(sst_builder *p, wcs_buf *pMin, wcs_buf *pMax,
                         int *pbUnbounded) {
  wcs_buf t = {0};
  int i, rc = WCS_OK;
  *pbUnbounded = 0;
  if (p->nEntries > 0) {
    if (wcs_buf_append(pMin, p->firstKey.a, p->firstKey.n) ||
        wcs_buf_append(pMax, p->lastKey.a, p->lastKey.n)) {
      return WCS_NOMEM;
    }
  }
  for (i = 0; rc == WCS_OK && i < p->nDel; i++) {
    builder_del *d = &p->aDel[i];
    rc = boundKey(&t, d->a, d->nStart);
    if (rc == WCS_OK &&
        (pMin->n == 0 || wcs_ikey_cmp(t.a, t.n, pMin->a, pMin->n) < 0)) {
      pMin->n = 0;
      rc = wcs_buf_append(pMin, t.a, t.n);
    }
    if (rc == WCS_OK && !d->bUnbounded) {
      rc = boundKey(&t, d->a + d->nStart, d->nEnd);
    }
    if (rc == WCS_OK &&
        (pMax->n == 0 || wcs_ikey_cmp(t.a, t.n, pMax->a, pMax->n) > 0)) {
      pMax->n = 0;
      rc = wcs_buf_append(pMax, t.a, t.n);
    }
    if (d->bUnbounded) *pbUnbounded = 1;
  }
  wcs_buf_free(&t);
  return rc;
}

static int copyOut(uint8_t **pp, size_t *pn, const wcs_buf *b) {
  *pp = NULL;
  *pn = 0;
  if (b->n == 0) return WCS_OK;
  *pp = malloc(b->n);
  if (*pp == NULL) return WCS_NOMEM;
  memcpy(*pp, b->a, b->n);
  *pn = b->n;
  return WCS_OK;
}

int sst_builder_finish(sst_builder *p, sst_meta *pMeta, char **pzErr) {
  uint64_t aOff[4] = {0}, aSize[4] = {0}; /* bloom, rangedel, props, index */
  wcs_buf meta = {0}, kMin = {0}, kMax = {0};
  uint8_t aFoot[WCS_SST_FOOTER];
  const uint8_t *a;
  size_t n;
  int rc = p->rc, i, bUnbounded = 0;

  memset(pMeta, 0, sizeof *pMeta);
  if (rc != WCS_OK) {
    wcs_seterr(pzErr, rc, "writing %s failed earlier (%s)", p->zPath,
               wcs_errstr(rc));
  }
  if (rc == WCS_OK && p->data.nEntry > 0) rc = flushData(p, pzErr);
  if (rc == WCS_OK && p->bPending) rc = addIndexEntry(p, NULL, 0, 0);

  /* bloom */
  if (rc == WCS_OK) {
    rc = bloom_builder_finish(&p->bloom,
                              p->opt.xBloomPrefix ? WCS_BLOOM_KIND_PREFIX
                                                  : WCS_BLOOM_KIND_KEYS,
                              &meta);
  }
  if (rc == WCS_OK)
    rc = writeBlock(p, meta.a, meta.n, 0, &aOff[0], &aSize[0], pzErr);
  /* range tombstones */
  if (rc == WCS_OK) {
    meta.n = 0;
    if (p->nDel > 1) qsort(p->aDel, (size_t)p->nDel, sizeof *p->aDel, delCmp);
    rc = wcs_buf_append_varint(&meta, (uint64_t)p->nDel);
    for (i = 0; rc == WCS_OK && i < p->nDel; i++) {
      builder_del *d = &p->aDel[i];
      rc = wcs_buf_append_varint(&meta, d->nStart);
      if (rc == WCS_OK) rc = wcs_buf_append(&meta, d->a, d->nStart);
      if (rc == WCS_OK) {
        rc = wcs_buf_append_varint(&meta, d->bUnbounded ? 0 : d->nEnd + 1);
      }
      if (rc == WCS_OK) rc = wcs_buf_append(&meta, d->a + d->nStart, d->nEnd);
      if (rc == WCS_OK) rc = wcs_buf_append_varint(&meta, d->seq);
    }
  }
  if (rc == WCS_OK) {
    rc = writeBlock(p, meta.a, meta.n, p->opt.iZstdLevel, &aOff[1], &aSize[1],
                    pzErr);
  }
  /* properties */
  if (rc == WCS_OK) rc = computeBounds(p, &kMin, &kMax, &bUnbounded);
  if (rc == WCS_OK) {
    meta.n = 0;
    rc = putPropU64(&meta, WCS_SST_PROP_ENTRIES, p->nEntries);
    if (rc == WCS_OK) rc = putPropU64(&meta, WCS_SST_PROP_RAWBYTES, p->nRaw);
    if (rc == WCS_OK) rc = putPropU64(&meta, WCS_SST_PROP_BLOCKS, p->nBlocks);
    if (rc == WCS_OK) rc = putPropU64(&meta, WCS_SST_PROP_MINSEQ, p->minSeq);
    if (rc == WCS_OK) rc = putPropU64(&meta, WCS_SST_PROP_MAXSEQ, p->maxSeq);
    if (rc == WCS_OK) {
      rc = putPropU64(&meta, WCS_SST_PROP_RANGEDELS, (uint64_t)p->nDel);
    }
    if (rc == WCS_OK) {
      rc = putPropBytes(&meta, WCS_SST_PROP_SMALLEST, kMin.a, kMin.n);
    }
    if (rc == WCS_OK) {
      rc = putPropBytes(&meta, WCS_SST_PROP_LARGEST, kMax.a, kMax.n);
    }
    if (rc == WCS_OK) {
      rc = putPropU64(&meta, WCS_SST_PROP_FLAGS, (uint64_t)bUnbounded);
    }
    if (rc == WCS_OK && p->opt.iManifest) {
      rc = putPropU64(&meta, WCS_SST_PROP_MANIFEST, p->opt.iManifest);
      if (rc == WCS_OK) {
        rc = putPropU64(&meta, WCS_SST_PROP_MANBYTES, p->opt.nManifestBytes);
      }
    }
    if (rc == WCS_OK && p->pNote) {
      void *pOut = NULL;
      size_t nOut = 0;
      rc = p->opt.xNoteEnd(p->pNote, 0, &pOut, &nOut);
      p->pNote = NULL;
      if (rc == WCS_OK) {
        rc = putPropBytes(&meta, WCS_SST_PROP_NOTE,
                          nOut ? (const uint8_t *)pOut : (const uint8_t *)"",
                          nOut);
      }
      free(pOut);
      if (rc != WCS_OK) {
        wcs_seterr(pzErr, rc, "writing the note of %s failed (%s)", p->zPath,
                   wcs_errstr(rc));
      }
    }
  }
  if (rc == WCS_OK) {
    rc = writeBlock(p, meta.a, meta.n, 0, &aOff[2], &aSize[2], pzErr);
  }
  /* index */
  if (rc == WCS_OK) rc = block_builder_finish(&p->index, &a, &n);
  if (rc == WCS_OK) {
    rc = writeBlock(p, a, n, p->opt.iZstdLevel, &aOff[3], &aSize[3], pzErr);
  }
  /* footer */
  if (rc == WCS_OK) {
    for (i = 0; i < 4; i++) {
      wcs_put64(aFoot + 16 * i, aOff[i]);
      wcs_put64(aFoot + 16 * i + 8, aSize[i]);
    }
    wcs_put32(aFoot + WCS_SST_FOOT_VERSION,
              p->opt.nSeekEvery > 0 ? WCS_SST_VERSION_SEEK
                                    : (p->opt.bSuffix ? WCS_SST_VERSION_SUFFIX
                                                      : WCS_SST_VERSION));
    wcs_put32(aFoot + WCS_SST_FOOT_CRC,
              wcs_crc_mask(wcs_crc32c(0, aFoot, WCS_SST_FOOT_CRC)));
    memcpy(aFoot + WCS_SST_FOOT_MAGIC, WCS_SST_MAGIC, 8);
    rc = wcs_buf_append(&p->out, aFoot, sizeof aFoot);
  }
  if (rc == WCS_OK) rc = flushOut(p, pzErr);
  if (rc == WCS_OK) rc = p->pEnv->xSync(p->pFile, pzErr);
  if (rc == WCS_OK) {
    pMeta->iFile = p->iFile;
    pMeta->nBytes = p->nWritten;
    pMeta->nEntries = p->nEntries;
    pMeta->nRawBytes = p->nRaw;
    pMeta->nRangeDel = (uint64_t)p->nDel;
    pMeta->minSeq = p->minSeq;
    pMeta->maxSeq = p->maxSeq;
    pMeta->bUnbounded = bUnbounded;
    rc = copyOut(&pMeta->pSmallest, &pMeta->nSmallest, &kMin);
    if (rc == WCS_OK) rc = copyOut(&pMeta->pLargest, &pMeta->nLargest, &kMax);
    if (rc != WCS_OK) sst_meta_clear(pMeta);
  }
  wcs_buf_free(&meta);
  wcs_buf_free(&kMin);
  wcs_buf_free(&kMax);
  if (rc == WCS_NOMEM) builderErr(p, rc, pzErr);
  if (rc != WCS_OK) {
    /* Leave no half-written file behind. */
    unwarm(p);
    p->pEnv->xClose(p->pFile);
    p->pFile = NULL;
    p->pEnv->xDelete(p->pEnv, p->zPath, NULL);
  }
  builderFree(p);
  return rc;
}

void sst_builder_abandon(sst_builder *p) {
  if (p == NULL) return;
  unwarm(p);
  if (p->pFile) p->pEnv->xClose(p->pFile);
  p->pFile = NULL;
  p->pEnv->xDelete(p->pEnv, p->zPath, NULL);
  builderFree(p);
}

/* ==================================================================
** Reader
** ================================================================== */

typedef struct sst_idx {
  uint64_t iOff;  /* data block offset */
  uint32_t nSize; /* stored size, trailer excluded */
  uint32_t iKey;  /* separator: offset in sst_tmeta.aKeys */
  uint32_t nKey;  /* separator bytes */
} sst_idx;

/* Words per block in sst_tmeta.aSlice: three key slices and the offset. */
#define SST_SLICE_WORDS 4

/* The decoded index and filter (buildMeta's charge): per block an sst_idx,
** its line of slices and the separator, here taken as long as the last key
** (an upper bound), plus the filter's bits. */
int sst_builder_full(const sst_builder *p, uint64_t nFileBytes) {
  uint64_t nMeta;
  if (nFileBytes == 0) return 0;
  if (builderSize(p) >= nFileBytes) return 1;
  nMeta = (p->nBlocks + 1) *
          (sizeof(sst_idx) + SST_SLICE_WORDS * sizeof(uint64_t) +
           (uint64_t)p->lastKey.n);
  nMeta += (uint64_t)p->bloom.nHash * (uint64_t)p->bloom.nBits / 8;
  return nMeta >= WCS_SST_META_CUT;
}

/* The decoded index and bloom filter of one file. It lives in one block
** cache entry, keyed by (file number, offset of the bloom block) — no data
** block starts there — and laid out as this header, the nBlock index
** entries, the separator bytes and the bloom block's contents, all in the
** entry's one allocation (the pointers below point into it). A get or an
** iterator pins the entry through its handle while it uses it; otherwise
** the cache may evict it like any block, and the next use reads and
** checks the two blocks again. Without a cache the reader owns one for its
** whole life. */
typedef struct sst_tmeta {
  int nBlock;             /* data blocks = index entries */
  const sst_idx *aIdx;    /* the index */
  const uint8_t *aKeys;   /* separator bytes of aIdx */
  wcs_bloom bloom;        /* the filter (k == 0: none) */
  uint32_t nPrefix;       /* bytes every separator starts with (<= 64) */
  const uint8_t *aPrefix; /* those bytes */
  const uint64_t *aSlice; /* per entry i, 32 bytes: separator bytes
                          ** [nPrefix + 8j, nPrefix + 8j + 8) in
                          ** [4i + j], j < 3, zero-padded, big-endian,
                          ** and the block's offset in [4i + 3]. So the
                          ** binary search touches one array and reads a
                          ** separator only when all three slices tie
                          ** (as the seek aid of block.h does in a block
                          ** with two), and a cached block is found
                          ** without reading aIdx. Three slices: the
                          ** separators of one file often share only the
                          ** table and family, and the 16 bytes after
                          ** them are then a row key's head (device and
                          ** id), the same for the several blocks of one
                          ** row range. */
} sst_tmeta;

/* A sparse sample of the index, kept by the reader outside the cache so
** that size estimates (sst_reader_approx_offset) never load the index:
** index entries i_0 < ... < i_{n-1} evenly spaced, the last one the last
** block (every entry when the file has at most SST_SAMPLE_MAX blocks),
** each with the first SST_SAMPLE_KEY bytes of its separator and the
** offset where block i_k ends. A key cut short compares at most as high
** as the whole separator did, which moves a key near it into the next
** interval: an error within the estimate's own. */
#define SST_SAMPLE_MAX 32 /* sampled index entries per file */
#define SST_SAMPLE_KEY 32 /* bytes kept of a sampled separator */
typedef struct sst_samp {
  uint64_t iEnd;                /* first byte after block iBlock */
  uint32_t iBlock;              /* index entry sampled */
  uint8_t nKey;                 /* bytes at aKey, <= SST_SAMPLE_KEY */
  uint8_t aKey[SST_SAMPLE_KEY]; /* separator, possibly cut short */
} sst_samp;

/* A reader holds, for the file's life, only what is small and fixed:
** the footer's handles, the properties, the index sample, the range
** tombstones (usually none) and its descriptor while the file table keeps
** it open. */
struct sst_reader {
  wcs_env *pEnv;              /* env the file is opened through */
  wcs_file *pFile;            /* open descriptor; NULL while the file table
                              ** has closed it (guarded by pFt->mu) */
  char *zPath;                /* for messages and reopening */
  uint64_t iFile;             /* file number: the cache key's first half */
  uint64_t nFileSize;         /* bytes */
  wcs_cache *pCache;          /* block cache; NULL: blocks are not cached */
  sst_ftable *pFt;            /* pCache's file table; NULL: no cache, the
                              ** descriptor stays open until close */
  uint64_t aOff[4], aSize[4]; /* footer handles: bloom, tombstones,
                              ** properties, index */
  uint64_t iDataEnd;          /* first byte after the data blocks */
  int nBlock;                 /* data blocks (the index's entries) */
  int iBloomKind;             /* WCS_BLOOM_KIND_* of the filter */
  int bBloom;                 /* the file has a filter (k > 0) */
  wcs_cache_handle *pOwnMeta; /* no cache: the sst_tmeta, owned */
  sst_rangedel *aDel;         /* range tombstones; bytes in aDelBytes */
  int nDel;                   /* entries of aDel */
  uint8_t *aDelBytes;         /* the tombstone block's contents, owned */
  size_t nDelBytes;           /* bytes at aDelBytes */
  uint64_t nEntries;          /* properties */
  uint64_t nRaw;
  uint64_t minSeq, maxSeq;
  uint8_t *pSmallest; /* owned copies of the recorded bounds */
  size_t nSmallest;
  uint8_t *pLargest;
  size_t nLargest;
  int bUnbounded;
  uint64_t iManifest, nManifestBytes; /* WCS_SST_PROP_MANIFEST/_MANBYTES */
  uint8_t *pNote;  /* the file note (WCS_SST_PROP_NOTE), owned; NULL:
                   ** none */
  size_t nNote;    /* bytes at pNote */
  sst_samp *aSamp; /* the index sample, nSamp entries; owned */
  int nSamp;       /* <= SST_SAMPLE_MAX; 0 only for a file of no blocks */
  uint8_t aDigLo[SST_SAMPLE_KEY];  /* per key position: the smallest and */
  uint8_t aDigTop[SST_SAMPLE_KEY]; /* largest - smallest byte there among
                                   ** the sampled keys (keyFraction) */
  size_t nHeld; /* bytes this reader holds outside the cache */
  /* File table state, guarded by pFt->mu. */
  sst_reader *pFtPrev, *pFtNext; /* neighbours in the open list */
  int nFileRef;                  /* reads using pFile right now */
  int bFtRef;                    /* used since the sweep last passed */
};

/* ---- the file table: at most pFt->nMax descriptors open, closed in
** CLOCK order (oldest first, but one used since the sweep last passed gets
** a second chance), so that using a descriptor only sets a bit instead of
** relinking the list; a descriptor in use by a read is never closed (the
** table can exceed nMax by the reads in flight). */

static void ftUnlink(sst_ftable *t, sst_reader *p) {
  if (p->pFtPrev) {
    p->pFtPrev->pFtNext = p->pFtNext;
  } else {
    t->pOld = p->pFtNext;
  }
  if (p->pFtNext) {
    p->pFtNext->pFtPrev = p->pFtPrev;
  } else {
    t->pNew = p->pFtPrev;
  }
  p->pFtPrev = p->pFtNext = NULL;
}

static void ftAppend(sst_ftable *t, sst_reader *p) {
  p->pFtNext = NULL;
  p->pFtPrev = t->pNew;
  if (t->pNew) {
    t->pNew->pFtNext = p;
  } else {
    t->pOld = p;
  }
  t->pNew = p;
}

/* Close idle descriptors in CLOCK order while over the limit. The
** descriptors are chained into apClose (at most nClose) to be closed
** after the mutex is released; returns how many. */
#define FT_CLOSE_BATCH 8
static int ftTrim(sst_ftable *t, wcs_file **apClose, wcs_env **apEnv) {
  int n = 0, nStep = 2 * t->nOpen;
  while (t->pOld && t->nOpen > t->nMax && n < FT_CLOSE_BATCH && nStep-- > 0) {
    sst_reader *p = t->pOld;
    ftUnlink(t, p);
    if (p->nFileRef > 0 || p->bFtRef) {
      p->bFtRef = 0; /* in use, or used since the sweep passed: go round */
      ftAppend(t, p);
      continue;
    }
    apClose[n] = p->pFile;
    apEnv[n++] = p->pEnv;
    p->pFile = NULL;
    t->nOpen--;
  }
  return n;
}

static void ftClose(wcs_file **apClose, wcs_env **apEnv, int n) {
  int i;
  for (i = 0; i < n; i++)
    apEnv[i]->xClose(apClose[i]);
}

/* A descriptor for one read: *ppF stays open until fileRelease. */
static int fileAcquire(sst_reader *p, wcs_file **ppF, char **pzErr) {
  sst_ftable *t = p->pFt;
  wcs_file *pNew = NULL, *apClose[FT_CLOSE_BATCH];
  wcs_env *apEnv[FT_CLOSE_BATCH];
  int rc, n;
  if (t == NULL) {
    *ppF = p->pFile;
    return WCS_OK;
  }
  pthread_mutex_lock(&t->mu);
  if (p->pFile) {
    p->nFileRef++;
    p->bFtRef = 1; /* second chance in the sweep, as in the block cache */
    *ppF = p->pFile;
    pthread_mutex_unlock(&t->mu);
    return WCS_OK;
  }
  pthread_mutex_unlock(&t->mu);
  rc = p->pEnv->xOpen(p->pEnv, p->zPath, WCS_OPEN_READ, &pNew, pzErr);
  if (rc != WCS_OK) return rc;
  pthread_mutex_lock(&t->mu);
  if (p->pFile == NULL) {
    p->pFile = pNew;
    pNew = NULL;
    ftAppend(t, p);
    t->nOpen++;
    t->nReopen++;
  }
  p->nFileRef++;
  *ppF = p->pFile;
  n = ftTrim(t, apClose, apEnv);
  pthread_mutex_unlock(&t->mu);
  if (pNew) p->pEnv->xClose(pNew); /* another thread opened it first */
  ftClose(apClose, apEnv, n);
  return WCS_OK;
}

static void fileRelease(sst_reader *p) {
  sst_ftable *t = p->pFt;
  wcs_file *apClose[FT_CLOSE_BATCH];
  wcs_env *apEnv[FT_CLOSE_BATCH];
  int n = 0;
  if (t == NULL) return;
  pthread_mutex_lock(&t->mu);
  assert(p->nFileRef > 0);
  p->nFileRef--;
  if (t->nOpen > t->nMax) n = ftTrim(t, apClose, apEnv);
  pthread_mutex_unlock(&t->mu);
  ftClose(apClose, apEnv, n);
}

/* Read up to n bytes at iOff through a descriptor from the file table. */
static int readAt(sst_reader *p, uint64_t iOff, void *a, size_t n,
                  size_t *pnRead, char **pzErr) {
  wcs_file *pF;
  int rc = fileAcquire(p, &pF, pzErr);
  if (rc == WCS_OK) {
    rc = p->pEnv->xRead(pF, iOff, a, n, pnRead, pzErr);
    fileRelease(p);
  }
  return rc;
}

void wcs_cache_set_max_files(wcs_cache *pCache, int nMax) {
  sst_ftable *t = wcs_cache_ftable(pCache);
  wcs_file *apClose[FT_CLOSE_BATCH];
  wcs_env *apEnv[FT_CLOSE_BATCH];
  int n;
  if (t == NULL) return;
  pthread_mutex_lock(&t->mu);
  t->nMax = nMax > 0 ? nMax : WCS_DEF_MAX_FILES;
  do {
    n = ftTrim(t, apClose, apEnv);
    pthread_mutex_unlock(&t->mu);
    ftClose(apClose, apEnv, n);
    pthread_mutex_lock(&t->mu);
  } while (n == FT_CLOSE_BATCH);
  pthread_mutex_unlock(&t->mu);
}

void wcs_cache_file_stats(wcs_cache *pCache, int *pnOpen, int *pnReaders,
                          uint64_t *pnHeld, uint64_t *pnReopen) {
  sst_ftable *t = wcs_cache_ftable(pCache);
  int nOpen = 0, nReaders = 0;
  uint64_t nHeld = 0, nReopen = 0;
  if (t) {
    pthread_mutex_lock(&t->mu);
    nOpen = t->nOpen;
    nReaders = t->nReaders;
    nHeld = t->nHeld;
    nReopen = t->nReopen;
    pthread_mutex_unlock(&t->mu);
  }
  if (pnOpen) *pnOpen = nOpen;
  if (pnReaders) *pnReaders = nReaders;
  if (pnHeld) *pnHeld = nHeld;
  if (pnReopen) *pnReopen = nReopen;
}

/* ---- meta blocks */

/* Read the varint at *pz, advancing it; 0 on a bad or truncated varint. */
static int takeVarint(const uint8_t **pz, const uint8_t *zEnd, uint64_t *pv) {
  int n = *pz < zEnd ? wcs_get_varint(*pz, zEnd, pv) : 0;
  *pz += n;
  return n;
}

/* Decode the index block a[0..n) into *paIdx (malloc'd, *pnBlock entries)
** and *pKeys, checking that the entries tile the data blocks exactly. */
static int parseIndex(const sst_reader *p, const uint8_t *a, size_t n,
                      uint64_t iBlockOff, sst_idx **paIdx, int *pnBlock,
                      wcs_buf *pKeys, char **pzErr) {
  block_iter bi;
  sst_idx *aIdx = NULL;
  uint64_t iExpect = 0;
  int nAlloc = 0, nBlock = 0, rc;
  memset(&bi, 0, sizeof bi);
  rc = block_iter_init(&bi, a, n, 0);
  if (rc == WCS_OK) rc = block_iter_first(&bi);
  while (rc == WCS_OK && block_iter_valid(&bi)) {
    const uint8_t *z = bi.pVal, *zEnd = bi.pVal + bi.nVal;
    uint64_t iOff, nSize;
    sst_idx *e;
    if (!takeVarint(&z, zEnd, &iOff) || !takeVarint(&z, zEnd, &nSize) ||
        z != zEnd || iOff != iExpect || nSize > UINT32_MAX ||
        nSize + WCS_BLOCK_TRAILER > p->iDataEnd - iOff ||
        (nBlock > 0 &&
         wcs_ukey_cmp(pKeys->a + aIdx[nBlock - 1].iKey, aIdx[nBlock - 1].nKey,
                      bi.pKey, bi.nKey) > 0) ||
        pKeys->n + bi.nKey > UINT32_MAX || nBlock >= INT_MAX / 2) {
      rc = WCS_CORRUPT_BKPT;
      break;
    }
    if (nBlock >= nAlloc) {
      int nNew = nAlloc ? nAlloc * 2 : 64;
      sst_idx *aNew = realloc(aIdx, (size_t)nNew * sizeof *aNew);
      if (aNew == NULL) {
        rc = WCS_NOMEM;
        break;
      }
      aIdx = aNew;
      nAlloc = nNew;
    }
    e = &aIdx[nBlock++];
    e->iOff = iOff;
    e->nSize = (uint32_t)nSize;
    e->iKey = (uint32_t)pKeys->n;
    e->nKey = bi.nKey;
    if (wcs_buf_append(pKeys, bi.pKey, bi.nKey)) {
      rc = WCS_NOMEM;
      break;
    }
    iExpect = iOff + nSize + WCS_BLOCK_TRAILER;
    rc = block_iter_next(&bi);
  }
  if (rc == WCS_OK && iExpect != p->iDataEnd) rc = WCS_CORRUPT_BKPT;
  block_iter_clear(&bi);
  *paIdx = aIdx;
  *pnBlock = nBlock;
  if (rc != WCS_OK) {
    return corruptMsg(pzErr, rc, "index block", p->zPath, iBlockOff,
                      "index entries do not match the data blocks");
  }
  return WCS_OK;
}

static int parseRangedels(sst_reader *p, const uint8_t *a, size_t n,
                          uint64_t iBlockOff, char **pzErr) {
  const uint8_t *z = a, *zEnd = a + n;
  uint64_t nDel, i;
  int rc = WCS_OK;
  if (!takeVarint(&z, zEnd, &nDel) || nDel > n / 3) {
    rc = WCS_CORRUPT_BKPT;
  } else if (nDel > 0) {
    p->aDel = calloc((size_t)nDel, sizeof *p->aDel);
    if (p->aDel == NULL) rc = WCS_NOMEM;
  }
  for (i = 0; rc == WCS_OK && i < nDel; i++) {
    sst_rangedel *d = &p->aDel[i];
    uint64_t nStart, nEnd1, seq;
    if (!takeVarint(&z, zEnd, &nStart) || nStart > (size_t)(zEnd - z)) {
      rc = WCS_CORRUPT_BKPT;
      break;
    }
    d->pStart = z;
    d->nStart = nStart;
    z += nStart;
    if (!takeVarint(&z, zEnd, &nEnd1) ||
        (nEnd1 > 0 && nEnd1 - 1 > (size_t)(zEnd - z))) {
      rc = WCS_CORRUPT_BKPT;
      break;
    }
    d->pEnd = nEnd1 ? z : NULL;
    d->nEnd = nEnd1 ? nEnd1 - 1 : 0;
    z += d->nEnd;
    if (!takeVarint(&z, zEnd, &seq) || seq > WCS_SEQ_MAX) {
      rc = WCS_CORRUPT_BKPT;
      break;
    }
    d->seq = seq;
    if (i > 0 &&
        wcs_ukey_cmp(d[-1].pStart, d[-1].nStart, d->pStart, d->nStart) > 0) {
      rc = WCS_CORRUPT_BKPT;
      break;
    }
    p->nDel++;
  }
  if (rc == WCS_OK && z != zEnd) rc = WCS_CORRUPT_BKPT;
  if (rc != WCS_OK) {
    return corruptMsg(pzErr, rc, "range-tombstone block", p->zPath, iBlockOff,
                      "bad tombstone");
  }
  return WCS_OK;
}

/* Copy n bytes at a into a fresh buffer *pp (never NULL on success). */
static int ownCopy(uint8_t **pp, const uint8_t *a, size_t n) {
  *pp = malloc(n ? n : 1);
  if (*pp == NULL) return WCS_NOMEM;
  if (n) memcpy(*pp, a, n);
  return WCS_OK;
}

static int parseProps(sst_reader *p, const uint8_t *a, size_t n,
                      uint64_t iBlockOff, char **pzErr) {
  const uint8_t *z = a, *zEnd = a + n;
  const uint8_t *pSmall = NULL, *pLarge = NULL, *pNote = NULL;
  size_t nSmall = 0, nLarge = 0, nNote = 0;
  unsigned mSeen = 0;
  uint64_t nBlocks = 0;
  while (z < zEnd) {
    uint64_t iTag, nLen, v = 0;
    const uint8_t *zVal;
    if (!takeVarint(&z, zEnd, &iTag) || !takeVarint(&z, zEnd, &nLen) ||
        nLen > (size_t)(zEnd - z)) {
      goto corrupt;
    }
    zVal = z;
    z += nLen;
    if (iTag != WCS_SST_PROP_SMALLEST && iTag != WCS_SST_PROP_LARGEST &&
        iTag < 32) {
      const uint8_t *zv = zVal;
      if (!takeVarint(&zv, z, &v) || zv != z) goto corrupt;
    }
    if (iTag < 32) mSeen |= 1u << iTag;
    switch (iTag) {
    case WCS_SST_PROP_ENTRIES:
      p->nEntries = v;
      break;
    case WCS_SST_PROP_RAWBYTES:
      p->nRaw = v;
      break;
    case WCS_SST_PROP_BLOCKS:
      nBlocks = v;
      break;
    case WCS_SST_PROP_MINSEQ:
      p->minSeq = v;
      break;
    case WCS_SST_PROP_MAXSEQ:
      p->maxSeq = v;
      break;
    case WCS_SST_PROP_RANGEDELS:
      if (v != (uint64_t)p->nDel) goto corrupt;
      break;
    case WCS_SST_PROP_SMALLEST:
      pSmall = zVal;
      nSmall = nLen;
      break;
    case WCS_SST_PROP_LARGEST:
      pLarge = zVal;
      nLarge = nLen;
      break;
    case WCS_SST_PROP_FLAGS:
      p->bUnbounded = (int)(v & 1);
      break;
    case WCS_SST_PROP_MANIFEST:
      p->iManifest = v;
      break;
    case WCS_SST_PROP_MANBYTES:
      p->nManifestBytes = v;
      break;
    case WCS_SST_PROP_NOTE:
      pNote = zVal;
      nNote = nLen;
      break;
    default:
      break; /* a newer writer's property */
    }
  }
  if ((mSeen & (1u << WCS_SST_PROP_ENTRIES)) == 0 ||
      (mSeen & (1u << WCS_SST_PROP_BLOCKS)) == 0 ||
      nBlocks != (uint64_t)p->nBlock) {
    goto corrupt;
  }
  if (ownCopy(&p->pSmallest, pSmall, nSmall) ||
      ownCopy(&p->pLargest, pLarge, nLarge) ||
      (pNote && ownCopy(&p->pNote, pNote, nNote))) {
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory reading %s", p->zPath);
  }
  p->nSmallest = nSmall;
  p->nLargest = nLarge;
  p->nNote = nNote;
  return WCS_OK;
corrupt:
  return corruptMsg(pzErr, WCS_CORRUPT_BKPT, "properties block", p->zPath,
                    iBlockOff, "bad property");
}

/* Check meta block i (of the footer's four) inside the meta region aMeta
** (the file's bytes from aOff[0] to the footer) and decompress it if
** needed: *pp and *pn get its contents, inside aMeta or in *ppOwn (a
** malloc'd buffer for the caller to free). */
static int metaBlock(const sst_reader *p, const uint8_t *aMeta, int i,
                     uint8_t **ppOwn, const uint8_t **pp, size_t *pn,
                     char **pzErr) {
  const uint8_t *a = aMeta + (p->aOff[i] - p->aOff[0]);
  uint64_t nSize = p->aSize[i];
  const char *zWhy = "";
  uint32_t nRaw;
  int iType, rc;
  *ppOwn = NULL;
  rc = block_check(a, nSize + WCS_BLOCK_TRAILER, &iType, &nRaw, &zWhy);
  if (rc == WCS_OK && iType == WCS_BLOCK_ZSTD) {
    *ppOwn = malloc(nRaw ? nRaw : 1);
    if (*ppOwn == NULL) {
      return wcs_seterr(pzErr, WCS_NOMEM, "out of memory reading %s", p->zPath);
    }
    rc = block_inflate(a, nSize, *ppOwn, nRaw, &zWhy);
    a = *ppOwn;
    nSize = nRaw;
  }
  if (rc != WCS_OK) {
    return corruptMsg(pzErr, rc, "block", p->zPath, p->aOff[i], zWhy);
  }
  *pp = a;
  *pn = nSize;
  return WCS_OK;
}

/* Read exactly n bytes at iOff; a short read is corruption (truncation). */
static int readExact(sst_reader *p, uint64_t iOff, void *a, size_t n,
                     const char *zWhat, char **pzErr) {
  size_t nRead = 0;
  int rc = readAt(p, iOff, a, n, &nRead, pzErr);
  if (rc == WCS_OK && nRead != n) {
    rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, zWhat, p->zPath, iOff,
                    "file is shorter than recorded (truncated?)");
  }
  return rc;
}

#define TMETA_ALIGN(n) (((n) + 7) & ~(size_t)7)

/* Fill p->aSamp from the decoded index (see sst_samp). */
static int takeSample(sst_reader *p, const sst_idx *aIdx, int nBlock,
                      const uint8_t *aKeys) {
  int n = nBlock < SST_SAMPLE_MAX ? nBlock : SST_SAMPLE_MAX, k, i;
  if (n == 0) return WCS_OK;
  p->aSamp = calloc((size_t)n, sizeof *p->aSamp);
  if (p->aSamp == NULL) return WCS_NOMEM;
  for (k = 0; k < n; k++) {
    sst_samp *s = &p->aSamp[k];
    const sst_idx *e;
    i = (int)((int64_t)(k + 1) * nBlock / n) - 1;
    e = &aIdx[i];
    s->iBlock = (uint32_t)i;
    s->iEnd = i + 1 < nBlock ? aIdx[i + 1].iOff : p->iDataEnd;
    s->nKey = (uint8_t)(e->nKey < SST_SAMPLE_KEY ? e->nKey : SST_SAMPLE_KEY);
    if (s->nKey)
      memcpy(s->aKey, aKeys + e->iKey, s->nKey); /* aKeys NULL: all empty */
  }
  for (i = 0; i < SST_SAMPLE_KEY; i++) {
    int iLo = 255, iHi = 0;
    for (k = 0; k < n; k++) {
      if (i < p->aSamp[k].nKey) {
        int c = p->aSamp[k].aKey[i];
        if (c < iLo) iLo = c;
        if (c > iHi) iHi = c;
      }
    }
    if (iLo > iHi) iLo = 0, iHi = 255; /* no sampled key is this long */
    p->aDigLo[i] = (uint8_t)iLo;
    p->aDigTop[i] = (uint8_t)(iHi - iLo);
  }
  p->nSamp = n;
  return WCS_OK;
}

/* Build the sst_tmeta entry from the meta region aMeta: check and decode
** the bloom and index blocks into one fresh handle *ph (not in any cache).
** At open (bOpen) the tombstone and properties blocks are parsed into the
** reader too; later loads check that the index still has nBlock entries. */
static int buildMeta(sst_reader *p, const uint8_t *aMeta, int bOpen,
                     wcs_cache_handle **ph, char **pzErr) {
  uint8_t *aOwn[4] = {0};
  const uint8_t *aBlk[4] = {0};
  size_t nBlk[4] = {0}, nTotal;
  sst_idx *aIdx = NULL;
  wcs_buf keys = {0};
  wcs_cache_handle *h = NULL;
  int nBlock = 0, i, j, rc = WCS_OK;
  *ph = NULL;
  for (i = 0; i < 4 && rc == WCS_OK; i++) {
    if (!bOpen && (i == 1 || i == 2)) continue; /* parsed at open */
    rc = metaBlock(p, aMeta, i, &aOwn[i], &aBlk[i], &nBlk[i], pzErr);
  }
  if (rc == WCS_OK) {
    rc = parseIndex(p, aBlk[3], nBlk[3], p->aOff[3], &aIdx, &nBlock, &keys,
                    pzErr);
  }
  if (rc == WCS_OK) {
    wcs_bloom b;
    if (bloom_open(&b, aBlk[0], nBlk[0]) != WCS_OK) {
      rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "bloom block", p->zPath,
                      p->aOff[0], "bad filter layout");
    } else if (bOpen) {
      p->bBloom = b.k > 0;
      p->iBloomKind = b.iKind;
    }
  }
  if (rc == WCS_OK && bOpen) {
    p->nBlock = nBlock;
    rc = takeSample(p, aIdx, nBlock, keys.a);
    if (rc != WCS_OK) {
      rc = wcs_seterr(pzErr, rc, "out of memory reading %s", p->zPath);
    }
  }
  if (rc == WCS_OK && bOpen) {
    if (nBlk[1] > 0) {
      rc = ownCopy(&p->aDelBytes, aBlk[1], nBlk[1]);
      p->nDelBytes = nBlk[1];
      if (rc != WCS_OK) {
        rc = wcs_seterr(pzErr, rc, "out of memory reading %s", p->zPath);
      }
    }
    if (rc == WCS_OK) {
      rc = parseRangedels(p, p->aDelBytes ? p->aDelBytes : aBlk[1], nBlk[1],
                          p->aOff[1], pzErr);
    }
    if (rc == WCS_OK && p->nDel == 0) {
      free(p->aDelBytes);
      p->aDelBytes = NULL;
      p->nDelBytes = 0;
    }
    if (rc == WCS_OK) rc = parseProps(p, aBlk[2], nBlk[2], p->aOff[2], pzErr);
  } else if (rc == WCS_OK && nBlock != p->nBlock) {
    rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "index block", p->zPath,
                    p->aOff[3], "index entries do not match the data blocks");
  }
  if (rc == WCS_OK) {
    size_t nIdx = TMETA_ALIGN(sizeof(sst_tmeta)) +
                  TMETA_ALIGN((size_t)nBlock * sizeof(sst_idx));
    size_t nSlice = (size_t)nBlock * SST_SLICE_WORDS * sizeof(uint64_t);
    size_t nPrefix = 0;
    if (nBlock > 0) {
      const sst_idx *e0 = &aIdx[0], *e1 = &aIdx[nBlock - 1];
      while (nPrefix < e0->nKey && nPrefix < e1->nKey && nPrefix < 64 &&
             keys.a[e0->iKey + nPrefix] == keys.a[e1->iKey + nPrefix]) {
        nPrefix++;
      }
    }
    nTotal = nIdx + nSlice + TMETA_ALIGN(keys.n) + nBlk[0];
    h = wcs_cache_alloc(nTotal);
    if (h == NULL) {
      rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory reading %s", p->zPath);
    } else {
      uint8_t *a = wcs_cache_data(h);
      sst_tmeta *t = (sst_tmeta *)a;
      sst_idx *aI = (sst_idx *)(a + TMETA_ALIGN(sizeof(sst_tmeta)));
      uint64_t *aS = (uint64_t *)(a + nIdx);
      uint8_t *aK = a + nIdx + nSlice, *aB = aK + TMETA_ALIGN(keys.n);
      memset(t, 0, sizeof *t);
      if (nBlock) memcpy(aI, aIdx, (size_t)nBlock * sizeof(sst_idx));
      if (keys.n) memcpy(aK, keys.a, keys.n);
      if (nBlk[0]) memcpy(aB, aBlk[0], nBlk[0]);
      for (i = 0; i < nBlock; i++) {
        for (j = 0; j < 3; j++) {
          aS[SST_SLICE_WORDS * i + j] =
              wcs_key_slice(aK + aI[i].iKey, aI[i].nKey, nPrefix + 8 * j);
        }
        aS[SST_SLICE_WORDS * i + 3] = aI[i].iOff;
      }
      t->nBlock = nBlock;
      t->aIdx = aI;
      t->aKeys = aK;
      t->nPrefix = (uint32_t)nPrefix;
      t->aPrefix = nBlock > 0 ? aK + aI[0].iKey : aK;
      t->aSlice = aS;
      bloom_open(&t->bloom, aB, nBlk[0]); /* checked above */
    }
  }
  for (i = 0; i < 4; i++)
    free(aOwn[i]);
  free(aIdx);
  wcs_buf_free(&keys);
  *ph = h;
  return rc;
}

/* Read the meta region (bloom block to footer) into a fresh buffer. */
static int readMetaRegion(sst_reader *p, uint8_t **paMeta, char **pzErr) {
  size_t n = (size_t)(p->nFileSize - WCS_SST_FOOTER - p->aOff[0]);
  int rc;
  *paMeta = malloc(n ? n : 1);
  if (*paMeta == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  rc = readExact(p, p->aOff[0], *paMeta, n, "block", pzErr);
  if (rc != WCS_OK) {
    free(*paMeta);
    *paMeta = NULL;
  }
  return rc;
}

/* Pin the file's sst_tmeta: from the cache, or read, checked, decoded and
** inserted. *ph gets the handle to pass to unpinMeta (NULL when the reader
** owns the entry). */
static int pinMeta(sst_reader *p, wcs_cache_handle **ph, const sst_tmeta **ppM,
                   char **pzErr) {
  wcs_cache_handle *h;
  uint8_t *aMeta = NULL;
  int rc;
  *ph = NULL;
  if (p->pOwnMeta) {
    *ppM = (const sst_tmeta *)wcs_cache_data(p->pOwnMeta);
    return WCS_OK;
  }
  h = wcs_cache_lookup_meta(p->pCache, p->iFile, p->iDataEnd);
  if (h == NULL) {
    rc = readMetaRegion(p, &aMeta, pzErr);
    if (rc == WCS_OK) rc = buildMeta(p, aMeta, 0, &h, pzErr);
    free(aMeta);
    if (rc != WCS_OK) {
      *ppM = NULL;
      return rc;
    }
    h = wcs_cache_insert(p->pCache, p->iFile, p->iDataEnd, h);
  }
  *ph = h;
  *ppM = (const sst_tmeta *)wcs_cache_data(h);
  return WCS_OK;
}

static void unpinMeta(const sst_reader *p, wcs_cache_handle *h) {
  if (h) wcs_cache_release(p->pCache, h);
}

void sst_reader_close(sst_reader *p) {
  if (p == NULL) return;
  if (p->pFt) {
    sst_ftable *t = p->pFt;
    pthread_mutex_lock(&t->mu);
    assert(p->nFileRef == 0);
    if (p->pFile) {
      ftUnlink(t, p);
      t->nOpen--;
    }
    t->nReaders--;
    t->nHeld -= p->nHeld;
    pthread_mutex_unlock(&t->mu);
  }
  if (p->pFile) p->pEnv->xClose(p->pFile);
  if (p->pOwnMeta) wcs_cache_release(NULL, p->pOwnMeta);
  free(p->zPath);
  free(p->aDelBytes);
  free(p->aDel);
  free(p->pNote);
  free(p->pSmallest);
  free(p->pLargest);
  free(p->aSamp);
  free(p);
}

int sst_reader_open(wcs_env *pEnv, const char *zPath, uint64_t iFile,
                    uint64_t nFileSize, wcs_cache *pCache, sst_reader **pp,
                    char **pzErr) {
  sst_reader *p = calloc(1, sizeof *p);
  uint8_t aFoot[WCS_SST_FOOTER];
  uint8_t *aMeta = NULL;
  wcs_cache_handle *h = NULL;
  uint64_t iFoot = 0;
  int rc = WCS_OK, i;

  *pp = NULL;
  if (p == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  p->pEnv = pEnv;
  p->iFile = iFile;
  p->pCache = pCache;
  p->zPath = strdup(zPath);
  if (p->zPath == NULL) rc = wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  if (rc == WCS_OK)
    rc = pEnv->xOpen(pEnv, zPath, WCS_OPEN_READ, &p->pFile, pzErr);
  if (rc == WCS_OK && nFileSize == 0) {
    rc = pEnv->xSize(p->pFile, &nFileSize, pzErr);
  }
  p->nFileSize = nFileSize;

  /* Footer: magic first (is this a sorted file at all?), then its CRC,
  ** then the version, then the handles' layout. */
  if (rc == WCS_OK && nFileSize < WCS_SST_FOOTER) {
    rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "file", zPath, 0,
                    "too short to hold a footer");
  }
  if (rc == WCS_OK) {
    iFoot = nFileSize - WCS_SST_FOOTER;
    rc = readExact(p, iFoot, aFoot, sizeof aFoot, "footer", pzErr);
  }
  if (rc == WCS_OK && memcmp(aFoot + WCS_SST_FOOT_MAGIC, WCS_SST_MAGIC, 8)) {
    rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "footer", zPath, iFoot,
                    "bad magic number (not a sorted file, or truncated)");
  }
  if (rc == WCS_OK && wcs_crc_unmask(wcs_get32(aFoot + WCS_SST_FOOT_CRC)) !=
                          wcs_crc32c(0, aFoot, WCS_SST_FOOT_CRC)) {
    rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "footer", zPath, iFoot,
                    "checksum mismatch");
  }
  if (rc == WCS_OK &&
      (wcs_get32(aFoot + WCS_SST_FOOT_VERSION) < WCS_SST_VERSION ||
       wcs_get32(aFoot + WCS_SST_FOOT_VERSION) > WCS_SST_VERSION_SEEK)) {
    rc = wcs_seterr(pzErr, WCS_PROTOCOL,
                    "%s has sorted-file format version %u; this build reads "
                    "versions %d to %d",
                    zPath, wcs_get32(aFoot + WCS_SST_FOOT_VERSION),
                    WCS_SST_VERSION, WCS_SST_VERSION_SEEK);
  }
  if (rc == WCS_OK) {
    uint64_t iExpect;
    for (i = 0; i < 4; i++) {
      p->aOff[i] = wcs_get64(aFoot + 16 * i);
      p->aSize[i] = wcs_get64(aFoot + 16 * i + 8);
    }
    iExpect = p->aOff[0];
    for (i = 0; i < 4 && rc == WCS_OK; i++) {
      if (p->aOff[i] != iExpect || p->aOff[i] > iFoot ||
          p->aSize[i] > iFoot - p->aOff[i] ||
          p->aSize[i] + WCS_BLOCK_TRAILER > iFoot - p->aOff[i]) {
        rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "footer", zPath, iFoot,
                        "block handles do not fit the file");
      }
      iExpect = p->aOff[i] + p->aSize[i] + WCS_BLOCK_TRAILER;
    }
    if (rc == WCS_OK && iExpect != iFoot) {
      rc = corruptMsg(pzErr, WCS_CORRUPT_BKPT, "footer", zPath, iFoot,
                      "block handles do not fit the file");
    }
    p->iDataEnd = p->aOff[0];
  }
  /* Every meta block is checked now; the index and bloom filter then go
  ** to the cache, where later reads find them (or reload them). */
  if (rc == WCS_OK) rc = readMetaRegion(p, &aMeta, pzErr);
  if (rc == WCS_OK) rc = buildMeta(p, aMeta, 1, &h, pzErr);
  free(aMeta);
  if (rc != WCS_OK) {
    wcs_cache_release(NULL, h);
    sst_reader_close(p);
    return rc;
  }
  if (pCache) {
    sst_ftable *t = wcs_cache_ftable(pCache);
    wcs_file *apClose[FT_CLOSE_BATCH];
    wcs_env *apEnv[FT_CLOSE_BATCH];
    int n;
    wcs_cache_release(pCache, wcs_cache_insert(pCache, iFile, p->iDataEnd, h));
    p->nHeld = sizeof *p + strlen(p->zPath) + 1 + p->nSmallest + p->nLargest +
               (size_t)p->nSamp * sizeof *p->aSamp +
               (size_t)p->nDel * sizeof *p->aDel + p->nDelBytes;
    pthread_mutex_lock(&t->mu);
    p->pFt = t;
    p->bFtRef = 1;
    ftAppend(t, p);
    t->nOpen++;
    t->nReaders++;
    t->nHeld += p->nHeld;
    n = ftTrim(t, apClose, apEnv);
    pthread_mutex_unlock(&t->mu);
    ftClose(apClose, apEnv, n);
  } else {
    p->pOwnMeta = h;
  }
  *pp = p;
  return WCS_OK;
}

int sst_reader_may_contain_hash(const sst_reader *p, uint64_t h) {
  wcs_cache_handle *pH;
  const sst_tmeta *m;
  int bMay;
  if (!p->bBloom) return 1;
  if (pinMeta((sst_reader *)p, &pH, &m, NULL) != WCS_OK) return 1;
  bMay = bloom_may_contain(&m->bloom, h);
  unpinMeta(p, pH);
  return bMay;
}

int sst_reader_may_contain(const sst_reader *p, const void *pKey, size_t n) {
  if (!p->bBloom) return 1;
  return sst_reader_may_contain_hash(p, bloom_hash(pKey, n));
}

const uint8_t *sst_reader_note(const sst_reader *p, size_t *pn) {
  *pn = p->nNote;
  return p->pNote;
}

int sst_reader_bloom_prefixed(const sst_reader *p) {
  return p->bBloom && p->iBloomKind == WCS_BLOOM_KIND_PREFIX;
}

void sst_reader_rangedels(const sst_reader *p, const sst_rangedel **paDel,
                          int *pnDel) {
  *paDel = p->aDel;
  *pnDel = p->nDel;
}

/* First index entry whose separator is >= user key u (nBlock if none). */
static int findBlock(const sst_tmeta *m, const uint8_t *pU, size_t nU) {
  int lo = 0, hi = m->nBlock, c;
  size_t nCmp = nU < m->nPrefix ? nU : m->nPrefix;
  uint64_t t0, t1, t2;
  /* Outside the separators' shared prefix: before or after all of them. */
  c = nCmp ? memcmp(pU, m->aPrefix, nCmp) : 0;
  if (c < 0 || (c == 0 && nU < m->nPrefix)) return 0;
  if (c > 0) return m->nBlock;
  t0 = wcs_key_slice(pU, nU, m->nPrefix);
  t1 = wcs_key_slice(pU, nU, m->nPrefix + 8);
  t2 = wcs_key_slice(pU, nU, m->nPrefix + 16);
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2, bLess;
    const uint64_t *v = &m->aSlice[SST_SLICE_WORDS * mid];
    if (v[0] != t0) {
      bLess = v[0] < t0;
    } else if (v[1] != t1) {
      bLess = v[1] < t1;
    } else if (v[2] != t2) {
      bLess = v[2] < t2;
    } else {
      const sst_idx *e = &m->aIdx[mid];
      bLess = wcs_ukey_cmp(m->aKeys + e->iKey, e->nKey, pU, nU) < 0;
    }
    if (bLess) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* Bytes [iFrom, iFrom + 8) of u as a number in the mixed radix of the
** bytes the file's sampled keys hold at each position (digits of decimal
** or hex text count as 10 or so values, not 256). A byte outside that
** range saturates it and every digit after it, which keeps the number
** non-decreasing in u. */
static double keyDigits(const sst_reader *p, const uint8_t *u, size_t nU,
                        size_t iFrom) {
  double x = 0;
  size_t i;
  int iSat = 0; /* -1: below the range, 1: above it, from here on */
  for (i = iFrom; i < iFrom + 8; i++) {
    int c = i < nU ? u[i] : 0, iLo = 0, iTop = 255;
    if (i < SST_SAMPLE_KEY) {
      iLo = p->aDigLo[i];
      iTop = p->aDigTop[i];
    }
    if (iSat == 0 && c < iLo) iSat = -1;
    if (iSat == 0 && c - iLo > iTop) iSat = 1;
    c = iSat < 0 ? 0 : (iSat > 0 ? iTop : c - iLo);
    x = x * (iTop + 1) + c;
  }
  return x;
}

/* Where u lies between keys lo < u <= hi, as a fraction in [0, 1]: the
** 8 bytes after their common prefix read by keyDigits(). */
static double keyFraction(const sst_reader *p, const uint8_t *pLo, size_t nLo,
                          const uint8_t *pHi, size_t nHi, const uint8_t *pU,
                          size_t nU) {
  size_t c = 0;
  double a, b, x;
  while (c < nLo && c < nHi && pLo[c] == pHi[c])
    c++;
  a = keyDigits(p, pLo, nLo, c);
  b = keyDigits(p, pHi, nHi, c);
  x = keyDigits(p, pU, nU, c);
  if (b <= a || x <= a) return 0.0;
  if (x >= b) return 1.0;
  return (x - a) / (b - a);
}

/* From the index sample alone (no cache lookup, no allocation): exact,
** the offset of the block whose separator is the first >= u, when the
** sample holds that block and the one before; otherwise interpolated
** between the two sampled blocks around u by keyFraction(). */
uint64_t sst_reader_approx_offset(const sst_reader *p, const uint8_t *pUKey,
                                  size_t nUKey) {
  const sst_samp *s = p->aSamp;
  int lo = 0, hi = p->nSamp;
  uint64_t iStart, iEnd;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (wcs_ukey_cmp(s[mid].aKey, s[mid].nKey, pUKey, nUKey) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == p->nSamp) return p->iDataEnd;
  iStart = lo > 0 ? s[lo - 1].iEnd : 0;
  iEnd = s[lo].iEnd;
  if (s[lo].iBlock == (lo > 0 ? s[lo - 1].iBlock + 1 : 0)) return iStart;
  if (lo > 0) {
    return iStart +
           (uint64_t)((double)(iEnd - iStart) *
                      keyFraction(p, s[lo - 1].aKey, s[lo - 1].nKey, s[lo].aKey,
                                  s[lo].nKey, pUKey, nUKey));
  }
  if (p->nSmallest < WCS_IKEY_TRAILER ||
      wcs_ukey_cmp(pUKey, nUKey, p->pSmallest,
                   p->nSmallest - WCS_IKEY_TRAILER) <= 0) {
    return 0;
  }
  return (uint64_t)((double)iEnd * keyFraction(p, p->pSmallest,
                                               p->nSmallest - WCS_IKEY_TRAILER,
                                               s[0].aKey, s[0].nKey, pUKey,
                                               nUKey));
}

int sst_reader_index_keys(const sst_reader *p, void *pCtx,
                          int (*x)(void *pCtx, const uint8_t *pUKey,
                                   size_t nUKey, uint64_t iOff)) {
  wcs_cache_handle *h;
  const sst_tmeta *m;
  int i, rc = pinMeta((sst_reader *)p, &h, &m, NULL);
  for (i = 0; rc == 0 && i < m->nBlock; i++) {
    const sst_idx *e = &m->aIdx[i];
    rc = x(pCtx, m->aKeys + e->iKey, e->nKey, e->iOff);
  }
  if (m) unpinMeta(p, h);
  return rc;
}

uint64_t sst_reader_data_end(const sst_reader *p) {
  return p->iDataEnd;
}

void sst_reader_props(const sst_reader *p, uint64_t *pnEntries,
                      uint64_t *pnRawBytes, uint64_t *pnBytes) {
  if (pnEntries) *pnEntries = p->nEntries;
  if (pnRawBytes) *pnRawBytes = p->nRaw;
  if (pnBytes) *pnBytes = p->nFileSize;
}

void sst_reader_manifest_pos(const sst_reader *p, uint64_t *piManifest,
                             uint64_t *pnBytes) {
  *piManifest = p->iManifest;
  *pnBytes = p->nManifestBytes;
}

int sst_reader_meta(const sst_reader *p, sst_meta *pMeta) {
  memset(pMeta, 0, sizeof *pMeta);
  pMeta->iFile = p->iFile;
  pMeta->nBytes = p->nFileSize;
  pMeta->nEntries = p->nEntries;
  pMeta->nRawBytes = p->nRaw;
  pMeta->nRangeDel = (uint64_t)p->nDel;
  pMeta->minSeq = p->minSeq;
  pMeta->maxSeq = p->maxSeq;
  pMeta->bUnbounded = p->bUnbounded;
  if (p->nSmallest) {
    pMeta->pSmallest = malloc(p->nSmallest);
    pMeta->pLargest = malloc(p->nLargest ? p->nLargest : 1);
    if (pMeta->pSmallest == NULL || pMeta->pLargest == NULL) {
      sst_meta_clear(pMeta);
      return WCS_NOMEM;
    }
    memcpy(pMeta->pSmallest, p->pSmallest, p->nSmallest);
    if (p->nLargest) memcpy(pMeta->pLargest, p->pLargest, p->nLargest);
    pMeta->nSmallest = p->nSmallest;
    pMeta->nLargest = p->nLargest;
  }
  return WCS_OK;
}

/* Readahead state of one iterator: forward scans that miss the cache read
** several blocks per read call instead of one. The first read of a run of
** forward loads takes SST_READAHEAD_MIN bytes, and each later one twice
** the one before, up to SST_READAHEAD: a short scan (a prefix of a few
** blocks) does not pay for copying a quarter of a megabyte it never reads,
** and a long one soon reads in large pieces. */
#define SST_READAHEAD     (256 * 1024)
#define SST_READAHEAD_MIN (32 * 1024)
typedef struct sst_ra {
  uint8_t *a;    /* bytes of the file from iOff; NULL until first used */
  size_t nAlloc; /* bytes allocated at a */
  size_t n;      /* bytes valid at a */
  uint64_t iOff; /* file offset of a[0] */
  int nSeq;      /* consecutive forward block loads, >= 2: read ahead */
  size_t nNext;  /* bytes the next read takes; 0: SST_READAHEAD_MIN */
} sst_ra;

/* Make the stored bytes and trailer of block i available: from the
** readahead buffer (refilled while the scan is sequential), or else read
** into a fresh handle *ph. *pp gets the bytes. */
static int fetchBlock(sst_reader *p, const sst_tmeta *m, int i, sst_ra *pRa,
                      wcs_cache_handle **ph, const uint8_t **pp,
                      const char **pzWhy, char **pzErr) {
  const sst_idx *e = &m->aIdx[i];
  size_t n = (size_t)e->nSize + WCS_BLOCK_TRAILER, nRead = 0;
  int rc;
  if (pRa && pRa->nSeq >= 2 &&
      !(e->iOff >= pRa->iOff && e->iOff - pRa->iOff + n <= pRa->n)) {
    size_t nWant = pRa->nNext ? pRa->nNext : SST_READAHEAD_MIN;
    pRa->nNext = nWant * 2 > SST_READAHEAD ? SST_READAHEAD : nWant * 2;
    if (nWant < n) nWant = n;
    /* Never past the data blocks (the index checked that n fits). */
    if (nWant > p->iDataEnd - e->iOff) nWant = (size_t)(p->iDataEnd - e->iOff);
    if (nWant > pRa->nAlloc) {
      uint8_t *aNew = realloc(pRa->a, nWant);
      if (aNew == NULL) return WCS_NOMEM;
      pRa->a = aNew;
      pRa->nAlloc = nWant;
    }
    pRa->n = 0;
    pRa->iOff = e->iOff;
    rc = readAt(p, e->iOff, pRa->a, nWant, &pRa->n, pzErr);
    if (rc != WCS_OK) {
      pRa->n = 0;
      return rc;
    }
  }
  if (pRa && e->iOff >= pRa->iOff && e->iOff - pRa->iOff + n <= pRa->n) {
    *pp = pRa->a + (e->iOff - pRa->iOff);
    return WCS_OK;
  }
  *ph = wcs_cache_alloc(n);
  if (*ph == NULL) return WCS_NOMEM;
  rc = readAt(p, e->iOff, wcs_cache_data(*ph), n, &nRead, pzErr);
  if (rc == WCS_OK && nRead != n) {
    *pzWhy = "file is shorter than recorded (truncated?)";
    rc = WCS_CORRUPT_BKPT;
  }
  *pp = wcs_cache_data(*ph);
  return rc;
}

/* Whether readBlock puts a block it had to read into the cache. */
#define SST_FILL_NO   0 /* never (the iterator option bNoCacheFill) */
#define SST_FILL_YES  1 /* always, evicting colder blocks if need be */
#define SST_FILL_ROOM 2 /* only if it evicts nothing (long runs of a scan) */

/* An iterator that has loaded this many neighbouring blocks of one file in
** a row is in a long scan: from then on its blocks fill the cache only
** where there is room (SST_FILL_ROOM). Short scans and point reads fill as
** before; a scan larger than the cache no longer evicts the blocks other
** reads keep using, and skips the eviction and seek-aid work for blocks it
** reads once. 16 blocks is 128 KiB at the default 8 KiB block size, more
** than a typical prefix scan reads from one file. */
#define SST_SCAN_RUN 16

/* Check the framed block pSrc[0..nStored + WCS_BLOCK_TRAILER) and make its
** contents a handle *ph in no cache: decompressed, or a raw block's bytes
** (*phRead itself, taken over, when they were read into it). On error,
** WCS_CORRUPT or WCS_NOMEM with *pzWhy and *ph NULL. Touches nothing
** shared, so the prefetch worker runs it too. */
static int decodeBlock(const uint8_t *pSrc, size_t nStored,
                       wcs_cache_handle **phRead, wcs_cache_handle **ph,
                       const char **pzWhy) {
  wcs_cache_handle *h = NULL;
  uint32_t nRaw = 0;
  int iType = WCS_BLOCK_RAW, rc;
  *ph = NULL;
  rc = block_check(pSrc, nStored + WCS_BLOCK_TRAILER, &iType, &nRaw, pzWhy);
  if (rc == WCS_OK && iType == WCS_BLOCK_ZSTD) {
    h = wcs_cache_alloc(nRaw);
    if (h == NULL) {
      rc = WCS_NOMEM;
    } else {
      rc = block_inflate(pSrc, nStored, wcs_cache_data(h), nRaw, pzWhy);
    }
  } else if (rc == WCS_OK && *phRead != NULL) {
    h = *phRead; /* raw, read into its own handle: the handle is the block */
    *phRead = NULL;
    wcs_cache_set_size(h, nStored);
  } else if (rc == WCS_OK) {
    h = wcs_cache_alloc(nStored);
    if (h == NULL) {
      rc = WCS_NOMEM;
    } else if (nStored) {
      memcpy(wcs_cache_data(h), pSrc, nStored);
    }
  }
  if (rc != WCS_OK) {
    wcs_cache_release(NULL, h);
    return rc;
  }
  *ph = h;
  return WCS_OK;
}

/* Hand the decoded block h (in no cache) of entry e to the caller as *ppH,
** inserted into the cache first as iFill (SST_FILL_*) says. */
static int fillBlock(sst_reader *p, const sst_idx *e, int iFill,
                     wcs_cache_handle *h, wcs_cache_handle **ppH,
                     char **pzErr) {
  if (iFill == SST_FILL_ROOM && p->pCache &&
      !wcs_cache_has_room(p->pCache, p->iFile, e->iOff,
                          wcs_cache_size(h) + wcs_cache_size(h) / 4)) {
    /* the seek aid: 20 bytes per restart point, up to a quarter of a
    ** block of short entries with suffixes */
    iFill = SST_FILL_NO;
  }
  if (iFill != SST_FILL_NO && p->pCache) {
    /* A block that stays in the cache gets a seek aid (block.h); a block
    ** read for one pass of a scan does not need one. A prefetched block
    ** may have it already. */
    if (wcs_cache_aux(h) == NULL) {
      block_aid *pAid = NULL;
      size_t nAid = 0;
      if (block_aid_build(wcs_cache_data(h), wcs_cache_size(h), &pAid, &nAid)) {
        wcs_cache_release(NULL, h);
        *ppH = NULL;
        return corruptMsg(pzErr, WCS_NOMEM, "block", p->zPath, e->iOff, "");
      }
      wcs_cache_set_aux(h, pAid, nAid);
    }
    h = wcs_cache_insert(p->pCache, p->iFile, e->iOff, h);
  }
  *ppH = h;
  return WCS_OK;
}

/* Get data block i as a cache handle: from the cache, or read (through
** the readahead buffer pRa when not NULL), checked, decompressed and
** inserted into the cache as iFill (SST_FILL_*) says. A zstd block is
** inflated straight from the bytes read; a raw block read into its own
** handle is used as is. */
static int readBlock(sst_reader *p, const sst_tmeta *m, int i, int iFill,
                     sst_ra *pRa, wcs_cache_handle **ppH, char **pzErr) {
  const sst_idx *e = &m->aIdx[i];
  wcs_cache_handle *h = NULL, *hRead = NULL;
  const uint8_t *pSrc = NULL;
  const char *zWhy = "";
  int rc;
  if (p->pCache) {
    /* the offset from the slices' line, which the search just read */
    h = wcs_cache_lookup(p->pCache, p->iFile,
                          m->aSlice[SST_SLICE_WORDS * i + 3]);
    if (h) {
      *ppH = h;
      return WCS_OK;
    }
  }
  rc = fetchBlock(p, m, i, pRa, &hRead, &pSrc, &zWhy, pzErr);
  if (rc == WCS_OK) rc = decodeBlock(pSrc, e->nSize, &hRead, &h, &zWhy);
  wcs_cache_release(NULL, hRead);
  if (rc != WCS_OK) {
    if (rc == WCS_CORRUPT || rc == WCS_NOMEM) {
      corruptMsg(pzErr, rc, "block", p->zPath, e->iOff, zWhy);
    }
    return rc;
  }
  return fillBlock(p, e, iFill, h, ppH, pzErr);
}

/* One block cursor per thread for sst_reader_get, so that a point read
** allocates nothing once the cursor's key buffer has grown; freed when the
** thread exits. */
static pthread_key_t getKey;
static pthread_once_t getOnce = PTHREAD_ONCE_INIT;
static int bGetKey = 0; /* 1 once getKey exists */

static void freeGetIter(void *p) {
  block_iter_clear((block_iter *)p);
  free(p);
}
static void makeGetKey(void) {
  bGetKey = pthread_key_create(&getKey, freeGetIter) == 0;
}
static block_iter *threadGetIter(void) {
  block_iter *p;
  pthread_once(&getOnce, makeGetKey);
  if (!bGetKey) return NULL;
  p = pthread_getspecific(getKey);
  if (p == NULL) {
    p = calloc(1, sizeof *p);
    if (p != NULL && pthread_setspecific(getKey, p) != 0) {
      free(p);
      p = NULL;
    }
  }
  return p;
}

int sst_reader_get_probe(sst_reader *p, const uint8_t *pIKey, size_t nIKey,
                         const sst_probe *pProbe, int *pbFound, void *pCtx,
                         int (*x)(void *pCtx, const uint8_t *pKey, size_t nKey,
                                  const uint8_t *pVal, size_t nVal),
                         char **pzErr) {
  size_t nU = nIKey - WCS_IKEY_TRAILER;
  block_iter *bi;
  wcs_cache_handle *hMeta;
  const sst_tmeta *m;
  int i, rc;
  assert(nIKey >= WCS_IKEY_TRAILER);
  *pbFound = 0;
  if (pProbe && p->bBloom && p->iBloomKind == WCS_BLOOM_KIND_PREFIX &&
      !pProbe->hasPrefix) {
    pProbe = NULL; /* the key is not in the prefix filter: no probe */
  }
  rc = pinMeta(p, &hMeta, &m, pzErr);
  if (rc != WCS_OK) return rc;
  if (pProbe && p->bBloom &&
      !bloom_may_contain(&m->bloom, p->iBloomKind == WCS_BLOOM_KIND_PREFIX
                                        ? pProbe->hPrefix
                                        : pProbe->hKey)) {
    unpinMeta(p, hMeta);
    return WCS_OK;
  }
  bi = threadGetIter();
  if (bi == NULL) {
    unpinMeta(p, hMeta);
    return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  /* As in a seek: blocks whose entries are all < the target (older
  ** versions of one user key filling a block) pass it on. */
  for (i = findBlock(m, pIKey, nU); rc == WCS_OK && i < m->nBlock; i++) {
    wcs_cache_handle *h = NULL;
    rc = readBlock(p, m, i, SST_FILL_YES, NULL, &h, pzErr);
    if (rc != WCS_OK) break;
    rc = block_iter_init_aid(bi, wcs_cache_data(h), wcs_cache_size(h),
                             wcs_cache_aux(h));
    if (rc == WCS_OK) rc = block_iter_seek(bi, pIKey, nIKey);
    if (rc != WCS_OK) {
      corruptMsg(pzErr, rc, "block", p->zPath, m->aIdx[i].iOff, "bad entry");
    } else if (block_iter_valid(bi)) {
      if (wcs_ukey_cmp(bi->pKey, bi->nKey - WCS_IKEY_TRAILER, pIKey, nU) == 0) {
        *pbFound = 1;
        rc = x(pCtx, bi->pKey, bi->nKey, bi->pVal, bi->nVal);
      }
      wcs_cache_release(p->pCache, h);
      break;
    }
    wcs_cache_release(p->pCache, h);
  }
  unpinMeta(p, hMeta);
  return rc;
}

int sst_reader_get(sst_reader *p, const uint8_t *pIKey, size_t nIKey,
                   int *pbFound, void *pCtx,
                   int (*x)(void *pCtx, const uint8_t *pKey, size_t nKey,
                            const uint8_t *pVal, size_t nVal),
                   char **pzErr) {
  return sst_reader_get_probe(p, pIKey, nIKey, NULL, pbFound, pCtx, x, pzErr);
}

/* ==================================================================
** Prefetch
** ==================================================================
**
** How it works. A forward scan that has loaded SST_PF_AFTER neighbouring
** blocks of one file in a row, and reads them through its readahead
** buffer, hands the check (CRC-32C) and decompression of the blocks after
** the current one to its cache's worker thread: up to SST_PF_DEPTH blocks
** and SST_PF_BYTES decompressed bytes ahead, topped up in batches once
** half of them are used, so the worker is woken once per few blocks. When
** the scan reaches a block, loadBlock takes the job: done, it uses the
** result; running, it waits for it; still queued, it takes it off the
** queue and does it itself. The scan never waits for blocks it does not
** need next.
**
** The worker only turns stored bytes into a handle in no cache (with the
** seek aid when the iterator fills the cache), or records why it could
** not. Everything else stays on the scanning thread, at the same moment
** as without prefetch: the cache lookup (before a job is queued; a hit is
** kept as the job's result, so a cached block is neither decoded nor
** looked up twice), the fill rule and the insert (when the block is taken),
** and the error message naming the file and offset (when the scan gets
** there; a damaged block the scan never reaches is never reported).
**
** A job reads the iterator's readahead buffer in place, so the buffer must
** not change while a job is queued or running. Jobs cover only blocks
** inside the buffer and are taken in order, so a scan has none left when
** it needs the next buffer; any other move (a seek, a step back, a
** retarget, the iterator's close) cancels them first: queued ones are
** taken off the queue, running ones waited for, results released.
*/

/* Only scans this long use the worker: a point read or a prefix scan of a
** few blocks never pays for a handoff. The same length as SST_SCAN_RUN,
** from which on a scan counts as long for the cache as well. */
#define SST_PF_AFTER SST_SCAN_RUN
/* Blocks decoded ahead, at most, and their bytes (but at least one). Each
** top-up that finds the worker asleep wakes it, a system call of several
** microseconds on the scanning thread; half of 32 blocks per wake-up, not
** half of 8, took about 6% off a full scan of 2M rows (bench_sql -w agg:
** 4,459 wake-ups became 1,082). 64 woke it 497 times, without a
** measurable gain over 32. */
#define SST_PF_DEPTH 32
#define SST_PF_BYTES (1024 * 1024)

#define PF_QUEUED 1 /* on the queue */
#define PF_BUSY   2 /* the worker decodes it */
#define PF_DONE   3 /* h, or rc and zWhy, are set */

/* One block decoded ahead, owned by the iterator that queued it. */
struct sst_pfjob {
  sst_pfjob *pPrev, *pNext; /* queue neighbours while PF_QUEUED */
  int eState;               /* PF_*; guarded by the queue's mutex unless
                            ** bCached (never queued) */
  int iBlock;               /* data block */
  int bCached;              /* h is a cache hit: nothing to decode */
  int bAid;                 /* also build the block's seek aid */
  const uint8_t *pSrc;      /* stored bytes and trailer, in the iterator's
                            ** readahead buffer */
  size_t nStored;           /* stored bytes at pSrc, trailer excluded */
  uint64_t nRaw;            /* decompressed size from the (unchecked)
                            ** trailer: counts against SST_PF_BYTES only */
  wcs_cache_handle *h;      /* PF_DONE, rc WCS_OK: the block */
  int rc;                   /* PF_DONE: WCS_OK, WCS_CORRUPT or WCS_NOMEM */
  const char *zWhy;         /* static text for the message */
};

/* Decode job j's block (its rc and result; the job is not shared now). */
static void pfRun(sst_pfjob *j) {
  wcs_cache_handle *hRead = NULL;
  j->zWhy = "";
  j->rc = decodeBlock(j->pSrc, j->nStored, &hRead, &j->h, &j->zWhy);
  if (j->rc == WCS_OK && j->bAid) {
    block_aid *pAid = NULL;
    size_t nAid = 0;
    /* out of memory only costs the aid here: fillBlock builds it (and
    ** reports the failure) if the block goes into the cache */
    if (block_aid_build(wcs_cache_data(j->h), wcs_cache_size(j->h), &pAid,
                        &nAid) == WCS_OK &&
        pAid != NULL) {
      wcs_cache_set_aux(j->h, pAid, nAid);
    }
  }
}

static void pfUnlink(sst_pfq *q, sst_pfjob *j) {
  if (j->pPrev) {
    j->pPrev->pNext = j->pNext;
  } else {
    q->pHead = j->pNext;
  }
  if (j->pNext) {
    j->pNext->pPrev = j->pPrev;
  } else {
    q->pTail = j->pPrev;
  }
  j->pPrev = j->pNext = NULL;
}

static void *pfMain(void *pArg) {
  sst_pfq *q = pArg;
  pthread_mutex_lock(&q->mu);
  while (!q->bStop) {
    sst_pfjob *j = q->pHead;
    if (j == NULL) {
      q->bIdle = 1;
      pthread_cond_wait(&q->cvWork, &q->mu);
      q->bIdle = 0;
      continue;
    }
    pfUnlink(q, j);
    j->eState = PF_BUSY;
    pthread_mutex_unlock(&q->mu);
    pfRun(j);
    pthread_mutex_lock(&q->mu);
    j->eState = PF_DONE;
    q->nDone++;
    pthread_cond_broadcast(&q->cvDone);
  }
  pthread_mutex_unlock(&q->mu);
  return NULL; /* the thread's zstd context is freed as it exits */
}

void sst_pfq_init(sst_pfq *q) {
  memset(q, 0, sizeof *q);
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cvWork, NULL);
  pthread_cond_init(&q->cvDone, NULL);
  /* with one core the worker would only take turns with the scan */
  q->bOff = sysconf(_SC_NPROCESSORS_ONLN) < 2;
}

void sst_pfq_stop(sst_pfq *q) {
  pthread_mutex_lock(&q->mu);
  assert(q->pHead == NULL);
  q->bStop = 1;
  pthread_cond_signal(&q->cvWork);
  pthread_mutex_unlock(&q->mu);
  if (q->bStarted) pthread_join(q->th, NULL);
  pthread_cond_destroy(&q->cvDone);
  pthread_cond_destroy(&q->cvWork);
  pthread_mutex_destroy(&q->mu);
}

void wcs_cache_set_prefetch(wcs_cache *pCache, int bOn) {
  sst_pfq *q = wcs_cache_pfq(pCache);
  if (q == NULL) return;
  pthread_mutex_lock(&q->mu);
  q->bOff = !bOn || sysconf(_SC_NPROCESSORS_ONLN) < 2;
  pthread_mutex_unlock(&q->mu);
}

uint64_t wcs_cache_prefetched(wcs_cache *pCache) {
  sst_pfq *q = wcs_cache_pfq(pCache);
  uint64_t n;
  if (q == NULL) return 0;
  pthread_mutex_lock(&q->mu);
  n = q->nDone;
  pthread_mutex_unlock(&q->mu);
  return n;
}

/* The queue of pCache with its worker running, or NULL when prefetch is
** off (or the thread cannot be made, which turns it off). */
static sst_pfq *pfQueue(wcs_cache *pCache) {
  sst_pfq *q = wcs_cache_pfq(pCache);
  int bOn;
  if (q == NULL) return NULL;
  pthread_mutex_lock(&q->mu);
  if (!q->bOff && !q->bStarted) {
    if (pthread_create(&q->th, NULL, pfMain, q) == 0) {
      q->bStarted = 1;
    } else {
      q->bOff = 1;
    }
  }
  bOn = !q->bOff;
  pthread_mutex_unlock(&q->mu);
  return bOn ? q : NULL;
}

/* ==================================================================
** Iterator
** ================================================================== */

typedef struct sst_iter {
  wcs_iiter base; /* must be first */
  sst_reader *pR; /* the file */
  int bFill;      /* insert blocks read into the cache */
  int rc;         /* first error; sticky, makes the iterator invalid */
  char *zErr;     /* its message */
  wcs_cache_handle *pMetaH;    /* the pinned index and filter; NULL none */
  const sst_tmeta *pM;         /* their contents, once pinned */
  int iBlock;                  /* data block loaded into bi; -1 none */
  int nRun;                    /* neighbours of their predecessor among the
                               ** blocks loaded last, either direction */
  wcs_cache_handle *pH;        /* that block's handle; NULL none */
  block_iter bi;               /* cursor in the loaded block */
  sst_ra ra;                   /* readahead for forward scans */
  sst_pfq *pQ;                 /* prefetch queue, once this scan is long
                               ** enough; NULL: not yet, or off (bPfOff) */
  int bPfOff;                  /* the cache has no worker for it */
  int iPfHead;                 /* slot in aPf of the oldest job */
  int nPf;                     /* jobs in aPf: blocks iBlock + 1, + 2, ... */
  uint64_t nPfBytes;           /* their nRaw, summed */
  sst_pfjob aPf[SST_PF_DEPTH]; /* ring of blocks decoded ahead */
} sst_iter;

static int iterFail(sst_iter *it, int rc) {
  if (it->rc == WCS_OK) {
    it->rc = rc;
    if (it->zErr == NULL) {
      corruptMsg(&it->zErr, rc, "block", it->pR->zPath,
                 it->iBlock >= 0 && it->pM ? it->pM->aIdx[it->iBlock].iOff : 0,
                 "bad entry");
    }
  }
  return it->rc;
}

/* Pin the index and filter for the iterator's life (first positioning). */
static int iterMeta(sst_iter *it) {
  int rc;
  if (it->pM) return WCS_OK;
  rc = pinMeta(it->pR, &it->pMetaH, &it->pM, &it->zErr);
  if (rc != WCS_OK) it->rc = rc;
  return rc;
}

/* Drop every job of the iterator: off the queue, or waited for, and their
** results released. Afterwards its readahead buffer may change. */
static void pfCancel(sst_iter *it) {
  int k;
  if (it->nPf == 0) return;
  pthread_mutex_lock(&it->pQ->mu);
  for (k = 0; k < it->nPf; k++) {
    sst_pfjob *j = &it->aPf[(it->iPfHead + k) % SST_PF_DEPTH];
    if (j->bCached) continue;
    if (j->eState == PF_QUEUED) pfUnlink(it->pQ, j);
    while (j->eState == PF_BUSY)
      pthread_cond_wait(&it->pQ->cvDone, &it->pQ->mu);
  }
  pthread_mutex_unlock(&it->pQ->mu);
  for (k = 0; k < it->nPf; k++) {
    sst_pfjob *j = &it->aPf[(it->iPfHead + k) % SST_PF_DEPTH];
    wcs_cache_release(it->pR->pCache, j->h);
    j->h = NULL;
  }
  it->nPf = 0;
  it->nPfBytes = 0;
}

/* Block i is the oldest job's: take its result as readBlock would have
** made it (the cache lookup was done when the job was queued). */
static int pfTake(sst_iter *it, int iFill, wcs_cache_handle **ppH) {
  sst_pfjob *j = &it->aPf[it->iPfHead];
  sst_reader *p = it->pR;
  const sst_idx *e = &it->pM->aIdx[j->iBlock];
  wcs_cache_handle *h;
  int bRun = 0;
  if (!j->bCached) {
    pthread_mutex_lock(&it->pQ->mu);
    if (j->eState == PF_QUEUED) {
      pfUnlink(it->pQ, j); /* not started: cheaper here than waiting */
      bRun = 1;
    }
    while (j->eState == PF_BUSY)
      pthread_cond_wait(&it->pQ->cvDone, &it->pQ->mu);
    pthread_mutex_unlock(&it->pQ->mu);
    if (bRun) pfRun(j);
  }
  it->iPfHead = (it->iPfHead + 1) % SST_PF_DEPTH;
  it->nPf--;
  it->nPfBytes -= j->nRaw;
  h = j->h;
  j->h = NULL;
  if (j->bCached) {
    *ppH = h;
    return WCS_OK;
  }
  if (j->rc != WCS_OK) {
    return corruptMsg(&it->zErr, j->rc, "block", p->zPath, e->iOff, j->zWhy);
  }
  return fillBlock(p, e, iFill, h, ppH, &it->zErr);
}

/* Top up the jobs ahead of the block just loaded, once the scan is long
** and at most half of them are left. */
static void pfSchedule(sst_iter *it) {
  sst_reader *p = it->pR;
  const sst_tmeta *m = it->pM;
  sst_pfjob *aNew[SST_PF_DEPTH];
  int i, k, nNew = 0;
  if (it->ra.nSeq < SST_PF_AFTER || it->nPf > SST_PF_DEPTH / 2 ||
      it->ra.n == 0 || p->pCache == NULL || it->bPfOff) {
    return;
  }
  if (it->pQ == NULL) {
    it->pQ = pfQueue(p->pCache);
    if (it->pQ == NULL) {
      it->bPfOff = 1;
      return;
    }
  }
  i = it->iBlock + 1 + it->nPf;
  for (; it->nPf < SST_PF_DEPTH && i < m->nBlock; i++) {
    const sst_idx *e = &m->aIdx[i];
    size_t n = (size_t)e->nSize + WCS_BLOCK_TRAILER;
    const uint8_t *pSrc;
    uint64_t nRaw;
    sst_pfjob *j;
    if (!(e->iOff >= it->ra.iOff && e->iOff - it->ra.iOff + n <= it->ra.n)) {
      break; /* past the readahead buffer: the scan reads on itself */
    }
    pSrc = it->ra.a + (e->iOff - it->ra.iOff);
    nRaw = wcs_get32(pSrc + e->nSize + WCS_BLOCK_OFF_RAW);
    if (it->nPf > 0 && it->nPfBytes + nRaw > SST_PF_BYTES) break;
    j = &it->aPf[(it->iPfHead + it->nPf) % SST_PF_DEPTH];
    memset(j, 0, sizeof *j);
    j->iBlock = i;
    j->nRaw = nRaw;
    j->h = wcs_cache_lookup(p->pCache, p->iFile, e->iOff);
    if (j->h) {
      j->bCached = 1;
      j->eState = PF_DONE;
    } else {
      j->bAid = it->bFill;
      j->pSrc = pSrc;
      j->nStored = (size_t)e->nSize;
      aNew[nNew++] = j;
    }
    it->nPf++;
    it->nPfBytes += nRaw;
  }
  if (nNew == 0) return;
  pthread_mutex_lock(&it->pQ->mu);
  for (k = 0; k < nNew; k++) {
    sst_pfjob *j = aNew[k];
    j->eState = PF_QUEUED;
    j->pPrev = it->pQ->pTail;
    if (it->pQ->pTail) {
      it->pQ->pTail->pNext = j;
    } else {
      it->pQ->pHead = j;
    }
    it->pQ->pTail = j;
  }
  if (it->pQ->bIdle) pthread_cond_signal(&it->pQ->cvWork);
  pthread_mutex_unlock(&it->pQ->mu);
}

static int loadBlock(sst_iter *it, int i) {
  int rc, iFill = SST_FILL_NO;
  if (it->pH != NULL && it->iBlock == i) return WCS_OK;
  if (it->iBlock >= 0 && i == it->iBlock + 1) {
    it->ra.nSeq++;
  } else {
    it->ra.nSeq = 0;
    it->ra.nNext = 0;
  }
  if (it->iBlock >= 0 && (i == it->iBlock + 1 || i + 1 == it->iBlock)) {
    it->nRun++;
  } else {
    it->nRun = 0;
  }
  if (it->bFill)
    iFill = it->nRun >= SST_SCAN_RUN ? SST_FILL_ROOM : SST_FILL_YES;
  wcs_cache_release(it->pR->pCache, it->pH);
  it->pH = NULL;
  it->iBlock = -1;
  if (it->nPf > 0 && it->aPf[it->iPfHead].iBlock == i) {
    rc = pfTake(it, iFill, &it->pH);
  } else {
    pfCancel(it); /* not the next block: the buffer may be refilled */
    rc = readBlock(it->pR, it->pM, i, iFill, &it->ra, &it->pH, &it->zErr);
  }
  if (rc != WCS_OK) {
    pfCancel(it);
    it->rc = rc;
    return rc;
  }
  it->iBlock = i;
  pfSchedule(it);
  rc = block_iter_init_aid(&it->bi, wcs_cache_data(it->pH),
                           wcs_cache_size(it->pH), wcs_cache_aux(it->pH));
  if (rc != WCS_OK) return iterFail(it, rc);
  return WCS_OK;
}

/* The cursor ran off the end of its block: continue in the next ones. */
static int skipForward(sst_iter *it) {
  while (!block_iter_valid(&it->bi)) {
    int rc;
    if (it->bi.rc) return iterFail(it, it->bi.rc);
    if (it->iBlock + 1 >= it->pM->nBlock) return WCS_OK;
    rc = loadBlock(it, it->iBlock + 1);
    if (rc == WCS_OK) rc = block_iter_first(&it->bi);
    if (rc != WCS_OK) return iterFail(it, rc);
  }
  return WCS_OK;
}

static int skipBackward(sst_iter *it) {
  while (!block_iter_valid(&it->bi)) {
    int rc;
    if (it->bi.rc) return iterFail(it, it->bi.rc);
    if (it->iBlock <= 0) return WCS_OK;
    rc = loadBlock(it, it->iBlock - 1);
    if (rc == WCS_OK) rc = block_iter_last(&it->bi);
    if (rc != WCS_OK) return iterFail(it, rc);
  }
  return WCS_OK;
}

static int iterValid(const wcs_iiter *pI) {
  const sst_iter *it = (const sst_iter *)pI;
  return it->rc == WCS_OK && it->pH != NULL && block_iter_valid(&it->bi);
}

/* Make the iterator unpositioned (no block, cursor invalid). */
static void unposition(sst_iter *it) {
  pfCancel(it);
  wcs_cache_release(it->pR->pCache, it->pH);
  it->pH = NULL;
  it->iBlock = -1;
}

static int iterFirst(wcs_iiter *pI) {
  sst_iter *it = (sst_iter *)pI;
  int rc;
  if (it->rc || iterMeta(it)) return it->rc;
  if (it->pM->nBlock == 0) {
    unposition(it);
    return WCS_OK;
  }
  rc = loadBlock(it, 0);
  if (rc == WCS_OK) rc = block_iter_first(&it->bi);
  if (rc != WCS_OK) return iterFail(it, rc);
  return skipForward(it);
}

static int iterLast(wcs_iiter *pI) {
  sst_iter *it = (sst_iter *)pI;
  int rc;
  if (it->rc || iterMeta(it)) return it->rc;
  if (it->pM->nBlock == 0) {
    unposition(it);
    return WCS_OK;
  }
  rc = loadBlock(it, it->pM->nBlock - 1);
  if (rc == WCS_OK) rc = block_iter_last(&it->bi);
  if (rc != WCS_OK) return iterFail(it, rc);
  return skipBackward(it);
}

static int iterSeek(wcs_iiter *pI, const uint8_t *pIKey, size_t nIKey) {
  sst_iter *it = (sst_iter *)pI;
  int i, rc;
  if (it->rc || iterMeta(it)) return it->rc;
  assert(nIKey >= WCS_IKEY_TRAILER);
  i = findBlock(it->pM, pIKey, nIKey - WCS_IKEY_TRAILER);
  if (i >= it->pM->nBlock) {
    unposition(it);
    return WCS_OK;
  }
  /* Versions of one user key may fill several blocks whose separators
  ** all equal that key, so a block whose entries are all < the target
  ** passes the seek on to the next block. */
  for (;;) {
    rc = loadBlock(it, i);
    if (rc == WCS_OK) rc = block_iter_seek(&it->bi, pIKey, nIKey);
    if (rc != WCS_OK) return iterFail(it, rc);
    if (block_iter_valid(&it->bi) || ++i >= it->pM->nBlock) break;
  }
  return WCS_OK;
}

static int iterNext(wcs_iiter *pI) {
  sst_iter *it = (sst_iter *)pI;
  int rc;
  if (!iterValid(pI)) return it->rc;
  rc = block_iter_next(&it->bi);
  if (rc != WCS_OK) return iterFail(it, rc);
  if (!block_iter_valid(&it->bi)) return skipForward(it);
  return WCS_OK;
}

static block_iter *iterRun(wcs_iiter *pI) {
  sst_iter *it = (sst_iter *)pI;
  return iterValid(pI) ? &it->bi : NULL;
}

static int iterPrev(wcs_iiter *pI) {
  sst_iter *it = (sst_iter *)pI;
  int rc;
  if (!iterValid(pI)) return it->rc;
  rc = block_iter_prev(&it->bi);
  if (rc != WCS_OK) return iterFail(it, rc);
  if (!block_iter_valid(&it->bi)) return skipBackward(it);
  return WCS_OK;
}

static int iterSeekForPrev(wcs_iiter *pI, const uint8_t *pIKey, size_t nIKey) {
  sst_iter *it = (sst_iter *)pI;
  int rc = iterSeek(pI, pIKey, nIKey);
  if (rc != WCS_OK) return rc;
  if (!iterValid(pI)) return iterLast(pI);
  if (wcs_ikey_cmp(it->bi.pKey, it->bi.nKey, pIKey, nIKey) > 0) {
    return iterPrev(pI);
  }
  return WCS_OK;
}

static const uint8_t *iterKey(const wcs_iiter *pI, size_t *pn) {
  const sst_iter *it = (const sst_iter *)pI;
  *pn = it->bi.nKey;
  return it->bi.pKey;
}

static const uint8_t *iterValue(const wcs_iiter *pI, size_t *pn) {
  const sst_iter *it = (const sst_iter *)pI;
  *pn = it->bi.nVal;
  return it->bi.pVal;
}

static int iterStatus(const wcs_iiter *pI, char **pzErr) {
  const sst_iter *it = (const sst_iter *)pI;
  if (it->rc && it->zErr) wcs_seterr(pzErr, it->rc, "%s", it->zErr);
  return it->rc;
}

/* Closed iterators kept per thread for the next sst_reader_iter (with
** their key buffers), so that the short iterators of point reads cost no
** allocation; freed when the thread exits. */
#define SST_ITER_POOL 16
typedef struct sst_iter_pool {
  int n; /* iterators in a */
  struct sst_iter *a[SST_ITER_POOL];
} sst_iter_pool;
static pthread_key_t poolKey;
static pthread_once_t poolOnce = PTHREAD_ONCE_INIT;
static int bPoolKey = 0; /* 1 once poolKey exists */

static void freePool(void *pArg) {
  sst_iter_pool *pPool = pArg;
  int i;
  for (i = 0; i < pPool->n; i++) {
    block_iter_clear(&pPool->a[i]->bi);
    free(pPool->a[i]);
  }
  free(pPool);
}
static void makePoolKey(void) {
  bPoolKey = pthread_key_create(&poolKey, freePool) == 0;
}
static sst_iter_pool *threadPool(int bCreate) {
  sst_iter_pool *p;
  pthread_once(&poolOnce, makePoolKey);
  if (!bPoolKey) return NULL;
  p = pthread_getspecific(poolKey);
  if (p == NULL && bCreate) {
    p = calloc(1, sizeof *p);
    if (p != NULL && pthread_setspecific(poolKey, p) != 0) {
      free(p);
      p = NULL;
    }
  }
  return p;
}

static void iterClose(wcs_iiter *pI) {
  sst_iter *it = (sst_iter *)pI;
  sst_iter_pool *pPool;
  if (it == NULL) return;
  pfCancel(it); /* before the buffer its jobs read goes */
  wcs_cache_release(it->pR->pCache, it->pH);
  unpinMeta(it->pR, it->pMetaH);
  free(it->ra.a);
  free(it->zErr);
  pPool = threadPool(1);
  if (pPool && pPool->n < SST_ITER_POOL) {
    pPool->a[pPool->n++] = it;
    return;
  }
  block_iter_clear(&it->bi);
  free(it);
}

static const wcs_iiter_methods sstIterMethods = {
    iterFirst, iterLast, iterSeek,  iterSeekForPrev, iterNext,  iterPrev,
    iterValid, iterKey,  iterValue, iterStatus,      iterClose, iterRun,
};

int sst_reader_iter_prefix(sst_reader *p, int bFillCache, int bUseHash,
                           uint64_t hPrefix, wcs_iiter **ppIter, char **pzErr) {
  wcs_cache_handle *h;
  const sst_tmeta *m;
  sst_iter *it;
  int rc;
  *ppIter = NULL;
  if (!bUseHash || !sst_reader_bloom_prefixed(p)) {
    return sst_reader_iter(p, bFillCache, ppIter, pzErr);
  }
  rc = pinMeta(p, &h, &m, pzErr);
  if (rc != WCS_OK) return rc;
  if (!bloom_may_contain(&m->bloom, hPrefix)) {
    unpinMeta(p, h);
    return WCS_OK;
  }
  rc = sst_reader_iter(p, bFillCache, ppIter, pzErr);
  if (rc != WCS_OK) {
    unpinMeta(p, h);
    return rc;
  }
  it = (sst_iter *)*ppIter;
  it->pMetaH = h; /* the iterator keeps the pin */
  it->pM = m;
  return WCS_OK;
}

int sst_iter_retarget(wcs_iiter *pI, int bUseHash, uint64_t hPrefix) {
  sst_iter *it = (sst_iter *)pI;
  assert(pI->pMethods == &sstIterMethods);
  /* an earlier scan's readahead does not carry over (a point read's
  ** iterator never had one); a buffer of the first read's size is kept
  ** for the next scan, a larger one freed */
  if (it->ra.a || it->ra.nSeq) {
    pfCancel(it);
    if (it->ra.nAlloc > SST_READAHEAD_MIN) {
      free(it->ra.a);
      memset(&it->ra, 0, sizeof it->ra);
    } else {
      it->ra.n = 0;
      it->ra.iOff = 0;
      it->ra.nSeq = 0;
      it->ra.nNext = 0;
    }
  }
  if (!bUseHash || !it->pR->bBloom ||
      it->pR->iBloomKind != WCS_BLOOM_KIND_PREFIX) {
    return 1;
  }
  if (it->rc || iterMeta(it)) return 1;
  return bloom_may_contain(&it->pM->bloom, hPrefix);
}

int sst_reader_iter(sst_reader *p, int bFillCache, wcs_iiter **ppIter,
                    char **pzErr) {
  sst_iter_pool *pPool = threadPool(0);
  sst_iter *it;
  *ppIter = NULL;
  if (pPool && pPool->n > 0) {
    block_iter bi;
    it = pPool->a[--pPool->n];
    bi = it->bi; /* keeps its buffers; the rest starts afresh */
    memset(it, 0, sizeof *it);
    it->bi = bi;
  } else {
    it = calloc(1, sizeof *it);
    if (it == NULL) return wcs_seterr(pzErr, WCS_NOMEM, "out of memory");
  }
  it->base.pMethods = &sstIterMethods;
  it->pR = p;
  it->bFill = bFillCache;
  it->iBlock = -1;
  *ppIter = &it->base;
  return WCS_OK;
}
