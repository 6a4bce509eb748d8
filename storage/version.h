/*
** version.h — which sorted files make up the store, by level, and the
** manifest that records every change to that set.
**
** A version is an immutable, reference-counted list of files per level:
** level 0 holds whole flushed memtables (ranges may overlap; newest
** first); levels 1..WCS_NLEVEL-1 hold runs of files with disjoint key
** ranges, sorted by key. Readers pin a version; a change builds a new
** version from the current one plus a version edit, appends the edit to
** the manifest (fsync), and only then makes it current, so the set of live
** files changes atomically. A file whose last version goes away is closed,
** and deleted if no later version has it.
**
** The manifest is a log file (framing in wal.h) of version edits; the
** CURRENT file names it. Formats: doc/format.md.
**
** Locking: every function that takes a wcs_vset, except where noted, is
** called with the store's mutex held (db.c); file and version reference
** counts are atomic and may be dropped anywhere.
*/
#ifndef WCS_VERSION_H
#define WCS_VERSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/env.h"
#include "storage/iter.h"
#include "storage/merge.h"
#include "storage/sst.h"
#include "storage/util.h"

#define WCS_NLEVEL 7 /* level 0 .. 6 */
/* Trailer of the bound keys of range tombstones in file ranges: sorts
** before every real entry of the same user key. */
#define WCS_IKEY_SENTINEL (~(uint64_t)0)

/* Manifest edit tags (varint tag, then the fields listed). */
#define VE_FORMAT    1 /* varint format version (VE_FORMAT_VERSION) */
#define VE_LOG       2 /* varint: WAL files numbered below are obsolete */
#define VE_NEXT_FILE 3 /* varint: next unused file number */
#define VE_LAST_SEQ  4 /* varint: every seq <= this is in the files */
#define VE_DEL_FILE  5 /* varint level, varint file number */
/* VE_ADD_FILE: varint level, number, bytes, entries, raw bytes, range
** tombstones, min seq, max seq, flags (bit 0: unbounded above), smallest
** (varint length + internal key), largest (same). */
#define VE_ADD_FILE 6
/* Live logs (format 2): a WAL file the store has started writing to
** (VE_LOG_LIVE), or has sealed (VE_LOG_SEAL: no record is appended after
** the length given; with a sync mode other than OFF the file was synced
** to that length before the edit was written). A log named by either is
** live until VE_LOG moves past it; at open it must exist and, if sealed,
** read cleanly to its sealed length. */
#define VE_LOG_LIVE 7 /* varint log number */
#define VE_LOG_SEAL 8 /* varint log number, varint length in bytes */
/* Clean close (format 3): the store was closed while writing to this log,
** which then held the length given in whole synced records. The log stays
** live (a later open may append to it), but must hold at least that many
** bytes of whole records: a cut there is not a torn tail. */
#define VE_LOG_CLOSED 9 /* varint log number, varint length in bytes */
/* Format 1: tags 1..6. Format 2 adds tags 7 and 8, format 3 tag 9; a
** reader of an older format would take the new tags for corruption, so a
** manifest declares the format of the tags it may hold and such a reader
** refuses it with WCS_PROTOCOL instead. */
#define VE_FORMAT_VERSION 3

typedef struct wcs_vset wcs_vset;

