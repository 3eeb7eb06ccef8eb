import type { Service, TlsOptions } from '@atrium/platform'
import type { GatewayConfig } from '../config.ts'
import type { installFiles } from '../files/install-files.ts'
import type { ModuleDirectory } from '../proxy/module-instances.ts'
import type { GatewayStore } from '../store.ts'
import { createChatMail } from './chat-mail.ts'
import { createDnsLookup, createMailAuth } from './mail-auth.ts'
import { createMailBridge } from './mail-bridge.ts'

export interface MailBridgeInstallOptions {
  config: GatewayConfig
  store: GatewayStore
  modules: ModuleDirectory
  /** The gateway's certificate, offered by STARTTLS. */
  tls: TlsOptions | undefined
  /** The file service, which stores the mail's attachments. */
  files: ReturnType<typeof installFiles>
}

/**
 * The inbound email bridge (docs/delivery.md): an SMTP listener, started when the gateway is ready
 * and closed before it, that stores verified mail in the chat module. Undefined while
 * MailBridge.Enabled is false.
 */
export function installMailBridge(app: Service, { config, store, modules, tls, files }: MailBridgeInstallOptions) {
  if (!config.MailBridge.Enabled) return undefined
  const mailBridge = createMailBridge({
    settings: config.MailBridge,
    domain: config.MailBridge.Domain || new URL(config.PublicOrigin).hostname,
    tls,
    // Modules.chat is set: the config check refuses the bridge without it.
    chat: createChatMail({ chat: modules.get('chat')!, serviceSecret: config.ServiceSecret }),
    authenticate: createMailAuth(createDnsLookup(config.Dns.Servers, config.Dns.TimeoutMs, config.Dns.Tries)),
    files: { uploads: files.uploads, storage: files.storage, settings: config.Files, now: store.now },
    log: app.log,
    now: store.now,
  })
  app.addHook('onReady', async () => mailBridge.listen())
  app.addHook('preClose', async () => mailBridge.close())
  return mailBridge
}
