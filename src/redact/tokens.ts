import { isPlaceholder, REDACTED } from './marker.js';

/**
 * Credentials recognisable by their own shape, wherever they appear: vendor token formats, JWTs, AWS keys, auth
 * headers, cookies and URLs with a password. Each pattern is anchored on a prefix or a separator that ordinary log
 * text does not produce, so none of them needs the surrounding field name.
 */

interface Rule {
  pattern: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
}

/** Token characters used by most vendor formats. */
const T = '[A-Za-z0-9_-]';

const VENDOR_TOKENS: readonly RegExp[] = [
  // Slack bot, user, app-level and configuration tokens, and incoming webhooks.
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /\bxapp-\d-[A-Za-z0-9-]{10,}/g,
  // GitHub classic and fine-grained tokens; GitLab personal, deploy and runner tokens.
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{30,}/g,
  new RegExp(`\\bgl(?:pat|dt|rt|ptt|ft|cbt|oas|imt)-${T}{20,}`, 'g'),
  // Stripe secret, restricted and webhook keys.
  /\b(?:[rs]k|pk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  /\bwhsec_[A-Za-z0-9]{20,}/g,
  // npm, SendGrid, Hugging Face, PyPI, DigitalOcean, Shopify, Databricks, Vault, Doppler, Linear, Age.
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  new RegExp(`\\bSG\\.${T}{16,32}\\.${T}{16,64}`, 'g'),
  /\bhf_[A-Za-z0-9]{30,}/g,
  new RegExp(`\\bpypi-AgE${T}{40,}`, 'g'),
  /\bdo[opr]_v1_[a-f0-9]{64}\b/g,
  /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g,
  /\bdapi[a-f0-9]{32}(?:-\d)?\b/g,
  new RegExp(`\\bhv[sbr]\\.${T}{20,}`, 'g'),
  /\bdp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{20,}/g,
  /\blin_(?:api|oauth)_[A-Za-z0-9]{30,}/g,
  /\bAGE-SECRET-KEY-1[A-Z0-9]{50,}/g,
  // Groq, Notion, Grafana Cloud and service accounts, 1Password service accounts, Vercel, Docker Hub, Figma.
  /\bgsk_[A-Za-z0-9]{40,}/g,
  /\bntn_\d{11}[A-Za-z0-9]{30,}/g,
  /\bglc_[A-Za-z0-9+/]{32,}={0,2}/g,
  /\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b/g,
  /\bops_ey[A-Za-z0-9+/=]{100,}/g,
  /\bvc[pikra]_[A-Za-z0-9]{20,}/g,
  new RegExp(`\\bdckr_pat_${T}{20,}`, 'g'),
  new RegExp(`\\bfig[dor]_${T}{30,}`, 'g'),
  // Google API keys, OAuth access tokens and client secrets.
  new RegExp(`\\bAIza${T}{35}`, 'g'),
  new RegExp(`\\bya29\\.${T}{20,}`, 'g'),
  new RegExp(`\\bGOCSPX-${T}{20,}`, 'g'),
  // Azure AD client secrets (the `Q~` marks the generation).
  /\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}/g,
  // OpenShift OAuth tokens.
  new RegExp(`\\bsha256~${T}{20,}`, 'g'),
  // Alibaba Cloud access key ids.
  /\bLTAI[A-Za-z0-9]{12,20}\b/g,
  // From gitleaks' and secretlint's rule sets: New Relic, Twilio, Mailgun, Mailchimp, Postman, Pulumi, Sentry,
  // Telegram bots, Square, Dynatrace, Tailscale, Terraform Cloud, PlanetScale, Prefect, RubyGems, Sourcegraph,
  // Clojars, Flutterwave, Buildkite, Hugging Face organisations, GitLab runners, Heroku, Netlify, Supabase,
  // Cloudflare Origin CA, Contentful, EasyPost, Typeform, Shippo, Scalingo, Mapbox, JFrog, Octopus, Harness,
  // Fly.io, Atlassian, Yandex.
  /\bNRAK-[A-Z0-9]{27}\b/g,
  /\bNRJS-[a-f0-9]{19}\b/g,
  /\bSK[0-9a-fA-F]{32}\b/g,
  /\bkey-[0-9a-z]{32}\b/g,
  /\b[0-9a-f]{32}-us\d{1,2}\b/g,
  /\bPMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}\b/g,
  /\bpul-[a-f0-9]{40}\b/g,
  /\bsntry[su]_[A-Za-z0-9+/=_]{40,}/g,
  new RegExp(`\\b\\d{8,10}:AA${T}{33}`, 'g'),
  new RegExp(`\\bsq0(?:atp|csp)-${T}{22,43}`, 'g'),
  /\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b/g,
  /\btskey-[a-z]+-[A-Za-z0-9]{4,}-[A-Za-z0-9]{20,}/g,
  /\b[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,70}/g,
  /\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.=-]{32,64}/g,
  /\bpnu_[A-Za-z0-9]{36}\b/g,
  /\brubygems_[a-f0-9]{48}\b/g,
  /\bsgp_(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}\b/g,
  /\bCLOJARS_[a-z0-9]{60}\b/g,
  /\bFLWSECK(?:_TEST)?-[a-h0-9]{32}-X\b/g,
  /\bbkua_[a-f0-9]{40}\b/g,
  /\bapi_org_[A-Za-z0-9]{34}\b/g,
  new RegExp(`\\bGR1348941${T}{20}`, 'g'),
  new RegExp(`\\bHRKU-AA${T}{58}`, 'g'),
  /\bnfp_[A-Za-z0-9]{36}\b/g,
  /\bsbp_[a-f0-9]{40}\b/g,
  /\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b/g,
  new RegExp(`\\bCFPAT-${T}{43}`, 'g'),
  /\bEZAK[A-Za-z0-9]{54}\b/g,
  /\btfp_[A-Za-z0-9_.=-]{59}/g,
  /\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b/g,
  new RegExp(`\\btk-us-${T}{48}`, 'g'),
  new RegExp(`\\b[ps]k\\.eyJ${T}{10,}\\.${T}{20,}`, 'g'),
  /\bAKCp[A-Za-z0-9]{69}\b/g,
  /\bAPI-[A-Z0-9]{26}\b/g,
  new RegExp(`\\bpat\\.${T}{22}\\.[0-9a-f]{24}\\.[A-Za-z0-9]{20}\\b`, 'g'),
  new RegExp(`\\bfo1_${T}{43}`, 'g'),
  new RegExp(`\\bATATT3${T}{150,}`, 'g'),
  new RegExp(`\\bAQVN${T}{35,38}`, 'g'),
  // Discord webhooks carry their credential in the path.
  new RegExp(`(?<=discord(?:app)?\\.com/api/webhooks/\\d{17,20}/)${T}{60,}`, 'g'),
  // JSON Web Tokens (service account tokens, OIDC id tokens), signed or not.
  new RegExp(`\\beyJ${T}{5,}\\.${T}{5,}\\.${T}*`, 'g'),
];

