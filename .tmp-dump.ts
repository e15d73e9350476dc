import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { kubeconfigYaml } from './local/kube/kubeconfig.js';
import { startSnapshotServer } from './local/kube/server.js';
import { createClusterReader } from './src/cluster/reader.js';
import { loadSnapshotFiles } from './src/cluster/snapshot.js';
import { silentLogger, triage } from './src/triage/index.js';
import { CORPUS_DIR, loadCorpus } from './test/eval/corpus.js';
const [slug, intent, full] = process.argv.slice(2);
const c = loadCorpus().find((x) => x.slug === slug)!;
const folder = join(CORPUS_DIR, c.slug);
const logs = join(folder, 'logs.json');
const snapshot = await loadSnapshotFiles(join(folder, 'snapshot.yaml'), existsSync(logs) ? logs : undefined);
const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) }, requestTimeoutMs: 10_000 });
const e = await triage({ text: c.request, now: c.now, namespace: c.namespace, ...(intent && intent !== '-' ? { intent } : {}) }, { reader, logger: silentLogger });
await server.close();
console.log('intent', e.routing.intent, e.routing.templateId, e.routing.namespace);
for (const rc of e.rootCause) console.log('RC', rc.rank, rc.code, `${rc.resource.kind}/${rc.resource.name}`, rc.confidence, JSON.stringify(rc.chain?.map((x) => `${x.kind}/${x.name}`)));
for (const f of e.findings) {
  if (full) console.log(JSON.stringify(f, null, 1));
  else console.log(`- ${f.code} ${f.resource.kind}/${f.resource.name} sev=${f.severity} conf=${f.confidence}${f.owner ? ` owner=${f.owner.kind}/${f.owner.name}` : ''}${f.stale ? ` STALE(${f.stale})` : ''}\n   ${f.message}\n   ${f.evidence.join('\n   ')}\n   related: ${f.related.map((r) => `${r.kind}/${r.name}`).join(', ')}`);
}
const text = JSON.stringify({ summary: e.summary, findings: e.findings.map((f) => ({ m: f.message, e: f.evidence, r: f.resource, rel: f.related, o: f.owner })), rootCause: e.rootCause, nextActions: e.nextActions.map((a) => a.command) }).toLowerCase();
console.log('missed', c.keyEvidence.filter((k) => !text.includes(k.toLowerCase())));
