/**
 * An address where every connection is refused, for a service, forge or proxy that cannot be
 * reached.
 *
 * Not a port taken from a listener and closed again: the system hands that port to the next
 * `port: 0` listener (another test's server, in a parallel run), and the test then meets a server
 * instead of a refusal. Nor a listener kept open: the kernel accepts connections to it whether it
 * accepts them or not, so a client hangs instead of being refused.
 *
 * Port 4 of loopback instead: below 1024, so never handed out for `port: 0` (Linux hands out
 * 32768–60999, macOS and Windows 49152–65535), unassigned by IANA so no daemon listens there, and
 * not one of the Fetch standard's "bad ports" (`FETCH_BLOCKED_PORTS`; port 1 is), so fetch really
 * connects and is refused, as it would be by a service that is down.
 */

/** The port: nothing listens on it, and no test's listener is ever given it. */
export const REFUSED_PORT = 4;

/** `http://127.0.0.1:4`: a connection to it is refused at once. */
export const REFUSED_URL = `http://127.0.0.1:${REFUSED_PORT}`;
