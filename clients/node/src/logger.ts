/** Where the client logs; pass your own (pino, winston and console have these methods). */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LEVELS)[number];

/**
 * A logger writing `<time> <LEVEL> sluice: <message>` lines to stderr (never stdout, which belongs
 * to the application) from `level` up. The default is `warn`.
 */
export function stderrLogger(level: LogLevel = 'warn'): Logger {
  const min = LEVELS.indexOf(level);
  const at =
    (l: LogLevel) =>
    (message: string): void => {
      if (LEVELS.indexOf(l) >= min) {
        process.stderr.write(`${new Date().toISOString()} ${l.toUpperCase()} sluice: ${message}\n`);
      }
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
