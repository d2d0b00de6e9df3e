// Operator views of the webhook's state (admin scope): installed apps per domain and the events each received.
// Tokens are never part of them; HasRefreshToken and AuthTokenExpiresAt tell whether calls can still be made.
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { ConfigDto } from './webhook-body.dto.js';

export class InstalledAppView {
  @ApiProperty({ example: 'd692699d-e7a6-400d-a0b7-d5be96e7a564' }) InstalledAppId!: string;
  @ApiProperty({ example: 'acme' }) Domain!: string;
  @ApiProperty({ nullable: true, example: 'fd9949ee-a3bf-4069-b4b3-3e9c1c922e29' }) AppId!: string | null;
  @ApiProperty({ nullable: true, example: 'e675a3d9-2499-406c-86dc-8a492a886494' }) LocationId!:
    string | null;
  @ApiProperty({ type: ConfigDto }) Config!: ConfigDto;
  @ApiProperty({ type: [String], example: ['r:devices:31192dc9-eb45-4d90-b606-21e9b66d8c2b'] })
  Permissions!: string[];
  @ApiProperty({ example: true, description: 'Whether calls outside a lifecycle can refresh the token.' })
  HasRefreshToken!: boolean;
  @ApiProperty({ nullable: true, example: '2026-11-22T10:05:00.000Z' }) AuthTokenExpiresAt!: string | null;
  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' }) InstalledAt!: string;
  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' }) UpdatedAt!: string;
}

export class InstalledAppsResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: [InstalledAppView] }) InstalledApps!: InstalledAppView[];
}

export class DeviceEventView {
  @ApiProperty({ nullable: true, example: 'contactSensor_0' }) SubscriptionName!: string | null;
  @ApiProperty({ nullable: true, example: '736e3903-001c-4d40-b408-ff40d162a06b' }) EventId!: string | null;
  @ApiProperty({ nullable: true, example: 'e675a3d9-2499-406c-86dc-8a492a886494' }) LocationId!:
    string | null;
  @ApiProperty({ nullable: true, example: '31192dc9-eb45-4d90-b606-21e9b66d8c2b' }) DeviceId!: string | null;
  @ApiProperty({ nullable: true, example: 'main' }) ComponentId!: string | null;
  @ApiProperty({ nullable: true, example: 'contactSensor' }) Capability!: string | null;
  @ApiProperty({ nullable: true, example: 'contact' }) Attribute!: string | null;
  @ApiProperty({ nullable: true, example: 'open', description: 'As SmartThings sent it.' }) Value!: unknown;
  @ApiProperty({ nullable: true, example: true }) StateChange!: boolean | null;
}

export class TimerEventView {
  @ApiProperty({ nullable: true, example: 'c8d0cf5a-2b2f-4d2b-9c5a-6f8f2a1c1d9e' }) EventId!: string | null;
  @ApiProperty({ example: 'lightsOff' }) Name!: string;
  @ApiProperty({ nullable: true, example: 'ONCE' }) Type!: string | null;
  @ApiProperty({ nullable: true, example: '2026-11-22T10:05:00Z' }) Time!: string | null;
}

export class ReceivedEventView {
  @ApiProperty({ example: '736e3903-001c-4d40-b408-ff40d162a06b' }) EventId!: string;
  @ApiProperty({ example: 'DEVICE_EVENT' }) EventType!: string;
  @ApiProperty({ nullable: true, example: '2026-11-22T10:00:00Z' }) EventTime!: string | null;
  @ApiProperty({ example: '2026-11-22T10:00:00.120Z' }) ReceivedAt!: string;
  @ApiProperty({ type: DeviceEventView, nullable: true }) DeviceEvent!: DeviceEventView | null;
  @ApiProperty({ type: TimerEventView, nullable: true }) TimerEvent!: TimerEventView | null;
}

export class DeviceEventsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, default: 1, example: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  PageIndex?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 50, example: 50 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  PageSize?: number;
}

export class DeviceEventsResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ example: 'd692699d-e7a6-400d-a0b7-d5be96e7a564' }) InstalledAppId!: string;
  @ApiProperty({ type: [ReceivedEventView], description: 'Newest first.' }) Events!: ReceivedEventView[];
  @ApiProperty({ example: 1 }) PageIndex!: number;
  @ApiProperty({ example: 50 }) PageSize!: number;
  @ApiProperty({ example: 3 }) TotalCount!: number;
  @ApiProperty({ example: 1 }) TotalPages!: number;
  @ApiProperty({ example: false }) HasPreviousPage!: boolean;
  @ApiProperty({ example: false }) HasNextPage!: boolean;
}
