/** A stored headers column that is not a JSON object of strings sends none (the attempt is still made). Both engines' stores, and the outbox writers' jobs. */
export function storedHeaders(text: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text)
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, string>
  } catch { /* fall through */ }
  return {}
}
