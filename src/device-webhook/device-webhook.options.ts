// Timings of the webhook. The defaults keep every lifecycle reply well inside SmartThings' 10-second limit:
//   signature key fetch (only on a cache miss) ≤ keyFetchTimeoutMs (3 s)
// + database work (milliseconds)
// + waiting for the automation's SmartThings calls ≤ replyBudgetMs (2.5 s); what is not done by then continues
//   in the background with retries,
// so the worst case is about 5.5 s. Tests shorten them by providing DEVICE_WEBHOOK_OPTIONS from a global module.

export interface DeviceWebhookOptions {
  /** Longest a lifecycle reply waits for the automation's outbound calls. */
  replyBudgetMs: number;
  /** Time-out of one outbound HTTP attempt. */
  attemptTimeoutMs: number;
  /** Pauses before the 1st, 2nd, … retry of an outbound call (jittered ±20 %); its length is the retry count. */
  retryDelaysMs: readonly number[];
  /** Time-out of fetching a `/pl/…` signing certificate from SMARTTHINGS_KEY_URL. */
  keyFetchTimeoutMs: number;
  /** Time-out of the GET of a CONFIRMATION's confirmationUrl. */
  confirmationTimeoutMs: number;
  /** How long an auth token from a lifecycle is trusted (SmartThings issues them for 5 minutes). */
  authTokenLifetimeMs: number;
  /** The clock the signature's Date header is checked against. */
  now: () => Date;
}

export const DEVICE_WEBHOOK_OPTIONS = Symbol('DEVICE_WEBHOOK_OPTIONS');
/** The merged options the area's providers inject. */
export const RESOLVED_WEBHOOK_OPTIONS = Symbol('RESOLVED_WEBHOOK_OPTIONS');

export const DEFAULT_WEBHOOK_OPTIONS: DeviceWebhookOptions = Object.freeze({
  replyBudgetMs: 2_500,
  attemptTimeoutMs: 4_000,
  retryDelaysMs: Object.freeze([1_000, 5_000, 30_000, 120_000]),
  keyFetchTimeoutMs: 3_000,
  confirmationTimeoutMs: 5_000,
  authTokenLifetimeMs: 5 * 60_000,
  now: () => new Date(),
});

export function resolveWebhookOptions(overrides?: Partial<DeviceWebhookOptions>): DeviceWebhookOptions {
  return { ...DEFAULT_WEBHOOK_OPTIONS, ...overrides };
}
