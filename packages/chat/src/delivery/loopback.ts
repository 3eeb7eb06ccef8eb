import { isIPv4 } from 'node:net'

/** True for a host name or address of this machine: localhost, *.localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  if (name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true
  return isIPv4(name) && name.startsWith('127.')
}
