/*
** compact.h — leveled compaction: choosing what to compact, and the one
** routine that turns a sorted stream of entries plus range tombstones into
** sorted files (used for memtable flushes and for compactions alike).
**
** Picking (see doc/storage.md for the why): each level gets a score —
** level 0: files / nL0Trigger; level i >= 1: bytes / (nL1Bytes * 10^(i-1))
** — and the level with the highest score >= 1 is compacted into the next
** one. Level 0 takes all its files at once; a deeper level takes one file,
** round-robin over the key space, plus the overlapping files one level
** down. A file that overlaps nothing one level down is moved, not
** rewritten (a trivial move).
*/
#ifndef WCS_COMPACT_H
#define WCS_COMPACT_H

#include <stdint.h>

#include "storage/iter.h"
#include "storage/sst.h"
#include "storage/version.h"

/* One compaction's inputs. */
typedef struct wcs_compaction {
  int iLevel;            /* input level */
  int iOutLevel;         /* output level: iLevel + 1, or iLevel for a
                         ** bottom-level rewrite by compact_range */
  wcs_version *pVersion; /* the version the inputs come from (ref) */
  int anIn[2];           /* files from iLevel and from iOutLevel */
  wcs_fmeta **aaIn[2];   /* referenced by pVersion */
  int bTrivial;          /* move aaIn[0] to iOutLevel without rewriting */
} wcs_compaction;

/* The highest compaction score of v and its level (score < 1: nothing to
** do). Files marked bCompacting are not counted. */
double compact_score(const wcs_version *v, const wcs_options *pOpt,
                     int *piLevel);

/* Pick the next automatic compaction from v, or set *pp NULL. The round-
** robin cursor of the chosen level advances. */
int compact_pick(wcs_vset *vs, wcs_version *v, wcs_compaction **pp);

/* Pick the files of level iLevel overlapping user keys [lo, hi) (NULL:
** unbounded) and the overlapping files of iOutLevel; *pp NULL if iLevel
** has none. */
int compact_pick_range(wcs_version *v, int iLevel, int iOutLevel,
                       const uint8_t *pLo, size_t nLo, const uint8_t *pHi,
                       size_t nHi, wcs_compaction **pp);
void compact_free(wcs_compaction *);

/* Input iterator (merging) and the range tombstones of a compaction's
** files (tombstones borrowed from the readers, valid while c lives). */
int compact_input(wcs_compaction *c, wcs_iiter **ppIter, char **pzErr);
int compact_input_dels(wcs_compaction *c, sst_rangedel **paDel, int *pnDel);

/* What a compaction or flush writes and how. */
typedef struct compact_job {
  wcs_vset *pVs;                    /* env, directory, options, cache */
  uint64_t (*xNewFile)(void *pArg); /* allocate a file number (locks) */
  /* the manifest in use and its size (locks), recorded in each output
  ** (sst_options.iManifest); NULL: none */
  void (*xManifestPos)(void *pArg, uint64_t *piManifest, uint64_t *pnBytes);
  void *pArg;                       /* passed to xNewFile */
  const uint64_t *aSnap;            /* live snapshot seqs ascending, then the
                                    ** latest seq: versions are kept per stripe */
  int nSnap;                        /* >= 1 */
  wcs_version *pBase;               /* for "no older data below" checks */
  int iOutLevel;                    /* outputs go here; levels below it in
                                    ** pBase are "below" (-1: all of pBase) */
  uint64_t nFileBytes;              /* cut outputs at this size (0: never) */
  const _Atomic int *pbStop;        /* nonzero: give up (store closing) */
  int bZeroSeq;                     /* a compaction (not a flush): the
                                    ** only visible version of a key with
                                    ** nothing below is written at seq 0 */
  int bFilter;                      /* offer entries to the options'
                                    ** xCompactionFilter (a compaction with
                                    ** no live snapshot, nSnap == 1) */
  struct wcs_upper *pUpper;         /* with bFilter: the sources above the
                                    ** input, which wcs_compaction_covered()
                                    ** asks during the filter's calls (NULL:
                                    ** it answers "covered"); upper.h */
  /* results */
  wcs_fmeta **aOut;   /* new files (references), malloc'd */
  int nOut;           /* entries in aOut */
  uint64_t nBytesIn;  /* key+value bytes read */
  uint64_t nBytesOut; /* file bytes written */
  uint64_t nDropped;  /* entries dropped */
  uint64_t nFiltered; /* entries the compaction filter removed */
} compact_job;

/*
** Write the entries of pIn (positioned by this call) and the tombstones
** aDel as sorted files. An entry is dropped when a newer version of its key
** is visible to every snapshot that could see it, or when a range
** tombstone hides it from all of them; deletes and tombstones are dropped
** once no older data below can show through and every snapshot sees them.
** With bFilter, the newest put of each key that survives is offered to
** the options' xCompactionFilter (wcs.h); a dropped one is removed, or
** replaced by a delete at its seq when data below the output level could
** show through. While it runs, j->pUpper is this thread's target of
** wcs_compaction_covered().
** On error every output is deleted and the message names the file.
*/
int compact_run(compact_job *j, wcs_iiter *pIn, const sst_rangedel *aDel,
                int nDel, char **pzErr);
void compact_job_clear(compact_job *j); /* drops aOut references */
/* After a failure: clears j, deleting its output files. */
void compact_job_discard(compact_job *j);

/*
** Output files, as compaction and bulk ingest write them. compact_sst_
** options fills the builder options from the store's. compact_cut_before
** is asked before each entry with user key pU: it moves *pCut past the
** files of the level below j's output level that end before pU (counting
** their bytes while an output pB is open) and returns 1 if pB should be
** finished before pU: it reached j->nFileBytes or its index and filter
** size (sst_builder_full), or it overlaps more than ten outputs' worth of
** those files, so the compaction that later moves it down stays small
** (LevelDB's rule). The caller sets pCut->nGpBytes to 0 when it cuts.
*/
typedef struct compact_cut {
  int iGp;           /* next file of the level below not yet passed */
  uint64_t nGpBytes; /* bytes of them the open output overlaps */
} compact_cut;
void compact_sst_options(const wcs_options *pOpt, sst_options *pSo);
int compact_cut_before(const compact_job *j, compact_cut *pCut,
                       const sst_builder *pB, const uint8_t *pU, size_t nU);

/*
** One output file being written, by compaction or by bulk ingest.
** compact_output_open starts the next: a file number from j->xNewFile,
** its path, a builder with options pSo. compact_output_finish writes the
** rest of the file (the builder is freed whatever happens; o->pB is NULL
** after), opens it and adds it to j->aOut and j->nBytesOut. pBounds,
** when not NULL, is what the manifest records of the file's key range,
** tombstones and sequence numbers instead of what the builder saw
** (compaction clips tombstones to a file's share of the key space and
** ends them with sentinel keys, version.h): its pSmallest, pLargest,
** bUnbounded, nRangeDel, minSeq and maxSeq are read, nothing else. On
** error the file is deleted and *pzErr says why.
*/
typedef struct compact_output {
  sst_builder *pB; /* open builder, or NULL: none */
  uint64_t iFile;  /* its file number */
  char *zPath;     /* its path (malloc'd, kept until the next open or
                   ** compact_output_clear) */
} compact_output;
int compact_output_open(compact_job *j, const sst_options *pSo,
                        compact_output *o, char **pzErr);
int compact_output_finish(compact_job *j, compact_output *o,
                          const sst_meta *pBounds, char **pzErr);
/* Abandon an open builder (its partial file is deleted), free the path. */
void compact_output_clear(compact_output *o);

#endif /* WCS_COMPACT_H */
