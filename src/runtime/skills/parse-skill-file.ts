import { parse as parseYaml } from 'yaml';
import { CodeError, type ErrorCode } from '../../errors.js';
import { formatZodIssues, zodFieldIssues } from '../../protocol/format-zod-issues.js';
import { SkillFrontMatterSchema } from '../../protocol/skills.js';
import { splitFrontMatter } from '../agent-definitions/split-front-matter.js';
import { parseAllowedTools } from './parse-allowed-tools.js';
import type { SkillDefinition, SkillSource } from './skill-definition.js';

/** How a skill file is read: the name errors show, the default name, where it came from and the error code. */
export interface SkillFileContext {
  /** The file as errors name it. */
  readonly file: string;
  /** The name when the front matter has none (the file stem, or the folder of a SKILL.md). */
  readonly defaultName: string;
  readonly source: SkillSource;
  readonly errorCode: ErrorCode;
}

function fail(context: SkillFileContext, field: string, message: string): CodeError {
  return new CodeError(context.errorCode, `${context.file}: ${field ? `${field}: ` : ''}${message}`, {
    file: context.file,
    ...(field ? { field } : {}),
  });
}

/**
 * Parse one skill file: optional YAML front matter (name, description, allowed-tools, kind, tags, version,
 * disable-model-invocation) and the Markdown body. A problem is a CodeError naming the file and the field.
 */
export function parseSkillFile(text: string, context: SkillFileContext): SkillDefinition {
  let parts;
  try {
    parts = splitFrontMatter(text);
  } catch (error) {
    throw fail(context, '', error instanceof Error ? error.message : String(error));
  }
  let data: unknown = {};
  if (parts.frontMatter !== undefined && parts.frontMatter.trim()) {
    try {
      data = parseYaml(parts.frontMatter, { maxAliasCount: 50 });
    } catch (error) {
      throw fail(
        context,
        '',
        `invalid YAML front matter: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw fail(
      context,
      '',
      'the front matter must be a YAML mapping (name, description, allowed-tools, kind, tags, version, disable-model-invocation)',
    );
  const parsed = SkillFrontMatterSchema.safeParse(data);
  if (!parsed.success)
    throw new CodeError(context.errorCode, `${context.file}: ${formatZodIssues(parsed.error)}`, {
      file: context.file,
      field: zodFieldIssues(parsed.error, undefined, 1)[0]?.path ?? '(root)',
    });
  const meta = parsed.data;
  const name = (meta.name ?? context.defaultName).trim();
  if (!name || /\s/.test(name)) throw fail(context, 'name', `"${name}" is not a skill name (non-empty, no whitespace)`);
  return {
    name,
    description: (meta.description ?? '').trim(),
    kind: meta.kind ?? 'instruction',
    tags: meta.tags ?? [],
    allowedTools: parseAllowedTools(meta['allowed-tools']),
    version: meta.version === undefined ? undefined : String(meta.version),
    disableModelInvocation: meta['disable-model-invocation'] ?? false,
    content: parts.body.trim(),
    source: context.source,
  };
}
