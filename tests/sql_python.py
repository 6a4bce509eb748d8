"""sql_python.py — the wcs extension from Python's standard-library sqlite3
module, as a script user meets it (DESIGN.md §2-§6): enable_load_extension and
load_extension(<build>/wcs), CREATE VIRTUAL TABLE, parameters (qmark, named,
bytes for _key, executemany), a prefix scan and its EXPLAIN QUERY PLAN words,
a transaction rolled back and one committed, a savepoint, reopening the file
on a new connection, and errors raised as exceptions with a clear message
(of the class the error's code gives: a key past 4 KiB is DataError).
Then threads, each with its own connection on one file in SQLite's default
rollback-journal mode: writers add to a SUM aggregate family, in statements
of their own and in transactions, retrying what fails with "database is
locked", while readers hold read transactions on the file; the sums must be
exactly the writes that succeeded (a commit SQLite refused must leave
nothing in the store, or the retry counts twice). Last, threads that add 1
to a declared INT64 column by read-modify-write, in WAL and in rollback-
journal mode: `UPDATE t SET v = v + 1` on its own, SELECT then UPDATE
inside BEGIN IMMEDIATE, and in WAL mode SELECT then UPDATE inside a
deferred BEGIN, run again when its write is refused. SQLite's write lock
orders them, and each must see the commit before it: the final value must
count every update (SQLite lets go of its lock before the module writes
the store, so a reader that takes the lock in between must wait for that
write, or an update is lost; and a deferred transaction that read before
another connection's commit must not then write, doc/sql.md §7).

Usage: python3 tests/sql_python.py BUILD_DIR   (run by tests/sql_python.sh)
Exit 0 when every check passed; prints "SKIP: ..." and exits 0 when this
Python's sqlite3 cannot load extensions at all.
"""
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time

SCHEMA = """CREATE VIRTUAL TABLE metrics USING wcs(
  KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
  FAMILY stats (cpu INT64, temp FLOAT64),
  FAMILY meta (note STRING)
)"""

passed = 0
failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + ("\n       " + str(detail) if detail else ""))


def connect(db, ext, timeout=5.0, threads=False):
    # isolation_level=None: BEGIN/COMMIT/ROLLBACK are ours to write;
    # threads: the connection is made in one thread and used in another
    con = sqlite3.connect(db, isolation_level=None, timeout=timeout,
                          check_same_thread=not threads)
    con.enable_load_extension(True)
    con.load_extension(ext)
    con.enable_load_extension(False)
    return con


