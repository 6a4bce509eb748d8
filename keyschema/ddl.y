/*
** ddl.y — the lemon grammar of the wcs table DDL: the clauses of
**   CREATE VIRTUAL TABLE t USING wcs(clause, clause, ...)
** Each action is one call into the builder in parse.c, which checks the
** clause and fills the ks_schema; values (names, strings, numbers) are
** decoded there from the tokens, so no grammar symbol owns heap memory and
** no %destructor is needed. The tokenizer is hand-written (parse.c).
** Keywords are case-insensitive and fall back to plain names where a name
** is allowed. Types, encodings, aggregate kinds and sync modes are names
** resolved by the builder, so a misspelling is reported with the list of
** what is allowed ("unknown type; expected STRING, BYTES, INT64 or
** TIMESTAMP"). On a syntax error the parser lists the tokens it would have
** accepted (ksDdlExpected, below). The grammar is described in prose in
** doc/keyschema.md.
**
** The parser is generated into the build tree (build/gen/ddl.c, ddl.h);
** never commit or edit the generated files.
*/

%name ksDdlParser
%token_prefix TK_
%token_type {ks_token}
%default_type {ks_token}
%extra_argument {ks_pctx *pCtx}
%start_symbol input

%include {
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "keyschema/ksint.h"

static void ksDdlExpected(void *pParser, char *zOut, int nOut);
}

%syntax_error {
  char zExpect[400];
  (void)yymajor;
  ksDdlExpected((void *)yypParser, zExpect, (int)sizeof(zExpect));
  ksSyntaxError(pCtx, &TOKEN, zExpect);
}

%stack_overflow {
  ksErr(pCtx, WCS_ERROR, "the schema text is nested too deeply");
}

/* Token order fixes the codes in the generated ddl.h. Punctuation and
** literals first, then keywords. */
%token COMMA LP RP ID LITERAL BLOB INTEGER.
%token KEY FAMILY STORE TABLE SYNC HISTORY COMPRESSION.
%token DELIMITED BY ORDERED CODE SALT.
%token MAX VERSIONS AGE UNION INTERSECTION AGGREGATE CACHE.

%fallback ID KEY FAMILY STORE TABLE SYNC HISTORY COMPRESSION
             DELIMITED BY ORDERED CODE SALT
             MAX VERSIONS AGE UNION INTERSECTION AGGREGATE CACHE.

%type enc {ks_encspec}
%type encwords {ks_encspec}

input ::= .
input ::= clauses.

clauses ::= clause.
clauses ::= clauses COMMA clause.

clause ::= key_clause.                          { ksClauseDone(pCtx); }
clause ::= family_clause.                       { ksClauseDone(pCtx); }
clause ::= STORE(K) LITERAL(S).                 { ksOptStore(pCtx, &K, &S); ksClauseDone(pCtx); }
clause ::= TABLE(K) LITERAL(S).                 { ksOptTable(pCtx, &K, &S); ksClauseDone(pCtx); }
clause ::= SYNC(K) ID(M).                       { ksOptSync(pCtx, &K, &M); ksClauseDone(pCtx); }
clause ::= HISTORY(K).                          { ksOptHistory(pCtx, &K); ksClauseDone(pCtx); }
clause ::= COMPRESSION(K) INTEGER(N).           { ksOptCompression(pCtx, &K, &N); ksClauseDone(pCtx); }
clause ::= CACHE(K) LITERAL(S).                 { ksOptCache(pCtx, &K, &S); ksClauseDone(pCtx); }

/* KEY (field TYPE [ENCODING], ...) [DELIMITED BY 'x' | ORDERED CODE] [SALT n] */
key_clause ::= key_head LP key_fields RP key_opts.   { ksKeyEnd(pCtx); }
key_head ::= KEY(K).                            { ksKeyBegin(pCtx, &K); }
key_fields ::= key_field.
key_fields ::= key_fields COMMA key_field.
key_field ::= ID(N) ID(T) enc(E).               { ksKeyField(pCtx, &N, &T, &E); }

key_opts ::= .
key_opts ::= key_opts key_opt.
key_opt ::= DELIMITED(K) BY LITERAL(S).         { ksKeyDelimited(pCtx, &K, &S); }
key_opt ::= DELIMITED(K) BY BLOB(S).            { ksKeyDelimited(pCtx, &K, &S); }
key_opt ::= ORDERED(K) CODE.                    { ksKeyOrderedCode(pCtx, &K); }
key_opt ::= SALT(K) INTEGER(N).                 { ksKeySalt(pCtx, &K, &N); }

/* An encoding: up to a few words, optionally followed by (n). */
enc(A) ::= .                                    { ksEncNone(&A); }
enc(A) ::= encwords(W).                         { A = W; }
enc(A) ::= encwords(W) LP INTEGER(N) RP.        { A = W; ksEncWidth(&A, &N); }
encwords(A) ::= ID(X).                          { ksEncNone(&A); ksEncWord(&A, &X); }
encwords(A) ::= encwords(W) ID(X).              { A = W; ksEncWord(&A, &X); }

