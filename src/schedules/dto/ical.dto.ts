import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsUUID } from 'class-validator';

/** At most this many schedules in one export (issue 16). */
export const MAX_EXPORT_IDS = 1_000;

export class IcalExportQuery {
  @ApiProperty({
    type: [String],
    example: ['3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
    description: `Schedule ids, comma-separated or repeated; 1 to ${MAX_EXPORT_IDS}`,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_EXPORT_IDS)
  @IsUUID('all', { each: true })
  ids!: string[];
}
