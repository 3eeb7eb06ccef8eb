export {
  createTestDatabaseUrl,
  forEachDialect,
  listNullableColumns,
  onlyWithPostgres,
  openTestDatabase,
  postgresRequired,
  postgresTestUrl,
} from './databases.ts'
export { json, listen, listenRestartable, type RawResponse, requestWithHeaders, sendRaw } from './http.ts'
export { metricValue } from './metrics.ts'
export { createMigratedTestDatabaseUrl } from './migrated-databases.ts'
export { freePort } from './ports.ts'
export { closeAfterTest, closeTestServers } from './teardown.ts'
export { until } from './until.ts'
