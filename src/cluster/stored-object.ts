import { recordedObjectText, recordObjectText } from './object-text.js';
import { resourceForKind } from './resources.js';
import { selectableValues } from './selectable-fields.js';
import type { KubeObject } from './types.js';

/**
 * What an object's head looks like where it is kept (the parsed-snapshot cache): one compact array, since thousands
 * of them are read back at a time.
 */
type HeadRecord = [
  apiVersion: string | null,
  kind: string | null,
  name: string,
  namespace: string | null,
  resourceVersion: string | null,
  labels: Readonly<Record<string, string>> | null,
  fields: readonly string[],
];

const isNullableString = (value: unknown): value is string | null => value === null || typeof value === 'string';

function headOf(object: KubeObject): HeadRecord {
  const info = object.kind ? resourceForKind(object.kind) : undefined;
  const { metadata } = object;
  return [
    object.apiVersion ?? null,
    object.kind ?? null,
    metadata.name,
    metadata.namespace ?? null,
    metadata.resourceVersion != null ? String(metadata.resourceVersion) : null,
    metadata.labels ?? null,
    info ? selectableValues(info.plural, object) : [],
  ];
}

/**
 * An object as a snapshot keeps it for serving: its head (what an API server needs to find, order and select it:
 * identity, labels and the values of the fields a field selector may name), its JSON text, and the object itself,
 * parsed from the text only when something reads it whole. A list is answered from heads and texts alone, so a
 * snapshot read back from the parsed-snapshot cache is thousands of texts the server never parses: only the client
 * that reads them does. Read back from the cache, the text is kept as a span of the entry's own bytes, which a list
 * answer sends as they are: it is neither decoded nor encoded again, and objects whose spans follow each other in
 * the entry (it lays them out in the order lists are served) go out as one slice of it.
 *
 * Like object-text.ts, this holds only objects that are never changed in place.
 */
export class StoredObject {
  readonly apiVersion: string | undefined;
  readonly kind: string | undefined;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** The values of its resource's selectable fields, in their order (selectable-fields.ts). */
  readonly fields: readonly string[];
  #object: KubeObject | undefined;
  #text: string | undefined;
  #bytes: Buffer | undefined;
  /** Where the text's UTF-8 bytes sit in a buffer shared with other objects (a cache entry): sliced when asked. */
  #source: Buffer | undefined;
  #start = 0;
  #end = 0;

  private constructor(head: HeadRecord, object: KubeObject | undefined, text: string | undefined) {
    this.apiVersion = head[0] ?? undefined;
    this.kind = head[1] ?? undefined;
    this.name = head[2];
    this.namespace = head[3] ?? undefined;
    this.resourceVersion = head[4] ?? undefined;
    this.labels = head[5] ?? undefined;
    this.fields = head[6];
    this.#object = object;
    this.#text = text;
  }

  static of(object: KubeObject): StoredObject {
    return new StoredObject(headOf(object), object, recordedObjectText(object));
  }

  /**
   * The object kept as its head and text only, which is all that serving it needs: the tree it was parsed into can
   * go at once, and is parsed again from the text only if something reads the object whole. A snapshot of thousands
   * of objects read so never holds all their trees at one time.
   */
  static detached(object: KubeObject): StoredObject {
    return new StoredObject(headOf(object), undefined, recordedObjectText(object) ?? JSON.stringify(object));
  }

  /**
   * The object whose head was kept as `record` (see `record()`) and whose text's UTF-8 bytes are `source` from
   * `start` to `end`; undefined when `record` is not a head. The caller vouches that both were kept from the same
   * object.
   */
  static fromRecord(record: unknown, source: Buffer, start: number, end: number): StoredObject | undefined {
    // Thousands are read at a time: plain indexed checks, no destructuring or temporary arrays.
    if (!Array.isArray(record) || record.length !== 7) return undefined;
    const labels: unknown = record[5];
    if (typeof record[2] !== 'string' || !Array.isArray(record[6])) return undefined;
    if (!isNullableString(record[0]) || !isNullableString(record[1])) return undefined;
    if (!isNullableString(record[3]) || !isNullableString(record[4])) return undefined;
    if (labels !== null && (typeof labels !== 'object' || Array.isArray(labels))) return undefined;
    const stored = new StoredObject(record as HeadRecord, undefined, undefined);
    stored.#source = source;
    stored.#start = start;
    stored.#end = end;
    return stored;
  }

  /**
   * From now on the text is `source` from `start` to `end` (its UTF-8 bytes, which the caller vouches for): the text
   * kept so far is let go, so that a snapshot just written to the cache is held once, as the entry's bytes.
   */
  keepIn(source: Buffer, start: number, end: number): void {
    this.#source = source;
    this.#start = start;
    this.#end = end;
    this.#text = undefined;
    this.#bytes = undefined;
  }

  /** The buffer the text's bytes are a span of, with the span's start and end; undefined when they are its own. */
  span(): readonly [source: Buffer, start: number, end: number] | undefined {
    return this.#source === undefined ? undefined : [this.#source, this.#start, this.#end];
  }

  /** The head as it is kept. */
  record(): HeadRecord {
    return [
      this.apiVersion ?? null,
      this.kind ?? null,
      this.name,
      this.namespace ?? null,
      this.resourceVersion ?? null,
      this.labels ?? null,
      this.fields,
    ];
  }

  get object(): KubeObject {
    if (this.#object === undefined) {
      const text = this.text;
      const object = JSON.parse(text) as KubeObject;
      recordObjectText(object, text);
      this.#object = object;
    }
    return this.#object;
  }

  /** `JSON.stringify` of the object, made (or decoded) at most once. */
  get text(): string {
    if (this.#text === undefined && this.#source !== undefined) {
      this.#text = this.#source.toString('utf8', this.#start, this.#end);
    }
    if (this.#text === undefined) {
      const object = this.#object as KubeObject;
      const text = recordedObjectText(object) ?? JSON.stringify(object);
      recordObjectText(object, text);
      this.#text = text;
    }
    return this.#text;
  }

  /** The text's UTF-8 bytes: a slice of the cache entry's own when kept in one, else encoded once. */
  get bytes(): Buffer {
    this.#bytes ??=
      this.#source === undefined ? Buffer.from(this.text, 'utf8') : this.#source.subarray(this.#start, this.#end);
    return this.#bytes;
  }
}
