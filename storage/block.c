/*
** block.c — block contents (prefix-compressed entries with restart points),
** the block cursor, and the on-disk framing of a block (type byte, raw
** length, masked CRC-32C, optional zstd). The layout is in block.h's header
** comment and, byte by byte, in doc/format.md ("Blocks").
**
** How the cursor works. Forward moves decode one entry header (three
** varints, four in a block with suffixes, usually one byte each: a
** one-load fast path) and rebuild the key only when it shares a prefix
** with its predecessor or a suffix with the base (the latest entry stored
** whole, which stays in place in the block: the cursor keeps a pointer to
** it); keys stored whole and all values are pointed to inside the block,
** so a forward scan copies only what it rebuilds. A seek binary-searches
** the restart keys (compared in place) and scans at most one restart
** interval.
**
** Reverse moves cannot decode backwards, so the first Prev into a restart
** interval scans that interval once from its restart point and records
** every entry (offset, length, whole key) in a small cache; later Prevs in
** the same interval are O(1). Last fills the cache the same way. Any other
** move drops the cache.
**
** Every length and offset read from the block is checked against the end
** of the entries before use; a bad one makes the cursor invalid with
** WCS_CORRUPT (through WCS_CORRUPT_BKPT) — never a read outside the block.
*/
#include "storage/block.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <zstd_errors.h>
/* zstd.h again, for its experimental parameters (block_frame) */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/* ==================================================================
** Framing
** ================================================================== */

int block_frame(const uint8_t *a, size_t n, int iLevel, ZSTD_CCtx *pCCtx,
                wcs_buf *pScratch, wcs_buf *pOut, size_t *pnStored) {
  const uint8_t *pStore = a;
  size_t nStore = n;
  uint8_t aTrailer[WCS_BLOCK_TRAILER];
  uint32_t crc;

  assert(n <= WCS_BLOCK_MAX_RAW);
  aTrailer[WCS_BLOCK_OFF_TYPE] = WCS_BLOCK_RAW;
  if (iLevel > 0 && pCCtx != NULL && n > 0) {
    size_t nBound = ZSTD_compressBound(n);
    size_t r;
    pScratch->n = 0;
    if (wcs_buf_reserve(pScratch, nBound)) return WCS_NOMEM;
    /* Literals are stored as they are, not Huffman-coded: a data block's
    ** literals are short pieces of keys and values, and reading them back
    ** through a Huffman table is most of what decompressing a small block
    ** costs beyond copying. On 8 KiB blocks of bench_sql's table (zstd's
    ** own benchmark, zstd -b3 -B8192): decompression 757 -> 1008 MB/s,
    ** compression 338 -> 428 MB/s, size 5.56 -> 5.37 times smaller. A
    ** library that does not know the parameter (it is in zstd's
    ** experimental set) compresses them as before; every reader decodes
    ** both. */
    ZSTD_CCtx_reset(pCCtx, ZSTD_reset_parameters);
    ZSTD_CCtx_setParameter(pCCtx, ZSTD_c_compressionLevel, iLevel);
    ZSTD_CCtx_setParameter(pCCtx, ZSTD_c_literalCompressionMode,
                           ZSTD_ps_disable);
    r = ZSTD_compress2(pCCtx, pScratch->a, nBound, a, n);
    /* Keep the compressed form only if it saves at least 1/8 (12.5%). */
    if (!ZSTD_isError(r) && (n - r) * 8 >= n && r < n) {
      pStore = pScratch->a;
      nStore = r;
      aTrailer[WCS_BLOCK_OFF_TYPE] = WCS_BLOCK_ZSTD;
    }
  }
  wcs_put32(aTrailer + WCS_BLOCK_OFF_RAW, (uint32_t)n);
  crc = wcs_crc32c(0, pStore, nStore);
  crc = wcs_crc32c(crc, aTrailer, WCS_BLOCK_OFF_CRC);
  wcs_put32(aTrailer + WCS_BLOCK_OFF_CRC, wcs_crc_mask(crc));
  if (wcs_buf_reserve(pOut, nStore + WCS_BLOCK_TRAILER)) return WCS_NOMEM;
  memcpy(pOut->a + pOut->n, pStore, nStore);
  memcpy(pOut->a + pOut->n + nStore, aTrailer, WCS_BLOCK_TRAILER);
  pOut->n += nStore + WCS_BLOCK_TRAILER;
  *pnStored = nStore;
  return WCS_OK;
}

int block_check(const uint8_t *a, size_t n, int *pType, uint32_t *pnRaw,
                const char **pzWhy) {
  const uint8_t *t;
  size_t nStored;
  uint32_t nRaw;
  if (n < WCS_BLOCK_TRAILER) {
    *pzWhy = "block shorter than its trailer";
    return WCS_CORRUPT_BKPT;
  }
  nStored = n - WCS_BLOCK_TRAILER;
  t = a + nStored;
  /* The stored bytes, type and raw length are contiguous: one CRC pass. */
  if (wcs_crc_unmask(wcs_get32(t + WCS_BLOCK_OFF_CRC)) !=
      wcs_crc32c(0, a, nStored + WCS_BLOCK_OFF_CRC)) {
    *pzWhy = "checksum mismatch";
    return WCS_CORRUPT_BKPT;
  }
  nRaw = wcs_get32(t + WCS_BLOCK_OFF_RAW);
  switch (t[WCS_BLOCK_OFF_TYPE]) {
  case WCS_BLOCK_RAW:
    if (nRaw != nStored) {
      *pzWhy = "raw length does not match a raw block's size";
      return WCS_CORRUPT_BKPT;
    }
    break;
  case WCS_BLOCK_ZSTD:
    if (nRaw > WCS_BLOCK_MAX_RAW) {
      *pzWhy = "raw length out of range";
      return WCS_CORRUPT_BKPT;
    }
    break;
  default:
    *pzWhy = "unknown block type";
    return WCS_CORRUPT_BKPT;
  }
  *pType = t[WCS_BLOCK_OFF_TYPE];
  *pnRaw = nRaw;
  return WCS_OK;
}

/* One ZSTD_DCtx per thread, created on first use and freed when the thread
** exits (pthread key destructor). */
static pthread_key_t dctxKey;
static pthread_once_t dctxOnce = PTHREAD_ONCE_INIT;
static int bDctxKey = 0; /* 1 once dctxKey exists */

static void freeDctx(void *p) {
  ZSTD_freeDCtx((ZSTD_DCtx *)p);
}
static void makeDctxKey(void) {
  bDctxKey = pthread_key_create(&dctxKey, freeDctx) == 0;
}
static ZSTD_DCtx *threadDctx(void) {
  ZSTD_DCtx *d;
  pthread_once(&dctxOnce, makeDctxKey);
  if (!bDctxKey) return NULL;
  d = pthread_getspecific(dctxKey);
  if (d == NULL) {
    d = ZSTD_createDCtx();
    if (d != NULL && pthread_setspecific(dctxKey, d) != 0) {
      ZSTD_freeDCtx(d);
      d = NULL;
    }
  }
  return d;
}

