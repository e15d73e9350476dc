import { describe, expect, it } from 'vitest';
import { resolveEntry } from '../../../src/triage/route/dictionary.js';
import { InvalidTriageRequestError, UnknownIntentError } from '../../../src/triage/route/errors.js';
import { decideRoute, HINT_STRENGTH, type RouteDecision, SWEEP_INTENT } from '../../../src/triage/route/routing.js';
import { loadTemplates, type TemplateRegistry } from '../../../src/triage/templates/template-registry.js';
import type { TriageTemplate } from '../../../src/triage/templates/template-schema.js';

const templates = loadTemplates();

/** The shipped templates without the sweep: what routing does when no sweep template is loaded. */
function withoutSweep(registry: TemplateRegistry): TemplateRegistry {
  const list = registry.list().filter((t) => t.id !== SWEEP_INTENT);
  return {
    get: (id) => list.find((t) => t.id === id),
    list: () => list,
    ids: () => list.map((t) => t.id),
  };
}

function readIds(template: TriageTemplate): string[] {
  return template.rounds.flatMap((r) => r.reads.map((read) => read.id));
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

/** The focused template ran with the sweep alongside: its own reads, then the sweep's under `sweep-` ids. */
function expectFocusedWithSweep(decision: RouteDecision, intent: string): void {
  const focused = templates.get(intent) as TriageTemplate;
  expect(decision.template.id).toBe(intent);
  expect(decision.sweep).toBe(false);
  const ids = readIds(decision.template);
  for (const id of readIds(focused)) expect(ids).toContain(id);
  expect(ids).toContain('sweep-pods');
  expect(ids).toContain('sweep-previous-logs');
  expect(decision.template.evidence).toEqual(focused.evidence);
  expect(decision.template.analyzers.slice(0, focused.analyzers.length)).toEqual(focused.analyzers);
  expect(decision.template.analyzers).toEqual(expect.arrayContaining(['workload-rollout', 'dependencies']));
}

describe('decideRoute: an explicit intent', () => {
  it('runs the focused template with the sweep alongside, hinting only that intent', () => {
    const decision = decideRoute({ intent: 'pvc-binding', namespace: 'student03' }, templates, resolveEntry);
    expectFocusedWithSweep(decision, 'pvc-binding');
    expect(decision.hints).toEqual(['pvc-binding']);
    expect(decision.hintStrength).toBe(HINT_STRENGTH.named);
    expect(decision.intentConfidence).toBe(1);
    expect(decision.triggerMode).toBe('replace');
    expect(decision.namespace).toBe('student03');
    expect(decision.why).toBe('intent "pvc-binding" was given explicitly; namespace "student03" given explicitly');
  });

  it('takes the namespace from the words when none is given, and says so', () => {
    const decision = decideRoute(
      { intent: 'crashloop-analysis', text: 'api restarts in payments' },
      templates,
      resolveEntry,
    );
    expect(decision.template.id).toBe('crashloop-analysis');
    expect(decision.namespace).toBe('payments');
    expect(decision.why).toBe('intent "crashloop-analysis" was given explicitly; namespace from "in payments"');
    // The words do not change the intent that was asked for.
    expect(decision.hints).toEqual(['crashloop-analysis']);
  });

  it('prefers an explicit namespace over one in the words', () => {
    const decision = decideRoute(
      { intent: 'crashloop-analysis', text: 'api restarts in payments', namespace: 'payments-staging' },
      templates,
      resolveEntry,
    );
    expect(decision.namespace).toBe('payments-staging');
    expect(decision.why).not.toContain('in payments"');
  });

  it('runs the sweep as it is when the sweep itself is asked for, with the words as weak hints', () => {
    const sweep = templates.get(SWEEP_INTENT) as TriageTemplate;
    const decision = decideRoute({ intent: SWEEP_INTENT, text: 'pods crashloop in shop' }, templates, resolveEntry);
    expect(decision.template).toBe(sweep);
    expect(decision.sweep).toBe(true);
    expect(decision.hints[0]).toBe('crashloop-analysis');
    expect(decision.hintStrength).toBe(HINT_STRENGTH.weak);
    expect(decision.namespace).toBe('shop');
  });

  it('refuses an intent that does not exist, suggesting the nearest', () => {
    const error = thrown(() => decideRoute({ intent: 'crashlop', text: 'x' }, templates, resolveEntry));
    expect(error).toBeInstanceOf(UnknownIntentError);
    const unknown = error as UnknownIntentError;
    expect(unknown.suggestions).toEqual(['crashloop-analysis']);
    expect(unknown.message).toContain('unknown intent "crashlop"; did you mean crashloop-analysis?');
    expect(unknown.message).toContain(`known: ${templates.ids().join(', ')}`);

    const shortened = thrown(() => decideRoute({ intent: 'pvc-bind' }, templates, resolveEntry)) as UnknownIntentError;
    expect(shortened.suggestions).toEqual(['pvc-binding']);
  });

  it('offers no suggestion for an intent like none that exists', () => {
    const error = thrown(() => decideRoute({ intent: 'zzzzzzzz' }, templates, resolveEntry)) as UnknownIntentError;
    expect(error).toBeInstanceOf(UnknownIntentError);
    expect(error.suggestions).toEqual([]);
    expect(error.message).not.toContain('did you mean');
  });

  it('runs the focused template alone when no sweep template is loaded', () => {
    const registry = withoutSweep(templates);
    const decision = decideRoute({ intent: 'pvc-binding' }, registry, resolveEntry);
    expect(decision.template).toBe(templates.get('pvc-binding'));
    expect(readIds(decision.template).some((id) => id.startsWith('sweep-'))).toBe(false);
  });
});

describe('decideRoute: free text', () => {
  it('runs a clearly named intent focused, with the sweep alongside', () => {
    const decision = decideRoute({ text: 'Quick triage PVC binding in student03' }, templates, resolveEntry);
    expectFocusedWithSweep(decision, 'pvc-binding');
    expect(decision.hints).toEqual(['pvc-binding']);
    expect(decision.hintStrength).toBe(HINT_STRENGTH.clear);
    expect(decision.intentConfidence).toBeGreaterThanOrEqual(0.9);
    expect(decision.intentConfidence).toBeLessThanOrEqual(1);
    expect(decision.triggerMode).toBe('replace');
    expect(decision.namespace).toBe('student03');
    expect(decision.why).toContain('namespace from "in student03"');
  });

  it('replaces the namespace the words name with an explicit one, in the decision and its explanation', () => {
    const decision = decideRoute(
      { text: 'Quick triage PVC binding in student03', namespace: 'student04' },
      templates,
      resolveEntry,
    );
    expect(decision.template.id).toBe('pvc-binding');
    expect(decision.namespace).toBe('student04');
    expect(decision.why).toContain('namespace "student04" given explicitly');
    expect(decision.why).not.toContain('student03');
  });

  it.each([
    ['something is off in shop', 'shop'],
    ['is shop healthy?', undefined],
    ['blorp zzz', undefined],
  ])('runs the sweep for the vague request %j, never refusing it', (text, namespace) => {
    const decision = decideRoute({ text }, templates, resolveEntry);
    expect(decision.sweep).toBe(true);
    expect(decision.template.id).toBe(SWEEP_INTENT);
    expect(decision.template).toBe(templates.get(SWEEP_INTENT));
    expect(decision.hints).not.toContain(SWEEP_INTENT);
    expect(decision.namespace).toBe(namespace);
    expect(decision.why).toMatch(/the whole namespace/);
  });

  it('says a check of the whole namespace was asked for when the words ask for one', () => {
    const decision = decideRoute({ text: 'is shop healthy?' }, templates, resolveEntry);
    expect(decision.hints).toEqual([]);
    expect(decision.why).toMatch(/^a check of the whole namespace was asked for \(/);
  });

  it('sweeps when the words point at several areas, keeping them as weak hints', () => {
    const decision = decideRoute({ text: 'pods crashloop and pvc pending in shop' }, templates, resolveEntry);
    expect(decision.sweep).toBe(true);
    expect(decision.hints).toEqual(expect.arrayContaining(['pvc-binding', 'crashloop-analysis']));
    expect(decision.hintStrength).toBe(HINT_STRENGTH.weak);
    expect(decision.namespace).toBe('shop');
    expect(decision.why).toContain('the words point at');
  });

  it('sweeps, hinting the likely intent first, when the words lean one way without being sure', () => {
    const decision = decideRoute({ text: 'my pvc is stuck pending in payments' }, templates, resolveEntry);
    expect(decision.sweep).toBe(true);
    expect(decision.hints[0]).toBe('pvc-binding');
    expect(decision.hintStrength).toBeGreaterThan(1);
    expect(decision.hintStrength).toBeLessThan(HINT_STRENGTH.named);
  });

  it.each(['', '   ', undefined])('refuses an empty request (%j)', (text) => {
    const error = thrown(() =>
      decideRoute({ ...(text === undefined ? {} : { text }), namespace: 'shop' }, templates, resolveEntry),
    );
    expect(error).toBeInstanceOf(InvalidTriageRequestError);
  });

  it('without a sweep template, acts only on words that name one intent clearly', () => {
    const registry = withoutSweep(templates);
    const clear = decideRoute({ text: 'Quick triage PVC binding in student03' }, registry, resolveEntry);
    expect(clear.template).toBe(templates.get('pvc-binding'));
    expect(clear.sweep).toBe(false);
    expect(clear.hintStrength).toBe(1);
    const error = thrown(() => decideRoute({ text: 'pods crashloop and pvc pending in shop' }, registry, resolveEntry));
    expect(error).toBeInstanceOf(UnknownIntentError);
    expect((error as UnknownIntentError).suggestions).toEqual(
      expect.arrayContaining(['pvc-binding', 'crashloop-analysis']),
    );
  });
});
