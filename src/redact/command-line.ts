import { isPlaceholder, REDACTED } from './marker.js';

/**
 * Credentials passed on a command line, recognised by the program and its flag: `redis-cli -a pw`, `mysql -ppw`,
 * `login -p pw`, `curl -u user:pw`, and by the command of a protocol: redis's `AUTH pw` and `AUTH user pw` (as
 * `MONITOR` and slow logs print them, quoted or not). Each line is looked at once: the program is found by one
 * search, then its flags by one pass over the rest of the line, so the cost is linear in the line whatever it holds.
 */

interface CommandRule {
  /** The program, as a whole word. */
  program: RegExp;
  /** The flag and its value after the program, on the same line; group `head` stays, group `value` goes. */
  flag: RegExp;
}

const VALUE = String.raw`(?<quote>["']?)(?<value>[^\s"']+)\k<quote>`;

const COMMAND_RULES: readonly CommandRule[] = [
  {
    program: /\bredis-cli\b/,
    flag: new RegExp(String.raw`(?<head>(?<![^\s])(?:-a|--pass|--askpass)[ \t]+)${VALUE}`, 'g'),
  },
  { program: /\blogin\b/, flag: new RegExp(String.raw`(?<head>(?<![^\s])-p[ \t]+)${VALUE}`, 'g') },
  {
    program: /\b(?:mysql(?:dump|admin|sh|import|check)?|mariadb(?:-dump|-admin)?)\b/,
    flag: /(?<head>(?<![^\s])-p)(?<quote>["']?)(?<value>[^\s\-"'][^\s"']*)\k<quote>/g,
  },
  {
    program: /\b(?:curl|wget|http|https|xh)\b/,
    flag: /(?<head>(?<![^\s])(?:-u|--user|--proxy-user)[ \t]+["']?[^\s:"']+:)(?<quote>)(?<value>[^\s"']+)/g,
  },
];

function redactLine(line: string): string {
  let out = line;
  for (const rule of COMMAND_RULES) {
    const at = out.search(rule.program);
    if (at === -1) continue;
    const head = out.slice(0, at);
    const rest = out.slice(at).replace(rule.flag, (match, ...args: unknown[]) => {
      const groups = args.at(-1) as { head: string; quote: string; value: string };
      return isPlaceholder(groups.value) ? match : `${groups.head}${groups.quote}${REDACTED}${groups.quote}`;
    });
    out = head + rest;
  }
  return out;
}

/** Words after AUTH in prose and replies rather than in the command. */
const AUTH_WORDS = new Set([
  'ok',
  'failed',
  'failure',
  'error',
  'required',
  'denied',
  'is',
  'with',
  'the',
  'a',
  'for',
  'to',
  'on',
  'against',
  'command',
  'called',
  'without',
]);

/**
 * Redis's `AUTH <password>` and `AUTH <user> <password>`: the command word in capitals, as clients send it and
 * `MONITOR` prints it (`"AUTH" "default" "pw"`). The last of at most two arguments is the password.
 */
const REDIS_AUTH =
  /(?<![A-Za-z0-9_-])(?<head>"?AUTH"?[ \t]+)(?:(?<user>"[^"\s]{1,128}"|[^\s"]{1,128})[ \t]+)?(?<quote>"?)(?<value>[^\s"]{1,512})\k<quote>(?=\s|$)/gm;

function redactRedisAuth(text: string): string {
  if (!text.includes('AUTH')) return text;
  return text.replace(REDIS_AUTH, (match, ...args: unknown[]) => {
    const g = args.at(-1) as { head: string; user?: string; quote: string; value: string };
    const user = g.user?.replace(/"/g, '');
    if (user !== undefined && AUTH_WORDS.has(user.replace(/[:,.]$/, '').toLowerCase())) return match;
    if (user !== undefined && AUTH_WORDS.has(g.value.toLowerCase())) {
      // `AUTH s3cret to redis:6379`: one argument, and the sentence goes on.
      if (isPlaceholder(user) || AUTH_WORDS.has(user.toLowerCase())) return match;
      return match.replace(user, REDACTED);
    }
    if (isPlaceholder(g.value) || AUTH_WORDS.has(g.value.toLowerCase())) return match;
    return `${g.head}${g.user === undefined ? '' : `${g.user} `}${g.quote}${REDACTED}${g.quote}`;
  });
}

const ANY_PROGRAM = /\b(?:redis-cli|login|mysql[a-z]*|mariadb[a-z-]*|curl|wget|https?|xh)\b/;

export function redactCommandLines(text: string): string {
  let out = redactRedisAuth(text);
  if (!ANY_PROGRAM.test(out)) return out;
  const lines = out.split('\n');
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!ANY_PROGRAM.test(line)) continue;
    const redacted = redactLine(line);
    if (redacted !== line) {
      lines[i] = redacted;
      changed = true;
    }
  }
  if (changed) out = lines.join('\n');
  return out;
}
