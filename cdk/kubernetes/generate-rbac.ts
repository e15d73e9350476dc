import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadTemplates } from '../../src/triage/templates/index.js';
import { renderEksGroupBinding, renderReaderManifest } from './rbac.js';

/**
 * Writes the read-only RBAC manifests from the shipped templates:
 *   npx tsx cdk/kubernetes/generate-rbac.ts          regenerate the files
 *   npx tsx cdk/kubernetes/generate-rbac.ts --check  exit 1 if a committed file differs from what the templates need
 */

export const MANIFESTS = {
  reader: fileURLToPath(new URL('./reader-rbac.yaml', import.meta.url)),
  eks: fileURLToPath(new URL('./eks-group-binding.yaml', import.meta.url)),
} as const;

/** The manifests' expected text, by file path. */
export function expectedManifests(templatesDir?: string): Record<string, string> {
  const templates = loadTemplates(templatesDir).list();
  return { [MANIFESTS.reader]: renderReaderManifest(templates), [MANIFESTS.eks]: renderEksGroupBinding() };
}

function main(argv: readonly string[]): number {
  const check = argv.includes('--check');
  let stale = 0;
  for (const [path, text] of Object.entries(expectedManifests())) {
    let current: string | undefined;
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (check) {
      process.stderr.write(`${path} is out of date with templates/; run: npx tsx cdk/kubernetes/generate-rbac.ts\n`);
      stale += 1;
    } else {
      writeFileSync(path, text);
      process.stdout.write(`wrote ${path}\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
