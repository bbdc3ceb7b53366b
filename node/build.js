#!/usr/bin/env node
// build.js - the package's install step: compiles amq's C core (core/), the
// SQLite extension (sqlite/) and the N-API addon (src/) with the system's C
// compiler into lib/<process.platform>-<process.arch>/, next to this file:
// amq.so (amq.dylib on macOS), which load(db) hands to SQLite, and
// amq_node.node, the addon behind Filter and the builders. It downloads
// nothing: the addon is built against the headers of the Node that runs it
// (node_api.h in <prefix>/include/node, or npm_config_nodedir/include/node),
// and needs a C compiler (CC, default cc), sqlite3ext.h (Debian's
// libsqlite3-dev) and xxhash.h (libxxhash-dev). In a checkout, core/ and
// sqlite/ are found one folder up; in the packed tarball they are inside.
// AMQ_WERROR=1 adds -Werror (the tests set it); AMQ_JOBS compilers run at
// once (default 2).
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
const platform = `${process.platform}-${process.arch}`;
const out = path.join(here, 'lib', platform);
const cc = process.env.CC || 'cc';
const jobs = Math.max(1, Number(process.env.AMQ_JOBS) || 2);
const ext = process.platform === 'darwin' ? '.dylib' : '.so';

// The folder holding core/ and sqlite/: the package's own, else the checkout's.
function sourceRoot() {
  for (const root of [here, path.dirname(here)]) {
    if (fs.existsSync(path.join(root, 'core', 'amq.h')) && fs.existsSync(path.join(root, 'sqlite'))) {
      return root;
    }
  }
  throw new Error(`amq: core/amq.h is missing next to ${here} and one folder up: build from the packed tarball or a checkout`);
}

// The folder holding node_api.h of the Node that runs this script.
function nodeIncludeDir() {
  const candidates = [];
  if (process.env.npm_config_nodedir) candidates.push(path.join(process.env.npm_config_nodedir, 'include', 'node'));
  candidates.push(path.resolve(path.dirname(process.execPath), '..', 'include', 'node'));
  candidates.push('/usr/include/node', '/usr/local/include/node');
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')));
  if (!found) {
    throw new Error(`amq: node_api.h not found (looked in ${candidates.join(', ')}): install Node's headers ` +
      '(Debian: libnode-dev, or the nodejs package of nodejs.org), or set npm_config_nodedir to a folder with include/node');
  }
  return found;
}

// The .c files of a folder, recursively one level (core/*/*.c) or flat, sorted.
function sources(dir, nested) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && nested) files.push(...sources(path.join(dir, entry.name), false));
    else if (entry.isFile() && entry.name.endsWith('.c')) files.push(path.join(dir, entry.name));
  }
  return files;
}

// Runs one command; resolves, or rejects with its output.
function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.on('error', (e) => reject(new Error(`amq: cannot run ${args[0]} (${e.message}): install a C compiler or set CC`)));
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${args.join(' ')}\n${output}`))));
  });
}

// Runs the commands, at most `jobs` at once.
async function runAll(commands) {
  let next = 0;
  const worker = async () => {
    while (next < commands.length) await run(commands[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, commands.length) }, worker));
}

// The checks a user sees first: a compiler that finds sqlite3ext.h and xxhash.h.
async function checkHeaders(tmp) {
  const probe = path.join(tmp, 'probe.c');
  fs.writeFileSync(probe, '#include <sqlite3ext.h>\n#include <xxhash.h>\nint probe(void);\nint probe(void) { return 0; }\n');
  try {
    await run([cc, '-c', probe, '-o', path.join(tmp, 'probe.o')]);
  } catch (e) {
    throw new Error(`amq: ${cc} cannot compile with sqlite3ext.h and xxhash.h: install a C compiler and the headers ` +
      `(Debian: apt-get install gcc libsqlite3-dev libxxhash-dev)\n${e.message}`);
  }
}

async function main() {
  const root = sourceRoot();
  const include = nodeIncludeDir();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'amq-node-build-'));
  try {
    await checkHeaders(tmp);
    const warn = ['-Wall', '-Wextra', '-Wshadow', '-Wmissing-prototypes'];
    if (process.env.AMQ_WERROR === '1') warn.push('-Werror');
    const cflags = ['-std=c11', '-O2', '-fPIC', '-fvisibility=hidden', '-D_GNU_SOURCE', ...warn,
      '-I', path.join(root, 'core')];
    const x64 = process.arch === 'x64';
    // Each source once, to an object of its own (core's are shared by both libraries).
    const compile = (src, extra) => {
      const obj = path.join(tmp, path.relative(root, src).replace(/[\\/]/g, '_') + '.o');
      const avx2 = x64 && src.endsWith('_avx2.c') ? ['-mavx2'] : [];
      return { obj, command: [cc, ...cflags, ...avx2, ...extra, '-c', src, '-o', obj] };
    };
    const core = sources(path.join(root, 'core'), true).map((s) => compile(s, []));
    const sqlite = sources(path.join(root, 'sqlite'), false).map((s) => compile(s, []));
    const addon = sources(path.join(here, 'src'), false).map((s) => compile(s, ['-I', include]));
    await runAll([...core, ...sqlite, ...addon].map((c) => c.command));
    fs.mkdirSync(out, { recursive: true });
    // N-API symbols come from the node binary that loads the addon.
    const undefinedOk = process.platform === 'darwin' ? ['-undefined', 'dynamic_lookup'] : [];
    const objects = (list) => list.map((c) => c.obj);
    await run([cc, '-shared', ...objects(core), ...objects(sqlite), '-lm', '-o', path.join(out, `amq${ext}`)]);
    await run([cc, '-shared', ...undefinedOk, ...objects(core), ...objects(addon), '-lm',
      '-o', path.join(out, 'amq_node.node')]);
    console.log(`amq: built ${path.relative(here, out)}/amq${ext} and amq_node.node`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
