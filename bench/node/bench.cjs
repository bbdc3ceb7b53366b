// bench/node/bench.cjs - the amq package against JavaScript's own Set:
// contains() per call against Set.prototype.has over 1M integers held,
// probed with JS numbers (half members), and containsMany() over 1M values
// from an Array and from a Float64Array, in values per second. Each
// measurement is the best of 5 runs. Run by bench/node/run.sh.
'use strict';

const amq = require('amq');

const N = 1_000_000;
const held = Array.from({ length: N }, (_, i) => i * 2);
// Probes: members and non-members alternating, in a shuffled order.
const probes = Array.from({ length: N }, (_, i) => i);
let seed = 42;
for (let i = N - 1; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) >>> 0;
  const j = seed % (i + 1);
  [probes[i], probes[j]] = [probes[j], probes[i]];
}
const probesTyped = Float64Array.from(probes);

// The best time in ns of fn over 5 runs; fn returns a count that is used.
function best(fn) {
  let min = Infinity, sink = 0;
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    sink += fn();
    min = Math.min(min, Number(process.hrtime.bigint() - t));
  }
  if (sink < 0) console.log(sink);
  return min;
}

const set = new Set(held);
const f = amq.bloom(held, { fpr: 0.01 });
const row = (name, ns) => console.log(`${name.padEnd(44)} ${(ns / N).toFixed(1).padStart(6)} ns/value ${(N / ns * 1e3).toFixed(1).padStart(7)} M values/s`);

console.log(`amq ${amq.version}, Node ${process.version}; ${N.toLocaleString('en')} values held, bloom blocked fpr 0.01 (${f.byteLength.toLocaleString('en')} bytes)`);
const setNs = best(() => { let c = 0; for (let i = 0; i < N; i++) if (set.has(probes[i])) c++; return c; });
const containsNs = best(() => { let c = 0; for (let i = 0; i < N; i++) if (f.contains(probes[i])) c++; return c; });
row('Set.has (1M numbers)', setNs);
row('Filter.contains, one call per value', containsNs);
console.log(`contains / Set.has: ${(containsNs / setNs).toFixed(2)}x`);
row('Filter.containsMany(Array of 1M numbers)', best(() => f.containsMany(probes).length));
row('Filter.containsMany(Float64Array of 1M)', best(() => f.containsMany(probesTyped).length));
const strings = probes.map((p) => `k${p}`);
const fs = amq.bloom(held.map((p) => `k${p}`));
row('Filter.containsMany(Array of 1M strings)', best(() => fs.containsMany(strings).length));
row('bloom(Array of 1M numbers)', best(() => amq.bloom(held).byteLength));
