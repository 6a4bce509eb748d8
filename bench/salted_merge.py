#!/usr/bin/python3
"""salted_merge.py -- a salted table's buckets merged back into key order.

Loads 100,000 rows (4 devices x 25,000 numbers) into wcs tables with
SALT 8 and SALT 256 and into a native WITHOUT ROWID table of one
in-memory connection, then times (best of 5) statements that need key
order, which the module gives by merging the buckets' streams: a GROUP
BY of the first key field and an ORDER BY with a large OFFSET. Run it
with two builds to compare them.

usage: /usr/bin/python3 bench/salted_merge.py build/wcs
"""
import sqlite3
import sys
import time

so = sys.argv[1] if len(sys.argv) > 1 else "build/wcs"
con = sqlite3.connect(":memory:", isolation_level=None)
con.enable_load_extension(True)
con.load_extension(so)
rows = [("d%d" % (i % 4), i, i) for i in range(100000)]
tables = ["n"]
con.execute("CREATE TABLE n(a TEXT, b INTEGER, v INTEGER, "
            "PRIMARY KEY(a, b)) WITHOUT ROWID")
con.execute("BEGIN")
con.executemany("INSERT INTO n VALUES (?, ?, ?)", rows)
for salt in (8, 256):
    t = "s%d" % salt
    tables.append(t)
    con.execute("CREATE VIRTUAL TABLE %s USING wcs(KEY (a STRING, b INT64 "
                "DECIMAL(6)) DELIMITED BY '#' SALT %d, FAMILY f (v INT64))"
                % (t, salt))
    con.executemany("INSERT INTO %s(a, b, v) VALUES (?, ?, ?)" % t, rows)
con.execute("COMMIT")
for t in tables[1:]:
    con.execute("SELECT wcs_compact('%s')" % t)

for q in ["SELECT a, count(*) FROM %s GROUP BY a",
          "SELECT a, b FROM %s ORDER BY a, b LIMIT 1 OFFSET 99990",
          "SELECT a, b FROM %s ORDER BY a DESC, b DESC LIMIT 1 OFFSET 99990"]:
    line = []
    for t in tables:
        best = None
        for _ in range(5):
            t0 = time.perf_counter()
            con.execute(q % t).fetchall()
            dt = time.perf_counter() - t0
            best = dt if best is None or dt < best else best
        line.append("%s %.1f ms" % (t, best * 1000))
    print("%-62s %s" % (q % "T", ", ".join(line)))
