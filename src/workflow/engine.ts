/**
 * The workflow engine as calmops uses it: start a named execution, ask whether one runs, answer a waiting task or
 * ask whether it still waits. Step Functions implements it (src/app/step-functions-engine.ts); its conditions come
 * back as results, so the workflow never handles the SDK's errors.
 */

export type ExecutionStatus =
  | 'RUNNING'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'TIMED_OUT'
  | 'ABORTED'
  | 'PENDING_REDRIVE'
  /** The engine does not know it: lost, or evicted. */
  | 'UNKNOWN';

/** Names make starts idempotent: a name already used is an answer, not a failure. */
export type StartResult = { started: true; executionArn: string } | { started: false; reason: 'name-taken' };

/** `closed`: nobody waits on the token any more (it was answered, it timed out, or its run is gone). */
export type TaskAnswer = 'sent' | 'closed';

export interface WorkflowEngine {
  start(stateMachineArn: string, name: string, input: unknown): Promise<StartResult>;
  status(executionArn: string): Promise<ExecutionStatus>;
  /** Hands `output` to the task waiting on the token. */
  succeed(taskToken: string, output: unknown): Promise<TaskAnswer>;
  /** Whether a task still waits on the token, asked without changing anything for it. */
  heartbeat(taskToken: string): Promise<TaskAnswer>;
}
