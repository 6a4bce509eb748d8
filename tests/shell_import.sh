#!/usr/bin/env bash
# shell_import.sh — imports and exports through the wcs shell: cbt CSV round
# trips (cbt CSV -> wcs -> cbt CSV, byte for byte), CSV with a header into
# a keyed table with typed columns, JSON lines, a DynamoDB export with every
# attribute type, malformed input (stop and keep, or skip and count), and
# exports in every format re-imported exactly.
# Run: bash tests/shell_import.sh BUILD
source "$(dirname "$0")/data/shell-lib.bash" "$1"

# canonical order of a cbt CSV: header rows, then lines sorted by row key
# (stable, so the lines of one row keep their order).
canon() {
  python3 - "$1" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8')))
head, body = rows[:2], rows[2:]
body = sorted(body, key=lambda r: r[0].encode())
w = csv.writer(sys.stdout, lineterminator='\n')
for r in head + body:
    w.writerow(r)
EOF
}

# every cell of a table, via the history view, as hex so bytes compare
cells() {
  "$WCS" "$1" "CREATE VIRTUAL TABLE IF NOT EXISTS h_$2 USING wcs(TABLE '$2', HISTORY)" \
    "SELECT hex(_key), family, hex(qualifier), _timestamp, hex(value) FROM h_$2
     ORDER BY 1, 2, 3, 4 DESC"
}

# ---- cbt CSV -> wcs -> cbt CSV
out=$("$WCS" rt.db ".import $DATA/telemetry.cbt.csv tele timestamp=value-encoded")
check_has "cbt import creates the table" "$out" "created table tele"
check_has "cbt import reports rows, cells and rate" "$out" \
  "imported 31 rows (131 cells) into tele in"
check_eq "... rows as the table counts them (a row's versions on several lines)" \
  "$("$WCS" rt.db "SELECT count(*) FROM tele")" "31"
check_has "cbt import reports rows/s" "$out" "rows/s"
out=$("$WCS" rt.db ".schema tele")
check_has "the families come from the header, in order" "$out" \
  "FAMILY stats_summary,
  FAMILY cell_plan"
"$WCS" rt.db ".export tele out1.cbt.csv" >/dev/null
canon "$DATA/telemetry.cbt.csv" >expected.csv
if cmp -s expected.csv out1.cbt.csv; then
  ok "cbt CSV -> wcs -> cbt CSV gives the same file (rows in key order)"
else
  not_ok "cbt CSV -> wcs -> cbt CSV gives the same file" "$(diff expected.csv out1.cbt.csv | head -20)"
fi
# an in-memory database: the import creates the table, and with it the
# connection's store
out=$("$WCS" :memory: ".import $DATA/telemetry.cbt.csv tele" \
  ".mode list" "SELECT count(*) FROM tele")
check_has "an import into :memory: creates the table and its store" "$out" \
  "created table tele"
check_has "... and imports every row" "$out" "
31"
out=$("$WCS" rt.db ".mode list" "SELECT count(*) FROM tele")
check_eq "33 lines hold 31 rows (versions share a row)" "$out" "31"
out=$("$WCS" rt.db ".mode list" \
  "SELECT count(*) FROM h_tele WHERE qualifier = 'os_build'" 2>/dev/null ||
  "$WCS" rt.db "CREATE VIRTUAL TABLE h_tele USING wcs(TABLE 'tele', HISTORY)" \
    "SELECT count(*) FROM h_tele WHERE qualifier = 'os_build'")
check_eq "the extra lines are older versions" "$out" "33"

# the same file into a table with a key schema: keys decode into fields
"$WCS" keyed.db "CREATE VIRTUAL TABLE telemetry USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
  FAMILY stats_summary, FAMILY cell_plan)" >/dev/null
