// Runs the HTTP clients of bench/support in child processes: http-sampler.mjs (sequential requests, timed and
// digested) and http-load.mjs (concurrent GET loops), and returns what they print.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SAMPLER = fileURLToPath(new URL('./http-sampler.mjs', import.meta.url));
const LOAD = fileURLToPath(new URL('./http-load.mjs', import.meta.url));

/** @returns {Promise<Array<{ path: string, ms: number[], answers: Array<{ status: number, body: unknown }> }>>} */
export function sample(job) {
  return run(SAMPLER, job);
}

/**
 * Runs http-load.mjs (concurrent GET loops) in a child process.
 * @returns {Promise<{ served: number, statuses: Record<string, number>, ms: number[] }>}
 */
export async function load(job) {
  const [result] = await run(LOAD, job);
  return result;
}

function run(script, job) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(
            output
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line)),
          )
        : reject(new Error(`${script} exited with ${code}`)),
    );
    child.stdin.end(JSON.stringify(job));
  });
}
