import { UsageError } from './errors.js';

/** The environment variable that fixes a Binnacle process's log level, and the levels it takes. */
export const LOG_LEVEL_ENV = 'BINNACLE_LOG_LEVEL';
export const LOG_LEVEL_CHOICES = ['error', 'warn', 'info', 'debug', 'trace'] as const;

export type LogLevelChoice = (typeof LOG_LEVEL_CHOICES)[number];

/** A level from the environment, checked: pino would throw its own "unknown level" deep in a command instead. */
export function envLogLevel(value: string): LogLevelChoice {
  const level = LOG_LEVEL_CHOICES.find((l) => l === value);
  if (level === undefined) throw new UsageError(`${LOG_LEVEL_ENV}: "${value}" is not a log level; it takes one of ${LOG_LEVEL_CHOICES.join(', ')}`);
  return level;
}
