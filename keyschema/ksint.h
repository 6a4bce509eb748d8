/*
** ksint.h — internals shared by the .c files of keyschema/ and by the
** lemon grammar ddl.y. Not part of the module's surface (that is
** schema.h).
**
** Three groups:
**   - the DDL parse context and the builder calls the grammar actions make
**     (implemented in parse.c);
**   - field-level codec helpers used by both the codec (codec.c) and the
**     planner (plan.c): the planner works on "field bytes", the encoding of
**     one field before the struct encoding joins and escapes the fields,
**     because every field encoding is order-preserving and the struct
**     encodings preserve field-wise order;
**   - small string helpers (schema.c).
*/
#ifndef WCS_KEYSCHEMA_KSINT_H
#define WCS_KEYSCHEMA_KSINT_H

#include <stdint.h>

#include "keyschema/schema.h"

/* ====================================================================
** DDL parsing (parse.c, ddl.y)
** ==================================================================== */

/* A token: a slice of the clause text. z == NULL marks the end of a
** clause or of the input (printed as such in messages). */
typedef struct ks_token {
  const char *z; /* first byte, inside the text being parsed */
  int n;         /* bytes */
} ks_token;

/* The words of an encoding as written ("BIG ENDIAN", "DECIMAL(8)"),
** resolved into a ks_enc by the builder so that a misspelling gets a
** message naming the allowed encodings. */
typedef struct ks_encspec {
  ks_token aWord[3]; /* the first words */
  int nWord;         /* words seen, may exceed 3 (then an error) */
  ks_token tWidth;   /* the number in "(n)" */
  int bWidth;        /* 1 if "(n)" was given */
} ks_encspec;

/* Parse context: the schema being built plus what the checks need. */
typedef struct ks_pctx {
  ks_schema *pSchema; /* being built, owned until handed to the caller */
  int rc;             /* first error, WCS_OK while fine */
  char *zErr;         /* message of the first error (malloc'd) */
  int nFieldAlloc, nFamAlloc, nQualAlloc; /* array capacities */
  /* the KEY clause in progress */
  int bKeySeen;                       /* a KEY clause was started */
  ks_token aFieldTok[KS_MAX_FIELDS];  /* name token of each key field */
  ks_token aEncTok[KS_MAX_FIELDS];    /* encoding (or type) token of each */
  uint8_t aEncDefault[KS_MAX_FIELDS]; /* 1: no encoding was written */
  ks_token tStruct; /* DELIMITED or ORDERED token, z NULL if none */
  ks_token tDelim;  /* the delimiter literal */
  int bSaltSeen;
  /* the FAMILY clause in progress: index into aFamily, -1 outside */
  int iFam;
  int bVersionsSeen, bAgeSeen, bGcSeen, bAggSeen;
  ks_token tGc;  /* UNION/INTERSECTION token */
  ks_token tAgg; /* the aggregate kind token */
  /* options seen */
  int bStoreSeen, bTableSeen, bSyncSeen, bCompressionSeen, bCacheSeen;
} ks_pctx;

