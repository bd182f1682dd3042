/**
 * OLM v1's TLS profiles on a real HTTPS server of the manager's (util/http-server): each case is
 * a TLS handshake from a client restricted as operator-controller's tls.feature steps restrict
 * theirs (only TLS 1.2, one cipher, one curve), and the profile of a renewed certificate.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ConnectionOptions } from 'node:tls';
import { closeServer, createSafeServer, listenOn, useCertificate } from './http-server.js';
import { createCertificateAuthority, issueCertificate, type CertificatePem } from './pki.js';
import { UsageError } from './errors.js';
import { tlsSettings, type TlsProfileFlags } from './tls-profile.js';

let leaf: CertificatePem;
before(async () => {
  // ECDSA P-256, as pki issues every serving certificate (upstream's e2e certificate is ECDSA too).
  leaf = await issueCertificate(await createCertificateAuthority('tls-profile-test'), { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
});

type Handshake = { ok: true; protocol: string; cipher: string; group: string } | { ok: false; error: string };

/** A TLS handshake with the client options given; what was negotiated, or why it failed. */
function handshake(port: number, client: ConnectionOptions): Promise<Handshake> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...client }, () => {
      const key = s.getEphemeralKeyInfo() as { name?: string } | null;
      resolve({ ok: true, protocol: s.getProtocol() ?? '', cipher: s.getCipher().standardName, group: key?.name ?? '' });
      s.end();
    });
    s.on('error', (err: Error) => resolve({ ok: false, error: err.message }));
  });
}

/** Serves under the flags' profile while `body` runs its handshakes. */
async function withServer(flags: TlsProfileFlags, body: (port: number, server: ReturnType<typeof createSafeServer>) => Promise<void>): Promise<void> {
  const server = createSafeServer((_req, res) => void res.end('ok'), { name: 'test', tls: { ...leaf, profile: tlsSettings(flags) } });
  const url = await listenOn(server, '127.0.0.1', 0);
  try {
    await body(Number(new URL(url).port), server);
  } finally {
    await closeServer(server);
  }
}

