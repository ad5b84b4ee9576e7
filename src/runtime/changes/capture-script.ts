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

/** The outputs a capture truncates first (builtins only: no process per file). */
const CAPTURE_OUTPUTS = [
  'excluded',
  'big',
  'special',
  'racy',
  'delta',
  'changed',
  'old',
  'pass',
  'files',
  'unreadable',
  'gone',
  'refusals',
  'refused',
  'indexed',
  'unindexed',
  'tree',
  'patch',
  'numstat',
  'raw',
  'sizes',
  'asked',
  'ctimes',
  'conflicts',
  'plan',
];

/**
 * The capture script, run as `sh -c SCRIPT capture <mode> <max file bytes> <max files> <base tree> <find prune args...>`
 * with `A3S_SHADOW` (the store, read-write) and `A3S_WS` (the workspace, read-only) set. It makes the store's git dir
 * on first use (no templates: no sample hooks), writes the neutral attributes, and lists in one `find` pass (which
 * never follows a symlink) what is excluded (the server's patterns, pruned), what is too large, what is neither a
 * file nor a symlink (FIFOs, sockets, devices), the directories that cannot be read (listed as excluded, never failing
 * the capture) and, for each file and symlink to capture, a record `<ctime>:<inode>:<size> <path>`: the store's
 * listing, kept between captures (two alternating files, `listing.0` and `listing.1`, and `listing.ok` naming the
 * current one and its tree). The records that differ from the last capture's (`comm` of the sorted listings), the
 * paths whose ctime is within 2 s of the last capture's start (`-cnewer` its stamp: a change in the same clock tick
 * as the last listing leaves the record equal) and the paths to check again (unreadable or refused last time) are the
 * only paths git is given: a file among them that cannot be read is listed as excluded, the others go to
 * `git update-index --add --remove --replace`, after `--force-remove` of the paths no longer listed (deleted, excluded,
 * grown too large, unreadable); git's own stat cache (the store's index) decides which of them to read. Nothing changed:
 * git does not run at all and the tree is the last one. Without a sound listing (the first capture, one that failed
 * after it touched the index: `listing.ok` says `dirty` then) every listed path is given and every index entry not
 * listed removed, as a full capture. Per file the pass costs one `stat` (find's); a capture of a big tree with few
 * changes spends its time in that one pass.
 * Git itself never walks the tree, so a nested repository (a directory holding `.git`) is
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
S=$A3S_SHADOW; G=$S/git; O=$S/out; L=$S/listing
if [ ! -f "$G/HEAD" ]; then git init -q --bare --template= "$G"; fi
export GIT_DIR="$G" GIT_INDEX_FILE="$G/index"
${GIT_FUNCTION}
if [ ! -d "$G/info" ] || [ ! -d "$O" ]; then mkdir -p "$G/info" "$O"; fi
printf '%s\\n' '${NEUTRAL_ATTRIBUTES.trimEnd()}' > "$G/info/attributes"
for f in ${CAPTURE_OUTPUTS.join(' ')}; do : > "$O/$f"; done
if [ "$mode" = plan ]; then
  g cat-file -e "\${base%:*}^{tree}" 2>/dev/null || exit 4
  g cat-file -e "\${base#*:}^{tree}" 2>/dev/null || exit 4
fi
state=
if [ -f "$L.ok" ]; then read -r state < "$L.ok" || state=; fi
li=; si=1; n=0; last=
case $state in
  "v1 "[01]" "[01]" "*)
    rest=\${state#v1 }; li=\${rest%% *}; rest=\${rest#? }; si=\${rest%% *}; rest=\${rest#? }
    n=\${rest%% *}; last=\${rest#* }
    case $n in ''|*[!0-9]*) li= ;; esac
    ;;
esac
if [ -n "$li" ] && [ -f "$L.$li" ] && [ -f "$L.$li.s" ] && [ -f "$L.stamp.$si" ] && [ -f "$G/index" ] && [ -n "$last" ]; then
  prev=$L.$li; stamp=$L.stamp.$si; nli=$((1 - li))
else
  li=; n=0; last=; : > "$O/empty"; prev=$O/empty; stamp=$O/empty; nli=0
fi
nsi=$((1 - si))
if [ ! -f "$L.recheck" ]; then : > "$L.recheck"; fi
touch -d '1 second ago' "$L.stamp.$nsi"
cd "$A3S_WS"
export GIT_WORK_TREE=.
find . -mindepth 1 \\( "$@" \\) -fprintf "$O/excluded" '%P\\0' -prune -o -type d \\( ! -readable -o ! -executable \\) -fprintf "$O/excluded" '%P\\0' -prune -o -type f -size +"$maxbytes"c -fprintf "$O/big" '%s %P\\0' -o \\( -type f -o -type l \\) -fprintf "$L.$nli" '%C@:%i:%s %P\\0' \\( -cnewer "$stamp" -fprintf "$O/racy" '%P\\0' -o -true \\) -o ! -type d -fprintf "$O/special" '%P\\0'
if [ -n "$li" ] && cmp -s "$prev" "$L.$nli"; then
  # The same records in the same order: nothing changed since the last capture but what is racy.
  nli=$li
else
  n=$(grep -c -z '' "$L.$nli" || true)
  if [ "$n" -gt "$maxfiles" ]; then echo "the workspace has more than $maxfiles files" >&2; exit 3; fi
  sort -z -o "$L.$nli.s" "$L.$nli"
  if [ -n "$li" ]; then comm -z -3 "$L.$li.s" "$L.$nli.s" > "$O/delta"; else comm -z -3 "$O/empty" "$L.$nli.s" > "$O/delta"; fi
  if [ -s "$O/delta" ]; then sed -z -n -e '/^\t/{s/^\t[^ ]* //;w '"$O/changed" -e 'd;}' -e 's/^[^ ]* //;w '"$O/old" "$O/delta"; fi
fi
if [ -z "$li" ] && [ -f "$G/index" ]; then g ls-files -z > "$O/old"; fi
if [ -s "$O/old" ]; then sort -z "$O/old" "$O/changed" "$O/changed" | uniq -z -u > "$O/gone"; fi
F=$O/changed
if [ -s "$O/racy" ] || [ -s "$L.recheck" ]; then sort -z -u -o "$O/pass" "$O/changed" "$O/racy" "$L.recheck"; F=$O/pass; fi
if [ -s "$L.recheck" ]; then
  find -files0-from "$F" -maxdepth 0 -type f ! -readable -fprintf "$O/unreadable" '%p\\0' 2>/dev/null || true
fi
unreadable() {
  if [ "$F" != "$O/pass" ]; then sort -z -u -o "$O/pass" "$F"; F=$O/pass; fi
  comm -z -23 "$F" "$O/unreadable" > "$O/files"; F=$O/files; cat "$O/unreadable" >> "$O/gone"
}
if [ -s "$O/unreadable" ]; then unreadable; fi
if [ -s "$O/gone" ] || [ -s "$F" ] || [ -z "$last" ]; then
  printf 'dirty\\n' > "$L.ok"
  if [ -s "$O/gone" ]; then g update-index -z --force-remove --stdin < "$O/gone"; fi
  if [ -s "$F" ] && ! g update-index -z --add --remove --replace --stdin < "$F" 2> "$O/refusals"; then
    # A file made unreadable (chmod 000) fails the whole call before the index is written: leave such files out.
    find -files0-from "$F" -maxdepth 0 -type f ! -readable -fprintf "$O/unreadable" '%p\\0' 2>/dev/null || true
    if [ ! -s "$O/unreadable" ]; then cat "$O/refusals" >&2; exit 1; fi
    sort -z -o "$O/unreadable" "$O/unreadable"; unreadable
    g update-index -z --force-remove --stdin < "$O/unreadable"
    if [ -s "$F" ]; then g update-index -z --add --remove --replace --stdin < "$F" 2> "$O/refusals" || { cat "$O/refusals" >&2; exit 1; }; fi
  fi
  if [ -s "$O/refusals" ]; then
    if [ "$F" != "$O/pass" ] && [ "$F" != "$O/files" ]; then sort -z -u -o "$O/pass" "$F"; F=$O/pass; fi
    g ls-files -z > "$O/indexed"; comm -z -23 "$F" "$O/indexed" > "$O/unindexed"
    # Refused: listed now and still not in the index (a path checked again that is gone is nothing).
    find -files0-from "$O/unindexed" -maxdepth 0 \\( -type f -o -type l \\) -fprintf "$O/refused" '%p\\0' 2>/dev/null || true
  fi
  tree=$(g write-tree)
else
  tree=$last
fi
if [ -s "$O/unreadable" ] || [ -s "$O/refused" ]; then cat "$O/unreadable" "$O/refused" > "$L.recheck"; else : > "$L.recheck"; fi
if [ -s "$O/special" ] || [ -s "$O/unreadable" ] || [ -s "$O/refused" ]; then cat "$O/special" "$O/unreadable" "$O/refused" >> "$O/excluded"; fi
printf 'v1 %s %s %s %s\\n' "$nli" "$nsi" "$n" "$tree" > "$L.ok"
printf '%s' "$tree" > "$O/tree"
if [ "$mode" = result ] && [ "$tree" != "$base" ]; then
  g diff --binary --no-ext-diff --no-textconv --no-color --full-index -M "$base" "$tree" > "$O/patch"
  g diff --numstat -z --no-ext-diff --no-textconv -M "$base" "$tree" > "$O/numstat"
  g diff --raw -z --no-ext-diff --abbrev=40 -M "$base" "$tree" > "$O/raw"
  tr '\\0' '\\n' < "$O/raw" | sed -n 's/^:[^ ]* [^ ]* [^ ]* \\([^ ]*\\) .*/\\1/p' | g cat-file --batch-check='%(objectname) %(objectsize)' > "$O/sizes" || true
  if [ -s "$O/raw" ]; then
    { printf '.\\0'; sed -z -n '/^:[0-7]* [0-7]* [0-9a-f]* [0-9a-f]* [A-Z][0-9]*$/d; p; :up s|/[^/]*$||p; t up' "$O/raw"; } > "$O/asked"
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
