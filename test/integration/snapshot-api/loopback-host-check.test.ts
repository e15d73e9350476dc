import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startLocalHttpServer } from '../../../local/http-server.js';
import { startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { fixture } from '../../support/workflow-harness.js';

/**
 * DNS rebinding: a page on `evil.example` re-resolves its name to 127.0.0.1 and reads a loopback server as if it
 * were its own. The browser still sends `Host: evil.example:<port>`, so the snapshot API server (raw pod logs,
 * every object) and `/healthz` answer only to their own loopback address.
 */

function get(url: string, host: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname: target.hostname, port: target.port, path: target.pathname, headers: { host } },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('loopback servers and a rebound name', () => {
  it('the snapshot API server serves no log and no object to a foreign Host', async () => {
    const server = await startSnapshotServer({ ...fixture('crashloop-analysis--missing-env') });
    try {
      const log = `${server.url}/api/v1/namespaces/orders/pods/order-worker-69b7c4d8f5-fk2lp/log`;
      const foreign = await get(log, `evil.example:${server.port}`);
      expect(foreign.status).toBe(403);
      expect(JSON.parse(foreign.body)).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      expect(foreign.body).not.toMatch(/order-worker 3\.4\.1/);
      expect((await get(`${server.url}/api/v1/pods`, `evil.example:${server.port}`)).status).toBe(403);
      expect((await get(log, `127.0.0.1:${server.port}`)).status).toBe(200);
      expect((await get(log, `localhost:${server.port}`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('/healthz answers only its own loopback address', async () => {
    const http = await startLocalHttpServer({
      slack: async () => ({ statusCode: 404, headers: {}, body: '' }),
      health: async () => ({ ok: true, services: { dynamodb: { url: 'http://127.0.0.1:1', up: true } } }),
    });
    try {
      const port = new URL(http.origin).port;
      expect((await get(`${http.origin}/healthz`, `attacker.example:${port}`)).status).toBe(403);
      expect((await get(`${http.origin}/healthz`, `127.0.0.1:${port}`)).status).toBe(200);
    } finally {
      await http.close();
    }
  });
});
