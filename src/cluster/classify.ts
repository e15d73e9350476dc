import * as z from 'zod';
import { redactText } from '../redact/index.js';
import { ClusterReadError, type ReadFailureReason } from './types.js';

/**
 * Turns every way a read can fail into a `ClusterReadError` with a reason the triage envelope can report as missing
 * evidence. Messages name what was being read and carry the API server's own Status message, with credentials
 * redacted.
 */

const StatusSchema = z.looseObject({
  kind: z.literal('Status'),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
});

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Remove credentials from text meant for humans or logs, and the exact values the client sent. */
export function redactCredentials(text: string, secrets: readonly string[] = []): string {
  return redactText(text, { secrets });
}

export function reasonForStatus(status: number): ReadFailureReason {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  // 429 (throttled) and 5xx are the server's condition, worth retrying later; the request itself was fine.
  if (status === 429 || status >= 500) return 'server-error';
  return 'invalid';
}

const STATUS_WORDS: Record<ReadFailureReason, string> = {
  unauthorized: 'unauthorized: the credentials were rejected',
  forbidden: 'forbidden: the identity may not read this',
  'not-found': 'not found',
  'server-error': 'the API server failed',
  invalid: 'the API server rejected the request',
  unreachable: 'the API server is unreachable',
  timeout: 'timed out',
  'refused-by-policy': 'refused by policy',
};

/** The server's Status message from an error body, if the body is a Status object. */
export function statusMessage(body: string): string | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = StatusSchema.safeParse(raw);
  return parsed.success ? parsed.data.message : undefined;
}

export function httpFailure(
  verb: string,
  describe: string,
  status: number,
  body: string,
  secrets: readonly string[] = [],
): ClusterReadError {
  const reason = reasonForStatus(status);
  const detail = statusMessage(body) ?? body.trim().slice(0, 300);
  const message = `could not ${verb} ${describe}: ${STATUS_WORDS[reason]} (HTTP ${status})${detail ? `: ${detail}` : ''}`;
  return new ClusterReadError(redactCredentials(message, secrets), reason, status);
}

export interface TransportContext {
  verb: string;
  describe: string;
  /** The API server, for messages (userinfo removed by the caller). */
  server: string;
  timeoutMs: number;
  /** Our per-request deadline fired. */
  timedOut: boolean;
  /** The caller's signal fired. */
  cancelled: boolean;
  /** Exact credential values to scrub from messages. */
  secrets: readonly string[];
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code ?? (current as { errno?: unknown }).errno;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Classify a failure that produced no HTTP status: network, TLS, abort, or authentication setup. */
export function transportFailure(error: unknown, ctx: TransportContext): ClusterReadError {
  const what = `could not ${ctx.verb} ${ctx.describe}`;
  const raw = error instanceof Error ? error.message : String(error);
  const detail = redactCredentials(raw, ctx.secrets);
  let reason: ReadFailureReason;
  let message: string;
  const code = errorCode(error);
  if (ctx.timedOut) {
    reason = 'timeout';
    message = `${what}: no answer from ${ctx.server} within ${ctx.timeoutMs} ms`;
  } else if (ctx.cancelled) {
    reason = 'timeout';
    message = `${what}: cancelled by the caller before ${ctx.server} answered`;
  } else if (code !== undefined && TIMEOUT_CODES.has(code)) {
    reason = 'timeout';
    message = `${what}: connection to ${ctx.server} timed out (${code})`;
  } else if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    reason = 'unreachable';
    message = `${what}: cannot reach the API server at ${ctx.server} (${code})`;
  } else if (code !== undefined && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) {
    reason = 'unreachable';
    message = `${what}: TLS with ${ctx.server} failed (${code}); check the kubeconfig's certificate-authority`;
  } else {
    reason = 'unreachable';
    message = `${what}: request to ${ctx.server} failed: ${detail}`;
  }
  return new ClusterReadError(redactCredentials(message, ctx.secrets), reason, undefined, {
    cause: sanitizedCause(error, detail),
  });
}

/** The cause keeps the error's class and code for debugging, but never an unredacted message. */
function sanitizedCause(error: unknown, redactedMessage: string): Error {
  const cause = new Error(redactedMessage);
  cause.name = error instanceof Error ? error.name : 'Error';
  const code = errorCode(error);
  if (code !== undefined) (cause as Error & { code?: string }).code = code;
  return cause;
}
