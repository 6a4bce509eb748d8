/*
** fuzz_ddl.c — fuzz target for the table DDL (keyschema/parse.c, ddl.y).
** Parses the input as schema text; when it parses, the canonical text must
** parse again to an equal schema and print the same text (the round trip
** the catalog relies on), and a copy must be equal. Seeds in
** tests/corpus/ddl/.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyschema/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *z;
  ks_schema *s = NULL, *s2 = NULL, *d = NULL;
  char *zErr = NULL, *zText = NULL, *zText2 = NULL;
  if (size > 8192) return 0;
  z = malloc(size + 1);
  if (z == NULL) return 0;
  memcpy(z, data, size);
  z[size] = 0;
  if (ks_parse_text(z, &s, &zErr) == WCS_OK) {
    if (zErr != NULL) abort();
    if (ks_schema_text(s, &zText) != WCS_OK) abort();
    if (ks_parse_text(zText, &s2, &zErr) != WCS_OK) abort();
    if (!ks_schema_equal(s, s2)) abort();
    if (ks_schema_text(s2, &zText2) != WCS_OK) abort();
    if (strcmp(zText, zText2) != 0) abort();
    if (ks_schema_dup(s, &d) != WCS_OK || !ks_schema_equal(s, d)) abort();
  } else {
    if (s != NULL) abort();
    if (zErr == NULL) abort(); /* every failure explains itself */
  }
  free(zErr);
  free(zText);
  free(zText2);
  ks_schema_free(s);
  ks_schema_free(s2);
  ks_schema_free(d);
  free(z);
  return 0;
}
