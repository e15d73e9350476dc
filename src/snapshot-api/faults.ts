import { createHash } from 'node:crypto';

/**
 * Fault injection for benchmarks and fault tests. Decisions are a pure function of (seed, request line, how many
 * times that request line was seen), so a run is reproducible even when reads in a round race each other.
 */

export type RequestVerb = 'discovery' | 'get' | 'list' | 'watch' | 'log';

interface FaultMatch {
  /** Resource plural (`pods`, `routes`, …); any when omitted. */
  resource?: string;
  namespace?: string;
  verb?: RequestVerb;
  /** Only requests carrying a continue token (to expire a paged list midway). */
  withContinue?: boolean;
  /** The URL path starts with this. */
  pathPrefix?: string;
}

type FaultEffect =
  /** Answer with a Status of this code (403, 410, 500, 503, …). */
  | { type: 'status'; status: number; message?: string }
  /** Never answer; the request stays open until the client gives up or the server closes. */
  | { type: 'hang' }
  /** Answer normally after this extra delay. */
  | { type: 'delay'; ms: number }
  /** Drop the connection without an answer. */
  | { type: 'reset' };

export interface FaultRule {
  match?: FaultMatch;
  effect: FaultEffect;
  /** Fraction (0–1] of matching requests affected; 1 when omitted. */
  rate?: number;
  /** Stop after affecting this many requests. */
  times?: number;
}

export interface RequestFacts {
  verb: RequestVerb;
  resource?: string;
  namespace?: string;
  path: string;
  /** Path and query, the identity used for deterministic draws. */
  url: string;
  hasContinue: boolean;
}

/** A uniform draw in [0, 1) from a hash, so the same request in the same position always draws the same number. */
function draw(seed: number, url: string, occurrence: number, salt: string): number {
  const digest = createHash('sha256').update(`${seed}\u0000${salt}\u0000${occurrence}\u0000${url}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

function matches(match: FaultMatch | undefined, facts: RequestFacts): boolean {
  if (!match) return true;
  if (match.resource !== undefined && match.resource !== facts.resource) return false;
  if (match.namespace !== undefined && match.namespace !== facts.namespace) return false;
  if (match.verb !== undefined && match.verb !== facts.verb) return false;
  if (match.withContinue !== undefined && match.withContinue !== facts.hasContinue) return false;
  if (match.pathPrefix !== undefined && !facts.path.startsWith(match.pathPrefix)) return false;
  return true;
}

export interface FaultPlan {
  /** Extra delay applied to every request, in ms. */
  latencyMs: number;
  /** Fraction of resource requests (get, list, log; not discovery) answered with `faultStatus`. */
  faultRate: number;
  faultStatus: number;
  seed: number;
  rules: readonly FaultRule[];
}

export interface FaultDecision {
  delayMs: number;
  effect?: Exclude<FaultEffect, { type: 'delay' }>;
}

/** Holds the plan and the per-request counters; `decide` is called once per request, in arrival order. */
export class FaultInjector {
  private readonly seen = new Map<string, number>();
  private applied: number[] = [];

  constructor(private plan: FaultPlan) {
    this.applied = plan.rules.map(() => 0);
  }

  setRules(rules: readonly FaultRule[]): void {
    this.plan = { ...this.plan, rules };
    this.applied = rules.map(() => 0);
  }

  setLatency(latencyMs: number): void {
    this.plan = { ...this.plan, latencyMs };
  }

  setFaultRate(faultRate: number, faultStatus = this.plan.faultStatus): void {
    this.plan = { ...this.plan, faultRate, faultStatus };
  }

  decide(facts: RequestFacts): FaultDecision {
    const occurrence = (this.seen.get(facts.url) ?? 0) + 1;
    this.seen.set(facts.url, occurrence);
    let delayMs = this.plan.latencyMs;
    for (const [index, rule] of this.plan.rules.entries()) {
      if (!matches(rule.match, facts)) continue;
      if (rule.times !== undefined && (this.applied[index] ?? 0) >= rule.times) continue;
      const rate = rule.rate ?? 1;
      if (rate < 1 && draw(this.plan.seed, facts.url, occurrence, `rule${index}`) >= rate) continue;
      this.applied[index] = (this.applied[index] ?? 0) + 1;
      if (rule.effect.type === 'delay') {
        delayMs += rule.effect.ms;
        continue;
      }
      return { delayMs, effect: rule.effect };
    }
    if (
      facts.verb !== 'discovery' &&
      this.plan.faultRate > 0 &&
      draw(this.plan.seed, facts.url, occurrence, 'rate') < this.plan.faultRate
    ) {
      return { delayMs, effect: { type: 'status', status: this.plan.faultStatus } };
    }
    return { delayMs };
  }
}
