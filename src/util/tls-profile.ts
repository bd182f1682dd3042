/**
 * OLM v1's TLS profiles for the servers the manager runs (metrics, the catalog API): the flags
 * `--tls-profile` (old, intermediate, modern, custom; default intermediate) and, for custom,
 * `--tls-custom-version`, `--tls-custom-ciphers` (Go's, that is IANA's, names) and
 * `--tls-custom-curves`, as operator-controller v1.11's `internal/shared/util/tlsprofiles`.
 * Profiles are Mozilla's server-side TLS guidelines (modern and intermediate from its 6.0 data,
 * old from 5.8), as there.
 *
 * Turned into what Node's TLS server takes: `minVersion`, an OpenSSL cipher string and an
 * `ecdhCurve` group list. As with Go's crypto/tls, the cipher list restricts TLS 1.2 and below:
 * TLS 1.3 keeps OpenSSL's suites unless the list names TLS 1.3 suites (Go ignores those; OpenSSL
 * enforces them). A profile below TLS 1.2 also lowers OpenSSL's security level to 0, without
 * which OpenSSL 3 refuses TLS 1.0 and 1.1 handshakes whatever the minimum says.
 */
import type { SecureVersion } from 'node:tls';
import { UsageError } from './errors.js';

export const TLS_PROFILE_NAMES = ['custom', 'intermediate', 'modern', 'old'] as const;
export type TlsProfileName = (typeof TLS_PROFILE_NAMES)[number];

/** What the four flags say, as given (undefined: not given). */
export interface TlsProfileFlags {
  tlsProfile?: string | undefined;
  tlsCustomVersion?: string | undefined;
  tlsCustomCiphers?: string | undefined;
  tlsCustomCurves?: string | undefined;
}

/** The part of a Node TLS server's options a profile sets. */
export interface TlsSettings {
  /** For logs: the profile's name. */
  profile: TlsProfileName;
  minVersion: SecureVersion;
  /** An OpenSSL cipher string; undefined: Node's default. */
  ciphers?: string;
  /** OpenSSL group names joined by ':'; undefined: Node's default ('auto'). */
  ecdhCurve?: string;
}

const VERSIONS: Record<string, SecureVersion> = { 'TLSv1.0': 'TLSv1', 'TLSv1.1': 'TLSv1.1', 'TLSv1.2': 'TLSv1.2', 'TLSv1.3': 'TLSv1.3' };

/** Go's cipher suite names (crypto/tls CipherSuites and InsecureCipherSuites) and OpenSSL's. */
const CIPHERS: Record<string, string> = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: 'ECDHE-RSA-DES-CBC3-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA256: 'AES128-SHA256',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: 'DES-CBC3-SHA',
  // Go knows these; OpenSSL 3 has no RC4: refused below when named (upstream's profiles name none).
  TLS_RSA_WITH_RC4_128_SHA: 'RC4-SHA',
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: 'ECDHE-ECDSA-RC4-SHA',
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: 'ECDHE-RSA-RC4-SHA',
};

/** The curve names `--tls-custom-curves` takes (upstream's) and OpenSSL's group names. */
const CURVES: Record<string, string> = {
  X25519MLKEM768: 'X25519MLKEM768',
  X25519: 'X25519',
  prime256v1: 'prime256v1',
  secp256r1: 'prime256v1', // IANA's name for prime256v1
  secp384r1: 'secp384r1',
  secp521r1: 'secp521r1',
  SecP256r1MLKEM768: 'SecP256r1MLKEM768',
  SecP384r1MLKEM1024: 'SecP384r1MLKEM1024',
};

interface Profile {
  version: string;
  ciphers: string[];
  curves: string[];
}

const TLS13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
const MOZILLA_CURVES = ['X25519MLKEM768', 'X25519', 'prime256v1', 'secp384r1'];
/** Intermediate's TLS 1.2 ciphers: forward-secret AEAD only; old starts with them too. */
const ECDHE_AEAD = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
];

