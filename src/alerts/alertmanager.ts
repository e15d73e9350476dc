import * as z from 'zod';
import { ID_MAX } from '../limits.js';
import type { AlertGroup, NormalizedAlert } from './group.js';
import { safeLink } from './safe-link.js';

/**
 * Alertmanager's webhook notification, version 4 (`notify/webhook` in prometheus/alertmanager): the template data
 * (receiver, status, alerts, group and common labels and annotations, external URL) plus the protocol version, the
 * group key and how many alerts `max_alerts` left out. Unknown fields are ignored, so a newer Alertmanager that adds
 * one still gets through; a missing or mistyped field is refused with its path.
 */

const LabelSet = z.record(z.string(), z.string());
/** Go's RFC 3339 with nanoseconds, in UTC or with the sender's offset. */
const Timestamp = z.iso.datetime({ offset: true });

/** Go's zero time: what Alertmanager sends as `endsAt` for an alert that has no end yet. */
const ZERO_TIME = /^0001-01-01T00:00:00(?:\.0+)?(?:Z|[+-]00:00)$/;

const AlertmanagerAlertSchema = z.object({
  status: z.enum(['firing', 'resolved']),
  labels: LabelSet,
  annotations: LabelSet,
  startsAt: Timestamp,
  endsAt: Timestamp,
  generatorURL: z.string(),
  fingerprint: z.string().min(1).max(ID_MAX),
});
type AlertmanagerAlert = z.infer<typeof AlertmanagerAlertSchema>;

export const AlertmanagerWebhookSchema = z.object({
  version: z.literal('4'),
  groupKey: z.string().min(1).max(4096),
  truncatedAlerts: z.number().int().min(0).default(0),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string(),
  groupLabels: LabelSet,
  commonLabels: LabelSet,
  commonAnnotations: LabelSet,
  externalURL: z.string(),
  alerts: z.array(AlertmanagerAlertSchema).min(1),
});
export type AlertmanagerWebhook = z.infer<typeof AlertmanagerWebhookSchema>;

const ALERTMANAGER_SOURCE = 'alertmanager';

/** A link fit to show: http(s) only, and without credentials (safe-link.ts). */
function httpUrl(value: string): string | undefined {
  return /^https?:\/\/\S+$/i.test(value) ? safeLink(value) : undefined;
}

function normalizeAlert(alert: AlertmanagerAlert): NormalizedAlert {
  const url = httpUrl(alert.generatorURL);
  return {
    name: alert.labels['alertname'] ?? '',
    status: alert.status,
    labels: alert.labels,
    annotations: alert.annotations,
    startsAt: alert.startsAt,
    ...(ZERO_TIME.test(alert.endsAt) || alert.status === 'firing' ? {} : { endsAt: alert.endsAt }),
    fingerprint: alert.fingerprint,
    ...(url === undefined ? {} : { url }),
  };
}

/** The Alertmanager adapter: a validated notification as the handler takes it. */
export function fromAlertmanager(body: AlertmanagerWebhook): AlertGroup {
  const link = httpUrl(body.externalURL);
  return {
    source: ALERTMANAGER_SOURCE,
    key: body.groupKey,
    status: body.status,
    alerts: body.alerts.map(normalizeAlert),
    commonLabels: body.commonLabels,
    truncated: body.truncatedAlerts,
    ...(link === undefined ? {} : { link }),
  };
}

/** One problem of a refused body, located the way zod reports it (`alerts.0.startsAt`). */
/** The first few problems of a body that failed its schema, each with where it is, for the sender's 400. */
export function bodyIssues(error: z.ZodError): BodyIssue[] {
  return error.issues.slice(0, 10).map((i) => ({
    path: i.path.length > 0 ? i.path.map(String).join('.') : '(root)',
    message: i.message,
  }));
}

export interface BodyIssue {
  path: string;
  message: string;
}

export type ParsedNotification = { ok: true; group: AlertGroup } | { ok: false; issues: BodyIssue[] };

/** Parses the raw request body: JSON first, then the schema. */
export function parseAlertmanagerBody(raw: string): ParsedNotification {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, issues: [{ path: '(body)', message: 'not JSON' }] };
  }
  const parsed = AlertmanagerWebhookSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      issues: bodyIssues(parsed.error),
    };
  }
  return { ok: true, group: fromAlertmanager(parsed.data) };
}
