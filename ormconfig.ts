// The TypeORM CLI's data source (npm run typeorm -- migration:generate migrations/Name). The same definition the
// app and the maintenance CLI use; configuration comes from the environment (DATABASE_URL).
import 'reflect-metadata';
// The area modules register their entities when imported (src/database/entity-registry.ts).
import './src/app.module.js';
import { loadConfig } from './src/config/config.js';
import { createDataSource } from './src/database/data-source.js';

export const dataSource = createDataSource(loadConfig());
