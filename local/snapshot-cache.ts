import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParsedSnapshotCache } from '../src/cluster/snapshot.js';
import type { KubeObject } from '../src/cluster/types.js';

/**
 * Keeps parsed snapshots as JSON under a directory, so that `npm start` parses the demo cluster's YAML once rather
 * than on every start. An entry is named by a hash of the snapshot text and of what parsing depends on (the parser's
 * source and the yaml package's version), so a changed snapshot or parser never reads a stale entry. The cache is
 * only a shortcut: anything unreadable is a miss, anything unwritable is skipped.
 */

const KEEP = 8;
const parserSource = new URL('../src/cluster/snapshot.ts', import.meta.url);
const yamlManifest = new URL('../node_modules/yaml/package.json', import.meta.url);

function parserFingerprint(): string | undefined {
  try {
    return createHash('sha256')
      .update(readFileSync(fileURLToPath(parserSource)))
      .update(readFileSync(fileURLToPath(yamlManifest)))
      .digest('hex');
  } catch {
    return undefined;
  }
}

function prune(dir: string): void {
  const entries = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of entries.slice(KEEP)) unlinkSync(join(dir, old.name));
}

export function snapshotCacheIn(dir: string): ParsedSnapshotCache {
  const parser = parserFingerprint();
  const entry = (text: string) =>
    join(
      dir,
      `${createHash('sha256')
        .update(parser ?? '')
        .update('\n')
        .update(text)
        .digest('hex')}.json`,
    );
  return {
    get(text) {
      if (parser === undefined) return undefined;
      try {
        const parsed: unknown = JSON.parse(readFileSync(entry(text), 'utf8'));
        if (typeof parsed !== 'object' || parsed === null) return undefined;
        const { objects, secretsSkipped } = parsed as { objects?: unknown; secretsSkipped?: unknown };
        if (!Array.isArray(objects) || typeof secretsSkipped !== 'number') return undefined;
        return { objects: objects as KubeObject[], secretsSkipped };
      } catch {
        return undefined;
      }
    },
    set(text, parsed) {
      if (parser === undefined) return;
      try {
        // Your own snapshots can hold whatever pod specs carry: readable by you only, like the data directory.
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const file = entry(text);
        const temporary = `${file}.${process.pid}.tmp`;
        // Secrets were dropped by the parser, so only their count is written.
        writeFileSync(temporary, JSON.stringify({ objects: parsed.objects, secretsSkipped: parsed.secretsSkipped }), {
          mode: 0o600,
        });
        renameSync(temporary, file);
        prune(dir);
      } catch {
        // The next start parses again.
      }
    },
  };
}
