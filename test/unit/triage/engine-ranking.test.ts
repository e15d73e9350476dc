import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import type { Finding, FindingInput } from '../../../src/triage/envelope/findings.js';
import { FindingSchema } from '../../../src/triage/envelope/findings.js';
import { buildNextActions, renderAction } from '../../../src/triage/envelope/next-actions.js';
import { confidenceRubric, priorityRubric, safetyRubric } from '../../../src/triage/envelope/rubrics.js';
import { dedupeFindings, rankRootCauses, recencyFactor } from '../../../src/triage/rank/root-cause.js';
import { finding, template } from '../../support/engine-fakes.js';

const f = (input: Partial<FindingInput> & Pick<FindingInput, 'code'>): Finding => FindingSchema.parse(finding(input));

const event = (name: string, kind: string, at: string): KubeObject => ({
  kind: 'Event',
  metadata: { name, namespace: 'shop' },
  involvedObject: { kind, name, namespace: 'shop' },
  lastTimestamp: at,
});

describe('root cause ranking', () => {
  const now = new Date('2025-01-01T12:00:00Z');

  it('ranks by severity, then confidence, and leaves informational findings out', () => {
    const causes = rankRootCauses(
      [
        f({ code: 'MEDIUM_SURE', severity: 'medium', confidence: 1, resource: { kind: 'Pod', name: 'a' } }),
        f({ code: 'HIGH_UNSURE', severity: 'high', confidence: 0.6, resource: { kind: 'Pod', name: 'b' } }),
        f({ code: 'CRITICAL', severity: 'critical', confidence: 0.9, resource: { kind: 'Pod', name: 'c' } }),
        f({ code: 'NOTE', severity: 'info', confidence: 1, resource: { kind: 'Pod', name: 'd' } }),
      ],
      { now, events: [] },
    );
    expect(causes.map((c) => [c.rank, c.code])).toEqual([
      [1, 'CRITICAL'],
      [2, 'MEDIUM_SURE'],
      [3, 'HIGH_UNSURE'],
    ]);
  });

  it('does not let a fault whose events are hours old outrank a current one', () => {
    const stale = f({ code: 'STALE', severity: 'critical', resource: { kind: 'Pod', name: 'old' } });
    const fresh = f({ code: 'FRESH', severity: 'high', resource: { kind: 'Pod', name: 'new' } });
    const causes = rankRootCauses([stale, fresh], {
      now,
      events: [event('old', 'Pod', '2025-01-01T02:00:00Z'), event('new', 'Pod', '2025-01-01T11:58:00Z')],
    });
    // Hours old, the critical fault weighs under half the current one: it is not named as a cause beside it.
    expect(causes.map((c) => c.code)).toEqual(['FRESH']);
  });

  it('names the upstream cause and lists the symptom that points at it as its impact, not as a cause', () => {
    const pvc = { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'shop' };
    const symptom = f({ code: 'POD_WAITS', severity: 'high', confidence: 0.9, related: [pvc] });
    const cause = f({ code: 'NO_CLASS', severity: 'high', confidence: 0.85, resource: pvc });
    const causes = rankRootCauses([symptom, cause], { now, events: [] });
    expect(causes.map((c) => c.code)).toEqual(['NO_CLASS']);
    expect(causes[0]?.impact?.map((i) => [i.code, i.resource.name])).toEqual([['POD_WAITS', 'web-1']]);
    expect(causes[0]?.change).toContain('PersistentVolumeClaim data');
  });

  it('names two faults that share no object and weigh alike as two independent causes', () => {
    const a = f({ code: 'A_FAULT', severity: 'high', confidence: 0.9, resource: { kind: 'Pod', name: 'a' } });
    const b = f({ code: 'B_FAULT', severity: 'high', confidence: 0.8, resource: { kind: 'Pod', name: 'b' } });
    const weak = f({ code: 'NOTE', severity: 'low', confidence: 0.5, resource: { kind: 'Pod', name: 'c' } });
    expect(rankRootCauses([a, b, weak], { now, events: [] }).map((c) => c.code)).toEqual(['A_FAULT', 'B_FAULT']);
  });

  it('fades with the age of the newest event', () => {
    expect(recencyFactor(undefined, now)).toBe(1);
    expect(recencyFactor(new Date('2025-01-01T11:50:00Z'), now)).toBe(1);
    expect(recencyFactor(new Date('2025-01-01T11:30:00Z'), now)).toBe(0.8);
    expect(recencyFactor(new Date('2025-01-01T08:00:00Z'), now)).toBe(0.5);
    expect(recencyFactor(new Date('2024-12-31T00:00:00Z'), now)).toBe(0.25);
  });
});

