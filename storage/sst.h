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
** doc/format.md; the footer's offset constants are below, the block
** layout's in block.h, the bloom filter's in bloom.h.
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

/* ---- file layout: data blocks | bloom | range tombstones | properties |
** index | footer. Each block is followed by a block trailer (block.h). The
** footer is the last WCS_SST_FOOTER bytes; all integers little-endian. */
#define WCS_SST_FOOTER        80 /* bytes */
#define WCS_SST_FOOT_BLOOM    0  /* u64 offset, u64 stored size of the block */
#define WCS_SST_FOOT_RANGEDEL 16 /* handle of the range-tombstone block */
#define WCS_SST_FOOT_PROPS    32 /* handle of the properties block */
#define WCS_SST_FOOT_INDEX    48 /* handle of the index block */
#define WCS_SST_FOOT_VERSION  64 /* u32 format version */
#define WCS_SST_FOOT_CRC      68 /* u32 masked CRC-32C of bytes [0, 68) */
#define WCS_SST_FOOT_MAGIC    72 /* WCS_SST_MAGIC, 8 bytes */
#define WCS_SST_VERSION       1 /* data blocks without suffixes */
#define WCS_SST_VERSION_SUFFIX 2 /* data blocks share suffixes (block.h) */
#define WCS_SST_VERSION_SEEK   3 /* ... and may hold seek points (block.h) */
#define WCS_SST_MAGIC         "\x89WST\r\n\x1a\n" /* 89 57 53 54 0d 0a 1a 0a */

/* Properties block tags (tag varint, length varint, value; integers are
** varints inside the value). */
#define WCS_SST_PROP_ENTRIES   1 /* internal keys */
#define WCS_SST_PROP_RAWBYTES  2 /* key + value bytes before compression */
#define WCS_SST_PROP_BLOCKS    3 /* data blocks */
#define WCS_SST_PROP_MINSEQ    4 /* smallest seq of entries and tombstones */
#define WCS_SST_PROP_MAXSEQ    5 /* largest seq */
#define WCS_SST_PROP_RANGEDELS 6 /* range tombstones */
#define WCS_SST_PROP_SMALLEST  7 /* smallest internal key (bytes) */
#define WCS_SST_PROP_LARGEST   8 /* largest internal key (bytes) */
#define WCS_SST_PROP_FLAGS     9 /* bit 0: a tombstone is unbounded above */
#define WCS_SST_PROP_MANIFEST  10 /* manifest in use when the file was begun */
#define WCS_SST_PROP_MANBYTES  11 /* ... and its size in bytes then */
#define WCS_SST_PROP_NOTE     32 /* the file note (bytes; wcs_options) */

/* ---- block cache: CLOCK (second chance) over decompressed blocks, keyed
** by (file, offset), with a byte budget; thread-safe; shared by every
** reader of one store (cache.c). */
int wcs_cache_new(size_t nBudget, wcs_cache **ppCache);
void wcs_cache_free(wcs_cache *);
/* Change the budget to nTotal bytes, split evenly among the shards (their
** number stays what wcs_cache_new chose from its budget). A shard over
** its new share evicts idle entries until it fits; entries in use stay,
** charged, until released (as after an insert). The store calls this as
** its memtables grow and shrink (doc/storage.md, "Memory budget"). */
void wcs_cache_set_budget(wcs_cache *, size_t nTotal);
/* Counters for stats: bytes held (blocks, indexes and filters), hits and
** misses of data block lookups. */
void wcs_cache_stats(wcs_cache *, uint64_t *pnBytes, uint64_t *pnHit,
                     uint64_t *pnMiss);
/* Hits and misses of index-and-filter lookups (one per file per read). */
void wcs_cache_meta_stats(wcs_cache *, uint64_t *pnHit, uint64_t *pnMiss);
/* Drop every block of one file (after the file is deleted). */
void wcs_cache_evict_file(wcs_cache *, uint64_t iFile);

