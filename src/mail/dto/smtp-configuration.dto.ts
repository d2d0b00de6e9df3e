import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { ContextDto } from '../../common/dto/context.dto.js';
import { MAX_HOST_LENGTH } from '../smtp/smtp-host.js';
import { INTERNAL_PASSWORD_PLACEHOLDER, PASSWORD_PLACEHOLDER } from '../smtp/smtp-secret-input.js';
import { IsSmtpHost, IsSmtpUsername } from './smtp-validators.js';
import { OptionalNested } from '../../common/dto/nested.js';

export const MAX_BCC = 50;
export const MAX_ADDRESS_LENGTH = 320;
export const MAX_SECRET_LENGTH = 1024;
const INT32_MAX = 2_147_483_647;

/** (tenant, Host, Port, Username): what names one configuration. */
export class SmtpIdentityRequest {
  @ApiPropertyOptional({ type: ContextDto, nullable: true, description: 'Context.Domain is the tenant.' })
  @OptionalNested(() => ContextDto)
  Context?: ContextDto | null;

  @ApiProperty({
    example: 'smtp.example.com',
    description: 'Host name or IP address (compared case-insensitively).',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_HOST_LENGTH)
  @IsSmtpHost()
  Host!: string;

  @ApiProperty({ type: 'integer', example: 587, minimum: 1, maximum: 65535 })
  @IsInt()
  @Min(1)
  @Max(65535)
  Port!: number;

  @ApiPropertyOptional({
    example: 'mailer@example.com',
    nullable: true,
    // Its bound, pattern and the `if AuthRequired then Username` rule come from IsSmtpUsername (jsonSchema).
    description: 'Absent/null/"" = none; required (not empty) when AuthRequired is true. No line breaks.',
  })
  @IsSmtpUsername()
  Username?: string | null;
}

/** Operation 4's body: the SMTP configuration of the interface document, plus AllowInvalidCertificate. */
export class EnsureSmtpConfigurationRequest extends SmtpIdentityRequest {
  @ApiPropertyOptional({
    example: true,
    description: 'TLS: implicit TLS on port 465, mandatory STARTTLS on any other port. false: plain SMTP.',
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  Ssl?: boolean | null;

  @ApiPropertyOptional({
    example: true,
    default: false,
    description: 'Log in (AUTH) with Username and Password; true needs both (a stored password counts).',
  })
  @IsOptional()
  @IsBoolean()
  AuthRequired?: boolean | null;

  @ApiPropertyOptional({
    example: 'correct horse battery staple',
    nullable: true,
    writeOnly: true,
    description: `Secret, stored encrypted, never returned. Absent, null or "${PASSWORD_PLACEHOLDER}" keeps the stored one; "" removes it.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_SECRET_LENGTH)
  Password?: string | null;

  @ApiPropertyOptional({
    example: INTERNAL_PASSWORD_PLACEHOLDER,
    nullable: true,
    writeOnly: true,
    description:
      `Secret kept for the client, stored encrypted, never returned and not used to log in (see docs/mail.md). ` +
      `Absent, null or "${INTERNAL_PASSWORD_PLACEHOLDER}" keeps the stored one; "" removes it.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_SECRET_LENGTH)
  InternalPassword?: string | null;

  @ApiProperty({
    example: 'Contoso Alerts <alerts@contoso.example>',
    description: 'From address (display name allowed).',
  })
  @IsEmail({ allow_display_name: true })
  @MaxLength(MAX_ADDRESS_LENGTH)
  SenderAddress!: string;

  @ApiPropertyOptional({
    type: 'integer',
    example: 0,
    minimum: 0,
    default: 0,
    description: 'Fail-over order, lowest first.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(INT32_MAX)
  Priority?: number | null;

  @ApiPropertyOptional({ example: true, default: true })
  @IsOptional()
  @IsBoolean()
  Enabled?: boolean | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    example: ['archive@contoso.example'],
    description: `Blind copies of every message (envelope only), at most ${MAX_BCC}. null = none.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_BCC)
  @IsEmail({}, { each: true })
  @MaxLength(MAX_ADDRESS_LENGTH, { each: true })
  BCC?: string[] | null;

  @ApiPropertyOptional({
    example: false,
    default: false,
    description:
      'Accept a certificate that does not verify (self-signed, wrong name, expired). For a server you know; ' +
      'not part of the interface document.',
  })
  @IsOptional()
  @IsBoolean()
  AllowInvalidCertificate?: boolean | null;
}

export class ListSmtpConfigurationsQuery {
  @ApiPropertyOptional({
    type: String,
    example: 'contoso.example',
    description: 'The tenant; absent = "default".',
  })
  @IsOptional()
  @IsString()
  @MaxLength(253)
  Domain?: string | null;
}

export class SendTestMessageRequest {
  @ApiPropertyOptional({ type: ContextDto, nullable: true, description: 'Context.Domain is the tenant.' })
  @OptionalNested(() => ContextDto)
  Context?: ContextDto | null;

  @ApiProperty({ example: 'ops@contoso.example' })
  @IsEmail()
  @MaxLength(MAX_ADDRESS_LENGTH)
  To!: string;
}
