#!/usr/bin/python3
"""key_split.py -- scans that read key fields, DELIMITED against ORDERED CODE.

Loads 200,000 rows (4 devices x 2,000 ids x 25 days) into two wcs tables of
one in-memory connection, one with KEY (device STRING, id STRING, day
INT64) DELIMITED BY '#' (day as DECIMAL(8)), one with the same fields in
an ORDERED CODE key, compacts both, and times (best of 7) statements that
read key fields of every row, which split each row's key.

usage: /usr/bin/python3 bench/key_split.py build/wcs
       /usr/bin/python3 bench/key_split.py build/wcs 'SQL' N
  (the second form runs one statement N times, for callgrind: the
  instructions of N = 3 less those of N = 1, halved, are one run's)
"""
import sqlite3
import sys
import time

so = sys.argv[1] if len(sys.argv) > 1 else "build/wcs"
con = sqlite3.connect(":memory:", isolation_level=None)
con.enable_load_extension(True)
con.load_extension(so)
con.execute("CREATE VIRTUAL TABLE dl USING wcs(KEY (device STRING, id STRING, "
            "day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY f (v INT64))")
con.execute("CREATE VIRTUAL TABLE oc USING wcs(KEY (device STRING, id STRING, "
            "day INT64) ORDERED CODE, FAMILY f (v INT64))")
rows = [("dev%d" % (i % 4), "%08x" % (i // 4 % 2000), 20200101 + i // 8000, i)
        for i in range(200000)]
con.execute("BEGIN")
for t in ("dl", "oc"):
    con.executemany("INSERT INTO %s(device, id, day, v) VALUES (?, ?, ?, ?)"
                    % t, rows)
con.execute("COMMIT")
for t in ("dl", "oc"):
    con.execute("SELECT wcs_compact('%s')" % t)

if len(sys.argv) > 3:
    for _ in range(int(sys.argv[3])):
        con.execute(sys.argv[2]).fetchall()
    sys.exit(0)
for q in ["SELECT sum(v) FROM %s", "SELECT count(*), sum(day) FROM %s",
          "SELECT device, count(*) FROM %s GROUP BY device",
          "SELECT sum(length(id)) FROM %s"]:
    line = []
    for t in ("dl", "oc"):
        best = None
        for _ in range(7):
            t0 = time.perf_counter()
            con.execute(q % t).fetchall()
            dt = time.perf_counter() - t0
            best = dt if best is None or dt < best else best
        line.append("%s %.1f ms" % (t, best * 1000))
    print("%-50s %s" % (q % "T", ", ".join(line)))
