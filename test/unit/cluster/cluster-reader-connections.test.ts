import { createServer as createHttpServer, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KeptAgents } from '../../../src/cluster/kept-agents.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { ClusterReadError } from '../../../src/cluster/types.js';
import { kubeconfigFor, pod } from '../../support/cluster-fake-api.js';

/**
 * A reader keeps its connections open between requests, as kubectl does, instead of opening one (and, against a
 * real API server, a TLS session) for every page of every list; and a kept connection that the server closed just as
 * a request went out on it costs that request a second try, not the read.
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
          server.close(() => resolve());
        }),
    ),
  );
});

const podList = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [pod('a'), pod('b')] });

function readerFor(port: number) {
  return createClusterReader({
    kubeconfig: { yaml: kubeconfigFor(`http://127.0.0.1:${port}`, { token: 'connection-test-token-0123' }) },
    requestTimeoutMs: 5_000,
  });
}

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** An API server that answers every list, counting the connections it is sent requests on. */
async function countingServer(): Promise<{ port: number; connections: () => number; requests: () => number }> {
  let connections = 0;
  let requests = 0;
  const server = createHttpServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(podList);
  });
  server.on('connection', () => connections++);
  const port = await listen(server);
  return { port, connections: () => connections, requests: () => requests };
}

/**
 * A server speaking HTTP/1.1 by hand, so it can do what a real one does at the wrong moment: `onRequest` is told
 * which connection (counted from 1) and which request on it (from 1) has arrived, and answers or hangs up.
 */
async function rawServer(onRequest: (socket: Socket, connection: number, request: number) => void): Promise<number> {
  let connections = 0;
  const open = new Set<Socket>();
  const server = createNetServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    const connection = ++connections;
    let request = 0;
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      while (pending.includes('\r\n\r\n')) {
        pending = pending.slice(pending.indexOf('\r\n\r\n') + 4);
        onRequest(socket, connection, ++request);
      }
    });
    socket.on('error', () => undefined);
  });
  // A plain TCP server waits for its connections to end before it closes; the reader's kept one ends only when idle.
  const closeAllConnections = () => {
    for (const socket of open) socket.destroy();
  };
  return listen(Object.assign(server, { closeAllConnections }));
}

function answer(socket: Socket): void {
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(podList)}\r\n` +
      `Connection: keep-alive\r\n\r\n${podList}`,
  );
}

describe('a reader keeps its connections', () => {
  it('sends one read after another over one connection', async () => {
    const api = await countingServer();
    const reader = readerFor(api.port);
    for (let i = 0; i < 6; i++) expect(await reader.list({ kind: 'pods', namespace: 'shop' })).toHaveLength(2);
    expect(api.requests()).toBe(6);
    expect(api.connections()).toBe(1);
  });

  it('opens no more connections than it has reads in flight at once', async () => {
    const api = await countingServer();
    const reader = readerFor(api.port);
    for (let round = 0; round < 3; round++) {
      await Promise.all([1, 2, 3].map(() => reader.list({ kind: 'pods', namespace: 'shop' })));
    }
    expect(api.requests()).toBe(9);
    expect(api.connections()).toBeLessThanOrEqual(3);
  });

  it('sends a read again on a new connection when the server closed the kept one as the read went out on it', async () => {
    const seen: string[] = [];
    const port = await rawServer((socket, connection, request) => {
      seen.push(`${connection}.${request}`);
      // The first connection is dropped when its second request arrives, as a server closing an idle connection does.
      if (connection === 1 && request === 2) socket.destroy();
      else answer(socket);
    });
    const reader = readerFor(port);
    expect(await reader.list({ kind: 'pods', namespace: 'shop' })).toHaveLength(2);
    expect(await reader.list({ kind: 'pods', namespace: 'shop' })).toHaveLength(2);
    expect(seen).toEqual(['1.1', '1.2', '2.1']);
  });

  it('does not send a read again when a new connection is dropped: the read fails', async () => {
    const seen: string[] = [];
    const port = await rawServer((socket, connection, request) => {
      seen.push(`${connection}.${request}`);
      socket.destroy();
    });
    const error = await readerFor(port)
      .list({ kind: 'pods', namespace: 'shop' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ClusterReadError);
    expect(seen).toEqual(['1.1']);
  });

  it('sends a read once when the server drops it after the answer began', async () => {
    const seen: string[] = [];
    const port = await rawServer((socket, connection, request) => {
      seen.push(`${connection}.${request}`);
      if (request === 1) answer(socket);
      else {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"kind":');
        socket.destroy();
      }
    });
    const reader = readerFor(port);
    await reader.list({ kind: 'pods', namespace: 'shop' });
    await expect(reader.list({ kind: 'pods', namespace: 'shop' })).rejects.toBeInstanceOf(ClusterReadError);
    expect(seen).toEqual(['1.1', '1.2']);
  });
});

describe('one kept agent per TLS identity', () => {
  it('shares an agent between requests that present the same material, and never between different material', () => {
    const kept = new KeptAgents();
    const a = kept.for(new HttpsAgent({ ca: 'CA-1', cert: Buffer.from('cert-1'), key: Buffer.from('key-1') }));
    const again = kept.for(new HttpsAgent({ ca: 'CA-1', cert: Buffer.from('cert-1'), key: Buffer.from('key-1') }));
    const otherCert = kept.for(new HttpsAgent({ ca: 'CA-1', cert: Buffer.from('cert-2'), key: Buffer.from('key-1') }));
    const otherCa = kept.for(new HttpsAgent({ ca: 'CA-2', cert: Buffer.from('cert-1'), key: Buffer.from('key-1') }));
    const unverified = kept.for(
      new HttpsAgent({ ca: 'CA-1', cert: Buffer.from('cert-1'), key: Buffer.from('key-1'), rejectUnauthorized: false }),
    );
    const plain = kept.for(new HttpAgent());
    expect(again).toBe(a);
    expect(new Set([a, otherCert, otherCa, unverified, plain]).size).toBe(5);
    expect(a).toBeInstanceOf(HttpsAgent);
    expect(plain).not.toBeInstanceOf(HttpsAgent);
    expect((a as HttpAgent & { keepAlive: boolean }).keepAlive).toBe(true);
  });

  it('passes a proxy agent through as it came', () => {
    class ProxyAgent extends HttpAgent {}
    const proxy = new ProxyAgent();
    expect(new KeptAgents().for(proxy)).toBe(proxy);
  });
});
