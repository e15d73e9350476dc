/**
 * Routing: from what a person wrote to an intent and a namespace (the dictionary, the namespace in the words, the
 * sweep when nothing more specific fits, locating a workload's namespace, following a dependency elsewhere).
 */
export { type IntentSuggestion, resolveEntry } from './dictionary.js';
export {
  AmbiguousNamespaceError,
  InvalidTriageRequestError,
  type NamespaceCandidate,
  UnknownIntentError,
} from './errors.js';
export { intentSummaries } from './intent-list.js';
export { explainInvalidNamespace, InvalidNamespaceError, isDns1123Label, parseNamespace } from './namespace.js';
export { SWEEP_INTENT } from './routing.js';
