import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/triage.js';
import type { CliIo } from '../../../src/cli/io.js';
import { formatSnapshot, loadSnapshotFiles, snapshotNow } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { type TriageEnvelope, TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';
import { triageAt, withSnapshotServer } from '../../support/triage-helpers.js';

/**
 * Replaying an incident the way an operator does, through `calmops triage --snapshot`: "now" is the moment of the
 * snapshot (or `--now`), history does not outrank the fault at hand, and nothing secret in logs or env leaves.
 */

const dir = mkdtempSync(join(tmpdir(), 'calmops-triage-replay-'));
const T = Date.parse('2025-03-01T12:00:00Z');
const at = (minutesBefore: number) => new Date(T - minutesBefore * 60_000).toISOString();

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    env: { HOME: dir },
  };
  const code = await run(args, io);
  return { code, ...out };
}

async function envelopeOf(args: string[]): Promise<TriageEnvelope> {
  const result = await cli([...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return TriageEnvelopeSchema.parse(JSON.parse(result.stdout));
}

function writeScenario(name: string, objects: KubeObject[], logs: Record<string, string>): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, formatSnapshot(objects));
  writeFileSync(join(dir, `${name}.logs.json`), JSON.stringify(logs));
  return file;
}

function event(pod: string, reason: string, message: string, lastMinutesBefore: number, count: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pod}.${reason.toLowerCase()}`, namespace: 'shop', uid: `ev-${pod}-${reason}` },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod, namespace: 'shop' },
    reason,
    message,
    type: 'Warning',
    count,
    firstTimestamp: at(lastMinutesBefore + 60),
    lastTimestamp: at(lastMinutesBefore),
  };
}

function crashPod(
  name: string,
  opts: { looping: boolean; finishedMinutesBefore: number; reason: string; exitCode: number },
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, creationTimestamp: at(24 * 60) },
    spec: {
      nodeName: 'worker-1',
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/shop/app:2.0.1',
          resources: { limits: { memory: '256Mi' } },
          env: [
            { name: 'DB_PASSWORD', value: 'Hunt3r2-env-value' },
            { name: 'API_TOKEN', value: 'tok_9f8e7d6c5b4a39281706' },
          ],
        },
      ],
    },
    status: {
      phase: 'Running',
      startTime: at(24 * 60),
      conditions: [{ type: 'Ready', status: opts.looping ? 'False' : 'True', lastTransitionTime: at(300) }],
      containerStatuses: [
        {
          name: 'app',
          ready: !opts.looping,
          restartCount: opts.looping ? 9 : 4,
          image: 'registry.example.com/shop/app:2.0.1',
          state: opts.looping
            ? { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' } }
            : { running: { startedAt: at(opts.finishedMinutesBefore - 1) } },
          lastState: {
            terminated: {
              reason: opts.reason,
              exitCode: opts.exitCode,
              startedAt: at(opts.finishedMinutesBefore + 1),
              finishedAt: at(opts.finishedMinutesBefore),
            },
          },
        },
      ],
    },
  };
}

/** One pod crash-looping now; another that was OOM-killed and probe-failing for hours overnight, fine since. */
const objects: KubeObject[] = [
  crashPod('cart-old', { looping: false, finishedMinutesBefore: 8 * 60, reason: 'OOMKilled', exitCode: 137 }),
  event('cart-old', 'BackOff', 'Back-off restarting failed container app in pod cart-old', 8 * 60, 90),
  event('cart-old', 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500', 8 * 60, 300),
  crashPod('checkout-now', { looping: true, finishedMinutesBefore: 2, reason: 'Error', exitCode: 1 }),
  event('checkout-now', 'BackOff', 'Back-off restarting failed container app in pod checkout-now', 1, 12),
];
const logs = {
  'shop/checkout-now/app:previous': [
    'starting checkout 2.0.1',
    'connecting to postgres://checkout:Hunt3r2-log-value@db.shop.svc:5432/checkout',
    'sending alert to oncall.lead@example.com with Authorization: Bearer abcDEF123456ghiJKL7890',
    'Error: missing required environment variable PAYMENT_API_KEY (DB_PASSWORD=Hunt3r2-env-value API_TOKEN=tok_9f8e7d6c5b4a39281706)',
  ].join('\n'),
};
const incident = writeScenario('overnight', objects, logs);
const SECRETS = [
  'Hunt3r2-env-value',
  'Hunt3r2-log-value',
  'tok_9f8e7d6c5b4a39281706',
  'abcDEF123456ghiJKL7890',
  'oncall.lead@example.com',
];

describe('replaying a snapshot', () => {
  it('judges it at the snapshot moment, with the current fault ahead of last night', async () => {
    const envelope = await envelopeOf(['pods keep restarting in shop', '--snapshot', incident]);
    expect(envelope.execution.now).toBe(at(1));
    expect(envelope.rootCause[0]).toMatchObject({
      code: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
      resource: { kind: 'Pod', name: 'checkout-now' },
    });
    const history = envelope.findings.filter((f) => f.resource.name === 'cart-old');
    expect(history.every((f) => ['info', 'low'].includes(f.severity))).toBe(true);
    expect(envelope.findings.map((f) => f.code)).not.toContain('CONTAINER_LIVENESS_FAILING');
    expect(envelope.rubrics.priority).toBe('P2');
  });

  it('uses --now when given, and the same fault seen two days later is no longer current', async () => {
    const atIncident = await envelopeOf(['pods keep restarting in shop', '--snapshot', incident, '--now', at(0)]);
    expect(atIncident.execution.now).toBe(at(0));
    expect(atIncident.rootCause[0]?.resource.name).toBe('checkout-now');
    const later = new Date(T + 2 * 24 * 3600_000).toISOString();
    const afterwards = await envelopeOf(['pods keep restarting in shop', '--snapshot', incident, '--now', later]);
    expect(afterwards.execution.now).toBe(later);
    expect(afterwards.rootCause[0]?.confidence ?? 0).toBeLessThan(atIncident.rootCause[0]?.confidence ?? 0);
  });

  it('scrubs passwords, tokens, bearer strings and emails from logs and env before returning them', async () => {
    const envelope = await envelopeOf(['-n', 'shop', '--intent', 'crashloop-analysis', '--snapshot', incident]);
    const text = JSON.stringify(envelope);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    // The decisive line survives, with the credentials replaced rather than the evidence dropped.
    expect(text).toContain('missing required environment variable PAYMENT_API_KEY');
    expect(text).toContain('DB_PASSWORD=[REDACTED]');
    const report = await cli(['-n', 'shop', '--intent', 'crashloop-analysis', '--snapshot', incident]);
    for (const secret of SECRETS) expect(report.stdout).not.toContain(secret);
  });

  it('reads a quoted request that starts with -n as text', async () => {
    const envelope = await envelopeOf(['-n shop crashloop', '--snapshot', incident]);
    expect(envelope.routing).toMatchObject({ intent: 'crashloop-analysis', namespace: 'shop' });
    expect(envelope.routing.why).toMatch(/namespace from "-n shop"/);
  });
});

describe('fixture secrets', () => {
  const fixtures = fileURLToPath(new URL('../../fixtures/snapshots/', import.meta.url));
  const credentialName = /PASSWORD|TOKEN|SECRET|API_?KEY|_URL$/i;

  it('never return an env value that holds a credential, under any intent', async () => {
    const files = readdirSync(fixtures).filter((f) => /--.+\.yaml$/.test(f));
    let checked = 0;
    for (const file of files) {
      const snapshot = await loadSnapshotFiles(join(fixtures, file));
      const values = snapshot.objects
        .filter((o) => o.kind === 'Pod' || o.kind === 'Deployment')
        .flatMap((o) => {
          const spec = o.kind === 'Pod' ? o.spec : o.spec?.template?.spec;
          return (spec?.containers ?? []) as Array<{ env?: Array<{ name: string; value?: string }> }>;
        })
        .flatMap((c) => c.env ?? [])
        .filter((e) => credentialName.test(e.name) && typeof e.value === 'string' && e.value.length >= 8)
        .map((e) => e.value as string);
      if (values.length === 0) continue;
      const intent = file.split('--')[0] as string;
      const namespace = snapshot.objects.find((o) => o.kind === 'Pod')?.metadata.namespace as string;
      const now = snapshotNow(snapshot.objects);
      const envelope = await withSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs }, (server) =>
        triageAt(server.url, { intent, namespace, ...(now ? { now } : {}) }),
      );
      const text = JSON.stringify(envelope);
      for (const value of values) expect({ file, leaked: text.includes(value) }).toEqual({ file, leaked: false });
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});

describe('the healthy fixture', () => {
  const healthy = fileURLToPath(new URL('../../fixtures/snapshots/healthy.yaml', import.meta.url));

  it('raises no alarm for the intent each natural request routes to', async () => {
    const templates = loadTemplates();
    for (const id of templates.ids()) {
      // The template's first example, pointed at the healthy namespace: the phrasing a user would type.
      const example = templates.get(id)?.examples[0] as string;
      const envelope = await envelopeOf([example, '-n', 'wiki', '--snapshot', healthy]);
      expect(envelope.routing.intent).toBe(id);
      const alarming = envelope.findings.filter((f) => ['medium', 'high', 'critical'].includes(f.severity));
      expect({ id, alarming: alarming.map((f) => f.code) }).toEqual({ id, alarming: [] });
      expect({ id, priority: envelope.rubrics.priority }).toEqual({ id, priority: 'P4' });
      expect({ id, complete: envelope.evidence.completeness }).toEqual({ id, complete: 1 });
      expect({ id, mutating: envelope.nextActions.filter((a) => a.type === 'mutating') }).toEqual({
        id,
        mutating: [],
      });
    }
  });
});
