/*
** check_keyschema_ddl.c — the table DDL (keyschema/ddl.y, parse.c,
** schema.c): accept and reject tables with the exact canonical text and
** the exact error messages, the canonical-text round trip, and the values
** a parse puts into ks_schema.
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/schema.h"

Suite *keyschema_ddl_suite(void);

/* Accepted clauses and their canonical text. */
static const struct {
  const char *zIn, *zCanon;
} aAccept[] = {
    {"KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', "
     "FAMILY stats (cpu INT64, mem INT64) MAX VERSIONS 3, FAMILY meta MAX AGE "
     "'30d'",
     "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', "
     "FAMILY stats (cpu INT64 BIG ENDIAN, mem INT64 BIG ENDIAN) MAX VERSIONS "
     "3, FAMILY meta MAX AGE '30d'"},
    {"key (device string, id string, day int64 decimal(8)), family stats max "
     "versions 3",
     "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', "
     "FAMILY stats MAX VERSIONS 3"},
    {"KEY (k BYTES)", "KEY (k BYTES)"},
    {"KEY (k STRING UTF8)", "KEY (k STRING)"},
    {"KEY (k BYTES RAW)", "KEY (k BYTES)"},
    {"KEY (n INT64)", "KEY (n INT64 ORDERED CODE)"},
    {"KEY (n INT64 BIG ENDIAN)", "KEY (n INT64 BIG ENDIAN)"},
    {"KEY (t TIMESTAMP REVERSED DECIMAL(16))",
     "KEY (t TIMESTAMP REVERSED DECIMAL(16))"},
    {"KEY (k STRING) DELIMITED BY '#'", "KEY (k STRING) DELIMITED BY '#'"},
    {"KEY (a STRING, b BYTES) DELIMITED BY '||'",
     "KEY (a STRING, b BYTES) DELIMITED BY '||'"},
    {"KEY (a STRING, b STRING) DELIMITED BY X'00'",
     "KEY (a STRING, b STRING) DELIMITED BY X'00'"},
    {"KEY (a STRING, b STRING) DELIMITED BY X'2301'",
     "KEY (a STRING, b STRING) DELIMITED BY X'2301'"},
    {"KEY (a STRING, n INT64, t TIMESTAMP BIG ENDIAN) ORDERED CODE",
     "KEY (a STRING, n INT64 ORDERED CODE, t TIMESTAMP BIG ENDIAN) ORDERED "
     "CODE"},
    {"KEY (a STRING, n INT64 DECIMAL(19)) DELIMITED BY '/' SALT 16",
     "KEY (a STRING, n INT64 DECIMAL(19)) DELIMITED BY '/' SALT 16"},
    {"KEY (a STRING) SALT 256 DELIMITED BY ':'",
     "KEY (a STRING) DELIMITED BY ':' SALT 256"},
    {"KEY (\"key\" STRING, `table` BYTES, [max] INT64 ORDERED CODE) ORDERED "
     "CODE",
     "KEY (\"key\" STRING, \"table\" BYTES, \"max\" INT64 ORDERED CODE) "
     "ORDERED CODE"},
    {"KEY (\"we\"\"ird name\" STRING)", "KEY (\"we\"\"ird name\" STRING)"},
    {"FAMILY \"my-fam.v1\" (q INT64 DECIMAL(5), r INT64 DECIMAL, x FLOAT64, j "
     "JSON, b BYTES, s STRING)",
     "FAMILY \"my-fam.v1\" (q INT64 DECIMAL(5), r INT64 DECIMAL, x FLOAT64, j "
     "JSON, b BYTES, s STRING)"},
    {"FAMILY f MAX VERSIONS 2 MAX AGE '36h' INTERSECTION",
     "FAMILY f MAX VERSIONS 2 MAX AGE '36h' INTERSECTION"},
    {"FAMILY f MAX AGE '90m' UNION", "FAMILY f MAX AGE '90m'"},
    {"FAMILY f MAX AGE '45s', FAMILY g MAX AGE '500ms', FAMILY h MAX AGE '7 "
     "us', FAMILY i MAX AGE '48h'",
     "FAMILY f MAX AGE '45s', FAMILY g MAX AGE '500ms', FAMILY h MAX AGE "
     "'7us', FAMILY i MAX AGE '2d'"},
    {"FAMILY c (clicks INT64) AGGREGATE SUM MAX AGE '1d'",
     "FAMILY c (clicks INT64 BIG ENDIAN) MAX AGE '1d' AGGREGATE SUM"},
    {"FAMILY u (sketch BYTES, n INT64) AGGREGATE HLL",
     "FAMILY u (sketch BYTES, n INT64 BIG ENDIAN) AGGREGATE HLL"},
    {"FAMILY m AGGREGATE max, FAMILY n AGGREGATE MIN",
     "FAMILY m AGGREGATE MAX, FAMILY n AGGREGATE MIN"},
    {"STORE 'data/app.wcs', TABLE 'metrics', SYNC NORMAL, COMPRESSION 0, "
     "HISTORY",
     "STORE 'data/app.wcs', TABLE 'metrics', SYNC NORMAL, COMPRESSION 0, "
     "HISTORY"},
    {"TABLE 'x'", "TABLE 'x'"},
    {"TABLE 'metrics', HISTORY", "TABLE 'metrics', HISTORY"},
    {"SYNC off", "SYNC OFF"},
    {"COMPRESSION 19 -- a comment", "COMPRESSION 19"},
    {"CACHE '256MiB'", "CACHE '256MiB'"},
    {"CACHE '2g', COMPRESSION 3", "COMPRESSION 3, CACHE '2GiB'"},
    {"cache '1048576'", "CACHE '1MiB'"},
    {"CACHE '1536 KB'", "CACHE '1536KiB'"},
    {"CACHE '1048577B'", "CACHE '1048577B'"},
    {"/* leading comment */ KEY (a STRING)", "KEY (a STRING)"},
    {"KEY (a STRING) SALT 1", "KEY (a STRING) SALT 1"},
};

