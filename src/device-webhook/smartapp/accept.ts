// Content negotiation for the webhook reply (RFC 9110 §12.5.1 Accept, §12.4.2 quality values): the reply is
// application/json when the Accept header admits it, otherwise the interface's application/octet-stream.

export const JSON_MEDIA_TYPE = 'application/json';
export const OCTET_STREAM_MEDIA_TYPE = 'application/octet-stream';

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseRange(text: string): MediaRange | undefined {
  const [range, ...params] = text.split(';');
  const [type, subtype] = (range ?? '').trim().toLowerCase().split('/');
  if (!type || !subtype) return undefined;
  let q = 1;
  for (const param of params) {
    const [name, value] = param.split('=').map((part) => part.trim().toLowerCase());
    if (name !== 'q' || value === undefined) continue;
    const parsed = Number(value);
    // An unparsable weight makes the range unusable rather than silently preferred.
    q = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0;
  }
  return { type, subtype, q };
}

/** Specificity of `range` for application/json: 3 exact, 2 application/*, 1 any, 0 no match. */
function specificity(range: MediaRange): number {
  if (range.type === 'application' && range.subtype === 'json') return 3;
  if (range.type === 'application' && range.subtype === '*') return 2;
  if (range.type === '*' && range.subtype === '*') return 1;
  return 0;
}

/**
 * True when a reply of type application/json is acceptable. No Accept header (or an empty one) accepts anything;
 * otherwise the most specific matching range decides, and q=0 there means "not acceptable" (§12.4.2).
 */
export function acceptsJson(accept: string | readonly string[] | undefined): boolean {
  const text = Array.isArray(accept) ? accept.join(',') : (accept as string | undefined);
  if (text === undefined || text.trim() === '') return true;
  let best: MediaRange | undefined;
  let bestRank = 0;
  for (const part of text.split(',')) {
    const range = parseRange(part);
    if (range === undefined) continue;
    const rank = specificity(range);
    if (rank > bestRank) {
      best = range;
      bestRank = rank;
    }
  }
  return best !== undefined && best.q > 0;
}

export function replyMediaType(accept: string | readonly string[] | undefined): string {
  return acceptsJson(accept) ? JSON_MEDIA_TYPE : OCTET_STREAM_MEDIA_TYPE;
}
