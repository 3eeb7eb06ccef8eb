export {
  createTestDatabaseUrl,
  forEachDialect,
  listNullableColumns,
  onlyWithPostgres,
  openTestDatabase,
  postgresTestUrl,
} from './databases.ts'
export { json, listen, listenRestartable, type RawResponse, requestWithHeaders, sendRaw } from './http.ts'
