// index.mjs - the amq package for ESM: the same objects as index.cjs.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const amq = require('./index.cjs');

export const { AmqError, load, getLoadablePath, hash, bloom, cuckoo, fuse } = amq;
export const Filter = amq.Filter;
export const version = amq.version;
export const KINDS = amq.KINDS;
export const LAYOUTS = amq.LAYOUTS;
export default amq;