/** Mozilla's guidelines as upstream embeds them (mozilla_data.json 6.0; old_profile.go from 5.8). */
const PROFILES: Record<Exclude<TlsProfileName, 'custom'>, Profile> = {
  modern: { version: 'TLSv1.3', ciphers: TLS13, curves: MOZILLA_CURVES },
  intermediate: { version: 'TLSv1.2', ciphers: [...TLS13, ...ECDHE_AEAD], curves: MOZILLA_CURVES },
  old: {
    version: 'TLSv1.0',
    ciphers: [
      ...TLS13,
      ...ECDHE_AEAD,
      'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
      'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
      'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
      'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
      'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
      'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
      'TLS_RSA_WITH_AES_128_GCM_SHA256',
      'TLS_RSA_WITH_AES_256_GCM_SHA384',
      'TLS_RSA_WITH_AES_128_CBC_SHA256',
      'TLS_RSA_WITH_AES_128_CBC_SHA',
      'TLS_RSA_WITH_AES_256_CBC_SHA',
      'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
    ],
    curves: MOZILLA_CURVES,
  },
};

/** A comma-separated flag value (upstream reads it as one CSV record), blanks dropped. */
function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** node:tls, loaded only when a profile is checked: `--help` loads this file's names and nothing else. */
function createSecureContext(options: { ecdhCurve?: string; ciphers?: string; minVersion?: SecureVersion }): unknown {
  return process.getBuiltinModule('node:tls').createSecureContext(options);
}

/** Whether this runtime's OpenSSL takes the group (Node 20's OpenSSL 3.0 has no ML-KEM hybrids). */
function groupSupported(group: string): boolean {
  try {
    createSecureContext({ ecdhCurve: group });
    return true;
  } catch {
    return false;
  }
}

/** Whether this runtime's OpenSSL has the cipher (OpenSSL 3 has no RC4). */
function cipherSupported(cipher: string): boolean {
  try {
    createSecureContext({ ciphers: cipher.startsWith('TLS_') ? `${cipher}:ECDHE-ECDSA-AES128-GCM-SHA256` : cipher });
    return true;
  } catch {
    return false;
  }
}

/**
 * The settings the flags ask for, checked: an unknown profile, version, cipher or curve, custom
 * flags without `--tls-profile=custom`, or a cipher or curve this runtime's OpenSSL lacks is a
 * UsageError naming the flag. A built-in profile leaves out what the runtime lacks, as upstream
 * leaves out what Go lacks.
 */
