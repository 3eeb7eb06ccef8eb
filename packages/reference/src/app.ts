import { buildInfo, createService, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { CrmConfig } from './config.ts'

export { buildPayment } from './payment/app.ts'
export { buildWallet } from './wallet/app.ts'

export interface ReferenceOptions {
  logger?: FastifyServerOptions['logger']
}

function createReferenceService(name: string, devHost: string, logger: FastifyServerOptions['logger']): Service {
  return createService({
    name,
    healthPath: '/private/v1/health',
    domainGuard: { domain: buildInfo?.domain ?? null, devHost },
    logger,
  })
}

/** Builds the reference CRM module: only the contracts the gateway touches. */
export async function buildCrm(config: CrmConfig, { logger = false }: ReferenceOptions = {}): Promise<Service> {
  return createReferenceService('crm', config.PlatformDevHost, logger)
}
