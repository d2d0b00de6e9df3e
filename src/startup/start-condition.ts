// Which start-up failures are a storage condition the service reports at run time: a full disk, a
// read-only or failing file. Such a start is deferred (the instance listens, not ready) instead of ending the
// process: under an orchestrator an exit is a crash loop that no restart can end, since a restart brings no space.
import type { DatabaseConfig } from '../config/config.js';
import { classifyDatabaseError } from '../database/database-failures.js';
import { sqliteHasRoom } from '../database/storage-room.js';

export interface StartCondition {
  /** `storage-full`: writes are answered 507 StorageFull; `unavailable`: 503 DatabaseUnavailable. */
  kind: 'storage-full' | 'unavailable';
  /** The failure's own message (the driver's or the file system's), for readiness and the log. */
  reason: string;
}

/** File-system errors from the start's own files (encryption.key, initial-admin-key, the database file). */
const FS_FULL = new Set(['ENOSPC', 'EDQUOT']);
const FS_UNWRITABLE = new Set(['EROFS', 'EACCES', 'EPERM', 'EIO']);

/**
 * The storage condition `error` stands for, or undefined when the start must fail (configuration, a bug, a
 * schema behind the build). PostgreSQL that cannot be reached is not one: only its disk_full (53100) is.
 */
export function startCondition(error: unknown, database: DatabaseConfig): StartCondition | undefined {
  const reason = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && FS_FULL.has(code)) return { kind: 'storage-full', reason };
  if (typeof code === 'string' && FS_UNWRITABLE.has(code)) return { kind: 'unavailable', reason };
  const kind = classifyDatabaseError(error);
  if (kind === 'storage-full') return { kind, reason };
  // busy: another instance held the migration lock past the 30 s wait — a failed start, as before.
  if (kind === undefined || kind === 'busy' || database.type !== 'sqlite') return undefined;
  // SQLite on a full disk often fails as "disk I/O error" (the -shm file cannot grow): the free space decides.
  return { kind: sqliteHasRoom(database.database) ? 'unavailable' : 'storage-full', reason };
}

/** Whether another attempt can succeed yet: on SQLite not before the data folder has room again. */
export function worthRetrying(condition: StartCondition, database: DatabaseConfig): boolean {
  return condition.kind !== 'storage-full' || database.type !== 'sqlite' || sqliteHasRoom(database.database);
}