/* One sorted file. */
typedef struct wcs_fmeta {
  _Atomic int nRef;        /* versions + edits + iterators holding it */
  uint64_t iFile;          /* file number: %06llu.sst */
  uint64_t nBytes;         /* file size */
  uint64_t nEntries;       /* internal keys */
  uint64_t nRawBytes;      /* key + value bytes before compression */
  uint64_t nRangeDel;      /* range tombstones */
  uint64_t minSeq, maxSeq; /* seq range of entries and tombstones */
  uint8_t *pSmallest;      /* smallest internal key (tombstone starts use
                           ** the sentinel trailer ~0), owned */
  size_t nSmallest;        /* bytes at pSmallest, >= 8 */
  uint8_t *pLargest;       /* largest internal key; an exclusive tombstone
                           ** end E is (E, sentinel ~0), which sorts before
                           ** every real entry of E; owned */
  size_t nLargest;         /* bytes at pLargest, >= 8 */
  int bUnbounded;          /* the range runs to the end of the key space */
  uint64_t aBound[4];      /* bytes [0, 8) and [8, 16) of the smallest and
                           ** then the largest user key as wcs_key_slice
                           ** numbers: range tests compare these before
                           ** reading the keys (set with the keys) */
  sst_reader *pReader;     /* open reader (owned), set when added */
  wcs_frags frags;         /* the reader's range tombstones as disjoint
                           ** fragments (keys borrowed from the reader),
                           ** built when it opens */
  int bObsolete;           /* no longer in the current version: delete the
                           ** file when the last reference goes */
  int bCompacting;         /* an input of a running compaction (db mutex) */
  wcs_vset *pVs;           /* for deletion and cache eviction */
} wcs_fmeta;

typedef struct wcs_version {
  _Atomic int nRef;       /* readers, super versions, the set's current */
  wcs_vset *pVs;          /* owning set */
  int anFile[WCS_NLEVEL]; /* files per level */
  wcs_fmeta **aaFile[WCS_NLEVEL]; /* level 0 newest first; others by key */
  uint64_t anBytes[WCS_NLEVEL];   /* file bytes per level */
  /* every file's range tombstones as one set of fragments, each with the
  ** seqs of all that cover it, made on first need (version_frags) */
  _Atomic int bFrags;      /* made */
  pthread_mutex_t fragsMu; /* making it */
  wcs_frags frags;
  sst_rangedel *aFragDel; /* what they were made of (keys borrowed from
                          ** the files' own fragments) */
  uint64_t maxDelSeq;     /* the newest of those tombstones' seqs */
} wcs_version;

typedef struct vedit_add {
  int iLevel;       /* 0 .. WCS_NLEVEL-1 */
  wcs_fmeta *pMeta; /* a reference owned by the edit */
} vedit_add;
typedef struct vedit_del {
  int iLevel;     /* 0 .. WCS_NLEVEL-1 */
  uint64_t iFile; /* file number */
} vedit_del;

/* A log (WAL file) the manifest tracks: live, and sealed, closed or
** neither. A seal wins over a close, and either over a plain live mark. */
typedef struct vedit_wal {
  uint64_t iNum;    /* log number: %06llu.log, >= 1 */
  int bSealed;      /* sealed: nothing is appended after nSealed bytes */
  uint64_t nSealed; /* when bSealed: bytes of whole records the file must
                    ** hold at least (0 with SYNC OFF: none promised) */
  int bClosed;      /* not sealed, and the store was closed cleanly while
                    ** writing it (VE_LOG_CLOSED): it may grow after nClosed
                    ** bytes, never shrink below them */
  uint64_t nClosed; /* when bClosed: bytes of whole synced records it held
                    ** at that close; the file must hold at least these */
} vedit_wal;

/* The bytes of whole records a tracked log must hold at least: its seal,
** else its last clean close, else 0 (only its existence is promised). */
static inline uint64_t vedit_wal_min_bytes(const vedit_wal *w) {
  return w->bSealed ? w->nSealed : (w->bClosed ? w->nClosed : 0);
}

typedef struct wcs_vedit {
  int iFormat;        /* VE_FORMAT read by vedit_decode, 0: absent (never
                      ** encoded: vset_new_manifest writes it) */
  int bLog;           /* iLog is set */
  uint64_t iLog;      /* WAL files below this number are obsolete */
  int bNextFile;      /* iNextFile is set */
  uint64_t iNextFile; /* next unused file number */
  int bLastSeq;       /* lastSeq is set */
  uint64_t lastSeq;   /* every seq <= this is in the files */
  int nAdd;           /* entries in aAdd */
  vedit_add *aAdd;    /* files added, malloc'd */
  int nDel;           /* entries in aDel */
  vedit_del *aDel;    /* files removed, malloc'd */
  int nWal;           /* entries in aWal */
  vedit_wal *aWal;    /* logs made live, sealed or closed (VE_LOG_LIVE,
                      ** VE_LOG_SEAL, VE_LOG_CLOSED), malloc'd */
} wcs_vedit;

