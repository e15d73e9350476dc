import { createHash } from 'node:crypto';
import { NOTE_MAX } from '../limits.js';
import type { LogPort } from '../logging/port.js';
import { escapeText } from '../mrkdwn/escape.js';
import { checkIntent, checkNamespace, type Policy } from '../policy/channel-policy.js';
import { redactText } from '../redact/index.js';
import type { AlertGroupRecord, Store } from '../store/index.js';
import { SWEEP_INTENT } from '../triage/route/index.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import type { ThreadMessage } from '../views/limits.js';
import type { DeliverInput, StartSessionInput } from '../workflow/api.js';
import { type AlertGroup, alertGroupId, type NormalizedAlert } from './group.js';
import { type AlertTarget, mapAlertGroup } from './map.js';
import { alertNotStartedView, alertOverflowView, alertResolvedView, alertRootView, alertUpdateView } from './views.js';

/**
 * The core of alert intake, free of HTTP and of any one sender: a normalized alert group in, at most one session per
 * group out. The first firing notification of a group claims it (one conditional put), posts the thread root in the
 * channel the policy routes it to and starts the session; every later notification of the group posts into that
 * thread, never as a new top-level message; the group's resolution reports the fix to the session, whose fresh
 * triage then judges it. Like a Slack request, a notification only validates, writes, posts and starts: the
 * diagnosis runs in the workflow.
 */

interface AlertPoster {
  post(channelId: string, threadTs: string | undefined, message: ThreadMessage): Promise<{ ts: string }>;
}

export interface AlertHandlerDeps {
  store: Pick<Store, 'alertGroups' | 'sessions' | 'dedupe'>;
  policy: Policy;
  templates: TemplateRegistry;
  slack: AlertPoster;
  workflow: {
    startSession(input: StartSessionInput): Promise<{ sessionId: string }>;
    deliverInput(input: DeliverInput): Promise<unknown>;
  };
  /**
   * At most this many alert-opened sessions are open at once; past it, new groups are listed in one overflow thread
   * per source and channel instead of each opening a thread and a triage (a storm must not take the stack down).
   */
  maxOpenAlertSessions?: number;
  /** The clusters calmops has a kubeconfig for: an alert's `cluster` label must name one of them. */
  clusters?: readonly string[];
  /** Who alert sessions are requested by: the bot's own Slack user, so every view names a real user. */
  requester(): Promise<string>;
  now(): Date;
  logger?: LogPort;
  /** Waits between looks at a group another delivery is opening (a plain timer unless a test replaces it). */
  sleep?(ms: number): Promise<void>;
  /** How long a delivery waits for another one to finish opening the same group before asking to be retried. */
  waitForOpeningMs?: number;
  /** Identical notifications within this window are the sender's retries or its HA twin's: handled once. */
  duplicateWindowSeconds?: number;
}

export type AlertOutcome =
  | {
      outcome: 'opened';
      sessionId: string;
      channelId: string;
      threadTs: string;
      intent: string;
      namespace?: string;
      cluster: string;
    }
  | { outcome: 'updated'; sessionId: string; channelId: string; threadTs: string }
  | { outcome: 'validating'; sessionId: string; channelId: string; threadTs: string }
  | { outcome: 'duplicate' }
  /** Over the cap on open alert sessions: listed in the overflow thread, no session opened. */
  | { outcome: 'overflow'; channelId: string; threadTs: string }
  | { outcome: 'ignored'; reason: string }
  /** Not something a retry can change: the policy takes no alerts, or the channel runs no intent that fits. */
  | { outcome: 'refused'; reason: string; notified: boolean }
  /** Worth retrying: another delivery is still opening the group, or the session could not be started. */
  | { outcome: 'retry'; reason: string; retryAfterSeconds: number };

const POLL_MS = 200;
const RETRY_AFTER_SECONDS = 5;
/**
 * How long a delivery's hold on a notification and on its group lasts before another may finish its work: opening
 * takes a post and a few writes, so a hold this old belongs to a delivery that died. Until then, repeats are asked
 * to come again (503), never told they are duplicates.
 */
