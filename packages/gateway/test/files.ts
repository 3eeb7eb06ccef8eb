import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { startChat } from '../../chat/test/support.ts'
import { SERVICE_SECRET, signedInUser } from './support.ts'
import { checksumOf, createUpload, startUploadGateway, tusHeaders, type UploadGatewayOptions } from './uploads.ts'

/** A user of the system as the tests drive it: their CRM id and browser-like headers. */
export interface FileUser {
  crmId: number
  headers: Record<string, string>
}

/**
 * The gateway with uploads in a directory of the test's own (or on S3, `backend`), the real chat module behind /msg/
 * (hard deletes on), and two signed-in users. Guests reach /msg/ without a session, as in the
 * shipped configuration.
 */
export async function startFileService(t: TestContext, dialect: DatabaseDialect, options: UploadGatewayOptions = {}) {
  // The gateway (its poller and profile sync) stops before the chat module and its database go:
  // after-hooks run in the order they were added.
  let stopGateway = async () => {}
  t.after(() => stopGateway())
  const chat = await startChat(t, dialect, {
    ServiceSecret: SERVICE_SECRET,
    HardDelete: { Messages: true, Chats: true },
  })
  const gateway = await startUploadGateway(t, dialect, {
    ...options,
    settings: {
      Modules: { chat: chat.base },
      Proxy: { Routes: [{ Prefix: '/msg/', Upstream: 'chat' }] },
      ...options.settings,
    },
  })
  stopGateway = () => gateway.app.close()
  const alice: FileUser = gateway.user
  const bob: FileUser = await signedInUser(gateway)

  /** Calls a chat operation through the gateway; answers the status and the envelope. */
  async function call(user: { headers: Record<string, string> }, operation: string, body?: object) {
    const response = await fetch(`${gateway.url}/msg/v1/${operation}`, {
      method: body ? 'POST' : 'GET',
      headers: { ...user.headers, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const envelope = await json(response)
    return { status: response.status, result: envelope.result, error: envelope.error }
  }

  /** Calls and asserts success; returns the result. */
  async function ok(user: { headers: Record<string, string> }, operation: string, body?: object) {
    const answer = await call(user, operation, body)
    assert.equal(answer.status, 200, `${operation}: ${JSON.stringify(answer.error)}`)
    return answer.result
  }

  /** Uploads `bytes` in one checked chunk; returns the upload's id and its file token. */
  async function upload(user: FileUser, bytes: Uint8Array, name = 'notes.txt', type = 'text/plain') {
    const headers = tusHeaders(user, {
      'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')},filetype ${Buffer.from(type).toString('base64')}`,
    })
    const url = await createUpload(gateway.uploads, headers, bytes.length)
    let answer = await fetch(url, { method: 'HEAD', headers: tusHeaders(user) })
    if (bytes.length > 0) {
      answer = await fetch(url, {
        method: 'PATCH',
        headers: {
          ...tusHeaders(user),
          'Content-Type': 'application/offset+octet-stream',
          'Upload-Offset': '0',
          'Upload-Checksum': checksumOf(bytes),
        },
        body: new Uint8Array(bytes),
      })
      assert.equal(answer.status, 204)
    }
    const token = answer.headers.get('x-file-token')
    assert.ok(token, 'a finished upload carries its file token')
    return { url, id: url.split('/').at(-1)!, token }
  }

  /** A group of `owner` with `members`; returns its id. */
  async function group(owner: FileUser, members: FileUser[], name = 'Team'): Promise<string> {
    const created = await ok(owner, 'create_chat', {
      type: 2,
      name,
      members: members.map((member) => String(member.crmId)),
    })
    return created.chat.id
  }

  /** Sends `bytes` as a file message to `chatId`; returns the message view. */
  async function sendFile(user: FileUser, chatId: string, bytes: Uint8Array, name?: string, type?: string) {
    const { token } = await upload(user, bytes, name, type)
    return ok(user, 'send_message', { chat_id: chatId, content: '', file: token })
  }

  /** GET of a download path with the user's credentials (or none). */
  function download(path: string, user?: { headers: Record<string, string> }, headers: Record<string, string> = {}) {
    const { 'Content-Type': _json, ...credentials } = user?.headers ?? {}
    return fetch(`${gateway.url}${path}`, { headers: { ...credentials, ...headers } })
  }

  /** Another signed-in user, with `scopes` (`admin`: an operator). */
  async function signedIn(scopes: string[] = []): Promise<FileUser> {
    const user = await signedInUser(gateway)
    if (scopes.length > 0) await gateway.store.users.setScopes(user.crmId, scopes)
    return user
  }

  return { ...gateway, chat, alice, bob, call, ok, upload, group, sendFile, download, signedIn }
}
