// Runs the built service or CLI (dist/) as a separate process, as an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn' };

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Finished> {
  return run(['dist/src/cli.js', ...args], env, timeoutMs);
}

export function runMain(env: Record<string, string>, timeoutMs = 20_000): Promise<Finished> {
  return run(['dist/src/main.js'], env, timeoutMs);
}

function run(args: string[], env: Record<string, string>, timeoutMs: number): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...BASE_ENV, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningServer {
  child: ChildProcess;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * The environment that makes a started service record its event loop's stalls (test/support/loop-gaps.mjs) into
 * `file`; `longestLoopGap` reads them back.
 */
export function loopGapsEnv(file: string): Record<string, string> {
  return {
    NODE_OPTIONS: `--import ${path.join(ROOT, 'test', 'support', 'loop-gaps.mjs')}`,
    LOOP_GAPS_FILE: file,
  };
}

/** The longest stretch (ms) the service's loop was held that ended between `from` and `to` (epoch ms), 0 if none. */
export function longestLoopGap(file: string, from: number, to: number): number {
  if (!fs.existsSync(file)) return 0;
  let longest = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [end, held] = line.split(' ').map(Number);
    if (end >= from && end <= to) longest = Math.max(longest, held);
  }
  return longest;
}

/** Starts dist/src/main.js and resolves once `until` (/health/ready unless told) answers 200. */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  until: '/health/ready' | '/health/live' = '/health/ready',
): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: { ...BASE_ENV, HOST: '127.0.0.1', PORT: String(port), ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}${until}`);
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server: no 200 from ${until} in ${timeoutMs} ms: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    port,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
