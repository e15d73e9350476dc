import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { MAX_TIMER_MS, type TaskStateInfo } from './definition.js';
import type { EngineErrorClasses } from './engine-errors.js';
import { TaskFailureError } from './errors.js';
import { type ExecutionRuntime, elapsedMs, type ResumePlan, takeResume } from './execution-runtime.js';
import { lambdaFunctionName } from './resources.js';
import type { TaskTokenRegistry } from './tokens.js';

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

export interface TaskRunnerOptions {
  /** Keyed by Lambda function ARN, function name, or the exact Resource of any other Task. */
  taskHandlers: Readonly<Record<string, TaskHandler>>;
  callbackTimeoutScale: number;
  clock: () => Date;
  errors: EngineErrorClasses;
  tokens: TaskTokenRegistry;
  /** Serves `states:startExecution`, which starts a child execution on the same endpoint. */
  startNested(
    parent: ExecutionRuntime,
    info: TaskStateInfo,
    mode: 'async' | 'sync' | 'sync2',
    input: unknown,
    resumed: ResumePlan | undefined,
  ): Promise<unknown>;
}

/** Step Functions' default Task timeout when a Task sets none (99999999 s, about 3 years). */
const DEFAULT_TASK_TIMEOUT_SECONDS = 99_999_999;

const lambdaInvokeParameters = z.object({ FunctionName: z.string().min(1), Payload: z.unknown().optional() });

/** Inputs and results pass through JSON, as they would over the wire. */
export function toJson(value: unknown): unknown {
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

/** Runs the attempts of Task states: timeouts, task tokens, and the handler or nested execution behind each. */
export class TaskRunner {
  /** `$$.Task.Token` of every run; each callback task replaces it with the token it issues. */
  readonly tokenPlaceholder = `calmops-local-task-token-${randomUUID()}`;
  /** Handlers outlive the execution that called them when it is stopped; close() waits for them all the same. */
  private readonly handlersRunning = new Set<Promise<unknown>>();

  constructor(private readonly options: TaskRunnerOptions) {}

  private now(): Date {
    return this.options.clock();
  }

  /** Settles once every handler started so far has returned or thrown. */
  async handlersSettled(): Promise<void> {
    await Promise.allSettled([...this.handlersRunning]);
  }

  private taskTimeoutMs(info: TaskStateInfo, fromPath: unknown): number | undefined {
    let seconds = info.timeoutSeconds;
    if (seconds === undefined && info.timeoutSecondsPath !== undefined) {
      if (typeof fromPath !== 'number' || !Number.isInteger(fromPath) || fromPath < 1) {
        throw this.options.errors.createRuntime(
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
   * fails with States.Timeout. The first attempt of a resumed callback task takes up the token it issued before
   * the restart: answered meanwhile, its answer is the result; still open, the same token completes it, and its
   * resource is invoked again only if it had not returned before the restart.
   */
  async runTask(runtime: ExecutionRuntime, info: TaskStateInfo, raw: unknown): Promise<unknown> {
    const { errors, tokens } = this.options;
    const { p: input, t: timeoutFromPath } = (raw ?? {}) as { p?: unknown; t?: unknown };
    const resumed = takeResume(runtime, info.stateName);
    if (runtime.journal) {
      // Let the history catch up first, so the journal has this state's entry before any token or child it starts.
      await new Promise((resolve) => setImmediate(resolve));
    }
    let timeoutMs = this.taskTimeoutMs(info, timeoutFromPath);
    const signal = runtime.controller.signal;
    if (signal.aborted) {
      throw errors.createRuntime('The execution is no longer running');
    }
    const previous = info.spec.callback ? resumed?.token : undefined;
    switch (previous?.closed) {
      case 'succeeded':
        return previous.output;
      case 'failed':
        throw new TaskFailureError(previous.error ?? '', previous.cause ?? '');
      case 'timed-out':
        throw errors.createTimeout();
    }
    const reused = previous?.closed === undefined ? previous : undefined;
    if (reused && timeoutMs !== undefined) {
      timeoutMs = Math.max(0, timeoutMs - elapsedMs(this.options.clock, reused.issuedAt));
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
        if (token) tokens.close(token, 'stopped');
        settle(() => reject(errors.createRuntime('The execution is no longer running')));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (token) tokens.close(token, 'timed-out');
          settle(() => reject(errors.createTimeout()));
        }, timeoutMs);
      }
      let taskInput = input;
      if (info.spec.callback) {
        const callbacks = {
          succeed: (output: unknown) => settle(() => resolve(output)),
          fail: (error: string | undefined, cause: string | undefined) =>
            settle(() => reject(new TaskFailureError(error ?? '', cause ?? ''))),
        };
        if (reused) {
          token = reused.token;
          tokens.attach(token, callbacks);
        } else {
          token = tokens.issue(runtime.record.arn, info.stateName, callbacks);
          runtime.journal?.append({
            t: 'token',
            token,
            state: info.stateName,
            issuedAt: this.now().toISOString(),
          });
        }
        taskInput = replaceInStrings(input, this.tokenPlaceholder, token);
      }
      if (reused?.delivered || settled) return;
      const issued = token;
      this.invoke(runtime, info, taskInput, issued, resumed).then(
        (result) => {
          if (!info.spec.callback) settle(() => resolve(result));
          else if (issued) runtime.journal?.append({ t: 'token-delivered', token: issued });
        },
        (error: unknown) => {
          if (issued) tokens.close(issued, 'failed');
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
    resumed: ResumePlan | undefined,
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
          throw this.options.errors.createRuntime(
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
        return this.options.startNested(runtime, info, integration.mode, input, resumed);
      case 'custom': {
        const handler = this.options.taskHandlers[integration.key];
        if (!handler) {
          throw this.options.errors.createRuntime(`No task handler is registered for '${integration.key}'`);
        }
        try {
          return toJson(await this.track(handler(toJson(input), context)));
        } catch (error) {
          throw lambdaFailure(error);
        }
      }
    }
  }

  private track<T>(running: Promise<T>): Promise<T> {
    this.handlersRunning.add(running);
    const forget = () => this.handlersRunning.delete(running);
    running.then(forget, forget);
    return running;
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
      return toJson(await this.track(handler(toJson(payload), context)));
    } catch (error) {
      throw lambdaFailure(error);
    }
  }
}