int block_inflate(const uint8_t *p, size_t n, uint8_t *pOut, size_t nRaw,
                  const char **pzWhy) {
  ZSTD_DCtx *d = threadDctx();
  unsigned long long nFrame;
  size_t r;
  if (d == NULL) return WCS_NOMEM;
  nFrame = ZSTD_getFrameContentSize(p, n);
  if (nFrame == ZSTD_CONTENTSIZE_ERROR || nFrame == ZSTD_CONTENTSIZE_UNKNOWN ||
      nFrame != (unsigned long long)nRaw) {
    *pzWhy = "zstd frame header does not match the raw length";
    return WCS_CORRUPT_BKPT;
  }
  r = ZSTD_decompressDCtx(d, pOut, nRaw, p, n);
  if (ZSTD_isError(r)) {
    *pzWhy = ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation
                 ? "out of memory in zstd"
                 : "zstd frame does not decode";
    return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation
               ? WCS_NOMEM
               : WCS_CORRUPT_BKPT;
  }
  if (r != nRaw) {
    *pzWhy = "zstd frame decodes to the wrong length";
    return WCS_CORRUPT_BKPT;
  }
  return WCS_OK;
}

/* ==================================================================
** Builder
** ================================================================== */

void block_builder_init(block_builder *p, int nInterval) {
  memset(p, 0, sizeof *p);
  p->nInterval = nInterval < 1 ? 1 : nInterval;
}

/* The next entry is a restart point (its key stored whole). */
static inline int atRestart(const block_builder *p) {
  return p->nEntry == 0 || p->nSince >= p->nInterval ||
         (p->nIntervalBytes && p->data.n - p->oRestart >= p->nIntervalBytes);
}

/*
** The builder's share of a bulk load's CPU is mostly finding how much of
** a key its neighbours already hold: the engine's cell keys are about 50
** bytes, of which 30 or more repeat the previous key and a few at the end
** (the trailer's high bytes) repeat the base. Both lengths are found eight
** bytes at a time (wcs_common_prefix in util.h, commonSuffix here), as
** little-endian words whose exclusive or locates the first differing
** byte: the lowest set byte going forwards, the highest going backwards.
** Only whole words inside both strings are read.
*/

/* The number of bytes a[0..na) and b[0..nb) have in common at their ends,
** at most nMax (<= na, nb). */
static inline size_t commonSuffix(const uint8_t *a, size_t na, const uint8_t *b,
                                  size_t nb, size_t nMax) {
  size_t i = 0;
#if WCS_BLOCK_WORDS
  size_t nMin = na < nb ? na : nb;
  while (i + 8 <= nMin) {
    uint64_t x, y;
    memcpy(&x, a + (na - i - 8), 8);
    memcpy(&y, b + (nb - i - 8), 8);
    if (x != y) {
      i += (size_t)(__builtin_clzll(x ^ y) >> 3);
      return i < nMax ? i : nMax;
    }
    i += 8;
    if (i >= nMax) return nMax;
  }
#endif
  while (i < nMax && a[na - 1 - i] == b[nb - 1 - i])
    i++;
  return i;
}

/* The entry's header is usually four one-byte varints, written as such
** when every length is below 128. The index block (one entry per data
** block) goes through block_builder_add, which finds nShared itself. */
int block_builder_add_shared(block_builder *p, const uint8_t *pKey, size_t nKey,
                             size_t nShared, const uint8_t *pVal, size_t nVal) {
  size_t nSuffix = 0, nUnshared, nNeed;
  int bSuffix = p->bSuffix; /* not reloaded after each byte stored */
  uint8_t *z;
  int bRestart = atRestart(p);
  assert(!p->bFinished);
  if (bRestart) {
    if (wcs_buf_append32(&p->restarts, (uint32_t)p->data.n)) return WCS_NOMEM;
    p->nSince = 0;
    p->oRestart = p->data.n;
    nShared = 0;
    if (p->nSeekEvery > 0 && p->nEntry == 0) {
      int k = (p->nInterval - 1) / p->nSeekEvery;
      p->nSeekK = k > (int)WCS_BLOCK_SEEK_MAXK ? (int)WCS_BLOCK_SEEK_MAXK : k;
    }
    if (p->nSeekK > 0) {
      size_t nSlots = WCS_BLOCK_SLOT * (size_t)p->nSeekK;
      if (wcs_buf_reserve(&p->seeks, nSlots)) return WCS_NOMEM;
      memset(p->seeks.a + p->seeks.n, 0, nSlots); /* 0: no seek point */
      p->seeks.n += nSlots;
    }
  } else if (p->nSeekK > 0 && p->nSince >= p->nSeekEvery &&
             p->nSince / p->nSeekEvery <= p->nSeekK &&
             (p->bBaseAtRestart || !bSuffix) &&
             p->data.n - p->oRestart < WCS_BLOCK_SLOT_EXTRA) {
    /* a seek point for slot j - 1, j = nSince / every (doc/format.md,
    ** "Seek points"): the first entry of [j * every, (j + 1) * every) in
    ** the interval that shares with its predecessor at most one byte more
    ** than with the restart key, a byte the slot then holds. Stored as any
    ** other entry, it decodes from the restart key and the slot. */
    uint8_t *pSlot =
        p->seeks.a + p->seeks.n -
        WCS_BLOCK_SLOT * (size_t)(p->nSeekK - p->nSince / p->nSeekEvery + 1);
    if (pSlot[0] == 0 && pSlot[1] == 0) {
      size_t nMax = p->nRestartKey < nKey ? p->nRestartKey : nKey;
      size_t nLcp = wcs_common_prefix(p->data.a + p->oRestartKey, pKey, nMax);
      uint32_t v = (uint32_t)(p->data.n - p->oRestart);
      if (nLcp <= nShared && nLcp + 1 >= nShared) {
        if (nLcp < nShared) {
          v |= WCS_BLOCK_SLOT_EXTRA;
          pSlot[2] = pKey[nLcp];
        }
        pSlot[0] = (uint8_t)v;
        pSlot[1] = (uint8_t)(v >> 8);
      }
    }
  }
  if (!bRestart && bSuffix && nKey <= WCS_BLOCK_KEY_MAX) {
    /* the longest common suffix with the base that does not overlap the
    ** shared prefix */
    size_t nMax = nKey - nShared < p->base.n ? nKey - nShared : p->base.n;
    nSuffix = commonSuffix(p->base.a, p->base.n, pKey, nKey, nMax);
  }
  nUnshared = nKey - nShared - nSuffix;
  nNeed = 4 * 5 + nUnshared + nVal;
  if (nNeed > p->data.nAlloc - p->data.n && wcs_buf_reserve(&p->data, nNeed)) {
    return WCS_NOMEM;
  }
  z = p->data.a + p->data.n;
  if ((nShared | nUnshared | nSuffix | nVal) < 0x80) {
    /* without suffixes nSuffix is 0 and nVal overwrites it */
    z[0] = (uint8_t)nShared;
    z[1] = (uint8_t)nUnshared;
    z[2] = (uint8_t)nSuffix;
    z[2 + bSuffix] = (uint8_t)nVal;
    z += 3 + bSuffix;
  } else {
    z += wcs_put_varint(z, nShared);
    z += wcs_put_varint(z, nUnshared);
    if (bSuffix) z += wcs_put_varint(z, nSuffix);
    z += wcs_put_varint(z, nVal);
  }
  /* pKey is NULL for an empty key: no offset may be added to it */
  if (nUnshared) wcs_copy_short(z, pKey + nShared, nUnshared);
  z += nUnshared;
  wcs_copy_short(z, pVal, nVal);
  z += nVal;
  if (bRestart) {
    p->oRestartKey = (size_t)(z - p->data.a) - nVal - nUnshared;
    p->nRestartKey = nKey;
  }
  p->data.n = (size_t)(z - p->data.a);
  if (bSuffix && nShared == 0 && nSuffix == 0) {
    p->base.n = 0; /* stored whole: the next suffixes come from it */
    if (wcs_buf_append(&p->base, pKey, nKey)) return WCS_NOMEM;
    p->bBaseAtRestart = bRestart;
  }
  p->nSince++;
  p->nEntry++;
  return WCS_OK;
}

