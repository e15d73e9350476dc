import { randomBytes } from 'node:crypto';
import { SfnServiceError } from './errors.js';

export type TaskTokenStatus = 'open' | 'succeeded' | 'failed' | 'timed-out' | 'stopped';

export interface TaskTokenCallbacks {
  succeed(output: unknown): void;
  fail(error: string | undefined, cause: string | undefined): void;
}

interface TokenEntry {
  status: TaskTokenStatus;
  executionArn: string;
  stateName: string;
  callbacks: TaskTokenCallbacks;
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

  issue(executionArn: string, stateName: string, callbacks: TaskTokenCallbacks): string {
    const token = `${TOKEN_PREFIX}${randomBytes(TOKEN_BODY_BYTES).toString('base64url')}`;
    this.entries.set(token, { status: 'open', executionArn, stateName, callbacks });
    let tokens = this.byExecution.get(executionArn);
    if (!tokens) {
      tokens = new Set();
      this.byExecution.set(executionArn, tokens);
    }
    tokens.add(token);
    return token;
  }

  succeed(token: string, output: unknown): void {
    const entry = this.openEntry(token);
    entry.status = 'succeeded';
    entry.callbacks.succeed(output);
  }

  fail(token: string, error: string | undefined, cause: string | undefined): void {
    const entry = this.openEntry(token);
    entry.status = 'failed';
    entry.callbacks.fail(error, cause);
  }

  heartbeat(token: string): void {
    this.openEntry(token);
  }

  /** Closes a token without completing it (the task timed out, failed on its own, or the execution stopped). */
  close(token: string, status: Exclude<TaskTokenStatus, 'open'>): void {
    const entry = this.entries.get(token);
    if (entry?.status === 'open') {
      entry.status = status;
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
