import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';

/**
 * SSM parameters and Secrets Manager secrets through the AWS Parameters and Secrets Lambda Extension: a process
 * beside the function that answers GetParameter and GetSecretValue over plain HTTP on the function's own host, and
 * caches each answer for the TTLs the stack sets. Speaking its small protocol here, instead of bundling the SSM and
 * Secrets Manager clients, keeps a few hundred kilobytes out of every Lambda bundle.
 *
 * No error message ever carries a value: only what was asked for and why it could not be had.
 */

/** The variable the extension reads its port from, and the port it uses without it. */
export const EXTENSION_PORT_VARIABLE = 'PARAMETERS_SECRETS_EXTENSION_HTTP_PORT';
export const DEFAULT_EXTENSION_PORT = 2773;

/** The extension refuses every request without the function's own session token in this header. */
export const TOKEN_HEADER = 'X-Aws-Parameters-Secrets-Token';

export const PARAMETER_PATH = '/systemsmanager/parameters/get';
export const SECRET_PATH = '/secretsmanager/get';

/** Where the extension listens and the token it wants; parsed from the environment in src/config.ts. */
export interface ExtensionAccess {
  /** Base URL without a trailing slash, e.g. http://localhost:2773. */
  endpoint: string;
  /** The function's AWS_SESSION_TOKEN; without it every request is refused. */
  sessionToken?: string;
}

export type ExtensionFailure =
  /** The extension refused the session token (missing or not the function's). */
  | 'unauthorized'
  | 'not-found'
  /** Still starting after the attempts allowed for a cold start. */
  | 'not-ready'
  /** Nothing answered at the endpoint, or not in time. */
  | 'unreachable'
  /** The extension answered, but with something that is not the API's output. */
  | 'malformed'
  /** Any other refusal, such as a denied IAM permission or KMS key, passed on from SSM or Secrets Manager. */
  | 'failed';

