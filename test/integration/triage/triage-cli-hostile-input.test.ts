import {
  closeSync,
  copyFileSync,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { writeYaml as stringify } from '../../../src/yaml-text.js';
import { type CalmopsRun, runCalmopsBin } from '../../support/calmops-bin.js';

/**
 * The installed command on bad input, run as a user runs it (a child process through bin/calmops.js): every bad file
 * exits 2 and names the file, nothing from a file reaches the terminal as a control sequence, oversized and endless
 * inputs are refused before they are read, `--now` must be near the data, kubeconfig commands do not run, and a
 * hostile API server's answers end as gaps in the envelope.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = join(root, 'test/fixtures/snapshots/scheduling-failures--insufficient-cpu.yaml');
const dir = mkdtempSync(join(tmpdir(), 'calmops-hostile-input-'));
const ESC = '\u001b';
// Raw control characters other than newline and tab.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

async function calmops(args: string[], timeoutMs = 60_000, env: NodeJS.ProcessEnv = {}): Promise<CalmopsRun> {
  return runCalmopsBin(args, {
    cwd: dir,
    // No colour asked for from outside: every escape byte in the output would then be one that leaked through.
    env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', HOME: dir, FORCE_COLOR: '0', ...env },
    timeoutMs,
  });
}

/** The environment that makes a run list every file it opens (test/support/opened-files.mjs) into `log`. */
function recordingOpens(log: string): NodeJS.ProcessEnv {
  return {
    NODE_OPTIONS: `--import=${new URL('../../support/opened-files.mjs', import.meta.url).href}`,
    OPENED_FILES_LOG: log,
  };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The "billion laughs": nine levels of nine aliases each. */
function aliasBomb(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  let previous = 'a';
  for (const name of 'bcdefghi') {
    lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
    previous = name;
  }
  return `${lines.join('\n')}\n`;
}

describe('calmops on bad input files', () => {
  it('a YAML alias bomb exits 2 naming the file', async () => {
    const bomb = file('bomb.yaml', aliasBomb());
    const [triage, serve] = await Promise.all([
      calmops(['triage', 'pods pending in shop', '--snapshot', bomb]),
      calmops(['serve-snapshot', bomb, '--kubeconfig', join(dir, 'never.kubeconfig')]),
    ]);
    for (const [result, command] of [
      [triage, 'triage'],
      [serve, 'serve-snapshot'],
    ] as const) {
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `calmops ${command}: ${bomb}: document 1 cannot be read: Excessive alias count indicates a resource exhaustion attack\n`,
      );
    }
    expect(existsSync(join(dir, 'never.kubeconfig'))).toBe(false);
  });

  it('invalid YAML exits 2 naming the file, and escape bytes from the name and the text are shown, not sent', async () => {
    const name = `evil${ESC}]0;owned${'\u0007'}${ESC}[2J\u202e.yaml`;
    const path = file(name, `apiVersion: v1\nkind: Pod\nmetadata: {name: "${ESC}[31mred"\n  bad: [\n`);
    const result = await calmops(['triage', 'pods pending in shop', '--snapshot', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(CONTROL);
    expect(result.stderr).toContain(`evil\\x1b]0;owned\\x07\\x1b[2J\\u202e.yaml: document 1 is not valid YAML`);
    expect(result.stderr).toContain('\\x1b[31mred');
  });

  it('invalid YAML is placed by line and column without printing the credentials on the lines it shows', async () => {
    const password = 'Velvet842#Hn2q';
    const key = 'c2VjcmV0LWtleS1tYXRlcmlhbC1mb3ItdGhlLXRlc3Q0Mg==';
    const path = file(
      'broken-config.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata:\n  url: postgres://app:${password}@db:5432/app\n  api_key: ${key}: [\n`,
    );
    const result = await calmops(['triage', 'pods pending in shop', '--snapshot', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/document 1 is not valid YAML: .* at line \d+, column \d+/);
    expect(result.stderr).not.toContain(password);
    expect(result.stderr).not.toContain(key);
  });

  it('a file that is not a Kubernetes object exits 2 naming the file', async () => {
    const path = file('not-k8s.yaml', 'hello: world\n');
    const result = await calmops(['triage', 'pods pending in shop', '--snapshot', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^calmops triage: ${path}: document 1 is not a Kubernetes object`));
  });

  it('a file over the 256 MiB default is refused by its size, before it is read', async () => {
    const path = join(dir, 'huge.yaml');
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 300 * 1024 * 1024);
    closeSync(fd);
    const opened = join(dir, 'huge.opened');
    const result = await calmops(
      ['triage', 'pods pending in shop', '--snapshot', path],
      60_000,
      recordingOpens(opened),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `calmops triage: snapshot file ${path} is 300 MiB, over the 256 MiB limit for an input file; not read ` +
        '(raise the limit with --max-bytes)\n',
    );
    // Never opened: the command's own files were, so the list is this run's.
    const files = readFileSync(opened, 'utf8').split('\n');
    expect(files.some((f) => f.endsWith('triage.cjs'))).toBe(true);
    expect(files).not.toContain(path);
  });

  it('--max-bytes lowers and raises the limit, for the snapshot and its logs', async () => {
    const snapshot = join(dir, 'sized.yaml');
    copyFileSync(fixture, snapshot);
    const size = statSync(snapshot).size;
    const logs = file('sized.logs.json', JSON.stringify({ 'shop/p/c': 'x'.repeat(size * 2) }));
    const [small, logsTooBig, bad] = await Promise.all([
      calmops(['triage', 'pods pending in payments', '--snapshot', snapshot, '--max-bytes', '1K', '--json']),
      calmops(['triage', 'pods pending in payments', '--snapshot', snapshot, '--max-bytes', String(size + 1)]),
      calmops(['triage', 'pods pending in payments', '--snapshot', snapshot, '--max-bytes', '9T']),
    ]);
    expect(small.code).toBe(2);
    expect(small.stderr).toContain(`snapshot file ${snapshot} is `);
    expect(small.stderr).toContain('over the 1024 bytes limit');
    expect(logsTooBig.code).toBe(2);
    expect(logsTooBig.stderr).toContain(`logs file ${logs} is `);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-bytes: expected a size from 1 byte to 2G');
    const big = await calmops([
      'triage',
      'pods pending in payments',
      '--snapshot',
      snapshot,
      '--max-bytes',
      '64M',
      '--json',
    ]);
    expect(big.code).toBe(0);
  });

  it('a device that never ends (/dev/zero) is refused as not a regular file', async () => {
    const [snapshot, logs, kubeconfig] = await Promise.all([
      calmops(['triage', 'pods pending in shop', '--snapshot', '/dev/zero']),
      calmops(['triage', 'pods pending in payments', '--snapshot', fixture, '--logs', '/dev/zero']),
      calmops(['snapshot', '-n', 'shop', '--kubeconfig', '/dev/zero']),
    ]);
    expect(snapshot.code).toBe(2);
    expect(snapshot.stderr).toContain('snapshot file /dev/zero is not a regular file');
    expect(logs.code).toBe(2);
    expect(logs.stderr).toContain('logs file /dev/zero is not a regular file');
    expect(kubeconfig.code).toBe(2);
    expect(kubeconfig.stderr).toContain('kubeconfig file /dev/zero is not a regular file');
  });

  it('an unknown command full of escapes is echoed escaped', async () => {
    const result = await calmops([`${ESC}]0;owned${'\u0007'}`]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(CONTROL);
    expect(result.stderr).toContain('unknown command "\\x1b]0;owned\\x07"');
  });
});

describe('calmops triage --now', () => {
  // The fixture's newest timestamp.
  const taken = '2025-11-20T14:05:00Z';

  it('refuses 9999-12-31, a day that does not exist, and a time far from the snapshot', async () => {
    const [far, unreal, month, serve] = await Promise.all([
      calmops(['triage', 'pods pending in payments', '--snapshot', fixture, '--now', '9999-12-31']),
      calmops(['triage', 'pods pending in payments', '--snapshot', fixture, '--now', '2025-02-30']),
      calmops(['triage', 'pods pending in payments', '--snapshot', fixture, '--now', '2025-10-01T00:00:00Z']),
      calmops(['serve-snapshot', fixture, '--now', '9999-12-31', '--kubeconfig', join(dir, 'never2.kubeconfig')]),
    ]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain(
      `--now 9999-12-31T00:00:00Z is more than 30 days from the snapshot's newest timestamp (${taken})`,
    );
    expect(unreal.code).toBe(2);
    expect(unreal.stderr).toContain('--now: "2025-02-30" is not a real date and time');
    expect(month.code).toBe(2);
    expect(month.stderr).toContain('is more than 30 days from the snapshot');
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain('--now 9999-12-31T00:00:00Z is more than 30 days');
  });

  it('accepts a time within the window, and judges at it', async () => {
    const result = await calmops([
      'triage',
      'pods pending in payments',
      '--snapshot',
      fixture,
      '--now',
      '2025-12-01T00:00:00Z',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(TriageEnvelopeSchema.parse(JSON.parse(result.stdout)).execution.now).toBe('2025-12-01T00:00:00.000Z');
  });

  it('against a live cluster, --now must be near the clock', async () => {
    const kubeconfig = file('live.kubeconfig', kubeconfigText('http://127.0.0.1:9', { token: 'abc' }));
    const result = await calmops(['triage', 'pods pending in shop', '--kubeconfig', kubeconfig, '--now', '2015-01-01']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--now 2015-01-01T00:00:00Z is more than 30 days from the clock');
  });
});

function kubeconfigText(server: string, user: Record<string, unknown>, insecure = server.startsWith('http:')): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, ...(insecure ? { 'insecure-skip-tls-verify': true } : {}) } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'lab', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'lab',
  });
}

describe('calmops triage and snapshot with a kubeconfig that wants more trust', () => {
  it('an exec plugin is refused unless --allow-exec, and does not run', async () => {
    const marker = join(dir, 'plugin-ran');
    const kubeconfig = file(
      'exec.kubeconfig',
      kubeconfigText('http://127.0.0.1:9', {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          command: process.execPath,
          args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); process.exit(1)`],
        },
      }),
    );
    const [triage, snapshot] = await Promise.all([
      calmops(['triage', 'pods pending in shop', '--kubeconfig', kubeconfig]),
      calmops(['snapshot', '-n', 'shop', '--kubeconfig', kubeconfig]),
    ]);
    for (const result of [triage, snapshot]) {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("user 'u' of context 'lab' gets its credential from an exec plugin (node)");
      expect(result.stderr).toContain('--allow-exec');
    }
    expect(existsSync(marker)).toBe(false);
    // Allowed, it runs (and fails, so the read reports the credential failure).
    const allowed = await calmops(['snapshot', '-n', 'shop', '--kubeconfig', kubeconfig, '--allow-exec']);
    expect(existsSync(marker)).toBe(true);
    expect(allowed.code).toBe(1);
    expect(allowed.stderr).toContain('obtaining credentials');
  });

  it('insecure-skip-tls-verify on https is refused unless --insecure-skip-tls-verify', async () => {
    const kubeconfig = file('insecure.kubeconfig', kubeconfigText('https://127.0.0.1:9', { token: 'abc' }, true));
    const [refused, allowed] = await Promise.all([
      calmops(['snapshot', '-n', 'shop', '--kubeconfig', kubeconfig]),
      calmops(['snapshot', '-n', 'shop', '--kubeconfig', kubeconfig, '--insecure-skip-tls-verify']),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("cluster 'c' sets insecure-skip-tls-verify: true for https://127.0.0.1:9");
    expect(allowed.code).toBe(1);
    expect(allowed.stderr).toContain('cannot reach the API server at https://127.0.0.1:9 (ECONNREFUSED)');
  });
});

describe('calmops triage against a hostile API server', () => {
  let server: Server | undefined;
  const seen: string[] = [];
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('redirects and oversized answers end as gaps in the envelope, and the redirect target is never read', async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      seen.push(path);
      if (path === '/api/v1/namespaces/shop') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'shop' } }));
      } else if (path.endsWith('/pods')) {
        res.writeHead(302, { location: '/api/v1/namespaces/shop/secrets' });
        res.end();
      } else if (path.endsWith('/events')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(80 * 1024 * 1024) });
        res.write('{"kind":"EventList","items":[');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'SecretList', items: [] }));
      }
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kubeconfig = file('hostile.kubeconfig', kubeconfigText(url, { token: 'hostile-test-token-123456' }));
    const result = await calmops([
      'triage',
      'pods pending',
      '-n',
      'shop',
      '--intent',
      'scheduling-failures',
      '--kubeconfig',
      kubeconfig,
      '--json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const envelope = TriageEnvelopeSchema.parse(JSON.parse(result.stdout));
    const gaps = JSON.stringify(envelope.evidence.gaps);
    expect(envelope.evidence.missing.length).toBeGreaterThan(0);
    expect(gaps).toContain('redirect refused (HTTP 302), calmops never follows redirects');
    expect(gaps).toContain('response over the 64 MiB limit for one answer from the API server (80 MiB declared)');
    expect(gaps).toContain('kind SecretList instead of NodeList');
    expect(seen.some((p) => /\/secrets(?:[/?]|$)/i.test(p))).toBe(false);
  });
});
