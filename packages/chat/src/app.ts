import { buildInfo, createService, type Service } from '@atrium/platform'
import type { FastifyServerOptions } from 'fastify'
import type { ChatConfig } from './config.ts'

export interface ChatOptions {
  logger?: FastifyServerOptions['logger']
}

/** Builds the chat module with every capability registered; the caller listens. */
export async function buildChat(config: ChatConfig, { logger = false }: ChatOptions = {}): Promise<Service> {
  const app = createService({
    name: 'chat',
    healthPath: '/private/v1/health',
    domainGuard: { domain: buildInfo?.domain ?? null, devHost: config.PlatformDevHost },
    logger,
  })
  return app
}
