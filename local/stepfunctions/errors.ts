/**
 * Error codes of the Step Functions API that the local endpoint answers with. They travel as the `__type` of a
 * JSON 1.0 error body with HTTP 400, which `@aws-sdk/client-sfn` turns into the matching exception class.
 */
export type SfnErrorCode =
  | 'ExecutionAlreadyExists'
  | 'ExecutionDoesNotExist'
  | 'InvalidArn'
  | 'InvalidDefinition'
  | 'InvalidExecutionInput'
  | 'InvalidName'
  | 'InvalidOutput'
  | 'InvalidToken'
  | 'StateMachineAlreadyExists'
  | 'StateMachineDoesNotExist'
  | 'TaskDoesNotExist'
  | 'TaskTimedOut'
  | 'UnknownOperationException'
  | 'SerializationException'
  | 'ValidationException';

/** A request the Step Functions API would reject; `code` is the wire error code. */
export class SfnServiceError extends Error {
  readonly code: SfnErrorCode;
  readonly statusCode: number;

  constructor(code: SfnErrorCode, message: string, options?: { cause?: unknown; statusCode?: number }) {
    super(message, { cause: options?.cause });
    this.name = 'SfnServiceError';
    this.code = code;
    this.statusCode = options?.statusCode ?? 400;
  }
}

/** A state machine definition the local engine cannot run (invalid ASL or a feature it does not support). */
export class StateMachineDefinitionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.name = 'StateMachineDefinitionError';
  }
}

/**
 * A Task failure as the state machine sees it: `name` is the ASL error name matched by `Retry`/`Catch`
 * (for example `Error`, `Lambda.ResourceNotFoundException`, or the `error` of SendTaskFailure) and `message` is the
 * cause string.
 */
export class TaskFailureError extends Error {
  /** The exception a task handler threw, when the failure came from one. */
  readonly original: unknown;

  constructor(errorName: string, cause: string, original?: unknown) {
    // The engine reports `error.cause` as the failure's Cause, so the cause must be the cause text itself.
    super(cause, { cause });
    this.name = errorName;
    this.original = original;
  }
}

/** The on-disk journal of an execution could not be written, read or understood. */
export class ExecutionJournalError extends Error {
  /** The journal file concerned. */
  readonly file: string;

  constructor(message: string, file: string, options?: { cause?: unknown }) {
    super(`${message} (${file})`, { cause: options?.cause });
    this.name = 'ExecutionJournalError';
    this.file = file;
  }
}
