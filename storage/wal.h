/*
** wal.h — the log file format shared by the write-ahead log (*.log) and
** the manifest (MANIFEST-*): a sequence of checksummed records, and the
** write-batch payload that WAL records carry. Every byte is described in
** doc/format.md; the constants below are the same numbers.
**
** Record framing (all integers little-endian):
**
**     offset 0   u32  hcrc   masked CRC-32C of bytes [4, 8) (the length)
**     offset 4   u32  len    payload bytes, 1 .. WAL_MAX_RECORD
**     offset 8   u32  crc    masked CRC-32C of the payload
**     offset 12  len bytes   payload
**
** The length has its own checksum so a damaged length is reported as
** corruption instead of being mistaken for a short (torn) file.
**
** Recovery tells a torn tail from corruption like this: reading stops at
** the first record that is incomplete or fails a checksum. If the record
** runs past the end of the file, or if a sector-aligned piece of its bytes
** is all zero (what a power cut leaves where pages never reached the disk;
** a header all zero tells no length, and then a piece anywhere from it to
** the end of the file counts), the rest of the file is a torn tail: it
** was never synced, so it was never acknowledged, and it is cut off.
** Otherwise the bytes were written whole and changed since: WCS_CORRUPT
** naming the file and the record's offset. (Zeros in the whole records
** after a damaged one are their data: a record that fails its checksum
** with no hole of its own is corruption even when the file ends in
** zeros.)
*/
#ifndef WCS_WAL_H
#define WCS_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "storage/env.h"
#include "storage/util.h"

#define WAL_OFF_HCRC   0
#define WAL_OFF_LEN    4
#define WAL_OFF_CRC    8
#define WAL_HEADER     12          /* bytes before the payload */
#define WAL_MAX_RECORD 0x7fffffffu /* largest payload */
#define WAL_SECTOR     512         /* torn-write granularity assumed */
/* An all-zero piece shorter than this is a hole only at the file's end. */
#define WAL_HOLE_MIN 32

/*
** Write-batch payload (one WAL record per committed batch):
**
**     offset 0   u64  seq    sequence number of the first operation
**     offset 8   u32  count  operations; op i has sequence seq + i
**     offset 12  ops, each:
**       u8 op, then
**         WAL_OP_PUT:           varint klen, key, varint vlen, value
**         WAL_OP_DELETE:        varint klen, key
**         WAL_OP_RANGEDEL:      varint slen, start, varint elen, end
**         WAL_OP_RANGEDEL_OPEN: varint slen, start   (end = key space end)
*/
#define WAL_BATCH_OFF_SEQ    0
#define WAL_BATCH_OFF_COUNT  8
#define WAL_BATCH_HEADER     12
#define WAL_OP_DELETE        0
#define WAL_OP_PUT           1
#define WAL_OP_RANGEDEL      2
#define WAL_OP_RANGEDEL_OPEN 3

/*
** Make the payload *pRep, built by the caller in the format above (its
** first WAL_BATCH_HEADER bytes are a gap the commit fills in; nOp
** operations follow), batch b's operations: the two buffers are swapped,
** so the bytes are not copied; *pRep gets the batch's old buffer, empty.
** nRunPrefix is a hint for a bulk ingest (ingest.h): point operations
** whose keys share their first nRunPrefix bytes come in increasing key
** order (0: no hint). The ingest checks it and sorts when it is wrong; the
** operations are not checked here (wcs_db_write and the ingest do).
** WCS_TOOBIG if the payload exceeds WAL_MAX_RECORD (nothing is swapped).
** Declared here, not in wcs.h: only in-tree callers build payloads.
*/
typedef struct wcs_batch wcs_batch;
int wcs_batch_adopt(wcs_batch *b, wcs_buf *pRep, int nOp, size_t nRunPrefix);

