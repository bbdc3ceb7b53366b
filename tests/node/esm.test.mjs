// The ESM entry point: the same objects as the CommonJS one.
import test from 'node:test';
import assert from 'node:assert/strict';
import amq, { bloom, Filter, AmqError, load, getLoadablePath, hash, KINDS } from 'amq';
import { createRequire } from 'node:module';

test('ESM and CommonJS entry points give the same objects', () => {
  const cjs = createRequire(import.meta.url)('amq');
  assert.equal(Filter, cjs.Filter);
  assert.equal(AmqError, cjs.AmqError);
  assert.equal(load, cjs.load);
  assert.equal(getLoadablePath(), cjs.getLoadablePath());
  assert.equal(amq.bloom, bloom);
  assert.deepEqual(KINDS, ['bloom', 'cuckoo', 'fuse']);
  assert.equal(new Filter(bloom(['x']).toBuffer()).contains('x'), true);
  assert.equal(hash(3), -2243884999906406229n);
});