/* FAMILY name [(qualifier TYPE [ENCODING], ...)] [options] */
family_clause ::= family_head family_quals family_opts.  { ksFamilyEnd(pCtx); }
family_head ::= FAMILY ID(N).                   { ksFamilyBegin(pCtx, &N); }
family_quals ::= .
family_quals ::= LP quals RP.
quals ::= qual.
quals ::= quals COMMA qual.
qual ::= ID(N) ID(T) enc(E).                    { ksQualifier(pCtx, &N, &T, &E); }

family_opts ::= .
family_opts ::= family_opts family_opt.
family_opt ::= MAX(K) VERSIONS INTEGER(N).      { ksFamilyMaxVersions(pCtx, &K, &N); }
family_opt ::= MAX(K) AGE LITERAL(S).           { ksFamilyMaxAge(pCtx, &K, &S); }
family_opt ::= UNION(K).                        { ksFamilyGc(pCtx, &K, KS_GC_UNION); }
family_opt ::= INTERSECTION(K).                 { ksFamilyGc(pCtx, &K, KS_GC_INTERSECTION); }
family_opt ::= AGGREGATE(K) ID(A).              { ksFamilyAggregate(pCtx, &K, &A); }

%code {
/*
** What would the parser have accepted? Replays the LALR automaton on a
** copy of the state stack for every terminal (without keyword fallback, so
** a keyword is listed only where it is itself expected), and writes the
** display names of those that would be shifted into zOut. Runs only on a
** syntax error.
*/
static int ksDdlAccepts(const yyParser *p, int iTok) {
  YYACTIONTYPE aState[128];
  int n = (int)(p->yytos - p->yystack) + 1;
  int i, nStep;
  YYACTIONTYPE act;
  if (n <= 0 || n > 100) return 0;
  for (i = 0; i < n; i++) aState[i] = p->yystack[i].stateno;
  act = aState[n - 1];
  for (nStep = 0; nStep < 1000; nStep++) {
    YYACTIONTYPE a = act;
    if (act <= YY_MAX_SHIFT) {
      int k = yy_shift_ofst[act] + iTok;
      if (k >= 0 && k < (int)(sizeof(yy_lookahead) / sizeof(yy_lookahead[0])) &&
          yy_lookahead[k] == iTok) {
        a = yy_action[k];
      } else {
        a = yy_default[act];
      }
    }
    if (a >= YY_MIN_REDUCE && a <= YY_MAX_REDUCE) {
      int iRule = a - YY_MIN_REDUCE;
      int nRhs = yyRuleInfoNRhs[iRule]; /* <= 0 */
      if (n + nRhs < 1 || n + nRhs >= 127) return 0;
      act = yy_find_reduce_action(aState[n + nRhs - 1],
                                  (YYCODETYPE)yyRuleInfoLhs[iRule]);
      n = n + nRhs;
      aState[n++] = act;
      continue;
    }
    if (a <= YY_MAX_SHIFTREDUCE) return 1;
    return a == YY_ACCEPT_ACTION;
  }
  return 0;
}

static void ksDdlExpected(void *pParser, char *zOut, int nOut) {
  const yyParser *p = (const yyParser *)pParser;
  const char *azName[YYNTOKEN];
  int nName = 0, i, j, k;
  for (i = 1; i <= YYNTOKEN; i++) {
    const char *z;
    int iTok = i % YYNTOKEN; /* the end of input (0) last */
    if (!ksDdlAccepts(p, iTok)) continue;
    z = ksTokenDisplay(iTok);
    if (z == NULL) continue;
    for (j = 0; j < nName && strcmp(azName[j], z) != 0; j++) {}
    if (j == nName) azName[nName++] = z;
  }
  zOut[0] = 0;
  /* Where a name is all that can come, say what it names: after a field
  ** or qualifier name its type, after FAMILY the family's name, after
  ** SYNC or AGGREGATE the words allowed (the grammar reads all of them
  ** as names). */
  if (nName == 1 && ksDdlAccepts(p, TK_ID) && p->yytos > p->yystack) {
    const ks_token *t = &p->yytos->minor.yy0;
    switch (p->yytos->major) {
    case TK_ID:
      snprintf(zOut, (size_t)nOut,
               "the type of \"%.*s\" (e.g. STRING or INT64)",
               t->n < 64 ? t->n : 64, t->z);
      return;
    case TK_SYNC:
      snprintf(zOut, (size_t)nOut, "FULL, NORMAL or OFF");
      return;
    case TK_AGGREGATE:
      snprintf(zOut, (size_t)nOut, "SUM, MIN, MAX or HLL");
      return;
    case TK_FAMILY:
      snprintf(zOut, (size_t)nOut, "the family's name");
      return;
    }
  }
  for (i = 0, k = 0; i < nName && k < nOut - 1; i++) {
    const char *zSep = i == 0 ? "" : (i == nName - 1 ? " or " : ", ");
    k += snprintf(zOut + k, (size_t)(nOut - k), "%s%s", zSep, azName[i]);
  }
}
}
