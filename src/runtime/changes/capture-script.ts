/**
 * The `-c` options of every git call change capture makes: nothing configured anywhere can run a program (hooks,
 * fsmonitor, pager, editor, external diff, credential helpers), rewrite content (autocrlf, attributes from a file),
 * hide a file (excludesFile) or start background work (gc, maintenance). The store's own config is the server's; system
 * and global config are off (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null); the workspace's `.git` is never read.
 */
export const CAPTURE_GIT_OPTIONS = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.symlinks=true',
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'core.pager=cat',
  'core.editor=true',
  'core.askPass=',
  'credential.helper=',
  'diff.external=',
  'gc.auto=0',
  'maintenance.auto=false',
  'safe.directory=*',
  'color.ui=never',
  'core.quotepath=off',
];

/** The variables of every capture git call (the whole environment, with PATH, HOME and TMPDIR the runner adds). */
export const CAPTURE_GIT_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_PAGER: 'cat',
  GIT_ASKPASS: '',
  GIT_EDITOR: 'true',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_NO_LAZY_FETCH: '1',
  LC_ALL: 'C',
};

/** The shell function `g` every script calls git through: git with CAPTURE_GIT_OPTIONS. */
const GIT_FUNCTION = `g() { git ${CAPTURE_GIT_OPTIONS.map((option) => `-c '${option}'`).join(' ')} "$@"; }`;

/**
 * `$GIT_DIR/info/attributes`, the highest-precedence attributes: every attribute that could convert content or choose
 * a driver is unspecified for every path, whatever the workspace's `.gitattributes` say.
 */
export const NEUTRAL_ATTRIBUTES =
  '* !text !eol !crlf !filter !ident !working-tree-encoding !diff !merge !export-subst !export-ignore\n';

/**
 * The capture script, run as `sh -c SCRIPT capture <mode> <max file bytes> <max files> <base tree> <find prune args...>`
 * with `A3S_SHADOW` (the store, read-write) and `A3S_WS` (the workspace, read-only) set. It makes the store's git dir
 * on first use (no templates: no sample hooks), writes the neutral attributes, and lists in one `find` pass (which
 * never follows a symlink) what is excluded (the server's patterns, pruned), what is too large, what is neither a
 * file nor a symlink (FIFOs, sockets, devices) or cannot be read (a directory or file made unreadable: both listed
 * as excluded, never failing the capture) and the files to capture. That list is the only
 * input of git: `git update-index --add --remove` of exactly those paths, after `--force-remove` of every index entry
 * no longer listed (deleted, excluded, grown too large), over the store's index (git's stat cache: unchanged files
 * are not read again). The index lists its paths in byte order, as `sort -z` does with LC_ALL=C (CAPTURE_GIT_ENV). Git itself never walks the tree, so a nested repository (a directory holding `.git`) is
 * captured as its files, never as a gitlink that would hide them or fail the capture, and the workspace's
 * .gitignore files hide nothing. A listed path git refuses (`.GIT/x`, `git~1`) is listed as excluded. Then
 * `git write-tree`. In `result` mode it also writes the diff from the base tree: the patch, numstat, raw and the
 * result sizes of the changed blobs, and `ctimes`: the status-change time of each changed path and of
 * each directory above one (`<seconds.fraction> <path>\\0`; a deleted path has none, its nearest directory does),
 * which tells a rollback whether a path last changed during one of the run's calls (docs/runs.md#rollback).
 * In `plan` mode (a revert's, base `<expected tree>:<goal tree>`) it writes the raw diffs from the expected tree to
 * the workspace's (`conflicts`) and from the workspace's to the goal (`plan`), without rename detection.
 * Exit 3: more files than allowed (nothing captured).
 */
