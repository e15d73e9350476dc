import './polyfill.js';
import { ExecutionError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';

/**
 * The engine treats its own `States.Timeout` class specially (States.TaskFailed does not match it) and its
 * `States.Runtime` class as neither retryable nor catchable. Neither class is exported, so both are captured once
 * from two tiny probe runs; local handlers throw instances of them to get exactly the engine's semantics.
 */
export interface EngineErrorClasses {
  createTimeout(): Error;
  createRuntime(message: string): Error;
}

type ErrorConstructor0 = new (message?: string) => Error;

async function probeErrorClass(definition: object, handlers: Record<string, () => Promise<never>>, name: string) {
  const machine = new StateMachine(definition as StateMachineDefinition, { validationOptions: { noValidate: true } });
  try {
    await machine.run(null, { overrides: { taskResourceLocalHandlers: handlers } }).result;
  } catch (error) {
    if (error instanceof ExecutionError && error.cause instanceof Error && error.cause.name === name) {
      return error.cause.constructor as ErrorConstructor0;
    }
  }
  return undefined;
}

class FallbackTimeoutError extends Error {
  constructor() {
    super('States.Timeout');
    this.name = 'States.Timeout';
  }
}

class FallbackRuntimeError extends Error {
  constructor(message = 'States.Runtime') {
    super(message);
    this.name = 'States.Runtime';
  }
}

let cached: Promise<EngineErrorClasses> | undefined;

export function engineErrorClasses(): Promise<EngineErrorClasses> {
  cached ??= (async () => {
    const timeoutClass =
      (await probeErrorClass(
        {
          StartAt: 'Probe',
          States: {
            Probe: {
              Type: 'Task',
              Resource: 'arn:aws:lambda:us-east-1:000000000000:function:probe',
              TimeoutSeconds: 0.001,
              End: true,
            },
          },
        },
        { Probe: () => new Promise<never>(() => {}) },
        'States.Timeout',
      )) ?? FallbackTimeoutError;
    const runtimeClass =
      (await probeErrorClass(
        { StartAt: 'Probe', States: { Probe: { Type: 'Pass', Parameters: { 'x.$': '$.missing' }, End: true } } },
        {},
        'States.Runtime',
      )) ?? FallbackRuntimeError;
    return {
      createTimeout: () => new timeoutClass(),
      createRuntime: (message: string) => new runtimeClass(message),
    };
  })();
  return cached;
}