int block_builder_add(block_builder *p, const uint8_t *pKey, size_t nKey,
                      const uint8_t *pVal, size_t nVal) {
  size_t nShared = 0;
  int rc;
  if (!atRestart(p)) {
    size_t nMax = p->last.n < nKey ? p->last.n : nKey;
    nShared = wcs_common_prefix(p->last.a, pKey, nMax);
  }
  rc = block_builder_add_shared(p, pKey, nKey, nShared, pVal, nVal);
  if (rc == WCS_OK) {
    /* keep the key for the next prefix: the bytes past the shared
    ** prefix are all that change */
    p->last.n = nShared;
    if (nKey > nShared) {
      rc = wcs_buf_append(&p->last, pKey + nShared, nKey - nShared);
    }
  }
  return rc;
}

int block_builder_finish(block_builder *p, const uint8_t **pp, size_t *pn) {
  if (!p->bFinished) {
    uint32_t nCount = (uint32_t)(p->restarts.n / 4);
    /* seek slots that could not all be counted are left out: the entries
    ** read alike without them */
    if (p->nSeekK > 0 && nCount <= WCS_BLOCK_SEEK_MAXR) {
      if (wcs_buf_append(&p->data, p->seeks.a, p->seeks.n)) return WCS_NOMEM;
      nCount |= WCS_BLOCK_SEEK | (uint32_t)p->nSeekK << WCS_BLOCK_SEEK_SHIFT;
    }
    if (wcs_buf_append(&p->data, p->restarts.a, p->restarts.n) ||
        wcs_buf_append32(&p->data,
                         nCount | (p->bSuffix ? WCS_BLOCK_SUFFIX : 0))) {
      return WCS_NOMEM;
    }
    p->bFinished = 1;
  }
  *pp = p->data.a;
  *pn = p->data.n;
  return WCS_OK;
}

void block_builder_reset(block_builder *p) {
  p->data.n = p->restarts.n = p->last.n = p->base.n = p->seeks.n = 0;
  p->nSince = p->nEntry = 0;
  p->oRestart = p->oRestartKey = p->nRestartKey = 0;
  p->bBaseAtRestart = 0;
  p->bFinished = 0;
}

void block_builder_free(block_builder *p) {
  wcs_buf_free(&p->data);
  wcs_buf_free(&p->restarts);
  wcs_buf_free(&p->last);
  wcs_buf_free(&p->base);
  wcs_buf_free(&p->seeks);
  block_builder_reset(p); /* the settings stay */
}

/* ==================================================================
** Cursor
** ================================================================== */

/* Make the cursor invalid with error rc; returns rc. */
static int fail(block_iter *p, int rc) {
  p->rc = rc;
  p->iCur = p->nEnt;
  p->nPrev = 0;
  return rc;
}

static inline uint32_t restartAt(const block_iter *p, uint32_t i) {
  return wcs_get32(p->a + p->iRestarts + 4 * (size_t)i);
}

/* Seek slot j of restart point i: the seek point's offset from the
** restart point's, or 0 for none, with WCS_BLOCK_SLOT_EXTRA when it
** shares one byte more with its predecessor than with the restart key:
** that byte is *pcExtra. */
static inline uint32_t seekSlot(const block_iter *p, uint32_t i, uint32_t j,
                                uint8_t *pcExtra) {
  const uint8_t *z = p->aSeek + WCS_BLOCK_SLOT * ((size_t)i * p->nSeekK + j);
  *pcExtra = z[2];
  return (uint32_t)z[0] | (uint32_t)z[1] << 8;
}

/* Read a varint of at most 32 bits from [z, zEnd); bytes used or 0. */
static inline int getVarint32(const uint8_t *z, const uint8_t *zEnd,
                              uint32_t *pv) {
  uint32_t v = 0;
  int i;
  for (i = 0; i < 5 && z + i < zEnd; i++) {
    uint32_t c = z[i];
    if (i == 4 && c > 0x0f) return 0;
    v |= (c & 0x7f) << (7 * i);
    if ((c & 0x80) == 0) {
      *pv = v;
      return i + 1;
    }
  }
  return 0;
}

/* The lengths of one entry (parseEntry). */
typedef struct EntryLen {
  uint32_t nShared;   /* bytes of the previous key's prefix */
  uint32_t nUnshared; /* bytes stored in the entry */
  uint32_t nSuffix;   /* bytes of the base's suffix (0 without suffixes) */
  uint32_t nVal;      /* value bytes */
} EntryLen;

/* parseEntry for any header: varint by varint, every check. */
static int parseSlow(const block_iter *p, uint32_t iOff, uint32_t nPrevKey,
                     uint32_t nBase, EntryLen *e, const uint8_t **pzDelta) {
  const uint8_t *z = p->a + iOff;
  const uint8_t *zEnd = p->a + p->nEnt;
  uint32_t nShared, nUnshared, nVal, nSuffix = 0;
  int n;
  /* defined outputs on the error paths too (callers read them only after
  ** WCS_OK, but the compiler cannot see that) */
  memset(e, 0, sizeof *e);
  *pzDelta = z;
  if ((n = getVarint32(z, zEnd, &nShared)) == 0) return WCS_CORRUPT_BKPT;
  z += n;
  if ((n = getVarint32(z, zEnd, &nUnshared)) == 0) return WCS_CORRUPT_BKPT;
  z += n;
  if (p->bSuffix) {
    if ((n = getVarint32(z, zEnd, &nSuffix)) == 0) return WCS_CORRUPT_BKPT;
    z += n;
  }
  if ((n = getVarint32(z, zEnd, &nVal)) == 0) return WCS_CORRUPT_BKPT;
  z += n;
  if (nShared > nPrevKey || nSuffix > nBase) return WCS_CORRUPT_BKPT;
  if (nUnshared > (size_t)(zEnd - z)) return WCS_CORRUPT_BKPT;
  if (nVal > (size_t)(zEnd - z) - nUnshared) return WCS_CORRUPT_BKPT;
  if (nSuffix &&
      (uint64_t)nShared + nUnshared + nSuffix > WCS_BLOCK_KEY_MAX) {
    return WCS_CORRUPT_BKPT;
  }
  if (p->bIKey &&
      (uint64_t)nShared + nUnshared + nSuffix < WCS_IKEY_TRAILER) {
    return WCS_CORRUPT_BKPT;
  }
  e->nShared = nShared;
  e->nUnshared = nUnshared;
  e->nSuffix = nSuffix;
  e->nVal = nVal;
  *pzDelta = z;
  return WCS_OK;
}

