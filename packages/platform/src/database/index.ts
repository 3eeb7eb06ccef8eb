export { type BoolInt, columnType, notNullDefault, primaryKey, readBool, writeBool } from './columns.ts'
export { compiledOnce } from './compiled-once.ts'
export {
  createDatabase,
  type Database,
  type DatabaseDialect,
  type DatabaseOptions,
  type PoolStats,
  type PostgresConnection,
  postgresConnection,
} from './database.ts'
export { installDatabaseMetrics } from './database-metrics.ts'
export {
  appliedMigrations,
  type MigrateOptions,
  type Migration,
  type Migrations,
  migrateToLatest,
  warnNewerSchema,
} from './migrator.ts'
export { createNodeSqliteDatabase, createNodeSqliteDialect } from './node-sqlite-dialect.ts'
export {
  NOTIFY_PAYLOAD_MAX,
  type NotifyChannel,
  type NotifyChannelOptions,
  notifyBatches,
  notifyChannelName,
  openNotifyChannel,
} from './notify-channel.ts'
