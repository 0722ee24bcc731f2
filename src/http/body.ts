import type { H3Event } from 'h3'
import type { IncomingMessage } from 'node:http'
import { parseJson } from '../lib/json.ts'
import { readStream } from '../lib/read-stream.ts'
import { ApiError, badRequest } from './errors.ts'

export const MAX_BODY_BYTES = 1024 * 1024
/** Objects and arrays nested deeper than this (the body itself is level 1) are refused before anything recurses into them. */
export const MAX_JSON_DEPTH = 100

export interface RawBody {
  /** The parsed JSON, or undefined when the request had no body. */
  value: unknown
  text: string
}

const tooLarge = (headers?: Record<string, string>) => new ApiError(413, 'payload_too_large', `Request body is larger than ${MAX_BODY_BYTES} bytes`, undefined, headers)

/** Reads a JSON request body: 413 past 1 MiB (without buffering more), 415 for another media type, 400 for bad JSON. */
export async function readJsonBody(event: H3Event): Promise<RawBody> {
  const req = event.req
  const declared = req.headers.get('content-length')
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw tooLarge()
  // Under Node (serve), straight from the IncomingMessage: the web stream srvx would otherwise
  // wrap it in costs about a sixth of a POST's CPU (a promise per chunk).
  const node = (event.runtime as { node?: { req?: IncomingMessage } } | undefined)?.node?.req
  const bytes = node ? await _readNode(node) : await _readCapped(req.body)
  if (bytes.length === 0) return { value: undefined, text: '' }
  const type = req.headers.get('content-type')
  if (!_isJson(type)) {
    throw new ApiError(415, 'unsupported_media_type', `Request body must be application/json${type ? `, not ${type.split(';')[0]}` : ''}`)
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw badRequest('Request body is not valid UTF-8')
  }
  let value: unknown
  try {
    value = parseJson(text)
  } catch (err) {
    throw badRequest(`Malformed JSON: ${(err as Error).message}`)
  }
  const problem = _shapeProblem(value)
  if (problem) throw badRequest(problem)
  return { value, text }
}

/** In `u` mode a surrogate pair is one code point; only an unpaired half matches. */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * Nesting deeper than MAX_JSON_DEPTH, or a string (value or key) with a lone surrogate
 * escape such as "\ud800", which no UTF-8 text can hold (SQLite would store U+FFFD, so the
 * record read back would differ from the one answered). Without recursion: a 1 MiB body
 * can nest half a million levels.
 */
function _shapeProblem(root: unknown): string | undefined {
  // Values and their depths on two stacks: nothing allocated per node (it runs on every body).
  const values: unknown[] = [root]
  const depths: number[] = [1]
  while (values.length > 0) {
    const value = values.pop()
    const depth = depths.pop()!
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return _LONE
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth > MAX_JSON_DEPTH) return `JSON nested deeper than ${MAX_JSON_DEPTH} levels`
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        values.push(value[i])
        depths.push(depth + 1)
      }
    } else {
      const o = value as Record<string, unknown>
      for (const k in o) {
        if (LONE_SURROGATE.test(k)) return _LONE
        values.push(o[k])
        depths.push(depth + 1)
      }
    }
  }
  return undefined
}

const _LONE = 'JSON string with a lone surrogate escape (not Unicode text)'

function _isJson(type: string | null): boolean {
  if (!type) return false
  const media = type.split(';')[0]!.trim().toLowerCase()
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'))
}

/** Past the limit, how much more of a body is read (and dropped) so that the 413 can leave the connection usable. */
const DISCARD_BYTES = 4 * MAX_BODY_BYTES

/**
 * The body of a Node request, refused past MAX_BODY_BYTES without keeping more: the rest is
 * read and dropped, and the 413 answered at its end, so the connection stays usable; a body
 * going on past DISCARD_BYTES more is answered at once and the connection closed. A client
 * gone before the end rejects; the app then logs the request as 499.
 */
async function _readNode(req: IncomingMessage): Promise<Uint8Array> {
  let chunks: Buffer[] | null = []
  let size = 0
  const read = await readStream(req, (data) => {
    size += data.length
    if (size <= MAX_BODY_BYTES) chunks!.push(data)
    else chunks = null
    return size <= MAX_BODY_BYTES + DISCARD_BYTES
  }, 'the client closed the connection before the end of the request body')
  if (read === 'stopped') {
    req.resume() // dropped until the connection closes after the answer
    throw tooLarge({ connection: 'close' })
  }
  if (chunks === null) throw tooLarge()
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
}

/** The body from a web stream (a Request that did not come through Node's server, e.g. app.fetch()). */
async function _readCapped(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}
