import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson as sendJsonAnswer } from '../../src/http/json.js';

/** A Web API method's arguments, as form fields or a JSON body carried them. */
export type Args = Record<string, unknown>;
/** A Web API answer before it is sent: `ok` plus the method's fields, or Slack's error shape. */
export type Answer = Record<string, unknown>;

const JSON_FIELDS = new Set(['blocks', 'attachments', 'view', 'metadata', 'unfurl_links']);
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A refusal Slack answers with `ok: false` and this error code; never a fault of the stand-in. */
export class SlackApiError extends Error {
  constructor(
    readonly code: string,
    readonly messages: string[] = [],
  ) {
    super(code);
  }
}

export function fail(code: string, messages: string[] = []): never {
  throw new SlackApiError(code, messages);
}

/** The `ok: false` answer Slack gives for an API error; anything else is a fault of the stand-in and propagates. */
export function errorAnswer(error: unknown): Answer {
  if (!(error instanceof SlackApiError)) throw error;
  return {
    ok: false,
    error: error.code,
    ...(error.messages.length > 0 ? { response_metadata: { messages: error.messages } } : {}),
  };
}

/** Slack treats an empty string argument as absent. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function parseArgs(raw: string, contentType: string | undefined): Args {
  if (raw === '') return {};
  if ((contentType ?? '').includes('application/json')) {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Args) : {};
  }
  const args: Args = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    if (JSON_FIELDS.has(key) && /^\s*[[{]/.test(value)) {
      try {
        args[key] = JSON.parse(value);
        continue;
      } catch {
        // Slack itself answers invalid JSON in these fields with invalid_blocks / invalid_arguments below.
      }
    }
    args[key] = value;
  }
  return args;
}

export async function readText(request: IncomingMessage): Promise<string> {
  const body = await readBody(request, MAX_BODY_BYTES);
  if (body === undefined) throw new SlackApiError('request_too_large');
  return body.toString('utf8');
}

// The sandbox page in the browser reads the stand-in's recordings directly.
export const sendJson = (response: ServerResponse, status: number, body: unknown) =>
  sendJsonAnswer(response, status, body, { 'access-control-allow-origin': '*' });
