/**
 * Skips a dependency while it is failing so a dead or hung Redis costs callers nothing:
 * closed → (failureThreshold consecutive failures) → open for cooldownMs → half-open, where one
 * probe is let through; its success closes the breaker, its failure opens it again.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  readonly failureThreshold: number;
  readonly cooldownMs: number;
  readonly now: () => number;
}

export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private consecutiveFailures = 0;
  private openUntil = 0;
  private probeInFlight = false;
  /** Times the breaker went from closed or half-open to open. */
  opens = 0;

  constructor(private readonly options: CircuitBreakerOptions) {}

  get current(): BreakerState {
    return this.state;
  }

  /** Whether an operation may run now. In half-open, only the first caller gets through (the probe). */
  tryAcquire(): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (this.options.now() < this.openUntil) return false;
      this.state = 'half-open';
      this.probeInFlight = false;
    }
    if (this.probeInFlight) return false;
    this.probeInFlight = true;
    return true;
  }

  onSuccess(): void {
    this.consecutiveFailures = 0;
    this.probeInFlight = false;
    this.state = 'closed';
  }

  onFailure(): void {
    this.consecutiveFailures++;
    this.probeInFlight = false;
    if (this.state === 'half-open' || this.consecutiveFailures >= this.options.failureThreshold) {
      if (this.state !== 'open') this.opens++;
      this.state = 'open';
      this.openUntil = this.options.now() + this.options.cooldownMs;
    }
  }
}
