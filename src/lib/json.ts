/**
 * `JSON.parse`, safe from a V8 bug that can change object keys (nodejs/node#63785, open on
 * Node 24 and 26). V8 guesses the next key of an object from the keys objects of the same shape
 * had before; once it has seen a key containing a backslash there (say `x\`, sent as `"x\\"`), a
 * later key written with an escape whose raw text begins with those characters and decodes to as
 * many (`"x\u00e9"`, `"x\n"`, `"x\""`) is read as that earlier key. A key written without an
 * escape is never misread, and neither is a value (docs/decisions/0031-json-keys.md).
 *
 * So a text without a backslash, or whose keys have none, is parsed as it is. Otherwise each key
 * written with an escape is replaced by a plain placeholder, the text parsed, and the placeholders
 * given back their keys, in place: same values, same key order, `__proto__` an own property, a
 * repeated key's last value, as `JSON.parse` gives when it is right.
 */
export function parseJson(text: string): unknown {
  if (text.indexOf('\\') === -1) return JSON.parse(text)
  const value: unknown = JSON.parse(text) // what is not JSON fails here, with JSON.parse's own message
  const keys = _escapedKeys(text)
  return keys.length === 0 ? value : _parseRenamed(text, keys)
}

/** Every string of a JSON text, from its opening quote (outside strings, a quote can only open one). */
const STRING = /"[^"\\]*(?:\\.[^"\\]*)*"/g

/** Where each key written with an escape starts and ends (its quotes included). */
function _escapedKeys(text: string): number[] {
  const spans: number[] = []
  STRING.lastIndex = 0
  for (let m = STRING.exec(text); m !== null; m = STRING.exec(text)) {
    if (m[0].indexOf('\\') === -1) continue
    let at = STRING.lastIndex
    for (let c = text.charCodeAt(at); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++at));
    if (text.charCodeAt(at) === 0x3a) spans.push(m.index, STRING.lastIndex) // followed by ':' — a key
  }
  return spans
}

function _parseRenamed(text: string, spans: number[]): unknown {
  // A prefix the text does not contain: no key left in it can then equal a placeholder.
  let prefix = '#k:'
  for (let i = 0; text.includes(prefix); i++) prefix = `#k${i}:`
  const names: string[] = []
  const index = new Map<string, number>()
  let renamed = ''
  let from = 0
  for (let i = 0; i < spans.length; i += 2) {
    const name = JSON.parse(text.slice(spans[i], spans[i + 1])) as string // a lone string: not a key, read right
    let n = index.get(name)
    if (n === undefined) index.set(name, (n = names.push(name) - 1))
    renamed += `${text.slice(from, spans[i])}"${prefix}${n}"`
    from = spans[i + 1]!
  }
  const root: unknown = JSON.parse(renamed + text.slice(from))
  return _restore(root, prefix, names)
}

/** Gives the placeholders back their names, without recursion (the body may nest deep before its depth is checked). */
function _restore(root: unknown, prefix: string, names: string[]): unknown {
  type Holder = Record<string | number, unknown>
  const top: Holder = { value: root }
  const holders: Holder[] = [top]
  const slots: (string | number)[] = ['value']
  while (holders.length > 0) {
    const holder = holders.pop()!
    const slot = slots.pop()!
    const value = holder[slot]
    if (value === null || typeof value !== 'object') continue
    let object = value as Holder
    let keys = Object.keys(object)
    if (!Array.isArray(value) && keys.some((k) => k.startsWith(prefix))) {
      const copy: Holder = {}
      for (const k of keys) {
        const name = k.startsWith(prefix) ? names[Number(k.slice(prefix.length))]! : k
        // Assigning `__proto__` would set the prototype; JSON.parse makes it an own property.
        if (name === '__proto__') Object.defineProperty(copy, name, { value: object[k], writable: true, enumerable: true, configurable: true })
        else copy[name] = object[k]
      }
      holder[slot] = object = copy
      keys = Object.keys(copy)
    }
    for (const k of keys) holders.push(object), slots.push(k)
  }
  return top.value
}

/**
 * A string or null as `JSON.stringify` writes it: for records rendered straight from their rows
 * (each module's `…Json(row)`, equal to `JSON.stringify(to…(row))`; test/unit/record-json.test.ts).
 */
export function jsonString(s: string | null | undefined): string {
  return s === null || s === undefined ? 'null' : JSON.stringify(s)
}
