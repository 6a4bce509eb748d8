/*
** block.h — blocks, the unit of every sorted file: how entries are laid out
** inside one block (prefix compression, restart points), how a block is
** framed on disk (type byte, raw length, CRC-32C), and the block cache's
** handle API that sst.c reads blocks through.
**
** Block contents (uncompressed), every integer little-endian:
**
**     entry*  restart[nRestart] (u32 each)  count (u32)
**     entry = varint shared | varint unshared | varint nValue
**             | key bytes [shared, shared+unshared) | value bytes
**
** `shared` is the length of the prefix the key has in common with the
** previous key of the block; every restart point (the first entry, then
** the entry after nInterval entries or nIntervalBytes bytes since the last
** one, whichever comes first) stores its key whole (shared == 0), and the
** restart array lists their byte offsets, so a seek binary-searches the
** restart keys and then scans at most nInterval entries. Readers need
** neither number. count is
** nRestart, or nRestart | WCS_BLOCK_SUFFIX for a block whose entries also
** share a suffix:
**
**     entry = varint shared | varint unshared | varint suffix
**             | varint nValue | key bytes [shared, shared+unshared)
**             | value bytes
**
** where the key ends with the last `suffix` bytes of the base: the latest
** entry stored whole (shared == 0 and suffix == 0; every restart point is
** one). Cell keys end in a timestamp and a sequence number that most
** neighbours share, which suffixes keep out of the block (about half the
** decoded size of the engine's cells).
**
** With WCS_BLOCK_SEEK in count, k seek slots per restart point (count's
** bits 24..29; the restarts are then bits 0..23) come between the
** entries and the restart array, each a u16 and a byte: the offset, from
** their restart entry, of a seek point, an entry that shares with its
** predecessor what it shares with the restart key, or one byte more (flag
** WCS_BLOCK_SLOT_EXTRA: the slot's byte is that byte), and whose base is
** the restart key, so that it decodes from the restart key and the slot
** alone. A seek or a step back starts from the nearest one instead of the
** restart point (block.c, seekPoint).
**
** On disk a block is followed by a WCS_BLOCK_TRAILER-byte trailer:
**
**     type (u8: 0 raw, 1 zstd) | raw length (u32) | masked CRC-32C (u32)
**
** where the CRC covers the stored bytes, the type byte and the raw length.
** Readers check the CRC before looking at anything else and bound the
** decompressed size by the raw length. doc/format.md ("Blocks") has every
** byte; block.c implements it.
*/
#ifndef WCS_BLOCK_H
#define WCS_BLOCK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zstd.h>

#include "storage/ikey.h"
#include "storage/sst.h"
#include "storage/util.h"

/* ---- on-disk framing */
#define WCS_BLOCK_TRAILER  9 /* bytes after each block's stored bytes */
#define WCS_BLOCK_OFF_TYPE 0 /* trailer offset of the type byte */
#define WCS_BLOCK_OFF_RAW  1 /* trailer offset of the u32 raw length */
#define WCS_BLOCK_OFF_CRC  5 /* trailer offset of the u32 masked CRC */
#define WCS_BLOCK_RAW      0 /* type: stored bytes are the contents */
#define WCS_BLOCK_ZSTD     1 /* type: stored bytes are one zstd frame */
#define WCS_BLOCK_MAX_RAW  0x7fffffffu /* largest raw length accepted */

