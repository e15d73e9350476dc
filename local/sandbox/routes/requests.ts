import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as z from 'zod';
import { readBody, sendJson as sendJsonAnswer } from '../../../src/http/json.js';

/** A request the sandbox refuses, with the HTTP status it answers. */
export class SandboxRequestError extends Error {
  override readonly name = 'SandboxRequestError';
  constructor(
    message: string,
    readonly status: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const MAX_BODY = 256 * 1024;

export async function readJson(request: IncomingMessage): Promise<unknown> {
  const body = await readBody(request, MAX_BODY);
  if (body === undefined) throw new SandboxRequestError('request body too large', 413);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new SandboxRequestError('request body is not JSON', 400, { cause: error });
  }
}

export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const detail = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    throw new SandboxRequestError(`invalid request: ${detail}`, 400);
  }
  return result.data;
}

// The page polls its state: an answer is never reused from a cache.
export const sendJson = (response: ServerResponse, status: number, body: unknown) =>
  sendJsonAnswer(response, status, body, { 'cache-control': 'no-store' });

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** JSON only: a cross-origin page cannot send it without a preflight, which this server never grants. */
export function isJson(request: IncomingMessage): boolean {
  return mediaType(request.headers['content-type']) === 'application/json';
}
