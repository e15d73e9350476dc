import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_SNAPSHOT } from '../../../local/demo/index.js';
import { loadSnapshotFiles, siblingLogsPath } from '../../../src/cluster/snapshot.js';
import { checkCluster } from '../../../src/doctor/cluster-check.js';
import { writeKubeconfig } from '../../../src/snapshot-api/kubeconfig.js';
import { startSnapshotServer } from '../../../src/snapshot-api/server.js';

/**
 * `calmops doctor`'s RBAC review over real HTTP: against the snapshot API server with the kubeconfig `npm start`
 * writes (writeKubeconfig, as local/stack.ts does), the review is answered and judged; against a server that
 * refuses it, the doctor says the identity may not ask about itself, not that the server is unreachable.
 */

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function kubeconfigFor(server: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'calmops-doctor-'));
  dirs.push(dir);
  const file = join(dir, 'kubeconfig');
  await writeKubeconfig(file, { server });
  return file;
}

const noSecrets = async () => {
  throw new Error('no secret is read for a kubeconfig file');
};

describe('the doctor’s RBAC review', () => {
  it('reviews the rules of the snapshot API server with the kubeconfig npm start writes', async () => {
    const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT, siblingLogsPath(DEMO_SNAPSHOT));
    const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
    try {
      const results = await checkCluster(
        'default',
        { kind: 'file', file: await kubeconfigFor(server.url) },
        {
          readSecret: noSecrets,
          namespace: 'payments',
        },
      );
      const rbac = results.find((r) => r.check === 'rbac');
      expect(rbac?.detail).not.toMatch(/toPromise|internal error|cannot reach/);
      expect(rbac?.status).toBe('pass');
    } finally {
      await server.close();
    }
  });

  it('says the identity may not ask about itself when the server refuses the review', async () => {
    const refusing = createServer((request, response) => {
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: `selfsubjectrulesreviews.authorization.k8s.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectrulesreviews" in API group "authorization.k8s.io" at the cluster scope (${request.method})`,
          reason: 'Forbidden',
          code: 403,
        }),
      );
    });
    await new Promise<void>((done) => refusing.listen(0, '127.0.0.1', done));
    try {
      const port = (refusing.address() as AddressInfo).port;
      const results = await checkCluster(
        'default',
        { kind: 'file', file: await kubeconfigFor(`http://127.0.0.1:${port}`) },
        { readSecret: noSecrets, namespace: 'payments' },
      );
      const rbac = results.find((r) => r.check === 'rbac');
      expect(rbac?.status).toBe('fail');
      expect(rbac?.fix).toMatch(/may not even ask about itself/);
      expect(`${rbac?.detail} ${rbac?.fix}`).not.toMatch(/toPromise|cannot reach the API server/);
    } finally {
      await new Promise((done) => refusing.close(done));
    }
  });
});
