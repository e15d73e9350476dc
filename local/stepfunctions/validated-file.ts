import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { ENGINE_VALIDATION, type ValidatedDefinitions } from './definition.js';

/**
 * Remembers validated definitions across processes in a small JSON file, so that a restart (or another test
 * file) does not validate the same three machines again. Entries are hashes of the engine's version, how strictly
 * it validates, and the definition text: editing a definition, upgrading aws-local-stepfunctions or validating more
 * strictly validates it again. calmops' own checks (supported fields) run on every registration regardless. The
 * file is only ever a shortcut; one that is missing, unreadable or malformed is treated as empty.
 */

const MAX_ENTRIES = 256;
const fileShape = z.object({ version: z.literal(1), hashes: z.array(z.string()) });

function engineVersion(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const entry = require.resolve('aws-local-stepfunctions');
    // The package's exports map hides package.json; it sits one level above the build directory.
    const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

function readHashes(file: string): string[] {
  try {
    const parsed = fileShape.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data.hashes : [];
  } catch {
    return [];
  }
}

export function fileValidatedDefinitions(file: string): ValidatedDefinitions {
  const version = engineVersion();
  // Without the engine's version an entry could outlive an upgrade: remember nothing.
  if (version === undefined) return { has: () => false, add: () => undefined };
  const salt = JSON.stringify({ version, validation: ENGINE_VALIDATION });
  const hash = (text: string) => createHash('sha256').update(salt).update('\n').update(text).digest('hex');
  let hashes: Set<string> | undefined;
  const known = (): Set<string> => {
    hashes ??= new Set(readHashes(file));
    return hashes;
  };
  return {
    has: (text) => known().has(hash(text)),
    add: (text) => {
      // Another process may have added entries since this one read the file.
      const merged = new Set([...readHashes(file), ...known(), hash(text)]);
      hashes = new Set([...merged].slice(-MAX_ENTRIES));
      try {
        mkdirSync(dirname(file), { recursive: true });
        const temporary = `${file}.${process.pid}.tmp`;
        writeFileSync(temporary, `${JSON.stringify({ version: 1, hashes: [...hashes] })}\n`);
        renameSync(temporary, file);
      } catch {
        // Only a shortcut: the next start validates again.
      }
    },
  };
}
