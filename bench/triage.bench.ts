import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliEntry } from '../build/cli-bundle.mjs';
import { createClusterReader } from '../src/cluster/reader.js';
import { formatSnapshot, loadSnapshotFiles, snapshotNow } from '../src/cluster/snapshot.js';
import type { KubeObject } from '../src/cluster/types.js';
import { kubeconfigYaml } from '../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../src/snapshot-api/server.js';
import type { TriageEnvelope } from '../src/triage/envelope/index.js';
import type { TriageRequest } from '../src/triage/index.js';
import { silentLogger, triage } from '../src/triage/index.js';
import { median } from './support/stats.js';

/**
 * Triage wall time through the real stack (snapshot API server on loopback, the read-only reader, the engine):
 * 1. one fixture per intent at 0 ms and 50 ms of injected per-request latency. Reads in a round run in parallel,
 *    so at 50 ms the wall time should track rounds × 50 ms, not requests × 50 ms;
 * 2. a generated namespace with 3,000 pods and 10,000 events: wall time, peak RSS, envelope size;
 * 3. what a user waits for: the `calmops` command as a process, from spawn to exit, with its peak RSS, for
 *    `calmops intents`, a small replay, and the generated namespace replayed first (parsed-snapshot cache empty)
 *    and again (cache hit). Each is set against `node -e ''` measured in the same rounds, so the ratios hold on a
 *    slow or busy machine too.
 */

const LATENCY_MS = 50;
const RUNS = 3;
const root = fileURLToPath(new URL('..', import.meta.url));
const fixturesDir = fileURLToPath(new URL('../test/fixtures/snapshots/', import.meta.url));

async function timedTriage(server: SnapshotServer, request: TriageRequest) {
  const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) } });
  const before = server.requestCount();
  const started = performance.now();
  const envelope = await triage(request, { reader, logger: silentLogger });
  return { ms: performance.now() - started, requests: server.requestCount() - before, envelope };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

async function latencyScenario() {
  const firstPerIntent = new Map<string, string>();
  for (const file of readdirSync(fixturesDir)
    .filter((f) => /--.+\.yaml$/.test(f))
    .sort()) {
    const intent = file.split('--')[0] as string;
    if (!firstPerIntent.has(intent)) firstPerIntent.set(intent, file);
  }
  const rows = [];
  for (const [intent, file] of firstPerIntent) {
    const snapshot = await loadSnapshotFiles(join(fixturesDir, file));
    const namespace = busiestNamespace(snapshot.objects);
    const now = snapshotNow(snapshot.objects);
    const request: TriageRequest = { intent, namespace, ...(now ? { now } : {}) };
    const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
    try {
      await timedTriage(server, request); // warm-up: module loading and JIT are not what is measured
      const at = async (latencyMs: number) => {
        server.setLatency(latencyMs);
        const runs = [];
        for (let i = 0; i < RUNS; i++) runs.push(await timedTriage(server, request));
        return runs;
      };
      const fast = await at(0);
      const slow = await at(LATENCY_MS);
      const last = slow.at(-1) as { envelope: TriageEnvelope; requests: number };
      const rounds = last.envelope.execution.stepsExecuted;
      rows.push({
        intent,
        fixture: file,
        rounds,
        requests: last.requests,
        wallMsAt0: round1(median(fast.map((r) => r.ms))),
        wallMsAt50: round1(median(slow.map((r) => r.ms))),
        roundsTimesLatencyMs: rounds * LATENCY_MS,
        requestsTimesLatencyMs: last.requests * LATENCY_MS,
      });
    } finally {
      await server.close();
    }
  }
  return rows;
}

