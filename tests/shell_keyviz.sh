#!/usr/bin/env bash
# shell_keyviz.sh — the key-distribution picture: .keyviz and `wcs keyviz`
# write well-formed SVG (python3's xml.etree parses it) with the expected
# key buckets, labels (XML-escaped), heat cells and distribution bars.
# Run: bash tests/shell_keyviz.sh BUILD
source "$(dirname "$0")/data/shell-lib.bash" "$1"

# svginfo FILE: facts about the SVG, one "name value" per line
svginfo() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
def cls(c): return [e for e in root.iter() if e.get("class") == c]
print("root", root.tag.split("}")[1], root.get("width"), root.get("height"))
print("labels", len(cls("bucket-label")))
for e in cls("bucket-label"):
    print("label", e.text)
print("heat-w", len(cls("heat-w")))
print("heat-r", len(cls("heat-r")))
print("dist-rows", len(cls("dist-rows")))
w = sum(1 for e in cls("heat-w") if e.get("fill") != "#10141f")
r = sum(1 for e in cls("heat-r") if e.get("fill") != "#10141f")
print("hot-w", 1 if w else 0)
print("hot-r", 1 if r else 0)
print("title", "".join(root.find("s:text", ns).itertext()))
PY
}

# a keyed table: buckets by prefix
"$WCS" k.db "CREATE VIRTUAL TABLE tele USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
  FAMILY s (v INT64))" \
  "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 20)
   INSERT INTO tele(device, id, day, v)
   SELECT dev, id, 20200500 + n, n FROM d,
     (SELECT 'phone' AS dev, 'a1' AS id UNION ALL SELECT 'phone', 'b2'
      UNION ALL SELECT 'tablet', 'c3' UNION ALL SELECT 'watch', 'd4')" \
  "SELECT count(*) FROM tele WHERE device = 'phone' AND id = 'a1'" >/dev/null
out=$("$WCS" k.db ".keyviz tele tele.svg")
check_has ".keyviz writes the file" "$out" "wrote tele.svg: 4 key buckets"
info=$(svginfo tele.svg)
check_has "the SVG parses and is an svg root 1200x800" "$info" "root svg 1200 800"
check_has "one label per prefix bucket" "$info" "labels 4"
check_has "labels are the key prefixes" "$info" "label phone#a1#"
check_has "... in key order" "$(echo "$info" | grep '^label' | tr '\n' ' ')" \
  "label phone#a1# label phone#b2# label tablet#c3# label watch#d4#"
check_has "rows/bytes bars per bucket" "$info" "dist-rows 4"
check_has "the title names the table" "$info" "title Key Visualizer: tele"
nslot=$(echo "$out" | sed -n 's/.* x \([0-9]*\) time slots/\1/p')
check_eq "heat cells: buckets x slots (writes)" "$(echo "$info" | sed -n 's/^heat-w //p')" "$((4 * nslot))"
check_eq "heat cells: buckets x slots (reads)" "$(echo "$info" | sed -n 's/^heat-r //p')" "$((4 * nslot))"
if [ "$nslot" -gt 0 ]; then
  check_has "the writes show up as heat" "$info" "hot-w 1"
else
  not_ok "the engine counted the writes in a time slot"
fi

# the same through `wcs keyviz` in a new process (counters saved at exit)
"$WCS" keyviz k.db tele cli.svg >/dev/null
check_rc "wcs keyviz DB TABLE FILE.svg" 0 test -s cli.svg
info=$(svginfo cli.svg)
check_has "counters persist across processes" "$info" "hot-w 1"

