declare const sessionKeyBrand: unique symbol;

/**
 * A session's address: `<tenant>/<session id>`, each part encoded by encodeKeyPart. Session ids are per
 * tenant, so this one string is what every map, file, Redis key and lease of a session is keyed by.
 */
export type SessionKey = string & { readonly [sessionKeyBrand]: true };

// Characters a key part keeps as they are; anything else is %XX (its UTF-8 bytes), so a part never holds
// "/", "{", "}" or "%" of its own and is a safe file name and Redis hash-tag content.
const PLAIN = /^[A-Za-z0-9_-]$|^\.$/;

/**
 * Encode one part of a key (a tenant id or a session id): characters outside [A-Za-z0-9._-] become %XX of
 * their UTF-8 bytes, as does a leading "." (no part is ".", ".." or a hidden file name); "" is "%".
 */
export function encodeKeyPart(part: string): string {
  if (part === '') return '%';
  // The common case (ids of letters, digits, "-", "_", ".") allocates nothing but the result.
  if (/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(part)) return part;
  let out = '';
  for (const char of part) {
    if (PLAIN.test(char) && !(out === '' && char === '.')) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The inverse of encodeKeyPart. */
export function decodeKeyPart(encoded: string): string {
  if (encoded === '%') return '';
  return encoded.includes('%') ? decodeURIComponent(encoded) : encoded;
}

/** The key of session `sessionId` of tenant `tenantId`. */
export function sessionKey(tenantId: string, sessionId: string): SessionKey {
  return `${encodeKeyPart(tenantId)}/${encodeKeyPart(sessionId)}` as SessionKey;
}

/** The key of the session a snapshot (or anything shaped like one) belongs to. */
export function sessionKeyOf(snapshot: {
  readonly session: { readonly id: string; readonly ownerTenantId: string };
}): SessionKey {
  return sessionKey(snapshot.session.ownerTenantId, snapshot.session.id);
}

/** The session id a key names. */
export function sessionIdOf(key: SessionKey): string {
  return decodeKeyPart(key.slice(key.indexOf('/') + 1));
}

/** The tenant id a key names. */
export function tenantIdOf(key: SessionKey): string {
  return decodeKeyPart(key.slice(0, key.indexOf('/')));
}

/** The encoded tenant part of a key (the tenant's directory name and Redis hash tag). */
export function tenantPartOf(key: SessionKey): string {
  return key.slice(0, key.indexOf('/'));
}

/** A well-formed key read back from storage (two encoded parts), or undefined. */
export function parseSessionKey(text: string): SessionKey | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  try {
    const key = sessionKey(decodeKeyPart(text.slice(0, slash)), decodeKeyPart(text.slice(slash + 1)));
    // Only the canonical spelling of a key is one: no second name for the same session.
    return key === text ? key : undefined;
  } catch {
    return undefined;
  }
}
