import './polyfill.js';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError } from 'aws-local-stepfunctions';
import type { PreparedDefinition } from './definition.js';
import { ExecutionHistory, type HistoryEvent } from './history.js';
import type { ExecutionJournal } from './journal.js';
import type { ResumePoint } from './recovery.js';

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface RegisteredStateMachine {
  name: string;
  arn: string;
  roleArn: string;
  creationDate: Date;
  prepared: PreparedDefinition;
}

export interface ExecutionRecord {
  seq: number;
  arn: string;
  name: string;
  stateMachine: RegisteredStateMachine;
  input: string;
  startDate: Date;
  stopDate?: Date;
  status: ExecutionStatus;
  output?: string;
  error?: string;
  cause?: string;
  history: ExecutionHistory;
  /** Settles once the execution is closed and its history is complete. */
  done: Promise<void>;
}

/** Where a restarted execution picks up: a top-level state, entered again with the input it had. */
export interface ResumePlan extends ResumePoint {
  stateName: string;
  input: unknown;
  /** The first attempt of the resumed state has started (only it reuses the token, child or elapsed wait). */
  taken: boolean;
  /** The state's StateEntered event is in the history already; the resumed run's one is not recorded again. */
  skipEntered: boolean;
}

export interface ExecutionRuntime {
  record: ExecutionRecord;
  controller: AbortController;
  abortRun?: () => void;
  stopDetails: { error?: string; cause?: string };
  journal?: ExecutionJournal;
  resume?: ResumePlan;
  /** Stopped in memory by a graceful shutdown and left running in the journal, for the next start to resume. */
  suspended: boolean;
  /** The run is over and its history complete. */
  finished: boolean;
}

export type RecordFields = Omit<ExecutionRecord, 'stateMachine' | 'history' | 'done'>;

export interface RuntimeOptions {
  maxHistoryEvents: number;
  region: string;
  now: () => Date;
}

export function createRuntime(
  machine: RegisteredStateMachine,
  fields: RecordFields,
  options: RuntimeOptions,
  restored?: readonly HistoryEvent[],
): ExecutionRuntime {
  const runtime: ExecutionRuntime = {
    controller: new AbortController(),
    stopDetails: {},
    suspended: false,
    finished: false,
    record: {
      ...fields,
      stateMachine: machine,
      done: Promise.resolve(),
      history: new ExecutionHistory({
        maxEvents: options.maxHistoryEvents,
        now: options.now,
        region: options.region,
        roleArn: machine.roleArn,
        stateTypes: machine.prepared.stateTypes,
        runnable: machine.prepared.runnable,
        stopDetails: () => runtime.stopDetails,
        restored,
        onRecord: (event) =>
          runtime.journal?.append({ t: 'event', event: { ...event, timestamp: event.timestamp.toISOString() } }),
      }),
    },
  };
  return runtime;
}

/** Closes a running record with the outcome of its run, as DescribeExecution reports it. */
export function recordOutcome(record: ExecutionRecord, result: PromiseSettledResult<unknown>, stopDate: Date): void {
  record.stopDate = stopDate;
  if (result.status === 'fulfilled') {
    record.status = 'SUCCEEDED';
    record.output = JSON.stringify(result.value ?? null);
  } else if (result.reason instanceof ExecutionTimeoutError) {
    record.status = 'TIMED_OUT';
  } else if (result.reason instanceof ExecutionAbortedError) {
    record.status = 'ABORTED';
  } else {
    record.status = 'FAILED';
    const failure = result.reason instanceof ExecutionError ? result.reason.cause : result.reason;
    if (failure instanceof Error) {
      record.error = failure.name;
      record.cause = typeof failure.cause === 'string' ? failure.cause : failure.message;
    } else {
      record.error = 'States.Runtime';
      record.cause = String(failure);
    }
  }
}

/** The resume plan, the first time the resumed state runs; later attempts and other states run afresh. */
export function takeResume(runtime: ExecutionRuntime, stateName: string): ResumePlan | undefined {
  const plan = runtime.resume;
  if (!plan || plan.taken || plan.stateName !== stateName) return undefined;
  plan.taken = true;
  return plan;
}

/** Time since `since` by the endpoint's clock, never negative: a clock set back must not lengthen a wait or timeout. */
export function elapsedMs(clock: () => Date, since: Date): number {
  return Math.max(0, clock().getTime() - since.getTime());
}
