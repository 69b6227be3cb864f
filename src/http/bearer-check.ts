import { createHash, timingSafeEqual } from "node:crypto";
import type { NodeRequest } from "./node-http.js";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * createBearerCheck says whether a request carries "Authorization: Bearer
 * <token>", compared in constant time over SHA-256 digests (so not even the
 * token's length leaks through timing); the scheme name is case-insensitive
 * (RFC 9110 §11.1), the token is not.
 */
export function createBearerCheck(token: string): (req: NodeRequest) => boolean {
  const expected = digest(`Bearer ${token}`);
  return (req) => {
    const presented = req.headers["authorization"];
    return typeof presented === "string" && timingSafeEqual(digest(presented.replace(/^bearer /i, "Bearer ")), expected);
  };
}
