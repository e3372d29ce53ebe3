/**
 * Run a callback the table was given (`deliver`, `onSettled`, `onLate`). A
 * throw goes to `onError` and never escapes: the table's state is already
 * consistent when its callbacks run, and an exception thrown from a timer or a
 * promise reaction would become an uncaught error or an unhandled rejection.
 */
export function callSafely(callback: () => void, onError: ((error: unknown) => void) | undefined): void {
  try {
    callback();
  } catch (error) {
    try {
      onError?.(error);
    } catch {
      // The error reporter failed too: there is nothing left to report it to.
    }
  }
}
