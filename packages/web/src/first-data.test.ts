import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChatList, ChatView, MessagePage } from './api/chat-types.ts'
import { CHAT_LIST_URL } from './early-requests.ts'
import { readFirstData } from './first-data.ts'

const CHATS = [{ id: '42', type: 2 } as ChatView, { id: '43', type: 1, peer: '77' } as ChatView]
const TICK = 895978574020608
const PAGE_OF = (chatId: string): MessagePage => ({ messages: [], has_more: chatId === '43' })

/** The two chat operations, recording calls; `list` decides how the chat list answers. */
function chatApi(list: () => Promise<ChatList> = async () => ({ chats: CHATS, tick: TICK })) {
  const calls: string[] = []
  return {
    calls,
    getChatsWithHidden() {
      calls.push('get_chats')
      return list()
    },
    async getChatMessages(chatId: string, cursor: { limit?: number } = {}) {
      calls.push(`get_chat_messages ${chatId} ${cursor.limit}`)
      return PAGE_OF(chatId)
    },
  }
}

const early = () => new Map([[CHAT_LIST_URL, Promise.resolve(new Response('{}'))]])
const at = (pathname: string) => ({ pathname, search: '' })

test('without the start-up script’s chat list nothing is read before the first render', async () => {
  const api = chatApi()
  assert.equal(await readFirstData(undefined, api, at('/chat/c/42')), undefined)
  assert.equal(await readFirstData(new Map(), api, at('/chat/c/42')), undefined)
  assert.deepEqual(api.calls, [])
})

test('the list, and the first page of the chat the path names by chat id or by peer', async () => {
  const byId = chatApi()
  assert.deepEqual(await readFirstData(early(), byId, at('/chat/c/42')), {
    chats: CHATS,
    tick: TICK,
    page: { chatId: '42', page: PAGE_OF('42') },
  })
  assert.deepEqual(byId.calls, ['get_chats', 'get_chat_messages 42 50'])

  const byPeer = chatApi()
  assert.deepEqual(await readFirstData(early(), byPeer, at('/chat/c/77')), {
    chats: CHATS,
    tick: TICK,
    page: { chatId: '43', page: PAGE_OF('43') },
  })

  for (const path of ['/chat/', '/chat/c/99']) {
    const api = chatApi()
    assert.deepEqual(await readFirstData(early(), api, at(path)), { chats: CHATS, tick: TICK }, path)
    assert.deepEqual(api.calls, ['get_chats'], path)
  }
})

test('a failed or slow list leaves the messenger to load it itself', async () => {
  const failing = chatApi(async () => {
    throw new Error('401')
  })
  assert.equal(await readFirstData(early(), failing, at('/chat/c/42')), undefined)

  const slow = chatApi(() => new Promise(() => {}))
  const started = Date.now()
  assert.equal(await readFirstData(early(), slow, at('/chat/c/42'), 50), undefined)
  assert.ok(Date.now() - started < 1_000)
})
