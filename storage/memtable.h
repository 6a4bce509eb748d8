/*
** memtable.h — the in-memory write buffer of the LSM: a skiplist of
** internal keys (ikey.h) with their values, plus a second skiplist of range
** tombstones, both allocated from one arena.
**
** Concurrency: exactly one thread adds entries at a time (the commit
** leader, see db.c); any number of readers run concurrently without locks
** (nodes are published with release stores and read with acquire loads,
** and nothing is freed before the whole memtable is). Lifetime is managed
** by a reference count.
**
** Memory: every byte comes from arena blocks; memtable_bytes() is what the
** store charges against its memtable budget (the rest of which it lends
** to the block cache, see memCharge in db.c). It changes only when a
** block is taken.
*/
#ifndef WCS_MEMTABLE_H
#define WCS_MEMTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/iter.h"
#include "storage/sst.h"

typedef struct wcs_memtable wcs_memtable;

/* A new empty memtable with one reference. nBudget (bytes) sizes the arena
** blocks. iLog is the WAL file number holding its records (0: none). */
int memtable_new(size_t nBudget, uint64_t iLog, wcs_memtable **ppMem);
void memtable_ref(wcs_memtable *);
/* Drop a reference; the last one frees everything. NULL is a no-op. */
void memtable_unref(wcs_memtable *);

uint64_t memtable_log(const wcs_memtable *);
/* Tie a memtable to log iLog (a replayed one kept at open). */
void memtable_set_log(wcs_memtable *, uint64_t iLog);

/* Add a put or delete (single writer). WCS_OK or WCS_NOMEM. */
int memtable_add(wcs_memtable *, uint64_t seq, int type, const void *pKey,
                 size_t nKey, const void *pVal, size_t nVal);
/* Add a range tombstone [start, end) at seq; pEnd NULL means unbounded. */
int memtable_add_rangedel(wcs_memtable *, uint64_t seq, const void *pStart,
                          size_t nStart, const void *pEnd, size_t nEnd);

size_t memtable_bytes(const wcs_memtable *);   /* arena bytes in use */
uint64_t memtable_count(const wcs_memtable *); /* entries (not tombstones) */
uint64_t memtable_rangedel_count(const wcs_memtable *);
/* Whether m may hold something within user keys [pLo, pHi) (either NULL:
** unbounded): an entry there, or any range tombstone. */
int memtable_any_within(const wcs_memtable *m, const uint8_t *pLo,
                        size_t nLo, const uint8_t *pHi, size_t nHi);
uint64_t memtable_min_seq(const wcs_memtable *); /* 0 while empty */
uint64_t memtable_max_seq(const wcs_memtable *);

/*
** Point lookup: the newest entry of user key with seq <= snap. Returns 1
** and fills *pSeq, *pType and the value (borrowed while the memtable is
** referenced) if there is one, else 0.
*/
int memtable_get(const wcs_memtable *, const void *pKey, size_t nKey,
                 uint64_t snap, uint64_t *pSeq, int *pType,
                 const uint8_t **ppVal, size_t *pnVal);

/* The highest seq <= snap of a range tombstone covering user key, or 0.
** O(log n) for tombstones that are pairwise identical or disjoint (row
** deletes), plus a scan of those that overlap others. */
uint64_t memtable_rangedel_cover(const wcs_memtable *, const void *pKey,
                                 size_t nKey, uint64_t snap);

/* Call x for each range tombstone with seq <= snap that overlaps user
** keys [lo, hi) (NULL: unbounded), in no particular order (the
** sst_rangedel's pointers are borrowed while the memtable is referenced).
** A nonzero return from x stops and is returned. */
int memtable_rangedels(const wcs_memtable *, uint64_t snap, const uint8_t *pLo,
                       size_t nLo, const uint8_t *pHi, size_t nHi, void *pCtx,
                       int (*x)(void *pCtx, const sst_rangedel *));

/* An iterator over the point entries (internal keys); it holds a reference
** on the memtable until closed. */
int memtable_iter(wcs_memtable *, wcs_iiter **ppIter);

#endif /* WCS_MEMTABLE_H */
