import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { DomainError } from "../errors";

/**
 * The SSRF guard for webhook URLs (docs/events.md): a deployed service must not be made to POST to
 * its own network. A URL is allowed when it is https and every address its host resolves to is a
 * public one; loopback, private (RFC 1918, RFC 4193), link-local, the cloud metadata service
 * (169.254.169.254, fd00:ec2::254), carrier-grade NAT, "this network", multicast and the IPv4-mapped
 * or -translated forms of any of those are refused. Checked at creation and again at each attempt,
 * whose connection then goes to the very address checked (see `pinnedLookup`), so a DNS answer that
 * changes between check and connect (rebinding) cannot slip through.
 *
 * `allowPrivate` (WEBHOOKS_ALLOW_PRIVATE=1, the `npm start` default) is for development: http and
 * private targets such as http://localhost are allowed.
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
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2002::", 16],
] as const)
  blocked.addSubnet(net, prefix, "ipv6");

/** Whether an IP address is one a deployed service must never call. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // IPv4-mapped (::ffff:a.b.c.d / ::ffff:xxxx:xxxx) and IPv4-compatible forms reach the IPv4 address.
  const embedded = embeddedIpv4(lower);
  if (embedded) return blocked.check(embedded, "ipv4");
  return blocked.check(lower, "ipv6");
}

function embeddedIpv4(address: string): string | undefined {
  const dotted = /^(?:::ffff:|::ffff:0:|::)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|::ffff:0:)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (!hex) return undefined;
  const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

export type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

export interface UrlPolicy {
  allowPrivate: boolean;
  /** How a host name is resolved: the system resolver (dns.lookup, as connecting would), or a test's. */
  lookup?: HostLookup;
}

const systemLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

const notAllowed = (why: string) => new DomainError("webhook_url_not_allowed", why);

/** Checks the URL's form (https unless private targets are allowed; no credentials in it). */
export function checkUrlForm(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed("the url is not an absolute URL");
  }
  const schemes = policy.allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) throw notAllowed("the url must use https");
  if (url.username || url.password) throw notAllowed("the url must not carry credentials");
  return url;
}

/** Resolves the host and returns the addresses to connect to, or throws webhook_url_not_allowed. */
export async function resolveAllowed(url: URL, policy: UrlPolicy): Promise<{ address: string; family: number }[]> {
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
