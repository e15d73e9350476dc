import './polyfill.js';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import * as z from 'zod';
import { StateMachineDefinitionError } from './errors.js';
import { classifyResource, type ResourceSpec } from './resources.js';

/** Longest delay a Node timer can hold (2^31 - 1 ms); longer timeouts are treated as unbounded locally. */
export const MAX_TIMER_MS = 2_147_483_647;
const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** Resource of the Task that stands in for a Wait state at run time (never visible in the API). */
export const LOCAL_WAIT_RESOURCE = 'arn:aws:states:::calmops-local:wait';

/** The state a resumed execution starts with: it hands the resumed state its input (never visible in the API). */
export const RESUME_STATE_NAME = 'calmops-local:resume';
const LOCAL_RESUME_RESOURCE = 'arn:aws:states:::calmops-local:resume';

export interface TaskStateInfo {
  kind: 'task';
  stateName: string;
  spec: ResourceSpec;
  /** Static `TimeoutSeconds`; with neither it nor `TimeoutSecondsPath` the Step Functions default applies. */
  timeoutSeconds?: number;
  timeoutSecondsPath?: string;
}

export interface WaitStateInfo {
  kind: 'wait';
  stateName: string;
}

export type RunnableStateInfo = TaskStateInfo | WaitStateInfo;

export interface PreparedDefinition {
  /** The definition as registered (after substitutions), returned by DescribeStateMachine. */
  definitionText: string;
  /** Every state name (nested ones included) and its ASL type. */
  stateTypes: ReadonlyMap<string, string>;
  /** Task and Wait states, which run through local handlers. */
  runnable: ReadonlyMap<string, RunnableStateInfo>;
  /** Names of the top-level states (not inside Map or Parallel), the points an execution can resume from. */
  topLevel: ReadonlySet<string>;
  startAt: string;
  /** The state machine's own `TimeoutSeconds`, if any. */
  timeoutSeconds?: number;
  /** The validated, rewritten machine; one instance serves every execution. */
  machine: StateMachine;
  /** The rewritten definition `machine` runs, the base of resumed runs. */
  runtimeDefinition: Readonly<Record<string, unknown>>;
}

export interface PrepareOptions {
  /** `${Name}` placeholders replaced before parsing, as CloudFormation DefinitionSubstitutions would. */
  substitutions?: Readonly<Record<string, string>>;
  /** Multiplies Retry intervals (IntervalSeconds, MaxDelaySeconds); 1 keeps them real. */
  retryIntervalScale?: number;
  /** Texts that need no validation again; this process's memory by default. */
  validated?: ValidatedDefinitions;
}

const definitionShape = z.object({
  StartAt: z.string().min(1),
  States: z.record(z.string(), z.record(z.string(), z.unknown())),
  TimeoutSeconds: z.number().optional(),
});

type JsonObject = Record<string, unknown>;

// Fields of JSONata, variables and distributed Map: the engine would ignore them silently, so refuse them.
const UNSUPPORTED_STATE_FIELDS = [
  'Assign',
  'Arguments',
  'Output',
  'Items',
  'ItemReader',
  'ResultWriter',
  'ItemBatcher',
];

export function applySubstitutions(text: string, substitutions: Readonly<Record<string, string>> = {}): string {
  const replaced = text.replace(/\$\{([A-Za-z0-9_]+)\}/g, (whole, key: string) => {
    const value = substitutions[key];
    // Values land inside JSON strings, so they are escaped as JSON string content.
    return value === undefined ? whole : JSON.stringify(value).slice(1, -1);
  });
  const unresolved = /\$\{([A-Za-z0-9_]+)\}/.exec(replaced);
  if (unresolved) {
    throw new StateMachineDefinitionError(
      `The definition still contains the placeholder ${unresolved[0]}: pass a value for '${unresolved[1]}' in substitutions`,
    );
  }
  return replaced;
}

function parseDefinition(text: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new StateMachineDefinitionError(`The definition is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const shape = definitionShape.safeParse(parsed);
  if (!shape.success) {
    throw new StateMachineDefinitionError(
      `The definition needs StartAt and States: ${shape.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
    );
  }
  return parsed as JsonObject;
}

function assertSupported(definition: JsonObject, where: string): void {
  if (definition.QueryLanguage === 'JSONata') {
    throw new StateMachineDefinitionError(`${where}: QueryLanguage JSONata is not supported locally (use JSONPath)`);
  }
  const states = definition.States as Record<string, JsonObject>;
  for (const [name, state] of Object.entries(states)) {
    if (state.QueryLanguage === 'JSONata') {
      throw new StateMachineDefinitionError(`State '${name}': QueryLanguage JSONata is not supported locally`);
    }
    for (const field of UNSUPPORTED_STATE_FIELDS) {
      if (field in state) {
        throw new StateMachineDefinitionError(`State '${name}': the field ${field} is not supported locally`);
      }
    }
    for (const nested of nestedDefinitions(state)) {
      assertSupported(nested, `State '${name}'`);
    }
  }
}

