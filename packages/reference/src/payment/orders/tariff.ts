import { ApiError } from '@atrium/platform'
import type { PaymentConfig } from '../../config.ts'
import { fromMinorUnits, toMinorUnits } from '../../money.ts'

export type PaymentFlow = PaymentConfig['Flows'][string]

/** An order's money in minor units, as the flow's tariff makes it. */
export interface Quote {
  flow: PaymentFlow
  amount: number
  fee: number
  /** amount + fee: what the payer pays. */
  total: number
}

/**
 * Applies a flow's tariff to a requested amount: the flow must exist and take the currency, the
 * amount must lie within its range, and the fee is the basis points of the amount (rounded to a
 * cent) plus the fixed fee. The wallet is credited the amount; the payer pays the total.
 */
export function quote(flows: PaymentConfig['Flows'], name: string, currency: string, requested: number): Quote {
  const flow = Object.hasOwn(flows, name) ? flows[name] : undefined
  if (!flow) {
    const known = Object.keys(flows).join(', ')
    throw new ApiError('UnknownPaymentFlow', `no payment flow ${JSON.stringify(name)}; configured: ${known}`)
  }
  if (!flow.Currencies.includes(currency)) {
    throw new ApiError(
      'CurrencyNotInTariff',
      `the ${name} flow does not take ${currency}; it takes ${flow.Currencies.join(', ')}`,
    )
  }
  const amount = toMinorUnits(requested)
  const min = toMinorUnits(flow.MinAmount)
  const max = toMinorUnits(flow.MaxAmount)
  if (amount < min || amount > max) {
    throw new ApiError(
      'AmountOutOfRange',
      `the ${name} flow takes ${fromMinorUnits(min)} to ${fromMinorUnits(max)} ${currency}, not ${requested}`,
    )
  }
  const fixed = flow.FixedFee === 0 ? 0 : toMinorUnits(flow.FixedFee)
  const fee = Math.round((amount * flow.FeeBasisPoints) / 10_000) + fixed
  return { flow, amount, fee, total: amount + fee }
}