/**
 * Whether any vendor token is in a text at all: one pass of one pattern, after which the common case (none) skips
 * the rest. Each pattern on its own costs a scan of the text, and nearly every text calmops shows has none.
 */
const ANY_VENDOR_TOKEN = new RegExp(VENDOR_TOKENS.map((pattern) => `(?:${pattern.source})`).join('|'));

/** AWS access key ids; the 40-character secret that goes with one is on the same line in most dumps. */
const AWS_KEY_ID = /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/;
const AWS_SECRET = /(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])/g;

/** OpenAI-style keys (also Anthropic's and DeepSeek's): sk-, sk-proj-, sk-ant-api03-, … Host and pod names start
 * with `sk-` too, so the random part must mix capitals and digits. */
const SK_KEY = new RegExp(`\\bsk-${T}{20,}`, 'g');

function redactSkKeys(text: string): string {
  return text.replace(SK_KEY, (match) => (/[A-Z]/.test(match) && /\d/.test(match) ? REDACTED : match));
}

/**
 * Vault's service tokens before 1.10: `s.` and 24 letters and digits. Host names and Java packages start with `s.`
 * too, so the rest must mix capitals, small letters and digits as random text does.
 */
const VAULT_LEGACY = /(?<![A-Za-z0-9_.-])[sbr]\.[A-Za-z0-9]{24}(?![A-Za-z0-9_.-])/g;

