/**
 * The logger every module writes to, as a port: Powertools' Logger satisfies it in the functions, a silent or
 * capturing one in tests and the command line. Modules ask for the levels they use (`Pick<LogPort, 'warn'>`).
 */
export interface LogPort {
  debug(message: string, detail?: Record<string, unknown>): void;
  info(message: string, detail?: Record<string, unknown>): void;
  warn(message: string, detail?: Record<string, unknown>): void;
  error(message: string, detail?: Record<string, unknown>): void;
}
