#!/usr/bin/env bash
# shell_commands.sh — scripted tests of the wcs shell: every dot-command and
# output mode, one-shot arguments, scripts on stdin, exit status and error
# messages, attaching store tables. Run: bash tests/shell_commands.sh BUILD
source "$(dirname "$0")/data/shell-lib.bash" "$1"

# ---- output modes on a plain SQLite table
"$WCS" m.db "CREATE TABLE t(a, b)" \
  "INSERT INTO t VALUES (1, 'x'), (2.5, 'hello, \"w\"'), (NULL, x'00ff'), (3, 'two
lines')" >/dev/null
out=$("$WCS" m.db ".mode list" "SELECT * FROM t ORDER BY rowid")
check_eq "list mode: values joined by |" "$out" "1|x
2.5|hello, \"w\"
|x'00ff'
3|two
lines"

out=$("$WCS" m.db ".mode table" "SELECT * FROM t ORDER BY rowid")
check_eq "table mode frames, right-aligns numbers, escapes newlines" "$out" \
"+------+------------+
| a    | b          |
+------+------------+
|    1 | x          |
|  2.5 | hello, \"w\" |
| NULL | x'00ff'    |
|    3 | two\\nlines |
+------+------------+"

out=$("$WCS" m.db ".mode box" "SELECT a FROM t WHERE a = 1")
check_eq "box mode uses box characters" "$out" "┌───┐
│ a │
├───┤
│ 1 │
└───┘"

