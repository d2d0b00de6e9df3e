import fs from 'node:fs';
import path from 'node:path';
import { Command, CommandRunner } from 'nest-commander';
import { loadConfig } from '../config/config.js';
import { createApp } from '../create-app.js';
import { buildOpenApiDocument } from '../openapi/swagger.js';

@Command({
  name: 'openapi:export',
  arguments: '[file]',
  description: 'Write the OpenAPI document (the one served at /docs-json) to a file (default openapi.json)',
})
export class OpenApiExportCommand extends CommandRunner {
  async run([file = 'openapi.json']: string[]): Promise<void> {
    // The document describes routes, so build the HTTP app, on a throw-away in-memory database.
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: 'sqlite::memory:',
      MIGRATIONS_RUN: 'true',
      API_KEYS: 'openapi-export-placeholder-key',
      LOG_LEVEL: 'warn',
    });
    const { app } = await createApp(config);
    try {
      const document = buildOpenApiDocument(app);
      fs.writeFileSync(path.resolve(file), JSON.stringify(document, null, 2) + '\n');
      console.log(`Wrote ${path.resolve(file)} (${Object.keys(document.paths).length} paths).`);
    } finally {
      await app.close();
    }
  }
}
