import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * Areas that keep encrypted secrets register a store here (in onModuleInit), so `encryption:rotate-key` can
 * re-encrypt all of them. `reencrypt` maps every stored ciphertext through `rewrite` in the rotation's transaction
 * (`manager`: every store and the audit event commit together) and returns how many values it rewrote.
 */
export interface SecretStore {
  name: string;
  reencrypt(rewrite: (ciphertext: string) => string, manager: EntityManager): Promise<number>;
}

@Injectable()
export class SecretStoreRegistry {
  private readonly stores: SecretStore[] = [];

  register(store: SecretStore): void {
    this.stores.push(store);
  }

  all(): readonly SecretStore[] {
    return this.stores;
  }
}
