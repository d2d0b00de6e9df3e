/**
 * SmartThings ids (UUIDs in practice) become path segments of SmartThings API calls (installedapps/{id},
 * devices/{id}): letters, digits, `.`, `_`, `-`, not starting with `.`, so no id can be `.` or `..` (which a URL
 * parser resolves even when percent-encoded) or carry `/`, `%`, `?` or `#`.
 */
export const SMARTTHINGS_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
