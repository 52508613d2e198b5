// The client address behind proxies (TRUST_PROXY): address parsing, the rate-limit key (IPv6 by
// /64, IPv4-mapped IPv6 as IPv4), the walk along X-Forwarded-For by hops and by proxy list, and the
// address the running service logs. Rate limits by it: rate-limit.test.ts; WebSocket: websocket.test.ts.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addressKey, parseAddress, parseProxyEntry, TrustedProxies } from '../src/core/client-address.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ApiClient } from './helpers/client.js';
import { capturingLogger, flushed, type LogLine } from './helpers/log.js';

const off = new TrustedProxies({ mode: 'off' });
const hops = (n: number) => new TrustedProxies({ mode: 'hops', hops: n });
const list = (...proxies: string[]) => new TrustedProxies({ mode: 'list', proxies });

describe('parseAddress', () => {
  it('reads IPv4 and IPv6 addresses, with or without a port, in canonical form', () => {
    const cases: [string, string][] = [
      ['192.0.2.7', '192.0.2.7'],
      [' 192.0.2.7 ', '192.0.2.7'],
      ['192.0.2.7:8080', '192.0.2.7'],
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
      ['[2001:db8::1]', '2001:db8::1'],
      ['[2001:db8::1]:443', '2001:db8::1'],
      ['fe80::1%eth0', 'fe80::1'],
      ['::1', '::1'],
    ];
    for (const [raw, canonical] of cases) assert.equal(parseAddress(raw), canonical, raw);
  });

  it('reads IPv4-mapped IPv6 as the IPv4 address, dotted or in hex', () => {
    assert.equal(parseAddress('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(parseAddress('::FFFF:c000:0207'), '192.0.2.7');
    assert.equal(parseAddress('[::ffff:10.0.0.1]:9000'), '10.0.0.1');
  });

  it('refuses anything else', () => {
    for (const raw of ['', ' ', 'unknown', '_hidden', '192.0.2', '192.0.2.256', '01.2.3.4', '192.0.2.7:', '192.0.2.7:65536', '192.0.2.7:x', '[192.0.2.7]', '[::1', '[::1]x', '::1%', 'example.com', '1.2.3.4, 5.6.7.8']) {
      assert.equal(parseAddress(raw), undefined, JSON.stringify(raw));
    }
  });
});

describe('addressKey', () => {
  it('keeps an IPv4 address as it is', () => {
    assert.equal(addressKey('192.0.2.7'), '192.0.2.7');
  });

  it('groups IPv6 addresses by their /64', () => {
    assert.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:0:0:0:9'), '2001:db8:1:2::/64');
    assert.notEqual(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'));
    assert.equal(addressKey('::1'), '::/64');
  });

  it('counts IPv4-mapped IPv6 as the IPv4 address', () => {
    assert.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(addressKey('::ffff:c000:207'), '192.0.2.7');
  });
});

describe('parseProxyEntry', () => {
  it('reads addresses and CIDR ranges of both families', () => {
    assert.deepEqual(parseProxyEntry('10.0.0.0/8'), { network: '10.0.0.0', prefix: 8, family: 'ipv4' });
    assert.deepEqual(parseProxyEntry('192.0.2.7'), { network: '192.0.2.7', prefix: 32, family: 'ipv4' });
    assert.deepEqual(parseProxyEntry('::1'), { network: '::1', prefix: 128, family: 'ipv6' });
    assert.deepEqual(parseProxyEntry('fd00::/8'), { network: 'fd00::', prefix: 8, family: 'ipv6' });
    assert.deepEqual(parseProxyEntry('::ffff:10.0.0.0/104'), { network: '10.0.0.0', prefix: 8, family: 'ipv4' });
  });

  it('refuses prefixes out of range and what is not an address', () => {
    for (const raw of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/x', '10.0.0.0/8/8', 'proxy.local', '', '[::1]', '10.0.0.1:80']) {
      assert.equal(parseProxyEntry(raw), undefined, raw);
    }
  });
});

describe('TrustedProxies.clientAddress', () => {
  describe('TRUST_PROXY off', () => {
    it('is the socket peer whatever X-Forwarded-For says', () => {
      assert.equal(off.clientAddress('192.0.2.7', '198.51.100.1'), '192.0.2.7');
      assert.equal(off.clientAddress('::ffff:192.0.2.7', undefined), '192.0.2.7');
      assert.equal(off.clientAddress(undefined, '198.51.100.1'), '');
    });
  });

  describe('a number of hops', () => {
    it('with one hop, is the address the proxy appended (the rightmost entry), never one the client wrote', () => {
      assert.equal(hops(1).clientAddress('10.0.0.1', '203.0.113.9'), '203.0.113.9');
      assert.equal(hops(1).clientAddress('10.0.0.1', '1.1.1.1, 2.2.2.2, 203.0.113.9'), '203.0.113.9');
      assert.equal(hops(1).clientAddress('10.0.0.1', '1.1.1.1,203.0.113.9'), '203.0.113.9');
    });

    it('with N hops, is the N-th entry from the right', () => {
      assert.equal(hops(2).clientAddress('10.0.0.2', 'forged, 203.0.113.9, 10.0.0.1'), '203.0.113.9');
      assert.equal(hops(3).clientAddress('10.0.0.3', '6.6.6.6, 203.0.113.9, 10.0.0.1, 10.0.0.2'), '203.0.113.9');
    });

    it('is the leftmost entry when the chain is shorter than the hops, and the peer without X-Forwarded-For', () => {
      assert.equal(hops(3).clientAddress('10.0.0.2', '203.0.113.9'), '203.0.113.9');
      assert.equal(hops(1).clientAddress('10.0.0.1', undefined), '10.0.0.1');
      assert.equal(hops(1).clientAddress('10.0.0.1', ''), '10.0.0.1');
    });

    it('stops at a malformed entry: the last good address is the client', () => {
      assert.equal(hops(1).clientAddress('10.0.0.1', '203.0.113.9, unknown'), '10.0.0.1');
      assert.equal(hops(2).clientAddress('10.0.0.2', '203.0.113.9, garbage, 10.0.0.1'), '10.0.0.1');
      assert.equal(hops(2).clientAddress('10.0.0.2', '203.0.113.9,,10.0.0.1'), '10.0.0.1');
      assert.equal(hops(2).clientAddress('10.0.0.2', 'garbage, 203.0.113.9, 10.0.0.1'), '203.0.113.9');
    });

    it('reads ports, brackets and IPv4-mapped IPv6 in the chain', () => {
      assert.equal(hops(1).clientAddress('10.0.0.1', '[2001:db8::7]:51000'), '2001:db8::7');
      assert.equal(hops(1).clientAddress('10.0.0.1', '203.0.113.9:51000'), '203.0.113.9');
      assert.equal(hops(1).clientAddress('::1', '::ffff:203.0.113.9'), '203.0.113.9');
    });
  });

  describe('a list of proxies', () => {
    const proxies = list('10.0.0.0/8', '::1', '2001:db8:ffff::/48');

    it('ignores X-Forwarded-For from a peer that is not a listed proxy', () => {
      assert.equal(proxies.clientAddress('203.0.113.5', '198.51.100.1'), '203.0.113.5');
    });

    it('walks from the peer leftwards while the address is a listed proxy', () => {
      assert.equal(proxies.clientAddress('10.0.0.1', 'forged, 203.0.113.9, 10.1.2.3'), '203.0.113.9');
      assert.equal(proxies.clientAddress('10.0.0.1', '203.0.113.9'), '203.0.113.9');
      assert.equal(proxies.clientAddress('::1', '2001:db8:1::1, 2001:db8:ffff:1::1, 10.0.0.2'), '2001:db8:1::1');
    });

    it('matches IPv4 ranges against IPv4-mapped peers, and IPv6 ranges against IPv6 peers', () => {
      assert.equal(proxies.clientAddress('::ffff:10.9.9.9', '203.0.113.9'), '203.0.113.9');
      assert.equal(proxies.clientAddress('2001:db8:ffff:42::1', '203.0.113.9'), '203.0.113.9');
      assert.equal(proxies.clientAddress('2001:db8:fffe::1', '203.0.113.9'), '2001:db8:fffe::1');
      assert.equal(proxies.clientAddress('::2', '203.0.113.9'), '::2');
    });

    it('stops at a malformed entry, and at the leftmost entry when every hop is a proxy', () => {
      assert.equal(proxies.clientAddress('10.0.0.1', '203.0.113.9, bogus, 10.0.0.9'), '10.0.0.9');
      assert.equal(proxies.clientAddress('10.0.0.1', '10.0.0.3, 10.0.0.2'), '10.0.0.3');
    });

    it('a forged leftmost entry cannot choose the address, however many entries it adds', () => {
      const chain = `${Array.from({ length: 50 }, (_, i) => `10.0.${i}.1`).join(', ')}, 203.0.113.9, 10.0.0.2`;
      assert.equal(proxies.clientAddress('10.0.0.1', chain), '203.0.113.9');
    });
  });
});

describe('TrustedProxies.clientAddress on arbitrary headers', () => {
  const entry = fc.oneof(fc.ipV4(), fc.ipV6(), fc.string(), fc.constantFrom('[::1]:80', '::ffff:10.0.0.1', 'fe80::1%eth0', '', ' '));
  const header = fc.array(entry, { maxLength: 8 }).map((entries) => entries.join(','));

  it('never throws, and answers the peer or an address that is an entry of the header', () => {
    for (const rule of [hops(1), hops(3), list('10.0.0.0/8', '::/0')]) {
      fc.assert(
        fc.property(header, (xff) => {
          const client = rule.clientAddress('10.0.0.1', xff);
          const candidates = ['10.0.0.1', ...xff.split(',').map((e) => parseAddress(e))];
          assert.ok(candidates.includes(client), `${client} from ${JSON.stringify(xff)}`);
        }),
        { numRuns: 300 },
      );
    }
  });
});

describe('TrustedProxies.forwardedHost', () => {
  it('believes X-Forwarded-Host only from a trusted peer', () => {
    assert.equal(off.forwardedHost('10.0.0.1', 'dds.example'), undefined);
    assert.equal(hops(1).forwardedHost('10.0.0.1', 'dds.example, other.example'), 'dds.example');
    assert.equal(hops(1).forwardedHost('10.0.0.1', ''), undefined);
    assert.equal(list('10.0.0.0/8').forwardedHost('10.0.0.1', 'dds.example'), 'dds.example');
    assert.equal(list('10.0.0.0/8').forwardedHost('203.0.113.5', 'dds.example'), undefined);
  });
});

describe('client address of HTTP requests (the request log)', () => {
  // An anonymous request logged at info (healthy health checks are logged at debug).
  const PATH = '/rest/latest/auth-tokens/public-key';

  /** The ip of the request log line of one anonymous GET sent with the given X-Forwarded-For. */
  async function loggedIp(app: TestApp, lines: LogLine[], forwardedFor?: string): Promise<unknown> {
    const before = lines.length;
    const headers: Record<string, string> = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
    assert.equal((await new ApiClient(app.url).get(PATH, { headers })).status, 200);
    await flushed();
    const line = lines.slice(before).find((l) => l.msg === 'request' && l.path === PATH);
    assert.ok(line, 'a request log line');
    return line.ip;
  }

  describe('TRUST_PROXY as a list of proxies', () => {
    const { log, lines } = capturingLogger('info');
    let app: TestApp;
    before(async () => {
      // The test client connects from loopback: it plays the nearest proxy.
      app = await startTestApp('pglite', { TRUST_PROXY: '127.0.0.0/8,::1,10.0.0.0/8' }, log);
    });
    after(() => app.stop());

    it('ignores a forged leftmost X-Forwarded-For entry', async () => {
      assert.equal(await loggedIp(app, lines, '6.6.6.6, 203.0.113.9'), '203.0.113.9');
    });

    it('follows a chain of trusted proxies to the client', async () => {
      assert.equal(await loggedIp(app, lines, '6.6.6.6, 203.0.113.9, 10.0.0.7, 10.0.0.1'), '203.0.113.9');
    });

    it('stops at the first address that is not a trusted proxy', async () => {
      assert.equal(await loggedIp(app, lines, '203.0.113.9, 198.51.100.4, 10.0.0.1'), '198.51.100.4');
    });

    it('is the peer without X-Forwarded-For, or when the entry is malformed', async () => {
      assert.equal(await loggedIp(app, lines), '127.0.0.1');
      assert.equal(await loggedIp(app, lines, '203.0.113.9, not-an-address'), '127.0.0.1');
    });
  });

  describe('TRUST_PROXY off (the default) and a proxy list without the peer', () => {
    const { log, lines } = capturingLogger('info');
    let off: TestApp;
    let elsewhere: TestApp;
    before(async () => {
      off = await startTestApp('pglite', {}, log);
      elsewhere = await startTestApp('pglite', { TRUST_PROXY: '10.0.0.0/8' }, log);
    });
    after(async () => {
      await off.stop();
      await elsewhere.stop();
    });

    it('believes no X-Forwarded-For', async () => {
      assert.equal(await loggedIp(off, lines, '203.0.113.9'), '127.0.0.1');
      assert.equal(await loggedIp(elsewhere, lines, '203.0.113.9'), '127.0.0.1');
    });
  });

  describe('TRUST_PROXY as a number of hops', () => {
    const { log, lines } = capturingLogger('info');
    let app: TestApp;
    before(async () => {
      app = await startTestApp('pglite', { TRUST_PROXY: '2' }, log);
    });
    after(() => app.stop());

    it('takes the second entry from the right, whatever the client wrote to its left', async () => {
      assert.equal(await loggedIp(app, lines, '6.6.6.6, 203.0.113.9, 10.0.0.1'), '203.0.113.9');
      assert.equal(await loggedIp(app, lines, '7.7.7.7, 6.6.6.6, 203.0.113.9, 10.0.0.1'), '203.0.113.9');
    });
  });
});
