// Commands that run beside a serving instance on the same machine and can take their time: `db:backup` (an online
// snapshot under live writers). Their process lowers its own CPU priority (nice 10) before it loads
// anything, so the instance's requests are scheduled first and the command takes the idle time; with 8 clients
// writing, the writers' p99 during a backup went from 3.5–3.8× to a median of 1.9× their p99 without it (bench/
// db-copy.mjs). Where lowering is not permitted the command runs at its priority as it is.
import os from 'node:os';

const BACKGROUND_COMMANDS = new Set(['db:backup']);
export const BACKGROUND_NICE = 10;

/** Lowers this process's priority when `argv` runs a background command; answers whether it did. */
export function lowerPriorityForBackgroundWork(
  argv: readonly string[],
  priority: Pick<typeof os, 'getPriority' | 'setPriority'> = os,
): boolean {
  if (!BACKGROUND_COMMANDS.has(argv[2] ?? '')) return false;
  try {
    // Never raised: an operator who started it at a lower priority still has theirs.
    priority.setPriority(Math.max(priority.getPriority(), BACKGROUND_NICE));
    return true;
  } catch {
    return false;
  }
}
