/*
** sst.h — sorted files ("sst"): the immutable, checksummed, zstd-compressed
** files the LSM flushes memtables into and compacts.
**
** A file holds internal keys (ikey.h) in internal-key order with their
** values, in data blocks (prefix-compressed with restart points, each block
** zstd-compressed unless that saves < 12.5%, each with a type byte and a
** CRC-32C), followed by a bloom filter block, a range-tombstone block, a
** properties block, an index block and a fixed-size footer carrying the
** magic number and format version. Every byte is described in
** doc/format.md; the offset constants live in sst.c's header comment.
**
** This header is the contract between the file format (sst.c, block.c,
** bloom.c, cache.c) and the LSM that uses it (db.c, version.c, compact.c).
*/
#ifndef WCS_SST_H
#define WCS_SST_H

#include <stddef.h>
#include <stdint.h>

#include "storage/env.h"
#include "storage/iter.h"
#include "storage/util.h"

typedef struct wcs_cache wcs_cache;

/* ---- block cache: LRU over decompressed blocks, keyed by (file, offset),
** with a byte budget; thread-safe; shared by every reader of one store. */
int wcs_cache_new(size_t nBudget, wcs_cache **ppCache);
void wcs_cache_free(wcs_cache *);
/* Counters for stats: bytes held, hits, misses. */
void wcs_cache_stats(wcs_cache *, uint64_t *pnBytes, uint64_t *pnHit,
                     uint64_t *pnMiss);
/* Drop every block of one file (after the file is deleted). */
void wcs_cache_evict_file(wcs_cache *, uint64_t iFile);

/* ---- writing */
typedef struct sst_options {
  int nBlockSize;   /* target uncompressed data block size, 4096..65536 */
  int nRestart;     /* keys between restart points; default 16 */
  int iZstdLevel;   /* 0 = store blocks raw */
  int nBloomBits;   /* bits per key; 0 = no bloom block */
  int (*xBloomPrefix)(const void *pKey, int nKey); /* see wcs_options */
} sst_options;

/* Range tombstone: user keys k with start <= k < end written at seq or
** earlier are deleted for readers at snapshots >= seq. nEnd==0 && pEnd==NULL
** means "to the end of the key space". */
typedef struct sst_rangedel {
  const uint8_t *pStart; size_t nStart;
  const uint8_t *pEnd;   size_t nEnd; /* pEnd NULL: unbounded */
  uint64_t seq;
} sst_rangedel;

/* What a finished file holds; the manifest records it. Key buffers are
** malloc'd and owned by the struct (sst_meta_clear frees them). */
typedef struct sst_meta {
  uint64_t iFile;     /* file number (name: %06llu.sst) */
  uint64_t nBytes;    /* file size */
  uint64_t nEntries;  /* internal keys */
  uint64_t nRawBytes; /* keys + values before compression */
  uint64_t nRangeDel; /* range tombstones */
  uint8_t *pSmallest; size_t nSmallest; /* smallest internal key (or the
                                        ** smallest tombstone start, as an
                                        ** ikey with seq max) */
  uint8_t *pLargest;  size_t nLargest;  /* largest internal key, covering
                                        ** tombstone ends too */
  uint64_t minSeq, maxSeq;
} sst_meta;
void sst_meta_clear(sst_meta *);

typedef struct sst_builder sst_builder;
int sst_builder_new(wcs_env *, const char *zPath, uint64_t iFile,
                    const sst_options *, sst_builder **pp, char **pzErr);
/* Add an entry; internal keys strictly increasing in internal-key order. */
int sst_builder_add(sst_builder *, const uint8_t *pIKey, size_t nIKey,
                    const uint8_t *pVal, size_t nVal, char **pzErr);
/* Add a range tombstone (any order; the builder sorts them). */
int sst_builder_add_rangedel(sst_builder *, const sst_rangedel *,
                             char **pzErr);
/* Bytes written or buffered so far (for splitting compaction output). */
uint64_t sst_builder_size(const sst_builder *);
uint64_t sst_builder_entries(const sst_builder *);
/* Write the remaining blocks and footer, fsync, close; fill *pMeta.
** Frees the builder whatever the result. */
int sst_builder_finish(sst_builder *, sst_meta *pMeta, char **pzErr);
/* Give up: close and delete the partial file. Frees the builder. */
void sst_builder_abandon(sst_builder *);

/* ---- reading */
typedef struct sst_reader sst_reader;
/* Open a file: reads and verifies footer, index, bloom, range tombstones
** and properties (CRC-checked); data blocks are read lazily via the cache.
** Corruption returns WCS_CORRUPT with file name and offset in *pzErr. */
int sst_reader_open(wcs_env *, const char *zPath, uint64_t iFile,
                    uint64_t nFileSize, wcs_cache *, sst_reader **pp,
                    char **pzErr);
void sst_reader_close(sst_reader *);

/* Bloom probe with a key or a bloom prefix (as produced by xBloomPrefix).
** Returns 0 only if no key of the file has it; 1 = maybe (or no filter). */
int sst_reader_may_contain(const sst_reader *, const void *p, size_t n);

/* The file's range tombstones, sorted by start (borrowed; valid until
** sst_reader_close). */
void sst_reader_rangedels(const sst_reader *, const sst_rangedel **paDel,
                          int *pnDel);

/* An iterator over the file's entries (internal keys). bFillCache 0 means
** blocks read for it are not inserted into the cache (long scans). */
int sst_reader_iter(sst_reader *, int bFillCache, wcs_iiter **ppIter,
                    char **pzErr);

/* Approximate byte offset in the file where user key would be found
** (from the index; no data block reads). */
uint64_t sst_reader_approx_offset(const sst_reader *, const uint8_t *pUKey,
                                  size_t nUKey);
/* Call x for each index entry's separator user key with its block offset
** (for sampling the key space). A nonzero return from x stops. */
int sst_reader_index_keys(const sst_reader *, void *pCtx,
                          int (*x)(void *pCtx, const uint8_t *pUKey,
                                   size_t nUKey, uint64_t iOff));
/* Properties recorded at build time. */
void sst_reader_props(const sst_reader *, uint64_t *pnEntries,
                      uint64_t *pnRawBytes, uint64_t *pnBytes);

/* ---- CRC-32C (Castagnoli), hardware-accelerated where the CPU has it. */
uint32_t wcs_crc32c(uint32_t crc, const void *p, size_t n);
/* Masked CRC as stored in files (LevelDB's rotation+constant), so a CRC of
** data that itself contains CRCs stays well distributed. */
static inline uint32_t wcs_crc_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
static inline uint32_t wcs_crc_unmask(uint32_t m) {
  uint32_t r = m - 0xa282ead8u;
  return (r >> 17) | (r << 15);
}

#endif /* WCS_SST_H */