const OPENING_LEASE_SECONDS = 15;
/** Well above an ordinary burst (a few dozen groups after a node or a zone goes down). */
const DEFAULT_MAX_OPEN_ALERT_SESSIONS = 150;

/**
 * Lists a group in its source's overflow thread in the channel, opening that thread once (a claim on a group of its
 * own, bound to the thread rather than to a session).
 */
async function overflow(
  deps: AlertHandlerDeps,
  group: AlertGroup,
  channelId: string,
  cap: number,
): Promise<AlertOutcome> {
  const overflowId = alertGroupId({ source: group.source, key: `calmops-overflow:${channelId}`, commonLabels: {} });
  for (let attempt = 0; attempt < 3; attempt++) {
    const record = await deps.store.alertGroups.get(overflowId);
    if (record?.phase === 'bound' && record.threadTs !== undefined) {
      await deps.slack.post(channelId, record.threadTs, alertUpdateView(group));
      return { outcome: 'overflow', channelId, threadTs: record.threadTs };
    }
    const claim = await deps.store.alertGroups.claim(
      { groupId: overflowId, source: group.source, groupKey: 'calmops-overflow', channelId },
      { now: deps.now(), leaseSeconds: OPENING_LEASE_SECONDS },
    );
    if (!claim.claimed) continue;
    const root = await deps.slack.post(channelId, undefined, alertOverflowView(group.source, cap));
    await deps.store.alertGroups.bind(claim.record, { sessionId: 'overflow', threadTs: root.ts }, deps.now());
    await deps.slack.post(channelId, root.ts, alertUpdateView(group));
    return { outcome: 'overflow', channelId, threadTs: root.ts };
  }
  return { outcome: 'retry', reason: 'the overflow thread is being opened', retryAfterSeconds: RETRY_AFTER_SECONDS };
}

/** The alert's own words, as the session's request text: what locating a namespace and breaking ties read. */
function sessionText(alert: NormalizedAlert): string {
  const words = [alert.annotations['summary'], alert.annotations['description'] ?? alert.annotations['message']]
    .filter((p): p is string => p !== undefined && p !== '')
    .join(' ');
  const text = words === '' ? alert.name : `${alert.name}: ${words}`;
  return redactText(text.replace(/\s+/g, ' ')).slice(0, NOTE_MAX);
}

/** What makes two notifications the same one: status, and each alert's identity, state and times. */
function notificationDigest(group: AlertGroup): string {
  const alerts = group.alerts
    .map((a) => `${a.fingerprint}|${a.status}|${a.startsAt}|${a.endsAt ?? ''}`)
    .sort()
    .join('\n');
  return createHash('sha256').update(`${group.status}\n${group.truncated}\n${alerts}`).digest('hex').slice(0, 32);
}

async function openSessionOf(
  deps: AlertHandlerDeps,
  record: AlertGroupRecord | undefined,
): Promise<{ sessionId: string; threadTs: string; channelId: string } | undefined> {
  if (record?.phase !== 'bound' || record.sessionId === undefined || record.threadTs === undefined) return undefined;
  const session = await deps.store.sessions.get(record.sessionId);
  if (session?.status !== 'open') return undefined;
  return { sessionId: session.id, threadTs: record.threadTs, channelId: record.channelId };
}

/** The intent the channel runs for this alert: the mapped one, else the sweep, else none. */
function allowedIntent(policy: Policy, channelId: string, intent: string): string | undefined {
  const channel = policy.forChannel(channelId);
  if (channel === undefined) return undefined;
  if (checkIntent(channel, intent).allowed) return intent;
  return checkIntent(channel, SWEEP_INTENT).allowed ? SWEEP_INTENT : undefined;
}

/**
 * Why an alert cannot open a session in its channel, said without reading anything: its namespace is outside the
 * channel's namespaces, or its `cluster` label names a cluster calmops has no kubeconfig for.
 */
