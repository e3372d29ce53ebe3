/**
 * Planted bugs, for the reliability suite only. Each flag re-creates one real
 * mistake at the exact spot where it would live, so that the unit tests, the
 * model-based test and the reliability suite can each prove they catch it
 * (mutation testing by hand). All flags are `false` by default and nothing in
 * the SDK ever sets them; a test that sets one must reset it in `finally` /
 * `afterEach`. Not exported from the package root.
 */
export interface PlantedBugs {
  /** `CallTable.request`: a key found in the replay cache runs again instead of replaying. */
  reexecuteOnReplay: boolean;
  /** `CallTable` cleanup: the call's timeout timer is not cleared when the call settles. */
  leakTimer: boolean;
  /** `callKeyId`: the key is the tool call id alone, so scopes collide. */
  keyByToolCallIdOnly: boolean;
}

/** @internal Test-only switchboard (see {@link PlantedBugs}). */
export const __plantedBugs: PlantedBugs = {
  reexecuteOnReplay: false,
  leakTimer: false,
  keyByToolCallIdOnly: false,
};