/* ---- block contents */
#define WCS_BLOCK_SUFFIX 0x80000000u /* count flag: entries carry a suffix */
/* count flag: seek slots (below); bits 24..29 of count are then the seek
** slots per restart point, at most WCS_BLOCK_SEEK_MAXK, and bits 0..23 the
** restarts, at most WCS_BLOCK_SEEK_MAXR */
#define WCS_BLOCK_SEEK       0x40000000u
#define WCS_BLOCK_SEEK_SHIFT 24
#define WCS_BLOCK_SEEK_MAXK  63u
#define WCS_BLOCK_SEEK_MAXR  0xffffffu
/* A seek slot: a u16 LE, the seek point's offset from its restart entry
** (0: none) with flag WCS_BLOCK_SLOT_EXTRA when the seek point shares one
** byte more with its predecessor than with the restart key, and that byte */
#define WCS_BLOCK_SLOT       3u
#define WCS_BLOCK_SLOT_EXTRA 0x8000u
/* A key rebuilt with a suffix longer than this is damage: a suffix costs
** one varint however long, so without a bound a few bytes of a damaged
** block could claim keys of gigabytes. The builder stores longer keys
** without a suffix. */
#define WCS_BLOCK_KEY_MAX (1u << 24)

/* Frame one block: append its stored form (zstd-compressed with pCCtx at
** iLevel when iLevel > 0 and that saves at least 1/8 of n, raw otherwise)
** and its trailer to pOut. pScratch is a reusable buffer for the compressed
** bytes. *pnStored gets the stored size (the size recorded in the block's
** handle, trailer excluded). Returns WCS_OK or WCS_NOMEM. */
int block_frame(const uint8_t *a, size_t n, int iLevel, ZSTD_CCtx *pCCtx,
                wcs_buf *pScratch, wcs_buf *pOut, size_t *pnStored);

/* Check a framed block: a[0..n) is the stored bytes followed by the
** trailer. Verifies the CRC, the type and (raw blocks) the raw length.
** Returns WCS_OK with *pType and *pnRaw, or WCS_CORRUPT with *pzWhy
** (static text such as "checksum mismatch"). */
int block_check(const uint8_t *a, size_t n, int *pType, uint32_t *pnRaw,
                const char **pzWhy);

/* Decompress the zstd frame p[0..n) into pOut, which has exactly nRaw bytes
** (the trailer's raw length); the frame must declare that content size and
** produce exactly that many bytes. Uses this thread's ZSTD_DCtx. Returns
** WCS_OK, WCS_NOMEM, or WCS_CORRUPT with *pzWhy. */
int block_inflate(const uint8_t *p, size_t n, uint8_t *pOut, size_t nRaw,
                  const char **pzWhy);

/* ---- building block contents */
typedef struct block_builder {
  wcs_buf data;          /* entries so far; finish appends the restart array */
  wcs_buf restarts;      /* u32 LE restart offsets, one per restart point */
  wcs_buf last;          /* the previous key, whole (prefix source); unused
                         ** by block_builder_add_shared */
  wcs_buf base;          /* the latest key stored whole (suffix source) */
  int bSuffix;           /* write suffixes (set after init; default 0) */
  int nInterval;         /* entries per restart point, >= 1 */
  size_t nIntervalBytes; /* also a restart point once the entries since
                         ** the last one take this many bytes (0: never) */
  int nSince;            /* entries since the last restart point, < nInterval */
  size_t oRestart;       /* data offset of the last restart point */
  int nSeekEvery;        /* a seek point every this many entries of a
                         ** restart interval (set after init; 0: none) */
  int nSeekK;            /* seek slots per restart point (set by the
                         ** first add from nInterval and nSeekEvery) */
  wcs_buf seeks;         /* seek slots, nSeekK per restart point */
  size_t oRestartKey;    /* data offset of the last restart key's bytes */
  size_t nRestartKey;    /* and its length */
  int bBaseAtRestart;    /* no entry stored whole since the restart point:
                         ** the base is the restart key */
  int nEntry;            /* entries in the block */
  int bFinished;         /* finish was called: no more adds until reset */
} block_builder;

/* Little-endian with GCC builtins: the block builder compares key ends a
** word at a time (commonSuffix in block.c). */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                            \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WCS_BLOCK_WORDS 1
#else
#define WCS_BLOCK_WORDS 0
#endif

void block_builder_init(block_builder *, int nInterval);
/* Append an entry; keys must be added in increasing order (not checked
** here; sst.c checks internal-key order). WCS_OK or WCS_NOMEM. */
int block_builder_add(block_builder *, const uint8_t *pKey, size_t nKey,
                      const uint8_t *pVal, size_t nVal);
