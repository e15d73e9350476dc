import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';

/**
 * Guards for the loopback servers a browser can reach: the snapshot API server (`serve-snapshot`, `npm start`) and
 * the local stand-ins, the sandbox and `/healthz`. Two attacks matter on loopback:
 *
 * - DNS rebinding: a page on `evil.example` re-resolves its own name to 127.0.0.1 and then talks to a local server
 *   as if it were same-origin, reading and changing everything. The browser still sends `Host: evil.example:<port>`,
 *   so a server that answers only to its own loopback address and port is out of reach.
 * - Cross-site requests: any page may send a "simple" POST (`text/plain`, a form) to loopback without a preflight.
 *   The browser names the page in `Origin`, so a state-changing request whose Origin is not the server itself is
 *   refused. Tools such as curl send no Origin and are let through.
 */

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

function isLoopbackAddress(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function hostOf(address: string): string {
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  return isIP(plain) === 6 ? `[${plain}]` : plain;
}

/**
 * The `Host` values a request to this socket may carry: the loopback names at the port the server listens on, and,
 * for a server bound to another interface, that interface's address. Never a DNS name other than `localhost`.
 */
function allowedHosts(request: IncomingMessage): Set<string> {
  const port = request.socket.localPort;
  const local = request.socket.localAddress ?? '';
  const hosts = new Set<string>();
  if (port === undefined) return hosts;
  for (const name of LOOPBACK_NAMES) hosts.add(`${name}:${port}`);
  if (local !== '' && !isLoopbackAddress(local)) hosts.add(`${hostOf(local)}:${port}`);
  return hosts;
}

/** Why the request's Host is not this server's own address, or undefined when it is. */
export function hostRefusal(request: IncomingMessage): string | undefined {
  const host = request.headers.host?.trim().toLowerCase();
  if (host === undefined || host === '') return 'the request names no Host';
  if (allowedHosts(request).has(host)) return undefined;
  return `this server answers only to its own loopback address, not to Host ${JSON.stringify(host.slice(0, 100))}`;
}

export function isStateChanging(method: string | undefined): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes((method ?? 'GET').toUpperCase());
}

/**
 * Why a state-changing request comes from another origin, or undefined when it comes from this server's own pages
 * (or from a tool that sends no Origin). Run after `hostRefusal`, so the Host it compares with is known to be ours.
 */
export function originRefusal(request: IncomingMessage): string | undefined {
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  const host = request.headers.host?.trim().toLowerCase() ?? '';
  try {
    const url = new URL(origin);
    if (url.protocol === 'http:' && url.host.toLowerCase() === host) return undefined;
  } catch {
    // `null` (a sandboxed frame, a file: page) and anything unparsable are foreign too.
  }
  return `requests that change state are accepted only from this server's own pages, not from ${JSON.stringify(origin.slice(0, 100))}`;
}

/** Host on every request, Origin on state-changing ones; the first refusal, or undefined. */
export function requestRefusal(request: IncomingMessage): string | undefined {
  return hostRefusal(request) ?? (isStateChanging(request.method) ? originRefusal(request) : undefined);
}

/** Answers a refused request with 403 and the reason as JSON. */
export function refuse(response: ServerResponse, reason: string): void {
  const text = JSON.stringify({ error: reason });
  response.writeHead(403, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  response.end(text);
}
