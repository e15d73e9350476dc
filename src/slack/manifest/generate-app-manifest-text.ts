import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Compiles `manifest.yaml` into app-manifest-text.generated.ts, so that `calmops manifest` works from a bundle:
 *   npx tsx src/slack/manifest/generate-app-manifest-text.ts          regenerate
 *   npx tsx src/slack/manifest/generate-app-manifest-text.ts --check  exit 1 if the generated file is out of date
 * A unit test fails while the two differ. The comparison is of the text the module exports, so formatting the
 * generated file (biome) changes nothing.
 */

export const MANIFEST_FILE = fileURLToPath(new URL('../../../manifest.yaml', import.meta.url));
export const GENERATED_FILE = fileURLToPath(new URL('./app-manifest-text.generated.ts', import.meta.url));

export function generatedSource(manifest: string = readFileSync(MANIFEST_FILE, 'utf8')): string {
  return [
    '// Generated from manifest.yaml by src/slack/manifest/generate-app-manifest-text.ts; do not edit.',
    `export const APP_MANIFEST_YAML = ${JSON.stringify(manifest)};`,
    '',
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const manifest = readFileSync(MANIFEST_FILE, 'utf8');
  const current = await import(pathToFileURL(GENERATED_FILE).href).then(
    (module: { APP_MANIFEST_YAML?: unknown }) => module.APP_MANIFEST_YAML,
    () => undefined,
  );
  if (current === manifest) return 0;
  if (argv.includes('--check')) {
    process.stderr.write(
      `${GENERATED_FILE} is out of date with manifest.yaml; run: npx tsx src/slack/manifest/generate-app-manifest-text.ts\n`,
    );
    return 1;
  }
  writeFileSync(GENERATED_FILE, generatedSource(manifest));
  process.stdout.write(`wrote ${GENERATED_FILE}\n`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
