import * as z from 'zod';
import type { ExecutionRecord, LocalStepFunctionsEngine, RegisteredStateMachine } from './engine.js';
import { SfnServiceError } from './errors.js';
import type { HistoryEvent } from './history.js';

/**
 * The Step Functions JSON 1.0 actions the local endpoint serves: request validation (zod) and response shapes.
 * Timestamps go out as epoch seconds, as the AWS JSON protocols encode them.
 */

const MAX_PAYLOAD_CHARS = 262_144;
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

const arn = z.string().min(1).max(2048);
const pageSize = z.number().int().min(0).max(MAX_PAGE_SIZE).optional();
const pageToken = z.string().min(1).max(1024).optional();
const executionStatus = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE']);

const requests = {
  CreateStateMachine: z.object({
    name: z.string(),
    definition: z.string().min(1).max(1_048_576),
    roleArn: arn,
    type: z.enum(['STANDARD', 'EXPRESS']).optional(),
  }),
  DescribeStateMachine: z.object({ stateMachineArn: arn }),
  DescribeStateMachineForExecution: z.object({ executionArn: arn }),
  ListStateMachines: z.object({ maxResults: pageSize, nextToken: pageToken }),
  StartExecution: z.object({
    stateMachineArn: arn,
    name: z.string().optional(),
    input: z.string().max(MAX_PAYLOAD_CHARS).optional(),
    traceHeader: z.string().optional(),
  }),
  DescribeExecution: z.object({ executionArn: arn }),
  StopExecution: z.object({
    executionArn: arn,
    error: z.string().max(256).optional(),
    cause: z.string().max(32_768).optional(),
  }),
  ListExecutions: z.object({
    stateMachineArn: arn,
    statusFilter: executionStatus.optional(),
    maxResults: pageSize,
    nextToken: pageToken,
  }),
  GetExecutionHistory: z.object({
    executionArn: arn,
    maxResults: pageSize,
    nextToken: pageToken,
    reverseOrder: z.boolean().optional(),
    includeExecutionData: z.boolean().optional(),
  }),
  SendTaskSuccess: z.object({ taskToken: z.string(), output: z.string().max(MAX_PAYLOAD_CHARS) }),
  SendTaskFailure: z.object({
    taskToken: z.string(),
    error: z.string().max(256).optional(),
    cause: z.string().max(32_768).optional(),
  }),
  SendTaskHeartbeat: z.object({ taskToken: z.string() }),
} as const;

export type SfnAction = keyof typeof requests;

export function isSupportedAction(action: string): action is SfnAction {
  return Object.hasOwn(requests, action);
}

function parseRequest<A extends SfnAction>(action: A, body: unknown): z.infer<(typeof requests)[A]> {
  const result = requests[action].safeParse(body);
  if (!result.success) {
    const details = result.error.issues
      .map((issue) => `Value at '${issue.path.join('.') || '(body)'}' failed to satisfy constraint: ${issue.message}`)
      .join('; ');
    throw new SfnServiceError(
      'ValidationException',
      `${result.error.issues.length} validation error(s) detected: ${details}`,
    );
  }
  return result.data as z.infer<(typeof requests)[A]>;
}

function epochSeconds(date: Date): number {
  return date.getTime() / 1000;
}

// Pagination tokens are opaque to callers; they carry the position of the next page.
const cursorShape = z.object({ v: z.literal(1), after: z.number().int() });

function encodeCursor(after: number): string {
  return Buffer.from(JSON.stringify({ v: 1, after })).toString('base64url');
}

function decodeCursor(token: string | undefined): number | undefined {
  if (token === undefined) return undefined;
  try {
    return cursorShape.parse(JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))).after;
  } catch (error) {
    throw new SfnServiceError('InvalidToken', `Invalid pagination token: '${token}'`, { cause: error });
  }
}

function pageLimit(maxResults: number | undefined): number {
  return maxResults && maxResults > 0 ? maxResults : DEFAULT_PAGE_SIZE;
}

function stateMachineListItem(machine: RegisteredStateMachine) {
  return {
    stateMachineArn: machine.arn,
    name: machine.name,
    type: 'STANDARD',
    creationDate: epochSeconds(machine.creationDate),
  };
}

function describeStateMachine(machine: RegisteredStateMachine) {
  return {
    stateMachineArn: machine.arn,
    name: machine.name,
    status: 'ACTIVE',
    definition: machine.prepared.definitionText,
    roleArn: machine.roleArn,
    type: 'STANDARD',
    creationDate: epochSeconds(machine.creationDate),
    loggingConfiguration: { level: 'OFF', includeExecutionData: false },
    tracingConfiguration: { enabled: false },
  };
}

