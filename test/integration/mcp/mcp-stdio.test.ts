import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { REDACTED } from '../../../src/redact/index.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { CLUSTER_SCOPED_READABLE } from '../../../src/workflow/read-scope.js';
import { CALMOPS_BIN, collectOutput, runCalmopsBin } from '../../support/calmops-bin.js';
import { type McpSession, startMcp, textOf } from '../../support/mcp-client.js';

/**
 * `calmops mcp` started as a process and driven by the SDK's client over stdio, as an assistant drives it, against a
 * replay of the demo cluster whose crash-looping pod's log holds credentials.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const DEMO = join(root, 'local/demo/demo-cluster.yaml');
const CRASHING = 'orders/order-worker-69b7c4d8f5-fk2lp/order-worker:previous';
// A token as git prints it when a clone with a personal access token in its URL fails.
const PLANTED_TOKEN = 'ghp_R8kZ2mQ4vN7xW1yT5uB3cF6hJ9pL0sD4gA2e';
const PLANTED_LINE = `2025-11-21T09:55:57.406Z WARN  fatal: unable to access 'https://x-access-token:${PLANTED_TOKEN}@github.com/acme/orders-config.git/': The requested URL returned error: 403`;
const DEMO_PASSWORD = 'Sup3rS3cret';

let dir: string;
let mcp: McpSession;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calmops-mcp-'));
  const snapshot = join(dir, 'incident.yaml');
  await copyFile(DEMO, snapshot);
  const logs = JSON.parse(await readFile(join(root, 'local/demo/demo-cluster.logs.json'), 'utf8')) as Record<
    string,
    string
  >;
  logs[CRASHING] = (logs[CRASHING] ?? '').replace('\n', `\n${PLANTED_LINE}\n`);
  await writeFile(join(dir, 'incident.logs.json'), JSON.stringify(logs));
  mcp = await startMcp(['--snapshot', snapshot, '--namespaces', 'orders,payments,ml-team', '--snapshot-dir', dir], {
    cwd: dir,
  });
});

afterAll(async () => {
  await mcp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('calmops mcp over stdio', () => {
  it('lists the four tools, every one marked read-only and not destructive', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['intents', 'read', 'snapshot', 'triage']);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(tool.description).toBeTruthy();
    }
    const triage = tools.find((t) => t.name === 'triage');
    expect(triage?.inputSchema.required).toEqual(['text']);
    expect(Object.keys(triage?.outputSchema?.properties ?? {})).toEqual(Object.keys(TriageEnvelopeSchema.shape));
    expect(tools.find((t) => t.name === 'intents')?.annotations?.openWorldHint).toBe(false);
  });

  it("triages from a person's words: the envelope as structured content, a summary as text, no credential", async () => {
    const result = await mcp.call('triage', { text: 'the order worker keeps crashing in orders' });
    expect(result.isError).toBeFalsy();
    const envelope = TriageEnvelopeSchema.parse(result.structuredContent);
    expect(envelope.routing.namespace).toBe('orders');
    expect(envelope.routing.cluster).toBe('snapshot:incident.yaml');
    expect(envelope.rootCause[0]).toMatchObject({
      code: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
      resource: { kind: 'Deployment', name: 'order-worker', namespace: 'orders' },
    });
    const text = textOf(result);
    expect(text).toContain('Root cause: CONTAINER_CRASHLOOP_CONFIG_ERROR on Deployment/order-worker in orders');
    expect(text).toMatch(/Evidence: \d+% of what this intent needs/);
    expect(text).toMatch(/Next actions:\n {2}\[SAFE\] kubectl /);
    const everything = JSON.stringify(result);
    expect(everything).toContain('DATABASE_URL');
    expect(everything).not.toContain(PLANTED_TOKEN);
    expect(everything).not.toContain(DEMO_PASSWORD);
  });

  it('reads a log as the thread does: redacted, the decisive line kept', async () => {
    const result = await mcp.call('read', {
      command: 'kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders --previous',
    });
    expect(result.isError).toBeFalsy();
    const reply = result.structuredContent as { outcome: string; lines: string[] };
    expect(reply.outcome).toBe('ok');
    expect(reply.lines.join('\n')).toContain('missing required environment variable DATABASE_URL');
    expect(reply.lines.some((l) => l.includes('github.com/acme/orders-config.git') && l.includes(REDACTED))).toBe(true);
    expect(JSON.stringify(result)).not.toContain(PLANTED_TOKEN);
    expect(JSON.stringify(result)).not.toContain(DEMO_PASSWORD);
    expect(textOf(result)).toMatch(/^kubectl logs order-worker-69b7c4d8f5-fk2lp -n orders --previous: \d+ line\(s\)\n/);
  });

  it('reads objects in the namespace it was given by default', async () => {
    const result = await mcp.call('read', { command: 'get pods', namespace: 'payments' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^kubectl get pods: \d+ line\(s\)\nNAME +READY +STATUS +RESTARTS +AGE\n/);
    expect(textOf(result)).toContain('Pending');
    // Usage from the Metrics API, as kubectl top prints it.
    const top = await mcp.call('read', { command: 'top pod', namespace: 'payments' });
    expect(top.isError).toBeFalsy();
    expect(textOf(top)).toMatch(
      /^kubectl top pod: \d+ line\(s\)\nNAME +CPU\(cores\) +MEMORY\(bytes\) *\nledger-worker-/,
    );
  });

  it('refuses a read outside its namespaces, and one across all of them, saying what it may read', async () => {
    const outside = await mcp.call('read', { command: 'kubectl get pods -n inventory' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toBe(
      `Not run: namespace "inventory" is outside this server's scope; it reads namespaces orders, payments, ml-team, and the cluster-scoped kinds (${CLUSTER_SCOPED_READABLE.join(', ')}).`,
    );
    const all = await mcp.call('read', { command: 'kubectl get pods -A' });
    expect(all.isError).toBe(true);
    expect(textOf(all)).toContain("across all namespaces is outside this server's scope");
    const triage = await mcp.call('triage', { text: 'route returns 503', namespace: 'inventory' });
    expect(triage.isError).toBe(true);
    expect(textOf(triage)).toContain('Not triaged: namespace "inventory" is outside this server\'s scope');
    const nodes = await mcp.call('read', { command: 'kubectl get nodes' });
    expect(nodes.isError).toBeFalsy();
  });

  it('refuses writes, exec, compound lines and Secrets without running them', async () => {
    for (const command of [
      'kubectl delete pod order-worker-69b7c4d8f5-fk2lp -n orders',
      'kubectl exec -it order-worker-69b7c4d8f5-fk2lp -n orders -- sh',
      'kubectl get pods -n orders; kubectl delete ns orders',
    ]) {
      const result = await mcp.call('read', { command });
      expect(result.isError, command).toBe(true);
      expect(textOf(result), command).toMatch(/^calmops runs reads only/);
    }
    const secret = await mcp.call('read', { command: 'kubectl get secret db -n orders -o yaml' });
    expect(secret.isError).toBe(true);
    expect(textOf(secret)).toContain('never reads Secrets');
  });

  it('answers a malformed call with the validation error and keeps serving', async () => {
    const wrong = await mcp.call('triage', { text: 42, stepBudget: 'many' });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/Input validation error: Invalid arguments for tool triage/);
    const outOfRange = await mcp.call('triage', { text: 'pods pending', stepBudget: 9 });
    expect(outOfRange.isError).toBe(true);
    expect(textOf(outOfRange)).toContain('stepBudget');
    await expect(mcp.client.callTool({ name: 'kubectl', arguments: {} })).resolves.toMatchObject({ isError: true });
    const intents = await mcp.call('intents', {});
    expect(intents.isError).toBeFalsy();
    expect((intents.structuredContent as { intents: Array<{ id: string }> }).intents.map((i) => i.id)).toContain(
      'pvc-binding',
    );
  });

  it('offers the namespaces in trouble it may read when the words name none of them', async () => {
    // A namespace outside the scope is never listed, so its name is not disclosed: the words are weighed against
    // the namespaces the server reads, and the ones in trouble are offered.
    const outside = await mcp.call('triage', { text: 'the wiki is slow' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(
      /^No namespace given, and the request matches several namespaces: .*payments \(.*orders \(|^No namespace given, and the request matches several namespaces: .*orders \(.*payments \(/,
    );
    expect(textOf(outside)).not.toContain('wiki');
    const several = await mcp.call('triage', { text: 'the worker keeps restarting' });
    expect(several.isError).toBe(true);
    expect(textOf(several)).toMatch(
      /^No namespace given, and the request matches several namespaces: orders \(.*order-worker.*\); payments \(.*ledger-worker.*\)\. Call triage again with "namespace" set to the one meant\.$/,
    );
    // Words that name nothing sweep the namespaces the server reads; the ones in trouble now are offered.
    const nowhere = await mcp.call('triage', { text: 'something is off' });
    expect(nowhere.isError).toBe(true);
    expect(textOf(nowhere)).toMatch(
      /^No namespace given, and the request matches several namespaces: .*CrashLoopBackOff/,
    );
    expect(textOf(nowhere)).not.toMatch(/wiki|inventory/);
  });

  it("serves the intents and the envelope's JSON Schema as resources", async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['calmops://intents', 'calmops://schemas/triage-envelope.json']);
    const schema = await mcp.client.readResource({ uri: 'calmops://schemas/triage-envelope.json' });
    const content = schema.contents[0] as { text: string; mimeType: string };
    expect(content.mimeType).toBe('application/schema+json');
    expect(JSON.parse(content.text)).toEqual(z.toJSONSchema(TriageEnvelopeSchema, { io: 'output' }));
    const intents = await mcp.client.readResource({ uri: 'calmops://intents' });
    const listed = JSON.parse((intents.contents[0] as { text: string }).text) as Array<{ id: string }>;
    expect(listed.map((i) => i.id)).toContain('crashloop-analysis');
  });

  it('captures a namespace to a new file without Secrets, and never overwrites or leaves its folder', async () => {
    const result = await mcp.call('snapshot', { namespace: 'orders', file: 'orders.yaml' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      file: join(dir, 'orders.yaml'),
      logsFile: join(dir, 'orders.logs.json'),
    });
    const written = await readFile(join(dir, 'orders.yaml'), 'utf8');
    expect(written).toMatch(/^kind: Pod$/m);
    expect(written).not.toMatch(/^kind: Secret$/m);
    const again = await mcp.call('snapshot', { namespace: 'orders', file: 'orders.yaml' });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain('never overwrite');
    const away = await mcp.call('snapshot', { namespace: 'orders', file: '../orders.yaml' });
    expect(away.isError).toBe(true);
    expect(textOf(away)).toContain('not a snapshot file name');
    const outside = await mcp.call('snapshot', { namespace: 'inventory' });
    expect(outside.isError).toBe(true);
  });

  it('triages the one namespace it reads when the words name none, and stops when its client goes away', async () => {
    const other = await startMcp(['--snapshot', join(dir, 'incident.yaml'), '--namespaces', 'payments'], { cwd: dir });
    expect(other.stderr()).toContain('serving snapshot:incident.yaml over stdio (payments)');
    const vague = await other.call('triage', { text: 'is anything wrong?' });
    expect(vague.isError, textOf(vague)).toBeFalsy();
    expect(TriageEnvelopeSchema.parse(vague.structuredContent).routing.namespace).toBe('payments');
    // Words that match a workload here and one elsewhere mean the one this server reads.
    const worker = await other.call('triage', { text: 'the worker keeps restarting' });
    expect(worker.isError, textOf(worker)).toBeFalsy();
    expect(TriageEnvelopeSchema.parse(worker.structuredContent).routing.namespace).toBe('payments');
    await other.close();
    await other.closed;
    expect(() => process.kill(other.pid, 0)).toThrow();
  });
});

describe('calmops mcp on a raw pipe', () => {
  it('keeps standard output to the protocol, skips a line that is not JSON, and exits 0 when its input ends', async () => {
    const child = spawn(
      process.execPath,
      [CALMOPS_BIN, 'mcp', '--snapshot', join(dir, 'incident.yaml'), '--namespaces', 'orders', '--verbose'],
      { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    const run = collectOutput(child);
    const answered = new Map<number, Record<string, unknown>>();
    const both = new Promise<void>((resolve) => {
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
          const message = JSON.parse(buffered.slice(0, end)) as { id?: number };
          buffered = buffered.slice(end + 1);
          if (typeof message.id === 'number') answered.set(message.id, message);
          if (answered.has(1) && answered.has(2)) resolve();
        }
      });
    });
    const send = (message: unknown) =>
      child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '0' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send('this is not JSON {');
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'triage', arguments: { text: 'crashloop in orders' } },
    });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { command: 'get pods' } } });
    await both;
    child.stdin.end();
    const { code, stdout, stderr } = await run;
    expect(code).toBe(0);
    expect(
      stdout
        .trim()
        .split('\n')
        .every((line) => JSON.parse(line).jsonrpc === '2.0'),
    ).toBe(true);
    expect(answered.get(1)).toMatchObject({ result: { structuredContent: { routing: { namespace: 'orders' } } } });
    expect(stderr).toContain('Triage engaged: intent=');
  });
});

describe('calmops mcp as an assistant registers it', () => {
  it('starts through npx from any folder and serves the same tools', async () => {
    const elsewhere = await startMcp(['--snapshot', join(dir, 'incident.yaml'), '--namespaces', 'orders'], {
      cwd: tmpdir(),
      via: 'npx',
    });
    try {
      const { tools } = await elsewhere.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['intents', 'read', 'snapshot', 'triage']);
      const read = await elsewhere.call('read', { command: 'kubectl get deployments' });
      expect(textOf(read)).toMatch(
        /^kubectl get deployments: \d+ line\(s\)\nNAME +READY +UP-TO-DATE +AVAILABLE +AGE\norder-worker +0\/2 /,
      );
    } finally {
      await elsewhere.close();
    }
  });
});

describe('calmops mcp flags', () => {
  const calmops = (args: string[]) =>
    runCalmopsBin(['mcp', ...args], { cwd: dir, env: { ...process.env, HOME: dir, KUBECONFIG: '' } });

  it('is a usage error, with the usage, without a scope', async () => {
    const result = await calmops(['--snapshot', DEMO]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^calmops mcp: say which namespaces the assistant may read/);
    expect(result.stderr).toContain('Usage: calmops mcp');
  });

  it('suggests the flag that was meant, and refuses a bad namespace list', async () => {
    const typo = await calmops(['--namspaces', 'shop']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^calmops mcp: unknown flag "--namspaces"; did you mean --namespaces/);
    const bad = await calmops(['--namespaces', 'shop,Payments']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^calmops mcp: --namespaces: "Payments" is not a namespace name/);
  });

  it('`help mcp` prints what `mcp --help` prints', async () => {
    const [help, flag] = await Promise.all([
      runCalmopsBin(['help', 'mcp'], { cwd: dir, env: process.env }),
      calmops(['--help']),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(flag.stdout);
    expect(help.stdout).toMatch(/^Usage: calmops mcp /);
  });
});
