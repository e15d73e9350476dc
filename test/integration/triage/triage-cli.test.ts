import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/triage.js';
import type { CliIo } from '../../../src/cli/io.js';
import { main } from '../../../src/cli/main.js';
import { formatSnapshot } from '../../../src/cluster/snapshot.js';
import { writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { type TriageEnvelope, TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { pvcScenario } from '../../support/triage-helpers.js';

function io(env: Record<string, string | undefined> = {}, tty?: CliIo['tty']) {
  const out = { stdout: '', stderr: '' };
  const value: CliIo = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    env,
    ...(tty ? { tty } : {}),
  };
  return { io: value, out };
}

const dir = mkdtempSync(join(tmpdir(), 'calmops-triage-cli-'));
const snapshot = join(dir, 'incident.yaml');
writeFileSync(snapshot, formatSnapshot(pvcScenario()));
const text = 'Quick triage PVC binding in student03';

describe('calmops triage', () => {
  it('prints a readable report and keeps stderr quiet', async () => {
    const { io: cli, out } = io();
    expect(await run([text, '--snapshot', snapshot], cli)).toBe(0);
    expect(out.stdout).toContain('Triage: pvc-binding in student03 (snapshot:incident.yaml)');
    expect(out.stdout).toMatch(/Root cause\n {2}1\. PVC_NO_DEFAULT_STORAGECLASS/);
    expect(out.stdout).toContain('$ kubectl get pvc -n student03 -o wide');
    expect(out.stderr).toBe('');
  });

  it('prints the envelope with --json, judged at the moment the snapshot was taken', async () => {
    const { io: cli, out } = io();
    expect(await run([text, '--snapshot', snapshot, '--json', '--step-budget', '1'], cli)).toBe(0);
    const envelope = TriageEnvelopeSchema.parse(JSON.parse(out.stdout));
    expect(envelope.execution.now).toBe('2025-01-01T10:20:00.000Z');
    expect(envelope.execution).toMatchObject({ stepBudget: 1, stepsExecuted: 1 });
  });

  it('logs the triage lines to stderr only with --verbose', async () => {
    const { io: cli, out } = io();
    const args = [text, '--snapshot', snapshot, '--json', '--verbose', '--now', '2025-01-01T11:00:00Z'];
    expect(await run(args, cli)).toBe(0);
    expect(JSON.parse(out.stdout).execution.now).toBe('2025-01-01T11:00:00.000Z');
    expect(out.stderr).toMatch(/^Triage engaged: intent=pvc-binding, template=pvc-binding@v1, steps=3, mode=replace$/m);
    expect(out.stderr).toMatch(/^Evidence collection: completeness=1, threshold=0.8, missing=\[\]$/m);
    expect(out.stderr).toMatch(/^Triage completed: duration=\d+ms, steps_executed=2\/3$/m);
  });

  it('colours the report only for a terminal without NO_COLOR, and shows progress only on a terminal', async () => {
    const terminal = io({}, { stdout: true, stderr: true, columns: 120 });
    expect(await run([text, '--snapshot', snapshot], terminal.io)).toBe(0);
    expect(terminal.out.stdout).toMatch(/^\u001b\[1mTriage: pvc-binding in student03/);
    expect(terminal.out.stderr).toMatch(
      /^\r\u001b\[Kcalmops triage: reading the cluster \(snapshot:incident\.yaml\)… /,
    );
    expect(terminal.out.stderr.endsWith('\r\u001b[K')).toBe(true);

    const noColour = io({ NO_COLOR: '1' }, { stdout: true, stderr: true });
    expect(await run([text, '--snapshot', snapshot], noColour.io)).toBe(0);
    expect(noColour.out.stdout).not.toContain('\u001b');

    const forced = io({ FORCE_COLOR: '1' });
    expect(await run([text, '--snapshot', snapshot, '-n', 'student03', '--intent', 'pvc-binding'], forced.io)).toBe(0);
    expect(forced.out.stdout).toContain('\u001b[1mFindings\u001b[22m');
    expect(forced.out.stdout).toMatch(/^ {2}\[\u001b\[3\dm(critical|high|medium|low)\u001b\[39m\] PVC_/m);
    expect(forced.out.stderr).toBe('');
  });

  it('exits 1, printing no report, for a namespace the snapshot does not have', async () => {
    const { io: cli, out } = io();
    expect(await run(['pvc binding', '-n', 'student3', '--snapshot', snapshot, '--json'], cli)).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      'calmops triage: namespace "student3" not found in snapshot incident.yaml (did you mean "student03"?); namespaces present: student03\n',
    );
  });

  it('sweeps the cluster when the words name no namespace and nothing in one, and says so', async () => {
    for (const words of ['the printer is jammed', 'pvc pending in Payments']) {
      const { io: cli, out } = io();
      expect(await run([words, '--snapshot', snapshot, '--json'], cli)).toBe(0);
      const routing = JSON.parse(out.stdout).routing;
      expect(routing.namespace).toBe('student03');
      expect(routing.why).toMatch(/no namespace named; the cluster sweep \(1 namespaces/);
    }
  });

  it('honours -n and --intent over the text', async () => {
    const { io: cli, out } = io();
    expect(
      await run(['something odd', '-n', 'student03', '--intent', 'pvc-binding', '--snapshot', snapshot, '--json'], cli),
    ).toBe(0);
    expect(JSON.parse(out.stdout).routing).toMatchObject({ intent: 'pvc-binding', namespace: 'student03' });
  });

  const bad: Array<[string, string[], RegExp]> = [
    ['an unknown intent', ['--intent', 'pvc-bindng', '-n', 'a', '--snapshot', snapshot], /did you mean pvc-binding\?/],
    [
      'an intent id that does not exist',
      ['--intent', 'pvc-bindng', '-n', 'student03', '--snapshot', snapshot],
      /unknown intent "pvc-bindng"; did you mean pvc-binding[\s\S]*calmops intents/,
    ],
    ['a namespace too long', ['pvc pending', '-n', 'a'.repeat(64), '--snapshot', snapshot], /not a valid namespace/],
    ['an invalid namespace', ['pvc pending', '-n', 'Bad_NS', '--snapshot', snapshot], /not a valid namespace/],
    ['a missing snapshot', ['pvc pending in a', '--snapshot', join(dir, 'nope.yaml')], /no such file/],
    ['a bad --now', [text, '--snapshot', snapshot, '--now', 'yesterday'], /--now: not an ISO time/],
    ['a step budget above 5', [text, '--snapshot', snapshot, '--step-budget', '6'], /--step-budget/],
    ['a step budget of 0', [text, '--snapshot', snapshot, '--step-budget', '0'], /--step-budget/],
    ['a bad timeout', [text, '--snapshot', snapshot, '--timeout', '-1'], /--timeout/],
    ['both sources', [text, '--snapshot', snapshot, '--kubeconfig', snapshot], /exclude each other/],
    ['--logs without --snapshot', [text, '--logs', snapshot], /--logs needs --snapshot/],
    ['nothing to triage', ['--snapshot', snapshot], /say what to triage/],
    ['an unknown flag', [text, '--frobnicate'], /frobnicate/],
    ['no cluster at all', [text], /no cluster to read/],
  ];
  it('answers vague words with a sweep of the namespace, never a refusal', async () => {
    for (const words of ['fix my printer in student03', 'pods broken in student03', 'is student03 ok?']) {
      const { io: cli, out } = io({ HOME: dir });
      expect(await run([words, '--snapshot', snapshot, '--json'], cli)).toBe(0);
      const envelope = JSON.parse(out.stdout) as TriageEnvelope;
      expect(envelope.routing.templateId).toBe('namespace-sweep@v1');
      expect(envelope.routing.intent).toBe('pvc-binding');
      expect(envelope.rootCause[0]?.resource).toMatchObject({ kind: 'PersistentVolumeClaim', name: 'data-db-0' });
    }
  });

  it('finds the namespace from a workload named in the words', async () => {
    const { io: cli, out } = io({ HOME: dir });
    expect(await run(['data-db-0 is stuck', '--snapshot', snapshot, '--json'], cli)).toBe(0);
    const envelope = JSON.parse(out.stdout) as TriageEnvelope;
    expect(envelope.routing.namespace).toBe('student03');
    expect(envelope.routing.why).toMatch(/namespace "student03" from the cluster/);
  });

  it('lists the candidates and exits 2 when the words match several namespaces', async () => {
    const twin = join(dir, 'twins.yaml');
    writeFileSync(twin, formatSnapshot([...pvcScenario('team-a'), ...pvcScenario('team-b')]));
    const { io: cli, out } = io({ HOME: dir });
    expect(await run(['data-db-0 is stuck', '--snapshot', twin], cli)).toBe(2);
    expect(out.stderr).toMatch(/matches several: team-a \([^)]*\), team-b/);
    expect(out.stderr).toMatch(/-n team-a/);
    expect(out.stdout).toBe('');
  });

  for (const [what, args, message] of bad) {
    it(`exits 2 with a clear message for ${what}`, async () => {
      const { io: cli, out } = io({ HOME: dir });
      expect(await run(args, cli)).toBe(2);
      expect(out.stderr).toMatch(message);
      expect(out.stdout).toBe('');
    });
  }

  describe('against a cluster named by a kubeconfig', () => {
    let server: SnapshotServer;
    const kubeconfig = join(dir, 'kubeconfig');
    beforeAll(async () => {
      server = await startSnapshotServer({ objects: pvcScenario('payments'), port: 0 });
      await writeKubeconfig(kubeconfig, { server: server.url, context: 'lab' });
    });
    afterAll(() => server.close());

    it('reads it with --kubeconfig, and from $KUBECONFIG', async () => {
      const a = io();
      expect(await run(['pvc stuck pending in payments', '--kubeconfig', kubeconfig, '--json'], a.io)).toBe(0);
      expect(JSON.parse(a.out.stdout).routing).toMatchObject({ cluster: 'lab', namespace: 'payments' });
      const b = io({ KUBECONFIG: kubeconfig });
      expect(await run(['pvc stuck pending in payments', '--json', '--context', 'lab'], b.io)).toBe(0);
      expect(JSON.parse(b.out.stdout).rootCause[0].code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    });

    it('refuses an unknown context', async () => {
      const { io: cli, out } = io();
      expect(await run(['pvc pending in payments', '--kubeconfig', kubeconfig, '--context', 'prod'], cli)).toBe(2);
      expect(out.stderr).toMatch(/context 'prod'/);
    });
  });
});

describe('calmops', () => {
  it('dispatches to a command', async () => {
    const { io: cli, out } = io();
    expect(await main(['triage', '--help'], cli)).toBe(0);
    expect(out.stdout).toMatch(/^Usage: calmops triage/);
  });

  it('exits 2 with usage for an unknown or missing command', async () => {
    const a = io();
    expect(await main(['frobnicate'], a.io)).toBe(2);
    expect(a.out.stderr).toMatch(/unknown command "frobnicate"[\s\S]*Commands:[\s\S]*triage/);
    const b = io();
    expect(await main([], b.io)).toBe(2);
    expect(b.out.stderr).toMatch(/^Usage: calmops <command>/);
  });
});
