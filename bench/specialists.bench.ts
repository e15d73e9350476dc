import { type RankingEffect, rankingEffect, runSpecialist } from '../src/specialists/index.js';
import type { Domain, TriageEnvelope } from '../src/triage/envelope/index.js';
import { silentLogger, triage } from '../src/triage/index.js';
import { loadCorpus, withCaseCluster } from './support/incident-corpus.js';

/**
 * `npm run bench -- specialists`: over the incident corpus (test/fixtures/incidents/), triage each incident with
 * `-n`, then hand it to the specialist of its top cause's domain (the routing domain when nothing ranks), and count
 * how often the specialist's evidence changes the top cause, confirms it, or leaves it as it was; how often it adds
 * a finding the envelope did not have; and, when it changes the lead, whether the new lead names the entity the
 * case's expert says to change.
 */

interface Row {
  slug: string;
  domain: Domain;
  effect: RankingEffect['effect'] | 'no-envelope';
  newFindings: number;
  checks: number;
  ruledOut: number;
  reads: number;
  leadNamesExpected?: boolean;
}

function domainOf(envelope: TriageEnvelope): Domain {
  const top = envelope.rootCause[0];
  const finding = top ? envelope.findings.find((f) => f.code === top.code) : undefined;
  return finding?.domain ?? envelope.routing.domain;
}

export default async function specialists(): Promise<object> {
  const corpus = loadCorpus();
  const rows: Row[] = [];
  for (const c of corpus) {
    const row = await withCaseCluster(c, async (reader): Promise<Row> => {
      const envelope = await triage(
        { text: c.request, now: c.now, namespace: c.namespace },
        { reader, logger: silentLogger },
      );
      const domain = domainOf(envelope);
      const report = await runSpecialist(reader, {
        domain,
        namespace: envelope.routing.namespace,
        now: new Date(c.now),
      });
      const known = new Set(envelope.findings.map((f) => `${f.code}/${f.resource.kind}/${f.resource.name}`));
      const added = report.findings.filter((f) => !known.has(`${f.code}/${f.resource.kind}/${f.resource.name}`));
      const effect = rankingEffect(envelope.rootCause[0], added);
      const expected = new Set(c.rootCause.map((r) => `${r.kind}/${r.name}`));
      return {
        slug: c.slug,
        domain,
        effect: effect.effect,
        newFindings: added.length,
        checks: report.checks.length,
        ruledOut: report.checks.filter((x) => x.outcome === 'ruled-out').length,
        reads: report.reads,
        ...(effect.effect === 'changed'
          ? {
              leadNamesExpected: [effect.to.resource, ...effect.to.related].some((r) =>
                expected.has(`${r.kind}/${r.name}`),
              ),
            }
          : {}),
      };
    }).catch(
      (error: Error): Row => ({
        slug: c.slug,
        domain: 'compute',
        effect: 'no-envelope',
        newFindings: 0,
        checks: 0,
        ruledOut: 0,
        reads: 0,
        ...{ error: error.message },
      }),
    );
    rows.push(row);
    process.stdout.write(
      `${row.slug.padEnd(48)} ${row.domain.padEnd(10)} ${row.effect.padEnd(10)} +${row.newFindings} finding(s), ${row.ruledOut}/${row.checks} ruled out, ${row.reads} reads${row.leadNamesExpected === undefined ? '' : row.leadNamesExpected ? ' (new lead names the expected entity)' : ' (new lead misses the expected entity)'}\n`,
    );
  }
  const count = (effect: Row['effect']) => rows.filter((r) => r.effect === effect).length;
  const changed = count('changed');
  const confirmed = count('confirmed');
  const summary = {
    incidents: rows.length,
    changed,
    confirmed,
    unchanged: count('unchanged'),
    noEnvelope: count('no-envelope'),
    changedOrConfirmed: changed + confirmed,
    changedOrConfirmedShare: rows.length === 0 ? 0 : (changed + confirmed) / rows.length,
    withNewFindings: rows.filter((r) => r.newFindings > 0).length,
    withRuledOutChecks: rows.filter((r) => r.ruledOut > 0).length,
    changedToExpected: rows.filter((r) => r.leadNamesExpected === true).length,
    meanReads: rows.reduce((n, r) => n + r.reads, 0) / Math.max(1, rows.length),
  };
  process.stdout.write(
    `\n${summary.incidents} incidents: the specialist changed the top cause in ${changed} and confirmed it with new evidence in ${confirmed} (${(summary.changedOrConfirmedShare * 100).toFixed(1)}%); ${summary.changedToExpected} of the changes name the expert's entity; ${summary.withNewFindings} got a new finding, ${summary.withRuledOutChecks} a ruled-out check; ${summary.meanReads.toFixed(1)} reads on average\n`,
  );
  return { summary, rows };
}
