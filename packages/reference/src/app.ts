import { buildInfo, createService, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { CrmConfig, WalletConfig } from './config.ts'

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

/** Builds the reference wallet module: only the contracts the gateway touches. */
export async function buildWallet(config: WalletConfig, { logger = false }: ReferenceOptions = {}): Promise<Service> {
  return createReferenceService('wallet', config.PlatformDevHost, logger)
}

/** Builds the reference CRM module: only the contracts the gateway touches. */
export async function buildCrm(config: CrmConfig, { logger = false }: ReferenceOptions = {}): Promise<Service> {
  return createReferenceService('crm', config.PlatformDevHost, logger)
}
