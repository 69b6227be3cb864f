import { Code, ConnectError } from "@connectrpc/connect";

/** The name of a mode, as messages and docs say it. */
export const modeName = (livemode: boolean): string => (livemode ? "live" : "test");

/**
 * inOtherMode is the 404 for an object the caller's merchant has in the other
 * mode (issue 23, §1, as Stripe answers): it is not there for this key, and
 * the message says where it is, so a merchant who mixed up keys sees why.
 * The caller's own merchant only: another merchant's object stays a plain 404.
 */
export function inOtherMode(what: string, id: string, callerLivemode: boolean): ConnectError {
  return new ConnectError(
    `${what} ${id} not found: it exists in ${modeName(!callerLivemode)} mode, but a ${modeName(callerLivemode)} mode key was used`,
    Code.NotFound,
  );
}
