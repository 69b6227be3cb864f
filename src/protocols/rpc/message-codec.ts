import { create, fromBinary, toBinary, toJsonString, type DescMessage, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeJsonMessage } from "../decode-json.js";
import { parseJsonBody } from "../json-body.js";

/** MessageCodec turns one message type into bytes and back, in one format. */
export interface MessageCodec {
  /** Throws InvalidArgument with a fixed message when the bytes are not one valid message. */
  decode(schema: DescMessage, bytes: Uint8Array): Message;
  encode(schema: DescMessage, message: Message): Uint8Array;
}

/**
 * The binary protobuf codec. protobuf-es checks wire format and, for proto3
 * strings, UTF-8; its own error texts describe parser internals, so a client
 * gets a fixed message instead (and the request a clean 400, never a 500).
 */
export const binaryCodec: MessageCodec = {
  decode(schema, bytes) {
    try {
      return fromBinary(schema, bytes, { readUnknownFields: false });
    } catch (error) {
      const utf8 = (error as { code?: unknown }).code === "ERR_ENCODING_INVALID_ENCODED_DATA";
      throw new ConnectError(
        utf8 ? "the request message has a string field that is not valid UTF-8" : "the request message is not valid protobuf",
        Code.InvalidArgument,
      );
    }
  },
  encode: (schema, message) => toBinary(schema, message),
};

/** How the RPC protocols read proto3 JSON: unknown fields are skipped, as in binary. */
const rpcJson = { proto3: true, ignoreUnknownFields: true };

/**
 * The proto3 JSON codec: the request is read by the same strict decoder as
 * REST bodies (UTF-8, no duplicate keys, integers as JSON numbers or decimal
 * strings only), so every protocol refuses the same input with the same
 * message. Unknown fields are the one difference: ignored here, as binary
 * requests ignore them, refused over REST.
 */
export const jsonCodec: MessageCodec = {
  decode(schema, bytes) {
    return create(schema, decodeJsonMessage(schema, parseJsonBody(bytes), rpcJson) as never) as Message;
  },
  encode: (schema, message) => Buffer.from(toJsonString(schema, message)),
};
