/**
 * Optional API key: `Authorization: Bearer <key>` (what the Cohere, AI SDK and TEI clients send),
 * compared in constant time. Both sides are hashed first so the comparison takes the same time
 * whatever the length of the guess.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** True when the Authorization header carries the key. */
export type ApiKeyCheck = (authorization: string | undefined) => boolean;

export function createApiKeyCheck(apiKey: string): ApiKeyCheck {
  const expected = digest(apiKey);
  return (authorization) => {
    if (typeof authorization !== 'string') return false;
    const match = /^\s*bearer\s+(.+?)\s*$/i.exec(authorization);
    const given = digest(match === null ? '' : match[1]);
    // Always compare, even without a match, so a missing scheme costs the same as a wrong key.
    return timingSafeEqual(given, expected) && match !== null;
  };
}
