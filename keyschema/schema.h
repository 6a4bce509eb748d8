/*
** schema.h — the row key schema module: the table DDL, the key codecs and
** the constraint → key-range planner. The public surface of keyschema/.
**
** What it does, in three parts:
**
**   1. DDL. ks_parse_args() parses the module arguments of
**        CREATE VIRTUAL TABLE t USING wcs(KEY (...) ..., FAMILY ..., ...)
**      (one clause per argument, as SQLite passes them to xCreate) with a
**      lemon grammar (keyschema/ddl.y) into a ks_schema. ks_schema_text()
**      prints the canonical text, which ks_parse_text() reads back into an
**      equal schema; the catalog stores that text.
**
**   2. Key codecs. ks_key_encode() turns a tuple of key field values into
**      the row key bytes; ks_key_decode() turns row key bytes back into the
**      tuple, strictly (a key that does not conform is an error naming the
**      key). Encodings follow Cloud Bigtable's row key schema byte for byte
**      (delimited_bytes, ordered_code_bytes, singleton; utf8, raw,
**      big_endian_bytes, ordered_code_bytes); DECIMAL(n), REVERSED
**      DECIMAL(n) and SALT are extras. Every encoding is used in Bigtable's
**      "sorted mode": byte order of keys == tuple order, so values that
**      would break that order are rejected on write.
**
**   3. Planning. ks_plan_make() turns per-field SQL constraints (=, IN,
**      ranges, GLOB/LIKE prefixes, IS [NOT] NULL, constraints on _key) into
**      a ks_plan: an ordered, non-overlapping list of key ranges plus, for
**      skip scans, what to seek to within each distinct prefix. The scan
**      layer drives it with ks_plan_start() and ks_plan_check(), which need
**      no knowledge of encodings.
**
** Byte formats, the grammar and the plan kinds are documented in
** doc/keyschema.md. Nothing here touches the store; the module depends on
** storage/util.h (wcs_buf, error helpers) and include/wcs.h only.
**
** Conventions: functions return a WCS_* code (include/wcs.h). On error,
** functions with a `char **pzErr` set *pzErr (if pzErr is not NULL and
** *pzErr is NULL) to a malloc'd message the caller frees with free() or
** wcs_free(). Out-parameters `**ppX` belong to the caller and are freed by
** the matching *_free(), which accepts NULL.
*/
#ifndef WCS_KEYSCHEMA_SCHEMA_H
#define WCS_KEYSCHEMA_SCHEMA_H

#include <stdint.h>

#include "storage/util.h"
#include "wcs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ====================================================================
** Limits
** ==================================================================== */
/* Bytes in a row key, salt byte included (Bigtable's limit). */
#define KS_MAX_KEY            4096
#define KS_MAX_QUALIFIER      16384 /* bytes in a qualifier name (Bigtable) */
#define KS_MAX_FIELDS         64    /* key fields in one schema */
#define KS_MAX_FAMILIES       1000  /* families in one table */
#define KS_MAX_QUALIFIERS     1000  /* declared qualifier columns, in all */
#define KS_MAX_DELIM          50    /* bytes in a DELIMITED BY delimiter */
#define KS_MAX_FAMILY_NAME    64    /* bytes in a family name (Bigtable) */
#define KS_MAX_NAME           1024  /* bytes in a field/column name */
#define KS_MAX_SALT           256   /* SALT n: 1 <= n <= 256 buckets */
#define KS_MAX_DECIMAL        19    /* DECIMAL(n): n <= 19 (INT64_MAX) */
#define KS_DEFAULT_DELIM      '#'   /* DELIMITED BY default */
#define KS_DEFAULT_MAX_POINTS 10000 /* default IN-product cap */

/* ====================================================================
** Schema
** ==================================================================== */

/* Type of a key field (Bigtable's scalar types usable in a key). */
typedef enum ks_type {
  KS_STRING = 0,   /* UTF-8 text, validated on write and on decode */
  KS_BYTES = 1,    /* raw bytes */
  KS_INT64 = 2,    /* signed 64-bit integer */
  KS_TIMESTAMP = 3 /* microseconds since the Unix epoch, as an int64 */
} ks_type;