/* The same for a caller that already knows nShared, the length of the
** longest common prefix of pKey and the previous key added to the block
** (ignored at restart points, the block's first entry included): sst.c
** finds it in the order check it makes anyway. The builder then keeps no
** copy of the previous key, so a block is built with one of the two adds,
** never both; the bytes are those block_builder_add writes. */
int block_builder_add_shared(block_builder *, const uint8_t *pKey, size_t nKey,
                             size_t nShared, const uint8_t *pVal, size_t nVal);
/* Bytes the block will have once finished (asked after every entry). */
static inline size_t block_builder_size(const block_builder *p) {
  if (p->bFinished) return p->data.n;
  return p->data.n + p->seeks.n + p->restarts.n + 4;
}
/* Append the restart array; *pp (borrowed until reset/free) and *pn get
** the finished contents. WCS_OK or WCS_NOMEM. */
int block_builder_finish(block_builder *, const uint8_t **pp, size_t *pn);
void block_builder_reset(block_builder *); /* empty, keeps memory */
void block_builder_free(block_builder *);  /* releases memory */

/* ---- reading block contents */

/* One entry of the reverse-scan cache: an entry of the restart interval
** being walked backwards, with its key materialised in aPrevKey. */
typedef struct block_prev {
  uint32_t iOff;  /* entry offset in the block */
  uint32_t iNext; /* offset just past the entry */
  uint32_t iKey;  /* offset of the whole key in block_iter.prevKeys */
  uint32_t nKey;  /* key bytes */
  uint32_t nVal;  /* value bytes; the value ends at iNext */
  uint32_t iBase; /* the base after this entry: offset in the block */
  uint32_t nBase; /* and key bytes */
} block_prev;

/*
** A cursor over one block's entries. Keys and values are borrowed: values
** always point into the block, keys into the block when stored whole
** (restart points) or into aKey/prevKeys when rebuilt from a prefix; both
** stay valid until the next move. The block bytes must outlive the cursor
** use. Moving functions return WCS_OK (valid or not) or WCS_CORRUPT, which
** sticks in rc and leaves the cursor invalid.
*/
typedef struct block_iter {
  const uint8_t *a;     /* block contents */
  uint32_t nEnt;        /* bytes of entries = offset of restart array */
  uint32_t nRestart;    /* restart points (0 only for an empty block) */
  uint32_t iRestarts;   /* offset of the restart array */
  const uint8_t *aSeek; /* seek slots (nSeekK per restart point),
                        ** in the block or its aid; NULL: none */
  uint32_t nSeekK;      /* seek slots per restart point; 0: none */
  uint8_t bIKey;        /* keys are internal keys: >= 8 bytes, ikey
                        ** order; else plain bytes in memcmp order */
  uint8_t bSuffix;      /* entries carry a suffix length */
  const uint8_t *pBase; /* key of the latest whole entry, in the block */
  uint32_t nBase;       /* its bytes */
  int rc;               /* WCS_OK, or WCS_CORRUPT (sticky) */
  uint32_t iCur;        /* offset of the current entry; nEnt: invalid */
  uint32_t iNext;       /* offset just past the current entry */
  const uint8_t *pKey;  /* current key (see above) */
  uint32_t nKey;        /* current key bytes */
  const uint8_t *pVal;  /* current value, inside the block */
  uint32_t nVal;        /* current value bytes */
  uint8_t *aKey;        /* buffer where prefix-compressed keys are
                        ** rebuilt; grows, never shrinks */
  uint32_t nKeyAlloc;   /* bytes allocated at aKey */
  block_prev *aPrev;    /* reverse-scan cache: the entries of one restart
                        ** interval, in order */
  int nPrev;            /* entries in aPrev; 0 = cache not in use */
  int iPrev;            /* index in aPrev of the current entry */
  int nPrevAlloc;       /* slots allocated at aPrev */
  wcs_buf prevKeys;     /* whole keys of the aPrev entries */
  const struct block_aid *pAid; /* seek aid of this block, or NULL */
  uint32_t nStepShared;         /* block_iter_step's entry: bytes its key shares
                                ** with the entry before it (set by that step
                                ** only; read it right after) */
} block_iter;

