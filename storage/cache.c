/*
** cache.c — the block cache: decompressed blocks of sorted files, keyed by
** (file number, block offset), kept within a byte budget. API in sst.h
** (create, stats, drop a file) and block.h (handles). It owns no on-disk
** format.
**
** How it works. The cache is split into 1..16 shards by a hash of the key
** (one shard per 4 MiB of budget, up to 16) so that threads reading different
** blocks rarely meet on a mutex; each shard has its own mutex, hash table,
** ring of entries and share of the budget. The table is open addressing
** with linear probing, and each slot holds the entry's hash beside its
** pointer: a lookup touches only the entry it finds. (An entry is the head
** of a block-sized allocation, so each one visited is a cache miss and
** often a TLB miss; with chained buckets a lookup visited 1.5 of them on
** average, at a load of one per bucket.) An entry is one
** allocation: the handle header followed by the block bytes, plus at most
** one attached allocation of derived data (a data block's seek aid),
** charged with it. Entries are data blocks and, under the offset of a
** file's bloom block, that file's decoded index and filter (sst.c).
** The cache also keeps the file table that bounds open descriptors
** (sst_ftable in block.h; sst.c runs it) and the queue of the worker that
** decompresses blocks ahead of long scans (sst_pfq, likewise), whose
** thread wcs_cache_free joins.
**
** Replacement is CLOCK (second chance) rather than strict LRU, to keep a
** hit cheap: a lookup only takes a reference and sets the entry's
** reference bit — it does not unlink and relink the entry, which would
** write to two neighbouring entries, two more cache misses per block read
** from memory. Eviction (on insert, or on a release while over budget)
** sweeps the ring from its oldest end: an entry in use is passed over, a
** referenced one loses its bit and goes round again, any other is evicted.
**
** The budget can change while the cache is in use (wcs_cache_set_budget:
** the store lends the cache what its memtables do not hold). Each shard
** gets an even share of the new total and, if now over it, runs the same
** sweep as an insert; the number of shards stays as created.
**
** Reference counting: nRef counts the callers holding the handle; being in
** the table is the separate flag bInTable. Eviction never frees a block in
** use: such a block stays charged to the budget until released (the budget
** can be exceeded by what readers pin at once, never by idle blocks). An
** entry dropped from the table while referenced (by eviction of its file)
** is freed by its last release.
*/
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "storage/block.h"
#include "storage/sst.h"

#define CACHE_MAX_SHARDS 16
#define CACHE_SHARD_MIN  (4u << 20) /* budget bytes per extra shard */

typedef struct cache_shard cache_shard;

struct wcs_cache_handle {
  uint64_t iFile;           /* key: file number */
  uint64_t iOff;            /* key: block offset in the file */
  uint64_t h;               /* hash of (iFile, iOff) */
  wcs_cache_handle *pChain; /* next entry on a list of entries to free */
  wcs_cache_handle *pPrev;  /* ring neighbours, while bInTable */
  wcs_cache_handle *pNext;
  cache_shard *pShard; /* shard it was inserted into; NULL: never */
  uint32_t nRef;       /* callers holding it, >= 0 */
  uint8_t bInTable;    /* reachable through the shard's table */
  uint8_t bRef;        /* looked up since the sweep last passed */
  size_t nCap;         /* bytes allocated for the contents */
  size_t nData;        /* bytes of block contents, <= nCap */
  void *pAux;          /* derived data (a seek aid), owned; NULL none */
  size_t nAux;         /* bytes at pAux, charged with the block */
  /* the block contents follow the struct, in the same allocation (not a
  ** flexible array member: a shard embeds a handle as its ring head) */
};

/* A slot of a shard's table: empty when p is NULL. */
typedef struct cache_slot {
  uint64_t h;          /* p->h, so a probe need not touch p */
  wcs_cache_handle *p; /* the entry */
  const void *pAux;    /* p->pAux (set before insertion, never after) */
  void *pUnused;       /* (32 bytes: two slots to a cache line) */
} cache_slot;

