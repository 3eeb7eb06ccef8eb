import type { Generated } from 'kysely'

/**
 * The ChatDB tables as Kysely sees them. Every column is NOT NULL with a default (spec: no NULL
 * fields); ids, ticks and times are timeticks; booleans are 0/1 integers on both dialects.
 */

/** A chat: private 1-to-1, group or info channel (spec: "Chat type flags"). */
export interface ChatsTable {
  timetick: number
  timetick_update: number
  /** ChatType flag. */
  type: number
  name: string
  description: string
  /** CRM id of the creator. */
  owner: number
  /** App the chat belongs to, addressed by app: subjects; 0 for none. */
  app_id: number
  /** 1 when archived: read-only until unarchived. */
  archived: number
  /** Unique: `<low crm id>:<high crm id>` for a private chat, so one pair has one chat; `#<timetick>` otherwise. */
  pair_key: string
  /** Timetick of the newest visible message, 0 for none; orders chat lists. */
  last_message: number
}

/** Membership and per-user state (spec: "Chat member role flags"). */
export interface ChatMembersTable {
  chat_id: number
  /** CRM id, or a guest id for guests who joined by invite code. */
  member: number
  /** MemberRole flags. */
  role: number
  /** Timetick of the newest message this member has read; unread = newer visible messages by others. */
  last_read: number
  joined: number
  timetick_update: number
  /** When a mute (role Muted) ends, epoch ms; 0 for none. Past it the mute is over (members/mute.ts). */
  muted_until: Generated<number>
}

/** A file whose last message may be gone: the gateway removes its bytes unless a message still names it. */
export interface FileReleasesTable {
  timetick: number
  file_id: number
}

/** A message row: text, file, reaction, widget, call (spec: "Chat message record (chat_mess)"). */
export interface ChatMessTable {
  timetick: number
  timetick_update: number
  chat_id: number
  owner: number
  content: string
  /** The gateway's id of the attached file (its upload), 0 for none; forwards share it. */
  file_id: number
  file_name: string
  file_size: number
  /** Content type the uploader declared, '' when none. */
  file_type: string
  /** ChatMessFlags. */
  flags: number
  linked_message_id: number
  /** LinkKind: 0 none, 1 reply, 2 reaction. */
  link_kind: number
  /** Message this one was forwarded from, 0 for none. */
  forwarded_from: number
  /** Timetick of the last content edit, 0 when never edited. */
  edited: number
}

/**
 * The module's event feed. One row per event, not per addressee: an event with addressee 0 goes
 * to the members of its chat at read time, so a message to a 100,000-member channel is one row.
 * tick_update is 0 until the sequencer gives the committed row its cursor value.
 */
export interface ChatEventsTable {
  timetick: number
  tick_update: number
  chat_id: number
  /** A single member id the event is for, or 0 for every member of chat_id. */
  addressee: number
  app_id: number
  event_type: string
  /** JSON of the typed event data. */
  data: string
}

/** Feedback and reviews (spec: "Feedback"). */
export interface FeedbackTable {
  timetick: number
  timetick_update: number
  owner: number
  /** FeedbackType of the rated object (App, Service, Product, Order, Chat, …). */
  object_type: number
  object_id: string
  /** CRM id of whoever owns the rated object, for owner rating tracking; 0 for none. */
  object_owner: number
  /** 1–5. */
  rating: number
  comment: string
  chat_id: number
}

/** Invite codes: personal (one conversation per guest device) or group (guests join the chat). */
export interface InvitesTable {
  code: string
  timetick: number
  chat_id: number
  kind: number
  created_by: number
  revoked: number
}

/** Deterministic synthetic guest identities: one per (invite code, device GUID). */
export interface GuestsTable {
  timetick: number
  code: string
  device_guid: string
  chat_id: number
}

/** A member's display name, set by the member or by the gateway and CRM. */
export interface ChatProfilesTable {
  member: number
  name: string
  /** The person's scopes at the gateway, space-separated, as the profile sync last sent them. */
  scopes: Generated<string>
  timetick_update: number
}

/** A sent SMS and its latest delivery status (delivery/sms). */
export interface SmsMessagesTable {
  timetick: number
  timetick_update: number
  provider: string
  message_id: string
  to_masked: string
  crm_id: number
  status: string
  status_rank: number
  provider_status: string
  error_code: string
}

/** A person's linked Telegram chat (telegram/): one per person, one person per Telegram chat. */
export interface TelegramLinksTable {
  member: number
  /** The private chat with the bot, which is the Telegram user's id. */
  telegram_chat_id: number
  /** The Telegram user's name as Telegram gave it at linking, e.g. `Ada Lovelace (@ada)`. */
  telegram_name: string
  /** 1 when the person wants chat notifications in Telegram. */
  notify: number
  /** When the link was made, epoch ms. */
  linked: number
}

/** Shared state of Telegram chat notifications (migration 0024): the feed cursor and the sender's lease. */
export interface TelegramStateTable {
  name: string
  cursor: Generated<number>
  /** The instance sending notifications, a random id per start; '' for none. */
  holder: Generated<string>
  /** When the holder's lease runs out, epoch ms. */
  lease_until: Generated<number>
}

