import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * Node (V8) flags every travelops process runs with: `./travelops` passes them to node, the
 * executable carries them in its SEA configuration (`execArgv`), the benchmark and the memory
 * test start `serve` with them. `npx travelops` cannot (npm starts node): docs/operator.md, "Stopping a server".
 *
 * --max-semi-space-size=16: on a machine with much memory V8 lets the young generation grow to
 * 2 × 64 MB under a burst of requests and keeps it committed afterwards (measured: new space
 * 128 MB and RSS +80 MB after 20 k requests, heap in use unchanged at 28 MB). 16 MB semi-spaces
 * keep it at 32 MB, at no measurable CPU cost per request.
 *
 * --max-semi-space-size=8: 8 MB semi-spaces halve the
 * young generation again.
 *
 * --no-maglev: V8's
 * mid-tier compiler compiles on a worker thread, whose glibc arena kept 10–15 MB after the load
 * phases. Without it serve's peak RSS over reads, POST and the delivery loop fell from 160–163 to
 * 146–149 MB, and CPU per request did not rise (GET 139–149 µs against 139–150, POST 366–375
 * against 380–389, the delivery loop 128–129 against 135–144): the hot paths reach TurboFan either
 * way, and Maglev's compiling was work too. It has to be given at start: set at run time once serve
 * listened, POST cost 494–612 µs. Any V8 flag that changes code makes V8 reject Node's own code
 * cache (25–40 ms more to start); the executable's code cache of the bundle, made under these
 * flags (scripts/package.ts), more than pays it back. (Maglev kept, compiling on the main
 * thread, started 36 ms sooner but cost POST while delivering 19 % and GET 10 % more CPU; every
 * Maglev flag is in V8's flag hash.)
 *
 * --no-concurrent-recompilation: the
 * same for the optimising compiler, which otherwise compiles on V8's worker threads into their
 * glibc arenas; they kept 4–6 MB after the POST phases (peak RSS over reads and POST 143–144
 * against 147–153 MB in alternated runs). The compiling is the same work on the main thread, done
 * while the hot paths warm up; CPU per request did not move beyond the noise (POST 414 against
 * 406 µs, POST while delivering 719 against 759 µs, medians of four pairs).
 *
 * --liftoff-only: the delivery
 * engine's HTTP client, undici, parses answers with llhttp compiled to WebAssembly. V8 runs it on
 * Liftoff, its baseline compiler, and once it is hot compiles its parser again with TurboFan, on a
 * worker thread, whose compiler took ~14 MB of scratch memory at once and left part of it in that
 * thread's glibc arena: serve's RSS rose 122 → 145 MB within 40 ms of its first busy delivery,
 * and that was the peak of the whole benchmark. Liftoff's code parses an answer ~0.5 µs slower
 * (medians 17.3 against 17.7 µs of CPU per send; the delivery loop 74.8 against 78.1 µs per
 * delivery, medians of three runs, within its noise), and serve's peak fell 141–145 → 128–131 MB
 * (a full run: 146 → 132 MB on SQLite, 146 → 127 MB on PostgreSQL).
 * (Node's own fetch() carries the same parser; nothing else travelops runs hot is WebAssembly.)
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--no-maglev', '--no-concurrent-recompilation', '--liftoff-only']

/**
 * V8 flags `serve` sets on itself once it listens (applyServeV8Flags(), from startServer()).
 *
 * --heap-growing-percent=25: under load V8 let the old generation
 * grow to 3× what was alive (86–97 MB of old space for 30 MB of live objects after the GET
 * phases) before collecting it, and the pages stayed resident: serve's peak RSS over the
 * benchmark was 250–300 MB. Growing the limit by 25 % of what survives each full collection
 * keeps old space at 26–31 MB (peak 180 MB). Given at start it also made V8 collect over and over
 * while the 3.4 MB bundle loaded: 35 ms more to serve's first answer (220–226 against 186–194
 * ms, 2026-11-25) and to every CLI command; V8 reads it at each collection, so set once serve
 * listens it keeps the memory and costs the start nothing.
 */
export const SERVE_V8_FLAGS: readonly string[] = ['--heap-growing-percent=25']

let _applied = false

/** Once per process (tests start many servers in one). */
export function applyServeV8Flags(): void {
  if (_applied) return
  _applied = true
  for (const flag of SERVE_V8_FLAGS) setFlagsFromString(flag)
  // V8 applies the growing rule when it next collects the old generation, whose first limit
  // was set without it; one full collection half a second after listening (a few ms, before
  // any load has built up) sets it from what is alive now, as the flag given at start did.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  setTimeout(gc, 500).unref()
}
