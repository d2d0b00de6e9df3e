// Operation 5 (changeSetState): how the request's Increment names a change set of one (collection, origin node).
// Change sets are numbered 1, 2, 3… per origin, so Increment ≥ 1 is an absolute number and Increment ≤ 0 counts
// back from the origin's latest (0 = the latest, -1 = the one before). A number outside 1…latest cannot be
// evaluated: it is answered as ChangeSetNotFound rather than guessed.

export type ChangeSetResolution =
  { readonly found: true; readonly changeSet: number } | { readonly found: false; readonly reason: string };

/**
 * The latest number known for an origin: the highest it announced (changeSetCreated) or any node reported having
 * applied — an agent may report before the origin's announcement arrives, and the change set evidently exists.
 */
export function latestChangeSet(announced: number | null, reported: number | null): number | null {
  const candidates = [announced, reported].filter((value): value is number => value !== null && value > 0);
  return candidates.length === 0 ? null : Math.max(...candidates);
}

export function resolveChangeSet(increment: number, latest: number | null): ChangeSetResolution {
  if (!Number.isSafeInteger(increment)) {
    return { found: false, reason: `Increment ${increment} is not a whole number.` };
  }
  if (latest === null) {
    return { found: false, reason: 'No change set of this origin is known for the collection.' };
  }
  if (increment >= 1) {
    return increment <= latest
      ? { found: true, changeSet: increment }
      : { found: false, reason: `Change set ${increment} does not exist yet (the latest is ${latest}).` };
  }
  const changeSet = latest + increment;
  return changeSet >= 1
    ? { found: true, changeSet }
    : {
        found: false,
        reason: `Increment ${increment} reaches before change set 1 (the latest is ${latest}).`,
      };
}
