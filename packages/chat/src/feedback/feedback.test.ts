import assert from 'node:assert/strict'
import { FeedbackType } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChat } from '../../test/support.ts'

forEachDialect('feedback is stored with its sentiment and tracked per object owner', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const ratings = [5, 4, 2, 3]
  let last: { owner_rating: unknown; feedback: { sentiment: string } } | undefined
  for (const [index, rating] of ratings.entries()) {
    last = await chat.user(100 + index).ok('create_feedback', {
      object_type: FeedbackType.Product,
      object_id: 'sku-42',
      object_owner: '7',
      rating,
      comment: `rated ${rating}`,
    })
  }
  assert.equal(last?.feedback.sentiment, 'neutral')
  assert.deepEqual(last?.owner_rating, { count: 4, average: 3.5, positive: 2, negative: 1 })
  const unowned = await chat
    .user(1)
    .ok('create_feedback', { object_type: FeedbackType.App, object_id: 'atrium', rating: 1 })
  assert.equal(unowned.feedback.sentiment, 'negative')
  assert.equal(unowned.owner_rating, null)
})

forEachDialect('chat-based feedback needs membership; ratings and types are validated', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3)
  const groupId = await createGroup(chat.user(1), [2])
  await chat
    .user(2)
    .ok('create_feedback', { object_type: FeedbackType.Chat, object_id: groupId, chat_id: groupId, rating: 5 })
  const outsider = await chat
    .user(3)
    .post('create_feedback', { object_type: FeedbackType.Chat, object_id: groupId, chat_id: groupId, rating: 5 })
  assert.equal(outsider.status, 404)
  for (const body of [
    { object_type: 1, object_id: 'a', rating: 0 },
    { object_type: 1, object_id: 'a', rating: 6 },
    { object_type: 1, object_id: 'a', rating: 4.5 },
    { object_type: 99, object_id: 'a', rating: 3 },
    { object_type: 1, object_id: '', rating: 3 },
  ]) {
    const response = await chat.user(1).post('create_feedback', body)
    assert.equal(response.status, 400, JSON.stringify(body))
    assert.equal(response.error?.code, 1000)
  }
})
