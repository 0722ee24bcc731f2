/**
 * On every answer (CONTRACT §14): nothing may frame it or guess another content type. API answers
 * add `API_CSP` (JSON is never a page to run); the dashboard's pages their own policy.
 */
export const NO_FRAMING = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
} as const

export const API_SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  ...NO_FRAMING,
} as const
