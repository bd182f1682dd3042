/** What a TLS server shows a new connection, for tests of certificate renewal. */
import { connect } from 'node:tls';

/** The SHA-256 fingerprint of the certificate the server at 127.0.0.1:`port` shows a new connection (not checked). */
export function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(s.getPeerX509Certificate()?.fingerprint256 ?? '');
      s.end();
    });
    s.on('error', reject);
  });
}
