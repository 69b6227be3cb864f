/**
 * encodeGrpcMessage percent-encodes a status message for the grpc-message
 * header exactly as the gRPC spec requires (doc/PROTOCOL-HTTP2.md,
 * "Status-Message"): the UTF-8 bytes outside 0x20–0x7E, and "%" itself, become
 * %XX; everything else stays as it is. Encoding more (as encodeURIComponent
 * does) makes clients that decode only what the spec says, such as grpc-js,
 * show "%2C" and "%3B" in the text.
 */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
