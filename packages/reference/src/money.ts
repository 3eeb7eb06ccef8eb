import { ApiError } from '@atrium/platform'
import { Type } from 'typebox'

/** A currency code: 3–10 upper-case letters or digits, starting with a letter (`USD`, `EUR`, `USDT`). */
export const Currency = Type.String({
  pattern: '^[A-Z][A-Z0-9]{2,9}$',
  description: 'Currency code, e.g. USD.',
})

/** An amount as requests carry it: a positive number with at most two decimal places. */
export const Amount = Type.Number({ description: 'Positive, at most two decimal places, e.g. 12.5 (else code 4003).' })

const MINOR_PER_UNIT = 100
/** The largest amount one request moves, in minor units; balances stay far inside the safe integers. */
export const MAX_AMOUNT_MINOR = 1e15

/** Converts a requested amount to minor units; InvalidAmount unless positive, with at most two decimals, and not too large. */
export function toMinorUnits(amount: number): number {
  const minor = Math.round(amount * MINOR_PER_UNIT)
  // 0.1 * 100 is 10.000000000000002: allow for binary rounding, refuse a real third decimal.
  if (!(minor > 0) || Math.abs(amount * MINOR_PER_UNIT - minor) > 1e-6 * Math.max(1, minor)) {
    throw new ApiError('InvalidAmount', `amount ${amount} is not a positive amount with at most two decimal places`)
  }
  if (minor > MAX_AMOUNT_MINOR) throw new ApiError('InvalidAmount', `amount ${amount} is too large`)
  return minor
}

/** Minor units back to the number the API shows. */
export function fromMinorUnits(minor: number): number {
  return minor / MINOR_PER_UNIT
}
