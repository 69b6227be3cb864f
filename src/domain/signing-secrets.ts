/**
 * An endpoint's signing secrets over time. A rotation does not cut the old
 * secret off at once: for 24 hours (README, Webhooks) every delivery carries a
 * signature with the new and one with the old secret, so a merchant can roll
 * the secret on its receivers without dropping a single event.
 */

/** How long a replaced secret keeps signing after a rotation. */
export const rotationOverlapMs = 24 * 60 * 60 * 1000;

/** SigningSecret is one secret of an endpoint, as the delivery engine sees it (decrypted). */
export interface SigningSecret {
  /** "whsec_" + base64. */
  secret: string;
  /** When it stops signing; null for the current secret, which never expires by itself. */
  expiresAt: Date | null;
}

/**
 * liveSecrets is what signs a delivery attempted at now: every secret not yet
 * expired, current first (the order given). Time is the injected clock's, so
 * the sandbox can move past the 24 hours.
 */
export function liveSecrets(secrets: readonly SigningSecret[], now: Date): string[] {
  return secrets.filter((s) => s.expiresAt === null || s.expiresAt.getTime() > now.getTime()).map((s) => s.secret);
}

/**
 * rotateSigningSecrets is an endpoint's secrets after a rotation at now: the
 * new secret first (never expiring), then each secret still live, the one
 * that was current now expiring after overlapMs, earlier ones keeping their
 * own expiry. Expired ones are dropped, so the list stays short.
 */
export function rotateSigningSecrets(
  secrets: readonly SigningSecret[],
  newSecret: string,
  now: Date,
  overlapMs = rotationOverlapMs,
): SigningSecret[] {
  const until = new Date(now.getTime() + overlapMs);
  const kept = secrets
    .filter((s) => s.expiresAt === null || s.expiresAt.getTime() > now.getTime())
    .map((s) => ({ secret: s.secret, expiresAt: s.expiresAt === null || s.expiresAt > until ? until : s.expiresAt }));
  return [{ secret: newSecret, expiresAt: null }, ...kept];
}
