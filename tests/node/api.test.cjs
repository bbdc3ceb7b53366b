// The amq package in process: hashing by docs/HASHING.md (its known-answer
// vectors, JavaScript's types), the builders of the function table, Filter's
// methods, errors. Runs under node --test from a project that installed the
// packed tarball (tests/node/run.sh).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const amq = require('amq');

// The hash of value as HASHING.md's unsigned hex.
const hex = (value) => BigInt.asUintN(64, amq.hash(value)).toString(16).padStart(16, '0');

test('known-answer vectors of docs/HASHING.md', () => {
  assert.equal(hex(0), '313c2dd2ec996e80');
  assert.equal(hex(3), 'e0dc1e7b2fc050ab');
  assert.equal(hex(3.0), 'e0dc1e7b2fc050ab');
  assert.equal(hex(-1), '53a5f4bc2fc0168c');
  assert.equal(hex(-(2n ** 63n)), '6f16315aee313307');
  assert.equal(hex(1.5), '360276011e12cf43');
  assert.equal(hex(NaN), '78e9b9b2fa2fac40');
  assert.equal(hex(Infinity), '7bbac6f0db7f77d1');
  assert.equal(hex(1e20), '00c0b44ec06a94e5');
  assert.equal(hex('abc'), '8e8fd78217d7b3dd');
  assert.equal(hex(''), '13e608bc156defed');
  assert.equal(hex(Buffer.from('abc')), '1a8cafcdf467a415');
  assert.equal(hex(new Uint8Array([0x61, 0x62, 0x63])), '1a8cafcdf467a415');
  assert.equal(amq.hash(3), -2243884999906406229n);
  assert.equal(amq.hash(null), null);
  assert.equal(amq.hash(undefined), null);
});

test('numbers, bigints and booleans hash as SQL numbers', () => {
  assert.equal(amq.hash(3n), amq.hash(3));
  assert.equal(amq.hash(-0), amq.hash(0));
  assert.equal(amq.hash(true), amq.hash(1));
  assert.equal(amq.hash(false), amq.hash(0));
  // Past int64: the nearest double, as PostgreSQL's numeric.
  assert.equal(amq.hash(2n ** 70n), amq.hash(2 ** 70));
  assert.equal(amq.hash(2n ** 63n), amq.hash(2 ** 63));
  assert.notEqual(amq.hash('3'), amq.hash(3));
});

test('a Date hashes as the text of its UTC instant (timestamptz)', () => {
  assert.equal(amq.hash(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 120))), amq.hash('2024-01-02 03:04:05.12'));
  assert.equal(amq.hash(new Date(Date.UTC(2024, 0, 2, 3, 4, 5))), amq.hash('2024-01-02 03:04:05'));
  assert.equal(amq.hash(new Date(Date.UTC(1969, 11, 31, 23, 59, 59, 1))), amq.hash('1969-12-31 23:59:59.001'));
  assert.equal(amq.hash(new Date('2024-06-01T12:00:00+02:00')), amq.hash('2024-06-01 10:00:00'));
  // Year 0 is 1 BC, as PostgreSQL prints it.
  assert.equal(amq.hash(new Date('0000-06-01T00:00:00Z')), amq.hash('0001-06-01 00:00:00 BC'));
  assert.equal(amq.hash(new Date('+010000-01-01T00:00:00Z')), amq.hash('10000-01-01 00:00:00'));
  assert.throws(() => amq.hash(new Date(NaN)), { name: 'TypeError', message: 'cannot hash an invalid Date' });
});

test('other types are a TypeError', () => {
  for (const value of [{}, [1], Symbol('x'), () => 1, new Int32Array(1), new Map()]) {
    assert.throws(() => amq.hash(value), TypeError);
  }
  assert.throws(() => amq.bloom([1, {}]), /cannot hash values of type object/);
  assert.throws(() => amq.bloom(Buffer.from('ab')), /one value \(a blob\), not a collection/);
  assert.throws(() => amq.bloom(42), /values must be an Array/);
});

