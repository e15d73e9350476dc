import type { BodyIssue } from '../alerts/alertmanager.js';
import { parseAlarmStateChange } from '../alerts/cloudwatch.js';
import type { AlertHandlerDeps, AlertOutcome } from '../alerts/handler.js';
import { handleAlertGroup } from '../alerts/handler.js';
import { createAlertsHttpHandler, type RoutedHttpHandler } from '../alerts/http.js';
import { ConfigError, loadConfig, resolveAlertsToken } from '../config.js';
import { ENV } from '../env-names.js';
import type { SlackAppDeps } from '../slack/deps.js';
import { webClientPoster } from './thread-poster.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The alert route's dependencies, built over the Slack function's own (its store, Slack client, channel policy,
 * templates and workflow), so an alert session is started exactly as `/triage` starts one. The alert token's
 * configuration is read here, apart from Slack's: a mistake in it fails the alert route, never the Slack one.
 */
export function createAlertsRoute(env: Env, slack: SlackAppDeps): RoutedHttpHandler {
  const config = loadConfig(env, ['alerts']);
  const handlerDeps = alertHandlerDeps(slack, configuredClusters(env), alertSessionCap(env));
  return createAlertsHttpHandler({
    token: () => resolveAlertsToken(config.alerts),
    handle: (group) => handleAlertGroup(handlerDeps(), group),
    ...(slack.logger === undefined ? {} : { logger: slack.logger }),
  });
}

/** The handler's dependencies over the Slack function's, read again per notification (the policy can change). */
/** The cap on open alert-opened sessions, when set; a value that is not a positive whole number is refused. */
function alertSessionCap(env: Env): number | undefined {
  const raw = env[ENV.alertSessionCap]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const cap = Number(raw);
  if (!Number.isSafeInteger(cap) || cap < 1) {
    throw new ConfigError([
      `${ENV.alertSessionCap}: must be a positive whole number, got ${JSON.stringify(raw.slice(0, 20))}`,
    ]);
  }
  return cap;
}

function alertHandlerDeps(
  slack: SlackAppDeps,
  clusters?: readonly string[],
  maxOpenAlertSessions?: number,
): () => AlertHandlerDeps {
  let botUser: Promise<string> | undefined;
  const requester = (): Promise<string> => {
    if (slack.botUserId !== undefined) return Promise.resolve(slack.botUserId);
    botUser ??= slack.client.auth
      .test()
      .then((r) => {
        if (r.user_id === undefined) throw new Error('auth.test named no bot user');
        return r.user_id;
      })
      .catch((error: unknown) => {
        // Forget the failure so the next alert asks again instead of failing forever.
        botUser = undefined;
        throw error;
      });
    return botUser;
  };
  const poster = webClientPoster(slack.client);
  return (): AlertHandlerDeps => ({
    store: slack.store,
    // Read per notification: the Slack function replaces the policy in force before each request.
    policy: slack.policy,
    templates: slack.registry,
    slack: poster,
    workflow: slack.workflow,
    requester,
    ...(clusters === undefined ? {} : { clusters }),
    ...(maxOpenAlertSessions === undefined ? {} : { maxOpenAlertSessions }),
    now: slack.now ?? (() => new Date()),
    ...(slack.logger === undefined ? {} : { logger: slack.logger }),
  });
}

/**
 * The clusters calmops is configured for, by name: the deploy's list, or the keys of the kubeconfig map where this
 * function has it (the local stack). Undefined when neither is set: then the policy's own clusters are the check.
 */
function configuredClusters(env: Env): string[] | undefined {
  const names = env[ENV.clusterNames];
  if (names !== undefined && names.trim() !== '')
    return names
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
  const map = env[ENV.clusters];
  if (map !== undefined) {
    try {
      return Object.keys(JSON.parse(map) as Record<string, unknown>);
    } catch {
      return undefined;
    }
  }
  return env[ENV.kubeconfig] === undefined ? undefined : ['default'];
}

/** What became of one EventBridge event; a `retry` is thrown instead (AlarmEventRetryError), so Lambda retries. */
export type AlarmEventOutcome =
  | Exclude<AlertOutcome, { outcome: 'retry' }>
  | { outcome: 'invalid'; issues: BodyIssue[] };

class AlarmEventRetryError extends Error {
  override readonly name = 'AlarmEventRetryError';
}

export type AlarmEventHandler = (event: unknown) => Promise<AlarmEventOutcome>;

/**
 * CloudWatch alarm state changes, sent by EventBridge (src/alerts/cloudwatch.ts), over the same dependencies as the
 * alert route. EventBridge invokes the function asynchronously and IAM is the authentication, so there is no token;
 * what a retry can fix is thrown, and Lambda delivers the event again.
 */
export function createAlarmEventHandler(slack: SlackAppDeps, env: Env = process.env): AlarmEventHandler {
  const handlerDeps = alertHandlerDeps(slack, configuredClusters(env), alertSessionCap(env));
  const logger = slack.logger;
  return async (event) => {
    const parsed = parseAlarmStateChange(event);
    if (!parsed.ok) {
      // Never retried: the same event would be refused again. The event itself is not logged, only where it failed.
      logger?.warn('refused an EventBridge event: not a CloudWatch alarm state change', {
        issues: parsed.issues.map((i) => i.path),
      });
      return { outcome: 'invalid', issues: parsed.issues };
    }
    if ('ignored' in parsed.reading) {
      logger?.info('alarm state change ignored', { alarmName: parsed.alarmName, reason: parsed.reading.ignored });
      return { outcome: 'ignored', reason: parsed.reading.ignored };
    }
    const outcome = await handleAlertGroup(handlerDeps(), parsed.reading.group);
    logger?.info('alarm state change handled', {
      alarmName: parsed.alarmName,
      outcome: outcome.outcome,
      ...('sessionId' in outcome ? { sessionId: outcome.sessionId } : {}),
    });
    if (outcome.outcome === 'retry') throw new AlarmEventRetryError(`alarm ${parsed.alarmName}: ${outcome.reason}`);
    if (outcome.outcome === 'refused' && !outcome.notified) {
      logger?.error('an alarm was refused and nobody was told', {
        alarmName: parsed.alarmName,
        reason: outcome.reason,
      });
    }
    return outcome;
  };
}
