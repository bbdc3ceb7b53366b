// The README's cache-penetration example through node-postgres (pg): a
// filter built by bloom_agg in PostgreSQL, fetched once as a Buffer, probed
// in process; queries only on a hit. tests/node/run.sh runs it against a
// temporary cluster with tests/readme/setup/shop.sql's database (PGHOST,
// PGPORT, PGUSER in the environment) and compares its output with the
// README's.
'use strict';

const { Client } = require('pg');
const amq = require('amq');

async function main() {
  const client = new Client({ database: 'shop' });   // users: 100,000 rows, ids 3, 6, ..., 300000
  await client.connect();
  // A bloom value comes as bytea: a Buffer, the filter's bytes.
  const { rows } = await client.query('SELECT bloom_agg(id, 0.01)::bytea AS f FROM users');
  const users = new amq.Filter(rows[0].f);
  console.log(users.kind, users.layout, users.byteLength, users.info().items);

  let queries = 0;
  async function getUser(id) {
    if (!users.contains(id)) return null;            // certainly absent: no query
    queries++;
    const r = await client.query('SELECT name FROM users WHERE id = $1', [id]);
    return r.rows.length ? r.rows[0].name : null;
  }

  let seed = 1;
  const lookups = Array.from({ length: 100_000 }, () => {
    seed = (seed * 48271) % 2147483647;
    return 1 + (seed % 600_000);                     // 1 in 6 exists
  });
  let found = 0;
  for (const id of lookups) if ((await getUser(id)) !== null) found++;
  console.log(`${lookups.length.toLocaleString('en')} lookups, ${found.toLocaleString('en')} found, ` +
    `${queries.toLocaleString('en')} queries, ${(queries - found).toLocaleString('en')} false positives`);

  users.add(600001);                                 // changed in process, sent back as bytea
  const back = await client.query('SELECT bloom_contains($1::bytea::bloom, 600001) AS hit', [users.toBuffer()]);
  console.log(back.rows[0]);
  await client.end();
}

main().catch((e) => { console.error(e); process.exit(1); });
