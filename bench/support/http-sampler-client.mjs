// Runs http-sampler.mjs in a child process with a job and returns its cases' results (see that file).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SAMPLER = fileURLToPath(new URL('./http-sampler.mjs', import.meta.url));

/** @returns {Promise<Array<{ path: string, ms: number[], answers: Array<{ status: number, body: unknown }> }>>} */
export function sample(job) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SAMPLER], { stdio: ['pipe', 'pipe', 'inherit'] });
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
        : reject(new Error(`the HTTP sampler exited with ${code}`)),
    );
    child.stdin.end(JSON.stringify(job));
  });
}
