/** Ranking: findings attributed to the object a person changes, deduplicated, and ranked into root causes. */
export { groupCauses } from './causes.js';
export { attributeOwners } from './owners.js';
export { dedupeFindings, type RankedCauseWithFinding, rankRootCauses } from './root-cause.js';
