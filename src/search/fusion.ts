/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): each ranking
 * gives a passage 1 / (k + rank); the sums order the fused list. Only ranks
 * count, never scores, so neither ranking's scale matters, and a passage found
 * by one ranking alone still takes its place.
 *
 * @module
 */

/** The constant of the original paper: ranks far down a list weigh little, the first few do not dominate. */
export const RRF_K = 60;

/**
 * Fuses rankings of the same kind of item (identified by `key`), best
 * first; ties keep the order of the first ranking that holds the item.
 * `weights` scale each ranking's gains (1 each by default).
 */
export function reciprocalRankFusion<T>(
  rankings: readonly (readonly T[])[],
  key: (item: T) => string,
  depth: number,
  options: { k?: number; weights?: readonly number[] } = {},
): T[] {
  const k = options.k ?? RRF_K;
  const fused = new Map<string, { item: T; score: number; first: number }>();
  rankings.forEach((ranking, list) => {
    ranking.forEach((item, rank) => {
      const id = key(item);
      const entry = fused.get(id);
      const gain = (options.weights?.[list] ?? 1) / (k + rank + 1);
      if (entry) entry.score += gain;
      else fused.set(id, { item, score: gain, first: list * 1_000_000 + rank });
    });
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .slice(0, depth)
    .map((entry) => entry.item);
}
