import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/** The rules every state machine definition follows, checked mechanically on the files that are deployed. */

const require = createRequire(import.meta.url);
const validator = require('asl-validator') as (
  definition: unknown,
  options?: { checkPaths?: boolean; checkArn?: boolean },
) => {
  isValid: boolean;
  errors: unknown[];
};

const MACHINES = ['diagnostic', 'review', 'break-glass'] as const;
const TRANSIENT = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
];
const FORBIDDEN = ['QueryLanguage', 'Assign', 'Arguments', 'Output'];

type State = Record<string, unknown> & { Type: string; Next?: string; End?: boolean };
type Definition = { States: Record<string, State>; QueryLanguage?: string };

function load(name: string): Definition {
  return JSON.parse(
    readFileSync(new URL(`../../../statemachines/${name}.asl.json`, import.meta.url), 'utf8'),
  ) as Definition;
}

function keysDeep(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) keysDeep(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      keysDeep(v, out);
    }
  }
  return out;
}

/** States reachable from `from` through Next, Default and Choices (not through Catch). */
function successors(def: Definition, from: string): string[] {
  const s = def.States[from] as State & { Default?: string; Choices?: Array<{ Next: string }> };
  return [s.Next, s.Default, ...(s.Choices ?? []).map((c) => c.Next)].filter((x): x is string => typeof x === 'string');
}

/** A Catch target "tells the thread": it is, or leads without another task to, a notify step. */
function tellsTheThread(def: Definition, target: string, seen = new Set<string>()): boolean {
  if (seen.has(target)) return false;
  seen.add(target);
  const state = def.States[target];
  if (!state) return false;
  if (state.Type === 'Task') {
    const payload = (state['Parameters'] as { Payload?: { step?: string } } | undefined)?.Payload;
    return typeof payload?.step === 'string';
  }
  return successors(def, target).some((n) => tellsTheThread(def, n, seen));
}

describe.each(MACHINES)('%s.asl.json', (name) => {
  const def = load(name);
  const tasks = Object.entries(def.States).filter(([, s]) => s.Type === 'Task');

  it('is valid Amazon States Language', () => {
    // The validator annotates the object it is given; validate a copy.
    const result = validator(load(name), { checkPaths: true, checkArn: false });
    expect(result.errors).toEqual([]);
    expect(result.isValid).toBe(true);
  });

  it('uses JSONPath only (no JSONata, variables, Arguments or Output)', () => {
    expect(def.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
    const keys = keysDeep(def.States);
    for (const forbidden of FORBIDDEN) expect(keys).not.toContain(forbidden);
  });

  it.each(tasks.map(([n]) => n))(
    'Task %s has a timeout, retries transient errors and catches failures into the thread',
    (stateName) => {
      const state = def.States[stateName] as State & {
        Resource: string;
        TimeoutSeconds?: number;
        TimeoutSecondsPath?: string;
        Retry?: Array<{ ErrorEquals: string[] }>;
        Catch?: Array<{ ErrorEquals: string[]; Next: string }>;
      };
      expect(state.TimeoutSeconds !== undefined || state.TimeoutSecondsPath !== undefined).toBe(true);
      const retried = (state.Retry ?? []).flatMap((r) => r.ErrorEquals);
      if (state.Resource.includes(':lambda:')) for (const e of TRANSIENT) expect(retried).toContain(e);
      else expect(retried.some((e) => e.startsWith('StepFunctions.'))).toBe(true);
      const catches = state.Catch ?? [];
      const all = catches.find((c) => c.ErrorEquals.includes('States.ALL'));
      expect(all).toBeDefined();
      if (stateName !== 'NotifyFailure') expect(tellsTheThread(def, all?.Next ?? '')).toBe(true);
      if (state.Resource.endsWith('.waitForTaskToken')) {
        const timeout = catches.find((c) => c.ErrorEquals.includes('States.Timeout'));
        expect(timeout).toBeDefined();
        expect(tellsTheThread(def, timeout?.Next ?? '')).toBe(true);
      }
    },
  );
});
