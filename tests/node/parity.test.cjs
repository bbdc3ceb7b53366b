// The same bytes in every engine and language: each kind's builder here
// against its aggregate in PostgreSQL and its builder in Python, over the same
// integers and texts. tests/node/run.sh writes their hex into parity/ (one
// file per engine, kind and set of values), and says NOT TESTED for an
// engine it cannot reach; each file written is compared here.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const amq = require('amq');

const SETS = {
  ints: Array.from({ length: 1000 }, (_, i) => i * 3),
  texts: Array.from({ length: 300 }, (_, i) => `k${i}`),
};
const dir = path.join(__dirname, 'parity');

for (const engine of ['pg', 'python']) {
  for (const kind of amq.KINDS) {
    for (const [name, values] of Object.entries(SETS)) {
      const file = path.join(dir, `${engine}-${kind}-${name}.hex`);
      if (!fs.existsSync(file)) continue;
      test(`${kind}(${name}) is ${engine}'s bytes`, () => {
        const want = fs.readFileSync(file, 'utf8').trim();
        assert.equal(amq[kind](values).toBuffer().toString('hex'), want);
      });
    }
  }
}

test('run.sh wrote every kind\'s bytes of the engines it reached', () => {
  const files = fs.readdirSync(dir);
  const engines = new Set(files.map((f) => f.split('-')[0]));
  assert.equal(files.length, engines.size * amq.KINDS.length * Object.keys(SETS).length);
});
