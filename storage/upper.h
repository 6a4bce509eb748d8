/*
** upper.h — what lies above a compaction's input: the sources that can
** hold entries newer than the input for the same keys (the memtables, the
** files of the levels above the input level, and the files of the input
** level that are not inputs: newer level-0 files, or at a deeper level
** files that overlap inputs taken from the next level). The compaction
** filter asks through wcs_compaction_covered() (wcs.h) whether a delete
** among them could hide keys of a range, so that it may count the
** versions the compaction offers it as live (doc/storage.md, "Compaction
** filter").
**
** Lifetime of one answer. A range answered "not covered" is remembered
** (as a span; spans may be merged, which only widens them). Deletes
** written after the inputs were picked have a larger sequence number than
** the pick's; upper_recheck(), called with the store mutex held just
** before the compaction's result is installed, looks for such deletes in
** the remembered spans. A hit means a "not covered" answer may be stale,
** and the compaction is run again with every answer "covered". Writers
** publish their sequence numbers under the same mutex, so a delete the
** recheck misses becomes visible only after the result is installed.
** The store also reruns such a compaction when a snapshot taken since the
** pick is live at the install: a reader at it (a transaction, with
** deletes of its own not yet written) must keep seeing what it saw.
*/
#ifndef WCS_UPPER_H
#define WCS_UPPER_H

#include <stddef.h>
#include <stdint.h>

#include "storage/compact.h"
#include "storage/memtable.h"

typedef struct wcs_upper wcs_upper;

/* The upper sources of compaction c as of now (store mutex held): the
** memtables given (referenced), and c->pVersion's files above c's input
** (referenced through the version). iPickSeq is the store's last
** sequence number at the pick. On failure *pp is NULL. */
int upper_new(wcs_memtable *pMem, wcs_memtable *const *apImm, int nImm,
              const wcs_compaction *c, uint64_t iPickSeq, wcs_upper **pp);
void upper_free(wcs_upper *); /* NULL: no-op */

/* From now on every probe answers "covered" (a rerun after a hit). */
void upper_set_nocount(wcs_upper *);

/* Make p the target of wcs_compaction_covered() on this thread (NULL:
** none), and forget the first offered key (a new run). */
void upper_enter(wcs_upper *p);
/* The compaction offers user key k to its filter: the first one of a run
** is kept (a probed range starting before it is answered covered). */
int upper_offered(wcs_upper *p, const uint8_t *k, size_t n);

/* Did a probe of this run answer "not covered" (so the filter may have
** dropped entries for positions it counted)? */
int upper_counted(const wcs_upper *p);

/* Store mutex held, before installing the result: has a delete newer than
** the pick (seq > iPickSeq) landed in a span answered "not covered"? The
** current memtables and version are given. 1: yes, or unsure (out of
** memory, a read error) — run again without counting; 0: no. */
int upper_recheck(wcs_upper *p, wcs_memtable *pMem, wcs_memtable *const *apImm,
                  int nImm, wcs_version *vNow);

#endif /* WCS_UPPER_H */
