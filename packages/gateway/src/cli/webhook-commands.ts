import { createOutboundClient } from '../outbound/outbound-request.ts'
import { attemptDelivery } from '../webhooks/webhook-delivery.ts'
import { createWebhooks, type WebhookDelivery } from '../webhooks/webhooks.repository.ts'
import { type Command, CommandFailed, formatTable, formatTime, parseId, stringOption, UsageError } from './command.ts'

function deadLetterView(delivery: WebhookDelivery) {
  return {
    id: String(delivery.id),
    appId: String(delivery.app_id),
    module: delivery.module,
    events: delivery.event_count,
    firstTick: delivery.first_tick,
    lastTick: delivery.last_tick,
    attempts: delivery.attempts,
    lastStatus: delivery.last_status,
    lastError: delivery.last_error,
    created: delivery.created,
    failed: delivery.updated,
  }
}

const listDeadLetters: Command = {
  name: 'webhooks dead-letters',
  usage: '[--app <appId>] [--limit n]',
  summary: 'List webhook deliveries whose last attempt failed, oldest first (default limit 100).',
  example: 'atrium webhooks dead-letters --app 891079959003136',
  options: { app: { type: 'string' }, limit: { type: 'string' } },
  async run({ values }, { store }) {
    const appText = stringOption(values, 'app')
    const appId = appText === undefined ? undefined : parseId(appText, '--app')
    const limitText = stringOption(values, 'limit') ?? '100'
    if (!/^[0-9]{1,5}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 10_000) {
      throw new UsageError(`--limit must be an integer from 1 to 10000, got ${JSON.stringify(limitText)}`)
    }
    const webhooks = createWebhooks(store.db, store.nextTick, store.now)
    const deadLetters = (await webhooks.deadLetters({ appId, limit: Number(limitText) })).map(deadLetterView)
    const rows = deadLetters.map((letter) => [
      letter.id,
      letter.appId,
      letter.module,
      String(letter.events),
      String(letter.attempts),
      formatTime(letter.failed),
      letter.lastError,
    ])
    return {
      text: formatTable(['ID', 'APP', 'MODULE', 'EVENTS', 'ATTEMPTS', 'FAILED', 'LAST ERROR'], rows),
      json: { deadLetters },
    }
  },
}

const replayDeadLetter: Command = {
  name: 'webhooks replay',
  usage: '<deliveryId>',
  summary:
    "Send a dead letter again now, to the app's current callback URL with the same delivery id and body; delivered, it leaves the dead letters.",
  example: 'atrium webhooks replay 891080012345678',
  positionals: 1,
  async run({ args }, { config, store }) {
    const id = parseId(args[0], 'delivery id')
    const webhooks = createWebhooks(store.db, store.nextTick, store.now)
    const delivery = await webhooks.get(id)
    if (delivery?.state !== 'dead') throw new CommandFailed(`no dead letter ${id}`)
    const app = await store.apps.get(delivery.app_id)
    if (!app) throw new CommandFailed(`app ${delivery.app_id} of dead letter ${id} no longer exists`)
    if (!app.callback_url) throw new CommandFailed(`app ${app.id} has no callback URL`)
    const client = createOutboundClient({
      allowPrivateAddresses: config.Webhooks.AllowPrivateAddresses,
      timeoutMs: config.Webhooks.TimeoutMs,
      allowSetting: 'Webhooks.AllowPrivateAddresses',
    })
    try {
      const attempts = delivery.attempts + 1
      const result = await attemptDelivery(client, {
        url: app.callback_url,
        secret: app.webhook_secret,
        deliveryId: id,
        body: delivery.body,
        attempt: attempts,
      })
      if (result.ok) {
        await webhooks.delivered(id)
        return {
          text: `Delivered ${id} (${delivery.event_count} event${delivery.event_count === 1 ? '' : 's'}) to ${app.callback_url}: ${result.status}`,
          json: { id: String(id), delivered: true, status: result.status },
        }
      }
      await webhooks.failed(id, { attempts, nextAttempt: 0, status: result.status, error: result.error, dead: true })
      throw new CommandFailed(`delivery ${id} failed again (${result.error}); it stays in the dead letters`)
    } finally {
      client.close()
    }
  },
}

const rotateSecret: Command = {
  name: 'webhooks secret',
  usage: '<appId>',
  summary:
    'Give an app a new webhook signing secret and print it once; gateways sign with it within Webhooks.ReloadMs.',
  example: 'atrium webhooks secret 891079959003136',
  positionals: 1,
  async run({ args }, { store }) {
    const appId = parseId(args[0], 'app id')
    const secret = await store.apps.rotateWebhookSecret(appId)
    if (secret === undefined) throw new CommandFailed(`no app ${appId}`)
    return {
      text: [
        `New webhook signing secret of app ${appId}`,
        `  webhook signing secret: ${secret}`,
        'The secret is shown only now; store it safely.',
      ].join('\n'),
      json: { appId: String(appId), webhookSecret: secret },
    }
  },
}

export const webhookCommands: Command[] = [listDeadLetters, replayDeadLetter, rotateSecret]