/* Parse the entry header at iOff: lengths, and where the key delta starts.
** Checks that the key delta and value fit before the restart array, that
** nShared <= nPrevKey and nSuffix <= nBase (pass 0 for both at a restart
** point: its key must be whole), and that a rebuilt key is not absurdly
** long. Returns WCS_OK or WCS_CORRUPT.
**
** Inline, only the common header: one byte per varint, read with one load
** (a header that starts at least 3 bytes before the end of the entries
** can be loaded as 4 bytes, as the restart count follows the entries),
** with lengths that pass the checks (a key of one-byte lengths is at most
** 3 * 127 bytes, never too long). Anything else, damage included, is left
** to parseSlow. */
static inline int parseEntry(const block_iter *p, uint32_t iOff,
                             uint32_t nPrevKey, uint32_t nBase, EntryLen *e,
                             const uint8_t **pzDelta) {
  const uint8_t *z = p->a + iOff;
  uint32_t nLeft, h, nHdr = p->bSuffix ? 4 : 3;
  assert(iOff <= p->nEnt);
  nLeft = p->nEnt - iOff;
  if (nLeft >= nHdr) {
    h = wcs_get32(z);
    if (!p->bSuffix) h &= 0xffffffu;
    if ((h & 0x80808080u) == 0) {
      e->nShared = h & 0xff;
      e->nUnshared = (h >> 8) & 0xff;
      e->nSuffix = p->bSuffix ? (h >> 16) & 0xff : 0;
      e->nVal = h >> (p->bSuffix ? 24 : 16);
      if (e->nShared <= nPrevKey && e->nSuffix <= nBase &&
          e->nUnshared + e->nVal <= nLeft - nHdr &&
          (!p->bIKey ||
           e->nShared + e->nUnshared + e->nSuffix >= WCS_IKEY_TRAILER)) {
        *pzDelta = z + nHdr;
        return WCS_OK;
      }
    }
  }
  {
    /* through locals, so that e (the caller's, after inlining) need not
    ** live in memory on the fast path */
    EntryLen s;
    const uint8_t *zDelta;
    int rc = parseSlow(p, iOff, nPrevKey, nBase, &s, &zDelta);
    *e = s;
    *pzDelta = zDelta;
    return rc;
  }
}

/* Make room for a rebuilt key of nKey bytes in aKey (keeping the bytes
** there, which may be the current key). Nonzero on out-of-memory. */
static int growKey(block_iter *p, uint32_t nKey) {
  uint32_t nNew = nKey < 256 ? 256 : (nKey > 0x7fffffffu ? nKey : nKey * 2);
  uint8_t *aNew = realloc(p->aKey, nNew);
  if (aNew == NULL) return 1;
  if (p->pKey == p->aKey) p->pKey = aNew;
  p->aKey = aNew;
  p->nKeyAlloc = nNew;
  return 0;
}

/* Make the entry at iOff current. Its predecessor's key is the current key
** (p->pKey, nPrevKey bytes); pass nPrevKey 0 at a restart point. A key
** that shares a prefix is rebuilt in aKey, where the predecessor's bytes
** [0, nShared) already are unless the predecessor was stored whole. */
static inline int decodeAt(block_iter *p, uint32_t iOff, uint32_t nPrevKey) {
  EntryLen e;
  const uint8_t *z;
  int rc = parseEntry(p, iOff, nPrevKey, nPrevKey ? p->nBase : 0, &e, &z);
  uint32_t nKey = e.nShared + e.nUnshared + e.nSuffix;
  if (rc != WCS_OK) return fail(p, rc);
  if (e.nShared == 0 && e.nSuffix == 0) {
    p->pKey = z; /* stored whole: also the new base */
    p->pBase = z;
    p->nBase = e.nUnshared;
  } else {
    if (nKey > p->nKeyAlloc && growKey(p, nKey)) return fail(p, WCS_NOMEM);
    /* a key elsewhere (in the block, or in prevKeys) never overlaps aKey */
    if (p->pKey != p->aKey) wcs_copy_short(p->aKey, p->pKey, e.nShared);
    wcs_copy_short(p->aKey + e.nShared, z, e.nUnshared);
    /* the base is a whole entry, in the block: never in aKey */
    wcs_copy_short(p->aKey + e.nShared + e.nUnshared,
                   p->pBase + p->nBase - e.nSuffix, e.nSuffix);
    p->pKey = p->aKey;
  }
  p->nKey = nKey;
  p->pVal = z + e.nUnshared;
  p->nVal = e.nVal;
  p->iCur = iOff;
  p->iNext = (uint32_t)(z + e.nUnshared + e.nVal - p->a);
  return WCS_OK;
}

int block_iter_init(block_iter *p, const uint8_t *a, size_t n, int bIKey) {
  uint32_t nRestart, nSeekK = 0;
  p->pAid = NULL;
  p->a = a;
  p->bIKey = (uint8_t)(bIKey != 0);
  p->bSuffix = 0;
  p->pBase = NULL;
  p->nBase = 0;
  p->rc = WCS_OK;
  p->nEnt = p->nRestart = 0;
  p->iCur = p->iNext = 0;
  p->pKey = p->pVal = NULL;
  p->nKey = p->nVal = 0;
  p->nPrev = p->iPrev = 0;
  p->aSeek = NULL;
  p->nSeekK = 0;
  if (n < 4 || n > 0xffffffffu) return fail(p, WCS_CORRUPT_BKPT);
  nRestart = wcs_get32(a + n - 4);
  p->bSuffix = (nRestart & WCS_BLOCK_SUFFIX) != 0;
  nRestart &= ~WCS_BLOCK_SUFFIX;
  if (nRestart & WCS_BLOCK_SEEK) {
    nSeekK = (nRestart >> WCS_BLOCK_SEEK_SHIFT) & WCS_BLOCK_SEEK_MAXK;
    nRestart &= WCS_BLOCK_SEEK_MAXR;
  }
  if ((uint64_t)nRestart * (4 + WCS_BLOCK_SLOT * (uint64_t)nSeekK) > n - 4) {
    return fail(p, WCS_CORRUPT_BKPT);
  }
  p->iRestarts = (uint32_t)(n - 4 - 4 * (size_t)nRestart);
  p->nEnt =
      (uint32_t)(p->iRestarts - WCS_BLOCK_SLOT * (size_t)nSeekK * nRestart);
  p->nRestart = nRestart;
  if (nSeekK > 0) {
    p->aSeek = a + p->nEnt;
    p->nSeekK = nSeekK;
  }
  if (p->nEnt > 0 && (nRestart == 0 || restartAt(p, 0) != 0)) {
    return fail(p, WCS_CORRUPT_BKPT);
  }
  p->iCur = p->nEnt;
  return WCS_OK;
}

