// Test-only routes mounted beside the real areas: a failure on purpose (500 envelope) and a scoped route.
import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsInt,
  IsNotEmpty,
  IsString,
  IsUUID,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { Public, RequireScope } from '../../src/auth/scopes.js';

class ProbeGroup {
  @IsString()
  @IsNotEmpty()
  Key!: string;

  @IsArray()
  @IsUUID('all', { each: true })
  ScheduleIds!: string[];
}

class ProbeBody {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ProbeGroup)
  Groups!: ProbeGroup[];

  @IsInt()
  @Min(1)
  @Max(10)
  Count!: number;
}

@Controller('probe')
class ProbeController {
  @Public()
  @Get('fail')
  fail(): never {
    throw new Error('database password=hunter2 leaked? Authorization: Bearer sekret-token');
  }

  @Public()
  @Post('slow')
  @HttpCode(200)
  async slow(): Promise<{ ok: boolean }> {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return { ok: true };
  }

  @RequireScope('mail')
  @Get('mail-only')
  mailOnly(): { ok: boolean } {
    return { ok: true };
  }

  /** Declares no rule: admin only. */
  @Post('undeclared')
  @HttpCode(200)
  undeclared(@Body() body: ProbeBody): { ok: boolean; count: number } {
    return { ok: true, count: body.Count };
  }

  @Public()
  @Post('echo')
  @HttpCode(200)
  echo(@Body() body: ProbeBody): ProbeBody {
    return body;
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}

class UncheckableBody {
  @ValidateIf(() => true)
  @IsString()
  Name!: string;
}

@Controller('bad-probe')
class BadProbeController {
  @Public()
  @Post()
  take(@Body() body: UncheckableBody): UncheckableBody {
    return body;
  }
}

/** A route whose DTO uses a decorator the compiler cannot check: the app must refuse to start. */
@Module({ controllers: [BadProbeController] })
export class BadProbeModule {}
