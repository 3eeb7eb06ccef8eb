export { buildChat, type ChatOptions } from './app.ts'
export { type ChatConfig, chatSettings, loadChatConfig } from './config.ts'
export { chatMigrations } from './db/migrations/index.ts'
