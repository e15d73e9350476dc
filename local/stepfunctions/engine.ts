import './polyfill.js';
import { randomUUID } from 'node:crypto';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, type RunOptions } from 'aws-local-stepfunctions';
import * as z from 'zod';
import {
  type AccountScope,
  assertValidName,
  executionArnOf,
  parseExecutionArn,
  parseStateMachineArn,
  stateMachineArnOf,
} from './arn.js';
import {
  MAX_TIMER_MS,
  type PreparedDefinition,
  prepareDefinition,
  type TaskStateInfo,
  type ValidatedDefinitions,
} from './definition.js';
import { type EngineErrorClasses, engineErrorClasses } from './engine-errors.js';
import { SfnServiceError, StateMachineDefinitionError, TaskFailureError } from './errors.js';
import { type EngineEvent, ExecutionHistory } from './history.js';
import { lambdaFunctionName } from './resources.js';
import { TaskTokenRegistry } from './tokens.js';

export interface TaskHandlerContext {
  /** The task token of a `.waitForTaskToken` task (also substituted for `$$.Task.Token` in its Parameters). */
  taskToken?: string;
  stateName: string;
  executionArn: string;
  /** The Task state's Resource. */
  resource: string;
}

/** An in-process stand-in for a Lambda function or another Task resource. */
export type TaskHandler = (input: unknown, context: TaskHandlerContext) => Promise<unknown>;

export interface StateMachineRegistration {
  name: string;
  definition: object | string;
  roleArn?: string;
  /** `${Name}` placeholders to replace in the definition (like CloudFormation DefinitionSubstitutions). */
  substitutions?: Readonly<Record<string, string>>;
}

export interface EngineOptions extends AccountScope {
  /** Keyed by Lambda function ARN, function name, or the exact Resource of any other Task. */
  taskHandlers: Readonly<Record<string, TaskHandler>>;
  clock: () => Date;
  waitTimeScale: number;
  callbackTimeoutScale: number;
  retryIntervalScale: number;
  maxExecutions: number;
  maxHistoryEvents: number;
  validated: ValidatedDefinitions;
}

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

interface ExecutionRuntime {
  record: ExecutionRecord;
  controller: AbortController;
  abortRun?: () => void;
  stopDetails: { error?: string; cause?: string };
}

type LocalHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

/** Step Functions' default Task timeout when a Task sets none (99999999 s, about 3 years). */
const DEFAULT_TASK_TIMEOUT_SECONDS = 99_999_999;
const DEFAULT_ROLE_ARN_NAME = 'calmops-local-states';

const lambdaInvokeParameters = z.object({ FunctionName: z.string().min(1), Payload: z.unknown().optional() });
const startExecutionParameters = z.object({
  StateMachineArn: z.string().min(1),
  Input: z.unknown().optional(),
  Name: z.string().optional(),
});

function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function replaceInStrings(value: unknown, search: string, replacement: string): unknown {
  if (typeof value === 'string') {
    return value.includes(search) ? value.split(search).join(replacement) : value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => replaceInStrings(item, search, replacement));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, replaceInStrings(item, search, replacement)]),
    );
  }
  return value;
}

/** Lambda reports a function error as errorType/errorMessage; Step Functions uses errorType as the error name. */
function lambdaFailure(error: unknown): TaskFailureError {
  if (error instanceof TaskFailureError) return error;
  if (error instanceof Error) {
    const errorType = error.name || error.constructor.name || 'Error';
    const cause = JSON.stringify({
      errorType,
      errorMessage: error.message,
      trace: (error.stack ?? '').split('\n'),
    });
    return new TaskFailureError(errorType, cause, error);
  }
  return new TaskFailureError('Error', JSON.stringify({ errorType: 'Error', errorMessage: String(error) }), error);
}

/**
 * Runs Amazon States Language executions with aws-local-stepfunctions and keeps what the Step Functions API
 * reports about them (status, output, history, task tokens) in memory.
 */
export class LocalStepFunctionsEngine {
  private readonly stateMachines = new Map<string, RegisteredStateMachine>();
  private readonly executions = new Map<string, ExecutionRuntime>();
  private readonly executionNames = new Map<string, Map<string, ExecutionRuntime>>();
  private readonly tokens = new TaskTokenRegistry();
  private readonly tokenPlaceholder = `calmops-local-task-token-${randomUUID()}`;
  private sequence = 0;
  private closed = false;

