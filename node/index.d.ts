// index.d.ts - the types of the amq package (index.cjs, index.mjs).

/** A value as SQL hashes it (docs/HASHING.md): a number (an integral one as
 * that integer), bigint, boolean (0 or 1), string (text), Buffer or
 * Uint8Array (blob), Date (the timestamptz of its UTC instant). null and
 * undefined are SQL's NULL. Any other type throws a TypeError. */
export type Value = number | bigint | boolean | string | Uint8Array | Date | null | undefined;

/** Many values: an Array (or any iterable) of values, or a typed array of
 * numbers (not a Uint8Array, which is one blob). */
export type Values =
  | Iterable<Value>
  | Int8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array
  | Float32Array | Float64Array | BigInt64Array | BigUint64Array;

/** An error of amq's, in SQL's words. */
export class AmqError extends Error {
  constructor(message: string, hint?: string, sqlstate?: string);
  /** "AmqError" */
  name: string;
  /** SQL's hint: what to do (may be empty). */
  hint: string;
  /** The SQLSTATE PostgreSQL raises for it ("22023", "22P02", ...). */
  sqlstate: string;
  /** The SQLSTATE again, as node-postgres's errors carry it. */
  code: string;
}

/** The description bloom_info / cuckoo_info / fuse_info return, parsed. */
export interface FilterInfo {
  kind: string;
  layout: string;
  items: number;
  bytes: number;
  seed: number;
  format_version: number;
  families: string[] | null;
  [field: string]: unknown;
}

/** A filter in process, on the bytes either engine stores. */
export class Filter {
  /** Copies bytes and checks them as SQL checks a filter argument; bytes that
   * are no filter throw AmqError with SQL's message for them. */
  constructor(bytes: Uint8Array | ArrayBuffer);
  /** 'bloom', 'cuckoo' or 'fuse'. */
  readonly kind: string;
  /** The layout's SQL name: 'blocked', 'classic', 'b4', 'binary', ... */
  readonly layout: string;
  /** The size of the serialized filter in bytes. */
  readonly byteLength: number;
  /** false when value was certainly never added, true when it may have been
   * (bloom_contains); null for null or undefined. */
  contains(value: Value): boolean | null;
  /** contains() of each value; null in a null's place. */
  containsMany(values: Values): Array<boolean | null>;
  /** Adds value in place (bloom_add, cuckoo_add); null changes nothing. */
  add(value: Value): this;
  /** Removes one copy of value in place (cuckoo_delete, bloom_delete on a
   * counting layout): false when it is certainly not stored. */
  delete(value: Value): boolean;
  /** How many times value was added, never fewer (cuckoo_count,
   * bloom_frequency); null for null. */
  count(value: Value): number | null;
  /** The *_info JSON, parsed. */
  info(): FilterInfo;
  /** A new filter of everything either holds (bloom_union). */
  union(other: Filter): Filter;
  /** A new filter of what both hold (bloom_intersect). */
  intersection(other: Filter): Filter;
  /** The serialized filter: the bytes to bind into SQL in either engine. */
  toBuffer(): Buffer;
}

/** bloom_agg(value [, fpr [, capacity [, layout]]]) over values. */
export function bloom(values: Values, options?: { fpr?: number; capacity?: number; layout?: string }): Filter;
/** cuckoo_agg(value [, fpr [, capacity [, layout]]]) over values. */
export function cuckoo(values: Values, options?: { fpr?: number; capacity?: number; layout?: string }): Filter;
/** fuse_agg(value [, fpr]) over values. */
export function fuse(values: Values, options?: { fpr?: number }): Filter;

/** SQL's amq_hash(value): the 64-bit hash as a signed bigint; null for null. */
export function hash(value: Value): bigint | null;

/** Loads amq's SQL functions into a better-sqlite3 Database or a node:sqlite
 * DatabaseSync (opened with allowExtension: true). */
export function load(db: { loadExtension(path: string, entryPoint?: string): unknown }): void;

/** The path of the SQLite loadable extension in this package. */
export function getLoadablePath(): string;

/** amq's version. */
export const version: string;
/** The filter kinds: ['bloom', 'cuckoo', 'fuse']. */
export const KINDS: string[];
/** Each kind's layouts, by name. */
export const LAYOUTS: Record<string, string[]>;

declare const amq: {
  AmqError: typeof AmqError;
  Filter: typeof Filter;
  bloom: typeof bloom;
  cuckoo: typeof cuckoo;
  fuse: typeof fuse;
  hash: typeof hash;
  load: typeof load;
  getLoadablePath: typeof getLoadablePath;
  version: string;
  KINDS: string[];
  LAYOUTS: Record<string, string[]>;
};
export default amq;
