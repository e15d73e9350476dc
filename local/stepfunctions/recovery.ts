import type { HistoryEvent } from './history.js';
import type { JournalFile, JournalTokenStatus } from './journal.js';

/**
 * What a journal says about an execution after a restart: its description and history as they were, the task
 * tokens it issued, and, while it is still running, the top-level state to resume from.
 */

type RecoveredStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

interface RecoveredToken {
  token: string;
  stateName: string;
  issuedAt: Date;
  /** How the token was closed; absent while it is still open. */
  closed?: JournalTokenStatus;
  /** The callback task's resource returned, so whoever answers the token has it. */
  delivered: boolean;
  output?: unknown;
  error?: string;
  cause?: string;
}

export interface ResumePoint {
  /** The top-level state to run again; absent when no state was entered yet (the definition's StartAt). */
  stateName?: string;
  /** The input the state was entered with (absent with `stateName`: the execution input). */
  input?: unknown;
  enteredAt: Date;
  /** Entered and never exited: its StateEntered event is already in the history. */
  inProgress: boolean;
  /** The latest task token issued by this entry of the state. */
  token?: RecoveredToken;
  /** The child execution this entry of the state started. */
  childArn?: string;
}

export interface RecoveredExecution {
  file: string;
  arn: string;
  name: string;
  stateMachineName: string;
  input: string;
  startDate: Date;
  seq: number;
  status: RecoveredStatus;
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  events: HistoryEvent[];
  tokens: RecoveredToken[];
  /** Only while the execution is running. */
  resume?: ResumePoint;
}

/** Replays a journal's records (the first one is its start record, see readJournals). */
export function recoverExecution(journal: JournalFile): RecoveredExecution {
  const [start, ...rest] = journal.records;
  if (start?.t !== 'start') {
    throw new TypeError(`${journal.file} does not begin with a start record`);
  }
  const recovered: RecoveredExecution = {
    file: journal.file,
    arn: start.arn,
    name: start.name,
    stateMachineName: start.stateMachine,
    input: start.input,
    startDate: new Date(start.startDate),
    seq: start.seq,
    status: 'RUNNING',
    events: [],
    tokens: [],
  };
  const tokens = new Map<string, RecoveredToken & { line: number }>();
  const children: { state: string; arn: string; line: number }[] = [];
  let entered: { state: string; input: unknown; at: Date; line: number; exited: boolean } | undefined;
  rest.forEach((record, line) => {
    switch (record.t) {
      case 'start':
        return;
      case 'event':
        recovered.events.push({ ...record.event, timestamp: new Date(record.event.timestamp) } as HistoryEvent);
        return;
      case 'entered':
        entered = { state: record.state, input: record.input, at: new Date(record.at), line, exited: false };
        return;
      case 'exited':
        if (entered?.state === record.state) entered.exited = true;
        return;
      case 'token':
        tokens.set(record.token, {
          token: record.token,
          stateName: record.state,
          issuedAt: new Date(record.issuedAt),
          delivered: false,
          line,
        });
        return;
      case 'token-delivered': {
        const token = tokens.get(record.token);
        if (token) token.delivered = true;
        return;
      }
      case 'token-closed': {
        const token = tokens.get(record.token);
        if (!token) return;
        token.closed = record.status;
        if ('output' in record) token.output = record.output;
        if (record.error !== undefined) token.error = record.error;
        if (record.cause !== undefined) token.cause = record.cause;
        return;
      }
      case 'child':
        children.push({ state: record.state, arn: record.arn, line });
        return;
      case 'close':
        recovered.status = record.status;
        recovered.stopDate = new Date(record.stopDate);
        if (record.output !== undefined) recovered.output = record.output;
        if (record.error !== undefined) recovered.error = record.error;
        if (record.cause !== undefined) recovered.cause = record.cause;
        return;
    }
  });
  recovered.tokens = [...tokens.values()].map(({ line: _line, ...token }) => token);
  if (recovered.status !== 'RUNNING') return recovered;
  if (!entered) {
    recovered.resume = { enteredAt: recovered.startDate, inProgress: false };
    return recovered;
  }
  const current = entered;
  const ofThisEntry = <T extends { line: number }>(items: Iterable<T>, state: (item: T) => string) =>
    [...items].filter((item) => item.line > current.line && state(item) === current.state).at(-1);
  const token = ofThisEntry(tokens.values(), (item) => item.stateName);
  const child = ofThisEntry(children, (item) => item.state);
  recovered.resume = {
    stateName: current.state,
    input: current.input,
    enteredAt: current.at,
    inProgress: !current.exited,
    ...(token ? { token: recovered.tokens.find((item) => item.token === token.token) as RecoveredToken } : {}),
    ...(child ? { childArn: child.arn } : {}),
  };
  return recovered;
}
