import { Code, ConnectError } from "@connectrpc/connect";

/** The cause that marks an Internal error as the client's doing. */
const violation = new Error("protocol violation");

/**
 * protocolViolation is the error for framing the client broke where the
 * protocol names the code Internal (gRPC: a message flagged compressed with
 * no grpc-encoding, doc/compression.md). Unlike a real Internal it is not the
 * service's failure: the pipeline passes it through with its message, and the
 * request log keeps it at info, so a client without a key cannot fill the
 * error log at will.
 */
export function protocolViolation(message: string): ConnectError {
  return new ConnectError(message, Code.Internal, undefined, undefined, violation);
}

/** isProtocolViolation tells a protocolViolation() apart from a real Internal error. */
export function isProtocolViolation(error: unknown): boolean {
  return error instanceof ConnectError && error.cause === violation;
}