static const struct {
  int rc;
  const char *zIn, *zErr;
} aReject[] = {
    {WCS_SCHEMA, "KEY (a INT46)",
     "near \"INT46\": unknown type; expected STRING, BYTES, INT64 or "
     "TIMESTAMP"},
    {WCS_ERROR, "KEY (a STRING) DELIMITED '#'",
     "near \"'#'\": syntax error; expected BY"},
    {WCS_ERROR, "FAMLY x",
     "near \"FAMLY\": syntax error; expected KEY, FAMILY, STORE, TABLE, SYNC, "
     "HISTORY, COMPRESSION, CACHE or the end of the clause"},
    {WCS_SCHEMA, "KEY (a INT64 LITTLE ENDIAN)",
     "near \"LITTLE\": unknown encoding; expected BIG ENDIAN, ORDERED CODE, "
     "DECIMAL(n) or REVERSED DECIMAL(n)"},
    {WCS_SCHEMA, "KEY (a STRING, b INT64)",
     "near \"INT64\": key field \"b\" is INT64 ORDERED CODE (the default "
     "encoding), whose bytes can be at or below the delimiter, breaking the "
     "key order; use DECIMAL(n) or REVERSED DECIMAL(n), or KEY (...) ORDERED "
     "CODE"},
    {WCS_SCHEMA, "KEY (a STRING, b INT64 BIG ENDIAN)",
     "near \"BIG\": key field \"b\" is INT64 BIG ENDIAN, whose bytes can be at "
     "or below the delimiter, breaking the key order; use DECIMAL(n) or "
     "REVERSED DECIMAL(n), or KEY (...) ORDERED CODE"},
    {WCS_SCHEMA, "KEY (a STRING, b INT64 DECIMAL)",
     "near \"DECIMAL\": DECIMAL needs a width in digits, e.g. DECIMAL(8)"},
    {WCS_SCHEMA, "KEY (a STRING, b INT64 DECIMAL(0))",
     "near \"0\": a DECIMAL width must be 1 to 19 (INT64 values have at most "
     "19 digits)"},
    {WCS_SCHEMA, "KEY (a STRING, b INT64 DECIMAL(20))",
     "near \"20\": a DECIMAL width must be 1 to 19 (INT64 values have at most "
     "19 digits)"},
    {WCS_SCHEMA, "KEY (a STRING, b INT64 DECIMAL(5)) DELIMITED BY 'x'",
     "near \"'x'\": the delimiter must sort below the digits of DECIMAL key "
     "field \"b\": its first byte must be below '0' (0x30)"},
    {WCS_SCHEMA, "KEY (a STRING, b STRING) DELIMITED BY X'FF'",
     "near \"X'FF'\": no byte sorts above a delimiter starting with 0xFF; "
     "fields could hold nothing"},
    {WCS_SCHEMA, "KEY (a STRING, b STRING) DELIMITED BY ''",
     "near \"''\": a delimiter has 1 to 50 bytes"},
    {WCS_SCHEMA, "KEY (a STRING, a STRING)",
     "near \"a\": the name \"a\" is already used by key field \"a\""},
    {WCS_SCHEMA, "KEY (a STRING, A BYTES)",
     "near \"A\": the name \"A\" is already used by key field \"a\""},
    {WCS_SCHEMA, "KEY (a STRING), FAMILY a",
     "near \"a\": the name \"a\" is already used by key field \"a\""},
    {WCS_SCHEMA, "FAMILY stats, KEY (Stats STRING)",
     "near \"Stats\": the name \"Stats\" is already used by family \"stats\""},
    {WCS_SCHEMA, "KEY (_key STRING)",
     "near \"_key\": \"_key\" is reserved for the raw row key"},
    {WCS_SCHEMA, "KEY (_TIMESTAMP INT64)",
     "near \"_TIMESTAMP\": \"_timestamp\" is reserved for the cell timestamp"},
    {WCS_SCHEMA, "FAMILY \"_key\"",
     "near \"\"_key\"\": \"_key\" is reserved for the raw row key"},
    {WCS_SCHEMA, "FAMILY f (_timestamp INT64)",
     "near \"_timestamp\": \"_timestamp\" is reserved for the cell timestamp"},
    {WCS_SCHEMA, "FAMILY \"bad name\"",
     "near \"\"bad name\"\": family names have 1 to 64 characters from "
     "[-_.a-zA-Z0-9] and do not start with '-' or '.'"},
    {WCS_SCHEMA, "FAMILY \".dot\"",
     "near \"\".dot\"\": family names have 1 to 64 characters from "
     "[-_.a-zA-Z0-9] and do not start with '-' or '.'"},
    {WCS_SCHEMA,
     "FAMILY "
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
     "near \"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\": family names have "
     "1 to 64 characters from [-_.a-zA-Z0-9] and do not start with '-' or '.'"},
    {WCS_SCHEMA, "FAMILY f, FAMILY f",
     "near \"f\": the name \"f\" is already used by family \"f\""},
    {WCS_SCHEMA, "FAMILY f (q INT64), FAMILY g (q STRING)",
     "near \"q\": the name \"q\" is already used by column \"q\" of family "
     "\"f\""},
    {WCS_SCHEMA, "KEY (q STRING), FAMILY f (q INT64)",
     "near \"q\": the name \"q\" is already used by key field \"q\""},
    {WCS_SCHEMA, "FAMILY f (q INT32)",
     "near \"INT32\": unknown type; expected INT64, FLOAT64, STRING, BYTES or "
     "JSON"},
    {WCS_SCHEMA, "FAMILY f (q FLOAT64 DECIMAL)",
     "near \"DECIMAL\": unknown encoding for a FLOAT64 column; expected BIG "
     "ENDIAN"},
    {WCS_SCHEMA, "FAMILY f (q STRING UTF16)",
     "near \"UTF16\": a STRING or JSON column takes no encoding (UTF-8)"},
    {WCS_SCHEMA, "FAMILY f MAX VERSIONS 0",
     "near \"0\": MAX VERSIONS must be 1 to 2147483647"},
    {WCS_SCHEMA, "FAMILY f MAX VERSIONS 2 MAX VERSIONS 3",
     "near \"MAX\": MAX VERSIONS is given twice"},
    {WCS_SCHEMA, "FAMILY f MAX AGE '30x'",
     "near \"'30x'\": MAX AGE is a positive whole number and a unit: d, h, m, "
     "s, ms or us (e.g. '30d', '500ms')"},
    {WCS_SCHEMA, "FAMILY f MAX AGE '-5d'",
     "near \"'-5d'\": MAX AGE is a positive whole number and a unit: d, h, m, "
     "s, ms or us (e.g. '30d', '500ms')"},
    {WCS_SCHEMA, "FAMILY f MAX AGE '0s'",
     "near \"'0s'\": MAX AGE is a positive whole number and a unit: d, h, m, "
     "s, ms or us (e.g. '30d', '500ms')"},
    {WCS_SCHEMA, "FAMILY f MAX AGE '106751992d'",
     "near \"'106751992d'\": MAX AGE is too long: at most 106751991 days "
     "(2^63 microseconds; for no age limit, leave MAX AGE out)"},
    {WCS_SCHEMA, "FAMILY f MAX AGE '99999999999999999999us'",
     "near \"'99999999999999999999us'\": MAX AGE is too long: at most "
     "106751991 days (2^63 microseconds; for no age limit, leave MAX AGE "
     "out)"},
    {WCS_SCHEMA, "FAMILY f INTERSECTION",
     "near \"INTERSECTION\": INTERSECTION combines two rules; give both MAX "
     "VERSIONS and MAX AGE"},
    {WCS_SCHEMA, "FAMILY f MAX AGE '1d' UNION INTERSECTION",
     "near \"INTERSECTION\": give one of UNION and INTERSECTION, once"},
    {WCS_SCHEMA, "FAMILY f AGGREGATE AVG",
     "near \"AVG\": unknown aggregate; expected SUM, MIN, MAX or HLL"},
    {WCS_SCHEMA, "FAMILY f (q STRING) AGGREGATE SUM",
     "near \"SUM\": column \"q\" of aggregate family \"f\" must be INT64 (BIG "
     "ENDIAN, the aggregate's format)"},
    {WCS_SCHEMA, "KEY (a STRING) SALT 0",
     "near \"0\": SALT must be 1 to 256 buckets"},
    {WCS_SCHEMA, "KEY (a STRING) SALT 257",
     "near \"257\": SALT must be 1 to 256 buckets"},
    {WCS_SCHEMA, "KEY (a STRING) SALT 2 SALT 3",
     "near \"SALT\": SALT is given twice"},
    {WCS_SCHEMA, "KEY (a STRING) ORDERED CODE DELIMITED BY '#'",
     "near \"DELIMITED\": give one of DELIMITED BY and ORDERED CODE, once"},
    {WCS_SCHEMA, "KEY (a STRING), KEY (b STRING)",
     "near \"KEY\": a table has one KEY clause"},
    {WCS_ERROR, "KEY (a STRING) ORDERED",
     "near the end of a clause: syntax error; expected CODE"},
    {WCS_SCHEMA, "KEY (a STRING DECIMAL(3))",
     "near \"DECIMAL\": a STRING key field takes no encoding (it is stored as "
     "UTF-8)"},
    {WCS_SCHEMA, "KEY (a BYTES UTF8)",
     "near \"UTF8\": a BYTES key field takes no encoding (it is stored as raw "
     "bytes)"},
    {WCS_SCHEMA, "KEY (a INT64 BIG ENDIAN(8))",
     "near \"8\": only DECIMAL and REVERSED DECIMAL take a width"},
    {WCS_ERROR, "KEY ()", "near \")\": syntax error; expected a name"},
    {WCS_ERROR, "KEY a STRING", "near \"a\": syntax error; expected \"(\""},
    {WCS_SCHEMA, "STORE ''",
     "near \"''\": the STORE path must be a non-empty string without NUL "
     "bytes"},
    {WCS_SCHEMA, "STORE 'a', STORE 'b'",
     "near \"STORE\": STORE is given twice"},
    {WCS_SCHEMA, "TABLE 't', TABLE 'u'",
     "near \"TABLE\": TABLE is given twice"},
    {WCS_SCHEMA, "SYNC SOMETIMES",
     "near \"SOMETIMES\": unknown sync mode; expected FULL, NORMAL or OFF"},
    {WCS_SCHEMA, "SYNC FULL, SYNC OFF", "near \"SYNC\": SYNC is given twice"},
    {WCS_SCHEMA, "COMPRESSION 20",
     "near \"20\": the COMPRESSION level must be 0 to 19 (zstd levels; 0 = "
     "none)"},
    {WCS_SCHEMA, "COMPRESSION 3, COMPRESSION 4",
     "near \"COMPRESSION\": COMPRESSION is given twice"},
    {WCS_SCHEMA, "CACHE '64 furlongs'",
     "near \"'64 furlongs'\": bad CACHE size '64 furlongs'; expected a "
     "number of bytes with an optional unit, e.g. '256MiB' (units B, KiB, "
     "MiB, GiB)"},
    {WCS_SCHEMA, "CACHE 'MiB'",
     "near \"'MiB'\": bad CACHE size 'MiB'; expected a number of bytes with "
     "an optional unit, e.g. '256MiB' (units B, KiB, MiB, GiB)"},
    {WCS_SCHEMA, "CACHE '1000KiB'",
     "near \"'1000KiB'\": CACHE size '1000KiB' is out of range; give 1MiB "
     "to 1024GiB"},
    {WCS_SCHEMA, "CACHE '2000GiB'",
     "near \"'2000GiB'\": CACHE size '2000GiB' is out of range; give 1MiB "
     "to 1024GiB"},
    {WCS_SCHEMA, "CACHE '1MiB', CACHE '2MiB'",
     "near \"CACHE\": CACHE is given twice"},
    {WCS_ERROR, "CACHE 64",
     "near \"64\": syntax error; expected a 'quoted' string"},
    {WCS_SCHEMA, "HISTORY, HISTORY",
     "near \"HISTORY\": HISTORY is given twice"},
    {WCS_SCHEMA, "KEY (value STRING), HISTORY",
     "near \"HISTORY\": key field \"value\" clashes with a column of HISTORY "
     "tables (family, qualifier, _timestamp, value)"},
    {WCS_SCHEMA, "HISTORY, KEY (family STRING)",
     "near \"family\": \"family\" is a column of HISTORY tables (family, "
     "qualifier, _timestamp, value)"},
    {WCS_ERROR, "KEY (a STRING @)", "near \"@\": unrecognized token"},
    {WCS_ERROR, "KEY (a STRING) DELIMITED BY 'abc",
     "near \"'abc\": unterminated string, name or comment"},
    {WCS_ERROR, "KEY (a STRING) DELIMITED BY X'2'",
     "near \"X'2'\": an X'...' literal needs an even number of hex digits"},
    {WCS_SCHEMA, "KEY (a STRING) SALT 99999999999999999999999",
     "near \"99999999999999999999999\": SALT must be 1 to 256 buckets"},
    {WCS_ERROR, "KEY (8a STRING)", "near \"8a\": unrecognized token"},
    /* a name with '-' or '.' unquoted: the whole name, quoted */
    {WCS_ERROR, "FAMILY cf-1",
     "near \"-\": unrecognized token; a name with '-' or '.' must be "
     "quoted: \"cf-1\""},
    {WCS_ERROR, "FAMILY my-fam.x (q INT64)",
     "near \"-\": unrecognized token; a name with '-' or '.' must be "
     "quoted: \"my-fam.x\""},
    {WCS_ERROR, "FAMILY f MAX VERSIONS -1",
     "near \"-\": unrecognized token; the numbers of these clauses are "
     "whole numbers without a sign"},
    {WCS_ERROR, "KEY (a STRING",
     "near the end of a clause: syntax error; expected \",\" or \")\""},
    {WCS_ERROR, "FAMILY f (q INT64",
     "near the end of a clause: syntax error; expected \",\" or \")\""},
    {WCS_ERROR, "KEY (a STRING),",
     "near the end of a clause: syntax error; expected KEY, FAMILY, STORE, "
     "TABLE, SYNC, HISTORY, COMPRESSION or CACHE"},
    {WCS_ERROR, "FAMILY 'x'",
     "near \"'x'\": syntax error; expected the family's name"},
    /* a bare name where a type or a keyword's word is due says which */
    {WCS_ERROR, "KEY (a STRING, b)",
     "near \")\": syntax error; expected the type of \"b\" (e.g. STRING or "
     "INT64)"},
    {WCS_ERROR, "FAMILY f (q, r INT64)",
     "near \",\": syntax error; expected the type of \"q\" (e.g. STRING or "
     "INT64)"},
    {WCS_ERROR, "SYNC",
     "near the end of a clause: syntax error; expected FULL, "
     "NORMAL or OFF"},
    {WCS_ERROR, "FAMILY f AGGREGATE",
     "near the end of a clause: syntax error; expected SUM, MIN, MAX or HLL"},
    {WCS_SCHEMA,
     "KEY (a STRING) DELIMITED BY "
     "'012345678901234567890123456789012345678901234567890'",
     "near \"'012345678901234567890123456789012345678...\": a delimiter has 1 "
     "to 50 bytes"},
    {WCS_ERROR, "FAMILY f /* unterminated",
     "near \"/* unterminated\": unterminated string, name or comment"},
    {WCS_SCHEMA, "KEY (a INT64 BIG ENDIANS)",
     "near \"ENDIANS\": unknown encoding; expected BIG ENDIAN, ORDERED CODE, "
     "DECIMAL(n) or REVERSED DECIMAL(n)"},
    {WCS_SCHEMA, "KEY (a INT64 REVERSED)",
     "near \"REVERSED\": unknown encoding; expected BIG ENDIAN, ORDERED CODE, "
     "DECIMAL(n) or REVERSED DECIMAL(n)"},
    {WCS_ERROR, "FAMILY f AGGREGATE HLL (q STRING)",
     "near \"(\": syntax error; expected \",\" or the end of the clause"},
};

