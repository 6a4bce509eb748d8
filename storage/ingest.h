/*
** ingest.h — bulk ingest: a large write batch written straight into sorted
** files instead of through the WAL and the memtable (RocksDB's
** IngestExternalFile, HBase's bulk load), used by the commit path in db.c.
** Design notes: doc/storage.md, "Bulk ingest".
**
** A plan parses a batch payload (wal.h, sequence numbers already set)
** once: whether its point operations are in internal-key order (or, with
** a run prefix, a few interleaved runs that each are), its range
** tombstones, and a cut that splits its point entries in two halves with
** disjoint outputs. ingest_write turns a plan into sorted files with the
** flush/compaction writer (compact_run), in one pass or, when the batch is
** large and holds no range tombstones, in two passes run side by side, one
** on a second thread. ingest_level then picks where the files go.
*/
#ifndef WCS_INGEST_H
#define WCS_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "storage/compact.h"
#include "storage/version.h"

typedef struct ingest_plan ingest_plan;

/*
** Parse the batch payload p[0..n) (header with its first sequence number
** set). nRunPrefix is the batch's hint (wcs_batch_adopt in wal.h): point
** operations whose keys share their first nRunPrefix bytes come in
** increasing key order, so the batch interleaves a few sorted runs (a
** load writing several column families row by row); 0: one run. The
** hint is checked, never trusted. p is borrowed and must stay unchanged
** until ingest_plan_free. On WCS_OK *pp is the caller's
** (ingest_plan_free); bad bytes are WCS_CORRUPT.
*/
int ingest_plan_new(const uint8_t *p, size_t n, size_t nRunPrefix,
                    ingest_plan **pp, char **pzErr);
void ingest_plan_free(ingest_plan *);

/* The sorted runs the point entries are read from without sorting (1
** for a batch in key order), or 0 when they had to be sorted; and
** whether they are cut in two for two threads (ingest_write). */
int ingest_plan_runs(const ingest_plan *);
int ingest_plan_split(const ingest_plan *);

/*
** Write the plan as sorted files. j is a filled-in job template (store,
** file numbers, snapshots, base version, output level, file size); the
** files written, in key order, are returned in *paOut and *pnOut (malloc'd
** array of references, the caller's). A plan cut in two is written by two
** threads when the machine has a second core. On error no file is left
** behind and *pzErr names the cause.
*/
int ingest_write(ingest_plan *, const compact_job *j, wcs_fmeta ***paOut,
                 int *pnOut, uint64_t *pnBytes, char **pzErr);

/*
** The level the plan's files can be added to in version v: the deepest
** level such that no file of it or of any level above overlaps the plan's
** key range, or 0 when level 0 or 1 already overlaps. Files marked
** bCompacting belong to a running compaction whose outputs may span their
** whole range: a level such a compaction writes into is treated as
** overlapping when that range overlaps the plan's. Store mutex held (the
** bCompacting marks).
*/
int ingest_level(const wcs_version *v, const ingest_plan *p);

/* The same rule for a user-key range [pLo, pHi] (both inclusive; bHiInf:
** to the end of the key space), which ingest_level takes from its plan
** and a prebuild (db.c) from its files. */
typedef struct ingest_range {
  const uint8_t *pLo, *pHi;
  size_t nLo, nHi;
  int bHiInf;
} ingest_range;
int ingest_level_range(const wcs_version *v, const ingest_range *r);

/*
** A stream: a batch written as sorted files while it is still being
** filled (wcs_prebuild in wcs.h, db.c). Every entry takes sequence number
** seq. The operations must be puts and deletes whose keys, within each
** run (nPrefix as for ingest_plan_new; at most 16 bytes, 8 runs),
** strictly increase; runs with distinct prefixes cover disjoint ranges.
** ingest_stream_add takes the whole operations at the start of p[0..n)
** and says in *pnUsed how many bytes they were (an operation cut off at
** the end is left for the next call, with more bytes). WCS_NOTFOUND: the
** batch cannot be streamed (another operation, a key out of order, too
** many runs); the stream is then of no more use. ingest_stream_finish
** writes the open files and returns every file, in key order (as
** ingest_write). ingest_stream_free deletes every file not returned.
*/
typedef struct ingest_stream ingest_stream;
int ingest_stream_new(const compact_job *j, size_t nPrefix, uint64_t seq,
                      ingest_stream **pp);
int ingest_stream_add(ingest_stream *s, const uint8_t *p, size_t n,
                      size_t *pnUsed, char **pzErr);
int ingest_stream_finish(ingest_stream *s, wcs_fmeta ***paOut, int *pnOut,
                         uint64_t *pnBytes, char **pzErr);
void ingest_stream_free(ingest_stream *s);

#endif /* WCS_INGEST_H */
