import { shannonBits } from './entropy.js';
import { isPlaceholder, REDACTED } from './marker.js';

/**
 * A value right after a word that announces a credential, with no assignment to name it: `using key 9f86d0…`,
 * `webhook secret 4f1c…`, `routing key: e93f…`, `token Xy7…`. The word alone says little (a `key` may be a cache's),
 * so the value must look like key material too: 32 or more hex digits, or a long random-looking word. Kubernetes
 * names (`secret "db-creds-7f8c9d" not found`) never qualify: lower-case words joined by dashes are names.
 */

const CONTEXT =
  /(?<![A-Za-z0-9_-])(?<word>(?:api|access|secret|signing|license|licence|routing|integration|webhook|master|encryption|private|session|auth)?[ _-]?(?:key|secret|token|credentials?|signature|apikey))(?<gap>["']?(?:[ \t]*[:=][ \t]*|[ \t]+(?:(?:is|was|of|=)[ \t]+)?)["']?)(?<value>[A-Za-z0-9+/_.~=-]{16,512})(?![A-Za-z0-9+/_.~=-])/gi;

const HEX = /^[0-9a-fA-F]{32,}$/;
const NAME = /^[a-z0-9]+(?:[-.][a-z0-9]+)+$/;

function looksLikeKey(value: string): boolean {
  if (HEX.test(value)) return true;
  if (NAME.test(value) || isPlaceholder(value)) return false;
  if (!/\d/.test(value) || !/[A-Za-z]/.test(value) || /[/.]/.test(value)) return false;
  return shannonBits(value) >= 3.5;
}

export function redactContextValues(text: string): string {
  return text.replace(CONTEXT, (match, ...args: unknown[]) => {
    const g = args.at(-1) as { word: string; gap: string; value: string };
    if (!looksLikeKey(g.value)) return match;
    return `${g.word}${g.gap}${REDACTED}`;
  });
}