function busiestNamespace(objects: readonly KubeObject[]): string {
  const counts = new Map<string, number>();
  for (const o of objects)
    if (o.metadata.namespace) counts.set(o.metadata.namespace, (counts.get(o.metadata.namespace) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? 'default';
}

// ---------------------------------------------------------------------------------------------------------------
// A large namespace: 3,000 pods (40 crash-looping, 60 unschedulable) and 10,000 events.

const NS = 'bulk';
const T0 = Date.UTC(2025, 5, 1, 8, 0, 0);
const iso = (offsetS: number) => new Date(T0 + offsetS * 1000).toISOString().replace('.000Z', 'Z');

export function largeNamespace(): { objects: KubeObject[]; logs: Record<string, string> } {
  const objects: KubeObject[] = [];
  const logs: Record<string, string> = {};
  for (let n = 0; n < 20; n++) {
    objects.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `worker-${n}`, uid: `node-${n}`, creationTimestamp: iso(0) },
      spec: {},
      status: {
        allocatable: { cpu: '16', memory: '64Gi', pods: '250' },
        capacity: { cpu: '16', memory: '64Gi', pods: '250' },
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: iso(3500), lastTransitionTime: iso(0) }],
      },
    });
  }
  const podNames: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const name = `shop-${String(i).padStart(4, '0')}`;
    podNames.push(name);
    const crashing = i % 75 === 7;
    const pending = !crashing && i % 50 === 13;
    const container = {
      name: 'app',
      image: 'registry.example/shop:1.4.2',
      resources: { requests: { cpu: '100m', memory: '128Mi' } },
    };
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: NS,
        uid: `pod-${i}`,
        labels: { app: 'shop', shard: String(i % 10) },
        creationTimestamp: iso(60),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'shop-7d9f', controller: true }],
      },
      spec: {
        containers: [container],
        ...(pending ? { nodeSelector: { disk: 'nvme' } } : { nodeName: `worker-${i % 20}` }),
      },
      status: pending
        ? {
            phase: 'Pending',
            conditions: [
              {
                type: 'PodScheduled',
                status: 'False',
                reason: 'Unschedulable',
                message: "0/20 nodes are available: 20 node(s) didn't match Pod's node affinity/selector.",
                lastTransitionTime: iso(60),
              },
            ],
          }
        : {
            phase: 'Running',
            startTime: iso(65),
            conditions: [{ type: 'Ready', status: crashing ? 'False' : 'True', lastTransitionTime: iso(70) }],
            containerStatuses: [
              crashing
                ? {
                    name: 'app',
                    ready: false,
                    restartCount: 14,
                    image: container.image,
                    state: {
                      waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' },
                    },
                    lastState: {
                      terminated: { exitCode: 1, reason: 'Error', startedAt: iso(3300), finishedAt: iso(3302) },
                    },
                  }
                : {
                    name: 'app',
                    ready: true,
                    restartCount: 0,
                    image: container.image,
                    state: { running: { startedAt: iso(70) } },
                  },
            ],
          },
    };
    objects.push(pod);
    if (crashing) {
      logs[`${NS}/${name}/app:previous`] =
        'starting shop 1.4.2\nloading configuration from /etc/shop/config.yaml\n' +
        'Error: required environment variable DATABASE_URL is not set\n';
    }
  }
  const reasons = ['Scheduled', 'Pulled', 'Created', 'Started'];
  for (let e = 0; e < 10_000; e++) {
    const podIndex = e % 3000;
    const pod = podNames[podIndex] as string;
    const crashing = podIndex % 75 === 7;
    const pending = !crashing && podIndex % 50 === 13;
    const warning = (crashing || pending) && e >= 9000 - 3000;
    const reason = warning ? (crashing ? 'BackOff' : 'FailedScheduling') : (reasons[e % 4] as string);
    objects.push({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${pod}.${e.toString(16)}`,
        namespace: NS,
        uid: `ev-${e}`,
        creationTimestamp: iso(60 + (e % 3000)),
      },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod, namespace: NS },
      reason,
      message: warning
        ? crashing
          ? 'Back-off restarting failed container app in pod'
          : "0/20 nodes are available: 20 node(s) didn't match Pod's node affinity/selector."
        : `${reason} container app`,
      type: warning ? 'Warning' : 'Normal',
      count: warning ? 30 : 1,
      source: { component: warning && pending ? 'default-scheduler' : 'kubelet' },
      firstTimestamp: iso(60 + (e % 600)),
      lastTimestamp: iso(600 + (e % 3000)),
    });
  }
  return { objects, logs };
}

/**
 * The large namespace is served by `calmops serve-snapshot` in its own process, so that this process's memory is the
 * triage's alone (reader, engine, analyzers), as it is in the cluster-reader Lambda.
 */
async function serveInChild(objects: readonly KubeObject[], logs: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'calmops-bench-'));
  const file = join(dir, 'large.yaml');
  await writeFile(file, formatSnapshot(objects));
  await writeFile(join(dir, 'large.logs.json'), JSON.stringify(logs));
  const child = spawn(
    process.execPath,
    ['bin/calmops.js', 'serve-snapshot', file, '--kubeconfig', join(dir, 'kubeconfig')],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = / at (http:\/\/[^\s]+) \(read-only\)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`serve-snapshot exited ${code}: ${out}`)));
  });
  return {
    url,
    kubeconfig: join(dir, 'kubeconfig'),
    close: async () => {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function largeScenario() {
  const { objects, logs } = largeNamespace();
  const served = await serveInChild(objects, logs);
  const rows = [];
  const now = new Date(T0 + 3600_000);
  const requests: Array<[string, TriageRequest]> = [
    ['crashloop-analysis', { intent: 'crashloop-analysis', namespace: NS, now }],
    ['scheduling-failures', { intent: 'scheduling-failures', namespace: NS, now }],
    ['sweep (vague words)', { text: `something is off in ${NS}`, now }],
    ['sweep (no namespace)', { text: 'the shop pods keep dying', now }],
  ];
  try {
    for (const [label, request] of requests) {
      const reader = () => createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: served.url }) } });
      await triage(request, { reader: reader(), logger: silentLogger }); // warm-up
      global.gc?.();
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      const envelope = await triage(request, { reader: reader(), logger: silentLogger });
      const ms = performance.now() - started;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      rows.push({
        intent: label,
        wallMs: round1(ms),
        requests: envelope.execution.requests,
        rounds: envelope.execution.stepsExecuted,
        rssBeforeMb: round1(rssBefore / 2 ** 20),
        peakRssMb: round1(peak / 2 ** 20),
        triageRssMb: round1((peak - rssBefore) / 2 ** 20),
        envelopeBytes: Buffer.byteLength(JSON.stringify(envelope)),
        topCause: envelope.rootCause[0]?.code ?? 'none',
        findings: envelope.findings.length,
        completeness: envelope.evidence.completeness,
      });
    }
  } finally {
    await served.close();
  }
  return { namespace: NS, pods: 3000, events: 10_000, objects: objects.length, runs: rows };
}

// ---------------------------------------------------------------------------------------------------------------
// The command as a user runs it.

const CLI_ROUNDS = 5;
const bin = join(root, 'bin/calmops.js');
const MIB = 2 ** 20;

/** What a process reported about itself as it exited. */
interface ProcessUsage {
  wallMs: number;
  cpuMs: number;
  peakRssMib: number;
  code: number | null;
}

/**
 * Preloaded into every measured process (the baseline included): at exit, the process writes its own peak RSS and
 * CPU time to file descriptor 3, so nothing has to poll and no peak is missed, wherever Node runs (no /usr/bin/time).
 * The peak is VmHWM from /proc where there is one: getrusage's maxRSS also counts what the forked child held before
 * it executed Node, which is this benchmark's own memory, hundreds of MiB by then.
 */
const REPORTER = `import { readFileSync, writeSync } from 'node:fs';
process.on('exit', () => {
  const usage = process.resourceUsage();
  let peakKb = usage.maxRSS;
  try {
    peakKb = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? peakKb);
  } catch {}
  writeSync(3, JSON.stringify({ peakRssKb: peakKb, cpuUs: usage.userCPUTime + usage.systemCPUTime }));
});
`;

function measure(reporter: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<ProcessUsage> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', reporter, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let report = '';
    let stderr = '';
    child.stdout?.resume();
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => {
      report += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      try {
        const { peakRssKb, cpuUs } = JSON.parse(report) as { peakRssKb: number; cpuUs: number };
        if (code !== 0) throw new Error(`exited ${code}: ${stderr.slice(0, 400)}`);
        resolve({ wallMs, cpuMs: cpuUs / 1000, peakRssMib: (peakRssKb * 1024) / MIB, code });
      } catch (error) {
        reject(new Error(`${args.join(' ')}: ${(error as Error).message}`));
      }
    });
  });
}

interface CliCase {
  label: string;
  args: string[];
  /** A cache directory per run (a first replay), or one shared by every run and warmed first (a repeated one). */
  cache: 'cold' | 'warm';
  /** `kubectlRatio`: wall time as a share of kubectl reading the same objects from the same snapshot. */
  target: { seconds: number; mib?: number; cpuRatio?: number; kubectlRatio?: number };
}

export async function cliScenario() {
  // The bundle is built before anything is timed: a build after a source change is not what a user waits for.
  await cliEntry();
  const dir = await mkdtemp(join(tmpdir(), 'calmops-bench-cli-'));
  try {
    const reporter = pathToFileURL(join(dir, 'report-usage.mjs')).href;
    await writeFile(join(dir, 'report-usage.mjs'), REPORTER);
    const { objects, logs } = largeNamespace();
    const large = join(dir, 'large.yaml');
    await writeFile(large, formatSnapshot(objects));
    await writeFile(join(dir, 'large.logs.json'), JSON.stringify(logs));
    const largeBytes = Buffer.byteLength(await readFile(large, 'utf8'));
    const small = join(fixturesDir, 'scheduling-failures--insufficient-cpu.yaml');
    // kubectl reads the same objects (pods, events, configmaps, workloads, services, endpoints, as JSON) from the
    // same snapshot served by `calmops serve-snapshot`, with a warm discovery cache as a user's kubectl has.
    const served = await serveInChild(objects, logs);
    const triage = (text: string, ...source: string[]) => [bin, 'triage', text, ...source, '--json'];
    const cases: CliCase[] = [
      { label: 'calmops intents', args: [bin, 'intents'], cache: 'warm', target: { seconds: 0.15, cpuRatio: 3 } },
      {
        label: 'triage, small snapshot',
        args: triage('pods stuck pending in payments', '--snapshot', small),
        cache: 'warm',
        target: { seconds: 0.3, mib: 120 },
      },
      {
        label: 'triage, 3,000 pods, first run',
        args: triage(`something is off in ${NS}`, '--snapshot', large),
        cache: 'cold',
        target: { seconds: 1.5, mib: 256, kubectlRatio: 0.5 },
      },
      {
        label: 'triage, 3,000 pods, repeated',
        args: triage(`something is off in ${NS}`, '--snapshot', large),
        cache: 'warm',
        target: { seconds: 0.5, kubectlRatio: 0.2 },
      },
      {
        // The very server kubectl reads: no file to parse or cache, the same objects over the same wire.
        label: 'triage, 3,000 pods, same server as kubectl',
        args: triage(`something is off in ${NS}`, '--kubeconfig', served.kubeconfig),
        cache: 'warm',
        target: { seconds: 0.5, mib: 256 },
      },
    ];
    const kubectlArgs = [
      'get',
      'pods,events,configmaps,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,services,endpoints',
      '-n',
      NS,
      '-o',
      'json',
      '--kubeconfig',
      served.kubeconfig,
      '--cache-dir',
      join(dir, 'kubectl-cache'),
    ];
    const baseEnv = { ...process.env, NODE_OPTIONS: '' };
    const warmCache = join(dir, 'cache-warm');
    await mkdir(warmCache);
    const runIn = (c: CliCase, round: number) => {
      const cache = c.cache === 'warm' ? warmCache : join(dir, `cache-cold-${round}`);
      return measure(reporter, c.args, { ...baseEnv, XDG_CACHE_HOME: cache }, dir);
    };
    const baseline: ProcessUsage[] = [];
    const kubectl: number[] = [];
    const runs = new Map<string, ProcessUsage[]>(cases.map((c) => [c.label, []]));
    // How busy the machine was: on a shared one, every wall time stretches, kubectl's too, but not all alike.
    const loadBefore = loadavg()[0] as number;
    try {
      // Warm-up: the operating system's file cache, and the warm cases' parsed snapshots.
      await measure(reporter, ['-e', ''], baseEnv, dir);
      for (const c of cases) if (c.cache === 'warm') await runIn(c, -1);
      await timeCommand('kubectl', kubectlArgs, baseEnv, dir);
      // Rounds interleave the cases, so a burst of load on a shared machine spreads over all of them.
      for (let round = 0; round < CLI_ROUNDS; round++) {
        baseline.push(await measure(reporter, ['-e', ''], baseEnv, dir));
        kubectl.push(await timeCommand('kubectl', kubectlArgs, baseEnv, dir));
        for (const c of cases) runs.get(c.label)?.push(await runIn(c, round));
      }
    } finally {
      await served.close();
    }
    const base = summarize(baseline);
    const kubectlMs = round1(median(kubectl));
    const rows = cases.map((c) => {
      const s = summarize(runs.get(c.label) ?? []);
      return {
        command: c.label,
        ...s,
        wallRatio: round1(s.wallMs / base.wallMs),
        cpuRatio: round1(s.cpuMs / base.cpuMs),
        rssRatio: round1(s.peakRssMib / base.peakRssMib),
        kubectlRatio: Math.round((s.wallMs / kubectlMs) * 100) / 100,
        target: c.target,
      };
    });
    return {
      rounds: CLI_ROUNDS,
      largeSnapshotBytes: largeBytes,
      loadAverage: { before: round1(loadBefore), after: round1(loadavg()[0] as number), cores: availableParallelism() },
      baseline: { command: "node -e ''", ...base },
      kubectl: { command: `kubectl ${kubectlArgs.slice(0, 6).join(' ')}`, wallMs: kubectlMs },
      runs: rows,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Wall time of a command that is not Node (kubectl), spawn to exit. */
function timeCommand(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout?.resume();
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.slice(0, 400)}`));
      else resolve(performance.now() - started);
    });
  });
}

