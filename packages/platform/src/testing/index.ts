export {
  createTestDatabaseUrl,
  forEachDialect,
  listNullableColumns,
  onlyWithPostgres,
  openTestDatabase,
  postgresTestUrl,
} from './databases.ts'
export { json, listen, type RawResponse, requestWithHeaders, sendRaw } from './http.ts'
