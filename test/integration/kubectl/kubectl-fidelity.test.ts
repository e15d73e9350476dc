import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { loadSnapshotFiles } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { redactText } from '../../../src/redact/index.js';
import { writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { answerTypedRead } from '../../../src/workflow/typed-read.js';
import { readYaml } from '../../../src/yaml-text.js';

/**
 * Fidelity: the thread's answer to a typed read against what the real kubectl prints for the same read against the
 * same snapshot API server, over the demo cluster and the incident corpus. Both sides are redacted by the same rule
 * (secrets in logs and env values are never shown); ages that kubectl counts from its own clock are compared as ages.
 * Reads are generated from each snapshot's objects, so every namespace is read the way a person would read it.
 */

const run = promisify(execFile);
const kubectlFound = !spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).error;
const ROOT = join(import.meta.dirname, '..', '..', '..');
const DEMO = join(ROOT, 'local', 'demo', 'demo-cluster.yaml');
const INCIDENTS = [
  'm-redis-oomkilled',
  'c-sched-insufficient-cpu',
  'n-svc-wrong-targetport',
  's-pvc-no-default-storageclass-after-longhorn-upgrade',
  'c-crashloop-liveness-wrong-port',
  'm-search-hpa-maxed',
  's-node-memory-pressure-evicting-report-builder',
  'm-nightly-export-cronjob',
].map((slug) => join(ROOT, 'test', 'fixtures', 'incidents', slug));

interface Cluster {
  name: string;
  server: SnapshotServer;
  kubeconfig: string;
  objects: KubeObject[];
  now?: string;
  /** The incident's own namespace, where its fault shows; absent for the demo, whose every namespace is read. */
  namespace?: string;
}

/** A read of every kind a person types during an incident, for one namespace of a snapshot. */
function readsFor(objects: readonly KubeObject[], namespace: string): string[] {
  const of = (kind: string) => objects.filter((o) => o.kind === kind && o.metadata.namespace === namespace);
  const pods = of('Pod');
  const pod = pods[0]?.metadata.name;
  const restarted = pods.find((p) =>
    (p.status?.containerStatuses ?? []).some((c: { restartCount?: number }) => (c.restartCount ?? 0) > 0),
  );
  const deployment = of('Deployment')[0]?.metadata.name;
  const service = of('Service')[0]?.metadata.name;
  const pvc = of('PersistentVolumeClaim')[0]?.metadata.name;
  const n = `-n ${namespace}`;
  const reads = [
    `kubectl get pods ${n}`,
    `kubectl get pods ${n} -o wide`,
    `kubectl get pods ${n} --show-labels`,
    `kubectl get pods ${n} --field-selector status.phase=Running`,
    `kubectl get pods ${n} --field-selector status.phase!=Running -o name`,
    `kubectl get events ${n} --sort-by=.lastTimestamp`,
    `kubectl get events ${n} --field-selector type=Warning`,
    `kubectl get deploy,rs,svc ${n}`,
    `kubectl get all ${n} --no-headers`,
    `kubectl events ${n}`,
    `kubectl get pods ${n} -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.spec.nodeName}{"\\t"}{.status.containerStatuses[*].restartCount}{"\\n"}{end}'`,
    `kubectl get pods ${n} -o custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[*].image,LIMITS:.spec.containers[0].resources.limits`,
    `kubectl get pods ${n} --sort-by=.metadata.creationTimestamp -L app`,
    `kubectl describe pods ${n}`,
    `kubectl get events ${n} | grep -i warning`,
    `kubectl get pods ${n} | wc -l`,
    `kubectl get pods ${n} --no-headers | awk '{print $1}'`,
    `kubectl top pods ${n} --containers`,
    `kubectl top pods ${n} --sort-by=memory`,
  ];
  if (pod) {
    reads.push(
      `kubectl get pod ${pod} ${n} -o yaml`,
      `kubectl describe pod ${pod} ${n}`,
      `kubectl get pod ${pod} ${n} -o jsonpath='{.spec.containers[*].name}'`,
      `kubectl logs ${pod} ${n} --tail 5 --all-containers`,
      `kubectl events ${n} --for pod/${pod}`,
    );
  }
  if (restarted) reads.push(`kubectl logs ${restarted.metadata.name} ${n} --previous --all-containers --prefix`);
  if (deployment) {
    reads.push(
      `kubectl describe deployment ${deployment} ${n}`,
      `kubectl logs deployment/${deployment} ${n} --tail=3`,
      `kubectl get deploy ${deployment} ${n} -o json`,
    );
  }
  if (service) reads.push(`kubectl describe svc ${service} ${n}`, `kubectl get endpoints ${n} -o wide`);
  if (pvc) reads.push(`kubectl describe pvc ${pvc} ${n}`, `kubectl get pvc ${n} -o wide`);
  return reads;
}