/** One-time tokens of the `/start <token>` deep link, stored as their SHA-256 in hex. */
export interface TelegramLinkTokensTable {
  token_hash: string
  member: number
  /** Epoch ms after which the token is refused. */
  expires: number
}

/** An email sender writing to one bridge address: a guest of that address's invite (0015-mail-bridge). */
export interface MailContactsTable {
  /** The guest id of the sender. */
  member: number
  chat_id: number
  /** The sender's address, in lower case. */
  address: string
  /** The bridge address the sender wrote to; replies come from it. */
  recipient: string
  /** Subject of the latest inbound mail. */
  subject: string
  /** Message-ID of the latest inbound mail, answered by In-Reply-To. */
  last_message_id: string
  /** References of the latest inbound mail plus its Message-ID, space-separated. */
  thread_refs: string
  timetick_update: number
}

/** Every Message-ID received from or sent to a contact, with its chat and chat message. */
export interface MailMessagesTable {
  message_id: string
  member: number
  chat_id: number
  mess_id: number
  outbound: number
}

/** The hidden personal invite behind a CRM user's bridge address. */
export interface MailUserInvitesTable {
  crm_id: number
  code: string
}

/** Named cursors of the bridge (the reply sender's position in the event feed). */
export interface MailStateTable {
  name: string
  cursor: number
}

/** A participant of an active call (ringing or connected); the member key allows one active call per person. */
export interface CallLinesTable {
  member: number
  /** The call's chat_mess row (Call flag). */
  call_id: number
  chat_id: number
  /** The other participant. */
  peer: number
  /** Who placed the call: while it rings, only the caller's silence ends it early. */
  caller: number
  /** CallLineState: 1 ringing, 2 connected. */
  state: number
  /** Epoch ms when the current state began. */
  since: number
  /** Epoch ms of this participant's last sign of life (an operation or a keepalive signal). */
  seen: number
  /** The caller's SDP offer on the ringing line of the person called; '' otherwise. */
  offer: string
}

/** A custom Telegram widget an operator defined (/ChatAdmin/BotWidgets). */
export interface TelegramWidgetsTable {
  name: string
  title: string
  /** Text with `{stat_name}` placeholders over the stats catalogue (telegram/widgets/widget-stats.ts). */
  template: string
  /** The scope a person needs to see it; '' for everyone linked. */
  scope: string
  refresh_seconds: number
  updated_by: number
  timetick_update: number
}

/** A widget message the bot keeps fresh in one Telegram chat. */
export interface TelegramWidgetViewsTable {
  telegram_chat_id: number
  member: number
  widget: string
  message_id: number
  live_until: number
  next_refresh: number
}

/**
 * Files and bytes of chat_mess file rows per UTC day of timetick_update, FileType bucket and
 * soft-deleted state (migration 0020), kept by triggers on chat_mess; read by FileStatistic.
 */
export interface ChatFileDaysTable {
  /** Days since 2020-01-01: timetick_update / FILE_DAY_TICKS. */
  day: number
  /** image, doc, video, audio, archive or other. */
  file_type: string
  /** 1 for soft-deleted rows. */
  deleted: number
  files: number
  bytes: number
}

/** One operator action on the /ChatAdmin/ pages (migration 0018): who, what, on what, when, how it ended. */
export interface AdminActionsTable {
  timetick: number
  /** The operator's CRM id. */
  crm_id: number
  /** What was done, e.g. `archive_chat`. */
  action: string
  /** What it was done to, e.g. `chat:891241565626240`. */
  target: string
  /** Anything else worth keeping, e.g. the member removed; '' for nothing. */
  detail: string
  /** Epoch ms. */
  at: number
  /** `ok`, or why it was refused. */
  outcome: string
}

/** The Idempotency-Key of a send_message (migration 0021): one per sender and key, for IdempotencyKeyHours. */
export interface SendKeysTable {
  /** The sender: a user's CRM id or a guest's member id. */
  member: number
  idem_key: string
  /** SHA-256 of what the send asked for (chat, content, reply, widget, file). */
  fingerprint: string
  /** The message the key posted. */
  message_id: number
  /** The answer, as JSON: the message as send_message returned it. */
  response: string
  /** When the key was first used, epoch milliseconds. */
  created: number
}

export interface ChatDatabase {
  chats: ChatsTable
  chat_members: ChatMembersTable
  chat_mess: ChatMessTable
  chat_events: ChatEventsTable
  feedback: FeedbackTable
  invites: InvitesTable
  guests: GuestsTable
  chat_profiles: ChatProfilesTable
  file_releases: FileReleasesTable
  sms_messages: SmsMessagesTable
  telegram_links: TelegramLinksTable
  telegram_link_tokens: TelegramLinkTokensTable
  telegram_state: TelegramStateTable
  mail_contacts: MailContactsTable
  mail_messages: MailMessagesTable
  mail_user_invites: MailUserInvitesTable
  mail_state: MailStateTable
  call_lines: CallLinesTable
  telegram_widgets: TelegramWidgetsTable
  telegram_widget_views: TelegramWidgetViewsTable
  admin_actions: AdminActionsTable
  chat_file_days: ChatFileDaysTable
  send_keys: SendKeysTable
}
