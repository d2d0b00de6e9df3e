import { describe, expect, it } from '@jest/globals';
import { BACKGROUND_NICE, lowerPriorityForBackgroundWork } from './background-priority.js';

/** A process priority as os.getPriority/setPriority see it, without changing the test's own. */
function processAt(nice: number, allowed = true) {
  const state = { nice };
  return {
    state,
    getPriority: () => state.nice,
    setPriority: (value: number) => {
      if (!allowed) throw new Error('EACCES');
      state.nice = value;
    },
  };
}

describe('lowerPriorityForBackgroundWork', () => {
  it('lowers db:backup to nice 10 and leaves every other command as it is', () => {
    for (const [command, expected] of [
      ['db:backup', BACKGROUND_NICE],
      ['db:copy', 0],
      ['api-key:list', 0],
      [undefined, 0],
    ] as const) {
      const process = processAt(0);
      lowerPriorityForBackgroundWork(['node', 'cli.js', ...(command ? [command] : [])], process);
      expect([command, process.state.nice]).toEqual([command, expected]);
    }
  });

  it('never raises a priority an operator lowered further, and runs on where lowering is refused', () => {
    const niceAlready = processAt(15);
    expect(lowerPriorityForBackgroundWork(['node', 'cli.js', 'db:backup'], niceAlready)).toBe(true);
    expect(niceAlready.state.nice).toBe(15);
    const refused = processAt(0, false);
    expect(lowerPriorityForBackgroundWork(['node', 'cli.js', 'db:backup'], refused)).toBe(false);
    expect(refused.state.nice).toBe(0);
  });
});
