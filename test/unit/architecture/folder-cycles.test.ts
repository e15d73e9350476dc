import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The folders of src/ are layers: a folder may import the folders below it, never one that imports it back, however
 * long the way round. dependency-cruiser already refuses module cycles; this check works one level up, on the graph
 * of src/'s top-level folders built from the import statements themselves (static, type-only, re-exports and dynamic
 * imports alike). A file directly in src/ (config.ts, env-names.ts, …) counts as a folder of its own.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../../src');

/** One import that makes folder `from` depend on folder `to`, kept to name the cycle's edges. */
interface FolderEdge {
  file: string;
  specifier: string;
}

type FolderGraph = Map<string, Map<string, FolderEdge>>;

function folderOf(absolute: string): string | undefined {
  const parts = relative(SRC, absolute).split(sep);
  if (parts[0] === '..' || parts[0] === undefined) return undefined;
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.[cm]?[jt]s$/, '');
}

let scanned: FolderGraph | undefined;

function buildFolderGraph(): FolderGraph {
  if (scanned) return scanned;
  const graph: FolderGraph = new Map();
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[cm]?[jt]s$/.test(f));
  for (const file of files) {
    const absolute = join(SRC, file);
    const from = folderOf(absolute);
    if (from === undefined) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(absolute, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const to = folderOf(resolve(dirname(absolute), specifier));
      if (to === undefined || to === from) continue;
      const targets = graph.get(from) ?? new Map<string, FolderEdge>();
      if (!targets.has(to)) targets.set(to, { file: `src/${file.split(sep).join('/')}`, specifier });
      graph.set(from, targets);
    }
  }
  scanned = graph;
  return graph;
}

const ROOT = resolve(SRC, '..');

/** What is generated or installed rather than written: not scanned. */
const NOT_SOURCES = new Set(['node_modules', 'cdk.out', 'artifacts', 'dist', 'public']);

let scannedTopLevel: FolderGraph | undefined;

/**
 * The same graph one level up: the repository's top-level folders (src, functions, bin, build, cdk, local, test,
 * bench, …), every code file in them scanned. src/ must not import cdk/ while cdk/ imports src/, and so on for every
 * pair, however long the way round.
 */
function buildTopLevelGraph(): FolderGraph {
  if (scannedTopLevel) return scannedTopLevel;
  const graph: FolderGraph = new Map();
  const topLevelOf = (absolute: string): string | undefined => {
    const parts = relative(ROOT, absolute).split(sep);
    return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
  };
  const codeFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (entry.name.startsWith('.') || NOT_SOURCES.has(entry.name)) return [];
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return codeFiles(path);
      return /\.[cm]?[jt]s$/.test(entry.name) ? [path] : [];
    });
  for (const absolute of codeFiles(ROOT)) {
    const from = topLevelOf(absolute);
    if (from === undefined) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(absolute, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const to = topLevelOf(resolve(dirname(absolute), specifier));
      if (to === undefined || to === from) continue;
      const targets = graph.get(from) ?? new Map<string, FolderEdge>();
      if (!targets.has(to)) targets.set(to, { file: relative(ROOT, absolute).split(sep).join('/'), specifier });
      graph.set(from, targets);
    }
  }
  scannedTopLevel = graph;
  return graph;
}

/** Strongly connected components (Tarjan): every folder cycle lies inside one component of two or more folders. */
function components(graph: FolderGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top);
      component.push(top);
      if (top === node) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** The shortest way from `start` back to itself inside its component (breadth first). */
function shortestCycle(graph: FolderGraph, start: string, within: ReadonlySet<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!within.has(next)) continue;
      if (next === start) {
        const path = [node];
        for (let at = previous.get(node); at !== undefined; at = previous.get(at)) path.unshift(at);
        return [...path, start];
      }
      if (!previous.has(next) && next !== start) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/**
 * One line per folder cycle, each edge named by an import that makes it: what a failing run prints. Every folder of
 * a tangle gets its shortest way back, so a tangle of several cycles lists each of them.
 */
function describeCycles(graph: FolderGraph): string[] {
  const lines = new Set<string>();
  for (const component of components(graph)) {
    const within = new Set(component);
    for (const start of component) {
      const cycle = shortestCycle(graph, start, within).slice(0, -1);
      // The same cycle found from another of its folders reads the same once it starts at its first folder.
      const first = cycle.indexOf([...cycle].sort()[0] ?? start);
      const rotated = [...cycle.slice(first), ...cycle.slice(0, first)];
      const edges = rotated.map((from, i) => {
        const to = rotated[(i + 1) % rotated.length] ?? from;
        const edge = graph.get(from)?.get(to);
        return `${from} → ${to} (${edge?.file} imports '${edge?.specifier}')`;
      });
      lines.add(edges.join('; '));
    }
  }
  return [...lines].sort();
}

