// The code speaks of itself: no comment, test name, message or document may point at something a reader of the
// repository cannot open — the product design document kept outside it, its style and toolchain notes, or an
// issue tracker's numbers (the word "issue" followed by a number, "the figure"). Such a pointer turns a
// reason into a riddle for the next maintainer: state the reason where it is needed, or in docs/decisions.md.
// Run by `npm run lint`. `node scripts/check-self-contained.mjs [path …]` checks only those files or folders
// (relative to the repository); without arguments it checks everything listed in CHECKED below.
// Exits 1 naming each finding as file:line, 0 when there is none.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SELF = path.relative(ROOT, fileURLToPath(import.meta.url));

/** Folders and top-level files checked by default. */
const CHECKED = ['src', 'test', 'migrations', 'bench', 'scripts', 'docs', '.ci', 'README.md'];
/** Top-level files checked by default besides CHECKED: configuration read by the tools. */
const TOP_LEVEL = /\.(?:[cm]?js|ts|json)$/;
/** Files whose text is ours to word; fixtures (.ics calendars, …) are third-party data and are not read. */
const TEXT_FILES = /\.(?:[cm]?[jt]s|md|json|ya?ml|sh|sql|txt)$/;
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'data', 'coverage', '.git']);

const RULES = [
  // The design document (and its "§n" sections) lives outside the repository.
  { pattern: /\bDESIGN\b/, what: 'the design document outside the repository' },
  {
    pattern:
      /\b(?:STYLE|TOOLCHAIN)\.md\b|service-interface\.md|\bshared\/(?:DESIGN|STYLE|TOOLCHAIN|interface)/,
    what: 'a document outside the repository',
  },
  // Issue numbers, "issue-24" (also in anchors of headings that carried one), "the figure".
  {
    pattern: /\b[Ii]ssues? #?\d+|\b[Ii]ssue-\d+|\b[Tt]he issue(?:'s|’s)?\b/,
    what: 'an issue outside the repository',
  },
  {
    pattern: /\b[Rr]ound (?:one|two|three|four|five|six|seven|eight|nine|ten)\b/,
    what: 'a review round outside the repository',
  },
];

function filesUnder(relative) {
  const absolute = path.join(ROOT, relative);
  let stat;
  try {
    stat = statSync(absolute);
  } catch {
    return [];
  }
  if (stat.isFile()) return [relative];
  if (!stat.isDirectory()) return [];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory())
      return SKIPPED_FOLDERS.has(entry.name) ? [] : filesUnder(path.join(relative, entry.name));
    const file = path.join(relative, entry.name);
    // .ci/ holds extensionless scripts (.ci/run).
    return TEXT_FILES.test(entry.name) || relative.split(path.sep)[0] === '.ci' ? [file] : [];
  });
}

function defaultFiles() {
  const topLevel = readdirSync(ROOT, { withFileTypes: true })
    .filter((entry) => entry.isFile() && TOP_LEVEL.test(entry.name) && entry.name !== 'package-lock.json')
    .map((entry) => entry.name);
  return [...CHECKED.flatMap(filesUnder), ...topLevel];
}

const requested = process.argv.slice(2);
const files = (
  requested.length > 0
    ? requested.flatMap((p) => filesUnder(path.relative(ROOT, path.resolve(p))))
    : defaultFiles()
)
  .filter((file) => file !== SELF)
  .sort();

const findings = [];
for (const file of files) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  if (text.includes('\0')) continue;
  text.split('\n').forEach((line, index) => {
    const rule = RULES.find(({ pattern }) => pattern.test(line));
    if (rule) findings.push(`${file}:${index + 1}: points at ${rule.what}: ${line.trim().slice(0, 160)}`);
  });
}

if (findings.length > 0) {
  console.error(findings.join('\n'));
  console.error(
    `\n${findings.length} line(s) point outside the repository. State the reason in the code's own words, or ` +
      'write it into docs/decisions.md and point at that heading.',
  );
  process.exit(1);
}
console.log(`check-self-contained: ${files.length} files, no pointer outside the repository.`);
