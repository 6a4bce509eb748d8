#!/usr/bin/env bash
# sql_cli.sh — the wcs extension in the Debian `sqlite3` command-line shell,
# as a user meets it (DESIGN.md §2–§5): `.load <build>/wcs`, CREATE VIRTUAL
# TABLE, INSERT, a prefix scan and its EXPLAIN QUERY PLAN words, the store
# directory beside the database file, reopening the file in a new process
# (the table reconnects), and errors that say what is wrong.
#
# Usage: bash tests/sql_cli.sh BUILD_DIR    (ctest runs it as sh_sql_cli)
# Prints "SKIP: ..." and exits 0 only when the sqlite3 CLI is not installed.
set -u

build=${1:?usage: sql_cli.sh BUILD_DIR}
build=$(cd "$build" && pwd)
ext="$build/wcs"

if ! command -v sqlite3 >/dev/null 2>&1; then
  echo "SKIP: the sqlite3 command-line shell is not installed (apt-get install sqlite3)"
  exit 0
fi
if [ ! -f "$ext.so" ]; then
  echo "FAIL: $ext.so was not built"
  exit 1
fi

# An extension built with AddressSanitizer (gcc or clang) needs its
# runtime loaded first into an uninstrumented program.
. "$(dirname "$0")/lib/sanitizer_preload.sh" "$ext.so"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wcs-sql-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
db="$tmp/app.db"
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1))
  echo "FAIL $1"
  shift
  for line in "$@"; do printf '       %s\n' "$line"; done
}

# run SQL in a fresh sqlite3 process with the extension loaded; sets
# $out (stdout), $err (stderr), $rc
run() {
  out=$( { printf '.load %s\n' "$ext"; cat; } |
         sqlite3 -batch -bail "$db" 2>"$tmp/stderr")
  rc=$?
  err=$(cat "$tmp/stderr")
}

expect_out() { # name expected
  if [ "$rc" -eq 0 ] && [ "$out" = "$2" ]; then
    ok "$1"
  else
    bad "$1" "exit $rc" "expected: $(printf '%s' "$2" | tr '\n' '/')" \
        "got:      $(printf '%s' "$out" | tr '\n' '/')" "stderr:   $err"
  fi
}

# 1. create, insert, select with a prefix scan
run <<'EOF'
CREATE VIRTUAL TABLE metrics USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
  FAMILY stats (cpu INT64, mem INT64) MAX VERSIONS 3,
  FAMILY meta MAX AGE '30d'
);
INSERT INTO metrics(device, id, day, cpu, mem) VALUES
  ('phone', '4c410523', 20200501, 12, 300),
  ('phone', '4c410523', 20200502, 15, 310),
  ('phone', '4c4105231', 20200501, 99, 999),
  ('phone', '5e6f7a81', 20200501, 7, 120),
  ('tablet', '4c410523', 20200501, 3, 80);
SELECT device, id, day, cpu, mem FROM metrics
 WHERE device = 'phone' AND id = '4c410523' ORDER BY day;
EOF
expect_out "create, insert, prefix scan" \
"phone|4c410523|20200501|12|300
phone|4c410523|20200502|15|310"

# 2. the plan in words
run <<'EOF'
EXPLAIN QUERY PLAN
SELECT cpu FROM metrics WHERE device = 'phone' AND id = '4c410523';
EOF
if [ "$rc" -eq 0 ] && printf '%s' "$out" | grep -q 'PREFIX SCAN'; then
  ok "EXPLAIN QUERY PLAN shows PREFIX SCAN"
else
  bad "EXPLAIN QUERY PLAN shows PREFIX SCAN" "exit $rc" "got: $out" "stderr: $err"
fi
run <<'EOF'
EXPLAIN QUERY PLAN
SELECT cpu FROM metrics WHERE device = 'phone' AND id = '4c410523' AND day = 20200501;
EOF
if [ "$rc" -eq 0 ] && printf '%s' "$out" | grep -q 'POINT LOOKUP'; then
  ok "EXPLAIN QUERY PLAN shows POINT LOOKUP"
else
  bad "EXPLAIN QUERY PLAN shows POINT LOOKUP" "exit $rc" "got: $out" "stderr: $err"
fi

# 3. the store lives beside the database file
if [ -d "$db.wcs" ]; then
  ok "store directory app.db.wcs beside the database"
else
  bad "store directory app.db.wcs beside the database" "$(ls -la "$tmp")"
fi

# 4. a new process reopens the file: the table reconnects, rows are there
run <<'EOF'
SELECT count(*) FROM metrics;
SELECT _key, cpu FROM metrics WHERE device = 'phone' AND id = '4c410523' AND day = 20200502;
SELECT device, id, day FROM metrics WHERE starts_with(_key, 'phone#4c410523#') ORDER BY _key;
UPDATE metrics SET cpu = cpu + 1 WHERE device = 'tablet';
DELETE FROM metrics WHERE device = 'phone' AND id = '5e6f7a81';
EOF
expect_out "reopen: table reconnects, _key, starts_with, update, delete" \
"5
phone#4c410523#20200502|15
phone|4c410523|20200501
phone|4c410523|20200502"
run <<'EOF'
SELECT device, id, day, cpu FROM metrics ORDER BY device DESC, id DESC, day DESC;
EOF
expect_out "reopen again: writes of the previous process are there" \
"tablet|4c410523|20200501|4
phone|4c4105231|20200501|99
phone|4c410523|20200502|15
phone|4c410523|20200501|12"

# 5. errors print a clear message and fail the statement
run <<'EOF'
INSERT INTO metrics(device, id, day, cpu) VALUES ('ph#one', 'x', 20200501, 1);
EOF
if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -qi 'device' &&
   printf '%s' "$err" | grep -qi 'delimiter'; then
  ok "a key field holding the delimiter is rejected, naming the field"
else
  bad "a key field holding the delimiter is rejected, naming the field" \
      "exit $rc" "stdout: $out" "stderr: $err"
fi
run <<'EOF'
CREATE VIRTUAL TABLE broken USING wcs(KEY (a INT46));
EOF
if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -q 'INT46'; then
  ok "a bad CREATE VIRTUAL TABLE names the bad token"
else
  bad "a bad CREATE VIRTUAL TABLE names the bad token" "exit $rc" "stderr: $err"
fi
run <<'EOF'
SELECT count(*) FROM metrics;
EOF
expect_out "failed statements left nothing behind" "4"

echo "sql_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