void vedit_clear(wcs_vedit *);
/* Add a file (takes over the caller's reference on p). */
int vedit_add_file(wcs_vedit *, int iLevel, wcs_fmeta *p);
int vedit_del_file(wcs_vedit *, int iLevel, uint64_t iFile);
/* Record log iNum as live (VE_LOG_LIVE), as sealed at nSealed bytes
** (VE_LOG_SEAL), or as live and holding nClosed bytes of whole synced
** records at a clean close of the store (VE_LOG_CLOSED). */
int vedit_log_live(wcs_vedit *, uint64_t iNum);
int vedit_log_seal(wcs_vedit *, uint64_t iNum, uint64_t nSealed);
int vedit_log_closed(wcs_vedit *, uint64_t iNum, uint64_t nClosed);
/* Serialize / parse (parse returns WCS_CORRUPT naming zFile and iOff;
** parsed adds carry fresh fmeta without readers). */
int vedit_encode(const wcs_vedit *, wcs_buf *pOut);
int vedit_decode(wcs_vedit *, const uint8_t *p, size_t n, const char *zFile,
                 uint64_t iOff, char **pzErr);

/* ---- files */
/* A new fmeta (one reference) describing a finished file. */
int fmeta_new(wcs_vset *, const sst_meta *, wcs_fmeta **pp);
void fmeta_ref(wcs_fmeta *);
void fmeta_unref(wcs_fmeta *);
/* Open the file's reader (if not yet open); any thread. */
int fmeta_open(wcs_fmeta *, char **pzErr);
/* Path of file number iFile in the store ("<dir>/000012.sst"), malloc'd. */
char *vset_file_path(const wcs_vset *, uint64_t iFile, const char *zExt);

/* For a store opened beside a writer in another process (wcs_options
** bFollow): *pbMoved = 1 when the state on disk may differ from what
** vset_open read — CURRENT names another manifest, or the manifest's
** length is not the length it had when read (an edit was appended since,
** or one being appended then was finished; a torn tail left by a writer
** that stopped stays as it is). 0 when it is the same. */
int vset_moved_on(wcs_vset *, int *pbMoved, char **pzErr);
/* The bytes of whole edits vset_open read from the manifest (its number:
** vset_manifest_number). */
uint64_t vset_manifest_end(const wcs_vset *);
/* The manifest's size when it was read, a torn tail included: a file of
** another size means a writer went on (vset_moved_on, followers). */
uint64_t vset_manifest_file_size(const wcs_vset *);

/* ---- the version set */
/*
** Open the version set of the store in zDir: read CURRENT and replay the
** manifest it names (a torn tail of the manifest is ignored; any other bad
** byte is WCS_CORRUPT naming the file and offset) and open every live
** file. If CURRENT is missing and bCreate, start empty. pOpt and pCache
** are borrowed for the set's lifetime.
*/
int vset_open(wcs_env *, const char *zDir, const wcs_options *pOpt,
              wcs_cache *pCache, int bReadOnly, int bCreate, wcs_vset **pp,
              char **pzErr);
/* Close: drops the current version (its files close when unreferenced). */
void vset_close(wcs_vset *);

/*
** Start a fresh manifest holding the whole current state (files, log
** numbers and the live logs with their seals), point CURRENT at
** it (write to a temporary file, fsync, rename, fsync the directory) and
** delete the old one.
*/
int vset_new_manifest(wcs_vset *, char **pzErr);
/*
** Make the manifest writable at a writable open: append to the one just
** read when it ended with a whole record and holds at most
** VSET_REUSE_BYTES and declares the current format (no write, no fsync:
** opening a store costs nothing on disk), else vset_new_manifest, which
** also keeps manifests short and upgrades a manifest of an older format
** (so that no edit with a newer tag lands in a manifest that declares a
** format without it).
*/
/*
** Write the manifest of a copy of the store into directory zDir of pEnv
** (the copy's files are the caller's to place there): MANIFEST-<iManifest>
** holding version v's files, no live log, the next file number after
** iManifest (which must be above every file number of v) and last
** sequence lastSeq (at least every sequence in v's files); then CURRENT
** naming it. Both synced. For wcs_db_checkpoint().
*/
int vset_write_copy_manifest(wcs_env *pEnv, const char *zDir,
                             const wcs_version *v, uint64_t iManifest,
                             uint64_t lastSeq, char **pzErr);
