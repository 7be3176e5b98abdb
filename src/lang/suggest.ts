/** "Did you mean …?" for names the checker cannot find. */

/** The closest candidate within an edit distance of 2 (and shorter than the name), for "did you mean". */
export function suggest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  // A suggestion must keep most of the name: one edit of a one-letter name says nothing.
  let bestDistance = Math.min(3, name.length);
  for (const c of candidates) {
    if (Math.abs(c.length - name.length) >= bestDistance) continue;
    const d = editDistance(name, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(
        Math.min(
          (prev[j] as number) + 1,
          (row[j - 1] as number) + 1,
          (prev[j - 1] as number) + cost,
        ),
      );
    }
    prev = row;
  }
  return prev[b.length] as number;
}
