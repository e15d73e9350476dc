import type { RunnableStateInfo } from './definition.js';

/** One event of GetExecutionHistory, in the API's shape (details under `<camelType>EventDetails`). */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  timestamp: Date;
  type: string;
  [details: string]: unknown;
}

/** The subset of the engine's event log entries the history is built from. */
export interface EngineEvent {
  type: string;
  state?: { name: string; type: string; input?: unknown; output?: unknown };
  Error?: string;
  Cause?: unknown;
  input?: unknown;
  output?: unknown;
  index?: number;
  parentState?: { name: string };
}

export interface HistoryOptions {
  maxEvents: number;
  now: () => Date;
  region: string;
  roleArn: string;
  stateTypes: ReadonlyMap<string, string>;
  runnable: ReadonlyMap<string, RunnableStateInfo>;
  /** error/cause given to StopExecution, for the ExecutionAborted event. */
  stopDetails: () => { error?: string; cause?: string };
  /** Events recorded before a restart, continued from. */
  restored?: readonly HistoryEvent[];
  /** Called with every event as it is recorded. */
  onRecord?: (event: HistoryEvent) => void;
}

function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Translates the engine's event log into Step Functions history events: execution, state entered/exited,
 * Task scheduled/started/succeeded/failed/timed out (LambdaFunction* for plain function ARNs), Map iterations.
 * Bounded: once `maxEvents` is reached further events are dropped and `truncated` is set.
 */
export class ExecutionHistory {
  readonly events: HistoryEvent[];
  truncated = false;

  constructor(private readonly options: HistoryOptions) {
    this.events = [...(options.restored ?? [])];
  }

  ingest(event: EngineEvent): void {
    switch (event.type) {
      case 'ExecutionStarted':
        this.record('ExecutionStarted', 'executionStartedEventDetails', {
          input: json(event.input),
          inputDetails: { truncated: false },
          roleArn: this.options.roleArn,
        });
        return;
      case 'ExecutionSucceeded':
        this.record('ExecutionSucceeded', 'executionSucceededEventDetails', {
          output: json(event.output),
          outputDetails: { truncated: false },
        });
        return;
      case 'ExecutionFailed':
        this.record('ExecutionFailed', 'executionFailedEventDetails', {
          error: event.Error,
          cause: text(event.Cause),
        });
        return;
      case 'ExecutionAborted':
        this.record('ExecutionAborted', 'executionAbortedEventDetails', this.options.stopDetails());
        return;
      case 'ExecutionTimeout':
        this.record('ExecutionTimedOut', 'executionTimedOutEventDetails', {
          error: 'States.Timeout',
          cause: 'The execution ran longer than the TimeoutSeconds of the state machine',
        });
        return;
      case 'StateEntered':
        this.stateEntered(event);
        return;
      case 'StateExited':
        this.stateExited(event);
        return;
      case 'StateFailed':
        this.stateFailed(event);
        return;
      case 'StateRetried':
        this.taskAttempt(event);
        return;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed':
        this.record(event.type, `${lowerFirst(event.type)}EventDetails`, {
          name: event.parentState?.name,
          index: event.index,
        });
        return;
      default:
        // StateCaught and Parallel branch events have no history event of their own in Step Functions.
        return;
    }
  }

  private originalType(name: string): string {
    return this.options.stateTypes.get(name) ?? 'Task';
  }

  private task(name: string) {
    const info = this.options.runnable.get(name);
    return info?.kind === 'task' ? info : undefined;
  }

  private stateEntered(event: EngineEvent): void {
    const state = event.state;
    if (!state) return;
    this.record(`${this.originalType(state.name)}StateEntered`, 'stateEnteredEventDetails', {
      name: state.name,
      input: json(state.input),
      inputDetails: { truncated: false },
    });
    this.taskAttempt(event);
  }

  private taskAttempt(event: EngineEvent): void {
    const info = event.state && this.task(event.state.name);
    if (!info) return;
    const { spec } = info;
    if (spec.lambdaEvents) {
      this.record('LambdaFunctionScheduled', 'lambdaFunctionScheduledEventDetails', {
        resource: spec.resource,
        timeoutInSeconds: info.timeoutSeconds,
      });
      this.record('LambdaFunctionStarted');
      return;
    }
    this.record('TaskScheduled', 'taskScheduledEventDetails', {
      resourceType: spec.historyType,
      resource: spec.historyResource,
      region: this.options.region,
      timeoutInSeconds: info.timeoutSeconds,
    });
    this.record('TaskStarted', 'taskStartedEventDetails', {
      resourceType: spec.historyType,
      resource: spec.historyResource,
    });
  }

  private stateExited(event: EngineEvent): void {
    const state = event.state;
    if (!state) return;
    const info = this.task(state.name);
    if (info?.spec.lambdaEvents) {
      this.record('LambdaFunctionSucceeded', 'lambdaFunctionSucceededEventDetails', {});
    } else if (info) {
      this.record('TaskSucceeded', 'taskSucceededEventDetails', {
        resourceType: info.spec.historyType,
        resource: info.spec.historyResource,
      });
    }
    this.record(`${this.originalType(state.name)}StateExited`, 'stateExitedEventDetails', {
      name: state.name,
      output: json(event.state?.output),
      outputDetails: { truncated: false },
    });
  }

  private stateFailed(event: EngineEvent): void {
    const state = event.state;
    if (!state) return;
    const failure = { error: event.Error, cause: text(event.Cause) };
    const info = this.task(state.name);
    const timedOut = event.Error === 'States.Timeout';
    if (info?.spec.lambdaEvents) {
      const type = timedOut ? 'LambdaFunctionTimedOut' : 'LambdaFunctionFailed';
      this.record(type, `${lowerFirst(type)}EventDetails`, failure);
    } else if (info) {
      const type = timedOut ? 'TaskTimedOut' : 'TaskFailed';
      this.record(type, `${lowerFirst(type)}EventDetails`, {
        resourceType: info.spec.historyType,
        resource: info.spec.historyResource,
        ...failure,
      });
    } else if (state.type === 'Map' || state.type === 'Parallel') {
      this.record(`${state.type}StateFailed`);
    }
  }

  private record(type: string, detailsKey?: string, details?: Record<string, unknown>): void {
    if (this.events.length >= this.options.maxEvents) {
      this.truncated = true;
      return;
    }
    // Ids continue from the last event: a restart may have lost the page cache's last unsynced events.
    const id = (this.events.at(-1)?.id ?? 0) + 1;
    const event: HistoryEvent = { id, previousEventId: id - 1, timestamp: this.options.now(), type };
    if (detailsKey && details) {
      event[detailsKey] = Object.fromEntries(Object.entries(details).filter(([, value]) => value !== undefined));
    }
    this.events.push(event);
    this.options.onRecord?.(event);
  }
}

function lowerFirst(value: string): string {
  return value.charAt(0).toLowerCase() + value.slice(1);
}
