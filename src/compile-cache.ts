// Node's module compile cache (node:module enableCompileCache, Node 22.1 and later): V8's compiled code of every
// module the process loads is kept on disk, so later starts skip most parsing and compiling (bench/README.md,
// "Cold start"). Node 20 has no such cache: there this does nothing.
import module from 'node:module';

type EnableCompileCache = (cacheDir?: string) => unknown;

/**
 * Enables the cache for every module loaded after this call. The entry points call it first and import the rest
 * dynamically, because static imports are all compiled before a module's own code runs.
 *
 * The folder is Node's choice: NODE_COMPILE_CACHE when set, else `<os temp dir>/node-compile-cache`, which outlives
 * a fresh DATA_DIR and is writable wherever a temp dir is. NODE_DISABLE_COMPILE_CACHE=1 turns it off. Entries are
 * keyed by Node version and file content, so a new build or runtime never reads stale code. A folder that cannot be
 * written leaves the cache off and the start goes on.
 */
export function enableCompileCache(): void {
  const enable = (module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  try {
    enable?.();
  } catch {
    // Only a start matters; a start without cache is merely slower.
  }
}