/* The cache also bounds the sorted files its readers keep open: at most
** nMax descriptors (<= 0: WCS_DEF_MAX_FILES), closed in CLOCK order
** (roughly least recently used first) and reopened by the next read that
** misses the cache; a descriptor in use by a read at that moment is closed
** once released. */
#define WCS_DEF_MAX_FILES 1000
void wcs_cache_set_max_files(wcs_cache *, int nMax);
/* Whether long forward scans of this cache's readers decompress the blocks
** ahead of them on a worker thread (sst.c, "Prefetch"); on by default
** where there are two cores or more. Takes effect for iterators that have
** not started prefetching yet. */
void wcs_cache_set_prefetch(wcs_cache *, int bOn);
/* Blocks the worker has decoded so far (each one taken by its scan, or
** dropped when the scan moved elsewhere). */
uint64_t wcs_cache_prefetched(wcs_cache *);
/* Descriptors open, readers (open or not), bytes the readers hold outside
** the cache (their structs, paths, bounds, range tombstones), and how
** many times a closed descriptor was reopened. Any pointer may be NULL. */
void wcs_cache_file_stats(wcs_cache *, int *pnOpen, int *pnReaders,
                          uint64_t *pnHeld, uint64_t *pnReopen);

/* ---- writing */
typedef struct sst_options {
  int nBlockSize; /* target uncompressed data block size in bytes (the store
                  ** uses 4096..65536); 0 = 8192; clamped to 64..16 MiB */
  int nRestart;   /* keys between restart points; <= 0: 16 */
  int nRestartBytes; /* and at most this many bytes of entries (0: no
                     ** limit; block.h) */
  int iZstdLevel; /* zstd level for data, index, tombstone blocks; 0 = raw */
  int nBloomBits; /* bits per key; 0 = no filter (an empty bloom block) */
  int (*xBloomPrefix)(const void *pKey, int nKey); /* see wcs_options */
  int bSuffix;    /* data block entries share suffixes: format version 2
                  ** (the store always sets it; 0 writes version 1) */
  int nSeekEvery; /* with bSuffix: a seek point in each run of this many
                  ** entries of a restart interval where one qualifies,
                  ** format version 3 (the store uses 16; 0: none) */
  /* the file note's summary (see wcs_options); xNoteBegin NULL: none */
  void *(*xNoteBegin)(void *pNoteCtx);
  void (*xNoteAdd)(void *pSum, const void *pKey, size_t nKey, int bDelete);
  int (*xNoteEnd)(void *pSum, int bAbandon, void **ppOut, size_t *pnOut);
  void *pNoteCtx;
  /* the store's manifest when the file is begun (number, bytes), kept as
  ** properties so that an open can tell a file an unfinished job left
  ** from one that a manifest cut short no longer names (db.c,
  ** checkOrphans); iManifest 0: none */
  uint64_t iManifest, nManifestBytes;
  /* a block cache that the data blocks written go into while it has room
  ** for them without evicting any block (the blocks are the ones readers
  ** would decompress, with their seek aids), so that a file just flushed,
  ** compacted or ingested is read warm; NULL: none */
  wcs_cache *pWarm;
} sst_options;

/* Range tombstone: user keys k with start <= k < end written at seq or
** earlier are deleted for readers at snapshots >= seq. nEnd==0 && pEnd==NULL
** means "to the end of the key space". */
typedef struct sst_rangedel {
  const uint8_t *pStart; /* first user key deleted */
  size_t nStart;         /* bytes at pStart */
  const uint8_t *pEnd;   /* first user key not deleted; NULL: unbounded */
  size_t nEnd;           /* bytes at pEnd */
  uint64_t seq;          /* sequence number of the delete, < 2^56 */
} sst_rangedel;

/* What a finished file holds; the manifest records it. Key buffers are
** malloc'd and owned by the struct (sst_meta_clear frees them). */
typedef struct sst_meta {
  uint64_t iFile;     /* file number (name: %06llu.sst) */
  uint64_t nBytes;    /* file size */
  uint64_t nEntries;  /* internal keys */
  uint64_t nRawBytes; /* keys + values before compression */
  uint64_t nRangeDel; /* range tombstones */
  uint8_t *pSmallest; /* smallest internal key, or the smallest tombstone
                      ** start as an ikey with seq max if smaller */
  size_t nSmallest;   /* bytes at pSmallest; 0: empty file */
  uint8_t *pLargest;  /* largest internal key, or the largest tombstone end
                      ** as an ikey with seq max if larger */
  size_t nLargest;    /* bytes at pLargest */
  uint64_t minSeq;    /* smallest seq of entries and tombstones */
  uint64_t maxSeq;    /* largest seq */
  int bUnbounded;     /* a range tombstone runs to the end of the key
                      ** space: the file's range extends past pLargest */
} sst_meta;
void sst_meta_clear(sst_meta *);

