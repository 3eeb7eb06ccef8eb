import { buildInfo, createService, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { GatewayConfig } from './config.ts'

export interface GatewayOptions {
  logger?: FastifyServerOptions['logger']
}

/** Builds the gateway with every capability registered; the caller listens. */
export async function buildGateway(config: GatewayConfig, { logger = false }: GatewayOptions = {}): Promise<Service> {
  const app = createService({
    name: 'gateway',
    healthPath: '/auth/v1/health',
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: config.PlatformDevHost },
    logger,
  })
  return app
}
