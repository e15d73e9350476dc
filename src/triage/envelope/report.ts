import type { TriageEnvelope } from './envelope.js';

/**
 * The envelope as a plain-text report for a terminal: what is wrong first, then how sure, what is missing and
 * why, and what to do next with each action's safety label. No colour codes, so it pastes cleanly into tickets.
 */
export function formatReport(envelope: TriageEnvelope): string {
  const { routing, rubrics, evidence, execution } = envelope;
  const lines: string[] = [];
  const title = `Triage: ${routing.intent} in ${routing.namespace}${routing.cluster ? ` (${routing.cluster})` : ''}`;
  lines.push(title, '='.repeat(title.length), '');
  lines.push(envelope.summary, '');
  lines.push(
    `Priority ${rubrics.priority} · confidence ${rubrics.confidence} · actions ${rubrics.safety} · ` +
      `evidence ${percent(evidence.completeness)} (threshold ${percent(evidence.threshold)})`,
  );
  lines.push(`Routing: ${routing.why} (mode ${routing.triggerMode}, intent confidence ${routing.intentConfidence})`);
  lines.push('');

  lines.push('Root cause');
  if (envelope.rootCause.length === 0) lines.push('  none found');
  for (const cause of envelope.rootCause) {
    lines.push(`  ${cause.rank}. ${cause.code} — ${ref(cause.resource)} (confidence ${cause.confidence})`);
    lines.push(`     ${cause.summary}`);
    if (cause.change) lines.push(`     change: ${cause.change}`);
    for (const alt of cause.alternatives ?? []) lines.push(`     or change ${ref(alt.resource)}: ${alt.change}`);
    if (cause.chain && cause.chain.length > 1) lines.push(`     chain: ${cause.chain.map(ref).join(' → ')}`);
    if ((cause.impact ?? []).length > 0) {
      lines.push('     impact:');
      for (const i of cause.impact ?? []) {
        lines.push(`       - ${ref(i.resource)} (${i.code}): ${i.summary}`);
        for (const e of i.evidence) lines.push(`           · ${e}`);
      }
    }
  }
  lines.push('');

  if (envelope.findings.length > 0) {
    lines.push('Findings');
    for (const f of envelope.findings) {
      lines.push(`  [${f.severity}] ${f.code} ${ref(f.resource)}: ${f.message}`);
      for (const e of f.evidence) lines.push(`      · ${e}`);
    }
    lines.push('');
  }

  lines.push('Evidence');
  lines.push(`  present: ${evidence.present.length > 0 ? evidence.present.join(', ') : 'none'}`);
  lines.push(`  missing: ${evidence.missing.length > 0 ? evidence.missing.join(', ') : 'none'}`);
  for (const gap of evidence.gaps) lines.push(`    ${gap.type}: ${gap.reason} — ${gap.detail}`);
  lines.push('');

  lines.push('Next actions');
  if (envelope.nextActions.length === 0) lines.push('  none');
  for (const a of envelope.nextActions) {
    lines.push(`  [${a.safety}${a.type === 'mutating' ? ', mutating' : ''}] ${a.description}`);
    lines.push(`      $ ${a.command}`);
    if (a.rationale) lines.push(`      why: ${a.rationale}`);
  }
  lines.push('');

  if (envelope.promptSuggestions.length > 0) {
    lines.push('Ask next');
    for (const p of envelope.promptSuggestions) lines.push(`  - ${p}`);
    lines.push('');
  }

  lines.push(
    `Steps ${execution.stepsExecuted}/${execution.stepBudget} · ${execution.requests} requests · ` +
      `${execution.durationMs} ms${execution.timedOut ? ' · deadline reached' : ''} · now ${execution.now}`,
  );
  return `${lines.join('\n')}\n`;
}

function percent(n: number): string {
  return `${Math.round(n * 100)}%`;
}

function ref(r: { kind: string; name: string; namespace?: string | undefined }): string {
  return `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;
}
