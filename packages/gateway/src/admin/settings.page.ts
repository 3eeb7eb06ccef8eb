import { html } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import { redactConfig } from '../cli/redact.ts'
import type { GatewayConfig } from '../config.ts'
import type { ModuleVersions } from '../server/module-versions.ts'
import { ADMIN_ROOT, type AdminContext, pageQuery, sendAdminPage } from './admin-shell.ts'

export interface SettingsPageOptions extends AdminContext {
  config: GatewayConfig
  /** The processes' versions, shown above the settings. */
  moduleVersions: ModuleVersions
}

const PAGE = `${ADMIN_ROOT}/Settings`

/**
 * Settings the gateway follows while running, with the page that changes them. Every other
 * setting is read at start (config file or environment) and needs a restart.
 */
const LIVE: Record<string, string> = {
  'Proxy.Routes': 'seeds the route map at start; the route map itself changes live on the Routes page',
}

/** Settings as dotted names and display values, in the config's order. */
function flatten(value: unknown, prefix: string, out: [string, string][]): [string, string][] {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value)
    if (entries.length === 0) out.push([prefix, '{}'])
    for (const [key, child] of entries) flatten(child, prefix ? `${prefix}.${key}` : key, out)
    return out
  }
  out.push([prefix, typeof value === 'string' ? value : JSON.stringify(value)])
  return out
}

/** /ProxyAdmin/Settings: the effective configuration, secrets redacted, read-only (docs/configuration.md). */
export default async function settingsPage(app: FastifyInstance, { config, moduleVersions }: SettingsPageOptions) {
  const rows = flatten(redactConfig(config), '', [])
  app.get(PAGE, { schema: pageQuery }, async (request, reply) => {
    const processes = await moduleVersions.list()
    return sendAdminPage(request, reply, {
      title: 'Settings',
      current: PAGE,
      body: html`
        <h2>Processes</h2>
        <p class="muted">The build each process runs, from its health endpoint. Another build is activated
          with <code>atrium release activate</code> (docs/operations.md, “Releases and rollback”).</p>
        <table>
          <thead><tr><th>Process</th><th>Version</th><th>Build</th><th>Status</th></tr></thead>
          <tbody>${processes.map(
            (process) => html`<tr>
              <td>${process.instance ? `${process.name} (${process.instance})` : process.name}</td>
              <td>${process.version ?? '–'}</td>
              <td>${process.build ?? '–'}</td>
              <td>${process.status === 'up' ? 'up' : 'not answering'}</td>
            </tr>`,
          )}</tbody>
        </table>
        <h2>Settings</h2>
        <p class="muted">The effective configuration of this gateway node. These are deploy-time settings, read at
          start from the config file and the environment: change them there and restart. Secrets are shown as
          [redacted].</p>
        <p class="muted">What changes while the gateway runs is data, not settings: the route map
          (<a href=${`${ADMIN_ROOT}/Routes`}>Routes</a>), apps with their flags, origins and secrets
          (<a href=${`${ADMIN_ROOT}/Apps`}>Apps</a>), <a href=${`${ADMIN_ROOT}/Domains`}>Domains</a>, <a
            href=${`${ADMIN_ROOT}/Partners`}>Federation partners</a> and users’ scopes
          (<a href=${`${ADMIN_ROOT}/Users`}>Users</a>). Every gateway node follows route and app changes within
          Proxy.RouteReloadMs.</p>
        <table>
          <thead><tr><th>Setting</th><th>Value</th><th>Changes</th></tr></thead>
          <tbody>${rows.map(
            ([name, value]) => html`<tr>
              <td><code>${name}</code></td>
              <td><code>${value}</code></td>
              <td>${LIVE[name] ?? 'at restart'}</td>
            </tr>`,
          )}</tbody>
        </table>
      `,
    })
  })
}
