import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { DomainError } from "../errors";

/**
 * The SSRF guard for webhook URLs (docs/events.md): a deployed service must not be made to POST to
 * its own network. A URL is allowed when it is https, its port is 443 or an unprivileged one
 * (1024–65535), and every address its host resolves to is a public one; loopback, private (RFC 1918,
 * RFC 4193), link-local, the cloud metadata service (169.254.169.254, fd00:ec2::254), carrier-grade
 * NAT, "this network", multicast, and every IPv6 form that carries an IPv4 address (IPv4-mapped,
 * IPv4-translated, IPv4-compatible ::/96, NAT64, 6to4, Teredo) are refused. Checked at creation and
 * again at each attempt, whose connection then goes to the very address checked (see
 * `pinnedLookup`), so a DNS answer that changes between check and connect (rebinding) cannot slip
 * through.
 *
 * `allowPrivate` (WEBHOOKS_ALLOW_PRIVATE=1, the `npm start` default) is for development: http,
 * private targets such as http://localhost and any port are allowed.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked.addSubnet(net, prefix, "ipv4");
/**
 * IPv6 ranges refused whole. The ones that embed an IPv4 address are refused whatever that address
 * is: a gateway or an old stack may deliver them to it (a public IPv4 address is reached as itself).
 */
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback, and IPv4-compatible ::a.b.c.d (deprecated, RFC 4291)
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
  ["2001::", 32], // Teredo: the IPv4 server and client are in the address
  ["64:ff9b::", 96], // NAT64, well-known prefix
  ["64:ff9b:1::", 48], // NAT64, local use
  ["100::", 64],
  ["2002::", 16], // 6to4: the IPv4 address is bits 16–47
] as const)
  blocked.addSubnet(net, prefix, "ipv6");

/** Whether an IP address is one a deployed service must never call. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const groups = ipv6Groups(address);
  if (!groups) return true;
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d reach the IPv4 address itself.
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const translated = groups.slice(0, 4).every((g) => g === 0) && groups[4] === 0xffff && groups[5] === 0;
  if (mapped || translated) return blocked.check(ipv4Of(groups[6]!, groups[7]!), "ipv4");
  return blocked.check(groups.map((g) => g.toString(16)).join(":"), "ipv6");
}

/** The eight 16-bit groups of an IPv6 address in any spelling (`::`, a dotted IPv4 tail, a zone). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail].map((g) =>
    /^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : Number.NaN,
  );
  return groups.some(Number.isNaN) ? undefined : groups;
}

const ipv4Of = (high: number, low: number): string => [high >> 8, high & 255, low >> 8, low & 255].join(".");

type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

export interface UrlPolicy {
  allowPrivate: boolean;
  /** How a host name is resolved: the system resolver (dns.lookup, as connecting would), or a test's. */
  lookup?: HostLookup;
}

const systemLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

const notAllowed = (why: string) => new DomainError("webhook_url_not_allowed", why);

/** Checks the URL's form (https unless private targets are allowed; no credentials in it). */
function checkUrlForm(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed("the url is not an absolute URL");
  }
  const schemes = policy.allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) throw notAllowed("the url must use https");
  if (url.username || url.password) throw notAllowed("the url must not carry credentials");
  // 443 (https's own, which URL leaves empty) or an unprivileged port: a webhook is never mail, SSH
  // or another well-known service on someone's host.
  const port = url.port === "" ? 443 : Number(url.port);
  if (!policy.allowPrivate && port !== 443 && port < 1024) {
    throw notAllowed("the url's port must be 443 or 1024–65535");
  }
  return url;
}

/** Resolves the host and returns the addresses to connect to, or throws webhook_url_not_allowed. */
async function resolveAllowed(url: URL, policy: UrlPolicy): Promise<{ address: string; family: number }[]> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (policy.lookup ?? systemLookup)(host);
    } catch {
      throw notAllowed(`the url's host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw notAllowed(`the url's host ${host} does not resolve`);
  if (!policy.allowPrivate && addresses.some((a) => isForbiddenAddress(a.address))) {
    throw notAllowed("the url resolves to a private, loopback, link-local or metadata address");
  }
  return addresses;
}

/** Form and resolution together: what creation and every attempt check. */
export async function checkWebhookUrl(
  raw: string,
  policy: UrlPolicy,
): Promise<{ url: URL; addresses: { address: string; family: number }[] }> {
  const url = checkUrlForm(raw, policy);
  return { url, addresses: await resolveAllowed(url, policy) };
}
