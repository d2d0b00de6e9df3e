// `npm run lint` runs this: fails when modules of the TypeScript project import each other in a circle (a file
// that reaches itself through its imports, type-only imports included). Circles make load order matter and keep
// two areas from being read, tested or moved apart. Imports are resolved by TypeScript itself with the project's
// tsconfig (NodeNext: `./x.js` is `./x.ts`), so what it sees is what tsc compiles; packages are not followed.
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
const { options, fileNames } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
const files = new Set(fileNames.map((file) => path.resolve(file)));

/** The project files each file imports (static, dynamic with a literal, `export … from`, type-only alike). */
const edges = new Map();
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(ts.sys.readFile(file) ?? '', true, true);
  const targets = new Set();
  for (const { fileName } of importedFiles) {
    const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule?.resolvedFileName;
    if (resolved !== undefined && files.has(path.resolve(resolved))) targets.add(path.resolve(resolved));
  }
  edges.set(file, [...targets]);
}

// Tarjan's strongly connected components: every component of two or more files (or a file importing itself) is a
// circle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const circles = [];
function visit(file) {
  index.set(file, counter);
  low.set(file, counter++);
  stack.push(file);
  onStack.add(file);
  for (const next of edges.get(file)) {
    if (!index.has(next)) {
      visit(next);
      low.set(file, Math.min(low.get(file), low.get(next)));
    } else if (onStack.has(next)) {
      low.set(file, Math.min(low.get(file), index.get(next)));
    }
  }
  if (low.get(file) !== index.get(file)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== file);
  if (component.length > 1 || edges.get(file).includes(file)) circles.push(component);
}
for (const file of files) if (!index.has(file)) visit(file);

if (circles.length === 0) process.exit(0);
const relative = (file) => path.relative(root, file);
for (const circle of circles) {
  const members = new Set(circle);
  console.error(`Import circle of ${circle.length} file(s):`);
  for (const file of circle.sort()) {
    const inCircle = edges.get(file).filter((next) => members.has(next));
    console.error(`  ${relative(file)} -> ${inCircle.map(relative).join(', ')}`);
  }
}
console.error(
  'Move what both sides need to a module below both (see docs/decisions.md, "No import circles").',
);
process.exit(1);