"$WCS" keyed.db ".import $DATA/telemetry.cbt.csv telemetry timestamp=value-encoded" >/dev/null
out=$("$WCS" keyed.db ".mode list" "SELECT day FROM telemetry
  WHERE device = 'phone' AND id = '4c410523' AND day BETWEEN 20190502 AND 20190504")
check_eq "imported keys decode into key fields" "$out" "20190502
20190503
20190504"
out=$("$WCS" keyed.db ".mode list" "SELECT stats_summary ->> 'os_build' FROM telemetry
  WHERE device = 'tablet' AND id = 'a0b81f74' AND day = 20190601")
check_eq "quoted CSV values arrive intact" "$out" 'build "beta", Zürich'
printf ',f\n,q\nphone#x#2019,v\nnot-a-key,v\n' >badkey.cbt.csv
"$WCS" keyed.db "CREATE VIRTUAL TABLE t2 USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY f)" >/dev/null
"$WCS" keyed.db ".import badkey.cbt.csv t2" >out.txt 2>err.txt
check_has "a row key that does not match the key schema stops the import" \
  "$(cat err.txt)" "badkey.cbt.csv line 3:"
check_has "... naming the key" "$(cat err.txt)" "phone#x#2019"

# export -> import -> export is a fixed point, and the cells are identical
"$WCS" rt.db ".import out1.cbt.csv tele2 timestamp=value-encoded" >/dev/null
"$WCS" rt.db ".export tele2 out2.cbt.csv" >/dev/null
check_rc "re-exported cbt CSV is identical" 0 cmp out1.cbt.csv out2.cbt.csv
check_eq "every cell (key, family, qualifier, timestamp, bytes) survives" \
  "$(cells rt.db tele2)" "$(cells rt.db tele)"

# cbt CSV with a qualifier row only and column-family=
printf ',a,b\nr1,1,2\nr2,,3\n' >onerow.cbt.csv
out=$("$WCS" rt.db ".import onerow.cbt.csv single column-family=cf timestamp=1000")
check_has "one header row with column-family=" "$out" "imported 2 rows (3 cells)"
out=$("$WCS" rt.db ".mode list" "SELECT _key, cf ->> 'a', cf ->> 'b' FROM single")
check_eq "... cells land in that family" "$out" "r1|1|2
r2||3"
out=$(cells rt.db single | cut -d'|' -f4 | sort -u)
check_eq "timestamp=N sets every cell's timestamp" "$out" "1000"
# lines of one row that give a column again at the same timestamp replace
# its value (the last line wins, as with cbt import: shell_emulator.sh) and
# count once: the summary counts the cells the table holds
"$WCS" ver.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f MAX VERSIONS 5)" >/dev/null
printf ',f\n,q\nk,v1\nk,v2\nk,v3\n' >same.cbt.csv
out=$("$WCS" ver.db ".import same.cbt.csv t batch=1")
check_has "lines of a row at one time (timestamp=now) count the cell once" \
  "$out" "imported 1 rows (1 cells)"
check_eq "... the one the table holds: the last line's, whatever the batches" \
  "$(cells ver.db t | cut -d'|' -f5)" "7633"
printf ',f\n,q\nk2,a@5\nk2,b@6\nk2,c@5\n' >samets.cbt.csv
out=$("$WCS" ver.db ".import samets.cbt.csv t timestamp=value-encoded")
check_has "equal value-encoded timestamps replace too, and count once" "$out" \
  "imported 1 rows (2 cells)"
check_eq "... leaving the versions the summary counts" \
  "$(cells ver.db t | grep '^6B32|' | cut -d'|' -f4,5)" "6|62
5|63"

# a header row with a row key is data: without column-family=, a file
# with a qualifier row alone would lose its first row to the header
printf ',q1,q2\nk1,a,b\nk2,c,d\n' >qualonly.cbt.csv
"$WCS" rt.db ".import qualonly.cbt.csv qo" >out.txt 2>err.txt
check_has "a qualifier row alone without column-family= is refused at line 2" \
  "$(cat err.txt)" 'qualonly.cbt.csv line 2: the qualifier row has a row key ("k1"), so it is a data row'
check_has "... saying to give column-family=" "$(cat err.txt)" \
  "give column-family=NAME"
check_eq "... and makes no table" "$("$WCS" rt.db ".tables qo")" ""
"$WCS" rt.db ".import qualonly.cbt.csv qo column-family=cf" >/dev/null
check_eq "... which with column-family= imports every row" \
  "$("$WCS" rt.db "SELECT _key, cf FROM qo")" 'k1|{"q1":"a","q2":"b"}
k2|{"q1":"c","q2":"d"}'
printf 'k,f\n,q\nr,v\n' >keyhead.cbt.csv
"$WCS" rt.db ".import keyhead.cbt.csv kh format=cbt" >/dev/null 2>err.txt
check_has "a family row with a row key is refused too" "$(cat err.txt)" \
  'keyhead.cbt.csv line 1: the family row has a row key ("k")'

# ---- jsonl and csv exports re-import exactly
for fmt in jsonl csv; do
  "$WCS" rt.db ".export tele out.$fmt $fmt" >/dev/null
  "$WCS" rt.db ".import out.$fmt tele_$fmt timestamp=value-encoded" >/dev/null 2>err.txt
  check_eq "$fmt export re-imports without errors" "$(cat err.txt)" ""
  check_eq "$fmt export -> import reproduces every cell" \
    "$(cells rt.db tele_$fmt)" "$(cells rt.db tele)"
done
# aggregate families: the export holds each cell's state, which the import
# merges into the empty table (MergeToCell), so the table comes back
AGG="CREATE VIRTUAL TABLE g USING wcs(KEY (a STRING), FAMILY c (n INT64) AGGREGATE SUM, FAMILY h AGGREGATE HLL, FAMILY m (x INT64) AGGREGATE MAX)"
"$WCS" agg.db "$AGG" "INSERT INTO g(a, n, x, h) VALUES ('k', 5, 7, '{\"u\": \"alpha\"}')" \
  "INSERT INTO g(a, n, x, h) VALUES ('k', 6, 3, '{\"u\": \"beta\"}')" >/dev/null
want=$("$WCS" agg.db ".mode list" "SELECT a, n, x, wcs_hll_count(h -> 'u') FROM g")
check_eq "aggregate table before the export" "$want" "k|11|7|2"
for fmt in jsonl csv; do
  "$WCS" agg.db ".export g agg.$fmt $fmt" >/dev/null
  "$WCS" agg_$fmt.db "$AGG" ".import agg.$fmt g timestamp=value-encoded" >/dev/null 2>err.txt
  check_eq "$fmt export of aggregate families re-imports without errors" "$(cat err.txt)" ""
  out=$("$WCS" agg_$fmt.db ".mode list" "SELECT a, n, x, wcs_hll_count(h -> 'u') FROM g")
  check_eq "$fmt export -> import rebuilds the aggregates" "$out" "$want"
done
out=$(head -1 out.csv)
check_eq "csv export header: _key then family:qualifier" "$out" \
  "_key,stats_summary:connected_cell,stats_summary:connected_wifi,stats_summary:os_build,cell_plan:data_plan_01gb,cell_plan:data_plan_05gb"
"$WCS" keyed.db ".export telemetry keyed.csv csv" >/dev/null
out=$(head -1 keyed.csv | cut -d, -f1-4)
check_eq "csv export of a keyed table names the key fields" "$out" \
  "device,id,day,stats_summary:connected_cell"

# jsonl: the decoded key fields beside _key, unless one is named like a
# member of the line itself (cells), which it would give twice
KC="CREATE VIRTUAL TABLE t USING wcs(KEY (cells STRING, b INT64 DECIMAL(4)), FAMILY f)"
"$WCS" kc.db "$KC" "INSERT INTO t(cells, b, f) VALUES ('x', 7, json_object('q', '1'))" \
  ".export t kc.jsonl" >/dev/null
check_eq "a key field named cells is left out of the jsonl export" \
  "$(python3 -c 'import json,sys; print(sorted(json.loads(open(sys.argv[1]).read())))' kc.jsonl)" \
  "['_key', 'cells']"
"$WCS" kc2.db "$KC" ".import kc.jsonl t" >/dev/null 2>err.txt
check_eq "... so the export imports again" "$(cat err.txt)" ""
check_eq "... into the same cells" "$(cells kc2.db t)" "$(cells kc.db t)"
"$WCS" keyed.db ".export telemetry keyed.jsonl" >/dev/null
check_has "other key fields are written beside _key" "$(head -1 keyed.jsonl)" \
  '"_key":"phone#4c410523#20190501","device":"phone","id":"4c410523","day":20190501,"cells":['

# binary values and keys survive every format
"$WCS" bin.db "CREATE VIRTUAL TABLE b USING wcs(FAMILY f)" >/dev/null
python3 - bin.jsonl <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"_key": {"hex": "00ff0a2c22"}, "cells": [
        {"family": "f", "qualifier": {"hex": "0001"}, "timestamp": 5,
         "value": {"hex": "ffd8000d0a"}},
        {"family": "f", "qualifier": "text", "timestamp": 7, "value": "a,\"b\"\nc"},
        {"family": "f", "qualifier": "empty", "timestamp": 9, "value": ""}]}) + "\n")
EOF
"$WCS" bin.db ".import bin.jsonl b" >/dev/null
for fmt in cbt csv jsonl; do
  "$WCS" bin.db ".export b bin.$fmt $fmt" >/dev/null
  "$WCS" bin.db ".import bin.$fmt b_$fmt format=$fmt timestamp=value-encoded" >/dev/null 2>err.txt
  check_eq "binary keys, qualifiers and values survive $fmt" \
    "$(cells bin.db b_$fmt)" "$(cells bin.db b)"
done
check_eq "the binary sample has 3 cells" "$(cells bin.db b | wc -l)" "3"
check_has "jsonl export writes bytes as SQL shows them" \
  "$(cat bin.jsonl)" '"value":{"$hex":"ffd8000d0a"}'
printf '{"_key":{"$hex":"00ff"},"f:q":{"$hex":"0a00"},"f:h":{"hex":"0b"}}\n' \
  >dollarhex.jsonl
"$WCS" bin.db ".import dollarhex.jsonl dh" >/dev/null
check_eq "jsonl import reads {\"\$hex\": ...} and {\"hex\": ...} as bytes" \
  "$(cells bin.db dh | cut -d'|' -f1,2,3,5 | tr '\n' ' ')" \
  "00FF|f|68|0B 00FF|f|71|0A00 "

