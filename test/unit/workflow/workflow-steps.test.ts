import { describe, expect, it } from 'vitest';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import type { WorkflowDeps } from '../../../src/workflow/deps.js';
import {
  NOTIFIER_STEPS,
  runStep,
  StepPayloadError,
  UnknownStepError,
  WORKFLOW_STEPS,
} from '../../../src/workflow/dispatch.js';
import { hypothesesFromCauses, readSpecFromRequest } from '../../../src/workflow/reads.js';

describe('targeted reads', () => {
  it('turns thread commands into small read specs', () => {
    expect(
      readSpecFromRequest(classifyRequest('kubectl logs web-1 -c app --previous --tail 20'), 'shop'),
    ).toMatchObject({
      verb: 'logs',
      name: 'web-1',
      namespace: 'shop',
      container: 'app',
      previous: true,
      tailLines: 20,
    });
    expect(readSpecFromRequest(classifyRequest('kubectl get pods -l app=web -n other'), 'shop')).toMatchObject({
      verb: 'list',
      kind: 'pods',
      namespace: 'other',
      labelSelector: 'app=web',
    });
    expect(readSpecFromRequest(classifyRequest('kubectl get nodes'), 'shop')).not.toHaveProperty('namespace');
    expect(readSpecFromRequest(classifyRequest('kubectl get secrets'), 'shop')).toBeUndefined();
  });

  it('gives each ranked cause the reads that test it', () => {
    const [pod, pvc] = hypothesesFromCauses(
      [
        {
          rank: 1,
          code: 'CRASH',
          summary: 'crashing',
          confidence: 0.8,
          resource: { kind: 'Pod', name: 'web-1', namespace: 'shop' },
        },
        {
          rank: 2,
          code: 'PVC',
          summary: 'pending',
          confidence: 0.5,
          resource: { kind: 'PersistentVolumeClaim', name: 'data' },
        },
      ],
      'shop',
    );
    expect(pod?.reads.map((r) => r.verb)).toEqual(['get', 'events', 'logs']);
    expect(pvc?.reads.map((r) => `${r.verb}:${r.namespace}`)).toEqual(['get:shop', 'events:shop']);
    expect(pod?.id).toBe('h1');
  });
});

describe('dispatch', () => {
  const deps = {} as WorkflowDeps;
  it('has a step for every name the definitions use', async () => {
    const { readFileSync } = await import('node:fs');
    const steps = new Set<string>();
    for (const name of ['diagnostic', 'review', 'break-glass']) {
      const text = readFileSync(new URL(`../../../statemachines/${name}.asl.json`, import.meta.url), 'utf8');
      for (const m of text.matchAll(/"step": "([a-z-]+)"/g)) steps.add(m[1] ?? '');
    }
    const known = new Set([
      ...Object.keys(WORKFLOW_STEPS),
      ...Object.keys(NOTIFIER_STEPS),
      'triage',
      'specialist',
      'read',
      'test',
    ]);
    expect([...steps].filter((s) => !known.has(s))).toEqual([]);
  });

  it('refuses unknown steps and invalid payloads with the step named', async () => {
    await expect(runStep(WORKFLOW_STEPS, deps, { step: 'nope' })).rejects.toBeInstanceOf(UnknownStepError);
    await expect(runStep(WORKFLOW_STEPS, deps, { step: 'route' })).rejects.toThrow(
      /^\[route\] invalid payload: sessionId/,
    );
    await expect(
      runStep(WORKFLOW_STEPS, deps, { step: 'route', sessionId: 'a#b', message: {} }),
    ).rejects.toBeInstanceOf(StepPayloadError);
  });
});
