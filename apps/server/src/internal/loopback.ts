import { isIP } from 'node:net';

/** True for a loopback host: `localhost`, `::1`, or an address in 127.0.0.0/8. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** The URL origin for a host and port (IPv6 literals in brackets). */
export function originOf(host: string, port: number): string {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  return `http://${isIP(h) === 6 ? `[${h}]` : h}:${port}`;
}
