/**
 * An endpoint's signing secrets over time. A rotation does not cut the old
 * secret off at once unless asked: for a grace (24 hours by default, README,
 * Webhooks) every delivery carries a signature with the new and one with the
 * old secret, so a merchant can roll the secret on its receivers without
 * dropping a single event. At most two secrets sign at once (issue 21, §4):
 * the Standard Webhooks header carries "a handful" of signatures, and every
 * one costs an HMAC per attempt and bytes per header.
 */

/** How long a replaced secret keeps signing after a rotation, by default; also the longest grace a rotation may ask for. */
export const rotationOverlapMs = 24 * 60 * 60 * 1000;

/** The most secrets that sign one delivery: the current one and the one it replaced, in its grace. */
export const maxSigningSecrets = 2;

/** SigningSecret is one secret of an endpoint, as the delivery engine sees it (decrypted). */
export interface SigningSecret {
  /** "whsec_" + base64. */
  secret: string;
  /** When it stops signing; null for the current secret, which never expires by itself. */
  expiresAt: Date | null;
}

/**
 * liveSecrets is what signs a delivery attempted at now: the secrets not yet
 * expired, current first (the order given), at most maxSigningSecrets of
 * them, so an endpoint rotated many times before the bound existed still
 * signs with two. Time is the injected clock's, so the sandbox can move past
 * the grace.
 */
export function liveSecrets(secrets: readonly SigningSecret[], now: Date): string[] {
  return secrets
    .filter((s) => s.expiresAt === null || s.expiresAt.getTime() > now.getTime())
    .slice(0, maxSigningSecrets)
    .map((s) => s.secret);
}

/**
 * rotateSigningSecrets is an endpoint's secrets after a rotation at now: the
 * new secret first (never expiring), then the one that was current, expiring
 * after graceMs (dropped when graceMs is 0: retired at once). Every older
 * secret is dropped, its grace ended by this rotation: at most two secrets
 * are ever stored or sign.
 */
export function rotateSigningSecrets(
  secrets: readonly SigningSecret[],
  newSecret: string,
  now: Date,
  graceMs = rotationOverlapMs,
): SigningSecret[] {
  if (!(Number.isInteger(graceMs) && graceMs >= 0 && graceMs <= rotationOverlapMs)) {
    throw new Error(`a rotation's grace is whole ms from 0 to ${rotationOverlapMs}`);
  }
  const current = secrets.find((s) => s.expiresAt === null) ?? secrets[0];
  const next: SigningSecret[] = [{ secret: newSecret, expiresAt: null }];
  if (current && graceMs > 0) next.push({ secret: current.secret, expiresAt: new Date(now.getTime() + graceMs) });
  return next;
}
