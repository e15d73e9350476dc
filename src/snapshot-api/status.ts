/**
 * `Status` objects exactly as kube-apiserver writes them, so kubectl prints its usual
 * `Error from server (Reason): message` and client libraries classify the failure by `reason` and `code`.
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'Expired'
  | 'Gone'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A request the snapshot server answers with a `Status` instead of an object. */
export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): KubeStatus {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

const REASON_BY_CODE: Readonly<Record<number, StatusReason>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The reason kube-apiserver pairs with an HTTP status code (InternalError for anything unusual). */
export function reasonForCode(code: number): StatusReason {
  return REASON_BY_CODE[code] ?? 'InternalError';
}

export function notFound(resource: string, name: string, group = ''): ApiStatusError {
  const qualified = group ? `${resource}.${group}` : resource;
  return new ApiStatusError(404, 'NotFound', `${qualified} "${name}" not found`, { name, group, kind: resource });
}

export function pathNotFound(): ApiStatusError {
  return new ApiStatusError(404, 'NotFound', 'the server could not find the requested resource');
}

export function methodNotAllowed(): ApiStatusError {
  return new ApiStatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(400, 'BadRequest', message);
}

export function continueExpired(): ApiStatusError {
  return new ApiStatusError(
    410,
    'Expired',
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
  );
}