  private constructor(
    private readonly options: EngineOptions,
    private readonly errors: EngineErrorClasses,
  ) {}

  static async create(options: EngineOptions): Promise<LocalStepFunctionsEngine> {
    return new LocalStepFunctionsEngine(options, await engineErrorClasses());
  }

  get scope(): AccountScope {
    return { region: this.options.region, accountId: this.options.accountId };
  }

  private now(): Date {
    return this.options.clock();
  }

  // ---------------------------------------------------------------------------------------------- state machines

  /**
   * CreateStateMachine semantics: registering the same name with the same definition and role returns the
   * existing state machine; anything else under a taken name is StateMachineAlreadyExists.
   */
  registerStateMachine(registration: StateMachineRegistration): RegisteredStateMachine {
    assertValidName(registration.name, 'state machine');
    const arn = stateMachineArnOf(this.scope, registration.name);
    const roleArn = registration.roleArn ?? `arn:aws:iam::${this.options.accountId}:role/${DEFAULT_ROLE_ARN_NAME}`;
    let prepared: PreparedDefinition;
    try {
      prepared = prepareDefinition(registration.definition, {
        substitutions: registration.substitutions,
        retryIntervalScale: this.options.retryIntervalScale,
        validated: this.options.validated,
      });
      this.assertResourcesServed(prepared);
    } catch (error) {
      if (error instanceof StateMachineDefinitionError) {
        throw new SfnServiceError('InvalidDefinition', `Invalid State Machine Definition: '${error.message}'`, {
          cause: error,
        });
      }
      throw error;
    }
    const existing = this.stateMachines.get(arn);
    if (existing) {
      if (existing.prepared.definitionText === prepared.definitionText && existing.roleArn === roleArn) {
        return existing;
      }
      throw new SfnServiceError('StateMachineAlreadyExists', `State Machine Already Exists: '${arn}'`);
    }
    const registered: RegisteredStateMachine = {
      name: registration.name,
      arn,
      roleArn,
      creationDate: this.now(),
      prepared,
    };
    this.stateMachines.set(arn, registered);
    this.executionNames.set(arn, new Map());
    return registered;
  }

  /** Custom resources can never run without a handler, so they are refused when the machine is registered. */
  private assertResourcesServed(prepared: PreparedDefinition): void {
    for (const info of prepared.runnable.values()) {
      if (info.kind === 'task' && info.spec.integration.kind === 'custom') {
        const { key } = info.spec.integration;
        if (!this.options.taskHandlers[key]) {
          throw new StateMachineDefinitionError(
            `State '${info.stateName}': resource '${info.spec.resource}' is not supported locally and no task handler is registered for '${key}'`,
          );
        }
      }
    }
  }

  describeStateMachine(stateMachineArn: string): RegisteredStateMachine {
    parseStateMachineArn(stateMachineArn);
    const machine = this.stateMachines.get(stateMachineArn);
    if (!machine) {
      throw new SfnServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    }
    return machine;
  }

  listStateMachines(): RegisteredStateMachine[] {
    return [...this.stateMachines.values()];
  }

  // -------------------------------------------------------------------------------------------------- executions

