import { describe, expect, it } from 'vitest';
import { nowSeconds, send, slashBody, startSlackHarness } from '../../support/slack-harness.js';
import { startedForSuite } from '../../support/suite-lifecycle.js';

describe('Slack request verification (before Bolt)', () => {
  // Not reset between tests: each check that nothing happened also covers the refusals before it.
  const h = startedForSuite(() => startSlackHarness());

  const nothingHappened = () => {
    expect(h.slack.calls()).toEqual([]);
    expect(h.workflow.started).toEqual([]);
  };

  it('refuses a bad signature with 401 and records nothing', async () => {
    const response = await send(h.handle, slashBody('pods stuck pending in payments'), { secret: 'not-the-secret' });
    expect(response.statusCode).toBe(401);
    nothingHappened();
  });

  it('refuses a body changed after signing', async () => {
    const body = slashBody('pods stuck pending in payments');
    const response = await send(h.handle, body, {});
    expect(response.statusCode).toBe(200);
    h.reset();
    const tampered = await h.handle({
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-signature': 'v0=0000000000000000000000000000000000000000000000000000000000000000',
        'x-slack-request-timestamp': String(nowSeconds()),
      },
      body,
    });
    expect(tampered.statusCode).toBe(401);
    nothingHappened();
  });

  it('refuses a stale timestamp (more than 5 minutes old)', async () => {
    const response = await send(h.handle, slashBody('pods stuck pending in payments'), {
      timestamp: nowSeconds() - 301,
    });
    expect(response.statusCode).toBe(401);
    expect(response.body).toContain('stale');
    nothingHappened();
  });

  it('refuses a timestamp more than 5 minutes in the future', async () => {
    const response = await send(h.handle, slashBody('pods stuck pending in payments'), {
      timestamp: nowSeconds() + 301,
    });
    expect(response.statusCode).toBe(401);
    expect(response.body).toContain('future');
    nothingHappened();
  });

  it('refuses requests with missing signature headers', async () => {
    const body = slashBody('help');
    const noSignature = await h.handle({
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(nowSeconds()),
      },
      body,
    });
    const noTimestamp = await h.handle({
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-signature': 'v0=abc' },
      body,
    });
    const none = await h.handle({ headers: {}, body });
    expect([noSignature.statusCode, noTimestamp.statusCode, none.statusCode]).toEqual([401, 401, 401]);
    nothingHappened();
  });

  it('refuses a malformed timestamp', async () => {
    const response = await h.handle({
      headers: { 'x-slack-signature': 'v0=abc', 'x-slack-request-timestamp': '12e9' },
      body: slashBody('help'),
    });
    expect(response.statusCode).toBe(401);
    nothingHappened();
  });

  it('verifies a base64 body with non-ASCII text as UTF-8 bytes', async () => {
    const response = await send(h.handle, slashBody('Pods hängen fest — bitte prüfen in zahlungen'), { base64: true });
    expect(response.statusCode).toBe(200);
    const reply = JSON.parse(response.body) as { response_type: string; text: string };
    expect(reply.response_type).toBe('ephemeral');
  });

  it('accepts a content type with parameters', async () => {
    const response = await send(h.handle, slashBody('help'), {
      contentType: 'application/x-www-form-urlencoded; charset=utf-8',
    });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).text).toContain('/triage');
  });

  it('answers a signed body that is not a Slack payload with 400', async () => {
    const response = await send(h.handle, '{not json', { contentType: 'application/json' });
    expect(response.statusCode).toBe(400);
  });

  it('answers url_verification with the challenge', async () => {
    const body = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' });
    const response = await send(h.handle, body, { contentType: 'application/json' });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ challenge: 'c-123' });
  });
});
