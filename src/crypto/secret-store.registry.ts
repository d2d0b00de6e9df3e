import { Injectable } from '@nestjs/common';

/**
 * Areas that keep encrypted secrets register a store here (in onModuleInit), so `encryption:rotate-key` can
 * re-encrypt all of them. `reencrypt` maps every stored ciphertext through `rewrite` in one transaction and
 * returns how many values it rewrote.
 */
export interface SecretStore {
  name: string;
  reencrypt(rewrite: (ciphertext: string) => string): Promise<number>;
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
