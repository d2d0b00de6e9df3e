// Security headers, computed once at start: they never vary per request here (no CSP nonces). Two profiles:
// - API responses (JSON, no markup): the OWASP REST Security Cheat Sheet set. The strictest CSP there is, since a
//   JSON answer never needs to load anything; its frame-ancestors 'none' is what X-Frame-Options said for older
//   browsers, and a JSON answer has no links to leak a Referer through. Answers are per key and never cached.
//   Node checks every header of every response (~1 µs each here), so the set is kept to what protects something.
// - Swagger UI under /docs: helmet's defaults, with a CSP that lets the page load its own scripts and styles.
// Sending helmet's HTML-oriented set on every JSON answer cost ~700 bytes a response for nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

export type HeaderSet = Readonly<Record<string, string>>;

export function apiSecurityHeaders(): HeaderSet {
  return {
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

export function docsSecurityHeaders(): HeaderSet {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        styleSrc: ["'self'", "'unsafe-inline'"],
      },
    },
  })({} as IncomingMessage, response as unknown as ServerResponse, () => undefined);
  return headers;
}

/** Swagger UI, its assets and the OpenAPI document (`/docs`, `/docs/…`, `/docs-json`, `/docs-yaml`). */
export function isDocsRoute(url: string): boolean {
  return url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs-');
}
