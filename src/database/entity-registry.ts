// Each area registers its own entities where its Nest module is defined (`registerEntities` at the top of
// `<area>.module.ts`), so adding or removing an area touches its folder and the module list (src/app.module.ts)
// only. The one DataSource (app, maintenance CLI, TypeORM CLI) takes every registered entity, whichever areas a
// process serves (MODULES): the modules are imported through the module list before any DataSource is made.
import type { EntitySchema } from 'typeorm';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for an entity class
export type EntityTarget = Function | EntitySchema;

const registered = new Set<EntityTarget>();

/** Adds an area's entities to the schema; returns them (e.g. for TypeOrmModule.forFeature). */
export function registerEntities<T extends readonly EntityTarget[]>(entities: T): T {
  for (const entity of entities) registered.add(entity);
  return entities;
}

/** Every registered entity; fails loudly when nothing registered (the area modules were not imported first). */
export function registeredEntities(): EntityTarget[] {
  if (registered.size === 0) {
    throw new Error(
      'No entities are registered: import the area modules (src/app.module.ts) before the DataSource',
    );
  }
  return [...registered];
}
