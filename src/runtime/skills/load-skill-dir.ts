import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { CodeError, type ErrorCode } from '../../errors.js';
import { locate, type ConfinedRoot } from '../workspace/confined-walk.js';
import { listConfinedDirectory, openConfinedFile, readBounded } from '../workspace/read-confined-file.js';
import { NotRegularFileError } from '../workspace/not-regular-file-error.js';
import { WorkspaceEscapeError } from '../workspace/workspace-errors.js';
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
  /** The directory, held open (its canonical path for absolute link targets inside it). */
  readonly root: ConfinedRoot;
  /** The directory as the caller named it (errors say `<label>/<file>`). */
  readonly label: string;
  readonly source: SkillSource;
  readonly errorCode: ErrorCode;
}

interface Found {
  /** Canonical path relative to the held directory. */
  readonly relative: string;
  readonly shown: string;
  readonly defaultName: string;
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** The error for a path below the directory that fails for another reason than leading outside it or being gone. */
function readError(error: unknown, shown: string, request: SkillDirRequest): CodeError {
  if (error instanceof WorkspaceEscapeError)
    return new CodeError(request.errorCode, `${shown}: a symlink leaving the skill directory is refused`, {
      file: shown,
    });
  return new CodeError(request.errorCode, `${shown}: cannot be read (${errnoCode(error) ?? String(error)})`, {
    file: shown,
  });
}

const gone = (error: unknown): boolean =>
  error instanceof NotRegularFileError || errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR';

/** Where an entry leads below the held directory (a symlink followed only inside it), or undefined when it is gone. */
function entryAt(
  relative: string,
  shown: string,
  request: SkillDirRequest,
): { relative: string; stats: Stats } | undefined {
  let location;
  try {
    location = locate(request.root, relative);
  } catch (error) {
    if (gone(error)) return undefined;
    throw readError(error, shown, request);
  }
  location.close();
  return location.stats ? { relative: location.relative, stats: location.stats } : undefined;
}

async function readBoundedFile(file: Found, request: SkillDirRequest): Promise<string | undefined> {
  let opened;
  try {
    opened = await openConfinedFile(request.root, file.relative);
  } catch (error) {
    if (gone(error)) return undefined;
    throw readError(error, file.shown, request);
  }
  try {
    const { bytes, truncated } = await readBounded(opened.handle, MAX_SKILL_FILE_BYTES);
    if (truncated)
      throw new CodeError(
        request.errorCode,
        `${file.shown}: larger than ${MAX_SKILL_FILE_BYTES} bytes (the bound of one skill file)`,
        { file: file.shown },
      );
    return bytes.toString('utf8');
  } finally {
    await opened.handle.close();
  }
}

async function list(relative: string, shown: string, request: SkillDirRequest): Promise<Dirent[]> {
  try {
    return (await listConfinedDirectory(request.root, relative)).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch (error) {
    if (gone(error)) return [];
    throw readError(error, shown, request);
  }
}

/** The name a skill defaults to from the directory holding it (canonical: the held directory's own for its top). */
function folderName(relative: string, request: SkillDirRequest): string {
  return relative === '.' ? path.basename(request.root.path) : path.posix.basename(relative);
}

async function walk(
  dir: string,
  shownDir: string,
  depth: number,
  request: SkillDirRequest,
  out: Found[],
): Promise<void> {
  const entries = await list(dir, shownDir, request);
  // A folder with SKILL.md is one skill named by the folder; its other files are the skill's resources.
  if (depth > 0 && entries.some((entry) => entry.name === 'SKILL.md')) {
    out.push({
      relative: path.posix.join(dir, 'SKILL.md'),
      shown: path.posix.join(shownDir, 'SKILL.md'),
      defaultName: folderName(dir, request),
    });
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const shown = path.posix.join(shownDir, entry.name);
    const found = entryAt(path.posix.join(dir, entry.name), shown, request);
    if (found === undefined) continue;
    if (found.stats.isDirectory()) {
      if (depth + 1 > MAX_SKILL_DEPTH)
        throw new CodeError(
          request.errorCode,
          `${shown}: nested deeper than ${MAX_SKILL_DEPTH} levels (the bound of one skill directory)`,
          { file: shown },
        );
      await walk(found.relative, shown, depth + 1, request, out);
    } else if (found.stats.isFile() && /\.md$/i.test(entry.name)) {
      out.push({
        relative: found.relative,
        shown,
        defaultName: entry.name === 'SKILL.md' ? folderName('.', request) : entry.name.replace(/\.md$/i, ''),
      });
    }
    if (out.length > MAX_SKILL_FILES)
      throw new CodeError(
        request.errorCode,
        `${request.label}: more than ${MAX_SKILL_FILES} skill files (the bound of one skill directory)`,
        { file: request.label },
      );
  }
}

/**
 * The skills of one directory tree held open, in path order: every `*.md` file (name defaults to its stem) and
 * every `<folder>/SKILL.md` (name defaults to the folder). Every entry is walked and opened from the held
 * descriptor (see `locate`, `openConfinedFile`): symlinks must stay inside the directory, only regular files
 * are read; a bad file, a duplicate name, too many files or a file too large is a CodeError naming it.
 */
export async function loadSkillDir(request: SkillDirRequest): Promise<SkillDefinition[]> {
  const found: Found[] = [];
  await walk('.', request.label, 0, request, found);
  const skills: SkillDefinition[] = [];
  const seen = new Map<string, string>();
  for (const file of found) {
    const text = await readBoundedFile(file, request);
    if (text === undefined) continue;
    const skill = parseSkillFile(text, {
      file: file.shown,
      defaultName: file.defaultName,
      source: request.source,
      errorCode: request.errorCode,
    });
    const earlier = seen.get(skill.name);
    if (earlier)
      throw new CodeError(request.errorCode, `${file.shown}: name: "${skill.name}" is already defined by ${earlier}`, {
        file: file.shown,
        field: 'name',
      });
    seen.set(skill.name, file.shown);
    skills.push(skill);
  }
  return skills;
}
