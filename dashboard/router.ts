import { useEffect, useState } from 'preact/hooks'

// Routing by the address bar's path under /dashboard (the server answers the page for any of
// them), with history.pushState; links stay real links (open in a new tab, copy the address).

const listeners = new Set<() => void>()

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to)
  else history.pushState(null, '', to)
  for (const l of listeners) l()
  if (!replace) window.scrollTo(0, 0)
}

addEventListener('popstate', () => {
  for (const l of listeners) l()
})

/** The current path and query; re-renders on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const l = () => setTick((t) => t + 1)
    listeners.add(l)
    return () => void listeners.delete(l)
  }, [])
  return { path: location.pathname.replace(/\/+$/, '') || '/', query: new URLSearchParams(location.search) }
}

/** Matches `/dashboard/t/:tenant/endpoints/:id` against a path: the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/')
  const s = path.split('/')
  if (p.length !== s.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) params[p[i]!.slice(1)] = decodeURIComponent(s[i]!)
    else if (p[i] !== s[i]) return null
  }
  return params
}

/** A click on an in-app link navigates without reloading (modified clicks keep the browser's behaviour). */
export function onLinkClick(e: MouseEvent): void {
  const a = (e.target as Element).closest('a')
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.target) return
  if (a.getAttribute('href')?.startsWith('#')) return // in-page (the skip link): the browser moves the focus
  const url = new URL(a.href, location.href)
  if (url.origin !== location.origin || !url.pathname.startsWith('/dashboard')) return
  e.preventDefault()
  navigate(url.pathname + url.search)
}