function nestedDefinitions(state: JsonObject): JsonObject[] {
  const nested: JsonObject[] = [];
  if (Array.isArray(state.Branches)) {
    nested.push(...(state.Branches as JsonObject[]));
  }
  for (const key of ['Iterator', 'ItemProcessor'] as const) {
    if (state[key] && typeof state[key] === 'object') {
      nested.push(state[key] as JsonObject);
    }
  }
  return nested;
}

/**
 * Definition texts known to pass the engine's full validation. Validation is the expensive step (hundreds of
 * milliseconds per definition), and a text that passed once passes again with the same engine.
 */
export interface ValidatedDefinitions {
  has(text: string): boolean;
  add(text: string): void;
}

const VALIDATED_TEXTS_MAX = 256;

/** How strictly the engine validates; part of what a remembered validation stands for. */
export const ENGINE_VALIDATION = { checkArn: true, checkPaths: true } as const;

/** Validated texts remembered for the life of this process, however many endpoints register them. */
export const validatedInThisProcess: ValidatedDefinitions = (() => {
  const texts = new Set<string>();
  return {
    has: (text) => texts.has(text),
    add: (text) => {
      if (texts.size >= VALIDATED_TEXTS_MAX) texts.clear();
      texts.add(text);
    },
  };
})();

function validateWithEngine(definition: JsonObject, text: string, validated: ValidatedDefinitions): void {
  if (validated.has(text)) return;
  try {
    // The constructor runs the full ASL validation (paths and ARNs).
    new StateMachine(definition as unknown as StateMachineDefinition, { validationOptions: ENGINE_VALIDATION });
  } catch (error) {
    throw new StateMachineDefinitionError((error as Error).message, { cause: error });
  }
  validated.add(text);
}

function scaleRetriers(retry: unknown, scale: number): unknown {
  if (!Array.isArray(retry) || scale === 1) {
    return retry;
  }
  return retry.map((retrier: JsonObject) => {
    const scaled: JsonObject = { ...retrier, IntervalSeconds: ((retrier.IntervalSeconds as number) ?? 1) * scale };
    if (typeof retrier.MaxDelaySeconds === 'number') {
      scaled.MaxDelaySeconds = retrier.MaxDelaySeconds * scale;
    }
    return scaled;
  });
}

interface RewriteContext {
  stateTypes: Map<string, string>;
  runnable: Map<string, RunnableStateInfo>;
  retryIntervalScale: number;
}

function rewriteTask(name: string, state: JsonObject, ctx: RewriteContext): JsonObject {
  const spec = classifyResource(state.Resource as string);
  const info: TaskStateInfo = { kind: 'task', stateName: name, spec };
  if (typeof state.TimeoutSeconds === 'number') {
    info.timeoutSeconds = state.TimeoutSeconds;
  }
  // The engine evaluates TimeoutSecondsPath against the Parameters output instead of the state input, so the path
  // travels inside Parameters (evaluated against the effective input) and the local handler enforces the timeout.
  const parameters: JsonObject = 'Parameters' in state ? { p: state.Parameters } : { 'p.$': '$' };
  if (typeof state.TimeoutSecondsPath === 'string') {
    info.timeoutSecondsPath = state.TimeoutSecondsPath;
    parameters['t.$'] = state.TimeoutSecondsPath;
  }
  ctx.runnable.set(name, info);
  const rewritten: JsonObject = { ...state, Parameters: parameters, TimeoutSeconds: MAX_TIMER_SECONDS };
  delete rewritten.TimeoutSecondsPath;
  delete rewritten.HeartbeatSeconds;
  delete rewritten.HeartbeatSecondsPath;
  if ('Retry' in state) {
    rewritten.Retry = scaleRetriers(state.Retry, ctx.retryIntervalScale);
  }
  return rewritten;
}

function rewriteWait(name: string, state: JsonObject, ctx: RewriteContext): JsonObject {
  // A Wait runs as a local Task so that every form (Seconds, Timestamp and their paths) can be scaled and aborted.
  ctx.runnable.set(name, { kind: 'wait', stateName: name });
  const parameters: JsonObject = { 'p.$': '$' };
  if (state.Seconds !== undefined) parameters.seconds = state.Seconds;
  if (state.Timestamp !== undefined) parameters.timestamp = state.Timestamp;
  if (state.SecondsPath !== undefined) parameters['seconds.$'] = state.SecondsPath;
  if (state.TimestampPath !== undefined) parameters['timestamp.$'] = state.TimestampPath;
  const rewritten: JsonObject = {
    Type: 'Task',
    Resource: LOCAL_WAIT_RESOURCE,
    Parameters: parameters,
    TimeoutSeconds: MAX_TIMER_SECONDS,
  };
  for (const key of ['Comment', 'InputPath', 'OutputPath', 'Next', 'End']) {
    if (key in state) rewritten[key] = state[key];
  }
  return rewritten;
}

