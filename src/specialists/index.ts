import { ClusterReadError, type ClusterReader } from '../cluster/types.js';
import type { Domain } from '../triage/envelope/index.js';
import { BudgetedReader, ReadBudgetExhaustedError } from './budget.js';
import { COMPUTE_ANALYZERS, nodePressure, probeHistory } from './compute.js';
import { NETWORK_ANALYZERS, unreadyPodLogs } from './network.js';
import { STORAGE_ANALYZERS } from './storage.js';
import type { SpecialistAnalyzer, SpecialistCheck, SpecialistFinding } from './types.js';

export { type RankingEffect, rankingEffect } from './ranking.js';
export type { SpecialistCheck } from './types.js';

/** Reads one specialist may make: several times the triage's bounded sweep, still bounded. */
const SPECIALIST_READ_BUDGET = 40;

const BY_DOMAIN: Readonly<Record<Domain, readonly SpecialistAnalyzer[]>> = {
  compute: [...COMPUTE_ANALYZERS, unreadyPodLogs],
  storage: STORAGE_ANALYZERS,
  networking: [...NETWORK_ANALYZERS, probeHistory],
  platform: [...NETWORK_ANALYZERS, probeHistory, nodePressure],
};

function analyzersFor(domain: Domain): readonly SpecialistAnalyzer[] {
  return BY_DOMAIN[domain];
}

export interface SpecialistReport {
  domain: Domain;
  analyzers: string[];
  findings: SpecialistFinding[];
  checks: SpecialistCheck[];
  reads: number;
  budget: number;
}

function notRead(analyzer: string, error: unknown): SpecialistCheck {
  const reason =
    error instanceof ReadBudgetExhaustedError
      ? error.message
      : error instanceof ClusterReadError
        ? `a read failed (${error.reason})`
        : `it failed: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`;
  return { analyzer, what: analyzer.replace(/-/g, ' '), outcome: 'not-read', detail: reason };
}

/**
 * Runs one domain's analyzers against the namespace, one after the other on a shared budget, so the first analyzers
 * (the most telling) always get their reads. A failing analyzer becomes a "not read" line, never a failed handoff.
 */
export async function runSpecialist(
  reader: ClusterReader,
  request: { domain: Domain; namespace: string; now?: Date; budget?: number; signal?: AbortSignal },
): Promise<SpecialistReport> {
  const budget = request.budget ?? SPECIALIST_READ_BUDGET;
  const reads = new BudgetedReader(reader, budget, request.signal);
  const ctx = { namespace: request.namespace, reads, now: request.now ?? new Date() };
  const findings: SpecialistFinding[] = [];
  const checks: SpecialistCheck[] = [];
  const analyzers = analyzersFor(request.domain);
  for (const analyzer of analyzers) {
    try {
      const result = await analyzer.run(ctx);
      findings.push(...result.findings);
      checks.push(...result.checks);
    } catch (error) {
      checks.push(notRead(analyzer.id, error));
    }
  }
  return {
    domain: request.domain,
    analyzers: analyzers.map((a) => a.id),
    findings,
    checks,
    reads: reads.spent,
    budget,
  };
}
