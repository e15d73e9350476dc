/**
 * The errors of step dispatch, apart from the dispatch table: the cluster reader reports a bad payload with them
 * without importing every workflow step (and with them the table and state machine clients).
 */

export class UnknownStepError extends Error {
  override readonly name = 'UnknownStepError';
}

export class StepPayloadError extends Error {
  override readonly name = 'StepPayloadError';
}
