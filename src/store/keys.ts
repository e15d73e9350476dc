import * as z from 'zod';

/**
 * Key layout of the single table. Every PK/SK string is built here and nowhere else, so the layout in
 * docs/store.md and the items on disk cannot disagree.
 */

export interface ItemKey {
  PK: string;
  SK: string;
}

export const GSI1 = 'GSI1';

/** Canonical UTC timestamp, `Date.prototype.toISOString()` form, so string order equals time order. */
export const IsoTimestampSchema = z.iso.datetime({ precision: 3 });

export const META = 'META';

export const keys = {
  session: (sessionId: string): ItemKey => ({ PK: `SESSION#${sessionId}`, SK: META }),
  timelineEvent: (sessionId: string, at: string, seq: number): ItemKey => ({
    PK: `SESSION#${sessionId}`,
    SK: `${TIMELINE_PREFIX}${at}#${formatSeq(seq)}`,
  }),
  inboxMessage: (sessionId: string, messageId: string): ItemKey => ({
    PK: `SESSION#${sessionId}`,
    SK: `${INBOX_PREFIX}${messageId}`,
  }),
  wait: (sessionId: string): ItemKey => ({ PK: `SESSION#${sessionId}`, SK: 'WAIT' }),
  /** Present while the session is open, so GSI1 can list a person's open sessions in every channel. */
  sessionRequester: (sessionId: string, userId: string): ItemKey => ({
    PK: `SESSION#${sessionId}`,
    SK: `REQUESTER#${userId}`,
  }),
  /** Present while the session is open, so GSI1 can list every open session (the reconciler's worklist). */
  sessionOpen: (sessionId: string): ItemKey => ({ PK: `SESSION#${sessionId}`, SK: 'OPEN' }),
  finding: (sessionId: string, findingId: string): ItemKey => ({
    PK: `SESSION#${sessionId}`,
    SK: `${FINDING_PREFIX}${findingId}`,
  }),
  approval: (approvalId: string): ItemKey => ({ PK: `APPROVAL#${approvalId}`, SK: META }),
  /**
   * Present while the approval is pending, so GSI1 can list a session's pending approvals for repairs. It lives in
   * the approval's partition, where a decision already deletes its index entries.
   */
  approvalSession: (approvalId: string): ItemKey => ({ PK: `APPROVAL#${approvalId}`, SK: 'SESSION' }),
  /** One per allowed decider, so GSI1 can list an approver's pending approvals. */
  approvalDecider: (approvalId: string, userId: string): ItemKey => ({
    PK: `APPROVAL#${approvalId}`,
    SK: `DECIDER#${userId}`,
  }),
  thread: (channelId: string, threadTs: string): ItemKey => ({ PK: `THREAD#${channelId}#${threadTs}`, SK: META }),
  memory: (memoryId: string): ItemKey => ({ PK: `MEMORY#${memoryId}`, SK: META }),
  memoryToken: (token: string, memoryId: string): ItemKey => ({ PK: `TOKEN#${token}`, SK: `MEMORY#${memoryId}` }),
  dedupe: (key: string): ItemKey => ({ PK: `DEDUPE#${key}`, SK: META }),
  /** A modal calmops opened, by Slack's view id; submissions are checked against it. */
  modal: (viewId: string): ItemKey => ({ PK: `MODAL#${viewId}`, SK: META }),
  /** An alert group and the session it opened, by a digest of the group's identity. */
  alertGroup: (groupId: string): ItemKey => ({ PK: `ALERTGROUP#${groupId}`, SK: META }),
} as const;

export const SESSION_PK_PREFIX = 'SESSION#';
export const TIMELINE_PREFIX = 'EVENT#';
export const INBOX_PREFIX = 'INBOX#';
export const FINDING_PREFIX = 'FINDING#';
export const MEMORY_SK_PREFIX = 'MEMORY#';

/** GSI1 partition values; each names one list the product shows. */
export const gsi1 = {
  openSessionsInChannel: (channelId: string): string => `CHANNEL#${channelId}#OPEN`,
  openSessionsOfRequester: (userId: string): string => `REQUESTER#${userId}#OPEN`,
  sessionsWithStatus: (status: 'resolved' | 'closed'): string => `SESSIONS#${status.toUpperCase()}`,
  openSessions: (): string => 'SESSIONS#OPEN',
  approvalsForApprover: (userId: string): string => `APPROVER#${userId}`,
  pendingApprovalsOfSession: (sessionId: string): string => `SESSION#${sessionId}#PENDING`,
} as const;

/** Sequence numbers are zero padded so that lexical SK order is numeric order. */
export function formatSeq(seq: number): string {
  return seq.toString().padStart(6, '0');
}

/** Parses `EVENT#<iso>#<seq>` back into its parts; undefined when the SK is not a timeline key. */
export function parseTimelineSk(sk: string): { at: string; seq: number } | undefined {
  if (!sk.startsWith(TIMELINE_PREFIX)) return undefined;
  const rest = sk.slice(TIMELINE_PREFIX.length);
  const hash = rest.lastIndexOf('#');
  if (hash < 0) return undefined;
  const seq = Number(rest.slice(hash + 1));
  if (!Number.isInteger(seq)) return undefined;
  return { at: rest.slice(0, hash), seq };
}

/** Seconds since the epoch for the TTL attribute, rounded up so an item is never swept before it expires. */
export function toEpochSeconds(at: Date | string): number {
  const ms = typeof at === 'string' ? Date.parse(at) : at.getTime();
  return Math.ceil(ms / 1000);
}

/** Normalizes a Date to the canonical ISO form used in keys and conditions. */
export function toIso(at: Date): string {
  if (Number.isNaN(at.getTime())) throw new RangeError('Invalid date');
  return at.toISOString();
}
