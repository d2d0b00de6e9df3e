// Which database errors are the storage's or the database's condition rather than a bug: a client can
// retry them, so they are answered 507/503 with Retry-After, never 500. Works on the driver's own codes:
// better-sqlite3's extended result codes (https://sqlite.org/rescode.html), PostgreSQL's SQLSTATE (Appendix A of
// its manual) and Node's socket errors from pg.

/**
 * `busy`: the database is up but another write held the lock this statement needed past the wait limit (SQLite's
 * busy timeout or this process's turn, PostgreSQL's lock_timeout, a deadlock or serialisation conflict) — the
 * request failed, the database did not; the answer says so rather than "unreachable".
 */
export type DatabaseFailure = 'storage-full' | 'unavailable' | 'busy';

/** SQLite result codes (primary; extended codes such as SQLITE_IOERR_WRITE share the prefix). */
const SQLITE_UNAVAILABLE = [
  'SQLITE_IOERR', // an I/O error: a failing or vanished disk
  'SQLITE_READONLY', // a read-only file or file system
  'SQLITE_CANTOPEN',
  'SQLITE_NOMEM',
  'SQLITE_PROTOCOL',
  'SQLITE_TRANSACTION_LOST', // sqlite-transactions.ts: SQLite ended the transaction after such an error
  'SQLITE_FILE_LOST', // sqlite-file-watch.ts: the database file or WAL was removed or replaced under the instance
];

/** SQLite: another connection (or, in this process, another transaction) held the write lock past the limit. */
const SQLITE_BUSY = ['SQLITE_BUSY', 'SQLITE_LOCKED'];

/** SQLSTATE classes and codes PostgreSQL uses for conditions that pass. */
const PG_UNAVAILABLE_CLASSES = ['08', '57', '58']; // connection exception, operator intervention, system error
const PG_UNAVAILABLE_CODES = new Set([
  '53000', // insufficient_resources
  '53200', // out_of_memory
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '25006', // read_only_sql_transaction (a standby after a fail-over)
  '3D000', // invalid_catalog_name (the database is not there yet, e.g. during a restore)
]);
const PG_BUSY_CODES = new Set([
  '55P03', // lock_not_available (lock_timeout)
  '57014', // query_canceled (statement_timeout): a statement past its limit, not a server going away
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Node's socket and resolver errors on the way to the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** pg and pg-pool report a lost or unobtainable connection by message only. */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
  /^Query read timeout/,
];

/**
 * TypeORM releases a PostgreSQL query runner whose connection died (its `error` event), so the transaction's next
 * statement fails with one of these instead of the network error: the query builder's path names the runner, and
 * `EntityManager.query` (the audit trail's INSERT) the runner's provider.
 */
const LOST_CONNECTION_NAMES = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The failure `error` stands for, or undefined when it is not the storage's or the database's condition. */
export function classifyDatabaseError(error: unknown): DatabaseFailure | undefined {
  return classify(error, 0);
}

function classify(error: unknown, depth: number): DatabaseFailure | undefined {
  if (error === null || typeof error !== 'object' || depth > 4) return undefined;
  const candidate = error as ErrorLike;
  const code = typeof candidate.code === 'string' ? candidate.code : undefined;
  if (code !== undefined) {
    if (code === 'SQLITE_FULL' || code === '53100') return 'storage-full';
    if (SQLITE_BUSY.some((prefix) => code === prefix || code.startsWith(`${prefix}_`))) return 'busy';
    if (SQLITE_UNAVAILABLE.some((prefix) => code === prefix || code.startsWith(`${prefix}_`)))
      return 'unavailable';
    if (/^[0-9A-Z]{5}$/.test(code)) {
      if (PG_BUSY_CODES.has(code)) return 'busy';
      if (PG_UNAVAILABLE_CODES.has(code) || PG_UNAVAILABLE_CLASSES.includes(code.slice(0, 2)))
        return 'unavailable';
    }
    if (NETWORK_CODES.has(code)) return 'unavailable';
  }
  if (typeof candidate.name === 'string' && LOST_CONNECTION_NAMES.has(candidate.name)) return 'unavailable';
  const message = typeof candidate.message === 'string' ? candidate.message : '';
  if (PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return 'unavailable';
  // TypeORM's QueryFailedError keeps the driver's error; AggregateError (a host with several addresses) its parts.
  const nested = [
    candidate.driverError,
    candidate.cause,
    ...(Array.isArray(candidate.errors) ? (candidate.errors as unknown[]) : []),
  ];
  for (const inner of nested) {
    if (inner === undefined || inner === error) continue;
    const found = classify(inner, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