/*
** A seek aid: what a seek in one data block (internal keys) needs from
** its restart points, gathered when the block enters the cache, so that a
** seek's binary search reads one small array instead of touching an entry
** of the block per step (each a likely CPU cache miss in an 8 KiB block).
** nPrefix is the length of the prefix every user key of the block shares
** (its bytes follow aOff); aSlice[2i] and aSlice[2i + 1] are bytes
** [nPrefix, nPrefix + 8) and [nPrefix + 8, nPrefix + 16) of restart key
** i's user key, zero-padded, as big-endian numbers, so that a smaller
** pair (compared as one 128-bit number) implies a smaller user key; equal
** pairs fall back to comparing the keys. Sixteen bytes, because keys that
** put a row key before a column (the engine's) often share the first
** eight bytes after the block's prefix across many restart points, and
** each tie touches the block. Derived from the block, never stored.
*/
typedef struct block_aid {
  uint32_t nRestart;  /* restart points of the block */
  uint32_t nEnt;      /* bytes of its entries */
  uint32_t iRestarts; /* offset of its restart array */
  uint32_t nSeekK;    /* its seek slots per restart point */
  uint32_t nPrefix;   /* bytes shared by every user key of the block */
  uint32_t bSuffix;   /* the block's entries carry a suffix length */
  uint64_t aSlice[];  /* 2 * nRestart slices, then uint32 aOff[nRestart]
                      ** (the restart offsets), then the block's seek
                      ** slots (nSeekK * nRestart), then the nPrefix
                      ** prefix bytes */
} block_aid;

/* Build the aid of block contents a[0..n) of internal keys: *pp gets a
** malloc'd aid of *pn bytes, or NULL if the block does not parse (the
** cursor then reports it). WCS_OK or WCS_NOMEM. */
int block_aid_build(const uint8_t *a, size_t n, block_aid **pp, size_t *pn);

/* Start a cursor (unpositioned) over a[0..n). Checks the restart array
** header; WCS_CORRUPT if it does not fit. The cursor's buffers are kept
** across calls: zero-initialise once, then init per block, clear at end. */
int block_iter_init(block_iter *, const uint8_t *a, size_t n, int bIKey);
/* The same for a block of internal keys with its aid (NULL: none), which
** seeks then use; nothing is read from the block until a move. */
int block_iter_init_aid(block_iter *, const uint8_t *a, size_t n,
                        const block_aid *pAid);
void block_iter_clear(block_iter *); /* frees the buffers */

int block_iter_first(block_iter *);
int block_iter_last(block_iter *);
/* First entry >= key (invalid if none). */
int block_iter_seek(block_iter *, const uint8_t *pKey, size_t nKey);
int block_iter_next(block_iter *);
int block_iter_prev(block_iter *);
static inline int block_iter_valid(const block_iter *p) {
  return p->iCur < p->nEnt;
}

/* Make entry i of the reverse cache (aPrev, filled by a backward move)
** the current one. */
static inline void block_iter_use_prev(block_iter *p, int i) {
  const block_prev *e = &p->aPrev[i];
  p->iPrev = i;
  p->iCur = e->iOff;
  p->iNext = e->iNext;
  p->pKey = p->prevKeys.a + e->iKey;
  p->nKey = e->nKey;
  p->nVal = e->nVal;
  p->pVal = p->a + e->iNext - e->nVal;
  p->pBase = p->a + e->iBase;
  p->nBase = e->nBase;
}

/* Copy n bytes eight at a time: up to 7 bytes past s[n) are read and past
** d[n) written, which the callers have room for (they copy a key's bytes
** out of the block, where more entries or the restart array follow). */
static inline void block_copy_words(uint8_t *d, const uint8_t *s, uint32_t n) {
  uint32_t i;
  for (i = 0; i < n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    memcpy(d + i, &w, 8);
  }
}