const TLS12 = { maxVersion: 'TLSv1.2' } as const;
const TLS11 = { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' } as const;
const AES128_GCM = 'ECDHE-ECDSA-AES128-GCM-SHA256';

describe('TLS profiles (--tls-profile and --tls-custom-*)', () => {
  test('intermediate, the default: TLS 1.3, or 1.2 with a forward-secret AEAD cipher; CBC ciphers and TLS 1.1 are refused', async () => {
    assert.deepEqual(tlsSettings({}), tlsSettings({ tlsProfile: 'intermediate' }));
    await withServer({}, async (port) => {
      const t13 = await handshake(port, {});
      assert.equal(t13.ok && t13.protocol, 'TLSv1.3');
      const gcm = await handshake(port, { ...TLS12, ciphers: AES128_GCM });
      assert.equal(gcm.ok && gcm.cipher, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256');
      assert.equal((await handshake(port, { ...TLS12, ciphers: 'ECDHE-ECDSA-AES128-SHA' })).ok, false, 'a CBC cipher is not in the intermediate profile');
      assert.equal((await handshake(port, TLS11)).ok, false, 'TLS 1.1 is below the profile');
    });
    // The control: the same TLS 1.1 client is served by the old profile, so the refusal above is the profile's.
    await withServer({ tlsProfile: 'old' }, async (port) => {
      const t11 = await handshake(port, TLS11);
      assert.equal(t11.ok && t11.protocol, 'TLSv1.1');
    });
  });

  test('modern and custom TLSv1.3: a TLS 1.3 connection is accepted, a client whose highest version is 1.2 is refused', async () => {
    for (const flags of [{ tlsProfile: 'modern' }, { tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.3' }]) {
      await withServer(flags, async (port) => {
        const t13 = await handshake(port, { minVersion: 'TLSv1.3' });
        assert.equal(t13.ok && t13.protocol, 'TLSv1.3', JSON.stringify(flags));
        assert.equal((await handshake(port, TLS12)).ok, false, JSON.stringify(flags));
      });
    }
  });

  test('custom ciphers: TLS 1.2 negotiates the configured cipher and refuses one not listed; TLS 1.3 keeps its own suites, as Go does', async () => {
    await withServer({ tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.2', tlsCustomCiphers: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', tlsCustomCurves: 'prime256v1' }, async (port) => {
      const gcm = await handshake(port, { ...TLS12, ciphers: AES128_GCM });
      assert.equal(gcm.ok && gcm.cipher, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256');
      const other = await handshake(port, { ...TLS12, ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' });
      assert.equal(other.ok, false, 'a cipher outside the list');
      const t13 = await handshake(port, { ecdhCurve: 'prime256v1' });
      assert.equal(t13.ok && t13.protocol, 'TLSv1.3');
    });
  });

  test('custom curves: a client offering only a listed curve is accepted (prime256v1 and its IANA name secp256r1), one offering only secp521r1 is refused', async () => {
    for (const curve of ['prime256v1', 'secp256r1']) {
      await withServer({ tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.2', tlsCustomCiphers: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', tlsCustomCurves: curve }, async (port) => {
        const ok = await handshake(port, { ...TLS12, ciphers: AES128_GCM, ecdhCurve: 'prime256v1' });
        assert.equal(ok.ok && ok.group, 'prime256v1', curve);
        assert.equal((await handshake(port, { ...TLS12, ciphers: AES128_GCM, ecdhCurve: 'secp521r1' })).ok, false, curve);
        // Key exchange alone (TLS 1.3, where the certificate's curve does not bind the groups): X25519 is not listed.
        assert.equal((await handshake(port, { minVersion: 'TLSv1.3', ecdhCurve: 'X25519' })).ok, false, `${curve}: X25519 refused`);
      });
    }
    // The control: the same X25519-only client is served by the default profile.
    await withServer({}, async (port) => {
      const x = await handshake(port, { minVersion: 'TLSv1.3', ecdhCurve: 'X25519' });
      assert.equal(x.ok && x.group, 'X25519');
    });
  });

  test('custom curves with the post-quantum hybrid SecP256r1MLKEM768 (OpenSSL 3.5, Node 24): a client offering only it is accepted and negotiates it', async () => {
    await withServer({ tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.2', tlsCustomCiphers: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', tlsCustomCurves: 'SecP256r1MLKEM768,secp256r1' }, async (port) => {
      const pq = await handshake(port, { ecdhCurve: 'SecP256r1MLKEM768' });
      assert.equal(pq.ok && pq.group, 'SecP256r1MLKEM768');
      assert.equal((await handshake(port, { ecdhCurve: 'secp521r1' })).ok, false);
    });
  });

  test('old: a TLS 1.0 client is accepted (OpenSSL 3 needs its security level lowered for that, which the profile does)', async () => {
    assert.match(tlsSettings({ tlsProfile: 'old' }).ciphers ?? '', /@SECLEVEL=0$/);
    await withServer({ tlsProfile: 'old' }, async (port) => {
      const t10 = await handshake(port, { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0' });
      assert.equal(t10.ok && t10.protocol, 'TLSv1');
    });
  });

  test('custom TLSv1.0 with TLS 1.3 suites only serves TLS 1.3 alone, as Go does', async () => {
    await withServer({ tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.0', tlsCustomCiphers: 'TLS_AES_128_GCM_SHA256' }, async (port) => {
      const t13 = await handshake(port, {});
      assert.equal(t13.ok && t13.cipher, 'TLS_AES_128_GCM_SHA256');
      assert.equal((await handshake(port, TLS12)).ok, false);
    });
  });

  test('a renewed certificate keeps the profile the server was made with', async () => {
    await withServer({ tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.3' }, async (port, server) => {
      const renewed = await issueCertificate(await createCertificateAuthority('tls-profile-renewed'), { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
      useCertificate(server, renewed);
      assert.equal((await handshake(port, TLS12)).ok, false, 'TLS 1.2 is still refused after the renewal');
      const t13 = await handshake(port, {});
      assert.equal(t13.ok && t13.protocol, 'TLSv1.3');
    });
  });

  test('bad flags are UsageErrors naming the flag and what it takes', () => {
    const cases: [TlsProfileFlags, RegExp][] = [
      [{ tlsProfile: 'strict' }, /^--tls-profile "strict": unknown TLS profile, expected one of custom, intermediate, modern, old$/],
      [{ tlsProfile: 'modern', tlsCustomVersion: 'TLSv1.3' }, /^--tls-custom-version: only used with --tls-profile=custom \(the profile is modern\)$/],
      [{ tlsCustomCiphers: 'TLS_AES_128_GCM_SHA256' }, /^--tls-custom-ciphers: only used with --tls-profile=custom/],
      [{ tlsProfile: 'custom', tlsCustomVersion: 'TLSv1.4' }, /^--tls-custom-version "TLSv1.4": unknown TLS version/],
      [{ tlsProfile: 'custom', tlsCustomCiphers: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,ECDHE-ECDSA-AES128-GCM-SHA256' }, /^--tls-custom-ciphers: unknown cipher "ECDHE-ECDSA-AES128-GCM-SHA256" \(Go's names/],
      [{ tlsProfile: 'custom', tlsCustomCiphers: 'TLS_RSA_WITH_RC4_128_SHA' }, /^--tls-custom-ciphers: TLS_RSA_WITH_RC4_128_SHA is not available in this runtime's OpenSSL/],
      [{ tlsProfile: 'custom', tlsCustomCurves: 'P-256' }, /^--tls-custom-curves: unknown curve "P-256"/],
    ];
    for (const [flags, message] of cases) assert.throws(() => tlsSettings(flags), (err: unknown) => err instanceof UsageError && message.test(err.message), JSON.stringify(flags));
    // Case as upstream's: the profile's name is matched without case.
    assert.equal(tlsSettings({ tlsProfile: 'Modern' }).profile, 'modern');
  });
});
