// The service's version from package.json, found from this file's location (works from src/ and dist/src/).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'platform-api') return pkg.version ?? '0.0.0';
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

export const APP_VERSION = findVersion();
