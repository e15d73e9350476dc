import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scrubDeep, scrubText } from '../../../src/triage/scrub.js';
import { fill, leakedPart, REDACTION_FIXTURES, SecretFactory } from '../../support/redaction-support.js';

describe('scrubText', () => {
  const cases: [string, string, string][] = [
    ['bearer header', 'Authorization: Bearer abc.def-ghi_jkl123', 'abc.def-ghi_jkl123'],
    ['bare bearer', 'sent bearer sk9f8g7h6j5k4l3m2n1', 'sk9f8g7h6j5k4l3m2n1'],
    ['password=', 'login user=app password=hunter2 ok', 'hunter2'],
    ['env style', 'DB_PASSWORD: s3cr3t!', 's3cr3t!'],
    ['token:', 'token: 0123456789abcdef', '0123456789abcdef'],
    ['json secret', '{"client_secret": "very secret value"}', 'very secret value'],
    ['flag', 'run --token=abc123 --password hunter2', 'abc123'],
    ['AWS key id', 'using AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE'],
    ['AWS secret', 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'wJalrXUtnFEMI'],
    ['JWT', 'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_nature-123', 'eyJhbGciOiJIUzI1NiJ9'],
    ['email', 'notify jane.doe+ops@example.com now', 'jane.doe'],
    ['basic-auth URL', 'dial postgres://app:hunter2@db.svc:5432/app', 'hunter2'],
    ['slack token', 'xoxb-123456789012-abcdefghijkl', 'xoxb-123456789012'],
    ['openshift token', 'sha256~AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', 'AbCdEfGhIjKlMnOp'],
  ];
  it.each(cases)('removes %s', (_name, input, secret) => {
    const out = scrubText(input);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/\[REDACTED\]|\[EMAIL\]/);
  });

  it('leaves ordinary diagnostics alone and is idempotent', () => {
    const line = 'Error: missing required environment variable DATABASE_URL (tokens: 5, passed: 3)';
    expect(scrubText(line)).toBe(line);
    const once = scrubText('password=x Authorization: Bearer abcdefghijkl');
    expect(scrubText(once)).toBe(once);
  });

  it('removes a private key from `kubectl logs --previous` output whole, body lines included', () => {
    const template = readFileSync(join(REDACTION_FIXTURES, 'previous-logs.txt'), 'utf8');
    const { text, secrets } = fill(template, new SecretFactory(7));
    const out = scrubText(text);
    for (const secret of secrets) expect(leakedPart(out, secret), secret).toBeUndefined();
    // The evidence around the key survives: what the container did, and why it exited.
    expect(out).toContain('ERROR tls: private key does not match certificate');
    expect(out).toContain('orders exiting with code 1');
    expect(out).toMatch(/loading key from TLS_KEY\n\[REDACTED\]\n2024-05-01T10:41:58\.120Z/);
  });
});

describe('scrubDeep', () => {
  it('scrubs strings at any depth and blanks credential-named fields', () => {
    const out = scrubDeep({
      env: [
        { name: 'MODE', value: 'prod' },
        { name: 'DB_PASSWORD', value: 'hunter2' },
      ],
      apiToken: 'abc',
      password: 'p',
      nested: { msg: 'Bearer abcdefghijk', n: 3, ok: true, none: null },
    });
    expect(out).toEqual({
      env: [
        { name: 'MODE', value: 'prod' },
        { name: 'DB_PASSWORD', value: '[REDACTED]' },
      ],
      apiToken: '[REDACTED]',
      password: '[REDACTED]',
      nested: { msg: 'Bearer [REDACTED]', n: 3, ok: true, none: null },
    });
  });
});
