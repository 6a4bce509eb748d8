/*
** gcfilter.h — physical GC at compaction: the engine's GC policies wired
** into the store's compaction filter (wcs_options.xCompactionFilter).
** Internal to engine/; the design and its limits are in doc/engine.md,
** "Physical GC".
**
** A GcFilter is the filter's context: a registry (table id, family id) ->
** GC policy that the catalog keeps current, plus the filter's scan state.
** It is allocated before the store opens (the store copies pFilterCtx),
** bound to the engine once the engine is open, and freed after the store
** has closed (no compaction can call it any more).
*/
#ifndef WCS_GCFILTER_H
#define WCS_GCFILTER_H

#include "engine/engine.h"

typedef struct GcFilter GcFilter;

/* A new, unbound filter context (keeps everything until bound). *pp is
** owned by the caller and freed with gcf_free(). */
int gcf_new(GcFilter **pp);
/* Free a context. Only once no store can call the filter with it. NULL is
** a no-op. */
void gcf_free(GcFilter *p);

/* The xCompactionFilter callback; pCtx is a GcFilter. */
int gcf_filter(void *pCtx, const void *pKey, size_t nKey, const void *pVal,
               size_t nVal, int *pbDrop);

/* Bind p to pEng (clock, policies of every current table definition) and
** register it so the catalog hooks below find it. p stays owned by the
** caller. */
int gcf_bind(GcFilter *p, wcs_engine *pEng);
/* Forget pEng's binding; returns the context (to free once the store is
** closed), or NULL if pEng has none. */
GcFilter *gcf_unbind(wcs_engine *pEng);

/* GC compaction of table iTid: with the commit lock held, compact the
** table's key range down to one level, so that every cell the table's
** policies expire (MAX VERSIONS and INTERSECTION included) is removed,
** and stays removed. (Every compaction collects by position what no
** delete above its input can show again; this one has nothing above.)
** *pbCollected is 1 if it ran with a bound filter, 0 if pEng has none
** (then the range is only compacted). A live snapshot keeps everything,
** as for any compaction. Writers wait meanwhile. */
int gcf_compact_table(wcs_engine *pEng, uint32_t iTid, int *pbCollected);

/* Catalog hooks; each is a no-op for an engine without a bound filter.
** gcf_hold_table: keep every cell of table iTid until the next
** gcf_set_table (called before a DDL write, so no compaction drops a cell
** under the old policy that the new one shows). gcf_set_table: publish
** the policies of pDef's families. gcf_drop_table: forget table iTid. */
int gcf_hold_table(wcs_engine *pEng, uint32_t iTid);
int gcf_set_table(wcs_engine *pEng, const EngDef *pDef);
void gcf_drop_table(wcs_engine *pEng, uint32_t iTid);

#endif /* WCS_GCFILTER_H */
