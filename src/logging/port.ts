/**
 * The logger every module writes to, as a port: Powertools' Logger behind it in the functions (src/app/log-port.ts),
 * a silent or capturing one in tests and the command line. Modules ask for the levels they use
 * (`Pick<LogPort, 'warn'>`).
 */
export interface LogPort {
  debug(message: string, detail?: Record<string, unknown>): void;
  info(message: string, detail?: Record<string, unknown>): void;
  warn(message: string, detail?: Record<string, unknown>): void;
  error(message: string, detail?: Record<string, unknown>): void;
}

/** Writes nothing: tests, benchmarks and callers that log elsewhere. */
export const silentLogger: LogPort = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** One JSON line per entry, for CloudWatch; never passed tokens or message bodies. */
export const jsonLogger: LogPort = {
  debug: () => {},
  info: (message, detail) => console.log(JSON.stringify({ level: 'info', message, ...detail })),
  warn: (message, detail) => console.warn(JSON.stringify({ level: 'warn', message, ...detail })),
  error: (message, detail) => console.error(JSON.stringify({ level: 'error', message, ...detail })),
};
