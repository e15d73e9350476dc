import { describe, expect, it } from 'vitest';
import { MAX_CLOCK_SKEW_SECONDS, signSlackRequest, verifySlackSignature } from '../../../src/slack/receiver.js';

const secret = 'secret-1';
const now = 1_800_000_000;

function verify(body: string, headers: Record<string, string>, at = now, signed = body) {
  return verifySlackSignature({
    signingSecret: secret,
    rawBody: signed,
    signature: headers['x-slack-signature'],
    timestamp: headers['x-slack-request-timestamp'],
    nowSeconds: at,
  });
}

describe('Slack signature verification', () => {
  const body = 'command=%2Ftriage&text=p%C3%A4yments';

  it('accepts a request signed now and within five minutes either way', () => {
    expect(verify(body, signSlackRequest(secret, body, now))).toEqual({ ok: true });
    expect(verify(body, signSlackRequest(secret, body, now - MAX_CLOCK_SKEW_SECONDS))).toEqual({ ok: true });
    expect(verify(body, signSlackRequest(secret, body, now + MAX_CLOCK_SKEW_SECONDS))).toEqual({ ok: true });
  });

  it('refuses stale and future timestamps', () => {
    expect(verify(body, signSlackRequest(secret, body, now - MAX_CLOCK_SKEW_SECONDS - 1))).toEqual({
      ok: false,
      reason: 'stale request timestamp',
    });
    expect(verify(body, signSlackRequest(secret, body, now + MAX_CLOCK_SKEW_SECONDS + 1))).toEqual({
      ok: false,
      reason: 'request timestamp in the future',
    });
  });

  it('refuses another secret, another body and missing or malformed headers', () => {
    expect(verify(body, signSlackRequest('other', body, now)).ok).toBe(false);
    expect(verify(body, signSlackRequest(secret, body, now), now, `${body}&x=1`).ok).toBe(false);
    expect(verify(body, {})).toEqual({ ok: false, reason: 'missing X-Slack-Signature' });
    expect(verify(body, { 'x-slack-signature': 'v0=aa' })).toEqual({
      ok: false,
      reason: 'missing X-Slack-Request-Timestamp',
    });
    expect(verify(body, { 'x-slack-signature': 'v0=aa', 'x-slack-request-timestamp': '-5' }).ok).toBe(false);
  });

  it('signs the UTF-8 bytes of non-ASCII text', () => {
    const text = 'text=Pods h\u00e4ngen';
    const headers = signSlackRequest(secret, text, now);
    expect(verify(text, headers)).toEqual({ ok: true });
    // The same bytes read as Latin-1 (what a base64 body decoded as ASCII/Latin-1 yields) no longer verify.
    const latin1 = Buffer.from(text, 'utf8').toString('latin1');
    expect(verify(text, headers, now, latin1).ok).toBe(false);
  });
});