def main():
    if len(sys.argv) != 2:
        print("usage: sql_python.py BUILD_DIR")
        return 2
    ext = os.path.join(os.path.abspath(sys.argv[1]), "wcs")
    probe = sqlite3.connect(":memory:")
    if not hasattr(probe, "enable_load_extension"):
        print("SKIP: this Python's sqlite3 was built without extension loading")
        return 0
    probe.close()
    if not os.path.exists(ext + ".so"):
        print("FAIL: %s.so was not built" % ext)
        return 1

    tmp = tempfile.mkdtemp(prefix="wcs-sql-python.")
    try:
        run(os.path.join(tmp, "app.db"), ext)
        run_busy(os.path.join(tmp, "busy.db"), ext)
        for journal in ("wal", "delete"):
            run_increments(os.path.join(tmp, "inc-%s.db" % journal), ext,
                           journal)
        run_lifecycle(os.path.join(tmp, "life.db"), ext)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("sql_python: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def run(db, ext):
    con = connect(db, ext)
    con.execute(SCHEMA)

    # parameters: qmark, executemany, named
    rows = [("phone", "4c410523", 20200501, 12, 36.5, "ok"),
            ("phone", "4c410523", 20200502, 15, 37.25, None),
            ("phone", "4c4105231", 20200501, 99, -1.0, "hot"),
            ("tablet", "日本", 20200501, 3, 0.5, "é")]
    con.executemany("INSERT INTO metrics(device, id, day, cpu, temp, note) "
                    "VALUES (?, ?, ?, ?, ?, ?)", rows)
    got = con.execute("SELECT device, id, day, cpu, temp, note FROM metrics "
                      "WHERE device = :d AND id = :i ORDER BY day",
                      {"d": "phone", "i": "4c410523"}).fetchall()
    check("executemany, named parameters, prefix scan", got == rows[:2], got)

    got = con.execute("SELECT id, cpu FROM metrics WHERE device = ? AND id = ? "
                      "AND day = ?", ("tablet", "日本", 20200501)).fetchall()
    check("multi-byte UTF-8 key field round trip", got == [("日本", 3)], got)

    key = con.execute("SELECT _key FROM metrics WHERE device = 'phone' AND "
                      "id = '4c410523' AND day = 20200502").fetchone()
    check("_key is the raw row key as bytes",
          key is not None and key[0] == b"phone#4c410523#20200502", key)
    got = con.execute("SELECT day FROM metrics WHERE _key = ?",
                      (b"phone#4c410523#20200502",)).fetchall()
    check("bytes parameter on _key", got == [(20200502,)], got)
    got = con.execute("SELECT day FROM metrics WHERE _key >= ? AND _key < ? "
                      "ORDER BY _key DESC", (b"phone#4c410523#", b"phone#4c410523$")
                      ).fetchall()
    check("_key range with bytes parameters, DESC", got == [(20200502,), (20200501,)], got)

    plan = " ".join(str(r) for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT cpu FROM metrics WHERE device = ? AND id = ?",
        ("phone", "4c410523")).fetchall())
    check("EXPLAIN QUERY PLAN shows PREFIX SCAN", "PREFIX SCAN" in plan, plan)

    # a transaction rolled back leaves nothing; reads inside see own writes
    con.execute("BEGIN")
    con.execute("INSERT INTO metrics(device, id, day, cpu) VALUES (?, ?, ?, ?)",
                ("pc", "z1", 20200601, 5))
    con.execute("UPDATE metrics SET cpu = cpu + 100 WHERE device = 'phone'")
    con.execute("DELETE FROM metrics WHERE device = 'tablet'")
    inside = con.execute("SELECT count(*), sum(cpu) FROM metrics").fetchone()
    check("reads inside a transaction see its writes", inside == (4, 431), inside)
    con.execute("ROLLBACK")
    after = con.execute("SELECT count(*), sum(cpu) FROM metrics").fetchone()
    check("ROLLBACK leaves nothing behind", after == (4, 129), after)

    # a committed transaction with a savepoint rolled back inside it
    con.execute("BEGIN")
    con.execute("INSERT INTO metrics(device, id, day, cpu) VALUES ('pc', 'a', 1, 1)")
    con.execute("SAVEPOINT s")
    con.execute("INSERT INTO metrics(device, id, day, cpu) VALUES ('pc', 'b', 2, 2)")
    con.execute("ROLLBACK TO s")
    con.execute("RELEASE s")
    con.execute("COMMIT")
    got = con.execute("SELECT id FROM metrics WHERE device = 'pc' ORDER BY id").fetchall()
    check("COMMIT keeps writes, ROLLBACK TO drops the savepoint's", got == [("a",)], got)

    # errors are exceptions with a clear message
    try:
        con.execute("INSERT INTO metrics(device, id, day, cpu) VALUES ('ph#one', 'x', 1, 1)")
        check("a key field holding the delimiter raises", False, "no exception")
    except sqlite3.Error as e:
        msg = str(e)
        check("a key field holding the delimiter raises, naming the field",
              "device" in msg.lower(), msg)
    try:
        con.execute("INSERT INTO metrics(device, id, day, cpu) VALUES ('pc', 'x', -5, 1)")
        check("a negative DECIMAL(8) key value raises", False, "no exception")
    except sqlite3.Error as e:
        check("a negative DECIMAL(8) key value raises", len(str(e)) > 0, e)
    try:
        con.execute("CREATE VIRTUAL TABLE bad USING wcs(KEY (a INT46))")
        check("a bad schema raises", False, "no exception")
    except sqlite3.Error as e:
        check("a bad schema raises, naming the token", "INT46" in str(e), e)
    # a row key past 4 KiB is SQLITE_TOOBIG (DataError) from a function
    # that writes, as from an INSERT, in autocommit and in a transaction
    con.execute("CREATE VIRTUAL TABLE raw USING wcs(FAMILY f)")
    long_key = b"k" * 4097
    for tx in (False, True):
        if tx:
            con.execute("BEGIN")
        try:
            con.execute("SELECT wcs_increment('raw', ?, 'f', 'n', 1)",
                        (long_key,))
            check("wcs_increment of a 4097-byte key raises", False,
                  "no exception")
        except sqlite3.Error as e:
            check("wcs_increment of a 4097-byte key raises DataError%s"
                  % (" in a transaction" if tx else ""),
                  isinstance(e, sqlite3.DataError) and "4096" in str(e),
                  (type(e).__name__, str(e)[-80:]))
        if tx:
            con.execute("ROLLBACK")
    # a key the schema cannot decode is a constraint failure, as for an
    # INSERT's _key
    try:
        con.execute("SELECT wcs_increment('metrics', x'ff', 'stats', 'n', 1)")
        check("wcs_increment of an undecodable key raises", False,
              "no exception")
    except sqlite3.Error as e:
        check("wcs_increment of an undecodable key raises IntegrityError",
              isinstance(e, sqlite3.IntegrityError) and "key schema" in str(e),
              (type(e).__name__, str(e)))
    con.close()

    # a new connection on the same file: the table reconnects
    con = connect(db, ext)
    got = con.execute("SELECT device, id, day, cpu FROM metrics "
                      "WHERE device = ? ORDER BY id, day", ("phone",)).fetchall()
    check("reopen: rows are there after a new connection",
          got == [("phone", "4c410523", 20200501, 12),
                  ("phone", "4c410523", 20200502, 15),
                  ("phone", "4c4105231", 20200501, 99)], got)
    got = con.execute("SELECT count(*) FROM metrics").fetchone()
    check("reopen: failed statements left nothing behind", got == (5,), got)
    con.close()


