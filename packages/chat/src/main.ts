import { runProcess } from '@atrium/platform'
import { buildChat } from './app.ts'
import { loadChatConfig } from './config.ts'

runProcess('chat', loadChatConfig, buildChat)
