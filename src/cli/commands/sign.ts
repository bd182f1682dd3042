/**
 * `binnacle sign`: sign what `catalog publish`, `bundle build --push` and `helm bundle` pushed, as
 * `cosign sign --key` does (signatures under the `sha256-<hex>.sig` tag, no transparency log), so
 * that a `verify` policy accepts it and `cosign verify --key cosign.pub --insecure-ignore-tlog`
 * agrees. `sign generate-key` makes the key pair; `sign verify` checks a reference locally.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { BinnacleError } from '../../util/errors.js';
import { toJson } from '../../util/output.js';
import type { CliContext } from '../context.js';

const oci = (): Promise<typeof import('../../oci/index.js')> => import('../../oci/index.js');

/** The private key's passphrase: BINNACLE_SIGN_PASSWORD, or COSIGN_PASSWORD as cosign users have it. */
function passphrase(): string {
  return process.env.BINNACLE_SIGN_PASSWORD ?? process.env.COSIGN_PASSWORD ?? '';
}

async function readKeyFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new BinnacleError('input', 'SIGNATURE_KEY_FILE', `${what} ${path} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function writeNew(path: string, text: string, mode: number): Promise<void> {
  try {
    await writeFile(path, text, { flag: 'wx', mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new BinnacleError('input', 'SIGNATURE_KEY_EXISTS', `${path} exists already; remove it or choose another --output-key-prefix`);
    throw err;
  }
}

export function registerSignCommands(program: Command, ctx: CliContext): void {
  const sign = program
    .command('sign')
    .description('Sign pushed catalog, bundle and chart images with a local key (cosign-compatible), make keys, verify signatures')
    .argument('[refs...]', 'images to sign, by tag or digest (a tag is signed at the digest it names now)')
    .option('--key <file>', 'PEM private key (from `binnacle sign generate-key`; passphrase in BINNACLE_SIGN_PASSWORD)')
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (refs: string[], opts: { key?: string; insecure?: boolean }) => {
      if (refs.length === 0 || opts.key === undefined) throw new BinnacleError('input', 'USAGE', 'usage: binnacle sign <ref>... --key cosign.key', { exitCode: 2 });
      const { RegistryClient, parsePrivateKey, signImage } = await oci();
      const key = parsePrivateKey(await readKeyFile(opts.key, '--key'), opts.key, passphrase());
      const client = new RegistryClient({ logger: ctx.logger, ...(opts.insecure === true ? { insecure: true } : {}) });
      for (const ref of refs) {
        const r = await signImage(client, ref, key);
        ctx.out(`${r.added ? 'signed' : 'already signed with this key'}: ${r.signed}\nsignature: ${r.signatureRef}\n`);
      }
    });

  sign
    .command('generate-key')
    .description('Make an ECDSA P-256 key pair: PREFIX.key (PKCS#8 PEM, encrypted when BINNACLE_SIGN_PASSWORD is set) and PREFIX.pub')
    .option('--output-key-prefix <prefix>', 'file name prefix', 'cosign')
    .action(async (opts: { outputKeyPrefix: string }) => {
      const { generateSigningKeyPair } = await oci();
      const pair = generateSigningKeyPair(passphrase());
      await writeNew(`${opts.outputKeyPrefix}.key`, pair.privateKey, 0o600);
      await writeNew(`${opts.outputKeyPrefix}.pub`, pair.publicKey, 0o644);
      ctx.out(`private key: ${opts.outputKeyPrefix}.key\npublic key:  ${opts.outputKeyPrefix}.pub (put it in the verification Secret: kubectl create secret generic KEYS --from-file=${opts.outputKeyPrefix}.pub)\n`);
    });

  sign
    .command('verify <ref>')
    .description('Check that a trusted public key signed what <ref> names, as a verify policy does')
    .requiredOption('--key <file>', 'PEM public key (repeatable: any of them may have signed)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (ref: string, opts: { key: string[]; insecure?: boolean }) => {
      const { RegistryClient, parsePublicKey, parseReference, verifyImageSignature } = await oci();
      const keys = await Promise.all(opts.key.map(async (file) => ({ name: file, key: parsePublicKey(await readKeyFile(file, '--key'), file) })));
      const client = new RegistryClient({ logger: ctx.logger, ...(opts.insecure === true ? { insecure: true } : {}) });
      const parsed = parseReference(ref);
      const digest = parsed.digest ?? (await client.getManifest(parsed)).digest;
      const verified = await verifyImageSignature(client, parsed, digest, keys);
      ctx.out(toJson({ ref, digest, key: verified.keyName, signature: verified.layerDigest }));
    });
}