function rewriteStates(definition: JsonObject, ctx: RewriteContext): JsonObject {
  const states = definition.States as Record<string, JsonObject>;
  const rewrittenStates: Record<string, JsonObject> = {};
  for (const [name, state] of Object.entries(states)) {
    if (ctx.stateTypes.has(name)) {
      throw new StateMachineDefinitionError(
        `State name '${name}' is used more than once; names must be unique across the whole state machine locally`,
      );
    }
    ctx.stateTypes.set(name, state.Type as string);
    let rewritten: JsonObject;
    switch (state.Type) {
      case 'Task':
        rewritten = rewriteTask(name, state, ctx);
        break;
      case 'Wait':
        rewritten = rewriteWait(name, state, ctx);
        break;
      case 'Map':
      case 'Parallel': {
        rewritten = { ...state };
        if ('Retry' in state) rewritten.Retry = scaleRetriers(state.Retry, ctx.retryIntervalScale);
        if (Array.isArray(state.Branches)) {
          rewritten.Branches = (state.Branches as JsonObject[]).map((branch) => rewriteStates(branch, ctx));
        }
        for (const key of ['Iterator', 'ItemProcessor'] as const) {
          if (state[key] && typeof state[key] === 'object') {
            rewritten[key] = rewriteStates(state[key] as JsonObject, ctx);
          }
        }
        break;
      }
      default:
        rewritten = { ...state };
    }
    rewrittenStates[name] = rewritten;
  }
  return { ...definition, States: rewrittenStates };
}

/**
 * Substitutes, parses, validates and rewrites a definition once. The returned machine is shared by all
 * executions of the state machine.
 */
export function prepareDefinition(definition: object | string, options: PrepareOptions = {}): PreparedDefinition {
  const rawText = typeof definition === 'string' ? definition : JSON.stringify(definition);
  const definitionText = applySubstitutions(rawText, options.substitutions);
  const parsed = parseDefinition(definitionText);
  assertSupported(parsed, 'The definition');
  validateWithEngine(parsed, definitionText, options.validated ?? validatedInThisProcess);
  const ctx: RewriteContext = {
    stateTypes: new Map(),
    runnable: new Map(),
    retryIntervalScale: options.retryIntervalScale ?? 1,
  };
  const runtime = rewriteStates(parsed, ctx);
  if (typeof runtime.TimeoutSeconds === 'number' && runtime.TimeoutSeconds > MAX_TIMER_SECONDS) {
    delete runtime.TimeoutSeconds;
  }
  const machine = new StateMachine(runtime as unknown as StateMachineDefinition, {
    validationOptions: { noValidate: true },
  });
  const prepared: PreparedDefinition = {
    definitionText,
    stateTypes: ctx.stateTypes,
    runnable: ctx.runnable,
    topLevel: new Set(Object.keys(parsed.States as JsonObject)),
    startAt: parsed.StartAt as string,
    machine,
    runtimeDefinition: runtime,
  };
  if (typeof parsed.TimeoutSeconds === 'number') prepared.timeoutSeconds = parsed.TimeoutSeconds;
  return prepared;
}

/**
 * The same machine, entered at a top-level state: a first state (run by a local handler) gives `stateName` the
 * input it was entered with, so `$$.Execution.Input` stays the execution's input. `timeoutSeconds` replaces the
 * machine's own timeout (what is left of it); undefined removes it. The definition was validated when it was
 * registered, and changing where it starts keeps it valid, so it is not validated again.
 */
export function resumedMachine(
  prepared: PreparedDefinition,
  stateName: string,
  timeoutSeconds: number | undefined,
): StateMachine {
  if (!prepared.topLevel.has(stateName)) {
    throw new StateMachineDefinitionError(`State '${stateName}' is not a top-level state of this state machine`);
  }
  const states = prepared.runtimeDefinition.States as JsonObject;
  if (RESUME_STATE_NAME in states) {
    throw new StateMachineDefinitionError(`The state name '${RESUME_STATE_NAME}' is reserved for resumed executions`);
  }
  const definition: JsonObject = {
    ...prepared.runtimeDefinition,
    StartAt: RESUME_STATE_NAME,
    States: {
      ...states,
      [RESUME_STATE_NAME]: {
        Type: 'Task',
        Resource: LOCAL_RESUME_RESOURCE,
        // The handler receives the context's Execution object itself and restores the original StartTime on it.
        Parameters: { 'execution.$': '$$.Execution' },
        TimeoutSeconds: MAX_TIMER_SECONDS,
        Next: stateName,
      },
    },
  };
  delete definition.TimeoutSeconds;
  if (timeoutSeconds !== undefined && timeoutSeconds <= MAX_TIMER_SECONDS) {
    definition.TimeoutSeconds = timeoutSeconds;
  }
  return new StateMachine(definition as unknown as StateMachineDefinition, { validationOptions: { noValidate: true } });
}
