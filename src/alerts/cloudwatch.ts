import { createHash } from 'node:crypto';
import * as z from 'zod';
import { type BodyIssue, bodyIssues } from './alertmanager.js';
import type { AlertGroup, NormalizedAlert } from './group.js';

/**
 * CloudWatch alarms as alert groups: EventBridge's "CloudWatch Alarm State Change" event (source `aws.cloudwatch`),
 * one alarm per group. ALARM fires, OK resolves, INSUFFICIENT_DATA says nothing about the cluster and is ignored.
 * Container Insights names what an alarm is about in its metric's dimensions; they become the labels Alertmanager's
 * alerts carry (`ClusterName` → `cluster`, `Namespace` → `namespace`, …), so routing, the namespace and the cluster
 * are read the same way. The alert name is the alarm's `alertname` tag, else the kube-prometheus alert that watches
 * the same condition (so the templates' `alerts:` lists apply), else the alarm's own name, which runs the sweep.
 */

const CLOUDWATCH_SOURCE = 'cloudwatch';
export const ALARM_STATE_CHANGE = 'CloudWatch Alarm State Change';

/**
 * CloudWatch writes offsets without a colon (`2019-10-02T17:04:40.989+0000`); ISO 8601 allows both spellings, so the
 * colon is added before the check and the value is kept in UTC.
 */