function alertRefusal(
  deps: AlertHandlerDeps,
  channel: NonNullable<ReturnType<Policy['forChannel']>>,
  target: AlertTarget,
): string | undefined {
  if (target.cluster !== undefined && deps.clusters !== undefined && !deps.clusters.includes(target.cluster)) {
    const known = deps.clusters.map((c) => `\`${c}\``).join(', ') || 'none';
    return `its \`cluster\` label names \`${escapeText(target.cluster.slice(0, 128))}\`, which is not a cluster calmops is configured for (configured: ${known}); nothing was read.`;
  }
  if (target.namespace !== undefined) {
    const decision = checkNamespace(channel, target.namespace);
    if (!decision.allowed) return decision.reason;
  }
  return undefined;
}

type Channel = NonNullable<ReturnType<AlertHandlerDeps['policy']['forChannel']>>;

/** Why this channel does not open a session for the alert (said in the channel when it can be); its policy otherwise. */
async function refuseOpening(
  deps: AlertHandlerDeps,
  target: AlertTarget,
  claim: AlertGroupRecord,
): Promise<AlertOutcome | { channel: Channel; intent: NonNullable<ReturnType<typeof allowedIntent>> }> {
  const channelId = claim.channelId;
  const channel = deps.policy.forChannel(channelId);
  const intent = allowedIntent(deps.policy, channelId, target.intent);
  if (channel === undefined) {
    await deps.store.alertGroups.release(claim);
    return { outcome: 'refused', reason: `channel ${channelId} has no channel policy`, notified: false };
  }
  if (intent === undefined) {
    await deps.store.alertGroups.release(claim);
    const reason = `this channel runs neither \`${target.intent}\` nor \`${SWEEP_INTENT}\` (the channel policy's allowedIntents).`;
    // Said in the channel the alert was routed to: an alert is never dropped without a word.
    await deps.slack.post(
      channelId,
      undefined,
      alertNotStartedView(`${escapeText(target.alert.name) || 'an alert'}: ${reason}`),
    );
    return { outcome: 'refused', reason, notified: true };
  }
  const refusal = alertRefusal(deps, channel, target);
  if (refusal !== undefined) {
    await deps.store.alertGroups.release(claim);
    await deps.slack.post(
      channelId,
      undefined,
      alertNotStartedView(`${escapeText(target.alert.name) || 'an alert'}: ${refusal}`),
    );
    return { outcome: 'refused', reason: refusal, notified: true };
  }
  return { channel, intent };
}

/** The thread's root message: the one an interrupted opening already posted, or a new one. */
async function threadRoot(
  deps: AlertHandlerDeps,
  claim: AlertGroupRecord,
  view: Parameters<typeof alertRootView>[0],
): Promise<string> {
  const channelId = claim.channelId;
  let threadTs: string;
  // A takeover of an interrupted opening uses the root it posted: one thread per group, even across a crash.
  if (claim.rootTs !== undefined) threadTs = claim.rootTs;
  else {
    const root = await deps.slack.post(channelId, undefined, alertRootView(view));
    if (root.ts === '') throw new Error('Slack did not return the thread message');
    threadTs = root.ts;
    await deps.store.alertGroups.noteRoot(claim, threadTs);
  }
  return threadTs;
}

/** Starts the alert's session in its thread; when the workflow does not accept it, says so there before failing. */
async function startAlertSession(
  deps: AlertHandlerDeps,
  claim: AlertGroupRecord,
  opening: {
    threadTs: string;
    requester: string;
    target: AlertTarget;
    intent: NonNullable<ReturnType<typeof allowedIntent>>;
    cluster: string;
    channel: Channel;
  },
): Promise<string> {
  const channelId = claim.channelId;
  const { threadTs, requester, target, intent, cluster, channel } = opening;
  let sessionId: string;
  try {
    ({ sessionId } = await deps.workflow.startSession({
      // The claim's planned id: starting again after a crash completes that session instead of opening another.
      ...(claim.plannedSessionId === undefined ? {} : { id: claim.plannedSessionId }),
      channelId,
      threadTs,
      requester,
      text: sessionText(target.alert),
      intent,
      ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
      cluster,
      scope: [...channel.scope.namespaces],
    }));
  } catch (error) {
    await deps.slack
      .post(
        channelId,
        threadTs,
        alertNotStartedView('the workflow did not accept it. The alert will be delivered again and retried.'),
      )
      .catch(() => undefined);
    throw error;
  }
  return sessionId;
}

