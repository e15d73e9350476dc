import * as z from 'zod';
import type { AlertmanagerWebhook } from '../../src/alerts/alertmanager.js';
import { alertmanagerNotification } from '../alertmanager-notification.js';

/**
 * `POST /_sandbox/alerts/sample`: the sandbox's stand-in for Alertmanager. It fires (or resolves) the alert
 * kube-prometheus would raise for a demo namespace's fault, as the version 4 webhook notification Alertmanager sends,
 * through calmops' own `/alerts/alertmanager` route with the local bearer token. The token stays on the server: the
 * page only names the namespace and whether the alert fires or resolved.
 *
 *   body {"namespace": "orders"}                        fire the namespace's sample alert (again: a repeat)
 *   body {"namespace": "orders", "status": "resolved"}  resolve it
 *
 * The sandbox checks Host and Origin before this runs (local/request-guard.ts).
 */

const SAMPLE_ALERT_ROUTE = '/_sandbox/alerts/sample';

export function isSampleAlertRoute(path: string): boolean {
  return path.replace(/\/+$/, '') === SAMPLE_ALERT_ROUTE;
}

export interface SampleAlert {
  namespace: string;
  alertname: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

/** Labels every kube-state-metrics alert of kube-prometheus carries. */
const KSM = { endpoint: 'https-main', job: 'kube-state-metrics', service: 'kube-state-metrics' } as const;

function podNotReady(namespace: string, pod: string): SampleAlert {
  return {
    namespace,
    alertname: 'KubePodNotReady',
    labels: { alertname: 'KubePodNotReady', ...KSM, namespace, pod, severity: 'warning' },
    annotations: {
      summary: 'Pod has been in a non-ready state for more than 15 minutes.',
      description: `Pod ${namespace}/${pod} has been in a non-ready state for longer than 15 minutes.`,
    },
  };
}

/** The alert each faulty demo namespace would raise, on the pods and services the demo cluster really has. */
export const SAMPLE_ALERTS: readonly SampleAlert[] = [
  podNotReady('ml-team', 'trainer-resnet50-ztq8m'),
  podNotReady('payments', 'payments-api-7f8c9d6b54-4xk9p'),
  {
    namespace: 'orders',
    alertname: 'KubePodCrashLooping',
    labels: {
      alertname: 'KubePodCrashLooping',
      ...KSM,
      namespace: 'orders',
      pod: 'order-worker-69b7c4d8f5-fk2lp',
      container: 'order-worker',
      reason: 'CrashLoopBackOff',
      severity: 'warning',
    },
    annotations: {
      summary: 'Pod is crash looping.',
      description:
        'Pod orders/order-worker-69b7c4d8f5-fk2lp (order-worker) is in waiting state (reason: "CrashLoopBackOff").',
    },
  },
  {
    namespace: 'inventory',
    alertname: 'TargetDown',
    labels: {
      alertname: 'TargetDown',
      job: 'inventory',
      namespace: 'inventory',
      service: 'inventory',
      severity: 'warning',
    },
    annotations: {
      summary: 'One or more targets are unreachable.',
      description: '100% of the inventory/inventory targets in inventory namespace are down.',
    },
  },
];

/** Go's zero time: Alertmanager's `endsAt` for an alert still firing. */
/**
 * The notification Alertmanager sends for the sample's group, grouped by alert name and namespace as docs/alerts.md
 * recommends. It has no Alertmanager UI to link to, so the external URL is empty.
 */
export function sampleNotification(
  sample: SampleAlert,
  state: { status: 'firing' | 'resolved'; startsAt: string; endsAt?: string },
): AlertmanagerWebhook {
  return alertmanagerNotification({
    groupBy: ['alertname', 'namespace'],
    status: state.status,
    alerts: [
      {
        labels: sample.labels,
        annotations: sample.annotations,
        startsAt: state.startsAt,
        ...(state.endsAt === undefined ? {} : { endsAt: state.endsAt }),
      },
    ],
  });
}

/** Where calmops takes Alertmanager's webhook, and the token it wants. */
export interface SampleAlertTarget {
  url: () => string;
  token: string;
}

interface SampleAlertView {
  namespace: string;
  alertname: string;
  /** Fired from this sandbox and not resolved since. */
  firing: boolean;
  startsAt?: string;
}

export type SampleAlertsView = { available: true; samples: SampleAlertView[] } | { available: false; reason: string };

/** calmops' answer to the notification (docs/alerts.md, "What calmops answers"). */
interface AlertRouteAnswer {
  outcome?: string;
  reason?: string;
  sessionId?: string;
  channelId?: string;
  threadTs?: string;
  intent?: string;
  error?: string;
  [key: string]: unknown;
}

export interface SampleAlertResult {
  namespace: string;
  alertname: string;
  status: 'firing' | 'resolved';
  answer: AlertRouteAnswer;
}

interface SampleRouteAnswer {
  status: number;
  body: SampleAlertResult | { error: string; answer?: AlertRouteAnswer };
  /** Which sample alerts fire changed: the page's state moves on. */
  changed: boolean;
}

export interface SampleAlerts {
  view(): SampleAlertsView;
  /** Answers a request the sandbox already checked (Host, Origin, POST, JSON) with its parsed body. */
  answer(body: unknown): Promise<SampleRouteAnswer>;
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SampleRequestSchema = z.object({
  namespace: z.string().regex(NAMESPACE, 'a namespace name'),
  status: z.enum(['firing', 'resolved']).default('firing'),
});

const SEND_TIMEOUT_MS = 30_000;

export function createSampleAlerts(options: {
  /** Where to send them; absent, or `unavailable` given: the page says why there are none. */
  target?: SampleAlertTarget;
  unavailable?: string;
  now?: () => Date;
  fetch?: typeof fetch;
}): SampleAlerts {
  const now = options.now ?? (() => new Date());
  const send = options.fetch ?? fetch;
  const reason =
    options.unavailable ?? (options.target === undefined ? 'This sandbox sends no alerts to calmops.' : undefined);
  /** Namespace → when its sample alert started firing. */
  const firing = new Map<string, string>();

  const view = (): SampleAlertsView =>
    reason !== undefined
      ? { available: false, reason }
      : {
          available: true,
          samples: SAMPLE_ALERTS.map((s) => {
            const startsAt = firing.get(s.namespace);
            return {
              namespace: s.namespace,
              alertname: s.alertname,
              firing: startsAt !== undefined,
              ...(startsAt === undefined ? {} : { startsAt }),
            };
          }),
        };

  const refuse = (status: number, error: string): SampleRouteAnswer => ({ status, body: { error }, changed: false });

  return {
    view,
    async answer(body) {
      const target = options.target;
      if (reason !== undefined || target === undefined) return refuse(409, reason ?? 'no alert route');
      const parsed = SampleRequestSchema.safeParse(body);
      if (!parsed.success) {
        const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
        return refuse(400, `invalid request: ${detail}`);
      }
      const { namespace, status } = parsed.data;
      const sample = SAMPLE_ALERTS.find((s) => s.namespace === namespace);
      if (sample === undefined) {
        const known = SAMPLE_ALERTS.map((s) => s.namespace).join(', ');
        return refuse(404, `there is no sample alert for ${namespace} (there is one for ${known})`);
      }
      const started = firing.get(namespace);
      if (status === 'resolved' && started === undefined) {
        return refuse(409, `no sample alert fires in ${namespace}: fire one first`);
      }
      const startsAt = started ?? now().toISOString();
      const notification = sampleNotification(sample, {
        status,
        startsAt,
        ...(status === 'resolved' ? { endsAt: now().toISOString() } : {}),
      });

      let httpStatus: number;
      let answer: AlertRouteAnswer;
      try {
        const response = await send(target.url(), {
          method: 'POST',
          headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(notification),
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        httpStatus = response.status;
        const text = await response.text();
        try {
          answer = JSON.parse(text) as AlertRouteAnswer;
        } catch {
          answer = { error: text.slice(0, 500) };
        }
      } catch (error) {
        return refuse(502, `calmops' alert route did not answer: ${(error as Error).message}`);
      }
      if (httpStatus < 200 || httpStatus > 299) {
        const why = answer.reason ?? answer.error ?? `HTTP ${httpStatus}`;
        return { status: 502, body: { error: `calmops answered ${httpStatus}: ${why}`, answer }, changed: false };
      }
      const wasFiring = started !== undefined;
      if (status === 'firing') firing.set(namespace, startsAt);
      else firing.delete(namespace);
      return {
        status: 200,
        body: { namespace, alertname: sample.alertname, status, answer },
        changed: wasFiring !== (status === 'firing'),
      };
    },
  };
}
