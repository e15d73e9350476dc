import { recordedObjectText, recordObjectText } from './object-text.js';
import { resourceForKind } from './resources.js';
import { selectableValues } from './selectable-fields.js';
import type { KubeObject } from './types.js';

/** What an API server needs to find, order and select an object: who it is, its labels and its field values. */
interface Head {
  apiVersion: string | undefined;
  kind: string | undefined;
  name: string;
  namespace: string | undefined;
  resourceVersion: string | undefined;
  labels: Readonly<Record<string, string>> | undefined;
  /** The values of its resource's selectable fields, in their order (selectable-fields.ts). */
  fields: readonly string[];
}

/** Objects read back from a parsed-snapshot cache entry, by row: who each is, and where its text's UTF-8 bytes are. */
export interface EntryRows {
  readonly source: Buffer;
  readonly names: readonly string[];
  readonly namespaces: readonly (string | null)[];
  readonly kinds: readonly (string | null)[];
  readonly apiVersions: readonly (string | null)[];
  readonly versions: readonly (string | null)[];
  /** Where each text starts in `source`. */
  readonly starts: Float64Array;
  /** How long each text is in bytes. */
  readonly lengths: readonly number[];
}

/**
 * The columns of one resource's run of objects in a cache entry: its labels, then each selectable field's values (in
 * the order of selectable-fields.ts), one value per object of the run. Each is parsed when first read; selectors read
 * them for every object of a resource, so the parsed ones are at hand directly.
 */
export interface RunColumns {
  readonly fieldCount: number;
  readonly parsed: readonly (readonly unknown[] | undefined)[];
  /** Column `c` (0 for the labels), parsed now. */
  parse(c: number): readonly unknown[];
}

const NO_FIELDS: readonly string[] = [];
const COMMA = 0x2c;

function headOf(object: KubeObject): Head {
  const info = object.kind ? resourceForKind(object.kind) : undefined;
  const { metadata } = object;
  return {
    apiVersion: object.apiVersion ?? undefined,
    kind: object.kind ?? undefined,
    name: metadata.name,
    namespace: metadata.namespace ?? undefined,
    resourceVersion: metadata.resourceVersion != null ? String(metadata.resourceVersion) : undefined,
    labels: metadata.labels ?? undefined,
    fields: info ? selectableValues(info.plural, object) : NO_FIELDS,
  };
}

/**
 * An object as a snapshot keeps it for serving: its head (what an API server needs to find, order and select it:
 * identity, labels and the values of the fields a field selector may name), its JSON text, and the object itself,
 * parsed from the text only when something reads it whole. A list is answered from heads and texts alone, so a
 * snapshot read back from the parsed-snapshot cache is thousands of texts the server never parses: only the client
 * that reads them does. Read back from the cache, the text is kept as a span of the entry's own bytes, which a list
 * answer sends as they are: it is neither decoded nor encoded again, and objects whose spans follow each other in
 * the entry (it lays them out in the order lists are served) go out as one slice of it. Read back so, it is no more
 * than its row among the entry's objects (`EntryRows`) and among its resource's columns (`RunColumns`): its labels and
 * field values stay in the entry until a selector asks about them, and a list of one resource in one namespace needs
 * none.
 *
 * Like object-text.ts, this holds only objects that are never changed in place.
 */
export class StoredObject {
  /** Who it is, its labels and field values; undefined when they are a row of `#rows` instead. */
  #head: Head | undefined;
  #rows: EntryRows | undefined;
  #row: number;
  /** For an object read back: its run's columns, and its row among them. */
  #columns: RunColumns | undefined;
  #runRow: number;
  #object: KubeObject | undefined;
  #text: string | undefined;
  #bytes: Buffer | undefined;
  /** Where the text's UTF-8 bytes sit in a buffer shared with other objects (a cache entry): sliced when asked. */
  #source: Buffer | undefined;
  #start: number;
  #end: number;

