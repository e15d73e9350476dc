import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/snapshot.js';
import type { CliIo } from '../../../src/cli/io.js';
import { parseSnapshot } from '../../../src/cluster/snapshot.js';
import {
  type FakeApi,
  type FakeHandler,
  kubeconfigFor,
  pod,
  sendJson,
  startFakeApi,
} from '../../support/cluster-fake-api.js';

/**
 * `calmops snapshot` against API servers that never end a list: one that repeats its continue token, one with more
 * objects than a snapshot should hold, and one too slow to finish. Each capture ends, with a clear message, and
 * holds only what the bounds allow.
 */

const dir = mkdtempSync(join(tmpdir(), 'calmops-snapshot-bounds-'));

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A cluster with namespace `shop` whose pod lists come from `pods`; every other list is empty. */
async function cluster(pods: FakeHandler): Promise<string> {
  api = await startFakeApi((req, res) => {
    if (req.path === '/api/v1/namespaces/shop') {
      sendJson(res, 200, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    } else if (req.path === '/api/v1/namespaces/shop/pods') pods(req, res);
    else sendJson(res, 200, { metadata: {}, items: [] });
  });
  const kubeconfig = join(dir, `kubeconfig-${api.url.split(':').at(-1)}`);
  writeFileSync(kubeconfig, kubeconfigFor(api.url));
  return kubeconfig;
}

function captureIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    env: {},
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

const podRequests = () => api?.requests.filter((r) => r.path === '/api/v1/namespaces/shop/pods') ?? [];

describe('calmops snapshot: bounds', () => {
  it('a server that repeats its continue token ends the capture with a clear error; nothing is written', async () => {
    const kubeconfig = await cluster((_req, res) =>
      sendJson(res, 200, {
        kind: 'PodList',
        metadata: { continue: 'again' },
        items: Array.from({ length: 500 }, (_, i) => pod(`p-${i}`)),
      }),
    );
    const out = join(dir, 'loop.yaml');
    const io = captureIo();
    const code = await run(['-n', 'shop', '-o', out, '--kubeconfig', kubeconfig], io);
    expect(code).toBe(1);
    expect(io.err).toContain(
      'calmops snapshot: could not list pods in namespace shop: the API server sent a continue token it had already ' +
        'sent (page 2, 1000 objects so far); paging stopped instead of reading the same pages again\n',
    );
    expect(existsSync(out)).toBe(false);
    expect(podRequests()).toHaveLength(2);
  });

  it('an endless list of fresh tokens stops at --max-items per kind, with a warning, and the snapshot is written', async () => {
    let page = 0;
    const kubeconfig = await cluster((req, res) => {
      const limit = Number(req.query.get('limit'));
      const start = page * 1_000;
      page++;
      sendJson(res, 200, {
        kind: 'PodList',
        metadata: { continue: `page-${page}` },
        items: Array.from({ length: limit }, (_, i) => pod(`p-${String(start + i).padStart(6, '0')}`)),
      });
    });
    const out = join(dir, 'bounded.yaml');
    const io = captureIo();
    expect(await run(['-n', 'shop', '-o', out, '--kubeconfig', kubeconfig, '--max-items', '1200'], io)).toBe(0);
    expect(io.err).toContain(
      'warning: pods: more than 1200 objects; the snapshot holds the first 1200 (raise --max-items)\n',
    );
    const pods = parseSnapshot(readFileSync(out, 'utf8')).filter((o) => o.kind === 'Pod');
    expect(pods).toHaveLength(1200);
    // One page of 1,201: one object past the bound tells a cut list from one that fits exactly.
    expect(podRequests().map((r) => r.query.get('limit'))).toEqual(['1201']);
  });

  it('a list that fits the bound exactly has no warning', async () => {
    const kubeconfig = await cluster((_req, res) =>
      sendJson(res, 200, { kind: 'PodList', items: [pod('a'), pod('b'), pod('c')] }),
    );
    const io = captureIo();
    expect(
      await run(['-n', 'shop', '-o', join(dir, 'exact.yaml'), '--kubeconfig', kubeconfig, '--max-items', '3'], io),
    ).toBe(0);
    expect(io.err).not.toContain('more than');
  });

  it('a capture past --deadline fails with the deadline in the message, and stops reading', async () => {
    // The first page comes at once with a fresh token; the second never does. Only the deadline can end the capture.
    const held: Promise<void>[] = [];
    const kubeconfig = await cluster((req, res) => {
      if (req.query.get('continue') === null) {
        sendJson(res, 200, { kind: 'PodList', metadata: { continue: 't-1' }, items: [pod('a')] });
      } else {
        held.push(new Promise((resolve) => res.on('close', () => resolve())));
      }
    });
    const out = join(dir, 'slow.yaml');
    const io = captureIo();
    const code = await run(['-n', 'shop', '-o', out, '--kubeconfig', kubeconfig, '--deadline', '1'], io);
    expect(code).toBe(1);
    expect(io.err).toContain('calmops snapshot: the capture did not finish within 1 s; nothing was written');
    expect(existsSync(out)).toBe(false);
    // The read in flight is abandoned (its connection closed by the client, not by the server), and none follows.
    // (On a busy machine the deadline may pass before the second page is asked for: then there is none to close.)
    await Promise.all(held);
    expect([[null, 't-1'], [null], []]).toContainEqual(podRequests().map((r) => r.query.get('continue')));
  });

  it('rejects bad bounds as usage errors', async () => {
    for (const args of [
      ['--max-items', '0'],
      ['--max-items', 'lots'],
      ['--deadline', '0'],
      ['--deadline', '\u001b[2J'],
    ]) {
      const io = captureIo();
      expect(await run(['-n', 'shop', ...args], io)).toBe(2);
      expect(io.err).not.toContain('\u001b');
    }
  });
});
