import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prng } from '../../bench/support/prng.js';
import { readYaml as parse } from '../../src/yaml-text.js';

/**
 * The redaction corpus: log lines written as templates with `{{kind}}` placeholders, filled with synthetic secrets
 * of the kind's real format from a seeded generator. The fixtures hold no credential-shaped literal (which secret
 * scanners on the repository would flag), and every run checks the same values.
 */

export const REDACTION_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'redaction');

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const B64 = `${ALNUM}+/`;
const B64URL = `${ALNUM}-_`;
const HEX = '0123456789abcdef';
const WORDS = ['falcon', 'hunter', 'summer', 'orchid', 'granite', 'velvet', 'harbor', 'maple', 'cobalt', 'saffron'];

export class SecretFactory {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = prng(seed);
  }

  private pick<T>(items: readonly T[] | string): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Random text from an alphabet, using each class of character (capitals, small letters, digits) it has. */
  chars(alphabet: string, n: number): string {
    const classes = [/[A-Z]/, /[a-z]/, /\d/].filter((c) => c.test(alphabet));
    for (;;) {
      let out = '';
      for (let i = 0; i < n; i++) out += this.pick<string>(alphabet);
      if (n < 12 || classes.every((c) => c.test(out))) return out;
    }
  }

  private base64Of(text: string): string {
    return Buffer.from(text).toString('base64');
  }

  private jwt(): string {
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: this.chars(B64URL, 43), typ: 'JWT' })).toString(
      'base64url',
    );
    const payload = Buffer.from(
      JSON.stringify({
        iss: 'https://kubernetes.default.svc.cluster.local',
        sub: `system:serviceaccount:shop:${this.pick(WORDS)}`,
        exp: 1_900_000_000 + Math.floor(this.next() * 1e6),
        jti: this.chars(HEX, 32),
      }),
    ).toString('base64url');
    return `${header}.${payload}.${this.chars(B64URL, 342)}`;
  }

  private password(): string {
    const word = this.pick(WORDS);
    return `${word[0]?.toUpperCase()}${word.slice(1)}${this.chars(DIGITS, 3)}${this.pick('!#%*+-_.')}${this.chars(ALNUM, 4)}`;
  }

  /** Key material: base64 lines of 64 characters and a shorter last line, as PEM writes them. */
  pemBody(bytes: number): string[] {
    const text = `MII${this.chars(B64, Math.ceil((bytes * 4) / 3) - 3)}`;
    const lines: string[] = [];
    for (let i = 0; i < text.length; i += 64) lines.push(text.slice(i, i + 64));
    const last = lines.at(-1) as string;
    lines[lines.length - 1] = `${last.slice(0, Math.max(8, last.length - 2))}==`;
    return lines;
  }

  /** One value of a kind; multi-line kinds return their lines. */
  make(kind: string): string | string[] {
    switch (kind) {
      case 'aws_id':
        return `AKIA${this.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`;
      case 'aws_sts_id':
        return `ASIA${this.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`;
      case 'aws_secret':
        return this.chars(B64, 40);
      case 'aws_session':
        return `IQoJb3JpZ2luX2VjE${this.chars(B64, 380)}`;
      case 'pem_rsa':
        return this.pemBody(1190);
      case 'pem_ec':
        return this.pemBody(121);
      case 'pem_pkcs8':
        return this.pemBody(1218);
      case 'pem_openssh':
        return [`b3BlbnNzaC1rZXktdjEAAAAA${this.chars(B64, 40)}`, ...this.pemBody(300)];
      case 'password':
        return this.password();
      case 'simple_password':
        return `${this.pick(WORDS)}${this.chars(DIGITS, 1)}`;
      case 'google_api':
        return `AIza${this.chars(B64URL, 35)}`;
      case 'github_pat':
        return `ghp_${this.chars(ALNUM, 36)}`;
      case 'github_oauth':
        return `gho_${this.chars(ALNUM, 36)}`;
      case 'github_app':
        return `ghs_${this.chars(ALNUM, 36)}`;
      case 'github_fine':
        return `github_pat_${this.chars(ALNUM, 22)}_${this.chars(ALNUM, 59)}`;
      case 'gitlab':
        return `glpat-${this.chars(B64URL, 20)}`;
      case 'slack_bot':
        return `xoxb-${this.chars(DIGITS, 12)}-${this.chars(DIGITS, 13)}-${this.chars(ALNUM, 24)}`;
      case 'slack_user':
        return `xoxp-${this.chars(DIGITS, 12)}-${this.chars(DIGITS, 12)}-${this.chars(DIGITS, 13)}-${this.chars(HEX, 32)}`;
      case 'slack_app':
        return `xapp-1-A${this.chars(`${UPPER}${DIGITS}`, 10)}-${this.chars(DIGITS, 13)}-${this.chars(HEX, 64)}`;
      case 'slack_webhook':
        return `T${this.chars(`${UPPER}${DIGITS}`, 8)}/B${this.chars(`${UPPER}${DIGITS}`, 10)}/${this.chars(ALNUM, 24)}`;
      case 'openai':
        return `sk-${this.chars(ALNUM, 48)}`;
      case 'openai_project':
        return `sk-proj-${this.chars(B64URL, 120)}`;
      case 'anthropic':
        return `sk-ant-api03-${this.chars(B64URL, 93)}AA`;
      case 'npm':
        return `npm_${this.chars(ALNUM, 36)}`;
      case 'sendgrid':
        return `SG.${this.chars(B64URL, 22)}.${this.chars(B64URL, 43)}`;
      case 'stripe':
        return `sk_live_${this.chars(ALNUM, 24)}`;
      case 'stripe_restricted':
        return `rk_live_${this.chars(ALNUM, 24)}`;
      case 'huggingface':
        return `hf_${this.chars(ALNUM, 34)}`;
      case 'digitalocean':
        return `dop_v1_${this.chars(HEX, 64)}`;
      case 'vault':
        return `hvs.${this.chars(B64URL, 90)}`;
      case 'google_oauth':
        return `ya29.${this.chars(B64URL, 150)}`;
      case 'google_client_secret':
        return `GOCSPX-${this.chars(B64URL, 28)}`;
      case 'azure_account_key':
        return `${this.chars(B64, 86)}==`;
      case 'azure_sig':
        return encodeURIComponent(`${this.chars(B64, 43)}=`);
      case 'azure_client_secret':
        return `${this.chars(ALNUM, 3)}8Q~${this.chars(`${ALNUM}_.-`, 34)}`;
      case 'docker_auth':
        return this.base64Of(`${this.pick(WORDS)}:${this.password()}`);
      case 'basic':
        return this.base64Of(`${this.pick(WORDS)}-svc:${this.password()}`);
      case 'bearer':
        return this.chars(B64URL, 40);
      case 'jwt':
        return this.jwt();
      case 'openshift':
        return `sha256~${this.chars(B64URL, 43)}`;
      case 'session':
        return this.chars(B64URL, 32);
      case 'hex32':
        return this.chars(HEX, 32);
      case 'hex64':
        return this.chars(HEX, 64);
      case 'uuid': {
        const h = this.chars(HEX, 32);
        return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
      }
      case 'cert_data':
        return `LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSU${this.chars(B64, 1400)}`;
      case 'key_data':
        return `LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF${this.chars(B64, 2200)}`;
      case 'groq':
        return `gsk_${this.chars(ALNUM, 52)}`;
      case 'notion':
        return `ntn_${this.chars(DIGITS, 11)}${this.chars(ALNUM, 35)}`;
      case 'grafana_cloud':
        return `glc_${this.chars(B64, 120)}`;
      case 'grafana_sa':
        return `glsa_${this.chars(ALNUM, 32)}_${this.chars(HEX, 8)}`;
      case 'onepassword':
        return `ops_${Buffer.from(JSON.stringify({ signInAddress: 'my.1password.com', userAuth: this.chars(B64, 80), email: 'ci@shop.example' })).toString('base64')}`;
      case 'vercel':
        return `vcp_${this.chars(ALNUM, 40)}`;
      case 'docker_pat':
        return `dckr_pat_${this.chars(B64URL, 27)}`;
      case 'figma':
        return `figd_${this.chars(B64URL, 40)}`;
      case 'generic':
        return this.chars(ALNUM, 24);
      // Passed on command lines and protocols, or recognised by the words around them.
      case 'letters_password':
        return `${this.pick(WORDS)}${this.pick(WORDS)}`;
      case 'vault_legacy':
        return `s.${this.chars(ALNUM, 24)}`;
      case 'eq_token':
        return `${this.chars(B64, 22)}=${this.chars(B64, 22)}`;
      case 'k8s_bootstrap':
        return `${this.chars(`${LOWER}${DIGITS}`, 6)}.${this.chars(`${LOWER}${DIGITS}`, 16)}`;
      // Vendor formats from secretlint's and gitleaks' public rule sets.
      case 'newrelic_user':
        return `NRAK-${this.chars(`${UPPER}${DIGITS}`, 27)}`;
      case 'newrelic_browser':
        return `NRJS-${this.chars(HEX, 19)}`;
      case 'twilio_api':
        return `SK${this.chars(HEX, 32)}`;
      case 'mailgun':
        return `key-${this.chars(HEX, 32)}`;
      case 'mailchimp':
        return `${this.chars(HEX, 32)}-us${this.chars(DIGITS, 2)}`;
      case 'postman':
        return `PMAK-${this.chars(HEX, 24)}-${this.chars(HEX, 34)}`;
      case 'pulumi':
        return `pul-${this.chars(HEX, 40)}`;
      case 'sentry_user':
        return `sntryu_${this.chars(HEX, 64)}`;
      case 'telegram':
        return `${this.chars(DIGITS, 10)}:AA${this.chars(B64URL, 33)}`;
      case 'discord_webhook':
        return this.chars(B64URL, 68);
      case 'square':
        return `sq0atp-${this.chars(B64URL, 22)}`;
      case 'square_secret':
        return `sq0csp-${this.chars(B64URL, 43)}`;
      case 'dynatrace':
        return `dt0c01.${this.chars(`${UPPER}${DIGITS}`, 24)}.${this.chars(`${UPPER}${DIGITS}`, 64)}`;
      case 'tailscale':
        return `tskey-auth-k${this.chars(ALNUM, 10)}CNTRL-${this.chars(ALNUM, 33)}`;
      case 'terraform':
        return `${this.chars(`${LOWER}${DIGITS}`, 14)}.atlasv1.${this.chars(`${LOWER}${DIGITS}`, 67)}`;
      case 'planetscale':
        return `pscale_tkn_${this.chars(B64URL, 43)}`;
      case 'prefect':
        return `pnu_${this.chars(ALNUM, 36)}`;
      case 'rubygems':
        return `rubygems_${this.chars(HEX, 48)}`;
      case 'sourcegraph':
        return `sgp_${this.chars(HEX, 16)}_${this.chars(HEX, 40)}`;
      case 'clojars':
        return `CLOJARS_${this.chars(`${LOWER}${DIGITS}`, 60)}`;
      case 'flutterwave':
        return `FLWSECK_TEST-${this.chars('abcdefgh0123456789', 32)}-X`;
      case 'buildkite':
        return `bkua_${this.chars(HEX, 40)}`;
      case 'doppler':
        return `dp.pt.${this.chars(ALNUM, 43)}`;
      case 'huggingface_org':
        return `api_org_${this.chars(ALNUM, 34)}`;
      case 'gitlab_runner':
        return `GR1348941${this.chars(B64URL, 20)}`;
      case 'heroku':
        return `HRKU-AA${this.chars(B64URL, 58)}`;
      case 'netlify':
        return `nfp_${this.chars(ALNUM, 36)}`;
      case 'supabase':
        return `sbp_${this.chars(HEX, 40)}`;
      case 'cloudflare_origin':
        return `v1.0-${this.chars(HEX, 24)}-${this.chars(HEX, 146)}`;
      case 'contentful':
        return `CFPAT-${this.chars(B64URL, 43)}`;
      case 'easypost':
        return `EZAK${this.chars(ALNUM, 54)}`;
      case 'typeform':
        return `tfp_${this.chars(B64URL, 59)}`;
      case 'shippo':
        return `shippo_live_${this.chars(HEX, 40)}`;
      case 'scalingo':
        return `tk-us-${this.chars(B64URL, 48)}`;
      case 'mapbox':
        return `sk.eyJ1Ijoi${this.chars(B64URL, 40)}.${this.chars(B64URL, 22)}`;
      case 'jfrog':
        return `AKCp${this.chars(ALNUM, 69)}`;
      case 'octopus':
        return `API-${this.chars(`${UPPER}${DIGITS}`, 26)}`;
      case 'harness':
        return `pat.${this.chars(B64URL, 22)}.${this.chars(HEX, 24)}.${this.chars(ALNUM, 20)}`;
      case 'fly':
        return `fo1_${this.chars(B64URL, 43)}`;
      case 'atlassian':
        return `ATATT3${this.chars(B64URL, 186)}`;
      case 'yandex':
        return `AQVN${this.chars(B64URL, 36)}`;
      default:
        throw new Error(`unknown secret kind ${kind}`);
    }
  }
}