static ks_schema *mustParse(const char *z) {
  ks_schema *s = NULL;
  char *zErr = NULL;
  int rc = ks_parse_text(z, &s, &zErr);
  ck_assert_msg(rc == WCS_OK, "parse of [%s] failed: %s", z, zErr);
  free(zErr);
  return s;
}

START_TEST(test_ddl_accepts_and_prints_canonical_text) {
  ks_schema *s = mustParse(aAccept[_i].zIn), *s2;
  char *zText = NULL, *zText2 = NULL;
  ck_assert_int_eq(ks_schema_text(s, &zText), WCS_OK);
  ck_assert_str_eq(zText, aAccept[_i].zCanon);
  /* the canonical text re-parses to an equal schema and prints the same */
  s2 = mustParse(zText);
  ck_assert(ks_schema_equal(s, s2));
  ck_assert_int_eq(ks_schema_text(s2, &zText2), WCS_OK);
  ck_assert_str_eq(zText2, zText);
  free(zText);
  free(zText2);
  ks_schema_free(s);
  ks_schema_free(s2);
}
END_TEST

START_TEST(test_ddl_rejects_with_message_near_the_token) {
  ks_schema *s = (ks_schema *)1;
  char *zErr = NULL;
  int rc = ks_parse_text(aReject[_i].zIn, &s, &zErr);
  ck_assert_msg(rc == aReject[_i].rc, "[%s]: rc %d, expected %d (%s)",
                aReject[_i].zIn, rc, aReject[_i].rc, zErr);
  ck_assert_ptr_null(s);
  ck_assert_ptr_nonnull(zErr);
  ck_assert_str_eq(zErr, aReject[_i].zErr);
  free(zErr);
}
END_TEST

