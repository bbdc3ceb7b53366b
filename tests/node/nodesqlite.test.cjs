// node:sqlite (Node 22.13 and later): load(db) into a DatabaseSync opened
// with allowExtension, and the clear error of one opened without it.
// tests/node/run.sh runs it only where the Node has node:sqlite.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const amq = require('amq');
const { DatabaseSync } = require('node:sqlite');

test('load(db) into a node:sqlite DatabaseSync', () => {
  const db = new DatabaseSync(':memory:', { allowExtension: true });
  amq.load(db);
  const row = db.prepare('SELECT bloom_agg(value) AS f FROM json_each(?)').get(JSON.stringify([1, 2, 3]));
  assert.deepEqual(Buffer.from(row.f), amq.bloom([1, 2, 3]).toBuffer());
});

test('a DatabaseSync opened without allowExtension: AmqError that says so', () => {
  const db = new DatabaseSync(':memory:');
  assert.throws(() => amq.load(db), (e) => e instanceof amq.AmqError && /allowExtension: true/.test(e.message));
});
