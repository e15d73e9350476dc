import { App, LogLevel, SocketModeReceiver } from '@slack/bolt';
import type { SlackAppDeps } from '../src/slack/deps.js';
import { registerListeners } from '../src/slack/handlers/index.js';
import { boltLogger } from '../src/slack/receiver.js';

export interface SocketModeOptions {
  /** The app-level token (`xapp-…`) with the `connections:write` scope. */
  appToken: string;
  deps: SlackAppDeps;
}

export interface SocketModeApp {
  stop(): Promise<void>;
}

export class SocketModeError extends Error {
  override readonly name = 'SocketModeError';
}

/**
 * One quick auth.test before connecting: Bolt's own check retries for many minutes, so a wrong token or no route to
 * Slack would otherwise show up only as an endless series of retry warnings.
 */
async function checkBotToken(deps: SlackAppDeps): Promise<void> {
  if (!/^xoxb-/.test(deps.botToken)) throw new SocketModeError('SLACK_BOT_TOKEN must be a bot token (xoxb-…)');
  try {
    await deps.client.auth.test();
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    throw new SocketModeError(
      code === undefined
        ? `cannot reach Slack to check SLACK_BOT_TOKEN: ${(error as Error).message}`
        : `Slack refused SLACK_BOT_TOKEN: ${code}`,
      { cause: error },
    );
  }
}

/**
 * The same Bolt handlers the Lambda runs, connected to a real Slack workspace over Socket Mode instead of
 * signed HTTP: no public URL is needed, so a laptop can serve a real workspace. Slack delivers the same payloads
 * over the socket, and `ack()` answers there.
 */
export async function startSocketMode(options: SocketModeOptions): Promise<SocketModeApp> {
  if (!/^xapp-/.test(options.appToken)) {
    throw new SocketModeError('SLACK_APP_TOKEN must be an app-level token (xapp-…) with connections:write');
  }
  const { deps } = options;
  await checkBotToken(deps);
  const logger = boltLogger(deps.logger ?? { debug() {}, info() {}, warn() {}, error() {} });
  const receiver = new SocketModeReceiver({ appToken: options.appToken, logger, logLevel: LogLevel.WARN });
  const app = new App({ token: deps.botToken, receiver, logger });
  app.error(async (error) => {
    deps.logger?.error('unhandled error in a Slack handler', { error: error.message, code: error.code });
  });
  registerListeners(app, deps);
  try {
    await app.start();
  } catch (error) {
    throw new SocketModeError(`could not connect to Slack in Socket Mode: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    async stop() {
      await app.stop();
    },
  };
}
