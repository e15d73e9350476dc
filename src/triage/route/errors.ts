/** Bad triage input. Each carries what a person needs to fix the request, never a stack of internals. */

export { InvalidNamespaceError } from './namespace.js';

export class UnknownIntentError extends Error {
  override readonly name = 'UnknownIntentError';
  constructor(
    message: string,
    /** Nearest known intents, best first (may be empty). */
    readonly suggestions: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class InvalidTriageRequestError extends Error {
  override readonly name = 'InvalidTriageRequestError';
}

export interface NamespaceCandidate {
  namespace: string;
  /** What in the cluster matched the request's words there. */
  why: string;
}

/** The request names no namespace and its words match things in several: a person picks one. */
export class AmbiguousNamespaceError extends Error {
  override readonly name = 'AmbiguousNamespaceError';
  constructor(
    message: string,
    readonly candidates: readonly NamespaceCandidate[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
