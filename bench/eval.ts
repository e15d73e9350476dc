import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CaseResult, loadCorpus, type Mode, runCase, summarizeResults } from './support/incident-corpus.js';

/**
 * `npm run eval [-- --verbose] [--mode=namespace|free-text] [slug-prefix …]`: triage every incident of the corpus with and without `-n` and print
 * intent and namespace accuracy, key-evidence recall, root-cause accuracy, false alarms and refusals. Results go to
 * bench/results/eval.json.
 */

async function main(args: string[]): Promise<number> {
  const verbose = args.includes('--verbose') || args.includes('-v');
  const prefixes = args.filter((a) => !a.startsWith('-'));
  const corpus = loadCorpus().filter((c) => prefixes.length === 0 || prefixes.some((p) => c.slug.startsWith(p)));
  const only = args.find((a) => a.startsWith('--mode='))?.slice('--mode='.length);
  const modes: Mode[] = (['namespace', 'free-text'] as const).filter((m) => only === undefined || m === only);
  const byMode: Record<Mode, CaseResult[]> = { namespace: [], 'free-text': [] };
  for (const c of corpus) {
    for (const mode of modes) {
      const r = await runCase(c, mode);
      byMode[mode].push(r);
      if (
        verbose ||
        !(
          r.intentOk &&
          r.rootCauseOk &&
          r.entityScore === 1 &&
          r.absenceFromPartialRead.length === 0 &&
          r.evidenceMissed.length === 0 &&
          (mode === 'namespace' || r.namespaceOk)
        )
      ) {
        const got = r.envelope
          ? `${r.envelope.routing.intent} in ${r.envelope.routing.namespace}; cause ${r.envelope.rootCause.map((c) => `${c.code} ${c.resource.kind}/${c.resource.name}`).join(', ') || 'none'} (entity ${r.entityScore})`
          : r.asked
            ? `asked: ${r.asked.join(', ')}`
            : `refused: ${r.refused}`;
        process.stdout.write(
          `${mode === 'namespace' ? '-n ' : 'txt'} ${r.slug.padEnd(44)} want ${c.intent} in ${c.namespace} (${c.rootCause.map((x) => `${x.kind}/${x.name}`).join(', ') || '-'}) · got ${got}${r.evidenceMissed.length ? ` · missed ${r.evidenceMissed.join(' | ')}` : ''}${r.absenceFromPartialRead.length ? ` · absence from a partial read: ${r.absenceFromPartialRead.join('; ')}` : ''}\n`,
        );
      }
    }
  }
  const table = Object.fromEntries(modes.map((m) => [m, summarizeResults(byMode[m], corpus)]));
  process.stdout.write(`\n${corpus.length} incidents\n`);
  process.stdout.write(
    `${'mode'.padEnd(10)} intent  namespace  key-evidence  root-cause  entity-score  absence-from-partial  false-alarms  refusals  asked\n`,
  );
  for (const m of modes) {
    const s = table[m]!;
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(6);
    process.stdout.write(
      `${m.padEnd(10)} ${pct(s.intent)}  ${pct(s.namespace).padStart(9)}  ${pct(s.keyEvidence).padStart(12)}  ${pct(s.rootCause).padStart(10)}  ${s.entityScore.toFixed(3).padStart(12)}  ${String(s.absenceFromPartialRead).padStart(20)}  ${String(s.falseAlarms).padStart(12)}  ${String(s.refusals).padStart(8)}  ${String(s.asked).padStart(5)}\n`,
    );
  }
  if (prefixes.length === 0 && only === undefined) {
    const dir = fileURLToPath(new URL('./results/', import.meta.url));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'eval.json'), `${JSON.stringify({ incidents: corpus.length, ...table }, null, 2)}\n`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