export interface CorpusEntry {
  family: string;
  /** The template, as written in the fixture. */
  template: string;
  /** The text with synthetic secrets in place. */
  text: string;
  /** Every secret value (for multi-line kinds, every line of the body) that must not survive. */
  secrets: string[];
}

/**
 * Fills `{{kind}}` placeholders. A multi-line value continues on the following lines with the placeholder line's
 * own prefix (indentation, or a timestamp prefix given as `{{kind|prefix}}`).
 */
export function fill(template: string, factory: SecretFactory): { text: string; secrets: string[] } {
  const secrets: string[] = [];
  const lines = template.split('\n').map((line) => {
    const indent = line.match(/^[ \t]*/)?.[0] ?? '';
    return line.replace(/\{\{(\w+)(?:\|([^}]*))?\}\}/g, (_m, kind: string, prefix?: string) => {
      const value = factory.make(kind);
      if (typeof value === 'string') {
        secrets.push(value);
        return value;
      }
      secrets.push(...value);
      return value.join(`\n${prefix === undefined ? indent : `${prefix} `}`);
    });
  });
  return { text: lines.join('\n'), secrets };
}

export function loadSecretCorpus(seed = 20_240_501): CorpusEntry[] {
  const raw = parse(readFileSync(join(REDACTION_FIXTURES, 'secrets.yaml'), 'utf8')) as Array<{
    family: string;
    text: string;
  }>;
  const factory = new SecretFactory(seed);
  return raw.map((entry) => {
    const template = entry.text.replace(/\n$/, '');
    return { family: entry.family, template, ...fill(template, factory) };
  });
}

export function loadOrdinaryLines(): string[] {
  return readFileSync(join(REDACTION_FIXTURES, 'ordinary.log'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

/**
 * The secret, or a long enough piece of it, is still in the output. Fragments count: a key with its first half
 * replaced has still leaked.
 */
export function leakedPart(output: string, secret: string): string | undefined {
  if (output.includes(secret)) return secret;
  const window = 16;
  if (secret.length <= window * 1.5) return undefined;
  for (let i = 0; i + window <= secret.length; i++) {
    const piece = secret.slice(i, i + window);
    if (output.includes(piece)) return piece;
  }
  return undefined;
}
