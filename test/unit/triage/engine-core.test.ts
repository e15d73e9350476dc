import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import type { TriageDeps } from '../../../src/triage/engine.js';
import { runTriage } from '../../../src/triage/engine.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import {
  InvalidNamespaceError,
  InvalidTriageRequestError,
  UnknownIntentError,
} from '../../../src/triage/route/errors.js';
import {
  analyzer,
  fakeReader,
  finding,
  memoryLogger,
  pod,
  registry,
  resolveEntry,
  template,
} from '../../support/engine-fakes.js';

const crashTemplate = template({
  id: 'crash-demo',
  rounds: [
    {
      name: 'inventory',
      reads: [
        { id: 'pods', kind: 'pods', evidence: 'pods' },
        { id: 'events', kind: 'events', evidence: 'events' },
        { id: 'deploys', kind: 'deployments', evidence: 'workloads' },
      ],
    },
    {
      name: 'logs of restarting containers',
      reads: [
        {
          id: 'logs',
          kind: 'logs',
          container: '{{container}}',
          previous: true,
          evidence: 'logs',
          forEach: { read: 'pods', where: 'restarting', each: 'container', max: 2 },
        },
      ],
    },
    {
      name: 'configmaps',
      reads: [{ id: 'configmaps', kind: 'configmaps', evidence: 'config' }],
    },
  ],
  evidence: { required: ['pods', 'events', 'logs', 'config'], threshold: 0.8 },
  nextActions: [
    {
      when: 'CRASH',
      command: 'kubectl logs {{resource.name}} -n {{namespace}} --previous',
      type: 'read-only',
      safety: 'SAFE',
      description: 'Read the last crash of {{resource.name}}',
    },
    {
      when: 'CRASH',
      command: 'kubectl rollout restart deployment/web -n {{namespace}}',
      type: 'mutating',
      safety: 'REQUIRES_APPROVAL',
      description: 'Restart the deployment',
    },
    {
      when: 'always',
      command: 'kubectl get pods -n {{namespace}}',
      type: 'read-only',
      safety: 'SAFE',
      description: 'List pods',
    },
  ],
});

const objects = {
  pods: [pod('web-1', { restarts: 7 }), pod('web-2', { restarts: 2 }), pod('web-3', { restarts: 12 }), pod('db-0')],
  events: [] as KubeObject[],
  deployments: [] as KubeObject[],
  configmaps: [] as KubeObject[],
};
const logs = {
  'shop/web-1/app:previous': 'panic: missing DATABASE_URL',
  'shop/web-2/app:previous': 'panic: missing DATABASE_URL',
  'shop/web-3/app:previous': 'connecting with password=hunter2 failed',
};

const crashAnalyzer = analyzer('demo', (ctx) => {
  const out = [];
  for (const p of ctx.objects('pods')) {
    const text = ctx.log(p.metadata.name, 'app', true);
    if (text) out.push(finding({ code: 'CRASH', resource: { kind: 'Pod', name: p.metadata.name }, evidence: [text] }));
  }
  return out;
});

function deps(reader = fakeReader({ objects, logs }), extra: Partial<TriageDeps> = {}): TriageDeps {
  return {
    reader,
    templates: registry(crashTemplate),
    analyzers: { demo: crashAnalyzer },
    logger: memoryLogger(),
    resolveEntry,
    ...extra,
  };
}