START_TEST(test_ddl_design_example_fills_the_schema) {
  ks_schema *s = mustParse(aAccept[0].zIn);
  ck_assert_int_eq(s->nField, 3);
  ck_assert_str_eq(s->aField[0].zName, "device");
  ck_assert_int_eq(s->aField[0].eType, KS_STRING);
  ck_assert_int_eq(s->aField[0].eEnc, KS_ENC_UTF8);
  ck_assert_int_eq(s->aField[2].eType, KS_INT64);
  ck_assert_int_eq(s->aField[2].eEnc, KS_ENC_DECIMAL);
  ck_assert_int_eq(s->aField[2].nWidth, 8);
  ck_assert_int_eq(s->eStruct, KS_STRUCT_DELIMITED);
  ck_assert_int_eq(s->nDelim, 1);
  ck_assert_int_eq(s->aDelim[0], '#');
  ck_assert_int_eq(s->nSalt, 0);
  ck_assert_int_eq(s->nFamily, 2);
  ck_assert_str_eq(s->aFamily[0].zName, "stats");
  ck_assert_int_eq(s->aFamily[0].nMaxVersions, 3);
  ck_assert_int_eq(s->aFamily[0].nMaxAgeMicros, 0);
  ck_assert_int_eq(s->aFamily[0].iFirstQual, 0);
  ck_assert_int_eq(s->aFamily[0].nQual, 2);
  ck_assert_int_eq(s->aFamily[1].nMaxAgeMicros, 30LL * 86400 * 1000000);
  ck_assert_int_eq(s->aFamily[1].nQual, 0);
  ck_assert_int_eq(s->aFamily[1].eGc, KS_GC_UNION);
  ck_assert_int_eq(s->nQual, 2);
  ck_assert_str_eq(s->aQual[1].zName, "mem");
  ck_assert_int_eq(s->aQual[1].iFamily, 0);
  ck_assert_int_eq(s->aQual[1].eVType, KS_V_INT64);
  ck_assert_int_eq(s->aQual[1].eEnc, KS_ENC_BIG_ENDIAN);
  ck_assert_ptr_null(s->zStore);
  ck_assert_ptr_null(s->zTable);
  ck_assert_int_eq(s->iSync, -1);
  ck_assert_int_eq(s->iZstdLevel, -1);
  ck_assert_int_eq(s->bHistory, 0);
  ck_assert_int_eq(s->bKeyClause, 1);
  ck_assert_int_eq(s->nClause, 3);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_args_are_one_clause_each) {
  /* as SQLite passes them to xCreate: argv[3..] */
  const char *azArg[] = {
      "KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#'",
      "FAMILY stats (cpu INT64, mem INT64) MAX VERSIONS 3",
      " FAMILY meta MAX AGE '30d' ",
  };
  ks_schema *s = NULL, *s2;
  char *zErr = NULL;
  ck_assert_int_eq(ks_parse_args(3, azArg, &s, &zErr), WCS_OK);
  s2 = mustParse(aAccept[0].zIn);
  ck_assert(ks_schema_equal(s, s2));
  ks_schema_free(s);
  ks_schema_free(s2);
}
END_TEST