out=$("$WCS" m.db ".mode csv" "SELECT * FROM t ORDER BY rowid")
check_eq "csv mode quotes per RFC 4180" "$out" "$(printf 'a,b\r\n1,x\r\n2.5,"hello, ""w"""\r\n,x'"'"'00ff'"'"'\r\n3,"two\nlines"\r')"

out=$("$WCS" m.db ".mode json" "SELECT * FROM t ORDER BY rowid")
check_eq "json mode: an array of objects" "$out" '[{"a":1,"b":"x"},
{"a":2.5,"b":"hello, \"w\""},
{"a":null,"b":"x'"'"'00ff'"'"'"},
{"a":3,"b":"two\nlines"}]'
valid=$(printf '%s' "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
check_eq "json mode output parses as JSON" "$valid" "4"

out=$("$WCS" m.db ".mode line" "SELECT a, b AS longer FROM t WHERE a = 1")
check_eq "line mode: name = value" "$out" "     a = 1
longer = x"
out=$("$WCS" --mode line m.db "SELECT 1 AS abcd, 2 AS \"é\", 3 AS \"日\", 4 AS \"$(printf 'e\xcc\x81')\"")
check_eq "line mode: names aligned by display width, not bytes" "$out" "abcd = 1
   é = 2
  日 = 3
   $(printf 'e\xcc\x81') = 4"

# awkward values: text that is not UTF-8, wide characters, no rows
out=$("$WCS" --mode json m.db "SELECT CAST(x'41ff42' AS TEXT) AS t, 1 AS n")
valid=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.buffer.read())[0]["t"])' 2>&1)
check_eq "json mode: text that is not UTF-8 stays valid JSON" "$valid" "x'41ff42'"
out=$(printf 'SELECT 1 AS "\xff";\n' | "$WCS" --mode json m.db)
valid=$(printf '%s' "$out" | python3 -c 'import json,sys; print(list(json.loads(sys.stdin.buffer.read())[0]))' 2>&1)
check_eq "json mode: a column name that is not UTF-8 stays valid JSON" \
  "$valid" "[\"x'ff'\"]"
out=$("$WCS" --mode json m.db "SELECT 1 AS n WHERE 0")
check_eq "json mode: no rows is an empty array" "$out" "[]"
out=$("$WCS" --mode json m.db "CREATE TABLE IF NOT EXISTS j0(a)")
check_eq "json mode: a statement without columns prints nothing" "$out" ""
out=$("$WCS" --mode table m.db "SELECT CAST(x'41ff42' AS TEXT) AS t")
check_eq "table mode: bytes that are not UTF-8 appear as \\xNN" "$out" \
"+--------+
| t      |
+--------+
| A\\xffB |
+--------+"
out=$("$WCS" --mode table m.db "SELECT '日本' AS w, 'e'||char(769) AS c")
check_eq "table mode: wide and combining characters keep the frame" "$out" \
"+------+---+
| w    | c |
+------+---+
| 日本 | $(printf 'e\xcc\x81') |
+------+---+"

out=$("$WCS" m.db ".mode" )
check_eq ".mode without argument names the mode" "$out" "current output mode: list"
err=$("$WCS" m.db ".mode fancy" 2>&1 >/dev/null)
check_has ".mode rejects unknown modes" "$err" 'unknown mode "fancy"'

out=$("$WCS" --mode csv m.db "SELECT a FROM t WHERE a = 1")
check_eq "--mode option" "$out" "$(printf 'a\r\n1\r')"

# ---- headers and timer
out=$("$WCS" m.db ".headers on" "SELECT 1 AS one")
check_eq ".headers on in list mode" "$out" "one
1"
out=$("$WCS" m.db ".mode table" ".headers off" "SELECT 1 AS one")
check_eq ".headers off in table mode" "$out" "+---+
| 1 |
+---+"
err=$("$WCS" m.db ".headers maybe" 2>&1 >/dev/null)
check_has ".headers checks its argument" "$err" "expected on or off"
out=$("$WCS" m.db ".timer on" "SELECT 42")
check_has ".timer on prints the run time" "$out" "Run Time: real "
if [[ "$out" =~ Run\ Time:\ real\ [0-9]+\.[0-9]{3}\ user\ [0-9]+\.[0-9]{3}\ sys\ [0-9]+\.[0-9]{3}$ ]]; then
  ok ".timer gives seconds with three decimals, as documented"
else
  not_ok ".timer gives seconds with three decimals, as documented" "$out"
fi
out=$("$WCS" m.db ".timer on" ".timer off" "SELECT 42")
check_eq ".timer off" "$out" "42"

# ---- .help .show .quit .read
out=$("$WCS" m.db ".help")
for c in .backup .compact .explain .export .headers .help .import .keyviz .mode \
  .quit .exit .read .schema .show .stats .tables .timer; do
  check_has ".help lists $c" "$out" "$c "
done
out=$("$WCS" m.db ".show")
check_has ".show gives the mode" "$out" "mode: list"
out=$("$WCS" m.db ".quit" "SELECT 'not reached'")
check_eq ".quit stops" "$out" ""
check_rc ".exit CODE exits with CODE" 3 "$WCS" m.db ".exit 3" "SELECT 1"
printf 'SELECT 1;\n.exit 4\nSELECT 2;\n' | "$WCS" m.db >out.txt
check_eq "... from a script too, which it ends" "$?:$(cat out.txt)" "4:1"
"$WCS" m.db ".exit x" 2>err.txt
check_has ".exit with a CODE that is no number says so" "$(cat err.txt)" \
  "usage: .exit ?CODE?"
printf 'SELECT 7;\n.mode csv\nSELECT 8 AS x;\n' >script.sql
out=$("$WCS" m.db ".read script.sql")
check_eq ".read runs a file" "$out" "$(printf '7\nx\r\n8\r')"
printf '.read self.sql\n' >self.sql
"$WCS" m.db ".read nofile.sql" 2>err.txt
check_eq ".read of a missing file says why" "$(cat err.txt)" \
  'Error: cannot open "nofile.sql": No such file or directory'
check_rc ".read of a file that reads itself fails, not crashes" 1 \
  "$WCS" m.db ".read self.sql"
"$WCS" m.db ".read self.sql" 2>err.txt
check_has "... saying why" "$(cat err.txt)" "is there a cycle?"

# ---- scripts on stdin: multi-line statements, errors, exit status
out=$(printf 'SELECT 1;\nSELECT\n  2\n;\n-- a comment\nSELECT 3; SELECT 4;\n' | "$WCS" m.db)
check_eq "stdin script with multi-line statements" "$out" "1
2
3
4"
out=$(printf '/* a block comment */\n.mode json\nSELECT 1 AS a;\n/* two\nlines */\n.mode list\nSELECT 2 AS b; /* after */\n' | "$WCS" m.db 2>&1)
check_eq "block comments between statements leave a dot-command one" "$out" '[{"a":1}]
b
2'
printf 'SELECT 1;\nSELECT nosuch;\nSELECT 3;\n' | "$WCS" m.db >out.txt 2>err.txt
rc=$?
check_eq "script error: exit status 1" "$rc" "1"
check_eq "script error: stops at the first error" "$(cat out.txt)" "1"
check_eq "script error: message names the line" "$(cat err.txt)" \
  "Error: stdin line 2: no such column: nosuch"
printf 'SELECT 1;\n-- a comment\n\nSELECT nosuch;\n' | "$WCS" m.db 2>err.txt >/dev/null
check_eq "script error: the line where the statement starts, past comments" \
  "$(cat err.txt)" "Error: stdin line 4: no such column: nosuch"
"$WCS" --headers maybe m.db "SELECT 1" >/dev/null 2>err.txt
check_eq "--headers takes on or off only" "$(cat err.txt)" \
  'Error: expected on or off, not "maybe"'
check_rc "output that cannot be written is an error" 1 \
  sh -c "'$WCS' m.db 'SELECT 1' >/dev/full"
printf 'SELECT 1;\nSELECT (\n' | "$WCS" m.db >out.txt 2>err.txt
check_has "an unfinished statement at the end is an error" "$(cat err.txt)" "Error: stdin line 2"
printf 'SELECT 1;\nSELECT 2\0, 3;\nSELECT 4;\n' | "$WCS" m.db >out.txt 2>err.txt
rc=$?
check_eq "a NUL byte in a script line is an error naming the line" "$(cat err.txt)" \
  "Error: stdin line 2: a NUL byte at column 9; SQL and dot-commands cannot hold one (write it as char(0) or x'00' in SQL)"
check_eq "... which stops the script, running no part of that line" \
  "$rc $(cat out.txt)" "1 1"
printf 'SELECT\n1\0 + 1,\n2;\n' | "$WCS" m.db >out.txt 2>err.txt
check_has "... and drops the statement it belongs to" "$(cat err.txt)" \
  "stdin line 2: a NUL byte at column 2; SQL and dot-commands cannot hold one (write it as char(0) or x'00' in SQL); the unfinished statement is dropped"
check_eq "... running none of it" "$(cat out.txt)" ""

"$WCS" m.db "SELECT * FROM nosuch" >out.txt 2>err.txt
rc=$?
check_eq "one-shot SQL error: exit status 1" "$rc" "1"
check_eq "one-shot SQL error: message on stderr" "$(cat err.txt)" \
  "Error: no such table: nosuch"
check_eq "one-shot SQL error: nothing on stdout" "$(cat out.txt)" ""
check_rc "one-shot success: exit status 0" 0 "$WCS" m.db "SELECT 1"
check_rc "unknown dot-command: exit status 1" 1 "$WCS" m.db ".frobnicate"
check_rc "unknown option: exit status 1" 1 "$WCS" --frobnicate m.db
"$WCS" --mode 2>err.txt >/dev/null
check_has "--mode without its value says so" "$(cat err.txt)" \
  "Error: --mode needs a value: list, table, box, csv, json or line"
"$WCS" --headers 2>err.txt >/dev/null
check_has "--headers without its value says so" "$(cat err.txt)" \
  "Error: --headers needs a value: on or off"
"$WCS" m.db --mode csv "SELECT 1" >/dev/null 2>err.txt
check_has "an option after the database is not run as SQL" "$(cat err.txt)" \
  "Error: --mode: options go before the database"
"$WCS" import m.db t 2>err.txt >/dev/null
check_has "wcs import with too few arguments names what is missing" \
  "$(cat err.txt)" "Error: wcs import needs DB TABLE FILE"
out=$("$WCS" --help)
check_has "--help shows the usage" "$out" "Usage: wcs"
out=$("$WCS" --version)
check_has "--version" "$out" "wcs "

# default database: wcs.db in the current directory, store beside it
mkdir -p def && (cd def && printf '%s\n' \
  "CREATE VIRTUAL TABLE d USING wcs(FAMILY f);" \
  "INSERT INTO d(_key, f) VALUES ('k', json_object('q', 'v'));" | "$WCS" >/dev/null)
check_rc "default database is wcs.db" 0 test -f def/wcs.db
check_rc "its store is wcs.db.wcs/" 0 test -d def/wcs.db.wcs

# ---- Ctrl-C (SIGINT) without a terminal: a running statement is
# interrupted and the run fails; between statements the script stops
out=$(python3 - "$WCS" <<'PY'
import signal, subprocess, sys, time
wcs = sys.argv[1]
p = subprocess.Popen([wcs, "m.db",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT count(*) FROM c", "SELECT 'not reached'"],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(0.7)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=20)
print(p.returncode, out.decode().strip() or "-", err.decode().strip())
p = subprocess.Popen([wcs, "m.db"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdin.write(b"SELECT 1;\n")
p.stdin.flush()
time.sleep(0.7)
p.send_signal(signal.SIGINT)
p.wait(timeout=20)
print(p.returncode, p.stdout.read().decode().strip(),
      p.stderr.read().decode().strip())
PY
)
check_eq "SIGINT interrupts the running statement; the run fails" \
  "$(echo "$out" | sed -n 1p)" "1 - Error: interrupted"
check_eq "SIGINT between statements stops a script (status 130)" \
  "$(echo "$out" | sed -n 2p)" "130 1 Error: interrupted"

# ---- wcs tables: .tables, .schema, .explain, .stats, .compact
"$WCS" w.db "CREATE VIRTUAL TABLE metrics USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
  FAMILY stats (cpu INT64, mem INT64) MAX VERSIONS 3,
  FAMILY meta)" \
  "CREATE TABLE plain(x)" \
  "CREATE VIRTUAL TABLE metrics_history USING wcs(TABLE 'metrics', HISTORY)" \
  "INSERT INTO metrics(device, id, day, cpu, mem) VALUES
     ('phone', '4c410523', 20200501, 42, 7), ('phone', '4c410523', 20200502, 40, 8),
     ('tablet', 'a0b81f74', 20200501, 12, 3)" >/dev/null 2>err.txt
check_eq "creating wcs tables works" "$(cat err.txt)" ""

out=$("$WCS" w.db ".tables")
check_has ".tables lists wcs tables" "$out" "metrics"
check_has ".tables lists history views" "$out" "metrics_history"
check_has ".tables lists plain tables" "$out" "plain"
out=$("$WCS" w.db ".tables met%")
check_not ".tables PATTERN filters" "$out" "plain"
"$WCS" tw.db "CREATE TABLE abc(x)" "CREATE TABLE \"é\"(x)" \
  "CREATE TABLE \"日本\"(x)" "CREATE TABLE zz(x)" >/dev/null
check_eq ".tables lines names up by display width, not bytes" \
  "$("$WCS" tw.db ".tables")" "abc   zz    é     日本"

# a declaration whose tokens are apart by newlines, tabs and comments is
# still a wcs table to the commands
printf 'CREATE VIRTUAL TABLE nlfar\nUSING wcs(FAMILY f, STORE %s);\nINSERT INTO nlfar(_key, f) VALUES (%s, json_object(%s, %s));\nCREATE VIRTUAL TABLE\tt\t/* a ) */ USING -- note\n "wcs" (KEY (k STRING), FAMILY f);\n' \
  "'nlfar.wcs'" "'a'" "'q'" "'1'" | "$WCS" nl.db >/dev/null 2>err.txt
check_eq "CREATE VIRTUAL TABLE over several lines works" "$(cat err.txt)" ""
out=$("$WCS" nl.db ".export nlfar - csv" 2>&1)
check_has "... .export finds the table declared with a newline before USING" \
  "$out" "_key,f:q"
printf '_key,f:q\nb,2\n' >nl.csv
out=$("$WCS" nl.db ".import nl.csv nlfar" "SELECT count(*) FROM nlfar" 2>&1)
check_has "... .import too" "$out" "imported 1 rows (1 cells) into nlfar"
check_has "... into its store" "$out" "
2"
out=$("$WCS" nl.db ".schema t" 2>&1)
check_eq "... .schema shows the canonical DDL, with no warning at startup" \
  "$out" "CREATE VIRTUAL TABLE t USING wcs(
  KEY (k STRING),
  FAMILY f
);"

out=$("$WCS" w.db ".schema metrics")
check_has ".schema shows canonical DDL" "$out" "CREATE VIRTUAL TABLE metrics USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',"
check_has ".schema spells out encodings" "$out" "cpu INT64 BIG ENDIAN"
check_has ".schema shows GC policies" "$out" "MAX VERSIONS 3"
out=$("$WCS" w.db ".schema metrics_history")
check_eq ".schema of a history view" "$out" \
  "CREATE VIRTUAL TABLE metrics_history USING wcs(TABLE 'metrics', HISTORY);"
out=$("$WCS" w.db ".schema plain")
check_eq ".schema of a plain table" "$out" "CREATE TABLE plain(x);"
"$WCS" m.db ".tables 'x" >/dev/null 2>err.txt
check_has "a dot-command's unclosed quote is an error" "$(cat err.txt)" \
  "a quote in .tables is not closed"
check_not ".schema leaves out the commit clocks (the CREATE makes them)" \
  "$("$WCS" w.db ".schema")" "_wcsclock"
"$WCS" st.db "CREATE VIRTUAL TABLE o USING wcs(FAMILY g, STORE 'other.wcs', SYNC FULL, CACHE '8MiB')" >/dev/null
check_eq ".schema keeps STORE, SYNC and CACHE" "$("$WCS" st.db ".schema o")" \
  "CREATE VIRTUAL TABLE o USING wcs(
  FAMILY g,
  STORE 'other.wcs',
  SYNC FULL,
  CACHE '8MiB'
);"
mkdir -p pasted
"$WCS" st.db ".schema o" | "$WCS" pasted/p.db >/dev/null 2>err.txt
check_eq "... so that it pastes into a database elsewhere" "$(cat err.txt)" ""
check_rc "... whose STORE is beside it" 0 test -d pasted/other.wcs
# an attachment is shown as declared (TABLE only: it does not define the
# store table), after the table that does, so that the whole pastes
"$WCS" at.db "CREATE VIRTUAL TABLE m USING wcs(KEY (k STRING), FAMILY f)" \
  "CREATE VIRTUAL TABLE aa USING wcs(TABLE 'm')" \
  "CREATE VIRTUAL TABLE mh USING wcs(TABLE 'm', HISTORY)" >/dev/null
out=$("$WCS" at.db ".schema")
check_eq ".schema: attachments as declared, after their store table's table" \
  "$out" "CREATE VIRTUAL TABLE m USING wcs(
  KEY (k STRING),
  FAMILY f
);
CREATE VIRTUAL TABLE aa USING wcs(TABLE 'm');
CREATE VIRTUAL TABLE mh USING wcs(TABLE 'm', HISTORY);"
"$WCS" at.db ".schema" | "$WCS" pasted/at.db >/dev/null 2>err.txt
check_eq "... which pastes whole" "$(cat err.txt)" ""
check_eq "... with every declaration" \
  "$("$WCS" pasted/at.db "SELECT group_concat(name, ' ') FROM sqlite_schema WHERE name NOT LIKE '%wcsclock'")" \
  "m aa mh"
out=$("$WCS" m.db ".mode table" "SELECT 1 AS \"a
b\", 2 AS \"c	d\"")
check_eq "table mode: control characters in names keep the frame" "$out" \
  "+------+------+
| a\\nb | c\\td |
+------+------+
|    1 |    2 |
+------+------+"
"$WCS" w.db ".schema nosuch" >/dev/null 2>err.txt
check_has ".schema of a missing table is an error" "$(cat err.txt)" "no such table: nosuch"

out=$("$WCS" w.db ".explain SELECT * FROM metrics WHERE device = 'phone' AND id = '4c410523'")
check_has ".explain says the plan in words" "$out" "metrics: PREFIX SCAN (device,id)"
check_has ".explain shows the key range" "$out" \
  "key range: [phone#4c410523#, phone#4c410523\$)"
out=$("$WCS" w.db ".explain INSERT INTO metrics(device, id, day, cpu) VALUES ('a', 'b', 1, 2)")
check_eq ".explain of a statement that reads no table says so" "$out" \
  "plan: none (the statement reads no table)"
out=$("$WCS" w.db ".explain SELECT * FROM metrics WHERE device = 'phone' AND id = '4c410523' AND day = 20200501")
check_has ".explain: point lookup" "$out" "POINT LOOKUP"
check_has ".explain: the point's key" "$out" \
  "key range: [phone#4c410523#20200501, phone#4c410523#20200501]"
out=$("$WCS" w.db ".explain SELECT * FROM metrics m WHERE m.device IN ('tablet', 'phone') AND 'x' = m.id")
check_eq ".explain: IN lists give several ranges (alias, reversed terms)" "$out" "plan:
  m: MULTI-RANGE SCAN (device,id)
    key range: [phone#x#, phone#x\$)
               [tablet#x#, tablet#x\$)"
out=$("$WCS" w.db ".explain SELECT * FROM metrics WHERE device = 'phone' AND day BETWEEN 20200501 AND 20200502 AND id = 'x'")
check_has ".explain: BETWEEN on the last field" "$out" \
  "key range: [phone#x#20200501, phone#x#20200502]"
out=$("$WCS" w.db ".explain SELECT * FROM metrics WHERE id = 'a0b81f74'")
if [[ "$out" == *"SKIP SCAN"* ]]; then
  check_has ".explain: how a skip scan moves" "$out" \
    "within it, seeks from one (device) prefix to the next"
else
  check_has ".explain: a scan without a key range" "$out" "FULL SCAN"
fi
out=$("$WCS" w.db ".explain SELECT * FROM metrics WHERE device = 'phone' OR device = 'tablet'")
check_not ".explain: no ranges where it cannot tell (OR)" "$out" "key range"
out=$("$WCS" w.db ".explain SELECT * FROM metrics WHERE device = 'phone' AND id = ('4c410523')")
check_has ".explain: the module's plan for a term it cannot read" "$out" \
  "metrics: PREFIX SCAN (device,id)"
check_not "... and no range of a plan on fewer fields" "$out" "key range"
out=$("$WCS" w.db ".explain SELECT max(day) FROM metrics WHERE device = 'phone'")
check_eq ".explain: SQLite's SEARCH of a min() or max() is the module's plan too" \
  "$out" "plan:
  metrics: PREFIX SCAN (device)
    key range: [phone#, phone\$)"
out=$("$WCS" w.db ".explain SELECT * FROM plain")
check_has ".explain of a plain table" "$out" "plain: FULL SCAN (native SQLite table)"
"$WCS" w.db ".explain SELECT * FROM nosuch" >/dev/null 2>err.txt
check_has ".explain reports errors" "$(cat err.txt)" "no such table: nosuch"

out=$("$WCS" w.db ".stats")
check_has ".stats: store path" "$out" "store "
check_has ".stats: levels" "$out" "level"
check_has ".stats: compression ratio line" "$out" "stored"
check_has ".stats: tables with row estimates" "$out" "metrics"
out=$("$WCS" w.db ".stats metrics")
check_has ".stats TABLE" "$out" "stats (max 3 versions), meta"
check_has ".stats TABLE shows its row estimate" "$(echo "$out" | grep '^metrics')" " 3 "
"$WCS" w.db ".stats nosuch" >out.txt 2>err.txt
check_has ".stats of a missing table is an error" "$(cat err.txt)" "nosuch"
check_eq "... that prints no statistics first" "$(cat out.txt)" ""
out=$("$WCS" gc.db "CREATE VIRTUAL TABLE gc USING wcs(FAMILY a MAX AGE '30d',
  FAMILY b MAX VERSIONS 2 MAX AGE '12h' INTERSECTION, FAMILY c MAX VERSIONS 1
  MAX AGE '90s', FAMILY n AGGREGATE SUM, FAMILY h MAX AGE '500ms')" ".stats gc")
check_has ".stats shows every GC policy" "$out" \
  "a (max age 30d), b (max 2 versions and max age 12h), c (max 1 versions or max age 90s), n (aggregate SUM), h (max age 500ms)"

out=$("$WCS" w.db ".compact metrics")
check_has ".compact TABLE" "$out" "compacted metrics"
out=$("$WCS" w.db ".compact")
check_has ".compact everything" "$out" "compacted the store"
out=$("$WCS" w.db ".stats")
check_has ".stats after .compact shows files" "$out" "L"
out=$("$WCS" w.db "SELECT day, cpu FROM metrics WHERE device = 'phone' ORDER BY day")
check_eq "data survives compaction" "$out" "20200501|42
20200502|40"

# ---- .backup: the database and its store, a database of its own
out=$("$WCS" w.db ".backup bk.db")
check_eq ".backup names both copies" "$out" "backed up to bk.db and bk.db.wcs"
out=$("$WCS" bk.db "SELECT day, cpu FROM metrics WHERE device = 'phone' ORDER BY day")
check_eq "the copy holds the rows" "$out" "20200501|42
20200502|40"
"$WCS" bk.db "INSERT INTO metrics(device, id, day, cpu)
  VALUES ('phone', 'copy', 20200503, 1)" >/dev/null
out=$("$WCS" w.db "SELECT count(*) FROM metrics WHERE id = 'copy'")
check_eq "a write to the copy leaves the original alone" "$out" "0"
check_rc ".backup refuses a file that exists" 1 "$WCS" w.db ".backup bk.db"
out=$("$WCS" w.db ".backup bk.db" 2>&1)
check_has "... and says so" "$out" "bk.db already exists"

# ---- a table in another store (STORE 'dir'): the commands follow it there
"$WCS" w.db "CREATE VIRTUAL TABLE far USING wcs(KEY (k STRING), FAMILY f, STORE 'far.wcs')" \
  "INSERT INTO far(k, f) VALUES ('x', json_object('q', 'v'))" >/dev/null
check_rc "STORE 'far.wcs' is beside the database" 0 test -d far.wcs
out=$("$WCS" w.db ".schema far")
check_has ".schema reads the other store's catalog" "$out" "KEY (k STRING)"
out=$("$WCS" w.db ".stats far")
check_has ".stats TABLE shows the table's own store" "$out" "far.wcs"
check_has "... and the table" "$out" "far "
out=$("$WCS" w.db ".export far - jsonl")
check_has ".export reads from the other store" "$out" '"_key":"x"'
printf '_key,f:q\ny,w\n' >far.csv
"$WCS" w.db ".import far.csv far" >/dev/null
out=$("$WCS" w.db "SELECT k, f ->> 'q' FROM far ORDER BY k")
check_eq ".import writes into the other store" "$out" "x|v
y|w"
out=$("$WCS" w.db ".tables far")
check_eq "the other store's tables are not attached to the database" \
  "$(ls -d w.db.wcs far.wcs | wc -l) $out" "2 far"
out=$("$WCS" w.db ".backup bk2.db" 2>&1)
check_has ".backup warns of a table in another store" "$out" \
  "warning: table far is in store 'far.wcs' (its STORE clause), which is not in the copy"

# ---- store tables without a virtual table are attached at startup
"$WCS" w.db "DROP TABLE plain" >/dev/null
python3 - w.db <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("PRAGMA writable_schema=ON")
con.execute("DELETE FROM sqlite_schema WHERE name='metrics'")
con.commit()
EOF
out=$("$WCS" w.db ".tables metrics")
check_eq "a store table missing from the database is attached again" "$out" "metrics"
out=$("$WCS" w.db "SELECT count(*) FROM metrics")
check_eq "the attached table reads the store" "$out" "3"

# ---- a read-only database: the store is read as the module reads it
# (a follower: no lock taken), and a write says it is read-only
"$WCS" ro.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" \
  "INSERT INTO t(_key, f) VALUES ('k', '{\"q\": \"v\"}')" >/dev/null
out=$("$WCS" "file:ro.db?mode=ro" "SELECT CAST(_key AS TEXT), f FROM t" 2>&1)
check_eq "mode=ro: the shell reads the store" "$out" 'k|{"q":"v"}'
out=$("$WCS" "file:ro.db?mode=ro" ".tables" 2>&1)
check_eq "mode=ro: .tables" "$out" "t"
"$WCS" "file:ro.db?mode=ro" "INSERT INTO t(_key, f) VALUES ('z', '{}')" \
  >/dev/null 2>err.txt
check_has "mode=ro: a write is refused" "$(cat err.txt)" "readonly"

# ---- an in-memory database: the store commands reach the module's
# in-memory store
out=$("$WCS" :memory: ".stats" 2>&1)
check_has "in memory: .stats before any table says the store comes with one" \
  "$out" "its store is made with its first wcs table"
out=$(printf '%s\n' \
  "CREATE VIRTUAL TABLE t USING wcs(KEY (a STRING) DELIMITED BY '#', FAMILY f (n INT64));" \
  "INSERT INTO t(a, n) VALUES ('x', 1), ('y', 2);" \
  ".stats t" ".compact t" ".export t mem.csv" "DELETE FROM t;" \
  ".import mem.csv t timestamp=value-encoded" "SELECT a, n FROM t;" ".keyviz t mem.svg" \
  | "$WCS" :memory: 2>&1)
check_has "in memory: .stats names the store" "$out" "store (in memory)"
check_has "in memory: .compact" "$out" "compacted t:"
check_has "in memory: .export" "$out" "exported t to mem.csv"
check_has "in memory: .import reads the export back" "$out" "x|1
y|2"
check_has "in memory: .keyviz" "$out" "wrote mem.svg"

finish
