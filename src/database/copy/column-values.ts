// What a column's values mean across the two engines, and how one value is written for the other engine or
// reduced to a normalised form for hashing. SQLite keeps instants as `YYYY-MM-DD HH:MM:SS.SSS` text (UTC, as
// TypeORM writes them), booleans as 0/1 and JSON as text; PostgreSQL has timestamptz, boolean and jsonb. Values
// arrive raw: SQLite's own values, or PostgreSQL's text output (the copy's connections parse nothing).
import { hash } from 'node:crypto';

export type ColumnKind = 'instant' | 'boolean' | 'json' | 'integer' | 'text';

/** A column's kind from its declared type on either engine (PRAGMA table_info / information_schema). */
export function kindOfDeclaredType(type: string): ColumnKind {
  const lower = type.toLowerCase();
  if (lower.startsWith('timestamp') || lower === 'datetime') return 'instant';
  if (lower === 'boolean') return 'boolean';
  if (lower === 'jsonb' || lower === 'json') return 'json';
  if (/^(integer|bigint|smallint|int)\b/.test(lower)) return 'integer';
  return 'text';
}

/** Of a column seen on two engines, the more specific kind: a jsonb column is JSON text on SQLite. */
export function mergeKinds(a: ColumnKind, b: ColumnKind): ColumnKind {
  for (const kind of ['json', 'instant', 'boolean', 'integer'] as const) {
    if (a === kind || b === kind) return kind;
  }
  return 'text';
}

/** A raw value as text: strings, numbers, bigints and booleans as such, anything else as JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return JSON.stringify(value);
}

/** SQLite's form exactly (`YYYY-MM-DD HH:MM:SS.SSS`, UTC): most instants a copy reads, parsed without regexes. */
const SQLITE_INSTANT_LENGTH = 23;

export function instantMillis(value: unknown): number {
  if (typeof value === 'number' || typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string' && value.length === SQLITE_INSTANT_LENGTH && value[10] === ' ') {
    const millis = Date.parse(`${value.slice(0, 10)}T${value.slice(11)}Z`);
    if (!Number.isNaN(millis)) return millis;
  }
  let text = asText(value).trim().replace(' ', 'T');
  // PostgreSQL writes `+00` (hours only); SQLite's text has no offset and is UTC.
  text = /[+-]\d\d$/.test(text) ? `${text}:00` : /(Z|[+-]\d\d:\d\d)$/i.test(text) ? text : `${text}Z`;
  const millis = Date.parse(text);
  if (Number.isNaN(millis)) throw new Error(`not an instant: ${asText(value)}`);
  return millis;
}

function isTrue(value: unknown): boolean {
  return value === true || value === 1 || value === 1n || value === 't' || value === '1' || value === 'true';
}

/** The value as SQLite stores it (better-sqlite3 parameter). */
export function toSqlite(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'instant':
      return new Date(instantMillis(value)).toISOString().replace('T', ' ').replace('Z', '');
    case 'boolean':
      return isTrue(value) ? 1 : 0;
    case 'integer': {
      const number = Number(value);
      return Number.isSafeInteger(number) ? number : BigInt(asText(value));
    }
    case 'json':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'text':
      return typeof value === 'string' || Buffer.isBuffer(value) ? value : asText(value);
  }
}

/** One field of PostgreSQL's COPY text format (tab-separated, `\N` for null, backslash escapes). */
export function toCopyField(kind: ColumnKind, value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  let text: string;
  switch (kind) {
    case 'instant':
      text = new Date(instantMillis(value)).toISOString();
      break;
    case 'boolean':
      text = isTrue(value) ? 't' : 'f';
      break;
    case 'json':
      text = typeof value === 'string' ? value : JSON.stringify(value);
      break;
    case 'integer':
    case 'text':
      text = asText(value);
  }
  return /[\\\n\r\t]/.test(text) ? text.replace(/[\\\n\r\t]/g, escapeCopy) : text;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const escapeCopy = (char: string): string => COPY_ESCAPES[char] ?? char;

/** JSON with object keys sorted: jsonb reorders keys and drops whitespace, SQLite's text keeps what was written. */
function canonicalJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, canonicalJson(record[key])]),
    );
  }
  return value;
}

/** The value reduced so that the same datum hashes the same on either engine. */
export function normalised(kind: ColumnKind, value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'instant':
      return instantMillis(value);
    case 'boolean':
      return isTrue(value);
    case 'integer':
      return asText(value);
    case 'json':
      return JSON.stringify(canonicalJson(typeof value === 'string' ? JSON.parse(value) : value));
    case 'text':
      return asText(value);
  }
}

/** A row's 128-bit digest (the first half of its normalised values' SHA-256). */
function rowDigestBytes(kinds: readonly ColumnKind[], row: readonly unknown[]): Buffer {
  const values = row.map((value, index) => normalised(kinds[index], value));
  // The one-shot hash: a Hash object per row cost as much again as the hashing (a CPU profile of bench/db-copy.mjs).
  return hash('sha256', JSON.stringify(values), 'buffer');
}

/** A row's digest as a number (one row against another). */
export function rowDigest(kinds: readonly ColumnKind[], row: readonly unknown[]): bigint {
  const digest = rowDigestBytes(kinds, row);
  return digest.readBigUInt64BE(0) * 2n ** 64n + digest.readBigUInt64BE(8);
}

export const HASH_MODULUS = 2n ** 128n;

/** Rows summed before the word sums are folded: each stays below 2^32 × 2^20 = 2^52, exact in a double. */
const FOLD_EVERY = 2 ** 20;

/**
 * A table's order-independent hash: the sum of its rows' digests mod 2^128, so row order never matters. Kept as
 * four sums of 32-bit words (plain numbers, folded into a bigint now and then): the same value as adding each
 * row's digest as a bigint, without a bigint per row.
 */
export class TableHash {
  private readonly words = [0, 0, 0, 0];
  private pending = 0;
  private folded = 0n;

  /** `foldEvery`: for tests only. */
  constructor(private readonly foldEvery = FOLD_EVERY) {}

  add(kinds: readonly ColumnKind[], row: readonly unknown[]): void {
    const digest = rowDigestBytes(kinds, row);
    for (let index = 0; index < 4; index++) this.words[index] += digest.readUInt32BE(index * 4);
    if (++this.pending === this.foldEvery) this.fold();
  }

  get value(): bigint {
    this.fold();
    return this.folded;
  }

  private fold(): void {
    let sum = this.folded;
    for (let index = 0; index < 4; index++) sum += BigInt(this.words[index]) << BigInt(32 * (3 - index));
    this.folded = sum % HASH_MODULUS;
    this.words.fill(0);
    this.pending = 0;
  }
}
