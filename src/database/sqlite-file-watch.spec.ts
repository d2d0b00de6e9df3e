import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SqliteFileWatch, type SqliteFileLostError } from './sqlite-file-watch.js';

describe('SqliteFileWatch', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  function files(withWal = true): { file: string; wal: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-watch-'));
    dirs.push(dir);
    const file = path.join(dir, 'platform.db');
    fs.writeFileSync(file, 'db');
    if (withWal) fs.writeFileSync(`${file}-wal`, 'wal');
    return { file, wal: `${file}-wal` };
  }

  function watch(file: string) {
    const found: SqliteFileLostError[] = [];
    return { watch: new SqliteFileWatch(file, (lost) => found.push(lost)), found };
  }

  it('finds nothing while the files are the ones opened', () => {
    const { file } = files();
    const { watch: w, found } = watch(file);
    fs.appendFileSync(file, 'more');
    expect(w.check()).toBeUndefined();
    expect(found).toEqual([]);
  });

  it.each([
    ['the database file removed', (f: { file: string }) => fs.rmSync(f.file), 'file', 'removed'],
    ['the WAL removed', (f: { wal: string }) => fs.rmSync(f.wal), 'wal', 'removed'],
    [
      'the database file replaced by mv',
      (f: { file: string }) => {
        fs.writeFileSync(`${f.file}.restored`, 'other');
        fs.renameSync(`${f.file}.restored`, f.file);
      },
      'file',
      'replaced',
    ],
  ] as const)('names the file once: %s', (_, change, which, how) => {
    const f = files();
    const { watch: w, found } = watch(f.file);
    change(f);
    expect(w.check()).toMatchObject({ file: f[which], how, code: 'SQLITE_FILE_LOST' });
    w.check();
    expect(found).toHaveLength(1);
    expect(found[0].message).toContain(f[which]);
  });

  it('adopts a WAL that appears after the start, then watches it', () => {
    const f = files(false);
    const { watch: w, found } = watch(f.file);
    fs.writeFileSync(f.wal, 'wal');
    expect(w.check()).toBeUndefined();
    fs.rmSync(f.wal);
    expect(w.check()?.file).toBe(f.wal);
    expect(found).toHaveLength(1);
  });
});
