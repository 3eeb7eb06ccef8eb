import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { forEachDialect, json } from '@atrium/platform/testing'
import { SERVICE_SECRET as CHAT_SECRET, startChat } from '../../../chat/test/support.ts'
import { createClock, startGateway } from '../../test/support.ts'

const TURN_SECRET = 'coturn-static-auth-secret-for-tests'

forEachDialect('a guest of a personal invite gets TURN credentials; other visitors do not', async (t, dialect) => {
  // One secret for both, the chat module's: the test registers people there as the gateway would.
  const chat = await startChat(t, dialect)
  const clock = createClock()
  const gateway = await startGateway(t, dialect, {
    now: clock.now,
    settings: {
      ServiceSecret: CHAT_SECRET,
      Modules: { chat: chat.base },
      Calls: { TurnUrls: ['turn:127.0.0.1:3478'], TurnSecret: TURN_SECRET, TurnTtlSeconds: 600 },
    },
  })
  await chat.register([1, 'Host'], 2)
  const personal = await chat.user(1).ok('create_invite', { kind: 'personal' })
  const joined = await chat.guest(personal.code, 'device-guest-0001').ok('join_invite', { code: personal.code })
  const { chat: group } = await chat.user(1).ok('create_chat', { type: 2, name: 'Team', members: ['2'] })
  const groupInvite = await chat.user(1).ok('create_invite', { kind: 'group', chat_id: group.id })
  await chat.guest(groupInvite.code, 'device-guest-0002').ok('join_invite', { code: groupInvite.code })

  const iceServers = async (code: string, deviceGuid: string) =>
    (
      await json(
        await fetch(`${gateway.url}/auth/v1/call/ice_servers`, {
          headers: { 'X-Invite-Code': code, 'X-Device-Guid': deviceGuid },
        }),
      )
    ).result.ice_servers
  const username = `${Math.floor(clock.now() / 1000) + 600}:g${joined.member}`
  assert.deepEqual(await iceServers(personal.code, 'device-guest-0001'), [
    {
      urls: ['turn:127.0.0.1:3478'],
      username,
      credential: createHmac('sha1', TURN_SECRET).update(username).digest('base64'),
    },
  ])
  // A guest of a group invite may not call; an unknown device, a made-up code or a malformed one are nobody.
  assert.deepEqual(await iceServers(groupInvite.code, 'device-guest-0002'), [])
  assert.deepEqual(await iceServers(personal.code, 'device-guest-0009'), [])
  assert.deepEqual(await iceServers('NoSuchInvite123', 'device-guest-0001'), [])
  assert.deepEqual(await iceServers(personal.code, 'bad guid!'), [])
})
