import { Type } from 'typebox'

/** Outbound webhook settings (docs/events.md); spread into the gateway's settings. */
export const webhookSettings = {
  Webhooks: Type.Object(
    {
      MaxAttempts: Type.Integer({
        default: 15,
        minimum: 1,
        maximum: 100,
        description: 'Attempts of one webhook delivery; after the last failed one it goes to the dead letters.',
      }),
      TimeoutMs: Type.Integer({
        default: 10_000,
        minimum: 100,
        maximum: 120_000,
        description: 'Time one delivery attempt may take, from connecting to the end of the answer.',
      }),
      BackoffBaseMs: Type.Integer({
        default: 5_000,
        minimum: 10,
        description: 'Pause after the first failed attempt; it doubles (with jitter) up to BackoffMaxMs.',
      }),
      BackoffMaxMs: Type.Integer({
        default: 3_600_000,
        minimum: 10,
        description: 'Longest pause between two attempts of a delivery.',
      }),
      MaxEvents: Type.Integer({
        default: 100,
        minimum: 1,
        maximum: 1000,
        description: 'Events one webhook request carries at most.',
      }),
      ReloadMs: Type.Integer({
        default: 5_000,
        minimum: 50,
        description:
          'Interval at which apps and their callback URLs are re-read, so CLI changes apply without a restart.',
      }),
      AllowPrivateAddresses: Type.Boolean({
        default: false,
        description: 'Let callback URLs reach loopback, private and link-local addresses (development and tests only).',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
}