/*
** The common step of a forward scan, inline: 1 after moving to the next
** entry, 0 without moving when that entry is not the common kind, or there
** is none (block_iter_next then takes the step, and reports damage). The
** common entry: a block with suffixes (every block of cell keys), a
** current key rebuilt in aKey or read in place from the block (not one of
** the reverse cache's), a header of one-byte varints read with one load
** (the restart count follows the entries, so four bytes can always be
** loaded), lengths that pass parseEntry's checks (a key of one-byte
** lengths is never too long), and room to spare in aKey. An entry stored
** whole (a restart point) is read in place and becomes the base; any
** other is rebuilt in aKey, its shared prefix first copied there when the
** current key is in the block. The bytes copied a word at a time past a
** key part stay in the block: a value, or the restart array, follows.
** (Taking restart points here too keeps a scan out of the general step,
** which costs about twenty times as much, twice per restart interval: at
** the restart point and just after it.)
*/
static inline int block_iter_step(block_iter *p) {
  uint32_t iOff = p->iNext, h, nShared, nUnshared, nSuffix, nVal, nKey;
  const uint8_t *z;
  int bInBlock = 0;
  if (!p->bSuffix || p->iCur >= p->nEnt || iOff >= p->nEnt ||
      p->nEnt - iOff < 4) {
    return 0;
  }
  if (__builtin_expect(p->pKey != p->aKey, 0)) {
    if (p->pKey < p->a || p->pKey >= p->a + p->nEnt) return 0;
    bInBlock = 1;
  }
  z = p->a + iOff;
  h = wcs_get32(z);
  nShared = h & 0xff;
  nUnshared = (h >> 8) & 0xff;
  nSuffix = (h >> 16) & 0xff;
  nVal = h >> 24;
  nKey = nShared + nUnshared + nSuffix;
  if ((h & 0x80808080u) != 0 || nShared > p->nKey || nSuffix > p->nBase ||
      nUnshared + nVal > p->nEnt - iOff - 4 || nKey + 8 > p->nKeyAlloc ||
      (nKey < WCS_IKEY_TRAILER && p->bIKey)) {
    return 0;
  }
  z += 4;
  if (__builtin_expect((nShared | nSuffix) == 0, 0)) {
    p->pKey = z; /* stored whole: read in place, and the new base */
    p->pBase = z;
    p->nBase = nUnshared;
  } else {
    if (__builtin_expect(bInBlock, 0)) {
      block_copy_words(p->aKey, p->pKey, nShared);
    }
    block_copy_words(p->aKey + nShared, z, nUnshared);
    wcs_copy_short(p->aKey + nShared + nUnshared, p->pBase + p->nBase - nSuffix,
                   nSuffix);
    p->pKey = p->aKey;
  }
  p->nPrev = 0;
  p->nKey = nKey;
  p->nStepShared = nShared;
  p->pVal = z + nUnshared;
  p->nVal = nVal;
  p->iCur = iOff;
  p->iNext = iOff + 4 + nUnshared + nVal;
  return 1;
}

/* Compare two keys in the cursor's order. */
static inline int block_key_cmp(int bIKey, const uint8_t *a, size_t na,
                                const uint8_t *b, size_t nb) {
  return bIKey ? wcs_ikey_cmp(a, na, b, nb) : wcs_ukey_cmp(a, na, b, nb);
}

/* ---- block cache handles (cache.c). A handle is a reference to one
** block's contents; while held, the bytes stay valid even if the cache
** evicts the block. */
typedef struct wcs_cache_handle wcs_cache_handle;