#define VSET_REUSE_BYTES (1u << 20)
int vset_open_manifest(wcs_vset *, char **pzErr);

/*
** Apply an edit: build current + edit, append the edit to the manifest and
** fsync it, then make the result current. Fills in log/next-file/last-seq
** from the set when the edit leaves them unset. The edit's file references
** pass to the version set. On failure nothing changes, and the manifest is
** refused for later edits (reopen the store).
*/
int vset_apply(wcs_vset *, wcs_vedit *, char **pzErr);

wcs_version *vset_current(wcs_vset *); /* borrowed */
uint64_t vset_new_file_number(wcs_vset *);
uint64_t vset_log(const wcs_vset *);
uint64_t vset_last_seq(const wcs_vset *);
void vset_set_last_seq(wcs_vset *, uint64_t);
uint64_t vset_manifest_number(const wcs_vset *);
/* The manifest in use and its size in bytes now (the synced part of what
** edits appended to a writable one; else what vset_open read). Callers
** hold the lock that vset_apply runs under. */
void vset_manifest_pos(const wcs_vset *, uint64_t *piManifest,
                       uint64_t *pnBytes);
/* Path of manifest iManifest in the store's directory (malloc'd; NULL if
** out of memory). */
char *vset_manifest_path(const wcs_vset *, uint64_t iManifest);
uint64_t vset_next_file(const wcs_vset *);
void vset_mark_file_used(wcs_vset *, uint64_t iFile);
const char *vset_dir(const wcs_vset *);
wcs_env *vset_env(const wcs_vset *);
const wcs_options *vset_options(const wcs_vset *);
wcs_cache *vset_cache(const wcs_vset *);

/*
** The logs the manifest tracks as live, numbers >= vset_log, ascending:
** returns their count and points *pa at them (borrowed until the next
** vset_apply). None for a store whose manifest has format 1 and no edit
** of a newer binary since.
*/
int vset_live_logs(const wcs_vset *, const vedit_wal **pa);
/* The tracked entry of log iNum, or NULL (borrowed as above). */
const vedit_wal *vset_log_tracked(const wcs_vset *, uint64_t iNum);

/* Is file number iFile named by the current version? */
int vset_file_live(const wcs_vset *, uint64_t iFile);

/* Round-robin cursor of level compactions (user key, malloc'd copy). */
wcs_buf *vset_compact_ptr(wcs_vset *, int iLevel);

/* ---- versions */
void version_ref(wcs_version *);
void version_unref(wcs_version *); /* any thread */

/* Target size in bytes of level i >= 1. */
uint64_t version_level_target(const wcs_options *, int iLevel);

/* Does file f possibly hold user key k? (by its key range) */
int fmeta_may_hold(const wcs_fmeta *, const uint8_t *pKey, size_t nKey);
/* Does file f's range end before user key lo (lo NULL: never)? A file
** ending at (lo, sentinel), a range tombstone clipped at lo, does. */
int fmeta_ends_before(const wcs_fmeta *, const uint8_t *pLo, size_t nLo);
/* Does file f's range overlap user keys [lo, hi)? lo NULL: from the start;
** hi NULL: to the end. */
int fmeta_overlaps(const wcs_fmeta *, const uint8_t *pLo, size_t nLo,
                   const uint8_t *pHi, size_t nHi);

