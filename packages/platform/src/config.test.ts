import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { Type } from 'typebox'
import { ConfigError, commonSettings, describeSettings, loadConfig, readConfigSection } from './config.ts'

const schema = Type.Object(
  {
    ...commonSettings({ host: '127.0.0.1', port: 9000 }),
    ChatDB: Type.String({ default: 'sqlite:data/chat.db', description: 'Chat database.' }),
    WebPush: Type.Object(
      {
        Enabled: Type.Boolean({ default: false, description: 'Offer Web Push.' }),
        Subject: Type.String({ default: '', description: 'VAPID subject.' }),
      },
      { default: {}, additionalProperties: false },
    ),
    Teams: Type.Array(Type.String(), { default: [], description: 'Team names.' }),
  },
  { additionalProperties: false },
)

const secret = { ServiceSecret: 'x'.repeat(32) }

test('defaults fill every setting that is not given', () => {
  const config = loadConfig(schema, { source: 'test', file: secret })
  assert.equal(config.Port, 9000)
  assert.equal(config.ChatDB, 'sqlite:data/chat.db')
  assert.deepEqual(config.WebPush, { Enabled: false, Subject: '' })
  assert.equal(config.LogLevel, 'info')
})

test('the environment overrides the file, with nested names joined by __ and values coerced', () => {
  const config = loadConfig(schema, {
    source: 'test',
    file: { ...secret, Port: 9100, ChatDB: 'postgres://db/chat', WebPush: { Subject: 'mailto:ops@example.com' } },
    env: { Port: '9200', WebPush__Enabled: 'true', Teams: '["a","b"]', UNRELATED: 'x' },
  })
  assert.equal(config.Port, 9200)
  assert.equal(config.ChatDB, 'postgres://db/chat')
  assert.deepEqual(config.WebPush, { Enabled: true, Subject: 'mailto:ops@example.com' })
  assert.deepEqual(config.Teams, ['a', 'b'])
})

test('every problem is reported at once, naming the setting and its source', () => {
  let error: ConfigError | undefined
  try {
    loadConfig(schema, {
      source: 'chat',
      file: { Prot: 1, WebPush: { Enabeld: true } },
      env: { Port: 'eighty', NodeNumber: '40', WebPush__Enabled: 'maybe', LogLevel: 'loud' },
    })
  } catch (thrown) {
    error = thrown as ConfigError
  }
  assert.ok(error instanceof ConfigError)
  const text = error.problems.join('\n')
  assert.match(error.message, /^Invalid chat configuration:/)
  assert.match(text, /Port \(environment Port\): expected a number, got "eighty"/)
  assert.match(text, /WebPush\.Enabled \(environment WebPush__Enabled\): expected true or false/)
  assert.match(text, /Prot: unknown setting/)
  assert.match(text, /WebPush\.Enabeld: unknown setting/)
  assert.match(text, /NodeNumber: /)
  assert.match(text, /LogLevel: must be one of "fatal"/)
  assert.match(text, /ServiceSecret: /)
  assert.ok(error.problems.length >= 6)
})

test('cross-setting checks run after the schema passes', () => {
  const refine = (config: { WebPush: { Enabled: boolean; Subject: string } }) =>
    config.WebPush.Enabled && !config.WebPush.Subject ? ['WebPush.Subject: required when enabled'] : []
  assert.throws(
    () => loadConfig(schema, { source: 't', file: secret, env: { WebPush__Enabled: '1' }, refine }),
    /WebPush\.Subject: required/,
  )
  assert.doesNotThrow(() =>
    loadConfig(schema, {
      source: 't',
      env: { WebPush__Enabled: 'on' },
      file: { ...secret, WebPush: { Subject: 'mailto:a@b' } },
      refine,
    }),
  )
})

test('the loaded config is frozen all the way down', () => {
  const config = loadConfig(schema, { source: 'test', file: secret })
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.WebPush))
  assert.throws(() => {
    ;(config as { Port: number }).Port = 1
  }, TypeError)
})

test('settings are described with their environment names, types and defaults', () => {
  const settings = describeSettings(schema)
  const push = settings.find((setting) => setting.name === 'WebPush.Enabled')
  assert.deepEqual(push, {
    name: 'WebPush.Enabled',
    env: 'WebPush__Enabled',
    type: 'boolean',
    default: false,
    description: 'Offer Web Push.',
  })
  assert.equal(settings.find((setting) => setting.name === 'LogLevel')?.type.includes('"debug"'), true)
})

test('the config file holds one section per process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-config-'))
  const path = join(dir, 'atrium.json')
  writeFileSync(path, JSON.stringify({ chat: { Port: 1 }, gateway: { Port: 2 } }))
  assert.deepEqual(readConfigSection(path, 'chat'), { Port: 1 })
  assert.deepEqual(readConfigSection(path, 'wallet'), {})
  assert.deepEqual(readConfigSection(undefined, 'chat'), {})
  writeFileSync(path, '{ not json')
  assert.throws(() => readConfigSection(path, 'chat'), /not valid JSON/)
  assert.throws(() => readConfigSection(join(dir, 'missing.json'), 'chat'), /ENOENT/)
})
