/**
 * Node (V8) flags every travelops process runs with: `./travelops` passes them to node, the
 * executable carries them in its SEA configuration (`execArgv`), the benchmark and the memory
 * test start `serve` with them. `npx travelops` cannot (npm starts node), see README.
 *
 * --max-semi-space-size=16: on a machine with much memory V8 lets the young generation grow to
 * 2 × 64 MB under a burst of requests and keeps it committed afterwards (measured: new space
 * 128 MB and RSS +80 MB after 20 k requests, heap in use unchanged at 28 MB). 16 MB semi-spaces
 * keep it at 32 MB; BENCHMARKS.md has the CPU cost per request (none measurable).
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16']
