// The device webhook body (interface document "Device webhook body"), as SmartThings sends it. Keys bind
// case-insensitively (PascalCase as documented, camelCase as SmartThings sends). SmartThings payloads carry more
// fields than the interface lists (client, eventTime, valueType, data, …), so unknown properties are ignored at
// every level instead of rejected. Which data object a lifecycle needs is checked by the service.
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { AllowUnknownProperties } from '../../validation/compile-dto.js';
import { OptionalNested } from '../../common/dto/nested.js';
import { SMARTTHINGS_ID } from '../smartapp/smartthings-id.js';

const ID_LENGTH = 100;
const SMARTTHINGS_ID_MESSAGE =
  '$property must be a SmartThings id (letters, digits, ".", "_" and "-", not starting with ".")';
const TOKEN_LENGTH = 8192;

@AllowUnknownProperties()
export class DeviceConfigDto {
  @ApiPropertyOptional({ example: '31192dc9-eb45-4d90-b606-21e9b66d8c2b' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  DeviceId?: string | null;

  @ApiPropertyOptional({ example: 'main' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  ComponentId?: string | null;
}

@AllowUnknownProperties()
export class StringConfigDto {
  @ApiPropertyOptional({ example: '5' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  Value?: string | null;
}

/** DeviceEntry and StringEntry of the interface document share this shape. */
@AllowUnknownProperties()
export class ConfigEntryDto {
  @ApiPropertyOptional({ example: 'DEVICE', description: 'DEVICE or STRING' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  ValueType?: string | null;

  @ApiPropertyOptional({ type: DeviceConfigDto })
  @OptionalNested(() => DeviceConfigDto)
  DeviceConfig?: DeviceConfigDto | null;

  @ApiPropertyOptional({ type: StringConfigDto })
  @OptionalNested(() => StringConfigDto)
  StringConfig?: StringConfigDto | null;
}

@AllowUnknownProperties()
export class ConfigDto {
  @ApiPropertyOptional({ type: [ConfigEntryDto], description: 'The door (contact sensor) to watch.' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => ConfigEntryDto)
  ContactSensor?: ConfigEntryDto[] | null;

  @ApiPropertyOptional({ type: [ConfigEntryDto], description: 'The lights to switch.' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => ConfigEntryDto)
  LightSwitch?: ConfigEntryDto[] | null;

  @ApiPropertyOptional({
    type: [ConfigEntryDto],
    description: 'Minutes after the door closes before the lights go off (StringConfig.Value).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => ConfigEntryDto)
  Minutes?: ConfigEntryDto[] | null;
}

@AllowUnknownProperties()
export class InstalledAppBodyDto {
  @ApiProperty({ example: 'd692699d-e7a6-400d-a0b7-d5be96e7a564' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  InstalledAppId!: string;

  @ApiPropertyOptional({ example: 'e675a3d9-2499-406c-86dc-8a492a886494' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  LocationId?: string | null;

  @ApiPropertyOptional({ type: ConfigDto })
  @OptionalNested(() => ConfigDto)
  Config?: ConfigDto | null;

  @ApiPropertyOptional({ type: [String], example: ['r:devices:31192dc9-eb45-4d90-b606-21e9b66d8c2b'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  Permissions?: string[] | null;
}

@AllowUnknownProperties()
export class PingDataDto {
  @ApiPropertyOptional({ example: '1a904d57-4fab-4b15-a11e-1c4bfe7cb502', description: 'Required for PING.' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  Challenge?: string | null;
}

@AllowUnknownProperties()
export class ConfirmationDataDto {
  @ApiPropertyOptional({ example: 'fd9949ee-a3bf-4069-b4b3-3e9c1c922e29' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  AppId?: string | null;

  @ApiPropertyOptional({ example: 'https://api.smartthings.com/apps/fd99…/confirm-registration?token=…' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  ConfirmationUrl?: string | null;
}

/** The interface's `initialize` of CONFIGURATION (SmartThings sends it in the reply direction; kept for docs). */
export class ConfigurationInitializeDto {
  @ApiPropertyOptional({ example: 'Door lights' }) name?: string;
  @ApiPropertyOptional({ example: 'Turns the lights on when a door opens' }) description?: string;
  @ApiPropertyOptional({ example: 'app' }) id?: string;
  @ApiPropertyOptional({ type: [String], example: ['r:devices:*'] }) permissions?: string[];
  @ApiPropertyOptional({ example: '1' }) firstPageId?: string;
}

export class SettingDefinitionDto {
  @ApiPropertyOptional({ example: 'contactSensor' }) Id?: string;
  @ApiPropertyOptional({ example: 'Which door?' }) Name?: string;
  @ApiPropertyOptional({ example: 'Tap to set' }) Description?: string;
  @ApiPropertyOptional({ example: 'DEVICE' }) Type?: string;
  @ApiPropertyOptional({ example: true }) Required?: boolean;
  @ApiPropertyOptional({ example: false }) Multiple?: boolean;
  @ApiPropertyOptional({ type: [String], example: ['contactSensor'] }) Capabilities?: string[];
  @ApiPropertyOptional({ type: [String], example: ['r'] }) Permissions?: string[];
}

export class ConfigurationSectionDto {
  @ApiPropertyOptional({ example: 'Door' }) Name?: string;
  @ApiPropertyOptional({ type: [SettingDefinitionDto] }) Settings?: SettingDefinitionDto[];
}

@AllowUnknownProperties()
export class ConfigurationDataDto {
  @ApiPropertyOptional({ example: '8a0dcdc9-1ab4-4c60-9de7-cb78f59a1121' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  InstalledAppId?: string | null;

  @ApiPropertyOptional({ example: 'INITIALIZE', description: 'INITIALIZE or PAGE' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  Phase?: string | null;

  @ApiPropertyOptional({ example: '1' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  PageId?: string | null;

  @ApiPropertyOptional({ example: '' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  PreviousPageId?: string | null;

  @ApiPropertyOptional({ type: ConfigDto })
  @OptionalNested(() => ConfigDto)
  Config?: ConfigDto | null;

  @ApiPropertyOptional({
    type: ConfigurationInitializeDto,
    description: 'Listed by the interface; not read.',
  })
  @Allow()
  initialize?: unknown;

  @ApiPropertyOptional({ type: [ConfigurationSectionDto], description: 'Listed by the interface; not read.' })
  @Allow()
  Sections?: unknown;
}

@AllowUnknownProperties()
export class InstallDataDto {
  @ApiPropertyOptional({ example: '<AUTH_TOKEN>', description: 'Secret: stored encrypted, never returned.' })
  @IsOptional()
  @IsString()
  @MaxLength(TOKEN_LENGTH)
  AuthToken?: string | null;

  @ApiPropertyOptional({
    example: '<REFRESH_TOKEN>',
    description: 'Secret: stored encrypted, never returned.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(TOKEN_LENGTH)
  RefreshToken?: string | null;

  @ApiPropertyOptional({ type: InstalledAppBodyDto })
  @OptionalNested(() => InstalledAppBodyDto)
  InstalledApp?: InstalledAppBodyDto | null;
}

@AllowUnknownProperties()
export class UpdateDataDto extends InstallDataDto {
  @ApiPropertyOptional({ type: ConfigDto })
  @OptionalNested(() => ConfigDto)
  PreviousConfig?: ConfigDto | null;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  PreviousPermissions?: string[] | null;
}

@AllowUnknownProperties()
export class DeviceEventDto {
  @ApiPropertyOptional({ example: 'contactSensor_0' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  SubscriptionName?: string | null;

  @ApiPropertyOptional({ example: '736e3903-001c-4d40-b408-ff40d162a06b' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  EventId?: string | null;

  @ApiPropertyOptional({ example: 'e675a3d9-2499-406c-86dc-8a492a886494' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  LocationId?: string | null;

  @ApiPropertyOptional({ example: '31192dc9-eb45-4d90-b606-21e9b66d8c2b' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  DeviceId?: string | null;

  @ApiPropertyOptional({ example: 'main' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  ComponentId?: string | null;

  @ApiPropertyOptional({ example: 'contactSensor' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  Capability?: string | null;

  @ApiPropertyOptional({ example: 'contact' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  Attribute?: string | null;

  @ApiPropertyOptional({
    example: 'open',
    description: 'A string for contact sensors; SmartThings sends numbers or objects for other capabilities.',
  })
  @IsOptional()
  @Allow()
  Value?: unknown;

  @ApiPropertyOptional({ example: true })
  @IsOptional()
  @IsBoolean()
  StateChange?: boolean | null;
}

@AllowUnknownProperties()
export class TimerEventDto {
  @ApiPropertyOptional({ example: 'c8d0cf5a-2b2f-4d2b-9c5a-6f8f2a1c1d9e' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  EventId?: string | null;

  @ApiPropertyOptional({ example: 'lightsOff' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  Name?: string | null;

  @ApiPropertyOptional({ example: 'ONCE' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  Type?: string | null;

  @ApiPropertyOptional({ example: '2026-11-22T10:05:00Z' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  Time?: string | null;
}

@AllowUnknownProperties()
export class EventDto {
  @ApiProperty({ example: 'DEVICE_EVENT', description: 'DEVICE_EVENT and TIMER_EVENT are acted on.' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  EventType!: string;

  @ApiPropertyOptional({ example: '2026-11-22T10:00:00Z' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  EventTime?: string | null;

  @ApiPropertyOptional({ type: DeviceEventDto })
  @OptionalNested(() => DeviceEventDto)
  DeviceEvent?: DeviceEventDto | null;

  @ApiPropertyOptional({ type: TimerEventDto })
  @OptionalNested(() => TimerEventDto)
  TimerEvent?: TimerEventDto | null;
}

@AllowUnknownProperties()
export class EventDataDto {
  @ApiPropertyOptional({ example: '<AUTH_TOKEN>', description: 'Secret: stored encrypted, never returned.' })
  @IsOptional()
  @IsString()
  @MaxLength(TOKEN_LENGTH)
  AuthToken?: string | null;

  @ApiPropertyOptional({ type: InstalledAppBodyDto })
  @OptionalNested(() => InstalledAppBodyDto)
  InstalledApp?: InstalledAppBodyDto | null;

  @ApiPropertyOptional({ type: [EventDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => EventDto)
  Events?: EventDto[] | null;
}

@AllowUnknownProperties()
export class UninstallDataDto {
  @ApiPropertyOptional({ type: InstalledAppBodyDto })
  @OptionalNested(() => InstalledAppBodyDto)
  InstalledApp?: InstalledAppBodyDto | null;
}

@AllowUnknownProperties()
export class OAuthCallbackDataDto {
  @ApiPropertyOptional({ example: 'd692699d-e7a6-400d-a0b7-d5be96e7a564' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  @Matches(SMARTTHINGS_ID, { message: SMARTTHINGS_ID_MESSAGE })
  InstalledAppId?: string | null;

  @ApiPropertyOptional({ example: '/oauth/callback?code=…' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  UrlPath?: string | null;
}

@AllowUnknownProperties()
export class DeviceWebhookBody {
  @ApiPropertyOptional({
    example: 'EVENT',
    description:
      'PING, CONFIRMATION, CONFIGURATION, INSTALL, UPDATE, EVENT, OAUTH_CALLBACK or UNINSTALL (messageType is accepted too).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  Lifecycle?: string | null;

  @ApiPropertyOptional({
    example: 'CONFIRMATION',
    description: 'Read as Lifecycle when Lifecycle is absent.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  MessageType?: string | null;

  @ApiPropertyOptional({ example: 'b328f242-c602-4204-8d73-33c48ae180af' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  ExecutionId?: string | null;

  @ApiPropertyOptional({ example: 'fd9949ee-a3bf-4069-b4b3-3e9c1c922e29' })
  @IsOptional()
  @IsString()
  @MaxLength(ID_LENGTH)
  AppId?: string | null;

  @ApiPropertyOptional({ example: 'en' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  Locale?: string | null;

  @ApiPropertyOptional({ example: '1.0.0' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  Version?: string | null;

  @ApiPropertyOptional({ description: 'Type unspecified; ignored.', example: {} })
  @IsOptional()
  @Allow()
  Settings?: unknown;

  @ApiPropertyOptional({ type: PingDataDto })
  @OptionalNested(() => PingDataDto)
  PingData?: PingDataDto | null;

  @ApiPropertyOptional({ type: ConfirmationDataDto })
  @OptionalNested(() => ConfirmationDataDto)
  ConfirmationData?: ConfirmationDataDto | null;

  @ApiPropertyOptional({ type: ConfigurationDataDto })
  @OptionalNested(() => ConfigurationDataDto)
  ConfigurationData?: ConfigurationDataDto | null;

  @ApiPropertyOptional({ type: InstallDataDto })
  @OptionalNested(() => InstallDataDto)
  InstallData?: InstallDataDto | null;

  @ApiPropertyOptional({ type: UpdateDataDto })
  @OptionalNested(() => UpdateDataDto)
  UpdateData?: UpdateDataDto | null;

  @ApiPropertyOptional({ type: EventDataDto })
  @OptionalNested(() => EventDataDto)
  EventData?: EventDataDto | null;

  @ApiPropertyOptional({ type: UninstallDataDto })
  @OptionalNested(() => UninstallDataDto)
  UninstallData?: UninstallDataDto | null;

  @ApiPropertyOptional({
    type: OAuthCallbackDataDto,
    description: 'Bound from oAuthCallbackData or oauthCallbackData.',
  })
  @OptionalNested(() => OAuthCallbackDataDto)
  OAuthCallbackData?: OAuthCallbackDataDto | null;
}
