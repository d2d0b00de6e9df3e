// The SQLite files a serving instance opened, watched. A database file or WAL removed or replaced under a running
// instance (an `mv` of a restored copy over it, a clean-up script, a volume remounted) does not fail a single
// statement: the process keeps reading and writing the inode it opened, which nobody will open again — every write
// answered 201 from then on is gone at the next start. So the files are looked at every second (a stat of each,
// compared to the device and inode seen at start), and once one is missing or another file, the instance says so
// once, turns unready and refuses every statement but a rollback (DatabaseHealth.lostFile): a restart on the right
// file is the only way back. Requests pay nothing for it: the watcher sets a flag, the statement checks it.
import fs from 'node:fs';
import type { DataSource } from 'typeorm';

/** How often the files are looked at (a stat of each of two files). */
export const SQLITE_FILE_CHECK_MS = 1_000;

/** A database file or WAL this instance opened is gone or another file: nothing more can be stored safely. */
export class SqliteFileLostError extends Error {
  readonly code = 'SQLITE_FILE_LOST';
  constructor(
    readonly file: string,
    readonly how: 'removed' | 'replaced',
  ) {
    super(
      `The SQLite file ${file} was ${how} under this instance; nothing more is stored until it is restarted on the database file it should use`,
    );
    this.name = 'SqliteFileLostError';
  }
}

interface Identity {
  dev: number;
  ino: number;
}

function identityOf(file: string): Identity | undefined {
  try {
    const stats = fs.statSync(file);
    return { dev: stats.dev, ino: stats.ino };
  } catch {
    return undefined;
  }
}

export class SqliteFileWatch {
  /** The identity each file had when first seen (the WAL may appear after the start). */
  private readonly known = new Map<string, Identity | undefined>();
  private timer: NodeJS.Timeout | undefined;
  private lost: SqliteFileLostError | undefined;

  constructor(
    file: string,
    private readonly onLost: (error: SqliteFileLostError) => void,
  ) {
    for (const watched of [file, `${file}-wal`]) this.known.set(watched, identityOf(watched));
  }

  start(everyMs = SQLITE_FILE_CHECK_MS): this {
    this.timer = setInterval(() => this.check(), everyMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Answers the loss found, if any (once; the watch stops there). */
  check(): SqliteFileLostError | undefined {
    if (this.lost !== undefined) return this.lost;
    for (const [file, known] of this.known) {
      const current = identityOf(file);
      if (known === undefined) {
        if (current !== undefined) this.known.set(file, current);
        continue;
      }
      if (current !== undefined && current.dev === known.dev && current.ino === known.ino) continue;
      this.lost = new SqliteFileLostError(file, current === undefined ? 'removed' : 'replaced');
      this.stop();
      this.onLost(this.lost);
      return this.lost;
    }
    return undefined;
  }
}

/**
 * Watches a serving SQLite data source's files into `health` (nothing on PostgreSQL or ':memory:'). The watch
 * ends before the data source closes: SQLite removes the WAL itself when its last connection closes.
 */
export function watchSqliteFiles(
  dataSource: DataSource,
  health: { lostFile(error: SqliteFileLostError): void },
): void {
  const file = dataSource.options.type === 'better-sqlite3' ? dataSource.options.database : undefined;
  if (typeof file !== 'string' || file === ':memory:' || file === '') return;
  const watch = new SqliteFileWatch(file, (lost) => health.lostFile(lost)).start();
  const destroy = dataSource.destroy.bind(dataSource);
  dataSource.destroy = () => {
    watch.stop();
    return destroy();
  };
}
