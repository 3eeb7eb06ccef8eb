import webPush from 'web-push'
import type { Command } from './command.ts'

const generateKeys: Command = {
  name: 'webpush keys',
  usage: '',
  summary: 'Generate a VAPID key pair for WebPush.PublicKey and WebPush.PrivateKey (printed once, stored nowhere).',
  example: 'atrium webpush keys --json',
  needsConfig: false,
  async run() {
    const { publicKey, privateKey } = webPush.generateVAPIDKeys()
    return {
      text: [
        `WebPush__PublicKey=${publicKey}`,
        `WebPush__PrivateKey=${privateKey}`,
        '',
        'Set both on every gateway node (environment or the "WebPush" section of the config file), with',
        'WebPush__Enabled=true and WebPush__Subject=mailto:<operator address>. Keep the private key secret;',
        'a new pair invalidates every existing browser subscription.',
      ].join('\n'),
      json: { publicKey, privateKey },
    }
  },
}

export const webPushCommands: Command[] = [generateKeys]