/* A table of n empty slots on whole cache lines (a probe reads one line),
** or NULL when out of memory. */
static cache_slot *slotsNew(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n * sizeof(cache_slot)) != 0) return NULL;
  memset(p, 0, n * sizeof(cache_slot));
  return p;
}

struct cache_shard {
  pthread_mutex_t mutex; /* guards everything below */
  cache_slot *aSlot;     /* the table; nHash is a power of two */
  size_t nHash;          /* slots allocated, >= 2 * nEntry */
  size_t nEntry;         /* entries in the table */
  wcs_cache_handle ring;    /* ring head: ring.pNext is the oldest entry,
                            ** where the eviction sweep starts */
  size_t nBudget;           /* bytes this shard may hold idle */
  size_t nUsed;             /* charge of the entries in the table */
  uint64_t anHit[2];        /* lookup outcomes: [0] data blocks, */
  uint64_t anMiss[2];       /* [1] index and filter entries */
};

struct wcs_cache {
  int nShard; /* power of two, 1..CACHE_MAX_SHARDS */
  cache_shard aShard[CACHE_MAX_SHARDS];
  sst_ftable ft; /* open sorted files of the readers using this cache */
  sst_pfq pf;    /* the worker decompressing ahead of long scans */
};

sst_ftable *wcs_cache_ftable(wcs_cache *p) {
  return p ? &p->ft : NULL;
}

sst_pfq *wcs_cache_pfq(wcs_cache *p) {
  return p ? &p->pf : NULL;
}

static size_t charge(const wcs_cache_handle *h) {
  return sizeof(*h) + h->nCap + h->nAux;
}

static void handleFree(wcs_cache_handle *h) {
  free(h->pAux);
  free(h);
}

