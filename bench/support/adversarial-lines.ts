import { prng } from './prng.js';

/**
 * Inputs built to make a backtracking pattern work hard: one unit repeated to the given length, with no line break
 * unless the unit has one. Each unit is the start of something redaction looks for (a credential name, a flag, a
 * scheme, a key header, a quote) or a character class its patterns run over, so a pattern that retries its search
 * from every position, or scans to the end of the line for every match, is quadratic on one of them.
 */
export const ADVERSARIAL_UNITS: readonly string[] = [
  'a',
  'A1',
  'a.',
  'a-',
  'a_',
  '.a',
  'a=',
  'a:',
  'a:b',
  'a@',
  '@a',
  'a@b.',
  '=',
  ':',
  '"',
  "'",
  '`',
  '\\',
  ' ',
  '\t',
  '-',
  '--a ',
  '-p ',
  '-a ',
  'a\n',
  ' \n',
  'a: |\n',
  'password ',
  'password: ',
  'password=',
  'password="',
  "password='a ",
  'token=',
  'token: a ',
  'api_key=',
  'routing_key ',
  'name: a, value: ',
  'name: password\n',
  'value: ',
  '<a>',
  '<password>',
  'login ',
  'mysql ',
  'curl ',
  '-u ',
  'redis-cli -a ',
  '--requirepass ',
  'AUTH ',
  'Bearer ',
  'basic ',
  'authorization: ',
  'cookie: ',
  'set-cookie: a=',
  'a=b;',
  'AKIA',
  'AKIAABCDEFGHIJKLMNOP ',
  'eyJ',
  'eyJa.',
  'eyJaaaaa.',
  'sk-',
  'sk-A1',
  'xoxb-',
  'ghp_',
  'x://',
  'http://',
  'http://a:',
  'http://a:b@',
  'https://hooks.slack.com/services/',
  '?token=',
  '-----BEGIN PRIVATE KEY-----',
  '-----BEGIN PRIVATE KEY-----\n',
  'PRIVATE KEY',
  '-----END PRIVATE KEY-----',
  'AAAA\n',
  'IDENTIFIED BY "',
  'IDENTIFIED BY ',
  's.',
  'hvs.',
  'sha256:',
  'sha256~',
  '%3D',
  '{"password":"',
  '{"a":"b",',
  '0f',
  'Aa1+',
  'Aa1/',
  '1Q~',
  'a\r\n',
  'key ',
  'secret ',
];

/** One unit repeated to `bytes` characters. */
export function repeated(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/** Units drawn at random and glued together: mixes no single unit covers (a name, then a flag, then a quote). */
function mixed(seed: number, bytes: number): string {
  const next = prng(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    const unit = ADVERSARIAL_UNITS[Math.floor(next() * ADVERSARIAL_UNITS.length)] as string;
    const run = unit.repeat(1 + Math.floor(next() * 8));
    parts.push(run);
    length += run.length;
  }
  return parts.join('').slice(0, bytes);
}

/** Every adversarial input of a size: each unit repeated, and a few random mixes. */
export function adversarialInputs(bytes: number): { name: string; text: string }[] {
  return [
    ...ADVERSARIAL_UNITS.map((unit) => ({ name: JSON.stringify(unit), text: repeated(unit, bytes) })),
    ...[1, 2, 3, 4].map((seed) => ({ name: `mix #${seed}`, text: mixed(seed, bytes) })),
  ];
}
