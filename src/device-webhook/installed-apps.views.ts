// Entity → operator view. Tokens are deliberately absent: only whether a refresh token exists is shown.
import type { InstalledAppView, ReceivedEventView } from './dto/installed-apps.dto.js';
import type { WebhookDeviceEvent } from './entities/webhook-device-event.entity.js';
import type { WebhookInstalledApp } from './entities/webhook-installed-app.entity.js';

export function installedAppView(row: WebhookInstalledApp): InstalledAppView {
  return {
    InstalledAppId: row.installedAppId,
    Domain: row.domain,
    AppId: row.appId,
    LocationId: row.locationId,
    Config: row.config,
    Permissions: row.permissions,
    HasRefreshToken: row.refreshToken !== null,
    AuthTokenExpiresAt: row.authTokenExpiresAt?.toISOString() ?? null,
    InstalledAt: row.installedAt.toISOString(),
    UpdatedAt: row.updatedAt.toISOString(),
  };
}

export function receivedEventView(row: WebhookDeviceEvent): ReceivedEventView {
  return {
    EventId: row.eventId,
    EventType: row.eventType,
    EventTime: row.eventTime,
    ReceivedAt: row.receivedAt.toISOString(),
    DeviceEvent: row.payload.DeviceEvent,
    TimerEvent: row.payload.TimerEvent,
  };
}
