// Every schema migration, oldest first. A new migration (npm run typeorm -- migration:generate migrations/Name)
// is added here by hand: an explicit list works the same under nest build, ts-node and jest.
import { Init1763780000000 } from './1763780000000-Init.js';

export const MIGRATIONS = [Init1763780000000];