export const CAPTURE_SCRIPT = `set -eu
mode=$1; maxbytes=$2; maxfiles=$3; base=$4; shift 4
S=$A3S_SHADOW; G=$S/git; O=$S/out
if [ ! -f "$G/HEAD" ]; then git init -q --bare --template= "$G"; fi
export GIT_DIR="$G" GIT_INDEX_FILE="$G/index"
${GIT_FUNCTION}
mkdir -p "$G/info" "$O"
printf '%s' '${NEUTRAL_ATTRIBUTES.trimEnd()}' > "$G/info/attributes"
printf '\\n' >> "$G/info/attributes"
rm -f "$O"/*
if [ "$mode" = plan ]; then
  g cat-file -e "\${base%:*}^{tree}" 2>/dev/null || exit 4
  g cat-file -e "\${base#*:}^{tree}" 2>/dev/null || exit 4
fi
cd "$A3S_WS"
export GIT_WORK_TREE=.
find . -mindepth 1 \\( "$@" \\) -fprintf "$O/excluded" '%P\\0' -prune -o \\( -type d \\( ! -readable -o ! -executable \\) -o -type f ! -readable \\) -fprintf "$O/excluded" '%P\\0' -prune -o -type f -size +"$maxbytes"c -fprintf "$O/big" '%s %P\\0' -o \\( -type f -o -type l \\) -fprintf "$O/files" '%P\\0' -o ! -type d -fprintf "$O/special" '%P\\0'
touch "$O/excluded" "$O/big" "$O/files" "$O/special"
n=$(tr -cd '\\000' < "$O/files" | wc -c)
if [ "$n" -gt "$maxfiles" ]; then echo "the workspace has more than $maxfiles files" >&2; exit 3; fi
sort -z -o "$O/files" "$O/files"
g ls-files -z > "$O/indexed"
comm -z -23 "$O/indexed" "$O/files" > "$O/gone"
if [ -s "$O/gone" ]; then g update-index -z --force-remove --stdin < "$O/gone"; fi
g update-index -z --add --remove --replace --stdin < "$O/files" 2> "$O/refusals" || { cat "$O/refusals" >&2; exit 1; }
if [ -s "$O/refusals" ]; then g ls-files -z > "$O/indexed"; comm -z -23 "$O/files" "$O/indexed" > "$O/refused"; fi
touch "$O/refused"
cat "$O/special" "$O/refused" >> "$O/excluded"
tree=$(g write-tree)
printf '%s' "$tree" > "$O/tree"
if [ "$mode" = result ]; then
  g diff --binary --no-ext-diff --no-textconv --no-color --full-index -M "$base" "$tree" > "$O/patch"
  g diff --numstat -z --no-ext-diff --no-textconv -M "$base" "$tree" > "$O/numstat"
  g diff --raw -z --no-ext-diff --abbrev=40 -M "$base" "$tree" > "$O/raw"
  tr '\\0' '\\n' < "$O/raw" | grep '^:' | cut -d' ' -f4 | g cat-file --batch-check='%(objectname) %(objectsize)' > "$O/sizes" || true
  g diff --name-only -z --no-renames "$base" "$tree" > "$O/names"
  if [ -s "$O/names" ]; then
    { printf '.\\0'; sed -z -n 'p; :up s|/[^/]*$||p; t up' "$O/names"; } | sort -z -u > "$O/asked"
    find -files0-from "$O/asked" -maxdepth 0 -printf '%C@ %p\\0' > "$O/ctimes" 2>/dev/null || true
  fi
fi
if [ "$mode" = plan ]; then
  g diff --raw -z --no-renames --no-ext-diff --abbrev=40 "\${base%:*}" "$tree" > "$O/conflicts"
  g diff --raw -z --no-renames --no-ext-diff --abbrev=40 "$tree" "\${base#*:}" > "$O/plan"
fi
printf '%s' "$tree"
`;

/**
 * The diff script (`sh -c SCRIPT diff <from tree> <to tree>`): the same outputs as a result capture, between two trees
 * the store already holds (exit 4 when one is missing: another node captured it).
 */
export const DIFF_SCRIPT = `set -eu
from=$1; to=$2
S=$A3S_SHADOW; G=$S/git; O=$S/range
export GIT_DIR="$G"
${GIT_FUNCTION}
[ -f "$G/HEAD" ] || exit 4
g cat-file -e "$from^{tree}" 2>/dev/null || exit 4
g cat-file -e "$to^{tree}" 2>/dev/null || exit 4
mkdir -p "$O"; rm -f "$O"/*
g diff --binary --no-ext-diff --no-textconv --no-color --full-index -M "$from" "$to" > "$O/patch"
g diff --numstat -z --no-ext-diff --no-textconv -M "$from" "$to" > "$O/numstat"
g diff --raw -z --no-ext-diff --abbrev=40 -M "$from" "$to" > "$O/raw"
tr '\\0' '\\n' < "$O/raw" | grep '^:' | cut -d' ' -f4 | g cat-file --batch-check='%(objectname) %(objectsize)' > "$O/sizes" || true
`;

