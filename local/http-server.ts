import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RoutedHttpRequest } from '../src/alerts/http.js';
import { ALERTMANAGER_PATH } from '../src/alerts/http.js';
import type { FunctionHttpResponse as SlackHttpResponse } from '../src/http/function-http.js';
import { readBody, sendJson } from '../src/http/json.js';
import { hostRefusal, refuse } from './request-guard.js';
import type { Sandbox } from './sandbox/server.js';

/** The request shape the Slack Lambda receives (with its path and method), and its answer: the function's own types. */
export type SlackHttpRequest = RoutedHttpRequest;

export type SlackHttpHandler = (request: SlackHttpRequest) => Promise<SlackHttpResponse>;

export interface HealthReport {
  ok: boolean;
  services: Record<string, { url: string; up: boolean }>;
}

export interface LocalHttpServerOptions {
  /** 0 or absent picks a free port. */
  port?: number;
  host?: string;
  /** The same function the Lambda runs for `/slack/events` and `/alerts/alertmanager`. */
  slack: SlackHttpHandler;
  sandbox?: Sandbox;
  /** Root of the Slack Web API stand-in, for the `/_slack/*` readout. */
  standInOrigin?: string;
  /** What `/healthz` reports; 200 only when `ok`. */
  health: () => Promise<HealthReport>;
}

export interface LocalHttpServer {
  /** e.g. `http://127.0.0.1:3000` */
  origin: string;
  port: number;
  close(): Promise<void>;
}

class LocalHttpServerError extends Error {
  override readonly name = 'LocalHttpServerError';
}

const MAX_SLACK_BODY = 1024 * 1024;
const READOUTS: Record<string, string> = {
  '/_slack/calls': '/_calls',
  '/_slack/messages': '/_messages',
  '/_slack/views': '/_views',
};

/** Lambda function URLs hand over lower-cased header names with repeated values joined by commas. */
function lambdaHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

async function slackEvents(
  request: IncomingMessage,
  response: ServerResponse,
  handler: SlackHttpHandler,
  path: string,
) {
  const raw = await readBody(request, MAX_SLACK_BODY);
  if (raw === undefined) {
    sendJson(response, 413, { error: 'request body too large' });
    return;
  }
  // The body goes over as base64 of the bytes received, so the signature is checked on exactly what Slack signed.
  const answer = await handler({
    headers: lambdaHeaders(request),
    body: raw.toString('base64'),
    isBase64Encoded: true,
    path,
    method: request.method ?? 'POST',
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name.toLowerCase()] = String(value);
  const body = answer.body ?? '';
  headers['content-length'] = String(Buffer.byteLength(body));
  response.writeHead(answer.statusCode, headers);
  response.end(body);
}

async function readout(response: ServerResponse, standInOrigin: string, path: string, search: string) {
  const upstream = await fetch(`${standInOrigin}${path}${search}`);
  const text = await upstream.text();
  response.writeHead(upstream.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  response.end(text);
}

/**
 * The one local HTTP endpoint people and harnesses talk to: `/slack/events` and `/alerts/alertmanager` (the Lambda's
 * handler), `/healthz`, the sandbox page under `/sandbox/`, and a read-only view of what the bot sent to Slack under
 * `/_slack/`.
 */
/** The paths the Lambda's handler answers, and who sends to each. */
const FUNCTION_ROUTES: Readonly<Record<string, string>> = {
  '/slack/events': 'Slack',
  [ALERTMANAGER_PATH]: 'Alertmanager',
};

export async function startLocalHttpServer(options: LocalHttpServerOptions): Promise<LocalHttpServer> {
  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      try {
        // Slack's events and Alertmanager's webhook are answered by the same function (the bearer token of the
        // webhook is checked there).
        const sender = FUNCTION_ROUTES[url.pathname];
        if (sender !== undefined) {
          if (request.method !== 'POST') sendJson(response, 405, { error: `${sender} sends POST requests here` });
          else await slackEvents(request, response, options.slack, url.pathname);
          return;
        }
        if (url.pathname === '/healthz' && request.method === 'GET') {
          // What runs where is this machine's business: only a request to its own loopback address is told.
          const refusal = hostRefusal(request);
          if (refusal !== undefined) {
            refuse(response, refusal);
            return;
          }
          const report = await options.health();
          sendJson(response, report.ok ? 200 : 503, report);
          return;
        }
        const upstream = READOUTS[url.pathname];
        if (upstream !== undefined && request.method === 'GET' && options.standInOrigin !== undefined) {
          // Everything the bot sent, so a rebound page must not read it (see request-guard.ts).
          const refusal = hostRefusal(request);
          if (refusal !== undefined) {
            refuse(response, refusal);
            return;
          }
          await readout(response, options.standInOrigin, upstream, url.search);
          return;
        }
        if (options.sandbox !== undefined && (await options.sandbox.handle(request, response))) return;
        if (url.pathname === '/' && request.method === 'GET' && options.sandbox !== undefined) {
          response.writeHead(302, { location: '/sandbox/' });
          response.end();
          return;
        }
        sendJson(response, 404, { error: `nothing at ${url.pathname}` });
      } catch (error) {
        if (!response.headersSent) sendJson(response, 500, { error: (error as Error).message });
        else response.destroy();
      }
    })();
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new LocalHttpServerError(
          error.code === 'EADDRINUSE'
            ? `port ${options.port} is already in use; set PORT to another port`
            : `could not listen on ${host}:${options.port ?? 0}: ${error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    origin: `http://${host}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        await options.sandbox?.close();
        await new Promise<void>((resolve, reject) => {
          server.close((error) => (error ? reject(error) : resolve()));
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