export class ParametersExtensionError extends Error {
  override readonly name = 'ParametersExtensionError';
  constructor(
    /** What was asked for, e.g. `SSM parameter /calmops/policy`. */
    readonly subject: string,
    readonly failure: ExtensionFailure,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${subject}: ${reason}`, options);
  }
}

export interface ExtensionClientOptions {
  /** Requests made while the extension says it is not ready yet, or nothing listens yet. */
  attempts?: number;
  /** The wait before the first retry, doubled for each one after it. */
  retryDelayMs?: number;
  /** How long one request may take, including the extension's own call to SSM or Secrets Manager on a cache miss. */
  timeoutMs?: number;
}

export interface ParametersExtension {
  /** The parameter's value, decrypted when it is a SecureString. */
  parameter(name: string): Promise<string>;
  /** The secret's current SecretString; a secret stored as binary is refused. */
  secret(secretId: string): Promise<string>;
}

/** The part of SSM's GetParameter output calmops uses. */
const GetParameterOutputSchema = z.object({
  Parameter: z.object({ Name: z.string().optional(), Value: z.string() }),
});

/** The part of Secrets Manager's GetSecretValue output calmops uses. */
const GetSecretValueOutputSchema = z.object({
  SecretString: z.string().nullish(),
  SecretBinary: z.string().nullish(),
});

const DEFAULTS = { attempts: 5, retryDelayMs: 50, timeoutMs: 3_000 } as const;

type Answer = { kind: 'answered'; status: number; text: string } | { kind: 'unanswered'; cause: unknown };

/** A short, single-line excerpt of an error answer: the extension's own reason, never a value (errors carry none). */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

// The extension answers 400 with "not ready to serve traffic, please wait" until it has registered with Lambda,
// which a request made during the function's init can catch.
const isNotReady = (answer: Answer) =>
  answer.kind === 'answered' && answer.status === 400 && /not ready/i.test(answer.text);

// Connection refused means nothing listens yet (the same cold start); a timeout is not retried, it already took long.
const isRefused = (answer: Answer) =>
  answer.kind === 'unanswered' && (answer.cause as { cause?: { code?: unknown } })?.cause?.code === 'ECONNREFUSED';

export function parametersExtension(
  access: ExtensionAccess,
  options: ExtensionClientOptions = {},
): ParametersExtension {
  const { attempts, retryDelayMs, timeoutMs } = { ...DEFAULTS, ...options };

  const ask = async (url: string): Promise<Answer> => {
    try {
      const response = await fetch(url, {
        headers: access.sessionToken === undefined ? {} : { [TOKEN_HEADER]: access.sessionToken },
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { kind: 'answered', status: response.status, text: await response.text() };
    } catch (cause) {
      return { kind: 'unanswered', cause };
    }
  };

  const get = async (subject: string, path: string, query: Record<string, string>): Promise<unknown> => {
    const url = `${access.endpoint}${path}?${new URLSearchParams(query).toString()}`;
    let answer = await ask(url);
    for (let attempt = 1; attempt < attempts && (isNotReady(answer) || isRefused(answer)); attempt++) {
      await sleep(retryDelayMs * 2 ** (attempt - 1));
      answer = await ask(url);
    }
    if (answer.kind === 'unanswered') {
      throw new ParametersExtensionError(
        subject,
        'unreachable',
        `the Parameters and Secrets extension did not answer at ${access.endpoint} (${describe(answer.cause)})`,
        { cause: answer.cause },
      );
    }
    const { status, text } = answer;
    if (status === 200) {
      try {
        return JSON.parse(text);
      } catch {
        // The parser's message quotes the text, which may be the value itself: it is not kept as the cause.
        throw new ParametersExtensionError(subject, 'malformed', 'the extension answered with something not JSON');
      }
    }
    if (isNotReady(answer)) {
      throw new ParametersExtensionError(
        subject,
        'not-ready',
        `the extension was still not ready after ${attempts} attempts`,
      );
    }
    if (status === 401 || status === 403) {
      throw new ParametersExtensionError(
        subject,
        'unauthorized',
        `the extension refused the request (${status}): it needs the function's AWS_SESSION_TOKEN in ${TOKEN_HEADER}` +
          (access.sessionToken === undefined ? ', and AWS_SESSION_TOKEN is not set' : ''),
      );
    }
    if (status === 404) {
      throw new ParametersExtensionError(
        subject,
        'not-found',
        `not found (the extension answered 404: ${excerpt(text)})`,
      );
    }
    throw new ParametersExtensionError(subject, 'failed', `the extension answered ${status}: ${excerpt(text)}`);
  };

  return {
    async parameter(name) {
      const subject = `SSM parameter ${name}`;
      const body = await get(subject, PARAMETER_PATH, { name, withDecryption: 'true' });
      const parsed = GetParameterOutputSchema.safeParse(body);
      if (!parsed.success) throw malformed(subject, 'GetParameter', parsed.error);
      return parsed.data.Parameter.Value;
    },
    async secret(secretId) {
      const subject = `secret ${secretId}`;
      const body = await get(subject, SECRET_PATH, { secretId });
      const parsed = GetSecretValueOutputSchema.safeParse(body);
      if (!parsed.success) throw malformed(subject, 'GetSecretValue', parsed.error);
      const { SecretString, SecretBinary } = parsed.data;
      if (typeof SecretString === 'string') return SecretString;
      throw new ParametersExtensionError(
        subject,
        'malformed',
        typeof SecretBinary === 'string'
          ? 'the secret is stored as binary; calmops reads text'
          : 'the secret holds no value',
      );
    },
  };
}

/** Names the fields that were wrong, never what they held. */
function malformed(subject: string, output: string, error: z.ZodError): ParametersExtensionError {
  const fields = [...new Set(error.issues.map((i) => i.path.join('.') || '(the whole answer)'))].join(', ');
  return new ParametersExtensionError(
    subject,
    'malformed',
    `the extension's answer is not a ${output} output (${fields})`,
    {
      cause: error,
    },
  );
}

function describe(cause: unknown): string {
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'timed out';
  const code = (cause as { cause?: { code?: unknown } })?.cause?.code;
  if (typeof code === 'string') return code;
  return cause instanceof Error ? cause.message : String(cause);
}
