// One Content-Security-Policy for the console renderer, whichever way it is served: as a response
// header by the Electron `app://` protocol handler and by the loopback host. The renderer is a
// bundle of same-origin scripts and one stylesheet; it fetches nothing else. React sets styles
// through the CSSOM, which style-src does not govern, so no 'unsafe-inline' is needed.

export interface CspOptions {
  /** Extra connect-src sources, e.g. the host's own `ws://127.0.0.1:<port>`. */
  connectSrc?: readonly string[];
}

export function buildContentSecurityPolicy(options: CspOptions = {}): string {
  const directives: Record<string, string[]> = {
    'default-src': ["'none'"],
    'script-src': ["'self'"],
    'style-src': ["'self'"],
    'img-src': ["'self'", 'data:', 'blob:'],
    'font-src': ["'self'"],
    'connect-src': ["'self'", ...(options.connectSrc ?? [])],
    'worker-src': ["'self'", 'blob:'],
    'manifest-src': ["'self'"],
    'object-src': ["'none'"],
    'base-uri': ["'none'"],
    'form-action': ["'none'"],
    'frame-src': ["'none'"],
    'frame-ancestors': ["'none'"],
  };
  return Object.entries(directives)
    .map(([k, v]) => `${k} ${v.join(' ')}`)
    .join('; ');
}