describe('runTriage', () => {
  it('runs the reads of a round in parallel', async () => {
    const reader = fakeReader({ objects, logs, latencyMs: 20 });
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop' }, deps(reader));
    expect(reader.maxInFlight).toBe(3);
    expect(envelope.execution.stepsExecuted).toBe(3);
    expect(TriageEnvelopeSchema.safeParse(envelope).success).toBe(true);
  });

  it('fans out forEach over the worst restarting containers, bounded by max', async () => {
    const reader = fakeReader({ objects, logs });
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop' }, deps(reader));
    const logCalls = reader.calls.filter((c) => c.op === 'logs').map((c) => c.query);
    expect(logCalls).toEqual([
      { namespace: 'shop', pod: 'web-3', container: 'app', previous: true, tailLines: 100 },
      { namespace: 'shop', pod: 'web-1', container: 'app', previous: true, tailLines: 100 },
    ]);
    expect(envelope.findings.map((f) => f.resource.name)).toEqual(['web-1', 'web-3']);
    expect(envelope.execution.requests).toBe(6);
  });

  it('scrubs credentials from everything it returns', async () => {
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop' }, deps());
    const text = JSON.stringify(envelope);
    expect(text).not.toContain('hunter2');
    expect(text).toContain('password=[REDACTED]');
  });

  it('turns rounds beyond the step budget into step-budget gaps', async () => {
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop', stepBudget: 1 }, deps());
    expect(envelope.execution).toMatchObject({ stepsExecuted: 1, stepBudget: 1 });
    expect(envelope.evidence.missing).toEqual(['logs', 'config']);
    expect(envelope.evidence.completeness).toBe(0.5);
    expect(envelope.evidence.gaps).toContainEqual(expect.objectContaining({ type: 'config', reason: 'step-budget' }));
    expect(envelope.rubrics.confidence).toBe('Low');
    expect(envelope.routing.stepBudget).toBe(1);
  });

  it('classifies failed reads as gaps and withholds mutating actions while evidence is short', async () => {
    const reader = fakeReader({ objects, logs, fail: { events: 'forbidden', configmaps: 'crash' } });
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop' }, deps(reader));
    expect(envelope.evidence.missing).toEqual(['events', 'config']);
    expect(envelope.evidence.gaps).toEqual([
      expect.objectContaining({ type: 'events', reason: 'forbidden' }),
      expect.objectContaining({ type: 'config', reason: 'server-error' }),
    ]);
    expect(envelope.rubrics.confidence).toBe('Low');
    expect(envelope.nextActions.every((a) => a.type === 'read-only')).toBe(true);
    expect(envelope.rubrics.safety).toBe('ALLOW');
    expect(envelope.summary).toMatch(/events: forbidden/);
  });

  it('offers mutating actions, labelled, once evidence is complete', async () => {
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop' }, deps());
    expect(envelope.evidence.completeness).toBe(1);
    expect(envelope.nextActions.map((a) => a.command)).toEqual([
      'kubectl logs web-1 -n shop --previous',
      'kubectl rollout restart deployment/web -n shop',
      'kubectl logs web-3 -n shop --previous',
      'kubectl get pods -n shop',
    ]);
    expect(envelope.rubrics.safety).toBe('REQUIRES_APPROVAL');
    expect(envelope.rubrics.priority).toBe('P2');
    expect(envelope.rubrics.confidence).toBe('High');
  });

  it('returns what it gathered when the deadline passes, even if a read never answers', async () => {
    const reader = fakeReader({ objects, logs, hang: ['deployments'] });
    const envelope = await runTriage({ intent: 'crash-demo', namespace: 'shop', timeoutMs: 150 }, deps(reader));
    expect(envelope.execution.timedOut).toBe(true);
    expect(envelope.execution.stepsExecuted).toBe(1);
    expect(envelope.evidence.present).toEqual(['pods', 'events']);
    expect(envelope.evidence.gaps).toContainEqual(expect.objectContaining({ type: 'workloads', reason: 'timeout' }));
    expect(envelope.evidence.gaps).toContainEqual(expect.objectContaining({ type: 'logs', reason: 'timeout' }));
    expect(envelope.rubrics.confidence).toBe('Low');
  });

  it('logs the three lines of the triage contract', async () => {
    const logger = memoryLogger();
    await runTriage({ intent: 'crash-demo', namespace: 'shop', stepBudget: 2 }, deps(undefined, { logger }));
    expect(logger.lines[0]).toBe('Triage engaged: intent=crash-demo, template=crash-demo@v1, steps=2, mode=replace');
    expect(logger.lines[1]).toBe('Evidence collection: completeness=0.75, threshold=0.8, missing=[config]');
    expect(logger.lines[2]).toMatch(/^Triage completed: duration=\d+ms, steps_executed=2\/2$/);
  });

  it('gives the same envelope for the same input, timing aside', async () => {
    const strip = (e: Awaited<ReturnType<typeof runTriage>>) => ({
      ...e,
      execution: { ...e.execution, durationMs: 0 },
    });
    const a = await runTriage({ text: 'crash-demo in shop' }, deps());
    const b = await runTriage({ text: 'crash-demo in shop' }, deps());
    expect(strip(a)).toEqual(strip(b));
  });

  it('treats the newest timestamp read as now unless told otherwise', async () => {
    const events = [
      {
        kind: 'Event',
        metadata: { name: 'e1', namespace: 'shop' },
        involvedObject: { kind: 'Pod', name: 'web-1' },
        lastTimestamp: '2025-01-01T12:30:00Z',
      },
    ];
    const reader = fakeReader({ objects: { ...objects, events }, logs });
    const a = await runTriage({ intent: 'crash-demo', namespace: 'shop' }, deps(reader));
    expect(a.execution.now).toBe('2025-01-01T12:30:00.000Z');
    const now = new Date('2025-02-01T00:00:00Z');
    const b = await runTriage({ intent: 'crash-demo', namespace: 'shop', now }, deps(reader));
    expect(b.execution.now).toBe(now.toISOString());
  });

  it('does not call a truncated list healthy with high confidence', async () => {
    const quiet = analyzer('quiet', () => []);
    const capped = template({
      id: 'capped',
      analyzers: ['quiet'],
      rounds: [{ name: 'pods', reads: [{ id: 'pods', kind: 'pods', evidence: 'pods', maxItems: 2 }] }],
      evidence: { required: ['pods'] },
    });
    const run = (maxItems: number) =>
      runTriage(
        { intent: 'capped', namespace: 'shop' },
        deps(undefined, {
          templates: registry({
            ...capped,
            rounds: [{ ...capped.rounds[0]!, reads: [{ ...capped.rounds[0]!.reads[0]!, maxItems }] }],
          }),
          analyzers: { quiet },
        }),
      );
    const truncated = await run(2);
    expect(truncated.rubrics.confidence).toBe('Medium');
    expect(truncated.summary).toMatch(/Only part of the namespace's pods was read \(list limit reached\)/);
    const whole = await run(100);
    expect(whole.rubrics.confidence).toBe('High');
    expect(whole.summary).not.toMatch(/list limit/);
  });

  it('keeps going when an analyzer throws', async () => {
    const logger = memoryLogger();
    const broken = analyzer('broken', () => {
      throw new Error('bug');
    });
    const t = { ...crashTemplate, analyzers: ['broken', 'demo', 'absent'] };
    const envelope = await runTriage(
      { intent: 'crash-demo', namespace: 'shop' },
      deps(undefined, {
        templates: registry(t),
        analyzers: new Map([
          ['broken', broken],
          ['demo', crashAnalyzer],
        ]),
        logger,
      }),
    );
    expect(envelope.findings).toHaveLength(2);
    expect(logger.warnings).toEqual([
      'Analyzer "absent" named by template crash-demo is not registered; skipped',
      'Analyzer broken failed: bug',
    ]);
  });
});

describe('routing', () => {
  it('routes free text through the dictionary', async () => {
    const envelope = await runTriage({ text: 'crash-demo in shop please' }, deps());
    expect(envelope.routing).toMatchObject({ intent: 'crash-demo', namespace: 'shop', intentConfidence: 0.9 });
  });

  it('lets an explicit intent and namespace win over the text', async () => {
    const envelope = await runTriage({ text: 'something in other', intent: 'crash-demo', namespace: 'shop' }, deps());
    expect(envelope.routing).toMatchObject({ intent: 'crash-demo', namespace: 'shop', intentConfidence: 1 });
    expect(envelope.routing.why).toMatch(/explicitly/);
  });

  it('says so when the namespace was given explicitly rather than found in the text', async () => {
    const resolve = () => ({
      intent: 'crash-demo',
      confidence: 0.9,
      why: 'matched "crash" (crash-demo synonyms); no namespace named',
      suggestions: [],
      ambiguous: false,
      triggerMode: 'replace' as const,
    });
    const envelope = await runTriage({ text: 'crash', namespace: 'shop' }, deps(undefined, { resolveEntry: resolve }));
    expect(envelope.routing.why).toBe('matched "crash" (crash-demo synonyms); namespace "shop" given explicitly');
  });

  it('says so when no intent matches and no sweep template is loaded', async () => {
    const resolve = () => ({
      confidence: 0,
      why: 'no triage vocabulary recognized',
      suggestions: [],
      ambiguous: false,
      triggerMode: 'observe' as const,
    });
    const error = await runTriage(
      { text: 'fix the printer in shop' },
      deps(undefined, { resolveEntry: resolve }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownIntentError);
    expect((error as Error).message).toMatch(
      /no single intent matches "fix the printer in shop" and no sweep template/,
    );
  });

  it('refuses unknown intents with suggestions', async () => {
    await expect(runTriage({ intent: 'crash-dmeo', namespace: 'shop' }, deps())).rejects.toMatchObject({
      name: 'UnknownIntentError',
      suggestions: ['crash-demo'],
    });
    const error = await runTriage({ text: 'the weather in shop' }, deps()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownIntentError);
    expect((error as UnknownIntentError).suggestions).toEqual(['crash-demo']);
  });

  it('refuses invalid or missing namespaces', async () => {
    await expect(runTriage({ intent: 'crash-demo', namespace: 'Shop_1' }, deps())).rejects.toBeInstanceOf(
      InvalidNamespaceError,
    );
    await expect(runTriage({ intent: 'crash-demo' }, deps())).rejects.toBeInstanceOf(InvalidNamespaceError);
  });

  it('refuses a step budget outside 1..5', async () => {
    for (const stepBudget of [0, 6, 2.5]) {
      await expect(runTriage({ intent: 'crash-demo', namespace: 'shop', stepBudget }, deps())).rejects.toBeInstanceOf(
        InvalidTriageRequestError,
      );
    }
  });
});
