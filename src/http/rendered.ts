/**
 * A single record a handler answers already rendered as its JSON text (what `JSON.stringify` of
 * the record gives, byte for byte), so the record is not built as an object only to be
 * serialised: the route's answer is `{"data":` + that text + `}`. The record itself is built
 * from its row only if something reads `value` (or serialises this object).
 */
export class Rendered<R, T> {
  #value: T | undefined
  constructor(readonly json: string, private readonly _row: R, private readonly _map: (row: R) => T) {}

  get value(): T {
    return (this.#value ??= this._map(this._row))
  }

  toJSON(): T {
    return this.value
  }
}
