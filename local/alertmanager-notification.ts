import { createHash } from 'node:crypto';
import type { AlertmanagerWebhook } from '../src/alerts/alertmanager.js';
import { byCodePoint } from '../src/code-point-order.js';

/**
 * Alertmanager's version 4 webhook notification for one alert group, as Alertmanager 0.2x builds it: the sandbox's
 * sample alerts and the alert tests send what this makes.
 */

export interface NotificationAlert {
  labels: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
  status?: 'firing' | 'resolved';
  startsAt: string;
  /** When it stopped firing; required for a resolved alert. */
  endsAt?: string;
  fingerprint?: string;
  generatorURL?: string;
}

/** What Alertmanager writes as `endsAt` while an alert fires. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The same fingerprint for the same labels, as Alertmanager's (a hash of the sorted label set). */
function fingerprintOf(labels: Readonly<Record<string, string>>): string {
  const text = Object.entries(labels)
    .sort(([a], [b]) => byCodePoint(a, b))
    .map(([k, v]) => `${k}\u0000${v}`)
    .join('\u0000');
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function common(records: ReadonlyArray<Readonly<Record<string, string>>>): Record<string, string> {
  const [first, ...rest] = records;
  if (first === undefined) return {};
  return Object.fromEntries(Object.entries(first).filter(([k, v]) => rest.every((r) => r[k] === v)));
}

export function alertmanagerNotification(input: {
  alerts: readonly NotificationAlert[];
  /** The route's labels grouped by, in order; the group labels are those the alerts share. */
  groupBy: readonly string[];
  /** The route's matchers as Alertmanager prints them in the group key, `{}` for the root route. */
  route?: string;
  status?: 'firing' | 'resolved';
  receiver?: string;
  externalURL?: string;
  truncatedAlerts?: number;
}): AlertmanagerWebhook {
  const alerts = input.alerts.map((a) => {
    const status = a.status ?? input.status ?? 'firing';
    return {
      status,
      labels: { ...a.labels },
      annotations: { ...(a.annotations ?? {}) },
      startsAt: a.startsAt,
      endsAt: status === 'resolved' ? (a.endsAt ?? a.startsAt) : ZERO_TIME,
      generatorURL: a.generatorURL ?? '',
      fingerprint: a.fingerprint ?? fingerprintOf(a.labels),
    };
  });
  const commonLabels = common(alerts.map((a) => a.labels));
  const groupLabels = Object.fromEntries(
    input.groupBy.flatMap((k) => (commonLabels[k] === undefined ? [] : [[k, commonLabels[k]]])),
  );
  const status = input.status ?? (alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved');
  return {
    receiver: input.receiver ?? 'calmops',
    status,
    alerts,
    groupLabels,
    commonLabels,
    commonAnnotations: common(alerts.map((a) => a.annotations)),
    externalURL: input.externalURL ?? '',
    version: '4',
    groupKey: `${input.route ?? '{}'}:{${Object.entries(groupLabels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(', ')}}`,
    truncatedAlerts: input.truncatedAlerts ?? 0,
  };
}