START_TEST(test_ddl_args_reject_an_empty_clause) {
  const char *azArg[] = {"KEY (a STRING)", "  "};
  ks_schema *s = NULL;
  char *zErr = NULL;
  ck_assert_int_eq(ks_parse_args(2, azArg, &s, &zErr), WCS_ERROR);
  ck_assert_str_eq(zErr, "near the end of a clause: syntax error; expected "
                         "KEY, FAMILY, STORE, TABLE, SYNC, HISTORY, "
                         "COMPRESSION or CACHE");
  free(zErr);
}
END_TEST

START_TEST(test_ddl_table_only_attaches_to_stored_schema) {
  const char *azArg[] = {"TABLE 'metrics'"};
  ks_schema *s = NULL;
  char *zErr = NULL;
  ck_assert_int_eq(ks_parse_args(1, azArg, &s, &zErr), WCS_OK);
  ck_assert_int_eq(s->nField, 0);
  ck_assert_int_eq(s->eStruct, KS_STRUCT_NONE);
  ck_assert_int_eq(s->nFamily, 0);
  ck_assert_int_eq(s->bKeyClause, 0);
  ck_assert_str_eq(s->zTable, "metrics");
  ck_assert_int_eq(s->nClause, 1);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_no_arguments_is_a_raw_key_table) {
  ks_schema *s = NULL;
  char *zErr = NULL;
  ck_assert_int_eq(ks_parse_args(0, NULL, &s, &zErr), WCS_OK);
  ck_assert_int_eq(s->nField, 0);
  ck_assert_int_eq(s->nClause, 0);
  ck_assert_int_eq(s->eStruct, KS_STRUCT_NONE);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_default_struct_is_singleton_or_hash_delimited) {
  ks_schema *s = mustParse("KEY (a STRING)");
  ck_assert_int_eq(s->eStruct, KS_STRUCT_SINGLETON);
  ck_assert_int_eq(s->nDelim, 0);
  ks_schema_free(s);
  s = mustParse("KEY (a STRING, b BYTES)");
  ck_assert_int_eq(s->eStruct, KS_STRUCT_DELIMITED);
  ck_assert_int_eq(s->nDelim, 1);
  ck_assert_int_eq(s->aDelim[0], '#');
  ks_schema_free(s);
  s = mustParse("KEY (n INT64)");
  ck_assert_int_eq(s->aField[0].eEnc, KS_ENC_ORDERED_CODE);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_max_age_units) {
  static const struct {
    const char *z;
    long long n;
  } a[] = {
      {"30d", 30LL * 86400000000LL},
      {"12h", 12LL * 3600000000LL},
      {"90m", 90LL * 60000000LL},
      {"45s", 45000000LL},
      {"500ms", 500000LL},
      {"7us", 7LL},
      {" 2 D ", 2LL * 86400000000LL},
  };
  size_t i;
  for (i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
    char z[100];
    ks_schema *s;
    snprintf(z, sizeof z, "FAMILY f MAX AGE '%s'", a[i].z);
    s = mustParse(z);
    ck_assert_int_eq(s->aFamily[0].nMaxAgeMicros, a[i].n);
    ks_schema_free(s);
  }
}
END_TEST

