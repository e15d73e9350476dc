import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeYaml as stringify } from '../../src/yaml-text.js';

/** A tiny stand-in for a Kubernetes API server that records every request it receives. */

interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
}

export type FakeHandler = (req: RecordedRequest, res: ServerResponse) => void;

export interface FakeApi {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeApi(handler: FakeHandler): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const recorded = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers };
    requests.push(recorded);
    handler(recorded, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function sendStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

export interface KubeconfigOptions {
  token?: string;
  exec?: { command: string; args: string[] };
  contexts?: string[];
}

/** A kubeconfig for a plain-http loopback server (the client requires insecure-skip-tls-verify for http). */
export function kubeconfigFor(url: string, options: KubeconfigOptions = {}): string {
  const contexts = options.contexts ?? ['fake'];
  const user: Record<string, unknown> = {};
  if (options.token) user.token = options.token;
  if (options.exec) {
    user.exec = { apiVersion: 'client.authentication.k8s.io/v1beta1', ...options.exec, interactiveMode: 'Never' };
  }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'reader', user }],
    contexts: contexts.map((name) => ({ name, context: { cluster: 'fake', user: 'reader', namespace: 'default' } })),
    'current-context': contexts[0],
  });
}

export function pod(name: string, namespace = 'shop', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { metadata: { name, namespace, uid: `uid-${name}` }, spec: { containers: [{ name: 'app' }] }, ...extra };
}