/*
** Point lookup in the files of v at snapshot snap, newest data first.
** *pMaxDel carries in and out the newest range tombstone seq (<= snap)
** covering the key seen so far (memtables are searched first). On WCS_OK,
** *pbFound says whether a version of the key was found; if so *pType is
** WCS_KT_PUT with a malloc'd copy of the value in *ppVal and *pnVal, or
** WCS_KT_DELETE (also when a newer range tombstone covers it). Errors
** (I/O, corruption) name the file.
*/
int version_get(wcs_version *v, const uint8_t *pKey, size_t nKey, uint64_t snap,
                uint64_t *pMaxDel, int *pbFound, int *pType, void **ppVal,
                size_t *pnVal, char **pzErr);

/*
** The children a user iterator reads from the files of one version, kept
** from one target (bounds and bloom prefix) to the next so that moving the
** iterator to another row re-uses them: slot i < anFile[0] reads level-0
** file i, slot anFile[0] + L - 1 level L >= 1 (one file's iterator, or a
** concatenating one when the target spans several files of the level).
** A child that the current target leaves out stays open (off), so a later
** target that selects its file again finds the file's index and filter
** pinned and its last data block loaded.
*/
typedef struct wcs_vslot {
  wcs_iiter *p;          /* the child (owned), or NULL */
  const wcs_fmeta *pFile; /* the one file p reads; NULL: a level iterator */
  int bOn;               /* p is part of the current target */
} wcs_vslot;

typedef struct wcs_viters {
  wcs_version *pVersion; /* the slots' version (not referenced: the caller
                         ** holds it while the slots live); NULL: none */
  int bFill;             /* bFillCache of the children */
  int nSlot;             /* anFile[0] + WCS_NLEVEL - 1 of pVersion */
  wcs_vslot *aSlot;      /* the slots */
  wcs_fmeta **aSel;      /* scratch: one level's files in the target */
  int nSelAlloc;         /* entries aSel has room for */
} wcs_viters;

/*
** Aim *p at the files of v that may hold keys in [lo, hi) (NULL:
** unbounded); pPrefix/nPrefix, when nonzero, switches off files whose
** bloom filter rules the prefix out. *p starts zeroed; when it was aimed
** at another version or with another bFillCache, its children are closed
** first. Only when a level's target spans several files, or a slot gets
** another file, is an iterator made; the slots' children are the ones
** with bOn set. On failure the slots stay valid for
** version_iters_clear, which closes every child (a zeroed *p after it).
*/
int version_iters_target(wcs_version *v, wcs_viters *p, const uint8_t *pLo,
                         size_t nLo, const uint8_t *pHi, size_t nHi,
                         const uint8_t *pPrefix, size_t nPrefix,
                         int bFillCache, char **pzErr);
void version_iters_clear(wcs_viters *p);

/* 1 when no file of v can hold a key starting with pPre: every file whose
** range meets those keys has a bloom filter by prefix (the store's
** xBloomPrefix gives nPre for pPre) that rules pPre out. 0 when one may
** hold such a key, or when it cannot tell (a prefix of more than 256
** bytes, or of 0xFF bytes only). Probes pin each file's filter as a read
** would. */
int version_prefix_absent(wcs_version *v, const uint8_t *pPre, size_t nPre);

/* The range tombstones of every file of v as one set of fragments (each
** with the seqs of every tombstone covering it, newest first; keys
** borrowed while v is referenced), and the newest of their seqs: made once
** per version, on the first call, so that an iterator over many keys
** finds what covers a key by one search whatever the number of
** tombstones, instead of sorting those in its bounds each time it is
** made. *ppFrags is NULL when no file has any in [lo, hi) (pHi NULL: no
** upper bound). WCS_OK or WCS_NOMEM. Thread-safe. */
int version_frags(wcs_version *v, const uint8_t *pLo, size_t nLo,
                  const uint8_t *pHi, size_t nHi, const wcs_frags **ppFrags,
                  uint64_t *pMaxSeq);

/* An iterator over files with disjoint, ascending key ranges (a level
** >= 1): it copies the array and takes its own file references. */
int level_iter_new(wcs_fmeta **aFile, int nFile, int bFillCache,
                   wcs_iiter **pp);

#endif /* WCS_VERSION_H */
