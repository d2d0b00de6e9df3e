// class-transformer 0.5.1 does not export its decorator metadata storage from the package root, and the deep
// module it lives in has no typings. Only the read methods compile-dto needs are declared.
declare module 'class-transformer/cjs/storage.js' {
  interface ClassTransformerTypeMetadata {
    target: object;
    propertyName: string;
    reflectedType: unknown;
    typeFunction: (options?: unknown) => unknown;
    options: { discriminator?: unknown; keepDiscriminatorProperty?: boolean } | undefined;
  }
  interface ClassTransformerExposeMetadata {
    propertyName: string | undefined;
    options:
      { name?: string; groups?: string[]; since?: number; until?: number; toClassOnly?: boolean } | undefined;
  }
  interface ClassTransformerMetadataStorage {
    findTypeMetadata(target: object, propertyName: string): ClassTransformerTypeMetadata | undefined;
    findTransformMetadatas(target: object, propertyName: string, transformationType: number): unknown[];
    findExcludeMetadata(target: object, propertyName: string): unknown;
    findExposeMetadata(target: object, propertyName: string): ClassTransformerExposeMetadata | undefined;
    getStrategy(target: object): 'excludeAll' | 'exposeAll' | 'none';
  }
  export const defaultMetadataStorage: ClassTransformerMetadataStorage;
}
