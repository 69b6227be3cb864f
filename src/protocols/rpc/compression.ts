import { Code, ConnectError } from "@connectrpc/connect";
import { gunzipSync } from "node:zlib";

/**
 * The encodings a client may send ("identity" and absent mean none), as the
 * accept-encoding header of every protocol lists them.
 */
export const acceptedEncodings = "gzip,identity";

/**
 * requestEncodingOf reads the header that names a request's compression:
 * "gzip", or undefined for none. Anything else is Unimplemented before a byte
 * of the body is read, as gRPC and Connect require; the response's
 * accept-encoding header tells the client what to use instead.
 */
export function requestEncodingOf(header: string | string[] | undefined): "gzip" | undefined {
  if (header === undefined || header === "identity") return undefined;
  if (header === "gzip") return "gzip";
  throw new ConnectError(`compression ${String(header)} is not supported; use gzip or identity`, Code.Unimplemented);
}

/**
 * gunzip undoes gzip, refusing to inflate past maxBytes (a small body must
 * not become a large one).
 */
export function gunzip(data: Uint8Array, maxBytes: number): Buffer {
  try {
    return gunzipSync(data, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new ConnectError(`message is larger than ${maxBytes} bytes`, Code.ResourceExhausted);
    }
    throw new ConnectError("the compressed request is not valid gzip", Code.InvalidArgument);
  }
}
