// A copy's memory is bounded by its batch, not by the data: the rows of a batch are garbage once written,
// but V8 grows its old generation with the allocation rate before it collects it, so a long copy's peak RSS grew
// with the rows (225 MB at 700,000 rows, 305–326 MB at 3.5 million) while its live heap stayed at 46–52 MB.
// A full collection every `interval` rows keeps the heap near what is live; ~20–40 ms each, every 100,000 rows.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** V8's `gc()`, exposed once for this process (the CLI's db:* commands run in their own process). */
function collector(): () => void {
  if (collect === undefined) {
    v8.setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  return collect;
}

export class HeapBound {
  private sinceCollect = 0;

  constructor(
    private readonly interval = 100_000,
    private readonly collectNow: () => void = () => collector()(),
  ) {}

  /** Counts rows done; collects garbage each time another `interval` rows have passed. */
  advance(rows: number): void {
    this.sinceCollect += rows;
    if (this.sinceCollect < this.interval) return;
    this.sinceCollect = 0;
    this.collectNow();
  }
}
