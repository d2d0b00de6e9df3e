// The README stays a five-minute read, every link in the docs stays inside the repository (a clone has nothing
// else), and every setting config.ts reads is described in docs/configuration.md.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

function markdownFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.join('docs', file));
  return ['README.md', 'bench/README.md', ...docs];
}

/** Targets of `[text](target)` links and `<scheme://…>` autolinks, outside code spans and fences. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]);
  const auto = [...prose.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)].map((match) => match[1]);
  return [...inline, ...auto];
}

describe('README', () => {
  it('is at most 12,500 characters', () => {
    expect([...read('README.md')].length).toBeLessThanOrEqual(12_500);
  });

  it('links nowhere but into the repository and to the service it starts', () => {
    const outside = linkTargets(read('README.md')).filter(
      (target) => /^[a-z][a-z0-9+.-]*:/i.test(target) && !/^http:\/\/localhost[:/]/.test(target),
    );
    expect(outside).toEqual([]);
    // Not even as text: a path above the repository's root names something a clone does not have.
    expect(read('README.md')).not.toContain('../');
  });
});

describe('links in the docs', () => {
  it.each(markdownFiles())('%s: every relative link names a file inside the repository', (file) => {
    const broken = linkTargets(read(file))
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
      .filter((target) => {
        const resolved = path.resolve(ROOT, path.dirname(file), decodeURI(target.split('#')[0]));
        return path.relative(ROOT, resolved).startsWith('..') || !fs.existsSync(resolved);
      });
    expect(broken).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  it('describes every environment variable config.ts reads', () => {
    const source = read('src/config/config.ts');
    const variables = new Set(
      [...source.matchAll(/\(\s*env\s*,\s*'([A-Z][A-Z0-9_]*)'/g)].map((match) => match[1]),
    );
    // The parser's pattern must keep finding them: far fewer would mean config.ts changed shape.
    expect(variables.size).toBeGreaterThanOrEqual(40);
    const documented = read('docs/configuration.md');
    const missing = [...variables].filter((name) => !documented.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
