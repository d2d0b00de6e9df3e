// The name the CLI's usage lines give it. Commander would otherwise take it from the script's file name
// (dist/src/cli.js → "Usage: cli"), which is not what an operator types.
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectCommander } from 'nest-commander';

export const CLI_NAME = 'platform-api';

/** The part of commander's program this needs. */
interface NamedProgram {
  name(name: string): unknown;
}

@Injectable()
export class CliProgramName implements OnModuleInit {
  constructor(@InjectCommander() private readonly program: NamedProgram) {}

  onModuleInit(): void {
    this.program.name(CLI_NAME);
  }
}

/** Whether commander will only print help or the version for these arguments: nothing needs a database. */
export function asksOnlyForHelp(args: readonly string[]): boolean {
  const options = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  return (
    options.length === 0 ||
    options[0] === 'help' ||
    options.some((arg) => arg === '--help' || arg === '-h' || arg === '--version' || arg === '-V')
  );
}
