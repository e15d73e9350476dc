import { createHash } from 'node:crypto';

/**
 * An alert group as calmops handles it, whatever sent it. Each source (Alertmanager today) has an adapter that turns
 * its notification into this shape; the handler knows nothing else about the sender.
 */

type AlertStatus = 'firing' | 'resolved';

export interface NormalizedAlert {
  /** The alert rule's name (Alertmanager's `alertname` label). */
  name: string;
  status: AlertStatus;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  startsAt: string;
  /** When it stopped firing; absent while it fires. */
  endsAt?: string;
  /** The sender's identity of this alert (stable across repeats). */
  fingerprint: string;
  /** A link to the rule or query that fired, when the sender gives one. */
  url?: string;
}

export interface AlertGroup {
  /** Who sent it, e.g. `alertmanager`; part of the group's identity. */
  source: string;
  /** The sender's key for the group: repeats, updates and the resolution of one group carry the same key. */
  key: string;
  /** `resolved` only when every alert of the group is resolved. */
  status: AlertStatus;
  alerts: readonly NormalizedAlert[];
  /** Labels every alert of the group shares. */
  commonLabels: Readonly<Record<string, string>>;
  /** Alerts the sender left out of this notification (Alertmanager's `max_alerts`). */
  truncated: number;
  /** Where people can see the group at the sender (Alertmanager's UI). */
  link?: string;
}

/**
 * The group's identity in the table. Group keys are only unique per sender, and two clusters' Alertmanagers build the
 * same key for the same rule and labels, so the cluster (an external label on every alert) is part of it; the two
 * members of one high-availability pair share it and so share the session.
 */
export function alertGroupId(group: Pick<AlertGroup, 'source' | 'key' | 'commonLabels'>): string {
  const cluster = group.commonLabels['cluster'] ?? '';
  return createHash('sha256').update(`${group.source}\n${cluster}\n${group.key}`).digest('hex');
}

export function firingAlerts(group: AlertGroup): NormalizedAlert[] {
  return group.alerts.filter((a) => a.status === 'firing');
}
