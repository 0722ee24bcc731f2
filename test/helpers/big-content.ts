/** A content record of about 550 KB of JSON: the largest `body` (100,000 three-byte characters) and a `data` just under 256 KB. */
export function bigContent(i: number): Record<string, unknown> {
  return {
    slug: `big-${i}`,
    title: `Big record ${i}`,
    body: '€'.repeat(100_000),
    data: { text: 'x'.repeat(255 * 1024), i },
    status: 'published',
  }
}
