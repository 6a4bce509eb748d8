/*
** The Check runner. `wcs_check` runs every suite; `wcs_check NAME...` runs
** the named suites (ctest runs one per test). Suites are found by file name
** (tests/check_<name>.c defines <name>_suite()); see tests/CMakeLists.txt.
** CK_FORK=no in the environment runs tests in-process (for gdb/valgrind).
*/
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

int main(int argc, char **argv) {
  SRunner *sr = NULL;
  int nFailed;
  int i, j;

  for (i = 0; aSuite[i].zName; i++) {
    int want = argc < 2;
    for (j = 1; j < argc; j++) {
      if (strcmp(argv[j], aSuite[i].zName) == 0) want = 1;
    }
    if (!want) continue;
    if (sr == NULL) sr = srunner_create(aSuite[i].xSuite());
    else srunner_add_suite(sr, aSuite[i].xSuite());
  }
  if (sr == NULL) {
    fprintf(stderr, "wcs_check: no suite named");
    for (j = 1; j < argc; j++) fprintf(stderr, " %s", argv[j]);
    fprintf(stderr, "; known suites:");
    for (i = 0; aSuite[i].zName; i++) fprintf(stderr, " %s", aSuite[i].zName);
    fprintf(stderr, "\n");
    return 2;
  }
  srunner_run_all(sr, CK_NORMAL);
  nFailed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nFailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
