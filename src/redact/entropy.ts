import { REDACTED } from './marker.js';

/**
 * The last line of defence: a long run of base64 or base64url that mixes capitals, small letters and digits and is
 * as random as key material. It catches what no named rule knows (a body line of a key whose BEGIN was cut off, a
 * vendor format not listed, a secret printed without its name). Hex (digests, git SHAs, UUIDs, trace ids) never
 * qualifies, nor do paths and class names, whose words repeat letters.
 */

/**
 * A run of base64 characters, with `=` padding at its end or between pieces (tokens glued from two encoded parts,
 * `…==…`). Each piece is bounded by `=` signs, so a failed match gives nothing back to try again: linear.
 */
const CANDIDATE = /(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{8,}(?:={1,2}[A-Za-z0-9+/_-]{8,})*={0,2}(?![A-Za-z0-9+/_=-])/g;
const MIN_CANDIDATE = 32;
const MIN_BITS_PER_CHAR = 4;
/**
 * Random base64 changes between capitals, small letters, digits and symbols at about two characters in three;
 * identifiers made of words and numbers (`AKSUbuntu-2204gen2containerd-202503`) at about one in four.
 */
const MIN_CLASS_CHANGES = 0.4;

function characterClass(c: string): number {
  if (c >= 'a' && c <= 'z') return 0;
  if (c >= 'A' && c <= 'Z') return 1;
  if (c >= '0' && c <= '9') return 2;
  return 3;
}

function classChangeRatio(text: string): number {
  let changes = 0;
  for (let i = 1; i < text.length; i++) {
    if (characterClass(text[i] as string) !== characterClass(text[i - 1] as string)) changes++;
  }
  return text.length < 2 ? 0 : changes / (text.length - 1);
}

export function shannonBits(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function looksLikeKeyMaterial(token: string): boolean {
  const body = token.replace(/=+/g, '');
  if (!/[A-Z]/.test(body) || !/[a-z]/.test(body) || !/\d/.test(body)) return false;
  // A path with a word for a segment (`/hostedzone/Z0123…`) is a path.
  if (body.split('/').some((segment) => /^[a-z]{4,}$/.test(segment))) return false;
  // Hex behind a short prefix is an identifier: `AC5f1e…` (a Twilio account), `sha1a9…`.
  if (/^[A-Za-z]{0,4}(?:[0-9a-f]{24,}|[0-9A-F]{24,})$/.test(body)) return false;
  // Paths and snake_case or kebab-case names are separated every few characters; key material rarely is.
  const separators = body.match(/[/_-]/g)?.length ?? 0;
  if (separators * 6 > body.length) return false;
  return classChangeRatio(body) >= MIN_CLASS_CHANGES && shannonBits(body) >= MIN_BITS_PER_CHAR;
}

/** Public fingerprints and digests follow their algorithm's name: `SHA256:p2QAMX…` of an SSH key. */
const DIGEST_PREFIX = /(?:sha(?:1|224|256|384|512)|md5)[:=]$/i;

export function redactHighEntropy(text: string): string {
  return text.replace(CANDIDATE, (token, offset: number) => {
    if (token.length < MIN_CANDIDATE) return token;
    if (DIGEST_PREFIX.test(text.slice(Math.max(0, offset - 8), offset))) return token;
    return looksLikeKeyMaterial(token) ? REDACTED : token;
  });
}
