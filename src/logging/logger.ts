// Structured JSON logs (pino) for the whole process; Nest's own logger is routed here too.
import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';
import { redact } from './redact.js';

export function createRootLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'message',
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redact(object) as Record<string, unknown>,
      },
      hooks: {
        // Messages are free text and may quote a credential.
        logMethod(args, method) {
          method.apply(
            this,
            args.map((arg) => (typeof arg === 'string' ? (redact(arg) as string) : arg)) as Parameters<
              typeof method
            >,
          );
        },
      },
    },
    destination ?? pino.destination({ sync: false }),
  );
}

/**
 * Nest's start-up narration: the module list (InstanceLoader), the route map (RoutesResolver, RouterExplorer) and
 * "Starting…/started" — over a hundred lines on every start that would push what a person needs (where it listens,
 * where the first key is) off the screen. Logged at debug; the service says once that it listens.
 */
const NEST_START_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

/** Adapter so Nest's internal logs ("Mapped {...} route") are JSON lines of the same logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.write(
      context !== undefined && NEST_START_CONTEXTS.has(context) ? 'debug' : 'info',
      message,
      context,
    );
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }

  private write(
    level: 'info' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    context?: string,
  ): void {
    if (typeof message === 'object' && message !== null) this.logger[level]({ context, ...message });
    else this.logger[level]({ context }, String(message));
  }
}
