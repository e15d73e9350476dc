/**
 * EventBridge "CloudWatch Alarm State Change" events as CloudWatch sends them: the example from the CloudWatch user
 * guide (Alarm events and EventBridge, single metric alarm), and Container Insights alarms built the same way.
 */

const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/** The user guide's example: an EC2 CPU alarm going from OK to ALARM. */
export function awsGuideExample(): Record<string, unknown> {
  return {
    version: '0',
    id: 'c4c1c1c9-6542-e61b-6ef0-8c4d36933a92',
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account: '123456789012',
    time: '2019-10-02T17:04:40Z',
    region: 'us-east-1',
    resources: ['arn:aws:cloudwatch:us-east-1:123456789012:alarm:ServerCpuTooHigh'],
    detail: {
      alarmName: 'ServerCpuTooHigh',
      configuration: {
        description: 'Goes into alarm when server CPU utilization is too high!',
        metrics: [
          {
            id: '30b6c6b2-a864-43a2-4877-c09a1afc3b87',
            metricStat: {
              metric: {
                dimensions: { InstanceId: 'i-12345678901234567' },
                name: 'CPUUtilization',
                namespace: 'AWS/EC2',
              },
              period: 300,
              stat: 'Average',
            },
            returnData: true,
          },
        ],
      },
      previousState: {
        reason:
          'Threshold Crossed: 1 out of the last 1 datapoints [0.0666851903306472 (01/10/19 13:46:00)] was not greater than the threshold (50.0) (minimum 1 datapoint for ALARM -> OK transition).',
        reasonData:
          '{"version":"1.0","queryDate":"2019-10-01T13:56:40.985+0000","startDate":"2019-10-01T13:46:00.000+0000","statistic":"Average","period":300,"recentDatapoints":[0.0666851903306472],"threshold":50.0}',
        timestamp: '2019-10-01T13:56:40.987+0000',
        value: 'OK',
      },
      state: {
        reason:
          'Threshold Crossed: 1 out of the last 1 datapoints [99.50160229693434 (02/10/19 16:59:00)] was greater than the threshold (50.0) (minimum 1 datapoint for OK -> ALARM transition).',
        reasonData:
          '{"version":"1.0","queryDate":"2019-10-02T17:04:40.985+0000","startDate":"2019-10-02T16:59:00.000+0000","statistic":"Average","period":300,"recentDatapoints":[99.50160229693434],"threshold":50.0}',
        timestamp: '2019-10-02T17:04:40.989+0000',
        value: 'ALARM',
      },
    },
  };
}

type StateValue = 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';

export interface AlarmInput {
  alarmName: string;
  /** Container Insights metrics the alarm reads (one for a single-metric alarm). */
  metrics: { name: string; dimensions: Record<string, string>; namespace?: string }[];
  state: StateValue;
  previous?: StateValue;
  /** When the alarm entered `state`; the previous state is an hour earlier. */
  at?: string;
  description?: string;
  tags?: Record<string, string>;
}

function cloudWatchTime(iso: string): string {
  // CloudWatch's own spelling: milliseconds and an offset without a colon.
  return new Date(iso).toISOString().replace('Z', '+0000');
}

/** A Container Insights alarm's state change, shaped like the guide's example. */
export function alarmEvent(input: AlarmInput): Record<string, unknown> {
  const at = input.at ?? '2030-03-04T02:10:07.412Z';
  const before = new Date(Date.parse(at) - 3_600_000).toISOString();
  const previous = input.previous ?? (input.state === 'ALARM' ? 'OK' : 'ALARM');
  const state = (value: StateValue, time: string) => ({
    reason:
      value === 'ALARM'
        ? 'Threshold Crossed: 1 out of the last 1 datapoints [3.0 (04/03/30 02:05:00)] was greater than or equal to the threshold (1.0) (minimum 1 datapoint for OK -> ALARM transition).'
        : 'Threshold Crossed: 1 out of the last 1 datapoints [0.0 (04/03/30 02:05:00)] was not greater than or equal to the threshold (1.0) (minimum 1 datapoint for ALARM -> OK transition).',
    reasonData: '{"version":"1.0"}',
    timestamp: cloudWatchTime(time),
    value,
  });
  return {
    version: '0',
    id: `evt-${input.alarmName}-${input.state}-${at}`,
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account: ACCOUNT,
    time: at.replace(/\.\d+Z$/, 'Z'),
    region: REGION,
    resources: [`arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${input.alarmName}`],
    detail: {
      alarmName: input.alarmName,
      configuration: {
        ...(input.description === undefined ? {} : { description: input.description }),
        metrics: input.metrics.map((m, i) => ({
          id: `m${i + 1}`,
          metricStat: {
            metric: { dimensions: m.dimensions, name: m.name, namespace: m.namespace ?? 'ContainerInsights' },
            period: 60,
            stat: 'Maximum',
          },
          returnData: input.metrics.length === 1,
        })),
      },
      previousState: state(previous, before),
      state: state(input.state, at),
      ...(input.tags === undefined ? {} : { alarmTags: input.tags, alarmTagsStatus: 'SUCCESS' }),
    },
  };
}

/** Enhanced observability's CrashLoopBackOff count for one pod. */
export function crashLoopAlarm(
  namespace: string,
  fullPodName: string,
  options: Partial<AlarmInput> & { cluster?: string } = {},
): Record<string, unknown> {
  const { cluster = 'default', ...rest } = options;
  return alarmEvent({
    alarmName: `calmops-${namespace}-crashloop`,
    description: `Containers in ${namespace} are in CrashLoopBackOff`,
    state: 'ALARM',
    metrics: [
      {
        name: 'pod_container_status_waiting_reason_crash_loop_back_off',
        dimensions: {
          ClusterName: cluster,
          Namespace: namespace,
          PodName: fullPodName.replace(/-[a-z0-9]+-[a-z0-9]+$/, ''),
          FullPodName: fullPodName,
        },
      },
    ],
    ...rest,
  });
}