async function open(
  deps: AlertHandlerDeps,
  group: AlertGroup,
  target: AlertTarget,
  claim: AlertGroupRecord,
): Promise<AlertOutcome> {
  const logger = deps.logger;
  const channelId = claim.channelId;
  const allowed = await refuseOpening(deps, target, claim);
  if ('outcome' in allowed) return allowed;
  const { channel, intent } = allowed;
  const cap = deps.maxOpenAlertSessions ?? DEFAULT_MAX_OPEN_ALERT_SESSIONS;
  if (claim.plannedSessionId === undefined || (await deps.store.sessions.get(claim.plannedSessionId)) === undefined) {
    const requester = await deps.requester();
    if ((await deps.store.sessions.countOpenByRequester(requester, cap)) >= cap) {
      await deps.store.alertGroups.release(claim);
      return overflow(deps, group, channelId, cap);
    }
  }
  const cluster = target.cluster ?? channel.cluster;
  const chosen = { ...target, intent };
  let threadTs: string;
  try {
    const requester = await deps.requester();
    threadTs = await threadRoot(deps, claim, { group, target: chosen, cluster });
    const sessionId = await startAlertSession(deps, claim, { threadTs, requester, target, intent, cluster, channel });
    // The session runs from here on: a failed bind is logged, never turned into a retry that would open a second one.
    const bound = await deps.store.alertGroups
      .bind(claim, { sessionId, threadTs }, deps.now())
      .catch((error: unknown) => {
        logger?.error('an alert session opened but its group could not be bound', {
          sessionId,
          error: (error as Error).message,
        });
        return null;
      });
    // Opening outlived the claim's lease and another delivery took the group over; this session stands on its own.
    if (bound === undefined) logger?.warn('an alert group was taken over while its session opened', { sessionId });
    return {
      outcome: 'opened',
      sessionId,
      channelId,
      threadTs,
      intent,
      ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
      cluster,
    };
  } catch (error) {
    logger?.error('an alert session could not be opened', { channelId, error: (error as Error).message });
    await deps.store.alertGroups.abandon(claim, deps.now()).catch(() => undefined);
    return { outcome: 'retry', reason: 'the session could not be started', retryAfterSeconds: RETRY_AFTER_SECONDS };
  }
}

async function firing(deps: AlertHandlerDeps, group: AlertGroup, groupId: string): Promise<AlertOutcome> {
  const target = mapAlertGroup(group, deps.templates);
  const channelId = deps.policy.alertChannel({
    ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
    ...(target.cluster === undefined ? {} : { cluster: target.cluster }),
    ...(target.severity === undefined ? {} : { severity: target.severity }),
  });
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const waits = Math.ceil((deps.waitForOpeningMs ?? 3000) / POLL_MS);
  // Bounded: every pass either finishes, waits for a live claim, or lost a claim race to a delivery it then sees.
  for (let attempt = 0; attempt <= waits + 3; attempt++) {
    const existing = await deps.store.alertGroups.get(groupId);
    const session = await openSessionOf(deps, existing);
    if (session !== undefined) {
      await deps.slack.post(session.channelId, session.threadTs, alertUpdateView(group));
      return { outcome: 'updated', ...session };
    }
    if (stillOpening(deps, existing)) {
      if (attempt >= waits) {
        return {
          outcome: 'retry',
          reason: 'another delivery of this alert group is still opening its session',
          retryAfterSeconds: RETRY_AFTER_SECONDS,
        };
      }
      await sleep(POLL_MS);
      continue;
    }
    if (channelId === undefined) {
      return { outcome: 'refused', reason: 'the channel policy has no alerts section', notified: false };
    }
    const interrupted = existing?.phase === 'opening' ? existing : undefined;
    const claim = await deps.store.alertGroups.claim(
      { groupId, source: group.source, groupKey: group.key, channelId },
      {
        now: deps.now(),
        leaseSeconds: OPENING_LEASE_SECONDS,
        ...(existing?.phase === 'bound' && existing.sessionId !== undefined ? { replacing: existing.sessionId } : {}),
        // What a delivery that died while opening had done: its session id and its thread root, to finish with.
        ...(interrupted === undefined
          ? {}
          : {
              inherit: {
                ...(interrupted.plannedSessionId === undefined
                  ? {}
                  : { plannedSessionId: interrupted.plannedSessionId }),
                ...(interrupted.rootTs === undefined || interrupted.channelId !== channelId
                  ? {}
                  : { rootTs: interrupted.rootTs }),
              },
            }),
      },
    );
    // Lost the race: the next look finds the winner's claim (and waits for it) or its session.
    if (!claim.claimed) continue;
    return open(deps, group, target, claim.record);
  }
  return {
    outcome: 'retry',
    reason: 'the alert group kept changing while this delivery tried to open it',
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  };
}