typedef struct sst_builder sst_builder;
int sst_builder_new(wcs_env *, const char *zPath, uint64_t iFile,
                    const sst_options *, sst_builder **pp, char **pzErr);
/* Add an entry; internal keys strictly increasing in internal-key order. */
int sst_builder_add(sst_builder *, const uint8_t *pIKey, size_t nIKey,
                    const uint8_t *pVal, size_t nVal, char **pzErr);
/* Add a range tombstone (any order; the builder sorts them). */
int sst_builder_add_rangedel(sst_builder *, const sst_rangedel *, char **pzErr);
/* Bytes written or buffered so far (for splitting compaction output). */
uint64_t sst_builder_size(const sst_builder *);
/*
** Splitting compaction output: 1 once the file reaches nFileBytes, or once
** its index and bloom filter, decoded, would take WCS_SST_META_CUT bytes
** or more. The second rule keeps every file's cache entry (the decoded
** index and filter are one block-cache entry, see doc/storage.md) well
** below a cache shard whatever the compression ratio: data that
** compresses 30-fold puts millions of keys in a file of a few MiB, and an
** entry larger than its shard would be evicted, then read and decoded
** again, at every release. nFileBytes 0: never (level-0 flushes).
*/
#define WCS_SST_META_CUT (1u << 20)
int sst_builder_full(const sst_builder *, uint64_t nFileBytes);
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
** With a cache, the decoded index and bloom filter become one cache entry
** (charged to its budget, evictable while no read pins it, read and
** checked again when needed) and the descriptor joins the cache's file
** table; the reader itself keeps only a small fixed struct, the file's
** bounds and its range tombstones. Without a cache (pCache NULL) it keeps
** the index, filter and descriptor until closed.
** Corruption returns WCS_CORRUPT with file name and offset in *pzErr, here
** or when a later read loads the index or filter again. */
int sst_reader_open(wcs_env *, const char *zPath, uint64_t iFile,
                    uint64_t nFileSize, wcs_cache *, sst_reader **pp,
                    char **pzErr);
void sst_reader_close(sst_reader *);

/* Bloom probe with a key or a bloom prefix (as produced by xBloomPrefix).
** Returns 0 only if no key of the file has it; 1 = maybe (or no filter). */
int sst_reader_may_contain(const sst_reader *, const void *p, size_t n);

/* The same, with a hash from sst_bloom_hash() computed once per lookup and
** reused for every file probed. */
uint64_t sst_bloom_hash(const void *p, size_t n);
int sst_reader_may_contain_hash(const sst_reader *, uint64_t h);
/* 1 if the file's filter holds xBloomPrefix prefixes (probe with those
** only), 0 if it holds whole user keys or there is no filter. */
int sst_reader_bloom_prefixed(const sst_reader *);
/* The file's note (WCS_SST_PROP_NOTE) and its bytes in *pn; NULL: none. */
const uint8_t *sst_reader_note(const sst_reader *, size_t *pn);

/* The file's range tombstones, sorted by start (borrowed; valid until
** sst_reader_close). */
void sst_reader_rangedels(const sst_reader *, const sst_rangedel **paDel,
                          int *pnDel);

/* An iterator over the file's entries (internal keys). bFillCache 0 means
** blocks read for it are not inserted into the cache (long scans). */
int sst_reader_iter(sst_reader *, int bFillCache, wcs_iiter **ppIter,
                    char **pzErr);
/* The same for a prefix scan: with bUseHash and a filter of xBloomPrefix
** prefixes, probe it with hPrefix first (one pin of the index and filter,
** which the iterator keeps): *ppIter is NULL (and WCS_OK returned) when no
** key of the file has the prefix. */
int sst_reader_iter_prefix(sst_reader *, int bFillCache, int bUseHash,
                           uint64_t hPrefix, wcs_iiter **ppIter, char **pzErr);

