// The SQLite files taken away under a running instance: the WAL removed, the database file removed, another file
// moved over it (a restore done the wrong way). The instance must notice by itself: readiness 503, one `error`
// line naming the file, and every write from then on answered 503 with Retry-After — never 201 into a file nobody
// will open again. SQLite only (its files are the service's own); runs on both passes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '../support/spawn.js';
import {
  API_KEY,
  createSchedule,
  createScimUser,
  failureAnswerProblems,
  readyStatus,
  waitFor,
} from '../support/faults.js';

let server: RunningServer | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

interface LogLine {
  level?: string;
  message?: string;
  file?: string;
}

function errorLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.level === 'error' || line.level === 'fatal');
}

const CHANGES = {
  'the WAL removed': (file: string) => {
    fs.rmSync(`${file}-wal`);
    return `${file}-wal`;
  },
  'the database file removed': (file: string) => {
    fs.rmSync(file);
    return file;
  },
  'another file moved over the database file': (file: string) => {
    fs.copyFileSync(file, `${file}.restored`);
    fs.renameSync(`${file}.restored`, file);
    return file;
  },
} as const;

describe('SQLite files removed or replaced under a running instance', () => {
  it.each(Object.keys(CHANGES) as Array<keyof typeof CHANGES>)(
    '%s: readiness 503, one error line naming the file, writes refused 503',
    async (change) => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-file-lost-'));
      const file = path.join(dataDir, 'platform.sqlite');
      server = await startServer({
        DATA_DIR: dataDir,
        DATABASE_URL: `sqlite:${file}`,
        API_KEYS: API_KEY,
        RATE_LIMIT: '0',
      });
      const base = `http://127.0.0.1:${server.port}`;
      expect((await createSchedule(base)).status).toBe(201);
      expect(fs.existsSync(`${file}-wal`)).toBe(true);

      const named = CHANGES[change](file);
      expect(await waitFor(async () => (await readyStatus(base)) === 503, 15_000, 200)).toBe(true);

      const writes = [await createSchedule(base), await createScimUser(base), await createSchedule(base)];
      expect(writes.map((answer) => answer.status)).toEqual([503, 503, 503]);
      expect(writes.flatMap((answer) => failureAnswerProblems(answer, 503))).toEqual([]);
      expect(await readyStatus(base)).toBe(503);

      const errors = errorLines(server.output());
      expect(errors).toHaveLength(1);
      expect(errors[0].file).toBe(named);
      expect(errors[0].message).toContain(named);
    },
    60_000,
  );
});
