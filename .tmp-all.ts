import { loadCorpus, runCase } from './test/eval/corpus.js';
const prefix = process.argv[2] ?? 's-';
for (const c of loadCorpus().filter((x) => x.slug.startsWith(prefix))) {
  for (const mode of ['namespace', 'free-text'] as const) {
    const r = await runCase(c, mode);
    const e = r.envelope;
    if (!e) { console.log(c.slug, mode, 'NO ENVELOPE', r.refused ?? r.asked); continue; }
    console.log(`${r.intentOk && r.rootCauseOk && !r.evidenceMissed.length ? 'OK ' : 'BAD'} ${c.slug} [${mode}] tmpl=${e.routing.templateId} intent=${e.routing.intent}`);
    for (const rc of e.rootCause.slice(0, 3)) console.log(`     ${rc.rank} ${rc.code} ${rc.resource.kind}/${rc.resource.name} conf=${rc.confidence}`);
    if (r.evidenceMissed.length) console.log('     missed:', r.evidenceMissed.join(' | '));
  }
}