/* Prepare an iterator made by sst_reader_iter for a new target (a user
** iterator moved to other bounds keeps it): drops the readahead buffer of
** an earlier scan, and with bUseHash returns 0 if the file's filter holds
** xBloomPrefix prefixes and rules out the one hashed to hPrefix; else 1
** (also when the index and filter cannot be read: the iterator's next
** move reports that). Pins the index and filter for the iterator's life
** if not yet pinned, so that probing a kept iterator again for another
** prefix costs no cache lookup. */
int sst_iter_retarget(wcs_iiter *pIter, int bUseHash, uint64_t hPrefix);
/* Bloom hashes of one point lookup, computed once and reused for every
** file probed: hKey of the user key, hPrefix of its xBloomPrefix prefix
** (hasPrefix 0: the key has no prefix in the filters). */
typedef struct sst_probe {
  uint64_t hKey;
  uint64_t hPrefix;
  int hasPrefix;
} sst_probe;

/* Point lookup without an iterator (the allocation-free path for reads):
** finds the first entry >= pIKey in internal-key order and, if its user
** key equals pIKey's user key, sets *pbFound = 1 and calls x with it; the
** key and value are borrowed for the duration of the call. A nonzero
** return from x is returned. The bloom filter is not consulted (probe it
** first) and range tombstones are the caller's. Blocks read are cached.
** Thread-safe; x must not call sst_reader_get itself. Corruption returns
** WCS_CORRUPT with file name and offset in *pzErr. */
int sst_reader_get(sst_reader *, const uint8_t *pIKey, size_t nIKey,
                   int *pbFound, void *pCtx,
                   int (*x)(void *pCtx, const uint8_t *pKey, size_t nKey,
                            const uint8_t *pVal, size_t nVal),
                   char **pzErr);
/* The same, after a bloom probe with pProbe (NULL: no probe) under the
** same pin of the index and filter: returns WCS_OK with *pbFound 0 when
** the filter rules the key out. */
int sst_reader_get_probe(sst_reader *, const uint8_t *pIKey, size_t nIKey,
                         const sst_probe *pProbe, int *pbFound, void *pCtx,
                         int (*x)(void *pCtx, const uint8_t *pKey, size_t nKey,
                                  const uint8_t *pVal, size_t nVal),
                         char **pzErr);

/* Approximate byte offset in the file where user key would be found,
** between 0 and sst_reader_data_end(): from a sample of the index the
** reader keeps (sst.c, sst_samp), so it reads no block and touches
** neither the cache nor the heap. Exact (the start of the block that
** may hold the key) for files of at most 32 blocks; otherwise
** interpolated inside one 32nd of the file. Non-decreasing in the key. */
uint64_t sst_reader_approx_offset(const sst_reader *, const uint8_t *pUKey,
                                  size_t nUKey);
/* Call x for each index entry's separator user key with its block offset
** (for sampling the key space). A nonzero return from x stops. */
int sst_reader_index_keys(const sst_reader *, void *pCtx,
                          int (*x)(void *pCtx, const uint8_t *pUKey,
                                   size_t nUKey, uint64_t iOff));
/* First byte after the data blocks: the bytes approx offsets measure. */
uint64_t sst_reader_data_end(const sst_reader *);
/* Properties recorded at build time. */
void sst_reader_props(const sst_reader *, uint64_t *pnEntries,
                      uint64_t *pnRawBytes, uint64_t *pnBytes);
/* Everything the builder reported in sst_meta, read back from the file's
** properties (for checks and repair). *pMeta is filled with fresh copies;
** free with sst_meta_clear. WCS_OK or WCS_NOMEM. */
int sst_reader_meta(const sst_reader *, sst_meta *pMeta);
/* The manifest number and size the builder recorded (sst_options), both
** 0 for a file that has none. */
void sst_reader_manifest_pos(const sst_reader *, uint64_t *piManifest,
                             uint64_t *pnBytes);

/* ---- CRC-32C (Castagnoli), hardware-accelerated where the CPU has it. */
uint32_t wcs_crc32c(uint32_t crc, const void *p, size_t n);
/* Masked CRC as stored in files (LevelDB's rotation+constant), so a CRC of
** data that itself contains CRCs stays well distributed. */
/* The table-driven engine alone (tests compare it with the hardware one),
** and whether the hardware engine is in use (1) or not (0). */
uint32_t wcs_crc32c_portable(uint32_t crc, const void *p, size_t n);
int wcs_crc32c_hw(void);
static inline uint32_t wcs_crc_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
static inline uint32_t wcs_crc_unmask(uint32_t m) {
  uint32_t r = m - 0xa282ead8u;
  return (r >> 17) | (r << 15);
}

#endif /* WCS_SST_H */