/* Record an error pointing at token t (z NULL: the end of a clause):
**   near "TOKEN": <message>
** Only the first error is kept. */
void ksErrNear(ks_pctx *p, int rc, const ks_token *t, const char *zFmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Record an error with no token. */
void ksErr(ks_pctx *p, int rc, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The grammar's %syntax_error: iTok is the offending token's code, zExpect
** the list of what would have been accepted ("BY", "\",\" or \")\""). */
void ksSyntaxError(ks_pctx *p, const ks_token *t, const char *zExpect);
/* Display name of a terminal for "expected ..." lists, or NULL to leave it
** out (ddl.y asks for each terminal the parser would accept). */
const char *ksTokenDisplay(int iTok);

/* Builder calls, one per grammar action. */
void ksKeyBegin(ks_pctx *p, const ks_token *tKey);
void ksKeyField(ks_pctx *p, const ks_token *tName, const ks_token *tType,
                const ks_encspec *pEnc);
void ksKeyDelimited(ks_pctx *p, const ks_token *tKw, const ks_token *tLit);
void ksKeyOrderedCode(ks_pctx *p, const ks_token *tKw);
void ksKeySalt(ks_pctx *p, const ks_token *tKw, const ks_token *tNum);
void ksKeyEnd(ks_pctx *p);
void ksFamilyBegin(ks_pctx *p, const ks_token *tName);
void ksQualifier(ks_pctx *p, const ks_token *tName, const ks_token *tType,
                 const ks_encspec *pEnc);
void ksFamilyMaxVersions(ks_pctx *p, const ks_token *tKw, const ks_token *tNum);
void ksFamilyMaxAge(ks_pctx *p, const ks_token *tKw, const ks_token *tLit);
void ksFamilyGc(ks_pctx *p, const ks_token *tKw, ks_gc eGc);
void ksFamilyAggregate(ks_pctx *p, const ks_token *tKw, const ks_token *tKind);
void ksFamilyEnd(ks_pctx *p);
void ksOptStore(ks_pctx *p, const ks_token *tKw, const ks_token *tLit);
void ksOptTable(ks_pctx *p, const ks_token *tKw, const ks_token *tLit);
void ksOptSync(ks_pctx *p, const ks_token *tKw, const ks_token *tMode);
void ksOptHistory(ks_pctx *p, const ks_token *tKw);
void ksOptCompression(ks_pctx *p, const ks_token *tKw, const ks_token *tNum);
void ksOptCache(ks_pctx *p, const ks_token *tKw, const ks_token *tLit);
void ksClauseDone(ks_pctx *p);

/* Encoding spec helpers for the grammar. */
void ksEncNone(ks_encspec *pEnc);
void ksEncWord(ks_encspec *pEnc, const ks_token *tWord);
void ksEncWidth(ks_encspec *pEnc, const ks_token *tNum);

/* The lemon parser (generated from ddl.y into the build tree). */
void *ksDdlParserAlloc(void *(*xMalloc)(size_t));
void ksDdlParser(void *pParser, int iTok, ks_token t, ks_pctx *p);
void ksDdlParserFree(void *pParser, void (*xFree)(void *));

/* MAX AGE text ("30d", "500ms") → microseconds; 0 if malformed, -1 if
** longer than INT64_MAX microseconds. */
int64_t ksParseAge(const char *z, int n);
/* Microseconds → the canonical MAX AGE text in the largest exact unit
** (writes at most 32 bytes to zOut). */
void ksFormatAge(int64_t nMicros, char *zOut);

/* ====================================================================
** Schema helpers (schema.c)
** ==================================================================== */
int ksStrICmp(const char *zA, const char *zB); /* ASCII, like SQL names */
char *ksStrDup(const char *z);                 /* NULL on OOM or NULL */
/* 1 if z is a plain identifier that needs no quoting in canonical text. */
int ksIsBareName(const char *z);
/* 1 if a bare word is a DDL keyword (so canonical text quotes it). */
int ksIsKeyword(const char *z, int n);

/* ====================================================================
** Codec helpers (codec.c)
** ==================================================================== */

/* A slice of bytes. */
typedef struct ks_view {
  const uint8_t *p;
  int n;
} ks_view;

#define KS_OC_MAXLEN     10 /* longest orderedcode int64 */
#define KS_FIELD_INT_MAX 20 /* longest encoded int field (DECIMAL(19)) */

/* orderedcode signed int64: write to a (room for 10), return length. */
int ksOcPutInt(uint8_t *a, int64_t v);
/* Parse one orderedcode int64 from p[0..n-1]: returns bytes consumed, or
** 0 if malformed/short/non-minimal. */
int ksOcGetInt(const uint8_t *p, int n, int64_t *pv);


/* Integer fields live, for ordering purposes, in an unsigned "order
** space" u where u order == byte order of the field encoding:
**   ORDERED CODE: u = v ^ 2^63; BIG ENDIAN: u = v (v >= 0);
**   DECIMAL(n): u = v; REVERSED DECIMAL(n): u = (10^n-1) - v.
** ksIntDomain gives the allowed value range of a field. */
void ksIntDomain(const ks_field *f, int64_t *pMin, int64_t *pMax);
uint64_t ksIntToU(const ks_field *f, int64_t v); /* v in domain */
int64_t ksIntFromU(const ks_field *f, uint64_t u);
void ksIntURange(const ks_field *f, uint64_t *puMin, uint64_t *puMax);
/* The field bytes of order-space value u (room for KS_FIELD_INT_MAX). */
int ksIntFieldBytes(const ks_field *f, uint64_t u, uint8_t *a);
/* Decode the field bytes of an int field; WCS_OK or WCS_MISMATCH with a
** short reason in *pzWhy (static text). */
int ksIntFieldDecode(const ks_field *f, const uint8_t *p, int n, int64_t *pv,
                     const char **pzWhy);

/* The first byte that a DELIMITED field may not contain or be below:
** delimiter[0]. -1 for other struct encodings. */
int ksDelimByte(const ks_schema *s);

/*
** Split a (logical, unsalted) row key into the field bytes of each field
** (unescaped for ORDERED CODE; escaped bytes are copied into pScratch,
** which is reset first and reserved once so earlier views stay valid).
** Structural checks only (field count, separators, escapes, DELIMITED byte
** rule, canonical form); field contents are checked by the caller.
** Returns WCS_OK, WCS_NOMEM, or WCS_MISMATCH with *pzWhy a static reason
** and *piField the field concerned (or -1).
*/
int ksSplitKey(const ks_schema *s, const uint8_t *pKey, int nKey,
               ks_view *aView, wcs_buf *pScratch, const char **pzWhy,
               int *piField);

/* How ksJoin ends a tuple of m field-byte views:
**   FULL    m == nField: the whole logical key
**   LOW     the smallest key whose first m fields are these
**   PREFIX  prefix bytes: the fields, then a separator if m < nField
**           (DELIMITED: the delimiter; ORDERED CODE: 00 01, left out when
**           every later field may be empty, since such a key may end right
**           after the m fields)
**   HIGH    the smallest byte string above every key whose first m fields
**           are these (m < nField; m == nField: the key and a 00 byte) */
#define KS_JOIN_FULL   0
#define KS_JOIN_LOW    1
#define KS_JOIN_PREFIX 2
#define KS_JOIN_HIGH   3
/* Append the struct encoding of views aView[0..m-1] to pOut (logical key,
** no salt). WCS_OK or WCS_NOMEM. */
int ksJoin(const ks_schema *s, const ks_view *aView, int m, int eMode,
           wcs_buf *pOut);

/* Field bytes of the smallest value a field can hold ("" for strings). */
ks_view ksFieldMin(const ks_field *f, uint8_t *aBuf);

/* Smallest byte string greater than every string that starts with
** p[0..n-1]: drop trailing FF bytes, increment the last. Returns the new
** length (0: no such string, every string with that prefix is at the top).
** Works in place on a copy the caller made. */
int ksPrefixSuccessor(uint8_t *p, int n);

#endif /* WCS_KEYSCHEMA_KSINT_H */