# declared typed columns: a family:qualifier header is the bytes as
# written, so every format re-imports into a table with the same schema
for fmt in cbt csv jsonl; do
  "$WCS" ty_$fmt.db "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING),
    FAMILY f (x INT64, y FLOAT64, d INT64 DECIMAL(4), s STRING))" \
    "INSERT INTO t(k,x,y,d,s) VALUES ('r',10,2.5,7,'a'), ('s',-3,NULL,12,NULL)" \
    ".export t ty.$fmt $fmt" >/dev/null
  "$WCS" ty2_$fmt.db "CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING),
    FAMILY f (x INT64, y FLOAT64, d INT64 DECIMAL(4), s STRING))" \
    ".import ty.$fmt t format=$fmt timestamp=value-encoded" >/dev/null 2>err.txt
  check_eq "typed columns re-import from $fmt without errors" "$(cat err.txt)" ""
  check_eq "typed columns survive $fmt" "$(cells ty2_$fmt.db t)" \
    "$(cells ty_$fmt.db t)"
done
check_eq "the typed sample reads back" \
  "$("$WCS" ty2_csv.db "SELECT k, x, y, d, s FROM t")" \
  "$("$WCS" ty_csv.db "SELECT k, x, y, d, s FROM t")"

# ---- CSV with a header into a keyed table with typed columns
"$WCS" p.db "CREATE VIRTUAL TABLE products USING wcs(
  KEY (category STRING, subcategory STRING, brand STRING) DELIMITED BY '#',
  FAMILY info (price INT64, color STRING))" >/dev/null
