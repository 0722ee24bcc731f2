// autocannon ships no types; this is the part of its API that scripts/bench/load.ts uses.
declare module 'autocannon' {
  interface Histogram { average: number; p50: number; p99: number; total?: number }
  interface Result {
    '2xx': number
    non2xx: number
    errors: number
    timeouts: number
    duration: number
    latency: Histogram
    requests: Histogram
    statusCodeStats?: Record<string, { count: number | string }>
  }
  interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    /** ms between samples; the run's end is noticed at a sample (default 1000) */
    sampleInt?: number
    requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string }[]
  }
  export default function autocannon(opts: Options): Promise<Result>
}