def run_busy(db, ext, nWriter=4, nEach=300, nReader=2):
    def conn():
        return connect(db, ext, timeout=0.001, threads=True)

    c0 = conn()
    c0.execute("CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), "
               "FAMILY c AGGREGATE SUM)")
    c0.execute("CREATE TABLE n(x)")
    check("busy: the database is in rollback-journal mode",
          c0.execute("PRAGMA journal_mode").fetchone() == ("delete",))
    done = [0] * nWriter
    refused = [0] * nWriter
    errors = []

    def writer(i):
        c = conn()
        for j in range(nEach):
            while True:
                try:
                    if j % 3 == 0:
                        c.execute("BEGIN")
                        c.execute("INSERT INTO t(k, c) VALUES ('a', '{\"n\": 1}')")
                        c.execute("INSERT INTO t(k, c) VALUES ('b', '{\"n\": 1}')")
                        c.execute("COMMIT")
                    else:
                        c.execute("INSERT INTO t(k, c) VALUES ('a', '{\"n\": 1}')")
                    done[i] += 1
                    break
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e):
                        errors.append(str(e))
                        return
                    if c.in_transaction:
                        c.execute("ROLLBACK")
                    refused[i] += 1
        c.close()

    def reader():
        c = conn()
        for _ in range(2 * nEach):
            try:
                c.execute("BEGIN")
                c.execute("SELECT count(*) FROM n").fetchall()
                time.sleep(0.0005)
                c.execute("COMMIT")
            except sqlite3.OperationalError:
                if c.in_transaction:
                    c.execute("ROLLBACK")
        c.close()

    threads = [threading.Thread(target=writer, args=(i,))
               for i in range(nWriter)]
    threads += [threading.Thread(target=reader) for _ in range(nReader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("busy: no error but 'database is locked'", not errors, errors[:3])
    a = c0.execute("SELECT c ->> 'n' FROM t WHERE k = 'a'").fetchone()
    b = c0.execute("SELECT c ->> 'n' FROM t WHERE k = 'b'").fetchone()
    want_b = nWriter * len(range(0, nEach, 3))
    check("busy: every write applied once (%d refused and retried)"
          % sum(refused),
          sum(done) == nWriter * nEach and a == (nWriter * nEach,)
          and b == (want_b,), (sum(done), a, b))
    c0.close()


def run_increments(db, ext, journal, nThread=4, nEach=250):
    def conn():
        return connect(db, ext, timeout=60, threads=True)

    c0 = conn()
    c0.execute("PRAGMA journal_mode=%s" % journal)
    c0.execute("CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), "
               "FAMILY f (v INT64))")
    c0.execute("INSERT INTO t(k, v) VALUES ('a', 0), ('b', 0), ('c', 0)")
    errors = []

    def worker():
        c = conn()
        for j in range(nEach):
            while True:
                try:
                    if j % 3 == 0:
                        c.execute("UPDATE t SET v = v + 1 WHERE k = 'a'")
                    else:
                        # b: BEGIN IMMEDIATE; c: in WAL mode a deferred
                        # BEGIN, whose write is refused after another
                        # commit (doc/sql.md §7; with a rollback journal
                        # BEGIN IMMEDIATE again)
                        k = "b" if j % 3 == 1 else "c"
                        deferred = k == "c" and journal == "wal"
                        c.execute("BEGIN" if deferred else "BEGIN IMMEDIATE")
                        v = c.execute("SELECT v FROM t WHERE k = ?",
                                      (k,)).fetchone()[0]
                        c.execute("UPDATE t SET v = ? WHERE k = ?", (v + 1, k))
                        c.execute("COMMIT")
                    break
                except sqlite3.OperationalError as e:
                    if c.in_transaction:
                        c.execute("ROLLBACK")
                    if "locked" not in str(e):
                        errors.append(str(e))
                        return
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(nThread)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("increments (%s): no error but 'database is locked'" % journal,
          not errors, errors[:3])
    got = c0.execute("SELECT k, v FROM t ORDER BY k").fetchall()
    want = [("a", nThread * len(range(0, nEach, 3))),
            ("b", nThread * len(range(1, nEach, 3))),
            ("c", nThread * len(range(2, nEach, 3)))]
    check("increments (%s): every read-modify-write counted" % journal,
          got == want, (got, want))
    c0.close()


LIFE_CHILD = r"""
import sqlite3, sys, threading
db, ext = sys.argv[1], sys.argv[2]
def reader():
    c = sqlite3.connect(db)
    c.enable_load_extension(True)
    c.load_extension(ext)
    c.execute("SELECT v FROM t WHERE k = 'a'").fetchall()
    c.close()  # the last connection: SQLite unloads the extension
for _ in range(5):
    t = threading.Thread(target=reader)
    t.start()
    t.join()   # the thread ends after the unload
"""


def run_lifecycle(db, ext, nCycle=400):
    """The extension loaded and unloaded with connections: a thread that
    read a table ends after its connection, the last, closed (the module's
    per-thread state must outlive the unload); the only connection closed
    and opened again many times (each load must not use up anything); and
    a read-only connection's close writes nothing to the store."""
    import subprocess
    c = connect(db, ext)
    c.execute("CREATE VIRTUAL TABLE t USING wcs(KEY (k STRING), FAMILY f "
              "(v INT64))")
    c.execute("INSERT INTO t(k, v) VALUES ('a', 1)")
    c.commit()
    c.close()
    r = subprocess.run([sys.executable, "-c", LIFE_CHILD, db, ext],
                       capture_output=True, timeout=120)
    check("lifecycle: threads end cleanly after the extension unloads",
          r.returncode == 0, (r.returncode, r.stderr[-300:]))
    errors = []
    for _ in range(nCycle):
        c = connect(db, ext)
        try:
            c.execute("SELECT v FROM t WHERE k = 'a'").fetchall()
        except sqlite3.Error as e:
            errors.append(str(e))
        c.close()
    check("lifecycle: %d loads of the extension, every read works" % nCycle,
          not errors, errors[:2])
    keep = connect(db, ext)
    keep.execute("SELECT count(*) FROM t").fetchall()
    store = db + ".wcs"

    def log_bytes():
        return sum(os.path.getsize(os.path.join(store, f))
                   for f in os.listdir(store) if f.endswith(".log"))
    before = log_bytes()
    for _ in range(20):
        ro = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        ro.enable_load_extension(True)
        ro.load_extension(ext)
        ro.execute("SELECT v FROM t WHERE k = 'a'").fetchall()
        ro.close()
    check("lifecycle: a read-only connection's close writes nothing",
          log_bytes() == before, (before, log_bytes()))
    keep.close()


if __name__ == "__main__":
    sys.exit(main())