  private constructor(
    head: Head | undefined,
    rows: EntryRows | undefined,
    row: number,
    object: KubeObject | undefined,
    text: string | undefined,
  ) {
    this.#head = head;
    this.#rows = rows;
    this.#row = row;
    this.#columns = undefined;
    this.#runRow = 0;
    this.#object = object;
    this.#text = text;
    this.#bytes = undefined;
    if (rows === undefined) {
      this.#source = undefined;
      this.#start = 0;
      this.#end = 0;
    } else {
      this.#source = rows.source;
      this.#start = rows.starts[row] as number;
      this.#end = this.#start + (rows.lengths[row] as number);
    }
  }

  static of(object: KubeObject): StoredObject {
    return new StoredObject(headOf(object), undefined, 0, object, recordedObjectText(object));
  }

  /**
   * The object kept as its head and text only, which is all that serving it needs: the tree it was parsed into can
   * go at once, and is parsed again from the text only if something reads the object whole. A snapshot of thousands
   * of objects read so never holds all their trees at one time.
   */
  static detached(object: KubeObject): StoredObject {
    const text = recordedObjectText(object) ?? JSON.stringify(object);
    return new StoredObject(headOf(object), undefined, 0, undefined, text);
  }

  /** The object at `row` of objects read back from a cache entry, at `runRow` of its run's `columns`. */
  static inEntry(rows: EntryRows, row: number, columns: RunColumns, runRow: number): StoredObject {
    const stored = new StoredObject(undefined, rows, row, undefined, undefined);
    stored.#columns = columns;
    stored.#runRow = runRow;
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

  /**
   * The buffer the text's bytes are a span of (from `spanStart` to `spanEnd`); undefined when they are its own. Read
   * for every object of every list answer: three plain values, rather than an array made each time.
   */
  get spanSource(): Buffer | undefined {
    return this.#source;
  }

  get spanStart(): number {
    return this.#start;
  }

  get spanEnd(): number {
    return this.#end;
  }

  /**
   * Where its text's span ends, when the span follows `end` in `source` after one comma, so that a list answer can
   * carry on one slice of the buffer through it; -1 when it does not. One call per object of a list, where reading
   * its span's three values would be three.
   */
  endAfter(source: Buffer, end: number): number {
    return this.#source === source && this.#start === end + 1 && source[end] === COMMA ? this.#end : -1;
  }

  /** An identity value of an object read back: its row in that column of the entry's objects. */
  #fromRow(column: 'apiVersions' | 'kinds' | 'namespaces' | 'versions'): string | undefined {
    return (this.#rows as EntryRows)[column][this.#row] ?? undefined;
  }

  get apiVersion(): string | undefined {
    return this.#head !== undefined ? this.#head.apiVersion : this.#fromRow('apiVersions');
  }

  get kind(): string | undefined {
    return this.#head !== undefined ? this.#head.kind : this.#fromRow('kinds');
  }

  get name(): string {
    return this.#head !== undefined ? this.#head.name : ((this.#rows as EntryRows).names[this.#row] as string);
  }

  get namespace(): string | undefined {
    return this.#head !== undefined ? this.#head.namespace : this.#fromRow('namespaces');
  }

  get resourceVersion(): string | undefined {
    return this.#head !== undefined ? this.#head.resourceVersion : this.#fromRow('versions');
  }

  get labels(): Readonly<Record<string, string>> | undefined {
    const head = this.#head;
    if (head !== undefined) return head.labels;
    const columns = this.#columns as RunColumns;
    const labels = (columns.parsed[0] ?? columns.parse(0))[this.#runRow];
    return (labels ?? undefined) as Readonly<Record<string, string>> | undefined;
  }

  /** The values of its resource's selectable fields, in their order (selectable-fields.ts). */
  get fields(): readonly string[] {
    const head = this.#head;
    if (head !== undefined) return head.fields;
    const { fieldCount } = this.#columns as RunColumns;
    return Array.from({ length: fieldCount }, (_, position) => this.field(position));
  }

  /** The value of the selectable field at `position` among its resource's (selectable-fields.ts); '' for none. */
  field(position: number): string {
    const head = this.#head;
    if (head !== undefined) return head.fields[position] ?? '';
    const columns = this.#columns as RunColumns;
    if (position >= columns.fieldCount) return '';
    return (columns.parsed[position + 1] ?? columns.parse(position + 1))[this.#runRow] as string;
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
