// The folder of a SQLite database file: its free space and whether it can be written at all, what readiness and a
// deferred start-up ask before a write.
import fs from 'node:fs';
import path from 'node:path';

/** Free space below which a SQLite instance counts its storage as full (readiness 503, start-up deferred). */
export const SQLITE_ROOM_BYTES = 1024 * 1024;

/** Whether the folder of `file` has SQLITE_ROOM_BYTES free; true when it cannot be asked (no file, ':memory:'). */
export function sqliteHasRoom(file: unknown): boolean {
  if (typeof file !== 'string' || file === ':memory:') return true;
  try {
    const stats = fs.statfsSync(path.dirname(file));
    return stats.bavail * stats.bsize >= SQLITE_ROOM_BYTES;
  } catch {
    return true;
  }
}

/** Whether the folder of `file` can be written (false on a read-only mount; true when it cannot be asked). */
export function sqliteWritable(file: unknown): boolean {
  if (typeof file !== 'string' || file === ':memory:') return true;
  try {
    fs.accessSync(path.dirname(file), fs.constants.W_OK);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
