import { randomBytes } from 'node:crypto';
import { SfnServiceError } from './errors.js';

export type TaskTokenStatus = 'open' | 'succeeded' | 'failed' | 'timed-out' | 'stopped';

export interface TaskTokenCallbacks {
  succeed(output: unknown): void;
  fail(error: string | undefined, cause: string | undefined): void;
}

/** What SendTaskSuccess / SendTaskFailure said, for tokens answered by the API. */
export type TaskTokenAnswer = { output: unknown } | { error: string | undefined; cause: string | undefined };

export interface TaskTokenRegistryOptions {
  /** Called whenever an open token closes: answered (with the answer), timed out, failed or stopped. */
  onClose?: (
    token: string,
    entry: { executionArn: string; stateName: string },
    status: Exclude<TaskTokenStatus, 'open'>,
    answer?: TaskTokenAnswer,
  ) => void;
}

interface TokenEntry {
  status: TaskTokenStatus;
  executionArn: string;
  stateName: string;
  /** Absent for a restored token whose task has not been resumed yet; its answer waits in `pending`. */
  callbacks?: TaskTokenCallbacks;
  pending?: TaskTokenAnswer;
}

const TOKEN_PREFIX = 'AQ';
const TOKEN_BODY_BYTES = 48;
const TOKEN_PATTERN = /^AQ[A-Za-z0-9_-]{64}$/;
const TOKEN_MAX_LENGTH = 1024;

/**
 * Task tokens of callback (`.waitForTaskToken`) tasks. A token completes its task once. Error codes follow the
 * Step Functions API reference: a string that is not a token of this format is InvalidToken; a well-formed token
 * this endpoint never issued (for example one from before a restart) is TaskDoesNotExist; a token whose task has
 * already been closed — completed, failed, timed out or stopped — is TaskTimedOut.
 */
export class TaskTokenRegistry {
  private readonly entries = new Map<string, TokenEntry>();
  private readonly byExecution = new Map<string, Set<string>>();

  constructor(private readonly options: TaskTokenRegistryOptions = {}) {}

  issue(executionArn: string, stateName: string, callbacks: TaskTokenCallbacks): string {
    const token = `${TOKEN_PREFIX}${randomBytes(TOKEN_BODY_BYTES).toString('base64url')}`;
    this.add(token, { status: 'open', executionArn, stateName, callbacks });
    return token;
  }

  /**
   * Registers a token issued before a restart. An open one accepts answers at once; they reach the task when it
   * attaches (see `attach`).
   */
  restore(token: string, executionArn: string, stateName: string, status: TaskTokenStatus): void {
    if (!TOKEN_PATTERN.test(token) || this.entries.has(token)) return;
    this.add(token, { status, executionArn, stateName });
  }

  /** Binds a restored open token to its resumed task; an answer that came in meanwhile is delivered now. */
  attach(token: string, callbacks: TaskTokenCallbacks): void {
    const entry = this.entries.get(token);
    if (!entry) return;
    entry.callbacks = callbacks;
    const pending = entry.pending;
    entry.pending = undefined;
    if (pending) deliver(callbacks, pending);
  }

  private add(token: string, entry: TokenEntry): void {
    this.entries.set(token, entry);
    let tokens = this.byExecution.get(entry.executionArn);
    if (!tokens) {
      tokens = new Set();
      this.byExecution.set(entry.executionArn, tokens);
    }
    tokens.add(token);
  }

  succeed(token: string, output: unknown): void {
    this.answer(token, 'succeeded', { output });
  }

  fail(token: string, error: string | undefined, cause: string | undefined): void {
    this.answer(token, 'failed', { error, cause });
  }

  private answer(token: string, status: 'succeeded' | 'failed', answer: TaskTokenAnswer): void {
    const entry = this.openEntry(token);
    entry.status = status;
    this.options.onClose?.(token, entry, status, answer);
    if (entry.callbacks) {
      deliver(entry.callbacks, answer);
    } else {
      entry.pending = answer;
    }
  }

  heartbeat(token: string): void {
    this.openEntry(token);
  }

  /** Closes a token without completing it (the task timed out, failed on its own, or the execution stopped). */
  close(token: string, status: Exclude<TaskTokenStatus, 'open'>): void {
    const entry = this.entries.get(token);
    if (entry?.status === 'open') {
      entry.status = status;
      this.options.onClose?.(token, entry, status);
    }
  }

  status(token: string): TaskTokenStatus | undefined {
    return this.entries.get(token)?.status;
  }

  closeExecution(executionArn: string): void {
    for (const token of this.byExecution.get(executionArn) ?? []) {
      this.close(token, 'stopped');
    }
  }

  /** Drops every token of an execution that is no longer kept in memory. */
  forgetExecution(executionArn: string): void {
    for (const token of this.byExecution.get(executionArn) ?? []) {
      this.entries.delete(token);
    }
    this.byExecution.delete(executionArn);
  }

  private openEntry(token: string): TokenEntry {
    if (token.length < 1 || token.length > TOKEN_MAX_LENGTH) {
      throw new SfnServiceError(
        'ValidationException',
        `1 validation error detected: Value at 'taskToken' failed to satisfy constraint: Member must have length between 1 and ${TOKEN_MAX_LENGTH}`,
      );
    }
    if (!TOKEN_PATTERN.test(token)) {
      throw new SfnServiceError('InvalidToken', 'Invalid token');
    }
    const entry = this.entries.get(token);
    if (!entry) {
      throw new SfnServiceError('TaskDoesNotExist', 'Task does not exist: the token was not issued by this endpoint');
    }
    if (entry.status !== 'open') {
      throw new SfnServiceError('TaskTimedOut', "Task Timed Out: 'Provided task does not exist anymore'");
    }
    return entry;
  }
}

function deliver(callbacks: TaskTokenCallbacks, answer: TaskTokenAnswer): void {
  if ('output' in answer) {
    callbacks.succeed(answer.output);
  } else {
    callbacks.fail(answer.error, answer.cause);
  }
}
