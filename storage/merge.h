/*
** merge.h — the merging iterator: one sorted view (internal-key order) over
** several child iterators (memtables, level-0 files, levels), kept in a
** binary heap so each step costs O(log n) comparisons.
*/
#ifndef WCS_MERGE_H
#define WCS_MERGE_H

#include "storage/iter.h"
#include "storage/sst.h"

/*
** Make a merging iterator over apChild[0..nChild-1]. It takes ownership of
** the children (closed with it, also on failure); the array itself is
** copied. Internal keys must be unique across children (each write has its
** own sequence number). A child's error makes the merged iterator invalid
** with that child's status.
*/
int merge_iter_new(wcs_iiter **apChild, int nChild, wcs_iiter **ppIter);

/*
** A merging iterator whose children belong to the caller, so that one
** iterator can be pointed at another set of them (a user iterator moved to
** other bounds keeps most of its children): it starts with none; each
** merge_iter_set replaces the list (the array is copied, the children are
** neither closed nor moved) and leaves it unpositioned. The children must
** outlive their use by it. merge_iter_set allocates only when the list
** outgrows every earlier one; WCS_NOMEM leaves it with no children.
*/
int merge_iter_new_borrowed(wcs_iiter **ppIter);
int merge_iter_set(wcs_iiter *pMerge, wcs_iiter **apChild, int nChild);

/* ---- range tombstone fragments
**
** Overlapping range tombstones cut into disjoint, sorted fragments, each
** listing the seqs of every tombstone covering it (descending), so "which
** tombstones cover key k" is one binary search. Keys are borrowed from the
** tombstones given to frags_build.
*/
typedef struct wcs_frag {
  const uint8_t *pStart; /* first user key covered (borrowed) */
  size_t nStart;         /* its bytes */
  const uint8_t *pEnd;   /* first user key after; NULL: unbounded */
  size_t nEnd;           /* its bytes */
  const uint64_t *aSeq;  /* seqs of the covering tombstones, descending */
  int nSeq;              /* >= 1 */
} wcs_frag;

typedef struct wcs_frags {
  wcs_frag *a;     /* fragments in key order, malloc'd */
  int n;           /* fragments */
  uint64_t *aPool; /* storage of every aSeq, malloc'd */
} wcs_frags;

/* Build fragments from tombstones (any order). WCS_OK or WCS_NOMEM. */
int frags_build(wcs_frags *, const sst_rangedel *aDel, int nDel);
/* The fragment holding user key k, or NULL. */
const wcs_frag *frags_find(const wcs_frags *, const uint8_t *pKey, size_t nKey);
/* The same, for a caller whose keys move a little at a time (a scan):
** *piHint is where the last call ended (-1 before the first), and a key in
** that fragment's gap or the next one's is found without a search. */
const wcs_frag *frags_find_near(const wcs_frags *, const uint8_t *pKey,
                                size_t nKey, int *piHint);
/* Index of the first fragment ending after key pLo (pLo NULL: 0); n if
** none. With the following ones up to a bound, the fragments that can
** overlap a range starting at pLo. */
int frags_first_after(const wcs_frags *, const uint8_t *pLo, size_t nLo);
void frags_free(wcs_frags *);

#endif /* WCS_MERGE_H */
