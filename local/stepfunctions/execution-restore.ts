import { type AccountScope, executionArnOf, stateMachineArnOf } from './arn.js';
import { ExecutionJournalError } from './errors.js';
import {
  createRuntime,
  type ExecutionRuntime,
  type RegisteredStateMachine,
  type RuntimeOptions,
} from './execution-runtime.js';
import type { ExecutionStore } from './execution-store.js';
import { ExecutionJournal, readJournals } from './journal.js';
import { type RecoveredExecution, recoverExecution } from './recovery.js';
import type { TaskTokenRegistry, TaskTokenStatus } from './tokens.js';

/** What restoring journaled executions reads from the endpoint and adds to it. */
export interface RestoreHost {
  scope: AccountScope;
  stateMachines: ReadonlyMap<string, RegisteredStateMachine>;
  executions: ExecutionStore;
  tokens: TaskTokenRegistry;
  runtimeOptions: RuntimeOptions;
  report(error: unknown): void;
}

export interface RestoredExecutions {
  /** The executions still running, each with the plan to resume it, oldest first. */
  resumed: ExecutionRuntime[];
  /** The highest start order restored (0 for none), so new executions are ordered after them. */
  lastSeq: number;
}

/**
 * Adds every execution journaled under `stateDir` to the host, oldest first. Journals that cannot be read, or whose
 * state machine is not registered, are reported and left out.
 */
export function restoreExecutions(host: RestoreHost, stateDir: string): RestoredExecutions {
  const recovered = readJournals(stateDir, (error) => host.report(error))
    .map(recoverExecution)
    .sort((a, b) => a.seq - b.seq);
  const resumed: ExecutionRuntime[] = [];
  let lastSeq = 0;
  for (const execution of recovered) {
    const runtime = restoreExecution(host, execution);
    if (!runtime) continue;
    lastSeq = Math.max(lastSeq, runtime.record.seq);
    if (runtime.resume) resumed.push(runtime);
  }
  return { resumed, lastSeq };
}

function restoreExecution(host: RestoreHost, execution: RecoveredExecution): ExecutionRuntime | undefined {
  const machine = host.stateMachines.get(stateMachineArnOf(host.scope, execution.stateMachineName));
  if (!machine) {
    host.report(
      new ExecutionJournalError(
        `Execution ${execution.arn} was left on disk: its state machine '${execution.stateMachineName}' is not registered`,
        execution.file,
      ),
    );
    return undefined;
  }
  if (
    execution.arn !== executionArnOf(host.scope, machine.name, execution.name) ||
    host.executions.has(execution.arn)
  ) {
    host.report(
      new ExecutionJournalError(`Execution ${execution.arn} does not belong here or is duplicated`, execution.file),
    );
    return undefined;
  }
  const { arn, name, input, startDate, seq, status, stopDate, output, error, cause } = execution;
  const runtime = createRuntime(
    machine,
    { seq, arn, name, input, startDate, status, stopDate, output, error, cause },
    host.runtimeOptions,
    execution.events,
  );
  runtime.journal = new ExecutionJournal(execution.file, (error) => host.report(error));
  host.executions.add(runtime);
  const point = execution.resume;
  if (point) {
    runtime.resume = {
      ...point,
      stateName: point.stateName ?? machine.prepared.startAt,
      input: point.stateName === undefined ? JSON.parse(input) : point.input,
      taken: false,
      skipEntered: point.inProgress,
    };
  } else {
    runtime.finished = true;
  }
  // Only the token of the state being resumed can still be answered; the others' tasks are gone with the process.
  const reusable = runtime.resume?.token?.closed === undefined ? runtime.resume?.token?.token : undefined;
  for (const token of execution.tokens) {
    const restored: TaskTokenStatus =
      token.closed === undefined
        ? token.token === reusable
          ? 'open'
          : 'stopped'
        : token.closed === 'abandoned'
          ? 'failed'
          : token.closed;
    host.tokens.restore(token.token, arn, token.stateName, restored);
  }
  return runtime;
}
