/**
 * Where the listener leaves the address of the client a connection serves,
 * when it is not the socket's peer: behind a trusted balancer speaking the
 * PROXY protocol, the address the balancer's header carries. A symbol on the
 * socket, because Node's HTTP/2 compatibility layer hands requests a proxy
 * of the session's socket that forwards property reads to it.
 */
const kClientAddress = Symbol("clientAddress");

interface AddressedSocket {
  remoteAddress?: string | undefined;
  [kClientAddress]?: string;
}

/** setClientAddress records the client's address on the socket the listener accepted. */
export function setClientAddress(socket: object, address: string): void {
  (socket as AddressedSocket)[kClientAddress] = address;
}

/**
 * clientAddressOf is the client's address for limits, throttles and logs:
 * the one the PROXY header carried, else the socket's peer.
 */
export function clientAddressOf(socket: object | undefined | null): string | undefined {
  if (!socket) return undefined;
  const addressed = socket as AddressedSocket;
  return addressed[kClientAddress] ?? addressed.remoteAddress;
}
