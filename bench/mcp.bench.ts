import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { median } from './support/stats.js';

/**
 * `calmops mcp` as an assistant meets it: the installed command started by the SDK's client over stdio, on the demo
 * cluster. For each of RUNS fresh servers: the time from spawn to the tool list (what an assistant waits for before
 * it can call anything), then one triage and one read. Medians; the first run builds no bundle (it is fresh) but may
 * write the compiled-code cache.
 */

const RUNS = 7;
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'calmops.js');
const demo = join(root, 'local', 'demo', 'demo-cluster.yaml');

export default async function mcpBench() {
  const ready: number[] = [];
  const triage: number[] = [];
  const read: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--snapshot', demo, '--namespaces', 'ml-team,payments,orders'],
      stderr: 'ignore',
    });
    const client = new Client({ name: 'calmops-bench', version: '1.0.0' });
    try {
      await client.connect(transport);
      await client.listTools();
      ready.push(performance.now() - started);
      let at = performance.now();
      const answer = await client.callTool({ name: 'triage', arguments: { text: 'pvc stuck pending in ml-team' } });
      if (answer.isError) throw new Error(`triage failed: ${JSON.stringify(answer.content)}`);
      triage.push(performance.now() - at);
      at = performance.now();
      await client.callTool({ name: 'read', arguments: { command: 'kubectl get pods -n payments' } });
      read.push(performance.now() - at);
    } finally {
      await client.close();
    }
  }
  const result = {
    runs: RUNS,
    spawnToToolsMs: Math.round(median(ready)),
    triageCallMs: Math.round(median(triage)),
    readCallMs: Math.round(median(read)),
  };
  process.stdout.write(
    `spawn → tools/list ${result.spawnToToolsMs} ms · triage call ${result.triageCallMs} ms · read call ${result.readCallMs} ms (median of ${RUNS})\n`,
  );
  return result;
}
