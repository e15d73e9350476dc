import * as z from 'zod';

/**
 * The ids and limits every boundary checks, each named once: the Slack handlers, the workflow's payloads, the store's
 * records, the plans and the views read them from here, so a bound cannot differ between the place that writes a
 * value and the place that reads it back. This file imports nothing of calmops, so every folder may import it.
 */

/**
 * The longest id calmops keeps: a session, approval or request id, a Slack id or message ts, an intent, a kind or a
 * code. It keeps DynamoDB keys well below their 2 KB and a session id usable as a Step Functions execution name
 * (at most 80 characters).
 */
export const ID_MAX = 64;

const ID_CHARS = '[A-Za-z0-9._:-]';

/**
 * An id that may stand inside a DynamoDB key or an execution name: letters, digits and `. _ : -` (`#` separates key
 * parts). Session, approval and break-glass request ids are all of this form.
 */
const ID_PATTERN = new RegExp(`^${ID_CHARS}{1,${ID_MAX}}$`);

/** Whether a value taken from a button or a command can be an id calmops stored, before the store is asked. */
export function isStoredId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** A session id: the key of a session's items and the name of its execution. */
export const SessionId = z.string().regex(ID_PATTERN, 'a session id');

/** One part of a DynamoDB key (`SESSION#<id>`), with a message naming what is refused. */
export const KeyPart = z
  .string()
  .min(1)
  .max(ID_MAX)
  .regex(new RegExp(`^${ID_CHARS}+$`), 'only letters, digits and . _ : - are allowed');

/**
 * A Slack user, channel or team id (`U0123ABCD`, `C0123ABCD`, `T0123ABCD`), or `calmops` and `system` where the
 * product itself acted.
 */
export const SlackId = z.string().min(1).max(ID_MAX);

/** A Slack message timestamp (`1712345678.123456`), which is also a thread's id in its channel. */
export const SlackTs = z.string().min(1).max(ID_MAX);

/** An id calmops mints for a record it keeps: an approval, a break-glass request, a hypothesis, a write, a memory. */
export const RecordId = z.string().min(1).max(ID_MAX);

/**
 * A word of the product's own vocabulary: an intent id, a kind of event, approval or wait, a finding code, the
 * source of a session.
 */
export const Code = z.string().min(1).max(ID_MAX);

/** The longest Kubernetes object name (an RFC 1123 subdomain). */
export const KUBE_NAME_MAX = 253;

/** An RFC 1123 label, its length included: a namespace, and a cluster name in the channel policy. */
export const KUBE_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const KUBE_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A name kubectl accepts for an object (and nothing a shell would act on). */
export function isKubeName(name: string): boolean {
  return name.length <= KUBE_NAME_MAX && KUBE_SUBDOMAIN.test(name);
}

/** A name the API server accepts for a namespace or a container (an RFC 1123 label). */
export function isKubeLabel(name: string): boolean {
  return KUBE_LABEL_PATTERN.test(name);
}

/**
 * The name or namespace of an object as a record keeps it: bounded by the longest object name, not checked further
 * (the cluster refuses what it would not hold).
 */
export const KubeName = z.string().min(1).max(KUBE_NAME_MAX);

/**
 * What a person writes for calmops to keep: a reviewer's note or a decision's reason, a break-glass change, a
 * thread message that starts a session. Slack's text inputs in the modals are capped to it.
 */
export const NOTE_MAX = 2000;

export const NoteText = z.string().max(NOTE_MAX);

/**
 * What calmops writes into a record for people to read: a timeline event's or an approval's summary, a hypothesis's
 * statement, a command run or proposed, the reason a step gives.
 */
export const SUMMARY_MAX = 2000;

export const SummaryText = z.string().max(SUMMARY_MAX);

/**
 * Evidence strings an analyzer gives one finding, and items of one kind (pods, events, names) it lists in one
 * evidence string; the workflow records as many per finding (docs/analyzers.md: compact and clean).
 */
export const EVIDENCE_PER_FINDING = 5;

/**
 * Evidence strings a finding keeps in the triage envelope: one more than an analyzer gives, so a finding folded from
 * several (the replicas of one workload, duplicates of one fault) keeps a line of its own (docs/triage.md).
 */
export const ENVELOPE_EVIDENCE_PER_FINDING = EVIDENCE_PER_FINDING + 1;

/** The longest evidence string, and the longest message a finding shows in the envelope. */
export const EVIDENCE_TEXT_MAX = 300;

/** Specialist handoffs one session may ask for; the next request is answered with the limit. */
export const MAX_HANDOFFS = 3;

/** `text` cut to at most `max` characters, the cut marked with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `text` on one line (runs of white space made one space) and clipped to `max`. */
export function clipLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}
