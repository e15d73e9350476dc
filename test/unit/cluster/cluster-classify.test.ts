import { describe, expect, it } from 'vitest';
import {
  httpFailure,
  reasonForStatus,
  redactCredentials,
  statusMessage,
  type TransportContext,
  transportFailure,
} from '../../../src/cluster/classify.js';

const ctx: TransportContext = {
  verb: 'list',
  describe: 'pods in namespace shop',
  server: 'https://api.example:6443',
  timeoutMs: 5000,
  timedOut: false,
  cancelled: false,
  secrets: [],
};

function systemError(code: string, message = `connect ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

describe('classify', () => {
  it('maps HTTP statuses to reasons', () => {
    expect([401, 403, 404, 400, 409, 422, 429, 500, 502, 503].map(reasonForStatus)).toEqual([
      'unauthorized',
      'forbidden',
      'not-found',
      'invalid',
      'invalid',
      'invalid',
      'server-error',
      'server-error',
      'server-error',
      'server-error',
    ]);
  });

  it("uses the Status object's message, or a short excerpt of a non-Status body", () => {
    const status = JSON.stringify({ kind: 'Status', message: 'pods is forbidden: User "x"', code: 403 });
    expect(statusMessage(status)).toBe('pods is forbidden: User "x"');
    expect(statusMessage('<html>bad gateway</html>')).toBeUndefined();
    const error = httpFailure('list', 'pods in namespace shop', 502, '<html>bad gateway</html>');
    expect(error.reason).toBe('server-error');
    expect(error.message).toContain('pods in namespace shop');
    expect(error.message).toContain('bad gateway');
  });

  it('classifies network failures', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH']) {
      const error = transportFailure(systemError(code), ctx);
      expect(error.reason, code).toBe('unreachable');
      expect(error.message).toContain('https://api.example:6443');
      expect(error.message).toContain(code);
    }
    expect(transportFailure(systemError('ETIMEDOUT'), ctx).reason).toBe('timeout');
    const tls = transportFailure(systemError('DEPTH_ZERO_SELF_SIGNED_CERT'), ctx);
    expect(tls.reason).toBe('unreachable');
    expect(tls.message).toContain('certificate-authority');
  });

  it('finds the code on a nested cause', () => {
    const error = new Error('fetch failed', { cause: systemError('ECONNREFUSED') });
    expect(transportFailure(error, ctx).message).toContain('ECONNREFUSED');
  });

  it('tells our deadline from a cancellation by the caller', () => {
    const deadline = transportFailure(new Error('aborted'), { ...ctx, timedOut: true });
    expect(deadline.reason).toBe('timeout');
    expect(deadline.message).toContain('5000 ms');
    const cancelled = transportFailure(new Error('aborted'), { ...ctx, cancelled: true });
    expect(cancelled.reason).toBe('timeout');
    expect(cancelled.message).toContain('cancelled');
  });

  it('redacts credentials in messages and in the cause', () => {
    const token = 'abcdefghijklmnop0123456789';
    const error = transportFailure(new Error(`auth with ${token} failed: Authorization: Bearer ${token}`), {
      ...ctx,
      secrets: [token],
    });
    expect(error.message).not.toContain(token);
    expect(String((error.cause as Error).message)).not.toContain(token);
  });

  it('redactCredentials covers bearer, basic, key=value, URL userinfo and JWTs', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlLXZhbHVl';
    const text = [
      'Bearer sha256~abc.def-123',
      'basic dXNlcjpwYXNz',
      'token=s3cr3t-value',
      'password: "hunter2"',
      'https://admin:pa55@api.example:6443/api',
      jwt,
    ].join(' | ');
    const out = redactCredentials(text);
    for (const leaked of ['sha256~abc', 'dXNlcjpwYXNz', 's3cr3t-value', 'hunter2', 'pa55', jwt]) {
      expect(out, leaked).not.toContain(leaked);
    }
    // The account stays readable (it says which identity failed); its password does not.
    expect(out).toContain('https://admin:[REDACTED]@api.example:6443/api');
  });
});