/** The longest path (`./` included) a capture walks: git's lstat of a longer one fails (ENAMETOOLONG). */
const MAX_PATH_CHARS = 4000;

/**
 * The restore script of a revert or unrevert (`sh -c SCRIPT restore <current tree> <goal tree>`), run with the
 * workspace bound read-write: the paths listed NUL-separated in `$A3S_SHADOW/remove` (in the current tree, absent
 * from the goal) are removed with `git rm` over an index of the current tree, then those in `$A3S_SHADOW/checkout`
 * are written from the goal tree with `git checkout-index` (which replaces a symlink in a leading directory by a
 * directory, never writing through it). Paths are literal (GIT_LITERAL_PATHSPECS), read from files, never from a
 * command line; the same hardening as capture, its own index in the store.
 */
export const RESTORE_SCRIPT = `set -eu
current=$1; goal=$2
S=$A3S_SHADOW; G=$S/git; O=$S/out
export GIT_DIR="$G" GIT_INDEX_FILE="$S/restore-index" GIT_LITERAL_PATHSPECS=1
${GIT_FUNCTION}
[ -f "$G/HEAD" ] || exit 4
cd "$A3S_WS"
export GIT_WORK_TREE=.
rm -f "$S/restore-index"
if [ -s "$S/remove" ]; then
  g read-tree "$current"
  g rm -q -f -r --ignore-unmatch --pathspec-from-file="$S/remove" --pathspec-file-nul
fi
if [ -s "$S/checkout" ]; then
  g read-tree "$goal"
  g checkout-index -f -z --stdin < "$S/checkout"
fi
rm -f "$S/restore-index"
`;

/**
 * The checkout script of a fork's copy (`sh -c SCRIPT checkout <tree>`), run with the new, empty directory bound
 * read-write as the workspace and the parent's store bound read-only: `git read-tree` of the tree into an index in
 * a private temporary directory, then `git checkout-index -a` (which writes symlinks as symlinks and never writes
 * through one: a path whose leading directory is a symlink is refused). Exit 4 when the store lacks the tree or its
 * neutral attributes (a store no capture of this server made). On failure the directory is emptied again.
 */
export const CHECKOUT_SCRIPT = `set -eu
tree=$1
S=$A3S_SHADOW; G=$S/git
export GIT_DIR="$G"
${GIT_FUNCTION}
[ -f "$G/HEAD" ] || exit 4
[ -f "$G/info/attributes" ] || exit 4
g cat-file -e "$tree^{tree}" 2>/dev/null || exit 4
cd "$A3S_WS"
if [ -n "$(ls -A)" ]; then echo "the copy's directory is not empty" >&2; exit 1; fi
d=$(mktemp -d)
trap 'rc=$?; rm -rf "$d"; if [ $rc -ne 0 ]; then find . -mindepth 1 -delete 2>/dev/null || true; fi' EXIT
export GIT_WORK_TREE=. GIT_INDEX_FILE="$d/index"
g read-tree "$tree"
g checkout-index -a -f
`;

/** Empties the workspace bound read-write (`sh -c SCRIPT clear`): a fork's copy that did not become a session. */
export const CLEAR_SCRIPT = `set -eu
cd "$A3S_WS"
find . -mindepth 1 -delete
`;

/**
 * The `find` prune expression of the server's exclusions. A pattern ending in `/` is a directory; one starting with
 * `/` or holding a `/` is a path from the workspace root (`/build/`, `out/gen`), any other a name at any depth
 * (`node_modules/`, `*.log`).
 */
export function exclusionRules(patterns: readonly string[]): { prune: string[] } {
  // A `.git` at any depth is never walked nor captured (the workspace's own repository, nested ones); nor is a path
  // too long for git to lstat (PATH_MAX), which would fail every capture while it exists.
  const prune: string[] = ['-name', '.git', '-o', '-regextype', 'posix-extended', '-regex', `.{${MAX_PATH_CHARS},}`];
  for (const raw of patterns) {
    const directory = raw.endsWith('/');
    const pattern = raw.replace(/^\/+/, '').replace(/\/+$/, '');
    if (pattern === '') continue;
    const rooted = raw.startsWith('/') || pattern.includes('/');
    if (rooted) prune.push('-o', '-path', `./${pattern}`);
    else prune.push('-o', ...(directory ? ['(', '-type', 'd', '-name', pattern, ')'] : ['-name', pattern]));
  }
  return { prune };
}
