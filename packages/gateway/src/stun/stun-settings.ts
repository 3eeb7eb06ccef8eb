import { Type } from 'typebox'

/**
 * The embedded STUN responder's settings (docs/stun.md). Spread into the gateway's settings;
 * docs/configuration.md lists them with the rest.
 */
export const stunSettings = {
  Stun: Type.Object(
    {
      Enabled: Type.Boolean({
        default: true,
        description: 'Answer STUN Binding requests (RFC 8489) on UDP, for WebRTC NAT traversal.',
      }),
      Host: Type.String({
        default: '',
        pattern: '^([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)?$',
        description:
          "IP address the UDP socket binds to; empty: every address the gateway's HTTP(S) listener has (with `localhost`, 127.0.0.1 and ::1).",
      }),
      Port: Type.Integer({
        default: 0,
        minimum: 0,
        maximum: 65535,
        description:
          "UDP port; 0: the port number the gateway's HTTP(S) listener has, as the spec asks (so in development it follows `Port`).",
      }),
      Software: Type.String({
        default: 'Atrium',
        maxLength: 127,
        pattern: '^[^\\u0000-\\u001f\\u007f]*$',
        description:
          'SOFTWARE attribute of every answer (fewer than 128 characters, RFC 8489 §14.14); empty leaves it out.',
      }),
      Threads: Type.Integer({
        default: 0,
        minimum: 0,
        maximum: 64,
        description:
          'Worker threads that answer Binding requests, each with its own socket on the same address and port (SO_REUSEPORT; the kernel spreads clients over them); 0: on the main thread, beside HTTP.',
      }),
      TrackedSources: Type.Integer({
        default: 10_000,
        minimum: 1,
        maximum: 1_000_000,
        description:
          'Source IP addresses whose last 10 Binding requests each gateway keeps in memory for GET /auth/v1/stun/current; past it the address seen first goes.',
      }),
      ReportsPerHour: Type.Integer({
        default: 30,
        minimum: 1,
        maximum: 10_000,
        description:
          'POST /auth/v1/stun/report calls one user may make per hour on one gateway; more answer RateLimited.',
      }),
      ReportsPerUser: Type.Integer({
        default: 20,
        minimum: 1,
        maximum: 1000,
        description: 'Reports kept per user; a newer one removes their oldest.',
      }),
      ReportRetentionHours: Type.Integer({
        default: 168,
        minimum: 1,
        description: 'Reports older than this are deleted (when any report is stored).',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}
