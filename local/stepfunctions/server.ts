import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestRefusal } from '../request-guard.js';
import { stateMachineArnOf } from './arn.js';
import { validatedInThisProcess } from './definition.js';
import { LocalStepFunctionsEngine, type StateMachineRegistration, type TaskHandler } from './engine.js';
import { SfnServiceError } from './errors.js';
import { handleAction, isSupportedAction } from './protocol.js';
import { fileValidatedDefinitions } from './validated-file.js';

export interface LocalStepFunctionsOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on; 127.0.0.1 by default. */
  host?: string;
  /** State machines registered at start (more can be added with CreateStateMachine). */
  stateMachines?: StateMachineRegistration[];
  /** In-process Task handlers keyed by Lambda function ARN, function name, or the exact resource ARN. */
  taskHandlers?: Readonly<Record<string, TaskHandler>>;
  region?: string;
  accountId?: string;
  /** Source of the dates the API reports (startDate, stopDate, event timestamps) and of "now" for Timestamp waits. */
  clock?: () => Date;
  /** Multiplies every Wait state's duration (for example 0.01 in tests); 1, real time, by default. */
  waitTimeScale?: number;
  /** Multiplies TimeoutSeconds / TimeoutSecondsPath of `.waitForTaskToken` tasks only; 1 by default. */
  callbackTimeoutScale?: number;
  /** Multiplies Retry IntervalSeconds and MaxDelaySeconds; 1 by default. */
  retryIntervalScale?: number;
  /** Closed executions kept in memory (oldest dropped first); 1000 by default. */
  maxExecutions?: number;
  /** History events kept per execution; 25000 (the Step Functions quota) by default. */
  maxHistoryEvents?: number;
  /**
   * A file remembering which definitions passed validation, so later processes skip it (see validated-file.ts);
   * without it, validation is remembered for this process only.
   */
  validatedDefinitionsFile?: string;
  /**
   * A directory (created with mode 0700) where executions, their histories and task tokens are journaled, so they
   * survive a restart of this endpoint, killed or stopped: closed executions are served as they were and running
   * ones resume, their task tokens still valid. Without it everything lives in memory.
   */
  stateDir?: string;
  /** Receives every request that fails with a server error, and journal problems (ExecutionJournalError). */
  onError?: (error: unknown) => void;
}

export interface LocalStepFunctions {
  /** Base URL for `AWS_ENDPOINT_URL_SFN` or the `endpoint` option of SFNClient. */
  endpoint: string;
  /** ARN of a state machine of this endpoint, by name. */
  stateMachineArn(name: string): string;
  /**
   * Stops running executions, then the server. With `stateDir` running executions are not aborted: they stay
   * running in their journals and the next start resumes them.
   */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const TARGET_PREFIX = 'AWSStepFunctions.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';

function scaleOption(name: string, value: number | undefined): number {
  const scale = value ?? 1;
  if (!Number.isFinite(scale) || scale < 0) {
    throw new RangeError(`${name} must be a finite number >= 0, got ${value}`);
  }
  return scale;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) {
      throw new SfnServiceError('ValidationException', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, errorType?: string): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  };
  if (errorType) headers['x-amzn-errortype'] = errorType;
  response.writeHead(status, headers);
  response.end(text);
}

/**
 * Starts an HTTP endpoint speaking the Step Functions JSON protocol (`X-Amz-Target: AWSStepFunctions.<Action>`),
 * so `@aws-sdk/client-sfn` works unchanged against it. Executions run in this process with
 * aws-local-stepfunctions; Task resources are bound to the given handlers. State lives in memory unless
 * `stateDir` is given.
 */
export async function startLocalStepFunctions(options: LocalStepFunctionsOptions = {}): Promise<LocalStepFunctions> {
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  if (!/^\d{12}$/.test(accountId)) {
    throw new RangeError(`accountId must be 12 digits, got '${accountId}'`);
  }
  const engine = await LocalStepFunctionsEngine.create({
    region,
    accountId,
    taskHandlers: options.taskHandlers ?? {},
    clock: options.clock ?? (() => new Date()),
    waitTimeScale: scaleOption('waitTimeScale', options.waitTimeScale),
    callbackTimeoutScale: scaleOption('callbackTimeoutScale', options.callbackTimeoutScale),
    retryIntervalScale: scaleOption('retryIntervalScale', options.retryIntervalScale),
    maxExecutions: options.maxExecutions ?? 1000,
    maxHistoryEvents: options.maxHistoryEvents ?? 25_000,
    validated:
      options.validatedDefinitionsFile === undefined
        ? validatedInThisProcess
        : fileValidatedDefinitions(options.validatedDefinitionsFile),
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  for (const registration of options.stateMachines ?? []) {
    engine.registerStateMachine(registration);
  }
  engine.restore();

  const server = createServer((request, response) => {
    void (async () => {
      try {
        // StartExecution and SendTaskSuccess change state; a page reaching this port through a rebound DNS name
        // carries a foreign Host (see local/request-guard.ts).
        const refusal = requestRefusal(request);
        if (refusal !== undefined) {
          send(response, 403, { __type: 'AccessDeniedException', message: refusal }, 'AccessDeniedException');
          return;
        }
        if (request.method !== 'POST') {
          throw new SfnServiceError('UnknownOperationException', `Method ${request.method} is not supported`);
        }
        const target = request.headers['x-amz-target'];
        const action =
          typeof target === 'string' && target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
        if (!isSupportedAction(action)) {
          throw new SfnServiceError('UnknownOperationException', `Unsupported operation: '${String(target)}'`);
        }
        const text = await readBody(request);
        let body: unknown;
        try {
          body = text.length === 0 ? {} : JSON.parse(text);
        } catch (error) {
          throw new SfnServiceError('SerializationException', 'The request body is not valid JSON', { cause: error });
        }
        send(response, 200, await handleAction(engine, action, body));
      } catch (error) {
        if (error instanceof SfnServiceError) {
          send(response, error.statusCode, { __type: error.code, message: error.message }, error.code);
          return;
        }
        options.onError?.(error);
        send(
          response,
          500,
          { __type: 'InternalFailure', message: (error as Error).message ?? String(error) },
          'InternalFailure',
        );
      }
    })();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    endpoint: `http://${host}:${address.port}`,
    stateMachineArn: (name: string) => stateMachineArnOf({ region, accountId }, name),
    async close() {
      await engine.close();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
