import type { ExecutionRecord, ExecutionRuntime } from './execution-runtime.js';
import type { ExecutionJournal } from './journal.js';
import type { TaskTokenAnswer, TaskTokenStatus } from './tokens.js';

/** The first record of a journal: everything a restart needs to serve the execution again under the same ARN. */
export function journalStart(journal: ExecutionJournal, record: ExecutionRecord): void {
  journal.append({
    t: 'start',
    v: 1,
    arn: record.arn,
    name: record.name,
    stateMachine: record.stateMachine.name,
    input: record.input,
    startDate: record.startDate.toISOString(),
    seq: record.seq,
  });
}

/** Records how a closed execution ended; a running one has nothing to record yet. */
export function journalClose(runtime: ExecutionRuntime, now: () => Date): void {
  const { record, journal } = runtime;
  if (!journal || record.status === 'RUNNING') return;
  journal.append({
    t: 'close',
    status: record.status,
    stopDate: (record.stopDate ?? now()).toISOString(),
    ...(record.output !== undefined ? { output: record.output } : {}),
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.cause !== undefined ? { cause: record.cause } : {}),
  });
}

/** Records how a task token closed, so a restart answers it, or resumes its task, accordingly. */
export function journalTokenClosed(
  journal: ExecutionJournal | undefined,
  token: string,
  status: Exclude<TaskTokenStatus, 'open'>,
  answer: TaskTokenAnswer | undefined,
): void {
  // Tokens stopped with their execution are closed by its close record (or stay open for a resumed run).
  if (status === 'stopped') return;
  if (!journal) return;
  if (answer && 'output' in answer) {
    journal.append({ t: 'token-closed', token, status: 'succeeded', output: answer.output ?? null });
  } else if (answer) {
    journal.append({
      t: 'token-closed',
      token,
      status: 'failed',
      ...(answer.error !== undefined ? { error: answer.error } : {}),
      ...(answer.cause !== undefined ? { cause: answer.cause } : {}),
    });
  } else {
    // Closed without an answer: timed out, or its resource failed (a retry issues a new token).
    journal.append({ t: 'token-closed', token, status: status === 'timed-out' ? 'timed-out' : 'abandoned' });
  }
}
