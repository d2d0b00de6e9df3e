// `platform-api --version`, answered before anything heavy is loaded, the configuration read or a database opened.
import fs from 'node:fs';
import path from 'node:path';

/** The version in the package.json above this file (dist/src/cli/ or src/cli/). */
export function packageVersion(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'platform-api' && pkg.version !== undefined) return pkg.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

/** Prints the version when it is all that was asked (`--version` or `-V` alone); says whether it did. */
export function printVersionIfAsked(argv: readonly string[]): boolean {
  if (argv.length !== 3 || (argv[2] !== '--version' && argv[2] !== '-V')) return false;
  process.stdout.write(`${packageVersion()}\n`);
  return true;
}
