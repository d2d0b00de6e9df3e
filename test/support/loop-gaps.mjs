// Preloaded into a spawned service (`NODE_OPTIONS=--import …`, see loopGapsEnv in spawn.ts): appends each stretch
// its event loop was held longer than 20 ms to LOOP_GAPS_FILE as "<end, epoch ms> <length ms>". The service's own
// view of a stall: a client's probe also counts the client's turns and the scheduler of a loaded machine.
import fs from 'node:fs';

const file = process.env.LOOP_GAPS_FILE;
if (file) {
  const TICK_MS = 5;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const held = now - last - TICK_MS;
    if (held > 20) fs.appendFileSync(file, `${Date.now()} ${held.toFixed(1)}\n`);
    last = now;
  }, TICK_MS).unref();
}
