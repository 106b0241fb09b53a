import fs from 'node:fs/promises';
import path from 'node:path';
import { protocol } from 'electron';
import { buildContentSecurityPolicy } from '../src/api/contentSecurityPolicy';

// The renderer is served from out/renderer over a privileged `app://console/` scheme rather than
// file://, so it has a real origin and every response carries the console's CSP as a header.

export const APP_SCHEME = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://console`;

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Must run before the app is ready. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
  ]);
}

export function serveRenderer(rendererDir: string): void {
  const csp = buildContentSecurityPolicy();
  const rootDir = path.resolve(rendererDir);
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== 'console') return new Response('not found', { status: 404 });
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = path.resolve(rootDir, `.${path.posix.normalize(rel)}`);
    if (!file.startsWith(rootDir + path.sep)) return new Response('not found', { status: 404 });
    try {
      const body = await fs.readFile(file);
      return new Response(body, {
        headers: {
          'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
          'Content-Security-Policy': csp,
          'X-Content-Type-Options': 'nosniff',
        },
      });
    } catch {
      return new Response('not found', { status: 404 });
    }
  });
}
