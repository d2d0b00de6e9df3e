// The maintenance CLI's entry point (`node dist/src/cli.js --help`): Node's compile cache first, then the CLI.
// Dynamic import on purpose: everything statically imported here would be compiled before the cache is on.
import { lowerPriorityForBackgroundWork } from './cli/background-priority.js';
import { printVersionIfAsked } from './cli/cli-version.js';
import { enableCompileCache } from './compile-cache.js';

enableCompileCache();
lowerPriorityForBackgroundWork(process.argv);
if (!printVersionIfAsked(process.argv)) {
  const { runCli } = await import('./cli/run-cli.js');
  await runCli();
}
