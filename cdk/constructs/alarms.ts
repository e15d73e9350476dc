import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

/**
 * The alarms an on-call engineer needs for calmops itself: a function failing or throttled, a workflow execution
 * failing or timing out, approvals expiring without anyone answering, and the table throttling. Every alarm fires
 * on the first occurrence in five minutes: calmops is quiet by design, so one failure is already news.
 */

/** The metric the workflow emits (Powertools Metrics: dimensions `service` and `kind`) when an approval expires. */
const APPROVALS_EXPIRED = { namespace: 'calmops', metricName: 'ApprovalsExpired' } as const;

function approvalsExpiredQuery(serviceName: string): string {
  const { namespace, metricName } = APPROVALS_EXPIRED;
  return `SELECT SUM(${metricName}) FROM SCHEMA("${namespace}", kind, service) WHERE service = '${serviceName}'`;
}

export interface CalmopsAlarmsProps {
  functions: Record<string, IFunction>;
  machines: Record<string, StateMachine>;
  table: Table;
  api: IHttpApi;
  /** Powertools service name the workflow reports under. */
  serviceName: string;
  actions: readonly IAlarmAction[];
  /**
   * Every alarm is named `<namePrefix>/<what>`: a name the stack knows, so the rule that sends CloudWatch alarms to
   * the Slack function can leave calmops' own alarms out (they are about calmops, not about a cluster).
   */
  namePrefix: string;
}

/** The start of every alarm name one CalmopsAlarms creates. */
export function ownAlarmNamePrefix(namePrefix: string): string {
  return `${namePrefix}/`;
}

const PERIOD = Duration.minutes(5);

export class CalmopsAlarms extends Construct {
  readonly alarms: Alarm[] = [];
  private readonly actions: readonly IAlarmAction[];
  private readonly namePrefix: string;

  constructor(scope: Construct, id: string, props: CalmopsAlarmsProps) {
    super(scope, id);
    this.actions = props.actions;
    this.namePrefix = ownAlarmNamePrefix(props.namePrefix);
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(`${name}Errors`, fn.metricErrors({ period: PERIOD }), `The ${name} function raised errors`);
      this.add(`${name}Throttles`, fn.metricThrottles({ period: PERIOD }), `The ${name} function was throttled`);
    }
    for (const [name, machine] of Object.entries(props.machines)) {
      this.add(`${name}Failed`, machine.metricFailed({ period: PERIOD }), `${name} executions failed`);
      this.add(`${name}TimedOut`, machine.metricTimedOut({ period: PERIOD }), `${name} executions timed out`);
    }
    this.add(
      'ApprovalsExpired',
      // The workflow adds a `kind` dimension per approval kind, and kinds are open-ended: a Metrics Insights query
      // sums every kind, so a new kind is covered without touching the alarm.
      new MathExpression({
        expression: approvalsExpiredQuery(props.serviceName),
        usingMetrics: {},
        label: 'ApprovalsExpired',
        period: PERIOD,
      }),
      'Approvals (handoff, plan review, break-glass, post-incident review) expired without an answer',
    );
    this.add(
      'TableThrottled',
      props.table.metricThrottledRequestsForOperations({
        operations: [
          Operation.GET_ITEM,
          Operation.PUT_ITEM,
          Operation.UPDATE_ITEM,
          Operation.DELETE_ITEM,
          Operation.QUERY,
          Operation.BATCH_WRITE_ITEM,
        ],
        period: PERIOD,
      }),
      'DynamoDB throttled requests to the calmops table',
    );
    this.add(
      'SlackEndpoint5xx',
      props.api.metricServerError({ period: PERIOD, statistic: 'Sum' }),
      'The Slack endpoint answered with 5xx; Slack retries and then disables the app',
    );
  }

  private add(id: string, metric: IMetric, description: string): void {
    const alarm = new Alarm(this, id, {
      alarmName: `${this.namePrefix}${id}`,
      metric,
      alarmDescription: description,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const action of this.actions) alarm.addAlarmAction(action);
    this.alarms.push(alarm);
  }
}
