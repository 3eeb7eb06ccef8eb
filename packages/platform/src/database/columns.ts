import type { ColumnDefinitionBuilderCallback } from 'kysely'

/**
 * The one SQL type per kind of column, chosen so that values read back identically on SQLite and
 * PostgreSQL (both dialects return every one of them as a JavaScript number or string).
 */
export const columnType = {
  /** A timetick id: 53 bits, read as a number (PostgreSQL int8 is parsed with an overflow guard). */
  id: 'bigint',
  /** A time as epoch milliseconds. */
  time: 'bigint',
  /** A boolean stored as 0 or 1; write it with `writeBool`, read it with `readBool`. */
  bool: 'smallint',
  /** A 32-bit integer (counts, small enums, flag sets). */
  integer: 'integer',
  /** An integer up to Number.MAX_SAFE_INTEGER (sizes, sums). */
  bigInteger: 'bigint',
  double: 'double precision',
  text: 'text',
  /** A JSON document serialized to text. */
  json: 'text',
} as const

/** A boolean as stored in a `columnType.bool` column. */
export type BoolInt = 0 | 1

/** Makes a column NOT NULL with a default, since the spec allows no NULL fields; `false`/`true` become 0/1. */
export function notNullDefault(value: string | number | boolean): ColumnDefinitionBuilderCallback {
  const stored = typeof value === 'boolean' ? writeBool(value) : value
  return (column) => column.notNull().defaultTo(stored)
}

/** Makes a column the NOT NULL primary key (a SQLite primary key other than INTEGER would accept NULL). */
export function primaryKey(): ColumnDefinitionBuilderCallback {
  return (column) => column.primaryKey().notNull()
}

/** Reads a `columnType.bool` column. */
export function readBool(value: number): boolean {
  return value !== 0
}

/** Converts a boolean for a `columnType.bool` column (PostgreSQL rejects `true` for a smallint). */
export function writeBool(value: boolean): BoolInt {
  return value ? 1 : 0
}
