import { describe, expect, it } from 'vitest';
import {
  ENTRY_THRESHOLDS,
  InvalidNamespaceError,
  isDns1123Label,
  parseNamespace,
  resolveEntry,
} from '../../../src/triage/route/dictionary.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';

const registry = loadTemplates();

describe('isDns1123Label', () => {
  it.each([
    ['payments', true],
    ['student03', true],
    ['kube-system', true],
    ['a', true],
    ['0abc', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['Payments', false],
    ['pay_ments', false],
    ['-payments', false],
    ['payments-', false],
    ['pay.ments', false],
    ['', false],
  ])('%s → %s', (value, valid) => {
    expect(isDns1123Label(value)).toBe(valid);
  });
});

describe('parseNamespace', () => {
  it.each([
    ['-n payments crashloop', 'payments', '-n payments'],
    ['crashloop -n=payments', 'payments', '-n=payments'],
    ['crashloop --namespace x', 'x', '--namespace x'],
    ['crashloop --namespace=x', 'x', '--namespace=x'],
    ['crashloop namespace: x', 'x', 'namespace: x'],
    ['crashloop namespace=x', 'x', 'namespace=x'],
    ['crashloop ns x', 'x', 'ns x'],
    ['crashloop ns: x', 'x', 'ns: x'],
    ['crashloop project: team-a', 'team-a', 'project: team-a'],
    ['crashloop in namespace x', 'x', 'namespace x'],
    ['crashloop in the checkout namespace', 'checkout', 'checkout namespace'],
    ['pvc binding in student03', 'student03', 'in student03'],
    ['pods stuck in pending in payments, can you look?', 'payments', 'in payments'],
    ['crashloop in `payments`.', 'payments', 'in `payments`'],
    ['crashloop in the default namespace', 'default', 'default namespace'],
  ])('%s → %s', (text, namespace, source) => {
    const match = parseNamespace(text);
    expect(match.namespace).toBe(namespace);
    expect(match.source).toBe(source);
    expect(match.rest).not.toContain(source);
  });

  it('prefers an explicit flag over "in x" and marks it explicit', () => {
    const match = parseNamespace('crashloop in checkout -n payments');
    expect(match).toMatchObject({ namespace: 'payments', explicit: true });
    expect(parseNamespace('crashloop in checkout')).toMatchObject({ namespace: 'checkout', explicit: false });
  });

  it('does not take ordinary words, numbers or invalid names after "in"', () => {
    expect(parseNamespace('pods stuck in pending').namespace).toBeUndefined();
    expect(parseNamespace('crashloop in my namespace').namespace).toBeUndefined();
    expect(parseNamespace('restarts in 5 minutes').namespace).toBeUndefined();
    expect(parseNamespace('crashloop in the cluster').namespace).toBeUndefined();
    const upper = parseNamespace('crashloop in Payments');
    expect(upper.namespace).toBeUndefined();
    expect(upper.ignored).toBe('in Payments');
    expect(parseNamespace('crash in route', { isReserved: (w) => w === 'route' }).namespace).toBeUndefined();
  });

  it.each([
    ['-n Payments_Prod crashloop', /"Payments_Prod".*upper-case letters and "_"/],
    ['crashloop --namespace', /--namespace needs a namespace name/],
    ['crashloop namespace:', /needs a namespace name/],
    ['crashloop -n -x', /-n needs a namespace name/],
    [`crashloop -n ${'a'.repeat(64)}`, /64 characters long \(at most 63\)/],
    ['crashloop in the Payments namespace', /upper-case letters \(did you mean "payments"\?\)/],
    ['crashloop -n payments-', /must end with a letter or digit/],
    ['crashloop -n a -n b', /more than one namespace \("a" and "b"\)/],
  ])('refuses %s', (text, message) => {
    let error: unknown;
    try {
      parseNamespace(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidNamespaceError);
    expect((error as Error).message).toMatch(message);
  });

  it('accepts the same namespace given twice', () => {
    expect(parseNamespace('-n shop crashloop in namespace shop').namespace).toBe('shop');
  });
});

describe('resolveEntry', () => {
  it('resolves the seed example with a one-line why', () => {
    const r = resolveEntry('Quick triage PVC binding in student03', registry);
    expect(r).toMatchObject({
      intent: 'pvc-binding',
      namespace: 'student03',
      ambiguous: false,
      triggerMode: 'replace',
    });
    expect(r.confidence).toBeGreaterThanOrEqual(ENTRY_THRESHOLDS.replace);
    expect(r.why).toBe('matched "pvc" and "binding" (pvc-binding synonyms); namespace from "in student03"');
    expect(r.why).not.toContain('\n');
    expect(r.suggestions[0]).toEqual({ intent: 'pvc-binding', score: expect.any(Number) });
  });

  it('explains typos with the word they were read as', () => {
    const r = resolveEntry('crashlopbackoff -n payments', registry);
    expect(r.intent).toBe('crashloop-analysis');
    expect(r.why).toContain('"crashlopbackoff" (≈"crashloopbackoff")');
  });

  it('strips slash commands and Slack mentions', () => {
    for (const text of [
      '/triage -n payments crashloop',
      '<@U024BE7LH> crashloop in payments',
      '/calmops crashloop ns payments',
    ]) {
      expect(resolveEntry(text, registry)).toMatchObject({ intent: 'crashloop-analysis', namespace: 'payments' });
    }
  });

  it('is deterministic and independent of word order', () => {
    const a = resolveEntry('binding pvc -n lab', registry);
    const b = resolveEntry('pvc binding -n lab', registry);
    expect(resolveEntry('binding pvc -n lab', registry)).toEqual(a);
    expect({ intent: a.intent, confidence: a.confidence }).toEqual({ intent: b.intent, confidence: b.confidence });
  });

  it('offers the nearest intents instead of guessing when the text is ambiguous', () => {
    const r = resolveEntry('pending in payments', registry);
    expect(r.intent).toBeUndefined();
    expect(r.ambiguous).toBe(true);
    expect(r.triggerMode).toBe('observe');
    expect(r.namespace).toBe('payments');
    expect(r.suggestions.map((s) => s.intent).sort()).toEqual([
      'ingress-pending',
      'pvc-binding',
      'scheduling-failures',
    ]);
    expect(r.why).toMatch(/^ambiguous: "pending" fits /);
  });

  it('gives no intent and no suggestion for text without triage vocabulary', () => {
    const r = resolveEntry('good morning, how are you', registry);
    expect(r).toMatchObject({ confidence: 0, suggestions: [], ambiguous: false, triggerMode: 'observe' });
    expect(r.intent).toBeUndefined();
    expect(r.why).toContain('no triage vocabulary recognized');
  });

  it('offers intents spelled like a badly mistyped word without choosing one', () => {
    const r = resolveEntry('evicshun', registry);
    expect(r.intent).toBeUndefined();
    expect(r.suggestions.map((s) => s.intent)).toEqual(['node-not-ready']);
    expect(r.why).toContain('nearest by spelling: node-not-ready');
  });

  it('uses suggest mode for a plausible but not clear intent', () => {
    const r = resolveEntry('restarts and the image in shop', registry);
    expect(r.triggerMode).toBe('suggest');
    expect(r.intent).toBe('crashloop-analysis');
    expect(r.suggestions.map((s) => s.intent)).toContain('image-pull');
    expect(r.confidence).toBeGreaterThanOrEqual(ENTRY_THRESHOLDS.suggest);
    expect(r.confidence).toBeLessThan(ENTRY_THRESHOLDS.replace);
    expect(r.why).toMatch(/^plausible: /);
  });

  it('keeps a namespace that looks like a vocabulary word when it is only similar', () => {
    expect(resolveEntry('crashloop in analytics', registry).namespace).toBe('analytics');
  });

  it('propagates an invalid namespace as InvalidNamespaceError', () => {
    expect(() => resolveEntry('crashloop -n Shop_1', registry)).toThrow(InvalidNamespaceError);
  });

  it('rounds confidences and bounds suggestions', () => {
    const r = resolveEntry('pods stuck pending, pvc pending, ingress pending', registry);
    expect(r.suggestions.length).toBeLessThanOrEqual(3);
    for (const s of r.suggestions) expect(Math.round(s.score * 100) / 100).toBe(s.score);
  });
});