function graphOf(edges: Record<string, string[]>): FolderGraph {
  return new Map(
    Object.entries(edges).map(([from, tos]) => [
      from,
      new Map(tos.map((to) => [to, { file: `src/${from}/x.ts`, specifier: `../${to}/y.js` }])),
    ]),
  );
}

/**
 * The edges that no longer way round implies: the graph a reader needs to see the layers. Only defined for a graph
 * without cycles, which the check below guarantees.
 */
function reducedEdges(graph: FolderGraph): string[] {
  const reaches = (from: string, to: string, skip: string): boolean => {
    const seen = new Set<string>();
    const stack = [...(graph.get(from)?.keys() ?? [])].filter((next) => next !== skip);
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (node === to) return true;
      if (seen.has(node)) continue;
      seen.add(node);
      stack.push(...(graph.get(node)?.keys() ?? []));
    }
    return false;
  };
  const edges: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets.keys()) if (!reaches(from, to, to)) edges.push(`${from} --> ${to}`);
  }
  return edges.sort();
}

/** The edges drawn in the README's layers diagram (a mermaid block, one edge per line). */
function readmeDiagramEdges(): string[] {
  const readme = readFileSync(resolve(SRC, '../README.md'), 'utf8');
  const block = /```mermaid\n(flowchart[^\n]*\n)([\s\S]*?)```/.exec(readme);
  if (!block) return [];
  return (block[2] ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes('-->'))
    .map((line) => line.replace(/\s+/g, ' '))
    .sort();
}

describe('folder cycles', () => {
  it('finds cycles of any length and names each edge', () => {
    const graph = graphOf({ a: ['b'], b: ['c'], c: ['a', 'd'], d: [], e: ['f'], f: ['e'] });
    expect(describeCycles(graph)).toEqual([
      "a → b (src/a/x.ts imports '../b/y.js'); b → c (src/b/x.ts imports '../c/y.js'); c → a (src/c/x.ts imports '../a/y.js')",
      "e → f (src/e/x.ts imports '../f/y.js'); f → e (src/f/x.ts imports '../e/y.js')",
    ]);
    // Two cycles through one folder: both are named.
    expect(describeCycles(graphOf({ a: ['b', 'c'], b: ['a'], c: ['a'] }))).toEqual([
      "a → b (src/a/x.ts imports '../b/y.js'); b → a (src/b/x.ts imports '../a/y.js')",
      "a → c (src/a/x.ts imports '../c/y.js'); c → a (src/c/x.ts imports '../a/y.js')",
    ]);
    expect(describeCycles(graphOf({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
  });

  it('reads the folder graph of src/ from its imports', () => {
    const graph = buildFolderGraph();
    // A graph without these edges would mean the scan missed the imports, and the check below would pass vacuously.
    expect(graph.get('workflow')?.has('store')).toBe(true);
    expect(graph.get('views')?.has('diagnosis')).toBe(true);
  });

  it('has no folder of src/ that imports itself back through others', () => {
    expect(describeCycles(buildFolderGraph())).toEqual([]);
  });

  it('has no top-level folder that imports itself back through others (src and cdk, bin and local, …)', () => {
    const graph = buildTopLevelGraph();
    // Edges the scan must see, or the check would pass vacuously: the deployment bundles the functions, which call
    // src/; npm start's launcher builds the command line's bundle; the tests import everything.
    expect(graph.get('cdk')?.has('src')).toBe(true);
    expect(graph.get('functions')?.has('src')).toBe(true);
    expect(graph.get('local')?.has('build')).toBe(true);
    expect(graph.get('bin')?.has('build')).toBe(true);
    expect(graph.get('test')?.has('local')).toBe(true);
    expect(describeCycles(graph)).toEqual([]);
  });

  it("draws the README's diagram from the real imports: each edge there is one no longer path implies", () => {
    expect(reducedEdges(graphOf({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual(['a --> b', 'b --> c']);
    expect(readmeDiagramEdges()).toEqual(reducedEdges(buildFolderGraph()));
  });
});
