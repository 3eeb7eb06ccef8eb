import {
  type ColumnMetadata,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  PostgresIntrospector,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely'

interface ColumnRow {
  table: string
  table_type: string
  schema: string
  column: string
  not_null: boolean
  has_default: boolean
  type: string
  type_schema: string
  column_description: string | null
  auto_incrementing: string | null
}

/**
 * Kysely's PostgreSQL introspector limited to the current schema. Kysely's own reads every schema of the
 * database, so its migrator took another schema's migration tables for its own, and its query failed
 * with "schema … does not exist" whenever another schema was dropped while it ran.
 */
// biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface types the instance as Kysely<any>
export function createCurrentSchemaIntrospector(db: Kysely<any>): DatabaseIntrospector {
  async function getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }) {
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as table_type, ns.nspname as "schema", a.attname as "column", a.attnotnull as not_null,
        a.atthasdef as has_default, typ.typname as "type", dtns.nspname as type_schema,
        col_description(a.attrelid, a.attnum) as column_description,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname)
          as auto_incrementing
      from pg_catalog.pg_attribute as a
      join pg_catalog.pg_class as c on a.attrelid = c.oid
      join pg_catalog.pg_namespace as ns on c.relnamespace = ns.oid
      join pg_catalog.pg_type as typ on a.atttypid = typ.oid
      join pg_catalog.pg_namespace as dtns on typ.typnamespace = dtns.oid
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
        and a.attnum > 0 and not a.attisdropped
        and (${options.withInternalKyselyTables}
          or c.relname not in (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE}))
      order by c.relname, a.attnum`.execute(db)
    const tables = new Map<string, TableMetadata & { columns: ColumnMetadata[] }>()
    for (const row of rows) {
      let table = tables.get(row.table)
      if (table === undefined) {
        table = { name: row.table, isView: row.table_type === 'v', schema: row.schema, columns: [] }
        tables.set(row.table, table)
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing !== null,
        comment: row.column_description ?? undefined,
      })
    }
    return [...tables.values()]
  }

  return {
    getSchemas: (): Promise<SchemaMetadata[]> => new PostgresIntrospector(db).getSchemas(),
    getTables,
    getMetadata: async (options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> => ({
      tables: await getTables(options),
    }),
  }
}