const CLUSTER_READS = [
  'kubectl get nodes -o wide',
  'kubectl get nodes --show-labels',
  "kubectl describe nodes | grep -A 8 'Allocated resources'",
  'kubectl get storageclass',
  'kubectl describe storageclass',
  'kubectl get pv --sort-by=.spec.capacity.storage',
  'kubectl get pods -A --field-selector spec.nodeName=nowhere',
  'kubectl get pods -A --field-selector spec.bogus=1',
  'kubectl get pods -A -l "app in (a"',
  'kubectl get events -A --sort-by=.lastTimestamp | tail -5',
  'kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints',
  'kubectl top nodes',
  'kubectl top pods -A',
  'kubectl top nodes --sort-by=cpu',
];

/** Ages kubectl counts from its own clock differ by the second the two sides ran at; their presence is compared. */
function normalize(text: string): string {
  // kubectl top's "age: 9097h59m27.31s" is a Go duration counted from each side's own clock.
  return text
    .replace(/age: [0-9hms.]+/g, 'age: <age>')
    .replace(/\b\d+(?:y\d*d?|d\d*h?|h\d*m?|m\d*s?|s)\b(?= |\)|$)/gm, '<age>')
    .replace(/ +$/gm, '')
    .trimEnd();
}

async function kubectl(kubeconfig: string, command: string, dir: string): Promise<string> {
  const line = command.replace(/^kubectl /, `kubectl --kubeconfig ${kubeconfig} --cache-dir ${join(dir, 'cache')} `);
  try {
    const { stdout, stderr } = await run('bash', ['-c', line], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, TZ: 'UTC' },
      timeout: 30_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
}

describe.skipIf(!kubectlFound)('typed reads answered as kubectl prints them', () => {
  const clusters: Cluster[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'calmops-fidelity-'));
    const sources = [
      { name: 'demo', path: DEMO },
      ...INCIDENTS.map((path) => ({ name: path.split('/').pop() ?? path, path: join(path, 'snapshot.yaml') })),
    ];
    for (const source of sources) {
      const loaded = await loadSnapshotFiles(source.path);
      const folder = join(source.path, '..');
      let now: string | undefined;
      let namespace: string | undefined;
      if (source.name !== 'demo') {
        const text = await readFile(join(folder, 'case.yaml'), 'utf8');
        const c = readYaml(text) as { now?: string; namespace?: string };
        now = String(c.now ?? '');
        namespace = c.namespace;
      }
      const server = await startSnapshotServer({ objects: loaded.stored, logs: loaded.logs, ...(now ? { now } : {}) });
      const kubeconfig = join(dir, `${source.name}.kubeconfig`);
      await writeKubeconfig(kubeconfig, { server: server.url, namespace: 'default' });
      clusters.push({
        name: source.name,
        server,
        kubeconfig,
        objects: loaded.objects,
        ...(now ? { now } : {}),
        ...(namespace ? { namespace } : {}),
      });
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clusters.map((c) => c.server.close()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers at least 100 reads over the demo and the incident corpus the same as kubectl', async () => {
    const results: Array<{
      cluster: string;
      command: string;
      verdict: 'faithful' | 'refused' | 'different';
      detail?: string;
    }> = [];
    for (const cluster of clusters) {
      // Every namespace of the demo, and each incident's own: the reads of an incident's bystander namespaces run the
      // same printers on the healthy objects the demo already has, and each read is a kubectl process.
      const namespaces = cluster.namespace
        ? [cluster.namespace]
        : [...new Set(cluster.objects.filter((o) => o.kind === 'Pod').map((o) => o.metadata.namespace ?? ''))];
      const commands = [
        ...[...CLUSTER_READS.slice(0, cluster.name === 'demo' ? CLUSTER_READS.length : 3), 'kubectl top nodes'],
        ...namespaces.flatMap((ns) => readsFor(cluster.objects, ns)),
      ];
      const reader = createClusterReader({ kubeconfig: { file: cluster.kubeconfig } });
      // Several reads at once: each is a kubectl process and an in-process answer, independent of the others.
      const compared = await inBatches(commands, 4, async (command): Promise<(typeof results)[number]> => {
        const [real, answer] = await Promise.all([
          kubectl(cluster.kubeconfig, command, dir),
          answerTypedRead(command, { reader, namespace: 'default', now: new Date() }),
        ]);
        if (answer === undefined) throw new Error(`not read as a kubectl command: ${command}`);
        if (answer.outcome === 'refused') {
          return { cluster: cluster.name, command, verdict: 'refused', detail: answer.reason };
        }
        const expected = normalize(redactText(real));
        const got = normalize(answer.text);
        let same = got === expected;
        if (!same && /-o (yaml|json)\b/.test(command)) {
          same = JSON.stringify(readYaml(redactText(real))) === JSON.stringify(readYaml(answer.text));
        }
        return {
          cluster: cluster.name,
          command,
          verdict: same ? 'faithful' : 'different',
          ...(same ? {} : { detail: firstDifference(expected, got) }),
        };
      });
      results.push(...compared);
    }
    const faithful = results.filter((r) => r.verdict === 'faithful').length;
    const refused = results.filter((r) => r.verdict === 'refused');
    const different = results.filter((r) => r.verdict === 'different');
    console.log(
      `kubectl fidelity: ${results.length} reads compared, ${faithful} faithful, ${refused.length} refused, ${different.length} different`,
    );
    for (const d of different) console.log(`  different: [${d.cluster}] ${d.command}\n    ${d.detail}`);
    expect(results.length).toBeGreaterThanOrEqual(100);
    expect(refused.map((r) => `${r.command}: ${r.detail}`)).toEqual([]);
    expect(different.map((d) => `[${d.cluster}] ${d.command}: ${d.detail}`)).toEqual([]);
  }, 600_000);

  it('describes nodes under a channel scope that leaves out kube-node-lease, saying the Lease was not read', async () => {
    const demo = clusters.find((c) => c.name === 'demo');
    if (!demo) throw new Error('the demo cluster is not served');
    const reader = createClusterReader({ kubeconfig: { file: demo.kubeconfig }, scope: { namespaces: ['payments'] } });
    const answer = await answerTypedRead("kubectl describe nodes | grep -A 8 'Allocated resources'", {
      reader,
      namespace: 'payments',
    });
    expect(answer?.outcome).toBe('ok');
    expect(answer && 'text' in answer ? answer.text : '').toMatch(/Allocated resources:\n/);
    const whole = await answerTypedRead('kubectl describe nodes', { reader, namespace: 'payments' });
    const text = whole && 'text' in whole ? whole.text : '';
    const nodes = demo.objects.filter((o) => o.kind === 'Node');
    expect(text.match(/^Name: /gm)?.length).toBe(nodes.length);
    expect(text).toMatch(
      /^Lease:\s+Failed to get lease: leases\.coordination\.k8s\.io ".+" refused before sending: calmops would have read Lease/m,
    );
  });
});

/** Runs `work` over the items, `width` at a time, and returns the results in the items' order. */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}

function firstDifference(expected: string, got: string): string {
  const a = expected.split('\n');
  const b = got.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: kubectl ${JSON.stringify(a[i])} / thread ${JSON.stringify(b[i])}`;
  }
  return 'same lines';
}
