// Swagger UI at /docs and the OpenAPI document at /docs-json.
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { APP_VERSION } from '../common/app-version.js';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { completeOpenApiDocument } from './document-fixups.js';
import { addTokenRequirements, declareSecuritySchemes } from './security-schemes.js';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const { oidc } = app.get<symbol, AppConfig>(APP_CONFIG);
  const builder = new DocumentBuilder()
    .setTitle('platform-api')
    .setDescription(
      'Schedules, SCIM users, mail, replication diagnostics, a SmartThings webhook and migration runs. ' +
        'Send `Authorization: Bearer <api key>`' +
        (oidc === undefined ? '' : ' or `Authorization: Bearer <access token>` from the OpenID provider') +
        '; paths and request property names match case-insensitively ' +
        '(the interface document writes operation 3 as `/api/v1/scim/users/{id}`, the same route as ' +
        '`/api/v1/scim/Users/{id}` here); ' +
        'errors use the {Succeeded, Message, Code, Errors} envelope.',
    )
    .setVersion(APP_VERSION);
  const config = declareSecuritySchemes(builder, oidc).build();
  // Operation names are given per route (Tag_Operation, as the interface document names them).
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
  const completed = completeOpenApiDocument(document, app);
  addTokenRequirements(completed, app, oidc);
  return completed;
}

export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'platform-api',
  });
}