function redactVaultLegacy(text: string): string {
  if (!text.includes('.')) return text;
  return text.replace(VAULT_LEGACY, (match) =>
    /[A-Z]/.test(match.slice(2)) && /[a-z]/.test(match.slice(2)) && /\d/.test(match) ? REDACTED : match,
  );
}

function redactAwsLines(text: string): string {
  if (!AWS_KEY_ID.test(text)) return text;
  return text.replace(/^.*$/gm, (line) =>
    AWS_KEY_ID.test(line)
      ? line.replace(new RegExp(AWS_KEY_ID.source, 'g'), REDACTED).replace(AWS_SECRET, REDACTED)
      : line,
  );
}

/** Words that follow "bearer" or "basic" in prose and error messages rather than in a header. */
const AUTH_PROSE = new Set([
  'auth',
  'authentication',
  'authorization',
  'token',
  'tokens',
  'realm',
  'scheme',
  'header',
  'headers',
  'error',
  'required',
  'credentials',
  'challenge',
  'missing',
  'invalid',
  'expired',
]);

/** Looks like an encoded credential rather than a word: digits, symbols or inner capitals. */
function tokenish(value: string): boolean {
  return /\d|[+/=_.~-]/.test(value) || /[a-z][A-Z]|[A-Z][A-Z][a-z]/.test(value);
}

