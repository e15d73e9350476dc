/**
 * Facts about Kubernetes objects that analyzers share and calmops uses elsewhere: pods and their owners, what logs
 * say, events, quantities, label selectors, Services, NetworkPolicies, storage, admission and measured usage.
 */
export { parseDependencyFailure } from './dependency-failures.js';
export { decisiveLogLine } from './log-verdicts.js';
export { isPodReady } from './pods.js';
export { parseQuantity } from './quantity.js';
export { formatSelector, type LabelSelector, matchesMap, matchesSelector } from './selectors.js';
