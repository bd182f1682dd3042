import { UsageError } from './errors.js';

/** The environment variable that fixes a Binnacle process's log level, and the levels it takes. */
export const LOG_LEVEL_ENV = 'BINNACLE_LOG_LEVEL';
export const LOG_LEVEL_CHOICES = ['error', 'warn', 'info', 'debug', 'trace'] as const;

/** Every level pino knows, which the environment variable takes (`fatal` and `silent` besides the five). */
const PINO_LEVELS = ['fatal', ...LOG_LEVEL_CHOICES, 'silent'] as const;

/** A level from the environment, checked: pino would throw its own "unknown level" deep in a command instead. */
export function envLogLevel(value: string): (typeof PINO_LEVELS)[number] {
  const level = PINO_LEVELS.find((l) => l === value);
  if (level === undefined) throw new UsageError(`${LOG_LEVEL_ENV}: "${value}" is not a log level; it takes one of ${PINO_LEVELS.join(', ')}`);
  return level;
}