/* Encoding of one key field (or of a declared qualifier value). */
typedef enum ks_enc {
  KS_ENC_UTF8 = 0,            /* STRING: the UTF-8 bytes (Bigtable utf8_bytes);
                              ** the default and only encoding for STRING */
  KS_ENC_RAW = 1,             /* BYTES: the bytes as-is (Bigtable raw); the
                              ** default and only encoding for BYTES */
  KS_ENC_BIG_ENDIAN = 2,      /* INT64/TIMESTAMP key: 8-byte big-endian two's
                              ** complement; in a key only values >= 0 are
                              ** accepted (negatives would sort after
                              ** positives); INT64/FLOAT64 values: 8 bytes */
  KS_ENC_ORDERED_CODE = 3,    /* INT64/TIMESTAMP: orderedcode signed varint,
                              ** 1..10 bytes, all values sort correctly */
  KS_ENC_DECIMAL = 4,         /* INT64/TIMESTAMP: exactly nWidth ASCII digits,
                              ** zero-padded, 0 <= v <= 10^nWidth-1 (extra);
                              ** for qualifier values nWidth 0 = unpadded */
  KS_ENC_REVERSED_DECIMAL = 5 /* key only: DECIMAL of (10^nWidth-1) - v, so
                               ** larger values (newer times) sort first */
} ks_enc;

/* How the key fields are put together into one row key. */
typedef enum ks_struct_enc {
  KS_STRUCT_NONE = 0,        /* no KEY clause: the table has only _key */
  KS_STRUCT_SINGLETON = 1,   /* exactly one field, its encoding as-is */
  KS_STRUCT_DELIMITED = 2,   /* fields joined by the delimiter bytes */
  KS_STRUCT_ORDERED_CODE = 3 /* Bigtable's ordered_code_bytes struct form */
} ks_struct_enc;

/* Value type of a declared qualifier column. */
typedef enum ks_vtype {
  KS_V_INT64 = 0,   /* enc BIG_ENDIAN (8 bytes, Bigtable's increment
                    ** format; the default) or DECIMAL (text) */
  KS_V_FLOAT64 = 1, /* enc BIG_ENDIAN: 8-byte big-endian IEEE 754 */
  KS_V_STRING = 2,  /* enc UTF8 */
  KS_V_BYTES = 3,   /* enc RAW */
  KS_V_JSON = 4     /* enc UTF8: JSON text */
} ks_vtype;

/* Aggregate kind of a column family (writes are merged into the value). */
typedef enum ks_agg {
  KS_AGG_NONE = 0, /* an ordinary family */
  KS_AGG_SUM = 1,  /* int64 sum */
  KS_AGG_MIN = 2,  /* int64 minimum */
  KS_AGG_MAX = 3,  /* int64 maximum */
  KS_AGG_HLL = 4   /* HyperLogLog++ distinct-count sketch */
} ks_agg;

/* How a family's two GC rules combine (Bigtable's GcRule union and
** intersection): UNION deletes a cell when either rule says so. */
typedef enum ks_gc {
  KS_GC_UNION = 0,       /* the default */
  KS_GC_INTERSECTION = 1 /* delete only when both rules say so; needs both
                         ** MAX VERSIONS and MAX AGE */
} ks_gc;

typedef struct ks_field {
  char *zName; /* field name, NUL-terminated, unique (ASCII
               ** case-insensitively) among all columns of the table */
  ks_type eType;
  ks_enc eEnc; /* UTF8 for STRING, RAW for BYTES, otherwise one of
               ** BIG_ENDIAN, ORDERED_CODE, DECIMAL, REVERSED_DECIMAL */
  int nWidth;  /* digits for DECIMAL/REVERSED_DECIMAL (1..19), else 0 */
} ks_field;

typedef struct ks_qualifier {
  int iFamily; /* index into ks_schema.aFamily */
  char *zName; /* qualifier name = SQL column name, NUL-terminated,
               ** 1..KS_MAX_NAME bytes, unique among all columns */
  ks_vtype eVType;
  ks_enc eEnc; /* see ks_vtype for the allowed encodings */
  int nWidth;  /* INT64 DECIMAL: zero-pad width 1..19, 0 = none */
} ks_qualifier;

typedef struct ks_family {
  char *zName;           /* Bigtable family name: [_a-zA-Z0-9][-_.a-zA-Z0-9]*,
                         ** 1..64 bytes */
  ks_agg eAgg;           /* KS_AGG_NONE for an ordinary family */
  int64_t nMaxVersions;  /* GC: keep the newest n cells per column; 0 = unset */
  int64_t nMaxAgeMicros; /* GC: drop cells older than this many microseconds;
                         ** 0 = unset */
  ks_gc eGc;             /* how the two rules combine */
  int iFirstQual;        /* its declared qualifiers are
                         ** aQual[iFirstQual .. iFirstQual+nQual-1] */
  int nQual;             /* declared qualifier columns, >= 0 */
} ks_family;