/** Medians of wall and CPU time; the largest peak RSS. */
function summarize(runs: readonly ProcessUsage[]) {
  return {
    wallMs: round1(median(runs.map((r) => r.wallMs))),
    cpuMs: round1(median(runs.map((r) => r.cpuMs))),
    peakRssMib: round1(Math.max(...runs.map((r) => r.peakRssMib))),
  };
}

function table(headers: string[], rows: Array<Array<string | number>>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: Array<string | number>) =>
    cells
      .map((c, i) => (typeof c === 'number' ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!)))
      .join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export default async function bench() {
  const latency = await latencyScenario();
  console.log(`\nTriage wall time, median of ${RUNS} runs (ms), per intent, 0 ms vs ${LATENCY_MS} ms per request`);
  console.log(
    table(
      [
        'intent',
        'rounds',
        'requests',
        'at 0 ms',
        `at ${LATENCY_MS} ms`,
        `rounds×${LATENCY_MS}`,
        `requests×${LATENCY_MS}`,
      ],
      latency.map((r) => [
        r.intent,
        r.rounds,
        r.requests,
        r.wallMsAt0,
        r.wallMsAt50,
        r.roundsTimesLatencyMs,
        r.requestsTimesLatencyMs,
      ]),
    ),
  );
  const large = await largeScenario();
  console.log(`\nGenerated namespace: ${large.pods} pods, ${large.events} events (${large.objects} objects served)`);
  console.log(
    table(
      [
        'request',
        'wall ms',
        'requests',
        'rounds',
        'rss before MB',
        'peak rss MB',
        'triage +MB',
        'envelope bytes',
        'top cause',
      ],
      large.runs.map((r) => [
        r.intent,
        r.wallMs,
        r.requests,
        r.rounds,
        r.rssBeforeMb,
        r.peakRssMb,
        r.triageRssMb,
        r.envelopeBytes,
        r.topCause,
      ]),
    ),
  );
  const cli = await cliScenario();
  console.log(
    `\nThe calmops command, spawn to exit: median of ${cli.rounds} runs; peak RSS is the largest; ratios against ` +
      `${cli.baseline.command} (${cli.baseline.wallMs} ms, ${cli.baseline.cpuMs} ms CPU, ${cli.baseline.peakRssMib} MiB) ` +
      `and against ${cli.kubectl.command} … from the same snapshot (${cli.kubectl.wallMs} ms); load average ` +
      `${cli.loadAverage.before} → ${cli.loadAverage.after} on ${cli.loadAverage.cores} cores`,
  );
  console.log(
    table(
      ['command', 'wall ms', 'cpu ms', 'peak MiB', '× wall', '× cpu', '× rss', '× kubectl', 'target'],
      cli.runs.map((r) => [
        r.command,
        r.wallMs,
        r.cpuMs,
        r.peakRssMib,
        r.wallRatio,
        r.cpuRatio,
        r.rssRatio,
        r.kubectlRatio,
        [
          `≤${r.target.seconds} s`,
          ...(r.target.mib ? [`≤${r.target.mib} MiB`] : []),
          ...(r.target.cpuRatio ? [`≤${r.target.cpuRatio}× cpu`] : []),
          ...(r.target.kubectlRatio ? [`≤${r.target.kubectlRatio}× kubectl`] : []),
        ].join(' '),
      ]),
    ),
  );
  return {
    latencyMs: LATENCY_MS,
    runsPerMeasurement: RUNS,
    perIntent: latency,
    largeNamespace: large,
    processMaxRssMb: round1(process.resourceUsage().maxRSS / 1024),
    cli,
  };
}