static uint64_t hashKey(uint64_t iFile, uint64_t iOff) {
  uint64_t h = (iFile * 0x9E3779B97F4A7C15ull) ^ iOff;
  h ^= h >> 31;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

static cache_shard *shardOf(wcs_cache *p, uint64_t h) {
  return &p->aShard[(h >> 58) & (uint64_t)(p->nShard - 1)];
}

int wcs_cache_new(size_t nBudget, wcs_cache **ppCache) {
  wcs_cache *p = calloc(1, sizeof *p);
  int i;
  *ppCache = NULL;
  if (p == NULL) return WCS_NOMEM;
  pthread_mutex_init(&p->ft.mu, NULL);
  p->ft.nMax = WCS_DEF_MAX_FILES;
  sst_pfq_init(&p->pf);
  p->nShard = 1;
  while (p->nShard < CACHE_MAX_SHARDS &&
         nBudget / ((size_t)p->nShard * 2) >= CACHE_SHARD_MIN) {
    p->nShard *= 2;
  }
  for (i = 0; i < p->nShard; i++) {
    cache_shard *s = &p->aShard[i];
    pthread_mutex_init(&s->mutex, NULL);
    s->nBudget = nBudget / (size_t)p->nShard;
    s->ring.pNext = s->ring.pPrev = &s->ring;
    s->nHash = 64;
    s->aSlot = slotsNew(s->nHash);
    if (s->aSlot == NULL) {
      p->nShard = i + 1;
      wcs_cache_free(p);
      return WCS_NOMEM;
    }
  }
  *ppCache = p;
  return WCS_OK;
}

void wcs_cache_free(wcs_cache *p) {
  int i;
  size_t j;
  if (p == NULL) return;
  for (i = 0; i < p->nShard; i++) {
    cache_shard *s = &p->aShard[i];
    for (j = 0; s->aSlot && j < s->nHash; j++) {
      wcs_cache_handle *h = s->aSlot[j].p;
      if (h == NULL) continue;
      /* Every handle must have been released before the cache is freed. */
      assert(h->nRef == 0);
      handleFree(h);
    }
    free(s->aSlot);
    pthread_mutex_destroy(&s->mutex);
  }
  /* Every reader must have been closed before the cache is freed. */
  assert(p->ft.nReaders == 0);
  pthread_mutex_destroy(&p->ft.mu);
  sst_pfq_stop(&p->pf);
  free(p);
}

static void stats(wcs_cache *p, int bMeta, uint64_t *pnBytes, uint64_t *pnHit,
                  uint64_t *pnMiss) {
  uint64_t nBytes = 0, nHit = 0, nMiss = 0;
  int i;
  for (i = 0; p && i < p->nShard; i++) {
    cache_shard *s = &p->aShard[i];
    pthread_mutex_lock(&s->mutex);
    nBytes += s->nUsed;
    nHit += s->anHit[bMeta];
    nMiss += s->anMiss[bMeta];
    pthread_mutex_unlock(&s->mutex);
  }
  if (pnBytes) *pnBytes = nBytes;
  if (pnHit) *pnHit = nHit;
  if (pnMiss) *pnMiss = nMiss;
}

void wcs_cache_stats(wcs_cache *p, uint64_t *pnBytes, uint64_t *pnHit,
                     uint64_t *pnMiss) {
  stats(p, 0, pnBytes, pnHit, pnMiss);
}

void wcs_cache_meta_stats(wcs_cache *p, uint64_t *pnHit, uint64_t *pnMiss) {
  stats(p, 1, NULL, pnHit, pnMiss);
}

wcs_cache_handle *wcs_cache_alloc(size_t nCap) {
  wcs_cache_handle *h = malloc(sizeof *h + (nCap ? nCap : 1));
  if (h == NULL) return NULL;
  memset(h, 0, sizeof *h);
  h->nRef = 1;
  h->nCap = nCap;
  h->nData = nCap;
  return h;
}

uint8_t *wcs_cache_data(wcs_cache_handle *h) {
  return (uint8_t *)(h + 1);
}
size_t wcs_cache_size(const wcs_cache_handle *h) {
  return h->nData;
}
void wcs_cache_set_size(wcs_cache_handle *h, size_t n) {
  assert(n <= h->nCap);
  h->nData = n;
}
void wcs_cache_set_aux(wcs_cache_handle *h, void *p, size_t n) {
  assert(h->pShard == NULL && h->pAux == NULL);
  h->pAux = p;
  h->nAux = p ? n : 0;
}
const void *wcs_cache_aux(const wcs_cache_handle *h) {
  return h->pAux;
}

/* ---- shard internals; the shard mutex is held */

static void ringUnlink(wcs_cache_handle *h) {
  h->pPrev->pNext = h->pNext;
  h->pNext->pPrev = h->pPrev;
  h->pPrev = h->pNext = NULL;
}

static void ringAppend(cache_shard *s, wcs_cache_handle *h) {
  h->pNext = &s->ring;
  h->pPrev = s->ring.pPrev;
  h->pPrev->pNext = h;
  s->ring.pPrev = h;
}

/* The slot holding (iFile, iOff), or the empty slot ending its probe
** sequence, where it would go. The table always has an empty slot. */
static cache_slot *findSlot(cache_shard *s, uint64_t h, uint64_t iFile,
                            uint64_t iOff) {
  size_t mask = s->nHash - 1, i = h & mask;
  for (;;) {
    cache_slot *e = &s->aSlot[i];
    if (e->p == NULL) return e;
    if (e->h == h) {
      /* Most likely the block asked for, whose seek aid the caller reads
      ** next: ask for the aid's first lines now, so that they arrive
      ** while the entry itself is read (both are usually misses). */
      if (e->pAux) {
        __builtin_prefetch(e->pAux);
        __builtin_prefetch((const char *)e->pAux + 64);
      }
      if (e->p->iFile == iFile && e->p->iOff == iOff) return e;
    }
    i = (i + 1) & mask;
  }
}

/* Empty slot i and close the gap: each later entry of the run whose home
** slot is not between the gap and itself (cyclically) moves back into it,
** so that every entry stays reachable from its home slot. */
static void slotDelete(cache_shard *s, size_t i) {
  size_t mask = s->nHash - 1, j = i;
  for (;;) {
    size_t k;
    s->aSlot[i].p = NULL;
    do {
      j = (j + 1) & mask;
      if (s->aSlot[j].p == NULL) return;
      k = s->aSlot[j].h & mask;
    } while (i <= j ? (i < k && k <= j) : (i < k || k <= j));
    s->aSlot[i] = s->aSlot[j];
    i = j;
  }
}

/* Take h out of the table and the ring. */
static void tableRemove(cache_shard *s, wcs_cache_handle *h) {
  cache_slot *e = findSlot(s, h->h, h->iFile, h->iOff);
  assert(e->p == h);
  slotDelete(s, (size_t)(e - s->aSlot));
  h->bInTable = 0;
  ringUnlink(h);
  s->nEntry--;
  s->nUsed -= charge(h);
}

/* Double the table. On failure the table stays as it is: fuller, and
** slower to probe, but correct while it has an empty slot (the caller
** checks). */
static int tableGrow(cache_shard *s) {
  size_t nNew = s->nHash * 2, i;
  cache_slot *aNew = slotsNew(nNew);
  if (aNew == NULL) return WCS_NOMEM;
  for (i = 0; i < s->nHash; i++) {
    size_t j;
    if (s->aSlot[i].p == NULL) continue;
    for (j = s->aSlot[i].h & (nNew - 1); aNew[j].p; j = (j + 1) & (nNew - 1)) {
    }
    aNew[j] = s->aSlot[i];
  }
  free(s->aSlot);
  s->aSlot = aNew;
  s->nHash = nNew;
  return WCS_OK;
}

/* Sweep the ring until the shard fits its budget: entries in use are
** passed over, referenced ones lose their bit and go to the back, others
** are unlinked and chained through pChain onto *ppFree, to be freed after
** the mutex is released. Two full turns at most (then everything left is
** in use). */
static void evict(cache_shard *s, wcs_cache_handle **ppFree) {
  size_t nStep = 2 * s->nEntry;
  while (s->nUsed > s->nBudget && nStep-- > 0 && s->ring.pNext != &s->ring) {
    wcs_cache_handle *h = s->ring.pNext;
    if (h->nRef > 0 || h->bRef) {
      h->bRef = 0;
      ringUnlink(h);
      ringAppend(s, h);
      continue;
    }
    tableRemove(s, h);
    h->pChain = *ppFree;
    *ppFree = h;
  }
}

static void freeChain(wcs_cache_handle *h) {
  while (h) {
    wcs_cache_handle *pNext = h->pChain;
    handleFree(h);
    h = pNext;
  }
}

static wcs_cache_handle *lookup(wcs_cache *p, uint64_t iFile, uint64_t iOff,
                                int bMeta) {
  uint64_t h = hashKey(iFile, iOff);
  cache_shard *s = shardOf(p, h);
  wcs_cache_handle *e;
  pthread_mutex_lock(&s->mutex);
  e = findSlot(s, h, iFile, iOff)->p;
  if (e) {
    e->nRef++;
    e->bRef = 1;
    s->anHit[bMeta]++;
  } else {
    s->anMiss[bMeta]++;
  }
  pthread_mutex_unlock(&s->mutex);
  return e;
}

wcs_cache_handle *wcs_cache_lookup(wcs_cache *p, uint64_t iFile,
                                   uint64_t iOff) {
  return lookup(p, iFile, iOff, 0);
}

wcs_cache_handle *wcs_cache_lookup_meta(wcs_cache *p, uint64_t iFile,
                                        uint64_t iOff) {
  return lookup(p, iFile, iOff, 1);
}

wcs_cache_handle *wcs_cache_insert(wcs_cache *p, uint64_t iFile, uint64_t iOff,
                                   wcs_cache_handle *pNew) {
  uint64_t h = hashKey(iFile, iOff);
  cache_shard *s = shardOf(p, h);
  wcs_cache_handle *pFree = NULL, *pRet = pNew;
  cache_slot *e;
  assert(pNew->pShard == NULL && pNew->nRef == 1);
  pthread_mutex_lock(&s->mutex);
  e = findSlot(s, h, iFile, iOff);
  if (e->p) {
    /* Another reader inserted the same block first: share theirs. */
    pRet = e->p;
    pRet->nRef++;
    pRet->bRef = 1;
    pFree = pNew;
  } else {
    pNew->iFile = iFile;
    pNew->iOff = iOff;
    pNew->h = h;
    pNew->pShard = s;
    pNew->bInTable = 1;
    pNew->bRef = 0;
    pNew->pChain = NULL;
    if ((s->nEntry + 1) * 2 > s->nHash) {
      if (tableGrow(s) == WCS_OK) {
        e = findSlot(s, h, iFile, iOff);
      } else if (s->nEntry + 2 > s->nHash) {
        /* no room for it and an empty slot: hand the block back
        ** uncached, as if it had been read for one pass */
        pNew->pShard = NULL;
        pNew->bInTable = 0;
        pthread_mutex_unlock(&s->mutex);
        return pNew;
      }
    }
    e->h = h;
    e->p = pNew;
    e->pAux = pNew->pAux;
    ringAppend(s, pNew);
    s->nEntry++;
    s->nUsed += charge(pNew);
    evict(s, &pFree);
  }
  pthread_mutex_unlock(&s->mutex);
  freeChain(pFree);
  return pRet;
}

int wcs_cache_has_room(wcs_cache *p, uint64_t iFile, uint64_t iOff,
                       size_t n) {
  cache_shard *s;
  int bRoom;
  if (p == NULL) return 0;
  s = shardOf(p, hashKey(iFile, iOff));
  pthread_mutex_lock(&s->mutex);
  bRoom = s->nUsed + sizeof(wcs_cache_handle) + n <= s->nBudget;
  pthread_mutex_unlock(&s->mutex);
  return bRoom;
}

void wcs_cache_release(wcs_cache *p, wcs_cache_handle *h) {
  cache_shard *s;
  wcs_cache_handle *pFree = NULL;
  (void)p;
  if (h == NULL) return;
  s = h->pShard;
  if (s == NULL) {
    assert(h->nRef == 1);
    handleFree(h);
    return;
  }
  pthread_mutex_lock(&s->mutex);
  assert(h->nRef > 0);
  if (--h->nRef == 0) {
    if (!h->bInTable) {
      h->pChain = pFree;
      pFree = h;
    } else if (s->nUsed > s->nBudget) {
      evict(s, &pFree);
    }
  }
  pthread_mutex_unlock(&s->mutex);
  freeChain(pFree);
}

void wcs_cache_set_budget(wcs_cache *p, size_t nTotal) {
  int i;
  if (p == NULL) return;
  for (i = 0; i < p->nShard; i++) {
    cache_shard *s = &p->aShard[i];
    wcs_cache_handle *pFree = NULL;
    pthread_mutex_lock(&s->mutex);
    s->nBudget = nTotal / (size_t)p->nShard;
    evict(s, &pFree);
    pthread_mutex_unlock(&s->mutex);
    freeChain(pFree);
  }
}

void wcs_cache_evict_file(wcs_cache *p, uint64_t iFile) {
  int i;
  size_t j;
  if (p == NULL) return;
  for (i = 0; i < p->nShard; i++) {
    cache_shard *s = &p->aShard[i];
    wcs_cache_handle *pFree = NULL;
    pthread_mutex_lock(&s->mutex);
    for (j = 0; j < s->nHash;) {
      wcs_cache_handle *h = s->aSlot[j].p;
      if (h == NULL || h->iFile != iFile) {
        j++;
        continue;
      }
      /* slot j now holds a later entry of the run, or nothing: look at
      ** it again (an entry that wraps round to the end was seen already
      ** and kept, seeing it again is harmless) */
      tableRemove(s, h);
      if (h->nRef == 0) {
        h->pChain = pFree;
        pFree = h;
      }
    }
    pthread_mutex_unlock(&s->mutex);
    freeChain(pFree);
  }
}
