// Content lines of the iCalendar export (RFC 5545 §3.1 folding, §3.3.11 TEXT escaping). Pure functions.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** TEXT value escaping (§3.3.11): backslash, semicolon, comma and line breaks; other control characters dropped. */
export function escapeText(value: string): string {
  return value
    .replace(CONTROL, '')
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

const MAX_OCTETS = 75;

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * Folds one content line (§3.1): no line longer than 75 octets (CRLF excluded), continuation lines start with one
 * space, and a line never breaks inside a UTF-8 sequence (breaks fall between code points).
 */
export function foldLine(line: string): string {
  let octets = 0;
  for (let i = 0; i < line.length; i++) {
    const unit = line.charCodeAt(i);
    if (unit >= 0x80) {
      octets = -1;
      break;
    }
  }
  if (octets === 0 && line.length <= MAX_OCTETS) return line;
  if (octets === 0) {
    // ASCII: one octet per character.
    let out = line.slice(0, MAX_OCTETS);
    for (let at = MAX_OCTETS; at < line.length; at += MAX_OCTETS - 1) {
      out += `\r\n ${line.slice(at, at + MAX_OCTETS - 1)}`;
    }
    return out;
  }
  let out = '';
  let used = 0;
  for (const char of line) {
    const size = utf8Length(char.codePointAt(0) ?? 0);
    if (used + size > MAX_OCTETS) {
      out += '\r\n ';
      used = 1;
    }
    out += char;
    used += size;
  }
  return out;
}

/** Lines → the calendar text: each folded, each ended by CRLF. */
export function joinLines(lines: readonly string[]): string {
  let out = '';
  for (const line of lines) out += `${foldLine(line)}\r\n`;
  return out;
}
