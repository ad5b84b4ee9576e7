import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One built console file, held in memory. */
export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
  /** A strong ETag of the body. */
  readonly etag: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * The console's Content-Security-Policy: only this origin's own script, style and connections (a WebSocket
 * to the same host is `'self'` in CSP 3), no inline code, no frames, no form posts, no base rewrites.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where the built console is: `dist/web` beside the compiled server (dist/src/server -> dist/web), or,
 * when the server runs from its TypeScript sources (tests), the build's output in dist/web.
 */
export function consoleDirCandidates(moduleUrl: string = import.meta.url): string[] {
  const here = fileURLToPath(new URL('.', moduleUrl));
  return [join(here, '..', '..', 'web'), join(here, '..', '..', 'dist', 'web')];
}

/** The built console's files by name, loaded once on first use from the first candidate dir that has them. */
export class ConsoleAssets {
  private files: Map<string, ConsoleAsset> | undefined;

  constructor(private readonly dirs: readonly string[] = consoleDirCandidates()) {}

  /** The file of this name (`index.html`, `console.js`, ...), undefined when unknown or the console is not built. */
  get(name: string): ConsoleAsset | undefined {
    this.files ??= this.load();
    return this.files.get(name);
  }

  /** True when a built console was found. */
  get built(): boolean {
    return this.get('index.html') !== undefined;
  }

  private load(): Map<string, ConsoleAsset> {
    const files = new Map<string, ConsoleAsset>();
    const dir = this.dirs.find((d) => existsSync(join(d, 'index.html')) && existsSync(join(d, 'console.js')));
    if (dir === undefined) return files;
    for (const name of readdirSync(dir)) {
      const contentType = CONTENT_TYPES[extname(name)];
      if (contentType === undefined) continue;
      const body = readFileSync(join(dir, name));
      files.set(name, {
        body,
        contentType,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      });
    }
    return files;
  }
}
