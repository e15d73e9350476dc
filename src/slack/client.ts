import { LogLevel, WebClient } from '@slack/web-api';

export interface SlackClientOptions {
  /** The bot token (xoxb-…). Never logged. */
  token: string;
  /** Web API base URL; the local stand-in's `…/api/` in tests and `npm start`, Slack's own otherwise. */
  slackApiUrl?: string;
  /** Per request; kept short because every caller runs inside a Lambda with a deadline. */
  timeoutMs?: number;
  /** Retries on network errors and rate limits. */
  retries?: number;
}

/**
 * The Web API client every calmops function posts with. Slack's default is ten retries over many minutes, which
 * would outlive a Step Functions task; a few quick retries, then a clear failure the state machine can report.
 */
export function createSlackClient(options: SlackClientOptions): WebClient {
  return new WebClient(options.token, {
    ...(options.slackApiUrl === undefined ? {} : { slackApiUrl: options.slackApiUrl }),
    timeout: options.timeoutMs ?? 2500,
    retryConfig: { retries: options.retries ?? 2, factor: 1.6, minTimeout: 100, maxTimeout: 1000, randomize: true },
    logLevel: LogLevel.ERROR,
    // A rate-limited call fails fast instead of sleeping for Retry-After inside a short-lived function.
    rejectRateLimitedCalls: true,
  });
}
