#!/usr/bin/env bash
# sql_processes.sh — two processes on one database (doc/sql.md, "Another
# process"): a Python program keeps the store open and commits
# transactions of ten rows each, while
#   - a second Python program reads the table over and over: every read
#     must show whole transactions (a multiple of ten rows, one batch
#     number per ten), never fewer than the read before, and in the end
#     every transaction the writer committed;
#   - the sqlite3 CLI reads the latest rows, and its INSERT fails with
#     SQLITE_BUSY, saying that the store is held by another process;
#   - the wcs shell lists and reads the table;
#   - after the writer exits, the CLI's INSERT goes through;
#   - a second writer killed (SIGKILL) in the middle of its commits: reads
#     before and after show whole transactions, and the next write (which
#     recovers the store) keeps every commit the reader saw.
#
# Usage: bash tests/sql_processes.sh BUILD_DIR   (ctest runs it as sh_sql_processes)
# Prints "SKIP: ..." and exits 0 only when /usr/bin/python3 (with
# load_extension) or the sqlite3 CLI is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/data/shell-lib.bash" "${1:?usage: sql_processes.sh BUILD_DIR}"
build=$BUILD
ext="$build/wcs"
py=/usr/bin/python3
tmp=$WORK
db="$tmp/app.db"

if [ ! -x "$py" ] || ! "$py" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "SKIP: $py with sqlite3 load_extension is not installed"
  exit 0
fi
if ! command -v sqlite3 >/dev/null 2>&1; then
  echo "SKIP: the sqlite3 command-line shell is not installed"
  exit 0
fi
. "$here/lib/sanitizer_preload.sh" "$ext.so"

cat >"$tmp/writer.py" <<'EOF'
import os, sqlite3, sys, time
db, ext, first, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
con = sqlite3.connect(db, isolation_level=None)
con.enable_load_extension(True)
con.load_extension(ext)
if first == 0:
    con.execute("CREATE VIRTUAL TABLE t USING wcs(KEY (b INT64 DECIMAL(6), i INT64 DECIMAL(2)), FAMILY f (v INT64))")
else:
    con.execute("SELECT count(*) FROM t").fetchall()  # open the store
print("ready", flush=True)
for b in range(first, first + n):
    con.execute("BEGIN")
    for i in range(10):
        con.execute("INSERT INTO t(b, i, v) VALUES (?, ?, ?)", (b, i, b * 10 + i))
    con.execute("COMMIT")
    time.sleep(0.002)  # let the reader in between commits
    if b == n // 2:
        con.execute("SELECT wcs_compact('t')").fetchall()
print("done", flush=True)
sys.stdin.readline()  # hold the store until told to go
con.close()
EOF

cat >"$tmp/reader.py" <<'EOF'
import sqlite3, sys
db, ext, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = sqlite3.connect(db, isolation_level=None)
con.enable_load_extension(True)
con.load_extension(ext)
prev, reads = -1, 0
while True:
    rows, batches, vsum = con.execute(
        "SELECT count(*), count(DISTINCT b), sum(v) FROM t").fetchone()
    reads += 1
    vsum = vsum or 0
    if rows != batches * 10 or rows < prev or vsum != rows * (rows - 1) // 2:
        print("bad read %d: %d rows, %d batches, sum %d, before %d rows"
              % (reads, rows, batches, vsum, prev), flush=True)
        sys.exit(1)
    prev = rows
    if n < 0 or rows == n * 10:  # n < 0: one read
        break
print("reads %d rows %d" % (reads, rows), flush=True)
EOF

nbatch=300
coproc WRITER { exec "$py" "$tmp/writer.py" "$db" "$ext" 0 "$nbatch" 2>&1; }
wpid=$WRITER_PID # bash unsets WRITER_PID once the coprocess has ended
CLEANUP_PIDS="$wpid"
read -r -t 60 line <&"${WRITER[0]}"
if [ "${line:-}" != "ready" ]; then
  not_ok "writer starts" "got: ${line:-nothing}"
  finish
  exit 1
fi

out=$(timeout 120 "$py" "$tmp/reader.py" "$db" "$ext" "$nbatch" 2>&1)
check_has "a reader process sees whole transactions while they commit" \
  "$out" "reads "

read -r -t 300 line <&"${WRITER[0]}"
if [ "${line:-}" != "done" ]; then
  not_ok "writer finishes" "got: ${line:-nothing}"
  finish
  exit 1
fi

got=$(printf '.load %s\nSELECT count(*), max(v) FROM t;\n' "$ext" |
      sqlite3 -batch "$db" 2>&1)
check_eq "the sqlite3 CLI reads the latest commit" "$got" \
  "$((nbatch * 10))|$((nbatch * 10 - 1))"

got=$(printf '.load %s\nINSERT INTO t(b, i, v) VALUES (999999, 0, 1);\n' "$ext" |
      sqlite3 -batch "$db" 2>&1)
check_has "a write beside the writer is refused, naming why" "$got" \
  "held by another process, which writes it"
check_has "... with SQLITE_BUSY" "$got" "(5)"

# the wcs shell too: its own commands read the store beside the writer
got=$(env -u LD_PRELOAD "$build/bin/wcs" "$db" ".tables" 2>&1; \
      env -u LD_PRELOAD "$build/bin/wcs" "$db" "SELECT count(*) FROM t" 2>&1)
check_eq "the wcs shell reads beside the writer" "$got" "t
$((nbatch * 10))"

echo go >&"${WRITER[1]}"
wait "$wpid"
CLEANUP_PIDS=""

got=$(printf '.load %s\nINSERT INTO t(b, i, v) VALUES (999999, 0, 1);\nSELECT count(*) FROM t;\n' "$ext" |
      sqlite3 -batch -bail "$db" 2>&1)
check_eq "once the writer has closed the store, the CLI writes" "$got" \
  "$((nbatch * 10 + 1))"
printf '.load %s\nDELETE FROM t WHERE b = 999999;\n' "$ext" |
  sqlite3 -batch -bail "$db"

# a writer killed in the middle of its commits: what a reader sees is
# whole transactions, before and after, and the next write recovers
coproc WRITER { exec "$py" "$tmp/writer.py" "$db" "$ext" "$nbatch" 100000 2>&1; }
wpid=$WRITER_PID
CLEANUP_PIDS="$wpid"
read -r -t 60 line <&"${WRITER[0]}"
check_eq "a second writer starts" "${line:-nothing}" "ready"
sleep 0.5
before=$("$py" "$tmp/reader.py" "$db" "$ext" -1 2>&1)
check_has "a read while it commits" "$before" "reads 1 rows"
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
CLEANUP_PIDS=""
after=$("$py" "$tmp/reader.py" "$db" "$ext" -1 2>&1)
check_has "a read after it was killed" "$after" "reads 1 rows"
nafter=${after##* }
got=$(printf '.load %s\nINSERT INTO t(b, i, v) VALUES (999999, 0, 1);\nSELECT count(*) FROM t;\n' "$ext" |
      sqlite3 -batch -bail "$db" 2>&1)
check_eq "the next write recovers the store and keeps every commit read" \
  "$got" "$((nafter + 1))"
finish
