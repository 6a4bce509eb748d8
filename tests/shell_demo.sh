#!/usr/bin/env bash
# shell_demo.sh — `wcs demo` (what `make demo` runs) builds the schema
# guide's tables, shows plans and results, and exits 0 without a terminal.
# Run: bash tests/shell_demo.sh BUILD
source "$(dirname "$0")/data/shell-lib.bash" "$1"

"$WCS" demo </dev/null >out.txt 2>err.txt
rc=$?
out=$(cat out.txt)
check_eq "wcs demo exits 0 when stdin is not a terminal" "$rc" "0"
check_eq "wcs demo prints no errors" "$(cat err.txt)" ""
check_has "telemetry key" "$out" "phone#4c410523#20200501"
check_has "product catalog" "$out" "hats#fedoras#"
check_has "multi-tenant keys" "$out" "altostrat"
check_has "reversed domains" "$out" "com.google.drive"
check_has "point lookup plan" "$out" "POINT LOOKUP"
check_has "prefix scan plan" "$out" "PREFIX SCAN"
check_has "range scan plan" "$out" "RANGE SCAN"
check_has "skip scan plan" "$out" "SKIP SCAN"
check_has "a result table" "$out" "| 4c410523 |"
after=$(sed -n '/rows per tenant after/,/^$/p' out.txt)
check_not "the removed tenant is gone" "$after" "examplepetstore"
check_has "the other tenants stay" "$after" "cymbal"
newest=$(sed -n '/newest three readings/,/^$/p' out.txt | grep -o '2020-05-01 [0-9:]*' | head -3 | tr '\n' ' ')
check_eq "newest readings first without ORDER BY" "$newest" \
  "2020-05-01 23:30:00 2020-05-01 23:00:00 2020-05-01 22:30:00 "
mkdir tmpd
TMPDIR=$WORK/tmpd "$WCS" demo </dev/null >out2.txt 2>&1
check_has "the demo store lives in a temporary directory" "$(cat out2.txt)" \
  "The store is $WORK/tmpd/wcs-demo-"
check_eq "the temporary store is removed at exit" "$(ls tmpd)" ""

check_rc "a demo whose output cannot be written fails" 1 \
  sh -c "'$WCS' demo </dev/null >/dev/full"

"$WCS" demo kept.db </dev/null >/dev/null 2>&1
check_rc "wcs demo DB keeps the database" 0 test -f kept.db
out=$("$WCS" kept.db "SELECT count(*) FROM products")
check_eq "... with its tables" "$out" "8"
"$WCS" demo kept.db </dev/null >out.txt 2>&1
check_eq "running the demo again on it works" "$?" "0"
before=$(sed -n '/rows per tenant before/,/^$/p' out.txt)
check_has "... and the tenant its tour removed is back before the removal" \
  "$before" "examplepetstore |   25"

finish
