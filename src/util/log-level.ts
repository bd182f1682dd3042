/** The environment variable that fixes a Binnacle process's log level, and the levels it takes. */
export const LOG_LEVEL_ENV = 'BINNACLE_LOG_LEVEL';
export const LOG_LEVEL_CHOICES = ['error', 'warn', 'info', 'debug', 'trace'] as const;
