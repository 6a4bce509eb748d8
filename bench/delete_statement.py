#!/usr/bin/python3
"""delete_statement.py -- many rows deleted by one statement, and reads after.

Loads ROWS rows (default 400,000; key device#id#day, two families) into a
wcs table and into a native WITHOUT ROWID table of one database file, each
compacted or checkpointed, then, on both: a DELETE of one device's rows
(a quarter) by one statement, a count(*) of the whole table right after
(wcs reads over the deleted rows' range tombstones until a compaction),
and a count(*) of another device's rows. SQLite hands the module the rows
of a DELETE one at a time, and wcs deletes each row of each family with a
range tombstone. Run it with two builds to compare them.

usage: /usr/bin/python3 bench/delete_statement.py build/wcs [ROWS]
"""
import os
import shutil
import sqlite3
import sys
import tempfile
import time

so = sys.argv[1] if len(sys.argv) > 1 else "build/wcs"
nrows = int(sys.argv[2]) if len(sys.argv) > 2 else 400000
tmp = tempfile.mkdtemp(prefix="wcs-delete-statement-")
try:
    con = sqlite3.connect(os.path.join(tmp, "d.db"), isolation_level=None)
    con.enable_load_extension(True)
    con.load_extension(so)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE VIRTUAL TABLE w USING wcs(KEY (device STRING, "
                "id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#', "
                "FAMILY stats (cpu INT64, mem INT64), FAMILY meta "
                "(note STRING), SYNC NORMAL)")
    con.execute("CREATE TABLE n(device TEXT, id TEXT, day INTEGER, "
                "cpu INTEGER, mem INTEGER, note TEXT, "
                "PRIMARY KEY(device, id, day)) WITHOUT ROWID")
    devices = ["laptop", "phone", "tablet", "watch"]
    rows = [(devices[i % 4], "%08x" % ((i // 4) % 1000),
             20230101 + i // 4000, i % 100, i, "fw") for i in range(nrows)]
    for t in ("n", "w"):
        con.execute("BEGIN")
        con.executemany("INSERT INTO %s(device, id, day, cpu, mem, note) "
                        "VALUES (?, ?, ?, ?, ?, ?)" % t, rows)
        con.execute("COMMIT")
    con.execute("SELECT wcs_compact('w')")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print("%d rows; %d deleted by one statement" % (nrows, nrows // 4))
    for q in ["DELETE FROM %s WHERE device = 'tablet'",
              "SELECT count(*) FROM %s",
              "SELECT count(*) FROM %s WHERE device = 'watch'"]:
        line = []
        for t in ("n", "w"):
            t0 = time.perf_counter()
            con.execute(q % t).fetchall()
            line.append("%s %.1f ms" % ("native" if t == "n" else "wcs",
                                        (time.perf_counter() - t0) * 1000))
        print("%-48s %s" % (q % "T", ", ".join(line)))
    con.close()
finally:
    shutil.rmtree(tmp)
