import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { EgressPolicy } from './egress-policy.js';
import { resolveDestination, type Destination, type Lookup } from './egress-resolver.js';

/** The egress policy of this process (OUTBOUND_ALLOW / OUTBOUND_DENY), for every caller-supplied destination. */
@Injectable()
export class EgressService {
  readonly policy: EgressPolicy;
  /** Tests may replace the resolver; production uses the system's (getaddrinfo). */
  lookup: Lookup | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.policy = new EgressPolicy(config.outbound);
  }

  /** A literal host refused without any look-up: the reason, or null when it is a name or an allowed address. */
  literalRefusal(host: string): string | null {
    const literal = this.policy.literalOf(host);
    if (literal === null)
      return this.policy.nameDenied(host) ? `Host ${host} is refused by OUTBOUND_DENY.` : null;
    const verdict = this.policy.check(literal);
    if (verdict.allowed) return null;
    const shown = host === verdict.address ? host : `${host} (${verdict.address})`;
    return `Host ${shown} is not allowed: the address ${verdict.reason}.`;
  }

  resolve(host: string, timeoutMs: number): Promise<Destination> {
    return resolveDestination(this.policy, host, { timeoutMs, lookup: this.lookup });
  }
}
