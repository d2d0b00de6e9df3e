// Progress of long database work: a bar per table on a terminal (cli-progress: rows done/total, rows/s, ETA);
// otherwise one line per table and a summary line, in a key=value form a script can read.
import cliProgress from 'cli-progress';

export interface Progress {
  start(table: string, total: number): void;
  advance(rows: number): void;
  finish(table: string, rows: number, seconds: number): void;
  /** The closing line: `<verb> tables=<n> rows=<n> seconds=<s>`. */
  summary(verb: string, tables: number, rows: number, seconds: number): void;
  stop(): void;
}

export function progressFor(out: NodeJS.WriteStream = process.stdout): Progress {
  return out.isTTY ? new BarProgress(out) : new LineProgress(out);
}

const summaryLine = (verb: string, tables: number, rows: number, seconds: number): string =>
  `${verb} tables=${tables} rows=${rows} seconds=${seconds.toFixed(2)}\n`;

class LineProgress implements Progress {
  constructor(private readonly out: NodeJS.WritableStream) {}
  start(): void {}
  advance(): void {}
  finish(table: string, rows: number, seconds: number): void {
    this.out.write(`table=${table} rows=${rows} seconds=${seconds.toFixed(2)}\n`);
  }
  summary(verb: string, tables: number, rows: number, seconds: number): void {
    this.out.write(summaryLine(verb, tables, rows, seconds));
  }
  stop(): void {}
}

class BarProgress implements Progress {
  private bar: cliProgress.SingleBar | undefined;

  constructor(private readonly out: NodeJS.WriteStream) {}

  start(table: string, total: number): void {
    this.bar = new cliProgress.SingleBar(
      {
        stream: this.out,
        format: `${table.padEnd(24)} {bar} {value}/{total} rows  {speed} rows/s  ETA {eta_formatted}`,
        etaBuffer: 50,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(total, 0, { speed: 0 });
    this.startedAt = performance.now();
  }

  private startedAt = 0;

  advance(rows: number): void {
    if (!this.bar) return;
    const seconds = (performance.now() - this.startedAt) / 1000;
    const done = this.bar.getProgress() * this.bar.getTotal() + rows;
    this.bar.increment(rows, { speed: seconds > 0 ? Math.round(done / seconds) : 0 });
  }

  finish(): void {
    this.bar?.stop();
    this.bar = undefined;
  }

  summary(verb: string, tables: number, rows: number, seconds: number): void {
    this.out.write(summaryLine(verb, tables, rows, seconds));
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}
