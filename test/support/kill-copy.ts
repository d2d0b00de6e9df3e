// Starts the built CLI's `db:copy` and kills it (SIGKILL) halfway: once the line for `afterTable` is printed (the
// copy prints a line per table when stdout is not a terminal), i.e. while the table after it loads.
import { spawn } from 'node:child_process';
import { ROOT } from './spawn.js';

export async function killCopyHalfway(
  args: string[],
  env: Record<string, string>,
  afterTable = 'webhook_signatures',
): Promise<void> {
  const child = spawn(process.execPath, ['dist/src/cli.js', 'db:copy', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`table=${afterTable} `)) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('close', () => reject(new Error(`the copy ended before it was killed: ${output}`)));
  });
  await new Promise((resolve) => child.once('close', resolve));
}
