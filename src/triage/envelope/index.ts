/**
 * The envelope: what a triage answers (findings, ranked causes, rubrics, next actions, the summary and the evidence
 * behind it), its schema, and the report printed from it.
 */
export {
  type RankedCause,
  type SafetyLabel,
  SafetyLabelSchema,
  type TriageEnvelope,
  TriageEnvelopeSchema,
  type TriggerMode,
} from './envelope.js';
export {
  type Domain,
  DomainSchema,
  type Finding,
  type ResourceRef,
  ResourceRefSchema,
  refKey,
  SEVERITY_ORDER,
  type Severity,
  SeveritySchema,
} from './findings.js';
