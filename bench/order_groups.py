#!/usr/bin/python3
"""order_groups.py -- ORDER BY on key fields whose direction changes once.

Loads the same 28,572 telemetry rows (10 devices x 500 ids x up to 97 days,
two families) into a wcs table and a native WITHOUT ROWID table in one
in-memory connection, then times each statement below on both (best of 5)
and prints: whether the rows agree, wcs ms, native ms, the statement, and
the wcs plan. Statements whose ORDER BY leaves ties (none below) could list
tied rows in another order.

usage: /usr/bin/python3 bench/order_groups.py build/wcs
"""
import sqlite3
import sys
import time

so = sys.argv[1] if len(sys.argv) > 1 else "build/wcs"
con = sqlite3.connect(":memory:", isolation_level=None)
con.enable_load_extension(True)
con.load_extension(so)
con.execute("CREATE VIRTUAL TABLE t USING wcs(KEY (device STRING, id STRING, "
            "day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY s (cpu INT64), "
            "FAMILY m (note STRING))")
con.execute("CREATE TABLE n(device, id, day, cpu, note, "
            "PRIMARY KEY(device, id, day)) WITHOUT ROWID")
rows = [("d%02d" % (i % 10), "i%04d" % (i // 10 % 500), 20230000 + i % 97,
         i % 100, "x" if i % 3 else None) for i in range(0, 200000, 7)]
con.execute("BEGIN")
con.executemany("INSERT OR REPLACE INTO t(device, id, day, cpu, note) "
                "VALUES (?, ?, ?, ?, ?)", rows)
con.executemany("INSERT OR REPLACE INTO n VALUES (?, ?, ?, ?, ?)", rows)
con.execute("COMMIT")
con.execute("SELECT wcs_compact('t')")
con.execute("ANALYZE")

QUERIES = [
    "SELECT device, id, day, cpu FROM {t} WHERE device = 'd03' "
    "ORDER BY id, day DESC LIMIT 10",
    "SELECT device, id, day, cpu FROM {t} ORDER BY device, id, day DESC LIMIT 10",
    "SELECT device, id, day, cpu FROM {t} WHERE device = 'd03' "
    "ORDER BY id DESC, day LIMIT 10",
    "SELECT device, id, day, cpu FROM {t} ORDER BY device DESC, id, day",
    "SELECT device, id, day FROM {t} WHERE device = 'd03' ORDER BY id, day DESC",
    "SELECT device, id, day, note FROM {t} WHERE device BETWEEN 'd02' AND 'd04' "
    "ORDER BY device, id DESC, day DESC LIMIT 50",
    "SELECT device, id, day, note FROM {t} WHERE device IN ('d02', 'd05') "
    "AND id > 'i0400' ORDER BY device DESC, id, day LIMIT 50",
    "SELECT device, id, day, note FROM {t} WHERE note IS NOT NULL "
    "ORDER BY device, id DESC, day DESC LIMIT 20",
    "SELECT device, id, day FROM {t} WHERE device = 'd03' "
    "ORDER BY id, day DESC LIMIT 5 OFFSET 300",
    "SELECT device, id, day, cpu FROM {t} ORDER BY id DESC, day LIMIT 10",
]


def best(sql):
    b = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        con.execute(sql).fetchall()
        b = min(b, time.perf_counter() - t0)
    return b * 1000


for q in QUERIES:
    qw, qn = q.format(t="t"), q.format(t="n")
    same = con.execute(qw).fetchall() == con.execute(qn).fetchall()
    plan = " / ".join(r[3] for r in con.execute("EXPLAIN QUERY PLAN " + qw))
    print("%-4s %8.2f %8.2f  %s  [%s]" % ("ok" if same else "DIFF", best(qw),
                                         best(qn), qw, plan))
