// Short timings for the webhook's outbound work, so retries and budgets fit in a test, and a settable clock for
// signatures with a fixed Date (test vectors).
import { Global, Module, type DynamicModule } from '@nestjs/common';
import {
  DEVICE_WEBHOOK_OPTIONS,
  type DeviceWebhookOptions,
} from '../../src/device-webhook/device-webhook.options.js';

export const testClock: { fixed: Date | undefined } = { fixed: undefined };

export const TEST_WEBHOOK_OPTIONS: Partial<DeviceWebhookOptions> = {
  replyBudgetMs: 400,
  attemptTimeoutMs: 3_000,
  retryDelaysMs: [50, 100, 150],
  keyFetchTimeoutMs: 1_000,
  confirmationTimeoutMs: 1_000,
  now: () => testClock.fixed ?? new Date(),
};

@Global()
@Module({})
class WebhookTestOptionsModule {}

export function webhookTestOptions(overrides: Partial<DeviceWebhookOptions> = {}): DynamicModule {
  return {
    module: WebhookTestOptionsModule,
    providers: [{ provide: DEVICE_WEBHOOK_OPTIONS, useValue: { ...TEST_WEBHOOK_OPTIONS, ...overrides } }],
    exports: [DEVICE_WEBHOOK_OPTIONS],
  };
}
