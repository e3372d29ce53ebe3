import { RequestTracker } from "../transport/request-tracker.js";

/** A {@link RequestTracker} that says when a request starts and when it settles (the session holds the event loop meanwhile). */
export class HeldRequestTracker extends RequestTracker {
  #changed: () => void = () => undefined;

  /** Called after a request was sent and after it settled. */
  onChange(changed: () => void): void {
    this.#changed = changed;
  }

  override request: RequestTracker["request"] = (frame, options) => {
    const answer = super.request(frame, options);
    this.#changed();
    answer.then(this.#settled, this.#settled);
    return answer;
  };

  #settled = (): void => this.#changed();
}
