/**
 * A single record a handler answers already rendered as its JSON text (what `JSON.stringify` of
 * the record gives, byte for byte), so the record is not built as an object only to be
 * serialised: the route's answer is `{"data":` + that text + `}`, and an event's payload takes
 * the same text (events/emit.ts). The record itself is built from its row only if something
 * reads `value` (or serialises this object).
 */
export class Rendered<T> {
  #value: T | undefined

  readonly json: string
  private readonly _row: unknown
  private readonly _map: (row: never) => T

  private constructor(json: string, row: unknown, map: (row: never) => T) {
    this.json = json
    this._row = row
    this._map = map
  }

  /** `json` must be exactly `JSON.stringify(map(row))`. */
  static of<R, T>(json: string, row: R, map: (row: R) => T): Rendered<T> {
    return new Rendered(json, row, map)
  }

  get value(): T {
    return (this.#value ??= (this._map as (row: unknown) => T)(this._row))
  }

  toJSON(): T {
    return this.value
  }
}