function executionListItem(record: ExecutionRecord) {
  return {
    executionArn: record.arn,
    stateMachineArn: record.stateMachine.arn,
    name: record.name,
    status: record.status,
    startDate: epochSeconds(record.startDate),
    ...(record.stopDate ? { stopDate: epochSeconds(record.stopDate) } : {}),
    redriveCount: 0,
  };
}

function describeExecution(record: ExecutionRecord) {
  return {
    ...executionListItem(record),
    input: record.input,
    inputDetails: { included: true },
    ...(record.output !== undefined ? { output: record.output, outputDetails: { included: true } } : {}),
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.cause !== undefined ? { cause: record.cause } : {}),
  };
}

const DATA_FIELDS = new Set(['input', 'output', 'inputDetails', 'outputDetails']);

function historyEventOut(event: HistoryEvent, includeData: boolean) {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (key === 'timestamp') {
      out.timestamp = epochSeconds(event.timestamp);
    } else if (!includeData && key.endsWith('EventDetails') && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).filter(([field]) => !DATA_FIELDS.has(field)));
    } else {
      out[key] = value;
    }
  }
  return out;
}

function paginate<T>(
  items: T[],
  key: (item: T) => number,
  descending: boolean,
  request: { maxResults?: number; nextToken?: string },
) {
  const after = decodeCursor(request.nextToken);
  const remaining =
    after === undefined ? items : items.filter((item) => (descending ? key(item) < after : key(item) > after));
  const limit = pageLimit(request.maxResults);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  const nextToken = remaining.length > limit && last !== undefined ? encodeCursor(key(last)) : undefined;
  return { page, nextToken };
}

/** Runs one action against the engine and returns the JSON response body. */
export async function handleAction(engine: LocalStepFunctionsEngine, action: SfnAction, body: unknown) {
  switch (action) {
    case 'CreateStateMachine': {
      const request = parseRequest(action, body);
      if (request.type === 'EXPRESS') {
        throw new SfnServiceError('ValidationException', 'Only STANDARD state machines are supported locally');
      }
      const machine = engine.registerStateMachine({
        name: request.name,
        definition: request.definition,
        roleArn: request.roleArn,
      });
      return { stateMachineArn: machine.arn, creationDate: epochSeconds(machine.creationDate) };
    }
    case 'DescribeStateMachine': {
      const request = parseRequest(action, body);
      return describeStateMachine(engine.describeStateMachine(request.stateMachineArn));
    }
    case 'DescribeStateMachineForExecution': {
      const request = parseRequest(action, body);
      const machine = engine.describeExecution(request.executionArn).stateMachine;
      const { status: _status, type: _type, creationDate, ...rest } = describeStateMachine(machine);
      return { ...rest, updateDate: creationDate };
    }
    case 'ListStateMachines': {
      const request = parseRequest(action, body);
      const machines = engine.listStateMachines().map((machine, index) => ({ machine, index }));
      const { page, nextToken } = paginate(machines, (item) => item.index, false, request);
      return { stateMachines: page.map((item) => stateMachineListItem(item.machine)), nextToken };
    }
    case 'StartExecution': {
      const request = parseRequest(action, body);
      const record = engine.startExecution(request);
      return { executionArn: record.arn, startDate: epochSeconds(record.startDate) };
    }
    case 'DescribeExecution': {
      const request = parseRequest(action, body);
      return describeExecution(engine.describeExecution(request.executionArn));
    }
    case 'StopExecution': {
      const request = parseRequest(action, body);
      const record = engine.stopExecution(request.executionArn, request.error, request.cause);
      return { stopDate: epochSeconds(record.stopDate ?? new Date()) };
    }
    case 'ListExecutions': {
      const request = parseRequest(action, body);
      if (request.statusFilter === 'PENDING_REDRIVE') {
        return { executions: [] };
      }
      const records = engine.listExecutions(request.stateMachineArn, request.statusFilter);
      const { page, nextToken } = paginate(records, (record) => record.seq, true, request);
      return { executions: page.map(executionListItem), nextToken };
    }
    case 'GetExecutionHistory': {
      const request = parseRequest(action, body);
      const record = engine.describeExecution(request.executionArn);
      const descending = request.reverseOrder === true;
      const events = descending ? [...record.history.events].reverse() : record.history.events;
      const { page, nextToken } = paginate(events, (event) => event.id, descending, request);
      const includeData = request.includeExecutionData !== false;
      return { events: page.map((event) => historyEventOut(event, includeData)), nextToken };
    }
    case 'SendTaskSuccess': {
      const request = parseRequest(action, body);
      engine.sendTaskSuccess(request.taskToken, request.output);
      return {};
    }
    case 'SendTaskFailure': {
      const request = parseRequest(action, body);
      engine.sendTaskFailure(request.taskToken, request.error, request.cause);
      return {};
    }
    case 'SendTaskHeartbeat': {
      const request = parseRequest(action, body);
      engine.sendTaskHeartbeat(request.taskToken);
      return {};
    }
  }
}
