/**
 * A handler's answer that is a stream of Server-Sent Events (GET /v1/events/stream): the route
 * answers 200 with `text/event-stream` and this body, unbuffered, for as long as it lasts.
 */
export class EventStreamBody {
  readonly stream: ReadableStream<Uint8Array>

  constructor(stream: ReadableStream<Uint8Array>) {
    this.stream = stream
  }
}
