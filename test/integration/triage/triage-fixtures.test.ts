import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../../bench/support/incident-corpus.js';
import { loadSnapshotFiles, snapshotNow } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { ENVELOPE_BYTES_LIMIT } from '../../../src/triage/engine.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { SWEEP_INTENT } from '../../../src/triage/route/routing.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';
import { triageAt, withSnapshotServer } from '../../support/triage-helpers.js';

/**
 * Every snapshot fixture, replayed through the snapshot API server and the real reader: the intent, the top-ranked
 * root cause and the decisive evidence must be what the fixture's `# expect:` header says.
 */

const dir = fileURLToPath(new URL('../../fixtures/snapshots/', import.meta.url));
const all = readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const files = all.filter((f) => /^[a-z0-9-]+--[a-z0-9-]+\.ya?ml$/.test(f));
/** Scenarios with `intent=none`: healthy namespaces that no intent may raise an alarm about. */
const healthy = all.filter((f) => !files.includes(f));

interface Expectation {
  intent: string;
  rootCause: string | undefined;
  evidence: string;
  namespace?: string;
  /** `# now: ISO`, the instant the scenario is judged at; default the snapshot's newest timestamp. */
  now?: Date;
}

function expectation(file: string): Expectation {
  const lines = readFileSync(join(dir, file), 'utf8').split('\n');
  const header = lines.find((l) => l.startsWith('# expect:'));
  const nowLine = lines.find((l) => l.startsWith('# now:'));
  const match =
    header && /^# expect:\s*intent=(\S+)\s+rootCause=(\S+)(?:\s+namespace=(\S+))?\s+evidence=(.*)$/.exec(header);
  if (!match) throw new Error(`${file}: missing "# expect: intent=… rootCause=… evidence=…" header`);
  const [, intent, cause, namespace, evidence] = match as unknown as [
    string,
    string,
    string,
    string | undefined,
    string,
  ];
  return {
    intent,
    rootCause: /^(none|-)$/i.test(cause) ? undefined : cause,
    evidence: evidence.trim(),
    ...(namespace ? { namespace } : {}),
    ...(nowLine ? { now: new Date(nowLine.slice('# now:'.length).trim()) } : {}),
  };
}

/** The namespace an incident lives in: the one holding most of the snapshot's namespaced objects. */
function busiestNamespace(objects: readonly KubeObject[]): string {
  const counts = new Map<string, number>();
  for (const o of objects)
    if (o.metadata.namespace) counts.set(o.metadata.namespace, (counts.get(o.metadata.namespace) ?? 0) + 1);
  const [best] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (!best) throw new Error('the snapshot has no namespaced objects');
  return best[0];
}

describe('snapshot fixtures', () => {
  it('cover every intent with at least two scenarios, here or in the incident corpus', () => {
    const perIntent = new Map<string, number>();
    const count = (intent: string) => perIntent.set(intent, (perIntent.get(intent) ?? 0) + 1);
    for (const file of files) count(file.split('--')[0] as string);
    for (const incident of loadCorpus()) count(incident.intent);
    // The sweep is every intent at once: the healthy scenarios and every vague request exercise it.
    const thin = loadTemplates()
      .ids()
      .filter((id) => id !== SWEEP_INTENT && (perIntent.get(id) ?? 0) < 2);
    expect(thin).toEqual([]);
  });

  for (const file of healthy) {
    it(`${file} raises no alarm under any intent`, async () => {
      const expected = expectation(file);
      expect(expected.intent).toBe('none');
      const snapshot = await loadSnapshotFiles(join(dir, file));
      const namespace = expected.namespace ?? busiestNamespace(snapshot.objects);
      const now = expected.now ?? snapshotNow(snapshot.objects);
      await withSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs }, async (server) => {
        for (const intent of loadTemplates().ids()) {
          const envelope = await triageAt(server.url, { intent, namespace, ...(now ? { now } : {}) });
          const alarming = envelope.findings.filter((f) => ['medium', 'high', 'critical'].includes(f.severity));
          expect({ intent, alarming: alarming.map((f) => f.code) }).toEqual({ intent, alarming: [] });
          expect({ intent, priority: envelope.rubrics.priority }).toEqual({ intent, priority: 'P4' });
        }
      });
    });
  }

  for (const file of files) {
    it(file, async () => {
      const expected = expectation(file);
      const snapshot = await loadSnapshotFiles(join(dir, file));
      const namespace = expected.namespace ?? busiestNamespace(snapshot.objects);
      const now = expected.now ?? snapshotNow(snapshot.objects);
      const envelope = await withSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs }, (server) =>
        triageAt(server.url, { intent: expected.intent, namespace, ...(now ? { now } : {}) }),
      );
      expect(TriageEnvelopeSchema.safeParse(envelope).success).toBe(true);
      expect(envelope.routing.intent).toBe(expected.intent);
      expect(envelope.evidence.completeness).toBeGreaterThanOrEqual(envelope.evidence.threshold);
      expect(Buffer.byteLength(JSON.stringify(envelope))).toBeLessThan(ENVELOPE_BYTES_LIMIT);
      if (expected.rootCause === undefined) {
        expect(envelope.rootCause.filter((c) => c.confidence >= 0.5).map((c) => c.code)).toEqual([]);
        expect(envelope.findings.filter((f) => ['high', 'critical'].includes(f.severity))).toEqual([]);
        return;
      }
      expect(envelope.rootCause[0]?.code).toBe(expected.rootCause);
      const top = envelope.rootCause[0]!;
      // The root cause names the entity to change; its finding sits on a link of the chain (the pod it owns).
      const links = new Set([top.resource, ...(top.chain ?? [])].map((r) => `${r.kind}/${r.name}`));
      const proof = envelope.findings
        .filter((f) => f.code === top.code && links.has(`${f.resource.kind}/${f.resource.name}`))
        .flatMap((f) => [f.message, ...f.evidence])
        .join('\n');
      expect(proof).toContain(expected.evidence);
    });
  }
});
