import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { ContextDto } from '../../common/dto/context.dto.js';
import { MigrationRunStatus } from '../../database/migration-run.entity.js';
import { OptionalNested } from '../../common/dto/nested.js';

export class GetMigrationRunsRequest {
  @ApiPropertyOptional({ type: ContextDto, nullable: true })
  @OptionalNested(() => ContextDto)
  Context?: ContextDto | null;

  @ApiPropertyOptional({
    nullable: true,
    example: 'Init1763780000000',
    description: 'A migration name; null for the runs of every migration.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  MigrationId?: string | null;
}

export class MigrationDetailsRequest {
  @ApiPropertyOptional({ type: ContextDto, nullable: true })
  @OptionalNested(() => ContextDto)
  Context?: ContextDto | null;

  @ApiProperty({
    example: 'Init1763780000000',
    description: 'A migration name (all its runs, with details) or the Id of one run.',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  MigrationId!: string;
}

export class MigrationRunDetailsDto {
  @ApiProperty({ enum: ['up', 'down'], example: 'up' }) Direction!: string;
  @ApiProperty({ enum: ['startup', 'cli'], example: 'startup' }) Trigger!: string;
  @ApiProperty({ nullable: true, example: 42, description: 'Milliseconds; null while running.' })
  DurationMs!: number | null;
  @ApiProperty({ example: 'api-7d9f' }) Host!: string;
  @ApiProperty({ example: 4711 }) ProcessId!: number;
  @ApiProperty({ example: '0.1.0' }) AppVersion!: string;
  @ApiProperty({ example: '3f1a…', description: "SHA-256 of the migration's code when it ran." })
  Checksum!: string;
  @ApiProperty({ type: String, nullable: true, example: null }) Error!: string | null;
}

export class MigrationRunDto {
  @ApiProperty({ example: '0b8e6f9e-55f1-4f4e-9d1c-7a2f44f3b0c2' }) Id!: string;
  @ApiProperty({ example: 'Init1763780000000' }) Migration!: string;
  @ApiProperty({ example: 'typeorm:migrations/1763780000000-Init' }) MigrationSource!: string;
  @ApiProperty({ example: '2026-11-22T02:15:31.000Z' }) TimeStamp!: string;
  @ApiProperty({ enum: MigrationRunStatus, example: MigrationRunStatus.Succeeded })
  Status!: MigrationRunStatus;
  @ApiProperty({
    type: MigrationRunDetailsDto,
    nullable: true,
    description: 'null from getMigrationRuns; the run details from details.',
  })
  Data!: MigrationRunDetailsDto | null;
}

export class MigrationRunsResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: [MigrationRunDto], nullable: true }) MigrationRuns!: MigrationRunDto[] | null;
}
