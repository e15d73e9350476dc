import { describe, expect, it } from 'vitest';
import { FaultInjector, type FaultPlan, type RequestFacts } from '../../../src/snapshot-api/faults.js';

const plan = (over: Partial<FaultPlan> = {}): FaultPlan => ({
  latencyMs: 0,
  faultRate: 0,
  faultStatus: 500,
  seed: 1,
  rules: [],
  ...over,
});

const list = (resource: string, extra: Partial<RequestFacts> = {}): RequestFacts => ({
  verb: 'list',
  resource,
  namespace: 'shop',
  path: `/api/v1/namespaces/shop/${resource}`,
  url: `GET /api/v1/namespaces/shop/${resource}`,
  hasContinue: false,
  ...extra,
});

describe('FaultInjector', () => {
  it('targets one resource with a status', () => {
    const injector = new FaultInjector(
      plan({ rules: [{ match: { resource: 'events' }, effect: { type: 'status', status: 403 } }] }),
    );
    expect(injector.decide(list('events')).effect).toEqual({ type: 'status', status: 403 });
    expect(injector.decide(list('pods')).effect).toBeUndefined();
  });

  it('stops after `times` applications', () => {
    const injector = new FaultInjector(
      plan({ rules: [{ match: { withContinue: true }, effect: { type: 'status', status: 410 }, times: 1 }] }),
    );
    expect(injector.decide(list('pods')).effect).toBeUndefined();
    expect(injector.decide(list('pods', { hasContinue: true })).effect).toEqual({ type: 'status', status: 410 });
    expect(injector.decide(list('pods', { hasContinue: true })).effect).toBeUndefined();
  });

  it('adds delays from rules on top of the base latency', () => {
    const injector = new FaultInjector(
      plan({ latencyMs: 50, rules: [{ match: { resource: 'pods' }, effect: { type: 'delay', ms: 200 } }] }),
    );
    expect(injector.decide(list('pods'))).toEqual({ delayMs: 250 });
    expect(injector.decide(list('events'))).toEqual({ delayMs: 50 });
  });

  it('makes the same random decisions for the same seed, whatever the arrival order', () => {
    const urls = Array.from({ length: 200 }, (_, i) => list(`r${i % 20}`, { url: `GET /x/${i % 20}` }));
    const run = (order: RequestFacts[], seed: number) => {
      const injector = new FaultInjector(plan({ faultRate: 0.3, seed }));
      return order.map((f) => `${f.url}#${injector.decide(f).effect ? 'fault' : 'ok'}`).sort();
    };
    const forward = run(urls, 7);
    expect(run([...urls].reverse(), 7)).toEqual(forward);
    expect(run(urls, 8)).not.toEqual(forward);
    const faults = forward.filter((x) => x.endsWith('fault')).length;
    expect(faults).toBeGreaterThan(30);
    expect(faults).toBeLessThan(90);
  });

  it('never fails discovery through the random rate, so clients can still map resources', () => {
    const injector = new FaultInjector(plan({ faultRate: 1 }));
    expect(injector.decide({ ...list('x'), verb: 'discovery' }).effect).toBeUndefined();
    expect(injector.decide(list('pods')).effect).toEqual({ type: 'status', status: 500 });
  });
});
