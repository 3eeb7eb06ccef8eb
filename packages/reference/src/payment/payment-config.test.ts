import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError } from '@atrium/platform'
import { loadPaymentConfig } from '../config.ts'

const secret = 'payment-config-test-secret'.padEnd(40, '-')
const flow = {
  FeeBasisPoints: 100,
  FixedFee: 0,
  MinAmount: 1,
  MaxAmount: 10,
  Currencies: ['USD'],
  Address: 'pay:{order}',
  PartnerName: 'Test',
}

test('payment flows come from the environment as JSON and must hold whole cents in a sane range', () => {
  const config = loadPaymentConfig({ ServiceSecret: secret }, { Flows: JSON.stringify({ bank: flow }) })
  assert.deepEqual(Object.keys(config.Flows), ['bank'])

  const problems = (flows: object) => {
    try {
      loadPaymentConfig({ ServiceSecret: secret, Flows: flows }, {})
    } catch (caught) {
      assert.ok(caught instanceof ConfigError, String(caught))
      return caught.problems
    }
    assert.fail('the flows were accepted')
  }
  assert.deepEqual(problems({ empty: { ...flow, Currencies: [] } }), [
    'Flows.empty.Currencies: must not have fewer than 1 items',
  ])
  assert.deepEqual(problems({ odd: { ...flow, FixedFee: 0.005, MinAmount: 20 }, Upper: flow }), [
    'Flows.odd.FixedFee: must be a positive amount with at most two decimal places',
    'Flows.odd.MinAmount: must not exceed MaxAmount',
    'Flows.Upper: a flow name is 1–32 of a-z, 0-9, _ and -, from a letter',
  ])
})
