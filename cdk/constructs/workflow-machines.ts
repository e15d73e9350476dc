import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Arn, ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

/**
 * The three Standard state machines, built from `statemachines/*.asl.json` with the function and machine ARNs
 * substituted. Their names are fixed (`<stack>-diagnostic`, …) so the functions can be told the ARNs with
 * `Arn.format` instead of a reference: the machines already reference the functions, and a reference back would be
 * a circular dependency.
 */

const MACHINES = ['diagnostic', 'review', 'break-glass'] as const;
export type MachineName = (typeof MACHINES)[number];

/** The placeholders each definition file uses, and what they stand for. */
export const SUBSTITUTIONS = {
  ClusterReaderFunctionArn: 'the cluster-reader function',
  WorkflowFunctionArn: 'the workflow function',
  NotifierFunctionArn: 'the notifier function',
  ReviewStateMachineArn: 'the review state machine',
  BreakGlassStateMachineArn: 'the break-glass state machine',
} as const;

/** The managed rule Step Functions uses to learn when a `.sync` child execution ends. */
const SYNC_EVENTS_RULE = 'StepFunctionsGetEventsForStepFunctionsExecutionRule';

export interface WorkflowMachinesProps {
  /** Folder holding `<name>.asl.json`. */
  definitionsDir: string;
  /** Prefix of the machine names (the stack name). */
  namePrefix: string;
  clusterReader: IFunction;
  workflow: IFunction;
  notifier: IFunction;
  logRetention: RetentionDays;
}

function machineName(prefix: string, machine: MachineName): string {
  return `${prefix}-${machine}`;
}

/** The ARN of a machine by its fixed name, without referencing the machine (see the module comment). */
export function machineArn(scope: Construct, prefix: string, machine: MachineName): string {
  return Arn.format(
    {
      service: 'states',
      resource: 'stateMachine',
      resourceName: machineName(prefix, machine),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    },
    Stack.of(scope),
  );
}

/** The ARN pattern of every execution of a machine (DescribeExecution and StopExecution act on executions). */
export function executionsArn(scope: Construct, prefix: string, machine: MachineName): string {
  return Arn.format(
    {
      service: 'states',
      resource: 'execution',
      resourceName: `${machineName(prefix, machine)}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    },
    Stack.of(scope),
  );
}

export class WorkflowMachines extends Construct {
  readonly diagnostic: StateMachine;
  readonly review: StateMachine;
  readonly breakGlass: StateMachine;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: WorkflowMachinesProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const functionArns = {
      ClusterReaderFunctionArn: props.clusterReader.functionArn,
      WorkflowFunctionArn: props.workflow.functionArn,
      NotifierFunctionArn: props.notifier.functionArn,
    };

    // Review first: the other two start it.
    this.review = this.machine('Review', 'review', props, functionArns);
    this.breakGlass = this.machine('BreakGlass', 'break-glass', props, {
      ...functionArns,
      ReviewStateMachineArn: this.review.stateMachineArn,
    });
    this.diagnostic = this.machine('Diagnostic', 'diagnostic', props, {
      ...functionArns,
      ReviewStateMachineArn: this.review.stateMachineArn,
      BreakGlassStateMachineArn: this.breakGlass.stateMachineArn,
    });

    // Break-glass starts the mandatory post-incident review and does not wait for it.
    this.breakGlass.addToRolePolicy(
      new PolicyStatement({ actions: ['states:StartExecution'], resources: [this.review.stateMachineArn] }),
    );
    // The diagnostic machine starts break-glass (fire and forget) and runs the plan review as a `.sync:2` child.
    this.diagnostic.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [this.review.stateMachineArn, this.breakGlass.stateMachineArn],
      }),
    );
    this.diagnostic.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:DescribeExecution', 'states:StopExecution'],
        resources: [executionsArn(this, props.namePrefix, 'review')],
      }),
    );
    this.diagnostic.addToRolePolicy(
      new PolicyStatement({
        actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
        resources: [
          Arn.format({ service: 'events', resource: 'rule', resourceName: SYNC_EVENTS_RULE }, Stack.of(this)),
        ],
      }),
    );
  }

  /** Every machine, by its file name. */
  all(): Record<MachineName, StateMachine> {
    return { diagnostic: this.diagnostic, review: this.review, 'break-glass': this.breakGlass };
  }

  private machine(
    id: string,
    name: MachineName,
    props: WorkflowMachinesProps,
    substitutions: Partial<Record<keyof typeof SUBSTITUTIONS, string>>,
  ): StateMachine {
    const file = join(props.definitionsDir, `${name}.asl.json`);
    const used = placeholdersIn(readFileSync(file, 'utf8'));
    const missing = used.filter((p) => !(p in substitutions));
    if (missing.length > 0) {
      throw new Error(`${file} uses ${missing.map((p) => `\${${p}}`).join(', ')}, which the stack does not provide`);
    }
    const machine = new StateMachine(this, id, {
      stateMachineName: machineName(props.namePrefix, name),
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromFile(file),
      // Only the placeholders the file uses, so the template shows exactly what each machine depends on.
      definitionSubstitutions: Object.fromEntries(
        used.map((p) => [p, substitutions[p as keyof typeof SUBSTITUTIONS] as string]),
      ),
      tracingEnabled: true,
      logs: {
        destination: this.logGroup,
        level: LogLevel.ALL,
        // Execution data carries task tokens and the users' thread text; the timeline in DynamoDB is the audit.
        includeExecutionData: false,
      },
    });
    const functions: Record<string, IFunction> = {
      ClusterReaderFunctionArn: props.clusterReader,
      WorkflowFunctionArn: props.workflow,
      NotifierFunctionArn: props.notifier,
    };
    const invoked = used.flatMap((p) => (functions[p] ? [functions[p]] : []));
    // The definitions call the unqualified ARNs, so no `:*` version wildcard is needed (unlike grantInvoke).
    machine.addToRolePolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: invoked.map((fn) => fn.functionArn) }),
    );
    return machine;
  }
}

/** The `${Name}` placeholders a definition uses, sorted and without duplicates. */
export function placeholdersIn(definition: string): string[] {
  return [...new Set([...definition.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1] as string))].sort();
}
