// Long work in slices with the event loop free in between (the goal: no request holds the loop for more than
// ~20 ms). A slicer measures the time since the loop last gave this work a turn; `pause()` yields (setImmediate:
// after pending I/O, so other requests' sockets are read) once the budget is spent. One slicer is passed along a
// request's phases, so a phase starting right after another does not start a fresh budget in the same turn.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Work between two turns of the event loop: leaves room for a garbage collection pause within ~20 ms. */
export const DEFAULT_SLICE_MS = 8;

/** What bounds a whole stepped computation (one request's cost), checked at each turn it gives the event loop. */
export interface WorkLimits {
  /** Milliseconds of its own turns after which the work stops with WorkBudgetExceeded. */
  readonly workBudgetMs?: number;
  /** True once nobody waits for the result (the request was answered by its time-out, or its client left). */
  readonly cancelled?: () => boolean;
}

export class WorkBudgetExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`the work passed its budget of ${budgetMs} ms`);
  }
}

/** The work was stopped because nobody waits for it any more; nothing of it is kept. */
export class WorkCancelled extends Error {
  constructor() {
    super('the request was answered or abandoned; its work stopped');
  }
}

export class TimeSlicer {
  private began = performance.now();
  private worked = 0;

  constructor(
    private readonly budgetMs = DEFAULT_SLICE_MS,
    private readonly limits: WorkLimits = {},
  ) {}

  /** Milliseconds of turns this slicer's work has had so far. */
  get workedMs(): number {
    return this.worked + performance.now() - this.began;
  }

  /** True once the budget since the last turn is spent. */
  get due(): boolean {
    return performance.now() - this.began >= this.budgetMs;
  }

  /** Gives the event loop a turn if the budget is spent. */
  async pause(): Promise<void> {
    if (this.due) await this.yield();
  }

  /** Gives the event loop a turn now; throws once the work passed its budget or was cancelled. */
  async yield(): Promise<void> {
    this.worked += performance.now() - this.began;
    const budget = this.limits.workBudgetMs;
    if (budget !== undefined && this.worked > budget) throw new WorkBudgetExceeded(budget);
    await yieldToEventLoop();
    this.began = performance.now();
    if (this.limits.cancelled?.() === true) throw new WorkCancelled();
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
