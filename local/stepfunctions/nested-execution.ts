import * as z from 'zod';
import type { TaskStateInfo } from './definition.js';
import type { EngineErrorClasses } from './engine-errors.js';
import { SfnServiceError, TaskFailureError } from './errors.js';
import type { ExecutionRecord, ExecutionRuntime, ResumePlan } from './execution-runtime.js';
import type { ExecutionStore } from './execution-store.js';

/** What a `states:startExecution` task needs from the endpoint it starts the child on. */
export interface NestedExecutionHost {
  errors: EngineErrorClasses;
  executions: ExecutionStore;
  startExecution(request: { stateMachineArn: string; name?: string; input?: string }): ExecutionRecord;
  stop(runtime: ExecutionRuntime, error?: string, cause?: string): void;
}

const startExecutionParameters = z.object({
  StateMachineArn: z.string().min(1),
  Input: z.unknown().optional(),
  Name: z.string().optional(),
});

/**
 * Serves `states:startExecution`: starts the child on this endpoint and, with `.sync`/`.sync:2`, waits for it to
 * close and answers with its description.
 */
export async function startNested(
  host: NestedExecutionHost,
  parent: ExecutionRuntime,
  info: TaskStateInfo,
  mode: 'async' | 'sync' | 'sync2',
  input: unknown,
  resumed: ResumePlan | undefined,
): Promise<unknown> {
  const parameters = startExecutionParameters.safeParse(input);
  if (!parameters.success) {
    throw host.errors.createRuntime(
      `State '${info.stateName}': states:startExecution needs Parameters with a StateMachineArn string`,
    );
  }
  const { StateMachineArn, Input, Name } = parameters.data;
  // A resumed state takes up the child it started before the restart, running or closed.
  let child = resumed && startedChild(host.executions, resumed, StateMachineArn, Name);
  if (!child) {
    try {
      child = host.startExecution({
        stateMachineArn: StateMachineArn,
        name: Name,
        input: Input === undefined ? undefined : typeof Input === 'string' ? Input : JSON.stringify(Input),
      });
    } catch (error) {
      if (error instanceof SfnServiceError) {
        throw new TaskFailureError(`StepFunctions.${error.code}Exception`, error.message, error);
      }
      throw error;
    }
    parent.journal?.append({ t: 'child', state: info.stateName, arn: child.arn });
  }
  if (mode === 'async') {
    return { ExecutionArn: child.arn, StartDate: child.startDate.getTime() };
  }
  // Stopping the parent stops a child it is waiting for, as Step Functions does for .sync.
  const started = child;
  const stopChild = () => {
    if (parent.suspended) return;
    const childRuntime = host.executions.get(started.arn);
    if (childRuntime) host.stop(childRuntime, 'States.Aborted', `Parent execution ${parent.record.arn} stopped`);
  };
  parent.controller.signal.addEventListener('abort', stopChild, { once: true });
  try {
    await started.done;
  } finally {
    parent.controller.signal.removeEventListener('abort', stopChild);
  }
  const parse = mode === 'sync2';
  const description: Record<string, unknown> = {
    ExecutionArn: child.arn,
    Input: parse ? JSON.parse(child.input) : child.input,
    InputDetails: { Included: true },
    Name: child.name,
    StartDate: child.startDate.getTime(),
    StateMachineArn: child.stateMachine.arn,
    Status: child.status,
    StopDate: child.stopDate?.getTime(),
  };
  if (child.output !== undefined) {
    description.Output = parse ? JSON.parse(child.output) : child.output;
    description.OutputDetails = { Included: true };
  }
  if (child.error !== undefined) description.Error = child.error;
  if (child.cause !== undefined) description.Cause = child.cause;
  if (child.status === 'SUCCEEDED') {
    return description;
  }
  throw new TaskFailureError('States.TaskFailed', JSON.stringify(description));
}

function startedChild(
  executions: ExecutionStore,
  plan: ResumePlan,
  stateMachineArn: string,
  name: string | undefined,
): ExecutionRecord | undefined {
  const byArn = plan.childArn === undefined ? undefined : executions.get(plan.childArn);
  const byName = name === undefined ? undefined : executions.named(stateMachineArn, name);
  return (byArn ?? byName)?.record;
}
