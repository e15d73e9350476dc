import type { Domain, ResourceRef, Severity } from '../triage/envelope/index.js';
import type { BudgetedReader } from './budget.js';

/**
 * A specialist is a deeper look at one domain than the triage's bounded sweep: its own analyzers and its own read
 * budget. It reports what it found, and the list of what it checked and ruled out, so that "nothing new" is itself
 * evidence a person can weigh.
 */

export interface SpecialistFinding {
  code: string;
  domain: Domain;
  severity: Severity;
  resource: ResourceRef;
  related: ResourceRef[];
  message: string;
  evidence: string[];
  confidence: number;
  /** The analyzer that found it. */
  analyzer: string;
  /**
   * The analyzer's evidence says this is upstream of what it relates to (the database the readiness check cannot
   * reach is why the pods are not ready): it may take the lead from the triage's top cause.
   */
  explains?: boolean;
}

type CheckOutcome = 'found' | 'ruled-out' | 'not-read';

export interface SpecialistCheck {
  analyzer: string;
  /** What was looked at, in a few words ("previous logs of 2 restarting containers"). */
  what: string;
  outcome: CheckOutcome;
  /** What it showed: the line that found something, or why it rules the cause out. */
  detail: string;
}

export interface SpecialistContext {
  namespace: string;
  reads: BudgetedReader;
  now: Date;
}

export interface AnalyzerResult {
  findings: SpecialistFinding[];
  checks: SpecialistCheck[];
}

export interface SpecialistAnalyzer {
  id: string;
  domains: readonly Domain[];
  run(ctx: SpecialistContext): Promise<AnalyzerResult>;
}