START_TEST(test_ddl_options_fill_the_schema) {
  ks_schema *s = mustParse("STORE 'x.wcs', TABLE 't', SYNC FULL, "
                           "COMPRESSION 7, HISTORY");
  ck_assert_str_eq(s->zStore, "x.wcs");
  ck_assert_str_eq(s->zTable, "t");
  ck_assert_int_eq(s->iSync, WCS_SYNC_FULL);
  ck_assert_int_eq(s->iZstdLevel, 7);
  ck_assert_int_eq(s->bHistory, 1);
  ks_schema_free(s);
  s = mustParse("SYNC OFF");
  ck_assert_int_eq(s->iSync, WCS_SYNC_OFF);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_aggregate_and_gc_fill_the_family) {
  ks_schema *s = mustParse("FAMILY c (n INT64) AGGREGATE SUM, FAMILY h "
                           "AGGREGATE HLL, FAMILY g MAX VERSIONS 5 "
                           "MAX AGE '1h' INTERSECTION");
  ck_assert_int_eq(s->aFamily[0].eAgg, KS_AGG_SUM);
  ck_assert_int_eq(s->aFamily[1].eAgg, KS_AGG_HLL);
  ck_assert_int_eq(s->aFamily[2].eAgg, KS_AGG_NONE);
  ck_assert_int_eq(s->aFamily[2].eGc, KS_GC_INTERSECTION);
  ck_assert_int_eq(s->aFamily[2].nMaxVersions, 5);
  ck_assert_int_eq(s->aFamily[2].nMaxAgeMicros, 3600000000LL);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_dup_is_equal_and_equal_sees_differences) {
  static const char *az[] = {
      "KEY (a STRING, b STRING)",
      "KEY (a STRING, b BYTES)",
      "KEY (a STRING, b STRING) DELIMITED BY '/'",
      "KEY (a STRING, b STRING) ORDERED CODE",
      "KEY (a STRING, b STRING) SALT 2",
      "KEY (a STRING, c STRING)",
      "KEY (a STRING, b STRING), FAMILY f",
      "KEY (a STRING, b STRING), FAMILY f MAX VERSIONS 1",
      "KEY (a STRING, b STRING), FAMILY f (q INT64)",
      "KEY (a STRING, b STRING), FAMILY f (q INT64 DECIMAL)",
      "KEY (a STRING, b STRING), STORE 's'",
      "KEY (a STRING, b STRING), TABLE 's'",
      "KEY (a STRING, b STRING), SYNC FULL",
      "KEY (a STRING, b STRING), COMPRESSION 1",
      "KEY (a STRING, b STRING), HISTORY",
  };
  int n = (int)(sizeof(az) / sizeof(az[0])), i, j;
  for (i = 0; i < n; i++) {
    ks_schema *a = mustParse(az[i]), *d = NULL;
    ck_assert_int_eq(ks_schema_dup(a, &d), WCS_OK);
    ck_assert(ks_schema_equal(a, d));
    for (j = 0; j < n; j++) {
      ks_schema *b = mustParse(az[j]);
      ck_assert_msg(ks_schema_equal(a, b) == (i == j), "%s vs %s", az[i],
                    az[j]);
      ks_schema_free(b);
    }
    ks_schema_free(a);
    ks_schema_free(d);
  }
}
END_TEST

