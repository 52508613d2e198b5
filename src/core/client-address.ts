// Who the client is behind reverse proxies (TRUST_PROXY): the one place that reads X-Forwarded-For
// and X-Forwarded-Host, used by the HTTP app, the WebSocket handshake, the logs and the rate limits.
// The client writes the left end of X-Forwarded-For itself, so the chain is read from the right: each
// trusted hop vouches for the address to its left, and the first address no trusted hop wrote is
// where the walk stops.
import { BlockList, isIP } from 'node:net';

/** TRUST_PROXY, parsed: believe nothing, a number of proxy hops, or proxies by address. */
export type TrustProxy =
  | { readonly mode: 'off' }
  | { readonly mode: 'hops'; readonly hops: number }
  | { readonly mode: 'list'; readonly proxies: readonly string[] };

const IPV4_MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/** An IPv6 address without brackets in RFC 5952 form (lower case, longest zero run compressed). */
function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]`).hostname.slice(1, -1);
}

function mappedIpv4(canonical: string): string | undefined {
  const m = IPV4_MAPPED.exec(canonical);
  if (!m) return undefined;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** A bare IP address (no port, no brackets) in canonical form; IPv4-mapped IPv6 becomes IPv4. */
function canonicalIp(text: string): string | undefined {
  const version = isIP(text);
  if (version === 4) return text;
  if (version !== 6) return undefined;
  let v6: string;
  try {
    v6 = canonicalIpv6(text.replace(/%.*$/, '')); // a zone (fe80::1%eth0) names our interface, not the client
  } catch {
    return undefined; // never expected after isIP; a header must not be able to throw here
  }
  return mappedIpv4(v6) ?? v6;
}

function isPortSuffix(text: string): boolean {
  return text === '' || (/^:\d{1,5}$/.test(text) && Number(text.slice(1)) <= 65535);
}

/**
 * One address as a peer or an X-Forwarded-For entry writes it: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`,
 * `[2001:db8::1]`, `[2001:db8::1]:443`. Returns the canonical address, or undefined when malformed.
 */
export function parseAddress(raw: string): string | undefined {
  const text = raw.trim();
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0 || !isPortSuffix(text.slice(end + 1))) return undefined;
    const inner = text.slice(1, end);
    return isIP(inner) === 6 ? canonicalIp(inner) : undefined;
  }
  const colon = text.indexOf(':');
  if (colon >= 0 && colon === text.lastIndexOf(':')) {
    // One colon: IPv4 with a port.
    if (!isPortSuffix(text.slice(colon))) return undefined;
    const host = text.slice(0, colon);
    return isIP(host) === 4 ? host : undefined;
  }
  return canonicalIp(text);
}

function hextets(canonicalV6: string): number[] {
  const [head, tail] = canonicalV6.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((h) => parseInt(h, 16));
}

/**
 * The key under which rate limits and known login addresses count a client: the IPv4 address, or the
 * /64 of an IPv6 address (one subscriber usually holds a whole /64 and can pick any address in it).
 */
export function addressKey(address: string): string {
  const canonical = parseAddress(address);
  if (canonical === undefined) return address;
  if (isIP(canonical) === 4) return canonical;
  const prefix = hextets(canonical).slice(0, 4);
  return `${canonicalIpv6(`${prefix.map((h) => h.toString(16)).join(':')}::`)}/64`;
}

/** A TRUST_PROXY list entry: an address or a CIDR range; undefined when it is neither. */
export function parseProxyEntry(raw: string): { network: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [host = '', bits, ...extra] = raw.trim().split('/');
  if (extra.length > 0 || isIP(host) === 0) return undefined;
  const written = isIP(host) === 4 ? 4 : 6;
  const max = written === 4 ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return undefined;
  let prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return undefined;
  const network = canonicalIp(host)!;
  // ::ffff:10.0.0.0/104 means 10.0.0.0/8: addresses are compared after mapped IPv6 became IPv4.
  if (written === 6 && isIP(network) === 4) {
    if (prefix < 96) return { network: canonicalIpv6(host), prefix, family: 'ipv6' };
    prefix -= 96;
  }
  return { network, prefix, family: isIP(network) === 4 ? 'ipv4' : 'ipv6' };
}

function splitList(header: string | undefined): string[] {
  return header === undefined || header === '' ? [] : header.split(',');
}

/** The TRUST_PROXY rule, compiled once: which peers are proxies, and whom they say the client is. */
export class TrustedProxies {
  private readonly list: BlockList | undefined;

  constructor(readonly rule: TrustProxy) {
    if (rule.mode !== 'list') return;
    this.list = new BlockList();
    for (const raw of rule.proxies) {
      const entry = parseProxyEntry(raw);
      if (!entry) throw new Error(`not an IP address or CIDR range: "${raw}"`);
      this.list.addSubnet(entry.network, entry.prefix, entry.family);
    }
  }

  /** Whether the socket peer is a proxy whose forwarded headers we believe. */
  trustsPeer(peer: string | undefined): boolean {
    if (this.rule.mode === 'hops') return true;
    const address = peer === undefined ? undefined : parseAddress(peer);
    return address !== undefined && this.isListed(address);
  }

  /**
   * The client's address: the address the nearest untrusted hop gave. With N hops the socket peer is
   * hop 1 and X-Forwarded-For is read from the right, N entries at most; with a list, leftwards while
   * the current address is a listed proxy. A malformed or missing entry ends the walk: the last good
   * address is the client.
   */
  clientAddress(peer: string | undefined, forwardedFor: string | undefined): string {
    const socketPeer = peer === undefined ? '' : (parseAddress(peer) ?? peer);
    if (this.rule.mode === 'off' || socketPeer === '') return socketPeer;
    const chain = splitList(forwardedFor);
    let client = socketPeer;
    for (let hop = 1; hop <= chain.length; hop++) {
      if (!this.vouchesFor(client, hop)) break;
      const next = parseAddress(chain[chain.length - hop]!);
      if (next === undefined) break;
      client = next;
    }
    return client;
  }

  /** X-Forwarded-Host's first entry when a trusted proxy sent it, else undefined (use Host). */
  forwardedHost(peer: string | undefined, header: string | undefined): string | undefined {
    if (this.rule.mode === 'off' || !this.trustsPeer(peer)) return undefined;
    const first = splitList(header)[0]?.trim();
    return first === '' ? undefined : first;
  }

  /** Whether `address`, reached after `hop - 1` steps leftwards, is a proxy that wrote the next entry. */
  private vouchesFor(address: string, hop: number): boolean {
    if (this.rule.mode === 'hops') return hop <= this.rule.hops;
    return this.isListed(address);
  }

  private isListed(address: string): boolean {
    if (!this.list) return false;
    return this.list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  }
}
