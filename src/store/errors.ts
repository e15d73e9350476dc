import type * as z from 'zod';

/** Base class of every error the store raises, so callers can tell storage problems from domain ones. */
export class StoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** Input rejected before anything was written. */
export class StoreValidationError extends StoreError {
  readonly issues: readonly z.core.$ZodIssue[];
  constructor(what: string, issues: readonly z.core.$ZodIssue[], options?: { cause?: unknown }) {
    super(`Invalid ${what}: ${describeIssues(issues)}`, options);
    this.issues = issues;
  }
}

/** A stored item that does not match its schema (written by an older version, or edited by hand). */
export class MalformedRecordError extends StoreError {
  readonly key: { PK: string; SK: string };
  readonly issues: readonly z.core.$ZodIssue[];
  constructor(key: { PK: string; SK: string }, issues: readonly z.core.$ZodIssue[], options?: { cause?: unknown }) {
    super(`Malformed record ${key.PK} / ${key.SK}: ${describeIssues(issues)}`, options);
    this.key = key;
    this.issues = issues;
  }
}

/** DynamoDB refused or failed a request for a reason other than a condition we asked for. */
export class StoreRequestError extends StoreError {
  readonly operation: string;
  constructor(operation: string, target: string, options?: { cause?: unknown }) {
    const cause = options?.cause;
    const detail = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`DynamoDB ${operation} on ${target} failed: ${detail}`, options);
    this.operation = operation;
  }
}

export class SessionNotFoundError extends StoreError {
  readonly sessionId: string;
  constructor(sessionId: string, options?: { cause?: unknown }) {
    super(`Session ${sessionId} does not exist`, options);
    this.sessionId = sessionId;
  }
}

export class SessionAlreadyExistsError extends StoreError {
  readonly sessionId: string;
  constructor(sessionId: string, options?: { cause?: unknown }) {
    super(`Session ${sessionId} already exists`, options);
    this.sessionId = sessionId;
  }
}

/** The session changed since it was read; re-read it and apply the change again. */
export class StaleVersionError extends StoreError {
  readonly sessionId: string;
  readonly expectedVersion: number;
  readonly actualVersion: number;
  constructor(sessionId: string, expectedVersion: number, actualVersion: number, options?: { cause?: unknown }) {
    super(
      `Session ${sessionId} is at version ${actualVersion}, not ${expectedVersion}: it changed since it was read`,
      options,
    );
    this.sessionId = sessionId;
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}

/** An append kept colliding with existing keys; nothing was overwritten. */
export class AppendConflictError extends StoreError {}

export class ApprovalNotFoundError extends StoreError {
  readonly approvalId: string;
  constructor(approvalId: string, options?: { cause?: unknown }) {
    super(`Approval ${approvalId} does not exist`, options);
    this.approvalId = approvalId;
  }
}

export class ApprovalAlreadyExistsError extends StoreError {
  readonly approvalId: string;
  constructor(approvalId: string, options?: { cause?: unknown }) {
    super(`Approval ${approvalId} already exists`, options);
    this.approvalId = approvalId;
  }
}

export class ApprovalAlreadyDecidedError extends StoreError {
  readonly approvalId: string;
  readonly status: string;
  readonly decidedBy: string | undefined;
  constructor(approvalId: string, status: string, decidedBy: string | undefined, options?: { cause?: unknown }) {
    super(`Approval ${approvalId} was already ${status}${decidedBy === undefined ? '' : ` by ${decidedBy}`}`, options);
    this.approvalId = approvalId;
    this.status = status;
    this.decidedBy = decidedBy;
  }
}

export class ApprovalExpiredError extends StoreError {
  readonly approvalId: string;
  readonly expiresAt: string;
  constructor(approvalId: string, expiresAt: string, options?: { cause?: unknown }) {
    super(`Approval ${approvalId} expired at ${expiresAt} and can no longer be decided`, options);
    this.approvalId = approvalId;
    this.expiresAt = expiresAt;
  }
}

export class ApprovalNotAllowedError extends StoreError {
  readonly approvalId: string;
  readonly userId: string;
  constructor(approvalId: string, userId: string, options?: { cause?: unknown }) {
    super(`User ${userId} is not allowed to decide approval ${approvalId}`, options);
    this.approvalId = approvalId;
    this.userId = userId;
  }
}

/** A different, still valid wait is stored for the session; overwriting it would strand its execution. */
export class WaitAlreadyPendingError extends StoreError {
  readonly sessionId: string;
  constructor(sessionId: string, expiresAt: string, options?: { cause?: unknown }) {
    super(`Session ${sessionId} already has an unclaimed wait that expires at ${expiresAt}`, options);
    this.sessionId = sessionId;
  }
}

export class ThreadAlreadyBoundError extends StoreError {
  readonly existingSessionId: string;
  constructor(channelId: string, threadTs: string, existingSessionId: string, options?: { cause?: unknown }) {
    super(`Thread ${channelId}/${threadTs} already belongs to session ${existingSessionId}`, options);
    this.existingSessionId = existingSessionId;
  }
}

/** The table exists but its keys or indexes differ from TABLE_DEFINITION. */
export class TableDefinitionMismatchError extends StoreError {}

/** Refused before writing: DynamoDB caps an item at 400 KB and the workflow keeps payloads summarized. */
export class ItemTooLargeError extends StoreError {
  readonly bytes: number;
  constructor(what: string, bytes: number, limit: number) {
    super(`${what} is ${bytes} bytes, above the ${limit} byte limit; summarize it before storing`);
    this.bytes = bytes;
  }
}

/** Other consumers kept winning every claim attempt; the caller may retry later. Nothing was lost. */
export class ClaimContentionError extends StoreError {}
