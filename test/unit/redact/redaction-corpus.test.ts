import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { describe, expect, it } from 'vitest';
import { isSensitiveName, REDACTED, redactDeep, redactText } from '../../../src/redact/index.js';
import { leakedPart, loadOrdinaryLines, loadSecretCorpus } from '../../support/redaction-support.js';

/**
 * The redaction corpus: synthetic secrets of every family calmops must catch, in the log lines they turn up in, and
 * ordinary log lines that must come through untouched. secretlint's recommended rules serve as an independent
 * oracle: they must find nothing in what redaction returns.
 */

const corpus = loadSecretCorpus();
const ordinary = loadOrdinaryLines();

const ORACLE: Parameters<typeof lintSource>[0]['options']['config'] = {
  rules: [
    {
      id: '@secretlint/secretlint-rule-preset-recommend',
      rule: recommended,
      rules: [
        // `postgres://orders:[REDACTED]@db`: the marker where the password was is not a password.
        {
          id: '@secretlint/secretlint-rule-database-connection-string',
          options: { allows: [String.raw`/:\[REDACTED\]@/`] },
        },
      ],
    },
  ],
};

async function oracle(content: string): Promise<string[]> {
  const result = await lintSource({
    source: { filePath: '/redaction-corpus.log', content, contentType: 'text' },
    options: { config: ORACLE, maskSecrets: true },
  });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('redaction corpus', () => {
  const secrets = corpus.reduce((n, e) => n + e.secrets.length, 0);

  it(`holds at least 150 synthetic secrets in realistic log lines (${corpus.length} entries, ${secrets} values)`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(250);
    expect(new Set(corpus.map((e) => e.family)).size).toBeGreaterThanOrEqual(30);
    for (const entry of corpus) expect(entry.secrets.length, entry.template).toBeGreaterThan(0);
  });

  it('lets no secret through: 0 leaked, not even a 16-character piece', () => {
    const leaks = corpus.flatMap((entry) => {
      const out = redactText(entry.text);
      return entry.secrets
        .map((secret) => leakedPart(out, secret))
        .filter((piece): piece is string => piece !== undefined)
        .map((piece) => `${entry.family}: "${piece}" survived in ${JSON.stringify(out.slice(0, 200))}`);
    });
    expect(leaks).toEqual([]);
  });

  it('keeps the text around a secret, and redacting again changes nothing', () => {
    for (const entry of corpus) {
      const out = redactText(entry.text);
      expect(out, entry.template).toContain(REDACTED);
      expect(redactText(out), entry.template).toBe(out);
    }
  });

  it('leaves nothing secretlint recognises, while secretlint does find the raw secrets', async () => {
    let rawFindings = 0;
    const remaining: string[] = [];
    for (const entry of corpus) {
      rawFindings += (await oracle(entry.text)).length;
      remaining.push(...(await oracle(redactText(entry.text))).map((m) => `${entry.family}: ${m}`));
    }
    expect(remaining).toEqual([]);
    // The oracle knows fewer families than calmops does, but it must recognise a good share of the corpus.
    expect(rawFindings).toBeGreaterThanOrEqual(40);
  });
});

describe('ordinary log lines', () => {
  it(`come through unchanged, Kubernetes names included: none of ${ordinary.length} is altered`, () => {
    expect(ordinary.length).toBeGreaterThanOrEqual(250);
    const changed = ordinary.filter((line) => redactText(line) !== line);
    expect(changed).toEqual([]);
  });

  it('hold no secret secretlint recognises', async () => {
    expect(await oracle(ordinary.join('\n'))).toEqual([]);
  });
});

describe('redactText', () => {
  it('removes the exact credential values it is given, wherever they appear', () => {
    const token = 'q7Lr2mXv9TzPk4Wn';
    expect(redactText(`retrying with q7Lr2mXv9TzPk4Wn after ${token}`, { secrets: [token, 'short'] })).toBe(
      'retrying with [REDACTED] after [REDACTED]',
    );
  });

  it('removes a YAML block scalar under a credential name, and keeps the next key', () => {
    const out = redactText('data:\n  password: |\n    line-one-9f\n    line-two-7c\n  username: orders');
    expect(out).toBe('data:\n  password: |\n    [REDACTED]\n  username: orders');
  });

  it('keeps references to where a credential lives', () => {
    for (const line of [
      "      DB_PASSWORD:  <set to the key 'password' in secret 'db-creds'>  Optional: false",
      `DB_PASSWORD=\${DB_PASSWORD}`,
      'DB_PASSWORD=$(cat /run/secrets/db-password)',
      'password: {{ .Values.db.password }}',
      'token="[REDACTED]"',
    ]) {
      expect(redactText(line)).toBe(line);
    }
  });

  it('neutralises a private key whose END never came (the log was cut)', () => {
    const out = redactText('boot\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nQWx8Rt2+b9Lm');
    expect(out).toBe('boot\n[REDACTED]');
  });
});

describe('names that announce a credential', () => {
  it.each([
    'DB_PASS',
    'client_secret',
    'X-Api-Key',
    'AccountKey',
    'client-key-data',
    'client-certificate-data',
    'auth',
    'SECRET_KEY_BASE',
    'password_hash',
    'aws_secret_access_key',
    'STRIPE_KEY',
    'tls.key',
    'Pwd',
  ])('%s is sensitive', (name) => {
    expect(isSensitiveName(name)).toBe(true);
  });

  it.each([
    'secretName',
    'token_ttl',
    'password_file',
    'tokens',
    'passed',
    'key',
    'cache_key',
    'PARTITION_KEY',
    'PUBLIC_KEY',
    'certificate-authority-data',
  ])('%s is not', (name) => {
    expect(isSensitiveName(name)).toBe(false);
  });
});

describe('redactDeep', () => {
  it('blanks credential-named fields and the value of a credential env entry, and scrubs every string', () => {
    expect(
      redactDeep({
        env: [
          { name: 'DB_PASSWORD', value: 'hunter2' },
          { name: 'LOG_LEVEL', value: 'debug' },
        ],
        clientSecret: 'abc',
        message: 'connect postgres://orders:hunter2@db:5432/orders',
        count: 3,
      }),
    ).toEqual({
      env: [
        { name: 'DB_PASSWORD', value: REDACTED },
        { name: 'LOG_LEVEL', value: 'debug' },
      ],
      clientSecret: REDACTED,
      message: 'connect postgres://orders:[REDACTED]@db:5432/orders',
      count: 3,
    });
  });
});
