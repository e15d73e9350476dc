/**
 * Letters from other scripts that look like ASCII letters. A namespace typed or pasted with one of them looks right
 * in Slack but names nothing in Kubernetes, so the grammar names the impostor instead of saying "not found".
 */

const CONFUSABLES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  һ: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  ѕ: 's',
  т: 't',
  у: 'y',
  х: 'x',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  // Greek
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  // Latin look-alikes outside ASCII
  ı: 'i',
  ł: 'l',
  ſ: 's',
  '‐': '-',
  '‑': '-',
  '‒': '-',
  '–': '-',
  '—': '-',
  '−': '-',
  // Invisible characters: they change the name without changing how it looks.
  '\u200b': '',
  '\u200c': '',
  '\u200d': '',
  '\u2060': '',
  '\ufeff': '',
  '\u00ad': '',
};

export interface Impostor {
  char: string;
  codePoint: string;
  script: string;
  looksLike: string;
}

function scriptOf(char: string): string {
  const cp = char.codePointAt(0) ?? 0;
  if (cp >= 0x0400 && cp <= 0x052f) return 'Cyrillic';
  if (cp >= 0x0370 && cp <= 0x03ff) return 'Greek';
  if (cp >= 0xff00 && cp <= 0xffef) return 'full-width';
  if (cp >= 0x2010 && cp <= 0x2212) return 'typographic';
  if (cp === 0x00ad || cp === 0xfeff || (cp >= 0x200b && cp <= 0x200d) || cp === 0x2060) return 'invisible';
  if (cp >= 0x0080 && cp <= 0x024f) return 'accented Latin';
  return 'non-ASCII';
}

function asciiLookAlike(char: string): string | undefined {
  const direct = CONFUSABLES[char];
  if (direct !== undefined) return direct;
  const cp = char.codePointAt(0) ?? 0;
  // Full-width forms: U+FF01..U+FF5E mirror ASCII 0x21..0x7E.
  if (cp >= 0xff01 && cp <= 0xff5e) return String.fromCharCode(cp - 0xfee0).toLowerCase();
  // Accented Latin letters: the base letter is what a reader sees.
  const base = char.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
  return /^[a-z]$/i.test(base) && base !== char ? base.toLowerCase() : undefined;
}

function codePointLabel(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Every non-ASCII character of `value`, with the ASCII letter it imitates when it imitates one. */
export function findImpostors(value: string): { impostors: Impostor[]; others: string[]; ascii: string } {
  const impostors: Impostor[] = [];
  const others: string[] = [];
  let ascii = '';
  for (const char of value) {
    if (/^[\x00-\x7f]$/.test(char)) {
      ascii += char;
      continue;
    }
    const looksLike = asciiLookAlike(char);
    if (looksLike === undefined) {
      others.push(char);
      ascii += char;
    } else {
      impostors.push({ char, codePoint: codePointLabel(char), script: scriptOf(char), looksLike });
      ascii += looksLike;
    }
  }
  return { impostors, others, ascii };
}

export function describeImpostor(impostor: Impostor): string {
  if (impostor.looksLike === '') return `an invisible character (${impostor.codePoint})`;
  return `a ${impostor.script} "${impostor.char}" (${impostor.codePoint}) that looks like "${impostor.looksLike}"`;
}