describe('dedupeFindings', () => {
  it('merges one code on one resource and sorts stably', () => {
    const out = dedupeFindings([
      f({ code: 'B', severity: 'medium', evidence: ['x'] }),
      f({ code: 'A', severity: 'medium', evidence: ['y'] }),
      f({ code: 'B', severity: 'high', confidence: 0.5, evidence: ['x', 'z'], message: 'worse' }),
    ]);
    expect(out.map((o) => [o.code, o.severity, o.confidence, o.evidence, o.message])).toEqual([
      ['B', 'high', 0.9, ['x', 'z'], 'worse'],
      ['A', 'medium', 0.9, ['y'], 'A on web-1'],
    ]);
  });
});

describe('rubrics', () => {
  it('is Low below the evidence threshold whatever the findings say', () => {
    const causes = rankRootCauses([f({ code: 'X', confidence: 1 })], { now: new Date(), events: [] });
    expect(confidenceRubric(0.75, 0.8, causes)).toBe('Low');
    expect(confidenceRubric(0.8, 0.8, causes)).toBe('Medium');
    expect(confidenceRubric(1, 0.8, causes)).toBe('High');
    expect(confidenceRubric(1, 0.8, [])).toBe('High');
    expect(confidenceRubric(0.9, 0.8, [])).toBe('Medium');
  });

  it('derives priority from the worst severity', () => {
    expect(priorityRubric([])).toBe('P4');
    expect(priorityRubric([f({ code: 'A', severity: 'info' })])).toBe('P4');
    expect(priorityRubric([f({ code: 'A', severity: 'medium' })])).toBe('P3');
    expect(priorityRubric([f({ code: 'A', severity: 'high' }), f({ code: 'B', severity: 'low' })])).toBe('P2');
    expect(priorityRubric([f({ code: 'A', severity: 'critical' })])).toBe('P1');
  });

  it('derives safety from the most dangerous action', () => {
    const read = { command: 'kubectl get pods', type: 'read-only', safety: 'SAFE', description: '' } as const;
    const change = { ...read, type: 'mutating', safety: 'REQUIRES_APPROVAL' } as const;
    expect(safetyRubric([read])).toBe('ALLOW');
    expect(safetyRubric([read, change])).toBe('REQUIRES_APPROVAL');
    expect(safetyRubric([change, { ...change, safety: 'DANGEROUS' }])).toBe('BLOCK');
  });
});

describe('next actions', () => {
  const t = template({
    rounds: [{ name: 'r', reads: [{ id: 'pods', kind: 'pods', evidence: 'pods' }] }],
    evidence: { required: ['pods'] },
    nextActions: [
      {
        when: 'always',
        command: 'kubectl describe {{resource.kind}} {{resource.name}} -n {{namespace}}',
        type: 'read-only',
        safety: 'SAFE',
        description: 'Describe the lead resource',
      },
      {
        when: 'fix-config',
        command: 'kubectl edit configmap app -n {{namespace}}',
        type: 'mutating',
        safety: 'REQUIRES_APPROVAL',
        description: 'Fix the configuration',
      },
    ],
  });

  it('matches remediation keys as well as codes, and renders placeholders', () => {
    const actions = buildNextActions({
      template: t,
      namespace: 'shop',
      findings: [f({ code: 'CONFIG_ERROR', remediation: ['fix-config'] })],
      allowMutating: true,
    });
    expect(actions.map((a) => a.command)).toEqual([
      'kubectl edit configmap app -n shop',
      'kubectl describe Pod web-1 -n shop',
    ]);
  });

  it("gives every action a rationale: the template's, or the finding that made it relevant", () => {
    const actions = buildNextActions({
      template: t,
      namespace: 'shop',
      findings: [f({ code: 'CONFIG_ERROR', confidence: 0.9, remediation: ['fix-config'] })],
      allowMutating: true,
    });
    expect(actions.map((a) => a.rationale)).toEqual([
      'Offered for CONFIG_ERROR on Pod web-1 (high, confidence 0.9).',
      'A standard read of every "Demo triage" triage, pointed at Pod web-1.',
    ]);
    const own = template({
      ...t,
      nextActions: [{ ...t.nextActions[0]!, rationale: 'Describe shows {{resource.name}} events in one place.' }],
    });
    const [described] = buildNextActions({
      template: own,
      namespace: 'shop',
      findings: [f({ code: 'X' })],
      allowMutating: false,
    });
    expect(described?.rationale).toBe('Describe shows web-1 events in one place.');
  });

  it('offers mutating actions only for current faults, never for low-severity history', () => {
    const offered = (severity: 'low' | 'medium', allowMutating = true) =>
      buildNextActions({
        template: t,
        namespace: 'shop',
        findings: [f({ code: 'CONFIG_ERROR', severity, remediation: ['fix-config'] })],
        allowMutating,
      }).map((a) => a.type);
    expect(offered('medium')).toEqual(['mutating', 'read-only']);
    expect(offered('low')).toEqual(['read-only']);
    expect(offered('medium', false)).toEqual(['read-only']);
  });

  it('skips an action whose placeholders cannot be filled', () => {
    expect(buildNextActions({ template: t, namespace: 'shop', findings: [], allowMutating: true })).toEqual([]);
    expect(renderAction('kubectl get {{resource.kind}}', 'shop', undefined)).toBeUndefined();
  });
});
