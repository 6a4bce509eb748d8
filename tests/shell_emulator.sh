#!/usr/bin/env bash
# shell_emulator.sh — cross-check with Bigtable's own tools: the same cbt
# CSV is imported into the Bigtable emulator (with the real `cbt`) and into
# wcs (with .import), then prefix and range reads (`cbt read prefix=...`,
# `start=... end=...`) and the equivalent SQL on wcs must give the same
# keys, columns, timestamps and values. The emulator is started in the
# background on 127.0.0.1 and stopped by its PID at exit. Skips with a SKIP
# line when the emulator or cbt is not installed.
# Run: bash tests/shell_emulator.sh BUILD
source "$(dirname "$0")/data/shell-lib.bash" "$1"

EMU=${WCS_BIGTABLE_EMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}
if [ ! -x "$EMU" ] || ! command -v cbt >/dev/null 2>&1; then
  echo "SKIP: the Bigtable emulator ($EMU) or cbt is not installed"
  echo "0 passed, 0 failed"
  exit 0
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$EMU" -host 127.0.0.1 -port "$PORT" >emulator.log 2>&1 &
EMU_PID=$!
CLEANUP_PIDS="$EMU_PID"
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT
CBT="cbt -creds /dev/null -project p -instance i"
for i in $(seq 1 100); do
  $CBT ls >/dev/null 2>&1 && break
  sleep 0.1
done
if $CBT ls >/dev/null 2>&1; then ok "the emulator is up on 127.0.0.1:$PORT"; else
  not_ok "the emulator starts" "$(cat emulator.log)"
  finish
  exit 1
fi

CSV=$DATA/telemetry.cbt.csv
$CBT createtable tele >/dev/null 2>&1
$CBT createfamily tele stats_summary >/dev/null 2>&1
$CBT createfamily tele cell_plan >/dev/null 2>&1
out=$($CBT import tele "$CSV" timestamp=value-encoded 2>&1)
check_has "cbt import into the emulator" "$out" "Done importing"
out=$("$WCS" e.db ".import $CSV tele timestamp=value-encoded")
check_has "the same file into wcs" "$out" "imported"
"$WCS" e.db "CREATE VIRTUAL TABLE tele_h USING wcs(TABLE 'tele', HISTORY)" >/dev/null

# cbt read output -> "key|family:qualifier|timestamp|value" lines
parse_cbt() {
  python3 -c '
import sys, json, ast, datetime
key = col = ts = None
out = []
for line in sys.stdin.read().split("\n"):
    if line.startswith("----") or not line.strip():
        continue
    if not line.startswith(" "):
        key = line
    elif line.startswith("    "):
        s = line.strip()
        try:
            v = json.loads(s)
        except ValueError:
            v = ast.literal_eval(s)
        out.append("%s|%s|%d|%s" % (key, col, ts, v))
    else:
        col, _, when = line.strip().partition("@")
        col = col.strip()
        d = datetime.datetime.strptime(when.strip(), "%Y/%m/%d-%H:%M:%S.%f")
        d = d.replace(tzinfo=datetime.timezone.utc)
        ts = int(d.timestamp()) * 1000000 + d.microsecond
for l in sorted(out):
    print(l)
'
}
wcs_cells() {
  "$WCS" e.db ".mode list" "SELECT CAST(_key AS TEXT), family || ':' || CAST(qualifier AS TEXT),
    _timestamp, CAST(value AS TEXT) FROM tele_h WHERE $1" | LC_ALL=C sort
}

# compare NAME "CBT READ ARGS" "SQL WHERE"
compare() {
  local a b
  a=$(TZ=UTC $CBT read tele $2 2>&1 | parse_cbt)
  b=$(wcs_cells "$3")
  a=$(echo "$a" | LC_ALL=C sort)
  if [ -n "$a" ] && [ "$a" == "$b" ]; then
    ok "$1: $(echo "$a" | wc -l) cells agree"
  else
    not_ok "$1" "$(diff <(echo "$a") <(echo "$b") | head -20)"
  fi
}
compare "whole table" "" "1"
compare "prefix=phone#4c410523#" "prefix=phone#4c410523#" \
  "_key >= CAST('phone#4c410523#' AS BLOB) AND _key < CAST('phone#4c410523\$' AS BLOB)"
compare "prefix=tablet" "prefix=tablet" "CAST(_key AS TEXT) GLOB 'tablet*'"
compare "start= end= across devices" \
  "start=phone#5c10102#20190503 end=tablet#a0b81f74#20190502" \
  "_key >= CAST('phone#5c10102#20190503' AS BLOB) AND _key < CAST('tablet#a0b81f74#20190502' AS BLOB)"
compare "start= to the end" "start=tablet#c9f2e1d3#20190604" \
  "_key >= CAST('tablet#c9f2e1d3#20190604' AS BLOB)"

# lines that give a column again at the same timestamp: cbt import keeps
# the last line's value, and so does wcs
T=1556668800000000
printf ',stats_summary\n,os_build\nsame#1,v1@%s\nsame#1,v2@%s\nsame#1,v3@%s\n' \
  $T $T $T >same.cbt.csv
$CBT import tele same.cbt.csv timestamp=value-encoded >/dev/null 2>&1
out=$("$WCS" e.db ".import same.cbt.csv tele timestamp=value-encoded")
check_has "wcs counts such a cell once" "$out" "imported 1 rows (1 cells)"
compare "a cell given again at the same timestamp: the last line's value" \
  "prefix=same#" "CAST(_key AS TEXT) GLOB 'same#*'"

# keys of a prefix read = the rows SQL finds through the key schema
a=$(TZ=UTC $CBT read tele prefix=phone#4c410523# keys-only=true 2>&1 | grep -v '^----' | grep -v '^$' | grep -v '^ ' | LC_ALL=C sort)
"$WCS" e.db "CREATE VIRTUAL TABLE tk USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
  FAMILY stats_summary, FAMILY cell_plan)" \
  ".import $CSV tk timestamp=value-encoded" >/dev/null
b=$("$WCS" e.db ".mode list" "SELECT device || '#' || id || '#' || day FROM tk
    WHERE device = 'phone' AND id = '4c410523'" | LC_ALL=C sort)
check_eq "prefix read keys = SQL on the key fields" "$b" "$a"

finish