# ORDERED CODE and REVERSED DECIMAL fields are labelled with their values,
# not the bytes that encode them (0 is the byte 0x80 in ORDERED CODE)
"$WCS" oc.db "CREATE VIRTUAL TABLE oc USING wcs(
  KEY (n INT64, dev STRING) ORDERED CODE, FAMILY f (v INT64))" \
  "CREATE VIRTUAL TABLE rd USING wcs(
  KEY (dev STRING, day INT64 REVERSED DECIMAL(8), id STRING), FAMILY f (v INT64))" \
  "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 50)
   INSERT INTO oc(n, dev, v) SELECT n % 5 - 2, 'd' || n, n FROM d" \
  "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 50)
   INSERT INTO rd(dev, day, id, v) SELECT 'boiler', 20200501 + n % 2, 'i' || n, n
   FROM d" >/dev/null
"$WCS" oc.db ".keyviz oc oc.svg" ".keyviz rd rd.svg" >/dev/null
check_has "ORDERED CODE prefixes are labelled with their values, in key order" \
  "$(svginfo oc.svg | grep '^label' | tr '\n' ' ')" \
  "label -2 label -1 label 0 label 1 label 2 "
check_has "a REVERSED DECIMAL field is labelled with its value" \
  "$(svginfo rd.svg | grep '^label' | tr '\n' ' ')" \
  "label boiler#20200502# label boiler#20200501# "

# reads are the rows statements and exports return: not the rows the
# planner counts for its estimates, an export's look over the columns, or
# the picture's own passes over the table
"$WCS" q.db "CREATE VIRTUAL TABLE q USING wcs(
  KEY (dev STRING, n INT64 DECIMAL(4)) DELIMITED BY '#', FAMILY f (v INT64))" \
  "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 500)
   INSERT INTO q(dev, n, v) SELECT 'd' || (n % 5), n, n FROM d" >/dev/null
"$WCS" q.db "SELECT v FROM q WHERE dev = 'd1' AND n = 1" \
  "SELECT v FROM q WHERE dev = 'd2' AND n = 2" \
  "SELECT count(*) FROM q WHERE n = 3" ".export q q.csv csv" >/dev/null
"$WCS" q.db ".keyviz q q1.svg" >/dev/null
"$WCS" keyviz q.db q q2.svg >/dev/null
check_has "rows read: three looked up and 500 exported" \
  "$(grep -o '[0-9]* rows read in' q1.svg)" "503 rows read in"
check_has "... and the picture's own passes are not reads" \
  "$(grep -o '[0-9]* rows read in' q2.svg)" "503 rows read in"

# a table without a key schema: equal-row buckets; labels escaped
"$WCS" r.db "CREATE VIRTUAL TABLE raw USING wcs(FAMILY f)" \
  "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d WHERE n < 100)
   INSERT INTO raw(_key, f) SELECT printf('k<&>\"%03d', n), json_object('q', n) FROM d" \
  "INSERT INTO raw(_key, f) VALUES (x'0102ff', json_object('q', 'bin'))" >/dev/null
out=$("$WCS" r.db ".keyviz raw raw.svg buckets=10")
check_has "buckets=N" "$out" "10 key buckets"
info=$(svginfo raw.svg)
check_has "special characters in labels are escaped and parse back" "$info" 'label k<&>"011'
check_has "bytes that are not printable appear as \\xNN" "$info" 'label \x01\x02\xFF'

# an empty table still gives a valid picture
"$WCS" r.db "CREATE VIRTUAL TABLE empty USING wcs(FAMILY f)" >/dev/null
"$WCS" r.db ".keyviz empty empty.svg" >/dev/null
info=$(svginfo empty.svg)
check_has "an empty table gives a valid SVG" "$info" "root svg"

"$WCS" r.db ".keyviz nosuch x.svg" >/dev/null 2>err.txt
check_has "a missing table is an error" "$(cat err.txt)" "no such wcs table: nosuch"
"$WCS" r.db ".keyviz raw x.svg buckets=0" >/dev/null 2>err.txt
check_has "buckets is checked" "$(cat err.txt)" "buckets=1..200"

"$WCS" r.db ".keyviz raw nodir/x.svg" >/dev/null 2>err.txt
check_has "a file that cannot be created says why" "$(cat err.txt)" \
  "cannot create nodir/x.svg: No such file or directory"
finish
