import { Command, CommandRunner } from 'nest-commander';
import { DataSource } from 'typeorm';
import { MigrationRunner } from '../database/migration-runner.js';

@Command({
  name: 'migration:run',
  description: 'Apply every pending schema migration (recorded as trigger "cli")',
})
export class MigrationRunCommand extends CommandRunner {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async run(): Promise<void> {
    const applied = await new MigrationRunner(this.dataSource).runPending('cli');
    console.log(applied.length === 0 ? 'Nothing to migrate.' : `Applied: ${applied.join(', ')}`);
  }
}

@Command({
  name: 'migration:revert',
  description: 'Revert the most recently applied migration (recorded as "Reverted")',
})
export class MigrationRevertCommand extends CommandRunner {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async run(): Promise<void> {
    const reverted = await new MigrationRunner(this.dataSource).revertLast('cli');
    console.log(reverted === undefined ? 'No migration is applied.' : `Reverted: ${reverted}`);
  }
}

@Command({
  name: 'migration:status',
  description: 'List migrations as applied, pending or drifted (code changed since it ran)',
})
export class MigrationStatusCommand extends CommandRunner {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async run(): Promise<void> {
    const status = await new MigrationRunner(this.dataSource).status();
    for (const entry of status) {
      const state = entry.drifted ? 'drifted' : entry.state;
      console.log(`${state.padEnd(8)} ${entry.name}  (${entry.source})`);
    }
    if (status.some((entry) => entry.drifted)) process.exitCode = 2;
  }
}
