/**
 * C0 control characters other than tab, line feed and carriage return: refused in chat text by
 * every path that stores it (the chat module's operations, the inbound mail bridge). PostgreSQL
 * cannot store U+0000 in text and SQLite's FTS5 fails on it in a query (issue 14, item 12); the
 * others have no place in chat text and would render as nothing, or hide text, in clients.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these characters are what it finds
export const REFUSED_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/