static const uint32_t *aidOff(const block_aid *pAid) {
  return (const uint32_t *)(pAid->aSlice + 2 * (size_t)pAid->nRestart);
}

int block_iter_init_aid(block_iter *p, const uint8_t *a, size_t n,
                        const block_aid *pAid) {
  if (pAid == NULL) return block_iter_init(p, a, n, 1);
  /* The aid was built from these very bytes, checked as init checks. */
  p->pAid = pAid;
  p->a = a;
  p->bIKey = 1;
  p->bSuffix = (uint8_t)(pAid->bSuffix != 0);
  p->pBase = NULL;
  p->nBase = 0;
  p->rc = WCS_OK;
  p->nEnt = pAid->nEnt;
  p->nRestart = pAid->nRestart;
  p->iRestarts = pAid->iRestarts;
  p->nSeekK = pAid->nSeekK;
  p->aSeek =
      pAid->nSeekK ? (const uint8_t *)(aidOff(pAid) + pAid->nRestart) : NULL;
  p->iCur = p->nEnt;
  p->iNext = 0;
  p->pKey = p->pVal = NULL;
  p->nKey = p->nVal = 0;
  p->nPrev = p->iPrev = 0;
  return WCS_OK;
}

static const uint8_t *aidPrefix(const block_aid *pAid) {
  return (const uint8_t *)(aidOff(pAid) + pAid->nRestart) +
         WCS_BLOCK_SLOT * (size_t)pAid->nSeekK * pAid->nRestart;
}

/* The user key of the restart entry i (a whole key); 0 if damaged. */
static int aidRestartKey(const block_iter *p, uint32_t i, const uint8_t **pz,
                         size_t *pn) {
  uint32_t iOff = restartAt(p, i);
  EntryLen e;
  if (iOff >= p->nEnt || parseEntry(p, iOff, 0, 0, &e, pz) != WCS_OK) {
    return 0;
  }
  *pn = e.nUnshared - WCS_IKEY_TRAILER;
  return 1;
}

int block_aid_build(const uint8_t *a, size_t n, block_aid **pp, size_t *pn) {
  block_iter bi;
  block_aid *pAid;
  const uint8_t *pFirst, *pLast, *z;
  size_t nFirst, nLast, nU, nPrefix = 0, nAid;
  uint32_t i, *aOff;
  *pp = NULL;
  *pn = 0;
  memset(&bi, 0, sizeof bi);
  if (block_iter_init(&bi, a, n, 1) != WCS_OK || bi.nEnt == 0) return WCS_OK;
  /* The prefix shared by the restart keys: that of the first and the last
  ** (they are sorted). Keys between restart points need not share it: a
  ** target outside its range lands before the first restart point or at
  ** the last one either way, and the scan from there finds it. */
  if (!aidRestartKey(&bi, 0, &pFirst, &nFirst) ||
      !aidRestartKey(&bi, bi.nRestart - 1, &pLast, &nLast)) {
    return WCS_OK; /* damaged: seeks without the aid report it */
  }
  while (nPrefix < nFirst && nPrefix < nLast && nPrefix < 64 &&
         pFirst[nPrefix] == pLast[nPrefix]) {
    nPrefix++;
  }
  nAid = sizeof *pAid +
         (size_t)bi.nRestart * (16 + 4 + WCS_BLOCK_SLOT * bi.nSeekK) + nPrefix;
  pAid = malloc(nAid);
  if (pAid == NULL) return WCS_NOMEM;
  pAid->nRestart = bi.nRestart;
  pAid->nEnt = bi.nEnt;
  pAid->iRestarts = bi.iRestarts;
  pAid->nSeekK = bi.nSeekK;
  pAid->nPrefix = (uint32_t)nPrefix;
  pAid->bSuffix = bi.bSuffix;
  aOff = (uint32_t *)(pAid->aSlice + 2 * (size_t)bi.nRestart);
  for (i = 0; i < bi.nRestart; i++) {
    if (!aidRestartKey(&bi, i, &z, &nU)) {
      free(pAid);
      return WCS_OK;
    }
    aOff[i] = restartAt(&bi, i);
    pAid->aSlice[2 * i] = wcs_key_slice(z, nU, nPrefix);
    pAid->aSlice[2 * i + 1] = wcs_key_slice(z, nU, nPrefix + 8);
  }
  if (bi.nSeekK) {
    memcpy((uint8_t *)(aOff + bi.nRestart), bi.aSeek,
           WCS_BLOCK_SLOT * (size_t)bi.nSeekK * bi.nRestart);
  }
  if (nPrefix) memcpy((uint8_t *)aidPrefix(pAid), pFirst, nPrefix);
  *pp = pAid;
  *pn = nAid;
  return WCS_OK;
}

/* The binary search of a seek with the aid: the largest restart point
** whose key is < the target (or the first). */
static int aidSearch(block_iter *p, const uint8_t *pKey, size_t nKey,
                     uint32_t *piLo) {
  const block_aid *pAid = p->pAid;
  const uint32_t *aOff = aidOff(pAid);
  size_t nU = nKey - WCS_IKEY_TRAILER, nCmp;
  uint32_t lo = 0, hi = pAid->nRestart - 1;
  uint64_t tHi, tLo;
  int c;
  nCmp = nU < pAid->nPrefix ? nU : pAid->nPrefix;
  c = nCmp ? memcmp(pKey, aidPrefix(pAid), nCmp) : 0;
  if (c < 0 || (c == 0 && nU < pAid->nPrefix)) {
    *piLo = 0; /* before every key of the block */
    return WCS_OK;
  }
  if (c > 0) {
    *piLo = hi; /* after every key */
    return WCS_OK;
  }
  tHi = wcs_key_slice(pKey, nU, pAid->nPrefix);
  tLo = wcs_key_slice(pKey, nU, pAid->nPrefix + 8);
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    uint64_t sHi = pAid->aSlice[2 * mid], sLo = pAid->aSlice[2 * mid + 1];
    int bLess;
    if (sHi != tHi) {
      bLess = sHi < tHi;
    } else if (sLo != tLo) {
      bLess = sLo < tLo;
    } else {
      EntryLen e;
      const uint8_t *z;
      int rc = parseEntry(p, aOff[mid], 0, 0, &e, &z);
      if (rc != WCS_OK) return rc;
      bLess = wcs_ikey_cmp(z, e.nUnshared, pKey, nKey) < 0;
    }
    if (bLess) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  *piLo = lo;
  return WCS_OK;
}

