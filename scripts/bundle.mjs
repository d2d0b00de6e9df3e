// The production bundle (`npm run build` runs it after `nest build`): the service and the CLI, each bundled with
// everything they import into one ESM file under dist/src/app/, and the entry points dist/src/main.js and
// dist/src/cli.js replaced in place by small files that import them. A start then loads a handful of files instead
// of ~280 modules of ours and hundreds of CommonJS files of Nest, TypeORM and class-validator (docs/decisions.md,
// "What runs is a production bundle").
// The input is tsc's output, so decorator metadata (emitDecoratorMetadata) is already in it. Everything else in
// dist/ stays tsc's output for the in-process tests and benches that import single modules.
// `node scripts/bundle.mjs [--meta FILE]` writes esbuild's metafile (inputs per output) for size analysis.
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const { values: args } = parseArgs({ options: { meta: { type: 'string' } } });
const metaFile = args.meta === undefined ? undefined : path.resolve(args.meta);
process.chdir(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
if (existsSync('dist/src/app')) {
  // The entry points are already the small importing files: bundling them again would inline the application.
  console.error('dist/ is bundled already: run `npm run build` (nest build, then this script).');
  process.exit(1);
}

// CommonJS code inside an ESM file still calls require() and reads __dirname / __filename.
const banner = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
  'const require = __bundleCreateRequire(import.meta.url);',
  'const __filename = __bundleFileURLToPath(import.meta.url);',
  "const __dirname = __bundleFileURLToPath(new URL('.', import.meta.url));",
].join('\n');

// Loaded at run time from node_modules, not bundled: better-sqlite3 (native addon, finds its .node file from its own
// folder); swagger-ui-dist (Swagger UI's static files are served from its folder, found through its __dirname);
// typescript and prettier (development tools that nest-commander's completion and cosmiconfig reach only on demand).
const EXTERNAL = ['better-sqlite3', 'swagger-ui-dist', 'typescript', 'prettier'];

// Optional packages that Nest, TypeORM and others import only when asked for (@nestjs/microservices, mysql, ...) and
// that are not installed stay runtime imports: they fail, or are skipped, exactly as without the bundle.
const notInstalledStaysExternal = {
  name: 'not-installed-stays-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async ({ path: specifier, kind, resolveDir, importer, pluginData }) => {
      if (pluginData?.probing) return undefined;
      const probe = await b.resolve(specifier, { kind, resolveDir, importer, pluginData: { probing: true } });
      return probe.errors.length > 0 ? { path: specifier, external: true } : undefined;
    });
  },
};

// Nest's ESM packages load some regular dependencies through `const require = createRequire(import.meta.url)`
// (@nestjs/typeorm's typeorm-compat, @nestjs/mapped-types' class-validator check), which esbuild leaves to run
// time: a second, unbundled copy of TypeORM and class-validator was loaded at every start. Without that line their
// `require('x')` calls are plain requires, which esbuild bundles (the same copy as everything else).
const LOCAL_REQUIRE = /^const require = createRequire\(import\.meta\.url\);$/m;
const bundleLocalRequires = {
  name: 'bundle-local-requires',
  setup(b) {
    b.onLoad({ filter: /node_modules[\\/]@nestjs[\\/].*\.js$/ }, async ({ path: file }) => {
      const source = await readFile(file, 'utf8');
      if (!LOCAL_REQUIRE.test(source)) return undefined;
      return { contents: source.replace(LOCAL_REQUIRE, ''), loader: 'js' };
    });
  },
};

// Migrations' checksums as tsc's output gives them (src/database/migration-runner.ts): the bundle's rewritten
// code would give others, and every database migrated by tsc's output would look drifted.
const { MIGRATIONS } = await import(pathToFileURL('dist/migrations/index.js').href);
const { migrationChecksum, migrationName } = await import(
  pathToFileURL('dist/src/database/migration-runner.js').href
);
const checksums = Object.fromEntries(
  MIGRATIONS.map((Migration) => new Migration()).map((m) => [migrationName(m), migrationChecksum(m)]),
);

// The application: one self-contained file per entry, dist/src/app/server.js and dist/src/app/run-cli.js. Not split
// into shared chunks: with splitting, esbuild turns `await import('a-commonjs-package')` into a chunk whose only
// export is `default`, so named imports (`const { resourceFromAttributes } = await import(...)`) came out undefined.
const application = await build({
  entryPoints: { server: 'dist/src/server.js', 'run-cli': 'dist/src/cli/run-cli.js' },
  outdir: 'dist/src/app',
  bundle: true,
  // Classes keep their own names (esbuild renames clashing ones, e.g. Logger2): TypeORM names migrations after
  // their class, Nest's logger and error messages use them.
  keepNames: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner: { js: banner },
  define: { BUILT_MIGRATION_CHECKSUMS: JSON.stringify(JSON.stringify(checksums)) }, // a string literal
  external: EXTERNAL,
  plugins: [notInstalledStaysExternal, bundleLocalRequires],
  metafile: metaFile !== undefined,
  logLevel: 'warning',
});

// The entry points stay small files that switch Node's compile cache on before they import the application
// (src/compile-cache.ts): a single file would be compiled whole before the cache is on.
const APPLICATION = { './server.js': './app/server.js', './cli/run-cli.js': './app/run-cli.js' };
const importTheApplication = {
  name: 'import-the-application',
  setup(b) {
    b.onResolve({ filter: /^\.\/(server|cli\/run-cli)\.js$/ }, ({ path: specifier }) => ({
      path: APPLICATION[specifier],
      external: true,
    }));
  },
};
await build({
  entryPoints: ['dist/src/main.js', 'dist/src/cli.js'],
  outdir: 'dist/src',
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [importTheApplication],
  logLevel: 'warning',
});
if (metaFile !== undefined) writeFileSync(metaFile, JSON.stringify(application.metafile));