/* A new handle with nCap bytes of room, not in any cache, one reference.
** NULL on out-of-memory. Fill wcs_cache_data(), set the length with
** wcs_cache_set_size(), then insert or just release. */
wcs_cache_handle *wcs_cache_alloc(size_t nCap);
uint8_t *wcs_cache_data(wcs_cache_handle *);
size_t wcs_cache_size(const wcs_cache_handle *);
void wcs_cache_set_size(wcs_cache_handle *, size_t n); /* n <= nCap */
/* Attach derived data p[0..n) (malloc'd; the handle frees it) to a handle
** not yet inserted; it is charged to the budget with the block. */
void wcs_cache_set_aux(wcs_cache_handle *, void *p, size_t n);
const void *wcs_cache_aux(const wcs_cache_handle *); /* NULL: none */

/* Find (iFile, iOff); a hit returns a new reference, a miss NULL. The
** _meta variant counts in the index-and-filter statistics. */
wcs_cache_handle *wcs_cache_lookup(wcs_cache *, uint64_t iFile, uint64_t iOff);
wcs_cache_handle *wcs_cache_lookup_meta(wcs_cache *, uint64_t iFile,
                                        uint64_t iOff);
/* Insert h (one reference, from wcs_cache_alloc) under (iFile, iOff). The
** caller's reference is kept: the return value is the handle to use, h
** itself, or the already cached block if another thread inserted it first
** (h is then released). May evict unreferenced blocks to stay in budget. */
wcs_cache_handle *wcs_cache_insert(wcs_cache *, uint64_t iFile, uint64_t iOff,
                                   wcs_cache_handle *h);
/* 1 when the shard that would hold (iFile, iOff) can take a block of n
** bytes (with its handle) without evicting anything. A hint: another
** thread may fill the shard before the insert, which then evicts as any
** insert does. */
int wcs_cache_has_room(wcs_cache *, uint64_t iFile, uint64_t iOff, size_t n);
/* Drop one reference (pCache may be NULL for handles never inserted). */
void wcs_cache_release(wcs_cache *, wcs_cache_handle *);

/* ---- the file table of one cache (cache.c keeps it, sst.c runs it):
** readers with an open descriptor, in the order of a CLOCK sweep. */
typedef struct sst_ftable {
  pthread_mutex_t mu; /* guards this and the readers' table fields */
  sst_reader *pOld;   /* where the CLOCK sweep starts */
  sst_reader *pNew;   /* where it puts readers back (newest) */
  int nOpen;          /* descriptors open */
  int nMax;           /* limit (WCS_DEF_MAX_FILES unless set) */
  int nReaders;       /* readers of this cache, open or not */
  uint64_t nHeld;     /* bytes the readers hold outside the cache */
  uint64_t nReopen;   /* descriptors reopened after the table closed them */
} sst_ftable;
sst_ftable *wcs_cache_ftable(wcs_cache *); /* NULL for a NULL cache */

/* ---- the prefetch queue of one cache (cache.c keeps it, sst.c runs it):
** one worker thread, started by the first scan that wants it and joined
** when the cache is freed, checks and decompresses data blocks ahead of
** long forward scans (sst.c, "Prefetch"). */
typedef struct sst_pfjob sst_pfjob;
typedef struct sst_pfq {
  pthread_mutex_t mu;    /* guards this and the state of every queued job */
  pthread_cond_t cvWork; /* a job was queued, or bStop */
  pthread_cond_t cvDone; /* a job the worker took is done */
  sst_pfjob *pHead;      /* queued jobs, oldest first; NULL: none */
  sst_pfjob *pTail;
  pthread_t th;   /* the worker, once bStarted */
  int bStarted;   /* th runs (sst_pfq_stop joins it) */
  int bIdle;      /* the worker waits for cvWork */
  int bStop;      /* the cache is being freed: the worker ends */
  int bOff;       /* queue nothing: turned off, one core, or the
                  ** thread could not be created */
  uint64_t nDone; /* blocks the worker has decoded */
} sst_pfq;
sst_pfq *wcs_cache_pfq(wcs_cache *); /* NULL for a NULL cache */
void sst_pfq_init(sst_pfq *);
/* End and join the worker; no job may be queued or running. */
void sst_pfq_stop(sst_pfq *);

#endif /* WCS_BLOCK_H */