typedef struct ks_schema {
  /* --- the row key */
  int nField;                   /* key fields, 0 (no KEY) .. KS_MAX_FIELDS */
  ks_field *aField;             /* nField entries, in key order */
  ks_struct_enc eStruct;        /* KS_STRUCT_NONE iff nField == 0 */
  uint8_t aDelim[KS_MAX_DELIM]; /* DELIMITED: the delimiter bytes */
  int nDelim;                   /* DELIMITED: 1..KS_MAX_DELIM, else 0 */
  int nSalt;                    /* SALT n: buckets 1..256; 0 = not salted */
  /* --- column families and declared qualifier columns */
  int nFamily; /* families, in declaration order */
  ks_family *aFamily;
  int nQual; /* declared qualifier columns, grouped by family
             ** in family order (see ks_family.iFirstQual) */
  ks_qualifier *aQual;
  /* --- options */
  char *zStore;        /* STORE 'path', or NULL (default location) */
  char *zTable;        /* TABLE 'name', or NULL (the vtab's own name) */
  int iSync;           /* SYNC: -1 unset, else WCS_SYNC_OFF/NORMAL/FULL */
  int bHistory;        /* HISTORY: one row per cell (DESIGN.md §7) */
  int iZstdLevel;      /* COMPRESSION n: -1 unset, else 0..19 (0 = none) */
  int64_t nCacheBytes; /* CACHE 'size': -1 unset, else bytes */
  int bKeyClause;      /* a KEY clause was given (nField > 0) */
  int nClause;         /* clauses parsed; 1 with only TABLE 'x' means
                       ** "attach to the stored schema" */
} ks_schema;

/*
** Parse the module arguments of CREATE VIRTUAL TABLE ... USING wcs(...):
** azArg[0..nArg-1] are the clauses, exactly as SQLite passes argv[3..] to
** xCreate. On success *ppSchema is a new schema (free with
** ks_schema_free). On failure *ppSchema is NULL, the result is WCS_ERROR
** (syntax) or WCS_SCHEMA (a schema that cannot work) or WCS_NOMEM, and
** *pzErr says why, pointing at the token:
**   near "INT46": unknown type; expected STRING, BYTES, INT64 or TIMESTAMP
** A schema with no KEY clause (e.g. only TABLE 'x') is valid: nField == 0.
*/
int ks_parse_args(int nArg, const char *const *azArg, ks_schema **ppSchema,
                  char **pzErr);

/* Parse the canonical text (clauses separated by commas, as produced by
** ks_schema_text, or as written by a user). Same results as
** ks_parse_args. */
int ks_parse_text(const char *zText, ks_schema **ppSchema, char **pzErr);

void ks_schema_free(ks_schema *pSchema);

/* The canonical text of a schema: clauses in a fixed order (KEY, FAMILY...,
** STORE, TABLE, SYNC, COMPRESSION, CACHE, HISTORY), every encoding spelled out,
** names quoted only when needed. *pzText is malloc'd (caller frees).
** ks_parse_text(text) yields a schema for which ks_schema_equal is true. */
int ks_schema_text(const ks_schema *pSchema, char **pzText);

/* The clauses of pSchema that are a connection's settings rather than the
** table's (STORE, SYNC, CACHE), as ks_schema_text() writes them; "" when
** there are none. *pzText is malloc'd (caller frees). */
int ks_schema_settings_text(const ks_schema *pSchema, char **pzText);

/* The canonical text of table schema pCur changed as wcs_alter() and
** wcs_drop_family() change it: pCur's KEY clause; then each family of
** pCur, left out if it is named zDrop (NULL: none), replaced by pAdd's
** family of the same name if pAdd (NULL: none) has one (names compared as
** ks_schema_family() does; the name written stays pCur's); then pAdd's
** other families in their order. Only KEY and FAMILY clauses are written.
** *pzText is malloc'd (caller frees). WCS_OK or WCS_NOMEM. */
int ks_schema_merge_text(const ks_schema *pCur, const ks_schema *pAdd,
                         const char *zDrop, char **pzText);

/* 1 if two schemas are equal in every field (names compared exactly). */
int ks_schema_equal(const ks_schema *pA, const ks_schema *pB);

