import leven from 'leven';

/**
 * The known name closest to `word` when it is close enough to be a typo: at most 2 edits (and at most half the
 * name's length), or a prefix of the name (or the name a prefix of it); the closest wins, the first on a tie.
 */
export function closestName(word: string, names: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    if (name === word) return name;
    const distance = name.startsWith(word) || word.startsWith(name) ? 1 : leven(word, name);
    if (distance <= Math.min(2, Math.floor(name.length / 2)) && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

/** ` (did you mean X?)` for a typo of one of `names`, else ''. `show` words the name (e.g. with its `--`). */
export function didYouMean(word: string, names: Iterable<string>, show = (name: string) => name): string {
  const name = closestName(word, names);
  return name !== undefined ? ` (did you mean ${show(name)}?)` : '';
}
