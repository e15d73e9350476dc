import {
  type CaseResult,
  type IncidentCase,
  loadCorpus,
  type Mode,
  runCase,
} from '../../bench/support/incident-corpus.js';

/**
 * One replay of the incident corpus per mode and test process. The corpus's floors, its remediation plans and its
 * prompt suggestions all judge the same envelopes; replaying 131 incidents once for each of them tripled the most
 * expensive work in the integration project.
 */

const corpus = loadCorpus();
const runs = new Map<Mode, Promise<CaseResult[]>>();

export function corpusCases(): readonly IncidentCase[] {
  return corpus;
}

/** Every incident's result in `mode`, in corpus order, replayed two at a time (each case starts its own server). */
export function corpusRuns(mode: Mode): Promise<CaseResult[]> {
  let pending = runs.get(mode);
  if (pending === undefined) {
    pending = (async () => {
      const results: CaseResult[] = [];
      for (let i = 0; i < corpus.length; i += 2) {
        results.push(...(await Promise.all(corpus.slice(i, i + 2).map((c) => runCase(c, mode)))));
      }
      return results;
    })();
    runs.set(mode, pending);
  }
  return pending;
}

/** The result of one incident in `mode`, from the shared replay. */
export async function corpusRun(slug: string, mode: Mode): Promise<CaseResult | undefined> {
  return (await corpusRuns(mode)).find((r) => r.slug === slug);
}
