// RFC 7644 §3.14 versioning: the weak entity tag of a user's version, and If-Match / If-None-Match matching (SCIM
// compares weakly, so W/"3" and "3" name the same version).

/** A weak entity tag from the row's version counter; meta.version carries the same string. */
export function etagOf(version: number): string {
  return `W/"${String(version)}"`;
}

/** Opaque tags listed in an If-Match / If-None-Match header, W/ prefixes dropped; '*' stays '*'. */
export function entityTags(header: string): string[] {
  return (header.match(/\*|(?:W\/)?"[^"]*"/g) ?? []).map((tag) => tag.replace(/^W\//, ''));
}

export function matchesEntityTag(header: string, version: number): boolean {
  const current = etagOf(version).replace(/^W\//, '');
  return entityTags(header).some((tag) => tag === '*' || tag === current);
}
