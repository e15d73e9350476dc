import { signedHeaders } from './sign.js';

/** How the app answered one signed request, as Slack would observe it. */
export interface BotAnswer {
  /** HTTP status, or 0 when Slack would have given up (timeout, connection refused). */
  status: number;
  contentType: string;
  body: string;
  /** Set when there was no usable answer: `operation_timeout` or `dispatch_failed`, Slack's own error names. */
  failure?: 'operation_timeout' | 'dispatch_failed';
}

export interface BotClientOptions {
  /** The app's request URL, e.g. `http://127.0.0.1:3000/slack/events`; a function when known only later. */
  url: string | (() => string);
  signingSecret: string;
  /** Slack gives up after 3 s. */
  timeoutMs?: number;
  /** Extra headers on every request, e.g. `x-slack-retry-num` to replay a retry. */
  headers?: Record<string, string>;
}

export type BotClient = (
  body: string,
  contentType: 'application/json' | 'application/x-www-form-urlencoded',
  extraHeaders?: Record<string, string>,
) => Promise<BotAnswer>;

/** Sends a body to the app the way Slack does: signed with the signing secret, over HTTP, with Slack's timeout. */
export function createBotClient(options: BotClientOptions): BotClient {
  const timeoutMs = options.timeoutMs ?? 3000;
  return async (body, contentType, extraHeaders = {}) => {
    const url = typeof options.url === 'function' ? options.url() : options.url;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...signedHeaders(options.signingSecret, body, contentType), ...options.headers, ...extraHeaders },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return {
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        body: await response.text(),
      };
    } catch (error) {
      const name = (error as Error).name;
      const failure = name === 'TimeoutError' || name === 'AbortError' ? 'operation_timeout' : 'dispatch_failed';
      return { status: 0, contentType: '', body: '', failure };
    }
  };
}

/** Slack's name for an unusable answer to a slash command or interaction. */
export function failureName(answer: BotAnswer): string | undefined {
  if (answer.failure !== undefined) return answer.failure;
  if (answer.status >= 500) return 'http_service_error';
  if (answer.status >= 300) return 'http_client_error';
  return undefined;
}
