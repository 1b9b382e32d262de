/**
 * A condition to wait on: {@link wait} resolves at the next {@link notifyAll} or after a timeout,
 * and {@link until} loops on it until a predicate holds. The event loop runs one thing at a time,
 * so a predicate checked right after a wake-up sees a consistent state.
 */
export class Signal {
  private waiters = new Set<() => void>();

  notifyAll(): void {
    const woken = this.waiters;
    this.waiters = new Set();
    for (const w of woken) {
      w();
    }
  }

  /** Resolves at the next notifyAll, or after timeoutMs (never, when undefined). */
  wait(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const wake = (): void => {
        if (timer !== undefined) {
          clearTimeout(timer);
        }
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
      if (timeoutMs !== undefined) {
        timer = setTimeout(wake, Math.max(0, timeoutMs));
      }
    });
  }

  /** Waits until `done()` holds (true) or timeoutMs passed (false). */
  async until(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        return false;
      }
      await this.wait(left);
    }
    return true;
  }
}
