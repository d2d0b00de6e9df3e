// A scratch database for one benchmark run: a temp directory with an SQLite file by default, or, when
// DATABASE_URL=postgres://…/<db>, a new PostgreSQL database next to <db> (named after the bench, random suffix).
// `drop()` removes both; a bench that keeps them for a look with sqlite3/psql just does not call it.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A path resolver into the built service (`--dist`, default `dist/` of this checkout); exits with a hint when the
 * build is missing.
 */
export function builtService(distDir = 'dist') {
  const dist = (file) => path.join(path.resolve(root, distDir), file);
  if (!existsSync(dist('src/create-app.js'))) {
    console.error(`${dist('')} is missing: run \`npm run build\` first.`);
    process.exit(1);
  }
  return dist;
}

/**
 * `configured` (default DATABASE_URL) names the PostgreSQL server and the base name; anything else means SQLite.
 * @returns {Promise<{ dataDir: string, databaseUrl: string, drop: () => Promise<void> }>}
 */
export async function scratchDatabase(benchName, configured = process.env.DATABASE_URL) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `${benchName}-bench-`));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (!configured || !/^postgres(ql)?:\/\//i.test(configured)) {
    return {
      dataDir,
      databaseUrl: `sqlite:${path.join(dataDir, 'bench.sqlite')}`,
      drop: async () => removeDir(),
    };
  }
  const base = new URL(configured);
  const name =
    `${decodeURIComponent(base.pathname.slice(1))}_${benchName.replaceAll('-', '_')}_bench_${randomBytes(4).toString('hex')}`.toLowerCase();
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: base.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      removeDir();
    },
  };
}

/** Median, 90th percentile and maximum of a list of milliseconds. */
export function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9), max: sorted.at(-1) };
}

/** One line naming the host the figures were measured on. */
export function hostLine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `node ${process.version}, ${os.cpus().length} × ${cpu}, load ${load}`;
}
