import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength } from 'class-validator';
import { OptionalNestedList } from './nested.js';

// The service carries these identity fields through without reading them; the bounds are generous ones it enforces
// so that no request string or list is unbounded (docs/security.md "Bounded work").
export const MAX_IDENTITY_LENGTH = 256;
export const MAX_CLAIM_VALUE_LENGTH = 1024;
export const MAX_IDENTITY_ITEMS = 100;

export class ClaimDto {
  @ApiPropertyOptional({ example: 'role', nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_IDENTITY_LENGTH)
  Type?: string | null;

  @ApiPropertyOptional({ example: 'operator', nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_CLAIM_VALUE_LENGTH)
  Value?: string | null;
}

/** The caller's identity as the mail and migration operations carry it in the body (interface: Context). */
export class ContextDto {
  @ApiPropertyOptional({ example: '5f0c7f4e-1c1a-4a55-9a57-2f0a4c1f9a11', nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  CorrelationId?: string | null;

  @ApiPropertyOptional({ example: 'u-1842', nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_IDENTITY_LENGTH)
  UserId?: string | null;

  @ApiPropertyOptional({ example: 'p-77', nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_IDENTITY_LENGTH)
  PlatformUserId?: string | null;

  @ApiPropertyOptional({
    example: 'contoso.example',
    nullable: true,
    description: 'The tenant; absent means "default".',
  })
  @IsOptional()
  @IsString()
  @MaxLength(253)
  Domain?: string | null;

  @ApiPropertyOptional({ type: [ClaimDto], nullable: true })
  @OptionalNestedList(() => ClaimDto)
  @ArrayMaxSize(MAX_IDENTITY_ITEMS)
  Claims?: ClaimDto[] | null;

  @ApiPropertyOptional({ type: [String], nullable: true, example: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_IDENTITY_ITEMS)
  @IsString({ each: true })
  @MaxLength(MAX_IDENTITY_LENGTH, { each: true })
  SecondaryIdentities?: string[] | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: null })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_IDENTITY_LENGTH)
  ImpersonationId?: string | null;
}

export const DEFAULT_TENANT = 'default';

export function tenantOf(context: ContextDto | null | undefined): string {
  const domain = context?.Domain?.trim();
  return domain ? domain.toLowerCase() : DEFAULT_TENANT;
}
