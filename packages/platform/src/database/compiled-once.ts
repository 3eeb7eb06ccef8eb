import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely'

/** What an argument is while the query is built: a value no caller would pass. */
const MARK = '\u0000argument '

interface Template<Args> {
  compiled: CompiledQuery<unknown>
  /** For each parameter of the compiled query, the argument it takes, or undefined for a value of the query's own. */
  slots: (keyof Args | undefined)[]
}

/**
 * A query that Kysely builds and compiles once per database, then runs with new values. Building
 * and compiling costs about 5 µs a query on a fast core (docs/benchmarks.md, "Kysely on node:sqlite"),
 * as much as SQLite takes to run a point read, and a chat send makes six queries. `build` gets a
 * placeholder for each of the named arguments and may use one only as a value (compared, stored, a
 * limit): the query's shape must not depend on it. That is checked once, when the query is
 * compiled: an argument that is no parameter of the query, or that shows in its SQL text, is refused.
 *
 *   const markRead = compiledOnce(['chatId', 'member'], (db: Kysely<DB>, a: { chatId: number; member: number }) =>
 *     db.updateTable('chat_members').set({ last_read: 1 }).where('chat_id', '=', a.chatId).where('member', '=', a.member))
 *   await markRead(trx, { chatId: 42, member: 7 })
 */
export function compiledOnce<DB, Args extends object, Row>(
  names: readonly (keyof Args & string)[],
  build: (db: Kysely<DB>, args: Args) => Compilable<Row>,
): (db: Kysely<DB>, args: Args) => Promise<QueryResult<Row>> {
  // By the database's adapter, which a Kysely instance shares with its transactions.
  const templates = new WeakMap<object, Template<Args>>()

  function compile(db: Kysely<DB>): Template<Args> {
    const placeholders = Object.fromEntries(names.map((name) => [name, `${MARK}${name}`])) as Args
    const compiled = build(db, placeholders).compile()
    const slots = compiled.parameters.map((value) =>
      typeof value === 'string' && value.startsWith(MARK) ? (value.slice(MARK.length) as keyof Args) : undefined,
    )
    for (const name of names) {
      if (compiled.sql.includes(`${MARK}${name}`) || !slots.includes(name)) {
        throw new Error(`compiledOnce: ${name} is not a value of the query ${compiled.sql}`)
      }
    }
    return { compiled, slots }
  }

  return (db, args) => {
    const adapter = db.getExecutor().adapter
    let template = templates.get(adapter)
    if (template === undefined) {
      template = compile(db)
      templates.set(adapter, template)
    }
    const { compiled, slots } = template
    const parameters = compiled.parameters.map((value, index) => {
      const slot = slots[index]
      return slot === undefined ? value : args[slot]
    })
    return db.executeQuery<Row>({ ...compiled, parameters } as CompiledQuery<Row>)
  }
}
