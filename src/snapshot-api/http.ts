import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson, sendJsonParts, sendJsonText } from '../http/json.js';
import { type ApiStatusError, badRequest } from './status.js';

/** The snapshot API's answers: kube-apiserver's bare `application/json`, and failures as `Status` objects. */

const MAX_BODY_BYTES = 64 * 1024;
const CONTENT_TYPE = { 'content-type': 'application/json' };

/** A small JSON request body; anything else is a 400, as the API server would answer. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === undefined) throw badRequest('request body too large');
  try {
    return JSON.parse(body.toString());
  } catch {
    throw badRequest('the request body is not JSON');
  }
}

export function writeJson(res: ServerResponse, code: number, body: unknown): void {
  sendJson(res, code, body, CONTENT_TYPE);
}

export function writeJsonText(res: ServerResponse, code: number, text: string | Buffer): void {
  sendJsonText(res, code, text, CONTENT_TYPE);
}

export function writeStatus(res: ServerResponse, error: ApiStatusError): void {
  writeJson(res, error.code, error.toStatus());
}

export function writeJsonParts(res: ServerResponse, code: number, parts: readonly Buffer[]): void {
  sendJsonParts(res, code, parts, CONTENT_TYPE);
}
