// Parity with SQLite through better-sqlite3 (AMQ_BETTER_SQLITE3: its
// folder): load(db) puts the package's extension in; the bytes of every
// aggregate of the function table (bloom_agg, cuckoo_agg, fuse_agg) equal
// the builder's in Node over the same values and arguments; the answers
// agree; bad bytes and values of the wrong family give SQLite's words.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const amq = require('amq');
const Database = require(process.env.AMQ_BETTER_SQLITE3);

const db = new Database(':memory:');
amq.load(db);

// The values of one parity case, as SQLite stores them, and their rows.
const cases = {
  integers: Array.from({ length: 3000 }, (_, i) => i * 3),
  reals: Array.from({ length: 500 }, (_, i) => i + 0.25),
  text: Array.from({ length: 2000 }, (_, i) => `user-${i}`),
  blobs: Array.from({ length: 300 }, (_, i) => Buffer.from(`b${i}`)),
  mixed: [1, 2.5, 'three', Buffer.from([4]), 5n, true],
  bigints: [1n, -(2n ** 63n), 2n ** 63n - 1n],
};
db.exec('CREATE TABLE v(name TEXT, x)');
const insert = db.prepare('INSERT INTO v VALUES (?, ?)');
db.defaultSafeIntegers(true);
for (const [name, values] of Object.entries(cases)) {
  for (const x of values) insert.run(name, typeof x === 'boolean' ? Number(x) : x);
}

test('load(db): the extension of the package', () => {
  assert.equal(db.prepare('SELECT amq_version() AS v').get().v, amq.version);
});

// The SQL arguments of an aggregate's options, in its order.
function sqlCall(row, options) {
  const args = ['x'];
  for (const name of ['fpr', 'capacity', 'layout']) {
    if (!(name in options)) break;
    args.push(name === 'layout' ? `'${options[name]}'` : String(options[name]));
  }
  return `${row}(${args.join(', ')})`;
}

test('bytes of bloom_agg, cuckoo_agg and fuse_agg equal bloom(), cuckoo() and fuse()', () => {
  let compared = 0;
  for (const kind of amq.KINDS) {
    const optionSets = kind === 'fuse'
      ? [{}, { fpr: 0.001 }]
      : [{}, { fpr: 0.001 }, ...amq.LAYOUTS[kind].flatMap((layout) => [
        { fpr: 0.01, capacity: 5000, layout },
        ...(layout === 'dleft' ? [] : [{ fpr: 0.02, capacity: 0 + 9000, layout }])])];
    for (const options of optionSets) {
      for (const [name, values] of Object.entries(cases)) {
        const sql = `SELECT ${sqlCall(`${kind}_agg`, options)} AS f FROM v WHERE name = ?`;
        let fromSql;
        try {
          fromSql = db.prepare(sql).get(name).f;
        } catch (e) {
          // A cuckoo filter too small for its values fails alike in both.
          assert.throws(() => amq[kind](values, options), (n) => n.message === e.message);
          continue;
        }
        const fromNode = amq[kind](values, options).toBuffer();
        assert.deepEqual(fromNode, Buffer.from(fromSql), `${sql} over ${name}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 50, `${compared} filters compared`);
});

test('answers agree: bloom_contains in SQLite and contains() in Node', () => {
  const f = amq.bloom(cases.integers, { fpr: 0.05 });
  const probe = db.prepare('SELECT bloom_contains(?, ?) AS c');
  const probes = Array.from({ length: 5000 }, (_, i) => i);
  const inNode = f.containsMany(probes);
  const inSql = probes.map((p) => probe.get(f.toBuffer(), p).c === 1n);
  assert.deepEqual(inNode, inSql);
  assert.ok(inNode.some((x, i) => x && i % 3 !== 0), 'some false positives to agree on');
  // Changed in Node, read back in SQLite.
  f.add(100001);
  assert.equal(probe.get(f.toBuffer(), 100001).c, 1n);
  const c = new amq.Filter(db.prepare("SELECT cuckoo_agg(x) AS f FROM v WHERE name = 'text'").get().f);
  assert.equal(c.contains('user-7'), true);
  assert.equal(c.count('user-7'), Number(db.prepare("SELECT cuckoo_count(?, 'user-7') AS n").get(c.toBuffer()).n));
});

// SQLite's error text for sql with the given parameters.
function sqliteError(sql, ...params) {
  try {
    db.prepare(sql).get(...params);
  } catch (e) {
    return e.message;
  }
  return null;
}

test('bad bytes and wrong families: the same words as SQLite', () => {
  const good = amq.bloom([1, 2, 3]).toBuffer();
  const damaged = Buffer.from(good);
  damaged[damaged.length - 1] ^= 1;
  const forms = [Buffer.from('not a filter'), good.subarray(0, good.length - 8), damaged,
    Buffer.concat([good, Buffer.alloc(8)]), Buffer.alloc(0)];
  for (const bytes of forms) {
    const inSql = sqliteError('SELECT bloom_info(?)', bytes);
    assert.ok(inSql && inSql.startsWith('bloom_info: filter: '), inSql);
    assert.throws(() => new amq.Filter(bytes), (e) => e instanceof amq.AmqError &&
      e.message === inSql.slice('bloom_info: filter: '.length), inSql);
  }
  const f = amq.bloom([1, 2, 3]);
  for (const [sql, call] of [
    ["SELECT bloom_contains(?, '42')", () => f.contains('42')],
    ["SELECT bloom_add(?, X'00')", () => f.add(Buffer.from([0]))],
    ['SELECT bloom_delete(?, 1)', () => f.delete(1)],
  ]) {
    const inSql = sqliteError(sql, f.toBuffer());
    assert.throws(call, (e) => e instanceof amq.AmqError && e.message === inSql, inSql);
  }
});
