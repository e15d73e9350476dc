import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Body reading and JSON answers for the plain `node:http` servers: the snapshot API and the local stand-ins. Each
 * server keeps its own wording for failures; what they share is how bytes are counted and framed.
 */

/**
 * The whole request body, or undefined once it grows past `limit` bytes: nothing beyond the limit is buffered, and
 * the caller answers the oversized request its own way (413, or a Status on the snapshot API).
 */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Header names are lower-case, so a caller's `content-type` replaces the default one instead of being sent beside it
 * (the snapshot API sends kube-apiserver's bare `application/json`).
 */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  sendJsonText(response, status, JSON.stringify(body), headers);
}

/**
 * Sends what already is JSON, as text or as its UTF-8 bytes, so a body assembled from pre-serialized parts is not
 * parsed and printed again.
 */
export function sendJsonText(
  response: ServerResponse,
  status: number,
  text: string | Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  // Encoded once: measuring the text's length in bytes and then sending it would go through it twice.
  sendJsonParts(response, status, [typeof text === 'string' ? Buffer.from(text) : text], headers);
}

/**
 * Sends JSON made of parts (pre-serialized bytes, such as spans of one larger buffer) one after the other, without
 * joining them into one buffer first: a list of thousands of objects is megabytes, and a fresh buffer that size is
 * memory touched for the first time, which costs more than the copy.
 */
export function sendJsonParts(
  response: ServerResponse,
  status: number,
  parts: readonly Buffer[],
  headers: Readonly<Record<string, string>> = {},
): void {
  let length = 0;
  for (const part of parts) length += part.length;
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': length,
    ...headers,
  });
  response.cork();
  for (const part of parts) response.write(part);
  response.end();
}
