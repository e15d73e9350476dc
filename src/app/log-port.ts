import type { Logger } from '@aws-lambda-powertools/logger';
import type { LogPort } from '../logging/port.js';

/**
 * The logging port over Powertools' Logger (structured JSON in CloudWatch). Given a function, it asks it on every
 * line, so a port wired into objects kept across invocations writes to the logger of the invocation it runs in.
 */
export function powertoolsLogPort(logger: Logger | (() => Logger)): LogPort {
  const current = typeof logger === 'function' ? logger : () => logger;
  return {
    debug: (message, detail) => current().debug(message, detail ?? {}),
    info: (message, detail) => current().info(message, detail ?? {}),
    warn: (message, detail) => current().warn(message, detail ?? {}),
    error: (message, detail) => current().error(message, detail ?? {}),
  };
}