const HEADER_RULES: readonly Rule[] = [
  // Authorization and Proxy-Authorization headers, as headers, JSON fields or key=value pairs.
  {
    pattern:
      /\b((?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?)(?:(bearer|basic|token|digest|negotiate|ntlm|aws4-hmac-sha256|apikey|sso-key|ssws|dpop)\b[ \t]*)?([^\r\n"'}]*)/gi,
    replace: (match, prefix: string, scheme: string | undefined, value: string) => {
      const spread = scheme !== undefined && /^(?:digest|aws4-hmac-sha256|negotiate|ntlm)$/i.test(scheme);
      const taken = spread ? value.trimEnd() : (value.match(/^[^\s,;]*/)?.[0] ?? '');
      if (isPlaceholder(taken)) return match;
      return `${prefix}${scheme ? `${scheme} ` : ''}${REDACTED}${value.slice(taken.length)}`;
    },
  },
  // A bearer or basic credential outside a header: `curl -H "…: Bearer x"`, `using bearer x`.
  {
    pattern: /\b(bearer|basic)([ \t]+)([A-Za-z0-9._~+/-]{8,}[A-Za-z0-9._~+/=-]*)/gi,
    replace: (match, scheme: string, space: string, value: string) => {
      if (AUTH_PROSE.has(value.toLowerCase()) || isPlaceholder(value)) return match;
      if (scheme.toLowerCase() === 'basic' && !tokenish(value)) return match;
      if (scheme === 'bearer' && !tokenish(value) && value.length < 20) return match;
      return `${scheme}${space}${REDACTED}`;
    },
  },
  // Cookie and Set-Cookie headers: every value is a session or a tracking id; the names stay for diagnosis.
  {
    pattern: /\b((?:set-)?cookie["']?[ \t]*[:=][ \t]*)(["']?)([^\r\n]*)/gi,
    replace: (_match, prefix: string, quote: string, rest: string) => {
      const close = quote === '' ? -1 : rest.indexOf(quote);
      const value = close === -1 ? rest : rest.slice(0, close);
      const after = close === -1 ? '' : rest.slice(close);
      const redacted = value.includes('=')
        ? value.replace(/([^\s=;,]+)=([^;,\s]*)/g, (pair, name: string, v: string) =>
            COOKIE_ATTRIBUTES.has(name.toLowerCase()) || isPlaceholder(v) ? pair : `${name}=${REDACTED}`,
          )
        : value.replace(/^[^\s;,]+/, (v) => (isPlaceholder(v) ? v : REDACTED));
      return `${prefix}${quote}${redacted}${after}`;
    },
  },
];

const COOKIE_ATTRIBUTES = new Set(['path', 'domain', 'expires', 'max-age', 'samesite', 'priority', 'partitioned']);

/** Characters of a URL scheme (RFC 3986), and of a userinfo: anything up to the `@` but separators and quotes. */
const SCHEME_CHAR = /[A-Za-z0-9+.-]/;
const MAX_SCHEME = 32;
/** A userinfo longer than this is not one: the search for its `@` stops here, so it costs a bounded look per URL. */
const MAX_USERINFO = 512;
const USERINFO_END = new Set([' ', '\t', '\r', '\n', '/', '?', "'", '"', '<', '>', '`']);

/**
 * `scheme://user:password@host` keeps the user (it tells which account failed) and loses the password;
 * `scheme://token@host`, as git and some SDKs write it, loses the token; a Slack incoming webhook loses its path.
 * Found from each `://` outwards, so the cost is a bounded look per URL whatever surrounds it.
 */
function redactUrls(text: string): string {
  if (!text.includes('://')) return text;
  let out = '';
  let from = 0;
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    let schemeStart = at;
    while (schemeStart > 0 && at - schemeStart < MAX_SCHEME && SCHEME_CHAR.test(text[schemeStart - 1] as string)) {
      schemeStart--;
    }
    if (schemeStart === at || !/[A-Za-z]/.test(text[schemeStart] as string)) continue;
    const hostStart = at + 3;
    if (text.startsWith('hooks.slack.com/', hostStart)) {
      const path = /^hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/.exec(
        text.slice(hostStart, hostStart + 256),
      );
      if (path !== null) {
        const keep = path[0].indexOf('/', 'hooks.slack.com/'.length) + 1;
        out += `${text.slice(from, hostStart + keep)}${REDACTED}`;
        from = hostStart + path[0].length;
        at = from - 3;
      }
      continue;
    }
    let end = hostStart;
    while (end < text.length && end - hostStart < MAX_USERINFO && !USERINFO_END.has(text[end] as string)) {
      if (text[end] === '@') break;
      end++;
    }
    if (text[end] !== '@') continue;
    const userinfo = text.slice(hostStart, end);
    const colon = userinfo.indexOf(':');
    if (colon !== -1) {
      const password = userinfo.slice(colon + 1);
      if (password === '' || isPlaceholder(password)) continue;
      out += `${text.slice(from, hostStart + colon + 1)}${REDACTED}`;
    } else {
      if (userinfo.length < 20 || !tokenish(userinfo)) continue;
      out += `${text.slice(from, hostStart)}${REDACTED}`;
    }
    from = end;
    at = end - 2;
  }
  return out + text.slice(from);
}

function applyRules(text: string, rules: readonly Rule[]): string {
  let out = text;
  for (const rule of rules) {
    out = out.replace(rule.pattern, rule.replace as (substring: string, ...args: string[]) => string);
  }
  return out;
}

export function redactTokens(text: string): string {
  let out = redactVaultLegacy(redactSkKeys(redactAwsLines(text)));
  if (ANY_VENDOR_TOKEN.test(out)) for (const pattern of VENDOR_TOKENS) out = out.replace(pattern, REDACTED);
  out = applyRules(out, HEADER_RULES);
  return redactUrls(out);
}
