import { type Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BodyBytes } from './body-bytes.js';

/**
 * One GET to the API server, on Node's own HTTP client so that nothing happens implicitly: a redirect is handed back
 * as it is (never followed, so credentials never travel to a second URL), and the body is read as a stream that is
 * cut off as soon as it passes a byte limit, so one answer cannot take the process's memory.
 */

export interface BoundedGetRequest {
  url: URL;
  headers: Readonly<Record<string, string>>;
  /** The TLS/proxy agent the kubeconfig calls for (CA, client certificate, proxy). */
  agent: Agent | undefined;
  signal: AbortSignal;
  maxBytes: number;
}

export interface BoundedGetResponse {
  status: number;
  /** The Location header of a redirect; the body of a redirect is not read. */
  location?: string;
  body: string;
}

/** The answer passed the byte limit; what arrived was dropped. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(
    readonly limit: number,
    /** What the server declared in Content-Length, when it declared that much up front. */
    readonly declared?: number,
  ) {
    const size = declared !== undefined ? ` (${formatBytes(declared)} declared)` : '';
    super(`response over the ${formatBytes(limit)} limit for one answer from the API server${size}`);
  }
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

function closedEarly(): Error {
  return Object.assign(new Error('the connection closed before the answer was complete'), { code: 'ECONNRESET' });
}

/**
 * A connection kept open from an earlier request can have been closed by the server just as this one went out on it.
 * Nothing of the answer has arrived then, so the GET is sent once more, on a new connection, as browsers and Node's
 * documentation do.
 */
function closedWhileIdle(error: unknown, req: { reusedSocket: boolean }, answered: boolean): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return req.reusedSocket && !answered && (code === 'ECONNRESET' || code === 'EPIPE');
}

export function boundedGet(request: BoundedGetRequest): Promise<BoundedGetResponse> {
  return attempt(request, true);
}

function attempt(request: BoundedGetRequest, mayResend: boolean): Promise<BoundedGetResponse> {
  const { url, signal, maxBytes } = request;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<BoundedGetResponse>((resolve, reject) => {
    let settled = false;
    let response: IncomingMessage | undefined;
    const finish = (error: unknown, value?: BoundedGetResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        response?.destroy();
        req.destroy();
        reject(error);
      } else resolve(value as BoundedGetResponse);
    };
    const onAbort = () => finish(signal.reason ?? new Error('aborted'));

    const req = send(
      url,
      { method: 'GET', headers: { ...request.headers }, ...(request.agent ? { agent: request.agent } : {}) },
      (res) => {
        response = res;
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          const location = res.headers.location;
          res.resume();
          finish(undefined, { status, ...(location !== undefined ? { location } : {}), body: '' });
          req.destroy();
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          finish(new ResponseTooLargeError(maxBytes, declared));
          return;
        }
        // The bytes are gathered into one buffer as they arrive and decoded once, at the end (body-bytes.ts).
        const body = new BodyBytes(Number.isFinite(declared) ? declared : undefined);
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          if (body.length + chunk.length > maxBytes) {
            body.release();
            finish(new ResponseTooLargeError(maxBytes));
            return;
          }
          body.append(chunk);
        });
        res.on('end', () => {
          if (!settled) finish(undefined, { status, body: body.text() });
        });
        res.on('error', (error) => finish(error));
        res.on('close', () => {
          if (!res.complete) finish(closedEarly());
          body.release();
        });
      },
    );
    req.on('error', (error) => {
      if (!settled && mayResend && !signal.aborted && closedWhileIdle(error, req, response !== undefined)) {
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(attempt(request, false));
        return;
      }
      finish(error);
    });
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    req.end();
  });
}
