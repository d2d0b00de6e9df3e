// Long work in slices with the event loop free in between (issue 22: no request holds the loop for more than
// ~20 ms). A slicer measures the time since the loop last gave this work a turn; `pause()` yields (setImmediate:
// after pending I/O, so other requests' sockets are read) once the budget is spent. One slicer is passed along a
// request's phases, so a phase starting right after another does not start a fresh budget in the same turn.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Work between two turns of the event loop: leaves room for a garbage collection pause within ~20 ms. */
export const DEFAULT_SLICE_MS = 8;

export class TimeSlicer {
  private began = performance.now();

  constructor(private readonly budgetMs = DEFAULT_SLICE_MS) {}

  /** True once the budget since the last turn is spent. */
  get due(): boolean {
    return performance.now() - this.began >= this.budgetMs;
  }

  /** Gives the event loop a turn if the budget is spent. */
  async pause(): Promise<void> {
    if (this.due) await this.yield();
  }

  /** Gives the event loop a turn now. */
  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.began = performance.now();
  }
}

/**
 * Runs a stepped computation (a generator that pauses between small steps) to its end, giving the event loop a turn
 * whenever `slicer`'s budget is spent.
 */
export async function runInSlices<T>(steps: Generator<void, T>, slicer = new TimeSlicer()): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
    await slicer.pause();
  }
}
