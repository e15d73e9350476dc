import type { KubeObject } from '../cluster/types.js';

/**
 * Content negotiation: kubectl asks for Tables to print its columns and for PartialObjectMetadata when only names and
 * labels matter; everything else gets the objects themselves.
 */

export interface Format {
  as: 'Table' | 'PartialObjectMetadata' | 'Object';
  version: string;
}

/** Pick the representation from the Accept header, honouring the client's order of preference. */
export function negotiate(accept: string | undefined): Format {
  for (const mediaType of (accept ?? '').split(',')) {
    const [type, ...rawParams] = mediaType.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== '*/*') continue;
    const params = new Map(
      rawParams.map((p) => {
        const [k = '', v = ''] = p.split('=');
        return [k.trim(), v.trim()] as const;
      }),
    );
    const as = params.get('as');
    if (as === undefined) return { as: 'Object', version: '' };
    if (params.get('g') !== 'meta.k8s.io') continue;
    const version = params.get('v') === 'v1beta1' ? 'meta.k8s.io/v1beta1' : 'meta.k8s.io/v1';
    if (as === 'Table') return { as: 'Table', version };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') {
      return { as: 'PartialObjectMetadata', version };
    }
  }
  return { as: 'Object', version: '' };
}

export function partial(object: KubeObject, apiVersion: string): object {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: object.metadata };
}
