// SQL functions this service registers on every SQLite connection (better-sqlite3 calls back into JavaScript).

/**
 * `scim_lower(text)`: JavaScript's toLowerCase, for the case-insensitive SCIM comparisons on SQLite, whose built-in
 * LOWER() folds ASCII letters only (`Ü` stayed `Ü`), so that both engines fold as PostgreSQL's LOWER() does.
 */
export const SQLITE_UNICODE_LOWER = 'scim_lower';

interface SqliteFunctionHost {
  function(
    name: string,
    options: { deterministic: boolean },
    implementation: (value: unknown) => unknown,
  ): unknown;
}

export function registerSqliteFunctions(db: SqliteFunctionHost): void {
  db.function(SQLITE_UNICODE_LOWER, { deterministic: true }, (value) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  );
}