START_TEST(test_ddl_lookup_by_name_ignores_ascii_case) {
  ks_schema *s = mustParse("KEY (Device STRING, id STRING), FAMILY Stats "
                           "(CPU INT64)");
  ck_assert_int_eq(ks_schema_field(s, "device"), 0);
  ck_assert_int_eq(ks_schema_field(s, "ID"), 1);
  ck_assert_int_eq(ks_schema_field(s, "cpu"), -1);
  ck_assert_int_eq(ks_schema_family(s, "stats"), 0);
  ck_assert_int_eq(ks_schema_qualifier(s, "cpu"), 0);
  ck_assert_int_eq(ks_schema_qualifier(s, "mem"), -1);
  ks_schema_free(s);
}
END_TEST

START_TEST(test_ddl_type_and_encoding_names) {
  ck_assert_str_eq(ks_type_name(KS_TIMESTAMP), "TIMESTAMP");
  ck_assert_str_eq(ks_enc_name(KS_ENC_REVERSED_DECIMAL), "REVERSED DECIMAL");
  ck_assert_str_eq(ks_enc_name(KS_ENC_ORDERED_CODE), "ORDERED CODE");
}
END_TEST

START_TEST(test_ddl_limits_on_counts) {
  /* 64 key fields parse, 65 do not */
  char z[4000];
  int i, n = 0;
  ks_schema *s = NULL;
  char *zErr = NULL;
  n += snprintf(z + n, sizeof z - (size_t)n, "KEY (");
  for (i = 0; i < 65; i++) {
    n +=
        snprintf(z + n, sizeof z - (size_t)n, "%sf%d STRING", i ? ", " : "", i);
  }
  snprintf(z + n, sizeof z - (size_t)n, ")");
  ck_assert_int_eq(ks_parse_text(z, &s, &zErr), WCS_SCHEMA);
  ck_assert_str_eq(zErr, "near \"f64\": a key has at most 64 fields");
  free(zErr);
  z[strlen(z) - strlen(", f64 STRING)")] = 0;
  strcat(z, ")");
  s = mustParse(z);
  ck_assert_int_eq(s->nField, 64);
  ks_schema_free(s);
}
END_TEST