/** A delivery holds a live claim on the group and has not bound its session yet. */
function stillOpening(deps: AlertHandlerDeps, record: AlertGroupRecord | undefined): boolean {
  return record?.phase === 'opening' && (record.leaseUntil ?? '') > deps.now().toISOString();
}

async function resolved(deps: AlertHandlerDeps, group: AlertGroup, groupId: string): Promise<AlertOutcome> {
  const existing = await deps.store.alertGroups.get(groupId);
  const session = await openSessionOf(deps, existing);
  if (session === undefined) {
    // A sender says "resolved" once: dropped now, the session being opened would never hear it.
    if (stillOpening(deps, existing)) {
      return {
        outcome: 'retry',
        reason: 'the session of this alert group is still being opened',
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      };
    }
    return { outcome: 'ignored', reason: 'no open session for this alert group' };
  }
  await deps.slack.post(session.channelId, session.threadTs, alertResolvedView(group));
  // The same as a person saying "resolved" in the thread: the workflow re-triages and judges the fix.
  await deps.workflow.deliverInput({
    sessionId: session.sessionId,
    userId: await deps.requester(),
    text: 'resolved',
    source: 'message',
    action: { type: 'resolved' },
    messageKey: `alert:${groupId}:resolved:${notificationDigest(group)}`,
  });
  return { outcome: 'validating', ...session };
}

/** Handles one notification of an alert group. */
export async function handleAlertGroup(deps: AlertHandlerDeps, group: AlertGroup): Promise<AlertOutcome> {
  const groupId = alertGroupId(group);
  const dedupeKey = `alert:${groupId}:${notificationDigest(group)}`;
  const claim = await deps.store.dedupe.claim(dedupeKey, {
    ttlSeconds: deps.duplicateWindowSeconds ?? 60,
    leaseSeconds: OPENING_LEASE_SECONDS,
    now: deps.now(),
  });
  if (claim === undefined) {
    // Held but not finished: its delivery may have died, so the sender must keep trying until one finishes.
    if (await deps.store.dedupe.isPending(dedupeKey, deps.now())) {
      return {
        outcome: 'retry',
        reason: 'an earlier delivery of this notification is still being handled',
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      };
    }
    return { outcome: 'duplicate' };
  }
  try {
    const outcome =
      group.status === 'resolved' ? await resolved(deps, group, groupId) : await firing(deps, group, groupId);
    // Only a notification that was handled is remembered; one to be retried must get through next time.
    if (outcome.outcome === 'retry') await deps.store.dedupe.release(claim);
    else await deps.store.dedupe.finish(claim);
    return outcome;
  } catch (error) {
    await deps.store.dedupe.release(claim).catch(() => undefined);
    throw error;
  }
}
