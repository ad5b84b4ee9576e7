import path from 'node:path';

/** One path a tool call reads or changes, as its arguments give it (a tool's `permissionPaths` declares them). */
export interface PermissionPath {
  readonly path: string;
  /** True when the call reaches everything below the path (a search base: grep, glob), not only the path itself. */
  readonly tree?: boolean;
}

/** Where a workspace path leads with symlinks resolved (confined to the workspace); undefined when it cannot be walked. */
export type PathResolver = (given: string) => { readonly relative: string; readonly absolute: string } | undefined;

/** One path of a call in every form a rule may be written in. */
export interface PathSubject {
  readonly given: string;
  readonly tree: boolean;
  /**
   * What an allow rule must match: each group is one place the call reaches (where the path leads with
   * symlinks resolved, and the name as spelled, lexically normalized), as workspace-relative and absolute
   * forms; every group needs an allow rule matching one of its forms. So a spelling (`./a/../b`, a symlink's
   * name) never allows a place that is not allowed itself.
   */
  readonly allowGroups: readonly (readonly string[])[];
  /** Every form a deny or ask rule is tried against: as given, lexically normalized, and those of allowGroups. */
  readonly spellings: readonly string[];
}

/** The seed's argument string (SEED-REFERENCE §3.2): bash -> command, read/write/edit -> file_path, ls -> path, else compact JSON. */
export function argumentString(toolName: string, args: unknown): string {
  const record = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  const pick = (key: string) => (typeof record[key] === 'string' ? (record[key] as string) : '');
  switch (toolName.toLowerCase()) {
    case 'bash':
      return pick('command');
    case 'read':
    case 'write':
    case 'edit':
      return pick('file_path');
    case 'ls':
      return pick('path');
    default:
      return JSON.stringify(args ?? {});
  }
}

/** True when the tool's seed argument string is the compact JSON of its arguments (not one path or command). */
export function isJsonSubjectTool(toolName: string): boolean {
  const name = toolName.toLowerCase();
  return name !== 'bash' && name !== 'read' && name !== 'write' && name !== 'edit' && name !== 'ls';
}

function toSlashes(value: string): string {
  return value.replace(/\\/g, '/');
}

function placeForms(relative: string | undefined, absolute: string, tree: boolean): string[] {
  const forms = relative === undefined ? [absolute] : [relative, absolute];
  // A search base reaches what lies below it: `src/**` allows grep of `src` (it matches `src/`).
  if (tree) for (const form of [...forms]) if (form !== '.') forms.push(`${form.replace(/\/$/, '')}/`);
  return forms;
}

/**
 * The forms of one path: as given, lexically normalized (`./`, `..`, `//` and backslashes resolved), relative
 * to the workspace and absolute when it lies inside it, and where it leads with symlinks resolved.
 */
export function pathSubject(
  given: string,
  workspace: string | undefined,
  resolve?: PathResolver,
  tree = false,
): PathSubject {
  // Allow rules see the path as the tool will walk it; a `\` is an ordinary character of a name there.
  const groups = places(given, workspace, resolve, tree);
  const spellings = new Set<string>([given, path.posix.normalize(given === '' ? '.' : given)]);
  for (const group of groups) for (const form of group) spellings.add(form);
  // Deny and ask rules also see it with `\` read as `/`, as the seed normalizes it.
  const spelled = toSlashes(given);
  if (spelled !== given) {
    spellings.add(spelled);
    for (const group of places(spelled, workspace, resolve, tree)) for (const form of group) spellings.add(form);
  }
  return { given, tree, allowGroups: groups, spellings: [...spellings] };
}

/** The places one spelling of a path reaches: where it leads (symlinks resolved), then its lexical place. */
function places(given: string, workspace: string | undefined, resolve: PathResolver | undefined, tree: boolean) {
  const normal = path.posix.normalize(given === '' ? '.' : given);
  if (!workspace) return [placeForms(undefined, normal, tree)];
  const absolute = path.posix.isAbsolute(normal) ? normal : path.posix.join(workspace, normal);
  const rel = path.posix.relative(workspace, absolute);
  const inside =
    rel === '' ? '.' : rel !== '..' && !rel.startsWith('../') && !path.posix.isAbsolute(rel) ? rel : undefined;
  const resolved = inside === undefined ? undefined : resolve?.(inside);
  const lexical = placeForms(inside, absolute, tree);
  if (resolved && resolved.relative !== inside)
    return [placeForms(resolved.relative, resolved.absolute, tree), lexical];
  return [lexical];
}

/**
 * A call's permission subjects, computed once per call and only when a rule needs them: the seed's argument
 * string, and the paths the tool declares (each in all its forms). Reused by the permission and confirmation
 * stages and the "allow always" grant key.
 */
export class CallSubjects {
  private argumentValue: string | undefined;
  private pathValues: readonly PathSubject[] | undefined;

  constructor(
    readonly toolName: string,
    readonly args: unknown,
    private readonly declared?: (args: unknown) => readonly PermissionPath[],
    readonly workspace?: string,
    private readonly resolve?: PathResolver,
  ) {}

  /** The seed's argument string (argumentString). */
  get argument(): string {
    if (this.argumentValue === undefined) this.argumentValue = argumentString(this.toolName, this.args);
    return this.argumentValue;
  }

  /** True when `argument` is the compact JSON of the arguments. */
  get json(): boolean {
    return isJsonSubjectTool(this.toolName);
  }

  /** True when the tool declares paths for this call (then allow rules are matched against them). */
  get hasPaths(): boolean {
    return this.paths.length > 0;
  }

  /** True when a rule looked at the declared paths (they were resolved): then their places are held to at open. */
  get pathsResolved(): boolean {
    return this.pathValues !== undefined && this.pathValues.length > 0;
  }

  /**
   * The place each declared path was decided on, by its spelling and by that place's own name (workspace-
   * relative); only paths inside the workspace. The execute stage refuses to open one that leads elsewhere now.
   */
  decidedPlaces(): ReadonlyMap<string, string> {
    const places = new Map<string, string>();
    for (const subject of this.paths) {
      const place = subject.allowGroups[0]?.[0];
      if (place === undefined || path.posix.isAbsolute(place)) continue;
      places.set(subject.given, place);
      places.set(place, place);
    }
    return places;
  }

  /** The declared paths of this call in all their forms (empty for a tool that declares none). */
  get paths(): readonly PathSubject[] {
    if (this.pathValues === undefined) {
      let declared: readonly PermissionPath[] = [];
      try {
        declared = this.declared?.(this.args) ?? [];
      } catch {
        declared = [];
      }
      this.pathValues = declared.map((entry) => pathSubject(entry.path, this.workspace, this.resolve, entry.tree));
    }
    return this.pathValues;
  }
}