/* A deep copy (for a catalog cache). *ppOut freed with ks_schema_free. */
int ks_schema_dup(const ks_schema *pSchema, ks_schema **ppOut);

/* Index of the key field / family / qualifier column named zName (ASCII
** case-insensitive, as SQL column names are), or -1. */
int ks_schema_field(const ks_schema *pSchema, const char *zName);
int ks_schema_family(const ks_schema *pSchema, const char *zName);
int ks_schema_qualifier(const ks_schema *pSchema, const char *zName);

/* Name of a type / encoding in DDL spelling ("INT64", "ORDERED CODE"). */
const char *ks_type_name(ks_type eType);
const char *ks_enc_name(ks_enc eEnc);
const char *ks_vtype_name(ks_vtype eVType); /* a qualifier column's type */

/* ====================================================================
** Values and key codecs
** ==================================================================== */

#define KS_VAL_NULL  0 /* SQL NULL */
#define KS_VAL_INT   1 /* i: INT64/TIMESTAMP fields */
#define KS_VAL_BYTES 2 /* p,n: STRING (taken as text) and BYTES fields */
/* r: a real, in planner constraints on INT64 fields (x < 2.5);
** ks_key_encode accepts it when the value is integral */
#define KS_VAL_REAL 3

typedef struct ks_value {
  int eType;        /* KS_VAL_* */
  int64_t i;        /* KS_VAL_INT */
  const uint8_t *p; /* KS_VAL_BYTES: borrowed; may be NULL when n == 0 */
  int n;            /* KS_VAL_BYTES: bytes at p, >= 0 */
  double r;         /* KS_VAL_REAL */
} ks_value;

/*
** Append the row key for the tuple aField[0..nField-1] (nField =
** pSchema->nField; with SALT, the bucket byte comes first) to pOut.
** Values that would break sorted mode are rejected, naming the field:
**   WCS_CONSTRAINT  a NULL field; a DELIMITED field containing a byte <=
**                   the delimiter's first byte (the message names the field,
**                   the byte and its offset); invalid UTF-8 in a STRING
**   WCS_RANGE       a negative value for BIG ENDIAN or DECIMAL, a value
**                   wider than DECIMAL(n)
**   WCS_MISMATCH    a value of the wrong class for the field type
**   WCS_TOOBIG      a key longer than KS_MAX_KEY
**   WCS_MISUSE      a schema without a KEY clause
** On error pOut->n is unchanged.
*/
int ks_key_encode(const ks_schema *pSchema, const ks_value *aField,
                  wcs_buf *pOut, char **pzErr);

/*
** Decode row key pKey[0..nKey-1] into aOut[0..nField-1]. Strict: the key
** must be exactly what ks_key_encode produces for some tuple (so decode
** then encode gives the same bytes back). STRING/BYTES results point into
** pKey, or, for ORDERED CODE fields holding escaped 00 bytes, into
** pScratch, whose contents this call replaces (reuse one scratch buffer per
** cursor: no allocation per row once it has grown). The pointers stay valid
** while pKey and pScratch are unchanged. On a key that does not conform:
** WCS_MISMATCH and a message naming the key (escaped) and the problem, e.g.
**   row key 'phone#4c41' does not match the key schema: 2 fields, expected 3
** (the message is the only allocation, made on error only).
*/
int ks_key_decode(const ks_schema *pSchema, const uint8_t *pKey, int nKey,
                  ks_value *aOut, wcs_buf *pScratch, char **pzErr);

/*
** ks_key_decode() in two steps, for readers that need only some fields of
** a row. ks_key_split() checks the key's structure (salt byte, field
** count, delimiters or separators) and sets aOut[0..nField-1] to each
** field's bytes as KS_VAL_BYTES values (pointing into pKey, or into
** pScratch as for ks_key_decode), without checking what the bytes hold.
** ks_key_field_decode() then turns the split bytes of field iField in
** *pVal into that field's value, in place: a STRING is checked to be
** UTF-8, an INT64 or TIMESTAMP is decoded into pVal->i (KS_VAL_INT).
** Splitting, then decoding every field, gives exactly what ks_key_decode
** gives, errors included; pKey and nKey name the key in the message.
*/
int ks_key_split(const ks_schema *pSchema, const uint8_t *pKey, int nKey,
                 ks_value *aOut, wcs_buf *pScratch, char **pzErr);
int ks_key_field_decode(const ks_schema *pSchema, int iField, ks_value *pVal,
                        const uint8_t *pKey, int nKey, char **pzErr);

