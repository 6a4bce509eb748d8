// client.js — the wcs extension from Node's better-sqlite3 (npm), as a
// script user meets it (DESIGN.md §2–§6): db.loadExtension(<build>/wcs),
// CREATE VIRTUAL TABLE, prepared statements with positional and named
// parameters, Buffers for _key, a prefix scan and its EXPLAIN QUERY PLAN
// words, db.transaction() rolled back by a throw and committed, wcs_increment
// with a JavaScript number (bound as a REAL), reopening the file, and errors
// thrown with a clear message. better-sqlite3 bundles its
// own SQLite; the module needs 3.38 or newer (sqlite3_vtab_in), checked first.
//
// Usage: node client.js BUILD_DIR   (run by tests/sql_node.sh)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const Database = require('better-sqlite3');

let passed = 0;
let failed = 0;
function check(name, cond, detail) {
  if (cond) {
    passed++;
    console.log('ok   ' + name);
  } else {
    failed++;
    console.log('FAIL ' + name + (detail === undefined ? '' :
      '\n       ' + JSON.stringify(detail)));
  }
}
function throwsWith(name, fn, re) {
  try {
    fn();
    check(name, false, 'no exception');
  } catch (e) {
    check(name, re.test(String(e.message)), e.message);
  }
}

const ext = path.join(path.resolve(process.argv[2] || '.'), 'wcs');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-sql-node.'));
const file = path.join(tmp, 'app.db');

function open() {
  const db = new Database(file);
  db.loadExtension(ext);
  return db;
}

try {
  let db = open();
  const ver = db.prepare('SELECT sqlite_version() AS v').get().v;
  const [maj, min] = ver.split('.').map(Number);
  check('bundled SQLite ' + ver + ' is >= 3.38', maj > 3 || (maj === 3 && min >= 38), ver);

  db.exec(`CREATE VIRTUAL TABLE metrics USING wcs(
    KEY (device STRING, id STRING, day INT64 DECIMAL(8)) DELIMITED BY '#',
    FAMILY stats (cpu INT64, temp FLOAT64),
    FAMILY meta (note STRING))`);
  const ins = db.prepare('INSERT INTO metrics(device, id, day, cpu, temp, note) ' +
                         'VALUES (?, ?, ?, ?, ?, ?)');
  const rows = [['phone', '4c410523', 20200501, 12, 36.5, 'ok'],
                ['phone', '4c410523', 20200502, 15, 37.25, null],
                ['phone', '4c4105231', 20200501, 99, -1, 'hot'],
                ['tablet', '日本', 20200501, 3, 0.5, 'é']];
  for (const r of rows) ins.run(...r);

  const got = db.prepare('SELECT device, id, day, cpu, temp, note FROM metrics ' +
                         'WHERE device = @d AND id = @i ORDER BY day')
    .raw().all({ d: 'phone', i: '4c410523' });
  check('named parameters, prefix scan', JSON.stringify(got) === JSON.stringify(rows.slice(0, 2)), got);

  const one = db.prepare('SELECT id, cpu FROM metrics WHERE device = ? AND id = ? AND day = ?')
    .get('tablet', '日本', 20200501);
  check('multi-byte UTF-8 key field round trip', one && one.id === '日本' && one.cpu === 3, one);

  const k = db.prepare("SELECT _key FROM metrics WHERE device = 'phone' AND id = '4c410523' " +
                       'AND day = 20200502').get();
  check('_key is a Buffer of the raw row key',
        k && Buffer.isBuffer(k._key) && k._key.toString() === 'phone#4c410523#20200502', k);
  const byKey = db.prepare('SELECT day FROM metrics WHERE _key >= ? AND _key < ? ORDER BY _key DESC')
    .pluck().all(Buffer.from('phone#4c410523#'), Buffer.from('phone#4c410523$'));
  check('_key range with Buffer parameters, DESC', JSON.stringify(byKey) === '[20200502,20200501]', byKey);

  const plan = db.prepare('EXPLAIN QUERY PLAN SELECT cpu FROM metrics WHERE device = ? AND id = ?')
    .all('phone', '4c410523').map((r) => r.detail).join(' ');
  check('EXPLAIN QUERY PLAN shows PREFIX SCAN', /PREFIX SCAN/.test(plan), plan);

  // db.transaction(): a throw rolls back, reads inside see own writes
  const count = db.prepare('SELECT count(*) AS n, sum(cpu) AS s FROM metrics');
  let inside = null;
  const failing = db.transaction(() => {
    ins.run('pc', 'z1', 20200601, 5, null, null);
    db.prepare("UPDATE metrics SET cpu = cpu + 100 WHERE device = 'phone'").run();
    db.prepare("DELETE FROM metrics WHERE device = 'tablet'").run();
    inside = count.get();
    throw new Error('roll me back');
  });
  try { failing(); } catch (e) { /* expected */ }
  check('reads inside a transaction see its writes', inside && inside.n === 4 && inside.s === 431, inside);
  const after = count.get();
  check('a throw in db.transaction() rolls everything back', after.n === 4 && after.s === 129, after);
  const good = db.transaction((rs) => { for (const r of rs) ins.run(...r); });
  good([['pc', 'a', 1, 1, null, null], ['pc', 'b', 2, 2, null, null]]);
  check('db.transaction() commits', count.get().n === 6, count.get());

  // better-sqlite3 binds every JavaScript number as a REAL: a whole one
  // is an integer delta, as it is an INT64 column's value
  const inc = db.prepare("SELECT wcs_increment('metrics', wcs_key_encode('metrics', " +
                         "'pc', 'a', 1), 'stats', 'hits', ?) AS v").pluck();
  let incs = null;
  try { incs = [inc.get(5), inc.get(-2), inc.get(10n)]; } catch (e) { incs = e.message; }
  check('wcs_increment takes a JavaScript number as its delta',
        JSON.stringify(incs) === '[5,3,13]', incs);
  throwsWith('wcs_increment refuses a fractional delta',
             () => inc.get(1.5), /delta must be an integer/);

  throwsWith('a key field holding the delimiter throws, naming the field',
             () => ins.run('ph#one', 'x', 1, 1, null, null), /device/i);
  throwsWith('a bad schema throws, naming the token',
             () => db.exec('CREATE VIRTUAL TABLE bad USING wcs(KEY (a INT46))'), /INT46/);
  db.close();

  db = open();
  const again = db.prepare("SELECT device, id, day FROM metrics WHERE device = 'pc' ORDER BY id").raw().all();
  check('reopen: the table reconnects with its rows',
        JSON.stringify(again) === JSON.stringify([['pc', 'a', 1], ['pc', 'b', 2]]), again);
  check('reopen: failed statements left nothing behind', count.source && db.prepare(
    'SELECT count(*) AS n FROM metrics').get().n === 6);
  db.close();
} catch (e) {
  check('no unexpected exception', false, String(e && e.stack || e));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`sql_node: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
