import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ExtensionAccess, PARAMETER_PATH, SECRET_PATH, TOKEN_HEADER } from '../../src/aws-parameters/extension.js';

/**
 * A stand-in for the AWS Parameters and Secrets Lambda Extension on a real HTTP port: the same paths and query
 * parameters, the session token header checked on every request, GetParameter and GetSecretValue outputs as bodies,
 * 404 for what does not exist and 400 "not ready" while it is told to be starting. It does not cache: what the tests
 * put is what the next request gets.
 */

interface ExtensionRequest {
  path: string;
  query: Record<string, string>;
  /** Whether the request carried the expected session token. */
  authorized: boolean;
}

interface StoredParameter {
  value: string;
  type: 'String' | 'SecureString';
  version: number;
}

export interface FakeParametersExtension {
  /** Access with the right session token. */
  access: ExtensionAccess;
  endpoint: string;
  sessionToken: string;
  requests: ExtensionRequest[];
  putParameter(name: string, value: string, type?: StoredParameter['type']): void;
  putSecret(secretId: string, value: string | Uint8Array): void;
  /** The next `count` requests are answered as the extension does before it has registered with Lambda. */
  notReadyFor(count: number): void;
  /** The next request is answered with this status and body, whatever it asks for. */
  answerNext(status: number, body: string): void;
  /** Forget every parameter, secret, request and scripted answer. */
  reset(): void;
  close(): Promise<void>;
}

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';

export async function startFakeParametersExtension(
  options: { sessionToken?: string } = {},
): Promise<FakeParametersExtension> {
  const sessionToken = options.sessionToken ?? 'fake-session-token';
  const parameters = new Map<string, StoredParameter>();
  const secrets = new Map<string, string | Uint8Array>();
  const requests: ExtensionRequest[] = [];
  let notReady = 0;
  const scripted: { status: number; body: string }[] = [];

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
    res.end(text);
  };

  const parameter = (query: Record<string, string>, res: ServerResponse) => {
    const name = query['name'] ?? '';
    const stored = parameters.get(name);
    if (stored === undefined) return send(res, 404, `ParameterNotFound: parameter ${name} not found`);
    // Without withDecryption a SecureString comes back as its ciphertext, as GetParameter does.
    const decrypt = query['withDecryption'] === 'true';
    const value =
      stored.type === 'SecureString' && !decrypt ? Buffer.from(`ciphertext:${name}`).toString('base64') : stored.value;
    send(res, 200, {
      Parameter: {
        ARN: `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${name.startsWith('/') ? '' : '/'}${name}`,
        DataType: 'text',
        LastModifiedDate: '2026-01-01T00:00:00.000Z',
        Name: name,
        Selector: null,
        SourceResult: null,
        Type: stored.type,
        Value: value,
        Version: stored.version,
      },
      ResultMetadata: {},
    });
  };

  const secret = (query: Record<string, string>, res: ServerResponse) => {
    const id = query['secretId'] ?? '';
    const stored = secrets.get(id);
    if (stored === undefined) {
      return send(res, 404, "ResourceNotFoundException: Secrets Manager can't find the specified secret.");
    }
    const name = id.startsWith('arn:') ? (id.split(':')[6] ?? id) : id;
    send(res, 200, {
      ARN: id.startsWith('arn:') ? id : `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id}-AbCdEf`,
      CreatedDate: '2026-01-01T00:00:00.000Z',
      Name: name,
      SecretBinary: typeof stored === 'string' ? null : Buffer.from(stored).toString('base64'),
      SecretString: typeof stored === 'string' ? stored : null,
      VersionId: '00000000-0000-4000-8000-000000000001',
      VersionStages: ['AWSCURRENT'],
      ResultMetadata: {},
    });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://extension');
    const query = Object.fromEntries(url.searchParams);
    const authorized = req.headers[TOKEN_HEADER.toLowerCase()] === sessionToken;
    requests.push({ path: url.pathname, query, authorized });
    if (notReady > 0) {
      notReady--;
      return send(res, 400, 'not ready to serve traffic, please wait');
    }
    const next = scripted.shift();
    if (next !== undefined) return send(res, next.status, next.body);
    if (!authorized) return send(res, 401, 'Unauthorized: missing or invalid X-Aws-Parameters-Secrets-Token');
    if (req.method !== 'GET') return send(res, 405, 'Method Not Allowed');
    if (url.pathname === PARAMETER_PATH) return parameter(query, res);
    if (url.pathname === SECRET_PATH) return secret(query, res);
    send(res, 404, `no route for ${url.pathname}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    access: { endpoint, sessionToken },
    endpoint,
    sessionToken,
    requests,
    putParameter(name, value, type = 'String') {
      parameters.set(name, { value, type, version: (parameters.get(name)?.version ?? 0) + 1 });
    },
    putSecret(secretId, value) {
      secrets.set(secretId, value);
    },
    notReadyFor(count) {
      notReady = count;
    },
    answerNext(status, body) {
      scripted.push({ status, body });
    },
    reset() {
      parameters.clear();
      secrets.clear();
      requests.length = 0;
      notReady = 0;
      scripted.length = 0;
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
