#!/usr/bin/python3
"""like_prefix.py -- LIKE prefixes with letters against their exact forms.

Loads 200,000 telemetry rows (10 devices x 200 ids x 100 days) into a wcs
table and a native WITHOUT ROWID table of one in-memory connection, then
times each LIKE below (best of 5) beside the exact form it stands for
(GLOB or starts_with, which is case-sensitive and so one key range), with
the data blocks each read (wcs_stats' cache hits and misses) and the wcs
plan; and a key-field LIKE on the native table, which cannot use its
primary key for a case-insensitive LIKE.

usage: /usr/bin/python3 bench/like_prefix.py build/wcs
"""
import json
import random
import sqlite3
import sys
import time

so = sys.argv[1] if len(sys.argv) > 1 else "build/wcs"
con = sqlite3.connect(":memory:", isolation_level=None)
con.enable_load_extension(True)
con.load_extension(so)
random.seed(1)
con.execute("CREATE VIRTUAL TABLE t USING wcs(KEY (device STRING, id STRING, "
            "day INT64 DECIMAL(8)) DELIMITED BY '#', FAMILY stats (cpu INT64, "
            "mem INT64), FAMILY meta (note STRING))")
con.execute("CREATE TABLE n(device TEXT, id TEXT, day INTEGER, cpu INTEGER, "
            "mem INTEGER, note TEXT, PRIMARY KEY(device, id, day)) WITHOUT ROWID")
ids = sorted("%08x" % random.getrandbits(32) for _ in range(200))
rows = [("d%02d" % d, i, 20200101 + k, random.randint(0, 100),
         random.randint(0, 1 << 20), "note-" + "x" * random.randint(50, 150))
        for d in range(10) for i in ids for k in range(100)]
con.execute("BEGIN")
con.executemany("INSERT INTO t(device, id, day, cpu, mem, note) "
                "VALUES (?, ?, ?, ?, ?, ?)", rows)
con.executemany("INSERT INTO n VALUES (?, ?, ?, ?, ?, ?)", rows)
con.execute("COMMIT")
con.execute("SELECT wcs_compact('t')")
con.execute("ANALYZE")
c8 = ids[len(ids) // 2][:2]


def blocks():
    s = json.loads(con.execute("SELECT wcs_stats('t')").fetchone()[0])
    s = s["store"]["stats"]
    return s["cache_hits"] + s["cache_misses"]


def measure(sql):
    b = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        r = con.execute(sql).fetchall()
        b = min(b, time.perf_counter() - t0)
    b0 = blocks()
    con.execute(sql).fetchall()
    plan = " / ".join(x[3] for x in con.execute("EXPLAIN QUERY PLAN " + sql))
    return b * 1000, blocks() - b0, sorted(r), plan


PAIRS = [
    ("SELECT count(*) FROM t WHERE _key LIKE 'd05#%'",
     "SELECT count(*) FROM t WHERE starts_with(_key, 'd05#')"),
    ("SELECT _key FROM t WHERE _key LIKE 'd03#%s%%'" % c8,
     "SELECT _key FROM t WHERE _key GLOB 'd03#%s*'" % c8),
    ("SELECT count(*) FROM t WHERE device LIKE 'd05%'",
     "SELECT count(*) FROM t WHERE device GLOB 'd05*'"),
    ("SELECT device, id, day FROM t WHERE device = 'd03' AND id LIKE '%s%%'" % c8,
     "SELECT device, id, day FROM t WHERE device = 'd03' AND id GLOB '%s*'" % c8),
]
for like, exact in PAIRS:
    tl, bl, rl, pl = measure(like)
    te, be, re_, pe = measure(exact)
    print("%s\n  LIKE  %8.2f ms %5d blocks  [%s]\n  exact %8.2f ms %5d blocks  "
          "[%s]\n  same rows: %s" % (like, tl, bl, pl, te, be, pe, rl == re_))
tn, _, _, pn = measure("SELECT count(*) FROM n WHERE device LIKE 'd05%'")
print("native: SELECT count(*) FROM n WHERE device LIKE 'd05%%'\n  %8.2f ms  "
      "[%s]" % (tn, pn))
