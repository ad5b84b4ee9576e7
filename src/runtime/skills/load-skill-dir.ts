import { lstat, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { CodeError, type ErrorCode } from '../../errors.js';
import { isInside } from '../tools/workspace-path.js';
import { parseSkillFile } from './parse-skill-file.js';
import type { SkillDefinition, SkillSource } from './skill-definition.js';

/** Skill files read from one directory tree at most (more: an error naming the directory). */
export const MAX_SKILL_FILES = 512;
/** Bytes one skill file may have at most (more: an error naming the file). */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;
/** How deep a skill directory is walked. */
export const MAX_SKILL_DEPTH = 8;

/** How one skill directory is read. */
export interface SkillDirRequest {
  /** The canonical (realpath) directory. */
  readonly dir: string;
  /** The directory as the caller named it (errors say `<label>/<file>`). */
  readonly label: string;
  readonly source: SkillSource;
  readonly errorCode: ErrorCode;
}

interface Found {
  readonly full: string;
  readonly shown: string;
  readonly defaultName: string;
}

async function readBounded(file: string, shown: string, request: SkillDirRequest): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(MAX_SKILL_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_SKILL_FILE_BYTES) throw new CodeError(request.errorCode, `${shown}: larger than ${MAX_SKILL_FILE_BYTES} bytes (the bound of one skill file)`, { file: shown });
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Follow a symlink only when it stays inside the root; anything else is an error naming it. */
async function target(full: string, shown: string, request: SkillDirRequest): Promise<string> {
  if (!(await lstat(full)).isSymbolicLink()) return full;
  const resolved = await realpath(full).catch(() => undefined);
  if (resolved === undefined || !isInside(request.dir, resolved)) throw new CodeError(request.errorCode, `${shown}: a symlink leaving the skill directory is refused`, { file: shown });
  return resolved;
}

async function walk(dir: string, shownDir: string, depth: number, request: SkillDirRequest, out: Found[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const skillFile = entries.find((entry) => entry.name === 'SKILL.md');
  // A folder with SKILL.md is one skill named by the folder; its other files are the skill's resources.
  if (skillFile && depth > 0) {
    out.push({ full: await target(path.join(dir, skillFile.name), path.posix.join(shownDir, skillFile.name), request), shown: path.posix.join(shownDir, skillFile.name), defaultName: path.basename(dir) });
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const shown = path.posix.join(shownDir, entry.name);
    const real = await target(path.join(dir, entry.name), shown, request);
    const info = await lstat(real);
    if (info.isDirectory()) {
      if (depth + 1 > MAX_SKILL_DEPTH) throw new CodeError(request.errorCode, `${shown}: nested deeper than ${MAX_SKILL_DEPTH} levels (the bound of one skill directory)`, { file: shown });
      await walk(real, shown, depth + 1, request, out);
    } else if (info.isFile() && /\.md$/i.test(entry.name)) {
      out.push({ full: real, shown, defaultName: entry.name === 'SKILL.md' ? path.basename(request.dir) : entry.name.replace(/\.md$/i, '') });
    }
    if (out.length > MAX_SKILL_FILES) throw new CodeError(request.errorCode, `${request.label}: more than ${MAX_SKILL_FILES} skill files (the bound of one skill directory)`, { file: request.label });
  }
}

/**
 * The skills of one directory tree, in path order: every `*.md` file (name defaults to its stem) and every
 * `<folder>/SKILL.md` (name defaults to the folder). Symlinks must stay inside the directory; a bad file, a
 * duplicate name, too many files or a file too large is a CodeError naming it.
 */
export async function loadSkillDir(request: SkillDirRequest): Promise<SkillDefinition[]> {
  const found: Found[] = [];
  await walk(request.dir, request.label, 0, request, found);
  const skills: SkillDefinition[] = [];
  const seen = new Map<string, string>();
  for (const file of found) {
    const skill = parseSkillFile(await readBounded(file.full, file.shown, request), { file: file.shown, defaultName: file.defaultName, source: request.source, errorCode: request.errorCode });
    const earlier = seen.get(skill.name);
    if (earlier) throw new CodeError(request.errorCode, `${file.shown}: name: "${skill.name}" is already defined by ${earlier}`, { file: file.shown, field: 'name' });
    seen.set(skill.name, file.shown);
    skills.push(skill);
  }
  return skills;
}
