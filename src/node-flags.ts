/**
 * Node (V8) flags every travelops process runs with: `./travelops` passes them to node, the
 * executable carries them in its SEA configuration (`execArgv`), the benchmark and the memory
 * test start `serve` with them. `npx travelops` cannot (npm starts node), see README.
 *
 * --max-semi-space-size=16: on a machine with much memory V8 lets the young generation grow to
 * 2 × 64 MB under a burst of requests and keeps it committed afterwards (measured: new space
 * 128 MB and RSS +80 MB after 20 k requests, heap in use unchanged at 28 MB). 16 MB semi-spaces
 * keep it at 32 MB; BENCHMARKS.md has the CPU cost per request (none measurable).
 *
 * --max-semi-space-size=8 --heap-growing-percent=25 (2026-11-25, BENCHMARKS.md "Peak memory"):
 * under load V8 let the old generation grow to 3× what was alive (86–97 MB of old space for
 * 30 MB of live objects after the GET phases) before collecting it, and the pages stayed
 * resident: serve's peak RSS over the benchmark was 250–300 MB. Growing the limit by 25 % of
 * what survives each full collection keeps old space at 26–31 MB, and 8 MB semi-spaces halve the
 * young generation: peak 180 MB, with CPU per request within the run-to-run spread.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--heap-growing-percent=25']
