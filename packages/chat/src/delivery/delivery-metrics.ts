import { Counter, type Registry } from 'prom-client'
import type { OtpChannel } from './otp-channels.ts'

/** The delivery metrics: `atrium_delivery_failures_total` by channel (email, sms, telegram). */
export function createDeliveryMetrics(registry: Registry) {
  const failures = new Counter({
    name: 'atrium_delivery_failures_total',
    help: 'Codes and messages a delivery channel failed to send (the transport refused or could not be reached).',
    labelNames: ['channel'] as const,
    registers: [registry],
  })
  return {
    failed(channel: OtpChannel) {
      failures.inc({ channel })
    },
  }
}

export type DeliveryMetrics = ReturnType<typeof createDeliveryMetrics>