  /**
   * StartExecution semantics: a name already used by an open execution with the identical input returns that
   * execution; a different input, or a closed execution, is ExecutionAlreadyExists.
   */
  startExecution(request: { stateMachineArn: string; name?: string; input?: string }): ExecutionRecord {
    if (this.closed) {
      throw new SfnServiceError('ValidationException', 'The local Step Functions endpoint is shutting down');
    }
    const machine = this.describeStateMachine(request.stateMachineArn);
    const name = request.name ?? randomUUID();
    assertValidName(name, 'execution');
    const input = request.input ?? '{}';
    let inputValue: unknown;
    try {
      inputValue = JSON.parse(input);
    } catch (error) {
      throw new SfnServiceError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${error}'`, {
        cause: error,
      });
    }
    const names = this.executionNames.get(machine.arn) as Map<string, ExecutionRuntime>;
    const existing = names.get(name);
    if (existing) {
      if (existing.record.status === 'RUNNING' && existing.record.input === input) {
        return existing.record;
      }
      throw new SfnServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.record.arn}'`);
    }
    const runtime = this.launch(machine, name, input, inputValue);
    names.set(name, runtime);
    this.executions.set(runtime.record.arn, runtime);
    return runtime.record;
  }

  private launch(machine: RegisteredStateMachine, name: string, input: string, inputValue: unknown): ExecutionRuntime {
    const arn = executionArnOf(this.scope, machine.name, name);
    const startDate = this.now();
    const runtime: ExecutionRuntime = {
      controller: new AbortController(),
      stopDetails: {},
      record: {
        seq: ++this.sequence,
        arn,
        name,
        stateMachine: machine,
        input,
        startDate,
        status: 'RUNNING',
        done: Promise.resolve(),
        history: new ExecutionHistory({
          maxEvents: this.options.maxHistoryEvents,
          now: () => this.now(),
          region: this.options.region,
          roleArn: machine.roleArn,
          stateTypes: machine.prepared.stateTypes,
          runnable: machine.prepared.runnable,
          stopDetails: () => runtime.stopDetails,
        }),
      },
    };
    const run = machine.prepared.machine.run(inputValue as never, {
      overrides: { taskResourceLocalHandlers: this.bindHandlers(runtime) },
      context: {
        Execution: {
          Id: arn,
          Name: name,
          RoleArn: machine.roleArn,
          StartTime: startDate.toISOString(),
          RedriveCount: 0,
        },
        StateMachine: { Id: machine.arn, Name: machine.name },
        // Each callback task replaces this placeholder with the token it issues.
        Task: { Token: this.tokenPlaceholder },
      },
    });
    runtime.abortRun = run.abort;
    const historyDone = (async () => {
      for await (const event of run.eventLogs) {
        runtime.record.history.ingest(event as unknown as EngineEvent);
      }
    })();
    runtime.record.done = Promise.allSettled([run.result, historyDone]).then(([result]) => {
      this.finish(runtime, result);
    });
    return runtime;
  }

  private bindHandlers(runtime: ExecutionRuntime): LocalHandlers {
    const handlers: LocalHandlers = {};
    for (const info of runtime.record.stateMachine.prepared.runnable.values()) {
      handlers[info.stateName] =
        info.kind === 'wait'
          ? async (raw) => (await this.runWait(runtime, raw)) as never
          : async (raw) => (await this.runTask(runtime, info, raw)) as never;
    }
    return handlers;
  }

  private finish(runtime: ExecutionRuntime, result: PromiseSettledResult<unknown>): void {
    const record = runtime.record;
    if (record.status === 'RUNNING') {
      record.stopDate = this.now();
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
    this.tokens.closeExecution(record.arn);
    runtime.controller.abort();
    this.evictClosedExecutions();
  }

  private evictClosedExecutions(): void {
    if (this.executions.size <= this.options.maxExecutions) return;
    for (const [arn, runtime] of this.executions) {
      if (this.executions.size <= this.options.maxExecutions) break;
      if (runtime.record.status === 'RUNNING') continue;
      this.executions.delete(arn);
      this.executionNames.get(runtime.record.stateMachine.arn)?.delete(runtime.record.name);
      this.tokens.forgetExecution(arn);
    }
  }

  private runtimeOf(executionArn: string): ExecutionRuntime {
    parseExecutionArn(executionArn);
    const runtime = this.executions.get(executionArn);
    if (!runtime) {
      throw new SfnServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
    }
    return runtime;
  }

  describeExecution(executionArn: string): ExecutionRecord {
    return this.runtimeOf(executionArn).record;
  }

  /** StopExecution: closes a running execution as ABORTED; stopping a closed execution changes nothing. */
  stopExecution(executionArn: string, error?: string, cause?: string): ExecutionRecord {
    const runtime = this.runtimeOf(executionArn);
    this.stop(runtime, error, cause);
    return runtime.record;
  }

  private stop(runtime: ExecutionRuntime, error?: string, cause?: string): void {
    const record = runtime.record;
    if (record.status !== 'RUNNING') return;
    runtime.stopDetails = { error, cause };
    record.status = 'ABORTED';
    record.stopDate = this.now();
    record.error = error;
    record.cause = cause;
    this.tokens.closeExecution(record.arn);
    // The engine's abort ends the run and logs ExecutionAborted; ours releases handlers still waiting.
    runtime.abortRun?.();
    runtime.controller.abort();
  }

  /** Executions of a state machine, newest first. */
  listExecutions(stateMachineArn: string, statusFilter?: ExecutionStatus): ExecutionRecord[] {
    const machine = this.describeStateMachine(stateMachineArn);
    const records: ExecutionRecord[] = [];
    for (const runtime of this.executions.values()) {
      const record = runtime.record;
      if (record.stateMachine !== machine) continue;
      if (statusFilter && record.status !== statusFilter) continue;
      records.push(record);
    }
    return records.reverse();
  }

  // ------------------------------------------------------------------------------------------------- task tokens

  sendTaskSuccess(taskToken: string, output: string): void {
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch (error) {
      throw new SfnServiceError('InvalidOutput', `Invalid Output: '${error}'`, { cause: error });
    }
    this.tokens.succeed(taskToken, value);
  }

  sendTaskFailure(taskToken: string, error?: string, cause?: string): void {
    this.tokens.fail(taskToken, error, cause);
  }

  /** Validates the token; heartbeat timeouts are not enforced locally. */
  sendTaskHeartbeat(taskToken: string): void {
    this.tokens.heartbeat(taskToken);
  }

  // --------------------------------------------------------------------------------------------- Task execution

  private taskTimeoutMs(info: TaskStateInfo, fromPath: unknown): number | undefined {
    let seconds = info.timeoutSeconds;
    if (seconds === undefined && info.timeoutSecondsPath !== undefined) {
      if (typeof fromPath !== 'number' || !Number.isInteger(fromPath) || fromPath < 1) {
        throw this.errors.createRuntime(
          `TimeoutSecondsPath '${info.timeoutSecondsPath}' of state '${info.stateName}' must point to a positive integer, got ${JSON.stringify(fromPath)}`,
        );
      }
      seconds = fromPath;
    }
    const scale = info.spec.callback ? this.options.callbackTimeoutScale : 1;
    const ms = (seconds ?? DEFAULT_TASK_TIMEOUT_SECONDS) * 1000 * scale;
    return ms > MAX_TIMER_MS ? undefined : ms;
  }

  /**
   * Runs one attempt of a Task state. The timeout is enforced here (not by the engine) so that
   * TimeoutSecondsPath and the callback time scale work, and so that the task token is closed before the state
   * fails with States.Timeout.
   */
  private runTask(runtime: ExecutionRuntime, info: TaskStateInfo, raw: unknown): Promise<unknown> {
    const { p: input, t: timeoutFromPath } = (raw ?? {}) as { p?: unknown; t?: unknown };
    const timeoutMs = this.taskTimeoutMs(info, timeoutFromPath);
    const signal = runtime.controller.signal;
    if (signal.aborted) {
      return Promise.reject(this.errors.createRuntime('The execution is no longer running'));
    }
    return new Promise((resolve, reject) => {
      let token: string | undefined;
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      const onAbort = () => {
        if (token) this.tokens.close(token, 'stopped');
        settle(() => reject(this.errors.createRuntime('The execution is no longer running')));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (token) this.tokens.close(token, 'timed-out');
          settle(() => reject(this.errors.createTimeout()));
        }, timeoutMs);
      }
      let taskInput = input;
      if (info.spec.callback) {
        token = this.tokens.issue(runtime.record.arn, info.stateName, {
          succeed: (output) => settle(() => resolve(output)),
          fail: (error, cause) => settle(() => reject(new TaskFailureError(error ?? '', cause ?? ''))),
        });
        taskInput = replaceInStrings(input, this.tokenPlaceholder, token);
      }
      this.invoke(runtime, info, taskInput, token).then(
        (result) => {
          if (!info.spec.callback) settle(() => resolve(result));
        },
        (error: unknown) => {
          if (token) this.tokens.close(token, 'failed');
          settle(() => reject(error));
        },
      );
    });
  }

  private async invoke(
    runtime: ExecutionRuntime,
    info: TaskStateInfo,
    input: unknown,
    taskToken: string | undefined,
  ): Promise<unknown> {
    const context: TaskHandlerContext = {
      stateName: info.stateName,
      executionArn: runtime.record.arn,
      resource: info.spec.resource,
    };
    if (taskToken) context.taskToken = taskToken;
    const integration = info.spec.integration;
    switch (integration.kind) {
      case 'lambda-function':
        return this.callLambda(integration.functionRef, input, context);
      case 'lambda-invoke': {
        const parameters = lambdaInvokeParameters.safeParse(input);
        if (!parameters.success) {
          throw this.errors.createRuntime(
            `State '${info.stateName}': lambda:invoke needs Parameters with a FunctionName string`,
          );
        }
        const payload = await this.callLambda(parameters.data.FunctionName, parameters.data.Payload ?? null, context);
        return {
          ExecutedVersion: '$LATEST',
          Payload: payload,
          SdkHttpMetadata: { HttpStatusCode: 200 },
          SdkResponseMetadata: { RequestId: randomUUID() },
          StatusCode: 200,
        };
      }
      case 'start-execution':
        return this.startNested(runtime, info, integration.mode, input);
      case 'custom': {
        const handler = this.options.taskHandlers[integration.key];
        if (!handler) {
          throw this.errors.createRuntime(`No task handler is registered for '${integration.key}'`);
        }
        try {
          return toJson(await handler(toJson(input), context));
        } catch (error) {
          throw lambdaFailure(error);
        }
      }
    }
  }

  private async callLambda(functionRef: string, payload: unknown, context: TaskHandlerContext): Promise<unknown> {
    const handler =
      this.options.taskHandlers[functionRef] ?? this.options.taskHandlers[lambdaFunctionName(functionRef)];
    if (!handler) {
      throw new TaskFailureError(
        'Lambda.ResourceNotFoundException',
        `Function not found: ${functionRef} (no local task handler is registered under this ARN or under '${lambdaFunctionName(functionRef)}')`,
      );
    }
    try {
      return toJson(await handler(toJson(payload), context));
    } catch (error) {
      throw lambdaFailure(error);
    }
  }

  private async startNested(
    parent: ExecutionRuntime,
    info: TaskStateInfo,
    mode: 'async' | 'sync' | 'sync2',
    input: unknown,
  ): Promise<unknown> {
    const parameters = startExecutionParameters.safeParse(input);
    if (!parameters.success) {
      throw this.errors.createRuntime(
        `State '${info.stateName}': states:startExecution needs Parameters with a StateMachineArn string`,
      );
    }
    const { StateMachineArn, Input, Name } = parameters.data;
    let child: ExecutionRecord;
    try {
      child = this.startExecution({
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
    if (mode === 'async') {
      return { ExecutionArn: child.arn, StartDate: child.startDate.getTime() };
    }
    // Stopping the parent stops a child it is waiting for, as Step Functions does for .sync.
    const stopChild = () => {
      const childRuntime = this.executions.get(child.arn);
      if (childRuntime) this.stop(childRuntime, 'States.Aborted', `Parent execution ${parent.record.arn} stopped`);
    };
    parent.controller.signal.addEventListener('abort', stopChild, { once: true });
    try {
      await child.done;
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

  private async runWait(runtime: ExecutionRuntime, raw: unknown): Promise<unknown> {
    const { p: input, seconds, timestamp } = (raw ?? {}) as { p?: unknown; seconds?: unknown; timestamp?: unknown };
    let ms = 0;
    if (seconds !== undefined) {
      if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
        throw this.errors.createRuntime(`Wait seconds must be a non-negative integer, got ${JSON.stringify(seconds)}`);
      }
      ms = seconds * 1000;
    } else if (timestamp !== undefined) {
      const at = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
      if (Number.isNaN(at)) {
        throw this.errors.createRuntime(
          `Wait timestamp must be an RFC 3339 timestamp, got ${JSON.stringify(timestamp)}`,
        );
      }
      ms = Math.max(0, at - this.now().getTime());
    }
    ms = Math.min(ms * this.options.waitTimeScale, MAX_TIMER_MS);
    const signal = runtime.controller.signal;
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(this.errors.createRuntime('The execution is no longer running'));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.errors.createRuntime('The execution is no longer running'));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return input;
  }

  /** Stops every running execution and waits until all of them are closed. */
  async close(): Promise<void> {
    this.closed = true;
    const pending: Promise<void>[] = [];
    for (const runtime of this.executions.values()) {
      this.stop(runtime, 'States.Aborted', 'The local Step Functions endpoint shut down');
      pending.push(runtime.record.done);
    }
    await Promise.all(pending);
  }
}
