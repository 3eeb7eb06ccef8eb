import { readFileSync } from 'node:fs'
import { createSecureContext } from 'node:tls'
import type { TlsOptions } from '@atrium/platform'
import type { GatewayConfig } from '../config.ts'

/**
 * The certificate and key named by `Tls.CertFile` and `Tls.KeyFile`, or undefined for plain HTTP
 * when neither is set. A file that cannot be read or holds no PEM block is a startup error naming
 * the setting; the key's contents never appear in the message.
 */
export function readTlsFiles(settings: GatewayConfig['Tls']): TlsOptions | undefined {
  if (!settings.CertFile && !settings.KeyFile) return undefined
  const files = {
    cert: readPem('Tls.CertFile', settings.CertFile, 'CERTIFICATE'),
    key: readPem('Tls.KeyFile', settings.KeyFile, 'PRIVATE KEY'),
  }
  try {
    createSecureContext(files)
  } catch (error) {
    // OpenSSL's reason ("key values mismatch", "bad decrypt") names no secret.
    throw new Error(`Tls.KeyFile: ${settings.KeyFile} does not fit Tls.CertFile (${(error as Error).message})`)
  }
  return files
}

function readPem(setting: string, path: string, label: string): Buffer {
  let pem: Buffer
  try {
    pem = readFileSync(path)
  } catch (error) {
    throw new Error(`${setting}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  // `-----BEGIN PRIVATE KEY-----`, `-----BEGIN EC PRIVATE KEY-----`, `-----BEGIN CERTIFICATE-----`
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(pem.toString('latin1'))) {
    throw new Error(`${setting}: ${path} holds no PEM ${label}`)
  }
  return pem
}
