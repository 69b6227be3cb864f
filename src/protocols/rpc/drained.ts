import type { NodeServerResponse } from "../../http/node-http.js";
import { ClientGone } from "../../http/read-body.js";

/**
 * drained waits until the client has read what was written, or destroys a
 * connection that stopped reading for timeoutMs: a streaming response is
 * never buffered without bound for a consumer that does not read.
 */
export function drained(res: NodeServerResponse, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      res.destroy();
      reject(new ClientGone());
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      res.off("close", gone);
      resolve();
    };
    const gone = () => {
      clearTimeout(timer);
      res.off("drain", done);
      reject(new ClientGone());
    };
    res.once("drain", done);
    res.once("close", gone);
  });
}