/*
** Splitting a key again from a field boundary. A scan's rows mostly share
** their leading fields with the row before ("phone#4c41#20230101", then
** "phone#4c41#20230102"): when the first iOff bytes of pKey are those of a
** key already split, and field iField began at iOff in that key, the
** fields before iField are the same bytes at the same offsets, and only
** the rest needs splitting. ks_key_split_from() sets aOut[iField..nField-1]
** as ks_key_split() would (aOut[0..iField-1] are the caller's: the views
** of the earlier split, moved to pKey), with the same errors; iField 0 at
** iOff 0 splits the whole key. With aOff, it sets aOff[iField..nField-1]
** to where each field begins in pKey: the boundaries a later split may
** start from; -1 for an ORDERED CODE field the key ends before (trailing
** empty fields are left out). An ORDERED CODE field holding a 00 byte
** is unescaped into pScratch, which the split reuses from its start: the
** caller's views of the fields before iField must be in pKey. It needs a
** schema for which
** ks_key_split_resumes() is true: DELIMITED or ORDERED CODE without salt
** (a salt byte hashes the whole key); otherwise WCS_MISUSE.
*/
static inline int ks_key_split_resumes(const ks_schema *pSchema) {
  return (pSchema->eStruct == KS_STRUCT_DELIMITED ||
          pSchema->eStruct == KS_STRUCT_ORDERED_CODE) &&
         pSchema->nSalt == 0 && pSchema->nField > 0;
}
int ks_key_split_from(const ks_schema *pSchema, const uint8_t *pKey, int nKey,
                      int iField, int iOff, ks_value *aOut, int *aOff,
                      wcs_buf *pScratch, char **pzErr);

