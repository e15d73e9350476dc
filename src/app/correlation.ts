import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

/**
 * The keys that tie a log line to what it was about: the session, the Step Functions execution, the step, and the
 * Slack event that started the request. Every function's log lines carry the ones its invocation knows, so one
 * CloudWatch Logs Insights filter (`sessionId = "…"`) follows a session across all four functions.
 */
export interface CorrelationKeys {
  sessionId?: string;
  executionArn?: string;
  /** The `step` the invocation runs; named apart from the `step` some lines carry about another step. */
  invocationStep?: string;
  slackEventId?: string;
}

const EXECUTION_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[^\s]{1,200}$/;
const SHORT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function field(source: unknown, key: string, pattern: RegExp): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const value = (source as Record<string, unknown>)[key];
  return typeof value === 'string' && pattern.test(value) ? value : undefined;
}

function defined(keys: CorrelationKeys): Record<string, string> {
  return Object.fromEntries(Object.entries(keys).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/** From a step payload: the state machines pass `sessionId`, and `executionArn` (or `execution`) where a step uses it. */
export function stepCorrelation(event: unknown): CorrelationKeys {
  const executionArn = field(event, 'executionArn', EXECUTION_ARN) ?? field(event, 'execution', EXECUTION_ARN);
  const sessionId = field(event, 'sessionId', SHORT_ID);
  const step = field(event, 'step', SHORT_ID);
  return {
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(executionArn === undefined ? {} : { executionArn }),
    ...(step === undefined ? {} : { invocationStep: step }),
  };
}

/**
 * From a Slack request: the Events API's `event_id` (a JSON body). Slash commands and button clicks carry no event
 * id; their lines are tied together by the Lambda request id instead. The body is not verified yet, so only an id's
 * shape is taken from it, never anything that decides what happens.
 */
export function slackCorrelation(request: { body?: string | null; isBase64Encoded?: boolean }): CorrelationKeys {
  const body = request.body ?? '';
  const text = request.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  if (!text.trimStart().startsWith('{')) return {};
  try {
    const slackEventId = field(JSON.parse(text), 'event_id', /^Ev[A-Z0-9]{4,40}$/);
    return slackEventId === undefined ? {} : { slackEventId };
  } catch {
    return {};
  }
}

/**
 * A logger for one invocation: the function's logger with this invocation's keys and Lambda context. It is a child,
 * so nothing carries over to the next invocation, and invocations that overlap in one process (the local stack runs
 * steps of several executions at once) cannot stamp each other's lines.
 */
export function invocationLogger(base: Logger, keys: CorrelationKeys, context?: Context): Logger {
  const logger = base.createChild();
  logger.appendKeys(defined(keys));
  if (context !== undefined) logger.addContext(context);
  return logger;
}

const scope = new AsyncLocalStorage<Logger>();

/**
 * Runs one invocation with `logger` as the logger that `currentLogger` answers inside it, for code whose logger is
 * wired into objects kept across invocations (the cluster reader keeps its per-cluster clients that way).
 */
export function runWithLogger<T>(logger: Logger, run: () => Promise<T>): Promise<T> {
  return scope.run(logger, run);
}

/** The logger of the invocation this call belongs to (see runWithLogger), or `base` outside any. */
export function currentLogger(base: Logger): Logger {
  return scope.getStore() ?? base;
}

/**
 * For a logger wired into long-lived objects (the Slack app is built once per container): this invocation's keys
 * replace the last one's, and are removed when it ends. Lambda runs one request at a time per container.
 */
export async function withCorrelation<T>(
  logger: Logger,
  keys: CorrelationKeys,
  context: Context | undefined,
  run: () => Promise<T>,
): Promise<T> {
  logger.resetKeys();
  logger.appendKeys(defined(keys));
  if (context !== undefined) logger.addContext(context);
  try {
    return await run();
  } finally {
    logger.resetKeys();
  }
}
