// Test-only routes mounted beside the real areas: a failure on purpose (500 envelope), scoped routes, and routes
// that exercise the direct-route handler (http/direct-routes.ts) against Nest's own pipeline.
import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Module,
  Param,
  Post,
  Query,
  Res,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { map, of, type Observable } from 'rxjs';
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
import { PlatformError, PlatformErrorCode } from '../../src/errors/api-error.js';

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

/** Marks the answer, so a test can tell the route went through Nest's pipeline. */
class StampInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    context.switchToHttp().getResponse<FastifyReply>().header('x-probe-stamp', 'nest');
    return next.handle().pipe(map((value: unknown) => ({ intercepted: true, value })));
  }
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

  @Public()
  @Get('intercepted')
  @UseInterceptors(StampInterceptor)
  intercepted(): { ok: boolean } {
    return { ok: true };
  }

  /** Parameters, a header, an Observable answer, the passthrough reply and errors raised late. */
  @Public()
  @Post('shapes/:kind')
  @Header('x-probe-route', 'shapes')
  shapes(
    @Param('kind') kind: string,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): unknown {
    reply.header('x-probe-kind', kind);
    switch (kind) {
      case 'observable':
        return of(1, 2, { kind, query, body });
      case 'promise':
        return Promise.resolve({ kind, query, body });
      case 'rejected':
        return Promise.reject(new PlatformError(PlatformErrorCode.Conflict, `Probe ${kind}`));
      case 'thrown':
        throw new PlatformError(PlatformErrorCode.NotFound, `Probe ${kind}`);
      case 'empty':
        return undefined;
      default:
        return { kind, query, body };
    }
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