const Timestamp = z
  .string()
  .transform((value) => value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'))
  .pipe(z.iso.datetime({ offset: true }))
  .transform((value) => new Date(value).toISOString());

const AlarmState = z.object({
  value: z.enum(['ALARM', 'OK', 'INSUFFICIENT_DATA']),
  reason: z.string().max(10_000).default(''),
  timestamp: Timestamp,
});

const Dimensions = z.record(z.string(), z.string());

/** One entry of the alarm's metrics: a metric with its statistic, or a math expression over others (no dimensions). */
const AlarmMetric = z.object({
  id: z.string().optional(),
  metricStat: z
    .object({
      metric: z.object({
        namespace: z.string(),
        name: z.string(),
        dimensions: Dimensions.default({}),
      }),
    })
    .optional(),
});

const ALARM_ARN = /^arn:aws[a-z-]*:cloudwatch:[a-z0-9-]+:\d{12}:alarm:.{1,255}$/;

const AlarmStateChangeSchema = z.object({
  'detail-type': z.literal(ALARM_STATE_CHANGE),
  source: z.literal('aws.cloudwatch'),
  region: z.string().regex(/^[a-z0-9-]{1,32}$/),
  /** The alarm's ARN first: the group key, stable across the alarm's state changes. */
  resources: z.tuple([z.string().regex(ALARM_ARN, 'must be a CloudWatch alarm ARN')], z.string()),
  detail: z.object({
    alarmName: z.string().min(1).max(255),
    state: AlarmState,
    previousState: AlarmState.optional(),
    configuration: z
      .object({
        description: z.string().max(1024).optional(),
        /** Absent for composite alarms, whose rule names other alarms rather than metrics. */
        metrics: z.array(AlarmMetric).default([]),
      })
      .default({ metrics: [] }),
    /** Present when the alarm propagates its tags (ActionConfiguration.AlarmTagsPropagation). */
    alarmTags: z.record(z.string(), z.string()).optional(),
  }),
});
type AlarmStateChange = z.infer<typeof AlarmStateChangeSchema>;

/** Container Insights dimensions → the label names Alertmanager's alerts (and calmops' routing) use. */
export const DIMENSION_LABELS: Readonly<Record<string, string>> = {
  ClusterName: 'cluster',
  Namespace: 'namespace',
  // The full pod name; `PodName` is the name without the ReplicaSet's hash, used when the full one is absent.
  FullPodName: 'pod',
  PodName: 'pod',
  ContainerName: 'container',
  Service: 'service',
  NodeName: 'node',
  InstanceId: 'instance',
};

/**
 * Container Insights metrics (classic and enhanced observability) → the kube-prometheus alert that watches the same
 * condition, so an alarm on one gets the triage the templates give that alert. Metrics without a kube-prometheus
 * counterpart a template lists are left out: their alarms keep their own names and run the sweep.
 */
export const CONTAINER_INSIGHTS_ALERTS: Readonly<Record<string, string>> = {
  pod_number_of_container_restarts: 'KubePodCrashLooping',
  pod_container_status_waiting_reason_crash_loop_back_off: 'KubePodCrashLooping',
  // Any other waiting reason: kube-prometheus fires KubeContainerWaiting, whose causes the sweep tells apart.
  pod_container_status_waiting: 'KubeContainerWaiting',
  pod_container_status_waiting_reason_image_pull_error: 'KubeContainerWaiting',
  pod_container_status_waiting_reason_create_container_config_error: 'KubeContainerWaiting',
  pod_container_status_waiting_reason_create_container_error: 'KubeContainerWaiting',
  pod_container_status_waiting_reason_start_error: 'KubeContainerWaiting',
  // KubePodNotReady fires for pods Pending or Unknown, and for pods that never become ready.
  pod_status_pending: 'KubePodNotReady',
  pod_status_unknown: 'KubePodNotReady',
  pod_status_ready: 'KubePodNotReady',
  // A container at its CPU limit is throttled.
  pod_cpu_utilization_over_pod_limit: 'CPUThrottlingHigh',
  node_status_condition_ready: 'KubeNodeNotReady',
  cluster_failed_node_count: 'KubeNodeNotReady',
  node_status_condition_unknown: 'KubeNodeUnreachable',
  node_number_of_running_pods: 'KubeletTooManyPods',
  // Requests against what the node can give: the overcommit alerts' question, whether pods still fit.
  node_cpu_reserved_capacity: 'KubeCPUOvercommit',
  node_memory_reserved_capacity: 'KubeMemoryOvercommit',
  // A Service without running pods has no endpoints to reach.
  service_number_of_running_pods: 'TargetDown',
  status_replicas_unavailable: 'KubeDeploymentReplicasMismatch',
  replicas_ready: 'KubeDeploymentReplicasMismatch',
  daemonset_status_number_unavailable: 'KubeDaemonSetRolloutStuck',
  daemonset_status_number_available: 'KubeDaemonSetRolloutStuck',
  apiserver_request_total_5xx: 'KubeAPIErrorBudgetBurn',
};

const CONTAINER_INSIGHTS_NAMESPACE = 'ContainerInsights';

type Metric = NonNullable<z.infer<typeof AlarmMetric>['metricStat']>['metric'];

function metricsOf(event: AlarmStateChange): Metric[] {
  return event.detail.configuration.metrics.flatMap((m) => (m.metricStat === undefined ? [] : [m.metricStat.metric]));
}

/**
 * Labels from the alarm's metric dimensions: a math alarm reads several metrics, and a label is kept only when every
 * metric that has the dimension agrees on its value, so an alarm over two pods names neither.
 */
function dimensionLabels(metrics: readonly Metric[]): Record<string, string> {
  const seen = new Map<string, string | null>();
  for (const metric of metrics) {
    for (const [dimension, value] of Object.entries(metric.dimensions)) {
      const previous = seen.get(dimension);
      if (previous === undefined) seen.set(dimension, value);
      else if (previous !== value) seen.set(dimension, null);
    }
  }
  const labels: Record<string, string> = {};
  // FullPodName before PodName: both become `pod`, and the full name is the one kubectl knows.
  for (const dimension of Object.keys(DIMENSION_LABELS)) {
    const value = seen.get(dimension);
    const label = DIMENSION_LABELS[dimension] as string;
    if (typeof value === 'string' && value !== '' && labels[label] === undefined) labels[label] = value;
  }
  return labels;
}

/** The kube-prometheus alert the alarm stands for, when all its Container Insights metrics agree on one. */
function mappedAlertName(metrics: readonly Metric[]): string | undefined {
  const names = new Set(
    metrics.map((m) => (m.namespace === CONTAINER_INSIGHTS_NAMESPACE ? CONTAINER_INSIGHTS_ALERTS[m.name] : undefined)),
  );
  if (names.size !== 1) return undefined;
  return [...names][0];
}

function consoleLink(region: string, alarmName: string): string {
  return `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#alarmsV2:alarm/${encodeURIComponent(alarmName)}`;
}

export type AlarmReading = { group: AlertGroup } | { ignored: string };

/** The CloudWatch adapter: an alarm's state change as the handler takes it, or why there is nothing to handle. */
function fromAlarmStateChange(event: AlarmStateChange): AlarmReading {
  const { detail } = event;
  if (detail.state.value === 'INSUFFICIENT_DATA') {
    return { ignored: 'the alarm has insufficient data: it says neither that the condition holds nor that it ended' };
  }
  const alarmArn = event.resources[0];
  const metrics = metricsOf(event);
  const tags = detail.alarmTags ?? {};
  const tagged = tags['alertname'];
  const name = tagged !== undefined && tagged !== '' ? tagged : (mappedAlertName(metrics) ?? detail.alarmName);
  // Tags are what the alarm's owner said explicitly, so they win over what the dimensions suggest.
  const labels = { ...dimensionLabels(metrics), ...tags, alertname: name };
  const firing = detail.state.value === 'ALARM';
  const previous = detail.previousState;
  // A resolution's alert started when the alarm last went into ALARM, which the previous state records.
  const startsAt = firing || previous?.value !== 'ALARM' ? detail.state.timestamp : previous.timestamp;
  const description = detail.configuration.description?.trim() ?? '';
  const summary = [name === detail.alarmName ? '' : detail.alarmName, description].filter((p) => p !== '').join(': ');
  const link = consoleLink(event.region, detail.alarmName);
  const alert: NormalizedAlert = {
    name,
    status: firing ? 'firing' : 'resolved',
    labels,
    annotations: {
      ...(summary === '' ? {} : { summary }),
      ...(detail.state.reason === '' ? {} : { description: detail.state.reason }),
    },
    startsAt,
    ...(firing ? {} : { endsAt: detail.state.timestamp }),
    fingerprint: createHash('sha256').update(alarmArn).digest('hex').slice(0, 16),
    url: link,
  };
  return {
    group: {
      source: CLOUDWATCH_SOURCE,
      key: alarmArn,
      status: alert.status,
      alerts: [alert],
      commonLabels: labels,
      truncated: 0,
      link,
    },
  };
}

export type ParsedAlarmEvent =
  | { ok: true; reading: AlarmReading; alarmName: string }
  | { ok: false; issues: BodyIssue[] };

/** Parses an EventBridge event: the schema first, then the adapter. */
export function parseAlarmStateChange(event: unknown): ParsedAlarmEvent {
  const parsed = AlarmStateChangeSchema.safeParse(event);
  if (!parsed.success) {
    return {
      ok: false,
      issues: bodyIssues(parsed.error),
    };
  }
  return { ok: true, reading: fromAlarmStateChange(parsed.data), alarmName: parsed.data.detail.alarmName };
}
