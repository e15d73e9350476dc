/** Gathering: a template's rounds of read-only reads, and the analyzer context built from what they brought back. */
export { type ContextInput, contextFromObjects } from './context.js';
export { assessEvidence, type EvidenceAssessment, type Gathered, gather } from './gathering.js';