/* Eight ASCII digits at p as a number (the first is the most
** significant); 0 if any is not a digit. A SWAR conversion: digit pairs,
** then quads, then the eight, each by one multiply. */
__attribute__((always_inline)) static inline int ks_digits8(const uint8_t *p,
                                                            uint64_t *pv) {
  uint64_t x;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint64_t kHi = 0xF0F0F0F0F0F0F0F0ULL;
  memcpy(&x, p, 8);
  if (((x & kHi) | (((x + 0x0606060606060606ULL) & kHi) >> 4)) !=
      0x3333333333333333ULL) {
    return 0;
  }
  x &= 0x0F0F0F0F0F0F0F0FULL;
  x = (x * 2561) >> 8;
  x = ((x & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
  x = ((x & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
  *pv = x;
  return 1;
#else
  int i;
  x = 0;
  for (i = 0; i < 8; i++) {
    unsigned d = (unsigned)p[i] - '0';
    if (d > 9) return 0;
    x = x * 10 + d;
  }
  *pv = x;
  return 1;
#endif
}

/*
** The last field as an integer, for a scan that split the row before: the
** key's last field begins at iOff (as in that split), and is an INT64 or
** TIMESTAMP field, valid as ks_key_split_from() and ks_key_field_decode()
** would find it. Returns WCS_OK with *pv, or WCS_MISMATCH for anything
** else (another encoding, a bad field, an ORDERED CODE field holding a 00
** byte): the caller then takes that general path, which names the error.
** Needs ks_key_split_resumes(). Inline for the common width, 8 digits
** (dates as YYYYMMDD); ks_key_last_int_any() for every width.
*/
int ks_key_last_int_any(const ks_schema *pSchema, const uint8_t *pKey, int nKey,
                        int iOff, int64_t *pv);

/* The schema and offset ks_key_last_int handles: a last integer field of
** an ORDERED CODE key (its bytes are the rest of the key when no 00 byte,
** which would be an escape or a separator, is among them), or one in
** DECIMAL or REVERSED DECIMAL after a one-byte delimiter below '0' (so
** the digits are above it, and their check is the whole field check; the
** grammar keeps a DECIMAL field's delimiter there). */
static inline int ks_key_last_int_fits(const ks_schema *pSchema, int nKey,
                                       int iOff) {
  const ks_field *f = &pSchema->aField[pSchema->nField - 1];
  if (!ks_key_split_resumes(pSchema) ||
      (f->eType != KS_INT64 && f->eType != KS_TIMESTAMP) || iOff < 0 ||
      iOff > nKey || nKey > KS_MAX_KEY) {
    return 0;
  }
  if (pSchema->eStruct == KS_STRUCT_ORDERED_CODE) return 1;
  return pSchema->nDelim == 1 && pSchema->aDelim[0] < '0' &&
         (f->eEnc == KS_ENC_DECIMAL || f->eEnc == KS_ENC_REVERSED_DECIMAL);
}

static inline int ks_key_last_int(const ks_schema *pSchema, const uint8_t *pKey,
                                  int nKey, int iOff, int64_t *pv) {
  const ks_field *f = &pSchema->aField[pSchema->nField - 1];
  uint64_t u;
  /* 8 digits never exceed the INT64 range */
  if (f->nWidth == 8 && nKey - iOff == 8 &&
      (f->eEnc == KS_ENC_DECIMAL || f->eEnc == KS_ENC_REVERSED_DECIMAL) &&
      ks_key_last_int_fits(pSchema, nKey, iOff) &&
      ks_digits8(pKey + iOff, &u)) {
    *pv = f->eEnc == KS_ENC_DECIMAL ? (int64_t)u : (int64_t)(99999999u - u);
    return WCS_OK;
  }
  return ks_key_last_int_any(pSchema, pKey, nKey, iOff, pv);
}

/*
** Append to pOut bytes that every row key whose first nLeading fields equal
** aVal[0..nLeading-1] starts with (0 <= nLeading <= nField). DELIMITED: the
** fields with a delimiter after each when more fields follow
** ("phone#4c41#", not "phone#4c41"); nLeading == nField gives the whole key.
** ORDERED CODE: the fields joined, followed by the 00 01 separator unless
** every later field may be empty (then Bigtable's trailing-empty-field rule
** may end a key right there, so the prefix has no separator and also
** covers longer values of the last leading field: use ks_plan_make for
** exact ranges). SALT: without the bucket byte (keys start with one bucket
** byte, then these bytes). Errors as for ks_key_encode.
*/
int ks_key_prefix(const ks_schema *pSchema, const ks_value *aVal, int nLeading,
                  wcs_buf *pOut, char **pzErr);

/*
** Append to pOut the bytes of the first nLeading fields of row key
** pKey[0..nKey-1], in a form where two keys give equal bytes exactly when
** their first nLeading fields are equal (the salt byte is left out; for
** ORDERED CODE empty fields are written out rather than dropped). For
** counting distinct prefixes among sampled keys, e.g. to estimate what a
** SKIP plan (ks_plan.nSkipDepth) costs. WCS_MISMATCH if the key does not
** split into the schema's fields (no message), WCS_NOMEM.
*/
int ks_key_prefix_of(const ks_schema *pSchema, const uint8_t *pKey, int nKey,
                     int nLeading, wcs_buf *pOut);

/* SALT: the bucket byte of a key whose unsalted encoding is p[0..n-1]:
** XXH3_64bits(p, n) % nSalt (doc/keyschema.md, "Salting"). */
int ks_salt_bucket(const ks_schema *pSchema, const uint8_t *p, int n);

/* ====================================================================
** Planning: SQL constraints → key ranges
** ==================================================================== */

typedef enum ks_op {
  KS_OP_EQ = 0, /* aVal[0] */
  KS_OP_LT = 1, /* < aVal[0] */
  KS_OP_LE = 2,
  KS_OP_GT = 3,
  KS_OP_GE = 4,
  KS_OP_IN = 5,          /* = any of aVal[0..nVal-1] (NULLs ignored) */
  KS_OP_GLOB_PREFIX = 6, /* aVal[0] is the whole GLOB pattern; its literal
                         ** prefix bounds the field; exact iff the pattern
                         ** is 'literal*' */
  KS_OP_LIKE_PREFIX = 7, /* aVal[0] is the whole LIKE pattern (no ESCAPE);
                         ** SQLite's LIKE is ASCII case-insensitive, so
                         ** letters give a covering range, never exact */
  KS_OP_ISNULL = 8,      /* key fields are never NULL: an empty plan */
  KS_OP_ISNOTNULL = 9,   /* always true for key fields */
  KS_OP_PREFIX = 10      /* starts_with(field, aVal[0]): exact */
} ks_op;

#define KS_FIELD_KEY (-1) /* ks_constraint.iField for the _key column */

typedef struct ks_constraint {
  int iField; /* 0..nField-1, or KS_FIELD_KEY */
  ks_op op;
  const ks_value *aVal; /* borrowed for the ks_plan_make call only */
  int nVal;             /* 1, or the IN list length (0 = empty IN) */
  int bExact;           /* out: 1 if the plan's ranges (and, for SKIP,
                        ** ks_plan_check) capture this constraint exactly,
                        ** so SQLite need not re-check it */
} ks_constraint;

typedef struct ks_plan_opts {
  int nMaxPoints; /* cap on the IN-list cartesian product (points or
                  ** ranges); 0 = KS_DEFAULT_MAX_POINTS. Past the cap the
                  ** field gets one covering range and SQLite re-checks */
  int bAllowSkip; /* 1: constraints after an unconstrained (or range)
                  ** field may be used by a SKIP plan; 0: they are left for
                  ** SQLite to re-check. The caller decides by cost,
                  ** e.g. from the number of distinct prefixes of the
                  ** first ks_plan.nSkipDepth fields */
} ks_plan_opts;

typedef enum ks_plan_kind {
  KS_PLAN_EMPTY = 0,       /* no key can match: do not scan at all */
  KS_PLAN_POINT = 1,       /* one full key */
  KS_PLAN_MULTI_POINT = 2, /* nPoint full keys */
  KS_PLAN_PREFIX = 3,      /* equality on leading fields: one key range */
  KS_PLAN_RANGE = 4,       /* equality prefix then a range: one key range */
  KS_PLAN_MULTI_RANGE = 5, /* several key ranges (IN lists, OR of ranges) */
  KS_PLAN_SKIP = 6,        /* seek from one distinct prefix to the next */
  KS_PLAN_FULL = 7         /* every key */
} ks_plan_kind;

/* One key range of a plan. Bytes are physical keys (salt byte included).
** Ranges of a plan are sorted and do not overlap. */
typedef struct ks_range {
  const uint8_t *pStart; /* lower bound (owned by the plan) */
  int nStart;
  int bStartIncl;      /* 1: key >= start; 0: key > start */
  int bStartUnbounded; /* 1: no lower bound (pStart unused) */
  const uint8_t *pEnd; /* upper bound (owned by the plan) */
  int nEnd;
  int bEndIncl;      /* 1: key <= end; 0: key < end */
  int bEndUnbounded; /* 1: no upper bound (pEnd unused) */
  int iBucket;       /* SALT bucket holding the range, or -1 */
} ks_range;

typedef struct ks_plan_skip ks_plan_skip; /* opaque: slots for SKIP plans */

typedef struct ks_plan {
  ks_plan_kind eKind;
  int nRange;               /* ranges in aRange; 0 iff eKind == EMPTY */
  ks_range *aRange;         /* sorted by start, non-overlapping */
  int nPoint;               /* POINT/MULTI_POINT: number of keys, else 0 */
  int nKeyField;            /* leading key fields the ranges are built from
                            ** (the "(device,id)" of PREFIX SCAN (device,id)) */
  int nEqField;             /* leading fields fixed by = or IN */
  int bKeyColumn;           /* ranges (also) come from constraints on _key */
  int nSkipDepth;           /* SKIP: the first nSkipDepth fields are walked
                            ** distinct prefix by distinct prefix; else 0 */
  int iSkipField;           /* SKIP: first field constrained after the gap */
  int nBucket;              /* SALT buckets (0: not salted). Ranges are grouped
                            ** by bucket; within a bucket keys are in tuple
                            ** order; a scan in tuple order merges the
                            ** ks_plan_streams() streams by key minus byte 0 */
  int bExactAll;            /* every constraint given was captured exactly */
  ks_plan_skip *pSkip;      /* SKIP: navigation state (internal) */
  const ks_schema *pSchema; /* borrowed: must outlive the plan */
  char *zDesc;              /* ks_plan_describe text (owned; NULL until
                            ** first asked for) */
} ks_plan;

/*
** Build a plan from the constraints aCons[0..nCons-1] (any order; several
** on one field are intersected; constraints on columns other than key
** fields and _key must not be passed). Sets aCons[i].bExact. pOpts may be
** NULL (defaults). *ppPlan is freed with ks_plan_free; the plan borrows
** pSchema. A constraint with a value of the wrong class for its field
** (text for an INT64 field) is not used (bExact = 0) rather than guessed.
** Comparisons are SQLite's BINARY ones. KS_VAL_BYTES is taken as a value
** of the field's own class (TEXT for STRING, BLOB for BYTES, either for
** _key): SQLite orders every TEXT before every BLOB, so a caller holding a
** BLOB compared with a STRING field (or TEXT with a BYTES field) should
** leave that term to SQLite rather than pass it, and likewise a term with
** a non-BINARY collation.
** Errors: WCS_NOMEM; WCS_MISUSE for a bad iField.
*/
int ks_plan_make(const ks_schema *pSchema, ks_constraint *aCons, int nCons,
                 const ks_plan_opts *pOpts, ks_plan **ppPlan, char **pzErr);

void ks_plan_free(ks_plan *pPlan);

/* The plan in words, e.g. "POINT LOOKUP", "MULTI-POINT (12 keys)",
** "PREFIX SCAN (device,id)", "RANGE SCAN (device,id,day)",
** "MULTI-RANGE SCAN (3 ranges on device)", "SKIP SCAN on id",
** "FULL SCAN"; salted plans add " OVER 4 BUCKETS". Borrowed: valid for the
** plan's life. Made on the first call ("" if memory runs out then). */
const char *ks_plan_describe(const ks_plan *pPlan);

/* The description followed by the key ranges, one per line, printable and
** escaped ("[phone#4c41#, phone#4c41$)"), at most nMax ranges (0 = all)
** then "... N more". For the shell's .explain. *pz is malloc'd. */
int ks_plan_explain(const ks_plan *pPlan, int nMax, char **pz);

/*
** Executing a plan. The scan layer walks keys in order (forward) or in
** reverse and asks the plan about each key it lands on:
**
**   rc = ks_plan_start(pPlan, iStream, bReverse, &seek);   // KS_SEEK/DONE
**   while rc == KS_SEEK:
**     position the iterator by `seek` (below); if no key there: stop
**     rc = ks_plan_check_stream(pPlan, iStream, key, nKey, bReverse, &seek)
**     KS_MATCH: emit the row, step next (or prev), check again
**     KS_SEEK:  position by `seek`, check again
**     KS_DONE:  stop
**
** Positioning by a seek target T (pSeek->a[0..n-1]):
**   forward:  the first key >= T (wcs_iter_seek)
**   reverse:  the last key < T (wcs_iter_seek_for_prev(T), then one prev if
**             it landed on T itself); an EMPTY target in reverse means
**             "the last key of all" (wcs_iter_last).
** A KS_SEEK target from ks_plan_check always moves strictly past the key
** just checked (so the loop terminates) and is never empty; only
** ks_plan_start (reverse, a plan unbounded above) returns the empty
** target. Keys the plan cannot follow (a key whose fields do not
** decode, met during a SKIP scan) are returned as KS_MATCH so the caller's
** ks_key_decode reports them instead of skipping them silently.
**
** Streams: an unsalted plan has one stream (iStream 0, or -1 = the whole
** plan). A salted plan has ks_plan_streams() == nBucket streams, one per
** bucket; iStream -1 walks all buckets in physical key order. Codes are
** distinct from WCS_* codes; the functions return WCS_NOMEM if growing
** pSeek fails.
*/
#define KS_MATCH 100 /* the key is inside the plan: emit it */
#define KS_SEEK  101 /* not inside: position by *pSeek and check again */
#define KS_DONE  102 /* nothing further in this direction can match */

int ks_plan_streams(const ks_plan *pPlan);
int ks_plan_start(const ks_plan *pPlan, int iStream, int bReverse,
                  wcs_buf *pSeek);
int ks_plan_check(const ks_plan *pPlan, const uint8_t *pKey, int nKey,
                  int bReverse, wcs_buf *pSeek);
int ks_plan_check_stream(const ks_plan *pPlan, int iStream, const uint8_t *pKey,
                         int nKey, int bReverse, wcs_buf *pSeek);

/* After KS_MATCH for pKey: the length of a prefix of pKey such that the
** plan checks every key that starts with it as it checked pKey (KS_MATCH
** for those inside its ranges), or 0 when it cannot tell. A SKIP plan
** over delimited keys without salt gives the bytes of the fields it
** navigates and the delimiter after them ("phone#4c41#" for SKIP SCAN on
** id): a scan may emit the rows under that prefix without asking again. */
int ks_plan_match_prefix(const ks_plan *pPlan, const uint8_t *pKey, int nKey);

/* 1 if p[0..n-1] is valid UTF-8 (no overlongs, surrogates or > U+10FFFF;
** ASCII runs are checked 8 bytes at a time); else 0 and, when piBad is
** not NULL, *piBad = offset of the first bad byte. Keys, qualifiers,
** STRING and JSON values are all checked with it. */
int ks_utf8_valid(const uint8_t *p, int n, int *piBad);

#ifdef __cplusplus
}
#endif
#endif /* WCS_KEYSCHEMA_SCHEMA_H */
