import assert from 'node:assert/strict'
import test from 'node:test'
import { Type } from 'typebox'
import { compileSerializer, compileValidator } from './validation.ts'

const route = { method: 'POST' as const, url: '/x', httpStatus: '200' }

test('equal schemas built again share one compiled serializer and validator; others get their own', () => {
  // Two services each build their routes' schemas anew, as a test that starts several does.
  const made = () => Type.Object({ id: Type.String(), count: Type.Integer() })
  const first = compileSerializer({ ...route, schema: made() })
  const again = compileSerializer({ ...route, schema: made() })
  const other = compileSerializer({ ...route, schema: Type.Object({ id: Type.String() }) })
  assert.equal(again, first)
  assert.notEqual(other, first)
  // What the shared serializer writes is what the schema says: unknown fields left out.
  assert.equal(first({ id: 'a', count: 2, secret: 'x' }), '{"id":"a","count":2}')
  assert.equal(other({ id: 'a', count: 2 }), '{"id":"a"}')

  const body = compileValidator({ ...route, httpPart: 'body', schema: made() })
  assert.equal(compileValidator({ ...route, httpPart: 'body', schema: made() }), body)
  // The body and the text parts keep their own rules: text is coerced, bodies are not.
  const query = compileValidator({ ...route, httpPart: 'querystring', schema: made() })
  assert.notEqual(query, body)
  assert.equal(body({ id: 'a', count: '2' }), false)
  assert.equal(query({ id: 'a', count: '2' }), true)
})