out=$("$WCS" p.db ".import $DATA/products.csv products")
check_has "csv import" "$out" "imported 6 rows"
out=$("$WCS" p.db ".mode list" "SELECT brand, price, color FROM products
  WHERE category = 'hats' AND subcategory = 'fedoras'")
check_eq "key fields and typed columns from a CSV header" "$out" "brandA|120|black
brandB|95|grey"
out=$("$WCS" p.db ".mode list" "SELECT typeof(price), sum(price) FROM products")
check_eq "INT64 columns hold integers" "$out" "integer|358"
out=$("$WCS" p.db ".mode list" "SELECT brand, info ->> 'note' FROM products
  WHERE category = 'hats' ORDER BY brand, subcategory")
check_eq "family:qualifier columns; empty = no cell, \"\" = empty value" "$out" \
  "brandA|
brandA|classic
brandB|
brandB|wide brim, felt"
out=$("$WCS" p.db ".mode list" "SELECT count(*) FROM products, json_each(products.info)
  WHERE category = 'hats' AND subcategory = 'beanies' AND json_each.key = 'note'")
check_eq "a quoted empty field writes an empty value" "$out" "1"
printf 'category,subcategory,brand,price\nhats,x,y,cheap\n' >badprice.csv
"$WCS" p.db ".import badprice.csv products" >/dev/null 2>err.txt
check_has "a value that does not fit a typed column is malformed" "$(cat err.txt)" \
  "badprice.csv line 2: value 'cheap' for INT64 column price is not an integer"
printf 'category,brand,price\nhats,y,1\n' >nokey.csv
"$WCS" p.db ".import nokey.csv products" >/dev/null 2>err.txt
check_has "a header without every key field is refused" "$(cat err.txt)" \
  "neither _key nor every key field"

# ---- JSON lines
"$WCS" j.db "CREATE VIRTUAL TABLE users USING wcs(FAMILY profile, FAMILY events, FAMILY misc)" >/dev/null
out=$("$WCS" j.db ".import $DATA/events.jsonl users family=misc")
check_has "json lines import (blank lines skipped)" "$out" "imported 3 rows (10 cells)"
out=$("$WCS" j.db ".mode list" "SELECT _key, profile ->> 'name', events ->> 'last',
  misc ->> 'score' FROM users ORDER BY _key")
check_eq "family objects, family:qualifier members, default family" "$out" \
  "user#0001|Ann|login|12.50
user#0002|Bob||7
user#0003||logout|"
out=$("$WCS" j.db ".mode list" "CREATE VIRTUAL TABLE hu USING wcs(TABLE 'users', HISTORY)" \
  "SELECT qualifier, value FROM hu WHERE _key = CAST('user#0003' AS BLOB) ORDER BY qualifier")
check_eq "numbers keep their source text; null writes no cell" "$out" "count|1e3
last|logout"
out=$("$WCS" j.db ".mode list" "SELECT value FROM hu WHERE _key = CAST('user#0002' AS BLOB)
  AND qualifier IN ('langs', 'active') ORDER BY qualifier")
check_eq "true/false and nested values as JSON text" "$out" 'true
["en","de"]'
printf '{"_key":"k1","misc:a":"1"}\n{"_key":"k2",\n{"_key":"k3","misc:a":"3"}\n' >bad.jsonl
"$WCS" j.db ".import bad.jsonl users" >/dev/null 2>err.txt
check_has "invalid JSON stops the import with its line" "$(cat err.txt)" \
  "bad.jsonl line 2: not valid JSON; 1 rows imported before it"
out=$("$WCS" j.db ".mode list" "SELECT count(*) FROM users WHERE CAST(_key AS TEXT) IN ('k1','k3')")
check_eq "... keeping the line before it" "$out" "1"

# ---- input that can be read only once: a pipe, standard input
printf '{"_key":"a","f:q":"1"}\n{"_key":"b","f:q":"2"}\n' >once.jsonl
out=$(cat once.jsonl | "$WCS" pipe.db ".import /dev/stdin pj format=jsonl" 2>&1)
check_not "a pipe is not read twice to find the families" "$out" "imported 0 rows"
out=$(cat once.jsonl | "$WCS" pipe.db ".import /dev/stdin pj family=f" 2>&1)
check_has "a pipe's format is guessed without losing its first line" "$out" \
  "imported 2 rows (2 cells)"
out=$(cat "$DATA/telemetry.cbt.csv" | "$WCS" pipe.db \
  ".import - pt timestamp=value-encoded" 2>&1)
check_has "standard input's format is guessed too" "$out" "imported 31 rows"

# ---- family names that need quoting in the DDL
printf ',cf-1.v2\n,q\nr1,v\n' >dash.cbt.csv
out=$("$WCS" fam.db ".import dash.cbt.csv fd" 2>&1)
check_has "a new table's family may hold - and ." "$out" "imported 1 rows"
printf '_key,cf-2:q\nr1,v\n' >dash2.csv
out=$("$WCS" fam.db ".import dash2.csv fd" 2>&1)
check_has "... and so may a family added to it" "$out" "added family cf-2 to fd"
printf ',"a, FAMILY b"\n,q\nr1,v\n' >inj.cbt.csv
"$WCS" fam.db ".import inj.cbt.csv fi" >/dev/null 2>err.txt
check_has "a family name is never read as DDL" "$(cat err.txt)" \
  "family names have 1 to 64 characters"
check_eq "... and leaves no table" "$("$WCS" fam.db ".tables fi")" ""

# ---- a UTF-8 byte order mark (spreadsheet programs write one) is skipped
printf '\xef\xbb\xbf_key,f:q\nr1,v1\n' >bom.csv
out=$("$WCS" bom.db ".import bom.csv bc" 2>&1)
check_has "a CSV file with a byte order mark" "$out" "imported 1 rows"
printf '\xef\xbb\xbf{"_key":"r1","f:q":"v1"}\n' >bom.jsonl
out=$("$WCS" bom.db ".import bom.jsonl bj" 2>&1)
check_has "a JSON lines file with a byte order mark" "$out" "imported 1 rows"

# a null member writes no cell, so it needs no family; a family:qualifier
# member names its family even when family= is given; bad hex says where
printf '{"_key":"n1","f:q":"1","gone":null}\n' >nullm.jsonl
out=$("$WCS" jn.db ".import nullm.jsonl jn" 2>&1)
check_has "a null member without a family writes no cell" "$out" \
  "imported 1 rows (1 cells)"
out=$("$WCS" jn.db ".import $DATA/events.jsonl ev family=misc" 2>&1)
check_has "family= and family:qualifier members together in a new table" \
  "$out" "imported 3 rows (8 cells)"
printf '{"_key":"h1","f:q":{"hex":"zz"}}\n' >badhex.jsonl
"$WCS" jn.db ".import badhex.jsonl jn" >/dev/null 2>err.txt
check_has "bad hex names the member and its text" "$(cat err.txt)" \
  'badhex.jsonl line 1: "f:q": bad hex digit in "zz"'

# ---- DynamoDB export with every attribute type
"$WCS" d.db "CREATE VIRTUAL TABLE orders USING wcs(
  KEY (customer STRING, order_id STRING) DELIMITED BY '#',
  FAMILY attrs (qty INT64))" \
  "CREATE VIRTUAL TABLE orders_h USING wcs(TABLE 'orders', HISTORY)" >/dev/null
out=$("$WCS" d.db ".import $DATA/dynamodb-export.json orders key={pk}#{sk} family=attrs")
check_has "dynamodb import" "$out" "imported 3 rows"
out=$("$WCS" d.db ".mode list" "SELECT customer, order_id, qty FROM orders ORDER BY 1, 2")
check_eq "key template {pk}#{sk}; N into a typed INT64 column" "$out" \
  "cust-001|2020-05-01-a|3
cust-001|2020-05-02-b|-1
cust-002|2020-05-01-c|12"
q() {
  "$WCS" d.db ".mode list" "SELECT CAST(value AS TEXT) FROM orders_h
    WHERE customer = '$1' AND order_id = '$2' AND qualifier = '$3'"
}
check_eq "N keeps its exact decimal text" "$(q cust-001 2020-05-01-a total)" "12.50"
check_eq "N: a long decimal is exact" "$(q cust-002 2020-05-01-c total)" \
  "99999999999999999999.99"
check_eq "BOOL" "$(q cust-001 2020-05-01-a paid) $(q cust-001 2020-05-02-b paid)" "true false"
check_eq "NULL writes no cell" "$(q cust-001 2020-05-01-a note)" ""
check_eq "B is decoded from base64" "$(q cust-001 2020-05-01-a blob)" "hello"
out=$("$WCS" d.db ".mode list" "SELECT count(*), length(value) FROM orders_h
  WHERE customer = 'cust-002' AND qualifier = 'blob'")
check_eq "an empty B is an empty value" "$out" "1|0"
check_eq "SS becomes a JSON array" "$(q cust-001 2020-05-01-a tags)" '["new","gift"]'
check_eq "NS keeps the numbers' text" "$(q cust-001 2020-05-01-a sizes)" '[1,2.50,-3e2]'
check_eq "BS keeps base64 strings" "$(q cust-001 2020-05-01-a bins)" '["AAE=","/w=="]'
# numbers DynamoDB writes that JSON does not: a sign, leading zeros, a bare '.'
printf '%s\n' '{"Item":{"pk":{"S":"n"},"v":{"NS":["-007.50","+3","000","-.5e-3"]},"w":{"L":[{"N":".5"},{"N":"5."}]},"m":{"M":{"z":{"N":"-00"}}}}}' >nums.json
"$WCS" nums.db ".import nums.json o key={pk} family=a" >/dev/null
out=$("$WCS" nums.db ".mode list" "SELECT a->>'v', a->>'w', a->>'m',
  json_valid(a->>'v') + json_valid(a->>'w') + json_valid(a->>'m') FROM o")
check_eq "numbers inside JSON are valid JSON numbers" "$out" \
  '[-7.50,3,0,-0.5e-3]|[0.5,5]|{"z":-0}|3'
check_eq "M becomes a JSON object" "$(q cust-001 2020-05-01-a addr)" \
  '{"city":"Zürich","zip":8001}'
check_eq "L becomes a JSON array (nested types unwrapped)" \
  "$(q cust-001 2020-05-01-a items)" '["hat",2,false,null,{"x":1.0}]'
check_eq "key attributes are not cells by default" "$(q cust-001 2020-05-01-a pk)" ""
out=$("$WCS" d.db ".mode list" "SELECT json_extract(attrs, '\$.addr') IS NOT NULL
  FROM orders WHERE customer = 'cust-001' AND order_id = '2020-05-01-a'")
check_eq "the family column shows the attributes" "$out" "1"
"$WCS" d2.db ".import $DATA/dynamodb-export.json o2 key={pk}#{sk} map=total:sums,qty:sums:quantity family=rest" >/dev/null
out=$("$WCS" d2.db ".mode list" "SELECT sums ->> 'total', sums ->> 'quantity', rest ->> 'paid'
  FROM o2 WHERE _key = CAST('cust-001#2020-05-01-a' AS BLOB)")
check_eq "map= routes attributes to families and qualifiers" "$out" "12.50|3|true"
"$WCS" d2.db ".import $DATA/dynamodb-export.json o3 family=x" >/dev/null 2>err.txt
check_has "a DynamoDB import needs a key template" "$(cat err.txt)" "key=TEMPLATE"
printf '{"Item":{"pk":{"S":"a"},"v":{"N":"1x"}}}\n' >badddb.json
"$WCS" d2.db ".import badddb.json o4 key={pk} family=f" >/dev/null 2>err.txt
check_has "a malformed N is reported" "$(cat err.txt)" "badddb.json line 1: attribute v"
printf '{"Item":{"pk":{"S":"a"},"v":{"Q":"1"}}}\n' >badddb2.json
"$WCS" d2.db ".import badddb2.json o4 key={pk} family=f" >/dev/null 2>err.txt
check_has "an unknown type is reported" "$(cat err.txt)" 'unknown DynamoDB type "Q"'

# ---- malformed lines: stop and keep, or skip and count
"$WCS" bad.db ".import $DATA/bad.cbt.csv t batch=1" >out.txt 2>err.txt
rc=$?
check_eq "a malformed line fails the import" "$rc" "1"
check_has "... naming the line and the reason" "$(cat err.txt)" \
  "bad.cbt.csv line 5: unterminated quoted field"
check_has "... and what was kept" "$(cat err.txt)" "2 rows imported before it"
out=$("$WCS" bad.db ".mode list" "SELECT group_concat(_key) FROM t")
check_eq "rows before the bad line are committed" "$out" "r1,r2"
"$WCS" bad.db ".import $DATA/bad-fields.cbt.csv t2" >/dev/null 2>err.txt
check_has "a wrong field count stops the import" "$(cat err.txt)" \
  "bad-fields.cbt.csv line 4: 2 fields, expected 3"
out=$("$WCS" bad.db ".import $DATA/bad-fields.cbt.csv t3 skip-bad=yes" 2>err.txt)
check_has "skip-bad=yes imports the good lines" "$out" "imported 3 rows"
check_has "... and counts the bad ones" "$out" "2 bad lines skipped"
check_has "... reporting each on stderr" "$(cat err.txt)" "bad-fields.cbt.csv line 6: 4 fields, expected 3 as in the header (skipped)"
out=$("$WCS" bad.db ".mode list" "SELECT group_concat(_key) FROM t3")
check_eq "skip-bad keeps the rows around the bad lines" "$out" "r1,r3,r5"
"$WCS" bad.db ".import nosuch.csv t4" >/dev/null 2>err.txt
check_has "a missing file is an error" "$(cat err.txt)" "cannot open nosuch.csv"
mkdir -p adir
"$WCS" bad.db ".import adir t4" >/dev/null 2>err.txt
check_has "a directory is an error" "$(cat err.txt)" \
  "cannot import adir: it is a directory"
# standard input that cannot be read (a directory) is a read error, not an
# empty file or a missing header; a table made for it is dropped again
for f in csv jsonl cbt; do
  "$WCS" bad.db ".import - t4 format=$f family=f column-family=f" \
    <adir >out.txt 2>err.txt
  rc=$?
  check_eq "a read error fails the import ($f)" "$rc" "1"
  check_has "... and says why ($f)" "$(cat err.txt)" \
    "cannot read -: Is a directory; 0 rows imported before it"
  check_eq "... with no other error ($f)" "$(grep -c . err.txt)" "1"
done
out=$("$WCS" bad.db ".tables")
check_eq "... and leaves no table behind" "$(echo "$out" | grep -c '^t4$')" "0"
"$WCS" bad.db ".import $DATA/bad-fields.cbt.csv t5 frob=1" >/dev/null 2>err.txt
check_has "unknown options are refused" "$(cat err.txt)" 'unknown option "frob"'
"$WCS" bad.db "BEGIN" ".import $DATA/products.csv t6 family=f" >/dev/null 2>err.txt
check_has "no import inside an open transaction" "$(cat err.txt)" "open transaction"
python3 -c "print(',f'); print(',' + 'q' * 16385); print('r1,v')" > longqual.cbt
"$WCS" bad.db ".import longqual.cbt t8" >/dev/null 2>err.txt
check_has "a qualifier over the limit is refused at the header line" \
  "$(cat err.txt)" "longqual.cbt line 2: column 2: qualifier of 16385 bytes"
printf 'k,f:x\nr1,1\n' > badhead.csv
out=$("$WCS" bad.db ".import badhead.csv t7 family=f" 2>err.txt)
check_has "a file refused at its header" "$(cat err.txt)" "badhead.csv line 1"
check_has "... drops the table it created" "$out" \
  "dropped table t7 again: nothing was imported"
check_eq "... which is gone from the database" \
  "$("$WCS" bad.db "SELECT count(*) FROM sqlite_schema WHERE name = 't7'")" "0"
"$WCS" bad.db "CREATE VIRTUAL TABLE chk USING wcs(TABLE 't7')" 2>err.txt
check_has "... and from the store" "$(cat err.txt)" "no store table 't7'"

# a family the file needs is added, and the same session reads it
printf '_key,f:x,newfam:q\nr1,1,2\n' > nf.csv
out=$("$WCS" nf.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" \
  ".import nf.csv t" ".mode list" "SELECT _key, f, newfam FROM t" 2>&1)
check_has "an import adds the family the file needs" "$out" \
  "added family newfam to t"
check_has "... and the same session reads it" "$out" \
  'r1|{"x":"1"}|{"q":"2"}'
v0=$("$WCS" nf.db "PRAGMA schema_version")
printf '_key,g2:q\nr2,3\n' > nf2.csv
"$WCS" nf.db ".import nf2.csv t" >/dev/null
check_eq "... and the other connections read the database's schema again" \
  "$("$WCS" nf.db "PRAGMA schema_version")" "$((v0 + 1))"

# a header that names a column twice, or no column for cells
printf '_key,f:q,f:q\nk,1,2\n' >dupcol.csv
"$WCS" hd.db ".import dupcol.csv hd" >/dev/null 2>err.txt
check_has "a header naming a column twice is refused" "$(cat err.txt)" \
  'dupcol.csv line 1: columns 2 and 3 are both "f:q"'
printf '_key,_timestamp\nk,1\n' >nocells.csv
"$WCS" hd.db "CREATE VIRTUAL TABLE hn USING wcs(FAMILY f)" >/dev/null
"$WCS" hd.db ".import nocells.csv hn" >/dev/null 2>err.txt
check_rc "a header without a cell column fails" 1 "$WCS" hd.db ".import nocells.csv hn"
check_has "... saying so" "$(cat err.txt)" \
  "nocells.csv line 1: the header names no column for cells"

"$WCS" hd.db ".import nocells.csv hn skip-bad=sure" >/dev/null 2>err.txt
check_has "a yes/no option refuses other words" "$(cat err.txt)" \
  'skip-bad=sure: expected yes or no'

# column-family= means the file has no family row, as for cbt import
printf ',f\n,q\nk,v\n' >tworows.cbt.csv
"$WCS" cf.db ".import tworows.cbt.csv cf column-family=f" >/dev/null 2>err.txt
check_has "a family row read as data when column-family= is given is explained" \
  "$(cat err.txt)" "tworows.cbt.csv line 2: empty row key: a second header row? with a family row, leave out column-family="

# a quoting error in the middle of a line is one bad line, not two
printf '_key,f:q\nr1,"1"x,more\nr2,2\nr3,b"c,d\nr4,4\n' >midq.csv
out=$("$WCS" midq.db ".import midq.csv mq skip-bad=yes" 2>err.txt)
check_has "skip-bad resumes at the next line after a quoting error" "$out" \
  "imported 2 rows (2 cells) into mq"
check_has "... and counts each bad line once" "$out" "; 2 bad lines skipped"
check_eq "... naming each once" "$(wc -l <err.txt)" "2"

# ---- a damaged store: the error names the file and offset; a failed
# export leaves the file it would have replaced
"$WCS" dmg.db "CREATE VIRTUAL TABLE t USING wcs(KEY (k INT64 DECIMAL(6)),
  FAMILY f (v STRING))" \
  "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i<4999)
   INSERT INTO t(k,v) SELECT i, printf('value %d', i*7919) FROM c" \
  "SELECT wcs_compact('t')" >/dev/null
python3 - dmg.db.wcs <<'EOF'
import os, sys
d = sys.argv[1]
f = max((x for x in os.listdir(d) if x.endswith('.sst')),
        key=lambda x: os.path.getsize(os.path.join(d, x)))
# a third into the file: a data block of the table, past the catalog's
o = os.path.getsize(os.path.join(d, f)) // 3
with open(os.path.join(d, f), 'r+b') as h:
    h.seek(o); b = h.read(1); h.seek(o); h.write(bytes([b[0] ^ 0xff]))
EOF
printf 'kept\n' > keep.cbt
# (a scan that reads the rows: count(*) of settled data counts them from
# the files' notes without reading the blocks)
"$WCS" dmg.db "SELECT count(v) FROM t" >/dev/null 2>err.txt
check_has "a scan of a damaged block names the file and offset" \
  "$(cat err.txt)" "t: reading the store: corrupt block at offset "
check_has "... and the reason" "$(cat err.txt)" ".sst: checksum mismatch"
"$WCS" dmg.db ".export t keep.cbt" >/dev/null 2>err.txt
check_has "a failed export says why" "$(cat err.txt)" "checksum mismatch"
check_eq "a failed export keeps the file it would replace" "$(cat keep.cbt)" \
  "kept"
check_eq "... and leaves no partial file" "$(ls keep.cbt.* 2>/dev/null)" ""

# export into a symbolic link, a pipe and a file whose mode was chosen
mkdir -p linkdir
ln -s linkdir/target.cbt link.cbt
"$WCS" rt.db ".export tele link.cbt" >/dev/null
check_rc "an export through a symbolic link keeps the link" 0 test -L link.cbt
check_rc "... and writes the file it points to" 0 cmp linkdir/target.cbt out1.cbt.csv
mkfifo fifo.cbt
timeout 20 cat fifo.cbt >fifo.out &
catpid=$!
"$WCS" rt.db ".export tele fifo.cbt" >/dev/null 2>err.txt
wait $catpid
check_eq "an export into a named pipe writes the pipe" "$(cat err.txt)" ""
check_rc "... the whole table" 0 cmp fifo.out out1.cbt.csv
check_rc "... and leaves the pipe a pipe" 0 test -p fifo.cbt
# a name for a descriptor the shell has open is written through it, after
# what the shell wrote there, even when it is a regular file
printf 'first\n' >fd.log
"$WCS" rt.db "SELECT 'before'" ".export tele /dev/stdout" "SELECT 'after'" \
  >>fd.log 2>err.txt
check_eq "an export to /dev/stdout, a regular file, says nothing wrong" \
  "$(cat err.txt)" ""
check_eq "... and appends to it, between the shell's other output" \
  "$(cat fd.log)" "$(printf 'first\nbefore\n'; cat out1.cbt.csv; echo after)"
"$WCS" rt.db "SELECT 'before'" ".export tele /dev/stdout" >fd.log
check_eq "... also when the shell's output was not opened to append" \
  "$(cat fd.log)" "$(echo before; cat out1.cbt.csv)"
ln -s /dev/stdout tostdout.cbt
printf 'first\n' >fd.log
"$WCS" rt.db ".export tele tostdout.cbt" >>fd.log
check_eq "... and so is a link to /dev/stdout" "$(cat fd.log)" \
  "$(echo first; cat out1.cbt.csv)"
printf 'first\n' >fd.log
"$WCS" rt.db ".export tele /dev/fd/7" ".export tele /proc/self/fd/7" \
  7>>fd.log >/dev/null
check_eq "/dev/fd/N and /proc/self/fd/N write through descriptor N" \
  "$(cat fd.log)" "$(echo first; cat out1.cbt.csv out1.cbt.csv)"
check_eq "... and leave no temporary file" "$(ls fd.log.* 2>/dev/null)" ""
"$WCS" rt.db ".export tele /dev/fd/9" >/dev/null 2>err.txt
check_has "an export to a descriptor that is not open says so" \
  "$(cat err.txt)" "cannot export to /dev/fd/9: descriptor 9 is not open"
printf 'old\n' > mode.cbt
chmod 600 mode.cbt
"$WCS" rt.db ".export tele mode.cbt" >/dev/null
check_eq "an export over a file keeps its permissions" "$(stat -c %a mode.cbt)" "600"
"$WCS" rt.db ".export tele nodir/x.cbt" >/dev/null 2>err.txt
check_has "an export to a missing folder names the file" "$(cat err.txt)" \
  "cannot create nodir/x.cbt: No such file or directory"
for o in key=x batch=5 frob; do
  "$WCS" rt.db ".export tele opt.cbt $o" >/dev/null 2>err.txt
  check_has "an import's option given to an export is refused ($o)" \
    "$(cat err.txt)" "option \"$o\" is not an export option"
done
check_rc "... and writes no file" 1 test -e opt.cbt
"$WCS" rt.db ".export tele opt.cbt timestamp=now" >/dev/null 2>err.txt
check_has "an export's timestamp= takes none or value-encoded" \
  "$(cat err.txt)" "timestamp=now: expected timestamp=none or value-encoded"
"$WCS" rt.db ".export tele ts.csv format=csv timestamp=value-encoded" >/dev/null
check_has "format= and timestamp=value-encoded are export options" \
  "$(head -1 ts.csv)" "_key,"

# ---- Ctrl-C (SIGINT) in a script stops an export or a picture part way,
# as it stops an import: the run fails (status 1), a file being replaced
# is as it was, and no temporary file is left. The shell is stopped
# (SIGSTOP) as soon as its temporary file is there, so that the signal
# comes while the rows are written.
"$WCS" int.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" \
  "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 299999)
   INSERT INTO t(_key, f) SELECT printf('k%08d', i), json_object('q', i) FROM c" \
  >/dev/null
printf 'OLD\n' >int.jsonl
out=$(python3 - "$WCS" <<'PY'
import glob, os, signal, subprocess, sys, time
def run(cmd, wait_for):
    with open("int.sql", "w") as f:
        f.write("SELECT 0;\n" + cmd + "\nSELECT 'not reached';\n")
    p = subprocess.Popen([sys.argv[1], "int.db"], stdin=open("int.sql"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()  # "0": the command is next
    t = time.time()
    while wait_for and not glob.glob(wait_for) and time.time() - t < 20:
        time.sleep(0.001)
    if not wait_for:
        time.sleep(0.02)
    p.send_signal(signal.SIGSTOP)
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGCONT)
    out, err = p.communicate(timeout=60)
    return "%d|%s|%s" % (p.returncode, out.decode().strip(), err.decode().strip())
print(run(".export t int.jsonl", "int.jsonl.wcs-*"))
print(run(".keyviz t int.svg", None))
PY
)
check_eq "SIGINT stops an export, which fails the run (status 1)" \
  "$(echo "$out" | sed -n 1p)" \
  "1||Error: stdin line 2: interrupted: the export of t stopped, and int.jsonl is as it was"
check_eq "... leaving the file it would replace as it was" "$(cat int.jsonl)" "OLD"
check_eq "... and no temporary file" "$(ls int.jsonl.* 2>/dev/null)" ""
check_eq "SIGINT stops a .keyviz before it writes the picture" \
  "$(echo "$out" | sed -n 2p)" \
  "1||Error: stdin line 2: interrupted: int.svg is not written"
check_rc "... which is not there" 1 test -e int.svg

# ---- input that would lose data without a word
# a quote never closed: the lines after it would be one field's text
printf '_key,f:a\nk1,1\nk2,"oops\nk3,3\nk4,4\n' > openq.csv
"$WCS" openq.db ".import openq.csv oq skip-bad=yes" >/dev/null 2>err.txt
check_has "a quote never closed stops even skip-bad=yes, naming its line" \
  "$(cat err.txt)" "openq.csv line 3: unterminated quoted field: the 3 lines after it"
check_eq "... keeping the rows before it" \
  "$("$WCS" openq.db ".mode list" "SELECT group_concat(_key) FROM oq")" "k1"
# \u0000 in JSON: SQLite's JSON functions would end the string there
printf '{"_key":"a\\u0000b","f:x":"1"}\n' > nul.jsonl
"$WCS" nul.db ".import nul.jsonl nl" >/dev/null 2>err.txt
check_has "a JSON string holding \\u0000 is refused, naming the line" \
  "$(cat err.txt)" 'nul.jsonl line 1: a string holds \u0000'
# a failed import that imported nothing takes back the families it added
"$WCS" fam.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" >/dev/null
printf '_key,h:q\nk1,1,2\n' > fam.csv
out=$("$WCS" fam.db ".import fam.csv t" 2>/dev/null)
check_has "a failed import removes the families it added" "$out" \
  "removed the families added to t"
check_eq "... so the table is as it was" "$("$WCS" fam.db ".schema t")" \
  "CREATE VIRTUAL TABLE t USING wcs(
  FAMILY f
);"
# typed columns take what an INSERT takes
"$WCS" ty.db "CREATE VIRTUAL TABLE ty USING wcs(KEY (k STRING), FAMILY f (d INT64 DECIMAL(4), w FLOAT64))" >/dev/null
for bad in 'd\nk,12345' 'd\nk,-1' 'w\nk,nan' 'w\nk,inf' 'w\nk,0x10'; do
  printf "k,${bad%%\\n*}\n${bad#*\\n}\n" > ty.csv
  "$WCS" ty.db ".import ty.csv ty" >/dev/null 2>err.txt
  check_has "a typed column refuses what SQL refuses (${bad#*\\n})" "$(cat err.txt)" \
    "ty.csv line 2: value"
done
check_eq "... and keeps nothing of it" "$("$WCS" ty.db ".mode list" "SELECT count(*) FROM ty")" "0"
printf 'k,w\nk,1e400\n' > ty.csv
"$WCS" ty.db ".import ty.csv ty" >/dev/null
check_eq "a number too large for FLOAT64 is infinite, as in SQL" \
  "$("$WCS" ty.db ".mode list" "SELECT w > 1e308 FROM ty")" "1"

# ---- JSON numbers under any member name
# (numbers are read from the line's JSON text, not looked up by path: a
# path cannot name a member holding a '"')
printf '{"_key":"r","f:a\\"b":1.50,"f:ok":2.5,"f":{"q\\"z":7,"w":-0},"f:big":12345678901234567890123,"f:e":1E+5}\n' >qn.jsonl
"$WCS" qn.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" ".import qn.jsonl t" >/dev/null
out=$("$WCS" qn.db "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)" \
  "SELECT qualifier, value FROM h ORDER BY qualifier")
check_eq "a JSON number keeps its text whatever its member's name holds" "$out" \
  'a"b|1.50
big|12345678901234567890123
e|1E+5
ok|2.5
q"z|7
w|-0'

# ---- one value per column: duplicate JSON members are refused, as CSV
# refuses a column named twice
"$WCS" dup.db "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" >/dev/null
printf '{"_key":"a","f:q":"0"}\n{"_key":"s","f:q":"1","f:q":"2"}\n' >dup1.jsonl
"$WCS" dup.db ".import dup1.jsonl t" >/dev/null 2>err.txt
check_has "a member given twice is refused, naming file, line and member" \
  "$(cat err.txt)" 'dup1.jsonl line 2: member "f:q" appears twice'
check_eq "... and the line before it is kept" \
  "$("$WCS" dup.db "SELECT _key, f FROM t")" 'a|{"q":"0"}'
printf '{"_key":"o","f":{"q":"1"},"f:q":"2"}\n' >dup2.jsonl
"$WCS" dup.db ".import dup2.jsonl t" >/dev/null 2>err.txt
check_has "two members reaching one column are refused, naming both" \
  "$(cat err.txt)" 'dup2.jsonl line 1: "q" in "f" and "f:q" both give column f:q a value'
printf '{"_key":"n","f":{"q":1,"q":2}}\n' >dup3.jsonl
"$WCS" dup.db ".import dup3.jsonl t" >/dev/null 2>err.txt
check_has "a member twice in a family object is refused" "$(cat err.txt)" \
  'dup3.jsonl line 1: "q" in "f" and "q" in "f" both give column f:q'
printf '{"_key":"c","cells":[{"family":"f","qualifier":"q","timestamp":5,"value":"a"},{"family":"f","qualifier":"q","timestamp":5,"value":"b"}]}\n{"_key":"v","cells":[{"family":"f","qualifier":"q","timestamp":5,"value":"a"},{"family":"f","qualifier":"q","timestamp":6,"value":"b"}]}\n' >dup4.jsonl
"$WCS" dup.db ".import dup4.jsonl t skip-bad=yes" >out.txt 2>err.txt
check_has "two cells entries for one column and timestamp are refused" \
  "$(cat err.txt)" 'dup4.jsonl line 1: "cells"[0] and "cells"[1] both give column f:q at timestamp 5'
check_has "... while versions of a column are not" "$(cat out.txt)" \
  "imported 1 rows (2 cells)"
printf '{"Item":{"k":{"S":"1"},"a":{"N":"1"},"a":{"N":"2"}}}\n' >dup.ddb.json
"$WCS" dup.db ".import dup.ddb.json t key={k} family=f" >/dev/null 2>err.txt
check_has "a DynamoDB attribute given twice is refused" "$(cat err.txt)" \
  'dup.ddb.json line 1: member "a" appears twice'
check_eq "... and none of the refused lines left a cell" \
  "$("$WCS" dup.db "SELECT _key FROM t ORDER BY 1")" "a
v"

# ---- CSV header names holding a NUL byte: a qualifier keeps its bytes
printf '_key,ab\0cd\nr1,v\n' >nulq.csv
"$WCS" nulq.db ".import nulq.csv t family=f" >/dev/null
check_eq "a NUL in a header name with family= is a qualifier's byte, kept" \
  "$("$WCS" nulq.db "CREATE VIRTUAL TABLE h USING wcs(TABLE 't', HISTORY)" \
    "SELECT hex(qualifier), value FROM h")" "6162006364|v"
printf '_key,f\0x:q\nr1,v\n' >nulf.csv
"$WCS" nulf.db ".import nulf.csv t" >/dev/null 2>err.txt
check_has "a family name holding a NUL is refused, naming the column" \
  "$(cat err.txt)" 'nulf.csv line 1: column 2: family name "f\x00x" holds a NUL byte'
check_eq "... and no table is made" "$("$WCS" nulf.db ".tables")" ""
printf '_key\0x,f:q\nr1,v\n' >nulk.csv
"$WCS" nulk.db ".import nulk.csv t" >/dev/null 2>err.txt
check_has "a name holding a NUL is not _key" "$(cat err.txt)" \
  "the header names neither _key nor every key field"

# ---- CSV: a family named in the first column
printf 'f:q,_key\nv,k\n' >first.csv
out=$("$WCS" first.db ".import first.csv t" 2>&1)
check_has "a family named only in the first column creates the table" "$out" \
  "imported 1 rows (1 cells) into t"
out=$("$WCS" first.db "CREATE VIRTUAL TABLE t3 USING wcs(FAMILY g)" \
  ".import first.csv t3" "SELECT _key, f FROM t3" 2>&1)
check_has "... and is added to an existing table" "$out" "added family f to t3"
check_has "... which then holds the cell" "$out" 'k|{"q":"v"}'
printf ',a:b,c\nk,1,2\n' >colon.cbt.csv
"$WCS" first.db ".import colon.cbt.csv cb column-family=f" >/dev/null
check_eq "cbt with column-family=: a qualifier with a colon names no family" \
  "$("$WCS" first.db "SELECT f FROM cb")" '{"a:b":"1","c":"2"}'
check_has "... so the table has that family alone" \
  "$("$WCS" first.db ".schema cb")" "USING wcs(
  FAMILY f
);"

# ---- records made only of empty fields (no bytes at all): a header row
# `,` with column-family=, and a cbt qualifier row naming the empty
# qualifier (what .export writes for a column whose qualifier is empty)
printf ',\n' >empties.cbt
out=$("$WCS" em.db ".import empties.cbt t family=f" 2>&1)
check_has "a header row of empty fields alone imports" "$out" \
  "imported 0 rows (0 cells) into t"
printf ',f\n,\nk,v@1\n' >emptyq.cbt
"$WCS" em.db ".import emptyq.cbt q timestamp=value-encoded" >/dev/null 2>err.txt
check_eq "... as does a cbt file whose qualifier is empty" \
  "$(cat err.txt; cells em.db q)" "6B|f||1|76"
# a row whose cells have an empty qualifier and an empty value: no bytes
printf ',f\n,\nk,""\n' >emptycell.cbt
printf '{"_key":"k","f:":""}\n' >emptycell.jsonl
for f in emptycell.cbt emptycell.jsonl; do
  "$WCS" em.db ".import $f e_${f#*.}" >/dev/null 2>err.txt
  check_eq "a cell of empty qualifier and value imports ($f)" \
    "$(cat err.txt; cells em.db e_${f#*.} | cut -d'|' -f1,2,3,5)" "6B|f||"
done
printf '{"_key":"k","cells":[%s,%s]}\n' \
  '{"family":"f","qualifier":"","timestamp":5,"value":""}' \
  '{"family":"f","qualifier":"","timestamp":5,"value":""}' >emptycell2.jsonl
"$WCS" em.db ".import emptycell2.jsonl e_jsonl" >/dev/null 2>err.txt
check_has "... and twice in a line is refused, naming the column" \
  "$(cat err.txt)" '"cells"[0] and "cells"[1] both give column f: at timestamp 5'

# ---- an empty table exports to files that import again (no rows)
"$WCS" empty.db "CREATE VIRTUAL TABLE e USING wcs(FAMILY f)" \
  "CREATE VIRTUAL TABLE k USING wcs(KEY (a STRING, b INT64 DECIMAL(4)), FAMILY f)" \
  ".export e e.cbt" ".export e e.csv csv" ".export e e.jsonl" ".export k k.csv csv" \
  >/dev/null
for f in e.cbt e.csv e.jsonl; do
  out=$("$WCS" empty.db ".import $f e" 2>&1)
  check_eq "an empty table's $f export imports again: no rows, no error" \
    "${out%% in *}" "imported 0 rows (0 cells) into e"
done
out=$("$WCS" empty.db ".import k.csv k" 2>&1)
check_has "a keyed empty table's csv export (key columns alone) imports again" \
  "$out" "imported 0 rows (0 cells) into k"
printf '_key\nr1\n' >nocells.csv
"$WCS" empty.db ".import nocells.csv e" >/dev/null 2>err.txt
check_has "a header without cell columns and a line of data is still refused" \
  "$(cat err.txt)" "nocells.csv line 1: the header names no column for cells"
: >nothing.csv
"$WCS" empty.db ".import nothing.csv nosuch" >/dev/null 2>err.txt
check_has "an empty file cannot create a table without a family" \
  "$(cat err.txt)" "no such table: nosuch"

# ---- :memory:: the statement right after an import that added a family
# has the new column
printf '_key,f:a,g:b\nr1,1,2\n' >fg.csv
out=$("$WCS" :memory: ".headers on" "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" \
  ".import fg.csv t" "SELECT * FROM t")
check_has "in memory: the next statement sees the family an import added" \
  "$out" '_key|f|g
r1|{"a":"1"}|{"b":"2"}'
out=$("$WCS" :memory: ".headers on" "CREATE VIRTUAL TABLE t USING wcs(FAMILY f)" \
  "CREATE TEMP TABLE keep(x)" ".import fg.csv t" "SELECT count(*) FROM keep")
check_has "... and the connection is kept (its TEMP tables too)" "$out" "count(*)
0"

# ---- importing into a table that is not a wcs table
printf '_key,f:q\nk,v\n' >plain.csv
"$WCS" plain.db "CREATE TABLE plain(x)" "CREATE VIEW vv AS SELECT 1" >/dev/null
"$WCS" plain.db ".import plain.csv plain" >/dev/null 2>err.txt
check_has "an import into a plain SQLite table says it is not a wcs table" \
  "$(cat err.txt)" "cannot import into plain: it is a plain SQLite table, not a wcs table"
check_rc "... and makes no store" 1 test -e plain.db.wcs
"$WCS" plain.db ".import plain.csv vv" >/dev/null 2>err.txt
check_has "... nor into a view" "$(cat err.txt)" "cannot import into vv: it is a view"

# ---- the command-line forms
out=$("$WCS" import cli.db tele "$DATA/telemetry.cbt.csv" timestamp=value-encoded)
check_has "wcs import DB TABLE FILE" "$out" "imported 31 rows"
"$WCS" export cli.db tele cli.cbt.csv >/dev/null
check_rc "wcs export DB TABLE FILE" 0 cmp cli.cbt.csv out1.cbt.csv
"$WCS" export nosuch.db tele x.cbt.csv >/dev/null 2>err.txt
check_has "wcs export of a missing database says so" "$(cat err.txt)" \
  "no database nosuch.db"
check_rc "... and makes none" 1 test -e nosuch.db
out=$("$WCS" export cli.db tele - jsonl | head -1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["_key"], len(d["cells"]))')
check_eq "export to standard output" "$out" "phone#4c410523#20190501 5"

finish