Suite *keyschema_ddl_suite(void) {
  Suite *s = suite_create("keyschema_ddl");
  TCase *tc = tcase_create("ddl");
  tcase_add_loop_test(tc, test_ddl_accepts_and_prints_canonical_text, 0,
                      (int)(sizeof(aAccept) / sizeof(aAccept[0])));
  tcase_add_loop_test(tc, test_ddl_rejects_with_message_near_the_token, 0,
                      (int)(sizeof(aReject) / sizeof(aReject[0])));
  tcase_add_test(tc, test_ddl_design_example_fills_the_schema);
  tcase_add_test(tc, test_ddl_args_are_one_clause_each);
  tcase_add_test(tc, test_ddl_args_reject_an_empty_clause);
  tcase_add_test(tc, test_ddl_table_only_attaches_to_stored_schema);
  tcase_add_test(tc, test_ddl_no_arguments_is_a_raw_key_table);
  tcase_add_test(tc, test_ddl_default_struct_is_singleton_or_hash_delimited);
  tcase_add_test(tc, test_ddl_max_age_units);
  tcase_add_test(tc, test_ddl_options_fill_the_schema);
  tcase_add_test(tc, test_ddl_aggregate_and_gc_fill_the_family);
  tcase_add_test(tc, test_ddl_dup_is_equal_and_equal_sees_differences);
  tcase_add_test(tc, test_ddl_lookup_by_name_ignores_ascii_case);
  tcase_add_test(tc, test_ddl_type_and_encoding_names);
  tcase_add_test(tc, test_ddl_limits_on_counts);
  suite_add_tcase(s, tc);
  return s;
}
