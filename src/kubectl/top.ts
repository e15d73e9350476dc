import type { KubeObject } from '../cluster/types.js';
import type { Json } from './describe-writer.js';
import { goSort } from './go-sort.js';
import { parseQuantityExact } from './quantity.js';
import { formatTabbed, GET_TABWRITER } from './tabwriter.js';

/**
 * `kubectl top pod|node` printed from metrics.k8s.io objects as kubectl's TopCmdPrinter prints them: CPU in
 * millicores, memory in Mi, node percentages of allocatable, every cell tab-terminated (so the last column is padded
 * too), nodes without metrics listed with `<unknown>`.
 */

const millis = (text: Json) => {
  const q = parseQuantityExact(String(text ?? '0'));
  return q ? Number((q.nanos + 999_999n) / 1_000_000n) : 0;
};
const bytes = (text: Json) => {
  const q = parseQuantityExact(String(text ?? '0'));
  return q ? Number((q.nanos + 999_999_999n) / 1_000_000_000n) : 0;
};

function usageOf(pod: Json): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const c of Array.isArray(pod.containers) ? pod.containers : []) {
    cpu += millis(c.usage?.cpu);
    memory += bytes(c.usage?.memory);
  }
  return { cpu, memory };
}

const cell = (value: string | number) => `${value}\t`;
const usage = (cpu: number, memory: number) => `${cell(`${cpu}m`)}${cell(`${Math.floor(memory / (1024 * 1024))}Mi`)}`;

export interface TopPodOptions {
  withNamespace: boolean;
  containers: boolean;
  noHeaders: boolean;
  sortBy?: 'cpu' | 'memory';
}

const sortBy = <T>(items: T[], less: (a: T, b: T) => boolean): T[] => goSort([...items], less);

export function printTopPods(metrics: readonly KubeObject[], options: TopPodOptions): string {
  if (metrics.length === 0) return '';
  let text = '';
  if (!options.noHeaders) {
    text += `${options.withNamespace ? cell('NAMESPACE') : ''}${options.containers ? cell('POD') : ''}${cell('NAME')}${cell('CPU(cores)')}${cell('MEMORY(bytes)')}\n`;
  }
  const sorted = sortBy([...metrics] as Json[], (a, b) => {
    if (options.sortBy === 'cpu') return usageOf(a).cpu > usageOf(b).cpu;
    if (options.sortBy === 'memory') return usageOf(a).memory > usageOf(b).memory;
    if (options.withNamespace && a.metadata.namespace !== b.metadata.namespace)
      return a.metadata.namespace < b.metadata.namespace;
    return a.metadata.name < b.metadata.name;
  });
  for (const m of sorted) {
    const ns = options.withNamespace ? cell(m.metadata.namespace ?? '') : '';
    if (options.containers) {
      const containers = sortBy(Array.isArray(m.containers) ? m.containers : [], (a: Json, b: Json) => {
        if (options.sortBy === 'cpu') return millis(a.usage?.cpu) > millis(b.usage?.cpu);
        if (options.sortBy === 'memory') return bytes(a.usage?.memory) > bytes(b.usage?.memory);
        return a.name < b.name;
      });
      for (const c of containers) {
        text += `${ns}${cell(m.metadata.name)}${cell(c.name)}${usage(millis(c.usage?.cpu), bytes(c.usage?.memory))}\n`;
      }
    } else {
      const u = usageOf(m);
      text += `${ns}${cell(m.metadata.name)}${usage(u.cpu, u.memory)}\n`;
    }
  }
  return formatTabbed(text, GET_TABWRITER);
}

export function printTopNodes(
  metrics: readonly KubeObject[],
  nodes: readonly KubeObject[],
  options: { noHeaders: boolean; sortBy?: 'cpu' | 'memory' },
): string {
  if (metrics.length === 0) return '';
  const allocatable = new Map<string, Json>(nodes.map((n) => [n.metadata.name, (n as Json).status?.allocatable ?? {}]));
  let text = options.noHeaders
    ? ''
    : `${['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)'].map(cell).join('')}\n`;
  const sorted = sortBy([...metrics] as Json[], (a, b) => {
    if (options.sortBy === 'cpu') return millis(a.usage?.cpu) > millis(b.usage?.cpu);
    if (options.sortBy === 'memory') return bytes(a.usage?.memory) > bytes(b.usage?.memory);
    return a.metadata.name < b.metadata.name;
  });
  const percent = (used: number, available: Json, milli: boolean) => {
    if (available === undefined) return '';
    const total = milli ? millis(available) : bytes(available) * 1000;
    const usedMilli = milli ? used : used * 1000;
    return cell(`${total === 0 ? 0 : Math.trunc((usedMilli / total) * 100)}%`);
  };
  for (const m of sorted) {
    const avail = allocatable.get(m.metadata.name);
    const cpu = millis(m.usage?.cpu);
    const memory = bytes(m.usage?.memory);
    text += `${cell(m.metadata.name)}${cell(`${cpu}m`)}${avail ? percent(cpu, avail.cpu, true) : ''}${cell(`${Math.floor(memory / (1024 * 1024))}Mi`)}${avail ? percent(memory, avail.memory, false) : ''}\n`;
    allocatable.delete(m.metadata.name);
  }
  for (const name of allocatable.keys())
    text += `${cell(name)}${cell('<unknown>')}${cell('<unknown>')}${cell('<unknown>')}${cell('<unknown>')}\n`;
  return formatTabbed(text, GET_TABWRITER);
}
