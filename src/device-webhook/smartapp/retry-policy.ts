// When an outbound SmartThings call is tried again (RFC 9110 §15.6 5xx, RFC 6585 §4 429 with §10.2.3
// Retry-After): only answers that say "not now" and transport failures are retried, with growing, jittered
// pauses, so a SmartThings outage is not hammered by every installed app at the same instant.

export type AttemptOutcome =
  | { kind: 'ok' }
  | { kind: 'unauthorized' }
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  | { kind: 'fail'; reason: string };

/** Classifies one HTTP answer (status) or a transport error (status undefined). */
export function classifyAttempt(
  status: number | undefined,
  alsoOk: readonly number[],
  retryAfter?: string | null,
  nowMs = Date.now(),
): AttemptOutcome {
  if (status === undefined) return { kind: 'retry', reason: 'no answer' };
  if ((status >= 200 && status < 300) || alsoOk.includes(status)) return { kind: 'ok' };
  if (status === 401) return { kind: 'unauthorized' };
  if (status === 408 || status === 429 || status >= 500) {
    const after = retryAfterMs(retryAfter, nowMs);
    return after === undefined
      ? { kind: 'retry', reason: `HTTP ${status}` }
      : { kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: after };
  }
  return { kind: 'fail', reason: `HTTP ${status}` };
}

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from now; undefined when absent or unusable. */
export function retryAfterMs(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The pause before retry number `retry` (0-based): the configured step, ±20 % jitter, at least what the server
 * asked for in Retry-After but never more than `maxMs`.
 */
export function backoffDelay(
  steps: readonly number[],
  retry: number,
  options: { retryAfterMs?: number; random?: () => number; maxMs?: number } = {},
): number {
  const step = steps[Math.min(retry, steps.length - 1)] ?? 0;
  const random = options.random ?? Math.random;
  const jittered = step * (0.8 + 0.4 * random());
  const wanted = Math.max(jittered, options.retryAfterMs ?? 0);
  return Math.round(Math.min(wanted, options.maxMs ?? Number.POSITIVE_INFINITY));
}