void block_iter_clear(block_iter *p) {
  free(p->aKey);
  free(p->aPrev);
  wcs_buf_free(&p->prevKeys);
  memset(p, 0, sizeof *p);
}

int block_iter_first(block_iter *p) {
  if (p->rc) return p->rc;
  p->nPrev = 0;
  if (p->nEnt == 0) {
    p->iCur = p->nEnt;
    return WCS_OK;
  }
  return decodeAt(p, 0, 0);
}

/* Copy n bytes to d from s in 8-byte words, reading and writing up to 7
** bytes past the ends: s must be a key byte of a block (any key byte has
** at least 8 readable bytes after it: a block with entries ends in at
** least one restart offset and the count), and d needs 7 bytes of room
** past its n. */
/* The step of a forward scan: block_iter_step (block.h) for the common
** entry, decodeAt for anything else, which reports damage. */
int block_iter_next(block_iter *p) {
  uint32_t iOff = p->iNext;
  if (!block_iter_valid(p)) return p->rc; /* an error leaves it invalid */
  if (block_iter_step(p)) return WCS_OK;
  p->nPrev = 0;
  if (iOff >= p->nEnt) {
    p->iCur = p->nEnt;
    return WCS_OK;
  }
  return decodeAt(p, iOff, p->nKey);
}

/*
** The scan of a seek (internal keys) from the current entry, whose key K
** is < the target T, to the first entry >= T, rebuilding only the keys
** it must compare. How it skips: let m be the length of the common prefix
** of K and T, and let it end inside both user keys, so K[m] < T[m]. An
** entry that shares more than m bytes with its predecessor has that same
** byte m, so it is < T as well and m still holds: it is passed over after
** reading its header. An entry sharing s <= m bytes starts with K[0..s),
** which is T[0..s): its key is rebuilt from K and compared. (In a
** valid block the shared length is the longest common prefix of the two
** keys, as the builder writes it; a damaged block can only make the seek
** land on a wrong entry, every length is still checked.) An entry sharing
** exactly m > 0 bytes whose own byte m (its first unshared byte, inside
** its user key) is below T[m] is < T as well, and after it m still holds
** with that byte in K's place: it is passed over too, so that the rows of
** a block before the target cost a header and a byte each, not a rebuilt
** key and a compare. When K's and T's user keys are equal or one is a
** prefix of the other, the scan steps entry by entry as an ordinary one
** would.
*/
static int seekScan(block_iter *p, const uint8_t *pT, size_t nT) {
  size_t uT = nT - WCS_IKEY_TRAILER;
  for (;;) {
    size_t uK = p->nKey - WCS_IKEY_TRAILER, nMax = uK < uT ? uK : uT, m;
    uint32_t iOff = p->iNext, nPrevKey = p->nKey, nKey;
    EntryLen e;
    const uint8_t *z;
    int rc;
    m = wcs_common_prefix(p->pKey, pT, nMax);
    if (m == nMax) {
      rc = block_iter_next(p);
      if (rc != WCS_OK || !block_iter_valid(p) ||
          wcs_ikey_cmp(p->pKey, p->nKey, pT, nT) >= 0) {
        return rc;
      }
      continue;
    }
    for (;;) {
      if (iOff >= p->nEnt) {
        p->iCur = p->nEnt; /* past the last entry */
        return WCS_OK;
      }
      /* an entry passed over shares m + 1 > 0 bytes: not whole, so the
      ** base stays the cursor's */
      rc = parseEntry(p, iOff, nPrevKey, p->nBase, &e, &z);
      if (rc != WCS_OK) return fail(p, rc);
      nKey = e.nShared + e.nUnshared + e.nSuffix;
      if (e.nShared < m) break;
      /* (a user key of at most m bytes cannot follow K's run sharing
      ** exactly m bytes in a valid block, it would sort before K; the
      ** test keeps a damaged block from steering the skip by a trailer
      ** byte) */
      if (e.nShared == m &&
          (m == 0 || e.nUnshared == 0 || z[0] >= pT[m] ||
           nKey - WCS_IKEY_TRAILER <= m)) {
        break;
      }
      nPrevKey = nKey;
      iOff = (uint32_t)(z + e.nUnshared + e.nVal - p->a);
    }
    /* its first nShared <= m bytes are those of K, still at p->pKey, and
    ** its predecessor's key is nPrevKey bytes long (K's, or that of an
    ** entry passed over) */
    rc = decodeAt(p, iOff, nPrevKey);
    if (rc != WCS_OK || wcs_ikey_cmp(p->pKey, p->nKey, pT, nT) >= 0) {
      return rc;
    }
  }
}

/* Ask for the cache lines of entries [iFrom, iTo) at once. A seek's scan
** reads them one after another, each entry's header giving the next
** one's offset: in a block that has left the processor's caches, every
** line would otherwise be a miss waited for in turn. */
static void prefetchRun(const block_iter *p, uint32_t iFrom, uint32_t iTo) {
  uintptr_t i = (uintptr_t)(p->a + iFrom) & ~(uintptr_t)63;
  uintptr_t iEnd = (uintptr_t)(p->a + (iTo < p->nEnt ? iTo : p->nEnt));
  for (; i < iEnd; i += 64)
    __builtin_prefetch((const void *)i);
}

/*
** Seek points (doc/format.md, "Seek points"). Every nSeekEvery entries of
** a restart interval the builder may name a seek point in a slot: an
** entry that shares with its predecessor what it shares with the restart
** key R, or one byte more (the slot holds that byte), written while the
** base is still R. Its key is then R's first s bytes (s: the length of the
** common prefix of R and it), the slot's byte if any, and its own stored
** bytes and suffix; and its first s + 1 bytes place it against a target T
** above R: with t the length of the common prefix of R's and T's user
** keys, inside both, s > t means it agrees with R at byte t, where R is
** below T, so it is below T; s < t means it differs from R (upward) before
** T does, so it is above T; s == t compares its byte s with T's byte t
** and, if they are equal, the rest of its key. (Its user key is longer
** than min(s, t): a shorter one would be a prefix of R's, below R.)
** seekPoint moves the cursor, at R, to the last seek point of R's
** interval that is below T, so that the scan after it passes over at most
** nSeekEvery entries instead of a whole interval. A seek point that does
** not parse (damage) ends the search where it is: the scan from there
** reports it or finds the target all the same.
*/

