import type { Service } from '@atrium/platform'
import type { loadCountryLookup } from '../audit/country.ts'
import type { GatewayConfig } from '../config.ts'
import { createModuleCaller } from '../proxy/module-call.ts'
import type { ModuleDirectory } from '../proxy/module-instances.ts'
import type { GatewayStore } from '../store.ts'
import mcpPlugin from './mcp.plugin.ts'
import mcpAccessPlugin from './mcp-access.plugin.ts'

export interface McpInstallOptions {
  config: GatewayConfig
  store: GatewayStore
  modules: ModuleDirectory
  lookupCountry: Awaited<ReturnType<typeof loadCountryLookup>>
  /** The gateway's API version, the MCP server's version. */
  version: string
}

/**
 * MCP for AI assistants (docs/mcp.md): the endpoint, whose tools are granted by a whitelist and
 * call the modules through the route map with the caller's identity and the signed hop, like a
 * proxied request; and what the signed-in user's assistants may do, for their account page
 * (NotFound while MCP is off).
 */
export function installMcp(
  app: Service,
  { config, store, modules: moduleDirectory, lookupCountry, version }: McpInstallOptions,
): void {
  if (config.Mcp.Enabled) {
    const modules = createModuleCaller({
      routes: store.routes,
      modules: moduleDirectory,
      settings: config.Proxy,
      serviceSecret: config.ServiceSecret,
      cookieName: config.Sessions.CookieName,
      lookupCountry,
      maxAnswerBytes: config.Mcp.MaxAnswerBytes,
    })
    app.addHook('onClose', () => modules.close())
    app.register(mcpPlugin, {
      prefix: '/auth/v1',
      grants: store.mcpGrants,
      audit: store.mcpAudit,
      modules,
      settings: config.Mcp,
      publicOrigin: config.PublicOrigin,
      version,
    })
  }

  app.register(mcpAccessPlugin, {
    prefix: '/auth/v1',
    grants: store.mcpGrants,
    apiKeys: store.apiKeys,
    publicOrigin: config.PublicOrigin,
    enabled: config.Mcp.Enabled,
    now: store.now,
  })
}
