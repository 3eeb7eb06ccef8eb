export { json, listen, type RawResponse, requestWithHeaders, sendRaw } from './http.ts'