/* Parse seek slot j of restart point iRun, whose key (whole, in the
** block) is p->a[iR..iR + nR): the seek point's offset *piOff, entry
** lengths *pe and key delta *pz, its common prefix with R *pnLcp and its
** byte after that prefix, if it has one (*pbByte), *pcByte. 0 when the
** slot is empty or does not parse. */
static inline int seekParse(const block_iter *p, uint32_t iRun, uint32_t j,
                            uint32_t iR, uint32_t nR, uint32_t iEnd,
                            uint32_t *piOff, EntryLen *pe, const uint8_t **pz,
                            uint32_t *pnLcp, int *pbByte, uint8_t *pcByte) {
  uint8_t cExtra;
  uint32_t v = seekSlot(p, iRun, j, &cExtra);
  uint32_t bExtra = (v & WCS_BLOCK_SLOT_EXTRA) != 0;
  uint32_t iOff = iR + (v & ~WCS_BLOCK_SLOT_EXTRA);
  if (v == 0 || iOff >= iEnd) return 0;
  if (parseEntry(p, iOff, nR + bExtra, nR, pe, pz) != WCS_OK) return 0;
  if (pe->nShared < bExtra) return 0;
  *piOff = iOff;
  *pnLcp = pe->nShared - bExtra;
  *pbByte = bExtra || pe->nUnshared > 0;
  *pcByte = bExtra ? cExtra : (pe->nUnshared > 0 ? (*pz)[0] : 0);
  return 1;
}

/* Rebuild into aKey the first n bytes of the key of a seek point parsed
** by seekParse (n: its shared length, or its whole key), from R (the
** cursor's key, in the block) and the slot's byte. aKey must hold them. */
static void seekPrefix(block_iter *p, uint32_t nLcp, const EntryLen *e,
                       uint8_t cByte) {
  wcs_copy_short(p->aKey, p->pKey, nLcp);
  if (e->nShared > nLcp) p->aKey[nLcp] = cByte;
}

static int seekPoint(block_iter *p, uint32_t iRun, uint32_t iR,
                     const uint8_t *pT, size_t nT) {
  const uint32_t nR = p->nKey;
  const size_t uR = nR - WCS_IKEY_TRAILER, uT = nT - WCS_IKEY_TRAILER;
  const size_t nMax = uR < uT ? uR : uT;
  const uint32_t iEnd =
      iRun + 1 < p->nRestart ? restartAt(p, iRun + 1) : p->nEnt;
  size_t t = wcs_common_prefix(p->pKey, pT, nMax);
  uint32_t j, iBest = 0, nBestLcp = 0;
  EntryLen eBest;
  uint8_t cBest = 0;
  if (t >= nMax) return WCS_OK;
  for (j = 0; j < p->nSeekK; j++) {
    uint32_t iOff, nLcp;
    EntryLen e;
    const uint8_t *z;
    int bByte;
    uint8_t cByte;
    if (!seekParse(p, iRun, j, iR, nR, iEnd, &iOff, &e, &z, &nLcp, &bByte,
                   &cByte)) {
      break;
    }
    if (nLcp < t) break;
    if (nLcp == t) {
      /* it agrees with T as far as R does: its next byte, else the rest
      ** of its key, rebuilt in aKey (free while the cursor's key is R, in
      ** the block) */
      uint32_t nKey = e.nShared + e.nUnshared + e.nSuffix;
      if (bByte && cByte != pT[t]) {
        if (cByte > pT[t]) break;
      } else {
        if (nKey + 1 > p->nKeyAlloc && growKey(p, nKey + 1)) {
          return fail(p, WCS_NOMEM);
        }
        seekPrefix(p, nLcp, &e, cByte);
        wcs_copy_short(p->aKey + e.nShared, z, e.nUnshared);
        wcs_copy_short(p->aKey + e.nShared + e.nUnshared,
                       p->pKey + nR - e.nSuffix, e.nSuffix);
        if (wcs_ikey_cmp(p->aKey, nKey, pT, nT) >= 0) break;
      }
    }
    iBest = iOff;
    nBestLcp = nLcp;
    eBest = e;
    cBest = cByte;
  }
  if (iBest == 0) return WCS_OK;
  if (eBest.nShared == nBestLcp) return decodeAt(p, iBest, nR); /* from R */
  /* from its predecessor as far as it shares it: R's bytes and the
  ** slot's, in aKey */
  if (eBest.nShared + 1 > p->nKeyAlloc && growKey(p, eBest.nShared + 1)) {
    return fail(p, WCS_NOMEM);
  }
  seekPrefix(p, nBestLcp, &eBest, cBest);
  p->pKey = p->aKey;
  p->nKey = eBest.nShared;
  return decodeAt(p, iBest, eBest.nShared);
}

int block_iter_seek(block_iter *p, const uint8_t *pKey, size_t nKey) {
  uint32_t lo = 0, hi;
  int rc;
  if (p->rc) return p->rc;
  p->nPrev = 0;
  p->iCur = p->nEnt;
  if (p->nEnt == 0) return WCS_OK;
  assert(!p->bIKey || nKey >= WCS_IKEY_TRAILER);
  if (p->pAid) {
    const uint32_t *aOff = aidOff(p->pAid);
    /* the seek slots are read right after the search: ask for them now
    ** (beyond the aid's first lines, which the cache probe asked for) */
    if (p->nSeekK > 0) __builtin_prefetch(p->aSeek);
    rc = aidSearch(p, pKey, nKey, &lo);
    if (rc != WCS_OK) return fail(p, rc);
    prefetchRun(p, aOff[lo], lo + 1 < p->nRestart ? aOff[lo + 1] : p->nEnt);
    rc = decodeAt(p, aOff[lo], 0);
    if (rc != WCS_OK || wcs_ikey_cmp(p->pKey, p->nKey, pKey, nKey) >= 0) {
      return rc;
    }
    if (p->nSeekK > 0) {
      rc = seekPoint(p, lo, aOff[lo], pKey, nKey);
      if (rc != WCS_OK) return rc;
    }
    return seekScan(p, pKey, nKey);
  }
  /* Largest restart point whose key is < the target (or the first). */
  hi = p->nRestart - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    uint32_t iOff = restartAt(p, mid);
    EntryLen e;
    const uint8_t *z;
    if (iOff >= p->nEnt) return fail(p, WCS_CORRUPT_BKPT);
    rc = parseEntry(p, iOff, 0, 0, &e, &z);
    if (rc != WCS_OK) return fail(p, rc);
    if (block_key_cmp(p->bIKey, z, e.nUnshared, pKey, nKey) < 0) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  if (restartAt(p, lo) >= p->nEnt) return fail(p, WCS_CORRUPT_BKPT);
  rc = decodeAt(p, restartAt(p, lo), 0);
  while (rc == WCS_OK && block_iter_valid(p) &&
         block_key_cmp(p->bIKey, p->pKey, p->nKey, pKey, nKey) < 0) {
    rc = block_iter_next(p);
  }
  return rc;
}