/*
** A prebuild: a large batch in the payload format above written as sorted
** files while its owner is still filling it (RocksDB's SstFileWriter, run
** on a second core), so that its commit only installs them. doc/storage.md,
** "Prebuilt ingest". Declared here for the same reason as wcs_batch_adopt.
**
** wcs_prebuild_start: a worker thread begins; nRunPrefix as for
** wcs_batch_adopt, but the order is required, not hinted: within each run
** the keys must strictly increase, and every operation must be a put or a
** delete. Every entry takes one sequence number, reserved at the start
** WCS_PREBUILD_SEQ_GAP above the last one (the space between is left to
** the commits of other writers meanwhile). WCS_NOTFOUND: not available
** here (a single core, a read-only store, the sequence numbers spent).
**
** wcs_prebuild_offer: the payload's first n bytes at p are complete
** operations, and p holds them unchanged until the next offer, commit or
** abandon. p NULL withdraws it (before the owner moves or frees the
** buffer); the call then waits while the worker is copying from it.
**
** wcs_prebuild_commit: p[0..n) is the whole payload (nOp operations).
** Waits for the worker, then installs its files with one manifest edit as
** the bulk ingest does, or declines with WCS_NOTFOUND and writes nothing:
** the payload broke the rules above, the worker failed, or other commits
** used the reserved sequence numbers; the owner then commits the batch
** the usual way. Any other error is the store's. pb is freed either way.
** wcs_prebuild_abandon stops the worker and deletes its files.
*/
#define WCS_PREBUILD_SEQ_GAP (((uint64_t)1) << 24)
typedef struct wcs_prebuild wcs_prebuild;
int wcs_prebuild_start(wcs_db *db, size_t nRunPrefix, wcs_prebuild **ppPre);
void wcs_prebuild_offer(wcs_prebuild *pPre, const void *p, size_t n);
int wcs_prebuild_commit(wcs_prebuild *pPre, const void *p, size_t n, int nOp);
void wcs_prebuild_abandon(wcs_prebuild *pPre);

/* Append one framed record holding payload p[0..n) to *pOut. */
int wal_frame(wcs_buf *pOut, const uint8_t *p, size_t n);

/*
** Walk a batch payload, calling x once per operation with its sequence
** number. For puts pVal/nVal is the value; for range deletes pVal/nVal is
** the end key (pVal NULL for WAL_OP_RANGEDEL_OPEN). Bytes that do not
** parse return WCS_CORRUPT (message names zFile and iOff, the record's
** offset). A nonzero return from x stops the walk and is returned.
*/
int wal_batch_walk(const uint8_t *p, size_t n, const char *zFile, uint64_t iOff,
                   void *pCtx,
                   int (*x)(void *pCtx, uint64_t seq, int op,
                            const uint8_t *pKey, size_t nKey,
                            const uint8_t *pVal, size_t nVal),
                   char **pzErr);

/* ---- writing */
typedef struct wal_writer wal_writer;
/* Create (truncating) the log file zPath. */
int wal_writer_open(wcs_env *, const char *zPath, wal_writer **pp,
                    char **pzErr);
/* Append framed bytes (one or more records) with one write. If the write
** fails, the file is cut back to its previous size so later records never
** follow a partial one; if even that fails, WCS_IOERR-class codes are
** returned and the writer refuses further appends. */
int wal_writer_append(wal_writer *, const uint8_t *p, size_t n, char **pzErr);
/* Open an existing log of nSize bytes, all of them whole records (as a
** reader found them, its tail cut if torn), to append to it. They count as
** unsynced: the next wal_writer_sync syncs the file even if nothing was
** appended. */
int wal_writer_open_append(wcs_env *, const char *zPath, uint64_t nSize,
                           wal_writer **pp, char **pzErr);
int wal_writer_sync(wal_writer *, char **pzErr);
uint64_t wal_writer_size(const wal_writer *);
/* Bytes appended since the last successful sync. */
uint64_t wal_writer_unsynced(const wal_writer *);
const char *wal_writer_path(const wal_writer *);
/* Nonzero once an append could not be undone or a sync failed: the file's
** tail is unknown and nothing more may be appended. */
int wal_writer_broken(const wal_writer *);
void wal_writer_close(wal_writer *); /* no sync; NULL is a no-op */

/* ---- reading */
typedef struct wal_reader wal_reader;
int wal_reader_open(wcs_env *, const char *zPath, wal_reader **pp,
                    char **pzErr);
/* Start reading at iOff, the end of a record read before (a good end):
** the records before it are not read again. Before the first read. */
void wal_reader_skip(wal_reader *, uint64_t iOff);
/*
** The next record. On WCS_OK, *ppRec and *pnRec is the payload (borrowed until
** the next call) and *piOff its record's offset; at the end (clean or torn)
** *ppRec is NULL. Corruption returns WCS_CORRUPT naming file and offset.
*/
int wal_reader_next(wal_reader *, const uint8_t **ppRec, size_t *pnRec,
                    uint64_t *piOff, char **pzErr);
/* After the end: the offset just past the last good record, and whether
** bytes after it were discarded as a torn tail. */
uint64_t wal_reader_good_end(const wal_reader *);
/* The file's size when the reader opened it: what it read, torn tail and
** all (a writer that goes on makes the file longer). */
uint64_t wal_reader_file_size(const wal_reader *);
int wal_reader_torn(const wal_reader *);
void wal_reader_close(wal_reader *);

#endif /* WCS_WAL_H */
