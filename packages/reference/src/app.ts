import type { FastifyServerOptions } from 'fastify'

export { buildCrm } from './crm/app.ts'
export { buildPayment } from './payment/app.ts'
export { buildWallet } from './wallet/app.ts'

export interface ReferenceOptions {
  logger?: FastifyServerOptions['logger']
}