/* Scan the entries from iStart (a restart point) up to iStop (exclusive,
** an entry boundary or the end of the entries) into the reverse cache and
** make the last of them current. */
static int fillPrev(block_iter *p, uint32_t iStart, uint32_t iStop, int bSeed,
                    uint32_t iSeedBase, uint32_t nSeedBase) {
  uint32_t iOff = iStart;
  uint32_t nPrevKey = 0, iPrevKey = 0, iBase = 0, nBase = 0;
  int bBase = bSeed; /* a base is known (else: a restart point) */
  p->nPrev = 0;
  if (bSeed) {
    /* from a seek point: prevKeys begins with the bytes it shares with
    ** its predecessor (fillFrom put them there), and the restart key is
    ** the base */
    nPrevKey = (uint32_t)p->prevKeys.n;
    iBase = iSeedBase;
    nBase = nSeedBase;
  } else {
    p->prevKeys.n = 0;
  }
  if (iStart >= iStop) return fail(p, WCS_CORRUPT_BKPT);
  prefetchRun(p, iStart, iStop);
  while (iOff < iStop) {
    uint32_t nShared, nUnshared, nSuffix, nVal, nKey;
    const uint8_t *z;
    block_prev *e;
    EntryLen el;
    int rc = parseEntry(p, iOff, nPrevKey, bBase ? nBase : 0, &el, &z);
    if (rc != WCS_OK) return fail(p, rc);
    nShared = el.nShared;
    nUnshared = el.nUnshared;
    nSuffix = el.nSuffix;
    nVal = el.nVal;
    nKey = nShared + nUnshared + nSuffix;
    if (p->nPrev >= p->nPrevAlloc) {
      int nNew = p->nPrevAlloc ? p->nPrevAlloc * 2 : 32;
      block_prev *aNew = realloc(p->aPrev, (size_t)nNew * sizeof *aNew);
      if (aNew == NULL) return fail(p, WCS_NOMEM);
      p->aPrev = aNew;
      p->nPrevAlloc = nNew;
    }
    /* Reserve first: the shared prefix is copied from the same buffer.
    ** Eight spare bytes: the unshared part is copied a word at a time
    ** (which also keeps prevKeys.a non-NULL for empty keys). */
    if (p->prevKeys.nAlloc - p->prevKeys.n < (size_t)nKey + 8 &&
        wcs_buf_reserve(&p->prevKeys, (size_t)nKey + 8)) {
      return fail(p, WCS_NOMEM);
    }
    {
      uint8_t *d = p->prevKeys.a + p->prevKeys.n;
      /* The previous key ends where this one starts (d), and shares at
      ** most its length, so the shared prefix and its copy do not
      ** overlap; it and the suffix, a few dozen bytes, are copied by at
      ** most two overlapping loads and stores each (wcs_copy_short), not
      ** a loop of words. The unshared bytes come from the block, where a
      ** value or the restart array follows them: their word copy reads at
      ** most 7 bytes past them (block_iter_step reads the same way). */
      wcs_copy_short(d, p->prevKeys.a + iPrevKey, nShared);
      block_copy_words(d + nShared, z, nUnshared);
      if (nSuffix) {
        wcs_copy_short(d + nShared + nUnshared, p->a + iBase + nBase - nSuffix,
                       nSuffix);
      } else if (nShared == 0) {
        iBase = (uint32_t)(z - p->a); /* stored whole: the new base */
        nBase = nUnshared;
      }
    }
    e = &p->aPrev[p->nPrev++];
    e->iOff = iOff;
    e->iNext = (uint32_t)(z + nUnshared + nVal - p->a);
    e->iKey = (uint32_t)p->prevKeys.n;
    e->nKey = nKey;
    e->nVal = nVal;
    e->iBase = iBase;
    e->nBase = nBase;
    iPrevKey = e->iKey;
    nPrevKey = nKey;
    bBase = 1;
    p->prevKeys.n += nKey;
    iOff = e->iNext;
  }
  if (iOff != iStop) return fail(p, WCS_CORRUPT_BKPT);
  block_iter_use_prev(p, p->nPrev - 1);
  return WCS_OK;
}

/* fillPrev from restart point iRun (at iStart) up to iStop, or from the
** last seek point of its interval before iStop, so that a step back
** decodes at most nSeekEvery entries, not a whole interval. */
static int fillFrom(block_iter *p, uint32_t iRun, uint32_t iStart,
                    uint32_t iStop) {
  uint32_t j, jSeek = 0, nLcp, nR, iSeek;
  EntryLen e;
  const uint8_t *z, *zR;
  uint8_t cSeek;
  int bByte, rc;
  /* the last seek point before iStop: by the slots' offsets alone */
  for (j = 0; j < p->nSeekK; j++) {
    uint8_t c;
    uint32_t v = seekSlot(p, iRun, j, &c);
    if (v == 0 || iStart + (v & ~WCS_BLOCK_SLOT_EXTRA) >= iStop) break;
    jSeek = j + 1;
  }
  if (jSeek == 0) return fillPrev(p, iStart, iStop, 0, 0, 0);
  rc = parseEntry(p, iStart, 0, 0, &e, &zR);
  if (rc != WCS_OK) return fail(p, rc);
  nR = e.nUnshared;
  if (!seekParse(p, iRun, jSeek - 1, iStart, nR, iStop, &iSeek, &e, &z, &nLcp,
                 &bByte, &cSeek)) {
    return fillPrev(p, iStart, iStop, 0, 0, 0);
  }
  /* the bytes the seek point shares with its predecessor: R's first nLcp,
  ** then the slot's byte if it has one */
  p->prevKeys.n = 0;
  if (wcs_buf_append(&p->prevKeys, zR, nLcp) ||
      (e.nShared > nLcp && wcs_buf_append(&p->prevKeys, &cSeek, 1))) {
    return fail(p, WCS_NOMEM);
  }
  return fillPrev(p, iSeek, iStop, 1, (uint32_t)(zR - p->a), nR);
}

int block_iter_last(block_iter *p) {
  uint32_t iStart;
  if (p->rc) return p->rc;
  p->nPrev = 0;
  p->iCur = p->nEnt;
  if (p->nEnt == 0) return WCS_OK;
  iStart = restartAt(p, p->nRestart - 1);
  if (iStart >= p->nEnt) return fail(p, WCS_CORRUPT_BKPT);
  return fillFrom(p, p->nRestart - 1, iStart, p->nEnt);
}

int block_iter_prev(block_iter *p) {
  uint32_t lo = 0, hi, iCur;
  if (p->rc) return p->rc;
  if (!block_iter_valid(p)) return WCS_OK;
  if (p->nPrev > 0 && p->iPrev > 0) {
    block_iter_use_prev(p, p->iPrev - 1);
    return WCS_OK;
  }
  iCur = p->iCur;
  if (iCur == 0) {
    p->nPrev = 0;
    p->iCur = p->nEnt;
    return WCS_OK;
  }
  /* Largest restart point before the current entry. */
  hi = p->nRestart - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (restartAt(p, mid) < iCur) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return fillFrom(p, lo, restartAt(p, lo), iCur);
}