export function tlsSettings(flags: TlsProfileFlags): TlsSettings {
  const name = (flags.tlsProfile ?? 'intermediate').toLowerCase();
  if (!(TLS_PROFILE_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--tls-profile ${JSON.stringify(flags.tlsProfile)}: unknown TLS profile, expected one of ${TLS_PROFILE_NAMES.join(', ')}`);
  }
  const profile = name as TlsProfileName;
  const customGiven = ([['--tls-custom-version', flags.tlsCustomVersion], ['--tls-custom-ciphers', flags.tlsCustomCiphers], ['--tls-custom-curves', flags.tlsCustomCurves]] as const).filter(([, v]) => v !== undefined);
  if (profile !== 'custom' && customGiven.length > 0) {
    throw new UsageError(`${customGiven.map(([f]) => f).join(', ')}: only used with --tls-profile=custom (the profile is ${profile})`);
  }
  if (profile !== 'custom') {
    const p = PROFILES[profile];
    return settingsOf(profile, p.version, p.ciphers.filter((c) => cipherSupported(CIPHERS[c] as string)), p.curves.filter((c) => groupSupported(CURVES[c] as string)));
  }
  const version = flags.tlsCustomVersion ?? 'TLSv1.2';
  if (VERSIONS[version] === undefined) throw new UsageError(`--tls-custom-version ${JSON.stringify(version)}: unknown TLS version, expected one of ${Object.keys(VERSIONS).join(', ')}`);
  const ciphers = list(flags.tlsCustomCiphers);
  for (const c of ciphers) {
    const openssl = CIPHERS[c];
    if (openssl === undefined) throw new UsageError(`--tls-custom-ciphers: unknown cipher ${JSON.stringify(c)} (Go's names, such as TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)`);
    if (!cipherSupported(openssl)) throw new UsageError(`--tls-custom-ciphers: ${c} is not available in this runtime's OpenSSL ${process.versions.openssl}`);
  }
  const curves = list(flags.tlsCustomCurves);
  for (const c of curves) {
    const group = CURVES[c];
    if (group === undefined) throw new UsageError(`--tls-custom-curves: unknown curve ${JSON.stringify(c)}, expected some of ${Object.keys(CURVES).join(', ')}`);
    if (!groupSupported(group)) throw new UsageError(`--tls-custom-curves: ${c} is not available in this runtime's OpenSSL ${process.versions.openssl}`);
  }
  const settings = settingsOf('custom', version, ciphers, curves);
  // What OpenSSL itself refuses (a legacy version with TLS 1.3 suites only, say) is said here, by flag, not at the first server.
  try {
    createSecureContext({ ...(settings.ciphers === undefined ? {} : { ciphers: settings.ciphers }), ...(settings.ecdhCurve === undefined ? {} : { ecdhCurve: settings.ecdhCurve }), minVersion: settings.minVersion });
  } catch (err) {
    throw new UsageError(`--tls-custom-version ${version} with --tls-custom-ciphers ${JSON.stringify(flags.tlsCustomCiphers ?? '')}: OpenSSL refuses the combination (${err instanceof Error ? err.message : String(err)})`);
  }
  return settings;
}

/** OpenSSL's name of a cipher suite given by Go's (IANA's) name, as `--tls-custom-ciphers` takes it; undefined for an unknown one. */
export function opensslCipherName(goName: string): string | undefined {
  return CIPHERS[goName];
}

/** OpenSSL's group name of a curve given as `--tls-custom-curves` takes it; undefined for an unknown one. */
export function opensslGroupName(curve: string): string | undefined {
  return CURVES[curve];
}

/**
 * The OpenSSL cipher string for these suites (OpenSSL's names), or undefined for Node's default.
 * TLS 1.0 and 1.1 need OpenSSL's security level lowered: on the list of TLS 1.2-and-below suites,
 * so a list of TLS 1.3 suites alone lowers nothing (Go then serves TLS 1.3 only, and so does this).
 */
function cipherStringOf(names: readonly string[], legacy: boolean): string | undefined {
  const lower = legacy ? ['@SECLEVEL=0'] : [];
  // No suites named: Node's default list (not OpenSSL's wider DEFAULT), lowered for TLS 1.0 and 1.1.
  if (names.length === 0) return legacy ? [process.getBuiltinModule('node:tls').DEFAULT_CIPHERS, ...lower].join(':') : undefined;
  const below13 = names.some((n) => !n.startsWith('TLS_'));
  return [...names, ...(below13 ? lower : [])].join(':');
}

function settingsOf(profile: TlsProfileName, version: string, ciphers: string[], curves: string[]): TlsSettings {
  const minVersion = VERSIONS[version] as SecureVersion;
  const legacy = minVersion === 'TLSv1' || minVersion === 'TLSv1.1';
  const cipherString = cipherStringOf(ciphers.map((c) => CIPHERS[c] as string), legacy);
  const groups = [...new Set(curves.map((c) => CURVES[c] as string))];
  return {
    profile,
    minVersion,
    ...(cipherString === undefined ? {} : { ciphers: cipherString }),
    ...(groups.length === 0 ? {} : { ecdhCurve: groups.join(':') }),
  };
}
