import type { Readable } from 'node:stream'

/**
 * Reads a Node stream with its events: no async iterator and no web stream, whose promises per
 * chunk cost a request body a sixth of a POST's CPU and a receiver's answer a tenth of a
 * delivery's. `chunk` sees each chunk
 * and returns `false` to stop reading there: the promise then resolves `'stopped'` and the
 * stream is the caller's to resume or destroy. Resolves `'end'` at the end; rejects on an
 * error, or on a close before the end (`closedEarly` names it). Once settled, a later 'error'
 * is ignored: the caller has its answer, and nothing may throw as an unhandled 'error'.
 */
export function readStream(stream: Readable, chunk: (data: Buffer) => boolean | void, closedEarly: string): Promise<'end' | 'stopped'> {
  if (stream.readableEnded || stream.destroyed) return Promise.reject(stream.errored ?? new Error(closedEarly))
  return new Promise((resolve, reject) => {
    const settle = () => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
      stream.off('close', onClose)
      stream.on('error', _ignore)
    }
    const onData = (data: Buffer) => {
      if (chunk(data) !== false) return
      settle()
      resolve('stopped')
    }
    const onEnd = () => {
      settle()
      resolve('end')
    }
    const onError = (err: Error) => {
      settle()
      reject(err)
    }
    const onClose = () => onError(new Error(closedEarly))
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    stream.on('close', onClose)
  })
}

const _ignore = () => {}
