// index.cjs - the amq package (CommonJS; index.mjs re-exports it for ESM):
// load(db) puts amq's SQL functions into a better-sqlite3 Database or a
// node:sqlite DatabaseSync; Filter reads and changes filters in process on
// the bytes either engine stores; bloom(), cuckoo() and fuse() build them as
// bloom_agg, cuckoo_agg and fuse_agg do, byte for byte. The native files are
// found next to this file, in lib/<process.platform>-<process.arch>/, where
// the install step (build.js) put them: no node_modules layout is assumed.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const PLATFORM = `${process.platform}-${process.arch}`;
const LIB = path.join(__dirname, 'lib', PLATFORM);
const EXTENSION = path.join(LIB, `amq${process.platform === 'darwin' ? '.dylib' : '.so'}`);
const ADDON = path.join(LIB, 'amq_node.node');
const REBUILD_HINT =
  'the install step builds it (needs cc, libsqlite3-dev and libxxhash-dev); npm 11 may skip the install ' +
  'scripts of packages not approved: run npm install-scripts approve amq, then npm rebuild amq';

/**
 * An error of amq's, in SQL's words: message is SQLite's text of it
 * ("<message>: <hint>"), hint and sqlstate what PostgreSQL reports (code is
 * the SQLSTATE too, as in node-postgres's errors).
 */
class AmqError extends Error {
  constructor(message, hint = '', sqlstate = '22023') {
    super(hint ? `${message}: ${hint}` : message);
    this.name = 'AmqError';
    this.hint = hint;
    this.sqlstate = sqlstate;
    this.code = sqlstate;
  }
}

let native = null;

// The addon, loaded on first use (load() and getLoadablePath() need none).
function addon() {
  if (native === null) {
    if (!fs.existsSync(ADDON)) {
      throw new AmqError(`the amq addon for ${PLATFORM} is missing (${ADDON})`, REBUILD_HINT, '58P01');
    }
    native = require(ADDON);
    native.setup(AmqError);
    extend(native.Filter.prototype);
  }
  return native;
}

// The methods of Filter written in JavaScript, on the addon's class.
function extend(proto) {
  // info(): bloom_info's JSON, parsed.
  proto.info = function info() {
    return JSON.parse(this.infoJson());
  };
  // containsMany(values): contains() of each, true, false or null (for null).
  proto.containsMany = function containsMany(values) {
    const codes = this.containsManyCodes(collection(values));
    const answers = new Array(codes.length);
    for (let i = 0; i < codes.length; i++) answers[i] = codes[i] === 2 ? null : codes[i] === 1;
    return answers;
  };
}

/** The path of the SQLite loadable extension shipped in this package. */
function getLoadablePath() {
  return EXTENSION;
}

/**
 * Loads amq's SQL functions into db, a better-sqlite3 Database or a
 * node:sqlite DatabaseSync (which must be opened with allowExtension: true).
 */
function load(db) {
  if (db === null || typeof db !== 'object' || typeof db.loadExtension !== 'function') {
    throw new TypeError('load(db): db must be a better-sqlite3 Database or a node:sqlite DatabaseSync');
  }
  if (!fs.existsSync(EXTENSION)) {
    throw new AmqError(`the SQLite extension for ${PLATFORM} is missing (${EXTENSION})`, REBUILD_HINT, '58P01');
  }
  try {
    db.loadExtension(EXTENSION);
  } catch (e) {
    // node:sqlite refuses unless the database was opened to allow it.
    if (e && (e.code === 'ERR_INVALID_STATE' || /extension.*(disabled|not allowed|not authorized)/i.test(e.message))) {
      throw new AmqError(
        `cannot load extensions into this database: ${e.message}`,
        'open it with extension loading allowed: new DatabaseSync(path, { allowExtension: true }) for node:sqlite',
        '55000');
    }
    throw e;
  }
}

// An Array of the values of an iterable that is neither an Array nor a typed
// array (a Set, a generator); an Array of numbers as a Float64Array, which the
// addon reads without a call per value.
function collection(values) {
  if (Array.isArray(values)) {
    const n = values.length;
    let i = 0;
    while (i < n && typeof values[i] === 'number') i++;
    return i === n && n > 0 ? Float64Array.from(values) : values;
  }
  if (ArrayBuffer.isView(values) && !(values instanceof DataView)) return values;
  if (values !== null && typeof values === 'object' && typeof values[Symbol.iterator] === 'function') {
    return collection(Array.from(values));
  }
  throw new TypeError('values must be an Array, a typed array or an iterable');
}

// The builders, one per aggregate of core's function table.
function builder(row) {
  const build = function (values, options) {
    return addon().build(row.index, collection(values), options);
  };
  Object.defineProperty(build, 'name', { value: row.kind });
  return build;
}

const api = {
  AmqError,
  load,
  getLoadablePath,
  /** SQL's amq_hash(value): the 64-bit hash as a signed bigint (null for null). */
  hash: (value) => addon().hash(value),
};
Object.defineProperty(api, 'Filter', { enumerable: true, get: () => addon().Filter });
Object.defineProperty(api, 'version', { enumerable: true, get: () => addon().version });
Object.defineProperty(api, 'LAYOUTS', { enumerable: true, get: () => addon().layouts });
Object.defineProperty(api, 'KINDS', { enumerable: true, get: () => Object.keys(addon().layouts) });

// bloom, cuckoo, fuse: defined from the addon's list when it is there; a
// missing addon makes each throw the AmqError that says how to build it.
let rows = [];
try {
  rows = addon().builders;
} catch {
  rows = ['bloom', 'cuckoo', 'fuse'].map((kind) => ({ kind, index: -1 }));
}
for (const row of rows) api[row.kind] = builder(row);

module.exports = api;
