import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The one name the certificates carry (no IP: the nodes are announced as 127.0.0.1). */
export const HOST_NAME = 'localhost';
const OPENSSL_TIMEOUT_MS = 15_000;

const run = (command: string, args: string[], timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args[0]} failed: ${String(stderr).trim() || error.message}`));
      else resolve();
    });
  });

const OPENSSL_CONFIG = (caName: string): string => `# Throw-away certificates for a local Redis; made by scripts/local/throwaway-ca.ts.
[req]
distinguished_name = dn
prompt = no
[dn]
CN = ${caName}
[ca_ext]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
# clientAuth too: a node presents the same certificate to the others on the cluster bus.
extendedKeyUsage = serverAuth,clientAuth
# The name only, no IP: nodes are announced as 127.0.0.1, which the certificate does not name.
subjectAltName = DNS:${HOST_NAME}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

/**
 * A throw-away CA (EC P-256, valid for a day) and a server certificate signed by it for DNS name
 * `localhost` only (no IP SAN), made by `openssl` in `dir` (created if missing). The CA's key is
 * deleted once it has signed, so nothing else can be signed by it.
 */
export const makeThrowawayCa = async (dir: string): Promise<{ caFile: string; certFile: string; keyFile: string }> => {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => join(dir, name);
  const [config, caKey, caFile, csr, certFile, keyFile] = [
    'openssl.cnf',
    'ca-key.pem',
    'ca.pem',
    'server.csr',
    'server.pem',
    'server-key.pem',
  ].map(file) as [string, string, string, string, string, string];
  await writeFile(config, OPENSSL_CONFIG(`local throw-away CA ${randomBytes(4).toString('hex')}`), { mode: 0o600 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  try {
    await run(
      'openssl',
      ['req', '-x509', ...ec, '-keyout', caKey, '-out', caFile, '-days', '1', '-config', config, '-extensions', 'ca_ext'],
      OPENSSL_TIMEOUT_MS,
    );
    await run(
      'openssl',
      ['req', '-new', ...ec, '-keyout', keyFile, '-out', csr, '-subj', `/CN=${HOST_NAME}`, '-config', config],
      OPENSSL_TIMEOUT_MS,
    );
    await run(
      'openssl',
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        caFile,
        '-CAkey',
        caKey,
        '-set_serial',
        `0x${randomBytes(12).toString('hex')}`,
        '-days',
        '1',
        '-extfile',
        config,
        '-extensions',
        'server_ext',
        '-out',
        certFile,
      ],
      OPENSSL_TIMEOUT_MS,
    );
    await chmod(keyFile, 0o600);
  } finally {
    await Promise.all([caKey, csr, config].map((path) => rm(path, { force: true })));
  }
  return { caFile, certFile, keyFile };
};