test('the builders are the aggregates of the function table', () => {
  assert.deepEqual(amq.KINDS, ['bloom', 'cuckoo', 'fuse']);
  assert.equal(amq.bloom.name, 'bloom');
  const values = Array.from({ length: 5000 }, (_, i) => i * 7);
  for (const kind of amq.KINDS) {
    for (const layout of kind === 'fuse' ? [undefined] : amq.LAYOUTS[kind]) {
      const options = layout === undefined ? { fpr: 0.001 } : { fpr: 0.001, layout };
      const f = amq[kind](values, options);
      assert.equal(f.kind, kind);
      if (layout) assert.equal(f.layout, layout);
      assert.ok(f.containsMany(values).every((x) => x), `${kind} ${layout}: no false negative`);
      assert.equal(f.info().items >= 1, true);
    }
  }
  assert.throws(() => amq.fuse([1], { capacity: 3 }), { name: 'TypeError', message: "fuse() takes no option 'capacity' (fuse_agg(value [, fpr]))" });
  assert.throws(() => amq.bloom([1], { fpr: 2 }), (e) => e instanceof amq.AmqError && e.sqlstate === '22023' &&
    e.message === 'fpr must be between 0 and 1 (exclusive), got 2: pass a false-positive rate such as 0.01 for 1%');
  assert.throws(() => amq.bloom([1], { layout: 'b4' }), (e) => e instanceof amq.AmqError && /layout/.test(e.message));
  assert.throws(() => amq.cuckoo([1], { capacity: 0 }), amq.AmqError);
  // Typed arrays, Sets and generators, nulls skipped.
  const fromTyped = amq.bloom(new Int32Array([1, 2, 3])).toBuffer();
  assert.deepEqual(amq.bloom([1, 2, 3]).toBuffer(), fromTyped);
  assert.deepEqual(amq.bloom(new Set([1, 2, 3])).toBuffer(), fromTyped);
  assert.deepEqual(amq.bloom((function* () { yield 1; yield 2; yield 3; })()).toBuffer(), fromTyped);
  assert.deepEqual(amq.bloom([1, null, 2, undefined, 3]).toBuffer(), fromTyped);
  assert.deepEqual(amq.bloom(new Float64Array([1, 2, 3])).toBuffer(), fromTyped);
  assert.deepEqual(amq.bloom(new BigInt64Array([1n, 2n, 3n])).toBuffer(), fromTyped);
});

test('Filter: contains, add, delete, count, union, intersection, containsMany, toBuffer', () => {
  const f = amq.bloom([1, 2, 3], { fpr: 0.001, capacity: 1000, layout: 'counting' });
  assert.equal(f.contains(2), true);
  assert.equal(f.contains(2.0), true);
  assert.equal(f.contains(2n), true);
  assert.equal(f.contains(99), false);
  assert.equal(f.contains(null), null);
  assert.equal(f.add(99), f);
  assert.equal(f.contains(99), true);
  assert.equal(f.count(99), 1);
  assert.equal(f.count(null), null);
  assert.equal(f.delete(99), true);
  assert.equal(f.contains(99), false);
  assert.equal(f.delete(null), false);
  assert.deepEqual(f.containsMany([1, 99, null, 3n]), [true, false, null, true]);
  assert.deepEqual(f.containsMany(new Uint16Array([1, 99])), [true, false]);
  const g = new amq.Filter(f.toBuffer());
  assert.deepEqual(g.toBuffer(), f.toBuffer());
  assert.equal(new amq.Filter(f.toBuffer().buffer.slice(0)).contains(1), true);
  const a = amq.bloom([1, 2], { capacity: 100 }), b = amq.bloom([3], { capacity: 100 });
  const u = a.union(b);
  assert.deepEqual(u.containsMany([1, 2, 3]), [true, true, true]);
  assert.equal(a.intersection(b).contains(1), false);
  assert.throws(() => a.union(amq.cuckoo([1])), (e) => e instanceof amq.AmqError && /cuckoo filter/.test(e.message));
  assert.throws(() => a.union({}), TypeError);
  const c = amq.cuckoo(['a', 'b'], { fpr: 0.001 });
  c.add('a');
  assert.equal(c.count('a'), 2);
  assert.equal(c.delete('b'), true);
  assert.equal(c.contains('b'), false);
  assert.equal(c.info().layout, 'b4');
  assert.ok(c.byteLength > 64);
});

test('errors carry SQL words, hint and SQLSTATE', () => {
  const f = amq.bloom([1, 2]);
  assert.throws(() => f.contains('42'), (e) => e instanceof amq.AmqError && e.sqlstate === '22023' && e.code === '22023' &&
    e.message.startsWith("bloom_contains: value: the filter holds numbers, got text '42'") &&
    e.message === `bloom_contains: value: the filter holds numbers, got text '42': ${e.hint}`);
  assert.throws(() => f.add('x'), /^AmqError: bloom_add: value: the filter holds numbers/);
  assert.throws(() => f.containsMany([1, 'x']), /bloom_contains: value/);
  assert.throws(() => f.containsMany(['x']), /bloom_contains: value/);
  assert.throws(() => f.delete(1), (e) => e instanceof amq.AmqError && /cannot delete/.test(e.message));
  const bytes = f.toBuffer();
  assert.throws(() => new amq.Filter(bytes.subarray(0, bytes.length - 1)), (e) => e.sqlstate === '22P02' && /bytes where the header needs/.test(e.message));
  const damaged = Buffer.from(bytes);
  damaged[damaged.length - 1] ^= 1;
  assert.throws(() => new amq.Filter(damaged), /checksum mismatch/);
  assert.throws(() => new amq.Filter('nope'), TypeError);
  assert.throws(() => amq.fuse([1]).add(2), (e) => e instanceof amq.AmqError && /cannot add/.test(e.message));
});

test('getLoadablePath: in the package, named for process.platform and process.arch', () => {
  const file = amq.getLoadablePath();
  assert.ok(path.isAbsolute(file));
  assert.equal(path.basename(path.dirname(file)), `${process.platform}-${process.arch}`);
  assert.equal(path.dirname(path.dirname(path.dirname(file))), path.dirname(require.resolve('amq')));
  assert.throws(() => amq.load({}), TypeError);
  assert.equal(amq.version, require('amq/package.json').version);
});
